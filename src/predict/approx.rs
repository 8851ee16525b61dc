//! The approximate unserializability encoding (IsoPredict PLDI'24 §4.2.2, appendix B.2.2) with
//! the rank measure in rounds: the partial commit order `pco = (so ∪ wr ∪ ww ∪ rw)+`, which
//! every serial order contains, must be cyclic. Sufficient for unserializability, not
//! necessary.
//!
//! - `ww(t1,t2) := t1, t2 write k ∧ ∃t3 ∉ {t1,t2}. wr_k(t2,t3) ∧ pco(t1,t3)`
//! - `rw(t1,t2) := t1 reads k ∧ t2 writes k ∧ ∃t3 ∉ {t1,t2}. wr_k(t3,t1) ∧ pco(t3,t2)`
//!   (anti-dependency; `rw ⊆ co` by the paper's appendix A)
//!
//! with, under the boundary, the written key inside its writer's boundary (`wrpos_k(t1) <
//! boundary(s1)` for ww, `wrpos_k(t2) < boundary(s2)` for rw).
//!
//! `pco`, `ww` and `rw` are mutually recursive and must be their *least* solution, or the
//! solver could justify edges by themselves (Fig. 6). The paper orders derivations by an
//! integer `rank(a,b)` per pair (kept as [`super::ranked`]). Here the rank of a fact is the
//! round of the fixpoint iteration that derives it, encoded in unary — one copy of the
//! relation per round:
//! - round 0: `E₀ = so ∪ wr`; round `i ≥ 1`: `Eᵢ = Rᵢ₋₁ ∪ wwᵢ ∪ rwᵢ`, where `wwᵢ`, `rwᵢ` take
//!   their `pco` premise from `Rᵢ₋₁` (strictly lower rank, so no edge justifies itself);
//! - `Rᵢ = Eᵢ+`, defined by `Rᵢ(a,c) ⟺ Eᵢ(a,c) ∨ ∨_b Rᵢ(a,b) ∧ Eᵢ(b,c)` (same rank: on an
//!   acyclic edge set this equation has only the true closure as solution, and a cyclic
//!   edge set is already the cycle sought).
//!
//! Every definition is an equivalence, so for a given choice of reads each round is exactly
//! the paper's fixpoint iteration. Soundness: if `Rᵣ` is cyclic, take the first round whose
//! edges are cyclic; all earlier rounds are exact, so its edges are true `pco` edges.
//! Completeness: [`Rounds::cyclic`] asks for a cycle in round `r`; when that is unsat,
//! [`Rounds::grows`] asks whether any choice of reads still has an acyclic round `r` whose
//! round `r+1` adds an edge; when that is unsat too, every choice has reached its least fixpoint
//! acyclic, so no prediction exists. Otherwise one more round is added (at most `n²`; in
//! practice two or three).
//!
//! Variables exist only for pairs in the static closure of possible so/wr/ww/rw edges; pairs
//! in session order are the constant true.
//!
//! Not a computation of a history's `pco` (that is [`super::saturate`]): this states `pco` as
//! constraints on every execution the solver may choose, and [`static_pco`] only
//! over-approximates, with premises ignored, which pairs any choice could relate.

use super::feasibility::Encoding;
use super::formula::{Lit, Name, F};
use super::reach::Reach;

/// Which pairs may ever be related, and by which derived edges.
pub(crate) struct StaticPco {
    pub reach: Reach,
    pub ww_possible: Vec<bool>,
    pub rw_possible: Vec<bool>,
}

/// The static over-approximation: so, every possible wr, ww and rw edge (premises ignored),
/// closed transitively.
pub(crate) fn static_pco(e: &Encoding) -> StaticPco {
    let space = e.space;
    let n = space.nodes();
    let idx = |a: u32, b: u32| a as usize * n + b as usize;
    let mut reach = Reach::new(n);
    let mut ww_possible = vec![false; n * n];
    let mut rw_possible = vec![false; n * n];
    for b in 1..n as u32 {
        reach.add(space.node_pred[b as usize], b);
    }
    for a in 1..n as u32 {
        for b in 1..n as u32 {
            if e.wr(a, b) != Lit::FALSE {
                reach.add(a, b);
            }
        }
    }
    for (slot, groups) in space.key_groups.iter().enumerate() {
        let writers = &space.key_writers[slot];
        for &g in groups {
            let reader = space.groups[g as usize].node;
            for &t2 in space.cands(g) {
                for w in writers {
                    if w.node != t2 && w.node != reader && !space.so(w.node, t2) {
                        ww_possible[idx(w.node, t2)] = true;
                        reach.add(w.node, t2);
                    }
                }
            }
            for w in writers {
                if w.node != reader && !space.so(reader, w.node) {
                    rw_possible[idx(reader, w.node)] = true;
                    reach.add(reader, w.node);
                }
            }
        }
    }
    reach.close();
    StaticPco {
        reach,
        ww_possible,
        rw_possible,
    }
}

