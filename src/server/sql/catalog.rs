//! The tables the clients created: columns, types, primary keys, the rows ever inserted, and
//! the store keys of every cell, named as the application names them (`acct.bal[id=1]`).
//!
//! Layout on the store (no MonkeyDB `LastPrimaryKey`: it would make every two inserts into a
//! table read and write one key, a false lost update):
//! - a membership set per table (id = hash of `table`), whose elements are rows
//!   (`table[id=1]`); a row exists while its element is in the set;
//! - one plain key per non-key cell (`table.column[id=1]`); key columns are the row's identity
//!   and never change (an UPDATE of a key column is refused), so they have no cells;
//! - a table without a primary key numbers its rows from a non-transactional counter
//!   (`ctid=1`, `ctid=2`, …), as PostgreSQL's physical row ids are not transactional data.
//!
//! Schema changes (CREATE/DROP TABLE, CREATE INDEX) are not transactional here and are not
//! recorded: they happen when the statement runs. A table dropped and created again gets a
//! new generation (`table#2`) so that its keys never meet the rows of the old one.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::sequence::Sequences;
use super::SqlError;
use crate::stable_hash::hash_str;
use crate::store::{KeyRef, KvRead, Value};

/// A column type the server stores and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlType {
    /// `smallint`
    Int2,
    /// `integer`, `serial`
    Int4,
    /// `bigint`, `bigserial`
    Int8,
    /// `numeric`, `decimal`
    Numeric,
    /// `real`, `double precision`
    Float8,
    /// `text`, `varchar`, `char`
    Text,
    /// `boolean`
    Bool,
    /// `timestamp` (kept as its text)
    Timestamp,
}

impl SqlType {
    /// Whether values of the type are numbers.
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Numeric | SqlType::Float8
        )
    }

    /// Whether values of the type are integers.
    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
    }
}

/// A column of a table.
#[derive(Debug, Clone)]
pub struct Column {
    /// The column's name (lower case unless quoted).
    pub name: String,
    /// Its type.
    pub ty: SqlType,
    /// `NOT NULL` (primary-key columns too).
    pub not_null: bool,
    /// `DEFAULT` expression, evaluated when an INSERT leaves the column out.
    pub default: Option<sqlparser::ast::Expr>,
    /// SERIAL / identity: the sequence its values come from when an INSERT leaves it out
    /// ([`super::sequence`], outside transactions).
    pub sequence: Option<usize>,
    /// An identity column's kind, as `pg_attribute.attidentity` says it: `a` (GENERATED
    /// ALWAYS), `d` (BY DEFAULT); `None` for other columns (SERIAL too).
    pub identity: Option<char>,
}

/// A row ever inserted into a table (it may have been deleted since, or rolled back).
#[derive(Debug, Clone)]
pub struct Row {
    /// The primary-key values, in key order (`ctid` for a table without key).
    pub key: Arc<[Value]>,
    /// The membership element of the row in the table's set.
    pub elem: u64,
    /// The store key of each column's cell (0 for key columns, which have none).
    pub cells: Arc<[u64]>,
}

/// A table.
#[derive(Debug)]
pub struct TableDef {
    /// The name the application uses.
    pub name: String,
    /// The name keys carry (`name`, or `name#g` for a later generation).
    pub key_name: String,
    /// Columns in definition order.
    pub columns: Vec<Column>,
    /// Positions of the primary-key columns, in key order; empty: no key (rows numbered).
    pub key: Vec<usize>,
    /// The membership set.
    pub set: u64,
    /// Rows ever inserted, in insertion order.
    pub rows: Vec<Row>,
    by_label: FxHashMap<Arc<str>, u32>,
    /// The counter behind the row numbers of a table without key (never rolled back).
    pub sequence: i64,
}

impl TableDef {
    /// The position of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Whether column `i` is a primary-key column (it then has no cell).
    pub fn is_key_column(&self, i: usize) -> bool {
        self.key.contains(&i)
    }

    /// The row label of key values: `id=1`, `a=1,b='x'`.
    pub fn label(&self, key: &[Value]) -> String {
        label(&self.columns, &self.key, key)
    }
}

/// The row label of key values `values` of key columns `key`: `id=1`, `a=1,b='x'`, or
/// `ctid=7` without key columns.
fn label(columns: &[Column], key: &[usize], values: &[Value]) -> String {
    let mut out = String::new();
    if key.is_empty() {
        out.push_str("ctid=");
        push_value(&mut out, &values[0]);
        return out;
    }
    for (n, (&c, v)) in key.iter().zip(values).enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(&columns[c].name);
        out.push('=');
        push_value(&mut out, v);
    }
    out
}

