//! Timestamped histories: the input of the timestamp-based checkers ([`crate::ser::chronos`]
//! offline, [`crate::ser::aion`] online), after Li et al., "Online Timestamp-based Transactional Isolation
//! Checking of Database Systems" (Chronos/Aion), §II–III.
//!
//! Every transaction carries the start and commit timestamps its database assigned;
//! timestamps are hybrid logical clocks `(physical, logical)` compared lexicographically (a
//! plain counter is `(n, 0)`). Values are 64-bit integers or `null`; list histories (append
//! and read-the-whole-list) keep each read list in a flat arena, so that the checkers can
//! compare whole lists (pitfall P13) instead of only their last element.
//!
//! Only committed transactions are in a timestamped history (aborted ones have no commit
//! timestamp). Session order is the order transactions of one session appear in the input.

use std::fmt;

use rustc_hash::FxHashMap;

use super::{History, OpKind, TxnId, INITIAL_TXN};
use crate::error::InputError;

/// A hybrid-logical-clock timestamp, ordered by `physical`, then `logical`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Hlc {
    /// The physical part (TimeKiller's `p`).
    pub p: u64,
    /// The logical part (TimeKiller's `l`); 0 for a plain counter.
    pub l: u64,
}

impl Hlc {
    /// A timestamp with physical part `p` and logical part `l`.
    pub const fn new(p: u64, l: u64) -> Hlc {
        Hlc { p, l }
    }
}

impl fmt::Display for Hlc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.l == 0 {
            write!(f, "{}", self.p)
        } else {
            write!(f, "({},{})", self.p, self.l)
        }
    }
}

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TsOpKind {
    /// Reads a register: the value is a number or `null`.
    Read,
    /// Writes a register.
    Write,
    /// Appends a number to a list.
    Append,
    /// Reads a whole list.
    ReadList,
}

/// A value as stored: `null`, a number, or a list (for [`TsOpKind::ReadList`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsValue<'a> {
    /// `null` (TimeKiller's initial value unless `--initial-value 0`).
    Null,
    /// A number.
    Int(i64),
    /// A list read.
    List(&'a [i64]),
}

impl fmt::Display for TsValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TsValue::Null => f.write_str("null"),
            TsValue::Int(v) => write!(f, "{v}"),
            TsValue::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// One operation, packed: for lists `value` is `start << 32 | len` in the list arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsOp {
    /// What it does.
    pub kind: TsOpKind,
    /// Whether the value is `null` (reads and writes of registers only).
    pub null: bool,
    /// Dense key id.
    pub key: u32,
    /// The value (see the type's documentation for lists).
    pub value: i64,
}

/// A transaction's name in the input: a number or a string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Name {
    /// A numeric id.
    Num(i64),
    /// A string id.
    Str(Box<str>),
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Name::Num(n) => write!(f, "{n}"),
            Name::Str(s) => f.write_str(s),
        }
    }
}

/// A committed transaction with its timestamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsTxn {
    /// Its id in the input (`tid`).
    pub tid: Name,
    /// Dense session id (index into [`TimestampedHistory::session_names`]).
    pub session: u32,
    /// Start timestamp (`sts`).
    pub start: Hlc,
    /// Commit timestamp (`cts`).
    pub commit: Hlc,
    /// 1-based input line where the transaction begins (0 when built in memory).
    pub line: u32,
    /// Its operations: `ops[ops_start..ops_end]`.
    pub ops_start: u32,
    /// End of its operation range.
    pub ops_end: u32,
}

/// A history of committed, timestamped transactions, flat: operations of one transaction are
/// contiguous, list values live in one arena.
#[derive(Debug, Clone, Default)]
pub struct TimestampedHistory {
    /// The input's name (a file name or a description), for reports.
    pub source: String,
    /// Transactions in input order.
    pub txns: Vec<TsTxn>,
    /// Operations, transaction by transaction, in program order.
    pub ops: Vec<TsOp>,
    /// The list arena of [`TsOpKind::ReadList`] values.
    pub lists: Vec<i64>,
    /// Key names as in the input, indexed by key id.
    pub key_names: Vec<String>,
    /// Session names as in the input, indexed by session id.
    pub session_names: Vec<String>,
    /// The initial value of every register (`None` = `null`); lists start empty.
    pub initial: Option<i64>,
}

