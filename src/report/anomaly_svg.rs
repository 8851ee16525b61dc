//! A deterministic SVG layout of an [`AnomalyGraph`] (the drawings of IsoPredict PLDI'24
//! Figs. 1–3, 7–10, without Graphviz): sessions are columns left to right, transactions boxes
//! top to bottom in session order, rows shared across columns; the initial state sits above.
//!
//! Edges are routed so they rarely cross boxes: consecutive session order is a short vertical
//! line; other edges within a column bulge into the gap on its right; edges between columns
//! leave and enter by the facing sides, at ports spread over the box's height (boxes grow to
//! give each port room); edges from the initial state run down the gap left of the target's
//! column and enter its left side. Edges are drawn under the boxes, labels (wrapped, on a
//! white background) on top, next to their edge: each label takes the first place, from its
//! arrow head back along its edge, where its rectangle touches no edge (its own included), no
//! box, no heading and no other label; a label with no such place is listed below the legend
//! ("labels placed here"), named by its edge's ends, so no label ever hides a line.

use std::fmt::Write as _;

use super::anomaly::{color, fit, xml_escape, AnomalyGraph, EdgeKind, TxnBox};

const BOX_WIDTH: f64 = 260.0;
const COLUMN_GAP: f64 = 200.0;
const MARGIN_X: f64 = 90.0;
const MARGIN_Y: f64 = 24.0;
const LINE_HEIGHT: f64 = 15.0;
const BOX_PAD: f64 = 8.0;
const PORT_SPACING: f64 = 26.0;
const ROW_GAP: f64 = 46.0;
const CHARS_PER_LINE: usize = 36;
const LABEL_CHARS: usize = 28;
const LABEL_CHAR_WIDTH: f64 = 5.8;
const LABEL_LINE: f64 = 11.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
    Bottom,
}

#[derive(Debug, Clone, Copy)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    /// `None` for the initial state's box.
    column: Option<usize>,
    /// Position in its column.
    row: usize,
}

impl Rect {
    fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
}

/// How an edge is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// Consecutive boxes of one column: a vertical line.
    Down,
    /// Within a column: a bulge into the gap on the right.
    Bulge,
    /// Between columns: facing sides.
    Across,
    /// From (or to) the initial state: down the gap left of the other box's column.
    FromTop,
}

struct Geometry {
    path: String,
    /// Label anchor (x, y of the last line's baseline) and whether it is right-aligned.
    label: (f64, f64, bool),
}

/// An axis-parallel rectangle (x, y, width, height).
#[derive(Debug, Clone, Copy)]
struct Area {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Area {
    /// This rectangle grown by `d` on every side.
    fn grown(self, d: f64) -> Area {
        Area {
            x: self.x - d,
            y: self.y - d,
            w: self.w + 2.0 * d,
            h: self.h + 2.0 * d,
        }
    }

    fn overlaps(&self, o: &Area) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }

    fn contains(&self, (x, y): (f64, f64)) -> bool {
        x > self.x && x < self.x + self.w && y > self.y && y < self.y + self.h
    }

    /// Whether the segment `a`–`b` passes through this rectangle (Liang–Barsky clipping).
    fn hit_by(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, a.0 - self.x),
            (dx, self.x + self.w - a.0),
            (-dy, a.1 - self.y),
            (dy, self.y + self.h - a.1),
        ] {
            if p == 0.0 {
                if q <= 0.0 {
                    return false;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
                if t0 >= t1 {
                    return false;
                }
            }
        }
        true
    }
}

/// The rectangle a label's lines take when anchored at `(x, y, right)` (see [`Geometry`]).
fn label_area(lines: &[String], (x, y, right): (f64, f64, bool)) -> Area {
    let w =
        lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * LABEL_CHAR_WIDTH + 6.0;
    let h = lines.len() as f64 * LABEL_LINE + 3.0;
    Area {
        x: if right { x - w + 3.0 } else { x - 3.0 },
        y: y - h + 3.0,
        w,
        h,
    }
}

/// The points of a path made of the commands this layout writes (`M`, `L`, `C`, `Q`, absolute
/// coordinates), curves flattened into 16 segments each.
fn flatten(path: &str) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut tokens = path.split([' ', ',']).filter(|t| !t.is_empty()).peekable();
    let numbers = |tokens: &mut std::iter::Peekable<_>, n: usize| -> Vec<f64> {
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let t: Option<&str> = tokens.next();
            v.push(t.and_then(|t| t.parse().ok()).unwrap_or(0.0));
        }
        v
    };
    while let Some(command) = tokens.next() {
        let last = points.last().copied().unwrap_or((0.0, 0.0));
        match command {
            "M" | "L" => {
                let v = numbers(&mut tokens, 2);
                points.push((v[0], v[1]));
            }
            "C" | "Q" => {
                let v = numbers(&mut tokens, if command == "C" { 6 } else { 4 });
                for k in 1..=16 {
                    let t = k as f64 / 16.0;
                    let u = 1.0 - t;
                    points.push(if command == "C" {
                        (
                            u * u * u * last.0
                                + 3.0 * u * u * t * v[0]
                                + 3.0 * u * t * t * v[2]
                                + t * t * t * v[4],
                            u * u * u * last.1
                                + 3.0 * u * u * t * v[1]
                                + 3.0 * u * t * t * v[3]
                                + t * t * t * v[5],
                        )
                    } else {
                        (
                            u * u * last.0 + 2.0 * u * t * v[0] + t * t * v[2],
                            u * u * last.1 + 2.0 * u * t * v[1] + t * t * v[3],
                        )
                    });
                }
            }
            _ => {}
        }
    }
    points
}

