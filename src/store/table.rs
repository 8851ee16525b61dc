//! Tables over the key–value store with MonkeyDB's key layout and SQL translation
//! (Biswas et al., OOPSLA'21; as extended for IsoPredict, PLDI'24 §6; notes/workloads.md §1.4),
//! so that recorded runs have the shape of the paper's traces, with one change by default:
//! keyed scans ([`super::ScanMode`], [`super::KeyIndex`]).
//!
//! Layout of a table `T` (all keys are [`StableHasher`] hashes, equal to MonkeyDB's):
//! - metadata keys `(T, Columns)`, `(T, PrimaryKey)`, `(T, LastPrimaryKey)` (tags 0, 2, 3);
//! - a membership set (id = hash of `T`) whose elements are row ids;
//! - one key per cell `(T, ColumnKey, column, row id)` (tag 1).
//!
//! Row id: the hash of the `Vec<u64>` of primary-key values in key-definition order (integers
//! as themselves, texts as their string hash; other values are left out, as MonkeyDB leaves
//! out literals it cannot parse as integers); if the insert supplies no key column, the
//! auto-increment value `LastPrimaryKey + 1`; for a table without a key, the store's
//! non-transactional counter. (MonkeyDB takes the last UNIQUE constraint as the key of a
//! table without PRIMARY KEY; pass that as `primary_key`.)
//!
//! Statement translation, events in this order:
//! - SELECT: (only for `*`: read Columns); scan = one CONTAINS per scanned row id, ascending;
//!   read Columns; for each present row: read each distinct WHERE column (alphabetical) — a
//!   missing cell stops the whole scan — and, if the predicate holds, read each projected
//!   column.
//! - UPDATE: scan; for each present row: read the WHERE columns; if it matches, for each
//!   assignment: read the column if the assignment adds to it, then write the cell.
//! - DELETE: scan; read the WHERE columns of every present row; then one set DELETE per match
//!   (cells stay).
//! - INSERT: read Columns; read PrimaryKey; with a key: read and write LastPrimaryKey (always
//!   incremented); write each supplied cell in the given order; if auto-incremented, read
//!   LastPrimaryKey again and write the key cell; finally INSERT the row into the set. There
//!   is no uniqueness check: inserting an existing key overwrites its cells.
//!
//! The scanned row ids: MonkeyDB's full scan ([`super::ScanMode::Full`]) reads every row id
//! ever inserted. The keyed scan ([`super::ScanMode::Keyed`], the default on the embedded
//! store) reads only the rows whose primary-key values can satisfy the WHERE clause, and the
//! row id of a key the clause pins in full even when it was never inserted (a phantom check);
//! see [`super::KeyIndex`] for why this is sound. It needs key columns that never change: an
//! UPDATE may not assign a key column unless the table was built with
//! [`Table::with_mutable_key`], whose statements always scan in full. Both backends keep the
//! key index (on PostgreSQL, of the rows the transaction can see).
//!
//! A missing WHERE cell stops the scan in UPDATE and DELETE too (MonkeyDB would fail there);
//! with keyed scans, only a scanned row can stop it.

use std::cmp::Ordering;

use super::access::{KvRead, KvWrite};
use super::key_index::{key_component, KeyLookup};
use super::value::Value;
use crate::stable_hash::{hash_str, hash_u64s, StableHasher};

const TAG_COLUMNS: u64 = 0;
const TAG_COLUMN_KEY: u64 = 1;
const TAG_PRIMARY_KEY: u64 = 2;
const TAG_LAST_PRIMARY_KEY: u64 = 3;

/// A comparison in a WHERE clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// A WHERE clause: comparisons of columns with values, combined with AND / OR.
#[derive(Debug, Clone, PartialEq)]
pub enum Pred {
    /// No WHERE clause: every row matches, no column is read.
    All,
    /// `column op value`.
    Cmp(String, CmpOp, Value),
    /// Both hold.
    And(Box<Pred>, Box<Pred>),
    /// Either holds.
    Or(Box<Pred>, Box<Pred>),
}

impl Pred {
    /// `column = value`.
    pub fn eq(column: &str, value: impl Into<Value>) -> Pred {
        Pred::Cmp(column.to_string(), CmpOp::Eq, value.into())
    }

