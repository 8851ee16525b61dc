//! PostgreSQL as a [`Backend`]: the workloads' key–value operations run as SQL on a real
//! server, one connection per session, sessions as concurrent threads, every transaction at
//! the run's [`Isolation`] level; and [`PgSession`] / [`Recorder`], the same recording for an
//! application's own transactions (docs/recording.md).
//!
//! Exact write–read relation: a **writer column**. Every row carries `w`, the id of the
//! transaction that wrote its current version; every write sets it and every read returns it,
//! so each read knows which transaction wrote the version it saw. PostgreSQL never shows
//! uncommitted data to other transactions and shows a transaction its own writes, so `w` is
//! the reader itself (a local read), a committed writer, or 0 (the loaded initial state); a
//! missing row reads from the initial state. Cost: 8 bytes per row and one more column in
//! each statement, no extra round trip. The alternative, PostgreSQL's `xmin`, names the
//! writing *database* transaction: mapping it to ours costs a `txid_current()` round trip per
//! transaction (and assigns an xid to read-only ones), and `xmin` changes meaning under
//! subtransactions and freezing; the writer column is exact and portable to any SQL database.
//!
//! Ids: transaction `n` (1-based, aborted ones included) of session index `i` is
//! `(i + 1) · 2^32 + n`; the initial state is 0.
//!
//! Failures: a statement that fails (serialization failure, deadlock, lost connection, any
//! other error) poisons the transaction — later reads return nothing, writes are skipped —
//! and it is rolled back and recorded as aborted by the database, with its events up to the
//! failure; the client is told ([`Client::aborted_by_store`]) and retries as its workload
//! says. A lost connection is re-opened before the session's next transaction; if the server
//! does not answer, the session stops and the run reports why ([`DatabaseRun::failure`]),
//! with every transaction up to then recorded. When the connection dies during COMMIT, the
//! outcome is asked with `txid_status` after reconnecting; if that is impossible, the
//! transaction counts as committed exactly when another transaction read one of its writes.
//!
//! Tables (in a fresh schema per run, dropped afterwards): `kv(k bigint primary key, v text,
//! w bigint)` for plain keys (values tagged `i:`, `r:`, `t:`, `b:`, `n`) and `member(s, e,
//! present, w)` for set membership; a set scan reads the rows of `member` it can see (a keyed
//! scan, [`super::ScanMode::Keyed`], only those whose primary key can match, from a key index
//! the run's sessions share).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client as PgClient, Config, NoTls, Row, Statement};
use rustc_hash::{FxHashMap, FxHashSet};

use super::access::{KvRead, KvWrite, Transaction};
use super::backend::{
    Backend, BackendError, DatabaseRun, Execution, GateStep, Isolation, Job, StatementGate,
};
use super::driver::{Attempt, Client, Outcome};
use super::engine::{Committed, Store};
use super::key::KeyRef;
use super::key_index::{KeyIndex, KeyLookup, ScanMode};
use super::policy::ReadPolicy;
use super::value::Value;
use crate::error::InputError;
use crate::formats::events::{EventWriter, WrittenBy};
use crate::history::{BuilderTxn, History, HistoryBuilder, ReadFrom, TxnId};

/// The reason of a transaction a gated run rolls back because the run it reproduces had it
/// aborted ([`StatementGate`]).
pub const ROLLED_BACK_AS_REPRODUCED: &str = "rolled back as in the run being reproduced";

/// How a run's failure begins when the server stopped answering (a session's connection was
/// lost and could not be re-opened): not the run's doing.
pub const SERVER_WENT_AWAY: &str = "the PostgreSQL server went away";

/// How a gated run's failure begins when a session's connection was lost mid-run (the server
/// went away or dropped it): not the run's doing either.
pub const CONNECTION_LOST: &str = "the connection to the PostgreSQL server was lost";

/// A PostgreSQL server and the isolation level to run at.
#[derive(Debug, Clone)]
pub struct Postgres {
    config: Config,
    isolation: Isolation,
    record: bool,
    gate: Option<Arc<dyn StatementGate>>,
}

/// `store` (a PostgreSQL URL or key=value connection string, well formed or not) with every
/// password replaced by `***`, for messages: the `user:password@` of a URL, and `password=…`
/// as a URL query parameter or a key=value pair.
pub fn redact_password(store: &str) -> String {
    let mut out = store.to_string();
    // The userinfo of a URL: between `://` and the last `@` before the host part.
    if let Some(scheme_end) = out.find("://") {
        let rest_start = scheme_end + 3;
        let authority_end = out[rest_start..]
            .find(['/', '?', '#'])
            .map_or(out.len(), |i| rest_start + i);
        if let Some(at) = out[rest_start..authority_end].rfind('@') {
            let userinfo = &out[rest_start..rest_start + at];
            if let Some(colon) = userinfo.find(':') {
                let start = rest_start + colon + 1;
                out.replace_range(start..rest_start + at, "***");
            }
        }
    }
    // `password=VALUE` (query parameter or key=value pair; the value ends at `&`, a space, or
    // its closing quote).
    let mut searched = 0;
    while let Some(i) = out[searched..].to_ascii_lowercase().find("password") {
        let key_end = searched + i + "password".len();
        let after = out[key_end..].trim_start();
        let Some(value) = after.strip_prefix('=') else {
            searched = key_end;
            continue;
        };
        let value_start = out.len() - value.trim_start().len();
        let quoted = out[value_start..].starts_with('\'');
        let value_end = if quoted {
            out[value_start + 1..]
                .find('\'')
                .map_or(out.len(), |j| value_start + 1 + j + 1)
        } else {
            out[value_start..]
                .find(['&', ' ', '\t'])
                .map_or(out.len(), |j| value_start + j)
        };
        out.replace_range(value_start..value_end, "***");
        searched = value_start + 3;
    }
    out
}

impl Postgres {
    /// The server at `url` (`postgres://user@host:port/db` or a key=value string), at
    /// `isolation`. Nothing is contacted yet.
    ///
    /// Errors (bad input, before any connection): an empty string, one that does not parse,
    /// and one that names no server host (which would only fail when connecting).
    pub fn new(url: &str, isolation: Isolation) -> Result<Postgres, BackendError> {
        const SHAPE: &str = "a PostgreSQL URL looks like postgres://user@host:5432/dbname";
        if url.trim().is_empty() {
            return Err(BackendError::Database(format!(
                "empty, but it needs the database: {SHAPE}"
            )));
        }
        let mut config: Config = url.parse().map_err(|e| {
            BackendError::Database(format!(
                "not a PostgreSQL connection string: {}: {e} ({SHAPE})",
                redact_password(url)
            ))
        })?;
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            return Err(BackendError::Database(format!(
                "{:?} names no server host ({SHAPE})",
                redact_password(url)
            )));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        Ok(Postgres {
            config,
            isolation,
            record: true,
            gate: None,
        })
    }

    /// The same server without recording: no writer column is read or written and no event
    /// is kept; the execution's history is empty. Only for measuring what recording costs.
    pub fn without_recording(mut self) -> Postgres {
        self.record = false;
        self
    }

