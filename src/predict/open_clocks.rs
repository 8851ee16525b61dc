//! The transactions forced before each transaction in every prediction: `open(t)`, per session
//! the prefix of it that happens before `t` in every prediction that includes `t` (IsoPredict
//! PLDI'24 §4.1: a transaction before the boundary reads what it read in the run), as vector
//! clocks in a topological order of `so ∪ wr`. The writers-ordered certificate
//! ([`super::certificate::writers_ordered`], which proves it), the dangerous-structure filter
//! ([`super::dangerous`]) and the pruning of the prediction space ([`super::space`]) read them.

use crate::history::{History, OpKind, TxnId, INITIAL_TXN};

/// Most `transactions × sessions` entries of the clocks [`open_clocks`] keeps (beyond, it
/// does not try: 64 M entries, 256 MB).
const CLOCK_BUDGET: usize = 64 << 20;

/// Per committed transaction `t` (row `t` of a `transactions × sessions` matrix): per session,
/// how many of its first transactions happen before `t` in every prediction that includes `t`
/// (`open(t)` of [`super::certificate::writers_ordered`], which proves it). `None` when `so ∪ wr` is cyclic (no valid history).
pub(crate) fn open_clocks(h: &History) -> Option<Vec<u32>> {
    let n = h.txn_count();
    let k = h.sessions().len();
    if n.saturating_mul(k) > CLOCK_BUDGET {
        return None;
    }
    let mut open = vec![0u32; n * k];
    // `fixed(t)`: `open(t)`, `t` itself, and for each read of `t` the writer and its `open`.
    let mut fixed = vec![0u32; k];
    // Kahn's algorithm over so ∪ wr among committed transactions.
    let mut indegree = vec![0u32; n];
    let mut succ: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    let committed = |t: TxnId| t != INITIAL_TXN && h.txn(t).is_committed();
    // Per transaction: the next committed transaction of its session.
    let mut next_in_session: Vec<Option<TxnId>> = vec![None; n];
    for session in h.sessions() {
        let mut last: Option<TxnId> = None;
        for t in session.txns().filter(|&t| committed(t)) {
            if let Some(p) = last {
                succ[p as usize].push(t);
                indegree[t as usize] += 1;
                next_in_session[p as usize] = Some(t);
            }
            last = Some(t);
        }
    }
    for t in (0..n as TxnId).filter(|&t| committed(t)) {
        for o in h.txn(t).ops() {
            if h.op(o).kind != OpKind::Read {
                continue;
            }
            if let Some(w) = h.writer_txn(o).filter(|&w| w != t && committed(w)) {
                succ[w as usize].push(t);
                indegree[t as usize] += 1;
            }
        }
    }
    let mut ready: Vec<TxnId> = (0..n as TxnId)
        .filter(|&t| committed(t) && indegree[t as usize] == 0)
        .collect();
    let mut done = 0usize;
    let total = (0..n as TxnId).filter(|&t| committed(t)).count();
    while let Some(t) = ready.pop() {
        done += 1;
        let txn = h.txn(t);
        let s = txn.session as usize;
        // open(t) was written when its session predecessor was processed (zero if first).
        let row = t as usize * k;
        fixed.copy_from_slice(&open[row..row + k]);
        fixed[s] = fixed[s].max(txn.index_in_session + 1);
        for o in txn.ops() {
            if h.op(o).kind != OpKind::Read {
                continue;
            }
            if let Some(w) = h.writer_txn(o).filter(|&w| w != t && committed(w)) {
                let wt = h.txn(w);
                let wrow = w as usize * k;
                for x in 0..k {
                    fixed[x] = fixed[x].max(open[wrow + x]);
                }
                let ws = wt.session as usize;
                fixed[ws] = fixed[ws].max(wt.index_in_session + 1);
            }
        }
        // The next committed transaction of the session gets `fixed` as its `open`.
        if let Some(x) = next_in_session[t as usize] {
            open[x as usize * k..x as usize * k + k].copy_from_slice(&fixed);
        }
        for &u in &succ[t as usize] {
            indegree[u as usize] -= 1;
            if indegree[u as usize] == 0 {
                ready.push(u);
            }
        }
    }
    (done == total).then_some(open)
}
