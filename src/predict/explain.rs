//! Why a history is unserializable: a shortest cycle of the least `pco = (so ∪ wr ∪ ww ∪ rw)+`
//! of a concrete history (IsoPredict PLDI'24 §4.2.2, computed independently of the solver by
//! the one saturation, [`super::saturate::least_pco`]), and a proof of every edge on it.
//!
//! Every edge of `pco` is in every serial order (ww by the serializability axiom, rw by the
//! paper's appendix A), so a cycle proves that no serial order exists. The saturation starts
//! from session order and write–read order and adds `ww(t1,t2)` when some `t3` reads `k` from
//! `t2`, `t1 ∉ {t2,t3}` writes `k` and `t1` reaches `t3`, and `rw(t3,t1)` when `t3` reads `k`
//! from `t2`, `t1 ∉ {t2,t3}` writes `k` and `t2` reaches `t1`, round by round until nothing
//! changes. Each pair keeps the reason of the first round that relates it, so and wr before
//! derived edges.
//!
//! Every derived edge rests on a "reaches" premise. [`pco_proof`] justifies the premise of an
//! edge of round `r` by a shortest path of edges of rounds `< r`; the edges of those paths are
//! justified the same way in turn, so the proof is well founded: each fact rests only on facts
//! listed before it.

use std::collections::VecDeque;
use std::rc::Rc;

use super::saturate::{least_pco, RoundEdge};
pub use super::saturate::{EdgeReason, PcoEdge};
use super::CycleEdge;
use crate::history::{History, KeyId, TxnId, INITIAL_TXN};

/// A cycle of `pco` with a proof of each of its edges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcoProof {
    /// The cycle: edge `i` ends where edge `i + 1` starts, the last where the first starts.
    pub cycle: Vec<PcoEdge>,
    /// The edges the premises of derived edges go through; a fact's own premise refers only
    /// to facts before it.
    pub facts: Vec<PcoEdge>,
}

/// The least `pco` of the committed part of a history ([`least_pco`]), its edges indexed by
/// source.
struct Saturation {
    n: usize,
    /// Every edge with its reason and round, ascending by (from, to).
    edges: Vec<RoundEdge>,
    /// The edges leaving `a` are `edges[out_start[a]..out_start[a + 1]]`.
    out_start: Vec<u32>,
    /// Per transaction: on a cycle of `pco`.
    on_cycle: Vec<bool>,
    /// Per round `r` (once asked for): the successors of each transaction by the edges found
    /// before `r`, shared by every premise path of that round.
    successors: std::cell::RefCell<Vec<Option<Rc<Successors>>>>,
}

/// Per transaction, its successors.
type Successors = Vec<Vec<TxnId>>;

impl Saturation {
    fn of(h: &History) -> Saturation {
        let n = h.txn_count();
        let pco = least_pco(h);
        let mut out_start = vec![0u32; n + 1];
        for e in &pco.edges {
            out_start[e.from as usize + 1] += 1;
        }
        for i in 0..n {
            out_start[i + 1] += out_start[i];
        }
        Saturation {
            n,
            edges: pco.edges,
            out_start,
            on_cycle: pco.on_cycle,
            successors: Default::default(),
        }
    }

    /// Whether `pco` has a cycle.
    fn cyclic(&self) -> bool {
        self.on_cycle.iter().any(|&c| c)
    }

    /// The edges leaving `a`, ascending by target.
    fn out(&self, a: TxnId) -> &[RoundEdge] {
        &self.edges[self.out_start[a as usize] as usize..self.out_start[a as usize + 1] as usize]
    }

