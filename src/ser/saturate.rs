//! Forced commit-order edges: the pruning of Biswas & Enea's dbcop (OOPSLA'19 artifact, branch
//! `oopsla-2019`: CC saturation first, then the "wsc" fixpoint of closure + ww + rw edges;
//! notes/biswas-enea.md §3.6), at transaction level, with every edge's reason kept so that a
//! cycle can be explained.
//!
//! Starting from so ∪ wr, each round computes reachability (vector clocks over the session
//! chains, in a topological order) and adds
//! - **ww**: t3 reads x from t1, t2 ≠ t1 writes x and reaches t3 ⇒ t2 → t1 (Biswas & Enea's
//!   Causal axiom when the path is so ∪ wr; with derived edges on the path it is the Prefix or
//!   Conflict axiom under SI and the Serializability axiom under SER);
//! - **rw** (SER only): t3 reads x from t1, t2 ∉ {t1, t3} writes x and t1 reaches t2 ⇒ t3 → t2
//!   (t2 overwrites what t3 read, so it must come after t3).
//!
//! Per read and session only the latest (ww) or earliest (rw) such writer needs an edge; the
//! others follow by session order. The rounds stop when nothing new is forced or a cycle
//! appears. Soundness per level:
//! - SER: every rule is an instance of the Serializability axiom, iterated.
//! - SI: ww only. Each forced edge a → b implies W_a before R_b in the split history h_R|W
//!   (so, wr; a ww edge joins two writers of x, and the non-overlap rule puts W_t2 before
//!   R_t1), so a path ending in so ∪ wr is the Prefix axiom and one ending in ww the Conflict
//!   axiom.
//! - PC: one round only (paths of so ∪ wr, the Causal axiom, which Prefix implies); later
//!   rounds would use paths ending in a ww edge, which Prefix does not cover (pitfall 9 is the
//!   same mistake at the split level).
//!
//! Cost (issue 23): a round keeps clocks over *chains* — transactions each reaching the next —
//! either the sessions or, when it needs at most half as many, a cover of the forced edges by
//! paths built greedily in topological order ([`Chains::cover`]): 10,000 sessions of 4
//! transactions need about 3,700 paths once a round has joined them. Entries are positions in
//! a chain, in u8/u16/u32 by the longest chain. A row merges the rows of its predecessors
//! latest first and skips one the merged rows already know ([`RankedAdjacency`]), so most of
//! the edges cost O(1) instead of a row.
//!
//! Limits: the clock columns are sized against the memory budget before they are allocated
//! (and allocated fallibly); when not all fit, a round runs in passes over column ranges
//! (the rules need nothing but the column of a writer's own chain, so the passes together
//! derive exactly the edges of one pass). Every pass looks at the deadline and at Ctrl-C
//! ([`crate::interrupt`]) every few thousand transactions: the saturation gives up with a
//! reason naming the limit ([`Stopped`]) instead of running past it or aborting.

use std::time::Instant;

use super::txns::{Txns, INIT, NONE};

/// Why a forced edge `from → to` is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// Session order (or the initial transaction before a session's first transaction).
    So,
    /// `to` reads from `from`: the read operation.
    Wr { op: u32 },
    /// ww: `t3`'s read `op` of x from `to` (= t1); `from` (= t2) writes x and reaches t3.
    Ww { t3: u32, op: u32 },
    /// rw: `from` (= t3) reads x from `t1` by `op`; `to` (= t2) writes x and t1 reaches it.
    Rw { t1: u32, op: u32 },
    /// Given by the caller (SI: W_t2 before R_t1 for a transaction-level ww edge t2 → t1).
    Given,
}

/// An edge every commit order of the level must contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Forced {
    pub from: u32,
    pub to: u32,
    pub why: Why,
    /// 0 for so ∪ wr; the round that derived it otherwise (it used only edges of earlier
    /// rounds).
    pub round: u32,
}

/// Which rules to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    /// One round of ww over so ∪ wr (PC).
    CausalOnly,
    /// ww to a fixpoint (SI).
    Ww,
    /// ww and rw to a fixpoint (SER).
    WwRw,
}

/// The result: all forced edges, and either the final reachability or a cycle.
pub(crate) struct Saturation {
    pub edges: Vec<Forced>,
    /// Indexes into `edges` of a cycle (each edge's `to` is the next one's `from`), if any.
    pub cycle: Option<Vec<usize>>,
}

/// At most this many rounds (each adds at least one edge; in practice a handful suffice).
const MAX_ROUNDS: u32 = 64;

/// How often (in transactions) a pass looks at the deadline and at Ctrl-C.
const CHECK_EVERY: usize = 4096;

/// The limits of one saturation.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bounds {
    /// Give up at this instant.
    pub deadline: Option<Instant>,
    /// Give up rather than allocate clock matrices of more than this many bytes.
    pub memory: Option<u64>,
}

impl Bounds {
    /// No limit but Ctrl-C.
    pub const NONE: Bounds = Bounds {
        deadline: None,
        memory: None,
    };

    /// Why to stop now, if the deadline passed or a stop was requested.
    pub(crate) fn expired(&self) -> Option<Stopped> {
        if crate::interrupt::requested() {
            Some(Stopped("interrupted".to_string()))
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Stopped("timeout".to_string()))
        } else {
            None
        }
    }
}

/// The saturation gave up: the limit that stopped it, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stopped(pub String);

