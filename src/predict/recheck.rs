//! An independent re-check of a prediction's explanation (the `pco` cycle of IsoPredict
//! PLDI'24 §4.2.2 with the proof of each edge that [`super::explain`] builds): every edge is
//! re-derived from the predicted history alone, and every "precedes" premise must be a chain
//! of facts listed before the edge that uses it. Written apart from the explanation code and
//! using only the [`History`] API, so that a wrong explanation cannot pass by sharing its
//! mistake. The tests run it on every explanation they produce.
//!
//! The rules (ids of the observed history, mapped to the predicted one by
//! [`Prediction::txn_origin`]):
//! - `so a → b`: `a` is the initial state, or `a` and `b` are committed transactions of one
//!   session with `a` first;
//! - `wr a → b on k`: `b` has a read of `k` whose writer is `a`;
//! - `ww a → b on k via r`: `r` reads `k` from `b`, `a` writes `k`, `a ∉ {b, r}`, and the
//!   premise chain leads from `a` to `r`;
//! - `rw a → b on k via w`: `a` reads `k` from `w`, `b` writes `k`, `b ∉ {a, w}`, and the
//!   premise chain leads from `w` to `b`;
//! - a chain is a non-empty sequence of facts, each ending where the next starts; a fact's
//!   premise uses only facts before it; the cycle's edges end where the next starts and the
//!   last ends where the first starts.

use super::{CycleEdge, Prediction};
use crate::history::{History, KeyId, OpKind, TxnId, INITIAL_TXN};

/// Checks every edge of `p`'s explanation (its cycle and its facts) against `p.history`;
/// the first unjustified edge is the error, in words. A prediction without a cycle passes
/// when it has no facts either.
pub fn recheck_explanation(p: &Prediction) -> Result<(), String> {
    let h = &p.history;
    let mut predicted_of = vec![None; p.txn_origin.iter().max().map_or(0, |&m| m as usize + 1)];
    for (predicted, &observed) in p.txn_origin.iter().enumerate() {
        predicted_of[observed as usize] = Some(predicted as TxnId);
    }
    let map = |t: TxnId| -> Result<TxnId, String> {
        predicted_of
            .get(t as usize)
            .copied()
            .flatten()
            .ok_or_else(|| format!("transaction {t} is not in the predicted history"))
    };
    let Some(cycle) = &p.cycle else {
        return if p.facts.is_empty() {
            Ok(())
        } else {
            Err("facts without a cycle".to_string())
        };
    };
    if cycle.is_empty() {
        return Err("an empty cycle".to_string());
    }
    for (i, f) in p.facts.iter().enumerate() {
        check_edge(h, f, &map, &p.facts, i).map_err(|e| format!("fact {}: {e}", i + 1))?;
    }
    for (i, e) in cycle.iter().enumerate() {
        check_edge(h, e, &map, &p.facts, p.facts.len())
            .map_err(|err| format!("cycle edge {}: {err}", i + 1))?;
        let next = &cycle[(i + 1) % cycle.len()];
        if e.to != next.from {
            return Err(format!(
                "cycle edge {} ends at {} but the next starts at {}",
                i + 1,
                e.to,
                next.from
            ));
        }
    }
    Ok(())
}

/// One edge; its premise may use facts `0..usable`.
fn check_edge(
    h: &History,
    e: &CycleEdge,
    map: &dyn Fn(TxnId) -> Result<TxnId, String>,
    facts: &[CycleEdge],
    usable: usize,
) -> Result<(), String> {
    let (a, b) = (map(e.from)?, map(e.to)?);
    for t in [a, b] {
        if !h.txn(t).is_committed() {
            return Err(format!("{} is not committed", h.txn_label(t)));
        }
    }
    if a == b {
        return Err("a self-loop".to_string());
    }
    let key = || -> Result<KeyId, String> {
        let name = e.key.as_deref().ok_or("no key")?;
        (0..h.key_count() as KeyId)
            .find(|&k| h.key_name(k) == name)
            .ok_or_else(|| format!("no key {name} in the predicted history"))
    };
    let no_premise = || {
        if e.premise.is_empty() {
            Ok(())
        } else {
            Err(format!("a {} edge with a premise", e.kind))
        }
    };
    match e.kind {
        "so" => {
            no_premise()?;
            let (ta, tb) = (h.txn(a), h.txn(b));
            if !(a == INITIAL_TXN
                || ta.session == tb.session && ta.index_in_session < tb.index_in_session)
            {
                return Err(format!(
                    "so, but {} does not precede {} in a session",
                    h.txn_label(a),
                    h.txn_label(b)
                ));
            }
        }
        "wr" => {
            no_premise()?;
            let k = key()?;
            if !reads_from(h, b, k, a) {
                return Err(format!(
                    "wr, but {} does not read {} from {}",
                    h.txn_label(b),
                    h.key_name(k),
                    h.txn_label(a)
                ));
            }
        }
        "ww" | "rw" => {
            let k = key()?;
            let via = map(e.via.ok_or("no via")?)?;
            let (reader, source, writer, start, end) = if e.kind == "ww" {
                // via reads k from b; a writes k; a precedes via.
                (via, b, a, a, via)
            } else {
                // a reads k from via; b writes k; via precedes b.
                (a, via, b, via, b)
            };
            if !reads_from(h, reader, k, source) {
                return Err(format!(
                    "{}, but {} does not read {} from {}",
                    e.kind,
                    h.txn_label(reader),
                    h.key_name(k),
                    h.txn_label(source)
                ));
            }
            if !writes(h, writer, k) {
                return Err(format!(
                    "{}, but {} does not write {}",
                    e.kind,
                    h.txn_label(writer),
                    h.key_name(k)
                ));
            }
            if writer == reader || writer == source {
                return Err(format!(
                    "{}: the writer is the reader or the source",
                    e.kind
                ));
            }
            check_chain(facts, &e.premise, usable, start, end, map)?;
        }
        other => return Err(format!("unknown edge kind {other}")),
    }
    Ok(())
}

/// `chain` (fact indices below `usable`) leads from `start` to `end` (predicted ids).
fn check_chain(
    facts: &[CycleEdge],
    chain: &[usize],
    usable: usize,
    start: TxnId,
    end: TxnId,
    map: &dyn Fn(TxnId) -> Result<TxnId, String>,
) -> Result<(), String> {
    if chain.is_empty() {
        return Err("a \"precedes\" without a chain".to_string());
    }
    let mut at = start;
    for &i in chain {
        if i >= usable {
            return Err(format!(
                "the chain uses fact {}, which is not before this edge",
                i + 1
            ));
        }
        let f = &facts[i];
        if map(f.from)? != at {
            return Err(format!("the chain breaks at fact {}", i + 1));
        }
        at = map(f.to)?;
    }
    if at != end {
        return Err("the chain does not reach the transaction it claims".to_string());
    }
    Ok(())
}

/// Whether committed `reader` has a read of `key` whose writer is `writer`.
fn reads_from(h: &History, reader: TxnId, key: KeyId, writer: TxnId) -> bool {
    h.txn(reader).ops().any(|o| {
        let op = h.op(o);
        op.kind == OpKind::Read && op.key == key && h.writer_txn(o) == Some(writer)
    })
}

/// Whether `t` has a write of `key` (the initial state's writes are operations too).
fn writes(h: &History, t: TxnId, key: KeyId) -> bool {
    h.txn(t)
        .ops()
        .any(|o| h.op(o).kind == OpKind::Write && h.op(o).key == key)
}
