//! Throughput of the recording server against PostgreSQL, in one run (issue 32's
//! benchmark; not a timed test): pgbench with 4 clients runs the same custom script (a
//! read and an atomic increment of one of 1000 rows) against `isopredict serve` — recording
//! included — and against a throwaway PostgreSQL on the same machine, in alternating slices
//! (serve, PostgreSQL; then PostgreSQL, serve; … for `--rounds` rounds), so that a change of
//! the machine's load during the run falls on both alike. Prints each round's tps and ratio,
//! then per server the transactions of all its slices over the time they took, their ratio,
//! the CPU time each server spent per transaction (serve: this process; PostgreSQL: the
//! postmaster and all its processes, exited backends included), the events recorded and the
//! server's memory per recorded event. Then the memory of a recording of 10^5 transactions.
//!
//! ```sh
//! eval "$(scripts/pg-throwaway.sh start)"      # exports ISOPREDICT_POSTGRES_URL, ISOPREDICT_PG_DIR
//! cargo run --release --example server_bench [-- TRANSACTIONS_PER_CLIENT] [--rounds=N] [--simple] [--no-large] [--threads=N]
//! scripts/pg-throwaway.sh stop "$ISOPREDICT_PG_DIR"
//! ```
//!
//! `TRANSACTIONS_PER_CLIENT`: per client in one slice (5000 by default: about a second, so
//! that connection start-up — pgbench connects anew for every slice, and PostgreSQL forks a
//! backend per connection — does not decide the ratio; 500 made slices of 0.1 s, and their
//! ratios ran higher for serve); `--rounds=N`: rounds of two slices (6 by default). `--threads=N`: the server's serving threads (default: one
//! per core, at least two). `--simple`: pgbench's simple query protocol (`-M simple`,
//! statements as text with the values inlined) instead of prepared statements (`-M
//! prepared`). `--unix`: both servers through Unix-domain sockets (serve's `--socket-dir`,
//! PostgreSQL's in `ISOPREDICT_PG_DIR`) instead of loopback TCP. `--no-large`: skip the 10^5-transaction recording. Without
//! `ISOPREDICT_POSTGRES_URL` only the server is measured; without `ISOPREDICT_PG_DIR`
//! PostgreSQL's CPU time is not. pgbench is looked up in `/usr/lib/postgresql/*/bin` and on
//! PATH.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use isopredict::server::{Config, Server};

fn pg_bin(name: &str) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs.iter()
        .rev()
        .map(|d| d.join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Resident memory of this process in bytes (Linux), or 0.
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .map_or(0, |pages| pages * 4096)
}

