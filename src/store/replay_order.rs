//! An execution order for replaying a predicted history: a linear extension of
//! hb ∪ ww_level, the edges the level's axiom forces into every commit order (Biswas & Enea,
//! OOPSLA'19, §3; saturation is exact for RC, RA and causal, so the prediction is valid at the
//! level iff these edges are acyclic, and then any linear extension is a valid commit order).
//!
//! The stores's read policies keep the commit order equal to the execution order, so replaying
//! in such an order lets every predicted read be accepted. Edges, for t1 ≠ t2 both writing x
//! and t3 reading x from t2:
//! - causal: t1 →hb t3 gives t1 → t2;
//! - read atomic: t1 →so t3 or t1 →wr t3 gives t1 → t2;
//! - read committed: t3 read from t1 before the read of x gives t1 → t2;
//! - prefix consistency and snapshot isolation: the causal edges (PC and SI imply causal).
//!   They do not determine a valid commit order (the axioms depend on the order itself), so
//!   the caller passes a witness commit order as the preferred order (e.g. from
//!   [`crate::ser::check_si_pc`]); being a linear extension of these edges, it is returned
//!   unchanged.
//!
//! Kahn's algorithm picks, among ready transactions, the one earliest in the preferred order
//! (or else lowest position in its session, then lowest session). If the edges have a cycle
//! (an invalid prediction), the earliest remaining transaction whose session predecessors are
//! done is taken anyway, so the result is always a linear extension of session order.

use std::collections::BTreeSet;

use crate::check::Level;
use crate::history::{History, KeyId, OpKind, TxnId, INITIAL_TXN};

/// Dense bit matrix (row per transaction).
struct Bits {
    words: usize,
    data: Vec<u64>,
}

impl Bits {
    fn new(n: usize) -> Bits {
        let words = n.div_ceil(64).max(1);
        Bits {
            words,
            data: vec![0; words * n],
        }
    }
    fn set(&mut self, r: usize, c: usize) {
        self.data[r * self.words + c / 64] |= 1 << (c % 64);
    }
    fn get(&self, r: usize, c: usize) -> bool {
        self.data[r * self.words + c / 64] & (1 << (c % 64)) != 0
    }
    fn or_row(&mut self, dst: usize, src: usize) {
        for w in 0..self.words {
            let v = self.data[src * self.words + w];
            self.data[dst * self.words + w] |= v;
        }
    }
}

/// Committed non-initial transactions of `history` in an order that is a linear extension of
/// hb ∪ ww_level (see the module docs). Whether the history satisfies the level is decided
/// by [`crate::check::check`], not here.
pub fn commit_order(history: &History, level: Level, preferred: Option<&[TxnId]>) -> Vec<TxnId> {
    let n = history.txn_count();
    let committed: Vec<TxnId> = history
        .committed_txns()
        .filter(|&t| t != INITIAL_TXN)
        .collect();
    let mut edges: Vec<(TxnId, TxnId)> = Vec::new();
    // Session order (consecutive committed transactions) and write–read.
    for s in history.sessions() {
        let mut prev = None;
        for t in s.txns() {
            if history.txn(t).is_committed() {
                if let Some(p) = prev {
                    edges.push((p, t));
                }
                prev = Some(t);
            }
        }
    }
    for (w, r, _) in history.wr_edges() {
        if w != INITIAL_TXN && history.txn(w).is_committed() && history.txn(r).is_committed() {
            edges.push((w, r));
        }
    }
    // Happens-before (for causal) or direct predecessors (for read atomic), as bit rows.
    let needs_closure = matches!(
        level,
        Level::Causal | Level::ReadAtomic | Level::Prefix | Level::Snapshot
    );
    let mut before = Bits::new(if needs_closure { n } else { 0 });
    if needs_closure {
        let mut preds: Vec<Vec<TxnId>> = vec![Vec::new(); n];
        for &(a, b) in &edges {
            preds[b as usize].push(a);
        }
        for s in history.sessions() {
            let mut earlier: Vec<TxnId> = Vec::new();
            for t in s.txns() {
                if history.txn(t).is_committed() {
                    if level == Level::ReadAtomic {
                        for &e in &earlier {
                            before.set(t as usize, e as usize);
                        }
                    }
                    earlier.push(t);
                }
            }
        }
        if level == Level::ReadAtomic {
            for &(a, b) in &edges {
                before.set(b as usize, a as usize);
            }
        } else {
            // Transitive closure in a topological order of so ∪ wr (ids may not be one).
            for t in topological(history, &committed, &edges, preferred) {
                for &p in &preds[t as usize] {
                    before.set(t as usize, p as usize);
                    before.or_row(t as usize, p as usize);
                }
            }
        }
    }
    let mut ww: Vec<(TxnId, TxnId)> = Vec::new();
    for &t3 in &committed {
        let mut read_from: Vec<TxnId> = Vec::new();
        for op in history.txn(t3).ops() {
            let o = history.op(op);
            if o.kind != OpKind::Read || history.is_internal_read(op) {
                continue;
            }
            let Some(t2) = history.writer_txn(op) else {
                continue;
            };
            let constrained = |t1: TxnId| -> bool {
                match level {
                    Level::Causal | Level::ReadAtomic | Level::Prefix | Level::Snapshot => {
                        before.get(t3 as usize, t1 as usize)
                    }
                    _ => read_from.contains(&t1),
                }
            };
            for &t1 in history.writers_of(o.key) {
                if t1 != t2
                    && t1 != INITIAL_TXN
                    && t1 != t3
                    && history.txn(t1).is_committed()
                    && constrained(t1)
                {
                    ww.push((t1, t2));
                }
            }
            if !read_from.contains(&t2) {
                read_from.push(t2);
            }
        }
    }
    // An edge into the initial transaction (a read of the initial state by a transaction
    // that must see a later write) is a cycle through t0, an invalid prediction: dropped.
    edges.extend(ww.into_iter().filter(|&(_, b)| b != INITIAL_TXN));
    topological(history, &committed, &edges, preferred)
}

