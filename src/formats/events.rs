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
//! - The initial state's writes, if listed: `{"event":"write","txn":"initial","key":…}`
//!   (no session, no begin).
//!
//! This is the format [`crate::store::postgres::Recorder::write_events`] writes.

use std::io::Write;

use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, TxnId, INITIAL_TXN};
use crate::store::hash_str;

/// Whether a line looks like an event of this format: a JSON object with an `event` field.
pub(crate) fn looks_like(line: &[u8]) -> bool {
    line.first() == Some(&b'{')
        && serde_json::from_slice::<Json>(line)
            .ok()
            .and_then(|v| v.get("event").map(|e| e.is_string()))
            .unwrap_or(false)
}

/// A transaction or session id as written (numbers and strings are distinct ids).
fn id_text(v: &Json) -> Option<String> {
    match v {
        Json::Number(n) => Some(format!("#{n}")),
        Json::String(s) => Some(format!("\"{s}")),
        _ => None,
    }
}

fn value_u64(v: &Json) -> u64 {
    match v.as_u64() {
        Some(n) => n,
        None => hash_str(&v.to_string()),
    }
}

struct Event {
    line: u32,
    write: bool,
    txn: String,
    key: String,
    value: Option<u64>,
    writer: Option<String>,
}

/// Reads an event log.
pub(crate) fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let err = |line: u32, m: String| InputError::new(source, line, m);
    let mut b = HistoryBuilder::new(source);
    b.allow_duplicate_writes(true);
    let mut sessions: FxHashMap<String, u32> = FxHashMap::default();
    let mut txns: FxHashMap<String, (BuilderTxn, Option<bool>)> = FxHashMap::default();
    let mut events = Vec::new();
    for (line_no, line) in super::text::Lines::new(bytes) {
        let line = super::text::trim(line);
        if super::text::is_blank_or_comment(line) {
            continue;
        }
        let v: Json = serde_json::from_slice(line)
            .map_err(|e| err(line_no, format!("not a JSON object: {e}")))?;
        let Some(obj) = v.as_object() else {
            return Err(err(line_no, "expected a JSON object".into()));
        };
        let kind = obj.get("event").and_then(Json::as_str).ok_or_else(|| {
            err(
                line_no,
                "missing \"event\" (begin, read, write, commit or abort)".into(),
            )
        })?;
        let txn = obj
            .get("txn")
            .and_then(id_text)
            .ok_or_else(|| err(line_no, "missing \"txn\" (a number or a string)".into()))?;
        let initial = txn == "\"initial";
        match kind {
            "begin" => {
                let session = obj.get("session").and_then(id_text).ok_or_else(|| {
                    err(line_no, "missing \"session\" (a number or a string)".into())
                })?;
                if initial {
                    return Err(err(
                        line_no,
                        "\"initial\" is the initial state, not a transaction to begin".into(),
                    ));
                }
                if txns.contains_key(&txn) {
                    return Err(err(
                        line_no,
                        format!("transaction {} begins twice", &txn[1..]),
                    ));
                }
                let next = sessions.len() as u32;
                let s = *sessions.entry(session.clone()).or_insert(next);
                let s = if s == next {
                    b.session(obj.get("session").and_then(Json::as_u64))
                } else {
                    s
                };
                let bt = b.begin_at(s, obj.get("txn").and_then(Json::as_u64), line_no);
                txns.insert(txn, (bt, None));
            }
            "commit" | "abort" => match txns.get_mut(&txn) {
                Some((_, end @ None)) => *end = Some(kind == "commit"),
                Some(_) => {
                    return Err(err(
                        line_no,
                        format!("transaction {} ends twice", &txn[1..]),
                    ))
                }
                None => {
                    return Err(err(
                        line_no,
                        format!("{kind} of transaction {} before its begin", &txn[1..]),
                    ))
                }
            },
            "read" | "write" => {
                let key = match obj.get("key") {
                    Some(Json::String(s)) => s.clone(),
                    Some(Json::Number(n)) => n.to_string(),
                    _ => {
                        return Err(err(
                            line_no,
                            "missing \"key\" (a string or a number)".into(),
                        ))
                    }
                };
                if !initial {
                    match txns.get(&txn) {
                        Some((_, None)) => {}
                        Some(_) => {
                            return Err(err(
                                line_no,
                                format!("{kind} in transaction {} after it ended", &txn[1..]),
                            ))
                        }
                        None => {
                            return Err(err(
                                line_no,
                                format!("{kind} of transaction {} before its begin", &txn[1..]),
                            ))
                        }
                    }
                } else if kind == "read" {
                    return Err(err(line_no, "the initial state only writes".into()));
                }
                let writer = match obj.get("writer") {
                    None | Some(Json::Null) => None,
                    Some(Json::String(s)) if s == "initial" => Some("\"initial".to_string()),
                    Some(w) => Some(id_text(w).ok_or_else(|| {
                        err(
                            line_no,
                            "\"writer\" must be a transaction id or \"initial\"".into(),
                        )
                    })?),
                };
                events.push(Event {
                    line: line_no,
                    write: kind == "write",
                    txn,
                    key,
                    value: obj.get("value").map(value_u64),
                    writer,
                });
            }
            other => {
                return Err(err(
                    line_no,
                    format!("unknown event {other:?} (begin, read, write, commit or abort)"),
                ))
            }
        }
    }
    for (bt, end) in txns.values() {
        if *end != Some(true) {
            b.abort(*bt);
        }
    }
    let mut keys: FxHashMap<String, u32> = FxHashMap::default();
    for e in events {
        let next = keys.len();
        let k = match keys.get(&e.key) {
            Some(&k) => k,
            None => {
                let k = b.key(&e.key);
                debug_assert_eq!(k as usize, next);
                keys.insert(e.key.clone(), k);
                k
            }
        };
        let bt = if e.txn == "\"initial" {
            BuilderTxn::INITIAL
        } else {
            txns[&e.txn].0
        };
        if e.write {
            b.write(bt, k, e.value, e.line);
            continue;
        }
        let from = match &e.writer {
            Some(w) if w == "\"initial" => ReadFrom::Initial,
            Some(w) => match txns.get(w) {
                Some(&(t, _)) => ReadFrom::Txn(t),
                None => return Err(err(e.line, format!("the writer {} never begins", &w[1..]))),
            },
            None => match e.value {
                Some(v) => ReadFrom::Value(v),
                None => ReadFrom::Unknown,
            },
        };
        b.read(bt, k, e.value, from, e.line);
    }
    b.build()
}

