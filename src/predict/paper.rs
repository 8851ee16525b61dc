//! The paper-form prediction engine (IsoPredict PLDI'24 §4 and appendix B; [`Engine::Paper`]):
//! steps 2–5 of the module documentation over every pair of transactions of the prediction
//! space — the space and the constraints (feasible prefix with boundary, weak isolation,
//! exact or approximate unserializability), Z3 under the deadline, the model read back as a
//! candidate, re-verified ([`super::candidate`]), and blocked or refuted when it fails.
//!
//! Two forms of it ([`Form`]): the reference ([`predict`]), and the scalable engine's solver
//! phase on a small space ([`solve_small_space`], docs/prediction.md "Engines", small-space
//! mode), which encodes pc/si lazily and judges `pco` after the fact.

use std::time::{Duration, Instant};

use z3::{Params, SatResult, Solver};

use super::candidate::{judge_candidate, Criterion, Judgement};
use super::describe::describe;
use super::extract::{self, Assignment, Built, ModelValues};
use super::feasibility::Encoding;
use super::formula::{self, Z3Terms};
use super::judge::{judge, How, Judged};
use super::space::Space;
use super::{
    approx, dangerous, exact, is_si_pc, isolation, isolation_si_pc, lazy, level_core, ms, ranked,
    saturate, stopped_reason, Engine, ExactMethod, PredictError, PredictOptions, PredictOutcome,
    RankEncoding, Strategy, Verdict,
};
use crate::check::Level;
use crate::history::History;

/// Bytes the paper-form engine is estimated to take per cube of its nodes (transactions
/// touching contested keys, t0 included): its pair relations have `n²` variables and their
/// closures `n³` clauses. Fitted to the measurements of issue 8 (61 nodes: 0.8 GB, 97 nodes:
/// 2.6 GB, 201 nodes: > 14 GB).
pub const PAPER_BYTES_PER_NODE_CUBE: u64 = 3 * 1024;

/// What the encodings say eagerly and what is judged on each candidate instead.
#[derive(Debug, Clone, Copy)]
struct Form {
    /// pc, si: causal consistency (which both imply) is encoded eagerly and the level is added
    /// lazily — a candidate the exact checker rejects is blocked with every candidate that
    /// includes at least as much ([`lazy::level_clause`], [`level_core::core_clause`]) —
    /// instead of the paper-form pc/si encoding.
    level_lazily: bool,
    /// Approximate strategies: instead of the rank (rounds) encoding of `pco`, candidates are
    /// judged by the `pco` saturation after the fact, as exact-strict's are by the
    /// serializability check: a serializable candidate's serial order becomes an exact
    /// instance (refuting every candidate it explains, none of which is a prediction of any
    /// strategy), a valid unserializable candidate without a `pco` cycle is blocked alone.
    pco_after_the_fact: bool,
}

impl Form {
    /// The paper's encodings, every candidate re-verified.
    const REFERENCE: Form = Form {
        level_lazily: false,
        pco_after_the_fact: false,
    };

    /// The scalable engine's solver phase on a small space.
    fn small_space(options: &PredictOptions) -> Form {
        Form {
            level_lazily: is_si_pc(options.level),
            pco_after_the_fact: options.strategy != Strategy::ExactStrict,
        }
    }

    /// Whether serializable candidates are refuted by exact instances (exact-strict by
    /// instances, and the approximate strategies judged after the fact).
    fn refutes_by_instances(self, options: &PredictOptions) -> bool {
        self.pco_after_the_fact
            || (options.strategy, options.exact) == (Strategy::ExactStrict, ExactMethod::Instances)
    }

    /// What makes a valid candidate a prediction.
    fn criterion(self, options: &PredictOptions) -> Criterion {
        if self.pco_after_the_fact {
            Criterion::Strategy(options.strategy)
        } else {
            Criterion::NoSerialOrder
        }
    }
}

/// The paper-form engine after the observed history's check (the reference engine).
pub(crate) fn predict(
    history: &History,
    options: &PredictOptions,
    deadline: Option<Instant>,
    mut outcome: PredictOutcome,
) -> Result<PredictOutcome, PredictError> {
    // A recording whose every changeable read is locked (or follows a closed connection):
    // every candidate that keeps the facts is serializable (`locks::reads_locked_or_settled`).
    if super::locks::reads_locked_or_settled(history).is_some() {
        super::certificate::conclude_none(&mut outcome, super::Certificate::LockedReads, "");
        return Ok(outcome);
    }
    run(history, options, deadline, outcome, Form::REFERENCE)
}

