//! IsoPredict traces (Geng et al., PLDI'24; the format of the artifact's recorded executions,
//! notes/isopredict.md §6): one event per line, in program order.
//!
//! ```text
//! WRITE KEY[k] Txn(s, i)
//! READ KEY[k] Txn(s, i) From(s', i')
//! INSERT[k] to Set[c] Txn(s, i)
//! CONTAINS[k] in Set[c] From(s', i') Txn(s, i)
//! DELETE[k] from Set[c] Txn(s, i)
//! ```
//!
//! - `Txn(s, i)` is the i-th transaction of session s; `Txn(0, 0)` is the initial state, which
//!   writes every key (explicit `WRITE KEY[k] Txn(0, 0)` lines are its explicit writes);
//!   other ids of session 0 are errors, as is a read by `Txn(0, 0)`.
//! - Set operations are pseudo-keys named `Set(c:k)`: INSERT and DELETE write it, CONTAINS
//!   reads it (so DELETE reads back as a write; a written trace says INSERT).
//! - A read names its writer's transaction; it observes that transaction's last write of the
//!   key, or — if the transaction never writes the key — a write implied at its end. A read
//!   of the reader's own transaction (`From` = `Txn`) is a local read of its own write.
//! - Session order: a transaction's place in its session is its first line as `Txn(…)`;
//!   sessions are numbered in the order of their first transaction. A transaction that only
//!   appears in `From(…)` comes after those, in order of mention. The order of first
//!   appearance is the observed commit order; the dense ids keep it within sessions only, and
//!   the operations keep their line numbers.
//! - Keys are any text without `]`; blank lines and `#` comments are skipped.
//! - The format has no values, no aborted transactions and no reads without a writer.
//!
//! Writing emits the explicit initial writes, then whole transactions in an order that
//! respects session order and puts writers before their readers where possible (ties follow
//! commit timestamps, then the input's line order, so a trace reads back and writes out
//! unchanged).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;

use rustc_hash::FxHashMap;

use super::common;
use super::text::{error, excerpt, is_blank_or_comment, trim, Cursor, Lines};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{
    BuilderTxn, History, HistoryBuilder, KeyId, OpId, OpKind, ReadFrom, TxnId, INITIAL_TXN,
};

const EVENT_PREFIXES: [&[u8]; 5] = [
    b"WRITE KEY[",
    b"READ KEY[",
    b"INSERT[",
    b"CONTAINS[",
    b"DELETE[",
];

/// Whether a (trimmed, non-empty) line looks like an IsoPredict trace event.
pub(crate) fn looks_like(line: &[u8]) -> bool {
    EVENT_PREFIXES.iter().any(|p| line.starts_with(p))
}

/// Slot of the initial transaction in the reader's transaction table.
const INITIAL_SLOT: u32 = 0;
const NO_SLOT: u32 = u32::MAX;

/// One event of the first pass.
struct Event {
    line: u32,
    key: KeyId,
    owner: u32,
    /// The writer's slot for reads, [`NO_SLOT`] for writes.
    from: u32,
}

/// A transaction id seen in the trace.
struct Slot {
    session: u64,
    index: u64,
    /// Line of its first event as `Txn(…)`, 0 if it only appears in `From(…)`.
    first_line: u32,
}

struct Reader<'s> {
    source: &'s str,
    builder: HistoryBuilder,
    slots: Vec<Slot>,
    slot_of: FxHashMap<(u64, u64), u32>,
    owned_order: Vec<u32>,
    mention_order: Vec<u32>,
    name: String,
}

impl Reader<'_> {
    /// The slot of transaction `(s, i)`, created on first mention.
    fn slot(&mut self, id: (u64, u64), line: u32, owner: bool) -> Result<u32, InputError> {
        if id == (0, 0) {
            return Ok(INITIAL_SLOT);
        }
        if id.0 == 0 {
            return Err(error(
                self.source,
                line,
                format!(
                    "Txn(0, {}): session 0 is the initial state, whose only transaction is Txn(0, 0)",
                    id.1
                ),
            ));
        }
        let slot = match self.slot_of.get(&id) {
            Some(&s) => s,
            None => {
                let s = self.slots.len() as u32;
                self.slots.push(Slot {
                    session: id.0,
                    index: id.1,
                    first_line: 0,
                });
                self.slot_of.insert(id, s);
                self.mention_order.push(s);
                s
            }
        };
        if owner && self.slots[slot as usize].first_line == 0 {
            self.slots[slot as usize].first_line = line;
            self.owned_order.push(slot);
        }
        Ok(slot)
    }
}

