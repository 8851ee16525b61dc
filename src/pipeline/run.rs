//! `isopredict run`: one workload run through the whole pipeline (IsoPredict PLDI'24 §4–5),
//! one function per stage, each handing the next a named result:
//! 1. [`record`]: run the workload with reads seeing the latest write (a serial observed
//!    execution), or on a database → `Recorded`;
//! 2. [`check`]: the observed run at the level (a violation stops the run) → `Checked`;
//! 3. [`predict_anomaly`]: an unserializable execution the level allows → `Predicted`;
//! 4. [`verify`]: the prediction re-verified by the checkers → `Verified`;
//! 5. [`validate`]: the workload replayed along it (same seed) → `Validated`;
//! 6. [`report_anomaly`]: which procedure calls, which reads changed writer, the cycle, which
//!    invariant broke, and the run's other distinct anomalies.
//!
//! Every level question goes to `super::judge`. [`write_run_files`] writes the histories,
//! the anomaly's DOT and SVG, report.md and report.json.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::check::{CheckError, Level};
use crate::formats::{self, Format};
use crate::predict::{predict, PredictError, PredictOptions, Prediction, Strategy, Verdict};
use crate::report::anomaly::AnomalyGraph;
use crate::report::run_report::{
    CallLine, DatabaseSection, DistinctAnomalyLine, InvariantLine, PredictionSection, RunReport,
    RunTimings, RunVerdict, ValidationSection,
};
use crate::store::{Backend, KeyDirectory};
use crate::workloads::{
    self, InvariantCheck, Run, RunConfig, RunError, Size, Validation, Workload,
};

use super::anomaly_name::name_anomaly;
use super::explain::{txn_name, Explainer};
use super::judge::{judge, Checkers, Judged};
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

/// The pipeline's stages in order (see the module documentation); a stage that finds the
/// answer stops the run there.
fn run_in_context(
    workload: &dyn Workload,
    options: &RunOptions,
) -> Result<RunOutcome, PipelineError> {
    let start = Instant::now();
    let recorded = record(workload, options)?;
    let mut report = observed_report(workload, options, &recorded);
    let mut timings = RunTimings {
        record_ms: recorded.record_ms,
        ..RunTimings::default()
    };
    if let Some(stop) = database_failure(&report) {
        return Ok(stop.outcome(report, recorded, timings, start));
    }
    let checked = check(workload, options, &recorded)?;
    timings.check_ms = checked.check_ms;
    if let Some(stop) = checked.stop {
        return Ok(stop.outcome(report, recorded, timings, start));
    }
    let predicted = predict_anomaly(options, &recorded)?;
    timings.generation_ms = predicted.generation_ms;
    timings.solving_ms = predicted.solving_ms;
    timings.literals = predicted.literals;
    report.reason = predicted.reason;
    let prediction = match predicted.prediction {
        Ok(p) => p,
        Err(stop) => return Ok(stop.outcome(report, recorded, timings, start)),
    };
    let verified = verify(&prediction, options)?;
    let validated = validate(workload, options, &recorded, &prediction)?;
    timings.validation_ms = validated.validation_ms;
    let anomaly = report_anomaly(
        workload,
        options,
        &recorded,
        &prediction,
        &verified,
        &validated.validation,
        &mut report,
    )?;
    timings.total_ms = ms(start.elapsed());
    report.timings = timings;
    Ok(RunOutcome {
        report,
        observed: recorded.run,
        prediction: Some(prediction),
        validation: Some(validated.validation),
        anomaly: Some(anomaly),
    })
}

/// Stage 1's result: the observed run.
struct Recorded {
    /// The configuration it ran with (the replays use it again).
    config: RunConfig,
    /// The run: its history, calls, store and invariants.
    run: Run,
    /// The store's keys in table, column and row terms.
    keys: KeyDirectory,
    /// Time to record it (ms).
    record_ms: f64,
}

/// Where a run stops before a prediction is validated: the report's verdict and summary.
struct Stop {
    verdict: RunVerdict,
    summary: String,
    /// The observed run's violation of the level, in words.
    observed_violation: Option<String>,
}

impl Stop {
    /// The outcome of a run that stopped here: `report` with the verdict and the timings.
    fn outcome(
        self,
        mut report: RunReport,
        recorded: Recorded,
        mut timings: RunTimings,
        start: Instant,
    ) -> RunOutcome {
        report.verdict = self.verdict;
        report.summary = self.summary;
        if self.observed_violation.is_some() {
            report.observed_violation = self.observed_violation;
        }
        timings.total_ms = ms(start.elapsed());
        report.timings = timings;
        RunOutcome {
            report,
            observed: recorded.run,
            prediction: None,
            validation: None,
            anomaly: None,
        }
    }
}

