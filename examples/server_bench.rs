//! Throughput of the recording server against PostgreSQL, in one run (issue 32's
//! benchmark; not a timed test): pgbench with 4 clients runs the same custom script (a
//! read and an atomic increment of one of 1000 rows) against `isopredict serve` — recording
//! included — and against a throwaway PostgreSQL on the same machine, in alternating slices
//! (serve, PostgreSQL; then PostgreSQL, serve; … for `--rounds` rounds), so that a change of
//! the machine's load during the run falls on both alike. The server runs in a process and a
//! session of its own, as PostgreSQL's postmaster does (see [`Serving`]). Prints each round's
//! tps and ratio with pgbench's CPU time per transaction, the machine's idle share and its
//! context switches per transaction, then per server the transactions of all its slices over
//! the time they took, their ratio, the CPU time each server spent per transaction (serve: its
//! process; PostgreSQL: the postmaster and all its processes, exited backends included), the
//! events recorded and the server's memory per recorded event. Then the memory of a recording
//! of 10^5 transactions.
//!
//! ```sh
//! eval "$(scripts/pg-throwaway.sh start)"      # exports ISOPREDICT_POSTGRES_URL, ISOPREDICT_PG_DIR
//! cargo run --release --example server_bench [-- TRANSACTIONS_PER_CLIENT] [--rounds=N] [--simple] [--unix] [--jobs=N] [--threads=N] [--no-large]
//! scripts/pg-throwaway.sh stop "$ISOPREDICT_PG_DIR"
//! ```
//!
//! `TRANSACTIONS_PER_CLIENT`: per client in one slice (5000 by default: about a second, so
//! that connection start-up — pgbench connects anew for every slice, and PostgreSQL forks a
//! backend per connection — does not decide the ratio; 500 made slices of 0.1 s, and their
//! ratios ran higher for serve); `--rounds=N`: rounds of two slices (10 by default).
//! `--simple`: pgbench's simple query protocol (`-M simple`, statements as text with the
//! values inlined) instead of prepared statements (`-M prepared`). `--unix`: both servers
//! through Unix-domain sockets (serve's `--socket-dir`, PostgreSQL's in `ISOPREDICT_PG_DIR`)
//! instead of loopback TCP. `--jobs=N`: pgbench's threads (`-j`, 2 by default: two clients
//! each; 4 gives each client a thread, as most application servers do). `--threads=N`: the
//! most serving threads (64 by default, one per connection). `--no-large`: skip the
//! 10^5-transaction recording. Without `ISOPREDICT_POSTGRES_URL` only the server is measured;
//! without `ISOPREDICT_PG_DIR` PostgreSQL's CPU time is not. pgbench is looked up in
//! `/usr/lib/postgresql/*/bin` and on PATH.

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

/// The kernel's clock ticks per second (the unit of /proc's CPU times).
fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64
}

/// Process `pid`'s parent, its own CPU ticks (user plus system, every thread) and its waited-for
/// children's, from `/proc/PID/stat` (fields after the command name: ppid is field 4,
/// utime..cstime 14..17).
fn proc_stat(pid: &str) -> Option<(u32, f64, f64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s[s.rfind(')')? + 2..].split_whitespace().collect();
    let n = |i: usize| f.get(i - 3).and_then(|x| x.parse::<f64>().ok());
    Some((n(4)? as u32, n(14)? + n(15)?, n(16)? + n(17)?))
}

/// User plus system CPU time of process `pid` (every thread; clock-tick resolution).
fn process_cpu(pid: u32) -> Option<Duration> {
    let (_, own, _) = proc_stat(&pid.to_string())?;
    Some(Duration::from_secs_f64(own / clock_ticks()))
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
    let (_, own, waited) = proc_stat(&pid.to_string())?;
    let mut ticks = own + waited;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(p) = name
            .to_str()
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Some((ppid, own, _)) = proc_stat(p) {
            if ppid == pid {
                ticks += own;
            }
        }
    }
    Some(Duration::from_secs_f64(ticks / clock_ticks()))
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
    /// pgbench's threads (`-j`).
    jobs: u32,
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
    /// pgbench's own CPU time (user plus system).
    client_cpu: Duration,
    /// The machine's idle CPU time meanwhile, over all cores (/proc/stat).
    idle: Duration,
    /// The machine's CPU time meanwhile, over all cores, idle included.
    total: Duration,
    /// Context switches on the machine meanwhile.
    switches: f64,
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
        self.client_cpu += other.client_cpu;
        self.idle += other.idle;
        self.total += other.total;
        self.switches += other.switches;
        self.txns += other.txns;
        self.secs += other.secs;
    }
}

