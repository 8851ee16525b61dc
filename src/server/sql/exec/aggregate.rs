//! Aggregates over the rows a SELECT read, computed after the reads (they add no events):
//! COUNT/SUM/MIN/MAX/AVG, BOOL_AND/BOOL_OR/EVERY and STRING_AGG, with `DISTINCT` and `FILTER
//! (WHERE …)`, anywhere in the select
//! list, HAVING and ORDER BY (`COALESCE(max(x), 0)`, `sum(x) * 2`, `count(*) > 0`), per GROUP
//! BY group (keys by expression, output position or output name). A group's other column
//! references are read from its first row (PostgreSQL allows there only grouped columns and
//! columns of a grouped table's key, the same on every row of the group).

use std::cmp::Ordering;
use std::ops::ControlFlow;

use rustc_hash::{FxHashMap, FxHashSet};
use sqlparser::ast::{DuplicateTreatment, Expr, Function, FunctionArguments, Query};

use super::order::{output_row, SortedRows};
use super::project::{aggregate_calls, function_args, Item};
use super::subquery::{Subqueries, SubqueryRow};
use super::{Exec, RowState, Source};
use crate::server::sql::catalog::SqlType;
use crate::server::sql::eval::{coerce, compare, eval, is_true, object_name, plain, Columns};
use crate::server::sql::SqlError;
use crate::store::Value;

/// An aggregate's running state.
#[derive(Clone)]
enum Acc {
    Count(i64),
    Sum(Option<Value>),
    Min(Option<Value>),
    Max(Option<Value>),
    Avg(f64, i64),
    BoolAnd(Option<bool>),
    BoolOr(Option<bool>),
    StringAgg(Option<String>),
}

/// One aggregate call of the statement: where it is in the statement's tree (what eval's
/// aggregate hook is asked with), its function, its argument (`None`: `count(*)`), whether it
/// counts distinct values only, and its FILTER.
struct Call {
    at: usize,
    name: String,
    arg: Option<Expr>,
    distinct: bool,
    filter: Option<Expr>,
    /// STRING_AGG's delimiter.
    delimiter: Option<Expr>,
}

/// The call `e` (of `f`, an aggregate function), or `0A000` for the forms not computed.
fn call_of(e: &Expr, f: &Function) -> Result<Call, SqlError> {
    let refuse = || SqlError::unsupported(format!("the aggregate call {e}"));
    if f.over.is_some() {
        return Err(SqlError::unsupported(format!("the window function {e}")));
    }
    let FunctionArguments::List(list) = &f.args else {
        return Err(refuse());
    };
    if !list.clauses.is_empty() || !f.within_group.is_empty() {
        return Err(refuse());
    }
    let name = object_name(&f.name)?;
    let args = function_args(f);
    let (arg, delimiter) = match (args.as_slice(), list.args.len()) {
        ([], 1) if name == "count" => (None, None),
        ([a], 1) if name != "string_agg" => (Some((*a).clone()), None),
        ([a, d], 2) if name == "string_agg" => (Some((*a).clone()), Some((*d).clone())),
        _ => return Err(refuse()),
    };
    Ok(Call {
        at: e as *const Expr as usize,
        name,
        arg,
        distinct: matches!(list.duplicate_treatment, Some(DuplicateTreatment::Distinct)),
        filter: f.filter.as_deref().cloned(),
        delimiter,
    })
}

/// One group: its first row (`None`: the one group of an aggregate over no rows), each
/// call's state, and the values each DISTINCT call has counted.
struct Group {
    first: Option<Vec<RowState>>,
    accs: Vec<Acc>,
    seen: Vec<FxHashSet<String>>,
}

/// A group's row: its first row's columns, and each aggregate call's value.
struct GroupRow<'g, 'r, 'a, 't> {
    row: SubqueryRow<'r, 'a, 't>,
    calls: &'g [Call],
    values: &'g [Value],
}

