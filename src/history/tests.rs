use super::*;

fn two_sessions() -> History {
    let mut b = HistoryBuilder::new("test");
    let x = b.key("x");
    let y = b.key("y");
    let s1 = b.session(Some(7));
    let s2 = b.session(Some(9));
    // Interleaved on purpose: the builder groups by session.
    let t1 = b.begin(s1, Some(100));
    let t3 = b.begin(s2, Some(300));
    b.write(t1, x, Some(1), 1);
    b.read(t3, x, Some(1), ReadFrom::Value(1), 2);
    b.write(t3, y, Some(5), 3);
    b.read(t3, y, Some(5), ReadFrom::Value(5), 4);
    let t2 = b.begin(s1, Some(200));
    b.read(t2, y, None, ReadFrom::Initial, 5);
    b.read(t2, x, Some(42), ReadFrom::Value(42), 6);
    b.abort(t2);
    b.build().unwrap()
}

#[test]
fn layout_is_session_major() {
    let h = two_sessions();
    assert_eq!(h.txn_count(), 4);
    assert_eq!(h.sessions().len(), 2);
    assert_eq!(h.sessions()[0].txns(), 1..3);
    assert_eq!(h.sessions()[1].txns(), 3..4);
    assert_eq!(h.txn(1).external_id, Some(100));
    assert_eq!(h.txn(2).external_id, Some(200));
    assert_eq!(h.txn(2).status, TxnStatus::Aborted);
    assert_eq!(h.txn(3).external_id, Some(300));
    assert_eq!(h.txn(2).index_in_session, 1);
    assert!(h.so_before(0, 3));
    assert!(h.so_before(1, 2));
    assert!(!h.so_before(2, 1));
    assert!(!h.so_before(1, 3));
    assert_eq!(h.so_predecessor(1), Some(0));
    assert_eq!(h.so_predecessor(2), Some(1));
}

#[test]
fn reads_resolve() {
    let h = two_sessions();
    // t0 writes x and y implicitly.
    assert_eq!(h.txn_ops(0).len(), 2);
    assert_eq!(h.implicit_initial_writes(), 2);
    let t3 = h.txn(3).ops();
    let r_x = t3.start;
    let r_y = t3.start + 2;
    assert_eq!(h.writer_txn(r_x), Some(1));
    assert!(h.is_external_read(r_x));
    assert!(h.is_internal_read(r_y));
    let t2 = h.txn(2).ops();
    assert_eq!(h.writer_txn(t2.start), Some(0));
    assert_eq!(h.read_from(t2.start + 1), None);
    assert_eq!(
        h.unresolved_reason(t2.start + 1),
        Some(Unresolved::NoSuchWrite)
    );
    let edges: Vec<_> = h.wr_edges().collect();
    assert_eq!(edges, vec![(0, 2, 1), (1, 3, 0)]);
}

#[test]
fn indexes() {
    let h = two_sessions();
    assert_eq!(h.writers_of(0), &[0, 1]);
    assert_eq!(h.writers_of(1), &[0, 3]);
    assert_eq!(h.readers_of(0), &[2, 3]); // t2's unresolved read counts
    assert_eq!(h.readers_of(1), &[2]); // t3's read of y is internal
    assert_eq!(h.keys_written(3), &[1]);
    assert_eq!(h.keys_read(3), &[0, 1]);
    assert_eq!(h.last_write(1, 0), Some(h.txn(1).ops().start));
    let s = h.stats();
    assert_eq!(
        (s.committed, s.aborted, s.reads, s.writes, s.keys),
        (2, 1, 4, 2, 2)
    );
    assert_eq!(s.internal_reads, 1);
    assert_eq!(s.unresolved_reads, 1);
}

#[test]
fn duplicate_write_is_an_error_with_line() {
    let mut b = HistoryBuilder::new("dup.txt");
    let x = b.key("x");
    let s = b.session(None);
    let t1 = b.begin(s, None);
    b.write(t1, x, Some(3), 4);
    let t2 = b.begin(s, None);
    b.write(t2, x, Some(3), 9);
    let e = b.build().unwrap_err();
    assert_eq!(e.line(), 9);
    assert!(
        e.to_string().starts_with("dup.txt:9: duplicate write"),
        "{e}"
    );
    assert!(e.to_string().contains("line 4"), "{e}");
}

#[test]
fn duplicates_allowed_are_ambiguous() {
    let mut b = HistoryBuilder::new("dup");
    b.allow_duplicate_writes(true);
    let x = b.key("x");
    let s = b.session(None);
    let t1 = b.begin(s, None);
    b.write(t1, x, Some(3), 1);
    b.write(t1, x, Some(3), 2);
    let t2 = b.begin(s, None);
    b.read(t2, x, Some(3), ReadFrom::Value(3), 3);
    let h = b.build().unwrap();
    assert_eq!(h.unresolved(), &[(2 + 1, Unresolved::Ambiguous)]);
}

