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
}

/// Runs `clients[i]` on `sessions[i]` until the schedule ends; returns how many transactions
/// ran (committed, empty or rolled back).
pub fn run_clients(
    store: &mut Store,
    sessions: &[SessionId],
    clients: &mut [&mut dyn Client],
    schedule: &Schedule,
) -> usize {
    assert_eq!(sessions.len(), clients.len(), "one session per client");
    let mut ran = 0;
    match schedule {
        Schedule::Seeded(seed) => {
            let mut rng = SplitMix64::new(*seed);
            let mut live: Vec<usize> = Vec::with_capacity(clients.len());
            loop {
                live.clear();
                live.extend((0..clients.len()).filter(|&i| !clients[i].is_done()));
                if live.is_empty() {
                    break;
                }
                let i = live[rng.below(live.len())];
                run_one(store, sessions[i], &mut *clients[i]);
                ran += 1;
            }
        }
        Schedule::Turns(turns) => {
            for &i in turns {
                while !clients[i].is_done() {
                    ran += 1;
                    if let Some(Committed::At(_)) = run_one(store, sessions[i], &mut *clients[i]) {
                        break;
                    }
                }
            }
        }
    }
    ran
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
