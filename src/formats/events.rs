//! The JSON-lines event format (docs/recording.md): what an application in any language
//! emits while it runs, one JSON object per line and per event:
//!
//! ```text
//! {"event":"begin","session":1,"txn":"1-1"}
//! {"event":"read","session":1,"txn":"1-1","key":"acct1","value":100,"writer":"initial"}
//! {"event":"write","session":1,"txn":"1-1","key":"acct1","value":110}
//! {"event":"commit","session":1,"txn":"1-1"}
//! {"event":"abort","session":2,"txn":"2-1"}
//! ```
//!
//! - `event`: `begin`, `read`, `write`, `commit` or `abort`.
//! - `session`, `txn`: numbers or strings; a transaction id is unique in the file (a read's
//!   `writer` names it). Events of one session come in its program order; sessions may
//!   interleave freely. A transaction with no `commit` by the end counts as aborted.
//! - `key`: a string or number. `value`: any JSON value; non-negative integers are kept as
//!   they are, other values by a stable 64-bit hash of their JSON text (so reads can be matched
//!   to writes by value).
//! - `writer` (reads, where known): the id of the transaction whose write the read saw, or
//!   `"initial"` for the initial state. It names that transaction's last write of the key (or,
//!   for its own transaction, the last one before the read). Without `writer`, the read is
//!   matched to the write of the same value to the key, if exactly one exists.
//! - Events do not contradict each other: an event that names a `session` names its
//!   transaction's; a session begins a transaction only after its previous one ended (commit
//!   or abort); each field appears once in an event. Each is an error naming its line.
//! - The initial state's writes, if listed: `{"event":"write","txn":"initial","key":…}`
//!   (no session, no begin).
//!
//! Writing: [`EventWriter`] writes events one per line in the field order above; [`write`]
//! (a history) and [`crate::store::postgres::Recorder::write_events`] (a PostgreSQL recording,
//! with its original values) both go through it.

use std::borrow::Cow;
use std::io::Write;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value as Json;

use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, TxnId, INITIAL_TXN};
use crate::stable_hash::hash_str;

/// Whether a line looks like an event of this format: a JSON object with an `event` field.
pub(crate) fn looks_like(line: &[u8]) -> bool {
    line.first() == Some(&b'{')
        && serde_json::from_slice::<Json>(line)
            .ok()
            .and_then(|v| v.get("event").map(|e| e.is_string()))
            .unwrap_or(false)
}

/// A field's JSON text: borrowed from the input, or (for a line read as a whole value)
/// the compact form of its value. Read as a [`serde_json::Value`] would read it.
#[derive(Clone)]
struct Field<'a>(Cow<'a, str>);

/// The error of a field that is absent or not of its type: "missing" only when it is absent;
/// a field of another type is named with what it holds.
fn field_error(field: Option<&Field>, name: &str, expected: &str) -> String {
    match field {
        None => format!("missing \"{name}\" ({expected})"),
        Some(f) => {
            let shown: String = f.0.chars().take(40).collect();
            let more = if f.0.chars().count() > 40 { "…" } else { "" };
            format!("\"{name}\" is {shown}{more}, not {expected}")
        }
    }
}

impl<'a> Field<'a> {
    fn is_null(&self) -> bool {
        self.0 == "null"
    }

    /// A string's content.
    fn as_str(&self) -> Option<Cow<'a, str>> {
        let t = &self.0;
        if !t.starts_with('"') {
            return None;
        }
        match &self.0 {
            Cow::Borrowed(t) if !t.contains('\\') && t.len() >= 2 => {
                Some(Cow::Borrowed(&t[1..t.len() - 1]))
            }
            _ => serde_json::from_str::<String>(t).ok().map(Cow::Owned),
        }
    }

    /// A non-negative integer that fits a `u64` (as [`Json::as_u64`]).
    fn as_u64(&self) -> Option<u64> {
        let t = self.0.as_bytes();
        if t.is_empty() || !t.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.0.parse().ok()
    }

    /// A number's text as [`serde_json::Number`] displays it.
    fn number_text(&self) -> Option<Cow<'a, str>> {
        let first = *self.0.as_bytes().first()?;
        if !(first == b'-' || first.is_ascii_digit()) {
            return None;
        }
        if self.as_u64().is_some() {
            return Some(self.0.clone());
        }
        serde_json::from_str::<serde_json::Number>(&self.0)
            .ok()
            .map(|n| Cow::Owned(n.to_string()))
    }

    /// The value as a `u64`: itself if a non-negative integer, else a stable hash of its
    /// compact JSON text.
    fn value_u64(&self) -> u64 {
        match self.as_u64() {
            Some(n) => n,
            None => match serde_json::from_str::<Json>(&self.0) {
                Ok(v) => hash_str(&v.to_string()),
                Err(_) => hash_str(&self.0),
            },
        }
    }

    /// A transaction or session id: numbers and strings are distinct ids.
    fn id(&self) -> Option<Id<'a>> {
        if let Some(s) = self.as_str() {
            return Some(Id {
                num: false,
                text: s,
            });
        }
        self.number_text().map(|text| Id { num: true, text })
    }
}

