//! Running a [`Schedule`] on a database with the workload's own code: one connection per
//! session (the backend's), every statement waiting for its turn at [`Barriers`] (the
//! schedule's global order), the run recorded; then the recorded history compared read by
//! read with the prediction and judged by the one decision core ([`crate::verdict`]).
//!
//! Determinism: each statement starts only after the statement before it in the schedule
//! completed, and a schedule never issues a statement that would wait for a lock, so the
//! database sees the same order every time. A statement that does wait (a lock the schedule
//! did not foresee) fails after the backend's lock timeout, and the run reports it.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use super::schedule::{Schedule, StepKind};
use crate::check::Level;
use crate::history::{History, OpKind, TxnId, INITIAL_TXN};
use crate::store::{Backend, GateStep, StatementGate};
use crate::verdict::{Decider, EvidenceChoice, Input, Limits, Outcome};
use crate::workloads::{run_on, Run, RunConfig, RunError, Workload};

/// How long a statement waits for its turn before the run gives up on the schedule.
pub const TURN_TIMEOUT: Duration = Duration::from_secs(5);

/// A schedule's barriers: the global order of (session, transaction index, step).
#[derive(Debug)]
pub struct Barriers {
    order: Vec<(usize, usize, StepKind)>,
    /// Per (session, transaction index): its planned operations and whether it must roll back.
    planned: FxHashMap<(usize, usize), (u32, bool)>,
    /// Per session: its planned transactions.
    per_session: Vec<usize>,
    /// Per global step: its description (for messages).
    texts: Vec<String>,
    /// Per session: its steps in order, as (transaction index, kind).
    session_steps: Vec<Vec<(usize, StepKind)>>,
    state: Mutex<BarrierState>,
    turn: Condvar,
    /// Whether a stop was requested (Ctrl-C, SIGTERM): a statement waiting for its turn looks
    /// at it every [`super::turns::WAKE_PERIOD`] and stops waiting.
    stop: fn() -> bool,
}

#[derive(Debug, Default)]
struct BarrierState {
    next: usize,
    failure: Option<String>,
    /// Per session waiting for its turn: the statement it waits to run.
    waiting: FxHashMap<usize, (usize, StepKind)>,
    /// Per session: how many of its steps ran in their turn.
    cursor: Vec<usize>,
    /// A session whose code issued another statement than its next one in the schedule:
    /// (session, transaction index).
    diverged: Option<(usize, usize)>,
}

impl Barriers {
    /// The barriers of `schedule` (of history `h`, whose session `s` is client `s`).
    pub fn new(h: &History, schedule: &Schedule) -> Barriers {
        let order = schedule
            .steps
            .iter()
            .map(|s| {
                let t = h.txn(s.txn);
                (t.session as usize, t.index_in_session as usize, s.kind)
            })
            .collect();
        let mut planned = FxHashMap::default();
        let mut per_session = vec![0; h.sessions().len()];
        for t in h.txns().iter().skip(1) {
            planned.insert(
                (t.session as usize, t.index_in_session as usize),
                (t.ops().len() as u32, !t.is_committed()),
            );
            let n = &mut per_session[t.session as usize];
            *n = (*n).max(t.index_in_session as usize + 1);
        }
        let texts = schedule
            .steps
            .iter()
            .map(|&s| schedule.step_text(h, s))
            .collect();
        let mut session_steps: Vec<Vec<(usize, StepKind)>> = vec![Vec::new(); h.sessions().len()];
        for &(s, t, k) in &order as &Vec<(usize, usize, StepKind)> {
            session_steps[s].push((t, k));
        }
        let state = BarrierState {
            cursor: vec![0; h.sessions().len()],
            ..BarrierState::default()
        };
        Barriers {
            order,
            planned,
            per_session,
            texts,
            session_steps,
            state: Mutex::new(state),
            turn: Condvar::new(),
            stop: crate::interrupt::requested,
        }
    }

    /// The session (and its transaction index) whose code issued another statement than
    /// the schedule's next one of that session, if one did.
    pub fn diverged(&self) -> Option<(usize, usize)> {
        self.state.lock().expect("barrier lock").diverged
    }

