//! The recording server: the embedded store spoken over PostgreSQL's wire protocol, so that
//! any application records its own runs unmodified (`isopredict serve`, `isopredict record`).
//! SQL is translated onto key–value reads and writes as MonkeyDB does for JDBC programs
//! (Biswas et al., OOPSLA'21; IsoPredict, PLDI'24 §6), with keys named as the application
//! names them (`acct.bal[id=1]`).
//!
//! - [`wire`]: the protocol (the `pgwire` crate): startup, trust/password authentication,
//!   simple and extended query protocol.
//! - [`socket`]: a connection's message loop, its replies batched into one write per answer.
//! - [`shards`]: the threads that serve connections — one per connection up to a limit, each
//!   with its own event loop, following its TCP client's core.
//! - [`session`]: a connection's transaction state machine (idle, in a block, failed).
//! - [`cursor`]: a connection's SQL cursors (DECLARE, FETCH, CLOSE).
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
pub mod cursor;
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
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use database::Shared;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen (loopback by default; port 0 picks a free one).
    pub addr: SocketAddr,
    /// Also listen on a Unix-domain socket in this directory, named as PostgreSQL names its
    /// own (`.s.PGSQL.PORT`), so that libpq's `host=DIR` (`PGHOST=DIR`) reaches it.
    pub socket_dir: Option<PathBuf>,
    /// Stop after this long without any connection open (`None`: run until stopped).
    pub until_idle: Option<Duration>,
    /// A password clients must give (cleartext); `None`: trust.
    pub password: Option<String>,
    /// How long a transaction waits for a lock before running on without locks.
    pub lock_wait: Duration,
    /// The most connections open at once; more are refused (closed at once).
    pub max_connections: usize,
    /// The most threads serving connections: each connection gets one of its own up to this
    /// many, and shares one beyond ([`shards`]).
    pub threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            socket_dir: None,
            until_idle: None,
            password: None,
            lock_wait: database::DEFAULT_LOCK_WAIT,
            max_connections: 10_000,
            threads: shards::DEFAULT_MAX_THREADS,
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
    /// The Unix-domain socket's listener and its path (removed when the server is dropped).
    unix: Option<(std::os::unix::net::UnixListener, PathBuf)>,
    shared: Arc<Shared>,
}

impl Server {
    /// Binds the listening sockets: TCP at `config.addr`, and the Unix-domain socket in
    /// `config.socket_dir` when one is given (named after the TCP port, as PostgreSQL's is;
    /// a leftover socket file nothing listens on is replaced, one in use is an error).
    pub fn bind(config: Config) -> std::io::Result<Server> {
        let shared = Arc::new(Shared::new(config.lock_wait));
        Server::bind_with(config, shared)
    }

