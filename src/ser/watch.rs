//! The driver of `isopredict watch`: reads TimeKiller transactions as JSON lines from
//! standard input or from TCP connections on a loopback address, feeds them to the online
//! checker ([`super::aion`]) as they arrive, prints each violation when it becomes final,
//! and ends with a summary (counts, throughput, memory high-water marks).
//!
//! Reader threads parse lines and hand each over as soon as it is complete (lines already
//! received together go together, at most 256); the checking thread wakes at least every
//! 50 ms so that EXT verdicts become final on time even when the input is idle, and stops
//! (finishing the verdicts and returning the summary) once a stop is requested (Ctrl-C,
//! SIGTERM: [`crate::interrupt`]). A malformed line, or one longer than [`MAX_LINE_BYTES`]
//! (never kept whole in memory), is reported with its source and line number, skipped and
//! counted; nothing else is lost. At most [`MAX_CONNECTIONS`] connections are served at once
//! (one more is told so and closed), a connection that sends nothing for the idle timeout is
//! closed (so clients that never finish a line cannot hold every slot), at most [`QUEUE`]
//! batches of parsed lines wait for the checker (a reader that is ahead waits, and TCP slows
//! its client down), and failed accepts are retried with growing pauses. Lines that are only `[` or `]`, blank lines and a trailing `,` are accepted, so a
//! TimeKiller file written one transaction per line can be piped in as it is.
//!
//! Watching SER also watches SI on the same stream, because serializability implies snapshot
//! isolation (the decision core's chain of levels, [`crate::verdict`]): Aion-SER alone checks
//! only that the transactions execute serially in commit-timestamp order, which says nothing
//! of the start timestamps (two writers of one key with overlapping intervals, a read that
//! does not see its snapshot). A stream that violates SI is therefore a SER violation too, and
//! once the stream is complete the verdict is the offline one (`check --level ser` with the
//! timestamps as evidence).

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::aion::{OnlineChecker, OnlineOptions, OnlineStats};
use super::chronos::TsLevel;
use super::ts_report::{AnomalyCount, TsCounts, TsRetraction, TsViolation};
use crate::formats::timekiller::{parse_transaction, Transaction};

/// Where transactions come from.
#[derive(Debug, Clone)]
pub enum WatchInput {
    /// Standard input, until its end.
    Stdin,
    /// TCP connections on a loopback address; stop after this many connections have closed
    /// (`None`: run until killed).
    Listen {
        /// The address (its IP must be a loopback address; port 0 picks a free port).
        addr: SocketAddr,
        /// Stop after this many connections.
        connections: Option<u32>,
        /// Close a connection that sends nothing for this long (`None`: never), so that
        /// clients that never finish a line cannot hold every slot.
        idle: Option<Duration>,
    },
}

/// Errors of [`watch`] before checking starts.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The address is not a loopback address.
    #[error("refusing to listen on {0}: only loopback addresses (127.0.0.1, ::1) are allowed")]
    NotLoopback(SocketAddr),
    /// Binding or reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The end of a watch run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WatchSummary {
    /// Violations by axiom (of the level watched: SER's own, commit-timestamp order, when
    /// watching SER).
    pub counts: TsCounts,
    /// When watching SER: the violations of SI on the same stream, by axiom (SER implies
    /// SI, so any of them makes the stream violate SER too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub si_counts: Option<TsCounts>,
    /// [`Self::counts`] by anomaly, each named as every view names it.
    pub anomalies: Vec<AnomalyCount>,
    /// [`Self::si_counts`] by anomaly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub si_anomalies: Option<Vec<AnomalyCount>>,
    /// Checker counters (transactions, late arrivals, memory high-water marks).
    pub stats: OnlineStats,
    /// EXT NEVER verdicts taken back because a writer of the value read arrived after them
    /// (at both levels when watching SER); they are not in the counts.
    pub retracted: u64,
    /// Malformed lines skipped.
    pub malformed: u64,
    /// Seconds from the first line to the end.
    pub seconds: f64,
    /// Transactions per second over that time.
    pub throughput: f64,
}

