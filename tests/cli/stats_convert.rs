//! End-to-end tests of the `isopredict` binary: `stats` and `convert`, exit codes 0 and 2,
//! error messages naming file and line.

use crate::common;

use std::path::{Path, PathBuf};

use common::cli::{isopredict, isopredict_with_stdin, stderr, stdout, Scratch};

fn trace() -> PathBuf {
    common::testdata_dir().join("isopredict-traces/smallbank_small_10000.txt")
}

#[test]
fn stats_prints_counts() {
    let o = isopredict(&["stats", trace().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("format            isopredict"), "{out}");
    assert!(
        out.contains("transactions      9 committed, 0 aborted"),
        "{out}"
    );
    assert!(
        out.contains("reads             525 (2 internal, 0 without a writer)"),
        "{out}"
    );
}

#[test]
fn stats_json_is_machine_readable() {
    let path = common::testdata_dir().join("awdit/causal/long-fork.txt");
    let o = isopredict(&["stats", "--json", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "awdit");
    assert_eq!(v["stats"]["sessions"], 3);
    assert_eq!(v["stats"]["committed"], 5);
    assert_eq!(v["stats"]["reads"], 4);
}

#[test]
fn stats_with_a_wrong_format_fails_with_line() {
    let o = isopredict(&["stats", "--format", "plume", trace().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("error: {}:1: ", trace().display())),
        "{err}"
    );
}

#[test]
fn bad_input_exits_2_naming_file_and_line() {
    let dir = Scratch::new("bad");
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "w(1,1,1,1)\n\nr(1,1,2,2\n").unwrap();
    let o = isopredict(&["stats", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        format!("error: {}:3: expected `)` but the line ends", bad.display())
    );
    let o = isopredict(&[
        "convert",
        bad.to_str().unwrap(),
        dir.join("o.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(":3: "), "{}", stderr(&o));
    assert!(!dir.join("o.json").exists());
    // A missing file.
    let o = isopredict(&["stats", dir.join("missing.txt").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    for args in [
        &["stats"][..],
        &["frobnicate"],
        &["stats", "--format", "elle", "x"],
        &[],
    ] {
        let o = isopredict(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    for args in [
        &["--help"][..],
        &["stats", "--help"],
        &["convert", "--help"],
        &["--version"],
    ] {
        let o = isopredict(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(!o.stdout.is_empty());
    }
    let help = stdout(&isopredict(&["convert", "--help"]));
    for name in ["auto", "json", "isopredict", "plume", "awdit"] {
        assert!(help.contains(name), "{help}");
    }
}

#[test]
fn convert_round_trips_through_every_format() {
    let dir = Scratch::new("convert");
    let input = trace();
    let original = isopredict::formats::read_file(&input, None).unwrap();
    // By extension: .json and .isopredict; by --to: plume.
    let json = dir.join("h.json");
    let o = isopredict(&["convert", input.to_str().unwrap(), json.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "JSON loses nothing: {}", stderr(&o));
    assert!(std::fs::read_to_string(&json)
        .unwrap()
        .contains("\"isopredict-history\""));
    let back = dir.join("h.isopredict");
    let o = isopredict(&["convert", json.to_str().unwrap(), back.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let h = isopredict::formats::read_file(&back, Some(isopredict::formats::Format::IsoPredict))
        .unwrap();
    original.same_content(&h).unwrap();

    let plume = dir.join("h.txt");
    let o = isopredict(&[
        "convert",
        "--to",
        "plume",
        input.to_str().unwrap(),
        plume.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    // Trace keys are not all integers (set elements) and traces have no values: noted.
    let notes = stderr(&o);
    assert!(notes.contains("note: plume keys are integers"), "{notes}");
    assert!(notes.contains("note: the history has no values"), "{notes}");
    let p = isopredict::formats::read_file(&plume, None).unwrap();
    assert_eq!(p.stats().reads, original.stats().reads);
}

#[test]
fn convert_to_stdout_and_from_stdin() {
    let path = common::testdata_dir().join("awdit/read-committed/test-rc.txt");
    let o = isopredict(&["convert", path.to_str().unwrap(), "-", "--to", "plume"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("w(") || text.starts_with("r("), "{text}");
    // Feed it back through stdin.
    let o = isopredict_with_stdin(&["stats", "-", "--json"], text.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "plume");
    assert_eq!(v["file"], "<stdin>");
    assert_eq!(v["stats"]["reads"], 7);
}

#[test]
fn unrepresentable_conversion_exits_2() {
    let dir = Scratch::new("unrep");
    let thin = dir.join("thin.txt");
    std::fs::write(&thin, "r(1,5,1,1)\n").unwrap();
    let out = dir.join("out.isopredict");
    let o = isopredict(&["convert", thin.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("error: cannot write this history as isopredict"),
        "{}",
        stderr(&o)
    );
    assert!(!Path::new(&out).exists(), "no partial output");
}
