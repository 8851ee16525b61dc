//! TPC-C and Wikipedia against the paper's pipeline: the artifact's shipped traces replayed
//! event for event, the Table 3 counts (notes/workloads.md §4 (6), §5 (6), §6), determinism,
//! and random runs under causal / read atomic / read committed (consistent at their level by
//! `isopredict::check`).

use crate::common;

use common::shipped::{
    initial_lines, parse, per_session, replay_shipped, run_lines, shipped, trace_of, WithAborts,
};
use common::table3_average as average;
use common::table3_totals as totals;
use isopredict::check::{CheckOptions, Level};
use isopredict::store::ReadPolicy;
use isopredict::verdict::engines::check;
use isopredict::workloads::{by_name, counts, run, RunConfig, Size, Workload};

fn size_of(file: &str) -> Size {
    if file.contains("large") {
        Size::Large
    } else {
        Size::Small
    }
}

/// Replays `file` against `workload` and asserts the replay wrote the shipped trace exactly:
/// the same initial state, the same transactions with the same events (keys, writers) in the
/// same order, and therefore the same Table 3 counts.
fn assert_reproduces(workload: &dyn Workload, seed: u64, file: &str) {
    let theirs = shipped(file);
    let replay = replay_shipped(workload, seed, file);
    assert!(
        replay.divergences.is_empty(),
        "{file}: {:?}",
        replay.divergences.first()
    );
    let ours = trace_of(&replay);
    assert_eq!(initial_lines(&ours), initial_lines(&theirs), "{file}");
    let (a, b) = (run_lines(&ours), run_lines(&theirs));
    assert_eq!(a.len(), b.len(), "{file}: events");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!("{file}: event {i}: ours {:?}, theirs {:?}", a[i], b[i]);
    }
    let (history, _) = parse(&theirs, file);
    assert_eq!(counts(&replay.history), counts(&history), "{file}");
    assert!(replay.invariants_hold(), "{file}: {:?}", replay.invariants);
}

#[test]
fn tpcc_reproduces_the_shipped_traces_event_for_event() {
    let tpcc = by_name("tpcc").unwrap();
    for (seed, file) in [
        (1, "tpcc_small_10000.txt"),
        (2, "tpcc_small_20000.txt"),
        (1, "tpcc_large_10000.txt"),
        (2, "tpcc_large_20000.txt"),
    ] {
        assert_reproduces(tpcc, seed, file);
        // Our own schedule: the same initial state and the same transactions per session.
        let ours = trace_of(&run(tpcc, &RunConfig::monkeydb(seed, size_of(file))).unwrap());
        let theirs = shipped(file);
        assert_eq!(initial_lines(&ours), initial_lines(&theirs), "{file}");
        assert_eq!(per_session(&ours), per_session(&theirs), "{file}");
    }
}

/// The calls the artifact's Wikipedia runs lost, as (terminal, call): its three worker
/// threads race on the shared, reseeded generator while drawing parameters, a corrupted
/// title makes GetPage user-abort, and the call rolls back without events. Which calls were
/// lost is read off the traces (each session misses one or two transactions of its first
/// calls); a deterministic run cannot reproduce the race, so the test injects them.
const LOST_CALLS: [(&str, &[(usize, usize)]); 4] = [
    ("wikipedia_small_10000.txt", &[(0, 0), (1, 0)]),
    ("wikipedia_small_20000.txt", &[]),
    ("wikipedia_large_10000.txt", &[(0, 0), (1, 0)]),
    ("wikipedia_large_20000.txt", &[(2, 0), (1, 0)]),
];

#[test]
fn wikipedia_reproduces_the_shipped_traces_given_their_lost_calls() {
    let wikipedia = by_name("wikipedia").unwrap();
    for (file, lost) in LOST_CALLS {
        let seed = if file.contains("10000") { 1 } else { 2 };
        let with_aborts = WithAborts {
            inner: wikipedia,
            aborts: lost.to_vec(),
        };
        assert_reproduces(&with_aborts, seed, file);
        // Without the race our run has every call: a transaction more per lost GetPage, two
        // more per lost UpdatePage.
        let ours = trace_of(&run(wikipedia, &RunConfig::monkeydb(seed, size_of(file))).unwrap());
        let theirs = shipped(file);
        assert_eq!(initial_lines(&ours), initial_lines(&theirs), "{file}");
        let (ours, theirs) = (per_session(&ours), per_session(&theirs));
        assert_eq!(
            ours == theirs,
            lost.is_empty(),
            "{file}: {ours:?} {theirs:?}"
        );
    }
}

fn within(a: f64, b: f64, fraction: f64) -> bool {
    (a - b).abs() <= fraction * b
}

