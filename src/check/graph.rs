//! The commit-order graph co′ that the checkers saturate (AWDIT PLDI'25 §3, Def. 3.1), stored
//! as two compressed adjacency arrays (CSR): the *base* edges so ∪ wr and the *inferred* edges
//! added by an isolation axiom. Every edge carries its cause: no operation for a session-order
//! edge, the read for a write–read edge, the read r_x of the axiom instance for an inferred edge.
//!
//! Nodes are all transactions (aborted ones stay isolated). The initial transaction comes
//! first: it has an edge to the first committed transaction of every session, so it reaches
//! every committed transaction through session order without materialising n edges.
//!
//! Also here: Kahn's topological sort (the acyclicity test and the witness commit order).

use super::read_consistency::NONE;
use crate::history::{History, OpId, TxnId, INITIAL_TXN};

/// The cause of a session-order edge (it has no operation).
pub(crate) const SESSION_ORDER: OpId = NONE;

/// Flag on the cause of a known write–write edge (a fact from the input, e.g. an Elle
/// list-append read; [`History::known_write_order`]): the low bits index that list. Operation
/// ids stay below 2^31 (the builder's limit), so the flag never collides with one.
pub(crate) const KNOWN_WW: OpId = 1 << 31;

/// Whether an edge cause marks a known write–write edge; its pair is
/// `history.known_write_order()[(cause & !KNOWN_WW) as usize]`.
#[inline]
pub(crate) fn is_known_ww(cause: OpId) -> bool {
    cause != SESSION_ORDER && cause & KNOWN_WW != 0
}

/// Adds the known write–write facts between distinct committed transactions as commit-order
/// edges. They are stored with the inferred edges (they are not so ∪ wr, so no causality
/// goes through them) but carry a [`KNOWN_WW`] cause instead of an axiom instance. This is
/// the one place the checkers learn the input's version order.
pub(crate) fn add_known_write_order(history: &History, edges: &mut EdgeList) {
    for (i, &(a, b)) in history.known_write_order().iter().enumerate() {
        let (ta, tb) = (history.op(a).txn, history.op(b).txn);
        if ta != tb && history.txn(ta).is_committed() && history.txn(tb).is_committed() {
            edges.push(ta, tb, KNOWN_WW | i as OpId);
        }
    }
}

/// Edges collected before they are laid out: `(from, to, cause)`.
#[derive(Debug, Default)]
pub(crate) struct EdgeList {
    edges: Vec<(TxnId, TxnId, OpId)>,
}

impl EdgeList {
    /// Adds the edge `from → to` caused by operation `cause`.
    #[inline]
    pub fn push(&mut self, from: TxnId, to: TxnId, cause: OpId) {
        self.edges.push((from, to, cause));
    }

    /// Adds `other`'s edges after these, in their order.
    pub fn append(&mut self, mut other: EdgeList) {
        if self.edges.is_empty() {
            self.edges = other.edges;
        } else {
            self.edges.append(&mut other.edges);
        }
    }

    /// Every edge with its cause, in the order added.
    #[cfg(test)]
    pub fn edges(&self) -> &[(TxnId, TxnId, OpId)] {
        &self.edges
    }

    /// The distinct `(from, to)` pairs, sorted.
    #[cfg(test)]
    pub fn pairs(&self) -> Vec<(TxnId, TxnId)> {
        let mut p: Vec<_> = self.edges.iter().map(|&(a, b, _)| (a, b)).collect();
        p.sort_unstable();
        p.dedup();
        p
    }
}

/// A history too large for the checkers' 32-bit edge indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooManyEdges(pub usize);

/// `count` edges as a 32-bit offset: up to `u32::MAX` edges fit (the last offset is the
/// count itself); more are [`TooManyEdges`], which carries the exact count.
fn edge_count(count: usize) -> Result<u32, TooManyEdges> {
    u32::try_from(count).map_err(|_| TooManyEdges(count))
}

/// Compressed sparse rows: the out-edges of node `v` are `offsets[v]..offsets[v + 1]`.
#[derive(Debug, Default)]
pub(crate) struct Csr {
    offsets: Vec<u32>,
    targets: Vec<TxnId>,
    causes: Vec<OpId>,
}

