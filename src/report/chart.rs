//! The risk ranking as an SVG bar chart: one horizontal bar per program, highest score on
//! top, stacked by the levels' contributions (docs/ranking.md), with a legend. Deterministic
//! and self-contained.

use super::anomaly::xml_escape;
use std::fmt::Write as _;

use super::tables::RiskRow;

const LEVEL_COLORS: [&str; 4] = ["#c0392b", "#e67e22", "#f1c40f", "#7f8c8d"];

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
    let width = label_width + bar_area + 90.0;
    let legend_y = top + rows.len() as f64 * (bar_h + gap) + 16.0;
    let height = legend_y + 40.0;
    let levels: Vec<&str> = rows
        .first()
        .map(|r| r.by_level.iter().map(|(l, _)| l.as_str()).collect())
        .unwrap_or_default();
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
            },
            RiskRow {
                program: "voter".to_string(),
                score: 25.0,
                by_level: vec![("causal".to_string(), 0.0), ("rc".to_string(), 25.0)],
                cases: 4,
                exposed: 2,
                invariant_broken: 2,
                anomalies: vec![],
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
    }
}
