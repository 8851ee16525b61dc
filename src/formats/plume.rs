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

use std::io::Write;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::common::{self, InitialValues};
use super::text::{error, is_blank_or_comment, line_chunks, trim, Cursor, LineChunk};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{
    BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, SessionId, TxnId, INITIAL_TXN,
};

/// Whether a (trimmed, non-empty) line looks like Plume: `r(` or `w(`, spaces allowed.
pub(crate) fn looks_like(line: &[u8]) -> bool {
    matches!(line[0], b'r' | b'w') && trim(&line[1..]).first() == Some(&b'(')
}

/// One parsed line (40 bytes: a 10^7-line file has 10^7 of them, a batch at a time).
struct Line {
    key: u64,
    value: u64,
    session: u64,
    /// The transaction id; 0 when `aborted`.
    txn: u64,
    /// The 1-based line number.
    line: u32,
    kind: OpKind,
    /// The transaction id was `-1`.
    aborted: bool,
}

const _: () = assert!(std::mem::size_of::<Line>() == 40);

impl Line {
    /// The transaction id; `None` for `-1` (aborted).
    #[inline]
    fn txn(&self) -> Option<u64> {
        (!self.aborted).then_some(self.txn)
    }
}

/// The digits at `*at` as an integer, moving past them; `None` when there are none or they
/// overflow 64 bits.
#[inline]
fn plain_u64(line: &[u8], at: &mut usize) -> Option<u64> {
    let start = *at;
    let mut value: u64 = 0;
    while let Some(&b) = line.get(*at) {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
        *at += 1;
    }
    (*at > start).then_some(value)
}

/// The common line, `r(1,2,3,4)` without spaces, parsed without the general parser's
/// bookkeeping; `None` for any other line (spaces, errors), which [`parse_line`] then reads.
/// Every line it accepts, [`parse_line`] accepts with the same result.
#[inline]
fn parse_plain_line(line_no: u32, line: &[u8]) -> Option<Line> {
    let kind = match line.first()? {
        b'r' => OpKind::Read,
        b'w' => OpKind::Write,
        _ => return None,
    };
    if line.get(1) != Some(&b'(') {
        return None;
    }
    let mut at = 2;
    let field = |at: &mut usize, end: u8| -> Option<u64> {
        let v = plain_u64(line, at)?;
        (line.get(*at) == Some(&end)).then(|| *at += 1)?;
        Some(v)
    };
    let key = field(&mut at, b',')?;
    let value = field(&mut at, b',')?;
    let session = field(&mut at, b',')?;
    let aborted = line.get(at) == Some(&b'-');
    if aborted {
        at += 1;
    }
    let txn = field(&mut at, b')')?;
    if at != line.len() || (aborted && txn != 1) {
        return None;
    }
    Some(Line {
        key,
        value,
        session,
        txn: if aborted { 0 } else { txn },
        line: line_no,
        kind,
        aborted,
    })
}

#[inline]
fn parse_line(line_no: u32, line: &[u8]) -> Result<Line, String> {
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
        key,
        value,
        session,
        txn: txn.unwrap_or(0),
        line: line_no,
        kind,
        aborted: txn.is_none(),
    })
}

/// A transaction id's builder transaction and session.
#[derive(Clone, Copy)]
struct KnownTxn {
    txn: BuilderTxn,
    session: u64,
    line: u32,
}

/// The ids a file gives its keys or transactions, each mapped to a dense index: ids below a
/// limit (a share of the file's size, so the table stays within a fraction of the file's bytes)
/// index a flat vector, grown as larger ids come; others go to a hash map. Generators number
/// keys and transactions from 0, so the flat part usually holds all of them and the merge, the
/// sequential part of reading, looks each line up without hashing.
struct IdTable {
    flat: Vec<u32>,
    other: FxHashMap<u64, u32>,
    limit: u64,
}

/// No index (in [`IdTable::flat`]).
const NO_INDEX: u32 = u32::MAX;

impl IdTable {
    fn new(limit: usize) -> Self {
        IdTable {
            flat: Vec::new(),
            other: FxHashMap::default(),
            limit: limit as u64,
        }
    }

