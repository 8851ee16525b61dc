//! Views of verdicts: every level's verdicts as text and JSON (`check --level all`), one
//! verdict with its report (`check --level L`), and one line per history (`check` on many).

use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;

use super::{EvidenceUse, LevelReport, Outcome, Verdict};
use crate::check::Level;

/// Every level's verdict, strongest first, with the reports of the checks that ran: the
/// stable `check --level all --json` output (docs/checking.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct VerdictsReport {
    /// The input's name.
    pub source: String,
    /// The evidence the input carries and what the verdicts used.
    pub evidence: EvidenceUse,
    /// Every level, strongest first (strict-ser only when real time is used).
    pub verdicts: Vec<Verdict>,
    /// The strongest of strict-ser, ser, si, pc, cc, ra, rc satisfied.
    pub strongest: Option<Level>,
    /// Whether cut isolation holds (`None` when unknown).
    pub cut_isolation: Option<bool>,
    /// The reports of the checks that ran, strongest level first, each once.
    pub reports: Vec<Arc<LevelReport>>,
}

impl VerdictsReport {
    pub(super) fn new(source: &str, evidence: EvidenceUse, verdicts: Vec<Verdict>) -> Self {
        let strongest = verdicts
            .iter()
            .filter(|v| v.level != Level::CutIsolation)
            .find(|v| v.verdict == Outcome::Consistent)
            .map(|v| v.level);
        let cut_isolation = verdicts
            .iter()
            .find(|v| v.level == Level::CutIsolation)
            .and_then(|v| match v.verdict {
                Outcome::Consistent => Some(true),
                Outcome::Violated => Some(false),
                Outcome::Unknown => None,
            });
        let mut reports: Vec<Arc<LevelReport>> = Vec::new();
        for v in &verdicts {
            if let Some(r) = &v.report {
                if !reports.iter().any(|seen| Arc::ptr_eq(seen, r)) {
                    reports.push(r.clone());
                }
            }
        }
        VerdictsReport {
            source: source.to_string(),
            evidence,
            verdicts,
            strongest,
            cut_isolation,
            reports,
        }
    }

    /// The strongest of `levels` satisfied (e.g. of cc, ra, rc).
    pub fn strongest_among(&self, levels: &[Level]) -> Option<Level> {
        self.verdicts
            .iter()
            .filter(|v| levels.contains(&v.level) && v.verdict == Outcome::Consistent)
            .map(|v| v.level)
            .next()
    }

    /// The verdict of `level`, if it was decided.
    pub fn get(&self, level: Level) -> Option<&Verdict> {
        self.verdicts.iter().find(|v| v.level == level)
    }

    /// The overall outcome: violated if any level is, else unknown if any is, else
    /// consistent.
    pub fn outcome(&self) -> Outcome {
        let has = |x: Outcome| self.verdicts.iter().any(|v| v.verdict == x);
        if has(Outcome::Violated) {
            Outcome::Violated
        } else if has(Outcome::Unknown) {
            Outcome::Unknown
        } else {
            Outcome::Consistent
        }
    }

    /// The verdicts as a table, then the report of every check that ran.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "every level, strongest first:");
        for v in &self.verdicts {
            let outcome = match v.verdict {
                Outcome::Consistent => "consistent",
                Outcome::Violated => "VIOLATED",
                Outcome::Unknown => "UNKNOWN",
            };
            let mut line = format!(
                "  {:<11}{:<24}{outcome}",
                v.level.short_name(),
                v.level.full_name()
            );
            if let Some(a) = v.anomaly_label() {
                let _ = write!(line, ": {a}");
            }
            if let Some(r) = &v.unknown_reason {
                let _ = write!(line, ": {r}");
            }
            if let Some(by) = v.implied_by {
                let _ = write!(line, " (implied by {by})");
            }
            let _ = writeln!(out, "{line} [{}]", v.evidence);
            if let Some(n) = &v.note {
                let _ = writeln!(out, "             note: {n}");
            }
        }
        match self.strongest {
            Some(l) => {
                let _ = writeln!(out, "strongest level satisfied: {l} ({})", l.full_name());
            }
            None => {
                let _ = writeln!(out, "satisfies none of the levels from rc up");
            }
        }
        let _ = writeln!(out, "{}", evidence_line(&self.evidence));
        for r in &self.reports {
            out.push('\n');
            out.push_str(&r.render_text());
        }
        out
    }

    /// The DOT drawing of the strongest violated level that has one.
    pub fn render_dot(&self) -> Option<String> {
        self.verdicts
            .iter()
            .filter(|v| v.verdict == Outcome::Violated)
            .find_map(|v| v.report.as_ref().and_then(|r| r.render_dot()))
    }

    /// One line for a batch (`check` on many histories).
    pub fn one_line(&self) -> String {
        let strongest = self.strongest.map_or("none".to_string(), |l| l.to_string());
        let mut line = format!("strongest {strongest}");
        if let Some(ci) = self.get(Level::CutIsolation) {
            if self
                .strongest
                .map_or(true, |l| !l.implies(Level::CutIsolation))
            {
                let _ = write!(
                    line,
                    ", ci {}",
                    match ci.verdict {
                        Outcome::Consistent => "holds",
                        Outcome::Violated => "violated",
                        Outcome::Unknown => "unknown",
                    }
                );
            }
        }
        // The weakest level violated on its own check names the anomaly.
        let violated: Vec<&Verdict> = self
            .verdicts
            .iter()
            .filter(|v| v.verdict == Outcome::Violated && v.implied_by.is_none())
            .collect();
        if let Some(v) = violated.last() {
            let _ = write!(
                line,
                "; {} VIOLATED{}",
                v.level,
                v.anomaly_label()
                    .map_or(String::new(), |a| format!(": {a}"))
            );
        }
        let unknown: Vec<String> = self
            .verdicts
            .iter()
            .filter(|v| v.verdict == Outcome::Unknown)
            .map(|v| v.level.to_string())
            .collect();
        if !unknown.is_empty() {
            let _ = write!(line, "; unknown: {}", unknown.join(", "));
        }
        // The label is the evidence of the verdict the line names (the violation, else the
        // strongest level satisfied), as `--level all` prints it beside that verdict: the
        // whole input's evidence (e.g. real time, used by strict-ser only) would claim more.
        let named = violated
            .last()
            .copied()
            .or_else(|| self.strongest.and_then(|l| self.get(l)));
        match named {
            Some(v) => {
                let _ = write!(line, " [{}]", v.evidence);
            }
            None => {
                let _ = write!(line, " [{}]", evidence_short(&self.evidence));
            }
        }
        line
    }
}

