//! Deciding SER, SI, PC and strict serializability when every key's version order is known
//! (Elle list-append reads show it; [`History::known_write_order`]), by cycle search on Adya's
//! direct serialization graph (Adya, PhD thesis, MIT 1999, §3–4: the DSG and the phenomena
//! G0, G1c, G-single, G2), with Cerone & Gotsman's characterization of snapshot isolation
//! (PODC'16 / JACM'18 "Analysing snapshot isolation": a history with its write–write order is
//! SI iff `(so ∪ wr ∪ ww) ; rw?` is acyclic — every cycle has two adjacent anti-dependencies)
//! and prefix consistency by Biswas & Enea's read/write split (OOPSLA'19 §4.2, Theorem 4.8;
//! Cerone, Bernardi & Gotsman CONCUR'15 for the level). Linear in the history, no search.
//!
//! **The graph.** One node per committed transaction (dense `TxnId`s), flat edge vectors:
//! - `so`: each committed transaction to the next committed one of its session;
//! - `wr`: the writer of the version a transaction read → the reader;
//! - `ww`: between *consecutive* versions of a key only (the others follow by transitivity);
//! - `rw`: the reader of version `v` → the writer of `v`'s *immediate successor* only (a later
//!   writer is reached through the `ww` chain; replacing an `rw` to a later version by `rw`
//!   then `ww` never makes two anti-dependencies adjacent that were not, so no level's answer
//!   changes);
//! - `rt` (strict serializability only): the real-time order's transitive reduction
//!   ([`History::real_time_order`]).
//!
//! **The levels**, each with a total commit order `co` that extends the known version orders
//! (the version order of a key *is* the commit order of its writers, as the oracle and
//! `History::with_write_order_as_reads` commit to):
//! - SER ⟺ `so ∪ wr ∪ ww ∪ rw` is acyclic (Adya Thm. 3.1 with session order); a topological
//!   order is a serial order.
//! - strict-ser ⟺ `so ∪ wr ∪ ww ∪ rw ∪ rt` is acyclic.
//! - SI: each transaction `t` becomes a snapshot node `S_t` and a commit node `C_t` with
//!   `S_t → C_t`; `so`, `wr`, `ww` become `C_u → S_v` (`u` is visible to `v`: under SI writers of
//!   one key are never concurrent, so the earlier version's writer is in the later one's
//!   snapshot), `rw` becomes `S_u → C_v` (`v`'s write is not in `u`'s snapshot). A cycle of
//!   this graph is a DSG cycle in which every `rw` follows a non-`rw` edge, i.e. one with no
//!   two adjacent anti-dependencies (the wrap-around included: a cycle is closed), and
//!   conversely; so SI ⟺ the split graph is acyclic. A topological order places every
//!   transaction's snapshot and commit: the order of the `C_t` is a commit order, each
//!   snapshot the prefix before `S_t` (it holds every `so`/`wr`/`ww` predecessor and no
//!   later version of what it read), which is the witness the SI reports carry.
//! - PC: the same split, but `ww` becomes `C_u → C_v` (prefix consistency orders writers of a
//!   key without making the earlier visible to the later). This is exactly Adya's DSG of
//!   Biswas & Enea's `h_R|W` (reads `R_t = S_t`, writes `W_t = C_t`, `so'` and `wr'` as there)
//!   under the version order the known order fixes on the `W_t`; their Theorem 4.8 (h is PC
//!   iff `h_R|W` is serializable, the order of the `W_t` being `h`'s commit order) with Adya's
//!   theorem gives PC ⟺ this graph is acyclic. Its cycles are the DSG cycles in which every
//!   `rw` follows an `so` or `wr` edge (a `ww` edge does not make a writer visible). This is
//!   stronger than the black-box PC checker, which may reorder the writers of a key against
//!   the order the reads revealed; the brute-force oracle (`check::oracle`, "`co` must also
//!   extend those write–write pairs") decides the same as this file.
//!
//! Every level also needs causal consistency with the known write order (G0 and G1c cycles,
//! aborted and intermediate reads), which the caller checks first (the causal checker sees the
//! known write–write pairs); the graph is built for committed transactions whose reads passed
//! that check.
//!
//! **Known orders and unobserved tails.** The graph needs the order of the committed writes of
//! each key, with one exception Jepsen histories are full of: appends no read showed, which
//! come after the last one shown (Elle's `previously-appended-element`) and are unordered
//! among themselves — the key's *tail*, written by transactions nobody read from (committed
//! ones, and `:info` ones a read showed to have committed; the reader leaves out `:info`
//! transactions no read shows, which is complete: a transaction nobody reads from can always
//! be dropped without breaking any level). Elle gives each tail write a `ww` edge from the
//! last shown version and `rw` edges from its readers, and none between tail writes; so does
//! this file, and that is exact for SER, strict-ser and PC: those edges hold under every order
//! of the tail, and if the graph with them is acyclic, ordering each tail as a topological
//! order does adds only edges along that order (nobody reads a tail write, so no `rw` edge
//! leaves the choice), keeping it acyclic. Under SI two tail writers must also not overlap
//! (`C_u → S_v`): the graph with Elle's edges being cyclic is still a violation; an acyclic
//! one is consistent when its topological order (commits taken as early as possible) keeps
//! each tail's writers apart, and otherwise [`tail_order`] searches the tails' orders — an
//! exhaustive search that branches only at the tail writers it must place while another
//! writer of their key is to come (the proof is there), so it finds an order whenever one
//! exists, or proves none does (the violation is then the cycle under the order it tried
//! last), or gives up after [`tail_order::MAX_REPLAYS`] replays and the decision core asks the
//! general search. Any other partial order ([`VersionChains::of`] answers `None`) is left to
//! the general search too.
//!
//! **A violation** is one cycle, each edge with its kind and the operations (key, value /
//! list element) that justify it, named by the anomaly table
//! ([`crate::history::anomalies`]): first a cycle with a single anti-dependency is searched
//! (Adya's G-single: a breadth-first search from each `rw` edge's target back to its source
//! over the other edges, within a work budget), else the shortest cycle through a node of the
//! cyclic part.

