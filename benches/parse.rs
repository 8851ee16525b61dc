//! Parse speed: a 1,000,000-operation Plume text history (50 sessions, 10,000 keys, serial
//! reads) read and built into a History; also an IsoPredict trace and the JSON format.
//! Target (issue 2): ≤ 1 s for the 1M-op Plume history on the 2-core CI machine.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use isopredict::formats::{self, Format};

#[path = "../examples/gen_plume.rs"]
#[allow(dead_code)]
mod gen_plume;

fn parse(c: &mut Criterion) {
    let ops = 1_000_000;
    let plume = gen_plume::generate(ops, 50, 10_000, 1);
    let mut group = c.benchmark_group("parse");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ops as u64));
    group.bench_function("plume_1M_ops", |b| {
        b.iter(|| formats::read_str(&plume, "bench", Some(Format::Plume)).unwrap())
    });

    let history = formats::read_str(&plume, "bench", Some(Format::Plume)).unwrap();
    let mut json = Vec::new();
    formats::write_to(&history, Format::Json, &mut json).unwrap();
    group.bench_function("json_1M_ops", |b| {
        b.iter(|| formats::read_bytes(&json, "bench", Some(Format::Json)).unwrap())
    });
    group.bench_function("write_plume_1M_ops", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(plume.len());
            formats::write_to(&history, Format::Plume, &mut out).unwrap();
            out
        })
    });
    drop(history);

    let trace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/isopredict-traces/tpcc_large_10000.txt");
    let trace = std::fs::read(&trace).expect("the shipped trace tests/data/isopredict-traces");
    group.throughput(Throughput::Elements(11_382));
    group.bench_function("isopredict_tpcc_large", |b| {
        b.iter(|| formats::read_bytes(&trace, "bench", Some(Format::IsoPredict)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
