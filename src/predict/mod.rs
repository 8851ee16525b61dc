//! Predictive analysis (IsoPredict, Geng et al., PLDI 2024, §4 and appendix B): from one
//! observed execution history, predict a *different* execution of the same program that a
//! weakly isolated store (causal consistency, read atomic, read committed, prefix consistency or
//! snapshot isolation) may produce and that is not serializable — or show that none exists under the chosen encoding.
//!
//! Pipeline ([`predict`]):
//! 1. check the observed history at the level (if it already violates it, report that);
//! 2. build the prediction space (`space`: pruned read choices and boundary thresholds) and
//!    generate the constraints: feasible prefix with boundary (`feasibility`), weak isolation
//!    (`isolation`), unserializability — exact (`exact`: `∀co. ¬IsSerializable(co)`, by lazy
//!    instantiation or Z3's quantifier engine) or approximate (`approx`: a cyclic `pco`, with
//!    the rank measure as rounds; `ranked`: the paper's integer ranks);
//! 3. solve with Z3 under the timeout;
//! 4. read the model (`extract`): each session's boundary, the reads whose writer changed,
//!    the predicted prefix history;
//! 5. re-verify: the predicted history satisfies the level by [`crate::check::check`] (pc and
//!    si: the exact checker [`crate::ser::check_strong`]) and is
//!    unserializable by the exact Z3 check [`crate::ser::smt`]. A model that fails is blocked
//!    and the solver asked again (bounded); a prediction is only ever reported verified;
//! 6. explain ([`explain`]): a cycle of the least `pco` of the prediction, each edge with its
//!    reason; [`dot`] draws it.
//!
//! Strategies (the paper's Table 2): [`Strategy::ExactStrict`], [`Strategy::ApproxStrict`],
//! [`Strategy::ApproxRelaxed`].
//!
//! Engines: steps 2–5 above are the paper-form engine ([`Engine::Paper`]). The default,
//! [`Engine::Scalable`], gives the same verdicts at the scale of real test runs: the observed
//! history's serializability first, then seeds and a lazily constrained solver decided by the
//! checkers (`scalable`, `seeds`, `prefix`, `lazy`, `saturate`, `serial`; docs/prediction.md
//! "Engines" has the equivalence argument).

mod approx;
mod dangerous;
pub mod dot;
mod exact;
pub mod explain;
mod extract;
mod feasibility;
mod formula;
mod isolation;
mod isolation_si_pc;
mod lazy;
mod level_core;
mod prefix;
mod ranked;
mod reach;
mod render;
mod saturate;
mod scalable;
mod seeds;
mod serial;
mod space;

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use z3::{Params, SatResult, Solver};

use crate::check::{self, CheckError, CheckOptions, CheckReport, Level};
use crate::history::{History, OpId, SessionId, TxnId};
use crate::ser::{self, SerVerdict};

pub use explain::{EdgeReason, PcoEdge};
pub mod recheck;
pub mod z3_memory;
pub use formula::EncodingSize;
pub use render::no_prediction_claim;

use feasibility::Encoding;
use space::{BoundaryKind, Space};

/// Bytes the paper-form engine is estimated to take per cube of its nodes (transactions
/// touching contested keys, t0 included): its pair relations have `n²` variables and their
/// closures `n³` clauses. Fitted to the measurements of issue 8 (61 nodes: 0.8 GB, 97 nodes:
/// 2.6 GB, 201 nodes: > 14 GB).
pub const PAPER_BYTES_PER_NODE_CUBE: u64 = 3 * 1024;

/// Which prediction engine answers (docs/prediction.md "Engines").
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// The paper-form encodings over every pair of transactions (the reference; cubic).
    Paper,
    /// Seeds and a lazily constrained solver over the prediction space, decided by the
    /// checkers (same answers; cost follows the prefix a prediction needs).
    #[default]
    Scalable,
}

/// A prediction strategy: encoding precision × prediction boundary (IsoPredict Table 2).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Exact unserializability (`∀co. ¬IsSerializable(co)`), strict boundary.
    ExactStrict,
    /// Approximate unserializability (cyclic `pco`), strict boundary.
    ApproxStrict,
    /// Approximate unserializability, relaxed boundary.
    ApproxRelaxed,
}

