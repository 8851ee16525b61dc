//! The scale table of docs/performance.md: prediction (approx-relaxed, causal and rc, scalable
//! engine) on serializable generated histories of real-test-run size (issue 8).
//!
//! `cargo run --release --example scale_table [-- TIMEOUT_SECS]` (default 60 s).
//!
//! Each measurement runs in a child process (this example re-run with `one CASE LEVEL MAX`) so
//! that its peak memory (`VmHWM` of /proc/self/status) is its own. Histories: `isopredict
//! generate --consistent ser`, 8 operations per transaction, 60 % reads, Zipf 0.8 over as many
//! keys as a quarter of the operations; the hot-key case: Zipf 1.1 over 200 keys. Times are of
//! prediction only: the history is generated before the clock starts.

use std::process::Command;
use std::time::{Duration, Instant};

use isopredict::check::Level;
use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};
use isopredict::predict::{predict, PredictOptions, Strategy, Verdict};

/// (name, sessions, transactions per session, keys, Zipf exponent).
const CASES: [(&str, u32, u32, u32, f64); 4] = [
    ("4 × 250", 4, 250, 2_000, 0.8),
    ("10 × 1,000", 10, 1_000, 20_000, 0.8),
    ("20 × 5,000", 20, 5_000, 200_000, 0.8),
    ("4 × 250, 200 hot keys", 4, 250, 200, 1.1),
];

fn history(case: usize) -> isopredict::history::History {
    let (_, sessions, txns, keys, exponent) = CASES[case];
    generate(&GenerateParams {
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
    .expect("valid parameters")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("one") {
        let case: usize = args[1].parse().expect("case");
        let level: Level = args[2].parse().expect("level");
        let max: usize = args[3].parse().expect("max");
        let timeout: u64 = args[4].parse().expect("timeout");
        one(case, level, max, timeout);
        return;
    }
    let timeout: u64 = args.first().map_or(60, |t| t.parse().expect("seconds"));
    let exe = std::env::current_exe().expect("this example");
    println!("| history | transactions | level | result | wall | peak memory | distinct predictions (`--max 10`) | wall (`--max 10`) |");
    println!("|---|---:|---|---|---:|---:|---:|---:|");
    for (case, &(name, sessions, txns, _, _)) in CASES.iter().enumerate() {
        for level in ["causal", "rc"] {
            let run = |max: usize| -> Vec<String> {
                let out = Command::new(&exe)
                    .args(["one", &case.to_string(), level, &max.to_string()])
                    .arg(timeout.to_string())
                    .output()
                    .expect("the child runs");
                String::from_utf8_lossy(&out.stdout)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect()
            };
            let first = run(1);
            let many = run(10);
            let get = |v: &[String], i: usize| v.get(i).cloned().unwrap_or_else(|| "?".into());
            println!(
                "| {name} | {} | {level} | {} | {} s | {} MB | {} | {} s |",
                sessions * txns,
                get(&first, 0),
                get(&first, 1),
                get(&first, 2),
                get(&many, 3),
                get(&many, 1),
            );
        }
    }
}

/// One measurement: prints `result wall_s peak_mb predictions`.
fn one(case: usize, level: Level, max: usize, timeout: u64) {
    let h = history(case);
    let start = Instant::now();
    let mut options = PredictOptions::new(level, Strategy::ApproxRelaxed)
        .with_timeout(Some(Duration::from_secs(timeout)));
    options.max = max;
    let out = predict(&h, &options).expect("prediction runs");
    let wall = start.elapsed().as_secs_f64();
    let result = match out.verdict {
        Verdict::Predicted => "sat",
        Verdict::NoPrediction => "unsat",
        Verdict::Unknown => "unknown",
        Verdict::ObservedViolation | Verdict::ObservedUnserializable => "observed",
    };
    let peak_kb: u64 = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0);
    println!(
        "{result} {wall:.1} {} {}",
        peak_kb / 1024,
        out.predictions.len()
    );
}
