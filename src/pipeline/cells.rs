//! Work as independent cells: a *plan* (one JSON line per cell), cells run anywhere, and a
//! *merge* of their result files (docs/distributed.md).
//!
//! `rank` and `check` over many histories are embarrassingly parallel: every prediction task,
//! exploration run or history is judged on its own. A plan lists them, one line each, with
//! everything a cell needs (what to run, the grid's options, deterministic seeds); a cell is
//! run by its index and writes one result file, atomically, named after its index; the merge
//! reads the results back in plan order and builds the command's output. One-machine `rank`
//! and `check DIR` are the same three steps in one process — plan in memory, cells on rayon's
//! threads, results serialized and read back exactly as from files — so a distributed run
//! (scripts/rank-on-ray) and a local one go through one code path and give the same tables.
//!
//! A result names its plan by a fingerprint of the plan's bytes, so results of two different
//! plans in one folder are refused instead of mixed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use indicatif::ProgressBar;
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// One line of a plan: a cell, the grid it belongs to, and what it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanLine<G, T> {
    /// The cell's index (its line number, from 0).
    pub cell: usize,
    /// Cells in the plan.
    pub cells: usize,
    /// A rough cost, to start the longest cells first (no effect on results).
    pub cost: u64,
    /// What the whole grid is (the same on every line): what the merge needs.
    pub grid: G,
    /// What this cell runs.
    pub task: T,
}

/// Where and when a cell ran (for the merged report's wall-time line only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worker {
    /// The machine's host name.
    pub host: String,
    /// The process.
    pub pid: u32,
    /// Start, seconds since the Unix epoch.
    pub start_s: f64,
    /// End, seconds since the Unix epoch.
    pub end_s: f64,
}

/// A cell's result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellResult<G, R> {
    /// The cell's index.
    pub cell: usize,
    /// Cells in the plan.
    pub cells: usize,
    /// The plan's fingerprint ([`fingerprint`]).
    pub plan: String,
    /// The grid, as in the plan.
    pub grid: G,
    /// Where and when it ran.
    pub worker: Worker,
    /// What the cell produced.
    pub result: R,
}

/// The longest time limit a plan may give a cell, in seconds: the command line's `--timeout`
/// range (10⁹ s), so a plan line cannot ask for what its arguments could not.
pub const MAX_TIMEOUT_SECS: u64 = 1_000_000_000;

/// Checks a plan's time limit against [`MAX_TIMEOUT_SECS`] (the error names `origin`).
pub fn check_timeout(timeout: Option<std::time::Duration>, origin: &str) -> Result<(), String> {
    match timeout {
        Some(t) if t.as_secs() > MAX_TIMEOUT_SECS || (t.as_secs() == MAX_TIMEOUT_SECS && t.subsec_nanos() > 0) => {
            Err(format!(
                "{origin}: the timeout ({} s) is out of range: a plan gives 0 (no limit) to {MAX_TIMEOUT_SECS} seconds, as --timeout does",
                t.as_secs()
            ))
        }
        _ => Ok(()),
    }
}

/// `path` with `.` dropped and `..` applied to the component before it, without looking at
/// the filesystem; leading `..` of a relative path are kept, `..` at `/` stays at `/`.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            _ => out.push(c),
        }
    }
    out.iter().collect()
}

/// Whether a plan's history `path` is one of the plan's declared `roots` or lies under one:
/// compared component by component after `.` and `..` are applied, a relative path only with
/// relative roots and an absolute one only with absolute roots (the two are resolved
/// against the same folder). A plan may name only histories its maker was given.
/// The folder the plan was made in (`.`, or a path that comes back to it) holds every relative
/// path that does not climb out of it.
pub fn under_roots(path: &Path, roots: &[PathBuf]) -> bool {
    let path = lexical(path);
    roots.iter().any(|root| {
        let root = lexical(root);
        if root.as_os_str().is_empty() {
            return !path.is_absolute() && !path.starts_with("..");
        }
        root.is_absolute() == path.is_absolute() && path.starts_with(&root)
    })
}

/// The most roots a plan declares: every line carries them.
const MOST_ROOTS: usize = 16;

