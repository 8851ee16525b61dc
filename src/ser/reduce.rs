//! The search problem for SER, and the read/write split reductions of PC and SI to it:
//! Biswas & Enea (OOPSLA'19) §4.1 (SER itself), §4.2 Theorem 4.8 (PC: h ⊨ PC iff h_R|W is
//! serializable) and §4.3 Theorem 4.10 / Corollary 4.11 (SI: hᶜ_R|W), the latter with dbcop's
//! equivalent non-overlap rule instead of one auxiliary variable per pair of conflicting
//! transactions (notes/biswas-enea.md §3.4).
//!
//! A *node* is a whole transaction (SER) or one half of it: R_t with all of t's reads, W_t with
//! all of its writes (PC, SI). Session order becomes one chain of nodes per session
//! (R_t1 W_t1 R_t2 W_t2 …). The search places nodes chain by chain; besides the chain order,
//! a node may be placed only after its *predecessors* in a DAG of edges every serialization
//! must respect:
//! - SER: the forced edges of [`super::saturate`] (so ∪ wr, ww, rw);
//! - PC: the forced edges of the split history h_R|W itself (its SER is PC, so the SER rules
//!   are sound for it). Transaction-level causal ww edges are *not* added as W_t2 → R_t1
//!   (pitfall 9: that rejects PC histories); at the split level they appear as W_t2 → W_t1.
//! - SI: the same, starting from so ∪ wr of h_R|W plus W_t2 → R_t1 for each transaction-level
//!   ww edge t2 → t1 (sound under SI: t2 and t1 write a common key, so their intervals do not
//!   overlap).
//!
//! Under SI the search additionally keeps the intervals [R_t, W_t] of two transactions that
//! write a common key from overlapping.

use super::saturate::{Saturation, Why};
use super::txns::{Txns, INIT};

/// Which level the problem decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Split {
    /// One node per transaction (SER).
    None,
    /// R/W split (PC).
    Prefix,
    /// R/W split with non-overlap of conflicting transactions (SI).
    Snapshot,
}

/// The initial transaction as a read source (it is placed before the search).
pub(crate) const NO_NODE: u32 = u32::MAX;

/// How a search for a serialization of a [`Problem`]'s nodes ended (the prefix search,
/// `search.rs`, or Z3, `smt_problem.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SearchResult {
    /// A serialization of the nodes, in order.
    Found(Vec<u32>),
    /// No serialization exists.
    Exhausted,
    /// The deadline or the state budget ran out.
    GaveUp,
}

/// A problem for the prefix search; nodes are dense `u32`s.
#[derive(Debug)]
pub(crate) struct Problem {
    pub split: Split,
    /// Node chains in order.
    pub chains: Vec<Vec<u32>>,
    /// Local transaction of each node.
    pub node_txn: Vec<u32>,
    /// Keys each node reads (from the node that is the key's last writer when it is placed).
    pub read_offsets: Vec<u32>,
    pub read_keys: Vec<u32>,
    /// The node each read reads from ([`NO_NODE`] for the initial transaction).
    pub read_src: Vec<u32>,
    /// Keys each node writes, with the number of reader nodes of that write.
    pub write_offsets: Vec<u32>,
    pub writes: Vec<(u32, u32)>,
    /// Per key, the reader nodes of the initial value.
    pub init_readers: Vec<u32>,
    /// Extra DAG edges: initial in-degree and successors (CSR).
    pub indegree: Vec<u32>,
    pub succ_offsets: Vec<u32>,
    pub succ: Vec<u32>,
    /// Number of keys.
    pub keys: u32,
}

impl Problem {
    /// Node count.
    pub fn len(&self) -> usize {
        self.node_txn.len()
    }

    pub fn reads(&self, v: u32) -> &[u32] {
        &self.read_keys
            [self.read_offsets[v as usize] as usize..self.read_offsets[v as usize + 1] as usize]
    }

    pub fn read_sources(&self, v: u32) -> &[u32] {
        &self.read_src
            [self.read_offsets[v as usize] as usize..self.read_offsets[v as usize + 1] as usize]
    }

    pub fn writes(&self, v: u32) -> &[(u32, u32)] {
        &self.writes
            [self.write_offsets[v as usize] as usize..self.write_offsets[v as usize + 1] as usize]
    }

