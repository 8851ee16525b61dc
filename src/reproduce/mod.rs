//! Reproducing a prediction on a real database (issue 21; docs/recording.md, "Reproducing on
//! your database"):
//!
//! 1. [`schedule()`]: the predicted history's statements in one order that makes the database
//!    at a given isolation level give every read its predicted writer — or why none exists,
//!    in terms of the transactions;
//! 2. [`execute`]: that order run with the workload's own code, one connection per session,
//!    each statement waiting for its turn (the store's [`crate::store::StatementGate`], so any
//!    backend that can gate statements can reproduce), recorded and judged by the one decision
//!    core;
//! 3. [`minimize()`] and [`files`]: the anomaly's transactions alone, as a PostgreSQL
//!    isolationtester spec, one SQL file per session and a README;
//! 4. [`turns`]: the observed run recorded on the database in turns (whole transactions one
//!    at a time, in the embedded store's seeded order), so that `run --reproduce` predicts
//!    from the same run every time.

pub mod app;
mod app_files;
mod app_judge;
mod app_run;
mod app_sql;
pub mod app_upstream;
pub mod execute;
pub mod files;
pub mod minimize;
pub mod plan;
pub mod replan;
pub mod schedule;
pub mod turns;

pub use app::{is_app_folder, load_app_dir, reproduce_app, AppFolder, AppRequest};
pub use app_files::probe_rows_in_output;
pub use execute::{compare_reads, Barriers, ExecuteError, ReadOutcome};
pub use minimize::{minimize, Minimized};
pub use schedule::{schedule, schedule_reads, NoSchedule, Schedule, Step, StepKind};

use std::fmt::Write as _;
use std::time::Duration;

use rustc_hash::FxHashSet;

use crate::history::History;
use crate::store::{Backend, Isolation, KeyDirectory, Table};
use crate::verdict::Outcome;
use crate::workloads::{RunConfig, Workload};

/// What a reproduction concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReproVerdict {
    /// The database produced the prediction: every read got its predicted writer and the
    /// recorded history is unserializable.
    Reproduced,
    /// The schedule ran but the database did something else (a read saw another write, a
    /// serialization failure, a lock wait).
    NotReproduced,
    /// No schedule exists at the isolation level: the database cannot produce the
    /// prediction there.
    NotReproducible,
    /// A search or a check gave up.
    Unknown,
    /// Not reproduced, because nothing new was predicted: the transactions that make the
    /// prediction unserializable read what they read in the observed run, so their anomaly
    /// already happened there (a run on the database).
    AlreadyObserved,
}

impl ReproVerdict {
    /// The process exit code: 1 reproduced (an anomaly shown) or already observed (the
    /// anomaly happened in the observed run), 0 not reproduced or not reproducible, 3 unknown.
    pub fn exit_code(self) -> u8 {
        match self {
            ReproVerdict::Reproduced | ReproVerdict::AlreadyObserved => 1,
            ReproVerdict::NotReproduced | ReproVerdict::NotReproducible => 0,
            ReproVerdict::Unknown => 3,
        }
    }
}

/// The outcome of reproducing one prediction.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Reproduction {
    /// The verdict.
    pub verdict: ReproVerdict,
    /// One paragraph saying it.
    pub summary: String,
    /// The isolation level.
    pub isolation: Isolation,
    /// The database, e.g. `PostgreSQL 15.18 at 127.0.0.1:5432/postgres`.
    pub database: Option<String>,
    /// The schedule as text (per session, statements and waits).
    pub schedule: Option<String>,
    /// Why no schedule exists.
    pub no_schedule: Option<String>,
    /// The anomaly's name, the engineer's name from the one table
    /// ([`crate::history::anomalies`]), as `run` names it: e.g. `lost update`,
    /// `read-only transaction anomaly`.
    pub anomaly: Option<String>,
    /// What happens in it, in terms of the transactions and keys.
    pub anomaly_description: Option<String>,
    /// The name `run` gave the whole prediction, when it differs from [`Self::anomaly`]: the
    /// reproducer keeps only the transactions the anomaly needs, and that smaller history can
    /// be another anomaly (a whole prediction named a non-repeatable read can hold a lost
    /// update).
    pub run_anomaly: Option<String>,
    /// The reads the anomaly needs (its transactions' reads of its keys) and what they got.
    pub anomaly_reads: Vec<ReadOutcome>,
    /// Reads the anomaly needs that the database gave another writer.
    pub differing_reads: Vec<ReadOutcome>,
    /// Reads the anomaly needs, compared.
    pub reads_compared: usize,
    /// Why the gated run stopped early, or left its plan.
    pub failure: Option<String>,
    /// Re-plans made (a free read sent the code down another path), in words.
    pub replans: Vec<String>,
    /// Invariants the recorded run broke, in words.
    pub broken_invariants: Vec<String>,
    /// The anomaly's transactions (labels of the predicted history).
    pub transactions: Vec<String>,
    /// The reproducer spec's read steps and the `written_by` each must print.
    pub spec_reads: Vec<(String, String)>,
    /// An application's reproducer (`reproduce/app.rs`): per probe row, the step, the key and
    /// the `written_by` it must print.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spec_probes: Vec<(String, String, String)>,
    /// For a run recorded on the embedded store: the observed run recorded again before the
    /// reproduction — on the embedded store with the run's configuration (its scan mode
    /// included), then on the database in turns — each in one sentence saying whether it
    /// was the same as observed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_again: Vec<String>,
    /// The reproducer files (name, contents); empty when none could be made.
    #[serde(skip)]
    pub files: Vec<(String, String)>,
}

