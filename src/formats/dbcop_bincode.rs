//! dbcop's 2019 binary histories (Biswas & Enea, OOPSLA'19 artifact; the collections PolySI,
//! Plume and AWDIT use): a directory holding `history.bincode`, serialised with bincode 1.x
//! (little-endian, `u64` lengths):
//!
//! ```text
//! u64 id, u64 n_node, u64 n_variable, u64 n_transaction, u64 n_event
//! info, start, end:  u64 length + UTF-8 bytes each
//! u64 session count; per session: u64 transaction count;
//!   per transaction: u64 event count;
//!     per event: bool write (1 byte), u64 variable, u64 value, bool success
//!   then bool success (the transaction committed)
//! ```
//!
//! - Value 0 is the initial value of every variable: a read of 0 reads the initial
//!   transaction. Values are unique per variable.
//! - Failed events (`success` false) are dropped; a failed transaction is kept as aborted, so
//!   its writes are aborted writes (a committed read of one is an AbortedRead).
//! - The header counts are informational and not checked; trailing bytes are an error.
//! - Errors name the file and the byte offset of the offending field (the [`InputError`]'s
//!   line is 0; the message starts with `byte N`).
//!
//! Writing emits `id` 0, the real counts, `info` = `isopredict`, empty `start` and `end`;
//! every operation succeeds.

use std::io::Write;

use super::common::{self, InitialValues};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{History, HistoryBuilder, OpKind, ReadFrom, INITIAL_TXN};

/// The file a dbcop-bincode directory holds.
pub const FILE_NAME: &str = "history.bincode";

/// A cursor over the bytes; errors name the byte offset.
pub(crate) struct Bytes<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) source: &'a str,
}

impl<'a> Bytes<'a> {
    pub(crate) fn error_at(&self, pos: usize, message: impl std::fmt::Display) -> InputError {
        InputError::new(self.source, 0, format!("byte {pos}: {message}"))
    }

    #[inline]
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], InputError> {
        if self.bytes.len() - self.pos < n {
            return Err(self.error_at(
                self.pos,
                format!("the file ends inside {what} ({n} bytes expected)"),
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    fn u64(&mut self, what: &str) -> Result<u64, InputError> {
        let s = self.take(8, what)?;
        Ok(u64::from_le_bytes(s.try_into().unwrap_or_default()))
    }

    #[inline]
    fn bool(&mut self, what: &str) -> Result<bool, InputError> {
        let at = self.pos;
        match self.take(1, what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.error_at(at, format!("{what} is a bool (0 or 1), found {b}"))),
        }
    }

    /// A length that must leave at least `min_each` bytes per item in the rest of the file.
    fn len(&mut self, what: &str, min_each: usize) -> Result<usize, InputError> {
        let at = self.pos;
        let n = self.u64(what)?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n.saturating_mul(min_each as u64) > left {
            return Err(self.error_at(
                at,
                format!("{what} {n} is larger than the rest of the file allows"),
            ));
        }
        Ok(n as usize)
    }
}

/// Maps a builder error whose line is an index into `offsets` (1-based) to a byte offset.
pub(crate) fn offset_error(e: InputError, offsets: &[u64]) -> InputError {
    match e.line() {
        0 => e,
        l => {
            let at = offsets.get(l as usize - 1).copied().unwrap_or(0);
            InputError::new(e.location.file, 0, format!("byte {at}: {}", e.message))
        }
    }
}

/// Reads the contents of a `history.bincode` file.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let mut c = Bytes {
        bytes,
        pos: 0,
        source,
    };
    for field in ["id", "n_node", "n_variable", "n_transaction", "n_event"] {
        c.u64(field)?;
    }
    for field in ["info", "start", "end"] {
        let n = c.len(&format!("the length of {field}"), 1)?;
        let at = c.pos;
        let s = c.take(n, field)?;
        if std::str::from_utf8(s).is_err() {
            return Err(c.error_at(at, format!("{field} is not UTF-8")));
        }
    }
    let mut b = HistoryBuilder::new(source);
    b.initial_value(0);
    // Operation "lines" are indexes into `offsets`, so builder errors can name bytes.
    let mut offsets: Vec<u64> = Vec::new();
    let mut keys: rustc_hash::FxHashMap<u64, u32> = rustc_hash::FxHashMap::default();
    let mut name = String::new();
    let sessions = c.len("the session count", 8)?;
    for _ in 0..sessions {
        let s = b.session(None);
        let txns = c.len("a session's transaction count", 9)?;
        for _ in 0..txns {
            let txn_at = c.pos as u64;
            offsets.push(txn_at);
            let t = b.begin_at(s, None, offsets.len() as u32);
            let events = c.len("a transaction's event count", 18)?;
            for _ in 0..events {
                let at = c.pos as u64;
                let write = c.bool("an event's write flag")?;
                let variable = c.u64("an event's variable")?;
                let value = c.u64("an event's value")?;
                let success = c.bool("an event's success flag")?;
                if !success {
                    continue;
                }
                let key = *keys.entry(variable).or_insert_with(|| {
                    use std::fmt::Write as _;
                    name.clear();
                    let _ = write!(name, "{variable}");
                    b.key(&name)
                });
                offsets.push(at);
                let line = offsets.len() as u32;
                if write {
                    b.write(t, key, Some(value), line);
                } else {
                    b.read(t, key, Some(value), ReadFrom::Value(value), line);
                }
            }
            if !c.bool("a transaction's success flag")? {
                b.abort(t);
            }
        }
    }
    if c.pos != bytes.len() {
        return Err(c.error_at(
            c.pos,
            format!("{} bytes after the last session", bytes.len() - c.pos),
        ));
    }
    b.build().map_err(|e| offset_error(e, &offsets))
}