    /// Why the gated run failed, if it did.
    pub fn failure(&self) -> Option<String> {
        self.state.lock().expect("barrier lock").failure.clone()
    }

    /// Statements run in their turn.
    pub fn completed(&self) -> usize {
        self.state.lock().expect("barrier lock").next
    }

    /// The step kind a statement has in the schedule (`None`: not planned, it runs freely).
    fn planned_kind(&self, session: usize, txn: usize, step: GateStep) -> Option<StepKind> {
        let &(ops, _) = self.planned.get(&(session, txn))?;
        Some(match step {
            GateStep::Op(i) if i < ops => StepKind::Op(i),
            // A statement past the planned operations runs in the turn of the end.
            GateStep::Op(_) | GateStep::End => StepKind::End,
        })
    }
}

impl StatementGate for Barriers {
    fn before(&self, session: usize, txn: usize, step: GateStep) -> bool {
        let Some(kind) = self.planned_kind(session, txn, step) else {
            return true;
        };
        // A transaction the reproduced run aborted stops where that run's did.
        let &(ops, aborted) = &self.planned[&(session, txn)];
        if aborted && matches!(step, GateStep::Op(i) if i >= ops) {
            return false;
        }
        let deadline = Instant::now() + TURN_TIMEOUT;
        let mut state = self.state.lock().expect("barrier lock");
        // Another statement than the session's next one: its code took another path.
        if state.failure.is_none() {
            let next = self.session_steps[session]
                .get(state.cursor[session])
                .copied();
            if next.is_some_and(|n| n != (txn, kind)) {
                let (nt, nk) = next.expect("checked");
                let what = |t: usize, k: StepKind| match k {
                    StepKind::Op(i) => format!("T{}.{} operation {}", session + 1, t + 1, i + 1),
                    StepKind::End => format!("T{}.{} end", session + 1, t + 1),
                };
                state.failure = Some(format!(
                    "session {} came to {} where the schedule has {}: the workload's code took \
                     another path (a read it made saw another write than in the plan)",
                    session + 1,
                    what(txn, kind),
                    what(nt, nk)
                ));
                state.diverged = Some((session, nt.min(txn)));
                self.turn.notify_all();
                return true;
            }
        }
        loop {
            if state.failure.is_some() || state.next >= self.order.len() {
                return true;
            }
            if self.order[state.next] == (session, txn, kind) {
                return true;
            }
            if (self.stop)() {
                state.failure = Some("stopped by a signal (Ctrl-C, SIGTERM)".to_string());
                self.turn.notify_all();
                return true;
            }
            let now = Instant::now();
            state.waiting.insert(session, (txn, kind));
            if now >= deadline {
                let (s, t, k) = self.order[state.next];
                let there = match state.waiting.get(&s) {
                    Some(&(wt, wk)) if (wt, wk) != (t, k) => format!(
                        " (session {} is at T{}.{} {} instead: the workload's code took another path)",
                        s + 1,
                        s + 1,
                        wt + 1,
                        match wk {
                            StepKind::Op(i) => format!("operation {}", i + 1),
                            StepKind::End => "end".to_string(),
                        }
                    ),
                    _ => String::new(),
                };
                state.failure = Some(format!(
                    "step {} ({}) did not come within {} s{there}: a lock wait the schedule did \
                     not foresee, or a statement the workload did not issue",
                    state.next + 1,
                    self.texts[state.next],
                    TURN_TIMEOUT.as_secs()
                ));
                self.turn.notify_all();
                return true;
            }
            state = self
                .turn
                .wait_timeout(state, (deadline - now).min(super::turns::WAKE_PERIOD))
                .expect("barrier lock")
                .0;
        }
    }