/// The scalable engine's solver phase on a space small enough for the paper-form encodings,
/// whose eager constraints prove "no prediction" faster than the sparse ones.
pub(crate) fn solve_small_space(
    history: &History,
    options: &PredictOptions,
    deadline: Option<Instant>,
    outcome: PredictOutcome,
) -> Result<PredictOutcome, PredictError> {
    run(
        history,
        options,
        deadline,
        outcome,
        Form::small_space(options),
    )
}

/// Steps 2–5: space and constraints, then solve, read, re-verify, block.
fn run(
    history: &History,
    options: &PredictOptions,
    deadline: Option<Instant>,
    mut outcome: PredictOutcome,
    form: Form,
) -> Result<PredictOutcome, PredictError> {
    outcome.stats.engine = Some(Engine::Paper);
    let generation = Instant::now();
    let space = build_space(history, options)?;
    if let Some(reason) = over_memory_budget(&space, options.memory) {
        outcome.reason = Some(reason);
        return Ok(outcome);
    }
    let mut search = Search::encode(&space, history, options, deadline, form);
    outcome.stats.nodes = space.nodes();
    outcome.stats.choices = space.units.len();
    outcome.stats.open_choices = space
        .units
        .iter()
        .filter(|u| space.groups[u.group as usize].cands.len() > 1)
        .count();
    outcome.stats.generation_ms = ms(generation.elapsed());
    search.solve(history, options, deadline, form, outcome)
}

/// Step 2a: the prediction space — pruned read choices and boundary thresholds (pc, si: every
/// transaction's start is a threshold).
fn build_space<'h>(
    history: &'h History,
    options: &PredictOptions,
) -> Result<Space<'h>, PredictError> {
    let level = options.level;
    if is_si_pc(level) {
        Space::for_snapshots(
            history,
            options.strategy.boundary(),
            level == Level::Snapshot,
        )
    } else {
        Space::new(
            history,
            options.strategy.boundary(),
            level == Level::ReadCommitted,
        )
    }
    .map_err(|e| PredictError::InvalidObservation {
        op: e.op,
        message: e.message,
    })
}

/// Why the encodings over `space` would not fit the memory budget, if they would not.
fn over_memory_budget(space: &Space, memory: Option<u64>) -> Option<String> {
    let nodes = space.nodes() as u64;
    let estimate = nodes
        .saturating_mul(nodes)
        .saturating_mul(nodes)
        .saturating_mul(PAPER_BYTES_PER_NODE_CUBE);
    let memory = memory.filter(|&m| estimate > m)?;
    Some(format!(
        "memory limit: the paper-form encodings over {nodes} transactions would take ~{} MB, \
         over the {} MB budget; try --engine scalable or a larger --memory",
        estimate >> 20,
        memory >> 20
    ))
}

/// Whether the observed history has no cycle that unserializability could build on: every
/// prefix of it is then free of one too (the rules are monotone), and a prediction needs a
/// changed read. Exact-strict: serializable by the exact check; approximate: an acyclic `pco`.
fn observed_acyclic(history: &History, strategy: Strategy, deadline: Option<Instant>) -> bool {
    match strategy {
        Strategy::ExactStrict => matches!(
            judge(history, Level::Serializable, How::Exact, deadline),
            Ok(Judged::Holds(_))
        ),
        // Giving up (the deadline) only drops this shortcut.
        _ => matches!(
            saturate::saturate(history, deadline),
            saturate::Pco::Acyclic(..)
        ),
    }
}

/// Whether the loop goes on or the outcome is the answer.
enum Step {
    Continue,
    Answer,
}

/// The encodings in Z3 and where the rounds of the approximate strategies stand.
struct Search<'s, 'h> {
    enc: Encoding<'s, 'h>,
    solver: Solver,
    terms: Z3Terms,
    /// Approximate strategies with [`RankEncoding::Rounds`] (and `pco` not judged after the
    /// fact): the rounds of `pco` generated.
    rounds: Option<approx::Rounds>,
    /// The round a cycle is asked for.
    round: usize,
    /// Whether the current question is "does some choice of reads grow `pco` in the next
    /// round" rather than "is there a cycle in this round".
    growing: bool,
    /// The assumption of the current question (rounds only).
    goal: Option<formula::Lit>,
}