    /// `column op value`.
    pub fn cmp(column: &str, op: CmpOp, value: impl Into<Value>) -> Pred {
        Pred::Cmp(column.to_string(), op, value.into())
    }

    /// `self AND other`.
    pub fn and(self, other: Pred) -> Pred {
        Pred::And(Box::new(self), Box::new(other))
    }

    /// `self OR other`.
    pub fn or(self, other: Pred) -> Pred {
        Pred::Or(Box::new(self), Box::new(other))
    }

    fn columns<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Pred::All => {}
            Pred::Cmp(c, _, _) => out.push(c),
            Pred::And(a, b) | Pred::Or(a, b) => {
                a.columns(out);
                b.columns(out);
            }
        }
    }

    /// The distinct columns the clause reads, in the order MonkeyDB reads them (sorted).
    pub fn read_columns(&self) -> Vec<&str> {
        let mut cols = Vec::new();
        self.columns(&mut cols);
        cols.sort_unstable();
        cols.dedup();
        cols
    }

    fn eval(&self, names: &[&str], values: &[Value]) -> bool {
        match self {
            Pred::All => true,
            Pred::Cmp(c, op, v) => {
                let i = names.iter().position(|n| n == c).expect("column was read");
                op.holds(&values[i], v)
            }
            Pred::And(a, b) => a.eval(names, values) && b.eval(names, values),
            Pred::Or(a, b) => a.eval(names, values) || b.eval(names, values),
        }
    }

    /// The values the clause pins by equality in its top-level conjunction, per key position
    /// (`key` = the key columns' names, in key order); the first pin of a position counts.
    fn key_pins<'a>(&'a self, key: &[&str], pins: &mut [Option<&'a Value>]) {
        match self {
            Pred::Cmp(c, CmpOp::Eq, v) => {
                if let Some(i) = key.iter().position(|k| k == c) {
                    pins[i].get_or_insert(v);
                }
            }
            Pred::And(a, b) => {
                a.key_pins(key, pins);
                b.key_pins(key, pins);
            }
            _ => {}
        }
    }
}

impl CmpOp {
    /// `x op v` as MonkeyDB evaluates it.
    fn holds(self, x: &Value, v: &Value) -> bool {
        match self {
            CmpOp::Eq => x.sql_eq(v),
            CmpOp::Ne => !x.sql_eq(v),
            CmpOp::Lt => x.sql_cmp(v) == Ordering::Less,
            CmpOp::Le => x.sql_cmp(v) != Ordering::Greater,
            CmpOp::Gt => x.sql_cmp(v) == Ordering::Greater,
            CmpOp::Ge => x.sql_cmp(v) != Ordering::Less,
        }
    }
}

/// A WHERE clause seen through a row's primary key alone: comparisons of key columns are
/// decided, the others unknown (they may hold).
enum KeyFilter<'p> {
    Unknown,
    Cmp(usize, CmpOp, &'p Value),
    And(Box<KeyFilter<'p>>, Box<KeyFilter<'p>>),
    Or(Box<KeyFilter<'p>>, Box<KeyFilter<'p>>),
}

impl<'p> KeyFilter<'p> {
    fn new(pred: &'p Pred, key: &[&str]) -> KeyFilter<'p> {
        match pred {
            Pred::All => KeyFilter::Unknown,
            Pred::Cmp(c, op, v) => match key.iter().position(|k| k == c) {
                Some(i) => KeyFilter::Cmp(i, *op, v),
                None => KeyFilter::Unknown,
            },
            Pred::And(a, b) => KeyFilter::And(
                Box::new(KeyFilter::new(a, key)),
                Box::new(KeyFilter::new(b, key)),
            ),
            Pred::Or(a, b) => KeyFilter::Or(
                Box::new(KeyFilter::new(a, key)),
                Box::new(KeyFilter::new(b, key)),
            ),
        }
    }

    /// Whether a row with primary-key values `key` can satisfy the clause.
    fn may_hold(&self, key: &[Value]) -> bool {
        match self {
            KeyFilter::Unknown => true,
            KeyFilter::Cmp(i, op, v) => op.holds(&key[*i], v),
            KeyFilter::And(a, b) => a.may_hold(key) && b.may_hold(key),
            KeyFilter::Or(a, b) => a.may_hold(key) || b.may_hold(key),
        }
    }
}

/// The SET part of an UPDATE.
#[derive(Debug, Clone, PartialEq)]
pub enum Assign {
    /// `column = value` (no read).
    Set(String, Value),
    /// `column = column + delta` (reads the column, then writes it).
    Add(String, Value),
}

impl Assign {
    /// `column = value`.
    pub fn set(column: &str, value: impl Into<Value>) -> Assign {
        Assign::Set(column.to_string(), value.into())
    }

