//! Correlated subqueries: which column references of a subquery name the outer statement's
//! row, and the subquery with those references bound to the outer row's values (as PostgreSQL
//! passes them to a subplan as parameters). A reference names the outer row when no FROM item
//! of the subquery, nor of the queries inside it that enclose the reference, has that column
//! (SQL's scoping of names: the innermost query that has the column owns it).

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, Query, SetExpr, TableFactor, TableWithJoins, Value as SqlValue, Visit, VisitMut, Visitor,
    VisitorMut,
};

use super::Source;
use crate::server::sql::catalog::Catalog;
use crate::server::sql::eval::{column_ref, ident, object_name};
use crate::store::Value;

/// A column a subquery names from outside itself: its qualifier (if any) and name, folded.
pub(super) type FreeColumn = (Option<String>, String);

/// What one query's FROM makes visible: each item's name and its table (`None`: a derived
/// table, a function, or a name the catalog does not know — its columns are unknown, so an
/// unqualified name is taken to be its own).
type Scope = Vec<(String, Option<usize>)>;

fn scope_of(catalog: &Catalog, q: &Query) -> Scope {
    let mut scope = Vec::new();
    body_scope(catalog, &q.body, &mut scope);
    scope
}

fn body_scope(catalog: &Catalog, body: &SetExpr, scope: &mut Scope) {
    match body {
        SetExpr::Select(s) => {
            for twj in &s.from {
                joined_scope(catalog, twj, scope);
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            body_scope(catalog, left, scope);
            body_scope(catalog, right, scope);
        }
        SetExpr::Query(q) => body_scope(catalog, &q.body, scope),
        _ => {}
    }
}

fn joined_scope(catalog: &Catalog, twj: &TableWithJoins, scope: &mut Scope) {
    factor_scope(catalog, &twj.relation, scope);
    for j in &twj.joins {
        factor_scope(catalog, &j.relation, scope);
    }
}

fn factor_scope(catalog: &Catalog, f: &TableFactor, scope: &mut Scope) {
    match f {
        TableFactor::Table { name, alias, .. } => {
            let Ok(n) = object_name(name) else { return };
            let table = catalog.table(&n);
            let shown = alias.as_ref().map_or(n, |a| ident(&a.name));
            scope.push((shown, table));
        }
        TableFactor::Derived { alias, .. } => {
            let shown = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_default();
            scope.push((shown, None));
        }
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => joined_scope(catalog, table_with_joins, scope),
        _ => scope.push((String::new(), None)),
    }
}

/// Whether a column reference is visible in one of `scopes`.
fn visible(catalog: &Catalog, scopes: &[Scope], (qualifier, name): &FreeColumn) -> bool {
    scopes
        .iter()
        .flatten()
        .any(|(shown, table)| match qualifier {
            Some(q) => q == shown,
            None => table.map_or(true, |t| catalog.get(t).column(name).is_some()),
        })
}

/// `e` as a column reference (`c` or `t.c`), owned.
fn plain_ref(e: &Expr) -> Option<FreeColumn> {
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            column_ref(e).map(|(q, c)| (q.map(|q| q.into_owned()), c.into_owned()))
        }
        _ => None,
    }
}

/// Collects the references no enclosing scope of the subquery has.
struct Free<'c> {
    catalog: &'c Catalog,
    scopes: Vec<Scope>,
    found: Vec<FreeColumn>,
}

impl Visitor for Free<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        self.scopes.push(scope_of(self.catalog, q));
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.scopes.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if let Some(r) = plain_ref(e) {
            if !visible(self.catalog, &self.scopes, &r) && !self.found.contains(&r) {
                self.found.push(r);
            }
        }
        ControlFlow::Continue(())
    }
}

/// The columns subquery `q` names that none of its own FROM items has (nor those of the
/// queries inside it around the reference): in order of first appearance, without repeats.
/// Output names used in its ORDER BY are among them; binding leaves out what the outer row
/// does not have.
pub(super) fn free_columns(catalog: &Catalog, q: &Query) -> Vec<FreeColumn> {
    let mut free = Free {
        catalog,
        scopes: Vec::new(),
        found: Vec::new(),
    };
    let _ = Visit::visit(q, &mut free);
    free.found
}

/// Whether one of `free` is a column of the outer statement's `sources`.
pub(super) fn names_outer(catalog: &Catalog, sources: &[Source], free: &[FreeColumn]) -> bool {
    free.iter().any(|(qualifier, name)| {
        sources.iter().any(|s| match qualifier {
            Some(q) => *q == s.alias,
            None => catalog.get(s.table).column(name).is_some(),
        })
    })
}

/// Replaces the free references that `bound` gives a value.
struct Bind<'c, 'b> {
    catalog: &'c Catalog,
    scopes: Vec<Scope>,
    bound: &'b [(FreeColumn, Value)],
}

impl VisitorMut for Bind<'_, '_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        self.scopes.push(scope_of(self.catalog, q));
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
        self.scopes.pop();
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Some(r) = plain_ref(e) {
            if !visible(self.catalog, &self.scopes, &r) {
                if let Some((_, v)) = self.bound.iter().find(|(b, _)| *b == r) {
                    *e = value_literal(v);
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// Subquery `q` with each free reference in `bound` replaced by its value.
pub(super) fn bind(catalog: &Catalog, q: &Query, bound: &[(FreeColumn, Value)]) -> Query {
    let mut q = q.clone();
    let mut binder = Bind {
        catalog,
        scopes: Vec::new(),
        bound,
    };
    let _ = VisitMut::visit(&mut q, &mut binder);
    q
}

/// A value as the literal that evaluates to it.
pub(super) fn value_literal(v: &Value) -> Expr {
    Expr::value(match v {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Boolean(*b),
        Value::Int(i) => SqlValue::Number(i.to_string(), false),
        Value::Real(r) => SqlValue::Number(format!("{r:?}"), false),
        Value::Text(t) => SqlValue::SingleQuotedString(t.to_string()),
    })
}
