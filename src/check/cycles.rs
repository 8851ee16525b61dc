//! Finding and explaining the cycles of a saturated commit-order graph (AWDIT PLDI'25 §3.4
//! "reporting", Lemma 3.2; Plume OOPSLA'24 §3.4–3.6 for the names).
//!
//! 1. Kahn's algorithm over all edges: if it orders every transaction, the graph is acyclic
//!    and that order is a witness commit order (Lemma 3.2). Otherwise only the transactions it
//!    could not order can lie on a cycle.
//! 2. Among those, the strongly connected components of so ∪ wr are causality cycles
//!    (CyclicCO, TAP g); each gets a shortest cycle, by BFS inside the component.
//! 3. Every other non-trivial component of the whole graph gets one cycle with the fewest
//!    inferred edges we can find: if some inferred edge t2 → t1 has t1 →(so ∪ wr)⁺ t2 (decided
//!    with vector clocks computed inside the component), the cycle is that edge plus a
//!    shortest so ∪ wr path back, and the instance is a CO pattern (h, k, m); otherwise a
//!    shortest cycle (BFS), whose instances are CM patterns (i, l, n). The cycle is named by
//!    its most specific instance and starts with it.
//!
//! Components containing a causality cycle are reported as CyclicCO only. The work spent per
//! component on exhaustive searches is bounded, so a huge component still gets a cycle quickly
//! (perhaps not the globally shortest one).

use rustc_hash::FxHashMap;

use super::anomaly::Anomaly;
use super::classify::{Classifier, Instance};
use super::graph::{is_known_ww, CommitGraph, Edge};
use super::read_consistency::NONE;
use super::scc::{components, Components};
use crate::history::{History, TxnId};

/// Bounds on the work spent explaining one component.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budgets {
    /// Most clock entries (transactions × sessions) computed to find a CO pattern.
    pub clock_entries: usize,
    /// Edge visits spent on shortest-cycle searches from further start nodes.
    pub bfs_edge_visits: usize,
    /// Candidate instances classified.
    pub candidates: usize,
}

impl Budgets {
    /// The bounds `check` uses.
    pub const DEFAULT: Budgets = Budgets {
        clock_entries: 1 << 24,
        bfs_edge_visits: 1 << 22,
        candidates: 256,
    };
}

/// A cycle, each inferred edge with the instance that inferred it.
#[derive(Debug, Clone)]
pub(crate) struct FoundCycle {
    pub anomaly: Anomaly,
    pub component_size: usize,
    pub edges: Vec<(Edge, Option<Instance>)>,
}

/// The outcome: a topological order when the graph is acyclic, the cycles otherwise.
#[derive(Debug)]
pub(crate) struct Analysis {
    pub order: Option<Vec<TxnId>>,
    pub cycles: Vec<FoundCycle>,
    /// All cycles found (one per component), including those beyond `max_cycles`.
    pub cycle_count: usize,
}

/// Analyses `graph`; reports at most `max_cycles` cycles.
pub(crate) fn analyze(
    history: &History,
    external_writer: &[TxnId],
    graph: &CommitGraph,
    max_cycles: usize,
    budgets: Budgets,
) -> Analysis {
    let (order, complete) = graph.topological_order(false);
    if complete {
        return Analysis {
            order: Some(order),
            cycles: Vec::new(),
            cycle_count: 0,
        };
    }
    let mut scope = vec![true; graph.nodes()];
    for &v in &order {
        scope[v as usize] = false;
    }
    drop(order);
    let mut search = Search::new(graph);
    let mut classifier = Classifier::new(history, external_writer);
    let mut cycles = Vec::new();
    let mut cycle_count = 0;

    let causal = components(graph, &scope, true);
    for (cid, members) in causal.members.iter().enumerate() {
        cycle_count += 1;
        if cycles.len() >= max_cycles {
            continue;
        }
        let cycle = search
            .shortest_cycle(&causal, cid as u32, true, budgets.bfs_edge_visits)
            .expect("a strongly connected component has a cycle");
        cycles.push(FoundCycle {
            anomaly: Anomaly::CyclicCo,
            component_size: members.len(),
            edges: cycle.into_iter().map(|e| (e, None)).collect(),
        });
    }

    let all = components(graph, &scope, false);
    for (cid, members) in all.members.iter().enumerate() {
        if members
            .iter()
            .any(|&v| causal.component_of[v as usize] != NONE)
        {
            continue;
        }
        cycle_count += 1;
        if cycles.len() >= max_cycles {
            continue;
        }
        cycles.push(explain_component(
            history,
            &mut classifier,
            &mut search,
            &all,
            cid as u32,
            budgets,
        ));
    }
    Analysis {
        order: None,
        cycles,
        cycle_count,
    }
}

