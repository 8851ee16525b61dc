//! An execution order for replaying a predicted history: a linear extension of
//! hb ∪ ww_level, the edges the level's axiom forces into every commit order (Biswas & Enea,
//! OOPSLA'19, §3; saturation is exact for RC, RA and causal, so the prediction is valid at the
//! level iff these edges are acyclic, and then any linear extension is a valid commit order).
//!
//! The stores's read policies keep the commit order equal to the execution order, so replaying
//! in such an order lets every predicted read be accepted. Edges, for t1 ≠ t2 both writing x
//! and t3 reading x from t2:
//! - causal: t1 →hb t3 gives t1 → t2;
//! - read atomic: t1 →so t3 or t1 →wr t3 gives t1 → t2;
//! - read committed: t3 read from t1 before the read of x gives t1 → t2;
//! - prefix consistency and snapshot isolation: the causal edges (PC and SI imply causal).
//!   They do not determine a valid commit order (the axioms depend on the order itself), so
//!   the caller passes a witness commit order as the preferred order (e.g. from
//!   [`crate::ser::check_si_pc`]); being a linear extension of these edges, it is returned
//!   unchanged.
//!
//! Kahn's algorithm picks, among ready transactions, the one earliest in the preferred order
//! (or else lowest position in its session, then lowest session). If the edges have a cycle
//! (an invalid prediction), the earliest remaining transaction whose session predecessors are
//! done is taken anyway, so the result is always a linear extension of session order.

use std::collections::BTreeSet;

use crate::check::Level;
use crate::history::{History, OpKind, TxnId, INITIAL_TXN};

/// Dense bit matrix (row per transaction).
struct Bits {
    words: usize,
    data: Vec<u64>,
}

impl Bits {
    fn new(n: usize) -> Bits {
        let words = n.div_ceil(64).max(1);
        Bits {
            words,
            data: vec![0; words * n],
        }
    }
    fn set(&mut self, r: usize, c: usize) {
        self.data[r * self.words + c / 64] |= 1 << (c % 64);
    }
    fn get(&self, r: usize, c: usize) -> bool {
        self.data[r * self.words + c / 64] & (1 << (c % 64)) != 0
    }
    fn or_row(&mut self, dst: usize, src: usize) {
        for w in 0..self.words {
            let v = self.data[src * self.words + w];
            self.data[dst * self.words + w] |= v;
        }
    }
}

