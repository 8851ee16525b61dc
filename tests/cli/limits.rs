//! End-to-end tests of argument and input bounds (issue 12, items 8–11): rank's `--explore`
//! and `--threads`, unparsable files and duplicate levels in `rank`, inputs that never end,
//! and how much one violation prints.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::cli::{isopredict, json_output, stderr, stdout, Scratch};

#[test]
fn rank_bounds_explore_and_threads() {
    let s = Scratch::new("rankargs");
    for args in [
        vec!["rank", "--explore", "18446744073709551615"],
        vec!["rank", "--explore", "100001"],
        vec!["rank", "--threads", "10000"],
        vec!["rank", "--threads", "0"],
    ] {
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        args.extend(["--out".to_string(), s.arg("r")]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = isopredict(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!s.join("r").exists());
    }
}

#[test]
fn rank_fails_on_an_unparsable_history_and_counts_each_level_once() {
    let s = Scratch::new("rankhist");
    let h = s.traces_by_group("h", &[("bank", "smallbank_small_10000.txt")]);
    let o = isopredict(&[
        "rank",
        "--histories",
        &h,
        "--levels",
        "causal,causal,cc",
        "--json",
        "--out",
        &s.arg("r"),
    ]);
    let json = json_output(&o, 0);
    assert_eq!(
        json["predictions"].as_array().unwrap().len(),
        1,
        "one level"
    );
    // A file whose format is not detected is not a history: passed over (a README, say).
    std::fs::write(s.join("h/bank/README"), "this is not a history\n").unwrap();
    let o = isopredict(&[
        "rank",
        "--histories",
        &h,
        "--levels",
        "causal",
        "--json",
        "--out",
        &s.arg("r1"),
    ]);
    let json = json_output(&o, 0);
    assert_eq!(json["predictions"].as_array().unwrap().len(), 1);
    // A history that does not parse fails the whole folder.
    std::fs::write(s.join("h/bank/broken.txt"), "r(1,2,3\n").unwrap();
    let o = isopredict(&[
        "rank",
        "--histories",
        &h,
        "--levels",
        "causal",
        "--out",
        &s.arg("r2"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("broken.txt"), "{}", stderr(&o));
    assert!(!s.join("r2").exists());
}

#[test]
fn inputs_that_never_end_are_refused() {
    // A device: refused at once.
    let o = isopredict(&["check", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("/dev/zero"), "{}", stderr(&o));
    // Standard input without end: bounded (ISOPREDICT_MAX_INPUT lowers the bound for the test).
    let mut child = Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(["check", "-"])
        .env("ISOPREDICT_MAX_INPUT", "1000000")
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("check - < /dev/zero did not stop");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("larger than"), "{}", stderr(&o));
}

#[test]
fn one_long_cycle_is_printed_cut() {
    // A ring of 20,000 single-transaction sessions, each reading the previous one's write: one
    // write-read cycle through all of them.
    let s = Scratch::new("ring");
    let n = 20_000u32;
    let mut text = String::new();
    for i in 1..=n {
        let prev = if i == 1 { n } else { i - 1 };
        text.push_str(&format!(
            "r({i},{prev},{i},{i})\nw({},{i},{i},{i})\n",
            i % n + 1
        ));
    }
    std::fs::write(s.join("ring.plume"), text).unwrap();
    for json in [false, true] {
        let mut args = vec!["check", "--level", "rc", "--max-violations", "3"];
        let file = s.arg("ring.plume");
        args.push(&file);
        if json {
            args.push("--json");
        }
        let o = isopredict(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(o.stdout.len() < 100_000, "{} bytes printed", o.stdout.len());
        assert!(stdout(&o).contains("20000"), "the cycle's length is said");
        if !json {
            assert!(stdout(&o).contains("cut"), "{}", stdout(&o));
        }
    }
}
