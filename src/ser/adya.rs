//! Adya's phenomena of a small history (Adya, "Weak Consistency: A Generalized Theory and
//! Optimistic Implementations for Distributed Transactions", PhD thesis, MIT 1999, §3–4):
//! which of G0, G1c, G-single, G2 the history shows under *every* version order.
//!
//! Adya's direct serialization graph (DSG) is defined for a history *and a version order*
//! (per key, the order of the committed writes; the initial version first). With read/write
//! registers the version order is not observed, and a history exhibits a phenomenon when every
//! version order shows it (one version order free of it is a witness that the corresponding
//! PL level holds). Edges, for a version order: `ww` (Tj installs the version after Ti's),
//! `wr` (Tj reads Ti's version), `rw` (Tj installs the version after the one Ti read; an
//! anti-dependency), and session order (as Elle's process edges, so that a session's
//! transactions stay ordered). The phenomena, most severe first:
//! - **G0**: a cycle of `ww` edges only;
//! - **G1c**: a cycle of `ww`, `wr` (and session) edges, no anti-dependency;
//! - **G-single**: a cycle with exactly one anti-dependency (lost update, read skew);
//! - **G2**: a cycle with anti-dependencies, none with exactly one (write skew, long fork).
//!
//! The class of a version order is the most severe phenomenon its DSG shows; the class of the
//! history is the least severe among its version orders. Every version order is enumerated,
//! so this is for explanation cores (a handful of transactions), bounded by `max_orders`.
//! For histories that satisfy causal consistency G0 and G1c never come out (ordering every
//! key's writes by one causal order leaves no cycle without anti-dependencies).

use super::txns::Txns;
use crate::history::AnomalyId;

/// One of Adya's cycle phenomena, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phenomenon {
    /// A cycle of write–write edges.
    G0,
    /// A cycle of write–write and write–read (and session) edges.
    G1c,
    /// A cycle with exactly one anti-dependency.
    GSingle,
    /// A cycle with two or more anti-dependencies (and no version order gives one with one).
    G2,
}

impl Phenomenon {
    /// The phenomenon's row in the anomaly table.
    pub fn id(self) -> AnomalyId {
        match self {
            Phenomenon::G0 => AnomalyId::WriteCycle,
            Phenomenon::G1c => AnomalyId::CausalityCycle,
            Phenomenon::GSingle => AnomalyId::SingleAntiDependencyCycle,
            Phenomenon::G2 => AnomalyId::AntiDependencyCycle,
        }
    }

