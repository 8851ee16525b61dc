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
    /// The transaction (`T2.1`: session 2's first transaction; docs/formats.md "Naming
    /// transactions").
    pub txn: String,
    /// Its name in the trace files (`Txn(8, 0)`), when known.
    #[serde(default)]
    pub trace: Option<String>,
    /// The procedure call, e.g. `Amalgamate(custId0=1, custId1=3)`.
    pub call: Option<String>,
    /// Its part in the anomaly (e.g. `boundary; reads 2 keys from a different writer`); empty,
    /// and left out of report.json, for the observed run's calls.
    #[serde(default, skip_serializing_if = "String::is_empty")]
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
    /// The anomaly's transactions (its minimal core) and their calls.
    pub calls: Vec<CallLine>,
    /// The reads whose writer changed and that create the anomaly (those of its minimal
    /// core).
    pub changed_reads: Vec<ChangedReadLine>,
    /// Reads whose writer changed in the whole predicted execution (the anomaly needs only
    /// `changed_reads`).
    #[serde(default)]
    pub all_changed_reads: usize,
    /// The cycle (empty if none was found; the exact check alone then proves it).
    pub cycle: Vec<CycleLine>,
    /// The edges the cycle's "precedes" chains go through (`fact N` in a reason is entry N,
    /// from 1), each proven by facts before it.
    #[serde(default)]
    pub facts: Vec<CycleLine>,
    /// The anomaly's name as engineers know it, and what happens (`lost update: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anomaly: Option<String>,
    /// The anomaly's names in every vocabulary (engineer's, Adya's, Elle's, Plume's), from its
    /// row of the anomaly table: the same words `check` and `predict` print for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anomaly_names: Option<crate::history::anomalies::AnomalyNames>,
    /// Re-verification by the checkers: the predicted history satisfies the level.
    pub reverified_level: bool,
    /// Re-verification: it is unserializable (`None`: undecided).
    pub reverified_unserializable: Option<bool>,
    /// An independent second opinion: the brute-force oracle (every commit order) finds the
    /// anomaly's core unserializable (`None`: the core is too large for it, or there is none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle_unserializable: Option<bool>,
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

