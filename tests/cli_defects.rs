//! End-to-end tests of the defects found by trying to break the tool (issue 24, second list):
//! each test names its item and failed before the fix.

mod common;

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
    assert!(first.starts_with("NOCONFLICT: "), "{first}");
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
            .any(|l| l.starts_with("violations: 1 (1 NOCONFLICT)")),
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
    // takes minutes (tests/cli_interrupt.rs).
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
            "20000",
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
            start.elapsed() < Duration::from_secs(60),
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
