//! [`HistoryBuilder`]: collects sessions, transactions and operations in any interleaving,
//! resolves every read to its writer, validates, and lays the history out densely.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::value_index::ValueIndex;
use super::{
    Csr, History, KeyId, LazyIndex, ObservedAnomaly, OpId, OpKind, Operation, RealTime, Session,
    SessionId, Timestamps, Transaction, TxnId, TxnStatus, Unresolved, INITIAL_TXN, NO_SESSION,
    NO_WRITER,
};
use crate::error::InputError;

/// How a read names the write it observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    /// The write of this value to the read's key (formats with unique values: Plume, AWDIT…).
    Value(u64),
    /// The last write of the read's key by this builder transaction (formats that carry the
    /// writer: IsoPredict traces, the recording store). If that transaction never writes the
    /// key, a write at its end is implied. If it is the reader's own transaction, the read
    /// observes the own write that precedes it (or, failing that, a later one: a future read).
    Txn(BuilderTxn),
    /// Exactly this operation: the `index`-th operation (0-based, in the order they were
    /// added) of transaction `txn`, which must be a write of the read's key. For formats that
    /// name the exact writing operation (the native JSON format), so that any writer —
    /// including an intermediate or overwritten write — round-trips exactly.
    Op(BuilderTxn, u32),
    /// The initial transaction's write of the key.
    Initial,
    /// The write of this value to the read's key if the history has one, else the initial
    /// transaction's write (dbcop's version 0: the initial state unless some transaction
    /// writes 0, dbcop `tests/version_zero.rs`).
    ValueOrInitial(u64),
    /// The input names no writer.
    Unknown,
}

/// A transaction while the history is being built (not yet its final [`TxnId`](super::TxnId)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuilderTxn(u32);

impl BuilderTxn {
    /// The initial transaction.
    pub const INITIAL: BuilderTxn = BuilderTxn(0);
}

/// How an added read names its writer ([`ReadFrom`]), one byte per operation: the tag, with
/// the payload (a value, a transaction, an operation) kept apart and only when some operation
/// needs one. A read of the write of its own value (Plume, AWDIT, every value-based format)
/// needs none: [`FROM_OWN_VALUE`].
const FROM_UNKNOWN: u8 = 0;
const FROM_INITIAL: u8 = 1;
const FROM_VALUE: u8 = 2;
const FROM_TXN: u8 = 3;
const FROM_OP: u8 = 4;
const FROM_VALUE_OR_INITIAL: u8 = 5;
/// `ReadFrom::Value(v)` where `v` is the read's own value.
const FROM_OWN_VALUE: u8 = 6;

/// The tag and payload of a [`ReadFrom`] for an operation of value `value`.
fn encode_from(from: ReadFrom, value: Option<u64>) -> (u8, u64) {
    match from {
        ReadFrom::Unknown => (FROM_UNKNOWN, 0),
        ReadFrom::Initial => (FROM_INITIAL, 0),
        ReadFrom::Value(v) if value == Some(v) => (FROM_OWN_VALUE, 0),
        ReadFrom::Value(v) => (FROM_VALUE, v),
        ReadFrom::Txn(t) => (FROM_TXN, u64::from(t.0)),
        ReadFrom::Op(t, i) => (FROM_OP, u64::from(t.0) << 32 | u64::from(i)),
        ReadFrom::ValueOrInitial(v) => (FROM_VALUE_OR_INITIAL, v),
    }
}

/// The [`ReadFrom`] of a tag and payload, for an operation of value `value`.
#[inline]
fn decode_from(tag: u8, payload: u64, value: Option<u64>) -> ReadFrom {
    match tag {
        FROM_INITIAL => ReadFrom::Initial,
        FROM_VALUE => ReadFrom::Value(payload),
        FROM_OWN_VALUE => ReadFrom::Value(value.unwrap_or(0)),
        FROM_TXN => ReadFrom::Txn(BuilderTxn(payload as u32)),
        FROM_OP => ReadFrom::Op(BuilderTxn((payload >> 32) as u32), payload as u32),
        FROM_VALUE_OR_INITIAL => ReadFrom::ValueOrInitial(payload),
        _ => ReadFrom::Unknown,
    }
}

/// Where each laid-out operation was added, for its [`ReadFrom`].
enum Origin {
    /// The operations kept their order: slots below `at` are the added operations of the
    /// same index, `at..at + inserted` the initial transaction's implicit writes, and slot `s`
    /// beyond them the added operation `s - inserted`.
    Shifted { at: usize, inserted: usize },
    /// The added operation of each slot ([`NO_PENDING`]: a write the builder synthesised).
    Table(Vec<u32>),
}

impl Origin {
    #[inline]
    fn of(&self, slot: usize) -> u32 {
        match self {
            Origin::Shifted { at, inserted } => {
                if slot < *at {
                    slot as u32
                } else if slot < at + inserted {
                    NO_PENDING
                } else {
                    (slot - inserted) as u32
                }
            }
            Origin::Table(table) => table[slot],
        }
    }
}

#[derive(Debug, Clone)]
struct PendingTxn {
    session: SessionId,
    status: TxnStatus,
    external_id: Option<u64>,
    line: u32,
}

/// Builds a [`History`]. Transactions and operations may arrive interleaved; operations of one
/// transaction must arrive in program order, transactions of one session in session order.
///
/// ```
/// use isopredict::history::{HistoryBuilder, ReadFrom};
/// let mut b = HistoryBuilder::new("example");
/// let x = b.key("x");
/// let s = b.session(None);
/// let t1 = b.begin(s, None);
/// b.write(t1, x, Some(1), 1);
/// let t2 = b.begin(s, None);
/// b.read(t2, x, Some(1), ReadFrom::Value(1), 2);
/// let h = b.build().unwrap();
/// assert_eq!(h.txn_count(), 3); // the initial transaction and t1, t2
/// ```
#[derive(Debug)]
pub struct HistoryBuilder {
    source: String,
    key_ids: FxHashMap<Box<str>, KeyId>,
    key_names: Vec<String>,
    /// `key_names[..keys_indexed]` are in `key_ids` (see [`HistoryBuilder::new_key`]).
    keys_indexed: usize,
    session_ids: FxHashMap<u64, SessionId>,
    session_external: Vec<Option<u64>>,
    txns: Vec<PendingTxn>,
    /// The operations as added; their `txn` is the [`BuilderTxn`] until [`Self::build`].
    ops: Vec<Operation>,
    /// Each added operation's [`ReadFrom`] tag (`FROM_*`).
    from_tags: Vec<u8>,
    /// The [`ReadFrom`] payloads: empty until an operation needs one, then one per operation.
    from_payloads: Vec<u64>,
    /// Timestamps and real-time intervals by builder transaction, only as far as the last one
    /// given (most formats give none: the transactions stay small without them).
    timestamps: Vec<Option<Timestamps>>,
    real_time: Vec<Option<RealTime>>,
    initial_value: Option<u64>,
    allow_duplicates: bool,
    orders: Vec<PendingOrder>,
    order_values: Vec<u64>,
    notes: Vec<String>,
    observed: Vec<(ObservedAnomaly, Vec<BuilderTxn>)>,
    /// Added operations marked by [`Self::lock_read`] (builder indexes, in call order).
    locked: Vec<u32>,
    /// Those of them marked by [`Self::lock_read_cut`], whose write need not follow.
    locked_cut: Vec<u32>,
    /// `(earlier, later)` session pairs given to [`Self::session_after`], in call order.
    after: Vec<(SessionId, SessionId)>,
    sessions_are_connections: bool,
}