impl Strategy {
    /// Every strategy.
    pub const ALL: [Strategy; 3] = [
        Strategy::ExactStrict,
        Strategy::ApproxStrict,
        Strategy::ApproxRelaxed,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::ExactStrict => "exact-strict",
            Strategy::ApproxStrict => "approx-strict",
            Strategy::ApproxRelaxed => "approx-relaxed",
        }
    }

    fn boundary(self) -> BoundaryKind {
        match self {
            Strategy::ExactStrict | Strategy::ApproxStrict => BoundaryKind::Strict,
            Strategy::ApproxRelaxed => BoundaryKind::Relaxed,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Strategy, String> {
        Strategy::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| {
                format!("unknown strategy `{s}` (expected exact-strict, approx-strict or approx-relaxed)")
            })
    }
}

/// Options of [`predict`].
#[derive(Debug, Clone)]
pub struct PredictOptions {
    /// The weak isolation level the prediction must satisfy: causal, read atomic, read
    /// committed, prefix consistency or snapshot isolation.
    pub level: Level,
    /// The strategy.
    pub strategy: Strategy,
    /// Wall-clock budget for solving and re-verification (none: no limit).
    pub timeout: Option<Duration>,
    /// How many models may fail re-verification before giving up (reported as unknown).
    pub max_rejected: u32,
    /// How the approximate strategies encode the rank measure.
    pub ranks: RankEncoding,
    /// How the exact strategy solves its quantified formula.
    pub exact: ExactMethod,
    /// Which engine answers.
    pub engine: Engine,
    /// Most predictions to report (differing in their anomaly; `usize::MAX`: all). The paper
    /// engine reports at most one.
    pub max: usize,
    /// An absolute deadline for the whole prediction (overrides `timeout` when earlier).
    pub deadline: Option<Instant>,
    /// Memory budget in bytes for the encodings (estimated before building them; `None`: no
    /// limit). Over it the answer is unknown.
    pub memory: Option<u64>,
}

/// How the exact strategy decides `∀co. ¬IsSerializable(co)` (§4.2.1).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum ExactMethod {
    /// Expand the quantifier lazily: each serializable candidate's serial order becomes a
    /// ground instance (counterexample-guided instantiation; candidates by SAT, orders by the
    /// exact serializability check).
    #[default]
    Instances,
    /// Hand the quantified formula to Z3 (model-based quantifier instantiation).
    Quantifier,
}

/// How the approximate encoding orders `pco` derivations (the rank measure of §4.2.2).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum RankEncoding {
    /// Ranks are rounds of the fixpoint iteration, one Boolean copy of `pco` per round, added
    /// until a cycle appears or no choice of reads grows `pco` any more.
    #[default]
    Rounds,
    /// The paper's integer `rank(a, b)` per pair (slow for Z3 to refute).
    Integer,
}

impl PredictOptions {
    /// Options for `level` and `strategy`, no timeout, up to 8 rejected models.
    pub fn new(level: Level, strategy: Strategy) -> PredictOptions {
        PredictOptions {
            level,
            strategy,
            timeout: None,
            max_rejected: 8,
            ranks: RankEncoding::Rounds,
            exact: ExactMethod::Instances,
            engine: Engine::Scalable,
            max: 1,
            deadline: None,
            memory: None,
        }
    }

    /// With a timeout.
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> PredictOptions {
        self.timeout = timeout;
        self
    }
}

/// What [`predict`] concluded.
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
    /// ww and rw: the chain of [`Prediction::facts`] (indices) that shows the "precedes" in
    /// the reason (ww: `from` precedes `via`; rw: `via` precedes `to`).
    pub premise: Vec<usize>,
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
}

/// The result of [`predict`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct PredictOutcome {
    /// The level.
    pub level: Level,
    /// The strategy.
    pub strategy: Strategy,
    /// What was concluded.
    pub verdict: Verdict,
    /// Why the answer is unknown.
    pub reason: Option<String>,
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

/// Why [`predict`] could not run.
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

/// Most committed transactions for which [`PredictOptions::for_history`] keeps the paper
/// engine (the paper's workloads have ≤ 25).
pub const PAPER_ENGINE_MAX_TXNS: usize = 64;

impl PredictOptions {
    /// The engine for `h` as the pipelines choose it: at causal, ra and rc the paper engine on
    /// runs of the paper's size (≤ [`PAPER_ENGINE_MAX_TXNS`] committed transactions; same
    /// verdict, and the same prediction as before the scalable engine, so reports keep their
    /// anomaly), else — and always at pc and si, which the paper does not cover — the scalable
    /// one.
    pub fn for_history(mut self, h: &History) -> PredictOptions {
        let paper_levels = !is_si_pc(self.level);
        self.engine = if paper_levels && h.committed_txns().count() <= PAPER_ENGINE_MAX_TXNS {
            Engine::Paper
        } else {
            Engine::Scalable
        };
        self
    }
}

