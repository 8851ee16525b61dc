//! Tests of prediction (IsoPredict PLDI'24 §4): the paper's examples (Figure 9, the deposits),
//! the textbook anomalies per level, agreement with a brute-force enumeration of every boundary
//! and read choice, the scalable engine against the paper-form one, and every explanation
//! re-checked; helpers shared with `tests_si_pc`.

use super::space::{BoundaryKind, Space, NONE};
use super::test_histories::{
    deposits, hist, proptest_cases, random_program, serial_run, single_writer, Op,
};
use super::*;
use crate::check::{self, CheckOptions, Level};
use crate::generate::{generate, Consistency, GenerateParams};
use crate::history::{History, HistoryBuilder, OpId, ReadFrom, TxnId};
use crate::ser::{self, SerVerdict};
use crate::verdict::engines;
use Op::{R, W};

/// Runs a prediction and checks every claim it makes: a predicted history satisfies the level
/// and is unserializable (independently of the pipeline), reads' changes are real, and an
/// approximate prediction has a pco cycle.
pub(super) fn run(h: &History, level: Level, strategy: Strategy) -> PredictOutcome {
    run_with(h, &PredictOptions::new(level, strategy))
}

/// [`run`] with explicit options (the engine, `max`).
pub(super) fn run_with(h: &History, options: &PredictOptions) -> PredictOutcome {
    let (level, strategy) = (options.level, options.strategy);
    let out = predict(h, options).unwrap();
    assert_eq!(out.prediction.is_some(), !out.predictions.is_empty());
    for (i, p) in out.predictions.iter().enumerate() {
        assert!(level_holds(&p.history, level));
        assert_eq!(
            engines::check_serializable(&p.history, None).unwrap(),
            SerVerdict::Unserializable
        );
        if strategy != Strategy::ExactStrict {
            assert!(p.cycle.is_some());
        }
        for q in &out.predictions[..i] {
            let key = |p: &Prediction| -> Vec<(OpId, TxnId)> {
                p.changed_reads
                    .iter()
                    .map(|c| (c.op, c.new_writer))
                    .collect()
            };
            let (earlier, later) = (key(q), key(p));
            assert!(
                !earlier.iter().all(|c| later.contains(c)),
                "a later prediction repeats an earlier one's changes"
            );
        }
    }
    if let Some(p) = &out.prediction {
        assert_eq!(out.verdict, Verdict::Predicted);
        assert!(level_holds(&p.history, level));
        assert_eq!(
            engines::check_serializable(&p.history, None).unwrap(),
            SerVerdict::Unserializable
        );
        if engines::check_serializable(h, None).unwrap() != SerVerdict::Unserializable {
            assert!(
                !p.changed_reads.is_empty(),
                "a serializable run's prediction changes some read"
            );
        }
        if let Some(ok) = check::oracle::satisfies(&p.history, level) {
            assert!(ok, "the oracle agrees the prediction satisfies {level}");
        }
        if let Some(ser) = check::oracle::satisfies(&p.history, Level::Serializable) {
            assert!(!ser, "the oracle agrees the prediction is unserializable");
        }
        for c in &p.changed_reads {
            assert_ne!(c.old_writer, c.new_writer);
            assert_eq!(h.writer_txn(c.op), Some(c.old_writer));
        }
        if strategy != Strategy::ExactStrict {
            assert!(
                p.cycle.is_some(),
                "an approximate prediction has a pco cycle"
            );
        }
        assert_eq!(p.txn_origin.len(), p.history.txn_count());
        if let Err(e) = super::recheck::recheck_explanation(p) {
            panic!("an unjustified explanation: {e}\n{out}");
        }
    } else {
        assert_ne!(out.verdict, Verdict::Predicted);
    }
    out
}

