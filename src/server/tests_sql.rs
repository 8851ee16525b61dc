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

pub(crate) fn ints(values: &[i64]) -> Vec<Vec<Value>> {
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
        assert_eq!(correlated.unwrap(), ints(&[2, 3]));
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

const SHOP: &str = "CREATE TABLE cust (id int PRIMARY KEY, name text, city text); \
     CREATE TABLE orders (id int PRIMARY KEY, cust_id int, total int); \
     CREATE TABLE item (order_id int, line int, qty int, PRIMARY KEY (order_id, line)); \
     INSERT INTO cust VALUES (1, 'alice', 'paris'), (2, 'bob', 'oslo'), (3, 'carol', NULL); \
     INSERT INTO orders VALUES (10, 1, 100), (11, 1, 50), (12, 2, 70), (13, 9, 5); \
     INSERT INTO item VALUES (10, 1, 2), (10, 2, 1), (12, 1, 7)";

/// Joins read what an index nested-loop join reads: a source whose key the conditions pin
/// (by a constant, or by a column of a source bound before it) reads only those rows'
/// existence — also of a key without a row, so the outer join's NULL row is a read a later
/// insert changes — and a source whose key is not pinned is scanned once per statement,
/// whatever the number of combinations, each cell read once.
#[test]
fn joins_read_what_an_index_nested_loop_join_reads() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut s = Session::open(&shared, Some("app"));
        run(&shared, &mut s, SHOP).await.unwrap();
        let got = run(
            &shared,
            &mut s,
            "SELECT c.name, i.line, i.qty FROM orders o JOIN cust c ON c.id = o.cust_id \
             JOIN item i ON i.order_id = o.id WHERE o.id = 10 ORDER BY i.line",
        )
        .await;
        let rows = vec![
            vec![Value::text("alice"), Value::Int(1), Value::Int(2)],
            vec![Value::text("alice"), Value::Int(2), Value::Int(1)],
        ];
        assert_eq!(got.unwrap(), rows);
        let got = run(
            &shared,
            &mut s,
            "SELECT o.id, c.name FROM orders o LEFT JOIN cust c ON c.id = o.cust_id WHERE o.id = 13",
        )
        .await;
        assert_eq!(got.unwrap(), vec![vec![Value::Int(13), Value::Null]]);
        let got = run(
            &shared,
            &mut s,
            "SELECT c.id, o.id FROM cust c LEFT JOIN orders o ON o.cust_id = c.id ORDER BY 1, 2",
        )
        .await;
        let pairs = [(1, Some(10)), (1, Some(11)), (2, Some(12)), (3, None)];
        let rows: Vec<Vec<Value>> = pairs
            .iter()
            .map(|&(c, o)| vec![Value::Int(c), o.map_or(Value::Null, Value::Int)])
            .collect();
        assert_eq!(got.unwrap(), rows);
        s.close(&shared);
        let mut t = Session::open(&shared, Some("later"));
        run(&shared, &mut t, "INSERT INTO cust VALUES (9, 'dan', NULL)")
            .await
            .unwrap();
        t.close(&shared);
    });
    let h = history(&shared);
    use OpKind::{Read as R, Write as W};
    let k = |s: &str| s.to_string();
    assert_eq!(
        ops_of(&h, "SELECT c.name, i.line"),
        [
            // orders pinned by WHERE, cust by the order's cust_id: one row each.
            (R, k("orders[id=10]")),
            (R, k("orders.cust_id[id=10]")),
            (R, k("cust[id=1]")),
            // item's key is (order_id, line): order_id alone pins no row, item is scanned.
            (R, k("item[order_id=10,line=1]")),
            (R, k("item[order_id=10,line=2]")),
            (R, k("item[order_id=12,line=1]")),
            (R, k("cust.name[id=1]")),
            (R, k("item.qty[order_id=10,line=1]")),
            (R, k("item.qty[order_id=10,line=2]")),
        ]
    );
    // The cust row of order 13 does not exist: its absence is read, and the later insert
    // writes what it read (a phantom prediction can see).
    assert_eq!(
        ops_of(&h, "SELECT o.id, c.name"),
        [
            (R, k("orders[id=13]")),
            (R, k("orders.cust_id[id=13]")),
            (R, k("cust[id=9]")),
        ]
    );
    assert!(ops_of(&h, "INSERT INTO cust VALUES (9").contains(&(W, k("cust[id=9]"))));
    // orders scanned once for three customers: each existence and cust_id read once.
    let scan = ops_of(&h, "SELECT c.id, o.id");
    for key in ["orders[id=11]", "orders.cust_id[id=11]", "orders[id=13]"] {
        let n = scan.iter().filter(|(_, x)| x == key).count();
        assert_eq!(n, 1, "{key}: {scan:?}");
    }
    assert_eq!(scan.len(), 3 + 4 + 4, "{scan:?}");
}

