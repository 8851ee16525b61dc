//! Causal consistency saturation: AWDIT (Møldrup & Pavlogiannis, PLDI'25) §3.3, Algorithm 3
//! "CheckCC" with "ComputeHB", O(n·k); the axiom is Biswas & Enea's Causal (OOPSLA'19 Fig. 2):
//!
//! t1 ≠ t2 ∧ t1 →wr_x t3 ∧ t2 writes x ∧ t2 →(so ∪ wr)⁺ t3 ⇒ t2 →co t1.
//!
//! Happens-before vector clocks are computed in a topological order of so ∪ wr (which must be
//! acyclic: a cycle is a CyclicCO). A clock holds, per session, the latest transaction that
//! happens before (or is) its owner; ids are session-contiguous, so a clock entry is a
//! transaction id and the join is an integer max. The writer itself is joined into the
//! reader's clock (the off-by-one of the paper's pseudocode; AWDIT's artifact does the same).
//!
//! For each external read of x from t1 in t3 and each session s′, only the so-latest writer t2
//! of x in s′ that happens before t3 needs an edge t2 → t1 (its session predecessors follow
//! by so), and only if it does not happen before t1 already (then the edge is implied). The
//! key's writer list is sorted by id, hence grouped by session in session order: a short list
//! is scanned backwards once; a long one is binary searched in each session where t3's clock
//! is ahead of t1's.
//! A clock is kept only while some reader of its transaction has not been processed (AWDIT
//! §5 frees clocks the same way), and a writer the reader's clock already holds is not joined.
//! Up to [`DENSE_SESSIONS`] sessions the clocks are chunked and shared between transactions
//! (`cc_chunked.rs`): memory grows with what clocks change, not with live clocks times k.
//!
//! With more sessions (e.g. one session per request) even a row of chunk ids per live
//! transaction is quadratic in k, so clocks are then sparse: the
//! sorted (session, transaction) pairs of the sessions that actually happen before, joined by
//! merging; a session's clock is dropped after its last transaction. Per read, the cheaper of
//! the backward scan (one binary search into the clock per writer) and the walk over the
//! sessions where t3's clock is ahead of t1's is taken. Memory is the total size of the live
//! clocks; beyond the memory budget ([`CcLimits`], from `--memory`; by default
//! [`MAX_CLOCK_ENTRIES`]) the check gives up ([`CcStopped::Memory`]) instead of exhausting
//! memory. The pass also gives up at the deadline or on Ctrl-C, looking every few thousand
//! transactions.

use super::cc_chunked::{positions_fit_u16, ChunkedClocks, CHUNKED_ENTRY_BYTES};
pub(crate) use super::cc_clock::CcStopped;
#[cfg(test)]
use super::cc_clock::LINEAR_SCAN_FACTOR;
use super::cc_clock::{Clock, Clocks};
use super::graph::{CommitGraph, EdgeList, SESSION_ORDER};
use super::read_consistency::NONE;
use crate::history::{History, OpId, Operation, TxnId, INITIAL_TXN};

/// Up to this many sessions clocks are dense arrays of one entry per session (4 bytes each;
/// the per-session clocks cost k² entries, 64 MiB at this bound); beyond, sparse.
pub(crate) const DENSE_SESSIONS: usize = 4096;

/// The most clock entries kept at once without a memory budget (512 MiB of sparse entries).
pub(crate) const MAX_CLOCK_ENTRIES: usize = 64 << 20;

/// Bytes of one sparse clock entry (a session and a transaction).
pub(crate) const SPARSE_ENTRY_BYTES: u64 = 8;
/// Bytes of one dense clock entry.
#[cfg(test)]
pub(crate) const DENSE_ENTRY_BYTES: u64 = 4;

/// How often (in transactions) the pass looks at the deadline and at Ctrl-C.
const CHECK_EVERY: usize = 4096;

/// The limits of one causal saturation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CcLimits {
    /// The memory budget for the clocks in bytes (`None`: [`MAX_CLOCK_ENTRIES`] entries).
    pub memory: Option<u64>,
    /// Give up at this instant.
    pub deadline: Option<std::time::Instant>,
}