    /// The same server with every statement waiting for its turn at `gate` (a schedule's
    /// barriers, [`crate::reproduce`]); a lock wait longer than 2 s fails the statement
    /// (`lock_timeout`), so a wait the schedule did not foresee ends the run instead of
    /// hanging it.
    pub fn with_gate(mut self, gate: Arc<dyn StatementGate>) -> Postgres {
        self.gate = Some(gate);
        self
    }

    /// The server's version (`SHOW server_version`, e.g. `15.18`).
    pub fn version(&self) -> Result<String, BackendError> {
        let mut conn = self.connect()?;
        Ok(Postgres::server_version(&mut conn))
    }

    /// A fresh schema name for one run (`isopredict_<pid>_…`) and its guard, which drops it
    /// when dropped (also on Ctrl-C).
    pub(crate) fn private_schema(&self) -> (String, SchemaGuard) {
        let name = schema_name();
        let guard = SchemaGuard::new(&self.config, &name);
        (name, guard)
    }

    /// The server's version (`15.18`) on `conn`.
    pub(crate) fn version_on(conn: &mut PgClient) -> String {
        Postgres::server_version(conn)
    }

    /// The isolation level.
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// `host:port/dbname` (never the password).
    pub fn address(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(postgres::config::Host::Tcp(h)) => h.clone(),
            #[cfg(unix)]
            Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
            None => "localhost".to_string(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        format!(
            "{host}:{port}/{}",
            self.config
                .get_dbname()
                .or(self.config.get_user())
                .unwrap_or("postgres")
        )
    }

    /// A new connection (an error names the server, never the password).
    pub fn connect(&self) -> Result<PgClient, BackendError> {
        self.config.connect(NoTls).map_err(|e| {
            BackendError::Database(format!(
                "cannot connect to PostgreSQL at {}: {}",
                self.address(),
                error_text(&e)
            ))
        })
    }
}

/// The text of a client error, with the server's message when there is one.
pub(crate) fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut s = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(inner) = source {
                s.push_str(": ");
                s.push_str(&inner.to_string());
                source = inner.source();
            }
            s
        }
    }
}

/// How a recorded transaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnEnd {
    /// COMMIT succeeded.
    Committed,
    /// The application rolled it back.
    RolledBack,
    /// The database aborted it: the error's text and SQLSTATE.
    AbortedByDatabase {
        /// The server's (or the client library's) message.
        reason: String,
        /// Whether the cause was the lost connection.
        connection_lost: bool,
    },
    /// The connection died during COMMIT and the outcome could not be learned.
    Unknown,
}

impl TxnEnd {
    /// Whether the database (not the application) ended it without committing.
    pub fn by_database(&self) -> bool {
        matches!(self, TxnEnd::AbortedByDatabase { .. } | TxnEnd::Unknown)
    }
}

/// One recorded read or write.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedOp {
    /// Whether it wrote.
    pub write: bool,
    /// The key's name (for the workloads' keys, [`KeyRef::name`]).
    pub key: String,
    /// For a read, the id of the transaction whose version it saw (0: the initial state or
    /// no row); `None` for writes.
    pub writer: Option<u64>,
    /// The value read or written, when known.
    pub value: Option<Value>,
}

/// One recorded transaction of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedTxn {
    /// Its id (see the module documentation), the value of the writer column it wrote.
    pub id: u64,
    /// Its events in program order (up to the failure, for an aborted one).
    pub ops: Vec<RecordedOp>,
    /// How it ended.
    pub end: TxnEnd,
    /// Position in the order transactions ended, over all sessions.
    pub ended: u64,
}

/// One recorded session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordedSession {
    /// Its external id.
    pub external_id: u64,
    /// Its transactions, in order.
    pub txns: Vec<RecordedTxn>,
}

/// Collects the transactions of every session of a recording; cheap to share between
/// threads ([`Arc`]). Turn it into a [`History`] with [`Recorder::history`].
#[derive(Debug, Default)]
pub struct Recorder {
    sessions: Mutex<Vec<RecordedSession>>,
    initial: Mutex<Vec<String>>,
    ended: AtomicU64,
}

impl Recorder {
    /// An empty recording.
    pub fn new() -> Arc<Recorder> {
        Arc::new(Recorder::default())
    }

    /// Declares keys the initial state holds (written before the recording started, by
    /// transaction 0).
    pub fn initial_keys(&self, keys: impl IntoIterator<Item = String>) {
        self.initial.lock().expect("recorder lock").extend(keys);
    }

    fn add_session(&self, external_id: u64) -> usize {
        let mut sessions = self.sessions.lock().expect("recorder lock");
        sessions.push(RecordedSession {
            external_id,
            txns: Vec::new(),
        });
        sessions.len() - 1
    }

    fn push(&self, session: usize, mut txn: RecordedTxn) {
        txn.ended = self.ended.fetch_add(1, Ordering::Relaxed);
        self.sessions.lock().expect("recorder lock")[session]
            .txns
            .push(txn);
    }

    /// A copy of the sessions recorded so far.
    pub fn sessions(&self) -> Vec<RecordedSession> {
        self.sessions.lock().expect("recorder lock").clone()
    }

    /// Writes the recording in the JSON-lines event format ([`crate::formats::events`]), with
    /// values: session by session, transaction ids as numbers (see the module documentation).
    /// A transaction whose outcome is unknown counts as committed exactly when another one
    /// read one of its writes.
    pub fn write_events(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let sessions = self.sessions();
        let read_by_others = read_by_others(&sessions);
        let mut events = EventWriter::new(std::io::BufWriter::new(out));
        for key in self.initial.lock().expect("recorder lock").iter() {
            events.initial_write(key, None)?;
        }
        for s in &sessions {
            let session = s.external_id;
            for t in &s.txns {
                events.begin(session, t.id)?;
                for op in &t.ops {
                    let value = op.value.as_ref().map(value_json);
                    if op.write {
                        events.write(session, t.id, &op.key, value.as_ref())?;
                    } else {
                        let writer = op.writer.map(|w| match w {
                            0 => WrittenBy::Initial,
                            w => WrittenBy::Txn(w),
                        });
                        events.read(session, t.id, &op.key, value.as_ref(), writer)?;
                    }
                }
                let committed = match t.end {
                    TxnEnd::Committed => true,
                    TxnEnd::Unknown => read_by_others.contains(&t.id),
                    _ => false,
                };
                events.end(session, t.id, committed)?;
            }
        }
        events.flush()
    }

    /// The recording as a history named `source`: one transaction per recorded transaction
    /// with events (aborted ones as aborted), each read resolved to the transaction its
    /// writer column named.
    pub fn history(&self, source: &str) -> Result<History, InputError> {
        let initial = self.initial.lock().expect("recorder lock").clone();
        build_history(source, &initial, &self.sessions()).map(|(h, _)| h)
    }
}

/// Writers some other transaction read: a transaction with an unknown outcome committed
/// exactly when one of them is its.
fn read_by_others(sessions: &[RecordedSession]) -> FxHashSet<u64> {
    let mut read = FxHashSet::default();
    for s in sessions {
        for t in &s.txns {
            for op in &t.ops {
                if let Some(w) = op.writer.filter(|&w| w != 0 && w != t.id) {
                    read.insert(w);
                }
            }
        }
    }
    read
}

