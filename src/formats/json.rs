//! The native JSON format (`"format": "isopredict-history"`, `"version": 1`): carries
//! everything a [`History`] has, so a round trip through it is exact. docs/formats.md has the
//! schema; in short:
//!
//! ```json
//! {
//!   "format": "isopredict-history",
//!   "version": 1,
//!   "initial_value": 0,
//!   "keys": ["x", "y"],
//!   "initial": {"t": 0, "ops": [
//!     {"w": "x", "v": 0}
//!   ]},
//!   "sessions": [
//!     {"id": 7, "transactions": [
//!       {"t": 1, "id": 100, "status": "committed", "timestamps": {"start": 1, "commit": 2}, "ops": [
//!         {"w": "x", "v": 1},
//!         {"r": "y", "from": "initial"},
//!         {"r": "x", "v": 1, "from": [1, 0]},
//!         {"r": "x", "v": 9, "unresolved": "no-such-write"}
//!       ]}
//!     ]}
//!   ]
//! }
//! ```
//!
//! - `keys` lists every key name (in [`KeyId`] order); operations name
//!   keys by name.
//! - Transactions are numbered `t` = 1, 2, … in file order (session by session); 0 is the
//!   initial transaction. `t` is optional when reading, and checked when present.
//! - `initial` holds the initial transaction's explicit operations; it writes every other key
//!   implicitly, with `initial_value` when given.
//! - A read names its writer exactly: `"from": [t, i]` is operation `i` (0-based) of
//!   transaction `t`; `"from": "initial"` is the initial transaction's (last) write of the key
//!   (written for its implicit writes); `"unresolved": "no-such-write"` or `"ambiguous"` (which needs `v`) marks a read
//!   without a writer.
//! - `"real_time": {"invoked": i, "completed": j}` (optional, per transaction): the client's
//!   real-time interval ([`crate::history::RealTime`], e.g. read from a Jepsen history), used
//!   only by strict serializability.
//! - `"write_order": [[[t, i], [u, j]], …]` (optional, last) lists the known write–write
//!   facts ([`History::known_write_order`]): operation `i` of `t` was installed before
//!   operation `j` of `u`.
//! - `"statements": {"sessions": [names], "list": [{"session": s, "index": i, "sql": "…",
//!   "params": ["1", null]}]}` (optional, last; histories recorded by `isopredict serve`): the
//!   SQL statements, each with its history session (0-based), its position in that session
//!   (1-based) and its bound parameters as text; `"stmt": n` on an operation names the
//!   statement (0-based in `list`) that made it; `"schema": ["CREATE TABLE …", …]` (optional)
//!   the schema statements the clients ran, in order (what `reproduce` creates first).
//! - `"locked": true` (optional, on a read): a locked read ([`History::locked_reads`]), the
//!   read of a single-statement read–modify–write; its transaction writes the key after it.
//! - `"sessions_are_connections": true` (optional, top level; false when absent): each
//!   session is one connection of a real database ([`History::sessions_are_connections`]).
//! - `"after": [s, …]` (optional, per session): this session began after sessions `s` (0-based
//!   positions in `sessions`) ended ([`History::sessions_after`]).
//! - Optional fields: `id` (the input's own session or transaction id), `status`
//!   (`committed` by default, or `aborted`), `timestamps`, `v` (the value).
//!
//! Errors name the line of the offending operation or transaction.

use std::borrow::Cow;
use std::io::Write;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::FormatError;
use crate::error::InputError;
use crate::history::{
    BuilderTxn, History, HistoryBuilder, KeyId, OpKind, ReadFrom, RealTime, SessionId, Timestamps,
    TxnId, TxnStatus, Unresolved, INITIAL_TXN,
};

/// The value of `"format"`.
pub const FORMAT_NAME: &str = "isopredict-history";
/// The schema version this module reads and writes.
pub const VERSION: u64 = 1;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc<'a> {
    #[serde(borrow)]
    format: Cow<'a, str>,
    version: u64,
    #[serde(default)]
    initial_value: Option<u64>,
    #[serde(default)]
    sessions_are_connections: bool,
    #[serde(borrow, default)]
    keys: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    initial: Option<&'a RawValue>,
    #[serde(borrow, default)]
    sessions: Vec<&'a RawValue>,
    #[serde(default)]
    write_order: Vec<((u64, u32), (u64, u32))>,
    #[serde(default)]
    statements: Option<JsonStatements>,
}