    /// The edges found before `round`, ascending by (from, to).
    fn edges_before(&self, round: u32) -> impl Iterator<Item = (TxnId, TxnId)> + '_ {
        self.edges
            .iter()
            .filter(move |e| e.round < round)
            .map(|e| (e.from, e.to))
    }

    fn edge(&self, a: TxnId, b: TxnId) -> (EdgeReason, u32) {
        let out = self.out(a);
        let e = &out[out
            .binary_search_by_key(&b, |e| e.to)
            .expect("an edge of pco")];
        (e.reason, e.round)
    }

    /// The successor lists of the edges found before `round` (built once per round: a
    /// proof asks for many paths of the same round).
    fn successors_before(&self, round: u32) -> Rc<Successors> {
        let mut cache = self.successors.borrow_mut();
        let r = round as usize; // an edge's round: at most the saturation's number of rounds
        if cache.len() <= r {
            cache.resize(r + 1, None);
        }
        cache[r]
            .get_or_insert_with(|| {
                let mut succ: Vec<Vec<TxnId>> = vec![Vec::new(); self.n];
                for (x, y) in self.edges_before(round) {
                    succ[x as usize].push(y);
                }
                Rc::new(succ)
            })
            .clone()
    }

    /// A shortest path `a ⇝ b` of edges found before `round` (as node list `a … b`).
    fn path_before(&self, a: TxnId, b: TxnId, round: u32) -> Vec<TxnId> {
        let succ = self.successors_before(round);
        let mut parent = vec![u32::MAX; self.n];
        let mut queue = VecDeque::from([a]);
        parent[a as usize] = a;
        while let Some(x) = queue.pop_front() {
            if x == b {
                break;
            }
            for &y in &succ[x as usize] {
                if parent[y as usize] == u32::MAX {
                    parent[y as usize] = x;
                    queue.push_back(y);
                }
            }
        }
        assert!(
            parent[b as usize] != u32::MAX,
            "a derived edge's premise holds in the round before it"
        );
        let mut path = vec![b];
        let mut x = b;
        while x != a {
            x = parent[x as usize];
            path.push(x);
        }
        path.reverse();
        path
    }
}

/// A shortest cycle of the least `pco` of the committed part of `h`, or `None` if `pco` is
/// acyclic (then `h` may still be unserializable: `pco` is a sufficient condition only). The
/// edges' premises index the facts of [`pco_proof`], which this drops.
pub fn pco_cycle(h: &History) -> Option<Vec<PcoEdge>> {
    pco_proof(h).map(|p| p.cycle)
}

/// A shortest cycle of the least `pco` of the committed part of `h` with a proof of each
/// edge, or `None` if `pco` is acyclic.
pub fn pco_proof(h: &History) -> Option<PcoProof> {
    let sat = Saturation::of(h);
    if !sat.cyclic() {
        return None;
    }
    // Prefer a cycle that avoids t0: its edges then explain themselves without the implicit
    // initial writes.
    let path = shortest_cycle(&sat, true).or_else(|| shortest_cycle(&sat, false))?;
    Some(proof_of(&sat, &path))
}

/// Most committed transactions (the initial one aside) for which [`pco_proof_covering`]
/// looks at every simple cycle.
pub const COVERING_MAX_TXNS: usize = 8;

/// A cycle of the least `pco` of a small history (an anomaly's minimal core) that tells its
/// whole story: among the simple cycles that avoid the initial state, one that goes through
/// (or, by its ww and rw edges, names) the most transactions, then with the fewest
/// session-order edges, then the fewest derived edges, then the shortest; with a proof of each edge. Above [`COVERING_MAX_TXNS`]
/// transactions, or when every cycle goes through the initial state, [`pco_proof`]'s
/// shortest cycle. `None` if `pco` is acyclic.
pub fn pco_proof_covering(h: &History) -> Option<PcoProof> {
    let sat = Saturation::of(h);
    if !sat.cyclic() {
        return None;
    }
    let path = if sat.n <= COVERING_MAX_TXNS + 1 {
        widest_cycle(&sat)
    } else {
        None
    };
    let path = path
        .or_else(|| shortest_cycle(&sat, true))
        .or_else(|| shortest_cycle(&sat, false))?;
    Some(proof_of(&sat, &path))
}

/// How [`widest_cycle`] ranks a cycle: (transactions named, -session-order edges, -derived
/// edges, -length); larger is better.
type CycleScore = (usize, isize, isize, isize);

