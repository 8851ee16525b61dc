//! The paper's Table 3 counting of a history (IsoPredict PLDI'24 §7.1; its artifact's trace
//! statistics): reads not preceded by a write of the same key in the same transaction (local
//! reads are not counted), writes as distinct (transaction, key) pairs, and committed
//! non-initial transactions with at least one event. Set CONTAINS counts as a read, INSERT and
//! DELETE as writes; initial writes are excluded.

use crate::history::{History, OpKind, INITIAL_TXN};

/// Table 3 counts of one history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Counts {
    /// Counted reads.
    pub reads: usize,
    /// Counted writes.
    pub writes: usize,
    /// Committed transactions with events.
    pub txns: usize,
    /// Of those, transactions without writes.
    pub read_only: usize,
}

/// Counts `history` the way Table 3 does.
pub fn counts(history: &History) -> Counts {
    let mut c = Counts::default();
    for t in history.committed_txns() {
        if t == INITIAL_TXN || history.txn(t).ops().is_empty() {
            continue;
        }
        c.txns += 1;
        let written = history.keys_written(t).len();
        c.writes += written;
        if written == 0 {
            c.read_only += 1;
        }
        c.reads += history
            .txn(t)
            .ops()
            .filter(|&o| history.op(o).kind == OpKind::Read && !history.is_internal_read(o))
            .count();
    }
    c
}
