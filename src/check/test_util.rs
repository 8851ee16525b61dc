//! Test helpers: a compact notation for hand-written histories.

use super::graph::EdgeList;
use crate::history::{History, HistoryBuilder, ReadFrom, TxnId};

/// Builds a history from a compact description: sessions separated by `|`, transactions by
/// `/`, operations `w<key><value>` and `r<key><value>` (one-letter keys; value 0 is the
/// initial value), and a `!` token marks its transaction aborted. Operation i (1-based, in
/// order of appearance) gets input line i. Transaction ids: 1, 2, … session by session.
pub(crate) fn h(spec: &str) -> History {
    let mut b = HistoryBuilder::new("test");
    b.initial_value(0);
    let mut line = 0;
    for session in spec.split('|') {
        let s = b.session(None);
        for txn in session.split('/') {
            let t = b.begin(s, None);
            for token in txn.split_whitespace() {
                if token == "!" {
                    b.abort(t);
                    continue;
                }
                line += 1;
                let mut chars = token.chars();
                let kind = chars.next().unwrap();
                let key = b.key(&chars.next().unwrap().to_string());
                let value: u64 = chars.as_str().parse().unwrap();
                match kind {
                    'w' => b.write(t, key, Some(value), line),
                    'r' => b.read(t, key, Some(value), ReadFrom::Value(value), line),
                    _ => panic!("bad token {token}"),
                }
            }
        }
    }
    b.build().unwrap()
}

/// Two transactions in two sessions both read `x` and `y` from t0; the first writes `x`, the
/// second writes `x` too (a lost update) or, when `skew`, only `y` (a write skew).
pub(crate) fn lost_update_or_write_skew(skew: bool) -> History {
    let mut b = HistoryBuilder::new("pair");
    let x = b.key("x");
    let y = b.key("y");
    let s1 = b.session(None);
    let s2 = b.session(None);
    let t1 = b.begin(s1, None);
    b.read(t1, x, None, ReadFrom::Initial, 0);
    b.read(t1, y, None, ReadFrom::Initial, 0);
    b.write(t1, x, None, 0);
    let t2 = b.begin(s2, None);
    b.read(t2, x, None, ReadFrom::Initial, 0);
    b.read(t2, y, None, ReadFrom::Initial, 0);
    b.write(t2, if skew { y } else { x }, None, 0);
    b.build().unwrap()
}

/// A saturation pass of the rc or ra checker split into tasks of `task_size` (transactions,
/// or sessions): it adds the inferred edges of `history` (with its `external_writer`s) to the
/// list.
pub(crate) type SaturateInTasks = fn(&History, &[TxnId], &mut EdgeList, usize);

/// Asserts that `saturate` infers the same edges, in the same order, whatever its task size
/// (each of `task_sizes` against one pass, `usize::MAX`), on generated histories of
/// `sessions` × `txns_per_session` transactions (inconsistent and read-committed ones, four
/// seeds each, every one with an edge to compare). `repeatable_reads`: the read-consistency
/// check the checker runs first ([`super::read_consistency::check`]).
pub(crate) fn any_task_size_gives_the_edges_of_one_pass(
    saturate: SaturateInTasks,
    (sessions, txns_per_session): (u32, u32),
    repeatable_reads: bool,
    task_sizes: &[usize],
) {
    use crate::generate::{generate, Consistency, GenerateParams};
    for consistency in [Consistency::None, Consistency::ReadCommitted] {
        for seed in 0..4 {
            let p = GenerateParams {
                sessions,
                txns_per_session,
                ops_per_txn: 6,
                keys: 10,
                abort_ratio: 0.1,
                consistency,
                seed,
                ..GenerateParams::default()
            };
            let hist = generate(&p).unwrap();
            let reads = super::read_consistency::check(&hist, repeatable_reads);
            let mut one_pass = EdgeList::default();
            saturate(&hist, &reads.external_writer, &mut one_pass, usize::MAX);
            assert!(
                !one_pass.edges().is_empty(),
                "{consistency} {seed}: no edge to compare"
            );
            for &size in task_sizes {
                let mut out = EdgeList::default();
                saturate(&hist, &reads.external_writer, &mut out, size);
                assert_eq!(
                    out.edges(),
                    one_pass.edges(),
                    "{consistency} {seed}: tasks of {size}"
                );
            }
        }
    }
}
