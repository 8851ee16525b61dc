//! The dependency-graph decision of known version orders (`ser::dependency_graph`, issue 20
//! item 2) against the exact checkers, on small random Elle list-append histories
//! (`generate::list_append`, with stale reads for anomalies): at pc, si, ser and strict-ser the
//! decision core's verdict (which takes the graph route when every key's order is known)
//! equals the brute-force oracle's (every commit order extending the known version orders and
//! the real-time order), and at si and ser the commit-order search's on the history with its
//! known order rewritten as reads (the route the graph replaced).
//!
//! 64 cases by default; `PROPTEST_CASES=N` for more.

use isopredict::check::{oracle, Level};
use isopredict::formats::{read_str, Format};
use isopredict::generate::list_append::{elle_list_append, ListAppendParams};
use isopredict::ser::{check_strong, StrongLevel, StrongOptions, VersionChains};
use isopredict::verdict::{decide, EvidenceChoice, Input, Limits, Outcome};
use proptest::prelude::*;

fn params() -> impl Strategy<Value = ListAppendParams> {
    (
        2usize..=7,
        1usize..=4,
        1usize..=3,
        1usize..=3,
        0u64..u64::MAX,
    )
        .prop_map(
            |(txns, processes, max_ops, active_keys, seed)| ListAppendParams {
                txns,
                processes,
                max_ops,
                active_keys,
                max_appends: 1000,
                read_ratio: 0.5,
                stale_ratio: 0.5,
                snapshot_reads: seed % 3 == 0,
                seed,
            },
        )
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn the_graph_agrees_with_the_exact_checkers(p in params()) {
        let text = elle_list_append(&p);
        let h = read_str(&text, "la.edn", Some(Format::Elle)).unwrap();
        prop_assume!(VersionChains::of(&h).is_some());
        let input = Input::of(&h).unwrap();
        let limits = Limits { explain: false, ..Limits::default() };
        let rewritten = h.with_write_order_as_reads();
        let old = rewritten.as_ref().unwrap_or(&h);
        let options = StrongOptions { explain: false, ..StrongOptions::default() };
        for level in [
            Level::Prefix,
            Level::Snapshot,
            Level::Serializable,
            Level::StrictSerializable,
        ] {
            let graph = decide(&input, level, EvidenceChoice::Auto, &limits).unwrap();
            prop_assert_ne!(graph.verdict, Outcome::Unknown, "{}\n{}", level, text);
            let consistent = graph.verdict == Outcome::Consistent;
            if let Some(truth) = oracle::satisfies(&h, level) {
                prop_assert_eq!(consistent, truth, "{} vs the oracle\n{}", level, text);
            }
            if let Some(strong) = StrongLevel::from_level(level).filter(|&l| l != StrongLevel::Prefix) {
                let search = check_strong(old, strong, &options).unwrap();
                prop_assert_eq!(
                    consistent,
                    search.is_consistent(),
                    "{} vs the search on the order as reads\n{}",
                    level,
                    text
                );
            }
        }
    }
}

/// Not vacuous: on fixed seeds the generated histories take the graph route and violate every
/// level (and satisfy it) often enough, with the same verdicts as the oracle.
#[test]
fn the_random_histories_exercise_every_verdict() {
    let levels = [
        Level::Prefix,
        Level::Snapshot,
        Level::Serializable,
        Level::StrictSerializable,
    ];
    let (mut routed, mut violated, mut consistent) = (0, [0; 4], [0; 4]);
    for seed in 0..200 {
        let p = ListAppendParams {
            txns: 6,
            processes: 3,
            max_ops: 3,
            active_keys: 2,
            max_appends: 1000,
            read_ratio: 0.5,
            stale_ratio: 0.5,
            snapshot_reads: seed % 2 == 0,
            seed,
        };
        let text = elle_list_append(&p);
        let h = read_str(&text, "la.edn", Some(Format::Elle)).unwrap();
        if VersionChains::of(&h).is_none() {
            continue;
        }
        routed += 1;
        let input = Input::of(&h).unwrap();
        for (i, &level) in levels.iter().enumerate() {
            let v = decide(&input, level, EvidenceChoice::Auto, &Limits::default()).unwrap();
            let ok = v.verdict == Outcome::Consistent;
            assert_eq!(Some(ok), oracle::satisfies(&h, level), "{level}\n{text}");
            if ok {
                consistent[i] += 1;
            } else {
                violated[i] += 1;
            }
        }
    }
    assert!(routed >= 190, "{routed} of 200 on the graph");
    for i in 0..4 {
        assert!(
            violated[i] >= 10 && consistent[i] >= 10,
            "{}: {} violated, {} consistent",
            levels[i],
            violated[i],
            consistent[i]
        );
    }
}