impl std::fmt::Display for VerdictsReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render_text())
    }
}

/// The evidence in one sentence.
pub fn evidence_line(e: &EvidenceUse) -> String {
    let mut used = vec!["which write each read observed"];
    if e.write_order {
        used.push("each key's known version order");
    }
    if e.timestamps {
        used.push("the database's timestamps (si, ser)");
    }
    if e.real_time {
        used.push("the clients' real-time order (strict-ser)");
    }
    let mut unused = Vec::new();
    if e.write_order_available && !e.write_order {
        unused.push("the known version order");
    }
    if e.timestamps_available && !e.timestamps {
        unused.push("the database's timestamps");
    }
    if e.real_time_available && !e.real_time {
        unused.push("the clients' real-time order");
    }
    let mut line = format!("evidence: {}", used.join(", "));
    if !unused.is_empty() {
        let _ = write!(line, "; left out: {}", unused.join(", "));
    }
    line
}

/// The evidence used, in a word or two.
fn evidence_short(e: &EvidenceUse) -> String {
    let mut kinds = Vec::new();
    if e.write_order {
        kinds.push("write-order");
    }
    if e.timestamps {
        kinds.push("timestamps");
    }
    if e.real_time {
        kinds.push("real-time");
    }
    if kinds.is_empty() {
        kinds.push("black-box");
    }
    kinds.join("+")
}

/// One verdict with its report, as text: the report, then the verdict line when it adds to
/// the report (implied, noted, or the evidence).
pub fn render_one(v: &Verdict, evidence: &EvidenceUse) -> String {
    let mut out = String::new();
    if let Some(by) = v.implied_by {
        let _ = writeln!(out, "{}", v.line());
        let why = if v.verdict == Outcome::Violated {
            format!("{} implies {by}, which is violated", v.level)
        } else {
            format!("{by} holds and implies {}", v.level)
        };
        let _ = writeln!(
            out,
            "(decided by {by}: {why}; the report of {by} follows)\n"
        );
    }
    if let Some(r) = &v.report {
        out.push_str(&r.render_text());
    } else {
        let _ = writeln!(out, "{}", v.line());
    }
    if let Some(n) = &v.note {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(out, "verdict: {}", v.line());
    let _ = writeln!(out, "{}", evidence_line(evidence));
    out
}

/// One verdict as JSON: its report's fields, with the verdict's own (`verdict`, `evidence`,
/// `implied_by`, `anomaly`, `unknown_reason`, `note`) added.
pub fn one_json(v: &Verdict, evidence: &EvidenceUse) -> serde_json::Value {
    let report = v
        .report
        .as_ref()
        .map(|r| serde_json::to_value(r.as_ref()).unwrap_or_default());
    let mut value = match report {
        // An implied verdict's report is another level's: kept apart.
        Some(r) if v.implied_by.is_some() => serde_json::json!({ "report": r }),
        Some(r) => r,
        None => serde_json::Value::Object(Default::default()),
    };
    if let serde_json::Value::Object(map) = &mut value {
        let own = serde_json::to_value(v).unwrap_or_default();
        if let serde_json::Value::Object(own) = own {
            for (k, x) in own {
                map.insert(k, x);
            }
        }
        if let Ok(e) = serde_json::to_value(evidence) {
            map.insert("evidence_available".to_string(), e);
        }
    }
    value
}
