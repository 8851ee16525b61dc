//! `rank --app NAME='CMD'`: applications ranked beside (or instead of) the built-in workloads,
//! by IsoPredict's evaluation (PLDI'24 §7.2: record, predict, validate by re-running the
//! unmodified program). A task records the command through the recording server as
//! `isopredict test` does, with [`SEED_ENV`] set to the run's seed; predicts at the level with
//! the strategy on the path every rank task takes ([`super::rank_predict::predict_history`]);
//! and validates the first prediction by re-running the command with the server in replay
//! mode ([`super::app_test::replay`], `test`'s replay). "Validated" is the one meaning the
//! workloads have: the replay's [`crate::workloads::ReplayOutcome`] counts as validated
//! ([`crate::workloads::ReplayOutcome::counts_as_validated`]). Where a workload's replay
//! breaks an invariant, an application's replay fails its own test command (exit ≠ 0).

use std::path::PathBuf;
use std::time::Duration;

use crate::check::Level;
use crate::predict::Strategy;
use crate::report::tables::{PredictionRecord, ValidationRecord};

use super::app_test::{self, app_txn_label, app_txn_shape, AppTestOptions};
use super::distinct::anomaly_by;
use super::rank_predict::{predict_history, record_anomalies, task_record};

/// The environment variable that carries a run's seed to an application's command (and its
/// setup commands), in the recording and in the replay: the grid's `--seeds`, one run each.
pub const SEED_ENV: &str = "ISOPREDICT_SEED";

/// How long a replayed transaction waits for its turn by default (`rank --turn-wait`, as
/// `test --turn-wait`).
pub const DEFAULT_TURN_WAIT: Duration = Duration::from_secs(5);

/// How long a recorded transaction waits for a lock by default (`rank --lock-wait`, as
/// `test --lock-wait`).
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(2);

/// An application to rank: `--app NAME='CMD'` with its `--app-setup NAME='CMD'`s.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AppSpec {
    /// Its name: the program's name in the tables.
    pub name: String,
    /// The shell command that runs it (`sh -c`).
    pub command: String,
    /// Setup commands run before it (`sh -c`, in order), in the recording and before each
    /// replay (`test --setup`).
    #[serde(default)]
    pub setup: Vec<String>,
}

/// How an application's runs wait: for a turn in a replay, for a lock in a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppWaits {
    /// How long a replayed transaction waits for its turn before the wait is a divergence.
    pub turn_wait: Duration,
    /// How long a recorded transaction waits for a lock before going on without it.
    pub lock_wait: Duration,
}

impl Default for AppWaits {
    fn default() -> Self {
        AppWaits {
            turn_wait: DEFAULT_TURN_WAIT,
            lock_wait: DEFAULT_LOCK_WAIT,
        }
    }
}

/// Checks an application's name: letters, digits, `-`, `_` and `.`, not a built-in
/// workload's (a program's rows would mix).
pub fn check_app_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name before `=` is empty".to_string());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(format!(
            "the name `{}` may hold only letters, digits, `-`, `_` and `.`",
            crate::printable::printable(name)
        ));
    }
    if crate::workloads::by_name(name).is_some() {
        return Err(format!(
            "`{name}` is a built-in workload's name; give the application another"
        ));
    }
    Ok(())
}

/// `NAME=CMD` split at the first `=`, the name checked and the command not empty; errors
/// quote the argument after `option`.
fn name_and_command(option: &str, text: &str) -> Result<(String, String), String> {
    let shown = crate::printable::printable(text);
    let Some((name, command)) = text.split_once('=') else {
        return Err(format!(
            "{option} `{shown}`: expected NAME='COMMAND' (a name, `=`, and the shell command that runs the application)"
        ));
    };
    check_app_name(name).map_err(|e| format!("{option} `{shown}`: {e}"))?;
    if command.trim().is_empty() {
        return Err(format!(
            "{option} `{shown}`: the command after `=` is empty"
        ));
    }
    Ok((name.to_string(), command.to_string()))
}

