//! The risk ranking as an SVG bar chart: one horizontal bar per program, highest score on
//! top, stacked by the levels' contributions (docs/ranking.md), with a legend; beside each
//! bar, one mark per level saying where the program stands there — an anomaly, proven free
//! (every run's "none" has its certificate), or not decided — since a score of 0 at a level
//! is both "proven free" and "nothing decided". Deterministic and self-contained.

use super::anomaly::xml_escape;
use std::fmt::Write as _;

use super::tables::{RiskRow, Standing};

/// Width of a level's standing mark, and the gap after it.
const MARK_WIDTH: f64 = 72.0;
const MARK_GAP: f64 = 6.0;

/// The marks' legend: each standing and what it means.
const MARKS_LEGEND: [(Standing, &str); 3] = [
    (
        Standing::ProvenFree,
        "every run's \"none\" has a certificate (its recorded calls only)",
    ),
    (Standing::Exposed, "some run has an anomaly"),
    (
        Standing::Undecided,
        "no anomaly found, not proven (unknown)",
    ),
];

/// The room a legend entry takes: its mark, its text (about 6.5 px a character at 11 px)
/// and a gap.
fn legend_step(meaning: &str) -> f64 {
    MARK_WIDTH + 5.0 + 6.5 * meaning.chars().count() as f64 + 16.0
}

/// A standing's mark: (fill, stroke, text colour, dashed outline, text).
fn mark_style(
    standing: Standing,
) -> (&'static str, &'static str, &'static str, bool, &'static str) {
    match standing {
        Standing::Exposed => ("#fdecea", "#c0392b", "#c0392b", false, "anomaly"),
        // Free in the runs' recorded calls, not in every execution of the program.
        Standing::ProvenFree => ("#1e8449", "#1e8449", "white", false, "free in runs"),
        Standing::Undecided => ("#f4f4f4", "#7f8c8d", "#555", true, "? undecided"),
    }
}

/// One mark: a rounded box at (x, y) with its text.
fn write_mark(out: &mut String, x: f64, y: f64, h: f64, standing: Standing, tooltip: &str) {
    let (fill, stroke, text, dashed, label) = mark_style(standing);
    let _ = writeln!(
        out,
        "<g><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{MARK_WIDTH:.1}\" height=\"{h:.1}\" rx=\"4\" fill=\"{fill}\" stroke=\"{stroke}\"{}/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\" fill=\"{text}\">{label}</text></g>",
        xml_escape(tooltip),
        if dashed { " stroke-dasharray=\"3,2\"" } else { "" },
        x + MARK_WIDTH / 2.0,
        y + h / 2.0 + 3.5
    );
}

/// The bars' colours by the level's place in the grid, strongest first (five levels at most:
/// si, pc, causal, ra, rc), each its own.
const LEVEL_COLORS: [&str; 5] = ["#c0392b", "#e67e22", "#f1c40f", "#5d6d7e", "#aab7b8"];

