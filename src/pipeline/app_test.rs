//! `isopredict test -- CMD`: IsoPredict's pipeline (PLDI'24 §4–5) for any application that
//! speaks PostgreSQL, driven by its own test command, as `isopredict run` does for the
//! built-in workloads:
//! 1. `record`: run CMD against the recording server (one transaction at a time: a serial
//!    observed execution) → the observed history with its SQL statements;
//! 2. `check`: the observed history at the level (a violation stops here);
//! 3. `predict`: unserializable executions the level allows (up to `max`, differing in their
//!    anomaly);
//! 4. per prediction, `replay`: CMD run again against the server in replay mode
//!    ([`crate::server::replay`]: reads steered to the predicted writers, transactions in the
//!    prediction's turns), the validating history judged by the decision core
//!    ([`workloads::judge`]), the replay's outcome decided by [`ReplayOutcome::of`] from that
//!    verdict and the divergences: reads that could not follow, turns the application did not
//!    take in time, and statements other than recorded ([`super::app_paths`]).
//!
//! The report ([`super::app_test_report`]) speaks in the application's statements and says
//! first whether the test command failed under a prediction it passed without.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashMap;

use crate::check::Level;
use crate::history::{History, TxnId};
use crate::predict::{predict, Engine, PredictOptions, Prediction, Strategy, Verdict};
use crate::report::run_report::RunVerdict;
use crate::server::client::{client_command, exit_code, run_setup};
use crate::server::replay::ReplaySetup;
use crate::server::{Config, Server, Summary};
use crate::workloads::{self, ReplayOutcome};

use super::anomaly_name::{name_prediction, AnomalyName};
use super::app_paths::{path_divergences, read_divergence_words, statement_shape, statement_words};
use super::judge::{judge, Judged};
use super::level_name;

/// What `isopredict test` runs.
#[derive(Debug, Clone)]
pub struct AppTestOptions {
    /// The test command and its arguments.
    pub command: Vec<String>,
    /// Setup commands run before it, in the recording and before each replay (`sh -c`; their
    /// connections come before every connection of the command: [`crate::server::client::run_setup`]).
    pub setup: Vec<String>,
    /// The level predictions satisfy.
    pub level: Level,
    /// The prediction strategy.
    pub strategy: Strategy,
    /// The most predictions, each with another anomaly, each replayed.
    pub max: usize,
    /// Bounds each check and the prediction (none: no limit).
    pub timeout: Option<Duration>,
    /// How long a replayed transaction waits for its turn before the wait is a divergence.
    pub turn_wait: Duration,
    /// How long a recorded transaction waits for another to end before running concurrently.
    pub lock_wait: Duration,
    /// Environment variables set for the command and the setup commands (`rank --app` sets
    /// `ISOPREDICT_SEED`), in every run.
    pub env: Vec<(String, String)>,
    /// The folder the command and the setup commands run in (`None`: this process's).
    pub dir: Option<PathBuf>,
}

/// One run of the command against the server.
#[derive(Debug)]
pub struct AppRun {
    /// What the server recorded (statements included).
    pub history: History,
    /// The command's exit code (a signal: 128 + its number).
    pub exit: i32,
    /// The recording in numbers.
    pub summary: Summary,
    /// The commit order: (session external id, position among its committed transactions).
    pub commit_positions: Vec<(u64, u32)>,
    /// Keys: the application's name and the store's.
    pub key_names: Vec<(String, String)>,
}

/// One prediction and its replay.
#[derive(Debug)]
pub struct AppReplay {
    /// The prediction.
    pub prediction: Prediction,
    /// Its anomaly, named in the application's transactions.
    pub anomaly: AnomalyName,
    /// The replayed run (its history is the validating execution).
    pub run: AppRun,
    /// The validating execution's verdict (decision core).
    pub verdict: workloads::Verdict,
    /// Where the replay left the prediction, in words (empty: it followed it).
    pub divergences: Vec<String>,
    /// What the replay shows.
    pub outcome: ReplayOutcome,
}

