//! Tests of the facts real databases give (issue 32 item 4, [`super::locks`]): locked reads
//! (single-statement read–modify–writes) never yield a lost update, a connection opened after
//! another closed never reads around it; every prediction made keeps both, checked against a
//! brute-force oracle that reads Biswas & Enea's axioms (OOPSLA'19 Fig. 2) directly over every
//! commit order, and the engines find a prediction whenever the enumeration of every boundary
//! and read choice does.

use super::space::{BoundaryKind, Space};
use super::tests::{brute_force_judged, level_holds, pco_cyclic, unserializable};
use super::*;
use crate::check::Level;
use crate::history::{BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, TxnId, INITIAL_TXN};

const LEVELS: [Level; 5] = [
    Level::ReadCommitted,
    Level::ReadAtomic,
    Level::Causal,
    Level::Prefix,
    Level::Snapshot,
];

/// An operation of a program: read a key, write it, or read–modify–write it in one statement
/// (a locked read then a write) or as a client-side read then write (unlocked).
#[derive(Clone, Copy, Debug)]
enum Op {
    R(u8),
    W(u8),
    /// `UPDATE … SET k = k + 1`: locked read, write.
    Inc(u8),
    /// `SELECT k; UPDATE … SET k = <value>`: read, write.
    ReadThenWrite(u8),
}

/// Runs `program` serially (transactions one at a time, sessions in the order `picks` gives,
/// every read seeing the latest write), marking the reads of `Inc` locked; then orders each
/// pair `after` = (earlier, later) of sessions when the earlier one ended before the later
/// one began in that run (others are dropped); with `connections`, declares each session a
/// connection ([`History::sessions_are_connections`]: a serial run keeps it). Returns the
/// history and the pairs kept.
fn serial_run(
    program: &[Vec<Vec<Op>>],
    picks: &[u8],
    after: &[(u32, u32)],
    connections: bool,
) -> (History, Vec<(u32, u32)>) {
    let mut b = HistoryBuilder::new("locks");
    if connections {
        b.sessions_are_connections();
    }
    let keys: Vec<_> = (0..3).map(|k| b.key(["x", "y", "z"][k])).collect();
    let sessions: Vec<_> = (0..program.len()).map(|_| b.session(None)).collect();
    let mut next = vec![0usize; program.len()];
    let mut span = vec![(usize::MAX, 0usize); program.len()];
    let mut last_writer: Vec<Option<BuilderTxn>> = vec![None; keys.len()];
    let mut pick = picks.iter().cycle();
    let total: usize = program.iter().map(|s| s.len()).sum();
    for step in 0..total {
        let open: Vec<usize> = (0..program.len())
            .filter(|&s| next[s] < program[s].len())
            .collect();
        let s = open[*pick.next().unwrap_or(&0) as usize % open.len()];
        span[s].0 = span[s].0.min(step);
        span[s].1 = step;
        let t = b.begin(sessions[s], None);
        let mut wrote = vec![false; keys.len()];
        for &op in &program[s][next[s]] {
            let (k, read, locked, write) = match op {
                Op::R(k) => (k, true, false, false),
                Op::W(k) => (k, false, false, true),
                Op::Inc(k) => (k, true, true, true),
                Op::ReadThenWrite(k) => (k, true, false, true),
            };
            let k = k as usize;
            if read {
                let from = if wrote[k] {
                    ReadFrom::Txn(t)
                } else {
                    last_writer[k].map_or(ReadFrom::Initial, ReadFrom::Txn)
                };
                if locked {
                    b.lock_read(b.op_count());
                }
                b.read(t, keys[k], None, from, 0);
            }
            if write {
                b.write(t, keys[k], None, 0);
                wrote[k] = true;
            }
        }
        for (k, &w) in wrote.iter().enumerate() {
            if w {
                last_writer[k] = Some(t);
            }
        }
        next[s] += 1;
    }
    let mut kept = Vec::new();
    for &(e, l) in after {
        let (e, l) = (e as usize % program.len(), l as usize % program.len());
        if e != l && span[e].1 < span[l].0 && !kept.contains(&(e as u32, l as u32)) {
            b.session_after(l as u32, e as u32);
            kept.push((e as u32, l as u32));
        }
    }
    (b.build().unwrap(), kept)
}

