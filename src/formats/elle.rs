//! Elle / Jepsen histories (Kingsbury & Alvaro, VLDB'20), in EDN or in Jepsen's JSON
//! rendering, for the rw-register and list-append models. A history is a sequence of
//! operations (one map per line, or one vector of maps):
//!
//! ```clojure
//! {:type :invoke, :f :txn, :value [[:append :x 1] [:r :y nil]], :process 0, :time 10, :index 0}
//! {:type :ok,     :f :txn, :value [[:append :x 1] [:r :y [2 3]]], :process 0, :time 25, :index 1}
//! ```
//!
//! - Micro-operations: `[:r k v]` and `[:w k v]` (rw-register; a read of `nil` reads the
//!   initial value), `[:append k v]` and `[:r k [v …]]` (list-append; the read observes the
//!   append of its last element, or the initial value for `[]`/`nil`). Keys are integers,
//!   keywords or strings; values are unsigned integers, unique per key.
//! - Which operations are transactions (Elle's rules, `elle.list-append/check`): those of a
//!   client, an integer `:process`; operations of other processes (`:nemesis`) are skipped and
//!   counted in a note. `:f` is not read: any `:f` is a transaction when its `:value` is a
//!   list of micro-operations (elle-cli's `:f :read`, or no `:f`); a client operation with
//!   another `:value` (or `nil`) is skipped and counted. An operation without `:process` (the
//!   Elle paper's example, many checkers' anomaly tests) is a transaction in a session of its
//!   own, with a note: Elle drops such operations (jepsen-io/elle#20) and then has nothing to
//!   judge.
//! - Each `:invoke` is paired with the next completion of its `:process`. A history without
//!   invocations (Elle's and Plume's tests) is read completion by completion; in a history with
//!   invocations, a completion without one is an error. `:ok` is a committed transaction with
//!   the completion's values; `:fail` an aborted one (its writes, from the invocation, are
//!   aborted writes; its reads returned nothing and are dropped); `:info` is indeterminate, as
//!   Elle treats it: in list-append a transaction that may have committed, kept (as committed)
//!   when a read observes one of its appends or it has a non-`nil` read (its `nil` reads are
//!   unknown and dropped); in rw-register it takes part in no edge, and is kept (writes only)
//!   only when a committed read observes one of its writes. The others are left out and
//!   [`History::input_notes`] says how many. An invocation never completed counts as `:info`.
//! - A process whose operation ended in `:info` crashed: its next operation starts a new
//!   session. Each process is otherwise one session.
//! - A file that yields no micro-operation at all (no transaction, or only empty ones) is an
//!   input error naming what was skipped: never an empty, trivially consistent history.
//! - **List-append reads reveal each key's version order**: a read `[1 2 3]` shows the
//!   appends of 1, 2, 3 were installed in that order. As Elle does, the longest read of a key
//!   (duplicates dropped) is its version order ([`History::known_write_order`]), which the
//!   checkers use as write–write facts. A read that is not a prefix of it is Elle's
//!   `:incompatible-order`, a read holding an element twice its `:duplicate-elements`: both
//!   anomalies of the run (forbidden from read committed up), recorded as
//!   [`History::observed_anomalies`] naming the reads and lines, never input errors.
//! - The positions of the invocation and of the completion in the history become the
//!   transaction's client real-time interval ([`crate::history::RealTime`]), as Elle orders
//!   operations: by history position, never by `:time`. They are not database timestamps
//!   (a transaction takes effect somewhere inside its interval) and only the real-time levels
//!   use them (`strict-ser`). `:info` transactions get none; completions without an
//!   invocation get none.
//!
//! Jepsen's JSON rendering is the same maps with string keys and values (`"type": "ok"`,
//! `["append", "x", 1]`), as JSON lines or one array. Writing emits the rw-register model
//! (an invocation and a completion per transaction, session by session, `:process` = session).

use std::borrow::Cow;
use std::io::Write;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{self, InitialValues};
use super::edn::{Edn, EdnError, Reader};
use super::text::{json_error, utf8, LineIndex};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::AnomalyId;
use crate::history::{
    BuilderTxn, History, HistoryBuilder, KeyId, OpKind, ReadFrom, RealTime, SessionId, INITIAL_TXN,
};

/// Reads an Elle history in EDN.
///
/// Each operation map is read entry by entry, without building a value tree; its `:value`
/// is kept as text and read only once its transaction completes, by a scanner for the usual
/// shape of micro-operations (see `Mops::fast`), falling back to the full EDN reader — which
/// also words any error — for every other shape.
pub fn read_edn(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let text = utf8(bytes, source)?;
    let mut lines = LineIndex::new(bytes);
    let mut reader = Reader::new(text);
    let mut state = State::new(source);
    let edn_error = |lines: &mut LineIndex, e: EdnError| {
        InputError::new(
            source,
            lines.line_at(e.offset),
            format!("invalid EDN: {}", e.message),
        )
    };
    reader.skip();
    let wrapped = text.as_bytes().get(reader.pos) == Some(&b'[')
        && text[reader.pos + 1..].trim_start().starts_with('{');
    if wrapped {
        reader.pos += 1;
    }
    loop {
        if wrapped {
            reader.skip();
            if text.as_bytes().get(reader.pos) == Some(&b']') {
                reader.pos += 1;
                if !reader.at_end() {
                    return Err(InputError::new(
                        source,
                        lines.line_at(reader.pos),
                        "unexpected input after the history's closing `]`",
                    ));
                }
                break;
            }
        }
        match reader.next_start() {
            Ok(true) => {}
            Ok(false) if wrapped => {
                return Err(InputError::new(
                    source,
                    1,
                    "the history's `[` is never closed",
                ))
            }
            Ok(false) => break,
            Err(e) => return Err(edn_error(&mut lines, e)),
        }
        let line = lines.line_at(reader.pos);
        let op = if reader.peek() == Some(b'{') {
            edn_op(&mut reader, line).map_err(|e| edn_error(&mut lines, e))?
        } else {
            let value = reader.value(0).map_err(|e| edn_error(&mut lines, e))?;
            tree_op(value, source, line)?
        };
        state.op(op)?;
    }
    state.finish()
}

/// Reads an Elle history in Jepsen's JSON rendering (JSON lines, or one array).
///
/// Each operation is deserialised into its few fields (borrowed, no value tree), its
/// `"value"` kept as JSON text and read as in [`read_edn`]; an operation of another shape
/// (not an object, a repeated field) is read in full.
pub fn read_json(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let text = utf8(bytes, source)?;
    let mut state = State::new(source);
    if text.trim_start().starts_with('[') {
        let raws: Vec<&RawValue> =
            serde_json::from_str(text).map_err(|e| json_error(source, 1, &e))?;
        let mut lines = LineIndex::new(bytes);
        for raw in raws {
            let line = lines.line_of(raw.get().as_bytes());
            state.op(json_op(raw.get(), source, line)?)?;
        }
    } else {
        for (line_no, line) in super::text::Lines::new(bytes) {
            // `text` is UTF-8 and lines end at ASCII bytes, so the slice is on boundaries.
            let start = line.as_ptr() as usize - bytes.as_ptr() as usize;
            let line = text[start..start + line.len()].trim_matches([' ', '\t', '\r']);
            if line.is_empty() {
                continue;
            }
            state.op(json_op(line, source, line_no)?)?;
        }
    }
    state.finish()
}

/// The fields of a Jepsen JSON operation that matter, borrowed from the input.
#[derive(Deserialize)]
struct JsonOp<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<&'a RawValue>,
    #[serde(default, borrow)]
    f: Option<&'a RawValue>,
    #[serde(default, borrow, alias = ":value")]
    value: Option<&'a RawValue>,
    #[serde(default, borrow)]
    process: Option<&'a RawValue>,
    #[serde(default, borrow)]
    time: Option<&'a RawValue>,
}

/// A JSON string's text, a leading `:` removed (how Jepsen's JSON writes keywords).
fn json_word(raw: &RawValue) -> Option<Cow<'_, str>> {
    let t = raw.get().trim();
    if !t.starts_with('"') {
        return None;
    }
    if !t.contains('\\') && t.len() >= 2 {
        let s = &t[1..t.len() - 1];
        return Some(Cow::Borrowed(s.strip_prefix(':').unwrap_or(s)));
    }
    let s: String = serde_json::from_str(t).ok()?;
    Some(Cow::Owned(match s.strip_prefix(':') {
        Some(rest) => rest.to_string(),
        None => s,
    }))
}

/// A JSON integer that fits in an `i64` (as the EDN reader's integers).
fn json_int(raw: &RawValue) -> Option<i64> {
    raw.get().trim().parse().ok()
}

/// One operation of a Jepsen JSON history: its fields, or (any other shape) the whole value.
fn json_op<'a>(text: &'a str, source: &str, line: u32) -> Result<RawOp<'a>, InputError> {
    if text.trim_start().starts_with('{') {
        if let Ok(op) = serde_json::from_str::<JsonOp<'a>>(text) {
            return Ok(RawOp {
                line,
                ty: op.ty.and_then(json_word),
                process: op.process.map_or(Proc::Missing, |p| match json_int(p) {
                    Some(i) => Proc::Int(i),
                    None if p.get().trim() == "null" => Proc::Missing,
                    None => Proc::Other,
                }),
                txn: op.f.and_then(json_word).as_deref() == Some("txn"),
                time: op.time.and_then(json_int),
                value: op
                    .value
                    .map_or(OpValue::Missing, |v| OpValue::Json(v.get())),
            });
        }
    }
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| json_error(source, line, &e))?;
    let mut op = tree_op(Edn::from_json(v), source, line)?;
    if let OpValue::Tree(t) = op.value {
        op.value = OpValue::JsonTree(t);
    }
    Ok(op)
}

