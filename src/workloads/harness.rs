//! The OLTP-Bench harness as IsoPredict modified it (PLDI'24 §7.1; notes/workloads.md §1):
//! each terminal loops exactly N times — draw a procedure type from its own
//! `Random(seed + terminal)` (r = nextInt(Σ weights) + 1, the first type whose cumulative
//! weight reaches r), run the call; a user abort rolls back, is not retried and still counts.
//! Whole transactions run one at a time; a seeded scheduler picks the next session (or, when
//! replaying a prediction, the plan's turns), so a configuration fully determines a run.

use crate::error::InputError;
use crate::history::{History, TxnId};
use crate::store::{
    interleave_attempts, Attempt, Backend, BackendError, Client, DatabaseRun, Divergence, Embedded,
    Job, Outcome, ReadPolicy, ScanMode, Schedule, Store, StoreError, Tx,
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
    /// This many per terminal (`--calls N`; workloads at the scale of real test runs).
    Calls(usize),
}

impl Size {
    /// Procedure calls per terminal.
    pub fn calls_per_terminal(self) -> usize {
        match self {
            Size::Small => 4,
            Size::Large => 8,
            Size::Calls(n) => n,
        }
    }

    /// `small`, `large`, or `N-calls`.
    pub fn name(self) -> String {
        match self {
            Size::Small => "small".to_string(),
            Size::Large => "large".to_string(),
            Size::Calls(n) => format!("{n}-calls"),
        }
    }
}

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "small" => Ok(Size::Small),
            "large" => Ok(Size::Large),
            _ => match s.strip_suffix("-calls").unwrap_or(s).parse::<usize>() {
                Ok(n) if n > 0 => Ok(Size::Calls(n)),
                _ => Err(format!(
                    "unknown size {s:?} (small, large, or a number of calls per session)"
                )),
            },
        }
    }
}

/// The most sessions (terminals) a workload run has: each is a client with its own state.
pub const MAX_SESSIONS: usize = 10_000;

/// The most calls a workload run makes in all (sessions × calls per session): a run and its
/// history are kept whole in memory.
pub const MAX_TOTAL_CALLS: usize = 10_000_000;

/// Checks a run's size before anything is allocated for it: at least one session and one
/// call, at most [`MAX_SESSIONS`] sessions and [`MAX_TOTAL_CALLS`] calls in all. The error
/// names the option to change.
pub fn check_run_size(sessions: usize, calls_per_session: usize) -> Result<(), String> {
    if sessions == 0 || calls_per_session == 0 {
        return Err("--sessions and --calls must be at least 1".to_string());
    }
    if sessions > MAX_SESSIONS {
        return Err(format!(
            "--sessions is at most {MAX_SESSIONS}, not {sessions}"
        ));
    }
    let total = sessions.saturating_mul(calls_per_session);
    if total > MAX_TOTAL_CALLS {
        return Err(format!(
            "{sessions} sessions × {calls_per_session} calls is {total} calls; a run makes at \
             most {MAX_TOTAL_CALLS} (lower --sessions or --calls)"
        ));
    }
    Ok(())
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
    /// [`crate::store::interleave_attempts`]) and those the observed store aborted are
    /// aborted again; without them, they run just before their session's next committed
    /// transaction.
    pub observed_attempts: Option<Vec<Attempt>>,
    /// How table statements find their rows on the embedded store: keyed (the default) or
    /// MonkeyDB's full scan ([`ScanMode::Full`], the paper's trace shapes). A replay scans as
    /// the run it replays.
    pub scan: ScanMode,
}

impl RunConfig {
    /// The paper's configuration: 3 terminals, latest reads, scheduler seeded by the run;
    /// keyed scans (set `scan` to [`ScanMode::Full`] for the paper's trace shapes).
    pub fn paper(seed: u64, size: Size) -> RunConfig {
        RunConfig {
            seed,
            size,
            terminals: 3,
            policy: ReadPolicy::Latest,
            schedule_seed: seed,
            observed_attempts: None,
            scan: ScanMode::Keyed,
        }
    }

