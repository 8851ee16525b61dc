//! The feasible-prefix encoding with the prediction boundary (IsoPredict PLDI'24 §4.1, §4.5,
//! appendix B.1): read choices, per-session boundaries, and the write–read relation of the
//! predicted history, on the pruned [`Space`].
//!
//! Variables (all Boolean):
//! - `ge_s_c` ⟺ `boundary(s) ≥ c`, one per threshold `c` a unit or write of session `s`
//!   uses, chained `ge_s_c' ⇒ ge_s_c` for `c < c'` (an order encoding of the boundary; any
//!   value in the domain is one assignment of the chain, and an interval holding no allowed
//!   boundary value — relaxed mode: a transaction with no read — is forbidden).
//! - `sel_u_i`: choice unit `u` reads from its `i`-th candidate; exactly one per unit, none
//!   for a unit with a single candidate.
//! - `wrk_g_i` ⟺ some included unit of group `g` (reader `t`, key `k`) chose candidate `i`:
//!   the paper's `wr_k(c_i, t)` with the boundary conjunct `i ≤ boundary(s)`.
//! - `wr_a_b` ⟺ `∨_k wr_k(a, b)`, only for pairs where `a` is a candidate of some read of `b`.
//!
//! Constraints:
//! - a fixed unit (`fix ≤ b`: before the strict boundary read / in a transaction before the
//!   relaxed boundary transaction) reads its observed writer: `ge(fix) ⇒ sel_obs`;
//! - an included unit reads a write inside its writer's session boundary:
//!   `ge(inc) ∧ sel_i ⇒ ge_{s'}(thr(c_i, k))` (appendix B.1's `wrpos_k(t1) < boundary(s1)`).

use rustc_hash::FxHashMap;

use super::formula::{Lit, Name, Store, F};
use super::space::Space;

/// The encoding under construction: the store and the literals of the feasible prefix, which
/// the isolation and unserializability encodings build on.
pub(crate) struct Encoding<'s, 'h> {
    pub space: &'s Space<'h>,
    pub store: Store,
    /// Per session: `ge` literal per threshold (parallel to the session's thresholds).
    pub ge: Vec<Vec<Lit>>,
    /// Per unit: the first index of its selectors in `sel` (one per group candidate).
    pub sel_start: Vec<u32>,
    pub sel: Vec<Lit>,
    /// Parallel to `space.group_cands`: `wr_k(candidate, reader)` of the group.
    pub wrk: Vec<Lit>,
    /// Per key slot, parallel to `space.key_writers`: the writer's write is inside the boundary.
    pub incw: Vec<Vec<Lit>>,
    /// `n × n`: `wr(a, b)` (`FALSE` where `a` can never be read by `b`, and for `a = t0`,
    /// whose order is session order).
    pub wr: Vec<Lit>,
    /// `wr_k(t2, t3) ∧ incw(t1)` per (candidate, writer) as the exact instances use it
    /// ([`Encoding::overwritten`]), each defined once and shared by every instance.
    overwritten: FxHashMap<(u32, u32), Lit>,
}

impl<'s, 'h> Encoding<'s, 'h> {
    /// Generates the feasible-prefix encoding.
    pub fn new(space: &'s Space<'h>) -> Encoding<'s, 'h> {
        Encoding::build(space, true)
    }

    /// The feasible-prefix encoding without the `n × n` relation `wr(a, b)` (only the per-key
    /// `wrk` literals): linear in the space, for the scalable engine.
    pub fn sparse(space: &'s Space<'h>) -> Encoding<'s, 'h> {
        Encoding::build(space, false)
    }

    fn build(space: &'s Space<'h>, pairs: bool) -> Encoding<'s, 'h> {
        let n = if pairs { space.nodes() } else { 0 };
        let mut e = Encoding {
            space,
            store: Store::default(),
            ge: Vec::with_capacity(space.sessions.len()),
            sel_start: Vec::with_capacity(space.units.len()),
            sel: Vec::new(),
            wrk: vec![Lit::FALSE; space.group_cands.len()],
            incw: Vec::with_capacity(space.keys.len()),
            wr: vec![Lit::FALSE; n * n],
            overwritten: FxHashMap::default(),
        };
        e.boundaries();
        for slot in 0..space.keys.len() {
            let lits = space.key_writers[slot]
                .iter()
                .map(|w| {
                    if w.node == 0 {
                        Lit::TRUE
                    } else {
                        e.ge(space.node_session[w.node as usize], w.thr)
                    }
                })
                .collect();
            e.incw.push(lits);
        }
        e.choices();
        e.write_read(pairs);
        e.locked_reads_exclusive();
        e
    }