/// The applications of `rank --app NAME='CMD'…` with their `--app-setup NAME='CMD'…` (each
/// naming an application given by `--app`; in order per application). Errors: a spec without
/// `=`, an empty or bad name, an empty command, a name given twice, a setup for no application.
pub fn parse_apps(apps: &[String], setups: &[String]) -> Result<Vec<AppSpec>, String> {
    let mut specs: Vec<AppSpec> = Vec::with_capacity(apps.len());
    for text in apps {
        let (name, command) = name_and_command("--app", text)?;
        if specs.iter().any(|s| s.name == name) {
            return Err(format!("--app: `{name}` is given twice"));
        }
        specs.push(AppSpec {
            name,
            command,
            setup: Vec::new(),
        });
    }
    for text in setups {
        let (name, command) = name_and_command("--app-setup", text)?;
        match specs.iter_mut().find(|s| s.name == name) {
            Some(spec) => spec.setup.push(command),
            None => {
                return Err(format!(
                    "--app-setup `{}`: no --app is named `{name}`",
                    crate::printable::printable(text)
                ))
            }
        }
    }
    Ok(specs)
}

/// The column a recorded key stands for: `acct.bal` for `acct.bal[id=1]`, `acct (row)` for a
/// row's existence `acct[id=1]`, other names as they are.
fn app_key_column(key: &str) -> String {
    match key.split_once('[') {
        Some((column, _)) if column.contains('.') => column.to_string(),
        Some((table, _)) => format!("{table} (row)"),
        None => key.to_string(),
    }
}

/// What every application task of a grid shares.
#[derive(Debug, Clone)]
pub(super) struct AppRunSetup {
    /// Most distinct anomalies per task.
    pub max: usize,
    /// Turn and lock waits.
    pub waits: AppWaits,
    /// The folder the commands run in (`None`: this process's).
    pub dir: Option<PathBuf>,
}

