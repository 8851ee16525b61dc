//! Each statement kind translated onto the store's reads and writes (MonkeyDB's translation,
//! OOPSLA'21, at row/column granularity with the application's names; IsoPredict PLDI'24 §6).
//!
//! Finding rows: a WHERE clause that pins every primary-key column by equality (or `IN` on a
//! one-column key) reads only those rows' memberships (a row never inserted too: that read is
//! the phantom check); any other clause scans, reading the membership of every row ever
//! inserted, so an insert into the scanned range conflicts with the scan. For each present
//! row, the cells the statement needs are read once each, in the order it needs them.
//!
//! - SELECT: memberships, then per present row the WHERE cells, then the projected ones;
//!   ORDER BY, LIMIT/OFFSET, aggregates and GROUP BY are computed over the rows read (LIMIT
//!   does not shorten the scan). Joins read what an index nested-loop join reads ([`join`]);
//!   subqueries in FROM and CTEs run first as SELECTs of their own ([`derived`]).
//! - UPDATE: as SELECT, then per matching row each assigned cell is written (assignments
//!   see the row's old values). Reads of cells the statement then writes are *locked*.
//! - DELETE: as SELECT, then one membership delete per matching row; TRUNCATE as a DELETE
//!   without WHERE of each table.
//! - INSERT: per row, a membership read (the uniqueness check, locked) then the membership
//!   insert and one write per non-key cell; SERIAL values and row numbers come from a
//!   non-transactional sequence, as PostgreSQL's `nextval` is never rolled back. `ON CONFLICT
//!   DO NOTHING` stops at the membership read; `DO UPDATE` reads and writes the existing row
//!   (locked).
//! - `FOR UPDATE`/`FOR SHARE`: the cells read become locked when the transaction writes them
//!   later (the row lock held to commit makes the read and the write atomic).
//!
//! Concurrency control ([`Locking`], the server's two-phase locking): before a row's existence
//! is read, the row is locked under its table's intention lock (exclusive for UPDATE, DELETE,
//! INSERT and `FOR UPDATE/SHARE`, else the session's read mode); a scan locks the whole table
//! instead; an INSERT takes the table's intention-exclusive lock first. A request that must
//! wait stops the statement with SQLSTATE 55P03; the session undoes it, waits, and runs it
//! again.
//!
//! Subqueries (in WHERE, the select list, ORDER BY, HAVING): one that names no column of the
//! outer statement's row runs once, one that does (correlated) once per distinct values of
//! those columns; either is recorded as the reads its SELECT makes. A statement with a
//! subquery reads each key at most once (the first read's value serves the later ones, as one
//! statement reads one snapshot in PostgreSQL), so a key scanned for every outer row is one
//! read, not one per row; a join reads each key once the same way, however many
//! combinations its row is part of.
//!
//! One file per concern: [`rows`] finds a table's rows (keys pinned or a scan, locks),
//! [`from_clause`] the FROM clause's tree, [`join`] the nested loop over it, [`derived`]
//! subqueries in FROM and CTEs, [`project`] the result columns, [`select`] and [`aggregate`] SELECT (aggregates inside
//! expressions, HAVING), [`subquery`] and [`correlate`] the subqueries, [`order`] ORDER BY,
//! DISTINCT ON and LIMIT, [`insert`] INSERT and
//! COPY's rows, [`update`] UPDATE (and ON CONFLICT's assignments), [`delete`] DELETE and
//! TRUNCATE, [`ddl`] the schema statements ([`alter`] ALTER TABLE), [`values`] VALUES as a table in FROM, [`unnest`] UNNEST of arrays as an INSERT's source. Transaction control is the session's
//! ([`crate::server::session`]).

mod aggregate;
mod alter;
mod correlate;
mod ddl;
mod delete;
mod derived;
mod from_clause;
mod insert;
mod join;
mod order;
mod project;
mod rows;
mod select;
mod subquery;
#[cfg(test)]
mod tests_migrations;
#[cfg(test)]
mod tests_subquery;
mod unnest;
mod update;
mod values;

pub use ddl::schema;
pub use insert::insert_rows;
pub use select::describe;

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use sqlparser::ast::{SetExpr, TableFactor};