    /// Two locked reads of a key by transactions that both write it inside the boundary never
    /// read one writer (each would have to commit after the other, [`super::locks`]): per key
    /// and candidate writer, at most one such read chooses it (a sequential counter, linear in
    /// the choices). Part of every candidate's facts, so it excludes no prediction; it keeps
    /// the solver from proposing the lost updates a row lock forbids (docs/prediction.md
    /// "Statements real databases make atomic").
    fn locked_reads_exclusive(&mut self) {
        let space = self.space;
        let h = space.history;
        if h.locked_reads().is_empty() {
            return;
        }
        let mut by_writer: FxHashMap<u32, Vec<Lit>> = FxHashMap::default();
        for slot in 0..space.keys.len() {
            by_writer.clear();
            for &g in &space.key_groups[slot] {
                let group = &space.groups[g as usize];
                let writes = self.incw(slot as u32, group.node);
                if writes == Lit::FALSE {
                    continue;
                }
                for &u in space.units_of(g) {
                    if !space.ops_of(u).iter().any(|&o| h.is_locked_read(o)) {
                        continue;
                    }
                    let inc = self.inc(u);
                    for (i, &c) in space.cands(g).iter().enumerate() {
                        let sel = self.sel(u, i as u32);
                        let both = self
                            .store
                            .and_lit(Name::new("lck", &[u, i as u32]), &[inc, sel, writes]);
                        if both != Lit::FALSE {
                            by_writer.entry(c).or_default().push(both);
                        }
                    }
                }
            }
            let mut writers: Vec<(u32, Vec<Lit>)> = by_writer.drain().collect();
            writers.sort_unstable_by_key(|(c, _)| *c);
            for (c, lits) in writers {
                at_most_one(&mut self.store, slot as u32, c, &lits);
            }
        }
    }

    /// `boundary(s) ≥ c`.
    pub fn ge(&self, s: u32, c: u32) -> Lit {
        if c == 0 {
            return Lit::TRUE;
        }
        let session = &self.space.sessions[s as usize];
        match session.thresholds.binary_search(&c) {
            Ok(i) => self.ge[s as usize][i],
            Err(_) if c > session.max => Lit::FALSE,
            Err(_) => panic!("threshold {c} of session {s} was not registered"),
        }
    }

    /// The session of a unit.
    fn unit_session(&self, u: u32) -> u32 {
        let g = self.space.units[u as usize].group;
        self.space.node_session[self.space.groups[g as usize].node as usize]
    }

    /// Unit `u` is inside the boundary.
    pub fn inc(&self, u: u32) -> Lit {
        self.ge(self.unit_session(u), self.space.units[u as usize].inc)
    }

    /// Unit `u` is fixed to its observed writer.
    pub fn fix(&self, u: u32) -> Lit {
        self.ge(self.unit_session(u), self.space.units[u as usize].fix)
    }

    /// Unit `u` reads from its group's `i`-th candidate.
    pub fn sel(&self, u: u32, i: u32) -> Lit {
        self.sel[(self.sel_start[u as usize] + i) as usize]
    }

    /// `wr(a, b)` between nodes.
    pub fn wr(&self, a: u32, b: u32) -> Lit {
        self.wr[a as usize * self.space.nodes() + b as usize]
    }

    /// A literal that implies `wr_k(t2, t3)` (candidate `cand`, `wrk[cand]`) and that the
    /// key's writer `w` (of slot `slot`) writes inside the boundary: the read of `t3` would be
    /// overwritten by `t1` in an order placing `t1` between `t2` and `t3`. It occurs only
    /// positively (in the exact instances' clauses), so the one direction suffices; defined
    /// once per pair, so that instances are plain clauses over shared literals, which the SAT
    /// engine propagates without a fresh Tseitin variable per instance.
    pub fn overwritten(&mut self, cand: u32, slot: usize, w: usize) -> Lit {
        let (wrk, inside) = (self.wrk[cand as usize], self.incw[slot][w]);
        match (wrk.constant(), inside.constant()) {
            (Some(false), _) | (_, Some(false)) => return Lit::FALSE,
            (Some(true), _) => return inside,
            (_, Some(true)) => return wrk,
            _ => {}
        }
        if let Some(&l) = self.overwritten.get(&(cand, w as u32)) {
            return l;
        }
        let l = self
            .store
            .bool_var(Name::new("ovw", &[cand, slot as u32, w as u32]));
        self.store.implies(&[l], wrk);
        self.store.implies(&[l], inside);
        self.overwritten.insert((cand, w as u32), l);
        l
    }