/// A commit order of `history` (committed transactions, the initial one first) under which
/// every transaction has a snapshot point explaining its reads at `level` (pc or si), built
/// to stay as close to `preferred` (e.g. the observed run's commit order) as the reads allow;
/// `None` when the greedy construction gets stuck (the caller then asks an exact checker for
/// any witness order). The caller verifies the result against the axioms.
///
/// Why near the observed order: a replay runs the application itself, and what a call does
/// can depend on the order of commits beyond its reads (row ids drawn from the store's
/// non-transactional counter, the order in which a scan meets rows); a witness order from a
/// search that interleaves the sessions by their own measure (round robin) makes the replay
/// diverge where the prediction does not ask it to.
///
/// The construction replays the store's snapshot tracker ([`super::snapshot`]) on the
/// history: transactions are committed one at a time, each session's in session order, and
/// the next one is the head earliest in `preferred` that is
/// - *valid now*: some snapshot point `c` of the sequence so far lies at or after its session
///   predecessor, every writer it reads from and (SI) the last writer of every key it writes,
///   and before the next writer of each key it reads after the version it reads; and
/// - *safe*: committing it does not shut out a transaction that must miss it — one that reads
///   a key it writes from a version `preferred` puts earlier, while `preferred` puts that
///   reader after it (a read the prediction changed). Such a reader's snapshot point must come
///   before this commit, so everything it must see (its session predecessor, the writers it
///   reads from) has to be committed first.
///
/// Cost: O(reads · log versions) to prepare, and per commit the heads' reads (one binary
/// search each) — proportional to the history's reads times its sessions at most.
pub fn snapshot_order_near(
    history: &History,
    level: Level,
    preferred: &[TxnId],
) -> Option<Vec<TxnId>> {
    let conflicts = match level {
        Level::Snapshot => true,
        Level::Prefix => false,
        _ => return None,
    };
    let n = history.txn_count();
    let mut rank = vec![u32::MAX; n];
    for (i, &t) in preferred.iter().enumerate() {
        if (t as usize) < n && rank[t as usize] == u32::MAX {
            rank[t as usize] = i as u32;
        }
    }
    let snapshots = SnapshotNeeds::of(history, &rank, conflicts);
    let committed = |t: TxnId| history.txn(t).is_committed();
    let mut pos = vec![UNPLACED; n];
    pos[INITIAL_TXN as usize] = 0;
    // Per key: the positions of its committed writers so far (t0, at 0, implicit).
    let mut versions: Vec<Vec<u32>> = vec![Vec::new(); history.key_count()];
    let mut order = vec![INITIAL_TXN];
    // Per session: its committed transactions and how many are placed.
    let sessions: Vec<Vec<TxnId>> = history
        .sessions()
        .iter()
        .map(|s| s.txns().filter(|&t| committed(t)).collect())
        .collect();
    let total: usize = sessions.iter().map(Vec::len).sum();
    let mut placed = vec![0usize; sessions.len()];
    let mut heads: Vec<TxnId> = Vec::with_capacity(sessions.len());
    while order.len() <= total {
        heads.clear();
        heads.extend(
            sessions
                .iter()
                .zip(&placed)
                .filter_map(|(s, &i)| s.get(i).copied()),
        );
        heads.sort_unstable_by_key(|&t| (rank[t as usize], history.txn(t).session));
        let len = order.len() as u32;
        let next = heads.iter().copied().find(|&t| {
            snapshots.valid(history, t, &pos, &versions, len) && snapshots.safe(t, &pos)
        })?;
        pos[next as usize] = len;
        order.push(next);
        for &k in history.keys_written(next) {
            versions[k as usize].push(len);
        }
        placed[history.txn(next).session as usize] += 1;
    }
    Some(order)
}

