//! The brute-force oracle: the ground truth the fast checkers are tested against.
//!
//! Implements the definition of every level literally, with no cleverness:
//! - Read consistency (AWDIT Def. 2.3 / Plume TAPs a–f): no thin-air, aborted, future,
//!   not-my-own-write, not-my-last-write or intermediate reads (reads inside aborted
//!   transactions are never checked).
//! - Cut isolation (Plume Def. 3): no transaction reads one key from two different other
//!   transactions.
//! - Every other level (Biswas & Enea, OOPSLA'19, §2.2, Fig. 2 and Table 1): the history
//!   satisfies the level iff some strict total commit order `co` of the committed transactions,
//!   with the initial transaction first and `so ∪ wr ⊆ co`, satisfies every instance of the
//!   level's axioms, all of the shape
//!   `∀x,t1,t2,α. t1 ≠ t2 ∧ wr_x(t1,α) ∧ t2 writes x ∧ φ(t2,α) ⇒ co(t2,t1)`:
//!
//!   | level | axioms | φ(t2, α) (α = t3 unless noted) |
//!   |---|---|---|
//!   | RC | Read Committed | α is a read, some po-earlier read β of α's transaction reads from t2 |
//!   | RA | Read Atomic | (so ∪ wr)(t2, t3) |
//!   | CC | Causal | (so ∪ wr)⁺(t2, t3) |
//!   | PC | Prefix | ∃t4. co*(t2, t4) ∧ (so ∪ wr)(t4, t3) |
//!   | SI | Prefix ∧ Conflict | Conflict: ∃t4, y. co*(t2, t4) ∧ co(t4, t3) ∧ t4, t3 write y |
//!   | SER | Serializability | co(t2, t3) |
//!
//!   When the input reveals a version order ([`History::known_write_order`], e.g. Elle
//!   list-append reads), `co` must also extend those write–write pairs.
//!
//!   CI has no commit-order axiom, but like every level it needs `so ∪ wr` acyclic (some
//!   commit order must exist), so it is searched the same way with no axiom to check.
//!
//! Semantics as in docs/architecture.md, "Semantics we commit to": the initial transaction comes first;
//! aborted transactions take part in no order (reads of their writes are AbortedRead
//! violations); a read of the reader's own write (internal read) is no `wr` edge; session order
//! is transitive and the initial transaction is session-ordered before every transaction.
//!
//! The search enumerates every linear extension of `so ∪ wr` (extending a prefix only with
//! transactions whose `so ∪ wr` predecessors are placed) and checks the axioms on each complete
//! order. It is exponential, so [`satisfies`] answers only for histories with at most
//! [`MAX_COMMITTED_TXNS`] committed non-initial transactions (at most 7! = 5,040 orders).

use crate::check::Level;
use crate::history::{History, KeyId, OpKind, TxnId, INITIAL_TXN};

/// The largest number of committed non-initial transactions [`satisfies`] answers for.
pub const MAX_COMMITTED_TXNS: usize = 7;

/// Whether `history` satisfies `level`, decided by brute force over all commit orders.
///
/// `None` when the history has more than [`MAX_COMMITTED_TXNS`] committed transactions
/// besides the initial one.
pub fn satisfies(history: &History, level: Level) -> Option<bool> {
    let committed = history.committed_txns().count() - 1;
    if committed > MAX_COMMITTED_TXNS {
        return None;
    }
    if read_consistency_violation(history).is_some() {
        return Some(false);
    }
    if level == Level::CutIsolation && non_repeatable_read(history) {
        return Some(false);
    }
    let tiny = Tiny::new(history);
    Some(tiny.some_commit_order_satisfies(level))
}

/// The first read-consistency violation of a committed read, by its Plume TAP name, or `None`.
///
/// Checks, for every read of every committed transaction: it has a writer (else
/// `ThinAirRead`); the writer committed (else `AbortedRead`); a read of its own transaction's
/// write reads a po-earlier write (else `FutureRead`) that is the latest own write of the key
/// before it (else `NotMyLastWrite`); a read of another transaction's write comes before any own
/// write of the key (else `NotMyOwnWrite`) and reads that transaction's last write of the key
/// (else `IntermediateRead`).
pub fn read_consistency_violation(history: &History) -> Option<&'static str> {
    for t in history.committed_txns() {
        let ops = history.txn(t).ops();
        for r in ops.clone() {
            let read = history.op(r);
            if read.kind != OpKind::Read {
                continue;
            }
            let Some(w) = history.read_from(r) else {
                return Some("ThinAirRead");
            };
            let writer = history.op(w).txn;
            if !history.txn(writer).is_committed() {
                return Some("AbortedRead");
            }
            let own_writes_before = |end: u32| {
                (ops.start..end)
                    .filter(|&o| {
                        history.op(o).kind == OpKind::Write && history.op(o).key == read.key
                    })
                    .collect::<Vec<_>>()
            };
            if writer == t {
                if w > r {
                    return Some("FutureRead");
                }
                if own_writes_before(r).last() != Some(&w) {
                    return Some("NotMyLastWrite");
                }
            } else {
                if !own_writes_before(r).is_empty() {
                    return Some("NotMyOwnWrite");
                }
                if history.last_write(writer, read.key) != Some(w) {
                    return Some("IntermediateRead");
                }
            }
        }
    }
    None
}

