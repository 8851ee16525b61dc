//! SER, SI and PC (`isopredict::ser`): the prefix search and the Z3 engine against the
//! brute-force oracle on random tiny histories; the shipped labelled histories; the observed
//! IsoPredict traces (all serializable); the fast serializability entry point against the
//! direct Z3 check.
//!
//! Case count: `PROPTEST_CASES` (default 256; a case takes a few milliseconds).

use crate::common;

use std::path::Path;

use isopredict::check::{oracle, Level};
use isopredict::formats::{read_file, Format};
use isopredict::generate::{generate, Consistency, GenerateParams};
use isopredict::ser::{
    verify_serial_order, Engine, SerVerdict, StrongLevel, StrongOptions, Verdict,
};
use isopredict::verdict::engines::{check_serializable, check_strong, is_serializable};
use isopredict::History;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const STRONG: [StrongLevel; 3] = [
    StrongLevel::Serializable,
    StrongLevel::Snapshot,
    StrongLevel::Prefix,
];

fn options(engine: Engine) -> StrongOptions {
    StrongOptions {
        engine,
        witness: true,
        ..StrongOptions::default()
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// A tiny history: 2–4 sessions, at most 7 transactions, 2–3 keys, reads from a causal store,
/// a read-atomic one or anywhere.
fn tiny() -> impl Strategy<Value = History> {
    (0u64..1 << 40, 0usize..4, 0usize..3).prop_map(|(seed, shape, mode)| {
        let (sessions, txns) = [(2, 3), (3, 2), (4, 1), (2, 2)][shape];
        generate(&GenerateParams {
            sessions,
            txns_per_session: txns,
            ops_per_txn: 3 + (seed % 2) as u32,
            keys: 2 + (seed / 2 % 2) as u32,
            consistency: [
                Consistency::Causal,
                Consistency::ReadAtomic,
                Consistency::None,
            ][mode],
            seed,
            ..GenerateParams::default()
        })
        .expect("valid parameters")
    })
}

#[test]
fn search_and_smt_agree_with_the_oracle() {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&tiny(), |h| {
            for level in STRONG {
                let expected = oracle::satisfies(&h, level.level()).expect("tiny");
                for engine in [Engine::Search, Engine::Smt, Engine::Auto] {
                    let r = check_strong(&h, level, &options(engine)).unwrap();
                    prop_assert_eq!(
                        r.is_consistent(),
                        expected,
                        "{:?} {}: {}",
                        level,
                        engine,
                        r.render_text()
                    );
                    if let Some(v) = &r.violation {
                        // The core is a failing sub-history: it violates the level.
                        let holds = match level {
                            StrongLevel::Serializable => v.core_levels.ser,
                            StrongLevel::Snapshot => v.core_levels.si,
                            StrongLevel::Prefix => v.core_levels.pc,
                        };
                        prop_assert_eq!(holds, Some(false));
                    }
                    if level == StrongLevel::Serializable && expected {
                        let order = r.witness.clone().expect("a witness");
                        prop_assert!(verify_serial_order(&h, &order).is_ok());
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}

fn awdit(relative: &str) -> History {
    let path = common::testdata_dir().join("awdit").join(relative);
    read_file(&path, Some(Format::Awdit)).unwrap_or_else(|e| panic!("{e}"))
}

fn verdicts(h: &History, engine: Engine) -> [bool; 3] {
    STRONG.map(|l| {
        let r = check_strong(h, l, &options(engine)).unwrap();
        assert_ne!(r.verdict, Verdict::Unknown, "{r}");
        r.is_consistent()
    })
}

#[test]
fn labelled_histories() {
    // causal/: named by what they are. [ser, si, pc].
    for (file, expected, anomaly) in [
        ("causal/fully-ser.txt", [true, true, true], None),
        (
            "causal/lost-update.txt",
            [false, false, true],
            Some((StrongLevel::Snapshot, "lost update")),
        ),
        (
            "causal/long-fork.txt",
            [false, false, false],
            Some((StrongLevel::Prefix, "long fork")),
        ),
    ] {
        let h = awdit(file);
        assert_eq!(verdicts(&h, Engine::Search), expected, "{file}");
        assert_eq!(verdicts(&h, Engine::Smt), expected, "{file}");
        if let Some((level, name)) = anomaly {
            let r = check_strong(&h, level, &options(Engine::Auto)).unwrap();
            assert_eq!(r.violation.unwrap().anomaly, name, "{file}");
        }
    }
    // Everything outside causal/ violates CC, hence every strong level, reported by the
    // causal checker.
    let root = common::testdata_dir().join("awdit");
    for folder in ["read-atomic", "read-committed", "none"] {
        for path in common::txt_files(&root.join(folder)) {
            let h = read_file(&path, Some(Format::Awdit)).unwrap();
            for level in STRONG {
                let r = check_strong(&h, level, &options(Engine::Auto)).unwrap();
                assert_eq!(r.verdict, Verdict::Violated, "{}", path.display());
                assert!(r.causal.is_some());
            }
        }
    }
    // The generated causal histories: the engines agree with each other.
    for path in common::txt_files(&root.join("causal").join("generated")) {
        let h = read_file(&path, Some(Format::Awdit)).unwrap();
        for level in STRONG {
            let a = check_strong(&h, level, &options(Engine::Search)).unwrap();
            let b = check_strong(&h, level, &options(Engine::Smt)).unwrap();
            if a.verdict != Verdict::Unknown && b.verdict != Verdict::Unknown {
                assert_eq!(a.verdict, b.verdict, "{} {level:?}", path.display());
            }
        }
    }
}

fn traces() -> Vec<std::path::PathBuf> {
    let files = common::txt_files(Path::new(&common::testdata_dir().join("isopredict-traces")));
    assert_eq!(files.len(), 16);
    files
}

#[test]
fn observed_isopredict_traces_are_serializable() {
    for path in traces() {
        let h = read_file(&path, Some(Format::IsoPredict)).unwrap();
        for level in STRONG {
            for engine in [Engine::Search, Engine::Smt] {
                let r = check_strong(&h, level, &options(engine)).unwrap();
                assert!(
                    r.is_consistent(),
                    "{} {level:?} {engine}:\n{r}",
                    path.display()
                );
            }
        }
        match is_serializable(&h, None).unwrap() {
            SerVerdict::Serializable { order } => verify_serial_order(&h, &order).unwrap(),
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}

#[test]
fn is_serializable_agrees_with_the_direct_z3_check() {
    let mut unserializable = 0;
    for seed in 0..60 {
        let h = generate(&GenerateParams {
            sessions: 4,
            txns_per_session: 6,
            ops_per_txn: 4,
            keys: 6,
            consistency: [Consistency::Causal, Consistency::Serializable][seed as usize % 2],
            seed,
            ..GenerateParams::default()
        })
        .unwrap();
        let fast = is_serializable(&h, None).unwrap();
        let z3 = check_serializable(&h, None).unwrap();
        match (&fast, &z3) {
            (SerVerdict::Serializable { order }, SerVerdict::Serializable { .. }) => {
                verify_serial_order(&h, order).unwrap()
            }
            (SerVerdict::Unserializable, SerVerdict::Unserializable) => unserializable += 1,
            _ => panic!("seed {seed}: {fast:?} vs {z3:?}"),
        }
    }
    assert!(
        unserializable > 5,
        "the sample has unserializable histories"
    );
}

#[test]
fn a_time_limit_gives_unknown_not_a_wrong_verdict() {
    let h = generate(&GenerateParams {
        sessions: 8,
        txns_per_session: 200,
        ops_per_txn: 8,
        keys: 50,
        consistency: Consistency::Serializable,
        seed: 7,
        ..GenerateParams::default()
    })
    .unwrap();
    let r = check_strong(
        &h,
        StrongLevel::Serializable,
        &StrongOptions {
            timeout: Some(std::time::Duration::ZERO),
            engine: Engine::Smt,
            ..StrongOptions::default()
        },
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::Unknown, "{r}");
    assert!(r.unknown_reason.is_some());
    assert_eq!(r.level, Level::Serializable);
}

/// Issue 23: serializable histories of 10^4 transactions (50 sessions × 200 over 10,000
/// uniform keys, where the search used to dead-end after a few hundred placements with every
/// head waiting; 10 sessions × 1,000 over 100 Zipf keys) are decided by the search alone —
/// no Z3 call — with a serial order that replays, and within a bound on failed prefixes.
#[test]
fn the_search_alone_orders_serializable_histories_of_ten_thousand_transactions() {
    use isopredict::generate::KeyDistribution;
    let shapes = [
        (50, 200, 10_000, KeyDistribution::Uniform),
        (10, 1_000, 100, KeyDistribution::Zipf { exponent: 1.0 }),
    ];
    for (sessions, txns, keys, distribution) in shapes {
        let h = generate(&GenerateParams {
            sessions,
            txns_per_session: txns,
            ops_per_txn: 8,
            keys,
            distribution,
            consistency: Consistency::Serializable,
            seed: 0,
            ..GenerateParams::default()
        })
        .unwrap();
        let report = check_strong(
            &h,
            StrongLevel::Serializable,
            &StrongOptions {
                engine: Engine::Search,
                witness: true,
                max_failed_states: 500_000,
                timeout: Some(std::time::Duration::from_secs(300)),
                ..StrongOptions::default()
            },
        )
        .unwrap();
        assert_eq!(
            report.verdict,
            Verdict::Consistent,
            "{sessions} × {txns}: {:?}",
            report.unknown_reason
        );
        assert_eq!(report.summary.smt_calls, 0);
        assert!(verify_serial_order(&h, report.witness.as_ref().unwrap()).is_ok());
    }
}