/// Where the observed run was recorded, when on a real database, and whether the database
/// kept the isolation level it promised.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DatabaseSection {
    /// Which database, e.g. `PostgreSQL 15.18 at 127.0.0.1:5432/postgres`.
    pub database: String,
    /// The isolation level every transaction ran at (`read-committed`, …).
    pub isolation: String,
    /// Transactions run (committed, rolled back, aborted by the database).
    pub attempts: usize,
    /// Of those, aborted by the database (serialization failures, deadlocks, lost
    /// connections), and how many of those by a lost connection.
    pub aborted_by_database: usize,
    /// Aborts caused by a lost connection.
    pub connection_losses: usize,
    /// Transactions whose commit outcome could not be learned.
    pub unknown_outcome: usize,
    /// Committed transactions recorded per second of the sessions' wall time.
    pub committed_per_second: f64,
    /// The promise, its verdict and the check, in one sentence.
    pub promise: String,
    /// `kept`, `broken` or `unknown`.
    pub promise_verdict: String,
    /// The violation explained, when broken.
    pub promise_explanation: Option<String>,
    /// Why the run ended early (e.g. the server went away), if it did.
    pub failure: Option<String>,
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
    /// The search for further distinct anomalies (ms; `run --max N`, N > 1).
    #[serde(default)]
    pub distinct_search_ms: f64,
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
    /// The observed run: committed transactions (the initial state not counted).
    pub observed_transactions: usize,
    /// The observed run's procedure calls, in execution order.
    pub observed_calls: Vec<CallLine>,
    /// The observed run's invariants.
    pub observed_invariants: Vec<InvariantLine>,
    /// The level check of the observed run, when it fails (its text report).
    pub observed_violation: Option<String>,
    /// The level the observed run violates, when it is not the level predicted at (a run on
    /// a database whose observed run is already unserializable: `serializability`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_violated_level: Option<String>,
    /// The observed run's anomaly as every view names it (`lost update (Adya G-single, …)`),
    /// when the observed run already shows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_anomaly: Option<String>,
    /// The prediction.
    pub prediction: Option<PredictionSection>,
    /// The validating replay.
    pub validation: Option<ValidationSection>,
    /// Measurements.
    pub timings: RunTimings,
    /// Files written.
    pub files: Vec<String>,
    /// The observed run's sessions, in words (`session 1: terminal 0, …`).
    #[serde(default)]
    pub sessions: Vec<String>,
    /// Show the store's raw keys (hashes) beside their meaning (`run --raw-keys`).
    #[serde(default)]
    pub raw_keys: bool,
    /// Where the observed run was recorded when on a real database (`None`: the embedded
    /// store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseSection>,
    /// The distinct anomalies found (`run --max N`; the first is the prediction above), in
    /// application terms ([`crate::pipeline::distinct`]).
    #[serde(default)]
    pub anomalies: Vec<DistinctAnomalyLine>,
    /// How the search for further distinct anomalies ended (`run --max N`, N > 1, after an
    /// anomaly was found): complete, at `--max`, or cut (budget, Ctrl-C).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSection>,
    /// Why no anomaly exists, when none does: the certificate's kind (`no-changeable-read`,
    /// `writers-ordered`, `no-pivot`, `search-exhausted`; docs/prediction.md "Why none:
    /// certificates"); its explanation is `reason`.
    #[serde(default)]
    pub certificate: Option<String>,
    /// How table statements found their rows when the run was recorded and replayed
    /// (`run --scan keyed|full`; docs/workloads.md, "Keyed scans"): `isopredict reproduce`
    /// records the run again the same way. `None` in the report of a run made before the
    /// mode was recorded (such a run scanned keyed).
    #[serde(default)]
    pub scan: Option<crate::store::ScanMode>,
}

/// How the search for further distinct anomalies ended ([`RunReport::search`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SearchSection {
    /// `exhausted` (no further distinct anomaly exists), `enough` (stopped at `--max`),
    /// `budget` (the time budget ran out), `interrupted` (Ctrl-C or SIGTERM) or `stopped`
    /// (another limit).
    pub end: String,
    /// Whether the search was cut before it could finish (budget, Ctrl-C, another limit):
    /// the anomalies listed are those found until then.
    pub cut: bool,
    /// The time budget in seconds (`budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_seconds: Option<f64>,
    /// Why it stopped (`stopped`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The end in one sentence, e.g. `Search cut by Ctrl-C (or SIGTERM) after 2 distinct
    /// anomalies; more may exist.`
    pub sentence: String,
}

/// One distinct anomaly of a run (`run --max N`), in application terms.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DistinctAnomalyLine {
    /// The anomaly's name as engineers know it (`lost update`; the anomaly table's).
    #[serde(default)]
    pub name: String,
    /// The same row's names in every vocabulary (Adya, Elle, Plume), as `report.json`'s
    /// prediction carries them; absent in reports written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anomaly_names: Option<crate::history::anomalies::AnomalyNames>,
    /// Procedures and table columns of its `pco` cycle, e.g. `Balance × WriteCheck on
    /// CHECKING.bal` ([`crate::pipeline::distinct::AppAnomaly`]).
    pub anomaly: String,
    /// The procedures, sorted.
    pub procedures: Vec<String>,
    /// The `TABLE.column`s, sorted.
    pub columns: Vec<String>,
    /// The anomaly's calls (`T2.1 WriteCheck(…)`): its minimal core, by transaction.
    pub calls: Vec<String>,
    /// Reads whose writer changed that create the anomaly.
    pub changed_reads: usize,
    /// The replay's verdict (`validated`, `serializable`, `level-violated`, `unknown`).
    pub validation: String,
    /// Invariants the validating run broke.
    pub broken_invariants: Vec<String>,
}

