//! Weak isolation of the predicted history (IsoPredict PLDI'24 §4.3 and appendix B.3, after
//! Biswas & Enea OOPSLA'19 Table 1): causal consistency and read committed as in the paper,
//! and read atomic in the same style.
//!
//! Each level asks for a commit order `co` that contains session order, write–read order and
//! the level's arbitration, which is then acyclic (IsoPredict eqs. 3 and 5). The paper uses an
//! integer position per transaction; here `co` is a Boolean strict order on the pairs that can
//! ever be related (transitivity and antisymmetry by clauses), which keeps the approximate
//! encodings purely propositional for Z3's SAT engine; integer positions remain the fallback
//! when the relation would need too many transitivity clauses.
//! - causal: `ww(t1,t2) := t1, t2 write k ∧ ∃t3. wr_k(t2,t3) ∧ hb(t1,t3)`, `hb = (so ∪ wr)+`;
//! - read atomic: the same with `so ∪ wr` in place of `hb`;
//! - read committed: `ww(t1,t2) := t1, t2 write k ∧ ∃ reads β <po α of one transaction,
//!   α reads k from t2 and β reads anything from t1`.
//!
//! With the boundary (appendix B.3) `t1`'s write of `k` must be inside its session's boundary
//! (the paper shows this conjunct for causal; the same holds for read committed and read
//! atomic, where a write outside the boundary is not part of the predicted history either).
//!
//! `hb` and read committed's "some earlier read of the transaction reads from t1" appear only
//! on the left of implications, so they are encoded in one direction (`edge ⇒ hb`, a
//! least-fixpoint over-approximation that the solver is free to keep minimal) and only for
//! pairs in the static closure of possible edges. Read committed's condition is a prefix
//! disjunction per (transaction, writer), linear in the number of read choices instead of
//! quadratic in the reads of a transaction.

use super::feasibility::Encoding;
use super::formula::{IntTerm, Lit, Name};
use super::reach::Reach;
use crate::check::Level;

/// The level's commit order: a Boolean strict order relation on the pairs that constraints can
/// ever relate (transitive and antisymmetric by clauses), or — when that relation would need
/// too many transitivity clauses — one integer position per node. Either way t0 comes first.
pub(crate) enum CommitOrder {
    Relation { n: usize, ord: Vec<Lit> },
    Positions(Vec<IntTerm>),
}

/// Most transitivity clauses the Boolean commit order may take before positions are used.
const MAX_TRANSITIVITY: u64 = 4_000_000;

impl CommitOrder {
    /// `co(a) < co(b)`, folded for t0 (first in every order).
    pub fn lt(&self, e: &mut Encoding, a: u32, b: u32) -> Lit {
        if b == 0 || a == b {
            return Lit::FALSE;
        }
        if a == 0 {
            return Lit::TRUE;
        }
        match self {
            CommitOrder::Relation { n, ord } => ord[a as usize * n + b as usize],
            CommitOrder::Positions(co) => e.store.lt(co[a as usize], co[b as usize]),
        }
    }

