//! Chronos: offline checking of snapshot isolation and serializability from the start and
//! commit timestamps a database assigned, in O(N log N + M) — Li et al., "Online
//! Timestamp-based Transactional Isolation Checking of Database Systems", §III (Algorithm 2)
//! and §IV-C (Chronos-SER); digest and pitfalls in notes/chronos-aion.md.
//!
//! The timestamps fix the arbitration and visibility orders (Def. 5, 6): `A` is before `B`
//! iff `A.commit < B.commit`, and `A` is visible to `B` iff `A.commit ≤ B.start`. What is left
//! to check, axiom by axiom, all violations reported, not only the first:
//! - **SESSION**: a session's previous transaction commits no later than the next one starts
//!   (SER: commits before the next one commits);
//! - **INT**: a read that follows an access of the same key in its transaction returns the
//!   value of that access (the own last write, or the last read);
//! - **EXT**: a transaction's first access of a key, if a read, returns the value of the last
//!   transaction that committed before its snapshot (SI: its start; SER: its commit),
//!   diagnosed BEFORE / UNCOMMITTED / AFTER / NEVER by where the value came from (P14);
//! - **NOCONFLICT** (SI only): two writers of one key never run at the same time (their
//!   [start, commit] intervals overlap) — reported once per pair and key, at the earlier
//!   commit.
//!
//! Events are sorted by (timestamp, rank, input position) with commits before starts at
//! equal timestamps (a commit at t is visible to a start at t, Def. 6) and a transaction
//! whose start equals its commit processed as one event between the two (P2); two writers
//! of a key with equal commit timestamps are reported (EQUAL-COMMIT), since the timestamps
//! do not order them. Transactions that start after they commit are reported and left out
//! of the SI check (P3). Lists are checked whole (P13): the committed state of a list key is
//! the sequence of its appends in commit order, and a read must return exactly that
//! (plus the reader's own appends).
//!
//! SER is checked in commit-timestamp order (Aion-SER): since `A.commit < B.start` implies
//! `A.commit < B.commit`, that order respects real time, so a pass also shows strict
//! serializability with respect to the timestamps.

use rustc_hash::{FxHashMap, FxHashSet};

use super::ts_report::{ExtKind, TimestampReport, TsCounts, TsTxnRef, TsViolation};
use crate::history::timestamped::{Hlc, TimestampedHistory, TsOp, TsOpKind, TsValue};

/// The level a timestamped history is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TsLevel {
    /// Snapshot isolation (Chronos).
    Snapshot,
    /// Serializability in commit-timestamp order (Chronos-SER).
    Serializable,
}

impl TsLevel {
    /// `si` or `ser`.
    pub fn short_name(self) -> &'static str {
        match self {
            TsLevel::Snapshot => "si",
            TsLevel::Serializable => "ser",
        }
    }
}

/// Options of a timestamp check.
#[derive(Debug, Clone)]
pub struct TsCheckOptions {
    /// Describe at most this many violations (counts stay exact).
    pub max_violations: usize,
}

impl Default for TsCheckOptions {
    fn default() -> Self {
        TsCheckOptions {
            max_violations: 1000,
        }
    }
}

const NONE: u32 = u32::MAX;

/// What a read should have returned: a register value, or a list made of a base (a read
/// list of the same transaction, or a prefix of the key's committed appends) followed by the
/// transaction's own appends of the key between the base and the read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Expected {
    Scalar(Option<i64>),
    List { base_op: u32, base_len: u32 },
}

/// A violation as found, compact; described afterwards.
#[derive(Debug, Clone, Copy)]
enum Raw {
    StartAfterCommit {
        txn: u32,
    },
    Session {
        txn: u32,
        prev: u32,
    },
    Int {
        txn: u32,
        op: u32,
        expected: Expected,
    },
    Ext {
        txn: u32,
        op: u32,
        writer: u32,
        expected: Expected,
    },
    NoConflict {
        first: u32,
        second: u32,
        key: u32,
    },
    EqualCommit {
        first: u32,
        second: u32,
        key: u32,
    },
}