/// A transaction or session id as written (numbers and strings are distinct ids).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Id<'a> {
    num: bool,
    text: Cow<'a, str>,
}

impl Id<'_> {
    fn is_initial(&self) -> bool {
        !self.num && self.text == "initial"
    }
}

impl std::fmt::Display for Id<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A field present in the line (`null` included) as its raw text.
fn present<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue>::deserialize(d).map(Some)
}

/// An event line's fields, borrowed.
#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    event: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    session: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    txn: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    key: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    value: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    writer: Option<&'a RawValue>,
}

/// The fields of one event line.
#[derive(Default)]
struct Fields<'a> {
    event: Option<Field<'a>>,
    session: Option<Field<'a>>,
    txn: Option<Field<'a>>,
    key: Option<Field<'a>>,
    value: Option<Field<'a>>,
    writer: Option<Field<'a>>,
}

/// Reads a line's fields: deserialised borrowed when it is a plain object, else (an array, a
/// repeated field, invalid JSON) read as a whole value, which also words the errors.
fn fields(line: &str) -> Result<Fields<'_>, String> {
    fn raw(r: Option<&RawValue>) -> Option<Field<'_>> {
        r.map(|r| Field(Cow::Borrowed(r.get().trim())))
    }
    if line.starts_with('{') {
        match serde_json::from_str::<RawEvent>(line) {
            Ok(e) => {
                return Ok(Fields {
                    event: raw(e.event),
                    session: raw(e.session),
                    txn: raw(e.txn),
                    key: raw(e.key),
                    value: raw(e.value),
                    writer: raw(e.writer),
                })
            }
            // Two values for one field contradict each other: neither is taken.
            Err(e) if e.to_string().starts_with("duplicate field") => {
                let e = e.to_string();
                let what = e.split(" at line").next().unwrap_or(&e);
                return Err(format!("{what}: each field may appear once in an event"));
            }
            Err(_) => {}
        }
    }
    let v: Json = serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
    let Some(obj) = v.as_object() else {
        return Err("expected a JSON object".into());
    };
    let owned = |name: &str| obj.get(name).map(|v| Field(Cow::Owned(v.to_string())));
    Ok(Fields {
        event: owned("event"),
        session: owned("session"),
        txn: owned("txn"),
        key: owned("key"),
        value: owned("value"),
        writer: owned("writer"),
    })
}

/// A read's writer as named.
enum Writer<'a> {
    Initial,
    Txn(Id<'a>),
}

struct Event<'a> {
    line: u32,
    write: bool,
    txn: BuilderTxn,
    key: u32,
    value: Option<u64>,
    writer: Option<Writer<'a>>,
}

/// A transaction met in the log.
struct TxnState {
    bt: BuilderTxn,
    /// `Some(committed)` once it ended.
    end: Option<bool>,
    /// Its session's index.
    session: u32,
    /// The line of its begin.
    line: u32,
}

