//! The data model: a history of transactions over a key–value store.
//!
//! Semantics follow Biswas & Enea (OOPSLA'19, §2) as fixed in DESIGN.md "Semantics we commit
//! to": sessions of transactions, operations in program order, the resolved write–read
//! relation, and an initial transaction (id 0) that writes every key and is session-ordered
//! before every other transaction.
//!
//! Layout: every id is a dense `u32`. Transactions are numbered session by session (the
//! initial transaction is 0, then session 0's transactions in session order, then session 1's,
//! …), so the transactions of a session form a contiguous range and session order is a
//! comparison of ids. Operations are numbered transaction by transaction in program order, so a
//! transaction's operations are a contiguous range too. Per-key writer and reader lists and
//! per-transaction key lists are flat CSR arrays built once by [`HistoryBuilder::build`].
//!
//! [`timestamped`] is the other shape of a history: committed transactions with the start and
//! commit timestamps their database assigned (the input of the timestamp checkers).

pub mod anomalies;
mod builder;
mod known_order;
mod level;
mod observed;
mod real_time;
mod statements;
mod stats;
pub mod timestamped;
mod value_index;

pub use anomalies::{AnomalyId, AnomalyRow, ANOMALIES};
pub use builder::{BuilderTxn, HistoryBuilder, ReadFrom};
pub use level::Level;
pub use observed::ObservedAnomaly;
pub use statements::{SqlStatement, StatementTable, NO_STATEMENT};
pub use stats::Stats;

use std::ops::Range;
use std::sync::Arc;

/// Dense id of a transaction; [`INITIAL_TXN`] is the initial transaction.
pub type TxnId = u32;
/// Dense id of a session (0-based; the initial transaction belongs to no session).
pub type SessionId = u32;
/// Dense id of an operation.
pub type OpId = u32;
/// Dense id of an interned key.
pub type KeyId = u32;

/// The initial transaction: writes every key, comes before every other transaction.
pub const INITIAL_TXN: TxnId = 0;
/// The session id stored for the initial transaction, which belongs to no session.
pub const NO_SESSION: SessionId = u32::MAX;
/// Sentinel in [`History::read_from_raw`] for a read without a resolved writer.
pub const NO_WRITER: OpId = u32::MAX;

/// Whether an operation reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// Returns the value of some write to the key.
    Read,
    /// Installs a new value of the key.
    Write,
}

/// One read or write, in its transaction's program order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// Read or write.
    pub kind: OpKind,
    /// The interned key.
    pub key: KeyId,
    /// The transaction the operation belongs to.
    pub txn: TxnId,
    /// The value written or read, when the input format carries values.
    pub value: Option<u64>,
    /// The 1-based line of the input it came from; 0 when synthesised (implicit initial
    /// writes, writes implied by an IsoPredict `From(t)`) or built in memory.
    pub line: u32,
}

/// Whether a transaction committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TxnStatus {
    /// Committed: takes part in every order.
    Committed,
    /// Aborted: kept so that reads of its writes can be reported, but in no order.
    Aborted,
}

/// Optional start and commit timestamps of a transaction (for timestamp-based checkers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timestamps {
    /// When the transaction started (took its snapshot).
    pub start: u64,
    /// When the transaction committed.
    pub commit: u64,
}

/// When a client invoked a transaction and when it saw the transaction complete, as positions
/// in the client's history (Jepsen/Elle: the indices of the `:invoke` and the completion
/// operations). Real time, not the database's clock: a transaction may have taken effect
/// anywhere inside its interval, so the only fact it gives is "a transaction that completed
/// before another was invoked took effect first" (the real-time order of strict
/// serializability). Never a snapshot or commit timestamp ([`Timestamps`] are those).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RealTime {
    /// When the client invoked the transaction.
    pub invoked: u64,
    /// When the client saw it complete.
    pub completed: u64,
}

