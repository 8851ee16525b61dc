//! Explaining a prediction in the application's terms (IsoPredict PLDI'24 §4.4 and Figs. 7–10
//! show predictions this way): transactions named as in every report (`T2.1`, with the trace
//! files' `Txn(8, 0)` beside them) with
//! the procedure call that ran them, keys named by table, column and row, and the drawing of
//! the anomaly (sessions as columns; changed reads and the cycle highlighted).

use crate::history::{History, TxnId, INITIAL_TXN};
use crate::predict::Prediction;
use crate::report::anomaly::{AnomalyGraph, EdgeKind, GraphEdge, SessionColumn, TxnBox};
use crate::report::run_report::{CallLine, ChangedReadLine, CycleLine, PredictionSection};
use crate::store::KeyDirectory;
use crate::workloads::TxnCall;

/// Names of an observed run's transactions, calls and keys.
pub(crate) struct Explainer<'a> {
    /// The observed history.
    pub observed: &'a History,
    /// Its transactions' procedure calls (indexed by transaction id).
    pub calls: &'a [Option<TxnCall>],
    /// Its keys' meanings.
    pub keys: &'a KeyDirectory,
}

impl Explainer<'_> {
    /// `Txn(session, k)` as in the trace files, or `initial state`.
    pub fn label(&self, t: TxnId) -> String {
        txn_name(self.observed, t)
    }

    /// The procedure call of `t`, in words.
    pub fn call(&self, t: TxnId) -> Option<String> {
        self.calls
            .get(t as usize)
            .and_then(|c| c.as_ref())
            .map(TxnCall::describe)
    }

    /// The key's table/column/row, if known; the store's own keys by what they mean
    /// ([`key_words`]).
    pub fn key_meaning(&self, key: &str) -> Option<String> {
        self.keys.describe(key).map(key_words)
    }

    /// The key's meaning, or the key.
    fn key_short(&self, key: &str) -> String {
        self.key_meaning(key).unwrap_or_else(|| key.to_string())
    }

    /// `text` with `key` (a whole word) replaced by its meaning; transactions are already
    /// named as in every report ([`History::txn_label`]).
    /// Read edges grouped by (writer, reader), in order of first appearance: one edge per
    /// pair, labelled with its first key (`wr KEY (+n)` when it stands for more).
    fn read_edges<'k>(
        &self,
        reads: impl Iterator<Item = ((TxnId, TxnId), &'k str)>,
        kind: EdgeKind,
        edges: &mut Vec<GraphEdge>,
    ) {
        let mut pairs: Vec<((TxnId, TxnId), Vec<&str>)> = Vec::new();
        for (pair, key) in reads {
            match pairs.iter_mut().find(|(q, _)| *q == pair) {
                Some((_, keys)) => keys.push(key),
                None => pairs.push((pair, vec![key])),
            }
        }
        for ((from, to), keys) in pairs {
            let more = if keys.len() > 1 {
                format!(" (+{})", keys.len() - 1)
            } else {
                String::new()
            };
            edges.push(GraphEdge {
                from,
                to,
                label: format!("wr {}{more}", self.key_short(keys[0])),
                kind,
                dashed: false,
            });
        }
    }

    fn rename(&self, text: &str, key: Option<&str>) -> String {
        match key.and_then(|k| self.key_meaning(k).map(|m| (k, m))) {
            Some((k, m)) => replace_word(text, k, &m),
            None => text.to_string(),
        }
    }

    /// The observed run's sessions in words: number, terminal, ids in the trace files.
    /// `rolled_back[i]`: calls of session `i` that rolled back (the history of a run on the
    /// embedded store keeps no trace of them).
    pub fn sessions(&self, rolled_back: &[usize]) -> Vec<String> {
        let h = self.observed;
        (0..h.sessions().len())
            .map(|i| {
                let session = &h.sessions()[i];
                let terminal = session
                    .txns()
                    .find_map(|t| self.calls.get(t as usize).and_then(|c| c.as_ref()))
                    .map_or(String::new(), |c| {
                        format!(": terminal {} of the workload", c.terminal)
                    });
                let trace = session.external_id.map_or(String::new(), |e| {
                    format!(
                        ", session id {e} in the trace files (its transactions are `Txn({e}, 0)`, \
                         `Txn({e}, 1)`, …)"
                    )
                });
                let committed = session.txns().filter(|&t| h.txn(t).is_committed()).count();
                let others = session.txns().len() - committed;
                let mut counts = format!(
                    "{committed} committed transaction{}",
                    if committed == 1 { "" } else { "s" }
                );
                if others > 0 {
                    counts.push_str(&format!(", {others} aborted in the history"));
                }
                match rolled_back.get(i).copied().unwrap_or(0) {
                    0 => {}
                    n if n > others => counts.push_str(&format!(
                        " ({} more call{} rolled back, which the history does not keep)",
                        n - others,
                        if n - others == 1 { "" } else { "s" }
                    )),
                    _ => {}
                }
                format!("session {}{terminal}{trace}; {counts}", i + 1)
            })
            .collect()
    }

    /// The report's prediction section.
    pub fn prediction_section(
        &self,
        p: &Prediction,
        reverified_level: bool,
        reverified_unserializable: Option<bool>,
    ) -> PredictionSection {
        let h = self.observed;
        // Roles of the transactions involved.
        let mut roles: Vec<(TxnId, Vec<String>)> = Vec::new();
        let mut add = |t: TxnId, role: String| {
            if t == INITIAL_TXN {
                return;
            }
            match roles.iter_mut().find(|(u, _)| *u == t) {
                Some((_, r)) => {
                    if !r.contains(&role) {
                        r.push(role)
                    }
                }
                None => roles.push((t, vec![role])),
            }
        };
        // The anomaly's transactions: its minimal core (else the cycle's and the changed
        // readers' and writers').
        for t in anomaly_txns(p) {
            add(t, String::new());
        }
        for c in p.changed_reads.iter().filter(|c| c.in_core) {
            add(c.txn, "reads from a different writer".to_string());
            add(
                c.new_writer,
                format!("its write is now read by {}", self.label(c.txn)),
            );
        }
        for e in p.cycle.iter().flatten() {
            add(e.from, "on the cycle".to_string());
            add(e.to, "on the cycle".to_string());
        }
        for b in &p.boundaries {
            if let Some(t) = b.txn {
                if let Some((_, r)) = roles.iter_mut().find(|(u, _)| *u == t) {
                    r.push("last transaction of its session in the prediction".to_string());
                }
            }
        }
        for (_, r) in &mut roles {
            r.retain(|x| !x.is_empty());
        }
        roles.sort_by_key(|(t, _)| *t);
        let calls = roles
            .into_iter()
            .map(|(t, r)| CallLine {
                txn: self.label(t),
                trace: trace_name(h, t),
                call: self.call(t),
                role: r.join("; "),
            })
            .collect();
        let mut changed_reads: Vec<ChangedReadLine> = Vec::new();
        for c in p.changed_reads.iter().filter(|c| c.in_core) {
            let line = ChangedReadLine {
                reader: self.label(c.txn),
                key: c.key.clone(),
                key_meaning: self.key_meaning(&c.key),
                old_writer: self.label(c.old_writer),
                new_writer: self.label(c.new_writer),
                reads: 1,
            };
            let same = |l: &ChangedReadLine| {
                (&l.reader, &l.key, &l.old_writer, &l.new_writer)
                    == (&line.reader, &line.key, &line.old_writer, &line.new_writer)
            };
            match changed_reads.iter_mut().find(|l| same(l)) {
                Some(l) => l.reads += 1,
                None => changed_reads.push(line),
            }
        }
        let line = |e: &crate::predict::CycleEdge| CycleLine {
            from: self.label(e.from),
            to: self.label(e.to),
            kind: e.kind.to_string(),
            key: e.key.clone(),
            key_meaning: e.key.as_deref().and_then(|k| self.key_meaning(k)),
            reason: self.rename(&e.reason, e.key.as_deref()),
        };
        let cycle = p.cycle.iter().flatten().map(line).collect();
        let facts = p
            .facts
            .iter()
            .filter(|f| f.kind != "so")
            .map(line)
            .collect();
        let boundaries = p
            .boundaries
            .iter()
            .map(|b| {
                let session = b.session + 1;
                match b.txn {
                    None => format!(
                        "session {session}: all {} committed transactions",
                        b.committed_txns
                    ),
                    Some(t) => {
                        let call = self
                            .call(t)
                            .map(|c| format!(" ({c})"))
                            .unwrap_or_default();
                        let cut = match b.read {
                            Some(op) => format!(
                                ", stopping at its read of {}",
                                self.key_short(&crate::printable::printable(h.key_name(h.op(op).key)))
                            ),
                            None => String::new(),
                        };
                        format!(
                            "session {session}: {} of {} committed transactions, up to {}{call}{cut}",
                            b.included_txns,
                            b.committed_txns,
                            self.label(t)
                        )
                    }
                }
            })
            .collect();
        PredictionSection {
            all_changed_reads: p.changed_reads.len(),
            boundaries,
            calls,
            changed_reads,
            cycle,
            facts,
            anomaly: None,
            anomaly_names: None,
            reverified_level,
            reverified_unserializable,
            oracle_unserializable: None,
        }
    }

    /// The drawing of the prediction: its transactions by session, session order, changed
    /// reads (new writer → reader, one edge per pair) and the cycle.
    pub fn anomaly_graph(&self, p: &Prediction, title: String) -> AnomalyGraph {
        let ph = &p.history;
        let origin = &p.txn_origin;
        let boundary: Vec<TxnId> = p.boundaries.iter().filter_map(|b| b.txn).collect();
        let mut sessions = Vec::new();
        let mut edges = Vec::new();
        let shown = anomaly_txns(p);
        for s in ph.sessions() {
            let txns: Vec<TxnId> = s
                .txns()
                .filter(|&t| ph.txn(t).is_committed())
                .map(|t| origin[t as usize])
                .filter(|t| shown.contains(t))
                .collect();
            if txns.is_empty() {
                continue;
            }
            edges.extend(GraphEdge::session_order(&txns));
            let observed_session = self.observed.txn(txns[0]).session;
            sessions.push(SessionColumn {
                title: format!("session {}", observed_session + 1),
                txns: txns
                    .iter()
                    .map(|&t| TxnBox {
                        id: t,
                        title: self.label(t),
                        lines: self
                            .call(t)
                            .into_iter()
                            .chain(boundary.contains(&t).then(|| "(boundary)".to_string()))
                            .collect(),
                        emphasized: boundary.contains(&t),
                    })
                    .collect(),
            });
        }
        // Changed reads, one edge per (new writer, reader) naming its first key.
        let changed = p
            .changed_reads
            .iter()
            .filter(|c| c.in_core)
            .map(|c| ((c.new_writer, c.txn), c.key.as_str()));
        self.read_edges(changed, EdgeKind::ChangedRead, &mut edges);
        // The core's other reads (as observed), grouped the same way.
        let kept = p
            .core
            .iter()
            .flat_map(|c| &c.reads)
            .filter(|r| {
                !p.changed_reads.iter().any(|c| {
                    (c.txn, c.key.as_str(), c.new_writer) == (r.reader, r.key.as_str(), r.writer)
                })
            })
            .map(|r| ((r.writer, r.reader), r.key.as_str()));
        self.read_edges(kept, EdgeKind::ReadFrom, &mut edges);
        for e in p.cycle.iter().flatten() {
            let label = match &e.key {
                Some(k) => format!("{} {}", e.kind, self.key_short(k)),
                None => e.kind.to_string(),
            };
            edges.push(GraphEdge::cycle(e.from, e.to, e.kind, label));
        }
        AnomalyGraph::of(title, sessions, edges, INITIAL_TXN)
    }
}