use crate::check::{CheckReport, Level, OpRef, TxnRef};
use crate::history::{AnomalyId, History, KeyId, OpId, OpKind, TxnId, INITIAL_TXN};

use super::report::{
    CoreLevels, CoreTxn, StrongEdge, StrongEdgeKind, StrongReport, StrongSummary, Verdict,
    Violation,
};
use super::{verify_serial_order, verify_si_pc_order, Engine};

mod tail_order;
use tail_order::{TailOrder, Tails};

const NONE: u32 = u32::MAX;

/// Every key's committed writes in their known version order, the initial write first.
#[derive(Debug, Clone)]
pub struct VersionChains {
    /// `chain[key_start[k]..key_start[k + 1]]`: key `k`'s writes (operation ids), oldest first.
    key_start: Vec<u32>,
    /// `chain[tail_start[k]..key_start[k + 1]]`: key `k`'s unobserved tail (see
    /// [`VersionChains::of`]), empty for most keys.
    tail_start: Vec<u32>,
    chain: Vec<OpId>,
    /// For each operation: its index in `chain`, or `NONE`.
    position: Vec<u32>,
}

impl VersionChains {
    /// The chains of `history`, or `None` when some key's committed writes are not totally
    /// ordered by its known write order (only pairs between committed transactions count, as
    /// everywhere in the checkers: an aborted writer takes part in no order).
    pub fn of(history: &History) -> Option<VersionChains> {
        let ops = history.ops();
        let keys = history.key_count();
        let committed = |op: OpId| history.txn(ops[op as usize].txn).is_committed();
        // Per key: its initial write and its committed non-initial writes (CSR by key).
        let mut initial = vec![NONE; keys];
        for o in history.txn(INITIAL_TXN).ops() {
            if ops[o as usize].kind == OpKind::Write {
                initial[ops[o as usize].key as usize] = o;
            }
        }
        let mut count = vec![0u32; keys + 1];
        for t in history.committed_txns().filter(|&t| t != INITIAL_TXN) {
            for o in history.txn(t).ops() {
                let op = &ops[o as usize];
                if op.kind == OpKind::Write {
                    count[op.key as usize + 1] += 1;
                }
            }
        }
        for k in 0..keys {
            count[k + 1] += count[k];
        }
        let mut writes = vec![0u32; count[keys] as usize];
        let mut cursor = count.clone();
        for t in history.committed_txns().filter(|&t| t != INITIAL_TXN) {
            for o in history.txn(t).ops() {
                let op = &ops[o as usize];
                if op.kind == OpKind::Write {
                    writes[cursor[op.key as usize] as usize] = o;
                    cursor[op.key as usize] += 1;
                }
            }
        }
        // Successors among committed writes: the known pairs are sorted by their earlier write.
        let pairs: Vec<(OpId, OpId)> = history
            .known_write_order()
            .iter()
            .copied()
            .filter(|&(a, b)| committed(a) && committed(b))
            .collect();
        let mut first_out = vec![0u32; ops.len() + 1];
        let mut in_degree = vec![0u32; ops.len()];
        for &(a, b) in &pairs {
            first_out[a as usize + 1] += 1;
            in_degree[b as usize] += 1;
        }
        for o in 0..ops.len() {
            first_out[o + 1] += first_out[o];
        }
        // Kahn's algorithm per key: the order is total iff exactly one write is ready at
        // every step (a unique topological order is a Hamiltonian path).
        let mut key_start = Vec::with_capacity(keys + 1);
        let mut tail_start = Vec::with_capacity(keys);
        let mut chain = Vec::with_capacity(writes.len() + keys);
        let mut position = vec![NONE; ops.len()];
        let mut ready: Vec<OpId> = Vec::new();
        for k in 0..keys {
            key_start.push(chain.len() as u32);
            if initial[k] != NONE {
                position[initial[k] as usize] = chain.len() as u32;
                chain.push(initial[k]);
            }
            let group = &writes[count[k] as usize..count[k + 1] as usize];
            ready.clear();
            ready.extend(
                group
                    .iter()
                    .copied()
                    .filter(|&w| in_degree[w as usize] == 0),
            );
            let mut placed = 0;
            while ready.len() == 1 {
                let current = ready.pop().unwrap();
                position[current as usize] = chain.len() as u32;
                chain.push(current);
                placed += 1;
                let range =
                    first_out[current as usize] as usize..first_out[current as usize + 1] as usize;
                for &(_, b) in &pairs[range] {
                    in_degree[b as usize] -= 1;
                    if in_degree[b as usize] == 0 {
                        ready.push(b);
                    }
                }
            }
            tail_start.push(chain.len() as u32);
            if ready.is_empty() {
                if placed != group.len() {
                    return None;
                }
                continue;
            }
            // Several writes ready at once: a tail, if they are all the rest and unordered.
            if ready.len() != group.len() - placed
                || ready
                    .iter()
                    .any(|&w| first_out[w as usize] != first_out[w as usize + 1])
            {
                return None;
            }
            ready.sort_unstable();
            for &w in &ready {
                position[w as usize] = chain.len() as u32;
                chain.push(w);
            }
        }
        key_start.push(chain.len() as u32);
        let chains = VersionChains {
            key_start,
            tail_start,
            chain,
            position,
        };
        // A tail write nobody else reads (a read of it would have ordered it).
        let raw = history.read_from_raw();
        for (r, op) in ops.iter().enumerate() {
            let w = raw[r];
            if op.kind == OpKind::Read
                && w != NONE
                && ops[w as usize].txn != op.txn
                && chains.in_tail(w)
            {
                return None;
            }
        }
        Some(chains)
    }

