//! Snapshot isolation with unobserved tails: ordering the appends no read showed (issue 20).
//!
//! Setting (see the parent module): every key's version order is known up to its *tail*, the
//! writes after the last one a read showed, which nobody read and whose order among themselves
//! is unknown. The split graph `G` (snapshot `S_t = 2t`, commit `C_t = 2t + 1`) carries Elle's
//! edges for a tail — `C_last → S_w` from the last shown version's writer and `S_r → C_w` from
//! its readers, for every tail writer `w` — and is acyclic (the caller checked). An order
//! `w_1 < … < w_n` of a tail adds `C_{w_i} → S_{w_{i+1}}` (`ww` between consecutive versions;
//! Elle's edges follow from these by transitivity, and no `rw` edge leaves a tail write, which
//! nobody read). So the history is SI iff some choice of the tails' orders keeps `G` acyclic,
//! which holds iff **some topological order of `G` keeps the intervals `[S_w, C_w]` of the
//! writers of each tail pairwise disjoint** (given such an order, order each tail by it: every
//! added edge points forwards; conversely a topological order of `G` plus the tails' edges has
//! each writer's commit before the next one's snapshot).
//!
//! **The schedule.** Kahn's algorithm on `G` with one lock per *contended* tail (two or more
//! writing transactions): `S_w` takes the locks of `w`'s tails, `C_w` releases them, and a
//! snapshot whose lock is held is not ready. Writing `P` for the prefix emitted so far, a move
//! is *safe* when, if some valid order (topological, tails apart) extends `P`, one extends `P`
//! followed by the move. Exchange arguments (take a valid extension `L` and move the node(s)
//! to the front; topological because their predecessors are in `P`; the relative order of
//! all other nodes is unchanged, so only pairs involving the moved transaction can newly
//! overlap):
//! 1. a ready commit `C_t`: moving it earlier only shrinks `t`'s interval;
//! 2. a ready snapshot `S_t` of a transaction in no contended tail, or whose tails' other
//!    writers have all committed in `P`: it only lengthens an interval nobody must avoid;
//! 3. a ready, unlocked snapshot `S_t` whose commit waits for nothing else (`C_t`'s only
//!    predecessor left is `S_t`), followed by `C_t`: the interval holds nothing.
//!
//! Only when no safe move exists is there a choice: the next node of every valid extension is
//! a ready, unlocked snapshot of a contended tail writer, so trying each of them in turn
//! (depth first) is exhaustive. The order tried is a heuristic: first a writer that has the
//! lowest transaction id (the earliest completion) among the unstarted writers of each of its
//! tails, then by id.
//! The search branches only at those points, so its size is that of the residue — the tail
//! writers whose snapshots must be placed while another writer of their key is still to come
//! and their commit waits on someone else — not the history's; each branch replays the
//! linear schedule. A dead end (nodes left, every ready one locked) with no choice behind it
//! proves that no order of the tails avoids a cycle; past the replay budget (or a run's work
//! bound on scanning waiting snapshots) the answer is "gave up" and the caller falls back to
//! the commit-order search.

use super::{Csr, NONE};
use crate::history::TxnId;

/// The outcome of [`order_tails`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TailOrder {
    /// A topological order of the split graph with each tail's writers apart.
    Ordered(Vec<u32>),
    /// No order of the tails keeps the graph acyclic; the rank (position of its snapshot in
    /// the last schedule tried, `NONE` if never placed) of each transaction, to order the
    /// tails by for the cycle shown.
    NoOrder(Vec<u32>),
    /// The replay budget ran out.
    GaveUp,
}

/// What [`order_tails`] did: choice points passed and dead ends met, over all replays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct TailSearch {
    /// Choice points passed (a schedule replayed counts its choice points again).
    pub choices: usize,
    /// Schedules that ended with nodes left and every ready snapshot locked.
    pub dead_ends: usize,
}

/// Replays of the schedule tried before giving up.
pub(super) const MAX_REPLAYS: usize = 64;