impl Csr {
    /// Lays out `edges` for `nodes` nodes (a stable counting sort by source).
    fn from_edges(nodes: usize, edges: EdgeList) -> Result<Csr, TooManyEdges> {
        let edges = edges.edges;
        edge_count(edges.len())?;
        let mut offsets = vec![0u32; nodes + 1];
        for &(from, _, _) in &edges {
            offsets[from as usize + 1] += 1;
        }
        for v in 0..nodes {
            offsets[v + 1] += offsets[v];
        }
        let mut cursor = offsets.clone();
        let mut targets = vec![0u32; edges.len()];
        let mut causes = vec![0u32; edges.len()];
        for (from, to, cause) in edges {
            let slot = cursor[from as usize] as usize;
            cursor[from as usize] += 1;
            targets[slot] = to;
            causes[slot] = cause;
        }
        Ok(Csr {
            offsets,
            targets,
            causes,
        })
    }

    #[inline]
    fn range(&self, v: TxnId) -> std::ops::Range<usize> {
        if self.offsets.is_empty() {
            return 0..0;
        }
        self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize
    }

    fn len(&self) -> usize {
        self.targets.len()
    }
}

/// One edge of the graph, as found by a traversal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edge {
    pub from: TxnId,
    pub to: TxnId,
    /// [`SESSION_ORDER`], the read of a write–read edge, or the read r_x of an axiom instance.
    pub cause: OpId,
    /// Whether an isolation axiom inferred it (otherwise it is in so ∪ wr).
    pub inferred: bool,
}

/// The commit-order graph: so ∪ wr, plus the edges an axiom inferred.
#[derive(Debug)]
pub(crate) struct CommitGraph {
    nodes: usize,
    base: Csr,
    inferred: Csr,
}

impl CommitGraph {
    /// so ∪ wr: session order between consecutive committed transactions (the initial
    /// transaction before the first of each session), and one write–read edge per pair of
    /// transactions (caused by the reader's first read from that writer).
    pub fn base(history: &History, external_writer: &[TxnId]) -> Result<CommitGraph, TooManyEdges> {
        let nodes = history.txn_count();
        let txns = history.txns();
        let mut edges = EdgeList::default();
        edges.edges.reserve(nodes + history.ops().len() / 2);
        for session in history.sessions() {
            let mut previous = INITIAL_TXN;
            for t in session.txns() {
                if txns[t as usize].is_committed() {
                    edges.push(previous, t, SESSION_ORDER);
                    previous = t;
                }
            }
        }
        let mut seen = vec![NONE; nodes];
        for (t, txn) in txns.iter().enumerate() {
            if !txn.is_committed() {
                continue;
            }
            for op in txn.ops() {
                let w = external_writer[op as usize];
                if w != NONE && seen[w as usize] != t as u32 {
                    seen[w as usize] = t as u32;
                    edges.push(w, t as TxnId, op);
                }
            }
        }
        Ok(CommitGraph {
            nodes,
            base: Csr::from_edges(nodes, edges)?,
            inferred: Csr::default(),
        })
    }

    /// Adds the edges an axiom inferred (replacing any earlier ones).
    pub fn set_inferred(&mut self, edges: EdgeList) -> Result<(), TooManyEdges> {
        self.inferred = Csr::from_edges(self.nodes, edges)?;
        Ok(())
    }

    /// Number of nodes (transactions).
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Number of so ∪ wr edges.
    pub fn base_edge_count(&self) -> usize {
        self.base.len()
    }

    /// Number of inferred edges.
    pub fn inferred_edge_count(&self) -> usize {
        self.inferred.len()
    }

    /// Out-degree of `v`: so ∪ wr edges only, or all edges.
    #[inline]
    pub fn degree(&self, v: TxnId, base_only: bool) -> usize {
        let b = self.base.range(v).len();
        if base_only {
            b
        } else {
            b + self.inferred.range(v).len()
        }
    }

    /// Target of the `i`-th out-edge of `v` (base edges first, then inferred ones).
    #[inline]
    pub fn target(&self, v: TxnId, i: usize) -> TxnId {
        let b = self.base.range(v);
        if i < b.len() {
            self.base.targets[b.start + i]
        } else {
            self.inferred.targets[self.inferred.range(v).start + i - b.len()]
        }
    }

    /// The `i`-th out-edge of `v` with its cause.
    pub fn edge(&self, v: TxnId, i: usize) -> Edge {
        let b = self.base.range(v);
        if i < b.len() {
            Edge {
                from: v,
                to: self.base.targets[b.start + i],
                cause: self.base.causes[b.start + i],
                inferred: false,
            }
        } else {
            let slot = self.inferred.range(v).start + i - b.len();
            Edge {
                from: v,
                to: self.inferred.targets[slot],
                cause: self.inferred.causes[slot],
                inferred: true,
            }
        }
    }