impl Columns for GroupRow<'_, '_, '_, '_> {
    fn column(&mut self, qualifier: Option<&str>, name: &str) -> Result<Value, SqlError> {
        if self.row.combo.is_empty() {
            // An aggregate over no rows: its other items have no row to read.
            return Ok(Value::Null);
        }
        self.row.column(qualifier, name)
    }

    fn subquery(
        &mut self,
        q: &Query,
        one_column: bool,
    ) -> Option<Result<std::rc::Rc<[Vec<Value>]>, SqlError>> {
        self.row.subquery(q, one_column)
    }

    fn aggregate(&mut self, call: &Expr) -> Option<Value> {
        let at = call as *const Expr as usize;
        let i = self.calls.iter().position(|c| c.at == at)?;
        Some(self.values[i].clone())
    }
}

/// The output rows (values and sort keys, `keyed`) of an aggregate query over `matched`:
/// one per group (one in all without GROUP BY), those HAVING keeps.
pub(super) fn aggregate_rows(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    matched: Vec<Vec<RowState>>,
    items: &[Item<'_>],
    (group_by, having): (&[Expr], Option<&Expr>),
    keyed: &[(&Expr, bool)],
    subqueries: &mut Subqueries,
) -> Result<SortedRows, SqlError> {
    let mut calls = Vec::new();
    let mut error = None;
    let exprs = items.iter().map(|i| i.expr.as_ref());
    for e in exprs.chain(having).chain(keyed.iter().map(|(e, _)| *e)) {
        aggregate_calls(e, &mut |e, f| match call_of(e, f) {
            Ok(c) => {
                calls.push(c);
                ControlFlow::Continue(())
            }
            Err(err) => {
                error = Some(err);
                ControlFlow::Break(())
            }
        });
        if let Some(err) = error.take() {
            return Err(err);
        }
    }
    let group_by: Vec<&Expr> = group_by
        .iter()
        .map(|g| {
            grouped_expr(g, items, |name| {
                sources
                    .iter()
                    .any(|s| x.catalog.get(s.table).column(name).is_some())
            })
        })
        .collect();
    let groups = group_rows(x, sources, matched, &group_by, &calls, subqueries)?;
    let params = x.params;
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        let values_of_calls: Vec<Value> = g.accs.iter().map(finish).collect();
        let mut combo = g.first.unwrap_or_default();
        let mut cols = GroupRow {
            row: SubqueryRow {
                x: &mut *x,
                sources,
                combo: &mut combo,
                subqueries: &mut *subqueries,
            },
            calls: &calls,
            values: &values_of_calls,
        };
        if let Some(h) = having {
            if !is_true(&eval(h, &mut cols, params)?) {
                continue;
            }
        }
        out.push(output_row(items, keyed, &mut cols, params)?);
    }
    Ok(out)
}

/// What a GROUP BY item groups by: an output position (`GROUP BY 1`) is that item's
/// expression, an output name that no input column has (`is_column`) that item's.
fn grouped_expr<'e>(
    g: &'e Expr,
    items: &'e [Item<'_>],
    is_column: impl Fn(&str) -> bool,
) -> &'e Expr {
    if let Expr::Value(v) = g {
        if let sqlparser::ast::Value::Number(n, _) = &v.value {
            if let Some(item) = n
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i.wrapping_sub(1)))
            {
                return item.expr.as_ref();
            }
        }
    }
    if let Expr::Identifier(i) = g {
        let name = crate::server::sql::eval::ident(i);
        let aliased = items
            .iter()
            .find(|it| it.field.name == name && !is_column(&name));
        if let Some(item) = aliased {
            return item.expr.as_ref();
        }
    }
    g
}

