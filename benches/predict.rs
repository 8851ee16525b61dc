//! Speed of prediction on the paper's large observed executions (3 sessions × 8 transactions,
//! ../shared/testdata/isopredict-traces): every strategy under causal and rc on the four large
//! traces of seed 10000. Each sample is a whole `predict` call: space, constraints, solving,
//! re-verification.
//! The per-trace table of docs/prediction.md comes from `examples/prediction_table.rs`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};
use isopredict::check::Level;
use isopredict::formats::{read_file, Format};
use isopredict::history::History;
use isopredict::predict::{predict, PredictOptions, Strategy};

fn trace(name: &str) -> History {
    let path = testdata()
        .join("isopredict-traces")
        .join(format!("{name}.txt"));
    read_file(&path, Some(Format::IsoPredict)).expect("the shipped traces parse")
}

fn approximate(c: &mut Criterion) {
    let mut group = c.benchmark_group("predict");
    group.sample_size(10);
    for name in [
        "tpcc_large_10000",
        "smallbank_large_10000",
        "voter_large_10000",
        "wikipedia_large_10000",
    ] {
        let h = trace(name);
        for level in [Level::Causal, Level::ReadCommitted] {
            for strategy in Strategy::ALL {
                let options = PredictOptions::new(level, strategy);
                group.bench_function(format!("{name}/{level}/{strategy}"), |b| {
                    b.iter(|| predict(&h, &options).unwrap())
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, approximate);
criterion_main!(benches);

/// The shared test data: `ISOPREDICT_TESTDATA`, else `shared/testdata` one or two levels above
/// the crate.
fn testdata() -> PathBuf {
    if let Some(dir) = std::env::var_os("ISOPREDICT_TESTDATA") {
        return dir.into();
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    ["..", "../.."]
        .iter()
        .map(|up| manifest.join(up).join("shared/testdata"))
        .find(|d| d.is_dir())
        .expect("../shared/testdata (or set ISOPREDICT_TESTDATA)")
}
