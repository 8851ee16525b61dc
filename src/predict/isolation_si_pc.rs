//! Prefix consistency and snapshot isolation of the predicted history, in the paper-form
//! encoding (IsoPredict PLDI'24 §4.3 and appendix B.3 extended to Biswas & Enea OOPSLA'19
//! Table 1: PC = Prefix, SI = Prefix ∧ Conflict).
//!
//! Unlike causal consistency, read atomic and read committed, whose arbitration depends only on
//! `so ∪ wr` (so any linearisation of the forced commit-order edges is a witness), PC and SI
//! quantify over the commit order itself: `t2` must precede `t1` when `t2` is `co*`-before some
//! transaction `t3` sees. So the commit order is a variable of the encoding that exists
//! alongside the read choices. On a total order the axioms say that each transaction reads
//! every key from the last writer of its *snapshot*, a `co`-prefix that contains its session
//! predecessor and every transaction it reads from (Prefix) and, under SI, every earlier
//! transaction that writes a key it writes (Conflict: first committer wins). The encoding
//! gives each node an integer position `q` (t0 at 0) and each reading node an integer snapshot
//! cut `c` (its snapshot is every node with `q < c`):
//! - `q(pred(b)) < q(b)`; `wr(a,b) ⇒ q(a) < q(b)`;
//! - for a reading node `t3`: `q(pred(t3)) < c(t3) < q(t3)` and `wr(t4,t3) ⇒ q(t4) < c(t3)`;
//! - SI: `t3` and `t4` are in the prediction and write `y` `⇒ q(t3) < q(t4) ∨ q(t4) < c(t3)`;
//! - `wr_k(t1,t3) ∧ t2 is in the prediction and writes k ⇒ q(t2) < q(t1) ∨ c(t3) < q(t2)` for
//!   every other writer `t2 ∉ {t1, t3}` of `k` (t3 reads `k` from its snapshot's last writer).
//!
//! Every integer atom occurs positively and strictly, so a model's ties can be broken
//! arbitrarily and it still satisfies every constraint: a model is a total commit order with
//! its snapshots, and on total orders the constraints are exactly the axioms (the argument of
//! [`crate::ser::smt_si_pc`], which decides the same formula on a fixed history).
//!
//! Why not through the read/write split (Biswas & Enea §4.2–4.3: `h ⊨ PC ⟺ h_R|W` is
//! serializable, SI adds non-overlapping conflicting intervals)? Encoded in SMT, the split is
//! the same statement — `R_t`'s position is the snapshot cut, `W_t`'s the commit position —
//! with twice the transactions and the serializability arbitration over `R`/`W` pairs instead
//! of one clause per (read, other writer); the split pays off in the prefix *search*, which is
//! the exact checkers' business (docs/prediction.md).
//!
//! Both rules take each transaction's whole observed write set, also the writes a strict
//! boundary transaction makes after its boundary read: a transaction runs to its end (a
//! replay does), so under first committer wins it commits only if its whole write set
//! conflicts with no concurrent one, and a later transaction whose snapshot holds it sees its
//! last writes. The boundary transaction is assumed to write the same keys as observed. The
//! re-verification judges the level on the predicted history with those writes added
//! (`extract::build_with`); unserializability is judged on the predicted prefix itself.
//!
//! Pruned transactions (touching no key that matters) can always be committed right after
//! their session predecessor with the same snapshot, which breaks no axiom; under SI the keys
//! two transactions write matter too (`Space::with_write_conflicts`), since such a transaction
//! cannot commit inside a concurrent conflicting one.

use super::feasibility::Encoding;
use super::formula::{IntTerm, Lit, Name};
use crate::check::Level;