use super::catalog::Catalog;
use super::catalog::SqlType;
use super::eval::{ident, object_name, Columns};
use super::{Field, Outcome, SqlError};
use crate::server::locks::{Mode, Resource};
use crate::store::{EmbeddedTx, KeyRef, KvRead, SessionId, Value};
use delete::{delete, truncate};
use insert::insert;
use select::select;
use update::update;

/// What one statement's events were, for the recording: the reads (event index in the
/// transaction, key) and writes it made, and which reads are locked.
#[derive(Debug, Default)]
pub struct StatementNotes {
    reads: Vec<(u32, KeyRef)>,
    writes: FxHashSet<KeyRef>,
    /// Reads made under `FOR UPDATE`/`FOR SHARE`: locked if the transaction writes the key
    /// later.
    pub lock_candidates: Vec<(u32, KeyRef)>,
    /// Reads the same statement then wrote (event index in the transaction).
    pub locked: Vec<u32>,
    for_update: bool,
    /// Whether each key is read once only (a statement with subqueries, which may read a key
    /// once per outer row): then `seen` holds the value each key read first.
    once: bool,
    seen: FxHashMap<KeyRef, Value>,
}

impl StatementNotes {
    /// Clears the notes for the next statement (keeping their room).
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.lock_candidates.clear();
        self.locked.clear();
        self.for_update = false;
        self.once = false;
        self.seen.clear();
    }

    /// Reads cell `key` through `tx`, recording the read (once per statement when `once`).
    fn read_cell(&mut self, tx: &mut EmbeddedTx<'_>, key: u64) -> Value {
        let k = KeyRef::Plain(key);
        if self.once {
            if let Some(v) = self.seen.get(&k) {
                return v.clone();
            }
        }
        let event = tx.event_count() as u32;
        let v = tx.get(key).unwrap_or(Value::Null);
        self.reads.push((event, k));
        if self.once {
            self.seen.insert(k, v.clone());
        }
        v
    }

    /// Reads whether row `elem` of `set` exists, recording the read (once per statement when
    /// `once`).
    fn read_member(&mut self, tx: &mut EmbeddedTx<'_>, set: u64, elem: u64) -> bool {
        let k = KeyRef::Member { set, elem };
        if self.once {
            if let Some(v) = self.seen.get(&k) {
                return matches!(v, Value::Bool(true));
            }
        }
        let event = tx.event_count() as u32;
        let present = tx.set_contains(set, elem);
        self.reads.push((event, k));
        if self.once {
            self.seen.insert(k, Value::Bool(present));
        }
        present
    }

    fn finish(&mut self) {
        for &(event, key) in &self.reads {
            if self.writes.contains(&key) {
                self.locked.push(event);
            } else if self.for_update {
                self.lock_candidates.push((event, key));
            }
        }
    }
}

/// Where a statement asks for its locks before it reads or writes (the server's concurrency
/// control, [`crate::server::database::TxnLocking`]).
pub trait Locking {
    /// Locks `resource` in `mode`; `false`: the request waits, the statement must stop.
    fn lock(&mut self, resource: Resource, mode: Mode) -> bool;
}

/// A statement's context: the catalog, the running transaction, the bound parameters.
pub struct Exec<'a, 't> {
    /// The tables.
    pub catalog: &'a mut Catalog,
    /// The transaction the statement runs in.
    pub tx: &'a mut EmbeddedTx<'t>,
    /// `$1`, `$2`, …
    pub params: &'a [Value],
    /// What the statement read and wrote.
    pub notes: &'a mut StatementNotes,
    /// The transaction's locks.
    pub locks: &'a mut dyn Locking,
    /// The row lock mode of plain reads (S, or X inside a transaction block: a read there may
    /// be followed by a write of the row, and two shared locks upgraded would deadlock).
    pub read_lock: Mode,
    /// The common table expressions (`WITH`) in scope, innermost last.
    pub with: Vec<WithTable>,
}

/// A common table expression in scope: its name, column names, query, and its rows once run
/// (it runs when first named, once per statement).
pub struct WithTable {
    name: String,
    columns: Vec<String>,
    query: Box<sqlparser::ast::Query>,
    rows: Option<Arc<Derived>>,
}

