//! Graphviz DOT drawing of a prediction (after IsoPredict PLDI'24 Figs. 3, 7–10): one box per
//! transaction of the predicted history, session order in grey, write–read order in black with
//! the reads whose writer changed in blue, and the `pco` cycle that makes the prediction
//! unserializable in red (ww/rw edges dashed). Boundary transactions are drawn bold; the
//! anomaly's minimal core (the transactions its cycle is over) filled, and only the changed
//! reads that create the anomaly are blue.

use crate::dot::DotWriter;

use super::Prediction;
use crate::history::{History, OpKind, TxnId, INITIAL_TXN};

/// Renders `prediction` (made from `observed`) as a DOT digraph.
pub fn prediction_dot(observed: &History, prediction: &Prediction) -> String {
    prediction_dot_titled(observed, prediction, None)
}

/// [`prediction_dot`] with `title` as the drawing's label (e.g. that it is the first of the
/// predictions a cut search found).
pub fn prediction_dot_titled(
    observed: &History,
    prediction: &Prediction,
    title: Option<&str>,
) -> String {
    let h = &prediction.history;
    let origin = &prediction.txn_origin;
    let mut out = DotWriter::digraph("prediction");
    if let Some(title) = title {
        out.label(title).stmt("labelloc=t");
    }
    out.stmt("rankdir=TB")
        .stmt("node [shape=box, fontname=\"monospace\"]");
    let boundary: Vec<TxnId> = prediction.boundaries.iter().filter_map(|b| b.txn).collect();
    // The changed reads that create the anomaly (its minimal core's) in blue; the others
    // are drawn as ordinary reads.
    let changed: Vec<(TxnId, TxnId)> = prediction
        .changed_reads
        .iter()
        .filter(|c| c.in_core)
        .map(|c| (c.new_writer, c.txn))
        .collect();
    let core: Option<&[TxnId]> = prediction.core.as_ref().map(|c| c.txns.as_slice());
    for t in h.committed_txns() {
        let o = origin[t as usize];
        let ops = h.txn_ops(t);
        let reads = ops.iter().filter(|op| op.kind == OpKind::Read).count();
        let label = format!(
            "{}\n{} reads, {} writes",
            observed.txn_label(o),
            reads,
            ops.len() - reads
        );
        let style = match (boundary.contains(&o), core.is_some_and(|c| c.contains(&o))) {
            (true, true) => "style=\"bold,filled\", fillcolor=\"#fde8e6\"",
            (false, true) => "style=filled, fillcolor=\"#fde8e6\"",
            (true, false) => "style=bold",
            (false, false) => "",
        };
        out.node(format_args!("t{o}"), &label, style);
    }
    // Session order (immediate predecessors).
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let p = h.so_predecessor(t).unwrap_or(INITIAL_TXN);
        if p == INITIAL_TXN && h.txn(t).index_in_session > 0 {
            continue;
        }
        out.edge(
            format_args!("t{}", origin[p as usize]),
            format_args!("t{}", origin[t as usize]),
            "so",
            "color=grey, fontcolor=grey",
        );
    }
    // Write–read order, one edge per pair, labelled with (up to three of) its keys.
    let mut pairs: Vec<(TxnId, TxnId, u32)> = h
        .wr_edges()
        .filter(|&(w, _, _)| w != INITIAL_TXN)
        .map(|(w, r, k)| (origin[w as usize], origin[r as usize], k))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let mut i = 0;
    while i < pairs.len() {
        let (w, r) = (pairs[i].0, pairs[i].1);
        let mut j = i;
        while j < pairs.len() && pairs[j].0 == w && pairs[j].1 == r {
            j += 1;
        }
        let keys: Vec<&str> = pairs[i..j.min(i + 3)]
            .iter()
            .map(|&(_, _, k)| h.key_name(k))
            .collect();
        let more = if j - i > 3 {
            format!(" (+{})", j - i - 3)
        } else {
            String::new()
        };
        let color = if changed.contains(&(w, r)) {
            "blue"
        } else {
            "black"
        };
        out.edge(
            format_args!("t{w}"),
            format_args!("t{r}"),
            &format!("wr {}{more}", keys.join(", ")),
            &format!("color={color}, fontcolor={color}"),
        );
        i = j;
    }
    // Changed reads from the initial state.
    for c in prediction.changed_reads.iter().filter(|c| c.in_core) {
        if c.new_writer == INITIAL_TXN {
            out.edge(
                "t0",
                format_args!("t{}", c.txn),
                &format!("wr {}", c.key),
                "color=blue, fontcolor=blue",
            );
        }
    }
    if let Some(cycle) = &prediction.cycle {
        for e in cycle {
            let style = if e.kind == "ww" || e.kind == "rw" {
                "dashed"
            } else {
                "solid"
            };
            let label = match &e.key {
                Some(k) => format!("{} {k}", e.kind),
                None => e.kind.to_string(),
            };
            out.edge(
                format_args!("t{}", e.from),
                format_args!("t{}", e.to),
                &label,
                &format!("color=red, fontcolor=red, style={style}, penwidth=2"),
            );
        }
    }
    out.finish()
}
