//! `isopredict test -- CMD` end to end with real clients nobody here wrote: psql (driven by
//! tests/data/app-test/app.sh: two connections, alice and bob, run one script at once) and
//! psycopg + pytest (the documented bank, docs/recording-example). The application is
//! recorded, predicted on, and re-run along each prediction by the server in replay mode.
//!
//! A missing client is a failure in CI (`CI` set) and a noted skip elsewhere
//! (target/tmp/skipped-tests.txt).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::cli::{isopredict_in, stderr, stdout, Scratch};
use common::postgres::{client_dir, path_with, python_with_psycopg};

fn app() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/app-test/app.sh")
}

/// `isopredict test --out out --level LEVEL -- app.sh SCRIPT [EXPECTED]` in the scratch
/// folder, with psql on PATH.
fn test_app(s: &Scratch, bin: &Path, level: &str, args: &[&str]) -> (Output, serde_json::Value) {
    let app = app().display().to_string();
    let mut all = vec![
        "test",
        "--json",
        "--out",
        "out",
        "--level",
        level,
        "--turn-wait",
        "20",
        "--",
        &app,
    ];
    all.extend(args);
    let o = isopredict_in(&s.join(""), &path_with(bin), &all);
    let report: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("report JSON: {e}\n{}\n{}", stdout(&o), stderr(&o)));
    (o, report)
}

