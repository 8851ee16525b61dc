//! The user-facing description of a verified prediction (IsoPredict PLDI'24 §4, step 6):
//! each session's boundary, the reads whose writer changed, and the `pco` cycle that shows why
//! no serial order exists, each edge with its proof ([`super::explain`]).

use super::explain::{self, PcoEdge};
use super::{anomaly_core, extract, saturate, ChangedRead, Prediction, SessionBoundary};
use crate::history::{History, TxnId};

/// Most predicted transactions for which the explanation is the *shortest* `pco` cycle with a
/// proof of each edge ([`explain::pco_proof`]: every edge the rules derive, and a breadth-first
/// search from every transaction on a cycle); above, the cycle saturation found is used.
pub(crate) const SHORTEST_CYCLE_MAX_TXNS: usize = 3000;

/// The user-facing description of a verified prediction; `cycle`: a `pco` cycle of the
/// predicted history already found (used when the history is too big for the shortest one).
pub(crate) fn describe(
    observed: &History,
    built: extract::Built,
    cycle: Option<Vec<PcoEdge>>,
) -> Prediction {
    let h = observed;
    let label = |t: TxnId| h.txn_label(t);
    let changed_reads: Vec<ChangedRead> = built
        .changed
        .iter()
        .map(|&(op, old, new)| {
            let o = h.op(op);
            ChangedRead {
                in_core: true,
                op,
                line: o.line,
                txn: o.txn,
                txn_label: label(o.txn),
                key: h.key_name(o.key).to_string(),
                old_writer: old,
                old_writer_label: label(old),
                new_writer: new,
                new_writer_label: label(new),
            }
        })
        .collect();
    let boundaries = built
        .boundaries
        .iter()
        .map(|b| SessionBoundary {
            session: b.session,
            external_id: h.sessions()[b.session as usize].external_id,
            txn: b.txn,
            txn_label: b.txn.map(label),
            read: b.read,
            line: b.read.map(|r| h.op(r).line),
            included_txns: b.included_txns,
            committed_txns: h.sessions()[b.session as usize]
                .txns()
                .filter(|&t| h.txn(t).is_committed())
                .count() as u32,
        })
        .collect();
    let origin = &built.origin;
    let mut core = None;
    let (cycle, facts) = if built.history.txn_count() <= SHORTEST_CYCLE_MAX_TXNS {
        let proof = explain::pco_proof(&built.history);
        core = anomaly_core::minimal_core(&built.history, origin, proof.as_ref());
        if let Some(c) = &mut core {
            c.txn_labels = c.txns.iter().map(|&t| label(t)).collect();
        }
        // The cycle shown is the core's: over exactly its transactions.
        let core_proof = core
            .as_ref()
            .and_then(|c| explain::pco_proof_covering(&c.history).map(|p| (c, p)));
        match (core_proof, proof) {
            (Some((c, p)), _) => {
                let (cycle, facts) = explain::explain_proof(&c.history, &c.origin, &label, &p);
                (Some(cycle), facts)
            }
            (None, Some(p)) => {
                let (cycle, facts) = explain::explain_proof(&built.history, origin, &label, &p);
                (Some(cycle), facts)
            }
            (None, None) => (None, Vec::new()),
        }
    } else {
        let cycle = cycle.or_else(|| match saturate::saturate(&built.history, None) {
            saturate::Pco::Cyclic(c) => Some(c),
            _ => None,
        });
        (
            cycle.map(|c| explain::explain_unproven(&built.history, origin, &label, &c)),
            Vec::new(),
        )
    };
    let mut changed_reads = changed_reads;
    if let Some(core) = &core {
        for c in &mut changed_reads {
            c.in_core = core.reads.iter().any(|r| {
                (r.reader, r.key.as_str(), r.writer) == (c.txn, c.key.as_str(), c.new_writer)
            });
        }
    }
    Prediction {
        core,
        boundaries,
        changed_reads,
        cycle,
        facts,
        history: built.history,
        txn_origin: built.origin,
    }
}