/// Checks that an event's `session`, when given, is its transaction's.
fn same_session(
    f: &Fields<'_>,
    txn: &Id<'_>,
    state: &TxnState,
    sessions: &FxHashMap<Id<'_>, u32>,
    names: &[Id<'_>],
) -> Result<(), String> {
    let Some(field) = &f.session else {
        return Ok(());
    };
    let named = field
        .id()
        .ok_or_else(|| "\"session\" must be a number or a string".to_string())?;
    if sessions.get(&named) == Some(&state.session) {
        return Ok(());
    }
    Err(format!(
        "the event names session {named}, but transaction {txn} began in session {} (line {})",
        names[state.session as usize], state.line
    ))
}

/// Reads an event log. Lines are deserialised borrowed (no value tree, no owned strings);
/// ids are hashed as borrowed text.
pub(crate) fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let text = super::text::utf8(bytes, source)?;
    let mut b = HistoryBuilder::new(source);
    b.allow_duplicate_writes(true);
    let mut log = EventLog {
        source,
        b,
        sessions: FxHashMap::default(),
        txns: FxHashMap::default(),
        open: Vec::new(),
        session_names: Vec::new(),
        events: Vec::new(),
        key_text: String::new(),
    };
    for (line_no, line) in super::text::Lines::new(bytes) {
        // `text` is UTF-8 and lines end at ASCII bytes, so the slice is on boundaries.
        let start = line.as_ptr() as usize - bytes.as_ptr() as usize;
        let line = text[start..start + line.len()].trim_matches([' ', '\t', '\r']);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        log.event(line, line_no)?;
    }
    log.finish()
}

/// What [`read`] has met so far in an event log.
struct EventLog<'a> {
    source: &'a str,
    b: HistoryBuilder,
    sessions: FxHashMap<Id<'a>, u32>,
    txns: FxHashMap<Id<'a>, TxnState>,
    /// Per session (by index): its open transaction and the line of its begin.
    open: Vec<Option<(Id<'a>, u32)>>,
    session_names: Vec<Id<'a>>,
    /// Reads and writes, added once every transaction's end is known.
    events: Vec<Event<'a>>,
    key_text: String,
}

impl<'a> EventLog<'a> {
    fn err(&self, line: u32, m: String) -> InputError {
        InputError::new(self.source, line, m)
    }

    /// One line's event.
    fn event(&mut self, line: &'a str, line_no: u32) -> Result<(), InputError> {
        let f = fields(line).map_err(|m| self.err(line_no, m))?;
        let kind = f.event.as_ref().and_then(Field::as_str).ok_or_else(|| {
            self.err(
                line_no,
                field_error(
                    f.event.as_ref(),
                    "event",
                    "begin, read, write, commit or abort",
                ),
            )
        })?;
        let txn_field = f.txn.as_ref();
        let txn = txn_field.and_then(Field::id).ok_or_else(|| {
            self.err(
                line_no,
                field_error(txn_field, "txn", "a number or a string"),
            )
        })?;
        match &*kind {
            "begin" => self.begin(&f, txn, line_no),
            "commit" | "abort" => self.end(&f, &kind, &txn, line_no),
            "read" | "write" => self.access(&f, &kind, txn, line_no),
            other => Err(self.err(
                line_no,
                format!("unknown event {other:?} (begin, read, write, commit or abort)"),
            )),
        }
    }

    /// A `begin`: the transaction, in its session, which must have none open.
    fn begin(&mut self, f: &Fields<'a>, txn: Id<'a>, line_no: u32) -> Result<(), InputError> {
        let session_field = f.session.as_ref();
        let session = session_field.and_then(Field::id).ok_or_else(|| {
            self.err(
                line_no,
                field_error(session_field, "session", "a number or a string"),
            )
        })?;
        if txn.is_initial() {
            return Err(self.err(
                line_no,
                "\"initial\" is the initial state, not a transaction to begin".into(),
            ));
        }
        if self.txns.contains_key(&txn) {
            return Err(self.err(line_no, format!("transaction {txn} begins twice")));
        }
        let next = self.sessions.len() as u32;
        let s = *self.sessions.entry(session.clone()).or_insert(next);
        let s = if s == next {
            self.open.push(None);
            self.session_names.push(session);
            self.b.session(session_field.and_then(Field::as_u64))
        } else {
            s
        };
        if let Some((other, begun)) = &self.open[s as usize] {
            return Err(self.err(
                line_no,
                format!(
                    "transaction {txn} begins in session {} while its transaction \
                     {other} (begun on line {begun}) is still open: a session runs one \
                     transaction at a time",
                    self.session_names[s as usize]
                ),
            ));
        }
        self.open[s as usize] = Some((txn.clone(), line_no));
        let bt = self
            .b
            .begin_at(s, f.txn.as_ref().and_then(Field::as_u64), line_no);
        self.txns.insert(
            txn,
            TxnState {
                bt,
                end: None,
                session: s,
                line: line_no,
            },
        );
        Ok(())
    }

