//! Commands over many histories (`check`, `stats`, `predict` given several files or a
//! directory): one line per history, then a summary line; the exit code is the largest of the
//! histories' codes (as dbcop and elle-cli report a batch). `check`'s batch runs as
//! independent cells ([`isopredict::pipeline::check_cells`]), also across machines.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rayon::prelude::*;

use isopredict::formats::{self, Format};
use isopredict::pipeline::cells::{read_results as cell_results, write_plan};
use isopredict::pipeline::check_cells::{
    batch_summary, check_many, check_plan, merge_check, run_check_plan_cell, CheckBatch,
    CheckOptions,
};
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
            isopredict::ewriteln!(
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

/// `check`'s many histories as independent cells (docs/distributed.md).
#[derive(clap::Args)]
pub struct CellArgs {
    /// Write the histories as a plan (one JSON line per history) to FILE instead of checking
    /// them; with --cell, the plan to run a cell of.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Run cell N of --plan FILE and write its result into --out DIR (cell-N.json).
    #[arg(long, value_name = "N", requires = "plan", conflicts_with = "merge")]
    pub cell: Option<usize>,
    /// With --cell: the folder its result file goes to.
    #[arg(long, value_name = "DIR", requires = "cell")]
    pub out: Option<PathBuf>,
    /// Print the batch (a line per history and the summary) from the cell results in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "plan")]
    pub merge: Option<PathBuf>,
}

impl CellArgs {
    /// Whether any of the cell options is given.
    pub fn any(&self) -> bool {
        self.plan.is_some() || self.cell.is_some() || self.merge.is_some()
    }
}

/// `check --plan`, `--cell` or `--merge`: writes the plan of `files`, runs one cell, or
/// prints the merged batch (exit code: the largest of the histories').
pub fn check_cells(
    cells: &CellArgs,
    files: &[PathBuf],
    options: &CheckOptions,
) -> anyhow::Result<ExitCode> {
    let bad = |message: String| {
        isopredict::ewriteln!("error: {message}");
        Ok(ExitCode::from(EXIT_BAD_INPUT))
    };
    if let Some(dir) = &cells.merge {
        return match cell_results(dir).and_then(|r| merge_check(&r, &dir.display().to_string())) {
            Ok(batch) => print_batch(&batch),
            Err(e) => bad(e),
        };
    }
    let Some(plan) = &cells.plan else {
        return bad("--cell needs --plan FILE".to_string());
    };
    if let Some(n) = cells.cell {
        let Some(out) = &cells.out else {
            return bad("--cell needs --out DIR, the folder for its result".to_string());
        };
        return match run_check_plan_cell(plan, n, out) {
            Ok(path) => {
                isopredict::ewriteln!("wrote {}", path.display());
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => match super::interrupted() {
                Some(code) => Ok(code),
                None => bad(e),
            },
        };
    }
    let (paths, _) = expand(
        files,
        options.format.as_deref().and_then(|f| f.parse().ok()),
    )?;
    let skipped = SKIPPED.load(std::sync::atomic::Ordering::Relaxed);
    match check_plan(&paths, files, skipped, options).and_then(|text| {
        write_plan(plan, &text)?;
        Ok(paths.len())
    }) {
        Ok(n) => {
            isopredict::ewriteln!("wrote {} ({n} cells)", plan.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => bad(e),
    }
}

/// `check` on many histories: the plan, its cells on this machine's threads, the merge
/// ([`check_many`]); prints the batch.
pub fn check_batch(paths: &[PathBuf], options: &CheckOptions) -> anyhow::Result<ExitCode> {
    let skipped = SKIPPED.load(std::sync::atomic::Ordering::Relaxed);
    match check_many(paths, skipped, options, &indicatif::ProgressBar::hidden()) {
        Ok(batch) => print_batch(&batch),
        Err(e) => match super::interrupted() {
            Some(code) => Ok(code),
            None => {
                isopredict::ewriteln!("error: {e}");
                Ok(ExitCode::from(EXIT_BAD_INPUT))
            }
        },
    }
}

fn print_batch(batch: &CheckBatch) -> anyhow::Result<ExitCode> {
    let mut out = super::stdout();
    out.write_all(batch.to_text().as_bytes())?;
    Ok(ExitCode::from(batch.worst()))
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
    writeln!(out, "{}", batch_summary(paths.len(), counts, skipped))?;
    let worst = outcomes.iter().map(|o| o.code).max().unwrap_or(0);
    Ok(ExitCode::from(worst))
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