/// A transaction: a contiguous range of operations in one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// Its session ([`NO_SESSION`] for the initial transaction).
    pub session: SessionId,
    /// 0-based position among its session's transactions (aborted ones included).
    pub index_in_session: u32,
    /// Committed or aborted.
    pub status: TxnStatus,
    /// The transaction's id in the input (Plume's txn id, IsoPredict's `i` of `Txn(s, i)`…),
    /// when the format has one.
    pub external_id: Option<u64>,
    ops_start: OpId,
    ops_end: OpId,
}

impl Transaction {
    /// Its operations, in program order.
    pub fn ops(&self) -> Range<OpId> {
        self.ops_start..self.ops_end
    }

    /// Whether it committed.
    pub fn is_committed(&self) -> bool {
        self.status == TxnStatus::Committed
    }
}

/// A session: a contiguous range of transactions in session order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The session's id in the input, when the format has one.
    pub external_id: Option<u64>,
    txns_start: TxnId,
    txns_end: TxnId,
}

impl Session {
    /// Its transactions (aborted ones included), in session order.
    pub fn txns(&self) -> Range<TxnId> {
        self.txns_start..self.txns_end
    }
}

/// Why a read has no writer. Kept for the checkers, which report it (e.g. as ThinAirRead).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unresolved {
    /// No write in the history wrote the value read (or the input names no writer).
    NoSuchWrite,
    /// Several writes wrote the value read; only produced when the builder is told to accept
    /// duplicate writes ([`HistoryBuilder::allow_duplicate_writes`]).
    Ambiguous,
}

/// A validated history. Build one with [`HistoryBuilder`].
#[derive(Debug, Clone)]
pub struct History {
    source: String,
    key_names: Vec<String>,
    sessions: Vec<Session>,
    txns: Vec<Transaction>,
    /// The operations and each read's writer (operation and transaction), shared between
    /// clones: a history renamed for a file ([`History::with_key_names`]) or stripped of
    /// its known write orders does not copy a run's millions of reads.
    ops: Arc<Vec<Operation>>,
    read_from: Arc<Vec<OpId>>,
    /// The transaction of each read's writer; [`NO_WRITER`] for writes and unresolved reads.
    read_from_txn: Arc<Vec<TxnId>>,
    unresolved: Vec<(OpId, Unresolved)>,
    timestamps: Option<Vec<Option<Timestamps>>>,
    real_time: Option<Vec<Option<RealTime>>>,
    implicit_initial_writes: u32,
    write_order: Vec<(OpId, OpId)>,
    notes: Vec<String>,
    observed: Vec<ObservedAnomaly>,
    statements: Option<Arc<StatementTable>>,
    txn_keys_written: Csr,
    /// Reads of single-statement read–modify–writes ([`History::locked_reads`]), sorted; empty
    /// for most inputs (a side vector, not a field of every operation).
    locked_reads: Vec<OpId>,
    /// `(earlier, later)`: session `later` began after session `earlier` ended, sorted.
    sessions_after: Vec<(SessionId, SessionId)>,
    /// Whether each session is one connection of a real database
    /// ([`History::sessions_are_connections`]).
    sessions_are_connections: bool,
    /// Indexes built on first use (rc and ra use none of them: at 10^6 operations they are
    /// tens of megabytes that a check would build for nothing).
    key_writers: LazyIndex,
    key_readers: LazyIndex,
    txn_keys_read: LazyIndex,
}

/// A [`Csr`] index of a history built on first use from the history's own data (so it adds
/// nothing to the history's content: `Debug` leaves it out, and a clone shares what is built).
#[derive(Clone, Default)]
struct LazyIndex(std::sync::OnceLock<Csr>);

impl LazyIndex {
    #[inline]
    fn get(&self, build: impl FnOnce() -> Csr) -> &Csr {
        self.0.get_or_init(build)
    }
}

impl std::fmt::Debug for LazyIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LazyIndex")
    }
}

