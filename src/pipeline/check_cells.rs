//! `check` over many histories as independent cells (docs/distributed.md): a plan with one
//! cell per history, a cell that judges one history through the one decision core
//! ([`crate::verdict`]) and writes its one-line verdict, and a merge that prints the lines in
//! plan order and the batch summary. `check DIR` on one machine is the same plan, its cells on
//! rayon's threads, and the same merge ([`check_many`]), so a folder judged across machines
//! (scripts/check-on-ray) prints what `check DIR` prints.

use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::ProgressBar;

use super::cells::{self, PlanLine};
use crate::check::Level;
use crate::formats::Format;
use crate::ser::Engine;
use crate::verdict::{self, DecideError, Evidence, EvidenceChoice, Limits, Outcome, ReadOptions};

/// Exit code of a batch line with bad input.
const EXIT_BAD_INPUT: u8 = 2;
/// The most edges of one cycle described (as `check` on one history).
const MAX_CYCLE_EDGES: usize = 100;

/// How `check` judges each history of a batch (its command-line options).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckOptions {
    /// The level (`None`: every level, strongest first).
    pub level: Option<Level>,
    /// What verdicts may rely on (`None`: everything the input carries).
    pub evidence: Option<Evidence>,
    /// The engine for ser, si and pc.
    pub engine: Engine,
    /// Give up after this long.
    pub timeout: Option<Duration>,
    /// Describe at most this many violations.
    pub max_violations: usize,
    /// TimeKiller's initial value of every key (`None`: `null`).
    pub initial_value: Option<i64>,
    /// Whether the initial value was given, even as `null` ([`ReadOptions::initial_value_given`]).
    #[serde(default)]
    pub initial_value_given: bool,
    /// The input format's name (`None`: detected).
    pub format: Option<String>,
    /// The memory budget in bytes (`None`: the default share of the memory of the machine
    /// that runs the cell, [`crate::predict::default_memory_budget`]).
    #[serde(default)]
    pub memory: Option<u64>,
}

impl CheckOptions {
    /// The evidence choice.
    pub fn evidence_choice(&self) -> EvidenceChoice {
        self.evidence
            .map_or(EvidenceChoice::Auto, EvidenceChoice::Only)
    }

    /// The limits of a verdict (`witness`: on a pass, a witness commit order).
    pub fn limits(&self, witness: bool) -> Limits {
        Limits {
            timeout: self.timeout,
            engine: self.engine,
            max_violations: self.max_violations,
            witness,
            explain: true,
            max_cycle_edges: Some(MAX_CYCLE_EDGES),
            explain_timeout: None,
            memory: self.memory.or_else(crate::predict::default_memory_budget),
        }
    }

    /// How histories are read; an unknown format name is an error.
    pub fn read_options(&self) -> Result<ReadOptions, String> {
        Ok(ReadOptions {
            format: self
                .format
                .as_deref()
                .map(str::parse::<Format>)
                .transpose()?,
            initial_value: self.initial_value,
            initial_value_given: self.initial_value_given,
        })
    }
}

/// The exit code of a verdict: 0 consistent, 1 violated, 3 unknown.
pub fn exit_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Consistent => 0,
        Outcome::Violated => 1,
        Outcome::Unknown => 3,
    }
}

/// One history's line in a batch.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckLine {
    /// The history, as named on the command line or found in a folder.
    pub path: PathBuf,
    /// 0 consistent, 1 violation, 2 bad input, 3 unknown.
    pub code: u8,
    /// What is printed after the path.
    pub line: String,
}

/// The one-line verdict of the history at `path` (read as `shown`'s line): the same decision
/// core as `check` on one file.
pub fn check_one(path: &Path, shown: &Path, options: &CheckOptions) -> CheckLine {
    let line = |code: u8, line: String| CheckLine {
        path: shown.to_path_buf(),
        code,
        line,
    };
    let read = options
        .read_options()
        .map_err(|e| e.to_string())
        .and_then(|o| verdict::read_input(path, o).map_err(|e| e.to_string()));
    let (input, format) = match read {
        Ok(read) => read,
        Err(e) => return line(EXIT_BAD_INPUT, format!("bad input: {e}")),
    };
    let limits = options.limits(false);
    let evidence = options.evidence_choice();
    let decided: Result<(u8, String), DecideError> = match options.level {
        Some(level) => verdict::decide(&input, level, evidence, &limits)
            .map(|v| (exit_code(v.verdict), v.line())),
        None => verdict::decide_all(&input, evidence, &limits)
            .map(|all| (exit_code(all.outcome()), all.one_line())),
    };
    let mut result = match decided {
        Ok((code, text)) => line(code, format!("[{format}] {text}")),
        Err(e) => line(EXIT_BAD_INPUT, format!("error: {e}")),
    };
    if let Some(h) = input.history_if_built() {
        for note in h.input_notes() {
            result.line.push_str(&format!(" (note: {note})"));
        }
    }
    result
}

