//! Plume/PolySI text histories (Liu et al., OOPSLA'24, artifact format; also read by AWDIT,
//! PLDI'25, as `-f plume`): one operation per line, `r(key,value,session,txn)` or
//! `w(key,value,session,txn)`, all integers, in program order.
//!
//! - Transaction ids are global; a transaction's place in its session is its first
//!   appearance; a transaction id seen in two sessions is an error.
//! - Value 0 is the initial value of every key: `r(k,0,…)` reads the initial transaction, and
//!   every `w(k,0,s,t)` line (Plume writes them as `w(k,0,0,0)`) is an explicit write of the
//!   initial transaction, whatever `s` and `t` say.
//! - `txn = -1` marks an aborted transaction's operation. Consecutive `-1` lines of one
//!   session form one aborted transaction, kept in that session (aborted transactions take
//!   part in no order). Plume and AWDIT keep only the writes; reads are kept here too.
//! - Keys are integers and are named by their decimal form; values are unique per key.
//! - Blank lines and lines starting with `#` are skipped (an extension).
//!
//! Writing emits the explicit initial writes as `w(k,0,0,0)`, then session by session each
//! transaction's operations; the history's own values when usable, else unique made-up ones.

use std::fmt::Write as _;
use std::io::Write;

use rustc_hash::FxHashMap;

use super::common::{self, InitialValues};
use super::text::{error, is_blank_or_comment, trim, Cursor, Lines};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{
    BuilderTxn, History, HistoryBuilder, KeyId, OpKind, ReadFrom, TxnId, INITIAL_TXN,
};

/// Whether a (trimmed, non-empty) line looks like Plume: `r(` or `w(`, spaces allowed.
pub(crate) fn looks_like(line: &[u8]) -> bool {
    matches!(line[0], b'r' | b'w') && trim(&line[1..]).first() == Some(&b'(')
}

/// One parsed line.
struct Line {
    kind: OpKind,
    key: u64,
    value: u64,
    session: u64,
    /// `None` for `-1` (aborted).
    txn: Option<u64>,
}

#[inline]
fn parse_line(line: &[u8]) -> Result<Line, String> {
    let kind = match line[0] {
        b'r' => OpKind::Read,
        b'w' => OpKind::Write,
        _ => {
            return Err(format!(
                "expected `r(` or `w(`, found `{}`",
                super::text::excerpt(line)
            ))
        }
    };
    let mut c = Cursor::new(&line[1..]);
    c.expect(b"(")?;
    let key = c.u64("a key (an integer)")?;
    c.expect(b",")?;
    let value = c.u64("a value (an integer)")?;
    c.expect(b",")?;
    let session = c.u64("a session id (an integer)")?;
    c.expect(b",")?;
    let txn = if c.eat(b"-") {
        match c.u64("1 after `-`")? {
            1 => None,
            n => {
                return Err(format!(
                    "transaction id -{n}: the only negative id is -1 (aborted)"
                ))
            }
        }
    } else {
        Some(c.u64("a transaction id (an integer or -1)")?)
    };
    c.expect(b")")?;
    c.end()?;
    Ok(Line {
        kind,
        key,
        value,
        session,
        txn,
    })
}

/// A transaction id's builder transaction and session.
#[derive(Clone, Copy)]
struct KnownTxn {
    txn: BuilderTxn,
    session: u64,
    line: u32,
}

