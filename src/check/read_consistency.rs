//! Read consistency: AWDIT (PLDI'25) §3, Algorithm 4 "CheckReadConsistency" and Def. 2.3,
//! with the violations named by Plume (OOPSLA'24) Table 1: TAP a–f, plus TAP j
//! (NonRepeatableRead, AWDIT Algorithm 2's CheckRepeatableReads) for CI, RA and CC.
//!
//! One linear pass over the operations of the committed transactions. Every violating read is
//! reported (a read can violate two axioms, e.g. NotMyOwnWrite and IntermediateRead). Reads in
//! aborted transactions are never checked (AWDIT Def. 2.3).
//!
//! The pass also produces, for every operation, the transaction it reads from when it is an
//! *external* read of a *committed* writer (the write–read edges the isolation axioms use);
//! internal reads, unresolved reads and reads of aborted writes take part in no order.

use rayon::prelude::*;

use super::scratch::ScratchPool;

use super::anomaly::Anomaly;
use crate::history::{History, OpId, OpKind, TxnId, NO_WRITER};

/// Marks "no transaction" / "no operation" in the flat arrays of the checkers.
pub(crate) const NONE: u32 = u32::MAX;

/// One violating read: the anomaly, the read and the other operation that explains it
/// ([`NONE`] when there is none; see [`related_op`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadIssue {
    pub anomaly: Anomaly,
    pub read: OpId,
    pub related: OpId,
}

/// The result of the pass.
pub(crate) struct ReadCheck {
    /// Violating reads in operation order.
    pub issues: Vec<ReadIssue>,
    /// For each operation: the committed transaction it reads from, if it is an external read
    /// of a committed writer; [`NONE`] otherwise (writes, internal reads, unresolved reads,
    /// reads of aborted writes, reads inside aborted transactions).
    pub external_writer: Vec<TxnId>,
}

/// Checks read consistency (TAP a–f) and, when `repeatable_reads`, repeatable reads (TAP j).
///
/// The related operation of an issue is: AbortedRead, FutureRead → the write read;
/// NotMyOwnWrite → the reader's own earlier write of the key; NotMyLastWrite → the own write
/// that overwrote the one read; NonRepeatableRead → the earlier read of the key from another
/// transaction; IntermediateRead → none here (the writer's final write of the key is looked up
/// by the report).
pub(crate) fn check(history: &History, repeatable_reads: bool) -> ReadCheck {
    let range_len =
        TXNS_PER_TASK.max(history.txn_count() / (4 * rayon::current_num_threads()).max(1));
    check_in_ranges(history, repeatable_reads, range_len)
}

