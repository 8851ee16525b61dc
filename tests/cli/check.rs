//! End-to-end tests of `isopredict check`: exit codes, text naming lines, `--json` parsing
//! into the library's report types, `--dot` writing a file, `--witness`.

use crate::common;

use isopredict::check::{Anomaly, CheckReport, Level};
use isopredict::verdict::VerdictsReport;

use common::cli::{awdit, isopredict, stdout, Scratch};

#[test]
fn exit_codes_follow_the_verdict() {
    let ra = awdit("read-atomic/test-ra.txt");
    assert_eq!(
        isopredict(&["check", &ra, "--level", "rc"]).status.code(),
        Some(0)
    );
    assert_eq!(
        isopredict(&["check", &ra, "--level", "ra"]).status.code(),
        Some(0)
    );
    assert_eq!(
        isopredict(&["check", &ra, "--level", "ci"]).status.code(),
        Some(0)
    );
    let cc = isopredict(&["check", &ra, "--level", "cc"]);
    assert_eq!(cc.status.code(), Some(1));
    assert!(stdout(&cc).contains("VIOLATED"), "{}", stdout(&cc));
    // --level all (the default) exits 1 unless every level holds.
    assert_eq!(isopredict(&["check", &ra]).status.code(), Some(1));
    let causal = awdit("causal/lost-update.txt");
    let all = isopredict(&["check", &causal, "--format", "awdit"]);
    assert_eq!(all.status.code(), Some(1));
    assert!(stdout(&all).contains("strongest level satisfied: pc"));
    let ser = awdit("causal/fully-ser.txt");
    let all = isopredict(&["check", &ser, "--format", "awdit"]);
    assert_eq!(all.status.code(), Some(0));
    assert!(stdout(&all).contains("strongest level satisfied: ser"));
}

#[test]
fn bad_input_and_usage_exit_2() {
    let dir = Scratch::new("bad");
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "w 0 0\nr 0\n").unwrap();
    let o = isopredict(&["check", bad.to_str().unwrap(), "--format", "awdit"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.txt:2"), "{err}");
    let missing = dir.join("missing.txt");
    assert_eq!(
        isopredict(&["check", missing.to_str().unwrap()])
            .status
            .code(),
        Some(2)
    );
    let ok = awdit("causal/lost-update.txt");
    assert_eq!(
        isopredict(&["check", &ok, "--level", "bogus"])
            .status
            .code(),
        Some(2)
    );
    let o = isopredict(&["check", &ok, "--level", "ser", "--engine", "bogus"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn text_names_the_anomaly_transactions_and_lines() {
    let o = isopredict(&[
        "check",
        &awdit("read-atomic/biswas-enea.txt"),
        "--level",
        "cc",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(text.contains("COConflictCM (TAP m)"), "{text}");
    // One name per anomaly (issue 34 item 4): the engineer's name, Plume's beside it.
    assert!(
        text.contains("VIOLATED: causally overwritten read (Plume TAP m COConflictCM)"),
        "{text}"
    );
    // t4 = `r 0 1` (line 8) and `r 1 1` (line 9) in the file.
    assert!(text.contains("[lines 8-9]"), "{text}");
    assert!(text.contains("R(0,1) at line 8"), "{text}");
}

#[test]
fn json_parses_into_the_report_types() {
    let path = awdit("read-committed/test-rc.txt");
    let o = isopredict(&["check", &path, "--level", "ra", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let report: CheckReport = serde_json::from_slice(&o.stdout).expect("a CheckReport");
    assert_eq!(report.level, Level::ReadAtomic);
    assert!(!report.consistent);
    assert!(report
        .read_violations
        .iter()
        .all(|v| v.anomaly == Anomaly::NonRepeatableRead));

    let o = isopredict(&["check", &path, "--json"]);
    let all: VerdictsReport = serde_json::from_slice(&o.stdout).expect("a VerdictsReport");
    assert_eq!(all.strongest, Some(Level::ReadCommitted));
    assert_eq!(all.cut_isolation, Some(false));

    let o = isopredict(&["check", &path, "--level", "rc", "--json", "--witness"]);
    assert_eq!(o.status.code(), Some(0));
    let report: CheckReport = serde_json::from_slice(&o.stdout).unwrap();
    let witness = report.witness.expect("a witness on request");
    assert_eq!(witness[0], 0);
    assert_eq!(witness.len(), report.summary.transactions + 1);
    // The text names the witness's transactions as every report does (`T1.1`).
    let o = isopredict(&["check", &path, "--level", "rc", "--witness"]);
    let text = stdout(&o);
    assert!(text.contains("  initial state T"), "{text}");
    assert!(!text.contains(" t1 "), "{text}");
}

#[test]
fn dot_writes_the_violation() {
    let dir = Scratch::new("dot");
    let out = dir.join("cycle.dot");
    let o = isopredict(&[
        "check",
        &awdit("none/hb-cycle.txt"),
        "--level",
        "rc",
        "--dot",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let dot = std::fs::read_to_string(&out).expect("the DOT file is written");
    assert!(dot.starts_with("digraph"), "{dot}");
    assert!(dot.contains("CyclicCO"), "{dot}");
    assert_eq!(dot.matches(" -> ").count(), 4, "{dot}");
}
