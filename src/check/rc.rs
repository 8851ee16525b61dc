//! Read Committed saturation: AWDIT (Møldrup & Pavlogiannis, PLDI'25) §3.1, Algorithm 1
//! "CheckRC", O(n^{3/2}); the axiom is Biswas & Enea's Read Committed (OOPSLA'19 Fig. 2):
//!
//! t1 ≠ t2 ∧ t1 →wr_x r_x ∧ t2 writes x ∧ t2 →wr r →po r_x (r, r_x in t3) ⇒ t2 →co t1.
//!
//! Per transaction t3, a forward pass finds the first read from each writer t2; a reverse pass
//! keeps, per key, the two po-earliest distinct writers t3 reads the key from after the
//! current read (a two-slot stack), and for the first read r from each t2 adds t2 → t1 for
//! every key x in KeysWt(t2) ∩ (keys read after r), iterating the smaller set. Only external
//! reads of committed writers take part (internal reads are not wr edges). Edges from the
//! initial transaction are implied (it comes first) and not added.

use super::parallel::edges_in_parallel;

use super::graph::EdgeList;
use super::read_consistency::NONE;
use crate::history::{History, OpId, TxnId, INITIAL_TXN};

#[derive(Debug, Clone, Copy)]
struct Slots {
    stamp: u32,
    top_txn: TxnId,
    top_op: OpId,
    second_txn: TxnId,
    second_op: OpId,
}

/// Adds to `out` the edges t2 → t1 (cause: the read r_x of x from t1) that saturate the
/// commit order for Read Committed.
pub(crate) fn saturate(history: &History, external_writer: &[TxnId], out: &mut EdgeList) {
    let txn_total = history.txn_count();
    let range_len = TXNS_PER_TASK.max(txn_total / (4 * rayon::current_num_threads()).max(1));
    saturate_in_ranges(history, external_writer, out, range_len);
}

/// [`saturate`] in tasks of `range_len` transactions. Each reading transaction is saturated on
/// its own: ranges of transactions run in parallel, each with its own scratch, and their edges
/// are appended in transaction order (the edges, and their order, are those of one pass over
/// all transactions, whatever `range_len`).
fn saturate_in_ranges(
    history: &History,
    external_writer: &[TxnId],
    out: &mut EdgeList,
    range_len: usize,
) {
    edges_in_parallel(
        1..history.txn_count().max(1),
        range_len,
        || Scratch::new(history),
        |t3, scratch, part| saturate_txn(history, external_writer, t3, scratch, part),
        out,
    );
}

/// Transactions per parallel task, at least.
const TXNS_PER_TASK: usize = 4096;

/// Per-task scratch of [`saturate_txn`]; its marks are transaction ids, so one scratch serves
/// any sequence of transactions without clearing.
struct Scratch {
    slots: Vec<Slots>,
    first_stamp: Vec<u32>,
    first_read: Vec<u32>,
    read_keys: Vec<u32>,
}

impl Scratch {
    fn new(history: &History) -> Self {
        let empty = Slots {
            stamp: 0,
            top_txn: NONE,
            top_op: NONE,
            second_txn: NONE,
            second_op: NONE,
        };
        Scratch {
            slots: vec![empty; history.key_count()],
            first_stamp: vec![0u32; history.txn_count()],
            first_read: vec![0u32; history.txn_count()],
            read_keys: Vec::new(),
        }
    }
}