    fn new(e: &mut Encoding) -> CommitOrder {
        let space = e.space;
        let n = space.nodes();
        // Pairs constraints can order: so, possible wr, and writer pairs of a key read by a
        // third transaction (every level's arbitration is among these), closed transitively.
        let mut reach = Reach::new(n);
        for b in 1..n as u32 {
            reach.add(space.node_pred[b as usize], b);
            for a in 1..n as u32 {
                if e.wr(a, b) != Lit::FALSE {
                    reach.add(a, b);
                }
            }
        }
        for (slot, groups) in space.key_groups.iter().enumerate() {
            for &g in groups {
                for &t2 in space.cands(g) {
                    for w in &space.key_writers[slot] {
                        if w.node != t2 && w.node != 0 {
                            reach.add(w.node, t2);
                        }
                    }
                }
            }
        }
        reach.close();
        let related = |a: u32, b: u32| a != b && a != 0 && b != 0 && reach.has(a, b);
        let mut triples = 0u64;
        for b in 1..n as u32 {
            let before = (1..n as u32).filter(|&a| related(a, b)).count() as u64;
            let after = (1..n as u32).filter(|&c| related(b, c)).count() as u64;
            triples += before * after;
        }
        if triples > MAX_TRANSITIVITY {
            let mut co = vec![IntTerm::Const(0)];
            for a in 1..n as u32 {
                co.push(e.store.int_var(Name::new("co", &[a])));
            }
            return CommitOrder::Positions(co);
        }
        let mut ord = vec![Lit::FALSE; n * n];
        for a in 1..n as u32 {
            for b in 1..n as u32 {
                if space.so(a, b) {
                    ord[a as usize * n + b as usize] = Lit::TRUE;
                } else if related(a, b) && !space.so(b, a) {
                    ord[a as usize * n + b as usize] = e.store.bool_var(Name::new("co", &[a, b]));
                }
            }
        }
        let var = |l: Lit| l != Lit::TRUE && l != Lit::FALSE;
        for a in 1..n {
            for b in a + 1..n {
                let (x, y) = (ord[a * n + b], ord[b * n + a]);
                if var(x) && var(y) {
                    e.store.clause(&[x.not(), y.not()]);
                }
            }
        }
        for b in 1..n {
            for a in 1..n {
                let ab = ord[a * n + b];
                if ab == Lit::FALSE || a == b {
                    continue;
                }
                for c in 1..n {
                    let bc = ord[b * n + c];
                    if bc == Lit::FALSE || c == a || c == b || (ab == Lit::TRUE && bc == Lit::TRUE)
                    {
                        continue;
                    }
                    e.store.implies(&[ab, bc], ord[a * n + c]);
                }
            }
        }
        CommitOrder::Relation { n, ord }
    }
}

/// Encodes that the predicted history satisfies `level` (causal, read atomic or read
/// committed).
pub(crate) fn encode(e: &mut Encoding, level: Level) -> CommitOrder {
    let space = e.space;
    let n = space.nodes();
    let order = CommitOrder::new(e);
    // Session order (immediate predecessors suffice) and write–read order.
    for b in 1..n as u32 {
        let lt = order.lt(e, space.node_pred[b as usize], b);
        e.store.clause(&[lt]);
    }
    for a in 1..n as u32 {
        for b in 1..n as u32 {
            let wr = e.wr(a, b);
            if wr != Lit::FALSE {
                let lt = order.lt(e, a, b);
                e.store.implies(&[wr], lt);
            }
        }
    }
    match level {
        Level::Causal => {
            let hb = happens_before(e);
            arbitration(e, &order, |_, t1, t3| hb[t1 as usize * n + t3 as usize]);
        }
        Level::ReadAtomic => arbitration(e, &order, |e, t1, t3| {
            if e.space.so(t1, t3) {
                Lit::TRUE
            } else {
                e.wr(t1, t3)
            }
        }),
        Level::ReadCommitted => read_committed(e, &order),
        other => panic!("no weak-isolation encoding for {other}"),
    }
    order
}

/// `hb(a, c)` for all node pairs: `TRUE` for session order, a variable where possible edges
/// can relate the pair, else `FALSE`; with `wr(a,c) ⇒ hb(a,c)`, `hb(a,pred(c)) ⇒ hb(a,c)` and
/// `hb(a,b) ∧ wr(b,c) ⇒ hb(a,c)`, which derive every path of `so ∪ wr`.
fn happens_before(e: &mut Encoding) -> Vec<Lit> {
    let space = e.space;
    let n = space.nodes();
    let mut reach = Reach::new(n);
    for b in 1..n as u32 {
        reach.add(space.node_pred[b as usize], b);
        for a in 1..n as u32 {
            if e.wr(a, b) != Lit::FALSE {
                reach.add(a, b);
            }
        }
    }
    reach.close();
    let mut hb = vec![Lit::FALSE; n * n];
    for a in 0..n as u32 {
        for c in 0..n as u32 {
            if a == c {
                continue;
            }
            hb[a as usize * n + c as usize] = if space.so(a, c) {
                Lit::TRUE
            } else if reach.has(a, c) {
                e.store.bool_var(Name::new("hb", &[a, c]))
            } else {
                Lit::FALSE
            };
        }
    }
    // Readers of each node, for the wr-extension rule.
    let mut wr_in: Vec<Vec<(u32, Lit)>> = vec![Vec::new(); n];
    for b in 1..n as u32 {
        for c in 1..n as u32 {
            let wr = e.wr(b, c);
            if wr != Lit::FALSE {
                wr_in[c as usize].push((b, wr));
            }
        }
    }
    for a in 0..n as u32 {
        for c in 1..n as u32 {
            let target = hb[a as usize * n + c as usize];
            if target == Lit::TRUE || target == Lit::FALSE {
                continue;
            }
            let wr = e.wr(a, c);
            if wr != Lit::FALSE {
                e.store.implies(&[wr], target);
            }
            let p = space.node_pred[c as usize];
            if p != a && p != 0 {
                let before = hb[a as usize * n + p as usize];
                if before != Lit::FALSE {
                    e.store.implies(&[before], target);
                }
            }
            for &(b, wr) in &wr_in[c as usize] {
                if b == a {
                    continue;
                }
                let before = hb[a as usize * n + b as usize];
                if before != Lit::FALSE {
                    e.store.implies(&[before, wr], target);
                }
            }
        }
    }
    hb
}

