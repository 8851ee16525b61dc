//! AWDIT's 22 labelled histories (tests/data/awdit): every checker gives exactly the
//! verdicts of the folder the file is in (see the test data README), and the hand-made ones
//! are named as expected.

use crate::common;

use std::path::{Path, PathBuf};

use isopredict::check::{Anomaly, CheckOptions, Level};
use isopredict::formats::{read_file, Format};
use isopredict::verdict::engines::check;
use isopredict::History;

/// (folder, satisfies RC, RA, CC).
const FOLDERS: [(&str, [bool; 3]); 4] = [
    ("causal", [true, true, true]),
    ("read-atomic", [true, true, false]),
    ("read-committed", [true, false, false]),
    ("none", [false, false, false]),
];

const LEVELS: [Level; 3] = [Level::ReadCommitted, Level::ReadAtomic, Level::Causal];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "txt") {
            out.push(path);
        }
    }
}

fn load(relative: &str) -> History {
    let path = common::testdata_dir().join("awdit").join(relative);
    read_file(&path, Some(Format::Awdit)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_labelled_history_gets_its_folders_verdicts() {
    let root = common::testdata_dir().join("awdit");
    let options = CheckOptions {
        witness: true,
        ..CheckOptions::default()
    };
    let mut checked = 0;
    for (folder, expected) in FOLDERS {
        let mut files = Vec::new();
        files_under(&root.join(folder), &mut files);
        assert!(!files.is_empty(), "no histories in {folder}");
        for path in files {
            let history = read_file(&path, Some(Format::Awdit)).unwrap_or_else(|e| panic!("{e}"));
            for (level, expect) in LEVELS.into_iter().zip(expected) {
                let report = check(&history, level, &options).unwrap();
                assert_eq!(
                    report.is_consistent(),
                    expect,
                    "{} at {level}:\n{report}",
                    path.display()
                );
                // A pass comes with a witness, a failure with something to show.
                if expect {
                    assert!(report.witness.is_some());
                } else {
                    assert!(report.read_violation_count + report.cycle_count > 0);
                }
            }
            let all = common::every_level(&history);
            let strongest = LEVELS
                .into_iter()
                .zip(expected)
                .filter(|&(_, ok)| ok)
                .map(|(l, _)| l)
                .next_back();
            assert_eq!(
                all.strongest_among(&[Level::Causal, Level::ReadAtomic, Level::ReadCommitted]),
                strongest,
                "{}",
                path.display()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 22, "the README lists 22 labelled histories");
}

#[test]
fn hand_made_histories_are_named() {
    // A happens-before cycle violates every level, as CyclicCO.
    let h = load("none/hb-cycle.txt");
    for level in LEVELS {
        let r = check(&h, level, &CheckOptions::default()).unwrap();
        assert_eq!(r.cycles[0].anomaly, Anomaly::CyclicCo);
        assert_eq!(r.cycles[0].edges.len(), 4);
    }
    // Two reads of one key from two transactions: allowed by RC, a NonRepeatableRead for RA.
    let h = load("read-committed/non-repeatable-read.txt");
    let r = check(&h, Level::ReadAtomic, &CheckOptions::default()).unwrap();
    assert_eq!(r.read_violations[0].anomaly, Anomaly::NonRepeatableRead);
    assert_eq!(r.read_violations[0].read.line, 6);
    // Biswas & Enea's example: t4 reads x from t1 although t2 (after t1 in its session)
    // happens before t4 through t3.
    let h = load("read-atomic/biswas-enea.txt");
    let r = check(&h, Level::Causal, &CheckOptions::default()).unwrap();
    assert_eq!(r.cycles.len(), 1);
    assert_eq!(r.cycles[0].anomaly, Anomaly::CoConflictCm);
}

#[test]
fn observed_isopredict_traces_are_causal() {
    // The IsoPredict artifact's store ran transactions one at a time (serializable), so
    // every observed trace satisfies every level we check.
    let dir = common::testdata_dir().join("isopredict-traces");
    let mut files = Vec::new();
    files_under(&dir, &mut files);
    assert_eq!(files.len(), 16);
    for path in files {
        let history = read_file(&path, Some(Format::IsoPredict)).unwrap_or_else(|e| panic!("{e}"));
        let all = common::every_level(&history);
        assert_eq!(
            all.strongest,
            Some(Level::Serializable),
            "{}:\n{all}",
            path.display()
        );
    }
}
