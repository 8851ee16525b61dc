//! The AWDIT test format (Møldrup & Pavlogiannis, PLDI'25, artifact `-f test`; the labelled
//! histories in testdata/awdit): one operation per line, `r KEY VALUE` or `w KEY VALUE`
//! (integers); a line of `-` characters ends a transaction, a line of `=` characters ends a
//! session.
//!
//! - There is no initial transaction in the file: initial values are written by an ordinary
//!   transaction, and a read of a value no write wrote has no writer (a thin-air read).
//! - Empty transactions and sessions (two separators in a row) are skipped, as AWDIT does.
//! - Values are unique per key: a read names its writer by (key, value).
//! - Blank lines and lines starting with `#` are skipped (an extension; AWDIT rejects them).
//!
//! Writing: committed transactions session by session. The format has no aborted
//! transactions (they are dropped) and no initial transaction: if the history has explicit
//! initial writes or reads of the initial state, they become a first session with one
//! transaction, as in AWDIT's own test files.

use std::fmt::Write as _;
use std::io::Write;

use rustc_hash::FxHashMap;

use super::common::{self, InitialValues};
use super::text::{error, excerpt, is_blank_or_comment, trim, Cursor, Lines};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{
    BuilderTxn, History, HistoryBuilder, KeyId, OpId, OpKind, ReadFrom, SessionId, INITIAL_TXN,
};

fn is_separator(line: &[u8], c: u8) -> bool {
    !line.is_empty() && line.iter().all(|&b| b == c)
}

/// Whether a (trimmed, non-empty) line looks like the AWDIT test format.
pub(crate) fn looks_like(line: &[u8]) -> bool {
    is_separator(line, b'-')
        || is_separator(line, b'=')
        || (matches!(line[0], b'r' | b'w') && matches!(line.get(1), Some(b' ' | b'\t')))
}

/// Reads an AWDIT test-format history.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let mut b = HistoryBuilder::new(source);
    let mut keys: FxHashMap<u64, KeyId> = FxHashMap::default();
    let mut name = String::new();
    let mut session: Option<SessionId> = None;
    let mut txn: Option<BuilderTxn> = None;
    for (line_no, raw) in Lines::new(bytes) {
        let line = trim(raw);
        if is_blank_or_comment(line) {
            continue;
        }
        if is_separator(line, b'-') {
            txn = None;
            continue;
        }
        if is_separator(line, b'=') {
            txn = None;
            session = None;
            continue;
        }
        let kind = match line {
            [b'r', b' ' | b'\t', ..] => OpKind::Read,
            [b'w', b' ' | b'\t', ..] => OpKind::Write,
            _ => {
                return Err(error(
                    source,
                    line_no,
                    format!(
                        "expected `r KEY VALUE`, `w KEY VALUE`, a line of `-` or a line of `=`, \
                         found `{}`",
                        excerpt(line)
                    ),
                ))
            }
        };
        let mut c = Cursor::new(&line[2..]);
        let parsed = (|| {
            let key = c.u64("a key (an integer)")?;
            let value = c.u64("a value (an integer)")?;
            c.end()?;
            Ok::<_, String>((key, value))
        })();
        let (key_int, value) = parsed.map_err(|m| error(source, line_no, m))?;
        let key = match keys.get(&key_int) {
            Some(&k) => k,
            None => {
                name.clear();
                let _ = write!(name, "{key_int}");
                let k = b.key(&name);
                keys.insert(key_int, k);
                k
            }
        };
        let s = *session.get_or_insert_with(|| b.session(None));
        let t = *txn.get_or_insert_with(|| b.begin_at(s, None, line_no));
        match kind {
            OpKind::Read => b.read(t, key, Some(value), ReadFrom::Value(value), line_no),
            OpKind::Write => b.write(t, key, Some(value), line_no),
        }
    }
    b.build()
}

fn unrepresentable(problem: String) -> FormatError {
    FormatError::Unrepresentable {
        format: Format::Awdit,
        problem,
    }
}

/// The initial transaction's writes that become an ordinary first transaction: the explicit
/// ones and those a committed transaction reads.
pub(crate) fn materialized_initial_writes(h: &History) -> Vec<OpId> {
    let t0 = h.txn(INITIAL_TXN).ops();
    let mut read = vec![false; t0.len()];
    for (i, op) in h.ops().iter().enumerate() {
        if op.kind == OpKind::Read && h.txn(op.txn).is_committed() {
            if let Some(w) = h.read_from(i as OpId) {
                if t0.contains(&w) {
                    read[(w - t0.start) as usize] = true;
                }
            }
        }
    }
    let start = t0.start;
    t0.filter(|&o| {
        h.op(o).kind == OpKind::Write
            && (!h.is_implicit_initial_write(o) || read[(o - start) as usize])
    })
    .collect()
}