    /// A `commit` or `abort` (`kind`) of a transaction that began and has not ended.
    fn end(
        &mut self,
        f: &Fields<'a>,
        kind: &str,
        txn: &Id<'a>,
        line_no: u32,
    ) -> Result<(), InputError> {
        match self.txns.get_mut(txn) {
            Some(state) if state.end.is_none() => {
                same_session(f, txn, state, &self.sessions, &self.session_names)
                    .map_err(|m| InputError::new(self.source, line_no, m))?;
                state.end = Some(kind == "commit");
                self.open[state.session as usize] = None;
                Ok(())
            }
            Some(_) => Err(self.err(line_no, format!("transaction {txn} ends twice"))),
            None => Err(self.err(
                line_no,
                format!("{kind} of transaction {txn} before its begin"),
            )),
        }
    }

    /// A `read` or `write` (`kind`) of an open transaction (the initial state only writes).
    fn access(
        &mut self,
        f: &Fields<'a>,
        kind: &str,
        txn: Id<'a>,
        line_no: u32,
    ) -> Result<(), InputError> {
        let key_field = f.key.as_ref();
        let key = match key_field.and_then(Field::as_str) {
            Some(s) => s,
            None => key_field.and_then(Field::number_text).ok_or_else(|| {
                self.err(
                    line_no,
                    field_error(key_field, "key", "a string or a number"),
                )
            })?,
        };
        let bt = if txn.is_initial() {
            if kind == "read" {
                return Err(self.err(line_no, "the initial state only writes".into()));
            }
            BuilderTxn::INITIAL
        } else {
            match self.txns.get(&txn) {
                Some(state) if state.end.is_none() => {
                    same_session(f, &txn, state, &self.sessions, &self.session_names)
                        .map_err(|m| self.err(line_no, m))?;
                    state.bt
                }
                Some(_) => {
                    return Err(self.err(
                        line_no,
                        format!("{kind} in transaction {txn} after it ended"),
                    ))
                }
                None => {
                    return Err(self.err(
                        line_no,
                        format!("{kind} of transaction {txn} before its begin"),
                    ))
                }
            }
        };
        let writer = match &f.writer {
            None => None,
            Some(w) if w.is_null() => None,
            Some(w) => match w.id() {
                Some(id) if id.is_initial() => Some(Writer::Initial),
                Some(id) => Some(Writer::Txn(id)),
                None => {
                    return Err(self.err(
                        line_no,
                        "\"writer\" must be a transaction id or \"initial\"".into(),
                    ))
                }
            },
        };
        self.key_text.clear();
        self.key_text.push_str(&key);
        let key = self.b.key(&self.key_text);
        self.events.push(Event {
            line: line_no,
            write: kind == "write",
            txn: bt,
            key,
            value: f.value.as_ref().map(Field::value_u64),
            writer,
        });
        Ok(())
    }

    /// The history: transactions that never committed aborted, then every read and write
    /// in log order, each read from the writer it names (or by its value).
    fn finish(mut self) -> Result<History, InputError> {
        for state in self.txns.values() {
            if state.end != Some(true) {
                self.b.abort(state.bt);
            }
        }
        for e in std::mem::take(&mut self.events) {
            if e.write {
                self.b.write(e.txn, e.key, e.value, e.line);
                continue;
            }
            let from = match &e.writer {
                Some(Writer::Initial) => ReadFrom::Initial,
                Some(Writer::Txn(w)) => match self.txns.get(w) {
                    Some(state) => ReadFrom::Txn(state.bt),
                    None => return Err(self.err(e.line, format!("the writer {w} never begins"))),
                },
                None => match e.value {
                    Some(v) => ReadFrom::Value(v),
                    None => ReadFrom::Unknown,
                },
            };
            self.b.read(e.txn, e.key, e.value, from, e.line);
        }
        self.b.build()
    }
}

fn unrepresentable(problem: String) -> FormatError {
    FormatError::Unrepresentable {
        format: Format::Events,
        problem,
    }
}

