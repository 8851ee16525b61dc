//! End-to-end tests of `rank`'s answers (issue 22): a ranking cut by SIGINT (Ctrl-C) or
//! SIGTERM keeps the cells answered until then — rank.md, rank.json and risk.svg written
//! atomically and marked "Ranking cut by Ctrl-C (or SIGTERM) after N of M cells" — and exits 1
//! when one of them holds an anomaly, 130 when none does; a ranking says which programs are
//! proven free of anomalies at a level (each "none" with its certificate); with `--max N`, each
//! task says how its search for further distinct anomalies ended.
//!
//! The cut grids are user histories (`rank --histories`): quick IsoPredict traces beside one
//! slow cell, TPC-C's 3 × 20-call run predicted exactly at causal with no time limit (Z3 takes
//! minutes), which starts first (the longest cell first) and holds one of the two threads while
//! the quick cells are answered on the other. The signal is sent once the progress line (asked
//! for on a non-terminal standard error with `ISOPREDICT_PROGRESS=1`) shows a cell answered: no
//! fixed sleep. The stop flag of a process never goes back, so each stop is a process of its
//! own (the binary).

use crate::common;

use common::cli::{isopredict, json_output, snapshot, Scratch};
use common::signal::{signal_when, Ended};

/// Starts `isopredict ARGS` with the progress line on, sends `signal` as soon as a progress
/// line says at least one cell is answered, and waits (at most a minute) for the command to
/// end.
fn signal_once_answered(scratch: &Scratch, args: &[&str], signal: i32) -> Ended {
    signal_when(
        scratch,
        args,
        signal,
        |line| line.starts_with("ranking: ") && !line.starts_with("ranking: 0 of"),
        "an answered cell",
    )
}

/// A histories folder `h` under `scratch` with the quick traces `quick` (GROUP, FILE) and the
/// slow cell's history in group `slow`; returns it as an argument.
fn histories_with_a_slow_cell(scratch: &Scratch, quick: &[(&str, &str)]) -> String {
    let h = scratch.traces_by_group("h", quick);
    // TPC-C, 3 sessions × 20 calls: recorded by `run` (its prediction given up at once).
    let recorded = isopredict(&[
        "run",
        "tpcc",
        "--calls",
        "20",
        "--level",
        "causal",
        "--timeout",
        "0.2",
        "--max",
        "1",
        "--out",
        &scratch.arg("recorded"),
    ]);
    assert!(
        matches!(recorded.status.code(), Some(1) | Some(3)),
        "{recorded:?}"
    );
    std::fs::create_dir_all(scratch.join("h/slow")).unwrap();
    std::fs::copy(
        scratch.join("recorded/observed.json"),
        scratch.join("h/slow/tpcc-20.json"),
    )
    .unwrap();
    h
}

/// The rank arguments of a cut test: `histories` at causal, exact-strict, no time limit, two
/// threads, into `out`.
fn cut_rank_args<'a>(histories: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "rank",
        "--histories",
        histories,
        "--levels",
        "causal",
        "--strategies",
        "exact-strict",
        "--timeout",
        "0",
        "--threads",
        "2",
        "--out",
        out,
    ]
}

