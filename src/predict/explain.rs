//! Why a history is unserializable: the least `pco = (so ∪ wr ∪ ww ∪ rw)+` of a concrete
//! history (IsoPredict PLDI'24 §4.2.2, computed here by saturation instead of by the solver)
//! and a shortest cycle of its edges, each with its reason.
//!
//! Every edge of `pco` is in every serial order (ww by the serializability axiom, rw by the
//! paper's appendix A), so a cycle proves that no serial order exists. Saturation: start from
//! session order and write–read order; repeatedly add `ww(t1,t2)` when some `t3` reads `k`
//! from `t2`, `t1 ∉ {t2,t3}` writes `k` and `t1` reaches `t3`, and `rw(t3,t1)` when `t3` reads
//! `k` from `t2`, `t1 ∉ {t2,t3}` writes `k` and `t2` reaches `t1`; until nothing changes.
//! The edges found first keep their reason, so so and wr are preferred over derived edges.

use std::collections::VecDeque;

use super::reach::Reach;
use crate::history::{History, KeyId, OpKind, TxnId, INITIAL_TXN};

/// Why an edge is in `pco`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeReason {
    /// Session order.
    So,
    /// `to` reads `key` from `from`.
    Wr {
        /// The key read.
        key: KeyId,
    },
    /// Arbitration: `reader` reads `key` from `to`, and `from`, which also writes `key`,
    /// precedes `reader`.
    Ww {
        /// The key both write.
        key: KeyId,
        /// The transaction that reads `to`'s write.
        reader: TxnId,
    },
    /// Anti-dependency: `from` reads `key` from `writer`, which precedes `to`, which also
    /// writes `key`.
    Rw {
        /// The key.
        key: KeyId,
        /// The transaction `from` reads `key` from.
        writer: TxnId,
    },
}

/// One edge of a `pco` cycle (transaction ids of the explained history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcoEdge {
    /// Source.
    pub from: TxnId,
    /// Target.
    pub to: TxnId,
    /// Why.
    pub reason: EdgeReason,
}

/// A shortest cycle of the least `pco` of the committed part of `h`, or `None` if `pco` is
/// acyclic (then `h` may still be unserializable: `pco` is a sufficient condition only).
pub fn pco_cycle(h: &History) -> Option<Vec<PcoEdge>> {
    let n = h.txn_count();
    let mut reason: Vec<Option<EdgeReason>> = vec![None; n * n];
    let add = |reason: &mut Vec<Option<EdgeReason>>, a: TxnId, b: TxnId, r: EdgeReason| {
        let slot = &mut reason[a as usize * n + b as usize];
        if slot.is_none() && a != b {
            *slot = Some(r);
            true
        } else {
            false
        }
    };
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let p = h.so_predecessor(t).unwrap_or(INITIAL_TXN);
        add(&mut reason, p, t, EdgeReason::So);
    }
    // Read-from triples (key, writer, reader) of committed transactions.
    let mut triples: Vec<(KeyId, TxnId, TxnId)> = Vec::new();
    for t in h.committed_txns() {
        for o in h.txn(t).ops() {
            let op = h.op(o);
            if op.kind != OpKind::Read {
                continue;
            }
            if let Some(w) = h.writer_txn(o) {
                if w != t && h.txn(w).is_committed() {
                    triples.push((op.key, w, t));
                }
            }
        }
    }
    triples.sort_unstable();
    triples.dedup();
    for &(k, w, r) in &triples {
        add(&mut reason, w, r, EdgeReason::Wr { key: k });
    }
    let writers: Vec<Vec<TxnId>> = (0..h.key_count() as KeyId)
        .map(|k| {
            h.writers_of(k)
                .iter()
                .copied()
                .filter(|&w| h.txn(w).is_committed())
                .collect()
        })
        .collect();

    let mut closure;
    loop {
        closure = Reach::new(n);
        for (a, b) in edges_of(&reason, n) {
            closure.add(a, b);
        }
        closure.close();
        let mut changed = false;
        for &(k, t2, t3) in &triples {
            for &t1 in &writers[k as usize] {
                if t1 == t2 || t1 == t3 {
                    continue;
                }
                if closure.has(t1, t3) {
                    changed |= add(&mut reason, t1, t2, EdgeReason::Ww { key: k, reader: t3 });
                }
                if closure.has(t2, t1) {
                    changed |= add(&mut reason, t3, t1, EdgeReason::Rw { key: k, writer: t2 });
                }
            }
        }
        if !changed {
            break;
        }
    }
    if !(0..n as u32).any(|a| closure.has(a, a)) {
        return None;
    }
    // Prefer a cycle that avoids t0: its edges then explain themselves without the implicit
    // initial writes.
    shortest_cycle(&reason, n, true).or_else(|| shortest_cycle(&reason, n, false))
}

