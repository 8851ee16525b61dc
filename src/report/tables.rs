//! The evaluation tables of IsoPredict (PLDI'24 §7.2–7.3) computed from per-run records:
//! Tables 4/5 (per program × size × level × strategy: Unk, Unsat, Sat, Validated (Diverged),
//! # literals, constraint generation time, solving time sat / unsat), Tables 6/7 (random
//! exploration of weak reads, MonkeyDB's approach: % runs failing an invariant and %
//! unserializable, beside % predicted and validated), and the risk ranking of programs
//! ([`risk_rows`], docs/ranking.md), rendered as Markdown.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::run_report::SearchSection;

/// What one prediction task concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PredictionOutcome {
    /// A verified prediction (the paper's Sat).
    Sat,
    /// No prediction under the strategy's encoding (Unsat).
    Unsat,
    /// The solver gave up or timed out (Unk / T/O).
    Unknown,
    /// The observed history already violates the level (no prediction needed).
    ObservedViolation,
    /// The task failed (bad input); see the record's detail.
    Error,
}

/// Validation of a prediction by replay.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ValidationRecord {
    /// The validating execution satisfies the level and is unserializable.
    pub validated: bool,
    /// Some read could not follow the prediction.
    pub diverged: bool,
    /// Ids of the invariants the validating run's final state breaks.
    pub failed_invariants: Vec<String>,
    /// The verdict's name (`validated`, `serializable`, `level-violated`, `unknown`).
    pub verdict: String,
}

/// One prediction task: a program's run (or a user history) predicted at a level with a
/// strategy.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PredictionRecord {
    /// The program: a workload name, or a history group (folder).
    pub program: String,
    /// `small` / `large` for workloads, `-` for user histories.
    pub size: String,
    /// `seed N`, or the history's file name.
    pub run: String,
    /// The level's name (`causal`, `ra`, `rc`).
    pub level: String,
    /// The strategy's name.
    pub strategy: String,
    /// What prediction concluded.
    pub outcome: PredictionOutcome,
    /// Unknown because the time budget ran out.
    pub timed_out: bool,
    /// Validation, for workload runs with a prediction.
    pub validation: Option<ValidationRecord>,
    /// Literals of the encoding (the paper's "# Literals").
    pub literals: u64,
    /// Constraint generation time (s).
    pub generation_s: f64,
    /// Solving time (s).
    pub solving_s: f64,
    /// Why unknown, or the error.
    pub detail: Option<String>,
    /// The distinct anomalies predicted, in application terms (workload runs;
    /// [`crate::pipeline::distinct`]).
    #[serde(default)]
    pub anomalies: Vec<String>,
    /// With "no prediction" ([`PredictionOutcome::Unsat`]): the kind of the certificate that
    /// shows none exists (`no-changeable-read`, `writers-ordered`, `no-pivot`,
    /// `search-exhausted`; docs/prediction.md "Why none: certificates"); its explanation is
    /// `detail`. `None` for every other outcome.
    #[serde(default)]
    pub certificate: Option<String>,
    /// With `--max N` > 1 and a prediction: how the search for further distinct anomalies
    /// ended (as `run`'s report.json `search`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<Box<SearchSection>>,
}

/// One random-exploration run (MonkeyDB's approach): a workload run whose reads pick a random
/// writer the level allows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExplorationRecord {
    /// The workload.
    pub program: String,
    /// `small` / `large`.
    pub size: String,
    /// The benchmark seed.
    pub seed: u64,
    /// The level's name.
    pub level: String,
    /// The exploration trial (read choices and schedule seeded by it).
    pub trial: u64,
    /// Some invariant fails on the final state.
    pub invariant_failed: bool,
    /// The history is unserializable (`None`: the check gave up).
    pub unserializable: Option<bool>,
}

/// A row of Tables 4/5.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PredictionRow {
    /// The program.
    pub program: String,
    /// The size.
    pub size: String,
    /// The level.
    pub level: String,
    /// The strategy.
    pub strategy: String,
    /// Tasks.
    pub runs: usize,
    /// Unknown or timed out.
    pub unknown: usize,
    /// Of which timed out.
    pub timed_out: usize,
    /// No prediction.
    pub unsat: usize,
    /// Predictions.
    pub sat: usize,
    /// Observed histories that already violate the level.
    pub observed_violations: usize,
    /// Failed tasks.
    pub errors: usize,
    /// Validated predictions (`None`: some prediction could not be replayed, e.g. user
    /// histories).
    pub validated: Option<usize>,
    /// Predictions whose replay diverged.
    pub diverged: Option<usize>,
    /// Mean literals over the tasks that generated constraints.
    pub mean_literals: f64,
    /// Mean constraint generation time (s).
    pub mean_generation_s: f64,
    /// Mean solving time of Sat tasks (s).
    pub mean_solving_sat_s: Option<f64>,
    /// Mean solving time of Unsat tasks (s).
    pub mean_solving_unsat_s: Option<f64>,
    /// The certificates of the Unsat tasks: (kind, tasks), most frequent first.
    pub certificates: Vec<(String, usize)>,
}

