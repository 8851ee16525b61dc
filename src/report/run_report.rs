//! The report of `isopredict run` (record → check → predict → re-verify → validate), in words
//! a developer acts on: which procedure calls take part in the anomaly, which reads changed
//! writer, the cycle that makes the execution unserializable with each edge's reason, and
//! which invariant the validating run broke. [`RunReport`] is also the `--json` output.

use std::fmt::Write as _;

/// The conclusion of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunVerdict {
    /// A prediction was made and the validating replay confirmed it.
    AnomalyValidated,
    /// A prediction was made; the replay did not confirm it (it diverged into a serializable
    /// run, or a check could not decide).
    AnomalyPredicted,
    /// The observed run itself violates the level.
    ObservedViolation,
    /// No unserializable execution is predictable under this level and strategy.
    NoAnomaly,
    /// The solver gave up (timeout or resource limit).
    Unknown,
}

impl RunVerdict {
    /// The process exit code: 1 for an anomaly (validated or predicted, or observed), 0 for
    /// none, 3 for unknown.
    pub fn exit_code(self) -> u8 {
        match self {
            RunVerdict::AnomalyValidated
            | RunVerdict::AnomalyPredicted
            | RunVerdict::ObservedViolation => 1,
            RunVerdict::NoAnomaly => 0,
            RunVerdict::Unknown => 3,
        }
    }
}

/// A transaction and the procedure call that ran it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CallLine {
    /// The transaction, as in the trace files (`Txn(2, 1)`).
    pub txn: String,
    /// The procedure call, e.g. `Amalgamate(custId0=1, custId1=3)`.
    pub call: Option<String>,
    /// Its part in the anomaly (e.g. `boundary; reads 2 keys from a different writer`).
    pub role: String,
}

/// A read whose writer changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChangedReadLine {
    /// The reading transaction.
    pub reader: String,
    /// The key as the history names it.
    pub key: String,
    /// The key as table, column and row, when known.
    pub key_meaning: Option<String>,
    /// The writer it read from in the observed run.
    pub old_writer: String,
    /// The writer it reads from in the prediction.
    pub new_writer: String,
    /// How many reads of the key by the transaction changed this way (a statement may read a
    /// cell more than once).
    pub reads: u32,
}

/// An edge of the cycle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CycleLine {
    /// Source transaction.
    pub from: String,
    /// Target transaction.
    pub to: String,
    /// `so`, `wr`, `ww` or `rw`.
    pub kind: String,
    /// The key, when the edge has one.
    pub key: Option<String>,
    /// The key as table, column and row, when known.
    pub key_meaning: Option<String>,
    /// Why the edge is there, in words.
    pub reason: String,
}

/// An invariant's verdict.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InvariantLine {
    /// Its id (A1–A17 in the MonkeyDB paper's numbering).
    pub id: String,
    /// What it states.
    pub description: String,
    /// Whether it holds.
    pub holds: bool,
    /// Why not.
    pub detail: String,
}

/// The prediction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PredictionSection {
    /// Per session: where the prediction stops (in words).
    pub boundaries: Vec<String>,
    /// The transactions involved (changed reads, the cycle) and their calls.
    pub calls: Vec<CallLine>,
    /// The reads whose writer changed.
    pub changed_reads: Vec<ChangedReadLine>,
    /// The cycle (empty if none was found; the exact check alone then proves it).
    pub cycle: Vec<CycleLine>,
    /// The anomaly's name as engineers know it, and what happens (`lost update: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anomaly: Option<String>,
    /// Re-verification by the checkers: the predicted history satisfies the level.
    pub reverified_level: bool,
    /// Re-verification: it is unserializable (`None`: undecided).
    pub reverified_unserializable: Option<bool>,
}

/// The validating replay.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ValidationSection {
    /// `validated`, `serializable`, `level-violated` or `unknown`.
    pub verdict: String,
    /// Where the replay could not follow the prediction (empty: it followed it exactly).
    pub divergences: Vec<String>,
    /// Committed transactions of the validating run (initial state included).
    pub transactions: usize,
    /// The invariants on its final state.
    pub invariants: Vec<InvariantLine>,
}

/// Measurements.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunTimings {
    /// Recording the observed run (ms).
    pub record_ms: f64,
    /// Checking it (ms).
    pub check_ms: f64,
    /// Constraint generation (ms).
    pub generation_ms: f64,
    /// Solving (ms).
    pub solving_ms: f64,
    /// Literals of the encoding.
    pub literals: u64,
    /// Validation (ms).
    pub validation_ms: f64,
    /// Everything (ms).
    pub total_ms: f64,
}

