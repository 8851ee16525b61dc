//! End-to-end tests of a search for distinct anomalies that is cut (issue 22, item 4): a
//! `run` or `predict --max` that has found anomalies and is still looking for more, stopped by
//! SIGINT (Ctrl-C) or SIGTERM, writes what it found — report.md, report.json, the drawing,
//! the text output — marked "search cut by Ctrl-C", and exits 1 (an anomaly was found); a
//! search that ends by itself says so ("no further distinct anomaly exists"); a run that finds
//! none carries the certificate of that answer in report.json and its `why:` in report.md.
//!
//! The signal is sent once the command's progress line (asked for on a non-terminal standard
//! error with `ISOPREDICT_PROGRESS=1`) shows that a search is running after an anomaly was
//! found: no fixed sleep, so the tests do not depend on the machine's load. The stop flag of a
//! process never goes back, so each stop is a process of its own (the binary).

use crate::common;

use common::cli::{isopredict, snapshot, stdout, Scratch};
use common::signal::{signal_when, Ended};

/// Starts `isopredict ARGS` with the progress line on, sends `signal` as soon as a progress
/// line says a search is running with at least one anomaly found, and waits (at most a
/// minute) for the command to end.
fn signal_while_searching(scratch: &Scratch, args: &[&str], signal: i32) -> Ended {
    signal_when(
        scratch,
        args,
        signal,
        |line| line.contains("found, searching for more distinct ones") && !line.starts_with("no "),
        "a running search (not a long search)",
    )
}

/// No temporary file or folder (`.NAME.PID.N.tmp`) left anywhere under `scratch`.
fn assert_no_temporaries(scratch: &Scratch) {
    let left: Vec<String> = snapshot(&scratch.join("."))
        .into_keys()
        .filter(|name| name.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporaries left: {left:?}");
    for entry in std::fs::read_dir(scratch.join(".")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "temporary folder left: {name}");
    }
}

/// TPC-C at its default size keeps finding anomalies for seconds after the first (its
/// distinct-search budget, 5 s, ends the search otherwise).
#[test]
fn sigint_cuts_the_search_of_run_and_writes_the_anomalies_found() {
    let scratch = Scratch::new("cut-run-sigint");
    let out = scratch.arg("out");
    let ended = signal_while_searching(&scratch, &["run", "tpcc", "--out", &out], libc::SIGINT);
    assert_eq!(ended.code, Some(1), "stderr: {}", ended.stderr);
    assert!(
        ended
            .stderr
            .contains("cutting the search and writing what was found"),
        "{}",
        ended.stderr
    );
    assert!(
        !ended.stderr.contains("no output written"),
        "{}",
        ended.stderr
    );
    // The text output (report.md printed) and report.md say it at the top.
    let mark = "**Search cut by Ctrl-C (or SIGTERM) after ";
    assert!(ended.stdout.contains(mark), "{}", ended.stdout);
    let md = scratch.read("out/report.md");
    assert!(md.contains(mark), "{md}");
    assert!(md.contains("## Distinct anomalies ("), "{md}");
    // report.json: the anomalies found, and how the search ended.
    let report: serde_json::Value = serde_json::from_str(&scratch.read("out/report.json")).unwrap();
    assert!(
        ["anomaly-predicted", "anomaly-validated"].contains(&report["verdict"].as_str().unwrap()),
        "{}",
        report["verdict"]
    );
    let anomalies = report["anomalies"].as_array().unwrap();
    assert!(!anomalies.is_empty());
    assert_eq!(report["search"]["end"], "interrupted");
    assert_eq!(report["search"]["cut"], true);
    let sentence = report["search"]["sentence"].as_str().unwrap();
    assert!(
        sentence.contains(&format!("after {} distinct anomal", anomalies.len())),
        "{sentence}"
    );
    // The drawing of the first anomaly says so too.
    for file in ["out/anomaly.dot", "out/anomaly.svg"] {
        assert!(
            scratch.read(file).contains("Search cut by Ctrl-C"),
            "{file}"
        );
    }
    // The histories of the first anomaly are there; nothing half-written.
    for file in ["predicted.json", "validating.json", "observed.json"] {
        assert!(scratch.join("out").join(file).is_file(), "{file}");
    }
    assert_no_temporaries(&scratch);
}