/// Whether `h` satisfies `level`: the checker, or for pc and si the brute-force oracle on
/// small histories and the Z3 check (with its verified witness) on larger ones.
pub(super) fn level_holds(h: &History, level: Level) -> bool {
    if !matches!(level, Level::Prefix | Level::Snapshot) {
        return engines::check(h, level, &CheckOptions::default())
            .unwrap()
            .is_consistent();
    }
    if let Some(ok) = check::oracle::satisfies(h, level) {
        return ok;
    }
    match engines::check_si_pc(h, level, None) {
        ser::SiPcVerdict::Satisfies { .. } => true,
        ser::SiPcVerdict::Violates { .. } => false,
        ser::SiPcVerdict::Unknown { reason } => panic!("unknown: {reason}"),
    }
}

fn verdict(h: &History, level: Level, strategy: Strategy) -> Verdict {
    run(h, level, strategy).verdict
}

fn paper_verdict(h: &History, level: Level, strategy: Strategy) -> Verdict {
    let mut options = PredictOptions::new(level, strategy);
    options.engine = Engine::Paper;
    run_with(h, &options).verdict
}

#[test]
fn deposit_example_is_predicted_with_the_relaxed_boundary() {
    let h = deposits();
    for level in [Level::Causal, Level::ReadAtomic, Level::ReadCommitted] {
        let out = run(&h, level, Strategy::ApproxRelaxed);
        assert_eq!(out.verdict, Verdict::Predicted, "{level}");
        let p = out.prediction.unwrap();
        // Fig. 3a: the second deposit reads the initial balance.
        assert_eq!(p.changed_reads.len(), 1);
        assert_eq!(p.changed_reads[0].txn, 2);
        assert_eq!(p.changed_reads[0].old_writer, 1);
        assert_eq!(p.changed_reads[0].new_writer, 0);
        // Fig. 5: the cycle is two anti-dependencies.
        let cycle = p.cycle.unwrap();
        assert_eq!(cycle.len(), 2);
        assert!(cycle.iter().all(|e| e.kind == "rw"));
    }
}

#[test]
fn deposit_example_needs_the_relaxed_boundary() {
    // Strict: the changed read is the last event of its session, so the second deposit's
    // write is excluded and what is left is serializable.
    let h = deposits();
    for strategy in [Strategy::ExactStrict, Strategy::ApproxStrict] {
        assert_eq!(verdict(&h, Level::Causal, strategy), Verdict::NoPrediction);
    }
}

#[test]
fn figure_9_relaxed_predicts_where_strict_does_not() {
    // Fig. 9: deposit t1; withdraw t2 reads t1; t3 reads t2. Changing t2's read to t0 makes a
    // lost update only if t2's own write stays: relaxed keeps it, strict cuts it.
    let h = hist(&[
        &[&[R("acct", None), W("acct")]],
        &[&[R("acct", Some((0, 0))), W("acct")]],
        &[&[R("acct", Some((1, 0)))]],
    ]);
    assert_eq!(
        verdict(&h, Level::Causal, Strategy::ApproxRelaxed),
        Verdict::Predicted
    );
    assert_eq!(
        verdict(&h, Level::Causal, Strategy::ApproxStrict),
        Verdict::NoPrediction
    );
    assert_eq!(
        verdict(&h, Level::Causal, Strategy::ExactStrict),
        Verdict::NoPrediction
    );
}

#[test]
fn write_skew_is_predicted_with_the_strict_boundary() {
    // t1: r(x) w(y); t2: w(x) r(y), observed serially (t2 reads y from t1). Changing t2's
    // read of y (its last event) to t0 gives write skew, which is causal.
    let h = hist(&[
        &[&[R("x", None), W("y")]],
        &[&[W("x"), R("y", Some((0, 0)))]],
    ]);
    for level in [Level::Causal, Level::ReadAtomic, Level::ReadCommitted] {
        for strategy in Strategy::ALL {
            let out = run(&h, level, strategy);
            assert_eq!(out.verdict, Verdict::Predicted, "{level} {strategy}");
        }
    }
}

