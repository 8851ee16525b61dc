//! Drawing an anomaly (after IsoPredict PLDI'24 Figs. 1–3 and 7–10): sessions as columns,
//! transactions as boxes in session order, the reads whose writer changed in blue and the
//! cycle that makes the execution unserializable in red (derived ww/rw edges dashed). One
//! model, [`AnomalyGraph`], rendered as Graphviz DOT ([`AnomalyGraph::to_dot`]) and as a
//! self-contained SVG with a simple deterministic layout ([`AnomalyGraph::to_svg`], in
//! `anomaly_svg.rs`), so no Graphviz is needed to look at it.

use crate::dot::DotWriter;

/// What an edge shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeKind {
    /// Session order (grey).
    SessionOrder,
    /// A write–read dependency as observed (grey).
    ReadFrom,
    /// A read whose writer changed in the prediction: new writer → reader (blue).
    ChangedRead,
    /// An edge of the cycle (red).
    Cycle,
}

/// A transaction box.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TxnBox {
    /// Its node id (unique in the graph; edges refer to it).
    pub id: u32,
    /// Its title, e.g. `T(1, 0)`.
    pub title: String,
    /// Further lines, e.g. the procedure call.
    pub lines: Vec<String>,
    /// Drawn bold: the session's prediction boundary.
    pub emphasized: bool,
}

/// A session column.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SessionColumn {
    /// Its title, e.g. `session 1`.
    pub title: String,
    /// Its transactions, in session order.
    pub txns: Vec<TxnBox>,
}

/// An edge between two boxes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GraphEdge {
    /// Source node id.
    pub from: u32,
    /// Target node id.
    pub to: u32,
    /// Its label, e.g. `rw CHECKING.bal[custid=1]`.
    pub label: String,
    /// What it shows.
    pub kind: EdgeKind,
    /// Dashed: an edge the serializability axioms derive (ww, rw), not a dependency.
    pub dashed: bool,
}

/// An anomaly to draw: an optional initial-state box above the columns, session columns, and
/// edges.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct AnomalyGraph {
    /// The title.
    pub title: String,
    /// A line under the title (e.g. that the search for further anomalies was cut).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The initial state's box, if some edge starts there.
    pub initial: Option<TxnBox>,
    /// The sessions.
    pub sessions: Vec<SessionColumn>,
    /// The edges.
    pub edges: Vec<GraphEdge>,
}

pub(crate) fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// `s` cut to `max` characters with an ellipsis.
pub(crate) fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

impl GraphEdge {
    /// Session-order edges between consecutive transactions of one column.
    pub fn session_order(txns: &[u32]) -> impl Iterator<Item = GraphEdge> + '_ {
        txns.windows(2).map(|w| GraphEdge {
            from: w[0],
            to: w[1],
            label: String::new(),
            kind: EdgeKind::SessionOrder,
            dashed: false,
        })
    }

    /// An edge of the cycle of dependency kind `kind` (`so`, `wr`, `ww`, `rw`) labelled
    /// `label`: dashed when the axioms derive it (ww, rw).
    pub fn cycle(from: u32, to: u32, kind: &str, label: String) -> GraphEdge {
        GraphEdge {
            from,
            to,
            label,
            kind: EdgeKind::Cycle,
            dashed: matches!(kind, "ww" | "rw"),
        }
    }
}

pub(crate) fn color(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::SessionOrder | EdgeKind::ReadFrom => "#9a9a9a",
        EdgeKind::ChangedRead => "#1f5fd1",
        EdgeKind::Cycle => "#d12a1f",
    }
}

impl AnomalyGraph {
    /// The drawing of `sessions` and `edges` under `title`, with the initial state's box
    /// (node `initial`) when an edge goes from or to it.
    pub fn of(
        title: String,
        sessions: Vec<SessionColumn>,
        edges: Vec<GraphEdge>,
        initial: u32,
    ) -> AnomalyGraph {
        let uses_initial = edges.iter().any(|e| e.from == initial || e.to == initial);
        AnomalyGraph {
            title,
            note: None,
            initial: uses_initial.then(|| TxnBox {
                id: initial,
                title: "initial state".to_string(),
                lines: Vec::new(),
                emphasized: false,
            }),
            sessions,
            edges,
        }
    }

