//! What a prediction answers: the verdict, the verified prediction (boundaries, changed reads,
//! the `pco` cycle that explains it, the predicted history), the measurements, and the errors.

use super::EncodingSize;
use crate::check::{CheckError, CheckReport, Level};
use crate::history::{History, OpId, SessionId, TxnId};

use super::{Engine, PredictOptions, Strategy};

/// What [`predict`](super::predict()) concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A verified prediction: see [`PredictOutcome::prediction`].
    Predicted,
    /// The observed history itself violates the level: see [`PredictOutcome::observed`].
    ObservedViolation,
    /// The observed history is valid at the level but itself unserializable: it is its own
    /// anomaly, nothing needs predicting (scalable engine).
    ObservedUnserializable,
    /// No prediction exists under this strategy's encoding.
    NoPrediction,
    /// The solver gave up (timeout or resource limit), or no model survived re-verification.
    Unknown,
}

/// Measurements of one prediction run.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PredictStats {
    /// Transactions in the encoding (t0 included; transactions touching no contested key are
    /// pruned).
    pub nodes: usize,
    /// Read choices (units): groups of reads of one key by one transaction, or single reads
    /// under read committed.
    pub choices: usize,
    /// Read choices with more than one possible writer.
    pub open_choices: usize,
    /// Constraint size.
    pub encoding: EncodingSize,
    /// Time to build the space, generate the constraints and hand them to Z3 (ms).
    pub generation_ms: f64,
    /// Time in the solver, all calls (ms).
    pub solving_ms: f64,
    /// Time re-verifying models (ms).
    pub verification_ms: f64,
    /// Solver calls.
    pub solver_calls: u32,
    /// Models that failed re-verification and were blocked.
    pub rejected_models: u32,
    /// Approximate strategies with [`RankEncoding::Rounds`]: rounds of `pco` generated.
    pub rounds: Option<u32>,
    /// Exact strategy with [`ExactMethod::Instances`], and the scalable engine: instances of
    /// the quantified formula added (serializable candidates refuted), and, for the
    /// approximate strategies, valid unserializable candidates without a `pco` cycle blocked.
    pub instances: u32,
    /// Scalable engine: the engine that answered (`paper` or `scalable`).
    pub engine: Option<Engine>,
    /// Scalable engine: seed candidates decided before the solver phase.
    pub seeds: u32,
    /// Scalable engine: candidates the level check rejected, each blocked by a clause.
    pub level_clauses: u32,
    /// Scalable engine: read choices × candidate writers the solver phase would encode (its
    /// size estimate).
    pub candidates: u64,
    /// Scalable engine: whether the search ran to the end (no further distinct prediction
    /// exists), when predictions were found.
    pub exhaustive: Option<bool>,
}

/// A changed read: it reads from a different transaction in the prediction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChangedRead {
    /// The read (observed operation id).
    pub op: OpId,
    /// Its input line (0 if unknown).
    pub line: u32,
    /// The reading transaction (observed id) and its label.
    pub txn: TxnId,
    /// Label of the reading transaction.
    pub txn_label: String,
    /// The key.
    pub key: String,
    /// The writer in the observed history.
    pub old_writer: TxnId,
    /// Its label.
    pub old_writer_label: String,
    /// The writer in the prediction.
    pub new_writer: TxnId,
    /// Its label.
    pub new_writer_label: String,
    /// Whether the read is one of the reads of the anomaly's minimal core
    /// ([`Prediction::core`]): one of the changed reads that create the anomaly (every
    /// changed read when there is no core).
    pub in_core: bool,
}

/// A session's prediction boundary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SessionBoundary {
    /// The observed session.
    pub session: SessionId,
    /// Its external id.
    pub external_id: Option<u64>,
    /// The boundary transaction (observed id); `None`: no boundary, the whole session is in.
    pub txn: Option<TxnId>,
    /// Its label.
    pub txn_label: Option<String>,
    /// Strict boundary: the boundary read (observed op id); events after it are excluded.
    pub read: Option<OpId>,
    /// The boundary read's input line.
    pub line: Option<u32>,
    /// Committed transactions of the session in the prediction (the boundary one included).
    pub included_txns: u32,
    /// Committed transactions of the session observed.
    pub committed_txns: u32,
}

