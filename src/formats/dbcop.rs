//! dbcop's current JSON histories (dbcop, Biswas & Enea OOPSLA'19, the maintained Rust tool):
//! either an object `{"params": …, "info": …, "start": …, "end": …, "data": [sessions]}` or a
//! bare array of sessions. A session is an array of transactions; a transaction is
//!
//! ```json
//! {"events": [{"Write": {"variable": 1, "version": 2}},
//!             {"Read": {"variable": 1, "version": null}}],
//!  "committed": true}
//! ```
//!
//! - A read's `version` names the write it observed by (variable, version); `null` is the
//!   initial value (a read of the initial transaction), and so is version 0 when no
//!   transaction writes 0 (dbcop's `Default` version). Versions are unique per variable.
//! - `"committed": false` marks an aborted transaction (kept, in no order).
//! - Events are `{"Write": …}` / `{"Read": …}` objects or dbcop's compact
//!   `["w", variable, version]` / `["r", variable, version]`, as dbcop reads both.
//! - Variables are unsigned integers or strings; `params`, `info`, `start`, `end` and any
//!   other top-level field are ignored.
//!
//! Writing emits a bare array of sessions: keys as integers when every key name is one (else
//! strings), the history's own versions when they are unique and non-zero per key (else
//! made-up ones), `null` for reads of the initial transaction.

use std::io::Write;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{self, InitialValues};
use super::text::{canonical_u64, json_error, utf8, JsonKey, LineIndex};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{History, HistoryBuilder, OpKind, ReadFrom, TxnId, INITIAL_TXN};

#[derive(Deserialize)]
struct Doc<'a> {
    #[serde(borrow)]
    data: Vec<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Txn<'a> {
    #[serde(borrow)]
    events: Vec<Event<'a>>,
    committed: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Access<'a, V> {
    #[serde(borrow)]
    variable: JsonKey<'a>,
    version: V,
}

/// An event: `{"Write": {…}}` / `{"Read": {…}}`, or dbcop's compact form
/// `["w", variable, version]` / `["r", variable, version]` (its `compact-serde` feature;
/// dbcop reads both).
enum Event<'a> {
    Write(Access<'a, u64>),
    Read(Access<'a, Option<u64>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Event<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Event<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "an event: {\"Read\": …}, {\"Write\": …}, [\"r\", variable, version] or \
                     [\"w\", variable, version]",
                )
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Event<'a>, A::Error> {
                let tag: &'de str = m
                    .next_key()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let event = match tag {
                    "Write" => Event::Write(m.next_value()?),
                    "Read" => Event::Read(m.next_value()?),
                    other => return Err(de::Error::unknown_variant(other, &["Read", "Write"])),
                };
                if m.next_key::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom("an event has one field, Read or Write"));
                }
                Ok(event)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Event<'a>, A::Error> {
                let tag: &'de str = s
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let variable: JsonKey<'a> = s
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                let event = match tag {
                    "w" => Event::Write(Access {
                        variable,
                        version: s
                            .next_element()?
                            .ok_or_else(|| de::Error::invalid_length(2, &self))?,
                    }),
                    "r" => Event::Read(Access {
                        variable,
                        version: s
                            .next_element()?
                            .ok_or_else(|| de::Error::invalid_length(2, &self))?,
                    }),
                    other => return Err(de::Error::unknown_variant(other, &["r", "w"])),
                };
                if s.next_element::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(4, &self));
                }
                Ok(event)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct FastDoc<'a> {
    #[serde(borrow)]
    data: Vec<Vec<Txn<'a>>>,
}

/// Reads a dbcop JSON history.
///
/// The first pass parses the whole document straight into transactions (fast, no line
/// numbers); only if it or the build fails does a second pass parse transaction by
/// transaction to name the line of the problem.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let text = utf8(bytes, source)?;
    let bare = text.trim_start().starts_with('[');
    let fast: Result<Vec<Vec<Txn>>, _> = if bare {
        serde_json::from_str(text)
    } else {
        serde_json::from_str::<FastDoc>(text).map(|d| d.data)
    };
    if let Ok(sessions) = fast {
        let mut b = HistoryBuilder::new(source);
        let mut name = String::new();
        for session in sessions {
            let s = b.session(None);
            for txn in session {
                add_txn(&mut b, s, txn, 0, &mut name);
            }
        }
        if let Ok(h) = b.build() {
            return Ok(h);
        }
    }
    read_with_lines(text, bytes, bare, source)
}