struct State<'h> {
    h: &'h TimestampedHistory,
    // The committed state (Chronos' `frontier`), per key.
    reg_null: Vec<bool>,
    reg_val: Vec<i64>,
    reg_writer: Vec<u32>,
    logs: Vec<Vec<i64>>,
    list_writer: Vec<u32>,
    // Running writers per key (`ongoing`).
    ongoing: Vec<Vec<u32>>,
    last_commit: Vec<Hlc>,
    last_committer: Vec<u32>,
    // Scratch of the transaction being processed (`int_val`), valid where `stamp == mark`.
    stamp: Vec<u32>,
    int_null: Vec<bool>,
    int_val: Vec<i64>,
    list_base_op: Vec<u32>,
    list_base_len: Vec<u32>,
    wstamp: Vec<u32>,
    raw: Vec<Raw>,
}

impl<'h> State<'h> {
    fn new(h: &'h TimestampedHistory) -> Self {
        let k = h.key_names.len();
        State {
            h,
            reg_null: vec![h.initial.is_none(); k],
            reg_val: vec![h.initial.unwrap_or(0); k],
            reg_writer: vec![NONE; k],
            logs: vec![Vec::new(); k],
            list_writer: vec![NONE; k],
            ongoing: vec![Vec::new(); k],
            last_commit: vec![Hlc::default(); k],
            last_committer: vec![NONE; k],
            stamp: vec![0; k],
            int_null: vec![false; k],
            int_val: vec![0; k],
            list_base_op: vec![NONE; k],
            list_base_len: vec![0; k],
            wstamp: vec![0; k],
            raw: Vec::new(),
        }
    }

    /// Checks the reads of transaction `t` against the committed state (its snapshot).
    fn process_ops(&mut self, t: usize) {
        let h = self.h;
        let txn = &h.txns[t];
        let mark = t as u32 + 1;
        for oi in txn.ops_start..txn.ops_end {
            let op = &h.ops[oi as usize];
            let k = op.key as usize;
            match op.kind {
                TsOpKind::Read => {
                    if self.stamp[k] != mark {
                        self.stamp[k] = mark;
                        if op.null != self.reg_null[k] || (!op.null && op.value != self.reg_val[k])
                        {
                            let expected = (!self.reg_null[k]).then_some(self.reg_val[k]);
                            self.raw.push(Raw::Ext {
                                txn: t as u32,
                                op: oi,
                                writer: self.reg_writer[k],
                                expected: Expected::Scalar(expected),
                            });
                        }
                    } else if op.null != self.int_null[k]
                        || (!op.null && op.value != self.int_val[k])
                    {
                        let expected = (!self.int_null[k]).then_some(self.int_val[k]);
                        self.raw.push(Raw::Int {
                            txn: t as u32,
                            op: oi,
                            expected: Expected::Scalar(expected),
                        });
                    }
                    self.int_null[k] = op.null;
                    self.int_val[k] = op.value;
                }
                TsOpKind::Write => {
                    self.stamp[k] = mark;
                    self.int_null[k] = op.null;
                    self.int_val[k] = op.value;
                }
                TsOpKind::Append => {
                    if self.stamp[k] != mark {
                        self.stamp[k] = mark;
                        self.list_base_op[k] = NONE;
                        self.list_base_len[k] = self.logs[k].len() as u32;
                    }
                }
                TsOpKind::ReadList => {
                    let TsValue::List(read) = h.value(op) else {
                        unreachable!("a list read holds a list")
                    };
                    if self.stamp[k] != mark {
                        self.stamp[k] = mark;
                        if read != self.logs[k].as_slice() {
                            self.raw.push(Raw::Ext {
                                txn: t as u32,
                                op: oi,
                                writer: self.list_writer[k],
                                expected: Expected::List {
                                    base_op: NONE,
                                    base_len: self.logs[k].len() as u32,
                                },
                            });
                        }
                    } else {
                        let (base_op, base_len) = (self.list_base_op[k], self.list_base_len[k]);
                        let expected = Expected::List { base_op, base_len };
                        if !list_matches(h, &self.logs[k], t, oi, expected, read) {
                            // After only own appends, a wrong snapshot part is EXT; a wrong
                            // own part (or a change since an earlier read) is INT.
                            let own = own_appends(h, t, oi, base_op, k as u32);
                            let own_ok = read.len() >= own.len()
                                && read[read.len() - own.len()..]
                                    .iter()
                                    .copied()
                                    .eq(own.iter().copied());
                            if base_op == NONE && own_ok {
                                self.raw.push(Raw::Ext {
                                    txn: t as u32,
                                    op: oi,
                                    writer: self.list_writer[k],
                                    expected,
                                });
                            } else {
                                self.raw.push(Raw::Int {
                                    txn: t as u32,
                                    op: oi,
                                    expected,
                                });
                            }
                        }
                    }
                    self.list_base_op[k] = oi;
                }
            }
        }
    }

