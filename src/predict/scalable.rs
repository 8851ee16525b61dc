//! The scalable prediction engine (docs/prediction.md "The scalable engine"): the same answers
//! as the paper-form encodings of IsoPredict (PLDI'24 §4, appendix B), with a cost that follows
//! the prefix a prediction needs instead of the cube of the history.
//!
//! 1. The observed history must be serializable ([`observed_serializability`]); an
//!    unserializable observed run is the answer itself. Then every prefix of it closed under
//!    write–read order is serializable too, and a prediction needs a changed read.
//! 2. **Seeds** ([`super::seeds`]): candidate predictions shaped like common anomalies, built
//!    and decided without the solver ([`judge`]); most predictions are found here.
//! 3. **Solver** ([`super::lazy`]): the feasible-prefix encoding alone, with weak isolation and
//!    unserializability added lazily from the checkers' verdicts on each candidate — complete,
//!    so "no prediction" is exact. Its size (read choices × candidate writers) is estimated first
//!    and checked against the memory budget.
//!
//! Every candidate is decided by the same exact judgement: valid at the level by
//! [`crate::check::check`], and unserializable — a cycle of the least `pco`
//! ([`super::saturate`]) for the approximate strategies, no serial order for exact-strict.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use super::dangerous::has_pivot;
use super::lazy::{self, Found, LazyEnd};
use super::prefix::Domains;
use super::saturate::{saturate, Pco};
use super::seeds::{for_each_pivot_seed, for_each_seed, Seed};
use super::serial::greedy_serial_order;
use super::space::Space;
use super::{PcoEdge, PredictError, PredictStats, Strategy};
use crate::check::{self, CheckOptions, Level};
use crate::history::{History, OpKind, TxnId};
use crate::ser::{self, SerVerdict};

/// Bytes the solver phase is estimated to take per candidate writer of a read choice (Z3
/// terms and clauses of the selector, its exactly-one constraint, the boundary implication
/// and the per-key write–read literal, and the solver's copies; measured 8–10 KB on generated
/// histories of 1,000 transactions).
pub(crate) const BYTES_PER_CANDIDATE: u64 = 10 * 1024;

/// Time the solver phase is estimated to take to build its encoding per candidate writer
/// (measured ≈ 50 µs on a loaded 2-core machine); the phase is skipped when the remaining time
/// is shorter.
const BUILD_TIME_PER_CANDIDATE: Duration = Duration::from_micros(50);

/// The observed history's serializability: the one place the prediction pipeline asks it.
/// Cheap sound answers first — a greedy replay ([`greedy_serial_order`]), verified; saturate
/// `pco` ([`saturate`]; a cycle: unserializable), then try its topological order and a greedy
/// replay guided by it as serial orders, verified — and the exact check ([`ser::is_serializable`]: search, then Z3) only when none
/// of them answers.
pub(crate) fn observed_serializability(
    h: &History,
    deadline: Option<Instant>,
) -> Result<SerVerdict, PredictError> {
    // Under the known write order, if the input shows one (Elle list-append reads): the
    // rewritten history keeps the transaction ids, so its serial order is one of `h`.
    let rewritten = h.with_write_order_as_reads();
    let h = rewritten.as_ref().unwrap_or(h);
    if let Some(order) = greedy_serial_order(h, &[], deadline) {
        if ser::verify_serial_order(h, &order).is_ok() {
            return Ok(SerVerdict::Serializable { order });
        }
    }
    match saturate(h, deadline) {
        Pco::Cyclic(_) => return Ok(SerVerdict::Unserializable),
        Pco::Acyclic(order, edges) => {
            if ser::verify_serial_order(h, &order).is_ok() {
                return Ok(SerVerdict::Serializable { order });
            }
            if let Some(order) = greedy_serial_order(h, &edges, deadline) {
                if ser::verify_serial_order(h, &order).is_ok() {
                    return Ok(SerVerdict::Serializable { order });
                }
            }
        }
        Pco::GaveUp => {}
    }
    ser::is_serializable(h, remaining(deadline)).map_err(|e| PredictError::InvalidObservation {
        op: match e {
            ser::SerError::ReadWithoutCommittedWriter { read } => read,
        },
        message: e.to_string(),
    })
}

