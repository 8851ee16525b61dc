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
//! - Each `:invoke` is paired with the next completion of its `:process`. `:ok` is a committed
//!   transaction with the completion's values; `:fail` an aborted one (its writes, from the
//!   invocation, are aborted writes; its reads returned nothing and are dropped); `:info` is
//!   indeterminate: if some committed read observes one of its writes it is kept as committed
//!   (its writes only), otherwise it is left out, and [`History::input_notes`] says how many.
//!   An invocation never completed counts as `:info`.
//! - A process whose operation ended in `:info` crashed: its next operation starts a new
//!   session. Each process is otherwise one session.
//! - Operations whose `:f` is not `:txn` or whose `:process` is not an integer (nemesis
//!   events) are skipped, with a note.
//! - **List-append reads reveal each key's version order**: a read `[1 2 3]` shows the
//!   appends of 1, 2, 3 were installed in that order. The reader checks that every read of a
//!   key is a prefix of the longest one (else the orders contradict each other: an input
//!   error, naming both lines) and passes the longest to the history
//!   ([`History::known_write_order`]), which the checkers use as write–write facts.
//! - `:time` of the invocation and of the completion become the transaction's timestamps
//!   (`start` = invoke time, `commit` = completion time, in Jepsen's nanoseconds): real-time
//!   order, not snapshot times. `:info` transactions get none.
//!
//! Jepsen's JSON rendering is the same maps with string keys and values (`"type": "ok"`,
//! `["append", "x", 1]`), as JSON lines or one array. Writing emits the rw-register model
//! (an invocation and a completion per transaction, session by session, `:process` = session).

use std::io::Write;

use rustc_hash::{FxHashMap, FxHashSet};

use super::common::{self, InitialValues};
use super::edn::{Edn, Reader};
use super::text::{canonical_u64, json_error, utf8, LineIndex};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{
    History, HistoryBuilder, KeyId, OpKind, ReadFrom, SessionId, Timestamps, INITIAL_TXN,
};

/// Reads an Elle history in EDN.
pub fn read_edn(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let text = utf8(bytes, source)?;
    let mut lines = LineIndex::new(bytes);
    let mut reader = Reader::new(text);
    let mut ops = Vec::new();
    let edn_error = |lines: &mut LineIndex, e: super::edn::EdnError| {
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
        match reader.next_value() {
            Ok(Some((offset, value))) => ops.push((lines.line_at(offset), value)),
            Ok(None) if wrapped => {
                return Err(InputError::new(
                    source,
                    1,
                    "the history's `[` is never closed",
                ))
            }
            Ok(None) => break,
            Err(e) => return Err(edn_error(&mut lines, e)),
        }
    }
    build(ops, source)
}

/// Reads an Elle history in Jepsen's JSON rendering (JSON lines, or one array).
pub fn read_json(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let text = utf8(bytes, source)?;
    let mut ops = Vec::new();
    if text.trim_start().starts_with('[') {
        let raws: Vec<&serde_json::value::RawValue> =
            serde_json::from_str(text).map_err(|e| json_error(source, 1, &e))?;
        let mut lines = LineIndex::new(bytes);
        for raw in raws {
            let line = lines.line_of(raw.get().as_bytes());
            let v: serde_json::Value =
                serde_json::from_str(raw.get()).map_err(|e| json_error(source, line, &e))?;
            ops.push((line, Edn::from_json(v)));
        }
    } else {
        for (line_no, line) in super::text::Lines::new(bytes) {
            let line = super::text::trim(line);
            if line.is_empty() {
                continue;
            }
            let v: serde_json::Value =
                serde_json::from_slice(line).map_err(|e| json_error(source, line_no, &e))?;
            ops.push((line_no, Edn::from_json(v)));
        }
    }
    build(ops, source)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    Fail,
    Info,
}

/// A micro-operation: `list` is a range of `lists` for a list-append read.
struct Mop {
    kind: OpKind,
    key: KeyId,
    value: Option<u64>,
    list: Option<(u32, u32)>,
}

struct Completed {
    process: i64,
    status: Status,
    line: u32,
    times: Option<(i64, i64)>,
    mops: Vec<Mop>,
}

