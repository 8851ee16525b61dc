//! The least partial commit order `pco = (so ∪ wr ∪ ww ∪ rw)+` of a concrete history
//! (IsoPredict PLDI'24 §4.2.2) by saturation with vector clocks, in memory linear in
//! transactions × sessions — the scalable counterpart of [`super::explain::pco_cycle`], which
//! keeps an `n × n` matrix.
//!
//! `pco` is closed under session order on both ends (a transaction that reaches `t` is reached
//! by its session predecessors), so "which transactions of session `s` reach `t`" is a prefix of
//! `s`: one integer per (transaction, session), its vector clock, computed along a topological
//! order. A round derives, for every read of `k` by `t3` from `t2`:
//! - `ww(t1, t2)` for the *last* writer `t1 ∉ {t2, t3}` of `k` in each session that reaches `t3`
//!   (earlier writers of that session reach `t2` through it);
//! - `rw(t3, t1)` for the *first* writer `t1 ∉ {t2, t3}` of `k` in each session that `t2`
//!   reaches (later writers follow by session order);
//!
//! skipping edges the clocks already imply. Rounds repeat until none is new (then `pco` is the
//! transitive closure of the edges, acyclic, and a topological order is returned — smallest
//! transaction id first among ready ones) or the edges are cyclic (a cycle is returned with the
//! reason of each edge). Every edge is justified by edges of earlier rounds, so the result is
//! the least fixpoint the paper's rank measure defines.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use super::explain::{EdgeReason, PcoEdge};
use crate::history::{History, KeyId, OpKind, TxnId, INITIAL_TXN};

/// What saturation found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pco {
    /// A cycle of `pco` edges (so the history is unserializable).
    Cyclic(Vec<PcoEdge>),
    /// `pco` is acyclic; a topological order of the committed transactions, t0 first, and the
    /// edges whose transitive closure `pco` is.
    Acyclic(Vec<TxnId>, Vec<(TxnId, TxnId)>),
    /// The deadline passed, or the clocks would not fit (`transactions × sessions` too big).
    GaveUp,
}

/// Most clock entries (transactions × (sessions + 1)) saturation allocates.
const MAX_CLOCK_WORDS: usize = 400_000_000;

/// Saturates the `pco` of the committed part of `h`. Reads whose writer is not committed are
/// ignored (the level check rejects such histories before prediction).
pub(crate) fn saturate(h: &History, deadline: Option<Instant>) -> Pco {
    let n = h.txn_count();
    let k = h.sessions().len() + 1; // the last column is t0's own
    if n.saturating_mul(k) > MAX_CLOCK_WORDS {
        return Pco::GaveUp;
    }
    let mut sat = Rounds::new(h);
    let mut vc = vec![0u32; n * k];
    let mut added: FxHashSet<(TxnId, TxnId)> = FxHashSet::default();
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) || crate::interrupt::requested() {
            return Pco::GaveUp;
        }
        let (order, indeg) = sat.clocks(&mut vc);
        let total = sat.committed.iter().filter(|&&c| c).count();
        if order.len() < total {
            return Pco::Cyclic(find_cycle(n, &sat.edges, &indeg));
        }
        let new_edges = sat.derive(&vc, &mut added);
        if new_edges.is_empty() {
            return Pco::Acyclic(order, sat.edges.iter().map(|&(a, b, _)| (a, b)).collect());
        }
        sat.edges.extend(new_edges);
    }
}

/// The rounds of saturation: the edges so far and what deriving more needs.
struct Rounds {
    n: usize,
    /// Clock width: one column per session, the last one t0's.
    k: usize,
    committed: Vec<bool>,
    /// Session column and position (0-based among committed) of each transaction.
    col: Vec<u32>,
    pos: Vec<u32>,
    edges: Vec<(TxnId, TxnId, EdgeReason)>,
    /// The read-from triples (key, writer, reader) that can derive a ww or rw edge.
    triples: Vec<(KeyId, TxnId, TxnId)>,
    /// Per key, its committed writers other than t0 as (column, start, end) runs of `writers`.
    runs: Vec<Vec<(u32, u32, u32)>>,
    writers: Vec<TxnId>,
}

