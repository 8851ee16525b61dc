//! Throughput of the recording server against PostgreSQL, in one run (issue 32's
//! benchmark; not a timed test): pgbench with 4 clients runs the same custom script (a
//! read and an atomic increment of one of 1000 rows) against `isopredict serve` — recording
//! included — and against a throwaway PostgreSQL on the same machine; prints the tps of each,
//! their ratio, the events recorded and the server's memory per recorded event. Then the
//! memory of a recording of 10^5 transactions.
//!
//! ```sh
//! eval "$(scripts/pg-throwaway.sh start)"      # exports ISOPREDICT_POSTGRES_URL
//! cargo run --release --example server_bench [-- TRANSACTIONS_PER_CLIENT]
//! scripts/pg-throwaway.sh stop
//! ```
//!
//! Without `ISOPREDICT_POSTGRES_URL` only the server is measured. pgbench is looked up in
//! `/usr/lib/postgresql/*/bin` and on PATH.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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

/// Loads the table and runs pgbench against `env` (libpq variables); returns the tps.
fn run(env: &[(&str, String)], dir: &std::path::Path, per_client: u32, clients: u32) -> f64 {
    let rows: Vec<String> = (1..=1000).map(|i| format!("({i}, 0)")).collect();
    let setup = dir.join("setup.sql");
    std::fs::write(&setup, format!("{SETUP}{};\n", rows.join(", "))).unwrap();
    let script = dir.join("bench.sql");
    std::fs::write(&script, SCRIPT).unwrap();
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
    let out = Command::new(pg_bin("pgbench"))
        .args(["-n", "-M", "prepared", "--random-seed=1", "-j", "2"])
        .args([
            "-c",
            &clients.to_string(),
            "-t",
            &per_client.to_string(),
            "-f",
        ])
        .arg(&script)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("pgbench runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .expect("pgbench prints tps")
}

fn serve_and_run(dir: &std::path::Path, per_client: u32, clients: u32) -> (f64, usize, u64) {
    let before = rss();
    let server = Arc::new(Server::bind(Config::default()).unwrap());
    let addr = server.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let serving = {
        let (server, stop) = (server.clone(), stop.clone());
        std::thread::spawn(move || server.run(&stop))
    };
    let env = [
        ("PGHOST", addr.ip().to_string()),
        ("PGPORT", addr.port().to_string()),
        ("PGUSER", "postgres".to_string()),
        ("PGDATABASE", "postgres".to_string()),
    ];
    let tps = run(&env, dir, per_client, clients);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    serving.join().unwrap().unwrap();
    let used = rss().saturating_sub(before);
    let (_, summary) = server.history("bench").unwrap();
    (tps, summary.events, used)
}

fn main() {
    let per_client: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2500);
    let dir = std::env::temp_dir().join(format!("isopredict-server-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (tps, events, used) = serve_and_run(&dir, per_client, 4);
    println!(
        "isopredict serve: {tps:.0} tps (4 clients x {per_client} transactions, recording \
         included); {events} events recorded, {:.0} bytes of memory per event",
        used as f64 / events.max(1) as f64
    );
    match std::env::var("ISOPREDICT_POSTGRES_URL") {
        Ok(url) => {
            // postgres://USER@HOST:PORT/DB, as scripts/pg-throwaway.sh prints it.
            let rest = url.split("://").nth(1).unwrap_or(&url);
            let (user, rest) = rest.split_once('@').unwrap_or(("postgres", rest));
            let (hostport, db) = rest.split_once('/').unwrap_or((rest, "postgres"));
            let (host, port) = hostport.split_once(':').unwrap_or((hostport, "5432"));
            let env = [
                ("PGHOST", host.to_string()),
                ("PGPORT", port.to_string()),
                ("PGUSER", user.to_string()),
                ("PGDATABASE", db.split('?').next().unwrap_or(db).to_string()),
            ];
            let pg_tps = run(&env, &dir, per_client, 4);
            println!(
                "PostgreSQL:       {pg_tps:.0} tps (same script); ratio serve/PostgreSQL = {:.2}",
                tps / pg_tps
            );
        }
        Err(_) => println!("PostgreSQL: not measured (set ISOPREDICT_POSTGRES_URL)"),
    }
    // 10^5 transactions: 4 clients x 25,000.
    let (tps, events, used) = serve_and_run(&dir, 25_000, 4);
    println!(
        "10^5 transactions: {tps:.0} tps, {events} events, {:.0} MB of memory \
         ({:.0} bytes per event)",
        used as f64 / 1e6,
        used as f64 / events.max(1) as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}
