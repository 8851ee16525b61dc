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
/// makes a transaction see another's writes all or none, and a snapshot is closed under "seen
/// by": where a causal seed changes one read, these make `p` *miss* `t3` and `t1` miss `p` —
/// every read of the missed transaction's writes, *and of every transaction that saw it in the
/// observed run* (its descendants by session order and write–read order: their reads stay
/// fixed in the seed, so they see it), now reads the latest older version (σ order) whose writer
/// is not missed; an edge already pointing that way in the observed run needs no change. `p`
/// and `t1` are their sessions' boundaries, so each also misses the transactions the other's
/// session leaves out (a read of them would need them); `t3` is included whole, and the prefix
/// closed as for the causal seeds. With the strict boundary only the boundary read may change:
/// a miss changes the first read of a missed transaction's write and cuts the rest.
///
/// One seed per (pivot, `t1`, `t3`), tried in this order: first the triples whose cycle
/// closes in the observed run already (`t3 = t1`, `t3` forced into `t1`'s snapshot, or read
/// by `t1`), then the rest; within each group by the last position of the three in σ plus
/// their span, smallest first: early triples build small prefixes (cheap to judge, and to
/// replay), and the three must overlap in time, so near ones are likelier. At most
/// [`MOST_PIVOT_SEEDS`] triples are kept (the smallest by that order).
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
    let seen = SeenBy::new(h);
    let mut forced = super::dangerous::Forced::new(h);
    let triples = pivot_triples(structures, &sigma, |t1, t3| {
        t1 == t3 || forced.sees(t1, t3) || seen.reads_from(t1, t3)
    });
    let mut descendants = Descendants::new(h.txn_count());
    for (_, structure, t1, t3) in triples {
        let p = structures[structure as usize].pivot;
        let sp = dom.session_of[p as usize] as usize;
        let s1 = dom.session_of[t1 as usize] as usize;
        let s3 = dom.session_of[t3 as usize] as usize;
        if after_in_session(t1, t3) {
            continue; // t3 would be left out
        }
        let left_out = |u: TxnId| after_in_session(p, u) || after_in_session(t1, u);
        let saw_t3 = descendants.of(&seen, t3);
        let Some(p_misses) = miss(p, &|u| saw_t3[u as usize] || left_out(u)) else {
            continue;
        };
        let saw_p = descendants.of(&seen, p);
        if t3 != t1 && saw_p[t3 as usize] {
            continue; // t3's fixed reads see p: p could not overlap it
        }
        let Some(t1_misses) = miss(t1, &|u| saw_p[u as usize] || left_out(u)) else {
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
        let mut changed: Vec<(OpId, TxnId)> = p_misses.iter().chain(&t1_misses).copied().collect();
        changed.sort_unstable();
        if dom.close(&mut boundary, &cap, &changed).is_none() {
            continue;
        }
        if visit(Seed { boundary, changed }).is_break() {
            return;
        }
    }
}

/// Most (pivot, `t1`, `t3`) triples [`for_each_pivot_seed`] keeps (16 bytes each).
const MOST_PIVOT_SEEDS: usize = 1 << 20;

/// The triples of `structures` as (rank, structure index, `t1`, `t3`), ascending by rank:
/// those `closes` says close in the observed run first, then by the last position of the three
/// in σ (positions `sigma`) plus their span; at most [`MOST_PIVOT_SEEDS`], the smallest.
fn pivot_triples(
    structures: &[super::dangerous::Structure],
    sigma: &[u32],
    mut closes: impl FnMut(TxnId, TxnId) -> bool,
) -> Vec<(u32, u32, TxnId, TxnId)> {
    const OPEN: u32 = 1 << 31;
    let mut triples: Vec<(u32, u32, TxnId, TxnId)> = Vec::new();
    for (i, structure) in structures.iter().enumerate() {
        let at = sigma[structure.pivot as usize];
        for &t1 in &structure.before {
            for &t3 in &structure.after {
                let positions = [at, sigma[t1 as usize], sigma[t3 as usize]];
                let last = positions.iter().copied().max().unwrap_or(0);
                let first = positions.iter().copied().min().unwrap_or(0);
                // Early (a small prefix to build and judge) and near each other (they must
                // overlap in time).
                let late_and_spread = last.saturating_add(last - first).min(OPEN - 1);
                let rank = late_and_spread | if closes(t1, t3) { 0 } else { OPEN };
                triples.push((rank, i as u32, t1, t3));
                if triples.len() >= 2 * MOST_PIVOT_SEEDS {
                    triples.select_nth_unstable(MOST_PIVOT_SEEDS);
                    triples.truncate(MOST_PIVOT_SEEDS);
                }
            }
        }
    }
    triples.sort_unstable();
    triples.truncate(MOST_PIVOT_SEEDS);
    triples
}

/// Who saw whom in the observed run: per transaction, its session successor and the committed
/// transactions that read from it (ascending, without repeats).
struct SeenBy {
    next: Vec<TxnId>,
    readers: Vec<Vec<TxnId>>,
}