/// Reads a Plume text history.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let mut b = HistoryBuilder::new(source);
    b.initial_value(0);
    let mut keys: FxHashMap<u64, KeyId> = FxHashMap::default();
    let mut txns: FxHashMap<u64, KnownTxn> = FxHashMap::default();
    let mut name = String::new();
    // The transaction of the previous line (most lines continue it).
    let mut last: Option<(u64, KnownTxn)> = None;
    // The aborted transaction the previous line added to, with its session id.
    let mut aborted: Option<(u64, BuilderTxn)> = None;
    for (line_no, raw) in Lines::new(bytes) {
        let line = trim(raw);
        if is_blank_or_comment(line) {
            continue;
        }
        let op = parse_line(line).map_err(|m| error(source, line_no, m))?;
        let key = match keys.get(&op.key) {
            Some(&k) => k,
            None => {
                name.clear();
                let _ = write!(name, "{}", op.key);
                let k = b.key(&name);
                keys.insert(op.key, k);
                k
            }
        };
        let txn = match op.txn {
            None => {
                let txn = match aborted {
                    Some((s, t)) if s == op.session => t,
                    _ => {
                        let s = b.session(Some(op.session));
                        let t = b.begin_at(s, None, line_no);
                        b.abort(t);
                        t
                    }
                };
                aborted = Some((op.session, txn));
                txn
            }
            Some(_) if op.kind == OpKind::Write && op.value == 0 => {
                aborted = None;
                b.write(BuilderTxn::INITIAL, key, Some(0), line_no);
                continue;
            }
            Some(id) => {
                aborted = None;
                let known = match last {
                    Some((last_id, known)) if last_id == id => known,
                    _ => {
                        let known = match txns.get(&id) {
                            Some(&known) => known,
                            None => {
                                let s = b.session(Some(op.session));
                                let known = KnownTxn {
                                    txn: b.begin_at(s, Some(id), line_no),
                                    session: op.session,
                                    line: line_no,
                                };
                                txns.insert(id, known);
                                known
                            }
                        };
                        last = Some((id, known));
                        known
                    }
                };
                if known.session != op.session {
                    return Err(error(
                        source,
                        line_no,
                        format!(
                            "transaction {id} is in session {} here but in session {} at line {}",
                            op.session, known.session, known.line
                        ),
                    ));
                }
                known.txn
            }
        };
        match op.kind {
            OpKind::Read => b.read(txn, key, Some(op.value), ReadFrom::Value(op.value), line_no),
            OpKind::Write => b.write(txn, key, Some(op.value), line_no),
        }
    }
    b.build()
}

fn unrepresentable(problem: String) -> FormatError {
    FormatError::Unrepresentable {
        format: Format::Plume,
        problem,
    }
}

/// Writes a history as Plume text.
pub fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    let plan = common::plan_values(h, InitialValues::Zero).map_err(unrepresentable)?;
    let (keys, _) = common::integer_keys(h);
    let sessions = common::session_ids(h, |_| true);
    let txn_ids = common::txn_ids(
        h,
        false,
        |t| h.txn(t).is_committed(),
        |e| e <= i64::MAX as u64,
    );
    let mut initial_written = vec![false; h.key_count()];
    for o in h.txn(INITIAL_TXN).ops() {
        let key = h.op(o).key;
        if h.op(o).kind == OpKind::Write
            && !h.is_implicit_initial_write(o)
            && !initial_written[key as usize]
        {
            initial_written[key as usize] = true;
            writeln!(out, "w({},0,0,0)", keys[key as usize])?;
        }
    }
    for (s, session) in h.sessions().iter().enumerate() {
        let sid = sessions[s];
        for t in session.txns() {
            let txn = h.txn(t);
            let tid = if txn.is_committed() {
                txn_ids[t as usize] as i64
            } else {
                -1
            };
            for o in txn.ops() {
                let op = h.op(o);
                let c = match op.kind {
                    OpKind::Read => 'r',
                    OpKind::Write => 'w',
                };
                writeln!(
                    out,
                    "{c}({},{},{sid},{tid})",
                    keys[op.key as usize], plan.values[o as usize]
                )?;
            }
        }
    }
    Ok(())
}