/// A subquery in FROM and a CTE run as SELECTs of their own, their reads recorded as theirs; a
/// CTE runs once however often it is named, and not at all when it is never named; the outer
/// query reads their rows without events. `UPDATE … FROM` reads the other table and writes the
/// target rows it pins through it; `DELETE … USING` likewise.
#[test]
fn derived_tables_ctes_and_update_from_are_recorded_as_their_reads() {
    let shared = Shared::new(Duration::from_secs(2));
    block_on(async {
        let mut s = Session::open(&shared, Some("app"));
        run(&shared, &mut s, SHOP).await.unwrap();
        let got = run(
            &shared,
            &mut s,
            "WITH big AS (SELECT id, cust_id FROM orders WHERE total >= 70), \
             unused AS (SELECT * FROM item) \
             SELECT a.id, b.cust_id FROM big a JOIN big b ON a.id = b.id ORDER BY a.id",
        )
        .await;
        assert_eq!(
            got.unwrap(),
            vec![
                vec![Value::Int(10), Value::Int(1)],
                vec![Value::Int(12), Value::Int(2)]
            ]
        );
        let got = run(
            &shared,
            &mut s,
            "SELECT s.n FROM (SELECT count(*) AS n FROM orders WHERE cust_id = 1) AS s",
        )
        .await;
        assert_eq!(got.unwrap(), ints(&[2]));
        let got = run(
            &shared,
            &mut s,
            "UPDATE cust SET name = name || '!' FROM orders o WHERE o.id = 12 AND cust.id = o.cust_id \
             RETURNING cust.name, o.total",
        )
        .await;
        assert_eq!(
            got.unwrap(),
            vec![vec![Value::text("bob!"), Value::Int(70)]]
        );
        let got = run(
            &shared,
            &mut s,
            "DELETE FROM item USING orders o WHERE o.id = 12 AND item.order_id = o.id AND item.line = 1",
        )
        .await;
        assert!(got.is_ok());
        let got = run(&shared, &mut s, "SELECT count(*) FROM item").await;
        assert_eq!(got.unwrap(), ints(&[2]));
        let got = run(
            &shared,
            &mut s,
            "WITH RECURSIVE r(n) AS (SELECT 1) SELECT n FROM r",
        )
        .await;
        assert_eq!(got.unwrap_err(), "0A000");
        s.close(&shared);
    });
    let h = history(&shared);
    use OpKind::{Read as R, Write as W};
    let k = |s: &str| s.to_string();
    let with = ops_of(&h, "WITH big");
    // The CTE's scan of orders, once for both names; `unused` never ran.
    assert_eq!(with.iter().filter(|(_, x)| x == "orders[id=10]").count(), 1);
    assert!(
        with.iter().all(|(_, x)| x.starts_with("orders")),
        "{with:?}"
    );
    assert_eq!(
        ops_of(&h, "UPDATE cust SET name"),
        [
            // orders pinned by its key, then cust by the order's cust_id: no scan of cust.
            (R, k("orders[id=12]")),
            (R, k("orders.cust_id[id=12]")),
            (R, k("cust[id=2]")),
            (R, k("cust.name[id=2]")),
            (W, k("cust.name[id=2]")),
            (R, k("orders.total[id=12]")),
        ]
    );
    assert_eq!(
        ops_of(&h, "DELETE FROM item USING"),
        [
            (R, k("orders[id=12]")),
            (R, k("item[order_id=12,line=1]")),
            (W, k("item[order_id=12,line=1]")),
        ]
    );
}