fn txn_id(c: &mut Cursor<'_>, tag: &[u8]) -> Result<(u64, u64), String> {
    c.expect(tag)?;
    let s = c.u64("a session number")?;
    c.expect(b",")?;
    let i = c.u64("a transaction number")?;
    c.expect(b")")?;
    Ok((s, i))
}

fn key_text<'a>(c: &mut Cursor<'a>, what: &str) -> Result<&'a str, String> {
    let key = c.until(b']', what)?;
    c.expect(b"]")?;
    std::str::from_utf8(key).map_err(|_| format!("{what} is not valid UTF-8"))
}

/// A parsed line: (is a write, key, set, owner id, writer id for reads).
type Parsed<'a> = (
    bool,
    &'a str,
    Option<&'a str>,
    (u64, u64),
    Option<(u64, u64)>,
);

fn parse_line(line: &[u8]) -> Result<Parsed<'_>, String> {
    let mut c = Cursor::new(line);
    if c.eat(b"WRITE KEY[") {
        let key = key_text(&mut c, "key")?;
        let owner = txn_id(&mut c, b"Txn(")?;
        c.end()?;
        Ok((true, key, None, owner, None))
    } else if c.eat(b"READ KEY[") {
        let key = key_text(&mut c, "key")?;
        let owner = txn_id(&mut c, b"Txn(")?;
        let from = txn_id(&mut c, b"From(")?;
        c.end()?;
        Ok((false, key, None, owner, Some(from)))
    } else if c.eat(b"INSERT[") || c.eat(b"DELETE[") {
        let insert = line.starts_with(b"INSERT");
        let key = key_text(&mut c, "element")?;
        c.expect(if insert { b"to" } else { b"from" })?;
        c.expect(b"Set[")?;
        let set = key_text(&mut c, "set")?;
        let owner = txn_id(&mut c, b"Txn(")?;
        c.end()?;
        Ok((true, key, Some(set), owner, None))
    } else if c.eat(b"CONTAINS[") {
        let key = key_text(&mut c, "element")?;
        c.expect(b"in")?;
        c.expect(b"Set[")?;
        let set = key_text(&mut c, "set")?;
        let from = txn_id(&mut c, b"From(")?;
        let owner = txn_id(&mut c, b"Txn(")?;
        c.end()?;
        Ok((false, key, Some(set), owner, Some(from)))
    } else {
        Err(format!(
            "expected an event (WRITE KEY[, READ KEY[, INSERT[, CONTAINS[ or DELETE[), found `{}`",
            excerpt(line)
        ))
    }
}

/// Reads an IsoPredict trace.
pub fn read(bytes: &[u8], source: &str) -> Result<History, InputError> {
    let mut r = Reader {
        source,
        builder: HistoryBuilder::new(source),
        slots: vec![Slot {
            session: 0,
            index: 0,
            first_line: 0,
        }],
        slot_of: FxHashMap::default(),
        owned_order: Vec::new(),
        mention_order: Vec::new(),
        name: String::new(),
    };
    // Pass 1: parse, intern keys, number transactions by first appearance.
    let mut events = Vec::new();
    for (line_no, raw) in Lines::new(bytes) {
        let line = trim(raw);
        if is_blank_or_comment(line) {
            continue;
        }
        let (is_write, key, set, owner, from) =
            parse_line(line).map_err(|m| error(source, line_no, m))?;
        let key = match set {
            None => r.builder.key(key),
            Some(set) => {
                r.name.clear();
                r.name.push_str("Set(");
                r.name.push_str(set);
                r.name.push(':');
                r.name.push_str(key);
                r.name.push(')');
                r.builder.key(&r.name)
            }
        };
        let owner = r.slot(owner, line_no, true)?;
        let from = match from {
            None => NO_SLOT,
            Some(_) if owner == INITIAL_SLOT => {
                return Err(error(
                    source,
                    line_no,
                    "the initial state Txn(0, 0) cannot read",
                ))
            }
            Some(id) => r.slot(id, line_no, false)?,
        };
        debug_assert_eq!(is_write, from == NO_SLOT);
        events.push(Event {
            line: line_no,
            key,
            owner,
            from,
        });
    }
    // Pass 2: transactions in session order, then the operations.
    let mut handles = vec![BuilderTxn::INITIAL; r.slots.len()];
    let never_owned: Vec<u32> = r
        .mention_order
        .iter()
        .copied()
        .filter(|&s| r.slots[s as usize].first_line == 0)
        .collect();
    for &slot in r.owned_order.iter().chain(&never_owned) {
        let Slot {
            session,
            index,
            first_line,
        } = r.slots[slot as usize];
        let s = r.builder.session(Some(session));
        handles[slot as usize] = r.builder.begin_at(s, Some(index), first_line);
    }
    let mut b = r.builder;
    for e in &events {
        let txn = handles[e.owner as usize];
        if e.from == NO_SLOT {
            b.write(txn, e.key, None, e.line);
        } else {
            b.read(
                txn,
                e.key,
                None,
                ReadFrom::Txn(handles[e.from as usize]),
                e.line,
            );
        }
    }
    b.build()
}