/// What to reproduce, where.
pub struct Request<'a> {
    /// The workload whose run was predicted.
    pub workload: &'a dyn Workload,
    /// Its run configuration (seed, size, sessions) — the observed run's.
    pub config: RunConfig,
    /// The predicted history (store or application key names).
    pub predicted: &'a History,
    /// The observed run it was predicted from (same key names): its aborted attempts run
    /// again, in their places ([`plan::plan_history`]).
    pub observed: &'a History,
    /// The database backend, at `isolation`.
    pub backend: &'a dyn Backend,
    /// The backend's isolation level.
    pub isolation: Isolation,
    /// Budget of each check.
    pub timeout: Option<Duration>,
    /// Where the prediction came from, for the README (`smallbank-full, seed 1, large`).
    pub origin: String,
    /// Whether `observed` was recorded on the embedded store, which keeps no trace of a
    /// rolled-back transaction: the workload's code runs those again, so the run is recorded
    /// again on the database in turns ([`turns`]), with them, and checked to be the same.
    pub observed_on_embedded: bool,
    /// The name `run` gave the prediction (its report's first anomaly), if known: the report
    /// says so when the reproduced part of it is named otherwise.
    pub run_anomaly: Option<String>,
}

/// Reproduces `request.predicted` on the database (see the module documentation): the
/// observed run recorded again when it came from the embedded store, the prediction planned
/// over it, the anomaly's transactions chosen, the run steered along a schedule, judged, and
/// the reproducer files written. Each step that ends the reproduction early leaves its verdict
/// and summary in the result.
pub fn reproduce(request: &Request<'_>) -> Result<Reproduction, ExecuteError> {
    let mut out = Reproduction::empty(request.isolation, ReproVerdict::Unknown, String::new());
    let rerecorded;
    let observed = if request.observed_on_embedded {
        match record_observed_again(request, &mut out) {
            Some(h) => {
                rerecorded = h;
                &rerecorded
            }
            None => return Ok(out),
        }
    } else {
        request.observed
    };
    let predicted = match plan::plan_history(observed, request.predicted) {
        Ok(p) => p,
        Err(e) => {
            out.verdict = ReproVerdict::Unknown;
            out.summary = format!("The prediction does not fit the observed run: {e}.");
            return Ok(out);
        }
    };
    let Some(core) = anomaly_core(&predicted, observed, request.isolation, &mut out) else {
        return Ok(out);
    };
    let Some(steered) = run_steered(request, &predicted, &core, &mut out)? else {
        return Ok(out);
    };
    judge_run(request, &predicted, core, steered, &mut out);
    Ok(out)
}

/// Step 1, for a run recorded on the embedded store (which keeps no trace of rolled-back
/// transactions): the observed run recorded again, first on the embedded store with the run's
/// configuration, then on the database in turns, each checked to be the same as observed.
/// `None` (with the verdict and summary in `out`) when either differs or fails.
fn record_observed_again(request: &Request<'_>, out: &mut Reproduction) -> Option<History> {
    let scans = format!("{} scans", request.config.scan);
    // First on the embedded store, where it was recorded: a difference there is the run
    // folder's configuration (e.g. its scan mode), not the database.
    if let Err(d) = turns::same_on_embedded(request.workload, &request.config, request.observed) {
        out.verdict = ReproVerdict::Unknown;
        out.observed_again.push(format!(
            "On the embedded store with {scans}: it differs from the observed run: {d}."
        ));
        out.summary = format!(
            "The observed run cannot be recorded again: on the embedded store, with the \
             run's configuration ({scans}), it differs from the observed run: {d} (was it \
             recorded with another --scan, or another version of isopredict?)."
        );
        return None;
    }
    out.observed_again.push(format!(
        "On the embedded store with {scans}: same as observed."
    ));
    let again = turns::record_in_turns(request.workload, &request.config, request.backend)
        .and_then(
            |h| match turns::committed_difference(request.observed, &h) {
                None => Ok(h),
                Some(d) => Err(format!("it differs from the observed run: {d}")),
            },
        );
    let why = match again {
        Ok(h) => {
            out.observed_again.push(format!(
                "On the database in turns with {scans}: same as observed ({} committed \
                 transactions).",
                h.committed_txns().count().saturating_sub(1)
            ));
            return Some(h);
        }
        Err(why) => why,
    };
    out.verdict = ReproVerdict::Unknown;
    out.observed_again
        .push(format!("On the database in turns with {scans}: {why}."));
    out.summary = if server_went_away(&why) {
        server_gone_summary(
            &why,
            "recording the observed run again on the database in turns",
        )
    } else {
        format!(
            "The observed run was recorded on the embedded store, which keeps no trace \
             of rolled-back transactions; recording it again on the database in turns \
             with {scans} (to run those too) failed: {why}."
        )
    };
    None
}

