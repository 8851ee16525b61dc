//! End-to-end tests of `rank` and `check` as independent cells (docs/distributed.md): `--plan`
//! writes one JSON line per cell, `--cell N --plan FILE --out DIR` runs one, `--merge DIR`
//! builds the output, and the merged output equals the one-machine command's (except the
//! measured times: wall clock, generation and solving).

use crate::common;

use std::process::Output;

use common::cli::{isopredict, stderr, stdout, Scratch};

fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(o), stderr(o));
}

/// rank.md without what is measured: the wall-time line and the `N s` table cells.
fn without_times(md: &str) -> String {
    md.lines()
        .filter(|l| !l.contains(" thread(s)."))
        .map(|l| {
            l.split(" | ")
                .map(|c| {
                    let t = c.trim_end_matches(" |");
                    match t.strip_suffix(" s") {
                        Some(n) if n.parse::<f64>().is_ok() => "T",
                        _ => c,
                    }
                })
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs every cell of `plan` (last first) into `cells` with `command`.
fn run_cells(command: &str, plan: &str, cells: &str) {
    let n = std::fs::read_to_string(plan).unwrap().lines().count();
    assert!(n > 0);
    for i in (0..n).rev() {
        ok(&isopredict(&[
            command,
            "--cell",
            &i.to_string(),
            "--plan",
            plan,
            "--out",
            cells,
        ]));
    }
}

#[test]
fn rank_of_histories_merged_from_cells_equals_one_machine_rank() {
    let s = Scratch::new("rank-cells");
    let h = s.traces_by_group(
        "h",
        &[
            ("bank", "smallbank_small_10000.txt"),
            ("bank", "smallbank_small_20000.txt"),
            ("votes", "voter_large_10000.txt"),
        ],
    );
    let grid = ["rank", "--histories", &h, "--levels", "causal,rc"];
    let one = isopredict(&[&grid[..], &["--out", &s.arg("one")]].concat());
    ok(&one);
    let plan = s.arg("plan.jsonl");
    ok(&isopredict(&[&grid[..], &["--plan", &plan]].concat()));
    // 3 histories × 2 levels × 1 strategy.
    assert_eq!(s.read("plan.jsonl").lines().count(), 6);
    run_cells("rank", &plan, &s.arg("cells"));
    let merged = isopredict(&[
        "rank",
        "--merge",
        &s.arg("cells"),
        "--out",
        &s.arg("merged"),
    ]);
    ok(&merged);
    assert_eq!(stdout(&merged), s.read("merged/rank.md"));
    assert_eq!(
        without_times(&s.read("merged/rank.md")),
        without_times(&s.read("one/rank.md"))
    );
    assert!(s.read("one/rank.md").contains("| bank |"));
    assert_eq!(s.read("merged/risk.svg"), s.read("one/risk.svg"));
    // The JSON records equal too, once the measured times are left out.
    let records = |name: &str| {
        let mut v: serde_json::Value = serde_json::from_str(&s.read(name)).unwrap();
        for r in v["predictions"].as_array_mut().unwrap() {
            r["generation_s"] = serde_json::Value::Null;
            r["solving_s"] = serde_json::Value::Null;
        }
        (
            v["predictions"].clone(),
            v["ranking"].clone(),
            v["grid"].clone(),
        )
    };
    assert_eq!(records("merged/rank.json"), records("one/rank.json"));
}

#[test]
fn check_of_a_folder_merged_from_cells_equals_check_on_it() {
    let s = Scratch::new("check-cells");
    let dir = s.join("h");
    std::fs::create_dir_all(dir.join("more")).unwrap();
    std::fs::write(dir.join("ok.txt"), "w(1,1,0,1)\nr(1,1,1,2)\n").unwrap();
    std::fs::write(
        dir.join("more/lost.txt"),
        "r(1,0,0,1)\nw(1,1,0,1)\nr(1,0,1,2)\nw(1,2,1,2)\n",
    )
    .unwrap();
    std::fs::write(dir.join("broken.txt"), "w(1,1,0,1)\nr(1,\n").unwrap();
    std::fs::write(dir.join("README"), "not a history\n").unwrap();
    let h = s.arg("h");
    let one = isopredict(&["check", &h, "--level", "si"]);
    assert_eq!(one.status.code(), Some(2), "{}", stdout(&one));
    let plan = s.arg("plan.jsonl");
    ok(&isopredict(&[
        "check", &h, "--level", "si", "--plan", &plan,
    ]));
    run_cells("check", &plan, &s.arg("cells"));
    let merged = isopredict(&["check", "--merge", &s.arg("cells")]);
    assert_eq!(merged.status.code(), one.status.code());
    assert_eq!(stdout(&merged), stdout(&one));
    let text = stdout(&one);
    assert!(text.contains("lost.txt: "), "{text}");
    assert!(
        text.ends_with(
            "3 histories: 1 ok, 1 found, 1 bad input, 0 unknown (1 other entries skipped)\n"
        ),
        "{text}"
    );
}

#[test]
fn cells_refuse_what_they_cannot_run() {
    let s = Scratch::new("cells-usage");
    let plan = s.arg("plan.jsonl");
    ok(&isopredict(&[
        "rank",
        "--workloads",
        "voter",
        "--seeds",
        "1",
        "--sizes",
        "small",
        "--levels",
        "rc",
        "--explore",
        "0",
        "--plan",
        &plan,
    ]));
    assert!(!s.join("out").exists(), "--plan ran the grid");
    let no_out = isopredict(&["rank", "--cell", "0", "--plan", &plan]);
    assert_eq!(no_out.status.code(), Some(2));
    assert!(
        stderr(&no_out).contains("--cell needs --out"),
        "{}",
        stderr(&no_out)
    );
    let past = isopredict(&["rank", "--cell", "1", "--plan", &plan, "--out", &s.arg("c")]);
    assert_eq!(past.status.code(), Some(2));
    assert!(stderr(&past).contains("no cell 1 (the plan has cells 0 to 0)"));
    // A rank plan is not a check plan, and an empty results folder has nothing to merge.
    let wrong = isopredict(&[
        "check",
        "--cell",
        "0",
        "--plan",
        &plan,
        "--out",
        &s.arg("c"),
    ]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        stderr(&wrong).contains("plan.jsonl, line 1"),
        "{}",
        stderr(&wrong)
    );
    std::fs::create_dir_all(s.join("empty")).unwrap();
    let empty = isopredict(&["rank", "--merge", &s.arg("empty"), "--out", &s.arg("o")]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(stderr(&empty).contains("no cell results"));
    assert!(!s.join("o").exists());
}
