//! SELECT: FROM (one table or a two-table equi-join), WHERE, the select list, ORDER BY,
//! DISTINCT, LIMIT/OFFSET over the rows read; and Describe's fields of a statement.

use std::cmp::Ordering;

use rustc_hash::FxHashSet;
use sqlparser::ast::{
    Distinct, Expr, FromTable, GroupByExpr, JoinConstraint, JoinOperator, LimitClause, OrderByKind,
    OrderBySort, Query, Select, SelectItem, SetExpr, TableFactor, TableObject, TableWithJoins,
};

use super::aggregate::aggregate_rows;
use super::project::{is_aggregate, projection_items, Item};
use super::rows::matching_rows;
use super::{first_words, row_cols, source_of, subquery, table_of, values, Exec, NoRow, Source};
use crate::server::locks::Mode;
use crate::server::sql::catalog::{Catalog, SqlType};
use crate::server::sql::eval::{self, coerce, column_ref, compare, eval, object_name, Columns};
use crate::server::sql::{Field, Outcome, SqlError};
use crate::store::Value;

/// The sources of a SELECT's FROM and the join condition (at most two tables).
pub(super) fn from_sources(
    catalog: &Catalog,
    from: &[TableWithJoins],
) -> Result<(Vec<Source>, Option<Expr>), SqlError> {
    let mut sources = Vec::new();
    let mut on = None;
    for twj in from {
        sources.push(source_of(catalog, &twj.relation)?);
        for j in &twj.joins {
            sources.push(source_of(catalog, &j.relation)?);
            match &j.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c) => {
                    match c {
                        JoinConstraint::On(e) => on = Some(e.clone()),
                        JoinConstraint::None => {}
                        _ => return Err(SqlError::unsupported("JOIN … USING and NATURAL JOIN")),
                    }
                }
                _ => return Err(SqlError::unsupported("outer joins")),
            }
        }
    }
    if sources.len() > 2 {
        return Err(SqlError::unsupported("joins of more than two tables"));
    }
    Ok((sources, on))
}

/// The fields a SELECT returns, without running it (Describe).
pub fn describe(catalog: &Catalog, s: &sqlparser::ast::Statement) -> Result<Vec<Field>, SqlError> {
    use sqlparser::ast::Statement as S;
    let returning = |table: &sqlparser::ast::ObjectName, r: &Option<Vec<SelectItem>>| {
        let Some(items) = r else {
            return Ok(Vec::new());
        };
        let t = table_of(catalog, table)?;
        let sources = [Source {
            table: t,
            alias: object_name(table)?,
        }];
        Ok(projection_items(catalog, &sources, items)?
            .into_iter()
            .map(|i| i.field)
            .collect())
    };
    match s {
        S::Query(q) => match q.body.as_ref() {
            SetExpr::Select(sel) => {
                let (sources, _) = from_sources(catalog, &sel.from)?;
                Ok(projection_items(catalog, &sources, &sel.projection)?
                    .into_iter()
                    .map(|i| i.field)
                    .collect())
            }
            _ => Ok(Vec::new()),
        },
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

pub(super) fn select(x: &mut Exec<'_, '_>, q: &Query) -> Result<Outcome, SqlError> {
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH (common table expressions)"));
    }
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
    let (sources, on) = from_sources(x.catalog, &sel.from)?;
    let items = projection_items(x.catalog, &sources, &sel.projection)?;
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
        let selection = subquery::resolve(x, sel.selection.as_ref())?;
        let matched = matching_rows(x, &sources, on.as_ref(), selection.as_deref(), mode)?;
        if aggregate {
            out = aggregate_rows(x, &sources, matched, &items, group_by, &order)?;
        } else {
            for mut combo in matched {
                let mut cols = row_cols(x, &sources, &mut combo);
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
    if !order.is_empty() {
        out.sort_by(|(_, a), (_, b)| {
            for (i, (_, desc)) in order.iter().enumerate() {
                let o = match (&a[i], &b[i]) {
                    (Value::Null, Value::Null) => Ordering::Equal,
                    // NULLs sort last ascending, first descending, as in PostgreSQL.
                    (Value::Null, _) => Ordering::Greater,
                    (_, Value::Null) => Ordering::Less,
                    (x, y) => compare(x, y).unwrap_or(Ordering::Equal),
                };
                let o = if *desc { o.reverse() } else { o };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    let (limit, offset) = limits(q.limit_clause.as_ref(), params)?;
    let rows: Vec<Vec<Value>> = out
        .into_iter()
        .map(|(v, _)| v)
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let count = rows.len();
    Ok(Outcome::Rows {
        fields,
        rows,
        tag: "SELECT",
        count,
    })
}

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