/// A known version order of one key, as given to [`HistoryBuilder::version_order`] (values
/// in `order_values[start..end]`) or [`HistoryBuilder::write_before`] (two operations).
#[derive(Debug, Clone, Copy)]
enum PendingOrder {
    Values {
        key: KeyId,
        line: u32,
        start: u32,
        end: u32,
    },
    Ops {
        earlier: (BuilderTxn, u32),
        later: (BuilderTxn, u32),
        line: u32,
    },
}

/// No pending operation (a write the builder synthesised).
const NO_PENDING: u32 = u32::MAX;

/// Operations per parallel task of read resolution in [`HistoryBuilder::build`].
const OPS_PER_TASK: usize = 1 << 16;

/// The resolution of a range of operations: each one's writer (`NO_WRITER` for writes and
/// unresolved reads), the unresolved reads, and the first error.
struct Resolved {
    unresolved: Vec<(OpId, Unresolved)>,
    error: Option<InputError>,
}

/// Step 1 of [`HistoryBuilder::build_in_ranges`]: final transaction ids.
struct FinalIds {
    /// Per session, how many non-initial transactions come before its first (one more entry
    /// than sessions: the last is the total).
    session_start: Vec<u32>,
    /// Per transaction in begin order, its final id.
    final_id: Vec<u32>,
    /// Per transaction in begin order, its index in its session.
    index_in_session: Vec<u32>,
}

/// Step 3 of [`HistoryBuilder::build_in_ranges`]: the operations laid out transaction by
/// transaction.
struct Layout {
    ops: Vec<Operation>,
    /// Which added operation each slot holds.
    origin: Origin,
    /// Per final transaction, its first operation (one more entry: the total).
    op_count: Vec<u32>,
    /// Per final transaction, how many of its operations were added (not synthesised).
    explicit_ops: Vec<u32>,
}

/// Step 4 of [`HistoryBuilder::build_in_ranges`]: the indexes reads are resolved with.
struct WriteIndexes {
    /// Per key, the initial transaction's write.
    initial_write: Vec<OpId>,
    /// The last write of each (transaction, key) (only when reads name their writer).
    last_write: FxHashMap<(u32, KeyId), OpId>,
    /// (key, value) → the first write and its transaction.
    by_value: ValueIndex,
    /// (key, value) pairs written more than once (allowed duplicates).
    duplicated: FxHashMap<(KeyId, u64), ()>,
}

impl WriteIndexes {
    /// The one write of `v` to `key`, if there is exactly one.
    fn writer_of_value(&self, key: KeyId, v: u64) -> Option<OpId> {
        if self.duplicated.contains_key(&(key, v)) {
            None
        } else {
            self.by_value.get(key, v).map(|(w, _)| w)
        }
    }

    /// Whether reads of `v` from `key` cannot tell their writer.
    fn ambiguous(&self, key: KeyId, v: u64) -> bool {
        !self.duplicated.is_empty() && self.duplicated.contains_key(&(key, v))
    }
}

/// Step 5 of [`HistoryBuilder::build_in_ranges`]: resolving reads, ranges of operations in
/// parallel (each read's resolution reads only the indexes of steps 1–4), merged in operation
/// order, so the first error and the order of the unresolved reads are those of one pass.
struct ReadResolver<'a> {
    builder: &'a HistoryBuilder,
    layout: &'a Layout,
    final_id: &'a [u32],
    index: &'a WriteIndexes,
}

/// The resolved writer of every read (operation and transaction), and the reads left
/// unresolved.
type ResolvedReads = (Vec<OpId>, Vec<TxnId>, Vec<(OpId, Unresolved)>);

