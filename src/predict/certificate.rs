//! Why no prediction exists: the certificates of a "none" answer, decided from the observed run
//! before any search, and the one place every "none" of the scalable engine gets its reason
//! (docs/prediction.md "Why none: certificates"). IsoPredict (PLDI'24 §4) answers "none" only as
//! an unsatisfiable encoding; the certificates here are static arguments on the observed run
//! that cover every boundary and every read choice at once.
//!
//! - **No read can change** ([`Certificate::NoChangeableRead`]): every read of the run has only
//!   one writer it could read (the key is written by no other transaction that is not later in
//!   the reader's session). A prediction is then a prefix of the observed run, and the run is
//!   serializable (checked before), so every prefix closed under write–read order is too.
//! - **Writers ordered** ([`Certificate::WritersOrdered`], causal, pc, si): every two
//!   transactions that write a key some other transaction reads are ordered by happens-before
//!   (`so ∪ wr`)+ in every prediction that includes both ([`writers_ordered`]). Under causal
//!   consistency (and pc, si, which imply it: Biswas & Enea Lemma 2.4) such an execution is
//!   serializable (proof at [`writers_ordered`]). Voter (one inserting call) and runs with one
//!   writing session are the cases.
//! - **No pivot** ([`Certificate::NoPivot`], si): see [`super::dangerous`].
//! - **Locked reads** ([`Certificate::LockedReads`], every level, runs recorded from SQL):
//!   every read another write could precede is a locked read or sees only writes of
//!   connections that closed before its own opened; with the facts every real database keeps,
//!   each candidate is then serializable ([`super::locks::reads_locked_or_settled`]).
//! - **Search exhausted** ([`Certificate::SearchExhausted`]): the complete search (the
//!   scalable engine's solver phase, or the paper-form encoding) is unsatisfiable.

use super::open_clocks::open_clocks;
use super::{PredictOutcome, Strategy, Verdict};
use crate::check::Level;
use crate::history::{History, KeyId, OpKind, TxnId, INITIAL_TXN};

/// The kind of argument that shows no prediction exists (`--json`: `certificate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Certificate {
    /// No read of the run could read another write than the one it read.
    NoChangeableRead,
    /// Every two writing transactions are ordered by happens-before in every prediction
    /// (causal, pc, si).
    WritersOrdered,
    /// No transaction can be the pivot of a dangerous structure (si).
    NoPivot,
    /// Every read another write could precede is locked or follows a closed connection (every
    /// level; a history with locked reads or connection order).
    LockedReads,
    /// The complete search over every boundary and read choice found none.
    SearchExhausted,
}

impl Certificate {
    /// The certificate's kind as printed (`--json`: the same string).
    pub fn kind(self) -> &'static str {
        match self {
            Certificate::NoChangeableRead => "no-changeable-read",
            Certificate::WritersOrdered => "writers-ordered",
            Certificate::NoPivot => "no-pivot",
            Certificate::LockedReads => "locked-reads",
            Certificate::SearchExhausted => "search-exhausted",
        }
    }
}

/// Why "none" needs no search at SI (said in the outcome's reason).
pub const NO_PIVOT: &str = "no transaction of the run can be the middle of a dangerous \
    structure: none both reads a key it does not write that a transaction of another session \
    writes, and writes a key that a transaction of another session reads without writing it, \
    with both of those able to run concurrently with it — writing no key it writes (first \
    committer wins) and not forced into its snapshot, nor it into theirs, by what the run's \
    earlier transactions read; snapshot isolation then allows only serializable executions of \
    these transactions (Fekete et al.: an unserializable SI execution has such a transaction)";

/// Writes "none" with its reason into `outcome`: the one place a "none" of the scalable engine
/// is concluded. `detail`: what the certificate found, in the user's terms.
pub(crate) fn conclude_none(outcome: &mut PredictOutcome, certificate: Certificate, detail: &str) {
    outcome.verdict = Verdict::NoPrediction;
    outcome.certificate = Some(certificate);
    outcome.reason = Some(
        if detail.is_empty() && certificate == Certificate::SearchExhausted {
            search_exhausted_text(outcome.strategy, outcome.level, "")
        } else if detail.is_empty() {
            default_text(certificate, outcome.level)
        } else {
            detail.to_string()
        },
    );
}

