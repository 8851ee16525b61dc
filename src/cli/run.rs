//! `isopredict run WORKLOAD`: record → check → predict → re-verify → validate → report
//! (docs/workloads.md, "The main command").

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use isopredict::pipeline::run::level_for_isolation;
use isopredict::pipeline::RunOutcome;
use isopredict::pipeline::{
    parse_level, parse_store, run_workload_within, write_run_files, PipelineError, RunOptions,
};
use isopredict::predict::Prediction;
use isopredict::predict::Strategy;
use isopredict::reproduce::{self, Request};
use isopredict::store::Backend;
use isopredict::store::Isolation;
use isopredict::workloads::{self, RunConfig, Size, Workload};

/// Arguments of `isopredict run`.
#[derive(clap::Args)]
pub struct Args {
    /// The workload: smallbank, voter, tpcc or wikipedia (or smallbank-full: Smallbank with
    /// all six procedures, OLTP-Bench's default mix; doctors: the doctors-on-call write skew).
    workload: String,
    /// The paper's run number (Java seed N·10000).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// small (3 sessions × 4 calls) or large (3 × 8).
    #[arg(long, default_value = "small")]
    size: Size,
    /// Sessions (terminals) [default: 3, as in the paper].
    #[arg(long, default_value_t = 3, value_name = "N")]
    sessions: usize,
    /// Calls per session (instead of --size), e.g. 100 for Smallbank at the scale of a test run.
    #[arg(long, value_name = "M", conflicts_with = "size")]
    calls: Option<usize>,
    /// Where the observed run is recorded: `embedded` (the in-process store) or a PostgreSQL
    /// URL, e.g. postgres://postgres@127.0.0.1:5432/postgres.
    #[arg(long, default_value = "embedded", value_name = "STORE")]
    store: String,
    /// The database's isolation level (with a PostgreSQL --store): read-committed,
    /// repeatable-read or serializable.
    #[arg(long, default_value = "read-committed")]
    isolation: Isolation,
    /// The weak isolation level to predict at: causal, ra, rc, pc (prefix consistency) or si
    /// (snapshot isolation) [default: what the database's isolation allows — rc at
    /// read-committed, si at repeatable-read, none at serializable (the run checks the
    /// database kept its promise); causal on the embedded store]. A level weaker than the
    /// database's is allowed, with a note that the database may not produce its predictions.
    #[arg(long, value_parser = parse_level)]
    level: Option<isopredict::check::Level>,
    /// The prediction strategy.
    #[arg(long, value_enum, default_value = "approx-relaxed")]
    strategy: Strategy,
    /// Time budget in seconds for prediction (and for each serializability check); fractions
    /// allowed, 0: no limit, at most 1e9.
    #[arg(long, default_value = "60", value_name = "SECS", value_parser = super::parse_timeout)]
    timeout: super::Timeout,
    /// Most distinct anomalies to report (procedure pair and table columns of the cycle;
    /// docs/workloads.md), each re-verified and replayed; `all`: every one found within
    /// --timeout.
    #[arg(long, default_value = "10", value_name = "N|all", value_parser = super::predict::parse_max)]
    max: usize,
    /// Output folder [default: out/<workload>-<size>-<seed>-<level>].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the report as JSON instead of Markdown.
    #[arg(long)]
    json: bool,
    /// Show the store's raw keys (hashes) beside their table, column and row in the report.
    #[arg(long)]
    raw_keys: bool,
    /// With a database --store: run the prediction on the database along a schedule that
    /// makes it happen (as `isopredict reproduce`), writing OUT/reproduce/.
    #[arg(long)]
    reproduce: bool,
    /// How table statements find their rows on the embedded store: `keyed` reads only the
    /// rows whose primary key can satisfy the WHERE clause; `full` reads every row ever
    /// inserted, as MonkeyDB does (the paper's trace shapes; docs/workloads.md, "Keyed
    /// scans").
    #[arg(long, default_value = "keyed", value_name = "keyed|full")]
    scan: isopredict::store::ScanMode,
}