/// A transaction not placed yet.
const UNPLACED: u32 = u32::MAX;

/// What [`snapshot_order_near`] checks before committing a transaction.
struct SnapshotNeeds {
    /// Per transaction: what must be committed before its snapshot point (session
    /// predecessor, writers it reads from).
    needs: Vec<Vec<TxnId>>,
    /// Per transaction: its external reads as (key, writer).
    reads: Vec<Vec<(KeyId, TxnId)>>,
    /// Per transaction: the readers that must miss its writes (`preferred` puts them after it
    /// but has them read an earlier version).
    misses_of: Vec<Vec<TxnId>>,
    /// Whether a transaction's snapshot must follow the last writer of each key it writes
    /// (SI's write conflicts).
    conflicts: bool,
}

impl SnapshotNeeds {
    /// The needs, reads and misses of `history`'s committed transactions under the preferred
    /// order's `rank`.
    fn of(history: &History, rank: &[u32], conflicts: bool) -> SnapshotNeeds {
        let n = history.txn_count();
        let committed = |t: TxnId| history.txn(t).is_committed();
        let mut needs: Vec<Vec<TxnId>> = vec![Vec::new(); n];
        let mut reads: Vec<Vec<(KeyId, TxnId)>> = vec![Vec::new(); n];
        // Per key: its committed writers (not t0), by rank.
        let mut writers_by_rank: Vec<Vec<TxnId>> = vec![Vec::new(); history.key_count()];
        for t in history.committed_txns().filter(|&t| t != INITIAL_TXN) {
            for &k in history.keys_written(t) {
                writers_by_rank[k as usize].push(t);
            }
        }
        for w in &mut writers_by_rank {
            w.sort_unstable_by_key(|&t| (rank[t as usize], t));
        }
        let mut misses_of: Vec<Vec<TxnId>> = vec![Vec::new(); n];
        for t in history.committed_txns().filter(|&t| t != INITIAL_TXN) {
            let mut need: Vec<TxnId> = Vec::new();
            if let Some(p) = history.so_predecessor(t).filter(|&p| p != INITIAL_TXN) {
                need.push(p);
            }
            for op in history.txn(t).ops() {
                let o = history.op(op);
                if o.kind != OpKind::Read {
                    continue;
                }
                let Some(v) = history.writer_txn(op) else {
                    continue;
                };
                if v == t || !committed(v) {
                    continue;
                }
                reads[t as usize].push((o.key, v));
                if v != INITIAL_TXN {
                    need.push(v);
                }
                // Writers of the key that `preferred` puts after the version read and before the
                // reader: the reader must miss them.
                let ws = &writers_by_rank[o.key as usize];
                let (rv, rt) = (
                    if v == INITIAL_TXN {
                        0
                    } else {
                        rank[v as usize]
                    },
                    rank[t as usize],
                );
                let from = ws.partition_point(|&u| (rank[u as usize], u) <= (rv, v));
                for &u in &ws[from..] {
                    if rank[u as usize] >= rt {
                        break;
                    }
                    if u != t && u != v {
                        misses_of[u as usize].push(t);
                    }
                }
            }
            need.sort_unstable();
            need.dedup();
            needs[t as usize] = need;
            let r = &mut reads[t as usize];
            r.sort_unstable();
            r.dedup();
        }
        for m in &mut misses_of {
            m.sort_unstable();
            m.dedup();
        }
        SnapshotNeeds {
            needs,
            reads,
            misses_of,
            conflicts,
        }
    }

