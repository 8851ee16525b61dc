//! SELECT: FROM (one table, or joins, subqueries and CTEs read by [`super::join`] and
//! [`super::derived`]), WHERE, the select list, ORDER BY, DISTINCT, LIMIT/OFFSET over the rows
//! read; and Describe's fields of a statement.

use std::borrow::Cow;
use std::sync::Arc;

use rustc_hash::FxHashSet;
use sqlparser::ast::{
    Distinct, Expr, FromTable, GroupByExpr, InTarget, OrderByKind, OrderBySort, Query, Select,
    SelectItem, SetExpr, TableFactor, TableObject, TableWithJoins, Value as SqlValue,
};

use super::aggregate::aggregate_rows;
use super::derived;
use super::from_clause::{FromClause, Resolve};
use super::join::join_rows;
use super::order::{order_key, sorted_page};
use super::project::{is_aggregate, projection_items};
use super::rows::matching_rows;
use super::{first_words, row_cols, table_of, values, Derived, Exec, NoRow, Source};
use crate::server::locks::Mode;
use crate::server::sql::catalog::Catalog;
use crate::server::sql::eval::{eval, object_name};
use crate::server::sql::{Field, Outcome, SqlError};
use crate::store::Value;

/// The fields a SELECT returns, without running it (Describe).
pub fn describe(catalog: &Catalog, s: &sqlparser::ast::Statement) -> Result<Vec<Field>, SqlError> {
    use sqlparser::ast::Statement as S;
    let returning = |table: &sqlparser::ast::ObjectName, r: &Option<Vec<SelectItem>>| {
        let Some(items) = r else {
            return Ok(Vec::new());
        };
        let t = table_of(catalog, table)?;
        let sources = [Source::table(t, object_name(table)?)];
        Ok(projection_items(catalog, &sources, items)?
            .into_iter()
            .map(|i| i.field)
            .collect())
    };
    match s {
        S::Query(q) => derived::describe_query(catalog, q),
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

impl Resolve for Exec<'_, '_> {
    fn catalog(&self) -> &Catalog {
        self.catalog
    }

    fn subquery(&mut self, q: &Query) -> Result<Derived, SqlError> {
        run_derived(self, q)
    }

    fn cte(&mut self, name: &str) -> Option<Result<Arc<Derived>, SqlError>> {
        derived::cte(self, name, run_derived)
    }
}

/// Runs the query of a subquery in FROM or a CTE: its rows as a table.
fn run_derived(x: &mut Exec<'_, '_>, q: &Query) -> Result<Derived, SqlError> {
    if let (None, SetExpr::Values(v)) = (&q.with, q.body.as_ref()) {
        return derived::values_table(x, v);
    }
    if derived::data_modifying(q) {
        return Err(SqlError::unsupported(
            "data-modifying statements in FROM or WITH",
        ));
    }
    let for_update = x.notes.for_update;
    let result = select(x, q);
    x.notes.for_update = for_update;
    match result? {
        Outcome::Rows { fields, rows, .. } => Ok(Derived { fields, rows }),
        Outcome::Done(tag) => Err(SqlError::unsupported(format!("{tag} as a table"))),
    }
}

/// Runs SELECT `q` (its CTEs in scope).
pub(super) fn select(x: &mut Exec<'_, '_>, q: &Query) -> Result<Outcome, SqlError> {
    derived::with_ctes(x, q.with.as_ref(), |x| select_body(x, q))
}

fn select_body(x: &mut Exec<'_, '_>, q: &Query) -> Result<Outcome, SqlError> {
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
    if let [TableWithJoins {
        relation:
            TableFactor::Derived {
                lateral: false,
                subquery,
                alias: Some(alias),
                ..
            },
        joins,
    }] = sel.from.as_slice()
    {
        if let (true, SetExpr::Values(values)) = (joins.is_empty(), subquery.body.as_ref()) {
            return values::values_select(x, q, sel, values, alias);
        }
    }
    let from = FromClause::build(x, None, &sel.from)?;
    let sources = &from.sources;
    let projection = from.select_list(x.catalog, &sel.projection);
    let items = projection_items(x.catalog, sources, &projection)?;
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
        let mut no_row = NoRow {
            catalog: &mut *x.catalog,
            session: x.tx.session(),
        };
        for i in &items {
            values.push(eval(&i.expr, &mut no_row, params)?);
        }
        out.push((values, Vec::new()));
    } else {
        let mode = if x.notes.for_update {
            Mode::Exclusive
        } else {
            x.read_lock
        };
        let selection = resolve_subqueries(x, sel.selection.as_ref())?;
        let matched = if from.is_one_table() {
            matching_rows(x, &sources[0], selection.as_deref(), mode)?
        } else {
            join_rows(x, &from, selection.as_deref(), (mode, mode))?
        };
        if aggregate {
            out = aggregate_rows(x, sources, matched, &items, group_by, &order)?;
        } else {
            for mut combo in matched {
                let mut cols = row_cols(x, sources, &mut combo);
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
    let rows = sorted_page(out, &order, q.limit_clause.as_ref(), params)?;
    let count = rows.len();
    Ok(Outcome::Rows {
        fields,
        rows,
        tag: "SELECT",
        count,
    })
}

// Subqueries in WHERE.
//
// Subqueries in a WHERE clause — `x [NOT] IN (SELECT …)`, `[NOT] EXISTS (SELECT …)` and
// `(SELECT …)` as a value — that do not name the outer query's columns (uncorrelated). Each
// runs once, as a SELECT of its own, before the outer statement reads anything: its reads are
// recorded as that SELECT's (a scan of its table unless its WHERE pins the key, so an insert
// into what it scanned stays a visible phantom). The clause then reads as `x IN (the values
// returned)`, `true`/`false`, or the value — so `id IN (SELECT …)` on a key pins the rows it
// names, as an index lookup on a real database reads only those.
//
// A correlated subquery (one naming the outer query's columns, as `EXISTS (SELECT 1 FROM b
// WHERE b.a = a.id)`) would have to run once per outer row; it is refused with `0A000`.

/// The WHERE clause `e` with its subqueries run and replaced by what they returned (borrowed
/// as it is when it has none).
pub(super) fn resolve_subqueries<'e>(
    x: &mut Exec<'_, '_>,
    e: Option<&'e Expr>,
) -> Result<Option<Cow<'e, Expr>>, SqlError> {
    match e {
        None => Ok(None),
        Some(e) if !has_subquery(e) => Ok(Some(Cow::Borrowed(e))),
        Some(e) => {
            let mut owned = e.clone();
            replace_subqueries(x, &mut owned)?;
            Ok(Some(Cow::Owned(owned)))
        }
    }
}

/// Whether `e` holds a subquery where [`replace`] looks for one.
fn has_subquery(e: &Expr) -> bool {
    match e {
        Expr::Exists { .. } | Expr::Subquery(_) => true,
        Expr::In {
            target: InTarget::Subquery(_),
            ..
        } => true,
        Expr::In {
            expr,
            target: InTarget::List(list),
            ..
        } => has_subquery(expr) || list.iter().any(has_subquery),
        Expr::BinaryOp { left, right, .. } => has_subquery(left) || has_subquery(right),
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr) => has_subquery(expr),
        Expr::Between {
            expr, low, high, ..
        } => has_subquery(expr) || has_subquery(low) || has_subquery(high),
        _ => false,
    }
}

/// Runs the subqueries in `e` (left to right) and puts what they returned in their place.
fn replace_subqueries(x: &mut Exec<'_, '_>, e: &mut Expr) -> Result<(), SqlError> {
    match e {
        Expr::In {
            expr,
            target,
            negated,
            ..
        } => {
            replace_subqueries(x, expr)?;
            match target {
                InTarget::Subquery(q) => {
                    let rows = run_subquery(x, q, "IN")?;
                    let list = rows.iter().map(|r| literal(&r[0])).collect();
                    let expr = std::mem::replace(expr, Box::new(Expr::value(SqlValue::Null)));
                    *e = Expr::In {
                        expr,
                        target: InTarget::List(list),
                        negated: *negated,
                        global: false,
                    };
                }
                InTarget::List(list) => {
                    for item in list {
                        replace_subqueries(x, item)?;
                    }
                }
                _ => {}
            }
        }
        Expr::Exists { subquery, negated } => {
            let found = !run_subquery(x, subquery, "EXISTS")?.is_empty();
            *e = Expr::value(SqlValue::Boolean(found != *negated));
        }
        Expr::Subquery(q) => {
            let rows = run_subquery(x, q, "a value")?;
            if rows.len() > 1 {
                return Err(SqlError::new(
                    "21000",
                    "more than one row returned by a subquery used as an expression",
                ));
            }
            *e = rows
                .first()
                .map_or(Expr::value(SqlValue::Null), |r| literal(&r[0]));
        }
        Expr::BinaryOp { left, right, .. } => {
            replace_subqueries(x, left)?;
            replace_subqueries(x, right)?;
        }
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr) => replace_subqueries(x, expr)?,
        Expr::Between {
            expr, low, high, ..
        } => {
            replace_subqueries(x, expr)?;
            replace_subqueries(x, low)?;
            replace_subqueries(x, high)?;
        }
        _ => {}
    }
    Ok(())
}