/// A row of Tables 6/7.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExplorationRow {
    /// The program.
    pub program: String,
    /// The size.
    pub size: String,
    /// The level.
    pub level: String,
    /// Random runs.
    pub random_runs: usize,
    /// % of random runs failing an invariant.
    pub fail_pct: f64,
    /// % of random runs that are unserializable.
    pub unser_pct: f64,
    /// Random runs whose serializability check gave up.
    pub unser_unknown: usize,
    /// The strategy beside them (the one with the most validated predictions).
    pub strategy: Option<String>,
    /// % of observed runs with a prediction under it.
    pub predicted_pct: Option<f64>,
    /// % of observed runs with a validated prediction under it.
    pub validated_pct: Option<f64>,
}

/// A program's risk (docs/ranking.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RiskRow {
    /// The program.
    pub program: String,
    /// The score, 0–100.
    pub score: f64,
    /// Per level: (level, its contribution to the score).
    pub by_level: Vec<(String, f64)>,
    /// Observed runs × levels considered.
    pub cases: usize,
    /// Of which some strategy gave a validated (or, without replay, verified) prediction.
    pub exposed: usize,
    /// Of which the validating run broke an invariant.
    pub invariant_broken: usize,
    /// The program's distinct anomalies over all its runs, levels and strategies
    /// (application terms; [`crate::pipeline::distinct`]), sorted.
    #[serde(default)]
    pub anomalies: Vec<String>,
    /// Where the program stands at each level of the grid (strongest first): exposed, proven
    /// free of anomalies, or not decided ([`level_standings`]).
    pub levels: Vec<LevelStanding>,
}

/// Where a program stands at one level, over its runs: the answer a score of 0 does not give
/// (0 is both "proven free" and "nothing decided").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// Some run has an anomaly: a prediction by some strategy, or an observed run that
    /// already violates the level.
    Exposed,
    /// Every run, under every strategy of the grid, answered "no prediction" with a
    /// certificate: no execution of its calls the level allows (cut at the strategy's
    /// boundary) is an anomaly the strategy looks for.
    ProvenFree,
    /// No anomaly was found, but some run is not proven free: a task was unknown (time,
    /// memory), failed, or answered "none" without a certificate.
    Undecided,
}

impl Standing {
    /// The standing's name as printed (`exposed`, `proven-free`, `undecided`).
    pub fn name(self) -> &'static str {
        match self {
            Standing::Exposed => "exposed",
            Standing::ProvenFree => "proven-free",
            Standing::Undecided => "undecided",
        }
    }
}

/// A program at one level ([`RiskRow::levels`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LevelStanding {
    /// The level's name.
    pub level: String,
    /// Exposed, proven free or not decided.
    pub standing: Standing,
    /// Observed runs at this level.
    pub runs: usize,
    /// Runs with an anomaly (some strategy predicted one, or the observed run violates the
    /// level).
    pub exposed: usize,
    /// Runs every strategy proved free: each answered "none" with a certificate.
    pub proven_free: usize,
    /// Runs neither exposed nor proven free (some task unknown, failed, or without a
    /// certificate).
    pub undecided: usize,
    /// The certificates of the tasks of the runs proven free: (kind, tasks), most frequent
    /// first.
    pub certificates: Vec<(String, usize)>,
}

/// Where `program` stands at each of `levels` (in that order), from its records: a run (level,
/// size, run) is exposed when some task of it predicted (or observed a violation), proven free
/// when every task of it answered "none" with a certificate, undecided otherwise; the level is
/// exposed when some run is, proven free when every run is.
pub fn level_standings(
    records: &[PredictionRecord],
    program: &str,
    levels: &[String],
) -> Vec<LevelStanding> {
    levels
        .iter()
        .map(|level| {
            // (size, run) → its tasks.
            let mut runs: BTreeMap<(&str, &str), Vec<&PredictionRecord>> = BTreeMap::new();
            for r in records
                .iter()
                .filter(|r| r.program == program && &r.level == level)
            {
                runs.entry((r.size.as_str(), r.run.as_str()))
                    .or_default()
                    .push(r);
            }
            let (mut exposed, mut proven_free) = (0, 0);
            let mut certified: Vec<&str> = Vec::new();
            for tasks in runs.values() {
                if tasks.iter().any(|r| {
                    matches!(
                        r.outcome,
                        PredictionOutcome::Sat | PredictionOutcome::ObservedViolation
                    )
                }) {
                    exposed += 1;
                } else if tasks
                    .iter()
                    .all(|r| r.outcome == PredictionOutcome::Unsat && r.certificate.is_some())
                {
                    proven_free += 1;
                    certified.extend(tasks.iter().filter_map(|r| r.certificate.as_deref()));
                }
            }
            let certificates = count_kinds(certified.into_iter());
            let standing = if exposed > 0 {
                Standing::Exposed
            } else if proven_free == runs.len() && !runs.is_empty() {
                Standing::ProvenFree
            } else {
                Standing::Undecided
            };
            LevelStanding {
                level: level.clone(),
                standing,
                runs: runs.len(),
                exposed,
                proven_free,
                undecided: runs.len() - exposed - proven_free,
                certificates,
            }
        })
        .collect()
}

/// Each kind with how often it occurs, most frequent first (ties by name).
fn count_kinds<'a>(kinds: impl Iterator<Item = &'a str>) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for k in kinds {
        *counts.entry(k.to_string()).or_default() += 1;
    }
    let mut counts: Vec<(String, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}