/// The optional `"statements"` section (histories recorded by `isopredict serve`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonStatements {
    #[serde(default)]
    sessions: Vec<String>,
    #[serde(default)]
    list: Vec<JsonStatement>,
    #[serde(default)]
    schema: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonStatement {
    session: usize,
    index: u32,
    sql: String,
    #[serde(default)]
    params: Vec<Option<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonSession<'a> {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    after: Vec<u64>,
    #[serde(borrow, default)]
    transactions: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonTxn<'a> {
    #[serde(default)]
    t: Option<u64>,
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    status: Option<TxnStatus>,
    #[serde(default)]
    timestamps: Option<Timestamps>,
    #[serde(default)]
    real_time: Option<RealTime>,
    #[serde(borrow, default)]
    ops: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonOp<'a> {
    #[serde(borrow, default)]
    r: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    w: Option<Cow<'a, str>>,
    #[serde(default)]
    v: Option<u64>,
    #[serde(borrow, default)]
    from: Option<&'a RawValue>,
    #[serde(default)]
    unresolved: Option<Unresolved>,
    #[serde(default)]
    stmt: Option<u32>,
    #[serde(default)]
    locked: bool,
}

/// Maps positions in the text to 1-based lines, moving forward.
struct LineCounter<'a> {
    text: &'a str,
    pos: usize,
    line: u32,
}

impl<'a> LineCounter<'a> {
    fn line_of(&mut self, raw: &RawValue) -> u32 {
        let offset = (raw.get().as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
        let offset = offset.min(self.text.len());
        if offset < self.pos {
            self.pos = 0;
            self.line = 1;
        }
        let newlines = self.text.as_bytes()[self.pos..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.line = self.line.saturating_add(newlines as u32);
        self.pos = offset;
        self.line
    }
}

/// An [`InputError`] from a serde_json error in a piece of text starting at `base_line`.
fn json_error(source: &str, base_line: u32, e: &serde_json::Error) -> InputError {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    // serde_json reads an integer beyond u64 (or a fraction) as a float and says "invalid type:
    // floating point `1.1805916207174113e21`": say what is wrong instead.
    let rewritten;
    let message = match message.strip_prefix("invalid type: floating point `") {
        Some(rest) => {
            let expected = rest.split_once("`, ").map_or("", |(_, e)| e);
            rewritten = format!(
                "a number that is not an integer from 0 to 2^64 - 1 ({expected}; \
                 the number was read as {})",
                rest.split('`').next().unwrap_or("")
            );
            rewritten.as_str()
        }
        None => message,
    };
    let line = if e.line() == 0 {
        base_line
    } else {
        base_line.saturating_add(e.line() as u32 - 1)
    };
    InputError::new(source, line, format!("invalid JSON: {message}"))
}

enum Source {
    Write,
    Op(u64, u32),
    Initial,
    Unresolved(Unresolved),
}

struct ParsedOp {
    line: u32,
    key: KeyId,
    value: Option<u64>,
    from: Source,
    stmt: Option<u32>,
    locked: bool,
}

struct ParsedTxn {
    session: Option<SessionId>,
    id: Option<u64>,
    status: TxnStatus,
    timestamps: Option<Timestamps>,
    real_time: Option<RealTime>,
    line: u32,
    ops: Vec<ParsedOp>,
}

struct Parser<'a> {
    source: &'a str,
    lines: LineCounter<'a>,
    builder: HistoryBuilder,
}

impl<'a> Parser<'a> {
    fn parse<T: Deserialize<'a>>(&mut self, raw: &'a RawValue) -> Result<(T, u32), InputError> {
        let line = self.lines.line_of(raw);
        serde_json::from_str(raw.get())
            .map(|v| (v, line))
            .map_err(|e| json_error(self.source, line, &e))
    }

    fn key(&mut self, name: &str, line: u32) -> Result<KeyId, InputError> {
        let before = self.builder.key_count();
        let key = self.builder.key(name);
        if self.builder.key_count() != before {
            return Err(InputError::new(
                self.source,
                line,
                format!("key {name:?} is not listed in \"keys\""),
            ));
        }
        Ok(key)
    }

