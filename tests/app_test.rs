//! `isopredict test -- CMD` end to end with real clients nobody here wrote: psql (driven by
//! tests/data/app-test/app.sh: two connections, alice and bob, run one script at once) and
//! psycopg + pytest (the documented bank, docs/recording-example). The application is
//! recorded, predicted on, and re-run along each prediction by the server in replay mode.
//!
//! A missing client is a failure in CI (`CI` set) and a noted skip elsewhere
//! (target/tmp/skipped-tests.txt).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::cli::{stderr, stdout, Scratch};
use common::postgres::{python_with_psycopg, tool_missing};

/// The folder holding psql, or `None` after noting the skip (a failure under CI).
fn psql_dir(test: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    dirs.sort();
    let path = std::env::var_os("PATH").unwrap_or_default();
    dirs.extend(std::env::split_paths(&path));
    match dirs.into_iter().rev().find(|d| d.join("psql").exists()) {
        Some(d) => Some(d),
        None => {
            tool_missing(test, "psql is not installed (PostgreSQL's client programs)");
            None
        }
    }
}

fn app() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/app-test/app.sh")
}

/// `isopredict test --out OUT --level LEVEL -- app.sh SCRIPT [EXPECTED]` with psql on PATH.
fn test_app(s: &Scratch, bin: &Path, level: &str, args: &[&str]) -> (Output, serde_json::Value) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let out = s.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(["test", "--json", "--out"])
        .arg(&out)
        .args(["--level", level, "--turn-wait", "20", "--"])
        .arg(app())
        .args(args)
        .env("PATH", std::env::join_paths(paths).unwrap())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("report JSON: {e}\n{}\n{}", stdout(&o), stderr(&o)));
    (o, report)
}

#[test]
fn a_read_then_write_lost_update_is_predicted_and_validated_and_fails_the_test() {
    let Some(bin) = psql_dir("app_test lost update") else {
        return;
    };
    let s = Scratch::new("app-test-lost-update");
    let (o, r) = test_app(&s, &bin, "causal", &["deposit.sql", "120"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(r["observed_exit"], 0, "{r:#}");
    let a = &r["anomalies"][0];
    assert_eq!(a["name"], "lost update", "{r:#}");
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
    let Some(bin) = psql_dir("app_test atomic increment") else {
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
    let Some(bin) = psql_dir("app_test other branch") else {
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
    let Some(bin) = psql_dir("app_test --setup") else {
        return;
    };
    let s = Scratch::new("app-test-setup");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.clone()];
    paths.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(paths).unwrap();
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