impl ReadResolver<'_> {
    /// Every read resolved, in tasks of `ops_per_task` operations. Each task writes its part
    /// of the history's two vectors in place (no copy of them at the peak of a large build).
    fn resolve_all(&self, ops_per_task: usize) -> Result<ResolvedReads, InputError> {
        let total_ops = self.layout.ops.len();
        let mut read_from = vec![NO_WRITER; total_ops];
        let mut read_from_txn = vec![NO_WRITER; total_ops];
        let parts: Vec<Resolved> = read_from
            .par_chunks_mut(ops_per_task)
            .zip(read_from_txn.par_chunks_mut(ops_per_task))
            .enumerate()
            .map(|(task, (from, from_txn))| self.resolve_range(task * ops_per_task, from, from_txn))
            .collect();
        let mut unresolved = Vec::new();
        for part in parts {
            if let Some(e) = part.error {
                return Err(e);
            }
            unresolved.extend_from_slice(&part.unresolved);
        }
        Ok((read_from, read_from_txn, unresolved))
    }

    /// The reads among operations `first..first + read_from.len()`.
    fn resolve_range(
        &self,
        first: usize,
        read_from: &mut [OpId],
        read_from_txn: &mut [TxnId],
    ) -> Resolved {
        let mut unresolved = Vec::new();
        for i in first..first + read_from.len() {
            if self.layout.ops[i].kind != OpKind::Read {
                continue;
            }
            match self.resolve_read(i) {
                Ok(Ok((w, t))) => {
                    read_from[i - first] = w;
                    read_from_txn[i - first] = t;
                }
                Ok(Err(reason)) => unresolved.push((i as OpId, reason)),
                Err(e) => {
                    return Resolved {
                        unresolved,
                        error: Some(e),
                    }
                }
            }
        }
        Resolved {
            unresolved,
            error: None,
        }
    }

    /// What the read in slot `slot` was given to read from (`Unknown` for none).
    fn read_from_at(&self, slot: usize) -> ReadFrom {
        match self.layout.origin.of(slot) {
            NO_PENDING => ReadFrom::Unknown,
            p => self
                .builder
                .read_from_of(p as usize, self.layout.ops[slot].value),
        }
    }

    /// The writer (operation, transaction) of the read in slot `i`, or why it has none; an
    /// error when the input names a write that cannot be.
    fn resolve_read(&self, i: usize) -> Result<Result<(OpId, TxnId), Unresolved>, InputError> {
        let (ops, op_count) = (&self.layout.ops, &self.layout.op_count);
        let index = self.index;
        let op = ops[i];
        let initial = (index.initial_write[op.key as usize], INITIAL_TXN);
        Ok(match self.read_from_at(i) {
            ReadFrom::Value(v) => match index.by_value.get(op.key, v) {
                _ if index.ambiguous(op.key, v) => Err(Unresolved::Ambiguous),
                Some(w) => Ok(w),
                None if Some(v) == self.builder.initial_value => Ok(initial),
                None => Err(Unresolved::NoSuchWrite),
            },
            ReadFrom::Txn(w) => {
                let writer = self.final_id[w.0 as usize];
                let last = |key: KeyId| {
                    if writer == INITIAL_TXN {
                        (index.initial_write[key as usize], INITIAL_TXN)
                    } else {
                        (index.last_write[&(writer, key)], writer)
                    }
                };
                if writer == op.txn {
                    // A local read: the own write just before it (rare, so a backward scan
                    // of the transaction beats a per-op index).
                    let txn_start = op_count[op.txn as usize] as usize;
                    let own_before = (txn_start..i)
                        .rev()
                        .find(|&o| ops[o].kind == OpKind::Write && ops[o].key == op.key);
                    match own_before {
                        Some(w) => Ok((w as OpId, op.txn)),
                        None => Ok(last(op.key)),
                    }
                } else {
                    Ok(last(op.key))
                }
            }
            ReadFrom::Op(w, n) => Ok(self.named_write(op, self.final_id[w.0 as usize], n)?),
            ReadFrom::Initial => Ok(initial),
            ReadFrom::ValueOrInitial(v) => match index.by_value.get(op.key, v) {
                _ if index.ambiguous(op.key, v) => Err(Unresolved::Ambiguous),
                Some(w) => Ok(w),
                None => Ok(initial),
            },
            ReadFrom::Unknown => Err(Unresolved::NoSuchWrite),
        })
    }

    /// The write a read `op` names as operation `n` of transaction `writer` (final id): an
    /// error unless it is a write of the read's key.
    fn named_write(&self, op: Operation, writer: u32, n: u32) -> Result<(OpId, TxnId), InputError> {
        let writer = writer as usize;
        let explicit = self.layout.explicit_ops[writer];
        let key = &self.builder.key_names[op.key as usize];
        if n >= explicit {
            return Err(self.builder.error(
                op.line,
                format!(
                    "read of key {key} names operation {n} of a transaction that has {explicit} \
                     operations"
                ),
            ));
        }
        let w = self.layout.op_count[writer] + n;
        let target = &self.layout.ops[w as usize];
        if target.kind != OpKind::Write || target.key != op.key {
            return Err(self.builder.error(
                op.line,
                format!(
                    "read of key {key} names operation {n} of its writer, which is not a write \
                     of that key"
                ),
            ));
        }
        Ok((w, writer as TxnId))
    }
}

impl HistoryBuilder {
    /// A builder for the input named `source` (used in error messages).
    pub fn new(source: impl Into<String>) -> Self {
        HistoryBuilder {
            source: source.into(),
            key_ids: FxHashMap::default(),
            key_names: Vec::new(),
            keys_indexed: 0,
            session_ids: FxHashMap::default(),
            session_external: Vec::new(),
            txns: vec![PendingTxn {
                session: NO_SESSION,
                status: TxnStatus::Committed,
                external_id: None,
                line: 0,
            }],
            timestamps: Vec::new(),
            real_time: Vec::new(),
            ops: Vec::new(),
            from_tags: Vec::new(),
            from_payloads: Vec::new(),
            initial_value: None,
            allow_duplicates: false,
            orders: Vec::new(),
            order_values: Vec::new(),
            notes: Vec::new(),
            observed: Vec::new(),
            locked: Vec::new(),
            locked_cut: Vec::new(),
            after: Vec::new(),
            sessions_are_connections: false,
        }
    }

    /// Marks the added operation `op` (its builder index: the value of [`Self::op_count`]
    /// just before it was added) as a *locked read* ([`History::locked_reads`]): the read of
    /// a single-statement read–modify–write (`UPDATE t SET c = c + 1 …`, `INSERT … ON
    /// CONFLICT DO UPDATE`) or of a `SELECT … FOR UPDATE` whose row the transaction later
    /// writes. A real database locks the row before the statement reads it, so no other write
    /// of the key comes between the write it reads and its own transaction's write;
    /// prediction keeps that. [`Self::build`] checks that `op` is a read and that its
    /// transaction writes the same key after it (an [`InputError`] naming the read's line
    /// otherwise; in an aborted transaction, whose statement may have failed after its read,
    /// the mark is dropped instead). Marking an operation twice is the same as once.
    pub fn lock_read(&mut self, op: usize) {
        self.locked.push(op.min(u32::MAX as usize) as u32);
    }

    /// [`Self::lock_read`] for a locked read whose transaction's write of the key a predicted
    /// prefix cut (the statement's read is kept, its write is not): `build` checks only that it
    /// is a read.
    pub(crate) fn lock_read_cut(&mut self, op: usize) {
        let op = op.min(u32::MAX as usize) as u32;
        self.locked.push(op);
        self.locked_cut.push(op);
    }

    /// Declares that session `later` began after session `earlier` ended (a connection opened
    /// after another closed, such as a test's connections after the fixture that loaded its
    /// tables): every transaction of `earlier` comes before every transaction of `later`
    /// ([`History::sessions_after`]), and prediction keeps that order as it keeps session
    /// order. [`Self::build`] rejects sessions never created and pairs that form a cycle.
    pub fn session_after(&mut self, later: SessionId, earlier: SessionId) {
        self.after.push((earlier, later));
    }

    /// Declares that every session is one client connection of a real database (a run on
    /// PostgreSQL, a recording of `isopredict serve`): a session's transactions ran one after
    /// another, each beginning after the one before it committed, so each sees every write
    /// committed before it began — its own session's earlier writes and every write an earlier
    /// transaction of its session saw ([`History::sessions_are_connections`]). Prediction keeps
    /// that at every level.
    pub fn sessions_are_connections(&mut self) {
        self.sessions_are_connections = true;
    }

    /// Declares that the writes of `values` to `key` were installed in this order (each
    /// before the next), as an Elle list-append read `[v1 v2 v3]` shows. Values no write
    /// wrote, or several writes wrote, are skipped. Building fails if the orders given
    /// contradict each other (a cycle among one key's writes), if a value repeats within one
    /// order, or if the initial transaction's write would come after another.
    pub fn version_order(&mut self, key: KeyId, values: &[u64], line: u32) {
        let start = self.order_values.len() as u32;
        self.order_values.extend_from_slice(values);
        self.orders.push(PendingOrder::Values {
            key,
            line,
            start,
            end: self.order_values.len() as u32,
        });
    }

