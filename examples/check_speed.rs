//! The weak-level checking tables of docs/performance.md: `isopredict generate` writing a
//! history, and `isopredict check FILE --level rc|ra|cc` reading and checking it (parsing
//! included), each the release binary run as a child process measured to its end (wall time,
//! CPU time, peak memory); and the causal check on a history with one session per transaction.
//!
//! `cargo build --release && cargo run --release --example check_speed -- [--write-docs]
//! [--runs N] [--large]`
//!
//! The histories: 50 sessions, 10 operations a transaction, half reads, uniform keys (100
//! events a key), consistent at the level checked, so each checker does its whole work (no
//! early exit on a violation) — 10^6 events, and 10^7 with `--large`; in the Plume text format
//! and in the native JSON format. Each check runs `--runs` times (3 by default; 1 at 10^7), the
//! table gives the run with the least CPU time (its wall time beside it). The many-sessions rows: 10^6 sessions of one
//! transaction of one write, checked at cc and at every level, and read alone (`stats`). The
//! timestamp rows: a TimeKiller-shaped history of 10^6 transactions (`common/speed.rs`: the
//! simulated timestamp SI store with the TimeKiller paper's defaults) checked by `isopredict
//! check --level si|ser` and streamed through `isopredict watch --level si`.
//! With `--write-docs` the tables replace the part of docs/performance.md between its
//! `<!-- begin: written by … check_speed … -->` and `<!-- end: written by check_speed -->`
//! lines.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[allow(dead_code)] // each example uses part of the shared module
#[path = "common/child.rs"]
mod child;
#[path = "common/docs.rs"]
mod docs;
#[allow(dead_code)]
#[path = "common/speed.rs"]
mod speed;

use child::{measure, Caps, Measured};

/// Every child is killed past these (none comes near them at 10^7 events).
const CAPS: Caps = Caps {
    memory_kb: 8 * 1024 * 1024,
    wall: Duration::from_secs(600),
};

