//! The product's main job, end to end (IsoPredict PLDI'24 §4–5 and §7):
//!
//! - [`run`](run::run_workload): record a workload run on the store (reads see the latest
//!   write) → check it at the level → predict an unserializable execution → re-verify it →
//!   validate it by replaying the workload → a [`RunReport`](crate::report::run_report::RunReport)
//!   in words, and files (histories, DOT/SVG of the anomaly, report.md).
//! - [`app_test`]: the same for any application that speaks PostgreSQL, driven by its own
//!   test command (`isopredict test`): recorded and replayed through the recording server.
//! - [`promise`]: whether a database kept the isolation level it promised, for runs recorded
//!   on one.
//! - [`rank()`]: the same over a grid of workloads × sizes × seeds × levels × strategies (or
//!   over folders of user histories) in parallel, plus MonkeyDB-style random exploration,
//!   summarised as the paper's Tables 4–7 and a risk ranking of the programs.
//! - [`cells`]: `rank` and `check` over many histories as independent cells — a plan, cells
//!   run anywhere (one machine's threads, or a Ray cluster: docs/distributed.md), and a merge
//!   ([`check_cells`] for `check`).

mod anomaly_name;
mod app_paths;
pub mod app_test;
pub mod app_test_report;
pub mod cells;
pub mod check_cells;
pub mod distinct;
mod explain;
mod judge;
pub mod progress;
pub mod promise;
pub mod rank;
pub mod rank_app;
mod rank_predict;
pub mod run;
mod run_data;
mod run_files;
pub mod run_memory;
mod run_report;

pub use anomaly_name::{name_anomaly, name_prediction, AnomalyName, NamedBy};
pub use app_paths::statement_words;
pub use app_test::{test_application, AppTestOptions, AppTestOutcome};
pub use app_test_report::{write_app_test_files, AppTestReport};
pub use rank::{
    merge_rank, parse_seeds, progress_bar, rank, rank_plan, run_rank_plan_cell, write_rank_files,
    RankGrid, RankInput, RankOutcome, RankScore,
};
pub use rank_app::{parse_apps, AppSpec, AppWaits};
pub use run::{run_workload, write_run_files, PipelineError, RunOptions, RunOutcome};
pub use run_memory::run_workload_within;

use crate::check::Level;

/// The levels prediction supports, by their command-line names.
pub const LEVELS: [Level; 5] = [
    Level::Causal,
    Level::ReadAtomic,
    Level::ReadCommitted,
    Level::Prefix,
    Level::Snapshot,
];

/// `causal`, `ra`, `rc`, `pc` or `si` (other levels by their short name).
pub fn level_name(level: Level) -> &'static str {
    match level {
        Level::Causal => "causal",
        Level::ReadAtomic => "ra",
        Level::ReadCommitted => "rc",
        other => other.short_name(),
    }
}

/// Parses `causal` (or `cc`), `ra`, `rc`, `pc` or `si`.
pub fn parse_level(s: &str) -> Result<Level, String> {
    match s.parse::<Level>() {
        Ok(l) if LEVELS.contains(&l) => Ok(l),
        Ok(l) => Err(format!(
            "prediction supports the levels causal, ra, rc, pc and si, not {l}"
        )),
        Err(e) => Err(e),
    }
}

/// The backend a `--store` argument names: `embedded` (`None`: the embedded store) or a
/// PostgreSQL URL (`postgres://user@host:port/db` or `postgresql://…`) run at `isolation`.
pub fn parse_store(
    store: &str,
    isolation: crate::store::Isolation,
) -> Result<Option<std::sync::Arc<dyn crate::store::Backend>>, String> {
    if store == "embedded" {
        return Ok(None);
    }
    if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        return crate::store::postgres::Postgres::new(store, isolation)
            .map(|p| Some(std::sync::Arc::new(p) as std::sync::Arc<dyn crate::store::Backend>))
            .map_err(|e| e.to_string());
    }
    Err(format!(
        "unknown store {:?}: `embedded` or a PostgreSQL URL (postgres://user@host:port/db)",
        crate::store::postgres::redact_password(store)
    ))
}

/// Runs `f` with a fresh Z3 context on this thread. The z3 crate keeps one context per thread,
/// and Z3's answers (which model, hence which prediction) depend on what the context has seen
/// before; a fresh context per task makes a task's result independent of the tasks that ran
/// before it on the same thread (determinism across runs and thread schedules), and frees its
/// memory when done.
pub fn fresh_z3<R: Send + Sync>(f: impl FnOnce() -> R + Send + Sync) -> R {
    z3::with_z3_config(&z3::Config::new(), f)
}
