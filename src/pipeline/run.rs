//! `isopredict run`: one workload run through the whole pipeline (IsoPredict PLDI'24 §4–5):
//! record the run with reads seeing the latest write (a serial observed execution) → check it
//! at the level → predict an unserializable execution the level allows → re-verify the
//! prediction with the checkers → validate it by replaying the workload along it (same seed)
//! → report which procedure calls, which reads changed writer, the cycle, and which invariant
//! broke; [`write_run_files`] writes the histories, the anomaly's DOT and SVG, report.md and
//! report.json.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::check::{self, CheckError, CheckOptions, Level};
use crate::formats::{self, Format};
use crate::predict::{predict, PredictError, PredictOptions, Prediction, Strategy, Verdict};
use crate::report::anomaly::AnomalyGraph;
use crate::report::run_report::{
    CallLine, InvariantLine, RunReport, RunTimings, RunVerdict, ValidationSection,
};
use crate::ser::{self, SerVerdict};
use crate::store::KeyDirectory;
use crate::workloads::{
    self, InvariantCheck, Run, RunConfig, RunError, Size, Validation, Workload,
};

use super::explain::{txn_name, Explainer};
use super::level_name;

/// Options of [`run_workload`].
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The paper's run number.
    pub seed: u64,
    /// Small (3 × 4 calls) or large (3 × 8).
    pub size: Size,
    /// Causal, read atomic or read committed.
    pub level: Level,
    /// The prediction strategy.
    pub strategy: Strategy,
    /// Budget for prediction, and separately for each serializability check (none: no
    /// limit).
    pub timeout: Option<Duration>,
}

impl Default for RunOptions {
    /// Seed 1, small, causal, approx-relaxed, 60 s.
    fn default() -> Self {
        RunOptions {
            seed: 1,
            size: Size::Small,
            level: Level::Causal,
            strategy: Strategy::ApproxRelaxed,
            timeout: Some(Duration::from_secs(60)),
        }
    }
}

impl RunOptions {
    /// The default output folder: `out/<workload>-<size>-<seed>-<level>`.
    pub fn default_out_dir(&self, workload: &str) -> PathBuf {
        PathBuf::from("out").join(format!(
            "{workload}-{}-{}-{}",
            self.size.name(),
            self.seed,
            level_name(self.level)
        ))
    }
}

