//! The scalable prediction engine (docs/prediction.md "The scalable engine"): the same answers
//! as the paper-form encodings of IsoPredict (PLDI'24 §4, appendix B), with a cost that follows
//! the prefix a prediction needs instead of the cube of the history.
//!
//! 1. The observed history must be serializable ([`super::candidate::observed_serializability`]); an
//!    unserializable observed run is the answer itself. Then every prefix of it closed under
//!    write–read order is serializable too, and a prediction needs a changed read.
//! 2. **Seeds** ([`super::seeds`]): candidate predictions shaped like common anomalies, built
//!    and decided without the solver ([`super::candidate`]); most predictions are found here.
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

use rayon::prelude::*;

use super::candidate::{
    judge_candidate, judge_facts, judge_unserializability, level_error, observed_serializability,
    Criterion, Judgement, LEVEL_TIMEOUT,
};
use super::certificate::{conclude_none, static_certificate, Certificate, NO_PIVOT};
use super::dangerous::{self, has_pivot};
use super::extract;
use super::judge::{judge, How, Judged};
use super::lazy::{self, Found, FoundList, LazyEnd};
use super::prefix::Domains;
use super::seeds::{for_each_pivot_seed, for_each_seed, Seed};
use super::space::Space;
use super::{ms, PredictError, PredictOptions, PredictOutcome, PredictStats, Strategy, Verdict};
use crate::check::Level;
use crate::history::{History, TxnId};
use crate::ser::SerVerdict;

/// Bytes the solver phase is estimated to take per candidate writer of a read choice (Z3
/// terms and clauses of the selector, its exactly-one constraint, the boundary implication
/// and the per-key write–read literal, and the solver's copies; measured 8–10 KB on generated
/// histories of 1,000 transactions).
pub(crate) const BYTES_PER_CANDIDATE: u64 = 10 * 1024;

/// Time the solver phase is estimated to take to build its encoding per candidate writer
/// (measured ≈ 50 µs on a loaded 2-core machine); the phase is skipped when the remaining time
/// is shorter.
const BUILD_TIME_PER_CANDIDATE: Duration = Duration::from_micros(50);