    /// Whether `t` is valid now: some snapshot point of the sequence so far (`len` long, its
    /// placed transactions at `pos`, each key's writers at `versions`) lies at or after all
    /// it needs (and, under SI, the last writer of each key it writes) and before the next
    /// writer of each key it reads after the version it reads.
    fn valid(
        &self,
        history: &History,
        t: TxnId,
        pos: &[u32],
        versions: &[Vec<u32>],
        len: u32,
    ) -> bool {
        let mut lo = 0u32;
        for &r in &self.needs[t as usize] {
            if pos[r as usize] == UNPLACED {
                return false;
            }
            lo = lo.max(pos[r as usize]);
        }
        let mut hi = len - 1;
        for &(k, v) in &self.reads[t as usize] {
            let pv = pos[v as usize];
            let vs = &versions[k as usize];
            if let Some(&next) = vs.get(vs.partition_point(|&p| p <= pv)) {
                hi = hi.min(next - 1);
            }
        }
        if self.conflicts {
            for &k in history.keys_written(t) {
                lo = lo.max(versions[k as usize].last().copied().unwrap_or(0));
            }
        }
        lo <= hi
    }

    /// Whether committing `u` now shuts out no reader that must miss it: each is placed, or
    /// all it needs is.
    fn safe(&self, u: TxnId, pos: &[u32]) -> bool {
        self.misses_of[u as usize].iter().all(|&t| {
            pos[t as usize] != UNPLACED
                || self.needs[t as usize]
                    .iter()
                    .all(|&r| pos[r as usize] != UNPLACED)
        })
    }
}

