//! ORDER BY keys and LIMIT/OFFSET, shared by SELECT over tables, aggregates and VALUES.

use sqlparser::ast::{Expr, LimitClause};

use super::project::Item;
use crate::server::sql::catalog::SqlType;
use crate::server::sql::eval::{self, coerce, column_ref, eval, Columns};
use crate::server::sql::SqlError;
use crate::store::Value;

/// The value row `values` (of the select list `items`) sorts by for the ORDER BY item `e`: a
/// position in the select list, an output column's name, a select-list expression, or `e`
/// evaluated over the row.
pub(super) fn order_key(
    e: &Expr,
    items: &[Item<'_>],
    values: &[Value],
    cols: &mut dyn Columns,
    params: &[Value],
) -> Result<Value, SqlError> {
    if let Expr::Value(v) = e {
        if let sqlparser::ast::Value::Number(n, _) = &v.value {
            let i: usize = n.parse().unwrap_or(0);
            return values.get(i.wrapping_sub(1)).cloned().ok_or_else(|| {
                SqlError::new(
                    "42P10",
                    format!("ORDER BY position {n} is not in select list"),
                )
            });
        }
    }
    if let Some((None, name)) = column_ref(e) {
        if let Some(i) = items.iter().position(|i| i.field.name == name) {
            return Ok(values[i].clone());
        }
    }
    if let Some(i) = items.iter().position(|i| i.expr.as_ref() == e) {
        return Ok(values[i].clone());
    }
    eval(e, cols, params)
}

/// LIMIT and OFFSET: (at most how many rows, how many to skip).
pub(super) fn limits(
    l: Option<&LimitClause>,
    params: &[Value],
) -> Result<(Option<usize>, usize), SqlError> {
    let number = |e: &Expr| -> Result<usize, SqlError> {
        let v = eval(e, &mut eval::NoColumns, params)?;
        match coerce(v, SqlType::Int8)? {
            Value::Int(i) if i >= 0 => Ok(i as usize),
            Value::Null => Ok(usize::MAX),
            other => Err(SqlError::new(
                "2201W",
                format!("LIMIT/OFFSET must not be negative: {other}"),
            )),
        }
    };
    Ok(match l {
        None => (None, 0),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(SqlError::unsupported("LIMIT BY"));
            }
            let lim = match limit {
                Some(e) => Some(number(e)?),
                None => None,
            };
            let off = match offset {
                Some(o) => number(&o.value)?,
                None => 0,
            };
            (lim, off)
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
            (Some(number(limit)?), number(offset)?)
        }
    })
}