/// A value as JSON.
fn value_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => (*i).into(),
        Value::Real(r) => (*r).into(),
        Value::Text(t) => t.as_ref().into(),
    }
}

/// Builds the history; also returns each recorded transaction's [`TxnId`] (by (session,
/// index)) when it has one.
fn build_history(
    source: &str,
    initial: &[String],
    sessions: &[RecordedSession],
) -> Result<(History, FxHashMap<u64, TxnId>), InputError> {
    let read_from_others = read_by_others(sessions);
    let mut b = HistoryBuilder::new(source);
    // One connection per session (a lost one is re-opened before the session's next
    // transaction, which still begins after the previous one ended).
    b.sessions_are_connections();
    let mut keys: FxHashMap<String, u32> = FxHashMap::default();
    let mut key = |b: &mut HistoryBuilder, name: &str| -> u32 {
        if let Some(&k) = keys.get(name) {
            return k;
        }
        let k = b.key(name);
        keys.insert(name.to_string(), k);
        k
    };
    for name in initial {
        let k = key(&mut b, name);
        b.write(BuilderTxn::INITIAL, k, None, 0);
    }
    let mut builder_txn: FxHashMap<u64, BuilderTxn> = FxHashMap::default();
    let mut ids: FxHashMap<u64, TxnId> = FxHashMap::default();
    let mut next_id: TxnId = 1;
    let mut begun = Vec::new();
    for s in sessions {
        let session = b.session(Some(s.external_id));
        for (n, t) in s.txns.iter().enumerate() {
            if t.ops.is_empty() {
                continue;
            }
            let bt = b.begin(session, Some(n as u64 + 1));
            let committed = match t.end {
                TxnEnd::Committed => true,
                TxnEnd::Unknown => read_from_others.contains(&t.id),
                _ => false,
            };
            if !committed {
                b.abort(bt);
            }
            builder_txn.insert(t.id, bt);
            ids.insert(t.id, next_id);
            next_id += 1;
            begun.push((bt, t));
        }
    }
    for (bt, t) in begun {
        for op in &t.ops {
            let k = key(&mut b, &op.key);
            if op.write {
                b.write(bt, k, None, 0);
            } else {
                let from = match op.writer {
                    Some(0) => ReadFrom::Initial,
                    Some(w) => builder_txn
                        .get(&w)
                        .map_or(ReadFrom::Unknown, |&w| ReadFrom::Txn(w)),
                    None => ReadFrom::Unknown,
                };
                b.read(bt, k, None, from, 0);
            }
        }
    }
    Ok((b.build()?, ids))
}

/// The prepared statements of the workloads' key–value tables.
struct KvStatements {
    get: Statement,
    put: Statement,
    contains: Statement,
    member_put: Statement,
    members: Statement,
}

impl KvStatements {
    fn prepare(conn: &mut PgClient, record: bool) -> Result<KvStatements, postgres::Error> {
        Ok(if record {
            KvStatements {
                get: conn.prepare("SELECT v, w FROM kv WHERE k = $1")?,
                put: conn.prepare(
                    "INSERT INTO kv (k, v, w) VALUES ($1, $2, $3) \
                     ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, w = EXCLUDED.w \
                     RETURNING txid_current()",
                )?,
                contains: conn.prepare("SELECT present, w FROM member WHERE s = $1 AND e = $2")?,
                member_put: conn.prepare(
                    "INSERT INTO member (s, e, present, w) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (s, e) DO UPDATE SET present = EXCLUDED.present, w = EXCLUDED.w \
                     RETURNING txid_current()",
                )?,
                members: conn.prepare("SELECT e FROM member WHERE s = $1")?,
            }
        } else {
            KvStatements {
                get: conn.prepare("SELECT v, 0::bigint FROM kv WHERE k = $1")?,
                put: conn.prepare(
                    "INSERT INTO kv (k, v, w) VALUES ($1, $2, 0) \
                     ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING 0::bigint",
                )?,
                contains: conn
                    .prepare("SELECT present, 0::bigint FROM member WHERE s = $1 AND e = $2")?,
                member_put: conn.prepare(
                    "INSERT INTO member (s, e, present, w) VALUES ($1, $2, $3, 0) \
                     ON CONFLICT (s, e) DO UPDATE SET present = EXCLUDED.present \
                     RETURNING 0::bigint",
                )?,
                members: conn.prepare("SELECT e FROM member WHERE s = $1")?,
            }
        })
    }
}

/// Encodes a value for the `v` column.
fn encode(v: &Value) -> String {
    match v {
        Value::Null => "n".to_string(),
        Value::Bool(b) => format!("b:{b}"),
        Value::Int(i) => format!("i:{i}"),
        Value::Real(r) => format!("r:{r:?}"),
        Value::Text(t) => format!("t:{t}"),
    }
}

/// Decodes the `v` column (an unknown tag reads as text).
fn decode(s: &str) -> Value {
    match s.split_at_checked(2) {
        Some(("i:", rest)) => rest.parse().map_or_else(|_| Value::text(s), Value::Int),
        Some(("r:", rest)) => rest.parse().map_or_else(|_| Value::text(s), Value::Real),
        Some(("b:", rest)) => Value::Bool(rest == "true"),
        Some(("t:", rest)) => Value::text(rest),
        _ if s == "n" => Value::Null,
        _ => Value::text(s),
    }
}

/// A session's connection settings.
#[derive(Clone)]
struct Connector {
    config: Config,
    setup: String,
    kv: bool,
    record: bool,
}

impl Connector {
    fn open(&self) -> Result<(PgClient, Option<KvStatements>), postgres::Error> {
        let mut conn = self.config.connect(NoTls)?;
        conn.batch_execute(&self.setup)?;
        // Detect deadlocks after 100 ms rather than the default second, where allowed (a
        // superuser setting): the workloads' hot rows deadlock often, and each detection
        // otherwise stalls both sessions for a second.
        let _ = conn.batch_execute("SET deadlock_timeout = '100ms'");
        let stmts = if self.kv {
            Some(KvStatements::prepare(&mut conn, self.record)?)
        } else {
            None
        };
        Ok((conn, stmts))
    }
}

/// One recorded session on its own connection. Run transactions with
/// [`PgSession::transaction`]; every one is recorded in the [`Recorder`].
pub struct PgSession {
    connector: Connector,
    conn: Option<(PgClient, Option<KvStatements>)>,
    recorder: Arc<Recorder>,
    index: usize,
    next: u64,
    row_counter: Arc<AtomicU64>,
    /// A transaction whose COMMIT lost the connection: (its record, its xid).
    pending: Option<(RecordedTxn, Option<i64>)>,
    /// Where its statements wait for their turn (a gated run).
    gate: Option<Arc<dyn StatementGate>>,
    /// The run's table key indexes, shared by its sessions (keyed scans; `None`: full scans).
    key_indexes: Option<SharedKeyIndexes>,
}

/// Per set, the primary keys of the rows inserted (by any session, committed or not): a
/// scan keeps those the database shows it ([`KeyIndex::candidates`]).
type SharedKeyIndexes = Arc<Mutex<FxHashMap<u64, KeyIndex>>>;

