//! The write of each (key, value), for resolving the reads of value-based formats (Plume,
//! AWDIT, Cobra, dbcop…: a read names the value it saw, and values are unique per key).
//!
//! A hash map from (key, value) to the write is one cache miss per read at 10^6 writes. Most
//! generators number each key's values densely (1, 2, 3…), so a key whose values span at most
//! about twice its writes gets a flat run of slots instead (`slot = base + value - min`): the
//! runs together are a few bytes per write and a read's lookup stays within them. Keys with
//! scattered values keep the hash map. Either way the answer is the same.

use rustc_hash::FxHashMap;

use super::{KeyId, OpId, TxnId, NO_WRITER};

/// A key's run of slots: values `min..min + len` at `dense[base..base + len]`; `len == 0`: the
/// key's writes are in the hash map.
#[derive(Debug, Clone, Copy, Default)]
struct KeyRun {
    min: u64,
    base: u32,
    len: u32,
}

/// An empty slot.
const EMPTY: (OpId, TxnId) = (NO_WRITER, NO_WRITER);

/// (key, value) → the write of that value and its transaction.
#[derive(Debug, Default)]
pub(super) struct ValueIndex {
    runs: Vec<KeyRun>,
    dense: Vec<(OpId, TxnId)>,
    sparse: FxHashMap<(KeyId, u64), (OpId, TxnId)>,
}

/// A key's values go flat when they span at most this many slots per write, plus [`SLACK`].
const SPAN_PER_WRITE: u64 = 2;
const SLACK: u64 = 16;

impl ValueIndex {
    /// An empty index shaped for the `(key, value)` pairs `writes()` yields (the pairs that will
    /// be inserted; called once).
    pub(super) fn for_writes(key_count: usize, writes: impl Iterator<Item = (KeyId, u64)>) -> Self {
        // Per key: number of writes, smallest and largest value.
        let mut count = vec![0u32; key_count];
        let mut min = vec![u64::MAX; key_count];
        let mut max = vec![0u64; key_count];
        for (k, v) in writes {
            let k = k as usize;
            count[k] = count[k].saturating_add(1);
            min[k] = min[k].min(v);
            max[k] = max[k].max(v);
        }
        let mut runs = vec![KeyRun::default(); key_count];
        let mut total: u64 = 0;
        let mut sparse_writes = 0usize;
        for k in 0..key_count {
            if count[k] == 0 {
                continue;
            }
            let span = (max[k] - min[k]).saturating_add(1);
            let fits = span <= SPAN_PER_WRITE * u64::from(count[k]) + SLACK;
            if fits && total + span < u64::from(u32::MAX) {
                runs[k] = KeyRun {
                    min: min[k],
                    base: total as u32,
                    len: span as u32,
                };
                total += span;
            } else {
                sparse_writes += count[k] as usize;
            }
        }
        ValueIndex {
            runs,
            dense: vec![EMPTY; total as usize],
            sparse: FxHashMap::with_capacity_and_hasher(sparse_writes, Default::default()),
        }
    }

    /// The slot of `(key, value)` when the key is flat; `Err(())` when it is in the hash map;
    /// `Ok(None)` when the value is outside the key's run (no write of it).
    #[inline]
    fn slot(&self, key: KeyId, value: u64) -> Result<Option<usize>, ()> {
        match self.runs.get(key as usize) {
            Some(run) if run.len > 0 => {
                let offset = value.wrapping_sub(run.min);
                Ok((offset < u64::from(run.len)).then(|| run.base as usize + offset as usize))
            }
            _ => Err(()),
        }
    }

    /// The write of `value` to `key`, and its transaction.
    #[inline]
    pub(super) fn get(&self, key: KeyId, value: u64) -> Option<(OpId, TxnId)> {
        match self.slot(key, value) {
            Ok(Some(s)) => Some(self.dense[s]).filter(|&e| e != EMPTY),
            // Outside a flat key's run only an unannounced insert puts anything.
            Ok(None) | Err(()) if self.sparse.is_empty() => None,
            Ok(None) | Err(()) => self.sparse.get(&(key, value)).copied(),
        }
    }

    /// Records the write of `value` to `key` unless one is recorded; returns the one recorded
    /// before, if any (then nothing changes).
    pub(super) fn insert_first(
        &mut self,
        key: KeyId,
        value: u64,
        write: (OpId, TxnId),
    ) -> Option<(OpId, TxnId)> {
        match self.slot(key, value) {
            Ok(Some(s)) => {
                if self.dense[s] != EMPTY {
                    return Some(self.dense[s]);
                }
                self.dense[s] = write;
                None
            }
            // Shaped by `for_writes`: a flat key's values are in its run. A value outside it
            // (a caller inserting a pair it did not announce) goes to the hash map.
            Ok(None) | Err(()) => match self.sparse.get(&(key, value)) {
                Some(&first) => Some(first),
                None => {
                    self.sparse.insert((key, value), write);
                    None
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_scattered_keys_answer_like_a_map() {
        // Key 0: values 1..=100 (flat); key 1: scattered values (hashed); key 2: no writes;
        // key 3: one huge value next to a small one (hashed: the span is too wide).
        let mut pairs: Vec<(KeyId, u64)> = (1..=100).map(|v| (0, v)).collect();
        pairs.extend([(1, 5), (1, 1 << 40), (1, u64::MAX), (3, 0), (3, u64::MAX)]);
        let mut index = ValueIndex::for_writes(4, pairs.iter().copied());
        assert_eq!(index.runs[0].len, 100);
        assert_eq!((index.runs[1].len, index.runs[3].len), (0, 0));
        let mut reference = std::collections::HashMap::new();
        for (i, &(k, v)) in pairs.iter().enumerate() {
            let w = (i as OpId, 7 + k);
            assert_eq!(index.insert_first(k, v, w), None);
            reference.insert((k, v), w);
        }
        // A second write of a value keeps the first.
        assert_eq!(index.insert_first(0, 50, (999, 9)), Some((49, 7)));
        assert_eq!(index.insert_first(1, u64::MAX, (999, 9)), Some((102, 8)));
        for k in 0..4 {
            for v in [0, 1, 5, 50, 100, 101, 1 << 40, u64::MAX - 1, u64::MAX] {
                assert_eq!(index.get(k, v), reference.get(&(k, v)).copied(), "{k} {v}");
            }
        }
        // An unannounced pair still works (hashed).
        assert_eq!(index.insert_first(0, 5000, (1000, 1)), None);
        assert_eq!(index.get(0, 5000), Some((1000, 1)));
        assert_eq!(index.get(2, 1), None);
        assert_eq!(index.get(9, 1), None);
    }
}
