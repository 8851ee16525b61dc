//! The PostgreSQL server of the tests that need one (`ISOPREDICT_POSTGRES_URL`;
//! scripts/pg-throwaway.sh starts a throwaway one, .ci/run does): without it a test says it
//! was skipped and why — except under CI (`CI` set), where a missing server fails the test.
//! Also PostgreSQL's client programs (psql, pgbench, isolationtester) and a Python with
//! psycopg, found or skipped the same way.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// Says that a test is skipped and why, on the terminal: written to the process's standard
/// error directly, not through `eprintln!`, which the test harness captures and shows only for
/// failing tests (a skipped test passes, so its message would never be seen). The line is also
/// appended to `skipped-tests.txt` in Cargo's scratch folder for tests (`target/tmp`), which
/// .ci/run empties before the tests and counts after them.
pub fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {why}");
    let log = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(f, "{why}");
    }
}

/// A tool a test needs is missing: under CI (`CI` set) the test fails, since CI must have
/// every tool (.ci/run installs them); elsewhere the test says it was skipped and why.
pub fn tool_missing(test: &str, why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: {why}, but CI must have it (.ci/run installs it)"
    );
    skipped(&format!("{test}: {why}"));
}

/// The server's URL, or `None` after saying why the test is skipped (a failure under CI).
pub fn server(test: &str) -> Option<String> {
    match std::env::var("ISOPREDICT_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{test}: ISOPREDICT_POSTGRES_URL is not set, but CI must provide a PostgreSQL server (.ci/run starts one)"
            );
            skipped(&format!(
                "{test}: ISOPREDICT_POSTGRES_URL is not set; start a throwaway server with \
                 `eval \"$(scripts/pg-throwaway.sh start)\"` to run it"
            ));
            None
        }
    }
}

/// A Python with psycopg and pytest (`ISOPREDICT_TEST_PYTHON`, else the venv of
/// scripts/server-test-venv, else the checkout's `.venv-server`), or `None` after noting the
/// skip (a failure under CI).
pub fn python_with_psycopg(test: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let candidates = [
        std::env::var_os("ISOPREDICT_TEST_PYTHON").map(PathBuf::from),
        std::env::var_os("ISOPREDICT_SERVER_VENV").map(|v| PathBuf::from(v).join("bin/python")),
        home.map(|h| h.join(".cache/isopredict/server-venv/bin/python")),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-server/bin/python")),
    ];
    for p in candidates.into_iter().flatten() {
        let ok = std::process::Command::new(&p)
            .args(["-c", "import psycopg, pytest"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(p);
        }
    }
    tool_missing(
        test,
        "no Python with psycopg and pytest (scripts/server-test-venv; ISOPREDICT_TEST_PYTHON)",
    );
    None
}

/// The folders of the PostgreSQL installations (`/usr/lib/postgresql/NN`), newest last.
fn installations() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

/// The folder of PostgreSQL's client programs that holds every one of `programs` (psql,
/// pgbench): the newest installation's, else a folder on `PATH`; or `None` after noting the
/// skip (a failure under CI).
pub fn client_dir(test: &str, programs: &[&str]) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = installations().iter().map(|d| d.join("bin")).collect();
    let path = std::env::var_os("PATH").unwrap_or_default();
    dirs.extend(std::env::split_paths(&path));
    let found = dirs
        .into_iter()
        .rev()
        .find(|d| programs.iter().all(|p| d.join(p).exists()));
    if found.is_none() {
        tool_missing(
            test,
            &format!(
                "{} not installed (PostgreSQL's client programs)",
                programs.join(" and ")
            ),
        );
    }
    found
}

/// `PATH` with `dir` first (where an application finds the client programs of [`client_dir`]).
pub fn path_with(dir: &Path) -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    std::env::join_paths(paths).unwrap()
}

/// PostgreSQL's isolationtester of the newest installation, or `None` after noting the skip
/// (a failure under CI).
pub fn isolationtester(test: &str) -> Option<PathBuf> {
    let found = installations()
        .into_iter()
        .map(|d| d.join("lib/pgxs/src/test/isolation/isolationtester"))
        .rfind(|p| p.exists());
    if found.is_none() {
        tool_missing(
            test,
            "isolationtester is not installed (Debian: postgresql-client-NN)",
        );
    }
    found
}

/// Held while a reproducer spec runs: every spec keeps its tables in the one schema
/// `isopredict_repro`, which it drops and makes anew, so the tests of one binary run their
/// specs one at a time.
static ONE_SPEC_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `spec` (a reproducer spec) with isolationtester `tester` against the server at `url`;
/// a step waits at most 20 s for a lock (`PGISOLATIONTIMEOUT`). What it printed and its exit
/// status.
pub fn run_isolationtester(tester: &Path, url: &str, spec: &str) -> Output {
    let _one = ONE_SPEC_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    super::cli::output_with_stdin(
        Command::new(tester)
            .arg(url)
            .env("PGISOLATIONTIMEOUT", "20"),
        spec.as_bytes(),
    )
}