impl<'s, 'h> Search<'s, 'h> {
    /// Step 2b: the constraints — feasible prefix with boundary, weak isolation, and
    /// unserializability as `form` and the strategy say — handed to Z3.
    fn encode(
        space: &'s Space<'h>,
        history: &History,
        options: &PredictOptions,
        deadline: Option<Instant>,
        form: Form,
    ) -> Search<'s, 'h> {
        let level = options.level;
        let mut enc = Encoding::new(space);
        if form.level_lazily {
            isolation::encode(&mut enc, Level::Causal);
            if level == Level::Snapshot {
                dangerous::require_a_pivot(&mut enc);
            }
        } else if is_si_pc(level) {
            isolation_si_pc::encode(&mut enc, level);
        } else {
            isolation::encode(&mut enc, level);
        }
        if observed_acyclic(history, options.strategy, deadline) {
            enc.some_read_changes();
        }
        let mut rounds = None;
        match (options.strategy, options.ranks) {
            (Strategy::ExactStrict, _) if options.exact == ExactMethod::Quantifier => {
                exact::encode(&mut enc)
            }
            (Strategy::ExactStrict, _) => {} // instances are added as candidates are refuted
            _ if form.pco_after_the_fact => {}
            (_, RankEncoding::Integer) => ranked::encode(&mut enc),
            (_, RankEncoding::Rounds) => rounds = Some(approx::Rounds::new(&mut enc)),
        }
        // Approximate with rounds: first ask for a cycle in round 1; when there is none,
        // whether some choice of reads grows pco in round 2 (then ask for a cycle there, and
        // so on).
        let round = 1;
        let goal = rounds.as_ref().map(|r| r.cyclic(&mut enc, round));
        // Without integers (the approximate encodings, unless the commit order needs
        // positions) the problem is propositional: Z3's SAT engine (logic QF_FD) is much
        // faster on it.
        let solver = if enc.store.size().int_vars == 0 {
            Solver::new_for_logic("QF_FD").unwrap_or_default()
        } else {
            Solver::new()
        };
        let terms = enc.store.to_z3(&solver);
        Search {
            enc,
            solver,
            terms,
            rounds,
            round,
            growing: false,
            goal,
        }
    }

    /// Steps 3–5: solve, read, re-verify; block models that fail, until an answer.
    fn solve(
        &mut self,
        history: &History,
        options: &PredictOptions,
        deadline: Option<Instant>,
        form: Form,
        mut outcome: PredictOutcome,
    ) -> Result<PredictOutcome, PredictError> {
        loop {
            outcome.stats.encoding = self.enc.store.size();
            outcome.stats.rounds = self.rounds.as_ref().map(|r| r.last() as u32);
            let Some(result) = self.check(deadline, &mut outcome) else {
                outcome.reason = Some("timeout".to_string());
                return Ok(outcome);
            };
            match result {
                SatResult::Unknown => {
                    outcome.reason = Some(
                        self.solver
                            .get_reason_unknown()
                            .unwrap_or_else(|| "unknown".to_string()),
                    );
                    return Ok(outcome);
                }
                SatResult::Unsat if self.rounds.is_some() && !self.growing => {
                    // No cycle by round `round`: does some choice of reads still grow pco?
                    self.ask_growth(&mut outcome);
                    continue;
                }
                SatResult::Unsat => {
                    // Exact and integer ranks: no prediction. Rounds: every choice of reads
                    // has reached its least pco, acyclic.
                    super::certificate::conclude_none(
                        &mut outcome,
                        super::Certificate::SearchExhausted,
                        "",
                    );
                    return Ok(outcome);
                }
                SatResult::Sat if self.growing => {
                    // Some choice of reads needs another round: ask for a cycle there.
                    self.ask_cycle_in_next_round(&mut outcome);
                    continue;
                }
                SatResult::Sat => {}
            }
            if let Step::Answer = self.on_model(history, options, deadline, form, &mut outcome)? {
                return Ok(outcome);
            }
        }
    }

