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
//!   does not shorten the scan). Two-table joins read the inner table per outer row.
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

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use rustc_hash::FxHashSet;
use sqlparser::ast::{
    AssignmentTarget, ColumnOption, CreateTable, Delete, Distinct, Expr, FromTable, FunctionArg,
    FunctionArgExpr, FunctionArguments, GroupByExpr, Insert, JoinConstraint, JoinOperator,
    LimitClause, OnConflictAction, OnInsert, OrderByKind, OrderBySort, Query, Select, SelectItem,
    SetExpr, TableConstraint, TableFactor, TableObject, TableWithJoins, Truncate,
    TruncateIdentityOption, Update,
};

use super::catalog::{Catalog, Column, SqlType, TableDef};
use super::eval::{self, coerce, column_ref, compare, eval, ident, is_true, object_name, Columns};
use super::{Field, Outcome, SqlError};
use crate::server::locks::{Mode, Resource};
use crate::store::{EmbeddedTx, KeyRef, KvRead, KvWrite, Value};

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
}

impl StatementNotes {
    /// Clears the notes for the next statement (keeping their room).
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.lock_candidates.clear();
        self.locked.clear();
        self.for_update = false;
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

/// A row being read: its table, key values, cells, and the cells read so far.
struct RowState {
    table: usize,
    key: Arc<[Value]>,
    cells: Arc<[u64]>,
    cache: Vec<Option<Value>>,
}

/// A stored row's key values and cell keys (shared with the catalog).
type StoredRow = (Arc<[Value]>, Arc<[u64]>);

/// Output rows with their sort keys.
type SortedRows = Vec<(Vec<Value>, Vec<Value>)>;

/// One group of an aggregate query: its key, each item's aggregate state, its plain values.
type Group = (Vec<Value>, Vec<Option<Acc>>, Vec<Value>);

/// A table in FROM: its number and the name expressions qualify its columns with.
#[derive(Clone)]
struct Source {
    table: usize,
    alias: String,
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
            let key = row.cells[c];
            let event = self.tx.event_count() as u32;
            let v = self.tx.get(key).unwrap_or(Value::Null);
            self.notes.reads.push((event, KeyRef::Plain(key)));
            v
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
            if let Some(c) = self.catalog.get(s.table).column(name) {
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
            Some((r, c)) if r < self.rows.len() => Ok(self.read(r, c)),
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

/// Runs a data statement (SELECT, INSERT, UPDATE, DELETE).
pub fn execute(x: &mut Exec<'_, '_>, s: &sqlparser::ast::Statement) -> Result<Outcome, SqlError> {
    use sqlparser::ast::Statement as S;
    let out = match s {
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

/// The rows of a `COPY … FROM STDIN` ([`super::copy`]): `insert`, an INSERT of one row of
/// parameters, once per row, as one statement (tag `COPY n`).
pub fn insert_rows<'a>(
    x: &mut Exec<'a, '_>,
    insert_one: &sqlparser::ast::Statement,
    rows: &'a [Vec<Value>],
) -> Result<Outcome, SqlError> {
    let sqlparser::ast::Statement::Insert(i) = insert_one else {
        return Err(SqlError::unsupported("COPY into this target"));
    };
    for row in rows {
        x.params = row;
        insert(x, i)?;
    }
    x.notes.finish();
    Ok(Outcome::Done(format!("COPY {}", rows.len())))
}

/// The first two words of a statement, naming it in messages.
pub fn first_words(s: &str) -> String {
    s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

/// Runs a schema statement (CREATE TABLE, CREATE INDEX, DROP TABLE/INDEX, ALTER TABLE … ADD
/// PRIMARY KEY); `committed` reads the latest committed state (not recorded).
pub fn schema(
    catalog: &mut Catalog,
    committed: &mut dyn KvRead,
    s: &sqlparser::ast::Statement,
) -> Result<Outcome, SqlError> {
    use sqlparser::ast::{ObjectType, Statement as S};
    match s {
        S::CreateTable(c) => create_table(catalog, c),
        S::AlterTable(a) => alter_table(catalog, committed, a),
        S::CreateIndex(_) => Ok(Outcome::Done("CREATE INDEX".into())),
        S::Drop {
            object_type,
            if_exists,
            names,
            ..
        } => match object_type {
            ObjectType::Table => {
                for n in names {
                    let name = object_name(n)?;
                    if !catalog.drop_table(&name) && !if_exists {
                        return Err(SqlError::undefined_table(&name));
                    }
                }
                Ok(Outcome::Done("DROP TABLE".into()))
            }
            ObjectType::Index => Ok(Outcome::Done("DROP INDEX".into())),
            other => Err(SqlError::unsupported(format!("DROP {other}"))),
        },
        other => Err(SqlError::unsupported(format!(
            "the statement {}",
            first_words(&other.to_string())
        ))),
    }
}

fn create_table(catalog: &mut Catalog, c: &CreateTable) -> Result<Outcome, SqlError> {
    let name = object_name(&c.name)?;
    if catalog.table(&name).is_some() {
        if c.if_not_exists {
            return Ok(Outcome::Done("CREATE TABLE".into()));
        }
        return Err(SqlError::new(
            "42P07",
            format!("relation \"{name}\" already exists"),
        ));
    }
    if c.query.is_some() {
        return Err(SqlError::unsupported("CREATE TABLE … AS"));
    }
    let mut columns = Vec::new();
    let mut key: Vec<usize> = Vec::new();
    for def in &c.columns {
        let (ty, mut serial) = eval::sql_type(&def.data_type)
            .ok_or_else(|| SqlError::unsupported(format!("the type {}", def.data_type)))?;
        let mut column = Column {
            name: ident(&def.name),
            ty,
            not_null: false,
            default: None,
            serial: false,
        };
        for o in &def.options {
            match &o.option {
                ColumnOption::NotNull => column.not_null = true,
                ColumnOption::Null => {}
                ColumnOption::Default(e) => column.default = Some(e.clone()),
                ColumnOption::PrimaryKey(_) => {
                    column.not_null = true;
                    key.push(columns.len());
                }
                ColumnOption::Unique(_) | ColumnOption::ForeignKey(_) | ColumnOption::Check(_) => {}
                other if other.to_string().to_uppercase().contains("IDENTITY") => serial = true,
                other => return Err(SqlError::unsupported(format!("the column option {other}"))),
            }
        }
        column.serial = serial;
        columns.push(column);
    }
    for constraint in &c.constraints {
        if let TableConstraint::PrimaryKey(pk) = constraint {
            key.clear();
            for ic in &pk.columns {
                let (_, cname) = column_ref(&ic.column.expr).ok_or_else(|| {
                    SqlError::unsupported(format!("the key part {}", ic.column.expr))
                })?;
                let i = columns
                    .iter()
                    .position(|col| col.name == cname)
                    .ok_or_else(|| SqlError::undefined_column(&cname))?;
                columns[i].not_null = true;
                key.push(i);
            }
        }
    }
    catalog.create(&name, columns, key);
    Ok(Outcome::Done("CREATE TABLE".into()))
}

/// `ALTER TABLE t ADD [CONSTRAINT name] PRIMARY KEY (columns)` on a table without key (as
/// `pgbench -i` sends after loading its tables): the committed rows are keyed by their values
/// of those columns from then on ([`Catalog::set_key`]). Other changes are refused.
fn alter_table(
    catalog: &mut Catalog,
    committed: &mut dyn KvRead,
    a: &sqlparser::ast::AlterTable,
) -> Result<Outcome, SqlError> {
    use sqlparser::ast::AlterTableOperation;
    let name = object_name(&a.name)?;
    let Some(t) = catalog.table(&name) else {
        if a.if_exists {
            return Ok(Outcome::Done("ALTER TABLE".into()));
        }
        return Err(SqlError::undefined_table(&name));
    };
    for op in &a.operations {
        let AlterTableOperation::AddConstraint {
            constraint: TableConstraint::PrimaryKey(pk),
            ..
        } = op
        else {
            return Err(SqlError::unsupported(format!("ALTER TABLE … {op}")));
        };
        let table = catalog.get(t);
        let key = pk
            .columns
            .iter()
            .map(|ic| {
                let (_, cname) = column_ref(&ic.column.expr).ok_or_else(|| {
                    SqlError::unsupported(format!("the key part {}", ic.column.expr))
                })?;
                table
                    .column(&cname)
                    .ok_or_else(|| SqlError::undefined_column(&cname))
            })
            .collect::<Result<Vec<usize>, _>>()?;
        catalog.set_key(t, key, committed)?;
    }
    Ok(Outcome::Done("ALTER TABLE".into()))
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
            Ok(Source { table, alias })
        }
        other => Err(SqlError::unsupported(format!("FROM {other}"))),
    }
}

/// The top-level conjuncts of a WHERE clause.
fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::BinaryOp {
            left,
            op: sqlparser::ast::BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        Expr::Nested(inner) => conjuncts(inner, out),
        e => out.push(e),
    }
}

/// The key values the clause pins for `source` (every key column by `=`, or `IN` on a
/// one-column key), evaluating the other side with `outer` (rows of earlier sources);
/// `None`: the clause does not pin the key, the table is scanned.
fn pinned_keys(
    x: &mut Exec<'_, '_>,
    clauses: &[&Expr],
    source: &Source,
    outer: &mut dyn Columns,
) -> Result<Option<Vec<Vec<Value>>>, SqlError> {
    let table = x.catalog.get(source.table);
    if table.key.is_empty() || clauses.is_empty() {
        return Ok(None);
    }
    let mut parts = Vec::new();
    for clause in clauses {
        conjuncts(clause, &mut parts);
    }
    let is_key_ref = |e: &Expr| -> Option<usize> {
        let (q, c) = column_ref(e)?;
        if q.as_deref().is_some_and(|q| q != source.alias) {
            return None;
        }
        let col = table.column(&c)?;
        table.key.iter().position(|&k| k == col)
    };
    let mut pins: Vec<Option<Vec<Value>>> = vec![None; table.key.len()];
    let key_types: Vec<SqlType> = table.key.iter().map(|&k| table.columns[k].ty).collect();
    for part in parts {
        match part {
            Expr::BinaryOp {
                left,
                op: sqlparser::ast::BinaryOperator::Eq,
                right,
            } => {
                for (k_side, v_side) in [(left, right), (right, left)] {
                    if let Some(k) = is_key_ref(k_side) {
                        if pins[k].is_none() && is_key_ref(v_side).is_none() {
                            if let Ok(v) = eval(v_side, outer, x.params) {
                                pins[k] = Some(vec![coerce(v, key_types[k])?]);
                                break;
                            }
                        }
                    }
                }
            }
            Expr::In {
                expr,
                target: sqlparser::ast::InTarget::List(list),
                negated: false,
                ..
            } => {
                if let Some(k) = is_key_ref(expr) {
                    if pins[k].is_none() {
                        let mut values = Vec::with_capacity(list.len());
                        for item in list {
                            let v = eval(item, &mut eval::NoColumns, x.params)?;
                            values.push(coerce(v, key_types[k])?);
                        }
                        pins[k] = Some(values);
                    }
                }
            }
            _ => {}
        }
    }
    if pins.iter().any(Option::is_none) {
        return Ok(None);
    }
    // The cartesian product of the pinned values, in clause order, without repeats.
    let mut keys: Vec<Vec<Value>> = vec![Vec::new()];
    for values in pins.into_iter().flatten() {
        let mut next = Vec::with_capacity(keys.len() * values.len());
        for k in &keys {
            for v in &values {
                if matches!(v, Value::Null) {
                    continue;
                }
                let mut k = k.clone();
                k.push(v.clone());
                next.push(k);
            }
        }
        keys = next;
    }
    if keys.len() > 1 {
        let mut seen = FxHashSet::default();
        keys.retain(|k| seen.insert(format!("{k:?}")));
    }
    Ok(Some(keys))
}

/// The present rows of `source` among the candidates (pinned keys or every row ever
/// inserted): reads each candidate's membership, locked in `mode` (each pinned row, or the
/// whole table for a scan).
fn present_rows(
    x: &mut Exec<'_, '_>,
    source: &Source,
    pinned: Option<Vec<Vec<Value>>>,
    mode: Mode,
) -> Result<Vec<RowState>, SqlError> {
    let t = source.table;
    let set = x.catalog.get(t).set;
    if pinned.is_none() {
        lock(x, Resource::Table(set), mode)?;
    }
    let row_locks = pinned.is_some();
    let mut candidates: Vec<(u64, Option<StoredRow>)> = Vec::new();
    match pinned {
        Some(keys) => {
            for key in keys {
                let (row, elem, _) = x.catalog.find_row(t, &key);
                let row = row.map(|r| {
                    let row = &x.catalog.get(t).rows[r as usize];
                    (row.key.clone(), row.cells.clone())
                });
                candidates.push((elem, row));
            }
        }
        None => {
            for row in &x.catalog.get(t).rows {
                candidates.push((row.elem, Some((row.key.clone(), row.cells.clone()))));
            }
        }
    }
    let columns = x.catalog.get(t).columns.len();
    let mut out = Vec::new();
    for (elem, row) in candidates {
        if row_locks {
            lock(x, Resource::Row(set, elem), mode)?;
        }
        let event = x.tx.event_count() as u32;
        let present = x.tx.set_contains(set, elem);
        x.notes.reads.push((event, KeyRef::Member { set, elem }));
        if let (true, Some((key, cells))) = (present, row) {
            out.push(RowState {
                table: t,
                key,
                cells,
                cache: vec![None; columns],
            });
        }
    }
    Ok(out)
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

/// The rows (one state per source) the FROM and WHERE of a statement select, locked in
/// `mode`.
fn matching_rows(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    join_on: Option<&Expr>,
    selection: Option<&Expr>,
    mode: Mode,
) -> Result<Vec<Vec<RowState>>, SqlError> {
    // The condition is `ON AND WHERE`.
    let clauses: Vec<&Expr> = join_on.into_iter().chain(selection).collect();
    let params = x.params;
    let pinned = pinned_keys(x, &clauses, &sources[0], &mut eval::NoColumns)?;
    let firsts = present_rows(x, &sources[0], pinned, mode)?;
    let mut out = Vec::new();
    for first in firsts {
        let mut combos = vec![vec![first]];
        if sources.len() == 2 {
            let mut row = combos.pop().expect("one combination");
            let pinned = {
                let catalog: &Catalog = x.catalog;
                let mut cols = RowCols {
                    catalog,
                    tx: &mut *x.tx,
                    notes: &mut *x.notes,
                    sources: &sources[..1],
                    rows: &mut row,
                    excluded: None,
                    _a: std::marker::PhantomData,
                };
                pinned_keys_outer(catalog, params, &clauses, &sources[1], &mut cols)?
            };
            let seconds = present_rows(x, &sources[1], pinned, mode)?;
            for second in seconds {
                let mut r = vec![RowState {
                    table: row[0].table,
                    key: row[0].key.clone(),
                    cells: row[0].cells.clone(),
                    cache: row[0].cache.clone(),
                }];
                r.push(second);
                combos.push(r);
            }
        }
        for mut combo in combos {
            let keep = clauses.is_empty() || {
                let mut cols = row_cols(x, sources, &mut combo);
                all_true(&clauses, &mut cols, params)?
            };
            if keep {
                out.push(combo);
            }
        }
    }
    Ok(out)
}

/// Whether the conjunction of `clauses` is true, evaluated as `a AND b` is: left to right,
/// stopping at the first false one (a NULL one does not stop it).
fn all_true(clauses: &[&Expr], cols: &mut dyn Columns, params: &[Value]) -> Result<bool, SqlError> {
    let mut all = true;
    for c in clauses {
        let v = eval(c, cols, params)?;
        if matches!(v, Value::Bool(false)) {
            return Ok(false);
        }
        all &= is_true(&v);
    }
    Ok(all)
}

/// [`pinned_keys`] without a statement context (the catalog and parameters only).
fn pinned_keys_outer(
    catalog: &Catalog,
    params: &[Value],
    clauses: &[&Expr],
    source: &Source,
    outer: &mut dyn Columns,
) -> Result<Option<Vec<Vec<Value>>>, SqlError> {
    let table = catalog.get(source.table);
    if table.key.len() != 1 {
        return Ok(None);
    }
    let mut parts = Vec::new();
    for clause in clauses {
        conjuncts(clause, &mut parts);
    }
    let key_col = &table.columns[table.key[0]];
    for part in parts {
        if let Expr::BinaryOp {
            left,
            op: sqlparser::ast::BinaryOperator::Eq,
            right,
        } = part
        {
            for (k_side, v_side) in [(left, right), (right, left)] {
                let Some((q, c)) = column_ref(k_side) else {
                    continue;
                };
                if c != key_col.name || q.as_deref().is_some_and(|q| q != source.alias) {
                    continue;
                }
                if let Ok(v) = eval(v_side, outer, params) {
                    return Ok(Some(vec![vec![coerce(v, key_col.ty)?]]));
                }
            }
        }
    }
    Ok(None)
}

fn is_aggregate(e: &Expr) -> bool {
    match e {
        Expr::Function(f) => {
            let name = object_name(&f.name).unwrap_or_default();
            matches!(name.as_str(), "count" | "sum" | "min" | "max" | "avg")
        }
        Expr::Nested(e) => is_aggregate(e),
        Expr::BinaryOp { left, right, .. } => is_aggregate(left) || is_aggregate(right),
        Expr::Cast { expr, .. } => is_aggregate(expr),
        _ => false,
    }
}

/// The static type of an expression's values (for RowDescription before execution).
fn expr_type(catalog: &Catalog, sources: &[Source], e: &Expr) -> SqlType {
    if let Some((q, c)) = column_ref(e) {
        for s in sources {
            if q.as_deref().is_some_and(|q| q != s.alias) {
                continue;
            }
            let t = catalog.get(s.table);
            if let Some(i) = t.column(&c) {
                return t.columns[i].ty;
            }
        }
        return SqlType::Text;
    }
    match e {
        Expr::Value(v) => match &v.value {
            sqlparser::ast::Value::Number(n, _) if n.parse::<i32>().is_ok() => SqlType::Int4,
            sqlparser::ast::Value::Number(n, _) if n.parse::<i64>().is_ok() => SqlType::Int8,
            sqlparser::ast::Value::Number(..) => SqlType::Numeric,
            sqlparser::ast::Value::Boolean(_) => SqlType::Bool,
            _ => SqlType::Text,
        },
        Expr::Nested(e) => expr_type(catalog, sources, e),
        Expr::Cast { data_type, .. } => eval::sql_type(data_type)
            .map(|(t, _)| t)
            .unwrap_or(SqlType::Text),
        Expr::Function(f) => {
            let name = object_name(&f.name).unwrap_or_default();
            let arg = function_args(f).into_iter().next();
            match name.as_str() {
                "count" => SqlType::Int8,
                "avg" => SqlType::Numeric,
                "sum" => match arg.map(|a| expr_type(catalog, sources, a)) {
                    Some(SqlType::Int2 | SqlType::Int4) => SqlType::Int8,
                    Some(SqlType::Float8) => SqlType::Float8,
                    _ => SqlType::Numeric,
                },
                "min" | "max" => arg
                    .map(|a| expr_type(catalog, sources, a))
                    .unwrap_or(SqlType::Text),
                "length" | "char_length" | "pg_backend_pid" => SqlType::Int4,
                "abs" => arg
                    .map(|a| expr_type(catalog, sources, a))
                    .unwrap_or(SqlType::Numeric),
                "now" | "current_timestamp" => SqlType::Timestamp,
                _ => SqlType::Text,
            }
        }
        Expr::BinaryOp { left, op, right } => {
            use sqlparser::ast::BinaryOperator as B;
            match op {
                B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo => {
                    let (l, r) = (
                        expr_type(catalog, sources, left),
                        expr_type(catalog, sources, right),
                    );
                    match (l, r) {
                        (SqlType::Int8, _) | (_, SqlType::Int8) => SqlType::Int8,
                        (a, b) if a.is_integer() && b.is_integer() => SqlType::Int4,
                        (a, _) if a.is_numeric() => SqlType::Numeric,
                        (_, b) if b.is_numeric() => SqlType::Numeric,
                        _ => SqlType::Text,
                    }
                }
                B::StringConcat => SqlType::Text,
                _ => SqlType::Bool,
            }
        }
        Expr::UnaryOp { expr, .. } => expr_type(catalog, sources, expr),
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::In { .. }
        | Expr::Between { .. }
        | Expr::IsTrue(_)
        | Expr::IsFalse(_) => SqlType::Bool,
        _ => SqlType::Text,
    }
}

fn function_args(f: &sqlparser::ast::Function) -> Vec<&Expr> {
    match &f.args {
        FunctionArguments::List(l) => l
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The name PostgreSQL gives an unaliased result column.
fn column_name(e: &Expr) -> String {
    if let Some((_, c)) = column_ref(e) {
        return c.into_owned();
    }
    match e {
        Expr::Function(f) => object_name(&f.name).unwrap_or_else(|_| "?column?".into()),
        Expr::Cast { expr, .. } => column_name(expr),
        _ => "?column?".into(),
    }
}

/// One projected item: its field and expression (the statement's own, or a column of a
/// wildcard).
struct Item<'e> {
    field: Field,
    expr: Cow<'e, Expr>,
}

fn projection_items<'e>(
    catalog: &Catalog,
    sources: &[Source],
    items: &'e [SelectItem],
) -> Result<Vec<Item<'e>>, SqlError> {
    let mut out = Vec::new();
    for item in items {
        match item {
            SelectItem::UnnamedExpr(e) => out.push(Item {
                field: Field {
                    name: column_name(e),
                    ty: expr_type(catalog, sources, e),
                },
                expr: Cow::Borrowed(e),
            }),
            SelectItem::ExprWithAlias { expr, alias } => out.push(Item {
                field: Field {
                    name: ident(alias),
                    ty: expr_type(catalog, sources, expr),
                },
                expr: Cow::Borrowed(expr),
            }),
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                let qualifier = match item {
                    SelectItem::QualifiedWildcard(k, _) => {
                        let text = k.to_string();
                        Some(text.trim_end_matches(".*").to_lowercase())
                    }
                    _ => None,
                };
                for s in sources {
                    if qualifier.as_deref().is_some_and(|q| q != s.alias) {
                        continue;
                    }
                    for c in &catalog.get(s.table).columns {
                        out.push(Item {
                            field: Field {
                                name: c.name.clone(),
                                ty: c.ty,
                            },
                            expr: Cow::Owned(Expr::CompoundIdentifier(vec![
                                sqlparser::ast::Ident::with_quote('"', s.alias.clone()),
                                sqlparser::ast::Ident::with_quote('"', c.name.clone()),
                            ])),
                        });
                    }
                }
            }
            other => return Err(SqlError::unsupported(format!("the select item {other}"))),
        }
    }
    Ok(out)
}

/// The sources of a SELECT's FROM and the join condition (at most two tables).
fn from_sources(
    catalog: &Catalog,
    from: &[TableWithJoins],
) -> Result<(Vec<Source>, Option<Expr>), SqlError> {
    let mut sources = Vec::new();
    let mut on = None;
    for twj in from {
        sources.push(source_of(catalog, &twj.relation)?);
        for j in &twj.joins {
            sources.push(source_of(catalog, &j.relation)?);
            match &j.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c) => {
                    match c {
                        JoinConstraint::On(e) => on = Some(e.clone()),
                        JoinConstraint::None => {}
                        _ => return Err(SqlError::unsupported("JOIN … USING and NATURAL JOIN")),
                    }
                }
                _ => return Err(SqlError::unsupported("outer joins")),
            }
        }
    }
    if sources.len() > 2 {
        return Err(SqlError::unsupported("joins of more than two tables"));
    }
    Ok((sources, on))
}