/// The reason of a certificate when its finder gave no detail.
fn default_text(certificate: Certificate, level: Level) -> String {
    match certificate {
        Certificate::NoChangeableRead => "no read of the run could read another write than the \
            one it read: every key is written by at most the reading transaction itself, a \
            later transaction of its session, or the initial state"
            .to_string(),
        Certificate::WritersOrdered => format!(
            "every two transactions that write a key another transaction reads are ordered by \
             happens-before (session order and reads that cannot change) in every execution \
             of these transactions; under {} a reader then sees a prefix of that order, so \
             every such execution is serializable",
            level.full_name()
        ),
        Certificate::NoPivot => NO_PIVOT.to_string(),
        Certificate::LockedReads => format!(
            "every read that another write could precede is a locked read (a single-statement \
             read-modify-write such as UPDATE ... SET c = c + 1, which reads the row under its \
             lock) or sees only writes of connections that closed before its own opened; with \
             the row locks and the connection order every real database keeps, an execution of \
             these transactions valid under {} reads every key from the last write before it in \
             its commit order, so it is serializable",
            level.full_name()
        ),
        Certificate::SearchExhausted => "the complete search over every prediction boundary and \
            every read choice found no execution that is valid at the level and unserializable"
            .to_string(),
    }
}

/// What a `search-exhausted` certificate covers, in words: the search of `strategy` — over
/// its (strict or relaxed) prediction boundaries only, for executions it looks for (the exact
/// strategy: unserializable ones; the approximate ones: those with a cycle in `pco`) — found
/// none valid under `level`. `counts`: the search's sizes in parentheses (may be empty).
pub(crate) fn search_exhausted_text(strategy: Strategy, level: Level, counts: &str) -> String {
    let boundary = match strategy {
        Strategy::ApproxRelaxed => "relaxed",
        _ => "strict",
    };
    let found = match strategy {
        Strategy::ExactStrict => "unserializable".to_string(),
        _ => format!(
            "has a cycle in pco (the executions strategy {strategy} looks for; an unserializable \
             one with an acyclic pco is not searched)"
        ),
    };
    let counts = if counts.is_empty() {
        String::new()
    } else {
        format!(" ({counts})")
    };
    format!(
        "the complete search of strategy {strategy} over every {boundary} prediction boundary \
         and every read choice{counts} found no execution of these transactions that is valid \
         under {} and {found}; the other boundary and strategies were not searched",
        level.full_name()
    )
}

/// The static certificates that apply at `level` to the observed history `h` (valid at the
/// level and serializable), strongest first: `Some((kind, reason))` when one proves that no
/// prediction exists under any strategy.
pub(crate) fn static_certificate(h: &History, level: Level) -> Option<(Certificate, String)> {
    if !any_read_can_change(h) {
        return Some((
            Certificate::NoChangeableRead,
            default_text(Certificate::NoChangeableRead, level),
        ));
    }
    if let Some(run) = super::locks::reads_locked_or_settled(h) {
        return Some((
            Certificate::LockedReads,
            format!(
                "{} ({} locked read(s), {} read(s) of rows only earlier connections wrote)",
                default_text(Certificate::LockedReads, level),
                run.locked,
                run.after_connections
            ),
        ));
    }
    if matches!(level, Level::Causal | Level::Prefix | Level::Snapshot) {
        if let Some(found) = writers_ordered(h) {
            if found.writers <= 1 {
                return Some((
                    Certificate::WritersOrdered,
                    format!(
                        "at most one transaction writes a key that another transaction reads; \
                         under {} a reader sees all of its writes or none of them, and once it \
                         sees them so does every later transaction of its session, so every \
                         execution of these transactions is serializable",
                        level.full_name()
                    ),
                ));
            }
            let writers = match (found.writers, found.sessions) {
                (n, 1) => format!(
                    "the {n} transactions that write a key another transaction reads are all in \
                     one session, so every execution of these transactions orders them by \
                     session order"
                ),
                (n, s) => format!(
                    "the {n} transactions that write a key another transaction reads (in {s} \
                     sessions) are ordered by happens-before in every execution of these \
                     transactions: two of different sessions always through a read that cannot \
                     change (one made before the later writer in its session)"
                ),
            };
            return Some((
                Certificate::WritersOrdered,
                format!(
                    "{writers}; under {} every reader then sees a prefix of that order (it must \
                     read each key from the last writer it happens after), so every such \
                     execution is serializable",
                    level.full_name()
                ),
            ));
        }
    }
    None
}