/// The verdict on one candidate prediction.
pub(crate) enum Judgement {
    /// Valid at the level and unserializable (with a `pco` cycle when one exists).
    Prediction(Option<Vec<PcoEdge>>),
    /// Not valid at the level; pc, si: the core of the violation (transactions of the checked
    /// history whose sub-history already fails; empty when none was found).
    LevelFails(Vec<TxnId>),
    /// Valid but not a prediction: serializable (with a serial order), or — approximate
    /// strategies — acyclic `pco` yet unserializable (`None`).
    Serializable(Option<Vec<TxnId>>),
    /// The deadline passed or a check gave up.
    Unknown(String),
}

/// Decides a candidate predicted history exactly: `level_h` at the level (for prefix
/// consistency and snapshot isolation the candidate with its boundary transactions' whole
/// write sets, [`super::prefix::Domains::build_with`]; else `p` itself), `p` for
/// unserializability. `core`: shrink a pc/si violation to its core (the solver phase blocks
/// through it; seeds do not need it).
pub(crate) fn judge(
    p: &History,
    level_h: &History,
    level: Level,
    strategy: Strategy,
    deadline: Option<Instant>,
    core: bool,
) -> Result<Judgement, PredictError> {
    match check_level(level_h, level, deadline, core)? {
        LevelCheck::Fails(core) => return Ok(Judgement::LevelFails(core)),
        LevelCheck::Holds => {}
        LevelCheck::Unknown => {
            return Ok(Judgement::Unknown("timeout checking the level".to_string()))
        }
    }
    judge_unserializability(p, strategy, deadline)
}

/// The second half of [`judge`], for a candidate already found valid at the level: whether
/// `p` is a prediction for `strategy` (a `pco` cycle, or for exact-strict no serial order).
pub(crate) fn judge_unserializability(
    p: &History,
    strategy: Strategy,
    deadline: Option<Instant>,
) -> Result<Judgement, PredictError> {
    let (order, edges) = match saturate(p, deadline) {
        Pco::Cyclic(cycle) => return Ok(Judgement::Prediction(Some(cycle))),
        Pco::GaveUp => return Ok(Judgement::Unknown("timeout".to_string())),
        Pco::Acyclic(order, edges) => (order, edges),
    };
    if ser::verify_serial_order(p, &order).is_ok() {
        return Ok(Judgement::Serializable(Some(order)));
    }
    if let Some(order) = greedy_serial_order(p, &edges, deadline) {
        if ser::verify_serial_order(p, &order).is_ok() {
            return Ok(Judgement::Serializable(Some(order)));
        }
    }
    match ser::is_serializable(p, remaining(deadline)) {
        Ok(SerVerdict::Serializable { order }) => Ok(Judgement::Serializable(Some(order))),
        Ok(SerVerdict::Unserializable) if strategy == Strategy::ExactStrict => {
            Ok(Judgement::Prediction(None))
        }
        Ok(SerVerdict::Unserializable) => Ok(Judgement::Serializable(None)),
        Ok(SerVerdict::Unknown { reason }) => Ok(Judgement::Unknown(reason)),
        Err(e) => Err(PredictError::Internal(format!(
            "predicted history is malformed: {e}"
        ))),
    }
}

/// A history's verdict at a level.
pub(crate) enum LevelCheck {
    /// Valid.
    Holds,
    /// Violated; pc, si with `core` asked: the transactions of a failing sub-history (empty
    /// when the checker found none, e.g. a causal violation).
    Fails(Vec<TxnId>),
    /// Undecided before the deadline.
    Unknown,
}

/// Most time the exact checker may spend shrinking a violation to its core.
const CORE_BUDGET: Duration = Duration::from_millis(500);

