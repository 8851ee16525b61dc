//! Read speed of every history format (issue 10, item 9): a history of about 1,000,000
//! operations written in each format in memory, then read back into a `History`
//! (`formats::read_parts`: parsing, validation and building included). Prints, per format, the
//! input size, the best wall time over the runs and the throughput in MB/s (10^6 bytes per
//! second of input), as a Markdown table.
//!
//! `cargo run --release --example reader_speed [-- [--write-docs] [RUNS] [OPS]]` (default 3
//! runs, 1,000,000 operations). With `--write-docs` the table replaces the one between the
//! markers in docs/performance.md.
//!
//! The histories:
//! - every format but timekiller and the Elle list-append row: the serial Plume history of
//!   `examples/gen_plume.rs` (50 sessions, 10,000 keys, transactions of 4–16 operations, 70 %
//!   reads), converted with isopredict's own writers;
//! - timekiller: the timestamped history of `generate::timestamped` (50 sessions, 1,000 keys,
//!   15 operations a transaction, half reads), which has the timestamps the format needs;
//! - elle list-append: a serial list-append history generated below (50 processes, 10,000
//!   keys, 70 % reads returning the key's whole list), in EDN and in Jepsen's JSON.

use std::fmt::Write as _;
use std::time::Instant;

use isopredict::formats::{self, Format};

#[path = "common/docs.rs"]
mod docs;
#[path = "gen_plume.rs"]
#[allow(dead_code)]
mod gen_plume;
#[path = "common/speed.rs"]
mod speed;
use speed::{process_cpu, timekiller_json};

/// One measured input.
struct Row {
    name: String,
    bytes: usize,
    ops: usize,
    /// Best wall time, seconds.
    best: f64,
    /// Best CPU time (user + system, all threads), seconds.
    cpu: f64,
}

/// A serial Elle list-append history of about `ops` micro-operations, in EDN (`json` false)
/// or Jepsen's JSON rendering: an invocation and an `:ok` completion per transaction.
fn list_append(ops: usize, json: bool, seed: u64) -> Vec<u8> {
    let mut rng = gen_plume::Rng::new(seed);
    let keys = 10_000u64;
    let mut lists: Vec<Vec<u64>> = vec![Vec::new(); keys as usize];
    let mut next = vec![1u64; keys as usize];
    let mut out = String::with_capacity(ops * 40);
    let (mut written, mut index) = (0usize, 0u64);
    let (r, a, nil, sep) = if json {
        ("\"r\"", "\"append\"", "null", ", ")
    } else {
        (":r", ":append", "nil", " ")
    };
    while written < ops {
        let process = rng.below(50);
        let len = (4 + rng.below(13) as usize).min(ops - written);
        let (mut invoke, mut complete) = (String::new(), String::new());
        for i in 0..len {
            let key = rng.below(keys);
            if i > 0 {
                invoke.push_str(sep);
                complete.push_str(sep);
            }
            if rng.below(10) < 7 {
                let _ = write!(invoke, "[{r}{sep}{key}{sep}{nil}]");
                let list = &lists[key as usize];
                let items: Vec<String> = list.iter().map(u64::to_string).collect();
                let _ = write!(complete, "[{r}{sep}{key}{sep}[{}]]", items.join(sep));
            } else {
                let v = next[key as usize];
                next[key as usize] += 1;
                lists[key as usize].push(v);
                let m = format!("[{a}{sep}{key}{sep}{v}]");
                invoke.push_str(&m);
                complete.push_str(&m);
            }
        }
        for (kind, value) in [("invoke", &invoke), ("ok", &complete)] {
            if json {
                let _ = writeln!(
                    out,
                    "{{\"type\": \"{kind}\", \"f\": \"txn\", \"value\": [{value}], \
                     \"process\": {process}, \"time\": {index}, \"index\": {index}}}"
                );
            } else {
                let _ = writeln!(
                    out,
                    "{{:type :{kind}, :f :txn, :value [{value}], :process {process}, \
                     :time {index}, :index {index}}}"
                );
            }
            index += 1;
        }
        written += len;
    }
    out.into_bytes()
}