/// A keyword's or string's text as [`Edn::word`] gives it, kept borrowed where it can be.
fn edn_word(v: Edn<'_>) -> Option<Cow<'_, str>> {
    match v {
        Edn::Keyword(k) => Some(Cow::Borrowed(k)),
        Edn::Str(Cow::Borrowed(s)) => Some(Cow::Borrowed(s.strip_prefix(':').unwrap_or(s))),
        Edn::Str(Cow::Owned(s)) => Some(Cow::Owned(match s.strip_prefix(':') {
            Some(rest) => rest.to_string(),
            None => s,
        })),
        _ => None,
    }
}

/// Reads an EDN operation map (the reader at its `{`) entry by entry: `:type`, `:f`,
/// `:process` and `:time` as values, `:value` kept as text, every other entry skipped. As in
/// [`Edn::get`], the first entry of a key counts; keys are keywords or strings (`:value` also
/// as the string `":value"`, as [`Edn::word`] reads it).
fn edn_op<'a>(r: &mut Reader<'a>, line: u32) -> Result<RawOp<'a>, EdnError> {
    let open = r.pos;
    r.pos += 1;
    let mut op = RawOp {
        line,
        ty: None,
        process: Proc::Missing,
        txn: false,
        time: None,
        value: OpValue::Missing,
    };
    // Whether :type, :f, :process, :time, :value were seen.
    let mut seen = [false; 5];
    loop {
        r.skip_discards(0)?;
        match r.peek() {
            None => return Err(r.error_at(open, "`{` is never closed")),
            Some(b'}') => {
                r.pos += 1;
                return Ok(op);
            }
            _ => {}
        }
        let key = r.value(1)?;
        r.skip_discards(0)?;
        match r.peek() {
            None => return Err(r.error_at(open, "`{` is never closed")),
            Some(b'}') => return Err(r.error_at(open, "a map with an odd number of forms")),
            _ => {}
        }
        let name = match &key {
            Edn::Keyword(n) => Some(*n),
            Edn::Str(s) => Some(s.as_ref()),
            _ => None,
        };
        let is_value = matches!(key, Edn::Keyword("value"))
            || matches!(&key, Edn::Str(s) if s == "value" || s == ":value");
        let slot = match name {
            _ if is_value => 4,
            Some("type") => 0,
            Some("f") => 1,
            Some("process") => 2,
            Some("time") => 3,
            _ => usize::MAX,
        };
        if slot == usize::MAX || seen[slot] {
            r.skip_value(1)?;
            continue;
        }
        seen[slot] = true;
        if slot == 4 {
            let start = r.pos;
            r.skip_value(1)?;
            op.value = OpValue::Edn(r.slice(start, r.pos));
            continue;
        }
        let v = r.value(1)?;
        match slot {
            0 => op.ty = edn_word(v),
            1 => op.txn = edn_word(v).as_deref() == Some("txn"),
            2 => {
                op.process = match v {
                    Edn::Int(p) => Proc::Int(p),
                    Edn::Nil => Proc::Missing,
                    _ => Proc::Other,
                }
            }
            _ => op.time = if let Edn::Int(t) = v { Some(t) } else { None },
        }
    }
}

/// An operation read as a whole value: checked to be a map, its fields taken as
/// [`Edn::get`] finds them.
fn tree_op<'a>(op: Edn<'a>, source: &str, line: u32) -> Result<RawOp<'a>, InputError> {
    if !matches!(op, Edn::Map(_)) {
        return Err(InputError::new(
            source,
            line,
            format!("an operation is a map, found {}", op.describe()),
        ));
    }
    let int = |name: &str| match op.get(name) {
        Some(Edn::Int(i)) => Some(*i),
        _ => None,
    };
    let time = int("time");
    let process = match op.get("process") {
        None | Some(Edn::Nil) => Proc::Missing,
        Some(Edn::Int(p)) => Proc::Int(*p),
        Some(_) => Proc::Other,
    };
    let ty = op
        .get("type")
        .and_then(Edn::word)
        .map(|w| Cow::Owned(w.to_string()));
    let txn = op.get("f").and_then(Edn::word) == Some("txn");
    let value = match op {
        Edn::Map(entries) => entries
            .into_iter()
            .find(|(k, _)| k.word() == Some("value"))
            .map_or(OpValue::Missing, |(_, v)| OpValue::Tree(v)),
        _ => OpValue::Missing,
    };
    Ok(RawOp {
        line,
        ty,
        process,
        txn,
        time,
        value,
    })
}

/// An operation's `:process`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Proc {
    /// An integer: a client (Jepsen's `client-op?`).
    Int(i64),
    /// No `:process` at all (or `nil`): the shape of many checkers' anomaly tests.
    Missing,
    /// Anything else (`:nemesis`, a string): not a client, skipped.
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    Fail,
    Info,
}

/// An operation's `:value`, not yet read.
enum OpValue<'a> {
    /// No `:value` (read as nil).
    Missing,
    /// Its EDN text.
    Edn(&'a str),
    /// Its JSON text.
    Json(&'a str),
    /// Already read (an operation read as a whole value).
    Tree(Edn<'a>),
    /// Already read from JSON (an operation of an unusual shape): its strings are JSON's.
    JsonTree(Edn<'a>),
}

/// What an operation says, its micro-operations not yet read.
struct RawOp<'a> {
    line: u32,
    /// `:type`'s word, if it is a keyword or string.
    ty: Option<Cow<'a, str>>,
    /// `:process`.
    process: Proc,
    /// Whether `:f` is `:txn`.
    txn: bool,
    /// `:time`, if an integer.
    time: Option<i64>,
    value: OpValue<'a>,
}

/// A micro-operation: `list` is a range of `lists` for a list-append read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mop {
    kind: OpKind,
    key: KeyId,
    value: Option<u64>,
    list: Option<(u32, u32)>,
    /// A list-append `:append` (not a register `:w`).
    append: bool,
}

/// A completed (or never completed) transaction: its micro-operations are `mops[start..end]`.
struct Completed {
    /// Its client process; `None` for an operation without `:process` (its own session).
    process: Option<i64>,
    status: Status,
    line: u32,
    /// Positions in the history of the invocation and of the completion (client real time).
    real_time: Option<(u64, u64)>,
    mops: (u32, u32),
}

struct Pending<'a> {
    line: u32,
    position: u64,
    /// Whether its `:f` is `:txn`.
    txn: bool,
    value: OpValue<'a>,
}

/// Whether a `:value` is `nil` (or absent).
fn is_nil(value: &OpValue) -> bool {
    match value {
        OpValue::Missing => true,
        OpValue::Edn(t) => t.trim() == "nil",
        OpValue::Json(t) => t.trim() == "null",
        OpValue::Tree(t) | OpValue::JsonTree(t) => matches!(t, Edn::Nil),
    }
}

/// Whether a `:value` is a non-empty list of micro-operations `[f k v]` with `f` one of
/// `:r`, `:w`, `:append` (Elle reads any client operation's `:value` as a transaction; an
/// operation whose `:f` is not `:txn` is taken as one only when it has this shape). Parses
/// the value in full: only operations whose `:f` is not `:txn` come here.
fn looks_like_txn(value: &OpValue) -> bool {
    let parsed;
    let tree = match value {
        OpValue::Missing => return false,
        OpValue::Tree(t) | OpValue::JsonTree(t) => t,
        OpValue::Edn(text) => match Reader::new(text).value(0) {
            Ok(v) => {
                parsed = v;
                &parsed
            }
            Err(_) => return false,
        },
        OpValue::Json(text) => match serde_json::from_str(text) {
            Ok(v) => {
                parsed = Edn::from_json(v);
                &parsed
            }
            Err(_) => return false,
        },
    };
    match tree.items() {
        Some(items) if !items.is_empty() => items.iter().all(|m| {
            m.items().is_some_and(|p| {
                (p.len() == 3 && matches!(p[0].word(), Some("r" | "w" | "append")))
                    || (p.len() == 2 && p[0].word() == Some("r"))
            })
        }),
        _ => false,
    }
}

/// A key's name: an integer's decimal form, a keyword's name, a string's text
/// ([`string_key_name`]). `json`: the value came from JSON (no keywords there).
fn key_name<'b>(k: &'b Edn, buf: &'b mut String, json: bool) -> Option<&'b str> {
    match k {
        Edn::Int(i) => {
            use std::fmt::Write as _;
            buf.clear();
            let _ = write!(buf, "{i}");
            Some(buf)
        }
        Edn::Keyword(s) | Edn::Symbol(s) => Some(s),
        Edn::Str(s) => Some(string_key_name(s, json, buf)),
        _ => None,
    }
}

/// Whether `s` is one EDN token (what a keyword's name can be): not empty, without
/// whitespace or delimiters.
fn edn_token(s: &str) -> bool {
    !s.is_empty()
        && !s.bytes().any(|b| {
            b.is_ascii_whitespace()
                || matches!(
                    b,
                    b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';'
                )
        })
}

