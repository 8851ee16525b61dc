//! `isopredict rank`: IsoPredict's evaluation (PLDI'24 §7.2–7.3) over a grid, in parallel.
//!
//! Over workloads × sizes × seeds × levels × strategies, each task records the workload run
//! (reads see the latest write), predicts, and validates a prediction by replay — the paper's
//! Tables 4/5. Beside them, MonkeyDB-style random exploration (the paper's Tables 6/7): each
//! workload × size × seed × level runs `explore` more times with reads choosing a random
//! writer the level allows (store policy `random`), counting runs whose final state breaks an
//! invariant and runs that are unserializable (exact Z3 check). Over a folder of user
//! histories (one group per subfolder), each file is predicted at every level and strategy
//! (no replay is possible). The records become the tables and the risk ranking
//! ([`crate::report::tables`]); [`write_rank_files`] writes rank.md, rank.json and the chart.
//!
//! Tasks run on rayon's pool, the longest first; each task runs in a fresh Z3 context (the z3
//! crate's context is thread-local; [`super::fresh_z3`]), so results do not depend on which
//! thread ran what before.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::check::Level;
use crate::formats;
use crate::predict::Strategy;
use crate::report::chart::risk_chart_svg;
use crate::report::tables::{
    anomalies_markdown, anomaly_risk_rows, exploration_markdown, exploration_rows,
    prediction_markdown, prediction_rows, risk_markdown, risk_rows, standing_markdown,
    ExplorationRecord, ExplorationRow, PredictionOutcome, PredictionRecord, PredictionRow, RiskRow,
    ValidationRecord,
};

use crate::store::{ReadPolicy, ScanMode};
use crate::workloads::{self, RunConfig, Size, Workload};

use super::cells::{self, PlanLine};
use super::rank_app::{predict_app, AppRunSetup, AppSpec, AppWaits};
use super::rank_predict::{predict_history, record_anomalies, task_record};
use super::{level_name, parse_level};

/// What to rank.
#[derive(Clone)]
pub enum RankInput {
    /// Workload runs.
    Workloads {
        /// The workloads.
        workloads: Vec<&'static dyn Workload>,
        /// The sizes.
        sizes: Vec<Size>,
        /// The seeds (the paper's run numbers).
        seeds: Vec<u64>,
        /// Random-exploration runs per workload × size × seed × level (0: none).
        explore: u64,
        /// Sessions (terminals) per run; the paper uses 3.
        sessions: usize,
        /// Where observed runs are recorded (`None`: the embedded store). Exploration and
        /// validation by replay always run on the embedded store.
        backend: Option<std::sync::Arc<dyn crate::store::Backend>>,
        /// How table statements find their rows in every run of the grid — recorded,
        /// replayed and explored (`rank --scan keyed|full`; docs/workloads.md, "Keyed
        /// scans").
        scan: ScanMode,
    },
    /// User histories: every file in each subfolder of `dir` (a group, named after the
    /// subfolder; files directly in `dir` form a group named after `dir`), any format.
    Histories {
        /// The folder.
        dir: PathBuf,
    },
}

/// A ranking grid.
#[derive(Clone)]
pub struct RankGrid {
    /// What to rank.
    pub input: RankInput,
    /// Levels (causal, ra, rc).
    pub levels: Vec<Level>,
    /// Strategies.
    pub strategies: Vec<Strategy>,
    /// Budget per prediction (and per serializability check).
    pub timeout: Option<Duration>,
    /// Most distinct anomalies to look for per workload task (`rank --max N`; 1: the
    /// prediction alone); above 1, a second search with the scalable engine.
    pub max: usize,
    /// What the risk ranking scores.
    pub score: RankScore,
    /// Applications ranked beside the workloads (`rank --app`), one run per seed of the grid
    /// each (docs/ranking.md "Ranking applications").
    pub apps: Vec<AppSpec>,
    /// How the applications' runs wait for turns and locks.
    pub app_waits: AppWaits,
}

/// What `rank`'s risk ranking scores (docs/ranking.md).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum RankScore {
    /// The share of runs exposed, weighted by level ([`crate::report::tables::risk_rows`]).
    #[default]
    Runs,
    /// The distinct anomalies, weighted by level
    /// ([`crate::report::tables::anomaly_risk_rows`]).
    Anomalies,
}

impl RankGrid {
    /// The grid in words (for the report's header).
    pub fn describe(&self) -> String {
        let levels: Vec<&str> = self.levels.iter().map(|&l| level_name(l)).collect();
        let strategies: Vec<&str> = self.strategies.iter().map(|s| s.name()).collect();
        let timeout = self
            .timeout
            .map_or("none".to_string(), |t| format!("{} s", t.as_secs_f64()));
        match &self.input {
            RankInput::Workloads {
                workloads, seeds, ..
            } if workloads.is_empty() && !self.apps.is_empty() => format!(
                "{}; seeds {}; levels {}; strategies {}; timeout {timeout}",
                describe_apps(&self.apps),
                describe_seeds(seeds),
                levels.join(", "),
                strategies.join(", "),
            ),
            RankInput::Workloads {
                workloads,
                sizes,
                seeds,
                explore,
                sessions,
                backend,
                scan,
            } => format!(
                "workloads {}; {sessions} sessions; sizes {}; seeds {}; levels {}; strategies {}; timeout {timeout}; random exploration {explore} run(s) per workload × size × seed × level; observed runs recorded on {}; {scan} scans",
                workloads.iter().map(|w| w.name()).collect::<Vec<_>>().join(", "),
                sizes.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
                describe_seeds(seeds),
                levels.join(", "),
                strategies.join(", "),
                backend
                    .as_ref()
                    .map_or("the embedded store".to_string(), |b| b.describe()),
            ) + &if self.apps.is_empty() {
                String::new()
            } else {
                format!("; {}", describe_apps(&self.apps))
            },
            RankInput::Histories { dir } => format!(
                "histories under {}; levels {}; strategies {}; timeout {timeout}",
                dir.display(),
                levels.join(", "),
                strategies.join(", "),
            ),
        }
    }
}

/// `applications deposit (`sh -c '…'`), … recorded through the server with ISOPREDICT_SEED`.
fn describe_apps(apps: &[AppSpec]) -> String {
    let list: Vec<String> = apps
        .iter()
        .map(|a| {
            let setup = if a.setup.is_empty() {
                String::new()
            } else {
                format!(" after `{}`", a.setup.join("`, `"))
            };
            format!("{} (`{}`{setup})", a.name, a.command)
        })
        .collect();
    format!(
        "applications {}, recorded and replayed through the recording server with {} set to the seed",
        list.join(", "),
        super::rank_app::SEED_ENV
    )
}