    /// Whether `write` is in its key's unobserved tail.
    fn in_tail(&self, write: OpId) -> bool {
        let p = self.position[write as usize];
        p != NONE && p >= self.tail_start[self.key_of(p) as usize]
    }

    /// The key whose chain holds index `p`.
    fn key_of(&self, p: u32) -> KeyId {
        (self.key_start.partition_point(|&s| s <= p) - 1) as KeyId
    }

    /// Whether some key has an unordered tail of two or more writes.
    pub fn has_tails(&self) -> bool {
        (0..self.tail_start.len()).any(|k| self.key_start[k + 1] - self.tail_start[k] >= 2)
    }

    /// The transactions writing each key's tail, for [`tail_order`] (only tails of two or
    /// more transactions are contended).
    fn contended_tails(&self, history: &History) -> Tails {
        let mut pairs = Vec::new();
        for k in 0..self.tail_start.len() {
            let tail = &self.chain[self.tail_start[k] as usize..self.key_start[k + 1] as usize];
            if tail.len() >= 2 {
                pairs.extend(tail.iter().map(|&w| (k as u32, history.op(w).txn)));
            }
        }
        Tails::new(history.txn_count(), pairs)
    }

    /// These chains with each tail put in the order of its writers' `rank` (ties, and writes
    /// of one transaction, by operation id): every key's order total.
    fn with_tails_ordered(&self, history: &History, rank: &[u32]) -> VersionChains {
        let mut ordered = self.clone();
        for k in 0..self.tail_start.len() {
            let (start, end) = (self.tail_start[k] as usize, self.key_start[k + 1] as usize);
            let tail = &mut ordered.chain[start..end];
            tail.sort_unstable_by_key(|&w| (rank[history.op(w).txn as usize], w));
            for (i, &w) in tail.iter().enumerate() {
                ordered.position[w as usize] = (start + i) as u32;
            }
            ordered.tail_start[k] = end as u32;
        }
        ordered
    }

    /// The writes right after `write` in its key's version order: the next one, or, for the
    /// last ordered write, every write of the tail (each may be the next).
    fn successors(&self, write: OpId, key: KeyId) -> &[OpId] {
        let p = self.position[write as usize];
        if p == NONE {
            return &[];
        }
        let (next, tail, end) = (
            p as usize + 1,
            self.tail_start[key as usize] as usize,
            self.key_start[key as usize + 1] as usize,
        );
        if next < tail {
            &self.chain[next..next + 1]
        } else if next == tail {
            &self.chain[tail..end]
        } else {
            &[]
        }
    }
}

/// The kind of a dependency edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    /// Session order.
    SessionOrder,
    /// `to` read the version `from` wrote.
    WriteRead,
    /// `to` wrote the version right after `from`'s.
    WriteWrite,
    /// `to` wrote the version right after the one `from` read (anti-dependency).
    ReadWrite,
    /// `from` completed before `to` was invoked.
    RealTime,
}

/// One edge of the DSG: `from → to`, and the operations that justify it (`NONE` for session
/// and real-time order): wr (writer's write, reader's read), ww (earlier write, later write),
/// rw (the read, the later write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dep {
    /// Source transaction.
    pub from: TxnId,
    /// Target transaction.
    pub to: TxnId,
    /// Why.
    pub kind: DepKind,
    /// First justifying operation.
    pub a: OpId,
    /// Second justifying operation.
    pub b: OpId,
}

/// Adya's direct serialization graph of a history with complete version orders.
#[derive(Debug, Clone)]
pub struct DependencyGraph {
    /// Number of transactions (node ids are `TxnId`s; aborted ones have no edge).
    pub nodes: usize,
    /// Every edge.
    pub deps: Vec<Dep>,
}

