//! INSERT (multi-row VALUES, defaults and SERIAL values, `ON CONFLICT DO NOTHING/UPDATE`,
//! RETURNING) and the rows of `COPY … FROM STDIN` inserted as one statement.

use sqlparser::ast::{Expr, Insert, OnConflictAction, OnInsert, SetExpr, TableObject};

use super::project::{projection_items, returning_rows};
use super::update::{apply_assignments, assignments, check_not_null};
use super::{lock, table_of, Exec, RowState, Source};
use crate::server::locks::{Mode, Resource};
use crate::server::sql::catalog::{Catalog, TableDef};
use crate::server::sql::eval::{self, coerce, eval, ident, object_name};
use crate::server::sql::{Outcome, SqlError};
use crate::store::{KeyRef, KvRead, KvWrite, Value};

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

/// The columns an INSERT's values go to, in order: the named ones, else every column.
pub(super) fn insert_targets(
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
pub(super) fn full_row(
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
pub(super) fn duplicate_key(table: &TableDef, key: &[Value]) -> SqlError {
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

pub(super) fn insert(x: &mut Exec<'_, '_>, i: &Insert) -> Result<Outcome, SqlError> {
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
