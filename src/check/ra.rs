//! Read Atomic saturation: AWDIT (Møldrup & Pavlogiannis, PLDI'25) §3.2, Algorithm 2
//! "CheckRA", O(n^{3/2}); the axiom is Biswas & Enea's Read Atomic (OOPSLA'19 Fig. 2), which
//! includes session order:
//!
//! t1 ≠ t2 ∧ t1 →wr_x t3 ∧ t2 writes x ∧ t2 →(so ∪ wr) t3 ⇒ t2 →co t1.
//!
//! Session by session, in session order:
//! - so case: for each external read of x from t1, the latest earlier transaction of the
//!   session that writes x (earlier writers are ordered before it by so) gets t2 → t1;
//! - wr case: for each distinct writer t2 that t3 reads from, for each x in
//!   KeysWt(t2) ∩ KeysRd(t3) (iterating the smaller set), t2 → t1 where t1 is the writer t3
//!   reads x from (the first one; a second writer is a NonRepeatableRead, reported by read
//!   consistency before this runs).
//!
//! KeysRd(t3) is the keys t3 reads from other, committed transactions (internal reads are not
//! wr edges). Edges from the initial transaction are implied and not added.

use super::graph::EdgeList;
use crate::history::{History, KeyId, TxnId, INITIAL_TXN};

use super::read_consistency::NONE;

/// Adds to `out` the edges t2 → t1 (cause: t3's read of x from t1) that saturate the commit
/// order for Read Atomic.
pub(crate) fn saturate(history: &History, external_writer: &[TxnId], out: &mut EdgeList) {
    let ops = history.ops();
    let keys = history.key_count();
    let mut last_write_stamp = vec![0u32; keys];
    let mut last_write = vec![0u32; keys];
    let mut first_stamp = vec![0u32; keys];
    let mut first_read = vec![0u32; keys];
    let mut first_writer = vec![0u32; keys];
    let mut writer_seen = vec![0u32; history.txn_count()];
    let mut t3_keys: Vec<KeyId> = Vec::new();
    let mut t3_writers: Vec<TxnId> = Vec::new();

    for (s, session) in history.sessions().iter().enumerate() {
        let session_mark = s as u32 + 1;
        for t3 in session.txns() {
            let txn = history.txn(t3);
            if !txn.is_committed() {
                continue;
            }
            t3_keys.clear();
            t3_writers.clear();
            for op in txn.ops() {
                let t1 = external_writer[op as usize];
                if t1 == NONE {
                    continue;
                }
                let x = ops[op as usize].key as usize;
                let so_case = if first_stamp[x] != t3 {
                    first_stamp[x] = t3;
                    first_read[x] = op;
                    first_writer[x] = t1;
                    t3_keys.push(x as KeyId);
                    true
                } else {
                    first_writer[x] != t1
                };
                if so_case && last_write_stamp[x] == session_mark {
                    let t2 = last_write[x];
                    if t2 != t1 {
                        out.push(t2, t1, op);
                    }
                }
                if t1 != INITIAL_TXN && writer_seen[t1 as usize] != t3 {
                    writer_seen[t1 as usize] = t3;
                    t3_writers.push(t1);
                }
            }
            for &t2 in &t3_writers {
                let written = history.keys_written(t2);
                let mut infer = |x: KeyId| {
                    let t1 = first_writer[x as usize];
                    if t1 != t2 {
                        out.push(t2, t1, first_read[x as usize]);
                    }
                };
                if written.len() <= t3_keys.len() {
                    for &x in written {
                        if first_stamp[x as usize] == t3 {
                            infer(x);
                        }
                    }
                } else {
                    for &x in &t3_keys {
                        if written.binary_search(&x).is_ok() {
                            infer(x);
                        }
                    }
                }
            }
            for &x in history.keys_written(t3) {
                last_write_stamp[x as usize] = session_mark;
                last_write[x as usize] = t3;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::read_consistency;
    use crate::check::test_util::h;

    fn edges(spec: &str) -> Vec<(TxnId, TxnId)> {
        let hist = h(spec);
        let reads = read_consistency::check(&hist, true);
        let mut out = EdgeList::default();
        saturate(&hist, &reads.external_writer, &mut out);
        out.pairs()
    }

    #[test]
    fn session_case_uses_the_latest_earlier_writer() {
        // Session: t1 W(x), t2 W(x), t3 R(x) from t1: only t2 → t1 (t1's session
        // predecessors follow by so).
        assert_eq!(edges("wx1 / wx2 / rx1"), vec![(2, 1)]);
        assert_eq!(edges("wx1 / wx2 / wy3 / rx1"), vec![(2, 1)]);
        // Initial value after a session write: t1 → init.
        assert_eq!(edges("wx1 / rx0"), vec![(1, 0)]);
    }

    #[test]
    fn write_read_case_iterates_the_intersection() {
        // t3 reads y from t2 and x from t1; t2 writes x and y: t2 → t1, in either order.
        assert_eq!(edges("wx1 | wx2 wy2 | rx1 ry2"), vec![(2, 1)]);
        assert_eq!(edges("wx1 | wx2 wy2 | ry2 rx1"), vec![(2, 1)]);
        // One step only: t2 →wr tm →wr t3 is not an RA premise.
        assert!(edges("wx1 / wx2 wy2 | ry2 wz1 | rz1 rx1").is_empty());
    }
}
