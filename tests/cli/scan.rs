//! `--scan keyed|full` end to end (docs/workloads.md, "Keyed scans"): `run` records its scan
//! mode in report.json and report.md, `reproduce` records the run again with it (an old run
//! folder without it is taken as keyed, with a note), and `rank --scan` applies to every cell
//! and says which mode in rank.md and rank.json. The reproduction on PostgreSQL runs when
//! `ISOPREDICT_POSTGRES_URL` is set (tests/common/postgres.rs).

use crate::common;

use common::cli::{isopredict, stderr, stdout, Scratch};
use common::postgres::server;

/// A PostgreSQL URL where nothing listens: `reproduce` records the observed run again on the
/// embedded store first, and only then fails to reach the database.
const NO_DATABASE: &str = "postgres://isopredict@127.0.0.1:1/none";

/// `run smallbank --scan MODE --max 1` (seed 1, small, causal unless `extra` says otherwise)
/// into `dir`; it must find an anomaly.
fn run_smallbank(s: &Scratch, dir: &str, mode: &str, extra: &[&str]) {
    let out = s.arg(dir);
    let mut args = vec![
        "run",
        "smallbank",
        "--scan",
        mode,
        "--max",
        "1",
        "--out",
        &out,
    ];
    args.extend_from_slice(extra);
    let o = isopredict(&args);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
}

/// `reproduce DIR` at read committed on `url`.
fn reproduce(s: &Scratch, dir: &str, url: &str) -> std::process::Output {
    let (run_dir, out) = (s.arg(dir), s.arg(&format!("{dir}-reproduce")));
    isopredict(&[
        "reproduce",
        &run_dir,
        "--store",
        url,
        "--isolation",
        "read-committed",
        "--out",
        &out,
    ])
}

fn report_json(s: &Scratch, dir: &str) -> serde_json::Value {
    serde_json::from_str(&s.read(&format!("{dir}/report.json"))).unwrap()
}

#[test]
fn run_records_its_scan_mode_and_reproduce_records_the_run_again_with_it() {
    let s = Scratch::new("full");
    run_smallbank(&s, "full", "full", &[]);
    run_smallbank(&s, "keyed", "keyed", &[]);
    assert_eq!(report_json(&s, "full")["scan"], "full");
    assert_eq!(report_json(&s, "keyed")["scan"], "keyed");
    assert!(s.read("full/report.md").starts_with(
        "# isopredict run smallbank (seed 1, small, level causal, approx-relaxed, full scans)\n"
    ));
    // The two modes record different runs of Smallbank (a full scan reads every account row).
    assert_ne!(s.read("full/observed.json"), s.read("keyed/observed.json"));
    for mode in ["full", "keyed"] {
        let o = reproduce(&s, mode, NO_DATABASE);
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(3), "{text}{}", stderr(&o));
        assert!(
            text.contains(&format!(
                "- On the embedded store with {mode} scans: same as observed."
            )),
            "{text}"
        );
        // Then the database: not reachable here, and the report says so.
        assert!(
            text.contains(&format!(
                "- On the database in turns with {mode} scans: cannot connect"
            )),
            "{text}"
        );
        assert!(!stderr(&o).contains("does not say how the run scanned"));
        let json: serde_json::Value =
            serde_json::from_str(&s.read(&format!("{mode}-reproduce/report.json"))).unwrap();
        assert_eq!(
            json["observed_again"].as_array().unwrap().len(),
            2,
            "{json}"
        );
    }
}

#[test]
fn an_old_run_folder_without_a_scan_mode_is_taken_as_keyed_and_says_so() {
    let s = Scratch::new("old");
    run_smallbank(&s, "old", "full", &[]);
    run_smallbank(&s, "old-keyed", "keyed", &[]);
    // A report written before the mode was recorded has no "scan".
    for dir in ["old", "old-keyed"] {
        let mut report = report_json(&s, dir);
        report.as_object_mut().unwrap().remove("scan");
        std::fs::write(
            s.join(&format!("{dir}/report.json")),
            serde_json::to_string_pretty(&report).unwrap(),
        )
        .unwrap();
    }
    // A full-scan run taken as keyed: the note says so, and recording it again on the
    // embedded store already shows the difference (the database is never asked).
    let o = reproduce(&s, "old", NO_DATABASE);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{text}");
    assert!(
        stderr(&o).contains("does not say how the run scanned tables")
            && stderr(&o).contains("taking keyed scans, the default"),
        "{}",
        stderr(&o)
    );
    assert!(
        text.contains("on the embedded store, with the run's configuration (keyed scans), it differs from the observed run"),
        "{text}"
    );
    assert!(!text.contains("On the database"), "{text}");
    // A keyed run without the record is the same as observed (keyed was the default).
    let o = reproduce(&s, "old-keyed", NO_DATABASE);
    assert!(stderr(&o).contains("does not say how the run scanned tables"));
    assert!(
        stdout(&o).contains("- On the embedded store with keyed scans: same as observed."),
        "{}",
        stdout(&o)
    );
    // A report whose mode is neither is bad input naming the file.
    let mut report = report_json(&s, "old");
    report["scan"] = "index".into();
    std::fs::write(s.join("old/report.json"), report.to_string()).unwrap();
    let o = reproduce(&s, "old", NO_DATABASE);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("report.json: \"scan\" is \"index\", not \"keyed\" or \"full\""),
        "{}",
        stderr(&o)
    );
}

/// The literals of `run tpcc --scan MODE` (seed 1, small, causal): the size of its encoding,
/// which depends on the reads the run recorded.
fn run_literals(s: &Scratch, mode: &str) -> u64 {
    let dir = format!("tpcc-{mode}");
    let out = s.arg(&dir);
    let o = isopredict(&["run", "tpcc", "--scan", mode, "--max", "1", "--out", &out]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    report_json(s, &dir)["timings"]["literals"]
        .as_u64()
        .unwrap()
}

#[test]
fn rank_scan_full_applies_to_every_cell_and_says_which_mode() {
    let s = Scratch::new("rank");
    let out = s.arg("r");
    let grid = "rank --workloads tpcc --seeds 1 --sizes small --levels causal --explore 1";
    let mut args: Vec<&str> = grid.split(' ').collect();
    args.extend_from_slice(&["--scan", "full", "--out", &out]);
    let o = isopredict(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = s.read("r/rank.md");
    assert!(
        md.contains("observed runs recorded on the embedded store; full scans."),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(&s.read("r/rank.json")).unwrap();
    assert_eq!(json["scan"], "full");
    assert_eq!(json["exploration"].as_array().unwrap().len(), 1);
    // The cell recorded the run `run --scan full` records, not the keyed one.
    let (full, keyed) = (run_literals(&s, "full"), run_literals(&s, "keyed"));
    assert_ne!(full, keyed);
    assert_eq!(json["predictions"][0]["literals"].as_u64(), Some(full));
    // Over user histories there are no scans to choose.
    let o = isopredict(&["rank", "--histories", &out, "--scan", "full"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_full_scan_run_reproduced_on_postgresql_is_the_same_as_observed() {
    let Some(url) = server("a_full_scan_run_reproduced_on_postgresql") else {
        return;
    };
    let s = Scratch::new("pg");
    run_smallbank(&s, "run", "full", &["--seed", "2", "--level", "rc"]);
    let o = reproduce(&s, "run", &url);
    let text = stdout(&o);
    assert!(
        text.contains("- On the embedded store with full scans: same as observed.")
            && text.contains("- On the database in turns with full scans: same as observed ("),
        "{text}{}",
        stderr(&o)
    );
    assert!(!text.contains("differs from the observed run"), "{text}");
}