/// Stage 1, record: run the workload on the embedded store (reads see the latest write) or
/// on the database.
fn record(workload: &dyn Workload, options: &RunOptions) -> Result<Recorded, PipelineError> {
    let config = RunConfig {
        terminals: options.sessions,
        ..RunConfig::paper(options.seed, options.size)
    };
    let t = Instant::now();
    let run = match &options.backend {
        Some(backend) => workloads::run_on(workload, &config, backend.as_ref())?,
        None => workloads::run(workload, &config)?,
    };
    let record_ms = ms(t.elapsed());
    let keys = KeyDirectory::new(&workload.tables(), &run.history, &mut run.store.snapshot());
    Ok(Recorded {
        config,
        run,
        keys,
        record_ms,
    })
}

/// The report's part about the observed run (the verdict still unknown): its calls,
/// invariants and sessions, and for a run on a database whether it kept its promise.
fn observed_report(
    workload: &dyn Workload,
    options: &RunOptions,
    recorded: &Recorded,
) -> RunReport {
    let observed = &recorded.run;
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
    RunReport {
        workload: workload.name().to_string(),
        seed: options.seed,
        size: options.size.name().to_string(),
        level: level_name(options.level).to_string(),
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
            keys: &recorded.keys,
        }
        .sessions(),
        raw_keys: false,
        database: database_section(observed, options.timeout),
        anomalies: Vec::new(),
    }
}

/// The database part of the report, for a run recorded on one: its counts and whether it
/// kept the isolation level it promised ([`super::promise`]).
fn database_section(observed: &Run, timeout: Option<Duration>) -> Option<DatabaseSection> {
    let db = observed.database.as_ref()?;
    let promise = super::promise::check_promise(&observed.history, db.isolation, timeout);
    let committed = observed.history.committed_txns().count().saturating_sub(1);
    Some(DatabaseSection {
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
    })
}

/// A run on a database that ended early stops here.
fn database_failure(report: &RunReport) -> Option<Stop> {
    let failure = report.database.as_ref()?.failure.clone()?;
    Some(Stop {
        verdict: RunVerdict::Unknown,
        summary: format!(
            "The run on the database ended early, so nothing was predicted: {failure}. The history recorded up to then ({} committed transactions) is well-formed and written with the report.",
            report.observed_transactions.saturating_sub(1)
        ),
        observed_violation: None,
    })
}

/// Stage 2's result.
struct Checked {
    /// The observed run violates the level: the run stops.
    stop: Option<Stop>,
    /// Time to check (ms).
    check_ms: f64,
}

