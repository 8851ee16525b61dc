//! Running a client command against a server: the PostgreSQL connection variables (`PGHOST`,
//! `PGPORT`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, `PGPASSWORD`) and `DATABASE_URL` point it
//! at the server, and its exit status is read as a shell does (a signal: 128 + its number).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

/// Where clients reach a server: its TCP address, and the directory of its Unix-domain socket
/// when it has one.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The TCP address.
    pub addr: SocketAddr,
    /// The directory holding `.s.PGSQL.PORT` (PostgreSQL's name for it), if any.
    pub socket_dir: Option<PathBuf>,
}

impl From<SocketAddr> for Endpoint {
    fn from(addr: SocketAddr) -> Endpoint {
        Endpoint {
            addr,
            socket_dir: None,
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.addr)?;
        if let Some(dir) = &self.socket_dir {
            write!(
                f,
                " and {}",
                dir.join(format!(".s.PGSQL.{}", self.addr.port())).display()
            )?;
        }
        Ok(())
    }
}

/// `command` (program and arguments) set up to connect to the server at `at`.
pub fn client_command(command: &[String], at: &Endpoint, password: Option<&str>) -> Command {
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    connection_env(&mut cmd, at, password);
    cmd
}

/// Points `cmd` at the server at `at`: libpq's variables (`PGHOST` names the Unix-domain
/// socket's directory when there is one: libpq, psycopg, node-postgres, pgx and asyncpg take
/// a directory there), `DATABASE_URL` (always TCP: URL parsers, JDBC's among them, expect a
/// host) and `PGPASSWORD` when the server asks for `password`.
pub fn connection_env(cmd: &mut Command, at: &Endpoint, password: Option<&str>) {
    let addr = at.addr;
    let user = "postgres";
    let database = "postgres";
    let auth = match password {
        Some(p) => format!("{user}:{p}@"),
        None => format!("{user}@"),
    };
    let host = match &at.socket_dir {
        Some(dir) => dir.display().to_string(),
        None => addr.ip().to_string(),
    };
    cmd.env("PGHOST", host)
        .env("PGPORT", addr.port().to_string())
        .env("PGUSER", user)
        .env("PGDATABASE", database)
        .env("PGSSLMODE", "disable")
        .env(
            "DATABASE_URL",
            format!(
                "postgresql://{auth}{}:{}/{database}?sslmode=disable",
                addr.ip(),
                addr.port()
            ),
        );
    if let Some(p) = password {
        cmd.env("PGPASSWORD", p);
    }
}

/// The exit code of `status` as a shell reports it (a signal that ended it: 128 + the signal).
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    match status.code() {
        Some(c) => c,
        None => {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        }
    }
}

/// Runs the setup commands against `server` (listening at `at`), one after another, each
/// with `sh -c` and `PGAPPNAME=setup`: every connection they open is a setup connection, so
/// every connection opened afterwards is ordered after it (docs/recording.md, "Connection
/// order"). `say` hears each command before it runs. Stops at the first command that fails
/// and returns its words with its exit code (`None`: it could not run); a setup connection
/// still open 10 s after the commands ended is said through `say` (it orders nothing).
pub fn run_setup(
    server: &super::Server,
    at: &Endpoint,
    setups: &[String],
    password: Option<&str>,
    mut say: impl FnMut(&str),
) -> Result<(), (String, Option<i32>)> {
    if setups.is_empty() {
        return Ok(());
    }
    server.begin_setup();
    let mut failed = None;
    for setup in setups {
        say(&format!("setup: {setup}"));
        let mut cmd = Command::new("sh");
        cmd.args(["-c", setup]).env("PGAPPNAME", "setup");
        connection_env(&mut cmd, at, password);
        match cmd.status() {
            Ok(s) if s.success() => {}
            Ok(s) => {
                let code = exit_code(s);
                failed = Some((
                    format!("the setup command `{setup}` failed (exit {code})"),
                    Some(code),
                ));
                break;
            }
            Err(e) => {
                failed = Some((format!("cannot run sh -c {setup}: {e}"), None));
                break;
            }
        }
    }
    if !server.end_setup(std::time::Duration::from_secs(10)) {
        say("a setup connection was still open 10 s after the setup commands ended: it orders nothing");
    }
    failed.map_or(Ok(()), Err)
}
