//! The known-order table of docs/performance.md (issue 20 item 2): `check --level all` on
//! Elle list-append histories, where every level from pc up is decided on Adya's dependency
//! graph (`ser::dependency_graph`).
//!
//! `cargo run --release --example known_order_speed [-- [--write-docs] [TXNS…]]` (default
//! 1000 10000 100000). With `--write-docs`, the part of docs/performance.md between its
//! `<!-- begin: written by … known_order_speed … -->` and `<!-- end: written by
//! known_order_speed -->` lines is replaced by the printed table. `… -- write TXNS KIND FILE`
//! writes one generated history (KIND 0–3: the rows' four kinds; `write TXNS KIND FILE SEED`
//! with another seed than 1).
//!
//! Histories: `generate::list_append` with Jepsen's defaults (10 processes, 10 keys in use,
//! 32 appends per key, up to 4 micro-operations per transaction, half reads), seed 1: every
//! read fresh (strictly serializable: every level must be proved); reads of the snapshot at
//! invocation (prefix consistent; si and ser violated, each explained by a cycle); 1 % of the
//! reads stale (causal consistency already violated); a snapshot-isolated store (first
//! committer wins, 5 % `:info` outcomes, 8 appends per key: keys end in appends no read shows,
//! si consistent, ser violated). Each measurement runs in a child process (this example re-run with `one FILE`),
//! doing what `isopredict check FILE --level all` does (the decision core's `decide_all`
//! after `verdict::read_input`) without printing, so that its peak memory (`VmHWM`) is its own.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use isopredict::generate::list_append::{elle_list_append, ListAppendParams};
use isopredict::verdict::engines::check_strong;
use isopredict::verdict::{decide_all, read_input, EvidenceChoice, Limits, ReadOptions};

#[path = "common/docs.rs"]
mod docs;

/// The histories: fresh reads (strictly serializable), snapshot reads (prefix consistent, not
/// SI), 1 % stale reads (not even causal), and a snapshot-isolated store (first committer
/// wins, 5 % :info outcomes, keys retired after 8 appends: many keys end in appends no read
/// shows, whose order si must choose). (name, stale ratio, snapshot reads, first committer
/// wins and :info.)
const KINDS: [(&str, f64, bool, bool); 4] = [
    ("fresh reads", 0.0, false, false),
    ("snapshot reads", 0.0, true, false),
    ("1 % stale reads", 0.01, false, false),
    ("si store, unobserved tails", 0.0, true, true),
];