/// A derived edge `a → b` of kind ww or rw, justified by `wrk ∧ inside ∧ pco(premise)`.
pub(crate) struct Derivation {
    pub rw: bool,
    pub a: u32,
    pub b: u32,
    pub wrk: Lit,
    pub inside: Lit,
    pub premise: (u32, u32),
}

/// Every possible ww/rw derivation, in a fixed order.
pub(crate) fn derivations(e: &Encoding, st: &StaticPco) -> Vec<Derivation> {
    let space = e.space;
    let n = space.nodes();
    let idx = |a: u32, b: u32| a as usize * n + b as usize;
    let mut out = Vec::new();
    for (slot, groups) in space.key_groups.iter().enumerate() {
        let writers = &space.key_writers[slot];
        for &g in groups {
            let reader = space.groups[g as usize].node;
            for ci in space.groups[g as usize].cands.clone() {
                let t = space.group_cands[ci as usize];
                let wrk = e.wrk[ci as usize];
                for (w, writer) in writers.iter().enumerate() {
                    let other = writer.node;
                    if other == t || other == reader {
                        continue;
                    }
                    let inside = e.incw[slot][w];
                    // ww(other, t): reader reads k from t; other writes k and precedes reader.
                    if st.ww_possible[idx(other, t)] {
                        out.push(Derivation {
                            rw: false,
                            a: other,
                            b: t,
                            wrk,
                            inside,
                            premise: (other, reader),
                        });
                    }
                    // rw(reader, other): reader reads k from t, which precedes other.
                    if st.rw_possible[idx(reader, other)] {
                        out.push(Derivation {
                            rw: true,
                            a: reader,
                            b: other,
                            wrk,
                            inside,
                            premise: (t, other),
                        });
                    }
                }
            }
        }
    }
    out
}

/// The rounds generated so far.
pub(crate) struct Rounds {
    n: usize,
    st: StaticPco,
    derivations: Vec<Derivation>,
    /// Per round: `Rᵢ` (n × n).
    closure: Vec<Vec<Lit>>,
    /// Per round: `Eᵢ` (n × n).
    edges: Vec<Vec<Lit>>,
}

impl Rounds {
    /// Round 0 and round 1.
    pub fn new(e: &mut Encoding) -> Rounds {
        let st = static_pco(e);
        let derivations = derivations(e, &st);
        let n = e.space.nodes();
        let mut edges0 = vec![Lit::FALSE; n * n];
        for a in 0..n as u32 {
            for b in 0..n as u32 {
                if a != b {
                    edges0[a as usize * n + b as usize] = if e.space.so(a, b) {
                        Lit::TRUE
                    } else {
                        e.wr(a, b)
                    };
                }
            }
        }
        let mut rounds = Rounds {
            n,
            st,
            derivations,
            closure: Vec::new(),
            edges: Vec::new(),
        };
        rounds.close(e, edges0);
        rounds.add_round(e);
        rounds
    }

    /// The last round generated.
    pub fn last(&self) -> usize {
        self.closure.len() - 1
    }

    fn possible(&self, a: u32, b: u32) -> bool {
        a != b && self.st.reach.has(a, b)
    }

    /// `R = E+` for the newest edge set.
    fn close(&mut self, e: &mut Encoding, edges: Vec<Lit>) {
        let n = self.n;
        let round = self.closure.len() as u32;
        let idx = |a: u32, b: u32| a as usize * n + b as usize;
        let mut closure = vec![Lit::FALSE; n * n];
        for a in 0..n as u32 {
            for c in 0..n as u32 {
                if e.space.so(a, c) {
                    closure[idx(a, c)] = Lit::TRUE;
                } else if self.possible(a, c) {
                    closure[idx(a, c)] = e.store.bool_var(Name::new("pco", &[round, a, c]));
                }
            }
        }
        for a in 0..n as u32 {
            for c in 0..n as u32 {
                let r = closure[idx(a, c)];
                if r == Lit::TRUE || r == Lit::FALSE {
                    continue;
                }
                let mut reasons = vec![F::Lit(edges[idx(a, c)])];
                for b in 0..n as u32 {
                    if b == a || b == c {
                        continue;
                    }
                    let (first, second) = (closure[idx(a, b)], edges[idx(b, c)]);
                    if first != Lit::FALSE && second != Lit::FALSE {
                        reasons.push(F::all(&[first, second]));
                    }
                }
                define(e, r, reasons);
            }
        }
        self.closure.push(closure);
        self.edges.push(edges);
    }