#[test]
fn single_writing_transaction_is_never_predicted_under_causal() {
    let h = single_writer();
    for strategy in Strategy::ALL {
        assert_eq!(
            verdict(&h, Level::Causal, strategy),
            Verdict::NoPrediction,
            "{strategy}"
        );
        assert_eq!(
            verdict(&h, Level::ReadAtomic, strategy),
            Verdict::NoPrediction,
            "{strategy}"
        );
    }
}

#[test]
fn single_writing_transaction_is_predicted_under_rc() {
    // Read committed lets the writer's session successor read the initial state.
    let h = single_writer();
    for strategy in Strategy::ALL {
        let out = run(&h, Level::ReadCommitted, strategy);
        assert_eq!(out.verdict, Verdict::Predicted, "{strategy}");
    }
}

#[test]
fn read_only_histories_have_no_prediction() {
    let h = hist(&[
        &[&[R("x", None), R("y", None)], &[R("x", None)]],
        &[&[R("y", None)]],
    ]);
    for level in [Level::Causal, Level::ReadAtomic, Level::ReadCommitted] {
        for strategy in Strategy::ALL {
            let out = run(&h, level, strategy);
            assert_eq!(out.verdict, Verdict::NoPrediction, "{level} {strategy}");
        }
    }
}

#[test]
fn fractured_read_is_rc_but_not_ra() {
    // t1 writes x and y; t2 reads y then x from t1. Reading y from t0 instead is allowed by
    // read committed (the older value is read first) but not by read atomic.
    let h = hist(&[
        &[&[W("x"), W("y")]],
        &[&[R("y", Some((0, 0))), R("x", Some((0, 0)))]],
    ]);
    assert_eq!(
        verdict(&h, Level::ReadCommitted, Strategy::ApproxRelaxed),
        Verdict::Predicted
    );
    assert_eq!(
        verdict(&h, Level::ReadAtomic, Strategy::ApproxRelaxed),
        Verdict::NoPrediction
    );
    // Strict: the changed read must be the session's last event, but the read of x after it
    // is what closes the cycle.
    assert_eq!(
        verdict(&h, Level::ReadCommitted, Strategy::ApproxStrict),
        Verdict::NoPrediction
    );
}

#[test]
fn observed_violation_is_reported() {
    // A fractured read violates read atomic and causal.
    let h = hist(&[
        &[&[W("x"), W("y")]],
        &[&[R("x", Some((0, 0))), R("y", None)]],
    ]);
    let out = predict(
        &h,
        &PredictOptions::new(Level::Causal, Strategy::ApproxRelaxed),
    )
    .unwrap();
    assert_eq!(out.verdict, Verdict::ObservedViolation);
    assert!(out.observed.is_some());
    assert!(out.prediction.is_none());
}

#[test]
fn unsupported_levels_are_errors() {
    let h = deposits();
    assert!(matches!(
        predict(
            &h,
            &PredictOptions::new(Level::Serializable, Strategy::ApproxRelaxed)
        ),
        Err(PredictError::UnsupportedLevel(Level::Serializable))
    ));
}

#[test]
fn aborted_transactions_are_not_part_of_the_prediction() {
    let mut b = HistoryBuilder::new("abort");
    let acct = b.key("acct");
    let s1 = b.session(None);
    let s2 = b.session(None);
    let t1 = b.begin(s1, None);
    b.read(t1, acct, None, ReadFrom::Initial, 0);
    b.write(t1, acct, None, 0);
    let ta = b.begin(s2, None);
    b.read(ta, acct, None, ReadFrom::Txn(t1), 0);
    b.write(ta, acct, None, 0);
    b.abort(ta);
    let t2 = b.begin(s2, None);
    b.read(t2, acct, None, ReadFrom::Txn(t1), 0);
    b.write(t2, acct, None, 0);
    let h = b.build().unwrap();
    let out = run(&h, Level::Causal, Strategy::ApproxRelaxed);
    let p = out.prediction.expect("the deposit pattern");
    assert_eq!(p.history.txn_count(), 3);
    assert!(p.history.txns().iter().all(|t| t.is_committed()));
}

