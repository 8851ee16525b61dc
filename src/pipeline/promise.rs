//! Did the database keep its promise? A history recorded on a real database at an isolation
//! level is checked at the level that database level promises (PostgreSQL's documentation,
//! §13.2): read committed → rc (Biswas & Enea, OOPSLA'19), repeatable read → snapshot
//! isolation, serializable → serializability.
//!
//! Which checker decides each level is chosen in one place, [`checker_for`]. Today: rc by
//! [`crate::check::check`]; serializability by the SMT check
//! [`crate::ser::check_serializable`]; snapshot isolation is **pending** (no SI checker yet),
//! and meanwhile the history is checked at causal consistency, which snapshot isolation
//! implies, so a causal violation is still reported as a broken promise.

use std::time::Duration;

use crate::check::{self, CheckOptions, Level};
use crate::history::History;
use crate::ser::{self, SerVerdict};
use crate::store::Isolation;

/// How a promised level is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checker {
    /// [`crate::check::check`] at this level.
    Axiomatic(Level),
    /// [`crate::ser::check_serializable`] (Z3).
    SmtSerializable,
    /// No checker for the level yet: check this weaker level it implies instead.
    Pending {
        /// The level checked meanwhile (a necessary condition).
        weaker: Level,
    },
}

/// The checker of each promised level: the one place to switch when a checker lands (e.g.
/// snapshot isolation: `Level::Snapshot => Checker::Axiomatic(Level::Snapshot)`).
pub fn checker_for(level: Level) -> Checker {
    match level {
        Level::Serializable => Checker::SmtSerializable,
        Level::Snapshot => Checker::Pending {
            weaker: Level::Causal,
        },
        other => Checker::Axiomatic(other),
    }
}

/// The verdict on a promise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PromiseVerdict {
    /// The history satisfies the promised level.
    Kept,
    /// The history violates the promised level (or a level it implies): a real finding.
    Broken,
    /// No checker for the promised level yet; the weaker level checked holds.
    Pending,
    /// The check could not decide (time limit).
    Unknown,
}

/// The promise check of one recorded history.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PromiseCheck {
    /// The database's isolation level.
    pub isolation: Isolation,
    /// The level it promises.
    pub promised: Level,
    /// The verdict.
    pub verdict: PromiseVerdict,
    /// What was checked, in words.
    pub checked: String,
    /// The violation explained, when broken.
    pub explanation: Option<String>,
}

/// Checks `history`, recorded at `isolation`, at the level that promises; `timeout` bounds
/// the serializability check.
pub fn check_promise(
    history: &History,
    isolation: Isolation,
    timeout: Option<Duration>,
) -> PromiseCheck {
    let promised = isolation.promised_level();
    let axiomatic = |level: Level| match check::check(history, level, &CheckOptions::default()) {
        Ok(r) if r.is_consistent() => (PromiseVerdict::Kept, None),
        Ok(r) => (PromiseVerdict::Broken, Some(r.render_text())),
        Err(e) => (PromiseVerdict::Unknown, Some(e.to_string())),
    };
    let (verdict, checked, explanation) = match checker_for(promised) {
        Checker::Axiomatic(level) => {
            let (v, e) = axiomatic(level);
            (
                v,
                format!("{} by the axiomatic checker", level.full_name()),
                e,
            )
        }
        Checker::SmtSerializable => {
            let (v, e) = match ser::check_serializable(history, timeout) {
                Ok(SerVerdict::Serializable { .. }) => (PromiseVerdict::Kept, None),
                Ok(SerVerdict::Unserializable) => (
                    PromiseVerdict::Broken,
                    Some(
                        "no serial order of the committed transactions explains what they read"
                            .to_string(),
                    ),
                ),
                Ok(SerVerdict::Unknown { reason }) => (PromiseVerdict::Unknown, Some(reason)),
                Err(e) => (PromiseVerdict::Unknown, Some(e.to_string())),
            };
            (v, "serializability by the SMT check".to_string(), e)
        }
        Checker::Pending { weaker } => {
            let (v, e) = axiomatic(weaker);
            let v = if v == PromiseVerdict::Kept {
                PromiseVerdict::Pending
            } else {
                v
            };
            (
                v,
                format!(
                    "{} is not checked yet (no checker); checked {} instead, which it implies",
                    promised.full_name(),
                    weaker.full_name()
                ),
                e,
            )
        }
    };
    PromiseCheck {
        isolation,
        promised,
        verdict,
        checked,
        explanation,
    }
}

impl PromiseCheck {
    /// One sentence for reports.
    pub fn sentence(&self) -> String {
        let what = format!(
            "{} promises {}",
            self.isolation.sql(),
            self.promised.full_name()
        );
        match self.verdict {
            PromiseVerdict::Kept => format!("{what}: kept ({})", self.checked),
            PromiseVerdict::Broken => format!("{what}: BROKEN ({})", self.checked),
            PromiseVerdict::Pending => format!("{what}: pending — {}; it holds", self.checked),
            PromiseVerdict::Unknown => format!("{what}: undecided ({})", self.checked),
        }
    }
}
