//! The history a reproduction runs: the observed run's transactions in the order the
//! workload's sessions ran them — aborted attempts included, since the workload's code runs
//! them again — with each committed transaction as the prediction has it (its reads' writers).
//!
//! A prediction keeps only committed transactions (IsoPredict PLDI'24 §4); its `k`-th
//! transaction of a session is the observed session's `k`-th committed one. Sessions end
//! after their last predicted transaction (the prediction boundary).

use rustc_hash::FxHashMap;

use crate::history::{BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, TxnId};

/// The plan of `predicted` over `observed` (both with the same key names); an error says
/// why they do not fit together.
pub fn plan_history(observed: &History, predicted: &History) -> Result<History, String> {
    if observed.sessions().len() != predicted.sessions().len() {
        return Err(format!(
            "the observed run has {} sessions, the prediction {}",
            observed.sessions().len(),
            predicted.sessions().len()
        ));
    }
    let mut b = HistoryBuilder::new(format!("{} (as the sessions run it)", predicted.source()));
    let mut keys: FxHashMap<String, u32> = FxHashMap::default();
    // (builder txn, source history is predicted, txn id in it)
    let mut entries: Vec<(BuilderTxn, bool, TxnId)> = Vec::new();
    let mut of_predicted: FxHashMap<TxnId, BuilderTxn> = FxHashMap::default();
    let mut of_observed: FxHashMap<TxnId, BuilderTxn> = FxHashMap::default();
    for (s, (os, ps)) in observed
        .sessions()
        .iter()
        .zip(predicted.sessions())
        .enumerate()
    {
        let session = b.session(os.external_id.or(Some(s as u64)));
        let mut predicted_txns = ps.txns().filter(|&t| predicted.txn(t).is_committed());
        let planned = ps
            .txns()
            .filter(|&t| predicted.txn(t).is_committed())
            .count();
        let mut used = 0;
        for t in os.txns() {
            if used == planned {
                break;
            }
            if observed.txn(t).is_committed() {
                let Some(p) = predicted_txns.next() else {
                    break;
                };
                let bt = b.begin(session, None);
                of_predicted.insert(p, bt);
                of_observed.insert(t, bt);
                entries.push((bt, true, p));
                used += 1;
            } else {
                let bt = b.begin(session, None);
                b.abort(bt);
                of_observed.insert(t, bt);
                entries.push((bt, false, t));
            }
        }
        if used < planned {
            return Err(format!(
                "session {} of the prediction has {planned} committed transactions, the observed run only {used}",
                s + 1
            ));
        }
    }
    for (bt, from_predicted, t) in entries {
        let (h, map) = if from_predicted {
            (predicted, &of_predicted)
        } else {
            (observed, &of_observed)
        };
        for o in h.txn(t).ops() {
            let op = h.op(o);
            let name = h.key_name(op.key);
            let k = match keys.get(name) {
                Some(&k) => k,
                None => {
                    let k = b.key(name);
                    keys.insert(name.to_string(), k);
                    k
                }
            };
            match op.kind {
                OpKind::Write => b.write(bt, k, None, 0),
                OpKind::Read => {
                    let from = match h.writer_txn(o) {
                        Some(0) | None => ReadFrom::Initial,
                        Some(w) if w == t => ReadFrom::Txn(bt),
                        Some(w) => map.get(&w).map_or(ReadFrom::Initial, |&w| ReadFrom::Txn(w)),
                    };
                    b.read(bt, k, None, from, 0);
                }
            }
        }
    }
    b.build().map_err(|e| e.to_string())
}