impl WatchSummary {
    /// Whether the stream violates the level watched: a violation of the level's own
    /// axioms or, when watching SER, of SI (which SER implies).
    pub fn violated(&self) -> bool {
        self.counts.total() > 0 || self.si_counts.as_ref().is_some_and(|c| c.total() > 0)
    }
}

/// Parsed lines of one connection: (line number, transaction or error message).
type Parsed = Vec<(u32, Result<Transaction, String>)>;

enum Message {
    Lines(u32, Parsed),
    /// A connection was refused (too many at once, or no thread for it): its number, why.
    Refused(u32, String),
    /// The listener cannot accept connections (e.g. out of file descriptors); it retries
    /// with growing pauses.
    AcceptFailed(String),
    /// A connection sent nothing for the idle timeout and was closed: its number, the timeout.
    Idle(u32, Duration),
    Closed,
}

/// The most messages (each at most [`BATCH`] parsed lines) waiting for the checker: a reader
/// that is ahead waits (and stops reading, so a fast client is slowed down by TCP) instead of
/// buffering without bound.
const QUEUE: usize = 64;

/// The stack of a connection's reader thread: it parses one line at a time.
const READER_STACK: usize = 256 * 1024;

/// The most lines handed to the checker at once (only lines already received are batched:
/// a line that arrives alone is checked alone, at once).
const BATCH: usize = 256;

/// The longest line accepted, in bytes: a longer one is reported as malformed and skipped
/// (without being kept in memory), and reading goes on after its end.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most connections served at once; one more is told so and closed.
pub const MAX_CONNECTIONS: usize = 64;

/// The longest pause between failed attempts to accept a connection.
const MAX_ACCEPT_PAUSE: Duration = Duration::from_secs(1);

/// What [`read_line_limited`] read.
#[derive(Debug, PartialEq, Eq)]
enum LineRead {
    /// A line (in the buffer, newline included if there was one).
    Line,
    /// A line longer than the limit, of this many bytes (newline excluded), not kept.
    TooLong(usize),
    /// The end of the input.
    End,
}

/// Reads one line into `line` (cleared first), keeping at most `limit` bytes of it: a longer
/// line is read to its end but not kept.
fn read_line_limited(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<LineRead> {
    line.clear();
    let mut length = 0usize;
    let mut any = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(match (any, length > limit) {
                (false, _) => LineRead::End,
                (true, true) => LineRead::TooLong(length),
                (true, false) => LineRead::Line,
            });
        }
        any = true;
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let content = if done { take - 1 } else { take };
        if length + content <= limit {
            line.extend_from_slice(&buf[..take]);
        } else {
            line.clear();
        }
        length += content;
        reader.consume(take);
        if done {
            return Ok(if length > limit {
                LineRead::TooLong(length)
            } else {
                LineRead::Line
            });
        }
    }
}

/// Reads, parses and hands over the lines of one input. Lines are sent as soon as no
/// complete line is waiting behind them, so each is checked on arrival.
fn read_lines(
    reader: impl std::io::Read,
    conn: u32,
    tx: mpsc::SyncSender<Message>,
    idle: Option<Duration>,
) {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut batch = Vec::new();
    let mut line_no = 0u32;
    let mut line = Vec::with_capacity(256);
    loop {
        match read_line_limited(&mut reader, &mut line, MAX_LINE_BYTES) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                // The read timeout: idle for too long. What was read is checked first.
                if !batch.is_empty() {
                    let _ = tx.send(Message::Lines(conn, std::mem::take(&mut batch)));
                }
                if let Some(idle) = idle {
                    let _ = tx.send(Message::Idle(conn, idle));
                }
                return;
            }
            Ok(LineRead::End) | Err(_) => break,
            Ok(LineRead::Line) => {
                line_no += 1;
                // Parsing happens here, on the reader's thread, beside the checking thread.
                if let Some(text) = payload(&line) {
                    batch.push((line_no, parse_transaction(text)));
                }
            }
            Ok(LineRead::TooLong(length)) => {
                line_no += 1;
                batch.push((
                    line_no,
                    Err(format!(
                        "the line is {length} bytes long, more than the {MAX_LINE_BYTES} \
                         accepted"
                    )),
                ));
            }
        }
        let waiting = reader.buffer().contains(&b'\n');
        if !batch.is_empty()
            && (batch.len() >= BATCH || !waiting)
            && tx
                .send(Message::Lines(conn, std::mem::take(&mut batch)))
                .is_err()
        {
            return;
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(Message::Lines(conn, batch));
    }
    let _ = tx.send(Message::Closed);
}

