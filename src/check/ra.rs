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

use super::parallel::edges_in_parallel;

use super::graph::EdgeList;
use crate::history::{History, KeyId, TxnId, INITIAL_TXN};

use super::read_consistency::NONE;

/// Adds to `out` the edges t2 → t1 (cause: t3's read of x from t1) that saturate the commit
/// order for Read Atomic.
pub(crate) fn saturate(history: &History, external_writer: &[TxnId], out: &mut EdgeList) {
    let group = history.sessions().len() / (4 * rayon::current_num_threads()).max(1);
    saturate_in_groups(history, external_writer, out, group);
}

/// [`saturate`] in tasks of `group` sessions. Sessions are saturated independently (the state
/// carried from transaction to transaction is the session's own last writes): groups of
/// sessions run in parallel, each with its own scratch, and their edges are appended in session
/// order (the edges, and their order, are those of one pass over all sessions, whatever
/// `group`).
fn saturate_in_groups(
    history: &History,
    external_writer: &[TxnId],
    out: &mut EdgeList,
    group: usize,
) {
    edges_in_parallel(
        0..history.sessions().len(),
        group,
        || Scratch::new(history),
        |s, scratch, part| saturate_session(history, external_writer, s, scratch, part),
        out,
    );
}

/// Per-task scratch of [`saturate_session`]; its marks are transaction ids and session
/// numbers, so one scratch serves any sequence of sessions without clearing.
struct Scratch {
    last_write_stamp: Vec<u32>,
    last_write: Vec<u32>,
    first_stamp: Vec<u32>,
    first_read: Vec<u32>,
    first_writer: Vec<u32>,
    writer_seen: Vec<u32>,
    t3_keys: Vec<KeyId>,
    t3_writers: Vec<TxnId>,
}

impl Scratch {
    fn new(history: &History) -> Self {
        let keys = history.key_count();
        Scratch {
            last_write_stamp: vec![0u32; keys],
            last_write: vec![0u32; keys],
            first_stamp: vec![0u32; keys],
            first_read: vec![0u32; keys],
            first_writer: vec![0u32; keys],
            writer_seen: vec![0u32; history.txn_count()],
            t3_keys: Vec::new(),
            t3_writers: Vec::new(),
        }
    }
}

/// Algorithm 2 over the transactions of session `s`.
fn saturate_session(
    history: &History,
    external_writer: &[TxnId],
    s: usize,
    scratch: &mut Scratch,
    out: &mut EdgeList,
) {
    let ops = history.ops();
    let Scratch {
        last_write_stamp,
        last_write,
        first_stamp,
        first_read,
        first_writer,
        writer_seen,
        t3_keys,
        t3_writers,
    } = scratch;
    let session = &history.sessions()[s];
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
        for &t2 in t3_writers.iter() {
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
                for &x in t3_keys.iter() {
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
    fn any_task_size_gives_the_edges_of_one_pass() {
        crate::check::test_util::any_task_size_gives_the_edges_of_one_pass(
            saturate_in_groups,
            (7, 30),
            true,
            &[1, 2, 3],
        );
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