/// The scalable engine's pipeline after the level check ([`scalable`]); `observed_order`: a
/// verified serial order of the observed history, if the level check found the one
/// [`super::candidate::observed_serializability`] would.
pub(crate) fn predict(
    history: &History,
    options: &PredictOptions,
    deadline: Option<Instant>,
    mut outcome: PredictOutcome,
    observed_order: Option<Vec<TxnId>>,
) -> Result<PredictOutcome, PredictError> {
    let verification = Instant::now();
    let observed = match observed_order {
        Some(order) => SerVerdict::Serializable { order },
        None => observed_serializability(history, deadline)?,
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
    // Static certificates: no read can change; writers ordered by happens-before (causal,
    // pc, si).
    if let Some(reason) = past_deadline(deadline, "the certificates")? {
        outcome.reason = Some(reason);
        return Ok(outcome);
    }
    if let Some((certificate, why)) = static_certificate(history, options.level) {
        conclude_none(&mut outcome, certificate, &why);
        return Ok(outcome);
    }
    // SI: an SI history without a pivot is serializable (Fekete et al.'s dangerous structure,
    // [`dangerous`]), and every prediction's pivots are pivots of the observed run.
    if let Some(reason) = past_deadline(deadline, "the search for dangerous structures")? {
        outcome.reason = Some(reason);
        return Ok(outcome);
    }
    // Computed once: the SI seeds are built from them.
    let structures = if options.level == Level::Snapshot {
        dangerous::structures(history)
    } else {
        Vec::new()
    };
    if options.level == Level::Snapshot && structures.is_empty() {
        conclude_none(&mut outcome, Certificate::NoPivot, NO_PIVOT);
        return Ok(outcome);
    }
    if let Some(reason) = past_deadline(deadline, "the seeds")? {
        outcome.reason = Some(reason);
        return Ok(outcome);
    }
    let mut found = Vec::new();
    let searched = search(
        history,
        &order,
        &structures,
        options.level,
        options.strategy,
        deadline,
        options.memory,
        options.max.max(1),
        &mut FoundList::new(&mut found, options.progress.as_deref()),
        &mut outcome.stats,
    );
    let end = match searched {
        // Stopped by the user after predictions were found: those are kept (each verified),
        // the search marked as cut ([`crate::interrupt::keep_findings`]).
        Err(PredictError::Interrupted(_)) if !found.is_empty() => End::Found {
            complete: false,
            stopped: Some(super::SEARCH_INTERRUPTED.to_string()),
        },
        other => other?,
    };
    match end {
        End::Paper => {
            // Small enough for the paper-form encodings, whose eager constraints prove "no
            // prediction" faster than the sparse ones (pc, si: causal eagerly, the level
            // lazily; approximate strategies: `pco` judged after the fact).
            return super::paper::solve_small_space(history, options, deadline, outcome);
        }
        End::Unknown(reason) => {
            outcome.reason = Some(reason);
        }
        End::Found { complete, stopped } => {
            outcome.reason = stopped.map(|r| format!("search stopped early: {r}"));
            if found.is_empty() {
                let why = super::certificate::search_exhausted_text(
                    options.strategy,
                    options.level,
                    &format!(
                        "{} read choices, {} of them open, {} candidate(s) judged",
                        outcome.stats.choices,
                        outcome.stats.open_choices,
                        outcome.stats.seeds + outcome.stats.level_clauses + outcome.stats.instances,
                    ),
                );
                conclude_none(&mut outcome, Certificate::SearchExhausted, &why);
            } else {
                outcome.verdict = Verdict::Predicted;
                outcome.stats.exhaustive = Some(complete);
                // Each description proves a shortest cycle (milliseconds on a few hundred
                // transactions): in parallel, as `--max all` can ask for hundreds.
                outcome.predictions = found
                    .into_par_iter()
                    .map(|(built, cycle)| super::describe::describe(history, built, cycle))
                    .collect();
                outcome.prediction = outcome.predictions.first().cloned();
            }
        }
    }
    Ok(outcome)
}

/// The gate before each phase of the scalable engine: a stop the user requested (Ctrl-C) ends
/// prediction; a deadline already passed gives the reason of the "unknown" (`timeout before
/// <phase>`), so that no phase starts after the time is up.
pub(crate) fn past_deadline(
    deadline: Option<Instant>,
    phase: &str,
) -> Result<Option<String>, PredictError> {
    crate::interrupt::stop_point()?;
    Ok(deadline
        .is_some_and(|d| Instant::now() >= d)
        .then(|| format!("timeout before {phase}")))
}

/// The solver phase's space at `level`, without the candidate writers no read can take
/// ([`Space::prune_forced_overwrites`]). PC, SI: every transaction's start is a threshold (and
/// under SI keys written twice matter), so the interval of a model's boundaries fixes which
/// transactions — with their whole write sets — are in: the level clauses of `lazy` block
/// boundaries from below.
fn solver_space(
    h: &History,
    level: Level,
    boundary: super::space::BoundaryKind,
) -> Result<Space<'_>, PredictError> {
    let per_read = level == Level::ReadCommitted;
    let mut space = if matches!(level, Level::Prefix | Level::Snapshot) {
        Space::for_snapshots(h, boundary, level == Level::Snapshot)
    } else {
        Space::new(h, boundary, per_read)
    }
    .map_err(|e| PredictError::InvalidObservation {
        op: e.op,
        message: e.message,
    })?;
    space.prune_forced_overwrites(level);
    Ok(space)
}