#[test]
fn initial_value_resolves_and_is_reserved() {
    let mut b = HistoryBuilder::new("plume");
    b.initial_value(0);
    let x = b.key("x");
    let s = b.session(None);
    let t = b.begin(s, None);
    b.read(t, x, Some(0), ReadFrom::Value(0), 1);
    let h = b.build().unwrap();
    assert_eq!(h.writer_txn(h.txn(1).ops().start), Some(INITIAL_TXN));

    let mut b = HistoryBuilder::new("plume");
    b.initial_value(0);
    let x = b.key("x");
    let s = b.session(None);
    let t = b.begin(s, None);
    b.write(t, x, Some(0), 5);
    assert_eq!(b.build().unwrap_err().line(), 5);
}

#[test]
fn read_from_txn_implies_write_and_handles_local_reads() {
    let mut b = HistoryBuilder::new("trace");
    let x = b.key("x");
    let y = b.key("y");
    let s1 = b.session(Some(1));
    let s2 = b.session(Some(2));
    let t1 = b.begin(s1, Some(0));
    b.write(t1, x, None, 1);
    let t2 = b.begin(s2, Some(0));
    b.read(t2, y, None, ReadFrom::Txn(t1), 2); // t1 never wrote y: implied
    b.write(t2, x, None, 3);
    b.read(t2, x, None, ReadFrom::Txn(t2), 4); // local read
    b.read(t2, x, None, ReadFrom::Txn(BuilderTxn::INITIAL), 5);
    let h = b.build().unwrap();
    assert_eq!(h.txn_ops(1).len(), 2);
    let implied = h.txn(1).ops().start + 1;
    assert_eq!(h.op(implied).key, y);
    assert_eq!(h.op(implied).line, 0);
    let t2ops = h.txn(2).ops().start;
    assert_eq!(h.read_from(t2ops), Some(implied));
    assert_eq!(h.read_from(t2ops + 2), Some(t2ops + 1));
    assert_eq!(h.writer_txn(t2ops + 3), Some(0));
    assert_eq!(h.writers_of(y), &[0, 1]);
}

#[test]
fn timestamps_validated() {
    let mut b = HistoryBuilder::new("ts");
    let s = b.session(None);
    let t = b.begin_at(s, None, 12);
    b.set_timestamps(
        t,
        Timestamps {
            start: 5,
            commit: 3,
        },
    );
    assert_eq!(b.build().unwrap_err().line(), 12);
}

#[test]
fn same_content_ignores_lines_and_initial_explicitness() {
    let h = two_sessions();
    let mut b = HistoryBuilder::new("other");
    let x = b.key("x");
    let y = b.key("y");
    b.write(BuilderTxn::INITIAL, y, None, 1);
    let s1 = b.session(Some(7));
    let s2 = b.session(Some(9));
    let t1 = b.begin(s1, Some(100));
    b.write(t1, x, Some(1), 11);
    let t2 = b.begin(s1, Some(200));
    b.read(t2, y, None, ReadFrom::Initial, 12);
    b.read(t2, x, Some(42), ReadFrom::Value(42), 13);
    b.abort(t2);
    let t3 = b.begin(s2, Some(300));
    b.read(t3, x, Some(1), ReadFrom::Value(1), 14);
    b.write(t3, y, Some(5), 15);
    b.read(t3, y, Some(5), ReadFrom::Value(5), 16);
    let g = b.build().unwrap();
    h.same_content(&g).unwrap();
}

#[test]
fn read_from_op_names_the_exact_write() {
    let mut b = HistoryBuilder::new("json");
    let x = b.key("x");
    let s = b.session(None);
    let t1 = b.begin(s, None);
    b.write(t1, x, None, 1);
    b.write(t1, x, None, 2);
    let t2 = b.begin(s, None);
    b.read(t2, x, None, ReadFrom::Op(t1, 0), 3); // the overwritten (intermediate) write
    b.write(t2, x, None, 4);
    b.read(t2, x, None, ReadFrom::Op(t1, 1), 5);
    let h = b.build().unwrap();
    let t1ops = h.txn(1).ops().start;
    let t2ops = h.txn(2).ops().start;
    assert_eq!(h.read_from(t2ops), Some(t1ops));
    assert_eq!(h.read_from(t2ops + 2), Some(t1ops + 1));

    // Out of range, and not a write of the key: input errors at the read's line.
    let mut b = HistoryBuilder::new("json");
    let x = b.key("x");
    let s = b.session(None);
    let t1 = b.begin(s, None);
    b.write(t1, x, None, 1);
    b.read(t1, x, None, ReadFrom::Op(t1, 3), 2);
    assert_eq!(b.build().unwrap_err().line(), 2);
    let mut b = HistoryBuilder::new("json");
    let x = b.key("x");
    let y = b.key("y");
    let s = b.session(None);
    let t1 = b.begin(s, None);
    b.write(t1, y, None, 1);
    b.read(t1, x, None, ReadFrom::Op(t1, 0), 2);
    assert_eq!(b.build().unwrap_err().line(), 2);
}

