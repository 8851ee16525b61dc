//! Unit tests of the offline timestamp checker: one case per axiom and EXT kind, equal
//! timestamps (P2), hybrid logical clocks, lists (P13), initial values and own writes.

use super::*;
use crate::history::timestamped::{Name, TimestampedBuilder};

/// One operation of a test transaction.
#[derive(Clone, Copy)]
pub(crate) enum Op {
    R(&'static str, Option<i64>),
    W(&'static str, i64),
    A(&'static str, i64),
    L(&'static str, &'static [i64]),
}
use Op::*;

/// A history from `(tid, session, start, commit, ops)` tuples with plain-counter timestamps.
pub(crate) fn hist(
    initial: Option<i64>,
    txns: &[(i64, &str, u64, u64, &[Op])],
) -> TimestampedHistory {
    let mut b = TimestampedBuilder::new("test", initial);
    for (i, &(tid, s, start, commit, ops)) in txns.iter().enumerate() {
        let s = b.session(s);
        b.txn(
            Name::Num(tid),
            s,
            Hlc::new(start, 0),
            Hlc::new(commit, 0),
            i as u32 + 1,
        );
        for &op in ops {
            match op {
                R(k, v) => {
                    let k = b.key(k);
                    b.read(k, v)
                }
                W(k, v) => {
                    let k = b.key(k);
                    b.write(k, Some(v))
                }
                A(k, v) => {
                    let k = b.key(k);
                    b.append(k, v)
                }
                L(k, items) => {
                    let k = b.key(k);
                    b.read_list(k, items)
                }
            }
        }
    }
    b.finish()
}

fn si(h: &TimestampedHistory) -> TimestampReport {
    check_timestamps(h, TsLevel::Snapshot, &TsCheckOptions::default())
}

fn ser(h: &TimestampedHistory) -> TimestampReport {
    check_timestamps(h, TsLevel::Serializable, &TsCheckOptions::default())
}

fn only_ext(r: &TimestampReport) -> (ExtKind, Option<String>, Option<String>) {
    assert_eq!(r.counts.total(), 1, "{r}");
    match &r.violations[0] {
        TsViolation::Ext {
            kind,
            value_writer,
            expected_writer,
            ..
        } => (
            *kind,
            value_writer.as_ref().map(|w| w.tid.clone()),
            expected_writer.as_ref().map(|w| w.tid.clone()),
        ),
        v => panic!("expected an EXT, got {v}"),
    }
}

#[test]
fn serial_history_passes_si_and_ser() {
    let h = hist(
        Some(0),
        &[
            (1, "a", 1, 2, &[R("x", Some(0)), W("x", 1)]),
            (2, "b", 3, 4, &[R("x", Some(1)), W("y", 2), R("y", Some(2))]),
            (3, "a", 5, 6, &[R("y", Some(2)), R("x", Some(1))]),
        ],
    );
    let r = si(&h);
    assert!(r.consistent, "{r}");
    let r = ser(&h);
    assert!(r.consistent, "{r}");
    assert_eq!(r.strict_serializable, Some(true));
    assert!(r.to_string().contains("strictly serializable"));
}

#[test]
fn session_violation() {
    // T2 follows T1 in session a but starts before T1 commits.
    let h = hist(None, &[(1, "a", 1, 5, &[W("x", 1)]), (2, "a", 3, 6, &[])]);
    let r = si(&h);
    assert_eq!(r.counts.session, 1, "{r}");
    assert_eq!(r.counts.total(), 1);
    let TsViolation::Session { txn, previous } = &r.violations[0] else {
        panic!("{r}")
    };
    assert_eq!((txn.tid.as_str(), previous.tid.as_str()), ("2", "1"));
    assert_eq!(txn.line, 2);
    assert!(r
        .to_string()
        .contains("SESSION: T1.1 (tid 1, sid a, start 1, commit 5, line 1)"));
    // SER only needs the commit order to follow the session: 5 < 6.
    assert!(ser(&h).consistent);
    let h = hist(None, &[(1, "a", 1, 7, &[]), (2, "a", 3, 6, &[])]);
    assert_eq!(ser(&h).counts.session, 1);
}

#[test]
fn int_violation() {
    let h = hist(None, &[(1, "a", 1, 2, &[W("x", 1), R("x", Some(2))])]);
    let r = si(&h);
    assert_eq!(r.counts.int, 1, "{r}");
    assert_eq!(r.counts.total(), 1);
    let TsViolation::Int {
        op_index,
        read,
        expected,
        ..
    } = &r.violations[0]
    else {
        panic!("{r}")
    };
    assert_eq!((*op_index, read.as_str(), expected.as_str()), (1, "2", "1"));
    // An internal read follows the last *read* too, and a wrong external read does not
    // cascade into INT reports.
    let h = hist(None, &[(1, "a", 1, 2, &[R("x", Some(5)), R("x", Some(5))])]);
    let r = si(&h);
    assert_eq!((r.counts.ext, r.counts.int), (1, 0), "{r}");
}

#[test]
fn ext_before() {
    let h = hist(
        None,
        &[
            (1, "a", 1, 2, &[W("x", 1)]),
            (2, "b", 3, 4, &[W("x", 2)]),
            (3, "c", 5, 6, &[R("x", Some(1))]),
        ],
    );
    let r = si(&h);
    assert_eq!(
        only_ext(&r),
        (ExtKind::Before, Some("1".into()), Some("2".into()))
    );
    assert_eq!(r.counts.ext_before, 1);
    assert!(r.to_string().contains("EXT BEFORE: T3"), "{r}");
    // A stale initial value is BEFORE too.
    let h = hist(
        Some(0),
        &[
            (1, "a", 1, 2, &[W("x", 1)]),
            (2, "b", 3, 4, &[R("x", Some(0))]),
        ],
    );
    assert_eq!(only_ext(&si(&h)), (ExtKind::Before, None, Some("1".into())));
}

#[test]
fn ext_uncommitted() {
    // T1 is still running when T2 takes its snapshot.
    let h = hist(
        None,
        &[
            (1, "a", 1, 5, &[W("x", 1)]),
            (2, "b", 2, 3, &[R("x", Some(1))]),
        ],
    );
    assert_eq!(
        only_ext(&si(&h)),
        (ExtKind::Uncommitted, Some("1".into()), None)
    );
}

#[test]
fn ext_after() {
    let h = hist(
        None,
        &[
            (1, "a", 1, 2, &[R("x", Some(1))]),
            (2, "b", 3, 4, &[W("x", 1)]),
        ],
    );
    assert_eq!(only_ext(&si(&h)), (ExtKind::After, Some("2".into()), None));
    // A read of the transaction's own later write is AFTER too.
    let h = hist(None, &[(1, "a", 1, 2, &[R("x", Some(1)), W("x", 1)])]);
    assert_eq!(only_ext(&si(&h)).0, ExtKind::After);
}

#[test]
fn ext_never() {
    let h = hist(
        None,
        &[
            (1, "a", 1, 2, &[W("x", 1)]),
            (2, "b", 3, 4, &[R("x", Some(99))]),
        ],
    );
    let r = si(&h);
    assert_eq!(only_ext(&r), (ExtKind::Never, None, Some("1".into())));
    assert!(r.to_string().contains("nothing writes 99 to key x"), "{r}");
}

#[test]
fn no_conflict_partial_overlap_and_nesting() {
    let h = hist(
        None,
        &[(1, "a", 1, 4, &[W("x", 1)]), (2, "b", 2, 5, &[W("x", 2)])],
    );
    let r = si(&h);
    assert_eq!(r.counts.no_conflict, 1, "{r}");
    assert_eq!(r.counts.total(), 1);
    // Nested: reported once, at the inner (earlier) commit.
    let h = hist(
        None,
        &[(1, "a", 1, 10, &[W("x", 1)]), (2, "b", 2, 3, &[W("x", 2)])],
    );
    let r = si(&h);
    assert_eq!(r.counts.no_conflict, 1, "{r}");
    let TsViolation::NoConflict { first, second, key } = &r.violations[0] else {
        panic!("{r}")
    };
    assert_eq!(
        (first.tid.as_str(), second.tid.as_str(), key.as_str()),
        ("2", "1", "x")
    );
    // Per key: two common keys, two reports; SER does not check NOCONFLICT.
    let h = hist(
        None,
        &[
            (1, "a", 1, 4, &[W("x", 1), W("y", 1), W("x", 3)]),
            (2, "b", 2, 5, &[W("x", 2), W("y", 2)]),
        ],
    );
    assert_eq!(si(&h).counts.no_conflict, 2);
    assert!(ser(&h).consistent);
}

#[test]
fn equal_timestamps() {
    // A commit at t is visible to a start at t, and to a point transaction at t (P2).
    let h = hist(
        None,
        &[
            (1, "a", 1, 2, &[W("x", 1)]),
            (2, "b", 2, 2, &[R("x", Some(1))]),
            (3, "c", 2, 3, &[R("x", Some(1)), W("x", 3)]),
        ],
    );
    let r = si(&h);
    assert!(r.consistent, "{r}");
    // Back-to-back writers do not conflict.
    let h = hist(
        None,
        &[(1, "a", 1, 2, &[W("x", 1)]), (2, "b", 2, 3, &[W("x", 2)])],
    );
    assert!(si(&h).consistent);
    // A transaction whose start equals its commit does not see itself.
    let h = hist(
        None,
        &[(1, "a", 5, 5, &[R("x", None), W("x", 1), R("x", Some(1))])],
    );
    assert!(si(&h).consistent);
    // Equal commit timestamps of two writers are flagged (and are not a NOCONFLICT here).
    let h = hist(
        None,
        &[(1, "a", 1, 3, &[W("x", 1)]), (2, "b", 3, 3, &[W("x", 2)])],
    );
    let r = si(&h);
    assert_eq!((r.counts.equal_commit, r.counts.total()), (1, 1), "{r}");
    assert_eq!(ser(&h).counts.equal_commit, 1);
    // A point transaction inside a writer's interval conflicts with it.
    let h = hist(
        None,
        &[(1, "a", 1, 5, &[W("x", 1)]), (2, "b", 3, 3, &[W("x", 2)])],
    );
    assert_eq!(si(&h).counts.no_conflict, 1);
}

#[test]
fn hybrid_logical_clocks_compare_lexicographically() {
    let mut b = TimestampedBuilder::new("hlc", None);
    let (s, x) = (b.session("s"), b.key("x"));
    b.txn(Name::Num(1), s, Hlc::new(1, 5), Hlc::new(1, 7), 1);
    b.write(x, Some(1));
    let t = b.session("t");
    b.txn(Name::Num(2), t, Hlc::new(1, 8), Hlc::new(2, 0), 2);
    b.read(x, Some(1));
    let u = b.session("u");
    b.txn(
        Name::Str("three".into()),
        u,
        Hlc::new(1, 6),
        Hlc::new(1, 9),
        3,
    );
    b.read(x, Some(1));
    let h = b.finish();
    let r = si(&h);
    assert_eq!(only_ext(&r), (ExtKind::Uncommitted, Some("1".into()), None));
    assert!(
        r.to_string()
            .contains("(tid three, sid u, start (1,6), commit (1,9)"),
        "{r}"
    );
}

#[test]
fn start_after_commit_is_reported_and_left_out() {
    let h = hist(
        None,
        &[
            (1, "a", 5, 3, &[W("x", 1)]),
            (2, "b", 6, 7, &[R("x", None)]),
        ],
    );
    let r = si(&h);
    assert_eq!(r.counts.start_after_commit, 1, "{r}");
    assert_eq!(r.counts.total(), 1, "{r}");
    // SER ignores start timestamps but still reports the error.
    let r = ser(&h);
    assert_eq!(r.counts.start_after_commit, 1);
    assert_eq!(
        r.counts.ext, 1,
        "T1 committed x=1 at 3, before T2 at 7: {r}"
    );
}

#[test]
fn lists_are_checked_whole() {
    let h = hist(
        None,
        &[
            (1, "a", 1, 2, &[A("x", 1)]),
            (2, "a", 3, 4, &[A("x", 2)]),
            (3, "b", 5, 6, &[L("x", &[1, 2])]),
            // The middle element is lost: the last element alone would look right.
            (4, "c", 7, 8, &[L("x", &[2])]),
            (5, "d", 9, 10, &[A("x", 3), L("x", &[1, 2, 3])]),
            // Own append missing: INT.
            (6, "e", 11, 12, &[A("x", 4), L("x", &[1, 2, 3])]),
            // The list changes between two reads: INT.
            (
                7,
                "f",
                13,
                14,
                &[L("x", &[1, 2, 3, 4]), L("x", &[1, 2, 3, 4, 5])],
            ),
            // A stale prefix: BEFORE.
            (8, "g", 15, 16, &[L("x", &[1, 2])]),
            // An empty list is the initial state.
            (9, "h", 0, 0, &[L("y", &[])]),
        ],
    );
    let r = si(&h);
    assert_eq!((r.counts.ext, r.counts.int), (2, 2), "{r}");
    // [2] starts with an element committed in time but out of place; [1,2] is stale.
    assert_eq!(r.counts.ext_before, 2, "{r}");
    let text = r.to_string();
    assert!(text.contains("(tid 4, sid c"), "{text}");
    assert!(text.contains("reads key x = [2]"), "{text}");
    assert!(text.contains("its snapshot has [1,2]"), "{text}");
}

#[test]
fn initial_value_rules() {
    let first_read_zero = |initial| hist(initial, &[(1, "a", 1, 2, &[R("x", Some(0))])]);
    assert!(si(&first_read_zero(Some(0))).consistent);
    assert_eq!(only_ext(&si(&first_read_zero(None))).0, ExtKind::Never);
    let null_read = hist(None, &[(1, "a", 1, 2, &[R("x", None)])]);
    assert!(si(&null_read).consistent);
    let null_read = hist(Some(0), &[(1, "a", 1, 2, &[R("x", None)])]);
    assert_eq!(only_ext(&si(&null_read)).0, ExtKind::Never);
}

#[test]
fn read_own_write() {
    let h = hist(
        Some(0),
        &[(
            1,
            "a",
            1,
            2,
            &[
                R("x", Some(0)),
                W("x", 5),
                R("x", Some(5)),
                W("x", 6),
                R("x", Some(6)),
            ],
        )],
    );
    assert!(si(&h).consistent);
    // Only the last write is published.
    let h = hist(
        Some(0),
        &[
            (1, "a", 1, 2, &[W("x", 5), W("x", 6)]),
            (2, "b", 3, 4, &[R("x", Some(5))]),
        ],
    );
    let (kind, writer, expected) = only_ext(&si(&h));
    assert_eq!(
        kind,
        ExtKind::Before,
        "an intermediate value of a committed writer"
    );
    assert_eq!((writer, expected), (Some("1".into()), Some("1".into())));
}

#[test]
fn write_skew_is_si_not_ser() {
    let h = hist(
        Some(0),
        &[
            (1, "a", 1, 3, &[R("x", Some(0)), R("y", Some(0)), W("x", 1)]),
            (2, "b", 2, 4, &[R("x", Some(0)), R("y", Some(0)), W("y", 1)]),
        ],
    );
    assert!(si(&h).consistent);
    let r = ser(&h);
    assert_eq!(r.counts.ext, 1, "{r}");
    assert_eq!(r.strict_serializable, Some(false));
}

#[test]
fn every_violation_is_counted_and_truncation_is_said() {
    let mut txns: Vec<(i64, &str, u64, u64, &[Op])> = vec![(0, "w", 1, 2, &[W("x", 1)])];
    for i in 1..=50 {
        txns.push((
            i,
            "r",
            2 * i as u64 + 1,
            2 * i as u64 + 2,
            &[R("x", Some(7))],
        ));
    }
    let h = hist(None, &txns);
    let r = check_timestamps(&h, TsLevel::Snapshot, &TsCheckOptions { max_violations: 3 });
    assert_eq!((r.counts.ext, r.counts.ext_never), (50, 50));
    assert_eq!(r.violations.len(), 3);
    assert!(r.truncated);
    assert!(r.to_string().contains("47 more not described"));
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"axiom\":\"EXT\""), "{json}");
    assert!(json.contains("\"kind\":\"NEVER\""), "{json}");
}
