//! The one place `pipeline/` asks "is this history valid at level L?" (serializability
//! included): the observed run's check and the independent re-verification of a prediction
//! ([`super::run`]). It is a view of the crate's single decision core, [`crate::verdict`]:
//! the same verdict `check` gives the same history. (The database's promise
//! ([`super::promise`]), random exploration ([`super::rank`]) and the replay's verdict
//! (`workloads::validate`) ask the core directly.)

use std::time::Duration;

use crate::check::{CheckError, Level};
use crate::history::History;
use crate::verdict::{self, EvidenceChoice, Input, Limits, Outcome};

/// A verdict of [`judge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judged {
    /// Valid at the level.
    Holds,
    /// Violated: how, in words (the report of the check that showed it).
    Violated(String),
    /// Undecided (time limit, or a history the checker could not take): why, when it said.
    Unknown(Option<String>),
}

/// Whether `h` is valid at `level`, by the decision core on the evidence the history
/// carries; `timeout` bounds the check.
pub(crate) fn judge(
    h: &History,
    level: Level,
    timeout: Option<Duration>,
) -> Result<Judged, CheckError> {
    Ok(match decide(h, level, timeout) {
        Ok(v) => match v.verdict {
            Outcome::Consistent => Judged::Holds,
            Outcome::Violated => Judged::Violated(text_of(&v)),
            Outcome::Unknown => Judged::Unknown(v.unknown_reason),
        },
        Err(e) => Judged::Unknown(Some(e.to_string())),
    })
}

/// A violation as `check` shows it: the anomaly's one name, the report in words, its DOT
/// drawing (what `check --dot` writes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// The anomaly as every view names it ([`verdict::Verdict::anomaly_label`]).
    pub label: Option<String>,
    /// The check's report in words.
    pub text: String,
    /// The check's drawing of the violation.
    pub dot: Option<String>,
}

/// The violation of `level` by `h`, as `check` shows it; `None` when `h` is valid at `level`
/// or the check did not decide.
pub(crate) fn violation(h: &History, level: Level, timeout: Option<Duration>) -> Option<Violation> {
    let v = decide(h, level, timeout).ok()?;
    (v.verdict == Outcome::Violated).then(|| Violation {
        label: v.anomaly_label(),
        text: text_of(&v),
        dot: v.report.as_ref().and_then(|r| r.render_dot()),
    })
}

fn decide(
    h: &History,
    level: Level,
    timeout: Option<Duration>,
) -> Result<verdict::Verdict, verdict::DecideError> {
    let limits = Limits {
        timeout,
        ..Limits::default()
    };
    Input::of(h)
        .map_err(verdict::DecideError::from)
        .and_then(|input| verdict::decide(&input, level, EvidenceChoice::Auto, &limits))
}

fn text_of(v: &verdict::Verdict) -> String {
    v.report
        .as_ref()
        .map_or_else(|| v.line(), |r| r.render_text())
}
