//! The transactional key–value store: sessions, transactions run one at a time, reads resolved
//! by the read policy, every event recorded with its exact writer.
//!
//! This plays MonkeyDB's role (Biswas et al., OOPSLA'21; IsoPredict PLDI'24 §6): plain keys
//! with get/put, sets with insert/delete/contains, commit and rollback. Conventions taken from
//! MonkeyDB so recorded runs look like the paper's traces:
//! - a transaction is identified by `(session, k)`, where `k` counts the session's commits so
//!   far, empty ones included; rolled-back transactions leave no events and do not advance `k`;
//! - a read of a key the transaction already wrote returns that write (a local read, recorded
//!   with the transaction itself as writer); other reads are resolved by the policy;
//! - a key nobody wrote reads as absent from the initial state;
//! - the loader's writes become the initial transaction `(0, 0)`;
//! - the per-table row counter of tables without a primary key is not transactional.

use rustc_hash::FxHashMap;

use super::access::{KvRead, KvWrite, Transaction};
use super::data::{Event, EventKind, KeyId, Seq, Source, StoreData, TxnRecord, Version};
use super::key::KeyRef;
use super::key_index::{KeyIndex, KeyLookup, ScanMode};
use super::policy::{supported, ReadPolicy, Tracker};
use super::prng::SplitMix64;
use super::replay::{Divergence, DivergenceReason, PlannedWriter, ReplayPlan};
use super::value::Value;
use crate::check::Level;
use std::sync::Arc;

/// Index of a session in the store (creation order).
pub type SessionId = u32;

/// Misuse of the store API or an unsupported configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The read policy asks for a level the store cannot keep valid.
    #[error("the store keeps runs valid at causal, ra, rc, pc or si, not {0}")]
    UnsupportedLevel(Level),
}

/// What a commit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Committed {
    /// The transaction had no events: it only advanced the session's commit count.
    Empty,
    /// The transaction committed at this position of the execution order.
    At(Seq),
    /// Snapshot isolation aborted the transaction (first committer wins: it wrote a key a
    /// concurrent transaction wrote); it left no trace, like a rollback.
    Aborted,
}

#[derive(Debug, Default)]
struct Current {
    session: SessionId,
    events: Vec<Event>,
    own: FxHashMap<KeyId, Value>,
    written: Vec<KeyId>,
    own_inserts: Vec<(u64, u64)>,
    external_reads: u32,
    /// Divergences found so far; they count only if the transaction commits.
    divergences: Vec<Divergence>,
    /// The values of `own` that writes since the latest savepoint replaced (kept only once a
    /// savepoint was taken).
    undo: Vec<(KeyId, Value)>,
    saving: bool,
}

/// A point in a running transaction that [`EmbeddedTx::rollback_to`] returns to (the
/// transaction's own state only; the latest savepoint taken is the one to return to).
#[derive(Debug, Clone, Copy)]
pub struct Savepoint {
    events: usize,
    written: usize,
    own_inserts: usize,
    external_reads: u32,
    divergences: usize,
}

#[derive(Debug)]
struct Replay {
    plan: Arc<ReplayPlan>,
    /// Store session → index of its planned session.
    planned: Vec<Option<usize>>,
}

/// The store. See the module documentation.
#[derive(Debug)]
pub struct Store {
    data: StoreData,
    policy: ReadPolicy,
    tracker: Option<Tracker>,
    rng: SplitMix64,
    replay: Option<Replay>,
    current: Option<Current>,
    row_counter: u64,
    divergences: Vec<Divergence>,
    scratch: Vec<Seq>,
    scan: ScanMode,
}

impl Store {
    /// An empty store whose reads follow `policy`.
    pub fn new(policy: ReadPolicy) -> Result<Store, StoreError> {
        let tracker = match policy.level() {
            None => None,
            Some(level) if supported(level) => Tracker::new(level),
            Some(level) => return Err(StoreError::UnsupportedLevel(level)),
        };
        let seed = match &policy {
            ReadPolicy::Random { seed, .. } => *seed,
            _ => 0,
        };
        let replay = match &policy {
            ReadPolicy::Replay { plan, .. } => Some(Replay {
                plan: plan.clone(),
                planned: Vec::new(),
            }),
            _ => None,
        };
        Ok(Store {
            data: StoreData::new(),
            policy,
            tracker,
            rng: SplitMix64::new(seed),
            replay,
            current: None,
            row_counter: 0,
            divergences: Vec::new(),
            scratch: Vec::new(),
            scan: ScanMode::default(),
        })
    }