/// `h` at `level`. Prefix consistency and snapshot isolation are decided by the exact checker
/// [`ser::check_strong`] (Biswas & Enea's prefix search on the read/write split, Z3 when it
/// gives up), with the core of a violation when `core`; the other levels by [`check::check`].
pub(crate) fn check_level(
    h: &History,
    level: Level,
    deadline: Option<Instant>,
    core: bool,
) -> Result<LevelCheck, PredictError> {
    let Some(strong) = ser::StrongLevel::from_level(level) else {
        return Ok(
            if check::check(h, level, &CheckOptions::default())?.is_consistent() {
                LevelCheck::Holds
            } else {
                LevelCheck::Fails(Vec::new())
            },
        );
    };
    let left = remaining(deadline);
    let options = ser::StrongOptions {
        timeout: left,
        explain: core,
        explain_timeout: left.map_or(CORE_BUDGET, |l| l.min(CORE_BUDGET)),
        ..ser::StrongOptions::default()
    };
    let report = ser::check_strong(h, strong, &options)?;
    Ok(match report.verdict {
        ser::Verdict::Consistent => LevelCheck::Holds,
        ser::Verdict::Violated => LevelCheck::Fails(
            report
                .violation
                .map(|v| v.core.iter().map(|c| c.txn.id).collect())
                .unwrap_or_default(),
        ),
        ser::Verdict::Unknown => LevelCheck::Unknown,
    })
}

/// Read choices × candidate writers the solver phase would encode (an upper bound of the
/// space's candidate lists), computed in one pass over the history.
pub(crate) fn estimated_candidates(h: &History, per_read: bool) -> u64 {
    let mut writers = vec![1u64; h.key_count()]; // t0
    let mut readers = vec![0u64; h.key_count()];
    for t in h
        .committed_txns()
        .filter(|&t| t != crate::history::INITIAL_TXN)
    {
        for &k in h.keys_written(t) {
            writers[k as usize] += 1;
        }
        let mut seen: Vec<u32> = Vec::new();
        for o in h.txn(t).ops() {
            let op = h.op(o);
            let external = op.kind == OpKind::Read && h.writer_txn(o) != Some(t);
            if external && (per_read || !seen.contains(&op.key)) {
                readers[op.key as usize] += 1;
                seen.push(op.key);
            }
        }
    }
    // Keys with a single writer (t0) never have a choice.
    (0..h.key_count())
        .filter(|&k| writers[k] > 1)
        .map(|k| readers[k] * writers[k])
        .sum()
}

/// How the scalable search ended.
pub(crate) enum End {
    /// Predictions (up to the wanted number), whether the search was complete (no further
    /// prediction exists), and why it stopped early if it did.
    Found {
        complete: bool,
        stopped: Option<String>,
    },
    /// Nothing found and the search was incomplete: why.
    Unknown(String),
    /// Nothing found by the seeds, and the space is small enough for the paper-form encodings
    /// (whose eager level constraints decide "no prediction" faster than lazy clauses).
    Paper,
}

/// Most bytes the paper-form encodings may be estimated to take for the solver phase to hand
/// them the search (nodes³ × [`super::PAPER_BYTES_PER_NODE_CUBE`]: about 70 nodes).
const PAPER_FALLBACK_BYTES: u64 = 1 << 30;