/// Whether some commit order of `h`'s committed transactions satisfies `level`'s axiom and
/// `h`'s facts, read directly from their definitions (docs/prediction.md "Statements real
/// databases make atomic"): enumeration of every order (at most 7 transactions).
fn facts_oracle(h: &History, level: Level) -> bool {
    let txns: Vec<TxnId> = h.committed_txns().filter(|&t| t != INITIAL_TXN).collect();
    assert!(txns.len() <= 7, "the oracle enumerates orders of at most 7");
    let n = h.txn_count();
    let ns = h.sessions().len();
    // Connection order, transitively.
    let mut after = vec![false; ns * ns];
    for &(e, l) in h.sessions_after() {
        after[e as usize * ns + l as usize] = true;
    }
    for m in 0..ns {
        for e in 0..ns {
            for l in 0..ns {
                if after[e * ns + m] && after[m * ns + l] {
                    after[e * ns + l] = true;
                }
            }
        }
    }
    let sess = |t: TxnId| h.txn(t).session as usize;
    let so2 = |a: TxnId, b: TxnId| {
        a != b
            && (a == INITIAL_TXN
                || (b != INITIAL_TXN && (h.so_before(a, b) || after[sess(a) * ns + sess(b)])))
    };
    let conn =
        |a: TxnId, b: TxnId| a != INITIAL_TXN && b != INITIAL_TXN && after[sess(a) * ns + sess(b)];
    // External reads: (op, key, writer, reader).
    let mut reads = Vec::new();
    for &t in &txns {
        for o in h.txn(t).ops() {
            if h.op(o).kind == OpKind::Read {
                if let Some(w) = h.writer_txn(o).filter(|&w| w != t) {
                    reads.push((o, h.op(o).key, w, t));
                }
            }
        }
    }
    let wr = |a: TxnId, b: TxnId| reads.iter().any(|r| r.2 == a && r.3 == b);
    // hb = (so ∪ wr ∪ after)+.
    let mut hb = vec![false; n * n];
    for a in 0..n as TxnId {
        for b in 0..n as TxnId {
            hb[a as usize * n + b as usize] =
                h.txn(a).is_committed() && h.txn(b).is_committed() && (so2(a, b) || wr(a, b));
        }
    }
    for m in 0..n {
        for a in 0..n {
            for b in 0..n {
                if hb[a * n + m] && hb[m * n + b] {
                    hb[a * n + b] = true;
                }
            }
        }
    }
    // Sessions that are connections: `t2` committed before `t3` began (it is, or happens
    // before, a transaction session- or connection-ordered before `t3`).
    let began_after = |t2: TxnId, t3: TxnId| {
        h.sessions_are_connections()
            && txns
                .iter()
                .any(|&a| so2(a, t3) && (a == t2 || hb[t2 as usize * n + a as usize]))
    };
    let writes = |t: TxnId, k: u32| h.keys_written(t).contains(&k);
    let mut order = txns.clone();
    permutations(&mut order, 0, &mut |order: &[TxnId]| {
        let mut pos = vec![usize::MAX; n];
        pos[INITIAL_TXN as usize] = 0;
        for (i, &t) in order.iter().enumerate() {
            pos[t as usize] = i + 1;
        }
        let co = |a: TxnId, b: TxnId| pos[a as usize] < pos[b as usize];
        // so ∪ wr ∪ after ⊆ co.
        for &a in &txns {
            for &b in &txns {
                if (so2(a, b) || wr(a, b)) && !co(a, b) {
                    return false;
                }
            }
        }
        for &(o, k, t1, t3) in &reads {
            for &t2 in txns
                .iter()
                .filter(|&&t2| t2 != t1 && t2 != t3 && writes(t2, k))
            {
                let premise = match level {
                    Level::ReadCommitted => {
                        conn(t2, t3)
                            || began_after(t2, t3)
                            || reads.iter().any(|r| r.3 == t3 && r.0 < o && r.2 == t2)
                    }
                    Level::ReadAtomic => so2(t2, t3) || wr(t2, t3) || began_after(t2, t3),
                    Level::Causal => hb[t2 as usize * n + t3 as usize],
                    Level::Prefix | Level::Snapshot => {
                        let snapshot = |t4: TxnId| {
                            (t4 == t2 || co(t2, t4))
                                && ((so2(t4, t3) || wr(t4, t3))
                                    || (level == Level::Snapshot
                                        && co(t4, t3)
                                        && h.keys_written(t4).iter().any(|&y| writes(t3, y))))
                        };
                        txns.iter().any(|&t4| snapshot(t4))
                    }
                    _ => unreachable!(),
                };
                if premise && !co(t2, t1) {
                    return false;
                }
            }
        }
        // Locked reads: no other writer of the key between the writer read and the reader.
        for &o in h.locked_reads() {
            let (t, k) = (h.op(o).txn, h.op(o).key);
            let Some(w) = h.writer_txn(o).filter(|&w| w != t) else {
                continue;
            };
            for &t2 in txns
                .iter()
                .filter(|&&t2| t2 != w && t2 != t && writes(t2, k))
            {
                if co(w, t2) && co(t2, t) {
                    return false;
                }
            }
        }
        true
    })
}