    /// The `"keys"` list: each key once.
    fn keys(&mut self, keys: &[&'a RawValue]) -> Result<(), InputError> {
        for &raw in keys {
            let (name, line): (Cow<'_, str>, u32) = self.parse(raw)?;
            let before = self.builder.key_count();
            self.builder.key(&name);
            if self.builder.key_count() == before {
                return Err(InputError::new(
                    self.source,
                    line,
                    format!("key {name:?} is listed twice"),
                ));
            }
        }
        Ok(())
    }

    /// The `"sessions"` list: each session's transactions in file order (positions from 1)
    /// and the session order its `"after"` gives (later, earlier).
    #[allow(clippy::type_complexity)]
    fn sessions(
        &mut self,
        sessions: Vec<&'a RawValue>,
    ) -> Result<(Vec<ParsedTxn>, Vec<(SessionId, SessionId)>), InputError> {
        let mut txns = Vec::new();
        let session_total = sessions.len() as u64;
        let mut after: Vec<(SessionId, SessionId)> = Vec::new();
        for raw in sessions {
            let (session, line): (JsonSession<'_>, u32) = self.parse(raw)?;
            let before = self.builder.session_count();
            let s = self.builder.session(session.id);
            if self.builder.session_count() == before {
                return Err(InputError::new(
                    self.source,
                    line,
                    format!("session id {} appears twice", session.id.unwrap_or(0)),
                ));
            }
            for &earlier in &session.after {
                if earlier >= session_total {
                    return Err(InputError::new(
                        self.source,
                        line,
                        format!(
                            "\"after\" names session {earlier}, but sessions are numbered 0 to {}",
                            session_total.saturating_sub(1)
                        ),
                    ));
                }
                after.push((s, earlier as SessionId));
            }
            for raw in session.transactions {
                let position = txns.len() as u64 + 1;
                txns.push(self.txn(raw, Some(s), position)?);
            }
        }
        Ok((txns, after))
    }

    fn txn(
        &mut self,
        raw: &'a RawValue,
        session: Option<SessionId>,
        position: u64,
    ) -> Result<ParsedTxn, InputError> {
        let (txn, line): (JsonTxn<'a>, u32) = self.parse(raw)?;
        if let Some(t) = txn.t {
            if t != position {
                return Err(InputError::new(
                    self.source,
                    line,
                    format!("\"t\": {t}, but this is transaction {position} in file order"),
                ));
            }
        }
        if session.is_none() && txn.id.is_some() {
            return Err(InputError::new(
                self.source,
                line,
                "the initial transaction has no \"id\"",
            ));
        }
        if session.is_none() && matches!(txn.status, Some(TxnStatus::Aborted)) {
            return Err(InputError::new(
                self.source,
                line,
                "the initial transaction cannot be aborted",
            ));
        }
        let mut ops = Vec::with_capacity(txn.ops.len());
        for raw in txn.ops {
            let (op, line): (JsonOp<'a>, u32) = self.parse(raw)?;
            let source = self.source;
            let err = |m: &str| InputError::new(source, line, m);
            let (kind, name) = match (op.r, op.w) {
                (Some(k), None) => (OpKind::Read, k),
                (None, Some(k)) => (OpKind::Write, k),
                _ => {
                    return Err(err(
                        "an operation has exactly one of \"r\" (read) and \"w\" (write)",
                    ))
                }
            };
            let key = self.key(&name, line)?;
            let from = match (kind, op.from, op.unresolved) {
                (OpKind::Write, None, None) => Source::Write,
                (OpKind::Write, _, _) => {
                    return Err(err("a write has no \"from\" or \"unresolved\""))
                }
                (OpKind::Read, Some(from), None) => {
                    if from.get().trim() == "\"initial\"" {
                        Source::Initial
                    } else {
                        match serde_json::from_str::<(u64, u32)>(from.get()) {
                            Ok((t, i)) => Source::Op(t, i),
                            Err(_) => {
                                return Err(err(
                                    "\"from\" is [transaction, operation] or \"initial\"",
                                ))
                            }
                        }
                    }
                }
                (OpKind::Read, None, Some(Unresolved::Ambiguous)) if op.v.is_none() => {
                    return Err(err("an ambiguous read needs its value \"v\""))
                }
                (OpKind::Read, None, Some(reason)) => Source::Unresolved(reason),
                (OpKind::Read, _, _) => {
                    return Err(err("a read has exactly one of \"from\" and \"unresolved\""))
                }
            };
            if op.locked && kind == OpKind::Write {
                return Err(err(
                    "\"locked\" marks a read (of a read–modify–write), not a write",
                ));
            }
            ops.push(ParsedOp {
                line,
                key,
                value: op.v,
                from,
                stmt: op.stmt,
                locked: op.locked,
            });
        }
        Ok(ParsedTxn {
            session,
            id: txn.id,
            status: txn.status.unwrap_or(TxnStatus::Committed),
            timestamps: txn.timestamps,
            real_time: txn.real_time,
            line,
            ops,
        })
    }
}

/// Reads a history in the native JSON format.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let text = utf8(bytes, source)?;
    let doc: Doc = serde_json::from_str(text).map_err(|e| json_error(source, 1, &e))?;
    check_header(&doc, source)?;
    let mut p = Parser {
        source,
        lines: LineCounter {
            text,
            pos: 0,
            line: 1,
        },
        builder: HistoryBuilder::new(source),
    };
    if let Some(v) = doc.initial_value {
        p.builder.initial_value(v);
    }
    if doc.sessions_are_connections {
        p.builder.sessions_are_connections();
    }
    p.keys(&doc.keys)?;
    let initial = match doc.initial {
        Some(raw) => Some(p.txn(raw, None, 0)?),
        None => None,
    };
    let (txns, after) = p.sessions(doc.sessions)?;

    let mut b = p.builder;
    let mut handles = Vec::with_capacity(txns.len() + 1);
    handles.push(BuilderTxn::INITIAL);
    for t in &txns {
        handles.push(b.begin_at(t.session.unwrap_or(0), t.id, t.line));
    }
    let ambiguous = add_operations(&mut b, source, &handles, all_txns(&initial, &txns))?;
    for &((ta, ia), (tb, ib)) in &doc.write_order {
        let handle = |t: u64| {
            handles.get(t as usize).copied().ok_or_else(|| {
                InputError::new(
                    source,
                    0,
                    format!(
                        "\"write_order\" names transaction {t}, but there are only {}",
                        handles.len() - 1
                    ),
                )
            })
        };
        b.write_before((handle(ta)?, ia), (handle(tb)?, ib), 0);
    }
    for (later, earlier) in after {
        b.session_after(later, earlier);
    }
    if !ambiguous.is_empty() {
        b.allow_duplicate_writes(true);
    }
    let mut history = b.build()?;
    if let Some(st) = doc.statements {
        history = with_statements(history, st, source, all_txns(&initial, &txns))?;
    }
    for (position, i, line) in ambiguous {
        let op = history.txn(position as TxnId).ops().start + i as u32;
        if history.unresolved_reason(op) != Some(Unresolved::Ambiguous) {
            return Err(InputError::new(
                source,
                line,
                "a read marked \"ambiguous\" whose value is not written several times",
            ));
        }
    }
    Ok(history)
}

/// `bytes` as text, or the line of the first invalid UTF-8 byte.
fn utf8<'a>(bytes: &'a [u8], source: &str) -> Result<&'a str, InputError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        InputError::new(source, line as u32, "invalid UTF-8")
    })
}

