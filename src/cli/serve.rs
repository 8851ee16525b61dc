//! `isopredict serve --port N --out DIR`: the recording server (library: [`isopredict::server`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use isopredict::server::{Config, Server};

/// Arguments of `isopredict serve`.
#[derive(clap::Args)]
pub struct Args {
    /// The port to listen on (0: a free one, printed on the "listening on" line).
    #[arg(long, default_value_t = 5432)]
    pub port: u16,
    /// The address to listen on (loopback by default).
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub listen: IpAddr,
    /// The folder to write observed.json into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Also listen on a Unix-domain socket in DIR, named as PostgreSQL's (`.s.PGSQL.PORT`), so
    /// that libpq clients reach it with `host=DIR` or PGHOST=DIR — cheaper than loopback TCP.
    #[arg(long, value_name = "DIR")]
    pub socket_dir: Option<PathBuf>,
    /// Stop after SECS seconds without any open connection.
    #[arg(long, value_name = "SECS")]
    pub until_idle: Option<f64>,
    /// Require this password (cleartext authentication); without it, trust.
    #[arg(long)]
    pub password: Option<String>,
    /// How long a transaction waits for a lock before going on without locks (seconds).
    #[arg(long, alias = "token-wait", value_name = "SECS", default_value_t = 2.0)]
    pub lock_wait: f64,
}

fn seconds(name: &str, s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| anyhow::anyhow!("{name} {s}: not a duration in seconds"))
}

/// The server configuration the arguments describe.
pub fn config(args: &Args) -> anyhow::Result<Config> {
    Ok(Config {
        addr: SocketAddr::new(args.listen, args.port),
        socket_dir: args.socket_dir.clone(),
        until_idle: args
            .until_idle
            .map(|s| seconds("--until-idle", s))
            .transpose()?,
        password: args.password.clone(),
        lock_wait: seconds("--lock-wait", args.lock_wait)?,
        ..Config::default()
    })
}

/// Serves until Ctrl-C/SIGTERM or the idle timeout, then writes DIR/observed.json; exit 0,
/// or 2 if the port cannot be bound or the output cannot be written.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.socket_dir {
        if !dir.is_dir() {
            anyhow::bail!("--socket-dir {}: not a directory", dir.display());
        }
    }
    let server = Server::bind(config(&args)?)
        .map_err(|e| anyhow::anyhow!("cannot listen on {}:{}: {e}", args.listen, args.port))?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", args.out.display()))?;
    // A signal ends the serving and the recording is written: what was recorded is kept.
    isopredict::interrupt::keep_findings();
    super::on_cut_say(
        "isopredict serve: stopping: writing the recording (Ctrl-C again to exit at once, \
         writing nothing)",
    );
    eprintln!("isopredict serve: listening on {}", server.endpoint()?);
    server.run(&AtomicBool::new(false))?;
    let path = args.out.join("observed.json");
    let summary = server.write(&path)?;
    eprintln!("isopredict serve: {summary}; wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}