/// User plus system CPU time of this process (every thread of the server).
fn own_cpu() -> Duration {
    // SAFETY: getrusage writes into the struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// CPU time of a PostgreSQL cluster: its postmaster's own and its exited children's (the
/// backends of closed connections), plus every live child's. Clock-tick resolution.
fn postgres_cpu(pg_dir: &Path) -> Option<Duration> {
    let pid: u32 = std::fs::read_to_string(pg_dir.join("data/postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // Fields after the command name: state is field 3; ppid 4; utime..cstime 14..17.
    let stat = |p: &str| -> Option<(u32, f64, f64)> {
        let s = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        let rest = &s[s.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let n = |i: usize| f.get(i - 3).and_then(|x| x.parse::<f64>().ok());
        Some((n(4)? as u32, n(14)? + n(15)?, n(16)? + n(17)?))
    };
    let (_, own, waited) = stat(&pid.to_string())?;
    let mut ticks = own + waited;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(p) = name
            .to_str()
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Some((ppid, own, _)) = stat(p) {
            if ppid == pid {
                ticks += own;
            }
        }
    }
    Some(Duration::from_secs_f64(ticks / tick))
}

const SETUP: &str = "DROP TABLE IF EXISTS bench;
CREATE TABLE bench (id integer PRIMARY KEY, v integer NOT NULL);
INSERT INTO bench VALUES ";

const SCRIPT: &str = "\\set id random(1, 1000)
\\set d random(1, 9)
BEGIN;
SELECT v FROM bench WHERE id = :id;
UPDATE bench SET v = v + :d WHERE id = :id;
END;
";

/// How the pgbench runs go.
struct Run<'a> {
    dir: &'a Path,
    /// Transactions per client in one slice.
    per_client: u32,
    clients: u32,
    mode: &'a str,
}

/// Creates and loads the table through `env` (libpq variables).
fn load(env: &[(&str, String)], r: &Run<'_>) {
    let rows: Vec<String> = (1..=1000).map(|i| format!("({i}, 0)")).collect();
    let setup = r.dir.join("setup.sql");
    std::fs::write(&setup, format!("{SETUP}{};\n", rows.join(", "))).unwrap();
    let psql = Command::new(pg_bin("psql"))
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-f"])
        .arg(&setup)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("psql runs");
    assert!(
        psql.status.success(),
        "{}",
        String::from_utf8_lossy(&psql.stderr)
    );
}

/// What one pgbench slice measured: its transactions, the seconds they took (pgbench's tps
/// without connection time), and the server's CPU time meanwhile.
#[derive(Default, Clone, Copy)]
struct Slice {
    txns: f64,
    secs: f64,
    cpu: Option<Duration>,
}

impl Slice {
    fn tps(&self) -> f64 {
        self.txns / self.secs.max(1e-9)
    }

    fn add(&mut self, other: Slice) {
        self.cpu = if self.txns == 0.0 {
            other.cpu
        } else {
            self.cpu.zip(other.cpu).map(|(a, b)| a + b)
        };
        self.txns += other.txns;
        self.secs += other.secs;
    }
}

/// Runs one pgbench slice against `env`; the server's CPU time as `server_cpu` reads it.
fn slice(
    env: &[(&str, String)],
    r: &Run<'_>,
    seed: u32,
    server_cpu: &dyn Fn() -> Option<Duration>,
) -> Slice {
    let script = r.dir.join("bench.sql");
    std::fs::write(&script, SCRIPT).unwrap();
    let before = server_cpu();
    let out = Command::new(pg_bin("pgbench"))
        .args([
            "-n",
            "-M",
            r.mode,
            &format!("--random-seed={seed}"),
            "-j",
            "2",
        ])
        .args([
            "-c",
            &r.clients.to_string(),
            "-t",
            &r.per_client.to_string(),
            "-f",
        ])
        .arg(&script)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("pgbench runs");
    let cpu = before.zip(server_cpu()).map(|(b, a)| a.saturating_sub(b));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tps: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .expect("pgbench prints tps");
    let txns = f64::from(r.per_client * r.clients);
    Slice {
        txns,
        secs: txns / tps,
        cpu,
    }
}

/// A recording server running on its own thread.
struct Serving {
    server: Arc<Server>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
    env: Vec<(&'static str, String)>,
    rss_before: u64,
}

impl Serving {
    /// A server with `threads` serving threads; with `socket_dir`, its clients connect
    /// through a Unix-domain socket there.
    fn start(threads: usize, socket_dir: Option<&Path>) -> Serving {
        let rss_before = rss();
        let server = Arc::new(
            Server::bind(Config {
                threads,
                socket_dir: socket_dir.map(Path::to_path_buf),
                ..Config::default()
            })
            .unwrap(),
        );
        let addr = server.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (server, stop) = (server.clone(), stop.clone());
            std::thread::spawn(move || server.run(&stop))
        };
        let host = socket_dir.map_or(addr.ip().to_string(), |d| d.display().to_string());
        let env = vec![
            ("PGHOST", host),
            ("PGPORT", addr.port().to_string()),
            ("PGUSER", "postgres".to_string()),
            ("PGDATABASE", "postgres".to_string()),
        ];
        Serving {
            server,
            stop,
            thread,
            env,
            rss_before,
        }
    }

    /// Stops it; the events it recorded, the memory it grew by, and the statements that
    /// waited for a lock.
    fn finish(self) -> (usize, u64, u64) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().unwrap().unwrap();
        let memory = rss().saturating_sub(self.rss_before);
        let (_, summary) = self.server.history("bench").unwrap();
        (summary.events, memory, summary.lock_waits)
    }
}

/// Microseconds per transaction.
fn per_txn(s: &Slice) -> Option<f64> {
    s.cpu.map(|c| c.as_secs_f64() * 1e6 / s.txns.max(1.0))
}

fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0} us"))
}

