//! The server's upstream mode (used by `test --reproduce`; no command of its own): the
//! application itself on a real PostgreSQL, its statements put in
//! a reproduction schedule's order (issue 33 item 3; `reproduce/app_upstream.rs` builds the
//! schedule and judges the run; docs/testing-apps.md, "The application itself on PostgreSQL").
//!
//! Each client connection gets one connection to the upstream server, opened with the
//! client's startup parameters but the upstream's user and database, and with
//! `search_path`, `default_transaction_isolation` and `lock_timeout` set (`options`). The
//! client's messages pass through unchanged, a batch at a time (up to a Sync, a Flush or a
//! simple Query), and PostgreSQL's answers come back unchanged; before a batch goes up, the
//! statement it runs is matched to the connection's next turn of the [`TurnGate`] (its
//! recorded text, or the same text with other literals; COMMIT/END/ROLLBACK for an end) and
//! waits for it. Around the client's statements the gate sends its own, whose answers the
//! client never sees:
//!
//! - before a statement a probe must show: the probe, `xmin` of each row it reads (the
//!   transaction id of the version the snapshot sees);
//! - before a transaction's COMMIT: `pg_current_xact_id_if_assigned()`, its transaction id,
//!   so a probe's `xmin` names the application's transaction that wrote the version;
//! - an autocommit statement (sent outside a transaction block) is run inside `BEGIN` …
//!   `COMMIT` the gate sends, so its transaction id is known and its end is a turn of its own;
//!   the client gets the ReadyForQuery it expects (idle).
//!
//! Authentication: the upstream's `trust` or password (cleartext) with the URL's password;
//! other methods are refused with a clear error. Not handled: COPY, TLS to the upstream.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustc_hash::FxHashMap;

use super::gate::{TurnGate, TurnKind};

/// What the gate sends and learns (shared by the connections).
#[derive(Debug)]
pub struct UpstreamSetup {
    /// The upstream server: host (or Unix socket directory), port, user, database, password.
    pub host: String,
    /// Port.
    pub port: u16,
    /// User.
    pub user: String,
    /// Database.
    pub database: String,
    /// Password (for password authentication).
    pub password: Option<String>,
    /// The schema every connection works in (`search_path`).
    pub schema: String,
    /// `read committed`, `repeatable read` or `serializable`.
    pub isolation: String,
    /// `lock_timeout` of every connection (a lock wait the schedule did not foresee fails
    /// the statement instead of holding the run).
    pub lock_timeout: Duration,
    /// The gate.
    pub gate: Arc<TurnGate>,
    /// Per turn: the probe to send before it (its rows: key, xmin).
    pub probes: FxHashMap<usize, String>,
    /// Per turn: the probe to send after it, before the next turn (the state the schedule
    /// leaves, before the rest of the application runs).
    pub probes_after: FxHashMap<usize, String>,
}

/// What the run showed (filled as it goes).
#[derive(Debug, Default, Clone)]
pub struct Observed {
    /// Per turn probed: (key, the xmin its probe printed, `None`: no row).
    pub probes: FxHashMap<usize, Vec<(String, Option<String>)>>,
    /// Per turn probed after it: the same.
    pub probes_after: FxHashMap<usize, Vec<(String, Option<String>)>>,
    /// Transaction id → the application's transaction (`pgbench#2/1`).
    pub xids: FxHashMap<String, String>,
    /// Per turn that failed: PostgreSQL's error.
    pub errors: FxHashMap<usize, String>,
    /// Per turn of a transaction's end: whether it committed.
    pub committed: FxHashMap<usize, bool>,
    /// Problems of the gate itself (a probe that failed, a connection refused).
    pub problems: Vec<String>,
}

/// The server (module docs).
pub struct Upstream {
    setup: Arc<UpstreamSetup>,
    observed: Arc<Mutex<Observed>>,
    listener: TcpListener,
    connections: AtomicU64,
}