    /// The so ∪ wr out-edges of `v`: targets and causes.
    pub fn base_edges(&self, v: TxnId) -> (&[TxnId], &[OpId]) {
        let r = self.base.range(v);
        (&self.base.targets[r.clone()], &self.base.causes[r])
    }

    /// Kahn's algorithm: a topological order of all nodes (so ∪ wr only, or all edges).
    /// Returns the order and whether it is complete; when it is not, the nodes missing from
    /// it are exactly those on a cycle or reachable from one.
    pub fn topological_order(&self, base_only: bool) -> (Vec<TxnId>, bool) {
        let mut in_degree = vec![0u32; self.nodes];
        for &t in &self.base.targets {
            in_degree[t as usize] += 1;
        }
        if !base_only {
            for &t in &self.inferred.targets {
                in_degree[t as usize] += 1;
            }
        }
        let mut order: Vec<TxnId> = Vec::with_capacity(self.nodes);
        order.extend((0..self.nodes as TxnId).filter(|&v| in_degree[v as usize] == 0));
        let mut head = 0;
        while head < order.len() {
            let v = order[head];
            head += 1;
            let mut relax = |targets: &[TxnId]| {
                for &w in targets {
                    in_degree[w as usize] -= 1;
                    if in_degree[w as usize] == 0 {
                        order.push(w);
                    }
                }
            };
            relax(&self.base.targets[self.base.range(v)]);
            if !base_only {
                relax(&self.inferred.targets[self.inferred.range(v)]);
            }
        }
        let complete = order.len() == self.nodes;
        (order, complete)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::read_consistency;
    use crate::history::{HistoryBuilder, ReadFrom};

    #[test]
    fn exactly_u32_max_edges_fit_and_the_count_refused_is_exact() {
        // The offsets are u32 and the last one is the edge count: u32::MAX edges fit (the
        // bound used to refuse them), one more does not, and the error names that count.
        assert_eq!(edge_count(u32::MAX as usize), Ok(u32::MAX));
        let over = u32::MAX as usize + 1;
        assert_eq!(edge_count(over), Err(TooManyEdges(over)));
        assert_eq!(
            crate::check::CheckError::from(TooManyEdges(over)).to_string(),
            format!("history too large to check: the commit-order graph would have {over} edges")
        );
    }

    #[test]
    fn base_edges_and_order() {
        let mut b = HistoryBuilder::new("g");
        let x = b.key("x");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.write(t1, x, Some(1), 1);
        let ta = b.begin(s1, None);
        b.abort(ta);
        let t2 = b.begin(s1, None);
        b.read(t2, x, Some(1), ReadFrom::Value(1), 2);
        let t3 = b.begin(s2, None);
        b.read(t3, x, Some(1), ReadFrom::Value(1), 3);
        b.read(t3, x, Some(1), ReadFrom::Value(1), 4);
        let h = b.build().unwrap();
        let rc = read_consistency::check(&h, true);
        let g = CommitGraph::base(&h, &rc.external_writer).unwrap();
        // so: 0→1, 1→3 (skipping aborted 2), 0→4; wr: 1→3, 1→4 (once).
        assert_eq!(g.base_edge_count(), 5);
        let (targets, _) = g.base_edges(1);
        assert_eq!(targets, &[3, 3, 4]);
        let (order, complete) = g.topological_order(true);
        assert!(complete);
        assert_eq!(order[0], 0);
        let pos = |t: TxnId| order.iter().position(|&v| v == t).unwrap();
        assert!(pos(1) < pos(3) && pos(1) < pos(4));
    }

    #[test]
    fn kahn_reports_cycles() {
        let mut b = HistoryBuilder::new("g");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.read(t1, y, Some(1), ReadFrom::Value(1), 1);
        b.write(t1, x, Some(1), 2);
        let t2 = b.begin(s2, None);
        b.read(t2, x, Some(1), ReadFrom::Value(1), 3);
        b.write(t2, y, Some(1), 4);
        let h = b.build().unwrap();
        let rc = read_consistency::check(&h, true);
        let g = CommitGraph::base(&h, &rc.external_writer).unwrap();
        let (order, complete) = g.topological_order(true);
        assert!(!complete);
        assert_eq!(order, vec![0]);
    }
}
