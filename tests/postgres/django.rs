//! A Django project's own test suite (tests/data/django_app: Django 5.2 and psycopg 3 from
//! PyPI, in the venv scripts/django-test-venv makes or reuses) recorded with one command,
//! `isopredict record -- python manage.py test`: the test runner creates its test database,
//! migrates it (Django's contenttypes and auth apps and the project's own), runs TestCase
//! tests (a transaction per class, savepoints per test) and a TransactionTestCase (two
//! threads, a connection each, flushed with TRUNCATE after), and drops the database — all
//! through the recording server. The suite passes on PostgreSQL itself too.
//!
//! A missing python, pip or network (the venv cannot be made) fails the test under CI and is a
//! noted skip elsewhere.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli::{isopredict, stderr, stdout, Scratch};

use super::server::{read_history, record};

/// The Django project's folder.
fn app_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/django_app")
}

/// The venv's python (scripts/django-test-venv makes the venv or reuses it), or `None` after
/// noting the skip (a failure under CI).
fn python_with_django(test: &str) -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/django-test-venv");
    let made = Command::new("bash").arg(&script).output();
    match made {
        Ok(o) if o.status.success() => {
            let venv = String::from_utf8_lossy(&o.stdout).trim().to_string();
            Some(Path::new(&venv).join("bin/python"))
        }
        Ok(o) => {
            common::postgres::tool_missing(
                test,
                &format!(
                    "scripts/django-test-venv could not make the venv with Django and psycopg: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
            );
            None
        }
        Err(e) => {
            common::postgres::tool_missing(test, &format!("cannot run bash: {e}"));
            None
        }
    }
}

/// `python -B manage.py test bank --noinput -v 2` (no `__pycache__` written into the project).
fn manage_test(python: &Path) -> Vec<String> {
    let manage = app_dir().join("manage.py");
    [
        python.to_str().unwrap(),
        "-B",
        manage.to_str().unwrap(),
        "test",
        "bank",
        "--noinput",
        "-v",
        "2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// libpq's variables for a `postgres://user[:password]@host:port/database` URL.
fn libpq_variables(url: &str) -> Vec<(&'static str, String)> {
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .expect("a postgres:// URL");
    let (credentials, rest) = rest.split_once('@').expect("the URL names a user");
    let (user, password) = credentials.split_once(':').unwrap_or((credentials, ""));
    let (address, database) = rest.split_once('/').unwrap_or((rest, "postgres"));
    let (host, port) = address.split_once(':').unwrap_or((address, "5432"));
    let database = database.split('?').next().unwrap_or("postgres");
    vec![
        ("PGHOST", host.to_string()),
        ("PGPORT", port.to_string()),
        ("PGUSER", user.to_string()),
        ("PGPASSWORD", password.to_string()),
        ("PGDATABASE", database.to_string()),
    ]
}

/// Asserts Django's test runner ran the suite's four tests and they passed.
fn assert_suite_passed(what: &str, output: &std::process::Output) {
    let err = stderr(output);
    assert!(output.status.success(), "{what}: {}\n{err}", stdout(output));
    assert!(err.contains("Ran 5 tests"), "{what}: {err}");
    assert!(err.lines().any(|l| l == "OK"), "{what}: {err}");
    for test in [
        "test_two_deposits_both_count",
        "test_deposit_adds_to_the_balance_and_logs_it",
        "test_a_duplicate_key_rolls_back_to_the_savepoint",
        "test_views",
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with(test) && l.ends_with("ok")),
            "{what}: {test}: {err}"
        );
    }
}

#[test]
fn a_django_test_suite_records_through_serve_and_its_lost_update_is_predicted() {
    let test = "the Django project's test suite";
    let Some(python) = python_with_django(test) else {
        return;
    };
    let command = manage_test(&python);
    let command: Vec<&str> = command.iter().map(String::as_str).collect();
    // On PostgreSQL itself first, where a server is given: the suite is a real one.
    if let Some(url) = common::postgres::server(test) {
        let direct = Command::new(command[0])
            .args(&command[1..])
            .envs(libpq_variables(&url))
            .env("PGSSLMODE", "disable")
            .output()
            .expect("python runs");
        assert_suite_passed("on PostgreSQL", &direct);
    }
    let s = Scratch::new("django-app");
    let (o, observed) = record(&s, &command);
    assert_suite_passed("through isopredict record", &o);
    // The one statement that failed is the duplicate key the savepoint test provokes: nothing
    // the test runner, the migrations or the ORM sent was refused.
    let err = stderr(&o);
    assert!(
        err.contains("; 1 statements failed or were refused"),
        "{err}"
    );
    let h = read_history(&observed);
    let st = h.statements().unwrap();
    let texts: Vec<&str> = st.statements().iter().map(|s| s.sql.as_str()).collect();
    // The schema the runner made: its test database and the migrations' constraints.
    let schema = st.schema();
    assert!(
        schema
            .iter()
            .any(|t| t.starts_with("CREATE DATABASE \"test_")),
        "{schema:?}"
    );
    assert!(
        schema.iter().any(
            |t| t.starts_with("ALTER TABLE \"bank_transfer\" ADD CONSTRAINT")
                && t.ends_with(
                    "REFERENCES \"bank_account\" (\"id\") DEFERRABLE INITIALLY DEFERRED"
                )
        ),
        "{schema:?}"
    );
    // The migrations' bulk insert of permissions and the tellers' read-then-write are there.
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("INSERT INTO \"auth_permission\"") && t.contains("UNNEST(")),
        "{texts:?}"
    );
    let read = "SELECT \"bank_account\".\"id\", \"bank_account\".\"owner\", \
                \"bank_account\".\"balance\" FROM \"bank_account\" WHERE \"bank_account\".\"id\" = ";
    assert!(texts.iter().any(|t| t.starts_with(read)), "{texts:?}");
    // `.iterator()` reads through server-side cursors: in the test's transaction, and WITH
    // HOLD in autocommit.
    for held in [false, true] {
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("DECLARE \"_django_curs_")
                    && t.contains(" CURSOR WITH HOLD FOR ") == held),
            "{texts:?}"
        );
    }
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    // At read committed the two tellers' deposits can both read the balance before either
    // writes it: a lost update on the application's own table and column. It is one of four
    // predictions; the other three interleave connections that program order kept apart (a
    // teller's thread reading around the account its test inserted before starting it; the
    // flush's content types read around the migration's), which the server cannot see
    // (docs/recording.md, "Connection order"). Searching past the four takes about a minute.
    let predict = isopredict(&["predict", &obs, "--level", "rc", "--max", "4"]);
    assert_eq!(predict.status.code(), Some(1), "{}", stderr(&predict));
    let out = stdout(&predict);
    let lost = out.lines().any(|l| {
        l.starts_with("the anomaly is a lost update")
            && l.contains("both read bank_account.balance[id=")
            && l.contains("and both write it")
    });
    assert!(lost, "{out}");
}
