//! The one place the prediction engines ask "is this history valid at level L?" — the
//! observed run's check, every candidate's re-verification, the core of a pc/si violation —
//! and "is it serializable?". Every such question in `predict/` goes through [`judge`], so
//! that the decision can be swapped for the crate's single decision core in one place (issue
//! 19). Which checker answers is named by [`How`], one variant per route the engines use
//! today; the routes differ in cost and in the serial order they return (which the exact
//! instances build on), never in the verdict.
//!
//! Not here: whether a history has a cycle of its least `pco` (IsoPredict PLDI'24 §4.2.2) —
//! the approximate strategies' criterion for a prediction, not an isolation level
//! ([`super::candidate`], [`super::paper`]).

use std::time::{Duration, Instant};

use super::remaining;
use super::saturate::{saturate, Pco};
use super::serial::greedy_serial_order;
use crate::check::{self, CheckError, CheckOptions, CheckReport, Level};
use crate::history::{History, TxnId};
use crate::ser::{self, SerError, SerVerdict};

/// Which checker answers [`judge`].
pub(crate) enum How<'a> {
    /// rc, ra, cc: the axiomatic checker [`check::check`]; pc, si: the exact checker
    /// [`ser::check_strong`] (Biswas & Enea's prefix search on the read/write split, Z3 when
    /// it gives up), shrinking a violation to its core when `core`.
    Checker {
        /// pc, si: find the transactions of a failing sub-history.
        core: bool,
    },
    /// ser: the exact check [`ser::is_serializable`] (search, then Z3).
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
    /// The level checker rejected the input.
    Check(CheckError),
    /// The serializability check rejected the input (a read without a committed writer).
    Ser(SerError),
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
    let Some(strong) = ser::StrongLevel::from_level(level) else {
        let report = check::check(h, level, &CheckOptions::default()).map_err(JudgeError::Check)?;
        return Ok(if report.is_consistent() {
            Judged::Holds(None)
        } else {
            Judged::Fails {
                core: Vec::new(),
                report: Some(report),
            }
        });
    };
    let left = remaining(deadline);
    let options = ser::StrongOptions {
        timeout: left,
        explain: core,
        explain_timeout: left.map_or(CORE_BUDGET, |l| l.min(CORE_BUDGET)),
        ..ser::StrongOptions::default()
    };
    let report = ser::check_strong(h, strong, &options).map_err(JudgeError::Check)?;
    Ok(match report.verdict {
        ser::Verdict::Consistent => Judged::Holds(None),
        ser::Verdict::Violated => Judged::Fails {
            core: report
                .violation
                .map(|v| v.core.iter().map(|c| c.txn.id).collect())
                .unwrap_or_default(),
            report: None,
        },
        ser::Verdict::Unknown => Judged::Unknown("timeout".to_string()),
    })
}

fn serializability(h: &History, how: How, deadline: Option<Instant>) -> Result<Judged, JudgeError> {
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
    Ok(
        match ser::is_serializable(h, remaining(deadline)).map_err(JudgeError::Ser)? {
            SerVerdict::Serializable { order } => Judged::Holds(Some(order)),
            SerVerdict::Unserializable => Judged::Fails {
                core: Vec::new(),
                report: None,
            },
            SerVerdict::Unknown { reason } => Judged::Unknown(reason),
        },
    )
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
