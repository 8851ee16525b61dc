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
    let ops = history.ops();
    let read_from = history.read_from_raw();
    let txns = history.txns();
    let key_count = history.key_count();
    let mut issues = Vec::new();
    let mut external_writer = vec![NONE; ops.len()];

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
    let mut own_stamp = stamp; // reused: the last own write of each key so far
    own_stamp.fill(0);
    let mut own_last = vec![0u32; key_count];
    let mut first_stamp = vec![0u32; key_count]; // the first external read of each key
    let mut first_read = vec![0u32; key_count];
    let mut first_writer = vec![0u32; key_count];
    for (t, txn) in txns.iter().enumerate() {
        if !txn.is_committed() {
            continue;
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
            let writer = ops[w as usize].txn;
            if !txns[writer as usize].is_committed() {
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
            external_writer[op as usize] = writer;
            if own_stamp[key] == mark {
                issues.push(ReadIssue {
                    anomaly: Anomaly::NotMyOwnWrite,
                    read: op,
                    related: own_last[key],
                });
            }
            if is_final[w as usize / 64] & (1 << (w % 64)) == 0 {
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
    ReadCheck {
        issues,
        external_writer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

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