/// One cycle for a component of the whole graph that holds no causality cycle.
fn explain_component(
    history: &History,
    classifier: &mut Classifier,
    search: &mut Search,
    comps: &Components,
    cid: u32,
    budgets: Budgets,
) -> FoundCycle {
    let graph = search.graph;
    let members = &comps.members[cid as usize];
    let reach = CausalReach::compute(
        history,
        graph,
        comps,
        cid,
        &mut search.local,
        budgets.clock_entries,
    );

    // A CO pattern: an inferred edge t2 → t1 with t1 →(so ∪ wr)⁺ t2.
    if let Some(reach) = &reach {
        let mut best: Option<(Edge, Instance)> = None;
        let mut classified = 0;
        'members: for &t2 in members {
            for i in graph.degree(t2, true)..graph.degree(t2, false) {
                let e = graph.edge(t2, i);
                if comps.component_of[e.to as usize] != cid
                    || !reach.reaches(e.to, t2)
                    || is_known_ww(e.cause)
                {
                    continue;
                }
                let instance = classifier.classify(t2, e.cause, true);
                let better = match &best {
                    None => true,
                    Some((_, b)) => instance.anomaly.specificity() < b.anomaly.specificity(),
                };
                if better {
                    best = Some((e, instance));
                }
                classified += 1;
                if instance.anomaly == Anomaly::NonMonoReadCo || classified >= budgets.candidates {
                    break 'members;
                }
            }
        }
        if let Some((e, instance)) = best {
            let path = search
                .path(comps, cid, e.to, e.from, true)
                .expect("t1 reaches t2 through so and wr");
            let mut edges = vec![(e, Some(instance))];
            edges.extend(path.into_iter().map(|e| (e, None)));
            return FoundCycle {
                anomaly: instance.anomaly,
                component_size: members.len(),
                edges,
            };
        }
    }

    // Otherwise a shortest cycle; its instances are CM patterns (unless the clocks were too
    // large to compute and the cycle happens to have a single inferred edge).
    let cycle = search
        .shortest_cycle(comps, cid, false, budgets.bfs_edge_visits)
        .expect("a strongly connected component has a cycle");
    let inferred = cycle
        .iter()
        .filter(|e| e.inferred && !is_known_ww(e.cause))
        .count();
    let mut edges: Vec<(Edge, Option<Instance>)> = cycle
        .into_iter()
        .map(|e| {
            let instance = (e.inferred && !is_known_ww(e.cause)).then(|| {
                let causal = match &reach {
                    Some(reach) => reach.reaches(e.to, e.from),
                    None => inferred == 1,
                };
                classifier.classify(e.from, e.cause, causal)
            });
            (e, instance)
        })
        .collect();
    let (start, anomaly) = edges
        .iter()
        .enumerate()
        .filter_map(|(i, (_, inst))| inst.map(|inst| (i, inst.anomaly)))
        .min_by_key(|&(i, a)| (a.specificity(), i))
        .unwrap_or((0, Anomaly::CyclicCo));
    edges.rotate_left(start);
    FoundCycle {
        anomaly,
        component_size: members.len(),
        edges,
    }
}

/// t1 →(so ∪ wr)⁺ t2 inside one component, by vector clocks over a topological order of the
/// component's so ∪ wr edges. A path between two members never leaves the component.
struct CausalReach {
    /// The members, ascending (a member's local index is its position).
    members: Vec<TxnId>,
    /// Each member's session, as an index into a clock.
    member_session: Vec<u32>,
    width: usize,
    /// Per member, per session: 1 + the latest transaction of the session reaching it.
    clocks: Vec<u32>,
}

impl CausalReach {
    fn compute(
        history: &History,
        graph: &CommitGraph,
        comps: &Components,
        cid: u32,
        local: &mut [u32],
        budget: usize,
    ) -> Option<CausalReach> {
        let members = &comps.members[cid as usize];
        let mut sessions: FxHashMap<u32, u32> = FxHashMap::default();
        let mut member_session = Vec::with_capacity(members.len());
        for (i, &v) in members.iter().enumerate() {
            let next = sessions.len() as u32;
            member_session.push(*sessions.entry(history.txn(v).session).or_insert(next));
            local[v as usize] = i as u32;
        }
        let width = sessions.len();
        if members.len().saturating_mul(width) > budget {
            return None;
        }
        let inside = |w: TxnId| comps.component_of[w as usize] == cid;
        let mut in_degree = vec![0u32; members.len()];
        for &v in members {
            for &w in graph.base_edges(v).0 {
                if inside(w) {
                    in_degree[local[w as usize] as usize] += 1;
                }
            }
        }
        let mut order: Vec<TxnId> = members
            .iter()
            .copied()
            .filter(|&v| in_degree[local[v as usize] as usize] == 0)
            .collect();
        let mut clocks = vec![0u32; members.len() * width];
        let mut head = 0;
        while head < order.len() {
            let v = order[head];
            head += 1;
            let lv = local[v as usize] as usize;
            let own = lv * width + member_session[lv] as usize;
            clocks[own] = clocks[own].max(v + 1);
            for &w in graph.base_edges(v).0 {
                if !inside(w) {
                    continue;
                }
                let lw = local[w as usize] as usize;
                for s in 0..width {
                    let c = clocks[lv * width + s];
                    let d = &mut clocks[lw * width + s];
                    *d = (*d).max(c);
                }
                in_degree[lw] -= 1;
                if in_degree[lw] == 0 {
                    order.push(w);
                }
            }
        }
        Some(CausalReach {
            members: members.clone(),
            member_session,
            width,
            clocks,
        })
    }