/// Locks `resource` in `mode` (a row under its table's intention lock), or stops the
/// statement to wait.
fn lock(x: &mut Exec<'_, '_>, resource: Resource, mode: Mode) -> Result<(), SqlError> {
    let granted = match resource {
        Resource::Row(set, _) => {
            x.locks.lock(Resource::Table(set), mode.intention()) && x.locks.lock(resource, mode)
        }
        Resource::Table(_) => x.locks.lock(resource, mode),
    };
    if granted {
        Ok(())
    } else {
        Err(SqlError::new("55P03", "the statement waits for a lock"))
    }
}

/// A row being read: its table, key values, cells, and the cells read so far. A row of a
/// derived table, or the NULL row an outer join adds, has every cell in `cache`; a source not
/// yet bound in a join has an empty `cache`.
#[derive(Clone)]
struct RowState {
    table: usize,
    key: Arc<[Value]>,
    cells: Arc<[u64]>,
    cache: Vec<Option<Value>>,
}

/// A stored row's key values and cell keys (shared with the catalog).
type StoredRow = (Arc<[Value]>, Arc<[u64]>);

/// A table in FROM: its number and the name expressions qualify its columns with.
#[derive(Clone)]
struct Source {
    table: usize,
    alias: String,
    /// A derived table's columns and rows (a subquery in FROM, a CTE); `None`: a stored table.
    derived: Option<Arc<Derived>>,
    /// Columns an unqualified name does not reach (the other side's copy of a `USING` column).
    hidden: Vec<usize>,
}

/// The columns and rows of a subquery in FROM or a CTE, computed before the statement reads
/// its tables.
struct Derived {
    fields: Vec<Field>,
    rows: Vec<Vec<Value>>,
}

impl Source {
    /// A stored table under `alias`.
    fn table(table: usize, alias: String) -> Source {
        Source {
            table,
            alias,
            derived: None,
            hidden: Vec::new(),
        }
    }

    /// The position of column `name`.
    fn column(&self, catalog: &Catalog, name: &str) -> Option<usize> {
        match &self.derived {
            Some(d) => d.fields.iter().position(|f| f.name == name),
            None => catalog.get(self.table).column(name),
        }
    }

    /// The type of column `name`.
    fn column_type(&self, catalog: &Catalog, name: &str) -> Option<SqlType> {
        match &self.derived {
            Some(d) => d.fields.iter().find(|f| f.name == name).map(|f| f.ty),
            None => {
                let t = catalog.get(self.table);
                t.column(name).map(|i| t.columns[i].ty)
            }
        }
    }

    /// Every column's name and type, in order.
    fn columns<'c>(&'c self, catalog: &'c Catalog) -> Vec<(&'c str, SqlType)> {
        match &self.derived {
            Some(d) => d.fields.iter().map(|f| (f.name.as_str(), f.ty)).collect(),
            None => catalog
                .get(self.table)
                .columns
                .iter()
                .map(|c| (c.name.as_str(), c.ty))
                .collect(),
        }
    }

    /// How many columns it has.
    fn width(&self, catalog: &Catalog) -> usize {
        match &self.derived {
            Some(d) => d.fields.len(),
            None => catalog.get(self.table).columns.len(),
        }
    }
}

/// The rows of one statement bound to their sources, reading cells through the transaction.
struct RowCols<'x, 'a, 't> {
    catalog: &'x Catalog,
    tx: &'x mut EmbeddedTx<'t>,
    notes: &'x mut StatementNotes,
    sources: &'x [Source],
    rows: &'x mut [RowState],
    /// `excluded.*` of ON CONFLICT DO UPDATE.
    excluded: Option<&'x [Value]>,
    _a: std::marker::PhantomData<&'a ()>,
}

impl RowCols<'_, '_, '_> {
    fn read(&mut self, r: usize, c: usize) -> Value {
        let row = &mut self.rows[r];
        if let Some(v) = &row.cache[c] {
            return v.clone();
        }
        let table = self.catalog.get(row.table);
        let v = if let Some(k) = table.key.iter().position(|&kc| kc == c) {
            row.key[k].clone()
        } else {
            self.notes.read_cell(self.tx, row.cells[c])
        };
        row.cache[c] = Some(v.clone());
        v
    }
}

