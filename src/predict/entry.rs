//! The entry of prediction ([`predict`]): the limits (deadline, memory watchdog, a fresh Z3
//! context), step 1 of the module documentation — the observed history at the level — and the
//! choice of the engine that answers the rest ([`super::paper`] or [`super::scalable`]).

use std::time::Instant;

use super::judge::{judge, How, Judged};
use super::{
    candidate, is_si_pc, paper, scalable, z3_memory, Engine, PredictError, PredictOptions,
    PredictOutcome, PredictStats, Verdict,
};
use crate::check::Level;
use crate::history::{History, TxnId};

/// Predicts an unserializable execution of the program that produced `history`, valid at
/// `options.level`, with `options.strategy`. See the module documentation for the pipeline.
///
/// Runs in a fresh Z3 context (the z3 crate's default context is thread-local and keeps
/// state between calls), so the same input and options give the same prediction every time.
/// A stop requested by the user ([`crate::interrupt`]) ends it with
/// [`PredictError::Interrupted`], unless predictions were already found: those are kept (each
/// verified), with [`super::SEARCH_INTERRUPTED`] as the reason the search stopped early.
pub fn predict(
    history: &History,
    options: &PredictOptions,
) -> Result<PredictOutcome, PredictError> {
    z3::with_z3_config(&z3::Config::new(), || {
        // Z3's allocations under the memory budget, and its calls within the deadline (a
        // watchdog interrupts it).
        let deadline = deadline(options, Instant::now());
        let (outcome, peak) = z3_memory::watch(options.memory, deadline, || {
            predict_in_context(history, options)
        });
        if crate::interrupt::requested() {
            return match outcome {
                Ok(mut o) if o.verdict == Verdict::Predicted && o.prediction.is_some() => {
                    if o.predictions.is_empty() {
                        o.predictions = o.prediction.iter().cloned().collect();
                    }
                    // Cut only if it was still looking: not complete, fewer than wanted.
                    if o.stats.exhaustive != Some(true) && o.predictions.len() < options.max {
                        o.reason = Some(format!(
                            "search stopped early: {}",
                            super::SEARCH_INTERRUPTED
                        ));
                    }
                    Ok(o)
                }
                _ => Err(crate::interrupt::Interrupted.into()),
            };
        }
        let passed = deadline.is_some_and(|d| Instant::now() >= d);
        let mut outcome = match outcome {
            // An interrupted Z3 may fail to give a model: that is the limit's answer.
            Err(PredictError::Internal(e)) if passed || peak.is_some() => PredictOutcome {
                reason: Some(format!(
                    "{} (the solver was stopped: {e})",
                    if peak.is_some() {
                        "memory limit"
                    } else {
                        "timeout"
                    }
                )),
                ..PredictOutcome::unknown(options, PredictStats::default())
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

/// The earlier of `options.timeout` counted from `start` and `options.deadline`.
fn deadline(options: &PredictOptions, start: Instant) -> Option<Instant> {
    match (options.timeout.map(|t| start + t), options.deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
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

/// [`predict`] in the calling thread's current Z3 context: the observed history's check, then
/// the engine of `options.engine`.
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
    let deadline = deadline(options, Instant::now());
    let mut outcome = PredictOutcome::unknown(
        options,
        PredictStats {
            engine: Some(options.engine),
            ..PredictStats::default()
        },
    );
    let observed_order = match check_observed(history, level, deadline, &mut outcome)? {
        Observed::Answered => return Ok(outcome),
        Observed::Valid { serial_order } => serial_order,
    };
    match options.engine {
        Engine::Scalable => scalable::predict(history, options, deadline, outcome, observed_order),
        Engine::Paper => paper::predict(history, options, deadline, outcome),
    }
}

/// What the observed history's check found.
enum Observed {
    /// The outcome is the answer (the observed history violates the level, or its check did
    /// not finish); nothing is predicted.
    Answered,
    /// Valid at the level. `serial_order`: a verified serial order found on the way, when it
    /// is the one the scalable engine would find itself (the same history: the rewritten one
    /// at SI, and at PC when the input shows no write order).
    Valid { serial_order: Option<Vec<TxnId>> },
}

/// Step 1: the observed history at the level (pc, si: the exact checker, unless a verified
/// serial order shows it serializable, hence SI and PC: Biswas & Enea Lemma 2.4). The
/// checkers use the known write order (if the input shows one); for SI it is given as reads
/// (`History::with_write_order_as_reads`, exact there; stronger than the order under PC, so
/// not used for PC). A violation or an unknown is written into `outcome`.
fn check_observed(
    history: &History,
    level: Level,
    deadline: Option<Instant>,
    outcome: &mut PredictOutcome,
) -> Result<Observed, PredictError> {
    if !is_si_pc(level) {
        let judged = judge(history, level, How::Checker { core: false }, deadline)
            .map_err(candidate::level_error)?;
        if let Judged::Fails {
            report: Some(report),
            ..
        } = judged
        {
            outcome.verdict = Verdict::ObservedViolation;
            outcome.observed = Some(report);
            return Ok(Observed::Answered);
        }
        return Ok(Observed::Valid { serial_order: None });
    }
    let rewritten = (level == Level::Snapshot)
        .then(|| history.with_write_order_as_reads())
        .flatten();
    let observed = rewritten.as_ref().unwrap_or(history);
    let order = match judge(
        observed,
        Level::Serializable,
        How::GreedyOrderOnly,
        deadline,
    ) {
        Ok(Judged::Holds(order)) => order,
        _ => None,
    };
    let judged = if order.is_some() {
        Judged::Holds(None)
    } else {
        judge(observed, level, How::Checker { core: false }, deadline)
            .map_err(candidate::level_error)?
    };
    let serial_order = if level == Level::Snapshot || history.known_write_order().is_empty() {
        order
    } else {
        None
    };
    match judged {
        Judged::Holds(_) => Ok(Observed::Valid { serial_order }),
        Judged::Fails { .. } => {
            outcome.verdict = Verdict::ObservedViolation;
            outcome.reason = Some(format!("no commit order satisfies {}", level.full_name()));
            Ok(Observed::Answered)
        }
        Judged::Unknown(_) => {
            outcome.reason = Some("checking the observed history: timeout".to_string());
            Ok(Observed::Answered)
        }
    }
}
