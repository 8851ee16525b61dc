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
use isopredict::reproduce::{self, app_upstream};
use isopredict::store::Isolation;

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
    /// After the test, re-run the command (and the setup commands) against a real
    /// PostgreSQL (--store) through the server's upstream gate, its statements in the
    /// order of the reproduction schedule of the first anomaly (docs/testing-apps.md, "The
    /// application itself on PostgreSQL"); written to DIR/app-reproduction.json.
    #[arg(long, requires = "store")]
    reproduce: bool,
    /// With --reproduce: the PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).
    #[arg(long, value_name = "URL", requires = "reproduce")]
    store: Option<String>,
    /// With --reproduce: the isolation level to run at: read-committed, repeatable-read or
    /// serializable [default: the prediction's level's].
    #[arg(long, requires = "reproduce")]
    isolation: Option<Isolation>,
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
        command: args.command.clone(),
        setup: args.setup.clone(),
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
    let itself = match (&args.store, args.reproduce) {
        (Some(url), true) => match reproduce_itself(&args, url, &options) {
            Ok(o) => Some(o),
            Err(code) => return Ok(code),
        },
        _ => None,
    };
    let text = match (&itself, args.json) {
        (None, true) => serde_json::to_string_pretty(&report)? + "\n",
        (Some(o), true) => {
            serde_json::to_string_pretty(&serde_json::json!({"test": report, "itself": o}))? + "\n"
        }
        (None, false) => report.to_markdown(),
        (Some(o), false) => report.to_markdown() + &itself_markdown(o),
    };
    super::stdout().write_all(text.as_bytes())?;
    let code = match &itself {
        Some(o) if o.reproduction.verdict == reproduce::ReproVerdict::Unknown => 3,
        _ => report.exit_code(),
    };
    Ok(ExitCode::from(code))
}

/// `--reproduce`: the application itself on PostgreSQL along the folder's prediction;
/// `Err`: the exit code of bad input.
fn reproduce_itself(
    args: &Args,
    url: &str,
    options: &AppTestOptions,
) -> Result<app_upstream::ItselfOutcome, ExitCode> {
    let folder = reproduce::load_app_dir(&args.out).map_err(|e| {
        isopredict::ewriteln!("error: {e}");
        ExitCode::from(super::EXIT_BAD_INPUT)
    })?;
    let Some(isolation) = args
        .isolation
        .or_else(|| reproduce::app::isolation_of(&folder))
    else {
        isopredict::ewriteln!("error: --isolation is needed: the test did not predict at rc or si");
        return Err(ExitCode::from(super::EXIT_BAD_INPUT));
    };
    isopredict::ewriteln!(
        "isopredict test: re-running {} on PostgreSQL at {} through the gate",
        options.command.join(" "),
        isolation.sql()
    );
    let outcome = app_upstream::reproduce_itself(&app_upstream::ItselfRequest {
        folder: &folder,
        url,
        isolation,
        command: &options.command,
        setup: &options.setup,
        wait: options.turn_wait.max(std::time::Duration::from_secs(2)),
        timeout: options.timeout,
    });
    let path = args.out.join("app-reproduction.json");
    let written = isopredict::output::write_file_atomically(&path, |w| {
        serde_json::to_writer_pretty(&mut *w, &outcome).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    });
    if let Err(e) = written {
        isopredict::ewriteln!("error: {e}");
    }
    Ok(outcome)
}

/// The `--reproduce` section of the Markdown report.
fn itself_markdown(o: &app_upstream::ItselfOutcome) -> String {
    let mut out = format!(
        "\n## The application itself on PostgreSQL\n\n{}\n",
        o.reproduction.summary
    );
    for (command, code) in &o.exits {
        let code = code.map_or("could not run".to_string(), |c| format!("exit {c}"));
        out += &format!("\n- `{command}`: {code}");
    }
    for row in &o.final_rows {
        out += &format!("\n- final row {row}");
    }
    for (key, n) in &o.committed_writers {
        out += &format!("\n- {key}: {n} committed transactions wrote it");
    }
    for d in &o.divergences {
        out += &format!("\n- left the schedule: {d}");
    }
    for e in &o.errors {
        out += &format!("\n- refused by PostgreSQL: {e}");
    }
    out + "\n"
}
