//! MonkeyDB-style random exploration (the paper's Tables 6/7): per workload and level, the
//! share of runs whose final state breaks an invariant and the share that are unserializable.
//!
//! `cargo run --release --example explore -- 30`

use isopredict::check::Level;
use isopredict::ser::{check_serializable, SerVerdict};
use isopredict::store::ReadPolicy;
use isopredict::workloads::{all, run, RunConfig, Size};

fn main() {
    let trials: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    println!("| workload | level | runs | invariant failures | unserializable |");
    println!("|---|---|---|---|---|");
    for w in all() {
        for level in [Level::Causal, Level::ReadCommitted] {
            let (mut failed, mut unser) = (0, 0);
            for trial in 0..trials {
                let config = RunConfig {
                    policy: ReadPolicy::Random { level, seed: trial },
                    schedule_seed: trial,
                    ..RunConfig::paper(1 + trial % 10, Size::Small)
                };
                let r = run(w, &config).expect("run");
                failed += usize::from(!r.invariants_hold());
                unser += usize::from(matches!(
                    check_serializable(&r.history, None),
                    Ok(SerVerdict::Unserializable)
                ));
            }
            println!(
                "| {} | {} | {trials} | {:.0}% | {:.0}% |",
                w.name(),
                level.short_name(),
                100.0 * failed as f64 / trials as f64,
                100.0 * unser as f64 / trials as f64
            );
        }
    }
}