/// The roots a plan declares for `paths` (the files and folders it was made from), at most
/// [`MOST_ROOTS`] of them, since every plan line carries them: the paths themselves when
/// there are few, else their folders, else `/` and `.` (every absolute path, and every
/// relative one under the folder the plan was made in).
pub fn plan_roots(paths: &[PathBuf]) -> Vec<PathBuf> {
    if paths.len() <= MOST_ROOTS {
        return paths.to_vec();
    }
    let mut parents: Vec<PathBuf> = paths
        .iter()
        .map(|p| {
            let p = lexical(p);
            match p.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ if p.is_absolute() => p,
                _ => PathBuf::from("."),
            }
        })
        .collect();
    parents.sort();
    parents.dedup();
    if parents.len() <= MOST_ROOTS {
        return parents;
    }
    let mut top = Vec::new();
    if paths.iter().any(|p| p.is_absolute()) {
        top.push(PathBuf::from("/"));
    }
    if paths.iter().any(|p| !p.is_absolute()) {
        top.push(PathBuf::from("."));
    }
    top
}

/// The error of a plan line naming a history outside its roots.
pub fn outside_roots(origin: &str, line: usize, path: &Path, roots: &[PathBuf]) -> String {
    let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    format!(
        "{origin}, line {line}: {} is not under the plan's roots ({}): a cell reads only the histories the plan was made from",
        path.display(),
        if roots.is_empty() {
            "none declared".to_string()
        } else {
            roots.join(", ")
        }
    )
}

/// The fingerprint of a plan's text: 16 hex digits of its stable hash.
pub fn fingerprint(plan_text: &str) -> String {
    format!(
        "{:016x}",
        crate::stable_hash::StableHasher::new()
            .bytes(plan_text.as_bytes())
            .finish()
    )
}

/// The plan's text: one JSON line per cell, in grid order.
pub fn plan_text<G: Serialize + Clone, T: Serialize>(
    grid: &G,
    tasks: &[(u64, T)],
) -> Result<String, String> {
    let mut text = String::new();
    for (i, (cost, task)) in tasks.iter().enumerate() {
        let line = PlanLine {
            cell: i,
            cells: tasks.len(),
            cost: *cost,
            grid: grid.clone(),
            task,
        };
        text.push_str(&serde_json::to_string(&line).map_err(|e| e.to_string())?);
        text.push('\n');
    }
    Ok(text)
}

/// Writes a plan file atomically.
pub fn write_plan(path: &Path, text: &str) -> Result<(), String> {
    crate::output::write_file_atomically(path, |w| w.write_all(text.as_bytes()))
        .map_err(|e| e.to_string())
}

/// Every line of a plan, parsed; errors name the file and line.
pub fn parse_plan<G: DeserializeOwned, T: DeserializeOwned>(
    text: &str,
    origin: &str,
) -> Result<Vec<PlanLine<G, T>>, String> {
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: PlanLine<G, T> = serde_json::from_str(line).map_err(|e| {
            format!(
                "{origin}, line {}: not a plan line of this command: {e}",
                n + 1
            )
        })?;
        if parsed.cell != lines.len() {
            return Err(format!(
                "{origin}, line {}: cell {} where cell {} was expected",
                n + 1,
                parsed.cell,
                lines.len()
            ));
        }
        lines.push(parsed);
    }
    if lines.is_empty() {
        return Err(format!("{origin}: the plan has no cells"));
    }
    if let Some(bad) = lines.iter().position(|l| l.cells != lines.len()) {
        return Err(format!(
            "{origin}, line {}: says {} cells, the plan has {}",
            bad + 1,
            lines[bad].cells,
            lines.len()
        ));
    }
    Ok(lines)
}

/// Reads a plan file: its text (for the fingerprint) and its lines.
pub fn read_plan<G: DeserializeOwned, T: DeserializeOwned>(
    path: &Path,
) -> Result<(String, Vec<PlanLine<G, T>>), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let lines = parse_plan(&text, &path.display().to_string())?;
    Ok((text, lines))
}

/// Seconds since the Unix epoch.
fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that many bytes.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    if ok && end > 0 {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "unknown".to_string()
    }
}

