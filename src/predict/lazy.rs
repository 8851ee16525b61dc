//! The scalable engine's solver phase: the feasible-prefix encoding alone (boundaries and read
//! choices, [`Encoding::sparse`], linear in the prediction space), with weak isolation and
//! unserializability added lazily as clauses — counterexample-guided, as Cobra (OSDI'20) and
//! PolySI (VLDB'23) add acyclicity constraints. Each model is a candidate prediction, decided
//! exactly by the checkers ([`super::candidate::judge_candidate`]):
//!
//! - **level fails**: the candidate's boundaries and the read choices of its boundary
//!   transactions are blocked together with every candidate that includes at least as much
//!   with the same choices: a level violation (a cycle of so, wr and the level's arbitration)
//!   only gains edges when more transactions, reads or writes are included, so it persists;
//! - **no cycle** (approximate) or **serializable** (exact): a serial order `σ` of the candidate
//!   gives the ground instance `¬IsSerializable(σ)` of the exact encoding
//!   ([`super::exact::instance_sparse`]): some write–read pair against `σ`, or some writer
//!   strictly between a writer and its reader in `σ`. Every candidate with a `pco` cycle (and,
//!   a fortiori, every unserializable one) satisfies it — the first edge of its rank-ordered
//!   derivation that goes backwards in `σ` is such a fact — and this candidate does not. A
//!   candidate with an acyclic `pco` that is nevertheless unserializable (no `σ`) is blocked
//!   alone;
//! - **prediction**: reported; when more are wanted, its changed reads are blocked together (no
//!   later prediction changes a superset of them).
//!
//! Every clause excludes the current candidate and no answer, and there are finitely many
//! candidates, so the loop ends: with a prediction, or unsat — no prediction exists.

use std::time::{Duration, Instant};

use z3::{Params, SatResult, Solver};

use super::candidate::{judge_candidate, Criterion, Judgement, LEVEL_TIMEOUT};
use super::exact::node_positions;
use super::extract::{self, Built};
use super::feasibility::Encoding;
use super::formula::Lit;
use super::space::{Space, NONE};
use super::{exact, level_core, PredictError, PredictStats, Strategy};
use crate::check::Level;
use crate::history::{OpId, TxnId};

/// How the solver phase ended.
pub(crate) enum LazyEnd {
    /// No (further) prediction exists.
    Exhausted,
    /// As many predictions as wanted were found.
    Enough,
    /// Time ran out or the solver gave up.
    Unknown(String),
}

/// A verified prediction and the `pco` cycle that proves it (if found).
pub(crate) type Found = (Built, Option<Vec<super::PcoEdge>>);

/// The predictions found so far, counted into a progress counter as they are found
/// ([`super::PredictOptions::progress`]); read as a slice.
pub(crate) struct FoundList<'a> {
    items: &'a mut Vec<Found>,
    progress: Option<&'a std::sync::atomic::AtomicUsize>,
}