fn edges_of(reason: &[Option<EdgeReason>], n: usize) -> impl Iterator<Item = (TxnId, TxnId)> + '_ {
    reason
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_some())
        .map(move |(i, _)| ((i / n) as TxnId, (i % n) as TxnId))
}

/// A shortest cycle by breadth-first search from every node (`avoid_initial`: not through t0).
fn shortest_cycle(
    reason: &[Option<EdgeReason>],
    n: usize,
    avoid_initial: bool,
) -> Option<Vec<PcoEdge>> {
    let mut succ: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    for (a, b) in edges_of(reason, n) {
        if !(avoid_initial && (a == INITIAL_TXN || b == INITIAL_TXN)) {
            succ[a as usize].push(b);
        }
    }
    let mut best: Option<Vec<TxnId>> = None;
    let mut parent = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    for start in 0..n as TxnId {
        parent.iter_mut().for_each(|p| *p = u32::MAX);
        queue.clear();
        queue.push_back(start);
        let mut closing = None;
        'bfs: while let Some(a) = queue.pop_front() {
            for &b in &succ[a as usize] {
                if b == start {
                    closing = Some(a);
                    break 'bfs;
                }
                if parent[b as usize] == u32::MAX {
                    parent[b as usize] = a;
                    queue.push_back(b);
                }
            }
        }
        if let Some(last) = closing {
            let mut path = vec![last];
            let mut x = last;
            while x != start {
                x = parent[x as usize];
                path.push(x);
            }
            path.reverse(); // start … last
            if best.as_ref().map_or(true, |b| path.len() < b.len()) {
                best = Some(path);
            }
        }
    }
    let path = best?;
    Some(
        (0..path.len())
            .map(|i| {
                let (a, b) = (path[i], path[(i + 1) % path.len()]);
                PcoEdge {
                    from: a,
                    to: b,
                    reason: reason[a as usize * n + b as usize].expect("an edge"),
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

    #[test]
    fn lost_update_cycle_goes_through_rw() {
        let mut b = HistoryBuilder::new("lost update");
        let acct = b.key("acct");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.read(t1, acct, None, ReadFrom::Initial, 0);
        b.write(t1, acct, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, acct, None, ReadFrom::Initial, 0);
        b.write(t2, acct, None, 0);
        let h = b.build().unwrap();
        let cycle = pco_cycle(&h).expect("a cycle");
        assert_eq!(cycle.len(), 2);
        for e in &cycle {
            assert!(matches!(e.reason, EdgeReason::Rw { writer: 0, .. }));
        }
    }

    #[test]
    fn serial_history_has_no_cycle() {
        let mut b = HistoryBuilder::new("serial");
        let acct = b.key("acct");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.read(t1, acct, None, ReadFrom::Initial, 0);
        b.write(t1, acct, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, acct, None, ReadFrom::Txn(t1), 0);
        b.write(t2, acct, None, 0);
        let h = b.build().unwrap();
        assert_eq!(pco_cycle(&h), None);
    }

    #[test]
    fn write_skew_cycle_with_ww() {
        // t1: w(x) w(y); t2: r(x) from t1, w(x); t3 (session 3): r(x) from t1 ... a ww cycle:
        // t2 reads y from t0 while t1 writes y → rw(t2, t1); t2 reads x from t1 → wr(t1, t2).
        let mut b = HistoryBuilder::new("rw+wr");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.write(t1, x, None, 0);
        b.write(t1, y, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Txn(t1), 0);
        b.read(t2, y, None, ReadFrom::Initial, 0);
        let h = b.build().unwrap();
        let cycle = pco_cycle(&h).expect("fractured read is a cycle");
        assert_eq!(cycle.len(), 2);
        assert!(cycle
            .iter()
            .any(|e| matches!(e.reason, EdgeReason::Wr { key } if key == x)));
        assert!(cycle
            .iter()
            .any(|e| matches!(e.reason, EdgeReason::Rw { key, writer: 0 } if key == y)));
    }
}