impl Rounds {
    /// Round 0: session order and write–read edges, and the triples and writer runs the later
    /// rounds derive from.
    fn new(h: &History) -> Rounds {
        let n = h.txn_count();
        let k = h.sessions().len() + 1;
        let committed: Vec<bool> = h.txns().iter().map(|t| t.is_committed()).collect();
        let mut sat = Rounds {
            n,
            k,
            col: vec![u32::MAX; n],
            pos: vec![0u32; n],
            committed,
            edges: Vec::new(),
            triples: Vec::new(),
            runs: Vec::new(),
            writers: Vec::new(),
        };
        sat.session_order(h);
        let by_key = sat.writers_by_key(h);
        sat.write_read(h, &by_key);
        sat.writer_runs(h, &by_key);
        sat
    }

    /// Session order: each committed transaction after its session's previous one (t0 first).
    fn session_order(&mut self, h: &History) {
        let k = self.k;
        self.col[INITIAL_TXN as usize] = (k - 1) as u32;
        for (s, session) in h.sessions().iter().enumerate() {
            let mut prev = INITIAL_TXN;
            for (p, t) in session
                .txns()
                .filter(|&t| self.committed[t as usize])
                .enumerate()
            {
                self.col[t as usize] = s as u32;
                self.pos[t as usize] = p as u32;
                self.edges.push((prev, t, EdgeReason::So));
                prev = t;
            }
        }
    }

    /// Committed writers of each key other than t0, by (session, position).
    fn writers_by_key(&self, h: &History) -> Vec<Vec<TxnId>> {
        let (col, pos) = (&self.col, &self.pos);
        let mut by_key: Vec<Vec<TxnId>> = vec![Vec::new(); h.key_count()];
        for t in (0..self.n as TxnId).filter(|&t| self.committed[t as usize] && t != INITIAL_TXN) {
            for &key in h.keys_written(t) {
                by_key[key as usize].push(t);
            }
        }
        for list in &mut by_key {
            list.sort_unstable_by_key(|&t| (col[t as usize], pos[t as usize]));
            list.dedup();
        }
        by_key
    }

    /// The write–read edges, one per (writer, reader) pair with the least key as its reason,
    /// and the read-from triples (key, writer, reader) that can derive a ww or rw edge: those
    /// whose key has a committed writer other than t0, the writer and the reader. The other
    /// reads derive nothing in any round (both rules skip t2 and t3, and t0 reaches every
    /// transaction), so a run of millions of reads of keys written once (rows inserted and
    /// never updated) keeps only its distinct (writer, reader) pairs.
    fn write_read(&mut self, h: &History, by_key: &[Vec<TxnId>]) {
        let committed = &self.committed;
        let mut wr: FxHashMap<(TxnId, TxnId), KeyId> = FxHashMap::default();
        let mut triples: Vec<(KeyId, TxnId, TxnId)> = Vec::new();
        for t in (0..self.n as TxnId).filter(|&t| committed[t as usize]) {
            for o in h.txn(t).ops() {
                let op = h.op(o);
                if op.kind != OpKind::Read {
                    continue;
                }
                match h.writer_txn(o) {
                    Some(w) if w != t && committed[w as usize] => {
                        let key = op.key;
                        wr.entry((w, t))
                            .and_modify(|k| *k = (*k).min(key))
                            .or_insert(key);
                        if by_key[key as usize].iter().any(|&x| x != w && x != t) {
                            triples.push((key, w, t));
                        }
                    }
                    _ => {}
                }
            }
        }
        triples.sort_unstable();
        triples.dedup();
        self.triples = triples;
        let mut wr_edges: Vec<(KeyId, TxnId, TxnId)> =
            wr.into_iter().map(|((w, r), key)| (key, w, r)).collect();
        wr_edges.sort_unstable();
        for (key, w, r) in wr_edges {
            self.edges.push((w, r, EdgeReason::Wr { key }));
        }
    }