fn describe_seeds(seeds: &[u64]) -> String {
    let contiguous = seeds.windows(2).all(|w| w[1] == w[0] + 1);
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if contiguous && seeds.len() > 2 => format!("{a}..{b}"),
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Parses seeds: `N`, `A..B` (inclusive), or a comma-separated list of those.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, String> {
    let mut seeds = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let number = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("bad seed `{s}` in `{text}` (expected N, A..B or a list)"))
        };
        match part.split_once("..") {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b.trim_start_matches('='))?);
                if a > b {
                    return Err(format!("empty seed range `{part}`"));
                }
                if b - a > 100_000 {
                    return Err(format!("seed range `{part}` is too long"));
                }
                seeds.extend(a..=b);
            }
            None => seeds.push(number(part)?),
        }
    }
    if seeds.is_empty() {
        return Err("no seeds given".to_string());
    }
    Ok(seeds)
}

/// The result of [`rank`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct RankOutcome {
    /// The grid in words.
    pub grid: String,
    /// Wall-clock time (s).
    pub elapsed_s: f64,
    /// Worker threads.
    pub threads: usize,
    /// One record per prediction task.
    pub predictions: Vec<PredictionRecord>,
    /// One record per random-exploration run.
    pub exploration: Vec<ExplorationRecord>,
    /// Tables 4/5.
    pub prediction_table: Vec<PredictionRow>,
    /// Tables 6/7.
    pub exploration_table: Vec<ExplorationRow>,
    /// The ranking, riskiest first.
    pub ranking: Vec<RiskRow>,
    /// What the ranking scores.
    pub score: RankScore,
    /// How table statements found their rows in the grid's workload runs (`rank --scan`);
    /// `None` for a ranking of user histories.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanMode>,
    /// When Ctrl-C or SIGTERM cut the ranking: how much of the grid was answered (the tables
    /// count only those cells).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<RankCut>,
}

/// A ranking cut by Ctrl-C or SIGTERM ([`RankOutcome::cut`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RankCut {
    /// Cells answered before the stop (the tables count these).
    pub answered: usize,
    /// Cells in the grid.
    pub cells: usize,
    /// The cut in one sentence: `Ranking cut by Ctrl-C (or SIGTERM) after 12 of 40 cells; …`.
    pub sentence: String,
}

impl RankCut {
    fn new(answered: usize, cells: usize) -> RankCut {
        RankCut {
            answered,
            cells,
            sentence: format!(
                "Ranking cut by Ctrl-C (or SIGTERM) after {answered} of {cells} cells; the tables \
                 count only the cells answered (the others did not run, or were stopped and \
                 are left out)."
            ),
        }
    }
}

impl RankOutcome {
    /// Whether some answered task found an anomaly: a prediction, or an observed run that
    /// already violates its level.
    pub fn found_anomaly(&self) -> bool {
        self.predictions.iter().any(|r| {
            matches!(
                r.outcome,
                PredictionOutcome::Sat | PredictionOutcome::ObservedViolation
            )
        })
    }
}

/// A progress bar for `total` tasks on standard error; hidden when it is not a terminal.
pub fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if super::progress::Drawn::now() != Some(super::progress::Drawn::Terminal) {
        // `--quiet`, or not a terminal (the plain grid line speaks there).
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// A task of the grid, ready to run.
enum Task {
    Predict {
        workload: &'static dyn Workload,
        size: Size,
        seed: u64,
        level: Level,
        strategy: Strategy,
    },
    Explore {
        workload: &'static dyn Workload,
        size: Size,
        seed: u64,
        level: Level,
        trial: u64,
        exploration_seed: u64,
    },
    History {
        group: String,
        path: PathBuf,
        level: Level,
        strategy: Strategy,
    },
    App {
        app: AppSpec,
        seed: u64,
        level: Level,
        strategy: Strategy,
    },
}

/// What a rank cell produced: one prediction task's record or one exploration run's.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RankCellResult {
    /// A Tables 4/5 task.
    Prediction(PredictionRecord),
    /// A Tables 6/7 run.
    Exploration(ExplorationRecord),
}

/// What the whole grid is, on every line of a rank plan: what a cell needs besides its task,
/// and what the merge needs.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RankPlanGrid {
    /// Always `rank` (a plan of another command is refused).
    pub command: String,
    /// The grid in words ([`RankGrid::describe`]).
    pub grid: String,
    /// What the ranking scores.
    pub score: RankScore,
    /// Budget per prediction (and per serializability check).
    pub timeout: Option<Duration>,
    /// Most distinct anomalies per workload task.
    pub max: usize,
    /// Sessions per workload run.
    pub sessions: usize,
    /// How table statements find their rows in every workload run (a plan made before
    /// `rank --scan` existed has none: keyed, as its runs were); `None` for user histories.
    #[serde(default)]
    pub scan: Option<ScanMode>,
    /// The folder the plan was made in: relative history paths that do not exist where a
    /// cell runs are looked up under it.
    pub cwd: PathBuf,
    /// The histories folder of a ranking of user histories (`--histories DIR`): a cell reads
    /// only histories under it ([`cells::under_roots`]); empty for workloads.
    #[serde(default)]
    pub roots: Vec<PathBuf>,
    /// With applications (`rank --app`): how long a replayed transaction waits for its turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_wait: Option<Duration>,
    /// With applications: how long a recorded transaction waits for a lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_wait: Option<Duration>,
}

/// One cell of a rank plan: everything it runs, by name, with its seeds.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RankTask {
    /// Record a workload run (reads see the latest write), predict, validate by replay.
    Predict {
        /// The workload's name.
        workload: String,
        /// The size's name (`small`, `large`, `N-calls`).
        size: String,
        /// The run's seed.
        seed: u64,
        /// The level's name.
        level: String,
        /// The strategy.
        strategy: Strategy,
    },
    /// A random-exploration run.
    Explore {
        /// The workload's name.
        workload: String,
        /// The size's name.
        size: String,
        /// The benchmark seed.
        seed: u64,
        /// The level's name.
        level: String,
        /// The trial.
        trial: u64,
        /// The seed of the run's read choices and schedule.
        exploration_seed: u64,
    },
    /// Predict a user history.
    History {
        /// Its group (the program it counts for).
        group: String,
        /// The file.
        path: PathBuf,
        /// The level's name.
        level: String,
        /// The strategy.
        strategy: Strategy,
    },
    /// Record an application's command (`rank --app`), predict, validate by re-running it.
    App {
        /// The application's name.
        app: String,
        /// The shell command that runs it (`sh -c`, with ISOPREDICT_SEED set to `seed`).
        command: String,
        /// Its setup commands (`sh -c`), run before it in every run.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        setup: Vec<String>,
        /// The run's seed.
        seed: u64,
        /// The level's name.
        level: String,
        /// The strategy.
        strategy: Strategy,
    },
}