/// `writers-ordered 10, no-pivot 2`: certificates with their task counts.
fn certificates_text(certificates: &[(String, usize)]) -> String {
    certificates
        .iter()
        .map(|(kind, n)| format!("`{kind}` {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A program's standing at one level in words, for the table of [`standing_markdown`].
pub fn standing_text(s: &LevelStanding) -> String {
    let mut parts = Vec::new();
    if s.proven_free > 0 && s.standing != Standing::ProvenFree {
        parts.push(format!("{} proven free", s.proven_free));
    }
    if s.undecided > 0 {
        parts.push(format!("{} undecided", s.undecided));
    }
    let rest = if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    };
    match s.standing {
        Standing::Exposed => format!("anomaly in {}/{} runs{rest}", s.exposed, s.runs),
        // What the certificates cover, said with them: the calls these runs recorded, under
        // the strategies and boundaries searched — not the program's every execution.
        Standing::ProvenFree => format!(
            "**proven free** ({n}/{n} runs; {}; in the recorded calls only)",
            certificates_text(&s.certificates),
            n = s.runs
        ),
        Standing::Undecided => format!("not decided: no anomaly found{rest}"),
    }
}

/// The table of where each program stands at each level (rows in the ranking's order), or
/// an empty string when there is no level.
pub fn standing_markdown(rows: &[RiskRow]) -> String {
    let levels: Vec<&str> = rows
        .first()
        .map(|r| r.levels.iter().map(|l| l.level.as_str()).collect())
        .unwrap_or_default();
    if levels.is_empty() {
        return String::new();
    }
    let mut out = String::from("| Program |");
    for l in &levels {
        let _ = write!(out, " {l} |");
    }
    out.push_str("\n|---|");
    for _ in &levels {
        out.push_str("---|");
    }
    out.push('\n');
    for r in rows {
        let _ = write!(out, "| {} |", r.program);
        for s in &r.levels {
            let _ = write!(out, " {} |", standing_text(s));
        }
        out.push('\n');
    }
    out
}

/// The weight of an anomaly found under `level`: the stronger the level the store promises,
/// the more an anomaly it still allows matters (snapshot isolation 5, prefix consistency 4,
/// causal 3, read atomic 2, read committed 1).
pub fn level_weight(level: &str) -> f64 {
    match level {
        "si" => 5.0,
        "pc" => 4.0,
        "causal" | "cc" => 3.0,
        "ra" => 2.0,
        _ => 1.0,
    }
}

/// The exposure of one (run, level, strategy) task: 1 for a validated prediction whose
/// validating run broke an invariant, 0.6 for a validated one that broke none (or a verified
/// prediction that could not be replayed: user histories), 0.3 for a prediction whose replay
/// was serializable or undecided, 0 otherwise; an observed violation counts 0.6.
pub fn exposure(r: &PredictionRecord) -> f64 {
    match r.outcome {
        PredictionOutcome::Sat => match &r.validation {
            None => 0.6,
            Some(v) if v.validated && !v.failed_invariants.is_empty() => 1.0,
            Some(v) if v.validated => 0.6,
            Some(_) => 0.3,
        },
        PredictionOutcome::ObservedViolation => 0.6,
        _ => 0.0,
    }
}

fn level_order(level: &str) -> u8 {
    match level {
        "si" => 0,
        "pc" => 1,
        "causal" | "cc" => 2,
        "ra" => 3,
        "rc" => 4,
        _ => 5,
    }
}

fn size_order(size: &str) -> u8 {
    match size {
        "small" => 0,
        "large" => 1,
        _ => 2,
    }
}

fn strategy_order(s: &str) -> u8 {
    match s {
        "exact-strict" => 0,
        "approx-strict" => 1,
        "approx-relaxed" => 2,
        _ => 3,
    }
}

/// Programs in first-appearance order (the grid's order).
fn programs<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.iter().any(|p| p == n) {
            out.push(n.to_string());
        }
    }
    out
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in values {
        sum += v;
        n += 1;
    }
    (n > 0).then(|| sum / n as f64)
}

/// Levels in first-appearance order, then sorted strongest first.
fn levels_in_order<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut levels = programs(names);
    levels.sort_by_key(|l| level_order(l));
    levels
}

/// Sort key of a program × size × level cell: the program's position in `order` (the grid's),
/// then size and level, each with its rank first.
type CellKey = (usize, u8, String, u8, String);

fn cell_key(order: &[String], program: &str, size: &str, level: &str) -> CellKey {
    (
        order.iter().position(|p| p == program).unwrap_or(0),
        size_order(size),
        size.to_string(),
        level_order(level),
        level.to_string(),
    )
}

/// Sort key of a Tables 4/5 row: its cell, then the strategy (with its rank first).
type GroupKey = (CellKey, u8, String);

