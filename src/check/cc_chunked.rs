//! Chunked, shared happens-before clocks for the causal check (AWDIT PLDI'25 §3.3, Algorithm
//! 3 "ComputeHB"; the saturation itself is `cc.rs`).
//!
//! A clock holds one entry per session (the latest transaction of that session that happens
//! before, or is, the clock's owner). Dense clocks cost k entries for every transaction whose
//! clock is kept, which on AWDIT's generated histories (10^7 events, 3,163 sessions, a
//! quarter of the transactions waiting for a later reader at once) is gigabytes. Yet a
//! transaction's clock differs from its session predecessor's in few entries (about 6 % on
//! those histories): the joins of its writers' clocks raise only the sessions it newly hears
//! of. So a clock here is a row of ⌈k / 16⌉ *chunk* ids, each naming 16 consecutive entries in
//! a shared store; clocks share every chunk they have in common (copy on write):
//!
//! - the clock being built is held densely (k entries, so that the saturation's many look-ups
//!   into it cost no indirection), starting as its session's latest clock, with the chunk id
//!   each of its chunks still equals;
//! - joining a writer's clock skips the chunks with the same id (equal by construction), takes
//!   the writer's chunk (and its id) when it dominates the current one, and otherwise writes
//!   the entrywise maximum, the chunk then being new;
//! - the finished clock stores its new chunks and becomes the session's latest clock and, if
//!   the transaction has readers still to come, is kept (its row of ids) until its last
//!   reader is processed.
//!
//! Chunks are reference-counted (by the session clocks and the kept rows) and reused once
//! free; chunk 0 is all zeros and never freed. Memory is the kept rows (k / 16 ids each) plus
//! the distinct chunks they reach; both are counted against the memory budget.

use super::cc_clock::{CcStopped, Clock, Clocks, LINEAR_SCAN_FACTOR};
use super::read_consistency::NONE;
use crate::history::{History, TxnId, INITIAL_TXN};

/// Entries per chunk (a 64-byte cache line of u32 entries).
const CHUNK: usize = 16;
/// log2 of [`CHUNK`].
const CHUNK_SHIFT: u32 = 4;
/// The id of the all-zeros chunk, shared by every clock and never freed.
const ZERO: u32 = 0;
/// Bytes of one chunk id, and the most bytes of one stored entry.
pub(crate) const CHUNKED_ENTRY_BYTES: u64 = 4;

/// A stored clock entry: the position of a transaction in its session (1 for the session's
/// first transaction id, 0 for none). 16 bits when every session has fewer than 2^16
/// transactions (halving the chunk store), else 32.
pub(super) trait Position: Copy + Ord + Default + std::fmt::Debug {
    /// Its size in bytes.
    const BYTES: usize;
    /// `p` (fits by construction).
    fn from_u32(p: u32) -> Self;
    /// As a u32.
    fn to_u32(self) -> u32;
}

impl Position for u16 {
    const BYTES: usize = 2;
    #[inline]
    fn from_u32(p: u32) -> u16 {
        p as u16
    }
    #[inline]
    fn to_u32(self) -> u32 {
        self as u32
    }
}

impl Position for u32 {
    const BYTES: usize = 4;
    #[inline]
    fn from_u32(p: u32) -> u32 {
        p
    }
    #[inline]
    fn to_u32(self) -> u32 {
        self
    }
}

/// The chunk id of a chunk of the clock being built that equals no stored chunk (yet).
const NEW: u32 = u32::MAX;

/// A read-only view of one chunked clock: its chunk ids and the chunk store, or, for the clock
/// being built, its entries (`dense`, non-empty) with the ids its chunks still equal.
#[derive(Clone, Copy)]
pub(super) struct ChunkedClock<'a, P> {
    ids: &'a [u32],
    data: &'a [P],
    dense: &'a [P],
    /// Per session, its first transaction id minus one (position p is transaction base + p).
    base: &'a [TxnId],
}