/// The seed of exploration run `trial` of a workload run with seed `seed`.
fn exploration_seed(seed: u64, trial: u64) -> u64 {
    seed.wrapping_mul(1_000_003).wrapping_add(trial)
}

impl Task {
    /// A rough cost, to start the longest tasks first.
    fn cost(&self) -> u64 {
        let size = |s: Size| s.calls_per_terminal() as u64;
        match self {
            Task::Predict {
                workload, size: s, ..
            } => size(*s) * if workload.name() == "tpcc" { 40 } else { 10 },
            Task::Explore { size: s, .. } => size(*s),
            Task::History { path, .. } => std::fs::metadata(path).map_or(0, |m| m.len() / 1000),
            // Two runs of a program (recorded, replayed): seconds, more than most workload
            // runs of the paper's sizes.
            Task::App { .. } => 10_000,
        }
    }

    /// The task as a plan line's task.
    fn to_plan(&self) -> RankTask {
        match self {
            Task::Predict {
                workload,
                size,
                seed,
                level,
                strategy,
            } => RankTask::Predict {
                workload: workload.name().to_string(),
                size: size.name(),
                seed: *seed,
                level: level_name(*level).to_string(),
                strategy: *strategy,
            },
            Task::Explore {
                workload,
                size,
                seed,
                level,
                trial,
                exploration_seed,
            } => RankTask::Explore {
                workload: workload.name().to_string(),
                size: size.name(),
                seed: *seed,
                level: level_name(*level).to_string(),
                trial: *trial,
                exploration_seed: *exploration_seed,
            },
            Task::History {
                group,
                path,
                level,
                strategy,
            } => RankTask::History {
                group: group.clone(),
                path: path.clone(),
                level: level_name(*level).to_string(),
                strategy: *strategy,
            },
            Task::App {
                app,
                seed,
                level,
                strategy,
            } => RankTask::App {
                app: app.name.clone(),
                command: app.command.clone(),
                setup: app.setup.clone(),
                seed: *seed,
                level: level_name(*level).to_string(),
                strategy: *strategy,
            },
        }
    }
}

impl RankTask {
    /// The task ready to run; an unknown workload, size or level is an error naming it.
    fn resolve(&self, cwd: &Path) -> Result<Task, String> {
        let workload = |name: &str| {
            workloads::by_name(name).ok_or_else(|| format!("unknown workload `{name}`"))
        };
        let size = |name: &str| name.parse::<Size>();
        Ok(match self {
            RankTask::Predict {
                workload: w,
                size: s,
                seed,
                level,
                strategy,
            } => Task::Predict {
                workload: workload(w)?,
                size: size(s)?,
                seed: *seed,
                level: parse_level(level)?,
                strategy: *strategy,
            },
            RankTask::Explore {
                workload: w,
                size: s,
                seed,
                level,
                trial,
                exploration_seed,
            } => Task::Explore {
                workload: workload(w)?,
                size: size(s)?,
                seed: *seed,
                level: parse_level(level)?,
                trial: *trial,
                exploration_seed: *exploration_seed,
            },
            RankTask::History {
                group,
                path,
                level,
                strategy,
            } => Task::History {
                group: group.clone(),
                path: if path.is_relative() && !path.exists() && cwd.join(path).exists() {
                    cwd.join(path)
                } else {
                    path.clone()
                },
                level: parse_level(level)?,
                strategy: *strategy,
            },
            RankTask::App {
                app,
                command,
                setup,
                seed,
                level,
                strategy,
            } => {
                super::rank_app::check_app_name(app)?;
                if command.trim().is_empty() || setup.iter().any(|s| s.trim().is_empty()) {
                    return Err(format!("application `{app}`: an empty command"));
                }
                Task::App {
                    app: AppSpec {
                        name: app.clone(),
                        command: command.clone(),
                        setup: setup.clone(),
                    },
                    seed: *seed,
                    level: parse_level(level)?,
                    strategy: *strategy,
                }
            }
        })
    }
}

/// Lists the histories under `dir` ([`formats::walk::walk_histories`]): (group, path),
/// sorted; the group is the first folder under `dir` that holds the history, or `dir`'s own
/// name for histories directly in it. Documentation beside them (README*, LICENSE*, COPYING*,
/// NOTICE*, *.md) is passed over; every other entry the walk could not take — a file that
/// cannot be read, whose format is not detected, a broken link, a pipe, a folder that cannot
/// be listed — is an error naming it, so that a ranking never silently scores part of the
/// folder. A file that is detected but does not parse is an error later.
fn history_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let walk =
        formats::walk::walk_histories(dir, None).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Some(bad) = walk.skipped.iter().find(|s| !is_documentation(&s.path)) {
        return Err(format!(
            "{}: {} (every entry under {} must be a history a ranking can read; move it out)",
            bad.path.display(),
            bad.reason,
            dir.display()
        ));
    }
    let top_name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let files: Vec<(String, PathBuf)> = walk
        .histories
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap_or(&p);
            let mut parts = rel.components();
            let group = match (parts.next(), parts.next()) {
                (Some(first), Some(_)) => first.as_os_str().to_string_lossy().into_owned(),
                _ => top_name.clone(),
            };
            (group, p)
        })
        .collect();
    if files.is_empty() {
        return Err(format!("{}: no history files found", dir.display()));
    }
    Ok(files)
}

/// Whether a file beside histories is documentation (README*, LICENSE*, COPYING*, NOTICE*,
/// *.md), which `rank --histories` passes over.
fn is_documentation(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let upper = name.to_ascii_uppercase();
    ["README", "LICENSE", "COPYING", "NOTICE"]
        .iter()
        .any(|p| upper.starts_with(p))
        || upper.ends_with(".MD")
}

/// The grid's tasks, in grid order. Errors: a bad grid (e.g. an unreadable folder, or a file
/// in a histories folder that is not a history).
fn grid_tasks(grid: &RankGrid) -> Result<Vec<Task>, String> {
    let mut tasks = Vec::new();
    match &grid.input {
        RankInput::Workloads {
            workloads,
            sizes,
            seeds,
            explore,
            ..
        } => {
            for &workload in workloads {
                for &size in sizes {
                    for &seed in seeds {
                        for &level in &grid.levels {
                            for &strategy in &grid.strategies {
                                tasks.push(Task::Predict {
                                    workload,
                                    size,
                                    seed,
                                    level,
                                    strategy,
                                });
                            }
                            for trial in 0..*explore {
                                tasks.push(Task::Explore {
                                    workload,
                                    size,
                                    seed,
                                    level,
                                    trial,
                                    exploration_seed: exploration_seed(seed, trial),
                                });
                            }
                        }
                    }
                }
            }
            for app in &grid.apps {
                for &seed in seeds {
                    for &level in &grid.levels {
                        for &strategy in &grid.strategies {
                            tasks.push(Task::App {
                                app: app.clone(),
                                seed,
                                level,
                                strategy,
                            });
                        }
                    }
                }
            }
        }
        RankInput::Histories { .. } if !grid.apps.is_empty() => {
            return Err(
                "applications (--app) are ranked beside the workloads, not beside --histories"
                    .to_string(),
            );
        }
        RankInput::Histories { dir } => {
            let files = history_files(dir)?;
            // A file that does not parse would be scored as if nothing were found in it:
            // refuse the whole folder up front, naming the file.
            for (_, path) in &files {
                if let Err(e) = formats::read_file(path, None) {
                    return Err(format!(
                        "{e} (every file under {} must be a history; move this one out)",
                        dir.display()
                    ));
                }
            }
            for (group, path) in files {
                for &level in &grid.levels {
                    for &strategy in &grid.strategies {
                        tasks.push(Task::History {
                            group: group.clone(),
                            path: path.clone(),
                            level,
                            strategy,
                        });
                    }
                }
            }
        }
    }
    Ok(tasks)
}