/// What the whole batch is, on every line of a check plan.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckPlanGrid {
    /// Always `check` (a plan of another command is refused).
    pub command: String,
    /// How each history is judged.
    pub options: CheckOptions,
    /// Entries skipped while walking the folders (not histories), for the summary.
    pub skipped: usize,
    /// The folder the plan was made in: relative paths that do not exist where a cell runs
    /// are looked up under it.
    pub cwd: PathBuf,
    /// The files and folders the plan was made from (`check`'s arguments): a cell reads only
    /// histories under them ([`cells::under_roots`]).
    #[serde(default)]
    pub roots: Vec<PathBuf>,
}

/// One cell of a check plan: a history.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckTask {
    /// The history's path, as found.
    pub path: PathBuf,
}

/// The plan of a batch: one cell per history, in the order given.
/// `roots`: the files and folders the histories were found under (the command's arguments).
pub fn check_plan(
    paths: &[PathBuf],
    roots: &[PathBuf],
    skipped: usize,
    options: &CheckOptions,
) -> Result<String, String> {
    let grid = CheckPlanGrid {
        command: "check".to_string(),
        options: options.clone(),
        skipped,
        cwd: std::env::current_dir().unwrap_or_default(),
        roots: cells::plan_roots(roots),
    };
    let tasks: Vec<(u64, CheckTask)> = paths
        .iter()
        .map(|p| {
            let cost = std::fs::metadata(p).map_or(0, |m| m.len());
            (cost, CheckTask { path: p.clone() })
        })
        .collect();
    cells::plan_text(&grid, &tasks)
}

fn parse_check_plan(
    text: &str,
    origin: &str,
) -> Result<Vec<PlanLine<CheckPlanGrid, CheckTask>>, String> {
    let lines = cells::parse_plan::<CheckPlanGrid, CheckTask>(text, origin)?;
    if lines[0].grid.command != "check" {
        return Err(format!(
            "{origin}: a plan of `{}`, not of `check`",
            lines[0].grid.command
        ));
    }
    let grid = &lines[0].grid;
    grid.options.read_options()?;
    cells::check_timeout(grid.options.timeout, origin)?;
    for l in &lines {
        if l.grid != *grid {
            return Err(format!(
                "{origin}, line {}: a grid unlike line 1's: a plan has one grid",
                l.cell + 1
            ));
        }
        if !cells::under_roots(&l.task.path, &grid.roots) {
            return Err(cells::outside_roots(
                origin,
                l.cell + 1,
                &l.task.path,
                &grid.roots,
            ));
        }
    }
    Ok(lines)
}

/// Runs a check cell: the history, found under the plan's folder if its relative path does
/// not exist here.
fn run_check_cell(grid: &CheckPlanGrid, task: &CheckTask) -> CheckLine {
    let path = &task.path;
    let found = if path.is_relative() && !path.exists() && grid.cwd.join(path).exists() {
        grid.cwd.join(path)
    } else {
        path.clone()
    };
    check_one(&found, path, &grid.options)
}

/// Runs cell `n` of the check plan file `plan` and writes its result into `out`
/// atomically; returns the result file.
pub fn run_check_plan_cell(plan: &Path, n: usize, out: &Path) -> Result<PathBuf, String> {
    cells::run_plan_file_cell(plan, n, out, parse_check_plan, run_check_cell)
}

/// A judged batch: one line per history, in order, and the entries skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckBatch {
    /// The histories' lines.
    pub lines: Vec<CheckLine>,
    /// Entries skipped while walking folders.
    pub skipped: usize,
}

impl CheckBatch {
    /// The largest exit code (0 for an empty batch).
    pub fn worst(&self) -> u8 {
        self.lines.iter().map(|l| l.code).max().unwrap_or(0)
    }

    /// What `check` prints: `PATH: line` per history, then the summary.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mut counts = [0usize; 4];
        for l in &self.lines {
            out.push_str(&format!("{}: {}\n", l.path.display(), l.line));
            counts[l.code.min(3) as usize] += 1;
        }
        out.push_str(&batch_summary(self.lines.len(), counts, self.skipped));
        out.push('\n');
        out
    }
}

