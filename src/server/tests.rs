//! The server's sessions driven directly (no network): the translation's events, locked
//! reads, errors and aborted transactions, the locks: waits, their bound, deadlocks.

use std::time::Duration;

use super::database::Shared;
use super::session::{Session, TxnState};
use super::sql::{parse, Outcome};
use crate::history::{History, OpKind};
use crate::store::Value;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

async fn run(shared: &Shared, s: &mut Session, sql: &str) -> Result<Outcome, String> {
    let stmts = parse(sql).map_err(|e| e.code.to_string())?;
    let mut last = None;
    for stmt in &stmts {
        let (r, _) = s.run(shared, stmt, sql, &[], &[]).await;
        last = Some(r.map_err(|e| e.code.to_string())?);
    }
    Ok(last.expect("a statement"))
}

fn history(shared: &Shared) -> History {
    let db = shared.lock();
    db.recorder.history(&db.store, &db.catalog, "test").unwrap()
}

/// `(kind, key, locked)` of a transaction's operations.
fn ops(h: &History, t: u32) -> Vec<(OpKind, String, bool)> {
    h.txn(t)
        .ops()
        .map(|o| {
            let op = h.op(o);
            (op.kind, h.key_name(op.key).to_string(), h.is_locked_read(o))
        })
        .collect()
}

#[test]
fn statements_become_row_and_column_events_with_locked_reads() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut s = Session::open(&shared, Some("app"));
        run(
            &shared,
            &mut s,
            "CREATE TABLE acct (id int PRIMARY KEY, bal int)",
        )
        .await
        .unwrap();
        run(&shared, &mut s, "INSERT INTO acct VALUES (1, 10), (2, 20)")
            .await
            .unwrap();
        run(
            &shared,
            &mut s,
            "UPDATE acct SET bal = bal + 5 WHERE id = 1",
        )
        .await
        .unwrap();
        let rows = run(
            &shared,
            &mut s,
            "SELECT id FROM acct WHERE bal > 12 ORDER BY id",
        )
        .await;
        assert!(matches!(rows, Ok(Outcome::Rows { ref rows, .. })
            if *rows == vec![vec![Value::Int(1)], vec![Value::Int(2)]]));
        s.close(&shared);
    });
    let h = history(&shared);
    use OpKind::{Read as R, Write as W};
    let k = |s: &str| s.to_string();
    // INSERT: the uniqueness check (locked: the statement then inserts the row), the row, its
    // non-key cell.
    assert_eq!(
        ops(&h, 1)[..3],
        [
            (R, k("acct[id=1]"), true),
            (W, k("acct[id=1]"), false),
            (W, k("acct.bal[id=1]"), false)
        ]
    );
    // UPDATE … bal = bal + 5: the membership, then the balance read locked by its write.
    assert_eq!(
        ops(&h, 2),
        [
            (R, k("acct[id=1]"), false),
            (R, k("acct.bal[id=1]"), true),
            (W, k("acct.bal[id=1]"), false)
        ]
    );
    // A predicate over a non-key column scans: every row's membership, then the cells.
    assert_eq!(
        ops(&h, 3),
        [
            (R, k("acct[id=1]"), false),
            (R, k("acct[id=2]"), false),
            (R, k("acct.bal[id=1]"), false),
            (R, k("acct.bal[id=2]"), false)
        ]
    );
    let st = h.statements().unwrap();
    assert_eq!(st.session_names(), ["app"]);
    let first_select_op = h.txn(3).ops().start;
    assert!(st
        .of_op(first_select_op)
        .unwrap()
        .sql
        .starts_with("SELECT id FROM acct"));
}