impl DependencyGraph {
    /// The graph of `history` with its version chains; real-time edges when `real_time`.
    /// Assumes causal consistency holds (every external committed read names a committed
    /// writer's final write); reads that do not are skipped.
    pub fn build(history: &History, chains: &VersionChains, real_time: bool) -> DependencyGraph {
        let ops = history.ops();
        let mut deps = Vec::new();
        for s in history.sessions() {
            let mut previous = NONE;
            for t in s.txns().filter(|&t| history.txn(t).is_committed()) {
                if previous != NONE {
                    deps.push(Dep {
                        from: previous,
                        to: t,
                        kind: DepKind::SessionOrder,
                        a: NONE,
                        b: NONE,
                    });
                }
                previous = t;
            }
        }
        // ww between consecutive versions of different transactions; the last ordered version
        // before each write of the tail.
        for k in 0..history.key_count() {
            let range = chains.key_start[k] as usize..chains.key_start[k + 1] as usize;
            for &q in &chains.chain[range] {
                for &n in chains.successors(q, k as KeyId) {
                    let (tp, tq) = (ops[q as usize].txn, ops[n as usize].txn);
                    if tp != tq && tp != INITIAL_TXN {
                        deps.push(Dep {
                            from: tp,
                            to: tq,
                            kind: DepKind::WriteWrite,
                            a: q,
                            b: n,
                        });
                    }
                }
            }
        }
        let raw = history.read_from_raw();
        for t in history.committed_txns().filter(|&t| t != INITIAL_TXN) {
            for r in history.txn(t).ops() {
                let op = &ops[r as usize];
                let w = raw[r as usize];
                if op.kind != OpKind::Read || w == NONE {
                    continue;
                }
                let writer = ops[w as usize].txn;
                if writer == t || !history.txn(writer).is_committed() {
                    continue;
                }
                if writer != INITIAL_TXN {
                    deps.push(Dep {
                        from: writer,
                        to: t,
                        kind: DepKind::WriteRead,
                        a: w,
                        b: r,
                    });
                }
                for &next in chains.successors(w, op.key) {
                    let u = ops[next as usize].txn;
                    if u != t {
                        deps.push(Dep {
                            from: t,
                            to: u,
                            kind: DepKind::ReadWrite,
                            a: r,
                            b: next,
                        });
                    }
                }
            }
        }
        if real_time {
            deps.extend(history.real_time_order().into_iter().map(|(a, b)| Dep {
                from: a,
                to: b,
                kind: DepKind::RealTime,
                a: NONE,
                b: NONE,
            }));
        }
        DependencyGraph {
            nodes: history.txn_count(),
            deps,
        }
    }
}

/// A level this file decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphLevel {
    /// Prefix consistency.
    Prefix,
    /// Snapshot isolation.
    Snapshot,
    /// Serializability.
    Serializable,
    /// Strict serializability (the graph must carry real-time edges).
    StrictSerializable,
}

impl GraphLevel {
    /// The level for `level`, if this file decides it.
    pub fn from_level(level: Level) -> Option<GraphLevel> {
        match level {
            Level::Prefix => Some(GraphLevel::Prefix),
            Level::Snapshot => Some(GraphLevel::Snapshot),
            Level::Serializable => Some(GraphLevel::Serializable),
            Level::StrictSerializable => Some(GraphLevel::StrictSerializable),
            _ => None,
        }
    }

    fn split(self) -> bool {
        matches!(self, GraphLevel::Prefix | GraphLevel::Snapshot)
    }
}

/// The answer of [`decide_on_graph`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphDecision {
    /// Consistent: a topological order of the graph searched (transactions under SER and
    /// strict-ser, snapshot `2t` and commit `2t + 1` nodes under SI and PC).
    Consistent(Vec<u32>),
    /// Violated: a cycle, as indices into [`DependencyGraph::deps`], each edge's target the
    /// next edge's source.
    Violated(Vec<usize>),
}

/// An edge of the graph searched: the split graph's internal `S_t → C_t` edges have no dep.
#[derive(Clone, Copy)]
struct Arc {
    to: u32,
    /// Index into `deps`, or `NONE` for `S_t → C_t`.
    dep: u32,
    anti: bool,
}

/// A graph in compressed sparse rows.
struct Csr {
    first: Vec<u32>,
    arcs: Vec<Arc>,
}

impl Csr {
    fn new(nodes: usize, edges: &[(u32, Arc)]) -> Csr {
        let mut first = vec![0u32; nodes + 1];
        for &(from, _) in edges {
            first[from as usize + 1] += 1;
        }
        for v in 0..nodes {
            first[v + 1] += first[v];
        }
        let mut cursor = first.clone();
        let mut arcs = vec![
            Arc {
                to: 0,
                dep: NONE,
                anti: false
            };
            edges.len()
        ];
        for &(from, arc) in edges {
            arcs[cursor[from as usize] as usize] = arc;
            cursor[from as usize] += 1;
        }
        Csr { first, arcs }
    }

    fn out(&self, v: u32) -> &[Arc] {
        &self.arcs[self.first[v as usize] as usize..self.first[v as usize + 1] as usize]
    }
}

/// The graph `decide_on_graph` searches for `level`: transactions (SER, strict-ser), or the
/// snapshot `S_t = 2t` and commit `C_t = 2t + 1` nodes of the split (SI, PC).
fn searched_graph(history: &History, graph: &DependencyGraph, level: GraphLevel) -> Csr {
    let split = level.split();
    let nodes = if split { 2 * graph.nodes } else { graph.nodes };
    // Node ids: `t` (SER), or `S_t = 2t`, `C_t = 2t + 1` (split).
    let s = |t: TxnId| if split { 2 * t } else { t };
    let c = |t: TxnId| if split { 2 * t + 1 } else { t };
    let mut edges: Vec<(u32, Arc)> = Vec::with_capacity(graph.deps.len() + graph.nodes);
    for (i, d) in graph.deps.iter().enumerate() {
        let (from, to) = match (d.kind, level) {
            (DepKind::ReadWrite, _) => (s(d.from), c(d.to)),
            (DepKind::WriteWrite, GraphLevel::Prefix) => (c(d.from), c(d.to)),
            _ => (c(d.from), s(d.to)),
        };
        edges.push((
            from,
            Arc {
                to,
                dep: i as u32,
                anti: d.kind == DepKind::ReadWrite,
            },
        ));
    }
    if split {
        for t in history.committed_txns() {
            edges.push((
                2 * t,
                Arc {
                    to: 2 * t + 1,
                    dep: NONE,
                    anti: false,
                },
            ));
        }
    }
    Csr::new(nodes, &edges)
}

