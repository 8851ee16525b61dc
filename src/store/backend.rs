//! Where a run's transactions execute and get recorded: the [`Backend`] trait and the
//! embedded store's implementation, [`Embedded`]; [`super::postgres::Postgres`] is the other.
//!
//! A backend receives a [`Job`] — the initial state (written through the embedded store's
//! [`Loader`], which every backend copies from), one [`Client`] per session — runs every
//! client to completion and returns an [`Execution`]: the recorded [`History`] with an exact
//! write–read relation, every transaction that ran ([`Attempt`]s, aborted ones included) and
//! the final state as an embedded [`Store`] (for invariants and key names). Application code
//! sees only [`super::Tx`], so the same workload runs on every backend.

use std::fmt;
use std::str::FromStr;

use super::driver::{run_clients_forcing, Attempt, Client, Schedule};
use super::engine::{Committed, Loader, Store, StoreError};
use super::key_index::ScanMode;
use super::policy::ReadPolicy;
use super::replay::Divergence;
use crate::check::Level;
use crate::error::InputError;
use crate::history::{History, TxnId};

/// The transactions of one run, ready to execute.
pub struct Job<'a> {
    /// The recorded history's name.
    pub name: String,
    /// Writes the initial state.
    pub load: &'a (dyn Fn(&mut Loader<'_>) + Sync),
    /// Each session's external id (MonkeyDB's connection number), one per client.
    pub sessions: Vec<u64>,
    /// The application code of each session.
    pub clients: Vec<&'a mut (dyn Client + Send)>,
    /// How table statements find their rows ([`ScanMode`]; a backend without a key index
    /// scans in full whatever this says).
    pub scan: ScanMode,
}

/// What a backend recorded.
#[derive(Debug)]
pub struct Execution {
    /// The recorded history: every transaction with events, aborted ones included; each read
    /// names the transaction whose write it saw.
    pub history: History,
    /// The committed transactions of `history` in the order they committed (on a database:
    /// the order their commits returned, a valid guess, not a serialization order).
    pub commit_order: Vec<TxnId>,
    /// Every transaction that ran, in the order it ended.
    pub attempts: Vec<Attempt>,
    /// Per attempt: the transaction of `history` it recorded (`None`: it left no events or
    /// the embedded store rolled it back without a trace).
    pub attempt_txns: Vec<Option<TxnId>>,
    /// The final state, as an embedded store (reads through its snapshot are unrecorded).
    pub final_state: Store,
    /// Where a replay left its plan (embedded store, replay policy only).
    pub divergences: Vec<Divergence>,
    /// The database run's facts; `None` on the embedded store.
    pub database: Option<DatabaseRun>,
}

/// Facts about a run on a real database.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DatabaseRun {
    /// Which database, e.g. `PostgreSQL 15.14 at 127.0.0.1:5433/postgres`.
    pub database: String,
    /// The isolation level every transaction ran at.
    pub isolation: Isolation,
    /// Transactions that ran (committed, rolled back by the client, aborted by the database).
    pub attempts: usize,
    /// Transactions the database aborted: serialization failures, deadlocks, lost
    /// connections.
    pub aborted_by_database: usize,
    /// Of those, how many had the lost connection as cause.
    pub connection_losses: usize,
    /// Transactions whose commit outcome could not be learned (the connection died during
    /// COMMIT and the server never answered again); recorded as committed when another
    /// transaction read their writes, else as aborted.
    pub unknown_outcome: usize,
    /// Wall time of the sessions, milliseconds.
    pub elapsed_ms: f64,
    /// Why the run ended early (e.g. the server went away); `None` when every session ran
    /// to completion. The history is still well-formed: every transaction up to then.
    pub failure: Option<String>,
    /// When the run's schema could not be dropped (the server went away): the sentence naming
    /// it and the SQL that drops it (also at the end of [`Self::failure`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_left: Option<String>,
}

/// A database's isolation level, as requested with `SET TRANSACTION ISOLATION LEVEL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// READ COMMITTED: every statement sees the data committed before it began.
    ReadCommitted,
    /// REPEATABLE READ: PostgreSQL's snapshot isolation.
    RepeatableRead,
    /// SERIALIZABLE: PostgreSQL's serializable snapshot isolation.
    Serializable,
}

impl Isolation {
    /// Every level.
    pub const ALL: [Isolation; 3] = [
        Isolation::ReadCommitted,
        Isolation::RepeatableRead,
        Isolation::Serializable,
    ];

    /// The SQL name, e.g. `READ COMMITTED`.
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }

    /// The command-line name: `read-committed`, `repeatable-read`, `serializable`.
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read-committed",
            Isolation::RepeatableRead => "repeatable-read",
            Isolation::Serializable => "serializable",
        }
    }

    /// The level of our checkers this database level promises (PostgreSQL's documentation,
    /// §13.2): read committed → rc, repeatable read → snapshot isolation, serializable →
    /// serializability.
    pub fn promised_level(self) -> Level {
        match self {
            Isolation::ReadCommitted => Level::ReadCommitted,
            Isolation::RepeatableRead => Level::Snapshot,
            Isolation::Serializable => Level::Serializable,
        }
    }
}

impl fmt::Display for Isolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isolation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().replace(['_', ' '], "-").as_str() {
            "read-committed" | "rc" => Ok(Isolation::ReadCommitted),
            "repeatable-read" | "rr" | "snapshot" | "si" => Ok(Isolation::RepeatableRead),
            "serializable" | "ser" => Ok(Isolation::Serializable),
            _ => Err(format!(
                "unknown isolation level {s:?} (read-committed, repeatable-read or serializable)"
            )),
        }
    }
}

