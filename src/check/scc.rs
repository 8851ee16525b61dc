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
    const UNVISITED: u32 = u32::MAX;
    let n = graph.nodes();
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<TxnId> = Vec::new();
    let mut call: Vec<(TxnId, usize)> = Vec::new();
    let mut counter = 0u32;
    let mut result = Components {
        component_of: vec![NONE; n],
        members: Vec::new(),
    };

    for root in 0..n as TxnId {
        if !scope[root as usize] || index[root as usize] != UNVISITED {
            continue;
        }
        index[root as usize] = counter;
        low[root as usize] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        call.push((root, 0));
        while let Some(&mut (v, ref mut next)) = call.last_mut() {
            if *next < graph.degree(v, base_only) {
                let w = graph.target(v, *next);
                *next += 1;
                if !scope[w as usize] {
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
                let top = stack.last().copied();
                if top == Some(v) {
                    stack.pop();
                    on_stack[v as usize] = false;
                    continue;
                }
                let id = result.members.len() as u32;
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    result.component_of[w as usize] = id;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                members.sort_unstable();
                result.members.push(members);
            }
        }
    }
    result
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
