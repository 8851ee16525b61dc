//! The one place the prediction engines ask "is this history valid at level L?" — the
//! observed run's check, every candidate's re-verification, the core of a pc/si violation —
//! and "is it serializable?". Every such question in `predict/` goes through [`judge`], and
//! every verdict [`judge`] gives is the crate's single decision core's
//! ([`crate::verdict::decide`]) or a certificate of it: a serial order verified against the
//! history (which proves serializability, and every level below it), or a cycle of the
//! least `pco` (which proves unserializability). Which route is tried first is named by
//! [`How`]; the routes differ in cost and in the serial order they return (which the exact
//! instances build on), never in the verdict.
//!
//! Not here: whether a history has a cycle of its least `pco` (IsoPredict PLDI'24 §4.2.2) —
//! the approximate strategies' criterion for a prediction, not an isolation level
//! ([`super::candidate`], [`super::paper`]).

use std::time::{Duration, Instant};

use super::remaining;
use super::saturate::{saturate, Pco};
use super::serial::greedy_serial_order;
use crate::check::{CheckReport, Level};
use crate::history::{History, OpId, OpKind, TxnId};
use crate::ser;
use crate::verdict::{
    self, DecideError, EvidenceChoice, Input, LevelReport, Limits, Outcome, Verdict,
};

/// Which checker answers [`judge`].
pub(crate) enum How<'a> {
    /// rc, ra, cc: the axiomatic checker [`check::check`]; pc, si: the exact checker
    /// [`ser::check_strong`] (Biswas & Enea's prefix search on the read/write split, Z3 when
    /// it gives up), shrinking a violation to its core when `core`.
    Checker {
        /// pc, si: find the transactions of a failing sub-history.
        core: bool,
    },
    /// ser: the decision core (search, then Z3), with its serial order.
    Exact,
    /// ser: a greedy replay's serial order, verified, and nothing else: `Unknown` when the
    /// replay gets stuck (a serial history also satisfies pc and si, Biswas & Enea Lemma 2.4).
    GreedyOrderOnly,
    /// ser: cheap sound answers first — a greedy replay, verified; the `pco` saturation (a
    /// cycle: unserializable; else its topological order and a replay guided by its edges,
    /// verified) — and [`How::Exact`] only when none of them answers.
    CheapFirst,
    /// ser: the topological order and the edges of an acyclic `pco` already saturated, tried
    /// as serial orders (verified), then [`How::Exact`].
    AfterAcyclicPco {
        /// The topological order of `pco`.
        order: Vec<TxnId>,
        /// The edges whose transitive closure `pco` is.
        edges: &'a [(TxnId, TxnId)],
    },
}

/// A verdict of [`judge`].
pub(crate) enum Judged {
    /// Valid at the level; ser: with a verified serial order (`None` at other levels).
    Holds(Option<Vec<TxnId>>),
    /// Violated.
    Fails {
        /// pc, si with `core` asked: the transactions of a failing sub-history (empty when the
        /// checker found none).
        core: Vec<TxnId>,
        /// rc, ra, cc: the checker's report.
        report: Option<CheckReport>,
    },
    /// Undecided before the deadline, or the checker gave up: why.
    Unknown(String),
}

/// Why [`judge`] could not judge.
pub(crate) enum JudgeError {
    /// The decision core could not take the input.
    Input(DecideError),
    /// Serializability asked of a history with a committed read whose writer is missing or
    /// aborted (thin-air or aborted read): not a run the predictor can start from.
    ReadWithoutCommittedWriter(OpId),
}

impl std::fmt::Display for JudgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JudgeError::Input(e) => write!(f, "{e}"),
            JudgeError::ReadWithoutCommittedWriter(read) => write!(
                f,
                "read op {read} of a committed transaction has no committed writer"
            ),
        }
    }
}

/// Most time the exact checker may spend shrinking a violation to its core.
const CORE_BUDGET: Duration = Duration::from_millis(500);

/// Whether `h` is valid at `level` (rc, ra, cc, pc, si, or ser for serializability), answered
/// the way `how` says, within `deadline`.
pub(crate) fn judge(
    h: &History,
    level: Level,
    how: How,
    deadline: Option<Instant>,
) -> Result<Judged, JudgeError> {
    match how {
        How::Checker { core } => {
            debug_assert!(
                level != Level::Serializable,
                "ser is judged by a serial route"
            );
            level_by_checker(h, level, core, deadline)
        }
        serial => {
            debug_assert!(level == Level::Serializable, "serial routes judge ser only");
            serializability(h, serial, deadline)
        }
    }
}