    /// Declares that operation `earlier.1` (0-based, in the order added) of transaction
    /// `earlier.0` was installed before operation `later.1` of `later.0`; both must be writes
    /// of one key (checked when building). For formats that carry the known write order
    /// exactly (the native JSON format).
    pub fn write_before(
        &mut self,
        earlier: (BuilderTxn, u32),
        later: (BuilderTxn, u32),
        line: u32,
    ) {
        self.orders.push(PendingOrder::Ops {
            earlier,
            later,
            line,
        });
    }

    /// Records what the reader left out or assumed ([`History::input_notes`]).
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// Records an anomaly observed in the input itself ([`History::observed_anomalies`]): its
    /// row in the anomaly table (which gives its Elle name and the weakest level forbidding
    /// it), the transactions involved, the input line and a description.
    pub fn observed_anomaly(
        &mut self,
        anomaly: super::AnomalyId,
        txns: &[BuilderTxn],
        line: Option<u32>,
        description: impl Into<String>,
    ) {
        let row = anomaly.row();
        self.observed.push((
            ObservedAnomaly {
                anomaly,
                name: row.elle_name().unwrap_or(row.key),
                weakest_level_forbidding: row.weakest_level_forbidding,
                txns: Vec::new(),
                line,
                description: description.into(),
            },
            txns.to_vec(),
        ));
    }

    /// The source name given to [`HistoryBuilder::new`].
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Declares the value the initial transaction writes to every key (Plume's 0): a read of
    /// that value resolves to the initial write, and any other write of it is an input error.
    pub fn initial_value(&mut self, value: u64) -> &mut Self {
        self.initial_value = Some(value);
        self
    }

    /// Accept several writes of one value to one key; reads of such a value are left
    /// unresolved as [`Unresolved::Ambiguous`] instead of failing the build.
    pub fn allow_duplicate_writes(&mut self, allow: bool) -> &mut Self {
        self.allow_duplicates = allow;
        self
    }

    /// Interns a key name.
    pub fn key(&mut self, name: &str) -> KeyId {
        self.index_new_keys();
        if let Some(&id) = self.key_ids.get(name) {
            return id;
        }
        let id = self.key_names.len() as KeyId;
        self.key_ids.insert(name.into(), id);
        self.key_names.push(name.to_string());
        self.keys_indexed = self.key_names.len();
        id
    }

    /// Adds a key the caller has not interned before (a reader that keeps its own table of the
    /// keys it has seen, as the Plume reader does for its integer keys), without looking the
    /// name up. Naming a key twice this way gives two keys of one name; [`Self::key`] then
    /// finds the first.
    pub fn new_key(&mut self, name: String) -> KeyId {
        let id = self.key_names.len() as KeyId;
        self.key_names.push(name);
        id
    }

    /// Puts the keys added by [`Self::new_key`] into the name index that [`Self::key`] uses.
    fn index_new_keys(&mut self) {
        while self.keys_indexed < self.key_names.len() {
            let id = self.keys_indexed as KeyId;
            let name = self.key_names[self.keys_indexed].as_str();
            if !self.key_ids.contains_key(name) {
                self.key_ids.insert(name.into(), id);
            }
            self.keys_indexed += 1;
        }
    }

    /// The name of an interned key.
    pub fn key_name(&self, key: KeyId) -> &str {
        &self.key_names[key as usize]
    }

    /// Number of keys interned so far.
    pub fn key_count(&self) -> usize {
        self.key_names.len()
    }

    /// The session with this external id (created on first use), or a new anonymous session
    /// for `None`. Sessions are numbered in order of creation.
    pub fn session(&mut self, external_id: Option<u64>) -> SessionId {
        if let Some(e) = external_id {
            if let Some(&s) = self.session_ids.get(&e) {
                return s;
            }
        }
        let s = self.session_external.len() as SessionId;
        self.session_external.push(external_id);
        if let Some(e) = external_id {
            self.session_ids.insert(e, s);
        }
        s
    }

    /// Number of sessions created so far.
    pub fn session_count(&self) -> usize {
        self.session_external.len()
    }

    /// Starts a new transaction at the end of `session` (committed unless aborted later).
    pub fn begin(&mut self, session: SessionId, external_id: Option<u64>) -> BuilderTxn {
        self.begin_at(session, external_id, 0)
    }

    /// Like [`HistoryBuilder::begin`], remembering the input line that started it.
    pub fn begin_at(
        &mut self,
        session: SessionId,
        external_id: Option<u64>,
        line: u32,
    ) -> BuilderTxn {
        assert!(
            (session as usize) < self.session_external.len(),
            "begin: session {session} was never created"
        );
        let id = BuilderTxn(self.txns.len() as u32);
        self.txns.push(PendingTxn {
            session,
            status: TxnStatus::Committed,
            external_id,
            line,
        });
        id
    }

    /// Number of transactions begun so far, the initial one included.
    pub fn txn_count(&self) -> usize {
        self.txns.len()
    }

    /// Marks a transaction aborted.
    pub fn abort(&mut self, txn: BuilderTxn) {
        self.txns[txn.0 as usize].status = TxnStatus::Aborted;
    }

    /// Marks a transaction committed (the default).
    pub fn commit(&mut self, txn: BuilderTxn) {
        self.txns[txn.0 as usize].status = TxnStatus::Committed;
    }

    /// Whether a transaction is currently marked aborted.
    pub fn is_aborted(&self, txn: BuilderTxn) -> bool {
        self.txns[txn.0 as usize].status == TxnStatus::Aborted
    }

    /// Records start and commit timestamps of a transaction.
    pub fn set_timestamps(&mut self, txn: BuilderTxn, timestamps: Timestamps) {
        let t = txn.0 as usize;
        assert!(t < self.txns.len(), "set_timestamps: no transaction {t}");
        if self.timestamps.len() <= t {
            self.timestamps.resize(t + 1, None);
        }
        self.timestamps[t] = Some(timestamps);
    }

    /// Records the client's real-time interval of a transaction ([`RealTime`]).
    pub fn set_real_time(&mut self, txn: BuilderTxn, real_time: RealTime) {
        let t = txn.0 as usize;
        assert!(t < self.txns.len(), "set_real_time: no transaction {t}");
        if self.real_time.len() <= t {
            self.real_time.resize(t + 1, None);
        }
        self.real_time[t] = Some(real_time);
    }

    /// Reserves room for `additional` more operations (exactly: a caller that knows the count,
    /// such as the store's recording, saves the vectors' doubling as they grow).
    pub fn reserve_ops(&mut self, additional: usize) {
        self.ops.reserve_exact(additional);
        self.from_tags.reserve_exact(additional);
    }

    /// Appends a write to a transaction ([`BuilderTxn::INITIAL`] for an explicit initial write).
    pub fn write(&mut self, txn: BuilderTxn, key: KeyId, value: Option<u64>, line: u32) {
        self.push_op(txn, key, OpKind::Write, value, ReadFrom::Unknown, line);
    }

    /// Appends a read to a transaction.
    pub fn read(
        &mut self,
        txn: BuilderTxn,
        key: KeyId,
        value: Option<u64>,
        from: ReadFrom,
        line: u32,
    ) {
        self.push_op(txn, key, OpKind::Read, value, from, line);
    }

    #[inline]
    fn push_op(
        &mut self,
        txn: BuilderTxn,
        key: KeyId,
        kind: OpKind,
        value: Option<u64>,
        from: ReadFrom,
        line: u32,
    ) {
        let (tag, payload) = encode_from(from, value);
        let needs_payload = matches!(tag, FROM_VALUE | FROM_TXN | FROM_OP | FROM_VALUE_OR_INITIAL);
        if needs_payload || !self.from_payloads.is_empty() {
            // The first payload fills in the operations before it (none needed one), and
            // takes the room reserved for the operations.
            if self.from_payloads.is_empty() {
                self.from_payloads.reserve_exact(self.ops.capacity());
            }
            self.from_payloads.resize(self.ops.len(), 0);
            self.from_payloads.push(payload);
        }
        self.from_tags.push(tag);
        self.ops.push(Operation {
            kind,
            key,
            txn: txn.0,
            value,
            line,
        });
    }

    /// The [`ReadFrom`] of added operation `p`.
    #[inline]
    fn read_from_of(&self, p: usize, value: Option<u64>) -> ReadFrom {
        let payload = self.from_payloads.get(p).copied().unwrap_or(0);
        decode_from(self.from_tags[p], payload, value)
    }

    /// Number of operations added so far.
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }

    fn error(&self, line: u32, message: impl Into<String>) -> InputError {
        InputError::new(self.source.clone(), line, message)
    }

    /// Validates, resolves every read and lays the history out.
    ///
    /// Errors: two writes of one value to one key (unless allowed), a write of the declared
    /// initial value, timestamps whose start is after their commit.
    pub fn build(self) -> Result<History, InputError> {
        self.build_in_ranges(OPS_PER_TASK)
    }

    /// [`Self::build`] resolving reads in tasks of `ops_per_task` operations (the history, or
    /// the error, does not depend on it).
    pub(crate) fn build_in_ranges(mut self, ops_per_task: usize) -> Result<History, InputError> {
        let ops_per_task = ops_per_task.max(1);
        let txn_total = self.txns.len();
        let added_ops = self.ops.len();
        let sessions_after = self.resolve_sessions_after()?;
        self.check_size_and_timestamps()?;
        // 1. Final transaction ids.
        let ids = self.final_ids();
        // 2. Writes implied by reads that name their writer; the initial state's keys.
        //    Only formats whose reads name their writer transaction need this (and the
        //    per-(transaction, key) index of step 4): most do not, and skip both.
        let txn_reads = self.from_tags.contains(&FROM_TXN);
        let (implied, implicit_initial) = self.implied_writes(&ids.final_id, txn_reads);
        // 3. Operations laid out transaction by transaction.
        let layout = self.lay_out(&ids.final_id, &implied, &implicit_initial);
        // 4. Indexes for resolution.
        let index = self.write_indexes(&layout.ops, txn_reads)?;
        // 5. Resolve reads.
        let resolver = ReadResolver {
            builder: &self,
            layout: &layout,
            final_id: &ids.final_id,
            index: &index,
        };
        let (read_from, read_from_txn, unresolved) = resolver.resolve_all(ops_per_task)?;
        // 5b. Known write orders.
        let write_order = self.resolve_orders(
            &layout.ops,
            &layout.op_count,
            &layout.explicit_ops,
            &ids.final_id,
            |key, v| index.writer_of_value(key, v),
        )?;
        // 5c. Locked reads, by their laid-out operation.
        let locked_reads = self.resolve_locked_reads(
            &layout.ops,
            &layout.op_count,
            &layout.origin,
            added_ops,
            &ids.final_id,
        )?;

        // The resolution indexes are done with; free them before building the others.
        let Layout { ops, op_count, .. } = layout;
        self.from_tags = Vec::new();
        self.from_payloads = Vec::new();
        drop(index);

        // 6. Sessions, transactions, timestamps.
        let (sessions, txns) = self.sessions_and_txns(&ids, &op_count);
        let (timestamps, real_time) = self.times_by_final_id(&ids.final_id);
        // Observed anomalies name final transaction ids.
        let observed = std::mem::take(&mut self.observed)
            .into_iter()
            .map(|(mut a, txns)| {
                a.txns = txns.iter().map(|t| ids.final_id[t.0 as usize]).collect();
                a
            })
            .collect();

        // 7. The keys each transaction writes (rc and ra read it); the other indexes are built
        //    on first use.
        let txn_keys_written = Csr::from_pairs(txn_total, || {
            ops.iter()
                .filter(|op| op.kind == OpKind::Write)
                .map(|op| (op.txn, op.key))
        });

        Ok(History {
            source: self.source,
            key_names: self.key_names,
            sessions,
            txns,
            ops: std::sync::Arc::new(ops),
            read_from: std::sync::Arc::new(read_from),
            read_from_txn: std::sync::Arc::new(read_from_txn),
            unresolved,
            timestamps,
            real_time,
            implicit_initial_writes: implicit_initial.len() as u32,
            write_order,
            notes: self.notes,
            observed,
            statements: None,
            txn_keys_written,
            locked_reads,
            sessions_after,
            sessions_are_connections: self.sessions_are_connections,
            key_writers: LazyIndex::default(),
            key_readers: LazyIndex::default(),
            txn_keys_read: LazyIndex::default(),
        })
    }

