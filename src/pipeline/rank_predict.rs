//! One prediction task of `rank` (IsoPredict PLDI'24 §7.2, Tables 4/5): its record before it
//! runs, and the prediction of an observed history that fills it — the one path of workload
//! runs, user histories and applications (`rank --app`) alike.

use std::time::Duration;

use crate::check::Level;
use crate::history::History;
use crate::predict::{predict, PredictOptions, Strategy, Verdict};
use crate::report::tables::{PredictionOutcome, PredictionRecord};

use super::distinct::{first_of_each, AppAnomaly, SearchEnd};
use super::level_name;

/// The record of a Tables 4/5 task before it runs: what it is, and an error outcome until the
/// task fills in what it got.
pub(super) fn task_record(
    program: String,
    size: String,
    run: String,
    level: Level,
    strategy: Strategy,
) -> PredictionRecord {
    PredictionRecord {
        program,
        size,
        run,
        level: level_name(level).to_string(),
        strategy: strategy.name().to_string(),
        outcome: PredictionOutcome::Error,
        timed_out: false,
        validation: None,
        literals: 0,
        generation_s: 0.0,
        solving_s: 0.0,
        detail: None,
        anomalies: Vec::new(),
        certificate: None,
        search: None,
    }
}

/// Predicts `h`, filling `record` (with a "none", its certificate); returns the predictions
/// made — the engine's choice for `h` first, then (`max` > 1) up to `max` by the scalable
/// engine — and how that search for more ended.
pub(super) fn predict_history(
    h: &History,
    record: PredictionRecord,
    level: Level,
    strategy: Strategy,
    timeout: Option<Duration>,
    max: usize,
) -> (PredictionRecord, Vec<crate::predict::Prediction>, SearchEnd) {
    match predict(
        h,
        &PredictOptions::new(level, strategy)
            .with_timeout(timeout)
            .for_history(h),
    ) {
        Ok(o) => {
            let outcome = match o.verdict {
                Verdict::Predicted => PredictionOutcome::Sat,
                Verdict::NoPrediction => PredictionOutcome::Unsat,
                Verdict::ObservedViolation | Verdict::ObservedUnserializable => {
                    PredictionOutcome::ObservedViolation
                }
                Verdict::Unknown => PredictionOutcome::Unknown,
            };
            let timed_out = outcome == PredictionOutcome::Unknown
                && o.reason
                    .as_deref()
                    .is_some_and(|r| r.contains("timeout") || r.contains("canceled"));
            let record = PredictionRecord {
                outcome,
                timed_out,
                literals: o.stats.encoding.literals,
                generation_s: o.stats.generation_ms / 1000.0,
                solving_s: o.stats.solving_ms / 1000.0,
                detail: o.reason.clone(),
                certificate: (outcome == PredictionOutcome::Unsat)
                    .then(|| o.certificate.map(|c| c.kind().to_string()))
                    .flatten(),
                ..record
            };
            let mut predictions: Vec<_> = o.prediction.into_iter().collect();
            let mut end = SearchEnd::NotSearched;
            if !predictions.is_empty() {
                // No live line: rank draws its own progress bar.
                let more =
                    super::distinct::more_predictions(h, level, strategy, timeout, max, false);
                predictions.extend(more.predictions);
                end = more.end;
            }
            (record, predictions, end)
        }
        Err(e) => (
            PredictionRecord {
                outcome: PredictionOutcome::Error,
                detail: Some(e.to_string()),
                ..record
            },
            Vec::new(),
            SearchEnd::NotSearched,
        ),
    }
}

/// Fills `record`'s distinct anomalies — the first prediction of each of `named` (the task's
/// predictions, named in the program's terms), at most `max` — and how the search for them
/// ended (`end`), as `run`'s report.json says it.
pub(super) fn record_anomalies(
    record: &mut PredictionRecord,
    named: &[AppAnomaly],
    end: &SearchEnd,
    max: usize,
) {
    record.anomalies = first_of_each(named)
        .into_iter()
        .take(max.max(1))
        .map(|i| named[i].to_string())
        .collect();
    record.search =
        super::run_report::search_section(end, record.anomalies.len(), max).map(Box::new);
}
