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
//! Ties q(a) = q(b) are harmless (the arbitration's antecedent is q(u) ≤ q(v), every other
//! constraint is strict), so the witness is the nodes sorted by (q, id), re-checked by
//! [`super::verify::verify_nodes`] before it is trusted.

use std::time::Instant;

use z3::ast::{Bool, Int};
use z3::{Params, SatResult, Solver};

use super::reduce::{Problem, Split, NO_NODE};
use super::search::SearchResult;

/// The most constraints handed to Z3: its memory grows by roughly a kilobyte per clause, and
/// beyond this it would need several gigabytes (the search handles such histories).
pub(crate) const MAX_CONSTRAINTS: u64 = 1_000_000;

/// Decides `p` with Z3 until `deadline`; gives up at once on problems with more than
/// [`MAX_CONSTRAINTS`] constraints.
pub(crate) fn solve(p: &Problem, deadline: Option<Instant>) -> (SearchResult, String) {
    let count = constraint_count(p);
    if count > MAX_CONSTRAINTS {
        return (
            SearchResult::GaveUp,
            format!(
                "too large for the SMT engine ({count} constraints, at most {MAX_CONSTRAINTS})"
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
    let mut chain_of = vec![(0u32, 0u32); n];
    for (c, chain) in p.chains.iter().enumerate() {
        if let Some(&first) = chain.first() {
            solver.assert(zero.lt(&q[first as usize]));
        }
        for (i, w) in chain.windows(2).enumerate() {
            solver.assert(q[w[0] as usize].lt(&q[w[1] as usize]));
            chain_of[w[1] as usize] = (c as u32, i as u32 + 1);
        }
        if let Some(&first) = chain.first() {
            chain_of[first as usize] = (c as u32, 0);
        }
    }
    for v in 0..n as u32 {
        for &s in p.succ(v) {
            solver.assert(q[v as usize].lt(&q[s as usize]));
        }
    }
    // Writers of each key.
    let mut writers: Vec<Vec<u32>> = vec![Vec::new(); p.keys as usize];
    for v in 0..n as u32 {
        for &(x, _) in p.writes(v) {
            writers[x as usize].push(v);
        }
    }
    let so_before = |a: u32, b: u32| {
        let (ca, ia) = chain_of[a as usize];
        let (cb, ib) = chain_of[b as usize];
        ca == cb && ia < ib
    };
    for v in 0..n as u32 {
        for (&x, &w) in p.reads(v).iter().zip(p.read_sources(v)) {
            for &u in &writers[x as usize] {
                if u == w || u == v || (w != NO_NODE && so_before(u, w)) || so_before(v, u) {
                    continue;
                }
                let after_reader = q[v as usize].lt(&q[u as usize]);
                if w == NO_NODE {
                    solver.assert(after_reader);
                } else {
                    let before_writer = q[u as usize].lt(&q[w as usize]);
                    solver.assert(Bool::or(&[after_reader, before_writer]));
                }
            }
        }
    }
    if p.split == Split::Snapshot {
        // Write halves are the odd nodes; R_t = W_t - 1.
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for ws in &writers {
            for (i, &a) in ws.iter().enumerate() {
                for &b in &ws[i + 1..] {
                    pairs.push((a.min(b), a.max(b)));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        for (a, b) in pairs {
            let a_first = q[a as usize].lt(&q[b as usize - 1]);
            let b_first = q[b as usize].lt(&q[a as usize - 1]);
            solver.assert(Bool::or(&[a_first, b_first]));
        }
    }
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

/// An upper bound on the constraints [`solve`] would assert, computed without building them.
fn constraint_count(p: &Problem) -> u64 {
    let n = p.len();
    let mut writers = vec![0u64; p.keys as usize];
    for v in 0..n as u32 {
        for &(x, _) in p.writes(v) {
            writers[x as usize] += 1;
        }
    }
    let mut count = n as u64 + p.succ.len() as u64;
    for v in 0..n as u32 {
        for &x in p.reads(v) {
            count += writers[x as usize];
        }
    }
    if p.split == Split::Snapshot {
        count += writers
            .iter()
            .map(|&w| w * w.saturating_sub(1) / 2)
            .sum::<u64>();
    }
    count
}