/// `out` says that no schedule exists at `isolation` (or the search gave up): `what` could
/// not run so.
fn say_no_schedule(out: &mut Reproduction, isolation: Isolation, no: NoSchedule, what: &str) {
    out.verdict = if no.gave_up {
        ReproVerdict::Unknown
    } else {
        ReproVerdict::NotReproducible
    };
    out.summary = format!(
        "Not reproducible at {}: {what} — {}.",
        isolation.sql(),
        no.reason
    );
    out.no_schedule = Some(no.reason);
}

/// Step 2: the anomaly's transactions, with their schedule alone (the reproducer files).
/// Preferring the predicted anomaly: a set of transactions that reads as observed shows an
/// anomaly the observed run already had. `None` (with the verdict and summary in `out`) when
/// there is nothing to reproduce, the anomaly was already observed, or its transactions have
/// no schedule.
fn anomaly_core(
    predicted: &History,
    observed: &History,
    isolation: Isolation,
    out: &mut Reproduction,
) -> Option<Minimized> {
    let mut runnable = |m: &Minimized| -> bool {
        !already_observed(m, predicted, observed)
            && schedule(&m.history, isolation).is_ok()
            && schedule_reads(predicted, isolation, &m.needed_reads(predicted)).is_ok()
    };
    let Some(core) = minimize::minimize_runnable(predicted, &mut runnable) else {
        out.verdict = ReproVerdict::Unknown;
        out.summary = "Nothing to reproduce: the decision core does not find the predicted history unserializable (or cannot decide).".to_string();
        return None;
    };
    out.transactions = core.origin[1..]
        .iter()
        .map(|&t| predicted.txn_label(t))
        .collect();
    if already_observed(&core, predicted, observed) {
        out.verdict = ReproVerdict::AlreadyObserved;
        out.anomaly = name_core(&core, predicted, isolation, &[]).map(|(name, _)| name);
        out.summary = format!(
            "Already observed, so not reproduced: the transactions that make the prediction \
             unserializable ({}) read what they read in the observed run, so their anomaly{} \
             already happened there — the prediction shows nothing the database did not already \
             do (`isopredict check` on the observed history at ser shows it).",
            out.transactions.join(", "),
            out.anomaly
                .as_deref()
                .map_or_else(String::new, |a| format!(" ({a})"))
        );
        return None;
    }
    match core.with_schedule(isolation, predicted) {
        Ok(c) => Some(c),
        Err(no) => {
            let what = format!(
                "the anomaly's transactions ({}) cannot run so that each of their reads sees its predicted writer",
                out.transactions.join(", ")
            );
            say_no_schedule(out, isolation, no, &what);
            None
        }
    }
}

/// The whole run steered along a schedule ([`run_steered`]).
struct Steered {
    schedule: Schedule,
    exec: execute::Execution,
    keys: KeyDirectory,
    /// The reads compared: the anomaly's, and those re-planning steered.
    needed: FxHashSet<crate::history::OpId>,
    replans: Vec<String>,
    /// Why the run left its plan where re-planning could not steer it.
    unfollowed: Option<String>,
}

/// Step 3: the whole run, with the anomaly's reads steered; re-planned when a free read sends
/// the workload's code down another path ([`replan`]). `None` (with the verdict and summary
/// in `out`) when no schedule gives the reads their writers.
fn run_steered(
    request: &Request<'_>,
    predicted: &History,
    core: &Minimized,
    out: &mut Reproduction,
) -> Result<Option<Steered>, ExecuteError> {
    let isolation = request.isolation;
    let mut needed = core.needed_reads(predicted);
    let mut replans: Vec<String> = Vec::new();
    loop {
        let schedule = match schedule_reads(predicted, isolation, &needed) {
            Ok(s) => s,
            Err(no) if replans.is_empty() => {
                say_no_schedule(
                    out,
                    isolation,
                    no,
                    "the workload's sessions cannot run so that the anomaly's reads see their predicted writers",
                );
                return Ok(None);
            }
            Err(no) => {
                out.verdict = ReproVerdict::NotReproduced;
                out.summary = format!(
                    "Not reproduced at {}: {}; re-planning would need those reads to see their \
                     planned writers too, and no schedule gives them: {}.",
                    isolation.sql(),
                    replans.join("; then "),
                    no.reason
                );
                out.no_schedule = Some(no.reason);
                return Ok(None);
            }
        };
        let exec = execute::execute(
            request.workload,
            &request.config,
            request.backend,
            predicted,
            &schedule,
            isolation.promised_level(),
            request.timeout,
        )?;
        let keys = KeyDirectory::new(
            &request.workload.tables(),
            &exec.run.history,
            &mut exec.run.store.snapshot(),
        );
        let named = keys.rename(predicted);
        let recorded = keys.rename(&exec.run.history);
        let mut steered = Steered {
            schedule,
            exec,
            keys,
            needed: FxHashSet::default(),
            replans: Vec::new(),
            unfollowed: None,
        };
        let Some(change) = replan::path_change(&named, &recorded, &needed, steered.exec.diverged)
        else {
            steered.needed = needed;
            steered.replans = replans;
            return Ok(Some(steered));
        };
        if change.reads.is_empty() || replans.len() >= replan::MAX_REPLANS {
            steered.unfollowed = Some(if change.reads.is_empty() {
                format!(
                    "{}, although every read before it saw its planned writer (a writer \
                     computed another value than in the plan), so re-planning cannot steer it",
                    change.what
                )
            } else {
                format!("{} (after {} re-plans)", change.what, replans.len())
            });
            steered.needed = needed;
            steered.replans = replans;
            return Ok(Some(steered));
        }
        let texts: Vec<&str> = change.reads.iter().map(|(_, t)| t.as_str()).collect();
        replans.push(format!("{} because {}", change.what, texts.join(" and ")));
        needed.extend(change.reads.iter().map(|&(o, _)| o));
    }
}

