//! Measures recording on PostgreSQL (docs/recording.md, "Measurements"): committed
//! transactions recorded per second (sessions × calls), the overhead of recording against the
//! same workload run without it, and how often runs at read committed and repeatable read were
//! already unserializable.
//!
//! ```text
//! eval "$(scripts/pg-throwaway.sh start)"
//! cargo run --release --example postgres_measure -- "$ISOPREDICT_POSTGRES_URL" [RUNS]
//! ```

use std::time::Duration;

use isopredict::ser::SerVerdict;
use isopredict::store::postgres::Postgres;
use isopredict::store::{Backend, Isolation};
use isopredict::verdict::engines;
use isopredict::workloads::{self, run_on, RunConfig, Size};

fn run(
    workload: &str,
    backend: &dyn Backend,
    seed: u64,
    sessions: usize,
    calls: usize,
) -> workloads::Run {
    let config = RunConfig {
        terminals: sessions,
        ..RunConfig::paper(seed, Size::Calls(calls))
    };
    run_on(workloads::by_name(workload).unwrap(), &config, backend).unwrap()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("ISOPREDICT_POSTGRES_URL").ok())
        .expect("usage: postgres_measure URL [RUNS]");
    let runs: u64 = args.next().map_or(10, |r| r.parse().expect("RUNS"));

    println!("## Throughput and recording overhead (Smallbank)\n");
    println!("| isolation | sessions × calls | committed | aborted by the database | recorded: committed/s | unrecorded: committed/s | overhead |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for isolation in Isolation::ALL {
        for (sessions, calls) in [(4, 25), (10, 100)] {
            let recorded = Postgres::new(&url, isolation).unwrap();
            let plain = Postgres::new(&url, isolation).unwrap().without_recording();
            // Best of three each, alternating, to damp the machine's noise.
            let (mut best_rec, mut best_plain) = (f64::MAX, f64::MAX);
            let (mut committed, mut aborted) = (0, 0);
            for seed in 1..=3 {
                let r = run("smallbank", &recorded, seed, sessions, calls);
                let db = r.database.as_ref().unwrap();
                best_rec = best_rec.min(db.elapsed_ms);
                committed = r.history.committed_txns().count() - 1;
                aborted = db.aborted_by_database;
                let p = run("smallbank", &plain, seed, sessions, calls);
                best_plain = best_plain.min(p.database.as_ref().unwrap().elapsed_ms);
            }
            let rate = |ms: f64| committed as f64 / (ms / 1000.0);
            println!(
                "| {isolation} | {sessions} × {calls} | {committed} | {aborted} | {:.0} | {:.0} | {:+.0} % |",
                rate(best_rec),
                rate(best_plain),
                (best_rec / best_plain - 1.0) * 100.0
            );
        }
    }

    println!("\n## Runs already unserializable as recorded\n");
    println!("| workload | isolation | sessions × calls | runs | unserializable | undecided |");
    println!("|---|---|---|---:|---:|---:|");
    for workload in ["smallbank", "voter", "tpcc", "wikipedia"] {
        for isolation in Isolation::ALL {
            let backend = Postgres::new(&url, isolation).unwrap();
            let (sessions, calls) = (4, 10);
            let (mut unser, mut unknown) = (0, 0);
            for seed in 1..=runs {
                let r = run(workload, &backend, seed, sessions, calls);
                match engines::check_serializable(&r.history, Some(Duration::from_secs(30))) {
                    Ok(SerVerdict::Unserializable) => unser += 1,
                    Ok(SerVerdict::Serializable { .. }) => {}
                    _ => unknown += 1,
                }
            }
            println!(
                "| {workload} | {isolation} | {sessions} × {calls} | {runs} | {unser} | {unknown} |"
            );
        }
    }
}
