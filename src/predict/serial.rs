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
//! Cost: each step looks at the next transaction of each session: O(transactions × sessions ×
//! operations per transaction), memory linear.

use rustc_hash::FxHashMap;

use crate::history::{History, KeyId, OpKind, TxnId, INITIAL_TXN};

/// A serial order of the committed transactions of `h` (t0 first), or `None` if the greedy
/// replay gets stuck. `guide`: edges every serial order contains (e.g. the saturated `pco`);
/// a transaction runs only after their sources, which keeps the replay off most dead ends.
pub(crate) fn greedy_serial_order(h: &History, guide: &[(TxnId, TxnId)]) -> Option<Vec<TxnId>> {
    let n = h.txn_count();
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
    let committed = |t: TxnId| h.txn(t).is_committed();
    // Distinct external reads (key, writer) per transaction, and pending reader counts.
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
                Some(w) if committed(w) => {
                    if !list.contains(&(op.key, w)) {
                        list.push((op.key, w));
                        *pending.entry((op.key, w)).or_insert(0) += 1;
                    }
                }
                _ => return None,
            }
        }
    }
    let sessions: Vec<Vec<TxnId>> = h
        .sessions()
        .iter()
        .map(|s| s.txns().filter(|&t| committed(t)).collect())
        .collect();
    let mut next = vec![0usize; sessions.len()];
    let mut current: Vec<TxnId> = vec![INITIAL_TXN; h.key_count()];
    let total: usize = sessions.iter().map(|s| s.len()).sum();
    let mut order = Vec::with_capacity(total + 1);
    order.push(INITIAL_TXN);
    let ready = |t: TxnId, current: &[TxnId], pending: &FxHashMap<(KeyId, TxnId), u32>| -> bool {
        let reads = &reads_of[t as usize];
        if reads.iter().any(|&(k, w)| current[k as usize] != w) {
            return false;
        }
        h.keys_written(t).iter().all(|&k| {
            let version = current[k as usize];
            let waiting = pending.get(&(k, version)).copied().unwrap_or(0);
            let own = reads.contains(&(k, version)) as u32;
            waiting == own
        })
    };
    // Among transactions that can run, the one whose written values are smallest first (when
    // a store writes increasing values — as the generator does — that is its own order);
    // read-only ones by the largest value they read.
    let hint: Vec<u64> = (0..n as TxnId)
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
        .collect();
    let mut start = 0usize;
    while order.len() < total + 1 {
        let k = sessions.len();
        let pick = (0..k)
            .map(|i| (start + i) % k)
            .filter(|&s| {
                next[s] < sessions[s].len() && {
                    let t = sessions[s][next[s]];
                    waiting[t as usize] == 0 && ready(t, &current, &pending)
                }
            })
            .min_by_key(|&s| hint[sessions[s][next[s]] as usize])?;
        let t = sessions[pick][next[pick]];
        next[pick] += 1;
        for &(k, w) in &reads_of[t as usize] {
            if let Some(c) = pending.get_mut(&(k, w)) {
                *c -= 1;
            }
        }
        for &k in h.keys_written(t) {
            current[k as usize] = t;
        }
        for &b in &after[after_start[t as usize] as usize..after_start[t as usize + 1] as usize] {
            waiting[b as usize] -= 1;
        }
        order.push(t);
        // Stay with the same session while it can run (keeps transactions of a session
        // together, as a serial store that ran them back to back would).
        start = pick;
    }
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Consistency, GenerateParams};
    use crate::ser::{check_serializable, verify_serial_order, SerVerdict};

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
                match greedy_serial_order(&h, &[]) {
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
