//! Subqueries in a WHERE clause — `x [NOT] IN (SELECT …)`, `[NOT] EXISTS (SELECT …)` and
//! `(SELECT …)` as a value — that do not name the outer query's columns (uncorrelated). Each
//! runs once, as a SELECT of its own, before the outer statement reads anything: its reads are
//! recorded as that SELECT's (a scan of its table unless its WHERE pins the key, so an insert
//! into what it scanned stays a visible phantom). The clause then reads as `x IN (the values
//! returned)`, `true`/`false`, or the value — so `id IN (SELECT …)` on a key pins the rows it
//! names, as an index lookup on a real database reads only those.
//!
//! A correlated subquery (one naming the outer query's columns, as `EXISTS (SELECT 1 FROM b
//! WHERE b.a = a.id)`) would have to run once per outer row; it is refused with `0A000`.

use std::borrow::Cow;

use sqlparser::ast::{Expr, InTarget, Query, Value as SqlValue};

use super::select::select;
use super::Exec;
use crate::server::sql::{Outcome, SqlError};
use crate::store::Value;

/// The WHERE clause `e` with its subqueries run and replaced by what they returned (borrowed
/// as it is when it has none).
pub(super) fn resolve<'e>(
    x: &mut Exec<'_, '_>,
    e: Option<&'e Expr>,
) -> Result<Option<Cow<'e, Expr>>, SqlError> {
    match e {
        None => Ok(None),
        Some(e) if !has_subquery(e) => Ok(Some(Cow::Borrowed(e))),
        Some(e) => {
            let mut owned = e.clone();
            replace(x, &mut owned)?;
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
fn replace(x: &mut Exec<'_, '_>, e: &mut Expr) -> Result<(), SqlError> {
    match e {
        Expr::In {
            expr,
            target,
            negated,
            ..
        } => {
            replace(x, expr)?;
            match target {
                InTarget::Subquery(q) => {
                    let rows = run(x, q, "IN")?;
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
                        replace(x, item)?;
                    }
                }
                _ => {}
            }
        }
        Expr::Exists { subquery, negated } => {
            let found = !run(x, subquery, "EXISTS")?.is_empty();
            *e = Expr::value(SqlValue::Boolean(found != *negated));
        }
        Expr::Subquery(q) => {
            let rows = run(x, q, "a value")?;
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
            replace(x, left)?;
            replace(x, right)?;
        }
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr) => replace(x, expr)?,
        Expr::Between {
            expr, low, high, ..
        } => {
            replace(x, expr)?;
            replace(x, low)?;
            replace(x, high)?;
        }
        _ => {}
    }
    Ok(())
}

/// Runs subquery `q` as a SELECT: its rows (one column each unless it is EXISTS's).
fn run(x: &mut Exec<'_, '_>, q: &Query, role: &str) -> Result<Vec<Vec<Value>>, SqlError> {
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
