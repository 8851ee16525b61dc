//! Speed of the recording store: one large run of each workload (3 terminals × 8 calls) with
//! latest reads, with random causal reads, and a replay of the observed history; plus a
//! synthetic store-only workload (100,000 read/write transactions on 1,000 keys, causal).

use criterion::{criterion_group, criterion_main, Criterion};
use isopredict::check::Level;
use isopredict::store::{KvRead, KvWrite, ReadPolicy, ReplayPlan, SplitMix64, Store, Value};
use isopredict::workloads::{all, run, RunConfig, Size};
use std::sync::Arc;

fn workloads(c: &mut Criterion) {
    let mut group = c.benchmark_group("workloads");
    group.sample_size(10);
    for w in all() {
        let latest = RunConfig::paper(1, Size::Large);
        group.bench_function(format!("{}_large_latest", w.name()), |b| {
            b.iter(|| run(w, &latest).unwrap())
        });
        let random = RunConfig {
            policy: ReadPolicy::Random {
                level: Level::Causal,
                seed: 1,
            },
            ..RunConfig::paper(1, Size::Large)
        };
        group.bench_function(format!("{}_large_random_causal", w.name()), |b| {
            b.iter(|| run(w, &random).unwrap())
        });
        let observed = run(w, &latest).unwrap();
        let plan = Arc::new(ReplayPlan::new(
            &observed.history,
            Level::Causal,
            Some(&observed.commit_order),
        ));
        let replay = RunConfig {
            policy: ReadPolicy::Replay {
                plan,
                level: Level::Causal,
            },
            observed_attempts: Some(observed.attempts.clone()),
            ..RunConfig::paper(1, Size::Large)
        };
        group.bench_function(format!("{}_large_replay", w.name()), |b| {
            b.iter(|| run(w, &replay).unwrap())
        });
    }
    group.finish();
}

fn store_only(c: &mut Criterion) {
    let mut group = c.benchmark_group("store");
    group.sample_size(10);
    for level in [Level::Causal, Level::ReadAtomic, Level::ReadCommitted] {
        group.bench_function(format!("100k_txns_random_{}", level.short_name()), |b| {
            b.iter(|| {
                let mut store = Store::new(ReadPolicy::Random { level, seed: 3 }).unwrap();
                let sessions: Vec<_> = (0..8).map(|s| store.open_session(s)).collect();
                let mut rng = SplitMix64::new(9);
                for _ in 0..100_000 {
                    let mut tx = store.begin(sessions[rng.below(8)]);
                    for _ in 0..4 {
                        let key = rng.below(1000) as u64;
                        if rng.below(2) == 0 {
                            tx.get(key);
                        } else {
                            tx.put(key, Value::Int(1));
                        }
                    }
                    tx.commit();
                }
                store.history("bench").unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, workloads, store_only);
criterion_main!(benches);