fn params(txns: usize, kind: usize) -> ListAppendParams {
    let (_, stale_ratio, snapshot_reads, si_store) = KINDS[kind];
    ListAppendParams {
        txns,
        stale_ratio,
        snapshot_reads,
        first_committer_wins: si_store,
        info_ratio: if si_store { 0.05 } else { 0.0 },
        max_appends: if si_store { 8 } else { 32 },
        seed: 1,
        ..ListAppendParams::default()
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("one") => return one(Path::new(&args[1])),
        Some("search") => return search(Path::new(&args[1])),
        Some("write") => {
            let txns: usize = args[1].parse().expect("transactions");
            let kind: usize = args[2]
                .parse()
                .expect("kind: 0 fresh, 1 snapshot, 2 stale, 3 si store");
            let mut p = params(txns, kind);
            if let Some(seed) = args.get(4) {
                p.seed = seed.parse().expect("seed");
            }
            std::fs::write(&args[3], elle_list_append(&p)).expect("writing");
            return;
        }
        _ => {}
    }
    let write_docs = args.iter().any(|a| a == "--write-docs");
    args.retain(|a| a != "--write-docs");
    let sizes: Vec<usize> = if args.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        args.iter()
            .map(|a| a.parse().expect("transactions"))
            .collect()
    };
    let exe = std::env::current_exe().expect("this example");
    let dir = std::env::temp_dir().join(format!("known_order_speed.{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let mut searches = String::new();
    let mut text = String::from(
        "| history | transactions | file | read | all levels | total | peak memory | memory / file | verdicts (strict-ser ser si pc cc) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for &txns in &sizes {
        for (kind, &(name, _, _, _)) in KINDS.iter().enumerate() {
            let file = dir.join(format!("la-{txns}-{kind}.edn"));
            let history = elle_list_append(&params(txns, kind));
            std::fs::write(&file, &history).expect("writing the history");
            let bytes = history.len() as f64;
            drop(history);
            let out = Command::new(&exe)
                .arg("one")
                .arg(&file)
                .output()
                .expect("the child runs");
            let words: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect();
            let get = |i: usize| words.get(i).cloned().unwrap_or_else(|| "?".into());
            let peak_kb: f64 = get(3).parse().unwrap_or(f64::NAN);
            let line = format!(
                "| {name} | {txns} | {:.1} MB | {} s | {} s | {} s | {:.0} MB | {:.1}× | {} |\n",
                bytes / 1e6,
                get(0),
                get(1),
                get(2),
                peak_kb / 1024.0,
                peak_kb * 1024.0 / bytes,
                words.get(4..).map_or("failed".to_string(), |w| w.join(" ")),
            );
            eprint!("{line}");
            text.push_str(&line);
            if txns <= 10_000 {
                // The route the graph replaced, for comparison: si by the commit-order search
                // on the history with its known order rewritten as reads.
                let out = Command::new(&exe)
                    .arg("search")
                    .arg(&file)
                    .output()
                    .expect("the child runs");
                let words = String::from_utf8_lossy(&out.stdout).trim().to_string();
                searches.push_str(&format!("| {name} | {txns} | {words} |\n"));
            }
            let _ = std::fs::remove_file(&file);
        }
    }
    let _ = std::fs::remove_dir(&dir);
    text.push_str(
        "\nThe route the graph replaced (si by the commit-order search on the history with its \
         known order rewritten as reads, `History::with_write_order_as_reads`; 60 s timeout, \
         the history built before the clock starts):\n\n\
         | history | transactions | si by the search: verdict, time, peak memory |\n|---|---:|---|\n",
    );
    text.push_str(&searches);
    print!("{text}");
    if write_docs {
        docs::write_docs_section("performance.md", "known_order_speed", &text);
    }
}

/// The old route at si: prints `verdict, time, peak memory`.
fn search(file: &Path) {
    use isopredict::ser::{StrongLevel, StrongOptions};
    let (input, _) = read_input(file, ReadOptions::default()).expect("the history reads");
    let h = input.history().expect("a history");
    let rewritten = h.with_write_order_as_reads();
    let h = rewritten.as_ref().unwrap_or(h);
    let start = Instant::now();
    let options = StrongOptions {
        timeout: Some(std::time::Duration::from_secs(60)),
        explain: false,
        ..StrongOptions::default()
    };
    let verdict = match check_strong(h, StrongLevel::Snapshot, &options) {
        Ok(r) => format!("{:?}", r.verdict).to_lowercase(),
        Err(e) => format!("error: {e}"),
    };
    println!(
        "{verdict}, {:.2} s, {:.0} MB",
        start.elapsed().as_secs_f64(),
        peak_kb() as f64 / 1024.0
    );
}

/// This process's peak resident memory (`VmHWM`), in kB.
fn peak_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|v| v.parse().unwrap_or(0)))
        })
        .unwrap_or(0)
}

/// One measurement: prints `read_s levels_s total_s peak_kb verdict…`.
fn one(file: &Path) {
    let start = Instant::now();
    let (input, _) = read_input(file, ReadOptions::default()).expect("the history reads");
    input.history().expect("a history");
    let read = start.elapsed().as_secs_f64();
    let report = decide_all(&input, EvidenceChoice::Auto, &Limits::default()).expect("verdicts");
    let total = start.elapsed().as_secs_f64();
    let peak_kb = peak_kb();
    let verdict = |level: isopredict::check::Level| {
        report
            .verdicts
            .iter()
            .find(|v| v.level == level)
            .map_or("-".to_string(), |v| match v.verdict {
                isopredict::verdict::Outcome::Consistent => "ok".to_string(),
                isopredict::verdict::Outcome::Violated => v
                    .anomaly
                    .as_deref()
                    .map_or("V".to_string(), |a| format!("V({})", a.replace(' ', "-"))),
                isopredict::verdict::Outcome::Unknown => "?".to_string(),
            })
    };
    use isopredict::check::Level;
    println!(
        "{read:.2} {:.2} {total:.2} {peak_kb} {} {} {} {} {}",
        total - read,
        verdict(Level::StrictSerializable),
        verdict(Level::Serializable),
        verdict(Level::Snapshot),
        verdict(Level::Prefix),
        verdict(Level::Causal),
    );
}
