//! The judgement of one candidate prediction (IsoPredict PLDI'24 §4, step 5 "re-verify"; docs/
//! prediction.md "Engines"): a candidate predicted history is a prediction when it is valid
//! at the level and unserializable in the strategy's sense. Both engines decide every
//! candidate here — the paper-form engine each model of its encodings, the scalable engine
//! each seed and each model of its solver phase — and the level and serializability
//! questions themselves go to [`super::judge`].

use std::time::Instant;

use super::judge::{judge, How, JudgeError, Judged};
use super::saturate::{saturate, Pco};
use super::{PcoEdge, PredictError, Strategy};
use crate::check::Level;
use crate::history::{History, TxnId};
use crate::ser::SerVerdict;

/// Why a search stops when the level check of a candidate does not finish.
pub(crate) const LEVEL_TIMEOUT: &str = "timeout checking the level";

/// What makes a candidate valid at the level a prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Criterion {
    /// No serial order exists, by the exact serializability check alone (the paper-form
    /// engine's re-verification of its models).
    NoSerialOrder,
    /// The strategy's own criterion, `pco` first: a cycle of the least `pco` for the
    /// approximate strategies; no serial order for exact-strict.
    Strategy(Strategy),
}

/// The verdict on one candidate prediction.
pub(crate) enum Judgement {
    /// Valid at the level and unserializable (with a `pco` cycle when one was found).
    Prediction(Option<Vec<PcoEdge>>),
    /// Not valid at the level; pc, si: the core of the violation (transactions of the checked
    /// history whose sub-history already fails; empty when none was found).
    LevelFails(Vec<TxnId>),
    /// Valid at the level, but no commit order keeps its locked reads and connection order
    /// with the level ([`super::locks`]). Like a level violation it persists in every
    /// candidate that includes at least as much (the facts are axioms over what is included).
    FactsFail,
    /// The level check did not finish before the deadline.
    LevelUnknown,
    /// Valid but not a prediction: serializable (with a serial order), or — approximate
    /// strategies — acyclic `pco` yet unserializable (`None`).
    Serializable(Option<Vec<TxnId>>),
    /// The deadline passed or the serializability check gave up.
    Unknown(String),
}

/// Decides a candidate predicted history exactly: `level_h` at the level (for prefix
/// consistency and snapshot isolation the candidate with its boundary transactions' whole
/// write sets, [`super::prefix::Domains::build_with`]; else `p` itself), `p` for
/// unserializability by `criterion`. `core`: shrink a pc/si violation to its core (the
/// solver phases block through it; seeds do not need it).
pub(crate) fn judge_candidate(
    p: &History,
    level_h: &History,
    level: Level,
    criterion: Criterion,
    deadline: Option<Instant>,
    core: bool,
) -> Result<Judgement, PredictError> {
    match judge(level_h, level, How::Checker { core }, deadline).map_err(level_error)? {
        Judged::Fails { core, .. } => return Ok(Judgement::LevelFails(core)),
        Judged::Holds(_) => {}
        Judged::Unknown(_) => return Ok(Judgement::LevelUnknown),
    }
    if let Some(judgement) = judge_facts(level_h, level, deadline) {
        return Ok(judgement);
    }
    judge_unserializability(p, criterion, deadline)
}

/// The locked reads and connection order of a candidate valid at the level
/// ([`super::locks::judge_facts`]): `None` when they hold (or there are none), else the
/// judgement.
pub(crate) fn judge_facts(
    level_h: &History,
    level: Level,
    deadline: Option<Instant>,
) -> Option<Judgement> {
    // The cheap necessary conditions first (a locked read shared, a fixture read around):
    // most candidates the facts exclude fail them, without a solver call.
    if super::locks::facts_surely_fail(level_h).is_some() {
        return Some(Judgement::FactsFail);
    }
    match super::locks::judge_facts(level_h, level, deadline) {
        super::locks::Facts::Hold => None,
        super::locks::Facts::Fail(_) => Some(Judgement::FactsFail),
        super::locks::Facts::Unknown(reason) => Some(Judgement::Unknown(reason)),
    }
}

/// The second half of [`judge_candidate`], for a candidate already found valid at the level.
pub(crate) fn judge_unserializability(
    p: &History,
    criterion: Criterion,
    deadline: Option<Instant>,
) -> Result<Judgement, PredictError> {
    let (how, strategy) = match criterion {
        Criterion::NoSerialOrder => (How::Exact, Strategy::ExactStrict),
        Criterion::Strategy(strategy) => match saturate(p, deadline) {
            Pco::Cyclic(cycle) => return Ok(Judgement::Prediction(Some(cycle))),
            Pco::GaveUp => return Ok(Judgement::Unknown("timeout".to_string())),
            Pco::Acyclic(order, edges) => {
                let judged = judge(
                    p,
                    Level::Serializable,
                    How::AfterAcyclicPco {
                        order,
                        edges: &edges,
                    },
                    deadline,
                );
                return serial_judgement(judged, strategy);
            }
        },
    };
    serial_judgement(judge(p, Level::Serializable, how, deadline), strategy)
}

/// A serializability verdict on a valid candidate as a [`Judgement`]: unserializable is a
/// prediction for `strategy` exact-strict only (the approximate ones need a `pco` cycle).
fn serial_judgement(
    judged: Result<Judged, JudgeError>,
    strategy: Strategy,
) -> Result<Judgement, PredictError> {
    match judged {
        Ok(Judged::Holds(order)) => Ok(Judgement::Serializable(order)),
        Ok(Judged::Fails { .. }) if strategy == Strategy::ExactStrict => {
            Ok(Judgement::Prediction(None))
        }
        Ok(Judged::Fails { .. }) => Ok(Judgement::Serializable(None)),
        Ok(Judged::Unknown(reason)) => Ok(Judgement::Unknown(reason)),
        Err(e) => Err(PredictError::Internal(format!(
            "predicted history is malformed: {e}"
        ))),
    }
}

/// A level checker's error on a candidate, as the prediction's error.
pub(crate) fn level_error(e: JudgeError) -> PredictError {
    PredictError::Internal(format!("checking the level: {e}"))
}

/// The observed history's serializability: the one place the prediction pipeline asks it,
/// cheap sound answers first ([`How::CheapFirst`]), under the known write order if the input
/// shows one (Elle list-append reads: the rewritten history keeps the transaction ids, so its
/// serial order is one of `h`).
pub(crate) fn observed_serializability(
    h: &History,
    deadline: Option<Instant>,
) -> Result<SerVerdict, PredictError> {
    let rewritten = h.with_write_order_as_reads();
    let h = rewritten.as_ref().unwrap_or(h);
    match judge(h, Level::Serializable, How::CheapFirst, deadline) {
        Ok(Judged::Holds(order)) => Ok(SerVerdict::Serializable {
            order: order.expect("a serial order"),
        }),
        Ok(Judged::Fails { .. }) => Ok(SerVerdict::Unserializable),
        Ok(Judged::Unknown(reason)) => Ok(SerVerdict::Unknown { reason }),
        Err(e @ JudgeError::ReadWithoutCommittedWriter(read)) => {
            Err(PredictError::InvalidObservation {
                op: read,
                message: e.to_string(),
            })
        }
        Err(e) => Err(level_error(e)),
    }
}
