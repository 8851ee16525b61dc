//! A statement's result columns: the select list (or RETURNING) as items with their names and
//! static types (for RowDescription before execution), and their values over the rows read.

use std::borrow::Cow;
use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectNamePart, Query,
    SelectItem, SetExpr, Visit, Visitor,
};

use super::{row_cols, source_of, Exec, RowState, Source};
use crate::server::sql::catalog::{Catalog, SqlType};
use crate::server::sql::eval::{self, column_ref, eval, ident, object_name};
use crate::server::sql::{Field, SqlError};
use crate::store::Value;

/// One projected item: its field and expression (the statement's own, or a column of a
/// wildcard).
pub(super) struct Item<'e> {
    pub(super) field: Field,
    pub(super) expr: Cow<'e, Expr>,
}

pub(super) fn projection_items<'e>(
    catalog: &Catalog,
    sources: &[Source],
    items: &'e [SelectItem],
) -> Result<Vec<Item<'e>>, SqlError> {
    let mut out = Vec::new();
    for item in items {
        match item {
            SelectItem::UnnamedExpr(e) => out.push(Item {
                field: Field {
                    name: column_name(e),
                    ty: expr_type(catalog, sources, e),
                },
                expr: Cow::Borrowed(e),
            }),
            SelectItem::ExprWithAlias { expr, alias } => out.push(Item {
                field: Field {
                    name: ident(alias),
                    ty: expr_type(catalog, sources, expr),
                },
                expr: Cow::Borrowed(expr),
            }),
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                let qualifier = match item {
                    SelectItem::QualifiedWildcard(k, _) => {
                        let text = k.to_string();
                        Some(text.trim_end_matches(".*").to_lowercase())
                    }
                    _ => None,
                };
                for s in sources {
                    if qualifier.as_deref().is_some_and(|q| q != s.alias) {
                        continue;
                    }
                    for (name, ty) in s.columns(catalog) {
                        out.push(Item {
                            field: Field {
                                name: name.to_string(),
                                ty,
                            },
                            expr: Cow::Owned(Expr::CompoundIdentifier(vec![
                                sqlparser::ast::Ident::with_quote('"', s.alias.clone()),
                                sqlparser::ast::Ident::with_quote('"', name.to_string()),
                            ])),
                        });
                    }
                }
            }
            other => return Err(SqlError::unsupported(format!("the select item {other}"))),
        }
    }
    Ok(out)
}

