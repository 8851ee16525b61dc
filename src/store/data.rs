//! The committed state of the store: interned keys, their versions, the committed
//! transactions in execution (= commit) order, sessions, and the recorded events.
//!
//! Transactions run one at a time (MonkeyDB, OOPSLA'21: a global lock per transaction), so
//! the execution order is a total order; it is also the commit order `co` the read policies
//! keep valid (see [`super::policy`]). Sequence number 0 is the initial transaction, which
//! holds a version of every key (a key never loaded has an initial version without a value).

use rustc_hash::FxHashMap;

use super::key::KeyRef;
use super::value::Value;

/// Dense id of an interned store key.
pub type KeyId = u32;
/// Position of a committed transaction in the execution order (0 = the initial transaction).
pub type Seq = u32;

/// The sentinel "session" of the initial transaction.
pub const INITIAL_SESSION: u32 = u32::MAX;

/// What an event did (MonkeyDB's five trace events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Read of a plain key.
    Read,
    /// Write of a plain key.
    Write,
    /// Insert of an element into a set (writes its membership pseudo-key).
    Insert,
    /// Delete of an element from a set (writes its membership pseudo-key).
    Delete,
    /// Membership test (reads the membership pseudo-key).
    Contains,
}

impl EventKind {
    /// Whether the event reads.
    pub fn is_read(self) -> bool {
        matches!(self, EventKind::Read | EventKind::Contains)
    }
}

/// Where a read took its value from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The reading transaction's own earlier write (a local read).
    Own,
    /// The committed transaction with this sequence number (0 = initial state).
    Committed(Seq),
}

/// One recorded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// What it did.
    pub kind: EventKind,
    /// The key (for set events, the membership pseudo-key).
    pub key: KeyId,
    /// For reads, where the value came from; `None` for writes.
    pub source: Option<Source>,
}

/// A committed version of a key.
#[derive(Debug, Clone)]
pub struct Version {
    /// The transaction that wrote it (its last write of the key).
    pub seq: Seq,
    /// The value; `None` for the implicit initial version of a key never loaded.
    pub value: Option<Value>,
}

/// A committed, non-empty transaction.
#[derive(Debug, Clone)]
pub struct TxnRecord {
    /// Store session index ([`INITIAL_SESSION`] for the initial transaction).
    pub session: u32,
    /// Position among the session's committed non-empty transactions.
    pub pos: u32,
    /// MonkeyDB's transaction number `k` in `Txn(s, k)`: commits on the session so far,
    /// empty ones included.
    pub k: u32,
    pub(crate) events: (u32, u32),
    pub(crate) writes: (u32, u32),
    /// Causal past (vector clock) including the transaction itself: for each session, how
    /// many of its transactions happen before or are this one. Empty unless causal tracking
    /// is on.
    pub(crate) clock: Box<[u32]>,
}

/// A session (a client connection).
#[derive(Debug, Clone)]
pub struct SessionRecord {
    /// MonkeyDB's connection number, printed as `s` in `Txn(s, k)`.
    pub external_id: u64,
    /// Commits so far, empty ones included (the next transaction's `k`).
    pub commits: u32,
    /// Its committed non-empty transactions, in order.
    pub txns: Vec<Seq>,
}

/// The committed state.
#[derive(Debug, Default)]
pub struct StoreData {
    pub(crate) keys: Vec<KeyRef>,
    pub(crate) key_ids: FxHashMap<KeyRef, KeyId>,
    pub(crate) versions: Vec<Vec<Version>>,
    pub(crate) loaded: Vec<KeyId>,
    pub(crate) txns: Vec<TxnRecord>,
    pub(crate) sessions: Vec<SessionRecord>,
    pub(crate) events: Vec<Event>,
    pub(crate) write_keys: Vec<KeyId>,
    pub(crate) sets_ever: FxHashMap<u64, Vec<u64>>,
    /// Per set: the primary keys of its rows, as inserted (committed or not).
    pub(crate) key_indexes: FxHashMap<u64, super::key_index::KeyIndex>,
}

impl StoreData {
    pub(crate) fn new() -> Self {
        StoreData {
            txns: vec![TxnRecord {
                session: INITIAL_SESSION,
                pos: 0,
                k: 0,
                events: (0, 0),
                writes: (0, 0),
                clock: Box::new([]),
            }],
            ..Default::default()
        }
    }

    /// Interns a key, creating its implicit initial version.
    pub(crate) fn intern(&mut self, key: KeyRef) -> KeyId {
        if let Some(&id) = self.key_ids.get(&key) {
            return id;
        }
        let id = self.keys.len() as KeyId;
        self.keys.push(key);
        self.key_ids.insert(key, id);
        self.versions.push(vec![Version {
            seq: 0,
            value: None,
        }]);
        id
    }

    /// The id of a key, if it was ever used.
    pub fn key_id(&self, key: KeyRef) -> Option<KeyId> {
        self.key_ids.get(&key).copied()
    }

    /// The key with this id.
    pub fn key(&self, id: KeyId) -> KeyRef {
        self.keys[id as usize]
    }

    /// The committed versions of a key, in execution order (the first is the initial one).
    pub fn versions(&self, key: KeyId) -> &[Version] {
        &self.versions[key as usize]
    }

    /// The committed transactions in execution order (index = [`Seq`]; 0 = initial).
    pub fn txns(&self) -> &[TxnRecord] {
        &self.txns
    }

    /// The sessions, by store session index.
    pub fn sessions(&self) -> &[SessionRecord] {
        &self.sessions
    }

    /// The events of a committed transaction, in program order.
    pub fn txn_events(&self, seq: Seq) -> &[Event] {
        let (a, b) = self.txns[seq as usize].events;
        &self.events[a as usize..b as usize]
    }

    /// The distinct keys a committed transaction wrote.
    pub fn txn_writes(&self, seq: Seq) -> &[KeyId] {
        let (a, b) = self.txns[seq as usize].writes;
        &self.write_keys[a as usize..b as usize]
    }

    /// Keys the loader wrote, in first-write order (the initial transaction's explicit writes).
    pub fn loaded_keys(&self) -> &[KeyId] {
        &self.loaded
    }

    /// Whether the committed transaction `seq` belongs to the causal-past prefix `past`
    /// (`past[s]` = how many of session `s`'s transactions are in it). The initial
    /// transaction is in every past.
    pub(crate) fn in_prefix(&self, seq: Seq, past: &[u32]) -> bool {
        let t = &self.txns[seq as usize];
        t.session == INITIAL_SESSION || past.get(t.session as usize).is_some_and(|&n| t.pos < n)
    }

    /// `Txn(s, k)` of a committed transaction as MonkeyDB prints it.
    pub fn monkeydb_id(&self, seq: Seq) -> (u64, u32) {
        let t = &self.txns[seq as usize];
        if t.session == INITIAL_SESSION {
            (0, 0)
        } else {
            (self.sessions[t.session as usize].external_id, t.k)
        }
    }
}
