//! Hand-made histories with verdicts known from the papers.

use super::*;
use crate::check::Level::{self, *};
use crate::history::{HistoryBuilder, ReadFrom};

/// Builds a history from sessions of transactions written as `"wx1 ry0"`: `w`/`r`, a one-letter
/// key, a value (reads name the value they return; 0 is the initial value); a `!` token aborts
/// the transaction.
fn hist(sessions: &[&[&str]]) -> History {
    let mut b = HistoryBuilder::new("oracle-test");
    b.initial_value(0);
    for txns in sessions {
        let s = b.session(None);
        for txn in *txns {
            let t = b.begin(s, None);
            for token in txn.split_whitespace() {
                if token == "!" {
                    b.abort(t);
                    continue;
                }
                let key = b.key(&token[1..2]);
                let value: u64 = token[2..].parse().unwrap();
                match &token[..1] {
                    "w" => b.write(t, key, Some(value), 0),
                    "r" => b.read(t, key, Some(value), ReadFrom::Value(value), 0),
                    _ => panic!("bad token {token}"),
                }
            }
        }
    }
    b.build().unwrap()
}

/// Asserts the verdict of every listed level.
fn expect(h: &History, verdicts: &[(Level, bool)]) {
    for &(level, expected) in verdicts {
        assert_eq!(
            satisfies(h, level),
            Some(expected),
            "level {level}: expected {expected}"
        );
    }
}

/// Asserts that `h` satisfies exactly the levels in `yes` (and none of the others).
fn exactly(h: &History, yes: &[Level]) {
    for level in Level::ALL {
        assert_eq!(
            satisfies(h, level),
            Some(yes.contains(&level)),
            "level {level}"
        );
    }
}

#[test]
fn serial_history_satisfies_everything() {
    let h = hist(&[&["wx1 wy1", "rx1 ry1 wx2"], &["rx0"]]);
    // s2 reads the initial x: serializable with s2 first.
    exactly(&h, &Level::ALL);
}

#[test]
fn write_skew_is_si_not_ser() {
    let h = hist(&[&["rx0 ry0 wx1"], &["rx0 ry0 wy2"]]);
    exactly(
        &h,
        &[
            ReadCommitted,
            CutIsolation,
            ReadAtomic,
            Causal,
            Prefix,
            Snapshot,
        ],
    );
}

#[test]
fn lost_update_is_pc_not_si() {
    let h = hist(&[&["rx0 wx1"], &["rx0 wx2"]]);
    exactly(
        &h,
        &[ReadCommitted, CutIsolation, ReadAtomic, Causal, Prefix],
    );
}

#[test]
fn long_fork_is_cc_not_pc() {
    let h = hist(&[&["wx1"], &["wy1"], &["rx1 ry0"], &["rx0 ry1"]]);
    exactly(&h, &[ReadCommitted, CutIsolation, ReadAtomic, Causal]);
}

#[test]
fn fractured_read_is_rc_not_ra() {
    // t3 sees x from t1 and y from t2, each of which wrote both keys.
    let h = hist(&[&["wx1 wy1"], &["wx2 wy2"], &["rx1 ry2"]]);
    exactly(&h, &[ReadCommitted, CutIsolation]);
    // Seeing y's initial value first and then t1's x: RC allows it, RA does not.
    let h = hist(&[&["wx1 wy1"], &["ry0 rx1"]]);
    exactly(&h, &[ReadCommitted, CutIsolation]);
    // The other way round it is a monotonic-read (RC) violation, because the initial
    // transaction comes first: t3 saw t1, then read the older y.
    let h = hist(&[&["wx1 wy1"], &["rx1 ry0"]]);
    exactly(&h, &[CutIsolation]);
}

#[test]
fn plume_pitfall_one_is_ra_not_cc() {
    // plume.md §5 point 1: t1 = W(x,1)W(q,1), t2 = W(x,2)W(y,2), t3 = R(y,2)R(x,1),
    // tm = R(q,1)W(w,7), tc = R(w,7)R(x,2), each in its own session.
    let h = hist(&[
        &["wx1 wq1"],
        &["wx2 wy2"],
        &["ry2 rx1"],
        &["rq1 ww7"],
        &["rw7 rx2"],
    ]);
    exactly(&h, &[ReadCommitted, CutIsolation, ReadAtomic]);
}

#[test]
fn causal_violation_through_a_chain_is_ra_not_cc() {
    // AWDIT Fig. 4c shape: t3 sees t2, which saw t1, but reads x from before t1.
    let h = hist(&[&["wx1"], &["rx1 wy1"], &["ry1 rx0"]]);
    exactly(&h, &[ReadCommitted, CutIsolation, ReadAtomic]);
}

#[test]
fn stale_read_in_session_is_rc_not_ra() {
    // plume.md §5 point 2: one session W(x,1); W(x,2); R(x,1).
    let h = hist(&[&["wx1", "wx2", "rx1"]]);
    exactly(&h, &[ReadCommitted, CutIsolation]);
}

#[test]
fn non_repeatable_read_is_rc_but_not_ci_nor_ra() {
    let h = hist(&[&["wx1"], &["wx2"], &["rx1 rx2"]]);
    exactly(&h, &[ReadCommitted]);
    // Reading back the first value again breaks RC too: co(t1,t2) and co(t2,t1).
    let h = hist(&[&["wx1"], &["wx2"], &["rx1 rx2 rx1"]]);
    exactly(&h, &[]);
}