fn unrepresentable(problem: String) -> FormatError {
    FormatError::Unrepresentable {
        format: Format::IsoPredict,
        problem,
    }
}

/// How a key is written: a plain key, or a set element `(set, element)`.
enum KeyForm<'a> {
    Plain(&'a str),
    Set(&'a str, &'a str),
}

fn key_form(name: &str) -> Option<KeyForm<'_>> {
    if name.is_empty() || name.contains([']', '\n', '\r']) {
        return None;
    }
    if let Some(inner) = name.strip_prefix("Set(").and_then(|n| n.strip_suffix(')')) {
        if let Some((set, element)) = inner.split_once(':') {
            if !set.is_empty() && !element.is_empty() {
                return Some(KeyForm::Set(set, element));
            }
        }
    }
    Some(KeyForm::Plain(name))
}

/// Checks that every read of a written transaction can be expressed: it has a writer, the
/// writer is committed, and it is the write `From(writer)` resolves to.
fn check_reads(h: &History, written: &[bool]) -> Result<(), FormatError> {
    // Last write of every (transaction, key).
    let mut last_write: FxHashMap<(TxnId, KeyId), OpId> = FxHashMap::default();
    for (i, op) in h.ops().iter().enumerate() {
        if op.kind == OpKind::Write {
            last_write.insert((op.txn, op.key), i as OpId);
        }
    }
    let mut own_last: FxHashMap<KeyId, OpId> = FxHashMap::default();
    for t in 1..h.txn_count() as TxnId {
        if !written[t as usize] {
            continue;
        }
        own_last.clear();
        for o in h.txn(t).ops() {
            let op = h.op(o);
            if op.kind == OpKind::Write {
                own_last.insert(op.key, o);
                continue;
            }
            let describe = || {
                format!(
                    "the read of key {} in {}",
                    h.key_name(op.key),
                    h.txn_label(t)
                )
            };
            let Some(w) = h.read_from(o) else {
                return Err(unrepresentable(format!(
                    "{} has no writer, and a trace names the writer of every read",
                    describe()
                )));
            };
            let writer = h.op(w).txn;
            if writer != INITIAL_TXN && !h.txn(writer).is_committed() {
                return Err(unrepresentable(format!(
                    "{} observes the aborted {}, and a trace has no aborted transactions",
                    describe(),
                    h.txn_label(writer)
                )));
            }
            let expected = if writer == t {
                own_last
                    .get(&op.key)
                    .copied()
                    .or_else(|| last_write.get(&(t, op.key)).copied())
            } else {
                last_write.get(&(writer, op.key)).copied()
            };
            if expected != Some(w) {
                return Err(unrepresentable(format!(
                    "{} observes a write of {} that is not the one a trace can name \
                     (its last write of the key{})",
                    describe(),
                    h.txn_label(writer),
                    if writer == t { " before the read" } else { "" }
                )));
            }
        }
    }
    Ok(())
}