fn code(s: &str) -> String {
    format!("`{}`", s.replace('`', "'"))
}

fn key_text(key: &Option<String>, meaning: &Option<String>, raw: bool) -> String {
    match (key, meaning) {
        (Some(k), Some(m)) if raw => format!("{} (key {})", code(m), code(k)),
        (Some(_), Some(m)) => code(m),
        (Some(k), None) => format!("key {}", code(k)),
        _ => String::new(),
    }
}

/// The report's glossary: every term it uses that the papers define.
const GLOSSARY: &str = "## How to read this report

- **Transactions** are named `T<s>.<k>`: the `k`-th transaction of session `s`, both counted \
from 1 (docs/formats.md, \"Naming transactions\"); *Sessions* says which terminal and which \
trace ids each session was. *initial state* is the data loaded before the run.
- **Serial order**: running the transactions one at a time. An execution is *serializable* \
when some serial order explains every read; an *anomaly* is an execution none explains.
- **→so** (session order): the first transaction ran before the second in the same session. \
**→wr** (write–read): the second read a value the first wrote. **→ww**: both wrote a key and \
the first's write is the older one. **→rw** (anti-dependency): the first read a version of a \
key older than the one the second wrote, so in any serial order the first comes before the \
second. A cycle of these edges means no serial order exists. A derived edge (ww, rw) says why \
its \"precedes\" holds: the chain after \"by\", whose numbered *facts* are listed below the \
cycle, each following from the ones before it.
- **Prediction boundary**: per session, the last transaction the prediction keeps; later ones \
are left out because they could depend on a read that changed. *(boundary)* in the drawing \
marks it. With the *strict* boundary the boundary transaction stops at its changed read; with \
the *relaxed* one it is kept whole.
- **Strategies**: *exact-strict* decides exactly whether an unserializable execution exists \
within the strict boundary; *approx-strict* and *approx-relaxed* look only for executions \
whose edges above form a cycle (the strict or the relaxed boundary), which is faster but can \
miss an anomaly (docs/prediction.md).
- **(+N)** on an edge of the drawing: N more keys changed the same way between the same \
transactions. **(×N)** in a table: N reads of that key.
- **Validation**: the workload is run again, its reads steered to the predicted writes; \
*validated* means that run was checked on its own and is valid under the level and \
unserializable.

";

/// `A →rw B on key: reason`.
fn edge_text(e: &CycleLine, raw: bool) -> String {
    let key = key_text(&e.key, &e.key_meaning, raw);
    let on = if key.is_empty() {
        String::new()
    } else {
        format!(" on {key}")
    };
    format!("{} →{} {}{on}: {}", e.from, e.kind, e.to, e.reason)
}

impl RunReport {
    /// The exit code.
    pub fn exit_code(&self) -> u8 {
        self.verdict.exit_code()
    }

    /// The report as Markdown (report.md; also printed by `isopredict run`).
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        self.markdown_header(&mut out);
        self.markdown_database(&mut out);
        self.markdown_observed_violation(&mut out);
        self.markdown_sessions(&mut out);
        self.markdown_anomalies(&mut out);
        if let Some(p) = &self.prediction {
            self.markdown_prediction(&mut out, p);
        }
        self.markdown_validation(&mut out);
        self.markdown_measurements(&mut out);
        out
    }

    /// The title, the summary, why, and a cut search said at the top.
    fn markdown_header(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# isopredict run {} (seed {}, {}, level {}, {}{})\n",
            self.workload,
            self.seed,
            self.size,
            self.level,
            self.strategy,
            self.scan
                .map_or_else(String::new, |m| format!(", {m} scans"))
        );
        let _ = writeln!(out, "**{}**\n", self.summary);
        match (&self.reason, &self.certificate) {
            (Some(r), Some(c)) => {
                let _ = writeln!(out, "why: {r} (certificate: `{c}`)\n");
            }
            (Some(r), None) => {
                let _ = writeln!(out, "Reason: {r}\n");
            }
            (None, _) => {}
        }
        if let Some(s) = self.search.as_ref().filter(|s| s.cut) {
            // Said at the top: the anomalies below are those found until the cut.
            let _ = writeln!(out, "**{}**\n", s.sentence);
        }
    }

    /// "Recorded on a database": where and how the observed run ran.
    fn markdown_database(&self, out: &mut String) {
        if let Some(d) = &self.database {
            out.push_str("## Recorded on a database\n\n");
            let _ = writeln!(
                out,
                "The observed run ran on **{}** at isolation level **{}**: {} transactions ({} aborted by the database, {} of them by a lost connection; {} of unknown outcome), {:.0} committed transactions recorded per second.\n",
                d.database,
                d.isolation,
                d.attempts,
                d.aborted_by_database,
                d.connection_losses,
                d.unknown_outcome,
                d.committed_per_second
            );
            let _ = writeln!(out, "Promise: {}.\n", d.promise);
            if let Some(e) = &d.promise_explanation {
                let _ = writeln!(out, "```\n{}\n```\n", e.trim_end());
            }
            if let Some(f) = &d.failure {
                let _ = writeln!(out, "**The run ended early:** {f}\n");
            }
            out.push_str("Validation by replay runs on the embedded store, which controls which write each read sees; the database cannot.\n\n");
        }
    }

    /// "What happened" when the observed run already violates the level.
    fn markdown_observed_violation(&self, out: &mut String) {
        if let Some(v) = &self.observed_violation {
            let level = self.observed_violated_level.as_ref().unwrap_or(&self.level);
            match &self.observed_anomaly {
                Some(a) => {
                    let _ = writeln!(
                        out,
                        "## What happened: the observed run violates {level} ({a})\n"
                    );
                }
                None => {
                    let _ = writeln!(out, "## The observed run violates {level}\n");
                }
            }
            let _ = writeln!(out, "```\n{}\n```\n", v.trim_end());
        }
    }

    /// The sessions.
    fn markdown_sessions(&self, out: &mut String) {
        if !self.sessions.is_empty() {
            out.push_str("## Sessions\n\n");
            for s in &self.sessions {
                let _ = writeln!(out, "- {s}");
            }
            out.push('\n');
        }
    }

    /// "Distinct anomalies": one line per anomaly found, and how the search ended.
    fn markdown_anomalies(&self, out: &mut String) {
        if !self.anomalies.is_empty() {
            let _ = writeln!(
                out,
                "## Distinct anomalies ({})\n\nPredictions that differ in the procedures or the table columns of their cycle (`--max`), each re-verified and replayed; the first is detailed below.\n",
                self.anomalies.len()
            );
            for (i, a) in self.anomalies.iter().enumerate() {
                let broke = if a.broken_invariants.is_empty() {
                    String::new()
                } else {
                    format!(", broke {}", a.broken_invariants.join(", "))
                };
                let name = match &a.anomaly_names {
                    Some(names) => format!("{}: ", names.id.label()),
                    None if a.name.is_empty() => String::new(),
                    None => format!("{}: ", a.name),
                };
                let _ = writeln!(
                    out,
                    "{}. **{name}{}**: replay {}{broke}; {} changed read(s); {}",
                    i + 1,
                    a.anomaly,
                    a.validation,
                    a.changed_reads,
                    a.calls.join(", ")
                );
            }
            out.push('\n');
            if let Some(s) = &self.search {
                let _ = writeln!(
                    out,
                    "{} ({:.1} s)\n",
                    s.sentence,
                    self.timings.distinct_search_ms / 1000.0
                );
            }
        }
    }

    /// The first prediction in detail: the anomaly, its calls, the reads that change writer, its cycle, its boundary and its re-verification.
    fn markdown_prediction(&self, out: &mut String, p: &PredictionSection) {
        if let Some(a) = &p.anomaly {
            let _ = writeln!(out, "## The anomaly\n\n{a}\n");
        }
        self.markdown_calls(out, p);
        self.markdown_changed_reads(out, p);
        self.markdown_cycle(out, p);
        out.push_str("## Prediction boundary\n\n");
        for b in &p.boundaries {
            let _ = writeln!(out, "- {b}");
        }
        out.push_str(&reverification(&self.level, p));
    }

    /// "Procedure calls involved": the table of the anomaly's calls.
    fn markdown_calls(&self, out: &mut String, p: &PredictionSection) {
        out.push_str("## Procedure calls involved\n\n");
        out.push_str(
            "| Transaction (in the trace) | Procedure call | Part in the anomaly |\n|---|---|---|\n",
        );
        for c in &p.calls {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                match &c.trace {
                    Some(t) => format!("{} ({t})", c.txn),
                    None => c.txn.clone(),
                },
                c.call.as_deref().map_or("–".to_string(), code),
                c.role
            );
        }
        out.push('\n');
    }

    /// "Reads that change writer", and the observed writers outside the anomaly.
    fn markdown_changed_reads(&self, out: &mut String, p: &PredictionSection) {
        if !p.changed_reads.is_empty() {
            let shown = p.changed_reads.iter().map(|c| c.reads).sum::<u32>() as usize;
            let _ = writeln!(out, "## Reads that change writer ({shown})\n");
            if p.all_changed_reads > shown {
                let _ = writeln!(
                    out,
                    "The reads of the anomaly's transactions that create it; the predicted \
                     execution changes {} read(s) in all (predicted.json has every one).\n",
                    p.all_changed_reads
                );
            }
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
                    key_text(&Some(c.key.clone()), &c.key_meaning, self.raw_keys),
                    c.old_writer,
                    c.new_writer
                );
            }
            out.push('\n');
            // An observed writer outside the anomaly is in neither the calls table nor
            // the drawing: say why.
            let mut outside: Vec<&str> = p
                .changed_reads
                .iter()
                .map(|c| c.old_writer.as_str())
                .filter(|w| *w != "initial state" && !p.calls.iter().any(|c| c.txn == *w))
                .collect();
            outside.sort_unstable();
            outside.dedup();
            if !outside.is_empty() {
                let one = outside.len() == 1;
                let _ = writeln!(
                    out,
                    "The observed writer{} {} {} not one of the anomaly's transactions, so \
                     neither the table of calls above nor the drawing shows {} (report.json's \
                     `observed_calls` has {} call{}).\n",
                    if one { "" } else { "s" },
                    outside.join(", "),
                    if one { "is" } else { "are" },
                    if one { "it" } else { "them" },
                    if one { "its" } else { "their" },
                    if one { "" } else { "s" },
                );
            }
        }
    }

    /// "Why no serial order exists": the cycle and the facts its chains go through.
    fn markdown_cycle(&self, out: &mut String, p: &PredictionSection) {
        if !p.cycle.is_empty() {
            out.push_str("## Why no serial order exists (a cycle)\n\n");
            for (i, e) in p.cycle.iter().enumerate() {
                let _ = writeln!(out, "{}. {}", i + 1, edge_text(e, self.raw_keys));
            }
            out.push('\n');
            // Session-order facts (and "the initial state precedes every transaction")
            // are self-evident and never cited by number: only the derived ones are
            // listed, numbered from 1 among themselves as the chains cite them
            // (`predict::explain::fact_number`).
            let cited: Vec<(usize, &CycleLine)> = p
                .facts
                .iter()
                .filter(|e| e.kind != "so")
                .enumerate()
                .collect();
            if !cited.is_empty() {
                out.push_str(
                    "Facts the chains above go through (each follows from the ones before \
                     it):\n\n",
                );
                for (i, e) in cited {
                    let _ = writeln!(out, "- fact {}: {}", i + 1, edge_text(e, self.raw_keys));
                }
                out.push('\n');
            }
        }
    }

    /// "Validation": the replay's verdict, its divergences and the invariants of the validating run.
    fn markdown_validation(&self, out: &mut String) {
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
                let verdict = match v.verdict.as_str() {
                    "validated-diverged" => format!(
                        "The anomaly is validated after diverging: the execution the replay \
                         produced instead was checked on its own and satisfies {} and is \
                         unserializable — an anomaly of the program, though not exactly the \
                         predicted one (IsoPredict's tables count it as validated and \
                         diverged).",
                        self.level
                    ),
                    "serializable" => "The execution the replay produced is serializable, so \
                                       this prediction is not confirmed."
                        .to_string(),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "The replay diverged from the prediction at {} read(s): there, the call did \
                     not make the read the prediction has (it took another path, read another \
                     row, or the predicted writer had not written the key), and the replay let \
                     it read the latest write the level allows instead. {verdict}\n",
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
            invariants_markdown(out, &v.invariants, "the validating run");
        }
    }

    /// The invariants of the observed run, the measurements, the glossary and the files.
    fn markdown_measurements(&self, out: &mut String) {
        invariants_markdown(out, &self.observed_invariants, "the observed run");
        out.push_str("## Measurements\n\n");
        let t = &self.timings;
        let _ = writeln!(
            out,
            "record {:.0} ms · check {:.0} ms · constraint generation {:.0} ms ({} literals) · solving {:.0} ms · validation {:.0} ms · total {:.0} ms\n",
            t.record_ms, t.check_ms, t.generation_ms, t.literals, t.solving_ms, t.validation_ms, t.total_ms
        );
        out.push_str(GLOSSARY);
        if !self.files.is_empty() {
            out.push_str("## Files\n\n");
            for f in &self.files {
                let _ = writeln!(out, "- {f}");
            }
        }
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

/// The prediction's re-verification in words: the decision core's verdicts, and the
/// independent brute-force oracle's on the anomaly's transactions when it answered.
fn reverification(level: &str, p: &PredictionSection) -> String {
    let mut out = format!(
        "\nRe-verified by the checkers: satisfies {level}: {}; unserializable: {}.\n\n",
        if p.reverified_level { "yes" } else { "NO" },
        match p.reverified_unserializable {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "undecided",
        }
    );
    if let Some(bad) = p.oracle_unserializable {
        let _ = writeln!(
            out,
            "Independently of the checkers, the brute-force oracle (every commit order of the \
             anomaly's transactions) finds them unserializable: {}.\n",
            if bad { "yes" } else { "NO" }
        );
    }
    out
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

    /// A validated Smallbank anomaly's report with one call, one changed read, one cycle edge
    /// and a broken invariant.
    fn smallbank_report() -> RunReport {
        RunReport {
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
            observed_violated_level: None,
            observed_anomaly: None,
            database: None,
            scan: Some(crate::store::ScanMode::Keyed),
            prediction: Some(PredictionSection {
                boundaries: vec!["session 1: all 3 transactions".into()],
                calls: vec![CallLine {
                    txn: "T1.1".into(),
                    trace: Some("Txn(1, 0)".into()),
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
                facts: vec![],
                all_changed_reads: 1,
                anomaly: None,
                anomaly_names: None,
                reverified_level: true,
                reverified_unserializable: Some(true),
                oracle_unserializable: None,
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
            sessions: vec!["session 1: terminal 0 (trace session id 7)".into()],
            raw_keys: false,
            anomalies: vec![DistinctAnomalyLine {
                name: "lost update".into(),
                anomaly_names: Some(crate::history::AnomalyId::LostUpdate.row().names()),
                anomaly: "Amalgamate × Balance on CHECKING.bal".into(),
                procedures: vec!["Amalgamate".into(), "Balance".into()],
                columns: vec!["CHECKING.bal".into()],
                calls: vec!["T1.1 Amalgamate(custId0=1, custId1=3)".into()],
                changed_reads: 1,
                validation: "validated".into(),
                broken_invariants: vec!["I1".into()],
            }],
            search: None,
            certificate: None,
        }
    }

    #[test]
    fn markdown_names_calls_reads_cycle_and_invariants() {
        let r = smallbank_report();
        let md = r.to_markdown();
        assert!(md.contains("## Distinct anomalies (1)"));
        // The list names the anomaly as every view does: the table row's label.
        assert!(md.contains(&format!(
            "1. **{}: Amalgamate × Balance on CHECKING.bal**: replay validated, broke I1; 1 changed read(s)",
            crate::history::AnomalyId::LostUpdate.label()
        )));
        assert!(md.contains(
            "| T1.1 (Txn(1, 0)) | `Amalgamate(custId0=1, custId1=3)` | reads from a different writer |"
        ));
        assert!(md.contains("| Txn(1, 0) | `CHECKING.bal[custid=1]` | Txn(2, 0) | initial state |"));
        assert!(md.contains("1. Txn(1, 0) →rw Txn(2, 0) on `CHECKING.bal[custid=1]`:"));
        // Raw keys only on request; every term of the papers explained.
        assert!(!md.contains("`123`"));
        let raw = RunReport {
            raw_keys: true,
            ..r.clone()
        };
        assert!(raw
            .to_markdown()
            .contains("`CHECKING.bal[custid=1]` (key `123`)"));
        for term in [
            "→rw",
            "Prediction boundary",
            "approx-relaxed",
            "(+N)",
            "(boundary)",
            "## Sessions",
        ] {
            assert!(md.contains(term), "the report explains {term}");
        }
        assert!(md.contains(
            "- A13 total money is conserved: **BROKEN** — total is 24995, expected 25000"
        ));
        assert!(md.contains("The replay followed the prediction exactly."));
        let json = serde_json::to_string(&r).unwrap();
        let back: RunReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        assert!(!md.contains("Facts the chains"), "no facts, no heading");
    }

    #[test]
    fn cited_facts_are_numbered_from_one_and_session_order_is_not_listed() {
        let r = smallbank_report();
        // Session-order facts are not listed; cited facts are numbered from 1 among
        // themselves, as the chains cite them.
        let fact = |kind: &str, reason: &str| CycleLine {
            from: "T1.1".into(),
            to: "T2.1".into(),
            kind: kind.into(),
            key: None,
            key_meaning: None,
            reason: reason.into(),
        };
        let section = PredictionSection {
            boundaries: vec![],
            calls: vec![],
            changed_reads: vec![],
            cycle: vec![fact("rw", "by T1.1 →so T1.2 →ww T2.1 (fact 1)")],
            facts: vec![
                fact("so", "T1.1 precedes T1.2 in their session"),
                fact("ww", "T1.2 writes x before T2.1"),
            ],
            all_changed_reads: 0,
            anomaly: None,
            anomaly_names: None,
            reverified_level: true,
            reverified_unserializable: Some(true),
            oracle_unserializable: None,
        };
        let with_facts = RunReport {
            prediction: Some(section.clone()),
            ..r.clone()
        };
        let md = with_facts.to_markdown();
        assert!(md.contains("- fact 1: T1.1 →ww T2.1"), "{md}");
        assert!(!md.contains("fact 2"), "{md}");
        assert!(!md.contains("in their session"), "{md}");
        // The oracle's independent opinion is said only when it answered.
        assert!(!md.contains("brute-force oracle"), "{md}");
        let with_oracle = RunReport {
            prediction: Some(PredictionSection {
                oracle_unserializable: Some(true),
                ..section.clone()
            }),
            ..r.clone()
        };
        assert!(with_oracle.to_markdown().contains(
            "Independently of the checkers, the brute-force oracle (every commit order of the \
             anomaly's transactions) finds them unserializable: yes."
        ));
        let only_session_order = RunReport {
            prediction: Some(PredictionSection {
                facts: vec![fact("so", "T1.1 precedes T1.2 in their session")],
                ..section
            }),
            ..r.clone()
        };
        assert!(!only_session_order
            .to_markdown()
            .contains("Facts the chains"));
    }

    #[test]
    fn a_cut_search_is_said_at_the_top_and_under_the_anomalies() {
        let r = smallbank_report();
        // A cut search is said at the top and under the anomalies; a complete one only there.
        let search = |end: &str, cut: bool, sentence: &str| SearchSection {
            end: end.into(),
            cut,
            budget_seconds: None,
            reason: None,
            sentence: sentence.into(),
        };
        let cut = RunReport {
            timings: RunTimings {
                distinct_search_ms: 2040.0,
                ..RunTimings::default()
            },
            search: Some(search(
                "interrupted",
                true,
                "Search cut by Ctrl-C (or SIGTERM) after 1 distinct anomaly; more may exist.",
            )),
            ..r.clone()
        };
        let md = cut.to_markdown();
        let top = md.find("**Search cut by Ctrl-C").expect("said at the top");
        assert!(top < md.find("## Distinct anomalies").unwrap());
        assert!(md.contains("more may exist. (2.0 s)"));
        let json = serde_json::to_value(&cut).unwrap();
        assert_eq!(json["search"]["end"], "interrupted");
        assert_eq!(json["search"]["cut"], true);
        let complete = RunReport {
            search: Some(search(
                "exhausted",
                false,
                "Search complete: 1 distinct anomaly; no further distinct anomaly exists.",
            )),
            ..r.clone()
        };
        let md = complete.to_markdown();
        assert_eq!(md.matches("Search complete").count(), 1);
        assert!(!md.contains("**Search"));
    }

    #[test]
    fn a_none_says_why_with_its_certificate() {
        let r = RunReport {
            workload: "voter".into(),
            seed: 1,
            size: "small".into(),
            level: "causal".into(),
            strategy: "approx-relaxed".into(),
            verdict: RunVerdict::NoAnomaly,
            summary: "No anomaly found in this run.".into(),
            reason: Some("every two writers are ordered".into()),
            observed_transactions: 4,
            observed_calls: vec![],
            observed_invariants: vec![],
            observed_violation: None,
            observed_violated_level: None,
            observed_anomaly: None,
            prediction: None,
            validation: None,
            timings: RunTimings::default(),
            files: vec![],
            sessions: vec![],
            raw_keys: false,
            database: None,
            anomalies: vec![],
            search: None,
            certificate: Some("writers-ordered".into()),
            scan: None,
        };
        let md = r.to_markdown();
        // A report without a scan mode (written before it was recorded) says none.
        assert!(md
            .starts_with("# isopredict run voter (seed 1, small, level causal, approx-relaxed)\n"));
        let json = serde_json::to_value(&r).unwrap();
        let mut old = json.clone();
        old.as_object_mut().unwrap().remove("scan");
        let read: RunReport = serde_json::from_value(old).unwrap();
        assert_eq!(read.scan, None);
        let full = RunReport {
            scan: Some(crate::store::ScanMode::Full),
            ..r.clone()
        };
        assert!(full.to_markdown().starts_with(
            "# isopredict run voter (seed 1, small, level causal, approx-relaxed, full scans)\n"
        ));
        let full_json = serde_json::to_value(&full).unwrap();
        assert_eq!(full_json["scan"], "full");
        assert_eq!(
            serde_json::from_value::<RunReport>(full_json).unwrap(),
            full
        );
        assert!(md.contains("why: every two writers are ordered (certificate: `writers-ordered`)"));
        assert!(!md.contains("Reason:"));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["certificate"], "writers-ordered");
        assert!(json.get("search").is_none());
    }
}