/// The contended tails: for each transaction, the tails (dense ids) it writes in, and per
/// tail, how many distinct transactions write it.
pub(super) struct Tails {
    /// `keys[first[t]..first[t + 1]]`: the contended tails transaction `t` writes.
    first: Vec<u32>,
    keys: Vec<u32>,
    writers: Vec<u32>,
    /// `by_key[key_first[k]..key_first[k + 1]]`: tail `k`'s writers, lowest id first.
    key_first: Vec<u32>,
    by_key: Vec<TxnId>,
}

impl Tails {
    /// From `(tail, transaction)` pairs (duplicates allowed); `txns` transactions.
    pub(super) fn new(txns: usize, mut pairs: Vec<(u32, TxnId)>) -> Tails {
        pairs.sort_unstable();
        pairs.dedup();
        let tails = pairs.last().map_or(0, |p| p.0 as usize + 1);
        let mut writers = vec![0u32; tails];
        for &(k, _) in &pairs {
            writers[k as usize] += 1;
        }
        let mut first = vec![0u32; txns + 1];
        for &(k, t) in &pairs {
            if writers[k as usize] >= 2 {
                first[t as usize + 1] += 1;
            }
        }
        for t in 0..txns {
            first[t + 1] += first[t];
        }
        let mut cursor = first.clone();
        let mut keys = vec![0u32; first[txns] as usize];
        for &(k, t) in &pairs {
            if writers[k as usize] >= 2 {
                keys[cursor[t as usize] as usize] = k;
                cursor[t as usize] += 1;
            }
        }
        let mut key_first = vec![0u32; tails + 1];
        for k in 0..tails {
            key_first[k + 1] = key_first[k] + writers[k];
        }
        let by_key = pairs.iter().map(|&(_, t)| t).collect();
        Tails {
            first,
            keys,
            writers,
            key_first,
            by_key,
        }
    }

    fn of(&self, t: TxnId) -> &[u32] {
        &self.keys[self.first[t as usize] as usize..self.first[t as usize + 1] as usize]
    }
}

/// One run of the schedule, taking the choices in `choices` (index into the sorted candidates
/// at each choice point; 0 beyond its end) and recording, at each choice point, how many
/// candidates there were.
enum Run {
    Done(Vec<u32>),
    DeadEnd(Vec<u32>),
    /// The scans of waiting snapshots exceeded their work bound (a linear multiple of the
    /// graph), which keeps a run linear-ish when thousands of tail writers wait at once.
    OutOfWork,
}

