//! End-to-end tests of `isopredict check --level ser|si|pc|all`: verdicts and exit codes, the
//! named anomaly in text, `--json` into the library's report types, `--dot`, `--witness`,
//! `--engine`, and exit code 3 on a time limit.

use crate::common;

use isopredict::check::Level;
use isopredict::ser::{StrongEdgeKind, StrongReport, Verdict};
use isopredict::verdict::VerdictsReport;

use common::cli::{awdit, isopredict, stdout, Scratch};

#[test]
fn verdicts_exit_codes_and_names() {
    let lost = awdit("causal/lost-update.txt");
    for engine in ["search", "smt", "auto"] {
        let pc = isopredict(&["check", &lost, "--level", "pc", "--engine", engine]);
        assert_eq!(pc.status.code(), Some(0), "{}", stdout(&pc));
        let si = isopredict(&["check", &lost, "--level", "si", "--engine", engine]);
        assert_eq!(si.status.code(), Some(1));
        let text = stdout(&si);
        assert!(text.contains("anomaly: lost update"), "{text}");
        assert!(text.contains("VIOLATED"), "{text}");
    }
    let fork = isopredict(&["check", &awdit("causal/long-fork.txt"), "--level", "pc"]);
    assert_eq!(fork.status.code(), Some(1));
    assert!(stdout(&fork).contains("long fork"), "{}", stdout(&fork));
}

#[test]
fn json_dot_and_witness() {
    let dir = Scratch::new("strong");
    let lost = awdit("causal/lost-update.txt");
    let dot = dir.join("lost.dot");
    let o = isopredict(&[
        "check",
        &lost,
        "--level",
        "ser",
        "--json",
        "--dot",
        dot.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let report: StrongReport = serde_json::from_slice(&o.stdout).expect("a StrongReport");
    assert_eq!(report.level, Level::Serializable);
    assert_eq!(report.verdict, Verdict::Violated);
    let v = report.violation.expect("an explanation");
    assert_eq!(v.anomaly, "lost update");
    assert!(v.core_minimal);
    assert!(v.cycle.iter().any(|e| e.kind == StrongEdgeKind::ReadWrite));
    let drawing = std::fs::read_to_string(&dot).unwrap();
    assert!(drawing.starts_with("digraph"), "{drawing}");
    assert!(drawing.contains("rw("), "{drawing}");

    let ser = awdit("causal/fully-ser.txt");
    let o = isopredict(&["check", &ser, "--level", "ser", "--json", "--witness"]);
    assert_eq!(o.status.code(), Some(0));
    let report: StrongReport = serde_json::from_slice(&o.stdout).unwrap();
    let witness = report.witness.expect("a witness on request");
    assert_eq!(witness[0], 0);

    let o = isopredict(&["check", &lost, "--json"]);
    let all: VerdictsReport = serde_json::from_slice(&o.stdout).expect("a VerdictsReport");
    let order: Vec<Level> = all.verdicts.iter().map(|v| v.level).collect();
    assert_eq!(
        order,
        [
            Level::Serializable,
            Level::Snapshot,
            Level::Prefix,
            Level::Causal,
            Level::ReadAtomic,
            Level::ReadCommitted,
            Level::CutIsolation
        ]
    );
    assert_eq!(all.strongest, Some(Level::Prefix));
    let text = stdout(&isopredict(&["check", &lost]));
    let ser_line = text
        .lines()
        .position(|l| l.contains("serializability"))
        .unwrap();
    let ci_line = text
        .lines()
        .position(|l| l.contains("cut isolation"))
        .unwrap();
    assert!(ser_line < ci_line, "{text}");
}

#[test]
fn a_time_limit_exits_3() {
    let dir = Scratch::new("strong-timeout");
    let file = dir.join("big.json");
    let g = isopredict(&[
        "generate",
        "--sessions",
        "8",
        "--txns",
        "300",
        "--consistent",
        "ser",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(g.status.code(), Some(0));
    let o = isopredict(&[
        "check",
        file.to_str().unwrap(),
        "--level",
        "ser",
        "--engine",
        "smt",
        "--timeout",
        "0.001",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert!(stdout(&o).contains("UNKNOWN"));
}