/// The default memory budget: half the machine's memory (`MemTotal` of `/proc/meminfo`), or
/// `None` where that cannot be read.
pub fn default_memory_budget() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024 / 2)
}

/// Predicts an unserializable execution of the program that produced `history`, valid at
/// `options.level`, with `options.strategy`. See the module documentation for the pipeline.
///
/// Runs in a fresh Z3 context (the z3 crate's default context is thread-local and keeps
/// state between calls), so the same input and options give the same prediction every time.
/// A stop requested by the user ([`crate::interrupt`]) ends it with
/// [`PredictError::Interrupted`].
pub fn predict(
    history: &History,
    options: &PredictOptions,
) -> Result<PredictOutcome, PredictError> {
    z3::with_z3_config(&z3::Config::new(), || {
        // Z3's allocations under the memory budget, and its calls within the deadline (a
        // watchdog interrupts it).
        let deadline = match (
            options.timeout.map(|t| Instant::now() + t),
            options.deadline,
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let (outcome, peak) = z3_memory::watch(options.memory, deadline, || {
            predict_in_context(history, options)
        });
        crate::interrupt::stop_point()?;
        let passed = deadline.is_some_and(|d| Instant::now() >= d);
        let mut outcome = match outcome {
            // An interrupted Z3 may fail to give a model: that is the limit's answer.
            Err(PredictError::Internal(e)) if passed || peak.is_some() => PredictOutcome {
                level: options.level,
                strategy: options.strategy,
                verdict: Verdict::Unknown,
                reason: Some(format!(
                    "{} (the solver was stopped: {e})",
                    if peak.is_some() {
                        "memory limit"
                    } else {
                        "timeout"
                    }
                )),
                observed: None,
                prediction: None,
                predictions: Vec::new(),
                stats: PredictStats::default(),
            },
            other => other?,
        };
        if peak.is_none() && passed {
            // Z3 stopped by the watchdog at the deadline says "canceled" or "interrupted".
            if let Some(r) = outcome.reason.as_mut() {
                *r = r
                    .replace("canceled", "timeout")
                    .replace("interrupted", "timeout");
            }
        }
        if let (Some(peak), Some(budget)) = (peak, options.memory) {
            let limit_named = outcome
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with("memory limit"));
            if outcome.verdict == Verdict::Unknown && !limit_named {
                outcome.reason = Some(z3_memory::over_budget_reason(budget, peak));
            }
        }
        Ok(outcome)
    })
}

/// Why a solver call that answered `sat` gave no model: it was interrupted (the deadline passed
/// or the memory watchdog stopped it).
pub(crate) fn stopped_reason(deadline: Option<Instant>) -> String {
    if deadline.is_some_and(|d| Instant::now() >= d) {
        "timeout".to_string()
    } else {
        "the solver was stopped before it gave its model".to_string()
    }
}

