//! UPDATE: the matching rows found as a SELECT finds them (with `UPDATE … FROM`, joined with
//! the FROM items as a SELECT joins them), then each assigned cell written (assignments see
//! the row's old values, and may hold subqueries, correlated or not; reads of cells then
//! written are locked). The assignment step is shared with INSERT … ON CONFLICT DO UPDATE;
//! finding the target rows with DELETE … USING.

use sqlparser::ast::{AssignmentTarget, Expr, TableWithJoins, Update, UpdateTableFromKind};

use super::from_clause::FromClause;
use super::join::join_rows;
use super::project::{projection_items, returning_rows};
use super::select::select;
use super::subquery::{holds_query, matching_rows, Subqueries, SubqueryRow};
use super::{row_cols, source_of, Exec, RowState, Source};
use crate::server::locks::Mode;
use crate::server::sql::catalog::{Catalog, TableDef};
use crate::server::sql::eval::{coerce, eval, object_name};
use crate::server::sql::{Outcome, SqlError};
use crate::store::{KeyRef, KvWrite, Value};

pub(super) fn check_not_null(table: &TableDef, c: usize, v: &Value) -> Result<(), SqlError> {
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

pub(super) fn assignments(
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

/// Evaluates the assignments on each row (old values; a subquery in one runs for the row),
/// then writes the cells.
pub(super) fn apply_assignments(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    assigns: &[(usize, Expr)],
    combo: &mut [RowState],
    excluded: Option<&[Value]>,
) -> Result<(), SqlError> {
    let params = x.params;
    let mut new = Vec::with_capacity(assigns.len());
    let mut subqueries = Subqueries::new(select);
    for (c, e) in assigns {
        let v = if excluded.is_none() && holds_query(e) {
            let mut row = SubqueryRow {
                x: &mut *x,
                sources,
                combo: &mut *combo,
                subqueries: &mut subqueries,
            };
            eval(e, &mut row, params)?
        } else {
            let mut cols = row_cols(x, sources, combo);
            cols.excluded = excluded;
            eval(e, &mut cols, params)?
        };
        let table = x.catalog.get(sources[0].table);
        let v = coerce(v, table.columns[*c].ty)?;
        check_not_null(table, *c, &v)?;
        new.push(v);
    }
    for ((c, _), v) in assigns.iter().zip(new) {
        let key = combo[0].cells[*c];
        x.tx.put(key, v.clone());
        x.notes.writes.insert(KeyRef::Plain(key));
        combo[0].cache[*c] = Some(v);
    }
    Ok(())
}

pub(super) fn update(x: &mut Exec<'_, '_>, u: &Update) -> Result<Outcome, SqlError> {
    if !u.table.joins.is_empty() {
        return Err(SqlError::unsupported("UPDATE of a join"));
    }
    let from_items = match &u.from {
        None => None,
        Some(UpdateTableFromKind::AfterSet(items)) => Some(items),
        Some(UpdateTableFromKind::BeforeSet(_)) => {
            return Err(SqlError::unsupported("UPDATE FROM … SET"))
        }
    };
    let source = source_of(x.catalog, &u.table.relation)?;
    let assigns = assignments(x.catalog, source.table, &u.assignments)?;
    if assigns.iter().any(|(_, e)| holds_query(e)) {
        // Each key read once, also by the assignments' subqueries (see [`super`]).
        x.notes.once = true;
    }
    let from_items = from_items.map(Vec::as_slice);
    let selection = u.selection.as_ref();
    let (targets, mut matched) = target_rows(x, source, from_items, selection)?;
    let sources = targets.sources();
    let returning = match &u.returning {
        Some(items) => Some(projection_items(x.catalog, sources, items)?),
        None => None,
    };
    for combo in &mut matched {
        apply_assignments(x, sources, &assigns, combo, None)?;
    }
    let count = matched.len();
    match returning {
        Some(items) => {
            let rows = returning_rows(x, sources, &items, &mut matched)?;
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

/// The sources of UPDATE's or DELETE's rows: its table alone, or joined with FROM (USING).
pub(super) enum Targets<'q> {
    One([Source; 1]),
    Joined(FromClause<'q>),
}

impl Targets<'_> {
    /// The sources, the target first.
    pub(super) fn sources(&self) -> &[Source] {
        match self {
            Targets::One(one) => one,
            Targets::Joined(from) => &from.sources,
        }
    }
}

/// The rows of UPDATE's or DELETE's table `target` that `selection` selects, locked
/// exclusively: alone, or joined with the FROM (USING) items `from` — whose rows are read as a
/// SELECT reads them and locked as its plain reads are — each target row once (with the first
/// combination it is part of: PostgreSQL updates a row once whatever the number of rows it
/// joins).
pub(super) fn target_rows<'q>(
    x: &mut Exec<'_, '_>,
    target: Source,
    from: Option<&'q [TableWithJoins]>,
    selection: Option<&Expr>,
) -> Result<(Targets<'q>, Vec<Vec<RowState>>), SqlError> {
    let targets = match from {
        None => Targets::One([target]),
        Some(from) => Targets::Joined(FromClause::build(x, Some(target), from)?),
    };
    let read_lock = x.read_lock;
    let read = &mut |x: &mut Exec<'_, '_>, selection: Option<&Expr>| match &targets {
        Targets::One([one]) => super::rows::matching_rows(x, one, selection, Mode::Exclusive),
        Targets::Joined(from) => join_rows(x, from, selection, (Mode::Exclusive, read_lock)),
    };
    let mut rows = matching_rows(x, select, targets.sources(), selection, read)?;
    if let Targets::Joined(_) = targets {
        let mut seen = rustc_hash::FxHashSet::default();
        rows.retain(|combo| seen.insert(combo[0].key.as_ptr()));
    }
    Ok((targets, rows))
}