/// Decides `level` on `graph` (which carries real-time edges iff the level is strict).
pub(crate) fn decide_on_graph(
    history: &History,
    graph: &DependencyGraph,
    level: GraphLevel,
) -> GraphDecision {
    let split = level.split();
    let nodes = if split { 2 * graph.nodes } else { graph.nodes };
    let csr = searched_graph(history, graph, level);
    let mut in_degree = vec![0u32; nodes];
    for a in &csr.arcs {
        in_degree[a.to as usize] += 1;
    }
    // Kahn's algorithm, a commit ready before any snapshot (so that a transaction's snapshot
    // and commit stay close: snapshot isolation's unordered writers of a key must not
    // overlap, see `check_known_order`); the initial transaction (no incoming edge) first.
    let mut order: Vec<u32> = Vec::with_capacity(nodes);
    let (mut commits, mut snapshots): (Vec<u32>, Vec<u32>) = (0..nodes as u32)
        .rev()
        .filter(|&v| in_degree[v as usize] == 0)
        .partition(|&v| !split || v % 2 == 1);
    while let Some(v) = commits.pop().or_else(|| snapshots.pop()) {
        order.push(v);
        for a in csr.out(v) {
            in_degree[a.to as usize] -= 1;
            if in_degree[a.to as usize] == 0 {
                if !split || a.to % 2 == 1 {
                    commits.push(a.to);
                } else {
                    snapshots.push(a.to);
                }
            }
        }
    }
    if order.len() == nodes {
        return GraphDecision::Consistent(order);
    }
    // The cyclic part: nodes left by Kahn forwards (on or after a cycle) and backwards (on
    // or before one).
    let mut forward_left = vec![false; nodes];
    for (v, &d) in in_degree.iter().enumerate() {
        forward_left[v] = d > 0;
    }
    let reverse: Vec<(u32, Arc)> = (0..nodes as u32)
        .flat_map(|v| {
            csr.out(v).iter().map(move |a| {
                (
                    a.to,
                    Arc {
                        to: v,
                        dep: a.dep,
                        anti: a.anti,
                    },
                )
            })
        })
        .filter(|(from, a)| forward_left[*from as usize] && forward_left[a.to as usize])
        .collect();
    let rcsr = Csr::new(nodes, &reverse);
    drop(reverse);
    let mut out_degree = vec![0u32; nodes];
    for a in &rcsr.arcs {
        out_degree[a.to as usize] += 1;
    }
    let mut queue: Vec<u32> = (0..nodes as u32)
        .filter(|&v| forward_left[v as usize] && out_degree[v as usize] == 0)
        .collect();
    let mut in_region = forward_left;
    while let Some(v) = queue.pop() {
        in_region[v as usize] = false;
        for a in rcsr.out(v) {
            out_degree[a.to as usize] -= 1;
            if out_degree[a.to as usize] == 0 && in_region[a.to as usize] {
                queue.push(a.to);
            }
        }
    }
    let cycle = single_anti_cycle(&csr, &in_region, nodes)
        .or_else(|| shortest_cycle(&csr, &in_region, nodes))
        .expect("a graph Kahn's algorithm cannot empty has a cycle");
    GraphDecision::Violated(
        cycle
            .into_iter()
            .filter(|&d| d != NONE)
            .map(|d| d as usize)
            .collect(),
    )
}

/// Breadth-first search from `from` to `to` over arcs inside `region` (skipping
/// anti-dependencies when `no_anti`), at most `budget` arcs looked at; the path's arcs' deps.
#[allow(clippy::too_many_arguments)]
fn bfs_path(
    csr: &Csr,
    region: &[bool],
    from: u32,
    to: u32,
    no_anti: bool,
    stamp: &mut [u32],
    parent: &mut [(u32, u32)],
    generation: u32,
    budget: &mut u64,
) -> Option<Vec<u32>> {
    let mut queue = vec![from];
    stamp[from as usize] = generation;
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head];
        head += 1;
        for a in csr.out(v) {
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            if (no_anti && a.anti) || !region[a.to as usize] || stamp[a.to as usize] == generation {
                continue;
            }
            stamp[a.to as usize] = generation;
            parent[a.to as usize] = (v, a.dep);
            if a.to == to {
                let mut path = Vec::new();
                let mut x = to;
                while x != from {
                    let (p, dep) = parent[x as usize];
                    path.push(dep);
                    x = p;
                }
                path.reverse();
                return Some(path);
            }
            queue.push(a.to);
        }
    }
    None
}

/// A cycle with exactly one anti-dependency (Adya's G-single), searched from each `rw` arc of
/// the cyclic part within a work budget: the arcs' deps, the `rw` first.
fn single_anti_cycle(csr: &Csr, region: &[bool], nodes: usize) -> Option<Vec<u32>> {
    let mut stamp = vec![0u32; nodes];
    let mut parent = vec![(0u32, 0u32); nodes];
    let mut budget: u64 = 2_000_000 + 4 * csr.arcs.len() as u64;
    let mut generation = 0u32;
    for v in (0..nodes as u32).filter(|&v| region[v as usize]) {
        for a in csr
            .out(v)
            .iter()
            .filter(|a| a.anti && region[a.to as usize])
        {
            generation += 1;
            if let Some(path) = bfs_path(
                csr,
                region,
                a.to,
                v,
                true,
                &mut stamp,
                &mut parent,
                generation,
                &mut budget,
            ) {
                let mut cycle = vec![a.dep];
                cycle.extend(path);
                return Some(cycle);
            }
            if budget == 0 {
                return None;
            }
        }
    }
    None
}

