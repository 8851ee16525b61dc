//! A connection's SQL cursors — `DECLARE name CURSOR [WITH HOLD] FOR query`, `FETCH`,
//! `CLOSE` — as PostgreSQL keeps them (its documentation, "DECLARE", "FETCH", "CLOSE"). Django
//! iterates a queryset (`.iterator()`) and psycopg's named cursors read through them.
//!
//! A cursor's query runs when it is declared, its reads recorded as the DECLARE statement's;
//! FETCH then hands out the rows it kept and records nothing. PostgreSQL reads a cursor's rows
//! lazily, but from the snapshot its DECLARE took, so the rows and the versions they were read
//! from are the same (and recording runs one transaction at a time). Cursors move forward only:
//! FETCH NEXT, FORWARD n, n, ALL, FORWARD ALL; the others (PRIOR, ABSOLUTE, BACKWARD, …) are
//! refused. A cursor ends with its transaction, unless declared WITH HOLD and its transaction
//! committed; a rollback drops the cursors the transaction declared.

use sqlparser::ast::{CloseCursor, Declare, DeclareType, FetchDirection, Statement};

use super::sql::eval::ident;
use super::sql::{Field, Outcome, SqlError};
use crate::store::Value;

/// One open cursor.
#[derive(Debug)]
struct Cursor {
    name: String,
    fields: Vec<Field>,
    rows: std::vec::IntoIter<Vec<Value>>,
    /// WITH HOLD: it outlives the transaction's commit.
    hold: bool,
    /// Its transaction committed (a held cursor then survives a later rollback).
    committed: bool,
}

/// A connection's open cursors.
#[derive(Debug, Default)]
pub struct Cursors {
    open: Vec<Cursor>,
}

/// What a DECLARE asks for, checked before its query runs.
pub struct Declared {
    /// The cursor's name.
    pub name: String,
    /// WITH HOLD.
    pub hold: bool,
    /// The query whose rows it hands out.
    pub query: Statement,
}

impl Cursors {
    /// The cursor a DECLARE statement (its `declares`) declares, or why it cannot: `in_block`
    /// tells whether a transaction block is open (a cursor without HOLD lives only in one).
    pub fn declare(&self, declares: &[Declare], in_block: bool) -> Result<Declared, SqlError> {
        let [d] = declares else {
            return Err(SqlError::unsupported("several DECLAREs in one statement"));
        };
        if d.declare_type != Some(DeclareType::Cursor) {
            return Err(SqlError::unsupported(format!("DECLARE {d} (only cursors)")));
        }
        let [name] = d.names.as_slice() else {
            return Err(SqlError::unsupported("DECLARE of several cursors at once"));
        };
        let name = ident(name);
        let Some(query) = &d.for_query else {
            return Err(SqlError::unsupported("DECLARE without a cursor query"));
        };
        if d.binary == Some(true) {
            return Err(SqlError::unsupported("DECLARE … BINARY CURSOR"));
        }
        let hold = d.hold == Some(true);
        if !hold && !in_block {
            return Err(SqlError::new(
                "25P01",
                "DECLARE CURSOR can only be used in transaction blocks",
            ));
        }
        if self.open.iter().any(|c| c.name == name) {
            return Err(SqlError::new(
                "42P03",
                format!("cursor \"{name}\" already exists"),
            ));
        }
        Ok(Declared {
            name,
            hold,
            query: Statement::Query(query.clone()),
        })
    }

    /// Keeps a declared cursor with its query's outcome. `committed`: its transaction already
    /// committed (a held cursor declared outside a block runs as a transaction of its own).
    pub fn open(&mut self, declared: Declared, outcome: Outcome, committed: bool) -> Outcome {
        let (fields, rows) = match outcome {
            Outcome::Rows { fields, rows, .. } => (fields, rows),
            Outcome::Done(_) => (Vec::new(), Vec::new()),
        };
        self.open.push(Cursor {
            name: declared.name,
            fields,
            rows: rows.into_iter(),
            hold: declared.hold,
            committed,
        });
        Outcome::Done("DECLARE CURSOR".into())
    }

    /// FETCH: the next rows of the cursor, tagged `FETCH n`.
    pub fn fetch(
        &mut self,
        name: &sqlparser::ast::Ident,
        direction: &FetchDirection,
    ) -> Result<Outcome, SqlError> {
        let count = match direction {
            FetchDirection::Next | FetchDirection::Forward { limit: None } => Some(1),
            FetchDirection::Count { limit } | FetchDirection::Forward { limit: Some(limit) } => {
                Some(row_count(&limit.value)?)
            }
            FetchDirection::All | FetchDirection::ForwardAll => None,
            other => {
                return Err(SqlError::unsupported(format!(
                    "FETCH {other} (cursors move forward only)"
                )))
            }
        };
        let cursor = self.find(name)?;
        let rows: Vec<Vec<Value>> = match count {
            Some(n) => cursor.rows.by_ref().take(n).collect(),
            None => cursor.rows.by_ref().collect(),
        };
        Ok(Outcome::Rows {
            fields: cursor.fields.clone(),
            count: rows.len(),
            rows,
            tag: "FETCH",
        })
    }

    /// The fields a FETCH from the cursor returns (Describe), or why there are none.
    pub fn fields(&mut self, name: &sqlparser::ast::Ident) -> Result<Vec<Field>, SqlError> {
        Ok(self.find(name)?.fields.clone())
    }

    /// CLOSE name, or CLOSE ALL.
    pub fn close(&mut self, which: &CloseCursor) -> Result<Outcome, SqlError> {
        match which {
            CloseCursor::All => self.open.clear(),
            CloseCursor::Specific { name } => {
                let name = ident(name);
                let Some(at) = self.open.iter().position(|c| c.name == name) else {
                    return Err(does_not_exist(&name));
                };
                self.open.remove(at);
            }
        }
        Ok(Outcome::Done("CLOSE CURSOR".into()))
    }