/// Tables 4/5: one row per program × size × level × strategy, in grid order.
pub fn prediction_rows(records: &[PredictionRecord]) -> Vec<PredictionRow> {
    let order = programs(records.iter().map(|r| r.program.as_str()));
    let mut groups: BTreeMap<GroupKey, Vec<&PredictionRecord>> = BTreeMap::new();
    for r in records {
        groups
            .entry((
                cell_key(&order, &r.program, &r.size, &r.level),
                strategy_order(&r.strategy),
                r.strategy.clone(),
            ))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|(((p, _, size, _, level), _, strategy), rs)| {
            let count = |o: PredictionOutcome| rs.iter().filter(|r| r.outcome == o).count();
            let replayed: Vec<&ValidationRecord> =
                rs.iter().filter_map(|r| r.validation.as_ref()).collect();
            // Every prediction was replayed (none were made counts too); user histories are
            // never replayed.
            let replayable = rs
                .iter()
                .all(|r| r.outcome != PredictionOutcome::Sat || r.validation.is_some());
            let generated = || {
                rs.iter().filter(|r| {
                    !matches!(
                        r.outcome,
                        PredictionOutcome::ObservedViolation | PredictionOutcome::Error
                    )
                })
            };
            PredictionRow {
                program: order[p].clone(),
                size,
                level,
                strategy,
                runs: rs.len(),
                unknown: count(PredictionOutcome::Unknown),
                timed_out: rs
                    .iter()
                    .filter(|r| r.outcome == PredictionOutcome::Unknown && r.timed_out)
                    .count(),
                unsat: count(PredictionOutcome::Unsat),
                sat: count(PredictionOutcome::Sat),
                observed_violations: count(PredictionOutcome::ObservedViolation),
                errors: count(PredictionOutcome::Error),
                validated: replayable.then(|| replayed.iter().filter(|v| v.validated).count()),
                diverged: replayable.then(|| replayed.iter().filter(|v| v.diverged).count()),
                mean_literals: mean(generated().map(|r| r.literals as f64)).unwrap_or(0.0),
                mean_generation_s: mean(generated().map(|r| r.generation_s)).unwrap_or(0.0),
                mean_solving_sat_s: mean(
                    rs.iter()
                        .filter(|r| r.outcome == PredictionOutcome::Sat)
                        .map(|r| r.solving_s),
                ),
                mean_solving_unsat_s: mean(
                    rs.iter()
                        .filter(|r| r.outcome == PredictionOutcome::Unsat)
                        .map(|r| r.solving_s),
                ),
                certificates: count_kinds(
                    rs.iter()
                        .filter(|r| r.outcome == PredictionOutcome::Unsat)
                        .filter_map(|r| r.certificate.as_deref()),
                ),
            }
        })
        .collect()
}

/// Tables 6/7: per program × size × level, the random runs beside the strategy with the
/// most validated predictions (ties: most predictions, then the grid's first).
pub fn exploration_rows(
    exploration: &[ExplorationRecord],
    predictions: &[PredictionRow],
) -> Vec<ExplorationRow> {
    let order = programs(exploration.iter().map(|r| r.program.as_str()));
    let mut groups: BTreeMap<CellKey, Vec<&ExplorationRecord>> = BTreeMap::new();
    for r in exploration {
        groups
            .entry(cell_key(&order, &r.program, &r.size, &r.level))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((p, _, size, _, level), rs)| {
            let program = order[p].clone();
            let n = rs.len();
            let pct = |k: usize| 100.0 * k as f64 / n.max(1) as f64;
            let best = predictions
                .iter()
                .filter(|row| row.program == program && row.size == size && row.level == level)
                .max_by(|a, b| {
                    (a.validated.unwrap_or(a.sat), a.sat)
                        .cmp(&(b.validated.unwrap_or(b.sat), b.sat))
                        .then(strategy_order(&b.strategy).cmp(&strategy_order(&a.strategy)))
                });
            ExplorationRow {
                random_runs: n,
                fail_pct: pct(rs.iter().filter(|r| r.invariant_failed).count()),
                unser_pct: pct(rs.iter().filter(|r| r.unserializable == Some(true)).count()),
                unser_unknown: rs.iter().filter(|r| r.unserializable.is_none()).count(),
                strategy: best.map(|b| b.strategy.clone()),
                predicted_pct: best.map(|b| 100.0 * b.sat as f64 / b.runs.max(1) as f64),
                validated_pct: best
                    .and_then(|b| b.validated.map(|v| 100.0 * v as f64 / b.runs.max(1) as f64)),
                program,
                size,
                level,
            }
        })
        .collect()
}

/// The risk ranking, highest score first (ties by name). A program's score is
/// `100 × Σ_level w(level) · mean_run max_strategy exposure / Σ_level w(level)` over the levels
/// in the records, with [`level_weight`] and [`exposure`]; a run is one observed execution
/// (workload seed × size, or a user history file).
pub fn risk_rows(records: &[PredictionRecord]) -> Vec<RiskRow> {
    let order = programs(records.iter().map(|r| r.program.as_str()));
    let levels = levels_in_order(records.iter().map(|r| r.level.as_str()));
    let total_weight: f64 = levels.iter().map(|l| level_weight(l)).sum();
    let mut rows: Vec<RiskRow> = order
        .iter()
        .map(|program| {
            // (level, size, run) → best exposure and whether an invariant broke.
            let mut cases: BTreeMap<(String, String, String), (f64, bool)> = BTreeMap::new();
            for r in records.iter().filter(|r| &r.program == program) {
                let e = exposure(r);
                let broke = r.outcome == PredictionOutcome::Sat
                    && r.validation
                        .as_ref()
                        .is_some_and(|v| v.validated && !v.failed_invariants.is_empty());
                let slot = cases
                    .entry((r.level.clone(), r.size.clone(), r.run.clone()))
                    .or_insert((0.0, false));
                slot.0 = slot.0.max(e);
                slot.1 |= broke;
            }
            let by_level: Vec<(String, f64)> = levels
                .iter()
                .map(|l| {
                    let m = mean(
                        cases
                            .iter()
                            .filter(|((cl, _, _), _)| cl == l)
                            .map(|(_, &(e, _))| e),
                    )
                    .unwrap_or(0.0);
                    (l.clone(), 100.0 * level_weight(l) * m / total_weight)
                })
                .collect();
            RiskRow {
                program: program.clone(),
                score: by_level.iter().map(|(_, c)| c).sum(),
                by_level,
                cases: cases.len(),
                exposed: cases.values().filter(|(e, _)| *e >= 0.6).count(),
                invariant_broken: cases.values().filter(|(_, b)| *b).count(),
                anomalies: program_anomalies(records, program)
                    .into_iter()
                    .map(|(a, _)| a)
                    .collect(),
                levels: level_standings(records, program, &levels),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.program.cmp(&b.program))
    });
    rows
}

