//! Incremental validity of read choices under prefix consistency (PC) and snapshot isolation
//! (SI), with the commit order fixed to the execution order.
//!
//! Axioms (Biswas & Enea, OOPSLA'19, §2.2, Table 1): PC = Prefix, SI = Prefix ∧ Conflict. With
//! a total commit order they say that each transaction T reads every key from the last writer
//! of its *snapshot*, a prefix of the commit order that contains T's session predecessor and
//! every transaction T reads from; SI adds that a transaction committed before T that writes
//! a key T writes is inside T's snapshot (first committer wins).
//!
//! Transactions run one at a time and commit in execution order, so a snapshot is a *point*
//! `p` of the execution order (every transaction with sequence number ≤ `p`), and T is
//! *concurrent* with exactly the transactions committed after its snapshot point and before
//! T itself. The point is chosen lazily, as an interval `[lo, hi]` of points still possible:
//! - at begin, `lo` is T's session predecessor (sessions see their own commits) and `hi` the
//!   latest commit (a snapshot taken now);
//! - reading `x` from `c` is valid iff `c` is the last writer of `x` at some point of the
//!   interval: `floor ≤ c ≤ hi`, where the *floor* is the last writer of `x` at or before `lo`;
//!   afterwards `lo ⊔= c` and `hi ⊓= (the next writer of x after c) − 1`;
//! - SI, writing `y`: the snapshot must contain `y`'s last writer, or T conflicts with a
//!   concurrent committed write; so `lo ⊔= last writer of y` when that is at most `hi`, and
//!   otherwise T is doomed: at commit it aborts ([`SnapshotTracker::doomed`]).
//!
//! Any point of the final interval is T's snapshot; the recorded history is then the one a
//! store that took that snapshot at T's start would have produced, and it satisfies the level
//! with the execution order as commit order. The floor is always valid, so a read always has
//! a choice. Cost per read: a binary search in the key's versions.

use super::data::{KeyId, Seq, StoreData};

/// PC / SI tracking state of the running transaction.
#[derive(Debug, Default, Clone)]
pub(crate) struct SnapshotTracker {
    /// Snapshot isolation (first committer wins) rather than prefix consistency.
    conflicts: bool,
    lo: Seq,
    hi: Seq,
    /// SI: a write conflicts with a concurrent committed write.
    doomed: bool,
}

impl SnapshotTracker {
    /// A tracker for prefix consistency (`conflicts` false) or snapshot isolation.
    pub(crate) fn new(conflicts: bool) -> SnapshotTracker {
        SnapshotTracker {
            conflicts,
            ..SnapshotTracker::default()
        }
    }

    /// Starts a transaction of `session`.
    pub(crate) fn begin(&mut self, data: &StoreData, session: u32) {
        self.lo = data.sessions[session as usize]
            .txns
            .last()
            .copied()
            .unwrap_or(0);
        self.hi = data.txns.len() as Seq - 1;
        self.doomed = false;
    }

    /// The last writer of `key` at or before the earliest possible snapshot point.
    pub(crate) fn floor(&self, data: &StoreData, key: KeyId) -> Seq {
        let versions = data.versions(key);
        let i = versions.partition_point(|v| v.seq <= self.lo);
        i.checked_sub(1).map_or(0, |i| versions[i].seq)
    }

    /// Whether reading a key whose [`SnapshotTracker::floor`] is `floor` from `candidate` (a
    /// writer of the key) is the last write of some still possible snapshot.
    pub(crate) fn valid(&self, floor: Seq, candidate: Seq) -> bool {
        floor <= candidate && candidate <= self.hi
    }

    /// Records that the transaction read `key` from `chosen` (a valid choice).
    pub(crate) fn observe(&mut self, data: &StoreData, key: KeyId, chosen: Seq) {
        self.lo = self.lo.max(chosen);
        let versions = data.versions(key);
        let next = versions.partition_point(|v| v.seq <= chosen);
        if let Some(v) = versions.get(next) {
            self.hi = self.hi.min(v.seq - 1);
        }
    }

    /// Records that the transaction writes `key` (SI: its snapshot must hold the key's last
    /// writer).
    pub(crate) fn wrote(&mut self, data: &StoreData, key: KeyId) {
        if !self.conflicts {
            return;
        }
        let last = data.versions(key).last().map_or(0, |v| v.seq);
        if last <= self.hi {
            self.lo = self.lo.max(last);
        } else {
            self.doomed = true;
        }
    }

    /// SI: whether the transaction wrote a key some concurrent transaction (committed after
    /// every possible snapshot point) also wrote, so it must abort.
    pub(crate) fn doomed(&self) -> bool {
        self.doomed
    }
}