/// A protocol message: its type byte (0 for the startup message) and body.
struct Msg {
    tag: u8,
    body: Vec<u8>,
}

fn read_msg(r: &mut impl Read) -> io::Result<Msg> {
    let mut head = [0u8; 5];
    r.read_exact(&mut head)?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if !(4..=1 << 30).contains(&len) {
        return Err(io::Error::other(format!("a message of {len} bytes")));
    }
    let mut body = vec![0u8; len - 4];
    r.read_exact(&mut body)?;
    Ok(Msg { tag: head[0], body })
}

fn write_msg(w: &mut impl Write, tag: u8, body: &[u8]) -> io::Result<()> {
    let mut buf = Vec::with_capacity(body.len() + 5);
    if tag != 0 {
        buf.push(tag);
    }
    buf.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    buf.extend_from_slice(body);
    w.write_all(&buf)
}

/// The NUL-terminated string at the start of `b` and what follows it.
fn cstr(b: &[u8]) -> (String, &[u8]) {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let rest = if end < b.len() {
        &b[end + 1..]
    } else {
        &[][..]
    };
    (String::from_utf8_lossy(&b[..end]).into_owned(), rest)
}

/// An ErrorResponse's message and code (`ERROR 40001: could not …`).
fn error_text(body: &[u8]) -> String {
    let (mut severity, mut code, mut message) = (String::new(), String::new(), String::new());
    let mut rest = body;
    while let Some((&field, tail)) = rest.split_first() {
        if field == 0 {
            break;
        }
        let (value, tail) = cstr(tail);
        match field {
            b'S' => severity = value,
            b'C' => code = value,
            b'M' => message = value,
            _ => {}
        }
        rest = tail;
    }
    format!("{severity} {code}: {message}")
}

fn error_body(message: &str) -> Vec<u8> {
    let mut b = Vec::new();
    for (field, value) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', "08000"),
        (b'M', message),
    ] {
        b.push(field);
        b.extend_from_slice(value.as_bytes());
        b.push(0);
    }
    b.push(0);
    b
}

/// A DataRow's columns.
fn data_row(body: &[u8]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    if body.len() < 2 {
        return out;
    }
    let n = u16::from_be_bytes([body[0], body[1]]) as usize;
    let mut at = 2;
    for _ in 0..n {
        let Some(len) = body.get(at..at + 4) else {
            break;
        };
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        at += 4;
        if len < 0 {
            out.push(None);
            continue;
        }
        let end = (at + len as usize).min(body.len());
        out.push(Some(String::from_utf8_lossy(&body[at..end]).into_owned()));
        at = end;
    }
    out
}

/// The first keyword of `sql`, upper-cased.
fn keyword(sql: &str) -> String {
    sql.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase()
}

/// `sql` with its literals (numbers, quoted strings) as `?` and its spacing and final `;`
/// dropped: the same statement sent with other values.
pub fn shape(sql: &str) -> String {
    let mut out = String::new();
    let mut chars = sql.trim().trim_end_matches(';').chars().peekable();
    let mut prev_word = false;
    while let Some(c) = chars.next() {
        if c == '\'' {
            while let Some(d) = chars.next() {
                if d == '\'' {
                    if chars.peek() == Some(&'\'') {
                        chars.next();
                        continue;
                    }
                    break;
                }
            }
            out.push('?');
            prev_word = false;
        } else if c.is_ascii_digit() && !prev_word {
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == '.')
            {
                chars.next();
            }
            out.push('?');
        } else if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
            prev_word = false;
        } else {
            prev_word = c.is_alphanumeric() || c == '_' || c == '$';
            out.push(c.to_ascii_lowercase());
        }
    }
    out.trim().to_string()
}

/// What a query of the gate's own gave: its rows, its error, the status after.
type Injected = (Vec<Vec<Option<String>>>, Option<String>, u8);