/// Counts a connection as served until dropped.
struct Live(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Accepts connections until `connections` have been taken (`None`: forever), serving at
/// most [`MAX_CONNECTIONS`] at once, each on a thread of its own; a connection beyond the
/// cap, or one no thread can be started for, is told why and closed (and counts as closed).
/// Failed accepts (out of file descriptors, say) are retried after a pause that doubles up
/// to [`MAX_ACCEPT_PAUSE`].
fn accept_loop(
    listener: TcpListener,
    connections: Option<u32>,
    idle: Option<Duration>,
    tx: mpsc::SyncSender<Message>,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let live = std::sync::Arc::new(AtomicUsize::new(0));
    let mut conn = 0u32;
    let mut pause = Duration::ZERO;
    while !connections.is_some_and(|n| conn >= n) {
        let mut stream = match listener.accept() {
            Ok((stream, _)) => {
                pause = Duration::ZERO;
                stream
            }
            Err(e) => {
                if pause.is_zero() && tx.send(Message::AcceptFailed(e.to_string())).is_err() {
                    return;
                }
                pause = (pause * 2).clamp(Duration::from_millis(10), MAX_ACCEPT_PAUSE);
                std::thread::sleep(pause);
                continue;
            }
        };
        conn += 1;
        let refuse = |stream: &mut std::net::TcpStream, why: String| {
            let _ = writeln!(stream, "isopredict watch: {why}; closing this connection");
            let _ = stream.shutdown(std::net::Shutdown::Both);
            tx.send(Message::Refused(conn, why)).is_ok()
        };
        if live.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            if !refuse(
                &mut stream,
                format!("{MAX_CONNECTIONS} connections are open, the most served at once"),
            ) {
                return;
            }
            continue;
        }
        live.fetch_add(1, Ordering::SeqCst);
        let guard = Live(live.clone());
        let reader_tx = tx.clone();
        if stream.set_read_timeout(idle).is_err() {
            drop(guard);
            if !refuse(&mut stream, "cannot set its idle timeout".to_string()) {
                return;
            }
            continue;
        }
        let (read_half, mut keep) = match stream.try_clone() {
            Ok(r) => (r, stream),
            Err(e) => {
                drop(guard);
                if !refuse(&mut stream, format!("cannot serve it: {e}")) {
                    return;
                }
                continue;
            }
        };
        let spawned = std::thread::Builder::new()
            .name(format!("watch connection {conn}"))
            .stack_size(READER_STACK)
            .spawn(move || {
                let _guard = guard;
                read_lines(read_half, conn, reader_tx, idle);
            });
        if let Err(e) = spawned {
            // The thread never ran: its guard went with the closure.
            if !refuse(&mut keep, format!("no thread to serve it: {e}")) {
                return;
            }
        }
    }
}

/// Caps glibc's malloc arenas: each thread that allocates may otherwise reserve an arena of
/// its own (64 MB of address space each), so a few dozen connections exhausted an address
/// space limit (`ulimit -v`) and aborted the watch instead of being served or refused.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before the reader
    // threads start.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// The transaction text of a line: `None` for lines to skip silently.