impl CcLimits {
    /// The most entries kept at once by clocks of `entry_bytes` bytes.
    fn max_entries(&self, entry_bytes: u64) -> usize {
        match self.memory {
            Some(m) => usize::try_from(m / entry_bytes).unwrap_or(usize::MAX),
            None => MAX_CLOCK_ENTRIES,
        }
    }

    /// The memory budget in bytes (`None`: [`MAX_CLOCK_ENTRIES`] entries of 4 bytes).
    fn max_bytes(&self) -> u64 {
        self.memory
            .unwrap_or(MAX_CLOCK_ENTRIES as u64 * CHUNKED_ENTRY_BYTES)
    }
}

/// How the happens-before clocks are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClockKind {
    /// k entries per clock in chunks shared between clocks ([`super::cc_chunked`]), 16-bit
    /// positions when every session is shorter than 2^16 transactions.
    Chunked,
    /// Chunked with 32-bit positions whatever the sessions' lengths.
    #[cfg(test)]
    ChunkedWide,
    /// The sorted entries of the sessions that actually happen before ([`SparseClocks`]).
    Sparse,
    /// k entries per clock, each its own ([`DenseClocks`]): the reference the other two are
    /// tested against.
    #[cfg(test)]
    Dense,
}

/// Adds to `out` the edges t2 → t1 (cause: t3's read of x from t1) that saturate the commit
/// order for Causal consistency. `order` is a complete topological order of so ∪ wr.
pub(crate) fn saturate(
    history: &History,
    external_writer: &[TxnId],
    graph: &CommitGraph,
    order: &[TxnId],
    out: &mut EdgeList,
    limits: &CcLimits,
) -> Result<(), CcStopped> {
    let kind = if history.sessions().len() > DENSE_SESSIONS {
        ClockKind::Sparse
    } else {
        ClockKind::Chunked
    };
    saturate_with(history, external_writer, graph, order, out, kind, limits)
}

/// [`saturate`] with the clocks asked for.
pub(crate) fn saturate_with(
    history: &History,
    external_writer: &[TxnId],
    graph: &CommitGraph,
    order: &[TxnId],
    out: &mut EdgeList,
    kind: ClockKind,
    limits: &CcLimits,
) -> Result<(), CcStopped> {
    match kind {
        ClockKind::Chunked if positions_fit_u16(history) => saturate_in(
            history,
            external_writer,
            graph,
            order,
            out,
            ChunkedClocks::<u16>::new(history, limits.max_bytes()),
            limits,
        ),
        ClockKind::Chunked => saturate_in(
            history,
            external_writer,
            graph,
            order,
            out,
            ChunkedClocks::<u32>::new(history, limits.max_bytes()),
            limits,
        ),
        #[cfg(test)]
        ClockKind::ChunkedWide => saturate_in(
            history,
            external_writer,
            graph,
            order,
            out,
            ChunkedClocks::<u32>::new(history, limits.max_bytes()),
            limits,
        ),
        ClockKind::Sparse => saturate_in(
            history,
            external_writer,
            graph,
            order,
            out,
            SparseClocks::new(history, limits.max_entries(SPARSE_ENTRY_BYTES)),
            limits,
        ),
        #[cfg(test)]
        ClockKind::Dense => saturate_in(
            history,
            external_writer,
            graph,
            order,
            out,
            DenseClocks::new(history, limits.max_entries(DENSE_ENTRY_BYTES)),
            limits,
        ),
    }
}

#[cfg(test)]
impl Clock for &[u32] {
    #[inline]
    fn get(self, s: u32) -> TxnId {
        self[s as usize]
    }
    fn ahead_of(self, lo: Self, out: &mut Vec<(u32, TxnId, TxnId)>) {
        out.clear();
        out.extend(
            (0..self.len() as u32)
                .zip(self.iter().zip(lo))
                .filter(|&(_, (&h, &l))| h > l)
                .map(|(s, (&h, &l))| (s, h, l)),
        );
    }
    #[inline]
    fn linear_scan_limit(self, _lo: Self) -> usize {
        LINEAR_SCAN_FACTOR * self.len()
    }
}