#[test]
fn strict_boundary_cuts_the_boundary_transaction() {
    let h = hist(&[
        &[&[R("x", None), W("y")]],
        &[
            &[W("x"), R("y", Some((0, 0))), W("z")],
            &[R("z", Some((1, 0)))],
        ],
    ]);
    let out = run(&h, Level::Causal, Strategy::ApproxStrict);
    let p = out.prediction.expect("write skew");
    let b = &p.boundaries[1];
    assert_eq!(b.txn, Some(2));
    assert_eq!(b.included_txns, 1);
    // Session 2's transaction keeps w(x) and the boundary read r(y), not w(z); its second
    // transaction is gone.
    let last = p.history.txn_count() as u32 - 1;
    assert_eq!(p.history.txn_ops(last).len(), 2);
    assert_eq!(p.history.txn_count(), 3);
}

#[test]
fn stats_are_reported() {
    let out = run(&deposits(), Level::Causal, Strategy::ApproxRelaxed);
    assert_eq!(out.stats.engine, Some(Engine::Scalable));
    assert!(out.stats.seeds >= 1, "the deposit's lost update is a seed");
    let mut options = PredictOptions::new(Level::Causal, Strategy::ApproxRelaxed);
    options.engine = Engine::Paper;
    let out = run_with(&deposits(), &options);
    let s = &out.stats;
    assert_eq!(s.nodes, 3);
    assert_eq!(s.choices, 2);
    assert!(s.encoding.literals > 0 && s.encoding.assertions > 0);
    assert!(s.solver_calls >= 1);
    assert_eq!(s.rejected_models, 0);
}

/// Ground truth by enumeration: every boundary of every session and every writer of every
/// read the boundary lets change; `accept` judges each predicted history that satisfies the
/// level.
pub(super) fn brute_force(
    h: &History,
    level: Level,
    boundary: BoundaryKind,
    accept: &dyn Fn(&History) -> bool,
) -> bool {
    let space = Space::new(h, boundary, level == Level::ReadCommitted).unwrap();
    brute_force_space(&space, level, accept)
}

/// [`brute_force`] over the boundaries and read choices of `space`.
pub(super) fn brute_force_space(
    space: &Space,
    level: Level,
    accept: &dyn Fn(&History) -> bool,
) -> bool {
    brute_force_judged(space, level, &|p, _| accept(p))
}

/// [`brute_force_space`] with `accept` given the predicted history and the history the level
/// judges (pc, si: the boundary transactions with their whole write sets; else the same).
pub(super) fn brute_force_judged(
    space: &Space,
    level: Level,
    accept: &dyn Fn(&History, &History) -> bool,
) -> bool {
    let sessions = &space.sessions;
    let mut bvals = vec![0u32; sessions.len()];
    loop {
        if bvals
            .iter()
            .zip(sessions)
            .all(|(&b, s)| s.allowed[b as usize])
            && choices_exist(space, &bvals, level, accept)
        {
            return true;
        }
        // Next boundary vector.
        let mut i = 0;
        loop {
            if i == sessions.len() {
                return false;
            }
            bvals[i] += 1;
            if bvals[i] <= sessions[i].max {
                break;
            }
            bvals[i] = 0;
            i += 1;
        }
    }
}