/// The document's `"format"` and `"version"` are the ones this reader knows.
fn check_header(doc: &Doc<'_>, source: &str) -> Result<(), InputError> {
    if doc.format != FORMAT_NAME {
        return Err(InputError::new(
            source,
            0,
            format!(
                "\"format\" is {:?}; this reader knows {FORMAT_NAME:?}",
                doc.format
            ),
        ));
    }
    if doc.version != VERSION {
        return Err(InputError::new(
            source,
            0,
            format!(
                "schema version {} is not supported (this build reads version {VERSION})",
                doc.version
            ),
        ));
    }
    Ok(())
}

/// The initial transaction (position 0, if the file has one) and the others (from 1), in file
/// order.
fn all_txns<'t>(
    initial: &'t Option<ParsedTxn>,
    txns: &'t [ParsedTxn],
) -> impl Iterator<Item = (usize, &'t ParsedTxn)> {
    initial
        .iter()
        .map(|t| (0usize, t))
        .chain(txns.iter().enumerate().map(|(i, t)| (i + 1, t)))
}

/// Adds every transaction's status, times and operations to `b` (`handles`: the builder's
/// transaction at each position); returns the reads marked ambiguous (position, operation
/// index, line), to be checked once the history is built.
fn add_operations<'t>(
    b: &mut HistoryBuilder,
    source: &str,
    handles: &[BuilderTxn],
    txns: impl Iterator<Item = (usize, &'t ParsedTxn)>,
) -> Result<Vec<(usize, usize, u32)>, InputError> {
    let mut ambiguous = Vec::new();
    for (position, t) in txns {
        let handle = handles[position];
        if t.status == TxnStatus::Aborted {
            b.abort(handle);
        }
        if let Some(ts) = t.timestamps {
            b.set_timestamps(handle, ts);
        }
        if let Some(rt) = t.real_time {
            b.set_real_time(handle, rt);
        }
        for (i, op) in t.ops.iter().enumerate() {
            let from = match op.from {
                Source::Write => {
                    b.write(handle, op.key, op.value, op.line);
                    continue;
                }
                Source::Op(writer, index) => {
                    let Some(&w) = handles.get(writer as usize) else {
                        return Err(InputError::new(
                            source,
                            op.line,
                            format!(
                                "\"from\" names transaction {writer}, but there are only {}",
                                handles.len() - 1
                            ),
                        ));
                    };
                    ReadFrom::Op(w, index)
                }
                Source::Initial => ReadFrom::Initial,
                Source::Unresolved(Unresolved::NoSuchWrite) => ReadFrom::Unknown,
                Source::Unresolved(Unresolved::Ambiguous) => {
                    ambiguous.push((position, i, op.line));
                    ReadFrom::Value(op.value.unwrap_or_default())
                }
            };
            if op.locked {
                b.lock_read(b.op_count());
            }
            b.read(handle, op.key, op.value, from, op.line);
        }
    }
    Ok(ambiguous)
}

