//! Subqueries in a statement: in WHERE (`x [NOT] IN (SELECT …)`, `[NOT] EXISTS (SELECT …)`,
//! `x op ANY/ALL (SELECT …)`, `(SELECT …)` as a value), in the select list, ORDER BY and
//! HAVING. Each run is a SELECT of its own, recorded as the reads it makes: a key lookup reads
//! that key (also a missing one, which a later insert would change), a predicate over non-key
//! columns is a scan (so an insert into what it scanned stays a visible phantom), and a
//! statement with subqueries reads each key once ([`super::StatementNotes`]).
//!
//! - A WHERE subquery that names no column of the outer statement runs once, before the outer
//!   statement reads anything, and is put in as what it returned (`x IN (1, 2)`, `true`, the
//!   value): so `id IN (SELECT …)` on a key pins the rows it names, as an index lookup reads
//!   only those.
//! - A correlated one (naming the outer row's columns, [`super::correlate`]) is evaluated per
//!   outer row — after the WHERE's other conjuncts, so only for the rows they keep — with the
//!   outer values bound, and runs once per distinct values of those columns.
//! - In the select list, ORDER BY and HAVING, every subquery is evaluated per row (or group)
//!   through [`SubqueryRow`]; one naming no outer column runs once, at its first use.

use std::ops::ControlFlow;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use sqlparser::ast::{BinaryOperator, Expr, InTarget, Query, Value as SqlValue, Visit, Visitor};

use super::correlate::{bind, free_columns, names_outer, value_literal, FreeColumn};
use super::rows::{all_true, conjuncts};
use super::{row_cols, Exec, RowState, Source};
use crate::server::sql::eval::Columns;
use crate::server::sql::{Outcome, SqlError};
use crate::store::Value;

/// How a subquery runs: the SELECT translation, passed in by the callers (select.rs's
/// `select`) so that this file need not import it.
pub(super) type RunSelect = fn(&mut Exec<'_, '_>, &Query) -> Result<Outcome, SqlError>;

/// Stops at the first query inside what it visits.
struct FindQuery;

impl Visitor for FindQuery {
    type Break = ();

    fn pre_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        ControlFlow::Break(())
    }
}

/// Whether `node` (an expression, a select, an ORDER BY) holds a query.
pub(super) fn holds_query<V: Visit + ?Sized>(node: &V) -> bool {
    node.visit(&mut FindQuery).is_break()
}

/// One statement level's subqueries: how they run, the free columns of each (found once), and
/// the rows of each per values of the outer columns it names (so it runs once per distinct
/// values). Subqueries are told apart by their place in the statement's tree, which outlives
/// this.
pub(super) struct Subqueries {
    run: RunSelect,
    free: FxHashMap<usize, Vec<FreeColumn>>,
    rows: FxHashMap<(usize, String), Rc<[Vec<Value>]>>,
}

impl Subqueries {
    pub(super) fn new(run: RunSelect) -> Subqueries {
        Subqueries {
            run,
            free: FxHashMap::default(),
            rows: FxHashMap::default(),
        }
    }

    /// Runs `q` as a SELECT of its own: its rows (`42601` unless it has one column when
    /// `one_column`).
    fn run_once(
        &self,
        x: &mut Exec<'_, '_>,
        q: &Query,
        one_column: bool,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let for_update = x.notes.for_update;
        let result = (self.run)(x, q);
        x.notes.for_update = for_update;
        match result? {
            Outcome::Rows { rows, fields, .. } => {
                if one_column && fields.len() != 1 {
                    return Err(SqlError::new("42601", "subquery has too many columns"));
                }
                Ok(rows)
            }
            Outcome::Done(_) => Ok(Vec::new()),
        }
    }