/// The whole test.
#[derive(Debug)]
pub struct AppTestOutcome {
    /// The options.
    pub options: AppTestOptions,
    /// The observed run.
    pub observed: AppRun,
    /// The verdict (exit code as `run`'s).
    pub verdict: RunVerdict,
    /// Why the run stopped before a prediction, or what the predictor said.
    pub note: Option<String>,
    /// The observed history's violation of the level, in words.
    pub observed_violation: Option<String>,
    /// The predictions and their replays.
    pub replays: Vec<AppReplay>,
}

/// Runs the setup commands, then the command, against `server` until it exits, then stops the
/// server; both with `options.env` set and in `options.dir`. A failing setup command is an
/// error (the command is not run).
fn run_against(server: Arc<Server>, options: &AppTestOptions) -> anyhow::Result<i32> {
    let at = server.endpoint()?;
    let stop = Arc::new(AtomicBool::new(false));
    let serving = {
        let (server, stop) = (server.clone(), stop.clone());
        std::thread::spawn(move || server.run(&stop))
    };
    let prelude = shell_prelude(&options.env, options.dir.as_deref());
    let setups: Vec<String> = options
        .setup
        .iter()
        .map(|s| format!("{prelude}{s}"))
        .collect();
    let setup = run_setup(&server, &at, &setups, None, |words| {
        ewriteln!("isopredict test: {words}")
    });
    let command = &options.command;
    // The command's output goes to standard error: standard output carries the report.
    let status = match setup {
        Ok(()) => {
            let mut cmd = client_command(command, &at, None);
            cmd.envs(options.env.iter().map(|(k, v)| (k, v)));
            if let Some(dir) = &options.dir {
                cmd.current_dir(dir);
            }
            cmd.stdout(std::process::Stdio::from(std::io::stderr()))
                .status()
                .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", command[0]))
        }
        Err((words, _)) => Err(anyhow::anyhow!("{words}; not running the test command")),
    };
    stop.store(true, Ordering::SeqCst);
    let served = serving
        .join()
        .map_err(|_| anyhow::anyhow!("the server stopped unexpectedly"))?;
    let status = status?;
    served?;
    Ok(exit_code(status))
}

/// What a setup command (run with `sh -c`) is preceded by so that it runs in `dir` with `env`
/// set, as the command does: `cd '/dir' || exit 1; export K='v'; ` (empty when neither).
fn shell_prelude(env: &[(String, String)], dir: Option<&Path>) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut prelude = String::new();
    if let Some(dir) = dir {
        prelude.push_str(&format!("cd {} || exit 1; ", quote(&dir.to_string_lossy())));
    }
    for (k, v) in env {
        prelude.push_str(&format!("export {k}={}; ", quote(v)));
    }
    prelude
}

fn collect(server: &Server, exit: i32, source: &str) -> anyhow::Result<AppRun> {
    let (history, summary) = server.history(source)?;
    Ok(AppRun {
        history,
        exit,
        summary,
        commit_positions: server.commit_positions(),
        key_names: server.key_names(),
    })
}

/// Stage 1: the observed run (also `rank --app`'s recording).
pub(super) fn record(options: &AppTestOptions) -> anyhow::Result<AppRun> {
    let server = Arc::new(Server::bind(Config {
        lock_wait: options.lock_wait,
        ..Config::default()
    })?);
    let exit = run_against(server.clone(), options)?;
    collect(&server, exit, "observed.json")
}