/// Compressed sparse rows: `items[offsets[i]..offsets[i+1]]` is row `i`.
#[derive(Debug, Clone, Default)]
struct Csr {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl Csr {
    /// Builds rows from the `(row, item)` pairs that `pairs()` yields (it is called twice,
    /// to count and to fill, and must yield the same pairs both times: no list of pairs is
    /// kept); rows come out sorted and deduplicated.
    fn from_pairs<I: Iterator<Item = (u32, u32)>>(rows: usize, pairs: impl Fn() -> I) -> Csr {
        let mut counts = vec![0u32; rows + 1];
        for (row, _) in pairs() {
            counts[row as usize + 1] += 1;
        }
        for i in 1..=rows {
            counts[i] += counts[i - 1];
        }
        let mut cursor = counts.clone();
        let mut items = vec![0u32; counts[rows] as usize];
        for (row, item) in pairs() {
            items[cursor[row as usize] as usize] = item;
            cursor[row as usize] += 1;
        }
        drop(cursor);
        // Sort and deduplicate each row, compacting in place.
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0u32);
        let mut write = 0usize;
        for row in 0..rows {
            let (start, end) = (counts[row] as usize, counts[row + 1] as usize);
            items[start..end].sort_unstable();
            let mut last: Option<u32> = None;
            for read in start..end {
                let item = items[read];
                if last != Some(item) {
                    items[write] = item;
                    write += 1;
                    last = Some(item);
                }
            }
            offsets.push(write as u32);
        }
        items.truncate(write);
        items.shrink_to_fit();
        Csr { offsets, items }
    }

    fn row(&self, row: u32) -> &[u32] {
        let (start, end) = (
            self.offsets[row as usize] as usize,
            self.offsets[row as usize + 1] as usize,
        );
        &self.items[start..end]
    }
}

impl History {
    /// The name of the input this history came from (a file name, or a description).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Number of interned keys.
    pub fn key_count(&self) -> usize {
        self.key_names.len()
    }

    /// The name of a key as it appeared in the input.
    pub fn key_name(&self, key: KeyId) -> &str {
        &self.key_names[key as usize]
    }

    /// All key names, indexed by [`KeyId`].
    pub fn key_names(&self) -> &[String] {
        &self.key_names
    }

