//! SELECT: FROM (one table, or joins, subqueries and CTEs read by [`super::join`] and
//! [`super::derived`]), WHERE, the select list, ORDER BY, DISTINCT and DISTINCT ON,
//! LIMIT/OFFSET over the rows read (aggregates, GROUP BY and HAVING in [`super::aggregate`],
//! subqueries in [`super::subquery`]); and Describe's fields of a statement.

use std::sync::Arc;

use rustc_hash::FxHashSet;
use sqlparser::ast::{
    Distinct, Expr, FromTable, GroupByExpr, OrderByKind, OrderBySort, Query, Select, SelectItem,
    SetExpr, TableFactor, TableObject, TableWithJoins,
};

use super::aggregate::aggregate_rows;
use super::derived;
use super::from_clause::{FromClause, Resolve};
use super::join::from_rows;
use super::order::{distinct_page, output_row, SortedRows};
use super::project::{is_aggregate, projection_items, Item};
use super::subquery::{holds_query, matching_rows, Subqueries, SubqueryRow};
use super::{first_words, table_of, values, Derived, Exec, RowState, Source};
use crate::server::locks::Mode;
use crate::server::sql::catalog::Catalog;
use crate::server::sql::eval::{eval, is_true, object_name};
use crate::server::sql::{Field, Outcome, SqlError};

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

/// The SELECT forms refused (`0A000`), and the one select of `q`.
fn plain_select(q: &Query) -> Result<&Select, SqlError> {
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
    if !sel.named_window.is_empty() {
        return Err(SqlError::unsupported("WINDOW"));
    }
    if sel.into.is_some() {
        return Err(SqlError::unsupported("SELECT … INTO"));
    }
    if !q.pipe_operators.is_empty() || q.for_clause.is_some() {
        return Err(SqlError::unsupported("this query form"));
    }
    Ok(sel)
}

/// ORDER BY's items, each with whether it sorts descending; and whether each puts NULLs
/// first (`NULLS FIRST`/`NULLS LAST`, else PostgreSQL's default: first when descending).
type OrderItems<'q> = (Vec<(&'q Expr, bool)>, Vec<bool>);

fn order_items(q: &Query) -> Result<OrderItems<'_>, SqlError> {
    let Some(o) = &q.order_by else {
        return Ok((Vec::new(), Vec::new()));
    };
    match &o.kind {
        OrderByKind::Expressions(es) => Ok(es
            .iter()
            .map(|e| {
                let desc = matches!(e.options.sort, Some(OrderBySort::Desc));
                ((&e.expr, desc), e.options.nulls_first.unwrap_or(desc))
            })
            .unzip()),
        OrderByKind::All(_) => Err(SqlError::unsupported("ORDER BY ALL")),
    }
}

fn select_body(x: &mut Exec<'_, '_>, q: &Query) -> Result<Outcome, SqlError> {
    let sel = plain_select(q)?;
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
    if holds_query(sel) || holds_query(&q.order_by) {
        // Subqueries may read a key once per row: each key is read once.
        x.notes.once = true;
    }
    let group_by: &[Expr] = match &sel.group_by {
        GroupByExpr::Expressions(e, m) if m.is_empty() => e,
        GroupByExpr::Expressions(..) | GroupByExpr::All(_) => {
            return Err(SqlError::unsupported("GROUP BY with modifiers"))
        }
    };
    let having = sel.having.as_ref();
    let aggregate =
        !group_by.is_empty() || having.is_some() || items.iter().any(|i| is_aggregate(&i.expr));
    let (order, nulls_first) = order_items(q)?;
    let distinct_on: &[Expr] = match &sel.distinct {
        Some(Distinct::On(exprs)) => exprs,
        _ => &[],
    };
    // The rows' sort keys: ORDER BY's items, then DISTINCT ON's.
    let mut keyed = order.clone();
    keyed.extend(distinct_on.iter().map(|e| (e, false)));
    let params = x.params;
    let mut subqueries = Subqueries::new(select);
    let mut out = if sources.is_empty() {
        if aggregate {
            return Err(SqlError::unsupported("aggregates without FROM"));
        }
        row_without_from(x, sel.selection.as_ref(), &items, &keyed, &mut subqueries)?
    } else {
        let mode = if x.notes.for_update {
            Mode::Exclusive
        } else {
            x.read_lock
        };
        let selection = sel.selection.as_ref();
        let read = &mut |x: &mut Exec<'_, '_>, selection: Option<&Expr>| {
            from_rows(x, &from, selection, (mode, mode))
        };
        let matched = matching_rows(x, select, sources, selection, read)?;
        if aggregate {
            let grouping = (group_by, having);
            aggregate_rows(
                x,
                sources,
                matched,
                &items,
                grouping,
                &keyed,
                &mut subqueries,
            )?
        } else {
            project_rows(x, sources, matched, &items, &keyed, &mut subqueries)?
        }
    };
    if matches!(sel.distinct, Some(Distinct::Distinct)) {
        let mut seen = FxHashSet::default();
        out.retain(|(v, _)| seen.insert(format!("{v:?}")));
    }
    let rows = distinct_page(
        out,
        &order,
        &nulls_first,
        distinct_on.len(),
        q.limit_clause.as_ref(),
        params,
    )?;
    Ok(Outcome::select(fields, rows))
}

/// The select list and sort keys (`keyed`) of each row read.
fn project_rows(
    x: &mut Exec<'_, '_>,
    sources: &[Source],
    matched: Vec<Vec<RowState>>,
    items: &[Item<'_>],
    keyed: &[(&Expr, bool)],
    subqueries: &mut Subqueries,
) -> Result<SortedRows, SqlError> {
    let params = x.params;
    let mut out = Vec::with_capacity(matched.len());
    for mut combo in matched {
        let mut cols = SubqueryRow {
            x: &mut *x,
            sources,
            combo: &mut combo,
            subqueries: &mut *subqueries,
        };
        out.push(output_row(items, keyed, &mut cols, params)?);
    }
    Ok(out)
}

/// A SELECT without FROM: its one row (none when its WHERE is not true).
fn row_without_from(
    x: &mut Exec<'_, '_>,
    selection: Option<&Expr>,
    items: &[Item<'_>],
    keyed: &[(&Expr, bool)],
    subqueries: &mut Subqueries,
) -> Result<SortedRows, SqlError> {
    let params = x.params;
    let mut cols = SubqueryRow {
        x,
        sources: &[],
        combo: &mut [],
        subqueries,
    };
    if let Some(e) = selection {
        if !is_true(&eval(e, &mut cols, params)?) {
            return Ok(Vec::new());
        }
    }
    Ok(vec![output_row(items, keyed, &mut cols, params)?])
}
