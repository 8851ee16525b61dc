//! Predictive analysis (IsoPredict, Geng et al., PLDI 2024, §4 and appendix B): from one
//! observed execution history, predict a *different* execution of the same program that a
//! weakly isolated store (causal consistency, read atomic, read committed, prefix consistency or
//! snapshot isolation) may produce and that is not serializable — or show that none exists
//! under the chosen encoding.
//!
//! Pipeline ([`predict()`], in `entry`):
//! 1. check the observed history at the level (if it already violates it, report that);
//! 2. build the prediction space (`space`: pruned read choices and boundary thresholds) and
//!    generate the constraints: feasible prefix with boundary (`feasibility`), weak isolation
//!    (`isolation`), unserializability — exact (`exact`: `∀co. ¬IsSerializable(co)`, by lazy
//!    instantiation or Z3's quantifier engine) or approximate (`approx`: a cyclic `pco`, with
//!    the rank measure as rounds; `ranked`: the paper's integer ranks);
//! 3. solve with Z3 under the timeout;
//! 4. read the model (`extract`): each session's boundary, the reads whose writer changed,
//!    the predicted prefix history;
//! 5. re-verify (`candidate`): the predicted history satisfies the level by
//!    [`crate::check::check`] (pc and si: the exact checker [`crate::ser::check_strong`]) and
//!    is unserializable by the decision core [`crate::verdict::decide`]. A model that fails
//!    is blocked and the solver asked again (bounded); a prediction is only ever reported
//!    verified. Every level and serializability question goes through one function,
//!    `judge::judge`;
//! 6. explain (`describe`, [`explain`]): a cycle of the least `pco` of the prediction, each
//!    edge with its reason; [`dot`] draws it.
//!
//! Strategies (the paper's Table 2): [`Strategy::ExactStrict`], [`Strategy::ApproxStrict`],
//! [`Strategy::ApproxRelaxed`].
//!
//! Engines: steps 2–5 above are the paper-form engine (`paper`, [`Engine::Paper`]). The
//! default, [`Engine::Scalable`], gives the same verdicts at the scale of real test runs: the observed
//! history's serializability first, then seeds and a lazily constrained solver decided by the
//! checkers (`scalable`, `seeds`, `prefix`, `lazy`, `saturate`, `serial`; docs/prediction.md
//! "Engines" has the equivalence argument).
//!
//! Files: `options` (what is asked), `outcome` (what is answered), `entry` (limits, the
//! observed check, the engine's choice), `paper` and `scalable` (the engines), `candidate`
//! (the judgement of one candidate), `judge` (every level and serializability question),
//! `locks` (the level with the locked reads and connection order a recording carries),
//! `describe` (a verified prediction in words); the encodings and checkers they use below.

mod anomaly_core;
mod approx;
mod candidate;
mod certificate;
mod dangerous;
mod describe;
pub mod dot;
mod entry;
mod exact;
pub mod explain;
mod extract;
mod feasibility;
mod formula;
mod isolation;
mod isolation_si_pc;
mod judge;
mod lazy;
mod level_core;
mod locks;
mod open_clocks;
mod options;
mod outcome;
mod paper;
mod prefix;
mod ranked;
mod reach;
pub mod recheck;
mod render;
mod saturate;
mod scalable;
mod seeds;
mod serial;
mod space;
pub mod z3_memory;

use std::time::{Duration, Instant};

use crate::check::Level;

pub use anomaly_core::{AnomalyCore, CoreRead};
pub use certificate::{Certificate, NO_PIVOT};
pub use entry::predict;
pub(crate) use entry::stopped_reason;
pub use explain::{EdgeReason, PcoEdge};
pub use formula::EncodingSize;
pub use options::{
    default_memory_budget, Engine, ExactMethod, PredictOptions, RankEncoding, Strategy,
    PAPER_ENGINE_MAX_TXNS,
};
pub use outcome::{
    ChangedRead, CycleEdge, PredictError, PredictOutcome, PredictStats, Prediction,
    SessionBoundary, Verdict,
};
pub use paper::PAPER_BYTES_PER_NODE_CUBE;
pub use render::no_prediction_claim;

/// Why a search that found predictions ended early when the user stopped it (Ctrl-C, SIGTERM):
/// the outcome keeps the predictions found, each verified, with this reason
/// ([`PredictOutcome::reason`], after "search stopped early: ").
pub const SEARCH_INTERRUPTED: &str = "interrupted (Ctrl-C or SIGTERM)";

/// Prefix consistency and snapshot isolation: their commit order is part of the paper-form
/// encoding (`isolation_si_pc`) and they are checked by [`crate::ser::check_strong`].
fn is_si_pc(level: Level) -> bool {
    matches!(level, Level::Prefix | Level::Snapshot)
}

fn remaining(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod test_histories;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_locks;
#[cfg(test)]
mod tests_si_pc;
