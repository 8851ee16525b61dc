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
//! position in its session, so the first ones build small prefixes.
//!
//! A seed is only a candidate: the caller decides it with the checkers, exactly as it decides the
//! solver's candidates. Seeds make no claim of completeness — the solver phase does.

use std::ops::ControlFlow;

use super::prefix::{is_external, Domains};
use super::space::{BoundaryKind, NONE};
use crate::history::{KeyId, OpId, TxnId, INITIAL_TXN};

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
    let n = h.txn_count();
    let mut sigma = vec![u32::MAX; n];
    for (i, &t) in order.iter().enumerate() {
        sigma[t as usize] = i as u32;
    }
    // Versions of each key in σ order, t0 first.
    let mut versions: Vec<Vec<TxnId>> = vec![vec![INITIAL_TXN]; h.key_count()];
    for &t in order.iter().filter(|&&t| t != INITIAL_TXN) {
        for &k in h.keys_written(t) {
            if versions[k as usize].last() != Some(&t) {
                versions[k as usize].push(t);
            }
        }
    }
    let minimal: Vec<u32> = (0..dom.sessions.len() as u32)
        .map(|s| dom.round_up(s, 0))
        .collect();
    let caps: Vec<u32> = dom.sessions.iter().map(|d| d.max).collect();
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
        }
    }
}
