//! `isopredict rank`: Tables 4–7 and the risk ranking over a grid of workload runs, or over
//! folders of user histories (docs/ranking.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use isopredict::check::Level;
use isopredict::pipeline::cells::write_plan;
use isopredict::pipeline::{
    merge_rank, parse_level, parse_seeds, parse_store, progress_bar, rank, rank_plan,
    run_rank_plan_cell, write_rank_files, RankGrid, RankInput,
};
use isopredict::predict::Strategy;
use isopredict::store::Isolation;
use isopredict::workloads::{self, Size};

/// The most random-exploration runs per case (`--explore`).
const MAX_EXPLORE: u64 = 100_000;

/// Keeps the first occurrence of each value (`--levels causal,cc` is one level).
fn dedup<T: PartialEq>(values: &mut Vec<T>) {
    let mut kept: Vec<T> = Vec::with_capacity(values.len());
    for v in values.drain(..) {
        if !kept.contains(&v) {
            kept.push(v);
        }
    }
    *values = kept;
}

/// A wait in seconds (`--turn-wait`, `--lock-wait`): 0 to 10⁹, fractions allowed.
fn parse_wait(s: &str) -> Result<Duration, String> {
    match super::parse_timeout(s)? {
        super::Timeout(Some(d)) => Ok(d),
        super::Timeout(None) => Ok(Duration::ZERO),
    }
}

/// Arguments of `isopredict rank`.
#[derive(clap::Args)]
pub struct Args {
    /// Workloads, comma-separated [default: all, or none when --app is given].
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// An application to rank, beside or instead of the workloads (repeatable): NAME and the
    /// shell command that runs it (`sh -c`), e.g. `--app bank='pytest -q tests/'`. Each seed
    /// of --seeds is one recorded run, with ISOPREDICT_SEED set to the seed; it is recorded and
    /// replayed through the recording server as `isopredict test` does (docs/ranking.md).
    #[arg(long, value_name = "NAME=COMMAND")]
    app: Vec<String>,
    /// A setup command of the application NAME (repeatable; `sh -c`, before the command in
    /// every run, as `test --setup`).
    #[arg(long, value_name = "NAME=COMMAND", requires = "app")]
    app_setup: Vec<String>,
    /// With --app: how long a replayed transaction waits for its turn before the wait is a
    /// divergence (seconds, as `test --turn-wait`).
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_wait)]
    turn_wait: Duration,
    /// With --app: how long a recorded transaction waits for a lock before going on without
    /// it (seconds, as `test --lock-wait`).
    #[arg(long, value_name = "SECS", default_value = "2", value_parser = parse_wait)]
    lock_wait: Duration,
    /// Seeds: N, A..B (inclusive) or a comma-separated list.
    #[arg(long, default_value = "1..10")]
    seeds: String,
    /// Sizes, comma-separated: small, large, or a number of calls per session.
    #[arg(long, value_delimiter = ',', default_value = "small,large")]
    sizes: Vec<Size>,
    /// Sessions (terminals) per run [default: 3, as in the paper].
    #[arg(long, default_value_t = 3, value_name = "N")]
    sessions: usize,
    /// Calls per session (instead of --sizes).
    #[arg(long, value_name = "M", conflicts_with = "sizes")]
    calls: Option<usize>,
    /// Where observed runs are recorded: `embedded` or a PostgreSQL URL.
    #[arg(long, default_value = "embedded", value_name = "STORE")]
    store: String,
    /// The database's isolation level (with a PostgreSQL --store).
    #[arg(long, default_value = "read-committed")]
    isolation: Isolation,
    /// How table statements find their rows in every run of the grid (recorded, replayed,
    /// explored): `keyed` reads only the rows whose primary key can satisfy the WHERE clause;
    /// `full` reads every row ever inserted, as MonkeyDB does (the paper's trace shapes;
    /// docs/workloads.md, "Keyed scans").
    #[arg(long, default_value = "keyed", value_name = "keyed|full")]
    scan: isopredict::store::ScanMode,
    /// Levels, comma-separated: causal, ra, rc, pc, si.
    #[arg(long, value_delimiter = ',', default_value = "causal,rc", value_parser = parse_level)]
    levels: Vec<Level>,
    /// Strategies, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        value_enum,
        default_value = "approx-relaxed"
    )]
    strategies: Vec<Strategy>,
    /// Random-exploration runs per workload × size × seed × level (Tables 6/7; 0: none).
    #[arg(long, default_value_t = 10, value_name = "N",
          value_parser = clap::value_parser!(u64).range(0..=MAX_EXPLORE))]
    explore: u64,
    /// Rank the histories in this folder instead (one group per subfolder; each file an
    /// observed history in any supported format).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["workloads", "seeds", "sizes", "explore", "calls", "store", "scan", "app"])]
    histories: Option<PathBuf>,
    /// Time budget in seconds per prediction; fractions allowed, 0: no limit, at most 1e9.
    #[arg(long, default_value = "60", value_name = "SECS", value_parser = super::parse_timeout)]
    timeout: super::Timeout,
    /// Most distinct anomalies to look for per workload task (procedures and table columns of
    /// the cycle; 1: the prediction alone; `all`: every one within --timeout).
    #[arg(long, default_value = "1", value_name = "N|all", value_parser = super::predict::parse_max)]
    max: usize,
    /// What the risk ranking scores: `runs` (share of runs exposed, by level) or `anomalies`
    /// (distinct anomalies, by level); docs/ranking.md has both formulas.
    #[arg(long, value_enum, default_value = "runs")]
    score: isopredict::pipeline::RankScore,
    /// Output folder for rank.md, rank.json and risk.svg [default: out/rank]; with --cell, the
    /// folder the cell's result file goes to.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write the grid as a plan (one JSON line per cell) to FILE instead of running it; with
    /// --cell, the plan to run a cell of (docs/distributed.md).
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// Run cell N of --plan FILE and write its result into --out DIR (cell-N.json).
    #[arg(long, value_name = "N", requires = "plan", conflicts_with = "merge")]
    cell: Option<usize>,
    /// Build rank.md, rank.json and risk.svg in --out from the cell results in DIR (every cell
    /// of one plan).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["plan", "histories"])]
    merge: Option<PathBuf>,
    /// Worker threads, 1 to 256 [default: one per core].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: Option<u16>,
    /// Print rank.json instead of rank.md.
    #[arg(long)]
    json: bool,
}