/// TRUNCATE (pgbench's initialisation sends it) deletes every present row in the
/// transaction, as `DELETE FROM t` does: the scan's memberships read, each present row deleted.
/// SAVEPOINT and RELEASE SAVEPOINT (ORMs send them) are accepted.
#[test]
fn truncate_deletes_every_row_and_savepoints_are_accepted() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut s = Session::open(&shared, None);
        run(
            &shared,
            &mut s,
            "CREATE TABLE a (id int PRIMARY KEY, v int)",
        )
        .await
        .unwrap();
        run(&shared, &mut s, "CREATE TABLE b (id int PRIMARY KEY)")
            .await
            .unwrap();
        run(&shared, &mut s, "INSERT INTO a VALUES (1, 1), (2, 2)")
            .await
            .unwrap();
        run(&shared, &mut s, "DELETE FROM a WHERE id = 2")
            .await
            .unwrap();
        run(&shared, &mut s, "INSERT INTO b VALUES (7)")
            .await
            .unwrap();
        let done = run(&shared, &mut s, "TRUNCATE TABLE a, b").await;
        assert!(matches!(done, Ok(Outcome::Done(ref t)) if t == "TRUNCATE TABLE"));
        let count = run(&shared, &mut s, "SELECT count(*) FROM a").await;
        assert!(matches!(count, Ok(Outcome::Rows { ref rows, .. })
            if *rows == vec![vec![Value::Int(0)]]));
        assert_eq!(
            run(&shared, &mut s, "TRUNCATE nope").await.unwrap_err(),
            "42P01"
        );
        // ORMs' savepoints around a block: accepted (a block without writes records nothing).
        for sql in ["BEGIN", "SAVEPOINT s1", "RELEASE SAVEPOINT s1", "COMMIT"] {
            assert!(run(&shared, &mut s, sql).await.is_ok(), "{sql}");
        }
        s.close(&shared);
    });
    let h = history(&shared);
    use OpKind::{Read as R, Write as W};
    let k = |s: &str| s.to_string();
    // Transactions: 1 insert, 2 delete, 3 insert into b, 4 the TRUNCATE.
    assert_eq!(
        ops(&h, 4),
        [
            (R, k("a[id=1]"), true),
            (R, k("a[id=2]"), false),
            (W, k("a[id=1]"), false),
            (R, k("b[id=7]"), true),
            (W, k("b[id=7]"), false),
        ]
    );
}

#[test]
fn an_error_fails_the_block_and_the_transaction_is_recorded_aborted() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut s = Session::open(&shared, None);
        run(
            &shared,
            &mut s,
            "CREATE TABLE t (id int PRIMARY KEY, v int)",
        )
        .await
        .unwrap();
        run(&shared, &mut s, "INSERT INTO t VALUES (1, 1)")
            .await
            .unwrap();
        assert_eq!(
            run(&shared, &mut s, "INSERT INTO t VALUES (1, 2)")
                .await
                .unwrap_err(),
            "23505"
        );
        assert_eq!(s.state(), TxnState::Idle);
        run(&shared, &mut s, "BEGIN").await.unwrap();
        run(&shared, &mut s, "UPDATE t SET v = 9 WHERE id = 1")
            .await
            .unwrap();
        assert_eq!(
            run(&shared, &mut s, "SELECT x FROM t").await.unwrap_err(),
            "42703"
        );
        assert_eq!(s.state(), TxnState::Failed);
        assert_eq!(
            run(&shared, &mut s, "SELECT v FROM t").await.unwrap_err(),
            "25P02"
        );
        assert!(
            matches!(run(&shared, &mut s, "COMMIT").await, Ok(Outcome::Done(ref t)) if t == "ROLLBACK")
        );
        assert_eq!(
            run(&shared, &mut s, "SELECT * FROM nope")
                .await
                .unwrap_err(),
            "42P01"
        );
        assert_eq!(
            run(&shared, &mut s, "SELECT v FROM t WINDOW w AS ()")
                .await
                .unwrap_err(),
            "0A000"
        );
        s.close(&shared);
    });
    let h = history(&shared);
    let aborted: Vec<_> = h.txns().iter().filter(|t| !t.is_committed()).collect();
    // The duplicate insert and the failed block (with its write).
    assert_eq!(aborted.len(), 2);
    assert!(aborted[1].ops().any(|o| h.op(o).kind == OpKind::Write));
}