/// Kahn's algorithm with priorities; on a cycle, falls back to session order (module docs).
fn topological(
    history: &History,
    committed: &[TxnId],
    edges: &[(TxnId, TxnId)],
    preferred: Option<&[TxnId]>,
) -> Vec<TxnId> {
    let n = history.txn_count();
    let mut rank = vec![u64::MAX; n];
    if let Some(p) = preferred {
        for (i, &t) in p.iter().enumerate() {
            if (t as usize) < n && rank[t as usize] == u64::MAX {
                rank[t as usize] = i as u64;
            }
        }
    }
    let key = |t: TxnId| -> (u64, u32, u32) {
        let tx = history.txn(t);
        (rank[t as usize], tx.index_in_session, tx.session)
    };
    let mut indegree = vec![0u32; n];
    let mut succ: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    let mut seen = std::collections::HashSet::new();
    for &(a, b) in edges {
        if a != b && seen.insert((a, b)) {
            succ[a as usize].push(b);
            indegree[b as usize] += 1;
        }
    }
    let mut ready: BTreeSet<((u64, u32, u32), TxnId)> = committed
        .iter()
        .filter(|&&t| indegree[t as usize] == 0)
        .map(|&t| (key(t), t))
        .collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(committed.len());
    while order.len() < committed.len() {
        let t = match ready.pop_first() {
            Some((_, t)) => t,
            None => {
                // A cycle: take the earliest remaining transaction whose session predecessors
                // are all done.
                let t = committed
                    .iter()
                    .copied()
                    .filter(|&t| !done[t as usize])
                    .filter(|&t| {
                        history.sessions()[history.txn(t).session as usize]
                            .txns()
                            .take_while(|&u| u != t)
                            .all(|u| done[u as usize] || !history.txn(u).is_committed())
                    })
                    .min_by_key(|&t| key(t))
                    .expect("some transaction is first in its session");
                t
            }
        };
        if done[t as usize] {
            continue;
        }
        done[t as usize] = true;
        order.push(t);
        for &s in &succ[t as usize] {
            indegree[s as usize] = indegree[s as usize].saturating_sub(1);
            if indegree[s as usize] == 0 && !done[s as usize] {
                ready.insert((key(s), s));
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::oracle;
    use crate::check::test_util::h;
    use crate::generate::{generate, Consistency, GenerateParams};
    use crate::ser::{self, StrongLevel, StrongOptions};
    use crate::verdict::engines;

    fn verified(hist: &History, level: Level, order: &[TxnId]) {
        ser::verify_si_pc_order(hist, level, order).unwrap_or_else(|e| panic!("{order:?}: {e}"));
    }

    #[test]
    fn write_skew_keeps_the_preferred_order() {
        // t1 reads x and writes y, t2 reads y and writes x, both from the initial state.
        let hist = h("rx0 wy1 | ry0 wx1");
        for preferred in [[1, 2], [2, 1]] {
            let order = snapshot_order_near(&hist, Level::Snapshot, &preferred).unwrap();
            assert_eq!(order, [0, preferred[0], preferred[1]]);
            verified(&hist, Level::Snapshot, &order);
        }
    }

    #[test]
    fn a_writer_waits_for_what_a_reader_that_misses_it_must_see() {
        // Session 1: t1 writes x. Session 2: t2 writes z, then t3 reads z from t2 and x from
        // the initial state: t3 must miss t1, so t1 commits after t2 although the preferred
        // order puts it first.
        let hist = h("wx1 | wz1 / rz1 rx0");
        let order = snapshot_order_near(&hist, Level::Snapshot, &[1, 2, 3]).unwrap();
        assert_eq!(order, [0, 2, 1, 3]);
        verified(&hist, Level::Snapshot, &order);
        // Without the wait, t3 could take no snapshot: t2 (which it must see) would follow t1
        // (which it must not).
        assert!(ser::verify_si_pc_order(&hist, Level::Snapshot, &[0, 1, 2, 3]).is_err());
    }

    #[test]
    fn a_reader_of_a_later_write_waits_for_it() {
        // t1 reads x from t2, which the preferred order puts after it.
        let hist = h("rx1 | wx1");
        let order = snapshot_order_near(&hist, Level::Prefix, &[1, 2]).unwrap();
        assert_eq!(order, [0, 2, 1]);
        verified(&hist, Level::Prefix, &order);
    }

    /// Random tiny histories valid at pc or si (the oracle enumerates commit orders): with a
    /// witness order as the preferred one, the construction returns exactly it; with the
    /// transactions' id order, whatever it returns satisfies the axioms.
    #[test]
    fn the_order_satisfies_the_level_and_keeps_a_valid_preferred_order() {
        let mut valid = 0;
        let mut found_from_ids = 0;
        for seed in 0..600u64 {
            let shape = (seed % 3) as usize;
            let hist = generate(&GenerateParams {
                sessions: [2, 3, 4][shape],
                txns_per_session: [3, 2, 2][shape],
                ops_per_txn: 3,
                keys: [2, 3, 3][shape],
                abort_ratio: 0.0,
                consistency: [Consistency::Causal, Consistency::None][(seed / 3 % 2) as usize],
                seed,
                ..GenerateParams::default()
            })
            .unwrap();
            for (level, strong) in [
                (Level::Prefix, StrongLevel::Prefix),
                (Level::Snapshot, StrongLevel::Snapshot),
            ] {
                if oracle::satisfies(&hist, level) != Some(true) {
                    continue;
                }
                valid += 1;
                let options = StrongOptions {
                    witness: true,
                    explain: false,
                    ..StrongOptions::default()
                };
                let report = engines::check_strong(&hist, strong, &options).unwrap();
                let witness = report.witness.expect("a witness of a valid history");
                let near = snapshot_order_near(&hist, level, &witness[1..]);
                assert_eq!(near.as_deref(), Some(&witness[..]), "seed {seed} {level}");
                let ids: Vec<TxnId> = hist.committed_txns().skip(1).collect();
                if let Some(order) = snapshot_order_near(&hist, level, &ids) {
                    found_from_ids += 1;
                    verified(&hist, level, &order);
                }
            }
        }
        assert!(valid > 100, "{valid} valid histories");
        assert!(found_from_ids > valid / 2, "{found_from_ids} of {valid}");
    }
}
