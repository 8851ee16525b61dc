//! The key–value interface the table layer and applications program against.
//!
//! [`KvRead`] is implemented by a running transaction (any [`Transaction`], recorded), the loader
//! ([`super::Loader`], the initial state) and a snapshot of the latest state
//! ([`super::Snapshot`], unrecorded, for invariants); [`KvWrite`] by the first two.

use super::key_index::KeyLookup;
use super::value::Value;

/// Reads: plain keys and set membership.
pub trait KvRead {
    /// The value of a plain key; `None` if absent (nobody wrote it).
    fn get(&mut self, key: u64) -> Option<Value>;
    /// Whether `elem` is a member of set `set`.
    fn set_contains(&mut self, set: u64, elem: u64) -> bool;
    /// Every element ever inserted into `set` by a committed transaction, the loader or the
    /// running transaction — deleted ones included — ascending. Not a recorded read: it is
    /// what MonkeyDB scans with one CONTAINS per element.
    fn set_ever_inserted(&mut self, set: u64) -> Vec<u64>;
    /// The elements of [`KvRead::set_ever_inserted`] a keyed scan must read, ascending (see
    /// [`super::KeyIndex`]): those whose primary key can satisfy `lookup`, those whose key is
    /// not known, and the row id of a fully pinned key even if never inserted. Not a recorded
    /// read. `None` (the default) when this reader keeps no key index or scans in full
    /// ([`super::ScanMode::Full`]): the caller then reads every element.
    fn set_ever_inserted_by_key(&mut self, set: u64, lookup: &KeyLookup<'_>) -> Option<Vec<u64>> {
        let _ = (set, lookup);
        None
    }
}

/// Writes: plain keys and set membership.
pub trait KvWrite: KvRead {
    /// Writes a plain key.
    fn put(&mut self, key: u64, value: Value);
    /// Inserts `elem` into set `set`.
    fn set_insert(&mut self, set: u64, elem: u64);
    /// Inserts `elem` into set `set` as a table row whose primary-key values (in key order)
    /// are `key` (`None`: not fully known), so that keyed scans can find it. By default a plain
    /// [`KvWrite::set_insert`].
    fn set_insert_keyed(&mut self, set: u64, elem: u64, key: Option<&[Value]>) {
        let _ = key;
        self.set_insert(set, elem);
    }
    /// Deletes `elem` from set `set`.
    fn set_delete(&mut self, set: u64, elem: u64);
    /// The next value of the store's non-transactional row counter.
    fn next_row_counter(&mut self) -> u64;
}

/// A running transaction on some backend ([`super::EmbeddedTx`] on the embedded store,
/// [`super::postgres::PgTx`] on PostgreSQL): the key–value operations application code uses.
/// Commit and rollback belong to whoever began the transaction (a [`super::Backend`] through
/// its [`super::Client`]), so workloads written against [`Tx`] run unchanged on every backend.
pub trait Transaction: KvWrite {}

/// What application code receives: `&mut Tx<'_>` is a running transaction of any backend.
pub type Tx<'a> = dyn Transaction + 'a;
