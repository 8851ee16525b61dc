//! Helpers for end-to-end tests of the built `isopredict` binary: run it, read what it
//! printed, and a scratch directory per test.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs the built binary with `args` (stdin empty) and waits for it.
pub fn isopredict(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_isopredict"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// What the binary printed on stdout.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the binary printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh scratch directory for one test, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// An empty directory named after the test binary, the process and `name`.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "isopredict-{}-{}-{name}",
            env!("CARGO_CRATE_NAME"),
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
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
