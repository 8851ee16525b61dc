//! Keyed scans: the primary-key index of a table's membership set, so that a SELECT, UPDATE or
//! DELETE reads only the rows whose key can satisfy its WHERE clause (docs/workloads.md, "Keyed
//! scans"). MonkeyDB (Biswas et al., OOPSLA'21; notes/workloads.md §1.4) has no index: every
//! scan reads one CONTAINS per row ever inserted and the WHERE columns of every present row.
//!
//! Why skipping rows is sound (Adya's predicate reads, Adya PhD thesis 1999 §4.3): a row's
//! primary-key cells are written once, by the insert that creates the row, with the values
//! the row id is the hash of, and never assigned by an UPDATE ([`super::Table::update`]
//! enforces it). So in every version of every execution a row's key cells hold the values
//! given at insert, or are absent (the row is not there). A row whose key values fail the
//! WHERE clause matches in no version: reading it cannot change the statement's result, and a
//! concurrent insert of such a row is no phantom for the statement. A row whose key can match
//! is read as before (CONTAINS, then its WHERE columns); when the clause pins every key column
//! by equality, the CONTAINS of that key's row id is read even if no such row was ever
//! inserted, so that a later insert of it is a write–read conflict with the scan (a phantom).
//!
//! The index is kept beside the set (every insert, committed or not; a scan keeps only the
//! rows ever inserted by a committed transaction, the loader or the running transaction, the
//! rows MonkeyDB's scan would read): per row its key values; per prefix of `j` key values
//! (1 ≤ j < key length) the rows with that prefix. A lookup uses the longest prefix of
//! equality-pinned key values that compare exactly (integer literals over columns that only
//! ever held integers, text literals over columns that only ever held texts: there SQL `=`
//! is equality of the hashed components); rows whose key is not fully known (a key column not
//! supplied, or a value neither integer nor text) are always read.

use std::fmt;
use std::str::FromStr;

use rustc_hash::FxHashMap;

use super::value::Value;
use crate::stable_hash::{hash_str, hash_u64s, StableHasher};

/// How a table statement finds the rows it reads.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ScanMode {
    /// Only the rows whose primary key can satisfy the WHERE clause (see the module
    /// documentation); the default.
    #[default]
    Keyed,
    /// MonkeyDB's scan: one CONTAINS per row ever inserted, the WHERE columns of every present
    /// row (the paper's trace shapes).
    Full,
}

impl ScanMode {
    /// `keyed` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            ScanMode::Keyed => "keyed",
            ScanMode::Full => "full",
        }
    }
}

impl fmt::Display for ScanMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ScanMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "keyed" => Ok(ScanMode::Keyed),
            "full" => Ok(ScanMode::Full),
            _ => Err(format!("unknown scan {s:?} (keyed or full)")),
        }
    }
}

/// What a keyed scan asks the index ([`super::KvRead::set_ever_inserted_by_key`]).
pub struct KeyLookup<'a> {
    /// The number of primary-key columns.
    pub key_len: usize,
    /// The values the WHERE clause pins by equality on the first key columns, in key order
    /// (possibly none).
    pub prefix: &'a [Value],
    /// Whether a row with these key values (in key order) can satisfy the WHERE clause in some
    /// version (non-key columns unknown).
    pub may_match: &'a dyn Fn(&[Value]) -> bool,
}

/// A key value as MonkeyDB hashes it into a row id: integers as themselves, texts by their
/// hash; anything else is left out.
pub(crate) fn key_component(v: &Value) -> Option<u64> {
    match v {
        Value::Int(i) => Some(*i as u64),
        Value::Text(t) => Some(hash_str(t)),
        _ => None,
    }
}

const KIND_INT: u8 = 1;
const KIND_TEXT: u8 = 2;

fn kind(v: &Value) -> Option<u8> {
    match v {
        Value::Int(_) => Some(KIND_INT),
        Value::Text(_) => Some(KIND_TEXT),
        _ => None,
    }
}

/// The bucket of rows whose first `values.len()` key values are `values`.
fn prefix_bucket(values: &[Value]) -> u64 {
    let mut h = StableHasher::new();
    h.u64(values.len() as u64);
    for v in values {
        h.u64(key_component(v).unwrap_or(0));
    }
    h.finish()
}

/// The primary-key index of one set. See the module documentation.
#[derive(Debug, Default, Clone)]
pub struct KeyIndex {
    /// Key length of the indexed rows (set by the first keyed insert).
    key_len: Option<usize>,
    /// Per key position: the kinds of values inserted there (bit set of `KIND_*`).
    kinds: Vec<u8>,
    /// Each keyed row's key values.
    keys: FxHashMap<u64, Box<[Value]>>,
    /// Rows by the bucket of a proper prefix of their key.
    by_prefix: FxHashMap<u64, Vec<u64>>,
    /// Rows whose key is not fully known: read by every scan.
    unkeyed: Vec<u64>,
}

impl KeyIndex {
    /// Records an insert of `elem` with primary key `key` (`None`: not fully known).
    pub fn insert(&mut self, elem: u64, key: Option<&[Value]>) {
        let keyed = key.filter(|k| {
            !k.is_empty()
                && k.iter().all(|v| kind(v).is_some())
                && self.key_len.map_or(true, |n| n == k.len())
        });
        let Some(key) = keyed else {
            // Duplicates (a row inserted again) are removed by `candidates`.
            self.unkeyed.push(elem);
            return;
        };
        if self.keys.contains_key(&elem) {
            // The same row id again: the same key (the id is its hash).
            return;
        }
        self.key_len = Some(key.len());
        self.kinds.resize(key.len(), 0);
        for (k, v) in self.kinds.iter_mut().zip(key) {
            *k |= kind(v).unwrap_or(0);
        }
        for j in 1..key.len() {
            self.by_prefix
                .entry(prefix_bucket(&key[..j]))
                .or_default()
                .push(elem);
        }
        self.keys.insert(elem, key.into());
    }

