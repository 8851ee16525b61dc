//! The report of `isopredict test` (report.md, report.json) and its folder: the observed,
//! predicted and validating histories (native JSON, with the SQL statements), each anomaly's
//! DOT and SVG drawing, in the application's terms — sessions by `application_name`,
//! transactions as their SQL statements with parameters, rows and columns as the application
//! names them (`acct.bal[id=1]`). The test command's exit status under a prediction comes
//! first: a test that fails under the predicted execution and passed when recorded is the
//! strongest evidence there is.

use std::fmt::Write as _;
use std::path::Path;

use crate::history::{History, TxnId, INITIAL_TXN};
use crate::predict::Prediction;
use crate::report::anomaly::{AnomalyGraph, EdgeKind, GraphEdge, SessionColumn, TxnBox};
use crate::report::run_report::RunVerdict;
use crate::workloads::ReplayOutcome;

use super::app_test::{app_txn_label, app_txn_statements, AppReplay, AppTestOutcome};
use super::level_name;

/// One prediction and its replay, in words.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AppAnomalySection {
    /// The anomaly's name (`lost update`, …).
    pub name: String,
    /// Its names in every vocabulary, from its row of the anomaly table (as `run`'s
    /// report.json carries them).
    pub anomaly_names: crate::history::anomalies::AnomalyNames,
    /// What happens, naming the application's transactions.
    pub description: String,
    /// `validated`, `validated-diverged`, `serializable`, `level-violated`, `unknown`.
    pub replay: ReplayOutcome,
    /// The test command's exit code in the replay.
    pub test_exit: i32,
    /// The test passed when recorded and failed in the replay.
    pub test_failed_under_prediction: bool,
    /// Where the replay left the prediction, in words.
    pub divergences: Vec<String>,
    /// The reads whose writer the prediction changes, in words.
    pub changed_reads: Vec<String>,
    /// The anomaly's transactions with their statements.
    pub transactions: Vec<String>,
    /// The files of this anomaly.
    pub files: Vec<String>,
}

/// The report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AppTestReport {
    /// The test command.
    pub command: String,
    /// The level and strategy.
    pub level: String,
    /// The strategy.
    pub strategy: String,
    /// The verdict (exit code as `run`'s).
    pub verdict: RunVerdict,
    /// The headline.
    pub summary: String,
    /// The test command's exit code in the observed run.
    pub observed_exit: i32,
    /// The recording in words.
    pub recording: String,
    /// The predictor's words, or why the run stopped.
    pub note: Option<String>,
    /// The observed history's violation of the level.
    pub observed_violation: Option<String>,
    /// The anomalies, each replayed.
    pub anomalies: Vec<AppAnomalySection>,
    /// The files written.
    pub files: Vec<String>,
}

impl AppTestReport {
    /// The process exit code: as `run`'s (1 anomaly, 0 none, 3 unknown).
    pub fn exit_code(&self) -> u8 {
        self.verdict.exit_code()
    }

    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# isopredict test `{}` (level {}, {})\n",
            self.command, self.level, self.strategy
        );
        let _ = writeln!(out, "**{}**\n", self.summary);
        let _ = writeln!(
            out,
            "Observed run: the test exited {}; {}.\n",
            self.observed_exit, self.recording
        );
        if let Some(n) = &self.note {
            let _ = writeln!(out, "{n}\n");
        }
        if let Some(v) = &self.observed_violation {
            let _ = writeln!(out, "```\n{}\n```\n", v.trim_end());
        }
        for (i, a) in self.anomalies.iter().enumerate() {
            let _ = writeln!(
                out,
                "## Anomaly {}: {} — replay {}\n",
                i + 1,
                a.anomaly_names.id.label(),
                a.replay.word()
            );
            let test = if a.test_failed_under_prediction {
                format!(
                    "**The test FAILS under this prediction** (exit {}; it passed when recorded).",
                    a.test_exit
                )
            } else {
                format!("The test exited {} in the replay.", a.test_exit)
            };
            let _ = writeln!(out, "{test}\n\n{}\n", a.description);
            let _ = writeln!(out, "Transactions of the anomaly:\n");
            for t in &a.transactions {
                let _ = writeln!(out, "- {t}");
            }
            if !a.changed_reads.is_empty() {
                let _ = writeln!(out, "\nReads the prediction changes:\n");
                for r in &a.changed_reads {
                    let _ = writeln!(out, "- {r}");
                }
            }
            if a.divergences.is_empty() {
                let _ = writeln!(
                    out,
                    "\nThe replay followed the prediction: every read got its predicted writer and \
                     every statement was the recorded one."
                );
            } else {
                let _ = writeln!(out, "\nThe replay left the prediction:\n");
                for d in &a.divergences {
                    let _ = writeln!(out, "- {d}");
                }
            }
            let _ = writeln!(out, "\nFiles: {}\n", a.files.join(", "));
        }
        if !self.files.is_empty() {
            let _ = writeln!(out, "Written: {}", self.files.join(", "));
        }
        out
    }
}