/// The grid as a plan ([`cells`]): one JSON line per task, in grid order, each with what the
/// whole grid is. Errors: a bad grid (as [`rank`]).
pub fn rank_plan(grid: &RankGrid) -> Result<String, String> {
    let tasks = grid_tasks(grid)?;
    let (sessions, max, scan) = match &grid.input {
        RankInput::Workloads { sessions, scan, .. } => (*sessions, grid.max, Some(*scan)),
        RankInput::Histories { .. } => (3, 1, None),
    };
    let plan_grid = RankPlanGrid {
        command: "rank".to_string(),
        grid: grid.describe(),
        score: grid.score,
        timeout: grid.timeout,
        max,
        sessions,
        scan,
        cwd: std::env::current_dir().unwrap_or_default(),
        roots: match &grid.input {
            RankInput::Histories { dir } => vec![dir.clone()],
            RankInput::Workloads { .. } => Vec::new(),
        },
        turn_wait: (!grid.apps.is_empty()).then_some(grid.app_waits.turn_wait),
        lock_wait: (!grid.apps.is_empty()).then_some(grid.app_waits.lock_wait),
    };
    let lines: Vec<(u64, RankTask)> = tasks.iter().map(|t| (t.cost(), t.to_plan())).collect();
    cells::plan_text(&plan_grid, &lines)
}

/// Parses a rank plan (errors name `origin` and the line).
fn parse_rank_plan(text: &str, origin: &str) -> Result<Vec<PlanLine<RankPlanGrid, Task>>, String> {
    let lines = cells::parse_plan::<RankPlanGrid, RankTask>(text, origin)?;
    let first = lines[0].grid.clone();
    cells::check_timeout(first.timeout, origin)?;
    cells::check_timeout(first.turn_wait, origin)?;
    cells::check_timeout(first.lock_wait, origin)?;
    if first.max == 0 {
        return Err(format!(
            "{origin}: max is 0: a plan asks for at least 1 anomaly per task, as --max does"
        ));
    }
    lines
        .into_iter()
        .map(|l| {
            if l.grid.command != "rank" {
                return Err(format!(
                    "{origin}: a plan of `{}`, not of `rank`",
                    l.grid.command
                ));
            }
            if l.grid != first {
                return Err(format!(
                    "{origin}, line {}: a grid unlike line 1's: a plan has one grid",
                    l.cell + 1
                ));
            }
            if let RankTask::History { path, .. } = &l.task {
                if !cells::under_roots(path, &l.grid.roots) {
                    return Err(cells::outside_roots(
                        origin,
                        l.cell + 1,
                        path,
                        &l.grid.roots,
                    ));
                }
            }
            let task = l
                .task
                .resolve(&l.grid.cwd)
                .map_err(|e| format!("{origin}, line {}: {e}", l.cell + 1))?;
            if let Task::Predict { size, .. } | Task::Explore { size, .. } = &task {
                // The sizes the command line accepts (`rank --sessions --sizes`), checked
                // before anything is allocated for the run.
                crate::workloads::check_run_size(l.grid.sessions, size.calls_per_terminal())
                    .map_err(|e| format!("{origin}, line {}: {e}", l.cell + 1))?;
            }
            Ok(PlanLine {
                cell: l.cell,
                cells: l.cells,
                cost: l.cost,
                grid: l.grid,
                task,
            })
        })
        .collect()
}

/// Runs one cell's task (in a fresh Z3 context). `backend`: where observed runs are recorded
/// (`None`: the embedded store; only a one-machine rank passes one).
fn run_rank_cell(
    line_grid: &RankPlanGrid,
    task: &Task,
    backend: &Option<std::sync::Arc<dyn crate::store::Backend>>,
) -> RankCellResult {
    let setup = RunSetup {
        sessions: line_grid.sessions,
        backend: backend.clone(),
        max: line_grid.max,
        scan: line_grid.scan.unwrap_or_default(),
        apps: AppRunSetup {
            max: line_grid.max,
            waits: AppWaits {
                turn_wait: line_grid
                    .turn_wait
                    .unwrap_or(super::rank_app::DEFAULT_TURN_WAIT),
                lock_wait: line_grid
                    .lock_wait
                    .unwrap_or(super::rank_app::DEFAULT_LOCK_WAIT),
            },
            // Commands run in the folder the plan was made in where this machine has it.
            dir: line_grid.cwd.is_dir().then(|| line_grid.cwd.clone()),
        },
    };
    super::fresh_z3(|| run_task(task, line_grid.timeout, &setup))
}

/// Runs cell `n` of the plan file `plan` (`rank --cell N --plan FILE --out DIR`) and writes
/// its result into `out` atomically; returns the result file. A task that fails is a record
/// saying so (as in [`rank`]); errors are a bad plan, an unwritable folder, or a stop
/// requested by the user (nothing is written then).
pub fn run_rank_plan_cell(plan: &Path, n: usize, out: &Path) -> Result<PathBuf, String> {
    cells::run_plan_file_cell(plan, n, out, parse_rank_plan, |grid, task| {
        run_rank_cell(grid, task, &None)
    })
}

/// Builds the ranking from the cells' results ([`cells::parse_results`]: exactly the cells of
/// one plan). `timing`: the wall time and threads to report (`None`: the span of the cells'
/// work and the most cells that ran at once).
pub fn merge_rank(
    results: &[(String, String)],
    origin: &str,
    timing: Option<(f64, usize)>,
) -> Result<RankOutcome, String> {
    let results = cells::parse_results::<RankPlanGrid, RankCellResult>(results, origin)?;
    let grid = results[0].grid.clone();
    if grid.command != "rank" {
        return Err(format!(
            "{origin}: results of `{}`, not of `rank`",
            grid.command
        ));
    }
    let (elapsed_s, threads) = timing.unwrap_or_else(|| {
        cells::span_and_concurrency(&results.iter().map(|r| &r.worker).collect::<Vec<_>>())
    });
    Ok(outcome_of(
        grid,
        results.into_iter().map(|r| r.result),
        (elapsed_s, threads),
        None,
    ))
}

