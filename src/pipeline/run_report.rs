//! The report of a run (`isopredict run`, [`super::run`]): its observed part (calls,
//! invariants, sessions, the database's promise) and stage 6 — the prediction in the
//! application's terms (procedure calls, changed reads, the cycle, the anomaly's name), the
//! verdict and summary in words, the run's distinct anomalies (each re-verified and replayed)
//! and the validation.

use std::time::Duration;

use crate::check::Level;
use crate::predict::Prediction;
use crate::report::anomaly::AnomalyGraph;
use crate::report::run_report::{
    CallLine, DatabaseSection, DistinctAnomalyLine, InvariantLine, PredictionSection, RunReport,
    RunTimings, RunVerdict, SearchSection, ValidationSection,
};
use crate::store::KeyDirectory;
use crate::workloads::{self, InvariantCheck, Run, RunConfig, Validation, Workload};

use super::anomaly_name::AnomalyName;
use super::distinct::SearchEnd;
use super::explain::{anomaly_txns, txn_name, Explainer};
use super::level_name;
use super::run_data::{PipelineError, Recorded, RunOptions, Verified};

/// The invariants' lines of the report.
pub(super) fn invariant_lines(invariants: &[InvariantCheck]) -> Vec<InvariantLine> {
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

/// The report's part about the observed run (the verdict still unknown): its calls,
/// invariants and sessions, and for a run on a database whether it kept its promise.
pub(super) fn observed_report(
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
        // Committed transactions of the calls, as report.md counts them (not the initial
        // state).
        observed_transactions: h.committed_txns().count().saturating_sub(1),
        observed_calls,
        observed_invariants: invariant_lines(&observed.invariants),
        observed_violation: None,
        observed_violated_level: None,
        observed_anomaly: None,
        prediction: None,
        validation: None,
        timings: RunTimings::default(),
        files: Vec::new(),
        sessions: Explainer {
            observed: h,
            calls: &observed.txn_calls,
            keys: &recorded.keys,
        }
        .sessions(&rolled_back_per_session(observed)),
        raw_keys: false,
        database: database_section(observed, options.timeout),
        anomalies: Vec::new(),
        search: None,
        certificate: None,
        scan: Some(options.scan),
    }
}

/// Per session (client) of `observed`: its calls that rolled back, which the embedded store's
/// history keeps no trace of (the workload's own rollbacks and the store's aborts).
fn rolled_back_per_session(observed: &Run) -> Vec<usize> {
    let mut out = vec![0; observed.history.sessions().len()];
    for a in observed.attempts.iter().filter(|a| a.outcome.is_none()) {
        if let Some(n) = out.get_mut(a.client) {
            *n += 1;
        }
    }
    out
}