/// The write a dbcop read of `version` observed: `null` is the initial state, and so is
/// version 0 unless some transaction writes 0 (dbcop's `Default` version, its
/// `tests/version_zero.rs`); any other version is the write of that version.
pub(crate) fn read_from(version: Option<u64>) -> ReadFrom {
    match version {
        None => ReadFrom::Initial,
        Some(0) => ReadFrom::ValueOrInitial(0),
        Some(v) => ReadFrom::Value(v),
    }
}

fn add_txn(b: &mut HistoryBuilder, s: u32, txn: Txn, line: u32, name: &mut String) {
    let t = b.begin_at(s, None, line);
    if !txn.committed {
        b.abort(t);
    }
    for event in txn.events {
        match event {
            Event::Write(a) => {
                let key = b.key(a.variable.name(name));
                b.write(t, key, Some(a.version), line);
            }
            Event::Read(a) => {
                let key = b.key(a.variable.name(name));
                let from = read_from(a.version);
                b.read(t, key, a.version, from, line);
            }
        }
    }
}

/// The slow pass: each transaction parsed on its own, so errors name its line.
fn read_with_lines(
    text: &str,
    bytes: &[u8],
    bare: bool,
    source: &str,
) -> Result<History, InputError> {
    let sessions: Vec<Vec<&RawValue>> = if bare {
        serde_json::from_str(text)
    } else {
        serde_json::from_str::<Doc>(text).map(|d| d.data)
    }
    .map_err(|e| json_error(source, 1, &e))?;
    let mut lines = LineIndex::new(bytes);
    let mut b = HistoryBuilder::new(source);
    let mut name = String::new();
    for session in sessions {
        let s = b.session(None);
        for raw in session {
            let line = lines.line_of(raw.get().as_bytes());
            let txn: Txn =
                serde_json::from_str(raw.get()).map_err(|e| json_error(source, line, &e))?;
            add_txn(&mut b, s, txn, line, &mut name);
        }
    }
    b.build()
}

/// Key names as JSON: integers when every name is a canonical integer, else strings.
pub(crate) fn json_keys(h: &History) -> Vec<String> {
    let all_int = h.key_names().iter().all(|n| canonical_u64(n).is_some());
    h.key_names()
        .iter()
        .map(|n| {
            if all_int {
                n.clone()
            } else {
                serde_json::to_string(n).unwrap_or_default()
            }
        })
        .collect()
}

/// Writes a history as a bare dbcop JSON array of sessions.
pub fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    let plan = common::plan_values(h, InitialValues::Zero).map_err(|problem| {
        FormatError::Unrepresentable {
            format: Format::Dbcop,
            problem,
        }
    })?;
    let keys = json_keys(h);
    writeln!(out, "[")?;
    for (i, session) in h.sessions().iter().enumerate() {
        write!(out, "  [")?;
        for (j, t) in session.txns().enumerate() {
            out.write_all(if j == 0 { b"\n" } else { b",\n" })?;
            write!(out, "    {{\"events\": [")?;
            for (k, o) in h.txn(t).ops().enumerate() {
                if k > 0 {
                    write!(out, ", ")?;
                }
                let op = h.op(o);
                let key = &keys[op.key as usize];
                match op.kind {
                    OpKind::Write => write!(
                        out,
                        "{{\"Write\": {{\"variable\": {key}, \"version\": {}}}}}",
                        plan.values[o as usize]
                    )?,
                    OpKind::Read if h.writer_txn(o) == Some(INITIAL_TXN) => write!(
                        out,
                        "{{\"Read\": {{\"variable\": {key}, \"version\": null}}}}"
                    )?,
                    OpKind::Read => write!(
                        out,
                        "{{\"Read\": {{\"variable\": {key}, \"version\": {}}}}}",
                        plan.values[o as usize]
                    )?,
                }
            }
            write!(out, "], \"committed\": {}}}", h.txn(t).is_committed())?;
        }
        if session.txns().is_empty() {
            write!(out, "]")?;
        } else {
            write!(out, "\n  ]")?;
        }
        writeln!(out, "{}", if i + 1 < h.sessions().len() { "," } else { "" })?;
    }
    writeln!(out, "]")?;
    Ok(())
}

