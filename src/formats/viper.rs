//! Viper's logs (Zhang et al., EuroSys'23): a directory of `J*.log` files in JSON lines, one
//! transaction per line:
//!
//! ```json
//! {"isInitial": true, "value": [["w", 1, 0, true], ["w", 2, 0, true]]}
//! {"value": [["r", 1, 0, true], ["w", 1, 5, true]]}
//! ```
//!
//! - Each operation is `[kind, key, value, ok]`: kind `"w"` or `"r"`, key a string or an
//!   unsigned integer, value an unsigned integer (values are unique per key; a read names
//!   its writer by the value). Operations whose `ok` is `false` are dropped.
//! - A line with `"isInitial": true` holds initial writes: they go to the initial
//!   transaction. Other fields of a line are ignored.
//! - Each file is one session, files in name order; only `J*.log` files are read.
//!
//! Writing emits `J0.log`, `J1.log`, … (one per session; the initial writes that are read or
//! explicit as an `isInitial` line at the top of `J0.log`), committed transactions only.

use std::io::Write as _;
use std::path::Path;

use serde::Deserialize;

use super::common::{self, InitialValues};
use super::text::{json_error, utf8, JsonKey, Lines};
use super::{Format, FormatError};
use crate::error::InputError;
use crate::history::{BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, INITIAL_TXN};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    value: Vec<(&'a str, JsonKey<'a>, u64, bool)>,
    #[serde(default, rename = "isInitial")]
    is_initial: bool,
}

