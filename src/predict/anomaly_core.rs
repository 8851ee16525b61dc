//! The minimal core of an unserializable execution: the fewest transactions, and among their
//! reads the fewest, that still show that no serial order exists (issue 24, "one anomaly, one
//! story"). Every view of a prediction — its name, its cycle, its drawing, the reads and calls
//! it lists — is a view of this core.
//!
//! A *sub-history* keeps some transactions (in their sessions, in session order) and drops the
//! others together with every read of a dropped transaction's write; it may drop further
//! external reads. A serial order of the whole history, restricted to the transactions kept,
//! explains every read kept (each read's writer is still the last writer of its key before
//! it), so a sub-history that is unserializable shows that the whole history is.
//!
//! Minimisation by deletion (the classic one-at-a-time shrinking of delta debugging, one pass of
//! the one shrinker, [`crate::shrink`]): start
//! from the transactions of a proven `pco` cycle (its edges, the readers and writers their
//! derivations go through, and the facts behind them: a sub-history that still has that
//! cycle), then try to drop each transaction, later ones first, then each external read; a
//! drop is kept when the sub-history is still unserializable by the one decision core
//! ([`super::judge`]) and still has a cycle of its least `pco` (so that the cycle shown is a
//! cycle over exactly the core's transactions). The result is minimal: dropping any one more
//! transaction or read gives a serializable sub-history (or one whose unserializability needs
//! more than `pco` to see).

use std::time::{Duration, Instant};

use super::explain::{PcoEdge, PcoProof};
use super::judge::{judge, How, Judged};
use super::saturate::{saturate, Pco};
use crate::check::Level;
use crate::history::{
    BuilderTxn, History, HistoryBuilder, OpId, OpKind, ReadFrom, TxnId, INITIAL_TXN,
};
use crate::shrink::{shrink, Plan, Trial};

/// Most transactions a start set may have for the core to be minimised (each step judges a
/// sub-history; the start set of a shortest cycle's proof is small).
const MAX_START_TXNS: usize = 60;

/// Time the minimisation may take; when it runs out, the core found so far (which shows the
/// anomaly, but may not be minimal) stands.
const BUDGET: Duration = Duration::from_secs(1);

/// One read of the core: `reader` reads `key` from `writer` (observed transaction ids; the
/// writer may be the initial state).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct CoreRead {
    /// The reading transaction (observed id).
    pub reader: TxnId,
    /// The key.
    pub key: String,
    /// The transaction whose write it reads (observed id; 0: the initial state).
    pub writer: TxnId,
}

/// The minimal core of a prediction (see the module documentation).
#[derive(Debug, Clone, serde::Serialize)]
pub struct AnomalyCore {
    /// Its transactions (observed ids, ascending; the initial state not included).
    pub txns: Vec<TxnId>,
    /// Their names (`T1.2`), in the same order (set by the caller, which knows the observed
    /// history).
    pub txn_labels: Vec<String>,
    /// The external reads that matter: dropping any one of them makes the core serializable.
    pub reads: Vec<CoreRead>,
    /// Whether minimisation ran to the end (`false`: the time budget ran out or the predicted
    /// execution was too large; the core shows the anomaly but may not be the smallest).
    pub minimal: bool,
    /// The core as a history of its own (its transactions, their writes and the reads that
    /// matter; internal reads kept).
    #[serde(skip)]
    pub history: History,
    /// Core transaction id → observed transaction id.
    #[serde(skip)]
    pub origin: Vec<TxnId>,
}

/// What a sub-history keeps: per transaction of the predicted history, and per operation
/// (external reads only can be dropped on their own).
#[derive(Clone, Copy)]
struct Keep<'a> {
    txn: &'a [bool],
    read: &'a [bool],
}

/// The sub-history of `h` that `keep` describes, with its id → `h` id map.
fn sub_history(h: &History, keep: Keep) -> Option<(History, Vec<TxnId>)> {
    let mut b = HistoryBuilder::new(format!("core of {}", h.source()));
    let mut key_of = vec![u32::MAX; h.key_count()];
    let mut key = |b: &mut HistoryBuilder, k: u32| {
        if key_of[k as usize] == u32::MAX {
            key_of[k as usize] = b.key(h.key_name(k));
        }
        key_of[k as usize]
    };
    let initial = h.txn(INITIAL_TXN).ops();
    for o in initial.start..initial.end - h.implicit_initial_writes() {
        let op = h.op(o);
        let k = key(&mut b, op.key);
        b.write(BuilderTxn::INITIAL, k, op.value, op.line);
    }
    let mut bt: Vec<Option<BuilderTxn>> = vec![None; h.txn_count()];
    bt[INITIAL_TXN as usize] = Some(BuilderTxn::INITIAL);
    let mut origin = vec![INITIAL_TXN];
    for s in h.sessions() {
        let kept: Vec<TxnId> = s
            .txns()
            .filter(|&t| h.txn(t).is_committed() && keep.txn[t as usize])
            .collect();
        if kept.is_empty() {
            continue;
        }
        let session = b.session(s.external_id);
        for t in kept {
            let line = h.txn_ops(t).first().map_or(0, |op| op.line);
            bt[t as usize] = Some(b.begin_at(session, h.txn(t).external_id, line));
            origin.push(t);
        }
    }
    for (t, into) in bt.iter().enumerate().skip(1) {
        let Some(into) = *into else { continue };
        for o in h.txn(t as TxnId).ops() {
            let op = h.op(o);
            match op.kind {
                OpKind::Write => {
                    let k = key(&mut b, op.key);
                    b.write(into, k, op.value, op.line);
                }
                _ => {
                    let Some(w) = h.writer_txn(o) else { continue };
                    if w != t as TxnId && !keep.read[o as usize] {
                        continue;
                    }
                    let from = match w {
                        INITIAL_TXN => ReadFrom::Initial,
                        w => match bt[w as usize] {
                            Some(wb) => ReadFrom::Txn(wb),
                            None => continue,
                        },
                    };
                    let k = key(&mut b, op.key);
                    b.read(into, k, op.value, from, op.line);
                }
            }
        }
    }
    b.build().ok().map(|sub| (sub, origin))
}