    fn after(&self, session: usize, txn: usize, step: GateStep, failed: Option<&str>) {
        let Some(kind) = self.planned_kind(session, txn, step) else {
            return;
        };
        let mut state = self.state.lock().expect("barrier lock");
        let is_turn =
            state.next < self.order.len() && self.order[state.next] == (session, txn, kind);
        if let Some(reason) = failed {
            if state.failure.is_none() {
                let at = if is_turn {
                    format!("step {} ({})", state.next + 1, self.texts[state.next])
                } else {
                    format!("a statement of T{}.{}", session + 1, txn + 1)
                };
                let rolled_back =
                    reason.contains(crate::store::postgres::ROLLED_BACK_AS_REPRODUCED);
                if !rolled_back {
                    state.failure = Some(format!("{at} failed: {reason}"));
                }
            }
        }
        // A statement past the planned operations (in the end's turn) does not advance it.
        if is_turn && !(kind == StepKind::End && step != GateStep::End) {
            state.next += 1;
            state.cursor[session] += 1;
        }
        self.turn.notify_all();
    }

    fn must_roll_back(&self, session: usize, txn: usize) -> bool {
        self.planned.get(&(session, txn)).is_some_and(|p| p.1)
    }

    fn session_done(&self, session: usize, txn: usize) -> bool {
        self.failure().is_some() || txn >= self.per_session.get(session).copied().unwrap_or(0)
    }

    /// The server went away (or the session failed for good): that is the run's failure,
    /// whatever a statement it broke said first, and no turn is waited for any more.
    fn session_stopped(&self, _session: usize, why: &str) {
        let mut state = self.state.lock().expect("barrier lock");
        if !state
            .failure
            .as_deref()
            .is_some_and(|f| f.starts_with(crate::store::postgres::SERVER_WENT_AWAY))
        {
            state.failure = Some(why.to_string());
        }
        self.turn.notify_all();
    }
}

/// One predicted read and what the database gave it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReadOutcome {
    /// The reading transaction (`T1.2`).
    pub txn: String,
    /// The key, in the application's terms when known.
    pub key: String,
    /// The writer the prediction says.
    pub predicted: String,
    /// The writer the database gave (`None`: the read did not run).
    pub got: Option<String>,
}

impl ReadOutcome {
    /// Whether the database gave the predicted writer.
    pub fn matches(&self) -> bool {
        self.got.as_deref() == Some(self.predicted.as_str())
    }
}

/// What running a schedule gave.
#[derive(Debug)]
pub struct Execution {
    /// The recorded run (its history with the store's key names).
    pub run: Run,
    /// Every read of a committed predicted transaction that another transaction wrote.
    pub reads: Vec<ReadOutcome>,
    /// Why the gated run stopped early, if it did (a serialization failure, a lock wait…).
    pub failure: Option<String>,
    /// Statements run in their turn, of the schedule's.
    pub completed: usize,
    /// The decision core's verdict on the recorded history at serializability, and the
    /// anomaly it names when violated.
    pub serializable: Outcome,
    /// The anomaly's name (decision core), when unserializable.
    pub anomaly: Option<String>,
    /// The verdict at the level the database promises.
    pub promise: Outcome,
    /// The session (and transaction index) whose code took another path, if one did.
    pub diverged: Option<(usize, usize)>,
}

impl Execution {
    /// Reproduced: every predicted read got its writer, the run did not fail, and the
    /// recorded history is unserializable.
    pub fn reproduced(&self) -> bool {
        self.failure.is_none()
            && self.reads.iter().all(ReadOutcome::matches)
            && self.serializable == Outcome::Violated
    }
}