/// Causal and read atomic arbitration: for every read of `k` by `t3` from `t2` and every other
/// writer `t1` of `k` with `visible(t1, t3)`, `t1`'s write inside the boundary forces
/// `co(t1) < co(t2)`.
fn arbitration(
    e: &mut Encoding,
    order: &CommitOrder,
    visible: impl Fn(&Encoding, u32, u32) -> Lit,
) {
    let space = e.space;
    for a in space.arbitrations() {
        if a.t1 == 0 {
            continue;
        }
        let vis = visible(e, a.t1, a.t3);
        if vis == Lit::FALSE {
            continue;
        }
        let (wrk, inside) = (e.wrk[a.cand as usize], e.incw[a.slot][a.w]);
        let lt = order.lt(e, a.t1, a.t2);
        e.store.implies(&[wrk, inside, vis], lt);
    }
}

/// Read committed arbitration, per transaction in program order: `seen[t1]` holds when an
/// earlier read of the transaction reads from `t1`.
fn read_committed(e: &mut Encoding, order: &CommitOrder) {
    let space = e.space;
    let n = space.nodes();
    let mut seen = vec![Lit::FALSE; n];
    for t3 in 1..n as u32 {
        let units = space.node_units[t3 as usize].clone();
        let mut touched: Vec<u32> = Vec::new();
        for u in units {
            let unit = &space.units[u as usize];
            let g = unit.group;
            let slot = space.key_slot(space.groups[g as usize].key) as usize;
            let inc = e.inc(u);
            let cands = space.cands(g);
            // α = u reads k from t2; some earlier β read from t1, another writer of k.
            for (i, &t2) in cands.iter().enumerate() {
                let sel = e.sel(u, i as u32);
                for (w, writer) in space.key_writers[slot].iter().enumerate() {
                    let t1 = writer.node;
                    if t1 == t2 || t1 == t3 || t1 == 0 {
                        continue;
                    }
                    let before = seen[t1 as usize];
                    if before == Lit::FALSE {
                        continue;
                    }
                    let inside = e.incw[slot][w];
                    let lt = order.lt(e, t1, t2);
                    e.store.implies(&[before, inc, sel, inside], lt);
                }
            }
            // Then u itself becomes an earlier read.
            for (i, &t1) in cands.iter().enumerate() {
                if t1 == 0 {
                    continue;
                }
                let sel = e.sel(u, i as u32);
                let prev = seen[t1 as usize];
                seen[t1 as usize] = if prev == Lit::FALSE {
                    touched.push(t1);
                    sel
                } else if prev == Lit::TRUE || sel == Lit::TRUE {
                    Lit::TRUE
                } else {
                    let v = e.store.bool_var(Name::new("seen", &[u, t1]));
                    e.store.implies(&[prev], v);
                    e.store.implies(&[sel], v);
                    v
                };
            }
        }
        for t1 in touched {
            seen[t1 as usize] = Lit::FALSE;
        }
    }
}
