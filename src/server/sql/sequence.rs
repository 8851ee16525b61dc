//! Sequences — `CREATE SEQUENCE` and the ones behind SERIAL and identity columns
//! (`acct_id_seq`) — with `nextval`, `currval`, `setval`, `lastval` and
//! `pg_get_serial_sequence`, kept as PostgreSQL keeps them: outside transactions
//! (PostgreSQL documentation, "Sequence Manipulation Functions"). A value `nextval` handed
//! out is never handed out again, even when its transaction rolls back, and every other
//! connection's next `nextval` sees the increment at once, whatever the isolation level.
//!
//! So a sequence is no transactional data and its calls are recorded as nothing, as SERIAL
//! values always were here: the values they return are recorded where the statement stores
//! them (a row's key or cell). Recording `nextval` as a read and a write of one key would make
//! every two inserts into a table a lost update that no database shows (the reason MonkeyDB's
//! `LastPrimaryKey` is not used either, see [`super::catalog`]).
//!
//! `currval` and `lastval` are per connection: the value this connection's latest `nextval`
//! (of that sequence, of any) returned.

use rustc_hash::FxHashMap;

use super::SqlError;
use crate::store::{SessionId, Value};

/// One sequence.
#[derive(Debug, Clone)]
pub struct Sequence {
    /// Its name (`acct_id_seq`).
    pub name: String,
    /// The value the next `nextval` returns.
    next: i64,
    increment: i64,
    /// The column it belongs to (`table`, `column`), for SERIAL and identity columns.
    pub owner: Option<(String, String)>,
}

/// The sequences, and what each connection's `nextval` last returned.
#[derive(Debug, Default)]
pub struct Sequences {
    list: Vec<Sequence>,
    by_name: FxHashMap<String, usize>,
    current: FxHashMap<(SessionId, usize), i64>,
    last_used: FxHashMap<SessionId, usize>,
}

impl Sequences {
    /// Creates sequence `name` starting at `start`, counting by `increment`.
    pub fn create(
        &mut self,
        name: &str,
        start: i64,
        increment: i64,
        owner: Option<(String, String)>,
    ) -> Result<usize, SqlError> {
        if self.by_name.contains_key(name) {
            return Err(SqlError::new(
                "42P07",
                format!("relation \"{name}\" already exists"),
            ));
        }
        if increment == 0 {
            return Err(SqlError::new("22023", "INCREMENT must not be zero"));
        }
        let s = self.list.len();
        self.list.push(Sequence {
            name: name.to_string(),
            next: start,
            increment,
            owner,
        });
        self.by_name.insert(name.to_string(), s);
        Ok(s)
    }

    /// The sequence of SERIAL or identity column `column` of `table`: `table_column_seq`, or
    /// with a number after it when that name is taken (as PostgreSQL names it).
    pub fn create_for_column(&mut self, table: &str, column: &str) -> usize {
        let base = format!("{table}_{column}_seq");
        let mut name = base.clone();
        let mut n = 0;
        while self.by_name.contains_key(&name) {
            n += 1;
            name = format!("{base}{n}");
        }
        let owner = Some((table.to_string(), column.to_string()));
        self.create(&name, 1, 1, owner)
            .expect("a free name and a non-zero increment")
    }

    /// The sequence named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Sequence number `s`.
    pub fn get(&self, s: usize) -> &Sequence {
        &self.list[s]
    }

    /// Removes sequence `name`; `false`: there is none.
    pub fn drop_sequence(&mut self, name: &str) -> bool {
        self.by_name.remove(name).is_some()
    }

    /// Removes the sequences of `table`'s columns (DROP TABLE drops them in PostgreSQL).
    pub fn drop_owned_by(&mut self, table: &str) {
        let list = &self.list;
        self.by_name
            .retain(|_, s| list[*s].owner.as_ref().map_or(true, |(t, _)| t != table));
    }

    /// The next value of sequence `s`, taken by connection `session`.
    pub fn nextval(&mut self, session: SessionId, s: usize) -> Result<i64, SqlError> {
        let seq = &mut self.list[s];
        let v = seq.next;
        seq.next = v.checked_add(seq.increment).ok_or_else(|| {
            SqlError::new(
                "2200H",
                format!(
                    "nextval: reached maximum value of sequence \"{}\"",
                    seq.name
                ),
            )
        })?;
        self.current.insert((session, s), v);
        self.last_used.insert(session, s);
        Ok(v)
    }