/// Observed anomalies name final transaction ids and say which levels they violate.
#[test]
fn observed_anomalies_map_to_final_ids() {
    use crate::history::Level;
    let mut b = HistoryBuilder::new("test");
    let x = b.key("x");
    let s1 = b.session(None);
    let s2 = b.session(None);
    // Begun in the other order than sessions lay them out.
    let late = b.begin(s2, None);
    let early = b.begin(s1, None);
    b.write(early, x, Some(1), 1);
    b.read(late, x, Some(1), ReadFrom::Value(1), 2);
    b.observed_anomaly(
        crate::history::AnomalyId::IncompatibleOrder,
        &[late, early],
        Some(2),
        "key x: reads [1] and [2]",
    );
    let h = b.build().unwrap();
    let a = &h.observed_anomalies()[0];
    assert_eq!(a.txns, vec![2, 1]);
    assert_eq!((a.name, a.line), ("incompatible-order", Some(2)));
    for level in Level::ALL {
        assert!(a.violates(level), "{level}");
    }
    let g1a_free = ObservedAnomaly {
        weakest_level_forbidding: Level::Snapshot,
        ..a.clone()
    };
    assert!(!g1a_free.violates(Level::Causal) && g1a_free.violates(Level::Serializable));
    assert!(two_sessions().observed_anomalies().is_empty());
}

/// `ReadFrom::ValueOrInitial`: the write of the value when there is one, else the initial
/// write (dbcop's version 0).
#[test]
fn value_or_initial_reads() {
    let mut b = HistoryBuilder::new("test");
    let (x, y) = (b.key("x"), b.key("y"));
    let s = b.session(None);
    let t1 = b.begin(s, None);
    b.write(t1, x, Some(0), 1);
    let t2 = b.begin(s, None);
    b.read(t2, x, Some(0), ReadFrom::ValueOrInitial(0), 2);
    b.read(t2, y, Some(0), ReadFrom::ValueOrInitial(0), 2);
    let h = b.build().unwrap();
    let r = h.txn(2).ops().start;
    assert_eq!(h.writer_txn(r), Some(1));
    assert_eq!(h.writer_txn(r + 1), Some(INITIAL_TXN));
}

/// A builder of many transactions in interleaved sessions, with every kind of read (by value,
/// by transaction, local, by operation, initial, value-or-initial, unknown, thin air,
/// ambiguous) and, at each transaction of `bad_op_at`, a read naming a missing operation.
fn varied_builder(txn_total: u32, bad_op_at: &[u32]) -> HistoryBuilder {
    let mut b = HistoryBuilder::new("varied");
    b.initial_value(0);
    b.allow_duplicate_writes(true);
    let keys: Vec<KeyId> = (0..5).map(|k| b.key(&format!("k{k}"))).collect();
    let sessions: Vec<_> = (0..4).map(|s| b.session(Some(s))).collect();
    let mut txns = Vec::new();
    let mut line = 1;
    for t in 0..txn_total {
        let txn = b.begin(sessions[(t * 7 % 4) as usize], Some(u64::from(t)));
        let x = keys[(t % 5) as usize];
        let y = keys[(t * 3 % 5) as usize];
        // Values: unique per key except every 50th transaction's, which repeats one and reads
        // it (ambiguous).
        // (Transaction t - 5 wrote t - 4 to the same key.)
        let value = if t % 50 == 49 {
            u64::from(t) - 4
        } else {
            u64::from(t) + 1
        };
        b.write(txn, x, Some(value), line);
        line += 1;
        b.read(txn, x, None, ReadFrom::Txn(txn), line);
        line += 1;
        if t % 50 == 49 {
            b.read(txn, x, None, ReadFrom::Value(u64::from(t) - 4), line);
            line += 1;
        }
        if let Some(&prev) = txns.last() {
            let from = match t % 6 {
                0 => ReadFrom::Value(u64::from(t)),
                1 => ReadFrom::Txn(prev),
                2 => ReadFrom::Op(prev, 0),
                3 => ReadFrom::ValueOrInitial(u64::from(t) * 1000),
                4 => ReadFrom::Unknown,
                _ => ReadFrom::Initial,
            };
            let key = if t % 6 == 2 {
                keys[((t - 1) % 5) as usize]
            } else {
                y
            };
            b.read(txn, key, None, from, line);
            line += 1;
        }
        if bad_op_at.contains(&t) {
            b.read(txn, x, None, ReadFrom::Op(txns[0], 9), line);
            line += 1;
        }
        b.read(
            txn,
            y,
            Some(123_456_789),
            ReadFrom::Value(123_456_789),
            line,
        ); // thin air
        line += 1;
        txns.push(txn);
    }
    b
}

