//! The driver of `isopredict watch`: reads TimeKiller transactions as JSON lines from
//! standard input or from TCP connections on a loopback address, feeds them to the online
//! checker ([`super::aion`]) as they arrive, prints each violation when it becomes final,
//! and ends with a summary (counts, throughput, memory high-water marks).
//!
//! Reader threads parse lines and hand transactions over in batches; the checking thread wakes at least every
//! 50 ms so that EXT verdicts become final on time even when the input is idle. A malformed
//! line is reported with its source and line number, skipped and counted; nothing else is
//! lost. Lines that are only `[` or `]`, blank lines and a trailing `,` are accepted, so a
//! TimeKiller file written one transaction per line can be piped in as it is.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::aion::{OnlineChecker, OnlineOptions, OnlineStats};
use super::ts_report::{TsCounts, TsViolation};
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
    /// Violations by axiom.
    pub counts: TsCounts,
    /// Checker counters (transactions, late arrivals, memory high-water marks).
    pub stats: OnlineStats,
    /// Malformed lines skipped.
    pub malformed: u64,
    /// Seconds from the first line to the end.
    pub seconds: f64,
    /// Transactions per second over that time.
    pub throughput: f64,
}

/// Parsed lines of one connection: (line number, transaction or error message).
type Parsed = Vec<(u32, Result<Transaction, String>)>;

enum Message {
    Lines(u32, Parsed),
    Closed,
}

const BATCH: usize = 256;

fn read_lines(reader: impl BufRead, conn: u32, tx: mpsc::Sender<Message>) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut line_no = 0u32;
    let mut reader = reader;
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                line_no += 1;
                // Parsing happens here, on the reader's thread, beside the checking thread.
                let Some(text) = payload(&line) else { continue };
                batch.push((line_no, parse_transaction(text)));
                if batch.len() == BATCH {
                    if tx
                        .send(Message::Lines(conn, std::mem::take(&mut batch)))
                        .is_err()
                    {
                        return;
                    }
                    batch.reserve(BATCH);
                }
            }
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(Message::Lines(conn, batch));
    }
    let _ = tx.send(Message::Closed);
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
    let (tx, rx) = mpsc::channel::<Message>();
    let (expected_closes, source) = match input {
        WatchInput::Stdin => {
            std::thread::spawn(move || read_lines(std::io::stdin().lock(), 0, tx));
            (Some(1), "<stdin>".to_string())
        }
        WatchInput::Listen { addr, connections } => {
            if !addr.ip().is_loopback() {
                return Err(WatchError::NotLoopback(addr));
            }
            let listener = TcpListener::bind(addr)?;
            let bound = listener.local_addr()?;
            on_listen(bound);
            std::thread::spawn(move || {
                let mut conn = 0u32;
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    conn += 1;
                    let tx = tx.clone();
                    std::thread::spawn(move || read_lines(BufReader::new(stream), conn, tx));
                    if connections.is_some_and(|n| conn >= n) {
                        break;
                    }
                }
            });
            (connections, bound.to_string())
        }
    };
    let mut checker = OnlineChecker::new(options);
    let epoch = Instant::now();
    let mut first: Option<Instant> = None;
    let mut closed = 0u32;
    let mut malformed = 0u64;
    let now_ms = |epoch: Instant| epoch.elapsed().as_millis() as u64;
    let emit = |v: &[TsViolation], out: &mut dyn Write| -> std::io::Result<()> {
        for v in v {
            if json {
                serde_json::to_writer(&mut *out, v)?;
                writeln!(out)?;
            } else {
                writeln!(out, "{v}")?;
            }
        }
        if !v.is_empty() {
            out.flush()?;
        }
        Ok(())
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Message::Lines(conn, lines)) => {
                first.get_or_insert_with(Instant::now);
                let now = now_ms(epoch);
                for (line_no, parsed) in lines {
                    match parsed {
                        Ok(txn) => {
                            let found = checker.arrive(txn, line_no, now);
                            emit(&found, out)?;
                        }
                        Err(msg) => {
                            malformed += 1;
                            let place = if conn == 0 {
                                source.clone()
                            } else {
                                format!("{source} connection {conn}")
                            };
                            writeln!(err, "{place}:{line_no}: malformed line skipped: {msg}")?;
                        }
                    }
                }
                let found = checker.tick(now_ms(epoch));
                emit(&found, out)?;
            }
            Ok(Message::Closed) => {
                closed += 1;
                if expected_closes.is_some_and(|n| closed >= n) {
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let found = checker.tick(now_ms(epoch));
                emit(&found, out)?;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let found = checker.finish();
    emit(&found, out)?;
    let seconds = first.map_or(0.0, |f| f.elapsed().as_secs_f64());
    let stats = checker.stats().clone();
    Ok(WatchSummary {
        counts: checker.counts().clone(),
        throughput: if seconds > 0.0 {
            stats.transactions as f64 / seconds
        } else {
            0.0
        },
        stats,
        malformed,
        seconds,
    })
}
