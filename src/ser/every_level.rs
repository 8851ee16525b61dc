//! Every level's verdict, strongest first (ser, si, pc, cc, ra, rc, ci), running as few checks
//! as the strength order allows (DESIGN.md: SER ⊑ SI ⊑ PC ⊑ CC ⊑ RA ⊑ RC, RA ⊑ CI): CC first;
//! if it holds, SER, then SI if SER fails, then PC if SI fails; the weak levels as
//! [`check_all`] runs them.

use std::fmt::{self, Write as _};

use crate::check::{check_all, CheckError, CheckOptions, Level, LevelsReport};
use crate::history::History;

use super::report::{StrongReport, Verdict};
use super::{check_strong, StrongLevel, StrongOptions};

/// One level's verdict.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LevelVerdict {
    /// The level.
    pub level: Level,
    /// Its verdict.
    pub verdict: Verdict,
    /// When not checked itself: the level checked whose verdict implies this one.
    pub implied_by: Option<Level>,
    /// For a violation: the anomaly's name, when one was found.
    pub anomaly: Option<String>,
}

/// The result of [`check_every_level`]: the stable `--level all --json` output. It extends
/// [`LevelsReport`] (whose fields it carries, flattened) with the strong levels.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EveryLevelReport {
    /// Every level, strongest first: ser, si, pc, cc, ra, rc, ci.
    pub verdicts: Vec<LevelVerdict>,
    /// The strong levels actually checked, in the order checked.
    pub strong_reports: Vec<StrongReport>,
    /// The weak levels, as [`check_all`] reports them.
    #[serde(flatten)]
    pub weak: LevelsReport,
}

impl EveryLevelReport {
    /// The strongest of ser, si, pc, cc, ra, rc satisfied.
    pub fn strongest_satisfied(&self) -> Option<Level> {
        self.verdicts
            .iter()
            .filter(|v| v.level != Level::CutIsolation)
            .find(|v| v.verdict == Verdict::Consistent)
            .map(|v| v.level)
    }

    /// The overall verdict: violated if any level is, else unknown if any is, else
    /// consistent.
    pub fn verdict(&self) -> Verdict {
        let has = |x: Verdict| self.verdicts.iter().any(|v| v.verdict == x);
        if has(Verdict::Violated) {
            Verdict::Violated
        } else if has(Verdict::Unknown) {
            Verdict::Unknown
        } else {
            Verdict::Consistent
        }
    }

    /// The verdicts, then every report run.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "every level, strongest first:");
        for v in &self.verdicts {
            let verdict = match v.verdict {
                Verdict::Consistent => "consistent",
                Verdict::Violated => "VIOLATED",
                Verdict::Unknown => "UNKNOWN",
            };
            let implied = v
                .implied_by
                .map_or_else(String::new, |l| format!(" (implied by {l})"));
            let anomaly = v
                .anomaly
                .as_ref()
                .map_or_else(String::new, |a| format!(": {a}"));
            let _ = writeln!(
                out,
                "  {:<4}{:<22}{verdict}{anomaly}{implied}",
                v.level.short_name(),
                v.level.full_name(),
            );
        }
        match self.strongest_satisfied() {
            Some(l) => {
                let _ = writeln!(out, "strongest level satisfied: {l} ({})", l.full_name());
            }
            None => {
                let _ = writeln!(out, "satisfies none of ser, si, pc, cc, ra, rc");
            }
        }
        for r in &self.strong_reports {
            out.push('\n');
            out.push_str(&r.render_text());
        }
        for r in &self.weak.reports {
            out.push('\n');
            out.push_str(&r.render_text());
        }
        out
    }

    /// The DOT drawing of the strongest level violated that has one.
    pub fn render_dot(&self) -> Option<String> {
        self.strong_reports
            .iter()
            .find_map(|r| r.render_dot())
            .or_else(|| self.weak.reports.iter().find_map(|r| r.render_dot()))
    }
}

impl fmt::Display for EveryLevelReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_text())
    }
}

/// Checks every level (see the module documentation for which checks run).
pub fn check_every_level(
    history: &History,
    strong: &StrongOptions,
    weak: &CheckOptions,
) -> Result<EveryLevelReport, CheckError> {
    let weak_report = check_all(history, weak)?;
    let cc_ok = weak_report.strongest == Some(Level::Causal);
    let mut strong_reports = Vec::new();
    let mut strong_verdicts: Vec<LevelVerdict> = Vec::new();
    let mut implied: Option<(Level, Verdict)> = if cc_ok {
        None
    } else {
        Some((Level::Causal, Verdict::Violated))
    };
    for level in [
        StrongLevel::Serializable,
        StrongLevel::Snapshot,
        StrongLevel::Prefix,
    ] {
        if let Some((by, verdict)) = implied {
            strong_verdicts.push(LevelVerdict {
                level: level.level(),
                verdict,
                implied_by: Some(by),
                anomaly: None,
            });
            continue;
        }
        let r = check_strong(history, level, strong)?;
        strong_verdicts.push(LevelVerdict {
            level: level.level(),
            verdict: r.verdict,
            implied_by: None,
            anomaly: r.violation.as_ref().map(|v| v.anomaly.clone()),
        });
        if r.verdict == Verdict::Consistent {
            implied = Some((level.level(), Verdict::Consistent));
        }
        strong_reports.push(r);
    }
    let mut verdicts = strong_verdicts;
    // The weak levels: checked ones from their reports, the rest implied.
    for level in [
        Level::Causal,
        Level::ReadAtomic,
        Level::ReadCommitted,
        Level::CutIsolation,
    ] {
        let run = weak_report.reports.iter().find(|r| r.level == level);
        let (verdict, implied_by, anomaly) = match run {
            Some(r) => (
                if r.is_consistent() {
                    Verdict::Consistent
                } else {
                    Verdict::Violated
                },
                None,
                r.cycles
                    .first()
                    .map(|c| c.anomaly.name().to_string())
                    .or_else(|| {
                        r.read_violations
                            .first()
                            .map(|v| v.anomaly.name().to_string())
                    }),
            ),
            None => {
                // Not run: implied by the strongest weak level satisfied.
                let by = weak_report.strongest.unwrap_or(Level::Causal);
                (Verdict::Consistent, Some(by), None)
            }
        };
        verdicts.push(LevelVerdict {
            level,
            verdict,
            implied_by,
            anomaly,
        });
    }
    Ok(EveryLevelReport {
        verdicts,
        strong_reports,
        weak: weak_report,
    })
}
