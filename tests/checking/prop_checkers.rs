//! Property tests: the fast checkers agree with the brute-force oracle on random tiny
//! histories, the oracle respects the strength of the levels, and `generate --consistent L`
//! output satisfies L.
//!
//! Case count: `ISOPREDICT_PROPTEST_CASES` if set, else `PROPTEST_CASES` but at least 10,000
//! (CI sets `PROPTEST_CASES=256`; the agreement tests need more to cover the rare anomalies,
//! and a case takes about 20 µs).

use isopredict::check::oracle::{satisfies, MAX_COMMITTED_TXNS};
use isopredict::check::{CheckOptions, Level};
use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};
use isopredict::history::{History, HistoryBuilder, ReadFrom};
use isopredict::verdict::engines::check;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u32>().ok());
    var("ISOPREDICT_PROPTEST_CASES")
        .unwrap_or_else(|| var("PROPTEST_CASES").unwrap_or(0).max(10_000))
}

fn config() -> Config {
    Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-rolled tiny histories: any mix of sessions, aborted transactions, internal reads,
// reads of aborted / intermediate / future / later writes, thin-air reads and cycles.

const KEYS: u8 = 3;
const THIN_AIR_VALUE: u64 = 1_000_000;

#[derive(Debug, Clone)]
struct OpSpec {
    read: bool,
    key: u8,
    /// Which candidate writer a read picks (modulo the number of candidates).
    choice: u16,
    /// A "wild" read picks among every write of its key, the initial value and a thin-air
    /// value; a tame read among the initial value and the final writes of other committed
    /// transactions (or its own latest write, when it wrote the key).
    wild: bool,
}

#[derive(Debug, Clone)]
struct TxnSpec {
    session: u8,
    aborted: bool,
    ops: Vec<OpSpec>,
}

fn op_spec(wild: f64) -> impl Strategy<Value = OpSpec> {
    (
        prop::bool::weighted(0.55),
        0..KEYS,
        any::<u16>(),
        prop::bool::weighted(wild),
    )
        .prop_map(|(read, key, choice, wild)| OpSpec {
            read,
            key,
            choice,
            wild,
        })
}

fn txn_spec(wild: f64) -> impl Strategy<Value = TxnSpec> {
    (
        0u8..4,
        prop::bool::weighted(0.12),
        prop::collection::vec(op_spec(wild), 1..5),
    )
        .prop_map(|(session, aborted, ops)| TxnSpec {
            session,
            aborted,
            ops,
        })
}

/// Builds the history a list of transaction specs describes (at most
/// [`MAX_COMMITTED_TXNS`] of them committed: later ones are aborted).
/// With `earlier_only`, tame reads pick only writes of transactions listed before theirs (so
/// `so ∪ wr` is acyclic).
fn build(specs: &[TxnSpec], earlier_only: bool) -> History {
    let mut specs = specs.to_vec();
    let mut committed = 0;
    for t in &mut specs {
        if !t.aborted {
            committed += 1;
            if committed > MAX_COMMITTED_TXNS {
                t.aborted = true;
            }
        }
    }
    // Pass 1: values of the writes, (txn, op, key, value), and each transaction's final ones.
    let mut writes: Vec<(usize, usize, u8, u64)> = Vec::new();
    for (t, spec) in specs.iter().enumerate() {
        for (o, op) in spec.ops.iter().enumerate() {
            if !op.read {
                writes.push((t, o, op.key, writes.len() as u64 + 1));
            }
        }
    }
    let is_final = |&(t, o, k, _): &(usize, usize, u8, u64)| {
        !writes
            .iter()
            .any(|&(t2, o2, k2, _)| t2 == t && k2 == k && o2 > o)
    };
    // Pass 2: build.
    let mut b = HistoryBuilder::new("proptest");
    b.initial_value(0);
    let keys: Vec<_> = (0..KEYS).map(|k| b.key(&format!("k{k}"))).collect();
    let sessions: Vec<_> = (0..4).map(|_| b.session(None)).collect();
    for (t, spec) in specs.iter().enumerate() {
        let txn = b.begin(sessions[spec.session as usize], None);
        for (o, op) in spec.ops.iter().enumerate() {
            let key = keys[op.key as usize];
            if !op.read {
                let value = writes.iter().find(|w| w.0 == t && w.1 == o).unwrap().3;
                b.write(txn, key, Some(value), 0);
                continue;
            }
            let own_latest = writes
                .iter()
                .rev()
                .find(|w| w.0 == t && w.1 < o && w.2 == op.key)
                .map(|w| w.3);
            let mut candidates: Vec<u64> = vec![0];
            if op.wild {
                candidates.extend(writes.iter().filter(|w| w.2 == op.key).map(|w| w.3));
                candidates.push(THIN_AIR_VALUE);
            } else if let Some(v) = own_latest {
                candidates = vec![v];
            } else {
                candidates.extend(
                    writes
                        .iter()
                        .filter(|w| w.2 == op.key && w.0 != t && !specs[w.0].aborted)
                        .filter(|w| !earlier_only || w.0 < t)
                        .filter(|w| is_final(w))
                        .map(|w| w.3),
                );
            }
            let value = candidates[op.choice as usize % candidates.len()];
            b.read(txn, key, Some(value), ReadFrom::Value(value), 0);
        }
        if spec.aborted {
            b.abort(txn);
        }
    }
    b.build().expect("generated tiny history is well formed")
}

/// Hand-rolled histories: up to 8 transactions, a few reads wild.
fn hand_rolled() -> impl Strategy<Value = History> {
    prop::collection::vec(txn_spec(0.08), 1..9).prop_map(|specs| build(&specs, false))
}

/// Hand-rolled histories of 4–8 transactions with tame reads of earlier transactions only:
/// where RC, RA and CC differ most often.
fn hand_rolled_tame() -> impl Strategy<Value = History> {
    prop::collection::vec(txn_spec(0.0), 4..9).prop_map(|specs| build(&specs, true))
}

/// Tiny histories from the generator, in every mode (at most 7 transactions).
fn generated() -> impl Strategy<Value = History> {
    (
        1u32..4,
        1u32..4,
        2u32..6,
        1u32..4,
        0.3f64..0.7,
        0u8..3,
        prop_oneof![
            2 => Just(Consistency::None),
            1 => Just(Consistency::Serializable),
            2 => Just(Consistency::Causal),
            4 => Just(Consistency::ReadAtomic),
            4 => Just(Consistency::ReadCommitted),
        ],
        prop::bool::weighted(0.3),
        any::<u64>(),
    )
        .prop_map(
            |(sessions, txns, ops, keys, read_ratio, dist, consistency, aborts, seed)| {
                let txns_per_session = txns.min(MAX_COMMITTED_TXNS as u32 / sessions).max(1);
                let distribution = match dist {
                    0 => KeyDistribution::Uniform,
                    1 => KeyDistribution::Zipf { exponent: 1.0 },
                    _ => KeyDistribution::Hotspot {
                        hot_keys: 0.3,
                        hot_ops: 0.8,
                    },
                };
                generate(&GenerateParams {
                    sessions,
                    txns_per_session,
                    ops_per_txn: ops,
                    keys,
                    read_ratio,
                    distribution,
                    abort_ratio: if aborts { 0.2 } else { 0.0 },
                    consistency,
                    seed,
                })
                .expect("valid parameters")
            },
        )
}

/// Both sources, half and half.
fn tiny_history() -> impl Strategy<Value = History> {
    prop_oneof![hand_rolled(), hand_rolled_tame(), generated()]
}

// ---------------------------------------------------------------------------------------------
// The checkers agree with the oracle.

fn agrees_with_oracle(level: Level) {
    let mut runner = TestRunner::new(config());
    let options = CheckOptions::default();
    runner
        .run(&tiny_history(), |h| {
            let report = check(&h, level, &options).expect("supported level");
            let expected = satisfies(&h, level).expect("tiny history");
            prop_assert_eq!(
                report.is_consistent(),
                expected,
                "{} on this history (oracle says {}): {:#?}",
                level,
                expected,
                report
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn read_committed_agrees_with_oracle() {
    agrees_with_oracle(Level::ReadCommitted);
}

#[test]
fn read_atomic_agrees_with_oracle() {
    agrees_with_oracle(Level::ReadAtomic);
}

#[test]
fn causal_agrees_with_oracle() {
    agrees_with_oracle(Level::Causal);
}

#[test]
fn cut_isolation_agrees_with_oracle() {
    agrees_with_oracle(Level::CutIsolation);
}

// ---------------------------------------------------------------------------------------------
// Oracle-only properties.

#[test]
fn oracle_respects_level_strength() {
    let mut runner = TestRunner::new(config());
    runner
        .run(&tiny_history(), |h| {
            let verdicts: Vec<(Level, bool)> = Level::ALL
                .iter()
                .map(|&l| (l, satisfies(&h, l).expect("tiny history")))
                .collect();
            for &(strong, holds) in &verdicts {
                for &(weak, weak_holds) in &verdicts {
                    if holds && strong.implies(weak) {
                        prop_assert!(weak_holds, "{strong} holds but {weak} does not");
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn generated_histories_satisfy_their_level_per_oracle() {
    let mut runner = TestRunner::new(config());
    let modes = prop::sample::select(vec![
        Consistency::Serializable,
        Consistency::Causal,
        Consistency::ReadAtomic,
        Consistency::ReadCommitted,
    ]);
    runner
        .run(
            &(modes, 1u32..4, 1u32..5, 1u32..4, any::<u64>()),
            |(consistency, sessions, ops, keys, seed)| {
                let params = GenerateParams {
                    sessions,
                    txns_per_session: MAX_COMMITTED_TXNS as u32 / sessions,
                    ops_per_txn: ops,
                    keys,
                    abort_ratio: 0.15,
                    consistency,
                    seed,
                    ..GenerateParams::default()
                };
                let h = generate(&params).unwrap();
                let level = consistency.level().unwrap();
                prop_assert_eq!(satisfies(&h, level), Some(true));
                Ok(())
            },
        )
        .unwrap();
}

/// Larger generated histories (up to ~50,000 events) satisfy their mode's level, and every
/// weaker level the checkers decide, per the checkers.
#[test]
fn generated_histories_satisfy_their_level_per_checker() {
    let options = CheckOptions::default();
    let checked = [
        Level::ReadCommitted,
        Level::CutIsolation,
        Level::ReadAtomic,
        Level::Causal,
    ];
    let mut runner = TestRunner::new(Config {
        cases: (cases() / 100).max(50),
        ..config()
    });
    let distribution = prop_oneof![
        Just(KeyDistribution::Uniform),
        Just(KeyDistribution::Zipf { exponent: 1.0 }),
        Just(KeyDistribution::Hotspot {
            hot_keys: 0.2,
            hot_ops: 0.8,
        }),
    ];
    let modes = prop::sample::select(vec![
        Consistency::Serializable,
        Consistency::Causal,
        Consistency::ReadAtomic,
        Consistency::ReadCommitted,
    ]);
    runner
        .run(
            &(
                modes,
                distribution,
                1u32..40,
                1u32..100,
                1u32..12,
                1u32..200,
                0.0f64..0.2,
                any::<u64>(),
            ),
            |(consistency, distribution, sessions, txns, ops, keys, abort_ratio, seed)| {
                let params = GenerateParams {
                    sessions,
                    txns_per_session: txns,
                    ops_per_txn: ops,
                    keys,
                    read_ratio: 0.5,
                    distribution,
                    abort_ratio,
                    consistency,
                    seed,
                };
                let h = generate(&params).unwrap();
                let guaranteed = consistency.level().unwrap();
                for level in checked {
                    if guaranteed.implies(level) {
                        let report = check(&h, level, &options).unwrap();
                        prop_assert!(
                            report.is_consistent(),
                            "{:?} fails {}: {:?} {:?}",
                            params,
                            level,
                            report.read_violations.first(),
                            report.cycles.first()
                        );
                    }
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Both verdicts must be well represented for the agreement tests to mean anything, and so
/// must the histories that separate neighbouring levels.
#[test]
fn tiny_histories_cover_both_verdicts_and_every_separation() {
    use Level::*;
    let mut runner = TestRunner::deterministic();
    let strategy = tiny_history();
    let samples = 2000;
    let mut holds = [0usize; Level::ALL.len()];
    // (holds, fails, count): histories satisfying the first level but not the second.
    let mut separations = [
        (ReadCommitted, ReadAtomic, 0),
        (CutIsolation, ReadAtomic, 0),
        (ReadAtomic, Causal, 0),
        (ReadCommitted, CutIsolation, 0),
        (CutIsolation, ReadCommitted, 0),
        (Causal, Prefix, 0),
        (Prefix, Snapshot, 0),
        (Snapshot, Serializable, 0),
    ];
    for _ in 0..samples {
        let h = strategy.new_tree(&mut runner).unwrap().current();
        let verdict = |level| satisfies(&h, level).unwrap();
        for (i, &level) in Level::ALL.iter().enumerate() {
            holds[i] += verdict(level) as usize;
        }
        for (strong, weak, count) in &mut separations {
            *count += (verdict(*strong) && !verdict(*weak)) as usize;
        }
    }
    for (i, &level) in Level::ALL.iter().enumerate() {
        let share = holds[i] as f64 / samples as f64;
        assert!(
            (0.2..0.8).contains(&share),
            "{level} holds on {:.0}% of the samples",
            share * 100.0
        );
    }
    // The levels the fast checkers decide (rc, ci, ra, cc) are separated in ≥ 1% of the
    // samples; the stronger ones at least occasionally.
    for (holds, fails, count) in separations {
        let needed = if holds.implies(Causal) {
            1
        } else {
            samples / 100
        };
        assert!(
            count >= needed,
            "only {count} of {samples} samples satisfy {holds} but not {fails}"
        );
    }
}