fn level_by_checker(
    h: &History,
    level: Level,
    core: bool,
    deadline: Option<Instant>,
) -> Result<Judged, JudgeError> {
    let left = remaining(deadline);
    let limits = Limits {
        timeout: left,
        explain: core,
        explain_timeout: Some(left.map_or(CORE_BUDGET, |l| l.min(CORE_BUDGET))),
        ..Limits::default()
    };
    let v = decide_level(h, level, &limits)?;
    Ok(match v.verdict {
        Outcome::Consistent => Judged::Holds(None),
        Outcome::Violated => {
            let (core, report) = match v.report.as_deref() {
                Some(LevelReport::Weak(r)) => (Vec::new(), Some(r.clone())),
                Some(LevelReport::Strong(r)) => (
                    r.violation
                        .as_ref()
                        .map(|v| v.core.iter().map(|c| c.txn.id).collect())
                        .unwrap_or_default(),
                    None,
                ),
                _ => (Vec::new(), None),
            };
            Judged::Fails { core, report }
        }
        Outcome::Unknown => {
            Judged::Unknown(v.unknown_reason.unwrap_or_else(|| "timeout".to_string()))
        }
    })
}

/// The decision core's verdict on `h` at `level`, on the evidence `h` carries.
fn decide_level(h: &History, level: Level, limits: &Limits) -> Result<Verdict, JudgeError> {
    let input = Input::of(h).map_err(|e| JudgeError::Input(e.into()))?;
    verdict::decide(&input, level, EvidenceChoice::Auto, limits).map_err(JudgeError::Input)
}

fn serializability(h: &History, how: How, deadline: Option<Instant>) -> Result<Judged, JudgeError> {
    if let Some(read) = read_without_committed_writer(h) {
        return Err(JudgeError::ReadWithoutCommittedWriter(read));
    }
    let verified = |order: Vec<TxnId>| {
        ser::verify_serial_order(h, &order)
            .is_ok()
            .then_some(Judged::Holds(Some(order)))
    };
    match how {
        How::Checker { .. } => unreachable!("judge sends levels to the checker"),
        How::Exact => {}
        How::GreedyOrderOnly => {
            return Ok(greedy_serial_order(h, &[], deadline)
                .and_then(verified)
                .unwrap_or_else(|| Judged::Unknown("the greedy replay got stuck".to_string())));
        }
        How::CheapFirst => {
            if let Some(holds) = greedy_serial_order(h, &[], deadline).and_then(verified) {
                return Ok(holds);
            }
            match saturate(h, deadline) {
                Pco::Cyclic(_) => {
                    return Ok(Judged::Fails {
                        core: Vec::new(),
                        report: None,
                    })
                }
                Pco::Acyclic(order, edges) => {
                    if let Some(holds) = serial_orders_of_pco(h, order, &edges, deadline) {
                        return Ok(holds);
                    }
                }
                Pco::GaveUp => {}
            }
        }
        How::AfterAcyclicPco { order, edges } => {
            if let Some(holds) = serial_orders_of_pco(h, order, edges, deadline) {
                return Ok(holds);
            }
        }
    }
    let limits = Limits {
        timeout: remaining(deadline),
        explain: false,
        witness: true,
        ..Limits::default()
    };
    let v = decide_level(h, Level::Serializable, &limits)?;
    Ok(match v.verdict {
        Outcome::Consistent => {
            let order = match v.report.as_deref() {
                Some(LevelReport::Strong(r)) => r.witness.clone(),
                _ => None,
            };
            Judged::Holds(order)
        }
        Outcome::Violated => Judged::Fails {
            core: Vec::new(),
            report: None,
        },
        Outcome::Unknown => {
            Judged::Unknown(v.unknown_reason.unwrap_or_else(|| "timeout".to_string()))
        }
    })
}

/// An acyclic `pco`'s topological order, then a greedy replay guided by its edges, as serial
/// orders of `h` (verified).
fn serial_orders_of_pco(
    h: &History,
    order: Vec<TxnId>,
    edges: &[(TxnId, TxnId)],
    deadline: Option<Instant>,
) -> Option<Judged> {
    if ser::verify_serial_order(h, &order).is_ok() {
        return Some(Judged::Holds(Some(order)));
    }
    let order = greedy_serial_order(h, edges, deadline)?;
    ser::verify_serial_order(h, &order)
        .is_ok()
        .then_some(Judged::Holds(Some(order)))
}

/// A committed read whose writer is missing or aborted, if any.
fn read_without_committed_writer(h: &History) -> Option<OpId> {
    h.committed_txns().find_map(|t| {
        h.txn(t).ops().find(|&o| {
            h.op(o).kind == OpKind::Read
                && !h.writer_txn(o).is_some_and(|w| h.txn(w).is_committed())
        })
    })
}
