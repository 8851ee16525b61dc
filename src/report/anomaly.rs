//! Drawing an anomaly (after IsoPredict PLDI'24 Figs. 1–3 and 7–10): sessions as columns,
//! transactions as boxes in session order, the reads whose writer changed in blue and the
//! cycle that makes the execution unserializable in red (derived ww/rw edges dashed). One
//! model, [`AnomalyGraph`], rendered as Graphviz DOT ([`AnomalyGraph::to_dot`]) and as a
//! self-contained SVG with a simple deterministic layout ([`AnomalyGraph::to_svg`]), so no
//! Graphviz is needed to look at it.

use std::fmt::Write as _;

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
    /// The initial state's box, if some edge starts there.
    pub initial: Option<TxnBox>,
    /// The sessions.
    pub sessions: Vec<SessionColumn>,
    /// The edges.
    pub edges: Vec<GraphEdge>,
}

fn dot_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

fn xml_escape(s: &str) -> String {
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
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn color(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::SessionOrder | EdgeKind::ReadFrom => "#9a9a9a",
        EdgeKind::ChangedRead => "#1f5fd1",
        EdgeKind::Cycle => "#d12a1f",
    }
}

// Layout constants (pixels).
const COLUMN_WIDTH: f64 = 300.0;
const COLUMN_GAP: f64 = 120.0;
const BOX_WIDTH: f64 = 260.0;
const LINE_HEIGHT: f64 = 15.0;
const BOX_PAD: f64 = 8.0;
const ROW_GAP: f64 = 44.0;
const MARGIN: f64 = 30.0;
const CHARS_PER_LINE: usize = 38;

/// A placed box: its rectangle.
#[derive(Debug, Clone, Copy)]
struct Placed {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    column: Option<usize>,
}

impl Placed {
    fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    fn cy(&self) -> f64 {
        self.y + self.h / 2.0
    }
}

fn box_height(b: &TxnBox) -> f64 {
    BOX_PAD * 2.0 + LINE_HEIGHT * (1 + b.lines.len()) as f64
}

impl AnomalyGraph {
    /// Every box, the initial one first.
    fn boxes(&self) -> impl Iterator<Item = &TxnBox> {
        self.initial
            .iter()
            .chain(self.sessions.iter().flat_map(|s| s.txns.iter()))
    }

