//! `isopredict run`: one workload run through the whole pipeline (IsoPredict PLDI'24 §4–5),
//! one function per stage, each handing the next a named result:
//! 1. `record`: run the workload with reads seeing the latest write (a serial observed
//!    execution), or on a database → `Recorded`;
//! 2. `check`: the observed run at the level, and a database's observed run at
//!    serializability (a violation of either stops the run: it is what happened) → `Checked`;
//! 3. `predict_anomaly`: an unserializable execution the level allows → `Predicted`;
//! 4. `validate`: the workload replayed along it (same seed) → `Validated`;
//! 5. `distinct_anomalies` (`super::run_report`): the run's other distinct anomalies, each
//!    replayed; when the first broke no invariant and another did, that one is detailed;
//! 6. `verify`: the detailed prediction re-verified by the checkers → `Verified`;
//! 7. `report_anomaly`: which procedure calls, which reads changed writer, the cycle, which
//!    invariant broke.
//!
//! Every level question goes to `super::judge`. The report is built in `super::run_report`;
//! [`write_run_files`] writes the histories, the anomaly's DOT and SVG, report.md and
//! report.json.

use std::time::{Duration, Instant};

use crate::check::Level;
use crate::predict::{predict, PredictOptions, Prediction, Verdict};
use crate::report::run_report::{RunReport, RunTimings, RunVerdict};
use crate::store::{Isolation, KeyDirectory};
use crate::workloads::{self, Run, RunConfig, Validation, Workload};

use super::judge::{judge, violation, Judged, Violation};
use super::level_name;
pub use super::run_data::{PipelineError, RunOptions, RunOutcome};
use super::run_data::{Recorded, Verified};
pub use super::run_files::{write_run_files, RUN_FILES};
pub use super::run_report::verdict_name;
use super::run_report::{distinct_anomalies, observed_report, report_anomaly};

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
    let mut outcome = super::fresh_z3(|| run_in_context(workload, options));
    crate::interrupt::stop_point()?;
    if let Ok(o) = &mut outcome {
        if let Some(note) = weaker_than_database(options, &o.observed) {
            o.report.summary = format!("{} {note}", o.report.summary);
        }
    }
    outcome
}

/// The pipeline's stages in order (see the module documentation); a stage that finds the
/// answer stops the run there.
fn run_in_context(
    workload: &dyn Workload,
    options: &RunOptions,
) -> Result<RunOutcome, PipelineError> {
    let start = Instant::now();
    super::progress::stage("recording the workload");
    let recorded = record(workload, options)?;
    let mut report = observed_report(workload, options, &recorded);
    let mut timings = RunTimings {
        record_ms: recorded.record_ms,
        ..RunTimings::default()
    };
    if let Some(stop) = database_failure(&report) {
        return Ok(stop.outcome(report, recorded, timings, start));
    }
    if let Some(stop) = serializable_database(options, &recorded, &report) {
        return Ok(stop.outcome(report, recorded, timings, start));
    }
    super::progress::stage("checking the observed run");
    let checked = check(workload, options, &recorded)?;
    timings.check_ms = checked.check_ms;
    if let Some(stop) = checked.stop {
        return Ok(stop.outcome(report, recorded, timings, start));
    }
    super::progress::stage("predicting");
    let predicted = predict_anomaly(options, &recorded)?;
    timings.generation_ms = predicted.generation_ms;
    timings.solving_ms = predicted.solving_ms;
    timings.literals = predicted.literals;
    report.reason = predicted.reason;
    let prediction = match predicted.prediction {
        Ok(p) => p,
        Err(stop) => {
            report.certificate = predicted.certificate;
            return Ok(stop.outcome(report, recorded, timings, start));
        }
    };
    // An anomaly is found: from here a stop (Ctrl-C, SIGTERM) cuts the search for further
    // ones and the run reports what it found ([`crate::interrupt::keep_findings`]).
    crate::interrupt::keep_findings();
    super::progress::stage("validating by replay");
    let validated = validate(workload, options, &recorded, &prediction)?;
    timings.validation_ms = validated.validation_ms;
    super::progress::stage("searching for distinct anomalies");
    let mut distinct = distinct_anomalies(
        workload,
        &recorded.config,
        &recorded.run,
        &recorded.keys,
        options,
        &prediction,
        &validated.validation,
    )?;
    // The anomaly that broke the program's invariants, when the first did not, is detailed.
    let (prediction, validation) = distinct
        .lead
        .take()
        .unwrap_or((prediction, validated.validation));
    super::progress::stage("verifying the prediction");
    let verified = verify(&prediction, options)?;
    super::progress::stage("describing the anomaly");
    let anomaly = report_anomaly(
        workload,
        options,
        &recorded,
        (&prediction, &validation),
        &verified,
        distinct,
        &mut report,
    )?;
    timings.distinct_search_ms = report.timings.distinct_search_ms;
    timings.total_ms = ms(start.elapsed());
    report.timings = timings;
    Ok(RunOutcome {
        report,
        observed: recorded.run,
        prediction: Some(prediction),
        validation: Some(validation),
        anomaly: Some(anomaly),
        observed_drawing: None,
        keys: recorded.keys,
    })
}