/// [`predict`] in the calling thread's current Z3 context.
fn predict_in_context(
    history: &History,
    options: &PredictOptions,
) -> Result<PredictOutcome, PredictError> {
    let level = options.level;
    if !matches!(
        level,
        Level::Causal | Level::ReadAtomic | Level::ReadCommitted | Level::Prefix | Level::Snapshot
    ) {
        return Err(PredictError::UnsupportedLevel(level));
    }
    let start = Instant::now();
    let deadline = match (options.timeout.map(|t| start + t), options.deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut outcome = PredictOutcome {
        level,
        strategy: options.strategy,
        verdict: Verdict::Unknown,
        reason: None,
        observed: None,
        prediction: None,
        predictions: Vec::new(),
        stats: PredictStats {
            engine: Some(options.engine),
            ..PredictStats::default()
        },
    };

    // 1. The observed history at the level (pc, si: the exact checker `ser::check_strong`,
    //    unless a verified serial order shows it serializable, hence SI and PC: Biswas & Enea
    //    Lemma 2.4). The checkers use the known write order (if the input shows one); for SI
    //    it is given as reads (`History::with_write_order_as_reads`, exact there; stronger
    //    than the order under PC, so not used for PC).
    // A serial order of the observed history found on the way, given to the scalable engine
    // when it is the one that engine would find itself (the same history: the rewritten one
    // at SI, and at PC when the input shows no write order).
    let mut observed_order = None;
    if is_si_pc(level) {
        let rewritten = (level == Level::Snapshot)
            .then(|| history.with_write_order_as_reads())
            .flatten();
        let observed = rewritten.as_ref().unwrap_or(history);
        let order = serial::greedy_serial_order(observed, &[], deadline)
            .filter(|order| ser::verify_serial_order(observed, order).is_ok());
        let serial = order.is_some();
        if level == Level::Snapshot || history.known_write_order().is_empty() {
            observed_order = order;
        }
        let verdict = if serial {
            scalable::LevelCheck::Holds
        } else {
            scalable::check_level(observed, level, deadline, false)?
        };
        match verdict {
            scalable::LevelCheck::Holds => {}
            scalable::LevelCheck::Fails(_) => {
                outcome.verdict = Verdict::ObservedViolation;
                outcome.reason = Some(format!("no commit order satisfies {}", level.full_name()));
                return Ok(outcome);
            }
            scalable::LevelCheck::Unknown => {
                outcome.reason = Some("checking the observed history: timeout".to_string());
                return Ok(outcome);
            }
        }
    }
    let report = if is_si_pc(level) {
        None
    } else {
        Some(check::check(history, level, &CheckOptions::default())?)
    };
    if let Some(report) = report.filter(|r| !r.is_consistent()) {
        outcome.verdict = Verdict::ObservedViolation;
        outcome.observed = Some(report);
        return Ok(outcome);
    }

    if options.engine == Engine::Scalable {
        return predict_scalable(history, options, deadline, outcome, observed_order);
    }

    predict_paper(history, options, deadline, outcome, false)
}

/// The paper-form engine's pipeline after the level check (steps 2–5 of the module
/// documentation). `for_scalable`: called as the scalable engine's solver phase on a small
/// space, which changes two things (docs/prediction.md "Engines", small-space mode):
/// - pc and si: instead of the paper-form pc/si encoding, causal consistency (which both
///   imply) is encoded eagerly and the level is added lazily — a candidate the exact checker
///   rejects is blocked with every candidate that includes at least as much
///   ([`lazy::level_clause`], [`level_core::core_clause`]);
/// - approximate strategies: instead of the rank (rounds) encoding of `pco`, candidates are
///   judged by the `pco` saturation after the fact, as exact-strict's are by the
///   serializability check: a serializable candidate's serial order becomes an exact
///   instance (refuting every candidate it explains, none of which is a prediction of any
///   strategy), a valid unserializable candidate without a `pco` cycle is blocked alone.
fn predict_paper(
    history: &History,
    options: &PredictOptions,
    deadline: Option<Instant>,
    mut outcome: PredictOutcome,
    for_scalable: bool,
) -> Result<PredictOutcome, PredictError> {
    let level = options.level;
    let lazy_level = for_scalable && is_si_pc(level);
    let approx_by_instances = for_scalable && options.strategy != Strategy::ExactStrict;
    outcome.stats.engine = Some(Engine::Paper);
    // 2. Space and constraints.
    let generation = Instant::now();
    let space = if is_si_pc(level) {
        Space::for_snapshots(
            history,
            options.strategy.boundary(),
            level == Level::Snapshot,
        )
    } else {
        Space::new(
            history,
            options.strategy.boundary(),
            level == Level::ReadCommitted,
        )
    }
    .map_err(|e| PredictError::InvalidObservation {
        op: e.op,
        message: e.message,
    })?;
    let nodes = space.nodes() as u64;
    let estimate = nodes
        .saturating_mul(nodes)
        .saturating_mul(nodes)
        .saturating_mul(PAPER_BYTES_PER_NODE_CUBE);
    if let Some(memory) = options.memory.filter(|&m| estimate > m) {
        outcome.reason = Some(format!(
            "memory limit: the paper-form encodings over {nodes} transactions would take ~{} MB, \
             over the {} MB budget; try --engine scalable or a larger --memory",
            estimate >> 20,
            memory >> 20
        ));
        return Ok(outcome);
    }
    let mut enc = Encoding::new(&space);
    if lazy_level {
        isolation::encode(&mut enc, Level::Causal);
        if level == Level::Snapshot {
            dangerous::require_a_pivot(&mut enc);
        }
    } else if is_si_pc(level) {
        isolation_si_pc::encode(&mut enc, level);
    } else {
        isolation::encode(&mut enc, level);
    }
    // Unserializability needs a changed read when the observed reads cannot make a cycle:
    // every prefix of the observed history is then free of one too (the rules are monotone).
    let observed_acyclic = match options.strategy {
        Strategy::ExactStrict => matches!(
            ser::is_serializable(history, remaining(deadline)),
            Ok(SerVerdict::Serializable { .. })
        ),
        // The explanation's saturation is quadratic in transactions; above the size it
        // serves, the clock saturation decides (giving up only drops this shortcut).
        _ if history.txn_count() <= SHORTEST_CYCLE_MAX_TXNS => {
            explain::pco_cycle(history).is_none()
        }
        _ => matches!(
            saturate::saturate(history, deadline),
            saturate::Pco::Acyclic(..)
        ),
    };
    if observed_acyclic {
        enc.some_read_changes();
    }
    let mut rounds = None;
    match (options.strategy, options.ranks) {
        (Strategy::ExactStrict, _) if options.exact == ExactMethod::Quantifier => {
            exact::encode(&mut enc)
        }
        (Strategy::ExactStrict, _) => {} // instances are added as candidates are refuted
        _ if approx_by_instances => {}

        (_, RankEncoding::Integer) => ranked::encode(&mut enc),
        (_, RankEncoding::Rounds) => rounds = Some(approx::Rounds::new(&mut enc)),
    }
    // Approximate with rounds: first ask for a cycle in round 1; when there is none, whether
    // some choice of reads grows pco in round 2 (then ask for a cycle there, and so on).
    let mut round = 1;
    let mut growing = false;
    let mut goal = rounds.as_ref().map(|r| r.cyclic(&mut enc, round));
    // Without integers (the approximate encodings, unless the commit order needs positions)
    // the problem is propositional: Z3's SAT engine (logic QF_FD) is much faster on it.
    let solver = if enc.store.size().int_vars == 0 {
        Solver::new_for_logic("QF_FD").unwrap_or_default()
    } else {
        Solver::new()
    };
    let mut terms = enc.store.to_z3(&solver);
    outcome.stats.nodes = space.nodes();
    outcome.stats.choices = space.units.len();
    outcome.stats.open_choices = space
        .units
        .iter()
        .filter(|u| space.groups[u.group as usize].cands.len() > 1)
        .count();
    outcome.stats.generation_ms = ms(generation.elapsed());

    // 3–5. Solve, read, re-verify; block models that fail.
    loop {
        outcome.stats.encoding = enc.store.size();
        outcome.stats.rounds = rounds.as_ref().map(|r| r.last() as u32);
        let remaining = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(r) if r > Duration::ZERO => Some(r),
                _ => {
                    outcome.reason = Some("timeout".to_string());
                    return Ok(outcome);
                }
            },
            None => None,
        };
        if let Some(r) = remaining {
            let mut params = Params::new();
            params.set_u32("timeout", r.as_millis().clamp(1, u32::MAX as u128) as u32);
            solver.set_params(&params);
        }
        let solving = Instant::now();
        let result = crate::interrupt::check(&solver, |s| match goal {
            Some(g) => s.check_assumptions(&[terms.term(g).expect("goal literal")]),
            None => s.check(),
        });
        outcome.stats.solving_ms += ms(solving.elapsed());
        outcome.stats.solver_calls += 1;
        match result {
            SatResult::Unknown => {
                outcome.reason = Some(
                    solver
                        .get_reason_unknown()
                        .unwrap_or_else(|| "unknown".to_string()),
                );
                return Ok(outcome);
            }
            SatResult::Unsat => match rounds.as_mut() {
                Some(r) if !growing => {
                    // No cycle by round `round`: does some choice of reads still grow pco?
                    let more = Instant::now();
                    if r.last() == round {
                        r.add_round(&mut enc);
                    }
                    goal = Some(r.grows(&mut enc, round));
                    growing = true;
                    terms.sync(&enc.store, &solver);
                    outcome.stats.generation_ms += ms(more.elapsed());
                    continue;
                }
                _ => {
                    // Exact and integer ranks: no prediction. Rounds: every choice of reads
                    // has reached its least pco, acyclic.
                    outcome.verdict = Verdict::NoPrediction;
                    return Ok(outcome);
                }
            },
            SatResult::Sat => {}
        }
        if growing {
            // Some choice of reads needs another round: ask for a cycle there.
            let more = Instant::now();
            let r = rounds.as_mut().expect("growing only with rounds");
            round += 1;
            goal = Some(r.cyclic(&mut enc, round));
            growing = false;
            terms.sync(&enc.store, &solver);
            outcome.stats.generation_ms += ms(more.elapsed());
            continue;
        }
        // A model can be lost when Z3 is interrupted right after `sat` (deadline, memory
        // watchdog): the answer is then unknown, like an interrupted call.
        let Some(model) = solver.get_model() else {
            outcome.reason = Some(stopped_reason(deadline));
            return Ok(outcome);
        };
        let verification = Instant::now();
        let values = extract::ModelValues::new(&terms, &model);
        let value = |l| values.get(l);
        let Some(assignment) = extract::read_assignment(&enc, value).filter(|_| values.complete())
        else {
            outcome.reason = Some(stopped_reason(deadline));
            return Ok(outcome);
        };
        let built = extract::build(&space, &assignment).map_err(PredictError::Internal)?;
        // PC, SI: boundary transactions commit with their whole write sets (isolation_si_pc).
        let full = if is_si_pc(level) {
            Some(extract::build_with(&space, &assignment, true).map_err(PredictError::Internal)?)
        } else {
            None
        };
        let verdict = reverify(
            full.as_ref().map_or(&built.history, |f| &f.history),
            &built.history,
            level,
            deadline,
            lazy_level,
            approx_by_instances.then_some(options.strategy),
        )?;
        outcome.stats.verification_ms += ms(verification.elapsed());
        let by_instances = approx_by_instances
            || (options.strategy, options.exact) == (Strategy::ExactStrict, ExactMethod::Instances);
        if let (Reverified::Serializable(order), true) = (&verdict, by_instances) {
            // A serializable candidate: its serial order becomes an instance of the
            // quantified formula, refuting every candidate it also explains.
            let more = Instant::now();
            let position = node_positions(&space, &built, order);
            exact::instance(&mut enc, &position);
            terms.sync(&enc.store, &solver);
            outcome.stats.instances += 1;
            outcome.stats.generation_ms += ms(more.elapsed());
            continue;
        }
        if let (Reverified::LevelFails(core), true) = (&verdict, lazy_level) {
            let more = Instant::now();
            outcome.stats.level_clauses += 1;
            let clause = full
                .as_ref()
                .filter(|_| !core.is_empty())
                .and_then(|f| level_core::core_clause(&enc, &assignment, f, core, level, deadline))
                .unwrap_or_else(|| lazy::level_clause(&enc, value, &assignment));
            if !values.complete() {
                // A clause read off a model Z3 stopped giving values for may be wrong.
                outcome.reason = Some(stopped_reason(deadline));
                return Ok(outcome);
            }
            enc.store.clause(&clause);
            terms.sync(&enc.store, &solver);
            outcome.stats.generation_ms += ms(more.elapsed());
            continue;
        }
        if let Reverified::AcyclicUnserializable = verdict {
            // Unserializable but without a pco cycle: no approximate prediction, and no serial
            // order to refute others with; blocked alone.
            let lits = extract::assignment_literals(&enc, value);
            if !values.complete() {
                outcome.reason = Some(stopped_reason(deadline));
                return Ok(outcome);
            }
            let clause: Vec<formula::Lit> = lits.iter().map(|l| l.not()).collect();
            enc.store.clause(&clause);
            terms.sync(&enc.store, &solver);
            outcome.stats.instances += 1;
            continue;
        }
        match verdict {
            Reverified::AcyclicUnserializable => unreachable!("handled above"),
            Reverified::Yes => {
                outcome.verdict = Verdict::Predicted;
                let p = describe(history, built, None);
                outcome.predictions = vec![p.clone()];
                outcome.prediction = Some(p);
                return Ok(outcome);
            }
            Reverified::Unknown(reason) => {
                outcome.reason = Some(format!("re-verification: {reason}"));
                return Ok(outcome);
            }
            Reverified::LevelFails(_) | Reverified::Serializable(_) => {
                outcome.stats.rejected_models += 1;
                if outcome.stats.rejected_models > options.max_rejected {
                    outcome.reason = Some(format!(
                        "{} models failed re-verification",
                        outcome.stats.rejected_models
                    ));
                    return Ok(outcome);
                }
                let lits = extract::assignment_literals(&enc, value);
                if !values.complete() {
                    outcome.reason = Some(stopped_reason(deadline));
                    return Ok(outcome);
                }
                let negated: Vec<z3::ast::Bool> =
                    lits.iter().filter_map(|&l| terms.term(l.not())).collect();
                solver.assert(z3::ast::Bool::or(&negated));
            }
        }
    }
}