    /// How table statements find their rows (keyed by default; see [`ScanMode`]). Set it
    /// before the run: a replay must scan as the run it replays did.
    pub fn set_scan_mode(&mut self, scan: ScanMode) {
        self.scan = scan;
    }

    /// How table statements find their rows.
    pub fn scan_mode(&self) -> ScanMode {
        self.scan
    }

    /// The read policy.
    pub fn policy(&self) -> &ReadPolicy {
        &self.policy
    }

    /// Opens a session named `external_id` (MonkeyDB's connection number, printed as `s` in
    /// `Txn(s, k)`).
    pub fn open_session(&mut self, external_id: u64) -> SessionId {
        let id = self.data.sessions.len() as SessionId;
        self.data.sessions.push(super::data::SessionRecord {
            external_id,
            commits: 0,
            txns: Vec::new(),
        });
        if let Some(r) = &mut self.replay {
            r.planned.push(
                r.plan
                    .sessions
                    .iter()
                    .position(|s| s.external_id == external_id),
            );
        }
        id
    }

    /// Makes session `id`, which has run no transaction, stand for `external_id` (a
    /// connection named after it opened, replaying the recorded session of that name); false
    /// when it has run one.
    pub fn rekey_session(&mut self, id: SessionId, external_id: u64) -> bool {
        let session = &mut self.data.sessions[id as usize];
        if !session.txns.is_empty() || session.commits > 0 {
            return false;
        }
        session.external_id = external_id;
        if let Some(r) = &mut self.replay {
            r.planned[id as usize] = r
                .plan
                .sessions
                .iter()
                .position(|s| s.external_id == external_id);
        }
        true
    }

    /// The committed state (versions, transactions, events).
    pub fn data(&self) -> &StoreData {
        &self.data
    }

    /// Where the run left the prediction (replay policy only), in the order found.
    pub fn divergences(&self) -> &[Divergence] {
        &self.divergences
    }