#[test]
fn a_read_then_write_lost_update_is_predicted_and_validated_and_fails_the_test() {
    let Some(bin) = client_dir("app_test lost update", &["psql"]) else {
        return;
    };
    let s = Scratch::new("app-test-lost-update");
    let (o, r) = test_app(&s, &bin, "causal", &["deposit.sql", "120"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(r["observed_exit"], 0, "{r:#}");
    let a = &r["anomalies"][0];
    assert_eq!(a["name"], "lost update", "{r:#}");
    // One name per anomaly (issue 34 item 4): the row's names beside it, and its label in
    // report.md, as run's report prints them.
    assert_eq!(a["anomaly_names"]["elle"], "lost-update", "{r:#}");
    let md = std::fs::read_to_string(s.join("out/report.md")).unwrap();
    assert!(
        md.contains("## Anomaly 1: lost update (Adya G-single, Elle lost-update) — replay"),
        "{md}"
    );
    assert_eq!(a["replay"], "validated", "{r:#}");
    assert_eq!(a["divergences"].as_array().unwrap().len(), 0, "{r:#}");
    // Both deposits read the balance the setup wrote: the test sees 110 and fails.
    assert_eq!(a["test_exit"], 1, "{r:#}");
    assert_eq!(a["test_failed_under_prediction"], true, "{r:#}");
    assert!(
        r["summary"].as_str().unwrap().starts_with("The test FAILS"),
        "{r:#}"
    );
    let txns = a["transactions"].to_string();
    assert!(txns.contains("SELECT bal FROM acct WHERE id = 1"), "{txns}");
    assert!(
        stderr(&o).contains("lost update: balance 110"),
        "{}",
        stderr(&o)
    );
    // The validating history is the replay's: both deposits read the setup's balance.
    let v = std::fs::read(s.join("out/validating.json")).unwrap();
    let h = isopredict::formats::json::read(&v, "validating.json").unwrap();
    let mut names = h.statements().unwrap().session_names().to_vec();
    names.sort();
    assert_eq!(names, ["alice", "bob", "setup"]);
    for f in [
        "observed.json",
        "predicted.json",
        "anomaly.dot",
        "anomaly.svg",
        "report.md",
    ] {
        assert!(s.join("out").join(f).exists(), "{f}");
    }
}

#[test]
fn an_atomic_increment_predicts_nothing() {
    let Some(bin) = client_dir("app_test atomic increment", &["psql"]) else {
        return;
    };
    let s = Scratch::new("app-test-increment");
    let (o, r) = test_app(&s, &bin, "causal", &["increment.sql", "120"]);
    assert_eq!(o.status.code(), Some(0), "{r:#}\n{}", stderr(&o));
    assert_eq!(r["verdict"], "no-anomaly", "{r:#}");
    assert_eq!(r["anomalies"].as_array().unwrap().len(), 0);
}

#[test]
fn a_program_that_takes_another_branch_under_the_prediction_is_reported_diverged() {
    let Some(bin) = client_dir("app_test other branch", &["psql"]) else {
        return;
    };
    let s = Scratch::new("app-test-branch");
    // Withdraw 60 if the balance allows, else flag the account: recorded, the second
    // withdrawal sees 40 and flags; along the lost update it sees 100 and withdraws.
    let (o, r) = test_app(&s, &bin, "causal", &["withdraw.sql"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let a = &r["anomalies"][0];
    assert_eq!(a["name"], "lost update", "{r:#}");
    assert_eq!(a["replay"], "validated-diverged", "{r:#}");
    let d = a["divergences"].to_string();
    assert!(
        d.contains("the application took another path at")
            && d.contains("statement #2")
            && d.contains("declined = true"),
        "{d}"
    );
}

#[test]
fn the_documented_bank_test_fails_under_its_predicted_lost_update() {
    let Some(python) = python_with_psycopg("app_test psycopg bank") else {
        return;
    };
    let s = Scratch::new("app-test-bank");
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recording-example");
    let o = Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args([
            "test",
            "--json",
            "--level",
            "rc",
            "--max",
            "5",
            "--turn-wait",
            "20",
        ])
        .arg("--out")
        .arg(s.join("out"))
        .arg("--")
        .arg(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir"])
        .arg(&app)
        .arg(app.join("test_bank.py"))
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("report JSON: {e}\n{}\n{}", stdout(&o), stderr(&o)));
    assert_eq!(o.status.code(), Some(1), "{r:#}");
    let lost = r["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "lost update" && a["test_failed_under_prediction"] == true)
        .unwrap_or_else(|| panic!("no lost update failing the test: {r:#}"));
    assert_eq!(lost["replay"], "validated", "{r:#}");
    assert!(
        lost["transactions"]
            .to_string()
            .contains("UPDATE acct SET bal = $1 WHERE id = $2"),
        "{lost:#}"
    );
}

/// `test --setup CMD`: the fixture is loaded by a setup command, in the recording and again
/// before each replay; the application's connections come after it, and the lost update is
/// still predicted and validated. A failing setup command stops the test (exit 2).
#[test]
fn a_setup_command_loads_the_fixture_in_the_recording_and_every_replay() {
    let Some(bin) = client_dir("app_test --setup", &["psql"]) else {
        return;
    };
    let s = Scratch::new("app-test-setup");
    let path = path_with(&bin);
    let setup_sql = app().with_file_name("setup.sql");
    let load = format!("psql -q -X -v ON_ERROR_STOP=1 -f '{}'", setup_sql.display());
    let run = |setup: &str, out: &str| {
        Command::new(env!("CARGO_BIN_EXE_isopredict"))
            .args(["test", "--json", "--level", "causal", "--turn-wait", "20"])
            .arg("--out")
            .arg(s.join(out))
            .args(["--setup", setup, "--"])
            .arg(app())
            .args(["deposit.sql", "120"])
            .env("PATH", &path)
            .env("APP_NO_SETUP", "1")
            .output()
            .unwrap()
    };
    let o = run(&load, "out");
    let r: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("report JSON: {e}\n{}\n{}", stdout(&o), stderr(&o)));
    assert_eq!(o.status.code(), Some(1), "{r:#}\n{}", stderr(&o));
    let a = &r["anomalies"][0];
    assert_eq!(a["name"], "lost update", "{r:#}");
    assert_eq!(a["replay"], "validated", "{r:#}");
    assert_eq!(a["test_exit"], 1, "{r:#}");
    // The setup's connection is recorded and the application's come after it, in the observed
    // run and in the replay (which ran the setup command again).
    for file in ["observed.json", "validating.json"] {
        let bytes = std::fs::read(s.join("out").join(file)).unwrap();
        let h = isopredict::formats::json::read(&bytes, file).unwrap();
        let names = h.statements().unwrap().session_names().to_vec();
        let setup = names
            .iter()
            .position(|n| n == "setup")
            .expect("a setup session");
        let after: Vec<_> = h
            .sessions_after()
            .iter()
            .filter(|&&(earlier, _)| earlier as usize == setup)
            .collect();
        assert_eq!(after.len(), 2, "{file}: {names:?} {:?}", h.sessions_after());
    }

    let o = run("exit 7", "failed");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the setup command `exit 7` failed (exit 7)"),
        "{}",
        stderr(&o)
    );
}

/// `isopredict rank ARGS…` in the scratch folder, with psql on PATH.
fn rank(s: &Scratch, bin: &Path, args: &[&str]) -> Output {
    let mut all = vec!["rank"];
    all.extend(args);
    isopredict_in(&s.join(""), &path_with(bin), &all)
}

/// The rank grid of the application tests: Voter (one small run) beside three applications —
/// deposits that read, then write (a lost update), atomic increments, and a command that fails
/// when recorded (exit 40 + its seed).
fn app_grid(app: &Path) -> Vec<String> {
    let app = app.display();
    [
        "--workloads",
        "voter",
        "--sizes",
        "small",
        "--seeds",
        "1",
        "--explore",
        "0",
        "--levels",
        "causal,rc",
        "--turn-wait",
        "20",
        "--app",
        &format!("deposit='{app}' deposit.sql 120"),
        "--app",
        &format!("increment='{app}' increment-returning.sql 120"),
        "--app",
        "broken=exit $((ISOPREDICT_SEED + 40))",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The table rows of rank.md that start with `| NAME |` (or `| N | NAME |` in the risk table).
fn rows_of<'a>(md: &'a str, name: &str) -> Vec<&'a str> {
    md.lines()
        .filter(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            cells.len() > 2 && (cells[1] == name || cells[2] == name)
        })
        .collect()
}

/// Issue 33 item 4: `rank --app` records each application, predicts at the grid's levels,
/// validates by re-running it, and ranks it in the same tables as the workloads: the lost
/// update above the atomic increments, a command that fails when recorded reported as an error.
/// The same grid as a plan, run cell by cell and merged, ranks alike (the route of Ray).
#[test]
fn rank_ranks_applications_beside_the_workloads() {
    let Some(bin) = client_dir("app_test rank --app", &["psql"]) else {
        return;
    };
    let s = Scratch::new("app-test-rank");
    let grid = app_grid(&app());
    let grid: Vec<&str> = grid.iter().map(String::as_str).collect();
    let o = rank(&s, &bin, &[&["--json", "--out", "out"], &grid[..]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("rank.json: {e}\n{}\n{}", stdout(&o), stderr(&o)));
    let records = |program: &str| -> Vec<serde_json::Value> {
        r["predictions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["program"] == program)
            .cloned()
            .collect()
    };
    // The lost update is predicted and validated at both levels, and the application's test
    // fails under it (as an invariant broken for a workload).
    let deposit = records("deposit");
    assert_eq!(deposit.len(), 2, "{r:#}");
    for p in &deposit {
        assert_eq!(p["outcome"], "sat", "{p:#}");
        assert_eq!(p["run"], "seed 1", "{p:#}");
        assert_eq!(p["validation"]["validated"], true, "{p:#}");
        assert_eq!(p["validation"]["verdict"], "validated", "{p:#}");
        assert_eq!(
            p["validation"]["failed_invariants"],
            serde_json::json!(["test-failed (exit 1)"]),
            "{p:#}"
        );
        // Named by the deposit's statements (their shapes) and the column both write.
        let anomaly = p["anomalies"][0].as_str().unwrap();
        assert!(
            anomaly.contains(
                "`select bal from acct where id = ?; update acct set bal = ? + ? where id = ?`"
            ) && anomaly.contains(" on ")
                && anomaly.contains("acct.bal"),
            "{p:#}"
        );
    }
    // Atomic increments: nothing predicted, with a certificate.
    let increment = records("increment");
    assert_eq!(increment.len(), 2, "{r:#}");
    for p in &increment {
        assert_eq!(p["outcome"], "unsat", "{p:#}");
        assert!(p["certificate"].is_string(), "{p:#}");
        assert!(p["validation"].is_null(), "{p:#}");
    }
    // A command that fails when recorded is an error record, with the exit code its seed made.
    let broken = records("broken");
    assert_eq!(broken.len(), 2, "{r:#}");
    for p in &broken {
        assert_eq!(p["outcome"], "error", "{p:#}");
        let detail = p["detail"].as_str().unwrap();
        assert!(detail.contains("the command exited 41"), "{detail}");
    }
    let ranking: Vec<&str> = r["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["program"].as_str().unwrap())
        .collect();
    let at = |p: &str| ranking.iter().position(|q| *q == p).unwrap();
    assert!(at("deposit") < at("increment"), "{ranking:?}");
    assert!(r["ranking"][at("deposit")]["score"].as_f64().unwrap() > 0.0);
    assert!(r["ranking"][at("increment")]["score"].as_f64().unwrap() < 1e-9);
    // rank.md: the applications' rows have the workload's columns, table by table.
    let md = s.read("out/rank.md");
    for app in ["deposit", "increment", "broken"] {
        let (apps, voter) = (rows_of(&md, app), rows_of(&md, "voter"));
        assert!(!apps.is_empty(), "{app}: {md}");
        assert_eq!(apps.len(), voter.len(), "{app}: {md}");
        for (a, v) in apps.iter().zip(&voter) {
            assert_eq!(a.matches('|').count(), v.matches('|').count(), "{a}\n{v}");
        }
    }
    assert!(
        md.contains("- broken seed 1 causal approx-relaxed: recording: the command exited 41"),
        "{md}"
    );
    assert!(md.contains("applications deposit ("), "{md}");

    // The plan names each application's command on its cells; run cell by cell and merged,
    // it ranks as one machine did.
    let mut plan_args = grid.clone();
    plan_args.extend(["--plan", "plan.jsonl"]);
    let o = rank(&s, &bin, &plan_args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let plan = s.read("plan.jsonl");
    assert_eq!(plan.lines().count(), 2 + 3 * 2, "{plan}");
    assert!(
        plan.contains("\"kind\":\"app\",\"app\":\"deposit\",\"command\":"),
        "{plan}"
    );
    for n in 0..8 {
        let o = rank(
            &s,
            &bin,
            &[
                "--cell",
                &n.to_string(),
                "--plan",
                "plan.jsonl",
                "--out",
                "cells",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "cell {n}: {}", stderr(&o));
    }
    let o = rank(&s, &bin, &["--json", "--merge", "cells", "--out", "merged"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let merged: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let outcomes = |r: &serde_json::Value| -> Vec<(String, String, String, bool)> {
        r["predictions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["program"].as_str().unwrap().to_string(),
                    p["level"].as_str().unwrap().to_string(),
                    p["outcome"].as_str().unwrap().to_string(),
                    p["validation"]["validated"] == true,
                )
            })
            .collect()
    };
    assert_eq!(outcomes(&merged), outcomes(&r));
    assert_eq!(merged["grid"], r["grid"]);
}

/// A bad `--app` or `--app-setup` is bad usage (exit 2) saying what is wrong, before anything
/// runs.
#[test]
fn a_bad_app_spec_is_refused_with_its_reason() {
    let s = Scratch::new("app-test-rank-bad");
    for (args, says) in [
        (
            &["--app", "deposit"][..],
            "--app `deposit`: expected NAME='COMMAND'",
        ),
        (
            &["--app", "deposit=  "][..],
            "--app `deposit=  `: the command after `=` is empty",
        ),
        (&["--app", "=./run"][..], "the name before `=` is empty"),
        (&["--app", "a=x", "--app", "a=y"][..], "`a` is given twice"),
        (
            &["--app", "a=x", "--app-setup", "b=y"][..],
            "--app-setup `b=y`: no --app is named `b`",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_isopredict"))
            .arg("rank")
            .args(args)
            .args(["--out", "out"])
            .current_dir(s.join(""))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!s.join("out").exists(), "{args:?}");
    }
}
