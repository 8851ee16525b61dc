//! `ALTER TABLE`, the forms schema migrations send (Django's migration executor, pgbench -i),
//! each applied to the catalog only where what it says is what the server keeps:
//!
//! - `ADD [CONSTRAINT name] PRIMARY KEY (columns)` on a table without key: its committed rows
//!   are keyed by those columns from then on ([`Catalog::set_key`]).
//! - `ADD [CONSTRAINT name] UNIQUE (…)`, `FOREIGN KEY (…) REFERENCES t (…) [DEFERRABLE
//!   INITIALLY DEFERRED]`, `CHECK (…)`: accepted and not enforced, as the same constraints in
//!   CREATE TABLE (the columns and the referenced table must exist).
//! - `ALTER COLUMN c DROP NOT NULL` (refused on a primary-key column, `42P16`, as PostgreSQL
//!   does), `SET NOT NULL` (refused, `23502`, while a committed row holds a NULL), `SET
//!   DEFAULT e`, `DROP DEFAULT`, `TYPE t` when `t` is kept as the column's type already
//!   (`varchar(100)` to `varchar(150)`: lengths are not kept); another type is refused.
//! - `DROP COLUMN c` (not a primary-key or SERIAL/identity column): the column leaves the
//!   table; its cells' events stay in the recording under their names.
//! - `ADD COLUMN` to a table no row was ever inserted into (a row would need the new cell).
//!
//! Anything else is refused with `0A000` naming the operation. Column definitions (CREATE
//! TABLE's and ADD COLUMN's) become catalog columns here too ([`column_of`]).

use sqlparser::ast::{
    AlterColumnOperation, AlterTableOperation, ColumnDef, ColumnOption, TableConstraint,
};

use crate::server::sql::catalog::{Catalog, Column};
use crate::server::sql::eval::{self, column_ref, ident, object_name};
use crate::server::sql::{Outcome, SqlError};
use crate::store::{KvRead, Value};

/// Runs `ALTER TABLE` (see the module documentation); `committed` reads the latest committed
/// state (not recorded).
pub(super) fn alter_table(
    catalog: &mut Catalog,
    committed: &mut dyn KvRead,
    a: &sqlparser::ast::AlterTable,
) -> Result<Outcome, SqlError> {
    let name = object_name(&a.name)?;
    let Some(t) = catalog.table(&name) else {
        if a.if_exists {
            return Ok(Outcome::Done("ALTER TABLE".into()));
        }
        return Err(SqlError::undefined_table(&name));
    };
    for op in &a.operations {
        match op {
            AlterTableOperation::AddConstraint { constraint, .. } => {
                add_constraint(catalog, committed, t, constraint, op)?
            }
            AlterTableOperation::AlterColumn { column_name, op } => {
                alter_column(catalog, committed, t, &ident(column_name), op)?
            }
            AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for c in column_names {
                    let c = ident(c);
                    match catalog.get(t).column(&c) {
                        Some(i) => catalog.drop_column(t, i)?,
                        None if *if_exists => {}
                        None => return Err(SqlError::undefined_column(&c)),
                    }
                }
            }
            AlterTableOperation::AddColumn {
                if_not_exists,
                column_def,
                ..
            } => {
                let c = ident(&column_def.name);
                if catalog.get(t).column(&c).is_some() {
                    if *if_not_exists {
                        continue;
                    }
                    return Err(SqlError::new(
                        "42701",
                        format!("column \"{c}\" of relation \"{name}\" already exists"),
                    ));
                }
                if !catalog.get(t).rows.is_empty() {
                    return Err(SqlError::unsupported(
                        "ALTER TABLE … ADD COLUMN on a table that has had rows",
                    ));
                }
                let (column, primary) = column_of(catalog, &name, column_def)?;
                if primary {
                    return Err(SqlError::unsupported(
                        "ALTER TABLE … ADD COLUMN … PRIMARY KEY",
                    ));
                }
                catalog.get_mut(t).columns.push(column);
            }
            other => return Err(SqlError::unsupported(format!("ALTER TABLE … {other}"))),
        }
    }
    Ok(Outcome::Done("ALTER TABLE".into()))
}