    /// The rows of `q` for the outer row `combo` of `sources` (no row: none bound).
    fn rows_for(
        &mut self,
        x: &mut Exec<'_, '_>,
        sources: &[Source],
        combo: &mut [RowState],
        q: &Query,
        one_column: bool,
    ) -> Result<Rc<[Vec<Value>]>, SqlError> {
        let id = q as *const Query as usize;
        let catalog: &crate::server::sql::catalog::Catalog = x.catalog;
        self.free
            .entry(id)
            .or_insert_with(|| free_columns(catalog, q));
        let mut bound: Vec<(FreeColumn, Value)> = Vec::new();
        if !combo.is_empty() {
            let mut cols = row_cols(x, sources, combo);
            for c in &self.free[&id] {
                match cols.column(c.0.as_deref(), &c.1) {
                    Ok(v) => bound.push((c.clone(), v)),
                    // Not the outer row's: an output name, or the subquery's own error.
                    Err(e) if e.code == "42703" || e.code == "42P01" => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let key = (id, format!("{bound:?}"));
        if let Some(rows) = self.rows.get(&key) {
            return Ok(rows.clone());
        }
        let rows: Rc<[Vec<Value>]> = if bound.is_empty() {
            self.run_once(x, q, one_column)?.into()
        } else {
            let bound_q = bind(x.catalog, q, &bound);
            self.run_once(x, &bound_q, one_column)?.into()
        };
        self.rows.insert(key, rows.clone());
        Ok(rows)
    }

    /// Whether `q` names a column of `sources` (correlated).
    fn correlated(&self, x: &Exec<'_, '_>, sources: &[Source], q: &Query) -> bool {
        names_outer(x.catalog, sources, &free_columns(x.catalog, q))
    }

    /// Runs the subqueries of WHERE clause `e` that name no column of `sources` (left to
    /// right) and puts what they returned in their place.
    fn run_uncorrelated(
        &mut self,
        x: &mut Exec<'_, '_>,
        sources: &[Source],
        e: &mut Expr,
    ) -> Result<(), SqlError> {
        match e {
            Expr::In {
                expr,
                target: InTarget::Subquery(q),
                negated,
                ..
            } => {
                self.run_uncorrelated(x, sources, expr)?;
                if self.correlated(x, sources, q) {
                    return Ok(());
                }
                let rows = self.run_once(x, q, true)?;
                let list = rows.iter().map(|r| value_literal(&r[0])).collect();
                let negated = *negated;
                let expr = std::mem::replace(expr, Box::new(Expr::value(SqlValue::Null)));
                *e = Expr::In {
                    expr,
                    target: InTarget::List(list),
                    negated,
                    global: false,
                };
            }
            Expr::In {
                expr,
                target: InTarget::List(list),
                ..
            } => {
                self.run_uncorrelated(x, sources, expr)?;
                for item in list {
                    self.run_uncorrelated(x, sources, item)?;
                }
            }
            Expr::Exists { subquery, negated } if !self.correlated(x, sources, subquery) => {
                let found = !self.run_once(x, subquery, false)?.is_empty();
                *e = Expr::value(SqlValue::Boolean(found != *negated));
            }
            Expr::Subquery(q) if !self.correlated(x, sources, q) => {
                let rows = self.run_once(x, q, true)?;
                if rows.len() > 1 {
                    return Err(SqlError::new(
                        "21000",
                        "more than one row returned by a subquery used as an expression",
                    ));
                }
                *e = rows
                    .first()
                    .map_or(Expr::value(SqlValue::Null), |r| value_literal(&r[0]));
            }
            Expr::BinaryOp { left, right, .. } => {
                self.run_uncorrelated(x, sources, left)?;
                self.run_uncorrelated(x, sources, right)?;
            }
            Expr::UnaryOp { expr, .. }
            | Expr::Nested(expr)
            | Expr::IsNull(expr)
            | Expr::IsNotNull(expr)
            | Expr::IsTrue(expr)
            | Expr::IsFalse(expr) => self.run_uncorrelated(x, sources, expr)?,
            Expr::Between {
                expr, low, high, ..
            } => {
                self.run_uncorrelated(x, sources, expr)?;
                self.run_uncorrelated(x, sources, low)?;
                self.run_uncorrelated(x, sources, high)?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// One row of a statement (its sources' rows, or none: a SELECT without FROM, a group
/// without rows) whose expressions may hold subqueries, run through `subqueries`.
pub(super) struct SubqueryRow<'r, 'a, 't> {
    pub(super) x: &'r mut Exec<'a, 't>,
    pub(super) sources: &'r [Source],
    pub(super) combo: &'r mut [RowState],
    pub(super) subqueries: &'r mut Subqueries,
}

impl Columns for SubqueryRow<'_, '_, '_> {
    fn column(&mut self, qualifier: Option<&str>, name: &str) -> Result<Value, SqlError> {
        row_cols(self.x, self.sources, self.combo).column(qualifier, name)
    }

    fn call(&mut self, name: &str, args: &[Value]) -> Option<Result<Value, SqlError>> {
        // The sequences' functions in a SELECT without FROM (not over a table's rows).
        if self.sources.is_empty() {
            let session = self.x.tx.session();
            self.x.catalog.sequences.call(session, name, args)
        } else {
            None
        }
    }

    fn subquery(
        &mut self,
        q: &Query,
        one_column: bool,
    ) -> Option<Result<Rc<[Vec<Value>]>, SqlError>> {
        Some(
            self.subqueries
                .rows_for(self.x, self.sources, self.combo, q, one_column),
        )
    }
}

/// How a statement reads its FROM clause's rows under a WHERE clause.
pub(super) type ReadRows<'r> =
    &'r mut dyn FnMut(&mut Exec<'_, '_>, Option<&Expr>) -> Result<Vec<Vec<RowState>>, SqlError>;

/// The rows a FROM clause (`sources`, read by `read`: one table's [`super::rows::matching_rows`] or
/// a join's) and the WHERE clause `selection` select, with the WHERE's subqueries run: those
/// naming no outer column first (put in as what they returned); the conjuncts still holding
/// one are then evaluated on each row the others keep.
pub(super) fn matching_rows(
    x: &mut Exec<'_, '_>,
    run: RunSelect,
    sources: &[Source],
    selection: Option<&Expr>,
    read: ReadRows<'_>,
) -> Result<Vec<Vec<RowState>>, SqlError> {
    let Some(e) = selection.filter(|e| holds_query(*e)) else {
        return read(x, selection);
    };
    x.notes.once = true;
    let mut subqueries = Subqueries::new(run);
    let mut resolved = e.clone();
    subqueries.run_uncorrelated(x, sources, &mut resolved)?;
    let mut parts = Vec::new();
    conjuncts(&resolved, &mut parts);
    let (later, now): (Vec<&Expr>, Vec<&Expr>) = parts.into_iter().partition(|p| holds_query(*p));
    let now = now.into_iter().cloned().reduce(|a, b| Expr::BinaryOp {
        left: Box::new(a),
        op: BinaryOperator::And,
        right: Box::new(b),
    });
    let matched = read(x, now.as_ref())?;
    if later.is_empty() {
        return Ok(matched);
    }
    let params = x.params;
    let mut out = Vec::with_capacity(matched.len());
    for mut combo in matched {
        let mut row = SubqueryRow {
            x: &mut *x,
            sources,
            combo: &mut combo,
            subqueries: &mut subqueries,
        };
        if all_true(&later, &mut row, params)? {
            out.push(combo);
        }
    }
    Ok(out)
}
