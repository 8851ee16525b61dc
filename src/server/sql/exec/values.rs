//! `SELECT … FROM (VALUES (…), …) AS t(a, b)`: a table of constant rows, read from nothing
//! (no events). SQLAlchemy 2's bulk insert sends it inside `INSERT … SELECT p0 FROM (VALUES
//! …) AS imp_sen(p0, sen_counter) ORDER BY sen_counter RETURNING …`. Select list, ORDER BY,
//! DISTINCT-free LIMIT/OFFSET; WHERE, GROUP BY and aggregates over it are refused.

use sqlparser::ast::{Query, Select, SelectItem, TableAlias, Values};

use super::derived::constant_rows;
use super::order::sorted_page;
use super::project::{column_name, is_aggregate};
use super::Exec;
use crate::server::sql::catalog::SqlType;
use crate::server::sql::eval::{eval, ident, Columns};
use crate::server::sql::{Field, Outcome, SqlError};
use crate::store::Value;

/// One constant row under its table's alias and column names.
struct ValuesRow<'r> {
    table: &'r str,
    names: &'r [String],
    row: &'r [Value],
}

impl Columns for ValuesRow<'_> {
    fn column(&mut self, qualifier: Option<&str>, name: &str) -> Result<Value, SqlError> {
        if let Some(q) = qualifier.filter(|q| *q != self.table) {
            return Err(SqlError::new(
                "42P01",
                format!("missing FROM-clause entry for table \"{q}\""),
            ));
        }
        match self.names.iter().position(|n| n == name) {
            Some(i) if i < self.row.len() => Ok(self.row[i].clone()),
            _ => Err(SqlError::undefined_column(name)),
        }
    }
}

/// Runs `q` (whose one FROM item is `values AS alias`).
pub(super) fn values_select(
    x: &mut Exec<'_, '_>,
    q: &Query,
    sel: &Select,
    values: &Values,
    alias: &TableAlias,
) -> Result<Outcome, SqlError> {
    let grouped =
        !matches!(&sel.group_by, sqlparser::ast::GroupByExpr::Expressions(e, _) if e.is_empty());
    if sel.selection.is_some() || grouped || sel.distinct.is_some() {
        return Err(SqlError::unsupported(
            "WHERE, GROUP BY or DISTINCT over VALUES in FROM",
        ));
    }
    let table = ident(&alias.name);
    let rows = constant_rows(x, values)?;
    let width = rows.first().map_or(0, Vec::len);
    let mut names: Vec<String> = alias.columns.iter().map(|c| ident(&c.name)).collect();
    for i in names.len()..width {
        names.push(format!("column{}", i + 1));
    }
    constant_rows_select(x, q, sel, &table, &names, &rows)
}

/// Runs `q` over constant `rows` (VALUES in FROM, UNNEST of arrays), a table named `table`
/// with columns `names`: select list, ORDER BY, LIMIT/OFFSET; reads nothing.
pub(super) fn constant_rows_select(
    x: &mut Exec<'_, '_>,
    q: &Query,
    sel: &Select,
    table: &str,
    names: &[String],
    rows: &[Vec<Value>],
) -> Result<Outcome, SqlError> {
    let params = x.params;
    let mut items: Vec<(String, sqlparser::ast::Expr)> = Vec::new();
    for item in &sel.projection {
        match item {
            SelectItem::UnnamedExpr(e) => items.push((column_name(e), e.clone())),
            SelectItem::ExprWithAlias { expr, alias } => items.push((ident(alias), expr.clone())),
            SelectItem::Wildcard(_) => {
                for n in names {
                    let id = sqlparser::ast::Ident::with_quote('"', n.clone());
                    items.push((n.clone(), sqlparser::ast::Expr::Identifier(id)));
                }
            }
            other => return Err(SqlError::unsupported(format!("the select item {other}"))),
        }
    }
    if items.iter().any(|(_, e)| is_aggregate(e)) {
        return Err(SqlError::unsupported("aggregates over VALUES in FROM"));
    }
    let order: Vec<(&sqlparser::ast::Expr, bool)> = match &q.order_by {
        None => Vec::new(),
        Some(o) => match &o.kind {
            sqlparser::ast::OrderByKind::Expressions(es) => es
                .iter()
                .map(|e| {
                    let desc = matches!(e.options.sort, Some(sqlparser::ast::OrderBySort::Desc));
                    (&e.expr, desc)
                })
                .collect(),
            sqlparser::ast::OrderByKind::All(_) => {
                return Err(SqlError::unsupported("ORDER BY ALL"))
            }
        },
    };
    let mut out: Vec<(Vec<Value>, Vec<Value>)> = Vec::with_capacity(rows.len());
    for row in rows {
        let mut cols = ValuesRow { table, names, row };
        let mut values = Vec::with_capacity(items.len());
        for (_, e) in &items {
            values.push(eval(e, &mut cols, params)?);
        }
        let mut keys = Vec::with_capacity(order.len());
        for (e, _) in &order {
            keys.push(eval(e, &mut cols, params)?);
        }
        out.push((values, keys));
    }
    let rows = sorted_page(out, &order, q.limit_clause.as_ref(), params)?;
    let fields = items
        .iter()
        .enumerate()
        .map(|(i, (name, _))| Field {
            name: name.clone(),
            ty: match rows.first().map(|r| &r[i]) {
                Some(Value::Int(_)) => SqlType::Int8,
                Some(Value::Real(_)) => SqlType::Numeric,
                Some(Value::Bool(_)) => SqlType::Bool,
                _ => SqlType::Text,
            },
        })
        .collect();
    Ok(Outcome::select(fields, rows))
}