/// Encodes that the predicted history satisfies `level` (prefix consistency or snapshot
/// isolation).
pub(crate) fn encode(e: &mut Encoding, level: Level) {
    assert!(
        matches!(level, Level::Prefix | Level::Snapshot),
        "isolation_si_pc encodes pc and si, not {level}"
    );
    let space = e.space;
    let n = space.nodes();
    let mut q = vec![IntTerm::Const(0)];
    for a in 1..n as u32 {
        q.push(e.store.int_var(Name::new("si_q", &[a])));
    }
    // Snapshot cuts of the nodes that read a key that matters.
    let cut: Vec<Option<IntTerm>> = (0..n as u32)
        .map(|t| {
            (t != 0 && !space.node_units[t as usize].is_empty())
                .then(|| e.store.int_var(Name::new("si_c", &[t])))
        })
        .collect();
    let lt = |e: &mut Encoding, a: IntTerm, b: IntTerm| e.store.lt(a, b);

    // Session order and write–read order.
    for b in 1..n as u32 {
        let l = lt(e, q[space.node_pred[b as usize] as usize], q[b as usize]);
        e.store.clause(&[l]);
    }
    for a in 1..n as u32 {
        for b in 1..n as u32 {
            let wr = e.wr(a, b);
            if wr != Lit::FALSE {
                let l = lt(e, q[a as usize], q[b as usize]);
                e.store.implies(&[wr], l);
            }
        }
    }
    // Snapshots: after the session predecessor and every writer read, before the reader.
    for t3 in 1..n as u32 {
        let Some(c) = cut[t3 as usize] else { continue };
        let l = lt(e, q[space.node_pred[t3 as usize] as usize], c);
        e.store.clause(&[l]);
        let l = lt(e, c, q[t3 as usize]);
        e.store.clause(&[l]);
        for t4 in 1..n as u32 {
            let wr = e.wr(t4, t3);
            if wr != Lit::FALSE {
                let l = lt(e, q[t4 as usize], c);
                e.store.implies(&[wr], l);
            }
        }
    }
    // A node is in the prediction iff its session's boundary reaches its first event.
    let included: Vec<Lit> = (0..n)
        .map(|t| {
            if t == 0 {
                Lit::TRUE
            } else {
                e.ge(space.node_session[t], space.node_start[t])
            }
        })
        .collect();
    // Conflict: an earlier transaction writing a key t3 writes is in t3's snapshot.
    if level == Level::Snapshot {
        for writers in &space.key_writers {
            for w3 in writers {
                let t3 = w3.node;
                let Some(c) = cut.get(t3 as usize).copied().flatten() else {
                    continue;
                };
                for w4 in writers {
                    let t4 = w4.node;
                    if t4 == t3 || t4 == 0 || space.so(t3, t4) {
                        continue; // t0 is in every snapshot; a later t4 comes after t3
                    }
                    let after = lt(e, q[t3 as usize], q[t4 as usize]);
                    let inside = lt(e, q[t4 as usize], c);
                    let (in3, in4) = (included[t3 as usize], included[t4 as usize]);
                    e.store.clause(&[in3.not(), in4.not(), after, inside]);
                }
            }
        }
    }
    // Reads: no other writer of the key after the chosen one inside the snapshot.
    for (slot, groups) in space.key_groups.iter().enumerate() {
        for &g in groups {
            let t3 = space.groups[g as usize].node;
            let c = cut[t3 as usize].expect("a reading node has a snapshot cut");
            for idx in space.groups[g as usize].cands.clone() {
                let t1 = space.group_cands[idx as usize];
                let wrk = e.wrk[idx as usize];
                if wrk == Lit::FALSE {
                    continue;
                }
                for writer in &space.key_writers[slot] {
                    let t2 = writer.node;
                    if t2 == t1 || t2 == t3 || t2 == 0 || space.so(t3, t2) {
                        continue;
                    }
                    let before = if t1 == 0 {
                        Lit::FALSE
                    } else {
                        lt(e, q[t2 as usize], q[t1 as usize])
                    };
                    let outside = lt(e, c, q[t2 as usize]);
                    let inside = included[t2 as usize];
                    e.store.clause(&[wrk.not(), inside.not(), before, outside]);
                }
            }
        }
    }
}