/// libpq variables for `postgres://USER@HOST:PORT/DB`, as scripts/pg-throwaway.sh prints it.
fn postgres_env(url: &str) -> Vec<(&'static str, String)> {
    let rest = url.split("://").nth(1).unwrap_or(url);
    let (user, rest) = rest.split_once('@').unwrap_or(("postgres", rest));
    let (hostport, db) = rest.split_once('/').unwrap_or((rest, "postgres"));
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "5432"));
    vec![
        ("PGHOST", host.to_string()),
        ("PGPORT", port.to_string()),
        ("PGUSER", user.to_string()),
        ("PGDATABASE", db.split('?').next().unwrap_or(db).to_string()),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let per_client: u32 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(5000);
    let rounds: u32 = args
        .iter()
        .find_map(|a| a.strip_prefix("--rounds=")?.parse().ok())
        .unwrap_or(6);
    let threads = args
        .iter()
        .find_map(|a| a.strip_prefix("--threads=")?.parse().ok())
        .unwrap_or(Config::default().threads);
    let mode = if args.iter().any(|a| a == "--simple") {
        "simple"
    } else {
        "prepared"
    };
    let dir = std::env::temp_dir().join(format!("isopredict-server-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let r = Run {
        dir: &dir,
        per_client,
        clients: 4,
        mode,
    };
    // --unix: both servers through Unix-domain sockets (PostgreSQL's is in the throwaway
    // cluster's directory, ISOPREDICT_PG_DIR, where scripts/pg-throwaway.sh puts it).
    let unix = args.iter().any(|a| a == "--unix");
    let pg_dir = std::env::var_os("ISOPREDICT_PG_DIR").map(PathBuf::from);
    let socket_dir = unix.then(|| dir.join("socket"));
    if let Some(d) = &socket_dir {
        std::fs::create_dir_all(d).unwrap();
    }
    let serving = Serving::start(threads, socket_dir.as_deref());
    load(&serving.env, &r);
    let postgres = std::env::var("ISOPREDICT_POSTGRES_URL").ok().map(|url| {
        let mut env = postgres_env(&url);
        if unix {
            let d = pg_dir
                .as_ref()
                .expect("--unix needs ISOPREDICT_PG_DIR (the socket's directory)");
            env[0].1 = d.display().to_string();
        }
        env
    });
    if let Some(env) = &postgres {
        load(env, &r);
    }
    let pg_cpu = || pg_dir.as_deref().and_then(postgres_cpu);
    // Alternating slices, the order swapped every round, so that both servers meet the same
    // load on a shared machine.
    let (mut served, mut pg) = (Slice::default(), Slice::default());
    let mut ratios: Vec<f64> = Vec::new();
    for round in 0..rounds {
        let seed = round + 1;
        let run_serve = || slice(&serving.env, &r, seed, &|| Some(own_cpu()));
        let run_pg = || postgres.as_ref().map(|env| slice(env, &r, seed, &pg_cpu));
        let (s, p) = if round % 2 == 0 {
            let s = run_serve();
            (s, run_pg())
        } else {
            let p = run_pg();
            (run_serve(), p)
        };
        served.add(s);
        match p {
            Some(p) => {
                pg.add(p);
                ratios.push(s.tps() / p.tps());
                println!(
                    "round {}: serve {:.0} tps, PostgreSQL {:.0} tps, ratio {:.2}",
                    round + 1,
                    s.tps(),
                    p.tps(),
                    s.tps() / p.tps()
                );
            }
            None => println!("round {}: serve {:.0} tps", round + 1, s.tps()),
        }
    }
    let (events, memory, waits) = serving.finish();
    println!(
        "isopredict serve: {:.0} tps over {rounds} slices of 4 clients x {per_client} \
         transactions (-M {mode}, {}, recording included), {} CPU per transaction; {events} \
         events recorded, {:.0} bytes of memory per event; {waits} lock waits",
        served.tps(),
        if unix {
            "Unix-domain sockets"
        } else {
            "loopback TCP"
        },
        us(per_txn(&served)),
        memory as f64 / events.max(1) as f64
    );
    if postgres.is_some() {
        println!(
            "PostgreSQL:       {:.0} tps over the alternating slices, {} CPU per transaction{}; \
             ratio serve/PostgreSQL = {:.2}",
            pg.tps(),
            us(per_txn(&pg)),
            if pg.cpu.is_none() {
                " (set ISOPREDICT_PG_DIR)"
            } else {
                ""
            },
            served.tps() / pg.tps()
        );
        ratios.sort_by(f64::total_cmp);
        println!(
            "rounds: serve at or above PostgreSQL in {} of {}; round ratios {:.2} to {:.2}, \
             median {:.2}",
            ratios.iter().filter(|&&r| r >= 1.0).count(),
            ratios.len(),
            ratios[0],
            ratios[ratios.len() - 1],
            (ratios[(ratios.len() - 1) / 2] + ratios[ratios.len() / 2]) / 2.0
        );
    } else {
        println!("PostgreSQL: not measured (set ISOPREDICT_POSTGRES_URL)");
    }
    if !args.iter().any(|a| a == "--no-large") {
        // 10^5 transactions: 4 clients x 25,000.
        let large = Serving::start(threads, socket_dir.as_deref());
        let big = Run {
            per_client: 25_000,
            ..r
        };
        load(&large.env, &big);
        let s = slice(&large.env, &big, 1, &|| Some(own_cpu()));
        let (events, memory, _) = large.finish();
        println!(
            "10^5 transactions: {:.0} tps, {events} events, {:.0} MB of memory ({:.0} bytes per \
             event)",
            s.tps(),
            memory as f64 / 1e6,
            memory as f64 / events.max(1) as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
