//! `isopredict test --out DIR [--level L] [--strategy S] [--max N] -- CMD ARGS…`: record an
//! application's test command through the recording server, predict anomalies, re-run the
//! command along each prediction (the server in replay mode) and report (library:
//! [`isopredict::pipeline::app_test`]; docs/testing-apps.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use isopredict::check::Level;
use isopredict::pipeline::{parse_level, test_application, write_app_test_files, AppTestOptions};
use isopredict::predict::Strategy;

/// Arguments of `isopredict test`.
#[derive(clap::Args)]
pub struct Args {
    /// The folder to write the report and histories into (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// The weak isolation level to predict at: causal, ra, rc, pc or si (rc: PostgreSQL's
    /// default, read committed).
    #[arg(long, default_value = "rc", value_parser = parse_level)]
    level: Level,
    /// The prediction strategy.
    #[arg(long, value_enum, default_value = "approx-relaxed")]
    strategy: Strategy,
    /// Most anomalies to predict (each with another anomaly), each replayed by re-running
    /// the command.
    #[arg(long, default_value = "10", value_name = "N|all", value_parser = super::predict::parse_max)]
    max: usize,
    /// Time budget in seconds for prediction and for each check; 0: no limit.
    #[arg(long, default_value = "60", value_name = "SECS", value_parser = super::parse_timeout)]
    timeout: super::Timeout,
    /// How long a replayed transaction waits for its turn (the prediction's order) before the
    /// wait is reported as a divergence and the replay goes on (seconds).
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    turn_wait: f64,
    /// How long a recorded transaction waits for a lock before going on without locks
    /// (seconds).
    #[arg(long, alias = "token-wait", value_name = "SECS", default_value_t = 2.0)]
    lock_wait: f64,
    /// A setup command (run with `sh -c` before CMD, in the recording and before each replay;
    /// repeatable): its connections — a fixture that loads the tables — come before every
    /// connection of CMD. It runs with PGAPPNAME=setup. If one fails, the test stops.
    #[arg(long, value_name = "SHELL COMMAND")]
    setup: Vec<String>,
    /// Print the report as JSON instead of Markdown.
    #[arg(long)]
    json: bool,
    /// The test command and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    command: Vec<String>,
}

fn seconds(name: &str, s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| anyhow::anyhow!("{name} {s}: not a duration in seconds"))
}

/// Runs the test; exit 1 when an anomaly is predicted (validated or not) or the observed run
/// violates the level, 0 when none is predicted, 3 when unknown, 2 on bad input or when the
/// command cannot run.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = AppTestOptions {
        command: args.command,
        setup: args.setup,
        level: args.level,
        strategy: args.strategy,
        max: args.max,
        timeout: args.timeout.0,
        turn_wait: seconds("--turn-wait", args.turn_wait)?,
        lock_wait: seconds("--lock-wait", args.lock_wait)?,
        env: Vec::new(),
        dir: None,
    };
    isopredict::ewriteln!(
        "isopredict test: recording {} (then one replay per prediction)",
        options.command.join(" ")
    );
    let outcome = test_application(&options);
    if let Some(code) = super::interrupted() {
        return Ok(code);
    }
    let report = write_app_test_files(&outcome?, &args.out)?;
    let text = if args.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        report.to_markdown()
    };
    super::stdout().write_all(text.as_bytes())?;
    Ok(ExitCode::from(report.exit_code()))
}
