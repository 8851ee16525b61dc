//! Read policies: which committed write a read observes.
//!
//! - [`ReadPolicy::Latest`]: the last committed write of the key. Transactions run one at a
//!   time, so the run is serial — IsoPredict's observed executions (PLDI'24 §6).
//! - [`ReadPolicy::Random`]: MonkeyDB's exploration (OOPSLA'21): among the writers the level
//!   allows, pick a session uniformly (the initial state is a session of its own), then one of
//!   that session's writers uniformly.
//! - [`ReadPolicy::Replay`]: IsoPredict's validation (PLDI'24 §5): follow the predicted writer
//!   when it exists, wrote the key in this run and keeps the level valid; otherwise the run
//!   has diverged and the read takes the latest valid writer.
//!
//! Validity is decided incrementally with the commit order fixed to the execution order, by
//! one tracker per level: [`super::causal`], [`super::read_atomic`], [`super::read_committed`],
//! and [`super::snapshot`] for prefix consistency and snapshot isolation.
//!
//! Prefix consistency and snapshot isolation give each transaction a *snapshot*: a point of
//! the execution order (every transaction committed up to it), at least its session
//! predecessor. Transactions run one at a time, so "concurrent" is defined by the snapshot: a
//! transaction is concurrent with those committed after its snapshot point and before its own
//! commit. Random and replayed reads choose among the writers some snapshot allows (the point
//! is fixed lazily by the reads made). Under snapshot isolation a transaction that writes a
//! key a concurrent transaction wrote aborts at commit (first committer wins:
//! [`super::Committed::Aborted`]); prefix consistency has no write–write check.

use std::sync::Arc;

use super::causal::CausalTracker;
use super::data::{KeyId, Seq, StoreData};
use super::read_atomic::ReadAtomicTracker;
use super::read_committed::ReadCommittedTracker;
use super::replay::ReplayPlan;
use super::snapshot::SnapshotTracker;
use crate::check::Level;

/// Which committed write each read observes.
#[derive(Debug, Clone)]
pub enum ReadPolicy {
    /// The last committed write (a serial run).
    Latest,
    /// A random writer the level allows (MonkeyDB's exploration); `seed` fixes the choices.
    Random {
        /// Causal, ReadAtomic, ReadCommitted, Prefix or Snapshot.
        level: Level,
        /// Seed of the choices.
        seed: u64,
    },
    /// Follow a predicted history (IsoPredict's validation).
    Replay {
        /// The predicted reads, per session and transaction.
        plan: Arc<ReplayPlan>,
        /// The level the replayed run must satisfy (the prediction's level).
        level: Level,
    },
}

impl ReadPolicy {
    /// The level whose validity the policy maintains, if any.
    pub fn level(&self) -> Option<Level> {
        match self {
            ReadPolicy::Latest => None,
            ReadPolicy::Random { level, .. } | ReadPolicy::Replay { level, .. } => Some(*level),
        }
    }
}

/// The levels a store can keep a run valid at.
pub fn supported(level: Level) -> bool {
    matches!(
        level,
        Level::Causal | Level::ReadAtomic | Level::ReadCommitted | Level::Prefix | Level::Snapshot
    )
}

/// Per-transaction validity state for one level.
#[derive(Debug, Clone)]
pub(crate) enum Tracker {
    Causal(CausalTracker),
    ReadAtomic(ReadAtomicTracker),
    ReadCommitted(ReadCommittedTracker),
    Snapshot(SnapshotTracker),
}

impl Tracker {
    /// The tracker of a supported level.
    pub(crate) fn new(level: Level) -> Option<Tracker> {
        match level {
            Level::Causal => Some(Tracker::Causal(CausalTracker::default())),
            Level::ReadAtomic => Some(Tracker::ReadAtomic(ReadAtomicTracker::default())),
            Level::ReadCommitted => Some(Tracker::ReadCommitted(ReadCommittedTracker::default())),
            Level::Prefix => Some(Tracker::Snapshot(SnapshotTracker::new(false))),
            Level::Snapshot => Some(Tracker::Snapshot(SnapshotTracker::new(true))),
            _ => None,
        }
    }

    pub(crate) fn is_causal(&self) -> bool {
        matches!(self, Tracker::Causal(_))
    }

    pub(crate) fn begin(&mut self, data: &StoreData, session: u32) {
        match self {
            Tracker::Causal(t) => t.begin(data, session),
            Tracker::ReadAtomic(t) => t.begin(data, session),
            Tracker::ReadCommitted(t) => t.begin(data),
            Tracker::Snapshot(t) => t.begin(data, session),
        }
    }

    pub(crate) fn floor(&self, data: &StoreData, key: KeyId) -> Seq {
        match self {
            Tracker::Causal(t) => t.floor(data, key),
            Tracker::ReadAtomic(t) => t.floor(data, key),
            Tracker::ReadCommitted(t) => t.floor(key),
            Tracker::Snapshot(t) => t.floor(data, key),
        }
    }

    pub(crate) fn valid(&self, data: &StoreData, floor: Seq, candidate: Seq) -> bool {
        match self {
            Tracker::Causal(t) => t.valid(data, floor, candidate),
            Tracker::ReadAtomic(t) => t.valid(data, floor, candidate),
            Tracker::ReadCommitted(t) => t.valid(floor, candidate),
            Tracker::Snapshot(t) => t.valid(floor, candidate),
        }
    }

    pub(crate) fn observe(&mut self, data: &StoreData, key: KeyId, chosen: Seq) {
        match self {
            Tracker::Causal(t) => t.observe(data, key, chosen),
            Tracker::ReadAtomic(t) => t.observe(data, key, chosen),
            Tracker::ReadCommitted(t) => t.observe(data, chosen),
            Tracker::Snapshot(t) => t.observe(data, key, chosen),
        }
    }

    /// Records that the running transaction writes `key` (snapshot isolation constrains its
    /// snapshot; other levels ignore writes).
    pub(crate) fn wrote(&mut self, data: &StoreData, key: KeyId) {
        if let Tracker::Snapshot(t) = self {
            t.wrote(data, key);
        }
    }

    /// Whether the running transaction must abort at commit (snapshot isolation: it writes a
    /// key a concurrent committed transaction wrote).
    pub(crate) fn must_abort(&self) -> bool {
        matches!(self, Tracker::Snapshot(t) if t.doomed())
    }

    pub(crate) fn commit_clock(&self, session: u32, pos: u32) -> Box<[u32]> {
        match self {
            Tracker::Causal(t) => t.commit_clock(session, pos),
            _ => Box::new([]),
        }
    }

    /// The valid writers of `key`, in execution order.
    pub(crate) fn valid_writers(&self, data: &StoreData, key: KeyId, out: &mut Vec<Seq>) {
        out.clear();
        let floor = self.floor(data, key);
        let versions = data.versions(key);
        let start = versions.partition_point(|v| v.seq < floor);
        out.extend(
            versions[start..]
                .iter()
                .map(|v| v.seq)
                .filter(|&c| self.valid(data, floor, c)),
        );
    }
}