/// `program`'s distinct anomalies (from its predicted tasks), sorted, each with the strongest
/// level it was predicted at (by [`level_weight`]).
fn program_anomalies(records: &[PredictionRecord], program: &str) -> Vec<(String, String)> {
    let mut by_anomaly: BTreeMap<String, String> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| r.program == program && r.outcome == PredictionOutcome::Sat)
    {
        for a in &r.anomalies {
            let level = by_anomaly
                .entry(a.clone())
                .or_insert_with(|| r.level.clone());
            if level_weight(&r.level) > level_weight(level) {
                *level = r.level.clone();
            }
        }
    }
    by_anomaly.into_iter().collect()
}

/// The ranking scored by distinct anomalies (`rank --score anomalies`; docs/ranking.md): per
/// program, each distinct anomaly counts w(L) / w_max, L the strongest level it was predicted
/// at and w_max the largest weight of the grid's levels; with S their sum, the score is
/// 100 × (1 − 2^(−S)) (one anomaly at the strongest level: 50; two: 75; never 100). The
/// per-level parts split the score in proportion to the anomalies' levels.
pub fn anomaly_risk_rows(records: &[PredictionRecord]) -> Vec<RiskRow> {
    let mut rows = risk_rows(records);
    let levels = levels_in_order(records.iter().map(|r| r.level.as_str()));
    let w_max = levels
        .iter()
        .map(|l| level_weight(l))
        .fold(1.0_f64, f64::max);
    for row in &mut rows {
        let anomalies = program_anomalies(records, &row.program);
        let part = |l: &str| -> f64 {
            anomalies
                .iter()
                .filter(|(_, al)| al == l)
                .map(|(_, al)| level_weight(al) / w_max)
                .sum()
        };
        let total: f64 = levels.iter().map(|l| part(l)).sum();
        row.score = 100.0 * (1.0 - 0.5_f64.powf(total));
        row.by_level = levels
            .iter()
            .map(|l| {
                let share = if total > 0.0 { part(l) / total } else { 0.0 };
                (l.clone(), row.score * share)
            })
            .collect();
    }
    rows.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.program.cmp(&b.program))
    });
    rows
}

/// The programs' distinct anomalies as a Markdown list (empty when none was named).
pub fn anomalies_markdown(rows: &[RiskRow]) -> String {
    let mut out = String::new();
    for r in rows.iter().filter(|r| !r.anomalies.is_empty()) {
        let _ = writeln!(
            out,
            "- **{}** ({}): {}",
            r.program,
            r.anomalies.len(),
            r.anomalies.join("; ")
        );
    }
    out
}

/// A count of literals as the paper prints them (`366K`, `60.8M`).
pub fn format_literals(n: f64) -> String {
    if n < 1_000.0 {
        format!("{n:.0}")
    } else if n < 1_000_000.0 {
        format!("{:.1}K", n / 1_000.0)
    } else {
        format!("{:.1}M", n / 1_000_000.0)
    }
}

/// Seconds with a precision that suits their size.
pub fn format_seconds(s: f64) -> String {
    if s < 0.1 {
        format!("{s:.3} s")
    } else if s < 10.0 {
        format!("{s:.2} s")
    } else {
        format!("{s:.1} s")
    }
}

fn pct(p: f64) -> String {
    format!("{p:.0}%")
}