/// The shortest cycle through a node of the cyclic part that lies on a cycle. The cyclic part
/// (nodes reachable from a cycle and reaching one) may hold nodes between two cycles on none:
/// every node of it has a successor in it (a node without one was trimmed), so following
/// successors from its first node repeats a node, which lies on a cycle.
fn shortest_cycle(csr: &Csr, region: &[bool], nodes: usize) -> Option<Vec<u32>> {
    let mut v = (0..nodes as u32).find(|&v| region[v as usize])?;
    let mut seen = vec![false; nodes];
    while !seen[v as usize] {
        seen[v as usize] = true;
        v = csr.out(v).iter().find(|a| region[a.to as usize])?.to;
    }
    drop(seen);
    let mut stamp = vec![0u32; nodes];
    let mut parent = vec![(0u32, 0u32); nodes];
    let mut budget = u64::MAX;
    // A cycle through v: an arc v → w, then the shortest path w ⇝ v.
    let mut best: Option<Vec<u32>> = None;
    for (g, a) in csr
        .out(v)
        .iter()
        .filter(|a| region[a.to as usize])
        .enumerate()
    {
        let mut cycle = vec![a.dep];
        if a.to != v {
            match bfs_path(
                csr,
                region,
                a.to,
                v,
                false,
                &mut stamp,
                &mut parent,
                g as u32 + 1,
                &mut budget,
            ) {
                Some(path) => cycle.extend(path),
                None => continue,
            }
        }
        if best.as_ref().map_or(true, |b| cycle.len() < b.len()) {
            best = Some(cycle);
        }
        if g >= 8 && best.is_some() {
            break;
        }
    }
    best
}

/// The anomaly a cycle of `level` shows: its row of the anomaly table and its Adya / Elle name.
fn name_cycle(
    history: &History,
    graph: &DependencyGraph,
    cycle: &[usize],
    level: GraphLevel,
) -> (AnomalyId, String) {
    let deps: Vec<&Dep> = cycle.iter().map(|&i| &graph.deps[i]).collect();
    let anti = deps.iter().filter(|d| d.kind == DepKind::ReadWrite).count();
    let wr = deps.iter().any(|d| d.kind == DepKind::WriteRead);
    let real_time = deps.iter().any(|d| d.kind == DepKind::RealTime);
    let txns = deps.len();
    if real_time {
        return match anti {
            0 if !wr => (AnomalyId::WriteCycleRealTime, "G0-realtime".into()),
            0 => (AnomalyId::CausalityCycleRealTime, "G1c-realtime".into()),
            1 => (
                AnomalyId::SingleAntiDependencyCycleRealTime,
                "G-single-item-realtime".into(),
            ),
            _ => (
                AnomalyId::AntiDependencyCycleRealTime,
                "G2-item-realtime".into(),
            ),
        };
    }
    match anti {
        0 if !wr => (AnomalyId::WriteCycle, "G0".into()),
        0 => (AnomalyId::CausalityCycle, "G1c".into()),
        1 => {
            let rw = deps.iter().find(|d| d.kind == DepKind::ReadWrite).unwrap();
            // A lost update: `rw.from` read a version of a key older than `rw.to`'s write of
            // it, and wrote the key after `rw.to` did (a ww on the same key): it overwrote
            // that write without seeing it. A ww on another key makes it a G-single of two
            // keys (Elle's G-single-item; read skew where pc holds), not a lost update.
            let key_of = |o: OpId| history.op(o).key;
            let lost = txns == 2
                && deps.iter().any(|d| {
                    d.kind == DepKind::WriteWrite
                        && d.from == rw.to
                        && d.to == rw.from
                        && d.a != NONE
                        && rw.a != NONE
                        && key_of(d.a) == key_of(rw.a)
                });
            if lost {
                (AnomalyId::LostUpdate, "G-single".into())
            } else if level == GraphLevel::Prefix {
                (AnomalyId::ReadSkew, "G-single".into())
            } else {
                (AnomalyId::SingleAntiDependencyCycle, "G-single".into())
            }
        }
        _ => match level {
            GraphLevel::Prefix => (AnomalyId::PrefixViolation, "G2".into()),
            GraphLevel::Snapshot => (
                AnomalyId::NonAdjacentAntiDependencyCycle,
                "G-nonadjacent-item".into(),
            ),
            _ if txns == 2 && anti == 2 => (AnomalyId::WriteSkew, "G2-item".into()),
            _ => (AnomalyId::AntiDependencyCycle, "G2-item".into()),
        },
    }
}