    pub fn succ(&self, v: u32) -> &[u32] {
        &self.succ
            [self.succ_offsets[v as usize] as usize..self.succ_offsets[v as usize + 1] as usize]
    }

    /// Whether `v` is the read half R_t of a split transaction (always false for SER).
    pub fn is_read_half(&self, v: u32) -> bool {
        self.split != Split::None && v % 2 == 0
    }
}

/// The edges SI adds to the split history's saturation: W_t2 → R_t1 for each transaction-level
/// ww edge t2 → t1 of `sat` (split node ids: R_t = 2t, W_t = 2t − 1; see the module
/// documentation). Empty for PC.
pub(crate) fn snapshot_given_edges(sat: &Saturation, split: Split) -> Vec<(u32, u32)> {
    if split != Split::Snapshot {
        return Vec::new();
    }
    sat.edges
        .iter()
        .filter(|e| matches!(e.why, Why::Ww { .. }) && e.from != INIT && e.to != INIT)
        .map(|e| (2 * e.from, 2 * e.to - 1))
        .collect()
}

/// Builds the problem of `txns` (the history itself for SER, its split [`Txns::split`] for PC
/// and SI) from its saturation, which must be acyclic. Node `v` is local transaction `v + 1`.
pub(crate) fn build(txns: &Txns, sat: &Saturation, split: Split) -> Problem {
    let n = txns.len();
    let nodes = n - 1;
    let halves = split != Split::None;
    // The transaction of the unsplit history each node belongs to.
    let node_txn: Vec<u32> = (0..nodes as u32)
        .map(|v| if halves { v / 2 + 1 } else { v + 1 })
        .collect();
    let chains: Vec<Vec<u32>> = txns
        .chains
        .iter()
        .map(|c| c.iter().map(|&t| t - 1).collect())
        .collect();
    let mut reader_count: Vec<Vec<u32>> = vec![Vec::new(); n]; // per txn, per write index
    let mut init_readers = vec![0u32; txns.keys as usize];
    for t in 1..n as u32 {
        for r in txns.reads(t) {
            if r.writer == INIT {
                init_readers[r.key as usize] += 1;
            } else {
                let ws = txns.writes(r.writer);
                let i = ws
                    .binary_search_by_key(&r.key, |w| w.key)
                    .expect("a read's writer writes the key");
                let counts = &mut reader_count[r.writer as usize];
                if counts.is_empty() {
                    counts.resize(ws.len(), 0);
                }
                counts[i] += 1;
            }
        }
    }
    let mut read_offsets = vec![0u32; nodes + 1];
    let mut read_keys = Vec::new();
    let mut read_src = Vec::new();
    let mut write_offsets = vec![0u32; nodes + 1];
    let mut writes = Vec::new();
    for v in 0..nodes as u32 {
        let t = v + 1;
        for r in txns.reads(t) {
            read_keys.push(r.key);
            read_src.push(if r.writer == INIT {
                NO_NODE
            } else {
                r.writer - 1
            });
        }
        read_offsets[v as usize + 1] = read_keys.len() as u32;
        let counts = &reader_count[t as usize];
        for (i, w) in txns.writes(t).iter().enumerate() {
            writes.push((w.key, counts.get(i).copied().unwrap_or(0)));
        }
        write_offsets[v as usize + 1] = writes.len() as u32;
    }
    // Extra DAG edges: the forced ones that session order does not already imply.
    let mut dag: Vec<(u32, u32)> = sat
        .edges
        .iter()
        .filter(|e| e.from != INIT && e.to != INIT && e.why != Why::So)
        .map(|e| (e.from - 1, e.to - 1))
        .collect();
    dag.sort_unstable();
    dag.dedup();
    let mut indegree = vec![0u32; nodes];
    let mut succ_offsets = vec![0u32; nodes + 1];
    for &(a, b) in &dag {
        indegree[b as usize] += 1;
        succ_offsets[a as usize + 1] += 1;
    }
    for v in 0..nodes {
        succ_offsets[v + 1] += succ_offsets[v];
    }
    let succ = dag.iter().map(|&(_, b)| b).collect();
    Problem {
        split,
        chains,
        node_txn,
        read_offsets,
        read_keys,
        read_src,
        write_offsets,
        writes,
        init_readers,
        indegree,
        succ_offsets,
        succ,
        keys: txns.keys,
    }
}
