//! docs/prediction.md says what the tool does: its JSON example names the level and strategy
//! as `predict --json` writes them, and the rows of its table (written by
//! `examples/prediction_table.rs --write-docs`) match what prediction gives now on the small
//! Smallbank traces (every column but the timings).

use crate::common;

use std::time::Duration;

use isopredict::check::Level;
use isopredict::formats::{self, Format};
use isopredict::predict::{predict, Engine, PredictOptions, Strategy, Verdict};

fn docs() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/prediction.md")).unwrap()
}

#[test]
fn the_json_example_names_level_and_strategy_as_the_tool_writes_them() {
    let h = formats::read_str(
        "READ KEY[acct] Txn(1, 0) From(0, 0)\nWRITE KEY[acct] Txn(1, 0)\n\
         READ KEY[acct] Txn(2, 0) From(1, 0)\nWRITE KEY[acct] Txn(2, 0)\n",
        "deposits.txt",
        Some(Format::IsoPredict),
    )
    .unwrap();
    let out = predict(
        &h,
        &PredictOptions::new(Level::Causal, Strategy::ApproxRelaxed),
    )
    .unwrap();
    let json = out.to_json();
    let docs = docs();
    let example = &docs[docs.find("### JSON outcome").expect("the JSON section")..];
    for field in ["level", "strategy"] {
        let written = format!("\"{field}\": {}", json[field]);
        assert!(
            example.contains(&written),
            "the docs' JSON example shows {written}"
        );
    }
    // Every field of a cycle edge is documented.
    let edge = json["prediction"]["cycle"][0]
        .as_object()
        .expect("a cycle edge");
    for key in edge.keys() {
        assert!(
            example.contains(&format!("\"{key}\"")),
            "{key} is documented"
        );
    }
}

#[test]
fn the_table_rows_match_prediction_now() {
    let docs = docs();
    let begin = docs
        .find("<!-- begin: written by `cargo run --release --example prediction_table")
        .expect("the generated region's begin marker");
    let end = docs
        .find("<!-- end: written by prediction_table -->")
        .expect("the generated region's end marker");
    let rows: Vec<Vec<&str>> = docs[begin..end]
        .lines()
        .filter(|l| l.starts_with("| smallbank_small"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(
        rows.len(),
        18,
        "2 small Smallbank traces × 3 levels × 3 strategies"
    );
    for row in rows {
        let path = common::testdata_dir()
            .join("isopredict-traces")
            .join(format!("{}.txt", row[0]));
        let h = formats::read_file(&path, Some(Format::IsoPredict)).unwrap();
        let level: Level = row[1].parse().unwrap();
        let strategy: Strategy = row[2].parse().unwrap();
        // The table measures the paper-form encodings (examples/prediction_table.rs).
        let mut options =
            PredictOptions::new(level, strategy).with_timeout(Some(Duration::from_secs(60)));
        options.engine = Engine::Paper;
        let out = predict(&h, &options).unwrap();
        let s = &out.stats;
        let result = match out.verdict {
            Verdict::Predicted => "sat",
            Verdict::NoPrediction => "unsat",
            _ => "other",
        };
        let now = [
            result.to_string(),
            (s.nodes - 1).to_string(),
            format!("{}/{}", s.open_choices, s.choices),
            s.encoding.assertions.to_string(),
            s.encoding.literals.to_string(),
        ];
        let documented: Vec<String> = [3, 4, 5, 6, 7]
            .iter()
            .map(|&i| row[i].to_string())
            .collect();
        assert_eq!(documented, now, "{} {} {}", row[0], row[1], row[2]);
        assert_eq!(row[10], s.solver_calls.to_string(), "calls of {row:?}");
    }
}