    /// Marks each key `t` writes (once) and calls `f` on it.
    fn for_written_keys(&mut self, t: usize, mark: u32, mut f: impl FnMut(&mut Self, usize)) {
        let h = self.h;
        let txn = &h.txns[t];
        for oi in txn.ops_start..txn.ops_end {
            let op = &h.ops[oi as usize];
            if matches!(op.kind, TsOpKind::Write | TsOpKind::Append) {
                let k = op.key as usize;
                if self.wstamp[k] != mark {
                    self.wstamp[k] = mark;
                    f(self, k);
                }
            }
        }
    }

    /// `t` starts: it becomes a running writer of its keys.
    fn start(&mut self, t: usize) {
        self.for_written_keys(t, t as u32 + 1, |s, k| s.ongoing[k].push(t as u32));
    }

    /// `t` commits: its last writes become the committed state; overlapping writers and
    /// equal commit timestamps are reported.
    fn commit(&mut self, t: usize, track_ongoing: bool) {
        let h = self.h;
        let txn = &h.txns[t];
        for oi in txn.ops_start..txn.ops_end {
            let op = &h.ops[oi as usize];
            let k = op.key as usize;
            match op.kind {
                TsOpKind::Write => {
                    self.reg_null[k] = op.null;
                    self.reg_val[k] = op.value;
                    self.reg_writer[k] = t as u32;
                }
                TsOpKind::Append => {
                    self.logs[k].push(op.value);
                    self.list_writer[k] = t as u32;
                }
                _ => {}
            }
        }
        let commit = txn.commit;
        self.for_written_keys(t, !(t as u32), |s, k| {
            if track_ongoing {
                let running = &mut s.ongoing[k];
                if let Some(pos) = running.iter().position(|&o| o == t as u32) {
                    running.swap_remove(pos);
                }
                for &other in running.iter() {
                    s.raw.push(Raw::NoConflict {
                        first: t as u32,
                        second: other,
                        key: k as u32,
                    });
                }
            }
            let previous = s.last_committer[k];
            if previous != NONE && s.last_commit[k] == commit {
                s.raw.push(Raw::EqualCommit {
                    first: previous.min(t as u32),
                    second: previous.max(t as u32),
                    key: k as u32,
                });
            }
            s.last_commit[k] = commit;
            s.last_committer[k] = t as u32;
        });
    }
}

/// The transaction's own appends of `key` after its base (`base_op`, or its start) and
/// before `op`.
fn own_appends(h: &TimestampedHistory, t: usize, op: u32, base_op: u32, key: u32) -> Vec<i64> {
    let from = if base_op == NONE {
        h.txns[t].ops_start
    } else {
        base_op + 1
    };
    (from..op)
        .map(|o| &h.ops[o as usize])
        .filter(|o| o.kind == TsOpKind::Append && o.key == key)
        .map(|o| o.value)
        .collect()
}

/// The list `expected` stands for, for the read `op` of transaction `t` (`log`: the key's
/// committed appends).
fn expected_list(
    h: &TimestampedHistory,
    log: &[i64],
    t: usize,
    op: u32,
    base_op: u32,
    base_len: u32,
) -> Vec<i64> {
    let key = h.ops[op as usize].key;
    let mut out: Vec<i64> = if base_op == NONE {
        log[..base_len as usize].to_vec()
    } else {
        match h.value(&h.ops[base_op as usize]) {
            TsValue::List(items) => items.to_vec(),
            _ => Vec::new(),
        }
    };
    out.extend(own_appends(h, t, op, base_op, key));
    out
}