/// Computes the forced edges of `txns` under `rules`.
pub(crate) fn saturate(txns: &Txns, rules: Rules, bounds: &Bounds) -> Result<Saturation, Stopped> {
    saturate_with(txns, rules, &[], bounds)
}

/// [`saturate`], starting from so ∪ wr plus the `given` edges (which must hold in every
/// commit order the caller asks about).
pub(crate) fn saturate_with(
    txns: &Txns,
    rules: Rules,
    given: &[(u32, u32)],
    bounds: &Bounds,
) -> Result<Saturation, Stopped> {
    saturate_in_passes(txns, rules, given, bounds, usize::MAX)
}

/// Which chains the clocks of a round are kept over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChainChoice {
    /// The sessions (the tests compare the cover with them).
    #[cfg_attr(not(test), allow(dead_code))]
    Sessions,
    /// A cover of the forced edges by paths ([`Chains::cover`]).
    Cover,
    /// The cover when it has at most half as many chains as there are sessions, else the
    /// sessions.
    Fewest,
}

/// [`saturate_with`], keeping at most `max_width` chain columns of the clocks per pass.
pub(crate) fn saturate_in_passes(
    txns: &Txns,
    rules: Rules,
    given: &[(u32, u32)],
    bounds: &Bounds,
    max_width: usize,
) -> Result<Saturation, Stopped> {
    saturate_over(txns, rules, given, bounds, max_width, ChainChoice::Fewest)
}

/// [`saturate_in_passes`] with the clocks' chains chosen by `choice`.
pub(crate) fn saturate_over(
    txns: &Txns,
    rules: Rules,
    given: &[(u32, u32)],
    bounds: &Bounds,
    max_width: usize,
    choice: ChainChoice,
) -> Result<Saturation, Stopped> {
    let n = txns.len();
    let k = txns.chains.len();
    let mut edges: Vec<Forced> = Vec::with_capacity(2 * n + given.len());
    edges.extend(given.iter().map(|&(from, to)| Forced {
        from,
        to,
        why: Why::Given,
        round: 0,
    }));
    for c in &txns.chains {
        let mut prev = INIT;
        for &t in c {
            edges.push(Forced {
                from: prev,
                to: t,
                why: Why::So,
                round: 0,
            });
            prev = t;
        }
    }
    for t in 1..n as u32 {
        let mut last = NONE;
        for r in txns.reads(t) {
            if r.writer != INIT && r.writer != last {
                edges.push(Forced {
                    from: r.writer,
                    to: t,
                    why: Why::Wr { op: r.op },
                    round: 0,
                });
            }
            last = r.writer;
        }
    }
    let (key_offsets, key_writers) = txns.writers_by_key();
    let sessions = Chains::sessions(txns);
    // The new edges of a round, each with its place in the order of the whole-width pass
    // (read, chain), so that the edge kept for a pair is the same for every width.
    let mut new_edges: Vec<(Forced, u64)> = Vec::new();
    let mut rounds = 0;
    loop {
        if let Some(stop) = bounds.expired() {
            return Err(stop);
        }
        let order = match topological_order(n, &edges) {
            Ok(order) => order,
            Err(cycle) => {
                return Ok(Saturation {
                    edges,
                    cycle: Some(cycle),
                })
            }
        };
        if rounds >= MAX_ROUNDS || (rules == Rules::CausalOnly && rounds == 1) || k == 0 {
            break;
        }
        rounds += 1;
        let adjacency = RankedAdjacency::new(n, &edges, &order);
        // Chains of the clocks: the sessions, or a cover of the forced edges by paths when it
        // needs at most half as many (many short sessions: each round's edges join them).
        let cover = match choice {
            ChainChoice::Sessions => None,
            ChainChoice::Cover | ChainChoice::Fewest => {
                let cover = Chains::cover(txns, &adjacency, &order);
                (choice == ChainChoice::Cover || 2 * cover.count <= k).then_some(cover)
            }
        };
        let chains = cover.as_ref().unwrap_or(&sessions);
        let index = KeyIndex::new(txns, chains, &key_offsets, &key_writers);
        let entry_bytes = chains.entry_bytes();
        let fixed_base = index.bytes() + n as u64 * 8;
        let plan = ColumnPlan::new(
            n,
            chains.count,
            k,
            edges.len(),
            fixed_base,
            entry_bytes,
            rules,
            bounds,
        )?;
        let round = Round {
            txns,
            rules,
            round: rounds,
            order: &order,
            adjacency: &adjacency,
            chains,
            index: &index,
            width: plan.width.min(max_width.max(1)),
        };
        new_edges.clear();
        match entry_bytes {
            1 => round.derive::<u8>(bounds, &mut new_edges)?,
            2 => round.derive::<u16>(bounds, &mut new_edges)?,
            _ => round.derive::<u32>(bounds, &mut new_edges)?,
        }
        if new_edges.is_empty() {
            break;
        }
        new_edges.sort_unstable_by_key(|&(e, place)| (e.from, e.to, place));
        new_edges.dedup_by_key(|(e, _)| (e.from, e.to));
        edges.extend(new_edges.iter().map(|&(e, _)| e));
    }
    Ok(Saturation { edges, cycle: None })
}

/// Bytes the saturation may keep at most in the clock columns of one pass without a memory
/// budget, and at most whatever the budget: wider histories are done in several passes.
const MAX_PASS_BYTES: u64 = 512 << 20;

