//! One name per anomaly, everywhere (issue 34 item 4): one anomaly taken through every view
//! prints the same engineer's name, with the identifiers of the same row of the anomaly table
//! beside it (`src/history/anomalies.rs`, docs/checking.md "One table of names").
//!
//! - a lost update, predicted from a serializable history: `predict`'s text and `--json`, then
//!   `check --level ser` on the predicted history — its text (verdict line and report), its
//!   `--json`, its `--output elle` — and `run`'s report.md and report.json with `check` on the
//!   run's predicted.json;
//! - a read outside the snapshot, on a TimeKiller stream with the database's timestamps:
//!   `check`'s text and `--json` and `watch`'s lines, summary and `--json`.

use crate::common;

use common::cli::{isopredict, isopredict_with_stdin, json_output, stderr, stdout, Scratch};
use isopredict::history::AnomalyId;

/// T1.1 reads x from the initial state and writes it; T2.1 reads T1.1's write and writes x:
/// serializable as observed; at causal consistency T2.1 may read the initial state instead,
/// a lost update.
const OBSERVED: &str = r#"{"format": "isopredict-history", "version": 1, "keys": ["x"],
 "sessions": [
  {"transactions": [{"ops": [{"r": "x", "from": "initial"}, {"w": "x"}]}]},
  {"transactions": [{"ops": [{"r": "x", "from": [1, 1]}, {"w": "x"}]}]}
 ]}
"#;

/// The row's names as every `--json` view carries them.
fn names_json(id: AnomalyId) -> serde_json::Value {
    serde_json::to_value(id.row().names()).unwrap()
}

/// Whether `names` (a JSON object with the row's names, perhaps more fields) carries exactly
/// the row's names.
fn has_row_names(names: &serde_json::Value, id: AnomalyId) -> bool {
    let want = names_json(id);
    want.as_object()
        .unwrap()
        .iter()
        .all(|(k, v)| names.get(k) == Some(v))
}

#[test]
fn a_predicted_lost_update_has_one_name_in_every_view() {
    let id = AnomalyId::LostUpdate;
    let label = id.label();
    assert_eq!(label, "lost update (Adya G-single, Elle lost-update)");
    let s = Scratch::new("one-name-lost-update");
    std::fs::write(s.join("observed.json"), OBSERVED).unwrap();
    let observed = s.arg("observed.json");
    let predicted = s.arg("predicted.json");

    // predict: text and --json.
    let o = isopredict(&[
        "predict", &observed, "--level", "causal", "--out", &predicted,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!("the anomaly is a {label}: T1.1 and T2.1")),
        "{text}"
    );
    let o = isopredict(&["predict", &observed, "--level", "causal", "--json"]);
    let v = json_output(&o, 1);
    let named = &v["prediction"]["anomaly"];
    assert!(has_row_names(named, id), "{named}");

    // check --level ser on the prediction: the verdict line and the report's anomaly line.
    let o = isopredict(&["check", &predicted, "--level", "ser"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "serializability (ser) VIOLATED: {label} [evidence"
        )),
        "{text}"
    );
    assert!(text.contains(&format!("anomaly: {label} — ")), "{text}");
    // Every level at once: the levels that forbid it say the same words.
    let o = isopredict(&["check", &predicted, "--level", "all"]);
    let text = stdout(&o);
    for level in ["serializability ", "snapshot isolation "] {
        assert!(
            text.lines()
                .any(|l| l.contains(level) && l.contains(&format!("VIOLATED: {label} ["))),
            "{level}: {text}"
        );
    }

    // check --json: the engineer's name and the row's names.
    let o = isopredict(&["check", &predicted, "--level", "ser", "--json"]);
    let v = json_output(&o, 1);
    assert_eq!(v["anomaly"], id.name(), "{v}");
    assert_eq!(v["anomaly_names"], names_json(id), "{v}");
    assert_eq!(v["anomaly_names"]["name"], named["name"]);

    // check --output elle: Elle's name of the row, and the label for isopredict's verdict.
    let o = isopredict(&["check", &predicted, "--level", "ser", "--output", "elle"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let edn = stdout(&o);
    let elle = id.row().elle_name().unwrap();
    assert!(edn.contains(&format!(":{elle} [{{:type :{elle}")), "{edn}");
    assert!(edn.contains(&format!(":anomaly \"{label}\"")), "{edn}");

    // run: report.md's distinct anomalies and report.json name its prediction by the row
    // that check --level ser gives its predicted.json.
    let out = s.arg("run");
    let o = isopredict(&["run", "smallbank", "--out", &out]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("run/report.json")).unwrap()).unwrap();
    let names = &report["prediction"]["anomaly_names"];
    let run_id: AnomalyId = serde_json::from_value(names["id"].clone()).unwrap();
    assert!(has_row_names(names, run_id), "{names}");
    let md = std::fs::read_to_string(s.join("run/report.md")).unwrap();
    assert!(md.contains(&format!("1. **{}: ", run_id.label())), "{md}");
    let o = isopredict(&["check", &s.arg("run/predicted.json"), "--level", "ser"]);
    assert!(
        stdout(&o).contains(&format!("VIOLATED: {} [evidence", run_id.label())),
        "{}",
        stdout(&o)
    );
}