    /// Graphviz DOT: one cluster per session.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph anomaly {\n");
        let _ = writeln!(out, "  label={};", dot_quote(&self.title));
        out.push_str("  labelloc=t;\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n");
        let node = |out: &mut String, b: &TxnBox, indent: &str| {
            let mut label = b.title.clone();
            for l in &b.lines {
                label.push('\n');
                label.push_str(l);
            }
            let style = if b.emphasized { ", style=bold" } else { "" };
            let _ = writeln!(
                out,
                "{indent}n{} [label={}{style}];",
                b.id,
                dot_quote(&label)
            );
        };
        if let Some(b) = &self.initial {
            node(&mut out, b, "  ");
        }
        for (i, s) in self.sessions.iter().enumerate() {
            let _ = writeln!(out, "  subgraph cluster_{i} {{");
            let _ = writeln!(out, "    label={};", dot_quote(&s.title));
            for b in &s.txns {
                node(&mut out, b, "    ");
            }
            out.push_str("  }\n");
        }
        for e in &self.edges {
            let c = color(e.kind);
            let mut attrs = format!(
                "label={}, color=\"{c}\", fontcolor=\"{c}\"",
                dot_quote(&e.label)
            );
            if e.dashed {
                attrs.push_str(", style=dashed");
            }
            if e.kind == EdgeKind::Cycle {
                attrs.push_str(", penwidth=2");
            }
            let _ = writeln!(out, "  n{} -> n{} [{attrs}];", e.from, e.to);
        }
        out.push_str("}\n");
        out
    }

    /// A self-contained SVG: sessions as columns left to right, transactions top to bottom in
    /// session order, the initial state above; edges as curves with their labels, cycle edges
    /// thick red, changed reads blue, derived edges dashed. Deterministic (same graph, same
    /// bytes).
    pub fn to_svg(&self) -> String {
        // Place the boxes.
        let mut placed: Vec<(u32, Placed)> = Vec::new();
        let columns = self.sessions.len().max(1);
        let width =
            MARGIN * 2.0 + columns as f64 * COLUMN_WIDTH + (columns - 1) as f64 * COLUMN_GAP;
        let mut top = MARGIN + 28.0; // title
        if let Some(b) = &self.initial {
            let h = box_height(b);
            placed.push((
                b.id,
                Placed {
                    x: (width - BOX_WIDTH) / 2.0,
                    y: top,
                    w: BOX_WIDTH,
                    h,
                    column: None,
                },
            ));
            top += h + ROW_GAP * 1.5;
        }
        let header = top;
        top += 24.0; // column titles
                     // Rows are shared across columns so that boxes line up: row k is as tall as the
                     // tallest k-th transaction.
        let rows = self
            .sessions
            .iter()
            .map(|s| s.txns.len())
            .max()
            .unwrap_or(0);
        let mut row_y = Vec::with_capacity(rows);
        let mut y = top;
        for k in 0..rows {
            row_y.push(y);
            let h = self
                .sessions
                .iter()
                .filter_map(|s| s.txns.get(k))
                .map(box_height)
                .fold(0.0, f64::max);
            y += h + ROW_GAP;
        }
        let height = y - ROW_GAP + MARGIN + 10.0;
        let column_x = |i: usize| MARGIN + i as f64 * (COLUMN_WIDTH + COLUMN_GAP);
        for (i, s) in self.sessions.iter().enumerate() {
            for (k, b) in s.txns.iter().enumerate() {
                placed.push((
                    b.id,
                    Placed {
                        x: column_x(i) + (COLUMN_WIDTH - BOX_WIDTH) / 2.0,
                        y: row_y[k],
                        w: BOX_WIDTH,
                        h: box_height(b),
                        column: Some(i),
                    },
                ));
            }
        }
        let find = |id: u32| placed.iter().find(|(n, _)| *n == id).map(|(_, p)| *p);

        let mut out = String::new();
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"monospace\" font-size=\"11\">"
        );
        out.push_str("<defs>\n");
        for kind in [
            EdgeKind::SessionOrder,
            EdgeKind::ChangedRead,
            EdgeKind::Cycle,
        ] {
            let _ = writeln!(
                out,
                "<marker id=\"arrow-{}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"{}\"/></marker>",
                marker_name(kind),
                color(kind)
            );
        }
        out.push_str("</defs>\n");
        let _ = writeln!(
            out,
            "<rect x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\" fill=\"white\"/>"
        );
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"14\" font-weight=\"bold\">{}</text>",
            MARGIN,
            MARGIN + 6.0,
            xml_escape(&fit(&self.title, (width / 8.0) as usize))
        );
        for (i, s) in self.sessions.iter().enumerate() {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" font-weight=\"bold\">{}</text>",
                column_x(i) + COLUMN_WIDTH / 2.0,
                header + 12.0,
                xml_escape(&fit(&s.title, CHARS_PER_LINE))
            );
        }
        // Boxes.
        for b in self.boxes() {
            let Some(p) = find(b.id) else { continue };
            let stroke = if b.emphasized { 2.5 } else { 1.0 };
            let _ = writeln!(
                out,
                "<g id=\"n{}\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"#f7f7f2\" stroke=\"#333\" stroke-width=\"{stroke}\"/>",
                b.id, p.x, p.y, p.w, p.h
            );
            let mut ty = p.y + BOX_PAD + 11.0;
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{ty:.1}\" font-weight=\"bold\">{}</text>",
                p.x + BOX_PAD,
                xml_escape(&fit(&b.title, CHARS_PER_LINE))
            );
            for l in &b.lines {
                ty += LINE_HEIGHT;
                let _ = writeln!(
                    out,
                    "<text x=\"{:.1}\" y=\"{ty:.1}\">{}</text>",
                    p.x + BOX_PAD,
                    xml_escape(&fit(l, CHARS_PER_LINE))
                );
            }
            out.push_str("</g>\n");
        }
        // Edges: grey ones first, the cycle on top. Parallel edges between the same boxes
        // bend more and more.
        let mut order: Vec<usize> = (0..self.edges.len()).collect();
        order.sort_by_key(|&i| match self.edges[i].kind {
            EdgeKind::SessionOrder | EdgeKind::ReadFrom => 0,
            EdgeKind::ChangedRead => 1,
            EdgeKind::Cycle => 2,
        });
        let mut seen_pairs: Vec<((u32, u32), u32)> = Vec::new();
        for i in order {
            let e = &self.edges[i];
            let (Some(a), Some(b)) = (find(e.from), find(e.to)) else {
                continue;
            };
            let pair = (e.from.min(e.to), e.from.max(e.to));
            let nth = match seen_pairs.iter_mut().find(|(p, _)| *p == pair) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    seen_pairs.push((pair, 0));
                    0
                }
            };
            let (path, lx, ly) = edge_path(&a, &b, nth);
            let c = color(e.kind);
            let w = match e.kind {
                EdgeKind::Cycle => 2.5,
                EdgeKind::ChangedRead => 1.8,
                _ => 1.0,
            };
            let dash = if e.dashed {
                " stroke-dasharray=\"6 4\""
            } else {
                ""
            };
            let marker = match e.kind {
                EdgeKind::ReadFrom => marker_name(EdgeKind::SessionOrder),
                k => marker_name(k),
            };
            let _ = writeln!(
                out,
                "<path d=\"{path}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"{w}\"{dash} marker-end=\"url(#arrow-{marker})\"/>"
            );
            if !e.label.is_empty() {
                let label = fit(&e.label, 44);
                let lw = label.chars().count() as f64 * 6.6 + 6.0;
                let _ = writeln!(
                    out,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{lw:.1}\" height=\"14\" fill=\"white\" fill-opacity=\"0.85\"/><text x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{c}\">{}</text>",
                    lx - lw / 2.0,
                    ly - 10.0,
                    ly,
                    xml_escape(&label)
                );
            }
        }
        out.push_str("</svg>\n");
        out
    }
}