/// The report of `outcome`, its files named under `dir`.
pub fn app_test_report(outcome: &AppTestOutcome, dir: &Path) -> AppTestReport {
    let options = &outcome.options;
    let observed = &outcome.observed;
    let anomalies: Vec<AppAnomalySection> = outcome
        .replays
        .iter()
        .enumerate()
        .map(|(i, r)| anomaly_section(observed.exit, &observed.history, r, &anomaly_files(i, dir)))
        .collect();
    let summary = summary(outcome, &anomalies);
    let mut files = vec![dir.join("observed.json").display().to_string()];
    files.extend(anomalies.iter().flat_map(|a| a.files.iter().cloned()));
    files.push(dir.join("report.md").display().to_string());
    files.push(dir.join("report.json").display().to_string());
    AppTestReport {
        command: options.command.join(" "),
        level: level_name(options.level).to_string(),
        strategy: options.strategy.name().to_string(),
        verdict: outcome.verdict,
        summary,
        observed_exit: observed.exit,
        recording: observed.summary.to_string(),
        note: outcome.note.clone(),
        observed_violation: outcome.observed_violation.clone(),
        anomalies,
        files,
    }
}

/// The headline: a failing test under a prediction first, then validated anomalies.
fn summary(outcome: &AppTestOutcome, anomalies: &[AppAnomalySection]) -> String {
    let failing: Vec<usize> = (0..anomalies.len())
        .filter(|&i| anomalies[i].test_failed_under_prediction)
        .collect();
    let validated = anomalies
        .iter()
        .filter(|a| a.replay.counts_as_validated())
        .count();
    if let Some(&i) = failing.first() {
        let a = &anomalies[i];
        return format!(
            "The test FAILS under a predicted execution (anomaly {}: {}, replay {}; exit {}, \
             where the recorded run exited 0): {} of {} predicted anomalies validated.",
            i + 1,
            a.name,
            a.replay.word(),
            a.test_exit,
            validated,
            anomalies.len()
        );
    }
    let each: Vec<String> = anomalies
        .iter()
        .map(|a| format!("{} (replay {})", a.name, a.replay.word()))
        .collect();
    match outcome.verdict {
        RunVerdict::AnomalyValidated => format!(
            "{validated} of {} predicted anomalies validated by re-running the test along the \
             prediction: {}; the test did not fail under any.",
            anomalies.len(),
            each.join(", ")
        ),
        RunVerdict::AnomalyPredicted => format!(
            "{} anomalies predicted, none validated by re-running the test: {} (see each \
             replay's divergences).",
            anomalies.len(),
            each.join(", ")
        ),
        RunVerdict::NoAnomaly => "No anomaly found in this run of the test.".into(),
        RunVerdict::ObservedViolation => "The observed run already violates the level.".into(),
        RunVerdict::Unknown => "Unknown: the predictor gave up.".into(),
    }
}

/// The files of anomaly `i` (0-based): unsuffixed for the first, `-2`, `-3`, … after.
fn anomaly_files(i: usize, dir: &Path) -> Vec<String> {
    let suffix = if i == 0 {
        String::new()
    } else {
        format!("-{}", i + 1)
    };
    ["predicted", "validating", "anomaly"]
        .iter()
        .flat_map(|base| match *base {
            "anomaly" => vec![
                format!("anomaly{suffix}.dot"),
                format!("anomaly{suffix}.svg"),
            ],
            b => vec![format!("{b}{suffix}.json")],
        })
        .map(|f| dir.join(f).display().to_string())
        .collect()
}

/// The transactions an anomaly shows: its minimal core's, its cycle's and its changed reads'.
fn anomaly_txns(p: &Prediction) -> Vec<TxnId> {
    let mut txns: Vec<TxnId> = p
        .core
        .iter()
        .flat_map(|c| c.txns.iter().copied())
        .chain(p.cycle.iter().flatten().flat_map(|e| [e.from, e.to]))
        .chain(
            p.changed_reads
                .iter()
                .filter(|c| c.in_core)
                .flat_map(|c| [c.txn, c.new_writer]),
        )
        .collect();
    txns.retain(|&t| t != INITIAL_TXN);
    txns.sort_unstable();
    txns.dedup();
    txns
}

