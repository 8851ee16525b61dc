//! The server's replay mode: an application re-run along a predicted history, IsoPredict's
//! validation (PLDI'24 §5, which re-ran the unmodified program on MonkeyDB with each read
//! steered to its predicted writer) for any PostgreSQL client.
//!
//! Reads are steered by the store's [`ReadPolicy::Replay`] (the predicted writer where it
//! exists, wrote the key and keeps the level valid; else a divergence and the latest valid
//! writer), as `isopredict run` replays the built-in workloads. What this file adds is the
//! part a workload driver does by calling its terminals in turn, and that a real application,
//! whose connections run on their own, needs from the server:
//!
//! - **Matching connections to the recorded ones** ([`ReplayGate::external_id`]): by
//!   `application_name` (the k-th connection named `teller` is the recorded `teller`,
//!   `teller#2`, …, as the recording made names distinct), else by connection order (the
//!   n-th unnamed connection is the recorded `connection n`). A matched connection records
//!   under the recorded session's id, which is how the replay plan names its sessions.
//! - **The turn gate** ([`ReplayGate::enter`], [`ReplayGate::leave`]): the plan's turns list the
//!   predicted transactions in one execution order its reads allow (the observed commit
//!   order wherever the prediction keeps it). A session's i-th committed transaction is turn
//!   t; it may begin once every earlier turn has committed and no other transaction is in
//!   flight, so each read's predicted writer has committed before the read and writers that
//!   must come later are held back. Transactions the plan does not hold (past a session's
//!   prediction boundary, or of sessions it does not know) run whenever no transaction is in
//!   flight. A wait is bounded: when it runs out, the turns still missing are given up (the
//!   application did not run them in time) or the transaction runs beside the one in
//!   flight, and either is recorded as a divergence in the application's words — never a
//!   hang, never a silent success.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustc_hash::FxHashMap;
use tokio::sync::Notify;

use crate::history::Level;
use crate::store::ReplayPlan;

/// Ids given to connections that match no recorded session start here (recorded sessions are
/// numbered from 1 by connection order, far below).
const UNMATCHED_ID_BASE: u64 = 1 << 40;

/// What the server replays.
#[derive(Debug, Clone)]
pub struct ReplaySetup {
    /// The prediction's reads and turns.
    pub plan: Arc<ReplayPlan>,
    /// The level the replay keeps (the prediction's).
    pub level: Level,
    /// The recorded sessions: name (`application_name` made distinct, or `connection N`) and
    /// external id.
    pub recorded: Vec<(String, u64)>,
    /// How long a transaction waits for its turn before the wait becomes a divergence.
    pub wait: Duration,
}

/// Where a gated wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// In its turn, alone.
    InTurn,
    /// After the wait ran out, beside a transaction still in flight.
    Late,
}

#[derive(Debug, Default)]
struct GateState {
    /// Per store session: its planned session (index in the plan), its committed non-empty
    /// transactions so far, and its name.
    planned: Vec<Option<usize>>,
    commits: Vec<u32>,
    names: Vec<String>,
    /// Per plan turn: committed (or given up).
    finished: Vec<bool>,
    /// The first unfinished turn.
    next: usize,
    /// Store sessions with a transaction in flight.
    in_flight: Vec<u32>,
    /// Connections seen per `application_name`.
    seen_names: ConnectionNames,
    /// Divergences found by the gate, in words.
    divergences: Vec<String>,
}

/// The recorded session a connection replays, by name: the k-th connection named `teller` is
/// `teller#k` (`teller` for the first), an unnamed one `connection N` (its number in connection
/// order) — the names the recording gave them. One rule for the replay's gate and for the
/// upstream gate of `test --reproduce`.
#[derive(Debug, Default)]
pub(crate) struct ConnectionNames {
    /// Connections seen per `application_name`.
    seen: FxHashMap<String, u32>,
}

impl ConnectionNames {
    /// The name of connection `number` (1-based), named `application_name` by its client.
    pub(crate) fn name(&mut self, application_name: Option<&str>, number: u64) -> String {
        match application_name {
            Some(n) if !n.is_empty() => {
                let k = self.seen.entry(n.to_string()).or_insert(0);
                *k += 1;
                if *k == 1 {
                    n.to_string()
                } else {
                    format!("{n}#{k}")
                }
            }
            _ => format!("connection {number}"),
        }
    }
}

