//! ORDER BY keys, DISTINCT ON and LIMIT/OFFSET, shared by SELECT over tables, aggregates and
//! VALUES.

use std::cmp::Ordering;

use rustc_hash::FxHashSet;
use sqlparser::ast::{Expr, LimitClause};

use super::project::Item;
use crate::server::sql::catalog::SqlType;
use crate::server::sql::eval::{self, coerce, column_ref, compare, eval, Columns};
use crate::server::sql::SqlError;
use crate::store::Value;

/// Output rows, each with its sort keys.
pub(super) type SortedRows = Vec<(Vec<Value>, Vec<Value>)>;

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

/// One output row: the select list's values over `cols`, and its sort keys (one per item of
/// `keyed`, as [`order_key`] reads them).
pub(super) fn output_row(
    items: &[Item<'_>],
    keyed: &[(&Expr, bool)],
    cols: &mut dyn Columns,
    params: &[Value],
) -> Result<(Vec<Value>, Vec<Value>), SqlError> {
    let mut values = Vec::with_capacity(items.len());
    for i in items {
        values.push(eval(&i.expr, cols, params)?);
    }
    let mut keys = Vec::with_capacity(keyed.len());
    for (e, _) in keyed {
        keys.push(order_key(e, items, &values, cols, params)?);
    }
    Ok((values, keys))
}

/// LIMIT and OFFSET: (at most how many rows, how many to skip).
fn limits(l: Option<&LimitClause>, params: &[Value]) -> Result<(Option<usize>, usize), SqlError> {
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

/// The page of `rows` (each its values and its ORDER BY keys, one per item of `order`, which
/// says whether each sorts descending) a query returns: sorted as PostgreSQL sorts (NULLs last
/// ascending, first descending; a stable sort, so ties keep their order), then OFFSET and
/// LIMIT applied; the rows' values.
pub(super) fn sorted_page<T>(
    rows: SortedRows,
    order: &[(T, bool)],
    limit: Option<&LimitClause>,
    params: &[Value],
) -> Result<Vec<Vec<Value>>, SqlError> {
    distinct_page(rows, order, &[], 0, limit, params)
}

/// [`sorted_page`] with `NULLS FIRST`/`NULLS LAST` (`nulls_first`, per item of `order`; none
/// given: PostgreSQL's default) and `DISTINCT ON`: each row's keys end with its `distinct_on`
/// DISTINCT ON values, and after sorting only the first row of each such values is kept
/// (PostgreSQL's rule: the first row of each group in ORDER BY's order).
pub(super) fn distinct_page<T>(
    mut rows: SortedRows,
    order: &[(T, bool)],
    nulls_first: &[bool],
    distinct_on: usize,
    limit: Option<&LimitClause>,
    params: &[Value],
) -> Result<Vec<Vec<Value>>, SqlError> {
    if !order.is_empty() {
        rows.sort_by(|(_, a), (_, b)| {
            for (i, (_, desc)) in order.iter().enumerate() {
                let first = nulls_first.get(i).copied().unwrap_or(*desc);
                let null = if first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                let o = match (&a[i], &b[i]) {
                    (Value::Null, Value::Null) => Ordering::Equal,
                    (Value::Null, _) => null,
                    (_, Value::Null) => null.reverse(),
                    (x, y) if *desc => compare(x, y).unwrap_or(Ordering::Equal).reverse(),
                    (x, y) => compare(x, y).unwrap_or(Ordering::Equal),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    if distinct_on > 0 {
        let mut seen = FxHashSet::default();
        rows.retain(|(_, keys)| seen.insert(format!("{:?}", &keys[keys.len() - distinct_on..])));
    }
    let (limit, offset) = limits(limit, params)?;
    Ok(rows
        .into_iter()
        .map(|(v, _)| v)
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect())
}
