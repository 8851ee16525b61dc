//! Checking a history against an isolation level.
//!
//! - [`Level`]: the levels and their strength.
//! - [`check`]: one level — RC, RA, CC with AWDIT's optimal algorithms (PLDI'25 §3), CI per
//!   Plume (OOPSLA'24 Def. 3) — giving a [`CheckReport`] that names every violation by Plume's
//!   patterns ([`Anomaly`]) and explains each cycle edge by edge.
//! - Every level at once, and the levels above cc: [`crate::verdict`], the one decision core
//!   every command asks.
//! - [`oracle`]: the brute-force ground truth over all commit orders (tiny histories only).
//!
//! Every level first checks read consistency (TAP a–f; and TAP j, repeatable reads, for CI, RA
//! and CC), then builds the commit-order graph so ∪ wr (the initial transaction first),
//! saturates it with the level's axiom, and looks for cycles (docs/checking.md).
//!
//! One algorithm per file: `read_consistency` (AWDIT Alg. 4), `rc` (Alg. 1), `ra` (Alg. 2),
//! `cc` (Alg. 3), `graph` (the commit-order graph, Kahn), `scc` (iterative Tarjan), `cycles`
//! (shortest cycles), `classify` (Plume's names), `report` (output).

mod anomaly;
mod cc;
mod cc_chunked;
mod cc_clock;
mod classify;
mod cycles;
mod graph;
pub mod oracle;
mod parallel;
mod ra;
mod rc;
mod read_consistency;
mod report;
mod scc;
mod scratch;

pub use crate::history::Level;
pub use anomaly::Anomaly;
pub use classify::Relation;
pub use report::{
    AxiomInstance, CheckReport, CheckSummary, CycleEdge, CycleReport, EdgeReason, OpRef,
    ReadViolation, TxnRef,
};
pub(crate) use scc::tarjan;

use crate::history::History;
use graph::{CommitGraph, EdgeList, TooManyEdges};

/// Options of [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    /// On a pass, include a witness commit order in the report.
    pub witness: bool,
    /// At most this many violating reads, and at most this many cycles, are described in the
    /// report (the counts are always exact).
    pub max_violations: usize,
    /// Memory budget in bytes for the causal check's happens-before clocks (`None`: 512 MiB);
    /// over it the check gives up ([`CheckError::MemoryLimit`]).
    pub memory: Option<u64>,
    /// Give up ([`CheckError::Timeout`]) at this instant.
    pub deadline: Option<std::time::Instant>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            witness: false,
            max_violations: 1000,
            memory: None,
            deadline: None,
        }
    }
}

/// Why a check could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The level has no checker yet (PC, SI, SER).
    #[error("checking {} ({}) is not supported yet; supported levels: rc, ci, ra, cc", .0.full_name(), .0)]
    Unsupported(Level),
    /// The commit-order graph would have more edges than the checkers' 32-bit indexes allow.
    #[error("history too large to check: the commit-order graph would have {0} edges")]
    TooLarge(usize),
    /// The causal check would keep more happens-before clock entries than its memory budget
    /// ([`CheckOptions::memory`]): the verdict is unknown (exit code 3).
    #[error(
        "unknown: checking causal consistency would keep more than {entries} happens-before \
         clock entries ({} MB), over the memory budget{} (a larger --memory may answer)",
        bytes >> 20,
        budget.map_or(String::new(), |b| format!(" of {} MB", b >> 20))
    )]
    MemoryLimit {
        /// The most entries the budget allows.
        entries: usize,
        /// Their size in bytes.
        bytes: u64,
        /// The budget asked for, in bytes (`None`: the built-in bound).
        budget: Option<u64>,
    },
    /// The deadline passed before the check ended.
    #[error("timeout")]
    Timeout,
    /// A stop was requested (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
}

impl From<TooManyEdges> for CheckError {
    fn from(e: TooManyEdges) -> Self {
        CheckError::TooLarge(e.0)
    }
}

/// Checks `history` against `level` (rc, ci, ra or cc).
///
/// ```
/// use isopredict::check::{Anomaly, CheckOptions, Level};
/// use isopredict::verdict::engines::check;
/// use isopredict::history::{HistoryBuilder, ReadFrom};
///
/// // One session: W(x,1); W(x,2); R(x,1) — the read misses the session's own later write.
/// let mut b = HistoryBuilder::new("example");
/// let x = b.key("x");
/// let s = b.session(None);
/// let t1 = b.begin(s, None);
/// b.write(t1, x, Some(1), 1);
/// let t2 = b.begin(s, None);
/// b.write(t2, x, Some(2), 2);
/// let t3 = b.begin(s, None);
/// b.read(t3, x, Some(1), ReadFrom::Value(1), 3);
/// let h = b.build().unwrap();
///
/// let rc = check(&h, Level::ReadCommitted, &CheckOptions::default()).unwrap();
/// assert!(rc.is_consistent());
/// let ra = check(&h, Level::ReadAtomic, &CheckOptions::default()).unwrap();
/// assert!(!ra.is_consistent());
/// assert_eq!(ra.cycles[0].anomaly, Anomaly::FracturedReadCo);
/// ```
pub(crate) fn check(
    history: &History,
    level: Level,
    options: &CheckOptions,
) -> Result<CheckReport, CheckError> {
    check_with_budgets(history, level, options, cycles::Budgets::DEFAULT)
}

/// [`check`] with explicit bounds on the work spent explaining each cycle.
fn check_with_budgets(
    history: &History,
    level: Level,
    options: &CheckOptions,
    budgets: cycles::Budgets,
) -> Result<CheckReport, CheckError> {
    if !matches!(
        level,
        Level::ReadCommitted | Level::CutIsolation | Level::ReadAtomic | Level::Causal
    ) {
        return Err(CheckError::Unsupported(level));
    }
    let reads = read_consistency::check(history, level != Level::ReadCommitted);
    let mut graph = CommitGraph::base(history, &reads.external_writer)?;
    let mut inferred = EdgeList::default();
    match level {
        Level::ReadCommitted => rc::saturate(history, &reads.external_writer, &mut inferred),
        Level::ReadAtomic => ra::saturate(history, &reads.external_writer, &mut inferred),
        Level::Causal => {
            let (order, acyclic) = graph.topological_order(true);
            if acyclic {
                cc::saturate(
                    history,
                    &reads.external_writer,
                    &graph,
                    &order,
                    &mut inferred,
                    &cc::CcLimits {
                        memory: options.memory,
                        deadline: options.deadline,
                    },
                )
                .map_err(|e| match e {
                    cc::CcStopped::Memory { entries, bytes } => CheckError::MemoryLimit {
                        entries,
                        bytes,
                        budget: options.memory,
                    },
                    cc::CcStopped::Timeout => CheckError::Timeout,
                    cc::CcStopped::Interrupted => CheckError::Interrupted,
                })?;
            }
        }
        _ => {}
    }
    graph::add_known_write_order(history, &mut inferred);
    graph.set_inferred(inferred)?;
    let analysis = cycles::analyze(
        history,
        &reads.external_writer,
        &graph,
        options.max_violations,
        budgets,
    );
    Ok(report::build(
        history, level, options, &reads, &graph, analysis,
    ))
}

#[cfg(test)]
mod generator_tests;
#[cfg(test)]
pub(crate) mod test_util;
#[cfg(test)]
mod tests;
