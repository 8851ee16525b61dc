//! Speed of `generate`: 1,000,000-event histories (50 sessions × 2,000 transactions × 10
//! operations, 10,000 keys, half reads) in every mode, building the in-memory history.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};

fn params(consistency: Consistency, distribution: KeyDistribution) -> GenerateParams {
    GenerateParams {
        sessions: 50,
        txns_per_session: 2_000,
        ops_per_txn: 10,
        keys: 10_000,
        read_ratio: 0.5,
        distribution,
        abort_ratio: 0.01,
        consistency,
        seed: 1,
    }
}

fn bench_generate(c: &mut Criterion) {
    let mut group = c.benchmark_group("generate_1M_events");
    group.sample_size(10);
    group.throughput(Throughput::Elements(1_000_000));
    for consistency in Consistency::ALL {
        let p = params(consistency, KeyDistribution::Uniform);
        group.bench_function(consistency.name(), |b| b.iter(|| generate(&p).unwrap()));
    }
    let zipf = params(Consistency::Causal, KeyDistribution::Zipf { exponent: 1.0 });
    group.bench_function("cc_zipf", |b| b.iter(|| generate(&zipf).unwrap()));
    group.finish();
}

criterion_group!(benches, bench_generate);
criterion_main!(benches);
