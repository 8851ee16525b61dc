//! Joins run as a nested-loop join that reads what an index nested-loop join on a real
//! database reads (the FROM clause's tree is [`super::from_clause`]'s):
//!
//! - The sources are bound one after another. Among the tables an inner join may bind next,
//!   the first whose primary key the conditions pin (given the sources bound already) goes
//!   first, else the next in FROM order (a join on the inner table's key is an index lookup).
//! - A pinned table reads only the pinned rows' existence, per combination of the sources
//!   bound before it — a key that has no row reads that key's absence, which a later insert of
//!   it changes. An unpinned table is scanned, once per statement whatever the number of
//!   combinations: every row ever inserted, so an insert into it is a visible phantom.
//! - Each condition is evaluated as soon as the sources it names are bound, so a combination
//!   a condition rules out leads to no further reads.
//! - The inner side of a LEFT JOIN (the left side of a RIGHT JOIN) is looked up under its ON
//!   condition only; when nothing matches, the combination gets a NULL row, and the lookup's
//!   reads (the absent key, or the scan) stay recorded: an insert there would change the
//!   result. A FULL JOIN reads both of its sides whole.
//! - A cell or a row's existence is read once per statement however many combinations hold
//!   its row (one statement reads one snapshot).

use std::sync::Arc;

use sqlparser::ast::{BinaryOperator, Expr, InTarget};

use super::from_clause::{FromClause, Kind, Node, ALL};
use super::rows::{conjuncts, pinned_keys};
use super::{lock, row_cols, Exec, RowState};
use crate::server::locks::{Mode, Resource};
use crate::server::sql::catalog::Catalog;
use crate::server::sql::eval::{eval, is_true};
use crate::server::sql::SqlError;
use crate::store::Value;

/// A condition and the sources it names.
struct Cond<'f> {
    expr: &'f Expr,
    mask: u64,
}

/// One run of a FROM clause: its conditions, and what it read so far.
struct Run<'f, 'q> {
    from: &'f FromClause<'q>,
    conds: Vec<Cond<'f>>,
    /// Each source's present rows once scanned.
    scans: Vec<Option<Vec<RowState>>>,
    /// The lock modes of the first source and of the others.
    modes: (Mode, Mode),
}

/// The combinations (one row per source, in FROM order; a NULL row for an outer join's
/// missing side) the FROM clause `from` and the WHERE clause `selection` select. The first
/// source is locked in `modes.0` (UPDATE's and DELETE's target), the others in `modes.1`.
pub(super) fn join_rows<'f>(
    x: &mut Exec<'_, '_>,
    from: &'f FromClause<'_>,
    selection: Option<&'f Expr>,
    modes: (Mode, Mode),
) -> Result<Vec<Vec<RowState>>, SqlError> {
    let catalog: &Catalog = x.catalog;
    let mut conds: Vec<Cond<'f>> = from
        .conds
        .iter()
        .map(|e| Cond {
            expr: e.as_ref(),
            mask: from.mask(catalog, e),
        })
        .collect();
    let mut top = Vec::new();
    if let Some(e) = selection {
        let mut parts = Vec::new();
        conjuncts(e, &mut parts);
        for p in parts {
            top.push(conds.len());
            conds.push(Cond {
                expr: p,
                mask: from.mask(catalog, p),
            });
        }
    }
    for item in &from.items {
        scope_conds(item, &mut top);
    }
    let mut run = Run {
        from,
        conds,
        scans: vec![None; from.sources.len()],
        modes,
    };
    // Each key read once per statement, however many combinations hold its row.
    x.notes.once = true;
    let entry: Vec<RowState> = from.sources.iter().map(|_| unbound()).collect();
    let units: Vec<&Node> = from.items.iter().collect();
    run.scope(x, Scope::Units(units), entry, 0, &top)
}

/// What a scope binds: a node, or inner-joined units (the top level's items).
enum Scope<'n> {
    Node(&'n Node),
    Units(Vec<&'n Node>),
}

/// The conditions that filter `node`'s rows where it stands: the ON of its inner joins and
/// of the joins whose rows it keeps.
fn scope_conds(node: &Node, out: &mut Vec<usize>) {
    if let Node::Join {
        kind,
        left,
        right,
        on,
        ..
    } = node
    {
        match kind {
            Kind::Inner => {
                out.extend_from_slice(on);
                scope_conds(left, out);
                scope_conds(right, out);
            }
            Kind::Left => scope_conds(left, out),
            Kind::Right => scope_conds(right, out),
            Kind::Full => {}
        }
    }
}

/// The sources of `node`, as bits.
fn sources_of(node: &Node) -> u64 {
    match node {
        Node::Leaf(s) => 1 << s,
        Node::Join { left, right, .. } => sources_of(left) | sources_of(right),
    }
}

/// The inner-joined units of `node` (its inner joins flattened).
fn units<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
    match node {
        Node::Join {
            kind: Kind::Inner,
            left,
            right,
            ..
        } => {
            units(left, out);
            units(right, out);
        }
        other => out.push(other),
    }
}

