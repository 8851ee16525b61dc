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
    let limits = Limits {
        timeout,
        ..Limits::default()
    };
    let decided = Input::of(h)
        .map_err(verdict::DecideError::from)
        .and_then(|input| verdict::decide(&input, level, EvidenceChoice::Auto, &limits));
    Ok(match decided {
        Ok(v) => match v.verdict {
            Outcome::Consistent => Judged::Holds,
            Outcome::Violated => Judged::Violated(
                v.report
                    .as_ref()
                    .map_or_else(|| v.line(), |r| r.render_text()),
            ),
            Outcome::Unknown => Judged::Unknown(v.unknown_reason),
        },
        Err(e) => Judged::Unknown(Some(e.to_string())),
    })
}