/// Where a run stops before a prediction is validated: the report's verdict and summary.
struct Stop {
    verdict: RunVerdict,
    summary: String,
    /// The observed run's violation of the level, in words.
    observed_violation: Option<String>,
    /// The observed run's own anomaly (a run on a database that is already unserializable),
    /// as `check` names and draws it.
    observed_anomaly: Option<Violation>,
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
        let mut observed_drawing = None;
        if let Some(v) = self.observed_anomaly {
            report.observed_violation = Some(v.text);
            report.observed_violated_level = Some(level_name(Level::Serializable).to_string());
            report.observed_anomaly = v.label;
            observed_drawing = v.dot;
        }
        timings.total_ms = ms(start.elapsed());
        report.timings = timings;
        RunOutcome {
            report,
            observed: recorded.run,
            prediction: None,
            validation: None,
            anomaly: None,
            observed_drawing,
            keys: recorded.keys,
        }
    }
}

/// Stage 1, record: run the workload on the embedded store (reads see the latest write) or
/// on the database.
fn record(workload: &dyn Workload, options: &RunOptions) -> Result<Recorded, PipelineError> {
    let config = RunConfig {
        terminals: options.sessions,
        scan: options.scan,
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

/// A run on a database that ended early stops here.
fn database_failure(report: &RunReport) -> Option<Stop> {
    let failure = report.database.as_ref()?.failure.clone()?;
    Some(Stop {
        verdict: RunVerdict::Unknown,
        summary: format!(
            "The run on the database ended early, so nothing was predicted: {failure}. The history recorded up to then ({} committed transactions) is well-formed and written with the report.",
            report.observed_transactions
        ),
        observed_violation: None,
        observed_anomaly: None,
    })
}

/// The level prediction works at for a database run at `isolation` (the level follows the
/// database): read committed → rc; repeatable read, PostgreSQL's snapshot isolation → si;
/// serializable → serializability, which leaves nothing to predict: the run checks that the
/// database kept its promise ([`super::promise`]) and stops.
pub fn level_for_isolation(isolation: Isolation) -> Level {
    isolation.promised_level()
}

/// A run on a database at SERIALIZABLE predicting at serializability stops after the
/// promise check: the database promises every execution is serializable, so no anomaly is
/// predicted; the report says whether the recorded run kept that promise.
fn serializable_database(
    options: &RunOptions,
    recorded: &Recorded,
    report: &RunReport,
) -> Option<Stop> {
    let db = recorded.run.database.as_ref()?;
    if options.level != Level::Serializable {
        return None;
    }
    let section = report.database.as_ref()?;
    let (verdict, outcome) = match section.promise_verdict.as_str() {
        "kept" => (RunVerdict::NoAnomaly, "it kept that promise in this run"),
        "broken" => (
            RunVerdict::ObservedViolation,
            "it BROKE that promise in this run",
        ),
        _ => (
            RunVerdict::Unknown,
            "whether it kept that promise in this run is undecided",
        ),
    };
    Some(Stop {
        verdict,
        summary: format!(
            "Nothing to predict: {} ran at {}, which promises serializability, so it does not \
             produce unserializable executions; the recorded history was checked instead: {outcome} \
             ({}).",
            section.database,
            db.isolation.sql(),
            section.promise
        ),
        observed_violation: (verdict == RunVerdict::ObservedViolation)
            .then(|| section.promise_explanation.clone())
            .flatten(),
        observed_anomaly: None,
    })
}

/// The note for a prediction at a level weaker than what the database's isolation promises:
/// such a prediction may need an execution the database would not produce.
fn weaker_than_database(options: &RunOptions, observed: &Run) -> Option<String> {
    let db = observed.database.as_ref()?;
    let promised = db.isolation.promised_level();
    (!options.level.implies(promised)).then(|| {
        format!(
            "Note: the level {} is weaker than {}, which the database promises at {}: an \
             execution predicted here may be one the database would not produce \
             (`isopredict reproduce` finds out).",
            options.level.full_name(),
            promised.full_name(),
            db.isolation.sql()
        )
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
    let judged = judge(&recorded.run.history, level, options.timeout)?;
    let Judged::Violated(violation) = judged else {
        let stop = observed_anomaly(workload, options, recorded);
        return Ok(Checked {
            stop,
            check_ms: ms(t.elapsed()),
        });
    };
    let check_ms = ms(t.elapsed());
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
            observed_anomaly: None,
        }),
        check_ms,
    })
}