impl<'a, P: Position> ChunkedClock<'a, P> {
    #[inline]
    fn chunk(self, c: usize) -> &'a [P] {
        if self.dense.is_empty() {
            let id = self.ids[c] as usize;
            &self.data[id * CHUNK..(id + 1) * CHUNK]
        } else {
            &self.dense[c * CHUNK..(c + 1) * CHUNK]
        }
    }
}

impl<P: Position> ChunkedClock<'_, P> {
    /// The transaction at position `p` of session `s`.
    #[inline]
    fn txn(self, s: u32, p: P) -> TxnId {
        match p.to_u32() {
            0 => 0,
            p => self.base[s as usize] + p,
        }
    }
}

impl<P: Position> Clock for ChunkedClock<'_, P> {
    #[inline]
    fn get(self, s: u32) -> TxnId {
        let p = if self.dense.is_empty() {
            let id = self.ids[(s >> CHUNK_SHIFT) as usize] as usize;
            self.data[id * CHUNK + (s as usize & (CHUNK - 1))]
        } else {
            self.dense[s as usize]
        };
        self.txn(s, p)
    }
    fn ahead_of(self, lo: Self, out: &mut Vec<(u32, TxnId, TxnId)>) {
        out.clear();
        for c in 0..self.ids.len() {
            if self.ids[c] == lo.ids[c] && self.ids[c] != NEW {
                continue; // the same chunk: equal entries
            }
            let base = (c * CHUNK) as u32;
            for (i, (&h, &l)) in self.chunk(c).iter().zip(lo.chunk(c)).enumerate() {
                if h > l {
                    let s = base + i as u32;
                    out.push((s, self.txn(s, h), self.txn(s, l)));
                }
            }
        }
    }
    #[inline]
    fn linear_scan_limit(self, _lo: Self) -> usize {
        LINEAR_SCAN_FACTOR * self.ids.len() * CHUNK
    }
}

/// The chunked clocks of one causal saturation (see the module documentation).
pub(super) struct ChunkedClocks<P> {
    /// Chunks per clock.
    width: usize,
    /// The chunk store: chunk `c` is `data[c * CHUNK..(c + 1) * CHUNK]`.
    data: Vec<P>,
    /// References to each chunk from session clocks and kept rows (chunk 0: unused).
    refs: Vec<u32>,
    free_chunks: Vec<u32>,
    /// Per session, the chunk ids of its latest clock (`width` each).
    session_ids: Vec<u32>,
    /// The last committed transaction of each session: after it, its session clock is dropped.
    last_committed: Vec<TxnId>,
    /// The kept rows, `width` ids each, reused once released.
    rows: Vec<u32>,
    row_of: Vec<u32>,
    free_rows: Vec<u32>,
    /// The clock being built: its entries (`width * CHUNK`, the tail past k zero) and per
    /// chunk the stored chunk it equals, or [`NEW`].
    current: Vec<P>,
    current_ids: Vec<u32>,
    /// Per session, its first transaction id minus one.
    base: Vec<TxnId>,
    /// Scratch of [`Clocks::join`]: the chunks where the writer's ids differ.
    differing: Vec<u32>,
    /// Scratch of [`Clocks::finish`]: the chunks stored for the finished clock.
    made: Vec<u32>,
    zero_row: Vec<u32>,
    max_bytes: usize,
}

/// Whether the positions of every session's transactions fit in 16 bits.
pub(super) fn positions_fit_u16(history: &History) -> bool {
    history
        .sessions()
        .iter()
        .all(|s| s.txns().len() < u16::MAX as usize)
}