/// One edge of a cycle for the report, with the operations that justify it.
fn strong_edge(history: &History, d: &Dep) -> StrongEdge {
    let label = |t: TxnId| history.txn_label(t);
    let (from, to) = (label(d.from), label(d.to));
    let op = |o: OpId| OpRef::new(history, o);
    let key = (d.a != NONE).then(|| op(d.a).key);
    let show = |o: OpId| {
        let r = op(o);
        match r.value {
            Some(v) => format!("{}={v}", r.key),
            None if r.txn == INITIAL_TXN || history.writer_txn(o) == Some(INITIAL_TXN) => {
                format!("{} (initial value)", r.key)
            }
            None => r.key.clone(),
        }
    };
    let line = |o: OpId| {
        let l = history.op(o).line;
        if l == 0 {
            String::new()
        } else {
            format!(" (line {l})")
        }
    };
    let (kind, read, write, explanation) = match d.kind {
        DepKind::SessionOrder => (
            StrongEdgeKind::SessionOrder,
            None,
            None,
            format!("{from} precedes {to} in its session"),
        ),
        DepKind::RealTime => (
            StrongEdgeKind::RealTime,
            None,
            None,
            format!("{from} completed before {to} was invoked (real time)"),
        ),
        DepKind::WriteRead => (
            StrongEdgeKind::WriteRead,
            Some(op(d.b)),
            Some(op(d.a)),
            format!(
                "wr: {to} read {}{}, the version {from} wrote{}",
                show(d.b),
                line(d.b),
                line(d.a)
            ),
        ),
        DepKind::WriteWrite => (
            StrongEdgeKind::WriteWrite,
            None,
            Some(op(d.a)),
            format!(
                "ww: {from} wrote {}{}, and the next version of {} is {to}'s {}{}",
                show(d.a),
                line(d.a),
                op(d.a).key,
                show(d.b),
                line(d.b)
            ),
        ),
        DepKind::ReadWrite => (
            StrongEdgeKind::ReadWrite,
            Some(op(d.a)),
            Some(op(d.b)),
            format!(
                "rw: {from} read {}{}, and {to} wrote the next version, {}{}",
                show(d.a),
                line(d.a),
                show(d.b),
                line(d.b)
            ),
        ),
    };
    StrongEdge {
        from: d.from,
        to: d.to,
        from_label: from,
        to_label: to,
        kind,
        key,
        read,
        write,
        via: None,
        explanation,
        premise: Vec::new(),
    }
}

/// Options of [`check_known_order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KnownOrderOptions {
    /// On a pass, include the witness commit order.
    pub witness: bool,
    /// The engine named in the report (the graph decides whatever was asked).
    pub engine: Engine,
}

/// Why [`check_known_order`] leaves a level to the commit-order search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecided {
    /// Some key's known order is partial beyond an unobserved tail ([`VersionChains::of`]).
    PartialOrder,
    /// Snapshot isolation holds for the graph with Elle's edges, but the search over the
    /// unobserved tails' orders ([`tail_order`]) ran out of replays before finding an order
    /// that keeps each tail's writers apart or proving that none does.
    OverlappingTail,
    /// Not a level this file decides.
    NotAGraphLevel,
}

/// Decides `level` on `history` under its known version orders ([`VersionChains`]), given the
/// causal checker's report on the same history (causal consistency with the known write
/// order, which every level here implies).
pub(crate) fn check_known_order(
    history: &History,
    level: Level,
    causal: &CheckReport,
    options: &KnownOrderOptions,
) -> Result<StrongReport, Undecided> {
    let graph_level = GraphLevel::from_level(level).ok_or(Undecided::NotAGraphLevel)?;
    let chains = VersionChains::of(history).ok_or(Undecided::PartialOrder)?;
    let mut report = StrongReport {
        level,
        verdict: Verdict::Violated,
        consistent: false,
        source: history.source().to_string(),
        engine: options.engine,
        summary: StrongSummary {
            sessions: history.sessions().len(),
            transactions: history.txn_count() - 1,
            operations: history.ops().len() - history.txn_ops(INITIAL_TXN).len(),
            components: 1,
            largest_component: history.committed_txns().count() - 1,
            forced_edges: 0,
            search_steps: 0,
            failed_states: 0,
            smt_calls: 0,
        },
        causal: None,
        violation: None,
        witness: None,
        witness_labels: None,
        unknown_reason: None,
    };
    if !causal.is_consistent() {
        report.causal = Some(causal.clone());
        return Ok(report);
    }
    let mut graph = DependencyGraph::build(
        history,
        &chains,
        graph_level == GraphLevel::StrictSerializable,
    );
    report.summary.forced_edges = graph.deps.len();
    let mut decision = decide_on_graph(history, &graph, graph_level);
    let mut unordered_tail = false;
    if let GraphDecision::Consistent(nodes) = &decision {
        if graph_level == GraphLevel::Snapshot && !tails_apart(&chains, history, nodes) {
            // Two writers of a key whose order no read shows overlap in this order: search
            // the tails' orders ([`tail_order`]).
            let tails = chains.contended_tails(history);
            let csr = searched_graph(history, &graph, graph_level);
            let mut stats = tail_order::TailSearch::default();
            let outcome =
                tail_order::order_tails(&csr, &tails, tail_order::MAX_REPLAYS, &mut stats);
            report.summary.search_steps = stats.choices as u64;
            report.summary.failed_states = stats.dead_ends;
            match outcome {
                TailOrder::Ordered(nodes) => decision = GraphDecision::Consistent(nodes),
                TailOrder::GaveUp => return Err(Undecided::OverlappingTail),
                TailOrder::NoOrder(rank) => {
                    // Every order of the tails closes a cycle: show the one under the order
                    // the last schedule tried.
                    drop(csr);
                    let ordered = chains.with_tails_ordered(history, &rank);
                    graph = DependencyGraph::build(history, &ordered, false);
                    decision = decide_on_graph(history, &graph, graph_level);
                    if let GraphDecision::Consistent(_) = decision {
                        report.verdict = Verdict::Unknown;
                        report.unknown_reason = Some(
                            "internal: no order of the unobserved appends keeps the snapshot \
                             isolation graph acyclic, yet the order tried does"
                                .to_string(),
                        );
                        return Ok(report);
                    }
                    unordered_tail = true;
                }
            }
        }
    }
    match decision {
        GraphDecision::Consistent(nodes) => {
            let split = graph_level.split();
            let order: Vec<TxnId> = nodes
                .into_iter()
                .filter(|&v| !split || v % 2 == 1)
                .map(|v| if split { v / 2 } else { v })
                .filter(|&t| history.txn(t).is_committed())
                .collect();
            let checked = match graph_level {
                GraphLevel::Prefix | GraphLevel::Snapshot if options.witness => {
                    verify_si_pc_order(history, level, &order)
                }
                GraphLevel::Prefix | GraphLevel::Snapshot => Ok(()),
                _ => verify_serial_order(history, &order),
            };
            if let Err(problem) = checked {
                report.verdict = Verdict::Unknown;
                report.unknown_reason = Some(format!(
                    "internal: the commit order of the dependency graph fails verification: \
                     {problem}"
                ));
                return Ok(report);
            }
            report.verdict = Verdict::Consistent;
            report.consistent = true;
            if options.witness {
                report.witness_labels = Some(order.iter().map(|&t| history.txn_label(t)).collect());
                report.witness = Some(order);
            }
        }
        GraphDecision::Violated(cycle) => {
            let mut v = violation(history, &graph, &cycle, graph_level);
            if unordered_tail {
                // Edges between two appends of a key's unread tail hold only under the order
                // tried; the others hold under every order of the tails.
                v.chosen_order_edges = cycle
                    .iter()
                    .enumerate()
                    .filter(|&(_, &i)| {
                        let d = &graph.deps[i];
                        d.kind == DepKind::WriteWrite
                            && d.a != NONE
                            && d.b != NONE
                            && chains.in_tail(d.a)
                            && chains.in_tail(d.b)
                    })
                    .map(|(k, _)| k)
                    .collect();
                v.description.push_str(
                    "; the appends after the last element a read showed were never read, so \
                     their order is not known: every order of them closes a cycle, and this \
                     one is under the order tried last",
                );
            }
            report.violation = Some(v);
        }
    }
    Ok(report)
}