enum Reverified {
    Yes,
    /// Approximate strategies by instances: valid, unserializable, `pco` acyclic.
    AcyclicUnserializable,
    /// With the core of a pc/si violation when asked for (see [`scalable::LevelCheck`]).
    LevelFails(Vec<TxnId>),
    Serializable(Vec<TxnId>),
    Unknown(String),
}

/// The predicted history satisfies the level (checker; `level_h`, which under SI also holds
/// the boundary transactions' later writes) and is unserializable (exact check on `h`); with
/// `pco_judged` (approximate strategies searched by instances) has a `pco` cycle
/// ([`scalable::judge_unserializability`]), with a serial order when serializable.
fn reverify(
    level_h: &History,
    h: &History,
    level: Level,
    deadline: Option<Instant>,
    core: bool,
    pco_judged: Option<Strategy>,
) -> Result<Reverified, PredictError> {
    let checked = if is_si_pc(level) { level_h } else { h };
    match scalable::check_level(checked, level, deadline, core)? {
        scalable::LevelCheck::Fails(core) => return Ok(Reverified::LevelFails(core)),
        scalable::LevelCheck::Holds => {}
        scalable::LevelCheck::Unknown => return Ok(Reverified::Unknown("timeout".to_string())),
    }
    if let Some(strategy) = pco_judged {
        return Ok(
            match scalable::judge_unserializability(h, strategy, deadline)? {
                scalable::Judgement::Prediction(_) => Reverified::Yes,
                scalable::Judgement::Serializable(Some(order)) => Reverified::Serializable(order),
                scalable::Judgement::Serializable(None) => Reverified::AcyclicUnserializable,
                scalable::Judgement::Unknown(reason) => Reverified::Unknown(reason),
                scalable::Judgement::LevelFails(_) => {
                    unreachable!("judge_unserializability does not check the level")
                }
            },
        );
    }
    match ser::is_serializable(h, remaining(deadline)) {
        Ok(SerVerdict::Unserializable) => Ok(Reverified::Yes),
        Ok(SerVerdict::Serializable { order }) => Ok(Reverified::Serializable(order)),
        Ok(SerVerdict::Unknown { reason }) => Ok(Reverified::Unknown(reason)),
        Err(e) => Err(PredictError::Internal(format!(
            "predicted history is malformed: {e}"
        ))),
    }
}