/// Said of a key that is the store's, not the application's.
pub(crate) const NOT_AN_APPLICATION_COLUMN: &str = "not an application column";

/// A key's description ([`KeyDirectory::describe`]) in words: the store's metadata keys of
/// table `T` (`T.<last primary key>` and the like, an emulation's keys, which no application
/// column names) by what they mean; other descriptions as they are.
pub(crate) fn key_words(description: &str) -> String {
    let meta = [
        (
            ".<last primary key>",
            "the insert counter of {T} (the last row id the store gave a new row of {T}; every \
             insert into {T} reads and bumps it",
        ),
        (
            ".<columns metadata>",
            "the column list of {T} (the store's schema record of {T}",
        ),
        (
            ".<primary key metadata>",
            "the primary key definition of {T} (the store's schema record of {T}",
        ),
    ];
    for (suffix, words) in meta {
        if let Some(table) = description.strip_suffix(suffix) {
            return format!(
                "{}; {NOT_AN_APPLICATION_COLUMN})",
                words.replace("{T}", table)
            );
        }
    }
    description.to_string()
}

/// The transactions of the anomaly of `p`, ascending: its minimal core, else (no core) those
/// of its cycle and of its changed reads. Every view of the anomaly shows these.
pub(crate) fn anomaly_txns(p: &Prediction) -> Vec<TxnId> {
    let mut txns: Vec<TxnId> = match &p.core {
        Some(core) => core.txns.clone(),
        None => p
            .cycle
            .iter()
            .flatten()
            .flat_map(|e| [e.from, e.to])
            .chain(p.changed_reads.iter().flat_map(|c| [c.txn, c.new_writer]))
            .collect(),
    };
    txns.retain(|&t| t != INITIAL_TXN);
    txns.sort_unstable();
    txns.dedup();
    txns
}