impl TimestampedHistory {
    /// Every transaction's 0-based position in its session (input order): transaction `t` is
    /// `T<session + 1>.<position + 1>` in reports, as in the [`crate::history::History`]
    /// built from this one.
    pub fn session_positions(&self) -> Vec<u32> {
        let mut next = vec![0u32; self.session_names.len()];
        self.txns
            .iter()
            .map(|t| {
                let slot = &mut next[t.session as usize];
                *slot += 1;
                *slot - 1
            })
            .collect()
    }

    /// The value of an operation.
    pub fn value(&self, op: &TsOp) -> TsValue<'_> {
        match op.kind {
            TsOpKind::ReadList => {
                let start = (op.value as u64 >> 32) as usize;
                let len = (op.value as u64 & 0xffff_ffff) as usize;
                TsValue::List(&self.lists[start..start + len])
            }
            _ if op.null => TsValue::Null,
            _ => TsValue::Int(op.value),
        }
    }

    /// The operations of transaction `t` (index into [`TimestampedHistory::txns`]).
    pub fn txn_ops(&self, t: usize) -> &[TsOp] {
        let txn = &self.txns[t];
        &self.ops[txn.ops_start as usize..txn.ops_end as usize]
    }

    /// Number of operations.
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// Whether any operation is a list append or list read.
    pub fn has_lists(&self) -> bool {
        self.ops
            .iter()
            .any(|o| matches!(o.kind, TsOpKind::Append | TsOpKind::ReadList))
    }

    /// Whether some transaction starts after it commits (such a history fails Eq. (1)).
    pub fn start_after_commit(&self) -> usize {
        self.txns.iter().filter(|t| t.start > t.commit).count()
    }

    /// The timestamped view of a [`History`] whose committed transactions all carry
    /// timestamps (`None` if some committed transaction has none). Timestamps `n` become
    /// `(n, 0)`; values are taken as they are (a value above `i64::MAX` is an error); aborted
    /// transactions are left out; the initial transaction's writes set the initial values
    /// (they must all be the same value, or all absent = `null`).
    pub fn from_history(h: &History) -> Result<Option<TimestampedHistory>, InputError> {
        if !h.has_timestamps() {
            return Ok(None);
        }
        let mut out = TimestampedHistory {
            source: h.source().to_string(),
            key_names: h.key_names().to_vec(),
            ..Default::default()
        };
        let mut initial: Option<Option<u64>> = None;
        for op in h.txn_ops(INITIAL_TXN) {
            match initial {
                None => initial = Some(op.value),
                Some(v) if v == op.value => {}
                Some(_) => {
                    return Err(InputError::new(
                        h.source(),
                        op.line,
                        "the timestamp checker needs one initial value for every key, \
                         but the initial transaction writes different values",
                    ))
                }
            }
        }
        let to_i64 = |v: u64, line: u32| -> Result<i64, InputError> {
            i64::try_from(v).map_err(|_| {
                InputError::new(
                    h.source(),
                    line,
                    format!("value {v} does not fit the timestamp checker's 64-bit signed values"),
                )
            })
        };
        out.initial = match initial.flatten() {
            Some(v) => Some(to_i64(v, 0)?),
            None => None,
        };
        let mut session_ids: FxHashMap<u32, u32> = FxHashMap::default();
        // A session without an external id is named by its index, unless another session's
        // external id is that number: then by a number no session uses (two sessions must
        // never be written under one name, which would merge them on reading).
        let taken: rustc_hash::FxHashSet<u64> =
            h.sessions().iter().filter_map(|s| s.external_id).collect();
        let mut fresh = taken
            .iter()
            .max()
            .map_or(0, |m| m.saturating_add(1))
            .max(h.sessions().len() as u64);
        for t in 1..h.txn_count() as TxnId {
            let txn = h.txn(t);
            if !txn.is_committed() {
                continue;
            }
            let Some(ts) = h.timestamps(t) else {
                return Ok(None);
            };
            let next = session_ids.len() as u32;
            let session = *session_ids.entry(txn.session).or_insert(next);
            if session == next {
                let s = &h.sessions()[txn.session as usize];
                let name = match s.external_id {
                    Some(id) => id,
                    None if !taken.contains(&(txn.session as u64)) => txn.session as u64,
                    None => {
                        fresh += 1;
                        fresh - 1
                    }
                };
                out.session_names.push(name.to_string());
            }
            let ops_start = out.ops.len() as u32;
            let mut line = 0;
            for op in h.txn_ops(t) {
                if line == 0 {
                    line = op.line;
                }
                let (kind, value) = match op.kind {
                    OpKind::Read => (TsOpKind::Read, op.value),
                    OpKind::Write => (TsOpKind::Write, op.value),
                };
                let value = match value {
                    Some(v) => Some(to_i64(v, op.line)?),
                    None => None,
                };
                out.ops.push(TsOp {
                    kind,
                    null: value.is_none(),
                    key: op.key,
                    value: value.unwrap_or(0),
                });
            }
            out.txns.push(TsTxn {
                tid: Name::Num(txn.external_id.map_or(t as i64, |e| e as i64)),
                session,
                start: Hlc::new(ts.start, 0),
                commit: Hlc::new(ts.commit, 0),
                line,
                ops_start,
                ops_end: out.ops.len() as u32,
            });
        }
        Ok(Some(out))
    }
}