/// Whose write a read saw, as the `writer` field names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrittenBy {
    /// The initial state (`"initial"`).
    Initial,
    /// The transaction with this id.
    Txn(u64),
}

/// Writes events of the format one per line, fields in the documented order (`event`,
/// `session`, `txn`, `key`, `value`, `writer`). Session and transaction ids are numbers; values
/// are any JSON value and may be left out.
#[derive(Debug)]
pub struct EventWriter<W: Write> {
    out: W,
}

impl<W: Write> EventWriter<W> {
    /// A writer of events to `out` (wrap a file in a `BufWriter`).
    pub fn new(out: W) -> EventWriter<W> {
        EventWriter { out }
    }

    /// The underlying output.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// A write of the initial state: no session, transaction `"initial"`, no begin.
    pub fn initial_write(&mut self, key: &str, value: Option<&Json>) -> std::io::Result<()> {
        self.out
            .write_all(b"{\"event\":\"write\",\"txn\":\"initial\"")?;
        self.key_value(key, value)?;
        self.out.write_all(b"}\n")
    }

    /// Transaction `txn` of `session` begins.
    pub fn begin(&mut self, session: u64, txn: u64) -> std::io::Result<()> {
        self.head("begin", session, txn)?;
        self.out.write_all(b"}\n")
    }

    /// Transaction `txn` of `session` writes `value` (if given) to `key`.
    pub fn write(
        &mut self,
        session: u64,
        txn: u64,
        key: &str,
        value: Option<&Json>,
    ) -> std::io::Result<()> {
        self.head("write", session, txn)?;
        self.key_value(key, value)?;
        self.out.write_all(b"}\n")
    }

    /// Transaction `txn` of `session` reads `value` (if given) of `key`, written by `writer`
    /// (if known).
    pub fn read(
        &mut self,
        session: u64,
        txn: u64,
        key: &str,
        value: Option<&Json>,
        writer: Option<WrittenBy>,
    ) -> std::io::Result<()> {
        self.head("read", session, txn)?;
        self.key_value(key, value)?;
        match writer {
            Some(WrittenBy::Initial) => self.out.write_all(b",\"writer\":\"initial\"")?,
            Some(WrittenBy::Txn(w)) => write!(self.out, ",\"writer\":{w}")?,
            None => {}
        }
        self.out.write_all(b"}\n")
    }

    /// Transaction `txn` of `session` commits (`committed`) or aborts.
    pub fn end(&mut self, session: u64, txn: u64, committed: bool) -> std::io::Result<()> {
        self.head(if committed { "commit" } else { "abort" }, session, txn)?;
        self.out.write_all(b"}\n")
    }

    /// Flushes the output.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    fn head(&mut self, event: &str, session: u64, txn: u64) -> std::io::Result<()> {
        write!(
            self.out,
            "{{\"event\":\"{event}\",\"session\":{session},\"txn\":{txn}"
        )
    }

    fn key_value(&mut self, key: &str, value: Option<&Json>) -> std::io::Result<()> {
        self.out.write_all(b",\"key\":")?;
        serde_json::to_writer(&mut self.out, key)?;
        if let Some(v) = value {
            self.out.write_all(b",\"value\":")?;
            serde_json::to_writer(&mut self.out, v)?;
        }
        Ok(())
    }
}