/// Step 4: the steered run judged — every read the anomaly needs compared with its predicted
/// writer, the recorded history's serializability, the anomaly named — the verdict and summary,
/// and the reproducer files.
fn judge_run(
    request: &Request<'_>,
    predicted: &History,
    core: Minimized,
    steered: Steered,
    out: &mut Reproduction,
) {
    let isolation = request.isolation;
    let Steered {
        schedule,
        exec,
        keys,
        needed,
        replans,
        unfollowed,
    } = steered;
    let run = &exec.run;
    let named = keys.rename(predicted);
    // The reproducer speaks the application's terms too.
    let core = Minimized {
        history: keys.rename(&core.history),
        ..core
    };
    out.replans = replans;
    out.schedule = Some(schedule.to_text(&named));
    out.database = run.database.as_ref().map(|d| d.database.clone());
    let recorded = keys.rename(&run.history);
    let reads = compare_reads(&named, &recorded, Some(&needed));
    out.reads_compared = reads.len();
    out.differing_reads = reads.iter().filter(|r| !r.matches()).cloned().collect();
    out.anomaly_reads = reads;
    out.failure = exec.failure.clone();
    // The calls of the recorded run, by transaction label (the plan's labels name the same
    // places).
    let calls: Vec<(String, String)> = run
        .txn_calls
        .iter()
        .enumerate()
        .filter_map(|(t, c)| {
            let c = c.as_ref()?;
            Some((run.history.txn_label(t as u32), c.describe()))
        })
        .collect();
    let named_anomaly = name_core(&core, &named, isolation, &calls);
    out.anomaly = named_anomaly
        .as_ref()
        .map(|(name, _)| name.clone())
        .or_else(|| exec.anomaly.as_deref().map(engineers_name));
    out.anomaly_description = named_anomaly.map(|(_, d)| d);
    out.run_anomaly = request
        .run_anomaly
        .clone()
        .filter(|run| out.anomaly.as_ref().is_some_and(|core| core != run));
    out.broken_invariants = run
        .invariants
        .iter()
        .filter(|i| !i.holds)
        .map(|i| format!("{} {}: {}", i.id, i.description, i.detail))
        .collect();
    let version = out
        .database
        .as_deref()
        .map(|d| d.split(" at ").next().unwrap_or(d).to_string())
        .unwrap_or_else(|| "the database".to_string());
    if let Some(u) = &unfollowed {
        out.failure = Some(match out.failure.take() {
            Some(f) => format!("{f}; {u}"),
            None => format!("the run left its plan: {u}"),
        });
    }
    let reproduced = out.failure.is_none()
        && out.differing_reads.is_empty()
        && exec.serializable == Outcome::Violated;
    out.verdict = verdict_of(out, reproduced, exec.serializable);
    out.summary = summary_of(out, &version, exec.serializable);
    let ctx = files::Context {
        origin: request.origin.clone(),
        anomaly: out.anomaly.clone(),
        anomaly_description: out.anomaly_description.clone(),
        calls,
        broken_invariants: out.broken_invariants.clone(),
        reproduced_on: reproduced.then(|| format!("{version} at {}", isolation.sql())),
    };
    out.spec_reads = files::spec_steps(&core, &named)
        .into_iter()
        .filter_map(|s| Some((s.name, s.expect?)))
        .collect();
    out.files.push((
        "reproducer.spec".to_string(),
        files::spec(&core, &named, &ctx),
    ));
    out.files.extend(files::session_files(&core, &named));
    out.files
        .push(("README.md".to_string(), files::readme(&core, &named, &ctx)));
}