    /// `column = column + delta` (use a negative delta for `-`).
    pub fn add(column: &str, delta: impl Into<Value>) -> Assign {
        Assign::Add(column.to_string(), delta.into())
    }
}

/// What a SELECT returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Projection<'a> {
    /// `*`: every column in table order (reads the Columns metadata first).
    All,
    /// These columns, in this order.
    Columns(&'a [&'a str]),
}

/// A table. Cheap to share; build it once per workload.
#[derive(Debug, Clone)]
pub struct Table {
    name: String,
    columns: Vec<String>,
    primary_key: Option<Vec<usize>>,
    mutable_key: bool,
    set: u64,
    columns_key: u64,
    primary_key_key: u64,
    last_primary_key_key: u64,
    cell_prefix: Vec<StableHasher>,
}

impl Table {
    /// A table named `name` with `columns` and the key columns `primary_key` (`None` for a
    /// table without key, whose rows get counter ids).
    ///
    /// # Panics
    /// If a key column is not a column (a programming error in the schema).
    pub fn new(name: &str, columns: &[&str], primary_key: Option<&[&str]>) -> Table {
        let columns: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        let primary_key = primary_key.map(|pk| {
            pk.iter()
                .map(|k| {
                    columns
                        .iter()
                        .position(|c| c == k)
                        .unwrap_or_else(|| panic!("table {name}: key column {k} is not a column"))
                })
                .collect()
        });
        let meta = |tag: u64| StableHasher::new().str(name).u64(tag).finish();
        let cell_prefix = columns
            .iter()
            .map(|c| {
                let mut h = StableHasher::new();
                h.str(name).u64(TAG_COLUMN_KEY).str(c);
                h
            })
            .collect();
        Table {
            set: hash_str(name),
            columns_key: meta(TAG_COLUMNS),
            primary_key_key: meta(TAG_PRIMARY_KEY),
            last_primary_key_key: meta(TAG_LAST_PRIMARY_KEY),
            name: name.to_string(),
            columns,
            primary_key,
            mutable_key: false,
            cell_prefix,
        }
    }

    /// The same table, with primary-key columns an UPDATE may assign: its statements always
    /// scan every row ever inserted (MonkeyDB's scan), since a row's key may change.
    pub fn with_mutable_key(mut self) -> Table {
        self.mutable_key = true;
        self
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The columns, in table order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The index of a column.
    ///
    /// # Panics
    /// If there is no such column (a programming error in a procedure).
    pub fn column(&self, name: &str) -> usize {
        self.columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("table {}: no column {name}", self.name))
    }

    /// The id of the table's membership set.
    pub fn set_id(&self) -> u64 {
        self.set
    }

    /// The key of the `(T, Columns)` metadata.
    pub fn columns_key(&self) -> u64 {
        self.columns_key
    }

    /// The key of the `(T, PrimaryKey)` metadata.
    pub fn primary_key_key(&self) -> u64 {
        self.primary_key_key
    }

    /// The primary-key columns (indexes into [`Table::columns`]), `None` for a table without
    /// key.
    pub fn primary_key_columns(&self) -> Option<&[usize]> {
        self.primary_key.as_deref()
    }

    /// The key of the `(T, LastPrimaryKey)` metadata.
    pub fn last_primary_key_key(&self) -> u64 {
        self.last_primary_key_key
    }

    /// The key of one cell.
    pub fn cell_key(&self, column: usize, row: u64) -> u64 {
        let mut h = self.cell_prefix[column].clone();
        h.u64(row);
        h.finish()
    }

    /// The row id of a primary-key tuple (values in key-definition order).
    pub fn row_id(&self, key_values: &[Value]) -> u64 {
        let parts: Vec<u64> = key_values.iter().filter_map(key_component).collect();
        hash_u64s(&parts)
    }