/// Writes a history in the AWDIT test format.
pub fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    if let Some((read, writer)) = common::committed_read_of_aborted(h) {
        return Err(unrepresentable(format!(
            "{} reads key {} from the aborted {}, and the format has no aborted transactions",
            h.txn_label(h.op(read).txn),
            h.key_name(h.op(read).key),
            h.txn_label(writer)
        )));
    }
    let plan = common::plan_values(h, InitialValues::Unique).map_err(unrepresentable)?;
    let (keys, _) = common::integer_keys(h);
    let op_line = |out: &mut dyn Write, o: OpId| -> std::io::Result<()> {
        let op = h.op(o);
        let c = match op.kind {
            OpKind::Read => 'r',
            OpKind::Write => 'w',
        };
        writeln!(
            out,
            "{c} {} {}",
            keys[op.key as usize], plan.values[o as usize]
        )
    };
    let mut first_session = true;
    let initial = materialized_initial_writes(h);
    if !initial.is_empty() {
        for &o in &initial {
            op_line(out, o)?;
        }
        first_session = false;
    }
    for session in h.sessions() {
        let mut first_txn = true;
        for t in session.txns() {
            let txn = h.txn(t);
            if !txn.is_committed() || txn.ops().is_empty() {
                continue;
            }
            if first_txn {
                if !first_session {
                    writeln!(out, "=====")?;
                }
                first_session = false;
            } else {
                writeln!(out, "-----")?;
            }
            first_txn = false;
            for o in txn.ops() {
                op_line(out, o)?;
            }
        }
    }
    Ok(())
}

/// What writing `h` in the AWDIT test format drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = common::integer_format_notes(h, InitialValues::Unique, "awdit");
    let aborted = common::aborted_with_ops(h);
    if aborted > 0 {
        notes.push(format!(
            "the awdit format has no aborted transactions; {aborted} are dropped"
        ));
    }
    if !materialized_initial_writes(h).is_empty() {
        notes.push(
            "the awdit format has no initial transaction; the initial writes that are read \
             or explicit become a first session"
                .into(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<History, InputError> {
        read(text.as_bytes(), "a.txt")
    }

    #[test]
    fn reads_sessions_and_transactions() {
        let h =
            read_str("w 0 0\nw 1 0\n=====\nw 0 1\n-----\nr 0 1\nr 1 0\n=====\n\nr 1 7").unwrap();
        assert_eq!(h.sessions().len(), 3);
        assert_eq!(h.sessions()[1].txns(), 2..4);
        let s = h.stats();
        assert_eq!((s.committed, s.reads, s.writes), (4, 3, 3));
        // No implicit initial values: the read of 1=7 has no writer; 1=0 is session 0's.
        assert_eq!(h.unresolved().len(), 1);
        assert_eq!(h.writer_txn(h.txn(3).ops().start + 1), Some(1));
    }

    #[test]
    fn empty_blocks_are_skipped() {
        let h = read_str("=====\n-----\nw 1 1\n-----\n-----\n=====\n=====\nr 1 1\n").unwrap();
        assert_eq!(h.sessions().len(), 2);
        assert_eq!(h.txn_count(), 3);
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, u32, &str)] = &[
            ("w 1 1\n-=-\n", 2, "expected `r KEY VALUE`"),
            ("w 1\n", 1, "expected a value"),
            ("w 1 2 3\n", 1, "unexpected `3`"),
            ("\n\nr x 2\n", 3, "expected a key"),
            ("w 1 2\n=====\nw 1 2\n", 3, "duplicate write"),
            ("write 1 2\n", 1, "expected `r KEY VALUE`"),
        ];
        for &(text, line, message) in cases {
            let e = read_str(text).unwrap_err();
            assert_eq!(e.line(), line, "{text:?}: {e}");
            assert!(e.to_string().contains(message), "{text:?}: {e}");
        }
    }

    #[test]
    fn writes_and_reads_back() {
        let text =
            "w 0 0\nw 1 0\n=====\nw 0 1\n-----\nr 0 1\nr 1 0\n=====\nw 1 1\n-----\nr 1 1\nr 0 5\n";
        let h = read_str(text).unwrap();
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text);
        assert!(notes(&h).is_empty(), "{:?}", notes(&h));
    }
}