/// The ranking of the cells' results (in plan order): the tables, the ranking, and the cut if
/// any.
fn outcome_of(
    grid: RankPlanGrid,
    results: impl Iterator<Item = RankCellResult>,
    (elapsed_s, threads): (f64, usize),
    cut: Option<RankCut>,
) -> RankOutcome {
    let mut predictions = Vec::new();
    let mut exploration = Vec::new();
    for r in results {
        match r {
            RankCellResult::Prediction(p) => predictions.push(p),
            RankCellResult::Exploration(e) => exploration.push(e),
        }
    }
    let prediction_table = prediction_rows(&predictions);
    let exploration_table = exploration_rows(&exploration, &prediction_table);
    let ranking = match grid.score {
        RankScore::Runs => risk_rows(&predictions),
        RankScore::Anomalies => anomaly_risk_rows(&predictions),
    };
    RankOutcome {
        grid: grid.grid,
        elapsed_s,
        threads,
        predictions,
        exploration,
        prediction_table,
        exploration_table,
        ranking,
        score: grid.score,
        scan: grid.scan,
        cut,
    }
}

/// Runs the grid on this machine — its plan ([`rank_plan`]), every cell on rayon's pool, the
/// longest first, and the merge of their results, the same steps as a distributed run —
/// advancing `progress` per cell (pass [`ProgressBar::hidden`] for none; its message counts
/// the cells with an anomaly, and a plain line says so every few seconds when standard error
/// is not a terminal: [`grid_progress_line`]).
///
/// A stop requested by the user ([`crate::interrupt`]) cuts the ranking: no further cell
/// starts, the cells in flight are stopped and left out, and the outcome holds the cells
/// answered before the stop, marked by [`RankOutcome::cut`]; when no cell was answered, it is
/// an error. Other errors: a bad grid (e.g. an unreadable folder, or a file in a histories
/// folder that is not a history); a task that fails is recorded as
/// [`PredictionOutcome::Error`].
pub fn rank(grid: &RankGrid, progress: &ProgressBar) -> Result<RankOutcome, String> {
    let start = Instant::now();
    let text = rank_plan(grid)?;
    let lines = parse_rank_plan(&text, "the plan")?;
    let backend = match &grid.input {
        RankInput::Workloads { backend, .. } => backend.clone(),
        RankInput::Histories { .. } => None,
    };
    let anomalies = Arc::new(AtomicUsize::new(0));
    let plain = GridProgress::start(progress.clone(), lines.len(), anomalies.clone(), start);
    let local = cells::run_local_keeping(&text, &lines, progress, |t| {
        let result = run_rank_cell(&lines[0].grid, t, &backend);
        if let RankCellResult::Prediction(p) = &result {
            if matches!(
                p.outcome,
                PredictionOutcome::Sat | PredictionOutcome::ObservedViolation
            ) {
                let n = anomalies.fetch_add(1, Ordering::Relaxed) + 1;
                progress.set_message(format!("{n} with an anomaly"));
            }
        }
        result
    });
    if let Some(plain) = plain {
        plain.finish();
    }
    let local = local?;
    let answered = local.answered();
    if answered == 0 && !lines.is_empty() {
        return Err("interrupted: the ranking is incomplete".to_string());
    }
    let cut = local.cut.then(|| RankCut::new(answered, lines.len()));
    let mut results = Vec::with_capacity(answered);
    for (i, text) in local.results.into_iter().enumerate() {
        let Some(text) = text else { continue };
        // Read back exactly as a result file would be.
        let cell: cells::CellResult<RankPlanGrid, RankCellResult> = serde_json::from_str(&text)
            .map_err(|e| format!("cell {i}: not a cell result of this command: {e}"))?;
        results.push(cell.result);
    }
    Ok(outcome_of(
        lines[0].grid.clone(),
        results.into_iter(),
        (start.elapsed().as_secs_f64(), rayon::current_num_threads()),
        cut,
    ))
}

/// The plain progress line of a grid: `ranking: 12 of 40 cells answered, 3 with an anomaly …
/// (25 s)`.
pub fn grid_progress_line(done: u64, cells: usize, anomalies: usize, elapsed: Duration) -> String {
    format!(
        "ranking: {done} of {cells} cells answered, {anomalies} with an anomaly … ({} s)",
        elapsed.as_secs()
    )
}

/// Plain progress lines of a grid on standard error, once a period
/// ([`super::progress::DEFAULT_PLAIN_PERIOD`], or what [`super::progress::PROGRESS_ENV`]
/// says), when it is not a terminal (where the bar is drawn) and `--quiet` was not given;
/// drawn by indicatif ([`super::progress`]).
struct GridProgress {
    bar: ProgressBar,
    _detailed: super::progress::DetailedLine,
}

impl GridProgress {
    fn start(
        bar: ProgressBar,
        cells: usize,
        anomalies: Arc<AtomicUsize>,
        start: Instant,
    ) -> Option<GridProgress> {
        let drawn = super::progress::Drawn::now()?;
        if !drawn.is_plain() {
            return None;
        }
        let line = move || {
            grid_progress_line(
                bar.position(),
                cells,
                anomalies.load(Ordering::Relaxed),
                start.elapsed(),
            )
        };
        Some(GridProgress {
            bar: super::progress::progress_line_bar(drawn, Duration::from_secs(1), line),
            _detailed: super::progress::DetailedLine::begin(),
        })
    }

    fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// What every workload task of a grid shares.
struct RunSetup {
    /// Sessions per run.
    sessions: usize,
    /// Where observed runs are recorded (`None`: the embedded store).
    backend: Option<std::sync::Arc<dyn crate::store::Backend>>,
    /// Most distinct anomalies per task.
    max: usize,
    /// How table statements find their rows (recorded, replayed and explored runs alike).
    scan: ScanMode,
    /// What application tasks share.
    apps: AppRunSetup,
}

fn run_task(task: &Task, timeout: Option<Duration>, setup: &RunSetup) -> RankCellResult {
    match task {
        Task::Predict {
            workload,
            size,
            seed,
            level,
            strategy,
        } => RankCellResult::Prediction(predict_workload(
            *workload, *size, *seed, *level, *strategy, timeout, setup,
        )),
        Task::Explore {
            workload,
            size,
            seed,
            level,
            trial,
            exploration_seed,
        } => RankCellResult::Exploration(explore(
            *workload,
            *size,
            (*seed, *trial, *exploration_seed),
            *level,
            timeout,
            setup,
        )),
        Task::History {
            group,
            path,
            level,
            strategy,
        } => {
            let run = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            let base = task_record(group.clone(), "-".to_string(), run, *level, *strategy);
            match formats::read_file(path, None) {
                Ok(h) => predict_history(&h, base, *level, *strategy, timeout, 1).0,
                Err(e) => PredictionRecord {
                    detail: Some(e.to_string()),
                    ..base
                },
            }
            .into()
        }
        Task::App {
            app,
            seed,
            level,
            strategy,
        } => predict_app(app, *seed, *level, *strategy, timeout, &setup.apps).into(),
    }
}

impl From<PredictionRecord> for RankCellResult {
    fn from(r: PredictionRecord) -> RankCellResult {
        RankCellResult::Prediction(r)
    }
}

/// One Tables 4/5 task: record, predict, validate.
fn predict_workload(
    workload: &dyn Workload,
    size: Size,
    seed: u64,
    level: Level,
    strategy: Strategy,
    timeout: Option<Duration>,
    setup: &RunSetup,
) -> PredictionRecord {
    let base = task_record(
        workload.name().to_string(),
        size.name().to_string(),
        format!("seed {seed}"),
        level,
        strategy,
    );
    let config = RunConfig {
        terminals: setup.sessions,
        scan: setup.scan,
        ..RunConfig::paper(seed, size)
    };
    let observed = match &setup.backend {
        Some(backend) => workloads::run_on(workload, &config, backend.as_ref()),
        None => workloads::run(workload, &config),
    };
    let observed = match observed {
        Ok(r) => r,
        Err(e) => {
            return PredictionRecord {
                detail: Some(e.to_string()),
                ..base
            }
        }
    };
    let (mut record, predictions, end) =
        predict_history(&observed.history, base, level, strategy, timeout, setup.max);
    let Some(predicted) = predictions.first() else {
        return record;
    };
    let keys = crate::store::KeyDirectory::new(
        &workload.tables(),
        &observed.history,
        &mut observed.store.snapshot(),
    );
    let named: Vec<_> = predictions
        .iter()
        .map(|p| super::distinct::app_anomaly(p, &observed.txn_calls, &keys))
        .collect();
    record_anomalies(&mut record, &named, &end, setup.max);
    match workloads::validate(
        workload,
        &config,
        Some(&observed),
        &predicted.history,
        level,
        timeout,
    ) {
        Ok(v) => PredictionRecord {
            validation: Some(ValidationRecord {
                validated: v.outcome().counts_as_validated(),
                diverged: v.diverged(),
                failed_invariants: v.failed_invariants().map(|i| i.id.to_string()).collect(),
                verdict: v.outcome().word().to_string(),
            }),
            ..record
        },
        Err(e) => PredictionRecord {
            detail: Some(format!("validation: {e}")),
            ..record
        },
    }
}

/// One Tables 6/7 run: reads choose a random writer the level allows. `seeds`: the
/// benchmark seed, the trial, and the seed of its read choices and schedule.
fn explore(
    workload: &dyn Workload,
    size: Size,
    seeds: (u64, u64, u64),
    level: Level,
    timeout: Option<Duration>,
    setup: &RunSetup,
) -> ExplorationRecord {
    let (seed, trial, exploration_seed) = seeds;
    let config = RunConfig {
        policy: ReadPolicy::Random {
            level,
            seed: exploration_seed,
        },
        schedule_seed: exploration_seed,
        terminals: setup.sessions,
        scan: setup.scan,
        ..RunConfig::paper(seed, size)
    };
    let (invariant_failed, unserializable) = match workloads::run(workload, &config) {
        Ok(r) => (
            !r.invariants_hold(),
            match crate::verdict::Input::of(&r.history).map(|input| {
                let limits = crate::verdict::Limits {
                    timeout,
                    explain: false,
                    ..Default::default()
                };
                crate::verdict::decide(
                    &input,
                    Level::Serializable,
                    crate::verdict::EvidenceChoice::Auto,
                    &limits,
                )
                .map(|v| v.verdict)
            }) {
                Ok(Ok(crate::verdict::Outcome::Violated)) => Some(true),
                Ok(Ok(crate::verdict::Outcome::Consistent)) => Some(false),
                _ => None,
            },
        ),
        Err(_) => (false, None),
    };
    ExplorationRecord {
        program: workload.name().to_string(),
        size: size.name().to_string(),
        seed,
        level: level_name(level).to_string(),
        trial,
        invariant_failed,
        unserializable,
    }
}

impl RankOutcome {
    /// The report as Markdown (rank.md).
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("# isopredict rank\n\n");
        out.push_str(&format!(
            "Grid: {}.\n\n{} prediction task(s), {} random-exploration run(s), {:.1} s on {} thread(s).\n\n",
            self.grid,
            self.predictions.len(),
            self.exploration.len(),
            self.elapsed_s,
            self.threads
        ));
        if let Some(cut) = &self.cut {
            out.push_str(&format!("**{}**\n\n", cut.sentence));
        }
        if !self.ranking.is_empty() && self.score == RankScore::Anomalies {
            out.push_str("## Risk ranking (by distinct anomalies)\n\n");
            out.push_str(&risk_markdown(&self.ranking));
            out.push_str("\nScore: 100 × (1 − 2^(−S)), S = Σ over the program's distinct anomalies (procedures and table columns of the cycle) of w(L) / w_max, L the strongest level it was predicted at, w = 5 (si), 4 (pc), 3 (causal), 2 (ra), 1 (rc), w_max the largest among the grid's levels — see docs/ranking.md. Chart: risk.svg.\n\n");
        } else if !self.ranking.is_empty() {
            out.push_str("## Risk ranking\n\n");
            out.push_str(&risk_markdown(&self.ranking));
            out.push_str("\nScore: 100 × Σ_level w(level) · mean over runs of the best exposure among the strategies / Σ w, with w = 5 (si), 4 (pc), 3 (causal), 2 (ra), 1 (rc) and exposure 1 (validated, an invariant broke), 0.6 (validated; or a verified prediction that cannot be replayed), 0.3 (predicted, replay not confirmed), 0 (none) — see docs/ranking.md. Chart: risk.svg.\n\n");
        }
        let standing = standing_markdown(&self.ranking);
        if !standing.is_empty() {
            out.push_str("## Where each program stands, by level\n\n");
            out.push_str("A score of 0 at a level means either that the program is proven free of anomalies there or that nothing was decided; this table tells them apart. **proven free**: in every run, every strategy answered \"no prediction\" with a certificate — no execution of the run's calls that the level allows (cut at the strategy's prediction boundary) is an anomaly the strategy looks for; the certificates are `no-changeable-read`, `writers-ordered`, `no-pivot` (decided from the run itself, for every strategy) and `search-exhausted` (the strategy's complete search found none) — docs/prediction.md \"Why none: certificates\". It covers the runs of the grid: other calls or parameters may still show anomalies. **not decided**: no anomaly was found, but some run was unknown (time or memory limit) or failed. Each task's certificate is `certificate` in rank.json.\n\n");
            out.push_str(&standing);
            out.push('\n');
        }
        let searches = search_markdown(&self.predictions);
        if !searches.is_empty() {
            out.push_str("## How the searches for distinct anomalies ended (`--max`)\n\n");
            out.push_str("Per task with a prediction, the search for further distinct anomalies (docs/prediction.md \"Several predictions\"): complete (no further distinct anomaly exists in that run), stopped at `--max` predictions, cut by its time budget, by Ctrl-C, or stopped by another limit (more may exist). Each task's account is `search` in rank.json.\n\n");
            out.push_str(&searches);
            out.push('\n');
        }
        let anomalies = anomalies_markdown(&self.ranking);
        if !anomalies.is_empty() {
            out.push_str("## Distinct anomalies per program\n\nPredictions that differ in the procedures or the table columns of their `pco` cycle, over all runs, levels and strategies (`--max` per task).\n\n");
            out.push_str(&anomalies);
            out.push('\n');
        }
        if !self.prediction_table.is_empty() {
            out.push_str("## Prediction (the layout of IsoPredict's Tables 4 and 5)\n\n");
            out.push_str("Unk (T/O): the solver gave up (of which: the time budget ran out). Unsat: no prediction, with the certificates that show it (kind and tasks). Validated (Diverged): predictions whose replay was unserializable (replays that left the prediction). Means per task; solving time separately for Sat and Unsat.\n\n");
            out.push_str(&prediction_markdown(&self.prediction_table));
        }
        if !self.exploration_table.is_empty() {
            out.push_str(
                "## Random exploration beside prediction (the layout of Tables 6 and 7)\n\n",
            );
            out.push_str("Random runs: reads pick a random writer the level allows (MonkeyDB's approach). Fail: % of them whose final state breaks an invariant; Unser: % unserializable. Predicted / Validated: % of observed runs with a prediction / a validated one, for the strategy with the most validated predictions.\n\n");
            out.push_str(&exploration_markdown(&self.exploration_table));
        }
        let errors: Vec<&PredictionRecord> = self
            .predictions
            .iter()
            .filter(|r| r.outcome == PredictionOutcome::Error)
            .collect();
        if !errors.is_empty() {
            out.push_str("## Errors\n\n");
            for r in errors {
                out.push_str(&format!(
                    "- {} {} {} {}: {}\n",
                    r.program,
                    r.run,
                    r.level,
                    r.strategy,
                    r.detail.as_deref().unwrap_or("")
                ));
            }
            out.push('\n');
        }
        out
    }
}

