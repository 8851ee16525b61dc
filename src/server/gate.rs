//! The statement gate of the server's upstream mode ([`super::upstream`], `test --reproduce`): a reproduction schedule
//! for a whole application run, as one list of turns, each a statement (or a transaction's
//! end) of one recorded session. A connection's statement runs when it is the head of the
//! list and the turn before it has completed; its completion (PostgreSQL's answer) moves the
//! head on. Waits are bounded: a turn that does not come within the wait is reported (in the
//! application's words) and the gate opens, so the application finishes instead of hanging;
//! a connection that closes with turns left gives them up, also reported. The module docs of
//! `reproduce/app_upstream.rs` say how the list is built.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::replay::ConnectionNames;
use rustc_hash::FxHashMap;

/// What a turn is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnKind {
    /// A data statement as recorded (its text).
    Statement(String),
    /// The end of the session's transaction (COMMIT, END, ROLLBACK, or an autocommit
    /// statement's implicit end).
    End,
}

/// One turn.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The recorded session's name (`application_name` made distinct, or `connection N`).
    pub session: String,
    /// The statement or the end.
    pub kind: TurnKind,
    /// Its transaction's name (`pgbench#2/1`).
    pub txn: String,
}

impl Turn {
    /// The turn in words.
    pub fn words(&self) -> String {
        match &self.kind {
            TurnKind::Statement(sql) => {
                format!("{}'s `{}` ({})", self.session, one_line(sql), self.txn)
            }
            TurnKind::End => format!("{}'s end of {}", self.session, self.txn),
        }
    }
}

fn one_line(sql: &str) -> String {
    let s: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 80 {
        s.chars().take(80).collect::<String>() + "…"
    } else {
        s
    }
}

/// Where a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entered {
    /// In its turn.
    InTurn,
    /// The gate is open (a turn never came, or the application left the schedule): the
    /// statement runs without order.
    Open,
}

#[derive(Debug, Default)]
struct State {
    /// Position in the order of the head.
    head: usize,
    /// Turns done (or given up), by turn index.
    done: Vec<bool>,
    /// Whether the head is running.
    running: bool,
    /// Opened: every statement runs at once.
    open: bool,
    /// Per session: how many of its turns are done.
    cursor: FxHashMap<String, usize>,
    /// Connections seen per `application_name`.
    seen_names: ConnectionNames,
    /// Where the run left the schedule, in words.
    divergences: Vec<String>,
}

/// The gate (module docs).
#[derive(Debug)]
pub struct TurnGate {
    turns: Vec<Turn>,
    /// The turns' indices in the order they run.
    order: Vec<usize>,
    /// Per session: its turns in session order.
    of_session: FxHashMap<String, Vec<usize>>,
    /// The recorded sessions' names.
    recorded: Vec<String>,
    wait: Duration,
    state: Mutex<State>,
    changed: Condvar,
}