/// The simple cycle (node list, not through t0) [`pco_proof_covering`] prefers, by depth-first
/// search from each cycle's smallest node.
fn widest_cycle(sat: &Saturation) -> Option<Vec<TxnId>> {
    let n = sat.n;
    let succ: Vec<Vec<TxnId>> = (0..n as TxnId)
        .map(|a| match a {
            INITIAL_TXN => Vec::new(),
            _ => sat
                .out(a)
                .iter()
                .filter(|e| e.to != INITIAL_TXN)
                .map(|e| e.to)
                .collect(),
        })
        .collect();
    // Score: (transactions named, -session-order edges, -derived edges, -length); larger is
    // better. Fewer session-order edges first: a cycle of dependencies (wr, ww, rw) is the
    // one the anomaly's name describes (Adya's; a write skew is rw, rw), where a cycle closed
    // by session order tells the same transactions less directly.
    let score = |path: &[TxnId]| -> CycleScore {
        let mut named: Vec<TxnId> = path.to_vec();
        let mut derived = 0;
        let mut session_order = 0;
        for i in 0..path.len() {
            let (a, b) = (path[i], path[(i + 1) % path.len()]);
            match sat.edge(a, b).0 {
                EdgeReason::So => session_order += 1,
                EdgeReason::Ww { reader, .. } => {
                    named.push(reader);
                    derived += 1;
                }
                EdgeReason::Rw { writer, .. } => {
                    named.push(writer);
                    derived += 1;
                }
                _ => {}
            }
        }
        named.retain(|&t| t != INITIAL_TXN);
        named.sort_unstable();
        named.dedup();
        (
            named.len(),
            -session_order,
            -derived,
            -(path.len() as isize),
        )
    };
    let mut best: Option<(Vec<TxnId>, CycleScore)> = None;
    for start in 1..n as TxnId {
        // Iterative DFS over simple paths from `start` through nodes > start.
        let mut path = vec![start];
        let mut next = vec![0usize];
        let mut on = vec![false; n];
        on[start as usize] = true;
        while let Some(&i) = next.last() {
            let depth = next.len() - 1;
            let a = path[depth];
            let Some(&b) = succ[a as usize].get(i) else {
                next.pop();
                on[a as usize] = false;
                path.pop();
                continue;
            };
            next[depth] += 1;
            if b == start {
                let sc = score(&path);
                if best.as_ref().map_or(true, |(_, s)| sc > *s) {
                    best = Some((path.clone(), sc));
                }
            } else if b > start && !on[b as usize] {
                on[b as usize] = true;
                path.push(b);
                next.push(0);
            }
        }
    }
    best.map(|(p, _)| p)
}

/// The proof of the cycle `path` (node list).
fn proof_of(sat: &Saturation, path: &[TxnId]) -> PcoProof {
    let mut facts: Vec<PcoEdge> = Vec::new();
    let mut fact_of: rustc_hash::FxHashMap<(TxnId, TxnId), usize> = Default::default();
    let cycle = (0..path.len())
        .map(|i| {
            let (a, b) = (path[i], path[(i + 1) % path.len()]);
            prove(sat, a, b, &mut facts, &mut fact_of)
        })
        .collect();
    PcoProof { cycle, facts }
}

/// The edge `a → b` with its premise proven: the facts its premise path goes through are
/// appended to `facts` (each after the facts its own premise uses). Iterative: a stack of
/// edges whose premise facts are still being proven.
fn prove(
    sat: &Saturation,
    a: TxnId,
    b: TxnId,
    facts: &mut Vec<PcoEdge>,
    fact_of: &mut rustc_hash::FxHashMap<(TxnId, TxnId), usize>,
) -> PcoEdge {
    let start = |x: TxnId, y: TxnId| {
        let (reason, round) = sat.edge(x, y);
        let mut e = PcoEdge {
            from: x,
            to: y,
            reason,
            premise: Vec::new(),
        };
        let path = match e.premise_ends() {
            Some((p, q)) => sat.path_before(p, q, round),
            None => Vec::new(),
        };
        let steps: Vec<(TxnId, TxnId)> = path.windows(2).map(|w| (w[0], w[1])).collect();
        e.premise.reserve(steps.len());
        (e, steps)
    };
    let mut stack = vec![start(a, b)];
    loop {
        let (edge, steps) = stack
            .last_mut()
            .expect("the stack holds the edge being proven");
        match steps.get(edge.premise.len()).copied() {
            Some(step) => match fact_of.get(&step) {
                Some(&i) => edge.premise.push(i),
                None => stack.push(start(step.0, step.1)),
            },
            None => {
                let (edge, _) = stack.pop().expect("non-empty");
                match stack.last_mut() {
                    None => return edge,
                    Some((parent, _)) => {
                        let i = facts.len();
                        fact_of.insert((edge.from, edge.to), i);
                        facts.push(edge);
                        parent.premise.push(i);
                    }
                }
            }
        }
    }
}