/// Runs the test (see the module documentation). A stop requested by the user ends it with
/// an error.
pub fn test_application(options: &AppTestOptions) -> anyhow::Result<AppTestOutcome> {
    let observed = record(options)?;
    crate::interrupt::stop_point()?;
    let mut outcome = AppTestOutcome {
        options: options.clone(),
        observed,
        verdict: RunVerdict::NoAnomaly,
        note: None,
        observed_violation: None,
        replays: Vec::new(),
    };
    let level = options.level;
    match judge(&outcome.observed.history, level, options.timeout)? {
        Judged::Violated(why) => {
            outcome.verdict = RunVerdict::ObservedViolation;
            outcome.note = Some(format!(
                "The observed run already violates {}: the recording server misbehaved, or \
                 transactions ran concurrently after waiting too long (see the recording \
                 summary).",
                level_name(level)
            ));
            outcome.observed_violation = Some(why);
            return Ok(outcome);
        }
        Judged::Holds | Judged::Unknown(_) => {}
    }
    let predictions = predict_anomalies(options, &mut outcome)?;
    for p in predictions {
        crate::interrupt::stop_point()?;
        let replay = replay(options, &outcome.observed, p)?;
        outcome.replays.push(replay);
    }
    if !outcome.replays.is_empty() {
        let validated = outcome
            .replays
            .iter()
            .any(|r| r.outcome.counts_as_validated());
        outcome.verdict = if validated {
            RunVerdict::AnomalyValidated
        } else {
            RunVerdict::AnomalyPredicted
        };
    }
    Ok(outcome)
}

/// Stage 3: the predictions (none: `outcome` gets the verdict and the predictor's words).
fn predict_anomalies(
    options: &AppTestOptions,
    outcome: &mut AppTestOutcome,
) -> anyhow::Result<Vec<Prediction>> {
    let h = &outcome.observed.history;
    let mut p = PredictOptions::new(options.level, options.strategy)
        .with_timeout(options.timeout)
        .for_history(h);
    if options.max > 1 {
        p.engine = Engine::Scalable;
        p.max = options.max;
    }
    let predicted = super::fresh_z3(|| predict(h, &p))?;
    match predicted.verdict {
        Verdict::Predicted => {
            let mut all = predicted.predictions;
            if all.is_empty() {
                all.extend(predicted.prediction);
            }
            Ok(all)
        }
        Verdict::NoPrediction => {
            outcome.verdict = RunVerdict::NoAnomaly;
            outcome.note = Some(crate::predict::no_prediction_claim(
                options.level,
                options.strategy,
                "the transactions of this run",
            ));
            Ok(Vec::new())
        }
        Verdict::ObservedViolation | Verdict::ObservedUnserializable => {
            outcome.verdict = RunVerdict::ObservedViolation;
            outcome.note = Some(
                "The observed run is already unserializable or violates the level: no \
                 prediction needed."
                    .into(),
            );
            Ok(Vec::new())
        }
        _ => {
            outcome.verdict = RunVerdict::Unknown;
            outcome.note = Some(format!(
                "Unknown: the predictor gave up ({}).",
                predicted.reason.as_deref().unwrap_or("no reason given")
            ));
            Ok(Vec::new())
        }
    }
}

/// The recorded sessions as the replay matches them: name and external id.
fn recorded_sessions(h: &History) -> Vec<(String, u64)> {
    let Some(table) = h.statements() else {
        return Vec::new();
    };
    table
        .session_names()
        .iter()
        .enumerate()
        .map(|(s, name)| {
            (
                name.clone(),
                h.sessions()[s].external_id.unwrap_or(s as u64),
            )
        })
        .collect()
}