/// The report of one `isopredict run`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunReport {
    /// The workload.
    pub workload: String,
    /// The seed (the paper's run number).
    pub seed: u64,
    /// `small` or `large`.
    pub size: String,
    /// The level (`causal`, `ra`, `rc`).
    pub level: String,
    /// The strategy.
    pub strategy: String,
    /// The conclusion.
    pub verdict: RunVerdict,
    /// The conclusion in one sentence.
    pub summary: String,
    /// Why the answer is unknown.
    pub reason: Option<String>,
    /// The observed run: committed transactions (initial state included).
    pub observed_transactions: usize,
    /// The observed run's procedure calls, in execution order.
    pub observed_calls: Vec<CallLine>,
    /// The observed run's invariants.
    pub observed_invariants: Vec<InvariantLine>,
    /// The level check of the observed run, when it fails (its text report).
    pub observed_violation: Option<String>,
    /// The prediction.
    pub prediction: Option<PredictionSection>,
    /// The validating replay.
    pub validation: Option<ValidationSection>,
    /// Measurements.
    pub timings: RunTimings,
    /// Files written.
    pub files: Vec<String>,
}

fn code(s: &str) -> String {
    format!("`{}`", s.replace('`', "'"))
}

fn key_text(key: &Option<String>, meaning: &Option<String>) -> String {
    match (key, meaning) {
        (Some(k), Some(m)) => format!("{} (key {})", code(m), code(k)),
        (Some(k), None) => format!("key {}", code(k)),
        _ => String::new(),
    }
}

impl RunReport {
    /// The exit code.
    pub fn exit_code(&self) -> u8 {
        self.verdict.exit_code()
    }

    /// The report as Markdown (report.md; also printed by `isopredict run`).
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# isopredict run {} (seed {}, {}, level {}, {})\n",
            self.workload, self.seed, self.size, self.level, self.strategy
        );
        let _ = writeln!(out, "**{}**\n", self.summary);
        if let Some(r) = &self.reason {
            let _ = writeln!(out, "Reason: {r}\n");
        }
        if let Some(v) = &self.observed_violation {
            let _ = writeln!(out, "## The observed run violates {}\n", self.level);
            let _ = writeln!(out, "```\n{}\n```\n", v.trim_end());
        }
        if let Some(p) = &self.prediction {
            if let Some(a) = &p.anomaly {
                let _ = writeln!(out, "## The anomaly\n\n{a}\n");
            }
            out.push_str("## Procedure calls involved\n\n");
            out.push_str("| Transaction | Procedure call | Part in the anomaly |\n|---|---|---|\n");
            for c in &p.calls {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} |",
                    c.txn,
                    c.call.as_deref().map_or("–".to_string(), code),
                    c.role
                );
            }
            out.push('\n');
            if !p.changed_reads.is_empty() {
                let _ = writeln!(
                    out,
                    "## Reads that change writer ({})\n",
                    p.changed_reads.iter().map(|c| c.reads).sum::<u32>()
                );
                out.push_str(
                    "| Reader | Key | Observed writer | Predicted writer |\n|---|---|---|---|\n",
                );
                for c in &p.changed_reads {
                    let times = if c.reads > 1 {
                        format!(" (×{})", c.reads)
                    } else {
                        String::new()
                    };
                    let _ = writeln!(
                        out,
                        "| {}{times} | {} | {} | {} |",
                        c.reader,
                        key_text(&Some(c.key.clone()), &c.key_meaning),
                        c.old_writer,
                        c.new_writer
                    );
                }
                out.push('\n');
            }
            if !p.cycle.is_empty() {
                out.push_str("## Why no serial order exists (a cycle)\n\n");
                for (i, e) in p.cycle.iter().enumerate() {
                    let key = key_text(&e.key, &e.key_meaning);
                    let on = if key.is_empty() {
                        String::new()
                    } else {
                        format!(" on {key}")
                    };
                    let _ = writeln!(
                        out,
                        "{}. {} →{} {}{on}: {}",
                        i + 1,
                        e.from,
                        e.kind,
                        e.to,
                        e.reason
                    );
                }
                out.push('\n');
            }
            out.push_str("## Prediction boundary\n\n");
            for b in &p.boundaries {
                let _ = writeln!(out, "- {b}");
            }
            let _ = writeln!(
                out,
                "\nRe-verified by the checkers: satisfies {}: {}; unserializable: {}.\n",
                self.level,
                if p.reverified_level { "yes" } else { "NO" },
                match p.reverified_unserializable {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "undecided",
                }
            );
        }
        if let Some(v) = &self.validation {
            out.push_str("## Validation (replaying the workload along the prediction)\n\n");
            let _ = writeln!(
                out,
                "Verdict: **{}** ({} transactions).",
                v.verdict, v.transactions
            );
            if v.divergences.is_empty() {
                out.push_str("The replay followed the prediction exactly.\n");
            } else {
                let _ = writeln!(
                    out,
                    "The replay diverged from the prediction at {} read(s):\n",
                    v.divergences.len()
                );
                for d in v.divergences.iter().take(10) {
                    let _ = writeln!(out, "- {d}");
                }
                if v.divergences.len() > 10 {
                    let _ = writeln!(out, "- … and {} more", v.divergences.len() - 10);
                }
            }
            out.push('\n');
            invariants_markdown(&mut out, &v.invariants, "the validating run");
        }
        invariants_markdown(&mut out, &self.observed_invariants, "the observed run");
        out.push_str("## Measurements\n\n");
        let t = &self.timings;
        let _ = writeln!(
            out,
            "record {:.0} ms · check {:.0} ms · constraint generation {:.0} ms ({} literals) · solving {:.0} ms · validation {:.0} ms · total {:.0} ms\n",
            t.record_ms, t.check_ms, t.generation_ms, t.literals, t.solving_ms, t.validation_ms, t.total_ms
        );
        if !self.files.is_empty() {
            out.push_str("## Files\n\n");
            for f in &self.files {
                let _ = writeln!(out, "- {f}");
            }
        }
        out
    }
}

