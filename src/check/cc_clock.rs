//! The happens-before clocks of the causal saturation (`cc.rs`), as the pass over the
//! topological order sees them: one clock ([`Clock`]), the live clocks ([`Clocks`]), and why
//! the pass stopped ([`CcStopped`]). The dense and sparse clocks (`cc.rs`) and the chunked
//! ones (`cc_chunked.rs`) implement them.

use crate::history::TxnId;

/// A key with at most this many writers per session is scanned linearly instead of binary
/// searched session by session.
pub(super) const LINEAR_SCAN_FACTOR: usize = 4;

/// Why the causal saturation stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CcStopped {
    /// The clocks would keep more than `entries` entries (`bytes` bytes), over the budget.
    Memory { entries: usize, bytes: u64 },
    /// The deadline passed.
    Timeout,
    /// A stop was requested (Ctrl-C).
    Interrupted,
}

/// One happens-before clock, read-only: per session, the latest transaction that happens
/// before (or is) its owner, 0 when none does.
pub(super) trait Clock: Copy {
    /// The entry of session `s`.
    fn get(self, s: u32) -> TxnId;
    /// `out` = the sessions where `self` is ahead of `lo`, with both entries, by session.
    fn ahead_of(self, lo: Self, out: &mut Vec<(u32, TxnId, TxnId)>);
    /// A key with at most this many writers is scanned backwards (one clock look-up per
    /// writer) rather than binary searched in each session where `self` is ahead of `lo`.
    fn linear_scan_limit(self, lo: Self) -> usize;
}

/// The clocks live during the pass over the topological order: the clock being built for the
/// current transaction, the clocks of transactions with readers still to be processed, and
/// per session the clock of its latest processed transaction.
pub(super) trait Clocks {
    /// A read-only view of one clock.
    type View<'a>: Clock
    where
        Self: 'a;
    /// Starts the clock of the next transaction of session `s` from the session's clock.
    fn start(&mut self, s: usize);
    /// Joins the (live) clock of writer `w` into the current clock.
    fn join(&mut self, w: TxnId) -> Result<(), CcStopped>;
    /// The current clock.
    fn current(&self) -> Self::View<'_>;
    /// The live clock of `t` (all zeros for the initial transaction).
    fn of(&self, t: TxnId) -> Self::View<'_>;
    /// `w`'s last reader is processed: its clock is no longer needed.
    fn release(&mut self, w: TxnId);
    /// `t3` of session `s` is processed: its own entry is set, and the current clock is kept
    /// as `t3`'s live clock when `live` (it has readers to come).
    fn finish(&mut self, t3: TxnId, s: usize, live: bool) -> Result<(), CcStopped>;
}
