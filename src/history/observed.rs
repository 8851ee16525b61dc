//! Anomalies a reader observes directly in the input, before any checking: facts of the
//! recorded run that no choice of commit order can explain away. Elle (Kingsbury & Alvaro,
//! VLDB'20, §4.1–4.2) reports two for list-append histories that a dependency graph cannot
//! express: `incompatible-order` (two reads of one key that are not prefixes of one another,
//! so no single version order of the key explains both) and `duplicate-elements` (a read
//! that holds one appended element twice).

use super::{AnomalyId, TxnId};
use crate::history::Level;

/// An anomaly read off the input itself (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedAnomaly {
    /// Its row in the anomaly table ([`crate::history::anomalies`]).
    pub anomaly: AnomalyId,
    /// Elle's name for it (from its row): `incompatible-order`, `duplicate-elements`, `G1a`.
    pub name: &'static str,
    /// The weakest level that forbids it (from its row); every stronger level forbids it too.
    pub weakest_level_forbidding: Level,
    /// The transactions involved (for an incompatible order: the read that gives the key's
    /// version order first, then the reads that contradict it).
    pub txns: Vec<TxnId>,
    /// The input line of the first contradicting operation, when known.
    pub line: Option<u32>,
    /// What was observed, in words (keys, values and lines).
    pub description: String,
}

impl ObservedAnomaly {
    /// Whether a history with this anomaly violates `level`: every level that implies the
    /// weakest one forbidding it. An anomaly forbidden by read committed is forbidden by cut
    /// isolation too (both assume one version order per key, which it rules out).
    pub fn violates(&self, level: Level) -> bool {
        level.implies(self.weakest_level_forbidding)
            || self.weakest_level_forbidding == Level::ReadCommitted
    }
}
