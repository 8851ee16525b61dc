//! Re-planning when the workload's code takes another path. A schedule fixes the writer of
//! the reads the anomaly needs; every other read of the run is *free*: it takes what the
//! database gives at its place in the order. When a free read sees another write than in
//! the plan, the application may then run other statements (a balance too low to pay, a
//! doctor already off call), and the schedule, which lists the planned statements, no
//! longer fits.
//!
//! Re-planning constrains those reads: the free reads that saw another writer, in the
//! transaction that took another path and the earlier transactions of its session (before
//! the first statement that differs), are added to the reads the schedule must give their
//! planned writers, and the run is scheduled and executed again — at most [`MAX_REPLANS`]
//! times. Sound by construction: a reproduction is only claimed from an execution that ran
//! its schedule exactly, statement for statement; re-planning only changes which schedule
//! runs. When no schedule gives those reads their writers too, or the path changed although
//! every read before it saw its planned writer (a writer computed another value), the
//! reproduction says exactly that.

use rustc_hash::FxHashSet;

use crate::history::{History, OpId, OpKind, TxnId, INITIAL_TXN};

/// Re-plans tried before a reproduction gives up.
pub const MAX_REPLANS: usize = 4;

/// Where a recorded run left its plan: the planned transaction whose statements differ
/// first, and the free reads before that point that saw another writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    /// The transaction (plan label).
    pub txn: String,
    /// What differed, in words.
    pub what: String,
    /// Free reads of the plan that saw another writer, with a description each.
    pub reads: Vec<(OpId, String)>,
}

/// The recorded transaction at each planned transaction's place (session, index).
fn at_place(recorded: &History, plan: &History, t: TxnId) -> Option<TxnId> {
    let tx = plan.txn(t);
    let s = recorded.sessions().get(tx.session as usize)?;
    let r = s.txns().nth(tx.index_in_session as usize)?;
    Some(r)
}

/// Whether `recorded`'s transaction `r` ran other statements than `plan`'s `t`: another
/// multiset of (kind, key) operations (a scan may list rows in another order: PostgreSQL
/// returns a table's rows in the order they sit in its heap, which updates change), or
/// fewer of them; `Some(i)` with the first index at which the sequences differ.
fn first_difference(plan: &History, t: TxnId, recorded: &History, r: TxnId) -> Option<u32> {
    let ops = |h: &History, t: TxnId| -> Vec<(bool, String)> {
        h.txn(t)
            .ops()
            .map(|o| {
                (
                    h.op(o).kind == OpKind::Write,
                    h.key_name(h.op(o).key).to_string(),
                )
            })
            .collect()
    };
    let (p, q) = (ops(plan, t), ops(recorded, r));
    let compare = if plan.txn(t).is_committed() {
        q.len()
    } else {
        // An aborted planned transaction stops where the observed run's did.
        p.len().min(q.len())
    };
    let (mut ps, mut qs) = (p.clone(), q[..compare].to_vec());
    ps.sort();
    qs.sort();
    if ps == qs {
        return None;
    }
    let at = p
        .iter()
        .zip(&q)
        .position(|(a, b)| a != b)
        .unwrap_or(p.len().min(q.len()));
    Some(at as u32)
}

/// Per key name, the writers (labels) of `h`'s transaction `t`'s reads of it, in order.
fn reads_by_key(h: &History, t: TxnId) -> rustc_hash::FxHashMap<String, Vec<String>> {
    let mut out: rustc_hash::FxHashMap<String, Vec<String>> = Default::default();
    for o in h.txn(t).ops() {
        let op = h.op(o);
        if op.kind == OpKind::Read {
            out.entry(h.key_name(op.key).to_string())
                .or_default()
                .push(h.txn_label(h.writer_txn(o).unwrap_or(INITIAL_TXN)));
        }
    }
    out
}