struct Pending<'a> {
    line: u32,
    time: Option<i64>,
    value: Edn<'a>,
}

fn key_name<'b>(k: &'b Edn, buf: &'b mut String) -> Option<&'b str> {
    match k {
        Edn::Int(i) => {
            use std::fmt::Write as _;
            buf.clear();
            let _ = write!(buf, "{i}");
            Some(buf)
        }
        Edn::Keyword(s) | Edn::Symbol(s) => Some(s),
        Edn::Str(s) => Some(s),
        _ => None,
    }
}

fn uint(v: &Edn) -> Option<u64> {
    match v {
        Edn::Int(i) if *i >= 0 => Some(*i as u64),
        _ => None,
    }
}

/// Parses a transaction's micro-operations.
fn mops(
    value: &Edn,
    b: &mut HistoryBuilder,
    lists: &mut Vec<u64>,
    with_reads: bool,
) -> Result<Vec<Mop>, String> {
    let items = value.items().ok_or_else(|| {
        format!(
            ":value is a vector of micro-operations, found {}",
            value.describe()
        )
    })?;
    let mut out = Vec::with_capacity(items.len());
    let mut buf = String::new();
    for m in items {
        let parts = match m.items() {
            Some(p) if p.len() == 3 => p,
            _ => {
                return Err(format!(
                    "a micro-operation is [f k v], found {}",
                    m.describe()
                ))
            }
        };
        let f = parts[0].word().unwrap_or("");
        let key = key_name(&parts[1], &mut buf).ok_or_else(|| {
            format!(
                "a key is an integer, keyword or string, found {}",
                parts[1].describe()
            )
        })?;
        let key = b.key(key);
        let v = &parts[2];
        let bad_value = || format!("a value is an unsigned integer, found {}", v.describe());
        match f {
            "w" | "append" => out.push(Mop {
                kind: OpKind::Write,
                key,
                value: Some(uint(v).ok_or_else(bad_value)?),
                list: None,
            }),
            "r" if !with_reads => {}
            "r" => match v {
                Edn::Nil => out.push(Mop {
                    kind: OpKind::Read,
                    key,
                    value: None,
                    list: None,
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
                    });
                }
                _ => out.push(Mop {
                    kind: OpKind::Read,
                    key,
                    value: Some(uint(v).ok_or_else(bad_value)?),
                    list: None,
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
    Ok(out)
}

fn build(ops: Vec<(u32, Edn)>, source: &str) -> Result<History, InputError> {
    let mut b = HistoryBuilder::new(source);
    let mut lists: Vec<u64> = Vec::new();
    let mut pending: FxHashMap<i64, Pending> = FxHashMap::default();
    let mut completed: Vec<Completed> = Vec::new();
    let mut skipped = 0usize;
    for (line, op) in ops {
        let err = |m: String| InputError::new(source, line, m);
        if !matches!(op, Edn::Map(_)) {
            return Err(err(format!(
                "an operation is a map, found {}",
                op.describe()
            )));
        }
        // None: an invocation.
        let status = match op.get("type").and_then(Edn::word) {
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
        let process = match op.get("process") {
            Some(Edn::Int(p)) => *p,
            _ => {
                skipped += 1;
                continue;
            }
        };
        if op.get("f").and_then(Edn::word) != Some("txn") {
            skipped += 1;
            continue;
        }
        let time = match op.get("time") {
            Some(Edn::Int(t)) => Some(*t),
            _ => None,
        };
        let value = match op {
            Edn::Map(entries) => entries
                .into_iter()
                .find(|(k, _)| k.word() == Some("value"))
                .map(|(_, v)| v)
                .unwrap_or(Edn::Nil),
            _ => Edn::Nil,
        };
        let Some(status) = status else {
            if pending.contains_key(&process) {
                return Err(err(format!(
                    "process {process} invokes again before its last invocation completed"
                )));
            }
            pending.insert(process, Pending { line, time, value });
            continue;
        };
        let Some(invocation) = pending.remove(&process) else {
            return Err(err(format!(
                "a completion of process {process} without an invocation"
            )));
        };
        let (source_value, with_reads) = match status {
            Status::Ok => (&value, true),
            _ => (&invocation.value, false),
        };
        let parsed = mops(source_value, &mut b, &mut lists, with_reads).map_err(err)?;
        let times = match (invocation.time, time, status) {
            (Some(s), Some(c), Status::Ok | Status::Fail) if 0 <= s && s <= c => Some((s, c)),
            _ => None,
        };
        completed.push(Completed {
            process,
            status,
            line: invocation.line,
            times,
            mops: parsed,
        });
    }
    // Invocations never completed are indeterminate.
    let mut open: Vec<(i64, Pending)> = pending.into_iter().collect();
    open.sort_by_key(|(_, p)| p.line);
    for (process, p) in open {
        let parsed = mops(&p.value, &mut b, &mut lists, false)
            .map_err(|m| InputError::new(source, p.line, m))?;
        completed.push(Completed {
            process,
            status: Status::Info,
            line: p.line,
            times: None,
            mops: parsed,
        });
    }

    // Writes some committed read observed (for :info transactions), and the longest list
    // read of each key (the version order), checked for prefix compatibility.
    let mut observed: FxHashSet<(KeyId, u64)> = FxHashSet::default();
    let mut longest: FxHashMap<KeyId, (u32, u32, u32)> = FxHashMap::default(); // (start, end, line)
    for c in completed.iter().filter(|c| c.status == Status::Ok) {
        for m in &c.mops {
            if m.kind != OpKind::Read {
                continue;
            }
            match m.list {
                None => {
                    if let Some(v) = m.value {
                        observed.insert((m.key, v));
                    }
                }
                Some((s, e)) => {
                    let list = &lists[s as usize..e as usize];
                    observed.extend(list.iter().map(|&v| (m.key, v)));
                    match longest.get(&m.key).copied() {
                        None => {
                            longest.insert(m.key, (s, e, c.line));
                        }
                        Some((ls, le, lline)) => {
                            let known = &lists[ls as usize..le as usize];
                            let (short, long) = if list.len() <= known.len() {
                                (list, known)
                            } else {
                                (known, list)
                            };
                            if long[..short.len()] != *short {
                                return Err(InputError::new(
                                    source,
                                    c.line,
                                    format!(
                                        "incompatible orders of key {}: this read of {:?} and \
                                         the read of {:?} at line {lline} are not prefixes of \
                                         one another",
                                        b.key_name(m.key),
                                        list,
                                        known
                                    ),
                                ));
                            }
                            if list.len() > known.len() {
                                longest.insert(m.key, (s, e, c.line));
                            }
                        }
                    }
                }
            }
        }
    }

    let mut sessions: FxHashMap<i64, SessionId> = FxHashMap::default();
    let mut had_session: FxHashSet<i64> = FxHashSet::default();
    let mut left_out = 0usize;
    for c in &completed {
        let keep = match c.status {
            Status::Info => c.mops.iter().any(|m| {
                m.kind == OpKind::Write && observed.contains(&(m.key, m.value.unwrap_or(0)))
            }),
            _ => true,
        };
        if keep {
            let s = match sessions.get(&c.process) {
                Some(&s) => s,
                None => {
                    // The process's first session carries its id; later ones (after a
                    // crash) are anonymous.
                    let s = if had_session.insert(c.process) {
                        b.session(u64::try_from(c.process).ok())
                    } else {
                        b.session(None)
                    };
                    sessions.insert(c.process, s);
                    s
                }
            };
            let t = b.begin_at(s, None, c.line);
            if c.status == Status::Fail {
                b.abort(t);
            }
            if let Some((start, commit)) = c.times {
                b.set_timestamps(
                    t,
                    Timestamps {
                        start: start as u64,
                        commit: commit as u64,
                    },
                );
            }
            for m in &c.mops {
                match m.kind {
                    OpKind::Write => b.write(t, m.key, m.value, c.line),
                    OpKind::Read => {
                        let from = m.value.map_or(ReadFrom::Initial, ReadFrom::Value);
                        b.read(t, m.key, m.value, from, c.line);
                    }
                }
            }
        } else {
            left_out += 1;
        }
        if c.status == Status::Info {
            // The process crashed: its next operation is a new session.
            sessions.remove(&c.process);
        }
    }
    let mut orders: Vec<(KeyId, (u32, u32, u32))> = longest.into_iter().collect();
    orders.sort_unstable_by_key(|&(k, _)| k);
    for (key, (s, e, line)) in orders {
        let values = lists[s as usize..e as usize].to_vec();
        b.version_order(key, &values, line);
    }
    if left_out > 0 {
        b.note(format!(
            "{left_out} indeterminate (:info) transaction(s) whose writes no committed read \
             observed are left out"
        ));
    }
    if skipped > 0 {
        b.note(format!(
            "{skipped} operation(s) that are not transactions (:f other than :txn, or a \
             non-integer :process such as the nemesis) are skipped"
        ));
    }
    b.build()
}

/// One written operation: (type, process, index, time, micro-operations text).
fn ops_text(h: &History, edn: bool) -> Result<Vec<String>, FormatError> {
    let format = if edn { Format::Elle } else { Format::ElleJson };
    let plan = common::plan_values(h, InitialValues::Zero)
        .map_err(|problem| FormatError::Unrepresentable { format, problem })?;
    let all_int = h.key_names().iter().all(|n| canonical_u64(n).is_some());
    let key = |k: KeyId| -> String {
        let n = h.key_name(k);
        if all_int {
            n.to_string()
        } else if edn {
            format!("{n:?}")
        } else {
            serde_json::to_string(n).unwrap_or_default()
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
    use crate::check::{check, CheckOptions, Level};

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
        assert_eq!(
            h.timestamps(1),
            Some(Timestamps {
                start: 1,
                commit: 3
            })
        );
        assert_eq!(h.input_notes().len(), 1, "{:?}", h.input_notes());
        let r = check(&h, Level::ReadCommitted, &CheckOptions::default()).unwrap();
        assert!(!r.is_consistent(), "{r}");
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
            ("{:type :ok, :f :txn, :value [], :process 0}", 1, "without an invocation"),
            ("{:type :invoke, :f :txn, :value [], :process 0}\n{:type :what, :f :txn, :process 0}", 2, ":type is"),
            ("{:type :invoke, :f :txn, :value [[:w 1 -1]], :process 0}\n{:type :ok, :f :txn, :value [[:w 1 -1]], :process 0}", 2, "unsigned integer"),
            ("\n{:type :invoke :f}", 2, "invalid EDN"),
            (
                "{:type :invoke, :f :txn, :value [[:append 1 1] [:append 1 2]], :process 0}\n\
                 {:type :ok, :f :txn, :value [[:append 1 1] [:append 1 2]], :process 0}\n\
                 {:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1}\n\
                 {:type :ok, :f :txn, :value [[:r 1 [1 2]]], :process 1}\n\
                 {:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1}\n\
                 {:type :ok, :f :txn, :value [[:r 1 [2]]], :process 1}",
                5,
                "incompatible orders",
            ),
        ];
        for &(text, line, message) in cases {
            let e = read_edn(text.as_bytes(), "h.edn").unwrap_err();
            assert_eq!(e.line(), line, "{text}: {e}");
            assert!(e.to_string().contains(message), "{text}: {e}");
        }
    }

    #[test]
    fn rw_register_round_trips() {
        let text = "\
{:type :invoke, :f :txn, :value [[:w 1 1] [:r 2 nil]], :process 0, :time 1, :index 0}
{:type :ok, :f :txn, :value [[:w 1 1] [:r 2 nil]], :process 0, :time 2, :index 1}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :time 3, :index 2}
{:type :ok, :f :txn, :value [[:r 1 1]], :process 1, :time 4, :index 3}
";
        let h = read_edn(text.as_bytes(), "h.edn").unwrap();
        let mut out = Vec::new();
        write_edn(&h, &mut out).unwrap();
        assert_eq!(String::from_utf8(out.clone()).unwrap(), text);
        let mut json = Vec::new();
        write_json(&h, &mut json).unwrap();
        let g = read_json(&json, "j").unwrap();
        h.same_content(&g).unwrap();
        assert_eq!(g.timestamps(2), h.timestamps(2));
    }
}
