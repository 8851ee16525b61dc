//! One verdict per (history, level, evidence), whoever asks (issue 19).
//!
//! - Property: on random histories of every `generate` mode and on random timestamped
//!   histories, every level's verdict from `decide` (one level) equals the verdict `decide_all`
//!   gives it, the chain of levels holds, and on tiny histories each verdict is the brute-force
//!   oracle's.
//! - Every history under the shipped test data (tests/data): the same per level, plus the command line's
//!   ways of asking (one file, many files, a folder, `--level all`, `--json`).
//! - The reproducers of issue 19.
//!
//! Case count: `ISOPREDICT_PROPTEST_CASES`, else `PROPTEST_CASES` (CI: 256), at least 200.

use crate::common;

use std::path::Path;

use isopredict::check::oracle;
use isopredict::check::Level;
use isopredict::generate::timestamped::{generate_timestamped, TsGenParams};
use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};
use isopredict::verdict::{
    decide, decide_all, read_input, Evidence, EvidenceChoice, Input, Limits, Outcome, ReadOptions,
    VerdictsReport,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use common::cli::{isopredict, stdout, Scratch};

fn cases() -> u32 {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u32>().ok());
    var("ISOPREDICT_PROPTEST_CASES")
        .unwrap_or_else(|| var("PROPTEST_CASES").unwrap_or(0))
        .max(200)
}

fn limits() -> Limits {
    Limits {
        explain: false,
        ..Limits::default()
    }
}

/// The chain: no level consistent while a level it implies is violated.
fn assert_chain(all: &VerdictsReport) {
    for strong in &all.verdicts {
        for weak in &all.verdicts {
            assert!(
                !(strong.level.implies(weak.level)
                    && strong.verdict == Outcome::Consistent
                    && weak.verdict == Outcome::Violated),
                "{} consistent but {} violated:\n{all}",
                strong.level,
                weak.level
            );
        }
    }
}

/// Every level decided alone gives the verdict `decide_all` gives it; returns `decide_all`.
fn assert_one_answer(input: &Input<'_>, evidence: EvidenceChoice) -> VerdictsReport {
    let all = decide_all(input, evidence, &limits()).expect("decided");
    assert_chain(&all);
    for v in &all.verdicts {
        let alone = decide(input, v.level, evidence, &limits()).expect("decided");
        assert_eq!(
            alone.verdict,
            v.verdict,
            "{}: {} alone is {:?}, in --level all {:?}\n{all}",
            input.source(),
            v.level,
            alone.verdict,
            v.verdict
        );
        assert_eq!(alone.evidence, v.evidence, "{}", v.level);
    }
    all
}

fn params() -> impl Strategy<Value = GenerateParams> {
    (
        1u32..5,
        1u32..5,
        1u32..4,
        1u32..4,
        0usize..Consistency::ALL.len(),
        0u32..3,
        any::<u64>(),
    )
        .prop_map(
            |(sessions, txns, ops, keys, mode, aborts, seed)| GenerateParams {
                sessions,
                txns_per_session: txns,
                ops_per_txn: ops,
                keys,
                read_ratio: 0.5,
                distribution: KeyDistribution::Uniform,
                abort_ratio: aborts as f64 * 0.1,
                consistency: Consistency::ALL[mode],
                seed,
            },
        )
}

