//! Finding the rows a one-table statement reads (the "Finding rows" rule of [`super`]): the
//! key values a WHERE clause pins, else a scan of every row ever inserted; each candidate's
//! membership read under its lock; the conjunction evaluated on each row. Joins use the same
//! key pinning per source ([`super::join`]).

use rustc_hash::FxHashSet;
use sqlparser::ast::Expr;

use super::{lock, row_cols, Exec, RowState, Source, StoredRow};
use crate::server::locks::{Mode, Resource};
use crate::server::sql::catalog::{Catalog, SqlType};
use crate::server::sql::eval::{self, coerce, column_ref, eval, is_true, Columns};
use crate::server::sql::SqlError;
use crate::store::Value;

/// The top-level conjuncts of a WHERE clause.
pub(super) fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
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
/// one-column key), evaluating the other side with `outer` (the rows of sources bound
/// before; a column of one not bound yet fails, and pins nothing); `None`: the clause does not
/// pin the key, the table is scanned.
pub(super) fn pinned_keys(
    catalog: &Catalog,
    params: &[Value],
    clauses: &[&Expr],
    source: &Source,
    outer: &mut dyn Columns,
) -> Result<Option<Vec<Vec<Value>>>, SqlError> {
    if source.derived.is_some() {
        return Ok(None);
    }
    let table = catalog.get(source.table);
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
                            if let Ok(v) = eval(v_side, outer, params) {
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
                            let v = eval(item, &mut eval::NoColumns, params)?;
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
pub(super) fn present_rows(
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
        let present = x.notes.read_member(x.tx, set, elem);
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

/// The rows of one table's `source` the WHERE clause `selection` selects (one state each, as
/// a one-source combination), locked in `mode`.
pub(super) fn matching_rows(
    x: &mut Exec<'_, '_>,
    source: &Source,
    selection: Option<&Expr>,
    mode: Mode,
) -> Result<Vec<Vec<RowState>>, SqlError> {
    let params = x.params;
    let clauses: &[&Expr] = match &selection {
        Some(e) => std::slice::from_ref(e),
        None => &[],
    };
    let pinned = pinned_keys(x.catalog, params, clauses, source, &mut eval::NoColumns)?;
    let rows = present_rows(x, source, pinned, mode)?;
    let sources = std::slice::from_ref(source);
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let mut combo = vec![row];
        let keep = clauses.is_empty() || {
            let mut cols = row_cols(x, sources, &mut combo);
            all_true(clauses, &mut cols, params)?
        };
        if keep {
            out.push(combo);
        }
    }
    Ok(out)
}

/// Whether the conjunction of `clauses` is true, evaluated as `a AND b` is: left to right,
/// stopping at the first false one (a NULL one does not stop it).
pub(super) fn all_true(
    clauses: &[&Expr],
    cols: &mut dyn Columns,
    params: &[Value],
) -> Result<bool, SqlError> {
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