/// One Tables 4/5 task of an application: record its run with seed `seed`, predict at `level`
/// with `strategy`, validate the first prediction by re-running it along the prediction. A run
/// that cannot be recorded — the command cannot run, a setup command fails, or the command
/// exits with a failure when recorded — is an error record naming why.
pub(super) fn predict_app(
    app: &AppSpec,
    seed: u64,
    level: Level,
    strategy: Strategy,
    timeout: Option<Duration>,
    setup: &AppRunSetup,
) -> PredictionRecord {
    let base = task_record(
        app.name.clone(),
        "-".to_string(),
        format!("seed {seed}"),
        level,
        strategy,
    );
    let options = AppTestOptions {
        command: vec!["sh".to_string(), "-c".to_string(), app.command.clone()],
        setup: app.setup.clone(),
        level,
        strategy,
        max: setup.max,
        timeout,
        turn_wait: setup.waits.turn_wait,
        lock_wait: setup.waits.lock_wait,
        env: vec![(SEED_ENV.to_string(), seed.to_string())],
        dir: setup.dir.clone(),
    };
    let failed = |detail: String| PredictionRecord {
        detail: Some(detail),
        ..base.clone()
    };
    let observed = match app_test::record(&options) {
        Ok(run) => run,
        Err(e) => return failed(format!("recording: {e}")),
    };
    if observed.exit != 0 {
        return failed(format!(
            "recording: the command exited {} (it must pass when recorded: a run that fails, \
             or whose SQL the recording server refused, is no run to predict from; its output \
             is on standard error)",
            observed.exit
        ));
    }
    let h = &observed.history;
    let (mut record, predictions, end) =
        predict_history(h, base.clone(), level, strategy, timeout, setup.max);
    if predictions.is_empty() {
        return record;
    }
    let named: Vec<_> = predictions
        .iter()
        .map(|p| {
            anomaly_by(
                p,
                |t| app_txn_shape(h, t).map_or_else(|| app_txn_label(h, t), |s| format!("`{s}`")),
                app_key_column,
            )
        })
        .collect();
    record_anomalies(&mut record, &named, &end, setup.max);
    let Some(first) = predictions.into_iter().next() else {
        return record;
    };
    match app_test::replay(&options, &observed, first) {
        Ok(replay) => PredictionRecord {
            validation: Some(ValidationRecord {
                validated: replay.outcome.counts_as_validated(),
                diverged: !replay.divergences.is_empty(),
                failed_invariants: if replay.run.exit != 0 {
                    vec![format!("test-failed (exit {})", replay.run.exit)]
                } else {
                    Vec::new()
                },
                verdict: replay.outcome.word().to_string(),
            }),
            ..record
        },
        Err(e) => PredictionRecord {
            detail: Some(format!("validation: {e}")),
            ..record
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_specs_parse_and_bad_ones_say_why() {
        let apps = parse_apps(
            &[
                "bank=pytest -q tests/a=b".to_string(),
                "two=./run".to_string(),
            ],
            &[
                "bank=psql -f schema.sql".to_string(),
                "bank=./load".to_string(),
            ],
        )
        .unwrap();
        assert_eq!(apps[0].name, "bank");
        // The command is everything after the first `=`.
        assert_eq!(apps[0].command, "pytest -q tests/a=b");
        assert_eq!(apps[0].setup, ["psql -f schema.sql", "./load"]);
        assert!(apps[1].setup.is_empty());
        let err = |apps: &[&str], setups: &[&str]| {
            let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            parse_apps(&own(apps), &own(setups)).unwrap_err()
        };
        assert!(err(&["bank"], &[]).contains("--app `bank`: expected NAME='COMMAND'"));
        assert!(err(&["bank=  "], &[]).contains("the command after `=` is empty"));
        assert!(err(&["=./run"], &[]).contains("the name before `=` is empty"));
        assert!(err(&["a b=./run"], &[]).contains("may hold only letters"));
        assert!(err(&["smallbank=./run"], &[]).contains("built-in workload"));
        assert!(err(&["a=x", "a=y"], &[]).contains("`a` is given twice"));
        assert!(err(&["a=x"], &["b=y"]).contains("--app-setup `b=y`: no --app is named `b`"));
    }

    #[test]
    fn recorded_keys_name_their_columns() {
        assert_eq!(app_key_column("acct.bal[id=1]"), "acct.bal");
        assert_eq!(app_key_column("acct[id=1]"), "acct (row)");
        assert_eq!(app_key_column("acct"), "acct");
    }

    #[test]
    fn a_command_that_fails_when_recorded_is_an_error_record_with_its_exit_code() {
        let app = AppSpec {
            name: "broken".to_string(),
            command: format!("exit $(({SEED_ENV} + 40))"),
            setup: Vec::new(),
        };
        let setup = AppRunSetup {
            max: 1,
            waits: AppWaits::default(),
            dir: None,
        };
        let r = predict_app(
            &app,
            2,
            Level::Causal,
            Strategy::ApproxRelaxed,
            None,
            &setup,
        );
        assert_eq!(r.outcome, crate::report::tables::PredictionOutcome::Error);
        // The seed reached the command through the environment: it exited 42.
        let detail = r.detail.unwrap();
        assert!(detail.contains("the command exited 42"), "{detail}");
        assert_eq!(r.run, "seed 2");
        let failing_setup = AppSpec {
            setup: vec!["exit 7".to_string()],
            command: "true".to_string(),
            ..app
        };
        let r = predict_app(
            &failing_setup,
            1,
            Level::Causal,
            Strategy::ApproxRelaxed,
            None,
            &setup,
        );
        let detail = r.detail.unwrap();
        assert!(
            detail
                .contains("the setup command `export ISOPREDICT_SEED='1'; exit 7` failed (exit 7)"),
            "{detail}"
        );
    }
}