fn marker_name(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::SessionOrder | EdgeKind::ReadFrom => "grey",
        EdgeKind::ChangedRead => "blue",
        EdgeKind::Cycle => "red",
    }
}

/// An SVG path from box `a` to box `b` (the `nth` edge between them) and its label position.
fn edge_path(a: &Placed, b: &Placed, nth: u32) -> (String, f64, f64) {
    let bend = 1.0 + nth as f64 * 0.6;
    let same_column = a.column.is_some() && a.column == b.column;
    if same_column {
        // Along the column: straight down between neighbours, otherwise a bulge to the right.
        let (x, y1, y2) = if a.y < b.y {
            (a.x + a.w, a.y + a.h * 0.65, b.y + b.h * 0.35)
        } else {
            (a.x + a.w, a.y + a.h * 0.35, b.y + b.h * 0.65)
        };
        if nth == 0 && (b.y - (a.y + a.h)).abs() <= ROW_GAP + 1.0 {
            let (sx, sy, ey) = (a.cx(), a.y + a.h, b.y);
            return (
                format!("M {sx:.1} {sy:.1} L {sx:.1} {ey:.1}"),
                sx + 40.0,
                (sy + ey) / 2.0 + 4.0,
            );
        }
        let out = 36.0 * bend;
        return (
            format!(
                "M {x:.1} {y1:.1} C {:.1} {y1:.1}, {:.1} {y2:.1}, {x:.1} {y2:.1}",
                x + out,
                x + out
            ),
            x + out * 0.75,
            (y1 + y2) / 2.0,
        );
    }
    // Across columns (or from the initial state): leave and enter by the facing sides.
    let (sx, sy, ex, ey);
    if a.column.is_none() || b.column.is_none() {
        sx = a.cx();
        sy = if a.cy() < b.cy() { a.y + a.h } else { a.y };
        ex = b.cx();
        ey = if a.cy() < b.cy() { b.y } else { b.y + b.h };
        let dy = (ey - sy) * 0.5;
        let off = 30.0 * nth as f64;
        return (
            format!(
                "M {sx:.1} {sy:.1} C {:.1} {:.1}, {:.1} {:.1}, {ex:.1} {ey:.1}",
                sx + off,
                sy + dy,
                ex + off,
                ey - dy
            ),
            (sx + ex) / 2.0 + off,
            (sy + ey) / 2.0,
        );
    }
    if a.cx() < b.cx() {
        sx = a.x + a.w;
        ex = b.x;
    } else {
        sx = a.x;
        ex = b.x + b.w;
    }
    sy = a.cy() + (nth as f64 * 6.0).min(a.h / 2.0 - 2.0);
    ey = b.cy() + (nth as f64 * 6.0).min(b.h / 2.0 - 2.0);
    let dx = (ex - sx) * 0.45;
    let lift = 18.0 * nth as f64;
    (
        format!(
            "M {sx:.1} {sy:.1} C {:.1} {:.1}, {:.1} {:.1}, {ex:.1} {ey:.1}",
            sx + dx,
            sy - lift,
            ex - dx,
            ey - lift
        ),
        (sx + ex) / 2.0,
        (sy + ey) / 2.0 - lift * 0.75,
    )
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
        assert_eq!(svg.matches("<path d=").count(), 4 + 3); // 4 edges + 3 arrow heads
        assert_eq!(svg.matches("stroke=\"#d12a1f\"").count(), 2);
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

    #[test]
    fn long_text_is_cut() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }
}
