//! Did the database keep its promise? A history recorded on a real database at an isolation
//! level is checked at the level that database level promises (PostgreSQL's documentation,
//! §13.2): read committed → rc (Biswas & Enea, OOPSLA'19), repeatable read → snapshot
//! isolation, serializable → serializability.
//!
//! The verdict comes from the one decision core ([`crate::verdict::decide`]) on the reads
//! the database returned (black-box evidence: the recording has no version order or
//! timestamps of the database's own); a violation's report names the anomaly and, for pc, si
//! and ser, a minimal failing set of transactions.

use std::time::Duration;

use crate::check::Level;
use crate::history::History;
use crate::store::Isolation;
use crate::verdict::{self, EvidenceChoice, Input, Limits, Outcome};

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
/// the check.
pub fn check_promise(
    history: &History,
    isolation: Isolation,
    timeout: Option<Duration>,
) -> PromiseCheck {
    let promised = isolation.promised_level();
    let limits = Limits {
        timeout,
        ..Limits::default()
    };
    let decided = Input::of(history)
        .map_err(verdict::DecideError::from)
        .and_then(|input| verdict::decide(&input, promised, EvidenceChoice::Auto, &limits));
    let (verdict, checked, explanation) = match decided {
        Ok(v) => {
            let checked = format!("{} [evidence: {}]", v.level.full_name(), v.evidence);
            match v.verdict {
                Outcome::Consistent => (PromiseVerdict::Kept, checked, None),
                Outcome::Violated => (
                    PromiseVerdict::Broken,
                    checked,
                    v.report.as_ref().map(|r| r.render_text()),
                ),
                Outcome::Unknown => (PromiseVerdict::Unknown, checked, v.unknown_reason),
            }
        }
        Err(e) => (
            PromiseVerdict::Unknown,
            promised.full_name().to_string(),
            Some(e.to_string()),
        ),
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
