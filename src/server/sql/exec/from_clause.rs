//! A FROM clause as a tree over its sources: stored tables, subqueries in FROM and CTEs
//! (their rows from [`Resolve`]), joined by inner joins (`JOIN … ON`, `CROSS JOIN`, commas),
//! `LEFT`/`RIGHT`/`FULL [OUTER] JOIN`, `USING (cols)`, `NATURAL` and parentheses; [`super::join`]
//! runs it. `USING` and `NATURAL` compare the named columns and merge each pair into one (the
//! left one; the right one for a RIGHT JOIN): an unqualified name reaches the merged column,
//! `*` lists the merged columns first, as PostgreSQL does. Each condition knows the sources it
//! names ([`FromClause::mask`]), so the join tests it as soon as they are bound.

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::Arc;

use sqlparser::ast::{
    BinaryOperator, Expr, Ident, InTarget, JoinConstraint, JoinOperator, Query, SelectItem,
    TableAlias, TableFactor, TableWithJoins,
};

use super::rows::conjuncts;
use super::{Derived, Source};
use crate::server::sql::catalog::Catalog;
use crate::server::sql::eval::{column_ref, ident, object_name};
use crate::server::sql::SqlError;

/// A condition whose sources are not known (a subquery, an unknown name): evaluated last.
pub(super) const ALL: u64 = u64::MAX;

/// Where a FROM clause finds what is not a stored table.
pub(super) trait Resolve {
    /// The tables.
    fn catalog(&self) -> &Catalog;
    /// A subquery in FROM, run (or described, its rows left empty).
    fn subquery(&mut self, q: &Query) -> Result<Derived, SqlError>;
    /// The CTE `name` in scope, run (or described) when first named; `None`: no such CTE.
    fn cte(&mut self, name: &str) -> Option<Result<Arc<Derived>, SqlError>>;
}

/// A USING join's ON conjuncts (indices into [`FromClause::conds`]) and merged columns.
type UsingJoin = (Vec<usize>, Vec<(usize, usize)>);

/// How a join keeps its sides' rows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Inner,
    Left,
    Right,
    Full,
}

/// A FROM item as a tree over its sources.
pub(super) enum Node {
    Leaf(usize),
    Join {
        kind: Kind,
        left: Box<Node>,
        right: Box<Node>,
        /// The ON conjuncts (indices into [`FromClause::conds`]).
        on: Vec<usize>,
        /// The columns USING/NATURAL merged (source, column), first in `*`.
        merged: Vec<(usize, usize)>,
    },
}

/// A FROM clause: its sources (a combination's rows are in this order), the join tree of each
/// comma-separated item, the ON conditions, and `*`'s columns when USING merged some.
pub(super) struct FromClause<'q> {
    pub(super) sources: Vec<Source>,
    /// Empty: one stored table.
    pub(super) items: Vec<Node>,
    /// The ON conjuncts (and USING's equalities).
    pub(super) conds: Vec<Cow<'q, Expr>>,
    /// `*`'s columns (source, column) when USING or NATURAL merged some; `None`: every
    /// source's columns in order.
    pub(super) star: Option<Vec<(usize, usize)>>,
}

