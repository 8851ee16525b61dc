//! `isopredict run`: one workload run through the whole pipeline (IsoPredict PLDI'24 §4–5):
//! record the run with reads seeing the latest write (a serial observed execution) → check it
//! at the level → predict an unserializable execution the level allows → re-verify the
//! prediction with the checkers → validate it by replaying the workload along it (same seed)
//! → report which procedure calls, which reads changed writer, the cycle, and which invariant
//! broke; [`write_run_files`] writes the histories, the anomaly's DOT and SVG, report.md and
//! report.json.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::check::{self, CheckError, CheckOptions, Level};
use crate::formats::{self, Format};
use crate::predict::{predict, PredictError, PredictOptions, Prediction, Strategy, Verdict};
use crate::report::anomaly::AnomalyGraph;
use crate::report::run_report::{
    CallLine, DatabaseSection, DistinctAnomalyLine, InvariantLine, RunReport, RunTimings,
    RunVerdict, ValidationSection,
};
use crate::ser::{self, SerVerdict};
use crate::store::{Backend, KeyDirectory};
use crate::workloads::{
    self, InvariantCheck, Run, RunConfig, RunError, Size, Validation, Workload,
};

use super::anomaly_name::name_anomaly;
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
    /// Sessions (terminals); the paper uses 3.
    pub sessions: usize,
    /// Where the observed run is recorded (`None`: the embedded store, reads seeing the
    /// latest write). Validation by replay always runs on the embedded store.
    pub backend: Option<Arc<dyn Backend>>,
    /// Most distinct anomalies to report (`run --max N`; `usize::MAX`: all within the time
    /// budget); above 1, a second search with the scalable engine looks for more after the
    /// first prediction ([`super::distinct`]).
    pub max: usize,
}