/// Dense clocks: k entries each, kept in one pool of k-entry slots reused once released; the
/// reference the chunked and sparse clocks are tested against.
#[cfg(test)]
struct DenseClocks {
    k: usize,
    session_clock: Vec<u32>,
    slot_of: Vec<u32>,
    pool: Vec<u32>,
    free: Vec<u32>,
    zeros: Vec<u32>,
    clock: Vec<u32>,
    max_entries: usize,
}

#[cfg(test)]
impl DenseClocks {
    fn new(history: &History, max_entries: usize) -> DenseClocks {
        let k = history.sessions().len();
        DenseClocks {
            max_entries,
            k,
            session_clock: vec![0; k * k],
            slot_of: vec![NONE; history.txn_count()],
            pool: Vec::new(),
            free: Vec::new(),
            zeros: vec![0; k],
            clock: vec![0; k],
        }
    }
}

#[cfg(test)]
impl Clocks for DenseClocks {
    type View<'a> = &'a [u32];
    fn start(&mut self, s: usize) {
        let k = self.k;
        self.clock
            .copy_from_slice(&self.session_clock[s * k..(s + 1) * k]);
    }
    #[inline]
    fn join(&mut self, w: TxnId) -> Result<(), CcStopped> {
        let k = self.k;
        let slot = self.slot_of[w as usize] as usize;
        for (c, &v) in self
            .clock
            .iter_mut()
            .zip(&self.pool[slot * k..(slot + 1) * k])
        {
            *c = (*c).max(v);
        }
        Ok(())
    }
    #[inline]
    fn current(&self) -> &[u32] {
        &self.clock
    }
    #[inline]
    fn of(&self, t: TxnId) -> &[u32] {
        if t == INITIAL_TXN {
            &self.zeros
        } else {
            let slot = self.slot_of[t as usize] as usize;
            &self.pool[slot * self.k..(slot + 1) * self.k]
        }
    }
    fn release(&mut self, w: TxnId) {
        self.free.push(self.slot_of[w as usize]);
        self.slot_of[w as usize] = NONE;
    }
    fn finish(&mut self, t3: TxnId, s: usize, live: bool) -> Result<(), CcStopped> {
        let k = self.k;
        self.clock[s] = t3;
        self.session_clock[s * k..(s + 1) * k].copy_from_slice(&self.clock);
        if live {
            let slot = match self.free.pop() {
                Some(slot) => slot,
                None => {
                    let entries = self.pool.len() + k;
                    let memory = CcStopped::Memory {
                        entries: self.max_entries,
                        bytes: self.max_entries as u64 * DENSE_ENTRY_BYTES,
                    };
                    if entries > self.max_entries {
                        return Err(memory);
                    }
                    // Grow fallibly (doubling), so that an address-space limit below the
                    // budget is an unknown verdict, not an abort.
                    if self.pool.capacity() < entries
                        && self.pool.try_reserve(self.pool.len().max(k)).is_err()
                        && self.pool.try_reserve_exact(k).is_err()
                    {
                        return Err(memory);
                    }
                    self.pool.extend_from_slice(&self.zeros);
                    (self.pool.len() / k - 1) as u32
                }
            };
            self.slot_of[t3 as usize] = slot;
            self.pool[slot as usize * k..(slot as usize + 1) * k].copy_from_slice(&self.clock);
        }
        Ok(())
    }
}

/// A sparse clock entry: a session and its latest transaction that happens before the owner.
type Entry = (u32, TxnId);

