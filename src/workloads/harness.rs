//! The OLTP-Bench harness as IsoPredict modified it (PLDI'24 §7.1; notes/workloads.md §1):
//! each terminal loops exactly N times — draw a procedure type from its own
//! `Random(seed + terminal)` (r = nextInt(Σ weights) + 1, the first type whose cumulative
//! weight reaches r), run the call; a user abort rolls back, is not retried and still counts.
//! Whole transactions run one at a time; a seeded scheduler picks the next session (or, when
//! replaying a prediction, the plan's turns), so a configuration fully determines a run.

use crate::error::InputError;
use crate::history::{History, TxnId};
use crate::store::{
    interleave_attempts, run_clients, Attempt, Client, Committed, Divergence, Outcome, ReadPolicy,
    Schedule, Store, StoreError, Tx,
};

use super::java_random::JavaRandom;
use super::{InvariantCheck, Procedure, Step, Terminal, Workload};

/// Transactions per terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// 4 per terminal (the paper's small workloads).
    Small,
    /// 8 per terminal (the paper's large workloads).
    Large,
}

impl Size {
    /// Procedure calls per terminal.
    pub fn calls_per_terminal(self) -> usize {
        match self {
            Size::Small => 4,
            Size::Large => 8,
        }
    }

    /// `small` or `large`.
    pub fn name(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Large => "large",
        }
    }
}

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "small" => Ok(Size::Small),
            "large" => Ok(Size::Large),
            _ => Err(format!("unknown size {s:?} (small or large)")),
        }
    }
}

/// One run's configuration.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The paper's run number N: procedure types come from Java seed N·10000 + terminal.
    pub seed: u64,
    /// Calls per terminal.
    pub size: Size,
    /// Number of terminals (sessions); the paper uses 3.
    pub terminals: usize,
    /// How reads choose their writers.
    pub policy: ReadPolicy,
    /// Seed of the session scheduler (ignored when replaying, which follows the plan).
    pub schedule_seed: u64,
    /// When replaying: the transactions the observed run ran ([`Run::attempts`]), so that
    /// rolled-back and empty ones run where they ran then (see
    /// [`crate::store::interleave_attempts`]); without them, they run just before their
    /// session's next committed transaction.
    pub observed_attempts: Option<Vec<Attempt>>,
}

impl RunConfig {
    /// The paper's configuration: 3 terminals, latest reads, scheduler seeded by the run.
    pub fn paper(seed: u64, size: Size) -> RunConfig {
        RunConfig {
            seed,
            size,
            terminals: 3,
            policy: ReadPolicy::Latest,
            schedule_seed: seed,
            observed_attempts: None,
        }
    }

    /// The Java seed of the transaction-type generators: N·10000.
    pub fn java_seed(&self) -> i64 {
        (self.seed as i64).wrapping_mul(10000)
    }
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    /// The store, holding the committed state and the recorded events.
    pub store: Store,
    /// The recorded history.
    pub history: History,
    /// The history's committed transactions in execution order.
    pub commit_order: Vec<TxnId>,
    /// The invariants evaluated on the final state.
    pub invariants: Vec<InvariantCheck>,
    /// Where a replay left its plan (empty for other policies).
    pub divergences: Vec<Divergence>,
    /// Per procedure: (calls that committed, calls that rolled back).
    pub calls: Vec<(&'static str, usize, usize)>,
    /// Every transaction that ran, in order (clients are terminals).
    pub attempts: Vec<Attempt>,
    /// Per transaction of `history` (indexed by its id; `None` for the initial transaction):
    /// the procedure call that ran it.
    pub txn_calls: Vec<Option<TxnCall>>,
}

/// The procedure call (and step of it) a transaction belongs to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TxnCall {
    /// The terminal (0-based; its session's external id is the workload's
    /// [`Workload::first_session`] + terminal).
    pub terminal: usize,
    /// The terminal's call number (0-based, counting rolled-back calls too).
    pub call: usize,
    /// The procedure's name.
    pub procedure: &'static str,
    /// The step of a call spanning several transactions (0 for the first).
    pub step: u32,
    /// The call's parameters in words, when the workload reports them
    /// ([`Terminal::parameters`]).
    pub parameters: Option<String>,
}

impl TxnCall {
    /// `Procedure(parameters)` with ` step N` for later steps, e.g. `Amalgamate(custId0=1,
    /// custId1=3)`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{}({})",
            self.procedure,
            self.parameters.as_deref().unwrap_or("")
        );
        if self.step > 0 {
            s.push_str(&format!(" step {}", self.step + 1));
        }
        s
    }
}

impl Run {
    /// Whether every invariant holds.
    pub fn invariants_hold(&self) -> bool {
        self.invariants.iter().all(|i| i.holds)
    }
}

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The store rejected the configuration.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The recorded history did not build (a bug; reported rather than hidden).
    #[error(transparent)]
    History(#[from] InputError),
}

