//! The SMT engine for SER, SI and PC: the search problem of [`super::reduce`] (a history, or
//! its read/write split h_R|W, Biswas & Enea OOPSLA'19 §4.2–4.3) as Z3 difference constraints,
//! in the form of [`super::smt`] (IsoPredict PLDI'24 §5 "Checking serializability").
//!
//! One integer position q(v) per node, the initial transaction at 0:
//! - chain order and the forced DAG edges: q(a) < q(b);
//! - a read of x by v from w, and every other writer u of x: q(v) < q(u) ∨ q(u) < q(w)
//!   (u is not between the writer and the reader; with the initial transaction as w, the
//!   second disjunct is false);
//! - SI: for two transactions t1 ≠ t2 that write a common key, W_t1 < R_t2 ∨ W_t2 < R_t1
//!   (the non-overlap rule of §3.4, one clause per unordered pair).
//!
//! Only the *residue* is encoded: a disjunction one of whose sides is already a forced edge
//! (session order, or an edge of the saturated DAG — the saturation adds exactly the ww and rw
//! edges that decide such clauses) holds in every solution of the DAG constraints and is left
//! out, and the size limit counts what is left (Biswas & Enea's search decides the rest; the
//! issue-23 "SMT for the hard residue, sized by what is left").
//!
//! Ties q(a) = q(b) are harmless (the arbitration's antecedent is q(u) ≤ q(v), every other
//! constraint is strict), so the witness is the nodes sorted by (q, id), re-checked by
//! [`super::verify::verify_nodes`] before it is trusted.

use std::time::Instant;

use z3::ast::{Bool, Int};
use z3::{Params, SatResult, Solver};

use super::reduce::{Problem, SearchResult, Split, NO_NODE};

/// The most constraints handed to Z3: its memory grows by roughly a kilobyte per clause, and
/// beyond this it would need several gigabytes (the search handles such histories).
pub(crate) const MAX_CONSTRAINTS: u64 = 1_000_000;

/// Decides `p` with Z3 until `deadline`; gives up at once on problems with more than
/// [`MAX_CONSTRAINTS`] constraints.
pub(crate) fn solve(p: &Problem, deadline: Option<Instant>) -> (SearchResult, String) {
    let residue = Residue::new(p);
    let count = residue.constraint_count();
    if count > MAX_CONSTRAINTS {
        return (
            SearchResult::GaveUp,
            format!(
                "too large for the SMT engine ({count} constraints left after the forced \
                 edges, at most {MAX_CONSTRAINTS})"
            ),
        );
    }
    let solver = Solver::new();
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now()).as_millis();
        if left == 0 {
            return (SearchResult::GaveUp, "time limit".to_string());
        }
        let mut params = Params::new();
        params.set_u32("timeout", left.clamp(1, u32::MAX as u128) as u32);
        solver.set_params(&params);
    }
    let n = p.len();
    let q: Vec<Int> = (0..n).map(|v| Int::new_const(format!("q{v}"))).collect();
    let zero = Int::from_i64(0);
    for chain in &p.chains {
        if let Some(&first) = chain.first() {
            solver.assert(zero.lt(&q[first as usize]));
        }
        for w in chain.windows(2) {
            solver.assert(q[w[0] as usize].lt(&q[w[1] as usize]));
        }
    }
    for v in 0..n as u32 {
        for &s in p.succ(v) {
            solver.assert(q[v as usize].lt(&q[s as usize]));
        }
    }
    residue.for_each(|clause| match clause {
        Clause::After { reader, writer } => {
            solver.assert(q[reader as usize].lt(&q[writer as usize]));
        }
        Clause::Outside {
            reader,
            writer,
            source,
        } => {
            let after_reader = q[reader as usize].lt(&q[writer as usize]);
            let before_source = q[writer as usize].lt(&q[source as usize]);
            solver.assert(Bool::or(&[after_reader, before_source]));
        }
        Clause::NoOverlap { first, second } => {
            // Write halves are the odd nodes; R_t = W_t - 1.
            let a_first = q[first as usize].lt(&q[second as usize - 1]);
            let b_first = q[second as usize].lt(&q[first as usize - 1]);
            solver.assert(Bool::or(&[a_first, b_first]));
        }
    });
    match crate::interrupt::check(&solver, |s| s.check()) {
        SatResult::Unsat => (SearchResult::Exhausted, String::new()),
        SatResult::Unknown => (
            SearchResult::GaveUp,
            solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".to_string()),
        ),
        SatResult::Sat => {
            let Some(model) = solver.get_model() else {
                return (SearchResult::GaveUp, "Z3 gave no model".to_string());
            };
            let mut keyed: Vec<(i64, u32)> = Vec::with_capacity(n);
            for v in 0..n as u32 {
                match model.eval(&q[v as usize], true).and_then(|x| x.as_i64()) {
                    Some(x) => keyed.push((x, v)),
                    None => return (SearchResult::GaveUp, "Z3 gave no position".to_string()),
                }
            }
            keyed.sort_unstable();
            (
                SearchResult::Found(keyed.into_iter().map(|(_, v)| v).collect()),
                String::new(),
            )
        }
    }
}

