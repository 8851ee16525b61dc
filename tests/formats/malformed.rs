//! Bad input: errors name the file and the right line, and no input makes a reader panic
//! (random bytes and mutated valid files, proptest).

use isopredict::formats::{self, Format};
use proptest::prelude::*;

/// (format, text, line, part of the message)
const BAD: &[(Format, &str, u32, &str)] = &[
    // Plume
    (Format::Plume, "# comment\n\nw(1,1,1,1)\nr(1,1,2,2)\nr(1;1,2,2)\n", 5, "expected `,`"),
    (Format::Plume, "w(1,1,1,1)\nw(2,1,1,1)\nr(3,1,2,1)\n", 3, "in session 2 here but in session 1 at line 1"),
    (Format::Plume, "w(1,1,1,1)\n\n\nw(1,1,2,2)\n", 4, "duplicate write of value 1 to key 1 (first written at line 1)"),
    (Format::Plume, "r(1,1,1,1)\nw(1,1,1,-3)\n", 2, "-3"),
    (Format::Plume, "r(1,1,1,1)\nr(1,1,1,1)extra\n", 2, "unexpected `extra`"),
    // IsoPredict
    (Format::IsoPredict, "WRITE KEY[x] Txn(0, 0)\nREAD KEY[x] Txn(1, 0) From(0, 0)\nREAD KEY[x] Txn(1, 0) From(0 0)\n", 3, "expected `,`"),
    (Format::IsoPredict, "WRITE KEY[x] Txn(1, 0)\nCONTAINS[1] in Set[2] Txn(1, 0)\n", 2, "expected `From(`"),
    (Format::IsoPredict, "WRITE KEY[x] Txn(1, 0)\n\nREAD KEY[x] Txn(0, 0) From(1, 0)\n", 3, "cannot read"),
    (Format::IsoPredict, "WRITE KEY[x] Txn(1, 0)\nWRITE KEY[x] Txn(0, 1)\n", 2, "session 0 is the initial state"),
    (Format::IsoPredict, "WRITE KEY[x] Txn(1, 0)\nREAD KEY[x] Txn(1, 99999999999999999999) From(1, 0)\n", 2, "64 bits"),
    // AWDIT
    (Format::Awdit, "w 1 1\n-----\nr 1 1\n=====\nr 1\n", 5, "expected a value"),
    (Format::Awdit, "w 1 1\n--=--\n", 2, "expected `r KEY VALUE`"),
    (Format::Awdit, "w 1 1\n=====\nw 1 2\n-----\nw 1 1\n", 5, "duplicate write"),
    // JSON
    (Format::Json, "{\"format\": \"isopredict-history\", \"version\": 1,\n \"keys\": [\"x\"],\n \"sessions\": [{\"transactions\": [{\"ops\": [\n  {\"w\": \"x\"},\n  {\"r\": \"x\", \"from\": [1, 3]}\n]}]}]}\n", 5, "names operation 3"),
    (Format::Json, "{\"format\": \"isopredict-history\", \"version\": 1,\n \"keys\": [\"x\"],\n \"sessions\": [{\"transactions\": [{\"ops\": [\n  {\"w\": \"y\"}\n]}]}]}\n", 4, "not listed in \"keys\""),
    (Format::Json, "{\"format\": \"isopredict-history\", \"version\": 1,\n \"keys\": [\"x\"],\n \"sessions\": [{\"transactions\": [{\"ops\": [\n  {\"r\": \"x\"}\n]}]}]}\n", 4, "exactly one of \"from\" and \"unresolved\""),
    (Format::Json, "{\"format\": \"isopredict-history\", \"version\": 1,\n \"keys\": [\"x\"],\n \"sessions\": [{\"transactions\": [{\"ops\": [\n  {\"w\": \"x\", \"v\": 1}\n]}, {\"ops\": [\n  {\"w\": \"x\", \"v\": 1}]}]}]}\n", 6, "duplicate write"),
    (Format::Json, "{\"format\": \"elle\", \"version\": 1}", 0, "\"format\" is \"elle\""),
    (Format::Json, "{\"format\": \"isopredict-history\",\n\"version\": 1,\n\"keys\": [\"x\",]}", 3, "invalid JSON"),
    // dbcop, dbcop-text, elle, elle-json, viper
    (Format::Dbcop, "[[{\"events\": [{\"Write\": {\"variable\": 0, \"version\": 1}}], \"committed\": true}],\n [{\"events\": [{\"Write\": {\"variable\": 0, \"version\": 1}}], \"committed\": true}]]", 2, "duplicate write"),
    (Format::Dbcop, "{\"data\": [[{\"events\": [],\n \"committed\": 1}]]}", 2, "invalid JSON"),
    (Format::DbcopText, "[x:=1]\n---\n[x=1]\n", 3, "expected `NAME:=VALUE`"),
    (Format::Elle, "{:type :invoke, :f :txn, :value [[:w 1 1]], :process 0}\n{:type :ok, :f :txn, :value [[:w 1 1]], :process 0}\n{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0}\n{:type :ok, :f :txn, :value [[:x 1 1]], :process 0}\n", 4, "micro-operation's f"),
    (Format::Elle, "{:type :invoke, :f :txn, :value [], :process 0}\n\n{:type :ok, :f :txn, :value [] :process}\n", 3, "odd number"),
    (Format::ElleJson, "{\"type\": \"invoke\", \"f\": \"txn\", \"value\": [], \"process\": 0}\n{\"type\": \"ok\", \"f\": \"txn\", \"value\": [[\"r\", \"x\", -1]], \"process\": 0}", 2, "unsigned integer"),
    (Format::Viper, "{\"value\": [[\"w\", 1, 1, true]]}\n{\"value\": [[\"w\", 1, 1, true]]}", 2, "duplicate write"),
];