    /// One solver call within the deadline; `None` when no time is left.
    fn check(
        &mut self,
        deadline: Option<Instant>,
        outcome: &mut PredictOutcome,
    ) -> Option<SatResult> {
        if let Some(d) = deadline {
            let left = d
                .checked_duration_since(Instant::now())
                .filter(|r| *r > Duration::ZERO)?;
            let mut params = Params::new();
            params.set_u32(
                "timeout",
                left.as_millis().clamp(1, u32::MAX as u128) as u32,
            );
            self.solver.set_params(&params);
        }
        let solving = Instant::now();
        let (goal, terms) = (self.goal, &self.terms);
        let result = crate::interrupt::check(&self.solver, |s| match goal {
            Some(g) => s.check_assumptions(&[terms.term(g).expect("goal literal")]),
            None => s.check(),
        });
        outcome.stats.solving_ms += ms(solving.elapsed());
        outcome.stats.solver_calls += 1;
        Some(result)
    }

    /// Rounds: after "no cycle by round `round`", ask whether some choice of reads grows
    /// `pco` in the next round.
    fn ask_growth(&mut self, outcome: &mut PredictOutcome) {
        let more = Instant::now();
        let r = self.rounds.as_mut().expect("rounds");
        if r.last() == self.round {
            r.add_round(&mut self.enc);
        }
        self.goal = Some(r.grows(&mut self.enc, self.round));
        self.growing = true;
        self.terms.sync(&self.enc.store, &self.solver);
        outcome.stats.generation_ms += ms(more.elapsed());
    }

    /// Rounds: some choice of reads grows `pco`: ask for a cycle in the next round.
    fn ask_cycle_in_next_round(&mut self, outcome: &mut PredictOutcome) {
        let more = Instant::now();
        let r = self.rounds.as_mut().expect("growing only with rounds");
        self.round += 1;
        self.goal = Some(r.cyclic(&mut self.enc, self.round));
        self.growing = false;
        self.terms.sync(&self.enc.store, &self.solver);
        outcome.stats.generation_ms += ms(more.elapsed());
    }

