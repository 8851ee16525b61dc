//! The formats of other tools (dbcop, dbcop 2019 bincode, Elle/Jepsen EDN and JSON, Cobra,
//! Viper): one small history written by hand in every format (tests/data/formats, and the
//! binary ones built here byte by byte from the layouts in docs/formats.md) gives the same
//! counts and verdicts in every format, is detected, converts, and is checked as a batch by
//! the CLI; list-append version orders make a G0 visible; binary errors name byte offsets;
//! random and mutated binary input never panics.

use crate::common;

use std::path::{Path, PathBuf};

use isopredict::check::{CheckOptions, Level};
use isopredict::formats::{self, Format};
use isopredict::verdict::engines::check;
use proptest::prelude::*;

use common::cli::{isopredict, stdout, Scratch};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/formats")
        .join(name)
}

/// The fractured read of tests/data/formats in dbcop 2019 bincode: x = 0, y = 1; session 2's
/// second transaction failed (and one event of it failed too).
fn bincode() -> Vec<u8> {
    let mut v = Vec::new();
    let u = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes());
    for x in [1, 3, 2, 4, 8] {
        u(&mut v, x);
    }
    for s in ["by hand", "", ""] {
        u(&mut v, s.len() as u64);
        v.extend_from_slice(s.as_bytes());
    }
    let event = |v: &mut Vec<u8>, write: bool, var: u64, val: u64, ok: bool| {
        v.push(write as u8);
        u(v, var);
        u(v, val);
        v.push(ok as u8);
    };
    u(&mut v, 3);
    for value in [1, 2] {
        u(&mut v, 1);
        u(&mut v, 2);
        event(&mut v, true, 0, value, true);
        event(&mut v, true, 1, value, true);
        v.push(1);
    }
    u(&mut v, 2);
    u(&mut v, 2);
    event(&mut v, false, 0, 1, true);
    event(&mut v, false, 1, 2, true);
    v.push(1);
    u(&mut v, 2);
    event(&mut v, false, 1, 2, true);
    event(&mut v, true, 0, 3, false); // a failed event: dropped
    v.push(0); // a failed transaction: aborted
    v
}

/// The same history as Cobra logs: one file per client; write ids 11, 12 (client 0) and 21,
/// 22 (client 1); keys 100 and 200.
fn cobra() -> Vec<(String, Vec<u8>)> {
    let rec = |v: &mut Vec<u8>, tag: u8, f: &[u64]| {
        v.push(tag);
        for x in f {
            v.extend_from_slice(&x.to_be_bytes());
        }
    };
    let mut files = Vec::new();
    for (client, base) in [(0u64, 10u64), (1, 20)] {
        let mut v = Vec::new();
        rec(&mut v, b'S', &[base]);
        rec(&mut v, b'W', &[base + 1, 100, 7]);
        rec(&mut v, b'W', &[base + 2, 200, 7]);
        rec(&mut v, b'C', &[base]);
        files.push((format!("T{client}.log"), v));
    }
    let mut v = Vec::new();
    rec(&mut v, b'S', &[30]);
    rec(&mut v, b'R', &[10, 11, 100, 7]);
    rec(&mut v, b'R', &[20, 22, 200, 7]);
    rec(&mut v, b'C', &[30]);
    rec(&mut v, b'S', &[31]); // never committed: aborted
    rec(&mut v, b'R', &[0xbebe_ebee, 0xbebe_ebee, 100, 0]);
    files.push(("T2.log".into(), v));
    files
}

