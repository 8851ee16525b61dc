//! Speed of the RC, RA and CC checkers on generated 1,000,000-event histories (50 sessions ×
//! 2,000 transactions × 10 operations, 10,000 keys, half reads), each consistent at the level
//! checked so that the checker does its full work (no early exit on a violation); plus
//! parsing such a history from the native JSON format.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use isopredict::check::{CheckOptions, Level};
use isopredict::formats::{self, Format};
use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};
use isopredict::verdict::engines::check;

const EVENTS: u64 = 1_000_000;

fn history(consistency: Consistency) -> isopredict::History {
    generate(&GenerateParams {
        sessions: 50,
        txns_per_session: 2_000,
        ops_per_txn: 10,
        keys: 10_000,
        read_ratio: 0.5,
        distribution: KeyDistribution::Uniform,
        abort_ratio: 0.0,
        consistency,
        seed: 1,
    })
    .expect("valid parameters")
}

fn bench_checkers(c: &mut Criterion) {
    let mut group = c.benchmark_group("check_1M_events");
    group.sample_size(10);
    group.throughput(Throughput::Elements(EVENTS));
    for (level, consistency) in [
        (Level::ReadCommitted, Consistency::ReadCommitted),
        (Level::ReadAtomic, Consistency::ReadAtomic),
        (Level::Causal, Consistency::Causal),
    ] {
        let h = history(consistency);
        let options = CheckOptions::default();
        assert!(check(&h, level, &options).unwrap().is_consistent());
        group.bench_function(level.short_name(), |b| {
            b.iter(|| check(&h, level, &options).unwrap())
        });
    }
    group.finish();
}

fn bench_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_1M_events");
    group.sample_size(10);
    group.throughput(Throughput::Elements(EVENTS));
    let h = history(Consistency::Causal);
    let mut text = Vec::new();
    formats::write_to(&h, Format::Json, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    group.bench_function("json", |b| {
        b.iter(|| formats::read_str(&text, "bench.json", Some(Format::Json)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench_checkers, bench_parse);
criterion_main!(benches);