/// Algorithm 1's step for one reading transaction `t3`.
fn saturate_txn(
    history: &History,
    external_writer: &[TxnId],
    t3: usize,
    scratch: &mut Scratch,
    out: &mut EdgeList,
) {
    let ops = history.ops();
    let Scratch {
        slots,
        first_stamp,
        first_read,
        read_keys,
    } = scratch;
    let txn = &history.txns()[t3];
    if !txn.is_committed() {
        return;
    }
    let mark = t3 as u32;
    let range = txn.ops();
    // Pass 1: the po-first read from each writer.
    let mut reads = 0usize;
    for op in range.clone() {
        let w = external_writer[op as usize];
        if w != NONE {
            reads += 1;
            if first_stamp[w as usize] != mark {
                first_stamp[w as usize] = mark;
                first_read[w as usize] = op;
            }
        }
    }
    if reads < 2 {
        return;
    }
    // Pass 2: reverse scan.
    read_keys.clear();
    for op in range.rev() {
        let t2 = external_writer[op as usize];
        if t2 == NONE {
            continue;
        }
        if t2 != INITIAL_TXN && first_read[t2 as usize] == op && !read_keys.is_empty() {
            let mut infer = |s: &Slots| {
                let (t1, r_x) = if s.top_txn != t2 {
                    (s.top_txn, s.top_op)
                } else {
                    (s.second_txn, s.second_op)
                };
                if t1 != NONE {
                    out.push(t2, t1, r_x);
                }
            };
            let written = history.keys_written(t2);
            if written.len() <= read_keys.len() {
                for &x in written {
                    let s = &slots[x as usize];
                    if s.stamp == mark {
                        infer(s);
                    }
                }
            } else {
                for &x in read_keys.iter() {
                    if written.binary_search(&x).is_ok() {
                        infer(&slots[x as usize]);
                    }
                }
            }
        }
        let y = ops[op as usize].key;
        let s = &mut slots[y as usize];
        if s.stamp != mark {
            *s = Slots {
                stamp: mark,
                top_txn: t2,
                top_op: op,
                second_txn: NONE,
                second_op: NONE,
            };
            read_keys.push(y);
        } else if s.top_txn != t2 {
            s.second_txn = s.top_txn;
            s.second_op = s.top_op;
            s.top_txn = t2;
            s.top_op = op;
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
        let reads = read_consistency::check(&hist, false);
        let mut out = EdgeList::default();
        saturate(&hist, &reads.external_writer, &mut out);
        out.pairs()
    }

    #[test]
    fn any_task_size_gives_the_edges_of_one_pass() {
        crate::check::test_util::any_task_size_gives_the_edges_of_one_pass(
            saturate_in_ranges,
            (6, 40),
            false,
            &[1, 2, 7, 100],
        );
    }

    #[test]
    fn monotonic_reads_inside_a_transaction() {
        // t4 reads from t1, t2, t3 in turn, each writing x: t1 → t2 → t3 (and t1 → t3 only
        // by transitivity: the nearest later writer suffices).
        assert_eq!(edges("wx1 | wx2 | wx3 | rx1 rx2 rx3"), vec![(1, 2), (2, 3)]);
        // Another key first: t4 reads y from t2, then x from t1; t2 writes x.
        assert_eq!(edges("wx1 | wx2 wy2 | ry2 rx1"), vec![(2, 1)]);
        // No edge when the earlier writer does not write the later key.
        assert!(edges("wx1 | wy2 | ry2 rx1").is_empty());
    }

    #[test]
    fn second_slot_when_the_nearest_later_read_is_from_the_same_writer() {
        // t3: R(y) from t2, R(x) from t2, R(x) from t1 — t2 → t1 comes from the second slot.
        assert_eq!(edges("wx1 | wy2 wx2 | ry2 rx2 rx1"), vec![(2, 1)]);
    }

    #[test]
    fn initial_writer_as_t1_but_never_as_t2() {
        // Reading x initially after reading t1's x: t1 → init. Reading from init first adds
        // nothing (init comes first anyway).
        assert_eq!(edges("wx1 | rx1 rx0"), vec![(1, 0)]);
        assert!(edges("wx1 | rx0 rx1").is_empty());
    }

    #[test]
    fn internal_reads_are_not_write_read_edges() {
        assert!(edges("wx1 | wy2 ry2 rx1").is_empty());
    }
}