/// Builds a [`TimestampedHistory`] in memory (tests, generators, the online checker's
/// replay of a file).
#[derive(Debug, Default)]
pub struct TimestampedBuilder {
    history: TimestampedHistory,
    keys: FxHashMap<String, u32>,
    sessions: FxHashMap<String, u32>,
}

impl TimestampedBuilder {
    /// An empty history named `source` whose registers start at `initial`.
    pub fn new(source: impl Into<String>, initial: Option<i64>) -> Self {
        TimestampedBuilder {
            history: TimestampedHistory {
                source: source.into(),
                initial,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The dense id of a key name.
    pub fn key(&mut self, name: &str) -> u32 {
        if let Some(&k) = self.keys.get(name) {
            return k;
        }
        let k = self.history.key_names.len() as u32;
        self.history.key_names.push(name.to_string());
        self.keys.insert(name.to_string(), k);
        k
    }

    /// The dense id of a session name.
    pub fn session(&mut self, name: &str) -> u32 {
        if let Some(&s) = self.sessions.get(name) {
            return s;
        }
        let s = self.history.session_names.len() as u32;
        self.history.session_names.push(name.to_string());
        self.sessions.insert(name.to_string(), s);
        s
    }

    /// Starts a transaction; the operations added next belong to it.
    pub fn txn(&mut self, tid: Name, session: u32, start: Hlc, commit: Hlc, line: u32) {
        let at = self.history.ops.len() as u32;
        self.history.txns.push(TsTxn {
            tid,
            session,
            start,
            commit,
            line,
            ops_start: at,
            ops_end: at,
        });
    }

    fn push(&mut self, kind: TsOpKind, key: u32, null: bool, value: i64) {
        self.history.ops.push(TsOp {
            kind,
            null,
            key,
            value,
        });
        let end = self.history.ops.len() as u32;
        self.history
            .txns
            .last_mut()
            .expect("an operation before any transaction")
            .ops_end = end;
    }

    /// Adds a register read of `value` (`None` = null) to the current transaction.
    pub fn read(&mut self, key: u32, value: Option<i64>) {
        self.push(TsOpKind::Read, key, value.is_none(), value.unwrap_or(0));
    }

    /// Adds a register write.
    pub fn write(&mut self, key: u32, value: Option<i64>) {
        self.push(TsOpKind::Write, key, value.is_none(), value.unwrap_or(0));
    }

    /// Adds a list append.
    pub fn append(&mut self, key: u32, value: i64) {
        self.push(TsOpKind::Append, key, false, value);
    }

    /// Adds a list read.
    pub fn read_list(&mut self, key: u32, items: &[i64]) {
        let start = self.history.lists.len() as u64;
        self.history.lists.extend_from_slice(items);
        let packed = (start << 32 | items.len() as u64) as i64;
        self.push(TsOpKind::ReadList, key, false, packed);
    }

    /// Number of transactions so far.
    pub fn txn_count(&self) -> usize {
        self.history.txns.len()
    }

    /// The history built.
    pub fn finish(self) -> TimestampedHistory {
        self.history
    }
}