/// A proof of [`pco_proof`] in the terms of a prediction: observed transaction ids (`origin`
/// maps the predicted history's ids to them), labels by `label`, each edge's reason in words
/// with the chain behind its "precedes". Returns the cycle and the facts its premises use.
pub(crate) fn explain_proof(
    predicted: &History,
    origin: &[TxnId],
    label: &dyn Fn(TxnId) -> String,
    proof: &PcoProof,
) -> (Vec<CycleEdge>, Vec<CycleEdge>) {
    describe_edges(predicted, origin, label, &proof.cycle, Some(&proof.facts))
}

/// A `pco` cycle found without its proof (predicted executions too large for
/// [`pco_proof`]'s search), in the terms of [`explain_proof`]; each derived edge says that the
/// chain behind it is not shown.
pub(crate) fn explain_unproven(
    predicted: &History,
    origin: &[TxnId],
    label: &dyn Fn(TxnId) -> String,
    cycle: &[PcoEdge],
) -> Vec<CycleEdge> {
    describe_edges(predicted, origin, label, cycle, None).0
}

/// The cycle and facts in words; `facts` is `None` when the edges come without a proof.
fn describe_edges(
    predicted: &History,
    origin: &[TxnId],
    label: &dyn Fn(TxnId) -> String,
    cycle: &[PcoEdge],
    facts: Option<&[PcoEdge]>,
) -> (Vec<CycleEdge>, Vec<CycleEdge>) {
    let edge = |e: &PcoEdge| -> CycleEdge {
        let (from, to) = (origin[e.from as usize], origin[e.to as usize]);
        let key = |k: KeyId| crate::printable::printable(predicted.key_name(k)).into_owned();
        let premise = || match facts {
            Some(facts) => premise_text(facts, e, origin, label),
            None => "the chain behind this ordering is not shown (the predicted execution is \
                     too large to prove every edge; the prediction itself was re-verified)"
                .to_string(),
        };
        let (kind, key_name, via, reason) = match e.reason {
            EdgeReason::So if from == INITIAL_TXN => (
                "so",
                None,
                None,
                format!(
                    "the initial state precedes every transaction ({})",
                    label(to)
                ),
            ),
            EdgeReason::So => (
                "so",
                None,
                None,
                format!("{} precedes {} in their session", label(from), label(to)),
            ),
            EdgeReason::Wr { key: k } => (
                "wr",
                Some(key(k)),
                None,
                format!("{} reads {} from {}", label(to), key(k), label(from)),
            ),
            EdgeReason::Ww { key: k, reader } if to == INITIAL_TXN => {
                let reader = origin[reader as usize];
                (
                    "ww",
                    Some(key(k)),
                    Some(reader),
                    format!(
                        "{} reads {} from the initial state, yet {} (which also writes {}) \
                         precedes {} ({}): {} would have to come before the initial state, \
                         which is impossible",
                        label(reader),
                        key(k),
                        label(from),
                        key(k),
                        label(reader),
                        premise(),
                        label(from)
                    ),
                )
            }
            EdgeReason::Rw { key: k, writer } if to == INITIAL_TXN => {
                let writer = origin[writer as usize];
                (
                    "rw",
                    Some(key(k)),
                    Some(writer),
                    format!(
                        "{} reads {} from {}, which would then have to come before the \
                         initial state ({}), which is impossible",
                        label(from),
                        key(k),
                        label(writer),
                        premise()
                    ),
                )
            }
            EdgeReason::Ww { key: k, reader } => {
                let reader = origin[reader as usize];
                (
                    "ww",
                    Some(key(k)),
                    Some(reader),
                    format!(
                        "{} reads {} from {}, and {} (which also writes {}) precedes {}: {}",
                        label(reader),
                        key(k),
                        label(to),
                        label(from),
                        key(k),
                        label(reader),
                        premise()
                    ),
                )
            }
            EdgeReason::Rw { key: k, writer } => {
                let writer = origin[writer as usize];
                (
                    "rw",
                    Some(key(k)),
                    Some(writer),
                    format!(
                        "{} reads {} from {}, which precedes {} (which also writes {}): {}",
                        label(from),
                        key(k),
                        label(writer),
                        label(to),
                        key(k),
                        premise()
                    ),
                )
            }
        };
        CycleEdge {
            from,
            from_label: label(from),
            to,
            to_label: label(to),
            kind,
            key: key_name,
            reason,
            via,
            premise: e.premise.clone(),
            number: None,
        }
    };
    let facts = facts.unwrap_or_default();
    let numbered = facts
        .iter()
        .enumerate()
        .map(|(i, f)| CycleEdge {
            number: (!matches!(f.reason, EdgeReason::So)).then(|| fact_number(facts, i)),
            ..edge(f)
        })
        .collect();
    (cycle.iter().map(edge).collect(), numbered)
}