/// Whether `read` equals the list `expected` stands for, without allocating in the common
/// case (no own appends).
fn list_matches(
    h: &TimestampedHistory,
    log: &[i64],
    t: usize,
    op: u32,
    expected: Expected,
    read: &[i64],
) -> bool {
    let Expected::List { base_op, base_len } = expected else {
        return false;
    };
    let base: &[i64] = if base_op == NONE {
        &log[..base_len as usize]
    } else {
        match h.value(&h.ops[base_op as usize]) {
            TsValue::List(items) => items,
            _ => &[],
        }
    };
    if read.len() < base.len() || &read[..base.len()] != base {
        return false;
    }
    let key = h.ops[op as usize].key;
    let from = if base_op == NONE {
        h.txns[t].ops_start
    } else {
        base_op + 1
    };
    let mut rest = read[base.len()..].iter();
    for o in from..op {
        let o = &h.ops[o as usize];
        if o.kind == TsOpKind::Append && o.key == key && rest.next() != Some(&o.value) {
            return false;
        }
    }
    rest.next().is_none()
}

/// Checks a timestamped history against SI or SER. Every violation is counted; the first
/// `options.max_violations` are described.
pub(crate) fn check_timestamps(
    h: &TimestampedHistory,
    level: TsLevel,
    options: &TsCheckOptions,
) -> TimestampReport {
    let mut state = State::new(h);
    let n = h.txns.len();
    let mut raw_front: Vec<Raw> = Vec::new();

    // Eq. (1), before sorting (P3).
    let mut valid = vec![true; n];
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.start > txn.commit {
            raw_front.push(Raw::StartAfterCommit { txn: t as u32 });
            valid[t] = level == TsLevel::Serializable;
        }
    }
    // SESSION, in input order per session.
    let mut last: Vec<u32> = vec![NONE; h.session_names.len()];
    for (t, txn) in h.txns.iter().enumerate() {
        if !valid[t] {
            continue;
        }
        let s = txn.session as usize;
        let prev = last[s];
        if prev != NONE {
            let p = &h.txns[prev as usize];
            let ok = match level {
                TsLevel::Snapshot => p.commit <= txn.start,
                TsLevel::Serializable => p.commit < txn.commit,
            };
            if !ok {
                raw_front.push(Raw::Session {
                    txn: t as u32,
                    prev,
                });
            }
        }
        last[s] = t as u32;
    }

    match level {
        TsLevel::Snapshot => {
            // (timestamp, rank, txn): commits (0) before point transactions (1) before
            // starts (2) at equal timestamps.
            let mut events: Vec<(Hlc, u8, u32)> = Vec::with_capacity(2 * n);
            for (t, txn) in h.txns.iter().enumerate() {
                if !valid[t] {
                    continue;
                }
                if txn.start == txn.commit {
                    events.push((txn.start, 1, t as u32));
                } else {
                    events.push((txn.commit, 0, t as u32));
                    events.push((txn.start, 2, t as u32));
                }
            }
            sort_events(&mut events);
            for &(_, rank, t) in &events {
                let t = t as usize;
                match rank {
                    0 => state.commit(t, true),
                    1 => {
                        state.process_ops(t);
                        state.start(t);
                        state.commit(t, true);
                    }
                    _ => {
                        state.process_ops(t);
                        state.start(t);
                    }
                }
            }
        }
        TsLevel::Serializable => {
            let mut events: Vec<(Hlc, u8, u32)> = (0..n as u32)
                .map(|t| (h.txns[t as usize].commit, 0, t))
                .collect();
            sort_events(&mut events);
            for &(_, _, t) in &events {
                state.process_ops(t as usize);
                state.commit(t as usize, false);
            }
        }
    }

    let mut raw = raw_front;
    raw.append(&mut state.raw);
    describe(h, level, &state.logs, &raw, &valid, options)
}

fn sort_events(events: &mut [(Hlc, u8, u32)]) {
    use rayon::slice::ParallelSliceMut;
    if events.len() > 1 << 16 {
        events.par_sort_unstable();
    } else {
        events.sort_unstable();
    }
}

/// The value an EXT violation's returned value is attributed to: a register value, or for
/// lists the first element that should not be there (`None` when the read is a stale prefix,
/// then attributed to its last element's appender).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Culprit {
    key: u32,
    null: bool,
    value: i64,
}

