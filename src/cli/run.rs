//! `isopredict run WORKLOAD`: record → check → predict → re-verify → validate → report
//! (docs/workloads.md, "The main command").

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use isopredict::pipeline::{parse_level, run_workload, write_run_files, RunOptions};
use isopredict::predict::Strategy;
use isopredict::workloads::{self, Size};

/// Arguments of `isopredict run`.
#[derive(clap::Args)]
pub struct Args {
    /// The workload: smallbank, voter, tpcc or wikipedia.
    workload: String,
    /// The paper's run number (Java seed N·10000).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// small (3 sessions × 4 calls) or large (3 × 8).
    #[arg(long, default_value = "small")]
    size: Size,
    /// The weak isolation level: causal, ra, rc, pc (prefix consistency) or si (snapshot
    /// isolation).
    #[arg(long, default_value = "causal", value_parser = parse_level)]
    level: isopredict::check::Level,
    /// The prediction strategy.
    #[arg(long, value_enum, default_value = "approx-relaxed")]
    strategy: Strategy,
    /// Time budget in seconds for prediction (and for each serializability check).
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    timeout: f64,
    /// Output folder [default: out/<workload>-<size>-<seed>-<level>].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the report as JSON instead of Markdown.
    #[arg(long)]
    json: bool,
}

/// Runs the pipeline; exit code 1 for an anomaly (validated or predicted), 0 for none, 3 for
/// unknown, 2 for bad input.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(workload) = workloads::by_name(&args.workload) else {
        let names: Vec<&str> = workloads::all().iter().map(|w| w.name()).collect();
        eprintln!(
            "error: unknown workload `{}` (expected one of: {})",
            args.workload,
            names.join(", ")
        );
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    };
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        eprintln!("error: --timeout must be a positive number of seconds");
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    }
    let options = RunOptions {
        seed: args.seed,
        size: args.size,
        level: args.level,
        strategy: args.strategy,
        timeout: Some(Duration::from_secs_f64(args.timeout)),
    };
    let dir = args
        .out
        .unwrap_or_else(|| options.default_out_dir(workload.name()));
    let mut outcome = run_workload(workload, &options)?;
    write_run_files(&mut outcome, &dir)?;
    let mut out = std::io::stdout().lock();
    let text = if args.json {
        serde_json::to_string_pretty(&outcome.report)? + "\n"
    } else {
        outcome.report.to_markdown()
    };
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other?,
    }
    Ok(ExitCode::from(outcome.report.exit_code()))
}