#[test]
fn malformed_inputs_name_file_and_line() {
    for &(format, text, line, message) in BAD {
        for given in [Some(format), None] {
            let e = formats::read_str(text, "bad.txt", given).unwrap_err();
            assert_eq!(e.line(), line, "{format} {text:?}: {e}");
            let shown = e.to_string();
            let prefix = if line == 0 {
                "bad.txt: ".to_string()
            } else {
                format!("bad.txt:{line}: ")
            };
            assert!(shown.starts_with(&prefix), "{shown}");
            assert!(shown.contains(message), "{format}: {shown}");
        }
    }
}

#[test]
fn missing_file_is_an_error_at_line_zero() {
    let e = formats::read_file(std::path::Path::new("/nonexistent/h.txt"), None).unwrap_err();
    assert_eq!(e.line(), 0);
    assert!(e.to_string().starts_with("/nonexistent/h.txt: "), "{e}");
}

const SAMPLES: &[&str] = &[
    "w(1,0,0,0)\nw(1,5,3,10)\nr(2,0,3,10)\nw(2,8,3,-1)\nr(1,5,4,11)\nr(2,8,4,11)\n",
    "WRITE KEY[x] Txn(0, 0)\nINSERT[5] to Set[7] Txn(0, 0)\nWRITE KEY[x] Txn(9, 0)\nREAD KEY[x] Txn(9, 0) From(9, 0)\nREAD KEY[y] Txn(8, 0) From(0, 0)\nCONTAINS[5] in Set[7] From(0, 0) Txn(8, 0)\nREAD KEY[x] Txn(8, 0) From(9, 0)\nDELETE[5] from Set[7] Txn(9, 1)\n",
    "w 0 0\nw 1 0\n=====\nw 0 1\n-----\nr 0 1\nr 1 0\n=====\nw 1 1\n-----\nr 1 1\nr 0 5\n",
    r#"{
  "format": "isopredict-history",
  "version": 1,
  "initial_value": 0,
  "keys": ["x", "y"],
  "initial": {"t": 0, "ops": [
    {"w": "x", "v": 0}
  ]},
  "sessions": [
    {"id": 7, "transactions": [
      {"t": 1, "id": 100, "status": "committed", "timestamps": {"start": 1, "commit": 2}, "ops": [
        {"w": "x", "v": 1},
        {"r": "y", "from": "initial"},
        {"r": "x", "v": 1, "from": [1, 0]},
        {"r": "x", "v": 9, "unresolved": "no-such-write"}
      ]}
    ]}
  ]
}
"#,
    include_str!("../data/formats/dbcop.json"),
    include_str!("../data/formats/dbcop.txt"),
    include_str!("../data/formats/elle.edn"),
    include_str!("../data/formats/elle-append.edn"),
    include_str!("../data/formats/elle.json"),
    include_str!("../data/formats/viper/J0.log"),
];

const ALPHABET: &[u8] = b"0123456789-=(),[]{}:\"\n #rwRWKEYTxnFromSetto-1\\\xff";

