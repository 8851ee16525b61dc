//! A database run recorded in turns: whole transactions one at a time, in the order the
//! embedded store runs the same workload, seed and size (its seeded session scheduler,
//! [`crate::store::Schedule::Seeded`]) — IsoPredict's observed executions are serial runs
//! (PLDI'24 §6), and a reproduction needs an observation that is the same every time.
//!
//! Why: sessions running freely on a database race. At REPEATABLE READ overlapping calls
//! abort each other (first updater wins), the workload retries them with new parameters,
//! and which earlier reads pin the order of the later ones depends on thread timing; the
//! calls a prediction can rearrange, and so whether there is one, change from run to run
//! (smallbank-full, seed 1, 3 × 4 calls at REPEATABLE READ: a prediction in 2 of 5 free
//! runs). In turns the database run is the embedded store's run — the same calls, every
//! read seeing the latest committed write — and the same every time.
//!
//! The order comes from running the workload on the embedded store first (milliseconds):
//! its attempts, in order, are the turns. Each statement of a transaction waits until it is
//! that transaction's turn; the turn passes on when the transaction ends. No statement
//! waits for a lock (one transaction runs at a time), so the database aborts nothing. If
//! the database run leaves the order (a transaction the embedded run did not have), the
//! turns give up after [`TURN_TIMEOUT`], say so ([`TransactionTurns::left_order`]), and the
//! rest runs freely.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::store::{Backend, GateStep, StatementGate};
use crate::workloads::{Run, RunConfig, RunError, Workload};

/// How long a statement waits for its transaction's turn before the turns give up.
pub const TURN_TIMEOUT: Duration = Duration::from_secs(5);

/// The turns of a run: per turn, (session, transaction index in the session, every attempt
/// counted).
#[derive(Debug)]
pub struct TransactionTurns {
    order: Vec<(usize, usize)>,
    state: Mutex<TurnState>,
    turn: Condvar,
    /// Whether a stop was requested (Ctrl-C, SIGTERM): a statement waiting for its turn looks
    /// at it every [`WAKE_PERIOD`] and stops waiting ([`crate::interrupt::requested`]).
    stop: fn() -> bool,
}

/// How often a statement waiting for its turn looks at the stop request.
pub const WAKE_PERIOD: Duration = Duration::from_millis(50);

#[derive(Debug, Default)]
struct TurnState {
    next: usize,
    left: Option<String>,
    /// A session stopped for good (the server went away): no turn is waited for any more.
    stopped: Option<String>,
}

impl TransactionTurns {
    /// The turns of `run`'s attempts, in the order they ran.
    pub fn of_run(run: &Run) -> TransactionTurns {
        let mut count: Vec<usize> = Vec::new();
        let order = run
            .attempts
            .iter()
            .map(|a| {
                if count.len() <= a.client {
                    count.resize(a.client + 1, 0);
                }
                let i = count[a.client];
                count[a.client] += 1;
                (a.client, i)
            })
            .collect();
        TransactionTurns {
            order,
            state: Mutex::new(TurnState::default()),
            turn: Condvar::new(),
            stop: crate::interrupt::requested,
        }
    }

    /// The turns of `workload` under `config` (seed, size, sessions): its run on the embedded
    /// store's seeded scheduler.
    pub fn of_workload(
        workload: &dyn Workload,
        config: &RunConfig,
    ) -> Result<TransactionTurns, RunError> {
        let run = crate::workloads::run(workload, config)?;
        Ok(TransactionTurns::of_run(&run))
    }

    /// How many turns there are.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Why the database run left the order, if it did (from then on it ran freely).
    pub fn left_order(&self) -> Option<String> {
        self.state.lock().expect("turns lock").left.clone()
    }

    /// Why a session stopped for good (the server went away), if one did: the turns stopped
    /// waiting then.
    pub fn stopped(&self) -> Option<String> {
        self.state.lock().expect("turns lock").stopped.clone()
    }

    /// Turns taken.
    pub fn taken(&self) -> usize {
        self.state.lock().expect("turns lock").next
    }
}

impl StatementGate for TransactionTurns {
    fn before(&self, session: usize, txn: usize, _step: GateStep) -> bool {
        let deadline = Instant::now() + TURN_TIMEOUT;
        let mut state = self.state.lock().expect("turns lock");
        loop {
            if state.left.is_some() || state.stopped.is_some() || state.next >= self.order.len() {
                return true;
            }
            if self.order[state.next] == (session, txn) || (self.stop)() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                let (s, t) = self.order[state.next];
                state.left = Some(format!(
                    "turn {} of {} (T{}.{}, counting every attempt) did not come within {} s: \
                     the database run did not run the transactions the embedded run did; \
                     the rest ran freely",
                    state.next + 1,
                    self.order.len(),
                    s + 1,
                    t + 1,
                    TURN_TIMEOUT.as_secs()
                ));
                self.turn.notify_all();
                return true;
            }
            state = self
                .turn
                .wait_timeout(state, (deadline - now).min(WAKE_PERIOD))
                .expect("turns lock")
                .0;
        }
    }

    fn after(&self, session: usize, txn: usize, step: GateStep, _failed: Option<&str>) {
        if step != GateStep::End {
            return;
        }
        let mut state = self.state.lock().expect("turns lock");
        if state.next < self.order.len() && self.order[state.next] == (session, txn) {
            state.next += 1;
        }
        self.turn.notify_all();
    }

    fn must_roll_back(&self, _session: usize, _txn: usize) -> bool {
        false
    }

    fn session_done(&self, _session: usize, _txn: usize) -> bool {
        false
    }

    fn session_stopped(&self, _session: usize, why: &str) {
        let mut state = self.state.lock().expect("turns lock");
        state.stopped.get_or_insert_with(|| why.to_string());
        self.turn.notify_all();
    }
}