    /// Writer `node`'s write of key slot `slot` is inside the boundary (`FALSE` if it does not
    /// write the key).
    pub fn incw(&self, slot: u32, node: u32) -> Lit {
        let writers = &self.space.key_writers[slot as usize];
        match writers.binary_search_by_key(&node, |w| w.node) {
            Ok(i) => self.incw[slot as usize][i],
            Err(_) => Lit::FALSE,
        }
    }

    fn boundaries(&mut self) {
        for (s, session) in self.space.sessions.iter().enumerate() {
            let mut lits = Vec::with_capacity(session.thresholds.len());
            for (i, &c) in session.thresholds.iter().enumerate() {
                let g = self.store.bool_var(Name::new("ge", &[s as u32, c]));
                if i > 0 {
                    self.store.implies(&[g], lits[i - 1]);
                }
                lits.push(g);
            }
            // Forbid intervals [c_i, c_{i+1}) that hold no allowed boundary value.
            if session.allowed.iter().any(|&a| !a) {
                let mut allowed_before = Vec::with_capacity(session.allowed.len() + 1);
                allowed_before.push(0u32);
                for &a in &session.allowed {
                    allowed_before.push(allowed_before.last().copied().unwrap_or(0) + a as u32);
                }
                let m = session.thresholds.len();
                for i in 0..=m {
                    let lo = if i == 0 { 0 } else { session.thresholds[i - 1] };
                    let hi = if i == m {
                        session.max + 1
                    } else {
                        session.thresholds[i]
                    };
                    if allowed_before[hi as usize] == allowed_before[lo as usize] {
                        let at_least = if i == 0 { Lit::TRUE } else { lits[i - 1] };
                        let below = if i == m { Lit::FALSE } else { lits[i].not() };
                        self.store.clause(&[at_least.not(), below.not()]);
                    }
                }
            }
            self.ge.push(lits);
        }
    }

    fn choices(&mut self) {
        let space = self.space;
        for (u, unit) in space.units.iter().enumerate() {
            let u = u as u32;
            let g = unit.group;
            let cands = space.cands(g);
            self.sel_start.push(self.sel.len() as u32);
            if cands.len() == 1 {
                self.sel.push(Lit::TRUE);
                continue;
            }
            let start = self.sel.len();
            for i in 0..cands.len() {
                let v = self.store.bool_var(Name::new("sel", &[u, i as u32]));
                self.sel.push(v);
            }
            let sels: Vec<Lit> = self.sel[start..].to_vec();
            exactly_one(&mut self.store, u, &sels);
            // Fixed: the observed writer.
            let fix = self.fix(u);
            self.store.implies(&[fix], sels[unit.obs as usize]);
        }
        // Included reads read writes inside their writer's boundary.
        for (u, unit) in space.units.iter().enumerate() {
            let u = u as u32;
            let group = &space.groups[unit.group as usize];
            let reader_session = space.node_session[group.node as usize];
            let slot = space.key_slot(group.key);
            let inc = self.inc(u);
            for (i, &c) in space.cands(unit.group).iter().enumerate() {
                if c == 0 || space.node_session[c as usize] == reader_session {
                    continue; // t0, or earlier in the reader's own session: always inside
                }
                let sel = self.sel(u, i as u32);
                let inside = self.incw(slot, c);
                self.store.implies(&[inc, sel], inside);
            }
        }
    }

