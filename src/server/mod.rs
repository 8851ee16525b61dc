//! The recording server: the embedded store spoken over PostgreSQL's wire protocol, so that
//! any application records its own runs unmodified (`isopredict serve`, `isopredict record`).
//! SQL is translated onto key–value reads and writes as MonkeyDB does for JDBC programs
//! (Biswas et al., OOPSLA'21; IsoPredict, PLDI'24 §6), with keys named as the application
//! names them (`acct.bal[id=1]`).
//!
//! - [`wire`]: the protocol (the `pgwire` crate): startup, trust/password authentication,
//!   simple and extended query protocol.
//! - [`socket`]: a connection's message loop, its replies batched into one write per answer.
//! - [`shards`]: the threads that serve connections, each with its own event loop.
//! - [`session`]: a connection's transaction state machine (idle, in a block, failed).
//! - [`sql`]: parsing (`sqlparser`, PostgreSQL dialect), catalog, expressions, translation.
//! - [`database`]: the shared store and its concurrency control (reads see the latest
//!   committed write; a bounded lock wait, then concurrency).
//! - [`locks`]: strict two-phase locking at row and table granularity, deadlocks found at once.
//! - [`recording`]: statements, aborted transactions, locked reads, the history.
//! - [`replay`]: replay mode: reads steered along a predicted history, transactions in its
//!   turns (`isopredict test`).
//!
//! [`Server::bind`] then [`Server::run`] serve until a stop is requested (a signal through
//! [`crate::interrupt`], the caller's flag, or `until_idle` without connections), then
//! [`Server::write`] writes `observed.json` atomically. docs/recording.md describes the SQL
//! supported and the recording semantics.

pub mod client;
pub mod database;
pub mod gate;
pub mod locks;
pub mod recording;
pub mod replay;
pub mod replay_server;
pub mod session;
pub mod shards;
pub mod socket;
pub mod sql;
pub mod upstream;
pub mod wire;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use database::Shared;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen (loopback by default; port 0 picks a free one).
    pub addr: SocketAddr,
    /// Stop after this long without any connection open (`None`: run until stopped).
    pub until_idle: Option<Duration>,
    /// A password clients must give (cleartext); `None`: trust.
    pub password: Option<String>,
    /// How long a transaction waits for a lock before running on without locks.
    pub lock_wait: Duration,
    /// The most connections open at once; more are refused (closed at once).
    pub max_connections: usize,
    /// Threads serving connections (each connection stays on one, [`shards`]).
    pub threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            until_idle: None,
            password: None,
            lock_wait: database::DEFAULT_LOCK_WAIT,
            max_connections: 10_000,
            threads: shards::default_threads(),
        }
    }
}

/// What a run of the server recorded, in numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Connections opened.
    pub connections: u64,
    /// Committed transactions with events.
    pub committed: usize,
    /// Aborted transactions with events.
    pub aborted: usize,
    /// Transactions that went on without a lock (a wait past the bound, or a deadlock).
    pub concurrent: u64,
    /// Statements recorded.
    pub statements: usize,
    /// Statements refused or failed.
    pub errors: u64,
    /// Events (reads and writes) recorded.
    pub events: usize,
    /// Statements that stopped to wait for a lock held by another transaction.
    pub lock_waits: u64,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "recorded {} connections, {} committed and {} aborted transactions, {} statements, \
             {} events; {} statements failed or were refused",
            self.connections,
            self.committed,
            self.aborted,
            self.statements,
            self.events,
            self.errors
        )?;
        if self.concurrent > 0 {
            write!(
                f,
                "; {} transactions waited longer than --lock-wait for a lock (or were in a \
                 deadlock) and ran on without it (the recording may not be serializable: \
                 check it)",
                self.concurrent
            )?;
        }
        Ok(())
    }
}

/// A bound server (see the module documentation).
pub struct Server {
    config: Config,
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
}

