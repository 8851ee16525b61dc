//! End-to-end tests of how the commands write their outputs (issue 12, items 1–5 and 7):
//! atomically, never over something that is not a regular file, one run per output folder at a
//! time, quietly when the reader of standard output went away, and with bounded durations.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::cli::{isopredict, stderr, stdout, Scratch};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_isopredict")
}

/// Runs the binary under `ulimit -f BLOCKS` (file size limit, in shell blocks).
fn isopredict_with_file_limit(blocks: u32, args: &[&str]) -> Output {
    let mut script = format!("ulimit -f {blocks}; exec '{}'", bin());
    for a in args {
        script.push_str(&format!(" '{a}'"));
    }
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The names in a folder, sorted.
fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Every file of a folder with its content.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    names(dir)
        .into_iter()
        .map(|n| {
            let content = std::fs::read(dir.join(&n)).unwrap();
            (n, content)
        })
        .collect()
}

/// A trace the IsoPredict format cannot carry (a read without a writer).
fn unrepresentable(s: &Scratch) -> String {
    std::fs::write(s.join("thin.txt"), "r(1,5,1,1)\n").unwrap();
    s.arg("thin.txt")
}

/// A valid history of some size (a shipped trace).
fn trace() -> String {
    common::testdata_dir()
        .join("isopredict-traces/smallbank_large_10000.txt")
        .display()
        .to_string()
}