/// The turn gate and the connection matching (see the module documentation).
#[derive(Debug)]
pub struct ReplayGate {
    setup: ReplaySetup,
    /// Per planned session: the turn of each of its transactions.
    turns_of: Vec<Vec<usize>>,
    state: Mutex<GateState>,
    notify: Notify,
}

impl ReplayGate {
    /// The gate of `setup`.
    pub fn new(setup: ReplaySetup) -> ReplayGate {
        let mut turns_of = vec![Vec::new(); setup.plan.sessions.len()];
        for (t, id) in setup.plan.turns.iter().enumerate() {
            if let Some(s) = setup
                .plan
                .sessions
                .iter()
                .position(|s| s.external_id == *id)
            {
                turns_of[s].push(t);
            }
        }
        let state = GateState {
            finished: vec![false; setup.plan.turns.len()],
            ..GateState::default()
        };
        ReplayGate {
            setup,
            turns_of,
            state: Mutex::new(state),
            notify: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The recorded session id connection `number` (named `application_name`) replays, or a
    /// fresh id when it matches none.
    pub fn external_id(&self, application_name: Option<&str>, number: u64) -> u64 {
        let name = self.lock().seen_names.name(application_name, number);
        self.setup
            .recorded
            .iter()
            .find(|(recorded, _)| *recorded == name)
            .map_or(UNMATCHED_ID_BASE + number, |(_, id)| *id)
    }

    /// Registers store session `session` (opened in order) as replaying session `external`.
    pub fn opened(&self, session: u32, external: u64, name: &str) {
        let planned = self
            .setup
            .plan
            .sessions
            .iter()
            .position(|s| s.external_id == external);
        let mut st = self.lock();
        let s = session as usize;
        if st.planned.len() <= s {
            st.planned.resize(s + 1, None);
            st.commits.resize(s + 1, 0);
            st.names.resize(s + 1, String::new());
        }
        st.planned[s] = planned;
        st.names[s] = name.to_string();
    }

    /// The turn of `session`'s next transaction, if the plan holds it.
    fn turn_of(&self, st: &GateState, session: u32) -> Option<usize> {
        let planned = (*st.planned.get(session as usize)?)?;
        let pos = st.commits[session as usize] as usize;
        self.turns_of[planned].get(pos).copied()
    }

    /// Whether `session` may begin now.
    fn may_enter(&self, st: &GateState, session: u32) -> bool {
        if !st.in_flight.is_empty() {
            return false;
        }
        match self.turn_of(st, session) {
            Some(t) => st.finished[t] || st.next >= t,
            None => true,
        }
    }

    /// Waits until `session` may begin its transaction (see the module documentation), at
    /// most the setup's wait; then records the transaction in flight.
    pub async fn enter(&self, session: u32) -> Entry {
        let deadline = tokio::time::Instant::now() + self.setup.wait;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut st = self.lock();
                if self.may_enter(&st, session) {
                    st.in_flight.push(session);
                    return Entry::InTurn;
                }
                if tokio::time::Instant::now() >= deadline {
                    return self.give_up_waiting(&mut st, session);
                }
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    /// The wait of `session` ran out: the turns before its own are given up (each recorded
    /// as a divergence); if a transaction is still in flight, it runs beside it (recorded
    /// too).
    fn give_up_waiting(&self, st: &mut GateState, session: u32) -> Entry {
        let name = st.names[session as usize].clone();
        let secs = self.setup.wait.as_secs_f64();
        if let Some(t) = self.turn_of(st, session) {
            for missing in st.next..t {
                if st.finished[missing] {
                    continue;
                }
                st.finished[missing] = true;
                let who = self.turn_name(missing);
                st.divergences.push(format!(
                    "the application did not run {who} within {secs} s of {name} waiting for \
                     it: the replay went on without it"
                ));
            }
            advance(st);
        }
        let entry = if st.in_flight.is_empty() {
            Entry::InTurn
        } else {
            let others: Vec<&str> = st
                .in_flight
                .iter()
                .map(|&s| st.names[s as usize].as_str())
                .collect();
            st.divergences.push(format!(
                "{name} waited {secs} s for the transaction of {} to end (the application \
                 held it open while waiting for another connection?) and ran beside it",
                others.join(", ")
            ));
            Entry::Late
        };
        st.in_flight.push(session);
        entry
    }

    /// `session %k's transaction #i` of plan turn `t`, in words.
    fn turn_name(&self, t: usize) -> String {
        let id = self.setup.plan.turns[t];
        let name = self
            .setup
            .recorded
            .iter()
            .find(|(_, e)| *e == id)
            .map_or_else(|| format!("session {id}"), |(n, _)| n.clone());
        let planned = self
            .setup
            .plan
            .sessions
            .iter()
            .position(|s| s.external_id == id);
        let pos = planned.and_then(|p| self.turns_of[p].iter().position(|&u| u == t));
        match pos {
            Some(i) => format!("{name}'s committed transaction #{}", i + 1),
            None => format!("a transaction of {name}"),
        }
    }

    /// `session`'s transaction ended: committed with events (`committed`), or not (rolled
    /// back, empty, or aborted).
    pub fn leave(&self, session: u32, committed: bool) {
        let mut st = self.lock();
        let Some(i) = st.in_flight.iter().position(|&s| s == session) else {
            return;
        };
        st.in_flight.swap_remove(i);
        if committed {
            if let Some(t) = self.turn_of(&st, session) {
                st.finished[t] = true;
                advance(&mut st);
            }
            st.commits[session as usize] += 1;
        }
        drop(st);
        self.notify.notify_waiters();
    }

    /// The divergences the gate found, in words.
    pub fn divergences(&self) -> Vec<String> {
        self.lock().divergences.clone()
    }
}

/// Moves the first unfinished turn past the finished ones.
fn advance(st: &mut GateState) {
    while st.next < st.finished.len() && st.finished[st.next] {
        st.next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{PlannedSession, PlannedTxn};

    fn gate(turns: Vec<u64>, wait_ms: u64) -> ReplayGate {
        let sessions = [1u64, 2]
            .iter()
            .map(|&id| PlannedSession {
                external_id: id,
                txns: vec![PlannedTxn::default(); turns.iter().filter(|&&t| t == id).count()],
            })
            .collect();
        ReplayGate::new(ReplaySetup {
            plan: Arc::new(ReplayPlan { sessions, turns }),
            level: Level::Causal,
            recorded: vec![("a".into(), 1), ("b".into(), 2)],
            wait: Duration::from_millis(wait_ms),
        })
    }

    #[test]
    fn connections_match_by_name_then_by_order() {
        let g = gate(vec![1, 2], 10);
        assert_eq!(g.external_id(Some("b"), 1), 2);
        assert_eq!(g.external_id(Some("a"), 2), 1);
        // A second `a` is the recorded `a#2`, which does not exist: a fresh id.
        assert_eq!(g.external_id(Some("a"), 3), UNMATCHED_ID_BASE + 3);
        assert_eq!(g.external_id(None, 4), UNMATCHED_ID_BASE + 4);
    }

    #[tokio::test]
    async fn a_later_turn_waits_for_the_earlier_one_to_commit() {
        let g = Arc::new(gate(vec![2, 1], 60_000));
        g.opened(0, 1, "a");
        g.opened(1, 2, "b");
        let early = {
            let g = g.clone();
            tokio::spawn(async move { g.enter(0).await })
        };
        // Session a's turn is second: it is still waiting when b enters (b's turn is first).
        assert_eq!(g.enter(1).await, Entry::InTurn);
        assert!(!early.is_finished());
        g.leave(1, true);
        assert_eq!(early.await.unwrap(), Entry::InTurn);
        g.leave(0, true);
        assert!(g.divergences().is_empty());
    }

    #[tokio::test]
    async fn a_missing_turn_becomes_a_divergence_not_a_hang() {
        let g = gate(vec![2, 1], 20);
        g.opened(0, 1, "a");
        g.opened(1, 2, "b");
        // b never comes: a's wait runs out, b's turn is given up and a runs.
        assert_eq!(g.enter(0).await, Entry::InTurn);
        let d = g.divergences();
        assert_eq!(d.len(), 1);
        assert!(
            d[0].contains("did not run b's committed transaction #1"),
            "{d:?}"
        );
    }
}