#[test]
fn every_way_of_asking_gives_one_verdict_on_generated_histories() {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    // Which verdicts the generator produced: a test that only sees "consistent" shows nothing.
    let seen = std::cell::RefCell::new([[false; 3]; 8]);
    runner
        .run(&params(), |p| {
            let h = generate(&p).expect("valid parameters");
            let input = Input::of(&h).unwrap();
            let all = assert_one_answer(&input, EvidenceChoice::Auto);
            let black_box = assert_one_answer(&input, EvidenceChoice::Only(Evidence::BlackBox));
            for v in &all.verdicts {
                seen.borrow_mut()[v.level as usize][v.verdict as usize] = true;
                // Generated histories carry no write order: the evidence changes nothing.
                assert_eq!(black_box.get(v.level).unwrap().verdict, v.verdict);
                if let Some(expected) = oracle::satisfies(&h, v.level) {
                    let got = v.verdict == Outcome::Consistent;
                    assert_eq!(got, expected, "{} vs the oracle\n{all}", v.level);
                }
            }
            Ok(())
        })
        .unwrap();
    let seen = seen.into_inner();
    for level in [
        Level::Serializable,
        Level::Snapshot,
        Level::Prefix,
        Level::Causal,
    ] {
        assert!(
            seen[level as usize][Outcome::Consistent as usize]
                && seen[level as usize][Outcome::Violated as usize],
            "{level}: the generator should produce both verdicts"
        );
    }
}

#[test]
fn timestamped_histories_give_one_verdict() {
    let mut runner = TestRunner::new(Config {
        cases: cases() / 4,
        failure_persistence: None,
        ..Config::default()
    });
    let seen = std::cell::RefCell::new([false; 2]);
    runner
        .run(
            &(
                2u32..4,
                2u32..12,
                1u32..4,
                1u32..5,
                any::<bool>(),
                any::<bool>(),
                any::<u64>(),
            ),
            |(sessions, txns, ops, keys, lists, fcw, seed)| {
                let t = generate_timestamped(&TsGenParams {
                    sessions,
                    txns,
                    ops_per_txn: ops,
                    keys,
                    read_fraction: 0.5,
                    distribution: KeyDistribution::Uniform,
                    lists,
                    first_committer_wins: fcw,
                    seed,
                });
                let input = Input::from_timestamped(t);
                let all = assert_one_answer(&input, EvidenceChoice::Auto);
                assert_eq!(
                    all.get(Level::Snapshot).unwrap().evidence,
                    Evidence::Timestamps
                );
                let si = all.get(Level::Snapshot).unwrap().verdict;
                seen.borrow_mut()[(si == Outcome::Violated) as usize] = true;
                // The reads alone: black-box, also one answer.
                assert_one_answer(&input, EvidenceChoice::Only(Evidence::BlackBox));
                Ok(())
            },
        )
        .unwrap();
    assert_eq!(seen.into_inner(), [true, true], "both si verdicts seen");
}

#[test]
fn the_shared_test_data_gets_one_verdict_per_level() {
    let files = common::labelled_and_traces();
    assert!(files.len() >= 30, "{files:?}");
    for path in &files {
        let (input, _) = read_input(path, ReadOptions::default()).unwrap();
        assert_one_answer(&input, EvidenceChoice::Auto);
    }
}

/// What `check` prints for one history in a batch, per level, and exits with alone.
#[test]
fn the_command_line_gives_one_verdict_however_asked() {
    let dir = Scratch::new("one-verdict");
    let data = common::testdata_dir().join("awdit");
    let mut copies = Vec::new();
    for name in [
        "causal/lost-update.txt",
        "causal/long-fork.txt",
        "causal/fully-ser.txt",
        "read-atomic/test-ra.txt",
        "read-committed/test-rc.txt",
        "none/hb-cycle.txt",
    ] {
        let to = dir.join(&name.replace('/', "-"));
        std::fs::copy(data.join(name), &to).unwrap();
        copies.push(to);
    }
    let all_paths: Vec<String> = copies.iter().map(|p| p.display().to_string()).collect();
    for level in ["ser", "si", "pc", "cc", "ra", "rc", "ci"] {
        // A folder and a list of files: one line per history.
        let folder = stdout(&isopredict(&["check", &dir.arg(""), "--level", level]));
        let mut listed_args = vec!["check", "--level", level];
        listed_args.extend(all_paths.iter().map(String::as_str));
        let listed = stdout(&isopredict(&listed_args));
        for path in &all_paths {
            let alone = isopredict(&["check", path, "--level", level]);
            let code = alone.status.code().unwrap();
            let word = match code {
                0 => "consistent",
                1 => "VIOLATED",
                other => panic!("{path} at {level}: exit {other}: {}", stdout(&alone)),
            };
            for batch in [&folder, &listed] {
                let line = batch
                    .lines()
                    .find(|l| l.starts_with(path.as_str()))
                    .unwrap_or_else(|| panic!("{path} missing:\n{batch}"));
                assert!(
                    line.contains(word),
                    "{path} at {level}: alone {word}, in a batch {line}"
                );
            }
            // --level all says the same of this level, in text and JSON.
            let json = isopredict(&["check", path, "--json"]);
            let all: VerdictsReport = serde_json::from_slice(&json.stdout).unwrap();
            let parsed: Level = level.parse().unwrap();
            let v = all.get(parsed).unwrap();
            assert_eq!(
                v.verdict == Outcome::Violated,
                code == 1,
                "{path} at {level}: --level all says {:?}",
                v.verdict
            );
        }
    }
}