/// The verdict of a steered run: reproduced, unknown when the server went away or
/// serializability is undecided with every read as planned, else not reproduced.
fn verdict_of(out: &Reproduction, reproduced: bool, serializable: Outcome) -> ReproVerdict {
    let server_gone = out.failure.as_deref().is_some_and(server_went_away);
    if reproduced {
        ReproVerdict::Reproduced
    } else if server_gone
        || (out.failure.is_none()
            && out.differing_reads.is_empty()
            && serializable == Outcome::Unknown)
    {
        ReproVerdict::Unknown
    } else {
        ReproVerdict::NotReproduced
    }
}

/// The summary of a steered run with its verdict set, on the database `version`.
fn summary_of(out: &Reproduction, version: &str, serializable: Outcome) -> String {
    let isolation = out.isolation;
    match out.verdict {
        ReproVerdict::Reproduced => format!(
            "Reproduced on {version} at {}: {} — all {} reads the anomaly needs got their predicted writers, and the recorded history is unserializable{}.",
            isolation.sql(),
            out.anomaly.as_deref().unwrap_or("an unserializable execution"),
            out.reads_compared,
            if out.broken_invariants.is_empty() {
                String::new()
            } else {
                format!("; broken: {}", out.broken_invariants.join("; "))
            }
        ) + &renamed(out) + &replanned(&out.replans),
        ReproVerdict::NotReproduced => {
            let mut why = Vec::new();
            if let Some(f) = &out.failure {
                why.push(f.clone());
            }
            if !out.differing_reads.is_empty() {
                why.push(format!(
                    "{} of the {} reads the anomaly needs saw another write (first: {} read {} from {} instead of {})",
                    out.differing_reads.len(),
                    out.reads_compared,
                    out.differing_reads[0].txn,
                    out.differing_reads[0].key,
                    out.differing_reads[0].got.as_deref().unwrap_or("nothing (it did not run)"),
                    out.differing_reads[0].predicted
                ));
            }
            if why.is_empty() && serializable == Outcome::Consistent {
                why.push("the recorded history is serializable".to_string());
            }
            format!(
                "Not reproduced on {version} at {}: {}.",
                isolation.sql(),
                why.join("; ")
            ) + &renamed(out) + &replanned(&out.replans)
        }
        _ => match out.failure.as_deref().filter(|f| server_went_away(f)) {
            Some(f) => server_gone_summary(f, "running the schedule"),
            None => format!(
                "Unknown: every predicted read got its writer on {version} at {}, but whether the recorded history is serializable is undecided.",
                isolation.sql()
            ),
        },
    }
}

/// Whether every read `m` needs (of the plan `predicted`) has in the observed run the writer
/// the prediction gives it: the anomaly of `m`'s transactions is then the observed run's own.
fn already_observed(m: &Minimized, predicted: &History, observed: &History) -> bool {
    let reads = compare_reads(predicted, observed, Some(&m.needed_reads(predicted)));
    !reads.is_empty() && reads.iter().all(ReadOutcome::matches)
}

/// Whether a run's failure is the server going away (a lost connection, re-opened or not;
/// [`crate::store::postgres::SERVER_WENT_AWAY`], [`crate::store::postgres::CONNECTION_LOST`]),
/// which is not the run's doing.
fn server_went_away(failure: &str) -> bool {
    failure.contains(crate::store::postgres::SERVER_WENT_AWAY)
        || failure.contains(crate::store::postgres::CONNECTION_LOST)
}

/// The summary of an attempt the server's going away ended, while `doing`.
fn server_gone_summary(failure: &str, doing: &str) -> String {
    format!(
        "Unknown: the server went away (or dropped the connection) while {doing} ({failure}). \
         Nothing was learned about \
         the prediction — the schedule is not to blame; run `isopredict reproduce` again once \
         the server is back."
    )
}

/// The anomaly of `core` (its history in the application's key names) at what `isolation`
/// promises, named as `run` names predictions ([`crate::pipeline::name_anomaly`]): the
/// engineer's name and what happens, with transactions as `plan` labels them and their
/// calls. `None` when the level has nothing weaker to name (serializable).
fn name_core(
    core: &Minimized,
    plan: &History,
    isolation: Isolation,
    calls: &[(String, String)],
) -> Option<(String, String)> {
    if isolation == Isolation::Serializable {
        return None;
    }
    let label = |t: crate::history::TxnId| plan.txn_label(core.origin[t as usize]);
    let call = |t: crate::history::TxnId| {
        let l = label(t);
        calls.iter().find(|(c, _)| *c == l).map(|(_, c)| c.clone())
    };
    let h = &core.history;
    let named = crate::pipeline::name_anomaly(h, isolation.promised_level(), &label, &call, &|k| {
        h.key_name(k).to_string()
    });
    Some((named.id.name().to_string(), named.description))
}

/// ` The run named the whole prediction …` when the reproduced part is another anomaly than
/// the one `run` named (empty otherwise).
fn renamed(out: &Reproduction) -> String {
    match (&out.run_anomaly, &out.anomaly) {
        (Some(run), Some(core)) => format!(
            " (The run named the whole prediction \"{run}\"; the {} transactions the \
             reproducer keeps, those that make it unserializable, show \"{core}\".)",
            out.transactions.len()
        ),
        _ => String::new(),
    }
}

