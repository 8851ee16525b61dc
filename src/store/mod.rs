//! An in-process transactional key–value store playing MonkeyDB's role (Biswas et al.,
//! OOPSLA'21) for IsoPredict (PLDI'24): record application runs as histories, explore weak
//! isolation with random reads, and replay predicted executions to validate them.
//!
//! - [`Backend`]: where a run's transactions execute and get recorded — [`Embedded`] (this
//!   store) or [`postgres::Postgres`] (a real server; also [`postgres::PgSession`] to record an
//!   application's own transactions). Application code sees only [`Tx`], a running
//!   transaction of any backend.
//! - [`Store`]: sessions, transactions run one at a time ([`Store::begin`] → [`EmbeddedTx`]), get/put
//!   and set insert/delete/contains ([`KvRead`], [`KvWrite`]), commit/rollback, the loader of
//!   the initial state, an unrecorded [`Snapshot`] of the final state.
//! - [`ReadPolicy`]: `Latest` (serial observed runs), `Random` at causal/ra/rc/pc/si
//!   (MonkeyDB's exploration; snapshot isolation aborts on write conflicts), `Replay` of a predicted history ([`ReplayPlan`]) with [`Divergence`]s.
//! - [`run_clients`]: several sessions' [`Client`]s under a seeded or fixed [`Schedule`].
//! - Recording: [`Store::history`] (a [`crate::history::History`] with exact writers),
//!   [`Store::write_trace`] (the IsoPredict trace format), [`Store::commit_order`].
//! - [`Table`]: MonkeyDB's relational layer (key layout and statement translation), so runs
//!   have the paper's trace shape, scanning only the rows whose key can match
//!   ([`ScanMode::Keyed`], [`KeyIndex`]) or every row as MonkeyDB does ([`ScanMode::Full`]);
//!   [`StableHasher`] derives MonkeyDB's exact keys;
//!   [`KeyDirectory`] names keys back by table, column and row for reports.
//!
//! ```
//! use isopredict::store::{KvRead, KvWrite, ReadPolicy, Store, Value};
//! let mut store = Store::new(ReadPolicy::Latest).unwrap();
//! store.loader().put(42, Value::Int(100)); // initial state
//! let alice = store.open_session(1);
//! let bob = store.open_session(2);
//! for (s, amount) in [(alice, 50), (bob, 60)] {
//!     let mut tx = store.begin(s); // one transaction at a time
//!     let balance = tx.get(42).and_then(|v| v.as_i64()).unwrap_or(0);
//!     tx.put(42, Value::Int(balance + amount));
//!     tx.commit();
//! }
//! let history = store.history("deposits").unwrap();
//! assert_eq!(history.txn_count(), 3);
//! let mut trace = Vec::new();
//! store.write_trace(&mut trace).unwrap();
//! assert!(String::from_utf8(trace).unwrap().contains("READ KEY[42] Txn(2, 0) From(1, 0)"));
//! ```

mod access;
mod backend;
mod causal;
mod data;
mod driver;
mod engine;
mod key;
mod key_directory;
mod key_index;
mod policy;
pub mod postgres;
mod prng;
mod read_atomic;
mod read_committed;
mod record;
mod replay;
mod replay_order;
mod snapshot;
mod table;
mod value;

pub use crate::stable_hash::{hash_str, hash_u64s, StableHasher};
pub use access::{KvRead, KvWrite, Transaction, Tx};
pub use backend::{
    Backend, BackendError, DatabaseRun, Embedded, Execution, GateStep, Isolation, Job,
    StatementGate,
};
pub use data::{
    Event, EventKind, KeyId, Seq, SessionRecord, Source, StoreData, TxnRecord, Version,
    INITIAL_SESSION,
};
pub use driver::{
    interleave_attempts, run_clients, run_clients_forcing, run_one, Attempt, Client, Outcome,
    Schedule,
};
pub use engine::{
    Committed, EmbeddedTx, Loader, Savepoint, SessionId, Snapshot, Store, StoreError, SuspendedTx,
    WriteMark,
};
pub use key::KeyRef;
pub use key_directory::KeyDirectory;
pub use key_index::{KeyIndex, KeyLookup, ScanMode};
pub use policy::{supported, ReadPolicy};
pub use prng::SplitMix64;
pub use replay::{
    Divergence, DivergenceReason, PlannedRead, PlannedSession, PlannedTxn, PlannedWriter,
    ReplayPlan,
};
pub use replay_order::{commit_order, snapshot_order_near};
pub use table::{Assign, CmpOp, Pred, Projection, Table};
pub use value::Value;

#[cfg(test)]
mod tests;