/// Runs subquery `q` as a SELECT: its rows (one column each unless it is EXISTS's).
fn run_subquery(x: &mut Exec<'_, '_>, q: &Query, role: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let for_update = x.notes.for_update;
    let result = select(x, q);
    x.notes.for_update = for_update;
    let rows = match result {
        Ok(Outcome::Rows { rows, fields, .. }) => {
            if role != "EXISTS" && fields.len() != 1 {
                return Err(SqlError::new(
                    "42601",
                    format!("subquery has {} columns, {role} takes one", fields.len()),
                ));
            }
            rows
        }
        Ok(Outcome::Done(_)) => Vec::new(),
        // A column or table the subquery does not have: most likely the outer query's.
        Err(e) if e.code == "42703" || e.message.contains("missing FROM-clause") => {
            return Err(SqlError::unsupported(format!(
                "a subquery naming the outer query's columns (correlated: {}; {q})",
                e.message
            )))
        }
        Err(e) => return Err(e),
    };
    Ok(rows)
}

/// A value as the literal that evaluates to it.
fn literal(v: &Value) -> Expr {
    Expr::value(match v {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Boolean(*b),
        Value::Int(i) => SqlValue::Number(i.to_string(), false),
        Value::Real(r) => SqlValue::Number(format!("{r:?}"), false),
        Value::Text(t) => SqlValue::SingleQuotedString(t.to_string()),
    })
}