fn choices_exist(
    space: &Space,
    bvals: &[u32],
    level: Level,
    accept: &dyn Fn(&History, &History) -> bool,
) -> bool {
    let n_units = space.units.len();
    let session_of = |u: usize| {
        space.node_session[space.groups[space.units[u].group as usize].node as usize] as usize
    };
    // Per unit: the candidate indices it may take (NONE = excluded).
    let mut options: Vec<Vec<u32>> = Vec::with_capacity(n_units);
    for (u, unit) in space.units.iter().enumerate() {
        let b = bvals[session_of(u)];
        options.push(if unit.inc > b {
            vec![NONE]
        } else if unit.fix <= b {
            vec![unit.obs]
        } else {
            (0..space.cands(unit.group).len() as u32).collect()
        });
    }
    let mut pick = vec![0usize; n_units];
    loop {
        let assignment = extract::Assignment {
            boundary: bvals.to_vec(),
            choice: (0..n_units).map(|u| options[u][pick[u]]).collect(),
        };
        // A read of a write outside the writer's boundary is infeasible: build rejects it.
        if let Ok(built) = extract::build(space, &assignment) {
            let p = &built.history;
            // PC and SI judge the boundary transactions with their whole write sets.
            let full = matches!(level, Level::Prefix | Level::Snapshot).then(|| {
                extract::build_with(space, &assignment, true)
                    .unwrap()
                    .history
            });
            let level_h = full.as_ref().unwrap_or(p);
            if level_holds(level_h, level) && accept(p, level_h) {
                return true;
            }
        }
        let mut i = 0;
        loop {
            if i == n_units {
                return false;
            }
            pick[i] += 1;
            if pick[i] < options[i].len() {
                break;
            }
            pick[i] = 0;
            i += 1;
        }
    }
}

pub(super) fn unserializable(p: &History) -> bool {
    let unser = engines::check_serializable(p, None).unwrap() == SerVerdict::Unserializable;
    if let Some(ser) = check::oracle::satisfies(p, Level::Serializable) {
        assert_eq!(ser, !unser, "SMT serializability check vs oracle");
    }
    unser
}

pub(super) fn pco_cyclic(p: &History) -> bool {
    explain::pco_cycle(p).is_some()
}

/// Every strategy's verdict against the enumeration, and the integer-rank encoding against the
/// rounds encoding.
pub(super) fn agree_with_brute_force(h: &History, level: Level) {
    let truth_exact = brute_force(h, level, BoundaryKind::Strict, &unserializable);
    let truth_strict = brute_force(h, level, BoundaryKind::Strict, &pco_cyclic);
    let truth_relaxed = brute_force(h, level, BoundaryKind::Relaxed, &pco_cyclic);
    let expect = |t: bool| {
        if t {
            Verdict::Predicted
        } else {
            Verdict::NoPrediction
        }
    };
    let observed_unserializable =
        engines::check_serializable(h, None).unwrap() == SerVerdict::Unserializable;
    for (strategy, truth) in [
        (Strategy::ExactStrict, truth_exact),
        (Strategy::ApproxStrict, truth_strict),
        (Strategy::ApproxRelaxed, truth_relaxed),
    ] {
        assert_eq!(
            paper_verdict(h, level, strategy),
            expect(truth),
            "paper engine, {strategy}"
        );
        // The scalable engine answers an unserializable observed run as such.
        let scalable = if observed_unserializable {
            Verdict::ObservedUnserializable
        } else {
            expect(truth)
        };
        assert_eq!(
            verdict(h, level, strategy),
            scalable,
            "scalable engine, {strategy}"
        );
    }
    let mut options = PredictOptions::new(level, Strategy::ExactStrict);
    options.engine = Engine::Paper;
    options.exact = ExactMethod::Quantifier;
    let out = predict(h, &options).unwrap();
    assert_eq!(
        out.verdict,
        expect(truth_exact),
        "exact with Z3's quantifier"
    );
    for strategy in [Strategy::ApproxStrict, Strategy::ApproxRelaxed] {
        let mut options = PredictOptions::new(level, strategy);
        options.ranks = RankEncoding::Integer;
        options.engine = Engine::Paper;
        let out = predict(h, &options).unwrap();
        assert_eq!(
            out.verdict,
            paper_verdict(h, level, strategy),
            "integer ranks, {strategy}"
        );
    }
    // The approximation is sound: a cyclic pco is unserializable.
    assert!(!truth_strict || truth_exact);
}

/// [`agree_with_brute_force`] on every history at every level.
pub(super) fn all_agree_with_brute_force(histories: &[History], levels: &[Level]) {
    for h in histories {
        for &level in levels {
            agree_with_brute_force(h, level);
        }
    }
}