#[test]
fn any_task_size_of_read_resolution_gives_the_one_pass_history() {
    let one_pass = format!("{:?}", varied_builder(600, &[]).build_in_ranges(usize::MAX));
    assert!(one_pass.contains("Ambiguous") && one_pass.contains("NoSuchWrite"));
    for ops_per_task in [1, 2, 7, 64, 1000] {
        let h = varied_builder(600, &[]).build_in_ranges(ops_per_task);
        assert_eq!(
            format!("{h:?}"),
            one_pass,
            "tasks of {ops_per_task} operations"
        );
    }
    // Two bad reads in one session (transactions 150 and 450): the first one in operation
    // order is reported, in every task size.
    let first = varied_builder(600, &[150])
        .build_in_ranges(usize::MAX)
        .unwrap_err();
    assert!(first.to_string().contains("names operation 9"), "{first}");
    for ops_per_task in [1, 2, 7, 64, usize::MAX] {
        let e = varied_builder(600, &[150, 450])
            .build_in_ranges(ops_per_task)
            .unwrap_err();
        assert_eq!(e.to_string(), first.to_string(), "tasks of {ops_per_task}");
    }
}

#[test]
fn histories_without_the_facts_have_none() {
    let h = two_sessions();
    assert!(h.locked_reads().is_empty());
    assert!(h.sessions_after().is_empty());
    assert!(!h.is_locked_read(0));
}

fn build_error(f: impl FnOnce(&mut HistoryBuilder)) -> String {
    let mut b = HistoryBuilder::new("bad");
    f(&mut b);
    b.build().unwrap_err().to_string()
}

#[test]
fn bad_locked_reads_and_session_orders_are_input_errors() {
    // A locked write.
    let e = build_error(|b| {
        let x = b.key("x");
        let s = b.session(None);
        let t = b.begin(s, None);
        b.lock_read(b.op_count());
        b.write(t, x, Some(1), 4);
    });
    assert!(e.contains("bad:4") && e.contains("must be a read"), "{e}");
    // A locked read whose transaction writes the key only before it, or another key after.
    let e = build_error(|b| {
        let x = b.key("x");
        let y = b.key("y");
        let s = b.session(None);
        let t = b.begin(s, None);
        b.write(t, x, Some(1), 1);
        b.lock_read(b.op_count());
        b.read(t, x, Some(1), ReadFrom::Value(1), 2);
        b.write(t, y, Some(1), 3);
    });
    assert!(e.contains("bad:2") && e.contains("does not write"), "{e}");
    // An operation never added.
    let e = build_error(|b| {
        b.lock_read(3);
    });
    assert!(e.contains("operation 3"), "{e}");
    // Unknown sessions, a session after itself, a cycle.
    let e = build_error(|b| {
        let s = b.session(None);
        b.session_after(s, 5);
    });
    assert!(e.contains("session 6 does not exist"), "{e}");
    let e = build_error(|b| {
        let s = b.session(None);
        b.session_after(s, s);
    });
    assert!(e.contains("after itself"), "{e}");
    let e = build_error(|b| {
        let s = [b.session(None), b.session(None), b.session(None)];
        b.session_after(s[1], s[0]);
        b.session_after(s[2], s[1]);
        b.session_after(s[0], s[2]);
    });
    assert!(e.contains("cycle") && e.contains("1, 2, 3"), "{e}");
}

#[test]
fn an_aborted_statement_may_lack_its_write() {
    // The UPDATE's read was recorded, then the statement failed and the transaction aborted.
    let mut b = HistoryBuilder::new("aborted");
    let x = b.key("x");
    let s = b.session(None);
    let t = b.begin(s, None);
    b.lock_read(b.op_count());
    b.read(t, x, None, ReadFrom::Initial, 1);
    b.abort(t);
    let t2 = b.begin(s, None);
    b.lock_read(b.op_count());
    b.read(t2, x, None, ReadFrom::Initial, 2);
    b.write(t2, x, Some(1), 3);
    let h = b.build().unwrap();
    assert_eq!(h.locked_reads(), &[h.txn(2).ops().start]);
}