#[test]
fn monotonic_read_violation_is_ci_not_rc() {
    // AWDIT Fig. 4a shape: t1 →so t2 both write x; t3 observes t2 (via y), then reads x from
    // t1. RC forces co(t2, t1) against so(t1, t2). No key is read twice, so CI holds.
    let h = hist(&[&["wx1", "wx2 wy2"], &["ry2 rx1"]]);
    exactly(&h, &[CutIsolation]);
    // Read in the other order, RC has nothing to say (but RA does).
    let h = hist(&[&["wx1", "wx2 wy2"], &["rx1 ry2"]]);
    exactly(&h, &[ReadCommitted, CutIsolation]);
}

#[test]
fn biswas_enea_pitfall_nine_is_pc_not_si() {
    // biswas-enea.md §5 point 9.
    let h = hist(&[&["wx2 wy2"], &["ry0 wx1"], &["ry2 rx1"]]);
    exactly(
        &h,
        &[ReadCommitted, CutIsolation, ReadAtomic, Causal, Prefix],
    );
}

#[test]
fn read_consistency_violations_fail_every_level() {
    let cases: [(&str, History); 7] = [
        ("ThinAirRead", hist(&[&["wx1"], &["rx5"]])),
        ("AbortedRead", hist(&[&["wx1 !"], &["rx1"]])),
        ("FutureRead", hist(&[&["rx1 wx1"]])),
        ("NotMyOwnWrite", hist(&[&["wx1"], &["wx2 rx1"]])),
        ("NotMyLastWrite", hist(&[&["wx1 wx2 rx1"]])),
        ("IntermediateRead", hist(&[&["wx1 wx2"], &["rx1"]])),
        ("ThinAirRead", hist(&[&["ry0 rx7"]])),
    ];
    for (name, h) in &cases {
        assert_eq!(read_consistency_violation(h), Some(*name));
        exactly(h, &[]);
    }
}

#[test]
fn cyclic_so_wr_fails_every_level() {
    let h = hist(&[&["rx2 wy1"], &["ry1 wx2"]]);
    assert_eq!(read_consistency_violation(&h), None);
    exactly(&h, &[]);
    // Reading from a session's later transaction is fine on its own…
    let h = hist(&[&["rx0 wy1", "wx2"], &["rx2 wz1"]]);
    expect(&h, &[(Serializable, true)]);
    // …but a cycle through session order is not: t1 reads z from t3, t1 →so t2 →wr t3.
    let h = hist(&[&["rz1", "wx2"], &["rx2 wz1"]]);
    exactly(&h, &[]);
}

#[test]
fn internal_reads_are_fine_and_no_wr_edge() {
    let h = hist(&[&["wx1 rx1 wx2 rx2"], &["rx2"]]);
    assert_eq!(read_consistency_violation(&h), None);
    exactly(&h, &Level::ALL);
    // An internal read between two external reads of x does not make them non-repeatable.
    let h = hist(&[&["wx1"], &["rx1 wx2 rx2"]]);
    exactly(&h, &Level::ALL);
}

#[test]
fn aborted_transactions_take_part_in_nothing() {
    // The aborted transaction reads garbage: never checked. Its write of x is invisible.
    let h = hist(&[&["wx1 ry9 rx7 !", "rx0"], &["wx2"]]);
    exactly(&h, &Level::ALL);
    // Aborted transactions do not count towards the bound.
    let aborted: Vec<String> = (1..=20).map(|v| format!("wx{v} !")).collect();
    let mut many: Vec<&str> = aborted.iter().map(String::as_str).collect();
    many.push("rx0");
    let h = hist(&[&many]);
    expect(&h, &[(Serializable, true)]);
}

#[test]
fn initial_transaction_comes_first() {
    // Reading x from t1 and later y's initial value, where t1 also wrote y: not RA.
    let h = hist(&[&["wx1 wy1"], &["rx1 ry0"]]);
    expect(&h, &[(ReadAtomic, false)]);
    // A session reading the initial value after its own earlier transaction overwrote it.
    let h = hist(&[&["wx1", "rx0"]]);
    exactly(&h, &[ReadCommitted, CutIsolation]);
}

#[test]
fn bound_is_seven_committed_transactions() {
    let seven: Vec<&str> = vec!["rx0"; 7];
    let h = hist(&[&seven]);
    assert_eq!(satisfies(&h, Serializable), Some(true));
    let eight: Vec<&str> = vec!["rx0"; 8];
    let h = hist(&[&eight]);
    for level in Level::ALL {
        assert_eq!(satisfies(&h, level), None);
    }
}

#[test]
fn seven_concurrent_writers_search_all_orders() {
    // Seven independent sessions, each reading x's initial value and writing it: every order
    // is tried under SI (all fail) and the first one works under PC.
    let txns = [
        "rx0 wx1", "rx0 wx2", "rx0 wx3", "rx0 wx4", "rx0 wx5", "rx0 wx6", "rx0 wx7",
    ];
    let sessions: Vec<&[&str]> = txns.iter().map(std::slice::from_ref).collect();
    let h = hist(&sessions);
    expect(
        &h,
        &[(Prefix, true), (Snapshot, false), (Serializable, false)],
    );
}
