//! Shared by the examples that time the `isopredict` command itself (`check_speed`,
//! `strong_targets`, `workload_table`): the release binary, one child process measured to its
//! end (wall time, CPU time and peak memory from `wait4`), and the facts a generated table
//! states about where it was measured (source commit, cores, load average) — never a date: the
//! git history of the docs says when.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `target/release/isopredict`, beside the folder of the running example's binary.
pub fn release_binary() -> PathBuf {
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

/// What one child process did.
pub struct Measured {
    /// Exit code (None: killed or ended by a signal).
    pub code: Option<i32>,
    /// Wall time, seconds.
    pub wall: f64,
    /// CPU time of the child, user + system, seconds.
    pub cpu: f64,
    /// The child's maximum resident set, MB (2^20 bytes).
    pub peak_mb: u64,
    /// Why it was killed, if it was.
    pub killed: Option<&'static str>,
    /// Its standard output.
    pub stdout: String,
}

/// When a measured child is killed.
pub struct Caps {
    /// Resident memory, kB.
    pub memory_kb: u64,
    /// Wall time.
    pub wall: Duration,
}

/// Runs `command` to its end, or kills it at `caps`: wall, CPU and peak memory of the child.
/// (The child is reaped by `wait4`, which also gives its resource usage; `Child::wait` would
/// not.) Its standard error is discarded, its standard output kept.
#[allow(clippy::zombie_processes)]
pub fn measure(command: &mut Command, caps: &Caps) -> Measured {
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
            if resident_kb(pid) > caps.memory_kb {
                killed = Some("over the memory cap");
            } else if start.elapsed() > caps.wall {
                killed = Some("over the time cap");
            }
            if killed.is_some() {
                let _ = child.kill();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
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
    std::env::temp_dir().join(format!("isopredict-measure-{}-{n}.out", std::process::id()))
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

/// The load average over 1, 5 and 15 minutes (`/proc/loadavg`), e.g. "1.32 1.29 3.85".
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_string())
}

/// The one-minute load average alone.
pub fn load_now() -> String {
    load_average()
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_string()
}

/// The commit measured: `git rev-parse --short HEAD`, with "+ local changes" when the work
/// tree differs from it.
pub fn source_commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "an unknown commit".to_string();
    };
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty {
        format!("{head} + local changes")
    } else {
        head
    }
}

/// The machine in a few words: "2 cores (AMD EPYC …)".
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    format!("{cores} cores ({model})")
}

/// The sentence a generated table starts with: where it was measured.
pub fn measured_where() -> String {
    format!(
        "Measured at commit {} on {}; load average (1, 5, 15 min) {} at the start.",
        source_commit(),
        machine(),
        load_average()
    )
}