/// One constraint of the residue (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clause {
    /// `reader` reads the key from the initial transaction, which `writer` also writes:
    /// q(reader) < q(writer).
    After { reader: u32, writer: u32 },
    /// `reader` reads the key from `source`, which `writer` also writes:
    /// q(reader) < q(writer) ∨ q(writer) < q(source).
    Outside {
        reader: u32,
        writer: u32,
        source: u32,
    },
    /// SI: the write halves `first` < `second` write a common key; their transactions do not
    /// overlap.
    NoOverlap { first: u32, second: u32 },
}

/// The clauses of a problem that its forced edges leave undecided.
struct Residue<'a> {
    p: &'a Problem,
    /// (chain, index in it) of each node.
    chain_of: Vec<(u32, u32)>,
    /// Each node's DAG successors, sorted (CSR over `p.succ_offsets`), for [`Self::forced`].
    sorted_succ: Vec<u32>,
    /// Per key, its writer nodes.
    writers: Vec<Vec<u32>>,
}

impl<'a> Residue<'a> {
    fn new(p: &'a Problem) -> Residue<'a> {
        let n = p.len();
        let mut chain_of = vec![(0u32, 0u32); n];
        for (c, chain) in p.chains.iter().enumerate() {
            for (i, &v) in chain.iter().enumerate() {
                chain_of[v as usize] = (c as u32, i as u32);
            }
        }
        let mut sorted_succ = p.succ.clone();
        for v in 0..n {
            let range = p.succ_offsets[v] as usize..p.succ_offsets[v + 1] as usize;
            sorted_succ[range].sort_unstable();
        }
        let mut writers: Vec<Vec<u32>> = vec![Vec::new(); p.keys as usize];
        for v in 0..n as u32 {
            for &(x, _) in p.writes(v) {
                writers[x as usize].push(v);
            }
        }
        Residue {
            p,
            chain_of,
            sorted_succ,
            writers,
        }
    }

    /// Whether q(a) < q(b) holds in every solution of the chain and DAG constraints because
    /// one of them says so directly (session order, or a DAG edge a → b).
    fn forced(&self, a: u32, b: u32) -> bool {
        let (ca, ia) = self.chain_of[a as usize];
        let (cb, ib) = self.chain_of[b as usize];
        if ca == cb && ia < ib {
            return true;
        }
        let range =
            self.p.succ_offsets[a as usize] as usize..self.p.succ_offsets[a as usize + 1] as usize;
        self.sorted_succ[range].binary_search(&b).is_ok()
    }

    /// Calls `f` on every clause the forced edges leave undecided.
    fn for_each(&self, mut f: impl FnMut(Clause)) {
        let p = self.p;
        for v in 0..p.len() as u32 {
            for (&x, &w) in p.reads(v).iter().zip(p.read_sources(v)) {
                for &u in &self.writers[x as usize] {
                    if u == w || u == v || self.forced(v, u) {
                        continue;
                    }
                    if w == NO_NODE {
                        f(Clause::After {
                            reader: v,
                            writer: u,
                        });
                    } else if !self.forced(u, w) {
                        f(Clause::Outside {
                            reader: v,
                            writer: u,
                            source: w,
                        });
                    }
                }
            }
        }
        if p.split == Split::Snapshot {
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            for ws in &self.writers {
                for (i, &a) in ws.iter().enumerate() {
                    for &b in &ws[i + 1..] {
                        pairs.push((a.min(b), a.max(b)));
                    }
                }
            }
            pairs.sort_unstable();
            pairs.dedup();
            for (a, b) in pairs {
                if !self.forced(a, b - 1) && !self.forced(b, a - 1) {
                    f(Clause::NoOverlap {
                        first: a,
                        second: b,
                    });
                }
            }
        }
    }

    /// The constraints [`solve`] asserts: one per node (q > 0 for chain heads, chain order),
    /// one per DAG edge, and the undecided clauses.
    fn constraint_count(&self) -> u64 {
        let mut count = self.p.len() as u64 + self.p.succ.len() as u64;
        self.for_each(|_| count += 1);
        count
    }
}