/// Stage 2 on a database: the observed run judged at serializability before anything is
/// predicted. A database's observed run may itself be unserializable (a lost update at READ
/// COMMITTED): that is what happened, headlined as such, named and drawn as `check` names and
/// draws it (keys in the application's terms), and nothing is predicted from it. (The
/// embedded store's observed run is serial by construction: its reads see the latest write
/// and its transactions run whole, one at a time.)
fn observed_anomaly(
    workload: &dyn Workload,
    options: &RunOptions,
    recorded: &Recorded,
) -> Option<Stop> {
    let db = recorded.run.database.as_ref()?;
    let named = recorded.keys.rename(&recorded.run.history);
    let v = violation(&named, Level::Serializable, options.timeout)?;
    let summary = format!(
        "What happened: the observed run of {} on {} at {} is already unserializable — {} — no serial order explains what the database did. Nothing is predicted: the anomaly already happened (`isopredict check observed.json --level ser` says the same; anomaly.dot draws it).",
        workload.name(),
        db.database,
        db.isolation.sql(),
        v.label.as_deref().unwrap_or("an unserializable execution"),
    );
    Some(Stop {
        verdict: RunVerdict::ObservedViolation,
        summary,
        observed_violation: None,
        observed_anomaly: Some(v),
    })
}

/// Stage 3's result.
struct Predicted {
    /// The verified prediction, or where the run stops (none exists, the observed run is
    /// already an anomaly, or the predictor gave up).
    prediction: Result<Prediction, Stop>,
    /// Why the predictor's answer is unknown or incomplete, or why no anomaly exists.
    reason: Option<String>,
    /// The kind of the certificate of a "none" ([`crate::predict::Certificate::kind`]).
    certificate: Option<String>,
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
        certificate: outcome.certificate.map(|c| c.kind().to_string()),
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
        observed_anomaly: None,
    }
}

/// Stage 4, verify.
fn verify(prediction: &Prediction, options: &RunOptions) -> Result<Verified, PipelineError> {
    let h = &prediction.history;
    let level = matches!(judge(h, options.level, options.timeout)?, Judged::Holds);
    let unserializable = match judge(h, Level::Serializable, options.timeout)? {
        Judged::Violated(_) => Some(true),
        Judged::Holds => Some(false),
        Judged::Unknown(_) => None,
    };
    // A second opinion that shares no code with the decision core: every commit order of the
    // anomaly's core, by brute force, on cores of a few transactions.
    let oracle_unserializable = prediction.core.as_ref().and_then(|core| {
        crate::check::oracle::satisfies(&core.history, Level::Serializable).map(|ser| !ser)
    });
    Ok(Verified {
        level,
        unserializable,
        oracle_unserializable,
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