impl Clock for &[Entry] {
    fn get(self, s: u32) -> TxnId {
        match self.binary_search_by_key(&s, |&(session, _)| session) {
            Ok(i) => self[i].1,
            Err(_) => 0,
        }
    }
    fn ahead_of(self, lo: Self, out: &mut Vec<(u32, TxnId, TxnId)>) {
        out.clear();
        let mut j = 0;
        for &(s, h) in self {
            while j < lo.len() && lo[j].0 < s {
                j += 1;
            }
            let l = if j < lo.len() && lo[j].0 == s {
                lo[j].1
            } else {
                0
            };
            if h > l {
                out.push((s, h, l));
            }
        }
    }
    fn linear_scan_limit(self, lo: Self) -> usize {
        self.len() + lo.len()
    }
}

/// `out` = the entrywise maximum of `a` and `b`.
fn join(a: &[Entry], b: &[Entry], out: &mut Vec<Entry>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1.max(b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

/// Sparse clocks: the sorted entries of the sessions that actually happen before; a session's
/// clock is dropped after its last transaction. `entries` counts the entries kept.
struct SparseClocks {
    last_committed: Vec<TxnId>,
    session_clock: Vec<Vec<Entry>>,
    live: Vec<Vec<Entry>>,
    entries: usize,
    clock: Vec<Entry>,
    merged: Vec<Entry>,
    /// The session clock taken by [`Clocks::start`], its buffer reused by [`Clocks::finish`].
    previous_clock: Vec<Entry>,
    max_entries: usize,
}

impl SparseClocks {
    fn new(history: &History, max_entries: usize) -> SparseClocks {
        let k = history.sessions().len();
        // The last committed transaction of each session: its clock is not needed by the
        // session.
        let mut last_committed = vec![NONE; k];
        for (t, txn) in history.txns().iter().enumerate() {
            if t as TxnId != INITIAL_TXN && txn.is_committed() {
                last_committed[txn.session as usize] = t as TxnId;
            }
        }
        SparseClocks {
            last_committed,
            session_clock: vec![Vec::new(); k],
            live: vec![Vec::new(); history.txn_count()],
            entries: 0,
            clock: Vec::new(),
            merged: Vec::new(),
            previous_clock: Vec::new(),
            max_entries,
        }
    }
}

impl Clocks for SparseClocks {
    type View<'a> = &'a [Entry];
    fn start(&mut self, s: usize) {
        self.previous_clock = std::mem::take(&mut self.session_clock[s]);
        self.entries -= self.previous_clock.len();
        self.clock.clear();
        self.clock.extend_from_slice(&self.previous_clock);
    }
    fn join(&mut self, w: TxnId) -> Result<(), CcStopped> {
        join(&self.clock, &self.live[w as usize], &mut self.merged);
        std::mem::swap(&mut self.clock, &mut self.merged);
        Ok(())
    }
    fn current(&self) -> &[Entry] {
        &self.clock
    }
    fn of(&self, t: TxnId) -> &[Entry] {
        if t == INITIAL_TXN {
            &[]
        } else {
            &self.live[t as usize]
        }
    }
    fn release(&mut self, w: TxnId) {
        self.entries -= self.live[w as usize].len();
        self.live[w as usize] = Vec::new();
    }
    fn finish(&mut self, t3: TxnId, s: usize, live: bool) -> Result<(), CcStopped> {
        match self
            .clock
            .binary_search_by_key(&(s as u32), |&(session, _)| session)
        {
            Ok(j) => self.clock[j].1 = t3,
            Err(j) => self.clock.insert(j, (s as u32, t3)),
        }
        if live {
            self.entries += self.clock.len();
            self.live[t3 as usize] = self.clock.clone();
        }
        if self.last_committed[s] != t3 {
            self.entries += self.clock.len();
            let mut kept = std::mem::take(&mut self.previous_clock);
            kept.clear();
            kept.extend_from_slice(&self.clock);
            self.session_clock[s] = kept;
        }
        if self.entries > self.max_entries {
            return Err(CcStopped::Memory {
                entries: self.max_entries,
                bytes: self.max_entries as u64 * SPARSE_ENTRY_BYTES,
            });
        }
        Ok(())
    }
}

/// [`saturate`] with the given clocks (see the module documentation): along the topological
/// order, each committed transaction `t3`'s clock is its session predecessor's joined with its
/// writers', then each of its reads derives the ww edges from the writers that happen before
/// `t3` but not before the writer read.
fn saturate_in<C: Clocks>(
    history: &History,
    external_writer: &[TxnId],
    graph: &CommitGraph,
    order: &[TxnId],
    out: &mut EdgeList,
    mut clocks: C,
    limits: &CcLimits,
) -> Result<(), CcStopped> {
    let txns = history.txns();
    let mut pass = CcPass::new(history, graph);
    for (step, &t3) in order.iter().enumerate() {
        if step % CHECK_EVERY == CHECK_EVERY - 1 {
            if crate::interrupt::requested() {
                return Err(CcStopped::Interrupted);
            }
            if limits
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
            {
                return Err(CcStopped::Timeout);
            }
        }
        let txn = &txns[t3 as usize];
        if t3 == INITIAL_TXN || !txn.is_committed() {
            continue;
        }
        let s = txn.session as usize;
        clocks.start(s);
        pass.gather_reads(txn.ops(), external_writer);
        pass.join_writers(&mut clocks)?;
        pass.derive_ww(t3, &clocks, out);
        clocks.finish(t3, s, pass.pending[t3 as usize] > 0)?;
        pass.release_writers(&mut clocks);
    }
    Ok(())
}

/// What one pass of [`saturate_in`] keeps besides the clocks.
struct CcPass<'h> {
    ops: &'h [Operation],
    /// The first transaction of each session.
    session_start: Vec<TxnId>,
    /// Readers still to be processed, per writer (one per distinct reader transaction).
    pending: Vec<u32>,
    /// The current transaction's external reads, (writer, op), sorted.
    reads: Vec<(TxnId, OpId)>,
    /// Scratch: the sessions where the current clock is ahead of a writer's.
    ahead: Vec<(u32, TxnId, TxnId)>,
    /// The (reader, writer) whose read of each key was handled last.
    key_stamp: Vec<u32>,
    key_writer: Vec<u32>,
    /// Session of each committed transaction; NONE for aborted ones and the initial one.
    session_of: Vec<u32>,
    /// Per key, its committed writers other than the initial transaction, with their
    /// sessions, ascending (a compact copy of `History::writers_of` for the backward scans).
    writer_offsets: Vec<usize>,
    writer_list: Vec<(TxnId, u32)>,
    /// Sessions already scanned for the current key (marked `done_mark`).
    done: Vec<u32>,
    done_mark: u32,
}

impl<'h> CcPass<'h> {
    fn new(history: &'h History, graph: &CommitGraph) -> CcPass<'h> {
        let n = history.txn_count();
        let txns = history.txns();
        let mut pending = vec![0u32; n];
        for (v, count) in pending.iter_mut().enumerate() {
            let (_, causes) = graph.base_edges(v as TxnId);
            *count = causes.iter().filter(|&&c| c != SESSION_ORDER).count() as u32;
        }
        let session_of: Vec<u32> = txns
            .iter()
            .enumerate()
            .map(|(t, txn)| {
                if t as TxnId != INITIAL_TXN && txn.is_committed() {
                    txn.session
                } else {
                    NONE
                }
            })
            .collect();
        let mut writer_offsets = Vec::with_capacity(history.key_count() + 1);
        let mut writer_list: Vec<(TxnId, u32)> = Vec::new();
        writer_offsets.push(0usize);
        for x in 0..history.key_count() {
            writer_list.extend(
                history
                    .writers_of(x as u32)
                    .iter()
                    .filter(|&&w| session_of[w as usize] != NONE)
                    .map(|&w| (w, session_of[w as usize])),
            );
            writer_offsets.push(writer_list.len());
        }
        CcPass {
            ops: history.ops(),
            session_start: history.sessions().iter().map(|s| s.txns().start).collect(),
            pending,
            reads: Vec::new(),
            ahead: Vec::new(),
            key_stamp: vec![NONE; history.key_count()],
            key_writer: vec![NONE; history.key_count()],
            session_of,
            writer_offsets,
            writer_list,
            done: vec![0u32; history.sessions().len()],
            done_mark: 0,
        }
    }

    /// The external reads of the current transaction (its operations `ops`), by writer.
    #[inline]
    fn gather_reads(&mut self, ops: std::ops::Range<OpId>, external_writer: &[TxnId]) {
        self.reads.clear();
        for op in ops {
            let w = external_writer[op as usize];
            if w != NONE {
                self.reads.push((w, op));
            }
        }
        self.reads.sort_unstable();
    }

    /// HB_t3 = HB of its session predecessor ⊔ the clocks of its writers (writer included).
    /// A writer the clock already holds adds nothing (clocks are transitively closed: its
    /// clock is below the clock that holds it), so it is not joined.
    #[inline]
    fn join_writers<C: Clocks>(&self, clocks: &mut C) -> Result<(), CcStopped> {
        let mut previous = NONE;
        for &(w, _) in &self.reads {
            if w != previous
                && w != INITIAL_TXN
                && clocks.current().get(self.session_of[w as usize]) < w
            {
                clocks.join(w)?;
            }
            previous = w;
        }
        Ok(())
    }

    /// Saturation, one group of reads per writer t1.
    #[inline]
    fn derive_ww<C: Clocks>(&mut self, t3: TxnId, clocks: &C, out: &mut EdgeList) {
        let reads = std::mem::take(&mut self.reads);
        let clock = clocks.current();
        let mut i = 0;
        while i < reads.len() {
            let t1 = reads[i].0;
            let mut end = i;
            while end < reads.len() && reads[end].0 == t1 {
                end += 1;
            }
            self.derive_ww_from(t3, t1, &reads[i..end], clock, clocks.of(t1), out);
            i = end;
        }
        self.reads = reads;
    }

    /// The ww edges `t2 → t1` for `t3`'s reads `reads` from `t1`: per key, the latest writer
    /// `t2` of each session that happens before `t3` but not before `t1`.
    #[inline]
    fn derive_ww_from<V: Clock>(
        &mut self,
        t3: TxnId,
        t1: TxnId,
        reads: &[(TxnId, OpId)],
        clock: V,
        t1_clock: V,
        out: &mut EdgeList,
    ) {
        let mut ahead_known = false;
        for &(_, op) in reads {
            let x = self.ops[op as usize].key as usize;
            if self.key_stamp[x] == t3 && self.key_writer[x] == t1 {
                continue; // already handled this key from this writer
            }
            self.key_stamp[x] = t3;
            self.key_writer[x] = t1;
            let writers = &self.writer_list[self.writer_offsets[x]..self.writer_offsets[x + 1]];
            if writers.len() <= clock.linear_scan_limit(t1_clock) {
                // Few writers: one backward scan finds, per session, the latest writer
                // that happens before t3.
                self.done_mark = self.done_mark.wrapping_add(1);
                if self.done_mark == 0 {
                    self.done.fill(0);
                    self.done_mark = 1;
                }
                let (done, done_mark) = (&mut self.done, self.done_mark);
                for &(t2, s2) in writers.iter().rev() {
                    if done[s2 as usize] == done_mark || t2 > clock.get(s2) {
                        continue;
                    }
                    done[s2 as usize] = done_mark;
                    if t2 > t1_clock.get(s2) {
                        out.push(t2, t1, op);
                    }
                }
                continue;
            }
            // Many writers: binary search in each session where t3 knows more than t1.
            if !ahead_known {
                clock.ahead_of(t1_clock, &mut self.ahead);
                ahead_known = true;
            }
            for &(s2, hi, lo) in &self.ahead {
                let floor = lo.max(self.session_start[s2 as usize].saturating_sub(1));
                let j = writers.partition_point(|&(w, _)| w <= hi);
                if j > 0 && writers[j - 1].0 > floor {
                    out.push(writers[j - 1].0, t1, op);
                }
            }
        }
    }

    /// Releases the clocks of writers whose readers are all processed (after t3's clock is
    /// stored: it may share parts of theirs).
    #[inline]
    fn release_writers<C: Clocks>(&mut self, clocks: &mut C) {
        let mut previous = NONE;
        for &(w, _) in &self.reads {
            if w != previous && w != INITIAL_TXN {
                self.pending[w as usize] -= 1;
                if self.pending[w as usize] == 0 {
                    clocks.release(w);
                }
            }
            previous = w;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::read_consistency;
    use crate::check::test_util::h;
    use crate::generate::{generate, Consistency, GenerateParams, KeyDistribution};

    const KINDS: [ClockKind; 4] = [
        ClockKind::Dense,
        ClockKind::Chunked,
        ClockKind::ChunkedWide,
        ClockKind::Sparse,
    ];
    const NO_LIMITS: CcLimits = CcLimits {
        memory: None,
        deadline: None,
    };

    /// The edges saturation infers on `hist` (its base commit graph `graph` in topological
    /// `order`) with clocks of `kind`.
    fn saturated(
        hist: &History,
        external_writer: &[TxnId],
        graph: &CommitGraph,
        order: &[TxnId],
        kind: ClockKind,
    ) -> EdgeList {
        let mut out = EdgeList::default();
        saturate_with(
            hist,
            external_writer,
            graph,
            order,
            &mut out,
            kind,
            &NO_LIMITS,
        )
        .unwrap();
        out
    }

    /// The inferred pairs (sorted, distinct) with each kind of clocks; they must agree.
    fn edges(spec: &str) -> Vec<(TxnId, TxnId)> {
        let hist = h(spec);
        let reads = read_consistency::check(&hist, true);
        let graph = CommitGraph::base(&hist, &reads.external_writer).unwrap();
        let (order, acyclic) = graph.topological_order(true);
        assert!(acyclic);
        let runs: Vec<_> = KINDS
            .iter()
            .map(|&kind| saturated(&hist, &reads.external_writer, &graph, &order, kind).pairs())
            .collect();
        for (kind, run) in KINDS.iter().zip(&runs) {
            assert_eq!(&runs[0], run, "{kind:?} clocks agree with dense ones");
        }
        runs[0].clone()
    }

    /// On generated histories, chunked clocks infer exactly the edges (with their causes) of
    /// the dense clocks, and sparse ones the same pairs. `sessions` up to 70 spans several chunks
    /// of [`super::super::cc_chunked`] clocks, a partial last one included.
    fn same_edges_as_dense(max_sessions: u64, seeds: std::ops::Range<u64>) -> usize {
        let mut compared = 0;
        for seed in seeds {
            let params = GenerateParams {
                sessions: 1 + (seed % max_sessions) as u32,
                txns_per_session: 1 + (seed % 5) as u32,
                ops_per_txn: 4,
                keys: 1 + (seed % 11) as u32,
                read_ratio: 0.5 + (seed % 3) as f64 * 0.15,
                distribution: KeyDistribution::Uniform,
                abort_ratio: 0.1,
                consistency: [
                    Consistency::None,
                    Consistency::Causal,
                    Consistency::ReadAtomic,
                ][(seed % 3) as usize],
                seed,
            };
            let hist = generate(&params).unwrap();
            let reads = read_consistency::check(&hist, true);
            let Ok(graph) = CommitGraph::base(&hist, &reads.external_writer) else {
                continue;
            };
            let (order, acyclic) = graph.topological_order(true);
            if !acyclic {
                continue;
            }
            let run = |kind| {
                let out = saturated(&hist, &reads.external_writer, &graph, &order, kind);
                let mut edges = out.edges().to_vec();
                edges.sort_unstable();
                edges
            };
            let dense = run(ClockKind::Dense);
            assert_eq!(dense, run(ClockKind::Chunked), "chunked, seed {seed}");
            assert_eq!(
                dense,
                run(ClockKind::ChunkedWide),
                "chunked wide, seed {seed}"
            );
            let pairs = |edges: Vec<(TxnId, TxnId, OpId)>| {
                let mut p: Vec<_> = edges.iter().map(|&(a, b, _)| (a, b)).collect();
                p.sort_unstable();
                p
            };
            assert_eq!(
                pairs(dense),
                pairs(run(ClockKind::Sparse)),
                "sparse, seed {seed}"
            );
            compared += 1;
        }
        compared
    }

    #[test]
    fn sparse_and_chunked_clocks_infer_the_same_edges_as_dense_ones() {
        let compared = same_edges_as_dense(7, 0..300);
        assert!(compared > 200, "only {compared} histories compared");
    }

    #[test]
    fn with_many_sessions_chunked_clocks_infer_the_same_edges_as_dense_ones() {
        let compared = same_edges_as_dense(70, 1000..1300);
        assert!(compared > 200, "only {compared} histories compared");
    }

    #[test]
    fn the_writer_itself_joins_the_readers_clock() {
        // t2 →wr t3 →wr t4 and t4 reads x from t1: t2 (a writer of x) happens before t4.
        // Without t3 itself in t4's clock (AWDIT's off-by-one) nothing would be inferred.
        assert_eq!(edges("wx1 / wx2 wy2 | ry2 wz1 | rz1 rx1"), vec![(2, 1)]);
        // Directly read writer: t3 reads y from t2, which writes x.
        assert_eq!(edges("wx1 | wx2 wy2 | ry2 rx1"), vec![(2, 1)]);
    }

    #[test]
    fn only_the_latest_happens_before_writer_per_session_and_no_implied_edges() {
        // t1, t2, t3 write x in one session; t4 reads x from t1 after t3 (via y): t3 → t1
        // only (t2 → t1 follows by so).
        assert_eq!(edges("wx1 / wx2 / wx3 wy3 | ry3 rx1"), vec![(3, 1)]);
        // A writer that happens before t1 already needs no edge.
        assert!(edges("wx1 / wy2 | ry2 wx3 | rx3 ry2").is_empty());
    }

    #[test]
    fn initial_value_read_after_a_causally_earlier_write() {
        assert_eq!(edges("wx1 | rx1 / rx0"), vec![(1, 0)]);
    }

    #[test]
    fn over_the_memory_budget_or_past_the_deadline_the_check_stops() {
        let hist = h("wx1 | rx1 wy1 | ry1 wz1 | rz1");
        let reads = read_consistency::check(&hist, true);
        let graph = CommitGraph::base(&hist, &reads.external_writer).unwrap();
        let (order, _) = graph.topological_order(true);
        for kind in KINDS {
            let run = |limits: CcLimits| {
                saturate_with(
                    &hist,
                    &reads.external_writer,
                    &graph,
                    &order,
                    &mut EdgeList::default(),
                    kind,
                    &limits,
                )
            };
            // Live clocks need a few entries: a budget of 8 bytes allows at most two.
            let r = run(CcLimits {
                memory: Some(8),
                deadline: None,
            });
            assert!(
                matches!(r, Err(CcStopped::Memory { .. })),
                "{kind:?}: {r:?}"
            );
            let r = run(CcLimits {
                memory: Some(1 << 20),
                deadline: None,
            });
            assert_eq!(r, Ok(()), "{kind:?}");
        }
        // The deadline is looked at every few thousand transactions: a long chain.
        let long = h(&format!("wx1 | {}", vec!["rx1"; 5000].join(" / ")));
        let reads = read_consistency::check(&long, true);
        let graph = CommitGraph::base(&long, &reads.external_writer).unwrap();
        let (order, _) = graph.topological_order(true);
        let r = saturate_with(
            &long,
            &reads.external_writer,
            &graph,
            &order,
            &mut EdgeList::default(),
            ClockKind::Chunked,
            &CcLimits {
                memory: None,
                deadline: Some(std::time::Instant::now()),
            },
        );
        assert_eq!(r, Err(CcStopped::Timeout));
    }
}
