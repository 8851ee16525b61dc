//! The one place `pipeline/` asks "is this history valid at level L?" (serializability
//! included): the observed run's check and the independent re-verification of a prediction
//! ([`super::run`]), the database's promise ([`super::promise`]), random exploration
//! ([`super::rank`]) and the commit order that names an anomaly ([`super::anomaly_name`]).
//! Every such question goes through [`judge`], so that the decision can be swapped for the
//! crate's single decision core in one place (issue 19). Which checkers answer is named by
//! [`Checkers`], one variant per family the pipelines use today. (The replay's verdict is
//! decided in `workloads::validate`, below this layer; the predictor's own judgements in
//! `predict::judge`.)

use std::time::Duration;

use crate::check::{self, CheckError, CheckOptions, Level};
use crate::history::{History, TxnId};
use crate::ser::{self, SerVerdict, SiPcVerdict, StrongLevel, StrongOptions};

/// Which checkers answer [`judge`]. Both use the axiomatic checker [`check::check`] for rc,
/// ra and cc (and the other levels it decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checkers {
    /// pc, si: [`ser::satisfies_si_pc`] (brute force on small histories, else Z3), with a
    /// witness commit order; ser: the Z3 check [`ser::check_serializable`], with a serial
    /// order.
    Smt,
    /// pc, si, ser: the exact black-box checker [`ser::check_strong`] (Biswas & Enea's
    /// search, Z3 on what it gives up on), whose violations come shrunk to a minimal failing
    /// set of transactions.
    Strong,
}

/// A verdict of [`judge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judged {
    /// Valid at the level; with [`Checkers::Smt`] at pc, si and ser the witness order (`None`
    /// otherwise).
    Holds(Option<Vec<TxnId>>),
    /// Violated: how, in words.
    Violated(String),
    /// Undecided (time limit, or a history the checker could not take): why, when it said.
    Unknown(Option<String>),
}

/// Whether `h` is valid at `level`, by `checkers`; `timeout` bounds the pc, si and ser checks.
/// The axiomatic checker's input errors are the error (the callers decide what they mean);
/// the serializability check's count as unknown.
pub(crate) fn judge(
    h: &History,
    level: Level,
    checkers: Checkers,
    timeout: Option<Duration>,
) -> Result<Judged, CheckError> {
    match (StrongLevel::from_level(level), checkers) {
        (None, _) => {
            let report = check::check(h, level, &CheckOptions::default())?;
            Ok(if report.is_consistent() {
                Judged::Holds(None)
            } else {
                Judged::Violated(report.render_text())
            })
        }
        (Some(_), Checkers::Smt) if level == Level::Serializable => {
            Ok(match ser::check_serializable(h, timeout) {
                Ok(SerVerdict::Serializable { order }) => Judged::Holds(Some(order)),
                Ok(SerVerdict::Unserializable) => {
                    Judged::Violated("no serial order explains the history".to_string())
                }
                Ok(SerVerdict::Unknown { reason }) => Judged::Unknown(Some(reason)),
                Err(e) => Judged::Unknown(Some(e.to_string())),
            })
        }
        (Some(_), Checkers::Smt) => Ok(match ser::satisfies_si_pc(h, level, timeout) {
            SiPcVerdict::Satisfies { order } => Judged::Holds(Some(order)),
            SiPcVerdict::Violates { reason } => Judged::Violated(reason),
            SiPcVerdict::Unknown { reason } => Judged::Unknown(Some(reason)),
        }),
        (Some(strong), Checkers::Strong) => {
            let options = StrongOptions {
                timeout,
                ..StrongOptions::default()
            };
            let report = ser::check_strong(h, strong, &options)?;
            Ok(match report.verdict {
                ser::Verdict::Consistent => Judged::Holds(None),
                ser::Verdict::Violated => Judged::Violated(report.render_text()),
                ser::Verdict::Unknown => Judged::Unknown(report.unknown_reason.clone()),
            })
        }
    }
}