/// Tables 4/5 as Markdown, one table per level.
pub fn prediction_markdown(rows: &[PredictionRow]) -> String {
    let mut out = String::new();
    let show_viol = rows.iter().any(|r| r.observed_violations > 0);
    let show_err = rows.iter().any(|r| r.errors > 0);
    for level in levels_in_order(rows.iter().map(|r| r.level.as_str())) {
        let _ = writeln!(out, "#### Level {level}\n");
        let mut header = String::from("| Program | Size | Strategy | Unk (T/O) | Unsat | Sat |");
        let mut rule = String::from("|---|---|---|---:|---:|---:|");
        if show_viol {
            header.push_str(" Observed violation |");
            rule.push_str("---:|");
        }
        if show_err {
            header.push_str(" Errors |");
            rule.push_str("---:|");
        }
        header.push_str(
            " Validated (Diverged) | # Literals | Generation | Solving Sat | Solving Unsat |",
        );
        rule.push_str("---:|---:|---:|---:|---:|");
        let _ = writeln!(out, "{header}\n{rule}");
        for r in rows.iter().filter(|r| r.level == level) {
            let unsat = if r.certificates.is_empty() {
                r.unsat.to_string()
            } else {
                format!("{} ({})", r.unsat, certificates_text(&r.certificates))
            };
            let mut line = format!(
                "| {} | {} | {} | {} ({}) | {unsat} | {} |",
                r.program, r.size, r.strategy, r.unknown, r.timed_out, r.sat
            );
            if show_viol {
                let _ = write!(line, " {} |", r.observed_violations);
            }
            if show_err {
                let _ = write!(line, " {} |", r.errors);
            }
            let validated = match (r.validated, r.diverged) {
                (Some(v), Some(d)) => format!("{v} ({d})"),
                _ => "–".to_string(),
            };
            let _ = writeln!(
                line,
                " {validated} | {} | {} | {} | {} |",
                format_literals(r.mean_literals),
                format_seconds(r.mean_generation_s),
                r.mean_solving_sat_s.map_or("–".to_string(), format_seconds),
                r.mean_solving_unsat_s
                    .map_or("–".to_string(), format_seconds),
            );
            out.push_str(&line);
        }
        out.push('\n');
    }
    out
}

/// Tables 6/7 as Markdown, one table per level.
pub fn exploration_markdown(rows: &[ExplorationRow]) -> String {
    let mut out = String::new();
    for level in levels_in_order(rows.iter().map(|r| r.level.as_str())) {
        let _ = writeln!(out, "#### Level {level}\n");
        out.push_str("| Program | Size | Random runs | Fail | Unser | Strategy | Predicted | Validated |\n|---|---|---:|---:|---:|---|---:|---:|\n");
        for r in rows.iter().filter(|r| r.level == level) {
            let unser = if r.unser_unknown > 0 {
                format!("{} ({} unknown)", pct(r.unser_pct), r.unser_unknown)
            } else {
                pct(r.unser_pct)
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {unser} | {} | {} | {} |",
                r.program,
                r.size,
                r.random_runs,
                pct(r.fail_pct),
                r.strategy.as_deref().unwrap_or("–"),
                r.predicted_pct.map_or("–".to_string(), pct),
                r.validated_pct.map_or("–".to_string(), pct),
            );
        }
        out.push('\n');
    }
    out
}