/// The short name of an edge kind.
fn kind_of(r: EdgeReason) -> &'static str {
    match r {
        EdgeReason::So => "so",
        EdgeReason::Wr { .. } => "wr",
        EdgeReason::Ww { .. } => "ww",
        EdgeReason::Rw { .. } => "rw",
    }
}

/// The number views give fact `i` of `facts`: session-order facts are self-evident and never
/// cited or listed, so the others are numbered from 1 among themselves (a list never shows
/// "fact 2" without a fact 1).
pub fn fact_number(facts: &[PcoEdge], i: usize) -> usize {
    facts[..=i]
        .iter()
        .filter(|f| !matches!(f.reason, EdgeReason::So))
        .count()
}

/// The chain behind a derived edge's "precedes", in words: `A →so B →rw C (fact 2)`, facts
/// numbered by [`fact_number`]; a single so or wr step says why directly.
fn premise_text(
    facts: &[PcoEdge],
    e: &PcoEdge,
    origin: &[TxnId],
    label: &dyn Fn(TxnId) -> String,
) -> String {
    let name = |t: TxnId| label(origin[t as usize]);
    if let [i] = e.premise[..] {
        let f = &facts[i];
        match f.reason {
            EdgeReason::So if f.from == INITIAL_TXN => {
                return "the initial state precedes every transaction".to_string()
            }
            EdgeReason::So => {
                return format!("{} comes first in their session", name(f.from));
            }
            _ => {}
        }
    }
    let mut out = String::from("by ");
    for (n, &i) in e.premise.iter().enumerate() {
        let f = &facts[i];
        if n == 0 {
            out.push_str(&name(f.from));
        }
        out.push_str(&format!(" →{} {}", kind_of(f.reason), name(f.to)));
        if !matches!(f.reason, EdgeReason::So) {
            out.push_str(&format!(" (fact {})", fact_number(facts, i)));
        }
    }
    out
}