/// ` Re-planned N times: …` (empty without re-plans).
fn replanned(replans: &[String]) -> String {
    match replans.len() {
        0 => String::new(),
        n => format!(
            " Re-planned {n} time{}: {}; those reads were then scheduled to see their planned writers.",
            if n == 1 { "" } else { "s" },
            replans.join("; then ")
        ),
    }
}

/// The engineer's name of an anomaly the decision core names by a pattern (e.g. Plume's
/// `FracturedReadCO` → `fractured read (causal)`); the name itself when the table does not
/// know it.
fn engineers_name(pattern: &str) -> String {
    crate::history::anomalies::by_name(pattern)
        .map_or_else(|| pattern.to_string(), |row| row.name.to_string())
}

/// What a `run` output folder says about a prediction: enough to run it again.
pub struct RunFolder {
    /// The observed history (`observed.json`).
    pub observed: History,
    /// The workload.
    pub workload: &'static dyn Workload,
    /// The observed run's configuration (seed, size, sessions, scan mode).
    pub config: RunConfig,
    /// The predicted history (`predicted.json`).
    pub predicted: History,
    /// The isolation level the observed run was recorded at, when on a database.
    pub isolation: Option<Isolation>,
    /// [`origin_line`]: `smallbank-full, seed 1, large, 3 sessions, keyed scans, predicted at
    /// snapshot isolation`.
    pub origin: String,
    /// The name the run gave its (first) prediction: `report.json`'s first anomaly.
    pub anomaly: Option<String>,
    /// Whether `report.json` says how the run scanned tables (`"scan"`); a report written
    /// before the mode was recorded does not, and the run is taken to have scanned keyed
    /// (the default then as now).
    pub scan_recorded: bool,
}

/// Reads a `run` output folder (`report.json` and `predicted.json`); errors name the file and
/// the problem.
pub fn load_run_dir(dir: &std::path::Path) -> Result<RunFolder, String> {
    // A FIFO, a device or a folder in place of a file would block open() or read forever
    // (where a signal does not stop it): only regular files are read.
    for name in ["report.json", "predicted.json", "observed.json"] {
        let path = dir.join(name);
        if let Ok(m) = std::fs::metadata(&path) {
            if !m.is_file() {
                return Err(format!(
                    "{}: not a regular file (a run folder's {name} is one)",
                    path.display()
                ));
            }
        }
    }
    let report_path = dir.join("report.json");
    let text = std::fs::read_to_string(&report_path)
        .map_err(|e| format!("{}: {e}", report_path.display()))?;
    let report: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not JSON: {e}", report_path.display()))?;
    let field = |name: &str| -> Result<&serde_json::Value, String> {
        report.get(name).ok_or_else(|| {
            format!(
                "{}: no field {name:?} (not a run's report)",
                report_path.display()
            )
        })
    };
    let name = field("workload")?.as_str().unwrap_or_default();
    let workload = crate::workloads::by_name(name)
        .ok_or_else(|| format!("{}: unknown workload {name:?}", report_path.display()))?;
    let seed = field("seed")?
        .as_u64()
        .ok_or_else(|| format!("{}: \"seed\" is not a number", report_path.display()))?;
    let size_name = field("size")?.as_str().unwrap_or_default();
    let size: crate::workloads::Size = size_name
        .parse()
        .map_err(|e| format!("{}: {e}", report_path.display()))?;
    let sessions = field("sessions")?.as_array().map_or(0, Vec::len).max(1);
    let level = report.get("level").and_then(|l| l.as_str()).unwrap_or("?");
    let level = crate::pipeline::parse_level(level).map_or(level, |l| l.full_name());
    let isolation = report
        .get("database")
        .and_then(|d| d.get("isolation"))
        .and_then(|i| i.as_str())
        .and_then(|i| i.parse().ok());
    let scan = match report.get("scan") {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => Some(
            v.as_str()
                .and_then(|m| m.parse::<crate::store::ScanMode>().ok())
                .ok_or_else(|| {
                    format!(
                        "{}: \"scan\" is {v}, not \"keyed\" or \"full\"",
                        report_path.display()
                    )
                })?,
        ),
    };
    let predicted_path = dir.join("predicted.json");
    if !predicted_path.exists() {
        return Err(format!(
            "{}: no prediction in this run folder (its run predicted nothing)",
            predicted_path.display()
        ));
    }
    let predicted = crate::formats::read_file(&predicted_path, None).map_err(|e| e.to_string())?;
    let observed =
        crate::formats::read_file(&dir.join("observed.json"), None).map_err(|e| e.to_string())?;
    check_against_histories(
        &report_path,
        workload,
        sessions,
        size,
        &observed,
        &predicted,
    )?;
    let anomaly = report
        .get("anomalies")
        .and_then(|a| a.get(0))
        .and_then(|a| a.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_string);
    let config = RunConfig {
        terminals: sessions,
        scan: scan.unwrap_or_default(),
        ..RunConfig::paper(seed, size)
    };
    Ok(RunFolder {
        anomaly,
        workload,
        origin: origin_line(name, &config, level),
        config,
        scan_recorded: scan.is_some(),
        predicted,
        observed,
        isolation,
    })
}