impl std::fmt::Debug for PgSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgSession")
            .field("index", &self.index)
            .field("next", &self.next)
            .finish()
    }
}

/// Why a session could not run a transaction.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SessionError(pub String);

impl PgSession {
    /// Opens a recorded session named `external_id` on the server `url` at `isolation`. Its
    /// transactions use the application's own SQL ([`PgTx::query`], [`PgTx::execute`]) and
    /// say what they read and wrote ([`PgTx::record_read`], [`PgTx::record_write`]).
    pub fn connect(
        url: &str,
        isolation: Isolation,
        recorder: &Arc<Recorder>,
        external_id: u64,
    ) -> Result<PgSession, SessionError> {
        let pg = Postgres::new(url, isolation).map_err(|e| SessionError(e.to_string()))?;
        let connector = Connector {
            config: pg.config.clone(),
            setup: format!(
                "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {}",
                isolation.sql()
            ),
            kv: false,
            record: true,
        };
        PgSession::open(connector, recorder, external_id, Arc::default())
    }

    fn open(
        connector: Connector,
        recorder: &Arc<Recorder>,
        external_id: u64,
        row_counter: Arc<AtomicU64>,
    ) -> Result<PgSession, SessionError> {
        let conn = connector
            .open()
            .map_err(|e| SessionError(format!("cannot connect: {}", error_text(&e))))?;
        Ok(PgSession {
            connector,
            conn: Some(conn),
            index: recorder.add_session(external_id),
            recorder: recorder.clone(),
            next: 0,
            row_counter,
            pending: None,
            gate: None,
            key_indexes: None,
        })
    }

    /// The id the next transaction will have.
    pub fn next_txn_id(&self) -> u64 {
        ((self.index as u64 + 1) << 32) | (self.next + 1)
    }

    /// Re-opens a lost connection (three tries, 300 ms apart) and settles a pending commit.
    fn reconnect(&mut self) -> Result<(), SessionError> {
        let mut last = String::new();
        for attempt in 0..3 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(300));
            }
            match self.connector.open() {
                Ok(c) => {
                    self.conn = Some(c);
                    self.settle_pending();
                    return Ok(());
                }
                Err(e) => last = error_text(&e),
            }
        }
        Err(SessionError(format!(
            "{SERVER_WENT_AWAY}: the connection of session {} was lost and \
             reconnecting failed three times ({last})",
            self.recorder.sessions.lock().expect("recorder lock")[self.index].external_id
        )))
    }

    /// Asks the server how a transaction whose COMMIT lost the connection ended.
    fn settle_pending(&mut self) {
        let Some((mut txn, xid)) = self.pending.take() else {
            return;
        };
        if let (Some(xid), Some((conn, _))) = (xid, self.conn.as_mut()) {
            if let Ok(row) = conn.query_one("SELECT txid_status($1)::text", &[&xid]) {
                let status: Option<String> = row.get(0);
                txn.end = match status.as_deref() {
                    Some("committed") => TxnEnd::Committed,
                    Some("aborted") => TxnEnd::AbortedByDatabase {
                        reason: "the connection was lost during COMMIT; the server aborted it"
                            .to_string(),
                        connection_lost: true,
                    },
                    _ => TxnEnd::Unknown,
                };
            }
        } else if xid.is_none() && self.conn.is_some() {
            // Read-only: nothing of it can be seen; count it as aborted.
            txn.end = TxnEnd::AbortedByDatabase {
                reason: "the connection was lost during COMMIT (read-only)".to_string(),
                connection_lost: true,
            };
        }
        self.recorder.push(self.index, txn);
    }

    /// Runs one transaction: BEGIN, `body` (which says whether to commit), then COMMIT or
    /// ROLLBACK; records it and says how it ended. An error only when the connection was lost
    /// and could not be re-opened (the server went away): nothing ran then.
    pub fn transaction(
        &mut self,
        body: impl FnOnce(&mut PgTx<'_>) -> Outcome,
    ) -> Result<TxnEnd, SessionError> {
        if self.conn.is_none() {
            self.reconnect()?;
        }
        self.next += 1;
        let id = ((self.index as u64 + 1) << 32) | self.next;
        let (conn, stmts) = self.conn.as_mut().expect("connected");
        let gate = self.gate.as_deref();
        let txn_index = self.next as usize - 1;
        let mut tx = PgTx {
            conn,
            stmts: stmts.as_ref(),
            id,
            ops: Vec::new(),
            failure: None,
            xid: None,
            row_counter: &self.row_counter,
            record: self.connector.record,
            gate,
            key_indexes: self.key_indexes.as_deref(),
            session: self.index,
            txn: txn_index,
            gated: 0,
        };
        if let Err(e) = tx.conn.batch_execute("BEGIN") {
            tx.fail(&e);
        }
        let outcome = if tx.failure.is_none() {
            body(&mut tx)
        } else {
            Outcome::Rollback
        };
        let PgTx {
            conn,
            ops,
            failure,
            xid,
            ..
        } = tx;
        // A gated run: the end waits for its turn, and rolls back a transaction the run
        // being reproduced aborted.
        let session = self.index;
        let mut forced = false;
        let outcome = match gate {
            Some(g) => {
                // A lost connection breaks the gated order: the gate hears it before the end
                // waits for a turn, so it is not taken for the code taking another path.
                if let Some((reason, lost_conn)) = &failure {
                    if *lost_conn || conn.is_closed() {
                        g.session_stopped(
                            session,
                            &format!("{CONNECTION_LOST} (session {}: {reason})", session + 1),
                        );
                    }
                }
                let _ = g.before(session, txn_index, GateStep::End);
                forced = outcome == Outcome::Commit
                    && failure.is_none()
                    && g.must_roll_back(session, txn_index);
                if forced {
                    Outcome::Rollback
                } else {
                    outcome
                }
            }
            None => outcome,
        };
        let end = match failure {
            Some((reason, connection_lost)) => {
                let _ = conn.batch_execute("ROLLBACK");
                TxnEnd::AbortedByDatabase {
                    reason,
                    connection_lost: connection_lost || conn.is_closed(),
                }
            }
            None => match outcome {
                Outcome::Rollback => match conn.batch_execute("ROLLBACK") {
                    Ok(()) if forced => TxnEnd::AbortedByDatabase {
                        reason: ROLLED_BACK_AS_REPRODUCED.to_string(),
                        connection_lost: false,
                    },
                    Ok(()) => TxnEnd::RolledBack,
                    Err(e) => TxnEnd::AbortedByDatabase {
                        reason: error_text(&e),
                        connection_lost: lost(&e, conn),
                    },
                },
                Outcome::Commit => match conn.batch_execute("COMMIT") {
                    Ok(()) => TxnEnd::Committed,
                    Err(e) if e.as_db_error().is_some() && !lost(&e, conn) => {
                        TxnEnd::AbortedByDatabase {
                            reason: error_text(&e),
                            connection_lost: false,
                        }
                    }
                    Err(_) => TxnEnd::Unknown,
                },
            },
        };
        if let Some(g) = gate {
            let failed = match &end {
                TxnEnd::AbortedByDatabase { reason, .. } => Some(reason.as_str()),
                TxnEnd::Unknown => Some("the connection died during COMMIT"),
                _ => None,
            };
            g.after(session, txn_index, GateStep::End, failed);
        }
        let closed = conn.is_closed()
            || matches!(
                &end,
                TxnEnd::AbortedByDatabase {
                    connection_lost: true,
                    ..
                }
            )
            || end == TxnEnd::Unknown;
        let txn = RecordedTxn {
            id,
            ops,
            end: end.clone(),
            ended: 0,
        };
        if closed {
            self.conn = None;
        }
        if end == TxnEnd::Unknown {
            self.pending = Some((txn, xid));
        } else {
            self.recorder.push(self.index, txn);
        }
        Ok(end)
    }
}