    /// The transaction ended: a commit keeps the cursors declared WITH HOLD, a rollback only
    /// those held from transactions that committed before.
    pub fn end_of_transaction(&mut self, committed: bool) {
        self.open.retain(|c| c.hold && (committed || c.committed));
        for c in &mut self.open {
            c.committed = true;
        }
    }

    fn find(&mut self, name: &sqlparser::ast::Ident) -> Result<&mut Cursor, SqlError> {
        let name = ident(name);
        self.open
            .iter_mut()
            .find(|c| c.name == name)
            .ok_or_else(|| does_not_exist(&name))
    }
}

fn does_not_exist(name: &str) -> SqlError {
    SqlError::new("34000", format!("cursor \"{name}\" does not exist"))
}

/// A FETCH count: a non-negative integer literal.
fn row_count(v: &sqlparser::ast::Value) -> Result<usize, SqlError> {
    match v {
        sqlparser::ast::Value::Number(n, _) => n.parse::<usize>().map_err(|_| {
            SqlError::unsupported(format!("FETCH {n} (a backward or oversized count)"))
        }),
        other => Err(SqlError::unsupported(format!("FETCH {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::sql::catalog::SqlType;

    fn parse(sql: &str) -> Statement {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        sqlparser::parser::Parser::parse_sql(&dialect, sql)
            .unwrap()
            .remove(0)
    }

    fn declare_of(s: &Statement) -> &[Declare] {
        match s {
            Statement::Declare { stmts, .. } => stmts,
            other => panic!("not a DECLARE: {other}"),
        }
    }

    fn rows(n: i64) -> Outcome {
        Outcome::select(
            vec![Field {
                name: "id".into(),
                ty: SqlType::Int4,
            }],
            (1..=n).map(|i| vec![Value::Int(i)]).collect(),
        )
    }

    fn fetch(cursors: &mut Cursors, sql: &str) -> Result<Vec<i64>, SqlError> {
        let Statement::Fetch {
            name, direction, ..
        } = parse(sql)
        else {
            panic!("not a FETCH")
        };
        match cursors.fetch(&name, &direction)? {
            Outcome::Rows {
                rows, tag, count, ..
            } => {
                assert_eq!((tag, count), ("FETCH", rows.len()));
                Ok(rows
                    .iter()
                    .map(|r| match r[0] {
                        Value::Int(i) => i,
                        _ => unreachable!(),
                    })
                    .collect())
            }
            Outcome::Done(t) => panic!("{t}"),
        }
    }

    #[test]
    fn fetch_hands_out_the_rows_forward_as_psycopg_and_django_ask() {
        let mut cursors = Cursors::default();
        let s = parse("DECLARE \"c_1\" NO SCROLL CURSOR WITHOUT HOLD FOR SELECT id FROM t");
        let declared = cursors.declare(declare_of(&s), true).unwrap();
        assert_eq!(declared.query, parse("SELECT id FROM t"));
        cursors.open(declared, rows(5), false);
        assert_eq!(
            fetch(&mut cursors, "FETCH FORWARD 2 FROM \"c_1\"").unwrap(),
            [1, 2]
        );
        assert_eq!(fetch(&mut cursors, "FETCH NEXT FROM c_1").unwrap(), [3]);
        assert_eq!(fetch(&mut cursors, "FETCH ALL FROM c_1").unwrap(), [4, 5]);
        assert_eq!(
            fetch(&mut cursors, "FETCH 10 FROM c_1").unwrap(),
            Vec::<i64>::new()
        );
        let backward = fetch(&mut cursors, "FETCH BACKWARD 1 FROM c_1").unwrap_err();
        assert_eq!(backward.code, "0A000");
        let Statement::Close { cursor } = parse("CLOSE c_1") else {
            panic!()
        };
        cursors.close(&cursor).unwrap();
        let gone = fetch(&mut cursors, "FETCH NEXT FROM c_1").unwrap_err();
        assert_eq!(gone.code, "34000");
    }

    #[test]
    fn a_cursor_lives_in_its_transaction_unless_held_and_committed() {
        let mut cursors = Cursors::default();
        let plain = parse("DECLARE a CURSOR FOR SELECT id FROM t");
        let err = cursors.declare(declare_of(&plain), false).err().unwrap();
        assert_eq!(err.code, "25P01");
        let held = parse("DECLARE h CURSOR WITH HOLD FOR SELECT id FROM t");
        for s in [&plain, &held] {
            let d = cursors.declare(declare_of(s), true).unwrap();
            cursors.open(d, rows(2), false);
        }
        let again = cursors.declare(declare_of(&plain), true).err().unwrap();
        assert_eq!(again.code, "42P03");
        cursors.end_of_transaction(true);
        assert_eq!(fetch(&mut cursors, "FETCH ALL FROM h").unwrap(), [1, 2]);
        assert_eq!(
            fetch(&mut cursors, "FETCH ALL FROM a").unwrap_err().code,
            "34000"
        );
        // A held cursor from a committed transaction outlives a later rollback; one declared
        // in the rolled-back transaction does not.
        let held2 = parse("DECLARE h2 CURSOR WITH HOLD FOR SELECT id FROM t");
        let d = cursors.declare(declare_of(&held2), true).unwrap();
        cursors.open(d, rows(1), false);
        cursors.end_of_transaction(false);
        assert!(fetch(&mut cursors, "FETCH ALL FROM h").is_ok());
        assert_eq!(
            fetch(&mut cursors, "FETCH ALL FROM h2").unwrap_err().code,
            "34000"
        );
    }
}
