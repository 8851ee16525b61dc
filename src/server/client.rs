//! Running a client command against a server: the PostgreSQL connection variables (`PGHOST`,
//! `PGPORT`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, `PGPASSWORD`) and `DATABASE_URL` point it
//! at the server, and its exit status is read as a shell does (a signal: 128 + its number).

use std::net::SocketAddr;
use std::process::Command;

/// `command` (program and arguments) set up to connect to the server at `addr`.
pub fn client_command(command: &[String], addr: SocketAddr, password: Option<&str>) -> Command {
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    connection_env(&mut cmd, addr, password);
    cmd
}

/// Points `cmd` at the server at `addr`: libpq's variables, `DATABASE_URL` (and
/// `PGPASSWORD` when the server asks for `password`).
pub fn connection_env(cmd: &mut Command, addr: SocketAddr, password: Option<&str>) {
    let user = "postgres";
    let database = "postgres";
    let auth = match password {
        Some(p) => format!("{user}:{p}@"),
        None => format!("{user}@"),
    };
    cmd.env("PGHOST", addr.ip().to_string())
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

/// Runs the setup commands against `server` (listening at `addr`), one after another, each
/// with `sh -c` and `PGAPPNAME=setup`: every connection they open is a setup connection, so
/// every connection opened afterwards is ordered after it (docs/recording.md, "Connection
/// order"). `say` hears each command before it runs. Stops at the first command that fails
/// and returns its words with its exit code (`None`: it could not run); a setup connection
/// still open 10 s after the commands ended is said through `say` (it orders nothing).
pub fn run_setup(
    server: &super::Server,
    addr: SocketAddr,
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
        connection_env(&mut cmd, addr, password);
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