/// Runs one cell of a plan (`plan_text` is the plan's bytes, `line` its parsed line) and
/// returns its result file's text (one JSON line).
pub fn run_cell<G: Serialize + Clone, T, R: Serialize>(
    plan_text: &str,
    line: &PlanLine<G, T>,
    run: impl FnOnce(&T) -> R,
) -> Result<String, String> {
    let start_s = now_s();
    let result = run(&line.task);
    let end_s = now_s();
    let cell = CellResult {
        cell: line.cell,
        cells: line.cells,
        plan: fingerprint(plan_text),
        grid: line.grid.clone(),
        worker: Worker {
            host: host_name(),
            pid: std::process::id(),
            start_s,
            end_s,
        },
        result,
    };
    serde_json::to_string(&cell)
        .map(|s| s + "\n")
        .map_err(|e| e.to_string())
}

/// The file a cell's result is written to in a results folder.
pub fn result_file_name(cell: usize) -> String {
    format!("cell-{cell:06}.json")
}

/// Runs cell `n` of the plan file `plan` and writes its result into `out` atomically;
/// returns the result file. `parse` reads the command's plan (refusing another command's),
/// `run` runs one task. A stop requested by the user writes nothing.
pub fn run_plan_file_cell<G: Serialize + Clone, T, R: Serialize>(
    plan: &Path,
    n: usize,
    out: &Path,
    parse: impl FnOnce(&str, &str) -> Result<Vec<PlanLine<G, T>>, String>,
    run: impl FnOnce(&G, &T) -> R,
) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(plan)
        .map_err(|e| format!("{}: cannot read: {e}", plan.display()))?;
    let mut lines = parse(&text, &plan.display().to_string())?;
    if n >= lines.len() {
        return Err(format!(
            "{}: no cell {n} (the plan has cells 0 to {})",
            plan.display(),
            lines.len() - 1
        ));
    }
    let line = lines.swap_remove(n);
    let result = run_cell(&text, &line, |t| run(&line.grid, t))?;
    crate::interrupt::stop_point().map_err(|_| "interrupted: no result written".to_string())?;
    write_result(out, n, &result)
}

/// Writes a cell's result into `dir` (created if needed), atomically; returns its path.
pub fn write_result(dir: &Path, cell: usize, text: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let path = dir.join(result_file_name(cell));
    crate::output::write_file_atomically(&path, |w| w.write_all(text.as_bytes()))
        .map_err(|e| e.to_string())?;
    Ok(path)
}

/// Runs every cell of a plan on rayon's pool (longest first), advancing `progress`, and
/// returns their result texts in plan order. A stop requested by the user
/// ([`crate::interrupt`]) skips the remaining cells and is an error.
pub fn run_local<G, T, R>(
    plan_text: &str,
    lines: &[PlanLine<G, T>],
    progress: &ProgressBar,
    run: impl Fn(&T) -> R + Sync,
) -> Result<Vec<String>, String>
where
    G: Serialize + Clone + Sync,
    T: Sync,
    R: Serialize,
{
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(lines[i].cost));
    progress.set_length(lines.len() as u64);
    let mut done: Vec<(usize, Result<String, String>)> = order
        .into_par_iter()
        .filter_map(|i| {
            // Once the user interrupted, the remaining cells are skipped.
            crate::interrupt::stop_point().ok()?;
            let text = run_cell(plan_text, &lines[i], &run);
            progress.inc(1);
            Some((i, text))
        })
        .collect();
    progress.finish_and_clear();
    if crate::interrupt::requested() {
        return Err("interrupted: the work is incomplete".to_string());
    }
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

/// The cells of a plan run on this machine until done or cut ([`run_local_keeping`]).
#[derive(Debug)]
pub struct LocalRun {
    /// Each cell's result text, in plan order; `None` for a cell not answered (not started
    /// before the stop, or stopped by it).
    pub results: Vec<Option<String>>,
    /// Whether a stop (Ctrl-C, SIGTERM) cut the run: some cells are not answered.
    pub cut: bool,
}

impl LocalRun {
    /// The cells answered.
    pub fn answered(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }
}