impl<P: Position> ChunkedClocks<P> {
    /// Clocks for `history`'s sessions, keeping at most `max_bytes` bytes of entries and ids.
    pub(super) fn new(history: &History, max_bytes: u64) -> ChunkedClocks<P> {
        let k = history.sessions().len();
        let width = k.div_ceil(CHUNK).max(1);
        let mut last_committed = vec![NONE; k];
        for (t, txn) in history.txns().iter().enumerate() {
            if t as TxnId != INITIAL_TXN && txn.is_committed() {
                last_committed[txn.session as usize] = t as TxnId;
            }
        }
        let base = history
            .sessions()
            .iter()
            .map(|s| s.txns().start.saturating_sub(1))
            .collect();
        ChunkedClocks {
            width,
            data: vec![P::default(); CHUNK],
            refs: vec![0],
            free_chunks: Vec::new(),
            session_ids: vec![ZERO; k * width],
            last_committed,
            rows: Vec::new(),
            row_of: vec![NONE; history.txn_count()],
            free_rows: Vec::new(),
            current: vec![P::default(); width * CHUNK],
            current_ids: vec![ZERO; width],
            base,
            differing: Vec::with_capacity(width),
            made: Vec::with_capacity(width),
            zero_row: vec![ZERO; width],
            max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
        }
    }

    /// The bytes of entries and ids stored now.
    fn stored(&self) -> usize {
        self.data.len() * P::BYTES + self.rows.len() * 4
    }

    fn over_budget(&self) -> CcStopped {
        CcStopped::Memory {
            entries: self.max_bytes / P::BYTES,
            bytes: self.max_bytes as u64,
        }
    }

    /// Grows `v` fallibly by at least `extra` elements (by half its length when larger), so
    /// that an address-space limit below the budget is an unknown verdict, not an abort.
    fn grow<T>(v: &mut Vec<T>, extra: usize) -> bool {
        if v.capacity() - v.len() >= extra {
            return true;
        }
        v.try_reserve_exact(extra.max(v.len() / 2)).is_ok() || v.try_reserve_exact(extra).is_ok()
    }

    /// Stores chunk `c` of the clock being built as a new chunk (no references yet).
    fn store(&mut self, c: usize) -> Result<u32, CcStopped> {
        let entries = &self.current[c * CHUNK..(c + 1) * CHUNK];
        let id = match self.free_chunks.pop() {
            Some(id) => {
                self.data[id as usize * CHUNK..(id as usize + 1) * CHUNK].copy_from_slice(entries);
                id
            }
            None => {
                if self.stored() + CHUNK * P::BYTES > self.max_bytes
                    || !Self::grow(&mut self.data, CHUNK)
                    || self.refs.try_reserve(1).is_err()
                {
                    return Err(self.over_budget());
                }
                let id = (self.data.len() / CHUNK) as u32;
                self.data.extend_from_slice(entries);
                self.refs.push(0);
                id
            }
        };
        self.current_ids[c] = id;
        self.made.push(id);
        Ok(id)
    }

    #[inline]
    fn acquire(refs: &mut [u32], id: u32) {
        if id != ZERO {
            refs[id as usize] += 1;
        }
    }

    #[inline]
    fn drop_ref(refs: &mut [u32], free: &mut Vec<u32>, id: u32) {
        if id != ZERO {
            refs[id as usize] -= 1;
            if refs[id as usize] == 0 {
                free.push(id);
            }
        }
    }
}

impl<P: Position> Clocks for ChunkedClocks<P> {
    type View<'a>
        = ChunkedClock<'a, P>
    where
        P: 'a;

    fn start(&mut self, s: usize) {
        let w = self.width;
        let ids = &self.session_ids[s * w..(s + 1) * w];
        self.current_ids.copy_from_slice(ids);
        for (c, &id) in ids.iter().enumerate() {
            let id = id as usize;
            self.current[c * CHUNK..(c + 1) * CHUNK]
                .copy_from_slice(&self.data[id * CHUNK..(id + 1) * CHUNK]);
        }
    }