impl Server {
    /// Binds the listening socket.
    pub fn bind(config: Config) -> std::io::Result<Server> {
        let listener = std::net::TcpListener::bind(config.addr)?;
        listener.set_nonblocking(true)?;
        Ok(Server {
            shared: Arc::new(Shared::new(config.lock_wait)),
            config,
            listener,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves connections until `stop` is set, a stop signal arrived
    /// ([`crate::interrupt::signalled`]; the caller keeps the recording with
    /// [`crate::interrupt::keep_findings`] so that the write that follows goes on), or no
    /// connection has been open for `until_idle`. Connections
    /// still open then are closed (their open transactions recorded as aborted).
    pub fn run(&self, stop: &AtomicBool) -> std::io::Result<()> {
        let shards = shards::Shards::start(self.config.threads)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let served = runtime.block_on(self.serve(stop, &shards));
        shards.stop();
        served
    }

    async fn serve(&self, stop: &AtomicBool, shards: &shards::Shards) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::from_std(self.listener.try_clone()?)?;
        let open = Arc::new(AtomicUsize::new(0));
        let last_close = Arc::new(Mutex::new(Instant::now()));
        let mut tasks = tokio::task::JoinSet::new();
        let mut connections: Vec<std::sync::Weak<wire::Connection>> = Vec::new();
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((socket, _)) = accepted else { continue };
                    if open.load(Ordering::SeqCst) >= self.config.max_connections {
                        drop(socket);
                        continue;
                    }
                    // The connection moves to the least busy serving thread's event loop.
                    let Ok(socket) = socket.into_std() else { continue };
                    open.fetch_add(1, Ordering::SeqCst);
                    let conn = wire::Connection::new(self.shared.clone(), self.config.password.clone());
                    connections.push(Arc::downgrade(&conn));
                    let (open, last_close) = (open.clone(), last_close.clone());
                    let (shard, busy) = shards.least_busy();
                    busy.fetch_add(1, Ordering::SeqCst);
                    tasks.spawn_on(async move {
                        if let Ok(socket) = tokio::net::TcpStream::from_std(socket) {
                            let _ = socket::serve(socket, conn.clone()).await;
                        }
                        conn.closed().await;
                        *last_close.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                        busy.fetch_sub(1, Ordering::SeqCst);
                        open.fetch_sub(1, Ordering::SeqCst);
                    }, shard);
                }
                _ = tick.tick() => {
                    while tasks.try_join_next().is_some() {}
                    connections.retain(|c| c.strong_count() > 0);
                    if stop.load(Ordering::SeqCst) || crate::interrupt::signalled() {
                        break;
                    }
                    if let Some(idle) = self.config.until_idle {
                        let since = last_close.lock().unwrap_or_else(|p| p.into_inner()).elapsed();
                        if open.load(Ordering::SeqCst) == 0 && since >= idle {
                            break;
                        }
                    }
                }
            }
        }
        // Connections still open are ended; their open transactions are recorded as aborted.
        let open: Vec<Arc<wire::Connection>> = connections
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .collect();
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        for conn in open {
            conn.closed().await;
        }
        Ok(())
    }

    /// Starts the setup phase: connections that open until [`Server::end_setup`] are setup
    /// connections (`record --setup`), whatever their `application_name`.
    pub fn begin_setup(&self) {
        self.shared.set_setup_phase(true);
    }

    /// Ends the setup phase, then waits (up to `wait`) until the server has seen every setup
    /// connection close — a client's exit reaches the server a moment later — so that every
    /// connection opened afterwards is ordered after all of them. Returns whether they all
    /// closed in time (a setup connection still open orders nothing).
    pub fn end_setup(&self, wait: Duration) -> bool {
        self.shared.set_setup_phase(false);
        let start = Instant::now();
        loop {
            if !self.shared.lock().recorder.setup_open() {
                return true;
            }
            if start.elapsed() >= wait {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The history recorded so far and its summary.
    pub fn history(&self, source: &str) -> Result<(crate::History, Summary), crate::InputError> {
        let db = self.shared.lock();
        let recorded = db.recorder.history(&db.store, &db.catalog, source)?;
        let (committed, aborted) = db.recorder.txn_counts();
        let summary = Summary {
            connections: db.connections,
            committed,
            aborted,
            concurrent: db.recorder.concurrent_txns,
            statements: recorded.statements().map_or(0, |s| s.statements().len()),
            errors: db.recorder.errors,
            events: recorded.ops().len() - recorded.implicit_initial_writes() as usize,
            lock_waits: db.lock_waits,
        };
        Ok((recorded, summary))
    }

    /// Writes the recording as native JSON to `path`, atomically; returns the summary.
    pub fn write(&self, path: &Path) -> anyhow::Result<Summary> {
        let (recorded, summary) = self.history(&path.display().to_string())?;
        crate::output::write_file_atomically(path, |out| {
            crate::formats::json::write(&recorded, out)
                .map_err(|e| std::io::Error::other(e.to_string()))
        })?;
        Ok(summary)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_sql;