/// Ranks; exit code 0 when done, 2 on bad input.
pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    if let (Some(n), Some(plan)) = (args.cell, &args.plan) {
        let Some(out) = &args.out else {
            return bad("--cell needs --out DIR, the folder for its result".to_string());
        };
        return run_cell(plan, n, out);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/rank"));
    if let Some(dir) = &args.merge {
        let outcome = isopredict::pipeline::cells::read_results(dir)
            .and_then(|texts| merge_rank(&texts, &dir.display().to_string(), None));
        return match outcome {
            Ok(outcome) => write_and_print(&outcome, &out, args.json),
            Err(e) => bad(e),
        };
    }
    dedup(&mut args.levels);
    dedup(&mut args.strategies);
    dedup(&mut args.sizes);
    dedup(&mut args.workloads);
    let apps = match isopredict::pipeline::parse_apps(&args.app, &args.app_setup) {
        Ok(apps) => apps,
        Err(e) => return bad(e),
    };
    let input = match args.histories.take() {
        Some(dir) => RankInput::Histories { dir },
        None => match workloads_input(&args, apps.is_empty()) {
            Ok(input) => input,
            Err(e) => return bad(e),
        },
    };
    let grid = RankGrid {
        input,
        levels: std::mem::take(&mut args.levels),
        strategies: std::mem::take(&mut args.strategies),
        timeout: args.timeout.0,
        max: args.max,
        score: args.score,
        apps,
        app_waits: isopredict::pipeline::AppWaits {
            turn_wait: args.turn_wait,
            lock_wait: args.lock_wait,
        },
    };
    if let Some(plan) = &args.plan {
        return write_grid_plan(&grid, plan);
    }
    rank_here(&grid, args.threads, &out, args.json)
}

/// `error: MESSAGE` and the bad-input exit code.
fn bad(message: String) -> anyhow::Result<ExitCode> {
    isopredict::ewriteln!("error: {message}");
    Ok(ExitCode::from(super::EXIT_BAD_INPUT))
}

