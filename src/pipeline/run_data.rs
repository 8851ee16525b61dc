//! What the stages of `isopredict run` (`super::run`) hand each other, the report
//! (`super::run_report`) and the files (`super::run_files`): the options, the error, the
//! recorded run, the verified prediction and everything a run produced.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::check::{CheckError, Level};
use crate::predict::{PredictError, Prediction, Strategy};
use crate::report::anomaly::AnomalyGraph;
use crate::report::run_report::RunReport;
use crate::store::{Backend, KeyDirectory, ScanMode};
use crate::workloads::{Run, RunConfig, RunError, Size, Validation};

use super::level_name;

/// Options of [`super::run_workload`].
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
    /// How table statements find their rows on the embedded store (keyed by default; full:
    /// MonkeyDB's scan). Validation replays scan the same way.
    pub scan: ScanMode,
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
            scan: ScanMode::Keyed,
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
    // The three below say their cause in their own message, so they do not also name it as
    // their `source` (an error chain printed with `{:#}` would repeat it).
    /// Recording or replaying the workload failed.
    #[error("running the workload: {0}")]
    Run(RunError),
    /// Checking failed.
    #[error("checking: {0}")]
    Check(CheckError),
    /// Prediction failed.
    #[error("predicting: {0}")]
    Predict(PredictError),
    /// The user interrupted the run (SIGINT, see [`crate::interrupt`]).
    #[error("{0}")]
    Interrupted(#[from] crate::interrupt::Interrupted),
    /// The memory guard stopped the run ([`super::run_memory`]): the answer is unknown.
    #[error("unknown: {0}")]
    OverMemory(String),
}

impl From<RunError> for PipelineError {
    fn from(e: RunError) -> Self {
        PipelineError::Run(e)
    }
}

impl From<CheckError> for PipelineError {
    fn from(e: CheckError) -> Self {
        PipelineError::Check(e)
    }
}

impl From<PredictError> for PipelineError {
    fn from(e: PredictError) -> Self {
        PipelineError::Predict(e)
    }
}

/// Stage 1's result: the observed run.
pub(super) struct Recorded {
    /// The configuration it ran with (the replays use it again).
    pub(super) config: RunConfig,
    /// The run: its history, calls, store and invariants.
    pub(super) run: Run,
    /// The store's keys in table, column and row terms.
    pub(super) keys: KeyDirectory,
    /// Time to record it (ms).
    pub(super) record_ms: f64,
}

/// Stage 4's result: the prediction re-verified by the decision core (the core the predictor
/// asked too), and its anomaly core judged by a second, independent engine.
pub(super) struct Verified {
    /// The predicted history is valid at the level.
    pub(super) level: bool,
    /// It is unserializable (`None`: undecided).
    pub(super) unserializable: Option<bool>,
    /// The brute-force oracle's verdict (every commit order, `check::oracle`) on the anomaly's
    /// core: unserializable, which makes the whole prediction unserializable (more
    /// transactions only add constraints). `None` when the core is larger than the oracle
    /// answers for, or there is none.
    pub(super) oracle_unserializable: Option<bool>,
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
    /// The drawing of the observed run's own anomaly, as `check --dot` draws it, when the
    /// run stopped because the observed run already shows one (written as `anomaly.dot`).
    pub observed_drawing: Option<String>,
    /// The run's keys in the application's terms (table, column, row): the native JSON
    /// histories are written with these names.
    pub keys: KeyDirectory,
}