    /// Generates the next round: `E = R_prev ∪ ww ∪ rw` with premises in `R_prev`, and its
    /// closure.
    pub fn add_round(&mut self, e: &mut Encoding) {
        let n = self.n;
        let round = self.closure.len() as u32;
        let prev = self.closure.last().expect("round 0").clone();
        let mut ww: Vec<Vec<F>> = vec![Vec::new(); n * n];
        let mut rw: Vec<Vec<F>> = vec![Vec::new(); n * n];
        for d in &self.derivations {
            let at = d.a as usize * n + d.b as usize;
            if prev[at] == Lit::TRUE {
                continue; // already related
            }
            let premise = prev[d.premise.0 as usize * n + d.premise.1 as usize];
            if premise == Lit::FALSE {
                continue;
            }
            let term = F::all(&[d.wrk, d.inside, premise]);
            if d.rw {
                rw[at].push(term);
            } else {
                ww[at].push(term);
            }
        }
        let mut edges = prev.clone();
        for a in 0..n as u32 {
            for b in 0..n as u32 {
                let at = a as usize * n + b as usize;
                if ww[at].is_empty() && rw[at].is_empty() {
                    continue;
                }
                let mut reasons = vec![F::Lit(prev[at])];
                for (tag, terms) in [("ww", &mut ww[at]), ("rw", &mut rw[at])] {
                    if !terms.is_empty() {
                        let v = e.store.bool_var(Name::new(tag, &[round, a, b]));
                        define(e, v, std::mem::take(terms));
                        reasons.push(F::Lit(v));
                    }
                }
                let v = e.store.bool_var(Name::new("edge", &[round, a, b]));
                define(e, v, reasons);
                edges[at] = v;
            }
        }
        self.close(e, edges);
    }

    /// A literal that, assumed, asks for a cycle in round `i`.
    pub fn cyclic(&self, e: &mut Encoding, i: usize) -> Lit {
        let n = self.n;
        let r = &self.closure[i];
        let mut cycle = Vec::new();
        for a in 0..n as u32 {
            for b in a + 1..n as u32 {
                let (x, y) = (
                    r[a as usize * n + b as usize],
                    r[b as usize * n + a as usize],
                );
                if x != Lit::FALSE && y != Lit::FALSE {
                    cycle.push(F::all(&[x, y]));
                }
            }
        }
        let g = e.store.bool_var(Name::new("goal_cycle", &[i as u32]));
        let mut clause = vec![F::Lit(g.not())];
        clause.extend(cycle);
        e.store.assert(F::or(clause));
        g
    }

    /// A literal that, assumed, asks for a choice of reads whose round `i` is acyclic and whose
    /// round `i + 1` (which must exist) adds an edge.
    pub fn grows(&self, e: &mut Encoding, i: usize) -> Lit {
        let n = self.n;
        let (r, next) = (&self.closure[i], &self.edges[i + 1]);
        let g = e.store.bool_var(Name::new("goal_grow", &[i as u32]));
        let mut new_edge = vec![F::Lit(g.not())];
        for a in 0..n as u32 {
            for b in 0..n as u32 {
                let at = a as usize * n + b as usize;
                let (x, y) = (r[at], r[b as usize * n + a as usize]);
                if a < b && x != Lit::FALSE && y != Lit::FALSE {
                    e.store.clause(&[g.not(), x.not(), y.not()]);
                }
                if a != b && next[at] != r[at] {
                    new_edge.push(F::all(&[next[at], r[at].not()]));
                }
            }
        }
        e.store.assert(F::or(new_edge));
        g
    }
}

/// `v ⟺ ∨ reasons`.
fn define(e: &mut Encoding, v: Lit, reasons: Vec<F>) {
    for r in &reasons {
        e.store.assert(F::or(vec![negate(r), F::Lit(v)]));
    }
    let mut clause = vec![F::Lit(v.not())];
    clause.extend(reasons);
    e.store.assert(F::or(clause));
}

/// Negation of a literal conjunction or disjunction.
fn negate(f: &F) -> F {
    match f {
        F::Lit(l) => F::Lit(l.not()),
        F::And(ps) => F::or(ps.iter().map(negate).collect()),
        F::Or(ps) => F::and(ps.iter().map(negate).collect()),
        F::Forall { .. } => unreachable!("no quantifier in pco"),
    }
}