/// [`check`] with pass 2 in tasks of `range_len` transactions (the result does not depend on
/// it).
fn check_in_ranges(history: &History, repeatable_reads: bool, range_len: usize) -> ReadCheck {
    let ops = history.ops();
    let txns = history.txns();
    let key_count = history.key_count();
    let mut issues = Vec::new();
    let mut external_writer = Vec::with_capacity(ops.len());

    // Pre-pass: which writes are their transaction's final write of the key (read by others).
    let mut is_final = vec![0u64; ops.len().div_ceil(64)];
    let mut stamp = vec![0u32; key_count];
    for (t, txn) in txns.iter().enumerate() {
        let mark = t as u32 + 1;
        for op in txn.ops().rev() {
            let o = &ops[op as usize];
            if o.kind == OpKind::Write && stamp[o.key as usize] != mark {
                stamp[o.key as usize] = mark;
                is_final[op as usize / 64] |= 1 << (op % 64);
            }
        }
    }

    // Main pass over the committed transactions, in program order.
    // Pass 2, per transaction (its state is the transaction's own): ranges of transactions in
    // parallel, each with its own scratch; a range's operations are contiguous, so the parts
    // concatenate, in order, into the result of one pass.
    drop(stamp);
    // Which transactions committed, one bit each (1 MB of transactions is 128 KB of bits: it
    // stays in cache, where the transactions, read at random writers, would not).
    let mut committed = vec![0u64; txns.len().div_ceil(64)];
    for (t, txn) in txns.iter().enumerate() {
        if txn.is_committed() {
            committed[t / 64] |= 1 << (t % 64);
        }
    }
    let txn_total = txns.len();
    let range_len = range_len.max(1);
    let starts: Vec<usize> = (0..txn_total).step_by(range_len).collect();
    let pool = ScratchPool::new();
    let parts: Vec<(Vec<ReadIssue>, Vec<TxnId>)> = starts
        .par_iter()
        .map(|&start| {
            pool.with(
                || Scratch::new(key_count),
                |scratch| {
                    let end = start.saturating_add(range_len).min(txn_total);
                    let first_op = txns[start].ops().start;
                    let end_op = txns[end - 1].ops().end;
                    let mut part = Part {
                        issues: Vec::new(),
                        external_writer: vec![NONE; (end_op - first_op) as usize],
                        first_op,
                    };
                    for t in start..end {
                        check_txn(
                            history,
                            t,
                            repeatable_reads,
                            Bits {
                                is_final: &is_final,
                                committed: &committed,
                            },
                            scratch,
                            &mut part,
                        );
                    }
                    (part.issues, part.external_writer)
                },
            )
        })
        .collect();
    for (part_issues, part_writers) in parts {
        issues.extend(part_issues);
        external_writer.extend(part_writers);
    }
    ReadCheck {
        issues,
        external_writer,
    }
}

/// Transactions per parallel task of pass 2, at least.
const TXNS_PER_TASK: usize = 4096;

/// Per-task scratch of [`check_txn`], indexed by key; its marks are transaction ids + 1, so
/// one scratch serves any sequence of transactions without clearing.
struct Scratch {
    /// The last own write of each key so far.
    own_stamp: Vec<u32>,
    own_last: Vec<u32>,
    /// The first external read of each key.
    first_stamp: Vec<u32>,
    first_read: Vec<u32>,
    first_writer: Vec<u32>,
}

impl Scratch {
    fn new(key_count: usize) -> Self {
        Scratch {
            own_stamp: vec![0; key_count],
            own_last: vec![0; key_count],
            first_stamp: vec![0; key_count],
            first_read: vec![0; key_count],
            first_writer: vec![0; key_count],
        }
    }
}

/// What pass 2 finds over a range of transactions whose operations start at `first_op`.
struct Part {
    issues: Vec<ReadIssue>,
    external_writer: Vec<TxnId>,
    first_op: OpId,
}

/// Bit sets over operations and transactions, read by pass 2.
#[derive(Clone, Copy)]
struct Bits<'a> {
    /// The writes that are their transaction's final write of their key.
    is_final: &'a [u64],
    /// The committed transactions.
    committed: &'a [u64],
}

#[inline]
fn bit(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] & (1 << (i % 64)) != 0
}

