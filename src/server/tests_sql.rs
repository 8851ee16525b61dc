//! The SQL real clients send beyond the first translation (issue 32), driven through sessions
//! without the network: sequences outside transactions, subqueries in WHERE recorded as the
//! reads they are, `INSERT … SELECT` (also from VALUES in FROM).

use std::time::Duration;

use super::database::Shared;
use super::session::Session;
use super::sql::{parse, Outcome};
use crate::history::{History, OpKind};
use crate::store::Value;

pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Runs each statement of `sql` in `s`: the last one's rows (empty for a command), or the
/// first error's SQLSTATE.
pub(crate) async fn run(
    shared: &Shared,
    s: &mut Session,
    sql: &str,
) -> Result<Vec<Vec<Value>>, String> {
    let stmts = parse(sql).map_err(|e| e.code.to_string())?;
    let mut last = Vec::new();
    for stmt in &stmts {
        let (r, _) = s.run(shared, stmt, sql, &[], &[]).await;
        last = match r.map_err(|e| e.code.to_string())? {
            Outcome::Rows { rows, .. } => rows,
            Outcome::Done(_) => Vec::new(),
        };
    }
    Ok(last)
}

pub(crate) fn history(shared: &Shared) -> History {
    let db = shared.lock();
    db.recorder.history(&db.store, &db.catalog, "test").unwrap()
}

/// `(kind, key)` of every operation made by the statement whose text starts with `prefix`.
pub(crate) fn ops_of(h: &History, prefix: &str) -> Vec<(OpKind, String)> {
    let st = h.statements().unwrap();
    h.ops()
        .iter()
        .enumerate()
        .filter(|(o, _)| {
            st.of_op(*o as u32)
                .is_some_and(|s| s.sql.starts_with(prefix))
        })
        .map(|(_, op)| (op.kind, h.key_name(op.key).to_string()))
        .collect()
}

fn ints(values: &[i64]) -> Vec<Vec<Value>> {
    values.iter().map(|&v| vec![Value::Int(v)]).collect()
}

/// A sequence is outside transactions, as in PostgreSQL: a value taken in a transaction that
/// rolled back is never taken again, `currval` is the connection's own, and neither SERIAL
/// values nor `nextval` calls are recorded as reads or writes.
#[test]
fn sequences_count_outside_transactions_and_record_nothing() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut a = Session::open(&shared, Some("a"));
        let mut b = Session::open(&shared, Some("b"));
        run(
            &shared,
            &mut a,
            "CREATE TABLE t (id serial PRIMARY KEY, v text); CREATE SEQUENCE s START 5",
        )
        .await
        .unwrap();
        run(&shared, &mut a, "BEGIN; INSERT INTO t (v) VALUES ('x')")
            .await
            .unwrap();
        run(&shared, &mut a, "ROLLBACK").await.unwrap();
        let got = run(
            &shared,
            &mut b,
            "INSERT INTO t (v) VALUES ('y') RETURNING id",
        )
        .await;
        assert_eq!(got.unwrap(), ints(&[2]), "1 went to the rolled-back insert");
        let got = run(&shared, &mut a, "SELECT currval('t_id_seq')").await;
        assert_eq!(
            got.unwrap(),
            ints(&[1]),
            "a's own value survives its rollback"
        );
        let got = run(&shared, &mut b, "SELECT nextval('s'), lastval()").await;
        assert_eq!(got.unwrap(), vec![vec![Value::Int(5), Value::Int(5)]]);
        let got = run(&shared, &mut a, "SELECT currval('s')").await;
        assert_eq!(got.unwrap_err(), "55000", "a never took from s");
        let got = run(
            &shared,
            &mut a,
            "INSERT INTO t VALUES (nextval('s') * 10, 'z') RETURNING id",
        )
        .await;
        assert_eq!(got.unwrap(), ints(&[60]));
        a.close(&shared);
        b.close(&shared);
    });
    let h = history(&shared);
    let keys: Vec<String> = h
        .ops()
        .iter()
        .map(|op| h.key_name(op.key).to_string())
        .collect();
    assert!(keys.iter().all(|k| k.starts_with('t')), "{keys:?}");
    assert!(ops_of(&h, "SELECT nextval").is_empty());
    assert!(ops_of(&h, "SELECT currval").is_empty());
}