/// Whether some committed transaction reads one key from two different other transactions
/// (Plume's NonRepeatableRead, TAP-j; assumes read consistency holds).
fn non_repeatable_read(history: &History) -> bool {
    history.committed_txns().any(|t| {
        let external: Vec<(KeyId, TxnId)> = history
            .txn(t)
            .ops()
            .filter(|&o| history.is_external_read(o))
            .map(|o| (history.op(o).key, history.writer_txn(o).unwrap()))
            .collect();
        external
            .iter()
            .any(|&(k, w)| external.iter().any(|&(k2, w2)| k == k2 && w != w2))
    })
}

/// An external read, seen from its transaction: the key and the (local) writer.
#[derive(Debug, Clone, Copy)]
struct ExternalRead {
    key: KeyId,
    writer: usize,
}

/// The committed transactions of a tiny history, renumbered `0..n` with the initial
/// transaction at 0, and the relations over them as boolean matrices.
struct Tiny {
    n: usize,
    /// Keys each transaction writes.
    writes: Vec<Vec<KeyId>>,
    /// External reads of each transaction, in program order.
    reads: Vec<Vec<ExternalRead>>,
    /// `so[a][b]`: session order (transitive, initial transaction before all).
    so: Vec<Vec<bool>>,
    /// `wr[a][b]`: `b` reads some key from `a`.
    wr: Vec<Vec<bool>>,
    /// `hb[a][b]`: `(so ∪ wr)⁺`.
    hb: Vec<Vec<bool>>,
    /// `ww[a][b]`: the input shows a write of `a` installed before one of `b`
    /// ([`History::known_write_order`]); every commit order must respect it.
    ww: Vec<Vec<bool>>,
    /// `rt[a][b]`: `a` completed before `b` was invoked ([`History::real_time`]); a strictly
    /// serializable order must respect it.
    rt: Vec<Vec<bool>>,
}

impl Tiny {
    /// Assumes read consistency holds, so every committed read has a committed writer.
    fn new(history: &History) -> Tiny {
        let ids: Vec<TxnId> = history.committed_txns().collect();
        debug_assert_eq!(ids[0], INITIAL_TXN);
        let n = ids.len();
        let local = |t: TxnId| ids.iter().position(|&u| u == t).expect("committed writer");
        let writes = ids
            .iter()
            .map(|&t| history.keys_written(t).to_vec())
            .collect();
        let reads: Vec<Vec<ExternalRead>> = ids
            .iter()
            .map(|&t| {
                history
                    .txn(t)
                    .ops()
                    .filter(|&o| history.is_external_read(o))
                    .map(|o| ExternalRead {
                        key: history.op(o).key,
                        writer: local(history.writer_txn(o).unwrap()),
                    })
                    .collect()
            })
            .collect();
        let mut so = vec![vec![false; n]; n];
        let mut wr = vec![vec![false; n]; n];
        for a in 0..n {
            for b in 0..n {
                so[a][b] = history.so_before(ids[a], ids[b]);
            }
        }
        for (b, rs) in reads.iter().enumerate() {
            for r in rs {
                wr[r.writer][b] = true;
            }
        }
        // Transitive closure of so ∪ wr (Floyd–Warshall).
        let mut hb: Vec<Vec<bool>> = (0..n)
            .map(|a| (0..n).map(|b| so[a][b] || wr[a][b]).collect())
            .collect();
        for k in 0..n {
            let via = hb[k].clone();
            for row in hb.iter_mut() {
                if row[k] {
                    for (reach, &through) in row.iter_mut().zip(&via) {
                        *reach |= through;
                    }
                }
            }
        }
        let mut ww = vec![vec![false; n]; n];
        for &(a, b) in history.known_write_order() {
            let (ta, tb) = (history.op(a).txn, history.op(b).txn);
            let (Some(la), Some(lb)) = (
                ids.iter().position(|&u| u == ta),
                ids.iter().position(|&u| u == tb),
            ) else {
                continue; // an aborted writer takes part in no order
            };
            if la != lb {
                ww[la][lb] = true;
            }
        }
        let mut rt = vec![vec![false; n]; n];
        for a in 0..n {
            for b in 0..n {
                if let (Some(x), Some(y)) = (history.real_time(ids[a]), history.real_time(ids[b])) {
                    rt[a][b] = a != b && x.completed < y.invoked;
                }
            }
        }
        Tiny {
            n,
            ww,
            rt,
            writes,
            reads,
            so,
            wr,
            hb,
        }
    }