    #[inline]
    fn get(&self, id: u64) -> Option<u32> {
        if id < self.limit {
            match self.flat.get(id as usize) {
                Some(&i) if i != NO_INDEX => Some(i),
                _ => None,
            }
        } else {
            self.other.get(&id).copied()
        }
    }

    fn insert(&mut self, id: u64, index: u32) {
        if id < self.limit {
            let at = id as usize;
            if at >= self.flat.len() {
                let len = (at + 1).max(2 * self.flat.len()).min(self.limit as usize);
                self.flat.resize(len, NO_INDEX);
            }
            self.flat[at] = index;
        } else {
            self.other.insert(id, index);
        }
    }
}

/// Bytes of text in one piece parsed on one thread.
const CHUNK_BYTES: usize = 1 << 19;
/// Pieces parsed together; the next batch is parsed while the previous one is merged.
const BATCH_CHUNKS: usize = 8;

/// Reads a Plume text history.
///
/// The lines are parsed in parallel, in pieces of whole lines (rayon), and merged in file
/// order into the history, so the history — ids, order, and the first error with its line —
/// is the one a line-by-line reading gives.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    read_in_chunks(bytes, source, CHUNK_BYTES)
}

/// [`read`] with pieces of about `chunk_bytes` bytes (the result does not depend on it).
pub(crate) fn read_in_chunks(
    bytes: &[u8],
    source: &str,
    chunk_bytes: usize,
) -> Result<History, InputError> {
    let chunks = line_chunks(bytes, chunk_bytes);
    let batches: Vec<&[LineChunk]> = chunks.chunks(BATCH_CHUNKS).collect();
    let mut merge = Merge::new(source, bytes.len());
    // The parsed lines' buffers of merged batches, reused by the batches parsed after them:
    // two batches' worth of memory for the whole file instead of fresh memory for every batch.
    let mut spare: Vec<Vec<Line>> = Vec::new();
    let mut parsed = match batches.first() {
        Some(b) => parse_batch(b, &mut spare),
        None => Vec::new(),
    };
    for i in 0..batches.len() {
        let next = batches.get(i + 1);
        let mut buffers = match next {
            Some(b) => take_buffers(&mut spare, b.len()),
            None => Vec::new(),
        };
        let (merged, next_parsed) = rayon::join(
            || merge.batch(&parsed),
            || match next {
                Some(b) => parse_batch(b, &mut buffers),
                None => Vec::new(),
            },
        );
        merged?;
        spare.extend(parsed.into_iter().map(|mut chunk| {
            chunk.ops.clear();
            chunk.ops
        }));
        parsed = next_parsed;
    }
    drop(spare);
    merge.b.build()
}

/// The operations of one piece, up to its first line that does not parse.
struct ParsedChunk {
    ops: Vec<Line>,
    /// The line that does not parse, and why.
    error: Option<(u32, String)>,
}

/// `n` buffers from `spare` (empty new ones when it has too few).
fn take_buffers(spare: &mut Vec<Vec<Line>>, n: usize) -> Vec<Vec<Line>> {
    (0..n).map(|_| spare.pop().unwrap_or_default()).collect()
}

/// Parses the pieces of a batch in parallel, each into a buffer of `buffers` (taken from it;
/// new ones when it has too few).
fn parse_batch(chunks: &[LineChunk], buffers: &mut Vec<Vec<Line>>) -> Vec<ParsedChunk> {
    let mut buffers = take_buffers(buffers, chunks.len());
    chunks
        .par_iter()
        .zip(buffers.par_iter_mut())
        .map(|(chunk, buffer)| parse_chunk(chunk, std::mem::take(buffer)))
        .collect()
}

/// Parses a piece into `ops` (an empty buffer).
fn parse_chunk(chunk: &LineChunk, mut ops: Vec<Line>) -> ParsedChunk {
    // Plume lines are about 20 bytes.
    ops.reserve(chunk.bytes.len() / 20);
    for (line_no, raw) in chunk.lines() {
        let line = trim(raw);
        if is_blank_or_comment(line) {
            continue;
        }
        if let Some(op) = parse_plain_line(line_no, line) {
            ops.push(op);
            continue;
        }
        match parse_line(line_no, line) {
            Ok(op) => ops.push(op),
            Err(m) => {
                return ParsedChunk {
                    ops,
                    error: Some((line_no, m)),
                }
            }
        }
    }
    ParsedChunk { ops, error: None }
}