struct TerminalClient<'w> {
    terminal: Box<dyn Terminal>,
    types: JavaRandom,
    procedures: &'w [Procedure],
    total_weight: i32,
    remaining: usize,
    call: Option<(usize, u32)>,
    calls: Vec<(usize, usize)>,
    /// Per transaction run, in order: (call number, procedure, step, parameters).
    log: Vec<(usize, usize, u32, Option<String>)>,
    started: usize,
}

impl TerminalClient<'_> {
    fn choose(&mut self) -> usize {
        let r = self.types.next_int_bounded(self.total_weight) + 1;
        let mut cumulative = 0i32;
        for (i, p) in self.procedures.iter().enumerate() {
            cumulative += p.weight as i32;
            if r <= cumulative {
                return i;
            }
        }
        self.procedures.len() - 1
    }
}

impl Client for TerminalClient<'_> {
    fn is_done(&self) -> bool {
        self.remaining == 0 && self.call.is_none()
    }

    fn run(&mut self, tx: &mut Tx<'_>) -> Outcome {
        let (procedure, step) = match self.call {
            Some(c) => c,
            None => {
                self.remaining -= 1;
                self.started += 1;
                (self.choose(), 0)
            }
        };
        let result = self.terminal.run(procedure, step, tx);
        self.log.push((
            self.started - 1,
            procedure,
            step,
            self.terminal.parameters(),
        ));
        match result {
            Step::Continue => {
                self.call = Some((procedure, step + 1));
                Outcome::Commit
            }
            Step::Done(outcome) => {
                self.call = None;
                match outcome {
                    Outcome::Commit => self.calls[procedure].0 += 1,
                    Outcome::Rollback => self.calls[procedure].1 += 1,
                }
                outcome
            }
        }
    }
}

/// Runs `workload` under `config`.
pub fn run(workload: &dyn Workload, config: &RunConfig) -> Result<Run, RunError> {
    let mut store = Store::new(config.policy.clone())?;
    workload.load(&mut store.loader());
    let procedures = workload.procedures();
    let total_weight = procedures
        .iter()
        .map(|p| p.weight as i32)
        .sum::<i32>()
        .max(1);
    let sessions: Vec<_> = (0..config.terminals)
        .map(|t| store.open_session(workload.first_session() + t as u64))
        .collect();
    let mut clients: Vec<TerminalClient> = workload
        .terminals(config.terminals)
        .into_iter()
        .enumerate()
        .map(|(t, terminal)| TerminalClient {
            terminal,
            types: JavaRandom::new(config.java_seed().wrapping_add(t as i64)),
            procedures,
            total_weight,
            remaining: config.size.calls_per_terminal(),
            call: None,
            calls: vec![(0, 0); procedures.len()],
            log: Vec::new(),
            started: 0,
        })
        .collect();
    let schedule = match &config.policy {
        ReadPolicy::Replay { plan, .. } => {
            let turns: Vec<usize> = plan
                .turns
                .iter()
                .filter_map(|&s| s.checked_sub(workload.first_session()))
                .map(|t| t as usize)
                .filter(|&t| t < config.terminals)
                .collect();
            match &config.observed_attempts {
                Some(observed) => {
                    Schedule::Steps(interleave_attempts(&turns, observed, config.terminals))
                }
                None => Schedule::Turns(turns),
            }
        }
        _ => Schedule::Seeded(config.schedule_seed),
    };
    let attempts = {
        let mut refs: Vec<&mut dyn Client> =
            clients.iter_mut().map(|c| c as &mut dyn Client).collect();
        run_clients(&mut store, &sessions, &mut refs, &schedule)
    };
    store.finish_replay();
    let name = format!(
        "{}_{}_{}",
        workload.name(),
        config.size.name(),
        config.java_seed()
    );
    let history = store.history(&name)?;
    let commit_order = store.commit_order();
    let invariants = workload.invariants(&mut store.snapshot());
    let calls = procedures
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (ok, aborted) = clients
                .iter()
                .fold((0, 0), |(a, b), c| (a + c.calls[i].0, b + c.calls[i].1));
            (p.name, ok, aborted)
        })
        .collect();
    let divergences = store.divergences().to_vec();
    let mut txn_calls = vec![None; history.txn_count()];
    let mut next_of = vec![0usize; clients.len()];
    for a in &attempts {
        let c = a.client;
        let Some((call, procedure, step, parameters)) = clients[c].log.get(next_of[c]).cloned()
        else {
            continue;
        };
        next_of[c] += 1;
        if let Some(Committed::At(seq)) = a.outcome {
            if let Some(&t) = (seq as usize)
                .checked_sub(1)
                .and_then(|i| commit_order.get(i))
            {
                txn_calls[t as usize] = Some(TxnCall {
                    terminal: c,
                    call,
                    procedure: procedures[procedure].name,
                    step,
                    parameters,
                });
            }
        }
    }
    Ok(Run {
        store,
        history,
        commit_order,
        invariants,
        divergences,
        calls,
        attempts,
        txn_calls,
    })
}
