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
//! child whose resident memory passes 4 GB is killed ("over 4 GB"), as is one still running
//! after ten times the timeout. The load average (`/proc/loadavg`, one minute) before each cell
//! is printed beside it: on a shared machine wall time follows the load, CPU time much less.
//! With `--write-docs` the tables replace the part of docs/performance.md between its
//! `<!-- begin: written by … workload_table … -->` and `<!-- end: written by workload_table
//! -->` lines.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/docs.rs"]
mod docs;

/// Peak resident memory a cell may reach (the target).
const MEMORY_CAP_KB: u64 = 4 * 1024 * 1024;
/// The `--timeout` of every cell (the command's default).
const TIMEOUT_S: u64 = 60;

/// One measured child process.
struct Measured {
    /// Exit code (None: killed).
    code: Option<i32>,
    wall: f64,
    cpu: f64,
    peak_mb: u64,
    /// Why it was killed, if it was.
    killed: Option<&'static str>,
    stdout: String,
}

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
    let exe = binary();
    let scratch = std::env::temp_dir().join(format!("workload_table-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");

    let mut text = String::new();
    text.push_str(&format!(
        "Measured {} on {} cores; `run … --max 1`, {TIMEOUT_S} s timeout. Each cell: answer, \
         wall time / CPU time (user + system) / peak memory, and the one-minute load average \
         when it started.\n",
        today(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
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
                let load = load_average();
                let m = measure(
                    Command::new(&exe)
                        .args(["run", workload, "--sessions", sessions, "--calls", calls])
                        .args(["--level", level, "--max", "1", "--json", "--out"])
                        .arg(&out),
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
        let load = load_average();
        let m = measure(
            Command::new(&exe)
                .args(["rank", "--sessions", "10", "--calls", "200", "--seeds", "1"])
                .args(["--explore", "0", "--levels", "causal,ra,rc,pc,si", "--out"])
                .arg(&out),
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

/// `target/release/isopredict`, beside the folder of this example's binary.
fn binary() -> PathBuf {
    let me = std::env::current_exe().expect("this example");
    let release = me
        .parent()
        .and_then(Path::parent)
        .expect("target/release/examples");
    let exe = release.join("isopredict");
    assert!(
        exe.exists(),
        "{} missing: run `cargo build --release` first",
        exe.display()
    );
    exe
}

/// Runs `command` to its end (or kills it at the memory cap or ten times the timeout):
/// wall, CPU and peak memory of the child. (The child is reaped by `wait4`, which also gives
/// its resource usage; `Child::wait` would not.)
#[allow(clippy::zombie_processes)]
fn measure(command: &mut Command) -> Measured {
    let start = Instant::now();
    let stdout = scratch_file();
    let mut child = command
        .stdout(Stdio::from(
            std::fs::File::create(&stdout).expect("a scratch file"),
        ))
        .stderr(Stdio::null())
        .spawn()
        .expect("the child starts");
    let pid = child.id() as libc::pid_t;
    let mut killed = None;
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: rusage is plain data, filled by wait4.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child without blocking.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        if killed.is_none() {
            if resident_kb(pid) > MEMORY_CAP_KB {
                killed = Some("over 4 GB");
            } else if start.elapsed() > Duration::from_secs(10 * TIMEOUT_S) {
                killed = Some("still running after 10 × the timeout");
            }
            if killed.is_some() {
                let _ = child.kill();
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let wall = start.elapsed().as_secs_f64();
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let text = std::fs::read_to_string(&stdout).unwrap_or_default();
    let _ = std::fs::remove_file(&stdout);
    Measured {
        code,
        wall,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        peak_mb: usage.ru_maxrss as u64 / 1024,
        killed,
        stdout: text,
    }
}

fn scratch_file() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::env::temp_dir().join(format!("workload_table-{}-{n}.out", std::process::id()))
}

/// The child's resident memory (kB), 0 when unknown.
fn resident_kb(pid: libc::pid_t) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
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

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
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

/// Today's date (UTC) from the system clock, as YYYY-MM-DD.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y}-{m:02}-{d:02}")
}
