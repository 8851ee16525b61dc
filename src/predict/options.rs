//! What a prediction is asked for: the level and the strategy (IsoPredict PLDI'24 Table 2),
//! the engine that answers and how it encodes the paper's formulas, and the limits (time,
//! memory, how many predictions).

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use super::is_si_pc;
use super::space::BoundaryKind;
use crate::check::Level;
use crate::history::History;

/// Which prediction engine answers (docs/prediction.md "Engines").
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// The paper-form encodings over every pair of transactions (the reference; cubic).
    Paper,
    /// Seeds and a lazily constrained solver over the prediction space, decided by the
    /// checkers (same answers; cost follows the prefix a prediction needs).
    #[default]
    Scalable,
}

/// A prediction strategy: encoding precision × prediction boundary (IsoPredict Table 2).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Exact unserializability (`∀co. ¬IsSerializable(co)`), strict boundary.
    ExactStrict,
    /// Approximate unserializability (cyclic `pco`), strict boundary.
    ApproxStrict,
    /// Approximate unserializability, relaxed boundary.
    ApproxRelaxed,
}

impl Strategy {
    /// Every strategy.
    pub const ALL: [Strategy; 3] = [
        Strategy::ExactStrict,
        Strategy::ApproxStrict,
        Strategy::ApproxRelaxed,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::ExactStrict => "exact-strict",
            Strategy::ApproxStrict => "approx-strict",
            Strategy::ApproxRelaxed => "approx-relaxed",
        }
    }

    pub(crate) fn boundary(self) -> BoundaryKind {
        match self {
            Strategy::ExactStrict | Strategy::ApproxStrict => BoundaryKind::Strict,
            Strategy::ApproxRelaxed => BoundaryKind::Relaxed,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Strategy, String> {
        Strategy::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| {
                format!("unknown strategy `{s}` (expected exact-strict, approx-strict or approx-relaxed)")
            })
    }
}

/// Options of [`predict`](super::predict()).
#[derive(Debug, Clone)]
pub struct PredictOptions {
    /// The weak isolation level the prediction must satisfy: causal, read atomic, read
    /// committed, prefix consistency or snapshot isolation.
    pub level: Level,
    /// The strategy.
    pub strategy: Strategy,
    /// Wall-clock budget for solving and re-verification (none: no limit).
    pub timeout: Option<Duration>,
    /// How many models may fail re-verification before giving up (reported as unknown).
    pub max_rejected: u32,
    /// How the approximate strategies encode the rank measure.
    pub ranks: RankEncoding,
    /// How the exact strategy solves its quantified formula.
    pub exact: ExactMethod,
    /// Which engine answers.
    pub engine: Engine,
    /// Most predictions to report (differing in their anomaly; `usize::MAX`: all). The paper
    /// engine reports at most one.
    pub max: usize,
    /// An absolute deadline for the whole prediction (overrides `timeout` when earlier).
    pub deadline: Option<Instant>,
    /// Memory budget in bytes for the encodings (estimated before building them; `None`: no
    /// limit). Over it the answer is unknown.
    pub memory: Option<u64>,
    /// Raised to the number of predictions found so far as the scalable engine's search finds
    /// them (for a progress line while `max` > 1; `None`: not counted).
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>,
}

/// How the exact strategy decides `∀co. ¬IsSerializable(co)` (§4.2.1).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum ExactMethod {
    /// Expand the quantifier lazily: each serializable candidate's serial order becomes a
    /// ground instance (counterexample-guided instantiation; candidates by SAT, orders by the
    /// exact serializability check).
    #[default]
    Instances,
    /// Hand the quantified formula to Z3 (model-based quantifier instantiation).
    Quantifier,
}

/// How the approximate encoding orders `pco` derivations (the rank measure of §4.2.2).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum RankEncoding {
    /// Ranks are rounds of the fixpoint iteration, one Boolean copy of `pco` per round, added
    /// until a cycle appears or no choice of reads grows `pco` any more.
    #[default]
    Rounds,
    /// The paper's integer `rank(a, b)` per pair (slow for Z3 to refute).
    Integer,
}

impl PredictOptions {
    /// Options for `level` and `strategy`, no timeout, up to 8 rejected models.
    pub fn new(level: Level, strategy: Strategy) -> PredictOptions {
        PredictOptions {
            level,
            strategy,
            timeout: None,
            max_rejected: 8,
            ranks: RankEncoding::Rounds,
            exact: ExactMethod::Instances,
            engine: Engine::Scalable,
            max: 1,
            deadline: None,
            memory: None,
            progress: None,
        }
    }

    /// With a timeout.
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> PredictOptions {
        self.timeout = timeout;
        self
    }
}

/// Most committed transactions for which [`PredictOptions::for_history`] keeps the paper
/// engine (the paper's workloads have ≤ 25).
pub const PAPER_ENGINE_MAX_TXNS: usize = 64;

impl PredictOptions {
    /// The engine for `h` as the pipelines choose it: at causal, ra and rc the paper engine on
    /// runs of the paper's size (≤ [`PAPER_ENGINE_MAX_TXNS`] committed transactions; same
    /// verdict, and the same prediction as before the scalable engine, so reports keep their
    /// anomaly), else — and always at pc and si, which the paper does not cover — the scalable
    /// one.
    pub fn for_history(mut self, h: &History) -> PredictOptions {
        let paper_levels = !is_si_pc(self.level);
        self.engine = if paper_levels && h.committed_txns().count() <= PAPER_ENGINE_MAX_TXNS {
            Engine::Paper
        } else {
            Engine::Scalable
        };
        self
    }
}

/// The default memory budget: half the memory the process may use — the machine's
/// (`MemTotal` of `/proc/meminfo`), or the address-space limit (`ulimit -v`, `RLIMIT_AS`)
/// when that is lower — or `None` where neither can be read.
pub fn default_memory_budget() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        });
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct it is given.
    let address_space = (unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY)
        .then_some(limit.rlim_cur);
    let usable = match (total, address_space) {
        (Some(t), Some(a)) => t.min(a),
        (t, a) => t.or(a)?,
    };
    Some(usable / 2)
}
