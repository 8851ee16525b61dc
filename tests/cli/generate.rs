//! End-to-end tests of `isopredict generate`: run the built binary, read its output back.

use std::path::Path;

use isopredict::check::oracle::satisfies;
use isopredict::check::Level;
use isopredict::formats::{read_file, Format};

use crate::common;

use common::cli::{isopredict, stderr, stdout, Scratch};

fn run_generate(args: &[&str], out: &Path) {
    let out = out.display().to_string();
    let output = isopredict(&[&["generate"], args, &["--out", &out]].concat());
    assert!(
        output.status.success(),
        "generate {args:?} failed: {}",
        stderr(&output)
    );
}

const TINY: [&str; 10] = [
    "--sessions",
    "3",
    "--txns",
    "2",
    "--ops",
    "4",
    "--keys",
    "3",
    "--dist",
    "zipf",
];

#[test]
fn writes_every_format_and_the_level_survives_the_round_trip() {
    let scratch = Scratch::new("formats");
    for (mode, level) in [
        ("ser", Level::Serializable),
        ("cc", Level::Causal),
        ("ra", Level::ReadAtomic),
        ("rc", Level::ReadCommitted),
    ] {
        for seed in ["1", "2", "3"] {
            let json = scratch.join(&format!("{mode}-{seed}.json"));
            let mut args = TINY.to_vec();
            args.extend(["--consistent", mode, "--seed", seed]);
            run_generate(&args, &json);
            let reference = read_file(&json, None).unwrap();
            let stats = reference.stats();
            assert_eq!(stats.sessions, 3);
            assert_eq!(stats.committed, 6);
            assert_eq!(stats.reads + stats.writes, 24);
            assert_eq!(satisfies(&reference, level), Some(true), "{mode} {seed}");
            // TimeKiller needs timestamps, which generated histories do not have.
            for format in Format::ALL.into_iter().filter(|&f| f != Format::TimeKiller) {
                let out = scratch.join(&format!("{mode}-{seed}.{format}"));
                let mut with_format = args.clone();
                with_format.extend(["--format", format.name()]);
                run_generate(&with_format, &out);
                let h = read_file(&out, Some(format)).unwrap();
                if format == Format::Json {
                    h.same_content(&reference).unwrap();
                }
                // The AWDIT format has no initial transaction (its initial writes become an
                // ordinary transaction): that only relaxes the history, so the level holds.
                assert_eq!(satisfies(&h, level), Some(true), "{mode} {seed} {format}");
            }
        }
    }
}

#[test]
fn same_seed_same_output_on_stdout() {
    let run = |seed: &str| {
        let output = isopredict(&[
            "generate",
            "--sessions",
            "3",
            "--txns",
            "3",
            "--ops",
            "3",
            "--seed",
            seed,
            "--abort-ratio",
            "0.3",
            "--dist",
            "hotspot",
        ]);
        assert!(output.status.success());
        output.stdout
    };
    let a = run("11");
    assert!(a.starts_with(b"{"));
    assert_eq!(a, run("11"));
    assert_ne!(a, run("12"));
}

#[test]
fn bad_arguments_exit_2_with_a_message() {
    for args in [
        vec!["generate", "--read-ratio", "2"],
        vec!["generate", "--abort-ratio", "-1"],
        vec!["generate", "--keys", "0"],
        vec!["generate", "--dist", "gauss"],
        vec!["generate", "--consistent", "si"],
        vec!["generate", "--format", "nope"],
        vec!["generate", "--sessions", "-1"],
        vec![
            "generate",
            "--sessions",
            "70000",
            "--txns",
            "70000",
            "--ops",
            "1",
        ],
    ] {
        let output = isopredict(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!output.stderr.is_empty(), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn check_accepts_consistent_output_and_rejects_random_output() {
    let scratch = Scratch::new("check");
    for (mode, level, expected) in [
        ("cc", "cc", 0),
        ("ra", "ra", 0),
        ("rc", "rc", 0),
        ("ser", "cc", 0),
        ("none", "rc", 1),
    ] {
        let out = scratch.join(&format!("{mode}.plume"));
        run_generate(
            &[
                "--sessions",
                "20",
                "--txns",
                "100",
                "--ops",
                "10",
                "--keys",
                "50",
                "--dist",
                "hotspot",
                "--seed",
                "5",
                "--format",
                "plume",
                "--consistent",
                mode,
            ],
            &out,
        );
        let output = isopredict(&["check", &out.display().to_string(), "--level", level]);
        assert_eq!(
            output.status.code(),
            Some(expected),
            "{mode} checked at {level}: {}",
            stdout(&output)
        );
    }
}
