//! `check --output elle` against the result maps Elle's own tests expect (issue 20, item 3).
//!
//! Source of every expectation: jepsen-io/elle `test/elle/list_append_test.clj`, `checker-test`
//! (the `is (= {...} (c {:consistency-models ...} h))` assertions; `c` drops `:also-not`). The
//! histories are tests/data/peers/elle/*.edn, written anew from the same test cases (each file
//! names its case). What is compared, per case: `:valid?`, `:anomaly-types`, `:not`, and each
//! anomaly's `:type` and `:steps` exactly (Elle's step maps: `:type`, `:key`, `:value`,
//! `:value'`, `:a-mop-index`, `:b-mop-index`; `:process`; `:realtime`), with the cycle given by
//! the input lines of its transactions. A cycle has no first transaction, so both sides are
//! compared from the same rotation. Two things Elle writes are not compared: its `:cycle`
//! holds the full operation maps (isopredict names each transaction by its process, input
//! line and label, as it keeps no copy of the input's maps), and a `:realtime` step's `:a'`/`:b`
//! operations (compared by type only).

use crate::common;

use common::cli::{isopredict, stderr, stdout, Scratch};
use serde_json::{json, Value};

fn data(name: &str) -> String {
    format!(
        "{}/tests/data/peers/elle/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// isopredict's result map for `file` as JSON, and its exit code.
fn elle_map(file: &str, level: &str) -> (Value, i32) {
    let o = isopredict(&[
        "check",
        "--output",
        "elle",
        "--json",
        "--level",
        level,
        &data(file),
    ]);
    let text = stdout(&o);
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}\n{text}"));
    (v, o.status.code().unwrap_or(-1))
}

/// A step with what this test compares: a realtime step by its type only.
fn comparable(step: &Value) -> Value {
    if step["type"] == "realtime" {
        json!({"type": "realtime"})
    } else {
        step.clone()
    }
}

/// The cycle (transactions by input line) and its steps, from the rotation that starts at the
/// smallest line.
fn rotated(lines: &[u64], steps: &[Value]) -> (Vec<u64>, Vec<Value>) {
    assert_eq!(lines.len(), steps.len(), "one step per edge of the cycle");
    let start = (0..lines.len()).min_by_key(|&i| lines[i]).unwrap_or(0);
    let n = lines.len();
    (
        (0..n).map(|i| lines[(start + i) % n]).collect(),
        (0..n)
            .map(|i| comparable(&steps[(start + i) % n]))
            .collect(),
    )
}

/// One of Elle's expectations: the result map's `:valid?`, `:anomaly-types` and `:not`, and
/// the one cycle of the one anomaly type, as (input line of each transaction, step) pairs.
struct Expected {
    file: &'static str,
    /// isopredict's level that asks what Elle's `:consistency-models` asked.
    level: &'static str,
    anomaly_type: &'static str,
    not: &'static [&'static str],
    cycle: Vec<(u64, Value)>,
}

fn ww(key: &str, v: Value, v2: Value, a: u64, b: u64) -> Value {
    json!({"type": "ww", "key": key, "value": v, "value'": v2, "a-mop-index": a, "b-mop-index": b})
}
fn wr(key: &str, v: u64, a: u64, b: u64) -> Value {
    json!({"type": "wr", "key": key, "value": v, "a-mop-index": a, "b-mop-index": b})
}
fn rw(key: &str, v: Value, v2: u64, a: u64, b: u64) -> Value {
    json!({"type": "rw", "key": key, "value": v, "value'": v2, "a-mop-index": a, "b-mop-index": b})
}
const INIT: &str = "elle.list-append/init";