    /// Refuses a history too large for 32-bit ids, and a transaction that starts after it
    /// commits.
    fn check_size_and_timestamps(&self) -> Result<(), InputError> {
        if self.txns.len() > (u32::MAX - 1) as usize || self.ops.len() > (u32::MAX - 1) as usize / 2
        {
            return Err(self.error(
                0,
                "history too large: more than 2^31 operations or transactions",
            ));
        }
        for (t, ts) in self.timestamps.iter().enumerate() {
            if let Some(ts) = ts {
                if ts.start > ts.commit {
                    return Err(self.error(
                        self.txns[t].line,
                        format!(
                            "transaction starts at {} after it commits at {}",
                            ts.start, ts.commit
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Step 1: final transaction ids — the initial one, then session by session, begin order.
    fn final_ids(&self) -> FinalIds {
        let txn_total = self.txns.len();
        let session_total = self.session_external.len();
        let mut session_start = vec![0u32; session_total + 1];
        for t in &self.txns[1..] {
            session_start[t.session as usize + 1] += 1;
        }
        for s in 0..session_total {
            session_start[s + 1] += session_start[s];
        }
        let mut final_id = vec![0u32; txn_total];
        let mut index_in_session = vec![0u32; txn_total];
        let mut cursor = session_start.clone();
        for (b, t) in self.txns.iter().enumerate().skip(1) {
            let s = t.session as usize;
            index_in_session[b] = cursor[s] - session_start[s];
            final_id[b] = 1 + cursor[s];
            cursor[s] += 1;
        }
        FinalIds {
            session_start,
            final_id,
            index_in_session,
        }
    }

    /// Step 2: the writes implied by `ReadFrom::Txn` naming a transaction that never writes
    /// the key (final transaction, key, line), when `txn_reads`; and the keys the initial
    /// transaction must write implicitly.
    fn implied_writes(
        &self,
        final_id: &[u32],
        txn_reads: bool,
    ) -> (Vec<(u32, KeyId, u32)>, Vec<KeyId>) {
        let mut writes_key: FxHashMap<(u32, KeyId), ()> = FxHashMap::default();
        for op in self.ops.iter().filter(|_| txn_reads) {
            if op.kind == OpKind::Write {
                writes_key.insert((final_id[op.txn as usize], op.key), ());
            }
        }
        let mut implied: Vec<(u32, KeyId, u32)> = Vec::new();
        for (p, op) in self.ops.iter().enumerate().filter(|_| txn_reads) {
            if let (OpKind::Read, ReadFrom::Txn(w)) = (op.kind, self.read_from_of(p, op.value)) {
                let writer = final_id[w.0 as usize];
                if writer != INITIAL_TXN && writes_key.insert((writer, op.key), ()).is_none() {
                    implied.push((writer, op.key, 0));
                }
            }
        }
        let mut initially_written = vec![false; self.key_names.len()];
        for op in &self.ops {
            if op.txn == 0 && op.kind == OpKind::Write {
                initially_written[op.key as usize] = true;
            }
        }
        let implicit_initial: Vec<KeyId> = (0..self.key_names.len() as KeyId)
            .filter(|&k| !initially_written[k as usize])
            .collect();
        (implied, implicit_initial)
    }

    /// Step 3: lays operations out transaction by transaction (counting sort, stable). When
    /// the operations were added in that order already (a file written transaction by
    /// transaction, session by session), they stay where they are: only their transaction ids
    /// change and the implicit initial writes are inserted. Takes the added operations.
    fn lay_out(
        &mut self,
        final_id: &[u32],
        implied: &[(u32, KeyId, u32)],
        implicit_initial: &[KeyId],
    ) -> Layout {
        let txn_total = self.txns.len();
        let mut explicit_ops = vec![0u32; txn_total];
        let mut in_order = true;
        let mut previous = 0u32;
        for op in &self.ops {
            let t = final_id[op.txn as usize];
            explicit_ops[t as usize] += 1;
            in_order &= t >= previous;
            previous = t;
        }
        let implicit_total = implicit_initial.len();
        let mut op_count = vec![0u32; txn_total + 1];
        op_count[1..].copy_from_slice(&explicit_ops);
        for &(t, _, _) in implied {
            op_count[t as usize + 1] += 1;
        }
        op_count[1] += implicit_total as u32;
        for t in 0..txn_total {
            op_count[t + 1] += op_count[t];
        }
        let initial_value = self.initial_value;
        let initial_write = |key| Operation {
            kind: OpKind::Write,
            key,
            txn: INITIAL_TXN,
            value: initial_value,
            line: 0,
        };
        let (ops, origin) = if in_order && implied.is_empty() {
            let mut ops = std::mem::take(&mut self.ops);
            ops.par_iter_mut()
                .for_each(|op| op.txn = final_id[op.txn as usize]);
            let at = explicit_ops[0] as usize;
            ops.reserve_exact(implicit_total);
            ops.splice(
                at..at,
                implicit_initial.iter().map(|&key| initial_write(key)),
            );
            let origin = Origin::Shifted {
                at,
                inserted: implicit_total,
            };
            (ops, origin)
        } else {
            let total_ops = op_count[txn_total] as usize;
            let placeholder = Operation {
                kind: OpKind::Write,
                key: 0,
                txn: 0,
                value: None,
                line: 0,
            };
            let mut ops = vec![placeholder; total_ops];
            let mut table = vec![NO_PENDING; total_ops];
            let mut next: Vec<u32> = op_count[..txn_total].to_vec();
            let mut place = |op: Operation, added: u32| {
                let slot = next[op.txn as usize] as usize;
                next[op.txn as usize] += 1;
                ops[slot] = op;
                table[slot] = added;
            };
            for (p, op) in std::mem::take(&mut self.ops).iter().enumerate() {
                let txn = final_id[op.txn as usize];
                place(Operation { txn, ..*op }, p as u32);
            }
            // Then the synthesised writes, after the added ones of their transaction.
            for &(txn, key, line) in implied {
                let write = Operation {
                    kind: OpKind::Write,
                    key,
                    txn,
                    value: None,
                    line,
                };
                place(write, NO_PENDING);
            }
            for &key in implicit_initial {
                place(initial_write(key), NO_PENDING);
            }
            (ops, Origin::Table(table))
        };
        Layout {
            ops,
            origin,
            op_count,
            explicit_ops,
        }
    }

    /// Step 4: the indexes reads are resolved with — the last write of each (txn, key) (the
    /// initial transaction's in a vector by key; the others only when reads name their writer
    /// transaction) and each (key, value) — refusing a write of the initial value and, unless
    /// allowed, two writes of one value to one key.
    fn write_indexes(
        &self,
        ops: &[Operation],
        txn_reads: bool,
    ) -> Result<WriteIndexes, InputError> {
        let mut initial_write = vec![NO_WRITER; self.key_names.len()];
        let mut last_write: FxHashMap<(u32, KeyId), OpId> = FxHashMap::default();
        // (key, value) → the write and its transaction, so that resolving a read touches no
        // other operation.
        let mut by_value = ValueIndex::for_writes(
            self.key_names.len(),
            ops.iter()
                .filter(|o| o.kind == OpKind::Write)
                .filter_map(|o| Some((o.key, o.value?))),
        );
        let mut duplicated: FxHashMap<(KeyId, u64), ()> = FxHashMap::default();
        for (i, op) in ops.iter().enumerate() {
            if op.kind != OpKind::Write {
                continue;
            }
            if op.txn == INITIAL_TXN {
                initial_write[op.key as usize] = i as OpId;
            } else if txn_reads {
                last_write.insert((op.txn, op.key), i as OpId);
            }
            let Some(v) = op.value else { continue };
            if op.txn != INITIAL_TXN && Some(v) == self.initial_value {
                return Err(self.error(
                    op.line,
                    format!(
                        "write of {v} to key {}: {v} is the initial value of every key in this format",
                        self.key_names[op.key as usize]
                    ),
                ));
            }
            if let Some((first, _)) = by_value.insert_first(op.key, v, (i as OpId, op.txn)) {
                if !self.allow_duplicates {
                    let first_line = ops[first as usize].line;
                    return Err(self.error(
                        op.line,
                        format!(
                            "duplicate write of value {v} to key {} (first written{}); \
                             reads could not tell the writes apart",
                            self.key_names[op.key as usize],
                            if first_line == 0 {
                                String::new()
                            } else {
                                format!(" at line {first_line}")
                            }
                        ),
                    ));
                }
                duplicated.insert((op.key, v), ());
            }
        }
        Ok(WriteIndexes {
            initial_write,
            last_write,
            by_value,
            duplicated,
        })
    }

    /// Step 6: the sessions and the transactions under their final ids.
    fn sessions_and_txns(
        &self,
        ids: &FinalIds,
        op_count: &[u32],
    ) -> (Vec<Session>, Vec<Transaction>) {
        let sessions: Vec<Session> = (0..self.session_external.len())
            .map(|s| Session {
                external_id: self.session_external[s],
                txns_start: 1 + ids.session_start[s],
                txns_end: 1 + ids.session_start[s + 1],
            })
            .collect();
        let mut txns = vec![
            Transaction {
                session: NO_SESSION,
                index_in_session: 0,
                status: TxnStatus::Committed,
                external_id: None,
                ops_start: 0,
                ops_end: 0,
            };
            self.txns.len()
        ];
        for (b, t) in self.txns.iter().enumerate() {
            let f = ids.final_id[b] as usize;
            txns[f] = Transaction {
                session: t.session,
                index_in_session: ids.index_in_session[b],
                status: t.status,
                external_id: t.external_id,
                ops_start: op_count[f],
                ops_end: op_count[f + 1],
            };
        }
        (sessions, txns)
    }

    /// Step 6: the database timestamps and client real-time intervals given, by final id
    /// (`None`: none given).
    #[allow(clippy::type_complexity)]
    fn times_by_final_id(
        &self,
        final_id: &[u32],
    ) -> (
        Option<Vec<Option<Timestamps>>>,
        Option<Vec<Option<RealTime>>>,
    ) {
        let txn_total = self.txns.len();
        let mut timestamps: Option<Vec<Option<Timestamps>>> = None;
        let mut real_time: Option<Vec<Option<RealTime>>> = None;
        for (b, &f) in final_id.iter().enumerate() {
            let f = f as usize;
            if let Some(&Some(ts)) = self.timestamps.get(b) {
                timestamps.get_or_insert_with(|| vec![None; txn_total])[f] = Some(ts);
            }
            if let Some(&Some(rt)) = self.real_time.get(b) {
                real_time.get_or_insert_with(|| vec![None; txn_total])[f] = Some(rt);
            }
        }
        (timestamps, real_time)
    }

    /// The laid-out operations of the reads given to [`Self::lock_read`], sorted and without
    /// repeats, each checked to be a read whose transaction writes its key after it.
    fn resolve_locked_reads(
        &self,
        ops: &[Operation],
        op_count: &[u32],
        origin: &Origin,
        added_ops: usize,
        final_id: &[u32],
    ) -> Result<Vec<OpId>, InputError> {
        if self.locked.is_empty() {
            return Ok(Vec::new());
        }
        let mut wanted: Vec<u32> = self.locked.clone();
        wanted.sort_unstable();
        wanted.dedup();
        if let Some(&p) = wanted.iter().find(|&&p| p as usize >= added_ops) {
            return Err(self.error(
                0,
                format!("a locked read names operation {p}, but only {added_ops} were added"),
            ));
        }
        // Added operation → slot: direct when the operations kept their order, else one pass
        // over the slots looking each one's origin up among the (few) locked ones.
        let mut slots: Vec<OpId> = match origin {
            Origin::Shifted { at, inserted } => wanted
                .iter()
                .map(|&p| {
                    if (p as usize) < *at {
                        p
                    } else {
                        p + *inserted as u32
                    }
                })
                .collect(),
            Origin::Table(table) => {
                let mut slots = vec![NO_WRITER; wanted.len()];
                for (slot, &p) in table.iter().enumerate() {
                    if let Ok(i) = wanted.binary_search(&p) {
                        slots[i] = slot as OpId;
                    }
                }
                slots
            }
        };
        slots.sort_unstable();
        // An aborted transaction may lack the write (the statement failed after its read):
        // its locks are dropped, as prediction ignores it anyway.
        let mut aborted = vec![false; op_count.len().saturating_sub(1)];
        for (b, t) in self.txns.iter().enumerate() {
            aborted[final_id[b] as usize] = t.status == TxnStatus::Aborted;
        }
        let mut dropped = false;
        // Each transaction holding locked reads is walked backwards once, stamping the keys
        // it writes from there on.
        let mut stamp = vec![u32::MAX; self.key_names.len()];
        let mut next = slots.len();
        while next > 0 {
            let txn = ops[slots[next - 1] as usize].txn;
            let start = op_count[txn as usize] as usize;
            let mut o = op_count[txn as usize + 1] as usize;
            while o > start && next > 0 && ops[slots[next - 1] as usize].txn == txn {
                o -= 1;
                let op = &ops[o];
                if slots[next - 1] as usize == o {
                    next -= 1;
                    if op.kind != OpKind::Read {
                        return Err(self.error(
                            op.line,
                            format!(
                                "a locked read must be a read; this is a write of key {}",
                                self.key_names[op.key as usize]
                            ),
                        ));
                    }
                    if stamp[op.key as usize] != txn && aborted[txn as usize] {
                        slots[next] = NO_WRITER;
                        dropped = true;
                    } else if stamp[op.key as usize] != txn
                        && !self.locked_cut.contains(&origin.of(o))
                    {
                        return Err(self.error(
                            op.line,
                            format!(
                                "a locked read of key {} whose transaction does not write the \
                                 key after it (a row lock is taken to write the row)",
                                self.key_names[op.key as usize]
                            ),
                        ));
                    }
                } else if op.kind == OpKind::Write {
                    stamp[op.key as usize] = txn;
                }
            }
        }
        if dropped {
            slots.retain(|&s| s != NO_WRITER);
        }
        Ok(slots)
    }

    /// The `(earlier, later)` pairs given to [`Self::session_after`], sorted and without
    /// repeats, checked to name existing sessions and to form no cycle.
    fn resolve_sessions_after(&self) -> Result<Vec<(SessionId, SessionId)>, InputError> {
        if self.after.is_empty() {
            return Ok(Vec::new());
        }
        let n = self.session_external.len();
        let mut pairs = self.after.clone();
        pairs.sort_unstable();
        pairs.dedup();
        for &(earlier, later) in &pairs {
            for s in [earlier, later] {
                if s as usize >= n {
                    return Err(self.error(
                        0,
                        format!(
                            "a session is ordered after another, but session {} does not \
                             exist (there are {n})",
                            u64::from(s) + 1
                        ),
                    ));
                }
            }
            if earlier == later {
                return Err(self.error(
                    0,
                    format!("session {} is ordered after itself", earlier + 1),
                ));
            }
        }
        // Kahn's algorithm over the sessions: what remains is on or behind a cycle.
        let mut in_degree = vec![0u32; n];
        let mut first_out = vec![0u32; n + 1];
        for &(earlier, later) in &pairs {
            first_out[earlier as usize + 1] += 1;
            in_degree[later as usize] += 1;
        }
        for s in 0..n {
            first_out[s + 1] += first_out[s];
        }
        let mut queue: Vec<SessionId> = (0..n as SessionId)
            .filter(|&s| in_degree[s as usize] == 0)
            .collect();
        let mut head = 0;
        while head < queue.len() {
            let s = queue[head] as usize;
            head += 1;
            for &(_, later) in &pairs[first_out[s] as usize..first_out[s + 1] as usize] {
                in_degree[later as usize] -= 1;
                if in_degree[later as usize] == 0 {
                    queue.push(later);
                }
            }
        }
        if queue.len() < n {
            let on_cycle: Vec<String> = (0..n)
                .filter(|&s| in_degree[s] > 0)
                .take(8)
                .map(|s| (s + 1).to_string())
                .collect();
            return Err(self.error(
                0,
                format!(
                    "sessions ordered after one another in a cycle (sessions {} among them): \
                     a connection cannot open after one that opened after it",
                    on_cycle.join(", ")
                ),
            ));
        }
        Ok(pairs)
    }

    /// Resolves the known version orders to pairs of write operations `(earlier, later)`,
    /// sorted and deduplicated, and checks that they are consistent: one key's pairs form no
    /// cycle, and no write of the initial transaction comes after another write.
    fn resolve_orders(
        &self,
        ops: &[Operation],
        op_count: &[u32],
        explicit_ops: &[u32],
        final_id: &[u32],
        by_value: impl Fn(KeyId, u64) -> Option<OpId>,
    ) -> Result<Vec<(OpId, OpId)>, InputError> {
        if self.orders.is_empty() {
            return Ok(Vec::new());
        }
        // (earlier, later, line)
        let mut pairs: Vec<(OpId, OpId, u32)> = Vec::new();
        let mut seen: rustc_hash::FxHashSet<u64> = rustc_hash::FxHashSet::default();
        for order in &self.orders {
            match *order {
                PendingOrder::Values {
                    key,
                    line,
                    start,
                    end,
                } => {
                    seen.clear();
                    let mut previous: Option<OpId> = None;
                    for &v in &self.order_values[start as usize..end as usize] {
                        if !seen.insert(v) {
                            return Err(self.error(
                                line,
                                format!(
                                    "value {v} appears twice in one version order of key {}",
                                    self.key_names[key as usize]
                                ),
                            ));
                        }
                        let Some(w) = by_value(key, v) else { continue };
                        if let Some(p) = previous {
                            pairs.push((p, w, line));
                        }
                        previous = Some(w);
                    }
                }
                PendingOrder::Ops {
                    earlier,
                    later,
                    line,
                } => {
                    let locate = |(t, i): (BuilderTxn, u32)| -> Result<OpId, InputError> {
                        let f = final_id[t.0 as usize] as usize;
                        if i >= explicit_ops[f] {
                            return Err(self.error(
                                line,
                                format!(
                                    "a write order names operation {i} of a transaction that \
                                     has {} operations",
                                    explicit_ops[f]
                                ),
                            ));
                        }
                        Ok(op_count[f] + i)
                    };
                    let (a, b) = (locate(earlier)?, locate(later)?);
                    let (oa, ob) = (&ops[a as usize], &ops[b as usize]);
                    if oa.kind != OpKind::Write || ob.kind != OpKind::Write || oa.key != ob.key {
                        return Err(
                            self.error(line, "a write order must name two writes of one key")
                        );
                    }
                    pairs.push((a, b, line));
                }
            }
        }
        for &(a, b, line) in &pairs {
            if a == b {
                return Err(self.error(line, "a write order puts a write before itself"));
            }
            if ops[b as usize].txn == INITIAL_TXN {
                return Err(self.error(
                    line,
                    format!(
                        "a version order of key {} puts the initial write after another write",
                        self.key_names[ops[b as usize].key as usize]
                    ),
                ));
            }
        }
        // Writes of the initial transaction come first anyway.
        pairs.retain(|&(a, _, _)| ops[a as usize].txn != INITIAL_TXN);
        pairs.sort_unstable_by_key(|&(a, b, _)| (a, b));
        pairs.dedup_by_key(|&mut (a, b, _)| (a, b));

        // Kahn's algorithm over the writes named: a cycle means contradicting orders. Nodes
        // are the writes named, numbered densely; their successors in a flat (CSR) array.
        let mut index = vec![u32::MAX; ops.len()];
        let mut n = 0usize;
        for &(a, b, _) in &pairs {
            for w in [a, b] {
                if index[w as usize] == u32::MAX {
                    index[w as usize] = n as u32;
                    n += 1;
                }
            }
        }
        let mut in_degree = vec![0u32; n];
        let mut first_out = vec![0u32; n + 1];
        for &(a, b, _) in &pairs {
            first_out[index[a as usize] as usize + 1] += 1;
            in_degree[index[b as usize] as usize] += 1;
        }
        for v in 0..n {
            first_out[v + 1] += first_out[v];
        }
        // Pairs are sorted by their earlier write, so successors fill in pair order.
        let mut out = vec![0u32; pairs.len()];
        let mut cursor = first_out.clone();
        for &(a, b, _) in &pairs {
            let v = index[a as usize] as usize;
            out[cursor[v] as usize] = index[b as usize];
            cursor[v] += 1;
        }
        let mut queue: Vec<u32> = (0..n as u32)
            .filter(|&v| in_degree[v as usize] == 0)
            .collect();
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head] as usize;
            head += 1;
            for &w in &out[first_out[v] as usize..first_out[v + 1] as usize] {
                in_degree[w as usize] -= 1;
                if in_degree[w as usize] == 0 {
                    queue.push(w);
                }
            }
        }
        if queue.len() < n {
            let &(a, _, line) = pairs
                .iter()
                .find(|&&(a, _, _)| in_degree[index[a as usize] as usize] > 0)
                .unwrap_or(&pairs[0]);
            return Err(self.error(
                line,
                format!(
                    "the version orders of key {} contradict each other (its writes would form \
                     a cycle)",
                    self.key_names[ops[a as usize].key as usize]
                ),
            ));
        }
        Ok(pairs.into_iter().map(|(a, b, _)| (a, b)).collect())
    }
}