impl Drop for PgSession {
    fn drop(&mut self) {
        // A commit whose outcome nobody could learn stays unknown.
        if let Some((txn, _)) = self.pending.take() {
            self.recorder.push(self.index, txn);
        }
    }
}

/// Whether an error means the connection is gone.
fn lost(e: &postgres::Error, conn: &PgClient) -> bool {
    conn.is_closed()
        || e.is_closed()
        || matches!(
            e.code(),
            Some(c) if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
        )
}

/// A running transaction on PostgreSQL, recorded. As a [`Transaction`] it runs the
/// workloads' key–value operations; with [`PgTx::query`] / [`PgTx::execute`] and
/// [`PgTx::record_read`] / [`PgTx::record_write`] an application's own SQL.
pub struct PgTx<'a> {
    conn: &'a mut PgClient,
    stmts: Option<&'a KvStatements>,
    id: u64,
    ops: Vec<RecordedOp>,
    failure: Option<(String, bool)>,
    xid: Option<i64>,
    row_counter: &'a AtomicU64,
    record: bool,
    gate: Option<&'a dyn StatementGate>,
    key_indexes: Option<&'a Mutex<FxHashMap<u64, KeyIndex>>>,
    /// Its session (client index) and its index among the session's transactions.
    session: usize,
    txn: usize,
    /// Gated statements that recorded an operation so far.
    gated: u32,
}

impl std::fmt::Debug for PgTx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTx")
            .field("id", &self.id)
            .field("ops", &self.ops.len())
            .field("failure", &self.failure)
            .finish()
    }
}

impl PgTx<'_> {
    /// This transaction's id: store it in the writer column of every row it writes.
    pub fn id(&self) -> i64 {
        self.id as i64
    }

    /// Why the database failed the transaction, if it did (later statements are skipped).
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_ref().map(|(r, _)| r.as_str())
    }

    fn fail(&mut self, e: &postgres::Error) {
        if self.failure.is_none() {
            self.failure = Some((error_text(e), lost(e, self.conn)));
        }
    }

    /// Runs a query of the application's own; an error fails the transaction (it will be
    /// rolled back and recorded as aborted by the database).
    pub fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, TxFailed> {
        if let Some((reason, _)) = &self.failure {
            return Err(TxFailed(reason.clone()));
        }
        self.conn.query(sql, params).map_err(|e| {
            self.fail(&e);
            TxFailed(error_text(&e))
        })
    }

    /// Runs a statement of the application's own; returns the number of rows affected. An
    /// error fails the transaction.
    pub fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, TxFailed> {
        if let Some((reason, _)) = &self.failure {
            return Err(TxFailed(reason.clone()));
        }
        self.conn.execute(sql, params).map_err(|e| {
            self.fail(&e);
            TxFailed(error_text(&e))
        })
    }

    /// Records a read of `key` that saw the version written by transaction `writer` (the
    /// writer column's value; `None` or 0 when the row did not exist or holds the initial
    /// state).
    pub fn record_read(&mut self, key: &str, writer: Option<i64>, value: Option<Value>) {
        if self.record {
            self.ops.push(RecordedOp {
                write: false,
                key: key.to_string(),
                writer: Some(writer.unwrap_or(0) as u64),
                value,
            });
        }
    }

    /// Records a write of `key` (whose row's writer column now holds [`PgTx::id`]).
    pub fn record_write(&mut self, key: &str, value: Option<Value>) {
        if self.record {
            self.ops.push(RecordedOp {
                write: true,
                key: key.to_string(),
                writer: None,
                value,
            });
        }
    }

    fn stmts(&mut self) -> Option<&KvStatements> {
        if self.failure.is_some() {
            return None;
        }
        if self.stmts.is_none() {
            self.failure = Some((
                "this session has no key-value tables (PgSession::connect is for SQL of \
                 the application's own)"
                    .to_string(),
                false,
            ));
        }
        self.stmts
    }

    /// Waits for the turn of the statement recording the next operation (gated runs);
    /// `false` when the gate fails the transaction here instead (the statement must not run).
    fn turn(&mut self) -> bool {
        let Some(g) = self.gate else {
            return true;
        };
        if g.before(self.session, self.txn, GateStep::Op(self.gated)) {
            return true;
        }
        if self.failure.is_none() {
            self.failure = Some((ROLLED_BACK_AS_REPRODUCED.to_string(), false));
        }
        false
    }

    /// The statement recording the next operation ran (gated runs).
    fn turn_done(&mut self) {
        if let Some(g) = self.gate {
            let failed = self.failure.as_ref().map(|(r, _)| r.as_str());
            g.after(self.session, self.txn, GateStep::Op(self.gated), failed);
            self.gated += 1;
        }
    }

    fn read_row(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> Option<Row> {
        match self.conn.query_opt(stmt, params) {
            Ok(row) => row,
            Err(e) => {
                self.fail(&e);
                None
            }
        }
    }

    fn write_row(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> bool {
        match self.conn.query_one(stmt, params) {
            Ok(row) => {
                self.xid = row.try_get::<_, i64>(0).ok();
                true
            }
            Err(e) => {
                self.fail(&e);
                false
            }
        }
    }
}

/// A statement of the application's own failed, or was skipped because an earlier one had
/// failed the transaction: the server's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the transaction failed: {0}")]
pub struct TxFailed(pub String);

impl Transaction for PgTx<'_> {}

impl KvRead for PgTx<'_> {
    fn get(&mut self, key: u64) -> Option<Value> {
        let stmt = self.stmts()?.get.clone();
        if !self.turn() {
            return None;
        }
        let row = self.read_row(&stmt, &[&(key as i64)]);
        self.turn_done();
        if self.failure.is_some() {
            return None;
        }
        let (value, writer) = match &row {
            Some(r) => (Some(decode(r.get::<_, &str>(0))), r.get::<_, i64>(1)),
            None => (None, 0),
        };
        self.record_read(&KeyRef::Plain(key).name(), Some(writer), value.clone());
        value
    }

    fn set_contains(&mut self, set: u64, elem: u64) -> bool {
        let Some(stmts) = self.stmts() else {
            return false;
        };
        let stmt = stmts.contains.clone();
        if !self.turn() {
            return false;
        }
        let row = self.read_row(&stmt, &[&(set as i64), &(elem as i64)]);
        self.turn_done();
        if self.failure.is_some() {
            return false;
        }
        let (present, writer) = match &row {
            Some(r) => (r.get::<_, bool>(0), r.get::<_, i64>(1)),
            None => (false, 0),
        };
        self.record_read(
            &KeyRef::Member { set, elem }.name(),
            Some(writer),
            row.is_some().then_some(Value::Bool(present)),
        );
        present
    }

    fn set_ever_inserted_by_key(&mut self, set: u64, lookup: &KeyLookup<'_>) -> Option<Vec<u64>> {
        let indexes = self.key_indexes?;
        // The rows this transaction can see, then those of them whose key can match.
        let visible = self.set_ever_inserted(set);
        let indexes = indexes.lock().unwrap_or_else(|e| e.into_inner());
        let inserted = |e: u64| visible.binary_search(&e).is_ok();
        Some(match indexes.get(&set) {
            Some(index) => index.candidates(lookup, inserted),
            None => KeyIndex::default().candidates(lookup, inserted),
        })
    }

    fn set_ever_inserted(&mut self, set: u64) -> Vec<u64> {
        let Some(stmts) = self.stmts() else {
            return Vec::new();
        };
        let stmt = stmts.members.clone();
        // A scan records nothing: it runs in the turn of the next operation.
        if !self.turn() {
            return Vec::new();
        }
        match self.conn.query(&stmt, &[&(set as i64)]) {
            Ok(rows) => {
                let mut elems: Vec<u64> = rows.iter().map(|r| r.get::<_, i64>(0) as u64).collect();
                elems.sort_unstable();
                elems
            }
            Err(e) => {
                self.fail(&e);
                Vec::new()
            }
        }
    }
}

