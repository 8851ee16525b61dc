//! INSERT (multi-row VALUES or a SELECT's rows, defaults and SERIAL values, `ON CONFLICT DO
//! NOTHING/UPDATE`, RETURNING) and the rows of `COPY … FROM STDIN` inserted as one statement.
//! `INSERT … SELECT` runs its query first (its reads recorded as that SELECT's), then inserts
//! each row it returned as a VALUES row is inserted.

use sqlparser::ast::{Expr, Insert, OnConflictAction, OnInsert, Query, SetExpr, TableObject};

use super::project::{projection_items, returning_rows};
use super::select::select;
use super::unnest::unnest_select;
use super::update::{apply_assignments, assignments, check_not_null};
use super::{first_words, lock, table_of, Exec, NoRow, RowState, Source};
use crate::server::locks::{Mode, Resource};
use crate::server::sql::catalog::TableDef;
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

/// The values one row of an INSERT gives: its VALUES expressions (`DEFAULT` among them), or
/// a row its SELECT returned.
#[derive(Clone, Copy)]
enum Given<'r> {
    Exprs(&'r [Expr]),
    Values(&'r [Value]),
}

/// One row of an INSERT into table `t` as a full row: the given values coerced to their
/// columns' types, the others from their SERIAL sequence, their DEFAULT, else NULL; NOT NULL
/// checked. Sequence functions (`nextval('s')`) in the values and defaults count for the
/// statement's connection.
fn full_row(
    x: &mut Exec<'_, '_>,
    t: usize,
    targets: &[usize],
    given: Given<'_>,
) -> Result<Vec<Value>, SqlError> {
    let params = x.params;
    let mut no_row = NoRow {
        catalog: &mut *x.catalog,
        session: x.tx.session(),
    };
    let ncols = no_row.catalog.get(t).columns.len();
    let mut row: Vec<Option<Value>> = vec![None; ncols];
    for (i, &c) in targets.iter().enumerate() {
        let v = match given {
            Given::Exprs(exprs) => {
                let e = &exprs[i];
                if matches!(e, Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default")) {
                    continue;
                }
                eval(e, &mut no_row, params)?
            }
            Given::Values(values) => values[i].clone(),
        };
        row[c] = Some(coerce(v, no_row.catalog.get(t).columns[c].ty)?);
    }
    let mut full = Vec::with_capacity(ncols);
    for (c, v) in row.into_iter().enumerate() {
        let v = match v {
            Some(v) => v,
            None => {
                let column = &no_row.catalog.get(t).columns[c];
                let (ty, sequence, default) = (column.ty, column.sequence, column.default.clone());
                if let Some(s) = sequence {
                    let session = no_row.session;
                    Value::Int(no_row.catalog.sequences.nextval(session, s)?)
                } else if let Some(d) = default {
                    coerce(eval(&d, &mut no_row, params)?, ty)?
                } else {
                    Value::Null
                }
            }
        };
        check_not_null(no_row.catalog.get(t), c, &v)?;
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

/// What an INSERT inserts into: the table (as the one source RETURNING and `excluded.*`
/// name), the columns its values go to, and its ON CONFLICT action with DO UPDATE's
/// assignments.
struct Target<'i> {
    t: usize,
    sources: [Source; 1],
    columns: Vec<usize>,
    on_conflict: Option<&'i OnConflictAction>,
    do_update: Option<Vec<(usize, Expr)>>,
}

fn target<'i>(x: &mut Exec<'_, '_>, i: &'i Insert) -> Result<Target<'i>, SqlError> {
    let TableObject::TableName(name) = &i.table else {
        return Err(SqlError::unsupported("INSERT INTO a table function"));
    };
    let t = table_of(x.catalog, name)?;
    let alias = match &i.table_alias {
        Some(a) => ident(&a.alias),
        None => object_name(name)?,
    };
    let columns = insert_targets(x.catalog.get(t), &i.columns)?;
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
    Ok(Target {
        t,
        sources: [Source::table(t, alias)],
        columns,
        on_conflict,
        do_update,
    })
}