/// Whether some external read of a committed transaction has a second writer it could read:
/// a committed transaction other than t0 and the reader that writes the key and is not later in
/// the reader's session (the candidates of [`super::space::Space`]).
fn any_read_can_change(h: &History) -> bool {
    // Per key: the smallest committed writer id (t0 excluded) and up to two writer sessions.
    const NO: u32 = u32::MAX;
    let n_keys = h.key_count();
    let mut first = vec![NO; n_keys];
    let mut sessions = vec![[NO, NO]; n_keys];
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let s = h.txn(t).session;
        for &k in h.keys_written(t) {
            let k = k as usize;
            first[k] = first[k].min(t);
            let two = &mut sessions[k];
            if two[0] == NO {
                two[0] = s;
            } else if two[0] != s && two[1] == NO {
                two[1] = s;
            }
        }
    }
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let s = h.txn(t).session;
        for o in h.txn(t).ops() {
            let op = h.op(o);
            if op.kind != OpKind::Read || h.writer_txn(o) == Some(t) {
                continue;
            }
            let k = op.key as usize;
            // A writer in another session, or an earlier one in the reader's session (session
            // ids are contiguous and ascending, so an earlier writer has a smaller id).
            let other_session = sessions[k].iter().any(|&x| x != NO && x != s);
            if other_session || (first[k] != NO && first[k] < t) {
                return true;
            }
        }
    }
    false
}

/// What [`writers_ordered`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OrderedWriters {
    /// Transactions that write a key another transaction reads.
    pub writers: usize,
    /// Sessions they belong to.
    pub sessions: usize,
}