fn payload(line: &[u8]) -> Option<&[u8]> {
    let mut s = line;
    while let [rest @ .., b] = s {
        if b.is_ascii_whitespace() || *b == b',' {
            s = rest;
        } else {
            break;
        }
    }
    while let [b, rest @ ..] = s {
        if b.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    match s {
        [] | [b'['] | [b']'] => None,
        _ => Some(s),
    }
}

/// Runs the online checker over `input`, writing violations (text, or one JSON object per
/// line with `json`) to `out` and malformed-line reports to `err`. `on_listen` is called
/// with the bound address before any connection is accepted.
pub fn watch(
    input: WatchInput,
    options: OnlineOptions,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
    on_listen: &mut dyn FnMut(SocketAddr),
) -> Result<WatchSummary, WatchError> {
    let (tx, rx) = mpsc::sync_channel::<Message>(QUEUE);
    limit_malloc_arenas();
    let (expected_closes, source) = start_input(input, tx, on_listen)?;
    let mut w = Watching::new(options, json, source);
    loop {
        if crate::interrupt::requested() {
            // Ctrl-C or SIGTERM: the verdicts so far become final and the summary follows.
            break;
        }
        let closed = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Message::Lines(conn, lines)) => {
                w.lines(conn, lines, out, err)?;
                false
            }
            Ok(Message::Idle(conn, idle)) => {
                let _ = writeln!(
                    err,
                    "{} connection {conn}: closed: nothing received for {} s (the idle timeout)",
                    w.source,
                    idle.as_secs_f64()
                );
                true
            }
            Ok(Message::Refused(conn, why)) => {
                let _ = writeln!(err, "{} connection {conn}: refused: {why}", w.source);
                true
            }
            Ok(Message::AcceptFailed(why)) => {
                let _ = writeln!(
                    err,
                    "{}: cannot accept connections ({why}); retrying with pauses of up \
                     to {} s",
                    w.source,
                    MAX_ACCEPT_PAUSE.as_secs()
                );
                false
            }
            Ok(Message::Closed) => true,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                w.tick(out)?;
                false
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if closed {
            w.closed += 1;
            if expected_closes.is_some_and(|n| w.closed >= n) {
                break;
            }
        }
    }
    w.finish(out)
}

/// Starts reading `input` on its own thread (standard input, or a listener accepting
/// connections); returns how many closed connections end the watch and the source's name.
fn start_input(
    input: WatchInput,
    tx: mpsc::SyncSender<Message>,
    on_listen: &mut dyn FnMut(SocketAddr),
) -> Result<(Option<u32>, String), WatchError> {
    Ok(match input {
        WatchInput::Stdin => {
            std::thread::spawn(move || read_lines(std::io::stdin(), 0, tx, None));
            (Some(1), "<stdin>".to_string())
        }
        WatchInput::Listen {
            addr,
            connections,
            idle,
        } => {
            if !addr.ip().is_loopback() {
                return Err(WatchError::NotLoopback(addr));
            }
            let listener = TcpListener::bind(addr)?;
            let bound = listener.local_addr()?;
            on_listen(bound);
            std::thread::spawn(move || accept_loop(listener, connections, idle, tx));
            (connections, bound.to_string())
        }
    })
}

/// The checkers of one watch and what it counts.
struct Watching {
    /// SER implies SI: when watching SER, SI is watched beside it on the same stream.
    si_checker: Option<OnlineChecker>,
    checker: OnlineChecker,
    json: bool,
    source: String,
    epoch: Instant,
    first: Option<Instant>,
    closed: u32,
    malformed: u64,
}

