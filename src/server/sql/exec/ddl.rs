//! Schema statements (CREATE TABLE, CREATE/DROP INDEX, DROP TABLE, CREATE/DROP SEQUENCE,
//! CREATE/DROP DATABASE, ALTER TABLE: [`super::alter`]): applied to the catalog at once, not
//! recorded.
//!
//! Databases: the server keeps one store, so every connection sees the same tables whatever
//! database it names at startup. `CREATE DATABASE name` records the name (a second CREATE of
//! it is `42P04`, as in PostgreSQL) and `DROP DATABASE name` forgets it (an unknown name is
//! `3D000`); neither creates nor drops a table. A test runner that creates `test_app`, migrates
//! it, runs its tests and drops it (Django's) records its tables in the one store.

use sqlparser::ast::{CreateTable, TableConstraint};

use super::alter::{alter_table, column_of};
use super::first_words;
use crate::server::sql::catalog::Catalog;
use crate::server::sql::eval::{self, column_ref, object_name};
use crate::server::sql::{Outcome, SqlError};
use crate::store::KvRead;

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
        S::CreateDatabase {
            db_name,
            if_not_exists,
            ..
        } => {
            let name = object_name(db_name)?;
            if !catalog.create_database(&name) && !if_not_exists {
                return Err(SqlError::new(
                    "42P04",
                    format!("database \"{name}\" already exists"),
                ));
            }
            Ok(Outcome::Done("CREATE DATABASE".into()))
        }
        S::CreateSequence {
            if_not_exists,
            name,
            sequence_options,
            ..
        } => create_sequence(catalog, *if_not_exists, name, sequence_options),
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
            ObjectType::Database => {
                for n in names {
                    let name = object_name(n)?;
                    if !catalog.drop_database(&name) && !if_exists {
                        return Err(SqlError::new(
                            "3D000",
                            format!("database \"{name}\" does not exist"),
                        ));
                    }
                }
                Ok(Outcome::Done("DROP DATABASE".into()))
            }
            ObjectType::Sequence => {
                for n in names {
                    let name = object_name(n)?;
                    if !catalog.sequences.drop_sequence(&name) && !if_exists {
                        return Err(SqlError::undefined_table(&name));
                    }
                }
                Ok(Outcome::Done("DROP SEQUENCE".into()))
            }
            other => Err(SqlError::unsupported(format!("DROP {other}"))),
        },
        other => Err(SqlError::unsupported(format!(
            "the statement {}",
            first_words(&other.to_string())
        ))),
    }
}

pub(super) fn create_table(catalog: &mut Catalog, c: &CreateTable) -> Result<Outcome, SqlError> {
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
        let (column, primary) = column_of(catalog, &name, def)?;
        if primary {
            key.push(columns.len());
        }
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

/// `CREATE SEQUENCE name [START [WITH] n] [INCREMENT [BY] n]` (other options accepted and
/// ignored but `CYCLE`, `MINVALUE`, `MAXVALUE`, which are refused).
fn create_sequence(
    catalog: &mut Catalog,
    if_not_exists: bool,
    name: &sqlparser::ast::ObjectName,
    options: &[sqlparser::ast::SequenceOptions],
) -> Result<Outcome, SqlError> {
    use sqlparser::ast::SequenceOptions as O;
    let name = object_name(name)?;
    if if_not_exists && catalog.sequences.find(&name).is_some() {
        return Ok(Outcome::Done("CREATE SEQUENCE".into()));
    }
    let number = |e: &sqlparser::ast::Expr| -> Result<i64, SqlError> {
        match eval::eval(e, &mut eval::NoColumns, &[])? {
            crate::store::Value::Int(i) => Ok(i),
            other => Err(SqlError::new(
                "22023",
                format!("a sequence option must be an integer, not {other}"),
            )),
        }
    };
    let (mut start, mut increment) = (None, 1);
    for option in options {
        match option {
            O::StartWith(e, _) => start = Some(number(e)?),
            O::IncrementBy(e, _) => increment = number(e)?,
            O::DataType(_) | O::Cache(_) | O::Cycle(false) | O::OwnedBy(None) => {}
            O::MinValue(None) | O::MaxValue(None) => {}
            other => {
                return Err(SqlError::unsupported(format!(
                    "the sequence option {other}"
                )))
            }
        }
    }
    // PostgreSQL starts an ascending sequence at 1, a descending one at -1.
    let start = start.unwrap_or(if increment > 0 { 1 } else { -1 });
    catalog.sequences.create(&name, start, increment, None)?;
    Ok(Outcome::Done("CREATE SEQUENCE".into()))
}