/// Calls `visit` on every permutation of `items[at..]` (with `items[..at]` fixed) until it
/// returns true.
fn permutations(items: &mut [TxnId], at: usize, visit: &mut dyn FnMut(&[TxnId]) -> bool) -> bool {
    if at == items.len() {
        return visit(items);
    }
    for i in at..items.len() {
        items.swap(at, i);
        if permutations(items, at + 1, visit) {
            return true;
        }
        items.swap(at, i);
    }
    false
}

/// Predicts with both engines and every strategy, checking every prediction against the
/// oracle; the verdicts.
fn predictions(h: &History, level: Level, strategy: Strategy, engine: Engine) -> PredictOutcome {
    let mut options = PredictOptions::new(level, strategy);
    options.engine = engine;
    let out = predict(h, &options).unwrap();
    for p in &out.predictions {
        assert!(level_holds(&p.history, level), "{level}: the level holds");
        assert!(
            facts_oracle(&p.history, level),
            "{level} {strategy:?} {engine:?}: the prediction keeps the facts"
        );
        assert!(unserializable(&p.history));
    }
    out
}

fn program_history(program: &[Vec<Vec<Op>>], after: &[(u32, u32)]) -> History {
    serial_run(program, &[0], after, false).0
}

use Op::{Inc, ReadThenWrite, R, W};

#[test]
fn atomic_increments_never_lose_an_update() {
    // Two sessions each run UPDATE x = x + 1 (observed one after the other).
    let h = program_history(&[vec![vec![Inc(0)]], vec![vec![Inc(0)]]], &[]);
    assert_eq!(h.locked_reads().len(), 2);
    for level in LEVELS {
        for strategy in [Strategy::ApproxRelaxed, Strategy::ExactStrict] {
            for engine in [Engine::Scalable, Engine::Paper] {
                let out = predictions(&h, level, strategy, engine);
                assert_eq!(
                    out.verdict,
                    Verdict::NoPrediction,
                    "{level} {strategy:?} {engine:?}: {:?}",
                    out.reason
                );
                assert!(out.reason.is_some(), "a none says why");
            }
        }
        // The scalable engine's none carries a certificate.
        let out = predictions(&h, level, Strategy::ApproxRelaxed, Engine::Scalable);
        assert!(out.certificate.is_some(), "{level}: {:?}", out.reason);
    }
    // The same history with a client-side read then write: a lost update at causal and rc.
    let h = program_history(
        &[vec![vec![ReadThenWrite(0)]], vec![vec![ReadThenWrite(0)]]],
        &[],
    );
    assert!(h.locked_reads().is_empty());
    for level in [Level::Causal, Level::ReadCommitted] {
        for engine in [Engine::Scalable, Engine::Paper] {
            let out = predictions(&h, level, Strategy::ApproxRelaxed, engine);
            assert_eq!(out.verdict, Verdict::Predicted, "{level} {engine:?}");
        }
    }
}