/// The fields a SELECT returns, without running it (Describe).
pub fn describe(catalog: &Catalog, s: &sqlparser::ast::Statement) -> Result<Vec<Field>, SqlError> {
    use sqlparser::ast::Statement as S;
    let returning = |table: &sqlparser::ast::ObjectName, r: &Option<Vec<SelectItem>>| {
        let Some(items) = r else {
            return Ok(Vec::new());
        };
        let t = table_of(catalog, table)?;
        let sources = [Source {
            table: t,
            alias: object_name(table)?,
        }];
        Ok(projection_items(catalog, &sources, items)?
            .into_iter()
            .map(|i| i.field)
            .collect())
    };
    match s {
        S::Query(q) => match q.body.as_ref() {
            SetExpr::Select(sel) => {
                let (sources, _) = from_sources(catalog, &sel.from)?;
                Ok(projection_items(catalog, &sources, &sel.projection)?
                    .into_iter()
                    .map(|i| i.field)
                    .collect())
            }
            _ => Ok(Vec::new()),
        },
        S::Insert(i) => match &i.table {
            TableObject::TableName(n) => returning(n, &i.returning),
            _ => Ok(Vec::new()),
        },
        S::Update(u) => match &u.table.relation {
            TableFactor::Table { name, .. } => returning(name, &u.returning),
            _ => Ok(Vec::new()),
        },
        S::Delete(d) => {
            let tables = match &d.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
            };
            match tables.first().map(|t| &t.relation) {
                Some(TableFactor::Table { name, .. }) => returning(name, &d.returning),
                _ => Ok(Vec::new()),
            }
        }
        _ => Ok(Vec::new()),
    }
}