#[test]
fn a_transaction_waiting_past_the_bound_runs_concurrently_and_is_counted() {
    let shared = Shared::new(Duration::from_millis(50));
    block_on(async {
        let mut a = Session::open(&shared, Some("a"));
        let mut b = Session::open(&shared, Some("a"));
        assert_eq!(b.name, "a#2");
        run(
            &shared,
            &mut a,
            "CREATE TABLE t (id int PRIMARY KEY, v int)",
        )
        .await
        .unwrap();
        run(&shared, &mut a, "INSERT INTO t VALUES (1, 0)")
            .await
            .unwrap();
        run(&shared, &mut a, "BEGIN").await.unwrap();
        run(&shared, &mut a, "SELECT v FROM t WHERE id = 1")
            .await
            .unwrap();
        // One thread holds a's transaction open while b begins: b waits 50 ms, then runs.
        run(&shared, &mut b, "UPDATE t SET v = 5 WHERE id = 1")
            .await
            .unwrap();
        run(&shared, &mut a, "UPDATE t SET v = 7 WHERE id = 1")
            .await
            .unwrap();
        run(&shared, &mut a, "COMMIT").await.unwrap();
    });
    assert_eq!(shared.lock().recorder.concurrent_txns, 1);
    let h = history(&shared);
    assert_eq!(h.txns().iter().filter(|t| t.is_committed()).count(), 4);
}

/// Two sessions of one thread: `a` holds its transaction open with row 1 written.
async fn two_sessions_with_row_one_held(shared: &Shared) -> (Session, Session) {
    let mut a = Session::open(shared, Some("a"));
    let b = Session::open(shared, Some("b"));
    for sql in [
        "CREATE TABLE t (id int PRIMARY KEY, v int)",
        "INSERT INTO t VALUES (1, 0), (2, 0)",
        "BEGIN",
        "UPDATE t SET v = 1 WHERE id = 1",
    ] {
        run(shared, &mut a, sql).await.unwrap();
    }
    (a, b)
}

#[test]
fn transactions_on_other_rows_do_not_wait_but_a_scan_waits_for_a_writer() {
    let shared = Shared::new(Duration::from_millis(50));
    block_on(async {
        let (mut a, mut b) = two_sessions_with_row_one_held(&shared).await;
        // Another row, read or written: no wait (a wait would time out and be counted).
        run(&shared, &mut b, "SELECT v FROM t WHERE id = 2")
            .await
            .unwrap();
        run(&shared, &mut b, "UPDATE t SET v = 2 WHERE id = 2")
            .await
            .unwrap();
        assert_eq!(shared.lock().recorder.concurrent_txns, 0);
        // A scan of the table waits for a's row lock (its table intention lock): it times
        // out and goes on.
        run(&shared, &mut b, "SELECT count(*) FROM t")
            .await
            .unwrap();
        assert_eq!(shared.lock().recorder.concurrent_txns, 1);
        run(&shared, &mut a, "COMMIT").await.unwrap();
    });
}

#[test]
fn a_deadlock_is_found_at_once_and_the_requester_goes_on_without_the_lock() {
    // A bound far longer than the test: only the deadlock check lets it end soon.
    let shared = Shared::new(Duration::from_secs(30));
    block_on(async {
        let (mut a, mut b) = two_sessions_with_row_one_held(&shared).await;
        run(&shared, &mut b, "BEGIN").await.unwrap();
        run(&shared, &mut b, "UPDATE t SET v = 2 WHERE id = 2")
            .await
            .unwrap();
        let shared = &shared;
        let (ra, rb) = tokio::join!(
            async { run(shared, &mut a, "UPDATE t SET v = 3 WHERE id = 2").await },
            async {
                // a now waits for row 2; b asking for row 1 closes the cycle.
                tokio::task::yield_now().await;
                let r = run(shared, &mut b, "UPDATE t SET v = 4 WHERE id = 1").await;
                run(shared, &mut b, "COMMIT").await.unwrap();
                r
            }
        );
        ra.unwrap();
        rb.unwrap();
        run(shared, &mut a, "COMMIT").await.unwrap();
        assert_eq!(shared.lock().recorder.concurrent_txns, 1);
    });
}

