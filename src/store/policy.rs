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
//! one tracker per level: [`super::causal`], [`super::read_atomic`], [`super::read_committed`].

use std::sync::Arc;

use super::causal::CausalTracker;
use super::data::{KeyId, Seq, StoreData};
use super::read_atomic::ReadAtomicTracker;
use super::read_committed::ReadCommittedTracker;
use super::replay::ReplayPlan;
use crate::check::Level;

/// Which committed write each read observes.
#[derive(Debug, Clone)]
pub enum ReadPolicy {
    /// The last committed write (a serial run).
    Latest,
    /// A random writer the level allows (MonkeyDB's exploration); `seed` fixes the choices.
    Random {
        /// Causal, ReadAtomic or ReadCommitted.
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
        Level::Causal | Level::ReadAtomic | Level::ReadCommitted
    )
}

/// Per-transaction validity state for one level.
#[derive(Debug, Clone)]
pub(crate) enum Tracker {
    Causal(CausalTracker),
    ReadAtomic(ReadAtomicTracker),
    ReadCommitted(ReadCommittedTracker),
}

impl Tracker {
    /// The tracker of a supported level.
    pub(crate) fn new(level: Level) -> Option<Tracker> {
        match level {
            Level::Causal => Some(Tracker::Causal(CausalTracker::default())),
            Level::ReadAtomic => Some(Tracker::ReadAtomic(ReadAtomicTracker::default())),
            Level::ReadCommitted => Some(Tracker::ReadCommitted(ReadCommittedTracker::default())),
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
        }
    }

    pub(crate) fn floor(&self, data: &StoreData, key: KeyId) -> Seq {
        match self {
            Tracker::Causal(t) => t.floor(data, key),
            Tracker::ReadAtomic(t) => t.floor(data, key),
            Tracker::ReadCommitted(t) => t.floor(key),
        }
    }

    pub(crate) fn valid(&self, data: &StoreData, floor: Seq, candidate: Seq) -> bool {
        match self {
            Tracker::Causal(t) => t.valid(data, floor, candidate),
            Tracker::ReadAtomic(t) => t.valid(data, floor, candidate),
            Tracker::ReadCommitted(t) => t.valid(floor, candidate),
        }
    }

    pub(crate) fn observe(&mut self, data: &StoreData, key: KeyId, chosen: Seq) {
        match self {
            Tracker::Causal(t) => t.observe(data, key, chosen),
            Tracker::ReadAtomic(t) => t.observe(data, key, chosen),
            Tracker::ReadCommitted(t) => t.observe(data, chosen),
        }
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
