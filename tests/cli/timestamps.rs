//! End-to-end tests of timestamp checking: `check --level si|ser` on TimeKiller and native
//! JSON input with timestamps, and `watch` over standard input and over a loopback TCP
//! socket (bounded: it stops after the announced number of connections), with malformed
//! lines.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use isopredict::formats::{self, timekiller, Format};
use isopredict::generate::timestamped::{generate_timestamped, TsGenParams};
use isopredict::history::timestamped::TimestampedHistory;
use isopredict::ser::chronos::{TsCheckOptions, TsLevel};
use isopredict::ser::TimestampReport;
use isopredict::verdict::engines::check_timestamps;

use common::cli::{isopredict, isopredict_with_stdin, stderr, stdout, Scratch};

const VIOLATING: &str = r#"[
{"tid": 1, "sid": 1, "sts": {"p": 1, "l": 0}, "cts": {"p": 4, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 1}]},
{"tid": 2, "sid": 2, "sts": {"p": 2, "l": 0}, "cts": {"p": 5, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 2}]},
{"tid": 3, "sid": 3, "sts": {"p": 6, "l": 0}, "cts": {"p": 7, "l": 0}, "ops": [{"t": "r", "k": 1, "v": 1}, {"t": "r", "k": 2, "v": 0}]}
]
"#;

/// A generated history with a few violations, as TimeKiller lines.
fn generated(txns: u32, seed: u64) -> (TimestampedHistory, Vec<u8>) {
    let mut h = generate_timestamped(&TsGenParams {
        txns,
        sessions: 8,
        keys: 40,
        seed,
        ..Default::default()
    });
    // Three stale reads: a read of key k returns a value of key k written long before.
    let mut changed = 0;
    for o in (0..h.ops.len()).rev() {
        if changed == 3 {
            break;
        }
        let op = h.ops[o];
        if op.kind == isopredict::history::timestamped::TsOpKind::Read && op.value > 1 {
            h.ops[o].value = 1.min(op.value - 1);
            changed += 1;
        }
    }
    let mut bytes = Vec::new();
    timekiller::write_timestamped(&h, &mut bytes).unwrap();
    (h, bytes)
}

