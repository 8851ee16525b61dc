//! A sorted window: entries kept in key order in a ring buffer, for the online checker
//! ([`super::aion`]), whose per-key writes and pending reads arrive almost in key order and
//! leave almost in key order (Li et al., Aion §IV: timestamps of arriving transactions are
//! nearly sorted, and garbage collection drops the oldest).
//!
//! An insert or removal costs a binary search plus a shift of the entries between its place
//! and the nearer end: O(1) amortised for the usual nearly-sorted traffic, O(n) for an entry
//! far out of order (a balanced tree would be O(log n) there, but 3–5 times slower on the
//! usual traffic, which is what `watch`'s throughput depends on). Keys are unique.

use std::collections::VecDeque;
use std::ops::Bound;

/// Entries `(K, V)` sorted by `K` (unique keys).
#[derive(Debug, Clone)]
pub(crate) struct SortedWindow<K, V> {
    items: VecDeque<(K, V)>,
}

impl<K, V> Default for SortedWindow<K, V> {
    fn default() -> Self {
        SortedWindow {
            items: VecDeque::new(),
        }
    }
}

impl<K: Ord + Copy, V> SortedWindow<K, V> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The number of leading entries satisfying `pred` (true on a prefix, false after),
    /// searched from the back: exponential steps, then a binary search, so O(log d) for a
    /// boundary d entries from the end.
    fn boundary_from_back(&self, pred: impl Fn(&K) -> bool) -> usize {
        let n = self.items.len();
        let (mut lo, mut hi) = (0, n); // pred holds below lo, fails from hi on
        let mut step = 1;
        while hi > 0 {
            let i = n.saturating_sub(step);
            if pred(&self.items[i].0) {
                lo = i + 1;
                break;
            }
            hi = i;
            step *= 2;
        }
        self.binary(lo, hi, pred)
    }

    /// As [`Self::boundary_from_back`], searched from the front.
    fn boundary_from_front(&self, pred: impl Fn(&K) -> bool) -> usize {
        let n = self.items.len();
        let (mut lo, mut hi) = (0, n);
        let mut step = 1;
        while lo < n {
            let i = (step - 1).min(n - 1);
            if !pred(&self.items[i].0) {
                hi = i;
                break;
            }
            lo = i + 1;
            step *= 2;
        }
        self.binary(lo, hi, pred)
    }

    /// Binary search for the boundary of `pred` within `lo..hi`.
    fn binary(&self, mut lo: usize, mut hi: usize, pred: impl Fn(&K) -> bool) -> usize {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.items[mid].0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Index of the first entry whose key is not below `bound` read as a lower bound.
    fn lower(&self, bound: Bound<&K>) -> usize {
        match bound {
            Bound::Unbounded => 0,
            Bound::Included(k) => self.boundary_from_back(|x| x < k),
            Bound::Excluded(k) => self.boundary_from_back(|x| x <= k),
        }
    }

    /// Index one past the last entry whose key is within `bound` read as an upper bound.
    fn upper(&self, bound: Bound<&K>) -> usize {
        match bound {
            Bound::Unbounded => self.items.len(),
            Bound::Included(k) => self.boundary_from_back(|x| x <= k),
            Bound::Excluded(k) => self.boundary_from_back(|x| x < k),
        }
    }

    /// Inserts `value` at `key` (which must not be present).
    pub fn insert(&mut self, key: K, value: V) {
        match self.items.back() {
            Some((last, _)) if *last > key => {
                let at = self.boundary_from_back(|x| *x < key);
                self.items.insert(at, (key, value));
            }
            _ => self.items.push_back((key, value)),
        }
    }

    /// Removes the entry at `key` (searched from the front: removals are mostly of old
    /// entries).
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let at = self.boundary_from_front(|x| x < key);
        if self.items.get(at).is_some_and(|(x, _)| x == key) {
            self.items.remove(at).map(|(_, v)| v)
        } else {
            None
        }
    }

    /// The entries with keys within (`low`, `high`), in key order (reversible).
    pub fn range(
        &self,
        low: Bound<&K>,
        high: Bound<&K>,
    ) -> impl DoubleEndedIterator<Item = &(K, V)> {
        let a = self.lower(low);
        let b = self.upper(high).max(a);
        self.items.range(a..b)
    }

    /// The entries with keys within (`low`, `high`), in key order, mutable (values only:
    /// the keys must not be changed).
    pub fn range_mut(
        &mut self,
        low: Bound<&K>,
        high: Bound<&K>,
    ) -> impl Iterator<Item = &mut (K, V)> {
        let a = self.lower(low);
        let b = self.upper(high).max(a);
        self.items.range_mut(a..b)
    }

    /// The key of the `i`-th entry.
    pub fn key_at(&self, i: usize) -> Option<&K> {
        self.items.get(i).map(|(k, _)| k)
    }

    /// Removes the first entry.
    pub fn pop_first(&mut self) -> Option<(K, V)> {
        self.items.pop_front()
    }

    /// All entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = &(K, V)> {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Random inserts (mostly near the end), removals and range queries agree with a BTreeMap.
    #[test]
    fn agrees_with_a_btreemap() {
        let mut w: SortedWindow<u32, u32> = SortedWindow::default();
        let mut m: BTreeMap<u32, u32> = BTreeMap::new();
        let mut x: u64 = 12345;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u32
        };
        for step in 0..5000u32 {
            let r = next();
            let key = if r % 4 == 0 {
                r % 20_000
            } else {
                step * 4 + r % 7
            };
            match next() % 3 {
                0 | 1 => {
                    if let std::collections::btree_map::Entry::Vacant(e) = m.entry(key) {
                        e.insert(step);
                        w.insert(key, step);
                    }
                }
                _ => assert_eq!(w.remove(&key), m.remove(&key)),
            }
            let (a, b) = (next() % 20_000, next() % 20_000);
            let (a, b) = (a.min(b), a.max(b));
            for (lo, hi) in [
                (Bound::Included(&a), Bound::Excluded(&b)),
                (Bound::Excluded(&a), Bound::Included(&b)),
                (Bound::Unbounded, Bound::Included(&b)),
                (Bound::Excluded(&a), Bound::Unbounded),
            ] {
                let got: Vec<_> = w.range(lo, hi).rev().map(|&(k, v)| (k, v)).collect();
                let want: Vec<_> = m.range((lo, hi)).rev().map(|(&k, &v)| (k, v)).collect();
                assert_eq!(got, want);
            }
        }
        assert_eq!(w.len(), m.len());
        assert_eq!(w.key_at(0), m.keys().next());
        let all: Vec<_> = w.iter().map(|&(k, _)| k).collect();
        assert_eq!(all, m.keys().copied().collect::<Vec<_>>());
    }
}