/// How many session columns (chains) of the clocks one pass keeps: all of them when they fit,
/// else as many as the memory budget (less what the edges and their indexes take) and
/// [`MAX_PASS_BYTES`] allow. The rules need nothing but the columns of a writer's own chain,
/// so the passes over column ranges together derive exactly the edges of one whole pass.
struct ColumnPlan {
    width: usize,
}

impl ColumnPlan {
    #[allow(clippy::too_many_arguments)]
    fn new(
        n: usize,
        k: usize,
        sessions: usize,
        edges: usize,
        fixed_base: u64,
        entry_bytes: u64,
        rules: Rules,
        bounds: &Bounds,
    ) -> Result<ColumnPlan, Stopped> {
        let matrices: u64 = if rules == Rules::WwRw { 2 } else { 1 };
        let per_column = n as u64 * entry_bytes * matrices;
        // The edges (twice while a round's new ones are sorted), the ranked in- and
        // out-adjacency with a redundancy mark per slot each, the order and in-degrees, and
        // the key index.
        let per_edge = 2 * std::mem::size_of::<(Forced, u64)>() as u64 + 10;
        let fixed = fixed_base + edges as u64 * per_edge + n as u64 * 24;
        let cap = bounds.memory.unwrap_or(u64::MAX);
        let room = cap
            .saturating_sub(fixed)
            .min(MAX_PASS_BYTES.max(per_column));
        let width = (room / per_column.max(1)).min(k as u64) as usize;
        if width == 0 {
            return Err(Stopped(format!(
                "memory: the forced-edge saturation needs {} MB for {edges} edges and their \
                 indexes and {} KB per chain for {matrices} clock column(s) of {n} \
                 transactions ({k} chains of {sessions} sessions), over the memory budget of \
                 {} MB (--memory)",
                fixed >> 20,
                per_column >> 10,
                cap >> 20
            )));
        }
        Ok(ColumnPlan { width })
    }
}

/// `v` = `len` copies of `fill`, its allocation grown fallibly.
fn fill<T: Entry>(v: &mut Vec<T>, len: usize, value: T, what: &str) -> Result<(), Stopped> {
    v.clear();
    v.try_reserve_exact(len).map_err(|_| {
        Stopped(format!(
            "memory: could not allocate {} MB for the forced-edge saturation's {what}",
            (len as u64 * std::mem::size_of::<T>() as u64) >> 20
        ))
    })?;
    v.resize(len, value);
    Ok(())
}

/// A clock entry: a position in a chain (1-based), 0 for none in a clock and [`Entry::NONE`]
/// for none in a forward clock.
trait Entry: Copy + Ord + Default + 'static {
    const NONE: Self;
    fn at(position: u32) -> Self;
    fn get(self) -> u32;
}

macro_rules! entry {
    ($t:ty) => {
        impl Entry for $t {
            const NONE: Self = <$t>::MAX;
            #[inline]
            fn at(position: u32) -> Self {
                position as $t
            }
            #[inline]
            fn get(self) -> u32 {
                self as u32
            }
        }
    };
}
entry!(u8);
entry!(u16);
entry!(u32);

/// Row `t` of a matrix of rows of `width` entries.
#[inline]
fn row_of<T>(m: &[T], t: u32, width: usize) -> &[T] {
    &m[t as usize * width..(t as usize + 1) * width]
}

/// One round of the rules, in passes over `width` session columns (chains) at a time: a
/// pass's clocks and forward clocks hold those columns only (row `t` at `t * width`).
struct Round<'a> {
    txns: &'a Txns,
    rules: Rules,
    round: u32,
    order: &'a [u32],
    adjacency: &'a RankedAdjacency,
    chains: &'a Chains,
    index: &'a KeyIndex,
    width: usize,
}

