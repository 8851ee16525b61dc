//! Speed of the main job: `isopredict run` (record → check → predict → re-verify → validate →
//! report) on each workload's large seed-1 run under causal and rc with approx-relaxed, and
//! one `rank` task set (4 workloads × small × seeds 1..2 × causal, rc, with 2 exploration runs
//! each). The full grid (`isopredict rank`, 160 tasks + 1600 exploration runs) is measured by
//! running the binary; see docs/ranking.md.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use isopredict::check::Level;
use isopredict::pipeline::{rank, run_workload, RankGrid, RankInput, RunOptions};
use isopredict::predict::Strategy;
use isopredict::workloads::{all, Size};

fn run(c: &mut Criterion) {
    let mut group = c.benchmark_group("run");
    group.sample_size(10);
    for w in all() {
        for level in [Level::Causal, Level::ReadCommitted] {
            let options = RunOptions {
                seed: 1,
                size: Size::Large,
                level,
                strategy: Strategy::ApproxRelaxed,
                timeout: Some(Duration::from_secs(60)),
                ..RunOptions::default()
            };
            group.bench_function(
                format!(
                    "{}_large_{}",
                    w.name(),
                    isopredict::pipeline::level_name(level)
                ),
                |b| b.iter(|| run_workload(w, &options).unwrap()),
            );
        }
    }
    group.finish();
}

fn rank_small(c: &mut Criterion) {
    let mut group = c.benchmark_group("rank");
    group.sample_size(10);
    let grid = RankGrid {
        input: RankInput::Workloads {
            workloads: all(),
            sizes: vec![Size::Small],
            seeds: vec![1, 2],
            explore: 2,
            sessions: 3,
            backend: None,
            scan: Default::default(),
        },
        levels: vec![Level::Causal, Level::ReadCommitted],
        strategies: vec![Strategy::ApproxRelaxed],
        timeout: Some(Duration::from_secs(60)),
        max: 1,
        score: Default::default(),
        apps: Vec::new(),
        app_waits: Default::default(),
    };
    let bar = indicatif::ProgressBar::hidden();
    group.bench_function("small_seeds_1_2", |b| b.iter(|| rank(&grid, &bar).unwrap()));
    group.finish();
}

criterion_group!(benches, run, rank_small);
criterion_main!(benches);
