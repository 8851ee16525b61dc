//! The generator's shape, determinism and validation; its level guarantees are judged by the
//! oracle in `check::generator_tests` (generate sits below check).

use super::*;

#[test]
fn same_seed_same_history() {
    for consistency in Consistency::ALL {
        let p = GenerateParams {
            consistency,
            seed: 9,
            ..GenerateParams::default()
        };
        let a = generate(&p).unwrap();
        let b = generate(&p).unwrap();
        a.same_content(&b).unwrap();
        let c = generate(&GenerateParams { seed: 10, ..p }).unwrap();
        assert!(a.same_content(&c).is_err(), "{consistency}");
    }
}

#[test]
fn shape_follows_the_parameters() {
    let p = GenerateParams {
        sessions: 7,
        txns_per_session: 13,
        ops_per_txn: 6,
        keys: 1000,
        abort_ratio: 0.25,
        ..GenerateParams::default()
    };
    let h = generate(&p).unwrap();
    let stats = h.stats();
    assert_eq!(stats.sessions, 7);
    assert_eq!(stats.committed + stats.aborted, 7 * 13);
    assert!(stats.aborted > 5 && stats.aborted < 45, "{stats:?}");
    assert_eq!(stats.reads + stats.writes, p.events() as usize);
    assert_eq!(stats.min_ops_per_txn, 6);
    assert_eq!(stats.max_ops_per_txn, 6);
    assert!(h.unresolved().is_empty());
    for s in h.sessions() {
        assert_eq!(s.txns().len(), 13);
    }
    let all_reads = generate(&GenerateParams {
        read_ratio: 1.0,
        ..p.clone()
    })
    .unwrap();
    assert_eq!(all_reads.stats().writes, 0);
    let all_aborted = generate(&GenerateParams {
        abort_ratio: 1.0,
        ..p.clone()
    })
    .unwrap();
    assert_eq!(all_aborted.stats().committed, 0);
}

#[test]
fn parameters_are_validated() {
    let bad = [
        GenerateParams {
            keys: 0,
            ..GenerateParams::default()
        },
        GenerateParams {
            read_ratio: 1.5,
            ..GenerateParams::default()
        },
        GenerateParams {
            abort_ratio: -0.1,
            ..GenerateParams::default()
        },
        GenerateParams {
            sessions: 100_000,
            txns_per_session: 100_000,
            ops_per_txn: 10,
            ..GenerateParams::default()
        },
    ];
    for p in bad {
        let e = generate(&p).unwrap_err();
        assert!(e.message.contains("--") || e.message.contains("fit"), "{e}");
    }
    let empty = generate(&GenerateParams {
        txns_per_session: 0,
        ..GenerateParams::default()
    })
    .unwrap();
    assert_eq!(empty.txn_count(), 1);
}

#[test]
fn names_parse() {
    for c in Consistency::ALL {
        assert_eq!(c.name().parse::<Consistency>().unwrap(), c);
    }
    assert_eq!("random".parse::<Consistency>().unwrap(), Consistency::None);
    assert!("si".parse::<Consistency>().is_err());
    for d in ["uniform", "zipf", "zipf:0.8", "hotspot", "hotspot:0.1:0.9"] {
        let parsed: KeyDistribution = d.parse().unwrap();
        assert_eq!(
            parsed.to_string().parse::<KeyDistribution>().unwrap(),
            parsed
        );
    }
    for d in ["gauss", "zipf:x", "hotspot:2:0.5", "zipf:-1", "uniform:3"] {
        assert!(d.parse::<KeyDistribution>().is_err(), "{d}");
    }
}
