//! The JSON-lines event format end to end: detected by every command, converted both ways,
//! errors naming the line, and the Python emitter of examples/emit_events.py.

use crate::common;

use std::process::{Command, Stdio};

use common::cli::{isopredict, stderr, stdout, Scratch};
use isopredict::formats::{self, Format};

/// A lost update: a1 and b1 both read acct1's initial value and write it; b2 aborts (the
/// history examples/emit_events.py emits).
const LOST_UPDATE: &str = r#"{"event":"begin","session":"a","txn":"a1"}
{"event":"begin","session":"b","txn":"b1"}
{"event":"read","session":"a","txn":"a1","key":"acct1","value":100,"writer":"initial"}
{"event":"read","session":"b","txn":"b1","key":"acct1","value":100,"writer":"initial"}
{"event":"write","session":"a","txn":"a1","key":"acct1","value":110}
{"event":"commit","session":"a","txn":"a1"}
{"event":"write","session":"b","txn":"b1","key":"acct1","value":120}
{"event":"commit","session":"b","txn":"b1"}
{"event":"begin","session":"a","txn":"a2"}
{"event":"read","session":"a","txn":"a2","key":"acct1","value":120,"writer":"b1"}
{"event":"commit","session":"a","txn":"a2"}
{"event":"begin","session":"b","txn":"b2"}
{"event":"read","session":"b","txn":"b2","key":"acct1","value":120}
{"event":"write","session":"b","txn":"b2","key":"acct1","value":-380}
{"event":"abort","session":"b","txn":"b2"}
"#;

#[test]
fn an_event_log_is_detected_checked_and_converted() {
    let dir = Scratch::new("events");
    let path = dir.join("bank.jsonl");
    std::fs::write(&path, LOST_UPDATE).unwrap();
    assert_eq!(formats::detect(LOST_UPDATE), Some(Format::Events));
    let h = formats::read_file(&path, None).unwrap();
    assert_eq!(h.sessions().len(), 2);
    assert_eq!(h.txn_count(), 5);
    assert_eq!(h.committed_txns().count(), 4);
    // b2's read names no writer: matched by its value to b1's write.
    let b2 = h.sessions()[1].txns().nth(1).unwrap();
    let b1 = h.sessions()[1].txns().next().unwrap();
    assert_eq!(h.writer_txn(h.txn(b2).ops().start), Some(b1));

    let o = isopredict(&["check", &dir.arg("bank.jsonl"), "--level", "rc"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("consistent"));
    // A lost update is already unserializable: the predictor finds an execution at once.
    let o = isopredict(&["predict", &dir.arg("bank.jsonl"), "--level", "rc"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    // Converted to JSON lines and back, nothing changes.
    let o = isopredict(&["convert", &dir.arg("bank.jsonl"), &dir.arg("again.json")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = isopredict(&[
        "convert",
        &dir.arg("again.json"),
        &dir.arg("again.out"),
        "--to",
        "jsonl",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let g = formats::read_file(&dir.join("again.out"), None).unwrap();
    h.same_content(&g).unwrap();
}

#[test]
fn a_bad_event_names_its_file_and_line() {
    let dir = Scratch::new("events-bad");
    let text = LOST_UPDATE.replace(r#""txn":"a2"}"#, r#""txn":"a2""#);
    std::fs::write(dir.join("bad.jsonl"), text).unwrap();
    let o = isopredict(&["check", &dir.arg("bad.jsonl"), "--level", "rc"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.jsonl:9"), "{}", stderr(&o));
}

#[test]
fn the_python_emitter_writes_a_history_isopredict_reads() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/emit_events.py");
    let Ok(out) = Command::new("python3")
        .arg(script)
        .stdin(Stdio::null())
        .output()
    else {
        common::postgres::tool_missing("the_python_emitter", "python3 is not installed");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h = formats::read_bytes(&out.stdout, "emit_events.py", None).unwrap();
    let expected = formats::read_str(LOST_UPDATE, "literal", None).unwrap();
    // The same lost update (the script names b2's writer; the literal leaves it to the value).
    h.same_content(&expected).unwrap();
}
