//! The state all connections share: the store (reads see the latest committed write), the
//! catalog, the recording, and the lock table that keeps the recorded run serializable.
//!
//! Concurrency control, behind four calls a session makes: *begin* (nothing to do), *lock*
//! before each read or write ([`TxnLocking`], the statement's hook: strict two-phase locking
//! at row and table granularity, [`super::locks`]), *wait* when a lock is taken, and *end*
//! ([`Database::end_txn`], at commit or abort: every lock released). Transactions on different
//! rows run at the same time; every read still sees the latest committed write, and the locks
//! make the observed run serializable (as MonkeyDB and IsoPredict record it).
//!
//! A test that holds two transactions open at once in one thread would wait forever for a
//! lock the other holds: a lock wait longer than [`Shared::lock_wait`] lets the waiting
//! transaction go on without that lock, and without any lock for the rest of it. A request
//! that would close a cycle of waits (a deadlock, found at once) goes on without that one lock.
//! Either way the transaction runs concurrently with the holder, its reads still see the latest
//! committed write at the time of each read, the history records exactly what it read, and the
//! summary counts it, so `check --level ser` reports any anomaly this caused.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;

use super::locks::{LockTable, Mode, Request, Resource};
use super::recording::Recorder;
use super::replay::ReplayGate;
use super::sql::catalog::Catalog;
use super::sql::exec::Locking;
use crate::store::{ReadPolicy, Store};

/// The default bound on waiting for a lock.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(2);

/// The store, catalog, recording and locks, changed under one mutex (each statement holds it
/// while it runs, never across a network wait or a lock wait).
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
    /// The locks of the running transactions.
    pub locks: LockTable,
    /// Statements that stopped to wait for a lock (each wait counted once).
    pub lock_waits: u64,
    /// The open setup connections (store session) and their sockets.
    setup_sockets: Vec<(u32, Arc<ClosingProbe>)>,
}

impl Database {
    /// Ends transaction `txn` (a connection's store session) for the locks: releases them all.
    pub fn end_txn(&mut self, txn: u32) {
        self.locks.release_all(txn);
    }

    /// Registers the socket of setup connection `session`.
    pub fn watch_setup_socket(&mut self, session: u32, socket: Arc<ClosingProbe>) {
        self.setup_sockets.push((session, socket));
    }

    /// Connection `session` closed: its socket is no longer watched.
    pub fn forget_socket(&mut self, session: u32) {
        self.setup_sockets.retain(|(s, _)| *s != session);
    }

    /// Marks closed the setup connections whose client has already closed them, though their
    /// serving thread has not read that yet (a connection opening now is ordered after them).
    pub fn note_closed_setup_clients(&mut self) {
        let recorder = &mut self.recorder;
        self.setup_sockets.retain(|(session, socket)| {
            let closed = socket.client_has_closed();
            if closed {
                recorder.close_session(*session);
            }
            !closed
        });
    }
}

/// A connection's socket as other connections see it: whether its client has already closed
/// it. Each connection is read by its own serving thread ([`super::shards`]), so a client that
/// closes its setup connection and then opens another may have the new one's startup read
/// before the old one's end: the new connection asks the open setup connections' sockets
/// instead. A client has closed its connection when what waits unread in the socket is a
/// Terminate message and the end of the stream, or the end alone.
#[derive(Debug, Default)]
pub struct ClosingProbe {
    /// The socket's descriptor while the connection is served (`None` before and after).
    fd: Mutex<Option<i32>>,
}

impl ClosingProbe {
    /// The connection is served on socket `fd` (kept open until [`ClosingProbe::detach`]).
    pub fn attach(&self, fd: i32) {
        *self.fd.lock().unwrap_or_else(|p| p.into_inner()) = Some(fd);
    }