/// The groups of `matched` by the values of `group_by`, each call accumulated over its rows.
fn group_rows(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    matched: Vec<Vec<RowState>>,
    group_by: &[&Expr],
    calls: &[Call],
    subqueries: &mut Subqueries,
) -> Result<Vec<Group>, SqlError> {
    let params = x.params;
    let fresh = || Group {
        first: None,
        accs: calls.iter().map(|c| start(&c.name)).collect(),
        seen: vec![FxHashSet::default(); calls.len()],
    };
    let mut groups: Vec<Group> = Vec::new();
    let mut index: FxHashMap<String, usize> = FxHashMap::default();
    for mut combo in matched {
        let g = {
            let mut cols = SubqueryRow {
                x: &mut *x,
                sources,
                combo: &mut combo,
                subqueries: &mut *subqueries,
            };
            let mut key = Vec::with_capacity(group_by.len());
            for e in group_by {
                key.push(eval(e, &mut cols, params)?);
            }
            let g = *index.entry(format!("{key:?}")).or_insert_with(|| {
                groups.push(fresh());
                groups.len() - 1
            });
            for (i, c) in calls.iter().enumerate() {
                if let Some(f) = &c.filter {
                    if !is_true(&eval(f, &mut cols, params)?) {
                        continue;
                    }
                }
                let v = match &c.arg {
                    Some(a) => eval(a, &mut cols, params)?,
                    None => Value::Bool(true), // count(*)
                };
                let delimiter = match &c.delimiter {
                    Some(d) => eval(d, &mut cols, params)?,
                    None => Value::Null,
                };
                let group = &mut groups[g];
                if c.distinct
                    && !matches!(v, Value::Null)
                    && !group.seen[i].insert(format!("{v:?}"))
                {
                    continue;
                }
                accumulate(&mut group.accs[i], v, &delimiter)?;
            }
            g
        };
        if groups[g].first.is_none() {
            groups[g].first = Some(combo);
        }
    }
    if groups.is_empty() && group_by.is_empty() {
        // `SELECT 'none', count(*) … WHERE false` is one row: `none, 0`.
        groups.push(fresh());
    }
    Ok(groups)
}

fn start(name: &str) -> Acc {
    match name {
        "count" => Acc::Count(0),
        "sum" => Acc::Sum(None),
        "min" => Acc::Min(None),
        "max" => Acc::Max(None),
        "bool_and" | "every" => Acc::BoolAnd(None),
        "bool_or" => Acc::BoolOr(None),
        "string_agg" => Acc::StringAgg(None),
        _ => Acc::Avg(0.0, 0),
    }
}

/// Adds non-NULL `v` to `acc` (`delimiter`: STRING_AGG's before it, when not the first).
fn accumulate(acc: &mut Acc, v: Value, delimiter: &Value) -> Result<(), SqlError> {
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
        Acc::BoolAnd(b) => {
            let x = is_true(&coerce(v, SqlType::Bool)?);
            *b = Some(b.map_or(x, |y| y && x));
        }
        Acc::BoolOr(b) => {
            let x = is_true(&coerce(v, SqlType::Bool)?);
            *b = Some(b.map_or(x, |y| y || x));
        }
        Acc::StringAgg(s) => {
            let text = plain(&v);
            match s {
                None => *s = Some(text),
                Some(s) => {
                    if !matches!(delimiter, Value::Null) {
                        s.push_str(&plain(delimiter));
                    }
                    s.push_str(&text);
                }
            }
        }
    }
    Ok(())
}

fn finish(acc: &Acc) -> Value {
    match acc {
        Acc::Count(n) => Value::Int(*n),
        Acc::Sum(s) | Acc::Min(s) | Acc::Max(s) => s.clone().unwrap_or(Value::Null),
        Acc::Avg(_, 0) => Value::Null,
        Acc::Avg(s, n) => Value::Real(*s / *n as f64),
        Acc::BoolAnd(b) | Acc::BoolOr(b) => b.map_or(Value::Null, Value::Bool),
        Acc::StringAgg(s) => s.as_deref().map_or(Value::Null, Value::text),
    }
}