/// Points every `step` pixels along a polyline, from its last point back to its first.
fn along_from_end(points: &[(f64, f64)], step: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut carry = 0.0;
    for w in points.windows(2).rev() {
        let (b, a) = (w[0], w[1]); // walking from a back to b
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut d = carry;
        while d < len {
            let t = d / len;
            out.push((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
            d += step;
        }
        carry = d - len;
    }
    out
}

fn text_height(b: &TxnBox) -> f64 {
    BOX_PAD * 2.0 + LINE_HEIGHT * (1 + box_lines(b).len()) as f64
}

/// A box's lines wrapped to [`CHARS_PER_LINE`] characters, nothing cut: breaks after ", " or
/// a space where possible, inside a word only when it is longer than a line.
fn box_lines(b: &TxnBox) -> Vec<String> {
    let mut out = Vec::new();
    for line in &b.lines {
        let mut rest: &str = line;
        while rest.chars().count() > CHARS_PER_LINE {
            let limit = rest
                .char_indices()
                .nth(CHARS_PER_LINE)
                .map_or(rest.len(), |(i, _)| i);
            let head = &rest[..limit];
            let cut = head
                .rfind(", ")
                .map(|i| i + 2)
                .or_else(|| head.rfind(' ').map(|i| i + 1))
                .filter(|&i| i > 0)
                .unwrap_or(limit);
            out.push(rest[..cut].trim_end().to_string());
            rest = &rest[cut..];
        }
        out.push(rest.to_string());
    }
    out
}

/// The legend's entries: a line sample (colour, dashed, width; `None`: a bold box) and its
/// meaning.
const LEGEND: &[(Option<(EdgeKind, bool)>, &str)] = &[
    (
        Some((EdgeKind::SessionOrder, false)),
        "so: session order (the earlier transaction of a session points to the later); \
         wr (grey): a read of the anomaly as observed",
    ),
    (
        Some((EdgeKind::ChangedRead, false)),
        "wr, changed read: the reader reads this write in the prediction (\"(+N)\": N more keys)",
    ),
    (
        Some((EdgeKind::Cycle, false)),
        "cycle edge, so or wr: a fact of the predicted execution",
    ),
    (
        Some((EdgeKind::Cycle, true)),
        "cycle edge, derived: rw = the source read an older version of a key the target writes; \
         ww = both write the key, the source's write is older",
    ),
    (
        None,
        "bold box, \"(boundary)\": the last transaction of its session kept in the prediction",
    ),
];
const LEGEND_LINE: f64 = 18.0;
/// Most characters of a legend line: a longer meaning goes on in the next line.
const LEGEND_CHARS: usize = 80;
/// The width reserved per character of the 11-pixel text below the boxes (the legend, labels
/// listed there): 0.65 em, more than common monospace fonts take (about 0.60 em), so that no
/// renderer's font runs past the picture's right edge.
const TEXT_CHAR_WIDTH: f64 = 7.2;
/// Where the legend's text begins (after its line sample).
const LEGEND_TEXT_X: f64 = MARGIN_Y + 56.0;

/// One line of the legend as drawn: whether it begins its entry (and so has the entry's
/// sample: a line, or `None` for the bold box), and its text.
struct LegendLine {
    first: bool,
    sample: Option<(EdgeKind, bool)>,
    text: String,
}

/// The legend's lines: each meaning wrapped at spaces into lines of at most
/// [`LEGEND_CHARS`] characters.
fn legend_lines() -> Vec<LegendLine> {
    let mut out = Vec::new();
    for (sample, meaning) in LEGEND {
        let mut current = String::new();
        let mut first = true;
        for word in meaning.split(' ') {
            if !current.is_empty()
                && current.chars().count() + 1 + word.chars().count() > LEGEND_CHARS
            {
                out.push(LegendLine {
                    first,
                    sample: *sample,
                    text: std::mem::take(&mut current),
                });
                first = false;
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push(LegendLine {
            first,
            sample: *sample,
            text: current,
        });
    }
    out
}

/// The width a line of `chars` characters of the text below the boxes needs from `x`, with
/// the right margin.
fn text_right_edge(x: f64, chars: usize) -> f64 {
    x + chars as f64 * TEXT_CHAR_WIDTH + MARGIN_Y
}

/// `label` wrapped into lines of at most [`LABEL_CHARS`] characters, breaking after spaces
/// or before `[`; at most three lines.
fn wrap(label: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut words: Vec<String> = Vec::new();
    for w in label.split(' ') {
        // Words split before '[' (row keys), which join without a space when they fit.
        match w.find('[') {
            Some(i) if i > 0 => {
                words.push(w[..i].to_string());
                words.push(w[i..].to_string());
            }
            _ => words.push(w.to_string()),
        }
    }
    for w in words {
        let glue = if current.is_empty() || w.starts_with('[') {
            ""
        } else {
            " "
        };
        if current.chars().count() + glue.len() + w.chars().count() > LABEL_CHARS
            && !current.is_empty()
        {
            lines.push(std::mem::take(&mut current));
            current = w;
        } else {
            current.push_str(glue);
            current.push_str(&w);
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    if lines.len() > 3 {
        lines.truncate(3);
        lines[2] = fit(&(lines[2].clone() + "…"), LABEL_CHARS);
    }
    lines.into_iter().map(|l| fit(&l, LABEL_CHARS)).collect()
}

/// Each node's place: (id, column — `None` for the initial state — and row).
type Positions = Vec<(u32, Option<usize>, usize)>;

/// The (column, row) of node `id`.
fn position(positions: &Positions, id: u32) -> Option<(Option<usize>, usize)> {
    positions.iter().find(|n| n.0 == id).map(|n| (n.1, n.2))
}

/// Per (node, side), the edges attached there, in edge order.
struct Ports(Vec<((u32, Side), Vec<usize>)>);

impl Ports {
    fn attach(&mut self, node: u32, side: Side, edge: usize) {
        match self.0.iter_mut().find(|(k, _)| *k == (node, side)) {
            Some((_, v)) => v.push(edge),
            None => self.0.push(((node, side), vec![edge])),
        }
    }

    /// The edges at `side` of `node`, in order.
    fn at(&self, node: u32, side: Side) -> &[usize] {
        self.0
            .iter()
            .find(|(k, _)| *k == (node, side))
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    }
}

/// A box's height: its text, or more when its ports need the room.
fn box_height(b: &TxnBox, ports: &Ports) -> f64 {
    let count = ports
        .at(b.id, Side::Left)
        .len()
        .max(ports.at(b.id, Side::Right).len());
    text_height(b).max((count + 1) as f64 * PORT_SPACING)
}

/// Where the boxes, the headings and the legend go.
struct Placement {
    rects: Vec<(u32, Rect)>,
    /// The drawing's width and height before labels widen or lengthen it.
    width: f64,
    height: f64,
    margin_left: f64,
    note_height: f64,
    header_y: f64,
    legend_top: f64,
    /// The top of each row.
    row_y: Vec<f64>,
    columns: usize,
}

impl Placement {
    fn column_x(&self, c: usize) -> f64 {
        self.margin_left + c as f64 * (BOX_WIDTH + COLUMN_GAP)
    }

    fn rect(&self, id: u32) -> Option<Rect> {
        self.rects.iter().find(|(n, _)| *n == id).map(|(_, r)| *r)
    }

    /// Where edge `edge` meets `side` of `node`: its ports spread evenly over the side.
    fn port(&self, ports: &Ports, node: u32, side: Side, edge: usize) -> (f64, f64) {
        let r = self.rect(node).expect("placed");
        let list = ports.at(node, side);
        let n = list.len().max(1) as f64;
        let k = list.iter().position(|&e| e == edge).unwrap_or(0) as f64;
        match side {
            Side::Left => (r.x, r.y + r.h * (k + 1.0) / (n + 1.0)),
            Side::Right => (r.x + r.w, r.y + r.h * (k + 1.0) / (n + 1.0)),
            Side::Bottom => (r.x + r.w * (k + 1.0) / (n + 1.0), r.y + r.h),
        }
    }
}

/// Lanes taken so far, so that edges sharing a gap keep apart.
struct Lanes {
    /// Edges over a column in between, per source row.
    below_row: Vec<usize>,
    /// Bulges per column.
    bulges_in_column: Vec<usize>,
    /// Edges from the initial state, per target column.
    from_top_in_gap: Vec<usize>,
}

/// Where the labels go: each edge's anchor (`None`: no label or no free place), the edges
/// whose labels are listed below the legend, and the drawing's final size.
struct Labels {
    at: Vec<Option<(f64, f64, bool)>>,
    unplaced: Vec<usize>,
    width: f64,
    height: f64,
}

/// The label anchor of an edge between columns, by the arrow head.
fn across_label(rightward: bool, (ex, ey): (f64, f64)) -> (f64, f64, bool) {
    if rightward {
        (ex - 10.0, ey - 4.0, true)
    } else {
        (ex + 10.0, ey - 4.0, false)
    }
}

/// The smallest rectangle holding `points`.
fn bounding_area(points: &[(f64, f64)]) -> Area {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for &(x, y) in points {
        (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
    }
    Area {
        x: x0,
        y: y0,
        w: x1 - x0,
        h: y1 - y0,
    }
}

/// Where a label of `h` pixels may go, best first: its geometry's anchor, then beside the
/// edge from its arrow head back, then a little farther from it.
fn label_candidates(g: &Geometry, polyline: &[(f64, f64)], h: f64) -> Vec<(f64, f64, bool)> {
    let mut candidates = vec![g.label];
    let points = along_from_end(polyline, 10.0);
    for gap in [6.0, 24.0] {
        for &(x, y) in points.iter().take(150) {
            let v = gap - 6.0;
            candidates.extend([
                (x - gap, y - 6.0 - v, true),
                (x + gap, y - 6.0 - v, false),
                (x - gap, y + h / 2.0 - 3.0, true),
                (x + gap, y + h / 2.0 - 3.0, false),
                (x - gap, y + h + v, true),
                (x + gap, y + h + v, false),
            ]);
        }
    }
    candidates
}

impl AnomalyGraph {
    /// A self-contained SVG of the graph (see the module documentation); the same graph
    /// always gives the same bytes. Layout first (routes, ports, boxes, edge paths, labels),
    /// then drawing, back to front.
    pub fn to_svg(&self) -> String {
        let positions = self.positions();
        let routes = self.routes(&positions);
        let ports = self.ports(&routes, &positions);
        let placement = self.place_boxes(&routes, &ports, &positions);
        let geometry = self.edge_geometry(&routes, &ports, &placement);
        let labels = self.place_labels(&geometry, &placement);
        // Edges under the boxes: grey first, the cycle last; their labels in the same order.
        let mut order: Vec<usize> = (0..self.edges.len()).collect();
        order.sort_by_key(|&i| kind_rank(self.edges[i].kind));
        let mut out = String::new();
        self.draw_frame(&mut out, &placement, &labels);
        self.draw_edges(&mut out, &order, &routes, &placement, &geometry);
        self.draw_boxes(&mut out, &placement);
        self.draw_labels(&mut out, &order, &geometry, &labels);
        Self::draw_legend(&mut out, placement.legend_top);
        self.draw_unplaced(&mut out, placement.legend_top, &labels.unplaced);
        out.push_str("</svg>\n");
        out
    }

    /// Each node's column and row.
    fn positions(&self) -> Positions {
        let mut nodes: Positions = Vec::new();
        if let Some(b) = &self.initial {
            nodes.push((b.id, None, 0));
        }
        for (c, s) in self.sessions.iter().enumerate() {
            for (r, b) in s.txns.iter().enumerate() {
                nodes.push((b.id, Some(c), r));
            }
        }
        nodes
    }

    /// How each edge is drawn (`None`: an end is not drawn).
    fn routes(&self, positions: &Positions) -> Vec<Option<Route>> {
        self.edges
            .iter()
            .map(|e| {
                let (a, b) = (position(positions, e.from)?, position(positions, e.to)?);
                Some(match (a.0, b.0) {
                    (None, _) | (_, None) => Route::FromTop,
                    (Some(x), Some(y)) if x != y => Route::Across,
                    _ if e.kind == EdgeKind::SessionOrder && b.1 == a.1 + 1 => Route::Down,
                    _ => Route::Bulge,
                })
            })
            .collect()
    }

    /// The ports of every routed edge at its two ends.
    fn ports(&self, routes: &[Option<Route>], positions: &Positions) -> Ports {
        let mut ports = Ports(Vec::new());
        for (i, (e, route)) in self.edges.iter().zip(routes).enumerate() {
            let Some(route) = route else { continue };
            let (a, b) = (
                position(positions, e.from).unwrap(),
                position(positions, e.to).unwrap(),
            );
            match route {
                Route::Down => {}
                Route::Bulge => {
                    ports.attach(e.from, Side::Right, i);
                    ports.attach(e.to, Side::Right, i);
                }
                Route::Across => {
                    let rightward = a.0 < b.0;
                    ports.attach(e.from, if rightward { Side::Right } else { Side::Left }, i);
                    ports.attach(e.to, if rightward { Side::Left } else { Side::Right }, i);
                }
                Route::FromTop => {
                    let (top, other) = if a.0.is_none() {
                        (e.from, e.to)
                    } else {
                        (e.to, e.from)
                    };
                    ports.attach(top, Side::Bottom, i);
                    ports.attach(other, Side::Left, i);
                }
            }
        }
        ports
    }

    /// Places the boxes: the initial state centred on top, then the sessions' columns, rows
    /// as tall as their tallest box; the legend below.
    fn place_boxes(
        &self,
        routes: &[Option<Route>],
        ports: &Ports,
        positions: &Positions,
    ) -> Placement {
        let columns = self.sessions.len().max(1);
        // Labels of edges from the initial state into the first column sit left of it.
        let into_first_column = self.edges.iter().zip(routes).any(|(e, r)| {
            *r == Some(Route::FromTop)
                && [e.from, e.to]
                    .iter()
                    .any(|&n| position(positions, n).is_some_and(|p| p.0 == Some(0)))
        });
        let margin_left = if into_first_column {
            MARGIN_X + COLUMN_GAP - 60.0
        } else {
            MARGIN_X
        };
        let legend_width = legend_lines()
            .iter()
            .map(|l| text_right_edge(LEGEND_TEXT_X, l.text.chars().count()))
            .fold(0.0, f64::max);
        let width = (margin_left
            + MARGIN_X
            + columns as f64 * BOX_WIDTH
            + (columns - 1) as f64 * COLUMN_GAP)
            .max(legend_width);
        let mut rects: Vec<(u32, Rect)> = Vec::new();
        let note_height = if self.note.is_some() { 18.0 } else { 0.0 };
        let mut top = MARGIN_Y + 30.0 + note_height;
        if let Some(b) = &self.initial {
            let w = BOX_WIDTH.max(20.0 * ports.at(b.id, Side::Bottom).len() as f64);
            rects.push((
                b.id,
                Rect {
                    x: (width - w) / 2.0,
                    y: top,
                    w,
                    h: text_height(b),
                    column: None,
                    row: 0,
                },
            ));
            top += text_height(b) + ROW_GAP;
        }
        let header_y = top + 12.0;
        top += 26.0;
        let rows = self
            .sessions
            .iter()
            .map(|s| s.txns.len())
            .max()
            .unwrap_or(0);
        let mut row_y = Vec::with_capacity(rows);
        let mut y = top;
        for r in 0..rows {
            row_y.push(y);
            y += self.row_height(ports, r) + ROW_GAP;
        }
        let legend_top = y - ROW_GAP + 64.0;
        let height = legend_top + legend_lines().len() as f64 * LEGEND_LINE + MARGIN_Y;
        let mut placement = Placement {
            rects,
            width,
            height,
            margin_left,
            note_height,
            header_y,
            legend_top,
            row_y,
            columns,
        };
        for (c, s) in self.sessions.iter().enumerate() {
            for (r, b) in s.txns.iter().enumerate() {
                let rect = Rect {
                    x: placement.column_x(c),
                    y: placement.row_y[r],
                    w: BOX_WIDTH,
                    h: box_height(b, ports),
                    column: Some(c),
                    row: r,
                };
                placement.rects.push((b.id, rect));
            }
        }
        placement
    }

    /// The height of row `r`'s tallest box.
    fn row_height(&self, ports: &Ports, r: usize) -> f64 {
        self.sessions
            .iter()
            .filter_map(|s| s.txns.get(r))
            .map(|b| box_height(b, ports))
            .fold(0.0, f64::max)
    }

    /// The path of each routed edge, with its label's first-choice anchor.
    fn edge_geometry(
        &self,
        routes: &[Option<Route>],
        ports: &Ports,
        placement: &Placement,
    ) -> Vec<Option<Geometry>> {
        let mut lanes = Lanes {
            below_row: vec![0; placement.row_y.len().max(1)],
            bulges_in_column: vec![0; placement.columns],
            from_top_in_gap: vec![0; placement.columns],
        };
        self.edges
            .iter()
            .zip(routes)
            .enumerate()
            .map(|(i, (e, route))| {
                let route = (*route)?;
                let (a, b) = (placement.rect(e.from)?, placement.rect(e.to)?);
                let port = |node: u32, side: Side| placement.port(ports, node, side, i);
                Some(match route {
                    Route::Down => {
                        let x = a.cx();
                        Geometry {
                            path: format!("M {x:.1} {:.1} L {x:.1} {:.1}", a.y + a.h, b.y),
                            label: (x + 6.0, (a.y + a.h + b.y) / 2.0 + 4.0, false),
                        }
                    }
                    Route::Bulge => {
                        let c = a.column.unwrap_or(0);
                        let k = lanes.bulges_in_column[c];
                        lanes.bulges_in_column[c] += 1;
                        bulge(port(e.from, Side::Right), port(e.to, Side::Right), k)
                    }
                    Route::Across => {
                        let rightward = a.column < b.column;
                        let (from_side, to_side) = if rightward {
                            (Side::Right, Side::Left)
                        } else {
                            (Side::Left, Side::Right)
                        };
                        let (start, end) = (port(e.from, from_side), port(e.to, to_side));
                        let span = a.column.unwrap_or(0).abs_diff(b.column.unwrap_or(0));
                        if span > 1 {
                            // Over a column in between: through the gap below the source's
                            // row (a lane of its own), never under the boxes in between.
                            let k = lanes.below_row[a.row];
                            lanes.below_row[a.row] += 1;
                            let row_bottom = placement.row_y[a.row] + self.row_height(ports, a.row);
                            let lane = row_bottom + 12.0 + 8.0 * (k % 4) as f64;
                            over_columns(start, end, lane, rightward)
                        } else {
                            across(start, end, rightward)
                        }
                    }
                    Route::FromTop => {
                        let initial_first = a.column.is_none();
                        let (top_id, other_id, other) = if initial_first {
                            (e.from, e.to, b)
                        } else {
                            (e.to, e.from, a)
                        };
                        let column = other.column.unwrap_or(0);
                        let k = lanes.from_top_in_gap[column];
                        lanes.from_top_in_gap[column] += 1;
                        from_top(
                            port(top_id, Side::Bottom),
                            port(other_id, Side::Left),
                            other,
                            k,
                        )
                    }
                })
            })
            .collect()
    }

    /// Places the labels: the cycle's first, each at the first free spot by its edge; the
    /// drawing widens for labels past its right side and lengthens for the unplaced ones.
    fn place_labels(&self, geometry: &[Option<Geometry>], placement: &Placement) -> Labels {
        let polylines: Vec<Vec<(f64, f64)>> = geometry
            .iter()
            .map(|g| g.as_ref().map_or(Vec::new(), |g| flatten(&g.path)))
            .collect();
        let bounds: Vec<Area> = polylines.iter().map(|p| bounding_area(p)).collect();
        let mut taken = self.label_obstacles(placement);
        let legend_top = placement.legend_top;
        let free = |area: Area, taken: &[Area]| -> bool {
            let clear = area.grown(2.0);
            // Past the right margin is fine: the drawing widens.
            clear.x >= 0.0
                && clear.y >= 0.0
                && clear.y + clear.h <= legend_top - 20.0
                && !taken.iter().any(|t| t.overlaps(&clear))
                && polylines.iter().zip(&bounds).all(|(p, b)| {
                    !b.grown(1.0).overlaps(&clear)
                        || !(p.iter().any(|&q| clear.contains(q))
                            || p.windows(2).any(|w| clear.hit_by(w[0], w[1])))
                })
        };
        let mut by_priority: Vec<usize> = (0..self.edges.len()).collect();
        by_priority.sort_by_key(|&i| std::cmp::Reverse(kind_rank(self.edges[i].kind)));
        let mut at: Vec<Option<(f64, f64, bool)>> = vec![None; self.edges.len()];
        let mut unplaced: Vec<usize> = Vec::new();
        for &i in &by_priority {
            let (e, Some(g)) = (&self.edges[i], &geometry[i]) else {
                continue;
            };
            if e.label.is_empty() {
                continue;
            }
            let lines = wrap(&e.label);
            let h = lines.len() as f64 * LABEL_LINE + 3.0;
            match label_candidates(g, &polylines[i], h)
                .into_iter()
                .find(|&c| free(label_area(&lines, c), &taken))
            {
                Some(c) => {
                    taken.push(label_area(&lines, c));
                    at[i] = Some(c);
                }
                None => unplaced.push(i),
            }
        }
        unplaced.sort_unstable();
        let height = placement.height + unplaced.len() as f64 * LEGEND_LINE;
        let width =
            at.iter()
                .zip(&self.edges)
                .filter_map(|(at, e)| Some(label_area(&wrap(&e.label), (*at)?)))
                .map(|a| a.x + a.w + 10.0)
                .chain(unplaced.iter().enumerate().map(|(k, &i)| {
                    text_right_edge(MARGIN_Y, self.unplaced_text(k, i).chars().count())
                }))
                .fold(placement.width, f64::max);
        Labels {
            at,
            unplaced,
            width,
            height,
        }
    }

    /// What labels must not cover: the boxes, the title's band and the sessions' headings.
    fn label_obstacles(&self, placement: &Placement) -> Vec<Area> {
        let mut taken: Vec<Area> = placement
            .rects
            .iter()
            .map(|(_, r)| Area {
                x: r.x,
                y: r.y,
                w: r.w,
                h: r.h,
            })
            .collect();
        taken.push(Area {
            x: 0.0,
            y: 0.0,
            w: placement.width,
            h: MARGIN_Y + 14.0,
        });
        for (c, s) in self.sessions.iter().enumerate() {
            let w = 7.5 * fit(&s.title, CHARS_PER_LINE).chars().count() as f64 + 8.0;
            taken.push(Area {
                x: placement.column_x(c) + BOX_WIDTH / 2.0 - w / 2.0,
                y: placement.header_y - 13.0,
                w,
                h: 17.0,
            });
        }
        taken
    }

    /// The SVG element, the arrow markers, the background, the title, the note and the
    /// sessions' headings.
    fn draw_frame(&self, out: &mut String, placement: &Placement, labels: &Labels) {
        let (width, height) = (labels.width, labels.height);
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
            MARGIN_Y,
            MARGIN_Y + 8.0,
            xml_escape(&fit(&self.title, (width / 8.5) as usize))
        );
        if let Some(note) = &self.note {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>",
                MARGIN_Y,
                MARGIN_Y + 8.0 + placement.note_height,
                xml_escape(&fit(note, (width / 7.0) as usize))
            );
        }
        for (c, s) in self.sessions.iter().enumerate() {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" font-weight=\"bold\">{}</text>",
                placement.column_x(c) + BOX_WIDTH / 2.0,
                placement.header_y,
                xml_escape(&fit(&s.title, CHARS_PER_LINE))
            );
        }
    }

    /// The edges, in `order`; an edge into the initial state is drawn from it, arrow at its
    /// start.
    fn draw_edges(
        &self,
        out: &mut String,
        order: &[usize],
        routes: &[Option<Route>],
        placement: &Placement,
        geometry: &[Option<Geometry>],
    ) {
        for &i in order {
            let (e, Some(g)) = (&self.edges[i], &geometry[i]) else {
                continue;
            };
            let width = match e.kind {
                EdgeKind::Cycle => 2.5,
                EdgeKind::ChangedRead => 1.8,
                _ => 1.0,
            };
            let dash = if e.dashed {
                " stroke-dasharray=\"6 4\""
            } else {
                ""
            };
            let reversed = routes[i] == Some(Route::FromTop)
                && placement.rect(e.from).is_some_and(|r| r.column.is_some());
            let marker = if reversed {
                "marker-start"
            } else {
                "marker-end"
            };
            let _ = writeln!(
                out,
                "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{width}\"{dash} {marker}=\"url(#arrow-{})\"/>",
                g.path,
                color(e.kind),
                marker_name(e.kind)
            );
        }
    }

    /// The boxes: a title and the wrapped lines of each.
    fn draw_boxes(&self, out: &mut String, placement: &Placement) {
        for b in self.boxes() {
            let Some(r) = placement.rect(b.id) else {
                continue;
            };
            let stroke = if b.emphasized { 2.5 } else { 1.0 };
            let _ = writeln!(
                out,
                "<g id=\"n{}\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"#f7f7f2\" stroke=\"#333\" stroke-width=\"{stroke}\"/>",
                b.id, r.x, r.y, r.w, r.h
            );
            let mut ty = r.y + BOX_PAD + 11.0;
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{ty:.1}\" font-weight=\"bold\">{}</text>",
                r.x + BOX_PAD,
                xml_escape(&fit(&b.title, CHARS_PER_LINE))
            );
            for l in box_lines(b) {
                ty += LINE_HEIGHT;
                let _ = writeln!(
                    out,
                    "<text x=\"{:.1}\" y=\"{ty:.1}\">{}</text>",
                    r.x + BOX_PAD,
                    xml_escape(&l)
                );
            }
            out.push_str("</g>\n");
        }
    }

    /// The placed labels on top, each on a white background.
    fn draw_labels(
        &self,
        out: &mut String,
        order: &[usize],
        geometry: &[Option<Geometry>],
        labels: &Labels,
    ) {
        for &i in order {
            let (e, Some(_)) = (&self.edges[i], &geometry[i]) else {
                continue;
            };
            if e.label.is_empty() {
                continue;
            }
            let Some((x, y, right)) = labels.at[i] else {
                continue;
            };
            let lines = wrap(&e.label);
            let area = label_area(&lines, (x, y, right));
            let anchor = if right { "end" } else { "start" };
            let _ = writeln!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"white\" fill-opacity=\"0.9\"/>",
                area.x, area.y, area.w, area.h
            );
            for (k, l) in lines.iter().enumerate() {
                let ly = y - (lines.len() - 1 - k) as f64 * LABEL_LINE;
                let _ = writeln!(
                    out,
                    "<text x=\"{x:.1}\" y=\"{ly:.1}\" font-size=\"9.5\" text-anchor=\"{anchor}\" fill=\"{}\">{}</text>",
                    color(e.kind),
                    xml_escape(l)
                );
            }
        }
    }

    /// The legend, from `legend_top`.
    fn draw_legend(out: &mut String, legend_top: f64) {
        let _ = writeln!(
            out,
            "<text x=\"{MARGIN_Y:.1}\" y=\"{legend_top:.1}\" font-weight=\"bold\">Legend</text>"
        );
        for (k, line) in legend_lines().iter().enumerate() {
            let y = legend_top + (k + 1) as f64 * LEGEND_LINE - 4.0;
            let (x0, x1) = (MARGIN_Y, MARGIN_Y + 44.0);
            match (line.first, line.sample) {
                (false, _) => {}
                (true, Some((kind, dashed))) => {
                    let dash = if dashed {
                        " stroke-dasharray=\"6 4\""
                    } else {
                        ""
                    };
                    let width = if kind == EdgeKind::Cycle { 2.5 } else { 1.5 };
                    let _ = writeln!(
                        out,
                        "<path d=\"M {x0:.1} {:.1} L {x1:.1} {:.1}\" stroke=\"{}\" stroke-width=\"{width}\"{dash} marker-end=\"url(#arrow-{})\"/>",
                        y - 4.0,
                        y - 4.0,
                        color(kind),
                        marker_name(kind)
                    );
                }
                (true, None) => {
                    let _ = writeln!(
                        out,
                        "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"44\" height=\"12\" rx=\"2\" fill=\"#f7f7f2\" stroke=\"#333\" stroke-width=\"2.5\"/>",
                        y - 10.0
                    );
                }
            }
            debug_assert_eq!(x1 + 12.0, LEGEND_TEXT_X);
            let _ = writeln!(
                out,
                "<text x=\"{LEGEND_TEXT_X:.1}\" y=\"{y:.1}\">{}</text>",
                xml_escape(&line.text)
            );
        }
    }

    /// Labels that found no free place beside their edge, listed below the legend, named by
    /// their edge's ends.
    fn draw_unplaced(&self, out: &mut String, legend_top: f64, unplaced: &[usize]) {
        let legend = legend_lines().len();
        for (k, &i) in unplaced.iter().enumerate() {
            let e = &self.edges[i];
            let y = legend_top + (legend + 1 + k) as f64 * LEGEND_LINE - 4.0;
            let _ = writeln!(
                out,
                "<text x=\"{MARGIN_Y:.1}\" y=\"{y:.1}\" fill=\"{}\">{}</text>",
                color(e.kind),
                xml_escape(&self.unplaced_text(k, i))
            );
        }
    }

    /// The line of edge `i`'s label, the `k`-th listed below the legend.
    fn unplaced_text(&self, k: usize, i: usize) -> String {
        let name = |id: u32| {
            self.boxes()
                .find(|b| b.id == id)
                .map_or(id.to_string(), |b| b.title.clone())
        };
        let e = &self.edges[i];
        format!(
            "{} → {}: {}{}",
            name(e.from),
            name(e.to),
            e.label,
            if k == 0 {
                " (labels placed here: no free place beside their edge)"
            } else {
                ""
            }
        )
    }
}

/// A bulge within a column, from `(sx, sy)` out to the right and back to `(ex, ey)`; `k`: the
/// bulges of the column before it. Each bulge of a column has its own lane, 36 px apart, so
/// that opposite arcs between the same boxes stay apart.
fn bulge((sx, sy): (f64, f64), (ex, ey): (f64, f64), k: usize) -> Geometry {
    let out = sx + 34.0 + 36.0 * (k % 4) as f64;
    Geometry {
        path: format!("M {sx:.1} {sy:.1} C {out:.1} {sy:.1}, {out:.1} {ey:.1}, {ex:.1} {ey:.1}"),
        // Bulges between the same rows would share a midpoint: stagger.
        label: (
            out - 4.0,
            (sy + ey) / 2.0 + 4.0 + 26.0 * (k % 3) as f64 - 13.0,
            false,
        ),
    }
}

/// An edge between neighbouring columns: a curve between the facing sides.
fn across((sx, sy): (f64, f64), (ex, ey): (f64, f64), rightward: bool) -> Geometry {
    let dx = (ex - sx) * 0.5;
    Geometry {
        path: format!(
            "M {sx:.1} {sy:.1} C {:.1} {sy:.1}, {:.1} {ey:.1}, {ex:.1} {ey:.1}",
            sx + dx,
            ex - dx
        ),
        label: across_label(rightward, (ex, ey)),
    }
}

/// An edge over a column in between, along the horizontal lane at `lane`.
fn over_columns(
    (sx, sy): (f64, f64),
    (ex, ey): (f64, f64),
    lane: f64,
    rightward: bool,
) -> Geometry {
    let step = if rightward { 22.0 } else { -22.0 };
    let (g1, g2) = (sx + step, ex - step);
    Geometry {
        path: format!(
            "M {sx:.1} {sy:.1} L {g1:.1} {sy:.1} L {g1:.1} {lane:.1} L {g2:.1} {lane:.1} L {g2:.1} {ey:.1} L {ex:.1} {ey:.1}"
        ),
        label: across_label(rightward, (ex, ey)),
    }
}

/// An edge from the initial state's bottom port `(px, py)` down the gap left of `other`'s
/// column into its left port `(tx, ty)`; `k`: such edges into that column before it.
fn from_top((px, py): (f64, f64), (tx, ty): (f64, f64), other: Rect, k: usize) -> Geometry {
    let gx = other.x - 30.0 - 6.0 * (other.row % 4) as f64;
    let turn = py + 24.0;
    let path = format!(
        "M {px:.1} {py:.1} C {px:.1} {turn:.1}, {gx:.1} {py:.1}, {gx:.1} {:.1} L {gx:.1} {:.1} Q {gx:.1} {ty:.1}, {tx:.1} {ty:.1}",
        turn + 20.0,
        (ty - 14.0).max(turn + 20.0),
    );
    // The label by the vertical run, near its top (the gap is free there).
    Geometry {
        path,
        label: (gx - 4.0, turn + 40.0 + 26.0 * (k % 3) as f64, true),
    }
}

fn kind_rank(kind: EdgeKind) -> u8 {
    match kind {
        EdgeKind::SessionOrder | EdgeKind::ReadFrom => 0,
        EdgeKind::ChangedRead => 1,
        EdgeKind::Cycle => 2,
    }
}

fn marker_name(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::SessionOrder | EdgeKind::ReadFrom => "grey",
        EdgeKind::ChangedRead => "blue",
        EdgeKind::Cycle => "red",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::anomaly::{GraphEdge, SessionColumn};

    fn txn(id: u32, line: &str) -> TxnBox {
        TxnBox {
            id,
            title: format!("T{id}"),
            lines: vec![line.to_string()],
            emphasized: false,
        }
    }

    /// Three sessions; a changed read from session 1 to session 3 (over session 2) and two
    /// opposite cycle edges within session 1; a call far longer than a box line.
    fn three_columns() -> AnomalyGraph {
        let long = "NewOrder(w_id=1, d_id=1, c_id=2, 13 lines: items 1, supply w 1, quantities \
                    10 9 5 9 6 7 7 2 6 4 3 1 8)";
        let edge = |from, to, kind, dashed| GraphEdge {
            from,
            to,
            label: "rw k".to_string(),
            kind,
            dashed,
        };
        AnomalyGraph {
            title: "t".to_string(),
            note: None,
            initial: None,
            sessions: vec![
                SessionColumn {
                    title: "session 1".to_string(),
                    txns: vec![txn(1, long), txn(2, "Payment(w_id=1)")],
                },
                SessionColumn {
                    title: "session 2".to_string(),
                    txns: vec![txn(3, "Delivery(w_id=1, o_carrier_id=3)")],
                },
                SessionColumn {
                    title: "session 3".to_string(),
                    txns: vec![txn(4, "StockLevel(w_id=1)")],
                },
            ],
            edges: vec![
                edge(1, 4, EdgeKind::ChangedRead, false),
                edge(1, 2, EdgeKind::Cycle, true),
                edge(2, 1, EdgeKind::Cycle, true),
            ],
        }
    }

    fn numbers(path: &str) -> Vec<f64> {
        path.split([' ', ','])
            .filter_map(|w| w.parse().ok())
            .collect()
    }

    fn paths(svg: &str, stroke: &str) -> Vec<String> {
        svg.lines()
            .filter(|l| l.starts_with("<path d=\"") && l.contains(stroke))
            .map(|l| l[9..l[9..].find('"').unwrap() + 9].to_string())
            .collect()
    }

    /// The picture's width (its `width` attribute, which the viewBox repeats).
    fn svg_width(svg: &str) -> f64 {
        let head = svg.lines().next().unwrap();
        let w: f64 = head
            .split("width=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(head.contains(&format!("viewBox=\"0 0 {w:.0} ")), "{head}");
        w
    }

    /// Each text line from the legend down: (x, its characters).
    fn lines_below_the_legend(svg: &str) -> Vec<(f64, usize)> {
        let text = |l: &str| {
            let body = &l[l.find('>').unwrap() + 1..l.rfind("</text>").unwrap()];
            body.replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .chars()
                .count()
        };
        svg.lines()
            .skip_while(|l| !l.contains(">Legend</text>"))
            .skip(1)
            .filter(|l| l.starts_with("<text x=\""))
            .map(|l| (l[9..].split('"').next().unwrap().parse().unwrap(), text(l)))
            .collect()
    }

    #[test]
    fn the_legend_ends_inside_the_picture_in_any_monospace_font() {
        // One column: the picture is as narrow as it gets, so the legend sets its width.
        let mut one = three_columns();
        one.sessions.truncate(1);
        one.edges.clear();
        for g in [three_columns(), one] {
            let svg = g.to_svg();
            let width = svg_width(&svg);
            let lines = lines_below_the_legend(&svg);
            assert!(lines.len() >= LEGEND.len(), "{svg}");
            for (x, chars) in lines {
                // 0.65 em per character at 11 px, wider than common monospace fonts.
                let right = x + chars as f64 * 0.65 * 11.0;
                assert!(
                    right <= width - 10.0,
                    "a legend line of {chars} characters from x = {x} ends at {right}, past \
                     the picture's width {width}"
                );
            }
        }
    }

    #[test]
    fn legend_full_calls_edges_around_boxes_and_opposite_arcs_apart() {
        let svg = three_columns().to_svg();
        // A legend for every line style and colour, and the boundary box.
        for meaning in [
            "Legend",
            "so: session order",
            "changed read",
            "cycle edge, so or wr",
            "rw = the source read an older version",
            "(boundary)",
        ] {
            assert!(
                svg.contains(&xml_escape(meaning)),
                "the legend explains {meaning}"
            );
        }
        // No call cut: every word of the long call is drawn.
        assert!(!svg.contains('…'));
        for word in ["lines:", "quantities", "8)"] {
            assert!(svg.contains(word), "{word}");
        }
        // The edge over session 2 runs below its box, not under it.
        let rect = |id: u32| -> (f64, f64, f64, f64) {
            let tag = format!("<g id=\"n{id}\"><rect ");
            let line = svg.lines().find(|l| l.starts_with(&tag)).unwrap();
            let v = |attr: &str| -> f64 {
                let at = line.find(&format!(" {attr}=\"")).unwrap() + attr.len() + 3;
                line[at..at + line[at..].find('"').unwrap()]
                    .parse()
                    .unwrap()
            };
            (v("x"), v("y"), v("width"), v("height"))
        };
        let (bx, by, bw, bh) = rect(3);
        let blue = paths(&svg, "stroke=\"#1f5fd1\" stroke-width=\"1.8\"");
        assert_eq!(blue.len(), 1);
        let p = numbers(&blue[0]);
        // M sx sy L g1 sy L g1 lane L g2 lane L g2 ey L ex ey
        let lane = p[5];
        assert!(
            p[4] < bx && p[6] > bx + bw,
            "the lane passes session 2's column"
        );
        assert!(lane > by + bh, "the lane runs below session 2's box");
        // The two opposite arcs bulge to different depths, well apart.
        let red = paths(
            &svg,
            "stroke=\"#d12a1f\" stroke-width=\"2.5\" stroke-dasharray",
        );
        let bulge: Vec<f64> = red
            .iter()
            .filter(|p| p.contains(" C "))
            .map(|p| numbers(p)[2])
            .collect();
        assert_eq!(bulge.len(), 2);
        assert!((bulge[0] - bulge[1]).abs() >= 30.0, "{bulge:?}");
    }

    #[test]
    fn labels_wrap_before_row_keys() {
        assert_eq!(
            wrap("wr CHECKING.bal[custid=1] (+1)"),
            vec!["wr CHECKING.bal[custid=1]", "(+1)"]
        );
        assert_eq!(
            wrap("rw ORDER_LINE.ol_delivery_d[ol_w_id=1, ol_d_id=2]"),
            vec!["rw ORDER_LINE.ol_delivery_d", "[ol_w_id=1, ol_d_id=2]"]
        );
        assert_eq!(wrap("so"), vec!["so"]);
    }
}
