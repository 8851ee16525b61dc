//! Running several sessions' clients against the store, one whole transaction at a time.
//!
//! MonkeyDB (OOPSLA'21) holds a global lock from a transaction's first statement to its
//! commit or rollback, so an execution is a serial interleaving of whole transactions in an
//! order set by thread timing. Here a [`Schedule`] sets it: a seeded uniform choice among the
//! sessions that still have work (so a seed determines the run), or a fixed list of turns (a
//! replay of a predicted history; PLDI'24 §5).

use super::engine::{Committed, SessionId, Store};
use super::prng::SplitMix64;
use super::Tx;

/// How a client's transaction ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Commit it.
    Commit,
    /// Roll it back (a user abort).
    Rollback,
}

/// The application code of one session: it runs one transaction at a time when asked.
pub trait Client {
    /// Whether the session has no more transactions to run.
    fn is_done(&self) -> bool;
    /// Runs the session's next transaction on `tx` and says how it ends.
    fn run(&mut self, tx: &mut Tx<'_>) -> Outcome;
    /// The store aborted the transaction the last [`Client::run`] ran, whatever it said (a
    /// serialization failure, a deadlock, a lost connection; on the embedded store, a replay
    /// of such an abort). The client decides whether its next transaction retries it. By
    /// default nothing happens.
    fn aborted_by_store(&mut self) {}
}

/// Which session runs next.
#[derive(Debug, Clone)]
pub enum Schedule {
    /// Uniformly among the sessions with work left, with a generator seeded by this value.
    Seeded(u64),
    /// Exactly these turns, by index into the clients: on its turn a client runs transactions
    /// until one commits with events (rolled-back and empty ones do not use the turn up) or it
    /// is done. The run stops after the last turn.
    Turns(Vec<usize>),
    /// Exactly these steps, by index into the clients: each runs one transaction of the client
    /// (none if it is done). The run stops after the last step.
    Steps(Vec<usize>),
}

/// One transaction a client ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    /// Index of the client.
    pub client: usize,
    /// What the commit did, or `None` if it rolled back.
    pub outcome: Option<Committed>,
    /// Whether the store aborted it (see [`Client::aborted_by_store`]) rather than the client.
    pub by_store: bool,
}

/// Runs `clients[i]` on `sessions[i]` until the schedule ends; returns every transaction
/// that ran, in order.
pub fn run_clients(
    store: &mut Store,
    sessions: &[SessionId],
    clients: &mut [&mut dyn Client],
    schedule: &Schedule,
) -> Vec<Attempt> {
    run_clients_forcing(store, sessions, clients, schedule, &[])
}

/// [`run_clients`], except that the transactions in `forced` — (client, index among the
/// client's transactions, 0-based) — are rolled back whatever the client says and reported to
/// it with [`Client::aborted_by_store`]: the replay of a run on a store that aborted them.
pub fn run_clients_forcing(
    store: &mut Store,
    sessions: &[SessionId],
    clients: &mut [&mut dyn Client],
    schedule: &Schedule,
    forced: &[(usize, usize)],
) -> Vec<Attempt> {
    assert_eq!(sessions.len(), clients.len(), "one session per client");
    let mut ran = Vec::new();
    let mut started = vec![0usize; clients.len()];
    let mut run_one = |store: &mut Store, session: SessionId, client: &mut dyn Client, i: usize| {
        let force = forced.contains(&(i, started[i]));
        started[i] += 1;
        if force {
            let mut tx = store.begin(session);
            client.run(&mut tx);
            tx.rollback();
            client.aborted_by_store();
            return Attempt {
                client: i,
                outcome: None,
                by_store: true,
            };
        }
        Attempt {
            client: i,
            outcome: run_one(store, session, client),
            by_store: false,
        }
    };
    match schedule {
        Schedule::Seeded(seed) => {
            let mut rng = SplitMix64::new(*seed);
            let mut live: Vec<usize> = Vec::with_capacity(clients.len());
            // A stop request ends the run between calls ([`crate::interrupt`]).
            while !crate::interrupt::requested() {
                live.clear();
                live.extend((0..clients.len()).filter(|&i| !clients[i].is_done()));
                if live.is_empty() {
                    break;
                }
                let i = live[rng.below(live.len())];
                ran.push(run_one(store, sessions[i], &mut *clients[i], i));
            }
        }
        Schedule::Turns(turns) => {
            for &i in turns {
                while !clients[i].is_done() && !crate::interrupt::requested() {
                    let attempt = run_one(store, sessions[i], &mut *clients[i], i);
                    ran.push(attempt);
                    if let Some(Committed::At(_)) = attempt.outcome {
                        break;
                    }
                }
            }
        }
        Schedule::Steps(steps) => {
            for &i in steps {
                if !clients[i].is_done() && !crate::interrupt::requested() {
                    ran.push(run_one(store, sessions[i], &mut *clients[i], i));
                }
            }
        }
    }
    ran
}