/// What writing `h` as dbcop JSON drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = Vec::new();
    if let Ok(plan) = common::plan_values(h, InitialValues::Zero) {
        notes.extend(common::values_note(h, plan.synthesized, "dbcop"));
    }
    ids_and_initial_notes(h, &mut notes, "dbcop");
    notes
}

/// Notes shared by the dbcop formats: ids, timestamps, the initial transaction's own
/// operations (dbcop has no initial transaction: reads of it say "initial value").
pub(crate) fn ids_and_initial_notes(h: &History, notes: &mut Vec<String>, format: &str) {
    if h.has_timestamps() {
        notes.push(format!(
            "{format} cannot carry timestamps; they are dropped"
        ));
    }
    if h.sessions().iter().any(|s| s.external_id.is_some())
        || (1..h.txn_count() as TxnId).any(|t| h.txn(t).external_id.is_some())
    {
        notes.push(format!(
            "{format} has no session or transaction ids; they are dropped"
        ));
    }
    notes.extend(common::unused_keys_note(h, format));
    let explicit_initial = h.txn(INITIAL_TXN).ops().len() - h.implicit_initial_writes() as usize;
    if explicit_initial > 0 {
        notes.push(format!(
            "{format} has no initial transaction: its {explicit_initial} explicit operation(s) \
             are dropped (reads of it read the initial value)"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const EXAMPLE: &str = r#"{"params": {"n_sessions": 2}, "info": "example",
 "start": "2024-01-01", "end": "2024-01-01",
 "data": [
  [{"events": [{"Write": {"variable": 0, "version": 1}}, {"Write": {"variable": 1, "version": 1}}], "committed": true},
   {"events": [{"Read": {"variable": 0, "version": 1}}], "committed": true}],
  [{"events": [{"Read": {"variable": 1, "version": null}}, {"Write": {"variable": 0, "version": 2}}], "committed": false}]
 ]}"#;

    #[test]
    fn reads_the_object_and_the_bare_array() {
        let h = read(EXAMPLE.as_bytes(), "d.json").unwrap();
        assert_eq!(h.sessions().len(), 2);
        let s = h.stats();
        assert_eq!((s.committed, s.aborted, s.reads, s.writes), (2, 1, 2, 3));
        assert_eq!(h.writer_txn(h.txn(2).ops().start), Some(1));
        assert_eq!(h.writer_txn(h.txn(3).ops().start), Some(INITIAL_TXN));
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        let g = read(&out, "w").unwrap();
        h.same_content(&g).unwrap();
        assert!(notes(&h).is_empty(), "{:?}", notes(&h));
    }

    /// dbcop's `tests/version_zero.rs`: version 0 is the initial state unless a transaction
    /// writes 0; its compact events `["r", x, v]` are read too.
    #[test]
    fn version_zero_and_compact_events() {
        let h = read(
            br#"[[{"events": [["r", "x", 0], ["w", "x", 1]], "committed": true}],
                 [{"events": [{"Read": {"variable": "x", "version": 0}}, ["w", "y", 0]], "committed": true},
                  {"events": [["r", "y", 0]], "committed": false}]]"#,
            "d.json",
        )
        .unwrap();
        assert!(h.unresolved().is_empty());
        assert_eq!(h.writer_txn(h.txn(1).ops().start), Some(INITIAL_TXN));
        assert_eq!(h.writer_txn(h.txn(2).ops().start), Some(INITIAL_TXN));
        // y := 0 is written, so y == 0 reads it.
        assert_eq!(h.writer_txn(h.txn(3).ops().start), Some(2));
        assert!(!h.txn(3).is_committed());
        let e = read(
            br#"[[{"events": [["q", "x", 0]], "committed": true}]]"#,
            "d.json",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown variant"), "{e}");
    }

    #[test]
    fn errors_name_the_line() {
        let bad = EXAMPLE.replace("\"version\": 2", "\"version\": 1");
        let e = read(bad.as_bytes(), "d.json").unwrap_err();
        assert_eq!(e.line(), 6, "{e}");
        assert!(e.to_string().contains("duplicate write"), "{e}");
        let bad = EXAMPLE.replace("\"Read\": {\"variable\": 0", "\"Reed\": {\"variable\": 0");
        let e = read(bad.as_bytes(), "d.json").unwrap_err();
        assert_eq!(e.line(), 5, "{e}");
        let e = read(b"[[{\"events\": []}]", "d.json").unwrap_err();
        assert_eq!(e.line(), 1, "{e}");
    }
}