impl<'a> FoundList<'a> {
    pub(crate) fn new(
        items: &'a mut Vec<Found>,
        progress: Option<&'a std::sync::atomic::AtomicUsize>,
    ) -> FoundList<'a> {
        FoundList { items, progress }
    }

    /// Adds a prediction, and counts it.
    pub(crate) fn push(&mut self, found: Found) {
        self.items.push(found);
        if let Some(p) = self.progress {
            p.store(self.items.len(), std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl std::ops::Deref for FoundList<'_> {
    type Target = [Found];

    fn deref(&self) -> &[Found] {
        self.items
    }
}

/// Searches predictions until `want` are in `found` (those already there are blocked first).
#[allow(clippy::too_many_arguments)]
pub(crate) fn search(
    space: &Space,
    level: Level,
    strategy: Strategy,
    deadline: Option<Instant>,
    want: usize,
    found: &mut FoundList,
    stats: &mut PredictStats,
) -> Result<LazyEnd, PredictError> {
    let generation = Instant::now();
    let mut enc = Encoding::sparse(space);
    enc.some_read_changes();
    if level == Level::Snapshot {
        super::dangerous::require_a_pivot(&mut enc);
    }
    // op → (unit, candidate index of each writer): for blocking earlier predictions.
    let mut unit_of_op: Vec<u32> = vec![NONE; space.history.ops().len()];
    for u in 0..space.units.len() as u32 {
        for &o in space.ops_of(u) {
            unit_of_op[o as usize] = u;
        }
    }
    for (built, _) in found.iter() {
        block_changes(&mut enc, &unit_of_op, &built.changed);
    }
    let solver = Solver::new_for_logic("QF_FD").unwrap_or_default();
    let mut terms = enc.store.to_z3(&solver);
    stats.nodes = space.nodes();
    stats.choices = space.units.len();
    stats.open_choices = space
        .units
        .iter()
        .filter(|u| space.groups[u.group as usize].cands.len() > 1)
        .count();
    stats.generation_ms += ms(generation.elapsed());
    loop {
        stats.encoding = enc.store.size();
        let remaining = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(r) if r > Duration::from_millis(1) => Some(r),
                _ => return Ok(LazyEnd::Unknown("timeout".to_string())),
            },
            None => None,
        };
        if let Some(r) = remaining {
            let mut params = Params::new();
            params.set_u32("timeout", r.as_millis().clamp(1, u32::MAX as u128) as u32);
            solver.set_params(&params);
        }
        let solving = Instant::now();
        let result = crate::interrupt::check(&solver, |s| s.check());
        stats.solving_ms += ms(solving.elapsed());
        stats.solver_calls += 1;
        match result {
            SatResult::Unsat => return Ok(LazyEnd::Exhausted),
            SatResult::Unknown => {
                return Ok(LazyEnd::Unknown(
                    solver
                        .get_reason_unknown()
                        .unwrap_or_else(|| "unknown".to_string()),
                ))
            }
            SatResult::Sat => {}
        }
        let Some(model) = solver.get_model() else {
            // Interrupted right after `sat` (deadline, memory watchdog).
            return Ok(LazyEnd::Unknown(super::stopped_reason(deadline)));
        };
        let verification = Instant::now();
        let values = extract::ModelValues::new(&terms, &model);
        let value = |l: Lit| values.get(l);
        let Some(assignment) = extract::read_assignment(&enc, value).filter(|_| values.complete())
        else {
            return Ok(LazyEnd::Unknown(super::stopped_reason(deadline)));
        };
        let built = extract::build(space, &assignment).map_err(PredictError::Internal)?;
        // PC, SI: the level judges the boundary transactions' whole write sets.
        let full = if matches!(level, Level::Prefix | Level::Snapshot) {
            Some(extract::build_with(space, &assignment, true).map_err(PredictError::Internal)?)
        } else {
            None
        };
        let level_h = full.as_ref().map_or(&built.history, |f| &f.history);
        let judgement = judge_candidate(
            &built.history,
            level_h,
            level,
            Criterion::Strategy(strategy),
            deadline,
            true,
        )?;
        stats.verification_ms += ms(verification.elapsed());
        let more = Instant::now();
        match judgement {
            Judgement::Prediction(cycle) => {
                block_changes(&mut enc, &unit_of_op, &built.changed);
                found.push((built, cycle));
                if found.len() >= want {
                    return Ok(LazyEnd::Enough);
                }
            }
            Judgement::LevelFails(core) => {
                stats.level_clauses += 1;
                let clause = full
                    .as_ref()
                    .filter(|_| !core.is_empty())
                    .and_then(|f| {
                        level_core::core_clause(&enc, &assignment, f, &core, level, deadline)
                    })
                    .unwrap_or_else(|| level_clause(&enc, value, &assignment));
                enc.store.clause(&clause);
            }
            Judgement::FactsFail => {
                stats.level_clauses += 1;
                let clause = level_clause(&enc, value, &assignment);
                enc.store.clause(&clause);
            }
            Judgement::Serializable(Some(order)) => {
                stats.instances += 1;
                let position = node_positions(space, &built, &order);
                exact::instance_sparse(&mut enc, &position);
            }
            Judgement::Serializable(None) => {
                stats.instances += 1;
                let lits = extract::assignment_literals(&enc, value);
                let clause: Vec<Lit> = lits.iter().map(|l| l.not()).collect();
                enc.store.clause(&clause);
            }
            Judgement::Unknown(reason) => return Ok(LazyEnd::Unknown(reason)),
            Judgement::LevelUnknown => return Ok(LazyEnd::Unknown(LEVEL_TIMEOUT.to_string())),
        }
        if !values.complete() {
            // A clause read off a model Z3 stopped giving values for may be wrong.
            return Ok(LazyEnd::Unknown(super::stopped_reason(deadline)));
        }
        terms.sync(&enc.store, &solver);
        stats.generation_ms += ms(more.elapsed());
    }
}

/// The clause that blocks a candidate the level rejects together with every candidate that
/// includes at least as much (each session's boundary at least the lower end of the model's
/// interval) with the same choices for the reads the candidate may change. Sound when a level
/// violation persists in every such candidate: causal, read atomic and read committed (a cycle
/// of so, wr and the level's arbitration only gains edges), and prefix consistency and snapshot
/// isolation when the space registers every transaction's start ([`Space::for_snapshots`]) —
/// the smaller candidate is then a sub-history of the larger one (fewer transactions, a subset
/// of each one's reads with the same writers, the same whole write sets), and the restriction
/// of a commit order that satisfies Prefix (and Conflict) to a sub-history satisfies them too,
/// as their premises only use `so`, `wr`, `co` and write sets (docs/prediction.md).
pub(crate) fn level_clause(
    enc: &Encoding,
    value: impl Fn(Lit) -> bool,
    assignment: &extract::Assignment,
) -> Vec<Lit> {
    let space = enc.space;
    let mut lits = Vec::new();
    for s in 0..space.sessions.len() as u32 {
        let (lo, _) = enc.boundary_interval(s, &value);
        if lo > 0 {
            lits.push(enc.ge(s, lo));
        }
    }
    for u in 0..space.units.len() as u32 {
        let single = space.cands(space.units[u as usize].group).len() == 1;
        if !single && value(enc.inc(u)) && !value(enc.fix(u)) {
            let c = assignment.choice[u as usize];
            let l = enc.sel(u, c);
            if l != Lit::TRUE {
                lits.push(l);
            }
        }
    }
    lits.iter().map(|l| l.not()).collect()
}

/// Blocks every candidate that changes all of `changed` (read op, old writer, new writer) the
/// same way.
fn block_changes(enc: &mut Encoding, unit_of_op: &[u32], changed: &[(OpId, TxnId, TxnId)]) {
    let space = enc.space;
    let mut lits: Vec<Lit> = Vec::new();
    for &(o, _, new) in changed {
        let u = unit_of_op[o as usize];
        if u == NONE {
            continue;
        }
        let g = space.units[u as usize].group;
        let Some(i) = space
            .cands(g)
            .iter()
            .position(|&c| space.node_txn[c as usize] == new)
        else {
            continue;
        };
        let l = enc.sel(u, i as u32);
        if !lits.contains(&l) {
            lits.push(l);
        }
    }
    if !lits.is_empty() {
        let clause: Vec<Lit> = lits.iter().map(|l| l.not()).collect();
        enc.store.clause(&clause);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