fn unrepresentable(problem: String) -> FormatError {
    FormatError::Unrepresentable {
        format: Format::Events,
        problem,
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
    let value = |v: Option<u64>| v.map_or(String::new(), |v| format!(",\"value\":{v}"));
    let key = |k: u32| serde_json::to_string(h.key_name(k)).unwrap_or_default();
    for o in h.txn(INITIAL_TXN).ops() {
        let op = h.op(o);
        // Implicit initial writes too: the initial transaction keeps the same keys.
        if op.kind == OpKind::Write {
            writeln!(
                out,
                "{{\"event\":\"write\",\"txn\":\"initial\",\"key\":{}{}}}",
                key(op.key),
                value(op.value)
            )?;
        }
    }
    for (s, session) in h.sessions().iter().enumerate() {
        for t in session.txns() {
            writeln!(out, "{{\"event\":\"begin\",\"session\":{s},\"txn\":{t}}}")?;
            let mut own: FxHashMap<u32, u32> = FxHashMap::default();
            for o in h.txn(t).ops() {
                let op = h.op(o);
                if op.kind == OpKind::Write {
                    own.insert(op.key, o);
                    writeln!(
                        out,
                        "{{\"event\":\"write\",\"session\":{s},\"txn\":{t},\"key\":{}{}}}",
                        key(op.key),
                        value(op.value)
                    )?;
                    continue;
                }
                let Some(w) = h.read_from(o) else {
                    return Err(unrepresentable(format!(
                        "transaction {} reads {} from no known write",
                        h.txn_label(t),
                        h.key_name(op.key)
                    )));
                };
                let wt = h.op(w).txn;
                let writer = if wt == INITIAL_TXN {
                    "\"initial\"".to_string()
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
                            h.key_name(op.key),
                            h.txn_label(wt)
                        )));
                    }
                    wt.to_string()
                };
                writeln!(
                    out,
                    "{{\"event\":\"read\",\"session\":{s},\"txn\":{t},\"key\":{}{},\"writer\":{writer}}}",
                    key(op.key),
                    value(op.value)
                )?;
            }
            let end = if h.txn(t).is_committed() {
                "commit"
            } else {
                "abort"
            };
            writeln!(out, "{{\"event\":\"{end}\",\"session\":{s},\"txn\":{t}}}")?;
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
}
