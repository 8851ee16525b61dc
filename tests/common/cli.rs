//! Helpers for end-to-end tests of the built `isopredict` binary: run it, read what it
//! printed, and a scratch directory per test.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs the built binary with `args` (stdin empty) and waits for it.
pub fn isopredict(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// Runs the built binary with `args` in folder `dir`, with `PATH` set to `path` (where an
/// application's client programs are found: [`super::postgres::path_with`]).
pub fn isopredict_in(dir: &Path, path: &OsStr, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// Runs the built binary with `args` and `input` on its standard input, and waits for it.
pub fn isopredict_with_stdin(args: &[&str], input: &[u8]) -> Output {
    output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_isopredict")).args(args),
        input,
    )
}

/// Runs `command` with `input` on its standard input and collects what it printed. The input
/// is written on a thread of its own, so a child that prints much before it has read all of
/// it cannot block on a full pipe; a child that ends without reading it all is not an error
/// here (its exit status and output say what happened).
pub fn output_with_stdin(command: &mut Command, input: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    std::thread::scope(|s| {
        s.spawn(move || {
            let _ = stdin.write_all(input);
        });
        child.wait_with_output().unwrap()
    })
}

/// Runs `isopredict ARGS` like [`isopredict`], but kills it and fails if it has not ended
/// after `guard`: a guard against a hang (a limit that is not honoured makes a command run for
/// minutes), set far above any honest run, never a speed bar (speed lives in benches/).
pub fn isopredict_unless_hung(args: &[&str], guard: std::time::Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // The pipes are drained on threads so that a large output cannot block the child.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).map(|_| v)
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).map(|_| v)
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > guard {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`isopredict {}` hung: still running after {guard:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap().unwrap(),
        stderr: err.join().unwrap().unwrap(),
    }
}

/// What the binary printed on stdout.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the binary printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A file of the AWDIT test data (`relative` to its folder), as a command-line argument.
pub fn awdit(relative: &str) -> String {
    super::testdata_dir()
        .join("awdit")
        .join(relative)
        .display()
        .to_string()
}

/// Asserts that the binary exited with `code` (showing what it printed if not) and reads its
/// standard output as JSON (for commands run with `--json`).
pub fn json_output(o: &Output, code: i32) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(code), "{}{}", stdout(o), stderr(o));
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// `isopredict rank` over a tiny grid of built-in workloads: Smallbank and Voter, seeds 1 and
/// 2, the small size, causal and rc (8 tasks); the caller adds the rest of the arguments.
pub const RANK_TINY_GRID: &[&str] = &[
    "rank",
    "--workloads",
    "smallbank,voter",
    "--seeds",
    "1..2",
    "--sizes",
    "small",
    "--levels",
    "causal,rc",
];

/// Every file under `dir` (recursively), by path relative to `dir`, with its content.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// A fresh scratch directory for one test, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// An empty directory named after the test binary, the file of the test that asks for it,
    /// the process and `name`: the files of one binary may choose the same `name`.
    #[track_caller]
    pub fn new(name: &str) -> Scratch {
        let file = Path::new(std::panic::Location::caller().file());
        let dir = std::env::temp_dir().join(format!(
            "isopredict-{}-{}-{}-{name}",
            env!("CARGO_CRATE_NAME"),
            file.file_stem().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// `name` inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// `name` inside the directory, as a command-line argument.
    pub fn arg(&self, name: &str) -> String {
        self.join(name).display().to_string()
    }

    /// Copies shipped IsoPredict traces (`isopredict-traces/FILE` of the test data) to
    /// `dir/GROUP/FILE` inside the directory, for each (GROUP, FILE): the layout of `rank
    /// --histories`. Returns `dir` as a command-line argument.
    pub fn traces_by_group(&self, dir: &str, files: &[(&str, &str)]) -> String {
        let traces = super::testdata_dir().join("isopredict-traces");
        for (group, file) in files {
            let folder = self.join(dir).join(group);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::copy(traces.join(file), folder.join(file)).unwrap();
        }
        self.arg(dir)
    }

    /// The text of file `name` inside the directory (panics, naming it, if unreadable).
    pub fn read(&self, name: &str) -> String {
        let path = self.join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