/// The summary line of a batch: histories, then how many per exit code (0 to 3).
pub fn batch_summary(histories: usize, counts: [usize; 4], skipped: usize) -> String {
    format!(
        "{histories} histories: {} ok, {} found, {} bad input, {} unknown{}",
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        if skipped > 0 {
            format!(" ({skipped} other entries skipped)")
        } else {
            String::new()
        }
    )
}

/// The batch from its cells' results (exactly the cells of one check plan).
pub fn merge_check(results: &[(String, String)], origin: &str) -> Result<CheckBatch, String> {
    let results = cells::parse_results::<CheckPlanGrid, CheckLine>(results, origin)?;
    if results[0].grid.command != "check" {
        return Err(format!(
            "{origin}: results of `{}`, not of `check`",
            results[0].grid.command
        ));
    }
    let skipped = results[0].grid.skipped;
    Ok(CheckBatch {
        lines: results.into_iter().map(|r| r.result).collect(),
        skipped,
    })
}

/// `check` over many histories on this machine: the plan, its cells on rayon's threads (the
/// largest files first), and the merge — the steps of a distributed run. Errors: a stop
/// requested by the user.
pub fn check_many(
    paths: &[PathBuf],
    skipped: usize,
    options: &CheckOptions,
    progress: &ProgressBar,
) -> Result<CheckBatch, String> {
    let text = check_plan(paths, paths, skipped, options)?;
    let lines = parse_check_plan(&text, "the plan")?;
    let results = cells::run_local(&text, &lines, progress, |t| {
        run_check_cell(&lines[0].grid, t)
    })?;
    merge_check(&cells::named_results(results), "the batch")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> CheckOptions {
        CheckOptions {
            level: None,
            evidence: None,
            engine: Engine::Auto,
            timeout: None,
            max_violations: 1000,
            initial_value: None,
            initial_value_given: false,
            format: None,
            memory: None,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "isopredict-check-cells-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A consistent history, a lost update (not ser, not si) and a file that is no history.
    fn histories(dir: &Path) -> Vec<PathBuf> {
        let ok = dir.join("a-ok.txt");
        std::fs::write(&ok, "w(1,1,0,1)\nr(1,1,1,2)\n").unwrap();
        let lost = dir.join("b-lost.txt");
        std::fs::write(&lost, "r(1,0,0,1)\nw(1,1,0,1)\nr(1,0,1,2)\nw(1,2,1,2)\n").unwrap();
        let bad = dir.join("c-bad.txt");
        std::fs::write(&bad, "w(1,1,0,1)\nr(1,\n").unwrap();
        vec![ok, lost, bad]
    }

    #[test]
    fn cells_on_files_merge_to_the_local_batch() {
        let dir = scratch("merge");
        let paths = histories(&dir);
        let local = check_many(&paths, 2, &options(), &ProgressBar::hidden()).unwrap();
        assert_eq!(local.lines.len(), 3);
        assert_eq!(local.worst(), 2);
        assert_eq!(local.lines[2].code, 2, "{:?}", local.lines[2]);
        assert!(local.lines[2].line.starts_with("bad input"));
        let text = local.to_text();
        assert!(
            text.ends_with(
                "3 histories: 1 ok, 1 found, 1 bad input, 0 unknown (2 other entries skipped)\n"
            ),
            "{text}"
        );
        // The same batch as a plan file, its cells run one by one (last first), merged.
        let plan = dir.join("plan.jsonl");
        cells::write_plan(
            &plan,
            &check_plan(&paths, std::slice::from_ref(&dir), 2, &options()).unwrap(),
        )
        .unwrap();
        let out = dir.join("cells");
        for n in (0..3).rev() {
            run_check_plan_cell(&plan, n, &out).unwrap();
        }
        let merged = merge_check(&cells::read_results(&out).unwrap(), "cells").unwrap();
        assert_eq!(merged.to_text(), text);
        assert!(run_check_plan_cell(&plan, 3, &out)
            .unwrap_err()
            .contains("no cell 3"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rank_plan_is_not_a_check_plan() {
        let dir = scratch("kind");
        let paths = histories(&dir);
        let text = check_plan(&paths, std::slice::from_ref(&dir), 0, &options()).unwrap();
        let as_rank = text.replace("\"command\":\"check\"", "\"command\":\"rank\"");
        assert!(parse_check_plan(&as_rank, "p")
            .unwrap_err()
            .contains("not of `check`"));
        let bad_format = text.replace("\"format\":null", "\"format\":\"nope\"");
        assert!(parse_check_plan(&bad_format, "p")
            .unwrap_err()
            .contains("unknown format"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
