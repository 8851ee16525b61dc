//! Issue 23's strong-level targets, through the command line a user runs: `isopredict check
//! FILE --level ser|si|pc` on serializable histories from `isopredict generate --consistent
//! ser --dist zipf --ops 8` (10 × 1,000 transactions: ≤ 5 s; 20 × 5,000: ≤ 60 s), and the wide
//! history of issue 23 item 4 (10,000 sessions × 4 transactions × 4 operations, 2,000 uniform
//! keys) under the same 60 s timeout.
//!
//! `cargo build --release && cargo run --release --example strong_targets [-- --write-docs]`
//! With `--write-docs`, the part of docs/performance.md between its `<!-- begin: written by
//! `cargo run --release --example strong_targets` … -->` and `<!-- end: written by
//! strong_targets -->` lines is replaced by the printed table.
//!
//! Each check is the release binary beside this example (`target/release/isopredict`), run
//! as a child process measured to its end (`common/child.rs`: CPU time, user + system, and
//! peak memory from `wait4`); the wall time includes parsing. The machine's load average (`/proc/loadavg`) is printed with the table,
//! since on a shared machine the wall time can be several times the CPU time.

use std::process::Command;
use std::time::Duration;

#[allow(dead_code)] // each example uses part of the shared module
#[path = "common/child.rs"]
mod child;
#[path = "common/docs.rs"]
mod docs;

/// A check is killed past these (the 60 s timeout ends each well before).
const CAPS: child::Caps = child::Caps {
    memory_kb: 8 * 1024 * 1024,
    wall: Duration::from_secs(600),
};

/// (label, generate arguments, timeout in seconds, target in seconds).
const CASES: &[(&str, &[&str], u32, u32)] = &[
    (
        "10 × 1,000, Zipf, 10 keys",
        &["--sessions", "10", "--txns", "1000"],
        60,
        5,
    ),
    (
        "10 × 1,000, Zipf, 100 keys",
        &["--sessions", "10", "--txns", "1000", "--keys", "100"],
        60,
        5,
    ),
    (
        "20 × 5,000, Zipf, 10 keys",
        &["--sessions", "20", "--txns", "5000"],
        60,
        60,
    ),
    (
        "20 × 5,000, Zipf, 100 keys",
        &["--sessions", "20", "--txns", "5000", "--keys", "100"],
        60,
        60,
    ),
];

fn main() {
    let write_docs = std::env::args().any(|a| a == "--write-docs");
    let bin = child::release_binary();
    let dir = std::env::temp_dir().join(format!("strong_targets_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let mut text = String::new();
    text.push_str(&format!(
        "{} The Zipf histories from `isopredict generate --consistent ser --dist zipf --ops \
         8 --seed 1` plus the sessions, transactions and keys shown, the wide one from \
         `isopredict generate --consistent ser --sessions 10000 --txns 4 --ops 4 --keys 2000 \
         --seed 1 --format plume`; each checked by `isopredict check FILE --level L --timeout \
         60` (parsing included).\n\n",
        child::measured_where()
    ));
    text.push_str(
        "| history | level | verdict | wall | CPU (user + system) | peak memory | target |\n",
    );
    text.push_str("|---|---|---|---:|---:|---:|---|\n");
    let mut rows: Vec<(String, Vec<String>, u32, u32)> = CASES
        .iter()
        .map(|&(label, args, timeout, target)| {
            let mut g: Vec<String> = [
                "--consistent",
                "ser",
                "--dist",
                "zipf",
                "--ops",
                "8",
                "--seed",
                "1",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            g.extend(args.iter().map(|s| s.to_string()));
            (label.to_string(), g, timeout, target)
        })
        .collect();
    rows.push((
        "10,000 × 4, 4 ops, 2,000 uniform keys (plume)".to_string(),
        [
            "--consistent",
            "ser",
            "--sessions",
            "10000",
            "--txns",
            "4",
            "--ops",
            "4",
            "--keys",
            "2000",
            "--seed",
            "1",
            "--format",
            "plume",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        60,
        60,
    ));
    for (i, (label, gen, timeout, target)) in rows.iter().enumerate() {
        let file = dir.join(format!("h{i}.txt"));
        let file_arg = file.to_string_lossy().to_string();
        let mut args: Vec<&str> = vec!["generate"];
        args.extend(gen.iter().map(String::as_str));
        args.extend(["--out", &file_arg]);
        let g = Command::new(&bin)
            .args(&args)
            .output()
            .expect("generate runs");
        assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
        for level in ["ser", "si", "pc"] {
            let t = timeout.to_string();
            let m = child::measure(
                Command::new(&bin).args(["check", &file_arg, "--level", level, "--timeout", &t]),
                &CAPS,
            );
            let (code, wall, cpu, peak) = (m.code, m.wall, m.cpu, m.peak_mb);
            let reason = m
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix("gave up: "))
                .unwrap_or("")
                .to_string();
            let verdict = match code {
                Some(0) => "consistent".to_string(),
                Some(1) => "violated".to_string(),
                Some(3) => format!("unknown: {reason}"),
                other => format!("failed ({other:?})"),
            };
            let met = if code == Some(0) && wall <= *target as f64 {
                "met"
            } else if code == Some(0) && cpu <= *target as f64 {
                "met in CPU time"
            } else {
                "not met"
            };
            let line = format!(
                "| {label} | {level} | {verdict} | {wall:.2} s | {cpu:.2} s | {peak} MB | ≤ {target} s: {met} |\n"
            );
            print!("{line}");
            text.push_str(&line);
        }
        let _ = std::fs::remove_file(&file);
    }
    let _ = std::fs::remove_dir(&dir);
    text.push_str(&format!(
        "\nLoad average at the end: {}.\n",
        child::load_average()
    ));
    println!("\n{text}");
    if write_docs {
        docs::write_docs_section("performance.md", "strong_targets", &text);
    }
}
