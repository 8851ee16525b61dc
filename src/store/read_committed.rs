//! Incremental validity of read choices under Read Committed, with the commit order fixed to
//! the execution order.
//!
//! Axiom (Biswas & Enea, OOPSLA'19, §3): for t1 ≠ t2 writing x, a read α of x from t2 and an
//! earlier read β (po(β, α)) of the same transaction from t1 imply co(t1, t2). With co =
//! execution order, reading x from c is valid iff c is at or after every transaction that the
//! running transaction has already read from and that writes x (the *floor* of x). The floor
//! rises by the write set of each transaction the first time it is read from; epoch stamps mark
//! those transactions, so nothing is cleared between transactions.

use rustc_hash::FxHashMap;

use super::data::{KeyId, Seq, StoreData};

/// Read Committed tracking state of the running transaction.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReadCommittedTracker {
    epoch: u32,
    seen: Vec<u32>,
    floor: FxHashMap<KeyId, Seq>,
}

impl ReadCommittedTracker {
    /// Starts a transaction.
    pub(crate) fn begin(&mut self, data: &StoreData) {
        self.epoch += 1;
        self.seen.resize(data.txns.len(), 0);
        self.floor.clear();
    }

    /// The latest writer of `key` among the transactions read from so far.
    pub(crate) fn floor(&self, key: KeyId) -> Seq {
        self.floor.get(&key).copied().unwrap_or(0)
    }

    /// Whether reading a key with [`ReadCommittedTracker::floor`] `floor` from `candidate`
    /// keeps the history read committed.
    pub(crate) fn valid(&self, floor: Seq, candidate: Seq) -> bool {
        candidate >= floor
    }

    /// Records that the transaction read from `chosen`.
    pub(crate) fn observe(&mut self, data: &StoreData, chosen: Seq) {
        if chosen == 0 || self.seen[chosen as usize] == self.epoch {
            return;
        }
        self.seen[chosen as usize] = self.epoch;
        for &y in data.txn_writes(chosen) {
            let f = self.floor.entry(y).or_insert(0);
            *f = (*f).max(chosen);
        }
    }
}