impl Watching {
    fn new(options: OnlineOptions, json: bool, source: String) -> Watching {
        let si_checker = (options.level == TsLevel::Serializable).then(|| {
            OnlineChecker::new(OnlineOptions {
                level: TsLevel::Snapshot,
                ..options.clone()
            })
        });
        Watching {
            si_checker,
            checker: OnlineChecker::new(options),
            json,
            source,
            epoch: Instant::now(),
            first: None,
            closed: 0,
            malformed: 0,
        }
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// The checker's violations.
    fn emit(&self, v: &[TsViolation], out: &mut dyn Write) -> std::io::Result<()> {
        emit_violations(v, None, self.json, out)
    }

    /// The SI checker's violations, marked as such (`si (ser implies si): …`, or a JSON
    /// object with `"level": "si"`).
    fn emit_si(&self, v: &[TsViolation], out: &mut dyn Write) -> std::io::Result<()> {
        emit_violations(v, Some("si"), self.json, out)
    }

    /// A batch of parsed lines from connection `conn`: each transaction to the checkers, each
    /// malformed line reported to `err`; then the clocks move on.
    fn lines(
        &mut self,
        conn: u32,
        lines: Parsed,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        let json = self.json;
        self.first.get_or_insert_with(Instant::now);
        let now = self.now_ms();
        for (line_no, parsed) in lines {
            match parsed {
                Ok(txn) => {
                    if let Some(si) = self.si_checker.as_mut() {
                        let found = si.arrive(txn.clone(), line_no, now);
                        emit_retractions(&si.take_retractions(), Some("si"), json, out)?;
                        emit_violations(&found, Some("si"), json, out)?;
                    }
                    let found = self.checker.arrive(txn, line_no, now);
                    emit_retractions(&self.checker.take_retractions(), None, json, out)?;
                    self.emit(&found, out)?;
                }
                Err(msg) => {
                    self.malformed += 1;
                    let place = if conn == 0 {
                        self.source.clone()
                    } else {
                        format!("{} connection {conn}", self.source)
                    };
                    // A report that cannot be written is lost, not the watch.
                    let _ = writeln!(err, "{place}:{line_no}: malformed line skipped: {msg}");
                }
            }
        }
        self.tick(out)
    }

    /// Time passes: verdicts whose wait is over are written.
    fn tick(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        let now = self.now_ms();
        if let Some(si) = self.si_checker.as_mut() {
            let found = si.tick(now);
            emit_violations(&found, Some("si"), self.json, out)?;
        }
        let found = self.checker.tick(now);
        self.emit(&found, out)
    }

    /// The end: every verdict final, and the summary.
    fn finish(mut self, out: &mut dyn Write) -> Result<WatchSummary, WatchError> {
        if let Some(si) = self.si_checker.as_mut() {
            let found = si.finish();
            self.emit_si(&found, out)?;
        }
        let found = self.checker.finish();
        self.emit(&found, out)?;
        let seconds = self.first.map_or(0.0, |f| f.elapsed().as_secs_f64());
        let stats = self.checker.stats().clone();
        let retracted = stats.retracted
            + self
                .si_checker
                .as_ref()
                .map_or(0, |si| si.stats().retracted);
        Ok(WatchSummary {
            retracted,
            counts: self.checker.counts().clone(),
            anomalies: self.checker.counts().anomaly_counts(),
            si_anomalies: self
                .si_checker
                .as_ref()
                .map(|si| si.counts().anomaly_counts()),
            si_counts: self.si_checker.map(|si| si.counts().clone()),
            throughput: if seconds > 0.0 {
                stats.transactions as f64 / seconds
            } else {
                0.0
            },
            stats,
            malformed: self.malformed,
            seconds,
        })
    }
}

/// Writes retractions (verdicts a late writer took back), one per line, as [`emit_violations`]
/// writes violations.
fn emit_retractions(
    retractions: &[TsRetraction],
    level: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for r in retractions {
        if json {
            let mut value = serde_json::to_value(r)?;
            if let (Some(level), serde_json::Value::Object(fields)) = (level, &mut value) {
                fields.insert("level".to_string(), level.into());
            }
            serde_json::to_writer(&mut *out, &value)?;
            writeln!(out)?;
        } else {
            match level {
                None => writeln!(out, "{r}")?,
                Some(level) => writeln!(out, "{level} (ser implies {level}): {r}")?,
            }
        }
    }
    if !retractions.is_empty() {
        out.flush()?;
    }
    Ok(())
}

/// Writes violations, one per line, each named by its row of the anomaly table as `check`
/// names it: as text (`read outside the snapshot (Chronos EXT): EXT AFTER: …`, after
/// `LEVEL (ser implies LEVEL): ` when `level` names the weaker level they belong to) or as JSON
/// objects (with `"anomaly"` and `"anomaly_names"` as in `check --json`, and `"level": LEVEL`).
fn emit_violations(
    violations: &[TsViolation],
    level: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for v in violations {
        if json {
            let mut value = serde_json::to_value(v)?;
            if let serde_json::Value::Object(fields) = &mut value {
                let id = v.anomaly();
                fields.insert("anomaly".to_string(), id.name().into());
                fields.insert(
                    "anomaly_names".to_string(),
                    serde_json::to_value(id.row().names())?,
                );
                if let Some(level) = level {
                    fields.insert("level".to_string(), level.into());
                }
            }
            serde_json::to_writer(&mut *out, &value)?;
            writeln!(out)?;
        } else {
            match level {
                None => writeln!(out, "{}", v.named_line())?,
                Some(level) => writeln!(out, "{level} (ser implies {level}): {}", v.named_line())?,
            }
        }
    }
    if !violations.is_empty() {
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 item 27: a reader ahead of the checker waits instead of buffering without
    /// bound. An endless input whose lines nobody takes: the reader stops after the queue,
    /// one batch and its read buffer (it used to read on until memory ran out).
    #[test]
    fn a_reader_ahead_of_the_checker_waits() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        const BUFFER_LINES: usize = (1 << 16) / 2;
        let bound = (QUEUE + 1) * BATCH + BUFFER_LINES + 1;
        struct Endless {
            produced: Arc<AtomicUsize>,
            bound: usize,
            over: mpsc::Sender<()>,
        }
        impl std::io::Read for Endless {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                // Two-byte lines, whole ones only.
                let lines = out.len() / 2;
                for pair in out[..lines * 2].chunks_mut(2) {
                    pair.copy_from_slice(b"x\n");
                }
                let n = self.produced.fetch_add(lines, Ordering::SeqCst) + lines;
                if n > self.bound {
                    let _ = self.over.send(());
                }
                Ok(lines * 2)
            }
        }
        let produced = Arc::new(AtomicUsize::new(0));
        let (over_tx, over_rx) = mpsc::channel();
        let (tx, rx) = mpsc::sync_channel::<Message>(QUEUE);
        let input = Endless {
            produced: produced.clone(),
            bound,
            over: over_tx,
        };
        std::thread::spawn(move || read_lines(input, 1, tx, None));
        // Nobody takes the lines: the reader must not get past the bound. (A hang guard of
        // 3 s: the unbounded reader passed it within milliseconds.)
        assert!(
            over_rx.recv_timeout(Duration::from_secs(3)).is_err(),
            "the reader read {} lines ahead of the checker",
            produced.load(Ordering::SeqCst)
        );
        // Taking lines lets it go on.
        // At most `bound` lines were read so far, each batch holds one or more, so taking more
        // than `bound` batches needs a new read (no timing: each `recv` waits for the reader).
        let before = produced.load(Ordering::SeqCst);
        let mut taken = 0;
        while produced.load(Ordering::SeqCst) <= before {
            assert!(
                taken <= bound,
                "{taken} batches taken and the reader read nothing more"
            );
            assert!(matches!(rx.recv().unwrap(), Message::Lines(1, _)));
            taken += 1;
        }
    }

