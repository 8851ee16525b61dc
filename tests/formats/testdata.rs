//! Every labelled history and trace in tests/data parses, is detected as the right format, and has the
//! counts found independently with awk over the raw text (see the comments per table).

use crate::common;

use isopredict::formats::{self, Format};
use isopredict::history::INITIAL_TXN;

/// AWDIT test format: (file, sessions, transactions, reads, writes, keys) — non-empty blocks
/// between `=` / `-` lines, `^r ` and `^w ` lines, distinct second fields. No file has a read
/// of an unwritten value.
const AWDIT: &[(&str, usize, usize, usize, usize, usize)] = &[
    ("awdit/causal/fully-ser.txt", 3, 4, 2, 3, 2),
    (
        "awdit/causal/generated/l100e1000sqrt.txt",
        33,
        278,
        811,
        289,
        100,
    ),
    (
        "awdit/causal/generated/l20e200sqrt.txt",
        16,
        69,
        154,
        66,
        20,
    ),
    (
        "awdit/causal/generated/l50e1000sqrt.txt",
        33,
        263,
        806,
        244,
        50,
    ),
    ("awdit/causal/long-fork.txt", 3, 5, 4, 4, 2),
    ("awdit/causal/lost-update.txt", 3, 3, 2, 3, 1),
    ("awdit/none/hb-cycle.txt", 2, 4, 2, 2, 2),
    ("awdit/read-atomic/biswas-enea.txt", 3, 4, 3, 3, 2),
    (
        "awdit/read-atomic/generated/l100e1000sqrt.txt",
        33,
        235,
        826,
        274,
        100,
    ),
    (
        "awdit/read-atomic/generated/l10e100sqrt.txt",
        11,
        33,
        77,
        33,
        10,
    ),
    ("awdit/read-atomic/generated/l4e10sqrt.txt", 5, 5, 7, 7, 4),
    ("awdit/read-atomic/generated/l5e20sqrt.txt", 6, 9, 16, 9, 5),
    (
        "awdit/read-atomic/generated/l6e30sqrt.txt",
        7,
        14,
        25,
        11,
        6,
    ),
    ("awdit/read-atomic/test-ra.txt", 5, 8, 8, 7, 5),
    ("awdit/read-committed/biswas-enea.txt", 4, 4, 3, 5, 3),
    (
        "awdit/read-committed/generated/l100e1000sqrt.txt",
        33,
        242,
        806,
        294,
        100,
    ),
    (
        "awdit/read-committed/generated/l10e100sqrt.txt",
        11,
        35,
        83,
        27,
        10,
    ),
    (
        "awdit/read-committed/generated/l4e10sqrt.txt",
        4,
        8,
        9,
        5,
        4,
    ),
    (
        "awdit/read-committed/generated/l5e20sqrt.txt",
        6,
        10,
        13,
        12,
        5,
    ),
    (
        "awdit/read-committed/generated/l6e30sqrt.txt",
        7,
        14,
        22,
        14,
        6,
    ),
    (
        "awdit/read-committed/non-repeatable-read.txt",
        3,
        3,
        2,
        2,
        1,
    ),
    ("awdit/read-committed/test-rc.txt", 5, 8, 7, 7, 5),
];