#[test]
fn one_locked_and_one_client_side_increment_can_still_lose_the_locked_one() {
    // T1: SELECT x; UPDATE x = <value> (unlocked); T2: UPDATE x = x + 1 (locked), observed
    // after T1. T1 reading the initial x while T2 commits in between loses T2's increment:
    // T2's own read is still the latest when it runs, so the prediction keeps the lock.
    let h = program_history(&[vec![vec![ReadThenWrite(0)]], vec![vec![Inc(0)]]], &[]);
    let out = predictions(&h, Level::Causal, Strategy::ApproxRelaxed, Engine::Scalable);
    assert_eq!(out.verdict, Verdict::Predicted);
}

#[test]
fn a_fixture_is_never_read_around() {
    // A fixture writes x and y and closes; two test connections then read both (in either
    // order). At rc a prediction could have a test read x from the initial state and y from
    // the fixture (a fractured read) — not once they opened after the fixture closed.
    let program = vec![
        vec![vec![W(0), W(1)]],
        vec![vec![R(0), R(1)]],
        vec![vec![R(1), R(0)]],
    ];
    let reads_initial_x = |out: &PredictOutcome| {
        out.predictions.iter().any(|p| {
            p.history.ops().iter().enumerate().any(|(o, op)| {
                op.kind == OpKind::Read
                    && p.history.key_name(op.key) == "x"
                    && p.history.writer_txn(o as u32) == Some(INITIAL_TXN)
            })
        })
    };
    let without = program_history(&program, &[]);
    let mut options = PredictOptions::new(Level::ReadCommitted, Strategy::ApproxRelaxed);
    options.max = usize::MAX;
    let out = predict(&without, &options).unwrap();
    assert!(reads_initial_x(&out), "without the order: read around");
    let (with, kept) = serial_run(&program, &[0], &[(0, 1), (0, 2)], false);
    assert_eq!(kept.len(), 2);
    assert_eq!(with.sessions_after(), &[(0, 1), (0, 2)]);
    for level in LEVELS {
        for engine in [Engine::Scalable, Engine::Paper] {
            let mut options = PredictOptions::new(level, Strategy::ApproxRelaxed);
            options.engine = engine;
            options.max = usize::MAX;
            let out = predict(&with, &options).unwrap();
            assert!(!reads_initial_x(&out), "{level} {engine:?}");
            for p in &out.predictions {
                assert!(facts_oracle(&p.history, level));
            }
        }
    }
}

/// Whether some prediction of `out` has the second transaction of the first session (T1.2)
/// read `x` from a writer other than `observed` (a transaction id of the observed history,
/// kept in the prediction).
fn t12_reads_x_otherwise(out: &PredictOutcome, observed: TxnId) -> bool {
    out.predictions.iter().any(|p| {
        let h = &p.history;
        let t12 = h.sessions()[0].txns().nth(1).expect("T1.2 is kept");
        h.txn(t12).ops().any(|o| {
            h.op(o).kind == OpKind::Read
                && h.key_name(h.op(o).key) == "x"
                && h.writer_txn(o) != Some(observed)
        })
    })
}

