//! Strongly connected components: Tarjan's algorithm (SIAM J. Comput. 1972), iterative — an
//! explicit call stack of (node, next edge) replaces recursion, so graphs with millions of
//! transactions need no large thread stack (AWDIT PLDI'25 pitfall: its artifact recurses).

use super::graph::CommitGraph;
use super::read_consistency::NONE;
use crate::history::TxnId;

/// The non-trivial components (two or more nodes) found by [`components`].
#[derive(Debug, Default)]
pub(crate) struct Components {
    /// For each node, the index of its non-trivial component in `members`, or [`NONE`].
    pub component_of: Vec<u32>,
    /// The members of each non-trivial component, ascending.
    pub members: Vec<Vec<TxnId>>,
}

/// The strongly connected components of `graph` restricted to the nodes with `scope[v]`
/// (edges leaving the scope are ignored), over so ∪ wr only or over all edges. Only the
/// components with at least two nodes are returned (the graph has no self-loops), in the order
/// Tarjan completes them (reverse topological order of the condensation).
pub(crate) fn components(graph: &CommitGraph, scope: &[bool], base_only: bool) -> Components {
    let n = graph.nodes();
    let mut result = Components {
        component_of: vec![NONE; n],
        members: Vec::new(),
    };
    tarjan(
        n,
        |v| scope[v as usize],
        |v| graph.degree(v, base_only),
        |v, i| graph.target(v, i),
        |component| {
            if component.len() < 2 {
                return;
            }
            let id = result.members.len() as u32;
            let mut members = component.to_vec();
            for &w in &members {
                result.component_of[w as usize] = id;
            }
            members.sort_unstable();
            result.members.push(members);
        },
    );
    result
}

/// Tarjan's algorithm over the nodes `0..n` with `in_scope(v)` (edges to other nodes are
/// ignored; `degree(v)` edges leave `v`, the `i`-th to `target(v, i)`): calls `component` with
/// the members of every strongly connected component, one-node ones included, in the order
/// Tarjan completes them — reverse topological order of the condensation.
pub(crate) fn tarjan(
    n: usize,
    in_scope: impl Fn(TxnId) -> bool,
    degree: impl Fn(TxnId) -> usize,
    target: impl Fn(TxnId, usize) -> TxnId,
    mut component: impl FnMut(&[TxnId]),
) {
    const UNVISITED: u32 = u32::MAX;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<TxnId> = Vec::new();
    let mut call: Vec<(TxnId, usize)> = Vec::new();
    let mut counter = 0u32;
    for root in 0..n as TxnId {
        if !in_scope(root) || index[root as usize] != UNVISITED {
            continue;
        }
        index[root as usize] = counter;
        low[root as usize] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        call.push((root, 0));
        while let Some(&mut (v, ref mut next)) = call.last_mut() {
            if *next < degree(v) {
                let w = target(v, *next);
                *next += 1;
                if !in_scope(w) {
                    continue;
                }
                if index[w as usize] == UNVISITED {
                    index[w as usize] = counter;
                    low[w as usize] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                // v and everything above it on the stack.
                let from = stack
                    .iter()
                    .rposition(|&w| w == v)
                    .expect("v is on the stack");
                for &w in &stack[from..] {
                    on_stack[w as usize] = false;
                }
                component(&stack[from..]);
                stack.truncate(from);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::graph::EdgeList;
    use crate::check::read_consistency;
    use crate::history::HistoryBuilder;

    /// A history with `n` single-transaction sessions and no reads: the base graph is the
    /// star 0 → 1..n; inferred edges make the cycles.
    fn star(n: usize, inferred: &[(u32, u32)]) -> CommitGraph {
        let mut b = HistoryBuilder::new("scc");
        for _ in 0..n {
            let s = b.session(None);
            b.begin(s, None);
        }
        let h = b.build().unwrap();
        let rc = read_consistency::check(&h, false);
        let mut g = CommitGraph::base(&h, &rc.external_writer).unwrap();
        let mut edges = EdgeList::default();
        for &(a, c) in inferred {
            edges.push(a, c, 0);
        }
        g.set_inferred(edges).unwrap();
        g
    }

    #[test]
    fn finds_components() {
        let g = star(6, &[(1, 2), (2, 3), (3, 1), (4, 5), (5, 4), (6, 6 - 1)]);
        let scope = vec![true; g.nodes()];
        let c = components(&g, &scope, false);
        let mut members = c.members.clone();
        members.sort();
        assert_eq!(members, vec![vec![1, 2, 3], vec![4, 5]]);
        assert_eq!(c.component_of[6], NONE);
        assert_eq!(c.component_of[0], NONE);
        assert!(components(&g, &scope, true).members.is_empty());
    }

    #[test]
    fn deep_chain_does_not_overflow() {
        // One long cycle through 200,000 nodes: recursion would need a huge stack.
        let n = 200_000u32;
        let edges: Vec<(u32, u32)> = (1..=n)
            .map(|v| (v, if v == n { 1 } else { v + 1 }))
            .collect();
        let g = star(n as usize, &edges);
        let scope = vec![true; g.nodes()];
        let c = components(&g, &scope, false);
        assert_eq!(c.members.len(), 1);
        assert_eq!(c.members[0].len(), n as usize);
    }
}