/// Whether the sub-history `keep` describes still shows the anomaly: unserializable by the
/// decision core, with a cycle of its least `pco`.
fn shows(h: &History, keep: Keep, deadline: Instant) -> bool {
    let Some((sub, _)) = sub_history(h, keep) else {
        return false;
    };
    // The cycle first: without one the sub-history is not kept, and asking the decision core
    // about it could mean an exact (Z3) search.
    matches!(saturate(&sub, Some(deadline)), Pco::Cyclic(_))
        && matches!(
            judge(&sub, Level::Serializable, How::CheapFirst, Some(deadline)),
            Ok(Judged::Fails { .. })
        )
}

/// A test's answer as a trial of the one shrinker.
fn trial(still_shows: bool) -> Trial<()> {
    if still_shows {
        Trial::Fails(())
    } else {
        Trial::Passes
    }
}

/// The transactions a proven cycle rests on: its edges' ends, the readers and writers of
/// their derivations, and the same for every fact behind them.
fn proof_txns(proof: &PcoProof) -> Vec<TxnId> {
    let mut txns = Vec::new();
    let mut add = |e: &PcoEdge| {
        txns.push(e.from);
        txns.push(e.to);
        match e.reason {
            super::EdgeReason::Ww { reader, .. } => txns.push(reader),
            super::EdgeReason::Rw { writer, .. } => txns.push(writer),
            _ => {}
        }
    };
    proof.cycle.iter().for_each(&mut add);
    proof.facts.iter().for_each(&mut add);
    txns.retain(|&t| t != INITIAL_TXN);
    txns.sort_unstable();
    txns.dedup();
    txns
}