/// One generated history.
struct Generated {
    events: &'static str,
    format: &'static str,
    path: PathBuf,
    /// `isopredict generate` writing it.
    took: Measured,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write_docs = args.iter().any(|a| a == "--write-docs");
    let large = args.iter().any(|a| a == "--large");
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map_or(3, |n| n.parse().expect("--runs N"));
    let bin = child::release_binary();
    let dir = std::env::temp_dir().join(format!("check_speed_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");

    let mut text = format!("{}\n\n", child::measured_where());
    let mut sizes = vec![("1M", 2_000u32, 10_000u32, runs)];
    if large {
        sizes.push(("10M", 20_000, 100_000, 1));
    }
    let mut check_rows = String::new();
    let mut generate_rows = String::new();
    for &(events, txns, keys, runs) in &sizes {
        for level in ["rc", "ra", "cc"] {
            for format in ["plume", "json"] {
                let history = generate(&bin, &dir, events, txns, keys, level, format);
                if level == "cc" {
                    generate_rows.push_str(&format!(
                        "| {events} | {format} | {:.2} s | {:.2} s | {} |\n",
                        history.took.wall,
                        history.took.cpu,
                        megabytes(history.took.peak_mb)
                    ));
                }
                let best = best_of(runs, || {
                    measure(
                        Command::new(&bin)
                            .args(["check", "--quiet", "--level", level])
                            .arg(&history.path),
                        &CAPS,
                    )
                });
                check_rows.push_str(&format!(
                    "| {} | {} | {} | {} | {:.2} s | {:.2} s | {} | {} |\n",
                    history.events,
                    history.format,
                    file_size(&history.path),
                    level.to_uppercase(),
                    best.wall,
                    best.cpu,
                    megabytes(best.peak_mb),
                    verdict(&best)
                ));
                let _ = std::fs::remove_file(&history.path);
            }
        }
    }
    let how_often = if large {
        format!("best of {runs} at 1M events, one run at 10M")
    } else {
        format!("best of {runs}")
    };
    text.push_str(&format!(
        "`isopredict check FILE --level L` ({how_often}):\n\n\
         | events | format | file | level | wall | CPU | peak memory | verdict |\n\
         |---:|---|---:|---|---:|---:|---:|---|\n{check_rows}\n"
    ));
    text.push_str(&format!(
        "`isopredict generate … --consistent cc --format F --out FILE` (writing the file \
         included):\n\n\
         | events | format | wall | CPU | peak memory |\n\
         |---:|---|---:|---:|---:|\n{generate_rows}\n"
    ));
    text.push_str(&many_sessions(&bin, &dir));
    text.push_str(&timestamps(&bin, &dir));
    text.push_str(&format!(
        "\nLoad average at the end: {}.\n",
        child::load_average()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    println!("\n{text}");
    if write_docs {
        docs::write_docs_section("performance.md", "check_speed", &text);
    }
}

/// `isopredict generate` with the tables' parameters, measured.
fn generate(
    bin: &Path,
    dir: &Path,
    events: &'static str,
    txns: u32,
    keys: u32,
    level: &str,
    format: &'static str,
) -> Generated {
    let path = dir.join(format!("{events}-{level}.{format}"));
    let took = measure(
        Command::new(bin)
            .args([
                "generate",
                "--quiet",
                "--sessions",
                "50",
                "--ops",
                "10",
                "--seed",
                "1",
            ])
            .args(["--txns", &txns.to_string(), "--keys", &keys.to_string()])
            .args(["--consistent", level, "--format", format, "--out"])
            .arg(&path),
        &CAPS,
    );
    assert_eq!(took.code, Some(0), "isopredict generate failed");
    Generated {
        events,
        format,
        path,
        took,
    }
}

/// The many-sessions rows: 10^6 sessions × one write.
fn many_sessions(bin: &Path, dir: &Path) -> String {
    let path = dir.join("w1m.json");
    let took = measure(
        Command::new(bin)
            .args([
                "generate",
                "--quiet",
                "--sessions",
                "1000000",
                "--txns",
                "1",
            ])
            .args([
                "--ops",
                "1",
                "--read-ratio",
                "0",
                "--keys",
                "10000",
                "--seed",
                "1",
            ])
            .arg("--out")
            .arg(&path),
        &CAPS,
    );
    assert_eq!(took.code, Some(0), "isopredict generate failed");
    let mut rows = String::new();
    for (what, args) in [
        ("`stats` (reading alone)", vec!["stats"]),
        ("`check --level cc`", vec!["check", "--level", "cc"]),
        ("`check --level all`", vec!["check", "--level", "all"]),
    ] {
        let m = measure(
            Command::new(bin).args(&args).arg("--quiet").arg(&path),
            &CAPS,
        );
        let answer = if what.starts_with("`stats") {
            format!("exit {}", m.code.map_or("-".to_string(), |c| c.to_string()))
        } else {
            verdict(&m)
        };
        rows.push_str(&format!(
            "| {what} | {:.2} s | {:.2} s | {} | {answer} |\n",
            m.wall,
            m.cpu,
            megabytes(m.peak_mb)
        ));
    }
    let _ = std::fs::remove_file(&path);
    format!(
        "One session per transaction: `isopredict generate --sessions 1000000 --txns 1 --ops 1 \
         --read-ratio 0 --keys 10000 --seed 1` (10^6 transactions in JSON), then:\n\n\
         | command | wall | CPU | peak memory | answer |\n\
         |---|---:|---:|---:|---|\n{rows}"
    )
}

/// The timestamp rows: `check` and `watch` on a TimeKiller history of 10^6 transactions.
fn timestamps(bin: &Path, dir: &Path) -> String {
    const TXNS: u32 = 1_000_000;
    let path = dir.join("timekiller.json");
    std::fs::write(&path, speed::timekiller_json(TXNS)).expect("writing the history");
    let mut rows = String::new();
    for level in ["si", "ser"] {
        let m = measure(
            Command::new(bin)
                .args(["check", "--quiet", "--initial-value", "0", "--level", level])
                .arg(&path),
            &CAPS,
        );
        rows.push_str(&format!(
            "| `check --level {level} --initial-value 0` | {:.2} s | {:.2} s | {} | {} |\n",
            m.wall,
            m.cpu,
            megabytes(m.peak_mb),
            verdict(&m)
        ));
    }
    let stdin = std::fs::File::open(&path).expect("the history");
    let m = measure(
        Command::new(bin)
            .args(["watch", "--quiet", "--level", "si", "--timeout", "1"])
            .args(["--initial-value", "0"])
            .stdin(stdin),
        &CAPS,
    );
    rows.push_str(&format!(
        "| `watch --level si --timeout 1 --initial-value 0 < FILE` | {:.2} s | {:.2} s | {} | \
         {}; {:.0} transactions per second of wall time |\n",
        m.wall,
        m.cpu,
        megabytes(m.peak_mb),
        verdict(&m),
        f64::from(TXNS) / m.wall
    ));
    let size = file_size(&path);
    let _ = std::fs::remove_file(&path);
    format!(
        "\nTimestamps: a TimeKiller history of 10^6 transactions ({size}; 50 sessions, 1,000 \
         Zipf keys, 15 operations a transaction, half reads, from the simulated timestamp SI \
         store), read and checked by:\n\n\
         | command | wall | CPU | peak memory | answer |\n\
         |---|---:|---:|---:|---|\n{rows}"
    )
}

/// The run with the least CPU time of `runs` (its wall time is then the least too, nearly
/// always; both are printed as measured together).
fn best_of(runs: usize, mut run: impl FnMut() -> Measured) -> Measured {
    let mut best = run();
    for _ in 1..runs {
        let next = run();
        if next.cpu < best.cpu {
            best = next;
        }
    }
    best
}

/// The check's answer from its exit code.
fn verdict(m: &Measured) -> String {
    match (m.killed, m.code) {
        (Some(why), _) => format!("**killed: {why}**"),
        (None, Some(0)) => "consistent".to_string(),
        (None, Some(1)) => "violated".to_string(),
        (None, Some(3)) => "unknown".to_string(),
        (None, code) => format!("**exit {code:?}**"),
    }
}

fn megabytes(mb: u64) -> String {
    if mb >= 1024 {
        format!("{:.2} GB", mb as f64 / 1024.0)
    } else {
        format!("{mb} MB")
    }
}

fn file_size(path: &Path) -> String {
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    format!("{} MB", bytes / 1_000_000)
}
