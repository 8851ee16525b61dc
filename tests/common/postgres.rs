//! The PostgreSQL server of the tests that need one (`ISOPREDICT_POSTGRES_URL`;
//! scripts/pg-throwaway.sh starts a throwaway one, .ci/run does): without it a test says it
//! was skipped and why — except under CI (`CI` set), where a missing server fails the test.

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
/// scripts/server-test-venv), or `None` after noting the skip (a failure under CI).
pub fn python_with_psycopg(test: &str) -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let candidates = [
        std::env::var_os("ISOPREDICT_TEST_PYTHON").map(PathBuf::from),
        std::env::var_os("ISOPREDICT_SERVER_VENV").map(|v| PathBuf::from(v).join("bin/python")),
        home.map(|h| h.join(".cache/isopredict/server-venv/bin/python")),
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