/// The chart of `rows` (in their order), titled `title`.
pub fn risk_chart_svg(rows: &[RiskRow], title: &str) -> String {
    let label_width = 10.0
        + 7.5
            * rows
                .iter()
                .map(|r| r.program.chars().count())
                .max()
                .unwrap_or(4)
                .max(4) as f64;
    let bar_area = 480.0;
    let (top, bar_h, gap) = (56.0, 26.0, 12.0);
    let levels: Vec<&str> = rows
        .first()
        .map(|r| r.by_level.iter().map(|(l, _)| l.as_str()).collect())
        .unwrap_or_default();
    // The standing marks' columns, one per level, after the bars and their scores.
    let standing_levels: Vec<&str> = rows
        .first()
        .map(|r| r.levels.iter().map(|l| l.level.as_str()).collect())
        .unwrap_or_default();
    let marks_x = label_width + bar_area + 60.0;
    let marks_width = standing_levels.len() as f64 * (MARK_WIDTH + MARK_GAP);
    let legend_width: f64 = if standing_levels.is_empty() {
        0.0
    } else {
        MARKS_LEGEND
            .iter()
            .map(|(_, meaning)| legend_step(meaning))
            .sum()
    };
    let width = (label_width + bar_area + 90.0 + marks_width).max(label_width + legend_width);
    let legend_y = top + rows.len() as f64 * (bar_h + gap) + 16.0;
    let height = legend_y
        + if standing_levels.is_empty() {
            40.0
        } else {
            64.0
        };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        out,
        "<rect x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\" fill=\"white\"/>"
    );
    let _ = writeln!(
        out,
        "<text x=\"12\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>",
        xml_escape(title)
    );
    let x0 = label_width;
    // Axis with ticks at 0, 25, 50, 75, 100.
    for tick in [0.0, 25.0, 50.0, 75.0, 100.0] {
        let x = x0 + bar_area * tick / 100.0;
        let _ = writeln!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#666\" font-size=\"10\">{tick:.0}</text>",
            top - 8.0,
            legend_y - 10.0,
            top - 12.0
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = top + i as f64 * (bar_h + gap);
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            x0 - 8.0,
            y + bar_h / 2.0 + 4.0,
            xml_escape(&r.program)
        );
        let mut x = x0;
        for (j, (level, c)) in r.by_level.iter().enumerate() {
            let w = bar_area * c.clamp(0.0, 100.0) / 100.0;
            if w > 0.0 {
                let _ = writeln!(
                    out,
                    "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{bar_h:.1}\" fill=\"{}\"><title>{}: {c:.1} from {}</title></rect>",
                    LEVEL_COLORS[j.min(LEVEL_COLORS.len() - 1)],
                    xml_escape(&r.program),
                    xml_escape(level)
                );
            }
            x += w;
        }
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"bold\">{:.1}</text>",
            x + 6.0,
            y + bar_h / 2.0 + 4.0,
            r.score
        );
        for (j, s) in r.levels.iter().enumerate() {
            let tooltip = format!(
                "{} at {}: {}",
                r.program,
                s.level,
                super::tables::standing_text(s).replace("**", "")
            );
            let mx = marks_x + j as f64 * (MARK_WIDTH + MARK_GAP);
            write_mark(&mut out, mx, y + 3.0, bar_h - 6.0, s.standing, &tooltip);
        }
    }
    // The marks' column heads, on the axis's line.
    for (j, level) in standing_levels.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>",
            marks_x + j as f64 * (MARK_WIDTH + MARK_GAP) + MARK_WIDTH / 2.0,
            top - 12.0,
            xml_escape(level)
        );
    }
    let mut lx = x0;
    for (j, level) in levels.iter().enumerate() {
        let _ = writeln!(
            out,
            "<rect x=\"{lx:.1}\" y=\"{legend_y:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">from {}</text>",
            LEVEL_COLORS[j.min(LEVEL_COLORS.len() - 1)],
            lx + 16.0,
            legend_y + 10.5,
            xml_escape(level)
        );
        lx += 110.0;
    }
    if !standing_levels.is_empty() {
        // What the marks mean, on a second line.
        let y = legend_y + 24.0;
        let mut lx = x0;
        for (standing, meaning) in MARKS_LEGEND {
            write_mark(&mut out, lx, y, 16.0, standing, meaning);
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
                lx + MARK_WIDTH + 5.0,
                y + 12.0,
                xml_escape(meaning)
            );
            lx += legend_step(meaning);
        }
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_with_scores_and_stack_by_level() {
        let rows = vec![
            RiskRow {
                program: "smallbank".to_string(),
                score: 75.0,
                by_level: vec![("causal".to_string(), 50.0), ("rc".to_string(), 25.0)],
                cases: 4,
                exposed: 3,
                invariant_broken: 1,
                anomalies: vec![],
                levels: vec![],
            },
            RiskRow {
                program: "voter".to_string(),
                score: 25.0,
                by_level: vec![("causal".to_string(), 0.0), ("rc".to_string(), 25.0)],
                cases: 4,
                exposed: 2,
                invariant_broken: 2,
                anomalies: vec![],
                levels: vec![],
            },
        ];
        let svg = risk_chart_svg(&rows, "Risk <ranking>");
        assert_eq!(svg, risk_chart_svg(&rows, "Risk <ranking>"));
        assert!(svg.contains("Risk &lt;ranking&gt;"));
        // Three non-empty segments: 240 px (50), 120 px (25) and voter's 120 px.
        assert_eq!(svg.matches("width=\"240.0\" height=\"26.0\"").count(), 1);
        assert_eq!(svg.matches("width=\"120.0\" height=\"26.0\"").count(), 2);
        assert!(svg.contains(">75.0</text>") && svg.contains(">25.0</text>"));
        assert!(svg.contains(">from causal</text>") && svg.contains(">from rc</text>"));
        assert!(svg.trim_end().ends_with("</svg>"));
        // No standings (e.g. a grid read back without them): no marks, no second legend.
        assert!(!svg.contains("free in runs"));
    }

    #[test]
    fn each_level_has_a_mark_saying_where_the_program_stands() {
        use super::super::tables::LevelStanding;
        let standing = |level: &str, standing: Standing| LevelStanding {
            level: level.to_string(),
            standing,
            runs: 2,
            exposed: usize::from(standing == Standing::Exposed),
            proven_free: if standing == Standing::ProvenFree {
                2
            } else {
                0
            },
            undecided: usize::from(standing == Standing::Undecided),
            certificates: if standing == Standing::ProvenFree {
                vec![("writers-ordered".to_string(), 2)]
            } else {
                vec![]
            },
        };
        let rows = vec![RiskRow {
            program: "voter".to_string(),
            score: 20.0,
            by_level: vec![("si".to_string(), 0.0), ("rc".to_string(), 20.0)],
            cases: 4,
            exposed: 2,
            invariant_broken: 2,
            anomalies: vec![],
            levels: vec![
                standing("si", Standing::ProvenFree),
                standing("rc", Standing::Exposed),
            ],
        }];
        let svg = risk_chart_svg(&rows, "t");
        // One mark per level (and one per kind in the legend), with the level's standing in
        // its tooltip.
        // A certificate covers the runs' recorded calls: the mark and its tooltip say so.
        assert_eq!(svg.matches(">free in runs</text>").count(), 2, "{svg}");
        assert_eq!(svg.matches(">anomaly</text>").count(), 2);
        assert_eq!(svg.matches(">? undecided</text>").count(), 1);
        assert!(
            svg.contains(
                "<title>voter at si: proven free (2/2 runs; `writers-ordered` 2; in the recorded \
                 calls only)</title>"
            ),
            "{svg}"
        );
        assert!(svg.contains("has a certificate (its recorded calls only)"));
        assert!(svg.contains("<title>voter at rc: anomaly in 1/2 runs</title>"));
        // Column heads name the levels.
        assert!(svg.contains("font-weight=\"bold\">si</text>"));
        assert!(svg.contains("no anomaly found, not proven (unknown)"));
    }
}