    fn writes_key(&self, t: usize, key: KeyId) -> bool {
        self.writes[t].contains(&key)
    }

    /// Tries every linear extension of `so ∪ wr` that starts with the initial transaction.
    fn some_commit_order_satisfies(&self, level: Level) -> bool {
        let mut order = vec![0usize];
        let mut placed = vec![false; self.n];
        placed[0] = true;
        self.extend(&mut order, &mut placed, level)
    }

    fn extend(&self, order: &mut Vec<usize>, placed: &mut [bool], level: Level) -> bool {
        if order.len() == self.n {
            let mut pos = vec![0usize; self.n];
            for (i, &t) in order.iter().enumerate() {
                pos[t] = i;
            }
            return self.axioms_hold(&pos, level);
        }
        for t in 0..self.n {
            let ready = !placed[t]
                && (0..self.n)
                    .all(|p| placed[p] || !(self.so[p][t] || self.wr[p][t] || self.ww[p][t]));
            if !ready {
                continue;
            }
            placed[t] = true;
            order.push(t);
            let found = self.extend(order, placed, level);
            order.pop();
            placed[t] = false;
            if found {
                return true;
            }
        }
        false
    }

    /// Whether the commit order given by positions `pos` satisfies the level's axioms.
    fn axioms_hold(&self, pos: &[usize], level: Level) -> bool {
        let co = |a: usize, b: usize| pos[a] < pos[b];
        let co_star = |a: usize, b: usize| a == b || co(a, b);
        let so_wr = |a: usize, b: usize| self.so[a][b] || self.wr[a][b];
        let prefix = |t2: usize, t3: usize| (0..self.n).any(|t4| co_star(t2, t4) && so_wr(t4, t3));
        let conflict = |t2: usize, t3: usize| {
            (0..self.n).any(|t4| {
                co_star(t2, t4)
                    && co(t4, t3)
                    && self.writes[t4].iter().any(|&y| self.writes_key(t3, y))
            })
        };
        match level {
            Level::CutIsolation => true,
            Level::ReadCommitted => self.read_committed_holds(co),
            Level::ReadAtomic => self.schema_holds(co, so_wr),
            Level::Causal => self.schema_holds(co, |t2, t3| self.hb[t2][t3]),
            Level::Prefix => self.schema_holds(co, prefix),
            Level::Snapshot => self.schema_holds(co, prefix) && self.schema_holds(co, conflict),
            Level::Serializable => self.schema_holds(co, co),
            Level::StrictSerializable => {
                self.schema_holds(co, co)
                    && (0..self.n).all(|a| (0..self.n).all(|b| !self.rt[a][b] || co(a, b)))
            }
        }
    }

    /// Every instance of `t1 ≠ t2 ∧ wr_x(t1,t3) ∧ t2 writes x ∧ φ(t2,t3) ⇒ co(t2,t1)` holds.
    fn schema_holds(
        &self,
        co: impl Fn(usize, usize) -> bool,
        phi: impl Fn(usize, usize) -> bool,
    ) -> bool {
        (0..self.n).all(|t3| {
            self.reads[t3].iter().all(|alpha| {
                let (x, t1) = (alpha.key, alpha.writer);
                (0..self.n)
                    .all(|t2| !(t1 != t2 && self.writes_key(t2, x) && phi(t2, t3)) || co(t2, t1))
            })
        })
    }

    /// Read Committed: for a read α of x from t1 and a po-earlier read β (of any key) of the
    /// same transaction from t2 ≠ t1, where t2 writes x: co(t2, t1).
    fn read_committed_holds(&self, co: impl Fn(usize, usize) -> bool) -> bool {
        self.reads.iter().all(|rs| {
            rs.iter().enumerate().all(|(i, alpha)| {
                rs[..i].iter().all(|beta| {
                    let (t1, t2) = (alpha.writer, beta.writer);
                    !(t1 != t2 && self.writes_key(t2, alpha.key)) || co(t2, t1)
                })
            })
        })
    }
}

#[cfg(test)]
mod tests;