impl SeenBy {
    fn new(h: &History) -> SeenBy {
        let n = h.txn_count();
        let mut next = vec![INITIAL_TXN; n];
        let mut readers: Vec<Vec<TxnId>> = vec![Vec::new(); n];
        for session in h.sessions() {
            let mut last: Option<TxnId> = None;
            for t in session.txns().filter(|&t| h.txn(t).is_committed()) {
                if let Some(l) = last {
                    next[l as usize] = t;
                }
                last = Some(t);
                for o in h.txn(t).ops().filter(|&o| is_external(h, o)) {
                    if let Some(w) = h.writer_txn(o).filter(|&w| w != INITIAL_TXN) {
                        if readers[w as usize].last() != Some(&t) {
                            readers[w as usize].push(t);
                        }
                    }
                }
            }
        }
        for r in &mut readers {
            r.sort_unstable();
            r.dedup();
        }
        SeenBy { next, readers }
    }

    /// Whether `reader` read something `writer` wrote in the observed run.
    fn reads_from(&self, reader: TxnId, writer: TxnId) -> bool {
        self.readers[writer as usize].binary_search(&reader).is_ok()
    }
}

/// The observed descendants of a transaction by session order and write–read order (itself
/// included), as a flag per transaction; the last few are cached.
struct Descendants {
    n: usize,
    cache: Vec<(TxnId, std::rc::Rc<Vec<bool>>)>,
    work: Vec<TxnId>,
}

impl Descendants {
    const CACHED: usize = 64;

    fn new(n: usize) -> Descendants {
        Descendants {
            n,
            cache: Vec::new(),
            work: Vec::new(),
        }
    }

    fn of(&mut self, seen: &SeenBy, t: TxnId) -> std::rc::Rc<Vec<bool>> {
        if let Some((_, d)) = self.cache.iter().find(|(x, _)| *x == t) {
            return d.clone();
        }
        let mut flags = vec![false; self.n];
        flags[t as usize] = true;
        self.work.clear();
        self.work.push(t);
        while let Some(x) = self.work.pop() {
            let next = seen.next[x as usize];
            let successors = (next != INITIAL_TXN)
                .then_some(next)
                .into_iter()
                .chain(seen.readers[x as usize].iter().copied());
            for y in successors {
                if !flags[y as usize] {
                    flags[y as usize] = true;
                    self.work.push(y);
                }
            }
        }
        let flags = std::rc::Rc::new(flags);
        if self.cache.len() >= Self::CACHED {
            self.cache.remove(0);
        }
        self.cache.push((t, flags.clone()));
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::test_util::h;
    use crate::check::{oracle, Level};
    use crate::predict::candidate::observed_serializability;
    use crate::predict::dangerous::structures;
    use crate::ser::SerVerdict;

    /// Wikipedia's read-only anomaly in miniature. Session 1: `T1.1` writes a (a watch row),
    /// then `T1.2` reads x and y. Session 2: the pivot `T2.1` reads a, reads and bumps the
    /// counter c and writes x. Session 3: `T3.1` reads c from the pivot, bumps it and writes y.
    /// For `T1.2` to miss the pivot it must also miss `T3.1`, which saw it: a seed that changed
    /// only the read of x would be rejected by SI (the only seed there is).
    #[test]
    fn a_pivot_seed_misses_what_saw_the_missed_transaction() {
        let hist = h("wa1 / rx1 ry2 | ra1 rc0 wx1 wc1 | rc1 wc2 wy2");
        let SerVerdict::Serializable { order } = observed_serializability(&hist, None).unwrap()
        else {
            panic!("the observed run is serializable")
        };
        let found = structures(&hist);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].pivot, &found[0].before, &found[0].after),
            (3, &vec![2], &vec![1])
        );
        let dom = Domains::new(&hist, BoundaryKind::Relaxed);
        let mut seeds = Vec::new();
        for_each_pivot_seed(&dom, &order, &found, |seed| {
            seeds.push(seed);
            ControlFlow::Continue(())
        });
        assert_eq!(seeds.len(), 1);
        // The pivot misses a; T1.2 misses x (the pivot's) and y (T3.1's): all read t0.
        let mut changed: Vec<(String, TxnId)> = seeds[0]
            .changed
            .iter()
            .map(|&(o, w)| (hist.key_name(hist.op(o).key).to_string(), w))
            .collect();
        changed.sort();
        let t0 = INITIAL_TXN;
        assert_eq!(
            changed,
            vec![
                ("a".to_string(), t0),
                ("x".to_string(), t0),
                ("y".to_string(), t0)
            ]
        );
        let built = dom
            .build_with(&seeds[0].boundary, &seeds[0].changed, true)
            .unwrap();
        assert_eq!(
            oracle::satisfies(&built.history, Level::Snapshot),
            Some(true)
        );
        assert_eq!(
            oracle::satisfies(&built.history, Level::Serializable),
            Some(false)
        );
    }
}