/// No temporary file or folder (`.NAME.PID.N.tmp`) left anywhere under `scratch`.
fn assert_no_temporaries(scratch: &Scratch) {
    let left: Vec<String> = snapshot(&scratch.join("."))
        .into_keys()
        .filter(|name| name.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporaries left: {left:?}");
}

#[test]
fn sigint_cuts_rank_and_writes_the_cells_answered_exit_1_with_an_anomaly() {
    let scratch = Scratch::new("rank-cut-sigint");
    let h = histories_with_a_slow_cell(
        &scratch,
        &[
            ("bank", "smallbank_small_10000.txt"),
            ("bank", "smallbank_small_20000.txt"),
        ],
    );
    let out = scratch.arg("out");
    let ended = signal_once_answered(&scratch, &cut_rank_args(&h, &out), libc::SIGINT);
    assert_eq!(ended.code, Some(1), "stderr: {}", ended.stderr);
    assert!(
        ended
            .stderr
            .contains("cutting the ranking and writing the cells answered"),
        "{}",
        ended.stderr
    );
    let mark = "Ranking cut by Ctrl-C (or SIGTERM) after 2 of 3 cells";
    assert!(ended.stderr.contains(mark), "{}", ended.stderr);
    // The printed and written rank.md say it at the top.
    assert!(
        ended.stdout.contains(&format!("**{mark}")),
        "{}",
        ended.stdout
    );
    let md = scratch.read("out/rank.md");
    assert!(md.contains(&format!("**{mark}")), "{md}");
    // rank.json: the answered cells only, and the cut.
    let json: serde_json::Value = serde_json::from_str(&scratch.read("out/rank.json")).unwrap();
    assert_eq!(json["cut"]["answered"], 2);
    assert_eq!(json["cut"]["cells"], 3);
    let records = json["predictions"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert!(
        records.iter().all(|r| r["program"] == "bank"),
        "{records:?}"
    );
    assert!(records.iter().any(|r| r["outcome"] == "sat"));
    // The chart says so in its title.
    assert!(scratch
        .read("out/risk.svg")
        .contains("cut by Ctrl-C after 2 of 3 cells"));
    assert_no_temporaries(&scratch);
}

#[test]
fn sigterm_cuts_rank_without_anomaly_writes_the_cells_answered_exit_130() {
    let scratch = Scratch::new("rank-cut-sigterm");
    let h = histories_with_a_slow_cell(&scratch, &[("votes", "voter_small_10000.txt")]);
    let out = scratch.arg("out");
    let mut args = cut_rank_args(&h, &out);
    args.push("--json");
    let ended = signal_once_answered(&scratch, &args, libc::SIGTERM);
    assert_eq!(ended.code, Some(130), "stderr: {}", ended.stderr);
    assert!(
        ended
            .stderr
            .contains("Ranking cut by Ctrl-C (or SIGTERM) after 1 of 2 cells"),
        "{}",
        ended.stderr
    );
    // --json prints rank.json; the same is written.
    let printed: serde_json::Value = serde_json::from_str(&ended.stdout).unwrap();
    let written: serde_json::Value = serde_json::from_str(&scratch.read("out/rank.json")).unwrap();
    assert_eq!(printed["cut"], written["cut"]);
    assert_eq!(written["cut"]["answered"], 1);
    // The one cell answered: Voter's trace has no prediction, with its certificate; at causal
    // the program is proven free (of the cells answered).
    let record = &written["predictions"][0];
    assert_eq!(record["outcome"], "unsat");
    assert!(record["certificate"].is_string(), "{record}");
    assert_eq!(
        written["ranking"][0]["levels"][0]["standing"],
        "proven-free"
    );
    assert!(scratch.read("out/rank.md").contains("**proven free**"));
    assert_no_temporaries(&scratch);
}

#[test]
fn rank_says_which_programs_are_proven_free_and_how_each_search_ended() {
    let scratch = Scratch::new("rank-standing");
    let o = isopredict(&[
        "rank",
        "--workloads",
        "smallbank,voter",
        "--seeds",
        "1",
        "--sizes",
        "small",
        "--levels",
        "causal,rc",
        "--explore",
        "0",
        "--max",
        "3",
        "--json",
        "--out",
        &scratch.arg("r"),
    ]);
    let json = json_output(&o, 0);
    for r in json["predictions"].as_array().unwrap() {
        // Every task carries its certificate (null unless "none"), every task with a
        // prediction the end of its search for more.
        assert_eq!(r["certificate"].is_string(), r["outcome"] == "unsat", "{r}");
        if r["outcome"] == "sat" {
            let end = r["search"]["end"].as_str().unwrap();
            assert!(
                ["exhausted", "enough", "budget", "stopped"].contains(&end),
                "{r}"
            );
            assert_eq!(
                r["search"]["cut"],
                ["budget", "stopped"].contains(&end),
                "{r}"
            );
        } else {
            assert!(r.get("search").is_none(), "{r}");
        }
    }
    // Voter under causal: proven free; under rc: exposed.
    let voter = json["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["program"] == "voter")
        .unwrap();
    let standing = |level: &str| {
        voter["levels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["level"] == level)
            .unwrap()["standing"]
            .clone()
    };
    assert_eq!(standing("causal"), "proven-free");
    assert_eq!(standing("rc"), "exposed");
    let md = scratch.read("r/rank.md");
    assert!(
        md.contains("## Where each program stands, by level"),
        "{md}"
    );
    assert!(md.contains("| voter | **proven free** (1/1 runs;"), "{md}");
    assert!(
        md.contains("## How the searches for distinct anomalies ended"),
        "{md}"
    );
    // The chart marks each level.
    let svg = scratch.read("r/risk.svg");
    assert!(
        svg.contains("<title>voter at causal: proven free (1/1 runs;"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>voter at rc: anomaly in 1/1 runs"),
        "{svg}"
    );
}