/// Writes `h` as an event log: transactions session by session; transaction ids are the
/// history's transaction numbers; the initial transaction's explicit writes first.
pub(crate) fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    // The write each read must observe to be expressed by naming a transaction.
    let mut last_write: FxHashMap<(TxnId, u32), u32> = FxHashMap::default();
    for (i, op) in h.ops().iter().enumerate() {
        if op.kind == OpKind::Write {
            last_write.insert((op.txn, op.key), i as u32);
        }
    }
    let mut events = EventWriter::new(out);
    let value = |v: Option<u64>| v.map(Json::from);
    for o in h.txn(INITIAL_TXN).ops() {
        let op = h.op(o);
        // Implicit initial writes too: the initial transaction keeps the same keys.
        if op.kind == OpKind::Write {
            events.initial_write(h.key_name(op.key), value(op.value).as_ref())?;
        }
    }
    for (s, session) in h.sessions().iter().enumerate() {
        let s = s as u64;
        for t in session.txns() {
            events.begin(s, u64::from(t))?;
            let mut own: FxHashMap<u32, u32> = FxHashMap::default();
            for o in h.txn(t).ops() {
                let op = h.op(o);
                let key = h.key_name(op.key);
                if op.kind == OpKind::Write {
                    own.insert(op.key, o);
                    events.write(s, u64::from(t), key, value(op.value).as_ref())?;
                    continue;
                }
                let Some(w) = h.read_from(o) else {
                    return Err(unrepresentable(format!(
                        "transaction {} reads {} from no known write",
                        h.txn_label(t),
                        key
                    )));
                };
                let wt = h.op(w).txn;
                let writer = if wt == INITIAL_TXN {
                    WrittenBy::Initial
                } else {
                    let expected = if wt == t {
                        own.get(&op.key).copied()
                    } else {
                        last_write.get(&(wt, op.key)).copied()
                    };
                    if expected != Some(w) {
                        return Err(unrepresentable(format!(
                            "transaction {} reads {} from a write of {} that is not the one naming the transaction gives",
                            h.txn_label(t),
                            key,
                            h.txn_label(wt)
                        )));
                    }
                    WrittenBy::Txn(u64::from(wt))
                };
                events.read(s, u64::from(t), key, value(op.value).as_ref(), Some(writer))?;
            }
            events.end(s, u64::from(t), h.txn(t).is_committed())?;
        }
    }
    Ok(())
}