/// Why "none" needs no search at SI (said in the outcome's reason).
pub const NO_PIVOT: &str = "no transaction of the run can be the middle of a dangerous \
    structure: none both reads a key it does not write that a transaction of another session \
    writes, and writes a key that a transaction of another session reads without writing it, \
    with neither of those forced into its snapshot (resp. it into theirs) by what the run's \
    earlier transactions read; snapshot isolation then allows only serializable executions of \
    these transactions (Fekete et al.: an unserializable SI execution has such a transaction)";

/// The scalable engine's pipeline after the level check ([`scalable`]); `observed_order`: a
/// verified serial order of the observed history, if the level check found the one
/// [`scalable::observed_serializability`] would.
fn predict_scalable(
    history: &History,
    options: &PredictOptions,
    deadline: Option<Instant>,
    mut outcome: PredictOutcome,
    observed_order: Option<Vec<TxnId>>,
) -> Result<PredictOutcome, PredictError> {
    let verification = Instant::now();
    let observed = match observed_order {
        Some(order) => SerVerdict::Serializable { order },
        None => scalable::observed_serializability(history, deadline)?,
    };
    outcome.stats.verification_ms += ms(verification.elapsed());
    let order = match observed {
        SerVerdict::Serializable { order } => order,
        SerVerdict::Unserializable => {
            outcome.verdict = Verdict::ObservedUnserializable;
            return Ok(outcome);
        }
        SerVerdict::Unknown { reason } => {
            outcome.reason = Some(format!(
                "checking the observed history for serializability: {reason}"
            ));
            return Ok(outcome);
        }
    };
    // SI: an SI history without a pivot is serializable (Fekete et al.'s dangerous structure,
    // [`dangerous`]), and every prediction's pivots are pivots of the observed run.
    if options.level == Level::Snapshot && dangerous::structures(history).is_empty() {
        outcome.verdict = Verdict::NoPrediction;
        outcome.reason = Some(NO_PIVOT.to_string());
        return Ok(outcome);
    }
    let mut found = Vec::new();
    let end = scalable::search(
        history,
        &order,
        options.level,
        options.strategy,
        deadline,
        options.memory,
        options.max.max(1),
        &mut found,
        &mut outcome.stats,
    )?;
    match end {
        scalable::End::Paper => {
            // Small enough for the paper-form encodings, whose eager constraints prove "no
            // prediction" faster than the sparse ones (pc, si: causal eagerly, the level
            // lazily; approximate strategies: `pco` judged after the fact).
            return predict_paper(history, options, deadline, outcome, true);
        }
        scalable::End::Unknown(reason) => {
            outcome.reason = Some(reason);
        }
        scalable::End::Found { complete, stopped } => {
            outcome.reason = stopped.map(|r| format!("search stopped early: {r}"));
            if found.is_empty() {
                outcome.verdict = Verdict::NoPrediction;
            } else {
                outcome.verdict = Verdict::Predicted;
                outcome.stats.exhaustive = Some(complete);
                // Each description proves a shortest cycle (milliseconds on a few hundred
                // transactions): in parallel, as `--max all` can ask for hundreds.
                outcome.predictions = found
                    .into_par_iter()
                    .map(|(built, cycle)| describe(history, built, cycle))
                    .collect();
                outcome.prediction = outcome.predictions.first().cloned();
            }
        }
    }
    Ok(outcome)
}

