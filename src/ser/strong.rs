//! Checking PC, SI or SER on a whole history: causal consistency first (Biswas & Enea
//! OOPSLA'19 Lemma 2.4: PC, SI and SER all imply it; dbcop's first pruning step), then each
//! component of the communication graph (§5, Theorem 5.2) on its own; the per-component commit
//! orders concatenate into one (components share only the initial transaction).

use std::time::Instant;

use crate::check::{check, CheckError, CheckOptions, Level};
use crate::history::{History, OpKind, TxnId, INITIAL_TXN};

use super::components::components;
use super::decide::{deadline_after, decide, Decision, Work};
use super::explain::explain;
use super::report::{StrongReport, StrongSummary, Verdict, Violation};
use super::saturate::Bounds;
use super::smt::{verify_serial_order, SerError, SerVerdict};
use super::txns::{Renumbering, Txns};
use super::{StrongLevel, StrongOptions};

/// Checks `history` against PC, SI or SER.
///
/// ```
/// use isopredict::history::{HistoryBuilder, ReadFrom};
/// use isopredict::ser::{StrongLevel, StrongOptions};
/// use isopredict::verdict::engines::check_strong;
///
/// // Write skew: t1 reads x and writes y, t2 reads y and writes x, both from the initial state.
/// let mut b = HistoryBuilder::new("skew");
/// let (x, y) = (b.key("x"), b.key("y"));
/// let (s1, s2) = (b.session(None), b.session(None));
/// let t1 = b.begin(s1, None);
/// b.read(t1, x, None, ReadFrom::Initial, 1);
/// b.write(t1, y, None, 2);
/// let t2 = b.begin(s2, None);
/// b.read(t2, y, None, ReadFrom::Initial, 3);
/// b.write(t2, x, None, 4);
/// let h = b.build().unwrap();
///
/// let options = StrongOptions::default();
/// assert!(check_strong(&h, StrongLevel::Snapshot, &options).unwrap().is_consistent());
/// let ser = check_strong(&h, StrongLevel::Serializable, &options).unwrap();
/// assert!(!ser.is_consistent());
/// assert_eq!(ser.violation.unwrap().anomaly, "write skew");
/// ```
pub(crate) fn check_strong(
    history: &History,
    level: StrongLevel,
    options: &StrongOptions,
) -> Result<StrongReport, CheckError> {
    let start = Instant::now();
    let deadline = deadline_after(options.timeout);
    let cc = check(
        history,
        Level::Causal,
        &CheckOptions {
            witness: false,
            memory: options.memory,
            deadline,
            ..CheckOptions::default()
        },
    );
    // Over the memory budget in the causal pre-check: the strong level is unknown, as when
    // its own phases pass the budget (the reason names it).
    let memory_stop = match &cc {
        Err(e @ CheckError::MemoryLimit { .. }) => Some(e.to_string()),
        _ => None,
    };
    let cc = match memory_stop {
        Some(_) => None,
        None => Some(cc?),
    };
    let bounds = Bounds {
        deadline,
        memory: options.memory,
    };
    let mut summary = StrongSummary {
        sessions: history.sessions().len(),
        transactions: history.txn_count() - 1,
        operations: history.ops().len() - history.txn_ops(INITIAL_TXN).len(),
        components: 0,
        largest_component: 0,
        forced_edges: 0,
        search_steps: 0,
        failed_states: 0,
        smt_calls: 0,
    };
    let mut report = StrongReport {
        level: level.level(),
        verdict: Verdict::Violated,
        consistent: false,
        source: history.source().to_string(),
        engine: options.engine,
        summary: summary.clone(),
        causal: None,
        violation: None,
        witness: None,
        witness_labels: None,
        unknown_reason: None,
    };
    let Some(cc) = cc else {
        report.verdict = Verdict::Unknown;
        report.unknown_reason = memory_stop;
        report.summary = summary;
        return Ok(report);
    };
    if !cc.is_consistent() {
        report.causal = Some(cc);
        return Ok(report);
    }
    let txns = Txns::from_history(history);
    let mut work = Work::default();
    let ComponentVerdicts {
        order,
        failed,
        violation,
        unknown,
    } = decide_components(
        history,
        &txns,
        level,
        options,
        (&bounds, deadline),
        &mut summary,
        &mut work,
    );
    summary.forced_edges = work.forced_edges;
    summary.search_steps = work.search_steps;
    summary.failed_states = work.failed_states;
    summary.smt_calls = work.smt_calls;
    report.summary = summary;
    if failed {
        report.violation = violation;
        return Ok(report);
    }
    if let Some(reason) = unknown {
        report.verdict = Verdict::Unknown;
        report.unknown_reason = Some(format!(
            "{reason} after {:.1} s",
            start.elapsed().as_secs_f64()
        ));
        return Ok(report);
    }
    if level == StrongLevel::Serializable {
        if let Err(problem) = verify_serial_order(history, &order) {
            report.verdict = Verdict::Unknown;
            report.unknown_reason = Some(format!(
                "internal: the serial order found fails verification: {problem}"
            ));
            return Ok(report);
        }
    }
    report.verdict = Verdict::Consistent;
    report.consistent = true;
    if options.witness {
        report.witness_labels = Some(order.iter().map(|&t| history.txn_label(t)).collect());
        report.witness = Some(order);
    }
    Ok(report)
}

