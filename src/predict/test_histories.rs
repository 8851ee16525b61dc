//! Histories the prediction tests build: a history from sessions of transactions of
//! operations ([`hist`]), the paper's deposits (IsoPredict PLDI'24 Fig. 2a), a single writer,
//! serial runs of random tiny programs, and the share of `PROPTEST_CASES` a test takes. Built
//! from the data model alone, so any file's unit tests may use them.

use crate::history::{BuilderTxn, History, HistoryBuilder, ReadFrom};

/// An operation of a test history: read `key` from (session, transaction index) or from the
/// initial state; write `key`.
#[derive(Clone, Copy)]
pub(super) enum Op {
    R(&'static str, Option<(usize, usize)>),
    W(&'static str),
}
use Op::{R, W};

/// Builds a history from sessions of transactions of operations.
pub(super) fn hist(sessions: &[&[&[Op]]]) -> History {
    let mut b = HistoryBuilder::new("test");
    let ss: Vec<_> = (0..sessions.len())
        .map(|s| b.session(Some(s as u64 + 1)))
        .collect();
    let txns: Vec<Vec<BuilderTxn>> = sessions
        .iter()
        .enumerate()
        .map(|(s, txns)| txns.iter().map(|_| b.begin(ss[s], None)).collect())
        .collect();
    for (s, t_ops) in sessions.iter().enumerate() {
        for (t, ops) in t_ops.iter().enumerate() {
            for op in ops.iter() {
                match *op {
                    W(k) => {
                        let k = b.key(k);
                        b.write(txns[s][t], k, None, 0);
                    }
                    R(k, from) => {
                        let k = b.key(k);
                        let from = match from {
                            None => ReadFrom::Initial,
                            Some((ws, wt)) => ReadFrom::Txn(txns[ws][wt]),
                        };
                        b.read(txns[s][t], k, None, from, 0);
                    }
                }
            }
        }
    }
    b.build().unwrap()
}

/// IsoPredict Fig. 2a: two deposits, the second reads the first.
pub(super) fn deposits() -> History {
    hist(&[
        &[&[R("acct", None), W("acct")]],
        &[&[R("acct", Some((0, 0))), W("acct")]],
    ])
}

/// Voter-like: one writing transaction; a later transaction of its session and one of
/// another session read its write.
pub(super) fn single_writer() -> History {
    hist(&[
        &[&[R("votes", None), W("votes")], &[R("votes", Some((0, 0)))]],
        &[&[R("votes", Some((0, 0)))]],
    ])
}

/// Runs `program` (sessions of transactions of (is_write, key) operations) serially, one
/// transaction at a time in the order `picks` chooses sessions, every read seeing the latest
/// write: an observed history as the paper's modified MonkeyDB records it (serializable).
pub(super) fn serial_run(program: &[Vec<Vec<(bool, u8)>>], picks: &[u8]) -> History {
    let mut b = HistoryBuilder::new("serial");
    let keys: Vec<_> = (0..3).map(|k| b.key(["x", "y", "z"][k])).collect();
    let sessions: Vec<_> = (0..program.len())
        .map(|s| b.session(Some(s as u64 + 1)))
        .collect();
    let mut next = vec![0usize; program.len()];
    let mut last_writer: Vec<Option<BuilderTxn>> = vec![None; keys.len()];
    let mut pick = picks.iter().cycle();
    let total: usize = program.iter().map(|s| s.len()).sum();
    for _ in 0..total {
        let open: Vec<usize> = (0..program.len())
            .filter(|&s| next[s] < program[s].len())
            .collect();
        let s = open[*pick.next().unwrap_or(&0) as usize % open.len()];
        let t = b.begin(sessions[s], None);
        let mut wrote = vec![false; keys.len()];
        for &(write, k) in &program[s][next[s]] {
            let k = k as usize;
            if write {
                b.write(t, keys[k], None, 0);
                wrote[k] = true;
            } else {
                let from = if wrote[k] {
                    ReadFrom::Txn(t)
                } else {
                    last_writer[k].map_or(ReadFrom::Initial, ReadFrom::Txn)
                };
                b.read(t, keys[k], None, from, 0);
            }
        }
        for (k, &w) in wrote.iter().enumerate() {
            if w {
                last_writer[k] = Some(t);
            }
        }
        next[s] += 1;
    }
    b.build().unwrap()
}

/// Random tiny programs for [`serial_run`]: 2–3 sessions of 1–2 transactions of 1–3
/// operations (read or write, of three keys).
pub(super) fn random_program(
) -> impl proptest::strategy::Strategy<Value = Vec<Vec<Vec<(bool, u8)>>>> {
    use proptest::prelude::*;
    let op = (any::<bool>(), 0u8..3);
    let txn = proptest::collection::vec(op, 1..=3);
    let session = proptest::collection::vec(txn, 1..=2);
    proptest::collection::vec(session, 2..=3)
}

/// `PROPTEST_CASES` (default 64) divided by `divisor`, at least 1: property tests whose cases
/// each run an exponential enumeration take a share of the CI case count.
pub(super) fn proptest_cases(divisor: u32) -> u32 {
    let all: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(64);
    (all / divisor).max(1)
}