#[test]
fn a_statement_that_waited_runs_again_from_where_it_began() {
    let shared = Shared::new(Duration::from_secs(30));
    block_on(async {
        let (mut a, mut b) = two_sessions_with_row_one_held(&shared).await;
        let shared = &shared;
        let (_, rb) = tokio::join!(
            async {
                tokio::task::yield_now().await;
                run(shared, &mut a, "COMMIT").await.unwrap();
            },
            // Reads row 2, then waits for row 1: undone, then run again after a's commit.
            async { run(shared, &mut b, "UPDATE t SET v = v + 10 WHERE id IN (2, 1)").await }
        );
        rb.unwrap();
        assert_eq!(shared.lock().recorder.concurrent_txns, 0);
    });
    let h = history(&shared);
    // b's statement: its events once, and it read a's write of row 1.
    let last = (h.txn_count() - 1) as u32;
    let ops = ops(&h, last);
    assert_eq!(
        ops.iter()
            .filter(|(k, key, _)| *k == OpKind::Write && key == "t.v[id=1]")
            .count(),
        1,
        "{ops:?}"
    );
    let read = h
        .txn(last)
        .ops()
        .find(|&o| h.op(o).kind == OpKind::Read && h.key_name(h.op(o).key) == "t.v[id=1]")
        .unwrap();
    assert_eq!(h.writer_txn(read), Some(last - 1));
}

/// `ROLLBACK TO SAVEPOINT` undoes the writes made since the savepoint: later statements read
/// the values from before it, and the recording keeps the transaction's writes from before the
/// savepoint and its reads of committed writes since, but neither the undone writes nor the
/// reads of them.
#[test]
fn a_rollback_to_a_savepoint_undoes_and_unrecords_the_writes_since() {
    let shared = Shared::new(Duration::from_secs(2));
    let value = |o: Result<Outcome, String>| match o {
        Ok(Outcome::Rows { rows, .. }) => rows,
        other => panic!("{other:?}"),
    };
    block_on(async {
        let mut s = Session::open(&shared, None);
        for sql in [
            "CREATE TABLE t (id int PRIMARY KEY, v int)",
            "INSERT INTO t VALUES (1, 10)",
            "BEGIN",
            "UPDATE t SET v = 11 WHERE id = 1",
            "SAVEPOINT a",
            "UPDATE t SET v = 12 WHERE id = 1",
            "INSERT INTO t VALUES (2, 20)",
        ] {
            run(&shared, &mut s, sql).await.unwrap();
        }
        let v = value(run(&shared, &mut s, "SELECT v FROM t WHERE id = 1").await);
        assert_eq!(v, vec![vec![Value::Int(12)]]);
        run(&shared, &mut s, "ROLLBACK TO SAVEPOINT a")
            .await
            .unwrap();
        assert_eq!(s.state(), TxnState::InBlock);
        let v = value(run(&shared, &mut s, "SELECT v FROM t WHERE id IN (1, 2)").await);
        assert_eq!(v, vec![vec![Value::Int(11)]]);
        // The savepoint stays; one released is gone.
        run(&shared, &mut s, "ROLLBACK TO a").await.unwrap();
        run(&shared, &mut s, "RELEASE SAVEPOINT a").await.unwrap();
        assert_eq!(
            run(&shared, &mut s, "ROLLBACK TO SAVEPOINT a")
                .await
                .unwrap_err(),
            "3B001"
        );
        run(&shared, &mut s, "COMMIT").await.unwrap();
        // Outside a block.
        assert_eq!(
            run(&shared, &mut s, "ROLLBACK TO SAVEPOINT a")
                .await
                .unwrap_err(),
            "25P01"
        );
        s.close(&shared);
    });
    let h = history(&shared);
    use OpKind::{Read as R, Write as W};
    let k = |s: &str| s.to_string();
    // Transaction 2 was rolled back to `a` once the second UPDATE, the INSERT and the SELECT
    // of 12 had run: of them only the reads of committed state remain (row 1's membership,
    // row 2's absence, row 1's membership again); then the SELECT after the rollback reads
    // row 1's and row 2's memberships (row 1's value is its own write: no event).
    assert_eq!(
        ops(&h, 2),
        [
            (R, k("t[id=1]"), false),
            (W, k("t.v[id=1]"), false),
            (R, k("t[id=1]"), false),
            (R, k("t[id=2]"), false),
            (R, k("t[id=1]"), false),
            (R, k("t[id=1]"), false),
            (R, k("t[id=2]"), false),
        ]
    );
    assert_eq!(h.txn_count(), 3, "the initial state, the INSERT, the block");
    // Every remaining operation keeps its statement.
    let st = h.statements().unwrap();
    let texts: Vec<&str> = h
        .txn(2)
        .ops()
        .map(|o| st.of_op(o).unwrap().sql.as_str())
        .collect();
    assert_eq!(texts[1], "UPDATE t SET v = 11 WHERE id = 1");
    assert_eq!(texts[3], "INSERT INTO t VALUES (2, 20)");
    assert_eq!(texts[6], "SELECT v FROM t WHERE id IN (1, 2)");
}

