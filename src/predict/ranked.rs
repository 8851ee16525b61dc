//! The approximate unserializability encoding with integer ranks, as the paper generates it
//! (IsoPredict PLDI'24 §4.2.2, appendix B.2.2): the partial commit order
//! `pco = (so ∪ wr ∪ ww ∪ rw)+`, which every serial order contains, must be cyclic.
//! Sufficient for unserializability, not necessary.
//!
//! This is the reference form of the encoding; [`super::approx`] encodes the same least
//! fixpoint with the rank measure in rounds, which Z3 refutes far faster (with integer ranks
//! it must rule out every order of ~n² ranks). Both answer the same question.
//!
//! - `ww(t1,t2) := t1, t2 write k ∧ ∃t3 ∉ {t1,t2}. wr_k(t2,t3) ∧ pco(t1,t3)`
//! - `rw(t1,t2) := t1 reads k ∧ t2 writes k ∧ ∃t3 ∉ {t1,t2}. wr_k(t3,t1) ∧ pco(t3,t2)`
//!   (anti-dependency; `rw ⊆ co` by the paper's appendix A)
//!
//! with, under the boundary, the written key inside its writer's boundary (`wrpos_k(t1) <
//! boundary(s1)` for ww, `wrpos_k(t2) < boundary(s2)` for rw).
//!
//! `pco`, `ww` and `rw` are mutually recursive and must be their *least* solution, or the
//! solver could justify edges by themselves (Fig. 6). An integer `rank(a,b)` per pair orders
//! derivations: every derived fact has a strictly larger rank than the facts it rests on, so
//! every true fact has a finite derivation from `so` and `wr`. Because the encoding only needs
//! `pco` to be cyclic — `pco` occurs positively — only the direction "fact ⇒ one of its
//! derivations" is generated; the converse would only add constraints the solver never needs.
//!
//! Variables exist only for pairs in the static closure of possible so/wr/ww/rw edges; pairs
//! in session order are the constant true with rank 0.
//!
//! Like [`super::approx`], not a computation of a history's `pco` (that is
//! [`super::saturate`]): `pco` as constraints on every execution the solver may choose.

use super::approx::{derivations, static_pco};
use super::feasibility::Encoding;
use super::formula::{IntTerm, Lit, Name, F};

/// Encodes "pco is cyclic" with integer ranks.
pub(crate) fn encode(e: &mut Encoding) {
    let space = e.space;
    let n = space.nodes();
    let idx = |a: u32, b: u32| a as usize * n + b as usize;
    let st = static_pco(e);

    // pco and rank per pair.
    let mut pco = vec![Lit::FALSE; n * n];
    let mut rank = vec![IntTerm::Const(0); n * n];
    for a in 0..n as u32 {
        for b in 0..n as u32 {
            if a == b {
                continue;
            }
            if space.so(a, b) {
                pco[idx(a, b)] = Lit::TRUE;
            } else if st.reach.has(a, b) {
                pco[idx(a, b)] = e.store.bool_var(Name::new("pco", &[a, b]));
                rank[idx(a, b)] = e.store.int_var(Name::new("rank", &[a, b]));
            }
        }
    }
    let is_var = |p: Lit| p != Lit::TRUE && p != Lit::FALSE;

    // ww and rw derivations, collected per pair.
    let mut ww_terms: Vec<Vec<F>> = vec![Vec::new(); n * n];
    let mut rw_terms: Vec<Vec<F>> = vec![Vec::new(); n * n];
    for d in derivations(e, &st) {
        let at = idx(d.a, d.b);
        let premise = pco[idx(d.premise.0, d.premise.1)];
        if !is_var(pco[at]) || premise == Lit::FALSE {
            continue;
        }
        let ranked = e.store.lt(rank[idx(d.premise.0, d.premise.1)], rank[at]);
        let term = F::all(&[d.wrk, d.inside, premise, ranked]);
        if d.rw {
            rw_terms[at].push(term);
        } else {
            ww_terms[at].push(term);
        }
    }
    // pco(a,b) ⇒ wr ∨ ww ∨ rw ∨ ∨_m (pco(a,m) ∧ pco(m,b) ∧ ranks below).
    let mut cycle = Vec::new();
    for a in 0..n as u32 {
        for b in 0..n as u32 {
            let p = pco[idx(a, b)];
            if a == b || !is_var(p) {
                continue;
            }
            let mut reasons = vec![F::Lit(p.not()), F::Lit(e.wr(a, b))];
            for (terms, tag) in [(&mut ww_terms, "ww"), (&mut rw_terms, "rw")] {
                let list = std::mem::take(&mut terms[idx(a, b)]);
                if !list.is_empty() {
                    let v = e.store.bool_var(Name::new(tag, &[a, b]));
                    let mut def = vec![F::Lit(v.not())];
                    def.extend(list);
                    e.store.assert(F::or(def));
                    reasons.push(F::Lit(v));
                }
            }
            for m in 0..n as u32 {
                if m == a || m == b {
                    continue;
                }
                let (first, second) = (pco[idx(a, m)], pco[idx(m, b)]);
                if first == Lit::FALSE || second == Lit::FALSE {
                    continue;
                }
                let r1 = e.store.lt(rank[idx(a, m)], rank[idx(a, b)]);
                let r2 = e.store.lt(rank[idx(m, b)], rank[idx(a, b)]);
                reasons.push(F::all(&[first, second, r1, r2]));
            }
            e.store.assert(F::or(reasons));
            if a < b {
                let back = pco[idx(b, a)];
                if back != Lit::FALSE {
                    cycle.push(F::all(&[p, back]));
                }
            } else if pco[idx(b, a)] == Lit::TRUE {
                cycle.push(F::Lit(p));
            }
        }
    }
    e.store.assert(F::or(cycle));
}
