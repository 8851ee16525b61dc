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
//! Limits: the rounds keep two dense matrices of transactions × chains (the clocks, and for
//! SER the forward clocks), so their size is checked against the memory budget before they are
//! allocated (and allocated fallibly), and every pass looks at the deadline and at Ctrl-C
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

/// A zeroed (or `fill`ed) vector of `len` entries, allocated fallibly.
fn try_vec(len: usize, fill: u32, what: &str) -> Result<Vec<u32>, Stopped> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Stopped(format!(
            "memory: could not allocate {} MB for the forced-edge saturation's {what}",
            (len as u64 * 4) >> 20
        ))
    })?;
    v.resize(len, fill);
    Ok(v)
}

/// [`saturate`], starting from so ∪ wr plus the `given` edges (which must hold in every
/// commit order the caller asks about).
pub(crate) fn saturate_with(
    txns: &Txns,
    rules: Rules,
    given: &[(u32, u32)],
    bounds: &Bounds,
) -> Result<Saturation, Stopped> {
    let n = txns.len();
    let k = txns.chains.len();
    let matrices: u64 = if rules == Rules::WwRw { 2 } else { 1 };
    let needed = (n as u64) * (k as u64) * 4 * matrices;
    if let Some(budget) = bounds.memory {
        if needed > budget {
            return Err(Stopped(format!(
                "memory: the forced-edge saturation keeps {matrices} clock matrices of {n} \
                 transactions × {k} sessions ({} MB), over the memory budget of {} MB \
                 (--memory)",
                needed >> 20,
                budget >> 20
            )));
        }
    }
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
    // Per key, segments of its writer list that belong to one chain.
    let mut seg_offsets = vec![0u32; txns.keys as usize + 1];
    let mut segs: Vec<(u32, u32, u32)> = Vec::new(); // (chain, start, end) into key_writers
    for x in 0..txns.keys as usize {
        let (s, e) = (key_offsets[x] as usize, key_offsets[x + 1] as usize);
        let mut i = s;
        while i < e {
            let c = txns.chain[key_writers[i] as usize];
            let mut j = i + 1;
            while j < e && txns.chain[key_writers[j] as usize] == c {
                j += 1;
            }
            segs.push((c, i as u32, j as u32));
            i = j;
        }
        seg_offsets[x + 1] = segs.len() as u32;
    }
    let mut clocks = try_vec(n * k, 0, "clocks")?;
    let mut forward = if rules == Rules::WwRw {
        try_vec(n * k, NONE, "forward clocks")?
    } else {
        Vec::new()
    };
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
        compute_clocks(txns, &edges, &order, &mut clocks, bounds)?;
        if rounds >= MAX_ROUNDS || (rules == Rules::CausalOnly && rounds == 1) {
            break;
        }
        rounds += 1;
        if rules == Rules::WwRw {
            compute_forward(txns, &edges, &order, &mut forward, bounds)?;
        }
        let reach = |a: u32, b: u32| -> bool {
            a == INIT
                || (b != INIT && clocks[b as usize * k + txns.chain[a as usize] as usize] >= a)
        };
        let before = edges.len();
        let no_forward: &[u32] = &[];
        let fwd_row = |t: u32| -> &[u32] {
            if forward.is_empty() {
                no_forward
            } else {
                &forward[t as usize * k..(t as usize + 1) * k]
            }
        };
        for t3 in 1..n as u32 {
            if t3 as usize % CHECK_EVERY == 0 {
                if let Some(stop) = bounds.expired() {
                    return Err(stop);
                }
            }
            let row3 = &clocks[t3 as usize * k..(t3 as usize + 1) * k];
            let fwd3 = fwd_row(t3);
            for r in txns.reads(t3) {
                let (x, t1) = (r.key as usize, r.writer);
                let row1 = &clocks[t1 as usize * k..(t1 as usize + 1) * k];
                let fwd1 = fwd_row(t1);
                for &(c, s, e) in &segs[seg_offsets[x] as usize..seg_offsets[x + 1] as usize] {
                    let seg = &key_writers[s as usize..e as usize];
                    // ww: the latest writer of the chain reaching t3, other than t3 and t1; none
                    // is new unless t3 knows more of the chain than t1.
                    let top = row3[c as usize];
                    if top > row1[c as usize] {
                        let mut j = seg.partition_point(|&w| w <= top);
                        while j > 0 && seg[j - 1] == t3 {
                            j -= 1;
                        }
                        if j > 0 {
                            let t2 = seg[j - 1];
                            if t2 != t1 && !reach(t2, t1) {
                                edges.push(Forced {
                                    from: t2,
                                    to: t1,
                                    why: Why::Ww { t3, op: r.op },
                                    round: rounds,
                                });
                            }
                        }
                    }
                    // rw: the earliest writer of the chain t1 reaches, other than t1; none is
                    // new unless t1 reaches the chain earlier than t3.
                    if rules != Rules::WwRw || fwd1[c as usize] >= fwd3[c as usize] {
                        continue;
                    }
                    let first = fwd1[c as usize];
                    let mut j = seg.partition_point(|&w| w < first);
                    while j < seg.len() && seg[j] == t1 {
                        j += 1;
                    }
                    if j < seg.len() {
                        let t2 = seg[j];
                        if t2 != t3 && !reach(t3, t2) {
                            edges.push(Forced {
                                from: t3,
                                to: t2,
                                why: Why::Rw { t1, op: r.op },
                                round: rounds,
                            });
                        }
                    }
                }
            }
        }
        if edges.len() == before {
            break;
        }
        dedup_new(&mut edges, before);
    }
    Ok(Saturation { edges, cycle: None })
}