impl Round<'_> {
    /// Pushes the round's ww and rw edges, each with its place (read, chain) in the order of
    /// a whole-width pass.
    fn derive<T: Entry>(
        &self,
        bounds: &Bounds,
        out: &mut Vec<(Forced, u64)>,
    ) -> Result<(), Stopped> {
        let n = self.txns.len();
        let k = self.chains.count;
        let forward_too = self.rules == Rules::WwRw;
        // Per edge slot of the ranked adjacency: whether the edge is known to be implied by
        // another one into (out of) the same node, so that its clock row need not be merged.
        let mut pred_implied = vec![false; self.adjacency.preds.len()];
        let mut succ_implied = vec![false; if forward_too { pred_implied.len() } else { 0 }];
        let mut clocks: Vec<T> = Vec::new();
        let mut forward: Vec<T> = Vec::new();
        let mut c0 = 0;
        while c0 < k {
            let cols = c0..(c0 + self.width).min(k);
            c0 = cols.end;
            let width = cols.len();
            fill(&mut clocks, n * width, T::default(), "clocks")?;
            compute_clocks(self, &mut pred_implied, &cols, &mut clocks, bounds)?;
            if forward_too {
                fill(&mut forward, n * width, T::NONE, "forward clocks")?;
                compute_forward(self, &mut succ_implied, &cols, &mut forward, bounds)?;
            }
            self.derive_in(&cols, &clocks, &forward, bounds, out)?;
        }
        Ok(())
    }

    /// The edges whose written key's chain is in `cols`.
    fn derive_in<T: Entry>(
        &self,
        cols: &std::ops::Range<usize>,
        clocks: &[T],
        forward: &[T],
        bounds: &Bounds,
        out: &mut Vec<(Forced, u64)>,
    ) -> Result<(), Stopped> {
        let txns = self.txns;
        let n = txns.len();
        let width = cols.len();
        let c0 = cols.start as u32;
        let all = width == self.chains.count;
        let pos = &self.chains.position[..];
        let mut place: u64 = 0;
        for t3 in 1..n as u32 {
            if t3 as usize % CHECK_EVERY == 0 {
                if let Some(stop) = bounds.expired() {
                    return Err(stop);
                }
            }
            let row3 = row_of(clocks, t3, width);
            let fwd3 = if forward.is_empty() {
                &[][..]
            } else {
                row_of(forward, t3, width)
            };
            for r in txns.reads(t3) {
                place += 1;
                let (x, t1) = (r.key as usize, r.writer);
                let row1 = row_of(clocks, t1, width);
                let fwd1 = if forward.is_empty() {
                    &[][..]
                } else {
                    row_of(forward, t1, width)
                };
                let mut key_segs = self.index.segments(x);
                if !all {
                    let lo = key_segs.partition_point(|s| (s.0 as usize) < cols.start);
                    let hi = key_segs.partition_point(|s| (s.0 as usize) < cols.end);
                    key_segs = &key_segs[lo..hi];
                }
                for &(c, s, e) in key_segs {
                    let seg = &self.index.writers[s as usize..e as usize];
                    let col = (c - c0) as usize;
                    let at = (place << 32) | c as u64;
                    // ww: the latest writer of the chain reaching t3, other than t3 and t1; none
                    // is new unless t3 knows more of the chain than t1. t2 reaches t1 iff t1's
                    // clock has t2 (or later) in t2's chain.
                    let (top, known) = (row3[col].get(), row1[col].get());
                    if top > known {
                        let mut j = seg.partition_point(|&w| pos[w as usize] <= top);
                        while j > 0 && seg[j - 1] == t3 {
                            j -= 1;
                        }
                        if j > 0 {
                            let t2 = seg[j - 1];
                            if t2 != t1 && (t1 == INIT || known < pos[t2 as usize]) {
                                out.push((
                                    Forced {
                                        from: t2,
                                        to: t1,
                                        why: Why::Ww { t3, op: r.op },
                                        round: self.round,
                                    },
                                    at,
                                ));
                            }
                        }
                    }
                    // rw: the earliest writer of the chain t1 reaches, other than t1; none is
                    // new unless t1 reaches the chain earlier than t3. t3 reaches t2 iff the
                    // earliest transaction of t2's chain that t3 reaches is t2 or before.
                    if self.rules != Rules::WwRw || fwd1[col] >= fwd3[col] {
                        continue;
                    }
                    let (first, first3) = (fwd1[col].get(), fwd3[col].get());
                    let mut j = seg.partition_point(|&w| pos[w as usize] < first);
                    while j < seg.len() && seg[j] == t1 {
                        j += 1;
                    }
                    if j < seg.len() {
                        let t2 = seg[j];
                        if t2 != t3 && first3 > pos[t2 as usize] {
                            out.push((
                                Forced {
                                    from: t3,
                                    to: t2,
                                    why: Why::Rw { t1, op: r.op },
                                    round: self.round,
                                },
                                at,
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// CSR out-adjacency: edge indexes grouped by source.
fn out_adjacency(n: usize, edges: &[Forced]) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; n + 1];
    for e in edges {
        offsets[e.from as usize + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let mut cursor = offsets.clone();
    let mut idx = vec![0u32; edges.len()];
    for (i, e) in edges.iter().enumerate() {
        idx[cursor[e.from as usize] as usize] = i as u32;
        cursor[e.from as usize] += 1;
    }
    (offsets, idx)
}

/// Kahn's algorithm; on a cycle, a shortest cycle through some node that lies on one (edge
/// indexes).
fn topological_order(n: usize, edges: &[Forced]) -> Result<Vec<u32>, Vec<usize>> {
    let (offsets, idx) = out_adjacency(n, edges);
    let mut indeg = vec![0u32; n];
    for e in edges {
        indeg[e.to as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut head = 0;
    while head < order.len() {
        let v = order[head] as usize;
        head += 1;
        for &i in &idx[offsets[v] as usize..offsets[v + 1] as usize] {
            let w = edges[i as usize].to as usize;
            indeg[w] -= 1;
            if indeg[w] == 0 {
                order.push(w as u32);
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    // Every node left has a predecessor that is left: walk back until a node repeats.
    let mut pred = vec![NONE; n];
    for (i, e) in edges.iter().enumerate() {
        if indeg[e.to as usize] > 0 && indeg[e.from as usize] > 0 {
            pred[e.to as usize] = i as u32;
        }
    }
    let mut seen = vec![false; n];
    let mut v = (0..n)
        .find(|&v| indeg[v] > 0)
        .expect("a node on or after a cycle");
    while !seen[v] {
        seen[v] = true;
        v = edges[pred[v] as usize].from as usize;
    }
    let within = |e: &Forced| indeg[e.from as usize] > 0 && indeg[e.to as usize] > 0;
    Err(
        shortest_cycle_through(n, edges, &offsets, &idx, v as u32, |e| within(e))
            .expect("a node on a cycle"),
    )
}

/// A shortest cycle through `start` using the edges `allowed`, by BFS.
fn shortest_cycle_through(
    n: usize,
    edges: &[Forced],
    offsets: &[u32],
    idx: &[u32],
    start: u32,
    allowed: impl Fn(&Forced) -> bool,
) -> Option<Vec<usize>> {
    let mut via = vec![NONE; n];
    let mut queue = vec![start];
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head] as usize;
        head += 1;
        for &i in &idx[offsets[v] as usize..offsets[v + 1] as usize] {
            let e = &edges[i as usize];
            if !allowed(e) {
                continue;
            }
            if e.to == start {
                let mut cycle = vec![i as usize];
                let mut u = v as u32;
                while u != start {
                    let j = via[u as usize] as usize;
                    cycle.push(j);
                    u = edges[j].from;
                }
                cycle.reverse();
                return Some(cycle);
            }
            if via[e.to as usize] == NONE {
                via[e.to as usize] = i;
                queue.push(e.to);
            }
        }
    }
    None
}

/// A shortest path `from ⇝ to` over edges of rounds before `round` (edge indexes), if any.
pub(crate) fn path_before(
    n: usize,
    edges: &[Forced],
    from: u32,
    to: u32,
    round: u32,
) -> Option<Vec<usize>> {
    if from == to {
        return Some(Vec::new());
    }
    let (offsets, idx) = out_adjacency(n, edges);
    let mut via = vec![NONE; n];
    let mut queue = vec![from];
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head] as usize;
        head += 1;
        for &i in &idx[offsets[v] as usize..offsets[v + 1] as usize] {
            let e = &edges[i as usize];
            if e.round >= round || via[e.to as usize] != NONE || e.to == from {
                continue;
            }
            via[e.to as usize] = i;
            if e.to == to {
                let mut path = Vec::new();
                let mut u = to;
                while u != from {
                    let j = via[u as usize] as usize;
                    path.push(j);
                    u = edges[j].from;
                }
                path.reverse();
                return Some(path);
            }
            queue.push(e.to);
        }
    }
    None
}

/// Most premise edges expanded by [`premise_closure`].
const MAX_PREMISE_EDGES: usize = 512;

/// The transactions on the forced cycle of `sat` and on the premises of its derived edges
/// (bounded), mapped by `txn_of` (split nodes to their transaction), sorted, distinct.
pub(crate) fn premise_closure(n: usize, sat: &Saturation, txn_of: impl Fn(u32) -> u32) -> Vec<u32> {
    let edges = &sat.edges;
    let mut todo: Vec<usize> = sat.cycle.clone().unwrap_or_default();
    let mut seen_edge = vec![false; edges.len()];
    let mut txns = Vec::new();
    let mut expanded = 0;
    while let Some(i) = todo.pop() {
        if seen_edge[i] {
            continue;
        }
        seen_edge[i] = true;
        let e = edges[i];
        txns.push(e.from);
        txns.push(e.to);
        let premise = match e.why {
            Why::Ww { t3, .. } => {
                txns.push(t3);
                Some((e.from, t3))
            }
            Why::Rw { t1, .. } => {
                txns.push(t1);
                Some((t1, e.to))
            }
            _ => None,
        };
        if let Some((a, b)) = premise {
            if expanded < MAX_PREMISE_EDGES {
                if let Some(path) = path_before(n, edges, a, b, e.round) {
                    expanded += path.len();
                    todo.extend(path);
                }
            }
        }
    }
    let mut out: Vec<u32> = txns.into_iter().map(txn_of).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The forced edges as adjacency lists ranked by a topological order: each node's
/// predecessors latest first, its successors earliest first (CSR). Merging clock rows in that
/// order lets a row that the rows merged before it already cover be skipped.
struct RankedAdjacency {
    pred_offsets: Vec<u32>,
    preds: Vec<u32>,
    succ_offsets: Vec<u32>,
    succs: Vec<u32>,
}

impl RankedAdjacency {
    fn new(n: usize, edges: &[Forced], order: &[u32]) -> RankedAdjacency {
        let (out_offsets, out_idx) = out_adjacency(n, edges);
        let mut pred_offsets = vec![0u32; n + 1];
        for e in edges {
            pred_offsets[e.to as usize + 1] += 1;
        }
        for v in 0..n {
            pred_offsets[v + 1] += pred_offsets[v];
        }
        // Sources in reverse topological order: each node's predecessors latest first.
        let mut cursor = pred_offsets.clone();
        let mut preds = vec![0u32; edges.len()];
        for &u in order.iter().rev() {
            let outs =
                &out_idx[out_offsets[u as usize] as usize..out_offsets[u as usize + 1] as usize];
            for &i in outs {
                let v = edges[i as usize].to as usize;
                preds[cursor[v] as usize] = u;
                cursor[v] += 1;
            }
        }
        // Targets in topological order: each node's successors earliest first.
        let mut cursor = out_offsets.clone();
        let mut succs = vec![0u32; edges.len()];
        for &v in order {
            let ins =
                &preds[pred_offsets[v as usize] as usize..pred_offsets[v as usize + 1] as usize];
            for &u in ins {
                succs[cursor[u as usize] as usize] = v;
                cursor[u as usize] += 1;
            }
        }
        RankedAdjacency {
            pred_offsets,
            preds,
            succ_offsets: out_offsets,
            succs,
        }
    }

    /// The slots of `t`'s predecessors in [`Self::preds`].
    fn pred_slots(&self, t: u32) -> std::ops::Range<usize> {
        self.pred_offsets[t as usize] as usize..self.pred_offsets[t as usize + 1] as usize
    }

    /// The slots of `t`'s successors in [`Self::succs`].
    fn succ_slots(&self, t: u32) -> std::ops::Range<usize> {
        self.succ_offsets[t as usize] as usize..self.succ_offsets[t as usize + 1] as usize
    }
}

/// The chains the clocks are kept over: every transaction but the initial one lies on one, and
/// each transaction of a chain reaches the next by forced edges, so that "the latest (earliest)
/// transaction of a chain reaching (reached from) t" is one number per chain.
struct Chains {
    /// Per transaction, its chain (the initial transaction: none).
    chain: Vec<u32>,
    /// Per transaction, its position in its chain, 1-based (the initial transaction: 0).
    position: Vec<u32>,
    count: usize,
    longest: usize,
}

impl Chains {
    /// The sessions.
    fn sessions(txns: &Txns) -> Chains {
        let n = txns.len();
        let mut position = vec![0u32; n];
        for c in &txns.chains {
            for (i, &t) in c.iter().enumerate() {
                position[t as usize] = i as u32 + 1;
            }
        }
        let mut chain = txns.chain.clone();
        chain[INIT as usize] = NONE;
        Chains {
            chain,
            position,
            count: txns.chains.len(),
            longest: txns.chains.iter().map(Vec::len).max().unwrap_or(0),
        }
    }

    /// A cover of the transactions by paths of forced edges, greedily in topological order:
    /// each transaction continues the path of its latest predecessor that still ends a path,
    /// or starts a path. Many short sessions joined by reads and derived edges need far fewer
    /// paths than sessions.
    fn cover(txns: &Txns, adjacency: &RankedAdjacency, order: &[u32]) -> Chains {
        let n = txns.len();
        let mut chain = vec![NONE; n];
        let mut position = vec![0u32; n];
        let mut ends = vec![false; n];
        let (mut count, mut longest) = (0u32, 0u32);
        for &t in order {
            if t == INIT {
                continue;
            }
            let ti = t as usize;
            let from = adjacency.preds[adjacency.pred_slots(t)]
                .iter()
                .copied()
                .find(|&p| p != INIT && ends[p as usize]);
            match from {
                Some(p) => {
                    ends[p as usize] = false;
                    chain[ti] = chain[p as usize];
                    position[ti] = position[p as usize] + 1;
                }
                None => {
                    chain[ti] = count;
                    position[ti] = 1;
                    count += 1;
                }
            }
            ends[ti] = true;
            longest = longest.max(position[ti]);
        }
        Chains {
            chain,
            position,
            count: count as usize,
            longest: longest as usize,
        }
    }

    /// Bytes of a clock entry: the narrowest type that holds the longest chain's positions
    /// and a "none".
    fn entry_bytes(&self) -> u64 {
        if self.longest < u8::MAX as usize {
            1
        } else if self.longest < u16::MAX as usize {
            2
        } else {
            4
        }
    }
}

/// Per key, its writers grouped by chain (chains in order, each group in chain order): the
/// groups as (chain, start, end) into `writers`.
struct KeyIndex {
    writers: Vec<u32>,
    seg_offsets: Vec<u32>,
    segs: Vec<(u32, u32, u32)>,
}

impl KeyIndex {
    fn new(txns: &Txns, chains: &Chains, key_offsets: &[u32], key_writers: &[u32]) -> KeyIndex {
        let mut writers = key_writers.to_vec();
        let mut seg_offsets = vec![0u32; txns.keys as usize + 1];
        let mut segs: Vec<(u32, u32, u32)> = Vec::new();
        for x in 0..txns.keys as usize {
            let (s, e) = (key_offsets[x] as usize, key_offsets[x + 1] as usize);
            writers[s..e]
                .sort_unstable_by_key(|&w| (chains.chain[w as usize], chains.position[w as usize]));
            let mut i = s;
            while i < e {
                let c = chains.chain[writers[i] as usize];
                let mut j = i + 1;
                while j < e && chains.chain[writers[j] as usize] == c {
                    j += 1;
                }
                segs.push((c, i as u32, j as u32));
                i = j;
            }
            seg_offsets[x + 1] = segs.len() as u32;
        }
        KeyIndex {
            writers,
            seg_offsets,
            segs,
        }
    }

    fn segments(&self, x: usize) -> &[(u32, u32, u32)] {
        &self.segs[self.seg_offsets[x] as usize..self.seg_offsets[x + 1] as usize]
    }

    fn bytes(&self) -> u64 {
        (self.writers.len() + self.seg_offsets.len()) as u64 * 4 + self.segs.len() as u64 * 12
    }
}

/// Forward clocks in reverse topological order, columns `cols` (chains) only: per chain, the
/// earliest transaction of the chain that `t` reaches (itself included; its position), none if
/// none. The initial transaction reaches every chain's first transaction. `forward` holds
/// `n × cols.len()` entries, all [`Entry::NONE`].
///
/// A successor `s` that the rows merged before it already reach (their entry in `s`'s chain
/// is at or before `s`) is reached from one of them: its row is no smaller and is skipped, in
/// this pass and (marked in `implied`) in the later ones. A successor that no other one
/// reaches is never marked, so every skipped row is covered by a merged one.
fn compute_forward<T: Entry>(
    round: &Round,
    implied: &mut [bool],
    cols: &std::ops::Range<usize>,
    forward: &mut [T],
    bounds: &Bounds,
) -> Result<(), Stopped> {
    let width = cols.len();
    let (chain, position) = (&round.chains.chain, &round.chains.position);
    let adjacency = round.adjacency;
    let mut row = vec![T::NONE; width];
    for (i, &t) in round.order.iter().rev().enumerate() {
        if i % CHECK_EVERY == CHECK_EVERY - 1 {
            if let Some(stop) = bounds.expired() {
                return Err(stop);
            }
        }
        row.fill(T::NONE);
        for slot in adjacency.succ_slots(t) {
            if implied[slot] {
                continue;
            }
            let s = adjacency.succs[slot];
            let c = chain[s as usize] as usize;
            if cols.contains(&c) && row[c - cols.start].get() <= position[s as usize] {
                implied[slot] = true;
                continue;
            }
            for (a, &b) in row.iter_mut().zip(row_of(forward, s, width)) {
                *a = (*a).min(b);
            }
        }
        if t != INIT {
            let c = chain[t as usize] as usize;
            if cols.contains(&c) {
                row[c - cols.start] = T::at(position[t as usize]);
            }
        }
        forward[t as usize * width..(t as usize + 1) * width].copy_from_slice(&row);
    }
    Ok(())
}

/// Vector clocks in topological order, columns `cols` (chains) only: the latest transaction of
/// each chain reaching `t` (its position), 0 if none. `clocks` holds `n × cols.len()` entries,
/// all 0. Predecessors come latest first; one that the rows merged before it already know
/// (their entry in its chain is at or after it) reaches one of them and is skipped, as in
/// [`compute_forward`].
fn compute_clocks<T: Entry>(
    round: &Round,
    implied: &mut [bool],
    cols: &std::ops::Range<usize>,
    clocks: &mut [T],
    bounds: &Bounds,
) -> Result<(), Stopped> {
    let width = cols.len();
    let (chain, position) = (&round.chains.chain, &round.chains.position);
    let adjacency = round.adjacency;
    let mut row = vec![T::default(); width];
    for (i, &t) in round.order.iter().enumerate() {
        if i % CHECK_EVERY == CHECK_EVERY - 1 {
            if let Some(stop) = bounds.expired() {
                return Err(stop);
            }
        }
        if t == INIT {
            continue;
        }
        row.fill(T::default());
        for slot in adjacency.pred_slots(t) {
            let p = adjacency.preds[slot];
            if p == INIT || implied[slot] {
                continue;
            }
            let c = chain[p as usize] as usize;
            if cols.contains(&c) && row[c - cols.start].get() >= position[p as usize] {
                implied[slot] = true;
                continue;
            }
            for (a, &b) in row.iter_mut().zip(row_of(clocks, p, width)) {
                *a = (*a).max(b);
            }
        }
        let c = chain[t as usize] as usize;
        if cols.contains(&c) {
            row[c - cols.start] = T::at(position[t as usize]);
        }
        clocks[t as usize * width..(t as usize + 1) * width].copy_from_slice(&row);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Consistency, GenerateParams, KeyDistribution};
    use proptest::prelude::*;

    fn history(sessions: u32, txns: u32, keys: u32, consistency: u8, seed: u64) -> Txns {
        let params = GenerateParams {
            sessions,
            txns_per_session: txns,
            ops_per_txn: 4,
            keys,
            read_ratio: 0.5,
            distribution: KeyDistribution::Uniform,
            abort_ratio: 0.1,
            consistency: match consistency {
                0 => Consistency::None,
                1 => Consistency::Causal,
                _ => Consistency::Serializable,
            },
            seed,
        };
        Txns::from_history(&generate(&params).unwrap())
    }

    /// The edges (with their reasons and rounds, in order) and the cycle of one saturation.
    fn run(
        txns: &Txns,
        rules: Rules,
        given: &[(u32, u32)],
        width: usize,
    ) -> (Vec<Forced>, Option<Vec<usize>>) {
        let s = saturate_in_passes(txns, rules, given, &Bounds::NONE, width).unwrap();
        (s.edges, s.cycle)
    }

    /// Strict reachability of `edges` over `n` transactions (BFS from each).
    fn closure(n: usize, edges: impl Iterator<Item = (u32, u32)>) -> Vec<Vec<bool>> {
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (a, b) in edges {
            out[a as usize].push(b);
        }
        (0..n)
            .map(|a| {
                let mut seen = vec![false; n];
                let mut stack = out[a].clone();
                while let Some(v) = stack.pop() {
                    if !seen[v as usize] {
                        seen[v as usize] = true;
                        stack.extend_from_slice(&out[v as usize]);
                    }
                }
                seen
            })
            .collect()
    }

    /// The rules applied naively, by rounds over the whole reachability relation: the closure
    /// of the forced edges at the fixpoint (`None` on a cycle).
    fn reference(txns: &Txns, rules: Rules, given: &[(u32, u32)]) -> Option<Vec<Vec<bool>>> {
        let n = txns.len();
        let mut edges: Vec<(u32, u32)> = given.to_vec();
        for c in &txns.chains {
            let mut prev = INIT;
            for &t in c {
                edges.push((prev, t));
                prev = t;
            }
        }
        for t in 1..n as u32 {
            edges.extend(
                txns.reads(t)
                    .iter()
                    .filter(|r| r.writer != INIT)
                    .map(|r| (r.writer, t)),
            );
        }
        let mut round = 0;
        loop {
            let reach = closure(n, edges.iter().copied());
            if (0..n).any(|a| reach[a][a]) {
                return None;
            }
            if rules == Rules::CausalOnly && round == 1 {
                return Some(reach);
            }
            round += 1;
            let mut new = Vec::new();
            for t3 in 1..n as u32 {
                for r in txns.reads(t3) {
                    let t1 = r.writer;
                    for t2 in 1..n as u32 {
                        if t2 == t1 || t2 == t3 || !txns.writes_key(t2, r.key) {
                            continue;
                        }
                        if reach[t2 as usize][t3 as usize] && !reach[t2 as usize][t1 as usize] {
                            new.push((t2, t1));
                        }
                        if rules == Rules::WwRw
                            && reach[t1 as usize][t2 as usize]
                            && !reach[t3 as usize][t2 as usize]
                        {
                            new.push((t3, t2));
                        }
                    }
                }
            }
            if new.is_empty() {
                return Some(reach);
            }
            edges.extend(new);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Over sessions or over a path cover, with redundant clock rows skipped, the
        /// saturation reaches the fixpoint of the rules applied naively: a cycle exactly when
        /// the naive rounds find one, else the same reachability.
        #[test]
        fn the_saturation_reaches_the_naive_fixpoint(
            sessions in 1u32..9,
            txns in 1u32..6,
            keys in 1u32..8,
            consistency in 0u8..3,
            seed in any::<u64>(),
        ) {
            let t = history(sessions, txns, keys, consistency, seed);
            for rules in [Rules::CausalOnly, Rules::Ww, Rules::WwRw] {
                let expected = reference(&t, rules, &[]);
                for choice in [ChainChoice::Sessions, ChainChoice::Cover] {
                    let s = saturate_over(&t, rules, &[], &Bounds::NONE, usize::MAX, choice)
                        .unwrap();
                    match &expected {
                        None => prop_assert!(s.cycle.is_some(), "{:?} {:?}", rules, choice),
                        Some(reach) => {
                            prop_assert!(s.cycle.is_none(), "{:?} {:?}", rules, choice);
                            let got = closure(t.len(), s.edges.iter().map(|e| (e.from, e.to)));
                            prop_assert_eq!(&got, reach, "{:?} {:?}", rules, choice);
                        }
                    }
                }
            }
        }

        /// Passes over a few session columns at a time derive exactly the edges (and the
        /// cycle) of one pass over dense clocks of every session, at every level's rules, on
        /// the transaction level and on the split history with given edges (SI).
        #[test]
        fn passes_over_column_ranges_derive_the_dense_clocks_edges(
            sessions in 1u32..9,
            txns in 1u32..6,
            keys in 1u32..8,
            consistency in 0u8..3,
            seed in any::<u64>(),
            width in 1usize..4,
        ) {
            let t = history(sessions, txns, keys, consistency, seed);
            for rules in [Rules::CausalOnly, Rules::Ww, Rules::WwRw] {
                let dense = run(&t, rules, &[], usize::MAX);
                prop_assert_eq!(&run(&t, rules, &[], width), &dense, "{:?}", rules);
                for choice in [ChainChoice::Sessions, ChainChoice::Cover] {
                    let over = |width| {
                        let s = saturate_over(&t, rules, &[], &Bounds::NONE, width, choice)
                            .unwrap();
                        (s.edges, s.cycle)
                    };
                    prop_assert_eq!(over(width), over(usize::MAX), "{:?} {:?}", rules, choice);
                }
            }
            let ww = run(&t, Rules::Ww, &[], usize::MAX);
            let given: Vec<(u32, u32)> = ww
                .0
                .iter()
                .filter(|e| matches!(e.why, Why::Ww { .. }) && e.from != INIT && e.to != INIT)
                .map(|e| (2 * e.from, 2 * e.to - 1))
                .collect();
            let split = t.split();
            let dense = run(&split, Rules::WwRw, &given, usize::MAX);
            prop_assert_eq!(run(&split, Rules::WwRw, &given, width), dense);
        }
    }

    #[test]
    fn a_budget_for_a_few_columns_answers_in_several_passes() {
        // 12 sessions; a budget that leaves room for about 2 columns of both matrices.
        let t = history(12, 4, 5, 2, 7);
        let whole = saturate(&t, Rules::WwRw, &Bounds::NONE).unwrap();
        let needed = |width: u64| {
            let n = t.len() as u64;
            let edges = whole.edges.len() as u64;
            // Generous for the fixed part: the plan's estimate is below this.
            edges * 64 + n * 64 + 4096 + width * n * 8
        };
        let small = Bounds {
            deadline: None,
            memory: Some(needed(2)),
        };
        let s = saturate(&t, Rules::WwRw, &small).unwrap();
        assert_eq!(s.edges, whole.edges);
        assert_eq!(s.cycle, whole.cycle);
        // Below the edges themselves: unknown, naming the numbers.
        let tiny = Bounds {
            deadline: None,
            memory: Some(256),
        };
        let e = saturate(&t, Rules::WwRw, &tiny)
            .err()
            .expect("over the budget");
        assert!(e.0.contains("over the memory budget of 0 MB"), "{}", e.0);
        assert!(e.0.contains("12 sessions"), "{}", e.0);
    }
}
