//! Speed of timestamp checking (numbers for docs/performance.md): a TimeKiller-shaped
//! history from the simulated timestamp SI store (50 sessions, 1,000 zipf keys, 50 % reads,
//! 15 operations per transaction, the paper's defaults) written as TimeKiller JSON, then
//! - parsing it (`formats::timekiller::read_timestamped`),
//! - checking SI and SER offline (`ser::check_timestamps`), parsing excluded,
//! - checking it online (`ser::aion::OnlineChecker`), parsing each line included.
//!
//! `cargo run --release --example timestamp_speed -- [TXNS] [offline]` (default 1,000,000;
//! `offline` skips the online part). With `TS_SPEED_WRITE=PATH` the history is also written
//! to PATH (to time `isopredict check` and `isopredict watch` on it).

use std::time::Instant;

use isopredict::formats::timekiller::{self, parse_transaction};
use isopredict::ser::aion::{OnlineChecker, OnlineOptions};
use isopredict::ser::{TsCheckOptions, TsLevel};
use isopredict::verdict::engines::check_timestamps;

#[path = "common/speed.rs"]
mod speed;
use speed::{process_cpu, timekiller_json};

fn main() {
    let txns: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let t = Instant::now();
    let json = timekiller_json(txns);
    if let Ok(path) = std::env::var("TS_SPEED_WRITE") {
        std::fs::write(&path, &json).expect("writing the history");
        println!("wrote {path}");
    }
    println!(
        "generated {txns} transactions ({} MB of TimeKiller JSON) in {:.2} s",
        json.len() / 1_000_000,
        t.elapsed().as_secs_f64()
    );

    let (t, cpu) = (Instant::now(), process_cpu());
    let h = timekiller::read_timestamped(&json, "generated", Some(0)).expect("valid");
    let (parse, parse_cpu) = (t.elapsed().as_secs_f64(), process_cpu() - cpu);
    println!(
        "parse: {:.2} s wall ({:.0} MB/s), {:.2} s CPU (all threads), {} operations",
        parse,
        json.len() as f64 / 1e6 / parse,
        parse_cpu,
        h.op_count()
    );
    for level in [TsLevel::Snapshot, TsLevel::Serializable] {
        let (t, cpu) = (Instant::now(), process_cpu());
        let report = check_timestamps(&h, level, &TsCheckOptions::default());
        let (check, check_cpu) = (t.elapsed().as_secs_f64(), process_cpu() - cpu);
        println!(
            "{} check (parsing excluded): {:.2} s wall, {:.2} s CPU; parse + check: {:.2} s wall; violations: {}",
            level.short_name(),
            check,
            check_cpu,
            parse + check,
            report.counts.total()
        );
    }
    drop(h);

    if std::env::args().nth(2).as_deref() == Some("offline") {
        return;
    }
    // Online: every line parsed and checked, in file order, on a simulated clock of 50
    // arrivals per millisecond with a 1 s timeout (so about 50,000 transactions pending).
    let lines: Vec<&[u8]> = json
        .split(|&b| b == b'\n')
        .filter(|l| l.len() > 2)
        .collect();
    let online_txns = lines.len().min(200_000);
    for level in [TsLevel::Snapshot, TsLevel::Serializable] {
        let mut checker = OnlineChecker::new(OnlineOptions {
            level,
            timeout_ms: 1000,
            initial: Some(0),
        });
        let (t, cpu) = (Instant::now(), process_cpu());
        let mut violations = 0;
        for (i, line) in lines[..online_txns].iter().enumerate() {
            let line = line.strip_suffix(b",").unwrap_or(line);
            let txn = parse_transaction(line).expect("valid line");
            violations += checker.arrive(txn, i as u32 + 1, i as u64 / 50).len();
        }
        violations += checker.finish().len();
        let (secs, cpu) = (t.elapsed().as_secs_f64(), process_cpu() - cpu);
        println!(
            "online {} over {online_txns} transactions (parsing included): {:.2} s wall = {:.0} transactions/s; {:.2} s CPU = {:.0} transactions/s per core; violations {violations}, at most {} pending / {} writes kept",
            level.short_name(),
            secs,
            online_txns as f64 / secs,
            cpu,
            online_txns as f64 / cpu.max(0.01),
            checker.stats().max_live,
            checker.stats().max_writes_kept
        );
    }
}
