//! The recording server end to end, with real clients nobody here wrote: psql and pgbench
//! (PostgreSQL's), started through `isopredict record -- CMD`. Each recording is read back,
//! compared with what the client printed, checked serializable, and predicted on.
//!
//! A missing client is a failure in CI (`CI` set) and a printed, counted skip elsewhere.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli::{isopredict, stderr, stdout, Scratch};
use isopredict::history::{History, OpKind};

/// PostgreSQL's client program `name` (psql, pgbench), or `None` after noting the skip (a
/// failure under CI).
pub(crate) fn pg_bin(name: &str) -> Option<PathBuf> {
    common::postgres::client_dir(&format!("server tests: {name}"), &[name]).map(|d| d.join(name))
}

pub(crate) fn read_history(path: &Path) -> History {
    let bytes = std::fs::read(path).expect("observed.json was written");
    isopredict::formats::json::read(&bytes, &path.display().to_string()).expect("it reads back")
}

/// The (reader's statement text, key, writer's statement text) of every read.
pub(crate) fn reads(h: &History) -> Vec<(String, String, Option<String>)> {
    let st = h.statements().expect("a recording carries its statements");
    let text = |o: u32| st.of_op(o).map(|s| s.sql.clone()).unwrap_or_default();
    h.ops()
        .iter()
        .enumerate()
        .filter(|(_, op)| op.kind == OpKind::Read)
        .map(|(o, op)| {
            let o = o as u32;
            let writer = h
                .read_from(o)
                .filter(|&w| !h.is_implicit_initial_write(w))
                .map(text);
            (text(o), h.key_name(op.key).to_string(), writer)
        })
        .collect()
}

pub(crate) fn record(scratch: &Scratch, command: &[&str]) -> (std::process::Output, PathBuf) {
    let out = scratch.arg("rec");
    let mut args = vec!["record", "--out", out.as_str(), "--"];
    args.extend_from_slice(command);
    let o = isopredict(&args);
    (o, scratch.join("rec").join("observed.json"))
}

/// `record --setup SETUP… -- COMMAND`.
fn record_with_setup(
    scratch: &Scratch,
    setups: &[&str],
    command: &[&str],
) -> (std::process::Output, PathBuf) {
    let out = scratch.arg("rec");
    let mut args = vec!["record", "--out", out.as_str()];
    for setup in setups {
        args.extend_from_slice(&["--setup", setup]);
    }
    args.push("--");
    args.extend_from_slice(command);
    let o = isopredict(&args);
    (o, scratch.join("rec").join("observed.json"))
}

/// `predict` at causal and at read committed finds an anomaly (exit 1) on the balance of
/// account 1 (`acct.bal[id=1]`): the lost update of a client-side read-then-write.
fn assert_lost_update_predicted(observed: &Path) {
    let obs = observed.display().to_string();
    for level in ["causal", "rc"] {
        let p = isopredict(&["predict", &obs, "--level", level]);
        assert_eq!(
            p.status.code(),
            Some(1),
            "{level}: {}{}",
            stdout(&p),
            stderr(&p)
        );
        assert!(
            stdout(&p).contains("acct.bal[id=1]"),
            "{level}: {}",
            stdout(&p)
        );
    }
}

pub(crate) fn write(scratch: &Scratch, name: &str, text: &str) -> String {
    std::fs::write(scratch.join(name), text).unwrap();
    scratch.arg(name)
}

const BANK: &str = "
CREATE TABLE acct (id integer PRIMARY KEY, owner text NOT NULL, bal integer NOT NULL DEFAULT 0);
INSERT INTO acct VALUES (1, 'alice', 100), (2, 'bob', 50);
BEGIN;
UPDATE acct SET bal = bal - 30 WHERE id = 1;
UPDATE acct SET bal = bal + 30 WHERE id = 2;
COMMIT;
SELECT id, owner, bal FROM acct WHERE id IN (1, 2) ORDER BY id;
SELECT count(*) AS n, sum(bal) AS total FROM acct WHERE bal BETWEEN 0 AND 1000;
";