/// `text` with every occurrence of `word` that is not part of a longer alphanumeric word
/// replaced by `by`.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(i) = rest.find(word) {
        let before = rest[..i].chars().last().or(prev);
        let after = rest[i + word.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric());
        out.push_str(&rest[..i]);
        if boundary(before) && boundary(after) {
            out.push_str(by);
        } else {
            out.push_str(word);
        }
        prev = word.chars().last();
        rest = &rest[i + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The transaction's name in every report ([`History::txn_label`]: `T<session>.<k>`).
pub(crate) fn txn_name(h: &History, t: TxnId) -> String {
    h.txn_label(t)
}

/// `Txn(session, k)` as MonkeyDB's trace files name a transaction (the input's session and
/// transaction ids), when it has them.
pub(crate) fn trace_name(h: &History, t: TxnId) -> Option<String> {
    let tx = h.txn(t);
    match (
        h.sessions().get(tx.session as usize)?.external_id,
        tx.external_id,
    ) {
        (Some(s), Some(k)) => Some(format!("Txn({s}, {k})")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

    #[test]
    fn keys_become_their_meaning_and_names_stay() {
        let mut b = HistoryBuilder::new("t");
        let x = b.key("42");
        let s = b.session(Some(1));
        let t1 = b.begin(s, Some(0));
        b.write(t1, x, None, 0);
        let t2 = b.begin(s, Some(1));
        b.read(t2, x, None, ReadFrom::Initial, 0);
        let h = b.build().unwrap();
        let keys = KeyDirectory::default();
        let ex = Explainer {
            observed: &h,
            calls: &[],
            keys: &keys,
        };
        // One naming scheme: the run report names transactions as check and predict do.
        assert_eq!(ex.label(2), h.txn_label(2));
        assert_eq!(ex.label(2), "T1.2");
        assert_eq!(trace_name(&h, 2).as_deref(), Some("Txn(1, 1)"));
        let text = format!(
            "{} reads 42 from {}, which precedes {} (which also writes 42)",
            h.txn_label(2),
            h.txn_label(0),
            h.txn_label(1)
        );
        assert_eq!(
            ex.rename(&text, Some("42")),
            "T1.2 reads 42 from initial state, which precedes T1.1 (which also writes 42)"
        );
        assert_eq!(ex.rename("the t-shirt t9", None), "the t-shirt t9");
        // The store's own keys by what they mean.
        let words = key_words("NEW_ORDER.<last primary key>");
        assert!(
            words.starts_with("the insert counter of NEW_ORDER"),
            "{words}"
        );
        assert!(words.contains(NOT_AN_APPLICATION_COLUMN));
        assert_eq!(
            key_words("CHECKING.bal[custid=1]"),
            "CHECKING.bal[custid=1]"
        );
        assert_eq!(
            replace_word("writes 42) 421 x42 (42", "42", "K"),
            "writes K) 421 x42 (K"
        );
    }
}