/// Table 3 (averages over runs 1..10): TPC-C small 3297.3 / 763.0 / 11.9, large 7025.6 /
/// 1502.4 / 23.8; the notes' reference model: large 7172 / 1555 / 23.8.
#[test]
fn tpcc_counts_match_table_3() {
    let tpcc = by_name("tpcc").unwrap();
    let (r, w, t) = average(tpcc, Size::Small);
    let exact = totals(tpcc, Size::Small);
    // Writes and transactions are Table 3's exactly (763.0, 11.9 on average); reads depend on
    // the interleaving (scans grow with every insert) and are within 1 % of Table 3's.
    assert_eq!((exact.1, exact.2), (7630, 119), "{w} {t}");
    assert!(within(r, 3297.3, 0.01), "{r}");
    // Large: the reference model's counts, Table 3's transactions; Table 3's large reads and
    // writes are 1.4 % and 3.5 % lower (runs 1 and 2, whose traces ship, agree with ours
    // exactly, so the gap lies in runs whose traces we do not have).
    let (rl, wl, _) = average(tpcc, Size::Large);
    let exact_large = totals(tpcc, Size::Large);
    assert!(
        within(rl, 7172.0, 0.01) && within(wl, 1555.0, 0.001),
        "{rl} {wl}"
    );
    assert!(
        within(rl, 7025.6, 0.02) && within(wl, 1502.4, 0.04),
        "{rl} {wl}"
    );
    assert_eq!(exact_large.2, 238);
    // Pinned exactly as totals over the ten runs (averages 3276.2 / 763.0 / 11.9 and
    // 7121.4 / 1554.9 / 23.8), so that a change in the workload is noticed.
    assert_eq!(exact, (32762, 7630, 119));
    assert_eq!(exact_large, (71214, 15549, 238));
}

#[test]
fn wikipedia_counts_match_the_reference_model_and_table_3_per_transaction() {
    let wikipedia = by_name("wikipedia").unwrap();
    let (r, w, t) = average(wikipedia, Size::Small);
    let (rl, wl, tl) = average(wikipedia, Size::Large);
    let (exact, exact_large) = (
        totals(wikipedia, Size::Small),
        totals(wikipedia, Size::Large),
    );
    // The reference model: 1494 / 73.3 / 13.2 and 3190 / 129.6 / 26.1.
    assert!(
        within(r, 1494.0, 0.02) && (exact.1, exact.2) == (733, 132),
        "{r} {w} {t}"
    );
    assert!(within(rl, 3190.0, 0.02) && within(wl, 129.6, 0.001) && exact_large.2 == 261);
    // Table 3's 1067.7 / 55.1 / 9.9 (large 2677.1 / 111.1 / 22.8) lost about a quarter
    // (an eighth) of the calls to the race (see LOST_CALLS); per committed transaction the
    // profile is the same.
    assert!(within(r / t, 1067.7 / 9.9, 0.05), "{}", r / t);
    assert!(within(w / t, 55.1 / 9.9, 0.05), "{}", w / t);
    assert!(within(rl / tl, 2677.1 / 22.8, 0.05), "{}", rl / tl);
    assert!(within(wl / tl, 111.1 / 22.8, 0.05), "{}", wl / tl);
    // Pinned exactly (averages 1470.0 / 73.3 / 13.2 and 3140.8 / 129.7 / 26.1).
    assert_eq!(exact, (14700, 733, 132));
    assert_eq!(exact_large, (31408, 1297, 261));
}

#[test]
fn runs_are_deterministic_per_seed() {
    for name in ["tpcc", "wikipedia"] {
        let w = by_name(name).unwrap();
        for seed in 1..=3 {
            for policy in [
                ReadPolicy::Latest,
                ReadPolicy::Random {
                    level: Level::ReadCommitted,
                    seed,
                },
            ] {
                let config = RunConfig {
                    policy,
                    ..RunConfig::paper(seed, Size::Large)
                };
                let (a, b) = (run(w, &config).unwrap(), run(w, &config).unwrap());
                assert_eq!(trace_of(&a), trace_of(&b), "{name} {seed}");
                assert_eq!(a.invariants, b.invariants);
            }
        }
        // Different runs differ.
        let one = trace_of(&run(w, &RunConfig::paper(1, Size::Small)).unwrap());
        let two = trace_of(&run(w, &RunConfig::paper(2, Size::Small)).unwrap());
        assert_ne!(one, two, "{name}");
    }
}

#[test]
fn random_runs_are_consistent_at_their_level() {
    let mut tpcc_failures = 0;
    for name in ["tpcc", "wikipedia"] {
        let w = by_name(name).unwrap();
        for level in [Level::Causal, Level::ReadAtomic, Level::ReadCommitted] {
            for seed in 1..=5 {
                let r = run(
                    w,
                    &RunConfig {
                        policy: ReadPolicy::Random { level, seed },
                        ..RunConfig::paper(seed, Size::Small)
                    },
                )
                .unwrap();
                assert!(counts(&r.history).txns >= 10, "{name} {level} {seed}");
                // The optimal checkers and the store's own saturation test agree.
                let report = check(&r.history, level, &CheckOptions::default()).unwrap();
                assert!(report.is_consistent(), "{name} {level} {seed}");
                if name == "tpcc" && !r.invariants_hold() {
                    tpcc_failures += 1;
                }
            }
        }
    }
    // Weak reads break TPC-C's invariants in most runs (lost updates of the YTD totals,
    // duplicated order ids), as in MonkeyDB's exploration (IsoPredict's Tables 6/7: 98-100 %).
    assert!(tpcc_failures >= 8, "{tpcc_failures} of 15");
}