/// Whether every two committed transactions that write a key another transaction reads (a key
/// that matters, [`super::space::Space`]) are ordered by happens-before in every prediction
/// that includes both writes — and, if so, how many there are.
///
/// **Forced order.** If `w2`'s write is in a prediction, so is `w2`, and every transaction
/// before `w2` in its session is in and is not its session's boundary: it reads what it read
/// in the run (strict and relaxed boundaries alike). A read that keeps its observed writer `w`
/// puts `w` in the prediction (a read may only read an included write) with `wr(w, ·)`, and
/// `w`'s own session predecessors in with their observed reads. So `open(w2)` — `w2`'s session
/// predecessors, the writers they read from, recursively those writers' session predecessors
/// and what they read (not the writers' own reads: a writer may be its session's boundary) —
/// happens before `w2` in every prediction that includes `w2`. Per session it is a prefix; it
/// is computed as a vector clock in a topological order of `so ∪ wr`.
///
/// **Why that proves "none" under causal consistency.** Let `P` be a prediction valid under
/// causal consistency in which the writers of keys that matter are totally ordered by
/// `hb = (so ∪ wr)+`: `W1 hb W2 hb … hb Wm` (t0 before all). A transaction `t` reads a key `k`
/// from some `c` with `hb(c, t)`; for any other writer `Wi` of `k` with `hb(Wi, t)`, causal
/// arbitration puts `Wi` before `c` in the commit order, so `hb(c, Wi)` (they are
/// hb-ordered, and `hb(Wi, c)` would make the commit order cyclic): `t` reads every key from
/// the hb-last writer of it among `W1..W_{m(t)}`, those hb-before `t` — a prefix of the chain.
/// The serial order "transactions with `m(t) = 0`, `W1`, those with `m(t) = 1`, `W2`, …"
/// (within a group in session order) respects session order (`hb` grows along it) and makes
/// every read read the last write before it; keys that matter to nobody constrain nothing. So
/// `P` is serializable — no prediction for any strategy. Prefix consistency and snapshot
/// isolation imply causal consistency, and a prefix valid with its boundary transactions' whole
/// write sets is valid without the writes it cuts (fewer arbitration premises).
pub(crate) fn writers_ordered(h: &History) -> Option<OrderedWriters> {
    let n = h.txn_count();
    let n_sessions = h.sessions().len();
    let committed = |t: TxnId| t != INITIAL_TXN && h.txn(t).is_committed();
    let external = |o: u32| {
        let op = h.op(o);
        op.kind == OpKind::Read && h.writer_txn(o) != Some(op.txn)
    };
    // Keys that matter: written by a committed transaction other than t0 and read from another
    // transaction by a committed one.
    let n_keys = h.key_count();
    let mut written = vec![false; n_keys];
    let mut read = vec![false; n_keys];
    for t in (0..n as TxnId).filter(|&t| committed(t)) {
        for &k in h.keys_written(t) {
            written[k as usize] = true;
        }
        for o in h.txn(t).ops() {
            if external(o) {
                read[h.op(o).key as usize] = true;
            }
        }
    }
    let matters = |k: KeyId| written[k as usize] && read[k as usize];
    let writers: Vec<TxnId> = (0..n as TxnId)
        .filter(|&t| committed(t) && h.keys_written(t).iter().any(|&k| matters(k)))
        .collect();
    let mut by_session: Vec<Vec<u32>> = vec![Vec::new(); n_sessions];
    for &w in &writers {
        let txn = h.txn(w);
        by_session[txn.session as usize].push(txn.index_in_session);
    }
    let sessions = by_session.iter().filter(|s| !s.is_empty()).count();
    let found = OrderedWriters {
        writers: writers.len(),
        sessions,
    };
    if sessions <= 1 {
        return Some(found);
    }
    let open = open_clocks(h)?;
    let clock = |t: TxnId| &open[t as usize * n_sessions..(t as usize + 1) * n_sessions];
    let first_of = |s: usize| h.sessions()[s].txns().start;
    for &w2 in &writers {
        let b = h.txn(w2).session as usize;
        let j = h.txn(w2).index_in_session;
        let before = clock(w2);
        for (a, list) in by_session.iter().enumerate() {
            if a == b || list.is_empty() {
                continue;
            }
            // Writers of session `a` not forced before `w2` start at `before[a]`; the first of
            // them must have `w2` forced before it (then so do the later ones: clocks grow
            // along a session).
            let x = list.partition_point(|&i| i < before[a]);
            if let Some(&i) = list.get(x) {
                if clock(first_of(a) + i)[b] <= j {
                    return None;
                }
            }
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

    /// Issue 35 item 8: a search's certificate says which strategy searched, over which
    /// boundary, for what — never "every prediction boundary … unserializable" for a search
    /// that looked at the strict boundary only, or for cycles in pco only.
    #[test]
    fn a_search_certificate_says_what_it_covers() {
        let text = |strategy| search_exhausted_text(strategy, Level::Causal, "");
        let exact = text(Strategy::ExactStrict);
        assert!(
            exact.contains("strategy exact-strict over every strict prediction boundary")
                && exact.contains("valid under causal consistency and unserializable")
                && exact.contains("the other boundary and strategies were not searched"),
            "{exact}"
        );
        let relaxed = text(Strategy::ApproxRelaxed);
        assert!(
            relaxed.contains("over every relaxed prediction boundary")
                && relaxed.contains("has a cycle in pco")
                && relaxed.contains("an unserializable one with an acyclic pco is not searched")
                && !relaxed.contains("and unserializable"),
            "{relaxed}"
        );
        assert!(text(Strategy::ApproxStrict).contains("every strict prediction boundary"));
        // What a solver-phase search counted goes in parentheses.
        assert!(search_exhausted_text(
            Strategy::ExactStrict,
            Level::ReadCommitted,
            "3 read choices"
        )
        .contains("every read choice (3 read choices) found"));
        // conclude_none gives it when its finder said nothing more.
        let mut outcome = PredictOutcome::unknown(
            &crate::predict::PredictOptions::new(Level::Causal, Strategy::ApproxRelaxed),
            Default::default(),
        );
        conclude_none(&mut outcome, Certificate::SearchExhausted, "");
        assert_eq!(outcome.reason.as_deref(), Some(relaxed.as_str()));
    }

    /// One operation: (is_write, key, value).
    type TestOp = (bool, &'static str, u64);

    /// Sessions of transactions, each a list of operations; reads read the value they name
    /// (0 = initial).
    fn history(sessions: &[&[&[TestOp]]]) -> History {
        let mut b = HistoryBuilder::new("test");
        b.initial_value(0);
        let mut line = 0;
        let ids: Vec<_> = (0..sessions.len())
            .map(|s| b.session(Some(s as u64 + 1)))
            .collect();
        for (s, txns) in sessions.iter().enumerate() {
            for ops in txns.iter() {
                let t = b.begin(ids[s], None);
                for &(write, key, v) in ops.iter() {
                    line += 1;
                    let k = b.key(key);
                    if write {
                        b.write(t, k, Some(v), line);
                    } else {
                        b.read(t, k, Some(v), ReadFrom::Value(v), line);
                    }
                }
                b.commit(t);
            }
        }
        b.build().expect("well-formed")
    }

    #[test]
    fn one_writing_session_is_ordered() {
        let h = history(&[
            &[&[(true, "x", 1)], &[(true, "y", 2)]],
            &[&[(false, "y", 2), (false, "x", 0)]],
        ]);
        let found = writers_ordered(&h).expect("one writing session");
        assert_eq!(found.sessions, 1);
        assert_eq!(found.writers, 2);
        assert!(any_read_can_change(&h));
        assert_eq!(
            static_certificate(&h, Level::Causal).map(|c| c.0),
            Some(Certificate::WritersOrdered)
        );
        // Read atomic allows the reader to miss x and see y: no certificate.
        assert_eq!(static_certificate(&h, Level::ReadAtomic), None);
    }

    #[test]
    fn writers_ordered_through_a_fixed_read() {
        // T2.2 writes y after T2.1 read x from T1.1: T1.1 happens before T2.2 in every
        // prediction that includes T2.2.
        let h = history(&[
            &[&[(true, "x", 1)]],
            &[&[(false, "x", 1)], &[(true, "y", 2)]],
            &[&[(false, "y", 2), (false, "x", 1)]],
        ]);
        assert!(writers_ordered(&h).is_some());
        // Without the read, the two writers are concurrent (a long fork is possible).
        let h = history(&[
            &[&[(true, "x", 1)]],
            &[&[(true, "y", 2)]],
            &[&[(false, "y", 2), (false, "x", 1)]],
        ]);
        assert!(writers_ordered(&h).is_none());
    }

    #[test]
    fn the_writers_own_read_is_not_forced() {
        // T2.1 reads x from T1.1 and writes y: T2.1 may be its session's boundary and read x
        // from the initial state, so the order is not forced.
        let h = history(&[
            &[&[(true, "x", 1)]],
            &[&[(false, "x", 1), (true, "y", 2)]],
            &[&[(false, "y", 2), (false, "x", 1)]],
        ]);
        assert!(writers_ordered(&h).is_none());
    }

    #[test]
    fn nothing_to_change() {
        // Each key is written only by its reader's session later, or read from the initial
        // state with no other writer.
        let h = history(&[
            &[&[(false, "x", 0)], &[(true, "x", 1)]],
            &[&[(false, "y", 0)]],
        ]);
        assert!(!any_read_can_change(&h));
        assert_eq!(
            static_certificate(&h, Level::ReadCommitted).map(|c| c.0),
            Some(Certificate::NoChangeableRead)
        );
    }

    /// Soundness against the enumeration of every boundary and read choice, and against the
    /// paper engine: on tiny serial runs (half of them with one writing session, where the
    /// writers-ordered certificate must apply at causal, pc and si), a certificate is given
    /// only when no boundary and no read choice makes an execution valid at the level and
    /// unserializable (which covers every strategy: a cyclic `pco` is unserializable), and
    /// the paper engine answers "none" for every strategy.
    mod random {
        use super::super::super::test_histories::{proptest_cases, random_program, serial_run};
        use super::super::super::tests::{brute_force, unserializable};
        use super::*;
        use crate::predict::space::BoundaryKind;
        use crate::predict::{predict, Engine, PredictOptions, Strategy, Verdict};
        use proptest::prelude::*;

        fn level() -> impl proptest::strategy::Strategy<Value = Level> {
            prop_oneof![
                Just(Level::Causal),
                Just(Level::ReadAtomic),
                Just(Level::ReadCommitted),
                Just(Level::Prefix),
                Just(Level::Snapshot),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: proptest_cases(2),
                ..ProptestConfig::default()
            })]

            #[test]
            fn a_certificate_never_contradicts_the_enumeration(
                program in random_program(),
                picks in proptest::collection::vec(0u8..3, 6),
                level in level(),
                one_writer in any::<bool>(),
            ) {
                let mut program = program;
                if one_writer {
                    for session in program.iter_mut().skip(1) {
                        for txn in session.iter_mut() {
                            for op in txn.iter_mut() {
                                op.0 = false;
                            }
                        }
                    }
                }
                let h = serial_run(&program, &picks);
                let certificate = static_certificate(&h, level);
                if one_writer && matches!(level, Level::Causal | Level::Prefix | Level::Snapshot) {
                    prop_assert!(certificate.is_some(), "one writing session at {level}");
                }
                if certificate.is_some() {
                    for boundary in [BoundaryKind::Strict, BoundaryKind::Relaxed] {
                        prop_assert!(
                            !brute_force(&h, level, boundary, &unserializable),
                            "{level} {boundary:?}: {certificate:?}"
                        );
                    }
                    for strategy in Strategy::ALL {
                        let mut options = PredictOptions::new(level, strategy);
                        options.engine = Engine::Paper;
                        let out = predict(&h, &options).unwrap();
                        prop_assert_eq!(out.verdict, Verdict::NoPrediction, "paper {} {}", level, strategy);
                        options.engine = Engine::Scalable;
                        let out = predict(&h, &options).unwrap();
                        prop_assert_eq!(out.verdict, Verdict::NoPrediction);
                        prop_assert!(out.certificate.is_some());
                        prop_assert!(out.reason.is_some());
                    }
                }
            }
        }
    }
}