    /// Adya's name, from the anomaly table.
    pub fn name(self) -> &'static str {
        self.id()
            .row()
            .adya
            .expect("the rows of Adya's phenomena name them (tested)")
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dep {
    Ww,
    Wr,
    So,
    Rw,
}

/// The phenomenon `txns` shows under every version order; `None` when some version order
/// has an acyclic DSG (the history is serializable in Adya's sense) or when there are more
/// than `max_orders` version orders.
pub(crate) fn classify(txns: &Txns, max_orders: u64) -> Option<Phenomenon> {
    let n = txns.len();
    // Writers of each key (the initial transaction, 0, always first).
    let mut writers: Vec<Vec<u32>> = vec![Vec::new(); txns.keys as usize];
    for t in 1..n as u32 {
        for w in txns.writes(t) {
            writers[w.key as usize].push(t);
        }
    }
    let mut orders: u64 = 1;
    for ws in &writers {
        for i in 2..=ws.len() as u64 {
            orders = orders.checked_mul(i)?;
        }
        if orders > max_orders {
            return None;
        }
    }
    for ws in &mut writers {
        ws.sort_unstable();
    }
    let mut fixed: Vec<(u32, u32, Dep)> = Vec::new();
    for chain in &txns.chains {
        for w in chain.windows(2) {
            fixed.push((w[0], w[1], Dep::So));
        }
    }
    for t in 1..n as u32 {
        for r in txns.reads(t) {
            fixed.push((r.writer, t, Dep::Wr));
        }
    }
    let mut best: Option<Phenomenon> = None;
    let mut edges = Vec::new();
    loop {
        edges.clear();
        edges.extend_from_slice(&fixed);
        for (k, ws) in writers.iter().enumerate() {
            // Version order of key k: initial, then ws in its current permutation.
            let next_of = |w: u32| -> Option<u32> {
                if w == 0 {
                    ws.first().copied()
                } else {
                    let i = ws.iter().position(|&x| x == w)?;
                    ws.get(i + 1).copied()
                }
            };
            let mut prev = 0u32;
            for &w in ws {
                edges.push((prev, w, Dep::Ww));
                prev = w;
            }
            for t in 1..n as u32 {
                for r in txns.reads(t).iter().filter(|r| r.key as usize == k) {
                    if let Some(next) = next_of(r.writer) {
                        if next != t {
                            edges.push((t, next, Dep::Rw));
                        }
                    }
                }
            }
        }
        let class = worst_cycle(n, &edges)?; // an acyclic DSG: no phenomenon at all
        best = Some(best.map_or(class, |b: Phenomenon| b.max(class)));
        if best == Some(Phenomenon::G2) || !next_orders(&mut writers) {
            return best;
        }
    }
}

/// Steps every key's writer permutation (mixed radix); false after the last one.
fn next_orders(writers: &mut [Vec<u32>]) -> bool {
    for ws in writers.iter_mut() {
        if next_permutation(ws) {
            return true;
        }
        // This digit wrapped around (ws is sorted again); carry to the next key.
    }
    false
}

/// Lexicographic next permutation; on the last one, sorts and returns false.
fn next_permutation(v: &mut [u32]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        v.sort_unstable();
        return false;
    };
    let j = (i..v.len())
        .rev()
        .find(|&j| v[j] > v[i - 1])
        .expect("v[i] qualifies");
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// Whether `to` is reachable from `from` over the edges that `allowed` admits.
fn reaches(
    n: usize,
    edges: &[(u32, u32, Dep)],
    from: u32,
    to: u32,
    allowed: impl Fn(Dep) -> bool,
) -> bool {
    let mut seen = vec![false; n];
    let mut stack = vec![from];
    seen[from as usize] = true;
    while let Some(u) = stack.pop() {
        if u == to {
            return true;
        }
        for &(a, b, d) in edges {
            if a == u && allowed(d) && !seen[b as usize] {
                seen[b as usize] = true;
                stack.push(b);
            }
        }
    }
    false
}

/// The most severe phenomenon of one DSG; `None` when it is acyclic.
fn worst_cycle(n: usize, edges: &[(u32, u32, Dep)]) -> Option<Phenomenon> {
    let closes = |allowed: &dyn Fn(Dep) -> bool| {
        edges
            .iter()
            .any(|&(a, b, d)| allowed(d) && reaches(n, edges, b, a, allowed))
    };
    if closes(&|d| d == Dep::Ww) {
        return Some(Phenomenon::G0);
    }
    if closes(&|d| d != Dep::Rw) {
        return Some(Phenomenon::G1c);
    }
    // One anti-dependency closed by dependencies only.
    if edges
        .iter()
        .any(|&(a, b, d)| d == Dep::Rw && reaches(n, edges, b, a, |d| d != Dep::Rw))
    {
        return Some(Phenomenon::GSingle);
    }
    closes(&|_| true).then_some(Phenomenon::G2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::test_util::h;

    fn class(spec: &str) -> Option<Phenomenon> {
        classify(&Txns::from_history(&h(spec)), 10_000)
    }

    #[test]
    fn named_anomalies_have_their_adya_class() {
        assert_eq!(class("rx0 wx1 | rx0 wx2"), Some(Phenomenon::GSingle)); // lost update
        assert_eq!(class("rx0 wy1 | ry0 wx1"), Some(Phenomenon::G2)); // write skew
        assert_eq!(
            class("wx1 | wy1 | rx1 ry0 | ry1 rx0"), // long fork
            Some(Phenomenon::G2)
        );
        assert_eq!(
            class("wx1 wz1 | wz2 | rx1 rz2 | rz2 rx0"), // read skew
            Some(Phenomenon::GSingle)
        );
    }

    #[test]
    fn phenomena_take_adyas_names_from_the_table() {
        let names: Vec<&str> = [
            Phenomenon::G0,
            Phenomenon::G1c,
            Phenomenon::GSingle,
            Phenomenon::G2,
        ]
        .iter()
        .map(|p| p.name())
        .collect();
        assert_eq!(names, ["G0", "G1c", "G-single", "G2"]);
    }

    #[test]
    fn a_write_read_cycle_is_g1c() {
        // t1 reads t2's y and t2 reads t1's x (a causality cycle, Plume's TAP g).
        assert_eq!(class("ry1 wx1 | rx1 wy1"), Some(Phenomenon::G1c));
    }

    #[test]
    fn the_class_holds_under_every_version_order_so_never_g0_here() {
        // t3 reads t1's x and t2's y: the version order x: t2 < t1, y: t1 < t2 has a
        // write cycle (G0), but x: t1 < t2, y: t1 < t2 has only one with one
        // anti-dependency (t3 -rw-> t2 -wr-> t3).
        assert_eq!(
            class("wx1 wy1 | wx2 wy2 | rx1 ry2"),
            Some(Phenomenon::GSingle)
        );
    }

    #[test]
    fn serializable_histories_and_large_ones_have_no_class() {
        assert_eq!(class("wx1 / rx1 wy2 | ry2 wx3 / rx3"), None);
        // Two keys with 8 writers each: 8!² version orders, over the bound.
        let many = (1..=8)
            .map(|i| format!("wx{i} wy{i}"))
            .collect::<Vec<_>>()
            .join(" | ");
        assert_eq!(class(&many), None);
    }

    #[test]
    fn permutations_are_enumerated_once_each() {
        let mut v = vec![1, 2, 3, 4];
        let mut count = 1;
        while next_permutation(&mut v) {
            count += 1;
        }
        assert_eq!((count, v), (24, vec![1, 2, 3, 4]));
    }
}