/// Why a backend could not run a job.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The embedded store rejected its configuration.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The recorded history did not build (a bug; reported rather than hidden).
    #[error(transparent)]
    History(#[from] InputError),
    /// The database could not be reached or set up.
    #[error("{0}")]
    Database(String),
    /// A stop was requested ([`crate::interrupt`]) before the run ended; nothing of it is
    /// kept (a database run's schema is dropped).
    #[error("interrupted")]
    Interrupted,
}

/// Where transactions run and get recorded. See the module documentation.
pub trait Backend: Send + Sync + fmt::Debug {
    /// A description for reports, e.g. `embedded store` or `PostgreSQL 15.14 at …,
    /// read-committed`.
    fn describe(&self) -> String;
    /// Runs `job` to completion (or until the backend fails; see
    /// [`DatabaseRun::failure`]) and returns the recording.
    fn execute(&self, job: Job<'_>) -> Result<Execution, BackendError>;
    /// The same backend with every statement waiting for its turn at `gate`; `None` when the
    /// backend cannot (the embedded store runs whole transactions one at a time).
    fn gated(&self, gate: std::sync::Arc<dyn StatementGate>) -> Option<Box<dyn Backend>> {
        let _ = gate;
        None
    }
}

/// A statement of a gated run, as a [`StatementGate`] sees it: the statement recording
/// operation `n` (0-based, program order) of a transaction, or its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateStep {
    /// The statement that records the transaction's operation at this index (a statement
    /// recording nothing, such as a scan, waits for the turn of the next operation).
    Op(u32),
    /// COMMIT or ROLLBACK.
    End,
}

/// Where each statement of a database run waits for its turn: the barriers of a schedule
/// ([`crate::reproduce`]). Sessions are client indices; transactions are counted per session
/// from 0, every attempt included. A backend that supports gating calls [`Self::before`]
/// and [`Self::after`] around every statement, asks [`Self::must_roll_back`] before a commit
/// and [`Self::session_done`] before each transaction.
pub trait StatementGate: Send + Sync + fmt::Debug {
    /// Returns when it is the statement's turn (or when the gated run failed: then at once):
    /// `true` to run it, `false` to fail the transaction here without running it (the run
    /// being reproduced had it aborted by this point).
    fn before(&self, session: usize, txn: usize, step: GateStep) -> bool;
    /// The statement ran; `failed` holds the database's error when it failed.
    fn after(&self, session: usize, txn: usize, step: GateStep, failed: Option<&str>);
    /// Whether the transaction must end with ROLLBACK even when the application commits it
    /// (the run being reproduced aborted it).
    fn must_roll_back(&self, session: usize, txn: usize) -> bool;
    /// Whether the session must stop before its transaction `txn`.
    fn session_done(&self, session: usize, txn: usize) -> bool;
    /// The session lost its connection, or stopped for good (the server went away): `why`.
    /// Statements waiting for a turn it will not take in order must stop waiting.
    fn session_stopped(&self, _session: usize, _why: &str) {}
}

/// The embedded store: transactions run one at a time in an order set by `schedule`, reads
/// follow `policy` (latest write, random valid writer, or a replayed prediction).
#[derive(Debug, Clone)]
pub struct Embedded {
    /// How reads choose their writers.
    pub policy: ReadPolicy,
    /// Which session runs next.
    pub schedule: Schedule,
    /// Transactions to roll back whatever the client says, as (client, index among its
    /// transactions): a replay of aborts a database decided.
    pub forced_aborts: Vec<(usize, usize)>,
}

impl Backend for Embedded {
    fn describe(&self) -> String {
        "embedded store".to_string()
    }

    fn execute(&self, job: Job<'_>) -> Result<Execution, BackendError> {
        let mut store = Store::new(self.policy.clone())?;
        store.set_scan_mode(job.scan);
        (job.load)(&mut store.loader());
        let sessions: Vec<_> = job
            .sessions
            .iter()
            .map(|&s| store.open_session(s))
            .collect();
        let mut clients = job.clients;
        let attempts = {
            let mut refs: Vec<&mut dyn Client> = clients
                .iter_mut()
                .map(|c| &mut **c as &mut dyn Client)
                .collect();
            run_clients_forcing(
                &mut store,
                &sessions,
                &mut refs,
                &self.schedule,
                &self.forced_aborts,
            )
        };
        crate::interrupt::stop_point().map_err(|_| BackendError::Interrupted)?;
        store.finish_replay();
        let history = store.history(&job.name)?;
        let commit_order = store.commit_order();
        let attempt_txns = attempts
            .iter()
            .map(|a| match a.outcome {
                Some(Committed::At(seq)) => (seq as usize)
                    .checked_sub(1)
                    .and_then(|i| commit_order.get(i).copied()),
                _ => None,
            })
            .collect();
        Ok(Execution {
            history,
            commit_order,
            attempts,
            attempt_txns,
            divergences: store.divergences().to_vec(),
            final_state: store,
            database: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_names_round_trip() {
        for i in Isolation::ALL {
            assert_eq!(i.name().parse::<Isolation>(), Ok(i));
            assert_eq!(i.sql().parse::<Isolation>(), Ok(i));
        }
        assert!("snapshot-ish".parse::<Isolation>().is_err());
        assert_eq!(
            Isolation::Serializable.promised_level(),
            Level::Serializable
        );
    }
}
