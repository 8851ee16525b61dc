//! Commands over many histories (`check`, `stats`, `predict` given several files or a
//! directory): one line per history, then a summary line; the exit code is the largest of the
//! histories' codes (as dbcop and elle-cli report a batch).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rayon::prelude::*;

use isopredict::formats::{self, Format};
use isopredict::History;

use super::{read_input, EXIT_BAD_INPUT};

/// The histories the command-line paths name ([`formats::walk::walk_histories`]: folders
/// walked once each, entries that are not histories skipped with a note on standard error),
/// and whether there is more than one or a directory was walked (the "many" mode).
pub fn expand(paths: &[PathBuf], format: Option<Format>) -> anyhow::Result<(Vec<PathBuf>, bool)> {
    let mut all = Vec::new();
    let mut walked = false;
    for p in paths {
        let found = formats::walk::walk_histories(p, format)
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        walked |=
            found.histories.len() != 1 || found.histories[0] != *p || !found.skipped.is_empty();
        for skipped in &found.skipped {
            eprintln!(
                "note: skipped {} ({})",
                skipped.path.display(),
                skipped.reason
            );
        }
        SKIPPED.fetch_add(found.skipped.len(), std::sync::atomic::Ordering::Relaxed);
        all.extend(found.histories);
    }
    let many = all.len() != 1 || walked;
    Ok((all, many))
}

/// Entries skipped while walking folders (for the summary line).
static SKIPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One history's outcome: its exit code and its line (without the path).
pub struct Outcome {
    /// 0 consistent / nothing found, 1 violation / prediction, 2 bad input, 3 unknown.
    pub code: u8,
    /// What to print after the path.
    pub line: String,
}

/// Reads and runs `each` on every history (in parallel), prints `PATH: line` in path order
/// and a summary, and returns the largest exit code.
pub fn run(
    paths: &[PathBuf],
    format: Option<Format>,
    each: impl Fn(&History, Format) -> Outcome + Sync,
) -> anyhow::Result<ExitCode> {
    run_paths(paths, |p| match read_input(p, format) {
        Ok((h, f)) => {
            let mut outcome = each(&h, f);
            for note in h.input_notes() {
                outcome.line.push_str(&format!(" (note: {note})"));
            }
            outcome
        }
        Err(e) => Outcome {
            code: EXIT_BAD_INPUT,
            line: format!("bad input: {e}"),
        },
    })
}

/// Runs `each` on every path (in parallel), prints `PATH: line` in path order and a
/// summary, and returns the largest exit code.
pub fn run_paths(
    paths: &[PathBuf],
    each: impl Fn(&Path) -> Outcome + Sync,
) -> anyhow::Result<ExitCode> {
    let outcomes: Vec<Outcome> = paths.par_iter().map(|p| each(p)).collect();
    let mut out = std::io::stdout().lock();
    let mut counts = [0usize; 4];
    for (p, o) in paths.iter().zip(&outcomes) {
        writeln!(out, "{}: {}", display(p), o.line)?;
        counts[o.code.min(3) as usize] += 1;
    }
    let skipped = SKIPPED.load(std::sync::atomic::Ordering::Relaxed);
    writeln!(
        out,
        "{} histories: {} ok, {} found, {} bad input, {} unknown{}",
        paths.len(),
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        if skipped > 0 {
            format!(" ({skipped} other entries skipped)")
        } else {
            String::new()
        }
    )?;
    let worst = outcomes.iter().map(|o| o.code).max().unwrap_or(0);
    Ok(ExitCode::from(worst))
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