    /// Two writers of one key with overlapping intervals: serial in commit-timestamp order,
    /// not snapshot isolation (NOCONFLICT).
    const OVERLAPPING_WRITERS: &str = concat!(
        r#"{"tid": 1, "sid": 1, "sts": {"p": 1, "l": 0}, "cts": {"p": 3, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 1}]}"#,
        "\n",
        r#"{"tid": 2, "sid": 2, "sts": {"p": 2, "l": 0}, "cts": {"p": 4, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 2}]}"#,
        "\n"
    );

    /// Watches `text`, sent over one loopback connection, at `level`: the summary and what
    /// was printed.
    fn watch_text(level: TsLevel, text: &'static str, json: bool) -> (WatchSummary, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut client = None;
        let summary = watch(
            WatchInput::Listen {
                addr: "127.0.0.1:0".parse().unwrap(),
                connections: Some(1),
                idle: None,
            },
            OnlineOptions {
                level,
                timeout_ms: 5000,
                initial: Some(0),
            },
            json,
            &mut out,
            &mut err,
            &mut |addr| {
                client = Some(std::thread::spawn(move || {
                    let mut stream = std::net::TcpStream::connect(addr).unwrap();
                    stream.write_all(text.as_bytes()).unwrap();
                }));
            },
        )
        .unwrap();
        client.unwrap().join().unwrap();
        (summary, String::from_utf8(out).unwrap())
    }

