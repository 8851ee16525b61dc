//! Prints the timing table of docs/performance.md "SER, SI and PC": each engine of
//! `isopredict::ser` (and the direct Z3 check, `ser::check_serializable`) on generated
//! histories — serializable ones from a serial store (8 operations per transaction, Zipf
//! keys) and unserializable ones from a causal store. Times are wall times of
//! the check alone (the history is generated in memory), the best of `RUNS`.
//!
//! `cargo run --release --example strong_levels [-- --quick]`

use std::time::{Duration, Instant};

use isopredict::generate::Consistency;
use isopredict::ser::{Engine, SerVerdict, StrongLevel, StrongOptions, Verdict};
use isopredict::verdict::engines::{check_serializable, check_strong};
use isopredict::History;

#[path = "common/strong_histories.rs"]
mod strong_histories;
use strong_histories::history;

const RUNS: usize = 3;
/// Per check.
const TIMEOUT: Duration = Duration::from_secs(60);

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed());
        out = Some(r);
    }
    (best, out.expect("one run"))
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Consistent => "consistent",
        Verdict::Violated => "violated",
        Verdict::Unknown => "unknown",
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut cases: Vec<(String, History)> = vec![(
        "10 × 1,000 serial".to_string(),
        history(10, 1_000, Consistency::Serializable, 1),
    )];
    if !quick {
        cases.push((
            "20 × 5,000 serial".to_string(),
            history(20, 5_000, Consistency::Serializable, 1),
        ));
    }
    for seed in 1..=3 {
        cases.push((
            format!("10 × 100 causal, seed {seed}"),
            history(10, 100, Consistency::Causal, seed),
        ));
    }
    println!("| history | level | engine | verdict | time |");
    println!("|---|---|---|---|---:|");
    for (name, h) in &cases {
        let runs = if h.txn_count() > 50_000 { 1 } else { RUNS };
        for level in [
            StrongLevel::Serializable,
            StrongLevel::Snapshot,
            StrongLevel::Prefix,
        ] {
            for engine in [Engine::Search, Engine::Smt, Engine::Auto] {
                let options = StrongOptions {
                    engine,
                    timeout: Some(TIMEOUT),
                    ..StrongOptions::default()
                };
                let (t, r) = time(runs, || check_strong(h, level, &options).expect("checks"));
                let why = r
                    .unknown_reason
                    .as_ref()
                    .map_or_else(String::new, |w| format!(" ({w})"));
                println!(
                    "| {name} | {} | {engine} | {}{why} | {:.3} s |",
                    level.level(),
                    verdict_name(r.verdict),
                    t.as_secs_f64()
                );
            }
        }
        // The direct Z3 check asserts one clause per (read, other writer of its key): past a
        // million its memory runs into gigabytes, so it is not run there.
        let clauses = direct_clauses(h);
        if clauses > 1_000_000 {
            println!(
                "| {name} | ser | direct Z3 (`check_serializable`) | not run: {clauses} clauses | |"
            );
        } else {
            let (t, v) = time(1, || {
                check_serializable(h, Some(TIMEOUT)).expect("no dirty reads")
            });
            let v = match v {
                SerVerdict::Serializable { .. } => "consistent",
                SerVerdict::Unserializable => "violated",
                SerVerdict::Unknown { .. } => "unknown (timeout)",
            };
            println!(
                "| {name} | ser | direct Z3 (`check_serializable`) | {v} | {:.3} s |",
                t.as_secs_f64()
            );
        }
    }
}

/// Clauses of `check_serializable`: per external read, the other writers of its key.
fn direct_clauses(h: &History) -> u64 {
    let mut total = 0u64;
    for t in h.committed_txns() {
        for o in h.txn(t).ops() {
            if h.is_external_read(o) {
                total += h.writers_of(h.op(o).key).len() as u64;
            }
        }
    }
    total
}