/// An error after a savepoint fails the block; `ROLLBACK TO SAVEPOINT` makes it usable again
/// and the transaction commits what it did before the savepoint and after the rollback (the
/// way Django's and Rails' tests recover from an expected IntegrityError).
#[test]
fn a_rollback_to_a_savepoint_recovers_a_failed_block() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut s = Session::open(&shared, None);
        for sql in [
            "CREATE TABLE t (id int PRIMARY KEY, v int)",
            "INSERT INTO t VALUES (1, 10)",
            "BEGIN",
            "INSERT INTO t VALUES (2, 20)",
            "SAVEPOINT before_dup",
        ] {
            run(&shared, &mut s, sql).await.unwrap();
        }
        assert_eq!(
            run(&shared, &mut s, "INSERT INTO t VALUES (1, 99)")
                .await
                .unwrap_err(),
            "23505"
        );
        assert_eq!(s.state(), TxnState::Failed);
        assert_eq!(
            run(&shared, &mut s, "SELECT v FROM t WHERE id = 1")
                .await
                .unwrap_err(),
            "25P02"
        );
        run(&shared, &mut s, "ROLLBACK TO SAVEPOINT before_dup")
            .await
            .unwrap();
        run(&shared, &mut s, "INSERT INTO t VALUES (3, 30)")
            .await
            .unwrap();
        run(&shared, &mut s, "COMMIT").await.unwrap();
        let rows = run(&shared, &mut s, "SELECT id FROM t ORDER BY id").await;
        assert!(matches!(rows, Ok(Outcome::Rows { ref rows, .. })
            if *rows == vec![vec![Value::Int(1)], vec![Value::Int(2)], vec![Value::Int(3)]]));
        s.close(&shared);
    });
    let h = history(&shared);
    assert!(h.txns().iter().all(|t| t.is_committed()), "nothing aborted");
    use OpKind::{Read as R, Write as W};
    let k = |s: &str| s.to_string();
    // The block: row 2 inserted, the duplicate's uniqueness read of row 1 (committed: kept,
    // and no longer locked: its write never came), row 3 inserted.
    assert_eq!(
        ops(&h, 2),
        [
            (R, k("t[id=2]"), true),
            (W, k("t[id=2]"), false),
            (W, k("t.v[id=2]"), false),
            (R, k("t[id=1]"), false),
            (R, k("t[id=3]"), true),
            (W, k("t[id=3]"), false),
            (W, k("t.v[id=3]"), false),
        ]
    );
}