/// The name of a key that is a string. Keys of different types are different keys, as in
/// Elle: the string `"1"` is not the integer `1`, and (in EDN) the string `"x"` is not the
/// keyword `:x`. A string whose text could also name an integer key (its decimal form), a
/// keyword key (EDN: a token without delimiters) or another quoted name is named in double
/// quotes, as EDN writes it; any other string is named by its text.
fn string_key_name<'b>(s: &'b str, json: bool, buf: &'b mut String) -> &'b str {
    let int_like = s.parse::<i64>().is_ok_and(|i| i.to_string() == s);
    let keyword_like = !json && edn_token(s);
    if int_like || keyword_like || s.starts_with('"') {
        buf.clear();
        buf.push('"');
        buf.push_str(s);
        buf.push('"');
        buf
    } else {
        s
    }
}

fn uint(v: &Edn) -> Option<u64> {
    match v {
        Edn::Int(i) if *i >= 0 => Some(*i as u64),
        _ => None,
    }
}

/// Reads a transaction's micro-operations from a value tree into `out` (the general reader,
/// which words the errors).
fn mops_of_tree(
    value: &Edn,
    b: &mut HistoryBuilder,
    lists: &mut Vec<u64>,
    with_reads: bool,
    out: &mut Vec<Mop>,
    json: bool,
) -> Result<(), String> {
    let items = value.items().ok_or_else(|| {
        format!(
            ":value is a vector of micro-operations, found {}",
            value.describe()
        )
    })?;
    let mut buf = String::new();
    for m in items {
        let parts = match m.items() {
            Some(p) if p.len() == 3 => p,
            // `[:r k]`: a read not yet done, as Elle's own tests write invocations.
            Some(p) if p.len() == 2 && p[0].word() == Some("r") => p,
            _ => {
                return Err(format!(
                    "a micro-operation is [f k v], found {}",
                    m.describe()
                ))
            }
        };
        let f = parts[0].word().unwrap_or("");
        let key = key_name(&parts[1], &mut buf, json).ok_or_else(|| {
            format!(
                "a key is an integer, keyword or string, found {}",
                parts[1].describe()
            )
        })?;
        let key = b.key(key);
        let v = parts.get(2).unwrap_or(&Edn::Nil);
        let bad_value = || format!("a value is an unsigned integer, found {}", v.describe());
        match f {
            "w" | "append" => out.push(Mop {
                kind: OpKind::Write,
                key,
                value: Some(uint(v).ok_or_else(bad_value)?),
                list: None,
                append: f == "append",
            }),
            "r" if !with_reads => {}
            "r" => match v {
                Edn::Nil => out.push(Mop {
                    kind: OpKind::Read,
                    key,
                    value: None,
                    list: None,
                    append: false,
                }),
                Edn::Vector(items) | Edn::List(items) => {
                    let start = lists.len() as u32;
                    for x in items {
                        lists.push(uint(x).ok_or_else(|| {
                            format!(
                                "a list element is an unsigned integer, found {}",
                                x.describe()
                            )
                        })?);
                    }
                    out.push(Mop {
                        kind: OpKind::Read,
                        key,
                        value: items.last().and_then(uint),
                        list: Some((start, lists.len() as u32)),
                        append: false,
                    });
                }
                _ => out.push(Mop {
                    kind: OpKind::Read,
                    key,
                    value: Some(uint(v).ok_or_else(bad_value)?),
                    list: None,
                    append: false,
                }),
            },
            _ => {
                return Err(format!(
                    "a micro-operation's f is :r, :w or :append, found {}",
                    parts[0].describe()
                ))
            }
        }
    }
    Ok(())
}

/// A cursor over the text of a `:value`, for [`State::fast_mops`]. Every method returns
/// `None` on anything but the usual shape.
struct Scan<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scan<'a> {
    /// Skips whitespace and commas (whitespace in EDN; between JSON items).
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r' | b',') = self.text.as_bytes().get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// An EDN token: up to the next delimiter.
    #[inline]
    fn token(&mut self) -> &'a str {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        while let Some(&b) = bytes.get(self.pos) {
            if b.is_ascii_whitespace()
                || matches!(
                    b,
                    b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';'
                )
            {
                break;
            }
            self.pos += 1;
        }
        // Delimiters are ASCII: the slice is on character boundaries.
        self.text.get(start..self.pos).unwrap_or("")
    }

    /// `-?[0-9]+` fitting an `i64`.
    #[inline]
    fn int(&mut self) -> Option<i64> {
        let t = self.token();
        let digits = t.strip_prefix('-').unwrap_or(t);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    }

    /// A non-negative [`Self::int`].
    #[inline]
    fn uint(&mut self) -> Option<u64> {
        u64::try_from(self.int()?).ok()
    }

    /// A string without escapes (its content) or, in EDN, a keyword (its name).
    #[inline]
    fn name(&mut self, json: bool) -> Option<&'a str> {
        match self.peek()? {
            b'"' => {
                let rest = &self.text.as_bytes()[self.pos + 1..];
                let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
                if rest[end] != b'"' {
                    return None;
                }
                let s = self.text.get(self.pos + 1..self.pos + 1 + end)?;
                self.pos += end + 2;
                Some(s)
            }
            b':' if !json => {
                self.pos += 1;
                let t = self.token();
                (!t.is_empty()).then_some(t)
            }
            _ => None,
        }
    }

    /// `nil` (EDN) or `null` (JSON), consumed if it comes next.
    #[inline]
    fn nil(&mut self, json: bool) -> bool {
        let start = self.pos;
        if self.token() == if json { "null" } else { "nil" } {
            true
        } else {
            self.pos = start;
            false
        }
    }

    #[inline]
    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.pos += 1)
    }
}

/// The reading state shared by the EDN and JSON readers: operations arrive one at a time.
struct State<'a, 's> {
    source: &'s str,
    b: HistoryBuilder,
    /// The elements of every list-append read, each read a range.
    lists: Vec<u64>,
    /// Every transaction's micro-operations, each a range.
    mops: Vec<Mop>,
    /// Keys given as integers, already interned.
    int_keys: FxHashMap<i64, KeyId>,
    name: String,
    pending: FxHashMap<i64, Pending<'a>>,
    completed: Vec<Completed>,
    /// Whether any client invocation was seen (then every completion needs one).
    saw_invoke: bool,
    /// The first completion without an invocation: (line, process).
    orphan: Option<(u32, i64)>,
    /// Operations of non-client processes (`:nemesis`…), skipped.
    non_client: usize,
    /// Client operations whose `:value` is not a transaction, skipped.
    not_txn: usize,
    /// Invocations without `:process` (they cannot be paired), skipped.
    invokes_without_process: usize,
    /// Operations seen so far (the position of the next one in the history).
    position: u64,
}

impl<'a, 's> State<'a, 's> {
    fn new(source: &'s str) -> Self {
        State {
            source,
            b: HistoryBuilder::new(source),
            lists: Vec::new(),
            mops: Vec::new(),
            int_keys: FxHashMap::default(),
            name: String::new(),
            pending: FxHashMap::default(),
            completed: Vec::new(),
            saw_invoke: false,
            orphan: None,
            non_client: 0,
            not_txn: 0,
            invokes_without_process: 0,
            position: 0,
        }
    }

    /// Takes one operation: an invocation waits for its completion; a completion adds the
    /// transaction.
    fn op(&mut self, op: RawOp<'a>) -> Result<(), InputError> {
        let source = self.source;
        let line = op.line;
        let position = self.position;
        self.position += 1;
        let err = |m: String| InputError::new(source, line, m);
        // None: an invocation.
        let status = match op.ty.as_deref() {
            Some("invoke") => None,
            Some("ok") => Some(Status::Ok),
            Some("fail") => Some(Status::Fail),
            Some("info") => Some(Status::Info),
            Some(other) => {
                return Err(err(format!(
                    ":type is :invoke, :ok, :fail or :info, found :{other}"
                )))
            }
            None => {
                return Err(err(
                    "an operation needs :type (:invoke, :ok, :fail or :info)".into(),
                ))
            }
        };
        let process = match op.process {
            Proc::Other => {
                self.non_client += 1;
                return Ok(());
            }
            Proc::Missing if status.is_none() => {
                self.invokes_without_process += 1;
                return Ok(());
            }
            Proc::Missing => None,
            Proc::Int(p) => Some(p),
        };
        let Some(status) = status else {
            let Some(process) = process else {
                unreachable!("invocations without :process were skipped above")
            };
            self.saw_invoke = true;
            if self.pending.contains_key(&process) {
                return Err(err(format!(
                    "process {process} invokes again before its last invocation completed"
                )));
            }
            self.pending.insert(
                process,
                Pending {
                    line,
                    position,
                    txn: op.txn,
                    value: op.value,
                },
            );
            return Ok(());
        };
        let invocation = process.and_then(|p| self.pending.remove(&p));
        if let (None, Some(p), None) = (&invocation, process, self.orphan) {
            // A completion-only history (Elle's own tests, Plume's): the completion is the
            // transaction. Refused at the end if the history has invocations after all.
            self.orphan = Some((line, p));
        }
        // The value read: an :ok's completion (the results); a :fail's invocation (its reads
        // returned nothing); an :info's completion, or its invocation when the completion
        // carries none.
        // The transaction's line is the line of the value it is read from (an :ok's
        // completion, where the reads' results are), never an invocation whose reads are nil.
        let (value, with_reads, value_line) = match (status, &invocation) {
            (Status::Ok, _) => (&op.value, true, line),
            (Status::Fail, Some(inv)) => (&inv.value, false, inv.line),
            (Status::Fail, None) => (&op.value, false, line),
            (Status::Info, Some(inv)) if is_nil(&op.value) => (&inv.value, false, inv.line),
            (Status::Info, _) => (&op.value, true, line),
        };
        let is_txn = op.txn || invocation.as_ref().is_some_and(|i| i.txn);
        if is_nil(value) || (!is_txn && !looks_like_txn(value)) {
            self.not_txn += 1;
            return Ok(());
        }
        let mops = self.read_mops(value, with_reads).map_err(err)?;
        // Elle orders by history position, never by `:time` (notes/elle.md §1).
        let real_time = match (status, &invocation) {
            (Status::Ok | Status::Fail, Some(inv)) => Some((inv.position, position)),
            _ => None,
        };
        self.completed.push(Completed {
            process,
            status,
            line: value_line,
            real_time,
            mops,
        });
        Ok(())
    }

