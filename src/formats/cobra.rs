//! Cobra's binary client logs (Tan et al., OSDI'20): a directory of per-client `*.log`
//! files, each a sequence of records, a one-byte tag followed by big-endian `i64` fields:
//!
//! ```text
//! 'S' txnid                                  start of a transaction
//! 'W' write_id key_hash value_hash           a write; write_id identifies it
//! 'R' writer_txnid write_id key_hash value_hash   a read of the write write_id
//! 'C' txnid                                  commit
//! ```
//!
//! - Each file is one session (files in name order); its transactions in file order.
//! - A read names its writer by write id: `0xbebeebee` (initial) and `0xdeadbeef` (a null
//!   read: the key did not exist yet) both read the initial transaction. Keys are named by
//!   the decimal form of `key_hash` (as unsigned); the value recorded for an operation is its
//!   write id (the value hash is only a hash). `writer_txnid` is not checked.
//! - A transaction without its `C` (the next `S` or the end of the file comes first) is kept
//!   as aborted. A `C` whose id differs from its `S` is an error.
//! - Only `*.log` files are read. The `.debug` and `.error` files Cobra's client leaves beside
//!   them (and any other file) are ignored: they hold diagnostics, not operations.
//! - Errors name the file and the byte offset (the [`InputError`]'s line is 0).
//!
//! Writing emits one `T<n>.log` per session (`n` from 0, the names Cobra's verifier reads);
//! write ids are the operation's position + 1, so they are unique.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::common;
use super::FormatError;
use crate::error::InputError;
use crate::history::{History, HistoryBuilder, OpKind, ReadFrom, INITIAL_TXN};

/// The write id of a read of the initial value.
pub const INIT_WRITE_ID: u64 = 0xbebe_ebee;
/// The write id of a read that found no value.
pub const NULL_WRITE_ID: u64 = 0xdead_beef;

/// Whether the bytes start like a Cobra log: an `S` record.
pub(crate) fn looks_like(bytes: &[u8]) -> bool {
    bytes.len() >= 9 && bytes[0] == b'S'
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    #[inline]
    fn i64(&mut self) -> Option<u64> {
        let s = self.bytes.get(self.pos..self.pos + 8)?;
        self.pos += 8;
        Some(u64::from_be_bytes(s.try_into().ok()?))
    }
}

/// Reads Cobra logs given as `(file name, contents)`, one session each; `source` names the
/// whole input (the directory).
pub fn read_logs(files: &[(String, &[u8])], source: &str) -> Result<History, InputError> {
    let mut b = HistoryBuilder::new(source);
    // Operation "lines" index `offsets`: (file, byte) for builder errors.
    let mut offsets: Vec<(u32, u64)> = Vec::new();
    let mut keys: FxHashMap<u64, u32> = FxHashMap::default();
    let mut name = String::new();
    for (f, (file, bytes)) in files.iter().enumerate() {
        let err =
            |at: usize, m: String| InputError::new(file.clone(), 0, format!("byte {at}: {m}"));
        let s = b.session(Some(f as u64));
        let mut c = Cursor { bytes, pos: 0 };
        let mut open: Option<(crate::history::BuilderTxn, u64)> = None;
        while c.pos < bytes.len() {
            let at = c.pos;
            let tag = bytes[at];
            c.pos += 1;
            let fields = match tag {
                b'S' | b'C' => 1,
                b'W' => 3,
                b'R' => 4,
                _ => {
                    return Err(err(
                        at,
                        format!("unknown record tag 0x{tag:02x} (expected S, W, R or C)"),
                    ))
                }
            };
            let mut v = [0u64; 4];
            for slot in v.iter_mut().take(fields) {
                *slot = c.i64().ok_or_else(|| {
                    err(
                        at,
                        format!("the file ends inside a `{}` record", tag as char),
                    )
                })?;
            }
            offsets.push((f as u32, at as u64));
            let line = offsets.len() as u32;
            match tag {
                b'S' => {
                    // A transaction without its commit record is aborted.
                    if let Some((t, _)) = open.take() {
                        b.abort(t);
                    }
                    open = Some((b.begin_at(s, Some(v[0]), line), v[0]));
                }
                b'C' => match open.take() {
                    Some((_, id)) if id == v[0] => {}
                    Some((_, id)) => {
                        return Err(err(
                            at,
                            format!("commit of transaction {} inside transaction {id}", v[0]),
                        ))
                    }
                    None => {
                        return Err(err(
                            at,
                            format!("commit of transaction {} outside a transaction", v[0]),
                        ))
                    }
                },
                _ => {
                    let Some((t, _)) = open else {
                        return Err(err(
                            at,
                            format!("a `{}` record outside a transaction", tag as char),
                        ));
                    };
                    let (write_id, key_hash) = if tag == b'W' {
                        (v[0], v[1])
                    } else {
                        (v[1], v[2])
                    };
                    let key = *keys.entry(key_hash).or_insert_with(|| {
                        use std::fmt::Write as _;
                        name.clear();
                        let _ = write!(name, "{key_hash}");
                        b.key(&name)
                    });
                    if tag == b'W' {
                        b.write(t, key, Some(write_id), line);
                    } else if write_id == INIT_WRITE_ID || write_id == NULL_WRITE_ID {
                        b.read(t, key, None, ReadFrom::Initial, line);
                    } else {
                        b.read(t, key, Some(write_id), ReadFrom::Value(write_id), line);
                    }
                }
            }
        }
        if let Some((t, _)) = open {
            b.abort(t);
        }
    }
    b.build().map_err(|e| match e.line() {
        0 => e,
        l => {
            let (f, at) = offsets.get(l as usize - 1).copied().unwrap_or((0, 0));
            let file = files.get(f as usize).map_or(source, |x| x.0.as_str());
            InputError::new(file, 0, format!("byte {at}: {}", e.message))
        }
    })
}