#[test]
fn psql_script_is_recorded_with_its_writers_and_statements() {
    let Some(psql) = pg_bin("psql") else { return };
    let s = Scratch::new("psql-bank");
    let script = write(&s, "bank.sql", BANK);
    let (o, observed) = record(
        &s,
        &[
            psql.to_str().unwrap(),
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-f",
            &script,
        ],
    );
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    // What psql printed: the transfer happened, and the aggregate saw both rows.
    assert!(
        stdout(&o).contains("1|alice|70\n2|bob|80\n2|150"),
        "{}",
        stdout(&o)
    );
    let h = read_history(&observed);
    let r = reads(&h);
    // The SELECT read each balance from the UPDATE that wrote it, in the application's names.
    for (id, update) in [(1, "bal - 30 WHERE id = 1"), (2, "bal + 30 WHERE id = 2")] {
        let key = format!("acct.bal[id={id}]");
        assert!(
            r.iter().any(
                |(reader, k, writer)| reader.starts_with("SELECT id, owner, bal")
                    && *k == key
                    && writer.as_deref().is_some_and(|w| w.ends_with(update))
            ),
            "{key} read from the UPDATE: {r:#?}"
        );
    }
    // The UPDATE's own read of the balance came from the INSERT.
    assert!(r.iter().any(
        |(reader, k, writer)| reader.ends_with("bal - 30 WHERE id = 1")
            && k == "acct.bal[id=1]"
            && writer
                .as_deref()
                .is_some_and(|w| w.starts_with("INSERT INTO acct"))
    ));
    // A round trip through JSON keeps the statements.
    let again = s.join("again.json");
    let mut bytes = Vec::new();
    isopredict::formats::json::write(&h, &mut bytes).unwrap();
    std::fs::write(&again, &bytes).unwrap();
    assert_eq!(read_history(&again).statements(), h.statements());
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    let predict = isopredict(&["predict", &obs, "--level", "causal"]);
    assert!(
        matches!(predict.status.code(), Some(0 | 1)),
        "{}{}",
        stdout(&predict),
        stderr(&predict)
    );
}