/// Whether a file's first byte opens a JSON object.
pub(crate) fn looks_like_file(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 64];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let n = f.read(&mut buf).unwrap_or(0);
    buf[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

/// Reads Viper logs given as `(file name, contents)`, one session each.
pub fn read_files(files: &[(String, &[u8])], source: &str) -> Result<History, InputError> {
    let mut b = HistoryBuilder::new(source);
    let mut name = String::new();
    let mut lines_of: Vec<(usize, u32)> = Vec::new(); // builder "line" → (file, line)
    for (f, (file, bytes)) in files.iter().enumerate() {
        let text = utf8(bytes, file)?;
        // A file's session is created by its first non-initial line.
        let mut session = None;
        for (line_no, line) in Lines::new(text.as_bytes()) {
            let line = super::text::trim(line);
            if line.is_empty() {
                continue;
            }
            // Lines are valid UTF-8 (checked above) and split at ASCII bytes.
            let line = std::str::from_utf8(line).unwrap_or_default();
            let parsed: Line =
                serde_json::from_str(line).map_err(|e| json_error(file, line_no, &e))?;
            lines_of.push((f, line_no));
            let tag = lines_of.len() as u32;
            let t = if parsed.is_initial {
                BuilderTxn::INITIAL
            } else {
                let s = *session.get_or_insert_with(|| b.session(None));
                b.begin_at(s, None, tag)
            };
            for (kind, key, value, ok) in parsed.value {
                if !ok {
                    continue;
                }
                let key = b.key(key.name(&mut name));
                match kind {
                    "w" | "W" => b.write(t, key, Some(value), tag),
                    "r" | "R" if !parsed.is_initial => {
                        b.read(t, key, Some(value), ReadFrom::Value(value), tag)
                    }
                    _ => {
                        return Err(InputError::new(
                            file.clone(),
                            line_no,
                            format!(
                                "an operation kind is \"w\" or \"r\" (initial lines only \
                                 write), found {kind:?}"
                            ),
                        ))
                    }
                }
            }
        }
    }
    b.build().map_err(|e| match e.line() {
        0 => e,
        l => {
            let (f, line) = lines_of.get(l as usize - 1).copied().unwrap_or((0, 0));
            let file = files.get(f).map_or(source, |x| x.0.as_str());
            InputError::new(file, line, e.message)
        }
    })
}

/// Reads a directory of Viper logs (its `J*.log` files).
pub fn read_dir(dir: &Path) -> Result<History, InputError> {
    let contents = super::cobra::read_log_files(dir, |n| n.starts_with('J'))?;
    let files: Vec<(String, &[u8])> = contents.iter().map(|(n, b)| (n.clone(), &b[..])).collect();
    read_files(&files, &dir.display().to_string())
}

/// The files of a Viper log directory for `h`: `(name, contents)`.
pub fn write_files(h: &History) -> Result<Vec<(String, Vec<u8>)>, FormatError> {
    let unrepresentable = |problem| FormatError::Unrepresentable {
        format: Format::Viper,
        problem,
    };
    if let Some((read, writer)) = common::committed_read_of_aborted(h) {
        return Err(unrepresentable(format!(
            "{} reads key {} from the aborted {}, and viper has no aborted transactions",
            h.txn_label(h.op(read).txn),
            h.key_name(h.op(read).key),
            h.txn_label(writer)
        )));
    }
    let plan = common::plan_values(h, InitialValues::Unique).map_err(unrepresentable)?;
    let keys = super::dbcop::json_keys(h);
    let op_json = |out: &mut Vec<u8>, o: u32, first: bool| {
        let op = h.op(o);
        let kind = if op.kind == OpKind::Write { "w" } else { "r" };
        let _ = write!(
            out,
            "{}[\"{kind}\", {}, {}, true]",
            if first { "" } else { ", " },
            keys[op.key as usize],
            plan.values[o as usize]
        );
    };
    let mut files = Vec::new();
    let sessions = h.sessions().len().max(1);
    for i in 0..sessions {
        let mut out = Vec::new();
        if i == 0 {
            let t0: Vec<u32> = h
                .txn(INITIAL_TXN)
                .ops()
                .filter(|&o| h.op(o).kind == OpKind::Write)
                .collect();
            if !t0.is_empty() {
                out.extend_from_slice(b"{\"isInitial\": true, \"value\": [");
                for (k, &o) in t0.iter().enumerate() {
                    op_json(&mut out, o, k == 0);
                }
                out.extend_from_slice(b"]}\n");
            }
        }
        let txns = h.sessions().get(i).map_or(0..0, |s| s.txns());
        for t in txns.filter(|&t| h.txn(t).is_committed()) {
            out.extend_from_slice(b"{\"value\": [");
            for (k, o) in h.txn(t).ops().enumerate() {
                op_json(&mut out, o, k == 0);
            }
            out.extend_from_slice(b"]}\n");
        }
        files.push((format!("J{i}.log"), out));
    }
    Ok(files)
}

/// What writing `h` as Viper logs drops (see [`super::conversion_notes`]).
pub(crate) fn notes(h: &History) -> Vec<String> {
    let mut notes = Vec::new();
    if let Ok(plan) = common::plan_values(h, InitialValues::Unique) {
        notes.extend(common::values_note(h, plan.synthesized, "viper"));
    }
    let aborted = common::aborted_with_ops(h);
    if aborted > 0 {
        notes.push(format!(
            "viper has no aborted transactions; {aborted} are dropped"
        ));
    }
    if h.has_timestamps() {
        notes.push("viper cannot carry timestamps; they are dropped".into());
    }
    notes.extend(common::unused_keys_note(h, "viper"));
    let empty = h
        .sessions()
        .iter()
        .filter(|s| !s.txns().any(|t| h.txn(t).is_committed()))
        .count();
    if empty > 0 {
        notes.push(format!(
            "{empty} session(s) without committed transactions cannot be written in viper"
        ));
    }
    if h.sessions().iter().any(|s| s.external_id.is_some())
        || (1..h.txn_count() as u32).any(|t| h.txn(t).external_id.is_some())
    {
        notes.push("viper has no session or transaction ids; they are dropped".into());
    }
    notes.extend(common::initial_reads_note(h, "viper"));
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    const J0: &str =
        "{\"isInitial\": true, \"value\": [[\"w\", 1, 0, true], [\"w\", 2, 0, true]]}\n\
                      {\"value\": [[\"r\", 1, 0, true], [\"w\", 1, 5, true]]}\n";
    const J1: &str = "{\"value\": [[\"r\", 1, 5, true], [\"r\", 2, 7, false]]}\n";

    #[test]
    fn reads_two_files_and_writes_back() {
        let files = [
            ("J0.log".to_string(), J0.as_bytes()),
            ("J1.log".to_string(), J1.as_bytes()),
        ];
        let h = read_files(&files, "dir").unwrap();
        let s = h.stats();
        assert_eq!((s.sessions, s.committed, s.reads, s.writes), (2, 2, 2, 1));
        assert_eq!(h.writer_txn(h.txn(1).ops().start), Some(INITIAL_TXN));
        assert_eq!(h.writer_txn(h.txn(2).ops().start), Some(1));
        let out = write_files(&h).unwrap();
        let back: Vec<(String, &[u8])> = out.iter().map(|(n, b)| (n.clone(), &b[..])).collect();
        let g = read_files(&back, "w").unwrap();
        h.same_content(&g).unwrap();
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let bad = J1.replace("\"r\", 1, 5", "\"r\", 1, 5, 6");
        let files = [
            ("J0.log".to_string(), J0.as_bytes()),
            ("J1.log".to_string(), bad.as_bytes()),
        ];
        let e = read_files(&files, "dir").unwrap_err();
        assert!(e.to_string().starts_with("J1.log:1: invalid JSON"), "{e}");
        let dup = J1.replace("\"r\", 1, 5", "\"w\", 1, 5");
        let files = [
            ("J0.log".to_string(), J0.as_bytes()),
            ("J1.log".to_string(), dup.as_bytes()),
        ];
        let e = read_files(&files, "dir").unwrap_err();
        assert!(
            e.to_string().starts_with("J1.log:1: duplicate write"),
            "{e}"
        );
    }
}