/// Read choices × candidate writers the solver phase encodes.
fn space_candidates(space: &Space) -> u64 {
    space
        .units
        .iter()
        .map(|u| space.cands(u.group).len() as u64)
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
/// them the search (nodes³ × [`super::paper::PAPER_BYTES_PER_NODE_CUBE`]: about 70 nodes).
const PAPER_FALLBACK_BYTES: u64 = 1 << 30;

/// Runs seeds, then the solver phase, until `want` predictions are found, the space is
/// exhausted, the deadline passes or the memory budget forbids the solver phase.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search(
    h: &History,
    order: &[TxnId],
    structures: &[dangerous::Structure],
    level: Level,
    strategy: Strategy,
    deadline: Option<Instant>,
    memory_bytes: Option<u64>,
    want: usize,
    found: &mut FoundList,
    stats: &mut PredictStats,
) -> Result<End, PredictError> {
    let boundary = strategy.boundary();
    let generation = Instant::now();
    let dom = Domains::new(h, boundary);
    stats.generation_ms += super::ms(generation.elapsed());
    if let Some(reason) = past_deadline(deadline, "the seeds")? {
        return Ok(End::Unknown(reason));
    }
    // Seeds first, for a third of the time left (the solver phase gets the rest): its space is
    // built only if they find too few (on TPC-C 10 × 200 building it is a quarter of the
    // work, and the seeds find a lost update at once).
    let third = deadline.map(|d| {
        let now = Instant::now();
        now + d.saturating_duration_since(now) / 3
    });
    let mut seeds = judge_seeds(
        &dom, order, structures, level, strategy, deadline, third, 0, want, found, stats,
    )?;
    // Whether the seeds stopped at their third of the time (rather than running out).
    let seeds_cut = third.is_some_and(|t| Instant::now() >= t);
    if found.len() >= want {
        return Ok(End::Found {
            complete: false,
            stopped: None,
        });
    }
    if let Some(reason) = past_deadline(deadline, "the solver phase's space")? {
        return Ok(incomplete(found, reason));
    }
    // The solver phase's space, with the candidate writers no read can take removed: its size
    // decides whether the phase fits. A lower bound of that size, counted first without
    // building the space, already decides it for runs of millions of reads (Wikipedia 20 ×
    // 500: ~10^7 reads of rows written once; the space itself would take gigabytes).
    let generation = Instant::now();
    let fits = |candidates: u64| {
        memory_bytes.map_or(true, |m| {
            candidates.saturating_mul(BYTES_PER_CANDIDATE) <= m
        })
    };
    let build_time = |candidates: u64| {
        BUILD_TIME_PER_CANDIDATE.saturating_mul(candidates.min(u32::MAX as u64) as u32)
    };
    let at_least = Space::choice_count(h, level == Level::ReadCommitted, level == Level::Snapshot);
    let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
    let (space, candidates, counted) =
        if !fits(at_least) || left.is_some_and(|left| build_time(at_least) > left) {
            (None, at_least, false)
        } else {
            let space = solver_space(h, level, boundary)?;
            let candidates = space_candidates(&space);
            (Some(space), candidates, true)
        };
    stats.candidates = candidates;
    let solver_fits = fits(candidates);
    stats.generation_ms += super::ms(generation.elapsed());
    let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
    let build = build_time(candidates);
    if seeds_cut && (!solver_fits || left.is_some_and(|left| build > left)) {
        // The solver phase cannot run: the seeds go on (after those already judged) until the
        // deadline.
        seeds += judge_seeds(
            &dom, order, structures, level, strategy, deadline, deadline, seeds, want, found, stats,
        )?;
        if found.len() >= want {
            return Ok(End::Found {
                complete: false,
                stopped: None,
            });
        }
    }
    if let Some(end) = solver_phase_out_of_reach(
        found,
        deadline,
        memory_bytes,
        seeds,
        candidates,
        counted,
        solver_fits,
    ) {
        return Ok(end);
    }
    // (Not built only when it cannot fit or be built in time, which ends the search above.)
    let space = match space {
        Some(space) => space,
        None => solver_space(h, level, boundary)?,
    };
    solver_phase(
        space,
        level,
        strategy,
        deadline,
        memory_bytes,
        want,
        found,
        stats,
    )
}