    /// The paper's configuration with MonkeyDB's full scans: the traces of the paper's
    /// artifact, event for event (notes/workloads.md §1.4).
    pub fn monkeydb(seed: u64, size: Size) -> RunConfig {
        RunConfig {
            scan: ScanMode::Full,
            ..RunConfig::paper(seed, size)
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
    /// The embedded store holding the final state (on the embedded store also the recorded
    /// events; see [`Run::write_trace`]).
    pub store: Store,
    /// On a real database: which one, at which isolation level, and how the run went
    /// (`None`: the embedded store).
    pub database: Option<DatabaseRun>,
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

    /// Writes the run in the IsoPredict trace format: MonkeyDB's event log (sets as
    /// INSERT/DELETE/CONTAINS) from the embedded store, or the recorded history on a
    /// database.
    pub fn write_trace(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match &self.database {
            None => self.store.write_trace(out),
            Some(_) => {
                crate::formats::write_to(&self.history, crate::formats::Format::IsoPredict, out)
                    .map_err(std::io::Error::other)
            }
        }
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
    /// The database could not be reached or set up.
    #[error("{0}")]
    Database(String),
    /// A stop was requested before the run ended ([`crate::interrupt`]).
    #[error("interrupted")]
    Interrupted,
}

impl From<BackendError> for RunError {
    fn from(e: BackendError) -> Self {
        match e {
            BackendError::Store(e) => RunError::Store(e),
            BackendError::History(e) => RunError::History(e),
            BackendError::Database(e) => RunError::Database(e),
            BackendError::Interrupted => RunError::Interrupted,
        }
    }
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
    /// What the last transaction did: (procedure, step, result), to undo it when the store
    /// aborts it.
    last: Option<(usize, u32, Step)>,
    /// Store aborts of the current call so far, and how many the workload retries.
    store_aborts: u32,
    max_retries: u32,
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
        self.last = Some((procedure, step, result));
        match result {
            Step::Continue => {
                self.call = Some((procedure, step + 1));
                Outcome::Commit
            }
            Step::Done(outcome) => {
                self.call = None;
                self.store_aborts = 0;
                match outcome {
                    Outcome::Commit => self.calls[procedure].0 += 1,
                    Outcome::Rollback => self.calls[procedure].1 += 1,
                }
                outcome
            }
        }
    }

    /// The store aborted the last transaction: undo its bookkeeping, then retry the same
    /// step (OLTP-Bench retries a call the database aborted; the terminal draws its
    /// parameters again) while the workload allows, else count the call as rolled back.
    fn aborted_by_store(&mut self) {
        let Some((procedure, step, result)) = self.last.take() else {
            return;
        };
        let retries = self.store_aborts;
        match result {
            Step::Continue => {}
            Step::Done(Outcome::Commit) => self.calls[procedure].0 -= 1,
            Step::Done(Outcome::Rollback) => self.calls[procedure].1 -= 1,
        }
        if retries < self.max_retries {
            self.store_aborts += 1;
            self.call = Some((procedure, step));
        } else {
            self.store_aborts = 0;
            self.call = None;
            self.calls[procedure].1 += 1;
        }
    }
}

/// Runs `workload` under `config` on the embedded store.
pub fn run(workload: &dyn Workload, config: &RunConfig) -> Result<Run, RunError> {
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
    // Transactions the observed run's store aborted, as (client, index among its
    // transactions): aborted again.
    let mut forced_aborts = Vec::new();
    if let Some(observed) = &config.observed_attempts {
        let mut index = vec![0usize; config.terminals];
        for a in observed.iter().filter(|a| a.client < config.terminals) {
            if a.by_store {
                forced_aborts.push((a.client, index[a.client]));
            }
            index[a.client] += 1;
        }
    }
    let backend = Embedded {
        policy: config.policy.clone(),
        schedule,
        forced_aborts,
    };
    run_on(workload, config, &backend)
}

/// Runs `workload` under `config`'s seed, terminals and size on `backend` (the embedded
/// store's policy and schedule come from the backend, not from `config`).
pub fn run_on(
    workload: &dyn Workload,
    config: &RunConfig,
    backend: &dyn Backend,
) -> Result<Run, RunError> {
    let procedures = workload.procedures();
    let total_weight = procedures
        .iter()
        .map(|p| p.weight as i32)
        .sum::<i32>()
        .max(1);
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
            last: None,
            store_aborts: 0,
            max_retries: workload.store_abort_retries(),
        })
        .collect();
    let name = format!(
        "{}_{}_{}",
        workload.name(),
        config.size.name(),
        config.java_seed()
    );
    let load = |l: &mut crate::store::Loader<'_>| workload.load(l);
    let execution = backend.execute(Job {
        name,
        load: &load,
        sessions: (0..config.terminals)
            .map(|t| workload.first_session() + t as u64)
            .collect(),
        clients: clients
            .iter_mut()
            .map(|c| c as &mut (dyn Client + Send))
            .collect(),
        scan: config.scan,
    })?;
    let store = execution.final_state;
    let history = execution.history;
    let commit_order = execution.commit_order;
    let attempts = execution.attempts;
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
    let divergences = execution.divergences;
    let mut txn_calls = vec![None; history.txn_count()];
    let mut next_of = vec![0usize; clients.len()];
    for (a, txn) in attempts.iter().zip(&execution.attempt_txns) {
        let c = a.client;
        let Some((call, procedure, step, parameters)) = clients[c].log.get(next_of[c]).cloned()
        else {
            continue;
        };
        next_of[c] += 1;
        if let Some(t) = txn {
            txn_calls[*t as usize] = Some(TxnCall {
                terminal: c,
                call,
                procedure: procedures[procedure].name,
                step,
                parameters,
            });
        }
    }
    Ok(Run {
        store,
        database: execution.database,
        history,
        commit_order,
        invariants,
        divergences,
        calls,
        attempts,
        txn_calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::smallbank::Smallbank;

    #[test]
    fn a_store_abort_is_replayed_and_its_call_retried() {
        let base = run(&Smallbank, &RunConfig::paper(1, Size::Small)).unwrap();
        assert_eq!(base.attempts.len(), 12);
        // As if the store had aborted terminal 1's first transaction.
        let config = RunConfig {
            observed_attempts: Some(vec![Attempt {
                client: 1,
                outcome: None,
                by_store: true,
            }]),
            ..RunConfig::paper(1, Size::Small)
        };
        let r = run(&Smallbank, &config).unwrap();
        let forced: Vec<_> = r.attempts.iter().filter(|a| a.by_store).collect();
        assert_eq!(forced.len(), 1);
        assert_eq!(forced[0].client, 1);
        assert_eq!(forced[0].outcome, None);
        let first_of_1 = r.attempts.iter().find(|a| a.client == 1).unwrap();
        assert!(first_of_1.by_store);
        // The call was retried: 12 calls, 13 transactions.
        assert_eq!(r.attempts.len(), 13);
        let calls: usize = r.calls.iter().map(|c| c.1 + c.2).sum();
        assert_eq!(calls, 12);
    }

    #[test]
    fn sizes_parse_and_name() {
        assert_eq!("100".parse::<Size>(), Ok(Size::Calls(100)));
        assert_eq!("100-calls".parse::<Size>(), Ok(Size::Calls(100)));
        assert_eq!(Size::Calls(7).name().parse::<Size>(), Ok(Size::Calls(7)));
        assert!("0".parse::<Size>().is_err());
        assert_eq!(Size::Calls(5).calls_per_terminal(), 5);
    }
}