fn expectations() -> Vec<Expected> {
    vec![
        // checker-test "G0": {:valid? false, :anomaly-types [:G0], :not #{:read-uncommitted}},
        // cycle [t1 t2 t1]: ww x 1→2 (mops 0, 0), ww y 2→1 (mops 1, 1).
        Expected {
            file: "la-g0.edn",
            level: "rc",
            anomaly_type: "G0",
            not: &["read-uncommitted"],
            cycle: vec![
                (4, ww("x", json!(1), json!(2), 0, 0)),
                (5, ww("y", json!(2), json!(1), 1, 1)),
            ],
        },
        // checker-test "G1c": {:anomaly-types [:G1c], :not #{:read-committed}}, cycle
        // [t2 t1 t2]: wr y 1 (mops 1, 1), ww x 1→2 (mops 0, 0).
        Expected {
            file: "la-g1c.edn",
            level: "rc",
            anomaly_type: "G1c",
            not: &["read-committed"],
            cycle: vec![
                (4, wr("y", 1, 1, 1)),
                (3, ww("x", json!(1), json!(2), 0, 0)),
            ],
        },
        // checker-test "G-single": {:anomaly-types [:G-single-item],
        // :not #{:consistent-view :repeatable-read}}, cycle [t2 t1 t2]: rw y init→1 (mops 1,
        // 1), ww x 1→2 (mops 0, 0).
        Expected {
            file: "la-g-single.edn",
            level: "ser",
            anomaly_type: "G-single-item",
            not: &["consistent-view", "repeatable-read"],
            cycle: vec![
                (4, rw("y", json!(INIT), 1, 1, 1)),
                (3, ww("x", json!(1), json!(2), 0, 0)),
            ],
        },
        // checker-test "G2" (serializable): {:anomaly-types [:G2-item], :not
        // #{:repeatable-read}}, cycle [t1 t2 t1]: rw y init→1 (mops 1, 0), rw x init→1 (1, 0).
        Expected {
            file: "la-g2.edn",
            level: "ser",
            anomaly_type: "G2-item",
            not: &["repeatable-read"],
            cycle: vec![
                (3, rw("y", json!(INIT), 1, 1, 0)),
                (4, rw("x", json!(INIT), 1, 1, 0)),
            ],
        },
        // checker-test "Strong SI violation" (strict-serializable): {:anomaly-types
        // [:G-single-item-realtime], :not #{:strong-snapshot-isolation}}, cycle [t2' t1' t2']:
        // rw x 1→2 (mops 0, 0), realtime.
        Expected {
            file: "la-strong-si-realtime.edn",
            level: "strict-ser",
            anomaly_type: "G-single-item-realtime",
            not: &["strong-snapshot-isolation"],
            cycle: vec![
                (8, rw("x", json!(1), 2, 0, 0)),
                (6, json!({"type": "realtime"})),
            ],
        },
        // checker-test "Strong Session SI violation": {:anomaly-types [:G-single-item-process],
        // :not #{:strong-session-snapshot-isolation}}, cycle [t2' t1' t2']: rw x 1→2 (0, 0),
        // process 1.
        Expected {
            file: "la-strong-session-si.edn",
            level: "si",
            anomaly_type: "G-single-item-process",
            not: &["strong-session-snapshot-isolation"],
            cycle: vec![
                (8, rw("x", json!(1), 2, 0, 0)),
                (6, json!({"type": "process", "process": 1})),
            ],
        },
        // checker-test "G-nonadjacent-process" (jepsen-io/elle#17): {:anomaly-types
        // [:G-nonadjacent-item-process], :not #{:strong-session-snapshot-isolation}}, cycle
        // [t2' t3' t0' t1' t2']: rw z init→1 (0, 0), wr z 1 (0, 1), rw x init→1 (0, 0), process 1.
        Expected {
            file: "la-g-nonadjacent-process.edn",
            level: "si",
            anomaly_type: "G-nonadjacent-item-process",
            not: &["strong-session-snapshot-isolation"],
            cycle: vec![
                (8, rw("z", json!(INIT), 1, 0, 0)),
                (10, wr("z", 1, 0, 1)),
                (4, rw("x", json!(INIT), 1, 0, 0)),
                (6, json!({"type": "process", "process": 1})),
            ],
        },
    ]
}

