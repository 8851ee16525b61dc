//! Subqueries (correlated or not, in WHERE, the select list and ORDER BY), aggregates inside
//! expressions, HAVING and DISTINCT ON, driven through sessions without the network: the rows
//! PostgreSQL returns for the same SQL, and the reads recorded (each key once per statement; a
//! key lookup reads that key, a missing one too; a non-key predicate scans).

use std::time::Duration;

use crate::history::OpKind::{self, Read as R, Write as W};
use crate::server::database::Shared;
use crate::server::session::Session;
use crate::server::sql::catalog::SqlType;
use crate::server::sql::{parse, Outcome};
use crate::server::tests_sql::{block_on, history, ints, ops_of, run};
use crate::store::Value;

const TABLES: &str = "CREATE TABLE a (id int PRIMARY KEY, k int); \
     CREATE TABLE b (id int PRIMARY KEY, a_id int, v int); \
     INSERT INTO a VALUES (1, 10), (2, 20), (3, 30); \
     INSERT INTO b VALUES (1, 1, 5), (2, 1, 7), (3, 3, 9)";

/// A statement's rows, or its SQLSTATE.
type Answer = Result<Vec<Vec<Value>>, String>;

/// Runs `queries` one by one after creating [`TABLES`]: each one's answer.
fn results(queries: &[&str]) -> (Shared, Vec<Answer>) {
    let shared = Shared::new(Duration::from_secs(2));
    let got = block_on(async {
        let mut s = Session::open(&shared, Some("app"));
        run(&shared, &mut s, TABLES).await.unwrap();
        let mut got = Vec::new();
        for q in queries {
            got.push(run(&shared, &mut s, q).await);
        }
        s.close(&shared);
        got
    });
    (shared, got)
}

fn rows(rows: &[&[Value]]) -> Vec<Vec<Value>> {
    rows.iter().map(|r| r.to_vec()).collect()
}

fn keys(ops: &[(OpKind, String)]) -> Vec<&str> {
    ops.iter().map(|(_, k)| k.as_str()).collect()
}

const I: fn(i64) -> Value = Value::Int;

#[test]
fn correlated_subqueries_in_where_run_per_outer_row() {
    let (_, got) = results(&[
        "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.a_id = a.id) ORDER BY id",
        "SELECT id FROM a x WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.a_id = x.id)",
        "SELECT id FROM a WHERE id IN (SELECT a_id FROM b WHERE b.v > a.k - 25) ORDER BY id",
        "SELECT id FROM a WHERE k < (SELECT max(v) FROM b WHERE b.a_id = a.id) * 2",
        "SELECT id FROM a WHERE k > 15 AND id = ANY (SELECT a_id FROM b WHERE v > a.k - 25)",
        "SELECT id FROM a WHERE id NOT IN (SELECT a_id FROM b WHERE b.id = a.id)",
        // A subquery inside a subquery naming the outermost row.
        "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.v > 6 AND \
         EXISTS (SELECT 1 FROM b b2 WHERE b2.id = b.id AND b2.a_id = a.id))",
        "SELECT id FROM a WHERE (SELECT v FROM b WHERE b.a_id = a.id) > 0",
    ]);
    assert_eq!(got[0], Ok(ints(&[1, 3])));
    assert_eq!(got[1], Ok(ints(&[2])));
    assert_eq!(got[2], Ok(ints(&[1, 3])));
    assert_eq!(got[3], Ok(ints(&[1])));
    assert_eq!(got[4], Ok(ints(&[3])));
    // a2: b2 (a_id 1) is not 2; a1: b1's a_id is 1; a3: b3's a_id is 3.
    assert_eq!(got[5], Ok(ints(&[2])));
    assert_eq!(got[6], Ok(ints(&[1, 3])));
    // a1 has two rows in b: as PostgreSQL, "more than one row returned by a subquery".
    assert_eq!(got[7], Err("21000".into()));
}

