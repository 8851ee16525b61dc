//! The state all connections share: the store (reads see the latest committed write), the
//! catalog, the recording, and the transaction token that runs transactions one at a time.
//!
//! The token: a transaction takes it when it begins and gives it back when it ends, so the
//! observed run is serial (as MonkeyDB and IsoPredict record). A transaction that waits longer
//! than [`Shared::token_wait`] (a test holding two transactions open in one thread would
//! otherwise deadlock) runs without it, concurrently with the holder; its reads still see the
//! latest committed write at the time of each read, and the history records exactly what
//! it read, so `check --level ser` reports any anomaly this caused.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::recording::Recorder;
use super::replay::ReplayGate;
use super::sql::catalog::Catalog;
use crate::store::{ReadPolicy, Store};

/// The default bound on waiting for the transaction token.
pub const DEFAULT_TOKEN_WAIT: Duration = Duration::from_secs(2);

/// The store, catalog and recording, changed under one lock (each statement holds it while
/// it runs, never across a network wait).
#[derive(Debug)]
pub struct Database {
    /// The store.
    pub store: Store,
    /// The tables.
    pub catalog: Catalog,
    /// What was recorded beside the store.
    pub recorder: Recorder,
    /// Connections opened so far.
    pub connections: u64,
}

/// Shared by every connection.
#[derive(Debug)]
pub struct Shared {
    db: Mutex<Database>,
    token: std::sync::Arc<Semaphore>,
    /// Replay mode: the turn gate that replaces the token ([`super::replay`]).
    replay: Option<std::sync::Arc<ReplayGate>>,
    /// How long a transaction waits for the token before running concurrently.
    pub token_wait: Duration,
}

impl Shared {
    /// A new, empty database.
    pub fn new(token_wait: Duration) -> Shared {
        Shared {
            db: Mutex::new(Database {
                store: Store::new(ReadPolicy::Latest).expect("the Latest policy is supported"),
                catalog: Catalog::default(),
                recorder: Recorder::default(),
                connections: 0,
            }),
            token: std::sync::Arc::new(Semaphore::new(1)),
            replay: None,
            token_wait,
        }
    }

    /// A new, empty database in replay mode: `store` follows a prediction and transactions
    /// pass `gate` instead of the token.
    pub fn replaying(
        token_wait: Duration,
        store: Store,
        gate: std::sync::Arc<ReplayGate>,
    ) -> Shared {
        let shared = Shared::new(token_wait);
        shared.lock().store = store;
        Shared {
            replay: Some(gate),
            ..shared
        }
    }

    /// The replay gate, in replay mode.
    pub fn replay_gate(&self) -> Option<&ReplayGate> {
        self.replay.as_deref()
    }

    /// The database, locked. A panic while it was held (a bug) does not stop the others.
    pub fn lock(&self) -> MutexGuard<'_, Database> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for the transaction token up to [`Shared::token_wait`]; `None`: the wait timed
    /// out and the transaction runs concurrently.
    pub async fn take_token(&self) -> Option<OwnedSemaphorePermit> {
        tokio::time::timeout(self.token_wait, self.token.clone().acquire_owned())
            .await
            .ok()
            .and_then(Result::ok)
    }
}
