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
    (2usize..=7, 1usize..=4, 1usize..=3, 1usize..=3, 0u64..u64::MAX).prop_map(
        |(txns, processes, max_ops, active_keys, seed)| ListAppendParams {
            txns,
            processes,
            max_ops,
            active_keys,
            max_appends: 1000,
            read_ratio: 0.5,
            stale_ratio: 0.5,
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