/// A non-empty commit, as (client, index among the client's non-empty commits); `None`
/// stands for the start of the run.
type Anchor = Option<(usize, usize)>;

/// The steps that replay `turns` (the clients of the committed, non-empty transactions in a
/// new order) while putting every other transaction of `observed` (rolled back or empty)
/// where it ran in `observed`: right after the non-empty commit it followed there, or, if that
/// commit comes later in the new order, just before its client's next non-empty commit.
/// Transactions after a client's last turn are left out.
pub fn interleave_attempts(turns: &[usize], observed: &[Attempt], clients: usize) -> Vec<usize> {
    // Per client and commit index j: how many non-committing attempts ran just before its
    // j-th commit. Per preceding commit (client, j) (None: before any commit): the
    // non-committing attempts that followed it, in observed order, as (client, block, index).
    let mut block_len: Vec<Vec<usize>> = vec![vec![0]; clients];
    let mut followers: rustc_hash::FxHashMap<Anchor, Vec<(usize, usize, usize)>> =
        rustc_hash::FxHashMap::default();
    let mut commits_of = vec![0usize; clients];
    let mut last_commit: Anchor = None;
    for a in observed.iter().filter(|a| a.client < clients) {
        let c = a.client;
        if matches!(a.outcome, Some(Committed::At(_))) {
            last_commit = Some((c, commits_of[c]));
            commits_of[c] += 1;
            block_len[c].push(0);
        } else {
            let block = commits_of[c];
            let index = block_len[c][block];
            block_len[c][block] += 1;
            followers
                .entry(last_commit)
                .or_default()
                .push((c, block, index));
        }
    }
    let mut done_commits = vec![0usize; clients];
    let mut emitted = vec![0usize; clients];
    let mut steps = Vec::new();
    let emit_followers =
        |anchor: Anchor, done_commits: &[usize], emitted: &mut [usize], steps: &mut Vec<usize>| {
            for &(c, block, index) in followers.get(&anchor).into_iter().flatten() {
                if done_commits[c] == block && emitted[c] == index {
                    steps.push(c);
                    emitted[c] += 1;
                }
            }
        };
    emit_followers(None, &done_commits, &mut emitted, &mut steps);
    for &c in turns.iter().filter(|&&c| c < clients) {
        let j = done_commits[c];
        let pending = block_len[c].get(j).copied().unwrap_or(0);
        for _ in emitted[c]..pending {
            steps.push(c);
        }
        steps.push(c);
        done_commits[c] += 1;
        emitted[c] = 0;
        emit_followers(Some((c, j)), &done_commits, &mut emitted, &mut steps);
    }
    steps
}

/// Runs one transaction of `client` on `session`: `Some` with what the commit did, `None`
/// if the client rolled it back.
pub fn run_one(
    store: &mut Store,
    session: SessionId,
    client: &mut dyn Client,
) -> Option<Committed> {
    let mut tx = store.begin(session);
    match client.run(&mut tx) {
        Outcome::Commit => Some(tx.commit()),
        Outcome::Rollback => {
            tx.rollback();
            None
        }
    }
}
