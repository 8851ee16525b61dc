//! TimeKiller JSON (the Chronos/Aion artifact, github.com/FertileFragrance/TimeKiller): an
//! array of committed transactions, each
//! `{"tid": …, "sid": …, "sts": {"p": …, "l": …}, "cts": {"p": …, "l": …}, "ops": [{"t": …, "k": …, "v": …}]}`.
//!
//! - `tid`, `sid`, `k`: integers or strings. Session order is the order of the input.
//! - `sts`, `cts`: hybrid logical clocks compared as (p, l); `p` may be a JSON string of
//!   digits; `l` may be missing (0). Other fields (e.g. Aion's `rtts`) are ignored.
//! - kv model: `t` is `w`/`write` or `r`/`read`, `v` an integer or `null`.
//! - list model: `t` is `a`/`append` (an integer `v`), or a read whose `v` is a list; a
//!   `null` read of a list key is the empty list. A key is a register or a list, not both.
//! - The initial value of every register is a parameter (`--initial-value null|0`, `null`
//!   by default, as TimeKiller's own option); lists start empty.
//! - One JSON object per line without the enclosing array (what `isopredict watch` reads) is
//!   read too.
//!
//! Reading for the timestamp checkers ([`read_timestamped`]) keeps everything exactly;
//! reading into a [`History`] ([`read`]) turns timestamps into `u64`s that keep their order
//! (`p` alone when every `l` is 0, else `p` shifted left by the bits of the largest `l` plus
//! `l`, else their rank), reads of a list into a read of its last element (an append is a
//! write), and needs non-negative values. Writing needs timestamps on every committed
//! transaction and a value on every operation; aborted transactions are dropped.
//!
//! The reader splits the input into one byte range per transaction in a single pass (that
//! also counts lines), then parses the ranges with serde_json on all cores.

use std::borrow::Cow;
use std::fmt;
use std::io::Write;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::timestamped::{Hlc, Name, TimestampedHistory, TsOp, TsOpKind, TsTxn, TsValue};
use crate::history::{History, HistoryBuilder, OpKind, ReadFrom, Timestamps, TxnId, INITIAL_TXN};

/// Whether `bytes` look like TimeKiller JSON: an array (or a stream) of objects whose first
/// object has `"sts"` and `"ops"` fields.
pub(crate) fn looks_like(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let first = head.iter().position(|b| !b.is_ascii_whitespace());
    match first.map(|i| head[i]) {
        Some(b'[') | Some(b'{') => {}
        _ => return false,
    }
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    has(b"\"sts\"") && has(b"\"ops\"") && has(b"\"cts\"")
}

/// A `tid`, `sid` or `k`: an integer or a string.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Id<'a> {
    Num(i64),
    Str(Cow<'a, str>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Id<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Id::Num(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i64::try_from(v)
                    .map(Id::Num)
                    .map_err(|_| E::custom(format!("id {v} is too large")))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Id::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Id::Str(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_any(V)
    }
}

impl Id<'_> {
    fn name(&self) -> String {
        match self {
            Id::Num(n) => n.to_string(),
            Id::Str(s) => s.to_string(),
        }
    }
}