/// Keeps one edge per (from, to) among `edges[before..]`.
fn dedup_new(edges: &mut Vec<Forced>, before: usize) {
    edges[before..].sort_by_key(|e| (e.from, e.to));
    let mut w = before;
    for i in before..edges.len() {
        if w == before || (edges[w - 1].from, edges[w - 1].to) != (edges[i].from, edges[i].to) {
            edges[w] = edges[i];
            w += 1;
        }
    }
    edges.truncate(w);
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

/// Forward clocks in reverse topological order: per chain, the earliest transaction of the
/// chain that `t` reaches (itself included); [`NONE`] if none. The initial transaction reaches
/// every chain's first transaction.
fn compute_forward(
    txns: &Txns,
    edges: &[Forced],
    order: &[u32],
    forward: &mut [u32],
    bounds: &Bounds,
) -> Result<(), Stopped> {
    let n = txns.len();
    let k = txns.chains.len();
    if k == 0 {
        return Ok(());
    }
    let (offsets, idx) = out_adjacency(n, edges);
    forward.fill(NONE);
    let mut row = vec![NONE; k];
    for (i, &t) in order.iter().rev().enumerate() {
        if i % CHECK_EVERY == CHECK_EVERY - 1 {
            if let Some(stop) = bounds.expired() {
                return Err(stop);
            }
        }
        row.fill(NONE);
        for &i in &idx[offsets[t as usize] as usize..offsets[t as usize + 1] as usize] {
            let s = edges[i as usize].to as usize;
            let srow = &forward[s * k..(s + 1) * k];
            for (a, &b) in row.iter_mut().zip(srow) {
                *a = (*a).min(b);
            }
        }
        if t != INIT {
            row[txns.chain[t as usize] as usize] = t;
        }
        forward[t as usize * k..(t as usize + 1) * k].copy_from_slice(&row);
    }
    Ok(())
}

/// Vector clocks in topological order: the latest transaction of each chain reaching `t`.
fn compute_clocks(
    txns: &Txns,
    edges: &[Forced],
    order: &[u32],
    clocks: &mut [u32],
    bounds: &Bounds,
) -> Result<(), Stopped> {
    let n = txns.len();
    let k = txns.chains.len();
    if k == 0 {
        return Ok(());
    }
    // In-adjacency (edge sources) per node.
    let mut offsets = vec![0u32; n + 1];
    for e in edges {
        offsets[e.to as usize + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let mut cursor = offsets.clone();
    let mut preds = vec![0u32; edges.len()];
    for e in edges {
        preds[cursor[e.to as usize] as usize] = e.from;
        cursor[e.to as usize] += 1;
    }
    clocks.fill(0);
    let mut row = vec![0u32; k];
    for (i, &t) in order.iter().enumerate() {
        if i % CHECK_EVERY == CHECK_EVERY - 1 {
            if let Some(stop) = bounds.expired() {
                return Err(stop);
            }
        }
        if t == INIT {
            continue;
        }
        row.fill(0);
        for &p in &preds[offsets[t as usize] as usize..offsets[t as usize + 1] as usize] {
            if p == INIT {
                continue;
            }
            let prow = &clocks[p as usize * k..(p as usize + 1) * k];
            for (a, &b) in row.iter_mut().zip(prow) {
                *a = (*a).max(b);
            }
        }
        row[txns.chain[t as usize] as usize] = t;
        clocks[t as usize * k..(t as usize + 1) * k].copy_from_slice(&row);
    }
    Ok(())
}