/// The sequential part of reading: parsed lines, in file order, into the builder.
struct Merge<'s> {
    source: &'s str,
    b: HistoryBuilder,
    /// Key id → builder key.
    keys: IdTable,
    /// Transaction id → index in `known`.
    txns: IdTable,
    known: Vec<KnownTxn>,
    /// The transaction of the previous line (most lines continue it).
    last: Option<(u64, KnownTxn)>,
    /// The session id of the last transaction begun, and its builder session.
    last_session: Option<(u64, SessionId)>,
    /// The aborted transaction the previous line added to, with its session id.
    aborted: Option<(u64, BuilderTxn)>,
}

impl<'s> Merge<'s> {
    /// A merge for a text of `bytes` bytes.
    fn new(source: &'s str, bytes: usize) -> Self {
        let mut b = HistoryBuilder::new(source);
        b.initial_value(0);
        // A line is at least 11 bytes (`r(1,1,1,1)` and its end): a file names fewer keys
        // and transactions than that; ids up to 1/8 of the file's bytes are looked up flat.
        let limit = bytes / 8 + 1024;
        Merge {
            source,
            b,
            keys: IdTable::new(limit),
            txns: IdTable::new(limit),
            known: Vec::new(),
            last: None,
            last_session: None,
            aborted: None,
        }
    }

    /// Merges the pieces of a batch in order; stops at the first error.
    fn batch(&mut self, parsed: &[ParsedChunk]) -> Result<(), InputError> {
        for chunk in parsed {
            for op in &chunk.ops {
                self.line(op)?;
            }
            if let Some((line_no, message)) = &chunk.error {
                return Err(error(self.source, *line_no, message.clone()));
            }
        }
        Ok(())
    }

    /// The builder session of a session id.
    #[inline]
    fn session(&mut self, id: u64) -> SessionId {
        match self.last_session {
            Some((last, s)) if last == id => s,
            _ => {
                let s = self.b.session(Some(id));
                self.last_session = Some((id, s));
                s
            }
        }
    }