fn push_value(out: &mut String, v: &Value) {
    use std::fmt::Write;
    match v {
        Value::Text(t) => {
            out.push('\'');
            out.push_str(&t.replace('\'', "''"));
            out.push('\'');
        }
        Value::Real(r) => {
            let _ = write!(out, "{r}");
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// The tables and the names of their keys.
#[derive(Debug, Default)]
pub struct Catalog {
    tables: Vec<TableDef>,
    by_name: FxHashMap<String, usize>,
    generations: FxHashMap<String, u32>,
    names: FxHashMap<KeyRef, Arc<str>>,
    /// The names `CREATE DATABASE` gave (every connection sees the one store whatever
    /// database it names; see [`super::exec::schema`]).
    databases: Vec<String>,
    /// The sequences (`CREATE SEQUENCE`, SERIAL and identity columns').
    pub sequences: Sequences,
}

impl Catalog {
    /// The table named `name`.
    pub fn table(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The names of the tables (not dropped), in no order.
    pub fn table_names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// Table number `t`.
    pub fn get(&self, t: usize) -> &TableDef {
        &self.tables[t]
    }

    /// Table number `t`, if there is one (dropped or not).
    pub fn table_at(&self, t: usize) -> Option<&TableDef> {
        self.tables.get(t)
    }

    /// Table number `t`, mutable.
    pub fn get_mut(&mut self, t: usize) -> &mut TableDef {
        &mut self.tables[t]
    }

    /// Adds a table (the caller checked that the name is free).
    pub fn create(&mut self, name: &str, columns: Vec<Column>, key: Vec<usize>) -> usize {
        let generation = self.generations.entry(name.to_string()).or_insert(0);
        *generation += 1;
        let key_name = if *generation == 1 {
            name.to_string()
        } else {
            format!("{name}#{generation}")
        };
        let t = self.tables.len();
        self.tables.push(TableDef {
            name: name.to_string(),
            set: hash_str(&key_name),
            key_name,
            columns,
            key,
            rows: Vec::new(),
            by_label: FxHashMap::default(),
            sequence: 0,
        });
        self.by_name.insert(name.to_string(), t);
        t
    }

    /// Removes a table's name (its keys stay in the store, under its generation's name) and
    /// its columns' sequences.
    pub fn drop_table(&mut self, name: &str) -> bool {
        let dropped = self.by_name.remove(name).is_some();
        if dropped {
            self.sequences.drop_owned_by(name);
        }
        dropped
    }

    /// Records database name `name` (`CREATE DATABASE`); `false` if it was recorded already.
    pub fn create_database(&mut self, name: &str) -> bool {
        if self.databases.iter().any(|d| d == name) {
            return false;
        }
        self.databases.push(name.to_string());
        true
    }

    /// Forgets database name `name` (`DROP DATABASE`); `false` if it was not recorded.
    pub fn drop_database(&mut self, name: &str) -> bool {
        let before = self.databases.len();
        self.databases.retain(|d| d != name);
        self.databases.len() < before
    }

    /// Removes column `c` of table `t` (`ALTER TABLE … DROP COLUMN`): it leaves the table's
    /// definition and every row's cells; the events recorded on its cells keep their names.
    /// A primary-key column or one with a sequence (SERIAL, identity) is refused.
    pub fn drop_column(&mut self, t: usize, c: usize) -> Result<(), SqlError> {
        let table = &mut self.tables[t];
        let column = &table.columns[c];
        if table.key.contains(&c) || column.sequence.is_some() {
            return Err(SqlError::unsupported(format!(
                "dropping the primary-key, SERIAL or identity column \"{}\"",
                column.name
            )));
        }
        table.columns.remove(c);
        for k in &mut table.key {
            if *k > c {
                *k -= 1;
            }
        }
        for row in &mut table.rows {
            let mut cells = row.cells.to_vec();
            cells.remove(c);
            row.cells = Arc::from(cells);
        }
        Ok(())
    }

    /// The object id psql's catalog queries know table `t` by (as PostgreSQL's first user
    /// objects are numbered from 16384).
    pub fn oid(t: usize) -> u32 {
        16_384 + t as u32
    }

    /// The row of `table` with key values `key`: its position among the rows ever inserted,
    /// or `None` with the row's element for a row never inserted (a phantom check reads it).
    pub fn find_row(&mut self, t: usize, key: &[Value]) -> (Option<u32>, u64, Arc<str>) {
        let table = &self.tables[t];
        let label = table.label(key);
        if let Some(&r) = table.by_label.get(label.as_str()) {
            let row = &table.rows[r as usize];
            let name = self
                .names
                .get(&KeyRef::Member {
                    set: table.set,
                    elem: row.elem,
                })
                .cloned()
                .unwrap_or_else(|| Arc::from(label.as_str()));
            return (Some(r), row.elem, name);
        }
        let elem = hash_str(&label);
        let name: Arc<str> = Arc::from(format!("{}[{label}]", table.key_name));
        self.names
            .entry(KeyRef::Member {
                set: table.set,
                elem,
            })
            .or_insert_with(|| name.clone());
        (None, elem, name)
    }

    /// Adds a row with key values `key` to the rows ever inserted (if new) and names its keys.
    pub fn add_row(&mut self, t: usize, key: Box<[Value]>) -> u32 {
        let key: Arc<[Value]> = Arc::from(key);
        let table = &mut self.tables[t];
        let label = table.label(&key);
        if let Some(&r) = table.by_label.get(label.as_str()) {
            return r;
        }
        let elem = hash_str(&label);
        let cells: Arc<[u64]> = (0..table.columns.len())
            .map(|c| {
                if table.key.contains(&c) {
                    0
                } else {
                    let name = format!("{}.{}[{label}]", table.key_name, table.columns[c].name);
                    let key = hash_str(&name);
                    self.names.insert(KeyRef::Plain(key), Arc::from(name));
                    key
                }
            })
            .collect();
        self.names.insert(
            KeyRef::Member {
                set: table.set,
                elem,
            },
            Arc::from(format!("{}[{label}]", table.key_name)),
        );
        let r = table.rows.len() as u32;
        table.rows.push(Row { key, elem, cells });
        table.by_label.insert(Arc::from(label), r);
        r
    }

    /// Gives table `t`, which has no key yet, the primary key `key` (column positions): each
    /// row present in the committed state (`committed`) is keyed by its committed values of
    /// those columns, and its keys are named by them from then on (`acct.bal[id=1]` where they
    /// were `acct.bal[ctid=1]`, also in the events recorded before); rows not present are
    /// forgotten (a later insert of their key is a new row). A NULL or a duplicate refuses it.
    pub fn set_key(
        &mut self,
        t: usize,
        key: Vec<usize>,
        committed: &mut dyn KvRead,
    ) -> Result<(), SqlError> {
        let table = &self.tables[t];
        if !table.key.is_empty() {
            return Err(SqlError::new(
                "42P16",
                format!(
                    "multiple primary keys for table \"{}\" are not allowed",
                    table.name
                ),
            ));
        }
        let mut keyed = Vec::new();
        let mut by_label: FxHashMap<Arc<str>, u32> = FxHashMap::default();
        for (r, row) in table.rows.iter().enumerate() {
            if !committed.set_contains(table.set, row.elem) {
                continue;
            }
            let values: Arc<[Value]> = key
                .iter()
                .map(|&c| committed.get(row.cells[c]).unwrap_or(Value::Null))
                .collect();
            if let Some(c) = key
                .iter()
                .zip(values.iter())
                .find(|(_, v)| **v == Value::Null)
            {
                return Err(SqlError::new(
                    "23502",
                    format!(
                        "column \"{}\" of relation \"{}\" contains null values",
                        table.columns[*c.0].name, table.name
                    ),
                ));
            }
            let label: Arc<str> = Arc::from(label(&table.columns, &key, &values));
            if by_label.insert(label.clone(), r as u32).is_some() {
                return Err(SqlError::new(
                    "23505",
                    format!(
                        "could not create unique index \"{}_pkey\": Key ({label}) is duplicated",
                        table.name
                    ),
                ));
            }
            keyed.push((r, values, label));
        }
        for (r, values, label) in keyed {
            let table = &mut self.tables[t];
            let row = &mut table.rows[r];
            row.key = values;
            let (set, elem, cells) = (table.set, row.elem, row.cells.clone());
            self.names.insert(
                KeyRef::Member { set, elem },
                Arc::from(format!("{}[{label}]", table.key_name)),
            );
            // Every cell, the key columns' too (written before, read by the key from now).
            for (c, column) in table.columns.iter().enumerate() {
                let name = format!("{}.{}[{label}]", table.key_name, column.name);
                self.names.insert(KeyRef::Plain(cells[c]), Arc::from(name));
            }
        }
        let table = &mut self.tables[t];
        for &c in &key {
            table.columns[c].not_null = true;
        }
        table.key = key;
        table.by_label = by_label;
        Ok(())
    }

    /// The application's name of a store key, if it is one of the tables'.
    pub fn key_name(&self, key: &KeyRef) -> Option<&Arc<str>> {
        self.names.get(key)
    }
}