/// Runs seeds, then the solver phase, until `want` predictions are found, the space is
/// exhausted, the deadline passes or the memory budget forbids the solver phase.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search(
    h: &History,
    order: &[TxnId],
    level: Level,
    strategy: Strategy,
    deadline: Option<Instant>,
    memory_bytes: Option<u64>,
    want: usize,
    found: &mut Vec<Found>,
    stats: &mut PredictStats,
) -> Result<End, PredictError> {
    let boundary = strategy.boundary();
    let per_read = level == Level::ReadCommitted;
    let snapshots = matches!(level, Level::Prefix | Level::Snapshot);
    let generation = Instant::now();
    let dom = Domains::new(h, boundary);
    let candidates = estimated_candidates(h, per_read);
    stats.candidates = candidates;
    let solver_fits = memory_bytes.map_or(true, |m| {
        candidates.saturating_mul(BYTES_PER_CANDIDATE) <= m
    });
    stats.generation_ms += super::ms(generation.elapsed());

    // Seeds: bounded when the solver phase can follow, so that it gets time.
    let seed_deadline = match (deadline, solver_fits) {
        (Some(d), true) => {
            let now = Instant::now();
            Some(now + d.saturating_duration_since(now) / 3)
        }
        (d, _) => d,
    };
    let verification = Instant::now();
    let mut failure: Option<Result<String, PredictError>> = None;
    let mut seeds = 0u32;
    let mut judge_seed = |seed: Seed| {
        if found.len() >= want {
            return ControlFlow::Break(());
        }
        if seed_deadline.is_some_and(|d| Instant::now() >= d) {
            failure = Some(Ok("timeout".to_string()));
            return ControlFlow::Break(());
        }
        if let Err(stop) = crate::interrupt::stop_point() {
            failure = Some(Err(stop.into()));
            return ControlFlow::Break(());
        }
        seeds += 1;
        // PC, SI: the level judges the boundary transactions' whole write sets, built first:
        // the candidate as predicted is built only when the level allows it (the same reads,
        // so the same changes). Most seeds fail the level, and building is most of their cost.
        let build =
            |boundary_writes| dom.build_with(&seed.boundary, &seed.changed, boundary_writes);
        let first = match build(snapshots) {
            Ok(b) => b,
            Err(e) => {
                failure = Some(Err(PredictError::Internal(e)));
                return ControlFlow::Break(());
            }
        };
        if found
            .iter()
            .any(|(f, _)| same_anomaly(&f.changed, &first.changed))
        {
            return ControlFlow::Continue(());
        }
        // SI: no pivot, no prediction (an SI history without one is serializable).
        if level == Level::Snapshot && !has_pivot(&first.history) {
            return ControlFlow::Continue(());
        }
        let built = if snapshots {
            match check_level(&first.history, level, deadline, false) {
                Ok(LevelCheck::Holds) => {}
                Ok(LevelCheck::Fails(_)) => return ControlFlow::Continue(()),
                Ok(LevelCheck::Unknown) => {
                    failure = Some(Ok("timeout checking the level".to_string()));
                    return ControlFlow::Break(());
                }
                Err(e) => {
                    failure = Some(Err(e));
                    return ControlFlow::Break(());
                }
            }
            match build(false) {
                Ok(b) => b,
                Err(e) => {
                    failure = Some(Err(PredictError::Internal(e)));
                    return ControlFlow::Break(());
                }
            }
        } else {
            first
        };
        let judgement = if snapshots {
            judge_unserializability(&built.history, strategy, deadline)
        } else {
            judge(
                &built.history,
                &built.history,
                level,
                strategy,
                deadline,
                false,
            )
        };
        match judgement {
            Ok(Judgement::Prediction(cycle)) => found.push((built, cycle)),
            Ok(Judgement::Unknown(reason)) => {
                failure = Some(Ok(reason));
                return ControlFlow::Break(());
            }
            Ok(_) => {}
            Err(e) => {
                failure = Some(Err(e));
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    };
    // SI: a seed must hold a dangerous structure, and SI's all-or-nothing visibility rejects
    // the causal seeds' single changed reads of a transaction's writes.
    if level == Level::Snapshot {
        for_each_pivot_seed(&dom, order, &mut judge_seed);
    } else {
        for_each_seed(&dom, order, per_read, &mut judge_seed);
    }
    stats.verification_ms += super::ms(verification.elapsed());
    stats.seeds = seeds;
    if let Some(Err(e)) = failure {
        return Err(e);
    }
    if found.len() >= want {
        return Ok(End::Found {
            complete: false,
            stopped: None,
        });
    }
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now());
        let build = BUILD_TIME_PER_CANDIDATE.saturating_mul(candidates.min(u32::MAX as u64) as u32);
        if left.is_zero() && !found.is_empty() {
            return Ok(incomplete(found, "timeout".to_string()));
        }
        if left.is_zero() {
            // Say what the time went to and what proving "no prediction" would take.
            let solver = if solver_fits {
                "no time was left for".to_string()
            } else {
                format!(
                    "the memory budget ({} MB) does not allow",
                    memory_bytes.unwrap_or(0) >> 20
                )
            };
            return Ok(incomplete(
                found,
                format!(
                    "timeout: {seeds} seed candidate(s) judged, none a prediction, and {solver} \
                     the complete solver phase (~{candidates} candidate writers, ~{} MB) that \
                     would prove there is none; try a longer --timeout{}",
                    candidates.saturating_mul(BYTES_PER_CANDIDATE) >> 20,
                    if solver_fits {
                        ""
                    } else {
                        " and a larger --memory"
                    }
                ),
            ));
        }
        if build > left {
            return Ok(incomplete(
                found,
                format!(
                    "timeout: the solver phase would encode ~{candidates} candidate writers \
                     (~{:.0} s to build), more than the {:.1} s left; try a longer --timeout",
                    build.as_secs_f64(),
                    left.as_secs_f64()
                ),
            ));
        }
    }
    if !solver_fits {
        return Ok(incomplete(
            found,
            format!(
                "memory limit: the solver phase would encode ~{} candidate writers (~{} MB), over \
                 the {} MB budget; try a larger --memory, or --max 1",
                candidates,
                candidates.saturating_mul(BYTES_PER_CANDIDATE) >> 20,
                memory_bytes.unwrap_or(0) >> 20
            ),
        ));
    }
    let generation = Instant::now();
    // PC, SI: every transaction's start is a threshold (and under SI keys written twice
    // matter), so the interval of a model's boundaries fixes which transactions — with their
    // whole write sets — are in: the level clauses of `lazy` block boundaries from below.
    let space = if snapshots {
        Space::for_snapshots(h, boundary, level == Level::Snapshot)
    } else {
        Space::new(h, boundary, per_read)
    }
    .map_err(|e| PredictError::InvalidObservation {
        op: e.op,
        message: e.message,
    })?;
    stats.generation_ms += super::ms(generation.elapsed());
    let nodes = space.nodes() as u64;
    let paper = nodes
        .saturating_mul(nodes)
        .saturating_mul(nodes)
        .saturating_mul(super::PAPER_BYTES_PER_NODE_CUBE);
    if found.is_empty()
        && want == 1
        && paper <= PAPER_FALLBACK_BYTES.min(memory_bytes.unwrap_or(u64::MAX))
    {
        return Ok(End::Paper);
    }
    match lazy::search(&space, level, strategy, deadline, want, found, stats)? {
        LazyEnd::Exhausted => Ok(End::Found {
            complete: true,
            stopped: None,
        }),
        LazyEnd::Enough => Ok(End::Found {
            complete: false,
            stopped: None,
        }),
        LazyEnd::Unknown(reason) => Ok(incomplete(found, reason)),
    }
}

fn incomplete(found: &[Found], reason: String) -> End {
    if found.is_empty() {
        End::Unknown(reason)
    } else {
        End::Found {
            complete: false,
            stopped: Some(reason),
        }
    }
}

/// Two predictions show the same anomaly when the second changes every read the first changes,
/// the same way (read op, new writer).
pub(crate) fn same_anomaly(
    first: &[(crate::history::OpId, TxnId, TxnId)],
    second: &[(crate::history::OpId, TxnId, TxnId)],
) -> bool {
    first
        .iter()
        .all(|&(o, _, w)| second.iter().any(|&(o2, _, w2)| o2 == o && w2 == w))
}

fn remaining(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}