/// The table a store key names: `T.column[row]`, `row T[row] exists`, `T.<metadata>`.
fn table_of(key: &str) -> &str {
    let key = key.strip_prefix("row ").unwrap_or(key);
    key.split(['.', '[']).next().unwrap_or(key)
}

/// Checks report.json's claims against the run's own histories before anything runs on the
/// database: a report edited or swapped must not open thousands of connections, or run one
/// workload's code against another's prediction. The run size is one `run` accepts, the
/// session count is the observed history's, and the workload is the one that recorded it
/// (its sessions' ids, `first_session + t`, and the tables its keys name).
fn check_against_histories(
    report: &std::path::Path,
    workload: &'static dyn Workload,
    sessions: usize,
    size: crate::workloads::Size,
    observed: &History,
    predicted: &History,
) -> Result<(), String> {
    let r = report.display();
    crate::workloads::check_run_size(sessions, size.calls_per_terminal())
        .map_err(|e| format!("{r}: {e}"))?;
    let observed_sessions = observed.sessions().len();
    if observed_sessions != sessions {
        return Err(format!(
            "{r} says {sessions} sessions, observed.json has {observed_sessions}: the report does not describe this run"
        ));
    }
    if predicted.sessions().len() > sessions {
        return Err(format!(
            "{r} says {sessions} sessions, predicted.json has {}: the prediction is not of this run",
            predicted.sessions().len()
        ));
    }
    let name = workload.name();
    let first = workload.first_session();
    for (t, s) in observed.sessions().iter().enumerate() {
        if let Some(id) = s.external_id {
            if id != first + t as u64 {
                return Err(format!(
                    "{r} says workload {name}, whose session {} has id {}, but observed.json's has id {id}: the observed run is of another workload",
                    t + 1,
                    first + t as u64
                ));
            }
        }
    }
    let tables: Vec<Table> = workload.tables();
    if !tables.is_empty() {
        if let Some(key) = observed
            .key_names()
            .iter()
            .find(|k| !tables.iter().any(|t| t.name() == table_of(k)))
        {
            return Err(format!(
                "{r} says workload {name}, but observed.json's key {key:?} is of table {:?}, which {name} does not have: the observed run is of another workload",
                table_of(key)
            ));
        }
    }
    Ok(())
}

/// The run a reproduction comes from, in one line (the reproducer README's origin): workload,
/// seed, size, sessions, scan mode and the level it was predicted at.
pub fn origin_line(workload: &str, config: &RunConfig, level: &str) -> String {
    format!(
        "{workload}, seed {}, {}, {} sessions, {} scans, predicted at {level}",
        config.seed,
        config.size.name(),
        config.terminals,
        config.scan
    )
}

/// The names a reproducer folder may hold (so a later reproduction can replace it).
pub fn folder_names() -> Vec<String> {
    let mut names: Vec<String> = ["README.md", "reproducer.spec", "report.md", "report.json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    names.extend((1..=256).map(|s| format!("session-s{s}.sql")));
    names
}

/// Writes `r`'s files, `report.md` and `report.json` into `dir` atomically.
pub fn write_folder(r: &Reproduction, dir: &std::path::Path) -> anyhow::Result<()> {
    let report_json = serde_json::to_string_pretty(r)? + "\n";
    let report_md = r.to_markdown();
    let mut files: Vec<(&str, &[u8])> = r
        .files
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_bytes()))
        .collect();
    files.push(("report.md", report_md.as_bytes()));
    files.push(("report.json", report_json.as_bytes()));
    let names = folder_names();
    let ours: Vec<&str> = names.iter().map(String::as_str).collect();
    crate::output::write_folder_atomically(dir, &files, &ours)?;
    Ok(())
}

impl Reproduction {
    /// A reproduction at `isolation` with `verdict` and `summary` and nothing else yet: the
    /// start of every path (workloads and applications).
    pub(crate) fn empty(
        isolation: Isolation,
        verdict: ReproVerdict,
        summary: String,
    ) -> Reproduction {
        Reproduction {
            verdict,
            summary,
            isolation,
            database: None,
            schedule: None,
            no_schedule: None,
            anomaly: None,
            anomaly_description: None,
            run_anomaly: None,
            anomaly_reads: Vec::new(),
            differing_reads: Vec::new(),
            reads_compared: 0,
            failure: None,
            replans: Vec::new(),
            broken_invariants: Vec::new(),
            transactions: Vec::new(),
            spec_reads: Vec::new(),
            spec_probes: Vec::new(),
            observed_again: Vec::new(),
            files: Vec::new(),
        }
    }