    #[inline]
    fn line(&mut self, op: &Line) -> Result<(), InputError> {
        let line_no = op.line;
        let key = match self.keys.get(op.key) {
            Some(k) => k,
            None => {
                let k = self.b.new_key(op.key.to_string());
                self.keys.insert(op.key, k);
                k
            }
        };
        let txn = match op.txn() {
            None => {
                let txn = match self.aborted {
                    Some((s, t)) if s == op.session => t,
                    _ => {
                        let s = self.session(op.session);
                        let t = self.b.begin_at(s, None, line_no);
                        self.b.abort(t);
                        t
                    }
                };
                self.aborted = Some((op.session, txn));
                txn
            }
            Some(_) if op.kind == OpKind::Write && op.value == 0 => {
                self.aborted = None;
                self.b.write(BuilderTxn::INITIAL, key, Some(0), line_no);
                return Ok(());
            }
            Some(id) => {
                self.aborted = None;
                let known = match self.last {
                    Some((last_id, known)) if last_id == id => known,
                    _ => {
                        let known = match self.txns.get(id) {
                            Some(i) => self.known[i as usize],
                            None => {
                                let s = self.session(op.session);
                                let known = KnownTxn {
                                    txn: self.b.begin_at(s, Some(id), line_no),
                                    session: op.session,
                                    line: line_no,
                                };
                                self.txns.insert(id, self.known.len() as u32);
                                self.known.push(known);
                                known
                            }
                        };
                        self.last = Some((id, known));
                        known
                    }
                };
                if known.session != op.session {
                    return Err(error(
                        self.source,
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
            OpKind::Read => {
                self.b
                    .read(txn, key, Some(op.value), ReadFrom::Value(op.value), line_no)
            }
            OpKind::Write => self.b.write(txn, key, Some(op.value), line_no),
        }
        Ok(())
    }
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

    /// A Plume text of `n` lines with everything the reader handles: initial writes,
    /// transactions spread over sessions, aborted runs, comments, blank and CRLF lines.
    fn varied_text(n: usize) -> String {
        let mut text = String::new();
        let mut next_value = vec![1u64; 50];
        let mut state = 12345u64;
        let mut rand = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        for k in 0..50 {
            text.push_str(&format!("w({k},0,0,0)\n"));
        }
        let mut txn = 0u64;
        for i in 0..n {
            let session = rand(7);
            if rand(5) == 0 {
                txn += 1;
            }
            let key = rand(50);
            let line = match rand(20) {
                0 => "# a comment".to_string(),
                1 => String::new(),
                2 => {
                    let v = next_value[key as usize];
                    next_value[key as usize] += 1;
                    format!("w({key},{v},{session},-1)")
                }
                3..=8 => {
                    let v = next_value[key as usize];
                    next_value[key as usize] += 1;
                    format!("w({key},{v},{},{})", txn % 7, txn)
                }
                _ => format!(
                    "r({key},{},{},{})",
                    rand(next_value[key as usize]),
                    txn % 7,
                    txn
                ),
            };
            text.push_str(&line);
            text.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
        }
        text
    }

    /// The piece sizes tried: tiny pieces (one line each), odd sizes, and one piece (the whole
    /// text read line by line).
    const PIECES: [usize; 6] = [1, 7, 64, 1000, 4096, usize::MAX];

    #[test]
    fn parallel_reading_gives_the_line_by_line_history() {
        let text = varied_text(20_000);
        let whole = format!(
            "{:?}",
            read_in_chunks(text.as_bytes(), "p.txt", usize::MAX).unwrap()
        );
        for chunk_bytes in PIECES {
            let h = read_in_chunks(text.as_bytes(), "p.txt", chunk_bytes).unwrap();
            assert_eq!(format!("{h:?}"), whole, "pieces of {chunk_bytes} bytes");
        }
        // A text without a final line end, and the empty text.
        let cut = text.trim_end();
        let whole = format!(
            "{:?}",
            read_in_chunks(cut.as_bytes(), "p.txt", usize::MAX).unwrap()
        );
        for chunk_bytes in PIECES {
            let h = read_in_chunks(cut.as_bytes(), "p.txt", chunk_bytes).unwrap();
            assert_eq!(format!("{h:?}"), whole, "pieces of {chunk_bytes} bytes");
        }
        let empty = format!("{:?}", read_in_chunks(b"", "p.txt", usize::MAX).unwrap());
        assert_eq!(
            format!("{:?}", read_in_chunks(b"", "p.txt", 1).unwrap()),
            empty
        );
    }

    #[test]
    fn parallel_reading_reports_the_first_error_and_its_line() {
        let text = varied_text(5_000);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        // (line to replace, replacement, what the error says); a later parse error follows
        // every bad line, so the first one in file order must win in every piece size.
        let cases: &[(usize, &str, &str)] = &[
            (10, "x(1,2,3,4)\n", "expected `r(` or `w(`"),
            (777, "r(1,1,1)\n", "expected `,`"),
            (2_500, "r(1,1,1,-2)\n", "only negative id is -1"),
            (5_020, "r(1,1,1,1) x\n", "unexpected `x`"),
        ];
        // A transaction seen before line 4,001, named again from session 99.
        let (at, txn) = (4_000, |line: &str| {
            let fields = line.trim().strip_prefix("r(")?.strip_suffix(')')?;
            let txn: u64 = fields.split(',').nth(3)?.parse().ok()?;
            Some(txn)
        });
        let seen = lines[..at].iter().rev().find_map(|l| txn(l)).unwrap();
        let moved = format!("r(1,0,99,{seen})\n");
        let moved_message = format!("transaction {seen} is in session 99 here");
        let cases: Vec<(usize, &str, &str)> = cases
            .iter()
            .copied()
            .chain([(at, moved.as_str(), moved_message.as_str())])
            .collect();
        for &(at, bad, message) in &cases {
            let mut broken: Vec<&str> = lines.clone();
            broken[at] = bad;
            broken[at + 20] = "garbage\n";
            let broken = broken.concat();
            for chunk_bytes in PIECES {
                let e = read_in_chunks(broken.as_bytes(), "p.txt", chunk_bytes).unwrap_err();
                assert_eq!(e.line(), at as u32 + 1, "pieces of {chunk_bytes}: {e}");
                assert!(
                    e.to_string().contains(message),
                    "pieces of {chunk_bytes}: {e}"
                );
            }
        }
    }

    #[test]
    fn the_plain_line_parser_agrees_with_the_general_one() {
        let lines = [
            "r(1,2,3,4)",
            "w(0,0,0,0)",
            "w(5,6,7,-1)",
            "w(5,6,7,-01)",
            "w(5,6,7,-2)",
            "w(5,6,7,-)",
            "r(007,08,9,10)",
            "r(18446744073709551615,1,1,18446744073709551615)",
            "r(18446744073709551616,1,1,1)",
            "r(1,1,1,1",
            "r(1,1,1,1))",
            "r(1,1,1,1) x",
            "r(1,1,1)",
            "r(1,1,1,1,1)",
            "r( 1,1,1,1)",
            "r (1,1,1,1)",
            "r(1 ,1,1,1)",
            "r(1,1,1,1 )",
            "r(,1,1,1)",
            "r(a,1,1,1)",
            "x(1,1,1,1)",
            "r",
            "r(",
            "w(1,2,3,+4)",
        ];
        for text in lines {
            let general = parse_line(7, text.as_bytes());
            match parse_plain_line(7, text.as_bytes()) {
                Some(plain) => {
                    let general = general.unwrap_or_else(|e| panic!("{text}: {e}"));
                    let fields = |l: &Line| {
                        (
                            l.key,
                            l.value,
                            l.session,
                            l.txn(),
                            l.line,
                            l.kind == OpKind::Read,
                        )
                    };
                    assert_eq!(fields(&plain), fields(&general), "{text}");
                }
                // The general parser reads what the plain one leaves (spaces), or fails.
                None => assert!(
                    text.contains(' ') || general.is_err(),
                    "{text}: only the general parser reads it"
                ),
            }
        }
    }

    #[test]
    fn id_table_maps_small_ids_flat_and_large_ones_hashed() {
        let mut t = IdTable::new(100);
        assert_eq!(t.get(5), None);
        t.insert(5, 0);
        t.insert(99, 1);
        t.insert(100, 2);
        t.insert(u64::MAX, 3);
        assert_eq!(t.get(5), Some(0));
        assert_eq!(t.get(99), Some(1));
        assert_eq!(t.get(100), Some(2));
        assert_eq!(t.get(u64::MAX), Some(3));
        assert_eq!((t.get(6), t.get(98), t.get(101)), (None, None, None));
        assert!(t.flat.len() <= 100);
        assert_eq!(t.other.len(), 2);
    }

    #[test]
    fn large_key_and_transaction_ids_read_like_small_ones() {
        // The same history twice: small ids (looked up flat) and ids far beyond the flat
        // table's limit (looked up hashed), interleaved with small ones.
        let small = "w(1,1,1,1)\nw(2,1,2,2)\nr(1,1,2,2)\nr(2,1,1,3)\nw(1,2,1,3)\nr(1,2,2,4)\n";
        let big = small
            .replace("(1,", "(18446744073709551615,")
            .replace(",1)", ",18446744073709551614)")
            .replace(",3)", ",9000000000000000000)");
        let (hs, hb) = (read_str(small).unwrap(), read_str(&big).unwrap());
        assert_eq!(hs.key_count(), 2);
        assert_eq!(hb.key_count(), 2);
        assert_eq!(hb.key_name(0), "18446744073709551615");
        assert_eq!(hb.txn(1).external_id, Some(18446744073709551614));
        for h in [&hs, &hb] {
            assert_eq!(h.txn_count(), 5);
            assert!(h.unresolved().is_empty());
            let reads: Vec<_> = (0..h.ops().len() as u32)
                .filter_map(|o| h.writer_txn(o))
                .collect();
            assert_eq!(reads.len(), 3);
        }
        let hs_writers: Vec<_> = (0..hs.ops().len() as u32)
            .map(|o| hs.writer_txn(o))
            .collect();
        let hb_writers: Vec<_> = (0..hb.ops().len() as u32)
            .map(|o| hb.writer_txn(o))
            .collect();
        assert_eq!(hs_writers, hb_writers);
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