#[test]
fn a_session_that_is_a_connection_reads_its_own_writes_and_never_goes_back() {
    // Read your writes (issue 35 item 4, a fractured read inside one PostgreSQL session):
    // T2.1 writes x and y; then T1.1 reads y (from T2.1) and writes x; T1.2 reads x (from
    // T1.1). Biswas & Enea's read committed lets T1.2 read x from T2.1 or the initial state,
    // missing its own session's write; a connection of a real database never does.
    let program = vec![vec![vec![R(1), W(0)], vec![R(0)]], vec![vec![W(0), W(1)]]];
    let own_write = |connections| serial_run(&program, &[1, 0, 0], &[], connections).0;
    let (logical, connected) = (own_write(false), own_write(true));
    let t11 = logical.sessions()[0].txns().next().unwrap();
    assert!(!logical.sessions_are_connections() && connected.sessions_are_connections());
    for engine in [Engine::Scalable, Engine::Paper] {
        let mut options = PredictOptions::new(Level::ReadCommitted, Strategy::ApproxRelaxed);
        options.engine = engine;
        options.max = usize::MAX;
        let out = predict(&logical, &options).unwrap();
        assert!(
            t12_reads_x_otherwise(&out, t11),
            "{engine:?}: without the fact T1.2 misses T1.1's write"
        );
        for level in LEVELS {
            for strategy in [Strategy::ApproxRelaxed, Strategy::ExactStrict] {
                let out = predictions(&connected, level, strategy, engine);
                assert!(
                    !t12_reads_x_otherwise(&out, t11),
                    "{level} {strategy:?} {engine:?}"
                );
                if level == Level::ReadCommitted {
                    assert_eq!(
                        out.verdict,
                        Verdict::NoPrediction,
                        "{strategy:?} {engine:?}"
                    );
                }
            }
        }
    }
    // Monotonic reads: T2.1 writes x; T1.1 and T1.2 both read it. Read atomic (and read
    // committed) let T1.2 read the initial x after T1.1 saw T2.1's; a connection does not.
    let program = vec![vec![vec![R(0)], vec![R(0)]], vec![vec![W(0)]]];
    let went_back = |connections| serial_run(&program, &[1, 0, 0], &[], connections).0;
    let (logical, connected) = (went_back(false), went_back(true));
    let t21 = logical.sessions()[1].txns().next().unwrap();
    for level in [Level::ReadAtomic, Level::ReadCommitted] {
        for engine in [Engine::Scalable, Engine::Paper] {
            let out = predictions(&logical, level, Strategy::ApproxRelaxed, engine);
            assert!(t12_reads_x_otherwise(&out, t21), "{level} {engine:?}");
            let out = predictions(&connected, level, Strategy::ApproxRelaxed, engine);
            assert_eq!(out.verdict, Verdict::NoPrediction, "{level} {engine:?}");
        }
    }
}

#[test]
fn a_blind_write_never_falls_between_a_locked_read_and_its_writer() {
    // T1 writes y and x (blind); T2 runs UPDATE x = x + 1 then reads y, observed after T1.
    // At rc, T2 reading x from the initial state and y from T1 is a read skew — unless x's
    // read is locked: T1 would then commit between the write T2 read and T2.
    let plain = program_history(
        &[vec![vec![W(1), W(0)]], vec![vec![ReadThenWrite(0), R(1)]]],
        &[],
    );
    let out = predictions(
        &plain,
        Level::ReadCommitted,
        Strategy::ApproxRelaxed,
        Engine::Paper,
    );
    assert_eq!(out.verdict, Verdict::Predicted);
    // Locked: x's read and write are one statement (the write follows the read of y here,
    // as `SELECT x FOR UPDATE; SELECT y; UPDATE x`).
    let mut b = HistoryBuilder::new("mix");
    let (x, y) = (b.key("x"), b.key("y"));
    let (s1, s2) = (b.session(None), b.session(None));
    let t1 = b.begin(s1, None);
    b.write(t1, y, None, 1);
    b.write(t1, x, None, 2);
    let t2 = b.begin(s2, None);
    b.lock_read(b.op_count());
    b.read(t2, x, None, ReadFrom::Txn(t1), 3);
    b.read(t2, y, None, ReadFrom::Txn(t1), 4);
    b.write(t2, x, None, 5);
    let locked = b.build().unwrap();
    for engine in [Engine::Scalable, Engine::Paper] {
        for strategy in [Strategy::ApproxRelaxed, Strategy::ExactStrict] {
            let out = predictions(&locked, Level::ReadCommitted, strategy, engine);
            assert_eq!(
                out.verdict,
                Verdict::NoPrediction,
                "{engine:?} {strategy:?}"
            );
        }
    }
}

#[test]
fn the_encoding_agrees_with_the_oracle_on_hand_built_histories() {
    // Two locked reads of one writer: never (each reader would precede the other).
    let mut b = HistoryBuilder::new("two readers");
    let x = b.key("x");
    let (s1, s2) = (b.session(None), b.session(None));
    for s in [s1, s2] {
        let t = b.begin(s, None);
        b.lock_read(b.op_count());
        b.read(t, x, None, ReadFrom::Initial, 1);
        b.write(t, x, None, 2);
    }
    let h = b.build().unwrap();
    for level in LEVELS {
        assert!(!facts_oracle(&h, level));
        assert!(matches!(
            locks::judge_facts(&h, level, None),
            locks::Facts::Fail(_)
        ));
    }
}