/// The order to write transactions in: session order always; writers before readers and
/// sessions by their first transaction where possible; otherwise by commit timestamp, first
/// input line, then id (so a trace read from a file writes back in its own order).
fn write_order(h: &History, written: &[bool]) -> Vec<TxnId> {
    let n = h.txn_count();
    // Commit timestamp (when known), then first input line (when known), then id.
    let priority = |t: TxnId| -> (u64, u32, TxnId) {
        let commit = h.timestamps(t).map_or(u64::MAX, |ts| ts.commit);
        let line = h.txn_ops(t).first().map_or(0, |o| o.line);
        (commit, if line == 0 { u32::MAX } else { line }, t)
    };
    let mut successors: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    let mut indegree = vec![0u32; n];
    let mut add_edge = |a: TxnId, b: TxnId, indegree: &mut Vec<u32>| {
        successors[a as usize].push(b);
        indegree[b as usize] += 1;
    };
    // Per session, its written transactions; session order and first-transaction edges.
    let sessions: Vec<Vec<TxnId>> = h
        .sessions()
        .iter()
        .map(|s| {
            s.txns()
                .filter(|&t| written[t as usize])
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.is_empty())
        .collect();
    for (k, txns) in sessions.iter().enumerate() {
        for w in txns.windows(2) {
            add_edge(w[0], w[1], &mut indegree);
        }
        if k > 0 {
            add_edge(sessions[k - 1][0], txns[0], &mut indegree);
        }
    }
    for (writer, reader, _) in h.wr_edges() {
        if writer != INITIAL_TXN && written[reader as usize] && written[writer as usize] {
            add_edge(writer, reader, &mut indegree);
        }
    }
    let mut heap = BinaryHeap::new();
    for txns in &sessions {
        for &t in txns {
            if indegree[t as usize] == 0 {
                heap.push(Reverse(priority(t)));
            }
        }
    }
    let total: usize = sessions.iter().map(Vec::len).sum();
    let mut emitted = vec![false; n];
    let mut cursor = vec![0usize; sessions.len()];
    let mut session_of = vec![usize::MAX; n];
    for (k, txns) in sessions.iter().enumerate() {
        for &t in txns {
            session_of[t as usize] = k;
        }
    }
    let mut order = Vec::with_capacity(total);
    while order.len() < total {
        let t = match heap.pop() {
            Some(Reverse((_, _, t))) if emitted[t as usize] => continue,
            Some(Reverse((_, _, t))) => t,
            None => {
                // A write–read cycle: emit the best session head whose session order (and
                // session-first order) is satisfied, ignoring its write–read predecessors.
                let mut best: Option<(u64, u32, TxnId)> = None;
                for (k, txns) in sessions.iter().enumerate() {
                    let Some(&head) = txns.get(cursor[k]) else {
                        continue;
                    };
                    if cursor[k] == 0 && k > 0 && !emitted[sessions[k - 1][0] as usize] {
                        continue;
                    }
                    let p = priority(head);
                    match best {
                        Some(b) if b <= p => {}
                        _ => best = Some(p),
                    }
                }
                match best {
                    Some((_, _, t)) => t,
                    None => break, // unreachable: the lowest unfinished session qualifies
                }
            }
        };
        emitted[t as usize] = true;
        cursor[session_of[t as usize]] += 1;
        order.push(t);
        for &s in &successors[t as usize] {
            indegree[s as usize] -= 1;
            if indegree[s as usize] == 0 && !emitted[s as usize] {
                heap.push(Reverse(priority(s)));
            }
        }
    }
    order
}

/// Writes a history as an IsoPredict trace.
pub fn write(h: &History, out: &mut dyn Write) -> Result<(), FormatError> {
    let mut forms = Vec::with_capacity(h.key_count());
    for name in h.key_names() {
        forms.push(key_form(name).ok_or_else(|| {
            unrepresentable(format!(
                "the key name {name:?} is empty or contains `]` or a line break"
            ))
        })?);
    }
    let written: Vec<bool> = (0..h.txn_count() as TxnId)
        .map(|t| t != INITIAL_TXN && h.txn(t).is_committed() && !h.txn(t).ops().is_empty())
        .collect();
    check_reads(h, &written)?;
    let sessions = common::session_ids(h, |e| e != 0);
    let txns = common::txn_ids(h, true, |t| written[t as usize], |_| true);
    let id = |t: TxnId| -> (u64, u64) {
        if t == INITIAL_TXN {
            (0, 0)
        } else {
            (sessions[h.txn(t).session as usize], txns[t as usize])
        }
    };
    let line = |o: OpId, out: &mut dyn Write| -> std::io::Result<()> {
        let op = h.op(o);
        let (s, i) = id(op.txn);
        match (op.kind, &forms[op.key as usize]) {
            (OpKind::Write, KeyForm::Plain(k)) => writeln!(out, "WRITE KEY[{k}] Txn({s}, {i})"),
            (OpKind::Write, KeyForm::Set(set, k)) => {
                writeln!(out, "INSERT[{k}] to Set[{set}] Txn({s}, {i})")
            }
            (OpKind::Read, form) => {
                let (ws, wi) = id(h.writer_txn(o).unwrap_or(INITIAL_TXN));
                match form {
                    KeyForm::Plain(k) => {
                        writeln!(out, "READ KEY[{k}] Txn({s}, {i}) From({ws}, {wi})")
                    }
                    KeyForm::Set(set, k) => writeln!(
                        out,
                        "CONTAINS[{k}] in Set[{set}] From({ws}, {wi}) Txn({s}, {i})"
                    ),
                }
            }
        }
    };
    for o in h.txn(INITIAL_TXN).ops() {
        if h.op(o).kind == OpKind::Write && !h.is_implicit_initial_write(o) {
            line(o, out)?;
        }
    }
    for t in write_order(h, &written) {
        for o in h.txn(t).ops() {
            line(o, out)?;
        }
    }
    Ok(())
}

/// What writing `h` as an IsoPredict trace drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = Vec::new();
    let has_values = h
        .ops()
        .iter()
        .enumerate()
        .any(|(i, o)| o.value.is_some() && !h.is_implicit_initial_write(i as u32));
    if has_values {
        notes.push("IsoPredict traces carry no values; they are dropped".into());
    }
    common::structure_notes(h, &mut notes, "an IsoPredict trace");
    let aborted = common::aborted_with_ops(h);
    if aborted > 0 {
        notes.push(format!(
            "IsoPredict traces have no aborted transactions; {aborted} are dropped"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<History, InputError> {
        read(text.as_bytes(), "t.txt")
    }

    const TRACE: &str = "\
WRITE KEY[x] Txn(0, 0)
INSERT[5] to Set[7] Txn(0, 0)
WRITE KEY[x] Txn(9, 0)
READ KEY[x] Txn(9, 0) From(9, 0)
READ KEY[y] Txn(8, 0) From(0, 0)
CONTAINS[5] in Set[7] From(0, 0) Txn(8, 0)
READ KEY[x] Txn(8, 0) From(9, 0)
DELETE[5] from Set[7] Txn(9, 1)
CONTAINS[5] in Set[7] From(9, 1) Txn(8, 1)
";

    #[test]
    fn reads_all_event_kinds() {
        let h = read_str(TRACE).unwrap();
        // Sessions by first transaction: 9 then 8.
        assert_eq!(h.sessions().len(), 2);
        assert_eq!(h.sessions()[0].external_id, Some(9));
        assert_eq!(h.sessions()[1].external_id, Some(8));
        assert_eq!(h.key_names(), &["x", "Set(7:5)", "y"]);
        let s = h.stats();
        assert_eq!(
            (s.committed, s.reads, s.writes, s.internal_reads),
            (4, 5, 2, 1)
        );
        // t1 = (9,0), t2 = (9,1), t3 = (8,0), t4 = (8,1).
        assert_eq!(h.txn(2).external_id, Some(1));
        let t3 = h.txn(3).ops().start;
        assert_eq!(h.writer_txn(t3), Some(INITIAL_TXN));
        assert_eq!(h.writer_txn(t3 + 2), Some(1));
        assert_eq!(h.writer_txn(h.txn(4).ops().start), Some(2));
        assert_eq!(h.txn(INITIAL_TXN).ops().len(), 3); // x, Set(7:5) explicit; y implicit
    }

    #[test]
    fn from_implies_a_write_and_forward_references_work() {
        let h = read_str("READ KEY[x] Txn(1, 0) From(2, 0)\nWRITE KEY[y] Txn(2, 0)\n").unwrap();
        assert_eq!(h.sessions()[0].external_id, Some(1));
        let r = h.txn(1).ops().start;
        assert_eq!(h.writer_txn(r), Some(2));
        // (2, 0) writes y, and x implicitly at its end.
        assert_eq!(h.txn_ops(2).len(), 2);
        // A transaction only named in From(..) comes after the owned ones.
        let h = read_str("READ KEY[x] Txn(1, 1) From(1, 0)\n").unwrap();
        assert_eq!(h.txn(1).external_id, Some(1));
        assert_eq!(h.txn(2).external_id, Some(0));
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, u32, &str)] = &[
            (
                "WRITE KEY[x] Txn(1, 0)\nWRITE KEY[x] Txn(1 0)\n",
                2,
                "expected `,`",
            ),
            ("READ KEY[x] Txn(1, 0)\n", 1, "expected `From(`"),
            ("\n\nREAD KEY[x] Txn(0, 0) From(1, 0)\n", 3, "cannot read"),
            (
                "WRITE KEY[x] Txn(0, 3)\n",
                1,
                "session 0 is the initial state",
            ),
            ("WRITE KEY[] Txn(1, 0)\n", 1, "empty key"),
            ("WRITE KEY[x Txn(1, 0)\n", 1, "not closed"),
            ("INSERT[1] in Set[2] Txn(1, 0)\n", 1, "expected `to`"),
            (
                "CONTAINS[1] in Set[2] Txn(1, 0) From(1, 0)\n",
                1,
                "expected `From(`",
            ),
            ("WRITE KEY[x] Txn(1, 0) extra\n", 1, "unexpected `extra`"),
            ("UPDATE KEY[x] Txn(1, 0)\n", 1, "expected an event"),
        ];
        for &(text, line, message) in cases {
            let e = read_str(text).unwrap_err();
            assert_eq!(e.line(), line, "{text:?}: {e}");
            assert!(e.to_string().contains(message), "{text:?}: {e}");
        }
    }

    #[test]
    fn writes_a_trace_back_unchanged() {
        let h = read_str(TRACE).unwrap();
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        let expected = TRACE.replace("DELETE[5] from", "INSERT[5] to");
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        assert!(notes(&h).is_empty());
    }

    #[test]
    fn write_read_cycles_use_forward_references() {
        let awdit = b"r 1 1\n-----\nw 0 0\n=====\nr 0 0\n-----\nw 1 1\n";
        let h = crate::formats::awdit::read(awdit, "a").unwrap();
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "READ KEY[1] Txn(1, 0) From(2, 1)\nWRITE KEY[0] Txn(1, 1)\n\
             READ KEY[0] Txn(2, 0) From(1, 1)\nWRITE KEY[1] Txn(2, 1)\n"
        );
        h.same_content(&read(&out, "t").unwrap()).unwrap();
    }

    #[test]
    fn order_follows_commit_timestamps() {
        use crate::history::Timestamps;
        let mut b = HistoryBuilder::new("ts");
        let x = b.key("x");
        let s1 = b.session(Some(1));
        let s2 = b.session(Some(2));
        let t1 = b.begin(s1, None);
        let t2 = b.begin(s1, None);
        let t3 = b.begin(s2, None);
        for (t, commit) in [(t1, 1), (t2, 9), (t3, 5)] {
            b.write(t, x, None, 0);
            b.set_timestamps(t, Timestamps { start: 0, commit });
        }
        let h = b.build().unwrap();
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "WRITE KEY[x] Txn(1, 0)\nWRITE KEY[x] Txn(2, 0)\nWRITE KEY[x] Txn(1, 1)\n"
        );
    }

    #[test]
    fn refuses_what_it_cannot_say() {
        let h = crate::formats::plume::read(b"r(1,5,1,1)\n", "p").unwrap();
        let e = write(&h, &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("has no writer"), "{e}");
        // An intermediate read: t1 writes x twice, t2 reads the first.
        let h = crate::formats::plume::read(b"w(1,1,1,1)\nw(1,2,1,1)\nr(1,1,2,2)\n", "p").unwrap();
        let e = write(&h, &mut Vec::new()).unwrap_err();
        assert!(
            e.to_string().contains("not the one a trace can name"),
            "{e}"
        );
    }
}