fn anomaly_section(
    observed_exit: i32,
    observed: &History,
    r: &AppReplay,
    files: &[String],
) -> AppAnomalySection {
    let p = &r.prediction;
    let transactions = anomaly_txns(p)
        .into_iter()
        .map(|t| {
            format!(
                "{}: {}",
                app_txn_label(observed, t),
                app_txn_statements(observed, t).join("; ")
            )
        })
        .collect();
    let changed_reads = p
        .changed_reads
        .iter()
        .filter(|c| c.in_core)
        .map(|c| {
            let statement = observed
                .statements()
                .and_then(|st| st.of_op(c.op))
                .map(|st| format!(" in {}", super::app_paths::statement_words(st)))
                .unwrap_or_default();
            format!(
                "{} reads {}{statement} from {} instead of {}",
                app_txn_label(observed, c.txn),
                crate::printable::printable(&c.key),
                app_txn_label(observed, c.new_writer),
                app_txn_label(observed, c.old_writer)
            )
        })
        .collect();
    AppAnomalySection {
        name: r.anomaly.name().to_string(),
        anomaly_names: r.anomaly.id.row().names(),
        description: r.anomaly.description.clone(),
        replay: r.outcome,
        test_exit: r.run.exit,
        test_failed_under_prediction: observed_exit == 0 && r.run.exit != 0,
        divergences: r.divergences.clone(),
        changed_reads,
        transactions,
        files: files.to_vec(),
    }
}

/// The drawing of anomaly `p`: the application's sessions as columns, its transactions as
/// boxes with their statements, the changed reads (blue) and the cycle (red).
pub fn app_anomaly_graph(observed: &History, p: &Prediction, title: String) -> AnomalyGraph {
    let shown = anomaly_txns(p);
    let mut sessions: Vec<SessionColumn> = Vec::new();
    let mut edges = Vec::new();
    for (s, session) in observed.sessions().iter().enumerate() {
        let txns: Vec<TxnId> = session.txns().filter(|t| shown.contains(t)).collect();
        if txns.is_empty() {
            continue;
        }
        edges.extend(GraphEdge::session_order(&txns));
        let title = observed
            .statements()
            .and_then(|st| st.session_names().get(s).cloned())
            .unwrap_or_else(|| format!("session {}", s + 1));
        sessions.push(SessionColumn {
            title,
            txns: txns
                .iter()
                .map(|&t| TxnBox {
                    id: t,
                    title: format!("#{}", observed.txn(t).index_in_session + 1),
                    lines: app_txn_statements(observed, t),
                    emphasized: false,
                })
                .collect(),
        });
    }
    for c in p.changed_reads.iter().filter(|c| c.in_core) {
        edges.push(GraphEdge {
            from: c.new_writer,
            to: c.txn,
            label: format!("wr {}", c.key),
            kind: EdgeKind::ChangedRead,
            dashed: false,
        });
    }
    for e in p.cycle.iter().flatten() {
        let label = match &e.key {
            Some(k) => format!("{} {k}", e.kind),
            None => e.kind.to_string(),
        };
        edges.push(GraphEdge::cycle(e.from, e.to, e.kind, label));
    }
    AnomalyGraph::of(title, sessions, edges, INITIAL_TXN)
}

/// Writes the folder: histories, drawings, report.md and report.json (each file atomically);
/// returns the report.
pub fn write_app_test_files(outcome: &AppTestOutcome, dir: &Path) -> anyhow::Result<AppTestReport> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let report = app_test_report(outcome, dir);
    write_history(&dir.join("observed.json"), &outcome.observed.history)?;
    for (r, a) in outcome.replays.iter().zip(&report.anomalies) {
        let path = |i: usize| Path::new(&a.files[i]).to_path_buf();
        write_history(&path(0), &r.prediction.history)?;
        write_history(&path(1), &r.run.history)?;
        let graph = app_anomaly_graph(
            &outcome.observed.history,
            &r.prediction,
            format!("{} (replay {})", a.name, a.replay.word()),
        );
        write_text(&path(2), &graph.to_dot())?;
        write_text(&path(3), &graph.to_svg())?;
    }
    write_text(&dir.join("report.md"), &report.to_markdown())?;
    write_text(
        &dir.join("report.json"),
        &(serde_json::to_string_pretty(&report)? + "\n"),
    )?;
    Ok(report)
}

fn write_history(path: &Path, h: &History) -> anyhow::Result<()> {
    crate::output::write_file_atomically(path, |out| {
        crate::formats::json::write(h, out).map_err(|e| std::io::Error::other(e.to_string()))
    })?;
    Ok(())
}

fn write_text(path: &Path, text: &str) -> anyhow::Result<()> {
    crate::output::write_file_atomically(path, |out| out.write_all(text.as_bytes()))?;
    Ok(())
}