impl Columns for RowCols<'_, '_, '_> {
    fn column(&mut self, qualifier: Option<&str>, name: &str) -> Result<Value, SqlError> {
        if qualifier == Some("excluded") {
            if let Some(values) = self.excluded {
                let table = self.catalog.get(self.sources[0].table);
                let c = table
                    .column(name)
                    .ok_or_else(|| SqlError::undefined_column(name))?;
                return Ok(values[c].clone());
            }
        }
        let mut found = None;
        for (r, s) in self.sources.iter().enumerate() {
            if qualifier.is_some_and(|q| q != s.alias) {
                continue;
            }
            if let Some(c) = s.column(self.catalog, name) {
                if qualifier.is_none() && s.hidden.contains(&c) {
                    continue;
                }
                if found.is_some() {
                    return Err(SqlError::new(
                        "42702",
                        format!("column reference \"{name}\" is ambiguous"),
                    ));
                }
                found = Some((r, c));
            }
        }
        match found {
            Some((r, c)) if self.rows.get(r).is_some_and(|row| c < row.cache.len()) => {
                Ok(self.read(r, c))
            }
            Some(_) => Err(SqlError::undefined_column(name)),
            None => match qualifier {
                Some(q) if !self.sources.iter().any(|s| s.alias == q) => Err(SqlError::new(
                    "42P01",
                    format!("missing FROM-clause entry for table \"{q}\""),
                )),
                _ => Err(SqlError::undefined_column(name)),
            },
        }
    }
}

/// Expressions outside a table's rows (an INSERT's VALUES and defaults, a SELECT without
/// FROM): no columns, and the sequences' functions counted for the statement's connection.
struct NoRow<'c> {
    catalog: &'c mut Catalog,
    session: SessionId,
}

impl Columns for NoRow<'_> {
    fn column(&mut self, _qualifier: Option<&str>, name: &str) -> Result<Value, SqlError> {
        Err(SqlError::undefined_column(name))
    }

    fn call(&mut self, name: &str, args: &[Value]) -> Option<Result<Value, SqlError>> {
        self.catalog.sequences.call(self.session, name, args)
    }
}

/// Runs a data statement (SELECT, INSERT, UPDATE, DELETE).
pub fn execute(x: &mut Exec<'_, '_>, s: &sqlparser::ast::Statement) -> Result<Outcome, SqlError> {
    use sqlparser::ast::Statement as S;
    let out = match s {
        S::Query(q) if derived::data_modifying(q) => {
            derived::with_ctes(x, q.with.as_ref(), |x| match q.body.as_ref() {
                SetExpr::Insert(S::Insert(i)) => insert(x, i),
                SetExpr::Update(S::Update(u)) => update(x, u),
                SetExpr::Delete(S::Delete(d)) => delete(x, d),
                _ => Err(SqlError::unsupported("MERGE")),
            })
        }
        S::Query(q) => select(x, q),
        S::Insert(i) => insert(x, i),
        S::Update(u) => update(x, u),
        S::Delete(d) => delete(x, d),
        S::Truncate(t) => truncate(x, t),
        other => Err(SqlError::unsupported(format!(
            "the statement {}",
            first_words(&other.to_string())
        ))),
    }?;
    x.notes.finish();
    Ok(out)
}

/// The first two words of a statement, naming it in messages.
pub fn first_words(s: &str) -> String {
    s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

fn table_of(catalog: &Catalog, name: &sqlparser::ast::ObjectName) -> Result<usize, SqlError> {
    let n = object_name(name)?;
    catalog
        .table(&n)
        .ok_or_else(|| SqlError::undefined_table(&n))
}

fn source_of(catalog: &Catalog, f: &TableFactor) -> Result<Source, SqlError> {
    match f {
        TableFactor::Table {
            name, alias, args, ..
        } if args.is_none() => {
            let table = table_of(catalog, name)?;
            let alias = match alias {
                Some(a) => ident(&a.name),
                None => object_name(name)?,
            };
            Ok(Source::table(table, alias))
        }
        other => Err(SqlError::unsupported(format!("FROM {other}"))),
    }
}

fn row_cols<'x, 'a, 't>(
    x: &'x mut Exec<'a, 't>,
    sources: &'x [Source],
    rows: &'x mut [RowState],
) -> RowCols<'x, 'a, 't> {
    RowCols {
        catalog: x.catalog,
        tx: x.tx,
        notes: x.notes,
        sources,
        rows,
        excluded: None,
        _a: std::marker::PhantomData,
    }
}
