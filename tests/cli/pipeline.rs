//! End-to-end tests of `isopredict run` and `isopredict rank` through the built binary: exit
//! codes (1 anomaly, 0 none, 3 unknown, 2 bad input), the files written, what the report
//! says, determinism across processes, and rank's tables on a tiny grid and on user histories.

use crate::common;

use common::cli::{isopredict, json_output, stderr, stdout, Scratch, RANK_TINY_GRID};

#[test]
fn run_smallbank_reports_a_validated_anomaly_and_writes_its_files() {
    let s = Scratch::new("smallbank");
    let out = s.arg("sb");
    let o = isopredict(&["run", "smallbank", "--out", &out]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Anomaly validated"), "{text}");
    assert!(text.contains("## Reads that change writer"), "{text}");
    assert!(text.contains("`CHECKING.bal[custid="), "{text}");
    assert!(text.contains("Amalgamate(custId0="), "{text}");
    assert!(
        text.contains("A13") && text.contains("**BROKEN**"),
        "{text}"
    );
    let dir = s.join("sb");
    for f in [
        "observed.json",
        "observed.trace.txt",
        "predicted.json",
        "predicted.trace.txt",
        "validating.json",
        "validating.trace.txt",
        "anomaly.dot",
        "anomaly.svg",
        "report.md",
        "report.json",
    ] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
    assert_eq!(s.read("sb/report.md"), text);
    let svg = s.read("sb/anomaly.svg");
    assert!(
        svg.starts_with("<svg") && svg.contains("#d12a1f"),
        "the cycle is drawn in red"
    );
    assert!(s.read("sb/anomaly.dot").starts_with("digraph anomaly {"));
    let report: serde_json::Value = serde_json::from_str(&s.read("sb/report.json")).unwrap();
    assert_eq!(report["verdict"], "anomaly-validated");
    assert_eq!(report["validation"]["verdict"], "validated");
    // The written histories read back, and the predicted one re-checks at causal.
    let check = isopredict(&["check", &s.arg("sb/predicted.json"), "--level", "cc"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    let stats = isopredict(&["stats", &s.arg("sb/observed.trace.txt")]);
    assert_eq!(stats.status.code(), Some(0), "{}", stderr(&stats));
}

#[test]
fn run_exit_codes_none_unknown_and_bad_input() {
    let s = Scratch::new("codes");
    // Voter under causal: nothing to predict.
    let o = isopredict(&["run", "voter", "--level", "causal", "--out", &s.arg("v")]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("No anomaly"));
    // Issue 12.13: say what was shown (level, strategy, boundary, these calls), never that no
    // execution at all is unserializable.
    let text = stdout(&o);
    for shown in [
        "causal consistency with strategy approx-relaxed and the relaxed prediction boundary",
        "This covers only the calls of this run",
    ] {
        assert!(text.contains(shown), "{text}");
    }
    assert!(!text.contains("allows is unserializable"), "{text}");
    assert!(s.join("v/observed.json").is_file() && s.join("v/report.md").is_file());
    assert!(!s.join("v/anomaly.svg").exists());
    // Under rc it has one.
    let o = isopredict(&["run", "voter", "--level", "rc", "--out", &s.arg("vrc")]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    // A budget too small to solve anything: unknown.
    let o = isopredict(&[
        "run",
        "tpcc",
        "--timeout",
        "0.000001",
        "--json",
        "--out",
        &s.arg("t"),
    ]);
    let report = json_output(&o, 3);
    assert_eq!(report["verdict"], "unknown");
    // Bad input.
    for args in [
        vec!["run", "nosuchworkload"],
        vec!["run", "smallbank", "--level", "ser"],
        vec!["run", "smallbank", "--size", "huge"],
        vec!["run", "smallbank", "--strategy", "magic"],
        vec!["run", "smallbank", "--timeout", "-1"],
    ] {
        let o = isopredict(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty());
    }
}

#[test]
fn run_is_deterministic_across_processes() {
    let s = Scratch::new("determinism");
    let report = |dir: &str| -> serde_json::Value {
        let o = isopredict(&[
            "run",
            "smallbank",
            "--seed",
            "3",
            "--level",
            "rc",
            "--json",
            "--out",
            &s.arg(dir),
        ]);
        let mut v = json_output(&o, 1);
        v.as_object_mut().unwrap().remove("timings");
        v.as_object_mut().unwrap().remove("files");
        v
    };
    assert_eq!(report("a"), report("b"));
    assert_eq!(s.read("a/anomaly.svg"), s.read("b/anomaly.svg"));
    assert_eq!(
        s.read("a/validating.trace.txt"),
        s.read("b/validating.trace.txt")
    );
}

#[test]
fn rank_on_a_tiny_grid_writes_tables_json_and_chart() {
    let s = Scratch::new("rank");
    let out = s.arg("r");
    let o = isopredict(&[RANK_TINY_GRID, &["--explore", "2", "--out", &out]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = s.read("r/rank.md");
    assert_eq!(stdout(&o), md);
    assert!(stderr(&o).contains("rank.md"));
    assert!(md.contains("## Risk ranking"));
    assert!(md.contains("#### Level causal") && md.contains("#### Level rc"));
    // Smallbank: 2 of 2 predicted and validated under causal; Voter: none under causal.
    assert!(
        md.contains("| smallbank | small | approx-relaxed | 0 (0) | 0 | 2 | 2 ("),
        "{md}"
    );
    // Voter's "none"s carry their certificate (small runs: the paper-form search).
    assert!(
        md.contains(
            "| voter | small | approx-relaxed | 0 (0) | 2 (`search-exhausted` 2) | 0 | 0 (0) |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| 1 | smallbank |"),
        "smallbank ranks first: {md}"
    );
    let json: serde_json::Value = serde_json::from_str(&s.read("r/rank.json")).unwrap();
    assert_eq!(json["predictions"].as_array().unwrap().len(), 2 * 2 * 2);
    assert_eq!(json["exploration"].as_array().unwrap().len(), 2 * 2 * 2 * 2);
    assert_eq!(json["ranking"].as_array().unwrap().len(), 2);
    let svg = s.read("r/risk.svg");
    assert!(svg.starts_with("<svg") && svg.contains(">smallbank</text>"));
}

#[test]
fn rank_over_user_histories_groups_by_folder() {
    let s = Scratch::new("histories");
    let h = s.traces_by_group(
        "h",
        &[
            ("bank", "smallbank_small_10000.txt"),
            ("bank", "smallbank_small_20000.txt"),
            ("votes", "voter_small_10000.txt"),
        ],
    );
    let o = isopredict(&[
        "rank",
        "--histories",
        &h,
        "--levels",
        "causal",
        "--json",
        "--out",
        &s.arg("r"),
    ]);
    let json = json_output(&o, 0);
    let records = json["predictions"].as_array().unwrap();
    assert_eq!(records.len(), 3);
    let outcome = |run: &str| {
        records
            .iter()
            .find(|r| r["run"] == run)
            .map(|r| {
                (
                    r["program"].as_str().unwrap().to_string(),
                    r["outcome"].clone(),
                )
            })
            .unwrap()
    };
    assert_eq!(outcome("smallbank_small_10000.txt").0, "bank");
    assert_eq!(outcome("smallbank_small_10000.txt").1, "sat");
    assert_eq!(outcome("voter_small_10000.txt").1, "unsat");
    // (An unparsable file fails the command: tests/cli/limits.rs.)
    let md = s.read("r/rank.md");
    // No replay for user histories.
    assert!(
        md.contains("| bank | - | approx-relaxed | 0 (0) | 0 | 2 |"),
        "{md}"
    );
    // Bad folder: exit 2.
    let o = isopredict(&[
        "rank",
        "--histories",
        &s.arg("missing"),
        "--out",
        &s.arg("x"),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// `run` and `rank` give one answer for one cell (issue 35 item 1): Voter at rc, seed 1,
/// small, replays a prediction that diverges into an unserializable execution; both say
/// `validated-diverged` and count it as validated, as IsoPredict's tables do.
#[test]
fn run_and_rank_agree_on_a_diverged_replay() {
    let s = Scratch::new("agree");
    let o = isopredict(&[
        "run",
        "voter",
        "--level",
        "rc",
        "--seed",
        "1",
        "--json",
        "--out",
        &s.arg("run"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let run: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let o = isopredict(&[
        "rank",
        "--workloads",
        "voter",
        "--seeds",
        "1",
        "--sizes",
        "small",
        "--levels",
        "rc",
        "--explore",
        "0",
        "--json",
        "--out",
        &s.arg("rank"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rank: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cell = &rank["predictions"][0]["validation"];
    assert_eq!(run["validation"]["verdict"], "validated-diverged", "{run}");
    assert_eq!(cell["verdict"], run["validation"]["verdict"], "{cell}");
    assert_eq!(cell["validated"], true);
    assert_eq!(cell["diverged"], true);
    assert_eq!(run["verdict"], "anomaly-validated");
    let summary = run["summary"].as_str().unwrap();
    assert!(
        summary.contains("diverged") && summary.contains("not exactly the predicted one"),
        "{summary}"
    );
}

/// `rank --histories` never scores part of a folder in silence (issue 35 item 7): an entry it
/// cannot read (a broken link) or whose format is not detected fails the command naming it;
/// a README beside the histories is passed over.
#[test]
fn rank_over_histories_names_what_it_cannot_read() {
    let s = Scratch::new("histories-unreadable");
    s.traces_by_group("h", &[("bank", "smallbank_small_10000.txt")]);
    std::fs::write(s.join("h/bank/README.md"), "# notes\n").unwrap();
    let ranked = |s: &Scratch| {
        isopredict(&[
            "rank",
            "--histories",
            &s.arg("h"),
            "--levels",
            "causal",
            "--out",
            &s.arg("r"),
        ])
    };
    let o = ranked(&s);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a README is passed over: {}",
        stderr(&o)
    );
    std::os::unix::fs::symlink(s.join("h/bank/gone.txt"), s.join("h/bank/link.txt")).unwrap();
    let o = ranked(&s);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("link.txt") && stderr(&o).contains("broken symbolic link"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(s.join("h/bank/link.txt")).unwrap();
    std::fs::write(s.join("h/bank/notes.json"), "garbage{\n").unwrap();
    let o = ranked(&s);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("notes.json") && stderr(&o).contains("no history format detected"),
        "{}",
        stderr(&o)
    );
}