/// [`agree_with_brute_force`] on tiny generated runs (3 sessions of 2 transactions of 2
/// operations over 2 keys, 15 % aborted), one per seed and (store consistency, level) pair.
pub(super) fn generated_runs_agree(seeds: std::ops::Range<u64>, cases: &[(Consistency, Level)]) {
    for seed in seeds {
        for &(consistency, level) in cases {
            let h = generate(&GenerateParams {
                sessions: 3,
                txns_per_session: 2,
                ops_per_txn: 2,
                keys: 2,
                abort_ratio: 0.15,
                consistency,
                seed,
                ..GenerateParams::default()
            })
            .unwrap();
            agree_with_brute_force(&h, level);
        }
    }
}

#[test]
fn paper_examples_agree_with_brute_force() {
    all_agree_with_brute_force(
        &[deposits(), single_writer()],
        &[Level::Causal, Level::ReadAtomic, Level::ReadCommitted],
    );
}

#[test]
fn generated_runs_agree_with_brute_force() {
    // Tiny runs of the generator's serializable store (with aborts) and causal store (whose runs
    // may already be unserializable).
    generated_runs_agree(
        0..20,
        &[
            (Consistency::Serializable, Level::Causal),
            (Consistency::Serializable, Level::ReadCommitted),
            (Consistency::Causal, Level::ReadAtomic),
        ],
    );
}

#[test]
fn every_distinct_anomaly_is_reported() {
    // Three read-modify-write transactions of one key in three sessions, observed serially:
    // several lost updates, each a different changed read.
    let h = hist(&[
        &[&[R("x", None), W("x")]],
        &[&[R("x", Some((0, 0))), W("x")]],
        &[&[R("x", Some((1, 0))), W("x")]],
    ]);
    for level in [Level::Causal, Level::ReadCommitted] {
        let mut options = PredictOptions::new(level, Strategy::ApproxRelaxed);
        options.max = usize::MAX;
        let out = run_with(&h, &options);
        assert_eq!(out.verdict, Verdict::Predicted);
        assert!(
            out.predictions.len() >= 2,
            "{level}: {}",
            out.predictions.len()
        );
        assert_eq!(out.stats.exhaustive, Some(true));
        options.max = 1;
        assert_eq!(run_with(&h, &options).predictions.len(), 1);
    }
}

/// The scalable engine answers exactly what the paper-form engine answers on small generated
/// histories (with aborts), every strategy and level.
#[test]
fn engines_agree_on_small_generated_runs() {
    for seed in 0..u64::from(proptest_cases(8).max(4)) {
        let h = generate(&GenerateParams {
            sessions: 3 + (seed % 2) as u32,
            txns_per_session: 3,
            ops_per_txn: 3,
            keys: 4,
            read_ratio: 0.6,
            abort_ratio: 0.1,
            consistency: Consistency::Serializable,
            seed,
            ..GenerateParams::default()
        })
        .unwrap();
        for level in [
            Level::Causal,
            Level::ReadAtomic,
            Level::ReadCommitted,
            Level::Prefix,
            Level::Snapshot,
        ] {
            for strategy in Strategy::ALL {
                assert_eq!(
                    verdict(&h, level, strategy),
                    paper_verdict(&h, level, strategy),
                    "seed {seed} {level} {strategy}"
                );
            }
        }
    }
}

/// Removing the candidate writers a read can never take ([`Space::prune_forced_overwrites`])
/// changes no answer of the enumeration, for either boundary and either criterion.
fn pruning_keeps_every_answer(h: &History, level: Level) -> u64 {
    let mut removed = 0;
    for boundary in [BoundaryKind::Strict, BoundaryKind::Relaxed] {
        let full = Space::new(h, boundary, level == Level::ReadCommitted).unwrap();
        let mut pruned = Space::new(h, boundary, level == Level::ReadCommitted).unwrap();
        removed += pruned.prune_forced_overwrites(level);
        let accepts: [&dyn Fn(&History) -> bool; 2] = [&unserializable, &pco_cyclic];
        for accept in accepts {
            assert_eq!(
                brute_force_space(&full, level, accept),
                brute_force_space(&pruned, level, accept),
                "{level} {boundary:?}"
            );
        }
        // Any candidate valid at the level at all is kept.
        assert_eq!(
            brute_force_space(&full, level, &|_| true),
            brute_force_space(&pruned, level, &|_| true)
        );
    }
    removed
}