impl KvWrite for PgTx<'_> {
    fn put(&mut self, key: u64, value: Value) {
        let Some(stmts) = self.stmts() else {
            return;
        };
        let stmt = stmts.put.clone();
        let id = self.id as i64;
        let text = encode(&value);
        if !self.turn() {
            return;
        }
        let ok = if self.record {
            self.write_row(&stmt, &[&(key as i64), &text, &id])
        } else {
            self.write_row(&stmt, &[&(key as i64), &text])
        };
        self.turn_done();
        if ok {
            self.record_write(&KeyRef::Plain(key).name(), Some(value));
        }
    }

    fn set_insert(&mut self, set: u64, elem: u64) {
        self.set_insert_keyed(set, elem, None);
    }

    fn set_insert_keyed(&mut self, set: u64, elem: u64, key: Option<&[Value]>) {
        if let Some(indexes) = self.key_indexes {
            let mut indexes = indexes.lock().unwrap_or_else(|e| e.into_inner());
            indexes.entry(set).or_default().insert(elem, key);
        }
        self.member_put(set, elem, true);
    }

    fn set_delete(&mut self, set: u64, elem: u64) {
        self.member_put(set, elem, false);
    }

    fn next_row_counter(&mut self) -> u64 {
        self.row_counter.fetch_add(1, Ordering::Relaxed) + 1
    }
}

impl PgTx<'_> {
    fn member_put(&mut self, set: u64, elem: u64, present: bool) {
        let Some(stmts) = self.stmts() else {
            return;
        };
        let stmt = stmts.member_put.clone();
        let id = self.id as i64;
        if !self.turn() {
            return;
        }
        let ok = if self.record {
            self.write_row(&stmt, &[&(set as i64), &(elem as i64), &present, &id])
        } else {
            self.write_row(&stmt, &[&(set as i64), &(elem as i64), &present])
        };
        self.turn_done();
        if ok {
            self.record_write(
                &KeyRef::Member { set, elem }.name(),
                Some(Value::Bool(present)),
            );
        }
    }
}

/// One transaction a session ran, for the attempts list.
#[derive(Debug, Clone, Copy)]
struct Ended {
    /// Position in the order transactions ended.
    order: u64,
    client: usize,
    id: u64,
    committed: bool,
    by_db: bool,
}

/// Drops a run's schema (tables and data) when dropped: on success, error, panic or a stop
/// request; and, registered with [`crate::interrupt::register_cleanup`], before a forced exit
/// (a second Ctrl-C). A server that went away keeps it (nothing can reach it).
pub(crate) struct SchemaGuard {
    config: Config,
    schema: String,
    /// Dropped already ([`SchemaGuard::drop_now`]).
    done: bool,
    _cleanup: crate::interrupt::CleanupGuard,
}

impl SchemaGuard {
    pub(crate) fn new(config: &Config, schema: &str) -> SchemaGuard {
        let (c, s) = (config.clone(), schema.to_string());
        SchemaGuard {
            config: config.clone(),
            schema: schema.to_string(),
            done: false,
            _cleanup: crate::interrupt::register_cleanup(Box::new(move || {
                drop_schema(&c, &s);
            })),
        }
    }

    /// Drops the schema now: `None` when it is gone, else the sentence that says which schema
    /// is left on the server and the SQL that drops it (the server went away: nothing can
    /// reach it now).
    pub(crate) fn drop_now(mut self) -> Option<String> {
        self.done = true;
        (!drop_schema(&self.config, &self.schema)).then(|| schema_left_sentence(&self.schema))
    }
}

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        if !self.done {
            drop_schema(&self.config, &self.schema);
        }
    }
}

/// What a run that could not drop its schema `schema` says: which schema is left, and how to
/// drop it.
pub fn schema_left_sentence(schema: &str) -> String {
    format!(
        "its schema {schema} could not be dropped and is left on the server: once the server is \
         back, drop it with `DROP SCHEMA {schema} CASCADE;`"
    )
}

/// `DROP SCHEMA schema CASCADE` on a connection of its own (best effort): whether it is gone.
fn drop_schema(config: &Config, schema: &str) -> bool {
    config.connect(NoTls).is_ok_and(|mut conn| {
        conn.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .is_ok()
    })
}

/// A unique schema name for one run.
pub(crate) fn schema_name() -> String {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "isopredict_{}_{}_{}",
        std::process::id(),
        nanos,
        RUNS.fetch_add(1, Ordering::Relaxed)
    )
}

impl Postgres {
    fn server_version(conn: &mut PgClient) -> String {
        conn.query_one("SHOW server_version", &[])
            .ok()
            .and_then(|r| r.try_get::<_, String>(0).ok())
            .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
            .unwrap_or_else(|| "?".to_string())
    }

