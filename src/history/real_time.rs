//! The real-time order of a history's clients (Jepsen/Elle's realtime graph, Kingsbury &
//! Alvaro VLDB'20 §4.3; `elle.core/realtime-graph`): a committed transaction that completed
//! before another was invoked comes first in every strictly serializable order. Only the
//! transitive reduction's frontier is kept, as Elle does: when a transaction completes, the
//! transactions it was ordered after drop out of the frontier, since every later invocation
//! is ordered after them through it.

use super::{History, TxnId};

impl History {
    /// Pairs `(Ta, Tb)` of committed transactions with `Ta` completed strictly before `Tb`
    /// was invoked ([`History::real_time`]), reduced as in the module documentation (every
    /// real-time pair follows from these by transitivity). Empty when no transaction carries
    /// an interval.
    pub fn real_time_order(&self) -> Vec<(TxnId, TxnId)> {
        if !self.has_real_time() {
            return Vec::new();
        }
        // (position, 0 = invocation / 1 = completion, transaction): at equal positions an
        // invocation comes first, so equal positions order nothing.
        let mut events: Vec<(u64, u8, TxnId)> = Vec::new();
        for t in self.committed_txns() {
            if let Some(rt) = self.real_time(t) {
                events.push((rt.invoked, 0, t));
                events.push((rt.completed, 1, t));
            }
        }
        events.sort_unstable();
        let n = self.txn_count();
        let mut superseded = vec![false; n];
        // The predecessors recorded at each transaction's invocation: pairs[start..end].
        let mut preds: Vec<(u32, u32)> = vec![(0, 0); n];
        let mut frontier: Vec<TxnId> = Vec::new();
        let mut pairs: Vec<(TxnId, TxnId)> = Vec::new();
        for (_, kind, t) in events {
            if kind == 0 {
                frontier.retain(|&f| !superseded[f as usize]);
                let start = pairs.len() as u32;
                pairs.extend(frontier.iter().map(|&f| (f, t)));
                preds[t as usize] = (start, pairs.len() as u32);
            } else {
                let (start, end) = preds[t as usize];
                for i in start..end {
                    superseded[pairs[i as usize].0 as usize] = true;
                }
                frontier.push(t);
            }
        }
        pairs
    }
}

#[cfg(test)]
mod tests {
    use crate::history::{HistoryBuilder, RealTime, TxnId};

    /// Intervals by transaction, one session each: the reduced pairs.
    fn order(intervals: &[(u64, u64)]) -> Vec<(TxnId, TxnId)> {
        let mut b = HistoryBuilder::new("rt");
        let x = b.key("x");
        for (i, &(invoked, completed)) in intervals.iter().enumerate() {
            let s = b.session(None);
            let t = b.begin(s, None);
            b.write(t, x, Some(i as u64 + 1), 1);
            b.set_real_time(t, RealTime { invoked, completed });
        }
        let mut pairs = b.build().unwrap().real_time_order();
        pairs.sort_unstable();
        pairs
    }

    #[test]
    fn a_chain_is_reduced_to_its_steps() {
        // T1 [0,1], T2 [2,3], T3 [4,5]: T1 < T2 < T3; T1 < T3 follows by transitivity.
        assert_eq!(order(&[(0, 1), (2, 3), (4, 5)]), vec![(1, 2), (2, 3)]);
    }

    #[test]
    fn overlapping_intervals_are_unordered() {
        // T1 [0,5], T2 [3,10]: concurrent. T3 [11,12] comes after both.
        assert_eq!(order(&[(0, 5), (3, 10), (11, 12)]), vec![(1, 3), (2, 3)]);
    }

    #[test]
    fn equal_positions_order_nothing() {
        assert_eq!(order(&[(0, 4), (4, 6)]), vec![]);
    }
}
