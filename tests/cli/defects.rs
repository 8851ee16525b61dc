//! End-to-end tests of the defects found by trying to break the tool (issue 24, second list):
//! each test names its item and failed before the fix.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::symlink;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::cli::{isopredict, stderr, stdout, Scratch};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_isopredict")
}

/// Waits for `child` at most `limit`; kills it (and fails) if it is still running.
fn wait_at_most(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}; stdout: {}; stderr: {}",
                stdout(&o),
                stderr(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Runs `isopredict ARGS` with at most `limit` to finish.
fn run_within(args: &[&str], limit: Duration) -> Output {
    let child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_at_most(child, limit, &args.join(" "))
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// A TimeKiller transaction line writing `key` (JSON-escaped text) in session `sid`.
fn tk_write(tid: u32, sid: u32, start: u32, commit: u32, key: &str) -> String {
    format!(
        "{{\"tid\":{tid},\"sid\":{sid},\"sts\":{{\"p\":{start},\"l\":0}},\"cts\":{{\"p\":{commit},\"l\":0}},\"ops\":[{{\"t\":\"w\",\"k\":\"{key}\",\"v\":{tid}}}]}}\n"
    )
}

fn spawn_watch(args: &[&str]) -> Child {
    Command::new(bin())
        .args(["watch", "--level", "si", "--initial-value", "0"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads lines of `out` on a thread; returns a receiver of them.
fn line_feed(out: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

// Items 1 and 4: a violation is printed when its line arrives, with names escaped; the input
// stays open. Then SIGINT (and, in the next test, SIGTERM) prints the summary and exits.
fn watch_online_then(sig: i32) {
    let mut child = spawn_watch(&[]);
    let mut input = child.stdin.take().unwrap();
    let lines = line_feed(child.stdout.take().unwrap());
    input
        .write_all(tk_write(1, 0, 1, 5, "x\\u001b[2J\\nforged").as_bytes())
        .unwrap();
    input
        .write_all(tk_write(2, 1, 2, 6, "x\\u001b[2J\\nforged").as_bytes())
        .unwrap();
    input.flush().unwrap();
    // Before the fix the lines waited for 256 more or the end of the input.
    let first = lines
        .recv_timeout(Duration::from_secs(10))
        .expect("the NOCONFLICT line is printed while the input is still open");
    assert!(
        first.starts_with("concurrent write conflict (Chronos NOCONFLICT): NOCONFLICT: "),
        "{first}"
    );
    assert!(first.contains("key x\\u{1b}[2J\\u{a}forged"), "{first}");
    assert!(!first.contains('\u{1b}'), "{first:?}");
    signal(&child, sig);
    let mut rest = Vec::new();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(10)) {
        rest.push(line);
    }
    let o = wait_at_most(child, Duration::from_secs(10), "watch after a signal");
    drop(input);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        rest.iter().any(|l| l.starts_with("watched 2 transactions")),
        "{rest:?}"
    );
    assert!(
        rest.iter()
            .any(|l| l
                .starts_with("violations: 1 (1 concurrent write conflict (Chronos NOCONFLICT))")),
        "{rest:?}"
    );
}

#[test]
fn item1_watch_checks_each_line_on_arrival_and_sigint_prints_the_summary() {
    watch_online_then(libc::SIGINT);
}

#[test]
fn item1_item7_watch_sigterm_prints_the_summary() {
    watch_online_then(libc::SIGTERM);
}

// Item 2: a line without end is cut at the limit and reported, and the connection goes on;
// connections beyond the cap are told so and closed.
#[test]
fn item2_watch_bounds_lines_and_connections() {
    let mut child = Command::new(bin())
        .args([
            "watch",
            "--level",
            "si",
            "--listen",
            "127.0.0.1:0",
            "--initial-value",
            "0",
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
    // 64 connections held open: the cap.
    let held: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    let mut extra = TcpStream::connect(&addr).unwrap();
    extra
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut told = String::new();
    let _ = extra.read_to_string(&mut told);
    assert!(told.contains("64 connections are open"), "{told:?}");
    // A 3 MB line with no newline for a while, then its end and a good line.
    let mut long = held[0].try_clone().unwrap();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..3 {
        long.write_all(&chunk).unwrap();
    }
    long.write_all(b"\n").unwrap();
    long.write_all(tk_write(1, 0, 1, 2, "k").as_bytes())
        .unwrap();
    long.flush().unwrap();
    // A line probe, not a sleep: the signal goes once the watcher reported the long line (the
    // good line behind it on the same connection is read next).
    let mut rest = String::new();
    loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "watch ended: {rest}");
        rest.push_str(&line);
        if line.contains("malformed line skipped") {
            break;
        }
    }
    signal(&child, libc::SIGINT);
    let o = wait_at_most(child, Duration::from_secs(10), "watch --listen");
    drop(held);
    err.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("connection 65: refused"), "{rest}");
    assert!(
        rest.contains(":1: malformed line skipped: the line is 3145728 bytes long"),
        "{rest}"
    );
    let out = stdout(&o);
    assert!(out.contains("watched 1 transactions"), "{out}");
    assert!(out.contains("malformed lines skipped: 1"), "{out}");
    assert_eq!(o.status.code(), Some(0), "{out}{rest}");
}

// Item 3: a timeout that overflows is a usage error.
#[test]
fn item3_watch_timeout_is_range_checked() {
    for t in ["1e300", "86401", "-1", "inf"] {
        let o = isopredict(&["watch", "--level", "si", &format!("--timeout={t}")]);
        assert_eq!(o.status.code(), Some(2), "{t}: {}", stderr(&o));
        assert!(stderr(&o).contains("--timeout must be"), "{}", stderr(&o));
    }
}

// Item 5: a folder of someone else's *.log files, and the working folder, are not replaced.
#[test]
fn item5_convert_never_replaces_a_folder_it_did_not_write() {
    let s = Scratch::new("foreign-logs");
    std::fs::write(s.join("h.plume"), "w(1,1,1,1)\nr(1,1,2,2)\n").unwrap();
    std::fs::create_dir(s.join("logs")).unwrap();
    std::fs::write(s.join("logs/app.log"), "their log\n").unwrap();
    let o = isopredict(&[
        "convert",
        &s.arg("h.plume"),
        &s.arg("logs"),
        "--to",
        "cobra",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(".isopredict-output"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(s.join("logs/app.log")).unwrap(),
        "their log\n"
    );
    // Its own output folder is replaced.
    let o = isopredict(&[
        "convert",
        &s.arg("h.plume"),
        &s.arg("mine"),
        "--to",
        "cobra",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = isopredict(&[
        "convert",
        &s.arg("h.plume"),
        &s.arg("mine"),
        "--to",
        "cobra",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The working folder (here a history folder of its own making) is not.
    let o = Command::new(bin())
        .args(["convert", "../h.plume", "../mine", "--to", "cobra"])
        .current_dir(s.join("mine"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("working folder"), "{}", stderr(&o));
    assert!(s.join("mine").is_dir());
}

// Item 6: link cycles, a named pipe and non-history files in a folder.
#[test]
fn item6_folders_are_walked_once_without_hanging() {
    let s = Scratch::new("walk");
    let root = s.join("h");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("a.plume"), "w(1,1,1,0)\n").unwrap();
    std::fs::write(root.join("sub/b.plume"), "w(1,1,1,0)\n").unwrap();
    std::fs::write(root.join("LICENSE"), "MIT License\n\nCopyright\n").unwrap();
    symlink(&root, root.join("sub/up")).unwrap();
    symlink("..", root.join("sub/up2")).unwrap();
    let fifo = std::ffi::CString::new(root.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    for args in [
        &["stats"][..],
        &["check"],
        &["predict", "--level", "causal"],
    ] {
        let command = args[0];
        let o = run_within(
            &[args, &[s.arg("h").as_str()][..]].concat(),
            Duration::from_secs(60),
        );
        let out = stdout(&o);
        assert!(
            out.contains("2 histories:") && out.contains("0 bad input"),
            "{command}: {out}{}",
            stderr(&o)
        );
        assert_eq!(out.matches("a.plume").count(), 1, "{out}");
    }
    // The AWDIT test data beside its LICENSE and README.
    let awdit = common::cli::awdit("");
    let o = run_within(&["check", &awdit], Duration::from_secs(120));
    assert_ne!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(!stdout(&o).contains("LICENSE"), "{}", stdout(&o));
    // A file named on the command line must still parse.
    let o = isopredict(&["check", &s.arg("h/LICENSE")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

// Item 7: SIGTERM stops a long run like SIGINT (exit 130), writing nothing.
#[test]
fn item7_sigterm_stops_a_long_run() {
    let s = Scratch::new("sigterm");
    // Exact prediction at causal of a TPC-C run of 20 calls a session, no time limit: Z3
    // takes minutes (tests/cli/interrupt.rs).
    let child = Command::new(bin())
        .args(["run", "tpcc"])
        .args(common::signal::SLOW)
        .args(["--out", &s.arg("out")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = child;
    // A signal probe, not a sleep: SIGTERM goes once the run handles it.
    common::signal::wait_until_handled(&mut child, libc::SIGTERM);
    signal(&child, libc::SIGTERM);
    let o = wait_at_most(child, Duration::from_secs(30), "run after SIGTERM");
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("no output written"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(s.join(".")).unwrap().count(), 0);
}

// Item 7: Ctrl-C ends `generate` writing a large file at once, leaving no temporary.
#[test]
fn item7_sigint_stops_generate_and_removes_its_temporary() {
    let s = Scratch::new("gen-int");
    let child = Command::new(bin())
        .args([
            "generate",
            "--sessions",
            "100",
            "--txns",
            "5000",
            "--ops",
            "10",
            "--out",
            &s.arg("big.json"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A file probe, not a sleep: SIGINT goes once generate handles it and its temporary
    // exists (it is writing).
    let mut child = child;
    common::signal::wait_until_handled(&mut child, libc::SIGINT);
    let start = Instant::now();
    while std::fs::read_dir(s.join(".")).unwrap().next().is_none() {
        assert!(child.try_wait().unwrap().is_none(), "generate ended first");
        assert!(
            // A hang detector, not a timing: generating takes a while on a loaded machine.
            start.elapsed() < Duration::from_secs(300),
            "no temporary written"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, libc::SIGINT);
    let o = wait_at_most(child, Duration::from_secs(30), "generate after SIGINT");
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(s.join("."))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

// Item 8: converting to awdit, which has no initial state, is refused unless --lossy.
#[test]
fn item8_a_conversion_that_changes_the_meaning_needs_lossy() {
    let s = Scratch::new("lossy");
    // Lost update: both read x's initial value and write it.
    std::fs::write(
        s.join("h.plume"),
        "r(1,0,1,1)\nw(1,1,1,1)\nr(1,0,2,2)\nw(1,2,2,2)\n",
    )
    .unwrap();
    let o = isopredict(&[
        "convert",
        &s.arg("h.plume"),
        &s.arg("h.awdit"),
        "--to",
        "awdit",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("awdit has no initial state"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("--lossy"), "{}", stderr(&o));
    assert!(!s.join("h.awdit").exists());
    let o = isopredict(&[
        "convert",
        &s.arg("h.plume"),
        &s.arg("h.awdit"),
        "--to",
        "awdit",
        "--lossy",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(s.join("h.awdit").exists());
    // A conversion that keeps the meaning needs nothing.
    let o = isopredict(&["convert", &s.arg("h.plume"), &s.arg("h.json")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

// Item 9: sizes that pass validation do not abort on allocation.
#[test]
fn item9_huge_sizes_are_refused_or_cheap() {
    let o = run_within(
        &[
            "generate",
            "--keys",
            "4294967295",
            "--sessions",
            "2",
            "--txns",
            "2",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run_within(
        &[
            "generate",
            "--keys",
            "50000000",
            "--sessions",
            "2",
            "--txns",
            "2",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for args in [
        &["generate", "--keys", "4294967295", "--dist", "zipf"][..],
        &["generate", "--sessions", "4294967295", "--txns", "0"],
        &["run", "smallbank", "--sessions", "4294967295"],
        &["run", "smallbank", "--calls", "4294967295"],
    ] {
        let o = run_within(args, Duration::from_secs(20));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("at most"), "{}", stderr(&o));
    }
}

// Item 10: a malformed store URL is echoed without its password.
#[test]
fn item10_store_passwords_are_redacted() {
    for store in [
        "postgres://alice:s3cret@db:notaport/x",
        "postgress://alice:s3cret@db/x",
    ] {
        let o = isopredict(&["run", "smallbank", "--store", store]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(!stderr(&o).contains("s3cret"), "{}", stderr(&o));
        assert!(stderr(&o).contains("alice:***@db"), "{}", stderr(&o));
    }
}

// Item 11: an --out that is a dangling symbolic link is refused and left as it is.
#[test]
fn item11_a_dangling_out_link_is_refused() {
    let s = Scratch::new("dangling");
    symlink(s.join("missing/p.json"), s.join("out.json")).unwrap();
    let o = isopredict(&["generate", "--out", &s.arg("out.json")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(s.join("out.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!s.join("missing").exists());
}

// Item 12: contradictory events are errors with their line.
#[test]
fn item12_contradictory_events_are_errors() {
    let s = Scratch::new("events");
    std::fs::write(
        s.join("e.jsonl"),
        "{\"event\":\"begin\",\"session\":1,\"txn\":1}\n\
         {\"event\":\"write\",\"session\":2,\"txn\":1,\"key\":\"x\",\"value\":1}\n",
    )
    .unwrap();
    let o = isopredict(&["check", &s.arg("e.jsonl")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("e.jsonl:2:"), "{}", stderr(&o));
    assert!(stderr(&o).contains("names session 2"), "{}", stderr(&o));
}

/// Issue 35 item 21: the Ray worker keeps shipped binaries and plans in a private, owner-checked
/// folder and runs a cached binary only when its hash is the shipped one's (the script's own
/// tests need no Ray: scripts/test-ray-cache).
#[test]
fn issue35_item21_ray_worker_cache_is_private_and_hash_checked() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/test-ray-cache");
    let o = Command::new("python3").arg(script).output().unwrap();
    assert!(
        o.status.success(),
        "scripts/test-ray-cache failed: {}{}",
        stdout(&o),
        stderr(&o)
    );
}

/// Writes `text` to `path`, creating its folder.
fn put(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Files in `dir` (none if it does not exist).
fn files_in(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir).map_or(Vec::new(), |d| {
        d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    })
}

/// Issue 35 item 22: a plan cell reads only histories under the plan's declared roots; a plan
/// naming another file (with a text format forced, whose error quoted the file's first line)
/// is refused, and nothing of the file reaches the result or the output.
#[test]
fn issue35_item22_plan_cells_read_only_under_the_plans_roots() {
    let s = Scratch::new("i35-22");
    put(&s.join("hist/a.txt"), "w(1,1,0,1)\nr(1,1,1,2)\n");
    put(&s.join("secret.txt"), "TOP-SECRET-LINE\n");
    put(&s.join("ranked/g/a.txt"), "w(1,1,0,1)\nr(1,1,1,2)\n");
    let o = isopredict(&["check", &s.arg("hist"), "--plan", &s.arg("check.jsonl")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = isopredict(&[
        "rank",
        "--histories",
        &s.arg("ranked"),
        "--levels",
        "rc",
        "--plan",
        &s.arg("rank.jsonl"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The plans as made run (the history is under the roots).
    for (cmd, plan) in [("check", "check.jsonl"), ("rank", "rank.jsonl")] {
        let out = s.arg(&format!("ok-{cmd}"));
        let o = isopredict(&[cmd, "--cell", "0", "--plan", &s.arg(plan), "--out", &out]);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", stderr(&o));
    }
    let evil = [
        s.arg("secret.txt"),
        format!("{}/../secret.txt", s.arg("hist")),
        format!("{}/../secret.txt", s.arg("ranked")),
        "secret.txt".to_string(),
    ];
    for (cmd, plan, history) in [
        ("check", "check.jsonl", s.arg("hist/a.txt")),
        ("rank", "rank.jsonl", s.arg("ranked/g/a.txt")),
    ] {
        let text = s.read(plan);
        assert!(text.contains(&format!("\"{history}\"")), "{text}");
        for (i, path) in evil.iter().enumerate() {
            let bad = text
                .replace(&format!("\"{history}\""), &format!("\"{path}\""))
                .replace("\"format\":null", "\"format\":\"plume\"");
            let bad_plan = s.join(&format!("{cmd}-evil-{i}.jsonl"));
            std::fs::write(&bad_plan, bad).unwrap();
            let out = s.join(&format!("{cmd}-out-{i}"));
            let o = isopredict(&[
                cmd,
                "--cell",
                "0",
                "--plan",
                &bad_plan.display().to_string(),
                "--out",
                &out.display().to_string(),
            ]);
            assert_eq!(o.status.code(), Some(2), "{cmd} {path}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("is not under the plan's roots"),
                "{cmd} {path}: {}",
                stderr(&o)
            );
            assert!(!stderr(&o).contains("TOP-SECRET") && !stdout(&o).contains("TOP-SECRET"));
            assert!(
                files_in(&out).is_empty(),
                "{cmd} {path}: a result was written"
            );
        }
    }
}

/// Issue 35 item 24: plan lines are validated like the arguments they stand for: a timeout
/// beyond --timeout's range (was: every cell panicked, exit 101), a rank plan's sessions and
/// sizes beyond the run-size bounds (was: an unbounded recording), and a results folder with
/// two files for one cell (was: the folder's order picked one).
#[test]
fn issue35_item24_plan_lines_are_validated_like_their_arguments() {
    let s = Scratch::new("i35-24");
    put(&s.join("hist/a.txt"), "w(1,1,0,1)\nr(1,1,1,2)\n");
    let o = isopredict(&[
        "check",
        &s.arg("hist"),
        "--timeout",
        "5",
        "--plan",
        &s.arg("check.jsonl"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = s.read("check.jsonl");
    assert!(text.contains("\"secs\":5,"), "{text}");
    for secs in ["18446744073709551615", "1000000001"] {
        std::fs::write(
            s.join("long.jsonl"),
            text.replace("\"secs\":5,", &format!("\"secs\":{secs},")),
        )
        .unwrap();
        let o = run_within(
            &[
                "check",
                "--cell",
                "0",
                "--plan",
                &s.arg("long.jsonl"),
                "--out",
                &s.arg("o"),
            ],
            Duration::from_secs(60),
        );
        assert_eq!(o.status.code(), Some(2), "{secs}: {}", stderr(&o));
        assert!(stderr(&o).contains("timeout"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }

    let o = isopredict(&[
        "rank",
        "--workloads",
        "smallbank",
        "--sizes",
        "small",
        "--seeds",
        "1",
        "--levels",
        "rc",
        "--explore",
        "0",
        "--plan",
        &s.arg("rank.jsonl"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = s.read("rank.jsonl");
    for (from, to, says) in [
        (
            "\"sessions\":3,",
            "\"sessions\":100000,",
            "--sessions is at most",
        ),
        (
            "\"size\":\"small\"",
            "\"size\":\"100000000-calls\"",
            "calls",
        ),
        ("\"secs\":60,", "\"secs\":18446744073709551615,", "timeout"),
        ("\"max\":1,", "\"max\":0,", "max"),
    ] {
        assert!(text.contains(from), "{text}");
        std::fs::write(s.join("big.jsonl"), text.replace(from, to)).unwrap();
        let o = run_within(
            &[
                "rank",
                "--cell",
                "0",
                "--plan",
                &s.arg("big.jsonl"),
                "--out",
                &s.arg("ro"),
            ],
            Duration::from_secs(120),
        );
        assert_eq!(o.status.code(), Some(2), "{to}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{to}: {}", stderr(&o));
        assert!(files_in(&s.join("ro")).is_empty());
    }

    // Two result files for one cell: refused, naming both.
    let o = isopredict(&[
        "check",
        "--cell",
        "0",
        "--plan",
        &s.arg("check.jsonl"),
        "--out",
        &s.arg("cells"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let result = s.read("cells/cell-000000.json");
    std::fs::write(
        s.join("cells/cell-0.json"),
        result.replace("\"code\":0", "\"code\":1"),
    )
    .unwrap();
    let o = isopredict(&["check", "--merge", &s.arg("cells")]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("two result files for cell 0")
            && stderr(&o).contains("cell-0.json")
            && stderr(&o).contains("cell-000000.json"),
        "{}",
        stderr(&o)
    );
}

/// Issue 35 item 28: standard error that cannot be written (`2>/dev/full`): each command
/// exits with its own code instead of panicking ("failed printing to stderr", exit 101).
#[test]
fn issue35_item28_unwritable_stderr_keeps_the_exit_code() {
    let s = Scratch::new("i35-28");
    put(&s.join("bad.txt"), "w(1,1,0,1)\nr(1,\n");
    put(&s.join("ok/a.txt"), "w(1,1,0,1)\nr(1,1,1,2)\n");
    let plan = s.arg("plan.jsonl");
    let cases: Vec<(Vec<String>, i32)> = vec![
        (vec!["check".into(), s.arg("missing.txt")], 2),
        (vec!["check".into(), s.arg("bad.txt")], 2),
        (vec!["stats".into(), s.arg("bad.txt")], 2),
        (vec!["predict".into(), s.arg("bad.txt")], 2),
        (
            vec!["check".into(), s.arg("ok"), "--plan".into(), plan.clone()],
            0,
        ),
        (
            vec![
                "check".into(),
                "--cell".into(),
                "0".into(),
                "--plan".into(),
                plan,
                "--out".into(),
                s.arg("cells"),
            ],
            0,
        ),
        (vec!["rank".into(), "--seeds".into(), "x".into()], 2),
    ];
    for (args, code) in cases {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = Command::new(bin())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(full))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stdout(&o));
    }
}

/// A `run` folder with a prediction (smallbank, small, seed 1, causal), for `reproduce`.
fn run_folder(s: &Scratch, name: &str) -> String {
    let dir = s.arg(name);
    let o = isopredict(&["run", "smallbank", "--level", "causal", "--out", &dir]);
    assert!(
        s.join(name).join("predicted.json").exists(),
        "run made no prediction: {}{}",
        stdout(&o),
        stderr(&o)
    );
    dir
}

/// Issue 35 item 25: `reproduce` checks report.json against the run's histories before it
/// connects: a session count that is not the observed run's (was: 20,000 connections opened
/// until PostgreSQL refused every client) and a swapped workload (was: another workload's
/// code run against the prediction) are bad input, exit 2, naming the mismatch.
#[test]
fn issue35_item25_reproduce_checks_the_report_against_the_histories() {
    let s = Scratch::new("i35-25");
    let dir = run_folder(&s, "run");
    let report_path = s.join("run/report.json");
    let original = std::fs::read_to_string(&report_path).unwrap();
    let report: serde_json::Value = serde_json::from_str(&original).unwrap();
    assert_eq!(report["workload"], "smallbank");
    // No database is reached: the checks come first (nothing listens on port 1).
    let store = "postgres://nobody@127.0.0.1:1/none";
    let edits: Vec<(serde_json::Value, &str)> = vec![
        (
            {
                let mut r = report.clone();
                r["sessions"] = serde_json::Value::Array(vec!["s".into(); 20_000]);
                r
            },
            "--sessions is at most",
        ),
        (
            {
                let mut r = report.clone();
                r["sessions"] = serde_json::Value::Array(vec!["s".into(); 5]);
                r
            },
            "says 5 sessions, observed.json has 3",
        ),
        (
            {
                let mut r = report.clone();
                r["workload"] = "voter".into();
                r
            },
            "says workload voter",
        ),
        (
            {
                let mut r = report.clone();
                r["workload"] = "doctors".into();
                r
            },
            "says workload doctors",
        ),
    ];
    for (edited, says) in edits {
        std::fs::write(&report_path, serde_json::to_string(&edited).unwrap()).unwrap();
        let o = run_within(
            &[
                "reproduce",
                &dir,
                "--store",
                store,
                "--isolation",
                "read-committed",
            ],
            Duration::from_secs(60),
        );
        assert_eq!(
            o.status.code(),
            Some(2),
            "{says}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(stderr(&o).contains(says), "{says}: {}", stderr(&o));
        assert!(!s.join("run/reproduce").exists());
    }
}

/// Issue 35 item 26 (the input part): a FIFO in place of predicted.json (or report.json) is
/// refused at once, exit 2, instead of blocking in open() where a signal does not stop it.
#[test]
fn issue35_item26_reproduce_refuses_a_fifo_as_input() {
    let s = Scratch::new("i35-26");
    let dir = run_folder(&s, "run");
    for name in ["predicted.json", "report.json", "observed.json"] {
        let path = s.join("run").join(name);
        let kept = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let c = std::ffi::CString::new(path.display().to_string()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates the file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let o = run_within(
            &[
                "reproduce",
                &dir,
                "--store",
                "postgres://nobody@127.0.0.1:1/none",
                "--isolation",
                "read-committed",
            ],
            Duration::from_secs(60),
        );
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(name) && stderr(&o).contains("not a regular file"),
            "{name}: {}",
            stderr(&o)
        );
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, kept).unwrap();
    }
}

/// Issue 35 item 27: `watch --listen` under a 1 GB address-space limit serves its 64
/// connections and refuses the 65th cleanly (it used to abort after ~45: "memory allocation
/// failed"); connections that never finish a line are closed after the idle timeout (they
/// used to hold every slot forever), and the slots serve new clients again.
#[test]
fn issue35_item27_watch_idle_connections_are_closed_and_the_cap_refuses_cleanly() {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(bin());
    command
        .args([
            "watch",
            "--level",
            "si",
            "--listen",
            "127.0.0.1:0",
            "--initial-value",
            "0",
            "--idle-timeout",
            "1",
            "--connections",
            "66",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; it only limits the child.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let lines = line_feed(child.stderr.take().unwrap());
    let first = lines.recv_timeout(Duration::from_secs(60)).unwrap();
    let addr = first
        .trim()
        .strip_prefix("listening on ")
        .expect(&first)
        .to_string();
    // 64 connections, each in the middle of a line it never finishes.
    let held: Vec<TcpStream> = (0..64)
        .map(|_| {
            let mut c = TcpStream::connect(&addr).unwrap();
            c.write_all(b"{\"tid\": 1, ").unwrap();
            c
        })
        .collect();
    let mut extra = TcpStream::connect(&addr).unwrap();
    extra
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut told = String::new();
    let _ = extra.read_to_string(&mut told);
    assert!(told.contains("64 connections are open"), "{told:?}");
    // Every held connection is closed for being idle (a hang guard of 60 s per line).
    let mut idle = 0;
    let mut seen = Vec::new();
    while idle < 64 {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("only {idle} idle closes; stderr so far: {seen:?}"));
        if line.contains("closed: nothing received for 1 s") {
            idle += 1;
        }
        seen.push(line);
    }
    assert!(
        seen.iter().any(|l| l.contains("connection 65: refused")),
        "{seen:?}"
    );
    // The slots serve again: a new client's transaction is checked.
    let mut c = TcpStream::connect(&addr).unwrap();
    c.write_all(tk_write(1, 0, 1, 2, "k").as_bytes()).unwrap();
    drop(c);
    drop(held);
    // 66 connections closed (64 idle, 1 refused, 1 served): watch ends by itself.
    let o = wait_at_most(child, Duration::from_secs(60), "watch --listen");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("watched 1 transactions"), "{out}");
}
