//! Did the database keep its promise? A history recorded on a real database at an isolation
//! level is checked at the level that database level promises (PostgreSQL's documentation,
//! §13.2): read committed → rc (Biswas & Enea, OOPSLA'19), repeatable read → snapshot
//! isolation, serializable → serializability.
//!
//! Which checker decides each level is said in one place, [`checker_for`]: rc (and the other
//! weak levels) by [`crate::check::check`]; snapshot isolation and serializability by the
//! exact black-box checker [`crate::ser::check_strong`] (Biswas & Enea's search, Z3 on what
//! it gives up on), whose failures come with a minimal failing set of transactions. The
//! question itself goes to the pipelines' one judge (`super::judge`, [`Checkers::Strong`]).

use std::time::Duration;

use super::judge::{judge, Checkers, Judged};
use crate::check::Level;
use crate::history::History;
use crate::ser::StrongLevel;
use crate::store::Isolation;

/// How a promised level is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checker {
    /// [`crate::check::check`] at this level.
    Axiomatic(Level),
    /// [`crate::ser::check_strong`] at this level (pc, si, ser).
    Strong(StrongLevel),
}

/// The checker of each promised level.
pub fn checker_for(level: Level) -> Checker {
    match StrongLevel::from_level(level) {
        Some(strong) => Checker::Strong(strong),
        None => Checker::Axiomatic(level),
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
    let checked = match checker_for(promised) {
        Checker::Axiomatic(level) => format!("{} by the axiomatic checker", level.full_name()),
        Checker::Strong(_) => format!("{} by the exact black-box checker", promised.full_name()),
    };
    let (verdict, explanation) = match judge(history, promised, Checkers::Strong, timeout) {
        Ok(Judged::Holds(_)) => (PromiseVerdict::Kept, None),
        Ok(Judged::Violated(text)) => (PromiseVerdict::Broken, Some(text)),
        Ok(Judged::Unknown(reason)) => (PromiseVerdict::Unknown, reason),
        Err(e) => (PromiseVerdict::Unknown, Some(e.to_string())),
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
            PromiseVerdict::Unknown => format!("{what}: undecided ({})", self.checked),
        }
    }
}
