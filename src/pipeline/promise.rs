//! Did the database keep its promise? A history recorded on a real database at an isolation
//! level is checked at the level that database level promises (PostgreSQL's documentation,
//! §13.2): read committed → rc (Biswas & Enea, OOPSLA'19), repeatable read → snapshot
//! isolation, serializable → serializability.
//!
//! Which checker decides each level is chosen in one place, [`checker_for`]: rc (and the other
//! weak levels) by [`crate::check::check`]; snapshot isolation and serializability by the
//! exact black-box checker [`crate::ser::check_strong`] (Biswas & Enea's search, Z3 on what
//! it gives up on), whose failures come with a minimal failing set of transactions.

use std::time::Duration;

use crate::check::{self, CheckOptions, Level};
use crate::history::History;
use crate::ser::{self, StrongLevel, StrongOptions};
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
        Checker::Strong(strong) => {
            let options = StrongOptions {
                timeout,
                ..StrongOptions::default()
            };
            let (v, e) = match ser::check_strong(history, strong, &options) {
                Ok(r) => match r.verdict {
                    ser::Verdict::Consistent => (PromiseVerdict::Kept, None),
                    ser::Verdict::Violated => (PromiseVerdict::Broken, Some(r.render_text())),
                    ser::Verdict::Unknown => (PromiseVerdict::Unknown, r.unknown_reason.clone()),
                },
                Err(e) => (PromiseVerdict::Unknown, Some(e.to_string())),
            };
            (
                v,
                format!("{} by the exact black-box checker", promised.full_name()),
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
            PromiseVerdict::Unknown => format!("{what}: undecided ({})", self.checked),
        }
    }
}
