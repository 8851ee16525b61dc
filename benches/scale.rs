//! Prediction at the scale of test runs (issue 8): approx-relaxed under causal and rc on
//! serializable generated histories of 4 × 250, 10 × 1,000 and 20 × 5,000 transactions
//! (8 operations each, 60 % reads, Zipf 0.8 over as many keys as a quarter of the operations)
//! and a hot-key one (4 × 250, 200 keys, Zipf 1.1). Each sample is a whole `predict` call
//! (`--max 1`, 60 s timeout, half the machine's memory); the history is generated once,
//! outside the measurement. Sample sizes are the smallest criterion takes (10), so
//! `cargo bench --bench scale` finishes in a few minutes. The table of docs/performance.md,
//! with peak memory and `--max 10`, comes from `examples/scale_table.rs`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use isopredict::check::Level;
use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};
use isopredict::predict::{default_memory_budget, predict, PredictOptions, Strategy, Verdict};

/// (name, sessions, transactions per session, keys, Zipf exponent).
const CASES: [(&str, u32, u32, u32, f64); 4] = [
    ("4x250", 4, 250, 2_000, 0.8),
    ("10x1000", 10, 1_000, 20_000, 0.8),
    ("20x5000", 20, 5_000, 200_000, 0.8),
    ("4x250_hot200", 4, 250, 200, 1.1),
];

fn scale(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(5));
    for (name, sessions, txns, keys, exponent) in CASES {
        let h = generate(&GenerateParams {
            sessions,
            txns_per_session: txns,
            ops_per_txn: 8,
            keys,
            read_ratio: 0.6,
            distribution: KeyDistribution::Zipf { exponent },
            consistency: Consistency::Serializable,
            seed: 1,
            ..GenerateParams::default()
        })
        .expect("valid parameters");
        for level in [Level::Causal, Level::ReadCommitted] {
            let mut options = PredictOptions::new(level, Strategy::ApproxRelaxed)
                .with_timeout(Some(Duration::from_secs(60)));
            options.memory = default_memory_budget();
            // The bench measures an answer, not a give-up.
            let first = predict(&h, &options).expect("prediction runs");
            assert_ne!(
                first.verdict,
                Verdict::Unknown,
                "{name} {level}: {:?}",
                first.reason
            );
            group.bench_function(format!("{name}/{level}"), |b| {
                b.iter(|| predict(&h, &options).expect("prediction runs"))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, scale);
criterion_main!(benches);
