//! A serial order by greedy replay — the cheap sound witness of serializability tried before
//! the exact check (Biswas & Enea OOPSLA'19 §2.2's serializability axiom, read as a schedule).
//!
//! Replays the committed transactions one at a time, always taking the next transaction of
//! some session that can run now: each of its reads reads the current version of its key (the
//! last replayed writer, t0 first), and for each key it writes, no transaction still to run
//! reads the version it would overwrite. Replaying such a transaction never makes another one
//! impossible, and a serial store's own execution order is such a schedule; the replay can
//! still get stuck on some serializable histories (then `None`, and the exact check decides).
//! A returned order is a serial order by construction (the callers verify it again).
//!
//! Cost: a session's next transaction that cannot run yet waits on one key that blocks it and is
//! looked at again only when that key's current version or its pending readers change; the
//! runnable ones wait in a heap. So a step costs O(log sessions) plus the looks its keys cause
//! (at most one per blocked session watching them), instead of a scan of every session; memory
//! linear. Gives up (`None`) at the deadline.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use rustc_hash::FxHashMap;

use crate::history::{History, KeyId, OpKind, TxnId, INITIAL_TXN};

/// A serial order of the committed transactions of `h` (t0 first), or `None` if the greedy
/// replay gets stuck. `guide`: edges every serial order contains (e.g. the saturated `pco`);
/// a transaction runs only after their sources, which keeps the replay off most dead ends.
pub(crate) fn greedy_serial_order(
    h: &History,
    guide: &[(TxnId, TxnId)],
    deadline: Option<Instant>,
) -> Option<Vec<TxnId>> {
    let n = h.txn_count();
    let (waiting, after_start, after) = guide_edges(n, guide);
    let committed = |t: TxnId| h.txn(t).is_committed();
    let (reads_of, pending) = external_reads(h)?;
    let sessions: Vec<Vec<TxnId>> = h
        .sessions()
        .iter()
        .map(|s| s.txns().filter(|&t| committed(t)).collect())
        .collect();
    let mut next = vec![0usize; sessions.len()];
    let mut session_of = vec![u32::MAX; n];
    for (i, list) in sessions.iter().enumerate() {
        for &t in list {
            session_of[t as usize] = i as u32;
        }
    }
    let current: Vec<TxnId> = vec![INITIAL_TXN; h.key_count()];
    let total: usize = sessions.iter().map(|s| s.len()).sum();
    let mut order = Vec::with_capacity(total + 1);
    order.push(INITIAL_TXN);
    let hint = value_hints(h);
    let mut replay = Replay {
        h,
        reads_of: &reads_of,
        pending,
        current,
        waiting,
        watchers: vec![Vec::new(); h.key_count()],
        ran: vec![false; n],
        woken: Vec::new(),
        runnable: BinaryHeap::new(),
        hint: &hint,
    };
    for (s, list) in sessions.iter().enumerate() {
        if let Some(&t) = list.first() {
            replay.consider(s as u32, t);
        }
    }
    let mut preferred: Option<(u32, TxnId)> = None;
    while order.len() < total + 1 {
        // Every 64 steps: a transaction of a scan can read 100,000 keys.
        if order.len() % 64 == 0 && deadline.is_some_and(|d| Instant::now() >= d) {
            return None;
        }
        // The session that ran last goes on while it can and nothing runnable comes before
        // it (keeps a session's transactions together, as a serial store that ran them back
        // to back would).
        let (s, t) = match preferred.take() {
            Some(p) => p,
            None => {
                let Reverse((_, s, t)) = replay.runnable.pop()?;
                // Entries go stale: the session moved on, or the transaction no longer runs.
                if sessions[s as usize].get(next[s as usize]) != Some(&t) {
                    continue;
                }
                if replay.blocking_key(t).is_some() {
                    replay.consider(s, t);
                    continue;
                }
                (s, t)
            }
        };
        next[s as usize] += 1;
        order.push(t);
        replay.run(t);
        for &b in &after[after_start[t as usize] as usize..after_start[t as usize + 1] as usize] {
            replay.waiting[b as usize] -= 1;
            let bs = session_of[b as usize];
            if replay.waiting[b as usize] == 0
                && bs != u32::MAX
                && sessions[bs as usize].get(next[bs as usize]) == Some(&b)
            {
                replay.consider(bs, b);
            }
        }
        if let Some(&head) = sessions[s as usize].get(next[s as usize]) {
            let first = replay.runnable.peek().map(|Reverse((hint, _, _))| *hint);
            if replay.waiting[head as usize] == 0
                && replay.blocking_key(head).is_none()
                && first.map_or(true, |first| hint[head as usize] <= first)
            {
                preferred = Some((s, head));
            } else {
                replay.consider(s, head);
            }
        }
    }
    Some(order)
}