    /// Reads a `:value` into `self.mops`; returns its range.
    fn read_mops(&mut self, value: &OpValue<'a>, with_reads: bool) -> Result<(u32, u32), String> {
        let (start, lists_start) = (self.mops.len(), self.lists.len());
        let fast = match *value {
            OpValue::Edn(text) => self.fast_mops(text, false, with_reads),
            OpValue::Json(text) => self.fast_mops(text, true, with_reads),
            _ => None,
        };
        if fast.is_none() {
            self.mops.truncate(start);
            self.lists.truncate(lists_start);
            let parsed;
            let tree = match value {
                OpValue::Missing => &Edn::Nil,
                OpValue::Tree(tree) | OpValue::JsonTree(tree) => tree,
                OpValue::Edn(text) => {
                    parsed = Reader::new(text)
                        .value(0)
                        .map_err(|e| format!("invalid EDN: {}", e.message))?;
                    &parsed
                }
                OpValue::Json(text) => {
                    let v: serde_json::Value =
                        serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
                    parsed = Edn::from_json(v);
                    &parsed
                }
            };
            mops_of_tree(
                tree,
                &mut self.b,
                &mut self.lists,
                with_reads,
                &mut self.mops,
                matches!(value, OpValue::Json(_) | OpValue::JsonTree(_)),
            )?;
        }
        Ok((start as u32, self.mops.len() as u32))
    }

    /// Reads the usual shape of a `:value` straight into `self.mops`: a vector of `[f k v]`,
    /// `f` a keyword (EDN) or string, `k` an integer, a keyword or a string without escapes,
    /// `v` nil/null, an unsigned integer or a vector of them (a list-append read). `None` on
    /// any other shape, after which the caller reads the value in full (interning the same
    /// keys in the same order, so the ones interned here are no surprise).
    fn fast_mops(&mut self, text: &'a str, json: bool, with_reads: bool) -> Option<()> {
        let mut s = Scan { text, pos: 0 };
        s.ws();
        s.eat(b'[')?;
        loop {
            s.ws();
            match s.peek()? {
                b']' => {
                    s.pos += 1;
                    s.ws();
                    return (s.pos == text.len()).then_some(());
                }
                b'[' => s.pos += 1,
                _ => return None,
            }
            s.ws();
            let f = s.name(json)?;
            let f = if json || text.as_bytes()[s.pos - 1] == b'"' {
                f.strip_prefix(':').unwrap_or(f)
            } else {
                f
            };
            s.ws();
            let key = match s.peek()? {
                b'0'..=b'9' | b'-' => {
                    let i = s.int()?;
                    self.int_key(i)
                }
                b'"' => {
                    let name = s.name(json)?;
                    let mut buf = std::mem::take(&mut self.name);
                    let k = self.b.key(string_key_name(name, json, &mut buf));
                    self.name = buf;
                    k
                }
                _ => {
                    let name = s.name(json)?;
                    self.b.key(name)
                }
            };
            s.ws();
            match f {
                "w" | "append" => {
                    let v = s.uint()?;
                    self.mops.push(Mop {
                        kind: OpKind::Write,
                        key,
                        value: Some(v),
                        list: None,
                        append: f == "append",
                    });
                }
                "r" => {
                    let read = if s.peek()? == b'[' {
                        s.pos += 1;
                        let start = self.lists.len() as u32;
                        loop {
                            s.ws();
                            if s.peek()? == b']' {
                                s.pos += 1;
                                break;
                            }
                            let v = s.uint()?;
                            if with_reads {
                                self.lists.push(v);
                            }
                        }
                        let end = self.lists.len() as u32;
                        let last = (end > start).then(|| self.lists[end as usize - 1]);
                        (last, Some((start, end)))
                    } else if s.nil(json) {
                        (None, None)
                    } else {
                        (Some(s.uint()?), None)
                    };
                    if with_reads {
                        self.mops.push(Mop {
                            kind: OpKind::Read,
                            key,
                            value: read.0,
                            list: read.1,
                            append: false,
                        });
                    }
                }
                _ => return None,
            }
            s.ws();
            s.eat(b']')?;
        }
    }

    /// The key named by an integer (its decimal form, as the general reader names it).
    fn int_key(&mut self, i: i64) -> KeyId {
        if let Some(&k) = self.int_keys.get(&i) {
            return k;
        }
        use std::fmt::Write as _;
        self.name.clear();
        let _ = write!(self.name, "{i}");
        let k = self.b.key(&self.name);
        self.int_keys.insert(i, k);
        k
    }

    /// Adds the transactions to the builder and builds the history.
    fn finish(self) -> Result<History, InputError> {
        let State {
            source,
            mut b,
            mut lists,
            mut mops,
            pending,
            mut completed,
            saw_invoke,
            orphan,
            non_client,
            not_txn,
            invokes_without_process,
            ..
        } = self;
        if let (true, Some((line, process))) = (saw_invoke, orphan) {
            return Err(InputError::new(
                source,
                line,
                format!(
                    "a completion of process {process} without an invocation (this history \
                     has invocations, so each completion follows its own)"
                ),
            ));
        }
        // Invocations never completed are indeterminate.
        complete_open_invocations(
            source,
            pending,
            &mut b,
            &mut lists,
            &mut mops,
            &mut completed,
        )?;
        let ops_of = |c: &Completed| &mops[c.mops.0 as usize..c.mops.1 as usize];
        // A list-append transaction (appends or list reads) or a rw-register one.
        let list_append = |c: &Completed| ops_of(c).iter().any(|m| m.append || m.list.is_some());
        // The reads that count (Elle): all of an :ok; of a list-append :info, the non-nil ones
        // (its nil reads are unknown); none of a rw-register :info (Elle gives it no edges) or
        // of a :fail (whose reads returned nothing).
        let reads_used = |c: &Completed| match c.status {
            Status::Ok => true,
            Status::Info => list_append(c),
            Status::Fail => false,
        };
        let used = |c: &Completed, m: &Mop| {
            m.kind == OpKind::Read && (c.status == Status::Ok || m.list.is_some())
        };

        // The writes some read observed (only :info transactions need them).
        let observed = observed_writes(&completed, &lists, ops_of, reads_used, used);

        // The transactions, each completion in its process's session (a new one after a
        // crash), an operation without :process in a session of its own.
        let mut sessions: FxHashMap<i64, SessionId> = FxHashMap::default();
        let mut had_session: FxHashSet<i64> = FxHashSet::default();
        let mut left_out = 0usize;
        let mut without_process = 0usize;
        // Per list-append read that counts: (key, start, end, line, its transaction).
        let mut list_reads: Vec<(KeyId, u32, u32, u32, BuilderTxn)> = Vec::new();
        // The appends of kept transactions: committed ones, and aborted ones with their
        // transaction and line.
        let mut appends: Vec<(KeyId, u64)> = Vec::new();
        let mut aborted: FxHashMap<(KeyId, u64), (BuilderTxn, u32)> = FxHashMap::default();
        for c in &completed {
            let keep = match c.status {
                Status::Info => {
                    ops_of(c).iter().any(|m| {
                        m.kind == OpKind::Write && observed.contains(&(m.key, m.value.unwrap_or(0)))
                    }) || (reads_used(c) && ops_of(c).iter().any(|m| used(c, m)))
                }
                _ => true,
            };
            if keep {
                let s = match c.process {
                    None => {
                        without_process += 1;
                        b.session(None)
                    }
                    Some(p) => process_session(&mut b, &mut sessions, &mut had_session, p),
                };
                let t = b.begin_at(s, None, c.line);
                if c.status == Status::Fail {
                    b.abort(t);
                }
                if let Some((invoked, completed)) = c.real_time {
                    b.set_real_time(t, RealTime { invoked, completed });
                }
                for m in ops_of(c) {
                    match m.kind {
                        OpKind::Write => {
                            if let (true, Some(v)) = (m.append, m.value) {
                                if c.status == Status::Fail {
                                    aborted.insert((m.key, v), (t, c.line));
                                } else {
                                    appends.push((m.key, v));
                                }
                            }
                            b.write(t, m.key, m.value, c.line)
                        }
                        OpKind::Read if c.status != Status::Fail && !used(c, m) => {}
                        OpKind::Read => {
                            let from = m.value.map_or(ReadFrom::Initial, ReadFrom::Value);
                            b.read(t, m.key, m.value, from, c.line);
                            if let Some((s, e)) = m.list {
                                list_reads.push((m.key, s, e, c.line, t));
                            }
                        }
                    }
                }
            } else {
                left_out += 1;
            }
            if let (Status::Info, Some(p)) = (c.status, c.process) {
                // The process crashed: its next operation is a new session.
                sessions.remove(&p);
            }
        }
        drop(mops);
        version_orders(&mut b, &lists, &list_reads, &mut appends, &aborted);
        add_skip_notes(
            &mut b,
            non_client,
            not_txn,
            invokes_without_process,
            left_out,
            without_process,
        );
        if b.op_count() == 0 {
            return Err(nothing_to_check(
                source,
                &b,
                non_client,
                not_txn,
                invokes_without_process,
                left_out,
            ));
        }
        b.build()
    }
}