#[test]
fn a_correlated_subquery_reads_each_key_once_and_missing_keys_too() {
    let (shared, got) = results(&[
        "SELECT id FROM b WHERE EXISTS (SELECT 1 FROM a WHERE a.id = b.a_id AND a.k > 15)",
        "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.a_id = a.id)",
        "SELECT id FROM b WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.id = b.a_id + 10)",
    ]);
    assert_eq!(got[0], Ok(ints(&[3])));
    assert_eq!(got[1], Ok(ints(&[1, 3])));
    assert_eq!(got[2], Ok(ints(&[1, 2, 3])));
    let h = history(&shared);
    // A key lookup per distinct outer value: a[id=1] once for b1 and b2, a[id=2] never.
    assert_eq!(
        ops_of(&h, "SELECT id FROM b WHERE EXISTS"),
        [
            (R, "b[id=1]".to_string()),
            (R, "b[id=2]".into()),
            (R, "b[id=3]".into()),
            (R, "b.a_id[id=1]".into()),
            (R, "a[id=1]".into()),
            (R, "a.k[id=1]".into()),
            (R, "b.a_id[id=2]".into()),
            (R, "b.a_id[id=3]".into()),
            (R, "a[id=3]".into()),
            (R, "a.k[id=3]".into()),
        ]
    );
    // A scan of b per row of a: b's keys read once in the statement.
    let scan = ops_of(&h, "SELECT id FROM a WHERE EXISTS");
    assert_eq!(
        keys(&scan),
        [
            "a[id=1]",
            "a[id=2]",
            "a[id=3]",
            "b[id=1]",
            "b[id=2]",
            "b[id=3]",
            "b.a_id[id=1]",
            "b.a_id[id=2]",
            "b.a_id[id=3]",
        ]
    );
    // Keys that do not exist are read (an insert of a[id=11] would change the answer).
    let missing = ops_of(&h, "SELECT id FROM b WHERE NOT EXISTS");
    assert!(missing.contains(&(R, "a[id=11]".into())), "{missing:?}");
    assert!(missing.contains(&(R, "a[id=13]".into())), "{missing:?}");
}

#[test]
fn subqueries_in_the_select_list_and_order_by() {
    let (_, got) = results(&[
        "SELECT id, (SELECT count(*) FROM b WHERE b.a_id = a.id) AS n, \
         (SELECT max(v) FROM b WHERE b.a_id = a.id) FROM a ORDER BY id",
        "SELECT id, (SELECT count(*) FROM b) FROM a WHERE id = 1",
        "SELECT EXISTS (SELECT 1 FROM b WHERE v > 8), (SELECT min(k) FROM a)",
        "SELECT id FROM a ORDER BY (SELECT count(*) FROM b WHERE b.a_id = a.id) DESC, id",
        "SELECT id, EXISTS (SELECT 1 FROM b WHERE b.a_id = a.id) FROM a WHERE id < 3 ORDER BY 1",
        "SELECT (SELECT id, v FROM b WHERE id = 1)",
    ]);
    let n = Value::Null;
    let t = Value::Bool(true);
    let f = Value::Bool(false);
    assert_eq!(
        got[0],
        Ok(rows(&[
            &[I(1), I(2), I(7)],
            &[I(2), I(0), n.clone()],
            &[I(3), I(1), I(9)]
        ]))
    );
    assert_eq!(got[1], Ok(rows(&[&[I(1), I(3)]])));
    assert_eq!(got[2], Ok(rows(&[&[t.clone(), I(10)]])));
    assert_eq!(got[3], Ok(ints(&[1, 3, 2])));
    assert_eq!(got[4], Ok(rows(&[&[I(1), t], &[I(2), f]])));
    assert_eq!(got[5], Err("42601".into()));
}

/// The fields a statement describes before it runs (RowDescription): a subquery's column
/// is named and typed as PostgreSQL names and types it.
#[test]
fn a_scalar_subquery_s_column_is_named_and_typed_after_its_own() {
    let shared = Shared::new(Duration::from_secs(2));
    let fields = block_on(async {
        let mut s = Session::open(&shared, Some("app"));
        run(&shared, &mut s, TABLES).await.unwrap();
        let sql = "SELECT id, (SELECT count(*) FROM b WHERE b.a_id = a.id), \
                   (SELECT max(v) AS top FROM b), EXISTS (SELECT 1 FROM b), \
                   COALESCE(k, 0) FROM a";
        let stmt = parse(sql).unwrap().remove(0);
        let (r, _) = s.run(&shared, &stmt, sql, &[], &[]).await;
        s.close(&shared);
        match r.unwrap() {
            Outcome::Rows { fields, .. } => fields,
            Outcome::Done(_) => panic!("rows expected"),
        }
    });
    let got: Vec<(&str, SqlType)> = fields.iter().map(|f| (f.name.as_str(), f.ty)).collect();
    assert_eq!(
        got,
        [
            ("id", SqlType::Int4),
            ("count", SqlType::Int8),
            ("top", SqlType::Int4),
            ("exists", SqlType::Bool),
            ("coalesce", SqlType::Int4),
        ]
    );
}