/// Per program, how its tasks' searches for further distinct anomalies ended (`--max` > 1),
/// as a Markdown table; empty when no task searched.
fn search_markdown(predictions: &[PredictionRecord]) -> String {
    const ENDS: [&str; 5] = ["exhausted", "enough", "budget", "interrupted", "stopped"];
    let mut programs: Vec<(&str, [usize; 5])> = Vec::new();
    for r in predictions {
        let Some(search) = &r.search else { continue };
        let Some(k) = ENDS.iter().position(|e| *e == search.end) else {
            continue;
        };
        match programs.iter_mut().find(|(p, _)| *p == r.program) {
            Some((_, counts)) => counts[k] += 1,
            None => {
                let mut counts = [0; 5];
                counts[k] = 1;
                programs.push((&r.program, counts));
            }
        }
    }
    if programs.is_empty() {
        return String::new();
    }
    let mut out = String::from("| Program | Tasks searched | Complete | Stopped at --max | Cut by the time budget | Cut by Ctrl-C | Stopped (another limit) |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (program, c) in programs {
        out.push_str(&format!(
            "| {program} | {} | {} | {} | {} | {} | {} |\n",
            c.iter().sum::<usize>(),
            c[0],
            c[1],
            c[2],
            c[3],
            c[4]
        ));
    }
    out
}

/// Writes rank.md, rank.json and risk.svg into `dir` (created if needed); returns their
/// paths. Written atomically like `run`'s folder: complete or untouched, and a folder holding
/// other files than [`RANK_FILES`] is refused.
pub fn write_rank_files(outcome: &RankOutcome, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let files = [
        ("rank.md", outcome.to_markdown()),
        ("rank.json", serde_json::to_string_pretty(outcome)? + "\n"),
        (
            "risk.svg",
            risk_chart_svg(
                &outcome.ranking,
                &match &outcome.cut {
                    None => "Risk of isolation anomalies (higher is riskier)".to_string(),
                    Some(cut) => format!(
                        "Risk of isolation anomalies (higher is riskier) — cut by Ctrl-C after {} of {} cells",
                        cut.answered, cut.cells
                    ),
                },
            ),
        ),
    ];
    let contents: Vec<(&str, &[u8])> = files.iter().map(|(n, t)| (*n, t.as_bytes())).collect();
    crate::output::write_folder_atomically(dir, &contents, RANK_FILES)?;
    Ok(files.iter().map(|(name, _)| dir.join(name)).collect())
}