/// Runs every cell of a plan on rayon's pool (longest first), advancing `progress`, for a
/// command that keeps what was answered when the user stops it
/// ([`crate::interrupt::keep_findings`]). Each cell runs as a [`crate::interrupt::cuttable`]
/// search, so a stop interrupts the cells in flight; once a stop arrived, no cell starts, and
/// a cell that ends after the stop is not answered (its work may have been cut short). The
/// cells that ended before the stop keep their results.
pub fn run_local_keeping<G, T, R>(
    plan_text: &str,
    lines: &[PlanLine<G, T>],
    progress: &ProgressBar,
    run: impl Fn(&T) -> R + Sync,
) -> Result<LocalRun, String>
where
    G: Serialize + Clone + Sync,
    T: Sync,
    R: Serialize,
{
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(lines[i].cost));
    progress.set_length(lines.len() as u64);
    let done: Vec<(usize, Option<Result<String, String>>)> = order
        .into_par_iter()
        .map(|i| {
            if crate::interrupt::signalled() {
                return (i, None);
            }
            let text = crate::interrupt::cuttable(|| run_cell(plan_text, &lines[i], &run));
            // A cell that ends after the stop may have been cut short: not answered.
            if crate::interrupt::signalled() {
                return (i, None);
            }
            progress.inc(1);
            (i, Some(text))
        })
        .collect();
    progress.finish_and_clear();
    let mut results = vec![None; lines.len()];
    for (i, text) in done {
        results[i] = text.transpose()?;
    }
    let cut = results.iter().any(Option::is_none);
    Ok(LocalRun { results, cut })
}

/// The result files of a folder: every `cell-N.json`, by index (other files are ignored).
pub fn result_files(dir: &Path) -> Result<Vec<(usize, PathBuf)>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("{}: cannot read: {e}", dir.display()))?;
    let mut files: BTreeMap<usize, PathBuf> = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: cannot read: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let index = name
            .strip_prefix("cell-")
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<usize>().ok());
        if let Some(i) = index {
            // Two files for one cell (`cell-7.json` and `cell-000007.json`): which one is the
            // cell's result is not for the order of the folder to decide.
            if let Some(other) = files.insert(i, entry.path()) {
                let mut both = [other, entry.path()];
                both.sort();
                return Err(format!(
                    "{}: two result files for cell {i} ({} and {}); keep one",
                    dir.display(),
                    both[0].display(),
                    both[1].display()
                ));
            }
        }
    }
    Ok(files.into_iter().collect())
}

/// Reads the result files of `dir`: (file name, text) of each `cell-N.json`, by index.
pub fn read_results(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let mut texts = Vec::new();
    for (_, path) in result_files(dir)? {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        texts.push((path.display().to_string(), text));
    }
    if texts.is_empty() {
        return Err(format!(
            "{}: no cell results (cell-N.json) in it",
            dir.display()
        ));
    }
    Ok(texts)
}

/// Result texts produced in this process, named `cell N` for [`parse_results`].
pub fn named_results(texts: Vec<String>) -> Vec<(String, String)> {
    texts
        .into_iter()
        .enumerate()
        .map(|(i, t)| (format!("cell {i}"), t))
        .collect()
}

/// Parses result texts, each with the name of where it came from, and checks that they are
/// exactly the cells of one plan: indices 0..cells, one fingerprint, one grid; returns them in
/// plan order. `origin` names the whole (a folder).
pub fn parse_results<G, R>(
    texts: &[(String, String)],
    origin: &str,
) -> Result<Vec<CellResult<G, R>>, String>
where
    G: DeserializeOwned + PartialEq,
    R: DeserializeOwned,
{
    let mut results: Vec<CellResult<G, R>> = Vec::with_capacity(texts.len());
    for (name, text) in texts {
        let r: CellResult<G, R> = serde_json::from_str(text)
            .map_err(|e| format!("{name}: not a cell result of this command: {e}"))?;
        results.push(r);
    }
    let Some(first) = results.first() else {
        return Err(format!("{origin}: no cell results"));
    };
    let (cells, plan) = (first.cells, first.plan.clone());
    let mut seen = vec![false; cells];
    for r in &results {
        if r.plan != plan || r.cells != cells || r.grid != first.grid {
            return Err(format!(
                "{origin}: cell {} belongs to another plan (fingerprint {}, {} cells) than cell {} ({plan}, {cells} cells)",
                r.cell, r.plan, r.cells, first.cell
            ));
        }
        if r.cell >= cells || seen[r.cell] {
            return Err(format!(
                "{origin}: cell {} appears twice or is out of range",
                r.cell
            ));
        }
        seen[r.cell] = true;
    }
    let missing: Vec<String> = (0..cells)
        .filter(|&i| !seen[i])
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        let shown = missing
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        return Err(format!(
            "{origin}: {} of {cells} cells have no result (cells {shown}{})",
            missing.len(),
            if missing.len() > 20 { ", …" } else { "" }
        ));
    }
    results.sort_by_key(|r| r.cell);
    Ok(results)
}