/// `--plan PLAN --cell N --out DIR`: runs one cell of a plan.
fn run_cell(plan: &std::path::Path, n: usize, out: &std::path::Path) -> anyhow::Result<ExitCode> {
    match run_rank_plan_cell(plan, n, out) {
        Ok(path) => {
            isopredict::ewriteln!("wrote {}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => match super::interrupted() {
            Some(code) => Ok(code),
            None => bad(e),
        },
    }
}

/// The workloads, sizes, seeds and store `args` ask to rank (no workload named: all of them,
/// or none when applications are ranked).
fn workloads_input(args: &Args, no_apps: bool) -> Result<RankInput, String> {
    let workloads = if args.workloads.is_empty() && !no_apps {
        Vec::new()
    } else if args.workloads.is_empty() {
        workloads::all()
    } else {
        let mut chosen = Vec::new();
        for name in &args.workloads {
            match workloads::by_name(name) {
                Some(w) => chosen.push(w),
                None => {
                    let names: Vec<&str> = workloads::all()
                        .iter()
                        .chain(workloads::variants().iter())
                        .map(|w| w.name())
                        .collect();
                    return Err(format!(
                        "unknown workload `{name}` (expected one of: {})",
                        names.join(", ")
                    ));
                }
            }
        }
        chosen
    };
    let seeds = parse_seeds(&args.seeds)?;
    let sizes: Vec<Size> = match args.calls {
        Some(n) => vec![Size::Calls(n)],
        None => args.sizes.clone(),
    };
    for size in &sizes {
        isopredict::workloads::check_run_size(args.sessions, size.calls_per_terminal())?;
    }
    let backend = parse_store(&args.store, args.isolation).map_err(|e| format!("--store: {e}"))?;
    Ok(RankInput::Workloads {
        workloads,
        sizes,
        seeds,
        explore: args.explore,
        sessions: args.sessions,
        backend,
        scan: args.scan,
    })
}

/// `--plan PLAN`: writes the grid's cells, one a line.
fn write_grid_plan(grid: &RankGrid, plan: &std::path::Path) -> anyhow::Result<ExitCode> {
    if matches!(
        &grid.input,
        RankInput::Workloads {
            backend: Some(_),
            ..
        }
    ) {
        return bad("--plan records observed runs on the embedded store only (every machine would need the database); rank on one machine with --store".to_string());
    }
    match rank_plan(grid).and_then(|text| {
        write_plan(plan, &text)?;
        Ok(text.lines().count())
    }) {
        Ok(n) => {
            isopredict::ewriteln!("wrote {} ({n} cells)", plan.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => bad(e),
    }
}

/// Ranks the grid on this machine (`threads` workers), writes the files into `out` and prints
/// the ranking; a cut ranking keeps the cells answered.
fn rank_here(
    grid: &RankGrid,
    threads: Option<u16>,
    out: &std::path::Path,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.map_or(0, usize::from))
        .build()?;
    let bar = progress_bar(0);
    // Ctrl-C or SIGTERM cuts the ranking and keeps the cells answered until then.
    super::on_cut_say(
        "isopredict: interrupted: cutting the ranking and writing the cells answered (Ctrl-C \
         again to exit at once, writing nothing)",
    );
    isopredict::interrupt::keep_findings();
    let outcome = pool.install(|| rank(grid, &bar));
    let outcome = match outcome {
        Ok(o) => o,
        Err(_) if isopredict::interrupt::signalled() => return Ok(super::interrupted_exit()),
        Err(message) => return bad(message),
    };
    let code = write_and_print(&outcome, out, json)?;
    Ok(match &outcome.cut {
        None => code,
        Some(cut) => {
            isopredict::ewriteln!("isopredict: {}", cut.sentence);
            if outcome.found_anomaly() {
                ExitCode::from(1)
            } else {
                ExitCode::from(isopredict::interrupt::EXIT_INTERRUPTED)
            }
        }
    })
}

/// Writes rank.md, rank.json and risk.svg into `out` and prints rank.md (or rank.json).
fn write_and_print(
    outcome: &isopredict::pipeline::RankOutcome,
    out: &std::path::Path,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let files = write_rank_files(outcome, out)?;
    let text = if json {
        serde_json::to_string_pretty(outcome)? + "\n"
    } else {
        outcome.to_markdown()
    };
    let mut out = super::stdout();
    out.write_all(text.as_bytes())?;
    isopredict::ewriteln!(
        "wrote {}",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