/// Writes a history as the contents of a `history.bincode` file.
pub fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    let plan = common::plan_values(h, InitialValues::Zero).map_err(|problem| {
        FormatError::Unrepresentable {
            format: Format::DbcopBincode,
            problem,
        }
    })?;
    let (keys, _) = common::integer_keys(h);
    let u = |out: &mut dyn Write, v: u64| out.write_all(&v.to_le_bytes());
    let events: usize = (1..h.txn_count())
        .map(|t| h.txn(t as u32).ops().len())
        .sum();
    u(out, 0)?;
    u(out, h.sessions().len() as u64)?;
    u(out, h.key_count() as u64)?;
    u(out, h.txn_count() as u64 - 1)?;
    u(out, events as u64)?;
    for s in ["isopredict", "", ""] {
        u(out, s.len() as u64)?;
        out.write_all(s.as_bytes())?;
    }
    u(out, h.sessions().len() as u64)?;
    for session in h.sessions() {
        u(out, session.txns().len() as u64)?;
        for t in session.txns() {
            let ops = h.txn(t).ops();
            u(out, ops.len() as u64)?;
            for o in ops {
                let op = h.op(o);
                out.write_all(&[u8::from(op.kind == OpKind::Write)])?;
                u(out, keys[op.key as usize])?;
                let value = match op.kind {
                    OpKind::Read if h.writer_txn(o) == Some(INITIAL_TXN) => 0,
                    _ => plan.values[o as usize],
                };
                u(out, value)?;
                out.write_all(&[1])?;
            }
            out.write_all(&[u8::from(h.txn(t).is_committed())])?;
        }
    }
    Ok(())
}

/// What writing `h` as dbcop bincode drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = Vec::new();
    if common::integer_keys(h).1 > 0 {
        notes.push(
            "dbcop-bincode variables are integers; key names that are not get unused numbers"
                .into(),
        );
    }
    if let Ok(plan) = common::plan_values(h, InitialValues::Zero) {
        notes.extend(common::values_note(h, plan.synthesized, "dbcop-bincode"));
    }
    super::dbcop::ids_and_initial_notes(h, &mut notes, "dbcop-bincode");
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout from the description, by hand: two sessions; a failed event, a failed
    /// transaction.
    pub(crate) fn example() -> Vec<u8> {
        let mut v = Vec::new();
        let u = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes());
        for x in [7, 2, 2, 3, 5] {
            u(&mut v, x);
        }
        for s in ["info", "s", ""] {
            u(&mut v, s.len() as u64);
            v.extend_from_slice(s.as_bytes());
        }
        let event = |v: &mut Vec<u8>, w: bool, var: u64, val: u64, ok: bool| {
            v.push(w as u8);
            u(v, var);
            u(v, val);
            v.push(ok as u8);
        };
        u(&mut v, 2); // sessions
        u(&mut v, 2); // session 0: two transactions
        u(&mut v, 2);
        event(&mut v, true, 0, 1, true);
        event(&mut v, true, 1, 1, false); // failed event: dropped
        v.push(1);
        u(&mut v, 1);
        event(&mut v, false, 0, 1, true);
        v.push(1);
        u(&mut v, 1); // session 1: one failed transaction
        u(&mut v, 2);
        event(&mut v, false, 1, 0, true); // reads the initial value
        event(&mut v, true, 0, 2, true);
        v.push(0);
        v
    }

    #[test]
    fn reads_the_layout() {
        let h = read(&example(), "history.bincode").unwrap();
        let s = h.stats();
        assert_eq!((s.sessions, s.committed, s.aborted), (2, 2, 1));
        assert_eq!((s.reads, s.writes), (2, 2));
        assert_eq!(h.writer_txn(h.txn(2).ops().start), Some(1));
        assert_eq!(h.writer_txn(h.txn(3).ops().start), Some(INITIAL_TXN));
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        let g = read(&out, "w").unwrap();
        h.same_content(&g).unwrap();
    }

    #[test]
    fn errors_name_the_byte() {
        let bytes = example();
        for cut in [0, 3, 40, 70, bytes.len() - 1] {
            let e = read(&bytes[..cut], "h").unwrap_err();
            assert!(e.to_string().starts_with("h: byte "), "{e}");
        }
        let mut bad = bytes.clone();
        bad.push(0);
        assert!(read(&bad, "h")
            .unwrap_err()
            .to_string()
            .contains("1 bytes after"));
        // A write of the same value twice: the builder's error is mapped to its byte.
        let mut dup = bytes;
        let n = dup.len();
        dup[n - 10] = 1; // the failed transaction writes 0 := 1, like session 0
        let e = read(&dup, "h").unwrap_err();
        assert!(e.to_string().contains("byte 191: duplicate write"), "{e}");
    }
}