    /// Whether `a` →(so ∪ wr)⁺ `b` (both members, a ≠ b). Transaction ids grow along a
    /// session, so the latest transaction of a's session reaching b is at least a.
    fn reaches(&self, a: TxnId, b: TxnId) -> bool {
        if a == b {
            return false;
        }
        let (Ok(ia), Ok(ib)) = (
            self.members.binary_search(&a),
            self.members.binary_search(&b),
        ) else {
            return false;
        };
        self.clocks[ib * self.width + self.member_session[ia] as usize] > a
    }
}

/// Breadth-first searches inside one component, with scratch arrays reused across searches.
struct Search<'g> {
    graph: &'g CommitGraph,
    mark: Vec<u32>,
    parent: Vec<(TxnId, u32)>,
    local: Vec<u32>,
    epoch: u32,
    queue: Vec<TxnId>,
}

impl<'g> Search<'g> {
    fn new(graph: &'g CommitGraph) -> Self {
        let n = graph.nodes();
        Search {
            graph,
            mark: vec![0; n],
            parent: vec![(0, 0); n],
            local: vec![0; n],
            epoch: 0,
            queue: Vec::new(),
        }
    }

    /// A shortest path from `from` to `to` (or a shortest cycle when they are equal) inside
    /// component `cid`, of at most `limit` edges; also returns the number of edges visited.
    fn bfs(
        &mut self,
        comps: &Components,
        cid: u32,
        from: TxnId,
        to: TxnId,
        base_only: bool,
        limit: usize,
    ) -> (Option<Vec<Edge>>, usize) {
        self.epoch += 1;
        let epoch = self.epoch;
        self.queue.clear();
        self.queue.push(from);
        self.mark[from as usize] = epoch;
        let mut depth_end = 1;
        let mut depth = 0usize;
        let mut head = 0;
        let mut visited = 0usize;
        while head < self.queue.len() {
            if head == depth_end {
                depth += 1;
                depth_end = self.queue.len();
            }
            if depth + 1 > limit {
                break;
            }
            let u = self.queue[head];
            head += 1;
            for i in 0..self.graph.degree(u, base_only) {
                visited += 1;
                let w = self.graph.target(u, i);
                if comps.component_of[w as usize] != cid {
                    continue;
                }
                if w == to {
                    let mut path = vec![self.graph.edge(u, i)];
                    let mut v = u;
                    while v != from {
                        let (p, j) = self.parent[v as usize];
                        path.push(self.graph.edge(p, j as usize));
                        v = p;
                    }
                    path.reverse();
                    return (Some(path), visited);
                }
                if self.mark[w as usize] != epoch {
                    self.mark[w as usize] = epoch;
                    self.parent[w as usize] = (u, i as u32);
                    self.queue.push(w);
                }
            }
        }
        (None, visited)
    }

    /// A shortest path from `from` to `to` inside the component.
    fn path(
        &mut self,
        comps: &Components,
        cid: u32,
        from: TxnId,
        to: TxnId,
        base_only: bool,
    ) -> Option<Vec<Edge>> {
        self.bfs(comps, cid, from, to, base_only, usize::MAX).0
    }

    /// A shortest cycle in the component: BFS from each member in turn while the budget of
    /// edge visits lasts (at least one), keeping the shortest.
    fn shortest_cycle(
        &mut self,
        comps: &Components,
        cid: u32,
        base_only: bool,
        budget: usize,
    ) -> Option<Vec<Edge>> {
        let members = comps.members[cid as usize].clone();
        let mut best: Option<Vec<Edge>> = None;
        let mut spent = 0usize;
        for &start in &members {
            let limit = best.as_ref().map_or(usize::MAX, |b| b.len() - 1);
            let (found, visited) = self.bfs(comps, cid, start, start, base_only, limit);
            spent += visited;
            if let Some(cycle) = found {
                if best.as_ref().map_or(true, |b| cycle.len() < b.len()) {
                    best = Some(cycle);
                }
            }
            if best.as_ref().is_some_and(|b| b.len() <= 2) || (best.is_some() && spent >= budget) {
                break;
            }
        }
        best
    }
}