/// A client closes its setup connection, then opens another: the new one is ordered after the
/// setup connection even when the setup connection's serving thread has not read its end yet
/// (another thread serves it); a connection opened while the setup one was open is not.
#[test]
fn a_setup_connection_its_client_closed_comes_first_before_its_end_is_read() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::sync::Arc;

    use super::database::ClosingProbe;

    let shared = Shared::new(Duration::from_secs(2));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (served, _) = listener.accept().unwrap();
    let socket = Arc::new(ClosingProbe::default());
    socket.attach(served.as_raw_fd());
    block_on(async {
        let mut setup = Session::open_on(&shared, Some("setup:fixture"), Some(socket.clone()));
        run(
            &shared,
            &mut setup,
            "CREATE TABLE t (id int PRIMARY KEY, v int)",
        )
        .await
        .unwrap();
        run(&shared, &mut setup, "INSERT INTO t VALUES (1, 0)")
            .await
            .unwrap();
        let mut early = Session::open(&shared, Some("early"));
        assert!(!socket.client_has_closed(), "the client is still connected");
        // Terminate and the end of the stream, unread by the server.
        client.write_all(&[b'X', 0, 0, 0, 4]).unwrap();
        drop(client);
        let mut late = Session::open(&shared, Some("late"));
        for s in [&mut early, &mut late] {
            run(&shared, s, "SELECT v FROM t WHERE id = 1")
                .await
                .unwrap();
        }
        for s in [&mut setup, &mut early, &mut late] {
            s.close(&shared);
        }
    });
    socket.detach();
    assert_eq!(history(&shared).sessions_after(), [(0, 2)]);
}

/// JDBC names its connection with `SET application_name` right after connecting: a connection
/// not named at startup takes the name it sets before its first statement — a `setup` name
/// orders the connections opened after it closed — while a name set after a statement, or
/// over a startup name, names nothing.
#[test]
fn a_name_set_before_the_first_statement_names_the_connection() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut fixture = Session::open(&shared, None);
        run(&shared, &mut fixture, "SET extra_float_digits = 3")
            .await
            .unwrap();
        run(&shared, &mut fixture, "SET application_name = 'setup'")
            .await
            .unwrap();
        assert_eq!(fixture.name, "setup");
        run(
            &shared,
            &mut fixture,
            "CREATE TABLE t (id int PRIMARY KEY, v int)",
        )
        .await
        .unwrap();
        run(&shared, &mut fixture, "INSERT INTO t VALUES (1, 0)")
            .await
            .unwrap();
        fixture.close(&shared);
        let mut teller = Session::open(&shared, None);
        run(&shared, &mut teller, "SET application_name = 'teller'")
            .await
            .unwrap();
        run(&shared, &mut teller, "SELECT v FROM t WHERE id = 1")
            .await
            .unwrap();
        // After a statement, a new name renames nothing.
        run(&shared, &mut teller, "SET application_name = 'other'")
            .await
            .unwrap();
        assert_eq!(teller.name, "teller");
        // A startup name stays.
        let mut named = Session::open(&shared, Some("psql"));
        run(&shared, &mut named, "SET application_name = 'setup'")
            .await
            .unwrap();
        assert_eq!(named.name, "psql");
        run(&shared, &mut named, "SELECT v FROM t WHERE id = 1")
            .await
            .unwrap();
        // Two connections setting the same name are made distinct.
        let mut second = Session::open(&shared, None);
        run(&shared, &mut second, "SET application_name = 'teller'")
            .await
            .unwrap();
        assert_eq!(second.name, "teller#2");
        for s in [&mut teller, &mut named, &mut second] {
            s.close(&shared);
        }
    });
    let h = history(&shared);
    // The teller and psql connections opened after the setup connection closed.
    assert_eq!(h.sessions_after(), [(0, 1), (0, 2)]);
    let st = h.statements().unwrap();
    assert_eq!(
        st.session_names()[..2],
        ["setup".to_string(), "teller".to_string()]
    );
}