/// What writing `h` as an event log drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = Vec::new();
    if h.has_timestamps() {
        notes.push("the event format carries no timestamps; they are dropped".into());
    }
    let empty = h.sessions().iter().filter(|s| s.txns().is_empty()).count();
    if empty > 0 {
        notes.push(format!(
            "the event format names sessions only through their transactions; {empty} session(s) without any are dropped"
        ));
    }
    notes.extend(super::common::initial_reads_note(h, "the event format"));
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"
{"event":"begin","session":1,"txn":"1-1"}
{"event":"begin","session":"b","txn":7}
{"event":"read","session":1,"txn":"1-1","key":"acct1","value":100,"writer":"initial"}
{"event":"write","session":1,"txn":"1-1","key":"acct1","value":110}
{"event":"commit","session":1,"txn":"1-1"}
{"event":"read","session":"b","txn":7,"key":"acct1","value":110,"writer":"1-1"}
{"event":"read","session":"b","txn":7,"key":"acct2","value":{"name":"x"}}
{"event":"abort","session":"b","txn":7}
{"event":"write","txn":"initial","key":"acct2","value":{"name":"x"}}
"#;

    #[test]
    fn reads_every_event_kind() {
        let h = read(LOG.as_bytes(), "log.jsonl").unwrap();
        assert_eq!(h.sessions().len(), 2);
        assert_eq!(h.txn_count(), 3);
        assert!(h.txn(1).is_committed());
        assert!(!h.txn(2).is_committed());
        let reads: Vec<_> = h.txn(2).ops().collect();
        assert_eq!(h.writer_txn(reads[0]), Some(1));
        // Matched by value: the initial state's write of the same JSON value.
        assert_eq!(h.writer_txn(reads[1]), Some(INITIAL_TXN));
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        let g = read(&out, "again").unwrap();
        h.same_content(&g).unwrap();
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line, needle) in [
            ("{\"event\":\"read\",\"txn\":1,\"key\":\"x\"}", 1, "before its begin"),
            ("{\"event\":\"begin\",\"session\":1,\"txn\":1}\n{\"event\":\"jump\",\"txn\":1}", 2, "unknown event"),
            ("{\"event\":\"begin\",\"txn\":1}", 1, "missing \"session\""),
            ("{\"event\":\"begin\",\"session\":1,\"txn\":1}\n{\"event\":\"read\",\"txn\":1,\"key\":\"x\",\"writer\":9}", 2, "never begins"),
            ("{\"event\":", 1, "not a JSON object"),
        ] {
            let e = read(text.as_bytes(), "f").unwrap_err();
            assert_eq!(e.line(), line, "{text}");
            assert!(e.message.contains(needle), "{e}");
        }
        assert!(looks_like(br#"{"event":"begin","session":1,"txn":1}"#));
        assert!(!looks_like(br#"{"format": 1}"#));
    }

    #[test]
    fn the_event_writer_writes_what_the_reader_reads() {
        let mut events = EventWriter::new(Vec::new());
        let text = Json::from("a name");
        events.initial_write("k", None).unwrap();
        events.begin(7, 1).unwrap();
        events.write(7, 1, "k", Some(&Json::from(5))).unwrap();
        events.end(7, 1, true).unwrap();
        events.begin(8, 2).unwrap();
        events
            .read(8, 2, "k", Some(&Json::from(5)), Some(WrittenBy::Txn(1)))
            .unwrap();
        events.write(8, 2, "j\"", Some(&text)).unwrap();
        events.read(8, 2, "j\"", Some(&text), None).unwrap();
        events.end(8, 2, false).unwrap();
        events.begin(8, 3).unwrap();
        events
            .read(8, 3, "k", None, Some(WrittenBy::Initial))
            .unwrap();
        events.end(8, 3, true).unwrap();
        let out = String::from_utf8(events.into_inner()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], r#"{"event":"write","txn":"initial","key":"k"}"#);
        assert_eq!(
            lines[5],
            r#"{"event":"read","session":8,"txn":2,"key":"k","value":5,"writer":1}"#
        );
        assert_eq!(
            lines[6],
            r#"{"event":"write","session":8,"txn":2,"key":"j\"","value":"a name"}"#
        );
        assert_eq!(lines[8], r#"{"event":"abort","session":8,"txn":2}"#);
        let h = read(out.as_bytes(), "w.jsonl").unwrap();
        assert_eq!(h.txn_count(), 4);
        assert!(h.txn(1).is_committed() && !h.txn(2).is_committed());
        let reads: Vec<_> = h
            .txn(2)
            .ops()
            .filter(|&o| h.op(o).kind == OpKind::Read)
            .collect();
        assert_eq!(h.writer_txn(reads[0]), Some(1));
        // Matched by value: its own write of the same text.
        assert_eq!(h.writer_txn(reads[1]), Some(2));
        let last = h.txn(3).ops().next().unwrap();
        assert_eq!(h.writer_txn(last), Some(INITIAL_TXN));
    }

    #[test]
    fn contradictory_events_are_errors_naming_the_line() {
        let begin = "{\"event\":\"begin\",\"session\":1,\"txn\":1}\n";
        for (text, line, needle) in [
            // A write naming another session than its transaction's.
            (
                format!("{begin}{{\"event\":\"write\",\"session\":2,\"txn\":1,\"key\":\"x\",\"value\":1}}"),
                2,
                "names session 2, but transaction 1 began in session 1 (line 1)",
            ),
            // ... or a session never begun.
            (
                format!("{begin}{{\"event\":\"commit\",\"session\":\"1\",\"txn\":1}}"),
                2,
                "began in session 1",
            ),
            // Two open transactions in one session.
            (
                format!("{begin}{{\"event\":\"begin\",\"session\":1,\"txn\":2}}"),
                2,
                "transaction 2 begins in session 1 while its transaction 1 (begun on line 1) is still open",
            ),
            // A field given twice.
            (
                format!("{begin}{{\"event\":\"write\",\"txn\":1,\"key\":\"x\",\"key\":\"y\",\"value\":1}}"),
                2,
                "duplicate field `key`",
            ),
            (
                "{\"event\":\"begin\",\"session\":1,\"session\":2,\"txn\":1}".to_string(),
                1,
                "each field may appear once",
            ),
        ] {
            let e = read(text.as_bytes(), "f").unwrap_err();
            assert_eq!(e.line(), line, "{text}: {e}");
            assert!(e.message.contains(needle), "{e}");
        }
        // The same session named consistently, one transaction after another, is fine.
        let ok = format!(
            "{begin}{{\"event\":\"write\",\"session\":1,\"txn\":1,\"key\":\"x\",\"value\":1}}\n\
             {{\"event\":\"commit\",\"session\":1,\"txn\":1}}\n\
             {{\"event\":\"begin\",\"session\":1,\"txn\":2}}\n\
             {{\"event\":\"read\",\"txn\":2,\"key\":\"x\",\"value\":1}}"
        );
        let h = read(ok.as_bytes(), "f").unwrap();
        assert_eq!(h.sessions().len(), 1);
    }
}