    /// The rows a scan described by `lookup` must read, ascending: of the rows for which
    /// `inserted` holds, those whose key can match or is not known, and — when every key
    /// column is pinned by comparable values — the pinned key's row id, inserted or not.
    pub fn candidates(&self, lookup: &KeyLookup<'_>, inserted: impl Fn(u64) -> bool) -> Vec<u64> {
        let usable = lookup
            .prefix
            .iter()
            .take(lookup.key_len)
            .enumerate()
            .take_while(|&(i, v)| {
                kind(v).is_some_and(|k| self.kinds.get(i).map_or(true, |&seen| seen & !k == 0))
            })
            .count();
        let mut out: Vec<u64> = self
            .unkeyed
            .iter()
            .copied()
            .filter(|&e| inserted(e))
            .collect();
        let keyed_len_matches = self.key_len.map_or(true, |n| n == lookup.key_len);
        if usable == lookup.key_len && keyed_len_matches {
            let parts: Vec<u64> = lookup.prefix[..usable]
                .iter()
                .filter_map(key_component)
                .collect();
            out.push(hash_u64s(&parts));
        } else if usable > 0 && keyed_len_matches {
            if let Some(rows) = self.by_prefix.get(&prefix_bucket(&lookup.prefix[..usable])) {
                out.extend(rows.iter().copied().filter(|&e| {
                    inserted(e) && self.keys.get(&e).is_some_and(|k| (lookup.may_match)(k))
                }));
            }
        } else {
            out.extend(
                self.keys
                    .iter()
                    .filter(|&(&e, k)| inserted(e) && (lookup.may_match)(k))
                    .map(|(&e, _)| e),
            );
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|&i| Value::Int(i)).collect()
    }

    fn lookup_prefix(index: &KeyIndex, key_len: usize, prefix: &[Value]) -> Vec<u64> {
        let eq = prefix.to_vec();
        let may = move |k: &[Value]| eq.iter().zip(k).all(|(a, b)| a.sql_eq(b));
        index.candidates(
            &KeyLookup {
                key_len,
                prefix,
                may_match: &may,
            },
            |_| true,
        )
    }

    fn row(key: &[i64]) -> u64 {
        hash_u64s(&key.iter().map(|&i| i as u64).collect::<Vec<_>>())
    }

    #[test]
    fn prefixes_select_their_rows_and_a_full_key_its_row_inserted_or_not() {
        let mut index = KeyIndex::default();
        for (w, d, o) in [(1, 1, 1), (1, 1, 2), (1, 2, 1), (2, 1, 1)] {
            index.insert(row(&[w, d, o]), Some(&ints(&[w, d, o])));
        }
        let mut expect = vec![row(&[1, 1, 1]), row(&[1, 1, 2])];
        expect.sort_unstable();
        assert_eq!(lookup_prefix(&index, 3, &ints(&[1, 1])), expect);
        assert_eq!(lookup_prefix(&index, 3, &ints(&[1])).len(), 3);
        assert_eq!(lookup_prefix(&index, 3, &[]).len(), 4);
        assert_eq!(
            lookup_prefix(&index, 3, &ints(&[2, 1, 1])),
            vec![row(&[2, 1, 1])]
        );
        // Never inserted: still read (a later insert of it is a phantom for the scan).
        assert_eq!(
            lookup_prefix(&index, 3, &ints(&[3, 3, 3])),
            vec![row(&[3, 3, 3])]
        );
    }

    #[test]
    fn values_that_do_not_compare_exactly_fall_back_to_every_row() {
        let mut index = KeyIndex::default();
        index.insert(row(&[5]), Some(&ints(&[5])));
        index.insert(hash_u64s(&[hash_str("5")]), Some(&[Value::text("5")]));
        // SQL `=` says 5 = '5': both rows can match an integer literal, and a real one.
        assert_eq!(lookup_prefix(&index, 1, &ints(&[5])).len(), 2);
        assert_eq!(lookup_prefix(&index, 1, &[Value::Real(5.0)]).len(), 2);
        // A row without a known key is read by every scan.
        index.insert(77, None);
        index.insert(78, Some(&[Value::Null]));
        assert!(lookup_prefix(&index, 1, &ints(&[6])).contains(&77));
        assert!(lookup_prefix(&index, 1, &ints(&[6])).contains(&78));
    }

    #[test]
    fn only_rows_the_caller_counts_as_inserted_are_read() {
        let mut index = KeyIndex::default();
        index.insert(row(&[1, 1]), Some(&ints(&[1, 1])));
        index.insert(row(&[1, 2]), Some(&ints(&[1, 2])));
        let may = |_: &[Value]| true;
        let prefix = ints(&[1]);
        let got = index.candidates(
            &KeyLookup {
                key_len: 2,
                prefix: &prefix,
                may_match: &may,
            },
            |e| e == row(&[1, 2]),
        );
        assert_eq!(got, vec![row(&[1, 2])]);
    }

    #[test]
    fn scan_modes_parse_and_print() {
        for m in [ScanMode::Keyed, ScanMode::Full] {
            assert_eq!(m.name().parse::<ScanMode>(), Ok(m));
        }
        assert!("index".parse::<ScanMode>().is_err());
    }
}