/// The seeds (step 2 of the module documentation), each built and judged until `want`
/// predictions are in `found` or `seed_deadline` passes; the number judged. `deadline`
/// bounds each judgement.
#[allow(clippy::too_many_arguments)]
fn judge_seeds(
    dom: &Domains,
    order: &[TxnId],
    structures: &[dangerous::Structure],
    level: Level,
    strategy: Strategy,
    deadline: Option<Instant>,
    seed_deadline: Option<Instant>,
    skip: u32,
    want: usize,
    found: &mut FoundList,
    stats: &mut PredictStats,
) -> Result<u32, PredictError> {
    let per_read = level == Level::ReadCommitted;
    let snapshots = matches!(level, Level::Prefix | Level::Snapshot);
    let verification = Instant::now();
    let mut failure: Option<Result<String, PredictError>> = None;
    let mut seeds = 0u32;
    let mut skipped = 0u32;
    let mut judge_seed = |seed: Seed| {
        if skipped < skip {
            skipped += 1;
            return ControlFlow::Continue(());
        }
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
        // A seed's boundaries are set directly: one that cuts a session another began after
        // is not a feasible prefix (the boundary domains forbid it to the solver).
        if extract::cuts_an_earlier_session(dom.h, &first) {
            return ControlFlow::Continue(());
        }
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
            match judge(
                &first.history,
                level,
                How::Checker { core: false },
                deadline,
            ) {
                Ok(Judged::Holds(_)) => match judge_facts(&first.history, level, deadline) {
                    None => {}
                    Some(Judgement::FactsFail) => return ControlFlow::Continue(()),
                    Some(Judgement::Unknown(reason)) => {
                        failure = Some(Ok(reason));
                        return ControlFlow::Break(());
                    }
                    Some(_) => {
                        failure = Some(Ok(LEVEL_TIMEOUT.to_string()));
                        return ControlFlow::Break(());
                    }
                },
                Ok(Judged::Fails { .. }) => return ControlFlow::Continue(()),
                Ok(Judged::Unknown(_)) => {
                    failure = Some(Ok(LEVEL_TIMEOUT.to_string()));
                    return ControlFlow::Break(());
                }
                Err(e) => {
                    failure = Some(Err(level_error(e)));
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
        let criterion = Criterion::Strategy(strategy);
        let judgement = if snapshots {
            judge_unserializability(&built.history, criterion, deadline)
        } else {
            judge_candidate(
                &built.history,
                &built.history,
                level,
                criterion,
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
            Ok(Judgement::LevelUnknown) => {
                failure = Some(Ok(LEVEL_TIMEOUT.to_string()));
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
        for_each_pivot_seed(dom, order, structures, &mut judge_seed);
    } else {
        for_each_seed(dom, order, per_read, &mut judge_seed);
    }
    stats.verification_ms += super::ms(verification.elapsed());
    stats.seeds += seeds;
    match failure {
        Some(Err(e)) => Err(e),
        _ => Ok(seeds),
    }
}

/// Why the solver phase cannot run after seeds found too few predictions, if it cannot: no
/// time left, too little time to build its encoding (~[`BUILD_TIME_PER_CANDIDATE`] per
/// candidate writer), or over the memory budget.
fn solver_phase_out_of_reach(
    found: &[Found],
    deadline: Option<Instant>,
    memory_bytes: Option<u64>,
    seeds: u32,
    candidates: u64,
    counted: bool,
    solver_fits: bool,
) -> Option<End> {
    // `candidates` is the space's count, or a lower bound of it when the space was not built.
    let about = if counted { "~" } else { "at least " };
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now());
        let build = BUILD_TIME_PER_CANDIDATE.saturating_mul(candidates.min(u32::MAX as u64) as u32);
        if left.is_zero() && !found.is_empty() {
            return Some(incomplete(found, "timeout".to_string()));
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
            return Some(incomplete(
                found,
                format!(
                    "timeout: {seeds} seed candidate(s) judged, none a prediction, and {solver} \
                     the complete solver phase ({about}{candidates} candidate writers, {about}{} \
                     MB) that would prove there is none; try a longer --timeout{}",
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
            return Some(incomplete(
                found,
                format!(
                    "timeout: the solver phase would encode {about}{candidates} candidate \
                     writers ({about}{:.0} s to build), more than the {:.1} s left; try a \
                     longer --timeout",
                    build.as_secs_f64(),
                    left.as_secs_f64()
                ),
            ));
        }
    }
    if !solver_fits {
        return Some(incomplete(
            found,
            format!(
                "memory limit: the solver phase would encode {about}{} candidate writers \
                 ({about}{} MB), over the {} MB budget; try a larger --memory, or --max 1",
                candidates,
                candidates.saturating_mul(BYTES_PER_CANDIDATE) >> 20,
                memory_bytes.unwrap_or(0) >> 20
            ),
        ));
    }
    None
}

/// Step 3 of the module documentation: the complete solver phase over the prediction space
/// ([`lazy::search`]), or — nothing found, one prediction wanted, and a space small enough —
/// [`End::Paper`] for the paper-form encodings.
#[allow(clippy::too_many_arguments)]
fn solver_phase(
    space: Space,
    level: Level,
    strategy: Strategy,
    deadline: Option<Instant>,
    memory_bytes: Option<u64>,
    want: usize,
    found: &mut FoundList,
    stats: &mut PredictStats,
) -> Result<End, PredictError> {
    let nodes = space.nodes() as u64;
    let paper = nodes
        .saturating_mul(nodes)
        .saturating_mul(nodes)
        .saturating_mul(super::paper::PAPER_BYTES_PER_NODE_CUBE);
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
