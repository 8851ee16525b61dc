//! Signalling a running `isopredict`: start it with its progress line on, send a signal as
//! soon as a progress line says it is at the point a test wants, and collect what it left.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::cli::Scratch;

/// A long case for the commands that predict (`run tpcc`, `predict`): TPC-C at 20 calls per
/// session predicted exactly at causal with no time limit, which takes Z3 minutes — far longer
/// than a test waits before its signal.
pub const SLOW: &[&str] = &[
    "--calls",
    "20",
    "--level",
    "causal",
    "--strategy",
    "exact-strict",
    "--timeout",
    "0",
];

/// Waits until process `pid` handles `signal` (its handler is installed: the signal's bit in
/// the `SigCgt` mask of /proc/PID/status), so that a signal sent next is handled rather than
/// killing it: a probe in place of a sleep that guesses when the child is ready. Fails if the
/// child ends first or after a minute.
pub fn wait_until_handled(child: &mut Child, signal: i32) {
    let start = Instant::now();
    let bit = 1u64 << (signal - 1);
    loop {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        if caught & bit != 0 {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child ended before it handled signal {signal}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the child does not handle signal {signal} after a minute"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits (at most a minute) for `child`, just sent a signal, to end; `args`, its command
/// line, names it when it does not.
pub fn wait_after_signal(child: &mut Child, args: &[&str]) -> ExitStatus {
    let sent = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if sent.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!(
                "`isopredict {}` still running 60 s after the signal",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a signalled command left: its exit code (`None` if a signal ended it), standard
/// output and standard error.
pub struct Ended {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Starts `isopredict ARGS` with the progress line on (`ISOPREDICT_PROGRESS=1`), sends
/// `signal` as soon as a line of standard error satisfies `ready` (`waiting_for` says what
/// that is, for the failure message), and waits (at most a minute) for the command to end.
pub fn signal_when(
    scratch: &Scratch,
    args: &[&str],
    signal: i32,
    ready: impl Fn(&str) -> bool,
    waiting_for: &str,
) -> Ended {
    let out_file = scratch.join("stdout.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(args)
        .env("ISOPREDICT_PROGRESS", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut stderr = String::new();
    let mut signalled = false;
    let start = Instant::now();
    for line in lines.by_ref() {
        let line = line.unwrap();
        stderr.push_str(&line);
        stderr.push('\n');
        if ready(&line) {
            // SAFETY: sending a signal to our own child process.
            assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
            signalled = true;
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no progress line: {stderr}"
        );
    }
    assert!(
        signalled,
        "`isopredict {}` ended before a progress line showed {waiting_for}: {stderr}",
        args.join(" ")
    );
    // The rest of standard error, until the command ends (the pipe closes).
    let reader = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    let status = wait_after_signal(&mut child, args);
    for line in reader.join().unwrap() {
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let stdout = std::fs::read_to_string(&out_file).unwrap();
    std::fs::remove_file(&out_file).unwrap();
    Ended {
        code: status.code(),
        stdout,
        stderr,
    }
}
