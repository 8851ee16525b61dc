//! Read speed of the other tools' formats (issue 10): a 1,000,000-operation history (50
//! sessions, 10,000 keys; examples/gen_plume.rs) written in each format with isopredict's own
//! writers, then read back from memory into a History. Throughput is in input bytes, so
//! criterion prints MB/s; the bar is ≥ 50 MB/s for every reader, and < 1 s for the 10^6
//! operations in dbcop-bincode and Cobra logs.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use isopredict::formats::{self, Format};

#[path = "../examples/gen_plume.rs"]
#[allow(dead_code)]
mod gen_plume;

fn parse_external(c: &mut Criterion) {
    let ops = 1_000_000;
    let plume = gen_plume::generate(ops, 50, 10_000, 1);
    let history = formats::read_str(&plume, "bench", Some(Format::Plume)).unwrap();
    drop(plume);
    let mut group = c.benchmark_group("parse_external");
    group.sample_size(10);
    for format in [
        Format::Dbcop,
        Format::DbcopText,
        Format::DbcopBincode,
        Format::Elle,
        Format::ElleJson,
        Format::Cobra,
        Format::Viper,
    ] {
        let parts = formats::write_parts(&history, format).unwrap();
        let bytes: usize = parts.iter().map(|(_, b)| b.len()).sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(format!("{format}_1M_ops"), |b| {
            b.iter(|| formats::read_parts(&parts, format, "bench").unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, parse_external);
criterion_main!(benches);