/// Most predicted transactions for which the explanation is the *shortest* `pco` cycle
/// ([`explain::pco_cycle`], quadratic memory); above, the cycle saturation found is used.
const SHORTEST_CYCLE_MAX_TXNS: usize = 3000;

/// The user-facing description of a verified prediction; `cycle`: a `pco` cycle of the
/// predicted history already found (used when the history is too big for the shortest one).
fn describe(observed: &History, built: extract::Built, cycle: Option<Vec<PcoEdge>>) -> Prediction {
    let h = observed;
    let label = |t: TxnId| h.txn_label(t);
    let changed_reads = built
        .changed
        .iter()
        .map(|&(op, old, new)| {
            let o = h.op(op);
            ChangedRead {
                op,
                line: o.line,
                txn: o.txn,
                txn_label: label(o.txn),
                key: h.key_name(o.key).to_string(),
                old_writer: old,
                old_writer_label: label(old),
                new_writer: new,
                new_writer_label: label(new),
            }
        })
        .collect();
    let boundaries = built
        .boundaries
        .iter()
        .map(|b| SessionBoundary {
            session: b.session,
            external_id: h.sessions()[b.session as usize].external_id,
            txn: b.txn,
            txn_label: b.txn.map(label),
            read: b.read,
            line: b.read.map(|r| h.op(r).line),
            included_txns: b.included_txns,
            committed_txns: h.sessions()[b.session as usize]
                .txns()
                .filter(|&t| h.txn(t).is_committed())
                .count() as u32,
        })
        .collect();
    let origin = &built.origin;
    let (cycle, facts) = if built.history.txn_count() <= SHORTEST_CYCLE_MAX_TXNS {
        match explain::explain(&built.history, origin, &label) {
            Some((cycle, facts)) => (Some(cycle), facts),
            None => (None, Vec::new()),
        }
    } else {
        let cycle = cycle.or_else(|| match saturate::saturate(&built.history, None) {
            saturate::Pco::Cyclic(c) => Some(c),
            _ => None,
        });
        (
            cycle.map(|c| explain::explain_unproven(&built.history, origin, &label, &c)),
            Vec::new(),
        )
    };
    Prediction {
        boundaries,
        changed_reads,
        cycle,
        facts,
        history: built.history,
        txn_origin: built.origin,
    }
}

/// Positions of every node for an exact instance: the candidate's serial order (predicted
/// transaction ids) mapped to nodes, then the nodes the candidate excludes, in session order.
pub(crate) fn node_positions(space: &Space, built: &extract::Built, order: &[TxnId]) -> Vec<u32> {
    let n = space.nodes();
    let mut node_of_txn = vec![space::NONE; space.history.txn_count()];
    for (node, &t) in space.node_txn.iter().enumerate() {
        node_of_txn[t as usize] = node as u32;
    }
    let mut position = vec![u32::MAX; n];
    let mut next = 0u32;
    for &t in order {
        let node = node_of_txn[built.origin[t as usize] as usize];
        if node != space::NONE {
            position[node as usize] = next;
            next += 1;
        }
    }
    for p in position.iter_mut().filter(|p| **p == u32::MAX) {
        *p = next;
        next += 1;
    }
    position
}

/// Prefix consistency and snapshot isolation: their commit order is part of the paper-form
/// encoding (`isolation_si_pc`) and they are checked by [`ser::check_strong`].
fn is_si_pc(level: Level) -> bool {
    matches!(level, Level::Prefix | Level::Snapshot)
}

fn remaining(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_si_pc;