/// A batch of a client's messages, up to one the server answers at once.
struct Batch {
    msgs: Vec<Msg>,
    /// The statement it runs (a simple query's text, or the first Execute's prepared text).
    sql: Option<String>,
    /// The first statement it prepares (Parse).
    parsed: Option<String>,
    /// Ends with Sync or is a simple Query: answered up to ReadyForQuery.
    synced: bool,
    /// Terminate.
    terminate: bool,
}

/// One client connection.
struct Conn {
    client: TcpStream,
    up: TcpStream,
    setup: Arc<UpstreamSetup>,
    observed: Arc<Mutex<Observed>>,
    /// The recorded session it replays.
    session: Option<String>,
    /// Prepared statements' texts; portals' statements.
    prepared: FxHashMap<String, String>,
    portals: FxHashMap<String, String>,
    /// The upstream's transaction status (`I`, `T`, `E`).
    status: u8,
    /// Parse messages held back until the next batch goes up (answered to the client).
    deferred: Vec<Msg>,
}

impl Upstream {
    /// Binds the server at `addr` (port 0: any free port).
    pub fn bind(addr: SocketAddr, setup: UpstreamSetup) -> io::Result<Upstream> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Upstream {
            setup: Arc::new(setup),
            observed: Arc::new(Mutex::new(Observed::default())),
            listener,
            connections: AtomicU64::new(0),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// What the run showed so far.
    pub fn observed(&self) -> Observed {
        self.observed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Serves connections (one thread each) until `stop` is set.
    pub fn run(&self, stop: &AtomicBool) -> io::Result<()> {
        std::thread::scope(|scope| {
            while !stop.load(Ordering::Relaxed) {
                match self.listener.accept() {
                    Ok((client, _)) => {
                        let number = self.connections.fetch_add(1, Ordering::Relaxed) + 1;
                        let (setup, observed) = (self.setup.clone(), self.observed.clone());
                        scope.spawn(move || {
                            if let Err(e) =
                                serve_connection(client, setup, observed.clone(), number)
                            {
                                if e.kind() != io::ErrorKind::UnexpectedEof {
                                    observed
                                        .lock()
                                        .unwrap_or_else(|p| p.into_inner())
                                        .problems
                                        .push(format!("connection {number}: {e}"));
                                }
                            }
                        });
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        // Polled: accept does not wake on `stop`.
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        })
    }
}

/// The client's startup parameters (answering SSL and GSS requests with "no").
fn read_startup(client: &mut TcpStream) -> io::Result<Vec<(String, String)>> {
    loop {
        let mut len = [0u8; 4];
        client.read_exact(&mut len)?;
        let len = u32::from_be_bytes(len) as usize;
        if !(8..=10_000).contains(&len) {
            return Err(io::Error::other("a malformed startup message"));
        }
        let mut body = vec![0u8; len - 4];
        client.read_exact(&mut body)?;
        let code = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
        match code {
            80877103 | 80877104 => client.write_all(b"N")?,
            196608 => {
                let mut params = Vec::new();
                let mut rest = &body[4..];
                while rest.first().is_some_and(|&c| c != 0) {
                    let (k, r) = cstr(rest);
                    let (v, r) = cstr(r);
                    params.push((k, v));
                    rest = r;
                }
                return Ok(params);
            }
            _ => return Err(io::Error::other(format!("startup code {code} not served"))),
        }
    }
}

fn connect_upstream(setup: &UpstreamSetup) -> io::Result<TcpStream> {
    if setup.host.starts_with('/') {
        return Err(io::Error::other(
            "the upstream must be reached by TCP (host:port), not a Unix socket",
        ));
    }
    let s = TcpStream::connect((setup.host.as_str(), setup.port))?;
    s.set_nodelay(true)?;
    Ok(s)
}

fn serve_connection(
    mut client: TcpStream,
    setup: Arc<UpstreamSetup>,
    observed: Arc<Mutex<Observed>>,
    number: u64,
) -> io::Result<()> {
    client.set_nonblocking(false)?;
    client.set_nodelay(true)?;
    let params = read_startup(&mut client)?;
    let app_name = params
        .iter()
        .find(|(k, _)| k == "application_name")
        .map(|(_, v)| v.clone());
    let mut up = match connect_upstream(&setup) {
        Ok(u) => u,
        Err(e) => {
            let why =
                format!("isopredict test --reproduce: cannot reach the PostgreSQL server: {e}");
            write_msg(&mut client, b'E', &error_body(&why))?;
            return Err(io::Error::other(why));
        }
    };
    let mut body = 196608u32.to_be_bytes().to_vec();
    let options = format!(
        "-c search_path={} -c default_transaction_isolation={} -c lock_timeout={}",
        setup.schema,
        setup.isolation.replace(' ', "\\ "),
        setup.lock_timeout.as_millis()
    );
    for (k, v) in params
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "user" | "database" | "options" | "replication"))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain([
            ("user", setup.user.as_str()),
            ("database", setup.database.as_str()),
            ("options", options.as_str()),
        ])
    {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    write_msg(&mut up, 0, &body)?;
    authenticate(&mut client, &mut up, &setup)?;
    let session = setup.gate.match_session(app_name.as_deref(), number);
    let mut conn = Conn {
        client,
        up,
        setup: setup.clone(),
        observed,
        session,
        prepared: FxHashMap::default(),
        portals: FxHashMap::default(),
        status: b'I',
        deferred: Vec::new(),
    };
    let result = conn.serve();
    if let Some(s) = &conn.session {
        setup.gate.closed(s);
    }
    result
}

/// Relays the upstream's authentication to the client up to ReadyForQuery, answering a
/// cleartext password request with the URL's password.
fn authenticate(
    client: &mut TcpStream,
    up: &mut TcpStream,
    setup: &UpstreamSetup,
) -> io::Result<()> {
    loop {
        let m = read_msg(up)?;
        match m.tag {
            b'R' => {
                let code = m
                    .body
                    .get(..4)
                    .map_or(u32::MAX, |c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
                match code {
                    0 => write_msg(client, b'R', &m.body)?,
                    3 => {
                        let mut p = setup.password.clone().unwrap_or_default().into_bytes();
                        p.push(0);
                        write_msg(up, b'p', &p)?;
                    }
                    _ => {
                        let why = format!(
                            "isopredict test --reproduce: the PostgreSQL server asks for authentication \
                             method {code}; only trust and password (cleartext) are served"
                        );
                        write_msg(client, b'E', &error_body(&why))?;
                        return Err(io::Error::other(why));
                    }
                }
            }
            b'E' => {
                write_msg(client, b'E', &m.body)?;
                return Err(io::Error::other(error_text(&m.body)));
            }
            b'Z' => {
                write_msg(client, b'Z', &m.body)?;
                return Ok(());
            }
            _ => write_msg(client, m.tag, &m.body)?,
        }
    }
}

/// What a relayed answer ended with.
struct Answer {
    /// The first error.
    error: Option<String>,
    /// The ReadyForQuery held back (when asked).
    held: Option<Msg>,
}

impl Conn {
    fn observed(&self) -> std::sync::MutexGuard<'_, Observed> {
        self.observed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads the client's next batch (`None`: the client went away).
    fn read_batch(&mut self) -> io::Result<Option<Batch>> {
        let mut batch = Batch {
            msgs: Vec::new(),
            sql: None,
            parsed: None,
            synced: false,
            terminate: false,
        };
        loop {
            let m = match read_msg(&mut self.client) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && batch.msgs.is_empty() => {
                    return Ok(None)
                }
                Err(e) => return Err(e),
            };
            let tag = m.tag;
            match tag {
                b'Q' => batch.sql = Some(cstr(&m.body).0),
                b'P' => {
                    let (name, rest) = cstr(&m.body);
                    let sql = cstr(rest).0;
                    batch.parsed.get_or_insert_with(|| sql.clone());
                    self.prepared.insert(name, sql);
                }
                b'B' => {
                    let (portal, rest) = cstr(&m.body);
                    let statement = cstr(rest).0;
                    let sql = self.prepared.get(&statement).cloned().unwrap_or_default();
                    self.portals.insert(portal, sql);
                }
                b'E' if batch.sql.is_none() => {
                    batch.sql = self.portals.get(&cstr(&m.body).0).cloned();
                }
                _ => {}
            }
            batch.msgs.push(m);
            match tag {
                b'Q' | b'S' => {
                    batch.synced = true;
                    return Ok(Some(batch));
                }
                b'H' => return Ok(Some(batch)),
                b'X' => {
                    batch.terminate = true;
                    return Ok(Some(batch));
                }
                _ => {}
            }
        }
    }

    fn serve(&mut self) -> io::Result<()> {
        while let Some(batch) = self.read_batch()? {
            if batch.terminate {
                for m in &batch.msgs {
                    write_msg(&mut self.up, m.tag, &m.body)?;
                }
                return Ok(());
            }
            self.run_batch(batch)?;
        }
        Ok(())
    }

    /// The turn `batch` takes: its session's next turn when the batch runs it.
    fn turn_of(&self, batch: &Batch) -> Option<usize> {
        self.turn_for(batch.sql.as_deref()?)
    }

    /// The session's next turn when `sql` is its statement (or its end).
    fn turn_for(&self, sql: &str) -> Option<usize> {
        let session = self.session.as_deref()?;
        let gate = &self.setup.gate;
        let next = gate.next_of(session)?;
        let word = keyword(sql);
        let ends = matches!(word.as_str(), "COMMIT" | "END" | "ROLLBACK" | "ABORT");
        match &gate.turn(next).kind {
            TurnKind::Statement(recorded) => {
                if recorded.trim().trim_end_matches(';') == sql.trim().trim_end_matches(';')
                    || shape(recorded) == shape(sql)
                {
                    return Some(next);
                }
                if ends && self.status == b'T' {
                    gate.diverge(format!(
                        "{session} ended its transaction where the recording has {} — the \
                         application took another path",
                        gate.turn(next).words()
                    ));
                }
                None
            }
            TurnKind::End => (ends && self.status != b'I').then_some(next),
        }
    }

    fn run_batch(&mut self, batch: Batch) -> io::Result<()> {
        let gate = self.setup.gate.clone();
        let Some(turn) = self.turn_of(&batch) else {
            // Preparing the next turn's statement inside a transaction would take the
            // snapshot at repeatable read and serializable, out of turn (pgbench 15 prepares
            // each command when it first runs it, and waits for the answer): the Parse is
            // answered here and goes up with the statement's Execute, in its turn.
            let only_parse = batch.synced
                && batch.msgs.iter().all(|m| matches!(m.tag, b'P' | b'S'))
                && self.status == b'T';
            let next = batch.parsed.as_deref().and_then(|sql| self.turn_for(sql));
            if only_parse && next.is_some() {
                for m in batch.msgs {
                    if m.tag == b'P' {
                        write_msg(&mut self.client, b'1', &[])?;
                        self.deferred.push(m);
                    }
                }
                return write_msg(&mut self.client, b'Z', &[self.status]);
            }
            return self.forward(&batch, false).map(|_| ());
        };
        let entered = gate.enter(turn);
        match gate.turn(turn).kind {
            TurnKind::End => {
                let open = self.status == b'T';
                if open {
                    self.note_xid(turn)?;
                }
                let answer = self.forward(&batch, false)?;
                let commit = matches!(
                    keyword(batch.sql.as_deref().unwrap_or("")).as_str(),
                    "COMMIT" | "END"
                );
                let committed = commit && open && answer.error.is_none();
                self.ended(turn, answer.error, committed);
                self.probe(turn, true)?;
                gate.leave(turn, entered);
            }
            TurnKind::Statement(_) => {
                let autocommit = self.status == b'I' && batch.synced;
                if autocommit {
                    self.inject("BEGIN")?;
                }
                self.probe(turn, false)?;
                let answer = self.forward(&batch, autocommit)?;
                if let Some(e) = &answer.error {
                    self.observed().errors.insert(turn, e.clone());
                }
                if !autocommit {
                    self.probe(turn, true)?;
                }
                gate.leave(turn, entered);
                if autocommit {
                    self.end_autocommit(turn, answer)?;
                }
            }
        }
        Ok(())
    }

    /// The end of an autocommit statement's transaction: its own turn (when the session's
    /// next is an end), the id noted, COMMIT (ROLLBACK after an error), then the client's
    /// ReadyForQuery, idle.
    fn end_autocommit(&mut self, statement: usize, answer: Answer) -> io::Result<()> {
        let gate = self.setup.gate.clone();
        let end = self
            .session
            .as_deref()
            .and_then(|s| gate.next_of(s))
            .filter(|&n| gate.turn(n).kind == TurnKind::End);
        let entered = end.map(|e| gate.enter(e));
        let failed = answer.error.is_some() || self.status == b'E';
        if !failed {
            self.note_xid(end.unwrap_or(statement))?;
        }
        let (_, error, status) = self.inject(if failed { "ROLLBACK" } else { "COMMIT" })?;
        if let (Some(e), Some(entered)) = (end, entered) {
            self.ended(e, error.or(answer.error), !failed);
            self.probe(e, true)?;
            gate.leave(e, entered);
        }
        self.status = status;
        let mut rfq = answer.held.unwrap_or(Msg {
            tag: b'Z',
            body: vec![b'I'],
        });
        rfq.body = vec![status];
        write_msg(&mut self.client, rfq.tag, &rfq.body)
    }

    fn ended(&mut self, turn: usize, error: Option<String>, committed: bool) {
        let mut o = self.observed();
        if let Some(e) = error {
            o.errors.insert(turn, e);
        }
        o.committed.insert(turn, committed);
    }

    /// Notes the running transaction's id as the transaction of `turn`.
    fn note_xid(&mut self, turn: usize) -> io::Result<()> {
        let (rows, error, _) = self
            .inject("SELECT (pg_current_xact_id_if_assigned()::text::bigint % 4294967296)::text")?;
        let txn = self.setup.gate.turn(turn).txn.clone();
        if let Some(e) = error {
            self.observed()
                .problems
                .push(format!("the transaction id of {txn}: {e}"));
        }
        if let Some(Some(xid)) = rows.first().and_then(|r| r.first()) {
            self.observed().xids.insert(xid.clone(), txn);
        }
        Ok(())
    }

    /// The probe before `turn` (after it: `after`), if it has one.
    fn probe(&mut self, turn: usize, after: bool) -> io::Result<()> {
        let probes = if after {
            &self.setup.probes_after
        } else {
            &self.setup.probes
        };
        let Some(sql) = probes.get(&turn).cloned() else {
            return Ok(());
        };
        let (rows, error, _) = self.inject(&sql)?;
        let mut o = self.observed();
        if let Some(e) = error {
            o.problems.push(format!(
                "the probe before {}: {e}",
                self.setup.gate.turn(turn).words()
            ));
        }
        let shown = rows
            .into_iter()
            .map(|r| {
                let mut r = r.into_iter();
                (r.next().flatten().unwrap_or_default(), r.next().flatten())
            })
            .collect();
        if after {
            o.probes_after.insert(turn, shown);
        } else {
            o.probes.insert(turn, shown);
        }
        Ok(())
    }

    /// Sends `sql` as a simple query of the gate's own: its rows, its error, the status after.
    fn inject(&mut self, sql: &str) -> io::Result<Injected> {
        let mut q = sql.as_bytes().to_vec();
        q.push(0);
        write_msg(&mut self.up, b'Q', &q)?;
        let (mut rows, mut error) = (Vec::new(), None);
        loop {
            let m = read_msg(&mut self.up)?;
            match m.tag {
                b'D' => rows.push(data_row(&m.body)),
                b'E' => error = error.or(Some(error_text(&m.body))),
                b'Z' => {
                    self.status = m.body.first().copied().unwrap_or(b'I');
                    return Ok((rows, error, self.status));
                }
                _ => {}
            }
        }
    }

    /// Sends `batch` up and relays the answer to the client, up to ReadyForQuery for a
    /// synced batch (held back when `hold`), else up to the answers its messages ask for.
    fn forward(&mut self, batch: &Batch, hold: bool) -> io::Result<Answer> {
        let mut out = Vec::new();
        // The held-back Parses first; their ParseComplete were answered already.
        let deferred = std::mem::take(&mut self.deferred);
        let mut answered = deferred.len();
        for m in deferred.iter().chain(&batch.msgs) {
            out.push(m.tag);
            out.extend_from_slice(&(m.body.len() as u32 + 4).to_be_bytes());
            out.extend_from_slice(&m.body);
        }
        self.up.write_all(&out)?;
        let mut expected: usize = if batch.synced {
            usize::MAX
        } else {
            batch
                .msgs
                .iter()
                .filter(|m| matches!(m.tag, b'P' | b'B' | b'C' | b'E' | b'D'))
                .count()
        };
        let mut answer = Answer {
            error: None,
            held: None,
        };
        let mut pending = Vec::new();
        while expected > 0 {
            let m = read_msg(&mut self.up)?;
            match m.tag {
                b'Z' => {
                    self.status = m.body.first().copied().unwrap_or(b'I');
                    if hold {
                        answer.held = Some(m);
                    } else {
                        pending.push(m);
                    }
                    break;
                }
                b'E' => {
                    answer.error = answer.error.or(Some(error_text(&m.body)));
                    if !batch.synced {
                        expected = 0;
                    }
                    pending.push(m);
                }
                b'1' if answered > 0 => answered -= 1,
                b'1' | b'2' | b'3' | b'C' | b'I' | b's' | b'T' | b'n' => {
                    expected = expected.saturating_sub(1);
                    pending.push(m);
                }
                _ => pending.push(m),
            }
            if pending.len() >= 64 {
                self.flush_to_client(&mut pending)?;
            }
        }
        self.flush_to_client(&mut pending)?;
        Ok(answer)
    }

    fn flush_to_client(&mut self, pending: &mut Vec<Msg>) -> io::Result<()> {
        let mut out = Vec::new();
        for m in pending.drain(..) {
            out.push(m.tag);
            out.extend_from_slice(&(m.body.len() as u32 + 4).to_be_bytes());
            out.extend_from_slice(&m.body);
        }
        self.client.write_all(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_sent_with_other_values_has_the_same_shape() {
        assert_eq!(
            shape("UPDATE acct SET bal = 110 WHERE id = 1;"),
            shape("update acct  SET bal = 120 WHERE id = 1")
        );
        assert_eq!(
            shape("SELECT * FROM t2 WHERE name = 'it''s'"),
            "select * from t2 where name = ?"
        );
        assert_ne!(
            shape("UPDATE acct SET bal = 1"),
            shape("UPDATE acct SET other = 1")
        );
    }

    #[test]
    fn an_error_response_is_read_as_its_code_and_message() {
        let mut b = Vec::new();
        for (f, v) in [
            (b'S', "ERROR"),
            (b'C', "40001"),
            (b'M', "could not serialize access"),
        ] {
            b.push(f);
            b.extend_from_slice(v.as_bytes());
            b.push(0);
        }
        b.push(0);
        assert_eq!(error_text(&b), "ERROR 40001: could not serialize access");
    }
}