/// T1.1 writes 1 to key 1 and commits, T2.1 then writes 2 and commits, T3.1 starts after both
/// and reads 1: by the database's timestamps, a read outside its snapshot (EXT BEFORE).
const STALE_READ: &str = concat!(
    r#"{"tid": 1, "sid": 1, "sts": {"p": 1, "l": 0}, "cts": {"p": 2, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 1}]}"#,
    "\n",
    r#"{"tid": 2, "sid": 2, "sts": {"p": 3, "l": 0}, "cts": {"p": 4, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 2}]}"#,
    "\n",
    r#"{"tid": 3, "sid": 3, "sts": {"p": 5, "l": 0}, "cts": {"p": 6, "l": 0}, "ops": [{"t": "r", "k": 1, "v": 1}]}"#,
    "\n",
);

#[test]
fn a_read_outside_the_snapshot_has_one_name_in_check_and_watch() {
    let id = AnomalyId::SnapshotReadViolation;
    let label = id.label();
    assert_eq!(label, "read outside the snapshot (Chronos EXT)");
    let s = Scratch::new("one-name-stale-read");
    let array = STALE_READ.lines().collect::<Vec<_>>().join(",\n");
    std::fs::write(s.join("stale.json"), format!("[\n{array}\n]\n")).unwrap();
    let file = s.arg("stale.json");
    let common = ["--level", "si", "--initial-value", "0"];

    let o = isopredict(&[&["check", &file][..], &common[..]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "snapshot isolation (si) VIOLATED: {label} [evidence"
        )),
        "{text}"
    );
    let o = isopredict(&[&["check", &file, "--json"][..], &common[..]].concat());
    let checked = json_output(&o, 1);
    assert_eq!(checked["anomaly_names"], names_json(id), "{checked}");

    // watch: each line and the summary named by the same row, the axiom's line beside it.
    let o = isopredict_with_stdin(
        &[&["watch"][..], &common[..]].concat(),
        STALE_READ.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.starts_with(&format!("{label}: EXT BEFORE: T3.1"))),
        "{text}"
    );
    assert!(
        text.contains(&format!("violations: 1 (1 {label} [1 EXT BEFORE])")),
        "{text}"
    );
    let o = isopredict_with_stdin(
        &[&["watch", "--json"][..], &common[..]].concat(),
        STALE_READ.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["axiom"], "EXT", "{}", lines[0]);
    assert_eq!(lines[0]["anomaly"], checked["anomaly"], "{}", lines[0]);
    assert_eq!(lines[0]["anomaly_names"], checked["anomaly_names"]);
    let counted = &lines[1]["summary"]["anomalies"];
    assert_eq!(
        counted[0]["anomaly_names"], checked["anomaly_names"],
        "{counted}"
    );
    assert_eq!(counted[0]["count"], 1, "{counted}");
}
