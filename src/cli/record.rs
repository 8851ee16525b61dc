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
    /// Serve CMD on a Unix-domain socket as well, in a fresh private directory that PGHOST
    /// names (libpq, psycopg, node-postgres, pgx and asyncpg then skip loopback TCP, which
    /// costs more per statement than the server does); DATABASE_URL stays TCP.
    #[arg(long)]
    pub unix_socket: bool,
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
    let socket_dir = args.unix_socket.then(private_socket_dir).transpose()?;
    let recorded = record(&args, lock_wait, socket_dir.as_ref().map(|d| d.0.clone()));
    drop(socket_dir);
    recorded
}

/// A fresh directory only this user may enter, removed when dropped (after the server that
/// listened in it, which removes its socket file).
struct SocketDir(PathBuf);

impl Drop for SocketDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn private_socket_dir() -> anyhow::Result<SocketDir> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let dir = base.join(format!("isopredict-record-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(SocketDir(dir)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => anyhow::bail!(
                "cannot create a directory for the socket in {}: {e}",
                base.display()
            ),
        }
    }
    anyhow::bail!(
        "cannot create a directory for the socket in {}: every name is taken",
        base.display()
    )
}

fn record(
    args: &Args,
    lock_wait: std::time::Duration,
    socket_dir: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let server = Arc::new(Server::bind(Config {
        password: args.password.clone(),
        lock_wait,
        socket_dir,
        ..Config::default()
    })?);
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", args.out.display()))?;
    let at = server.endpoint()?;
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
        &at,
        &args.setup,
        args.password.as_deref(),
        |words| isopredict::ewriteln!("isopredict record: listening on {at}; {words}"),
    );
    let code = match setup {
        Err((words, code)) => {
            isopredict::ewriteln!("isopredict record: {words}; not running the command");
            code.ok_or_else(|| anyhow::anyhow!("{words}"))
        }
        Ok(()) => {
            let mut cmd = client::client_command(&args.command, &at, args.password.as_deref());
            isopredict::ewriteln!(
                "isopredict record: listening on {at}; running {}",
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