    /// The report in Markdown.
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "# isopredict reproduce at {}\n\n**{}**\n\n",
            self.isolation.sql(),
            self.summary
        );
        if let Some(db) = &self.database {
            let _ = writeln!(out, "Database: {db}.\n");
        }
        if !self.observed_again.is_empty() {
            let _ = writeln!(out, "## The observed run, recorded again\n");
            for line in &self.observed_again {
                let _ = writeln!(out, "- {line}");
            }
            out.push('\n');
        }
        if let (Some(name), Some(what)) = (&self.anomaly, &self.anomaly_description) {
            let _ = writeln!(
                out,
                "## The anomaly\n\n{}: {what}.\n",
                crate::history::anomalies::markdown_label_of(name)
            );
        }
        if !self.transactions.is_empty() {
            let _ = writeln!(
                out,
                "## The anomaly's transactions\n\n{}\n",
                self.transactions.join(", ")
            );
        }
        if !self.anomaly_reads.is_empty() {
            let _ = writeln!(out, "## The anomaly's reads\n");
            for r in &self.anomaly_reads {
                let _ = writeln!(
                    out,
                    "- {} read {}: predicted {}, the database gave {}{}",
                    r.txn,
                    r.key,
                    r.predicted,
                    r.got.as_deref().unwrap_or("nothing (it did not run)"),
                    if r.matches() { "" } else { " — DIFFERENT" }
                );
            }
            out.push('\n');
        }
        if !self.differing_reads.is_empty() {
            let _ = writeln!(
                out,
                "## Reads that differed ({} of {})\n",
                self.differing_reads.len(),
                self.reads_compared
            );
            for r in self.differing_reads.iter().take(20) {
                let _ = writeln!(
                    out,
                    "- {} read {}: predicted {}, got {}",
                    r.txn,
                    r.key,
                    r.predicted,
                    r.got.as_deref().unwrap_or("nothing (it did not run)")
                );
            }
            out.push('\n');
        }
        if !self.broken_invariants.is_empty() {
            let _ = writeln!(out, "## Broken invariants\n");
            for i in &self.broken_invariants {
                let _ = writeln!(out, "- {i}");
            }
            out.push('\n');
        }
        if let Some(s) = &self.schedule {
            let _ = writeln!(out, "## Schedule\n\n```\n{}```\n", s);
        }
        if !self.files.is_empty() {
            let _ = writeln!(out, "## Reproducer files\n");
            for (name, _) in &self.files {
                let _ = writeln!(out, "- {name}");
            }
        }
        out
    }
}

#[cfg(test)]
mod origin_tests {
    use super::*;
    use crate::store::ScanMode;

    #[test]
    fn the_origin_line_names_the_scan_mode() {
        let config = RunConfig {
            terminals: 4,
            scan: ScanMode::Full,
            ..RunConfig::paper(2, crate::workloads::Size::Large)
        };
        assert_eq!(
            origin_line("smallbank", &config, "read committed"),
            "smallbank, seed 2, large, 4 sessions, full scans, predicted at read committed"
        );
        let keyed = RunConfig {
            scan: ScanMode::Keyed,
            ..config
        };
        assert!(origin_line("tpcc", &keyed, "causal consistency").contains("keyed scans"));
    }
}

#[cfg(test)]
mod verdict_tests {
    use super::*;
    use crate::check::Level;
    use crate::pipeline::{run_workload, RunOptions};
    use crate::store::{Embedded, ReadPolicy};

    /// Issue 35 item 4: a prediction whose unserializable transactions read exactly what they
    /// read in the observed run shows nothing the database did not already do: "already
    /// observed", decided before anything runs (before, the schedule was run and "reproduced"
    /// said of an anomaly the observed run already had).
    #[test]
    fn transactions_that_read_as_observed_are_already_observed_not_reproduced() {
        let smallbank = crate::workloads::by_name("smallbank").unwrap();
        let options = RunOptions {
            seed: 2,
            level: Level::ReadCommitted,
            ..RunOptions::default()
        };
        let run = run_workload(smallbank, &options).unwrap();
        let predicted = run.keys.rename(&run.prediction.unwrap().history);
        // An observed run that already is the predicted execution (as a database's run can
        // be): every read of the prediction is as observed.
        let observed = predicted.clone();
        // A backend that cannot run a schedule: nothing may be run to decide this.
        let backend = Embedded {
            policy: ReadPolicy::Latest,
            schedule: crate::store::Schedule::Seeded(2),
            forced_aborts: Vec::new(),
        };
        let r = reproduce(&Request {
            workload: smallbank,
            config: RunConfig::paper(2, crate::workloads::Size::Small),
            predicted: &predicted,
            observed: &observed,
            backend: &backend,
            isolation: Isolation::ReadCommitted,
            timeout: None,
            origin: "test".to_string(),
            observed_on_embedded: false,
            run_anomaly: None,
        })
        .expect("decided before running anything");
        assert_eq!(r.verdict, ReproVerdict::AlreadyObserved, "{}", r.summary);
        assert_eq!(r.verdict.exit_code(), 1);
        assert!(
            r.summary.starts_with("Already observed, so not reproduced")
                && r.summary.contains("already happened there"),
            "{}",
            r.summary
        );
        assert!(!r.transactions.is_empty());
    }
}