    /// The same history with its keys renamed: `names[k]` for key `k` (e.g. a store's
    /// hashed keys named as the application names them). The names must be as many as the
    /// keys and all different; otherwise the reason, and nothing is renamed.
    pub fn with_key_names(&self, names: Vec<String>) -> Result<History, String> {
        if names.len() != self.key_names.len() {
            return Err(format!(
                "{} names for {} keys",
                names.len(),
                self.key_names.len()
            ));
        }
        let mut seen = rustc_hash::FxHashSet::default();
        if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(format!("two keys would both be named {dup:?}"));
        }
        let mut renamed = self.clone();
        renamed.key_names = names;
        Ok(renamed)
    }

    /// The sessions, indexed by [`SessionId`].
    pub fn sessions(&self) -> &[Session] {
        &self.sessions
    }

    /// Number of transactions, the initial one included.
    pub fn txn_count(&self) -> usize {
        self.txns.len()
    }

    /// All transactions, indexed by [`TxnId`]; index 0 is the initial transaction.
    pub fn txns(&self) -> &[Transaction] {
        &self.txns
    }

    /// One transaction.
    pub fn txn(&self, txn: TxnId) -> &Transaction {
        &self.txns[txn as usize]
    }

    /// Ids of the committed transactions, the initial one included, in id order.
    pub fn committed_txns(&self) -> impl Iterator<Item = TxnId> + '_ {
        (0..self.txns.len() as TxnId).filter(move |&t| self.txns[t as usize].is_committed())
    }

    /// All operations, indexed by [`OpId`].
    pub fn ops(&self) -> &[Operation] {
        &self.ops
    }

    /// One operation.
    pub fn op(&self, op: OpId) -> &Operation {
        &self.ops[op as usize]
    }

    /// The operations of a transaction, in program order.
    pub fn txn_ops(&self, txn: TxnId) -> &[Operation] {
        let t = &self.txns[txn as usize];
        &self.ops[t.ops_start as usize..t.ops_end as usize]
    }

    /// How many of the initial transaction's writes were added implicitly (for keys the input
    /// never wrote initially); they are the last operations of transaction 0.
    pub fn implicit_initial_writes(&self) -> u32 {
        self.implicit_initial_writes
    }

    /// Whether the operation is one of the implicit initial writes.
    pub fn is_implicit_initial_write(&self, op: OpId) -> bool {
        let t0 = &self.txns[INITIAL_TXN as usize];
        op < t0.ops_end && op >= t0.ops_end - self.implicit_initial_writes
    }

    /// The write a read observed, or `None` if it has none (see [`History::unresolved`]).
    /// `None` for writes too.
    pub fn read_from(&self, read: OpId) -> Option<OpId> {
        match self.read_from[read as usize] {
            NO_WRITER => None,
            w => Some(w),
        }
    }

    /// The write–read relation at operation level: for each operation, its writer or
    /// [`NO_WRITER`] (always [`NO_WRITER`] for writes). Flat, for hot loops.
    pub fn read_from_raw(&self) -> &[OpId] {
        &self.read_from
    }

    /// The transaction whose write a read observed.
    pub fn writer_txn(&self, read: OpId) -> Option<TxnId> {
        match self.read_from_txn[read as usize] {
            NO_WRITER => None,
            t => Some(t),
        }
    }

    /// For each operation, the transaction of the write it read, or [`NO_WRITER`] (always for
    /// writes): [`History::writer_txn`] flat, for hot loops that would otherwise look up each
    /// writer operation at random.
    pub fn read_from_txn_raw(&self) -> &[TxnId] {
        &self.read_from_txn
    }

    /// Whether a read observed a write of its own transaction.
    pub fn is_internal_read(&self, read: OpId) -> bool {
        self.writer_txn(read) == Some(self.ops[read as usize].txn)
    }

    /// Whether a read observed a write of another transaction.
    pub fn is_external_read(&self, read: OpId) -> bool {
        matches!(self.writer_txn(read), Some(w) if w != self.ops[read as usize].txn)
    }

    /// The reads without a writer, with the reason, in operation order.
    pub fn unresolved(&self) -> &[(OpId, Unresolved)] {
        &self.unresolved
    }

    /// Why a read has no writer, if it has none.
    pub fn unresolved_reason(&self, read: OpId) -> Option<Unresolved> {
        self.unresolved
            .binary_search_by_key(&read, |&(op, _)| op)
            .ok()
            .map(|i| self.unresolved[i].1)
    }

    /// Transaction-level write–read edges `(writer, reader, key)` of external reads, one per
    /// read operation (so possibly repeated), in reader operation order.
    pub fn wr_edges(&self) -> impl Iterator<Item = (TxnId, TxnId, KeyId)> + '_ {
        self.ops.iter().enumerate().filter_map(move |(i, op)| {
            let w = self.read_from[i];
            if w == NO_WRITER {
                return None;
            }
            let writer = self.ops[w as usize].txn;
            (writer != op.txn).then_some((writer, op.txn, op.key))
        })
    }

    /// Session order: `a` comes before `b` in a session, or `a` is the initial transaction and
    /// `b` is not. Aborted transactions are ordered by position too; checkers skip them.
    pub fn so_before(&self, a: TxnId, b: TxnId) -> bool {
        if a == b {
            return false;
        }
        if a == INITIAL_TXN {
            return true;
        }
        if b == INITIAL_TXN {
            return false;
        }
        self.txns[a as usize].session == self.txns[b as usize].session && a < b
    }

    /// The committed transaction that precedes `txn` in its session, if any (the initial
    /// transaction for a session's first committed transaction).
    pub fn so_predecessor(&self, txn: TxnId) -> Option<TxnId> {
        if txn == INITIAL_TXN {
            return None;
        }
        let session = &self.sessions[self.txns[txn as usize].session as usize];
        (session.txns_start..txn)
            .rev()
            .find(|&t| self.txns[t as usize].is_committed())
            .or(Some(INITIAL_TXN))
    }

    /// Transactions that write `key` (committed and aborted, the initial one included),
    /// ascending and without repeats.
    pub fn writers_of(&self, key: KeyId) -> &[TxnId] {
        self.key_writers
            .get(|| {
                Csr::from_pairs(self.key_count(), || {
                    self.ops
                        .iter()
                        .filter(|op| op.kind == OpKind::Write)
                        .map(|op| (op.key, op.txn))
                })
            })
            .row(key)
    }

    /// Transactions that read `key` from another transaction (or without a resolved writer),
    /// ascending and without repeats.
    pub fn readers_of(&self, key: KeyId) -> &[TxnId] {
        self.key_readers
            .get(|| {
                Csr::from_pairs(self.key_count(), || {
                    self.ops
                        .iter()
                        .zip(self.read_from_txn.iter())
                        .filter(|&(op, &t)| op.kind == OpKind::Read && t != op.txn)
                        .map(|(op, _)| (op.key, op.txn))
                })
            })
            .row(key)
    }

    /// Keys a transaction writes, ascending and without repeats.
    pub fn keys_written(&self, txn: TxnId) -> &[KeyId] {
        self.txn_keys_written.row(txn)
    }

    /// Keys a transaction reads (any read, internal or external), ascending, without repeats.
    pub fn keys_read(&self, txn: TxnId) -> &[KeyId] {
        self.txn_keys_read
            .get(|| {
                Csr::from_pairs(self.txn_count(), || {
                    self.ops
                        .iter()
                        .filter(|op| op.kind == OpKind::Read)
                        .map(|op| (op.txn, op.key))
                })
            })
            .row(txn)
    }

    /// The last write of `key` in `txn`, if it writes the key.
    pub fn last_write(&self, txn: TxnId, key: KeyId) -> Option<OpId> {
        let t = &self.txns[txn as usize];
        (t.ops_start..t.ops_end).rev().find(|&o| {
            self.ops[o as usize].kind == OpKind::Write && self.ops[o as usize].key == key
        })
    }

    /// Timestamps of a transaction, when the input carried them.
    pub fn timestamps(&self, txn: TxnId) -> Option<Timestamps> {
        self.timestamps.as_ref().and_then(|ts| ts[txn as usize])
    }

    /// The client's real-time interval of a transaction, when the input carried one (Jepsen
    /// histories with invocations).
    pub fn real_time(&self, txn: TxnId) -> Option<RealTime> {
        self.real_time.as_ref().and_then(|rt| rt[txn as usize])
    }

    /// Whether any transaction carries a client real-time interval.
    pub fn has_real_time(&self) -> bool {
        self.real_time.is_some()
    }

    /// Known write–write facts: pairs `(earlier, later)` of writes of one key that the input
    /// shows were installed in this order (an Elle list-append read `[1 2 3]` shows the
    /// appends of 1, 2 and 3 in that order). Sorted, without repeats, never naming a write of
    /// the initial transaction as `later`; the builder rejects orders that contradict each
    /// other. Checkers add the committed transactions' pairs to the commit order as facts.
    pub fn known_write_order(&self) -> &[(OpId, OpId)] {
        &self.write_order
    }

    /// The *locked reads*, sorted: reads that a real database performs under the row lock of
    /// the write that follows them in their transaction (the read of `UPDATE t SET c = c + 1
    /// WHERE id = 1`, of `INSERT … ON CONFLICT DO UPDATE`, of a `SELECT … FOR UPDATE` whose
    /// row the transaction then writes). Each is a read whose transaction writes its key after
    /// it. A predicted execution keeps them atomic with that write: no other committed write
    /// of the key comes between the write a locked read observes and its transaction
    /// (docs/prediction.md "Statements real databases make atomic"). Empty for most inputs.
    pub fn locked_reads(&self) -> &[OpId] {
        &self.locked_reads
    }

    /// Whether `op` is a locked read ([`History::locked_reads`]).
    pub fn is_locked_read(&self, op: OpId) -> bool {
        !self.locked_reads.is_empty() && self.locked_reads.binary_search(&op).is_ok()
    }

    /// Pairs `(earlier, later)` of sessions where `later` began after `earlier` ended (a
    /// test's connection opened after its fixture's closed): every transaction of `earlier`
    /// happens before every transaction of `later`, as if session-ordered. Sorted, without
    /// repeats, acyclic. Empty for most inputs.
    pub fn sessions_after(&self) -> &[(SessionId, SessionId)] {
        &self.sessions_after
    }

    /// Whether each session is one client connection of a real database (a history recorded
    /// on PostgreSQL by `run --store` or an application's sessions, or by `isopredict serve`):
    /// a session's transactions ran one after another, each beginning after the previous one
    /// committed, and a real database shows a transaction every write committed before it
    /// began. So a transaction sees its session's earlier writes (read your writes) and every
    /// write an earlier transaction of its session saw (monotonic reads), at every isolation
    /// level — Biswas & Enea's read committed and read atomic do not require it, causal and
    /// stronger levels do. Prediction keeps it (docs/prediction.md "Statements real databases
    /// make atomic"). False for generated and imported histories, whose sessions may be
    /// logical.
    pub fn sessions_are_connections(&self) -> bool {
        self.sessions_are_connections
    }

    /// What the reader left out or assumed while building this history (e.g. Elle `:info`
    /// transactions whose writes nobody observed), one sentence each; empty for most inputs.
    pub fn input_notes(&self) -> &[String] {
        &self.notes
    }

    /// Anomalies the reader observed in the input itself (Elle's `incompatible-order` and
    /// `duplicate-elements` of list-append reads), in input order; empty for most inputs. Each
    /// is a violation of every level that forbids it, whatever the checkers find.
    pub fn observed_anomalies(&self) -> &[ObservedAnomaly] {
        &self.observed
    }

    /// The SQL statements behind the operations, for histories recorded by the server.
    pub fn statements(&self) -> Option<&StatementTable> {
        self.statements.as_deref()
    }

    /// The history with its operations' statements ([`StatementTable::validate`]d).
    pub fn with_statements(
        mut self,
        table: Arc<StatementTable>,
    ) -> Result<History, crate::error::InputError> {
        table.validate(&self)?;
        self.statements = Some(table);
        Ok(self)
    }

    /// Whether any transaction carries timestamps.
    pub fn has_timestamps(&self) -> bool {
        self.timestamps.is_some()
    }

    /// Whether the operations carry values (every write has one).
    pub fn has_values(&self) -> bool {
        self.ops.iter().enumerate().all(|(i, o)| {
            o.kind == OpKind::Read || o.value.is_some() || self.is_implicit_initial_write(i as OpId)
        })
    }

    /// The name of a transaction in every report (`check`, `predict`, `run`; docs/formats.md
    /// "Naming transactions"): `T<s>.<k>`, the `k`-th transaction (from 1, aborted ones
    /// counted) of the `s`-th session (from 1, in input order); `initial state` for the
    /// initial transaction. The input's own ids are listed beside it where reports map
    /// sessions to the input ([`History::session_label`]).
    pub fn txn_label(&self, txn: TxnId) -> String {
        if txn == INITIAL_TXN {
            return "initial state".to_string();
        }
        let t = &self.txns[txn as usize];
        format!("T{}.{}", t.session + 1, t.index_in_session + 1)
    }

    /// The name of a session in reports: `session <s>` (from 1, in input order), with the
    /// input's id for it when it has one (`session 2 (input id 8)`).
    pub fn session_label(&self, session: SessionId) -> String {
        match self.sessions[session as usize].external_id {
            Some(e) => format!("session {} (input id {e})", session + 1),
            None => format!("session {}", session + 1),
        }
    }

    /// Summary counts.
    pub fn stats(&self) -> Stats {
        Stats::of(self)
    }

    /// Compares two histories by content: the same sessions, transactions, operations (kind,
    /// key name, value) and writers of every read, ignoring source names, line numbers and
    /// whether initial writes were explicit. Returns the first difference in words.
    pub fn same_content(&self, other: &History) -> Result<(), String> {
        if self.sessions.len() != other.sessions.len() {
            return Err(format!(
                "{} sessions vs {}",
                self.sessions.len(),
                other.sessions.len()
            ));
        }
        if self.txns.len() != other.txns.len() {
            return Err(format!(
                "{} transactions vs {}",
                self.txns.len(),
                other.txns.len()
            ));
        }
        let explicit_ops = |h: &History, t: TxnId| -> Vec<OpId> {
            h.txns[t as usize]
                .ops()
                .filter(|&o| !h.is_implicit_initial_write(o))
                .collect()
        };
        let describe_writer = |h: &History, read: OpId| -> String {
            match h.read_from(read) {
                None => format!("{:?}", h.unresolved_reason(read)),
                Some(w) if h.ops[w as usize].txn == INITIAL_TXN => "initial".to_string(),
                Some(w) => {
                    let t = h.ops[w as usize].txn;
                    let pos = h.txns[t as usize].ops().position(|o| o == w).unwrap_or(0);
                    format!("t{t} op {pos}")
                }
            }
        };
        let positions = |h: &History| -> Vec<((TxnId, u32), (TxnId, u32))> {
            let at = |o: OpId| {
                let t = h.ops[o as usize].txn;
                (t, o - h.txns[t as usize].ops_start)
            };
            let mut v: Vec<_> = h.write_order.iter().map(|&(a, b)| (at(a), at(b))).collect();
            v.sort_unstable();
            v
        };
        let locked = |h: &History| -> Vec<(TxnId, u32)> {
            h.locked_reads
                .iter()
                .map(|&o| {
                    let t = h.ops[o as usize].txn;
                    (t, o - h.txns[t as usize].ops_start)
                })
                .collect()
        };
        if locked(self) != locked(other) {
            return Err(format!(
                "locked reads differ ({} vs {})",
                self.locked_reads.len(),
                other.locked_reads.len()
            ));
        }
        if self.sessions_after != other.sessions_after {
            return Err(format!(
                "sessions ordered after others differ ({} vs {} pairs)",
                self.sessions_after.len(),
                other.sessions_after.len()
            ));
        }
        if self.sessions_are_connections != other.sessions_are_connections {
            return Err(format!(
                "sessions are connections in one only ({} vs {})",
                self.sessions_are_connections, other.sessions_are_connections
            ));
        }
        if positions(self) != positions(other) {
            return Err(format!(
                "known write orders differ ({} vs {} pairs)",
                self.write_order.len(),
                other.write_order.len()
            ));
        }
        for t in 0..self.txns.len() as TxnId {
            let (a, b) = (&self.txns[t as usize], &other.txns[t as usize]);
            if a.session != b.session || a.status != b.status {
                return Err(format!("transaction t{t} differs in session or status"));
            }
            let (oa, ob) = if t == INITIAL_TXN {
                // Initial writes may be explicit in one and implicit in the other: compare keys.
                let mut ka: Vec<&str> = a
                    .ops()
                    .map(|o| self.key_name(self.ops[o as usize].key))
                    .collect();
                let mut kb: Vec<&str> = b
                    .ops()
                    .map(|o| other.key_name(other.ops[o as usize].key))
                    .collect();
                ka.sort_unstable();
                kb.sort_unstable();
                if ka != kb {
                    return Err("the initial transaction writes different keys".to_string());
                }
                continue;
            } else {
                (explicit_ops(self, t), explicit_ops(other, t))
            };
            if oa.len() != ob.len() {
                return Err(format!(
                    "transaction t{t} has {} operations vs {}",
                    oa.len(),
                    ob.len()
                ));
            }
            for (i, (&x, &y)) in oa.iter().zip(&ob).enumerate() {
                let (p, q) = (&self.ops[x as usize], &other.ops[y as usize]);
                if p.kind != q.kind || self.key_name(p.key) != other.key_name(q.key) {
                    return Err(format!("transaction t{t} operation {i} differs"));
                }
                if p.kind == OpKind::Read {
                    let (wa, wb) = (describe_writer(self, x), describe_writer(other, y));
                    if wa != wb {
                        return Err(format!(
                            "transaction t{t} operation {i} reads from {wa} vs {wb}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