/// A tiny random program: 2–3 sessions of 1–2 transactions of 1–2 operations over 2 keys,
/// with increments locked or not, and connection orders between sessions.
fn random_case(seed: u64) -> (History, Vec<(u32, u32)>) {
    let mut rng = crate::generate::rng::Rng::new(seed);
    let sessions = 2 + rng.below(2) as usize;
    let program: Vec<Vec<Vec<Op>>> = (0..sessions)
        .map(|_| {
            (0..1 + rng.below(2))
                .map(|_| {
                    (0..1 + rng.below(2))
                        .map(|_| {
                            let k = rng.below(2) as u8;
                            match rng.below(5) {
                                0 => R(k),
                                1 => W(k),
                                2 | 3 => Inc(k),
                                _ => ReadThenWrite(k),
                            }
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let picks: Vec<u8> = (0..6).map(|_| rng.below(3) as u8).collect();
    let after: Vec<(u32, u32)> = (0..rng.below(3))
        .map(|_| (rng.below(3) as u32, rng.below(3) as u32))
        .collect();
    let connections = rng.below(2) == 1;
    serial_run(&program, &picks, &after, connections)
}

#[test]
fn predictions_keep_the_facts_and_are_found_when_they_exist() {
    let cases: u64 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(100)
        .min(256);
    let (mut found, mut none, mut facts_mattered) = (0, 0, 0);
    for seed in 0..cases {
        let (h, _) = random_case(seed);
        if !locks::has_facts(&h) {
            continue;
        }
        // One level per case, in turn (each level gets a fifth of the cases).
        for level in [LEVELS[seed as usize % LEVELS.len()]] {
            // Ground truth: every boundary and read choice of the exact-strict space that is
            // valid at the level with the facts, and unserializable.
            let space = unpruned_space(&h, level, BoundaryKind::Strict);
            let unser = |p: &History| {
                crate::check::oracle::satisfies(p, Level::Serializable) == Some(false)
            };
            let truth = brute_force_judged(&space, level, &|p, level_h| {
                facts_oracle(level_h, level) && unser(p)
            });
            if !truth && brute_force_judged(&space, level, &|p, _| unser(p)) {
                facts_mattered += 1;
            }
            let out = predictions(&h, level, Strategy::ExactStrict, Engine::Scalable);
            let paper = predictions(&h, level, Strategy::ExactStrict, Engine::Paper);
            assert_ne!(
                out.verdict,
                Verdict::Unknown,
                "seed {seed} {level}: {:?}",
                out.reason
            );
            for (name, o) in [("scalable", &out), ("paper", &paper)] {
                assert_eq!(
                    o.verdict == Verdict::Predicted,
                    truth,
                    "seed {seed} {level} {name}: {:?} (brute force: {truth})",
                    o.reason
                );
            }
            if truth {
                found += 1;
            } else {
                none += 1;
            }
            // The approximate strategies only ever report what keeps the facts.
            predictions(&h, level, Strategy::ApproxRelaxed, Engine::Scalable);
        }
    }
    assert!(
        found > 0 && none > 0,
        "both outcomes: {found} found, {none} none"
    );
    assert!(facts_mattered > 0, "the facts removed some prediction");
}

/// The prediction space of `h` at `level` without the candidates the facts prune (the ground
/// truth's: nothing the engines do is assumed).
fn unpruned_space(h: &History, level: Level, boundary: BoundaryKind) -> Space<'_> {
    let snapshots = matches!(level, Level::Prefix | Level::Snapshot);
    Space::unpruned(
        h,
        boundary,
        level == Level::ReadCommitted,
        snapshots,
        level == Level::Snapshot,
    )
    .unwrap()
}

/// The space the engines build (pruned by the facts).
fn engine_space(h: &History, level: Level, boundary: BoundaryKind) -> Space<'_> {
    if matches!(level, Level::Prefix | Level::Snapshot) {
        Space::for_snapshots(h, boundary, level == Level::Snapshot)
    } else {
        Space::new(h, boundary, level == Level::ReadCommitted)
    }
    .unwrap()
}

/// The three shortcuts the engines take with the facts, against the enumeration of every
/// boundary and read choice judged by the brute-force oracle on random tiny recordings:
///
/// - the `locked-reads` certificate is given only when no candidate keeping the facts is
///   unserializable (and it is given on cases where, without the facts, one would be: the
///   certificate rests on them);
/// - the candidates the space prunes by the facts change no answer (and some are pruned);
/// - `locks::facts_surely_fail` only rejects candidates the oracle rejects (and rejects some).
#[test]
fn the_facts_shortcuts_agree_with_the_enumeration() {
    let cases: u64 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(100)
        .min(256);
    let (mut certified, mut certified_by_facts, mut pruned, mut surely) = (0, 0, 0, 0);
    let (mut predicted, mut with_facts) = (0, 0);
    for seed in 0..cases * 2 {
        let (h, _) = random_case(1000 + seed);
        if !locks::has_facts(&h) {
            continue;
        }
        with_facts += 1;
        let level = LEVELS[seed as usize % LEVELS.len()];
        let unser =
            |p: &History| crate::check::oracle::satisfies(p, Level::Serializable) == Some(false);
        let surely_count = std::cell::Cell::new(0);
        let judged = |p: &History, level_h: &History| {
            let holds = facts_oracle(level_h, level);
            if locks::facts_surely_fail(level_h).is_some() {
                assert!(
                    !holds,
                    "seed {seed} {level}: surely-fail rejected a valid candidate"
                );
                surely_count.set(surely_count.get() + 1);
            }
            holds && unser(p)
        };
        let certificate = locks::reads_locked_or_settled(&h).is_some();
        for boundary in [BoundaryKind::Strict, BoundaryKind::Relaxed] {
            let full = unpruned_space(&h, level, boundary);
            let truth = brute_force_judged(&full, level, &judged);
            let engine = engine_space(&h, level, boundary);
            let engine_truth = brute_force_judged(&engine, level, &judged);
            assert_eq!(
                truth, engine_truth,
                "seed {seed} {level} {boundary:?}: pruning by the facts changed the answer"
            );
            // Each approximate strategy of each engine (their encodings carry the locked
            // reads' exclusivity) finds exactly what the enumeration finds.
            let cyclic = brute_force_judged(&full, level, &|p, level_h| {
                facts_oracle(level_h, level) && pco_cyclic(p)
            });
            let strategy = match boundary {
                BoundaryKind::Strict => Strategy::ApproxStrict,
                BoundaryKind::Relaxed => Strategy::ApproxRelaxed,
            };
            for engine in [Engine::Scalable, Engine::Paper] {
                let out = predictions(&h, level, strategy, engine);
                assert_eq!(
                    out.verdict == Verdict::Predicted,
                    cyclic,
                    "seed {seed} {level} {strategy:?} {engine:?}: {:?} (brute force: {cyclic})",
                    out.reason
                );
            }
            if engine.group_cands.len() < full.group_cands.len() {
                pruned += 1;
            }
            if truth {
                predicted += 1;
            }
            if certificate {
                assert!(
                    !truth,
                    "seed {seed} {level} {boundary:?}: the locked-reads certificate was given \
                     but a candidate keeping the facts is unserializable"
                );
                if brute_force_judged(&full, level, &|p, _| unser(p)) {
                    certified_by_facts += 1;
                }
            }
        }
        if certificate {
            certified += 1;
            for engine in [Engine::Scalable, Engine::Paper] {
                let out = predictions(&h, level, Strategy::ApproxRelaxed, engine);
                assert_eq!(out.verdict, Verdict::NoPrediction, "seed {seed} {level}");
                // (No changeable read is stronger and said first when it applies.)
                assert!(
                    matches!(
                        out.certificate,
                        Some(Certificate::LockedReads | Certificate::NoChangeableRead)
                    ),
                    "seed {seed} {level} {engine:?}: {:?}",
                    out.certificate
                );
            }
        }
        surely += surely_count.get();
    }
    assert!(
        with_facts > 0 && predicted > 0,
        "{with_facts} cases, {predicted} predicted"
    );
    assert!(
        certified > 0 && certified_by_facts > 0,
        "the certificate applied ({certified}) and rested on the facts ({certified_by_facts})"
    );
    assert!(pruned > 0, "the facts pruned some candidate writer");
    assert!(surely > 0, "surely-fail rejected some candidate");
}