/// Stage 4: the command re-run along prediction `p`, judged (also `rank --app`'s validation).
pub(super) fn replay(
    options: &AppTestOptions,
    observed: &AppRun,
    prediction: Prediction,
) -> anyhow::Result<AppReplay> {
    let level = options.level;
    let preferred = workloads::txns_at_positions(&prediction.history, &observed.commit_positions);
    // The plan names keys as the store does.
    let store_names: FxHashMap<&str, &str> = observed
        .key_names
        .iter()
        .map(|(app, store)| (app.as_str(), store.as_str()))
        .collect();
    let names = prediction
        .history
        .key_names()
        .iter()
        .map(|k| {
            store_names
                .get(k.as_str())
                .map_or_else(|| k.clone(), |s| s.to_string())
        })
        .collect();
    let in_store_keys = prediction
        .history
        .with_key_names(names)
        .map_err(|e| anyhow::anyhow!("naming the prediction's keys as the store does: {e}"))?;
    let plan = workloads::replay_plan(&in_store_keys, level, Some(preferred), options.timeout);
    let setup = ReplaySetup {
        plan: Arc::new(plan),
        level,
        recorded: recorded_sessions(&observed.history),
        wait: options.turn_wait,
    };
    let server = Arc::new(Server::bind_replay(
        Config {
            lock_wait: options.lock_wait,
            ..Config::default()
        },
        setup,
    )?);
    let exit = run_against(server.clone(), options)?;
    let run = collect(&server, exit, "validating.json")?;
    let (reads, turns) = server.replay_divergences();
    let mut divergences: Vec<String> =
        path_divergences(&observed.history, &prediction.history, &run.history);
    let app_names: FxHashMap<&str, &str> = run
        .key_names
        .iter()
        .chain(&observed.key_names)
        .map(|(app, store)| (store.as_str(), app.as_str()))
        .collect();
    divergences.extend(
        reads
            .iter()
            .map(|d| read_divergence_words(d, &run.history, &app_names)),
    );
    divergences.extend(turns);
    let verdict = workloads::judge(&run.history, level, options.timeout);
    let outcome = ReplayOutcome::of(verdict, !divergences.is_empty());
    let anomaly = name_app_anomaly(&observed.history, &prediction, level);
    Ok(AppReplay {
        prediction,
        anomaly,
        run,
        verdict,
        divergences,
        outcome,
    })
}

/// `teller-1's transaction #2` (its committed and aborted transactions counted in session
/// order), or `the initial state`.
pub fn app_txn_label(h: &History, t: TxnId) -> String {
    if t == crate::history::INITIAL_TXN {
        return "the initial state".into();
    }
    let tx = h.txn(t);
    let name = h
        .statements()
        .and_then(|st| st.session_names().get(tx.session as usize))
        .map_or_else(|| format!("session {}", tx.session + 1), |n| n.to_string());
    format!(
        "{}'s transaction #{}",
        crate::printable::printable(&name),
        tx.index_in_session + 1
    )
}

/// The statements of transaction `t`, in order, each once.
fn txn_statements(h: &History, t: TxnId) -> Vec<&crate::history::SqlStatement> {
    let Some(table) = h.statements() else {
        return Vec::new();
    };
    let mut seen = Vec::new();
    for op in h.txn(t).ops() {
        if let Some(st) = table.of_op(op) {
            if !seen
                .iter()
                .any(|s: &&crate::history::SqlStatement| s.index == st.index)
            {
                seen.push(st);
            }
        }
    }
    seen
}

/// Transaction `t` as the step of the program it is: its statements' shapes (literals as `?`,
/// lower case: [`statement_shape`]) joined by `; `; `None` when it has no statement.
pub(super) fn app_txn_shape(h: &History, t: TxnId) -> Option<String> {
    let shapes: Vec<String> = txn_statements(h, t)
        .into_iter()
        .map(|st| statement_shape(&st.sql))
        .collect();
    (!shapes.is_empty()).then(|| shapes.join("; "))
}

/// The statements of transaction `t` with their parameters, for reports.
pub fn app_txn_statements(h: &History, t: TxnId) -> Vec<String> {
    txn_statements(h, t)
        .into_iter()
        .map(statement_words)
        .collect()
}

/// The SQL text of transaction `t`'s statements, whitespace collapsed.
fn app_txn_sql(h: &History, t: TxnId) -> Vec<String> {
    txn_statements(h, t)
        .into_iter()
        .map(|st| {
            let sql = st.sql.split_whitespace().collect::<Vec<_>>().join(" ");
            crate::printable::printable(&sql).into_owned()
        })
        .collect()
}

/// The anomaly of `p`, its transactions named by session and shown as their statements.
fn name_app_anomaly(observed: &History, p: &Prediction, level: Level) -> AnomalyName {
    name_prediction(
        p,
        level,
        &|t| app_txn_label(observed, t),
        &|t| {
            let sql = app_txn_sql(observed, t);
            (!sql.is_empty()).then(|| sql.join("; "))
        },
        &|k| k.to_string(),
    )
}