    /// [`Server::bind`] over a database made by the caller (the replay server's).
    fn bind_with(config: Config, shared: Arc<Shared>) -> std::io::Result<Server> {
        let listener = std::net::TcpListener::bind(config.addr)?;
        listener.set_nonblocking(true)?;
        let unix = match &config.socket_dir {
            Some(dir) => Some(bind_unix(dir, listener.local_addr()?.port())?),
            None => None,
        };
        Ok(Server {
            shared,
            config,
            listener,
            unix,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Where clients reach it: the TCP address and the Unix-domain socket's directory.
    pub fn endpoint(&self) -> std::io::Result<client::Endpoint> {
        Ok(client::Endpoint {
            addr: self.local_addr()?,
            socket_dir: self.config.socket_dir.clone(),
        })
    }

    /// The path of its Unix-domain socket, when it listens on one.
    pub fn socket_path(&self) -> Option<&Path> {
        self.unix.as_ref().map(|(_, path)| path.as_path())
    }

    /// Serves connections until `stop` is set, a stop signal arrived
    /// ([`crate::interrupt::signalled`]; the caller keeps the recording with
    /// [`crate::interrupt::keep_findings`] so that the write that follows goes on), or no
    /// connection has been open for `until_idle`. Connections
    /// still open then are closed (their open transactions recorded as aborted).
    pub fn run(&self, stop: &AtomicBool) -> std::io::Result<()> {
        let mut shards = shards::Shards::new(self.config.threads);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let served = runtime.block_on(self.serve(stop, &mut shards));
        shards.stop();
        served
    }

    async fn serve(&self, stop: &AtomicBool, shards: &mut shards::Shards) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::from_std(self.listener.try_clone()?)?;
        let unix = match &self.unix {
            Some((l, _)) => Some(tokio::net::UnixListener::from_std(l.try_clone()?)?),
            None => None,
        };
        let mut served = Served {
            open: Arc::new(AtomicUsize::new(0)),
            last_close: Arc::new(Mutex::new(Instant::now())),
            tasks: tokio::task::JoinSet::new(),
            connections: Vec::new(),
        };
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((socket, _)) = accepted else { continue };
                    let Ok(socket) = socket.into_std() else { continue };
                    self.place(Accepted::Tcp(socket), &mut served, shards);
                }
                accepted = accept_unix(unix.as_ref()) => {
                    let Ok((socket, _)) = accepted else { continue };
                    let Ok(socket) = socket.into_std() else { continue };
                    self.place(Accepted::Unix(socket), &mut served, shards);
                }
                _ = tick.tick() => {
                    while served.tasks.try_join_next().is_some() {}
                    served.connections.retain(|c| c.strong_count() > 0);
                    if stop.load(Ordering::SeqCst) || crate::interrupt::signalled() {
                        break;
                    }
                    if let Some(idle) = self.config.until_idle {
                        let since = served.last_close.lock().unwrap_or_else(|p| p.into_inner()).elapsed();
                        if served.open.load(Ordering::SeqCst) == 0 && since >= idle {
                            break;
                        }
                    }
                }
            }
        }
        // Connections still open are ended; their open transactions are recorded as aborted.
        let open: Vec<Arc<wire::Connection>> = served
            .connections
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .collect();
        served.tasks.abort_all();
        while served.tasks.join_next().await.is_some() {}
        for conn in open {
            conn.closed().await;
        }
        Ok(())
    }

    /// Puts an accepted connection on a serving thread's event loop ([`shards::Shards::place`]),
    /// or closes it at once when `max_connections` are open or no thread can be had.
    fn place(&self, socket: Accepted, served: &mut Served, shards: &mut shards::Shards) {
        if served.open.load(Ordering::SeqCst) >= self.config.max_connections {
            return;
        }
        let Ok((shard, placement)) = shards.place() else {
            return;
        };
        served.open.fetch_add(1, Ordering::SeqCst);
        let conn = wire::Connection::new(self.shared.clone(), self.config.password.clone());
        served.connections.push(Arc::downgrade(&conn));
        let (open, last_close) = (served.open.clone(), served.last_close.clone());
        served.tasks.spawn_on(
            async move {
                let _ = match socket {
                    Accepted::Tcp(s) => match tokio::net::TcpStream::from_std(s) {
                        Ok(s) => socket::serve_tcp(s, conn.clone(), Some(placement)).await,
                        Err(e) => Err(e),
                    },
                    Accepted::Unix(s) => match tokio::net::UnixStream::from_std(s) {
                        Ok(s) => socket::serve_unix(s, conn.clone(), Some(placement)).await,
                        Err(e) => Err(e),
                    },
                };
                conn.closed().await;
                *last_close.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                open.fetch_sub(1, Ordering::SeqCst);
            },
            &shard,
        );
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

impl Drop for Server {
    fn drop(&mut self) {
        if let Some((_, path)) = &self.unix {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The connections the accepting loop has placed: how many are open, when the last one
/// closed, their tasks, and the connections themselves (to end those still open at the stop).
struct Served {
    open: Arc<AtomicUsize>,
    last_close: Arc<Mutex<Instant>>,
    tasks: tokio::task::JoinSet<()>,
    connections: Vec<std::sync::Weak<wire::Connection>>,
}

/// An accepted connection, moved to a serving thread as a std socket (a tokio socket belongs
/// to the event loop that made it).
enum Accepted {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

/// The next client of the Unix-domain socket; never, when there is none.
async fn accept_unix(
    listener: Option<&tokio::net::UnixListener>,
) -> std::io::Result<(tokio::net::UnixStream, tokio::net::unix::SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

/// Binds `DIR/.s.PGSQL.PORT`. A socket file left by a server that is gone (a connection to it
/// is refused) is replaced; one that answers is in use.
fn bind_unix(
    dir: &Path,
    port: u16,
) -> std::io::Result<(std::os::unix::net::UnixListener, PathBuf)> {
    use std::os::unix::net::{UnixListener, UnixStream};
    let path = dir.join(format!(".s.PGSQL.{port}"));
    if path.exists() {
        if UnixStream::connect(&path).is_ok() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!("{} is in use by another server", path.display()),
            ));
        }
        std::fs::remove_file(&path)?;
    }
    let listener = UnixListener::bind(&path).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("cannot listen on {}: {e}", path.display()),
        )
    })?;
    listener.set_nonblocking(true)?;
    Ok((listener, path))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod socket_file_tests {
    use super::bind_unix;

    /// A socket file nothing listens on (a server that was killed) is replaced; one a live
    /// server listens on is not taken over.
    #[test]
    fn a_stale_socket_file_is_replaced_and_a_live_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("isopredict-bind-unix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(".s.PGSQL.6001");
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert!(path.exists());
        let (live, bound) = bind_unix(&dir, 6001).expect("the stale file is replaced");
        assert_eq!(bound, path);
        let err = bind_unix(&dir, 6001).expect_err("a live socket is in use");
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
        assert!(err.to_string().contains(".s.PGSQL.6001"), "{err}");
        drop(live);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod tests_sql;
