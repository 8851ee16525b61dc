//! `isopredict record --out DIR [--setup 'SETUP CMD']… -- CMD ARGS…`: serve on a free loopback
//! port while the setup commands, then CMD, run with the PostgreSQL connection variables
//! pointing at it, then write DIR/observed.json. Every connection a setup command opened is
//! ordered before every connection CMD opens (program order, not timing).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use isopredict::server::{client, Config, Server};

/// Arguments of `isopredict record`.
#[derive(clap::Args)]
pub struct Args {
    /// The folder to write observed.json into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Require this password (PGPASSWORD and DATABASE_URL carry it to CMD).
    #[arg(long)]
    pub password: Option<String>,
    /// How long a transaction waits for a lock before going on without locks (seconds).
    #[arg(long, alias = "token-wait", value_name = "SECS", default_value_t = 2.0)]
    pub lock_wait: f64,
    /// A setup command (run with `sh -c`, before CMD, one after another; repeatable): its
    /// connections — a fixture that loads the tables — are ordered before every connection of
    /// CMD. It runs with PGAPPNAME=setup. If one fails, CMD is not run.
    #[arg(long, value_name = "SHELL COMMAND")]
    pub setup: Vec<String>,
    /// The command to run and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub command: Vec<String>,
}

/// Runs CMD against the server and writes the recording; exits with CMD's status (a signal
/// that ended it: 128 + the signal), or 2 if the server or the output failed.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let lock_wait = std::time::Duration::try_from_secs_f64(args.lock_wait).map_err(|_| {
        anyhow::anyhow!("--lock-wait {}: not a duration in seconds", args.lock_wait)
    })?;
    let server = Arc::new(Server::bind(Config {
        password: args.password.clone(),
        lock_wait,
        ..Config::default()
    })?);
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", args.out.display()))?;
    let addr = server.local_addr()?;
    // A signal ends the serving (the command gets it too) and the recording is written.
    isopredict::interrupt::keep_findings();
    super::on_cut_say(
        "isopredict record: stopping: writing the recording (Ctrl-C again to exit at once, \
         writing nothing)",
    );
    let stop = Arc::new(AtomicBool::new(false));
    let serving = {
        let (server, stop) = (server.clone(), stop.clone());
        std::thread::spawn(move || server.run(&stop))
    };
    let setup = client::run_setup(
        &server,
        addr,
        &args.setup,
        args.password.as_deref(),
        |words| isopredict::ewriteln!("isopredict record: listening on {addr}; {words}"),
    );
    let code = match setup {
        Err((words, code)) => {
            isopredict::ewriteln!("isopredict record: {words}; not running the command");
            code.ok_or_else(|| anyhow::anyhow!("{words}"))
        }
        Ok(()) => {
            let mut cmd = client::client_command(&args.command, addr, args.password.as_deref());
            isopredict::ewriteln!(
                "isopredict record: listening on {addr}; running {}",
                args.command.join(" ")
            );
            cmd.status()
                .map(client::exit_code)
                .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", args.command[0]))
        }
    };
    stop.store(true, Ordering::SeqCst);
    let served = serving
        .join()
        .map_err(|_| anyhow::anyhow!("the recording server stopped unexpectedly"))?;
    let code = code?;
    served?;
    let path = args.out.join("observed.json");
    let summary = server.write(&path)?;
    isopredict::ewriteln!("isopredict record: {summary}; wrote {}", path.display());
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}