    /// Loads the initial state: everything written through the loader becomes the initial
    /// transaction's state. Reads through it see the loaded state and are not recorded.
    ///
    /// # Panics
    /// If a transaction has already committed (loading comes first).
    pub fn loader(&mut self) -> Loader<'_> {
        assert!(
            self.data.txns.len() == 1 && self.current.is_none(),
            "Store::loader: load the initial state before running transactions"
        );
        Loader { store: self }
    }

    /// The latest committed state, read-only and unrecorded (for invariants).
    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { store: self }
    }

    /// Begins a transaction on `session`. Transactions run one at a time: the returned handle
    /// borrows the store until it commits or rolls back (dropping it rolls back).
    pub fn begin(&mut self, session: SessionId) -> EmbeddedTx<'_> {
        assert!(
            (session as usize) < self.data.sessions.len(),
            "Store::begin: unknown session {session}"
        );
        if let Some(t) = &mut self.tracker {
            t.begin(&self.data, session);
        }
        self.current = Some(Current {
            session,
            ..Default::default()
        });
        EmbeddedTx { store: self }
    }

    /// The non-transactional row counter's current value (the last one taken).
    pub fn row_counter(&self) -> u64 {
        self.row_counter
    }

    /// Takes the next value of the non-transactional row counter (row ids of tables without
    /// a primary key; MonkeyDB's global counter, never rolled back).
    pub fn next_row_counter(&mut self) -> u64 {
        self.row_counter += 1;
        self.row_counter
    }

    fn cur(&mut self) -> &mut Current {
        self.current.as_mut().expect("no transaction is running")
    }

    fn version_value(&self, key: KeyId, seq: Seq) -> Option<Value> {
        let versions = self.data.versions(key);
        let i = versions
            .binary_search_by_key(&seq, |v| v.seq)
            .expect("chosen writer has a version");
        versions[i].value.clone()
    }

    fn read(&mut self, key: KeyRef, kind: EventKind) -> Option<Value> {
        let id = self.data.intern(key);
        let cur = self.current.as_mut().expect("no transaction is running");
        if let Some(v) = cur.own.get(&id) {
            let v = v.clone();
            cur.events.push(Event {
                kind,
                key: id,
                source: Some(Source::Own),
            });
            return Some(v);
        }
        let seq = self.choose(id);
        if let Some(t) = &mut self.tracker {
            t.observe(&self.data, id, seq);
        }
        let cur = self.cur();
        cur.external_reads += 1;
        cur.events.push(Event {
            kind,
            key: id,
            source: Some(Source::Committed(seq)),
        });
        self.version_value(id, seq)
    }

    fn choose(&mut self, key: KeyId) -> Seq {
        match &self.policy {
            ReadPolicy::Latest => self.data.versions(key).last().map_or(0, |v| v.seq),
            ReadPolicy::Random { .. } => {
                let tracker = self.tracker.as_ref().expect("random policy has a tracker");
                let mut valid = std::mem::take(&mut self.scratch);
                tracker.valid_writers(&self.data, key, &mut valid);
                let chosen = self.choose_like_monkeydb(&valid);
                self.scratch = valid;
                chosen
            }
            ReadPolicy::Replay { .. } => self.choose_replayed(key),
        }
    }

    /// MonkeyDB's `choose_one_op`: a session uniformly among those with a valid writer (the
    /// initial state counts as a session), then one of its valid writers uniformly.
    fn choose_like_monkeydb(&mut self, valid: &[Seq]) -> Seq {
        let session_of = |seq: Seq| self.data.txns[seq as usize].session;
        let mut sessions: Vec<u32> = valid.iter().map(|&s| session_of(s)).collect();
        sessions.sort_unstable();
        sessions.dedup();
        let s = sessions[self.rng.below(sessions.len())];
        let members: Vec<Seq> = valid
            .iter()
            .copied()
            .filter(|&v| session_of(v) == s)
            .collect();
        members[self.rng.below(members.len())]
    }

    fn choose_replayed(&mut self, key: KeyId) -> Seq {
        let tracker = self.tracker.as_ref().expect("replay policy has a tracker");
        let floor = tracker.floor(&self.data, key);
        let cur = self.current.as_ref().expect("no transaction is running");
        let session = cur.session;
        let read_index = cur.external_reads;
        let pos = self.data.sessions[session as usize].txns.len();
        let replay = self.replay.as_ref().expect("replay policy has a plan");
        let planned_session = replay.planned[session as usize].map(|i| &replay.plan.sessions[i]);
        let planned_txn = planned_session.and_then(|s| s.txns.get(pos));
        let is_last = planned_session.is_some_and(|s| pos + 1 >= s.txns.len());
        let expected = planned_txn.and_then(|t| t.reads.get(read_index as usize));
        let key_ref = self.data.key(key);
        let mut reason = None;
        if let Some(expected) = expected {
            if expected.key != Some(key_ref) {
                reason = Some(DivergenceReason::OtherKey {
                    expected: expected.key.map(|k| k.name()),
                });
            } else {
                let writer = match expected.writer {
                    PlannedWriter::Initial => Ok(0),
                    PlannedWriter::Unknown => Err(DivergenceReason::UnknownWriter),
                    PlannedWriter::Txn { session, pos } => self
                        .data
                        .sessions
                        .iter()
                        .find(|s| s.external_id == session)
                        .and_then(|s| s.txns.get(pos as usize).copied())
                        .ok_or(DivergenceReason::WriterMissing),
                };
                match writer {
                    Err(r) => reason = Some(r),
                    Ok(w) => {
                        let wrote = w == 0
                            || self
                                .data
                                .versions(key)
                                .binary_search_by_key(&w, |v| v.seq)
                                .is_ok();
                        if !wrote {
                            reason = Some(DivergenceReason::WriterDidNotWrite);
                        } else if !tracker.valid(&self.data, floor, w) {
                            reason = Some(DivergenceReason::LevelInvalid);
                        } else {
                            return w;
                        }
                    }
                }
            }
        } else if planned_txn.is_some() && !is_last {
            reason = Some(DivergenceReason::ExtraRead);
        }
        if let Some(reason) = reason {
            let external = self.data.sessions[session as usize].external_id;
            let cur = self.current.as_mut().expect("no transaction is running");
            cur.divergences.push(Divergence {
                session: external,
                txn: pos as u32,
                read: Some(read_index),
                key: Some(key_ref.name()),
                reason,
            });
        }
        // The latest valid writer (the floor itself is always valid).
        let tracker = self.tracker.as_ref().expect("replay policy has a tracker");
        let versions = self.data.versions(key);
        versions
            .iter()
            .rev()
            .map(|v| v.seq)
            .find(|&c| tracker.valid(&self.data, floor, c))
            .unwrap_or(floor)
    }

    fn write(&mut self, key: KeyRef, kind: EventKind, value: Value) {
        let id = self.data.intern(key);
        if let Some(t) = &mut self.tracker {
            t.wrote(&self.data, id);
        }
        let cur = self.cur();
        cur.events.push(Event {
            kind,
            key: id,
            source: None,
        });
        match cur.own.insert(id, value) {
            None => cur.written.push(id),
            Some(old) if cur.saving => cur.undo.push((id, old)),
            Some(_) => {}
        }
    }

    fn ever_inserted(&self, set: u64) -> Vec<u64> {
        let mut rows: Vec<u64> = self.data.sets_ever.get(&set).cloned().unwrap_or_default();
        if let Some(cur) = &self.current {
            rows.extend(
                cur.own_inserts
                    .iter()
                    .filter(|&&(s, _)| s == set)
                    .map(|&(_, e)| e),
            );
            rows.sort_unstable();
            rows.dedup();
        }
        rows
    }

    /// The rows of `set` a keyed scan reads ([`KvRead::set_ever_inserted_by_key`]); with
    /// `own`, the running transaction's inserts count as inserted.
    fn ever_inserted_by_key(
        &self,
        set: u64,
        lookup: &KeyLookup<'_>,
        own: bool,
    ) -> Option<Vec<u64>> {
        if self.scan == ScanMode::Full {
            return None;
        }
        let committed = self.data.sets_ever.get(&set).map_or(&[][..], |r| &r[..]);
        let own_inserts = match (&self.current, own) {
            (Some(cur), true) => &cur.own_inserts[..],
            _ => &[],
        };
        let inserted =
            |e: u64| committed.binary_search(&e).is_ok() || own_inserts.contains(&(set, e));
        Some(match self.data.key_indexes.get(&set) {
            Some(index) => index.candidates(lookup, inserted),
            None => KeyIndex::default().candidates(lookup, inserted),
        })
    }

    fn commit(&mut self) -> Committed {
        let cur = self.current.take().expect("no transaction is running");
        let session = cur.session as usize;
        if self.tracker.as_ref().is_some_and(|t| t.must_abort()) {
            if self.replay.is_some() {
                self.divergences.push(Divergence {
                    session: self.data.sessions[session].external_id,
                    txn: self.data.sessions[session].txns.len() as u32,
                    read: None,
                    key: None,
                    reason: DivergenceReason::WriteConflict,
                });
            }
            return Committed::Aborted;
        }
        let k = self.data.sessions[session].commits;
        self.data.sessions[session].commits += 1;
        if cur.events.is_empty() {
            return Committed::Empty;
        }
        let seq = self.data.txns.len() as Seq;
        let pos = self.data.sessions[session].txns.len() as u32;
        self.divergences.extend(cur.divergences);
        if let Some(r) = &self.replay {
            if let Some(planned) =
                r.planned[session].and_then(|i| r.plan.sessions[i].txns.get(pos as usize))
            {
                if (cur.external_reads as usize) < planned.reads.len() {
                    self.divergences.push(Divergence {
                        session: self.data.sessions[session].external_id,
                        txn: pos,
                        read: None,
                        key: None,
                        reason: DivergenceReason::MissingReads {
                            expected: planned.reads.len(),
                            made: cur.external_reads as usize,
                        },
                    });
                }
            }
        }
        let e0 = self.data.events.len() as u32;
        self.data.events.extend_from_slice(&cur.events);
        let w0 = self.data.write_keys.len() as u32;
        self.data.write_keys.extend_from_slice(&cur.written);
        let mut own = cur.own;
        for &key in &cur.written {
            let value = own.remove(&key);
            self.data.versions[key as usize].push(Version { seq, value });
        }
        for &(set, elem) in &cur.own_inserts {
            let rows = self.data.sets_ever.entry(set).or_default();
            if let Err(i) = rows.binary_search(&elem) {
                rows.insert(i, elem);
            }
        }
        let clock = match &self.tracker {
            Some(t) if t.is_causal() => t.commit_clock(cur.session, pos),
            _ => Box::new([]),
        };
        self.data.txns.push(TxnRecord {
            session: cur.session,
            pos,
            k,
            events: (e0, self.data.events.len() as u32),
            writes: (w0, self.data.write_keys.len() as u32),
            clock,
        });
        self.data.sessions[session].txns.push(seq);
        Committed::At(seq)
    }

    /// Records, for the replay policy, every predicted transaction that never committed.
    /// Call once the run is over.
    pub fn finish_replay(&mut self) {
        let Some(r) = &self.replay else { return };
        for planned in &r.plan.sessions {
            let made = self
                .data
                .sessions
                .iter()
                .find(|s| s.external_id == planned.external_id)
                .map_or(0, |s| s.txns.len());
            for pos in made..planned.txns.len() {
                self.divergences.push(Divergence {
                    session: planned.external_id,
                    txn: pos as u32,
                    read: None,
                    key: None,
                    reason: DivergenceReason::MissingTransaction,
                });
            }
        }
    }
}