/// Every format's copy, in a scratch directory (the text ones copied from tests/data).
fn all_copies(scratch: &Scratch) -> Vec<(PathBuf, Format)> {
    let mut out = Vec::new();
    for (name, format) in [
        ("dbcop.json", Format::Dbcop),
        ("dbcop.txt", Format::DbcopText),
        ("elle.edn", Format::Elle),
        ("elle.json", Format::ElleJson),
    ] {
        let to = scratch.join(name);
        std::fs::copy(data(name), &to).unwrap();
        out.push((to, format));
    }
    let viper = scratch.join("viper");
    std::fs::create_dir_all(&viper).unwrap();
    for f in std::fs::read_dir(data("viper")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, viper.join(f.file_name().unwrap())).unwrap();
    }
    out.push((viper, Format::Viper));
    let dir = scratch.join("bincode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("history.bincode"), bincode()).unwrap();
    out.push((dir, Format::DbcopBincode));
    let dir = scratch.join("cobra");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in cobra() {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    std::fs::write(dir.join("T0.debug"), "client diagnostics").unwrap();
    std::fs::write(dir.join("T0.error"), "client errors").unwrap();
    out.push((dir, Format::Cobra));
    out
}

#[test]
fn the_same_history_in_every_format_gives_the_same_verdicts() {
    let scratch = Scratch::new("same");
    let mut first_names: Option<Vec<String>> = None;
    for (path, format) in all_copies(&scratch) {
        let (h, detected) = formats::read_path(&path, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(detected, format, "{}", path.display());
        let s = h.stats();
        // Three committed transactions over two keys (the aborted one differs: Elle's :fail
        // carries no reads, Viper has none).
        assert_eq!((s.committed, s.keys), (3, 2), "{format}");
        let all = common::every_level(&h);
        assert_eq!(all.strongest, Some(Level::ReadCommitted), "{format}");
        assert_eq!(all.cut_isolation, Some(true), "{format}");
        let ra = check(&h, Level::ReadAtomic, &CheckOptions::default()).unwrap();
        let names: Vec<String> = ra.cycles.iter().map(|c| c.anomaly.to_string()).collect();
        assert!(!names.is_empty(), "{format}");
        match &first_names {
            None => first_names = Some(names),
            Some(first) => assert_eq!(first, &names, "{format}"),
        }
        // Every writable format carries the verdict through a conversion.
        for to in Format::ALL {
            if to == Format::TimeKiller {
                // TimeKiller needs timestamps, which this history does not have.
                continue;
            }
            let parts =
                formats::write_parts(&h, to).unwrap_or_else(|e| panic!("{format} -> {to}: {e}"));
            let g = formats::read_parts(&parts, to, "converted").unwrap();
            let again = common::every_level(&g);
            assert_eq!(
                again.strongest,
                Some(Level::ReadCommitted),
                "{format} -> {to}"
            );
        }
    }
}

#[test]
fn elle_reads_keep_times_notes_and_aborts() {
    let h = formats::read_file(&data("elle.edn"), None).unwrap();
    assert_eq!(h.stats().aborted, 1);
    // Client real time by history position (Elle's order), never `:time`; no database
    // timestamps.
    let t = h.real_time(1).expect("invocation and completion positions");
    assert_eq!((t.invoked, t.completed), (0, 2));
    assert!(!h.has_timestamps());
    assert_eq!(
        h.input_notes().len(),
        1,
        "the nemesis operation is skipped, and said so"
    );
}

#[test]
fn list_append_orders_reveal_g0() {
    let h = formats::read_file(&data("elle-append.edn"), None).unwrap();
    assert_eq!(h.known_write_order().len(), 2);
    for level in [Level::ReadCommitted, Level::ReadAtomic, Level::Causal] {
        let r = check(&h, level, &CheckOptions::default()).unwrap();
        assert!(!r.is_consistent(), "{level}");
        assert_eq!(isopredict::check::oracle::satisfies(&h, level), Some(false));
    }
    // Converted to a format without version orders, the anomaly is invisible (and the
    // conversion says what it dropped).
    let notes = formats::conversion_notes(&h, Format::Plume);
    assert!(
        notes.iter().any(|n| n.contains("known write order")),
        "{notes:?}"
    );
    let parts = formats::write_parts(&h, Format::Plume).unwrap();
    let g = formats::read_parts(&parts, Format::Plume, "p").unwrap();
    assert!(check(&g, Level::Causal, &CheckOptions::default())
        .unwrap()
        .is_consistent());
}

#[test]
fn binary_errors_name_file_and_byte() {
    let b = bincode();
    let e =
        formats::read_bytes(&b[..100], "history.bincode", Some(Format::DbcopBincode)).unwrap_err();
    assert_eq!(e.line(), 0);
    assert!(e.to_string().starts_with("history.bincode: byte "), "{e}");
    let mut files = cobra();
    files[2].1[9] = b'Q';
    let e = formats::read_parts(&files, Format::Cobra, "dir").unwrap_err();
    assert_eq!(
        e.to_string(),
        "T2.log: byte 9: unknown record tag 0x51 (expected S, W, R or C)"
    );
}

#[test]
fn cli_checks_a_directory_of_histories() {
    let scratch = Scratch::new("cli");
    let copies = all_copies(&scratch);
    std::fs::write(
        scratch.join("broken.edn"),
        "{:type :ok, :f :txn, :value [], :process 0}\n",
    )
    .unwrap();
    let o = isopredict(&["check", &scratch.arg("")]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert_eq!(text.lines().count(), copies.len() + 2, "{text}");
    assert!(text.contains("broken.edn: bad input: "), "{text}");
    assert!(
        text.lines().last().unwrap().starts_with(&format!(
            "{} histories: 0 ok, {} found, 1 bad input",
            copies.len() + 1,
            copies.len()
        )),
        "{text}"
    );
    for line in text
        .lines()
        .filter(|l| !l.contains("broken") && !l.contains("histories:"))
    {
        assert!(
            line.contains("strongest rc, ci holds; ra VIOLATED"),
            "{line}"
        );
    }
    // Two files named on the command line: the same one-line form; worst exit code 1.
    let o = isopredict(&[
        "stats",
        &copies[0].0.display().to_string(),
        &copies[6].0.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o).lines().count(), 3, "{}", stdout(&o));
    // Conversion to a directory format and back.
    let out = scratch.arg("converted.cobra");
    let o = isopredict(&[
        "convert",
        &copies[0].0.display().to_string(),
        &out,
        "--to",
        "cobra",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = isopredict(&["check", &out, "--level", "rc"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // Converting again replaces that directory; a directory of something else is refused.
    let again = isopredict(&[
        "convert",
        &copies[1].0.display().to_string(),
        &out,
        "--to",
        "cobra",
    ]);
    assert_eq!(again.status.code(), Some(0));
    let o = isopredict(&[
        "convert",
        &copies[0].0.display().to_string(),
        &scratch.arg(""),
        "--to",
        "viper",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(scratch.join("dbcop.json").exists(), "nothing was removed");
}

proptest! {
    #[test]
    fn mutated_binary_histories_never_panic(
        which in 0..2usize,
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut bytes = if which == 0 { bincode() } else { cobra().remove(2).1 };
        for (i, b) in edits {
            let n = bytes.len();
            bytes[i % n] = b;
        }
        let cut = cut % (bytes.len() + 1);
        bytes.truncate(cut.max(bytes.len() / 2));
        for format in [Format::DbcopBincode, Format::Cobra] {
            if let Err(e) = formats::read_bytes(&bytes, "fuzz", Some(format)) {
                prop_assert_eq!(e.line(), 0);
                prop_assert!(e.message.starts_with("byte "), "{}", e);
            }
        }
    }
}