    /// Per key a list of (column, start, end) runs into `writers`.
    fn writer_runs(&mut self, h: &History, by_key: &[Vec<TxnId>]) {
        let col = &self.col;
        let mut runs: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); h.key_count()];
        let mut writers: Vec<TxnId> = Vec::new();
        for (key, list) in by_key.iter().enumerate() {
            let mut i = 0;
            while i < list.len() {
                let c = col[list[i] as usize];
                let start = writers.len() as u32;
                while i < list.len() && col[list[i] as usize] == c {
                    writers.push(list[i]);
                    i += 1;
                }
                runs[key].push((c, start, writers.len() as u32));
            }
        }
        self.runs = runs;
        self.writers = writers;
    }

    /// A topological order of the current edges (Kahn, smallest id first) and the vector
    /// clocks along it (`vc`, reset first); returns the order and the in-degrees left (some
    /// positive when the edges are cyclic).
    fn clocks(&self, vc: &mut [u32]) -> (Vec<TxnId>, Vec<u32>) {
        let (n, k, edges) = (self.n, self.k, &self.edges);
        let mut indeg = vec![0u32; n];
        let mut out_start = vec![0u32; n + 1];
        for &(a, b, _) in edges {
            indeg[b as usize] += 1;
            out_start[a as usize + 1] += 1;
        }
        for i in 0..n {
            out_start[i + 1] += out_start[i];
        }
        let mut out = vec![0u32; edges.len()];
        let mut fill = out_start.clone();
        for (e, &(a, _, _)) in edges.iter().enumerate() {
            out[fill[a as usize] as usize] = e as u32;
            fill[a as usize] += 1;
        }
        let mut heap: BinaryHeap<Reverse<TxnId>> = (0..n as TxnId)
            .filter(|&t| self.committed[t as usize] && indeg[t as usize] == 0)
            .map(Reverse)
            .collect();
        let mut order: Vec<TxnId> = Vec::with_capacity(n);
        vc.iter_mut().for_each(|x| *x = 0);
        while let Some(Reverse(t)) = heap.pop() {
            order.push(t);
            let tu = t as usize;
            vc[tu * k + self.col[tu] as usize] = self.pos[tu] + 1;
            for &e in &out[out_start[tu] as usize..out_start[tu + 1] as usize] {
                let b = edges[e as usize].1 as usize;
                for c in 0..k {
                    let v = vc[tu * k + c];
                    if vc[b * k + c] < v {
                        vc[b * k + c] = v;
                    }
                }
                indeg[b] -= 1;
                if indeg[b] == 0 {
                    heap.push(Reverse(b as TxnId));
                }
            }
        }
        (order, indeg)
    }

    /// The ww and rw edges one round derives from the clocks `vc`, skipping those the clocks
    /// already imply (`added`: the pairs derived this round).
    fn derive(
        &self,
        vc: &[u32],
        added: &mut FxHashSet<(TxnId, TxnId)>,
    ) -> Vec<(TxnId, TxnId, EdgeReason)> {
        let (k, col, pos) = (self.k, &self.col, &self.pos);
        // `a` reaches `b` (reflexively).
        let reaches = |vc: &[u32], a: TxnId, b: TxnId| {
            a == INITIAL_TXN || vc[b as usize * k + col[a as usize] as usize] > pos[a as usize]
        };
        let mut new_edges: Vec<(TxnId, TxnId, EdgeReason)> = Vec::new();
        added.clear();
        for &(key, t2, t3) in &self.triples {
            for &(c, start, end) in &self.runs[key as usize] {
                let list = &self.writers[start as usize..end as usize];
                // ww: the last writer of the run that reaches t3, other than t2 and t3.
                let reach_t3 = vc[t3 as usize * k + c as usize];
                let mut i = list.partition_point(|&t| pos[t as usize] < reach_t3);
                while i > 0 {
                    let t1 = list[i - 1];
                    if t1 == t2 || t1 == t3 {
                        i -= 1;
                        continue;
                    }
                    if !reaches(vc, t1, t2) && added.insert((t1, t2)) {
                        new_edges.push((t1, t2, EdgeReason::Ww { key, reader: t3 }));
                    }
                    break;
                }
                // rw: the first writer of the run that t2 reaches, other than t2 and t3.
                let mut j = list.partition_point(|&t| !reaches(vc, t2, t));
                while j < list.len() {
                    let t1 = list[j];
                    if t1 == t2 || t1 == t3 {
                        j += 1;
                        continue;
                    }
                    if !reaches(vc, t3, t1) && added.insert((t3, t1)) {
                        new_edges.push((t3, t1, EdgeReason::Rw { key, writer: t2 }));
                    }
                    break;
                }
            }
        }
        new_edges
    }
}

