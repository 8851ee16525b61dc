//! Validation of a predicted execution (IsoPredict, PLDI'24 §5): replay the application with
//! the predicted history as the read policy (same seed), executing every transaction on or
//! hb-before the prediction boundary in full and then stopping; the prediction is *validated*
//! when the validating history satisfies the level and is unserializable (both decided by the
//! one decision core, [`crate::verdict`]). The run
//! *diverged* when some read could not follow the prediction (it then read the latest valid
//! writer). Invariant failures of the validating run's final state are reported too.

use std::sync::Arc;
use std::time::Duration;

use crate::check::Level;
use crate::history::{History, TxnId};
use crate::store::{Divergence, ReadPolicy, ReplayPlan};
use crate::verdict::{self, Decider, EvidenceChoice, Input, Limits, Outcome};

use super::harness::{run, Run, RunConfig, RunError};
use super::{InvariantCheck, Workload};

/// What validation concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The validating execution satisfies the level and is unserializable.
    Validated,
    /// The validating execution is serializable: no anomaly (a false prediction).
    Serializable,
    /// The validating execution violates the level (a bug in the store; reported, not hidden).
    LevelViolated,
    /// A check could not decide.
    Unknown,
}

/// The outcome of validating one prediction.
#[derive(Debug)]
pub struct Validation {
    /// The verdict.
    pub verdict: Verdict,
    /// Where the validating run left the prediction (empty: it followed it exactly).
    pub divergences: Vec<Divergence>,
    /// The invariants on the validating run's final state.
    pub invariants: Vec<InvariantCheck>,
    /// The validating run (its `history` is the validating execution).
    pub run: Run,
}

/// What a replay shows about a prediction, in the one vocabulary every view uses (`run`'s
/// report and headline, `rank`'s tables and cells). IsoPredict's Tables 4 and 5 count a replay
/// that left the prediction but whose own execution is valid at the level and unserializable
/// as *validated*, and in parentheses as *diverged*: the program really produced an anomaly
/// under the level, though not exactly the predicted one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayOutcome {
    /// The replay followed the prediction exactly; its execution is valid and unserializable.
    Validated,
    /// The replay left the prediction at some read; the execution it produced instead is
    /// valid and unserializable (validated and diverged).
    ValidatedDiverged,
    /// The replay's execution is serializable: it confirms no anomaly.
    Serializable,
    /// The replay's execution violates the level (a bug in the store; reported, not hidden).
    LevelViolated,
    /// A check could not decide.
    Unknown,
}

impl ReplayOutcome {
    /// Its name in reports and JSON: `validated`, `validated-diverged`, `serializable`,
    /// `level-violated`, `unknown`.
    pub fn word(self) -> &'static str {
        match self {
            ReplayOutcome::Validated => "validated",
            ReplayOutcome::ValidatedDiverged => "validated-diverged",
            ReplayOutcome::Serializable => "serializable",
            ReplayOutcome::LevelViolated => "level-violated",
            ReplayOutcome::Unknown => "unknown",
        }
    }

    /// Whether it counts as validated (IsoPredict's tables): the replay produced an anomaly,
    /// following the prediction or not.
    pub fn counts_as_validated(self) -> bool {
        matches!(
            self,
            ReplayOutcome::Validated | ReplayOutcome::ValidatedDiverged
        )
    }
}

impl ReplayOutcome {
    /// What a replay judged `verdict` shows, when it left the prediction (`diverged`) or not:
    /// the one place this is decided (workload replays and application replays alike).
    pub fn of(verdict: Verdict, diverged: bool) -> ReplayOutcome {
        match (verdict, diverged) {
            (Verdict::Validated, false) => ReplayOutcome::Validated,
            (Verdict::Validated, true) => ReplayOutcome::ValidatedDiverged,
            (Verdict::Serializable, _) => ReplayOutcome::Serializable,
            (Verdict::LevelViolated, _) => ReplayOutcome::LevelViolated,
            (Verdict::Unknown, _) => ReplayOutcome::Unknown,
        }
    }
}

impl Validation {
    /// Whether some read could not follow the prediction.
    pub fn diverged(&self) -> bool {
        !self.divergences.is_empty()
    }

    /// What the replay shows (computed here once; every view prints [`ReplayOutcome::word`]).
    pub fn outcome(&self) -> ReplayOutcome {
        ReplayOutcome::of(self.verdict, self.diverged())
    }

    /// The invariants that fail.
    pub fn failed_invariants(&self) -> impl Iterator<Item = &InvariantCheck> {
        self.invariants.iter().filter(|i| !i.holds)
    }
}

