//! The "Proving none at the scale of test runs" tables of docs/performance.md (issue 22): the
//! whole `isopredict run W --sessions S --calls C --level L --max 1` command (record, check,
//! predict, validate, write the report) for the four workloads at causal, ra, rc, pc and si,
//! and `isopredict rank --sessions 10 --calls 200 --seeds 1 --explore 0 --levels
//! causal,ra,rc,pc,si` (the same cells through the ranking).
//!
//! `cargo build --release && cargo run --release --example workload_table -- [--write-docs]
//! [--sizes 10x200,20x500] [--workloads smallbank,voter,wikipedia,tpcc]
//! [--levels causal,ra,rc,pc,si] [--no-rank]`
//!
//! Each cell is the release binary (`target/release/isopredict`, beside this example's
//! directory) run as a child process with the default 60 s `--timeout`; the table gives its
//! answer (the kind of certificate of a "none", from the report's reason), wall time, CPU
//! time (user + system, from `wait4`) and peak memory (the child's maximum resident set). A
//! child whose resident memory passes 4 GB is killed, as is one still running
//! after ten times the timeout. The load average (`/proc/loadavg`, one minute) before each cell
//! is printed beside it: on a shared machine wall time follows the load, CPU time much less.
//! With `--write-docs` the tables replace the part of docs/performance.md between its
//! `<!-- begin: written by … workload_table … -->` and `<!-- end: written by workload_table
//! -->` lines.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[allow(dead_code)] // each example uses part of the shared module
#[path = "common/child.rs"]
mod child;
#[path = "common/docs.rs"]
mod docs;

use child::{load_now, Measured};

/// The `--timeout` of every cell (the command's default).
const TIMEOUT_S: u64 = 60;
/// A cell is killed past 4 GB of resident memory (the target) or ten times the
/// timeout.
const CAPS: child::Caps = child::Caps {
    memory_kb: 4 * 1024 * 1024,
    wall: Duration::from_secs(10 * TIMEOUT_S),
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str, default: &str| -> Vec<String> {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map_or(default, String::as_str)
            .split(',')
            .map(str::to_string)
            .collect()
    };
    let write_docs = args.iter().any(|a| a == "--write-docs");
    let sizes = value("--sizes", "10x200,20x500");
    let workloads = value("--workloads", "smallbank,voter,wikipedia,tpcc");
    let levels = value("--levels", "causal,ra,rc,pc,si");
    let exe = child::release_binary();
    let scratch = std::env::temp_dir().join(format!("workload_table-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");

    let mut text = String::new();
    text.push_str(&format!(
        "{} `run … --max 1`, {TIMEOUT_S} s timeout; a cell is killed past 4 GB or ten times \
         the timeout. Each cell: answer, wall time / CPU time (user + system) / peak memory, and \
         the one-minute load average when it started.\n",
        child::measured_where()
    ));
    for size in &sizes {
        let (sessions, calls) = size.split_once('x').expect("sizes like 10x200");
        text.push_str(&format!("\n{sessions} sessions × {calls} calls:\n\n"));
        text.push_str(&format!("| workload | {} |\n", levels.join(" | ")));
        text.push_str(&format!("|---|{}\n", "---|".repeat(levels.len())));
        for workload in &workloads {
            let mut row = format!("| {workload} |");
            for level in &levels {
                let out = scratch.join(format!("{workload}-{size}-{level}"));
                let load = load_now();
                let m = child::measure(
                    Command::new(&exe)
                        .args(["run", workload, "--sessions", sessions, "--calls", calls])
                        .args(["--level", level, "--max", "1", "--json", "--out"])
                        .arg(&out),
                    &CAPS,
                );
                let _ = std::fs::remove_dir_all(&out);
                let cell = format!("{} {} (load {load})", answer(&m), numbers(&m));
                eprintln!("{workload} {size} {level}: {cell}");
                row.push_str(&format!(" {cell} |"));
            }
            text.push_str(&row);
            text.push('\n');
        }
    }
    if !args.iter().any(|a| a == "--no-rank") {
        let out = scratch.join("rank");
        let load = load_now();
        let m = child::measure(
            Command::new(&exe)
                .args(["rank", "--sessions", "10", "--calls", "200", "--seeds", "1"])
                .args(["--explore", "0", "--levels", "causal,ra,rc,pc,si", "--out"])
                .arg(&out),
            &CAPS,
        );
        let unknown = count_unknown(&out.join("rank.md"));
        let _ = std::fs::remove_dir_all(&out);
        text.push_str(&format!(
            "\n`rank --sessions 10 --calls 200 --seeds 1 --explore 0 --levels causal,ra,rc,pc,si` \
             (the four workloads, one run each, approx-relaxed): exit {}, {} (load {load}); \
             unknown cells in rank.md: {}.\n",
            m.code.map_or("killed".to_string(), |c| c.to_string()),
            numbers(&m),
            unknown.map_or("rank.md not written".to_string(), |n| n.to_string())
        ));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    println!("{text}");
    if write_docs {
        docs::write_docs_section("performance.md", "workload_table", &text);
    }
}

/// The run's answer: "anomaly", "none (certificate)", "**unknown**" or why it was killed.
fn answer(m: &Measured) -> String {
    if let Some(why) = m.killed {
        return format!("**{why}**");
    }
    let report: serde_json::Value = match serde_json::from_str(&m.stdout) {
        Ok(v) => v,
        Err(_) => return format!("**failed (exit {:?})**", m.code),
    };
    let verdict = report["verdict"].as_str().unwrap_or("?");
    match verdict {
        v if v.starts_with("anomaly") => "anomaly".to_string(),
        // report.json's `certificate`: the kind of argument of the "none".
        "no-anomaly" => format!(
            "none ({})",
            report["certificate"]
                .as_str()
                .unwrap_or("no certificate")
                .replace('-', " ")
        ),
        "unknown" => "**unknown**".to_string(),
        other => other.to_string(),
    }
}

fn numbers(m: &Measured) -> String {
    format!(
        "{:.1} s / {:.1} s CPU / {:.2} GB",
        m.wall,
        m.cpu,
        m.peak_mb as f64 / 1024.0
    )
}

/// Cells of rank.md's tables that say "unknown".
fn count_unknown(rank_md: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(rank_md).ok()?;
    Some(
        text.lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| l.matches("unknown").count())
            .sum(),
    )
}
