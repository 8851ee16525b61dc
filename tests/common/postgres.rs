//! The PostgreSQL server of the tests that need one (`ISOPREDICT_POSTGRES_URL`;
//! scripts/pg-throwaway.sh starts a throwaway one, .ci/run does): without it a test says it
//! was skipped and why — except under CI (`CI` set), where a missing server fails the test.

/// Says that a test is skipped and why, on the terminal: written to the process's standard
/// error directly, not through `eprintln!`, which the test harness captures and shows only for
/// failing tests (a skipped test passes, so its message would never be seen).
pub fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {why}");
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