/// The minimal core of the predicted history `h` (`origin`: its transaction ids → observed
/// ids), starting from the transactions `proof` rests on (all committed ones without a
/// proof). `None` when no sub-history shows a `pco` cycle (an exact-strict prediction whose
/// `pco` is acyclic), or when the start set is too large to minimise.
pub(crate) fn minimal_core(
    h: &History,
    origin: &[TxnId],
    proof: Option<&PcoProof>,
) -> Option<AnomalyCore> {
    let deadline = Instant::now() + BUDGET;
    let start: Vec<TxnId> = match proof {
        Some(p) => proof_txns(p),
        None => h.committed_txns().filter(|&t| t != INITIAL_TXN).collect(),
    };
    if start.len() > MAX_START_TXNS {
        return None;
    }
    let mut keep_txn = vec![false; h.txn_count()];
    let mut keep_read = vec![true; h.ops().len()];
    for &t in &start {
        keep_txn[t as usize] = true;
    }
    let keep = Keep {
        txn: &keep_txn,
        read: &keep_read,
    };
    if !shows(h, keep, deadline) {
        return None;
    }
    let stop = || Instant::now() >= deadline;
    // Transactions, later ones first (the earliest transactions that show the anomaly stay).
    let order: Vec<usize> = start.iter().rev().map(|&t| t as usize).collect();
    let shows_txns = |txn: &[bool]| {
        let keep = Keep {
            txn,
            read: &keep_read,
        };
        trial(shows(h, keep, deadline))
    };
    let by_txn = shrink(&mut keep_txn, &order, Plan::OnePass, shows_txns, stop);
    // External reads of the transactions kept.
    let reads: Vec<OpId> = (0..h.txn_count() as TxnId)
        .filter(|&t| keep_txn[t as usize])
        .flat_map(|t| h.txn(t).ops())
        .filter(|&o| {
            h.op(o).kind == OpKind::Read
                && h.writer_txn(o)
                    .is_some_and(|w| w != h.op(o).txn && (w == INITIAL_TXN || keep_txn[w as usize]))
        })
        .collect();
    let order: Vec<usize> = reads.iter().map(|&o| o as usize).collect();
    let shows_reads = |read: &[bool]| {
        let keep = Keep {
            txn: &keep_txn,
            read,
        };
        trial(shows(h, keep, deadline))
    };
    let by_read = shrink(&mut keep_read, &order, Plan::OnePass, shows_reads, stop);
    let minimal = by_txn.minimal && by_read.minimal;
    let keep = Keep {
        txn: &keep_txn,
        read: &keep_read,
    };
    let (history, sub_origin) = sub_history(h, keep)?;
    let mut core_reads: Vec<CoreRead> = reads
        .iter()
        .filter(|&&o| keep.read[o as usize])
        .map(|&o| CoreRead {
            reader: origin[h.op(o).txn as usize],
            key: h.key_name(h.op(o).key).to_string(),
            writer: origin[h.writer_txn(o).expect("an external read") as usize],
        })
        .collect();
    core_reads.sort();
    core_reads.dedup();
    let origin: Vec<TxnId> = sub_origin.iter().map(|&t| origin[t as usize]).collect();
    let mut txns: Vec<TxnId> = origin[1..].to_vec();
    txns.sort_unstable();
    Some(AnomalyCore {
        txn_labels: Vec::new(),
        txns,
        reads: core_reads,
        minimal,
        history,
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

    /// Smallbank's seed-1 prediction in miniature: session 1 runs a (reads x from the initial
    /// state, writes x) then c (reads x from b, writes x); session 2 runs b (reads x from the
    /// initial state, writes x); d, in session 3, reads y from the initial state (a changed
    /// read that plays no part). The shortest `pco` cycle is a →so c →rw a (through b's
    /// read); the minimal core is the lost update of a and b alone.
    fn smallbank_like() -> History {
        let mut b = HistoryBuilder::new("core");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let s3 = b.session(None);
        let a = b.begin(s1, None);
        let c = b.begin(s1, None);
        let bb = b.begin(s2, None);
        let d = b.begin(s3, None);
        b.read(a, x, None, ReadFrom::Initial, 0);
        b.write(a, x, None, 0);
        b.read(c, x, None, ReadFrom::Txn(bb), 0);
        b.write(c, x, None, 0);
        b.read(bb, x, None, ReadFrom::Initial, 0);
        b.write(bb, x, None, 0);
        b.read(d, y, None, ReadFrom::Initial, 0);
        b.write(d, x, None, 0);
        b.build().unwrap()
    }

    #[test]
    fn the_core_of_a_lost_update_is_its_two_transactions() {
        let h = smallbank_like();
        let origin: Vec<TxnId> = (0..h.txn_count() as TxnId).collect();
        let proof = super::super::explain::pco_proof(&h).expect("a cycle");
        let core = minimal_core(&h, &origin, Some(&proof)).expect("a core");
        // a = T1.1 (id 1), c = T1.2 (id 2), b = T2.1 (id 3).
        assert_eq!(core.txns, vec![1, 3]);
        assert!(core.minimal);
        assert_eq!(
            core.reads,
            vec![
                CoreRead {
                    reader: 1,
                    key: "x".into(),
                    writer: 0
                },
                CoreRead {
                    reader: 3,
                    key: "x".into(),
                    writer: 0
                }
            ]
        );
        // The core's own cycle goes through exactly its transactions.
        let cycle = super::super::explain::pco_cycle(&core.history).expect("a cycle");
        let mut on: Vec<TxnId> = cycle
            .iter()
            .flat_map(|e| [core.origin[e.from as usize], core.origin[e.to as usize]])
            .collect();
        on.sort_unstable();
        on.dedup();
        assert_eq!(on, core.txns);
    }

    #[test]
    fn reads_that_do_not_matter_are_dropped() {
        // A write skew (t1 reads x, writes y; t2 reads y, writes x, both from the initial
        // state) where t1 also reads z, which nobody writes.
        let mut b = HistoryBuilder::new("skew");
        let x = b.key("x");
        let y = b.key("y");
        let z = b.key("z");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        let t2 = b.begin(s2, None);
        b.read(t1, x, None, ReadFrom::Initial, 0);
        b.read(t1, z, None, ReadFrom::Initial, 0);
        b.write(t1, y, None, 0);
        b.read(t2, y, None, ReadFrom::Initial, 0);
        b.write(t2, x, None, 0);
        let h = b.build().unwrap();
        let origin: Vec<TxnId> = (0..h.txn_count() as TxnId).collect();
        let core = minimal_core(&h, &origin, None).expect("a core");
        assert_eq!(core.txns, vec![1, 2]);
        let keys: Vec<&str> = core.reads.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, vec!["x", "y"]);
    }

    #[test]
    fn a_serializable_history_has_no_core() {
        let mut b = HistoryBuilder::new("serial");
        let x = b.key("x");
        let s = b.session(None);
        let t1 = b.begin(s, None);
        b.write(t1, x, None, 0);
        let t2 = b.begin(s, None);
        b.read(t2, x, None, ReadFrom::Txn(t1), 0);
        let h = b.build().unwrap();
        let origin: Vec<TxnId> = (0..h.txn_count() as TxnId).collect();
        assert!(minimal_core(&h, &origin, None).is_none());
    }
}