#[test]
fn update_and_delete_with_correlated_subqueries() {
    let (shared, got) = results(&[
        "UPDATE a SET k = k + 1 WHERE EXISTS (SELECT 1 FROM b WHERE b.a_id = a.id AND b.v > 8)",
        "DELETE FROM b WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.id = b.a_id) RETURNING id",
        "DELETE FROM b WHERE v < (SELECT max(v) FROM b b2 WHERE b2.a_id = b.a_id) RETURNING id",
        "SELECT id, k FROM a ORDER BY id",
        "SELECT id FROM b ORDER BY id",
        "UPDATE a SET k = (SELECT count(*) FROM b WHERE b.a_id = a.id) WHERE id < 3",
        "SELECT k FROM a ORDER BY id",
    ]);
    assert!(got[0].is_ok(), "{:?}", got[0]);
    assert_eq!(got[1], Ok(Vec::new()));
    assert_eq!(got[2], Ok(ints(&[1])));
    let k = |i, v| vec![I(i), I(v)];
    assert_eq!(got[3], Ok(vec![k(1, 10), k(2, 20), k(3, 31)]));
    assert_eq!(got[4], Ok(ints(&[2, 3])));
    // After the delete b has (2, 1, 7) and (3, 3, 9): a1 counts one, a2 none.
    assert_eq!(got[6], Ok(ints(&[1, 0, 31])));
    let h = history(&shared);
    // The update read a3's k (locked: the statement wrote it) once, then wrote it.
    let update = ops_of(&h, "UPDATE a SET k = k + 1");
    assert_eq!(update.last(), Some(&(W, "a.k[id=3]".to_string())));
    assert_eq!(
        update.iter().filter(|(_, k)| k == "b.v[id=3]").count(),
        1,
        "{update:?}"
    );
}

#[test]
fn having_aggregates_inside_expressions_and_distinct_on() {
    let (_, got) = results(&[
        "SELECT a_id, count(*), COALESCE(max(v), 0) + 1, sum(v) * 2, count(*) > 1 \
         FROM b GROUP BY a_id ORDER BY a_id",
        "SELECT a_id FROM b GROUP BY a_id HAVING sum(v) > 10",
        "SELECT COALESCE(max(v), 0), count(*) FROM b WHERE v > 100",
        "SELECT count(DISTINCT a_id), count(*) FILTER (WHERE v > 6), sum(DISTINCT v % 2) FROM b",
        "SELECT a_id % 2 AS odd, count(*) FROM b GROUP BY 1 ORDER BY odd",
        "SELECT a_id, max(v) - min(v) AS spread FROM b GROUP BY a_id ORDER BY spread DESC",
        "SELECT DISTINCT ON (a_id) a_id, v FROM b ORDER BY a_id, v DESC",
        "SELECT DISTINCT ON (a_id) a_id, id FROM b ORDER BY a_id, id LIMIT 1 OFFSET 1",
        "SELECT count(*) FROM b HAVING count(*) > 5",
        "SELECT a.id, (SELECT count(*) FROM b WHERE b.a_id = a.id) FROM a GROUP BY a.id \
         HAVING a.id > 1 ORDER BY a.id",
        "SELECT count(*) OVER () FROM b",
        "SELECT a_id, string_agg(v::text, ', '), bool_and(v > 5), bool_or(v > 8) FROM b \
         GROUP BY a_id ORDER BY a_id",
    ]);
    let t = Value::Bool(true);
    let f = Value::Bool(false);
    assert_eq!(
        got[0],
        Ok(rows(&[
            &[I(1), I(2), I(8), I(24), t.clone()],
            &[I(3), I(1), I(10), I(18), f.clone()]
        ]))
    );
    assert_eq!(got[1], Ok(ints(&[1])));
    assert_eq!(got[2], Ok(rows(&[&[I(0), I(0)]])));
    // Distinct a_id: 1, 3; v > 6: 7, 9; distinct v % 2: 1 only.
    assert_eq!(got[3], Ok(rows(&[&[I(2), I(2), I(1)]])));
    assert_eq!(got[4], Ok(rows(&[&[I(1), I(3)]])));
    assert_eq!(got[5], Ok(rows(&[&[I(1), I(2)], &[I(3), I(0)]])));
    assert_eq!(got[6], Ok(rows(&[&[I(1), I(7)], &[I(3), I(9)]])));
    assert_eq!(got[7], Ok(rows(&[&[I(3), I(3)]])));
    assert_eq!(got[8], Ok(Vec::new()));
    assert_eq!(got[9], Ok(rows(&[&[I(2), I(0)], &[I(3), I(1)]])));
    assert_eq!(got[10], Err("0A000".into()));
    assert_eq!(
        got[11],
        Ok(rows(&[
            &[I(1), Value::text("5, 7"), f.clone(), f.clone()],
            &[I(3), Value::text("9"), t.clone(), t.clone()]
        ]))
    );
}