/// The risk ranking as Markdown.
pub fn risk_markdown(rows: &[RiskRow]) -> String {
    let mut out = String::new();
    let levels: Vec<&str> = rows
        .first()
        .map(|r| r.by_level.iter().map(|(l, _)| l.as_str()).collect())
        .unwrap_or_default();
    out.push_str("| Rank | Program | Score |");
    for l in &levels {
        let _ = write!(out, " from {l} |");
    }
    out.push_str(
        " Runs × levels | Exposed | Invariant broken | Proven free at | Not decided at |\n|---:|---|---:|",
    );
    for _ in &levels {
        out.push_str("---:|");
    }
    out.push_str("---:|---:|---:|---|---|\n");
    for (i, r) in rows.iter().enumerate() {
        let _ = write!(out, "| {} | {} | {:.1} |", i + 1, r.program, r.score);
        for (_, c) in &r.by_level {
            let _ = write!(out, " {c:.1} |");
        }
        let at = |standing: Standing| {
            let levels: Vec<&str> = r
                .levels
                .iter()
                .filter(|l| l.standing == standing)
                .map(|l| l.level.as_str())
                .collect();
            if levels.is_empty() {
                "–".to_string()
            } else {
                levels.join(", ")
            }
        };
        let _ = writeln!(
            out,
            " {} | {} | {} | {} | {} |",
            r.cases,
            r.exposed,
            r.invariant_broken,
            at(Standing::ProvenFree),
            at(Standing::Undecided)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Means and percentages are compared to within rounding, not bit for bit.
    fn assert_close(actual: f64, expected: f64) {
        assert!(
            (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "{actual} is not {expected}"
        );
    }

    fn record(
        program: &str,
        run: u32,
        level: &str,
        strategy: &str,
        outcome: PredictionOutcome,
        validated: Option<(bool, bool, bool)>,
    ) -> PredictionRecord {
        PredictionRecord {
            program: program.to_string(),
            size: "small".to_string(),
            run: format!("seed {run}"),
            level: level.to_string(),
            strategy: strategy.to_string(),
            outcome,
            timed_out: false,
            validation: validated.map(|(validated, diverged, broke)| ValidationRecord {
                validated,
                diverged,
                failed_invariants: if broke {
                    vec!["A13".to_string()]
                } else {
                    vec![]
                },
                verdict: if validated {
                    "validated"
                } else {
                    "serializable"
                }
                .to_string(),
            }),
            literals: 1000 * run as u64,
            generation_s: 0.5,
            solving_s: run as f64,
            detail: None,
            anomalies: if outcome == PredictionOutcome::Sat {
                vec![format!("A × B on T.c{run}")]
            } else {
                vec![]
            },
            certificate: (outcome == PredictionOutcome::Unsat)
                .then(|| "writers-ordered".to_string()),
            search: None,
        }
    }

    #[test]
    fn anomaly_scores_count_distinct_anomalies_by_level() {
        use PredictionOutcome::*;
        let mut records = vec![
            // bank: two distinct anomalies at causal (the strongest level of the grid).
            record("bank", 1, "causal", "approx-relaxed", Sat, None),
            record("bank", 2, "causal", "approx-relaxed", Sat, None),
            record("bank", 2, "rc", "approx-relaxed", Sat, None),
            // shop: one anomaly, found only at rc (weight 1/3).
            record("shop", 1, "rc", "approx-relaxed", Sat, None),
            record("shop", 1, "causal", "approx-relaxed", Unsat, None),
        ];
        // The same anomaly found again in another run adds nothing.
        records.push(record("bank", 1, "rc", "approx-strict", Sat, None));
        let rows = anomaly_risk_rows(&records);
        assert_eq!(rows[0].program, "bank");
        assert_eq!(rows[0].anomalies, vec!["A × B on T.c1", "A × B on T.c2"]);
        assert!((rows[0].score - 75.0).abs() < 1e-9);
        assert_eq!(rows[1].program, "shop");
        let expected = 100.0 * (1.0 - 0.5_f64.powf(1.0 / 3.0));
        assert!((rows[1].score - expected).abs() < 1e-9);
        let rc = rows[1].by_level.iter().find(|(l, _)| l == "rc").unwrap().1;
        assert!((rc - expected).abs() < 1e-9);
        let md = anomalies_markdown(&rows);
        assert!(md.contains("- **bank** (2): A × B on T.c1; A × B on T.c2"));
        assert!(md.contains("- **shop** (1): A × B on T.c1"));
    }

    #[test]
    fn prediction_rows_count_and_average() {
        use PredictionOutcome::*;
        let records = vec![
            record(
                "bank",
                1,
                "causal",
                "approx-relaxed",
                Sat,
                Some((true, false, true)),
            ),
            record(
                "bank",
                2,
                "causal",
                "approx-relaxed",
                Sat,
                Some((false, true, false)),
            ),
            record("bank", 3, "causal", "approx-relaxed", Unsat, None),
            record("bank", 4, "causal", "approx-relaxed", Unknown, None),
            record(
                "bank",
                1,
                "rc",
                "approx-relaxed",
                Sat,
                Some((true, true, false)),
            ),
        ];
        let rows = prediction_rows(&records);
        assert_eq!(rows.len(), 2);
        let r = &rows[0];
        assert_eq!(
            (r.level.as_str(), r.runs, r.sat, r.unsat, r.unknown),
            ("causal", 4, 2, 1, 1)
        );
        assert_eq!((r.validated, r.diverged), (Some(1), Some(1)));
        assert_close(r.mean_literals, 2500.0);
        assert_close(r.mean_solving_sat_s.unwrap(), 1.5);
        assert_close(r.mean_solving_unsat_s.unwrap(), 3.0);
        let md = prediction_markdown(&rows);
        assert!(md.contains("#### Level causal"));
        // Unsat with the certificates of its tasks.
        assert!(md.contains("| bank | small | approx-relaxed | 1 (0) | 1 (`writers-ordered` 1) | 2 | 1 (1) | 2.5K | 0.50 s | 1.50 s | 3.00 s |"), "{md}");
        assert!(!md.contains("Observed violation"));
        // Nothing predicted: 0 validated. A prediction without replay (a user history): –.
        let none = prediction_rows(&[record("v", 1, "causal", "approx-relaxed", Unsat, None)]);
        assert_eq!((none[0].validated, none[0].diverged), (Some(0), Some(0)));
        let unreplayed = prediction_rows(&[record("h", 1, "causal", "approx-relaxed", Sat, None)]);
        assert_eq!(unreplayed[0].validated, None);
        assert!(prediction_markdown(&unreplayed).contains("| 1 | – |"));
    }

    #[test]
    fn risk_weights_levels_and_invariants() {
        use PredictionOutcome::*;
        let records = vec![
            // bank: causal run 1 validated with a broken invariant, run 2 nothing; rc both
            // validated without invariant breakage.
            record(
                "bank",
                1,
                "causal",
                "approx-relaxed",
                Sat,
                Some((true, false, true)),
            ),
            record("bank", 2, "causal", "approx-relaxed", Unsat, None),
            record(
                "bank",
                1,
                "rc",
                "approx-relaxed",
                Sat,
                Some((true, false, false)),
            ),
            record(
                "bank",
                2,
                "rc",
                "approx-relaxed",
                Sat,
                Some((true, false, false)),
            ),
            // votes: only rc.
            record("votes", 1, "causal", "approx-relaxed", Unsat, None),
            record("votes", 2, "causal", "approx-relaxed", Unsat, None),
            record(
                "votes",
                1,
                "rc",
                "approx-relaxed",
                Sat,
                Some((true, false, true)),
            ),
            record(
                "votes",
                2,
                "rc",
                "approx-relaxed",
                Sat,
                Some((true, false, true)),
            ),
        ];
        let rows = risk_rows(&records);
        // bank: (3 × 0.5 + 1 × 0.6) / 4 × 100 = 52.5; votes: (0 + 1 × 1) / 4 × 100 = 25.
        assert_eq!(rows[0].program, "bank");
        assert!((rows[0].score - 52.5).abs() < 1e-9, "{}", rows[0].score);
        assert!((rows[1].score - 25.0).abs() < 1e-9);
        assert_eq!(rows[0].by_level[0].0, "causal");
        assert!((rows[0].by_level[0].1 - 37.5).abs() < 1e-9);
        assert_eq!(
            (rows[0].cases, rows[0].exposed, rows[0].invariant_broken),
            (4, 3, 1)
        );
        let md = risk_markdown(&rows);
        assert!(
            md.contains("| 1 | bank | 52.5 | 37.5 | 15.0 | 4 | 3 | 1 | – | – |"),
            "{md}"
        );
        // votes: causal proven free (every run a "none" with its certificate), rc exposed.
        assert!(
            md.contains("| 2 | votes | 25.0 | 0.0 | 25.0 | 4 | 2 | 2 | causal | – |"),
            "{md}"
        );
        assert_eq!(rows[1].levels[0].standing, Standing::ProvenFree);
        assert_eq!(
            rows[1].levels[0].certificates,
            vec![("writers-ordered".to_string(), 2)]
        );
        assert_eq!(rows[1].levels[1].standing, Standing::Exposed);
        // bank causal: one run exposed, one proven free.
        assert_eq!(
            (
                rows[0].levels[0].standing,
                rows[0].levels[0].exposed,
                rows[0].levels[0].proven_free
            ),
            (Standing::Exposed, 1, 1)
        );
    }

    #[test]
    fn a_level_is_proven_free_only_when_every_run_and_strategy_has_a_certificate() {
        use PredictionOutcome::*;
        let levels = vec!["si".to_string(), "causal".to_string()];
        let mut uncertified = record("shop", 2, "si", "approx-strict", Unsat, None);
        uncertified.certificate = None;
        let records = vec![
            // si: run 1 proven free by both strategies; run 2 proven free by approx-relaxed
            // only (approx-strict's "none" has no certificate); run 3 unknown.
            record("shop", 1, "si", "approx-relaxed", Unsat, None),
            record("shop", 1, "si", "approx-strict", Unsat, None),
            record("shop", 2, "si", "approx-relaxed", Unsat, None),
            uncertified,
            record("shop", 3, "si", "approx-relaxed", Unknown, None),
            // causal: every run proven free, by two kinds of certificate.
            record("shop", 1, "causal", "approx-relaxed", Unsat, None),
            {
                let mut r = record("shop", 2, "causal", "approx-relaxed", Unsat, None);
                r.certificate = Some("search-exhausted".to_string());
                r
            },
            record("shop", 3, "causal", "approx-relaxed", Unsat, None),
        ];
        let s = level_standings(&records, "shop", &levels);
        assert_eq!(s[0].standing, Standing::Undecided);
        assert_eq!((s[0].runs, s[0].proven_free, s[0].undecided), (3, 1, 2));
        assert_eq!(
            standing_text(&s[0]),
            "not decided: no anomaly found; 1 proven free, 2 undecided"
        );
        assert_eq!(s[1].standing, Standing::ProvenFree);
        assert_eq!(
            standing_text(&s[1]),
            "**proven free** (3/3 runs; `writers-ordered` 2, `search-exhausted` 1; in the \
             recorded calls only)"
        );
        // An observed violation exposes the run; the table has a column per level.
        let mut records = records;
        records.push(record(
            "shop",
            3,
            "si",
            "approx-strict",
            ObservedViolation,
            None,
        ));
        let rows = risk_rows(&records);
        assert_eq!(rows[0].levels[0].standing, Standing::Exposed);
        assert_eq!(
            standing_text(&rows[0].levels[0]),
            "anomaly in 1/3 runs; 1 proven free, 1 undecided"
        );
        let md = standing_markdown(&rows);
        assert!(
            md.starts_with(
                "| Program | si | causal |\n|---|---|---|\n| shop | anomaly in 1/3 runs"
            ),
            "{md}"
        );
    }

    #[test]
    fn the_best_strategy_sits_beside_exploration() {
        use PredictionOutcome::*;
        let records = vec![
            record(
                "bank",
                1,
                "rc",
                "approx-strict",
                Sat,
                Some((false, false, false)),
            ),
            record(
                "bank",
                1,
                "rc",
                "approx-relaxed",
                Sat,
                Some((true, false, false)),
            ),
        ];
        let exploration: Vec<ExplorationRecord> = (0..4)
            .map(|trial| ExplorationRecord {
                program: "bank".to_string(),
                size: "small".to_string(),
                seed: 1,
                level: "rc".to_string(),
                trial,
                invariant_failed: trial == 0,
                unserializable: Some(trial < 2),
            })
            .collect();
        let rows = exploration_rows(&exploration, &prediction_rows(&records));
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_close(r.fail_pct, 25.0);
        assert_close(r.unser_pct, 50.0);
        assert_eq!(r.strategy.as_deref(), Some("approx-relaxed"));
        assert_close(r.predicted_pct.unwrap(), 100.0);
        assert_close(r.validated_pct.unwrap(), 100.0);
        let md = exploration_markdown(&rows);
        assert!(
            md.contains("| bank | small | 4 | 25% | 50% | approx-relaxed | 100% | 100% |"),
            "{md}"
        );
    }

    #[test]
    fn numbers_are_formatted_like_the_paper() {
        assert_eq!(format_literals(366_400.0), "366.4K");
        assert_eq!(format_literals(60_834_000.0), "60.8M");
        assert_eq!(format_literals(512.0), "512");
        assert_eq!(format_seconds(0.0123), "0.012 s");
        assert_eq!(format_seconds(22.94), "22.9 s");
    }
}