/// CPU time of this process's exited children (pgbench).
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The machine's idle and total CPU time so far, over all cores (/proc/stat's `cpu` line:
/// idle and iowait count as idle), and its context switches so far.
fn machine_cpu() -> (Duration, Duration, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let switches = stat
        .lines()
        .find_map(|l| l.strip_prefix("ctxt "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0.0);
    let ticks: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    let hz = clock_ticks();
    let idle = ticks.get(3).copied().unwrap_or(0.0) + ticks.get(4).copied().unwrap_or(0.0);
    let total: f64 = ticks.iter().take(8).sum();
    (
        Duration::from_secs_f64(idle / hz),
        Duration::from_secs_f64(total / hz),
        switches,
    )
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
    let (client_before, (idle_before, total_before, switches_before)) =
        (children_cpu(), machine_cpu());
    let out = Command::new(pg_bin("pgbench"))
        .args([
            "-n",
            "-M",
            r.mode,
            &format!("--random-seed={seed}"),
            "-j",
            &r.jobs.to_string(),
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
    let (idle_after, total_after, switches_after) = machine_cpu();
    let client_cpu = children_cpu().saturating_sub(client_before);
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
        client_cpu,
        idle: idle_after.saturating_sub(idle_before),
        total: total_after.saturating_sub(total_before),
        switches: switches_after - switches_before,
    }
}

/// A recording server in a process of its own, in a session of its own (`setsid`), as
/// PostgreSQL's postmaster runs: this bench's executable started again with `--serve-child`.
/// In one process with the bench — whose session pgbench runs in — the kernel would schedule
/// the server and pgbench as one group (autogroup, `/proc/sys/kernel/sched_autogroup_enabled`),
/// and PostgreSQL as another: the two servers would not meet the same scheduler.
struct Serving {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
    env: Vec<(&'static str, String)>,
}

impl Serving {
    /// A server with at most `threads` serving threads; with `socket_dir`, its clients
    /// connect through a Unix-domain socket there.
    fn start(threads: usize, socket_dir: Option<&Path>) -> Serving {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .arg("--serve-child")
            .arg(format!("--threads={threads}"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        if let Some(d) = socket_dir {
            command.arg(format!("--socket-dir={}", d.display()));
        }
        // SAFETY: setsid is async-signal-safe and touches only the new process.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = command.spawn().expect("the server process starts");
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut port = String::new();
        out.read_line(&mut port).unwrap();
        let port = port.trim().to_string();
        let host = socket_dir.map_or("127.0.0.1".to_string(), |d| d.display().to_string());
        let env = vec![
            ("PGHOST", host),
            ("PGPORT", port),
            ("PGUSER", "postgres".to_string()),
            ("PGDATABASE", "postgres".to_string()),
        ];
        Serving { child, out, env }
    }

    /// The server process's CPU time so far (every thread; clock-tick resolution).
    fn cpu(&self) -> Option<Duration> {
        process_cpu(self.child.id())
    }

    /// Stops it (closing its input); the events it recorded, the memory it grew by, and the
    /// statements that waited for a lock.
    fn finish(mut self) -> (usize, u64, u64) {
        use std::io::BufRead;
        drop(self.child.stdin.take());
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        self.child.wait().unwrap();
        let n: Vec<u64> = line
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        assert_eq!(n.len(), 3, "the server process reports: {line:?}");
        (n[0] as usize, n[1], n[2])
    }
}

/// `--serve-child`: serves until the input closes, printing the port first and then the
/// events recorded, the memory grown by and the lock waits.
fn serve_child(args: &[String]) {
    let threads = args
        .iter()
        .find_map(|a| a.strip_prefix("--threads=")?.parse().ok())
        .unwrap_or(Config::default().threads);
    let socket_dir = args
        .iter()
        .find_map(|a| a.strip_prefix("--socket-dir="))
        .map(PathBuf::from);
    let rss_before = rss();
    let server = Arc::new(
        Server::bind(Config {
            threads,
            socket_dir,
            ..Config::default()
        })
        .unwrap(),
    );
    println!("{}", server.local_addr().unwrap().port());
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    }
    server.run(&stop).unwrap();
    let memory = rss().saturating_sub(rss_before);
    let (_, summary) = server.history("bench").unwrap();
    println!("{} {memory} {}", summary.events, summary.lock_waits);
}

/// Microseconds per transaction.
fn per_txn(s: &Slice) -> Option<f64> {
    s.cpu.map(|c| c.as_secs_f64() * 1e6 / s.txns.max(1.0))
}

/// pgbench's CPU per transaction and the share of the machine's CPU time left idle.
fn client_and_idle(s: &Slice) -> String {
    format!(
        "pgbench {:.0} us CPU per transaction, machine {:.0}% idle, {:.1} context switches \
         per transaction",
        s.client_cpu.as_secs_f64() * 1e6 / s.txns.max(1.0),
        100.0 * s.idle.as_secs_f64() / s.total.as_secs_f64().max(1e-9),
        s.switches / s.txns.max(1.0)
    )
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
    if args.iter().any(|a| a == "--serve-child") {
        serve_child(&args);
        return;
    }
    let per_client: u32 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(5000);
    let rounds: u32 = args
        .iter()
        .find_map(|a| a.strip_prefix("--rounds=")?.parse().ok())
        .unwrap_or(10);
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
        jobs: args
            .iter()
            .find_map(|a| a.strip_prefix("--jobs=")?.parse().ok())
            .unwrap_or(2),
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
        let run_serve = || slice(&serving.env, &r, seed, &|| serving.cpu());
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
                    "round {}: serve {:.0} tps ({}), PostgreSQL {:.0} tps ({}), ratio {:.2}",
                    round + 1,
                    s.tps(),
                    client_and_idle(&s),
                    p.tps(),
                    client_and_idle(&p),
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
        let s = slice(&large.env, &big, 1, &|| large.cpu());
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