/// The database part of the report, for a run recorded on one: its counts and whether it
/// kept the isolation level it promised ([`super::promise`]).
pub(super) fn database_section(
    observed: &Run,
    timeout: Option<Duration>,
) -> Option<DatabaseSection> {
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

/// Stage 6, report: the prediction in the application's terms (calls, changed reads, the
/// cycle, the anomaly's name), the verdict and summary, the distinct anomalies of the run,
/// and the validation; returns the drawing of the anomaly.
pub(super) fn report_anomaly(
    workload: &dyn Workload,
    options: &RunOptions,
    recorded: &Recorded,
    lead: (&Prediction, &Validation),
    verified: &Verified,
    distinct: Distinct,
    report: &mut RunReport,
) -> Result<AnomalyGraph, PipelineError> {
    let (prediction, validation) = lead;
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
    let named = name_prediction(&explainer, prediction, level);
    section.anomaly = Some(format!(
        "{}: {}",
        named.id.row().markdown_label(),
        named.description
    ));
    section.anomaly_names = Some(named.id.row().names());
    section.oracle_unserializable = verified.oracle_unserializable;
    let outcome = validation.outcome();
    let validated = outcome.counts_as_validated();
    report.verdict = if validated {
        RunVerdict::AnomalyValidated
    } else {
        RunVerdict::AnomalyPredicted
    };
    report.summary = anomaly_summary(workload, level, &named, &section, validation);
    // The picture's title names the anomaly as the report does.
    let title = format!(
        "{} seed {} {}: {} {} under {} ({})",
        workload.name(),
        options.seed,
        options.size.name(),
        match outcome {
            workloads::ReplayOutcome::Validated => "validated",
            workloads::ReplayOutcome::ValidatedDiverged => "validated (diverged)",
            _ => "predicted",
        },
        named.name(),
        level_name(level),
        options.strategy
    );
    let mut anomaly = explainer.anomaly_graph(prediction, title);
    // The drawing is of the detailed anomaly; a cut search is said in its title too.
    if let Some(s) = distinct.search.as_ref().filter(|s| s.cut) {
        anomaly.note = Some(s.sentence.clone());
    }
    report.anomalies = distinct.lines;
    report.search = distinct.search;
    // (Its time counts in the total only.)
    report.timings.distinct_search_ms = distinct.search_ms;
    report.prediction = Some(section);
    report.validation = Some(ValidationSection {
        verdict: outcome.word().to_string(),
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
    named: &AnomalyName,
    section: &PredictionSection,
    validation: &Validation,
) -> String {
    let involved = section.calls.len();
    let changed: u32 = section.changed_reads.iter().map(|c| c.reads).sum();
    let level_words = level.full_name();
    let anomaly = format!(
        "{} of {} transaction(s); {changed} read(s) see a different write",
        named.name(),
        involved
    );
    let outcome = validation.outcome();
    if outcome == workloads::ReplayOutcome::ValidatedDiverged {
        return format!(
            "Anomaly validated, after the replay diverged ({anomaly}; re-verified): the replay could not follow the prediction at {} (see Validation), and the execution it produced instead satisfies {level_words} and is unserializable on its own — an anomaly of {}, though not exactly the predicted one (IsoPredict's tables count it as validated and diverged); {}.",
            plural_reads(validation.divergences.len()),
            workload.name(),
            invariant_clause(validation)
        );
    }
    if !outcome.counts_as_validated() {
        return format!(
            "Anomaly predicted under {level_words} ({anomaly}; re-verified), but the replay did not confirm it: the validating run is {}{}.",
            outcome.word(),
            if validation.diverged() {
                " after diverging from the prediction"
            } else {
                ""
            }
        );
    }
    let broke =
        if validation.failed_invariants().next().is_none() && !validation.invariants.is_empty() {
            "no invariant broke, but the execution is unserializable".to_string()
        } else {
            invariant_clause(validation)
        };
    format!(
        "Anomaly validated ({}): under {level_words}, {}'s calls can run so that no serial order explains them ({involved} calls involved, {changed} read(s) see a different write); replaying the workload along the prediction reproduced it exactly, and {broke}.",
        named.name(),
        workload.name()
    )
}

/// What the validating run's invariants say, as a clause of the headline: the ones it broke,
/// that none broke, or that the workload checks none (so nothing about them was shown).
fn invariant_clause(validation: &Validation) -> String {
    let broken: Vec<&InvariantCheck> = validation.failed_invariants().collect();
    if validation.invariants.is_empty() {
        "the workload checks no invariant on its final state".to_string()
    } else if broken.is_empty() {
        "no invariant broke".to_string()
    } else {
        format!(
            "it broke invariant {}",
            broken
                .iter()
                .map(|i| format!("{} ({})", i.id, i.description))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The run's distinct anomalies ([`distinct_anomalies`]).
pub(super) struct Distinct {
    /// One line each, the detailed one first.
    pub lines: Vec<DistinctAnomalyLine>,
    /// How the search for them ended (`None` when none ran).
    pub search: Option<SearchSection>,
    /// The search's time (ms).
    pub search_ms: f64,
    /// When the first prediction's replay broke no invariant but another's did: that
    /// prediction and its replay, which the report details instead (what broke the program's
    /// invariants leads the report; its line is first).
    pub lead: Option<(Prediction, Validation)>,
}

/// The distinct anomalies of the run (`options.max` of them at most), how the search for them
/// ended, and its time (ms): `first` (the run's first prediction, replayed as
/// `first_validation`), then those of a search by the scalable engine for `options.max`
/// predictions, each re-verified by the predictor, named in application terms
/// ([`super::distinct::app_anomaly`]), kept when their anomaly is new, and replayed. When
/// `first` broke no invariant and another did, that one leads ([`Distinct::lead`]).
pub(super) fn distinct_anomalies(
    workload: &dyn Workload,
    config: &RunConfig,
    observed: &Run,
    keys: &KeyDirectory,
    options: &RunOptions,
    first: &Prediction,
    first_validation: &Validation,
) -> Result<Distinct, PipelineError> {
    let h = &observed.history;
    let mut predictions = vec![first.clone()];
    let search = super::distinct::more_predictions(
        h,
        options.level,
        options.strategy,
        options.timeout,
        options.max,
        true,
    );
    predictions.extend(search.predictions);
    let named: Vec<_> = predictions
        .iter()
        .map(|p| super::distinct::app_anomaly(p, &observed.txn_calls, keys))
        .collect();
    let explainer = Explainer {
        observed: h,
        calls: &observed.txn_calls,
        keys,
    };
    let mut lines = Vec::new();
    // Per line: its prediction and (but the first's) its replay.
    let mut replays: Vec<(usize, Option<Validation>)> = Vec::new();
    for i in super::distinct::first_of_each(&named)
        .into_iter()
        .take(options.max.max(1))
    {
        let p = &predictions[i];
        let replay = if i == 0 {
            None
        } else {
            Some(workloads::validate(
                workload,
                config,
                Some(observed),
                &p.history,
                options.level,
                options.timeout,
            )?)
        };
        let validation = replay.as_ref().unwrap_or(first_validation);
        let calls = anomaly_txns(p)
            .into_iter()
            .map(
                |t| match observed.txn_calls.get(t as usize).and_then(Option::as_ref) {
                    Some(c) => format!("{} {}", txn_name(h, t), c.describe()),
                    None => txn_name(h, t),
                },
            )
            .collect();
        let anomaly_name = name_prediction(&explainer, p, options.level);
        lines.push(DistinctAnomalyLine {
            name: anomaly_name.name().to_string(),
            anomaly_names: Some(anomaly_name.id.row().names()),
            anomaly: named[i].to_string(),
            procedures: named[i].procedures.clone(),
            columns: named[i].columns.clone(),
            calls,
            changed_reads: p.changed_reads.iter().filter(|c| c.in_core).count(),
            validation: validation.outcome().word().to_string(),
            broken_invariants: validation
                .failed_invariants()
                .map(|c| c.id.to_string())
                .collect(),
        });
        replays.push((i, replay));
    }
    let lead = invariant_breaker_to_front(&mut lines).map(|k| {
        let (i, replay) = replays.swap_remove(k);
        let replay = replay.expect("a line after the first has its own replay");
        (predictions.swap_remove(i), replay)
    });
    let section = search_section(&search.end, lines.len(), options.max);
    Ok(Distinct {
        lines,
        search: section,
        search_ms: search.seconds * 1000.0,
        lead,
    })
}

/// When the first line's anomaly broke no invariant but a later one did: moves the first such
/// line to the front and returns where it was. `run tpcc` (seed 1, causal) detailed a lost
/// update on a counter that broke nothing while a Payment × Payment anomaly broke A1 and A8:
/// what broke the program's invariants is what a reader needs first.
fn invariant_breaker_to_front(lines: &mut Vec<DistinctAnomalyLine>) -> Option<usize> {
    if lines.first()?.broken_invariants.is_empty() {
        let k = lines
            .iter()
            .position(|line| !line.broken_invariants.is_empty())?;
        let line = lines.remove(k);
        lines.insert(0, line);
        return Some(k);
    }
    None
}

/// The report's account of how the search for further distinct anomalies ended, after
/// `distinct` were found (`None` when no search ran: `--max 1`).
pub(super) fn search_section(
    end: &SearchEnd,
    distinct: usize,
    max: usize,
) -> Option<SearchSection> {
    let sentence = end.sentence(distinct, max)?;
    let value = serde_json::to_value(end).ok()?;
    Some(SearchSection {
        end: value["end"].as_str().unwrap_or_default().to_string(),
        cut: end.cut(),
        budget_seconds: value["seconds"].as_f64(),
        reason: value["reason"].as_str().map(str::to_string),
        sentence,
    })
}

/// A divergence in the report's terms: the transaction by its name (`T3.2`), the key by its
/// meaning.
pub(super) fn divergence_text(
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
        out.push_str(&format!(
            " of {}",
            keys.describe(k)
                .map_or_else(|| k.to_string(), super::explain::key_words)
        ));
    }
    let mut why = why.to_string();
    if let crate::store::DivergenceReason::OtherKey { expected: Some(e) } = &d.reason {
        if let Some(m) = keys.describe(e) {
            why = why.replace(e.as_str(), &super::explain::key_words(m));
        }
    }
    out + &why
}

/// The anomaly of `p` named by the one classifier ([`super::anomaly_name`]) on its minimal
/// core, transactions by their report names, keys by their meaning.
pub(super) fn name_prediction(
    explainer: &Explainer<'_>,
    p: &Prediction,
    level: Level,
) -> AnomalyName {
    super::anomaly_name::name_prediction(
        p,
        level,
        &|t| explainer.label(t),
        &|t| explainer.call(t),
        &|name| {
            format!(
                "`{}`",
                explainer.key_meaning(name).as_deref().unwrap_or(name)
            )
        },
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(anomaly: &str, broken: &[&str]) -> DistinctAnomalyLine {
        DistinctAnomalyLine {
            name: "lost update".to_string(),
            anomaly_names: None,
            anomaly: anomaly.to_string(),
            procedures: vec![],
            columns: vec![],
            calls: vec![],
            changed_reads: 1,
            validation: "validated".to_string(),
            broken_invariants: broken.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn an_anomaly_that_broke_invariants_leads_when_the_first_did_not() {
        // `run tpcc` (seed 1, causal): the first prediction, a lost update on a counter, broke
        // nothing; the third distinct anomaly broke A1 and A8. It is detailed, and listed first.
        let mut lines = vec![
            line("NewOrder × NewOrder on STOCK.S_REMOTE_CNT", &[]),
            line("NewOrder × NewOrder on ORDER_LINE (insert counter)", &[]),
            line("Payment × Payment on WAREHOUSE.W_YTD", &["A1", "A8"]),
        ];
        assert_eq!(invariant_breaker_to_front(&mut lines), Some(2));
        let order: Vec<&str> = lines.iter().map(|l| l.anomaly.as_str()).collect();
        assert_eq!(
            order,
            [
                "Payment × Payment on WAREHOUSE.W_YTD",
                "NewOrder × NewOrder on STOCK.S_REMOTE_CNT",
                "NewOrder × NewOrder on ORDER_LINE (insert counter)"
            ]
        );
        // The first broke one itself, or none did: nothing moves.
        for broken in [[&["A1"][..], &["A2"][..]], [&[][..], &[][..]]] {
            let mut lines = vec![line("a", broken[0]), line("b", broken[1])];
            assert_eq!(invariant_breaker_to_front(&mut lines), None);
            assert_eq!(lines[0].anomaly, "a");
        }
    }
}