/// A backend recording in turns, and its turns (to ask whether the run kept them).
pub type InTurns = (Box<dyn Backend>, std::sync::Arc<TransactionTurns>);

/// `backend` recording in the turns of `workload` under `config` (see the module
/// documentation); `None` when the backend cannot make statements wait (the embedded store,
/// which runs in these turns already).
pub fn in_turns(
    workload: &dyn Workload,
    config: &RunConfig,
    backend: &dyn Backend,
) -> Result<Option<InTurns>, RunError> {
    let turns = std::sync::Arc::new(TransactionTurns::of_workload(workload, config)?);
    Ok(backend.gated(turns.clone()).map(|gated| (gated, turns)))
}

/// `workload` under `config` recorded on `backend` in turns, its keys named as the
/// application names them; an error says why not (the backend cannot gate statements, the
/// run left its turns or failed).
pub fn record_in_turns(
    workload: &dyn Workload,
    config: &RunConfig,
    backend: &dyn Backend,
) -> Result<crate::history::History, String> {
    let (gated, turns) = in_turns(workload, config, backend)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "{} cannot run transactions in turns (its statements cannot wait)",
                backend.describe()
            )
        })?;
    let run =
        crate::workloads::run_on(workload, config, gated.as_ref()).map_err(|e| e.to_string())?;
    // The server going away is said first: the turns it broke are its doing, not the run's.
    if let Some(failure) = run.database.as_ref().and_then(|d| d.failure.clone()) {
        return Err(failure);
    }
    if let Some(why) = turns.stopped().or_else(|| turns.left_order()) {
        return Err(why);
    }
    let keys = crate::store::KeyDirectory::new(
        &workload.tables(),
        &run.history,
        &mut run.store.snapshot(),
    );
    Ok(keys.rename(&run.history))
}

/// `workload` under `config` recorded again on the embedded store (reads seeing the latest
/// write, the seeded scheduler: how `run` records on it) and compared with `observed` (keys
/// in the application's terms); an error says where they differ — a run folder whose
/// configuration (seed, size, sessions, scan mode) is not the one its run was recorded with.
pub fn same_on_embedded(
    workload: &dyn Workload,
    config: &RunConfig,
    observed: &crate::history::History,
) -> Result<(), String> {
    let run = crate::workloads::run(workload, config).map_err(|e| e.to_string())?;
    let keys = crate::store::KeyDirectory::new(
        &workload.tables(),
        &run.history,
        &mut run.store.snapshot(),
    );
    match committed_difference(observed, &keys.rename(&run.history)) {
        None => Ok(()),
        Some(d) => Err(d),
    }
}

/// Where the committed transactions of `a` and `b` (both with the application's key names)
/// first differ — per session, the `k`-th committed transaction's operations (kind and key)
/// — in words; `None` when they are the same.
pub fn committed_difference(
    a: &crate::history::History,
    b: &crate::history::History,
) -> Option<String> {
    use crate::history::OpKind;
    if a.sessions().len() != b.sessions().len() {
        return Some(format!(
            "{} sessions against {}",
            a.sessions().len(),
            b.sessions().len()
        ));
    }
    for (s, (sa, sb)) in a.sessions().iter().zip(b.sessions()).enumerate() {
        let ca: Vec<_> = sa.txns().filter(|&t| a.txn(t).is_committed()).collect();
        let cb: Vec<_> = sb.txns().filter(|&t| b.txn(t).is_committed()).collect();
        for (k, (&ta, &tb)) in ca.iter().zip(&cb).enumerate() {
            let ops = |h: &crate::history::History, t| -> Vec<(bool, String)> {
                h.txn(t)
                    .ops()
                    .map(|o| {
                        let op = h.op(o);
                        (op.kind == OpKind::Write, h.key_name(op.key).to_string())
                    })
                    .collect()
            };
            if ops(a, ta) != ops(b, tb) {
                return Some(format!(
                    "session {}'s committed transaction {} ({} and {}) ran other statements",
                    s + 1,
                    k + 1,
                    a.txn_label(ta),
                    b.txn_label(tb)
                ));
            }
        }
        if ca.len() != cb.len() {
            return Some(format!(
                "session {} committed {} transactions against {}",
                s + 1,
                ca.len(),
                cb.len()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(stop: fn() -> bool) -> TransactionTurns {
        TransactionTurns {
            order: vec![(0, 0), (1, 0)],
            state: Mutex::new(TurnState::default()),
            turn: Condvar::new(),
            stop,
        }
    }

    /// Issue 35 item 26: a statement waiting for its turn stops waiting on a stop request
    /// (Ctrl-C, SIGTERM) instead of waiting out [`TURN_TIMEOUT`] and blaming the run.
    #[test]
    fn a_waiting_statement_stops_on_a_stop_request() {
        let t = turns(|| true);
        assert!(t.before(1, 0, GateStep::Op(0)));
        assert_eq!(t.left_order(), None, "not blamed on the run");
    }

    /// A session that stopped for good (the server went away) ends every wait at once, and
    /// the turns say why.
    #[test]
    fn a_stopped_session_ends_the_waits() {
        let t = turns(|| false);
        t.session_stopped(0, "the PostgreSQL server went away: …");
        assert!(t.before(1, 0, GateStep::Op(0)));
        assert_eq!(t.left_order(), None);
        assert!(t
            .stopped()
            .unwrap()
            .starts_with("the PostgreSQL server went away"));
    }
}