/// A cycle among the transactions Kahn's algorithm could not order (`indeg > 0`): walk
/// backwards along edges between them until a transaction repeats.
fn find_cycle(n: usize, edges: &[(TxnId, TxnId, EdgeReason)], indeg: &[u32]) -> Vec<PcoEdge> {
    // One incoming edge from a stuck transaction, for each stuck transaction.
    let mut incoming: Vec<u32> = vec![u32::MAX; n];
    for (e, &(a, b, _)) in edges.iter().enumerate() {
        if indeg[a as usize] > 0 && indeg[b as usize] > 0 && incoming[b as usize] == u32::MAX {
            incoming[b as usize] = e as u32;
        }
    }
    let start = (0..n).find(|&t| indeg[t] > 0).expect("a stuck transaction");
    let mut seen = vec![u32::MAX; n];
    let mut path: Vec<u32> = Vec::new();
    let mut t = start;
    while seen[t] == u32::MAX {
        seen[t] = path.len() as u32;
        let e = incoming[t];
        path.push(e);
        t = edges[e as usize].0 as usize;
    }
    // path[i] enters the i-th visited transaction; the cycle is from where t was first seen.
    let mut cycle: Vec<PcoEdge> = path[seen[t] as usize..]
        .iter()
        .map(|&e| {
            let (from, to, reason) = edges[e as usize];
            PcoEdge {
                from,
                to,
                reason,
                premise: Vec::new(),
            }
        })
        .collect();
    cycle.reverse();
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Consistency, GenerateParams};
    use crate::ser::{verify_serial_order, SerVerdict};
    use crate::verdict::engines::check_serializable;

    /// The clocks agree with the matrix saturation on cyclicity, every cycle is a real cycle of
    /// edges, and an acyclic order is a linear extension that often is a serial order.
    #[test]
    fn agrees_with_the_matrix_saturation() {
        for seed in 0..60 {
            for consistency in [
                Consistency::Serializable,
                Consistency::Causal,
                Consistency::ReadCommitted,
            ] {
                let h = generate(&GenerateParams {
                    sessions: 3,
                    txns_per_session: 4,
                    ops_per_txn: 3,
                    keys: 3,
                    abort_ratio: 0.1,
                    consistency,
                    seed,
                    ..GenerateParams::default()
                })
                .unwrap();
                let matrix = super::super::explain::pco_cycle(&h);
                match saturate(&h, None) {
                    Pco::Cyclic(cycle) => {
                        assert!(matrix.is_some(), "seed {seed}");
                        for w in cycle.windows(2) {
                            assert_eq!(w[0].to, w[1].from);
                        }
                        assert_eq!(cycle.last().unwrap().to, cycle[0].from);
                    }
                    Pco::Acyclic(order, _) => {
                        assert!(matrix.is_none(), "seed {seed}");
                        assert_eq!(order[0], INITIAL_TXN);
                        if verify_serial_order(&h, &order).is_err() {
                            // Not a serial order: then serializability is for the SMT check.
                            assert!(check_serializable(&h, None).is_ok());
                        }
                    }
                    Pco::GaveUp => panic!("no deadline"),
                }
                if consistency == Consistency::Serializable {
                    assert!(matches!(
                        check_serializable(&h, None).unwrap(),
                        SerVerdict::Serializable { .. }
                    ));
                }
            }
        }
    }
}