    /// Creates the run's schema and copies the initial state into it.
    fn set_up(&self, conn: &mut PgClient, schema: &str, store: &Store) -> Result<(), String> {
        let data = store.data();
        let mut plain_k = Vec::new();
        let mut plain_v = Vec::new();
        let mut set_s = Vec::new();
        let mut set_e = Vec::new();
        let mut set_p = Vec::new();
        for &k in data.loaded_keys() {
            let value = data.versions(k)[0].value.clone().unwrap_or(Value::Null);
            match data.key(k) {
                KeyRef::Plain(key) => {
                    plain_k.push(key as i64);
                    plain_v.push(encode(&value));
                }
                KeyRef::Member { set, elem } => {
                    set_s.push(set as i64);
                    set_e.push(elem as i64);
                    set_p.push(value == Value::Bool(true));
                }
            }
        }
        let sql = format!(
            "CREATE SCHEMA {schema};
             CREATE TABLE {schema}.kv (k bigint PRIMARY KEY, v text NOT NULL, w bigint NOT NULL);
             CREATE TABLE {schema}.member (s bigint NOT NULL, e bigint NOT NULL,
                 present boolean NOT NULL, w bigint NOT NULL, PRIMARY KEY (s, e));"
        );
        conn.batch_execute(&sql).map_err(|e| error_text(&e))?;
        conn.execute(
            &format!(
                "INSERT INTO {schema}.kv (k, v, w) SELECT k, v, 0 FROM unnest($1::bigint[], $2::text[]) AS t(k, v)"
            ),
            &[&plain_k, &plain_v],
        )
        .map_err(|e| error_text(&e))?;
        conn.execute(
            &format!(
                "INSERT INTO {schema}.member (s, e, present, w) SELECT s, e, p, 0 FROM unnest($1::bigint[], $2::bigint[], $3::boolean[]) AS t(s, e, p)"
            ),
            &[&set_s, &set_e, &set_p],
        )
        .map_err(|e| error_text(&e))?;
        conn.batch_execute(&format!("ANALYZE {schema}.kv; ANALYZE {schema}.member"))
            .map_err(|e| error_text(&e))?;
        Ok(())
    }

    /// The final state as an embedded store.
    fn final_state(&self, schema: &str) -> Result<Store, String> {
        let mut conn = self.connect().map_err(|e| e.to_string())?;
        let mut store = Store::new(ReadPolicy::Latest).map_err(|e| e.to_string())?;
        let kv = conn
            .query(&format!("SELECT k, v FROM {schema}.kv"), &[])
            .map_err(|e| error_text(&e))?;
        let members = conn
            .query(&format!("SELECT s, e, present FROM {schema}.member"), &[])
            .map_err(|e| error_text(&e))?;
        let mut loader = store.loader();
        for r in kv {
            loader.put(r.get::<_, i64>(0) as u64, decode(r.get::<_, &str>(1)));
        }
        for r in members {
            let (s, e) = (r.get::<_, i64>(0) as u64, r.get::<_, i64>(1) as u64);
            if r.get::<_, bool>(2) {
                loader.set_insert(s, e);
            } else {
                loader.set_delete(s, e);
            }
        }
        Ok(store)
    }
}

impl Backend for Postgres {
    fn describe(&self) -> String {
        format!("PostgreSQL at {}, {}", self.address(), self.isolation)
    }

    fn gated(&self, gate: Arc<dyn StatementGate>) -> Option<Box<dyn Backend>> {
        Some(Box::new(self.clone().with_gate(gate)))
    }

    fn execute(&self, job: Job<'_>) -> Result<Execution, BackendError> {
        // The initial state, through the embedded loader, then copied.
        let mut initial = Store::new(ReadPolicy::Latest)?;
        (job.load)(&mut initial.loader());
        let mut admin = self.connect()?;
        let version = Postgres::server_version(&mut admin);
        let schema = schema_name();
        let schema_guard = SchemaGuard::new(&self.config, &schema);
        if let Err(e) = self.set_up(&mut admin, &schema, &initial) {
            let left = schema_guard
                .drop_now()
                .map_or(String::new(), |l| format!("; {l}"));
            return Err(BackendError::Database(format!(
                "setting up the tables: {e}{left}"
            )));
        }
        let recorder = Recorder::new();
        if self.record {
            let data = initial.data();
            recorder.initial_keys(data.loaded_keys().iter().map(|&k| data.key(k).name()));
        }
        let connector = Connector {
            config: self.config.clone(),
            setup: format!(
                "SET search_path TO {schema}; SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {}{}",
                self.isolation.sql(),
                if self.gate.is_some() { "; SET lock_timeout = '2s'" } else { "" }
            ),
            kv: true,
            record: self.record,
        };
        let row_counter = Arc::new(AtomicU64::new(initial.row_counter()));
        // Keyed scans: the loaded rows' keys, then every insert's.
        let key_indexes: Option<SharedKeyIndexes> = (job.scan == ScanMode::Keyed)
            .then(|| Arc::new(Mutex::new(initial.data().key_indexes.clone())));
        // Sessions are registered in client order before any thread starts.
        let (mut sessions, failures) = self.open_sessions(
            &connector,
            &recorder,
            &job.sessions,
            &row_counter,
            &key_indexes,
        );
        let attempts: Mutex<Vec<Ended>> = Mutex::new(Vec::new());
        let failure_list = Mutex::new(failures);
        let start = Instant::now();
        let mut clients = job.clients;
        std::thread::scope(|scope| {
            for (i, (client, session)) in clients.iter_mut().zip(sessions.iter_mut()).enumerate() {
                let attempts = &attempts;
                let failure_list = &failure_list;
                scope.spawn(move || {
                    let Some(session) = session.as_mut() else {
                        return;
                    };
                    drive(i, &mut **client, session, attempts, failure_list);
                });
            }
        });
        drop(sessions);
        if crate::interrupt::requested() {
            // The schema goes with its guard.
            return Err(BackendError::Interrupted);
        }
        let elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
        let final_state = self.final_state(&schema);
        let schema_left = schema_guard.drop_now();
        let recorded = recorder.sessions();
        let initial_keys = recorder.initial.lock().expect("recorder lock").clone();
        let (history, ids) = build_history(&job.name, &initial_keys, &recorded)?;
        // Attempts in the order they ended; commit order = committed ones with events.
        let list = attempts.into_inner().expect("attempts lock");
        let ended = EndedAttempts::of(list, &recorded, &ids, &history);
        let failures = failure_list.into_inner().expect("failures lock");
        let (final_state, failure) = match final_state {
            Ok(s) => (s, (!failures.is_empty()).then(|| failures.join("; "))),
            Err(e) => {
                let mut all = failures;
                all.push(format!("reading the final state: {e}"));
                (Store::new(ReadPolicy::Latest)?, Some(all.join("; ")))
            }
        };
        // A run the server's going away cut short says which schema it left behind.
        let failure = match (failure, &schema_left) {
            (Some(f), Some(left)) => Some(format!("{f}; {left}")),
            (failure, _) => failure,
        };
        Ok(Execution {
            history,
            commit_order: ended.commit_order,
            attempts: ended.attempts,
            attempt_txns: ended.attempt_txns,
            final_state,
            divergences: Vec::new(),
            database: Some(DatabaseRun {
                database: format!("PostgreSQL {version} at {}", self.address()),
                isolation: self.isolation,
                attempts: ended.attempts_ended,
                aborted_by_database: ended.aborted,
                connection_losses: ended.connection_losses,
                unknown_outcome: ended.unknown,
                elapsed_ms,
                failure,
                schema_left,
            }),
        })
    }
}

