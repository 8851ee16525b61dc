//! Prediction prefixes without the solver (IsoPredict PLDI'24 §4.5 and appendix B, in the
//! boundary semantics of [`super::space`]): per session the domain of its boundary, the closure
//! of a choice of boundaries under "an included read reads an included write", and the
//! predicted history of a closed choice.
//!
//! Linear in the history: the scalable engine ([`super::scalable`]) builds candidate
//! predictions here and decides them with the checkers, touching only the prefix it includes.
//!
//! Boundary values are those of [`super::space::SessionSpace`]: relaxed — the index of the
//! boundary transaction among the session's committed transactions (one with an external read),
//! strict — the index of the boundary read among the session's external reads; `max` = ∞.
//! A read is included when the boundary is at least its `inc` value (relaxed: its transaction's
//! index; strict: its own read index); a transaction's first write of a key is included when the
//! boundary is at least its `thr` value (relaxed: the transaction's index; strict: the number of
//! external reads of the session before it).

use super::extract::{build_prefix, BoundaryPoint, Built};
use super::space::{BoundaryKind, NONE};
use crate::history::{History, OpId, OpKind, SessionId, TxnId, INITIAL_TXN};

/// One session's boundary domain.
#[derive(Debug, Clone)]
pub(crate) struct Domain {
    /// Committed transactions, in order.
    pub txns: Vec<TxnId>,
    /// Strict: external reads (of committed transactions), in order.
    pub reads: Vec<OpId>,
    /// The value meaning ∞.
    pub max: u32,
    /// Allowed values `0..=max`.
    pub allowed: Vec<bool>,
}

/// The boundary domains of a history.
pub(crate) struct Domains<'h> {
    pub h: &'h History,
    pub boundary: BoundaryKind,
    pub sessions: Vec<Domain>,
    /// Per transaction: its session and index among the session's committed transactions
    /// (`NONE` for t0 and aborted transactions).
    pub session_of: Vec<u32>,
    pub index_of: Vec<u32>,
    /// Per operation: the number of external reads of its session before it.
    pub reads_before: Vec<u32>,
}