/// What the returned value of an EXT is: a culprit to look up, or a stale list (BEFORE).
fn ext_culprit(
    h: &TimestampedHistory,
    logs: &[Vec<i64>],
    txn: u32,
    op: u32,
    expected: Expected,
) -> (Option<Culprit>, bool) {
    let o = &h.ops[op as usize];
    match (h.value(o), expected) {
        (TsValue::List(read), Expected::List { base_op, base_len }) => {
            let want = expected_list(
                h,
                &logs[o.key as usize],
                txn as usize,
                op,
                base_op,
                base_len,
            );
            if read.len() < want.len() && want[..read.len()] == *read {
                // A stale prefix: attributed to the appender of its last element.
                let culprit = read.last().map(|&value| Culprit {
                    key: o.key,
                    null: false,
                    value,
                });
                return (culprit, true);
            }
            let i = read
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(want.len());
            let culprit = read.get(i).map(|&value| Culprit {
                key: o.key,
                null: false,
                value,
            });
            (culprit, false)
        }
        (TsValue::Null, _) => (
            Some(Culprit {
                key: o.key,
                null: true,
                value: 0,
            }),
            false,
        ),
        (TsValue::Int(v), _) => (
            Some(Culprit {
                key: o.key,
                null: false,
                value: v,
            }),
            false,
        ),
        (TsValue::List(_), Expected::Scalar(_)) => (None, false),
    }
}

/// Classifies an EXT by the transaction `writer` (`None`: none found) of the returned value.
fn classify(
    h: &TimestampedHistory,
    level: TsLevel,
    reader: u32,
    writer: Option<u32>,
    is_initial: bool,
) -> ExtKind {
    let Some(w) = writer else {
        return if is_initial {
            ExtKind::Before
        } else {
            ExtKind::Never
        };
    };
    if w == reader {
        return ExtKind::After;
    }
    let (r, w) = (&h.txns[reader as usize], &h.txns[w as usize]);
    let snapshot = match level {
        TsLevel::Snapshot => r.start,
        TsLevel::Serializable => r.commit,
    };
    let before = match level {
        TsLevel::Snapshot => w.commit <= snapshot,
        TsLevel::Serializable => w.commit < snapshot,
    };
    if before {
        ExtKind::Before
    } else if w.start <= snapshot {
        ExtKind::Uncommitted
    } else {
        ExtKind::After
    }
}

/// Per EXT violation of `raw`, the value it returned (`None`: not one a write can return)
/// and whether it is stale; and the writer of each such value, from one scan of all writes.
#[allow(clippy::type_complexity)]
fn ext_writers(
    h: &TimestampedHistory,
    logs: &[Vec<i64>],
    raw: &[Raw],
    valid: &[bool],
) -> (Vec<(Option<Culprit>, bool)>, FxHashMap<Culprit, u32>) {
    let mut culprits: Vec<(Option<Culprit>, bool)> = Vec::new();
    let mut wanted: FxHashSet<Culprit> = FxHashSet::default();
    for r in raw {
        if let Raw::Ext {
            txn, op, expected, ..
        } = *r
        {
            let c = ext_culprit(h, logs, txn, op, expected);
            if let Some(c) = c.0 {
                wanted.insert(c);
            }
            culprits.push(c);
        }
    }
    let mut writer_of: FxHashMap<Culprit, u32> = FxHashMap::default();
    if !wanted.is_empty() {
        // Transactions left out of the check (start after commit, SI) write nothing.
        for (t, txn) in h.txns.iter().enumerate().filter(|&(t, _)| valid[t]) {
            for op in &h.ops[txn.ops_start as usize..txn.ops_end as usize] {
                if matches!(op.kind, TsOpKind::Write | TsOpKind::Append) {
                    let c = Culprit {
                        key: op.key,
                        null: op.null,
                        value: if op.null { 0 } else { op.value },
                    };
                    if wanted.contains(&c) {
                        writer_of.entry(c).or_insert(t as u32);
                    }
                }
            }
        }
    }
    (culprits, writer_of)
}