    fn join(&mut self, writer: TxnId) -> Result<(), CcStopped> {
        let w = self.width;
        let row = &self.rows[self.row_of[writer as usize] as usize * w..][..w];
        // First the chunks that differ, loading one entry of each: the loads do not depend on
        // one another, so the processor overlaps their cache misses (the chunks lie anywhere
        // in the store), instead of waiting for each in turn behind the comparisons below.
        self.differing.clear();
        let mut touched = 0u32;
        for (c, (&a, &b)) in self.current_ids.iter().zip(row).enumerate() {
            if a != b && b != ZERO {
                self.differing.push(c as u32);
                touched ^= self.data[b as usize * CHUNK].to_u32();
            }
        }
        std::hint::black_box(touched);
        for &c in &self.differing {
            let c = c as usize;
            let b = row[c] as usize;
            let theirs = &self.data[b * CHUNK..(b + 1) * CHUNK];
            let mine = &mut self.current[c * CHUNK..(c + 1) * CHUNK];
            let (mut mine_ahead, mut theirs_ahead) = (false, false);
            for (&x, &y) in mine.iter().zip(theirs) {
                mine_ahead |= x > y;
                theirs_ahead |= y > x;
            }
            match (mine_ahead, theirs_ahead) {
                (_, false) => {}
                (false, true) => {
                    mine.copy_from_slice(theirs);
                    self.current_ids[c] = b as u32; // the writer's chunk, shared
                }
                (true, true) => {
                    for (m, &t) in mine.iter_mut().zip(theirs) {
                        *m = (*m).max(t);
                    }
                    self.current_ids[c] = NEW;
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn current(&self) -> ChunkedClock<'_, P> {
        ChunkedClock {
            ids: &self.current_ids,
            data: &self.data,
            dense: &self.current,
            base: &self.base,
        }
    }

    #[inline]
    fn of(&self, t: TxnId) -> ChunkedClock<'_, P> {
        let ids = if t == INITIAL_TXN {
            &self.zero_row[..]
        } else {
            let row = self.row_of[t as usize] as usize;
            &self.rows[row * self.width..(row + 1) * self.width]
        };
        ChunkedClock {
            ids,
            data: &self.data,
            dense: &[],
            base: &self.base,
        }
    }

    fn release(&mut self, t: TxnId) {
        let w = self.width;
        let row = self.row_of[t as usize];
        self.row_of[t as usize] = NONE;
        for &id in &self.rows[row as usize * w..(row as usize + 1) * w] {
            Self::drop_ref(&mut self.refs, &mut self.free_chunks, id);
        }
        self.free_rows.push(row);
    }

    fn finish(&mut self, t3: TxnId, s: usize, live: bool) -> Result<(), CcStopped> {
        let w = self.width;
        self.current[s] = P::from_u32(t3 - self.base[s]);
        self.current_ids[s >> CHUNK_SHIFT] = NEW;
        self.made.clear();
        for c in 0..w {
            if self.current_ids[c] == NEW {
                self.store(c)?;
            }
        }
        if live {
            let row = match self.free_rows.pop() {
                Some(row) => row,
                None => {
                    if self.stored() + w * 4 > self.max_bytes || !Self::grow(&mut self.rows, w) {
                        return Err(self.over_budget());
                    }
                    self.rows.extend_from_slice(&self.zero_row);
                    (self.rows.len() / w - 1) as u32
                }
            };
            self.row_of[t3 as usize] = row;
            let row = row as usize;
            self.rows[row * w..(row + 1) * w].copy_from_slice(&self.current_ids);
            for &id in &self.current_ids {
                Self::acquire(&mut self.refs, id);
            }
        }
        // The session's latest clock: t3's, unless t3 is the session's last transaction.
        let keep = self.last_committed[s] != t3;
        let session = &mut self.session_ids[s * w..(s + 1) * w];
        for (old, &new) in session.iter_mut().zip(&self.current_ids) {
            let new = if keep { new } else { ZERO };
            if *old != new {
                Self::acquire(&mut self.refs, new);
                Self::drop_ref(&mut self.refs, &mut self.free_chunks, *old);
                *old = new;
            }
        }
        // Chunks stored for t3 that nothing kept.
        for &id in &self.made {
            if self.refs[id as usize] == 0 {
                self.free_chunks.push(id);
            }
        }
        if self.stored() > self.max_bytes {
            return Err(self.over_budget());
        }
        Ok(())
    }
}