    /// CREATE TABLE (normally through the loader): writes the three metadata keys.
    pub fn create(&self, kv: &mut (impl KvWrite + ?Sized)) {
        kv.put(self.columns_key, Value::from(self.columns.join(",")));
        kv.put(self.last_primary_key_key, Value::Int(0));
        let pk = match &self.primary_key {
            Some(cols) => Value::from(
                cols.iter()
                    .map(|&c| self.columns[c].as_str())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            None => Value::Null,
        };
        kv.put(self.primary_key_key, pk);
    }

    /// The row ids the statement scans, one CONTAINS each: the present ones, ascending.
    /// Keyed (only rows whose key can satisfy `pred`) when the reader keeps a key index and
    /// the key is immutable; otherwise every row id ever inserted.
    fn scan(&self, kv: &mut (impl KvRead + ?Sized), pred: &Pred) -> Vec<u64> {
        let rows = self
            .keyed_rows(kv, pred)
            .unwrap_or_else(|| kv.set_ever_inserted(self.set));
        rows.into_iter()
            .filter(|&r| kv.set_contains(self.set, r))
            .collect()
    }

    fn keyed_rows(&self, kv: &mut (impl KvRead + ?Sized), pred: &Pred) -> Option<Vec<u64>> {
        let pk = self.primary_key.as_ref().filter(|_| !self.mutable_key)?;
        let key: Vec<&str> = pk.iter().map(|&c| self.columns[c].as_str()).collect();
        let mut pins = vec![None; key.len()];
        pred.key_pins(&key, &mut pins);
        let prefix: Vec<Value> = pins.iter().map_while(|p| p.cloned()).collect();
        let filter = KeyFilter::new(pred, &key);
        let may_match = |k: &[Value]| filter.may_hold(k);
        kv.set_ever_inserted_by_key(
            self.set,
            &KeyLookup {
                key_len: key.len(),
                prefix: &prefix,
                may_match: &may_match,
            },
        )
    }

    /// Reads the WHERE columns of `row`; `None` if a cell is missing (stops the scan).
    fn where_values(
        &self,
        kv: &mut (impl KvRead + ?Sized),
        cols: &[(usize, &str)],
        row: u64,
    ) -> Option<Vec<Value>> {
        cols.iter()
            .map(|&(c, _)| kv.get(self.cell_key(c, row)))
            .collect()
    }

    fn where_columns<'p>(&self, pred: &'p Pred) -> (Vec<(usize, &'p str)>, Vec<&'p str>) {
        let names = pred.read_columns();
        let cols = names.iter().map(|&n| (self.column(n), n)).collect();
        (cols, names)
    }

    /// SELECT `projection` FROM T WHERE `pred`: the matching rows' projected values (a missing
    /// or NULL cell gives [`Value::Null`]).
    pub fn select(
        &self,
        kv: &mut (impl KvRead + ?Sized),
        projection: Projection<'_>,
        pred: &Pred,
    ) -> Vec<Vec<Value>> {
        let projected: Vec<usize> = match projection {
            Projection::All => {
                kv.get(self.columns_key);
                (0..self.columns.len()).collect()
            }
            Projection::Columns(cols) => cols.iter().map(|c| self.column(c)).collect(),
        };
        let present = self.scan(kv, pred);
        kv.get(self.columns_key);
        let (cols, names) = self.where_columns(pred);
        let mut out = Vec::new();
        for row in present {
            let Some(values) = self.where_values(kv, &cols, row) else {
                break;
            };
            if pred.eval(&names, &values) {
                out.push(
                    projected
                        .iter()
                        .map(|&c| kv.get(self.cell_key(c, row)).unwrap_or(Value::Null))
                        .collect(),
                );
            }
        }
        out
    }

    /// UPDATE T SET `assignments` WHERE `pred`; returns the number of matched rows.
    ///
    /// # Panics
    /// If an assignment names a column not in the table, or a primary-key column of a table
    /// not built [`Table::with_mutable_key`] (programming errors in a procedure).
    pub fn update(
        &self,
        kv: &mut (impl KvWrite + ?Sized),
        assignments: &[Assign],
        pred: &Pred,
    ) -> usize {
        let present = self.scan(kv, pred);
        let (cols, names) = self.where_columns(pred);
        let targets: Vec<usize> = assignments
            .iter()
            .map(|a| match a {
                Assign::Set(c, _) | Assign::Add(c, _) => self.column(c),
            })
            .collect();
        if let Some(pk) = self.primary_key.as_ref().filter(|_| !self.mutable_key) {
            if let Some(&c) = targets.iter().find(|c| pk.contains(c)) {
                panic!(
                    "table {}: UPDATE assigns key column {} (build the table with_mutable_key)",
                    self.name, self.columns[c]
                );
            }
        }
        let mut matched = 0;
        for row in present {
            let Some(values) = self.where_values(kv, &cols, row) else {
                break;
            };
            if !pred.eval(&names, &values) {
                continue;
            }
            matched += 1;
            for (a, &c) in assignments.iter().zip(&targets) {
                let key = self.cell_key(c, row);
                let value = match a {
                    Assign::Set(_, v) => v.clone(),
                    Assign::Add(_, delta) => add(&kv.get(key).unwrap_or(Value::Null), delta),
                };
                kv.put(key, value);
            }
        }
        matched
    }

    /// DELETE FROM T WHERE `pred`; returns the number of deleted rows.
    pub fn delete(&self, kv: &mut (impl KvWrite + ?Sized), pred: &Pred) -> usize {
        let present = self.scan(kv, pred);
        let (cols, names) = self.where_columns(pred);
        let mut matched = Vec::new();
        for row in present {
            let Some(values) = self.where_values(kv, &cols, row) else {
                break;
            };
            if pred.eval(&names, &values) {
                matched.push(row);
            }
        }
        for &row in &matched {
            kv.set_delete(self.set, row);
        }
        matched.len()
    }

    /// INSERT INTO T (columns) VALUES (values); returns the new row's id.
    ///
    /// # Panics
    /// If a column is not in the table (a programming error in a procedure).
    pub fn insert(&self, kv: &mut (impl KvWrite + ?Sized), values: &[(&str, Value)]) -> u64 {
        kv.get(self.columns_key);
        kv.get(self.primary_key_key);
        let supplied: Vec<usize> = values.iter().map(|(c, _)| self.column(c)).collect();
        let mut auto = false;
        let row = match &self.primary_key {
            Some(pk) => {
                let mut parts: Vec<u64> = pk
                    .iter()
                    .filter_map(|k| supplied.iter().position(|s| s == k))
                    .filter_map(|i| key_component(&values[i].1))
                    .collect();
                let last = kv
                    .get(self.last_primary_key_key)
                    .and_then(|v| v.as_i64())
                    .unwrap_or(0);
                if parts.is_empty() {
                    auto = true;
                    parts.push((last + 1) as u64);
                }
                kv.put(self.last_primary_key_key, Value::Int(last + 1));
                hash_u64s(&parts)
            }
            None => kv.next_row_counter(),
        };
        for (&c, (_, v)) in supplied.iter().zip(values) {
            kv.put(self.cell_key(c, row), v.clone());
        }
        let mut auto_id = None;
        if auto {
            let pk = self
                .primary_key
                .as_ref()
                .expect("auto-increment needs a key")[0];
            let id = kv.get(self.last_primary_key_key).unwrap_or(Value::Int(0));
            kv.put(self.cell_key(pk, row), id.clone());
            auto_id = Some(id);
        }
        match &self.primary_key {
            Some(pk) => {
                // The key values the row id is the hash of (`None` if one is not supplied).
                let key: Option<Vec<Value>> = match auto_id {
                    // The row id is the hash of `[LastPrimaryKey + 1]`, the value just written.
                    Some(id) if pk.len() == 1 && matches!(id, Value::Int(_)) => Some(vec![id]),
                    Some(_) => None,
                    None => pk
                        .iter()
                        .map(|k| {
                            supplied
                                .iter()
                                .position(|s| s == k)
                                .map(|i| values[i].1.clone())
                        })
                        .collect(),
                };
                kv.set_insert_keyed(self.set, row, key.as_deref());
            }
            None => kv.set_insert(self.set, row),
        }
        row
    }
}

/// `current + delta` as MonkeyDB computes `col + ?` (numerically; a missing value counts 0).
fn add(current: &Value, delta: &Value) -> Value {
    match (current, delta) {
        (Value::Int(a), Value::Int(b)) => Value::Int(a.wrapping_add(*b)),
        _ => Value::Real(current.as_f64().unwrap_or(0.0) + delta.as_f64().unwrap_or(0.0)),
    }
}