/// Runs the pipeline; exit code 1 for an anomaly (validated or predicted), 0 for none, 3 for
/// unknown, 2 for bad input.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(workload) = workloads::by_name(&args.workload) else {
        let names: Vec<&str> = workloads::all()
            .iter()
            .chain(workloads::variants().iter())
            .map(|w| w.name())
            .collect();
        isopredict::ewriteln!(
            "error: unknown workload `{}` (expected one of: {})",
            args.workload,
            names.join(", ")
        );
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    };
    let calls = args.calls.unwrap_or(args.size.calls_per_terminal());
    if let Err(e) = isopredict::workloads::check_run_size(args.sessions, calls) {
        isopredict::ewriteln!("error: {e}");
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    }
    let backend = match parse_store(&args.store, args.isolation) {
        Ok(b) => b,
        Err(e) => {
            isopredict::ewriteln!("error: --store: {e}");
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    };
    // The level follows the database: rc at read committed, si at repeatable read, and at
    // serializable nothing to predict (the run checks the promise).
    if args.reproduce && backend.is_none() {
        isopredict::ewriteln!("error: --reproduce needs a database --store (a PostgreSQL URL)");
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    }
    let level = args.level.unwrap_or(if backend.is_some() {
        level_for_isolation(args.isolation)
    } else {
        isopredict::check::Level::Causal
    });
    let size = args.calls.map_or(args.size, Size::Calls);
    // With --reproduce the database run is recorded in turns (whole transactions one at a
    // time, in the embedded store's seeded order), so the same seed gives the same run and
    // the same prediction every time (src/reproduce/turns.rs).
    let database = backend.clone();
    let (backend, turns) = match (&backend, args.reproduce) {
        (Some(b), true) => {
            let config = RunConfig {
                terminals: args.sessions,
                scan: args.scan,
                ..RunConfig::paper(args.seed, size)
            };
            match reproduce::turns::in_turns(workload, &config, b.as_ref())? {
                Some((gated, turns)) => (Some(std::sync::Arc::from(gated)), Some(turns)),
                None => (backend, None),
            }
        }
        _ => (backend, None),
    };
    let options = RunOptions {
        seed: args.seed,
        size,
        level,
        strategy: args.strategy,
        timeout: args.timeout.0,
        sessions: args.sessions,
        backend,
        max: args.max,
        scan: args.scan,
    };
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| options.default_out_dir(workload.name()));
    // A plain progress line every few seconds when standard error is not a terminal.
    let working =
        isopredict::pipeline::progress::Working::start(format!("run {}", workload.name()));
    // Over the memory budget the run stops with "unknown" (exit 3), never the OOM killer.
    let outcome = run_workload_within(
        workload,
        &options,
        isopredict::predict::default_memory_budget(),
    );
    if let Err(e @ PipelineError::OverMemory(_)) = &outcome {
        isopredict::ewriteln!("isopredict: {e}; no output written");
        return Ok(ExitCode::from(3));
    }
    drop(working);
    if let Some(code) = super::interrupted() {
        return Ok(code);
    }
    let mut outcome = outcome?;
    outcome.report.raw_keys = args.raw_keys;
    write_run_files(&mut outcome, &dir)?;
    if let Some(failure) = outcome
        .report
        .database
        .as_ref()
        .and_then(|d| d.failure.as_ref())
    {
        isopredict::ewriteln!(
            "error: {failure}\n(the history recorded up to then is in {})",
            dir.join("observed.json").display()
        );
    }
    let mut out = super::stdout();
    let text = if args.json {
        serde_json::to_string_pretty(&outcome.report)? + "\n"
    } else {
        outcome.report.to_markdown()
    };
    out.write_all(text.as_bytes())?;
    let mut code = outcome.report.exit_code();
    if args.reproduce {
        if let Some(turns) = &turns {
            say_turns(turns, options.seed);
        }
        match (&outcome.prediction, &database) {
            (Some(p), Some(backend)) => {
                let ctx = Reproducing {
                    args: &args,
                    workload,
                    options: &options,
                    outcome: &outcome,
                    dir: &dir,
                };
                match ctx.reproduce(p, backend.as_ref(), &mut out)? {
                    Ok(true) => code = 1,
                    Ok(false) => {}
                    Err(exit) => return Ok(exit),
                }
            }
            _ => isopredict::ewriteln!("note: --reproduce: nothing to reproduce (no prediction)"),
        }
    }
    Ok(ExitCode::from(code))
}

/// With `--reproduce` on a database: says whether the recording kept its turns.
fn say_turns(turns: &reproduce::turns::TransactionTurns, seed: u64) {
    match turns.left_order() {
        None => isopredict::ewriteln!(
            "note: --reproduce: the run was recorded on the database in turns (one \
             transaction at a time, {} turns, in the order the embedded store runs seed {}), \
             so it is the same every time",
            turns.len(),
            seed
        ),
        Some(why) => isopredict::ewriteln!("note: --reproduce: the run left its turns: {why}"),
    }
}

/// What `--reproduce` needs of the run that was just made.
struct Reproducing<'a> {
    args: &'a Args,
    workload: &'static dyn Workload,
    options: &'a RunOptions,
    outcome: &'a RunOutcome,
    dir: &'a Path,
}

impl Reproducing<'_> {
    /// Reproduces the prediction `p` on the database `backend` and writes its folder; prints
    /// its report unless `--json`. `Ok(true)` when reproduced (exit 1), `Err(code)` when a stop
    /// ended it.
    fn reproduce(
        &self,
        p: &Prediction,
        backend: &dyn Backend,
        out: &mut impl Write,
    ) -> anyhow::Result<Result<bool, ExitCode>> {
        // In the application's terms, so messages and files name tables and rows.
        let named = self.outcome.keys.rename(&p.history);
        let observed = self.outcome.keys.rename(&self.outcome.observed.history);
        let config = RunConfig {
            terminals: self.options.sessions,
            scan: self.options.scan,
            ..RunConfig::paper(self.options.seed, self.options.size)
        };
        let origin = reproduce::origin_line(
            self.workload.name(),
            &config,
            self.options.level.full_name(),
        );
        let request = Request {
            workload: self.workload,
            config,
            predicted: &named,
            observed: &observed,
            backend,
            isolation: self.args.isolation,
            timeout: self.options.timeout,
            observed_on_embedded: false,
            run_anomaly: self
                .outcome
                .report
                .anomalies
                .first()
                .map(|a| a.name.clone()),
            origin,
        };
        // A stop ends the reproduction (the run's findings are written already).
        let reproduced = isopredict::interrupt::cuttable(|| reproduce::reproduce(&request));
        if isopredict::interrupt::signalled() {
            isopredict::ewriteln!(
                "isopredict: interrupted: the reproduction stopped; the run's outputs \
                 are in {}",
                self.dir.display()
            );
            return Ok(Err(ExitCode::from(isopredict::interrupt::EXIT_INTERRUPTED)));
        }
        let reproduced = reproduced?;
        let rdir = self.dir.join("reproduce");
        reproduce::write_folder(&reproduced, &rdir)?;
        let mut text = reproduced.to_markdown();
        text.push_str(&format!("\nWritten to {}\n", rdir.display()));
        if !self.args.json {
            out.write_all(b"\n")?;
            out.write_all(text.as_bytes())?;
        }
        Ok(Ok(reproduced.verdict.exit_code() == 1))
    }
}
