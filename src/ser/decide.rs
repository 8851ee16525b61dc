//! Deciding one level on one component: saturation (forced edges, [`super::saturate`]), then
//! the prefix search ([`super::search`]) or Z3 ([`super::smt_problem`]) on the problem of
//! [`super::reduce`], every witness replayed by [`super::verify`].
//!
//! `auto` runs the search first with a share of the time and a bound on memoised states, and
//! hands the component to Z3 if the search gives up: the search answers serializable
//! histories of any size in near-linear time and small hard ones instantly, Z3 takes over on
//! components whose prefix space explodes (many sessions with interleaved conflicts).

use std::time::{Duration, Instant};

use super::reduce::{self, Split};
use super::saturate::{premise_closure, saturate, saturate_with, Bounds, Rules};
use super::search::{search, Limits, SearchResult};
use super::smt_problem;
use super::txns::Txns;
use super::verify::verify_nodes;
use super::{Engine, StrongLevel};

/// The outcome on one component.
pub(crate) enum Decision {
    /// A commit order of the component's local transactions (initial excluded): the
    /// serialization (SER) or the order of the write halves (PC, SI).
    Pass(Vec<u32>),
    /// No order exists. When a cycle of forced edges shows it: the transactions (local ids)
    /// on the cycle and on its premises.
    Fail(Option<Vec<u32>>),
    /// Gave up.
    Unknown(String),
}

/// Which engine answered, and how much work it did.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Work {
    pub forced_edges: usize,
    pub search_steps: u64,
    pub failed_states: usize,
    pub smt_calls: u32,
}

/// The forced-edge rules of a level.
pub(crate) fn rules(level: StrongLevel) -> Rules {
    match level {
        StrongLevel::Serializable => Rules::WwRw,
        StrongLevel::Snapshot => Rules::Ww,
        StrongLevel::Prefix => Rules::CausalOnly,
    }
}

fn split(level: StrongLevel) -> Split {
    match level {
        StrongLevel::Serializable => Split::None,
        StrongLevel::Snapshot => Split::Snapshot,
        StrongLevel::Prefix => Split::Prefix,
    }
}

/// Decides `level` for `txns` (which must satisfy causal consistency).
pub(crate) fn decide(
    txns: &Txns,
    level: StrongLevel,
    engine: Engine,
    bounds: &Bounds,
    max_failed_states: usize,
    work: &mut Work,
) -> Decision {
    let deadline = bounds.deadline;
    // Transaction-level saturation (for SER the whole pruning; for SI its ww edges seed the
    // split level; for PC only the CC check it repeats).
    let sat = match saturate(txns, rules(level), bounds) {
        Ok(sat) => sat,
        Err(stopped) => return Decision::Unknown(stopped.0),
    };
    work.forced_edges += sat.edges.len();
    if sat.cycle.is_some() {
        return Decision::Fail(Some(premise_closure(txns.len(), &sat, |t| t)));
    }
    let split_txns;
    let (problem_txns, sat) = if level == StrongLevel::Serializable {
        (txns, sat)
    } else {
        split_txns = txns.split();
        let split = if level == StrongLevel::Snapshot {
            Split::Snapshot
        } else {
            Split::Prefix
        };
        let given = reduce::snapshot_given_edges(&sat, split);
        let s = match saturate_with(&split_txns, Rules::WwRw, &given, bounds) {
            Ok(s) => s,
            Err(stopped) => return Decision::Unknown(stopped.0),
        };
        work.forced_edges += s.edges.len();
        if s.cycle.is_some() {
            return Decision::Fail(Some(premise_closure(split_txns.len(), &s, |v| {
                v.div_ceil(2)
            })));
        }
        (&split_txns, s)
    };
    let problem = reduce::build(problem_txns, &sat, split(level));
    if let Some(stopped) = bounds.expired() {
        return Decision::Unknown(stopped.0);
    }
    // The search's memo of failed states gets half the memory budget (the saturation's
    // matrices are freed by then; the problem and the search's own state take the rest).
    let search_limits = |deadline: Option<Instant>, states: usize| Limits {
        deadline,
        max_failed_states: states,
        max_memory: bounds.memory.map(|m| m / 2),
        learn: true,
    };
    let memo_reason = |s: &crate::ser::search::SearchStats, fallback: &str| {
        if s.out_of_memory {
            format!(
                "memory limit: the commit-order search's memo of failed states reached {} MB, \
                 half of the {} MB budget (--memory), with {} failed states",
                s.memo_bytes >> 20,
                bounds.memory.unwrap_or(0) >> 20,
                s.failed_states
            )
        } else {
            fallback.to_string()
        }
    };
    let (result, reason) = match engine {
        Engine::Search => {
            let (r, s) = search(&problem, search_limits(deadline, max_failed_states));
            work.search_steps += s.steps;
            work.failed_states += s.failed_states;
            (r, memo_reason(&s, "search limit reached"))
        }
        Engine::Smt => {
            work.smt_calls += 1;
            smt_problem::solve(&problem, deadline)
        }
        Engine::Auto => {
            // The search gets half the time left and the whole state budget (its dead ends
            // jump back to their culprits, so serializable histories rarely need many).
            let share = deadline.map(|d| {
                let now = Instant::now();
                now + d.saturating_duration_since(now) / 2
            });
            let (r, s) = search(&problem, search_limits(share, max_failed_states));
            work.search_steps += s.steps;
            work.failed_states += s.failed_states;
            match r {
                SearchResult::GaveUp => {
                    work.smt_calls += 1;
                    smt_problem::solve(&problem, deadline)
                }
                other => (other, String::new()),
            }
        }
    };
    match result {
        SearchResult::Found(order) => {
            if let Err(problem_text) = verify_nodes(&problem, &order) {
                return Decision::Unknown(format!(
                    "internal: the {engine} engine's order fails verification: {problem_text}"
                ));
            }
            let txn_order = order
                .into_iter()
                .filter(|&v| problem.split == Split::None || !problem.is_read_half(v))
                .map(|v| problem.node_txn[v as usize])
                .collect();
            Decision::Pass(txn_order)
        }
        SearchResult::Exhausted => Decision::Fail(None),
        SearchResult::GaveUp => Decision::Unknown(reason),
    }
}

/// A deadline `timeout` from now.
pub(crate) fn deadline_after(timeout: Option<Duration>) -> Option<Instant> {
    timeout.map(|t| Instant::now() + t)
}