impl Postgres {
    /// Opens one session per client, in client order; a session that cannot open is recorded
    /// empty and its failure listed.
    fn open_sessions(
        &self,
        connector: &Connector,
        recorder: &Arc<Recorder>,
        externals: &[u64],
        row_counter: &Arc<AtomicU64>,
        key_indexes: &Option<SharedKeyIndexes>,
    ) -> (Vec<Option<PgSession>>, Vec<String>) {
        let mut sessions = Vec::new();
        let mut failures = Vec::new();
        for &external in externals {
            match PgSession::open(connector.clone(), recorder, external, row_counter.clone()) {
                Ok(mut s) => {
                    s.gate = self.gate.clone();
                    s.key_indexes = key_indexes.clone();
                    sessions.push(Some(s))
                }
                Err(e) => {
                    failures.push(format!("session {external}: {e}"));
                    recorder.add_session(external);
                    sessions.push(None);
                }
            }
        }
        (sessions, failures)
    }
}

/// Runs client `i`'s transactions on its session until the client is done, a stop is
/// requested, the gate ends the session, or the session fails (its failure listed).
fn drive(
    i: usize,
    client: &mut (dyn Client + Send),
    session: &mut PgSession,
    attempts: &Mutex<Vec<Ended>>,
    failure_list: &Mutex<Vec<String>>,
) {
    // A stop request ends the run between calls ([`crate::interrupt`]).
    while !client.is_done()
        && !crate::interrupt::requested()
        && !session
            .gate
            .as_ref()
            .is_some_and(|g| g.session_done(i, session.next as usize))
    {
        let id = session.next_txn_id();
        match session.transaction(|tx| client.run(tx)) {
            Ok(end) => {
                let by_db = end.by_database();
                if by_db {
                    client.aborted_by_store();
                }
                let order = session.recorder.ended.load(Ordering::Relaxed);
                attempts.lock().expect("attempts lock").push(Ended {
                    order,
                    client: i,
                    id,
                    committed: end == TxnEnd::Committed,
                    by_db,
                });
            }
            Err(e) => {
                if let Some(gate) = &session.gate {
                    gate.session_stopped(i, &e.0);
                }
                failure_list.lock().expect("failures lock").push(e.0);
                break;
            }
        }
    }
}

/// The attempts of a run in the order they ended, with the commit order and the counts of
/// aborts the database made.
struct EndedAttempts {
    commit_order: Vec<TxnId>,
    attempts: Vec<Attempt>,
    attempt_txns: Vec<Option<TxnId>>,
    attempts_ended: usize,
    aborted: usize,
    connection_losses: usize,
    unknown: usize,
}

impl EndedAttempts {
    /// `list` in the order its transactions ended (as recorded); committed ones with events
    /// make the commit order.
    fn of(
        mut list: Vec<Ended>,
        recorded: &[RecordedSession],
        ids: &FxHashMap<u64, TxnId>,
        history: &History,
    ) -> EndedAttempts {
        let by_id: FxHashMap<u64, &RecordedTxn> = recorded
            .iter()
            .flat_map(|s| s.txns.iter())
            .map(|t| (t.id, t))
            .collect();
        for entry in &mut list {
            if let Some(t) = by_id.get(&entry.id) {
                entry.order = t.ended;
            }
        }
        list.sort_by_key(|e| e.order);
        let mut commit_order = Vec::new();
        let mut out_attempts = Vec::with_capacity(list.len());
        let mut attempt_txns = Vec::with_capacity(list.len());
        let (mut aborted, mut lost_conn, mut unknown) = (0, 0, 0);
        for &Ended {
            client,
            id,
            committed,
            by_db,
            ..
        } in &list
        {
            let txn = ids.get(&id).copied();
            let rec = by_id.get(&id);
            let committed = committed
                || rec.is_some_and(|t| t.end == TxnEnd::Unknown)
                    && txn.is_some_and(|t| history.txn(t).is_committed());
            if let Some(t) = rec {
                match &t.end {
                    TxnEnd::AbortedByDatabase {
                        connection_lost, ..
                    } => {
                        aborted += 1;
                        lost_conn += usize::from(*connection_lost);
                    }
                    TxnEnd::Unknown => unknown += 1,
                    _ => {}
                }
            }
            let outcome = match (committed, txn) {
                (true, Some(t)) => {
                    commit_order.push(t);
                    Some(Committed::At(commit_order.len() as u32))
                }
                (true, None) => Some(Committed::Empty),
                (false, _) => None,
            };
            out_attempts.push(Attempt {
                client,
                outcome,
                by_store: by_db && !committed,
            });
            attempt_txns.push(txn);
        }
        EndedAttempts {
            commit_order,
            attempts: out_attempts,
            attempt_txns,
            attempts_ended: list.len(),
            aborted,
            connection_losses: lost_conn,
            unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_in_well_and_badly_formed_store_strings() {
        for (given, shown) in [
            (
                "postgres://alice:s3cret@db:5432/x",
                "postgres://alice:***@db:5432/x",
            ),
            (
                "postgres://alice:s3:c@r@et@db/x",
                "postgres://alice:***@db/x",
            ),
            (
                "postgresql://alice:s3cret@db:notaport/x",
                "postgresql://alice:***@db:notaport/x",
            ),
            (
                "postgres://db/x?user=a&password=s3cret&sslmode=disable",
                "postgres://db/x?user=a&password=***&sslmode=disable",
            ),
            (
                "host=db user=a password = 's3 cret' dbname=x",
                "host=db user=a password = *** dbname=x",
            ),
            ("postgress://alice:s3cret@db", "postgress://alice:***@db"),
            ("postgres://alice@db/x", "postgres://alice@db/x"),
        ] {
            assert_eq!(redact_password(given), shown, "{given}");
        }
        let e = Postgres::new(
            "postgres://alice:s3cret@db:notaport/x",
            Isolation::ReadCommitted,
        )
        .unwrap_err()
        .to_string();
        assert!(!e.contains("s3cret"), "{e}");
        assert!(e.contains("alice:***@db"), "{e}");
    }

    #[test]
    fn values_round_trip_through_the_value_column() {
        for v in [
            Value::Null,
            Value::Bool(true),
            Value::Int(-5),
            Value::Real(0.1),
            Value::Real(2.0),
            Value::text("a:b"),
            Value::text(""),
        ] {
            assert_eq!(decode(&encode(&v)), v);
        }
    }

    #[test]
    fn unknown_outcome_commits_exactly_when_read() {
        let txn = |id, ops, end| RecordedTxn {
            id,
            ops,
            end,
            ended: 0,
        };
        let w = |k: &str| RecordedOp {
            write: true,
            key: k.into(),
            writer: None,
            value: None,
        };
        let r = |k: &str, from| RecordedOp {
            write: false,
            key: k.into(),
            writer: Some(from),
            value: None,
        };
        let a = (1u64 << 32) | 1;
        let b = (1u64 << 32) | 2;
        let c = (2u64 << 32) | 1;
        let sessions = vec![
            RecordedSession {
                external_id: 1,
                txns: vec![
                    txn(a, vec![w("x")], TxnEnd::Unknown),
                    txn(b, vec![w("y")], TxnEnd::Unknown),
                ],
            },
            RecordedSession {
                external_id: 2,
                txns: vec![txn(c, vec![r("x", a), r("y", 0)], TxnEnd::Committed)],
            },
        ];
        let (h, ids) = build_history("t", &[], &sessions).unwrap();
        assert!(h.txn(ids[&a]).is_committed());
        assert!(!h.txn(ids[&b]).is_committed());
        assert!(h.txn(ids[&c]).is_committed());
    }
}
