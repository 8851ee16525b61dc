//! The exact unserializability encoding (IsoPredict PLDI'24 §4.2.1, appendix B.2.1):
//! `∀co. ¬IsSerializable(co)` — no commit order explains the predicted history.
//!
//! `co` is a vector of integer positions bound by the quantifier (t0 fixed at 0). The body is
//! the disjunction of the ways a position vector can fail to be a serial order:
//! - session order violated: `co(pred(b)) ≥ co(b)`;
//! - write–read order violated: `wr(a,b) ∧ co(a) ≥ co(b)`;
//! - arbitration violated (appendix B.2.1, with the boundary conjunct on t1's write):
//!   `wr_k(t2,t3) ∧ t1 writes k inside the boundary ∧ co(t1) ≤ co(t3) ∧ co(t1) ≥ co(t2)`.
//!
//! The paper's `IsSerializable` also requires `Distinct(co)`; here the arbitration antecedent
//! is `≤` instead, which makes the two equivalent (see [`crate::ser::smt`]: a position vector
//! with ties satisfying these constraints stays a serial order whatever way its ties are
//! broken), and every atom is a difference constraint.
//!
//! Two ways to solve it: [`encode`] hands the quantified formula to Z3 (model-based quantifier
//! instantiation); [`instance`] adds ground instances one at a time, each the serial order of a
//! candidate the exact serializability check found serializable — the same formula, expanded
//! lazily, with the candidates found by Z3's SAT engine (the default: on TPC-C it answers in
//! seconds where the quantifier times out).

use super::extract::Built;
use super::feasibility::Encoding;
use super::formula::{IntTerm, Lit, Name, F};
use super::space::{Space, NONE};
use crate::history::TxnId;

/// Encodes `∀co. ¬IsSerializable(co)`.
pub(crate) fn encode(e: &mut Encoding) {
    let space = e.space;
    let n = space.nodes();
    let first = e.store.next_int_id();
    let mut q = vec![IntTerm::Const(0)];
    for a in 1..n as u32 {
        q.push(e.store.int_var(Name::new("q", &[a])));
    }
    let vars = first..e.store.next_int_id();
    let mut violations = Vec::new();
    for b in 1..n as u32 {
        let p = space.node_pred[b as usize];
        violations.push(F::Lit(e.store.le(q[b as usize], q[p as usize])));
    }
    for a in 1..n as u32 {
        for b in 1..n as u32 {
            let wr = e.wr(a, b);
            if wr != Lit::FALSE {
                let back = e.store.le(q[b as usize], q[a as usize]);
                violations.push(F::all(&[wr, back]));
            }
        }
    }
    for a in space.arbitrations() {
        let (t1, t2, t3) = (a.t1, a.t2, a.t3);
        if t1 == 0 {
            continue; // t0 precedes t2 ≠ t0 in every order that keeps session order
        }
        if space.so(t1, t2) || space.so(t3, t1) {
            continue; // implied by a session-order violation
        }
        let (wrk, inside) = (e.wrk[a.cand as usize], e.incw[a.slot][a.w]);
        let before_reader = e.store.le(q[t1 as usize], q[t3 as usize]);
        let not_before_writer = e.store.le(q[t2 as usize], q[t1 as usize]);
        violations.push(F::all(&[wrk, inside, before_reader, not_before_writer]));
    }
    e.store.assert(F::Forall {
        vars,
        body: Box::new(F::or(violations)),
    });
}