#[test]
fn check_uses_the_timestamp_checker_and_says_so() {
    let dir = Scratch::new("check-ts");
    std::fs::write(dir.join("v.json"), VIOLATING).unwrap();
    let file = dir.arg("v.json");
    let o = isopredict(&["check", &file, "--level", "si", "--initial-value", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("timestamp checker"), "{text}");
    assert!(
        text.contains("NOCONFLICT: T1.1 (tid 1, sid 1, start 1, commit 4, line 2)"),
        "{text}"
    );
    assert!(text.contains("EXT BEFORE: T3.1"), "{text}");
    // With the default initial value (null), the read of key 2 = 0 has no writer.
    let o = isopredict(&["check", &file, "--level", "si", "--json"]);
    let report: TimestampReport = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((report.counts.ext_before, report.counts.ext_never), (1, 1));
    assert_eq!(report.checker, "timestamps");
    // SER: no NOCONFLICT; the stale read remains.
    let o = isopredict(&[
        "check",
        &file,
        "--level",
        "ser",
        "--json",
        "--initial-value",
        "0",
    ]);
    // ser implies si, which the timestamps violate: ser's verdict is si's (one chain of
    // levels), with si's report.
    let verdict: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(verdict["verdict"], "violated");
    assert_eq!(verdict["implied_by"], "snapshot");
    assert_eq!(verdict["evidence"], "timestamps");
    let report: TimestampReport = serde_json::from_value(verdict["report"].clone()).unwrap();
    assert_eq!(report.level, "si");
    assert_eq!(report.counts.no_conflict, 1);
    // --black-box does not use the timestamps.
    let o = isopredict(&["check", &file, "--level", "si", "--black-box"]);
    assert!(!stdout(&o).contains("timestamp checker"));
    // Other levels read TimeKiller input as a history.
    let o = isopredict(&["check", &file, "--level", "rc", "--initial-value", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn native_json_with_timestamps_is_checked_by_timestamps() {
    let dir = Scratch::new("check-json");
    let (h, _) = generated(300, 7);
    let history = timekiller::to_history(&h).unwrap();
    formats::write_file(&history, &dir.join("h.json"), Format::Json).unwrap();
    let expected = check_timestamps(&h, TsLevel::Snapshot, &TsCheckOptions::default());
    let o = isopredict(&["check", &dir.arg("h.json"), "--level", "si", "--json"]);
    let report: TimestampReport = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report.counts, expected.counts);
    assert!(!report.consistent);
    assert!(stdout(&o).contains("\"evidence\": \"timestamps\""));
}

#[test]
fn watch_over_stdin_with_malformed_lines() {
    let (h, bytes) = generated(2000, 3);
    let offline = check_timestamps(&h, TsLevel::Snapshot, &TsCheckOptions::default());
    assert!(offline.counts.ext >= 3, "{offline}");
    let mut input = bytes.clone();
    input.extend_from_slice(b"this is not json\n{\"tid\": 1}\n\n");
    let o = isopredict_with_stdin(
        &["watch", "--level", "si", "--initial-value", "0", "--json"],
        &input,
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    assert!(
        err.contains(&format!("<stdin>:{}: malformed line skipped", lines + 1)),
        "{err}"
    );
    assert!(err.contains("missing field"), "{err}");
    let out = stdout(&o);
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(summary["summary"]["malformed"], 2);
    assert_eq!(summary["summary"]["stats"]["transactions"], 2000);
    assert_eq!(
        summary["summary"]["counts"]["ext"], offline.counts.ext,
        "{out}"
    );
    assert_eq!(out.lines().count() as u64, offline.counts.total() + 1);
}

#[test]
fn watch_over_a_loopback_socket() {
    let (h, bytes) = generated(1500, 11);
    let offline = check_timestamps(&h, TsLevel::Snapshot, &TsCheckOptions::default());
    let mut child = Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args([
            "watch",
            "--level",
            "si",
            "--listen",
            "127.0.0.1:0",
            "--connections",
            "2",
            "--timeout",
            "0.2",
            "--initial-value",
            "0",
            "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("listening on ")
        .expect(&first)
        .to_string();
    // Sessions 0-3 on one connection, the others on a second one (session order kept).
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (i, line) in lines.iter().enumerate() {
        let target = match h.txns.get(i.wrapping_sub(1)) {
            Some(t) if t.session >= 4 => &mut b,
            _ => &mut a,
        };
        target.extend_from_slice(line);
        target.push(b'\n');
    }
    b.extend_from_slice(b"{broken\n");
    let send = |data: Vec<u8>, addr: String| {
        std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(&data).unwrap();
        })
    };
    let (ta, tb) = (send(a, addr.clone()), send(b, addr));
    ta.join().unwrap();
    tb.join().unwrap();
    // Bounded: the watcher stops after two connections; give up after a minute.
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "watch did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(rest.contains("connection"), "{rest}");
    assert!(rest.contains("malformed line skipped"), "{rest}");
    let out = stdout(&o);
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let summary = &summary["summary"];
    assert_eq!(summary["stats"]["transactions"], 1500, "{out}\n{rest}");
    assert_eq!(summary["malformed"], 1);
    assert!(summary["throughput"].as_f64().unwrap() > 0.0);
    // Two connections interleave arbitrarily; SESSION and NOCONFLICT do not depend on the
    // arrival order (EXT verdicts of writers later than the timeout could).
    assert_eq!(summary["counts"]["session"], offline.counts.session);
    assert_eq!(summary["counts"]["no_conflict"], offline.counts.no_conflict);
    assert_eq!(
        o.status.code(),
        Some(if offline.consistent { 0 } else { 1 })
    );
}

#[test]
fn watch_refuses_non_loopback_addresses() {
    let o = isopredict(&["watch", "--level", "ser", "--listen", "0.0.0.0:0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("only loopback"), "{}", stderr(&o));
}

/// Issue 35 item 30: one verdict per (history, level, evidence), whatever is asked. On
/// TimeKiller input the single levels, `--level all` and the level chain agree: a list key
/// appended 1 twice and read back as [1,1] (was: ser and si consistent, pc and cc violated,
/// and `all` "ser VIOLATED: ThinAirRead (implied by cc) [timestamps]"); a negative value
/// (was: si consistent, `all` bad input). A level implied by another carries that level's
/// evidence.
#[test]
fn issue35_item30_one_verdict_per_level_on_timestamped_input() {
    let s = Scratch::new("i35-30");
    let histories = [
        (
            "twice.jsonl",
            "{\"tid\":1,\"sid\":1,\"sts\":{\"p\":1,\"l\":0},\"cts\":{\"p\":2,\"l\":0},\"ops\":[{\"t\":\"a\",\"k\":\"x\",\"v\":1}]}\n\
             {\"tid\":2,\"sid\":2,\"sts\":{\"p\":3,\"l\":0},\"cts\":{\"p\":4,\"l\":0},\"ops\":[{\"t\":\"a\",\"k\":\"x\",\"v\":1}]}\n\
             {\"tid\":3,\"sid\":3,\"sts\":{\"p\":5,\"l\":0},\"cts\":{\"p\":6,\"l\":0},\"ops\":[{\"t\":\"r\",\"k\":\"x\",\"v\":[1,1]}]}\n",
        ),
        (
            "negative.jsonl",
            "{\"tid\":1,\"sid\":1,\"sts\":{\"p\":1,\"l\":0},\"cts\":{\"p\":2,\"l\":0},\"ops\":[{\"t\":\"w\",\"k\":\"x\",\"v\":-5}]}\n\
             {\"tid\":2,\"sid\":2,\"sts\":{\"p\":3,\"l\":0},\"cts\":{\"p\":4,\"l\":0},\"ops\":[{\"t\":\"r\",\"k\":\"x\",\"v\":-5}]}\n",
        ),
    ];
    for (name, text) in histories {
        std::fs::write(s.join(name), text).unwrap();
        let file = s.arg(name);
        let mut codes = Vec::new();
        for level in ["ser", "si", "pc", "cc", "ra", "rc", "ci"] {
            let o = isopredict(&["check", "--level", level, &file]);
            codes.push((level, o.status.code()));
            assert_eq!(
                o.status.code(),
                Some(0),
                "{name} --level {level}: {}{}",
                stdout(&o),
                stderr(&o)
            );
        }
        let o = isopredict(&["check", "--level", "all", &file]);
        let text = stdout(&o);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name} --level all: {text}{}",
            stderr(&o)
        );
        for line in text.lines().filter(|l| l.contains("(implied by si)")) {
            assert!(line.ends_with("[timestamps]"), "{name}: {line}");
        }
        assert!(!text.contains("VIOLATED"), "{name}: {text}");
    }
}

/// Issue 35 item 13: TimeKiller input whose reads show the initial value was not `null`
/// (most keys read 0, which nothing writes) cannot be judged without `--initial-value`:
/// `check` refuses it (exit 2) with the hint as the error, at one level, at all levels and
/// in a batch; `--initial-value null` judges it as written, `--initial-value 0` as meant.
#[test]
fn timekiller_input_whose_initial_value_is_unknown_is_refused() {
    const KV: &str = r#"[
{"tid": 1, "sid": 0, "sts": {"p": 1}, "cts": {"p": 2}, "ops": [{"t": "r", "k": 1, "v": 0}, {"t": "w", "k": 1, "v": 5}]},
{"tid": 2, "sid": 1, "sts": {"p": 3}, "cts": {"p": 4}, "ops": [{"t": "r", "k": 2, "v": 0}, {"t": "r", "k": 1, "v": 5}]},
{"tid": 3, "sid": 1, "sts": {"p": 5}, "cts": {"p": 6}, "ops": [{"t": "r", "k": 3, "v": 0}, {"t": "w", "k": 3, "v": 1}]}
]
"#;
    let dir = Scratch::new("check-initial-hint");
    std::fs::write(dir.join("kv.json"), KV).unwrap();
    let file = dir.arg("kv.json");
    for level in ["si", "rc", "all"] {
        let o = isopredict(&["check", &file, "--level", level]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{level}: {}{err}", stdout(&o));
        assert!(
            err.contains("error") && err.contains("--initial-value 0"),
            "{level}: {err}"
        );
        assert!(!stdout(&o).contains("VIOLATED"), "{level}: {}", stdout(&o));
    }
    // Given explicitly, `null` is judged as written: the reads of 0 have no writer.
    let o = isopredict(&["check", &file, "--level", "rc", "--initial-value", "null"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("ThinAirRead"), "{}", stdout(&o));
    let o = isopredict(&["check", &file, "--level", "all", "--initial-value", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    // A batch refuses it too, and judges it with the value given.
    let o = isopredict(&["check", &dir.arg("."), "--level", "si"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let o = isopredict(&[
        "check",
        &dir.arg("."),
        "--level",
        "si",
        "--initial-value",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}