/// What the components of a history decided: the serial (or commit) order of the passed ones
/// after the initial transaction, whether one failed (with its explanation when asked), and
/// the first reason one could not be decided.
struct ComponentVerdicts {
    order: Vec<TxnId>,
    failed: bool,
    violation: Option<Violation>,
    unknown: Option<String>,
}

/// Decides each component of `txns` (Biswas & Enea §5: the history satisfies the level iff
/// every component does), stopping at the first that fails or when the bounds expire; an
/// undecided component does not stop the others, whose failure would still decide.
fn decide_components(
    history: &History,
    txns: &Txns,
    level: StrongLevel,
    options: &StrongOptions,
    (bounds, deadline): (&Bounds, Option<Instant>),
    summary: &mut StrongSummary,
    work: &mut Work,
) -> ComponentVerdicts {
    let members = components(txns);
    summary.components = members.len();
    let mut renumbering = Renumbering::default();
    let mut verdicts = ComponentVerdicts {
        order: vec![INITIAL_TXN],
        failed: false,
        violation: None,
        unknown: None,
    };
    for component in &members {
        if let Some(stopped) = bounds.expired() {
            verdicts.unknown.get_or_insert(stopped.0);
            break;
        }
        let comp = if members.len() == 1 {
            txns.clone()
        } else {
            txns.restrict_to(component, &mut renumbering)
        };
        summary.largest_component = summary.largest_component.max(comp.len() - 1);
        match decide(
            &comp,
            level,
            options.engine,
            bounds,
            options.max_failed_states,
            work,
        ) {
            Decision::Pass(local) => verdicts
                .order
                .extend(local.iter().map(|&t| comp.orig[t as usize])),
            Decision::Fail(candidates) => {
                verdicts.failed = true;
                if options.explain {
                    verdicts.violation = Some(explain(
                        history,
                        &comp,
                        level,
                        candidates.as_deref(),
                        true,
                        deadline.map_or(options.explain_timeout, |d| {
                            options
                                .explain_timeout
                                .min(d.saturating_duration_since(Instant::now()))
                        }),
                    ));
                }
                break;
            }
            Decision::Unknown(reason) => {
                verdicts.unknown.get_or_insert(reason);
            }
        }
    }
    verdicts
}

/// Serializability with its serial order, by [`check_strong`] without explanations: the
/// entry point for callers that check many histories (same answers as
/// [`super::check_serializable`], usually much faster; see docs/performance.md).
///
/// A committed read without a committed writer (thin-air or aborted read) is an error, as in
/// [`super::check_serializable`]; any other read-consistency violation (e.g. an intermediate
/// read) makes the history unserializable.
pub(crate) fn is_serializable(
    history: &History,
    timeout: Option<std::time::Duration>,
) -> Result<SerVerdict, SerError> {
    for t in history.committed_txns() {
        for o in history.txn(t).ops() {
            if history.op(o).kind != OpKind::Read {
                continue;
            }
            match history.writer_txn(o) {
                Some(w) if history.txn(w).is_committed() => {}
                _ => return Err(SerError::ReadWithoutCommittedWriter { read: o }),
            }
        }
    }
    let options = StrongOptions {
        timeout,
        witness: true,
        explain: false,
        ..StrongOptions::default()
    };
    let report = match check_strong(history, StrongLevel::Serializable, &options) {
        Ok(r) => r,
        Err(e) => {
            return Ok(SerVerdict::Unknown {
                reason: e.to_string(),
            })
        }
    };
    Ok(match report.verdict {
        Verdict::Consistent => SerVerdict::Serializable {
            order: report.witness.unwrap_or_default(),
        },
        Verdict::Violated => SerVerdict::Unserializable,
        Verdict::Unknown => SerVerdict::Unknown {
            reason: report.unknown_reason.unwrap_or_default(),
        },
    })
}
