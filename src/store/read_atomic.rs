//! Incremental validity of read choices under Read Atomic, with the commit order fixed to the
//! execution order.
//!
//! Axiom (Biswas & Enea, OOPSLA'19, §3): for t1 ≠ t2 writing x and t3 reading x from t2,
//! (so ∪ wr)(t1, t3) ⇒ co(t1, t2). With co = execution order, for the running transaction T
//! let D be its direct predecessors: its session predecessors and every transaction it has
//! read from. Reading x from c is valid iff
//! (1) c is at or after every member of D that writes x (the *floor* of x), and
//! (2) c is already in D, or c was not *forbidden*: a transaction is forbidden once T has read
//!     some key y from an earlier writer than it and it writes y (it must never join D).
//!
//! State per transaction: the floor from reads (raised by each new member's writes), and
//! epoch-stamped membership / forbidden marks per committed transaction, so nothing is
//! cleared between transactions. The floor from session predecessors is the session's last
//! version of the key, found by scanning the key's versions backwards.

use rustc_hash::FxHashMap;

use super::data::{KeyId, Seq, StoreData};

/// Read Atomic tracking state of the running transaction.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReadAtomicTracker {
    session: u32,
    epoch: u32,
    member: Vec<u32>,
    forbidden: Vec<u32>,
    read_floor: FxHashMap<KeyId, Seq>,
}

impl ReadAtomicTracker {
    /// Starts a transaction of `session`.
    pub(crate) fn begin(&mut self, data: &StoreData, session: u32) {
        self.session = session;
        self.epoch += 1;
        let n = data.txns.len();
        self.member.resize(n, 0);
        self.forbidden.resize(n, 0);
        self.read_floor.clear();
    }

    fn is_member(&self, data: &StoreData, seq: Seq) -> bool {
        seq == 0
            || data.txns[seq as usize].session == self.session
            || self.member[seq as usize] == self.epoch
    }

    /// The latest writer of `key` among the direct predecessors.
    pub(crate) fn floor(&self, data: &StoreData, key: KeyId) -> Seq {
        let from_session = data
            .versions(key)
            .iter()
            .rev()
            .find(|v| v.seq == 0 || data.txns[v.seq as usize].session == self.session)
            .map_or(0, |v| v.seq);
        from_session.max(self.read_floor.get(&key).copied().unwrap_or(0))
    }

    /// Whether reading a key whose [`ReadAtomicTracker::floor`] is `floor` from `candidate`
    /// keeps the history read atomic.
    pub(crate) fn valid(&self, data: &StoreData, floor: Seq, candidate: Seq) -> bool {
        candidate >= floor
            && (self.is_member(data, candidate) || self.forbidden[candidate as usize] != self.epoch)
    }

    /// Records that the transaction read `key` from `chosen` (a valid choice).
    pub(crate) fn observe(&mut self, data: &StoreData, key: KeyId, chosen: Seq) {
        if !self.is_member(data, chosen) {
            self.member[chosen as usize] = self.epoch;
            for &y in data.txn_writes(chosen) {
                let f = self.read_floor.entry(y).or_insert(0);
                *f = (*f).max(chosen);
            }
        }
        for v in data.versions(key).iter().rev() {
            if v.seq <= chosen {
                break;
            }
            self.forbidden[v.seq as usize] = self.epoch;
        }
    }
}