fn invariants_markdown(out: &mut String, invariants: &[InvariantLine], whose: &str) {
    if invariants.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Invariants of {whose}\n");
    for i in invariants {
        let mark = if i.holds { "holds" } else { "**BROKEN**" };
        let detail = if i.detail.is_empty() {
            String::new()
        } else {
            format!(" — {}", i.detail)
        };
        let _ = writeln!(out, "- {} {}: {mark}{detail}", i.id, i.description);
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_verdict() {
        assert_eq!(RunVerdict::AnomalyValidated.exit_code(), 1);
        assert_eq!(RunVerdict::AnomalyPredicted.exit_code(), 1);
        assert_eq!(RunVerdict::ObservedViolation.exit_code(), 1);
        assert_eq!(RunVerdict::NoAnomaly.exit_code(), 0);
        assert_eq!(RunVerdict::Unknown.exit_code(), 3);
    }

    #[test]
    fn markdown_names_calls_reads_cycle_and_invariants() {
        let r = RunReport {
            workload: "smallbank".into(),
            seed: 1,
            size: "small".into(),
            level: "causal".into(),
            strategy: "approx-relaxed".into(),
            verdict: RunVerdict::AnomalyValidated,
            summary: "A validated anomaly.".into(),
            reason: None,
            observed_transactions: 10,
            observed_calls: vec![],
            observed_invariants: vec![],
            observed_violation: None,
            prediction: Some(PredictionSection {
                boundaries: vec!["session 1: all 3 transactions".into()],
                calls: vec![CallLine {
                    txn: "Txn(1, 0)".into(),
                    call: Some("Amalgamate(custId0=1, custId1=3)".into()),
                    role: "reads from a different writer".into(),
                }],
                changed_reads: vec![ChangedReadLine {
                    reader: "Txn(1, 0)".into(),
                    key: "123".into(),
                    key_meaning: Some("CHECKING.bal[custid=1]".into()),
                    old_writer: "Txn(2, 0)".into(),
                    new_writer: "initial state".into(),
                    reads: 1,
                }],
                cycle: vec![CycleLine {
                    from: "Txn(1, 0)".into(),
                    to: "Txn(2, 0)".into(),
                    kind: "rw".into(),
                    key: Some("123".into()),
                    key_meaning: Some("CHECKING.bal[custid=1]".into()),
                    reason: "Txn(1, 0) reads …".into(),
                }],
                anomaly: None,
                reverified_level: true,
                reverified_unserializable: Some(true),
            }),
            validation: Some(ValidationSection {
                verdict: "validated".into(),
                divergences: vec![],
                transactions: 4,
                invariants: vec![InvariantLine {
                    id: "A13".into(),
                    description: "total money is conserved".into(),
                    holds: false,
                    detail: "total is 24995, expected 25000".into(),
                }],
            }),
            timings: RunTimings::default(),
            files: vec!["out/x/report.md".into()],
        };
        let md = r.to_markdown();
        assert!(md.contains(
            "| Txn(1, 0) | `Amalgamate(custId0=1, custId1=3)` | reads from a different writer |"
        ));
        assert!(md.contains(
            "| Txn(1, 0) | `CHECKING.bal[custid=1]` (key `123`) | Txn(2, 0) | initial state |"
        ));
        assert!(md.contains("1. Txn(1, 0) →rw Txn(2, 0) on `CHECKING.bal[custid=1]` (key `123`)"));
        assert!(md.contains(
            "- A13 total money is conserved: **BROKEN** — total is 24995, expected 25000"
        ));
        assert!(md.contains("The replay followed the prediction exactly."));
        let json = serde_json::to_string(&r).unwrap();
        let back: RunReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
