//! The scale tables of docs/performance.md: prediction (approx-relaxed, scalable engine) on
//! serializable generated histories of real-test-run size (issue 8).
//!
//! `cargo run --release --example scale_table [-- [--write-docs] [TIMEOUT_SECS]]` (default
//! 60 s). With `--write-docs`, the part of docs/performance.md between its `<!-- begin:
//! written by … scale_table … -->` and `<!-- end: written by scale_table -->` lines is
//! replaced by the printed tables.
//!
//! `… --example scale_table -- write CASE FILE` writes case CASE's history (0-based, in the
//! order of `CASES` in `examples/common/scale_cases.rs`) as native JSON.
//!
//! Each measurement runs in a child process (this example re-run with `one CASE LEVEL MAX
//! TIMEOUT`) so that its peak memory (`VmHWM` of /proc/self/status) is its own. Times are of
//! prediction only: the history is built before the clock starts.
//!
//! Three tables:
//! 1. **Scale** (issue 8's benchmark): `isopredict generate --consistent ser`, 8 operations per
//!    transaction, 60 % reads, Zipf 0.8 over as many keys as a quarter of the operations; the
//!    hot-key case Zipf 1.1 over 200 keys; seed 1; causal and rc; `--max 1` and `--max 10`.
//! 2. **Issue 8's first table** re-measured: `isopredict generate --consistent ser --dist zipf
//!    --ops 8 --seed 0` (50 % reads, Zipf 1.0), causal.
//! 3. **No prediction at scale**: serial runs where one session writes and all others only
//!    read (Zipf 0.8 over a quarter as many keys as operations). Under causal consistency no
//!    prediction exists: a cycle would need a reader to miss a write of the writing session
//!    that happens before a write it reads, which causal consistency forbids. The
//!    writers-ordered certificate (docs/prediction.md "Why none: certificates") proves it.

use std::process::Command;
use std::time::{Duration, Instant};

use isopredict::check::Level;
use isopredict::predict::{predict, PredictOptions, Strategy, Verdict};

#[path = "common/docs.rs"]
mod docs;
#[path = "common/scale_cases.rs"]
mod scale_cases;
use scale_cases::{history, CASES};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("one") {
        let case: usize = args[1].parse().expect("case");
        let level: Level = args[2].parse().expect("level");
        let max: usize = args[3].parse().expect("max");
        let timeout: u64 = args[4].parse().expect("timeout");
        one(case, level, max, timeout);
        return;
    }
    if args.first().map(String::as_str) == Some("write") {
        // `write CASE FILE`: the case's history, for `isopredict predict FILE`.
        let case: usize = args[1].parse().expect("case");
        let file = std::fs::File::create(&args[2]).expect("the output file");
        isopredict::formats::write_to(
            &history(case),
            isopredict::formats::Format::Json,
            &mut std::io::BufWriter::new(file),
        )
        .expect("writing the history");
        return;
    }
    let write_docs = args.iter().any(|a| a == "--write-docs");
    args.retain(|a| a != "--write-docs");
    let timeout: u64 = args.first().map_or(60, |t| t.parse().expect("seconds"));
    let exe = std::env::current_exe().expect("this example");
    let run = |case: usize, level: &str, max: usize| -> Vec<String> {
        let out = Command::new(&exe)
            .args(["one", &case.to_string(), level, &max.to_string()])
            .arg(timeout.to_string())
            .output()
            .expect("the child runs");
        let words: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        if words.is_empty() {
            // Killed or crashed: say so instead of a number.
            vec![format!("failed ({})", out.status)]
        } else {
            words
        }
    };
    let get = |v: &[String], i: usize| v.get(i).cloned().unwrap_or_else(|| "?".into());
    let mut text = String::new();
    text.push_str(&format!(
        "Scale (approx-relaxed, scalable engine, {timeout} s timeout):\n\n"
    ));
    text.push_str("| history | transactions | level | result | wall | peak memory | distinct predictions (`--max 10`) | wall (`--max 10`) |\n");
    text.push_str("|---|---:|---|---|---:|---:|---:|---:|\n");
    for (case, &(table, name, sessions, txns, _, _)) in CASES.iter().enumerate() {
        if table != 1 {
            continue;
        }
        for level in ["causal", "rc"] {
            let first = run(case, level, 1);
            let many = run(case, level, 10);
            text.push_str(&format!(
                "| {name} | {} | {level} | {} | {} s | {} MB | {} | {} s |\n",
                sessions * txns,
                get(&first, 0),
                get(&first, 1),
                get(&first, 2),
                get(&many, 3),
                get(&many, 1),
            ));
            print!("{}", text.lines().last().map(|l| format!("{l}\n")).unwrap());
        }
    }
    text.push_str(
        "\nIssue 8's first table re-measured (causal, approx-relaxed, default engine):\n\n",
    );
    text.push_str("| history | transactions | result | wall | peak memory |\n");
    text.push_str("|---|---:|---|---:|---:|\n");
    for (case, &(table, name, sessions, txns, _, _)) in CASES.iter().enumerate() {
        if table != 2 {
            continue;
        }
        let r = run(case, "causal", 1);
        text.push_str(&format!(
            "| {name} | {} | {} | {} s | {} MB |\n",
            sessions * txns,
            get(&r, 0),
            get(&r, 1),
            get(&r, 2)
        ));
        print!("{}", text.lines().last().map(|l| format!("{l}\n")).unwrap());
    }
    text.push_str(
        "\nNo prediction at scale (one writing session, causal, approx-relaxed, scalable engine; \
         candidate writers: those the complete solver phase would encode, 0 when a certificate \
         answers before it is built):\n\n",
    );
    text.push_str("| history | transactions | result | wall | peak memory | candidate writers | why (certificate of a none, reason of an unknown) |\n");
    text.push_str("|---|---:|---|---:|---:|---:|---|\n");
    for (case, &(table, name, sessions, txns, _, _)) in CASES.iter().enumerate() {
        if table != 3 {
            continue;
        }
        let r = run(case, "causal", 1);
        let why = r.get(5..).map(|w| w.join(" ")).unwrap_or_default();
        text.push_str(&format!(
            "| {name} | {} | {} | {} s | {} MB | {} | {} |\n",
            sessions * txns,
            get(&r, 0),
            get(&r, 1),
            get(&r, 2),
            get(&r, 4),
            why.replace('|', "/")
        ));
        print!("{}", text.lines().last().map(|l| format!("{l}\n")).unwrap());
    }
    println!("\n{text}");
    if write_docs {
        docs::write_docs_section("performance.md", "scale_table", &text);
    }
}

/// One measurement: prints `result wall_s peak_mb predictions candidates [reason…]`.
fn one(case: usize, level: Level, max: usize, timeout: u64) {
    let h = history(case);
    let start = Instant::now();
    let mut options = PredictOptions::new(level, Strategy::ApproxRelaxed)
        .with_timeout(Some(Duration::from_secs(timeout)));
    options.max = max;
    options.memory = isopredict::predict::default_memory_budget();
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
    // A "none" names its certificate's kind, an unknown its reason.
    let reason = match out.verdict {
        Verdict::Unknown => out.reason.unwrap_or_default(),
        Verdict::NoPrediction => out
            .certificate
            .map_or("complete solver phase", |c| c.kind())
            .to_string(),
        _ => String::new(),
    };
    println!(
        "{result} {wall:.2} {} {} {} {reason}",
        peak_kb / 1024,
        out.predictions.len(),
        out.stats.candidates
    );
}
