//! Replaying a serialization of a search problem step by step: every prefix of a
//! serialization is a chain of valid extensions (Biswas & Enea, OOPSLA'19, Lemma 4.1 and the
//! converse direction of Theorem 4.2), so a node order is accepted iff each node heads its
//! chain, comes after its DAG predecessors and its writers, overwrites no key with a pending
//! reader other than itself, and (SI) opens no transaction while a conflicting one is open.
//! Used to confirm every witness an engine produces before it is reported.

use super::reduce::{Problem, Split, NO_NODE};

/// Checks `order`; the first problem in words.
pub(crate) fn verify_nodes(p: &Problem, order: &[u32]) -> Result<(), String> {
    let n = p.len();
    if order.len() != n {
        return Err(format!("{} nodes placed, {n} expected", order.len()));
    }
    let mut chain_of = vec![(0u32, 0u32); n];
    for (c, chain) in p.chains.iter().enumerate() {
        for (i, &v) in chain.iter().enumerate() {
            chain_of[v as usize] = (c as u32, i as u32);
        }
    }
    let mut pos = vec![0u32; p.chains.len()];
    let mut placed = vec![false; n];
    // Per key: the node that wrote it last (NO_NODE: initial) and its unplaced readers.
    let mut last = vec![NO_NODE; p.keys as usize];
    let mut pending = p.init_readers.clone();
    let mut open = vec![0u32; p.keys as usize];
    let mut indeg = p.indegree.clone();
    for &v in order {
        if v as usize >= n || placed[v as usize] {
            return Err(format!("node {v} is out of range or repeated"));
        }
        let (c, i) = chain_of[v as usize];
        if pos[c as usize] != i {
            return Err(format!("node {v} is placed out of session order"));
        }
        if indeg[v as usize] != 0 {
            return Err(format!("node {v} is placed before a forced predecessor"));
        }
        for (&x, &src) in p.reads(v).iter().zip(p.read_sources(v)) {
            if last[x as usize] != src {
                return Err(format!(
                    "node {v} reads key {x} but its writer is not the last"
                ));
            }
        }
        for &(x, _) in p.writes(v) {
            let own = p.reads(v).contains(&x) as u32;
            if pending[x as usize] != own {
                return Err(format!(
                    "node {v} overwrites key {x} before all its readers"
                ));
            }
        }
        if p.split == Split::Snapshot && p.is_read_half(v) {
            for &(x, _) in p.writes(v + 1) {
                if open[x as usize] != 0 {
                    return Err(format!("node {v} overlaps a concurrent writer of key {x}"));
                }
            }
        }
        for &x in p.reads(v) {
            pending[x as usize] -= 1;
        }
        for &(x, readers) in p.writes(v) {
            last[x as usize] = v;
            pending[x as usize] = readers;
        }
        if p.split == Split::Snapshot {
            let (keys, delta) = if p.is_read_half(v) {
                (p.writes(v + 1), 1i64)
            } else {
                (p.writes(v), -1)
            };
            for &(x, _) in keys {
                open[x as usize] = (open[x as usize] as i64 + delta) as u32;
            }
        }
        for &s in p.succ(v) {
            indeg[s as usize] -= 1;
        }
        placed[v as usize] = true;
        pos[c as usize] += 1;
    }
    Ok(())
}