/// `history` with the `"statements"` section: each operation's `"stmt"` checked against the
/// list.
fn with_statements<'t>(
    history: History,
    st: JsonStatements,
    source: &str,
    txns: impl Iterator<Item = (usize, &'t ParsedTxn)>,
) -> Result<History, InputError> {
    let mut op_statement = vec![crate::history::NO_STATEMENT; history.ops().len()];
    for (position, t) in txns {
        let start = history.txn(position as TxnId).ops().start as usize;
        for (i, op) in t.ops.iter().enumerate() {
            if let Some(n) = op.stmt {
                if n as usize >= st.list.len() {
                    return Err(InputError::new(
                        source,
                        op.line,
                        format!(
                            "\"stmt\" {n}, but there are only {} statements",
                            st.list.len()
                        ),
                    ));
                }
                op_statement[start + i] = n;
            }
        }
    }
    let list = st
        .list
        .into_iter()
        .map(|s| crate::history::SqlStatement {
            session: s.session,
            index: s.index,
            sql: s.sql,
            params: s.params,
        })
        .collect();
    let table =
        crate::history::StatementTable::new(st.sessions, list, op_statement).with_schema(st.schema);
    history.with_statements(std::sync::Arc::new(table))
}

fn string(out: &mut dyn Write, s: &str) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, s).map_err(std::io::Error::from)
}