/// The `guide` edges not from t0 as CSR lists: per transaction how many sources it waits on,
/// and the transactions each one releases (`after[after_start[t]..after_start[t + 1]]`).
fn guide_edges(n: usize, guide: &[(TxnId, TxnId)]) -> (Vec<u32>, Vec<u32>, Vec<TxnId>) {
    let mut waiting = vec![0u32; n];
    let mut after_start = vec![0u32; n + 1];
    for &(a, b) in guide {
        if a != INITIAL_TXN {
            waiting[b as usize] += 1;
            after_start[a as usize + 1] += 1;
        }
    }
    for i in 0..n {
        after_start[i + 1] += after_start[i];
    }
    let mut after = vec![0 as TxnId; after_start[n] as usize];
    let mut fill = after_start.clone();
    for &(a, b) in guide {
        if a != INITIAL_TXN {
            after[fill[a as usize] as usize] = b;
            fill[a as usize] += 1;
        }
    }
    (waiting, after_start, after)
}

/// Distinct external reads (key, writer) per transaction, and pending reader counts; `None`
/// when a read's writer is not committed. Each list sorted (binary search in `blocking_key`;
/// a scan of thousands of rows makes a transaction read thousands of keys).
#[allow(clippy::type_complexity)]
fn external_reads(
    h: &History,
) -> Option<(Vec<Vec<(KeyId, TxnId)>>, FxHashMap<(KeyId, TxnId), u32>)> {
    let committed = |t: TxnId| h.txn(t).is_committed();
    let mut reads_of: Vec<Vec<(KeyId, TxnId)>> = vec![Vec::new(); h.txn_count()];
    let mut pending: FxHashMap<(KeyId, TxnId), u32> = FxHashMap::default();
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let list = &mut reads_of[t as usize];
        for o in h.txn(t).ops() {
            let op = h.op(o);
            if op.kind != OpKind::Read {
                continue;
            }
            match h.writer_txn(o) {
                Some(w) if w == t => {}
                Some(w) if committed(w) => list.push((op.key, w)),
                _ => return None,
            }
        }
        list.sort_unstable();
        list.dedup();
        for &read in list.iter() {
            *pending.entry(read).or_insert(0) += 1;
        }
    }
    Some((reads_of, pending))
}

/// Per transaction, its priority among those that can run: the smallest value it writes
/// (when a store writes increasing values — as the generator does — that is its own order);
/// a read-only one, the largest value it reads.
fn value_hints(h: &History) -> Vec<u64> {
    let n = h.txn_count();
    (0..n as TxnId)
        .map(|t| {
            let ops = h.txn_ops(t);
            let written = ops
                .iter()
                .filter(|op| op.kind == OpKind::Write)
                .filter_map(|op| op.value)
                .min();
            let read = ops
                .iter()
                .filter(|op| op.kind == OpKind::Read)
                .filter_map(|op| op.value)
                .max();
            written.or(read).unwrap_or(u64::MAX)
        })
        .collect()
}

