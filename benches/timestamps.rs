//! Timestamp checking (issue 9): a 100,000-transaction history of 15 operations from the
//! simulated timestamp SI store (50 sessions, 1,000 zipf keys), as TimeKiller JSON: parsing,
//! the offline SI and SER checks (Chronos), and the online SI check (Aion, parsing each line).
//! The 1,000,000-transaction numbers come from `examples/timestamp_speed.rs`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use isopredict::formats::timekiller::{self, parse_transaction};
use isopredict::generate::timestamped::{generate_timestamped, TsGenParams};
use isopredict::ser::aion::{OnlineChecker, OnlineOptions};
use isopredict::ser::{TsCheckOptions, TsLevel};
use isopredict::verdict::engines::check_timestamps;

fn timestamps(c: &mut Criterion) {
    let txns = 100_000;
    let h = generate_timestamped(&TsGenParams {
        sessions: 50,
        txns,
        ops_per_txn: 15,
        keys: 1000,
        ..Default::default()
    });
    let mut json = Vec::new();
    timekiller::write_timestamped(&h, &mut json).unwrap();
    let mut group = c.benchmark_group("timestamps");
    group.sample_size(10);
    group.throughput(Throughput::Elements(txns as u64));
    group.bench_function("parse_timekiller_100k_txns", |b| {
        b.iter(|| timekiller::read_timestamped(&json, "bench", Some(0)).unwrap())
    });
    for level in [TsLevel::Snapshot, TsLevel::Serializable] {
        group.bench_function(format!("chronos_{}_100k_txns", level.short_name()), |b| {
            b.iter(|| check_timestamps(&h, level, &TsCheckOptions::default()))
        });
    }
    let lines: Vec<&[u8]> = json
        .split(|&b| b == b'\n')
        .filter(|l| l.len() > 2)
        .collect();
    group.bench_function("aion_si_100k_txns_with_parsing", |b| {
        b.iter(|| {
            let mut checker = OnlineChecker::new(OnlineOptions {
                level: TsLevel::Snapshot,
                timeout_ms: 1000,
                initial: Some(0),
            });
            for (i, line) in lines.iter().enumerate() {
                let line = line.strip_suffix(b",").unwrap_or(line);
                checker.arrive(parse_transaction(line).unwrap(), i as u32, i as u64 / 50);
            }
            checker.finish()
        })
    });
    group.finish();
}

criterion_group!(benches, timestamps);
criterion_main!(benches);
