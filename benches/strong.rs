//! Speed of the SER / SI / PC engines (`isopredict::ser`) on generated histories: serializable
//! ones from a serial store (10 sessions × 1,000 transactions, 8 operations each, Zipf keys)
//! with the prefix search, and unserializable ones from a causal store (10 × 100) with each
//! engine, next to the direct Z3 check. The 20 × 5,000 case and the full table are printed by
//! `cargo run --release --example strong_levels` (docs/performance.md).

use criterion::{criterion_group, criterion_main, Criterion};
use isopredict::generate::Consistency;
use isopredict::ser::{Engine, StrongLevel, StrongOptions};
use isopredict::verdict::engines::{check_serializable, check_strong};

#[path = "../examples/common/strong_histories.rs"]
mod strong_histories;
use strong_histories::history;

fn options(engine: Engine) -> StrongOptions {
    StrongOptions {
        engine,
        ..StrongOptions::default()
    }
}

fn bench_serializable(c: &mut Criterion) {
    let mut group = c.benchmark_group("strong_10x1000_serial");
    group.sample_size(10);
    let h = history(10, 1_000, Consistency::Serializable, 1);
    for level in [
        StrongLevel::Serializable,
        StrongLevel::Snapshot,
        StrongLevel::Prefix,
    ] {
        let o = options(Engine::Search);
        assert!(check_strong(&h, level, &o).unwrap().is_consistent());
        group.bench_function(format!("{}", level.level()), |b| {
            b.iter(|| check_strong(&h, level, &o).unwrap())
        });
    }
    group.finish();
}

fn bench_unserializable(c: &mut Criterion) {
    let mut group = c.benchmark_group("ser_10x100_causal");
    group.sample_size(10);
    let h = history(10, 100, Consistency::Causal, 1);
    for engine in [Engine::Search, Engine::Smt, Engine::Auto] {
        let o = options(engine);
        assert!(!check_strong(&h, StrongLevel::Serializable, &o)
            .unwrap()
            .is_consistent());
        group.bench_function(format!("{engine}"), |b| {
            b.iter(|| check_strong(&h, StrongLevel::Serializable, &o).unwrap())
        });
    }
    group.bench_function("direct_z3", |b| {
        b.iter(|| check_serializable(&h, None).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench_serializable, bench_unserializable);
criterion_main!(benches);