/// IsoPredict traces: (file, sessions, transactions, reads, local reads, writes, explicit
/// initial writes, keys) — distinct `Txn(s, i)` owners other than `Txn(0, 0)` and their
/// sessions; READ + CONTAINS lines; reads with `From` = `Txn`; WRITE + INSERT + DELETE lines
/// not by `Txn(0, 0)`; lines by `Txn(0, 0)`; distinct `KEY[k]` and `Set(s:k)` pairs.
/// (Voter's 763 reads / 6 writes / 12 transactions match the paper's Table 3.)
type TraceCounts = (
    &'static str,
    usize,
    usize,
    usize,
    usize,
    usize,
    usize,
    usize,
);
const TRACES: &[TraceCounts] = &[
    (
        "isopredict-traces/smallbank_large_10000.txt",
        3,
        17,
        1102,
        4,
        32,
        54,
        54,
    ),
    (
        "isopredict-traces/smallbank_large_20000.txt",
        3,
        18,
        1026,
        3,
        24,
        54,
        54,
    ),
    (
        "isopredict-traces/smallbank_small_10000.txt",
        3,
        9,
        525,
        2,
        13,
        54,
        54,
    ),
    (
        "isopredict-traces/smallbank_small_20000.txt",
        3,
        11,
        604,
        4,
        14,
        54,
        54,
    ),
    (
        "isopredict-traces/tpcc_large_10000.txt",
        3,
        24,
        8355,
        426,
        2111,
        916,
        2330,
    ),
    (
        "isopredict-traces/tpcc_large_20000.txt",
        3,
        24,
        7988,
        346,
        1747,
        916,
        2078,
    ),
    (
        "isopredict-traces/tpcc_small_10000.txt",
        3,
        12,
        5242,
        214,
        1052,
        916,
        1614,
    ),
    (
        "isopredict-traces/tpcc_small_20000.txt",
        3,
        12,
        1909,
        76,
        485,
        916,
        1240,
    ),
    (
        "isopredict-traces/voter_large_10000.txt",
        3,
        24,
        919,
        0,
        6,
        927,
        933,
    ),
    (
        "isopredict-traces/voter_large_20000.txt",
        3,
        24,
        919,
        0,
        6,
        927,
        933,
    ),
    (
        "isopredict-traces/voter_small_10000.txt",
        3,
        12,
        763,
        0,
        6,
        927,
        933,
    ),
    (
        "isopredict-traces/voter_small_20000.txt",
        3,
        12,
        763,
        0,
        6,
        927,
        933,
    ),
    (
        "isopredict-traces/wikipedia_large_10000.txt",
        3,
        23,
        2531,
        5,
        73,
        160,
        219,
    ),
    (
        "isopredict-traces/wikipedia_large_20000.txt",
        3,
        22,
        2666,
        4,
        60,
        160,
        209,
    ),
    (
        "isopredict-traces/wikipedia_small_10000.txt",
        3,
        10,
        1150,
        0,
        0,
        160,
        160,
    ),
    (
        "isopredict-traces/wikipedia_small_20000.txt",
        3,
        14,
        1627,
        8,
        120,
        160,
        258,
    ),
];

#[test]
fn every_file_is_in_a_table() {
    let root = common::testdata_dir();
    let files = common::labelled_and_traces();
    let listed: Vec<String> = AWDIT
        .iter()
        .map(|r| r.0)
        .chain(TRACES.iter().map(|r| r.0))
        .map(String::from)
        .collect();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(listed.contains(&rel), "{rel} has no expected counts");
    }
    assert_eq!(files.len(), listed.len());
}

#[test]
fn awdit_files_have_the_right_counts() {
    let root = common::testdata_dir();
    for &(file, sessions, txns, reads, writes, keys) in AWDIT {
        let path = root.join(file);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(formats::detect(&bytes), Some(Format::Awdit), "{file}");
        let h = formats::read_file(&path, None).unwrap_or_else(|e| panic!("{e}"));
        let s = h.stats();
        assert_eq!(
            (
                s.sessions,
                s.committed,
                s.aborted,
                s.reads,
                s.writes,
                s.keys
            ),
            (sessions, txns, 0, reads, writes, keys),
            "{file}"
        );
        assert_eq!(s.unresolved_reads, 0, "{file}");
        // No initial transaction in the file: every initial write is implicit.
        assert_eq!(
            h.txn(INITIAL_TXN).ops().len(),
            h.implicit_initial_writes() as usize
        );
    }
}

#[test]
fn traces_have_the_right_counts() {
    let root = common::testdata_dir();
    for &(file, sessions, txns, reads, local, writes, initial, keys) in TRACES {
        let path = root.join(file);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(formats::detect(&bytes), Some(Format::IsoPredict), "{file}");
        let h = formats::read_file(&path, None).unwrap_or_else(|e| panic!("{e}"));
        let s = h.stats();
        assert_eq!(
            (
                s.sessions,
                s.committed,
                s.aborted,
                s.reads,
                s.internal_reads
            ),
            (sessions, txns, 0, reads, local),
            "{file}"
        );
        assert_eq!(
            (s.writes, s.keys, s.unresolved_reads),
            (writes, keys, 0),
            "{file}"
        );
        let explicit_initial =
            h.txn(INITIAL_TXN).ops().len() - h.implicit_initial_writes() as usize;
        assert_eq!(explicit_initial, initial, "{file}");
        // Session ids are the trace's (7–12), transaction ids count from 0 in each session.
        for session in h.sessions() {
            let id = session.external_id.unwrap();
            assert!((7..=12).contains(&id), "{file}: session {id}");
            for (i, t) in session.txns().enumerate() {
                assert_eq!(h.txn(t).external_id, Some(i as u64), "{file}");
            }
        }
        // Every read observes a write of a transaction that appears no later in the trace,
        // and the ops keep their lines.
        for (i, op) in h.ops().iter().enumerate() {
            if let Some(w) = h.read_from(i as u32) {
                let writer_line = h.op(w).line;
                assert!(writer_line <= op.line, "{file}: op at line {}", op.line);
            }
        }
    }
}
