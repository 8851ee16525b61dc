//! Prediction at the scale of test runs (issue 8): approx-relaxed under causal and rc on
//! serializable generated histories of 4 × 250, 10 × 1,000 and 20 × 5,000 transactions
//! (8 operations each, 60 % reads, Zipf 0.8 over as many keys as a quarter of the operations)
//! and a hot-key one (4 × 250, 200 keys, Zipf 1.1): the first table's cases of
//! `examples/common/scale_cases.rs`, shared with `examples/scale_table.rs`. Each sample is a whole `predict` call
//! (`--max 1`, 60 s timeout, half the machine's memory); the history is generated once,
//! outside the measurement. Sample sizes are the smallest criterion takes (10), so
//! `cargo bench --bench scale` finishes in a few minutes. The table of docs/performance.md,
//! with peak memory and `--max 10`, comes from `examples/scale_table.rs`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use isopredict::check::Level;
use isopredict::predict::{default_memory_budget, predict, PredictOptions, Strategy, Verdict};

#[path = "../examples/common/scale_cases.rs"]
mod scale_cases;
use scale_cases::{history, CASES};

fn scale(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(5));
    for (case, &(table, name, ..)) in CASES.iter().enumerate() {
        if table != 1 {
            continue;
        }
        // "4 × 250, 200 hot keys" -> "4x250_200_hot_keys".
        let name = name.replace(" × ", "x").replace(',', "").replace(' ', "_");
        let h = history(case);
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