fn describe(
    h: &TimestampedHistory,
    level: TsLevel,
    logs: &[Vec<i64>],
    raw: &[Raw],
    valid: &[bool],
    options: &TsCheckOptions,
) -> TimestampReport {
    // Writers of the values EXT violations returned, from one scan of all writes.
    let (culprits, writer_of) = ext_writers(h, logs, raw, valid);
    let is_initial = |c: &Culprit| -> bool {
        match h.initial {
            None => c.null,
            Some(v) => !c.null && c.value == v,
        }
    };

    let positions = h.session_positions();
    let txn_ref = |t: u32| TsTxnRef::new(h, t as usize, positions[t as usize]);
    let maybe_ref = |t: u32| (t != NONE).then(|| txn_ref(t));
    let op_index = |txn: u32, op: u32| op - h.txns[txn as usize].ops_start;
    let key_name = |op: &TsOp| h.key_names[op.key as usize].clone();
    let expected_text = |txn: u32, op: u32, e: Expected| -> String {
        match e {
            Expected::Scalar(Some(v)) => v.to_string(),
            Expected::Scalar(None) => "null".to_string(),
            Expected::List { base_op, base_len } => {
                let k = h.ops[op as usize].key as usize;
                let items = expected_list(h, &logs[k], txn as usize, op, base_op, base_len);
                TsValue::List(&items).to_string()
            }
        }
    };

    let mut counts = TsCounts::default();
    let mut violations = Vec::new();
    let mut ext_index = 0;
    for r in raw {
        let (kind, writer) = if let Raw::Ext { txn, .. } = *r {
            let (culprit, stale) = culprits[ext_index];
            ext_index += 1;
            let writer = culprit.and_then(|c| writer_of.get(&c).copied());
            let initial = culprit.map_or(true, |c| is_initial(&c));
            let kind = if stale {
                ExtKind::Before
            } else {
                classify(h, level, txn, writer, initial)
            };
            counts.add_ext(kind);
            (kind, writer)
        } else {
            (ExtKind::Never, None)
        };
        if violations.len() >= options.max_violations {
            match *r {
                Raw::StartAfterCommit { .. } => counts.start_after_commit += 1,
                Raw::Session { .. } => counts.session += 1,
                Raw::Int { .. } => counts.int += 1,
                Raw::Ext { .. } => {}
                Raw::NoConflict { .. } => counts.no_conflict += 1,
                Raw::EqualCommit { .. } => counts.equal_commit += 1,
            }
            continue;
        }
        let v = match *r {
            Raw::StartAfterCommit { txn } => {
                counts.start_after_commit += 1;
                TsViolation::StartAfterCommit { txn: txn_ref(txn) }
            }
            Raw::Session { txn, prev } => {
                counts.session += 1;
                TsViolation::Session {
                    txn: txn_ref(txn),
                    previous: txn_ref(prev),
                }
            }
            Raw::Int { txn, op, expected } => {
                counts.int += 1;
                let o = &h.ops[op as usize];
                TsViolation::Int {
                    txn: txn_ref(txn),
                    key: key_name(o),
                    op_index: op_index(txn, op),
                    read: h.value(o).to_string(),
                    expected: expected_text(txn, op, expected),
                }
            }
            Raw::Ext {
                txn,
                op,
                writer: expected_writer,
                expected,
            } => {
                let o = &h.ops[op as usize];
                TsViolation::Ext {
                    txn: txn_ref(txn),
                    key: key_name(o),
                    op_index: op_index(txn, op),
                    read: h.value(o).to_string(),
                    expected: expected_text(txn, op, expected),
                    expected_writer: maybe_ref(expected_writer),
                    kind,
                    value_writer: writer.map(txn_ref),
                }
            }
            Raw::NoConflict { first, second, key } => {
                counts.no_conflict += 1;
                TsViolation::NoConflict {
                    first: txn_ref(first),
                    second: txn_ref(second),
                    key: h.key_names[key as usize].clone(),
                }
            }
            Raw::EqualCommit { first, second, key } => {
                counts.equal_commit += 1;
                TsViolation::EqualCommit {
                    first: txn_ref(first),
                    second: txn_ref(second),
                    key: h.key_names[key as usize].clone(),
                }
            }
        };
        violations.push(v);
    }
    let consistent = raw.is_empty();
    TimestampReport {
        source: h.source.clone(),
        level: level.short_name().to_string(),
        checker: "timestamps".to_string(),
        consistent,
        strict_serializable: (level == TsLevel::Serializable).then_some(consistent),
        transactions: h.txns.len() as u64,
        operations: h.ops.len() as u64,
        truncated: (violations.len() as u64) < counts.total(),
        counts,
        violations,
    }
}

#[cfg(test)]
#[path = "chronos_tests.rs"]
pub(crate) mod tests;
