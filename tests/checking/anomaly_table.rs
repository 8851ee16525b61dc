//! One anomaly table (`history::anomalies`, issue 19 item 4): every name the checkers, the
//! decision core and run reports give — on AWDIT's labelled histories, the IsoPredict artifact's
//! shipped traces and their predictions, and an Elle history with observed anomalies — is a row
//! of the table, and docs/checking.md shows the table as it is.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use isopredict::check::{CheckOptions, Level};
use isopredict::formats::{self, read_file, Format};
use isopredict::history::anomalies::{by_name, render_markdown, ANOMALIES};
use isopredict::history::History;
use isopredict::pipeline::name_anomaly;
use isopredict::predict::{predict, PredictOptions, Strategy};
use isopredict::ser::{StrongLevel, StrongOptions};
use isopredict::verdict::engines::{check, check_strong, check_timestamps};
use isopredict::verdict::{decide_all, EvidenceChoice, Input, LevelReport, Limits};

fn txt_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            txt_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "txt") {
            out.push(path);
        }
    }
}

/// Every name a history's checks give: the decision core's verdicts at every level, the weak
/// checkers' patterns, the strong levels' explanations and Adya classes, observed anomalies.
fn names_of_checks(h: &History, names: &mut BTreeSet<(String, String)>, source: &str) {
    let mut add = |name: &str, what: &str| {
        names.insert((name.to_string(), format!("{what} of {source}")));
    };
    let all = decide_all(
        &Input::of(h).unwrap(),
        EvidenceChoice::Auto,
        &Limits::default(),
    )
    .unwrap();
    for v in &all.verdicts {
        if let Some(a) = &v.anomaly {
            add(a, &format!("the verdict at {}", v.level));
        }
    }
    for report in &all.reports {
        match report.as_ref() {
            LevelReport::Weak(r) => {
                for c in &r.cycles {
                    add(c.anomaly.name(), "a cycle");
                }
                for v in &r.read_violations {
                    add(v.anomaly.name(), "a read violation");
                }
            }
            LevelReport::Strong(r) => {
                if let Some(v) = &r.violation {
                    add(&v.anomaly, "a strong explanation");
                    if let Some(adya) = &v.adya {
                        add(adya, "an Adya class");
                    }
                }
            }
            LevelReport::Timestamps(_) => {}
        }
    }
    for level in [
        Level::ReadCommitted,
        Level::CutIsolation,
        Level::ReadAtomic,
        Level::Causal,
    ] {
        let r = check(h, level, &CheckOptions::default()).unwrap();
        for c in &r.cycles {
            add(c.anomaly.name(), "a cycle");
        }
        for v in &r.read_violations {
            add(v.anomaly.name(), "a read violation");
        }
    }
    for level in [
        StrongLevel::Prefix,
        StrongLevel::Snapshot,
        StrongLevel::Serializable,
    ] {
        let options = StrongOptions {
            timeout: Some(Duration::from_secs(60)),
            ..StrongOptions::default()
        };
        let r = check_strong(h, level, &options).unwrap();
        if let Some(v) = &r.violation {
            add(&v.anomaly, "a strong explanation");
            if let Some(adya) = &v.adya {
                add(adya, "an Adya class");
            }
        }
    }
    for a in h.observed_anomalies() {
        add(a.name, "an observed anomaly");
    }
}

fn assert_all_in_table(names: &BTreeSet<(String, String)>) {
    for (name, what) in names {
        assert!(
            by_name(name).is_some(),
            "`{name}` ({what}) is no row of the anomaly table"
        );
    }
}

#[test]
fn every_name_the_checks_give_is_a_row() {
    let mut files = Vec::new();
    txt_files(&common::testdata_dir().join("awdit"), &mut files);
    assert!(files.len() >= 20, "the labelled histories");
    let mut names = BTreeSet::new();
    for path in &files {
        let h = read_file(path, Some(Format::Awdit)).unwrap_or_else(|e| panic!("{e}"));
        names_of_checks(&h, &mut names, &path.display().to_string());
    }
    // An Elle list-append history with an incompatible order and a duplicate element.
    let elle = "\
{:type :ok, :value [[:append 1 1] [:append 1 2]], :process 0}
{:type :ok, :value [[:r 1 [1 2]]], :process 1}
{:type :ok, :value [[:r 1 [2]]], :process 2}
{:type :ok, :value [[:append 1 3]], :process 0}
{:type :ok, :value [[:r 1 [1 2 3 3]]], :process 3}";
    let h = formats::read_str(elle, "h.edn", Some(Format::Elle)).unwrap();
    names_of_checks(&h, &mut names, "h.edn");
    assert_all_in_table(&names);
    // Not vacuous: the labelled histories show Plume's patterns and the strong anomalies.
    let found: BTreeSet<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    for expected in [
        "lost update",
        "long fork",
        "G-single",
        "G2",
        "CyclicCO",
        "NonRepeatableRead",
        "COConflictCM",
        "incompatible-order",
        "duplicate-elements",
    ] {
        assert!(found.contains(expected), "{expected} among {found:?}");
    }
}

