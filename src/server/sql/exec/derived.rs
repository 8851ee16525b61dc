//! Derived tables: subqueries in FROM (`FROM (SELECT …) AS s`, also `(VALUES …) AS v(a, b)`
//! in a join) and non-recursive common table expressions (`WITH a AS (SELECT …)` before a
//! SELECT, INSERT, UPDATE or DELETE). Each query runs as a SELECT of its own inside the
//! statement, its reads recorded as that SELECT's reads (a scan stays a scan, so an insert
//! into what it scanned stays a visible phantom); the statement then reads its rows as a table
//! without further events. A CTE runs when the statement first names it, once however often it
//! is named, as PostgreSQL runs a CTE once (one it never names does not run). `WITH RECURSIVE`
//! and data-modifying statements inside WITH are refused with `0A000`.
//!
//! Describe (the extended protocol's, before a statement runs) describes the same queries
//! without running them: [`describe_query`].

use std::sync::Arc;

use sqlparser::ast::{Query, SetExpr, Values, With};

use super::from_clause::{renamed, FromClause, Resolve};
use super::project::{expr_type, projection_items};
use super::{Derived, Exec, NoRow, WithTable};
use crate::server::sql::catalog::Catalog;
use crate::server::sql::eval::{eval, ident};
use crate::server::sql::{Field, Outcome, SqlError};
use crate::store::Value;

/// Runs `f` with the CTEs of `with` in scope (they run when first named).
pub(super) fn with_ctes<F>(
    x: &mut Exec<'_, '_>,
    with: Option<&With>,
    f: F,
) -> Result<Outcome, SqlError>
where
    F: FnOnce(&mut Exec<'_, '_>) -> Result<Outcome, SqlError>,
{
    let Some(with) = with else {
        return f(x);
    };
    if with.recursive {
        return Err(SqlError::unsupported("WITH RECURSIVE"));
    }
    let depth = x.with.len();
    for cte in &with.cte_tables {
        if data_modifying(&cte.query) {
            return Err(SqlError::unsupported(
                "data-modifying statements in WITH (INSERT, UPDATE, DELETE in a CTE)",
            ));
        }
        x.with.push(WithTable {
            name: ident(&cte.alias.name),
            columns: cte.alias.columns.iter().map(|c| ident(&c.name)).collect(),
            query: cte.query.clone(),
            rows: None,
        });
    }
    let out = f(x);
    x.with.truncate(depth);
    out
}

/// Whether `q` is an INSERT, UPDATE, DELETE or MERGE.
pub(super) fn data_modifying(q: &Query) -> bool {
    matches!(
        q.body.as_ref(),
        SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_)
    )
}

/// The rows of the CTE `name` in scope, run by `run` (seeing only the CTEs before it) when
/// first named; `None`: no CTE has that name.
pub(super) fn cte(
    x: &mut Exec<'_, '_>,
    name: &str,
    run: fn(&mut Exec<'_, '_>, &Query) -> Result<Derived, SqlError>,
) -> Option<Result<Arc<Derived>, SqlError>> {
    let i = x.with.iter().rposition(|w| w.name == name)?;
    if let Some(d) = &x.with[i].rows {
        return Some(Ok(d.clone()));
    }
    let tail = x.with.split_off(i);
    let result = run(x, &tail[0].query);
    x.with.extend(tail);
    Some(result.and_then(|d| {
        let d = Arc::new(renamed(d, &x.with[i].columns, name)?);
        x.with[i].rows = Some(d.clone());
        Ok(d)
    }))
}

/// `VALUES (…), …` as a table (`column1`, `column2`, …): constant rows, no events.
pub(super) fn values_table(x: &mut Exec<'_, '_>, values: &Values) -> Result<Derived, SqlError> {
    let rows = constant_rows(x, values)?;
    let fields = values_fields(x.catalog, values);
    Ok(Derived { fields, rows })
}

/// The rows of `VALUES (…), …`, each expression evaluated without columns.
pub(super) fn constant_rows(
    x: &mut Exec<'_, '_>,
    values: &Values,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let params = x.params;
    let mut no_row = NoRow {
        catalog: &mut *x.catalog,
        session: x.tx.session(),
    };
    let mut rows = Vec::with_capacity(values.rows.len());
    for r in &values.rows {
        let row = r
            .iter()
            .map(|e| eval(e, &mut no_row, params))
            .collect::<Result<Vec<_>, _>>()?;
        rows.push(row);
    }
    Ok(rows)
}

/// The fields of a VALUES table (`column1`, …), typed by its first row's expressions.
fn values_fields(catalog: &Catalog, values: &Values) -> Vec<Field> {
    let first = values.rows.first().map_or(&[][..], |r| &r[..]);
    first
        .iter()
        .enumerate()
        .map(|(i, e)| Field {
            name: format!("column{}", i + 1),
            ty: expr_type(catalog, &[], e),
        })
        .collect()
}

/// What Describe sees: the tables, and the CTEs in scope with their columns.
struct Describer<'c> {
    catalog: &'c Catalog,
    ctes: Vec<(String, Arc<Derived>)>,
}

impl Resolve for Describer<'_> {
    fn catalog(&self) -> &Catalog {
        self.catalog
    }

    fn subquery(&mut self, q: &Query) -> Result<Derived, SqlError> {
        Ok(Derived {
            fields: describe_in(self, q)?,
            rows: Vec::new(),
        })
    }

    fn cte(&mut self, name: &str) -> Option<Result<Arc<Derived>, SqlError>> {
        let (_, d) = self.ctes.iter().rev().find(|(n, _)| n == name)?;
        Some(Ok(d.clone()))
    }
}

/// The fields query `q` returns, without running it.
pub(super) fn describe_query(catalog: &Catalog, q: &Query) -> Result<Vec<Field>, SqlError> {
    describe_in(
        &mut Describer {
            catalog,
            ctes: Vec::new(),
        },
        q,
    )
}

fn describe_in(d: &mut Describer<'_>, q: &Query) -> Result<Vec<Field>, SqlError> {
    let depth = d.ctes.len();
    if let Some(with) = &q.with {
        for cte in &with.cte_tables {
            let fields = describe_in(d, &cte.query)?;
            let names: Vec<String> = cte.alias.columns.iter().map(|c| ident(&c.name)).collect();
            let name = ident(&cte.alias.name);
            let derived = renamed(
                Derived {
                    fields,
                    rows: Vec::new(),
                },
                &names,
                &name,
            )?;
            d.ctes.push((name, Arc::new(derived)));
        }
    }
    let out = match q.body.as_ref() {
        SetExpr::Select(sel) => {
            let from = FromClause::build(d, None, &sel.from)?;
            let items = from.select_list(d.catalog, &sel.projection);
            projection_items(d.catalog, &from.sources, &items)
                .map(|items| items.into_iter().map(|i| i.field).collect())
        }
        SetExpr::Values(v) => Ok(values_fields(d.catalog, v)),
        SetExpr::Query(inner) => describe_in(d, inner),
        _ => Ok(Vec::new()),
    };
    d.ctes.truncate(depth);
    out
}