#[test]
fn result_maps_match_elles_tests() {
    let mut failures = Vec::new();
    for e in expectations() {
        let (got, code) = elle_map(e.file, e.level);
        // Exit codes stay isopredict's: 1 on a violation.
        assert_eq!(code, 1, "{}: exit code", e.file);
        let mut check = |what: &str, ok: bool, detail: String| {
            if !ok {
                failures.push(format!("{} {what}: {detail}", e.file));
            }
        };
        check(
            ":valid?",
            got["valid?"] == json!(false),
            got["valid?"].to_string(),
        );
        check(
            ":anomaly-types",
            got["anomaly-types"] == json!([e.anomaly_type]),
            got["anomaly-types"].to_string(),
        );
        check(":not", got["not"] == json!(e.not), got["not"].to_string());
        let cases = got["anomalies"][e.anomaly_type].as_array().cloned();
        let Some([case]) = cases.as_deref() else {
            check(":anomalies", false, got["anomalies"].to_string());
            continue;
        };
        check(
            ":type",
            case["type"] == json!(e.anomaly_type),
            case["type"].to_string(),
        );
        let cycle = case["cycle"].as_array().expect("a cycle");
        // The first transaction is repeated at the end, as Elle writes it.
        assert_eq!(cycle.first(), cycle.last(), "{}", e.file);
        let lines: Vec<u64> = cycle[..cycle.len() - 1]
            .iter()
            .map(|op| op["line"].as_u64().expect("a line"))
            .collect();
        let steps = case["steps"].as_array().expect("steps").clone();
        let (want_lines, want_steps): (Vec<u64>, Vec<Value>) = e.cycle.into_iter().unzip();
        let got = rotated(&lines, &steps);
        let want = rotated(&want_lines, &want_steps);
        check(
            ":cycle/:steps",
            got == want,
            format!("got {got:?}\nwant {want:?}"),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A valid history is exactly `{:valid? true}` (Elle's `result-map`), exit 0; EDN by default.
#[test]
fn valid_is_exactly_valid_true() {
    let o = isopredict(&["check", "--output", "elle", &data("la-adya-figure3.edn")]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "{:valid? true}\n");
    let (json, code) = elle_map("la-info-reads.edn", "ser");
    assert_eq!((json, code), (json!({"valid?": true}), 0));
}

/// EDN by default: keywords, sets and Elle's key names; an anomaly of the input itself
/// (incompatible order, checker-test "contradictory read orders": `[:G1c
/// :incompatible-order]`, `:not #{:read-committed}`) is reported with the cycles.
#[test]
fn edn_output_names_the_input_anomalies() {
    let o = isopredict(&[
        "check",
        "--output",
        "elle",
        &data("la-incompatible-order.edn"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(text.starts_with("{:valid? false\n"), "{text}");
    assert!(
        text.contains(":anomaly-types [:G1c :incompatible-order]"),
        "{text}"
    );
    assert!(text.contains(":not #{:read-committed}"), "{text}");
    assert!(text.contains(":also-not #{"), "{text}");
}

/// Several histories at once print one line each: `--output` takes a single history.
#[test]
fn output_elle_takes_one_history() {
    let o = isopredict(&[
        "check",
        "--output",
        "elle",
        &data("la-g0.edn"),
        &data("la-g1c.edn"),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// Line numbers in reports of Jepsen histories point at the completion whose values the
/// transaction was read from, not at its `:invoke` line, whose reads are nil (issue 35 item
/// 15). In tests/data/formats/elle.edn the reader's invoke is line 5, its :ok line 6.
#[test]
fn report_lines_are_completion_lines() {
    let file = format!("{}/tests/data/formats/elle.edn", env!("CARGO_MANIFEST_DIR"));
    let o = isopredict(&["check", &file, "--level", "cc"]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("T3.1 [line 6] first reads R(x,1) at line 6"),
        "{text}"
    );
    assert!(!text.contains("[line 5]"), "{text}");
}

/// Issue 35 item 23: keys of different types are different keys, as in Elle: the integer `1`
/// and the string `"1"`, the keyword `:x` and the string `"x"`. Merged into one key, the first
/// history below was judged `:valid? false` (incompatible orders of `1`), the second refused
/// as bad input (1 appended twice to `x`); Elle finds both valid.
#[test]
fn issue35_item23_keys_of_different_types_are_different_keys() {
    let s = Scratch::new("i35-23");
    let histories = [
        (
            "int-and-string.edn",
            "{:type :invoke, :f :txn, :value [[:append 1 1] [:append \"1\" 2]], :process 0, :index 0}\n\
             {:type :ok, :f :txn, :value [[:append 1 1] [:append \"1\" 2]], :process 0, :index 1}\n\
             {:type :invoke, :f :txn, :value [[:r 1 nil] [:r \"1\" nil]], :process 1, :index 2}\n\
             {:type :ok, :f :txn, :value [[:r 1 [1]] [:r \"1\" [2]]], :process 1, :index 3}\n",
        ),
        (
            "keyword-and-string.edn",
            "{:type :invoke, :f :txn, :value [[:append :x 1] [:append \"x\" 1]], :process 0, :index 0}\n\
             {:type :ok, :f :txn, :value [[:append :x 1] [:append \"x\" 1]], :process 0, :index 1}\n\
             {:type :invoke, :f :txn, :value [[:r :x nil] [:r \"x\" nil]], :process 1, :index 2}\n\
             {:type :ok, :f :txn, :value [[:r :x [1]] [:r \"x\" [1]]], :process 1, :index 3}\n",
        ),
        (
            "int-and-string.json",
            "{\"type\":\"invoke\",\"f\":\"txn\",\"value\":[[\"append\",1,1],[\"append\",\"1\",2]],\"process\":0,\"index\":0}\n\
             {\"type\":\"ok\",\"f\":\"txn\",\"value\":[[\"append\",1,1],[\"append\",\"1\",2]],\"process\":0,\"index\":1}\n\
             {\"type\":\"invoke\",\"f\":\"txn\",\"value\":[[\"r\",1,null],[\"r\",\"1\",null]],\"process\":1,\"index\":2}\n\
             {\"type\":\"ok\",\"f\":\"txn\",\"value\":[[\"r\",1,[1]],[\"r\",\"1\",[2]]],\"process\":1,\"index\":3}\n",
        ),
    ];
    for (name, text) in histories {
        std::fs::write(s.join(name), text).unwrap();
        let file = s.arg(name);
        let o = isopredict(&["check", "--level", "ser", &file]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        let o = isopredict(&[
            "check", "--output", "elle", "--json", "--level", "ser", &file,
        ]);
        let v: Value = serde_json::from_str(&stdout(&o))
            .unwrap_or_else(|e| panic!("{name}: {e}: {}{}", stdout(&o), stderr(&o)));
        assert_eq!(v["valid?"], json!(true), "{name}: {v}");
        let o = isopredict(&["stats", &file]);
        assert!(
            stdout(&o)
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["keys", "2"]),
            "{name}: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
}

/// Issue 35 item 2: a read skew (T2.1 reads y from T1.1, then x from the initial state though
/// T1.1 wrote x) violates isopredict's rc, Biswas & Enea's read committed, while Elle's
/// read-committed (Adya's PL-2) allows it. The map names it as Elle does (G-single-item, with
/// its `:wr` and `:rw` steps), never as isopredict's pattern (`:non-monotonic-read-causal`) or
/// as a violation of Elle's read-committed; `:isopredict/violated` says which model failed;
/// the text report says which rc it judged.
#[test]
fn issue35_item2_a_read_skew_is_g_single_item_and_not_elles_read_committed() {
    let s = Scratch::new("i35-2");
    std::fs::write(
        s.join("read-skew.edn"),
        "{:index 0, :process 1, :type :invoke, :f :txn, :value [[:w :x 2] [:w :y 2]]}\n\
         {:index 1, :process 1, :type :ok, :f :txn, :value [[:w :x 2] [:w :y 2]]}\n\
         {:index 2, :process 2, :type :invoke, :f :txn, :value [[:r :y nil] [:r :x nil]]}\n\
         {:index 3, :process 2, :type :ok, :f :txn, :value [[:r :y 2] [:r :x nil]]}\n",
    )
    .unwrap();
    let file = s.arg("read-skew.edn");
    for level in ["rc", "all"] {
        let o = isopredict(&["check", "--output", "elle", "--level", level, &file]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains(":anomaly-types [:G-single-item]"), "{text}");
        assert!(text.contains("{:type :rw, :key :x, :value nil"), "{text}");
        assert!(!text.contains(":non-monotonic-read-causal"), "{text}");
        assert!(!text.contains(":strong-session-read-committed"), "{text}");
        assert!(!text.contains(":read-committed"), "{text}");
        assert!(
            text.contains(":not #{:consistent-view :repeatable-read}"),
            "{text}"
        );
        assert!(
            text.contains(":isopredict/violated {:rc {:model \"Biswas & Enea's read committed"),
            "{text}"
        );
    }
    let o = isopredict(&["check", "--level", "rc", &file]);
    let text = stdout(&o);
    assert!(
        text.contains("note: rc here is Biswas & Enea's read committed, stronger than Adya's PL-2"),
        "{text}"
    );
    assert!(
        text.contains("VIOLATED: non-monotonic read (causal) (Plume TAP h NonMonoReadCO)"),
        "{text}"
    );
}

/// Issue 35 item 2: an anti-dependency whose transaction happens before the reader through a
/// chain of reads (elle-cli's rw-register G-single-item case: T1 →wr T2 →wr T3 →rw T1) is
/// written as Elle writes it, G-single-item, not as isopredict's causal pattern; and a read
/// skew through a known version order (x: [1 2], the reader saw the initial state) goes
/// through that order's `:ww` step.
#[test]
fn issue35_item2_causal_chains_and_version_orders_give_elles_cycles() {
    let file = format!(
        "{}/tests/data/peers/elle-cli/rw-g-single-item.edn",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = isopredict(&["check", "--output", "elle", &file]);
    let text = stdout(&o);
    assert!(text.contains(":anomaly-types [:G-single-item]"), "{text}");
    assert!(!text.contains("causal-write-conflict"), "{text}");

    let s = Scratch::new("i35-2b");
    std::fs::write(
        s.join("la-read-skew.edn"),
        "{:index 0, :process 0, :type :ok, :f :txn, :value [[:append :x 1]]}\n\
         {:index 1, :process 1, :type :ok, :f :txn, :value [[:append :x 2] [:append :y 1]]}\n\
         {:index 2, :process 2, :type :ok, :f :txn, :value [[:r :y [1]] [:r :x []]]}\n\
         {:index 3, :process 3, :type :ok, :f :txn, :value [[:r :x [1 2]]]}\n",
    )
    .unwrap();
    let o = isopredict(&[
        "check",
        "--output",
        "elle",
        "--level",
        "rc",
        &s.arg("la-read-skew.edn"),
    ]);
    let text = stdout(&o);
    assert!(text.contains(":anomaly-types [:G-single-item]"), "{text}");
    assert!(
        text.contains("{:type :ww, :key :x, :value 1, :value' 2"),
        "{text}"
    );
}

/// Issue 35 item 2: a cycle of two adjacent anti-dependencies is G2-item by Elle's rule on
/// the steps written (docs/checking.md), and an anomaly Elle has no name for is in
/// isopredict's namespace (`:isopredict/thin-air-read`), so no reader takes it for Elle's.
#[test]
fn issue35_item2_names_follow_elles_rule_and_own_names_are_namespaced() {
    let (json, _) = elle_map("la-lost-update.edn", "ser");
    for case in json["anomalies"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| v.as_array().unwrap())
    {
        let Some(steps) = case["steps"].as_array() else {
            continue;
        };
        let rw: Vec<bool> = steps.iter().map(|s| s["type"] == "rw").collect();
        let adjacent = (0..rw.len()).any(|i| rw[i] && rw[(i + 1) % rw.len()]);
        if adjacent {
            assert!(
                case["type"].as_str().unwrap().starts_with("G2-item"),
                "{case}"
            );
        }
    }
    let (json, _) = elle_map("rw-garbage-read.edn", "rc");
    assert_eq!(
        json["anomaly-types"],
        json!(["isopredict/thin-air-read"]),
        "{json}"
    );
}
