//! End-to-end tests of Ctrl-C (issue 12, item 4): a long `run`, `predict` or `rank` that
//! receives SIGINT before it found anything (`rank`: before a cell was answered) stops, says it
//! was interrupted, writes nothing (the previous outputs at its `--out` stay byte for byte, no
//! new file appears) and exits with 130.
//!
//! The interrupted commands would take far longer than the test waits (a TPC-C run of 20 calls
//! per session predicted exactly at causal, with no time limit, takes Z3 minutes), so each
//! test costs about the second before the signal plus the time to stop.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::cli::{isopredict, snapshot, Scratch};
use common::signal::{wait_after_signal, SLOW};

/// Starts `isopredict ARGS`, waits until it handles SIGINT (a probe, not a guess), lets it
/// work `after` more (to land inside its long work, not to wait for readiness), sends SIGINT,
/// and waits (at most a minute) for it to end: its exit code (`None` if a signal ended it) and standard error.
fn interrupted(scratch: &Scratch, args: &[&str], after: Duration) -> (Option<i32>, String) {
    let err = scratch.join("stderr.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    // Ready when its signal handler is installed, then `after` into its work.
    common::signal::wait_until_handled(&mut child, libc::SIGINT);
    std::thread::sleep(after);
    assert!(
        child.try_wait().unwrap().is_none(),
        "`isopredict {}` ended before the signal: not a long case",
        args.join(" ")
    );
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = wait_after_signal(&mut child, args);
    let stderr = std::fs::read_to_string(&err).unwrap();
    std::fs::remove_file(&err).unwrap();
    (status.code(), stderr)
}

/// Interrupts `isopredict ARGS` a second after its start and asserts that it exits with 130,
/// says it was interrupted and wrote nothing, and left every file under `scratch` (the
/// folder of its outputs) byte for byte as it was: no temporary folder or file left.
fn assert_sigint_writes_nothing(scratch: &Scratch, args: &[&str]) {
    let before = snapshot(&scratch.join("."));
    let (code, stderr) = interrupted(scratch, args, Duration::from_secs(1));
    assert_eq!(code, Some(130), "stderr: {stderr}");
    assert!(stderr.contains("interrupted"), "stderr: {stderr}");
    assert!(stderr.contains("no output written"), "stderr: {stderr}");
    assert_eq!(snapshot(&scratch.join(".")), before);
}

#[test]
fn sigint_stops_run_leaving_the_previous_run_folder_untouched() {
    let scratch = Scratch::new("interrupt-run");
    let out = scratch.arg("out");
    // An earlier, quick run in the same folder.
    let earlier = isopredict(&["run", "tpcc", "--seed", "1", "--out", &out]);
    assert!(earlier.status.code().is_some_and(|c| c <= 1), "{earlier:?}");
    assert!(scratch.join("out/report.md").is_file());
    let mut args = vec!["run", "tpcc", "--out", &out];
    args.extend_from_slice(SLOW);
    // The folder and everything beside it stay as they were.
    assert_sigint_writes_nothing(&scratch, &args);
}

#[test]
fn sigint_stops_predict_writing_nothing() {
    let scratch = Scratch::new("interrupt-predict");
    // The observed history of the slow case (its prediction given up after 0.2 s).
    let observed_dir = scratch.arg("observed");
    let mut args = vec!["run", "tpcc", "--out", &observed_dir];
    args.extend_from_slice(&SLOW[..6]);
    args.extend_from_slice(&["--timeout", "0.2"]);
    let recorded = isopredict(&args);
    assert_eq!(recorded.status.code(), Some(3), "{recorded:?}");
    let observed = scratch.join("observed").join("observed.json");
    let observed = observed.to_str().unwrap();
    // A previous prediction at the --out path; no --dot file yet.
    std::fs::write(scratch.join("prediction.json"), "previous prediction\n").unwrap();
    let (out, dot) = (
        scratch.arg("prediction.json"),
        scratch.arg("prediction.dot"),
    );
    // The slow case's prediction (SLOW without --calls, a run option).
    let mut args = vec!["predict", observed];
    args.extend_from_slice(&SLOW[2..]);
    args.extend_from_slice(&["--out", &out, "--dot", &dot]);
    assert_sigint_writes_nothing(&scratch, &args);
}

#[test]
fn sigint_stops_rank_leaving_the_previous_ranking_untouched() {
    let scratch = Scratch::new("interrupt-rank");
    let out = scratch.arg("out");
    let earlier = isopredict(&[
        "rank",
        "--workloads",
        "smallbank",
        "--sizes",
        "small",
        "--seeds",
        "1",
        "--levels",
        "causal",
        "--explore",
        "0",
        "--out",
        &out,
    ]);
    assert_eq!(earlier.status.code(), Some(0), "{earlier:?}");
    assert!(scratch.join("out/rank.md").is_file());
    // One slow task (the slow case of `run` above) and nothing else: no cell is answered
    // before the signal, so nothing is written (a ranking cut after some cells were answered
    // writes those: tests/cli/rank_cut.rs).
    let args = [
        "rank",
        "--workloads",
        "tpcc",
        "--calls",
        "20",
        "--seeds",
        "1",
        "--levels",
        "causal",
        "--strategies",
        "exact-strict",
        "--explore",
        "0",
        "--timeout",
        "0",
        "--threads",
        "1",
        "--out",
        &out,
    ];
    assert_sigint_writes_nothing(&scratch, &args);
}

#[test]
fn help_documents_exit_code_130() {
    for command in ["check", "predict", "run", "rank"] {
        let help = common::cli::stdout(&isopredict(&[command, "--help"]));
        assert!(help.contains("130 = interrupted"), "{command}: {help}");
    }
}