impl<'h> Domains<'h> {
    /// The domains of `h`'s sessions.
    pub fn new(h: &'h History, boundary: BoundaryKind) -> Domains<'h> {
        let n = h.txn_count();
        let mut session_of = vec![NONE; n];
        let mut index_of = vec![NONE; n];
        let mut reads_before = vec![0u32; h.ops().len()];
        let mut sessions = Vec::with_capacity(h.sessions().len());
        for (s, session) in h.sessions().iter().enumerate() {
            let txns: Vec<TxnId> = session
                .txns()
                .filter(|&t| h.txn(t).is_committed())
                .collect();
            let mut reads = Vec::new();
            let mut allowed = Vec::new();
            for (x, &t) in txns.iter().enumerate() {
                session_of[t as usize] = s as u32;
                index_of[t as usize] = x as u32;
                let mut has_read = false;
                for o in h.txn(t).ops() {
                    reads_before[o as usize] = reads.len() as u32;
                    if is_external(h, o) {
                        has_read = true;
                        if boundary == BoundaryKind::Strict {
                            reads.push(o);
                            allowed.push(true);
                        }
                    }
                }
                if boundary == BoundaryKind::Relaxed {
                    allowed.push(has_read);
                }
            }
            allowed.push(true);
            if super::locks::ends_before_another(h, s as SessionId) {
                // A session others began after is kept whole (docs/prediction.md).
                let last = allowed.len() - 1;
                allowed[..last].fill(false);
            }
            sessions.push(Domain {
                txns,
                reads,
                max: (allowed.len() - 1) as u32,
                allowed,
            });
        }
        Domains {
            h,
            boundary,
            sessions,
            session_of,
            index_of,
            reads_before,
        }
    }

    /// The smallest allowed value of session `s` at least `v`.
    pub fn round_up(&self, s: u32, v: u32) -> u32 {
        let d = &self.sessions[s as usize];
        (v.min(d.max)..=d.max)
            .find(|&x| d.allowed[x as usize])
            .unwrap_or(d.max)
    }

    /// The value from which `w`'s first write of `key` is included (`None`: `w` does not
    /// write it).
    pub fn thr(&self, w: TxnId, key: u32) -> Option<u32> {
        if w == INITIAL_TXN {
            return Some(0);
        }
        let first = self
            .h
            .txn(w)
            .ops()
            .find(|&o| self.h.op(o).kind == OpKind::Write && self.h.op(o).key == key)?;
        Some(match self.boundary {
            BoundaryKind::Relaxed => self.index_of[w as usize],
            BoundaryKind::Strict => self.reads_before[first as usize],
        })
    }

    /// The value from which every operation of `t` is included.
    pub fn whole(&self, t: TxnId) -> u32 {
        match self.boundary {
            BoundaryKind::Relaxed => self.index_of[t as usize],
            BoundaryKind::Strict => {
                let end = self.h.txn(t).ops().end;
                let s = self.session_of[t as usize] as usize;
                // The first external read after t, if any.
                let d = &self.sessions[s];
                let next = d.reads.partition_point(|&r| r < end) as u32;
                next.min(d.max)
            }
        }
    }

    /// The end (exclusive) of the included operations of session `s` at value `b`, as
    /// (transaction index, operation end).
    fn included_end(&self, s: usize, b: u32) -> (usize, OpId) {
        let d = &self.sessions[s];
        if b >= d.max {
            return match d.txns.last() {
                Some(&t) => (d.txns.len() - 1, self.h.txn(t).ops().end),
                None => (0, 0),
            };
        }
        match self.boundary {
            BoundaryKind::Relaxed => (b as usize, self.h.txn(d.txns[b as usize]).ops().end),
            BoundaryKind::Strict => {
                let r = d.reads[b as usize];
                (self.index_of[self.h.op(r).txn as usize] as usize, r + 1)
            }
        }
    }

    /// Closes `b` (allowed values) under "an included read reads an included write": raises
    /// boundaries of writers' sessions as needed, never above `cap`. `changed` gives the
    /// predicted writer of changed reads (sorted by op). `None` if a cap would be exceeded.
    pub fn close(&self, b: &mut [u32], cap: &[u32], changed: &[(OpId, TxnId)]) -> Option<()> {
        let h = self.h;
        let k = self.sessions.len();
        // Per session: next transaction index and op to look at.
        let mut cursor: Vec<(usize, OpId)> = self
            .sessions
            .iter()
            .map(|d| (0, d.txns.first().map_or(0, |&t| h.txn(t).ops().start)))
            .collect();
        let mut work: Vec<usize> = (0..k).collect();
        while let Some(s) = work.pop() {
            let d = &self.sessions[s];
            if d.txns.is_empty() {
                continue;
            }
            let (last_txn, last_end) = self.included_end(s, b[s]);
            let (mut x, mut o) = cursor[s];
            while x < last_txn || (x == last_txn && o < last_end) {
                let t = d.txns[x];
                let end = if x == last_txn {
                    last_end
                } else {
                    h.txn(t).ops().end
                };
                while o < end {
                    if is_external(h, o) {
                        let writer = match changed.binary_search_by_key(&o, |c| c.0) {
                            Ok(i) => changed[i].1,
                            Err(_) => h.writer_txn(o).unwrap_or(INITIAL_TXN),
                        };
                        let ws = if writer == INITIAL_TXN {
                            NONE
                        } else {
                            self.session_of[writer as usize]
                        };
                        if ws != NONE && ws as usize != s {
                            let need = self.thr(writer, h.op(o).key)?;
                            if b[ws as usize] < need {
                                let v = self.round_up(ws, need);
                                if v > cap[ws as usize] {
                                    return None;
                                }
                                b[ws as usize] = v;
                                work.push(ws as usize);
                            }
                        }
                    }
                    o += 1;
                }
                if x == last_txn {
                    break;
                }
                x += 1;
                o = h.txn(d.txns[x]).ops().start;
            }
            cursor[s] = (x, o);
        }
        Some(())
    }

    /// The predicted history of closed boundaries `b` with `changed` reads (sorted by op);
    /// with `boundary_writes`, a strict boundary transaction also keeps its writes after the
    /// boundary read (the write set it commits with: prefix consistency and snapshot isolation
    /// judge it, as [`super::extract::build_with`] does).
    pub fn build_with(
        &self,
        b: &[u32],
        changed: &[(OpId, TxnId)],
        boundary_writes: bool,
    ) -> Result<Built, String> {
        let h = self.h;
        let mut cut: Vec<OpId> = vec![NONE; h.txn_count()];
        // The changed reads' writers, looked up by op (a seed changes a few reads: no vector
        // over the run's millions of operations per seed).
        let mut sorted = changed.to_vec();
        sorted.sort_unstable();
        let chosen = |o: OpId| {
            sorted
                .binary_search_by_key(&o, |&(op, _)| op)
                .map_or(NONE, |i| sorted[i].1)
        };
        let mut boundaries = Vec::with_capacity(self.sessions.len());
        for (s, d) in self.sessions.iter().enumerate() {
            let mut point = BoundaryPoint {
                session: s as SessionId,
                txn: None,
                read: None,
                included_txns: d.txns.len() as u32,
            };
            if !d.txns.is_empty() {
                let (last, end) = self.included_end(s, b[s]);
                for &t in &d.txns[..last] {
                    cut[t as usize] = h.txn(t).ops().end;
                }
                cut[d.txns[last] as usize] = end;
                if b[s] < d.max {
                    point.txn = Some(d.txns[last]);
                    point.included_txns = last as u32 + 1;
                    if self.boundary == BoundaryKind::Strict {
                        point.read = Some(end - 1);
                    }
                }
            }
            boundaries.push(point);
        }
        let sessions: Vec<(SessionId, &[TxnId])> = self
            .sessions
            .iter()
            .enumerate()
            .map(|(s, d)| (s as SessionId, d.txns.as_slice()))
            .collect();
        let (history, origin, changed) =
            build_prefix(h, &sessions, &cut, &chosen, boundary_writes)?;
        for (s, point) in boundaries.iter_mut().enumerate() {
            let d = &self.sessions[s];
            let everything = d
                .txns
                .iter()
                .all(|&t| cut[t as usize] == h.txn(t).ops().end);
            let changes = changed
                .iter()
                .any(|&(o, _, _)| h.txn(h.op(o).txn).session == s as SessionId);
            if everything && !changes {
                point.txn = None;
                point.read = None;
            }
        }
        Ok(Built {
            history,
            origin,
            changed,
            boundaries,
        })
    }
}

/// A read of another transaction's write (not of the reader's own).
pub(crate) fn is_external(h: &History, o: OpId) -> bool {
    let op = h.op(o);
    op.kind == OpKind::Read && h.writer_txn(o) != Some(op.txn)
}