/// Reads `bytes` with every reader and with detection; errors must be well-formed.
fn read_all_ways(bytes: &[u8]) {
    let lines = bytes.split(|&b| b == b'\n').count() as u32;
    for format in Format::ALL.map(Some).into_iter().chain([None]) {
        if let Err(e) = formats::read_bytes(bytes, "fuzz", format) {
            assert!(e.line() <= lines, "line {} of {lines}: {e}", e.line());
            assert!(!e.message.is_empty());
        }
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize),
    Insert(usize, u8),
    Replace(usize, u8),
    DuplicateLine(usize),
    SwapLines(usize, usize),
}

fn apply(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for edit in edits {
        let n = bytes.len().max(1);
        match *edit {
            Edit::Delete(i) if !bytes.is_empty() => {
                bytes.remove(i % n);
            }
            Edit::Delete(_) => {}
            Edit::Insert(i, c) => bytes.insert(i % (bytes.len() + 1), c),
            Edit::Replace(i, c) if !bytes.is_empty() => bytes[i % n] = c,
            Edit::Replace(..) => {}
            Edit::DuplicateLine(i) | Edit::SwapLines(i, _) => {
                let mut lines: Vec<Vec<u8>> =
                    bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                let a = i % lines.len();
                match *edit {
                    Edit::DuplicateLine(_) => {
                        let line = lines[a].clone();
                        lines.insert(a, line);
                    }
                    Edit::SwapLines(_, j) => {
                        let b = j % lines.len();
                        lines.swap(a, b);
                    }
                    _ => unreachable!(),
                }
                bytes = lines.join(&b'\n');
            }
        }
    }
    bytes
}

fn edit() -> impl Strategy<Value = Edit> {
    let c = prop::sample::select(ALPHABET);
    prop_oneof![
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), c.clone()).prop_map(|(i, c)| Edit::Insert(i, c)),
        (any::<usize>(), c).prop_map(|(i, c)| Edit::Replace(i, c)),
        any::<usize>().prop_map(Edit::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Edit::SwapLines(i, j)),
    ]
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        read_all_ways(&bytes);
    }

    #[test]
    fn random_alphabet_text_never_panics(
        bytes in prop::collection::vec(prop::sample::select(ALPHABET), 0..200)
    ) {
        read_all_ways(&bytes);
    }

    #[test]
    fn mutated_valid_files_never_panic(
        sample in 0..SAMPLES.len(),
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        read_all_ways(&apply(SAMPLES[sample], &edits));
    }
}

#[test]
fn samples_are_valid() {
    for s in SAMPLES {
        formats::read_str(s, "sample", None).unwrap();
    }
}

/// Issue 35 item 29: an EDN integer beyond 64 bits is reported as that integer (was: "found
/// Float(1.8446744073709552e19)", a value the input does not hold), and a JSON-lines field of
/// the wrong type is reported as such (was: `"key":[1]` "missing").
#[test]
fn issue35_item29_errors_say_what_the_input_holds() {
    let cases: &[(Format, &str, u32, &str, &str)] = &[
        (
            Format::Elle,
            "{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :ok, :f :txn, :value [[:append 1 18446744073709551616]], :process 0}\n",
            2,
            "18446744073709551616, beyond the 64-bit range",
            "Float",
        ),
        (
            Format::Elle,
            "{:type :ok, :f :txn, :value [[:append -99999999999999999999N 1]], :process 0}\n",
            1,
            "-99999999999999999999, beyond the 64-bit range",
            "Float",
        ),
        (
            Format::ElleJson,
            "{\"type\": \"ok\", \"f\": \"txn\", \"value\": [[\"append\", 1, 18446744073709551615]], \"process\": 0}\n",
            1,
            "18446744073709551615, beyond the 64-bit range",
            "Float",
        ),
        (
            Format::Events,
            "{\"event\":\"begin\",\"session\":1,\"txn\":\"t1\"}\n{\"event\":\"write\",\"session\":1,\"txn\":\"t1\",\"key\":[1],\"value\":5}\n",
            2,
            "\"key\" is [1], not a string or a number",
            "missing",
        ),
        (
            Format::Events,
            "{\"event\":\"begin\",\"session\":{\"a\":1},\"txn\":\"t1\"}\n",
            1,
            "\"session\" is {\"a\":1}, not a number or a string",
            "missing",
        ),
    ];
    for &(format, text, line, says, not) in cases {
        let e = formats::read_str(text, "bad.txt", Some(format)).unwrap_err();
        let shown = e.to_string();
        assert_eq!(e.line(), line, "{shown}");
        assert!(shown.contains(says), "{format}: {shown}");
        assert!(!shown.contains(not), "{format}: {shown}");
    }
}
