//! The replay plan of a predicted history: what each read of the validating run should
//! observe, and the order in which sessions take their turns (IsoPredict, PLDI'24 §5).
//!
//! Matching is positional, like the artifact's query engine: the i-th committed transaction
//! of a session in the prediction is the session's i-th non-empty committed transaction in the
//! replay, and its j-th external read (reads of the transaction's own writes are not choices
//! and are skipped on both sides) is the replayed transaction's j-th non-local read. A predicted
//! writer is named by its session's external id and its position there, so it maps to the
//! replay's transaction at the same place. The predicted history may be a prefix (it ends at
//! each session's prediction boundary): the replay executes exactly the transactions it holds
//! — every transaction on or hb-before the boundary — in full, then stops.

use std::fmt;

use super::key::KeyRef;
use super::replay_order::commit_order;
use crate::check::Level;
use crate::history::{History, OpKind, TxnId, INITIAL_TXN};

/// Who a predicted read reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannedWriter {
    /// The initial state.
    Initial,
    /// The `pos`-th committed transaction of the session with this external id.
    Txn {
        /// External id of the writer's session.
        session: u64,
        /// Position among the session's committed transactions.
        pos: u32,
    },
    /// The predicted history names no writer.
    Unknown,
}

/// One predicted external read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRead {
    /// The key read; `None` if its name is not a store key name.
    pub key: Option<KeyRef>,
    /// Its predicted writer.
    pub writer: PlannedWriter,
}

/// One predicted transaction: its external reads in program order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlannedTxn {
    /// The reads.
    pub reads: Vec<PlannedRead>,
}

/// One predicted session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedSession {
    /// Its external id (MonkeyDB's connection number).
    pub external_id: u64,
    /// Its committed transactions, in session order.
    pub txns: Vec<PlannedTxn>,
}

/// What a validating run must follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayPlan {
    /// The predicted sessions.
    pub sessions: Vec<PlannedSession>,
    /// Session turns: the external session id of each predicted transaction, in an execution
    /// order consistent with the prediction's happens-before and its level's commit order.
    pub turns: Vec<u64>,
}

impl ReplayPlan {
    /// The plan of `predicted`, a history valid at `level`.
    ///
    /// `preferred` optionally lists transactions of `predicted` in a preferred execution order
    /// (e.g. the observed run's commit order); the turns follow it wherever the prediction's
    /// order constraints allow. Sessions without an external id use their index.
    pub fn new(predicted: &History, level: Level, preferred: Option<&[TxnId]>) -> ReplayPlan {
        let session_id = |s: u32| -> u64 {
            predicted.sessions()[s as usize]
                .external_id
                .unwrap_or(s as u64)
        };
        // Position of each committed transaction within its session.
        let mut pos_of = vec![u32::MAX; predicted.txn_count()];
        let mut sessions = Vec::with_capacity(predicted.sessions().len());
        for (s, session) in predicted.sessions().iter().enumerate() {
            let mut txns = Vec::new();
            for t in session.txns() {
                if predicted.txn(t).is_committed() {
                    pos_of[t as usize] = txns.len() as u32;
                    txns.push(PlannedTxn::default());
                }
            }
            sessions.push(PlannedSession {
                external_id: session_id(s as u32),
                txns,
            });
        }
        for (s, session) in predicted.sessions().iter().enumerate() {
            for t in session.txns() {
                if !predicted.txn(t).is_committed() {
                    continue;
                }
                let reads = &mut sessions[s].txns[pos_of[t as usize] as usize].reads;
                for op in predicted.txn(t).ops() {
                    let o = predicted.op(op);
                    if o.kind != OpKind::Read || predicted.is_internal_read(op) {
                        continue;
                    }
                    let writer = match predicted.writer_txn(op) {
                        None => PlannedWriter::Unknown,
                        Some(INITIAL_TXN) => PlannedWriter::Initial,
                        Some(w) if pos_of[w as usize] == u32::MAX => PlannedWriter::Unknown,
                        Some(w) => PlannedWriter::Txn {
                            session: session_id(predicted.txn(w).session),
                            pos: pos_of[w as usize],
                        },
                    };
                    reads.push(PlannedRead {
                        key: KeyRef::parse(predicted.key_name(o.key)),
                        writer,
                    });
                }
            }
        }
        let turns = commit_order(predicted, level, preferred)
            .into_iter()
            .map(|t| session_id(predicted.txn(t).session))
            .collect();
        ReplayPlan { sessions, turns }
    }

    /// The planned session with this external id.
    pub fn session(&self, external_id: u64) -> Option<&PlannedSession> {
        self.sessions.iter().find(|s| s.external_id == external_id)
    }
}

/// Why a validating run left the prediction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum DivergenceReason {
    /// The read is of another key than the predicted read.
    OtherKey {
        /// The predicted key (`None` if not a store key name).
        expected: Option<String>,
    },
    /// The predicted writer transaction does not exist (yet) in the replay.
    WriterMissing,
    /// The predicted writer exists but did not write the key in the replay.
    WriterDidNotWrite,
    /// Reading from the predicted writer would violate the level.
    LevelInvalid,
    /// The predicted read names no writer.
    UnknownWriter,
    /// The transaction read more than predicted (and is not on the boundary).
    ExtraRead,
    /// The transaction committed with fewer reads than predicted.
    MissingReads {
        /// Predicted external reads.
        expected: usize,
        /// External reads it made.
        made: usize,
    },
    /// A predicted transaction never committed in the replay.
    MissingTransaction,
    /// Snapshot isolation aborted the transaction at commit: it wrote a key a concurrent
    /// transaction wrote (first committer wins).
    WriteConflict,
}

/// A point where the validating run left the prediction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Divergence {
    /// External id of the session.
    pub session: u64,
    /// Position of the transaction among the session's committed transactions.
    pub txn: u32,
    /// Index of the read among the transaction's external reads, when a read diverged.
    pub read: Option<u32>,
    /// The key read, when a read diverged.
    pub key: Option<String>,
    /// Why.
    pub reason: DivergenceReason,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "session {} transaction #{}", self.session, self.txn)?;
        if let Some(r) = self.read {
            write!(f, " read #{r}")?;
        }
        if let Some(k) = &self.key {
            write!(f, " of {k}")?;
        }
        let why = match &self.reason {
            DivergenceReason::OtherKey { expected } => format!(
                "reads another key than predicted ({})",
                expected.as_deref().unwrap_or("unknown key")
            ),
            DivergenceReason::WriterMissing => "its predicted writer never committed".into(),
            DivergenceReason::WriterDidNotWrite => {
                "its predicted writer did not write the key in this run".into()
            }
            DivergenceReason::LevelInvalid => {
                "reading the predicted writer would violate the level".into()
            }
            DivergenceReason::UnknownWriter => "the prediction names no writer".into(),
            DivergenceReason::ExtraRead => "reads more than predicted".into(),
            DivergenceReason::MissingReads { expected, made } => {
                format!("made {made} of {expected} predicted reads")
            }
            DivergenceReason::MissingTransaction => "never committed".into(),
            DivergenceReason::WriteConflict => {
                "aborted: it writes a key a concurrent transaction wrote".into()
            }
        };
        write!(f, ": {why}")
    }
}