impl<'q> FromClause<'q> {
    /// The FROM clause `from`, after `target` (UPDATE's or DELETE's table) when there is one.
    pub(super) fn build(
        r: &mut dyn Resolve,
        target: Option<Source>,
        from: &'q [TableWithJoins],
    ) -> Result<FromClause<'q>, SqlError> {
        let mut f = FromClause {
            sources: Vec::new(),
            items: Vec::new(),
            conds: Vec::new(),
            star: None,
        };
        if let (None, [twj]) = (&target, from) {
            if let (true, TableFactor::Table { .. }) = (twj.joins.is_empty(), &twj.relation) {
                // One table (or CTE): no tree.
                let node = f.factor(r, &twj.relation)?;
                if f.sources[0].derived.is_some() {
                    f.items.push(node);
                }
                return Ok(f);
            }
        }
        if let Some(t) = target {
            f.sources.push(t);
            f.items.push(Node::Leaf(0));
        }
        let mut merged = false;
        for twj in from {
            let node = f.item(r, twj, &mut merged)?;
            f.items.push(node);
        }
        for (i, s) in f.sources.iter().enumerate() {
            if f.sources[..i].iter().any(|o| o.alias == s.alias) {
                return Err(SqlError::new(
                    "42712",
                    format!("table name \"{}\" specified more than once", s.alias),
                ));
            }
        }
        if f.sources.len() > 64 {
            return Err(SqlError::unsupported(
                "a FROM clause of more than 64 tables",
            ));
        }
        if merged {
            let mut star = Vec::new();
            for item in &f.items {
                star.extend(f.output(r.catalog(), item));
            }
            f.star = Some(star);
        }
        Ok(f)
    }

    /// Whether it is one stored table (read by [`super::rows::matching_rows`]).
    pub(super) fn is_one_table(&self) -> bool {
        self.items.is_empty() && self.sources.len() == 1
    }

    /// The select list `items` with `*` spelled out when USING merged columns (merged ones
    /// first, as PostgreSQL lists them); borrowed as it is otherwise.
    pub(super) fn select_list<'i>(
        &self,
        catalog: &Catalog,
        items: &'i [SelectItem],
    ) -> Cow<'i, [SelectItem]> {
        let Some(star) = &self.star else {
            return Cow::Borrowed(items);
        };
        let mut out = Vec::with_capacity(items.len() + star.len());
        for item in items {
            match item {
                SelectItem::Wildcard(_) => {
                    for &(s, c) in star {
                        out.push(SelectItem::UnnamedExpr(Expr::CompoundIdentifier(vec![
                            Ident::with_quote('"', self.sources[s].alias.clone()),
                            Ident::with_quote('"', self.column_name(catalog, s, c)),
                        ])));
                    }
                }
                other => out.push(other.clone()),
            }
        }
        Cow::Owned(out)
    }

    fn item(
        &mut self,
        r: &mut dyn Resolve,
        twj: &'q TableWithJoins,
        merged_any: &mut bool,
    ) -> Result<Node, SqlError> {
        let mut node = self.factor(r, &twj.relation)?;
        for j in &twj.joins {
            let right = self.factor(r, &j.relation)?;
            let (kind, constraint) = match &j.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c) => {
                    (Kind::Inner, c)
                }
                JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (Kind::Left, c),
                JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (Kind::Right, c),
                JoinOperator::FullOuter(c) => (Kind::Full, c),
                _ => {
                    return Err(SqlError::unsupported(
                        "this kind of join (SEMI, ANTI, APPLY, …)",
                    ))
                }
            };
            let mut on = Vec::new();
            let mut merged = Vec::new();
            match constraint {
                JoinConstraint::On(e) => {
                    let mut parts = Vec::new();
                    conjuncts(e, &mut parts);
                    for p in parts {
                        on.push(self.conds.len());
                        self.conds.push(Cow::Borrowed(p));
                    }
                }
                JoinConstraint::None if kind == Kind::Inner => {}
                JoinConstraint::None => {
                    return Err(SqlError::new("42601", "an outer join needs ON or USING"))
                }
                JoinConstraint::Using(names) => {
                    let names = names
                        .iter()
                        .map(object_name)
                        .collect::<Result<Vec<_>, _>>()?;
                    (on, merged) = self.using(r.catalog(), &node, &right, kind, &names)?;
                    *merged_any = true;
                }
                JoinConstraint::Natural => {
                    let catalog = r.catalog();
                    let rights = self.output(catalog, &right);
                    let mut names: Vec<String> = Vec::new();
                    for (s, c) in self.output(catalog, &node) {
                        let name = self.column_name(catalog, s, c);
                        if !names.contains(&name)
                            && rights
                                .iter()
                                .any(|&(rs, rc)| self.column_name(catalog, rs, rc) == name)
                        {
                            names.push(name);
                        }
                    }
                    (on, merged) = self.using(catalog, &node, &right, kind, &names)?;
                    *merged_any = true;
                }
                JoinConstraint::UsingAlias(..) => {
                    return Err(SqlError::unsupported("JOIN … USING (…) AS alias"))
                }
            }
            node = Node::Join {
                kind,
                left: Box::new(node),
                right: Box::new(right),
                on,
                merged,
            };
        }
        Ok(node)
    }

    fn factor(&mut self, r: &mut dyn Resolve, f: &'q TableFactor) -> Result<Node, SqlError> {
        let source = match f {
            TableFactor::Table {
                name, alias, args, ..
            } if args.is_none() => {
                let n = object_name(name)?;
                let cte = if name.0.len() == 1 { r.cte(&n) } else { None };
                let alias_name = alias.as_ref().map_or_else(|| n.clone(), |a| ident(&a.name));
                match cte {
                    Some(d) => derived_source(d?, alias_name, alias.as_ref())?,
                    None => {
                        if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                            return Err(SqlError::unsupported("column aliases on a table"));
                        }
                        let table = r
                            .catalog()
                            .table(&n)
                            .ok_or_else(|| SqlError::undefined_table(&n))?;
                        Source::table(table, alias_name)
                    }
                }
            }
            TableFactor::Derived {
                lateral: false,
                subquery,
                alias,
                ..
            } => {
                let Some(alias) = alias else {
                    return Err(SqlError::new(
                        "42601",
                        "subquery in FROM must have an alias",
                    ));
                };
                let d = Arc::new(r.subquery(subquery)?);
                derived_source(d, ident(&alias.name), Some(alias))?
            }
            TableFactor::Derived { lateral: true, .. } => {
                return Err(SqlError::unsupported("LATERAL subqueries"))
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => {
                let mut merged = false;
                let node = self.item(r, table_with_joins, &mut merged)?;
                if merged {
                    return Err(SqlError::unsupported("USING or NATURAL inside parentheses"));
                }
                return Ok(node);
            }
            other => return Err(SqlError::unsupported(format!("FROM {other}"))),
        };
        self.sources.push(source);
        Ok(Node::Leaf(self.sources.len() - 1))
    }

    fn column_name(&self, catalog: &Catalog, s: usize, c: usize) -> String {
        self.sources[s].columns(catalog)[c].0.to_string()
    }

    /// The columns `*` lists for `node` (source, column), merged ones first.
    fn output(&self, catalog: &Catalog, node: &Node) -> Vec<(usize, usize)> {
        match node {
            Node::Leaf(s) => {
                let source = &self.sources[*s];
                (0..source.width(catalog))
                    .filter(|c| !source.hidden.contains(c))
                    .map(|c| (*s, c))
                    .collect()
            }
            Node::Join {
                left,
                right,
                merged,
                ..
            } => {
                let mut out = merged.clone();
                for side in [left, right] {
                    for sc in self.output(catalog, side) {
                        if !out.contains(&sc) {
                            out.push(sc);
                        }
                    }
                }
                out
            }
        }
    }

    /// `USING (names)` between `left` and `right`: the equalities (ON conjuncts) and the
    /// merged columns; the other copy of each is hidden from unqualified names.
    fn using(
        &mut self,
        catalog: &Catalog,
        left: &Node,
        right: &Node,
        kind: Kind,
        names: &[String],
    ) -> Result<UsingJoin, SqlError> {
        if kind == Kind::Full {
            return Err(SqlError::unsupported("FULL JOIN with USING or NATURAL"));
        }
        let (lefts, rights) = (self.output(catalog, left), self.output(catalog, right));
        let mut on = Vec::new();
        let mut merged = Vec::new();
        for name in names {
            let find = |cols: &[(usize, usize)], side: &str| {
                let mut found = cols
                    .iter()
                    .filter(|&&(s, c)| self.column_name(catalog, s, c) == *name);
                match (found.next(), found.next()) {
                    (Some(&sc), None) => Ok(sc),
                    (None, _) => Err(SqlError::new(
                        "42703",
                        format!("column \"{name}\" specified in USING clause does not exist in {side} table"),
                    )),
                    _ => Err(SqlError::new(
                        "42702",
                        format!("common column name \"{name}\" appears more than once in {side} table"),
                    )),
                }
            };
            let (l, r) = (find(&lefts, "left")?, find(&rights, "right")?);
            let (kept, hidden) = if kind == Kind::Right { (r, l) } else { (l, r) };
            self.sources[hidden.0].hidden.push(hidden.1);
            merged.push(kept);
            let qualified = |(s, _): (usize, usize)| {
                Expr::CompoundIdentifier(vec![
                    Ident::with_quote('"', self.sources[s].alias.clone()),
                    Ident::with_quote('"', name.clone()),
                ])
            };
            let eq = Expr::BinaryOp {
                left: Box::new(qualified(l)),
                op: BinaryOperator::Eq,
                right: Box::new(qualified(r)),
            };
            on.push(self.conds.len());
            self.conds.push(Cow::Owned(eq));
        }
        Ok((on, merged))
    }

    /// The source and column a column reference names (`None`: unknown, or ambiguous).
    pub(super) fn resolve(&self, catalog: &Catalog, e: &Expr) -> Option<(usize, usize)> {
        let (q, c) = column_ref(e)?;
        let mut found = None;
        for (i, s) in self.sources.iter().enumerate() {
            if q.as_deref().is_some_and(|q| q != s.alias) {
                continue;
            }
            if let Some(col) = s.column(catalog, &c) {
                if q.is_none() && s.hidden.contains(&col) {
                    continue;
                }
                if found.is_some() {
                    return None;
                }
                found = Some((i, col));
            }
        }
        found
    }

    /// The sources `e` names, as bits; [`ALL`] when it holds a subquery or an unknown name.
    pub(super) fn mask(&self, catalog: &Catalog, e: &Expr) -> u64 {
        let mut mask = 0u64;
        let _ = sqlparser::ast::visit_expressions(e, |x| {
            match x {
                Expr::Subquery(_)
                | Expr::Exists { .. }
                | Expr::In {
                    target: InTarget::Subquery(_),
                    ..
                } => mask = ALL,
                Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
                    match self.resolve(catalog, x) {
                        Some((s, _)) => mask |= 1 << s,
                        None => mask = ALL,
                    }
                }
                _ => {}
            }
            if mask == ALL {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        mask
    }
}

/// A derived table under `alias`, its columns renamed by the alias's column list.
fn derived_source(
    d: Arc<Derived>,
    alias: String,
    table_alias: Option<&TableAlias>,
) -> Result<Source, SqlError> {
    let names: Vec<String> = table_alias.map_or(Vec::new(), |a| {
        a.columns.iter().map(|c| ident(&c.name)).collect()
    });
    let d = if names.is_empty() {
        d
    } else {
        let copy = Derived {
            fields: d.fields.clone(),
            rows: d.rows.clone(),
        };
        Arc::new(renamed(copy, &names, &alias)?)
    };
    Ok(Source {
        table: usize::MAX,
        alias,
        derived: Some(d),
        hidden: Vec::new(),
    })
}

/// `d` with its first columns renamed by `names` (a CTE's or an alias's column list).
pub(super) fn renamed(mut d: Derived, names: &[String], table: &str) -> Result<Derived, SqlError> {
    if names.len() > d.fields.len() {
        return Err(SqlError::new(
            "42P10",
            format!(
                "table \"{table}\" has {} columns available but {} columns specified",
                d.fields.len(),
                names.len()
            ),
        ));
    }
    for (f, n) in d.fields.iter_mut().zip(names) {
        f.name = n.clone();
    }
    Ok(d)
}