/// The rows an `INSERT … SELECT` inserts: its query run as a SELECT (its reads recorded as
/// that SELECT's), before any row is inserted, as PostgreSQL runs it.
fn selected_rows(x: &mut Exec<'_, '_>, q: &Query) -> Result<Vec<Vec<Value>>, SqlError> {
    let selected = match unnest_select(x, q) {
        Some(outcome) => outcome?,
        None => select(x, q)?,
    };
    match selected {
        Outcome::Rows { rows, .. } => Ok(rows),
        Outcome::Done(_) => Ok(Vec::new()),
    }
}

pub(super) fn insert(x: &mut Exec<'_, '_>, i: &Insert) -> Result<Outcome, SqlError> {
    let Some(source) = &i.source else {
        return Err(SqlError::unsupported("INSERT without VALUES"));
    };
    let selected = match source.body.as_ref() {
        SetExpr::Values(_) => None,
        SetExpr::Select(_) => Some(selected_rows(x, source)?),
        other => {
            return Err(SqlError::unsupported(format!(
                "INSERT from the query {}",
                first_words(&other.to_string())
            )))
        }
    };
    let target = target(x, i)?;
    // Before any SERIAL value is taken: a wait here leaves the sequence as it was.
    lock(
        x,
        Resource::Table(x.catalog.get(target.t).set),
        Mode::IntentExclusive,
    )?;
    let returning = match &i.returning {
        Some(items) => Some(projection_items(x.catalog, &target.sources, items)?),
        None => None,
    };
    let mut affected: Vec<Vec<RowState>> = Vec::new();
    let width = target.columns.len();
    let bad_width = |n: usize| {
        SqlError::new(
            "42601",
            format!("INSERT has {n} expressions for {width} target columns"),
        )
    };
    match (&selected, source.body.as_ref()) {
        (Some(rows), _) => {
            for row in rows {
                if row.len() != width {
                    return Err(bad_width(row.len()));
                }
                let full = full_row(x, target.t, &target.columns, Given::Values(row))?;
                affected.extend(insert_row(x, &target, full)?);
            }
        }
        (None, SetExpr::Values(values)) => {
            for row_exprs in &values.rows {
                if row_exprs.len() != width {
                    return Err(bad_width(row_exprs.len()));
                }
                let full = full_row(x, target.t, &target.columns, Given::Exprs(row_exprs))?;
                affected.extend(insert_row(x, &target, full)?);
            }
        }
        (None, _) => unreachable!("a VALUES body unless selected"),
    }
    let count = affected.len();
    match returning {
        Some(items) => {
            let rows = returning_rows(x, &target.sources, &items, &mut affected)?;
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

/// Inserts one full row (or on a conflict does nothing or updates the existing row): the
/// row affected, `None` when ON CONFLICT DO NOTHING skipped it.
fn insert_row(
    x: &mut Exec<'_, '_>,
    target: &Target<'_>,
    full: Vec<Value>,
) -> Result<Option<Vec<RowState>>, SqlError> {
    let t = target.t;
    let ncols = full.len();
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
            return match target.on_conflict {
                Some(OnConflictAction::DoNothing) => Ok(None),
                Some(OnConflictAction::DoUpdate(_)) => {
                    let r = existing.expect("a present row was inserted before");
                    let stored = &x.catalog.get(t).rows[r as usize];
                    let mut combo = vec![RowState {
                        table: t,
                        key: stored.key.clone(),
                        cells: stored.cells.clone(),
                        cache: vec![None; ncols],
                    }];
                    let assigns = target
                        .do_update
                        .as_ref()
                        .expect("DO UPDATE has assignments");
                    apply_assignments(x, &target.sources, assigns, &mut combo, Some(&full))?;
                    Ok(Some(combo))
                }
                None => Err(duplicate_key(x.catalog.get(t), &key)),
            };
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
    Ok(Some(vec![RowState {
        table: t,
        key,
        cells,
        cache: full.into_iter().map(Some).collect(),
    }]))
}
