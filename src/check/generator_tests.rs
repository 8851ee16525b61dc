//! The generator's guarantees ([`crate::generate`]), judged by the brute-force oracle: every
//! mode is read consistent and each consistent mode satisfies its level (and, sometimes, not
//! the next stronger one). They live here, not beside the generator, because `generate` sits
//! below `check` (docs/architecture.md): a test may use the modules below its own.

use super::oracle::{read_consistency_violation, satisfies};
use super::Level;
use crate::generate::{generate, Consistency, GenerateParams, KeyDistribution};

fn tiny(consistency: Consistency, seed: u64) -> GenerateParams {
    GenerateParams {
        sessions: 3,
        txns_per_session: 2,
        ops_per_txn: 4,
        keys: 3,
        read_ratio: 0.5,
        distribution: KeyDistribution::Uniform,
        abort_ratio: 0.1,
        consistency,
        seed,
    }
}

#[test]
fn every_mode_is_read_consistent() {
    for consistency in Consistency::ALL {
        for seed in 0..20 {
            let p = GenerateParams {
                sessions: 5,
                txns_per_session: 20,
                ops_per_txn: 8,
                keys: 6,
                abort_ratio: 0.2,
                distribution: KeyDistribution::Zipf { exponent: 1.0 },
                consistency,
                seed,
                ..GenerateParams::default()
            };
            let h = generate(&p).unwrap();
            assert_eq!(read_consistency_violation(&h), None, "{consistency} {seed}");
        }
    }
}

/// Counts, over many tiny seeds, how often each level holds, checking that the mode's level
/// always does.
fn verdict_counts(consistency: Consistency, seeds: u64) -> Vec<(Level, u64)> {
    let mut counts: Vec<(Level, u64)> = Level::ALL.iter().map(|&l| (l, 0)).collect();
    for seed in 0..seeds {
        let h = generate(&tiny(consistency, seed)).unwrap();
        for (level, count) in counts.iter_mut() {
            let verdict = satisfies(&h, *level).expect("tiny");
            if let Some(guaranteed) = consistency.level() {
                if guaranteed.implies(*level) {
                    assert!(verdict, "{consistency} seed {seed} fails {level}");
                }
            }
            *count += verdict as u64;
        }
    }
    counts
}

fn count_of(counts: &[(Level, u64)], level: Level) -> u64 {
    counts.iter().find(|(l, _)| *l == level).unwrap().1
}

#[test]
fn each_mode_guarantees_its_level_and_not_more() {
    let seeds = 300;
    let ser = verdict_counts(Consistency::Serializable, seeds);
    assert_eq!(count_of(&ser, Level::Serializable), seeds);
    // Each weaker store must really be weaker: it sometimes breaks the next stronger level.
    let cc = verdict_counts(Consistency::Causal, seeds);
    assert!(count_of(&cc, Level::Serializable) < seeds, "{cc:?}");
    let ra = verdict_counts(Consistency::ReadAtomic, seeds);
    assert!(count_of(&ra, Level::Causal) < seeds, "{ra:?}");
    let rc = verdict_counts(Consistency::ReadCommitted, seeds);
    assert!(count_of(&rc, Level::ReadAtomic) < seeds, "{rc:?}");
    assert!(count_of(&rc, Level::CutIsolation) < seeds, "{rc:?}");
    let none = verdict_counts(Consistency::None, seeds);
    assert!(count_of(&none, Level::ReadCommitted) < seeds, "{none:?}");
    assert!(count_of(&none, Level::ReadCommitted) > 0, "{none:?}");
}