    #[test]
    fn watching_ser_also_watches_si_which_ser_implies() {
        let (si, _) = watch_text(TsLevel::Snapshot, OVERLAPPING_WRITERS, false);
        assert!(si.violated() && si.si_counts.is_none());
        assert_eq!(si.counts.no_conflict, 1);
        let (ser, printed) = watch_text(TsLevel::Serializable, OVERLAPPING_WRITERS, false);
        assert_eq!(
            ser.counts.total(),
            0,
            "commit-timestamp order alone is serial"
        );
        assert_eq!(ser.si_counts.as_ref().unwrap().no_conflict, 1);
        assert!(ser.violated());
        assert!(
            printed.starts_with(
                "si (ser implies si): concurrent write conflict (Chronos NOCONFLICT): NOCONFLICT: T1"
            ),
            "{printed}"
        );
        let (_, printed) = watch_text(TsLevel::Serializable, OVERLAPPING_WRITERS, true);
        let v: serde_json::Value = serde_json::from_str(printed.lines().next().unwrap()).unwrap();
        assert_eq!(v["level"], "si");
        assert_eq!(v["axiom"], "NOCONFLICT");
        assert_eq!(v["anomaly"], "concurrent write conflict");
        assert_eq!(v["anomaly_names"]["chronos"], "NOCONFLICT");
        // One writer alone: nothing at either level.
        let one = OVERLAPPING_WRITERS.lines().next().unwrap();
        let one: &'static str = Box::leak(format!("{one}\n").into_boxed_str());
        let (ser, printed) = watch_text(TsLevel::Serializable, one, false);
        assert!(!ser.violated(), "{printed}");
        assert_eq!(ser.si_counts.unwrap().total(), 0);
    }

    #[test]
    fn long_lines_are_measured_not_kept_and_reading_goes_on() {
        let mut input = vec![b'a'; 100];
        input.extend_from_slice(b"\nshort\n");
        input.extend_from_slice(&[b'b'; 30]);
        // A small buffer, so lines span several fills.
        let mut reader = BufReader::with_capacity(8, &input[..]);
        let mut line = Vec::new();
        assert_eq!(
            read_line_limited(&mut reader, &mut line, 10).unwrap(),
            LineRead::TooLong(100)
        );
        assert!(line.len() <= 10);
        assert_eq!(
            read_line_limited(&mut reader, &mut line, 10).unwrap(),
            LineRead::Line
        );
        assert_eq!(line, b"short\n");
        // The last line has no newline: still reported, as too long.
        assert_eq!(
            read_line_limited(&mut reader, &mut line, 10).unwrap(),
            LineRead::TooLong(30)
        );
        assert_eq!(
            read_line_limited(&mut reader, &mut line, 10).unwrap(),
            LineRead::End
        );
    }
}
