//! Candidate predictions from the shape of common anomalies, tried before the solver (the
//! scalable engine's first phase; docs/prediction.md "The scalable engine").
//!
//! The observed history is serializable, with a serial order `σ`. A seed changes one read
//! choice: a read of `k` by `t3` that observed the version of `w` now reads a neighbouring
//! version of `k` in `σ` (the one `w` overwrote, the one before it, or the one after `w`). The
//! session of `t3` gets its boundary there (relaxed: `t3`; strict: the read); `w` is included
//! whole (the lost update, write skew and fractured read all need it); every other session
//! starts at its smallest boundary, and the prefix is closed under "an included read reads an
//! included write" ([`super::prefix::Domains::close`]). Seeds are tried in order of `t3`'s
//! position in its session, so the first ones build small prefixes. Under the relaxed boundary
//! with one choice per (transaction, key), a seed may also make `t3` miss every key it read
//! from one writer (a single changed read of them would be a fractured read, which causal
//! consistency, read atomic and prefix consistency reject). (Trying the reads of keys `t3`
//! also writes first — lost updates — made Wikipedia 10 × 200 at causal unknown at 60 s
//! instead of predicted in 35 s: not done.)
//!
//! A seed is only a candidate: the caller decides it with the checkers, exactly as it decides the
//! solver's candidates. Seeds make no claim of completeness — the solver phase does.

use std::ops::ControlFlow;

use super::prefix::{is_external, Domains};
use super::space::{BoundaryKind, NONE};
use crate::history::{History, KeyId, OpId, TxnId, INITIAL_TXN};

/// One seed: a closed boundary vector and the changed reads (sorted by op).
pub(crate) struct Seed {
    pub boundary: Vec<u32>,
    pub changed: Vec<(OpId, TxnId)>,
}

/// Calls `visit` with every seed until it breaks.
pub(crate) fn for_each_seed(
    dom: &Domains,
    order: &[TxnId],
    per_read: bool,
    mut visit: impl FnMut(Seed) -> ControlFlow<()>,
) {
    let h = dom.h;
    let (sigma, versions) = versions_in_order(h, order);
    let (minimal, caps) = smallest_and_largest_boundaries(dom);
    let longest = dom.sessions.iter().map(|d| d.txns.len()).max().unwrap_or(0);
    for p in 0..longest {
        for (s, d) in dom.sessions.iter().enumerate() {
            let Some(&t3) = d.txns.get(p) else { continue };
            let reads: Vec<OpId> = h.txn(t3).ops().filter(|&o| is_external(h, o)).collect();
            for (i, &r) in reads.iter().enumerate() {
                let key: KeyId = h.op(r).key;
                let first_of_key = !reads[..i].iter().any(|&o| h.op(o).key == key);
                if !per_read && !first_of_key {
                    continue; // one choice per (transaction, key)
                }
                let w = h.writer_txn(r).unwrap_or(INITIAL_TXN);
                let vs = &versions[key as usize];
                let Ok(at) = vs.binary_search_by_key(&sigma[w as usize], |&v| sigma[v as usize])
                else {
                    continue;
                };
                let value = match dom.boundary {
                    BoundaryKind::Relaxed => p as u32,
                    BoundaryKind::Strict => dom.reads_before[r as usize],
                };
                let alternatives = [at.checked_sub(1), at.checked_sub(2), Some(at + 1)];
                for t2 in alternatives.into_iter().flatten().filter_map(|x| vs.get(x)) {
                    let t2 = *t2;
                    let own = dom.session_of.get(t2 as usize).copied() == Some(s as u32);
                    if t2 == t3 || t2 == w || (own && dom.index_of[t2 as usize] > p as u32) {
                        continue;
                    }
                    // One read per choice (rc), or the group's first read as the strict
                    // boundary; relaxed groups change all their reads.
                    let mut changed: Vec<(OpId, TxnId)> =
                        if per_read || dom.boundary == BoundaryKind::Strict {
                            vec![(r, t2)]
                        } else {
                            reads
                                .iter()
                                .filter(|&&o| h.op(o).key == key)
                                .map(|&o| (o, t2))
                                .collect()
                        };
                    changed.sort_unstable();
                    let mut boundary = minimal.clone();
                    let mut cap = caps.clone();
                    boundary[s] = value;
                    cap[s] = value;
                    if w != INITIAL_TXN {
                        let ws = dom.session_of[w as usize];
                        if ws != NONE && ws as usize != s {
                            let need = dom.round_up(ws, dom.whole(w));
                            boundary[ws as usize] = boundary[ws as usize].max(need);
                        }
                    }
                    if dom.close(&mut boundary, &cap, &changed).is_none() {
                        continue;
                    }
                    if visit(Seed { boundary, changed }).is_break() {
                        return;
                    }
                }
            }
            // Relaxed boundary, one choice per (transaction, key): `t3` misses a writer it read
            // several keys from — every such read now reads the version that writer
            // overwrote. A single changed read of them is a fractured read that causal
            // consistency, read atomic and prefix consistency reject (Voter's readers at ra
            // see the one inserting call's row and columns all or none).
            if dom.boundary == BoundaryKind::Relaxed && !per_read {
                let mut writers: Vec<TxnId> = reads
                    .iter()
                    .filter_map(|&o| h.writer_txn(o))
                    .filter(|&w| w != INITIAL_TXN)
                    .collect();
                writers.sort_unstable();
                writers.dedup();
                for w in writers {
                    let mut changed: Vec<(OpId, TxnId)> = Vec::new();
                    let mut keys: Vec<KeyId> = Vec::new();
                    for &o in reads.iter().filter(|&&o| h.writer_txn(o) == Some(w)) {
                        let key = h.op(o).key;
                        let vs = &versions[key as usize];
                        let Ok(at) =
                            vs.binary_search_by_key(&sigma[w as usize], |&v| sigma[v as usize])
                        else {
                            continue;
                        };
                        let Some(&older) = at.checked_sub(1).and_then(|x| vs.get(x)) else {
                            continue;
                        };
                        changed.push((o, older));
                        if !keys.contains(&key) {
                            keys.push(key);
                        }
                    }
                    if keys.len() < 2 {
                        continue; // a single key: the seeds above
                    }
                    changed.sort_unstable();
                    let mut boundary = minimal.clone();
                    let mut cap = caps.clone();
                    boundary[s] = p as u32;
                    cap[s] = p as u32;
                    let ws = dom.session_of[w as usize];
                    if ws != NONE && ws as usize != s {
                        let need = dom.round_up(ws, dom.whole(w));
                        boundary[ws as usize] = boundary[ws as usize].max(need);
                    }
                    if dom.close(&mut boundary, &cap, &changed).is_none() {
                        continue;
                    }
                    if visit(Seed { boundary, changed }).is_break() {
                        return;
                    }
                }
            }
        }
    }
}