    /// The connection is no longer served: the descriptor is forgotten before it is closed.
    pub fn detach(&self) {
        *self.fd.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Whether the client has closed the connection (see the type's documentation); a
    /// connection whose serving ended has.
    pub fn client_has_closed(&self) -> bool {
        let fd = self.fd.lock().unwrap_or_else(|p| p.into_inner());
        let Some(fd) = *fd else {
            return true;
        };
        let mut unread = [0u8; 6];
        // SAFETY: the descriptor stays open while the lock is held (detach takes it before
        // the socket is closed); recv writes at most the buffer's length.
        let n = unsafe {
            libc::recv(
                fd,
                unread.as_mut_ptr().cast(),
                unread.len(),
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        n == 0 || (n == 5 && unread[..5] == [b'X', 0, 0, 0, 4])
    }
}

/// A transaction's lock requests during one statement: granted, skipped (the transaction
/// goes on without locks, or the request closed a deadlock), or the wait the statement must
/// make before it runs again.
pub struct TxnLocking<'a> {
    locks: &'a mut LockTable,
    txn: u32,
    unlocked: bool,
    /// Set when a request closed a cycle of waits and was skipped.
    pub deadlocked: bool,
    /// Set when a request must wait: the statement stops and runs again once it is heard.
    pub waiting: Option<oneshot::Receiver<()>>,
}

impl<'a> TxnLocking<'a> {
    /// The requests of transaction `txn`; with `unlocked` every request is skipped.
    pub fn new(locks: &'a mut LockTable, txn: u32, unlocked: bool) -> TxnLocking<'a> {
        TxnLocking {
            locks,
            txn,
            unlocked,
            deadlocked: false,
            waiting: None,
        }
    }
}

impl Locking for TxnLocking<'_> {
    fn lock(&mut self, resource: Resource, mode: Mode) -> bool {
        if self.unlocked {
            return true;
        }
        match self.locks.request(self.txn, resource, mode) {
            Request::Granted => true,
            Request::Deadlock => {
                self.deadlocked = true;
                true
            }
            Request::Wait(heard) => {
                self.waiting = Some(heard);
                false
            }
        }
    }
}

/// Shared by every connection.
#[derive(Debug)]
pub struct Shared {
    db: Mutex<Database>,
    /// Replay mode: the turn gate that orders transactions instead of the locks
    /// ([`super::replay`]).
    replay: Option<std::sync::Arc<ReplayGate>>,
    /// How long a transaction waits for a lock before going on without it.
    pub lock_wait: Duration,
    /// Whether connections opening now are setup connections (`record --setup`).
    setup_phase: AtomicBool,
}

impl Shared {
    /// A new, empty database.
    pub fn new(lock_wait: Duration) -> Shared {
        Shared {
            db: Mutex::new(Database {
                store: Store::new(ReadPolicy::Latest).expect("the Latest policy is supported"),
                catalog: Catalog::default(),
                recorder: Recorder::default(),
                connections: 0,
                locks: LockTable::default(),
                lock_waits: 0,
                setup_sockets: Vec::new(),
            }),
            replay: None,
            lock_wait,
            setup_phase: AtomicBool::new(false),
        }
    }

    /// Marks the connections that open from now on as setup connections (`true`), or not.
    pub fn set_setup_phase(&self, on: bool) {
        self.setup_phase.store(on, Ordering::SeqCst);
    }

    /// Whether connections opening now are setup connections.
    pub fn in_setup_phase(&self) -> bool {
        self.setup_phase.load(Ordering::SeqCst)
    }

    /// A new, empty database in replay mode: `store` follows a prediction and transactions
    /// pass `gate` instead of taking locks.
    pub fn replaying(
        lock_wait: Duration,
        store: Store,
        gate: std::sync::Arc<ReplayGate>,
    ) -> Shared {
        let shared = Shared::new(lock_wait);
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

    /// Waits for a lock request to be granted, up to [`Shared::lock_wait`]; `false`: the wait
    /// timed out (the caller then cancels the request, [`LockTable::cancel`]).
    pub async fn wait_for_lock(&self, heard: oneshot::Receiver<()>) -> bool {
        matches!(
            tokio::time::timeout(self.lock_wait, heard).await,
            Ok(Ok(()))
        )
    }
}