/// Runs `schedule` (of the predicted history `predicted`) with `workload`'s code under
/// `config` on `backend` gated by the schedule's barriers; `names` renames the keys of
/// messages (the predicted history's key → a name; identity when `None`). `promised` is the
/// level the database's isolation promises.
pub fn execute(
    workload: &dyn Workload,
    config: &RunConfig,
    backend: &dyn Backend,
    predicted: &History,
    schedule: &Schedule,
    promised: Level,
    timeout: Option<Duration>,
) -> Result<Execution, ExecuteError> {
    let barriers = Arc::new(Barriers::new(predicted, schedule));
    let gated = backend
        .gated(barriers.clone())
        .ok_or_else(|| ExecuteError::NotGateable(backend.describe()))?;
    let run = run_on(workload, config, gated.as_ref())?;
    let database = run.database.as_ref();
    let failure = barriers
        .failure()
        .or_else(|| database.and_then(|d| d.failure.clone()))
        .map(|f| match database.and_then(|d| d.schema_left.as_ref()) {
            // The schema the server kept, named whichever failure is said.
            Some(left) if !f.contains(left.as_str()) => format!("{f}; {left}"),
            _ => f,
        });
    let reads = compare_reads(predicted, &run.history, None);
    let limits = Limits {
        timeout,
        ..Limits::default()
    };
    let (serializable, anomaly, promise) = match Input::of(&run.history) {
        Ok(input) => match Decider::new(&input, EvidenceChoice::Auto, &limits) {
            Ok(mut d) => {
                let ser = d.decide(Level::Serializable).ok();
                let promise = d
                    .decide(promised)
                    .map(|v| v.verdict)
                    .unwrap_or(Outcome::Unknown);
                (
                    ser.as_ref().map_or(Outcome::Unknown, |v| v.verdict),
                    ser.and_then(|v| v.anomaly),
                    promise,
                )
            }
            Err(_) => (Outcome::Unknown, None, Outcome::Unknown),
        },
        Err(_) => (Outcome::Unknown, None, Outcome::Unknown),
    };
    Ok(Execution {
        run,
        reads,
        failure,
        completed: barriers.completed(),
        serializable,
        anomaly,
        promise,
        diverged: barriers.diverged(),
    })
}

/// Each read of a committed predicted transaction from another transaction (or the initial
/// state), and the writer the recorded transaction at the same place (session, index, op)
/// got. Transactions are compared by their labels (`T<session>.<index>`), which name the
/// same place in both histories.
pub fn compare_reads(
    predicted: &History,
    recorded: &History,
    only: Option<&rustc_hash::FxHashSet<crate::history::OpId>>,
) -> Vec<ReadOutcome> {
    let mut by_place: FxHashMap<(u32, u32), TxnId> = FxHashMap::default();
    for (id, t) in recorded.txns().iter().enumerate().skip(1) {
        by_place.insert((t.session, t.index_in_session), id as TxnId);
    }
    let mut out = Vec::new();
    for t in predicted.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let tx = predicted.txn(t);
        let rec = by_place.get(&(tx.session, tx.index_in_session)).copied();
        // The recorded reads by key, in order: a read is matched with the recorded read of
        // its key at the same occurrence (a scan may list rows in another order).
        let mut recorded_reads: FxHashMap<&str, Vec<String>> = FxHashMap::default();
        if let Some(r) = rec {
            for ro in recorded.txn(r).ops() {
                let op = recorded.op(ro);
                if op.kind == OpKind::Read {
                    recorded_reads
                        .entry(recorded.key_name(op.key))
                        .or_default()
                        .push(
                            recorded
                                .writer_txn(ro)
                                .map(|w| recorded.txn_label(w))
                                .unwrap_or_else(|| "an unknown writer".to_string()),
                        );
                }
            }
        }
        let mut occurrence: FxHashMap<&str, usize> = FxHashMap::default();
        for o in tx.ops() {
            let op = predicted.op(o);
            let name = predicted.key_name(op.key);
            if op.kind == OpKind::Read {
                *occurrence.entry(name).or_insert(0) += 1;
            }
            if op.kind != OpKind::Read
                || predicted.is_internal_read(o)
                || only.is_some_and(|n| !n.contains(&o))
            {
                continue;
            }
            let nth = occurrence[name] - 1;
            let got = recorded_reads.get(name).and_then(|w| w.get(nth)).cloned();
            out.push(ReadOutcome {
                txn: predicted.txn_label(t),
                key: predicted.key_name(op.key).to_string(),
                predicted: predicted.txn_label(predicted.writer_txn(o).unwrap_or(INITIAL_TXN)),
                got,
            });
        }
    }
    out
}

/// Why a schedule could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    /// The backend cannot make statements wait for their turn.
    #[error("{0} cannot run a schedule (its statements cannot wait for their turn)")]
    NotGateable(String),
    /// Running the workload failed.
    #[error(transparent)]
    Run(#[from] RunError),
}
