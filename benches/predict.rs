//! Speed of prediction on the paper's large observed executions (3 sessions × 8 transactions,
//! tests/data/isopredict-traces): every strategy under causal and rc on the four large
//! traces of seed 10000. Each sample is a whole `predict` call: space, constraints, solving,
//! re-verification.
//! The per-trace table of docs/prediction.md comes from `examples/prediction_table.rs`.

use criterion::{criterion_group, criterion_main, Criterion};
use isopredict::check::Level;
use isopredict::formats::{read_file, Format};
use isopredict::history::History;
use isopredict::predict::{predict, PredictOptions, Strategy};

#[path = "../examples/common/traces.rs"]
#[allow(dead_code)]
mod traces;
use traces::testdata;

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