#[test]
fn reproducer_batch_checks_every_level() {
    // Issue 19, 1 and 2: two files at once, default level and --level ser.
    let data = common::testdata_dir().join("awdit/causal");
    let lost = data.join("lost-update.txt").display().to_string();
    let fork = data.join("long-fork.txt").display().to_string();
    let o = isopredict(&["check", &lost, &fork]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("2 histories: 0 ok, 2 found"),
        "{}",
        stdout(&o)
    );
    let o = isopredict(&["check", &lost, &fork, "--level", "ser"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(!stdout(&o).contains("not supported"), "{}", stdout(&o));
}

/// Issue 19, 3: Jepsen's `:time` is client time, not the database's snapshot and commit.
const JEPSEN_TIME: &str = "\
{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0, :time 0, :index 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :time 3, :index 1}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 0, :time 5, :index 2}
{:type :ok, :f :txn, :value [[:r 1 [1]]], :process 1, :time 10, :index 3}
";

#[test]
fn reproducer_jepsen_time_is_not_a_snapshot() {
    let dir = Scratch::new("jepsen-time");
    std::fs::write(dir.join("h.edn"), JEPSEN_TIME).unwrap();
    let file = dir.arg("h.edn");
    for level in ["si", "ser", "all"] {
        let o = isopredict(&["check", &file, "--level", level]);
        assert_eq!(o.status.code(), Some(0), "{level}: {}", stdout(&o));
    }
    let o = isopredict(&["check", &file, "--evidence", "timestamps"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "no database timestamps in a Jepsen history"
    );
    // Real time judges strict serializability on the intervals: T2 was invoked before T1
    // completed, so reading T1's append is allowed.
    let o = isopredict(&[
        "check",
        &file,
        "--level",
        "strict-ser",
        "--evidence",
        "real-time",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("[evidence: real-time]"),
        "{}",
        stdout(&o)
    );
    // A read that misses a transaction completed before it was invoked is serializable
    // but not strictly.
    let stale = "\
{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1}
{:type :ok, :f :txn, :value [[:r 1 []]], :process 1}
";
    std::fs::write(dir.join("stale.edn"), stale).unwrap();
    let stale = dir.arg("stale.edn");
    let o = isopredict(&["check", &stale, "--level", "ser"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = isopredict(&["check", &stale, "--level", "strict-ser"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let o = isopredict(&["check", &stale, "--json"]);
    let all: VerdictsReport = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(all.strongest, Some(Level::Serializable));
    assert!(all.evidence.real_time);
}

/// Issue 19, 4: TimeKiller input, `--level all` and `--level si` agree.
#[test]
fn reproducer_timekiller_all_and_si_agree() {
    let dir = Scratch::new("tk-agree");
    for (fcw, seed) in [(true, 1), (false, 2), (false, 3)] {
        let t = generate_timestamped(&TsGenParams {
            sessions: 3,
            txns: 30,
            keys: 4,
            first_committer_wins: fcw,
            seed,
            ..TsGenParams::default()
        });
        let path = dir.join(&format!("tk{seed}.json"));
        let mut bytes = Vec::new();
        isopredict::formats::timekiller::write_timestamped(&t, &mut bytes).unwrap();
        std::fs::write(&path, bytes).unwrap();
        let file = path.display().to_string();
        let json = isopredict(&["check", &file, "--json"]);
        let all: VerdictsReport = serde_json::from_slice(&json.stdout).unwrap();
        for level in ["si", "ser", "pc"] {
            let o = isopredict(&["check", &file, "--level", level]);
            let v = all.get(level.parse().unwrap()).unwrap();
            assert_eq!(
                o.status.code() == Some(1),
                v.verdict == Outcome::Violated,
                "{file} at {level}: {}",
                stdout(&o)
            );
        }
    }
}

/// A transaction that starts after it commits is a violation of the timestamps, never bad
/// input: every way of asking answers, and si/ser name it.
#[test]
fn a_start_after_commit_is_a_violation_not_bad_input() {
    let dir = Scratch::new("start-after-commit");
    let text = r#"[
{"tid": 1, "sid": 1, "sts": {"p": 5, "l": 0}, "cts": {"p": 2, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 1}]},
{"tid": 2, "sid": 2, "sts": {"p": 6, "l": 0}, "cts": {"p": 7, "l": 0}, "ops": [{"t": "r", "k": 1, "v": 1}]}
]"#;
    std::fs::write(dir.join("tk.json"), text).unwrap();
    let file = dir.arg("tk.json");
    let o = isopredict(&["check", &file]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("START-AFTER-COMMIT"), "{}", stdout(&o));
    for level in ["si", "ser"] {
        let o = isopredict(&["check", &file, "--level", level]);
        assert_eq!(o.status.code(), Some(1), "{level}: {}", stdout(&o));
    }
    // The reads alone are fine.
    let o = isopredict(&["check", &file, "--level", "cc"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// The evidence label of `check DIR`'s one line is the one `check FILE --level all` prints
/// beside the verdict the line names (issue 35 item 6: a Jepsen history's line said
/// `[real-time]` for an ra violation that `--level all` labels `[black-box]`).
#[test]
fn one_line_labels_match_every_level_labels() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/formats");
    for name in ["elle.edn", "elle-append.edn", "elle.json", "dbcop.json"] {
        let s = Scratch::new("one-line-labels");
        std::fs::create_dir_all(s.join("dir")).unwrap();
        std::fs::copy(data.join(name), s.join("dir").join(name)).unwrap();
        let all = stdout(&isopredict(&[
            "check",
            &s.arg(&format!("dir/{name}")),
            "--level",
            "all",
        ]));
        let line = stdout(&isopredict(&["check", &s.arg("dir"), "--level", "all"]));
        let line = line.lines().next().unwrap_or_default().to_string();
        // The level the line names (its violation, else the strongest satisfied) and label.
        let (level, label) = match line.split_once(" VIOLATED") {
            Some((head, tail)) => (
                head.rsplit("; ").next().unwrap().trim().to_string(),
                tail.split('[')
                    .nth(1)
                    .unwrap()
                    .split(']')
                    .next()
                    .unwrap()
                    .to_string(),
            ),
            None => {
                let after = line.split("strongest ").nth(1).unwrap();
                (
                    after.split([',', ' ']).next().unwrap().to_string(),
                    after
                        .split('[')
                        .nth(1)
                        .unwrap()
                        .split(']')
                        .next()
                        .unwrap()
                        .to_string(),
                )
            }
        };
        let beside = all
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{level} ")))
            .unwrap_or_else(|| panic!("{name}: no {level} in {all}"));
        assert!(
            beside.trim_end().ends_with(&format!("[{label}]")),
            "{name}: the one line says [{label}] for {level}: {line}\n--level all: {beside}"
        );
    }
}