/// Writes transaction `t` as one object: the header at the current position, each operation
/// on its own line indented by `indent` plus two spaces, the closing bracket after `indent`.
fn txn_json(h: &History, t: TxnId, out: &mut dyn Write, indent: &str) -> std::io::Result<()> {
    let txn = h.txn(t);
    write!(out, "{{\"t\": {t}")?;
    if let Some(id) = txn.external_id {
        write!(out, ", \"id\": {id}")?;
    }
    if t != INITIAL_TXN || txn.status != TxnStatus::Committed {
        let status = match txn.status {
            TxnStatus::Committed => "committed",
            TxnStatus::Aborted => "aborted",
        };
        write!(out, ", \"status\": \"{status}\"")?;
    }
    if let Some(ts) = h.timestamps(t) {
        write!(
            out,
            ", \"timestamps\": {{\"start\": {}, \"commit\": {}}}",
            ts.start, ts.commit
        )?;
    }
    if let Some(rt) = h.real_time(t) {
        write!(
            out,
            ", \"real_time\": {{\"invoked\": {}, \"completed\": {}}}",
            rt.invoked, rt.completed
        )?;
    }
    write!(out, ", \"ops\": [")?;
    let mut first = true;
    for o in txn.ops() {
        if h.is_implicit_initial_write(o) {
            continue;
        }
        let op = h.op(o);
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        let tag = match op.kind {
            OpKind::Read => "r",
            OpKind::Write => "w",
        };
        write!(out, "{indent}  {{\"{tag}\": ")?;
        string(out, h.key_name(op.key))?;
        if let Some(v) = op.value {
            write!(out, ", \"v\": {v}")?;
        }
        if let Some(n) = h
            .statements()
            .and_then(|st| st.op_statements().get(o as usize))
            .filter(|&&n| n != crate::history::NO_STATEMENT)
        {
            write!(out, ", \"stmt\": {n}")?;
        }
        if op.kind == OpKind::Read {
            match h.read_from(o) {
                Some(w) if h.is_implicit_initial_write(w) => {
                    write!(out, ", \"from\": \"initial\"")?
                }
                Some(w) => {
                    let writer = h.op(w).txn;
                    let index = w - h.txn(writer).ops().start;
                    write!(out, ", \"from\": [{writer}, {index}]")?
                }
                None => {
                    let reason = match h.unresolved_reason(o) {
                        Some(Unresolved::Ambiguous) => "ambiguous",
                        _ => "no-such-write",
                    };
                    write!(out, ", \"unresolved\": \"{reason}\"")?
                }
            }
            // A predicted prefix may keep a locked read whose write it cut: an ordinary read
            // in the file (a locked read is followed by its write).
            if h.is_locked_read(o)
                && (o + 1..txn.ops().end)
                    .any(|w| h.op(w).kind == OpKind::Write && h.op(w).key == op.key)
            {
                write!(out, ", \"locked\": true")?;
            }
        }
        out.write_all(b"}")?;
    }
    if first {
        out.write_all(b"]}")
    } else {
        write!(out, "\n{indent}]}}")
    }
}