/// Why the pipeline could not run.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// Recording or replaying the workload failed.
    #[error("running the workload: {0}")]
    Run(#[from] RunError),
    /// Checking failed.
    #[error("checking: {0}")]
    Check(#[from] CheckError),
    /// Prediction failed.
    #[error("predicting: {0}")]
    Predict(#[from] PredictError),
}

/// Everything one run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// The report.
    pub report: RunReport,
    /// The observed run.
    pub observed: Run,
    /// The prediction, if one was made.
    pub prediction: Option<Prediction>,
    /// The validating replay, if a prediction was made.
    pub validation: Option<Validation>,
    /// The drawing of the anomaly, if a prediction was made.
    pub anomaly: Option<AnomalyGraph>,
}

fn invariant_lines(invariants: &[InvariantCheck]) -> Vec<InvariantLine> {
    invariants
        .iter()
        .map(|i| InvariantLine {
            id: i.id.to_string(),
            description: i.description.to_string(),
            holds: i.holds,
            detail: i.detail.clone(),
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the pipeline on `workload` (see the module documentation). Files are not written;
/// see [`write_run_files`]. Z3 runs in a fresh context (see [`super::fresh_z3`]), so the same
/// options always give the same report.
pub fn run_workload(
    workload: &dyn Workload,
    options: &RunOptions,
) -> Result<RunOutcome, PipelineError> {
    super::fresh_z3(|| run_in_context(workload, options))
}

fn run_in_context(
    workload: &dyn Workload,
    options: &RunOptions,
) -> Result<RunOutcome, PipelineError> {
    let start = Instant::now();
    let level = options.level;
    let config = RunConfig::paper(options.seed, options.size);
    let mut timings = RunTimings::default();

    // 1. Record.
    let t = Instant::now();
    let observed = workloads::run(workload, &config)?;
    timings.record_ms = ms(t.elapsed());
    let keys = KeyDirectory::new(
        &workload.tables(),
        &observed.history,
        &mut observed.store.snapshot(),
    );
    let h = &observed.history;
    let observed_calls: Vec<CallLine> = observed
        .commit_order
        .iter()
        .map(|&t| CallLine {
            txn: txn_name(h, t),
            call: observed.txn_calls[t as usize]
                .as_ref()
                .map(|c| c.describe()),
            role: String::new(),
        })
        .collect();
    let mut report = RunReport {
        workload: workload.name().to_string(),
        seed: options.seed,
        size: options.size.name().to_string(),
        level: level_name(level).to_string(),
        strategy: options.strategy.name().to_string(),
        verdict: RunVerdict::Unknown,
        summary: String::new(),
        reason: None,
        observed_transactions: h.committed_txns().count(),
        observed_calls,
        observed_invariants: invariant_lines(&observed.invariants),
        observed_violation: None,
        prediction: None,
        validation: None,
        timings: RunTimings::default(),
        files: Vec::new(),
    };

    // 2. Check.
    let t = Instant::now();
    let checked = check::check(h, level, &CheckOptions::default())?;
    timings.check_ms = ms(t.elapsed());
    if !checked.is_consistent() {
        report.verdict = RunVerdict::ObservedViolation;
        report.summary = format!(
            "The observed run of {} already violates {}: the store itself misbehaved.",
            workload.name(),
            level_name(level)
        );
        report.observed_violation = Some(checked.render_text());
        return Ok(stopped_before_prediction(report, observed, timings, start));
    }

    // 3. Predict.
    let outcome = predict(
        h,
        &PredictOptions::new(level, options.strategy)
            .with_timeout(options.timeout)
            .for_history(h),
    )?;
    timings.generation_ms = outcome.stats.generation_ms;
    timings.solving_ms = outcome.stats.solving_ms;
    timings.literals = outcome.stats.encoding.literals;
    report.reason = outcome.reason.clone();
    let prediction = match (outcome.verdict, outcome.prediction) {
        (Verdict::Predicted, Some(p)) => p,
        (verdict, _) => {
            report.verdict = match verdict {
                Verdict::NoPrediction => RunVerdict::NoAnomaly,
                Verdict::ObservedViolation | Verdict::ObservedUnserializable => {
                    RunVerdict::ObservedViolation
                }
                _ => RunVerdict::Unknown,
            };
            report.summary = match report.verdict {
                RunVerdict::NoAnomaly => format!(
                    "No anomaly: no execution of this run's calls that {} allows is unserializable (strategy {}).",
                    level_name(level),
                    options.strategy
                ),
                RunVerdict::ObservedViolation if verdict == Verdict::ObservedUnserializable => {
                    "The observed run is already unserializable: no prediction needed.".to_string()
                }
                RunVerdict::ObservedViolation => format!(
                    "The observed run already violates {}.",
                    level_name(level)
                ),
                _ => format!(
                    "Unknown: the solver gave up ({}).",
                    outcome.reason.as_deref().unwrap_or("no reason given")
                ),
            };
            return Ok(stopped_before_prediction(report, observed, timings, start));
        }
    };

    // 4. Re-verify with the checkers (the predictor did; the report says so independently).
    let reverified_level =
        check::check(&prediction.history, level, &CheckOptions::default())?.is_consistent();
    let reverified_unserializable =
        match ser::check_serializable(&prediction.history, options.timeout) {
            Ok(SerVerdict::Unserializable) => Some(true),
            Ok(SerVerdict::Serializable { .. }) => Some(false),
            _ => None,
        };

    // 5. Validate by replay.
    let t = Instant::now();
    let validation = workloads::validate(
        workload,
        &config,
        Some(&observed),
        &prediction.history,
        level,
        options.timeout,
    )?;
    timings.validation_ms = ms(t.elapsed());

    // 6. Explain.
    let explainer = Explainer {
        observed: h,
        calls: &observed.txn_calls,
        keys: &keys,
    };
    let section =
        explainer.prediction_section(&prediction, reverified_level, reverified_unserializable);
    let broken: Vec<&InvariantCheck> = validation.failed_invariants().collect();
    let validated = validation.verdict == workloads::Verdict::Validated;
    report.verdict = if validated {
        RunVerdict::AnomalyValidated
    } else {
        RunVerdict::AnomalyPredicted
    };
    let involved = section.calls.len();
    let changed: u32 = section.changed_reads.iter().map(|c| c.reads).sum();
    let level_words = level.full_name();
    report.summary = if validated {
        let broke = if broken.is_empty() {
            "no invariant broke, but the execution is unserializable".to_string()
        } else {
            format!(
                "it broke invariant {}",
                broken
                    .iter()
                    .map(|i| format!("{} ({})", i.id, i.description))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        format!(
            "Anomaly validated: under {level_words}, {}'s calls can run so that no serial order explains them ({involved} calls involved, {changed} read(s) see a different write); replaying the workload along the prediction reproduced it, and {broke}.",
            workload.name()
        )
    } else {
        format!(
            "Anomaly predicted under {level_words} ({changed} read(s) see a different write; re-verified), but the replay did not confirm it: the validating run is {}{}.",
            verdict_name(validation.verdict),
            if validation.diverged() {
                " after diverging from the prediction"
            } else {
                ""
            }
        )
    };
    let title = format!(
        "{} seed {} {}: {} under {} ({})",
        workload.name(),
        options.seed,
        options.size.name(),
        if validated {
            "validated anomaly"
        } else {
            "predicted anomaly"
        },
        level_name(level),
        options.strategy
    );
    let anomaly = explainer.anomaly_graph(&prediction, title);
    report.prediction = Some(section);
    report.validation = Some(ValidationSection {
        verdict: verdict_name(validation.verdict).to_string(),
        divergences: validation
            .divergences
            .iter()
            .map(|d| d.to_string())
            .collect(),
        transactions: validation.run.history.committed_txns().count(),
        invariants: invariant_lines(&validation.invariants),
    });
    timings.total_ms = ms(start.elapsed());
    report.timings = timings;
    Ok(RunOutcome {
        report,
        observed,
        prediction: Some(prediction),
        validation: Some(validation),
        anomaly: Some(anomaly),
    })
}

/// The outcome of a run that stopped before a prediction was made (the observed run already
/// violates the level, or the predictor found none or gave up): the report with its timings.
fn stopped_before_prediction(
    mut report: RunReport,
    observed: Run,
    mut timings: RunTimings,
    start: Instant,
) -> RunOutcome {
    timings.total_ms = ms(start.elapsed());
    report.timings = timings;
    RunOutcome {
        report,
        observed,
        prediction: None,
        validation: None,
        anomaly: None,
    }
}

/// The name of a validation verdict (`validated`, `serializable`, `level-violated`,
/// `unknown`).
pub fn verdict_name(v: workloads::Verdict) -> &'static str {
    match v {
        workloads::Verdict::Validated => "validated",
        workloads::Verdict::Serializable => "serializable",
        workloads::Verdict::LevelViolated => "level-violated",
        workloads::Verdict::Unknown => "unknown",
    }
}

/// Writes `outcome`'s files into `dir` (created if needed) and records their paths in the
/// report: `observed.json` / `observed.trace.txt`, and with a prediction `predicted.json` /
/// `predicted.trace.txt`, `validating.json` / `validating.trace.txt`, `anomaly.dot`,
/// `anomaly.svg`; then `report.md` and `report.json`. Histories are in the native JSON format
/// and the IsoPredict trace format.
pub fn write_run_files(outcome: &mut RunOutcome, dir: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut files = Vec::new();
    let mut write = |name: &str, text: &[u8]| -> anyhow::Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        files.push(path.display().to_string());
        Ok(())
    };
    let trace = |run: &Run| -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        run.store.write_trace(&mut out)?;
        Ok(out)
    };
    let json = |h: &crate::history::History| -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        formats::write_to(h, Format::Json, &mut out)?;
        Ok(out)
    };
    write("observed.json", &json(&outcome.observed.history)?)?;
    write("observed.trace.txt", &trace(&outcome.observed)?)?;
    if let Some(p) = &outcome.prediction {
        write("predicted.json", &json(&p.history)?)?;
        let mut out = Vec::new();
        formats::write_to(&p.history, Format::IsoPredict, &mut out)?;
        write("predicted.trace.txt", &out)?;
    }
    if let Some(v) = &outcome.validation {
        write("validating.json", &json(&v.run.history)?)?;
        write("validating.trace.txt", &trace(&v.run)?)?;
    }
    if let Some(g) = &outcome.anomaly {
        write("anomaly.dot", g.to_dot().as_bytes())?;
        write("anomaly.svg", g.to_svg().as_bytes())?;
    }
    let md = dir.join("report.md").display().to_string();
    let js = dir.join("report.json").display().to_string();
    files.push(md);
    files.push(js);
    outcome.report.files = files;
    std::fs::write(dir.join("report.md"), outcome.report.to_markdown())
        .with_context(|| format!("writing {}", dir.join("report.md").display()))?;
    let json_text = serde_json::to_string_pretty(&outcome.report)?;
    std::fs::write(dir.join("report.json"), json_text + "\n")
        .with_context(|| format!("writing {}", dir.join("report.json").display()))?;
    Ok(())
}