impl TurnGate {
    /// A gate running `turns` in `order` (turn indices; each session's turns in their session
    /// order), each wait at most `wait`; `recorded` names the recorded sessions.
    pub fn new(
        turns: Vec<Turn>,
        order: Vec<usize>,
        recorded: Vec<String>,
        wait: Duration,
    ) -> TurnGate {
        let mut of_session: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        for (i, t) in turns.iter().enumerate() {
            of_session.entry(t.session.clone()).or_default().push(i);
        }
        let state = State {
            done: vec![false; turns.len()],
            ..State::default()
        };
        TurnGate {
            turns,
            order,
            of_session,
            recorded,
            wait,
            state: Mutex::new(state),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The turn `i`.
    pub fn turn(&self, i: usize) -> &Turn {
        &self.turns[i]
    }

    /// The recorded session connection `number` (1-based, in connection order) named
    /// `application_name` replays, as `test`'s replay matches them: the k-th connection named
    /// `teller` is `teller#k` (`teller` for the first), an unnamed one `connection N`; `None`
    /// when the recording has no such session.
    pub fn match_session(&self, application_name: Option<&str>, number: u64) -> Option<String> {
        let name = self.lock().seen_names.name(application_name, number);
        self.recorded.contains(&name).then_some(name)
    }

    /// `session`'s next turn (index), if it has one left.
    pub fn next_of(&self, session: &str) -> Option<usize> {
        let st = self.lock();
        let c = st.cursor.get(session).copied().unwrap_or(0);
        self.of_session.get(session)?.get(c).copied()
    }

    fn skip_done(&self, st: &mut State) {
        while st.head < self.order.len() && st.done[self.order[st.head]] {
            st.head += 1;
        }
    }

    /// Waits until turn `i` is the head and the turn before it has completed (at most the
    /// gate's wait without the head moving; then the gate opens, the wait reported).
    pub fn enter(&self, i: usize) -> Entered {
        let mut deadline = Instant::now() + self.wait;
        let mut st = self.lock();
        let mut last_head = st.head;
        loop {
            if st.open {
                return Entered::Open;
            }
            self.skip_done(&mut st);
            if st.head != last_head {
                // The schedule moves on: the wait starts again.
                last_head = st.head;
                deadline = Instant::now() + self.wait;
            }
            if !st.running && self.order.get(st.head) == Some(&i) {
                st.running = true;
                return Entered::InTurn;
            }
            let now = Instant::now();
            if now >= deadline {
                let head = self
                    .order
                    .get(st.head)
                    .map(|&h| self.turns[h].words())
                    .unwrap_or_else(|| "nothing".into());
                let what = if st.running {
                    "still running"
                } else {
                    "not sent"
                };
                st.divergences.push(format!(
                    "{} waited {:.1} s for its turn: the turn before it, {head}, was {what} \
                     (the application did not follow the schedule, or a statement waited for \
                     a lock); the rest ran without order",
                    self.turns[i].words(),
                    self.wait.as_secs_f64()
                ));
                st.open = true;
                self.changed.notify_all();
                return Entered::Open;
            }
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Turn `i` has completed (entered in turn or not).
    pub fn leave(&self, i: usize, entered: Entered) {
        let mut st = self.lock();
        st.done[i] = true;
        *st.cursor.entry(self.turns[i].session.clone()).or_insert(0) += 1;
        if entered == Entered::InTurn {
            st.running = false;
        }
        self.skip_done(&mut st);
        self.changed.notify_all();
    }

    /// The application left the schedule (`why`): reported, and the gate opens.
    pub fn diverge(&self, why: String) {
        let mut st = self.lock();
        st.divergences.push(why);
        st.open = true;
        self.changed.notify_all();
    }

    /// `session`'s connection closed: its turns left are given up (reported).
    pub fn closed(&self, session: &str) {
        let mut st = self.lock();
        let c = st.cursor.get(session).copied().unwrap_or(0);
        let left: Vec<usize> = self
            .of_session
            .get(session)
            .map(|v| v[c.min(v.len())..].to_vec())
            .unwrap_or_default();
        if let Some(&first) = left.first() {
            st.divergences.push(format!(
                "{session} closed its connection before {} ({} turns left)",
                self.turns[first].words(),
                left.len()
            ));
            for i in left {
                st.done[i] = true;
            }
            st.cursor.insert(session.to_string(), usize::MAX / 2);
        }
        self.skip_done(&mut st);
        self.changed.notify_all();
    }

    /// Where the run left the schedule, in words.
    pub fn divergences(&self) -> Vec<String> {
        self.lock().divergences.clone()
    }

    /// Turns never run: (turn index), in order.
    pub fn missed(&self) -> Vec<usize> {
        let st = self.lock();
        self.order
            .iter()
            .copied()
            .filter(|&i| !st.done[i])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(session: &str, kind: TurnKind) -> Turn {
        Turn {
            session: session.into(),
            kind,
            txn: format!("{session}/1"),
        }
    }

    #[test]
    fn turns_run_in_the_order_and_a_missing_turn_opens_the_gate() {
        let turns = vec![
            turn("a", TurnKind::Statement("SELECT 1".into())),
            turn("b", TurnKind::Statement("SELECT 2".into())),
        ];
        let gate = std::sync::Arc::new(TurnGate::new(
            turns,
            vec![1, 0],
            vec!["a".into(), "b".into()],
            Duration::from_millis(200),
        ));
        let g = gate.clone();
        let waiter = std::thread::spawn(move || {
            let e = g.enter(0);
            g.leave(0, e);
            e
        });
        let e = gate.enter(1);
        assert_eq!(e, Entered::InTurn);
        gate.leave(1, e);
        assert_eq!(waiter.join().unwrap(), Entered::InTurn);
        assert!(gate.divergences().is_empty());
        // A turn whose predecessor never comes: the wait is reported, the gate opens.
        let gate = TurnGate::new(
            vec![
                turn("a", TurnKind::Statement("SELECT 1".into())),
                turn("b", TurnKind::End),
            ],
            vec![0, 1],
            vec!["a".into(), "b".into()],
            Duration::from_millis(50),
        );
        assert_eq!(gate.enter(1), Entered::Open);
        let d = gate.divergences();
        assert_eq!(d.len(), 1);
        assert!(
            d[0].contains("a's `SELECT 1`") && d[0].contains("not sent"),
            "{d:?}"
        );
        assert_eq!(gate.missed(), vec![0, 1]);
    }

    #[test]
    fn connections_are_matched_by_name_then_by_order() {
        let gate = TurnGate::new(
            Vec::new(),
            Vec::new(),
            vec!["pgbench".into(), "pgbench#2".into(), "connection 3".into()],
            Duration::from_millis(10),
        );
        assert_eq!(
            gate.match_session(Some("pgbench"), 1).as_deref(),
            Some("pgbench")
        );
        assert_eq!(
            gate.match_session(Some("pgbench"), 2).as_deref(),
            Some("pgbench#2")
        );
        assert_eq!(gate.match_session(Some("pgbench"), 3), None);
        assert_eq!(gate.match_session(None, 3).as_deref(), Some("connection 3"));
    }
}