/// `ADD CONSTRAINT`: a primary key is applied; UNIQUE, FOREIGN KEY and CHECK are accepted,
/// not enforced, once their columns (and a foreign key's table) are found.
fn add_constraint(
    catalog: &mut Catalog,
    committed: &mut dyn KvRead,
    t: usize,
    constraint: &TableConstraint,
    op: &AlterTableOperation,
) -> Result<(), SqlError> {
    let column_of_expr = |catalog: &Catalog, e: &sqlparser::ast::Expr| {
        let (_, cname) =
            column_ref(e).ok_or_else(|| SqlError::unsupported(format!("the key part {e}")))?;
        catalog
            .get(t)
            .column(&cname)
            .ok_or_else(|| SqlError::undefined_column(&cname))
    };
    match constraint {
        TableConstraint::PrimaryKey(pk) => {
            let key = pk
                .columns
                .iter()
                .map(|ic| column_of_expr(catalog, &ic.column.expr))
                .collect::<Result<Vec<usize>, _>>()?;
            catalog.set_key(t, key, committed)
        }
        TableConstraint::Unique(u) => {
            for ic in &u.columns {
                column_of_expr(catalog, &ic.column.expr)?;
            }
            Ok(())
        }
        TableConstraint::ForeignKey(fk) => {
            for c in &fk.columns {
                let c = ident(c);
                catalog
                    .get(t)
                    .column(&c)
                    .ok_or_else(|| SqlError::undefined_column(&c))?;
            }
            let foreign = object_name(&fk.foreign_table)?;
            let f = catalog
                .table(&foreign)
                .ok_or_else(|| SqlError::undefined_table(&foreign))?;
            for c in &fk.referred_columns {
                let c = ident(c);
                catalog
                    .get(f)
                    .column(&c)
                    .ok_or_else(|| SqlError::undefined_column(&c))?;
            }
            Ok(())
        }
        TableConstraint::Check(_) => Ok(()),
        _ => Err(SqlError::unsupported(format!("ALTER TABLE … {op}"))),
    }
}

/// `ALTER COLUMN column …`.
fn alter_column(
    catalog: &mut Catalog,
    committed: &mut dyn KvRead,
    t: usize,
    column: &str,
    op: &AlterColumnOperation,
) -> Result<(), SqlError> {
    let table = catalog.get(t);
    let c = table
        .column(column)
        .ok_or_else(|| SqlError::undefined_column(column))?;
    match op {
        AlterColumnOperation::DropNotNull => {
            if table.is_key_column(c) {
                return Err(SqlError::new(
                    "42P16",
                    format!("column \"{column}\" is in a primary key"),
                ));
            }
            catalog.get_mut(t).columns[c].not_null = false;
        }
        AlterColumnOperation::SetNotNull => {
            if !table.is_key_column(c) {
                let holds_null = table.rows.iter().any(|row| {
                    committed.set_contains(table.set, row.elem)
                        && committed.get(row.cells[c]).unwrap_or(Value::Null) == Value::Null
                });
                if holds_null {
                    return Err(SqlError::new(
                        "23502",
                        format!(
                            "column \"{column}\" of relation \"{}\" contains null values",
                            table.name
                        ),
                    ));
                }
            }
            catalog.get_mut(t).columns[c].not_null = true;
        }
        AlterColumnOperation::SetDefault { value } => {
            catalog.get_mut(t).columns[c].default = Some(value.clone());
        }
        AlterColumnOperation::DropDefault => catalog.get_mut(t).columns[c].default = None,
        AlterColumnOperation::SetDataType {
            data_type,
            using: None,
            ..
        } => {
            let same =
                matches!(eval::sql_type(data_type), Some((ty, false)) if ty == table.columns[c].ty);
            if !same {
                return Err(SqlError::unsupported(format!(
                    "changing the type of column \"{column}\" to {data_type}"
                )));
            }
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "ALTER TABLE … ALTER COLUMN \"{column}\" {other}"
            )))
        }
    }
    Ok(())
}

/// Column `def` of table `table` (CREATE TABLE's, ADD COLUMN's) as the catalog keeps it, and whether it is the primary key
/// (a SERIAL or identity column gets its sequence, `table_column_seq`).
pub(super) fn column_of(
    catalog: &mut Catalog,
    table: &str,
    def: &ColumnDef,
) -> Result<(Column, bool), SqlError> {
    let (ty, mut serial) = eval::sql_type(&def.data_type)
        .ok_or_else(|| SqlError::unsupported(format!("the type {}", def.data_type)))?;
    let mut column = Column {
        name: ident(&def.name),
        ty,
        not_null: false,
        default: None,
        sequence: None,
        identity: None,
    };
    let mut primary = false;
    for o in &def.options {
        match &o.option {
            ColumnOption::NotNull => column.not_null = true,
            ColumnOption::Null => {}
            ColumnOption::Default(e) => column.default = Some(e.clone()),
            ColumnOption::PrimaryKey(_) => {
                column.not_null = true;
                primary = true;
            }
            ColumnOption::Unique(_) | ColumnOption::ForeignKey(_) | ColumnOption::Check(_) => {}
            other if other.to_string().to_uppercase().contains("IDENTITY") => {
                serial = true;
                let always = other.to_string().to_uppercase().contains("ALWAYS");
                column.identity = Some(if always { 'a' } else { 'd' });
            }
            other => return Err(SqlError::unsupported(format!("the column option {other}"))),
        }
    }
    if serial {
        column.not_null = true;
        column.sequence = Some(catalog.sequences.create_for_column(table, &column.name));
    }
    Ok((column, primary))
}