/// The `*.log` files of a directory, in name order.
pub(crate) fn log_files(
    dir: &Path,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<std::path::PathBuf>, InputError> {
    let source = dir.display().to_string();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| InputError::new(source.clone(), 0, e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".log") && keep(n))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(InputError::new(
            source,
            0,
            "the directory holds no *.log file",
        ));
    }
    Ok(files)
}

/// The names and contents of the `*.log` files of a directory that `keep` keeps, in name order.
pub(crate) fn read_log_files(
    dir: &Path,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<(String, Vec<u8>)>, InputError> {
    let paths = log_files(dir, keep)?;
    let mut contents = Vec::with_capacity(paths.len());
    for p in &paths {
        let name = p.display().to_string();
        let bytes =
            std::fs::read(p).map_err(|e| InputError::new(name.clone(), 0, e.to_string()))?;
        contents.push((name, bytes));
    }
    Ok(contents)
}

/// Reads a directory of Cobra logs.
pub fn read_dir(dir: &Path) -> Result<History, InputError> {
    let contents = read_log_files(dir, |_| true)?;
    let files: Vec<(String, &[u8])> = contents.iter().map(|(n, b)| (n.clone(), &b[..])).collect();
    read_logs(&files, &dir.display().to_string())
}

/// The files of a Cobra log directory for `h`: `(name, contents)`.
pub fn write_files(h: &History) -> Result<Vec<(String, Vec<u8>)>, FormatError> {
    let (keys, _) = common::integer_keys(h);
    let txn_ids = common::txn_ids(
        h,
        false,
        |_| true,
        |e| e != INIT_WRITE_ID && e != NULL_WRITE_ID,
    );
    let write_id = |o: u32| u64::from(o) + 1;
    // Reads without a writer get write ids no write has (above every operation id).
    let unresolved_id = |o: u32| (1u64 << 40) + u64::from(o);
    let mut files = Vec::new();
    for (i, session) in h.sessions().iter().enumerate() {
        let mut out = Vec::new();
        let rec = |out: &mut Vec<u8>, tag: u8, fields: &[u64]| {
            out.push(tag);
            for f in fields {
                out.extend_from_slice(&f.to_be_bytes());
            }
        };
        for t in session.txns() {
            let id = txn_ids[t as usize];
            rec(&mut out, b'S', &[id]);
            for o in h.txn(t).ops() {
                let op = h.op(o);
                let key = keys[op.key as usize];
                let value = op.value.unwrap_or(0);
                match op.kind {
                    OpKind::Write => rec(&mut out, b'W', &[write_id(o), key, value]),
                    OpKind::Read => {
                        let (writer, wid) = match h.read_from(o) {
                            Some(w) if h.op(w).txn == INITIAL_TXN => (INIT_WRITE_ID, INIT_WRITE_ID),
                            Some(w) => (txn_ids[h.op(w).txn as usize], write_id(w)),
                            None => (NULL_WRITE_ID, unresolved_id(o)),
                        };
                        rec(&mut out, b'R', &[writer, wid, key, value]);
                    }
                }
            }
            if h.txn(t).is_committed() {
                rec(&mut out, b'C', &[id]);
            }
        }
        files.push((format!("T{i}.log"), out));
    }
    Ok(files)
}

/// What writing `h` as Cobra logs drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = Vec::new();
    if common::integer_keys(h).1 > 0 {
        notes.push("cobra keys are integers; key names that are not get unused numbers".into());
    }
    if h.ops()
        .iter()
        .any(|o| o.kind == OpKind::Write && o.txn != INITIAL_TXN && o.value.is_some())
    {
        notes.push(
            "cobra identifies writes by write ids; the history's values go into the value-hash \
             field and are not read back"
                .into(),
        );
    }
    if h.has_timestamps() {
        notes.push("cobra cannot carry timestamps; they are dropped".into());
    }
    notes.extend(common::unused_keys_note(h, "cobra"));
    let explicit_initial = h.txn(INITIAL_TXN).ops().len() - h.implicit_initial_writes() as usize;
    if explicit_initial > 0 {
        notes.push(format!(
            "cobra has no initial transaction: its {explicit_initial} explicit operation(s) \
             are dropped (reads of it read the initial value)"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One client: S 1, W(wid 10, key 5), C 1; S 2, R(writer 1, wid 10, key 5), R(init, key 6),
    /// C 2; S 3 (no commit).
    pub(crate) fn example() -> Vec<u8> {
        let mut v = Vec::new();
        let rec = |v: &mut Vec<u8>, tag: u8, f: &[u64]| {
            v.push(tag);
            for x in f {
                v.extend_from_slice(&x.to_be_bytes());
            }
        };
        rec(&mut v, b'S', &[1]);
        rec(&mut v, b'W', &[10, 5, 99]);
        rec(&mut v, b'C', &[1]);
        rec(&mut v, b'S', &[2]);
        rec(&mut v, b'R', &[1, 10, 5, 99]);
        rec(&mut v, b'R', &[INIT_WRITE_ID, INIT_WRITE_ID, 6, 0]);
        rec(&mut v, b'C', &[2]);
        rec(&mut v, b'S', &[3]);
        rec(&mut v, b'W', &[11, 6, 1]);
        v
    }

    #[test]
    fn reads_a_log() {
        let bytes = example();
        let h = read_logs(&[("T0.log".into(), &bytes)], "dir").unwrap();
        let s = h.stats();
        assert_eq!((s.committed, s.aborted, s.reads, s.writes), (2, 1, 2, 2));
        assert_eq!(h.writer_txn(h.txn(2).ops().start), Some(1));
        assert_eq!(h.writer_txn(h.txn(2).ops().start + 1), Some(INITIAL_TXN));
        let files = write_files(&h).unwrap();
        let g = read_logs(&[(files[0].0.clone(), &files[0].1)], "w").unwrap();
        h.same_content(&g).unwrap();
    }

    #[test]
    fn errors_name_the_file_and_byte() {
        let bytes = example();
        let e = read_logs(&[("T0.log".into(), &bytes[..20])], "d").unwrap_err();
        assert_eq!(
            e.to_string(),
            "T0.log: byte 9: the file ends inside a `W` record"
        );
        let mut bad = bytes.clone();
        bad[9] = b'X';
        let e = read_logs(&[("T0.log".into(), &bad)], "d").unwrap_err();
        assert!(e.to_string().contains("byte 9: unknown record tag"), "{e}");
        let mut dup = bytes;
        dup.extend_from_within(..43); // S 1, W wid 10 again, C 1
        let e = read_logs(&[("T0.log".into(), &dup)], "d").unwrap_err();
        assert!(e.to_string().starts_with("T0.log: byte "), "{e}");
        assert!(e.to_string().contains("duplicate write"), "{e}");
    }
}