/// A running transaction. Commit or roll back explicitly; dropping it rolls back.
#[derive(Debug)]
pub struct EmbeddedTx<'a> {
    store: &'a mut Store,
}

impl EmbeddedTx<'_> {
    /// The session running this transaction.
    pub fn session(&self) -> SessionId {
        self.store.current.as_ref().map_or(0, |c| c.session)
    }

    /// Number of events recorded so far in this transaction.
    pub fn event_count(&self) -> usize {
        self.store.current.as_ref().map_or(0, |c| c.events.len())
    }

    /// Commits.
    pub fn commit(self) -> Committed {
        self.store.commit()
    }

    /// Rolls back: the transaction leaves no trace.
    pub fn rollback(self) {
        drop(self);
    }

    /// Marks the transaction's state now, so that [`EmbeddedTx::rollback_to`] can undo what
    /// comes after (a statement that must wait for a lock is undone and run again). Taking a
    /// savepoint forgets the previous one.
    pub fn savepoint(&mut self) -> Savepoint {
        let cur = self.store.cur();
        cur.undo.clear();
        cur.saving = true;
        Savepoint {
            events: cur.events.len(),
            written: cur.written.len(),
            own_inserts: cur.own_inserts.len(),
            external_reads: cur.external_reads,
            divergences: cur.divergences.len(),
        }
    }

    /// Undoes the transaction's events and writes since `savepoint` (the latest one taken).
    /// What a read policy's tracker observed is not undone: the `Latest` policy keeps none.
    pub fn rollback_to(&mut self, savepoint: Savepoint) {
        let cur = self.store.cur();
        while let Some((key, old)) = cur.undo.pop() {
            cur.own.insert(key, old);
        }
        for key in cur.written.drain(savepoint.written..) {
            cur.own.remove(&key);
        }
        cur.events.truncate(savepoint.events);
        cur.own_inserts.truncate(savepoint.own_inserts);
        cur.external_reads = savepoint.external_reads;
        cur.divergences.truncate(savepoint.divergences);
    }
}