fn select(x: &mut Exec<'_, '_>, q: &Query) -> Result<Outcome, SqlError> {
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH (common table expressions)"));
    }
    if q.fetch.is_some() {
        return Err(SqlError::unsupported("FETCH FIRST"));
    }
    let sel: &Select = match q.body.as_ref() {
        SetExpr::Select(s) => s,
        SetExpr::Values(_) => return Err(SqlError::unsupported("VALUES as a query")),
        other => {
            return Err(SqlError::unsupported(format!(
                "the query {}",
                first_words(&other.to_string())
            )))
        }
    };
    if sel.having.is_some() {
        return Err(SqlError::unsupported("HAVING"));
    }
    if !sel.named_window.is_empty() {
        return Err(SqlError::unsupported("WINDOW"));
    }
    if sel.into.is_some() {
        return Err(SqlError::unsupported("SELECT … INTO"));
    }
    if !q.pipe_operators.is_empty() || q.for_clause.is_some() {
        return Err(SqlError::unsupported("this query form"));
    }
    if matches!(sel.distinct, Some(Distinct::On(_))) {
        return Err(SqlError::unsupported("DISTINCT ON"));
    }
    let (sources, on) = from_sources(x.catalog, &sel.from)?;
    let items = projection_items(x.catalog, &sources, &sel.projection)?;
    let fields: Vec<Field> = items.iter().map(|i| i.field.clone()).collect();
    x.notes.for_update = !q.locks.is_empty();
    let group_by: &[Expr] = match &sel.group_by {
        GroupByExpr::Expressions(e, m) if m.is_empty() => e,
        GroupByExpr::Expressions(..) | GroupByExpr::All(_) => {
            return Err(SqlError::unsupported("GROUP BY with modifiers"))
        }
    };
    let aggregate = !group_by.is_empty() || items.iter().any(|i| is_aggregate(&i.expr));
    let order: Vec<(&Expr, bool)> = match &q.order_by {
        None => Vec::new(),
        Some(o) => match &o.kind {
            OrderByKind::Expressions(es) => es
                .iter()
                .map(|e| {
                    let desc = matches!(e.options.sort, Some(OrderBySort::Desc));
                    (&e.expr, desc)
                })
                .collect(),
            OrderByKind::All(_) => return Err(SqlError::unsupported("ORDER BY ALL")),
        },
    };
    let params = x.params;
    // Rows: (output values, sort keys).
    let mut out: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
    if sources.is_empty() {
        if sel.selection.is_some() {
            return Err(SqlError::unsupported("WHERE without FROM"));
        }
        let mut values = Vec::with_capacity(items.len());
        for i in &items {
            values.push(eval(&i.expr, &mut eval::NoColumns, params)?);
        }
        out.push((values, Vec::new()));
    } else {
        let mode = if x.notes.for_update {
            Mode::Exclusive
        } else {
            x.read_lock
        };
        let matched = matching_rows(x, &sources, on.as_ref(), sel.selection.as_ref(), mode)?;
        if aggregate {
            out = aggregate_rows(x, &sources, matched, &items, group_by, &order)?;
        } else {
            for mut combo in matched {
                let mut cols = row_cols(x, &sources, &mut combo);
                let mut values = Vec::with_capacity(items.len());
                for i in &items {
                    values.push(eval(&i.expr, &mut cols, params)?);
                }
                let mut keys = Vec::with_capacity(order.len());
                for (e, _) in &order {
                    keys.push(order_key(e, &items, &values, &mut cols, params)?);
                }
                out.push((values, keys));
            }
        }
    }
    if matches!(sel.distinct, Some(Distinct::Distinct)) {
        let mut seen = FxHashSet::default();
        out.retain(|(v, _)| seen.insert(format!("{v:?}")));
    }
    if !order.is_empty() {
        out.sort_by(|(_, a), (_, b)| {
            for (i, (_, desc)) in order.iter().enumerate() {
                let o = match (&a[i], &b[i]) {
                    (Value::Null, Value::Null) => Ordering::Equal,
                    // NULLs sort last ascending, first descending, as in PostgreSQL.
                    (Value::Null, _) => Ordering::Greater,
                    (_, Value::Null) => Ordering::Less,
                    (x, y) => compare(x, y).unwrap_or(Ordering::Equal),
                };
                let o = if *desc { o.reverse() } else { o };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    let (limit, offset) = limits(q.limit_clause.as_ref(), params)?;
    let rows: Vec<Vec<Value>> = out
        .into_iter()
        .map(|(v, _)| v)
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let count = rows.len();
    Ok(Outcome::Rows {
        fields,
        rows,
        tag: "SELECT",
        count,
    })
}

fn order_key(
    e: &Expr,
    items: &[Item<'_>],
    values: &[Value],
    cols: &mut dyn Columns,
    params: &[Value],
) -> Result<Value, SqlError> {
    if let Expr::Value(v) = e {
        if let sqlparser::ast::Value::Number(n, _) = &v.value {
            let i: usize = n.parse().unwrap_or(0);
            return values.get(i.wrapping_sub(1)).cloned().ok_or_else(|| {
                SqlError::new(
                    "42P10",
                    format!("ORDER BY position {n} is not in select list"),
                )
            });
        }
    }
    if let Some((None, name)) = column_ref(e) {
        if let Some(i) = items.iter().position(|i| i.field.name == name) {
            return Ok(values[i].clone());
        }
    }
    if let Some(i) = items.iter().position(|i| i.expr.as_ref() == e) {
        return Ok(values[i].clone());
    }
    eval(e, cols, params)
}

fn limits(l: Option<&LimitClause>, params: &[Value]) -> Result<(Option<usize>, usize), SqlError> {
    let number = |e: &Expr| -> Result<usize, SqlError> {
        let v = eval(e, &mut eval::NoColumns, params)?;
        match coerce(v, SqlType::Int8)? {
            Value::Int(i) if i >= 0 => Ok(i as usize),
            Value::Null => Ok(usize::MAX),
            other => Err(SqlError::new(
                "2201W",
                format!("LIMIT/OFFSET must not be negative: {other}"),
            )),
        }
    };
    Ok(match l {
        None => (None, 0),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(SqlError::unsupported("LIMIT BY"));
            }
            let lim = match limit {
                Some(e) => Some(number(e)?),
                None => None,
            };
            let off = match offset {
                Some(o) => number(&o.value)?,
                None => 0,
            };
            (lim, off)
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
            (Some(number(limit)?), number(offset)?)
        }
    })
}

/// An aggregate's running state.
#[derive(Clone)]
enum Acc {
    Count(i64),
    Sum(Option<Value>),
    Min(Option<Value>),
    Max(Option<Value>),
    Avg(f64, i64),
}

fn aggregate_rows(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    matched: Vec<Vec<RowState>>,
    items: &[Item<'_>],
    group_by: &[Expr],
    order: &[(&Expr, bool)],
) -> Result<SortedRows, SqlError> {
    let params = x.params;
    // The aggregate calls of each item (top-level calls only; others are plain values).
    let mut groups: Vec<Group> = Vec::new();
    let mut index: rustc_hash::FxHashMap<String, usize> = Default::default();
    let no_rows = matched.is_empty();
    for mut combo in matched {
        let mut cols = row_cols(x, sources, &mut combo);
        let mut gkey = Vec::with_capacity(group_by.len());
        for g in group_by {
            gkey.push(eval(g, &mut cols, params)?);
        }
        let g = *index.entry(format!("{gkey:?}")).or_insert_with(|| {
            groups.push((gkey.clone(), vec![None; items.len()], Vec::new()));
            groups.len() - 1
        });
        for (i, item) in items.iter().enumerate() {
            match item.expr.as_ref() {
                Expr::Function(f) if is_aggregate(&item.expr) => {
                    let name = object_name(&f.name)?;
                    let arg = function_args(f).into_iter().next();
                    let value = match arg {
                        Some(a) => eval(a, &mut cols, params)?,
                        None => Value::Bool(true), // count(*)
                    };
                    let acc = groups[g].1[i].get_or_insert(match name.as_str() {
                        "count" => Acc::Count(0),
                        "sum" => Acc::Sum(None),
                        "min" => Acc::Min(None),
                        "max" => Acc::Max(None),
                        _ => Acc::Avg(0.0, 0),
                    });
                    accumulate(acc, value)?;
                }
                e if is_aggregate(e) => {
                    return Err(SqlError::unsupported(format!("the expression {e}")))
                }
                e => {
                    let v = eval(e, &mut cols, params)?;
                    if groups[g].2.len() <= i {
                        groups[g].2.resize(items.len(), Value::Null);
                    }
                    groups[g].2[i] = v;
                }
            }
        }
    }
    if no_rows && group_by.is_empty() {
        groups.push((Vec::new(), vec![None; items.len()], Vec::new()));
    }
    let mut out = Vec::new();
    for (_, accs, plain) in groups {
        let mut values = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            values.push(match (&accs[i], item.expr.as_ref()) {
                (Some(acc), _) => finish(acc),
                (None, Expr::Function(f)) if is_aggregate(&item.expr) => {
                    match object_name(&f.name)?.as_str() {
                        "count" => Value::Int(0),
                        _ => Value::Null,
                    }
                }
                (None, _) => plain.get(i).cloned().unwrap_or(Value::Null),
            });
        }
        let mut keys = Vec::with_capacity(order.len());
        for (e, _) in order {
            keys.push(order_key(e, items, &values, &mut eval::NoColumns, params)?);
        }
        out.push((values, keys));
    }
    Ok(out)
}

fn accumulate(acc: &mut Acc, v: Value) -> Result<(), SqlError> {
    if matches!(v, Value::Null) {
        return Ok(());
    }
    match acc {
        Acc::Count(n) => *n += 1,
        Acc::Sum(s) => {
            *s = Some(match s.take() {
                None => v,
                Some(t) => match (t, v) {
                    (Value::Int(a), Value::Int(b)) => Value::Int(
                        a.checked_add(b)
                            .ok_or_else(|| SqlError::new("22003", "sum out of range"))?,
                    ),
                    (a, b) => Value::Real(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
                },
            })
        }
        Acc::Min(m) => {
            if m.as_ref()
                .map_or(true, |x| compare(&v, x) == Some(Ordering::Less))
            {
                *m = Some(v);
            }
        }
        Acc::Max(m) => {
            if m.as_ref()
                .map_or(true, |x| compare(&v, x) == Some(Ordering::Greater))
            {
                *m = Some(v);
            }
        }
        Acc::Avg(s, n) => {
            *s += v.as_f64().unwrap_or(0.0);
            *n += 1;
        }
    }
    Ok(())
}

fn finish(acc: &Acc) -> Value {
    match acc {
        Acc::Count(n) => Value::Int(*n),
        Acc::Sum(s) | Acc::Min(s) | Acc::Max(s) => s.clone().unwrap_or(Value::Null),
        Acc::Avg(_, 0) => Value::Null,
        Acc::Avg(s, n) => Value::Real(*s / *n as f64),
    }
}

fn returning_rows(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    items: &[Item<'_>],
    rows: &mut [Vec<RowState>],
) -> Result<Vec<Vec<Value>>, SqlError> {
    let params = x.params;
    let mut out = Vec::with_capacity(rows.len());
    for combo in rows {
        let mut cols = row_cols(x, sources, combo);
        let mut values = Vec::with_capacity(items.len());
        for i in items {
            values.push(eval(&i.expr, &mut cols, params)?);
        }
        out.push(values);
    }
    Ok(out)
}

fn check_not_null(table: &TableDef, c: usize, v: &Value) -> Result<(), SqlError> {
    if table.columns[c].not_null && matches!(v, Value::Null) {
        return Err(SqlError::new(
            "23502",
            format!(
                "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                table.columns[c].name, table.name
            ),
        ));
    }
    Ok(())
}

fn assignments(
    catalog: &Catalog,
    t: usize,
    list: &[sqlparser::ast::Assignment],
) -> Result<Vec<(usize, Expr)>, SqlError> {
    let table = catalog.get(t);
    let mut out = Vec::with_capacity(list.len());
    for a in list {
        let AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignments"));
        };
        let name = object_name(n)?;
        let c = table
            .column(&name)
            .ok_or_else(|| SqlError::undefined_column(&name))?;
        if table.is_key_column(c) {
            return Err(SqlError::unsupported(format!(
                "assigning the primary-key column {name}"
            )));
        }
        out.push((c, a.value.clone()));
    }
    Ok(out)
}

/// Evaluates the assignments on each row (old values), then writes the cells.
fn apply_assignments(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    assigns: &[(usize, Expr)],
    combo: &mut [RowState],
    excluded: Option<&[Value]>,
) -> Result<(), SqlError> {
    let params = x.params;
    let mut new = Vec::with_capacity(assigns.len());
    {
        let mut cols = row_cols(x, sources, combo);
        cols.excluded = excluded;
        for (c, e) in assigns {
            let ty = cols.catalog.get(sources[0].table).columns[*c].ty;
            let v = coerce(eval(e, &mut cols, params)?, ty)?;
            check_not_null(cols.catalog.get(sources[0].table), *c, &v)?;
            new.push(v);
        }
    }
    for ((c, _), v) in assigns.iter().zip(new) {
        let key = combo[0].cells[*c];
        x.tx.put(key, v.clone());
        x.notes.writes.insert(KeyRef::Plain(key));
        combo[0].cache[*c] = Some(v);
    }
    Ok(())
}

fn update(x: &mut Exec<'_, '_>, u: &Update) -> Result<Outcome, SqlError> {
    if !u.table.joins.is_empty() || u.from.is_some() {
        return Err(SqlError::unsupported("UPDATE … FROM"));
    }
    let source = source_of(x.catalog, &u.table.relation)?;
    let sources = [source];
    let assigns = assignments(x.catalog, sources[0].table, &u.assignments)?;
    let returning = match &u.returning {
        Some(items) => Some(projection_items(x.catalog, &sources, items)?),
        None => None,
    };
    let mut matched = matching_rows(x, &sources, None, u.selection.as_ref(), Mode::Exclusive)?;
    for combo in &mut matched {
        apply_assignments(x, &sources, &assigns, combo, None)?;
    }
    let count = matched.len();
    match returning {
        Some(items) => {
            let rows = returning_rows(x, &sources, &items, &mut matched)?;
            Ok(Outcome::Rows {
                fields: items.into_iter().map(|i| i.field).collect(),
                rows,
                tag: "UPDATE",
                count,
            })
        }
        None => Ok(Outcome::Done(format!("UPDATE {count}"))),
    }
}

fn delete(x: &mut Exec<'_, '_>, d: &Delete) -> Result<Outcome, SqlError> {
    if d.using.is_some() {
        return Err(SqlError::unsupported("DELETE … USING"));
    }
    let tables = match &d.from {
        FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
    };
    let [twj] = tables.as_slice() else {
        return Err(SqlError::unsupported("DELETE from several tables"));
    };
    if !twj.joins.is_empty() {
        return Err(SqlError::unsupported("DELETE with a join"));
    }
    let sources = [source_of(x.catalog, &twj.relation)?];
    let returning = match &d.returning {
        Some(items) => Some(projection_items(x.catalog, &sources, items)?),
        None => None,
    };
    let mut matched = matching_rows(x, &sources, None, d.selection.as_ref(), Mode::Exclusive)?;
    let rows = match &returning {
        Some(items) => returning_rows(x, &sources, items, &mut matched)?,
        None => Vec::new(),
    };
    delete_rows(x, sources[0].table, &matched);
    let count = matched.len();
    match returning {
        Some(items) => Ok(Outcome::Rows {
            fields: items.into_iter().map(|i| i.field).collect(),
            rows,
            tag: "DELETE",
            count,
        }),
        None => Ok(Outcome::Done(format!("DELETE {count}"))),
    }
}

/// Deletes the rows of `table` in `matched` (one membership delete each).
fn delete_rows(x: &mut Exec<'_, '_>, table: usize, matched: &[Vec<RowState>]) {
    let set = x.catalog.get(table).set;
    for combo in matched {
        let (_, elem, _) = x.catalog.find_row(table, &combo[0].key);
        x.tx.set_delete(set, elem);
        x.notes.writes.insert(KeyRef::Member { set, elem });
    }
}

/// `TRUNCATE t, …` as `DELETE FROM t` of each table, in the transaction (PostgreSQL's
/// TRUNCATE is transactional too): a scan, the whole table locked, every present row deleted.
fn truncate(x: &mut Exec<'_, '_>, t: &Truncate) -> Result<Outcome, SqlError> {
    if matches!(t.identity, Some(TruncateIdentityOption::Restart)) {
        return Err(SqlError::unsupported("TRUNCATE … RESTART IDENTITY"));
    }
    let mut sources = Vec::with_capacity(t.table_names.len());
    for target in &t.table_names {
        sources.push(Source {
            table: table_of(x.catalog, &target.name)?,
            alias: object_name(&target.name)?,
        });
    }
    for source in &sources {
        let matched = matching_rows(x, std::slice::from_ref(source), None, None, Mode::Exclusive)?;
        delete_rows(x, source.table, &matched);
    }
    Ok(Outcome::Done("TRUNCATE TABLE".into()))
}

/// The columns an INSERT's values go to, in order: the named ones, else every column.
fn insert_targets(
    table: &TableDef,
    columns: &[sqlparser::ast::ObjectName],
) -> Result<Vec<usize>, SqlError> {
    if columns.is_empty() {
        return Ok((0..table.columns.len()).collect());
    }
    columns
        .iter()
        .map(|c| {
            let n = object_name(c)?;
            table
                .column(&n)
                .ok_or_else(|| SqlError::undefined_column(&n))
        })
        .collect()
}

/// One VALUES row of an INSERT into table `t` as a full row: the given values coerced to their
/// columns' types, the others from their SERIAL sequence, their DEFAULT, else NULL; NOT NULL
/// checked.
fn full_row(
    catalog: &mut Catalog,
    t: usize,
    targets: &[usize],
    row_exprs: &[Expr],
    params: &[Value],
) -> Result<Vec<Value>, SqlError> {
    let ncols = catalog.get(t).columns.len();
    let mut row: Vec<Option<Value>> = vec![None; ncols];
    for (&c, e) in targets.iter().zip(row_exprs.iter()) {
        let is_default =
            matches!(e, Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default"));
        if !is_default {
            let v = eval(e, &mut eval::NoColumns, params)?;
            row[c] = Some(coerce(v, catalog.get(t).columns[c].ty)?);
        }
    }
    let mut full = Vec::with_capacity(ncols);
    for (c, v) in row.into_iter().enumerate() {
        let v = match v {
            Some(v) => v,
            None => {
                let table = catalog.get_mut(t);
                let column = &table.columns[c];
                if column.serial {
                    table.sequence += 1;
                    Value::Int(table.sequence)
                } else if let Some(d) = column.default.clone() {
                    let ty = column.ty;
                    coerce(eval(&d, &mut eval::NoColumns, params)?, ty)?
                } else {
                    Value::Null
                }
            }
        };
        check_not_null(catalog.get(t), c, &v)?;
        full.push(v);
    }
    Ok(full)
}

/// PostgreSQL's unique violation (23505) for `key` in `table`.
fn duplicate_key(table: &TableDef, key: &[Value]) -> SqlError {
    SqlError::new(
        "23505",
        format!(
            "duplicate key value violates unique constraint \"{}_pkey\": Key ({})=({}) already \
             exists.",
            table.name,
            table
                .key
                .iter()
                .map(|&k| table.columns[k].name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            key.iter().map(eval::plain).collect::<Vec<_>>().join(", ")
        ),
    )
}

fn insert(x: &mut Exec<'_, '_>, i: &Insert) -> Result<Outcome, SqlError> {
    let TableObject::TableName(name) = &i.table else {
        return Err(SqlError::unsupported("INSERT INTO a table function"));
    };
    let t = table_of(x.catalog, name)?;
    // Before any SERIAL value is taken: a wait here leaves the sequence as it was.
    lock(
        x,
        Resource::Table(x.catalog.get(t).set),
        Mode::IntentExclusive,
    )?;
    let alias = match &i.table_alias {
        Some(a) => ident(&a.alias),
        None => object_name(name)?,
    };
    let sources = [Source { table: t, alias }];
    let ncols = x.catalog.get(t).columns.len();
    let targets = insert_targets(x.catalog.get(t), &i.columns)?;
    let Some(source) = &i.source else {
        return Err(SqlError::unsupported("INSERT without VALUES"));
    };
    let SetExpr::Values(values) = source.body.as_ref() else {
        return Err(SqlError::unsupported("INSERT … SELECT"));
    };
    let on_conflict = match &i.on {
        None => None,
        Some(OnInsert::OnConflict(c)) => Some(&c.action),
        Some(other) => return Err(SqlError::unsupported(format!("{other}"))),
    };
    let do_update = match on_conflict {
        Some(OnConflictAction::DoUpdate(u)) => {
            if u.selection.is_some() {
                return Err(SqlError::unsupported("ON CONFLICT DO UPDATE … WHERE"));
            }
            Some(assignments(x.catalog, t, &u.assignments)?)
        }
        _ => None,
    };
    let returning = match &i.returning {
        Some(items) => Some(projection_items(x.catalog, &sources, items)?),
        None => None,
    };
    let params = x.params;
    let mut count = 0;
    let mut affected: Vec<Vec<RowState>> = Vec::new();
    for row_exprs in &values.rows {
        if row_exprs.len() != targets.len() {
            return Err(SqlError::new(
                "42601",
                format!(
                    "INSERT has {} expressions for {} target columns",
                    row_exprs.len(),
                    targets.len()
                ),
            ));
        }
        let full = full_row(x.catalog, t, &targets, row_exprs, params)?;
        let table = x.catalog.get_mut(t);
        let key: Box<[Value]> = if table.key.is_empty() {
            table.sequence += 1;
            Box::new([Value::Int(table.sequence)])
        } else {
            table.key.iter().map(|&k| full[k].clone()).collect()
        };
        let set = table.set;
        let keyed = !table.key.is_empty();
        let (existing, elem, _) = x.catalog.find_row(t, &key);
        if keyed {
            // The uniqueness check: the row's membership, read and (on insert) written by
            // this statement, atomically.
            lock(x, Resource::Row(set, elem), Mode::Exclusive)?;
            let event = x.tx.event_count() as u32;
            let present = x.tx.set_contains(set, elem);
            x.notes.reads.push((event, KeyRef::Member { set, elem }));
            if present {
                match on_conflict {
                    Some(OnConflictAction::DoNothing) => continue,
                    Some(OnConflictAction::DoUpdate(_)) => {
                        let r = existing.expect("a present row was inserted before");
                        let stored = &x.catalog.get(t).rows[r as usize];
                        let mut combo = vec![RowState {
                            table: t,
                            key: stored.key.clone(),
                            cells: stored.cells.clone(),
                            cache: vec![None; ncols],
                        }];
                        let assigns = do_update.as_ref().expect("DO UPDATE has assignments");
                        apply_assignments(x, &sources, assigns, &mut combo, Some(&full))?;
                        count += 1;
                        affected.push(combo);
                        continue;
                    }
                    None => return Err(duplicate_key(x.catalog.get(t), &key)),
                }
            }
        }
        let r = x.catalog.add_row(t, key);
        let stored = &x.catalog.get(t).rows[r as usize];
        let (key, cells) = (stored.key.clone(), stored.cells.clone());
        debug_assert_eq!(stored.elem, elem);
        x.tx.set_insert(set, elem);
        x.notes.writes.insert(KeyRef::Member { set, elem });
        let table = x.catalog.get(t);
        for (c, v) in full.iter().enumerate() {
            if !table.is_key_column(c) {
                x.tx.put(cells[c], v.clone());
                x.notes.writes.insert(KeyRef::Plain(cells[c]));
            }
        }
        count += 1;
        affected.push(vec![RowState {
            table: t,
            key,
            cells,
            cache: full.into_iter().map(Some).collect(),
        }]);
    }
    match returning {
        Some(items) => {
            let rows = returning_rows(x, &sources, &items, &mut affected)?;
            Ok(Outcome::Rows {
                fields: items.into_iter().map(|i| i.field).collect(),
                rows,
                tag: "INSERT 0",
                count,
            })
        }
        None => Ok(Outcome::Done(format!("INSERT 0 {count}"))),
    }
}