/// Per session: its smallest allowed boundary and ∞ (no cap).
fn smallest_and_largest_boundaries(dom: &Domains) -> (Vec<u32>, Vec<u32>) {
    let minimal = (0..dom.sessions.len() as u32)
        .map(|s| dom.round_up(s, 0))
        .collect();
    (minimal, dom.sessions.iter().map(|d| d.max).collect())
}

/// Positions in the serial order `order` (per transaction), and each key's versions in that
/// order, t0 first.
fn versions_in_order(h: &History, order: &[TxnId]) -> (Vec<u32>, Vec<Vec<TxnId>>) {
    let mut sigma = vec![u32::MAX; h.txn_count()];
    for (i, &t) in order.iter().enumerate() {
        sigma[t as usize] = i as u32;
    }
    let mut versions: Vec<Vec<TxnId>> = vec![vec![INITIAL_TXN]; h.key_count()];
    for &t in order.iter().filter(|&&t| t != INITIAL_TXN) {
        for &k in h.keys_written(t) {
            if versions[k as usize].last() != Some(&t) {
                versions[k as usize].push(t);
            }
        }
    }
    (sigma, versions)
}

/// Snapshot isolation's seeds: Fekete et al.'s dangerous structure `t1 →rw p →rw t3`
/// ([`super::dangerous`]), which every prediction at SI holds, built from the observed run. SI
/// makes a transaction see another's writes all or none, so where a causal seed changes one
/// read, these make `p` *miss* `t3` — every read `p` made of `t3`'s writes now reads an older
/// version (σ order) — and `t1` miss `p`; an edge already pointing that way in the observed run
/// needs no change. `p` and `t1` are their sessions' boundaries, so each also misses the
/// transactions the other's session leaves out (a read of them would need them); `t3` is
/// included whole, and the prefix closed as for the causal seeds. With the strict boundary only
/// the boundary read may change: a miss changes the first read of a missed transaction's write
/// and cuts the rest. One seed per (pivot, `t1`, `t3`): few, as runs have few pivots.
pub(crate) fn for_each_pivot_seed(
    dom: &Domains,
    order: &[TxnId],
    structures: &[super::dangerous::Structure],
    mut visit: impl FnMut(Seed) -> ControlFlow<()>,
) {
    let h = dom.h;
    let (sigma, versions) = versions_in_order(h, order);
    let (minimal, caps) = smallest_and_largest_boundaries(dom);
    let strict = dom.boundary == BoundaryKind::Strict;
    // After `t` in its session (left out when `t` is the session's boundary).
    let after_in_session = |t: TxnId, u: TxnId| {
        u != INITIAL_TXN
            && dom.session_of[u as usize] == dom.session_of[t as usize]
            && dom.index_of[u as usize] > dom.index_of[t as usize]
    };
    // The reads by which `reader` misses every transaction `missed` says: (read, the latest
    // older version, in σ, whose writer is not missed).
    let miss = |reader: TxnId, missed: &dyn Fn(TxnId) -> bool| -> Option<Vec<(OpId, TxnId)>> {
        let mut changes = Vec::new();
        for o in h.txn(reader).ops().filter(|&o| is_external(h, o)) {
            let w = h.writer_txn(o).unwrap_or(INITIAL_TXN);
            if !missed(w) {
                continue;
            }
            let vs = &versions[h.op(o).key as usize];
            let at = vs
                .binary_search_by_key(&sigma[w as usize], |&v| sigma[v as usize])
                .ok()?;
            let older = vs[..at].iter().rev().find(|&&v| !missed(v))?;
            changes.push((o, *older));
            if strict {
                break;
            }
        }
        Some(changes)
    };
    // `t3` must come before `t1` for the cycle to close: pairs where the observed run already
    // says so directly (`t3 = t1`, `t3` before `t1` in a session, `t1` read from `t3`) first.
    let closes = |t1: TxnId, t3: TxnId| {
        t1 == t3
            || after_in_session(t3, t1)
            || h.txn(t1)
                .ops()
                .any(|o| is_external(h, o) && h.writer_txn(o) == Some(t3))
    };
    for first in [true, false] {
        for structure in structures {
            let p = structure.pivot;
            let sp = dom.session_of[p as usize] as usize;
            for &t1 in &structure.before {
                let s1 = dom.session_of[t1 as usize] as usize;
                for &t3 in &structure.after {
                    let s3 = dom.session_of[t3 as usize] as usize;
                    if after_in_session(t1, t3) || closes(t1, t3) != first {
                        continue; // t3 would be left out, or not this pass
                    }
                    let left_out = |u: TxnId| after_in_session(p, u) || after_in_session(t1, u);
                    let Some(p_misses) = miss(p, &|u| u == t3 || left_out(u)) else {
                        continue;
                    };
                    let Some(t1_misses) = miss(t1, &|u| u == p || left_out(u)) else {
                        continue;
                    };
                    if p_misses.is_empty() && t1_misses.is_empty() {
                        continue; // the observed prefix: serializable
                    }
                    let value = |t: TxnId, changes: &[(OpId, TxnId)]| match changes.first() {
                        Some(&(o, _)) if strict => dom.reads_before[o as usize],
                        _ if strict => dom.whole(t),
                        _ => dom.index_of[t as usize],
                    };
                    let mut boundary = minimal.clone();
                    let mut cap = caps.clone();
                    cap[sp] = value(p, &p_misses);
                    cap[s1] = value(t1, &t1_misses);
                    boundary[sp] = cap[sp];
                    boundary[s1] = cap[s1];
                    if t3 != t1 {
                        let whole = dom.round_up(s3 as u32, dom.whole(t3));
                        if whole > cap[s3] {
                            continue;
                        }
                        boundary[s3] = boundary[s3].max(whole);
                    }
                    let mut changed: Vec<(OpId, TxnId)> =
                        p_misses.iter().chain(&t1_misses).copied().collect();
                    changed.sort_unstable();
                    if dom.close(&mut boundary, &cap, &changed).is_none() {
                        continue;
                    }
                    if visit(Seed { boundary, changed }).is_break() {
                        return;
                    }
                }
            }
        }
    }
}