/// Validates `predicted` (a history valid at `level`, usually a prefix ending at the
/// prediction boundary) by replaying `workload` under `config`'s seed and size. `observed`,
/// the run the prediction came from, lets the replay keep the observed interleaving where the
/// prediction allows and run rolled-back transactions where they ran. `ser_timeout` bounds
/// the serializability check (none: no limit); when it expires the verdict is
/// [`Verdict::Unknown`].
pub fn validate(
    workload: &dyn Workload,
    config: &RunConfig,
    observed: Option<&Run>,
    predicted: &History,
    level: Level,
    ser_timeout: Option<Duration>,
) -> Result<Validation, RunError> {
    let preferred = observed.map(|o| map_order(&o.history, &o.commit_order, predicted));
    let plan = replay_plan(predicted, level, preferred, ser_timeout);
    let replay_config = RunConfig {
        policy: ReadPolicy::Replay {
            plan: Arc::new(plan),
            level,
        },
        observed_attempts: observed.map(|o| o.attempts.clone()),
        ..config.clone()
    };
    let run = run(workload, &replay_config)?;
    let verdict = judge(&run.history, level, ser_timeout);
    Ok(Validation {
        verdict,
        divergences: run.divergences.clone(),
        invariants: run.invariants.clone(),
        run,
    })
}

/// The replay plan of `predicted` at `level`, its turns following `preferred` (the observed
/// commit order as transactions of `predicted`) wherever the prediction allows; at pc and si
/// in a commit order whose snapshots explain the predicted reads.
pub fn replay_plan(
    predicted: &History,
    level: Level,
    mut preferred: Option<Vec<TxnId>>,
    ser_timeout: Option<Duration>,
) -> ReplayPlan {
    if matches!(level, Level::Prefix | Level::Snapshot) {
        let near = preferred.as_deref().unwrap_or(&[]);
        if let Some(order) = snapshot_commit_order(predicted, level, near, ser_timeout) {
            preferred = Some(order);
        }
    }
    ReplayPlan::new(predicted, level, preferred.as_deref())
}

/// A commit order of `predicted` whose snapshots explain its reads at `level` (pc or si), for
/// the replay to commit in:
/// 1. the order nearest `near` (the observed commit order) that the reads allow
///    ([`crate::store::snapshot_order_near`]), if the decision core confirms it
///    ([`crate::verdict::is_witness_order`]): a replay that commits in the observed order
///    wherever it can draws the same row ids and meets rows in the same order;
/// 2. else the decision core's witness commit order within `timeout`
///    ([`crate::verdict::witness_commit_order`]: the prefix search, then Z3 only when the
///    search answers neither way).
///
/// `None`: no order was found (the replay then follows the observed order where it can).
fn snapshot_commit_order(
    predicted: &History,
    level: Level,
    near: &[TxnId],
    timeout: Option<Duration>,
) -> Option<Vec<TxnId>> {
    if let Some(order) = crate::store::snapshot_order_near(predicted, level, near) {
        if verdict::is_witness_order(predicted, level, &order) {
            return Some(order);
        }
    }
    let limits = Limits {
        timeout,
        ..Limits::default()
    };
    verdict::witness_commit_order(predicted, level, &limits).order()
}

/// The verdict on a validating execution, by the one decision core
/// ([`crate::verdict::Decider`]): the level, then serializability.
pub fn judge(history: &History, level: Level, ser_timeout: Option<Duration>) -> Verdict {
    let limits = Limits {
        timeout: ser_timeout,
        explain: false,
        ..Limits::default()
    };
    let Ok(input) = Input::of(history) else {
        return Verdict::Unknown;
    };
    let Ok(mut decider) = Decider::new(&input, EvidenceChoice::Auto, &limits) else {
        return Verdict::Unknown;
    };
    match decider.decide(level).map(|v| v.verdict) {
        Ok(Outcome::Consistent) => {}
        Ok(Outcome::Violated) => return Verdict::LevelViolated,
        Ok(Outcome::Unknown) | Err(_) => return Verdict::Unknown,
    }
    match decider.decide(Level::Serializable).map(|v| v.verdict) {
        Ok(Outcome::Violated) => Verdict::Validated,
        Ok(Outcome::Consistent) => Verdict::Serializable,
        Ok(Outcome::Unknown) | Err(_) => Verdict::Unknown,
    }
}

/// The observed commit order as transactions of `predicted`, matched by session external id
/// and position among the session's committed transactions.
fn map_order(observed: &History, order: &[TxnId], predicted: &History) -> Vec<TxnId> {
    let positions: Vec<(u64, u32)> = order.iter().map(|&t| position(observed, t)).collect();
    txns_at_positions(predicted, &positions)
}

/// Transaction `t` of `h` as (its session's external id, its position among the session's
/// committed transactions): how a replay names it.
fn position(h: &History, t: TxnId) -> (u64, u32) {
    let tx = h.txn(t);
    let s = &h.sessions()[tx.session as usize];
    let pos = s
        .txns()
        .filter(|&u| u < t && h.txn(u).is_committed())
        .count();
    (s.external_id.unwrap_or(tx.session as u64), pos as u32)
}

/// The transactions of `predicted` at `positions` (session external id, position among the
/// session's committed transactions), in that order; positions it does not hold are left out.
pub fn txns_at_positions(predicted: &History, positions: &[(u64, u32)]) -> Vec<TxnId> {
    let mut index = rustc_hash::FxHashMap::default();
    for t in predicted.committed_txns().skip(1) {
        index.insert(position(predicted, t), t);
    }
    positions
        .iter()
        .filter_map(|p| index.get(p).copied())
        .collect()
}