/// The replay's state: what each waiting session's next transaction is blocked on.
struct Replay<'a> {
    h: &'a History,
    /// Distinct external reads (key, writer) per transaction.
    reads_of: &'a [Vec<(KeyId, TxnId)>],
    /// Readers still to run per (key, writer).
    pending: FxHashMap<(KeyId, TxnId), u32>,
    /// The current version (last replayed writer) of each key.
    current: Vec<TxnId>,
    /// Guide edges still to run before each transaction.
    waiting: Vec<u32>,
    /// Per key, the sessions whose next transaction is blocked on it: looked at again when
    /// the key's current version or its count of pending readers changes.
    watchers: Vec<Vec<(u32, TxnId)>>,
    /// Transactions already replayed.
    ran: Vec<bool>,
    /// Scratch list of woken (session, transaction) pairs.
    woken: Vec<(u32, TxnId)>,
    /// Next transactions that could run when pushed, smallest hint first.
    runnable: BinaryHeap<Reverse<(u64, u32, TxnId)>>,
    hint: &'a [u64],
}

impl Replay<'_> {
    /// A key that keeps `t` from running now: one it reads at another version than the
    /// current one, or one it writes whose current version other transactions still read.
    fn blocking_key(&self, t: TxnId) -> Option<KeyId> {
        let reads = &self.reads_of[t as usize];
        if let Some(&(k, _)) = reads.iter().find(|&&(k, w)| self.current[k as usize] != w) {
            return Some(k);
        }
        self.h.keys_written(t).iter().copied().find(|&k| {
            let version = self.current[k as usize];
            let waiting = self.pending.get(&(k, version)).copied().unwrap_or(0);
            let own = reads.binary_search(&(k, version)).is_ok() as u32;
            waiting != own
        })
    }

    /// Files session `s`'s next transaction `t`: runnable, or watching what blocks it (a
    /// transaction still waiting on guide edges is looked at again when they have run).
    fn consider(&mut self, s: u32, t: TxnId) {
        if self.waiting[t as usize] > 0 {
            return;
        }
        match self.blocking_key(t) {
            Some(k) => self.watchers[k as usize].push((s, t)),
            None => self.runnable.push(Reverse((self.hint[t as usize], s, t))),
        }
    }

    /// Runs `t`, then looks again at the sessions blocked on the keys it read or wrote.
    fn run(&mut self, t: TxnId) {
        for &(k, w) in &self.reads_of[t as usize] {
            if let Some(c) = self.pending.get_mut(&(k, w)) {
                *c -= 1;
            }
        }
        for &k in self.h.keys_written(t) {
            self.current[k as usize] = t;
        }
        let touched = self.reads_of[t as usize]
            .iter()
            .map(|&(k, _)| k)
            .chain(self.h.keys_written(t).iter().copied());
        self.ran[t as usize] = true;
        let mut woken = std::mem::take(&mut self.woken);
        for k in touched {
            woken.append(&mut self.watchers[k as usize]);
        }
        for (s, blocked) in woken.drain(..) {
            if !self.ran[blocked as usize] {
                self.consider(s, blocked);
            }
        }
        self.woken = woken;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Consistency, GenerateParams};
    use crate::ser::{verify_serial_order, SerVerdict};
    use crate::verdict::engines::check_serializable;

    #[test]
    fn finds_serial_orders_of_serial_runs_and_none_of_unserializable_ones() {
        for seed in 0..40 {
            for consistency in [Consistency::Serializable, Consistency::Causal] {
                let h = generate(&GenerateParams {
                    sessions: 4,
                    txns_per_session: 6,
                    ops_per_txn: 4,
                    keys: 5,
                    abort_ratio: 0.1,
                    consistency,
                    seed,
                    ..GenerateParams::default()
                })
                .unwrap();
                match greedy_serial_order(&h, &[], None) {
                    Some(order) => verify_serial_order(&h, &order).unwrap(),
                    None => assert!(
                        consistency != Consistency::Serializable
                            || check_serializable(&h, None).unwrap() == SerVerdict::Unserializable,
                        "stuck on a serial run, seed {seed}"
                    ),
                }
            }
        }
    }
}
