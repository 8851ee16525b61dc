//! SER / SI / PC engines: deciding the strong isolation levels, whose commit order is not
//! determined by the history (NP-complete in general, Biswas & Enea OOPSLA'19 §3–4).
//!
//! - [`check_strong`]: one of PC, SI, SER on a whole history, with a witness commit order on a
//!   pass and a small, checkable explanation on a failure ([`StrongReport`]).
//! - [`is_serializable`]: the fast SER verdict with its serial order (for callers such as
//!   prediction that check many observed histories).
//! - [`smt`]: serializability as a direct Z3 total-order check, with a witness serial order.
//! - [`chronos`], [`aion`], [`ts_report`]: checking SI and SER from the start and commit
//!   timestamps a database assigned (Chronos offline, Aion online), on the timestamped
//!   histories of [`crate::history::timestamped`];
//!   [`watch`] drives the online checker.
//! - [`smt_si_pc`]: prefix consistency and snapshot isolation as a direct Z3 check (positions
//!   and snapshot cuts), with a witness commit order; the re-verifier of SI/PC predictions.
//!
//! How a level is decided (docs/checking.md): causal consistency first (every strong level
//! implies it; a violation is reported with the CC checker's named cycles); then the
//! components of the communication graph, each with the initial transaction (`components`);
//! on each, the forced commit-order edges (`saturate`), then the prefix search (`search`) or
//! Z3 (`smt_problem`) on SER itself or on the read/write split of PC and SI (`reduce`); every
//! witness is replayed (`verify`). A failure is explained by a minimal sub-history (`explain`).

mod adya;
pub mod aion;
pub mod chronos;
mod components;
mod decide;
pub mod dependency_graph;
mod explain;
mod reduce;
mod report;
mod saturate;
mod search;
pub mod smt;
mod smt_problem;
pub mod smt_si_pc;
mod sorted_window;
mod strong;
pub mod ts_report;
mod txns;
mod verify;
pub mod watch;

pub use crate::history::timestamped::{Hlc, TimestampedHistory};
pub(crate) use chronos::check_timestamps;
pub use chronos::{TsCheckOptions, TsLevel};
pub(crate) use dependency_graph::check_known_order;
pub use dependency_graph::{KnownOrderOptions, Undecided, VersionChains};
pub use report::{
    CoreLevels, CoreTxn, StrongEdge, StrongEdgeKind, StrongReport, StrongSummary, Verdict,
    Violation,
};
pub(crate) use smt::check_serializable;
pub use smt::{verify_serial_order, SerError, SerVerdict};
pub(crate) use smt_si_pc::{check_si_pc, satisfies_si_pc};
pub use smt_si_pc::{verify_si_pc_order, SiPcVerdict};
pub(crate) use strong::{check_strong, is_serializable};
pub use ts_report::{TimestampReport, TsViolation};

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::check::Level;

/// A level decided by this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StrongLevel {
    /// Prefix consistency (Biswas & Enea's Prefix axiom).
    Prefix,
    /// Snapshot isolation (Prefix and Conflict).
    Snapshot,
    /// Serializability.
    Serializable,
}

impl StrongLevel {
    /// The strong level for `level`, if it is one.
    pub fn from_level(level: Level) -> Option<StrongLevel> {
        match level {
            Level::Prefix => Some(StrongLevel::Prefix),
            Level::Snapshot => Some(StrongLevel::Snapshot),
            Level::Serializable => Some(StrongLevel::Serializable),
            _ => None,
        }
    }

    /// The corresponding [`Level`].
    pub fn level(self) -> Level {
        match self {
            StrongLevel::Prefix => Level::Prefix,
            StrongLevel::Snapshot => Level::Snapshot,
            StrongLevel::Serializable => Level::Serializable,
        }
    }
}

/// Which engine decides each component.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// Biswas & Enea's prefix search (polynomial for a fixed number of sessions).
    Search,
    /// Z3 on difference constraints.
    Smt,
    /// The search with part of the budget, then Z3 on what it gave up on.
    #[default]
    Auto,
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Engine::Search => "search",
            Engine::Smt => "smt",
            Engine::Auto => "auto",
        })
    }
}

impl FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Engine, String> {
        match s.to_ascii_lowercase().as_str() {
            "search" => Ok(Engine::Search),
            "smt" | "z3" => Ok(Engine::Smt),
            "auto" => Ok(Engine::Auto),
            other => Err(format!(
                "unknown engine `{other}` (expected search, smt or auto)"
            )),
        }
    }
}

/// Options of [`check_strong`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrongOptions {
    /// The engine.
    pub engine: Engine,
    /// Give up (verdict unknown) after this long; `None`: no limit.
    pub timeout: Option<Duration>,
    /// The search gives up after memoising this many failed prefixes (bounds its memory:
    /// each costs a few bytes per session).
    pub max_failed_states: usize,
    /// On a pass, include the witness commit order.
    pub witness: bool,
    /// On a failure, shrink the failing component to a minimal failing sub-history (costs a
    /// few more checks of small histories; bounded by `explain_timeout`).
    pub explain: bool,
    /// Time allowed for shrinking an explanation (never past `timeout`).
    pub explain_timeout: Duration,
    /// Memory budget in bytes for the causal check's clocks and the saturation's clock
    /// matrices (`None`: no budget beyond the causal check's built-in bound); over it the
    /// verdict is unknown, naming the budget.
    pub memory: Option<u64>,
}

impl Default for StrongOptions {
    fn default() -> Self {
        StrongOptions {
            engine: Engine::Auto,
            timeout: None,
            max_failed_states: 2_000_000,
            witness: false,
            explain: true,
            explain_timeout: Duration::from_secs(10),
            memory: None,
        }
    }
}

#[cfg(test)]
mod tests;