/// Committed non-initial transactions of `history` in an order that is a linear extension of
/// hb ∪ ww_level (see the module docs). Whether the history satisfies the level is decided
/// by [`crate::check::check`], not here.
pub fn commit_order(history: &History, level: Level, preferred: Option<&[TxnId]>) -> Vec<TxnId> {
    let n = history.txn_count();
    let committed: Vec<TxnId> = history
        .committed_txns()
        .filter(|&t| t != INITIAL_TXN)
        .collect();
    let mut edges: Vec<(TxnId, TxnId)> = Vec::new();
    // Session order (consecutive committed transactions) and write–read.
    for s in history.sessions() {
        let mut prev = None;
        for t in s.txns() {
            if history.txn(t).is_committed() {
                if let Some(p) = prev {
                    edges.push((p, t));
                }
                prev = Some(t);
            }
        }
    }
    for (w, r, _) in history.wr_edges() {
        if w != INITIAL_TXN && history.txn(w).is_committed() && history.txn(r).is_committed() {
            edges.push((w, r));
        }
    }
    // Happens-before (for causal) or direct predecessors (for read atomic), as bit rows.
    let needs_closure = matches!(
        level,
        Level::Causal | Level::ReadAtomic | Level::Prefix | Level::Snapshot
    );
    let mut before = Bits::new(if needs_closure { n } else { 0 });
    if needs_closure {
        let mut preds: Vec<Vec<TxnId>> = vec![Vec::new(); n];
        for &(a, b) in &edges {
            preds[b as usize].push(a);
        }
        for s in history.sessions() {
            let mut earlier: Vec<TxnId> = Vec::new();
            for t in s.txns() {
                if history.txn(t).is_committed() {
                    if level == Level::ReadAtomic {
                        for &e in &earlier {
                            before.set(t as usize, e as usize);
                        }
                    }
                    earlier.push(t);
                }
            }
        }
        if level == Level::ReadAtomic {
            for &(a, b) in &edges {
                before.set(b as usize, a as usize);
            }
        } else {
            // Transitive closure in a topological order of so ∪ wr (ids may not be one).
            for t in topological(history, &committed, &edges, preferred) {
                for &p in &preds[t as usize] {
                    before.set(t as usize, p as usize);
                    before.or_row(t as usize, p as usize);
                }
            }
        }
    }
    let mut ww: Vec<(TxnId, TxnId)> = Vec::new();
    for &t3 in &committed {
        let mut read_from: Vec<TxnId> = Vec::new();
        for op in history.txn(t3).ops() {
            let o = history.op(op);
            if o.kind != OpKind::Read || history.is_internal_read(op) {
                continue;
            }
            let Some(t2) = history.writer_txn(op) else {
                continue;
            };
            let constrained = |t1: TxnId| -> bool {
                match level {
                    Level::Causal | Level::ReadAtomic | Level::Prefix | Level::Snapshot => {
                        before.get(t3 as usize, t1 as usize)
                    }
                    _ => read_from.contains(&t1),
                }
            };
            for &t1 in history.writers_of(o.key) {
                if t1 != t2
                    && t1 != INITIAL_TXN
                    && t1 != t3
                    && history.txn(t1).is_committed()
                    && constrained(t1)
                {
                    ww.push((t1, t2));
                }
            }
            if !read_from.contains(&t2) {
                read_from.push(t2);
            }
        }
    }
    // An edge into the initial transaction (a read of the initial state by a transaction
    // that must see a later write) is a cycle through t0, an invalid prediction: dropped.
    edges.extend(ww.into_iter().filter(|&(_, b)| b != INITIAL_TXN));
    topological(history, &committed, &edges, preferred)
}

/// Kahn's algorithm with priorities; on a cycle, falls back to session order (module docs).
fn topological(
    history: &History,
    committed: &[TxnId],
    edges: &[(TxnId, TxnId)],
    preferred: Option<&[TxnId]>,
) -> Vec<TxnId> {
    let n = history.txn_count();
    let mut rank = vec![u64::MAX; n];
    if let Some(p) = preferred {
        for (i, &t) in p.iter().enumerate() {
            if (t as usize) < n && rank[t as usize] == u64::MAX {
                rank[t as usize] = i as u64;
            }
        }
    }
    let key = |t: TxnId| -> (u64, u32, u32) {
        let tx = history.txn(t);
        (rank[t as usize], tx.index_in_session, tx.session)
    };
    let mut indegree = vec![0u32; n];
    let mut succ: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    let mut seen = std::collections::HashSet::new();
    for &(a, b) in edges {
        if a != b && seen.insert((a, b)) {
            succ[a as usize].push(b);
            indegree[b as usize] += 1;
        }
    }
    let mut ready: BTreeSet<((u64, u32, u32), TxnId)> = committed
        .iter()
        .filter(|&&t| indegree[t as usize] == 0)
        .map(|&t| (key(t), t))
        .collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(committed.len());
    while order.len() < committed.len() {
        let t = match ready.pop_first() {
            Some((_, t)) => t,
            None => {
                // A cycle: take the earliest remaining transaction whose session predecessors
                // are all done.
                let t = committed
                    .iter()
                    .copied()
                    .filter(|&t| !done[t as usize])
                    .filter(|&t| {
                        history.sessions()[history.txn(t).session as usize]
                            .txns()
                            .take_while(|&u| u != t)
                            .all(|u| done[u as usize] || !history.txn(u).is_committed())
                    })
                    .min_by_key(|&t| key(t))
                    .expect("some transaction is first in its session");
                t
            }
        };
        if done[t as usize] {
            continue;
        }
        done[t as usize] = true;
        order.push(t);
        for &s in &succ[t as usize] {
            indegree[s as usize] = indegree[s as usize].saturating_sub(1);
            if indegree[s as usize] == 0 && !done[s as usize] {
                ready.insert((key(s), s));
            }
        }
    }
    order
}