/// The writes some read that counts observed (`reads_used`, `used`: which reads count).
fn observed_writes<'m>(
    completed: &[Completed],
    lists: &[u64],
    ops_of: impl Fn(&Completed) -> &'m [Mop],
    reads_used: impl Fn(&Completed) -> bool,
    used: impl Fn(&Completed, &Mop) -> bool,
) -> FxHashSet<(KeyId, u64)> {
    let any_info = completed.iter().any(|c| c.status == Status::Info);
    let mut observed: FxHashSet<(KeyId, u64)> = FxHashSet::default();
    for c in completed.iter().filter(|c| any_info && reads_used(c)) {
        for m in ops_of(c).iter().filter(|m| used(c, m)) {
            match m.list {
                None => observed.extend(m.value.map(|v| (m.key, v))),
                Some((s, e)) => {
                    observed.extend(lists[s as usize..e as usize].iter().map(|&v| (m.key, v)))
                }
            }
        }
    }
    observed
}

/// The session of process `p`'s next transaction: its current one (`sessions`), or a new one
/// — the process's first session carries its id; later ones (after a crash) are anonymous.
fn process_session(
    b: &mut HistoryBuilder,
    sessions: &mut FxHashMap<i64, SessionId>,
    had_session: &mut FxHashSet<i64>,
    p: i64,
) -> SessionId {
    if let Some(&s) = sessions.get(&p) {
        return s;
    }
    let s = if had_session.insert(p) {
        b.session(u64::try_from(p).ok())
    } else {
        b.session(None)
    };
    sessions.insert(p, s);
    s
}

/// Invocations never completed (`pending`) are indeterminate: each becomes an `:info`
/// completion of its process, with the micro-operations of its invocation (skipped when it is
/// not a transaction).
fn complete_open_invocations(
    source: &str,
    pending: FxHashMap<i64, Pending<'_>>,
    b: &mut HistoryBuilder,
    lists: &mut Vec<u64>,
    mops: &mut Vec<Mop>,
    completed: &mut Vec<Completed>,
) -> Result<(), InputError> {
    let mut open: Vec<(i64, Pending)> = pending.into_iter().collect();
    open.sort_by_key(|(_, p)| p.line);
    for (process, p) in open {
        if !p.txn && !looks_like_txn(&p.value) {
            continue;
        }
        let start = mops.len() as u32;
        let tree;
        let value = match &p.value {
            OpValue::Missing => &Edn::Nil,
            OpValue::Tree(t) | OpValue::JsonTree(t) => t,
            OpValue::Edn(text) => {
                tree = Reader::new(text)
                    .value(0)
                    .map_err(|e| InputError::new(source, p.line, e.message))?;
                &tree
            }
            OpValue::Json(text) => {
                let v: serde_json::Value = serde_json::from_str(text)
                    .map_err(|e| InputError::new(source, p.line, e.to_string()))?;
                tree = Edn::from_json(v);
                &tree
            }
        };
        mops_of_tree(
            value,
            b,
            lists,
            false,
            mops,
            matches!(p.value, OpValue::Json(_) | OpValue::JsonTree(_)),
        )
        .map_err(|m| InputError::new(source, p.line, m))?;
        completed.push(Completed {
            process: Some(process),
            status: Status::Info,
            line: p.line,
            real_time: None,
            mops: (start, mops.len() as u32),
        });
    }
    Ok(())
}

/// The notes that say what was skipped or left out and why.
fn add_skip_notes(
    b: &mut HistoryBuilder,
    non_client: usize,
    not_txn: usize,
    invokes_without_process: usize,
    left_out: usize,
    without_process: usize,
) {
    if left_out > 0 {
        b.note(format!(
            "{left_out} indeterminate (:info) transaction(s) whose writes no read observed \
             (and, for list-append, that read nothing) are left out"
        ));
    }
    if without_process > 0 {
        b.note(format!(
            "{without_process} operation(s) carry no :process: each is read as a \
             transaction in a session of its own (Elle drops operations without an integer \
             :process, jepsen-io/elle#20)"
        ));
    }
    if invokes_without_process > 0 {
        b.note(format!(
            "{invokes_without_process} invocation(s) without :process are skipped (without \
             a process an invocation cannot be paired with its completion)"
        ));
    }
    if non_client > 0 {
        b.note(format!(
            "{non_client} operation(s) of non-client processes (a :process that is not an \
             integer, such as :nemesis) are skipped"
        ));
    }
    if not_txn > 0 {
        b.note(format!(
            "{not_txn} client operation(s) whose :value is not a list of micro-operations \
             ([:r k v], [:w k v], [:append k v]) are skipped"
        ));
    }
}

/// The error of a history with no operation to check, saying what was skipped.
fn nothing_to_check(
    source: &str,
    b: &HistoryBuilder,
    non_client: usize,
    not_txn: usize,
    invokes_without_process: usize,
    left_out: usize,
) -> InputError {
    // Nothing to judge: no transaction, or only empty ones.
    let skipped = non_client + not_txn + invokes_without_process + left_out;
    InputError::new(
        source,
        if skipped > 0 { 1 } else { 0 },
        format!(
            "no transaction to check: {}an Elle history is a sequence of operation maps \
             whose :value is a list of micro-operations, e.g. {{:type :ok, :process 0, \
             :value [[:append :x 1] [:r :y [1]]]}}",
            if skipped > 0 {
                format!(
                    "all {skipped} operation(s) were skipped or left out ({}); ",
                    b_notes_summary(non_client, not_txn, invokes_without_process, left_out)
                )
            } else if b.txn_count() > 1 {
                "its transactions have no micro-operations; ".to_string()
            } else {
                "the input holds no operation; ".to_string()
            }
        ),
    )
}