impl Default for RunOptions {
    /// Seed 1, small, 3 sessions, causal, approx-relaxed, 60 s, the embedded store, one
    /// anomaly.
    fn default() -> Self {
        RunOptions {
            seed: 1,
            size: Size::Small,
            level: Level::Causal,
            strategy: Strategy::ApproxRelaxed,
            timeout: Some(Duration::from_secs(60)),
            sessions: 3,
            backend: None,
            max: 1,
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
    /// The user interrupted the run (SIGINT, see [`crate::interrupt`]).
    #[error("{0}")]
    Interrupted(#[from] crate::interrupt::Interrupted),
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
/// options always give the same report. A stop requested by the user ([`crate::interrupt`])
/// ends it with [`PipelineError::Interrupted`].
pub fn run_workload(
    workload: &dyn Workload,
    options: &RunOptions,
) -> Result<RunOutcome, PipelineError> {
    let outcome = super::fresh_z3(|| run_in_context(workload, options));
    crate::interrupt::stop_point()?;
    outcome
}

fn run_in_context(
    workload: &dyn Workload,
    options: &RunOptions,
) -> Result<RunOutcome, PipelineError> {
    let start = Instant::now();
    let level = options.level;
    let config = RunConfig {
        terminals: options.sessions,
        ..RunConfig::paper(options.seed, options.size)
    };
    let mut timings = RunTimings::default();

    // 1. Record.
    let t = Instant::now();
    let observed = match &options.backend {
        Some(backend) => workloads::run_on(workload, &config, backend.as_ref())?,
        None => workloads::run(workload, &config)?,
    };
    timings.record_ms = ms(t.elapsed());
    let database = observed.database.as_ref().map(|db| {
        let promise =
            super::promise::check_promise(&observed.history, db.isolation, options.timeout);
        let committed = observed.history.committed_txns().count().saturating_sub(1);
        DatabaseSection {
            database: db.database.clone(),
            isolation: db.isolation.name().to_string(),
            attempts: db.attempts,
            aborted_by_database: db.aborted_by_database,
            connection_losses: db.connection_losses,
            unknown_outcome: db.unknown_outcome,
            committed_per_second: committed as f64 / (db.elapsed_ms / 1000.0).max(1e-9),
            promise: promise.sentence(),
            promise_verdict: serde_json::to_value(promise.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            promise_explanation: promise.explanation,
            failure: db.failure.clone(),
        }
    });
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
            trace: super::explain::trace_name(h, t),
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
        sessions: Explainer {
            observed: h,
            calls: &observed.txn_calls,
            keys: &keys,
        }
        .sessions(),
        raw_keys: false,
        database,
        anomalies: Vec::new(),
    };
    if let Some(failure) = report.database.as_ref().and_then(|d| d.failure.clone()) {
        report.verdict = RunVerdict::Unknown;
        report.summary = format!(
            "The run on the database ended early, so nothing was predicted: {failure}. The history recorded up to then ({} committed transactions) is well-formed and written with the report.",
            report.observed_transactions.saturating_sub(1)
        );
        return Ok(stopped_before_prediction(report, observed, timings, start));
    }

    // 2. Check.
    let t = Instant::now();
    let checked = level_check(h, level, options.timeout)?;
    timings.check_ms = ms(t.elapsed());
    if let Some(Err(violation)) = checked {
        report.verdict = RunVerdict::ObservedViolation;
        report.summary = match &observed.database {
            None => format!(
                "The observed run of {} already violates {}: the store itself misbehaved.",
                workload.name(),
                level_name(level)
            ),
            Some(db) => format!(
                "The observed run of {} on the database at {} already violates {}.",
                workload.name(),
                db.isolation,
                level_name(level)
            ),
        };
        report.observed_violation = Some(violation);
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
                    "No anomaly found in this run: {}",
                    crate::predict::no_prediction_claim(
                        level,
                        options.strategy,
                        "the calls of this run"
                    )
                ),
                RunVerdict::ObservedViolation if verdict == Verdict::ObservedUnserializable => {
                    "The observed run is already unserializable: no prediction needed.".to_string()
                }
                RunVerdict::ObservedViolation => {
                    format!("The observed run already violates {}.", level_name(level))
                }
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
        level_check(&prediction.history, level, options.timeout)? == Some(Ok(()));
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
    let mut section =
        explainer.prediction_section(&prediction, reverified_level, reverified_unserializable);
    let named = name_anomaly(
        &prediction.history,
        level,
        &|t| explainer.label(prediction.txn_origin[t as usize]),
        &|t| explainer.call(prediction.txn_origin[t as usize]),
        &|k| {
            let name = prediction.history.key_name(k);
            format!(
                "`{}`",
                explainer.key_meaning(name).as_deref().unwrap_or(name)
            )
        },
    );
    section.anomaly = Some(format!("**{}**: {}", named.name, named.description));
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
        let replay = if validation.diverged() {
            format!(
                "replaying the workload along the prediction could not follow it at {} (see Validation), yet the execution the replay produced is itself valid under {level_words} and unserializable",
                plural_reads(validation.divergences.len())
            )
        } else {
            "replaying the workload along the prediction reproduced it exactly".to_string()
        };
        format!(
            "Anomaly validated ({}): under {level_words}, {}'s calls can run so that no serial order explains them ({involved} calls involved, {changed} read(s) see a different write); {replay}, and {broke}.",
            named.name,
            workload.name()
        )
    } else {
        format!(
            "Anomaly predicted under {level_words} ({}; {changed} read(s) see a different write; re-verified), but the replay did not confirm it: the validating run is {}{}.",
            named.name,
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
    // (Its time counts in the total only.)
    report.anomalies = distinct_anomalies(
        workload,
        &config,
        &observed,
        &keys,
        options,
        &prediction,
        &validation,
    )?;
    report.prediction = Some(section);
    report.validation = Some(ValidationSection {
        verdict: verdict_name(validation.verdict).to_string(),
        divergences: validation
            .divergences
            .iter()
            .map(|d| divergence_text(d, h, &keys))
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

/// The distinct anomalies of the run (`options.max` of them at most): `first` (the prediction
/// the report details, replayed as `first_validation`), then those of a search by the
/// scalable engine for `options.max` predictions, each re-verified by the predictor, named in
/// application terms ([`super::distinct::app_anomaly`]), kept when their anomaly is new, and
/// replayed.
fn distinct_anomalies(
    workload: &dyn Workload,
    config: &RunConfig,
    observed: &Run,
    keys: &KeyDirectory,
    options: &RunOptions,
    first: &Prediction,
    first_validation: &Validation,
) -> Result<Vec<DistinctAnomalyLine>, PipelineError> {
    let h = &observed.history;
    let mut predictions = vec![first.clone()];
    predictions.extend(super::distinct::more_predictions(
        h,
        options.level,
        options.strategy,
        options.timeout,
        options.max,
    ));
    let named: Vec<_> = predictions
        .iter()
        .map(|p| super::distinct::app_anomaly(p, &observed.txn_calls, keys))
        .collect();
    let mut lines = Vec::new();
    for i in super::distinct::first_of_each(&named)
        .into_iter()
        .take(options.max.max(1))
    {
        let p = &predictions[i];
        let replay;
        let validation = if i == 0 {
            first_validation
        } else {
            replay = workloads::validate(
                workload,
                config,
                Some(observed),
                &p.history,
                options.level,
                options.timeout,
            )?;
            &replay
        };
        let calls = p
            .cycle
            .iter()
            .flatten()
            .map(|e| e.from)
            .chain(
                p.changed_reads
                    .iter()
                    .map(|c| c.txn)
                    .take(if p.cycle.is_none() { usize::MAX } else { 0 }),
            )
            .map(
                |t| match observed.txn_calls.get(t as usize).and_then(Option::as_ref) {
                    Some(c) => format!("{} {}", txn_name(h, t), c.describe()),
                    None => txn_name(h, t),
                },
            )
            .collect();
        lines.push(DistinctAnomalyLine {
            anomaly: named[i].to_string(),
            procedures: named[i].procedures.clone(),
            columns: named[i].columns.clone(),
            calls,
            changed_reads: p.changed_reads.len(),
            validation: verdict_name(validation.verdict).to_string(),
            broken_invariants: validation
                .failed_invariants()
                .map(|c| c.id.to_string())
                .collect(),
        });
    }
    Ok(lines)
}

/// The level check of a run or a prediction: `Some(Ok(()))` it holds, `Some(Err(text))` it is
/// violated (the text says how), `None` undecided. Causal, ra and rc by [`check::check`]; pc
/// and si by [`ser::satisfies_si_pc`] (brute force on small histories, else Z3).
fn level_check(
    h: &crate::history::History,
    level: Level,
    timeout: Option<Duration>,
) -> Result<Option<Result<(), String>>, PipelineError> {
    if matches!(level, Level::Prefix | Level::Snapshot) {
        return Ok(match ser::satisfies_si_pc(h, level, timeout) {
            ser::SiPcVerdict::Satisfies { .. } => Some(Ok(())),
            ser::SiPcVerdict::Violates { reason } => Some(Err(reason)),
            ser::SiPcVerdict::Unknown { .. } => None,
        });
    }
    let report = check::check(h, level, &CheckOptions::default())?;
    Ok(Some(if report.is_consistent() {
        Ok(())
    } else {
        Err(report.render_text())
    }))
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

/// A divergence in the report's terms: the transaction by its name (`T3.2`), the key by its
/// meaning.
fn divergence_text(
    d: &crate::store::Divergence,
    h: &crate::history::History,
    keys: &KeyDirectory,
) -> String {
    let full = d.to_string();
    let mut prefix = format!("session {} transaction #{}", d.session, d.txn);
    if let Some(r) = d.read {
        prefix.push_str(&format!(" read #{r}"));
    }
    if let Some(k) = &d.key {
        prefix.push_str(&format!(" of {k}"));
    }
    let Some(why) = full.strip_prefix(&prefix) else {
        return full;
    };
    let txn = h
        .sessions()
        .iter()
        .position(|s| s.external_id == Some(d.session))
        .and_then(|i| {
            h.sessions()[i]
                .txns()
                .filter(|&t| h.txn(t).is_committed())
                .nth(d.txn as usize)
        })
        .map_or_else(
            || format!("session {} transaction #{}", d.session, d.txn),
            |t| txn_name(h, t),
        );
    let mut out = txn;
    if let Some(r) = d.read {
        out.push_str(&format!(", read #{}", r + 1));
    }
    if let Some(k) = &d.key {
        out.push_str(&format!(" of {}", keys.describe(k).unwrap_or(k)));
    }
    let mut why = why.to_string();
    if let crate::store::DivergenceReason::OtherKey { expected: Some(e) } = &d.reason {
        if let Some(m) = keys.describe(e) {
            why = why.replace(e.as_str(), m);
        }
    }
    out + &why
}

fn plural_reads(n: usize) -> String {
    format!("{n} {}", if n == 1 { "read" } else { "reads" })
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
/// and the IsoPredict trace format. The folder is written atomically
/// ([`crate::output::write_folder_atomically`]): complete, or untouched on failure; an earlier
/// run's folder is replaced whole (no stale file stays), a folder holding files `run` does not
/// write ([`RUN_FILES`]) is refused.
pub fn write_run_files(outcome: &mut RunOutcome, dir: &Path) -> anyhow::Result<()> {
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    let trace = |run: &Run| -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        run.write_trace(&mut out)?;
        Ok(out)
    };
    let json = |h: &crate::history::History| -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        formats::write_to(h, Format::Json, &mut out)?;
        Ok(out)
    };
    files.push(("observed.json", json(&outcome.observed.history)?));
    files.push(("observed.trace.txt", trace(&outcome.observed)?));
    if let Some(p) = &outcome.prediction {
        files.push(("predicted.json", json(&p.history)?));
        let mut out = Vec::new();
        formats::write_to(&p.history, Format::IsoPredict, &mut out)?;
        files.push(("predicted.trace.txt", out));
    }
    if let Some(v) = &outcome.validation {
        files.push(("validating.json", json(&v.run.history)?));
        files.push(("validating.trace.txt", trace(&v.run)?));
    }
    if let Some(g) = &outcome.anomaly {
        files.push(("anomaly.dot", g.to_dot().into_bytes()));
        files.push(("anomaly.svg", g.to_svg().into_bytes()));
    }
    outcome.report.files = files
        .iter()
        .map(|(name, _)| *name)
        .chain(["report.md", "report.json"])
        .map(|name| dir.join(name).display().to_string())
        .collect();
    files.push(("report.md", outcome.report.to_markdown().into_bytes()));
    files.push((
        "report.json",
        (serde_json::to_string_pretty(&outcome.report)? + "\n").into_bytes(),
    ));
    let files: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_slice())).collect();
    crate::output::write_folder_atomically(dir, &files, RUN_FILES)?;
    Ok(())
}

/// Every file `run` may write into its output folder; a folder holding anything else is not
/// replaced.
pub const RUN_FILES: &[&str] = &[
    "observed.json",
    "observed.trace.txt",
    "predicted.json",
    "predicted.trace.txt",
    "validating.json",
    "validating.trace.txt",
    "anomaly.dot",
    "anomaly.svg",
    "report.md",
    "report.json",
];