#[test]
fn sigterm_cuts_the_search_of_run_like_sigint() {
    let scratch = Scratch::new("cut-run-sigterm");
    let out = scratch.arg("out");
    let ended = signal_while_searching(
        &scratch,
        &["run", "tpcc", "--out", &out, "--json"],
        libc::SIGTERM,
    );
    assert_eq!(ended.code, Some(1), "stderr: {}", ended.stderr);
    // --json prints report.json.
    let printed: serde_json::Value = serde_json::from_str(&ended.stdout).unwrap();
    assert_eq!(printed["search"]["end"], "interrupted");
    let written: serde_json::Value =
        serde_json::from_str(&scratch.read("out/report.json")).unwrap();
    assert_eq!(written["search"], printed["search"]);
    assert!(!written["anomalies"].as_array().unwrap().is_empty());
    assert_no_temporaries(&scratch);
}

#[test]
fn sigint_cuts_predict_max_all_and_writes_the_predictions_found() {
    let scratch = Scratch::new("cut-predict");
    // TPC-C's observed run (one anomaly, no search for more).
    let run = isopredict(&["run", "tpcc", "--max", "1", "--out", &scratch.arg("run")]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let observed = scratch.arg("run/observed.json");
    let (out, dot) = (scratch.arg("predictions"), scratch.arg("first.dot"));
    let ended = signal_while_searching(
        &scratch,
        &[
            "predict",
            &observed,
            "--level",
            "causal",
            "--max",
            "all",
            "--timeout",
            "0",
            "--out",
            &out,
            "--dot",
            &dot,
        ],
        libc::SIGINT,
    );
    assert_eq!(ended.code, Some(1), "stderr: {}", ended.stderr);
    let found = ended.stdout.matches("PREDICTED:").count();
    assert!(found >= 1, "{}", ended.stdout);
    assert!(
        ended.stdout.contains(&format!(
            "search cut by Ctrl-C (or SIGTERM) after {found} prediction"
        )),
        "{}",
        ended.stdout
    );
    // One file per prediction printed, and the drawing of the first, marked.
    for i in 1..=found {
        assert!(
            scratch
                .join("predictions")
                .join(format!("prediction-{i}.json"))
                .is_file(),
            "prediction {i}"
        );
    }
    assert!(scratch.read("first.dot").contains("search cut by Ctrl-C"));
    assert_no_temporaries(&scratch);
}

#[test]
fn a_search_that_ends_by_itself_says_no_further_anomaly_exists() {
    let scratch = Scratch::new("search-exhausted");
    let out = scratch.arg("out");
    let run = isopredict(&["run", "smallbank", "--out", &out]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&scratch.read("out/report.json")).unwrap();
    assert_eq!(
        report["search"]["end"], "exhausted",
        "{:#}",
        report["search"]
    );
    assert_eq!(report["search"]["cut"], false);
    let md = stdout(&run);
    assert!(md.contains("no further distinct anomaly exists"), "{md}");
    assert!(!md.contains("**Search cut"), "{md}");
}

#[test]
fn a_run_without_anomaly_carries_its_certificate() {
    let scratch = Scratch::new("certificate");
    let out = scratch.arg("out");
    let run = isopredict(&["run", "voter", "--out", &out]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&scratch.read("out/report.json")).unwrap();
    assert_eq!(report["verdict"], "no-anomaly");
    let certificate = report["certificate"].as_str().expect("a certificate");
    assert!(
        [
            "no-changeable-read",
            "writers-ordered",
            "no-pivot",
            "search-exhausted"
        ]
        .contains(&certificate),
        "{certificate}"
    );
    let why = report["reason"].as_str().expect("its explanation");
    let md = scratch.read("out/report.md");
    assert!(
        md.contains(&format!("why: {why} (certificate: `{certificate}`)")),
        "{md}"
    );
    // The same kind `predict --json` gives on the observed run.
    let predicted = isopredict(&[
        "predict",
        &scratch.arg("out/observed.json"),
        "--level",
        "causal",
        "--engine",
        "paper",
        "--json",
    ]);
    let json = common::cli::json_output(&predicted, 0);
    assert_eq!(json["certificate"], certificate);
}