/// Counts of what was skipped, in words.
fn b_notes_summary(non_client: usize, not_txn: usize, invokes: usize, left_out: usize) -> String {
    let mut parts = Vec::new();
    for (n, what) in [
        (non_client, "of non-client processes"),
        (not_txn, "not transactions"),
        (invokes, "invocations without :process"),
        (left_out, "unobserved :info transactions"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.join(", ")
}

/// A list for messages: `[1 2 3]`, long ones elided in the middle.
fn show_list(list: &[u64]) -> String {
    let show = |xs: &[u64]| xs.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
    if list.len() <= 10 {
        format!("[{}]", show(list))
    } else {
        format!(
            "[{} … {}] ({} elements)",
            show(&list[..6]),
            show(&list[list.len() - 2..]),
            list.len()
        )
    }
}

/// The first element a list holds twice, if any.
fn first_duplicate(list: &[u64], seen: &mut FxHashSet<u64>) -> Option<u64> {
    seen.clear();
    list.iter().copied().find(|&v| !seen.insert(v))
}

/// Elle's list-append version orders (`elle.list-append/sorted-values`): each key's order is
/// its longest read (duplicates dropped), given to the builder as known write order. Reads
/// that are not a prefix of it are Elle's `:incompatible-order`, reads holding an element
/// twice its `:duplicate-elements`: both recorded as observed anomalies (forbidden from read
/// committed up), one incompatible order per key naming every read that contradicts.
fn version_orders(
    b: &mut HistoryBuilder,
    lists: &[u64],
    reads: &[ListRead],
    appends: &mut [(KeyId, u64)],
    aborted: &FxHashMap<(KeyId, u64), (BuilderTxn, u32)>,
) {
    if reads.is_empty() {
        return;
    }
    appends.sort_unstable();
    let list = |r: &ListRead| &lists[r.1 as usize..r.2 as usize];
    let longest = longest_reads(b.key_count(), reads);
    // Per key, the reads contradicting the longest.
    let mut contradicting: FxHashMap<KeyId, Vec<usize>> = FxHashMap::default();
    for (i, r) in reads.iter().enumerate() {
        let l = longest[r.0 as usize].unwrap_or(i);
        let (short, long) = (list(r), list(&reads[l]));
        if long[..short.len()] != *short {
            contradicting.entry(r.0).or_default().push(i);
        }
    }
    let mut seen = FxHashSet::default();
    let mut order = Vec::new();
    let mut found = ListAnomalies::default();
    for (key, l) in longest.iter().enumerate() {
        let Some(l) = *l else { continue };
        let key = key as KeyId;
        let mut dup_reads: Vec<usize> = vec![l];
        if let Some(c) = contradicting.get(&key) {
            dup_reads.extend(c);
            found
                .incompatible
                .push(incompatible_order(b, lists, reads, l, c));
        }
        let name = b.key_name(key).to_string();
        for &i in &dup_reads {
            let d = &reads[i];
            if let Some(v) = first_duplicate(list(d), &mut seen) {
                found.duplicates.push((
                    d.4,
                    d.3,
                    format!(
                        "key {name}: the read of {} at line {} holds {v} more than once",
                        show_list(list(d)),
                        d.3
                    ),
                ));
            }
        }
        let r = &reads[l];
        order_key(b, key, list(r), r.3, appends, &mut order, &mut seen);
    }
    if !aborted.is_empty() {
        found.g1a = aborted_reads(b, lists, reads, aborted);
    }
    found.record(b);
}

/// A list-append read: (key, start and end of its list in the lists, line, transaction).
type ListRead = (KeyId, u32, u32, u32, BuilderTxn);

/// Per key, the index in `reads` of its longest read (the first of the longest).
fn longest_reads(keys: usize, reads: &[ListRead]) -> Vec<Option<usize>> {
    let mut longest: Vec<Option<usize>> = vec![None; keys];
    for (i, r) in reads.iter().enumerate() {
        let slot = &mut longest[r.0 as usize];
        if slot.map_or(true, |l| r.2 - r.1 > reads[l].2 - reads[l].1) {
            *slot = Some(i);
        }
    }
    longest
}

/// The incompatible order of a key: its longest read `l` and the reads `c` contradicting it
/// (transactions, line, text).
fn incompatible_order(
    b: &HistoryBuilder,
    lists: &[u64],
    reads: &[ListRead],
    l: usize,
    c: &[usize],
) -> (Vec<BuilderTxn>, u32, String) {
    let list = |r: &ListRead| &lists[r.1 as usize..r.2 as usize];
    let r = &reads[l];
    let name = b.key_name(r.0);
    let first = &reads[c[0]];
    let mut txns = vec![r.4];
    for &i in c {
        if !txns.contains(&reads[i].4) {
            txns.push(reads[i].4);
        }
    }
    (
        txns,
        first.3,
        format!(
            "key {name}: the read of {} at line {} and the read of {} at line {} are \
             not prefixes of one another, so no order of the appends explains both; \
             {} read(s) of {name} contradict its longest read, which is taken as its \
             version order",
            show_list(list(first)),
            first.3,
            show_list(list(r)),
            r.3,
            c.len()
        ),
    )
}

/// `key`'s version order: the longest read's `values` (duplicates dropped), then every append
/// no read shows after the last element shown (a read is the whole list, so had it come
/// earlier the longest read would hold it: Elle's `previously-appended-element`).
fn order_key(
    b: &mut HistoryBuilder,
    key: KeyId,
    values: &[u64],
    line: u32,
    appends: &[(KeyId, u64)],
    order: &mut Vec<u64>,
    seen: &mut FxHashSet<u64>,
) {
    order.clear();
    seen.clear();
    order.extend(values.iter().copied().filter(|&v| seen.insert(v)));
    b.version_order(key, order, line);
    if let Some(&last) = order.last() {
        let start = appends.partition_point(|&(k, _)| k < key);
        for &(_, v) in appends[start..].iter().take_while(|&&(k, _)| k == key) {
            if !seen.contains(&v) {
                b.version_order(key, &[last, v], line);
            }
        }
    }
}

/// Elle's G1a: a committed read holding an element an aborted transaction appended. The
/// checkers see a read's last element (an aborted read); the earlier ones are noted here.
fn aborted_reads(
    b: &HistoryBuilder,
    lists: &[u64],
    reads: &[ListRead],
    aborted: &FxHashMap<(KeyId, u64), (BuilderTxn, u32)>,
) -> Vec<([BuilderTxn; 2], u32, String)> {
    let mut g1a = Vec::new();
    for r in reads {
        let l = &lists[r.1 as usize..r.2 as usize];
        let earlier = &l[..l.len().saturating_sub(1)];
        if let Some((v, (writer, line))) = earlier
            .iter()
            .find_map(|&v| aborted.get(&(r.0, v)).map(|w| (v, w)))
        {
            g1a.push((
                [r.4, *writer],
                r.3,
                format!(
                    "key {}: the read of {} at line {} holds {v}, appended by the aborted \
                     transaction at line {line}",
                    b.key_name(r.0),
                    show_list(l),
                    r.3
                ),
            ));
        }
    }
    g1a
}

/// The anomalies of list-append reads, to be recorded as observed anomalies.
#[derive(Default)]
struct ListAnomalies {
    incompatible: Vec<(Vec<BuilderTxn>, u32, String)>,
    duplicates: Vec<(BuilderTxn, u32, String)>,
    g1a: Vec<([BuilderTxn; 2], u32, String)>,
}

impl ListAnomalies {
    /// A note per kind found, then each anomaly, on `b`.
    fn record(self, b: &mut HistoryBuilder) {
        let ListAnomalies {
            incompatible,
            duplicates,
            g1a,
        } = self;
        for (name, found, anomaly) in [
            (
                "incompatible order",
                incompatible.len(),
                AnomalyId::IncompatibleOrder,
            ),
            (
                "duplicate element",
                duplicates.len(),
                AnomalyId::DuplicateElements,
            ),
            (
                "read of an aborted append",
                g1a.len(),
                AnomalyId::AbortedRead,
            ),
        ] {
            if found > 0 {
                let row = anomaly.row();
                b.note(format!(
                    "{found} {name}(s) in list-append reads (Elle's :{}), an anomaly from {} up",
                    row.elle_name().unwrap_or(row.key),
                    row.weakest_level_forbidding.full_name()
                ));
            }
        }
        for (txns, line, text) in incompatible {
            b.observed_anomaly(AnomalyId::IncompatibleOrder, &txns, Some(line), text);
        }
        for (txns, line, text) in g1a {
            b.observed_anomaly(AnomalyId::AbortedRead, &txns, Some(line), text);
        }
        for (txn, line, text) in duplicates {
            b.observed_anomaly(AnomalyId::DuplicateElements, &[txn], Some(line), text);
        }
    }
}

/// One written operation: (type, process, index, time, micro-operations text).
fn ops_text(h: &History, edn: bool) -> Result<Vec<String>, FormatError> {
    let format = if edn { Format::Elle } else { Format::ElleJson };
    // Reading refuses a history without micro-operations (nothing to judge); so does writing.
    let written = h
        .ops()
        .iter()
        .any(|o| o.txn != INITIAL_TXN && (o.kind == OpKind::Write || h.txn(o.txn).is_committed()));
    if !written {
        return Err(FormatError::Unrepresentable {
            format,
            problem: "an Elle history needs at least one micro-operation (a write, or a read \
                      of a committed transaction); this one has none"
                .to_string(),
        });
    }
    let plan = common::plan_values(h, InitialValues::Zero)
        .map_err(|problem| FormatError::Unrepresentable { format, problem })?;
    // Each key as the reader names it back ([`string_key_name`]): an integer's decimal form
    // as that integer, a string key named in quotes as that string, another name as a
    // keyword (EDN) when it is one token, else as a string.
    let key = |k: KeyId| -> String {
        let n = h.key_name(k);
        if n.parse::<i64>().is_ok_and(|i| i.to_string() == n) {
            return n.to_string();
        }
        let (text, quoted) = match n.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Some(inner) if n.len() >= 2 => (inner, true),
            _ => (n, false),
        };
        if edn {
            if !quoted && edn_token(text) {
                format!(":{text}")
            } else {
                format!("{text:?}")
            }
        } else {
            serde_json::to_string(text).unwrap_or_default()
        }
    };
    let word = |w: &str| {
        if edn {
            format!(":{w}")
        } else {
            format!("\"{w}\"")
        }
    };
    let nil = if edn { "nil" } else { "null" };
    let sep = if edn { " " } else { ", " };
    let mut lines = Vec::new();
    let mut index = 0u64;
    for (s, session) in h.sessions().iter().enumerate() {
        for t in session.txns() {
            let committed = h.txn(t).is_committed();
            let mut invoke = Vec::new();
            let mut complete = Vec::new();
            for o in h.txn(t).ops() {
                let op = h.op(o);
                let k = key(op.key);
                match op.kind {
                    OpKind::Write => {
                        let m = format!("[{}{sep}{k}{sep}{}]", word("w"), plan.values[o as usize]);
                        invoke.push(m.clone());
                        complete.push(m);
                    }
                    OpKind::Read if committed => {
                        let v = if h.writer_txn(o) == Some(INITIAL_TXN) {
                            nil.to_string()
                        } else {
                            plan.values[o as usize].to_string()
                        };
                        invoke.push(format!("[{}{sep}{k}{sep}{nil}]", word("r")));
                        complete.push(format!("[{}{sep}{k}{sep}{v}]", word("r")));
                    }
                    OpKind::Read => {}
                }
            }
            let ts = h.timestamps(t);
            let status = if committed { "ok" } else { "fail" };
            for (kind, mops, time) in [
                ("invoke", &invoke, ts.map(|t| t.start)),
                (status, &complete, ts.map(|t| t.commit)),
            ] {
                let time = time.map_or(String::new(), |t| {
                    if edn {
                        format!(", :time {t}")
                    } else {
                        format!(", \"time\": {t}")
                    }
                });
                let value = mops.join(sep);
                lines.push(if edn {
                    format!(
                        "{{:type :{kind}, :f :txn, :value [{value}], :process {s}{time}, :index {index}}}"
                    )
                } else {
                    format!(
                        "{{\"type\": \"{kind}\", \"f\": \"txn\", \"value\": [{value}], \"process\": {s}{time}, \"index\": {index}}}"
                    )
                });
                index += 1;
            }
        }
    }
    Ok(lines)
}

/// Writes a history as an Elle rw-register history in EDN.
pub fn write_edn(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    for line in ops_text(h, true)? {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Writes a history as an Elle rw-register history in Jepsen's JSON rendering (JSON lines).
pub fn write_json(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    for line in ops_text(h, false)? {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// What writing `h` as an Elle history drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History, format: Format) -> Vec<String> {
    let name = format.name();
    let mut notes = Vec::new();
    if let Ok(plan) = common::plan_values(h, InitialValues::Zero) {
        notes.extend(common::values_note(h, plan.synthesized, name));
    }
    super::dbcop::ids_and_initial_notes(h, &mut notes, name);
    // Timestamps are carried as :time; the ids note from dbcop does not apply to them.
    notes.retain(|n| !n.contains("timestamps"));
    let aborted_reads = h
        .ops()
        .iter()
        .filter(|o| o.kind == OpKind::Read && !h.txn(o.txn).is_committed())
        .count();
    if aborted_reads > 0 {
        notes.push(format!(
            "{name} :fail operations carry no read results; {aborted_reads} read(s) of aborted \
             transactions are dropped"
        ));
    }
    let empty_sessions = h.sessions().iter().filter(|s| s.txns().is_empty()).count();
    if empty_sessions > 0 {
        notes.push(format!(
            "{empty_sessions} session(s) without transactions cannot be written in {name}"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Level;

    const APPEND: &str = "\
{:type :invoke, :f :txn, :value [[:append :x 1] [:append :y 1]], :process 0, :time 1, :index 0}
{:type :invoke, :f :txn, :value [[:append :x 2] [:append :y 2]], :process 1, :time 2, :index 1}
{:type :ok, :f :txn, :value [[:append :x 1] [:append :y 1]], :process 0, :time 3, :index 2}
{:type :ok, :f :txn, :value [[:append :x 2] [:append :y 2]], :process 1, :time 4, :index 3}
{:type :invoke, :f :txn, :value [[:r :x nil]], :process 2, :time 5, :index 4}
{:type :ok, :f :txn, :value [[:r :x [1 2]]], :process 2, :time 6, :index 5}
{:type :invoke, :f :txn, :value [[:r :y nil]], :process 3, :time 7, :index 6}
{:type :ok, :f :txn, :value [[:r :y [2 1]]], :process 3, :time 8, :index 7}
{:type :invoke, :f :start-partition, :process :nemesis}
";

    #[test]
    fn list_append_orders_reveal_g0() {
        let h = read_edn(APPEND.as_bytes(), "h.edn").unwrap();
        let s = h.stats();
        assert_eq!((s.sessions, s.committed, s.reads, s.writes), (4, 4, 2, 4));
        assert_eq!(h.known_write_order().len(), 2);
        // Real time by history position (invocation 0, completion 2), never by :time; no
        // database timestamps.
        assert_eq!(
            h.real_time(1),
            Some(RealTime {
                invoked: 0,
                completed: 2
            })
        );
        assert_eq!(h.timestamps(1), None);
        assert_eq!(h.input_notes().len(), 1, "{:?}", h.input_notes());
        // What the checkers make of these orders (G0 under RC): check::tests.
        // The same ops in Jepsen's JSON rendering.
        let json = APPEND
            .lines()
            .take(8)
            .map(|l| {
                l.replace(":type :", "\"type\": \"")
                    .replace(", :f :txn", "\", \"f\": \"txn\"")
                    .replace(":value", "\"value\":")
                    .replace(":process", "\"process\":")
                    .replace(":time", "\"time\":")
                    .replace(":index", "\"index\":")
                    .replace("[:append :x", "[\"append\", \"x\",")
                    .replace("[:append :y", "[\"append\", \"y\",")
                    .replace("[:r :x", "[\"r\", \"x\",")
                    .replace("[:r :y", "[\"r\", \"y\",")
                    .replace("] [", "], [")
                    .replace("[1 2]", "[1, 2]")
                    .replace("[2 1]", "[2, 1]")
                    .replace("nil", "null")
            })
            .collect::<Vec<_>>()
            .join("\n");
        let g = read_json(json.as_bytes(), "h.json").unwrap_or_else(|e| panic!("{e}\n{json}"));
        h.same_content(&g).unwrap();
        // The native JSON format keeps the known write order; the others say they drop it.
        let mut native = Vec::new();
        super::super::json::write(&h, &mut native).unwrap();
        let n = super::super::json::read(&native, "n.json").unwrap();
        h.same_content(&n).unwrap();
        assert!(super::super::conversion_notes(&h, Format::Json).is_empty());
        assert!(super::super::conversion_notes(&h, Format::Elle)
            .iter()
            .any(|n| n.contains("known write order")));
    }

    /// The micro-operations, list elements and key names `text` gives, read by the fast
    /// scanner (`None` when it declines) and by the general reader.
    #[allow(clippy::type_complexity)]
    fn both_ways(
        text: &str,
        json: bool,
        with_reads: bool,
    ) -> (
        Option<(Vec<Mop>, Vec<u64>, Vec<String>)>,
        Result<(Vec<Mop>, Vec<u64>, Vec<String>), String>,
    ) {
        let names = |b: &HistoryBuilder| {
            (0..b.key_count() as KeyId)
                .map(|k| b.key_name(k).to_string())
                .collect::<Vec<_>>()
        };
        let mut fast = State::new("t");
        let fast = fast
            .fast_mops(text, json, with_reads)
            .map(|()| (fast.mops.clone(), fast.lists.clone(), names(&fast.b)));
        let mut slow = State::new("t");
        let tree = if json {
            serde_json::from_str(text)
                .map(Edn::from_json)
                .map_err(|e| e.to_string())
        } else {
            Reader::new(text).value(0).map_err(|e| e.message)
        };
        let slow = tree.and_then(|tree| {
            mops_of_tree(
                &tree,
                &mut slow.b,
                &mut slow.lists,
                with_reads,
                &mut slow.mops,
                json,
            )?;
            Ok((slow.mops, slow.lists, names(&slow.b)))
        });
        (fast, slow)
    }

    #[test]
    fn the_fast_scanner_reads_the_usual_shapes() {
        for (text, json) in [
            (
                "[[:append :x 1] [:r 5 [1 2 3]] [:r \"k\" nil] [:w -3 0] [:r :y []]]",
                false,
            ),
            (
                "[[\"append\", \"x\", 1], [\"r\", 5, [1, 2, 3]], [\":r\", \"k\", null]]",
                true,
            ),
            (" [ ] ", false),
        ] {
            for with_reads in [true, false] {
                let (fast, slow) = both_ways(text, json, with_reads);
                assert_eq!(fast, Some(slow.unwrap()), "{text}");
            }
        }
    }

    proptest::proptest! {
        /// Whenever the fast scanner reads a `:value`, the general reader reads the same.
        #[test]
        fn the_fast_scanner_agrees_with_the_reader(
            json in proptest::bool::ANY,
            with_reads in proptest::bool::ANY,
            mops in proptest::collection::vec(
                (0..9usize, 0..10usize, 0..12usize, 0..4usize, 0..3usize), 0..4),
        ) {
            let (fs, ks, vs): (&[&str], &[&str], &[&str]) = if json {
                (
                    &["\"r\"", "\"w\"", "\"append\"", "\":r\"", "\":append\"", "\"x\"", "1", "null", "\"txn\""],
                    &["1", "-2", "0", "\"x\"", "\"a\\\"b\"", "\"\"", "1.5", "18446744073709551615", "null", "[1]"],
                    &["null", "3", "-1", "[1, 2]", "[]", "[1, -2]", "\"s\"", "1.5", "0", "[0]", "1e3", "9223372036854775808"],
                )
            } else {
                (
                    &[":r", ":w", ":append", "\"r\"", "\":append\"", ":x", "r", "nil", "::r"],
                    &["1", "-2", "007", ":x", "\"y\"", "\"a\\\"b\"", "x", "1N", "+3", ":"],
                    &["nil", "null", "3", "-1", "[1 2]", "[]", "(1 2)", "[1 -2]", "\"s\"", "1.5", "[1,2]", "nil?"],
                )
            };
            let seps: &[&str] = if json { &[", ", ",", " ,\n"] } else { &[" ", ",", "\n ", "  "] };
            let mut text = String::from("[");
            for (i, &(f, k, v, sep, shape)) in mops.iter().enumerate() {
                let sep = seps[sep % seps.len()];
                if i > 0 {
                    text.push_str(if json { ", " } else { " " });
                }
                let (f, k, v) = (fs[f % fs.len()], ks[k % ks.len()], vs[v % vs.len()]);
                text.push_str(&match shape {
                    0 => format!("[{f}{sep}{k}{sep}{v}]"),
                    1 => format!("[{f}{sep}{k}]"),
                    _ => format!("[{f}{sep}{k}{sep}{v}{sep}{v}]"),
                });
            }
            text.push(']');
            if json && serde_json::from_str::<serde_json::Value>(&text).is_err() {
                // JSON values reach the scanner only once the line is valid JSON.
                return Ok(());
            }
            let (fast, slow) = both_ways(&text, json, with_reads);
            if let Some(fast) = fast {
                proptest::prop_assert_eq!(Ok(fast), slow, "{}", text);
            }
        }
    }

    #[test]
    fn info_fail_and_crashes() {
        let text = "\
[{:type :invoke, :f :txn, :value [[:w 1 1]], :process 0}
 {:type :info, :f :txn, :value [[:w 1 1]], :process 0}
 {:type :invoke, :f :txn, :value [[:w 1 2]], :process 0}
 {:type :info, :f :txn, :value nil, :process 0}
 {:type :invoke, :f :txn, :value [[:w 2 5] [:r 1 nil]], :process 1}
 {:type :fail, :f :txn, :value [[:w 2 5] [:r 1 nil]], :process 1}
 {:type :invoke, :f :txn, :value [[:r 1 nil]], :process 2}
 {:type :ok, :f :txn, :value [[:r 1 1]], :process 2}
 {:type :invoke, :f :txn, :value [[:w 3 1]], :process 3}]";
        let h = read_edn(text.as_bytes(), "h.edn").unwrap();
        let s = h.stats();
        // Kept: the observed :info write of 1 := 1, the :fail (aborted), the :ok read.
        assert_eq!((s.committed, s.aborted), (2, 1));
        assert_eq!(h.writer_txn(h.txn(3).ops().start), Some(1));
        assert!(
            h.input_notes()[0].starts_with("2 indeterminate"),
            "{:?}",
            h.input_notes()
        );
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, u32, &str)] = &[
            (
                "{:type :invoke, :f :txn, :value [], :process 1}\n{:type :ok, :f :txn, :value [], :process 0}\n{:type :ok, :f :txn, :value [], :process 1}",
                2,
                "without an invocation",
            ),
            ("{:type :invoke, :f :start, :process :nemesis}", 1, "no transaction to check"),
            ("", 0, "holds no operation"),
            ("{:type :invoke, :f :txn, :value [], :process 0}\n{:type :what, :f :txn, :process 0}", 2, ":type is"),
            ("{:type :invoke, :f :txn, :value [[:w 1 -1]], :process 0}\n{:type :ok, :f :txn, :value [[:w 1 -1]], :process 0}", 2, "unsigned integer"),
            ("\n{:type :invoke :f}", 2, "invalid EDN"),
        ];
        for &(text, line, message) in cases {
            let e = read_edn(text.as_bytes(), "h.edn").unwrap_err();
            assert_eq!(e.line(), line, "{text}: {e}");
            assert!(e.to_string().contains(message), "{text}: {e}");
        }
    }

    /// Elle's own tests write completions only (`elle/list_append_test.clj`, `op`), with
    /// `:process 0`; the transactions keep their process's session.
    #[test]
    fn completion_only_histories() {
        let text = "\
{:type :ok, :value [[:append :x 1] [:r :y [1]]], :process 0}
{:type :ok, :value [[:append :y 1] [:r :x [1]]], :process 1}
{:type :ok, :value [[:r :x [1]]], :process 0}
{:type :fail, :value [[:append :z 5]], :process 2}";
        let h = read_edn(text.as_bytes(), "h.edn").unwrap();
        let s = h.stats();
        assert_eq!((s.sessions, s.committed, s.aborted), (3, 3, 1));
        assert_eq!(h.sessions()[0].txns().len(), 2);
        assert!(h.input_notes().is_empty(), "{:?}", h.input_notes());
        // Its verdict (a G1c) is tested in tests/checking/peers.rs, above the checkers.
    }

    /// Operations without `:process` (Elle's paper example, many checkers' tests) are each a
    /// transaction in a session of their own, with a note; `:f` other than `:txn` is fine
    /// when `:value` is a transaction; nemesis operations and other values are skipped.
    #[test]
    fn any_f_and_no_process() {
        let text = "\
{:type :ok, :f :read, :value [[:w 1 1] [:w 2 1]]}
{:type :ok, :value [[:r 1 1] [:w 2 2]]}
{:type :ok, :value [[:r 2 1] [:w 1 2]]}
{:type :info, :f :kill, :value nil, :process :nemesis}
{:type :invoke, :f :read, :value nil, :process 3}
{:type :ok, :f :read, :value 7, :process 3}";
        let h = read_edn(text.as_bytes(), "h.edn").unwrap();
        let s = h.stats();
        assert_eq!((s.sessions, s.committed), (3, 3));
        let notes = h.input_notes().join("\n");
        assert!(
            notes.contains("3 operation(s) carry no :process"),
            "{notes}"
        );
        assert!(notes.contains("1 operation(s) of non-client"), "{notes}");
        assert!(
            notes.contains("1 client operation(s) whose :value"),
            "{notes}"
        );
        // Its verdict (a write skew) is tested in tests/checking/peers.rs, above the checkers.
    }

    /// Two reads of one key that are not prefixes of one another are Elle's
    /// `:incompatible-order`, an anomaly (not bad input); a read holding an element twice
    /// is `:duplicate-elements`. The longest read gives the version order.
    #[test]
    fn incompatible_orders_and_duplicates_are_observed_anomalies() {
        let text = "\
{:type :ok, :value [[:append 1 1] [:append 1 2]], :process 0}
{:type :ok, :value [[:r 1 [1 2]]], :process 1}
{:type :ok, :value [[:r 1 [2]]], :process 2}
{:type :ok, :value [[:append 1 3]], :process 0}
{:type :ok, :value [[:r 1 [1 2 3 3]]], :process 3}
{:type :ok, :value [[:r 1 [1]]], :process 4}";
        let h = read_edn(text.as_bytes(), "h.edn").unwrap();
        let a = h.observed_anomalies();
        assert_eq!(a.len(), 2, "{a:?}");
        assert_eq!(a[0].name, "incompatible-order");
        assert_eq!(a[0].line, Some(3));
        // The longest read's transaction first, then the contradicting one.
        assert_eq!(a[0].txns, vec![5, 4]);
        assert!(a[0].description.contains("[2]"), "{}", a[0].description);
        assert!(a[0].violates(Level::ReadCommitted) && a[0].violates(Level::Serializable));
        assert_eq!(a[1].name, "duplicate-elements");
        assert_eq!(a[1].txns, vec![5]);
        assert!(a[1].description.contains("holds 3 more than once"));
        // The version order is the longest read, deduplicated: 1 < 2 < 3.
        assert_eq!(h.known_write_order().len(), 2);
        assert!(h
            .input_notes()
            .iter()
            .any(|n| n.contains(":incompatible-order")));
        // Converting drops them, and says so.
        assert!(super::super::conversion_notes(&h, Format::Json)
            .iter()
            .any(|n| n.contains("incompatible-order, duplicate-elements")));
    }

    /// Jepsen's JSON rendering: operations without "process", any "f", a nemesis process.
    #[test]
    fn json_without_process_and_other_f() {
        let text = r#"[{"type": "ok", "f": "read", "value": [["w", "x", 1]]},
 {"type": "ok", "value": [["r", "x", 1]]},
 {"type": "info", "f": "start", "process": "nemesis", "value": null},
 {"type": "ok", "f": "txn", "process": 4, "value": [["append", "y", 1], ["r", "y", [1]]]}]"#;
        let h = read_json(text.as_bytes(), "h.json").unwrap();
        let s = h.stats();
        assert_eq!((s.sessions, s.committed, s.reads, s.writes), (3, 3, 2, 2));
        assert_eq!(h.writer_txn(h.txn(2).ops().start), Some(1));
        let notes = h.input_notes().join("\n");
        assert!(
            notes.contains("2 operation(s) carry no :process"),
            "{notes}"
        );
        assert!(notes.contains("1 operation(s) of non-client"), "{notes}");
    }

    /// An :info list-append transaction may have committed: its non-nil reads count, its
    /// nil reads are unknown; a rw-register :info is kept only when a read observes it.
    #[test]
    fn info_list_append_reads_count() {
        let text = "\
{:type :invoke, :value [[:append 1 1] [:r 2 nil]], :process 0}
{:type :info, :value [[:append 1 1] [:r 2 [4]]], :process 0}
{:type :invoke, :value [[:append 2 4] [:r 3 nil]], :process 1}
{:type :info, :value [[:append 2 4] [:r 3 nil]], :process 1}";
        let h = read_edn(text.as_bytes(), "h.edn").unwrap();
        let s = h.stats();
        // Both kept: the first read 2 = [4], which observes the second's append.
        assert_eq!((s.committed, s.reads, s.writes), (2, 1, 2));
    }

    #[test]
    fn rw_register_round_trips() {
        let text = "\
{:type :invoke, :f :txn, :value [[:w 1 1] [:r 2 nil]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:w 1 1] [:r 2 nil]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:r 1 1]], :process 1, :index 3}
";
        let h = read_edn(text.as_bytes(), "h.edn").unwrap();
        let mut out = Vec::new();
        write_edn(&h, &mut out).unwrap();
        assert_eq!(String::from_utf8(out.clone()).unwrap(), text);
        let mut json = Vec::new();
        write_json(&h, &mut json).unwrap();
        let g = read_json(&json, "j").unwrap();
        h.same_content(&g).unwrap();
        assert_eq!(g.real_time(2), h.real_time(2));
    }
}
