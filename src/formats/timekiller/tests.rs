use super::*;
use crate::formats::{detect, read_bytes, write_to};
use crate::history::timestamped::TsValue;

const KV: &str = r#"[
  {"tid": 1, "sid": 7, "sts": {"p": 10, "l": 0}, "cts": {"p": 11, "l": 0}, "rtts": 5,
   "ops": [{"t": "w", "k": 1, "v": 100}, {"t": "r", "k": 2, "v": null}]},
  {"tid": "two", "sid": 7, "sts": {"p": "12", "l": 3}, "cts": {"p": 13}, "ops": [
     {"t": "read", "k": 1, "v": 100}, {"t": "write", "k": "y", "v": -5}]}
]"#;

#[test]
fn reads_kv_with_hlc_string_p_and_nulls() {
    let h = read_timestamped(KV.as_bytes(), "kv.json", None).unwrap();
    assert_eq!(h.txns.len(), 2);
    assert_eq!(h.session_names, vec!["7"]);
    assert_eq!(h.txns[0].tid, Name::Num(1));
    assert_eq!(h.txns[1].tid, Name::Str("two".into()));
    assert_eq!(h.txns[1].start, Hlc::new(12, 3));
    assert_eq!(h.txns[1].commit, Hlc::new(13, 0));
    assert_eq!((h.txns[0].line, h.txns[1].line), (2, 4));
    let ops = h.txn_ops(0);
    assert_eq!(ops[0].kind, TsOpKind::Write);
    assert_eq!(h.value(&ops[0]), TsValue::Int(100));
    assert_eq!(h.value(&ops[1]), TsValue::Null);
    assert_eq!(h.value(&h.txn_ops(1)[1]), TsValue::Int(-5));
    assert_eq!(h.key_names, vec!["1", "2", "y"]);
    // The History view refuses the negative value and names the line.
    let e = read(KV.as_bytes(), "kv.json").unwrap_err();
    assert_eq!(e.line(), 4, "{e}");
}

#[test]
fn reads_lists_and_json_lines() {
    let text = "{\"tid\": 1, \"sid\": 0, \"sts\": {\"p\": 1, \"l\": 0}, \"cts\": {\"p\": 2, \"l\": 0}, \"ops\": [{\"t\": \"a\", \"k\": 3, \"v\": 1}]}\n\
                {\"tid\": 2, \"sid\": 1, \"sts\": {\"p\": 3, \"l\": 0}, \"cts\": {\"p\": 4, \"l\": 0}, \"ops\": [{\"t\": \"r\", \"k\": 3, \"v\": [1]}, {\"t\": \"r\", \"k\": 3, \"v\": null}]}\n";
    assert_eq!(detect(text), Some(Format::TimeKiller));
    let h = read_timestamped(text.as_bytes(), "l.jsonl", None).unwrap();
    assert_eq!(h.txn_ops(1)[0].kind, TsOpKind::ReadList);
    assert_eq!(h.value(&h.txn_ops(1)[0]), TsValue::List(&[1]));
    // A null read of a list key is the empty list.
    assert_eq!(h.value(&h.txn_ops(1)[1]), TsValue::List(&[]));
    assert_eq!(h.txns[1].line, 2);
    // The History view: the append is a write, the list read a read of its last element.
    let hist = read_bytes(text.as_bytes(), "l.jsonl", None).unwrap();
    assert!(hist.has_timestamps());
    let reader_first = hist.txn_ops(2)[0];
    assert_eq!(reader_first.value, Some(1));
}

#[test]
fn detection() {
    assert_eq!(detect(KV), Some(Format::TimeKiller));
    assert_eq!(
        detect("[{\"sts\":{\"p\":1},\"cts\":{\"p\":1},\"ops\":[],\"tid\":1,\"sid\":1}]"),
        Some(Format::TimeKiller)
    );
    assert_eq!(
        detect("{\"format\": \"isopredict-history\"}"),
        Some(Format::Json)
    );
}