/// Pass 2 for transaction `t`.
fn check_txn(
    history: &History,
    t: usize,
    repeatable_reads: bool,
    bits: Bits<'_>,
    scratch: &mut Scratch,
    part: &mut Part,
) {
    let ops = history.ops();
    let read_from = history.read_from_raw();
    let read_from_txn = history.read_from_txn_raw();
    let txns = history.txns();
    let Scratch {
        own_stamp,
        own_last,
        first_stamp,
        first_read,
        first_writer,
    } = scratch;
    let issues = &mut part.issues;
    let txn = &txns[t];
    if !txn.is_committed() {
        return;
    }
    let t = t as TxnId;
    let mark = t + 1;
    for op in txn.ops() {
        let o = &ops[op as usize];
        let key = o.key as usize;
        if o.kind == OpKind::Write {
            own_stamp[key] = mark;
            own_last[key] = op;
            continue;
        }
        let w = read_from[op as usize];
        if w == NO_WRITER {
            issues.push(ReadIssue {
                anomaly: Anomaly::ThinAirRead,
                read: op,
                related: NONE,
            });
            continue;
        }
        let writer = read_from_txn[op as usize];
        if !bit(bits.committed, writer) {
            issues.push(ReadIssue {
                anomaly: Anomaly::AbortedRead,
                read: op,
                related: w,
            });
            continue;
        }
        if writer == t {
            if w > op {
                issues.push(ReadIssue {
                    anomaly: Anomaly::FutureRead,
                    read: op,
                    related: w,
                });
            } else if own_stamp[key] == mark && own_last[key] != w {
                issues.push(ReadIssue {
                    anomaly: Anomaly::NotMyLastWrite,
                    read: op,
                    related: own_last[key],
                });
            }
            continue;
        }
        part.external_writer[(op - part.first_op) as usize] = writer;
        if own_stamp[key] == mark {
            issues.push(ReadIssue {
                anomaly: Anomaly::NotMyOwnWrite,
                read: op,
                related: own_last[key],
            });
        }
        if !bit(bits.is_final, w) {
            // The related final write is looked up when reported (it costs a scan of
            // the writer).
            issues.push(ReadIssue {
                anomaly: Anomaly::IntermediateRead,
                read: op,
                related: NONE,
            });
        }
        if repeatable_reads {
            if first_stamp[key] != mark {
                first_stamp[key] = mark;
                first_read[key] = op;
                first_writer[key] = writer;
            } else if first_writer[key] != writer {
                issues.push(ReadIssue {
                    anomaly: Anomaly::NonRepeatableRead,
                    read: op,
                    related: first_read[key],
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, KeyId, ReadFrom};

    fn issues(h: &History, repeatable: bool) -> Vec<(Anomaly, u32, u32)> {
        check(h, repeatable)
            .issues
            .iter()
            .map(|i| {
                let line = |op: u32| if op == NONE { 0 } else { h.op(op).line };
                (i.anomaly, line(i.read), line(i.related))
            })
            .collect()
    }

    /// Many transactions with every read issue: thin-air, intermediate, aborted,
    /// not-my-own-write and non-repeatable reads.
    fn many_issues() -> History {
        let mut b = HistoryBuilder::new("issues");
        b.initial_value(0);
        let keys: Vec<_> = (0..4).map(|k| b.key(&format!("k{k}"))).collect();
        let sessions: Vec<_> = (0..5).map(|s| b.session(Some(s))).collect();
        let mut prev = None;
        let mut line = 1;
        for t in 0..300u32 {
            let txn = b.begin(sessions[(t % 5) as usize], None);
            let (x, px) = (keys[(t % 4) as usize], keys[((t + 3) % 4) as usize]);
            for v in [2 * t + 1, 2 * t + 2] {
                b.write(txn, x, Some(u64::from(v)), line);
                line += 1;
            }
            if let Some(prev) = prev {
                let reads: &[(KeyId, ReadFrom)] = match t % 6 {
                    0 => &[(px, ReadFrom::Value(999_999))],
                    1 => &[(px, ReadFrom::Op(prev, 0))],
                    2 => &[(px, ReadFrom::Op(prev, 1)), (px, ReadFrom::Initial)],
                    3 => &[(x, ReadFrom::Initial)],
                    4 => &[(px, ReadFrom::Op(prev, 1))],
                    _ => &[(px, ReadFrom::Op(prev, 1))],
                };
                for &(key, from) in reads {
                    b.read(txn, key, None, from, line);
                    line += 1;
                }
            }
            if t % 6 == 4 {
                b.abort(txn); // the next transaction reads from it
            }
            prev = Some(txn);
        }
        b.build().unwrap()
    }

    #[test]
    fn any_task_size_gives_the_result_of_one_pass() {
        let h = many_issues();
        for repeatable in [false, true] {
            let one_pass = check_in_ranges(&h, repeatable, usize::MAX);
            let kinds: std::collections::BTreeSet<String> = one_pass
                .issues
                .iter()
                .map(|i| format!("{:?}", i.anomaly))
                .collect();
            assert!(
                kinds.len() >= 4,
                "too few kinds of issue to compare: {kinds:?}"
            );
            for range_len in [1, 2, 7, 50] {
                let r = check_in_ranges(&h, repeatable, range_len);
                assert_eq!(r.issues, one_pass.issues, "{repeatable} {range_len}");
                assert_eq!(r.external_writer, one_pass.external_writer, "{range_len}");
            }
        }
    }

    #[test]
    fn each_read_anomaly_by_name() {
        let mut b = HistoryBuilder::new("rc");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.write(t1, x, Some(1), 1);
        b.write(t1, x, Some(2), 2); // x=1 is intermediate
        b.read(t1, y, Some(9), ReadFrom::Value(9), 3); // future read of its own y=9
        b.write(t1, y, Some(9), 4);
        let ta = b.begin(s1, None);
        b.write(ta, y, Some(5), 5);
        b.abort(ta);
        let t2 = b.begin(s2, None);
        b.read(t2, x, Some(1), ReadFrom::Value(1), 6); // IntermediateRead
        b.read(t2, y, Some(5), ReadFrom::Value(5), 7); // AbortedRead
        b.read(t2, y, Some(77), ReadFrom::Value(77), 8); // ThinAirRead
        b.write(t2, y, Some(6), 9);
        b.write(t2, y, Some(7), 10);
        b.read(t2, y, Some(6), ReadFrom::Value(6), 11); // NotMyLastWrite
        b.read(t2, y, Some(9), ReadFrom::Value(9), 12); // NotMyOwnWrite
        b.read(t2, y, Some(7), ReadFrom::Value(7), 13); // fine
        let h = b.build().unwrap();
        assert_eq!(
            issues(&h, false),
            vec![
                (Anomaly::FutureRead, 3, 4),
                (Anomaly::IntermediateRead, 6, 0),
                (Anomaly::AbortedRead, 7, 5),
                (Anomaly::ThinAirRead, 8, 0),
                (Anomaly::NotMyLastWrite, 11, 10),
                (Anomaly::NotMyOwnWrite, 12, 10),
            ]
        );
    }

    #[test]
    fn non_repeatable_read_only_when_asked() {
        let mut b = HistoryBuilder::new("j");
        let x = b.key("x");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.write(t1, x, Some(1), 1);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Initial, 2);
        b.read(t2, x, Some(1), ReadFrom::Value(1), 3);
        b.read(t2, x, None, ReadFrom::Initial, 4);
        let h = b.build().unwrap();
        assert!(issues(&h, false).is_empty());
        assert_eq!(issues(&h, true), vec![(Anomaly::NonRepeatableRead, 3, 2)]);
    }

    #[test]
    fn aborted_transactions_are_not_checked_and_external_writers_recorded() {
        let mut b = HistoryBuilder::new("ab");
        let x = b.key("x");
        let s1 = b.session(None);
        let t1 = b.begin(s1, None);
        b.read(t1, x, Some(3), ReadFrom::Value(3), 1);
        b.abort(t1);
        let t2 = b.begin(s1, None);
        b.read(t2, x, None, ReadFrom::Initial, 2);
        b.write(t2, x, Some(4), 3);
        b.read(t2, x, Some(4), ReadFrom::Value(4), 4);
        let h = b.build().unwrap();
        let rc = check(&h, true);
        assert!(rc.issues.is_empty());
        let t2ops = h.txn(2).ops();
        assert_eq!(rc.external_writer[t2ops.start as usize], 0);
        assert_eq!(rc.external_writer[t2ops.start as usize + 2], NONE);
        assert_eq!(rc.external_writer[h.txn(1).ops().start as usize], NONE);
    }
}
