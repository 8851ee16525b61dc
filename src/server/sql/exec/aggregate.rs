//! COUNT/SUM/MIN/MAX/AVG and GROUP BY over the rows a SELECT read (computed after the reads;
//! they add no events).

use std::cmp::Ordering;

use sqlparser::ast::Expr;

use super::order::order_key;
use super::project::{function_args, is_aggregate, Item};
use super::{row_cols, Exec, RowState, Source};
use crate::server::sql::eval::{self, compare, eval, object_name};
use crate::server::sql::SqlError;
use crate::store::Value;

/// Output rows with their sort keys.
pub(super) type SortedRows = Vec<(Vec<Value>, Vec<Value>)>;

/// One group of an aggregate query: its key, each item's aggregate state, its plain values.
pub(super) type Group = (Vec<Value>, Vec<Option<Acc>>, Vec<Value>);

/// An aggregate's running state.
#[derive(Clone)]
pub(super) enum Acc {
    Count(i64),
    Sum(Option<Value>),
    Min(Option<Value>),
    Max(Option<Value>),
    Avg(f64, i64),
}

pub(super) fn aggregate_rows(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    matched: Vec<Vec<RowState>>,
    items: &[Item<'_>],
    group_by: &[Expr],
    order: &[(&Expr, bool)],
) -> Result<SortedRows, SqlError> {
    let params = x.params;
    // The aggregate calls of each item (top-level calls only; others are plain values).
    let mut groups: Vec<Group> = Vec::new();
    let mut index: rustc_hash::FxHashMap<String, usize> = Default::default();
    let no_rows = matched.is_empty();
    for mut combo in matched {
        let mut cols = row_cols(x, sources, &mut combo);
        let mut gkey = Vec::with_capacity(group_by.len());
        for g in group_by {
            gkey.push(eval(g, &mut cols, params)?);
        }
        let g = *index.entry(format!("{gkey:?}")).or_insert_with(|| {
            groups.push((gkey.clone(), vec![None; items.len()], Vec::new()));
            groups.len() - 1
        });
        for (i, item) in items.iter().enumerate() {
            match item.expr.as_ref() {
                Expr::Function(f) if is_aggregate(&item.expr) => {
                    let name = object_name(&f.name)?;
                    let arg = function_args(f).into_iter().next();
                    let value = match arg {
                        Some(a) => eval(a, &mut cols, params)?,
                        None => Value::Bool(true), // count(*)
                    };
                    let acc = groups[g].1[i].get_or_insert(match name.as_str() {
                        "count" => Acc::Count(0),
                        "sum" => Acc::Sum(None),
                        "min" => Acc::Min(None),
                        "max" => Acc::Max(None),
                        _ => Acc::Avg(0.0, 0),
                    });
                    accumulate(acc, value)?;
                }
                e if is_aggregate(e) => {
                    return Err(SqlError::unsupported(format!("the expression {e}")))
                }
                e => {
                    let v = eval(e, &mut cols, params)?;
                    if groups[g].2.len() <= i {
                        groups[g].2.resize(items.len(), Value::Null);
                    }
                    groups[g].2[i] = v;
                }
            }
        }
    }
    if no_rows && group_by.is_empty() {
        // One row all the same (`SELECT 'none', count(*) … WHERE false` is `none, 0`): the
        // items without columns keep their values.
        let plain = items
            .iter()
            .map(|i| eval(&i.expr, &mut eval::NoColumns, params).unwrap_or(Value::Null))
            .collect();
        groups.push((Vec::new(), vec![None; items.len()], plain));
    }
    let mut out = Vec::new();
    for (_, accs, plain) in groups {
        let mut values = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            values.push(match (&accs[i], item.expr.as_ref()) {
                (Some(acc), _) => finish(acc),
                (None, Expr::Function(f)) if is_aggregate(&item.expr) => {
                    match object_name(&f.name)?.as_str() {
                        "count" => Value::Int(0),
                        _ => Value::Null,
                    }
                }
                (None, _) => plain.get(i).cloned().unwrap_or(Value::Null),
            });
        }
        let mut keys = Vec::with_capacity(order.len());
        for (e, _) in order {
            keys.push(order_key(e, items, &values, &mut eval::NoColumns, params)?);
        }
        out.push((values, keys));
    }
    Ok(out)
}

pub(super) fn accumulate(acc: &mut Acc, v: Value) -> Result<(), SqlError> {
    if matches!(v, Value::Null) {
        return Ok(());
    }
    match acc {
        Acc::Count(n) => *n += 1,
        Acc::Sum(s) => {
            *s = Some(match s.take() {
                None => v,
                Some(t) => match (t, v) {
                    (Value::Int(a), Value::Int(b)) => Value::Int(
                        a.checked_add(b)
                            .ok_or_else(|| SqlError::new("22003", "sum out of range"))?,
                    ),
                    (a, b) => Value::Real(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
                },
            })
        }
        Acc::Min(m) => {
            if m.as_ref()
                .map_or(true, |x| compare(&v, x) == Some(Ordering::Less))
            {
                *m = Some(v);
            }
        }
        Acc::Max(m) => {
            if m.as_ref()
                .map_or(true, |x| compare(&v, x) == Some(Ordering::Greater))
            {
                *m = Some(v);
            }
        }
        Acc::Avg(s, n) => {
            *s += v.as_f64().unwrap_or(0.0);
            *n += 1;
        }
    }
    Ok(())
}

pub(super) fn finish(acc: &Acc) -> Value {
    match acc {
        Acc::Count(n) => Value::Int(*n),
        Acc::Sum(s) | Acc::Min(s) | Acc::Max(s) => s.clone().unwrap_or(Value::Null),
        Acc::Avg(_, 0) => Value::Null,
        Acc::Avg(s, n) => Value::Real(*s / *n as f64),
    }
}