#[test]
fn writing_over_a_device_or_a_folder_is_refused_and_leaves_it_alone() {
    let s = Scratch::new("device");
    let input = trace();
    // A folder at the output path.
    std::fs::create_dir(s.join("dir.json")).unwrap();
    let o = isopredict(&["convert", &input, &s.arg("dir.json")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    assert!(s.join("dir.json").is_dir());
    // A character device (needs the right to create one: root, as in CI).
    let made = Command::new("mknod")
        .args([&s.arg("node"), "c", "1", "3"])
        .status()
        .is_ok_and(|st| st.success());
    if made {
        use std::os::unix::fs::FileTypeExt;
        for args in [
            vec!["convert", &input, "--to", "json"],
            vec!["convert", &s.arg("thin.txt"), "--to", "isopredict"],
        ] {
            unrepresentable(&s);
            let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            args.insert(2, s.arg("node"));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = isopredict(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            let meta = std::fs::symlink_metadata(s.join("node")).expect("the device is kept");
            assert!(meta.file_type().is_char_device());
        }
        let o = isopredict(&["predict", &input, "--level", "rc", "--out", &s.arg("node")]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
        let meta = std::fs::symlink_metadata(s.join("node")).expect("the device is kept");
        assert!(meta.file_type().is_char_device());
    }
}

#[test]
fn a_refused_or_cut_write_keeps_the_previous_file() {
    let s = Scratch::new("keep");
    let out = s.join("out.isopredict");
    std::fs::write(&out, "previous\n").unwrap();
    let thin = unrepresentable(&s);
    let o = isopredict(&["convert", &thin, &s.arg("out.isopredict")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous\n");

    // A file size limit far below the output's size.
    let input = trace();
    std::fs::write(s.join("out.json"), "previous\n").unwrap();
    let o = isopredict_with_file_limit(4, &["convert", &input, &s.arg("out.json")]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(s.join("out.json")).unwrap(),
        "previous\n"
    );
    std::fs::write(s.join("g.json"), "previous\n").unwrap();
    let o = isopredict_with_file_limit(
        4,
        &["generate", "--sessions", "50", "--out", &s.arg("g.json")],
    );
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(s.join("g.json")).unwrap(),
        "previous\n"
    );
    // Nothing else is left behind (no temporary file).
    assert_eq!(
        names(&s.join(".")),
        ["g.json", "out.isopredict", "out.json", "thin.txt"]
            .iter()
            .map(|n| n.to_string())
            .collect()
    );
}

/// The files `report.json` lists, as names in the run folder.
fn listed_files(dir: &Path) -> BTreeSet<String> {
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            Path::new(f.as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        // Every output folder also holds the marker that makes it isopredict's to replace.
        .chain([isopredict::output::MARKER.to_string()])
        .collect()
}

#[test]
fn a_run_folder_is_complete_or_untouched() {
    let s = Scratch::new("runfolder");
    let dir = s.join("d");
    let o = isopredict(&["run", "smallbank", "--out", &s.arg("d")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let before = snapshot(&dir);
    assert!(before.iter().any(|(n, _)| n == "predicted.json"));
    // Cut by a file size limit: the previous run's files stay as they were.
    let o = isopredict_with_file_limit(
        8,
        &["run", "smallbank", "--seed", "2", "--out", &s.arg("d")],
    );
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ne!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(snapshot(&dir) == before, "the earlier run's files changed");
    assert_eq!(names(&s.join(".")), ["d".to_string()].into_iter().collect());
    // A run without a prediction replaces the folder: no stale file of the earlier run.
    let o = isopredict(&["run", "voter", "--out", &s.arg("d")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(names(&dir), listed_files(&dir));
    assert!(!dir.join("predicted.json").exists());
    // A folder holding something else is not ours to replace.
    std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();
    let o = isopredict(&["run", "voter", "--out", &s.arg("d")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("notes.txt"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine\n"
    );
}

#[test]
fn a_rank_folder_is_complete_or_untouched() {
    let s = Scratch::new("rankfolder");
    let args = |out: &str| {
        [
            "rank",
            "--workloads",
            "voter",
            "--seeds",
            "1",
            "--sizes",
            "small",
            "--levels",
            "rc",
            "--explore",
            "0",
            "--out",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([out.to_string()])
        .collect::<Vec<_>>()
    };
    let a = args(&s.arg("r"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = isopredict(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = snapshot(&s.join("r"));
    let o = isopredict_with_file_limit(2, &a);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        snapshot(&s.join("r")) == before,
        "the earlier rank files changed"
    );
    assert_eq!(names(&s.join(".")), ["r".to_string()].into_iter().collect());
}

#[test]
fn two_runs_into_one_folder_never_mix() {
    let s = Scratch::new("concurrent");
    for trial in 0..6 {
        let spawn = |seed: &str| {
            Command::new(bin())
                .args(["run", "smallbank", "--seed", seed, "--out", &s.arg("d")])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn("1"), spawn("2"));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        for o in [&a, &b] {
            assert!(
                matches!(o.status.code(), Some(1) | Some(2)),
                "trial {trial}: {}",
                stderr(o)
            );
        }
        let dir = s.join("d");
        assert_eq!(names(&dir), listed_files(&dir), "trial {trial}");
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
        let seed = report["seed"].as_u64().unwrap();
        let again = s.join(&format!("again{trial}"));
        let o = isopredict(&[
            "run",
            "smallbank",
            "--seed",
            &seed.to_string(),
            "--out",
            again.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1));
        for name in ["observed.json", "predicted.json", "validating.json"] {
            assert_eq!(
                std::fs::read(dir.join(name)).unwrap(),
                std::fs::read(again.join(name)).unwrap(),
                "trial {trial}: {name} is from the run of seed {seed}"
            );
        }
    }
}

/// Runs the binary with its standard output closed before it writes.
fn with_closed_stdout(args: &[&str]) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_standard_output_is_not_an_error() {
    let input = trace();
    for (args, code) in [
        (vec!["check", input.as_str(), "--level", "rc"], 0),
        (vec!["check", input.as_str(), "--level", "all", "--json"], 0),
        (vec!["stats", input.as_str()], 0),
        (vec!["predict", input.as_str(), "--level", "causal"], 1),
        (vec!["generate", "--sessions", "200"], 0),
        (vec!["convert", input.as_str(), "-"], 0),
    ] {
        let o = with_closed_stdout(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("Broken pipe") && !stderr(&o).contains("error"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn huge_durations_are_refused_not_panicked_on() {
    let input = trace();
    for args in [
        vec![
            "predict",
            input.as_str(),
            "--level",
            "rc",
            "--timeout",
            "9223372036854775807",
        ],
        vec!["run", "smallbank", "--timeout", "1e30"],
        vec!["rank", "--timeout", "18446744073709551615"],
        vec!["rank", "--timeout", "nan"],
        vec!["predict", input.as_str(), "--level", "rc", "--timeout=-1"],
    ] {
        let o = isopredict(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--timeout"), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
    // Fractions are accepted everywhere, and 0 means no limit.
    let o = isopredict(&["predict", &input, "--level", "rc", "--timeout", "0.5"]);
    assert!(
        matches!(o.status.code(), Some(1) | Some(3)),
        "{}",
        stderr(&o)
    );
    let o = isopredict(&["predict", &input, "--level", "rc", "--timeout", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stdout(&o).is_empty());
}

/// `generate` of `sessions` sessions of one write each (one connection per request) into
/// `file`.
fn one_write_sessions(sessions: u32, file: &str) {
    let o = isopredict(&[
        "generate",
        "--sessions",
        &sessions.to_string(),
        "--txns",
        "1",
        "--ops",
        "1",
        "--read-ratio",
        "0",
        "--keys",
        "1000",
        "--out",
        file,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn causal_checks_of_very_many_sessions_do_not_abort() {
    // 200,000 sessions of one write each. Vector clocks of one entry per session would need
    // 200,000² entries (160 GB).
    let s = Scratch::new("sessions");
    let file = s.arg("many.json");
    one_write_sessions(200_000, &file);
    for args in [
        vec!["check", file.as_str(), "--level", "cc"],
        vec!["check", file.as_str(), "--level", "all"],
    ] {
        let o = isopredict(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn prediction_on_many_sessions_does_not_abort() {
    // Prediction checks the observed history at the level first (the causal check above) and
    // then replays it serially; that replay looks at every session's next transaction at each
    // step (time transactions × sessions: minutes at 200,000 sessions), so it runs on 3,000
    // sessions here, still more than dense clocks are used for (1,024).
    let s = Scratch::new("sessions_predict");
    let file = s.arg("many.json");
    one_write_sessions(3_000, &file);
    // Prediction may refuse a history this large, but with a message, not an abort.
    let o = isopredict(&["predict", &file, "--level", "causal", "--timeout", "20"]);
    assert!(
        matches!(o.status.code(), Some(0..=3)),
        "{:?}: {}",
        o.status,
        stderr(&o)
    );
}