#[test]
fn a_client_side_read_then_write_is_predicted_to_lose_an_update() {
    let (Some(psql), Some(pgbench)) = (pg_bin("psql"), pg_bin("pgbench")) else {
        return;
    };
    let s = Scratch::new("pgbench-lost-update");
    let setup = write(
        &s,
        "setup.sql",
        "CREATE TABLE acct (id integer PRIMARY KEY, bal integer NOT NULL);\n\
         INSERT INTO acct VALUES (1, 100);\n",
    );
    // Each deposit reads the balance into the client (\gset) and writes back a value it
    // computed. pgbench's two clients hold their connections open together, so on a weak
    // store one deposit can overwrite the other.
    let deposit = write(
        &s,
        "deposit.sql",
        "BEGIN;\nSELECT bal AS b FROM acct WHERE id = 1 \\gset\n\
         UPDATE acct SET bal = :b + 10 WHERE id = 1;\nEND;\n",
    );
    // The table is loaded by a setup command, so every prediction keeps it before the
    // deposits (loaded in the main command, a prediction could read around it instead).
    let load = format!("{} -X -q -v ON_ERROR_STOP=1 -f {setup}", psql.display());
    let cmd = format!("{} -n -c 2 -j 1 -t 1 -f {deposit}", pgbench.display());
    let (o, observed) = record_with_setup(&s, &[&load], &["sh", "-c", &cmd]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    // pgbench -M simple inlines what the client computed: the second deposit read the first's.
    let h = read_history(&observed);
    let sql: Vec<&str> = h
        .statements()
        .unwrap()
        .statements()
        .iter()
        .map(|s| s.sql.as_str())
        .collect();
    assert!(
        sql.contains(&"UPDATE acct SET bal = 100 + 10 WHERE id = 1"),
        "{sql:?}"
    );
    assert!(
        sql.contains(&"UPDATE acct SET bal = 110 + 10 WHERE id = 1"),
        "{sql:?}"
    );
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    assert_lost_update_predicted(&observed);
}

const TWO_ACCOUNTS: &str = "CREATE TABLE acct (id integer PRIMARY KEY, bal integer NOT NULL);\n\
     INSERT INTO acct VALUES (1, 100), (2, 50);\n";

#[test]
fn two_background_clients_that_happened_not_to_overlap_are_not_ordered() {
    let Some(psql) = pg_bin("psql") else { return };
    let s = Scratch::new("background-clients");
    let setup = write(&s, "setup.sql", TWO_ACCOUNTS);
    let deposit = write(
        &s,
        "deposit.sql",
        "BEGIN;\nSELECT bal AS b FROM acct WHERE id = 1 \\gset\n\
         UPDATE acct SET bal = :b + 10 WHERE id = 1;\nCOMMIT;\n",
    );
    let psql = psql.display();
    // Two clients started in the background; the `wait` between them makes their connections
    // never overlap in this run, but nothing in the program orders them.
    let cmd = format!(
        "{psql} -X -q -v ON_ERROR_STOP=1 -f {deposit} & wait; \
         {psql} -X -q -v ON_ERROR_STOP=1 -f {deposit} & wait"
    );
    let (o, observed) = record_with_setup(
        &s,
        &[&format!("{psql} -X -q -v ON_ERROR_STOP=1 -f {setup}")],
        &["sh", "-c", &cmd],
    );
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let h = read_history(&observed);
    // The setup's session is ordered before both clients; the clients are not ordered.
    assert_eq!(h.sessions_after(), [(0, 1), (0, 2)]);
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    assert_lost_update_predicted(&observed);
}

/// A fixture that loads two rows, then one transaction that reads them: at read committed the
/// transaction could miss the fixture's row 2 and see its row 1 — unless the fixture is known
/// to come first (`--setup`, or an `application_name` of `setup:…`).
#[test]
fn a_setup_fixture_is_never_read_around() {
    let Some(psql) = pg_bin("psql") else { return };
    let s = Scratch::new("setup-fixture");
    let setup = write(&s, "setup.sql", TWO_ACCOUNTS);
    let read = write(
        &s,
        "read.sql",
        "BEGIN;\nSELECT bal FROM acct WHERE id = 2;\nSELECT bal FROM acct WHERE id = 1;\nCOMMIT;\n",
    );
    let psql = psql.display().to_string();
    let load = format!("{psql} -X -q -v ON_ERROR_STOP=1 -f {setup}");
    let test = format!("{psql} -X -q -v ON_ERROR_STOP=1 -f {read}");
    let predict_rc = |observed: &Path| {
        let obs = observed.display().to_string();
        let p = isopredict(&["predict", &obs, "--level", "rc"]);
        (p.status.code(), stdout(&p))
    };
    // Timing alone orders nothing: the fixture ran first, but as part of the command.
    let (o, observed) = record(&s, &["sh", "-c", &format!("{load} && {test}")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(read_history(&observed).sessions_after().is_empty());
    let (code, out) = predict_rc(&observed);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("reads acct[id=2] from initial state"), "{out}");
    std::fs::remove_dir_all(s.join("rec")).unwrap();
    // `record --setup`: the fixture comes first in every prediction.
    let (o, observed) = record_with_setup(&s, &[&load], &["sh", "-c", &test]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = read_history(&observed);
    assert_eq!(h.sessions_after(), [(0, 1)]);
    assert_eq!(h.statements().unwrap().session_names()[0], "setup");
    let (code, out) = predict_rc(&observed);
    assert_eq!(code, Some(0), "{out}");
    std::fs::remove_dir_all(s.join("rec")).unwrap();
    // The application_name route (serve, in-process fixtures): `setup:NAME`.
    let cmd = format!("PGAPPNAME=setup:fixture {load} && {test}");
    let (o, observed) = record(&s, &["sh", "-c", &cmd]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = read_history(&observed);
    assert_eq!(h.sessions_after(), [(0, 1)]);
    assert_eq!(h.statements().unwrap().session_names()[0], "setup:fixture");
    let (code, out) = predict_rc(&observed);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn a_failing_setup_command_stops_the_run() {
    let s = Scratch::new("setup-fails");
    let marker = s.join("ran");
    let (o, observed) = record_with_setup(
        &s,
        &["exit 3"],
        &["sh", "-c", &format!("touch {}", marker.display())],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!marker.exists(), "the command ran after a failed setup");
    assert!(observed.exists());
}

#[test]
fn errors_carry_their_sqlstates_and_failed_transactions_are_recorded_aborted() {
    let Some(psql) = pg_bin("psql") else { return };
    let s = Scratch::new("psql-errors");
    let script = write(
        &s,
        "errors.sql",
        "\\set VERBOSITY verbose\n\
         CREATE TABLE t (id integer PRIMARY KEY, v integer);\n\
         INSERT INTO t VALUES (1, 1);\n\
         SELECT * FROM missing;\n\
         SELEC 1;\n\
         SELECT nope FROM t;\n\
         INSERT INTO t VALUES (1, 2);\n\
         CREATE TABLE j (x json);\n\
         BEGIN;\n\
         UPDATE t SET v = 5 WHERE id = 1;\n\
         INSERT INTO t VALUES (1, 3);\n\
         SELECT v FROM t;\n\
         ROLLBACK;\n\
         SELECT v FROM t WHERE id = 1;\n",
    );
    let (o, observed) = record(
        &s,
        &[psql.to_str().unwrap(), "-X", "-A", "-t", "-f", &script],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    for code in ["42P01", "42601", "42703", "23505", "0A000", "25P02"] {
        assert!(err.contains(&format!("ERROR:  {code}")), "{code} in {err}");
    }
    assert!(err.contains("docs/recording.md#supported-sql"), "{err}");
    // The rolled-back UPDATE was never seen: the last SELECT prints the inserted value.
    assert!(stdout(&o).trim_end().ends_with('1'), "{}", stdout(&o));
    let h = read_history(&observed);
    let aborted: Vec<_> = h.txns().iter().filter(|t| !t.is_committed()).collect();
    assert!(
        aborted.iter().any(|t| t
            .ops()
            .any(|o| h.op(o).kind == OpKind::Write && h.key_name(h.op(o).key) == "t.v[id=1]")),
        "the failed block with its write is recorded aborted"
    );
}

#[test]
fn pgbench_prepared_four_clients_record_a_serializable_history() {
    let (Some(psql), Some(pgbench)) = (pg_bin("psql"), pg_bin("pgbench")) else {
        return;
    };
    let s = Scratch::new("pgbench-prepared");
    let setup = write(
        &s,
        "setup.sql",
        "CREATE TABLE kv (k integer PRIMARY KEY, v integer NOT NULL);\n\
         INSERT INTO kv VALUES (1, 0), (2, 0), (3, 0), (4, 0), (5, 0);\n",
    );
    let script = write(
        &s,
        "bump.sql",
        "\\set k random(1, 5)\n\\set d random(1, 9)\nBEGIN;\n\
         SELECT v FROM kv WHERE k = :k;\n\
         UPDATE kv SET v = v + :d WHERE k = :k;\nEND;\n",
    );
    for mode in ["simple", "prepared"] {
        let cmd = format!(
            "{} -X -q -v ON_ERROR_STOP=1 -f {setup} && {} -n -M {mode} -c 4 -j 1 -t 25 \
             --random-seed=7 -f {script} && {} -X -A -t -c 'SELECT sum(v) FROM kv'",
            psql.display(),
            pgbench.display(),
            psql.display()
        );
        let (o, observed) = record(&s, &["sh", "-c", &cmd]);
        assert!(o.status.success(), "{mode}: {}\n{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("number of transactions actually processed: 100/100"));
        let h = read_history(&observed);
        // Setup, four clients, the final query.
        assert_eq!(h.sessions().len(), 6, "{mode}");
        // The INSERT, 100 pgbench transactions, the final SELECT (CREATE TABLE is not one).
        let committed = h.txns().iter().filter(|t| t.is_committed()).count() - 1;
        assert_eq!(committed, 1 + 100 + 1, "{mode}");
        let st = h.statements().unwrap();
        if mode == "prepared" {
            assert!(st
                .statements()
                .iter()
                .any(|s| s.sql.contains("$1") && s.params.len() == 2));
        }
        let obs = observed.display().to_string();
        let check = isopredict(&["check", &obs, "--level", "ser"]);
        assert_eq!(check.status.code(), Some(0), "{mode}: {}", stdout(&check));
        std::fs::remove_dir_all(s.join("rec")).unwrap();
    }
}

/// The same pgbench run (one client, one seed) recorded through the simple protocol (values
/// inlined in each text: statements parsed through the server's parse cache, one parse per
/// shape) and through prepared statements (values bound as parameters): the same rows left,
/// the same history — sessions, transactions, every read and write with its key and writer,
/// the locked reads — and the same statements, each simple text being the prepared text with
/// its parameters written in.
#[test]
fn pgbench_simple_and_prepared_record_the_same_history() {
    let (Some(psql), Some(pgbench)) = (pg_bin("psql"), pg_bin("pgbench")) else {
        return;
    };
    let s = Scratch::new("pgbench-simple-prepared");
    let setup = write(
        &s,
        "setup.sql",
        "CREATE TABLE kv (k integer PRIMARY KEY, v integer NOT NULL, note text);\n\
         CREATE TABLE log (n serial PRIMARY KEY, k integer NOT NULL, d integer NOT NULL);\n\
         INSERT INTO kv VALUES (1, 0, 'a'), (2, 0, 'b'), (3, 0, 'c'), (4, 0, 'd');\n",
    );
    let script = write(
        &s,
        "bump.sql",
        "\\set k random(1, 4)\n\\set d random(1, 12)\nBEGIN;\n\
         SELECT v, note FROM kv WHERE k = :k;\n\
         UPDATE kv SET v = v + :d, note = 'bumped by ' || :d WHERE k = :k AND v >= 0;\n\
         INSERT INTO log (k, d) VALUES (:k, :d);\n\
         SELECT count(*), sum(d) FROM log WHERE k = :k AND d BETWEEN 1 AND 12;\nEND;\n",
    );
    let (mut recorded, mut final_rows) = (Vec::new(), Vec::new());
    for mode in ["simple", "prepared"] {
        let setup_cmd = format!("{} -X -q -v ON_ERROR_STOP=1 -f {setup}", psql.display());
        // The run, then the rows it left (the values each mode computed).
        let cmd = format!(
            "{} -n -M {mode} -c 1 -t 60 --random-seed=11 -f {script} && \
             {} -X -A -t -c 'SELECT k, v, note FROM kv ORDER BY k'",
            pgbench.display(),
            psql.display()
        );
        let (o, observed) = record_with_setup(&s, &[&setup_cmd], &["sh", "-c", &cmd]);
        assert!(o.status.success(), "{mode}: {}\n{}", stdout(&o), stderr(&o));
        let rows: Vec<String> = stdout(&o)
            .lines()
            .filter(|l| l.contains('|'))
            .map(String::from)
            .collect();
        assert_eq!(rows.len(), 4, "{mode}: {}", stdout(&o));
        final_rows.push(rows);
        recorded.push(read_history(&observed));
        std::fs::remove_dir_all(s.join("rec")).unwrap();
    }
    assert_eq!(final_rows[0], final_rows[1]);
    let (simple, prepared) = (&recorded[0], &recorded[1]);
    assert_eq!(simple.same_content(prepared), Ok(()));
    assert!(simple.ops().len() > 60 * 5, "{} events", simple.ops().len());
    let (ss, ps) = (simple.statements().unwrap(), prepared.statements().unwrap());
    assert_eq!(ss.statements().len(), ps.statements().len());
    for (a, b) in ss.statements().iter().zip(ps.statements()) {
        let mut written = b.sql.clone();
        for (i, p) in b.params.iter().enumerate().rev() {
            let value = p.clone().unwrap_or_else(|| "NULL".into());
            written = written.replace(&format!("${}", i + 1), &value);
        }
        assert_eq!(a.sql, written, "simple and prepared statement {}", a.index);
        assert!(a.params.is_empty(), "{a:?}");
        assert_eq!((a.session, a.index), (b.session, b.index));
    }
    // The statement behind every operation is the same one.
    for o in 0..simple.ops().len() as u32 {
        let of = |h: &History| h.statements().unwrap().of_op(o).map(|s| s.index);
        assert_eq!(of(simple), of(prepared), "operation {o}");
    }
}

/// `pgbench -i` loads its tables with `COPY … FROM STDIN` and keys them afterwards with
/// `ALTER TABLE … ADD PRIMARY KEY`: recorded as the setup, then pgbench's own tpcb-like run on
/// them reads the loaded balances from the COPY that wrote them, under the keys' names.
#[test]
fn pgbench_initialises_through_copy_and_its_run_reads_the_copied_rows() {
    let Some(pgbench) = pg_bin("pgbench") else {
        return;
    };
    let s = Scratch::new("pgbench-init");
    let pgbench = pgbench.display().to_string();
    let init = format!("{pgbench} -i -s 1");
    let (o, observed) = record_with_setup(
        &s,
        &[&init],
        &[
            &pgbench,
            "-c",
            "2",
            "-j",
            "1",
            "-t",
            "20",
            "--random-seed=5",
        ],
    );
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("number of transactions actually processed: 40/40"),
        "{}",
        stdout(&o)
    );
    let h = read_history(&observed);
    let copied: Vec<_> = reads(&h)
        .into_iter()
        .filter(|(_, key, writer)| {
            key.starts_with("pgbench_accounts.abalance[aid=")
                && writer
                    .as_deref()
                    .is_some_and(|w| w.starts_with("copy pgbench_accounts from stdin"))
        })
        .collect();
    // Each of the 40 transactions updates one account's balance it reads first (locked);
    // an account updated twice is read from the earlier update the second time.
    assert!(copied.len() >= 30, "{copied:?}");
    assert!(copied
        .iter()
        .all(|(reader, _, _)| reader.starts_with("UPDATE pgbench_accounts")));
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

/// psql with savepoints as an ORM's test wrapper sends them: the block recovers from a
/// duplicate key at a savepoint, a rolled-back deposit is neither seen afterwards nor
/// recorded, and the block commits the rest.
#[test]
fn a_rollback_to_a_savepoint_keeps_only_what_remains() {
    let Some(psql) = pg_bin("psql") else { return };
    let s = Scratch::new("psql-savepoint");
    let script = write(
        &s,
        "savepoints.sql",
        "CREATE TABLE acct (id integer PRIMARY KEY, bal integer NOT NULL);\n\
         INSERT INTO acct VALUES (1, 100);\n\
         BEGIN;\n\
         UPDATE acct SET bal = bal + 10 WHERE id = 1;\n\
         SAVEPOINT s;\n\
         INSERT INTO acct VALUES (1, 0);\n\
         ROLLBACK TO SAVEPOINT s;\n\
         SAVEPOINT t;\n\
         UPDATE acct SET bal = bal + 1000 WHERE id = 1;\n\
         ROLLBACK TO t;\n\
         INSERT INTO acct VALUES (2, 5);\n\
         COMMIT;\n\
         SELECT id, bal FROM acct ORDER BY id;\n\
         \\dt\n",
    );
    let (o, observed) = record(
        &s,
        &[psql.to_str().unwrap(), "-X", "-A", "-t", "-f", &script],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("duplicate key"), "{}", stderr(&o));
    assert!(stdout(&o).contains("1|110\n2|5"), "{}", stdout(&o));
    // psql's \dt lists the tables serve has.
    assert!(
        stdout(&o).contains("public|acct|table|postgres"),
        "{}",
        stdout(&o)
    );
    let h = read_history(&observed);
    assert!(h.txns().iter().all(|t| t.is_committed()));
    let st = h.statements().unwrap();
    let writes: Vec<String> = h
        .ops()
        .iter()
        .enumerate()
        .filter(|(_, op)| op.kind == OpKind::Write)
        .map(|(o, op)| {
            let sql = st.of_op(o as u32).map_or("", |s| s.sql.as_str());
            format!("{} by {sql}", h.key_name(op.key))
        })
        .collect();
    assert!(
        !writes
            .iter()
            .any(|w| w.contains("1000") || w.contains("(1, 0)")),
        "{writes:?}"
    );
    assert!(writes
        .iter()
        .any(|w| w == "acct.bal[id=1] by UPDATE acct SET bal = bal + 10 WHERE id = 1"));
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

#[test]
fn the_documented_psycopg_app_records_and_its_lost_update_is_predicted() {
    let Some(python) = common::postgres::python_with_psycopg("the documented psycopg app") else {
        return;
    };
    let s = Scratch::new("psycopg-bank");
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recording-example");
    let (o, observed) = record(
        &s,
        &[
            python.to_str().unwrap(),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            app.to_str().unwrap(),
            app.join("test_bank.py").to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("1 passed"), "{}", stdout(&o));
    let h = read_history(&observed);
    let st = h.statements().unwrap();
    assert_eq!(
        st.session_names(),
        ["setup:fixture", "teller-1", "teller-2"]
    );
    // The fixture's connection (application_name `setup:…`) orders the tellers' after it.
    assert_eq!(h.sessions_after(), [(0, 1), (0, 2)]);
    // The second deposit read the balance the first one wrote, parameters bound.
    let r = reads(&h);
    assert!(r.iter().any(
        |(reader, key, writer)| reader == "SELECT bal FROM acct WHERE id = $1"
            && key == "acct.bal[id=1]"
            && writer.as_deref() == Some("UPDATE acct SET bal = $1 WHERE id = $2")
    ));
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    assert_lost_update_predicted(&observed);
}

/// `isopredict serve --port 0 --out DIR ARGS…` as a child, and its first stderr line (the
/// "listening on …" line, which it prints once it accepts connections).
pub(crate) struct ServeChild {
    child: std::process::Child,
    err: std::io::BufReader<std::process::ChildStderr>,
    pub(crate) listening: String,
}

impl ServeChild {
    pub(crate) fn start(out: &str, args: &[&str]) -> ServeChild {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_isopredict"))
            .args(["serve", "--port", "0", "--out", out])
            .args(args)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut listening = String::new();
        err.read_line(&mut listening).unwrap();
        assert!(
            listening.contains("listening on"),
            "no listening line: {listening}"
        );
        ServeChild {
            child,
            err,
            listening: listening.trim().to_string(),
        }
    }

    /// Sends SIGTERM and waits: the rest of its stderr, after asserting it exited 0.
    pub(crate) fn terminate(mut self) -> String {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.err, &mut rest).unwrap();
        assert!(status.success(), "{rest}");
        rest
    }
}

/// psql's two statements that make and fill `t`, through `-h HOST -p PORT`.
pub(crate) fn psql_make_t(psql: &Path, host: &str, port: &str) {
    let o = Command::new(psql)
        .args(["-X", "-h", host, "-p", port, "-U", "postgres"])
        .args(["-c", "CREATE TABLE t (id integer PRIMARY KEY, v text)"])
        .args(["-c", "INSERT INTO t VALUES (1, 'one')"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn serve_writes_the_recording_on_sigterm() {
    let Some(psql) = pg_bin("psql") else { return };
    let s = Scratch::new("serve-sigterm");
    let serving = ServeChild::start(&s.arg("out"), &[]);
    let port = serving.listening.rsplit(':').next().unwrap().to_string();
    psql_make_t(&psql, "127.0.0.1", &port);
    let rest = serving.terminate();
    assert!(rest.contains("1 committed"), "{rest}");
    let h = read_history(&s.join("out").join("observed.json"));
    assert!(h.key_names().iter().any(|k| k == "t.v[id=1]"));
}

#[test]
fn malformed_messages_and_many_connections_leave_the_server_serving() {
    let Some(psql) = pg_bin("psql") else { return };
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    let s = Scratch::new("serve-robust");
    let mut child = Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(["serve", "--port", "0", "--out", &s.arg("out")])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line.trim().rsplit(' ').next().unwrap().to_string();
    let port = addr.rsplit(':').next().unwrap().to_string();
    // Garbage, a startup packet announcing a huge length, a truncated startup, and a query
    // message before any startup; each on its own connection, some left open.
    let mut open = Vec::new();
    for bytes in [
        &b"\x00\x01\x02garbage that is no protocol at all"[..],
        &[0x7f, 0xff, 0xff, 0xff, 0, 3, 0, 0][..],
        &[0, 0, 0, 40, 0, 3, 0, 0, b'u', b's'][..],
        &b"Q\x00\x00\x00\x0dSELECT 1\x00"[..],
    ] {
        let mut c = TcpStream::connect(&addr).unwrap();
        let _ = c.write_all(bytes);
        open.push(c);
    }
    // Many idle connections at once (bounded, loopback only).
    for _ in 0..300 {
        open.push(TcpStream::connect(&addr).unwrap());
    }
    // A client that sends a whole query slowly, byte by byte, in a second thread.
    let slow_addr = addr.clone();
    let slow = std::thread::spawn(move || {
        let mut c = TcpStream::connect(&slow_addr).unwrap();
        let startup = b"\x00\x00\x00\x17\x00\x03\x00\x00user\x00postgres\x00\x00";
        for b in startup.iter() {
            c.write_all(&[*b]).unwrap();
        }
        let mut buf = [0u8; 1];
        c.read_exact(&mut buf).unwrap();
        buf[0]
    });
    let o = Command::new(&psql)
        .args([
            "-X",
            "-A",
            "-t",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
        ])
        .args([
            "-c",
            "CREATE TABLE t (id integer PRIMARY KEY)",
            "-c",
            "INSERT INTO t VALUES (7)",
        ])
        .args(["-c", "SELECT id FROM t"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).trim_end().ends_with('7'));
    // The slow client was authenticated ('R').
    assert_eq!(slow.join().unwrap(), b'R');
    drop(open);
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    let h = read_history(&s.join("out").join("observed.json"));
    assert!(h.key_names().iter().any(|k| k == "t[id=7]"));
}

/// pgbench's built-in tpcb-like over hand-created `pgbench_*` tables (one branch, ten tellers,
/// no accounts rows: the account updates then only check the row's existence).
fn record_tpcb_like(s: &Scratch, per_client: u32) -> Option<PathBuf> {
    let (psql, pgbench) = (pg_bin("psql")?, pg_bin("pgbench")?);
    let tellers: Vec<String> = (1..=10).map(|t| format!("({t}, 1, 0, NULL)")).collect();
    let setup = write(
        s,
        "tpcb.sql",
        &format!(
            "CREATE TABLE pgbench_branches (bid integer NOT NULL PRIMARY KEY, bbalance integer, filler char(88));\n\
             CREATE TABLE pgbench_tellers (tid integer NOT NULL PRIMARY KEY, bid integer, tbalance integer, filler char(84));\n\
             CREATE TABLE pgbench_accounts (aid integer NOT NULL PRIMARY KEY, bid integer, abalance integer, filler char(84));\n\
             CREATE TABLE pgbench_history (tid integer, bid integer, aid integer, delta integer, mtime timestamp, filler char(22));\n\
             INSERT INTO pgbench_branches VALUES (1, 0, NULL);\n\
             INSERT INTO pgbench_tellers VALUES {};\n",
            tellers.join(", ")
        ),
    );
    // The tables are loaded by a setup command: pgbench's connections come after it on every
    // real database, so no prediction reads around the loaded rows.
    let load = format!("{} -X -q -v ON_ERROR_STOP=1 -f {setup}", psql.display());
    let pgbench = pgbench.display().to_string();
    let per_client = per_client.to_string();
    let (o, observed) = record_with_setup(
        s,
        &[&load],
        &[
            &pgbench,
            "-n",
            "-b",
            "tpcb-like",
            "-M",
            "prepared",
            "-c",
            "4",
            "-j",
            "1",
            "-t",
            &per_client,
            "--random-seed=7",
        ],
    );
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let expected = format!(
        "number of transactions actually processed: {0}/{0}",
        4 * per_client.parse::<u32>().unwrap()
    );
    assert!(stdout(&o).contains(&expected), "{}", stdout(&o));
    Some(observed)
}

#[test]
fn pgbench_tpcb_like_records_its_balance_updates_as_locked_reads() {
    let s = Scratch::new("pgbench-tpcb");
    let Some(observed) = record_tpcb_like(&s, 5) else {
        return;
    };
    let h = read_history(&observed);
    // Every read of a teller's or the branch's balance is an UPDATE's `x = x + d`: locked.
    let balance_reads: Vec<u32> = (0..h.ops().len() as u32)
        .filter(|&o| {
            let op = h.op(o);
            op.kind == OpKind::Read
                && (h.key_name(op.key).starts_with("pgbench_tellers.tbalance")
                    || h.key_name(op.key).starts_with("pgbench_branches.bbalance"))
        })
        .collect();
    assert_eq!(balance_reads.len(), 2 * 20);
    assert!(balance_reads.iter().all(|&o| h.is_locked_read(o)));
    let obs = observed.display().to_string();
    let check = isopredict(&["check", &obs, "--level", "ser"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

#[test]
fn pgbench_tpcb_like_predicts_nothing_at_causal_or_rc() {
    let s = Scratch::new("pgbench-tpcb-predict");
    let Some(observed) = record_tpcb_like(&s, 25) else {
        return;
    };
    let obs = observed.display().to_string();
    for level in ["causal", "rc"] {
        let p = isopredict(&["predict", &obs, "--level", level]);
        assert_eq!(
            p.status.code(),
            Some(0),
            "{level}: {}{}",
            stdout(&p),
            stderr(&p)
        );
        // With the certificate: every balance read is an atomic `UPDATE … SET b = b + d`.
        assert!(
            stdout(&p).contains("locked read"),
            "{level}: {}",
            stdout(&p)
        );
    }
}

/// node and the folder holding node-postgres (`ISOPREDICT_TEST_NODE_PATH`, else the folder
/// scripts/server-test-node fills by default), or `None` after noting the skip (a failure
/// under CI).
fn node_with_pg() -> Option<(PathBuf, PathBuf)> {
    let modules = std::env::var_os("ISOPREDICT_TEST_NODE_PATH")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/isopredict/server-node/node_modules"))
        });
    let node = std::env::var_os("ISOPREDICT_TEST_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("node"));
    if let Some(modules) = modules {
        let works = Command::new(&node)
            .args(["-e", "require('pg')"])
            .env("NODE_PATH", &modules)
            .output()
            .is_ok_and(|o| o.status.success());
        if works {
            return Some((node, modules));
        }
    }
    common::postgres::tool_missing(
        "the node-postgres program",
        "no node with node-postgres (run scripts/server-test-node, or set \
         ISOPREDICT_TEST_NODE_PATH)",
    );
    None
}

#[test]
fn a_node_postgres_program_is_recorded_and_only_its_client_side_sum_loses_an_update() {
    let Some((node, modules)) = node_with_pg() else {
        return;
    };
    let s = Scratch::new("node-postgres");
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/server/bank.js");
    let node_path = format!("NODE_PATH={}", modules.display());
    for (mode, loses_an_update) in [("deposit", true), ("increment", false)] {
        let (o, observed) = record(
            &s,
            &[
                "env",
                &node_path,
                node.to_str().unwrap(),
                app.to_str().unwrap(),
                mode,
            ],
        );
        assert!(o.status.success(), "{mode}: {}\n{}", stdout(&o), stderr(&o));
        // The tellers ran one after the other: both amounts are in the balance.
        assert!(stdout(&o).contains("balance 130"), "{mode}: {}", stdout(&o));
        let h = read_history(&observed);
        let st = h.statements().unwrap();
        assert_eq!(
            st.session_names(),
            ["setup:fixture", "teller-1", "teller-2"]
        );
        assert_eq!(h.sessions_after(), [(0, 1), (0, 2)]);
        // Parameterised statements, with their bound values.
        assert!(st.statements().iter().any(|s| s.sql
            == "UPDATE acct SET bal = bal + $1 WHERE id = $2 RETURNING bal"
            || s.sql == "UPDATE acct SET bal = $1 WHERE id = $2" && s.params.len() == 2));
        let obs = observed.display().to_string();
        let check = isopredict(&["check", &obs, "--level", "ser"]);
        assert_eq!(check.status.code(), Some(0), "{mode}: {}", stdout(&check));
        if loses_an_update {
            assert_lost_update_predicted(&observed);
        } else {
            for level in ["causal", "rc"] {
                let p = isopredict(&["predict", &obs, "--level", level]);
                assert_eq!(
                    p.status.code(),
                    Some(0),
                    "{mode} at {level}: {}",
                    stdout(&p)
                );
            }
        }
        std::fs::remove_dir_all(s.join("rec")).unwrap();
    }
}