    /// Every box, the initial one first.
    pub(crate) fn boxes(&self) -> impl Iterator<Item = &TxnBox> {
        self.initial
            .iter()
            .chain(self.sessions.iter().flat_map(|s| s.txns.iter()))
    }

    /// Graphviz DOT: one cluster per session.
    pub fn to_dot(&self) -> String {
        let mut dot = DotWriter::digraph("anomaly");
        let label = match &self.note {
            Some(note) => format!("{}\n{note}", self.title),
            None => self.title.clone(),
        };
        dot.label(&label)
            .stmt("labelloc=t")
            .stmt("rankdir=TB")
            .stmt("node [shape=box, fontname=\"monospace\", fontsize=10]")
            .stmt("edge [fontname=\"monospace\", fontsize=9]");
        let node = |dot: &mut DotWriter, b: &TxnBox| {
            let mut label = b.title.clone();
            for l in &b.lines {
                label.push('\n');
                label.push_str(l);
            }
            let style = if b.emphasized { "style=bold" } else { "" };
            dot.node(format_args!("n{}", b.id), &label, style);
        };
        if let Some(b) = &self.initial {
            node(&mut dot, b);
        }
        for (i, s) in self.sessions.iter().enumerate() {
            dot.begin_cluster(i, &s.title);
            for b in &s.txns {
                node(&mut dot, b);
            }
            dot.end_cluster();
        }
        for e in &self.edges {
            let c = color(e.kind);
            let mut attrs = format!("color=\"{c}\", fontcolor=\"{c}\"");
            if e.dashed {
                attrs.push_str(", style=dashed");
            }
            if e.kind == EdgeKind::Cycle {
                attrs.push_str(", penwidth=2");
            }
            dot.edge(
                format_args!("n{}", e.from),
                format_args!("n{}", e.to),
                &e.label,
                &attrs,
            );
        }
        dot.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(id: u32, title: &str) -> TxnBox {
        TxnBox {
            id,
            title: title.to_string(),
            lines: vec![format!("Deposit(amount={id}) <& \"x\">")],
            emphasized: id == 2,
        }
    }

    fn lost_update() -> AnomalyGraph {
        AnomalyGraph {
            title: "lost update under causal".to_string(),
            note: None,
            initial: Some(boxed(0, "initial state")),
            sessions: vec![
                SessionColumn {
                    title: "session 1".to_string(),
                    txns: vec![boxed(1, "T(1, 0)"), boxed(3, "T(1, 1)")],
                },
                SessionColumn {
                    title: "session 2".to_string(),
                    txns: vec![boxed(2, "T(2, 0)")],
                },
            ],
            edges: vec![
                GraphEdge {
                    from: 1,
                    to: 3,
                    label: "so".to_string(),
                    kind: EdgeKind::SessionOrder,
                    dashed: false,
                },
                GraphEdge {
                    from: 0,
                    to: 2,
                    label: "wr bal".to_string(),
                    kind: EdgeKind::ChangedRead,
                    dashed: false,
                },
                GraphEdge {
                    from: 1,
                    to: 2,
                    label: "ww bal".to_string(),
                    kind: EdgeKind::Cycle,
                    dashed: true,
                },
                GraphEdge {
                    from: 2,
                    to: 1,
                    label: "rw bal".to_string(),
                    kind: EdgeKind::Cycle,
                    dashed: true,
                },
            ],
        }
    }

    #[test]
    fn svg_is_deterministic_well_formed_and_escaped() {
        let g = lost_update();
        let svg = g.to_svg();
        assert_eq!(svg, g.to_svg());
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        // Every box and every edge is drawn; text is escaped.
        for id in 0..4 {
            assert!(svg.contains(&format!("<g id=\"n{id}\">")), "box {id}");
        }
        // 4 edges + 3 arrow heads + 4 line samples of the legend.
        assert_eq!(svg.matches("<path d=").count(), 4 + 3 + 4);
        assert_eq!(svg.matches("stroke=\"#d12a1f\"").count(), 2 + 2);
        assert!(svg.contains("&lt;&amp; &quot;x&quot;&gt;"));
        assert!(!svg.contains("<&"));
        // Tags balance.
        assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    }

    #[test]
    fn session_columns_are_left_to_right() {
        let svg = lost_update().to_svg();
        let x_of = |id: u32| -> f64 {
            let at = svg.find(&format!("<g id=\"n{id}\"><rect x=\"")).unwrap();
            let rest = &svg[at + format!("<g id=\"n{id}\"><rect x=\"").len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        };
        assert_eq!(x_of(1), x_of(3));
        assert!(x_of(2) > x_of(1));
    }

    #[test]
    fn dot_has_clusters_and_styles() {
        let dot = lost_update().to_dot();
        assert!(dot.starts_with("digraph anomaly {"));
        assert_eq!(dot.matches("subgraph cluster_").count(), 2);
        assert!(dot.contains("n1 -> n2 [label=\"ww bal\", color=\"#d12a1f\", fontcolor=\"#d12a1f\", style=dashed, penwidth=2];"));
        assert!(
            dot.contains("n2 [label=\"T(2, 0)\\nDeposit(amount=2) <& \\\"x\\\">\", style=bold];")
        );
    }

    /// Byte for byte: the one DOT writer (`crate::dot::DotWriter`) must write what was written.
    #[test]
    fn dot_is_pinned() {
        let mut g = lost_update();
        let plain = g.to_dot();
        g.note = Some("a note".to_string());
        g.initial = None;
        let noted = g.to_dot();
        assert_eq!(
            [plain.as_str(), noted.as_str()],
            [
                "digraph anomaly {\n  label=\"lost update under causal\";\n  labelloc=t;\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n  n0 [label=\"initial state\\nDeposit(amount=0) <& \\\"x\\\">\"];\n  subgraph cluster_0 {\n    label=\"session 1\";\n    n1 [label=\"T(1, 0)\\nDeposit(amount=1) <& \\\"x\\\">\"];\n    n3 [label=\"T(1, 1)\\nDeposit(amount=3) <& \\\"x\\\">\"];\n  }\n  subgraph cluster_1 {\n    label=\"session 2\";\n    n2 [label=\"T(2, 0)\\nDeposit(amount=2) <& \\\"x\\\">\", style=bold];\n  }\n  n1 -> n3 [label=\"so\", color=\"#9a9a9a\", fontcolor=\"#9a9a9a\"];\n  n0 -> n2 [label=\"wr bal\", color=\"#1f5fd1\", fontcolor=\"#1f5fd1\"];\n  n1 -> n2 [label=\"ww bal\", color=\"#d12a1f\", fontcolor=\"#d12a1f\", style=dashed, penwidth=2];\n  n2 -> n1 [label=\"rw bal\", color=\"#d12a1f\", fontcolor=\"#d12a1f\", style=dashed, penwidth=2];\n}\n",
                "digraph anomaly {\n  label=\"lost update under causal\\na note\";\n  labelloc=t;\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n  subgraph cluster_0 {\n    label=\"session 1\";\n    n1 [label=\"T(1, 0)\\nDeposit(amount=1) <& \\\"x\\\">\"];\n    n3 [label=\"T(1, 1)\\nDeposit(amount=3) <& \\\"x\\\">\"];\n  }\n  subgraph cluster_1 {\n    label=\"session 2\";\n    n2 [label=\"T(2, 0)\\nDeposit(amount=2) <& \\\"x\\\">\", style=bold];\n  }\n  n1 -> n3 [label=\"so\", color=\"#9a9a9a\", fontcolor=\"#9a9a9a\"];\n  n0 -> n2 [label=\"wr bal\", color=\"#1f5fd1\", fontcolor=\"#1f5fd1\"];\n  n1 -> n2 [label=\"ww bal\", color=\"#d12a1f\", fontcolor=\"#d12a1f\", style=dashed, penwidth=2];\n  n2 -> n1 [label=\"rw bal\", color=\"#d12a1f\", fontcolor=\"#d12a1f\", style=dashed, penwidth=2];\n}\n"
            ]
        );
    }

    #[test]
    fn long_text_is_cut() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }
}