#[test]
fn every_name_a_run_report_gives_a_prediction_is_a_row() {
    let mut names = BTreeSet::new();
    let mut predicted = 0;
    for trace in [
        "smallbank_small_10000",
        "smallbank_small_20000",
        "tpcc_small_10000",
        "voter_small_10000",
        "wikipedia_small_10000",
    ] {
        let path = common::testdata_dir()
            .join("isopredict-traces")
            .join(format!("{trace}.txt"));
        let h = read_file(&path, Some(Format::IsoPredict)).unwrap_or_else(|e| panic!("{e}"));
        for level in [
            Level::ReadCommitted,
            Level::ReadAtomic,
            Level::Causal,
            Level::Prefix,
            Level::Snapshot,
        ] {
            let options = PredictOptions::new(level, Strategy::ApproxRelaxed)
                .with_timeout(Some(Duration::from_secs(60)));
            let out = predict(&h, &options).unwrap();
            for p in &out.predictions {
                let ph = &p.history;
                let named = name_anomaly(ph, level, &|t| ph.txn_label(t), &|_| None, &|k| {
                    ph.key_name(k).to_string()
                });
                assert_eq!(named.id.name(), named.name());
                names.insert((named.name().to_string(), format!("{trace} at {level}")));
                predicted += 1;
            }
        }
    }
    assert!(predicted >= 5, "only {predicted} predictions");
    assert_all_in_table(&names);
}

#[test]
fn the_docs_show_the_table() {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/checking.md")).unwrap();
    let begin = docs
        .find("<!-- begin: written by `cargo run --release --example anomaly_table")
        .expect("the table's begin marker in docs/checking.md");
    let body = begin + docs[begin..].find('\n').unwrap() + 1;
    let end = docs
        .find("<!-- end: written by anomaly_table -->")
        .expect("the table's end marker");
    assert_eq!(
        &docs[body..end],
        render_markdown(),
        "docs/checking.md is stale: run `cargo run --release --example anomaly_table -- --write-docs`"
    );
    assert_eq!(docs[body..end].lines().count(), ANOMALIES.len() + 2);
}

#[test]
fn every_axiom_the_timestamp_checker_names_is_a_row() {
    use isopredict::formats::timekiller::read_timestamped;
    use isopredict::generate::timestamped::{generate_timestamped, TsGenParams};
    use isopredict::ser::chronos::{TsCheckOptions, TsLevel};
    // T1 and T2 both write key 1 and overlap (NOCONFLICT under si); T3 reads T1's stale 1
    // although T2 committed later before T3 started (EXT).
    let violating = br#"[
{"tid": 1, "sid": 1, "sts": {"p": 1, "l": 0}, "cts": {"p": 4, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 1}]},
{"tid": 2, "sid": 2, "sts": {"p": 2, "l": 0}, "cts": {"p": 5, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 2}]},
{"tid": 3, "sid": 3, "sts": {"p": 6, "l": 0}, "cts": {"p": 7, "l": 0}, "ops": [{"t": "r", "k": 1, "v": 1}, {"t": "r", "k": 2, "v": 0}]}
]
"#;
    let mut histories = vec![read_timestamped(violating, "v.json", Some(0)).unwrap()];
    for seed in 0..5 {
        let mut h = generate_timestamped(&TsGenParams {
            txns: 200,
            sessions: 8,
            keys: 20,
            seed,
            ..Default::default()
        });
        // Stale reads: every tenth read returns an older value.
        for (i, op) in h.ops.iter_mut().enumerate() {
            if i % 10 == 0
                && op.kind == isopredict::history::timestamped::TsOpKind::Read
                && op.value > 1
            {
                op.value -= 1;
            }
        }
        histories.push(h);
    }
    let mut axioms = BTreeSet::new();
    for h in &histories {
        for level in [TsLevel::Snapshot, TsLevel::Serializable] {
            for v in check_timestamps(h, level, &TsCheckOptions::default()).violations {
                let row = by_name(v.axiom()).unwrap_or_else(|| panic!("{} is no row", v.axiom()));
                assert_eq!(row.id, v.anomaly(), "{v}");
                assert_eq!(row.chronos, Some(v.axiom()));
                axioms.insert(v.axiom());
            }
        }
    }
    for expected in ["EXT", "NOCONFLICT"] {
        assert!(axioms.contains(expected), "{expected} among {axioms:?}");
    }
}