/// Where `recorded` (the executed run, keys named as in `plan`) left `plan`: the diverged
/// session's transaction `hint` (from the statement gate) or else the first planned
/// committed transaction whose statements differ. `None` when it followed the plan.
pub fn path_change(
    plan: &History,
    recorded: &History,
    needed: &FxHashSet<OpId>,
    hint: Option<(usize, usize)>,
) -> Option<PathChange> {
    let planned: Vec<TxnId> = (1..plan.txn_count() as TxnId).collect();
    let mut found: Option<(TxnId, u32)> = None;
    if let Some((s, i)) = hint {
        if let Some(t) = planned.iter().copied().find(|&t| {
            plan.txn(t).session as usize == s && plan.txn(t).index_in_session as usize == i
        }) {
            let at = at_place(recorded, plan, t)
                .and_then(|r| first_difference(plan, t, recorded, r))
                .unwrap_or(0);
            found = Some((t, at));
        }
    }
    if found.is_none() {
        for &t in &planned {
            let Some(r) = at_place(recorded, plan, t) else {
                continue;
            };
            if !recorded.txn(r).is_committed() && plan.txn(t).is_committed() {
                // Aborted by the database: a failure, reported as such.
                continue;
            }
            if let Some(at) = first_difference(plan, t, recorded, r) {
                found = Some((t, at));
                break;
            }
        }
    }
    let (t, at) = found?;
    let tx = plan.txn(t);
    let mut reads = Vec::new();
    let session = &plan.sessions()[tx.session as usize];
    for u in session.txns().take(tx.index_in_session as usize + 1) {
        let Some(r) = at_place(recorded, plan, u) else {
            continue;
        };
        // An aborted planned transaction counts too: when it sees other writes than in the
        // observed run, its code may go on to commit, the gate rolls it back, and the
        // workload retries the call in the next transaction's place.
        let pu = plan.txn(u);
        // Reads matched by key and occurrence (a scan's rows may come in another order).
        let got = reads_by_key(recorded, r);
        let mut seen: rustc_hash::FxHashMap<&str, usize> = Default::default();
        for po_id in pu.ops() {
            let po = plan.op(po_id);
            if po.kind != OpKind::Read {
                continue;
            }
            let key = plan.key_name(po.key);
            let n = seen.entry(key).or_insert(0);
            let nth = *n;
            *n += 1;
            if needed.contains(&po_id) || plan.is_internal_read(po_id) {
                continue;
            }
            let Some(got) = got.get(key).and_then(|w| w.get(nth)) else {
                continue;
            };
            let want = plan.txn_label(plan.writer_txn(po_id).unwrap_or(INITIAL_TXN));
            if &want != got {
                reads.push((
                    po_id,
                    format!(
                        "{}'s read of {key} saw {got}'s write instead of {want}'s",
                        plan.txn_label(u)
                    ),
                ));
            }
        }
    }
    Some(PathChange {
        txn: plan.txn_label(t),
        what: format!(
            "{} ran other statements than planned from its operation {}",
            plan.txn_label(t),
            at + 1
        ),
        reads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

    /// Session 1 writes x; session 2 reads x and then writes `then` (a key name); when
    /// `sees_write` is false its read of x sees the initial state instead.
    fn run(sees_write: bool, then: &str, scan_order: &[&str]) -> History {
        let mut b = HistoryBuilder::new("replan");
        let x = b.key("x");
        let s1 = b.session(Some(1));
        let s2 = b.session(Some(2));
        let t1 = b.begin(s1, None);
        b.write(t1, x, None, 0);
        let t2 = b.begin(s2, None);
        let from = if sees_write {
            ReadFrom::Txn(t1)
        } else {
            ReadFrom::Initial
        };
        b.read(t2, x, None, from, 0);
        for k in scan_order {
            let k = b.key(k);
            b.read(t2, k, None, ReadFrom::Initial, 0);
        }
        let next = b.key(then);
        b.write(t2, next, None, 0);
        b.build().unwrap()
    }

    #[test]
    fn a_run_that_followed_its_plan_has_no_path_change() {
        let plan = run(true, "y", &["a", "b"]);
        assert_eq!(path_change(&plan, &plan, &FxHashSet::default(), None), None);
        // A scan that returned its rows in another order ran the same statements.
        let recorded = run(true, "y", &["b", "a"]);
        assert_eq!(
            path_change(&plan, &recorded, &FxHashSet::default(), None),
            None
        );
    }

    #[test]
    fn another_path_names_the_transaction_and_the_free_read_that_saw_another_writer() {
        let plan = run(true, "y", &[]);
        let recorded = run(false, "z", &[]);
        let change = path_change(&plan, &recorded, &FxHashSet::default(), None).unwrap();
        assert_eq!(change.txn, "T2.1");
        assert_eq!(
            change.what,
            "T2.1 ran other statements than planned from its operation 2"
        );
        assert_eq!(change.reads.len(), 1);
        let read_of_x = plan.txn(2).ops().next().unwrap();
        assert_eq!(change.reads[0].0, read_of_x);
        assert_eq!(
            change.reads[0].1,
            "T2.1's read of x saw initial state's write instead of T1.1's"
        );
        // The statement gate's hint (session 1, transaction 0) names the same place.
        assert_eq!(
            path_change(&plan, &recorded, &FxHashSet::default(), Some((1, 0))),
            Some(change)
        );
    }

    #[test]
    fn reads_the_schedule_already_steers_are_not_re_planned() {
        let plan = run(true, "y", &[]);
        let recorded = run(false, "z", &[]);
        let read_of_x = plan.txn(2).ops().next().unwrap();
        let needed: FxHashSet<OpId> = [read_of_x].into_iter().collect();
        let change = path_change(&plan, &recorded, &needed, None).unwrap();
        // The path changed although every free read saw its planned writer: nothing to
        // steer, which the reproduction reports as such.
        assert!(change.reads.is_empty(), "{change:?}");
    }
}
