//! dbcop's text DSL: one transaction in square brackets, operations separated by spaces (or
//! commas): `x:=1` writes 1 to `x`, `y==2` reads 2 from `y`, `z==?` reads the initial value of
//! `z`. A `!` right after the closing bracket marks an uncommitted (aborted) transaction. A
//! line of `---` starts the next session; `//` starts a comment. Several transactions may
//! share a line; a transaction does not span lines.
//!
//! ```text
//! // session 1
//! [x:=1 y:=1]
//! [x==1]
//! ---
//! [y==? x:=2]!
//! ```
//!
//! Names are letters, digits and `_`; values are unsigned integers, unique per name (a read
//! names its writer by the value). Writing renames keys that are not such names to numbers.

use std::io::Write;

use super::common::{self, InitialValues};
use super::dbcop::read_from as dbcop_read_from;
use super::text::{error, excerpt, trim, Lines};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{History, HistoryBuilder, OpKind, SessionId, INITIAL_TXN};

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Reads a dbcop text-DSL history.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let mut b = HistoryBuilder::new(source);
    let mut session: Option<SessionId> = None;
    for (line_no, raw) in Lines::new(bytes) {
        let mut line = trim(raw);
        if let Some(i) = line.windows(2).position(|w| w == b"//") {
            line = trim(&line[..i]);
        }
        if line.is_empty() {
            continue;
        }
        if line.len() >= 3 && line.iter().all(|&c| c == b'-') {
            session = None;
            continue;
        }
        let err = |m: String| error(source, line_no, m);
        let mut pos = 0;
        while pos < line.len() {
            match line[pos] {
                b' ' | b'\t' => {
                    pos += 1;
                    continue;
                }
                b'[' => {}
                _ => {
                    return Err(err(format!(
                        "expected `[` (a transaction), `---` or `//`, found `{}`",
                        excerpt(&line[pos..])
                    )))
                }
            }
            let close = line[pos..]
                .iter()
                .position(|&c| c == b']')
                .ok_or_else(|| err("a transaction is not closed by `]` on its line".into()))?;
            let body = &line[pos + 1..pos + close];
            pos += close + 1;
            let s = *session.get_or_insert_with(|| b.session(None));
            let t = b.begin_at(s, None, line_no);
            if line.get(pos) == Some(&b'!') {
                b.abort(t);
                pos += 1;
            }
            for token in body
                .split(|&c| c == b' ' || c == b'\t' || c == b',')
                .filter(|t| !t.is_empty())
            {
                let name_len = token.iter().take_while(|&&c| is_name_byte(c)).count();
                let (name, rest) = token.split_at(name_len);
                if name.is_empty() {
                    return Err(err(format!(
                        "expected a variable name (letters, digits, `_`), found `{}`",
                        excerpt(token)
                    )));
                }
                let (kind, value) = if let Some(v) = rest.strip_prefix(b":=") {
                    (OpKind::Write, v)
                } else if let Some(v) = rest.strip_prefix(b"==") {
                    (OpKind::Read, v)
                } else {
                    return Err(err(format!(
                        "expected `NAME:=VALUE`, `NAME==VALUE` or `NAME==?`, found `{}`",
                        excerpt(token)
                    )));
                };
                // Names are ASCII by construction.
                let key = b.key(std::str::from_utf8(name).unwrap_or_default());
                let value = if kind == OpKind::Read && value == b"?" {
                    None
                } else {
                    Some(parse_u64(value).ok_or_else(|| {
                        err(format!(
                            "expected an unsigned integer value{}, found `{}`",
                            if kind == OpKind::Read { " or `?`" } else { "" },
                            excerpt(value)
                        ))
                    })?)
                };
                match kind {
                    OpKind::Write => b.write(t, key, value, line_no),
                    OpKind::Read => {
                        let from = dbcop_read_from(value);
                        b.read(t, key, value, from, line_no)
                    }
                }
            }
        }
    }
    b.build()
}

fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// The key names to write: the history's own when they are all names, else numbers.
fn names(h: &History) -> (Vec<String>, bool) {
    let ok = h
        .key_names()
        .iter()
        .all(|n| !n.is_empty() && n.bytes().all(is_name_byte));
    if ok {
        (h.key_names().to_vec(), false)
    } else {
        let (ints, _) = common::integer_keys(h);
        (ints.iter().map(|i| i.to_string()).collect(), true)
    }
}

/// Writes a history in the dbcop text DSL, one transaction per line.
pub fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    let plan = common::plan_values(h, InitialValues::Zero).map_err(|problem| {
        FormatError::Unrepresentable {
            format: Format::DbcopText,
            problem,
        }
    })?;
    let (keys, _) = names(h);
    for (i, session) in h.sessions().iter().enumerate() {
        if i > 0 {
            writeln!(out, "---")?;
        }
        for t in session.txns() {
            write!(out, "[")?;
            for (k, o) in h.txn(t).ops().enumerate() {
                let op = h.op(o);
                let sep = if k > 0 { " " } else { "" };
                let key = &keys[op.key as usize];
                match op.kind {
                    OpKind::Write => write!(out, "{sep}{key}:={}", plan.values[o as usize])?,
                    OpKind::Read if h.writer_txn(o) == Some(INITIAL_TXN) => {
                        write!(out, "{sep}{key}==?")?
                    }
                    OpKind::Read => write!(out, "{sep}{key}=={}", plan.values[o as usize])?,
                }
            }
            writeln!(out, "]{}", if h.txn(t).is_committed() { "" } else { "!" })?;
        }
    }
    Ok(())
}

/// What writing `h` in the dbcop text DSL drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = Vec::new();
    if names(h).1 {
        notes.push(
            "dbcop-text names are letters, digits and `_`; other key names become numbers".into(),
        );
    }
    if let Ok(plan) = common::plan_values(h, InitialValues::Zero) {
        notes.extend(common::values_note(h, plan.synthesized, "dbcop-text"));
    }
    super::dbcop::ids_and_initial_notes(h, &mut notes, "dbcop-text");
    let empty_sessions = h.sessions().iter().filter(|s| s.txns().is_empty()).count();
    if empty_sessions > 0 {
        notes.push(format!(
            "{empty_sessions} session(s) without transactions cannot be written in dbcop-text"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "// session 1\n[x:=1 y:=1]\n[x==1]\n---\n[y==? x:=2]!\n";

    #[test]
    fn reads_and_writes_back_verbatim() {
        let h = read(EXAMPLE.as_bytes(), "d.txt").unwrap();
        let s = h.stats();
        assert_eq!((s.sessions, s.committed, s.aborted), (2, 2, 1));
        assert_eq!(h.writer_txn(h.txn(2).ops().start), Some(1));
        assert_eq!(h.writer_txn(h.txn(3).ops().start), Some(INITIAL_TXN));
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[x:=1 y:=1]\n[x==1]\n---\n[y==? x:=2]!\n"
        );
        // Two transactions on one line, commas.
        let g = read(b"[a:=1,b:=2] [a==1]  // c\n", "d").unwrap();
        assert_eq!(g.stats().committed, 2);
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, u32, &str)] = &[
            ("[x:=1]\n[x:1]\n", 2, "expected `NAME:=VALUE`"),
            ("[x:=1\n", 1, "not closed"),
            ("\n\nx:=1\n", 3, "expected `[`"),
            ("[x:=?]\n", 1, "unsigned integer value"),
            ("[x:=1]\n---\n[x:=1]\n", 3, "duplicate write"),
            ("[-:=1]\n", 1, "variable name"),
        ];
        for &(text, line, message) in cases {
            let e = read(text.as_bytes(), "d").unwrap_err();
            assert_eq!(e.line(), line, "{text:?}: {e}");
            assert!(e.to_string().contains(message), "{text:?}: {e}");
        }
    }
}