/// The span of the cells' work (first start to last end, s) and the most cells that ran at
/// once: the merged report's wall time and "threads".
pub fn span_and_concurrency(workers: &[&Worker]) -> (f64, usize) {
    let start = workers
        .iter()
        .map(|w| w.start_s)
        .fold(f64::INFINITY, f64::min);
    let end = workers
        .iter()
        .map(|w| w.end_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut events: Vec<(f64, i32)> = workers
        .iter()
        .flat_map(|w| [(w.start_s, 1), (w.end_s, -1)])
        .collect();
    // Ends before starts at the same instant: back-to-back cells do not overlap.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in events {
        now += d;
        most = most.max(now);
    }
    let span = if end >= start { end - start } else { 0.0 };
    (span, most.max(1) as usize)
}

/// Reads cell `n`'s line from a plan file: the plan's text and its parsed lines.
pub fn plan_cell<G: DeserializeOwned, T: DeserializeOwned>(
    path: &Path,
    n: usize,
) -> Result<(String, PlanLine<G, T>), String> {
    let (text, mut lines) = read_plan::<G, T>(path)?;
    if n >= lines.len() {
        return Err(format!(
            "{}: no cell {n} (the plan has cells 0 to {})",
            path.display(),
            lines.len() - 1
        ));
    }
    let line = lines.swap_remove(n);
    Ok((text, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 item 22: a plan's history must be one of its roots or under one, after `.`
    /// and `..` are applied; `.` holds every relative path that does not climb out; a plan
    /// made from many files declares their folders (every line carries the roots).
    #[test]
    fn histories_must_be_under_the_plans_roots() {
        let p = |s: &str| PathBuf::from(s);
        let roots = [p("/data/h"), p("rel/h"), p("/data/one.edn")];
        for ok in [
            "/data/h/a.txt",
            "/data/h/./x/../b.txt",
            "rel/h/a",
            "./rel/h",
            "/data/one.edn",
        ] {
            assert!(under_roots(&p(ok), &roots), "{ok}");
        }
        for bad in [
            "/data/h/../secret",
            "/data/hh/a.txt",
            "/etc/shadow",
            "rel/h/../../x",
            "/rel/h/a",
            "data/h/a.txt",
            "/data/one.edn.bak",
        ] {
            assert!(!under_roots(&p(bad), &roots), "{bad}");
        }
        assert!(!under_roots(&p("/data/h/a"), &[]));
        for dot in [p("."), p("./"), p("a/..")] {
            assert!(under_roots(&p("x/y.txt"), std::slice::from_ref(&dot)));
            assert!(!under_roots(&p("../y.txt"), std::slice::from_ref(&dot)));
            assert!(!under_roots(&p("/y.txt"), &[dot]));
        }
        // Few paths: themselves; many: their folders; many folders: `/` and `.`.
        let few: Vec<PathBuf> = (0..3).map(|i| p(&format!("/d/{i}.edn"))).collect();
        assert_eq!(plan_roots(&few), few);
        let many: Vec<PathBuf> = (0..40)
            .map(|i| p(&format!("{}/{i}.edn", if i % 2 == 0 { "/d" } else { "e" })))
            .collect();
        assert_eq!(plan_roots(&many), vec![p("/d"), p("e")]);
        let bare: Vec<PathBuf> = (0..40).map(|i| p(&format!("{i}.edn"))).collect();
        assert_eq!(plan_roots(&bare), vec![p(".")]);
        let spread: Vec<PathBuf> = (0..40)
            .map(|i| p(&format!("/d{i}/x.edn")))
            .chain((0..40).map(|i| p(&format!("r{i}/x.edn"))))
            .collect();
        assert_eq!(plan_roots(&spread), vec![p("/"), p(".")]);
        for path in &spread {
            assert!(
                under_roots(path, &plan_roots(&spread)),
                "{}",
                path.display()
            );
        }
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Grid {
        name: String,
    }

    fn plan() -> String {
        let grid = Grid {
            name: "g".to_string(),
        };
        plan_text(&grid, &[(1, 10u64), (5, 20), (3, 30)]).unwrap()
    }

    #[test]
    fn a_plan_round_trips_and_is_checked() {
        let text = plan();
        assert_eq!(text.lines().count(), 3);
        let lines: Vec<PlanLine<Grid, u64>> = parse_plan(&text, "p").unwrap();
        assert_eq!(lines[1].task, 20);
        assert_eq!(lines[2].cells, 3);
        // A line out of order, a missing line, a wrong kind of plan: refused with the line.
        let swapped: String = text.lines().rev().map(|l| format!("{l}\n")).collect();
        let e = parse_plan::<Grid, u64>(&swapped, "p").unwrap_err();
        assert!(e.contains("p, line 1: cell 2 where cell 0"), "{e}");
        let short: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
        let e = parse_plan::<Grid, u64>(&short, "p").unwrap_err();
        assert!(e.contains("says 3 cells, the plan has 2"), "{e}");
        let e = parse_plan::<Grid, String>(&text, "p").unwrap_err();
        assert!(e.contains("p, line 1: not a plan line"), "{e}");
        assert!(parse_plan::<Grid, u64>("\n", "p").is_err());
    }

    #[test]
    fn results_merge_in_plan_order_and_must_be_complete_and_of_one_plan() {
        let text = plan();
        let lines: Vec<PlanLine<Grid, u64>> = parse_plan(&text, "p").unwrap();
        let results: Vec<(String, String)> = lines
            .iter()
            .rev()
            .map(|l| (l.cell.to_string(), run_cell(&text, l, |t| t * 2).unwrap()))
            .collect();
        let parsed: Vec<CellResult<Grid, u64>> = parse_results(&results, "d").unwrap();
        assert_eq!(
            parsed.iter().map(|r| r.result).collect::<Vec<_>>(),
            vec![20, 40, 60]
        );
        assert!(parsed.iter().all(|r| r.plan == fingerprint(&text)));
        let e = parse_results::<Grid, u64>(&results[..2], "d").unwrap_err();
        assert!(e.contains("1 of 3 cells have no result (cells 0)"), "{e}");
        let e = parse_results::<Grid, String>(&results, "d").unwrap_err();
        assert!(e.starts_with("2: not a cell result"), "{e}");
        let twice = vec![results[0].clone(), results[0].clone(), results[1].clone()];
        assert!(parse_results::<Grid, u64>(&twice, "d")
            .unwrap_err()
            .contains("twice"));
        let other = plan().replace("\"g\"", "\"h\"");
        let lines2: Vec<PlanLine<Grid, u64>> = parse_plan(&other, "p").unwrap();
        let mixed = vec![
            results[0].clone(),
            results[1].clone(),
            (
                "x".to_string(),
                run_cell(&other, &lines2[0], |t| *t).unwrap(),
            ),
        ];
        assert!(parse_results::<Grid, u64>(&mixed, "d")
            .unwrap_err()
            .contains("another plan"));
    }

    #[test]
    fn results_are_written_atomically_and_read_back_by_index() {
        let dir = std::env::temp_dir().join(format!("isopredict-cells-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let text = plan();
        let lines: Vec<PlanLine<Grid, u64>> = parse_plan(&text, "p").unwrap();
        for l in &lines {
            write_result(&dir, l.cell, &run_cell(&text, l, |t| *t).unwrap()).unwrap();
        }
        std::fs::write(dir.join("plan.jsonl"), &text).unwrap();
        let back = read_results(&dir).unwrap();
        let parsed: Vec<CellResult<Grid, u64>> = parse_results(&back, "d").unwrap();
        assert_eq!(parsed.len(), 3);
        assert_eq!(
            result_files(&dir).unwrap()[2].1,
            dir.join("cell-000002.json")
        );
        let plan_file = dir.join("plan.jsonl");
        let (_, line) = plan_cell::<Grid, u64>(&plan_file, 1).unwrap();
        assert_eq!(line.task, 20);
        assert!(plan_cell::<Grid, u64>(&plan_file, 3)
            .unwrap_err()
            .contains("no cell 3"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn concurrency_is_the_most_cells_at_once() {
        let w = |a: f64, b: f64| Worker {
            host: "h".to_string(),
            pid: 1,
            start_s: a,
            end_s: b,
        };
        let ws = [w(0.0, 2.0), w(1.0, 3.0), w(2.0, 4.0), w(3.0, 5.0)];
        let refs: Vec<&Worker> = ws.iter().collect();
        assert_eq!(span_and_concurrency(&refs), (5.0, 2));
    }
}