/// What writing `h` as Plume text drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = common::integer_format_notes(h, InitialValues::Zero, "plume");
    let mut seen = vec![false; h.key_count()];
    let repeated = h
        .txn(INITIAL_TXN)
        .ops()
        .filter(|&o| h.op(o).kind == OpKind::Write && !h.is_implicit_initial_write(o))
        .any(|o| std::mem::replace(&mut seen[h.op(o).key as usize], true));
    if repeated {
        notes.push(
            "the initial transaction writes a key more than once; plume writes each once".into(),
        );
    }
    let adjacent_aborted = h.sessions().iter().any(|s| {
        let nonempty: Vec<TxnId> = s.txns().filter(|&t| !h.txn(t).ops().is_empty()).collect();
        nonempty
            .windows(2)
            .any(|w| !h.txn(w[0]).is_committed() && !h.txn(w[1]).is_committed())
    });
    if adjacent_aborted {
        notes.push(
            "consecutive aborted transactions of a session merge into one (plume marks \
             aborted operations only with -1)"
                .into(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{TxnStatus, Unresolved};

    fn read_str(text: &str) -> Result<History, InputError> {
        read(text.as_bytes(), "p.txt")
    }

    #[test]
    fn reads_sessions_transactions_and_initial_values() {
        let h = read_str(
            "w(1,0,0,0)\nw(1,5,3,10)\nr(2,0,3,10)\nr(1,5,4,11)\nw(2,7,4,11)\nr(1,5,3,12)\n",
        )
        .unwrap();
        assert_eq!(h.sessions().len(), 2);
        assert_eq!(h.sessions()[0].external_id, Some(3));
        assert_eq!(h.sessions()[0].txns(), 1..3);
        assert_eq!(h.txn(1).external_id, Some(10));
        assert_eq!(h.txn(2).external_id, Some(12));
        assert_eq!(h.txn(3).external_id, Some(11));
        // One explicit initial write (key 1) and one implicit (key 2).
        assert_eq!(h.txn(INITIAL_TXN).ops().len(), 2);
        assert_eq!(h.implicit_initial_writes(), 1);
        let t1 = h.txn(1).ops().start;
        assert_eq!(h.writer_txn(t1 + 1), Some(INITIAL_TXN));
        assert_eq!(h.writer_txn(h.txn(3).ops().start), Some(1));
        assert_eq!(h.key_name(0), "1");
    }

    #[test]
    fn aborted_lines_group_into_aborted_transactions() {
        let h =
            read_str("w(1,1,1,-1)\nw(2,1,1,-1)\nw(1,2,2,5)\nw(1,3,1,-1)\nr(1,1,2,6)\n").unwrap();
        // Session 1: aborted {w1,w2} and aborted {w1=3}, split by line 3.
        assert_eq!(h.sessions()[0].txns(), 1..3);
        assert_eq!(h.txn(1).status, TxnStatus::Aborted);
        assert_eq!(h.txn(1).ops().len(), 2);
        assert_eq!(h.txn(2).status, TxnStatus::Aborted);
        assert_eq!(h.txn(2).ops().len(), 1);
        let s = h.stats();
        assert_eq!((s.committed, s.aborted), (2, 2));
        // The committed read of value 1 observes the aborted write.
        let r = h.txn(4).ops().start;
        assert_eq!(h.writer_txn(r), Some(1));
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, u32, &str)] = &[
            ("w(1,1,1,1)\nx(1,2,3,4)\n", 2, "expected `r(` or `w(`"),
            ("w(1,1,1,1)\n\nr(1,1,1)\n", 3, "expected `,`"),
            ("r(a,1,1,1)", 1, "expected a key"),
            ("r(1,1,1,-2)", 1, "only negative id is -1"),
            ("r(1,1,1,1) x", 1, "unexpected `x`"),
            ("r(1,1,1,1", 1, "expected `)`"),
            ("r(99999999999999999999,1,1,1)", 1, "64 bits"),
            (
                "w(1,1,1,1)\nw(1,2,2,1)\n",
                2,
                "transaction 1 is in session 2 here",
            ),
            ("w(1,1,1,1)\nw(1,1,1,2)\n", 2, "duplicate write"),
        ];
        for &(text, line, message) in cases {
            let e = read_str(text).unwrap_err();
            assert_eq!(e.line(), line, "{text:?}: {e}");
            assert!(e.to_string().contains(message), "{text:?}: {e}");
            assert!(e.to_string().starts_with(&format!("p.txt:{line}: ")), "{e}");
        }
    }

    #[test]
    fn thin_air_reads_are_unresolved() {
        let h = read_str("r(1,9,1,1)\n").unwrap();
        assert_eq!(h.unresolved().len(), 1);
        assert_eq!(h.unresolved()[0].1, Unresolved::NoSuchWrite);
    }

    #[test]
    fn writes_and_reads_back() {
        let text = "w(1,0,0,0)\nw(1,5,3,10)\nr(2,0,3,10)\nw(2,8,3,-1)\nr(1,5,4,11)\nr(2,8,4,11)\n";
        let h = read_str(text).unwrap();
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        let written = String::from_utf8(out).unwrap();
        assert_eq!(written, text);
        assert!(notes(&h).is_empty(), "{:?}", notes(&h));
    }
}
