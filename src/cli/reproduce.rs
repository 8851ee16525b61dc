//! `isopredict reproduce RUN_DIR --store URL --isolation LEVEL`: run a prediction of a `run`
//! folder on a database along a schedule, and write a reproducer (docs/recording.md,
//! "Reproducing on your database").

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use isopredict::pipeline::parse_store;
use isopredict::reproduce::{self, Request};
use isopredict::store::Isolation;

/// `reproduce DIR` on an application's folder (`isopredict test` or `record`): its own
/// statements on the database.
fn run_app(args: Args) -> anyhow::Result<ExitCode> {
    let folder = match reproduce::load_app_dir(&args.run_dir) {
        Ok(f) => f,
        Err(e) => {
            isopredict::ewriteln!("error: {e}");
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    };
    let Some(isolation) = args
        .isolation
        .or_else(|| reproduce::app::isolation_of(&folder))
    else {
        isopredict::ewriteln!(
            "error: --isolation is needed: {} was not predicted at rc or si",
            args.run_dir.display()
        );
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    };
    let postgres = match isopredict::store::postgres::Postgres::new(&args.store, isolation) {
        Ok(p) => p,
        Err(e) => {
            isopredict::ewriteln!("error: --store: {e}");
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    };
    let outcome = reproduce::reproduce_app(&reproduce::AppRequest {
        folder: &folder,
        postgres: &postgres,
        isolation,
        timeout: args.timeout.0,
    });
    if let Some(code) = super::interrupted() {
        return Ok(code);
    }
    write_and_print(&args, outcome)
}

/// Arguments of `isopredict reproduce`.
#[derive(clap::Args)]
pub struct Args {
    /// A `run` output folder holding a prediction (report.json, predicted.json), or an
    /// application's folder from `isopredict test` or `record` (observed.json with its SQL
    /// statements; without predicted.json the prediction is made at the level --isolation
    /// allows), reproduced with the application's own statements.
    run_dir: PathBuf,
    /// The database: a PostgreSQL URL, e.g. postgres://postgres@127.0.0.1:5432/postgres.
    #[arg(long, value_name = "URL")]
    store: String,
    /// The isolation level to reproduce at: read-committed, repeatable-read or serializable
    /// [default: the level the run was recorded at].
    #[arg(long)]
    isolation: Option<Isolation>,
    /// Time budget in seconds for each check; 0: no limit.
    #[arg(long, default_value = "60", value_name = "SECS", value_parser = super::parse_timeout)]
    timeout: super::Timeout,
    /// Output folder [default: RUN_DIR/reproduce].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the report as JSON instead of Markdown.
    #[arg(long)]
    json: bool,
}

/// Reproduces; exit code 1 reproduced, 0 not reproduced (or not reproducible), 3 unknown, 2
/// bad input.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // The database URL is bad input whatever the folder holds (an empty or hostless one
    // would otherwise fail only when connecting, as if the server were down).
    if args.store != "embedded" {
        if let Err(e) =
            isopredict::store::postgres::Postgres::new(&args.store, Isolation::ReadCommitted)
        {
            isopredict::ewriteln!("error: --store: {e}");
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    }
    if reproduce::is_app_folder(&args.run_dir) {
        return run_app(args);
    }
    let folder = match reproduce::load_run_dir(&args.run_dir) {
        Ok(f) => f,
        Err(e) => {
            isopredict::ewriteln!("error: {e}");
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    };
    if !folder.scan_recorded {
        isopredict::ewriteln!(
            "note: {} does not say how the run scanned tables (it was made before `run` \
             recorded --scan): taking keyed scans, the default; a run made with --scan full \
             will differ from the observed run",
            args.run_dir.join("report.json").display()
        );
    }
    let Some(isolation) = args.isolation.or(folder.isolation) else {
        isopredict::ewriteln!(
            "error: --isolation is needed: the run in {} was not recorded on a database",
            args.run_dir.display()
        );
        return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
    };
    let backend = match parse_store(&args.store, isolation) {
        Ok(Some(b)) => b,
        Ok(None) => {
            isopredict::ewriteln!("error: --store: reproducing needs a database (a PostgreSQL URL), not the embedded store");
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
        Err(e) => {
            isopredict::ewriteln!("error: --store: {e}");
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    };
    let request = Request {
        workload: folder.workload,
        config: folder.config.clone(),
        predicted: &folder.predicted,
        observed: &folder.observed,
        backend: backend.as_ref(),
        isolation,
        timeout: args.timeout.0,
        origin: folder.origin.clone(),
        observed_on_embedded: folder.isolation.is_none(),
        run_anomaly: folder.anomaly.clone(),
    };
    let outcome = reproduce::reproduce(&request);
    if let Some(code) = super::interrupted() {
        return Ok(code);
    }
    let outcome = outcome?;
    write_and_print(&args, outcome)
}

/// Writes the folder, prints the report, and exits with the verdict's code.
fn write_and_print(args: &Args, outcome: reproduce::Reproduction) -> anyhow::Result<ExitCode> {
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| args.run_dir.join("reproduce"));
    reproduce::write_folder(&outcome, &dir)?;
    let mut out = super::stdout();
    let text = if args.json {
        serde_json::to_string_pretty(&outcome)? + "\n"
    } else {
        let mut t = outcome.to_markdown();
        t.push_str(&format!("\nWritten to {}\n", dir.display()));
        t
    };
    out.write_all(text.as_bytes())?;
    Ok(ExitCode::from(outcome.verdict.exit_code()))
}