impl<'a> EmbeddedTx<'a> {
    /// Sets the running transaction aside without ending it, so that the store can run other
    /// transactions before this one continues ([`Store::resume`]). A server whose clients hold
    /// transactions open across network round trips runs each statement as
    /// resume → statements → suspend; with the `Latest` policy a resumed transaction reads
    /// the latest committed write, whoever committed it meanwhile.
    pub fn suspend(self) -> SuspendedTx {
        let current = self
            .store
            .current
            .take()
            .expect("no transaction is running");
        SuspendedTx { current }
    }

    /// Rolls the transaction back and returns its events in program order (the writers of
    /// its reads are the committed transactions they read from), so that a recorder can keep
    /// an aborted transaction; the store keeps nothing of it.
    pub fn abort_events(self) -> Vec<Event> {
        let current = self
            .store
            .current
            .take()
            .expect("no transaction is running");
        current.events
    }
}

/// A transaction set aside by [`EmbeddedTx::suspend`]; [`Store::resume`] continues it.
/// Dropping it rolls the transaction back (it leaves no events).
#[derive(Debug)]
pub struct SuspendedTx {
    current: Current,
}

impl SuspendedTx {
    /// The transaction's session.
    pub fn session(&self) -> SessionId {
        self.current.session
    }

    /// The number of events the transaction has made so far.
    pub fn event_count(&self) -> usize {
        self.current.events.len()
    }