#[test]
fn errors_name_the_line() {
    let bad_type = KV.replace("\"write\"", "\"delete\"");
    let e = read_timestamped(bad_type.as_bytes(), "f.json", None).unwrap_err();
    assert_eq!(e.line(), 4, "{e}");
    assert!(
        e.to_string()
            .starts_with("f.json:4: unknown operation type `delete`"),
        "{e}"
    );
    let bad_json = KV.replace("\"v\": 100}, {\"t\": \"r\"", "\"v\": 100} {\"t\": \"r\"");
    let e = read_timestamped(bad_json.as_bytes(), "f.json", None).unwrap_err();
    assert_eq!(e.line(), 3, "{e}");
    let e = read_timestamped(b"[{\"tid\": 1}", "f.json", None).unwrap_err();
    assert!(e.to_string().contains("missing `]`"), "{e}");
    let e = read_timestamped(b"[{\"tid\": 1, \"sid\": 1}]", "f.json", None).unwrap_err();
    assert!(e.to_string().contains("missing field `sts`"), "{e}");
    let mixed = "[{\"tid\":1,\"sid\":1,\"sts\":{\"p\":1},\"cts\":{\"p\":2},\"ops\":[{\"t\":\"w\",\"k\":1,\"v\":1}]},\n\
                 {\"tid\":2,\"sid\":1,\"sts\":{\"p\":3},\"cts\":{\"p\":4},\"ops\":[{\"t\":\"a\",\"k\":1,\"v\":2}]}]";
    let e = read_timestamped(mixed.as_bytes(), "m.json", None).unwrap_err();
    assert_eq!(e.line(), 2, "{e}");
    assert!(e.to_string().contains("first at line 1"), "{e}");
    let e = read_timestamped(b"  ", "e.json", None).unwrap_err();
    assert_eq!(e.line(), 0);
    let e = read_timestamped(
        b"[{\"tid\":1,\"sid\":1,\"sts\":{\"p\":-1},\"cts\":{\"p\":2},\"ops\":[]}]",
        "n",
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("negative timestamp"), "{e}");
}

#[test]
fn round_trip_through_history() {
    let text = KV.replace("-5", "5");
    let h = read_bytes(text.as_bytes(), "kv.json", None).unwrap();
    let mut out = Vec::new();
    write_to(&h, Format::TimeKiller, &mut out).unwrap();
    let back = read_bytes(&out, "back", None).unwrap();
    h.same_content(&back).unwrap();
    assert_eq!(h.timestamps(1), back.timestamps(1));
    // HLCs with logical parts keep their order in the History view.
    let t1 = h.timestamps(1).unwrap();
    let t2 = h.timestamps(2).unwrap();
    assert!(t1.start < t1.commit && t1.commit < t2.start && t2.start < t2.commit);
    // The timestamped reader writes back exactly.
    let th = read_timestamped(text.as_bytes(), "kv.json", None).unwrap();
    let mut out = Vec::new();
    write_timestamped(&th, &mut out).unwrap();
    let again = read_timestamped(&out, "again", None).unwrap();
    let strip = |h: &TimestampedHistory| -> Vec<TsTxn> {
        h.txns
            .iter()
            .map(|t| TsTxn {
                line: 0,
                ..t.clone()
            })
            .collect()
    };
    assert_eq!(strip(&again), strip(&th));
    assert_eq!(again.ops, th.ops);
}

#[test]
fn writing_needs_timestamps() {
    let h = crate::formats::read_str("r(1,0,1,1)\nw(1,5,1,1)\n", "p", None).unwrap();
    let e = write_to(&h, Format::TimeKiller, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("no timestamps"), "{e}");
}

/// TimeKiller's kv examples start every register at 0 (its `--initial_value`): read with the
/// default `null`, the reads of 0 have no writer, and a note names the option.
#[test]
fn reads_of_an_unwritten_value_suggest_the_initial_value() {
    let text = r#"[
  {"tid": 1, "sid": 0, "sts": {"p": 1}, "cts": {"p": 2}, "ops": [{"t": "r", "k": 1, "v": 0}, {"t": "w", "k": 1, "v": 5}]},
  {"tid": 2, "sid": 1, "sts": {"p": 3}, "cts": {"p": 4}, "ops": [{"t": "r", "k": 2, "v": 0}, {"t": "r", "k": 1, "v": 5}]},
  {"tid": 3, "sid": 1, "sts": {"p": 5}, "cts": {"p": 6}, "ops": [{"t": "r", "k": 3, "v": 0}, {"t": "w", "k": 3, "v": 1}]}
]"#;
    let h = read(text.as_bytes(), "kv.json").unwrap();
    let notes = h.input_notes().join("\n");
    assert!(
        notes.contains("3 read(s) of 0, a value no transaction writes, on 3 of the 3 key(s)")
            && notes.contains("--initial-value 0"),
        "{notes}"
    );
    // With the initial value given, no note and every read resolves.
    let h = read_with_initial(text.as_bytes(), "kv.json", Some(0)).unwrap();
    assert!(h.input_notes().is_empty() && h.unresolved().is_empty());
    // One stray unwritten value on one key of three is no pattern.
    let stray = text
        .replace(r#""k": 2, "v": 0"#, r#""k": 2, "v": 9"#)
        .replace(r#""k": 3, "v": 0"#, r#""k": 3, "v": 1"#);
    assert!(read(stray.as_bytes(), "kv.json")
        .unwrap()
        .input_notes()
        .is_empty());
}