/// `IN (SELECT …)` and `EXISTS (SELECT …)` run their query first, recorded as its own reads: a
/// predicate over a non-key column scans (every row's existence, so an insert there is a
/// phantom); the outer statement then reads only the keys the subquery returned.
#[test]
fn subqueries_are_recorded_as_the_reads_they_make() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut s = Session::open(&shared, Some("app"));
        run(
            &shared,
            &mut s,
            "CREATE TABLE acct (id int PRIMARY KEY, bal int); \
             CREATE TABLE vip (id int PRIMARY KEY, level int); \
             INSERT INTO acct VALUES (1, 10), (2, 20), (3, 30); \
             INSERT INTO vip VALUES (2, 1), (3, 0)",
        )
        .await
        .unwrap();
        let got = run(
            &shared,
            &mut s,
            "SELECT id, bal FROM acct WHERE id IN (SELECT id FROM vip WHERE level > 0)",
        )
        .await;
        assert_eq!(got.unwrap(), vec![vec![Value::Int(2), Value::Int(20)]]);
        let got = run(
            &shared,
            &mut s,
            "UPDATE acct SET bal = 0 WHERE NOT EXISTS (SELECT 1 FROM vip WHERE id = 9) AND id = 1",
        )
        .await;
        assert!(got.is_ok());
        let got = run(
            &shared,
            &mut s,
            "SELECT id FROM acct WHERE bal = (SELECT max(bal) FROM acct)",
        )
        .await;
        assert_eq!(got.unwrap(), ints(&[3]));
        let got = run(
            &shared,
            &mut s,
            "SELECT 'none', count(*) FROM acct WHERE EXISTS (SELECT 1 FROM vip WHERE level > 5)",
        )
        .await;
        assert_eq!(got.unwrap(), vec![vec![Value::text("none"), Value::Int(0)]]);
        let correlated = run(
            &shared,
            &mut s,
            "SELECT id FROM acct a WHERE EXISTS (SELECT 1 FROM vip WHERE vip.id = a.id)",
        )
        .await;
        assert_eq!(correlated.unwrap_err(), "0A000");
        s.close(&shared);
    });
    let h = history(&shared);
    use OpKind::{Read as R, Write as W};
    let k = |s: &str| s.to_string();
    assert_eq!(
        ops_of(&h, "SELECT id, bal FROM acct WHERE id IN"),
        [
            // The subquery's scan of vip (level is no key): both rows' existence, their levels.
            (R, k("vip[id=2]")),
            (R, k("vip[id=3]")),
            (R, k("vip.level[id=2]")),
            (R, k("vip.level[id=3]")),
            // The outer query: only the row the subquery returned.
            (R, k("acct[id=2]")),
            (R, k("acct.bal[id=2]")),
        ]
    );
    // NOT EXISTS over a key: that key's existence (a row never inserted), then the update.
    assert_eq!(
        ops_of(&h, "UPDATE acct SET bal = 0"),
        [
            (R, k("vip[id=9]")),
            (R, k("acct[id=1]")),
            (W, k("acct.bal[id=1]")),
        ]
    );
}

/// `INSERT … SELECT` reads what its query reads, then writes each row it returned; VALUES in
/// FROM reads nothing.
#[test]
fn insert_select_reads_then_writes_the_rows() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut s = Session::open(&shared, Some("app"));
        run(
            &shared,
            &mut s,
            "CREATE TABLE acct (id int PRIMARY KEY, bal int); \
             CREATE TABLE archive (n serial PRIMARY KEY, acct int, bal int); \
             INSERT INTO acct VALUES (1, 10), (2, 20)",
        )
        .await
        .unwrap();
        let got = run(
            &shared,
            &mut s,
            "INSERT INTO archive (acct, bal) SELECT id, bal FROM acct WHERE bal > 15 RETURNING n",
        )
        .await;
        assert_eq!(got.unwrap(), ints(&[1]));
        let wide = run(
            &shared,
            &mut s,
            "INSERT INTO archive (acct) SELECT id, bal FROM acct",
        )
        .await;
        assert_eq!(wide.unwrap_err(), "42601");
        // SQLAlchemy 2's bulk insert: VALUES as a table in FROM, in its ORDER BY's order.
        let got = run(
            &shared,
            &mut s,
            "INSERT INTO archive (acct, bal) SELECT p0, p1 FROM (VALUES (5, 1, 1), (6, 2, 0)) \
             AS imp(p0, p1, k) ORDER BY k RETURNING acct, n",
        )
        .await;
        let rows = vec![
            vec![Value::Int(6), Value::Int(2)],
            vec![Value::Int(5), Value::Int(3)],
        ];
        assert_eq!(got.unwrap(), rows);
        s.close(&shared);
    });
    let h = history(&shared);
    use OpKind::{Read as R, Write as W};
    let k = |s: &str| s.to_string();
    assert_eq!(
        ops_of(&h, "INSERT INTO archive (acct, bal) SELECT"),
        [
            (R, k("acct[id=1]")),
            (R, k("acct[id=2]")),
            (R, k("acct.bal[id=1]")),
            (R, k("acct.bal[id=2]")),
            (R, k("archive[n=1]")),
            (W, k("archive[n=1]")),
            (W, k("archive.acct[n=1]")),
            (W, k("archive.bal[n=1]")),
            // From VALUES: no reads but each row's uniqueness check.
            (R, k("archive[n=2]")),
            (W, k("archive[n=2]")),
            (W, k("archive.acct[n=2]")),
            (W, k("archive.bal[n=2]")),
            (R, k("archive[n=3]")),
            (W, k("archive[n=3]")),
            (W, k("archive.acct[n=3]")),
            (W, k("archive.bal[n=3]")),
        ]
    );
}
