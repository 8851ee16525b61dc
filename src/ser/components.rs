//! Decomposition by the communication graph: Biswas & Enea (OOPSLA'19) §5, Theorem 5.2 — h
//! satisfies SER (SI, PC) iff its projection on every biconnected component of the
//! communication graph does, **with the initial transaction kept in every projection**
//! (notes/biswas-enea.md pitfall 2: dropping it hides lost updates on initial values).
//!
//! The communication graph has a vertex per session and one for the initial transaction, and
//! an edge between two vertices whose transactions access a common key. The initial
//! transaction writes every key, so it is adjacent to every session that accesses any key; a
//! connected graph plus a vertex adjacent to all of it is biconnected (removing the extra
//! vertex leaves it connected, removing any other leaves everything joined through the extra
//! one). So the biconnected components are exactly the connected components of the sessions
//! (via shared keys), each with the initial transaction: computed here by union–find over
//! transactions and keys, in O(operations · α).

use super::txns::{Txns, NONE};

/// The components: for each, its local transactions in ascending order (the initial
/// transaction is implicitly in all). Sessions whose transactions access no key at all each
/// form their own component. Components come in order of their first transaction. Member
/// lists, not masks over all transactions: a history of 10^6 one-transaction sessions has
/// ~10^4 components, and a mask each would be 10^10 bytes.
pub(crate) fn components(txns: &Txns) -> Vec<Vec<u32>> {
    let n = txns.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(parent: &mut [u32], mut v: u32) -> u32 {
        while parent[v as usize] != v {
            let p = parent[parent[v as usize] as usize];
            parent[v as usize] = p;
            v = p;
        }
        v
    }
    let union = |parent: &mut Vec<u32>, a: u32, b: u32| {
        let (ra, rb) = (find(parent, a), find(parent, b));
        if ra != rb {
            parent[ra.max(rb) as usize] = ra.min(rb);
        }
    };
    for c in &txns.chains {
        for w in c.windows(2) {
            union(&mut parent, w[0], w[1]);
        }
    }
    let mut key_owner = vec![NONE; txns.keys as usize];
    for t in 1..n as u32 {
        let keys = txns
            .reads(t)
            .iter()
            .map(|r| r.key)
            .chain(txns.writes(t).iter().map(|w| w.key));
        for x in keys {
            match key_owner[x as usize] {
                NONE => key_owner[x as usize] = t,
                o => union(&mut parent, o, t),
            }
        }
    }
    let mut index = vec![NONE; n];
    let mut members: Vec<Vec<u32>> = Vec::new();
    for t in 1..n as u32 {
        let r = find(&mut parent, t) as usize;
        if index[r] == NONE {
            index[r] = members.len() as u32;
            members.push(Vec::new());
        }
        members[index[r] as usize].push(t);
    }
    members
}
