//! Serializability by search over session prefixes: Biswas & Enea (OOPSLA'19) §4.1,
//! Algorithm 2 "checkSER", with dbcop's incremental bookkeeping (notes/biswas-enea.md §3.2).
//!
//! A state is a prefix of every chain (a vector of per-chain positions). A node may extend the
//! prefix when it heads its chain, all its DAG predecessors are placed, and (the valid
//! extension of Lemma 4.1) placing it overwrites no key whose last writer still has an
//! unplaced reader other than the node itself. Only the count of those pending readers is
//! kept per key: only the last writer of a key can have pending readers, so a node's reads
//! always see the last writers when it is placed. Under SI the node R_t may also not open
//! while another open transaction (R placed, W not yet) writes a key t writes.
//!
//! Whether a prefix can be completed depends only on the set of placed nodes (Lemma 4.1), so
//! prefixes that failed are memoised by their position vectors (one hash per new state, not
//! per bookkeeping step). The depth-first search is iterative, with an undo log.
//!
//! Cost: O(∏(chain length + 1)) states, each step O(k + reads + writes + DAG successors);
//! polynomial for a fixed number of sessions (Corollary 4.3).

use std::time::Instant;

use rustc_hash::FxHashSet;

use super::reduce::{Problem, Split};

/// How the search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SearchResult {
    /// A serialization of the nodes, in order.
    Found(Vec<u32>),
    /// No serialization exists.
    Exhausted,
    /// The deadline or the state budget ran out.
    GaveUp,
}

/// Limits of one search.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub deadline: Option<Instant>,
    /// At most this many memoised failed states.
    pub max_failed_states: usize,
}

/// Statistics of one search.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SearchStats {
    pub steps: u64,
    pub failed_states: usize,
}

struct Frame {
    /// The node placed to reach this state (u32::MAX at the root).
    node: u32,
    /// The chain the node came from.
    chain: u32,
    /// The next chain to try from this state.
    next: u32,
    /// Undo-log length before the node was applied.
    undo: u32,
}

/// Runs the search.
pub(crate) fn search(p: &Problem, limits: Limits) -> (SearchResult, SearchStats) {
    let k = p.chains.len();
    let total = p.len();
    let mut pos = vec![0u32; k];
    let mut indeg = p.indegree.clone();
    let mut pending = p.init_readers.clone();
    let mut open = vec![
        0u32;
        if p.split == Split::Snapshot {
            p.keys as usize
        } else {
            0
        }
    ];
    let mut undo: Vec<(u32, u32)> = Vec::new();
    let mut failed: FxHashSet<Box<[u32]>> = FxHashSet::default();
    let mut stack: Vec<Frame> = vec![Frame {
        node: u32::MAX,
        chain: 0,
        next: 0,
        undo: 0,
    }];
    let mut placed = 0usize;
    let mut stats = SearchStats::default();
    // Whether node v (heading its chain) may be placed now.
    let valid = |v: u32, indeg: &[u32], pending: &[u32], open: &[u32]| -> bool {
        if indeg[v as usize] != 0 {
            return false;
        }
        let reads = p.reads(v);
        for &(x, _) in p.writes(v) {
            let own = reads.binary_search(&x).is_ok() as u32;
            if pending[x as usize] != own {
                return false;
            }
        }
        if p.split == Split::Snapshot && p.is_read_half(v) {
            for &(x, _) in p.writes(v + 1) {
                if open[x as usize] != 0 {
                    return false;
                }
            }
        }
        true
    };
    loop {
        if placed == total {
            let order = stack.iter().skip(1).map(|f| f.node).collect();
            stats.failed_states = failed.len();
            return (SearchResult::Found(order), stats);
        }
        stats.steps += 1;
        if stats.steps % 4096 == 0 {
            if limits.deadline.is_some_and(|d| Instant::now() >= d) || crate::interrupt::requested()
            {
                stats.failed_states = failed.len();
                return (SearchResult::GaveUp, stats);
            }
            if failed.len() > limits.max_failed_states {
                stats.failed_states = failed.len();
                return (SearchResult::GaveUp, stats);
            }
        }
        let top = stack.len() - 1;
        let mut chosen = None;
        let mut c = stack[top].next as usize;
        while c < k {
            let i = pos[c] as usize;
            if i < p.chains[c].len() {
                let v = p.chains[c][i];
                if valid(v, &indeg, &pending, &open) {
                    chosen = Some((c, v));
                    break;
                }
            }
            c += 1;
        }
        match chosen {
            Some((c, v)) => {
                stack[top].next = c as u32 + 1;
                pos[c] += 1;
                if failed.contains(&pos[..]) {
                    pos[c] -= 1;
                    continue;
                }
                let mark = undo.len() as u32;
                apply(p, v, &mut indeg, &mut pending, &mut open, &mut undo);
                placed += 1;
                stack.push(Frame {
                    node: v,
                    chain: c as u32,
                    next: 0,
                    undo: mark,
                });
            }
            None => {
                if stack.len() == 1 {
                    stats.failed_states = failed.len();
                    return (SearchResult::Exhausted, stats);
                }
                failed.insert(pos.clone().into_boxed_slice());
                let f = stack.pop().expect("a frame");
                revert(
                    p,
                    f.node,
                    &mut indeg,
                    &mut pending,
                    &mut open,
                    &mut undo,
                    f.undo,
                );
                pos[f.chain as usize] -= 1;
                placed -= 1;
            }
        }
    }
}

fn apply(
    p: &Problem,
    v: u32,
    indeg: &mut [u32],
    pending: &mut [u32],
    open: &mut [u32],
    undo: &mut Vec<(u32, u32)>,
) {
    for &x in p.reads(v) {
        pending[x as usize] -= 1;
    }
    for &(x, readers) in p.writes(v) {
        undo.push((x, pending[x as usize]));
        pending[x as usize] = readers;
    }
    if p.split == Split::Snapshot {
        if p.is_read_half(v) {
            for &(x, _) in p.writes(v + 1) {
                open[x as usize] += 1;
            }
        } else {
            for &(x, _) in p.writes(v) {
                open[x as usize] -= 1;
            }
        }
    }
    for &s in p.succ(v) {
        indeg[s as usize] -= 1;
    }
}

fn revert(
    p: &Problem,
    v: u32,
    indeg: &mut [u32],
    pending: &mut [u32],
    open: &mut [u32],
    undo: &mut Vec<(u32, u32)>,
    mark: u32,
) {
    for &s in p.succ(v) {
        indeg[s as usize] += 1;
    }
    if p.split == Split::Snapshot {
        if p.is_read_half(v) {
            for &(x, _) in p.writes(v + 1) {
                open[x as usize] -= 1;
            }
        } else {
            for &(x, _) in p.writes(v) {
                open[x as usize] += 1;
            }
        }
    }
    while undo.len() > mark as usize {
        let (x, old) = undo.pop().expect("an undo entry");
        pending[x as usize] = old;
    }
    for &x in p.reads(v) {
        pending[x as usize] += 1;
    }
}