    /// Marks the transaction's writes so far, for [`SuspendedTx::undo_writes_since`] (SQL's
    /// `SAVEPOINT`; unlike [`EmbeddedTx::savepoint`], any number of marks may be kept).
    pub fn mark(&self) -> WriteMark {
        let c = &self.current;
        WriteMark {
            events: c.events.len(),
            written: c.written.len(),
            own_inserts: c.own_inserts.len(),
            own: c.own.clone(),
        }
    }

    /// Undoes the transaction's writes since `mark` (SQL's `ROLLBACK TO SAVEPOINT`): its own
    /// values are those at the mark again, the writes made since leave the events, and so do
    /// the reads since of its own writes (what they read may be gone); the reads since of committed
    /// writes stay (they happened, and the client saw their values). Returns, per event before
    /// the undo, its index after it (`None`: removed).
    pub fn undo_writes_since(&mut self, mark: &WriteMark) -> Vec<Option<u32>> {
        let c = &mut self.current;
        c.own = mark.own.clone();
        c.written.truncate(mark.written);
        c.own_inserts.truncate(mark.own_inserts);
        c.undo.clear();
        let mut moved = Vec::with_capacity(c.events.len());
        let mut kept = 0u32;
        let mut index = 0usize;
        c.events.retain(|e| {
            let keep = index < mark.events || matches!(e.source, Some(Source::Committed(_)));
            index += 1;
            moved.push(keep.then_some(kept));
            kept += u32::from(keep);
            keep
        });
        moved
    }
}

/// A transaction's writes at one point ([`SuspendedTx::mark`]).
#[derive(Debug, Clone)]
pub struct WriteMark {
    events: usize,
    written: usize,
    own_inserts: usize,
    own: FxHashMap<KeyId, Value>,
}

impl Store {
    /// Continues a transaction set aside by [`EmbeddedTx::suspend`].
    ///
    /// # Panics
    /// If another transaction is running (suspend it first).
    pub fn resume(&mut self, tx: SuspendedTx) -> EmbeddedTx<'_> {
        assert!(
            self.current.is_none(),
            "Store::resume: another transaction is running"
        );
        self.current = Some(tx.current);
        EmbeddedTx { store: self }
    }
}

impl Drop for EmbeddedTx<'_> {
    fn drop(&mut self) {
        // After a commit there is no current transaction; otherwise this rolls back.
        self.store.current = None;
    }
}

impl Transaction for EmbeddedTx<'_> {}

impl KvRead for EmbeddedTx<'_> {
    fn get(&mut self, key: u64) -> Option<Value> {
        self.store.read(KeyRef::Plain(key), EventKind::Read)
    }

    fn set_contains(&mut self, set: u64, elem: u64) -> bool {
        matches!(
            self.store
                .read(KeyRef::Member { set, elem }, EventKind::Contains),
            Some(Value::Bool(true))
        )
    }

    fn set_ever_inserted(&mut self, set: u64) -> Vec<u64> {
        self.store.ever_inserted(set)
    }

    fn set_ever_inserted_by_key(&mut self, set: u64, lookup: &KeyLookup<'_>) -> Option<Vec<u64>> {
        self.store.ever_inserted_by_key(set, lookup, true)
    }
}