/// One edge of the explanation cycle, in observed transaction ids.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CycleEdge {
    /// Source (observed id).
    pub from: TxnId,
    /// Its label.
    pub from_label: String,
    /// Target (observed id).
    pub to: TxnId,
    /// Its label.
    pub to_label: String,
    /// `so`, `wr`, `ww` or `rw`.
    pub kind: &'static str,
    /// The key of a wr/ww/rw edge.
    pub key: Option<String>,
    /// The reason in words.
    pub reason: String,
    /// ww: the transaction that reads `to`'s write of the key; rw: the one `from` reads it
    /// from (observed id).
    pub via: Option<TxnId>,
    /// ww and rw: the chain of [`Prediction::facts`] (0-based indices into that list, which
    /// holds the session-order facts too) that shows the "precedes" in the reason (ww: `from`
    /// precedes `via`; rw: `via` precedes `to`).
    pub premise: Vec<usize>,
    /// A fact of [`Prediction::facts`] other than session order: the number the reasons cite
    /// it by (`fact 2`; [`super::explain::fact_number`]). `None` for session-order facts
    /// (self-evident, never cited or listed) and for the cycle's edges; left out of JSON then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<usize>,
}

/// A verified prediction.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Prediction {
    /// Per observed session.
    pub boundaries: Vec<SessionBoundary>,
    /// The reads whose writer changed.
    pub changed_reads: Vec<ChangedRead>,
    /// A cycle of the least `pco` of the predicted history (why no serial order exists);
    /// `None` when `pco` is acyclic (possible only for exact-strict predictions, which the
    /// exact check alone proves unserializable).
    pub cycle: Option<Vec<CycleEdge>>,
    /// The edges the premises of the cycle's ww and rw edges go through, each proven in turn
    /// by facts before it (empty without a cycle).
    pub facts: Vec<CycleEdge>,
    /// The predicted prefix history (write it with [`crate::formats`]).
    #[serde(skip)]
    pub history: History,
    /// Predicted transaction id → observed transaction id.
    pub txn_origin: Vec<TxnId>,
    /// The anomaly's minimal core: the fewest transactions and reads of the prediction that
    /// still show that no serial order exists; [`Prediction::cycle`] goes through exactly
    /// its transactions. `None` when the prediction has no `pco` cycle or is too large to
    /// minimise (then the cycle is the whole prediction's).
    pub core: Option<super::AnomalyCore>,
}

/// The result of [`predict`](super::predict()).
#[derive(Debug, Clone, serde::Serialize)]
pub struct PredictOutcome {
    /// The level.
    pub level: Level,
    /// The strategy.
    pub strategy: Strategy,
    /// What was concluded.
    pub verdict: Verdict,
    /// Why the answer is unknown; with "none", why no prediction exists (in words).
    pub reason: Option<String>,
    /// With "none": the kind of argument that shows it (docs/prediction.md "Why none").
    pub certificate: Option<super::Certificate>,
    /// The level check of the observed history, when it fails.
    pub observed: Option<CheckReport>,
    /// The prediction, when one was made (the first of [`PredictOutcome::predictions`]).
    pub prediction: Option<Prediction>,
    /// Every prediction made (`--max N`), differing in their anomaly; the first is
    /// `prediction`.
    #[serde(skip)]
    pub predictions: Vec<Prediction>,
    /// Measurements.
    pub stats: PredictStats,
}

impl PredictOutcome {
    /// The outcome before anything is concluded: unknown, no reason yet, with `stats`.
    pub(crate) fn unknown(options: &PredictOptions, stats: PredictStats) -> PredictOutcome {
        PredictOutcome {
            level: options.level,
            strategy: options.strategy,
            verdict: Verdict::Unknown,
            reason: None,
            certificate: None,
            observed: None,
            prediction: None,
            predictions: Vec::new(),
            stats,
        }
    }
}

/// Why [`predict`](super::predict()) could not run.
#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    /// Prediction is defined for causal, read atomic, read committed, prefix consistency and
    /// snapshot isolation only.
    #[error("prediction supports the levels causal, ra, rc, pc and si, not {0}")]
    UnsupportedLevel(Level),
    /// The level checker failed.
    #[error("checking the observed history: {0}")]
    Check(#[from] CheckError),
    /// The observed history cannot be modelled (a read the level check should have rejected).
    #[error("the observed history is not a valid execution: op {op}: {message}")]
    InvalidObservation {
        /// The offending read.
        op: OpId,
        /// What is wrong.
        message: String,
    },
    /// A bug: the model could not be turned into a history.
    #[error("internal error: {0}")]
    Internal(String),
    /// The user interrupted the prediction (SIGINT, see [`crate::interrupt`]).
    #[error("{0}")]
    Interrupted(#[from] crate::interrupt::Interrupted),
}