    /// Steps 4–5 on a model: read the candidate, judge it, and report it, refute it by an
    /// exact instance, block it with the level's clause, or block it alone.
    fn on_model(
        &mut self,
        history: &History,
        options: &PredictOptions,
        deadline: Option<Instant>,
        form: Form,
        outcome: &mut PredictOutcome,
    ) -> Result<Step, PredictError> {
        let level = options.level;
        // A model can be lost when Z3 is interrupted right after `sat` (deadline, memory
        // watchdog), and a clause read off a model Z3 stopped giving values for may be wrong:
        // the answer is then unknown, like an interrupted call.
        let stopped = |outcome: &mut PredictOutcome| -> Result<Step, PredictError> {
            outcome.reason = Some(stopped_reason(deadline));
            Ok(Step::Answer)
        };
        let Some(model) = self.solver.get_model() else {
            return stopped(outcome);
        };
        let verification = Instant::now();
        let values = ModelValues::new(&self.terms, &model);
        let value = |l| values.get(l);
        let Some(assignment) =
            extract::read_assignment(&self.enc, value).filter(|_| values.complete())
        else {
            return stopped(outcome);
        };
        let space = self.enc.space;
        let built = extract::build(space, &assignment).map_err(PredictError::Internal)?;
        // PC, SI: boundary transactions commit with their whole write sets (isolation_si_pc).
        let full = if is_si_pc(level) {
            Some(extract::build_with(space, &assignment, true).map_err(PredictError::Internal)?)
        } else {
            None
        };
        let judgement = judge_candidate(
            &built.history,
            full.as_ref().map_or(&built.history, |f| &f.history),
            level,
            form.criterion(options),
            deadline,
            form.level_lazily,
        )?;
        outcome.stats.verification_ms += ms(verification.elapsed());
        match judgement {
            Judgement::Serializable(Some(order)) if form.refutes_by_instances(options) => {
                self.refute_by_instance(&built, &order, outcome);
                Ok(Step::Continue)
            }
            Judgement::FactsFail => {
                // Locked reads or connection order broken: monotone as a level violation.
                outcome.stats.level_clauses += 1;
                let clause =
                    level_clause(&self.enc, &values, &assignment, None, &[], level, deadline);
                if !values.complete() {
                    return stopped(outcome);
                }
                self.add_clause(&clause);
                Ok(Step::Continue)
            }
            Judgement::LevelFails(core) if form.level_lazily => {
                let more = Instant::now();
                outcome.stats.level_clauses += 1;
                let clause = level_clause(
                    &self.enc,
                    &values,
                    &assignment,
                    full.as_ref(),
                    &core,
                    level,
                    deadline,
                );
                if !values.complete() {
                    return stopped(outcome);
                }
                self.add_clause(&clause);
                outcome.stats.generation_ms += ms(more.elapsed());
                Ok(Step::Continue)
            }
            Judgement::Serializable(None) => {
                // Unserializable but without a pco cycle: no approximate prediction, and no
                // serial order to refute others with; blocked alone.
                let lits = extract::assignment_literals(&self.enc, value);
                if !values.complete() {
                    return stopped(outcome);
                }
                let clause: Vec<formula::Lit> = lits.iter().map(|l| l.not()).collect();
                self.add_clause(&clause);
                outcome.stats.instances += 1;
                Ok(Step::Continue)
            }
            Judgement::Prediction(_) => {
                outcome.verdict = Verdict::Predicted;
                let p = describe(history, built, None);
                outcome.predictions = vec![p.clone()];
                outcome.prediction = Some(p);
                Ok(Step::Answer)
            }
            Judgement::LevelUnknown => {
                outcome.reason = Some("re-verification: timeout".to_string());
                Ok(Step::Answer)
            }
            Judgement::Unknown(reason) => {
                outcome.reason = Some(format!("re-verification: {reason}"));
                Ok(Step::Answer)
            }
            Judgement::LevelFails(_) | Judgement::Serializable(Some(_)) => {
                // A model the encodings should not have given: rejected, blocked alone.
                outcome.stats.rejected_models += 1;
                if outcome.stats.rejected_models > options.max_rejected {
                    outcome.reason = Some(format!(
                        "{} models failed re-verification",
                        outcome.stats.rejected_models
                    ));
                    return Ok(Step::Answer);
                }
                let lits = extract::assignment_literals(&self.enc, value);
                if !values.complete() {
                    return stopped(outcome);
                }
                self.block_model(&lits);
                Ok(Step::Continue)
            }
        }
    }

    /// A serializable candidate: its serial order becomes an instance of the quantified
    /// formula, refuting every candidate it also explains.
    fn refute_by_instance(
        &mut self,
        built: &Built,
        order: &[crate::history::TxnId],
        outcome: &mut PredictOutcome,
    ) {
        let more = Instant::now();
        let position = exact::node_positions(self.enc.space, built, order);
        exact::instance(&mut self.enc, &position);
        self.terms.sync(&self.enc.store, &self.solver);
        outcome.stats.instances += 1;
        outcome.stats.generation_ms += ms(more.elapsed());
    }

    /// Adds `clause` to the encodings and hands it to Z3.
    fn add_clause(&mut self, clause: &[formula::Lit]) {
        self.enc.store.clause(clause);
        self.terms.sync(&self.enc.store, &self.solver);
    }

    /// Blocks the model whose read choices and boundaries are `lits` (asserted to Z3 only).
    fn block_model(&mut self, lits: &[formula::Lit]) {
        let negated: Vec<z3::ast::Bool> = lits
            .iter()
            .filter_map(|&l| self.terms.term(l.not()))
            .collect();
        self.solver.assert(z3::ast::Bool::or(&negated));
    }
}

/// The clause that blocks a candidate the level rejects (pc, si judged lazily): through the
/// core of the violation when the checker found one ([`level_core::core_clause`]), else with
/// every candidate that includes at least as much ([`lazy::level_clause`]).
fn level_clause(
    enc: &Encoding,
    values: &ModelValues,
    assignment: &Assignment,
    full: Option<&Built>,
    core: &[crate::history::TxnId],
    level: Level,
    deadline: Option<Instant>,
) -> Vec<formula::Lit> {
    full.filter(|_| !core.is_empty())
        .and_then(|f| level_core::core_clause(enc, assignment, f, core, level, deadline))
        .unwrap_or_else(|| lazy::level_clause(enc, |l| values.get(l), assignment))
}