/// The name PostgreSQL gives an unaliased result column.
pub(super) fn column_name(e: &Expr) -> String {
    if let Some((_, c)) = column_ref(e) {
        return c.into_owned();
    }
    match e {
        Expr::Function(f) => object_name(&f.name).unwrap_or_else(|_| "?column?".into()),
        Expr::Cast { expr, .. } | Expr::Nested(expr) => column_name(expr),
        Expr::Exists { .. } => "exists".into(),
        Expr::Case { .. } => "case".into(),
        // A scalar subquery is named after its one column.
        Expr::Subquery(q) => match q.body.as_ref() {
            SetExpr::Select(sel) => match sel.projection.first() {
                Some(SelectItem::UnnamedExpr(e)) => column_name(e),
                Some(SelectItem::ExprWithAlias { alias, .. }) => ident(alias),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        _ => "?column?".into(),
    }
}

/// The static type of an expression's values (for RowDescription before execution).
pub(super) fn expr_type(catalog: &Catalog, sources: &[Source], e: &Expr) -> SqlType {
    if let Some((q, c)) = column_ref(e) {
        for s in sources {
            if q.as_deref().is_some_and(|q| q != s.alias) {
                continue;
            }
            if let Some(ty) = s.column_type(catalog, &c) {
                return ty;
            }
        }
        return SqlType::Text;
    }
    match e {
        Expr::Value(v) => match &v.value {
            sqlparser::ast::Value::Number(n, _) if n.parse::<i32>().is_ok() => SqlType::Int4,
            sqlparser::ast::Value::Number(n, _) if n.parse::<i64>().is_ok() => SqlType::Int8,
            sqlparser::ast::Value::Number(..) => SqlType::Numeric,
            sqlparser::ast::Value::Boolean(_) => SqlType::Bool,
            _ => SqlType::Text,
        },
        Expr::Nested(e) => expr_type(catalog, sources, e),
        Expr::Cast { data_type, .. } => eval::sql_type(data_type)
            .map(|(t, _)| t)
            .unwrap_or(SqlType::Text),
        Expr::Function(f) => {
            let name = object_name(&f.name).unwrap_or_default();
            let arg = function_args(f).into_iter().next();
            match name.as_str() {
                "count" => SqlType::Int8,
                "bool_and" | "bool_or" | "every" => SqlType::Bool,
                "string_agg" => SqlType::Text,
                "avg" => SqlType::Numeric,
                "sum" => match arg.map(|a| expr_type(catalog, sources, a)) {
                    Some(SqlType::Int2 | SqlType::Int4) => SqlType::Int8,
                    Some(SqlType::Float8) => SqlType::Float8,
                    _ => SqlType::Numeric,
                },
                "min" | "max" => arg
                    .map(|a| expr_type(catalog, sources, a))
                    .unwrap_or(SqlType::Text),
                "length" | "char_length" | "pg_backend_pid" => SqlType::Int4,
                "abs" => arg
                    .map(|a| expr_type(catalog, sources, a))
                    .unwrap_or(SqlType::Numeric),
                "now" | "current_timestamp" => SqlType::Timestamp,
                "coalesce" | "nullif" | "greatest" | "least" => function_args(f)
                    .into_iter()
                    .find(
                        |a| !matches!(a, Expr::Value(v) if v.value == sqlparser::ast::Value::Null),
                    )
                    .map_or(SqlType::Text, |a| expr_type(catalog, sources, a)),
                "nextval" | "currval" | "setval" | "lastval" => SqlType::Int8,
                _ => SqlType::Text,
            }
        }
        Expr::BinaryOp { left, op, right } => {
            use sqlparser::ast::BinaryOperator as B;
            match op {
                B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo => {
                    let (l, r) = (
                        expr_type(catalog, sources, left),
                        expr_type(catalog, sources, right),
                    );
                    match (l, r) {
                        (SqlType::Int8, _) | (_, SqlType::Int8) => SqlType::Int8,
                        (a, b) if a.is_integer() && b.is_integer() => SqlType::Int4,
                        (a, _) if a.is_numeric() => SqlType::Numeric,
                        (_, b) if b.is_numeric() => SqlType::Numeric,
                        _ => SqlType::Text,
                    }
                }
                B::StringConcat => SqlType::Text,
                _ => SqlType::Bool,
            }
        }
        Expr::UnaryOp { expr, .. } => expr_type(catalog, sources, expr),
        Expr::Subquery(q) => subquery_type(catalog, q),
        Expr::Case {
            conditions,
            else_result,
            ..
        } => conditions
            .first()
            .map(|w| &w.result)
            .or(else_result.as_deref())
            .map_or(SqlType::Text, |r| expr_type(catalog, sources, r)),
        Expr::Exists { .. } | Expr::AnyOp { .. } | Expr::AllOp { .. } => SqlType::Bool,
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::In { .. }
        | Expr::Between { .. }
        | Expr::IsTrue(_)
        | Expr::IsFalse(_) => SqlType::Bool,
        _ => SqlType::Text,
    }
}

pub(super) fn function_args(f: &sqlparser::ast::Function) -> Vec<&Expr> {
    match &f.args {
        FunctionArguments::List(l) => l
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether `f` calls an aggregate function (COUNT, SUM, MIN, MAX, AVG, BOOL_AND, BOOL_OR,
/// EVERY, STRING_AGG).
pub(super) fn function_is_aggregate(f: &Function) -> bool {
    match f.name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => [
            "count",
            "sum",
            "min",
            "max",
            "avg",
            "bool_and",
            "bool_or",
            "every",
            "string_agg",
        ]
        .iter()
        .any(|n| i.value.eq_ignore_ascii_case(n)),
        _ => false,
    }
}

/// Calls `found` on each aggregate call outside subqueries, until it breaks.
struct FindAggregate<'f> {
    depth: usize,
    found: &'f mut dyn FnMut(&Expr, &Function) -> ControlFlow<()>,
}

impl Visitor for FindAggregate<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Function(f) if self.depth == 0 && function_is_aggregate(f) => (self.found)(e, f),
            _ => ControlFlow::Continue(()),
        }
    }
}

/// Calls `found` on each aggregate call of `e` outside its subqueries (`count(*) > 0`,
/// `COALESCE(max(x), 0)`), in order, until it breaks: whether it broke.
pub(super) fn aggregate_calls(
    e: &Expr,
    found: &mut dyn FnMut(&Expr, &Function) -> ControlFlow<()>,
) -> bool {
    Visit::visit(e, &mut FindAggregate { depth: 0, found }).is_break()
}

/// Whether `e` calls an aggregate anywhere outside its subqueries.
pub(super) fn is_aggregate(e: &Expr) -> bool {
    aggregate_calls(e, &mut |_, _| ControlFlow::Break(()))
}

/// The type of the one column subquery `q` returns (text when it cannot tell).
fn subquery_type(catalog: &Catalog, q: &Query) -> SqlType {
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return SqlType::Text;
    };
    let mut sources = Vec::new();
    for twj in &sel.from {
        let factors = std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation));
        for f in factors {
            match source_of(catalog, f) {
                Ok(s) => sources.push(s),
                Err(_) => return SqlType::Text,
            }
        }
    }
    match sel.projection.first() {
        Some(SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. }) => {
            expr_type(catalog, &sources, e)
        }
        _ => SqlType::Text,
    }
}

pub(super) fn returning_rows(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    items: &[Item<'_>],
    rows: &mut [Vec<RowState>],
) -> Result<Vec<Vec<Value>>, SqlError> {
    let params = x.params;
    let mut out = Vec::with_capacity(rows.len());
    for combo in rows {
        let mut cols = row_cols(x, sources, combo);
        let mut values = Vec::with_capacity(items.len());
        for i in items {
            values.push(eval(&i.expr, &mut cols, params)?);
        }
        out.push(values);
    }
    Ok(out)
}