/// Whether, in the topological order `nodes` of the snapshot-isolation split graph, the
/// writers of each key's unobserved tail run one after another (each commit before the next
/// one's snapshot). Then ordering each tail by commit keeps the graph acyclic and gives every
/// later writer the earlier one's write (snapshot isolation's write–write rule): the order is
/// a witness. Histories without tails always pass.
fn tails_apart(chains: &VersionChains, history: &History, nodes: &[u32]) -> bool {
    if !chains.has_tails() {
        return true;
    }
    let mut position = vec![0u32; nodes.len()];
    for (i, &v) in nodes.iter().enumerate() {
        position[v as usize] = i as u32;
    }
    let mut intervals: Vec<(u32, u32)> = Vec::new();
    for k in 0..chains.tail_start.len() {
        let tail = &chains.chain[chains.tail_start[k] as usize..chains.key_start[k + 1] as usize];
        if tail.len() < 2 {
            continue;
        }
        intervals.clear();
        intervals.extend(tail.iter().map(|&w| {
            let t = history.op(w).txn;
            (position[2 * t as usize], position[2 * t as usize + 1])
        }));
        intervals.sort_unstable();
        intervals.dedup();
        if intervals.windows(2).any(|p| p[0].1 > p[1].0) {
            return false;
        }
    }
    true
}

/// The violation a cycle shows.
fn violation(
    history: &History,
    graph: &DependencyGraph,
    cycle: &[usize],
    level: GraphLevel,
) -> Violation {
    let (id, adya) = name_cycle(history, graph, cycle, level);
    let edges: Vec<StrongEdge> = cycle
        .iter()
        .map(|&i| strong_edge(history, &graph.deps[i]))
        .collect();
    let mut core: Vec<CoreTxn> = Vec::new();
    for &i in cycle {
        let d = &graph.deps[i];
        let t = d.from;
        if core.iter().any(|c| c.txn.id == t) {
            continue;
        }
        let mut ops: Vec<OpId> = Vec::new();
        for &j in cycle {
            let e = &graph.deps[j];
            for o in [e.a, e.b] {
                if o != NONE && history.op(o).txn == t && !ops.contains(&o) {
                    ops.push(o);
                }
            }
        }
        ops.sort_unstable();
        core.push(CoreTxn {
            txn: TxnRef::new(history, t),
            ops: ops.into_iter().map(|o| OpRef::new(history, o)).collect(),
        });
    }
    let anti = cycle
        .iter()
        .filter(|&&i| graph.deps[i].kind == DepKind::ReadWrite)
        .count();
    let what = match level {
        GraphLevel::Serializable => {
            "every serial order would need each of these edges, and they form a cycle".to_string()
        }
        GraphLevel::StrictSerializable => "every serial order that respects real time would \
                                           need each of these edges, and they form a cycle"
            .to_string(),
        GraphLevel::Snapshot => format!(
            "a cycle of dependencies with {anti} anti-dependenc{} and no two adjacent: no \
             commit order with snapshots explains it (Cerone & Gotsman)",
            if anti == 1 { "y" } else { "ies" }
        ),
        GraphLevel::Prefix => format!(
            "a cycle of dependencies in which each of its {anti} anti-dependenc{} follows a \
             session-order or write-read edge: no commit order gives every transaction a prefix \
             of it that explains its reads",
            if anti == 1 { "y" } else { "ies" }
        ),
    };
    Violation {
        anomaly: id.name().to_string(),
        adya: Some(adya.clone()),
        description: format!(
            "{} ({adya}): {what}; each key's version order is the one the reads revealed",
            id.description()
        ),
        core,
        core_minimal: false,
        core_levels: CoreLevels {
            ser: None,
            si: None,
            pc: None,
        },
        cycle: edges,
        core_is_cycle: true,
        chosen_order_edges: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
