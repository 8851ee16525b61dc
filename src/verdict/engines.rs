//! The engines the decision core runs, one by one: the door for benchmarks that measure one
//! engine alone and for tests that compare engines with each other or with the brute-force
//! oracle (`check::oracle`). A command, and any library code that judges a history, asks
//! [`super::decide`] instead, which picks the engine for the evidence, applies the limits and
//! keeps the levels' implications; the engines' own paths (`check::check`,
//! `ser::check_strong`, …) are private to the crate, and `tests/repository/layout.rs` checks that no
//! library code outside `check/`, `ser/` and `verdict/` names them and that only unit tests
//! come through here.
//!
//! Each function is the engine itself, called with the same arguments (no extra work).

use std::time::Duration;

use crate::check::{CheckError, CheckOptions, CheckReport, Level};
use crate::history::History;
use crate::ser::{
    KnownOrderOptions, SerError, SerVerdict, SiPcVerdict, StrongLevel, StrongOptions, StrongReport,
    TimestampReport, TimestampedHistory, TsCheckOptions, TsLevel, Undecided,
};

/// rc, ra, cc, ci: the axiomatic checkers (AWDIT's rc/ra/cc, Plume's ci) with the read
/// consistency checks before them (`check::check`).
#[inline]
pub fn check(
    history: &History,
    level: Level,
    options: &CheckOptions,
) -> Result<CheckReport, CheckError> {
    crate::check::check(history, level, options)
}

/// pc, si, ser: the commit-order search (Biswas & Enea), Z3 when it gives up, with a witness
/// or a minimal explanation (`ser::check_strong`).
#[inline]
pub fn check_strong(
    history: &History,
    level: StrongLevel,
    options: &StrongOptions,
) -> Result<StrongReport, CheckError> {
    crate::ser::check_strong(history, level, options)
}

/// ser: the fast verdict with its serial order (`ser::is_serializable`).
#[inline]
pub fn is_serializable(
    history: &History,
    timeout: Option<Duration>,
) -> Result<SerVerdict, SerError> {
    crate::ser::is_serializable(history, timeout)
}

/// ser: serializability as a direct Z3 total-order check (`ser::smt`).
#[inline]
pub fn check_serializable(
    history: &History,
    timeout: Option<Duration>,
) -> Result<SerVerdict, SerError> {
    crate::ser::check_serializable(history, timeout)
}

/// pc, si: the direct Z3 check (positions and snapshot cuts) with a witness commit order
/// (`ser::smt_si_pc`).
#[inline]
pub fn check_si_pc(history: &History, level: Level, timeout: Option<Duration>) -> SiPcVerdict {
    crate::ser::check_si_pc(history, level, timeout)
}

/// pc, si: the brute-force oracle's verdict, with the Z3 check's witness order on a pass
/// (`ser::smt_si_pc`).
#[inline]
pub fn satisfies_si_pc(history: &History, level: Level, timeout: Option<Duration>) -> SiPcVerdict {
    crate::ser::satisfies_si_pc(history, level, timeout)
}

/// si, ser from the start and commit timestamps a database assigned (Chronos, `ser::chronos`).
#[inline]
pub fn check_timestamps(
    history: &TimestampedHistory,
    level: TsLevel,
    options: &TsCheckOptions,
) -> TimestampReport {
    crate::ser::check_timestamps(history, level, options)
}

/// pc, si, ser on the dependency graph of a history whose write order is known (list-append,
/// writer-naming formats), given its causal report (`ser::dependency_graph`).
#[inline]
pub fn check_known_order(
    history: &History,
    level: Level,
    causal: &CheckReport,
    options: &KnownOrderOptions,
) -> Result<StrongReport, Undecided> {
    crate::ser::check_known_order(history, level, causal, options)
}