/// The best wall time of `runs` reads of `parts` as `format`; panics on a read error (the
/// inputs are written by isopredict itself).
fn measure(name: String, parts: &[(String, Vec<u8>)], format: Format, runs: usize) -> Row {
    let (mut best, mut cpu) = (f64::INFINITY, f64::INFINITY);
    let mut ops = 0;
    for _ in 0..runs {
        let (t, c) = (Instant::now(), process_cpu());
        let h = formats::read_parts(parts, format, "bench")
            .unwrap_or_else(|e| panic!("reading {format}: {e}"));
        best = best.min(t.elapsed().as_secs_f64());
        cpu = cpu.min(process_cpu() - c);
        let s = h.stats();
        ops = s.reads + s.writes;
        drop(h);
    }
    eprintln!("{name}: {best:.3} s wall, {cpu:.3} s CPU");
    Row {
        name,
        bytes: parts.iter().map(|(_, b)| b.len()).sum(),
        ops,
        best,
        cpu,
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let write_docs = args.iter().any(|a| a == "--write-docs");
    args.retain(|a| a != "--write-docs");
    let runs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(3);
    let ops: usize = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);

    // READER_SPEED_ONLY=NAME measures only the rows whose name starts with NAME (profiling).
    let only = std::env::var("READER_SPEED_ONLY").unwrap_or_default();
    let wanted = |name: &str| name.starts_with(only.as_str());
    let plume = gen_plume::generate(ops, 50, 10_000, 1);
    let history = formats::read_str(&plume, "bench", Some(Format::Plume)).expect("the history");
    drop(plume);
    let mut rows = Vec::new();
    for format in Format::ALL {
        if format == Format::TimeKiller || !wanted(format.name()) {
            continue;
        }
        let parts = formats::write_parts(&history, format)
            .unwrap_or_else(|e| panic!("writing {format}: {e}"));
        rows.push(measure(format.name().to_string(), &parts, format, runs));
    }
    drop(history);
    for (format, json) in [(Format::Elle, false), (Format::ElleJson, true)] {
        if !wanted(&format!("{format} (list-append)")) {
            continue;
        }
        let parts = vec![(String::new(), list_append(ops, json, 1))];
        rows.push(measure(
            format!("{format} (list-append)"),
            &parts,
            format,
            runs,
        ));
    }
    if wanted("timekiller") {
        rows.push(timekiller_row(ops, runs));
    }
    let text = markdown(&rows, runs);
    print!("{text}");
    if write_docs {
        docs::write_docs_section("performance.md", "reader_speed", &text);
    }
}

/// The timekiller row: a timestamped history of about `ops` operations.
fn timekiller_row(ops: usize, runs: usize) -> Row {
    let parts = vec![(String::new(), timekiller_json((ops / 15) as u32))];
    measure("timekiller".into(), &parts, Format::TimeKiller, runs)
}

/// The table, as Markdown.
fn markdown(rows: &[Row], runs: usize) -> String {
    let mut text = String::new();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    let _ = writeln!(
        text,
        "Load average at the end of the run (1, 5, 15 min): {}.\n",
        load.join(", ")
    );
    let _ = writeln!(
        text,
        "| format | input | operations | wall (best of {runs}) | CPU (best of {runs}) | MB/s (wall) | MB/s (CPU) |"
    );
    let _ = writeln!(text, "|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let mb = r.bytes as f64 / 1e6;
        let _ = writeln!(
            text,
            "| {} | {mb:.1} MB | {} | {:.3} s | {:.3} s | {:.0} | {:.0} |",
            r.name,
            r.ops,
            r.best,
            r.cpu,
            mb / r.best,
            mb / r.cpu
        );
    }
    text
}