/// A shortest cycle (as node list) by breadth-first search from every node
/// (`avoid_initial`: not through t0).
fn shortest_cycle(sat: &Saturation, avoid_initial: bool) -> Option<Vec<TxnId>> {
    let n = sat.n;
    let mut succ: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    for (a, b) in sat.edges_before(u32::MAX) {
        if !(avoid_initial && (a == INITIAL_TXN || b == INITIAL_TXN)) {
            succ[a as usize].push(b);
        }
    }
    let mut best: Option<Vec<TxnId>> = None;
    let mut parent = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    for start in 0..n as TxnId {
        if !sat.on_cycle[start as usize] {
            continue;
        }
        parent.iter_mut().for_each(|p| *p = u32::MAX);
        queue.clear();
        queue.push_back(start);
        let mut closing = None;
        'bfs: while let Some(a) = queue.pop_front() {
            for &b in &succ[a as usize] {
                if b == start {
                    closing = Some(a);
                    break 'bfs;
                }
                if parent[b as usize] == u32::MAX {
                    parent[b as usize] = a;
                    queue.push_back(b);
                }
            }
        }
        if let Some(last) = closing {
            let mut path = vec![last];
            let mut x = last;
            while x != start {
                x = parent[x as usize];
                path.push(x);
            }
            path.reverse(); // start … last
            if best.as_ref().map_or(true, |b| path.len() < b.len()) {
                best = Some(path);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

    #[test]
    fn lost_update_cycle_goes_through_rw() {
        let mut b = HistoryBuilder::new("lost update");
        let acct = b.key("acct");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.read(t1, acct, None, ReadFrom::Initial, 0);
        b.write(t1, acct, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, acct, None, ReadFrom::Initial, 0);
        b.write(t2, acct, None, 0);
        let h = b.build().unwrap();
        let cycle = pco_cycle(&h).expect("a cycle");
        assert_eq!(cycle.len(), 2);
        for e in &cycle {
            assert!(matches!(e.reason, EdgeReason::Rw { writer: 0, .. }));
        }
    }

    #[test]
    fn an_edge_into_the_initial_state_is_a_contradiction_not_a_fact() {
        // t2 reads x from t1 and then from the initial state: t1 →wr t2 and t1 →ww t0
        // (t1 precedes t2, which reads the initial x after t1's write).
        let mut b = HistoryBuilder::new("non-repeatable");
        let x = b.key("x");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.write(t1, x, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Txn(t1), 0);
        b.read(t2, x, None, ReadFrom::Initial, 0);
        let h = b.build().unwrap();
        let sat = Saturation::of(&h);
        let e = prove(
            &sat,
            1,
            INITIAL_TXN,
            &mut Vec::new(),
            &mut Default::default(),
        );
        let label = |t: TxnId| h.txn_label(t);
        let origin: Vec<TxnId> = (0..h.txn_count() as TxnId).collect();
        let (words, _) = describe_edges(&h, &origin, &label, &[e], None);
        let reason = &words[0].reason;
        assert!(
            reason
                .contains("T1.1 would have to come before the initial state, which is impossible"),
            "{reason}"
        );
        assert!(!reason.contains("precedes initial state"), "{reason}");
    }

    #[test]
    fn the_covering_cycle_tells_the_read_only_anomaly_through_all_its_transactions() {
        // Fekete et al.'s read-only anomaly: a (TransactSavings) writes s; b (Balance) reads s
        // from a and c from the initial state; c (WriteCheck) reads s from the initial state
        // and writes c. Cycle b →rw c →rw a →wr b: three transactions.
        let mut b = HistoryBuilder::new("read-only");
        let s_ = b.key("s");
        let c_ = b.key("c");
        let sa = b.session(None);
        let sb = b.session(None);
        let sc = b.session(None);
        let a = b.begin(sa, None);
        b.read(a, s_, None, ReadFrom::Initial, 0);
        b.write(a, s_, None, 0);
        let bal = b.begin(sb, None);
        b.read(bal, s_, None, ReadFrom::Txn(a), 0);
        b.read(bal, c_, None, ReadFrom::Initial, 0);
        let wc = b.begin(sc, None);
        b.read(wc, s_, None, ReadFrom::Initial, 0);
        b.read(wc, c_, None, ReadFrom::Initial, 0);
        b.write(wc, c_, None, 0);
        let h = b.build().unwrap();
        let proof = pco_proof_covering(&h).expect("a cycle");
        let mut on: Vec<TxnId> = proof.cycle.iter().map(|e| e.from).collect();
        on.sort_unstable();
        assert_eq!(on, vec![1, 2, 3]);
    }

    #[test]
    fn serial_history_has_no_cycle() {
        let mut b = HistoryBuilder::new("serial");
        let acct = b.key("acct");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.read(t1, acct, None, ReadFrom::Initial, 0);
        b.write(t1, acct, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, acct, None, ReadFrom::Txn(t1), 0);
        b.write(t2, acct, None, 0);
        let h = b.build().unwrap();
        assert_eq!(pco_cycle(&h), None);
    }

    #[test]
    fn write_skew_cycle_with_ww() {
        // t1: w(x) w(y); t2: r(x) from t1, w(x); t3 (session 3): r(x) from t1 ... a ww cycle:
        // t2 reads y from t0 while t1 writes y → rw(t2, t1); t2 reads x from t1 → wr(t1, t2).
        let mut b = HistoryBuilder::new("rw+wr");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.write(t1, x, None, 0);
        b.write(t1, y, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Txn(t1), 0);
        b.read(t2, y, None, ReadFrom::Initial, 0);
        let h = b.build().unwrap();
        let cycle = pco_cycle(&h).expect("fractured read is a cycle");
        assert_eq!(cycle.len(), 2);
        assert!(cycle
            .iter()
            .any(|e| matches!(e.reason, EdgeReason::Wr { key } if key == x)));
        assert!(cycle
            .iter()
            .any(|e| matches!(e.reason, EdgeReason::Rw { key, writer: 0 } if key == y)));
    }
}