fn run(csr: &Csr, tails: &Tails, choices: &[u32], counts: &mut Vec<u32>) -> Run {
    let nodes = csr.first.len() - 1;
    let mut in_degree = vec![0u32; nodes];
    for a in &csr.arcs {
        in_degree[a.to as usize] += 1;
    }
    let mut unstarted = tails.writers.clone();
    let mut holder = vec![NONE; tails.writers.len()];
    // Per tail, its lowest-id writer not yet started (the heuristic's preference).
    let mut started = vec![false; tails.first.len() - 1];
    let mut next_unstarted = tails.key_first[..tails.writers.len()].to_vec();
    let (mut commits, mut free, mut waiting): (Vec<u32>, Vec<u32>, Vec<TxnId>) =
        (Vec::new(), Vec::new(), Vec::new());
    let ready = |v: u32, commits: &mut Vec<u32>, free: &mut Vec<u32>, waiting: &mut Vec<u32>| {
        if v % 2 == 1 {
            commits.push(v);
        } else if tails.of(v / 2).is_empty() {
            free.push(v);
        } else {
            waiting.push(v / 2);
        }
    };
    for v in (0..nodes as u32).rev() {
        if in_degree[v as usize] == 0 {
            ready(v, &mut commits, &mut free, &mut waiting);
        }
    }
    let mut order: Vec<u32> = Vec::with_capacity(nodes);
    let mut candidates: Vec<TxnId> = Vec::new();
    let mut scan_budget = 10_000_000 + 8 * (nodes + csr.arcs.len()) as u64;
    counts.clear();
    loop {
        let v = if let Some(c) = commits.pop() {
            for &k in tails.of(c / 2) {
                if holder[k as usize] == c / 2 {
                    holder[k as usize] = NONE;
                }
            }
            c
        } else if let Some(s) = free.pop() {
            s
        } else if waiting.is_empty() {
            break;
        } else {
            // A waiting snapshot: safe (rules 2 and 3 of the module comment), else a choice.
            scan_budget = match scan_budget.checked_sub(waiting.len() as u64) {
                Some(left) => left,
                None => return Run::OutOfWork,
            };
            let unlocked = |t: TxnId| tails.of(t).iter().all(|&k| holder[k as usize] == NONE);
            let safe = waiting.iter().position(|&t| {
                unlocked(t)
                    && (in_degree[2 * t as usize + 1] == 1
                        || tails.of(t).iter().all(|&k| unstarted[k as usize] == 1))
            });
            let i = match safe {
                Some(i) => i,
                None => {
                    candidates.clear();
                    candidates.extend(waiting.iter().copied().filter(|&t| unlocked(t)));
                    if candidates.is_empty() {
                        return Run::DeadEnd(order);
                    }
                    // The lowest id first, the earliest completion — but first those that are
                    // the lowest-id unstarted writer of each of their tails (in a run of the
                    // store, commits of one key's writers follow completion order).
                    for &t in candidates.iter() {
                        for &k in tails.of(t) {
                            let end = tails.key_first[k as usize + 1];
                            let n = &mut next_unstarted[k as usize];
                            while *n < end && started[tails.by_key[*n as usize] as usize] {
                                *n += 1;
                            }
                        }
                    }
                    let first_of_its_tails = |t: TxnId| {
                        tails
                            .of(t)
                            .iter()
                            .all(|&k| tails.by_key[next_unstarted[k as usize] as usize] == t)
                    };
                    candidates.sort_unstable_by_key(|&t| (!first_of_its_tails(t), t));
                    let pick = choices.get(counts.len()).copied().unwrap_or(0) as usize;
                    counts.push(candidates.len() as u32);
                    let t = candidates[pick.min(candidates.len() - 1)];
                    waiting.iter().position(|&w| w == t).unwrap()
                }
            };
            let t = waiting.swap_remove(i);
            started[t as usize] = true;
            for &k in tails.of(t) {
                holder[k as usize] = t;
                unstarted[k as usize] -= 1;
            }
            2 * t
        };
        order.push(v);
        for a in csr.out(v) {
            in_degree[a.to as usize] -= 1;
            if in_degree[a.to as usize] == 0 {
                ready(a.to, &mut commits, &mut free, &mut waiting);
            }
        }
    }
    if order.len() == nodes {
        Run::Done(order)
    } else {
        Run::DeadEnd(order)
    }
}

/// Orders the split graph `csr` (acyclic) keeping each contended tail's writers apart: depth
/// first over the choice points, at most `max_replays` schedules.
pub(super) fn order_tails(
    csr: &Csr,
    tails: &Tails,
    max_replays: usize,
    stats: &mut TailSearch,
) -> TailOrder {
    let mut choices: Vec<u32> = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    for _ in 0..max_replays {
        let outcome = run(csr, tails, &choices, &mut counts);
        stats.choices += counts.len();
        match outcome {
            Run::Done(order) => return TailOrder::Ordered(order),
            Run::OutOfWork => return TailOrder::GaveUp,
            Run::DeadEnd(order) => {
                stats.dead_ends += 1;
                // Next branch: the deepest choice point with an untried candidate.
                choices.resize(counts.len(), 0);
                while let Some(&last) = choices.last() {
                    if last + 1 < counts[choices.len() - 1] {
                        break;
                    }
                    choices.pop();
                }
                match choices.last_mut() {
                    Some(last) => *last += 1,
                    None => {
                        let mut rank = vec![NONE; (csr.first.len() - 1) / 2];
                        for (i, &v) in order.iter().enumerate() {
                            if v % 2 == 0 {
                                rank[v as usize / 2] = i as u32;
                            }
                        }
                        return TailOrder::NoOrder(rank);
                    }
                }
            }
        }
    }
    TailOrder::GaveUp
}