/// One ground instance of the quantified formula, `¬IsSerializable(position)` for a fixed
/// assignment of positions to nodes: the disjunction of the facts that would make `position`
/// fail as a serial order — a write–read pair against it, or an arbitration it breaks (a
/// writer of the key strictly between a writer and its reader). Session order must hold in
/// `position` (so it cannot be what fails).
///
/// Solving `∀co. ¬IsSerializable(co)` by instantiation: whenever a candidate prediction is
/// serializable, its serial order (extended to every node) becomes an instance, which rules out
/// every candidate that order also explains. The quantifier is expanded lazily, as model-based
/// quantifier instantiation would, but the candidates are found by the SAT engine and the
/// orders by the exact serializability check.
pub(crate) fn instance(e: &mut Encoding, position: &[u32]) {
    let space = e.space;
    let n = space.nodes();
    debug_assert!((1..n).all(|b| position[space.node_pred[b] as usize] < position[b]));
    let mut violations = Vec::new();
    for a in 1..n as u32 {
        for b in 1..n as u32 {
            let wr = e.wr(a, b);
            if wr != Lit::FALSE && position[b as usize] < position[a as usize] {
                violations.push(wr);
            }
        }
    }
    for a in space.arbitrations() {
        let (p1, p2, p3) = (
            position[a.t1 as usize],
            position[a.t2 as usize],
            position[a.t3 as usize],
        );
        if p2 < p1 && p1 < p3 {
            violations.push(e.overwritten(a.cand, a.slot, a.w));
        }
    }
    e.store.clause(&violations);
}

/// [`instance`] without the `n × n` relation `wr(a, b)` (for [`Encoding::sparse`]): the same
/// disjunction over the per-key facts — a write–read pair `wr_k(t2, t3)` against `position`, or
/// `wr_k(t2, t3)` with some writer of `k` inside its boundary strictly between `t2` and `t3`.
/// Per session only the first writer after `t2` matters (a later one is included only if it
/// is), so each read choice contributes one literal or one conjunction.
pub(crate) fn instance_sparse(e: &mut Encoding, position: &[u32]) {
    let space = e.space;
    let mut violations = Vec::new();
    for (slot, groups) in space.key_groups.iter().enumerate() {
        // The key's writers (t0 excluded) as runs of one session, ascending node = session
        // order, hence ascending position.
        let writers = &space.key_writers[slot];
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut i = 1; // writers[0] is t0
        while i < writers.len() {
            let s = space.node_session[writers[i].node as usize];
            let start = i;
            while i < writers.len() && space.node_session[writers[i].node as usize] == s {
                i += 1;
            }
            runs.push((start, i));
        }
        for &g in groups {
            let t3 = space.groups[g as usize].node;
            let p3 = position[t3 as usize];
            for ci in space.groups[g as usize].cands.clone() {
                let wrk = e.wrk[ci as usize];
                if wrk == Lit::FALSE {
                    continue;
                }
                let t2 = space.group_cands[ci as usize];
                let p2 = position[t2 as usize];
                if p3 < p2 {
                    violations.push(wrk);
                    continue;
                }
                for &(start, end) in &runs {
                    let run = &writers[start..end];
                    let j = run.partition_point(|w| position[w.node as usize] <= p2);
                    if j < run.len() && position[run[j].node as usize] < p3 {
                        violations.push(e.overwritten(ci, slot, start + j));
                    }
                }
            }
        }
    }
    e.store.clause(&violations);
}

/// Positions of every node for an exact instance: the candidate's serial order (predicted
/// transaction ids) mapped to nodes, then the nodes the candidate excludes, in session order.
pub(crate) fn node_positions(space: &Space, built: &Built, order: &[TxnId]) -> Vec<u32> {
    let n = space.nodes();
    let mut node_of_txn = vec![NONE; space.history.txn_count()];
    for (node, &t) in space.node_txn.iter().enumerate() {
        node_of_txn[t as usize] = node as u32;
    }
    let mut position = vec![u32::MAX; n];
    let mut next = 0u32;
    for &t in order {
        let node = node_of_txn[built.origin[t as usize] as usize];
        if node != NONE {
            position[node as usize] = next;
            next += 1;
        }
    }
    for p in position.iter_mut().filter(|p| **p == u32::MAX) {
        *p = next;
        next += 1;
    }
    position
}