#[test]
fn a_write_forced_into_the_readers_past_removes_older_candidates() {
    // T2.1 reads y from T1.2, so T1.1 (which writes x) happens before T2.2 in every
    // prediction that includes T2.2: T2.2 can never read x from the initial state.
    let h = hist(&[
        &[&[W("x")], &[W("y")]],
        &[&[R("y", Some((0, 1)))], &[R("x", Some((0, 0)))]],
    ]);
    for level in [Level::Causal, Level::Prefix, Level::Snapshot] {
        assert!(pruning_keeps_every_answer(&h, level) >= 2, "{level}");
    }
    // Read atomic orders only the reader's own session predecessors' writes before it.
    assert_eq!(pruning_keeps_every_answer(&h, Level::ReadAtomic), 0);
    assert_eq!(pruning_keeps_every_answer(&h, Level::ReadCommitted), 0);
}

mod random {
    use super::*;
    use proptest::prelude::*;

    fn level() -> impl proptest::strategy::Strategy<Value = Level> {
        prop_oneof![
            Just(Level::Causal),
            Just(Level::ReadAtomic),
            Just(Level::ReadCommitted)
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: proptest_cases(1),
            ..ProptestConfig::default()
        })]

        /// On tiny serial runs every strategy answers exactly what enumerating all boundaries
        /// and read choices answers, and every prediction re-verifies.
        #[test]
        fn strategies_agree_with_enumeration(
            program in random_program(),
            picks in proptest::collection::vec(0u8..3, 6),
            level in level(),
        ) {
            let h = serial_run(&program, &picks);
            agree_with_brute_force(&h, level);
        }

        /// The candidate writers removed from the solver phase's space are never taken by a
        /// candidate valid at the level (causal, ra, pc, si).
        #[test]
        fn pruned_candidates_change_no_answer(
            program in random_program(),
            picks in proptest::collection::vec(0u8..3, 6),
            level in prop_oneof![
                Just(Level::Causal),
                Just(Level::ReadAtomic),
                Just(Level::Prefix),
                Just(Level::Snapshot)
            ],
        ) {
            let h = serial_run(&program, &picks);
            pruning_keeps_every_answer(&h, level);
        }
    }
}

#[test]
fn an_exhausted_timeout_is_unknown() {
    let h = deposits();
    let options = PredictOptions::new(Level::Causal, Strategy::ApproxRelaxed)
        .with_timeout(Some(Duration::ZERO));
    let out = predict(&h, &options).unwrap();
    assert_eq!(out.verdict, Verdict::Unknown);
    assert!(out.reason.unwrap().contains("timeout"));
    assert!(out.prediction.is_none());
}