/// Stage 2, check: the observed run at the level (a violation is the store's own
/// misbehaviour; an undecided check goes on to prediction, which checks again).
fn check(
    workload: &dyn Workload,
    options: &RunOptions,
    recorded: &Recorded,
) -> Result<Checked, PipelineError> {
    let level = options.level;
    let t = Instant::now();
    let judged = judge(&recorded.run.history, level, Checkers::Smt, options.timeout)?;
    let check_ms = ms(t.elapsed());
    let Judged::Violated(violation) = judged else {
        return Ok(Checked {
            stop: None,
            check_ms,
        });
    };
    let summary = match &recorded.run.database {
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
    Ok(Checked {
        stop: Some(Stop {
            verdict: RunVerdict::ObservedViolation,
            summary,
            observed_violation: Some(violation),
        }),
        check_ms,
    })
}

/// Stage 3's result.
struct Predicted {
    /// The verified prediction, or where the run stops (none exists, the observed run is
    /// already an anomaly, or the predictor gave up).
    prediction: Result<Prediction, Stop>,
    /// Why the predictor's answer is unknown or incomplete.
    reason: Option<String>,
    /// Constraint generation and solving (ms), and the encoding's literals.
    generation_ms: f64,
    solving_ms: f64,
    literals: u64,
}

/// Stage 3, predict: an unserializable execution the level allows, by the engine the run's
/// size calls for ([`PredictOptions::for_history`]).
fn predict_anomaly(options: &RunOptions, recorded: &Recorded) -> Result<Predicted, PipelineError> {
    let level = options.level;
    let h = &recorded.run.history;
    let outcome = predict(
        h,
        &PredictOptions::new(level, options.strategy)
            .with_timeout(options.timeout)
            .for_history(h),
    )?;
    let prediction = match (outcome.verdict, outcome.prediction) {
        (Verdict::Predicted, Some(p)) => Ok(p),
        (verdict, _) => Err(no_prediction(verdict, outcome.reason.as_deref(), options)),
    };
    Ok(Predicted {
        prediction,
        reason: outcome.reason,
        generation_ms: outcome.stats.generation_ms,
        solving_ms: outcome.stats.solving_ms,
        literals: outcome.stats.encoding.literals,
    })
}

/// Where the run stops when the predictor made no prediction (`verdict`).
fn no_prediction(verdict: Verdict, reason: Option<&str>, options: &RunOptions) -> Stop {
    let level = options.level;
    let run_verdict = match verdict {
        Verdict::NoPrediction => RunVerdict::NoAnomaly,
        Verdict::ObservedViolation | Verdict::ObservedUnserializable => {
            RunVerdict::ObservedViolation
        }
        _ => RunVerdict::Unknown,
    };
    let summary = match run_verdict {
        RunVerdict::NoAnomaly => format!(
            "No anomaly found in this run: {}",
            crate::predict::no_prediction_claim(level, options.strategy, "the calls of this run")
        ),
        RunVerdict::ObservedViolation if verdict == Verdict::ObservedUnserializable => {
            "The observed run is already unserializable: no prediction needed.".to_string()
        }
        RunVerdict::ObservedViolation => {
            format!("The observed run already violates {}.", level_name(level))
        }
        _ => format!(
            "Unknown: the solver gave up ({}).",
            reason.unwrap_or("no reason given")
        ),
    };
    Stop {
        verdict: run_verdict,
        summary,
        observed_violation: None,
    }
}

/// Stage 4's result: the prediction re-verified by the checkers, independently of the
/// predictor (which verified it too; the report says so on its own evidence).
struct Verified {
    /// The predicted history is valid at the level.
    level: bool,
    /// It is unserializable (`None`: undecided).
    unserializable: Option<bool>,
}

/// Stage 4, verify.
fn verify(prediction: &Prediction, options: &RunOptions) -> Result<Verified, PipelineError> {
    let h = &prediction.history;
    let level = matches!(
        judge(h, options.level, Checkers::Smt, options.timeout)?,
        Judged::Holds(_)
    );
    let unserializable = match judge(h, Level::Serializable, Checkers::Smt, options.timeout)? {
        Judged::Violated(_) => Some(true),
        Judged::Holds(_) => Some(false),
        Judged::Unknown(_) => None,
    };
    Ok(Verified {
        level,
        unserializable,
    })
}

/// Stage 5's result.
struct Validated {
    /// The replay along the prediction and its verdict.
    validation: Validation,
    /// Time to replay and judge (ms).
    validation_ms: f64,
}

/// Stage 5, validate: replay the workload along the prediction (same seed).
fn validate(
    workload: &dyn Workload,
    options: &RunOptions,
    recorded: &Recorded,
    prediction: &Prediction,
) -> Result<Validated, PipelineError> {
    let t = Instant::now();
    let validation = workloads::validate(
        workload,
        &recorded.config,
        Some(&recorded.run),
        &prediction.history,
        options.level,
        options.timeout,
    )?;
    Ok(Validated {
        validation,
        validation_ms: ms(t.elapsed()),
    })
}

/// Stage 6, report: the prediction in the application's terms (calls, changed reads, the
/// cycle, the anomaly's name), the verdict and summary, the distinct anomalies of the run,
/// and the validation; returns the drawing of the anomaly.
fn report_anomaly(
    workload: &dyn Workload,
    options: &RunOptions,
    recorded: &Recorded,
    prediction: &Prediction,
    verified: &Verified,
    validation: &Validation,
    report: &mut RunReport,
) -> Result<AnomalyGraph, PipelineError> {
    let level = options.level;
    let observed = &recorded.run;
    let keys = &recorded.keys;
    let explainer = Explainer {
        observed: &observed.history,
        calls: &observed.txn_calls,
        keys,
    };
    let mut section =
        explainer.prediction_section(prediction, verified.level, verified.unserializable);
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
    let validated = validation.verdict == workloads::Verdict::Validated;
    report.verdict = if validated {
        RunVerdict::AnomalyValidated
    } else {
        RunVerdict::AnomalyPredicted
    };
    report.summary = anomaly_summary(workload, level, &named, &section, validation);
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
    let anomaly = explainer.anomaly_graph(prediction, title);
    // (Its time counts in the total only.)
    report.anomalies = distinct_anomalies(
        workload,
        &recorded.config,
        observed,
        keys,
        options,
        prediction,
        validation,
    )?;
    report.prediction = Some(section);
    report.validation = Some(ValidationSection {
        verdict: verdict_name(validation.verdict).to_string(),
        divergences: validation
            .divergences
            .iter()
            .map(|d| divergence_text(d, &observed.history, keys))
            .collect(),
        transactions: validation.run.history.committed_txns().count(),
        invariants: invariant_lines(&validation.invariants),
    });
    Ok(anomaly)
}

/// The report's one-sentence summary of a predicted anomaly and its replay.
fn anomaly_summary(
    workload: &dyn Workload,
    level: Level,
    named: &super::anomaly_name::AnomalyName,
    section: &PredictionSection,
    validation: &Validation,
) -> String {
    let broken: Vec<&InvariantCheck> = validation.failed_invariants().collect();
    let involved = section.calls.len();
    let changed: u32 = section.changed_reads.iter().map(|c| c.reads).sum();
    let level_words = level.full_name();
    if validation.verdict != workloads::Verdict::Validated {
        return format!(
            "Anomaly predicted under {level_words} ({}; {changed} read(s) see a different write; re-verified), but the replay did not confirm it: the validating run is {}{}.",
            named.name,
            verdict_name(validation.verdict),
            if validation.diverged() {
                " after diverging from the prediction"
            } else {
                ""
            }
        );
    }
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