/// Writes a history in the native JSON format.
pub fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    writeln!(out, "{{")?;
    writeln!(out, "  \"format\": \"{FORMAT_NAME}\",")?;
    writeln!(out, "  \"version\": {VERSION},")?;
    let t0 = h.txn(INITIAL_TXN).ops();
    let implicit_value = (t0.start..t0.end)
        .find(|&o| h.is_implicit_initial_write(o))
        .and_then(|o| h.op(o).value);
    if let Some(v) = implicit_value {
        writeln!(out, "  \"initial_value\": {v},")?;
    }
    if h.sessions_are_connections() {
        writeln!(out, "  \"sessions_are_connections\": true,")?;
    }
    write!(out, "  \"keys\": [")?;
    for (i, name) in h.key_names().iter().enumerate() {
        if i > 0 {
            write!(out, ", ")?;
        }
        string(out, name)?;
    }
    writeln!(out, "],")?;
    write!(out, "  \"initial\": ")?;
    txn_json(h, INITIAL_TXN, out, "  ")?;
    writeln!(out, ",")?;
    write!(out, "  \"sessions\": [")?;
    // Each session's earlier sessions (`"after"`), from the sorted (earlier, later) pairs.
    let mut after: Vec<Vec<SessionId>> = Vec::new();
    if !h.sessions_after().is_empty() {
        after.resize(h.sessions().len(), Vec::new());
        for &(earlier, later) in h.sessions_after() {
            after[later as usize].push(earlier);
        }
    }
    for (s, session) in h.sessions().iter().enumerate() {
        out.write_all(if s == 0 { b"\n" } else { b",\n" })?;
        write!(out, "    {{")?;
        if let Some(id) = session.external_id {
            write!(out, "\"id\": {id}, ")?;
        }
        if let Some(earlier) = after.get(s).filter(|e| !e.is_empty()) {
            let list: Vec<String> = earlier.iter().map(|e| e.to_string()).collect();
            write!(out, "\"after\": [{}], ", list.join(", "))?;
        }
        write!(out, "\"transactions\": [")?;
        for (i, t) in session.txns().enumerate() {
            out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
            write!(out, "      ")?;
            txn_json(h, t, out, "      ")?;
        }
        if session.txns().is_empty() {
            write!(out, "]}}")?;
        } else {
            write!(out, "\n    ]}}")?;
        }
    }
    if h.sessions().is_empty() {
        write!(out, "]")?;
    } else {
        write!(out, "\n  ]")?;
    }
    if !h.known_write_order().is_empty() {
        let at = |o: u32| {
            let t = h.op(o).txn;
            (t, o - h.txn(t).ops().start)
        };
        write!(out, ",\n  \"write_order\": [")?;
        for (i, &(a, b)) in h.known_write_order().iter().enumerate() {
            let ((ta, ia), (tb, ib)) = (at(a), at(b));
            let sep = if i > 0 { ", " } else { "" };
            write!(out, "{sep}[[{ta}, {ia}], [{tb}, {ib}]]")?;
        }
        write!(out, "]")?;
    }
    if let Some(st) = h.statements() {
        write!(out, ",\n  \"statements\": {{\"sessions\": [")?;
        for (i, name) in st.session_names().iter().enumerate() {
            if i > 0 {
                write!(out, ", ")?;
            }
            string(out, name)?;
        }
        write!(out, "], \"list\": [")?;
        for (i, s) in st.statements().iter().enumerate() {
            out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
            write!(
                out,
                "    {{\"session\": {}, \"index\": {}, \"sql\": ",
                s.session, s.index
            )?;
            string(out, &s.sql)?;
            if !s.params.is_empty() {
                write!(out, ", \"params\": [")?;
                for (j, p) in s.params.iter().enumerate() {
                    if j > 0 {
                        write!(out, ", ")?;
                    }
                    match p {
                        Some(p) => string(out, p)?,
                        None => write!(out, "null")?,
                    }
                }
                write!(out, "]")?;
            }
            write!(out, "}}")?;
        }
        if !st.statements().is_empty() {
            write!(out, "\n  ")?;
        }
        write!(out, "]")?;
        if !st.schema().is_empty() {
            write!(out, ", \"schema\": [")?;
            for (i, sql) in st.schema().iter().enumerate() {
                out.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
                string(out, sql)?;
            }
            write!(out, "\n  ]")?;
        }
        write!(out, "}}")?;
    }
    writeln!(out, "\n}}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{
  "format": "isopredict-history",
  "version": 1,
  "initial_value": 0,
  "keys": ["x", "y"],
  "initial": {"t": 0, "ops": [
    {"w": "x", "v": 0}
  ]},
  "sessions": [
    {"id": 7, "transactions": [
      {"t": 1, "id": 100, "status": "committed", "timestamps": {"start": 1, "commit": 2}, "ops": [
        {"w": "x", "v": 1},
        {"r": "y", "from": "initial"},
        {"r": "x", "v": 1, "from": [1, 0]},
        {"r": "x", "v": 9, "unresolved": "no-such-write"}
      ]},
      {"t": 2, "status": "aborted", "ops": []}
    ]},
    {"transactions": []}
  ]
}
"#;

    fn read_str(text: &str) -> Result<History, InputError> {
        read(text.as_bytes(), "h.json")
    }

    /// The schema statements of a recording survive writing and reading (what `reproduce`
    /// creates first on the database).
    #[test]
    fn statements_keep_the_schema() {
        let text = r#"{"format": "isopredict-history", "version": 1, "keys": ["t[id=1]"],
          "initial": {"t": 0, "ops": []},
          "sessions": [{"id": 1, "transactions": [
            {"t": 1, "status": "committed", "ops": [{"w": "t[id=1]", "stmt": 0}]}]}],
          "statements": {"sessions": ["app"], "list": [
            {"session": 0, "index": 1, "sql": "INSERT INTO t VALUES ($1)", "params": ["1"]}],
            "schema": ["CREATE TABLE t (id int PRIMARY KEY)", "CREATE INDEX ON t (id)"]}}"#;
        let h = read_str(text).unwrap();
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        let again = read(&out, "again.json").unwrap();
        let st = again.statements().unwrap();
        assert_eq!(
            st.schema(),
            [
                "CREATE TABLE t (id int PRIMARY KEY)",
                "CREATE INDEX ON t (id)"
            ]
        );
        assert_eq!(st.statements()[0].params, [Some("1".to_string())]);
        assert_eq!(st, h.statements().unwrap());
    }

    #[test]
    fn reads_the_documented_example_and_writes_it_back_verbatim() {
        let h = read_str(EXAMPLE).unwrap();
        assert_eq!(h.sessions().len(), 2);
        assert_eq!(h.txn(1).external_id, Some(100));
        assert_eq!(h.txn(2).status, TxnStatus::Aborted);
        assert_eq!(h.timestamps(1).map(|t| t.commit), Some(2));
        let ops = h.txn(1).ops().start;
        assert_eq!(h.read_from(ops + 2), Some(ops));
        assert_eq!(h.writer_txn(ops + 1), Some(INITIAL_TXN));
        assert_eq!(h.unresolved(), &[(ops + 3, Unresolved::NoSuchWrite)]);
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), EXAMPLE);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = |from: &str, to: &str| EXAMPLE.replacen(from, to, 1);
        let cases: Vec<(String, u32, &str)> = vec![
            (
                bad("\"from\": [1, 0]", "\"from\": [5, 0]"),
                14,
                "names transaction 5",
            ),
            (
                bad("\"from\": [1, 0]", "\"from\": [1, 7]"),
                14,
                "names operation 7",
            ),
            (
                bad("\"from\": [1, 0]", "\"from\": \"x\""),
                14,
                "\"from\" is [transaction",
            ),
            (
                bad("{\"w\": \"x\", \"v\": 1}", "{\"w\": \"z\", \"v\": 1}"),
                12,
                "not listed",
            ),
            (
                bad("{\"w\": \"x\", \"v\": 1}", "{\"w\": \"x\", \"vv\": 1}"),
                12,
                "unknown field",
            ),
            (
                bad("\"t\": 2", "\"t\": 3"),
                17,
                "transaction 2 in file order",
            ),
            (bad("\"version\": 1", "\"version\": 2"), 0, "version 2"),
            (bad("\"v\": 0}", "\"v\": 0"), 8, "invalid JSON"),
            (bad("\"v\": 1}", "\"v\": 0}"), 12, "initial value"),
            (bad("\"committed\"", "\"done\""), 11, "unknown variant"),
            (
                bad(
                    "{\"w\": \"x\", \"v\": 1}",
                    "{\"w\": \"x\", \"v\": 1180591620717411303424}",
                ),
                12,
                "a number that is not an integer from 0 to 2^64 - 1",
            ),
        ];
        for (text, line, message) in cases {
            let e = read_str(&text).unwrap_err();
            assert_eq!(e.line(), line, "{e}");
            assert!(e.to_string().contains(message), "{e}");
        }
    }

    #[test]
    fn ambiguous_reads_round_trip() {
        let mut b = HistoryBuilder::new("m");
        b.allow_duplicate_writes(true);
        let x = b.key("x");
        let s = b.session(None);
        let t = b.begin(s, None);
        b.write(t, x, Some(3), 0);
        b.write(t, x, Some(3), 0);
        let t2 = b.begin(s, None);
        b.read(t2, x, Some(3), ReadFrom::Value(3), 0);
        let h = b.build().unwrap();
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        let g = read(&out, "j").unwrap();
        assert_eq!(g.unresolved(), h.unresolved());
        h.same_content(&g).unwrap();
    }

    /// `"sessions_are_connections"` round-trips; a file without it (every file written before
    /// it existed) reads as logical sessions.
    #[test]
    fn sessions_that_are_connections_round_trip_and_default_to_false() {
        let old = read_str(EXAMPLE).unwrap();
        assert!(!old.sessions_are_connections());
        let mut b = HistoryBuilder::new("m");
        let x = b.key("x");
        let s = b.session(None);
        let t = b.begin(s, None);
        b.write(t, x, Some(1), 0);
        b.sessions_are_connections();
        let h = b.build().unwrap();
        assert!(h.sessions_are_connections());
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        assert!(String::from_utf8_lossy(&out).contains("\"sessions_are_connections\": true"));
        let g = read(&out, "j").unwrap();
        assert!(g.sessions_are_connections());
        g.same_content(&h).unwrap();
        assert!(g.same_content(&old).is_err());
    }

    #[test]
    fn real_time_intervals_round_trip() {
        let mut b = HistoryBuilder::new("m");
        let x = b.key("x");
        let s = b.session(None);
        let t = b.begin(s, None);
        b.write(t, x, Some(1), 0);
        b.set_real_time(
            t,
            RealTime {
                invoked: 4,
                completed: 9,
            },
        );
        let h = b.build().unwrap();
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        assert!(String::from_utf8_lossy(&out)
            .contains("\"real_time\": {\"invoked\": 4, \"completed\": 9}"));
        let g = read(&out, "j").unwrap();
        assert_eq!(g.real_time(1), h.real_time(1));
        assert!(!g.has_timestamps());
    }
}