impl KvWrite for EmbeddedTx<'_> {
    fn put(&mut self, key: u64, value: Value) {
        self.store
            .write(KeyRef::Plain(key), EventKind::Write, value);
    }

    fn set_insert(&mut self, set: u64, elem: u64) {
        self.set_insert_keyed(set, elem, None);
    }

    fn set_insert_keyed(&mut self, set: u64, elem: u64, key: Option<&[Value]>) {
        self.store.write(
            KeyRef::Member { set, elem },
            EventKind::Insert,
            Value::Bool(true),
        );
        self.store.cur().own_inserts.push((set, elem));
        self.store
            .data
            .key_indexes
            .entry(set)
            .or_default()
            .insert(elem, key);
    }

    fn set_delete(&mut self, set: u64, elem: u64) {
        self.store.write(
            KeyRef::Member { set, elem },
            EventKind::Delete,
            Value::Bool(false),
        );
    }

    fn next_row_counter(&mut self) -> u64 {
        self.store.next_row_counter()
    }
}

/// Writes the initial state (see [`Store::loader`]).
#[derive(Debug)]
pub struct Loader<'a> {
    store: &'a mut Store,
}

impl Loader<'_> {
    fn load(&mut self, key: KeyRef, value: Value) {
        let data = &mut self.store.data;
        let id = data.intern(key);
        let initial = &mut data.versions[id as usize][0];
        if initial.value.is_none() {
            data.loaded.push(id);
        }
        initial.value = Some(value);
    }

    fn loaded(&self, key: KeyRef) -> Option<Value> {
        let id = self.store.data.key_id(key)?;
        self.store.data.versions(id)[0].value.clone()
    }
}

impl KvRead for Loader<'_> {
    fn get(&mut self, key: u64) -> Option<Value> {
        self.loaded(KeyRef::Plain(key))
    }

    fn set_contains(&mut self, set: u64, elem: u64) -> bool {
        matches!(
            self.loaded(KeyRef::Member { set, elem }),
            Some(Value::Bool(true))
        )
    }

    fn set_ever_inserted(&mut self, set: u64) -> Vec<u64> {
        self.store.ever_inserted(set)
    }

    fn set_ever_inserted_by_key(&mut self, set: u64, lookup: &KeyLookup<'_>) -> Option<Vec<u64>> {
        self.store.ever_inserted_by_key(set, lookup, false)
    }
}

impl KvWrite for Loader<'_> {
    fn put(&mut self, key: u64, value: Value) {
        self.load(KeyRef::Plain(key), value);
    }

    fn set_insert(&mut self, set: u64, elem: u64) {
        self.set_insert_keyed(set, elem, None);
    }

    fn set_insert_keyed(&mut self, set: u64, elem: u64, key: Option<&[Value]>) {
        self.load(KeyRef::Member { set, elem }, Value::Bool(true));
        let rows = self.store.data.sets_ever.entry(set).or_default();
        if let Err(i) = rows.binary_search(&elem) {
            rows.insert(i, elem);
        }
        self.store
            .data
            .key_indexes
            .entry(set)
            .or_default()
            .insert(elem, key);
    }

    fn set_delete(&mut self, set: u64, elem: u64) {
        self.load(KeyRef::Member { set, elem }, Value::Bool(false));
    }

    fn next_row_counter(&mut self) -> u64 {
        self.store.next_row_counter()
    }
}

/// The latest committed state, read-only; reads are not recorded (see [`Store::snapshot`]).
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    store: &'a Store,
}

impl Snapshot<'_> {
    fn latest(&self, key: KeyRef) -> Option<Value> {
        let id = self.store.data.key_id(key)?;
        self.store.data.versions(id).last()?.value.clone()
    }
}

impl KvRead for Snapshot<'_> {
    fn get(&mut self, key: u64) -> Option<Value> {
        self.latest(KeyRef::Plain(key))
    }

    fn set_contains(&mut self, set: u64, elem: u64) -> bool {
        matches!(
            self.latest(KeyRef::Member { set, elem }),
            Some(Value::Bool(true))
        )
    }

    fn set_ever_inserted(&mut self, set: u64) -> Vec<u64> {
        self.store
            .data
            .sets_ever
            .get(&set)
            .cloned()
            .unwrap_or_default()
    }

    fn set_ever_inserted_by_key(&mut self, set: u64, lookup: &KeyLookup<'_>) -> Option<Vec<u64>> {
        self.store.ever_inserted_by_key(set, lookup, false)
    }
}