/// A timestamp part: an unsigned integer, or a string of digits.
struct Part(u64);

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Part;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-negative integer (or a string of digits)")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Part, E> {
                Ok(Part(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Part, E> {
                u64::try_from(v)
                    .map(Part)
                    .map_err(|_| E::custom(format!("negative timestamp {v}")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Part, E> {
                v.trim().parse().map(Part).map_err(|_| {
                    E::custom(format!("timestamp `{v}` is not a non-negative integer"))
                })
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct RawHlc {
    p: Part,
    #[serde(default)]
    l: Option<Part>,
}

impl RawHlc {
    fn hlc(&self) -> Hlc {
        Hlc::new(self.p.0, self.l.as_ref().map_or(0, |l| l.0))
    }
}

/// An operation's value: `null`, an integer, or a list of integers.
enum RawValue {
    Null,
    Int(i64),
    List(Vec<i64>),
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer, null or a list of integers")
            }
            fn visit_unit<E: de::Error>(self) -> Result<RawValue, E> {
                Ok(RawValue::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<RawValue, E> {
                Ok(RawValue::Null)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawValue, E> {
                Ok(RawValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawValue, E> {
                i64::try_from(v)
                    .map(RawValue::Int)
                    .map_err(|_| E::custom(format!("value {v} does not fit a 64-bit long")))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4));
                while let Some(v) = seq.next_element::<i64>()? {
                    items.push(v);
                }
                Ok(RawValue::List(items))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct RawOp<'a> {
    #[serde(borrow)]
    t: Cow<'a, str>,
    #[serde(borrow)]
    k: Id<'a>,
    #[serde(default = "null_value")]
    v: RawValue,
}

fn null_value() -> RawValue {
    RawValue::Null
}

#[derive(Deserialize)]
struct RawTxn<'a> {
    #[serde(borrow)]
    tid: Id<'a>,
    #[serde(borrow)]
    sid: Id<'a>,
    sts: RawHlc,
    cts: RawHlc,
    #[serde(borrow)]
    ops: Vec<RawOp<'a>>,
}

/// One transaction as read by [`parse_transaction`] (the online checker's unit), owning its
/// strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// `tid`.
    pub tid: Name,
    /// `sid`, as text.
    pub session: String,
    /// `sts`.
    pub start: Hlc,
    /// `cts`.
    pub commit: Hlc,
    /// The operations: kind, key, value.
    pub ops: Vec<(TsOpKind, Name, Value)>,
}

/// An operation's value in a [`Transaction`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `null`.
    Null,
    /// An integer.
    Int(i64),
    /// A list.
    List(Vec<i64>),
}

fn op_kind(t: &str, v: &RawValue) -> Result<TsOpKind, String> {
    Ok(match (t, v) {
        ("w" | "write" | "W" | "WRITE", RawValue::List(_)) => {
            return Err("a write's value must be an integer or null, not a list".into())
        }
        ("w" | "write" | "W" | "WRITE", _) => TsOpKind::Write,
        ("r" | "read" | "R" | "READ", RawValue::List(_)) => TsOpKind::ReadList,
        ("r" | "read" | "R" | "READ", _) => TsOpKind::Read,
        ("a" | "append" | "A" | "APPEND", RawValue::Int(_)) => TsOpKind::Append,
        ("a" | "append" | "A" | "APPEND", _) => {
            return Err("an append's value must be an integer".into())
        }
        (other, _) => {
            return Err(format!(
                "unknown operation type `{other}` (expected w/write, r/read or a/append)"
            ))
        }
    })
}

fn json_error(source: &str, line0: u32, e: &serde_json::Error) -> InputError {
    let line = line0 + e.line().saturating_sub(1) as u32;
    let msg = e.to_string();
    // serde_json appends " at line L column C" (relative to the object): drop it.
    let msg = match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    InputError::new(
        source,
        line.max(1),
        format!("{msg} (column {})", e.column()),
    )
}

/// Parses one TimeKiller transaction object (one line of `isopredict watch`'s input).
/// Errors are plain text; the caller adds the line.
pub fn parse_transaction(text: &[u8]) -> Result<Transaction, String> {
    let raw: RawTxn = serde_json::from_slice(text).map_err(|e| {
        let msg = e.to_string();
        match msg.rfind(" at line ") {
            Some(i) => format!("{} (column {})", &msg[..i], e.column()),
            None => msg,
        }
    })?;
    let mut ops = Vec::with_capacity(raw.ops.len());
    for op in raw.ops {
        let kind = op_kind(&op.t, &op.v)?;
        let value = match op.v {
            RawValue::Null => Value::Null,
            RawValue::Int(v) => Value::Int(v),
            RawValue::List(items) => Value::List(items),
        };
        let key = match op.k {
            Id::Num(n) => Name::Num(n),
            Id::Str(s) => Name::Str(s.into()),
        };
        ops.push((kind, key, value));
    }
    Ok(Transaction {
        tid: match raw.tid {
            Id::Num(n) => Name::Num(n),
            Id::Str(s) => Name::Str(s.into()),
        },
        session: raw.sid.name(),
        start: raw.sts.hlc(),
        commit: raw.cts.hlc(),
        ops,
    })
}

/// The byte ranges of the top-level objects (of an array, or a stream of objects) with the
/// line each starts on.
fn split_objects(bytes: &[u8], source: &str) -> Result<Vec<(usize, usize, u32)>, InputError> {
    let err = |line: u32, msg: &str| InputError::new(source, line, msg.to_string());
    let mut out = Vec::new();
    let mut line: u32 = 1;
    let mut i = 0;
    let n = bytes.len();
    let skip_ws = |i: &mut usize, line: &mut u32| {
        while *i < n {
            match bytes[*i] {
                b'\n' => *line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => break,
            }
            *i += 1;
        }
    };
    skip_ws(&mut i, &mut line);
    let array = match bytes.get(i) {
        Some(b'[') => {
            i += 1;
            true
        }
        Some(b'{') => false,
        Some(_) => return Err(err(line, "expected `[` (an array of transactions) or `{`")),
        None => return Err(err(0, "empty input: expected an array of transactions")),
    };
    loop {
        skip_ws(&mut i, &mut line);
        match bytes.get(i) {
            None if array => return Err(err(line, "unexpected end of input: missing `]`")),
            None => break,
            Some(b']') if array => {
                i += 1;
                skip_ws(&mut i, &mut line);
                if i < n {
                    return Err(err(line, "unexpected text after the closing `]`"));
                }
                break;
            }
            Some(b'{') => {}
            Some(_) => return Err(err(line, "expected a transaction object `{`")),
        }
        let (start, start_line) = (i, line);
        let mut depth = 0u32;
        let mut in_string = false;
        loop {
            let Some(&b) = bytes.get(i) else {
                return Err(err(start_line, "unterminated transaction object"));
            };
            i += 1;
            if in_string {
                match b {
                    b'\\' => i += 1,
                    b'"' => in_string = false,
                    b'\n' => line += 1,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b'\n' => line += 1,
                _ => {}
            }
        }
        out.push((start, i, start_line));
        skip_ws(&mut i, &mut line);
        if array {
            match bytes.get(i) {
                Some(b',') => i += 1,
                Some(b']') => {}
                None => return Err(err(line, "unexpected end of input: missing `]`")),
                Some(_) => return Err(err(line, "expected `,` or `]` after a transaction")),
            }
        } else if bytes.get(i) == Some(&b',') {
            i += 1;
        }
    }
    Ok(out)
}

/// A parsed chunk of transactions, before keys and sessions are interned globally.
#[derive(Default)]
struct Chunk<'a> {
    txns: Vec<(Id<'a>, Id<'a>, Hlc, Hlc, u32, u32)>, // tid, sid, sts, cts, line, op count
    ops: Vec<(TsOpKind, Id<'a>, bool, i64)>,         // kind, key, null, value (list: index)
    lists: Vec<Vec<i64>>,
}

fn parse_chunk<'a>(
    bytes: &'a [u8],
    ranges: &[(usize, usize, u32)],
    source: &str,
) -> Result<Chunk<'a>, InputError> {
    let mut chunk = Chunk::default();
    for &(start, end, line) in ranges {
        let raw: RawTxn<'a> =
            serde_json::from_slice(&bytes[start..end]).map_err(|e| json_error(source, line, &e))?;
        let count = raw.ops.len() as u32;
        for op in raw.ops {
            let kind = op_kind(&op.t, &op.v).map_err(|m| InputError::new(source, line, m))?;
            let (null, value) = match op.v {
                RawValue::Null => (true, 0),
                RawValue::Int(v) => (false, v),
                RawValue::List(items) => {
                    chunk.lists.push(items);
                    (false, chunk.lists.len() as i64 - 1)
                }
            };
            chunk.ops.push((kind, op.k, null, value));
        }
        chunk
            .txns
            .push((raw.tid, raw.sid, raw.sts.hlc(), raw.cts.hlc(), line, count));
    }
    Ok(chunk)
}

/// Interns names to dense ids.
#[derive(Default)]
struct Interner {
    nums: FxHashMap<i64, u32>,
    strs: FxHashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    fn id(&mut self, id: &Id) -> u32 {
        match id {
            Id::Num(n) => {
                if let Some(&k) = self.nums.get(n) {
                    return k;
                }
                let k = self.names.len() as u32;
                self.names.push(n.to_string());
                self.nums.insert(*n, k);
                k
            }
            Id::Str(s) => {
                if let Some(&k) = self.strs.get(s.as_ref()) {
                    return k;
                }
                let k = self.names.len() as u32;
                self.names.push(s.to_string());
                self.strs.insert(s.to_string(), k);
                k
            }
        }
    }
}

/// Reads TimeKiller JSON for the timestamp checkers; `initial` is the initial value of every
/// register (`None` = `null`).
pub fn read_timestamped(
    bytes: &[u8],
    source: &str,
    initial: Option<i64>,
) -> Result<TimestampedHistory, InputError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let ranges = split_objects(bytes, source)?;
    let per_chunk = (ranges.len() / (4 * rayon::current_num_threads()).max(1)).clamp(1, 1 << 14);
    let chunks: Vec<Chunk> = ranges
        .par_chunks(per_chunk)
        .map(|rs| parse_chunk(bytes, rs, source))
        .collect::<Result<_, _>>()?;

    let total_ops: usize = chunks.iter().map(|c| c.ops.len()).sum();
    let mut h = TimestampedHistory {
        source: source.to_string(),
        initial,
        ..Default::default()
    };
    h.txns.reserve(ranges.len());
    h.ops.reserve(total_ops);
    let mut keys = Interner::default();
    let mut sessions = Interner::default();
    // Per key: 1 = register write seen, 2 = append seen (with the line).
    let mut key_use: Vec<(u8, u32)> = Vec::new();
    for chunk in chunks {
        let mut ops = chunk.ops.into_iter();
        for (tid, sid, start, commit, line, count) in chunk.txns {
            let ops_start = h.ops.len() as u32;
            for (kind, key, null, value) in ops.by_ref().take(count as usize) {
                let k = keys.id(&key);
                if k as usize == key_use.len() {
                    key_use.push((0, 0));
                }
                let using = match kind {
                    TsOpKind::Write => 1,
                    TsOpKind::Append => 2,
                    _ => 0,
                };
                if using != 0 {
                    let (seen, seen_line) = key_use[k as usize];
                    if seen != 0 && seen != using {
                        return Err(InputError::new(
                            source,
                            line,
                            format!(
                                "key {} is both written (w) and appended to (a){}; \
                                 a key is a register or a list",
                                keys.names[k as usize],
                                if seen_line != 0 {
                                    format!(" (first at line {seen_line})")
                                } else {
                                    String::new()
                                }
                            ),
                        ));
                    }
                    key_use[k as usize] = (using, line);
                }
                let value = if kind == TsOpKind::ReadList {
                    let items = &chunk.lists[value as usize];
                    let start = h.lists.len() as u64;
                    h.lists.extend_from_slice(items);
                    (start << 32 | items.len() as u64) as i64
                } else {
                    value
                };
                h.ops.push(TsOp {
                    kind,
                    null,
                    key: k,
                    value,
                });
            }
            let session = sessions.id(&sid);
            h.txns.push(TsTxn {
                tid: match tid {
                    Id::Num(n) => Name::Num(n),
                    Id::Str(s) => Name::Str(s.into()),
                },
                session,
                start,
                commit,
                line,
                ops_start,
                ops_end: h.ops.len() as u32,
            });
        }
    }
    // A `null` read of a list key is the empty list; a number read of one is an error.
    if key_use.iter().any(|&(u, _)| u == 2) {
        for t in 0..h.txns.len() {
            let line = h.txns[t].line;
            for o in h.txns[t].ops_start..h.txns[t].ops_end {
                let op = &mut h.ops[o as usize];
                if op.kind == TsOpKind::Read && key_use[op.key as usize].0 == 2 {
                    if !op.null {
                        return Err(InputError::new(
                            source,
                            line,
                            format!(
                                "read of a number from key {}, which is a list (appended to)",
                                keys.names[op.key as usize]
                            ),
                        ));
                    }
                    op.kind = TsOpKind::ReadList;
                    op.null = false;
                    op.value = ((h.lists.len() as u64) << 32) as i64;
                }
            }
        }
    }
    h.key_names = keys.names;
    h.session_names = sessions.names;
    Ok(h)
}

/// Reads TimeKiller JSON into a [`History`] (initial value `null`); see the module
/// documentation for what changes.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    read_with_initial(bytes, source, None)
}

/// Like [`read`], with `initial` (`None` = `null`) as every register's initial value.
pub fn read_with_initial(
    bytes: &[u8],
    source: &str,
    initial: Option<i64>,
) -> Result<History, InputError> {
    to_history(&read_timestamped(bytes, source, initial)?)
}

/// Order-preserving `u64` timestamps for the HLCs of `h` (see the module documentation).
fn encode_timestamps(h: &TimestampedHistory) -> Vec<(u64, u64)> {
    let all = || h.txns.iter().flat_map(|t| [t.start, t.commit]);
    let max_l = all().map(|t| t.l).max().unwrap_or(0);
    let max_p = all().map(|t| t.p).max().unwrap_or(0);
    if max_l == 0 {
        return h.txns.iter().map(|t| (t.start.p, t.commit.p)).collect();
    }
    let bits = 64 - max_l.leading_zeros();
    if bits < 64 && max_p >> (64 - bits) == 0 {
        let enc = |t: Hlc| t.p << bits | t.l;
        return h
            .txns
            .iter()
            .map(|t| (enc(t.start), enc(t.commit)))
            .collect();
    }
    let mut sorted: Vec<Hlc> = all().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let rank = |t: Hlc| sorted.binary_search(&t).unwrap_or(0) as u64;
    h.txns
        .iter()
        .map(|t| (rank(t.start), rank(t.commit)))
        .collect()
}

/// The [`History`] view of a timestamped history: values must be non-negative; a list read
/// becomes a read of its last element (of the initial value when empty), an append a write.
pub fn to_history(h: &TimestampedHistory) -> Result<History, InputError> {
    let mut b = HistoryBuilder::new(h.source.clone());
    b.allow_duplicate_writes(true);
    let unsigned = |v: i64, line: u32| -> Result<u64, InputError> {
        u64::try_from(v).map_err(|_| {
            InputError::new(
                h.source.as_str(),
                line,
                format!(
                    "negative value {v}: isopredict's history model has non-negative values \
                     (the timestamp checkers of `check --level si|ser` read them)"
                ),
            )
        })
    };
    let initial = match h.initial {
        Some(v) => {
            let v = unsigned(v, 0)?;
            b.initial_value(v);
            Some(v)
        }
        None => None,
    };
    for name in &h.key_names {
        b.key(name);
    }
    // Numeric session names are kept as the sessions' external ids.
    let sessions: Vec<_> = h
        .session_names
        .iter()
        .map(|name| b.session(name.parse::<u64>().ok()))
        .collect();
    let stamps = encode_timestamps(h);
    let mut starts_after_commit = 0usize;
    for (t, txn) in h.txns.iter().enumerate() {
        let external = match &txn.tid {
            Name::Num(n) => u64::try_from(*n).ok(),
            Name::Str(_) => None,
        };
        let bt = b.begin_at(sessions[txn.session as usize], external, txn.line);
        // A transaction that starts after it commits is a violation the timestamp checker
        // reports (START-AFTER-COMMIT); the history keeps its reads and writes, not its
        // timestamps (which the history model refuses).
        if stamps[t].0 <= stamps[t].1 {
            b.set_timestamps(
                bt,
                Timestamps {
                    start: stamps[t].0,
                    commit: stamps[t].1,
                },
            );
        } else {
            starts_after_commit += 1;
        }
        for op in h.txn_ops(t) {
            let read_of = |b: &mut HistoryBuilder, v: Option<u64>| {
                let from = match v {
                    None => ReadFrom::Initial,
                    Some(v) if Some(v) == initial => ReadFrom::Initial,
                    Some(v) => ReadFrom::Value(v),
                };
                b.read(bt, op.key, v.or(initial), from, txn.line);
            };
            match (op.kind, h.value(op)) {
                (TsOpKind::Write | TsOpKind::Append, TsValue::Int(v)) => {
                    let v = unsigned(v, txn.line)?;
                    b.write(bt, op.key, Some(v), txn.line)
                }
                (TsOpKind::Write, _) => b.write(bt, op.key, None, txn.line),
                (TsOpKind::Read, TsValue::Int(v)) => read_of(&mut b, Some(unsigned(v, txn.line)?)),
                (TsOpKind::Read, _) => read_of(&mut b, None),
                (TsOpKind::ReadList, TsValue::List(items)) => match items.last() {
                    Some(&v) => read_of(&mut b, Some(unsigned(v, txn.line)?)),
                    None => read_of(&mut b, None),
                },
                _ => {}
            }
        }
    }
    if let Some(note) = initial_value_hint(h) {
        b.note(note);
    }
    if starts_after_commit > 0 {
        b.note(format!(
            "{starts_after_commit} transaction(s) start after they commit: a START-AFTER-COMMIT \
             violation of the timestamps (--level si|ser reports it); the history keeps their \
             reads and writes without their timestamps"
        ));
    }
    b.build()
}

/// When most keys read one value that no transaction writes, TimeKiller's initial value (a
/// parameter of TimeKiller, `--initial_value`, `null` by default) was most likely that value:
/// a sentence saying so and suggesting `--initial-value`. `None` when `h` has an initial
/// value other than `null`, or when no such pattern shows. `convert` and `stats` print it as
/// a note; `check` refuses the input with it unless `--initial-value` was given (even `null`).
pub fn initial_value_hint(h: &TimestampedHistory) -> Option<String> {
    if h.initial.is_some() {
        return None;
    }
    // Register reads and writes by (key, value); negative values are left to the readers.
    let mut written: rustc_hash::FxHashSet<(u32, u64)> = Default::default();
    let mut reads: Vec<(u32, u64)> = Vec::new();
    for t in 0..h.txns.len() {
        for op in h.txn_ops(t) {
            let read = match (op.kind, h.value(op)) {
                (TsOpKind::Write | TsOpKind::Append, TsValue::Int(v)) => {
                    if let Ok(v) = u64::try_from(v) {
                        written.insert((op.key, v));
                    }
                    None
                }
                (TsOpKind::Read, TsValue::Int(v)) => Some(v),
                (TsOpKind::ReadList, TsValue::List(items)) => items.last().copied(),
                _ => None,
            };
            if let Some(v) = read.and_then(|v| u64::try_from(v).ok()) {
                reads.push((op.key, v));
            }
        }
    }
    let keys = h.key_names.len();
    // Per value no transaction writes: its reads, and the keys it was read from.
    let mut by_value: FxHashMap<u64, (usize, rustc_hash::FxHashSet<u32>)> = FxHashMap::default();
    let mut keys_read: rustc_hash::FxHashSet<u32> = Default::default();
    for &(k, v) in &reads {
        keys_read.insert(k);
        if !written.contains(&(k, v)) {
            let e = by_value.entry(v).or_default();
            e.0 += 1;
            e.1.insert(k);
        }
    }
    let (&v, (n, ks)) = by_value
        .iter()
        .max_by_key(|(v, (_, ks))| (ks.len(), u64::MAX - **v))?;
    // "Most keys": more than half of the keys read (at least 2 when several are read).
    (2 * ks.len() > keys_read.len().max(1) && (ks.len() >= 2 || keys <= 1)).then(|| {
        format!(
            "{n} read(s) of {v}, a value no transaction writes, on {} of the {} key(s) read: \
             TimeKiller's initial value is a parameter (`null` unless set); if this run's was \
             {v}, read it with --initial-value {v}",
            ks.len(),
            keys_read.len()
        )
    })
}

/// Writes a timestamped history as TimeKiller JSON, one transaction per line.
pub fn write_timestamped(h: &TimestampedHistory, out: &mut dyn Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let mut line = String::with_capacity(256);
    let ident = |s: &str, line: &mut String| {
        if s.parse::<i64>().is_ok() {
            line.push_str(s);
        } else {
            line.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into()));
        }
    };
    out.write_all(b"[\n")?;
    for (t, txn) in h.txns.iter().enumerate() {
        use std::fmt::Write as _;
        line.clear();
        line.push_str("{\"tid\": ");
        match &txn.tid {
            Name::Num(n) => write!(line, "{n}").ok(),
            Name::Str(s) => {
                line.push_str(&serde_json::to_string(s.as_ref()).unwrap_or_default());
                None
            }
        };
        line.push_str(", \"sid\": ");
        ident(&h.session_names[txn.session as usize], &mut line);
        let _ = write!(
            line,
            ", \"sts\": {{\"p\": {}, \"l\": {}}}, \"cts\": {{\"p\": {}, \"l\": {}}}, \"ops\": [",
            txn.start.p, txn.start.l, txn.commit.p, txn.commit.l
        );
        for (i, op) in h.txn_ops(t).iter().enumerate() {
            if i > 0 {
                line.push_str(", ");
            }
            let t = match op.kind {
                TsOpKind::Read | TsOpKind::ReadList => "r",
                TsOpKind::Write => "w",
                TsOpKind::Append => "a",
            };
            let _ = write!(line, "{{\"t\": \"{t}\", \"k\": ");
            ident(&h.key_names[op.key as usize], &mut line);
            let _ = write!(line, ", \"v\": {}}}", h.value(op));
        }
        line.push_str("]}");
        if t + 1 < h.txns.len() {
            line.push(',');
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    out.write_all(b"]\n")?;
    out.flush()
}

fn unrepresentable(problem: String) -> FormatError {
    FormatError::Unrepresentable {
        format: Format::TimeKiller,
        problem,
    }
}

/// Writes a [`History`] as TimeKiller JSON: every committed transaction needs timestamps,
/// every operation a value, and the initial transaction one value (or none = `null`) for
/// every key. Aborted transactions are dropped ([`notes`]).
pub fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    for t in 1..h.txn_count() as TxnId {
        if h.txn(t).is_committed() && h.timestamps(t).is_none() {
            return Err(unrepresentable(format!(
                "transaction {} has no timestamps, which timekiller requires",
                h.txn_label(t)
            )));
        }
    }
    for (i, op) in h.ops().iter().enumerate() {
        if op.txn == INITIAL_TXN || op.value.is_some() || !h.txn(op.txn).is_committed() {
            continue;
        }
        // A value-less read stands for `null`: fine when it reads a value-less initial write.
        let reads_null_initial = op.kind == OpKind::Read
            && h.read_from(i as u32)
                .is_some_and(|w| h.op(w).txn == INITIAL_TXN && h.op(w).value.is_none());
        if !reads_null_initial {
            let what = if op.kind == OpKind::Read {
                "read"
            } else {
                "write"
            };
            return Err(unrepresentable(format!(
                "a {what} of key {} in {} has no value, which timekiller requires \
                 (reads are matched to writes by value)",
                h.key_name(op.key),
                h.txn_label(op.txn)
            )));
        }
    }
    let th = TimestampedHistory::from_history(h)
        .map_err(|e| unrepresentable(e.message))?
        .ok_or_else(|| unrepresentable("the history has no timestamps".into()))?;
    write_timestamped(&th, out)?;
    Ok(())
}

/// What writing `h` as TimeKiller JSON drops.
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = Vec::new();
    let aborted = (1..h.txn_count() as TxnId)
        .filter(|&t| !h.txn(t).is_committed())
        .count();
    if aborted > 0 {
        notes.push(format!(
            "timekiller holds committed transactions only; {aborted} aborted transaction(s) \
             are dropped"
        ));
    }
    let empty_sessions = h.sessions().iter().filter(|s| s.txns().is_empty()).count();
    if empty_sessions > 0 {
        notes.push(format!(
            "{empty_sessions} session(s) without transactions cannot be written in timekiller"
        ));
    }
    let gone_sessions = h
        .sessions()
        .iter()
        .filter(|s| !s.txns().is_empty() && s.txns().all(|t| !h.txn(t).is_committed()))
        .count();
    if gone_sessions > 0 {
        notes.push(format!(
            "{gone_sessions} session(s) hold only aborted transactions and disappear"
        ));
    }
    let mut used = vec![false; h.key_count()];
    for (i, op) in h.ops().iter().enumerate() {
        if op.txn != INITIAL_TXN && !h.is_implicit_initial_write(i as u32) {
            used[op.key as usize] = true;
        }
    }
    let unused = used.iter().filter(|&&u| !u).count();
    if unused > 0 {
        notes.push(format!(
            "{unused} key(s) appear in no transaction and are not written in timekiller"
        ));
    }
    if let Some(v) = h.txn_ops(INITIAL_TXN).iter().find_map(|o| o.value) {
        notes.push(format!(
            "timekiller files do not carry the initial value: read the output back with \
             --initial-value {v}"
        ));
    }
    let explicit_initial = h
        .txn(INITIAL_TXN)
        .ops()
        .filter(|&o| !h.is_implicit_initial_write(o))
        .count();
    if explicit_initial > 0 {
        notes.push(
            "timekiller has no initial transaction: its writes become the initial value \
             (`--initial-value`)"
                .into(),
        );
    }
    notes
}

#[cfg(test)]
mod tests;