/// Every file `rank` writes into its output folder; a folder holding anything else is not
/// replaced.
pub const RANK_FILES: &[&str] = &["rank.md", "rank.json", "risk.svg"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_ranges_and_lists() {
        assert_eq!(parse_seeds("1..3").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_seeds("1..=2, 5").unwrap(), vec![1, 2, 5]);
        assert_eq!(parse_seeds("7").unwrap(), vec![7]);
        assert!(parse_seeds("3..1").is_err());
        assert!(parse_seeds("x").is_err());
        assert!(parse_seeds("").is_err());
        assert_eq!(describe_seeds(&[1, 2, 3, 4]), "1..4");
        assert_eq!(describe_seeds(&[1, 5]), "1, 5");
    }

    /// A small grid: Smallbank and Voter, small, seeds 1..2, causal and rc, one exploration
    /// run per case.
    fn small_grid() -> RankGrid {
        RankGrid {
            input: RankInput::Workloads {
                workloads: vec![
                    workloads::by_name("smallbank").unwrap(),
                    workloads::by_name("voter").unwrap(),
                ],
                sizes: vec![Size::Small],
                seeds: vec![1, 2],
                explore: 1,
                sessions: 3,
                backend: None,
                scan: ScanMode::Keyed,
            },
            levels: vec![Level::Causal, Level::ReadCommitted],
            strategies: vec![Strategy::ApproxRelaxed],
            timeout: Some(Duration::from_secs(60)),
            max: 1,
            score: RankScore::Runs,
            apps: Vec::new(),
            app_waits: AppWaits::default(),
        }
    }

    /// A report without what is measured (wall time, generation and solving times).
    fn without_times(o: &RankOutcome) -> (String, serde_json::Value) {
        let md = o.to_markdown();
        let mut masked = String::new();
        for line in md.lines() {
            let cells: Vec<String> = line
                .split(" | ")
                .map(|c| {
                    let c = c.trim_end_matches(" |");
                    if c.ends_with(" s") && c[..c.len() - 2].parse::<f64>().is_ok() {
                        "T".to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            let line = cells.join(" | ");
            if !line.contains(" thread(s).") {
                masked.push_str(&line);
                masked.push('\n');
            }
        }
        fn mask(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m.iter_mut() {
                        if k.ends_with("_s") || k == "threads" {
                            *x = serde_json::Value::Null;
                        } else {
                            mask(x);
                        }
                    }
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(mask),
                _ => {}
            }
        }
        let mut json = serde_json::to_value(o).unwrap();
        mask(&mut json);
        (masked, json)
    }

    #[test]
    fn with_max_each_task_says_how_its_search_for_more_anomalies_ended() {
        let grid = RankGrid {
            input: RankInput::Workloads {
                workloads: vec![workloads::by_name("smallbank").unwrap()],
                sizes: vec![Size::Small],
                seeds: vec![1],
                explore: 0,
                sessions: 3,
                backend: None,
                scan: ScanMode::Keyed,
            },
            levels: vec![Level::Causal],
            strategies: vec![Strategy::ApproxRelaxed],
            timeout: Some(Duration::from_secs(60)),
            max: 3,
            score: RankScore::Runs,
            apps: Vec::new(),
            app_waits: AppWaits::default(),
        };
        let o = rank(&grid, &ProgressBar::hidden()).unwrap();
        let r = &o.predictions[0];
        assert_eq!(r.outcome, PredictionOutcome::Sat);
        let search = r
            .search
            .as_ref()
            .expect("a search after the first prediction");
        // It ends by itself (complete or at --max), within the budget on this small run.
        assert!(
            ["exhausted", "enough"].contains(&search.end.as_str()),
            "{search:?}"
        );
        assert!(!search.cut);
        assert!(
            search
                .sentence
                .contains(&format!("{} distinct anomal", r.anomalies.len())),
            "{search:?}"
        );
        let md = o.to_markdown();
        assert!(
            md.contains("## How the searches for distinct anomalies ended"),
            "{md}"
        );
        assert!(md.contains("| smallbank | 1 |"), "{md}");
    }

    #[test]
    fn the_plan_has_a_cell_per_task_with_its_seeds() {
        let grid = small_grid();
        let text = rank_plan(&grid).unwrap();
        // 2 workloads × 2 seeds × 2 levels × (1 strategy + 1 exploration run).
        assert_eq!(text.lines().count(), 16);
        let lines = cells::parse_plan::<RankPlanGrid, RankTask>(&text, "p").unwrap();
        assert_eq!(lines[0].grid.grid, grid.describe());
        assert_eq!(
            lines[1].task,
            RankTask::Explore {
                workload: "smallbank".to_string(),
                size: "small".to_string(),
                seed: 1,
                level: "causal".to_string(),
                trial: 0,
                exploration_seed: 1_000_003,
            }
        );
        // Every line carries the grid's scan mode; a plan made before `rank --scan` has none,
        // and its cells scan keyed, as its runs did.
        assert_eq!(lines[0].grid.scan, Some(ScanMode::Keyed));
        assert!(text.contains("\"scan\":\"keyed\""));
        let old = parse_rank_plan(&text.replace("\"scan\":\"keyed\",", ""), "p").unwrap();
        assert_eq!(old[0].grid.scan, None);
        let mut full = small_grid();
        if let RankInput::Workloads { scan, .. } = &mut full.input {
            *scan = ScanMode::Full;
        }
        let full_lines =
            cells::parse_plan::<RankPlanGrid, RankTask>(&rank_plan(&full).unwrap(), "p").unwrap();
        assert_eq!(full_lines[0].grid.scan, Some(ScanMode::Full));
        assert!(full_lines[0].grid.grid.ends_with("; full scans"));
        // Deterministic: the same grid, the same plan.
        assert_eq!(rank_plan(&grid).unwrap(), text);
        // A plan naming what does not exist is refused with its line.
        let bad = text.replacen("\"workload\":\"voter\"", "\"workload\":\"nope\"", 1);
        let e = parse_rank_plan(&bad, "p").map(|_| ()).unwrap_err();
        assert!(e.contains("line 9: unknown workload `nope`"), "{e}");
        let bad = text.replacen("\"level\":\"rc\"", "\"level\":\"ser\"", 1);
        assert!(parse_rank_plan(&bad, "p").is_err());
    }

    #[test]
    fn cells_run_from_a_plan_file_merge_to_the_one_machine_ranking() {
        let grid = small_grid();
        let local = rank(&grid, &ProgressBar::hidden()).unwrap();
        let dir =
            std::env::temp_dir().join(format!("isopredict-rank-cells-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let plan = dir.join("plan.jsonl");
        cells::write_plan(&plan, &rank_plan(&grid).unwrap()).unwrap();
        let out = dir.join("cells");
        // Last cell first: the order cells run in does not matter.
        for n in (0..16).rev() {
            run_rank_plan_cell(&plan, n, &out).unwrap();
        }
        let merged = merge_rank(&cells::read_results(&out).unwrap(), "cells", None).unwrap();
        assert_eq!(without_times(&merged), without_times(&local));
        assert_eq!(
            risk_chart_svg(&merged.ranking, "t"),
            risk_chart_svg(&local.ranking, "t")
        );
        assert_eq!(local.predictions.len(), 8);
        assert_eq!(local.exploration.len(), 8);
        assert_eq!(local.cut, None);
        // Every "none" carries its certificate, and nothing else does: Voter under causal
        // is proven free (each run has one inserting Vote), under rc exposed.
        for r in &local.predictions {
            assert_eq!(
                r.certificate.is_some(),
                r.outcome == PredictionOutcome::Unsat,
                "{r:?}"
            );
            // --max 1: no search for further anomalies.
            assert_eq!(r.search, None);
        }
        let voter = local.ranking.iter().find(|r| r.program == "voter").unwrap();
        let standing = |level: &str| {
            voter
                .levels
                .iter()
                .find(|l| l.level == level)
                .unwrap()
                .standing
        };
        use crate::report::tables::Standing;
        assert_eq!(standing("causal"), Standing::ProvenFree);
        assert_eq!(standing("rc"), Standing::Exposed);
        assert!(local
            .to_markdown()
            .contains("| voter | **proven free** (2/2 runs;"));
        // An incomplete folder is refused, naming the missing cell.
        std::fs::remove_file(out.join(cells::result_file_name(3))).unwrap();
        let e = merge_rank(&cells::read_results(&out).unwrap(), "cells", None).unwrap_err();
        assert!(e.contains("1 of 16 cells have no result (cells 3)"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
