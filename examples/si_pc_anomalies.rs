//! Which anomalies `isopredict run --level si|pc` finds on the paper's workloads, by name
//! (docs/ranking.md, "Snapshot isolation and prefix consistency against the literature"): per
//! workload × size × level, the seeds grouped by the anomaly the report names, the procedures
//! its sentence names (in that order) and the table.columns it names, with how many of those
//! predictions the replay validated and how many broke an invariant.
//!
//! `cargo run --release --example si_pc_anomalies [-- SEEDS [WORKLOAD…]]`
//! (SEEDS as in `rank --seeds`, default 1..10; workloads default to the paper's four and
//! `smallbank-full`; approx-relaxed, 60 s per prediction, runs in parallel).

use std::collections::BTreeMap;
use std::time::Duration;

use rayon::prelude::*;

use isopredict::check::Level;
use isopredict::pipeline::{parse_seeds, run_workload, RunOptions};
use isopredict::predict::Strategy;
use isopredict::report::run_report::{RunReport, RunVerdict};
use isopredict::workloads::{self, Size};

fn main() {
    let mut args = std::env::args().skip(1);
    let seeds = parse_seeds(&args.next().unwrap_or_else(|| "1..10".to_string())).expect("seeds");
    let mut names: Vec<String> = args.collect();
    if names.is_empty() {
        names = workloads::all()
            .iter()
            .chain(workloads::variants().iter())
            .map(|w| w.name().to_string())
            .collect();
    }
    let mut tasks = Vec::new();
    for name in &names {
        for size in [Size::Small, Size::Large] {
            for level in [Level::Snapshot, Level::Prefix] {
                for &seed in &seeds {
                    tasks.push((name.clone(), size, level, seed));
                }
            }
        }
    }
    let results: Vec<(String, String, Level, u64, Summary)> = tasks
        .into_par_iter()
        .map(|(name, size, level, seed)| {
            let workload = workloads::by_name(&name).expect("a workload");
            let options = RunOptions {
                seed,
                size,
                level,
                strategy: Strategy::ApproxRelaxed,
                timeout: Some(Duration::from_secs(60)),
                ..RunOptions::default()
            };
            let summary = match run_workload(workload, &options) {
                Ok(out) => summarize(&out.report),
                Err(e) => Summary::other(format!("error: {e}")),
            };
            (name, size.name(), level, seed, summary)
        })
        .collect();
    let mut groups: BTreeMap<(usize, String, String), Patterns> = BTreeMap::new();
    for (name, size, level, seed, summary) in results {
        let order = names.iter().position(|n| *n == name).unwrap();
        let (validated, broke) = (summary.validated, summary.broke);
        let entry = groups
            .entry((
                order,
                format!("{name} {size}"),
                level.short_name().to_string(),
            ))
            .or_default()
            .entry(summary.key())
            .or_default();
        entry.0.push(seed);
        entry.1 += usize::from(validated);
        entry.2 += usize::from(broke);
    }
    println!(
        "| Workload | Level | Seeds | Anomaly | Validated | Invariant broken | Calls named | Keys named |"
    );
    println!("|---|---|---|---|---:|---:|---|---|");
    for ((_, run, level), patterns) in &groups {
        for (s, (seeds, validated, broke)) in patterns {
            let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
            let (validated, broke) = if s.predicted {
                (validated.to_string(), broke.to_string())
            } else {
                ("–".to_string(), "–".to_string())
            };
            println!(
                "| {run} | {level} | {} | {} | {validated} | {broke} | {} | {} |",
                seeds.join(" "),
                s.name,
                s.calls.join(", "),
                s.keys.join(", "),
            );
        }
    }
}

/// Per (workload order, `workload size`, level): each pattern's seeds, how many were
/// validated and how many broke an invariant.
type Patterns = BTreeMap<Summary, (Vec<u64>, usize, usize)>;

/// What a run's report says about its anomaly, reduced to what groups runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Summary {
    /// Whether a prediction was made.
    predicted: bool,
    /// The anomaly's name, or the verdict when none was predicted.
    name: String,
    /// Procedures named in the anomaly's sentence, in order.
    calls: Vec<String>,
    /// Table.column of the keys named in it, in order, without repeats.
    keys: Vec<String>,
    /// The replay validated it (not part of the grouping key).
    validated: bool,
    /// Its validating run broke an invariant (not part of the grouping key).
    broke: bool,
}

impl Summary {
    fn other(name: String) -> Summary {
        Summary {
            predicted: false,
            name,
            calls: Vec::new(),
            keys: Vec::new(),
            validated: false,
            broke: false,
        }
    }

    fn key(&self) -> Summary {
        Summary {
            validated: false,
            broke: false,
            ..self.clone()
        }
    }
}

fn summarize(r: &RunReport) -> Summary {
    let Some(anomaly) = r.prediction.as_ref().and_then(|p| p.anomaly.as_deref()) else {
        return Summary::other(
            match r.verdict {
                RunVerdict::NoAnomaly => "none",
                RunVerdict::Unknown => "unknown",
                RunVerdict::ObservedViolation => "observed violation",
                _ => "?",
            }
            .to_string(),
        );
    };
    let name = anomaly
        .strip_prefix("**")
        .and_then(|a| a.split("**").next())
        .unwrap_or("?")
        .to_string();
    let (mut calls, mut keys) = (Vec::new(), Vec::<String>::new());
    // Backticked segments alternate between calls (`Proc(…)`) and keys (`TABLE.column[row]`,
    // `row TABLE[…] exists`).
    for (i, segment) in anomaly.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let cut = |c: char| matches!(c, '.' | '[' | ' ');
        match (segment.find('('), segment.find(cut)) {
            (Some(p), other) if other.map_or(true, |o| p < o) => {
                calls.push(segment[..p].to_string());
            }
            _ => {
                let key = match segment.strip_prefix("row ") {
                    Some(row) => format!("{} row", row.split('[').next().unwrap_or(row)),
                    None => segment.split('[').next().unwrap_or(segment).to_string(),
                };
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    let validation = r.validation.as_ref();
    Summary {
        predicted: true,
        name,
        calls,
        keys,
        validated: r.verdict == RunVerdict::AnomalyValidated,
        broke: validation.is_some_and(|v| v.invariants.iter().any(|i| !i.holds)),
    }
}