    fn write_read(&mut self, pairs: bool) {
        let space = self.space;
        let n = space.nodes();
        for (g, group) in space.groups.iter().enumerate() {
            let g = g as u32;
            let units = space.units_of(g);
            for i in 0..group.cands.len() as u32 {
                let conjs: Vec<[Lit; 2]> = units
                    .iter()
                    .map(|&u| [self.inc(u), self.sel(u, i)])
                    .collect();
                let lit = if conjs.len() == 1 {
                    self.store.and_lit(Name::new("wrk", &[g, i]), &conjs[0])
                } else {
                    let v = self.store.bool_var(Name::new("wrk", &[g, i]));
                    for c in &conjs {
                        self.store.implies(c, v);
                    }
                    let mut parts = vec![F::Lit(v.not())];
                    parts.extend(conjs.iter().map(|c| F::all(c)));
                    self.store.assert(F::or(parts));
                    v
                };
                self.wrk[(group.cands.start + i) as usize] = lit;
            }
        }
        if !pairs {
            return;
        }
        // wr(a, b) = ∨_k wr_k(a, b), reader by reader (groups come in node order).
        let mut per_writer: Vec<Vec<Lit>> = vec![Vec::new(); n];
        let mut g = 0usize;
        while g < space.groups.len() {
            let b = space.groups[g].node;
            let mut touched: Vec<u32> = Vec::new();
            while g < space.groups.len() && space.groups[g].node == b {
                let r = space.groups[g].cands.clone();
                for idx in r {
                    let a = space.group_cands[idx as usize];
                    if a == 0 {
                        continue;
                    }
                    if per_writer[a as usize].is_empty() {
                        touched.push(a);
                    }
                    per_writer[a as usize].push(self.wrk[idx as usize]);
                }
                g += 1;
            }
            for a in touched {
                let lits = std::mem::take(&mut per_writer[a as usize]);
                let lit = self.store.or_lit(Name::new("wr", &[a, b]), &lits);
                self.wr[a as usize * n + b as usize] = lit;
            }
        }
    }

    /// Asserts that some included read reads from a different writer than observed. Implied
    /// by unserializability when every prefix of the observed history with its observed reads
    /// is serializable (resp. has an acyclic `pco`), which the caller establishes.
    pub fn some_read_changes(&mut self) {
        let space = self.space;
        let mut parts = Vec::new();
        for (u, unit) in space.units.iter().enumerate() {
            if space.cands(unit.group).len() > 1 {
                let u = u as u32;
                parts.push(F::all(&[self.inc(u), self.sel(u, unit.obs).not()]));
            }
        }
        self.store.assert(F::or(parts));
    }

    /// The boundary value interval `[lo, hi)` of session `s` under an assignment of its `ge`
    /// literals (`value` reads a literal).
    pub fn boundary_interval(&self, s: u32, value: impl Fn(Lit) -> bool) -> (u32, u32) {
        let session = &self.space.sessions[s as usize];
        let lits = &self.ge[s as usize];
        // The chain makes the true literals a prefix.
        let true_count = lits.iter().take_while(|&&l| value(l)).count();
        let lo = if true_count == 0 {
            0
        } else {
            session.thresholds[true_count - 1]
        };
        let hi = if true_count == lits.len() {
            session.max + 1
        } else {
            session.thresholds[true_count]
        };
        (lo, hi)
    }
}

/// Exactly one of `lits`: at least one, and at most one pairwise (≤ 6 literals) or by a
/// sequential counter (more).
fn exactly_one(store: &mut Store, unit: u32, lits: &[Lit]) {
    store.clause(lits);
    if lits.len() <= 6 {
        for i in 0..lits.len() {
            for j in i + 1..lits.len() {
                store.clause(&[lits[i].not(), lits[j].not()]);
            }
        }
        return;
    }
    // s_i ⟺ some of lits[0..=i] holds (one direction suffices): lits[i] ⇒ s_i,
    // s_{i-1} ⇒ s_i, s_{i-1} ⇒ ¬lits[i].
    let mut prev = Lit::FALSE;
    for (i, &l) in lits.iter().enumerate() {
        if i + 1 == lits.len() {
            store.implies(&[prev], l.not());
            break;
        }
        let s = store.bool_var(Name::new("amo", &[unit, i as u32]));
        store.implies(&[l], s);
        if prev != Lit::FALSE {
            store.implies(&[prev], s);
            store.implies(&[prev], l.not());
        }
        prev = s;
    }
}

/// At most one of `lits` (Sinz's sequential counter: `s_i` ⟸ one of the first `i + 1` holds).
fn at_most_one(store: &mut Store, slot: u32, writer: u32, lits: &[Lit]) {
    if lits.len() < 2 {
        return;
    }
    if lits.len() <= 4 {
        for (i, &a) in lits.iter().enumerate() {
            for &b in &lits[i + 1..] {
                store.clause(&[a.not(), b.not()]);
            }
        }
        return;
    }
    let mut previous: Option<Lit> = None;
    for (i, &x) in lits.iter().enumerate() {
        if let Some(p) = previous {
            store.clause(&[x.not(), p.not()]);
        }
        if i + 1 < lits.len() {
            let s = store.bool_var(Name::new("amo", &[slot, writer, i as u32]));
            store.implies(&[x], s);
            if let Some(p) = previous {
                store.implies(&[p], s);
            }
            previous = Some(s);
        }
    }
}