#[test]
fn text_and_json_renderings() {
    let out = run(&deposits(), Level::Causal, Strategy::ApproxRelaxed);
    let text = out.to_string();
    assert!(text.contains("PREDICTED"), "{text}");
    assert!(text.contains("reads acct from initial state"), "{text}");
    assert!(
        text.contains("session 2 (input id 2): after T2.1"),
        "{text}"
    );
    let json = out.to_json();
    assert_eq!(json["verdict"], "predicted");
    assert_eq!(json["prediction"]["changed_reads"][0]["key"], "acct");
    assert!(json["prediction"]["history"].is_object());
    let dot = dot::prediction_dot(&deposits(), out.prediction.as_ref().unwrap());
    assert!(
        dot.contains("t0 -> t2 [label=\"wr acct\", color=blue"),
        "{dot}"
    );
    // Byte for byte: the one DOT writer (`crate::dot::DotWriter`) must write what was written.
    assert_eq!(
        dot,
        "digraph prediction {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n  t0 [label=\"initial state\\n0 reads, 1 writes\"];\n  t1 [label=\"T1.1\\n1 reads, 1 writes\", style=filled, fillcolor=\"#fde8e6\"];\n  t2 [label=\"T2.1\\n1 reads, 1 writes\", style=\"bold,filled\", fillcolor=\"#fde8e6\"];\n  t0 -> t1 [label=\"so\", color=grey, fontcolor=grey];\n  t0 -> t2 [label=\"so\", color=grey, fontcolor=grey];\n  t0 -> t2 [label=\"wr acct\", color=blue, fontcolor=blue];\n  t1 -> t2 [label=\"rw acct\", color=red, fontcolor=red, style=dashed, penwidth=2];\n  t2 -> t1 [label=\"rw acct\", color=red, fontcolor=red, style=dashed, penwidth=2];\n}\n"
    );
    // A titled drawing (a cut search's first prediction) is the same with the label first, as
    // the command line wrote it before the one writer.
    let titled = dot::prediction_dot_titled(
        &deposits(),
        out.prediction.as_ref().unwrap(),
        Some("prediction 1 of those found; cut"),
    );
    assert_eq!(
        titled,
        dot.replacen(
            "{\n",
            "{\n  label=\"prediction 1 of those found; cut\";\n  labelloc=t;\n",
            1
        )
    );
}

#[test]
fn an_encoding_over_the_memory_budget_is_unknown() {
    let h = generate(&GenerateParams {
        sessions: 10,
        txns_per_session: 70,
        ops_per_txn: 2,
        keys: 3,
        consistency: Consistency::Serializable,
        seed: 1,
        ..GenerateParams::default()
    })
    .unwrap();
    let mut options = PredictOptions::new(Level::Causal, Strategy::ApproxRelaxed);
    options.engine = Engine::Paper;
    options.memory = Some(1 << 20);
    let out = predict(&h, &options).unwrap();
    assert_eq!(out.verdict, Verdict::Unknown);
    assert!(out.reason.unwrap().starts_with("memory limit"));
}

/// [`Space::choice_count`], counted without building the space, is exactly the built space's
/// number of choice units, and so a lower bound of its candidate writers before and after
/// pruning (what the scalable search relies on to skip building a space that cannot fit).
#[test]
fn the_choice_count_is_the_spaces_units_and_bounds_its_candidates() {
    for seed in 0..40 {
        for consistency in [Consistency::Serializable, Consistency::Causal] {
            let h = generate(&GenerateParams {
                sessions: 3,
                txns_per_session: 4,
                ops_per_txn: 4,
                keys: 3,
                abort_ratio: 0.1,
                consistency,
                seed,
                ..GenerateParams::default()
            })
            .unwrap();
            for level in [
                Level::Causal,
                Level::ReadAtomic,
                Level::ReadCommitted,
                Level::Prefix,
                Level::Snapshot,
            ] {
                let per_read = level == Level::ReadCommitted;
                let snapshots = matches!(level, Level::Prefix | Level::Snapshot);
                let count = Space::choice_count(&h, per_read, level == Level::Snapshot);
                for boundary in [BoundaryKind::Strict, BoundaryKind::Relaxed] {
                    let built = if snapshots {
                        Space::for_snapshots(&h, boundary, level == Level::Snapshot)
                    } else {
                        Space::new(&h, boundary, per_read)
                    };
                    // A run the level's space rejects (e.g. a non-repeatable read at causal)
                    // has no space to compare with.
                    let Ok(mut space) = built else { continue };
                    let candidates = |s: &Space| -> u64 {
                        s.units.iter().map(|u| s.cands(u.group).len() as u64).sum()
                    };
                    let context = format!("seed {seed} {consistency:?} {level} {boundary:?}");
                    assert_eq!(count, space.units.len() as u64, "{context}");
                    assert!(count <= candidates(&space), "{context}");
                    space.prune_forced_overwrites(level);
                    assert!(count <= candidates(&space), "{context}");
                }
            }
        }
    }
}