    /// A sequence function's value (`nextval`, `currval`, `setval`, `lastval`,
    /// `pg_get_serial_sequence`) for connection `session`; `None`: `name` is none of them.
    pub fn call(
        &mut self,
        session: SessionId,
        name: &str,
        args: &[Value],
    ) -> Option<Result<Value, SqlError>> {
        let named = |this: &Self, v: &Value| -> Result<usize, SqlError> {
            let n = sequence_name(v);
            this.find(&n).ok_or_else(|| SqlError::undefined_table(&n))
        };
        let result = match (name, args) {
            ("nextval", [v]) => named(self, v).and_then(|s| self.nextval(session, s)),
            ("currval", [v]) => named(self, v).and_then(|s| {
                self.current.get(&(session, s)).copied().ok_or_else(|| {
                    SqlError::new(
                        "55000",
                        format!(
                            "currval of sequence \"{}\" is not yet defined in this session",
                            self.list[s].name
                        ),
                    )
                })
            }),
            ("lastval", []) => self
                .last_used
                .get(&session)
                .and_then(|s| self.current.get(&(session, *s)).copied())
                .ok_or_else(|| {
                    SqlError::new("55000", "lastval is not yet defined in this session")
                }),
            ("setval", [v, to, rest @ ..]) if rest.len() <= 1 => {
                let called = !matches!(rest, [Value::Bool(false)]);
                named(self, v).and_then(|s| {
                    let to = to
                        .as_f64()
                        .map(|f| f as i64)
                        .ok_or_else(|| SqlError::new("22P02", format!("setval: {to}")))?;
                    let seq = &mut self.list[s];
                    seq.next = if called { to + seq.increment } else { to };
                    Ok(to)
                })
            }
            ("pg_get_serial_sequence", [table, column]) => {
                let (t, c) = (sequence_name(table), sequence_name(column));
                let found = self.by_name.values().map(|&s| &self.list[s]).find(|s| {
                    s.owner
                        .as_ref()
                        .is_some_and(|(ot, oc)| *ot == t && *oc == c)
                });
                return Some(Ok(found.map_or(Value::Null, |s| {
                    Value::text(&format!("public.{}", s.name))
                })));
            }
            ("nextval" | "currval" | "lastval" | "setval" | "pg_get_serial_sequence", _) => {
                Err(SqlError::new(
                    "42883",
                    format!("function {name} with these arguments does not exist"),
                ))
            }
            _ => return None,
        };
        Some(result.map(Value::Int))
    }
}

/// A sequence (or table, column) name given as text, as PostgreSQL reads a `regclass`:
/// unquoted parts folded to lower case, a `public.` schema dropped (`'Public.Acct_id_seq'` is
/// `acct_id_seq`, `'"Acct"'` is `Acct`).
fn sequence_name(v: &Value) -> String {
    let text = match v {
        Value::Text(t) => t.to_string(),
        other => other.to_string(),
    };
    let last = match text.rsplit_once('.') {
        Some((schema, name)) if schema.trim_matches('"').eq_ignore_ascii_case("public") => name,
        _ => text.as_str(),
    };
    match last.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        Some(quoted) => quoted.replace("\"\"", "\""),
        None => last.to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(seqs: &mut Sequences, session: SessionId, f: &str, args: &[Value]) -> Value {
        seqs.call(session, f, args)
            .expect("a sequence function")
            .unwrap()
    }

    #[test]
    fn nextval_counts_for_everyone_and_currval_is_per_connection() {
        let mut seqs = Sequences::default();
        let s = seqs.create_for_column("acct", "id");
        assert_eq!(seqs.get(s).name, "acct_id_seq");
        let name = Value::text("public.acct_id_seq");
        assert_eq!(
            call(&mut seqs, 1, "nextval", std::slice::from_ref(&name)),
            Value::Int(1)
        );
        assert_eq!(
            call(&mut seqs, 2, "nextval", std::slice::from_ref(&name)),
            Value::Int(2)
        );
        assert_eq!(
            call(&mut seqs, 1, "currval", std::slice::from_ref(&name)),
            Value::Int(1)
        );
        assert_eq!(call(&mut seqs, 2, "lastval", &[]), Value::Int(2));
        let unset = seqs
            .call(3, "currval", std::slice::from_ref(&name))
            .unwrap()
            .unwrap_err();
        assert_eq!(unset.code, "55000");
        assert_eq!(
            call(&mut seqs, 3, "setval", &[name.clone(), Value::Int(10)]),
            Value::Int(10)
        );
        assert_eq!(
            call(&mut seqs, 3, "nextval", std::slice::from_ref(&name)),
            Value::Int(11)
        );
        assert_eq!(
            call(
                &mut seqs,
                3,
                "pg_get_serial_sequence",
                &[Value::text("acct"), Value::text("id")]
            ),
            Value::text("public.acct_id_seq")
        );
        // A second SERIAL column of the same name elsewhere gets another name.
        let again = seqs.create_for_column("acct", "id");
        assert_eq!(seqs.get(again).name, "acct_id_seq1");
        seqs.drop_owned_by("acct");
        let gone = seqs.call(1, "nextval", &[name]).unwrap().unwrap_err();
        assert_eq!(gone.code, "42P01");
        assert!(seqs.call(1, "lower", &[Value::text("x")]).is_none());
    }

    #[test]
    fn created_sequences_start_and_count_as_declared() {
        let mut seqs = Sequences::default();
        seqs.create("ticket", 100, -10, None).unwrap();
        let t = Value::text("\"ticket\"");
        assert_eq!(
            call(&mut seqs, 1, "nextval", std::slice::from_ref(&t)),
            Value::Int(100)
        );
        assert_eq!(call(&mut seqs, 1, "nextval", &[t]), Value::Int(90));
        assert_eq!(seqs.create("ticket", 1, 1, None).unwrap_err().code, "42P07");
        assert_eq!(seqs.create("zero", 1, 0, None).unwrap_err().code, "22023");
    }
}