fn unbound() -> RowState {
    RowState {
        table: usize::MAX,
        key: Arc::from(Vec::new()),
        cells: Arc::from(Vec::new()),
        cache: Vec::new(),
    }
}

fn filled(table: usize, values: impl Iterator<Item = Value>) -> RowState {
    RowState {
        table,
        key: Arc::from(Vec::new()),
        cells: Arc::from(Vec::new()),
        cache: values.map(Some).collect(),
    }
}

impl Run<'_, '_> {
    /// The combinations extending `entry` (sources `bound` bound) with the sources of `what`,
    /// filtered by the conditions `conds`.
    fn scope(
        &mut self,
        x: &mut Exec<'_, '_>,
        what: Scope<'_>,
        mut entry: Vec<RowState>,
        mut bound: u64,
        conds: &[usize],
    ) -> Result<Vec<Vec<RowState>>, SqlError> {
        if !self.holds(x, &mut entry, conds, |m| m != ALL && m & !bound == 0)? {
            return Ok(Vec::new());
        }
        let mut combos = vec![entry];
        match what {
            Scope::Node(node) => combos = self.bind(x, node, combos, &mut bound, conds)?,
            Scope::Units(units) => combos = self.bind_units(x, units, combos, &mut bound, conds)?,
        }
        let mut out = Vec::with_capacity(combos.len());
        for mut c in combos {
            if self.holds(x, &mut c, conds, |m| m == ALL)? {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// Binds inner-joined `units`, a table whose key is pinned first.
    fn bind_units(
        &mut self,
        x: &mut Exec<'_, '_>,
        mut units: Vec<&Node>,
        mut combos: Vec<Vec<RowState>>,
        bound: &mut u64,
        conds: &[usize],
    ) -> Result<Vec<Vec<RowState>>, SqlError> {
        while !units.is_empty() && !combos.is_empty() {
            let next = units
                .iter()
                .position(
                    |u| matches!(u, Node::Leaf(s) if self.pinnable(x.catalog, *s, *bound, conds)),
                )
                .unwrap_or(0);
            let unit = units.remove(next);
            combos = self.bind(x, unit, combos, bound, conds)?;
        }
        Ok(combos)
    }

    /// Binds the sources of `node` in each combination.
    fn bind(
        &mut self,
        x: &mut Exec<'_, '_>,
        node: &Node,
        combos: Vec<Vec<RowState>>,
        bound: &mut u64,
        conds: &[usize],
    ) -> Result<Vec<Vec<RowState>>, SqlError> {
        match node {
            Node::Leaf(s) => {
                let s = *s;
                let after = *bound | 1 << s;
                let mut out = Vec::new();
                for mut combo in combos {
                    for row in self.candidates(x, s, &mut combo, conds)? {
                        let mut c = combo.clone();
                        c[s] = row;
                        if self.holds(x, &mut c, conds, |m| newly(m, 1 << s, after))? {
                            out.push(c);
                        }
                    }
                }
                *bound = after;
                Ok(out)
            }
            Node::Join {
                kind: Kind::Inner, ..
            } => {
                let mut list = Vec::new();
                units(node, &mut list);
                self.bind_units(x, list, combos, bound, conds)
            }
            Node::Join {
                kind: Kind::Left | Kind::Right,
                ..
            } => self.outer(x, node, combos, bound, conds),
            Node::Join {
                kind: Kind::Full, ..
            } => self.full(x, node, combos, bound, conds),
        }
    }

    /// A LEFT or RIGHT JOIN: the kept side bound, then the other looked up per combination
    /// under the ON condition, or a NULL row.
    fn outer(
        &mut self,
        x: &mut Exec<'_, '_>,
        node: &Node,
        combos: Vec<Vec<RowState>>,
        bound: &mut u64,
        conds: &[usize],
    ) -> Result<Vec<Vec<RowState>>, SqlError> {
        let Node::Join {
            kind,
            left,
            right,
            on,
            ..
        } = node
        else {
            unreachable!("an outer join")
        };
        let (kept, looked_up) = if *kind == Kind::Left {
            (left, right)
        } else {
            (right, left)
        };
        let combos = self.bind(x, kept, combos, bound, conds)?;
        let group = sources_of(looked_up);
        let mut inner = on.clone();
        scope_conds(looked_up, &mut inner);
        let after = *bound | group;
        let mut out = Vec::new();
        for combo in combos {
            let found = self.scope(x, Scope::Node(looked_up), combo.clone(), *bound, &inner)?;
            let mut rows = found;
            if rows.is_empty() {
                let mut c = combo;
                self.nulls(x.catalog, &mut c, group);
                rows.push(c);
            }
            for mut c in rows {
                if self.holds(x, &mut c, conds, |m| newly(m, group, after))? {
                    out.push(c);
                }
            }
        }
        *bound = after;
        Ok(out)
    }

    /// A FULL JOIN: both sides read whole per combination, paired under the ON condition,
    /// each row of either side without a partner kept with a NULL row.
    fn full(
        &mut self,
        x: &mut Exec<'_, '_>,
        node: &Node,
        combos: Vec<Vec<RowState>>,
        bound: &mut u64,
        conds: &[usize],
    ) -> Result<Vec<Vec<RowState>>, SqlError> {
        let Node::Join {
            left, right, on, ..
        } = node
        else {
            unreachable!("a join")
        };
        let (lm, rm) = (sources_of(left), sources_of(right));
        let (mut lc, mut rc) = (Vec::new(), Vec::new());
        scope_conds(left, &mut lc);
        scope_conds(right, &mut rc);
        let after = *bound | lm | rm;
        let mut out = Vec::new();
        for combo in combos {
            let lefts = self.scope(x, Scope::Node(left), combo.clone(), *bound, &lc)?;
            let rights = self.scope(x, Scope::Node(right), combo, *bound, &rc)?;
            let mut paired = vec![false; rights.len()];
            let mut joined = Vec::new();
            for l in lefts {
                let mut any = false;
                for (j, r) in rights.iter().enumerate() {
                    let mut c = l.clone();
                    copy_sources(&mut c, r, rm);
                    if self.holds(x, &mut c, on, |_| true)? {
                        any = true;
                        paired[j] = true;
                        joined.push(c);
                    }
                }
                if !any {
                    let mut c = l;
                    self.nulls(x.catalog, &mut c, rm);
                    joined.push(c);
                }
            }
            for (r, paired) in rights.into_iter().zip(paired) {
                if !paired {
                    let mut c = r;
                    self.nulls(x.catalog, &mut c, lm);
                    joined.push(c);
                }
            }
            for mut c in joined {
                if self.holds(x, &mut c, conds, |m| newly(m, lm | rm, after))? {
                    out.push(c);
                }
            }
        }
        *bound = after;
        Ok(out)
    }

    /// Whether every condition of `conds` that `which` selects (by its sources) is true.
    fn holds(
        &self,
        x: &mut Exec<'_, '_>,
        combo: &mut [RowState],
        conds: &[usize],
        which: impl Fn(u64) -> bool,
    ) -> Result<bool, SqlError> {
        if !conds.iter().any(|&i| which(self.conds[i].mask)) {
            return Ok(true);
        }
        let params = x.params;
        let mut cols = row_cols(x, &self.from.sources, combo);
        for &i in conds {
            let c = &self.conds[i];
            if which(c.mask) && !is_true(&eval(c.expr, &mut cols, params)?) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Sets the sources `group` of `combo` to NULL rows.
    fn nulls(&self, catalog: &Catalog, combo: &mut [RowState], group: u64) {
        for (s, source) in self.from.sources.iter().enumerate() {
            if group & 1 << s != 0 {
                let width = source.width(catalog);
                combo[s] = filled(source.table, std::iter::repeat(Value::Null).take(width));
            }
        }
    }

    /// Whether `conds` pin every key column of source `s` given the sources `bound`.
    fn pinnable(&self, catalog: &Catalog, s: usize, bound: u64, conds: &[usize]) -> bool {
        let source = &self.from.sources[s];
        if source.derived.is_some() {
            return false;
        }
        let key = &catalog.get(source.table).key;
        let free = |e: &Expr| {
            let m = self.from.mask(catalog, e);
            m != ALL && m & !bound == 0 && m & 1 << s == 0
        };
        !key.is_empty()
            && key.iter().all(|&k| {
                conds.iter().any(|&i| match self.conds[i].expr {
                    Expr::BinaryOp {
                        left,
                        op: BinaryOperator::Eq,
                        right,
                    } => [(left, right), (right, left)]
                        .iter()
                        .any(|(a, b)| self.from.resolve(catalog, a) == Some((s, k)) && free(b)),
                    Expr::In {
                        expr,
                        target: InTarget::List(list),
                        negated: false,
                        ..
                    } => {
                        key.len() == 1
                            && self.from.resolve(catalog, expr) == Some((s, k))
                            && list.iter().all(|e| self.from.mask(catalog, e) == 0)
                    }
                    _ => false,
                })
            })
    }

    /// The rows of source `s` that may join `combo`: a derived table's rows; the rows of the
    /// keys `conds` pin (each locked, its existence read); else the table scanned.
    fn candidates(
        &mut self,
        x: &mut Exec<'_, '_>,
        s: usize,
        combo: &mut [RowState],
        conds: &[usize],
    ) -> Result<Vec<RowState>, SqlError> {
        let from = self.from;
        let source = &from.sources[s];
        if let Some(d) = &source.derived {
            return Ok(d
                .rows
                .iter()
                .map(|r| filled(source.table, r.iter().cloned()))
                .collect());
        }
        let mode = if s == 0 { self.modes.0 } else { self.modes.1 };
        let params = x.params;
        let pinned = {
            let exprs: Vec<&Expr> = conds
                .iter()
                .map(|&i| &self.conds[i])
                .filter(|c| c.mask != ALL && c.mask & 1 << s != 0)
                .map(|c| c.expr)
                .collect();
            let mut cols = row_cols(x, &from.sources, combo);
            let catalog: &Catalog = cols.catalog;
            pinned_keys(catalog, params, &exprs, source, &mut cols)?
        };
        let t = source.table;
        let set = x.catalog.get(t).set;
        let columns = x.catalog.get(t).columns.len();
        let Some(keys) = pinned else {
            return self.scan(x, s, mode);
        };
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let (row, elem, _) = x.catalog.find_row(t, &key);
            lock(x, Resource::Row(set, elem), mode)?;
            if let (true, Some(r)) = (self.member(x, set, elem), row) {
                let stored = &x.catalog.get(t).rows[r as usize];
                out.push(RowState {
                    table: t,
                    key: stored.key.clone(),
                    cells: stored.cells.clone(),
                    cache: vec![None; columns],
                });
            }
        }
        Ok(out)
    }

    /// Source `s`'s table scanned (once per statement): the whole table locked, every row
    /// ever inserted's existence read; its present rows.
    fn scan(
        &mut self,
        x: &mut Exec<'_, '_>,
        s: usize,
        mode: Mode,
    ) -> Result<Vec<RowState>, SqlError> {
        if let Some(rows) = &self.scans[s] {
            return Ok(rows.clone());
        }
        let t = self.from.sources[s].table;
        let set = x.catalog.get(t).set;
        lock(x, Resource::Table(set), mode)?;
        let table = x.catalog.get(t);
        let columns = table.columns.len();
        let stored: Vec<_> = table
            .rows
            .iter()
            .map(|r| (r.elem, r.key.clone(), r.cells.clone()))
            .collect();
        let mut rows = Vec::new();
        for (elem, key, cells) in stored {
            if self.member(x, set, elem) {
                rows.push(RowState {
                    table: t,
                    key,
                    cells,
                    cache: vec![None; columns],
                });
            }
        }
        self.scans[s] = Some(rows.clone());
        Ok(rows)
    }

    /// Whether row `elem` of `set` exists (read once per statement: [`super::StatementNotes`]).
    fn member(&mut self, x: &mut Exec<'_, '_>, set: u64, elem: u64) -> bool {
        x.notes.read_member(x.tx, set, elem)
    }
}

/// Whether a condition on sources `mask` becomes true to test once `group` is bound (all
/// its sources bound, one of them just now).
fn newly(mask: u64, group: u64, after: u64) -> bool {
    mask != ALL && mask & group != 0 && mask & !after == 0
}

/// Copies the rows of sources `group` from `from` into `to`.
fn copy_sources(to: &mut [RowState], from: &[RowState], group: u64) {
    for (s, row) in from.iter().enumerate() {
        if group & 1 << s != 0 {
            to[s] = row.clone();
        }
    }
}

/// The rows `selection` selects from `from`: a stored table's alone
/// ([`super::rows::matching_rows`], no hashing on that path), else the join's.
pub(super) fn from_rows(
    x: &mut Exec<'_, '_>,
    from: &FromClause<'_>,
    selection: Option<&Expr>,
    modes: (Mode, Mode),
) -> Result<Vec<Vec<RowState>>, SqlError> {
    if from.is_one_table() {
        super::rows::matching_rows(x, &from.sources[0], selection, modes.0)
    } else {
        join_rows(x, from, selection, modes)
    }
}
