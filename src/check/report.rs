//! The result of a check — [`CheckReport`], the stable `--json` output (schema in
//! docs/checking.md) — and its text and DOT renderings.
//!
//! Everything a person needs to find the transactions and reads in their own log is in the
//! report itself: transaction labels (`History::txn_label`), the input line range of every
//! transaction, and the key, value and input line of every operation involved.

use crate::dot::DotWriter;
use std::fmt::{self, Write as _};

use rustc_hash::{FxHashMap, FxHashSet};

use super::anomaly::Anomaly;
use super::classify::{Instance, Relation};
use super::cycles::{Analysis, FoundCycle};
use super::graph::{is_known_ww, CommitGraph, KNOWN_WW, SESSION_ORDER};
use super::read_consistency::{ReadCheck, ReadIssue, NONE};
use super::{CheckOptions, Level};
use crate::history::{History, OpId, OpKind, TxnId, Unresolved, INITIAL_TXN, NO_SESSION};

/// A transaction as reports name it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TxnRef {
    /// isopredict's dense id (0 is the initial transaction).
    pub id: TxnId,
    /// `initial state` or `T<session>.<position>`, both from 1 ([`History::txn_label`]).
    pub label: String,
    /// Its session (isopredict's 0-based index); `None` for the initial transaction.
    pub session: Option<u32>,
    /// 0-based position in its session.
    pub position: u32,
    /// The transaction's id in the input, when the format has one.
    pub external_id: Option<u64>,
    /// First and last input line of its operations, when known.
    pub lines: Option<(u32, u32)>,
}

impl TxnRef {
    /// Describes transaction `t` of `history`.
    pub fn new(history: &History, t: TxnId) -> TxnRef {
        let txn = history.txn(t);
        let mut lines: Option<(u32, u32)> = None;
        for op in history.txn_ops(t) {
            if op.line != 0 {
                lines = Some(match lines {
                    None => (op.line, op.line),
                    Some((a, b)) => (a.min(op.line), b.max(op.line)),
                });
            }
        }
        TxnRef {
            id: t,
            label: history.txn_label(t),
            session: (txn.session != NO_SESSION).then_some(txn.session),
            position: txn.index_in_session,
            external_id: txn.external_id,
            lines,
        }
    }
}

impl fmt::Display for TxnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.lines {
            Some((a, b)) if a == b => write!(f, "{} [line {a}]", self.label),
            Some((a, b)) => write!(f, "{} [lines {a}-{b}]", self.label),
            None => f.write_str(&self.label),
        }
    }
}

/// An operation as reports name it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpRef {
    /// isopredict's dense operation id.
    pub id: OpId,
    /// The transaction it belongs to.
    pub txn: TxnId,
    /// Read or write.
    pub kind: OpKind,
    /// The key's name as in the input.
    pub key: String,
    /// The value read or written, when the format carries values.
    pub value: Option<u64>,
    /// Its 1-based input line; 0 when it has none (implicit initial write, built in memory).
    pub line: u32,
}

impl OpRef {
    /// Describes operation `op` of `history`.
    pub fn new(history: &History, op: OpId) -> OpRef {
        let o = history.op(op);
        OpRef {
            id: op,
            txn: o.txn,
            kind: o.kind,
            key: crate::printable::printable(history.key_name(o.key)).into_owned(),
            value: o.value,
            line: o.line,
        }
    }

    fn maybe(history: &History, op: OpId) -> Option<OpRef> {
        (op != NONE).then(|| OpRef::new(history, op))
    }
}

impl fmt::Display for OpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            OpKind::Read => "R",
            OpKind::Write => "W",
        };
        match self.value {
            Some(v) => write!(f, "{kind}({},{v})", self.key)?,
            None => write!(f, "{kind}({})", self.key)?,
        }
        if self.line != 0 {
            write!(f, " at line {}", self.line)
        } else if self.txn == INITIAL_TXN {
            f.write_str(" (initial value)")
        } else {
            Ok(())
        }
    }
}

/// A read that violates read consistency (TAP a–f) or repeatable reads (TAP j).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReadViolation {
    /// The pattern.
    pub anomaly: Anomaly,
    /// Its Plume TAP letter.
    pub tap: char,
    /// The reading transaction.
    pub txn: TxnRef,
    /// The read.
    pub read: OpRef,
    /// The write it observed (none for a ThinAirRead).
    pub write: Option<OpRef>,
    /// The transaction of that write.
    pub writer: Option<TxnRef>,
    /// The operation that makes it a violation: NotMyOwnWrite → the reader's own earlier
    /// write; NotMyLastWrite → the own write that overwrote the one read; IntermediateRead →
    /// the writer's final write of the key; NonRepeatableRead → the earlier read of the key
    /// from another transaction. None otherwise.
    pub related: Option<OpRef>,
    /// The violation in words.
    pub explanation: String,
}

/// Why an edge of a reported cycle is in the commit order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EdgeReason {
    /// `from` comes before `to` in a session (or `from` is the initial transaction).
    SessionOrder,
    /// `to` reads `key` from `from`.
    WriteRead {
        /// The key.
        key: String,
        /// The read in `to`.
        read: OpRef,
        /// The write in `from` it observed.
        write: OpRef,
    },
    /// An isolation axiom instance inferred `from → to` (t2 → t1).
    Axiom(Box<AxiomInstance>),
    /// The input shows that `from`'s write of `key` was installed before `to`'s (a known
    /// version order, e.g. from an Elle list-append read).
    WriteWrite {
        /// The key.
        key: String,
        /// The earlier write, in `from`.
        earlier: OpRef,
        /// The later write, in `to`.
        later: OpRef,
    },
}

/// An isolation axiom instance (t1, t2, t3, key) that inferred `t2 → t1`: t3 reads `key` from
/// t1, t2 writes `key`, and t2 is visible to t3.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AxiomInstance {
    /// The axiom: `read-committed`, `read-atomic` or `causal` (Biswas & Enea).
    pub axiom: String,
    /// The Plume pattern this instance forms with the rest of the cycle.
    pub anomaly: Anomaly,
    /// Its TAP letter.
    pub tap: char,
    /// The writer t3 reads `key` from (the edge's target).
    pub t1: TxnId,
    /// The other writer of `key` (the edge's source).
    pub t2: TxnId,
    /// The reader.
    pub t3: TxnRef,
    /// The key.
    pub key: String,
    /// How t2 reaches t3: `session-order`, `write-read` or `happens-before`.
    pub relation: Relation,
    /// t3's read of `key` from t1.
    pub read_x: OpRef,
    /// t1's write that `read_x` observed.
    pub write_x: OpRef,
    /// t2's (last) write of `key`.
    pub t2_write_x: Option<OpRef>,
    /// A read of t3 from t2: for NonMonoRead the one before `read_x`.
    pub read_y: Option<OpRef>,
}

/// One edge of a reported cycle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CycleEdge {
    /// Source transaction id.
    pub from: TxnId,
    /// Target transaction id.
    pub to: TxnId,
    /// Why the edge is there.
    pub reason: EdgeReason,
}

/// A cycle in the commit order the level forces: the history violates the level.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CycleReport {
    /// The most specific Plume pattern among the cycle's axiom instances (CyclicCO for a cycle
    /// of session order and write–read edges alone).
    pub anomaly: Anomaly,
    /// Its TAP letter.
    pub tap: char,
    /// How many transactions are in the strongly connected component the cycle lies in.
    pub component_size: usize,
    /// The transactions involved: those on the cycle, then the readers t3 of its axiom
    /// instances.
    pub transactions: Vec<TxnRef>,
    /// The cycle, in order: each edge's `to` is the next edge's `from`; the last edge returns
    /// to the first edge's `from` (unless the cycle was cut: see `edges_cut`).
    pub edges: Vec<CycleEdge>,
    /// How many edges at the end of the cycle were left out by [`CheckReport::cut_cycles`]
    /// (0: the cycle is complete).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub edges_cut: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Sizes of what was checked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CheckSummary {
    /// Sessions.
    pub sessions: usize,
    /// Transactions (committed and aborted), the initial one excluded.
    pub transactions: usize,
    /// Operations, the initial transaction's writes excluded.
    pub operations: usize,
    /// Session-order and write–read edges of the commit-order graph.
    pub base_edges: usize,
    /// Edges the level's axiom inferred.
    pub inferred_edges: usize,
}

/// The result of checking a history against one level: the stable `--json` output.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CheckReport {
    /// The level checked.
    pub level: Level,
    /// Whether the history satisfies it.
    pub consistent: bool,
    /// The input's name.
    pub source: String,
    /// Sizes.
    pub summary: CheckSummary,
    /// Violating reads (at most `CheckOptions::max_violations`), in operation order.
    pub read_violations: Vec<ReadViolation>,
    /// How many violating reads there are in all.
    pub read_violation_count: usize,
    /// One cycle per strongly connected component of the commit order (at most
    /// `CheckOptions::max_violations`).
    pub cycles: Vec<CycleReport>,
    /// How many such components there are in all.
    pub cycle_count: usize,
    /// When consistent and asked for: a commit order satisfying the level (transaction ids,
    /// committed transactions only, the initial transaction first).
    pub witness: Option<Vec<TxnId>>,
    /// The witness's transactions by name (`T2.1`, [`History::txn_label`]), as the text
    /// report prints them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness_labels: Option<Vec<String>>,
}

impl CheckReport {
    /// Whether the history satisfies the level.
    pub fn is_consistent(&self) -> bool {
        self.consistent
    }

    /// Keeps at most `max_edges` edges of each cycle (and the transactions they and their
    /// axiom instances name), recording how many were left out in
    /// [`CycleReport::edges_cut`], so that one very long cycle does not make the output huge.
    pub fn cut_cycles(&mut self, max_edges: usize) {
        for c in &mut self.cycles {
            if c.edges.len() <= max_edges {
                continue;
            }
            c.edges_cut += c.edges.len() - max_edges;
            c.edges.truncate(max_edges);
            let named: FxHashSet<TxnId> = c
                .edges
                .iter()
                .flat_map(|e| {
                    let t3 = match &e.reason {
                        EdgeReason::Axiom(a) => Some(a.t3.id),
                        _ => None,
                    };
                    [Some(e.from), Some(e.to), t3].into_iter().flatten()
                })
                .collect();
            c.transactions.retain(|t| named.contains(&t.id));
        }
    }

    /// The report in words, for a person with the input file at hand.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let verdict = if self.consistent {
            "consistent"
        } else {
            "VIOLATED"
        };
        let _ = writeln!(
            out,
            "{} ({}): {verdict} — {}: {} sessions, {} transactions, {} operations",
            self.level.full_name(),
            self.level,
            self.source,
            self.summary.sessions,
            self.summary.transactions,
            self.summary.operations,
        );
        if !self.read_violations.is_empty() {
            let _ = writeln!(out, "{} violating read(s):", self.read_violation_count);
            for v in &self.read_violations {
                let _ = writeln!(out, "  {}: {}", v.anomaly.row().label(), v.explanation);
            }
            if self.read_violation_count > self.read_violations.len() {
                let _ = writeln!(
                    out,
                    "  … and {} more",
                    self.read_violation_count - self.read_violations.len()
                );
            }
        }
        if !self.cycles.is_empty() {
            let _ = writeln!(
                out,
                "{} cycle(s) in the commit order {} forces:",
                self.cycle_count, self.level
            );
            for (i, c) in self.cycles.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "  cycle {}: {} — {}; {} transactions in its component",
                    i + 1,
                    c.anomaly.row().label(),
                    c.anomaly.description(),
                    c.component_size
                );
                let by_id: FxHashMap<TxnId, &TxnRef> =
                    c.transactions.iter().map(|t| (t.id, t)).collect();
                let label = |id: TxnId| {
                    by_id
                        .get(&id)
                        .map_or_else(|| format!("transaction #{id}"), |t| t.to_string())
                };
                let name = |id: TxnId| {
                    by_id
                        .get(&id)
                        .map_or_else(|| format!("transaction #{id}"), |t| t.label.clone())
                };
                for e in &c.edges {
                    let _ = writeln!(
                        out,
                        "    {} -> {}: {}",
                        label(e.from),
                        label(e.to),
                        reason_text(&e.reason, e.from, e.to, &name)
                    );
                }
                if c.edges_cut > 0 {
                    let _ = writeln!(
                        out,
                        "    … cut: {} more edges of this cycle of {} edges not shown",
                        c.edges_cut,
                        c.edges.len() + c.edges_cut
                    );
                }
            }
            if self.cycle_count > self.cycles.len() {
                let _ = writeln!(out, "  … and {} more", self.cycle_count - self.cycles.len());
            }
        }
        if let Some(w) = &self.witness {
            let _ = writeln!(out, "witness commit order ({} transactions):", w.len());
            let names: Vec<String> = match &self.witness_labels {
                Some(l) if l.len() == w.len() => l.clone(),
                _ => w.iter().map(|t| format!("transaction #{t}")).collect(),
            };
            for chunk in names.chunks(16) {
                let _ = writeln!(out, "  {}", chunk.join(" "));
            }
        }
        out
    }

    /// The violations as a Graphviz digraph (one cluster per cycle, then the violating reads),
    /// or `None` when there are none.
    pub fn render_dot(&self) -> Option<String> {
        if self.consistent {
            return None;
        }
        let mut dot = DotWriter::digraph("violations");
        dot.label(&format!(
            "{}: {} violated",
            self.source,
            self.level.full_name()
        ))
        .stmt("labelloc=t")
        .stmt("node [shape=box, fontname=\"monospace\"]");
        for (i, c) in self.cycles.iter().enumerate() {
            dot_cycle(&mut dot, i, c);
        }
        for (i, v) in self.read_violations.iter().enumerate() {
            dot.begin_cluster(format_args!("read_{i}"), &v.anomaly.row().label());
            dot.node(format_args!("r{i}_t{}", v.txn.id), &dot_label(&v.txn), "");
            if let Some(w) = &v.writer {
                if w.id != v.txn.id {
                    dot.node(format_args!("r{i}_t{}", w.id), &dot_label(w), "");
                }
                dot.edge(
                    format_args!("r{i}_t{}", w.id),
                    format_args!("r{i}_t{}", v.txn.id),
                    &v.read.to_string(),
                    "color=red, fontcolor=red",
                );
            }
            dot.end_cluster();
        }
        Some(dot.finish())
    }
}

/// Cycle `i` as a DOT cluster: its transactions, its edges, and each axiom edge's two premises
/// dashed.
fn dot_cycle(dot: &mut DotWriter, i: usize, c: &CycleReport) {
    dot.begin_cluster(i, &format!("cycle {}: {}", i + 1, c.anomaly.row().label()));
    for t in &c.transactions {
        dot.node(format_args!("c{i}_t{}", t.id), &dot_label(t), "");
    }
    for e in &c.edges {
        let (label, style) = match &e.reason {
            EdgeReason::SessionOrder => ("so".to_string(), "color=black"),
            EdgeReason::WriteRead { key, .. } => {
                (format!("wr({key})"), "color=blue, fontcolor=blue")
            }
            EdgeReason::Axiom(a) => (
                format!("{}: {} read by {}", a.anomaly, a.key, a.t3.label),
                "color=red, fontcolor=red, style=bold",
            ),
            EdgeReason::WriteWrite { key, .. } => {
                (format!("ww({key})"), "color=darkgreen, fontcolor=darkgreen")
            }
        };
        dot.edge(
            format_args!("c{i}_t{}", e.from),
            format_args!("c{i}_t{}", e.to),
            &label,
            style,
        );
        if let EdgeReason::Axiom(a) = &e.reason {
            let AxiomInstance {
                t1,
                t2,
                t3,
                key,
                relation,
                read_y,
                ..
            } = a.as_ref();
            let rel = match (relation, read_y) {
                (Relation::SessionOrder, _) => "so".to_string(),
                (Relation::WriteRead, Some(r)) => format!("wr({})", r.key),
                (Relation::WriteRead, None) => "wr".to_string(),
                (Relation::HappensBefore, _) => "hb".to_string(),
            };
            let premise = "style=dashed, color=gray40, fontcolor=gray40";
            dot.edge(
                format_args!("c{i}_t{t1}"),
                format_args!("c{i}_t{}", t3.id),
                &format!("wr({key})"),
                premise,
            );
            dot.edge(
                format_args!("c{i}_t{t2}"),
                format_args!("c{i}_t{}", t3.id),
                &rel,
                premise,
            );
        }
    }
    dot.end_cluster();
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_text())
    }
}

fn dot_label(t: &TxnRef) -> String {
    match t.lines {
        Some((a, b)) if a == b => format!("{}\nline {a}", t.label),
        Some((a, b)) => format!("{}\nlines {a}-{b}", t.label),
        None => t.label.clone(),
    }
}

fn reason_text(
    reason: &EdgeReason,
    from: TxnId,
    to: TxnId,
    name: &dyn Fn(TxnId) -> String,
) -> String {
    match reason {
        EdgeReason::SessionOrder if from == INITIAL_TXN => {
            "the initial transaction comes first".to_string()
        }
        EdgeReason::SessionOrder => "session order".to_string(),
        EdgeReason::WriteRead { read, write, .. } => {
            format!("{} reads {read} written by {write} (write-read)", name(to))
        }
        EdgeReason::WriteWrite { earlier, later, .. } => {
            format!("{earlier} was installed before {later} (known write-write order)")
        }
        EdgeReason::Axiom(a) => {
            let AxiomInstance {
                axiom,
                anomaly,
                tap,
                t1,
                t2,
                t3,
                key,
                relation,
                read_x,
                t2_write_x,
                read_y,
                ..
            } = a.as_ref();
            let visible = match (relation, read_y) {
                (Relation::WriteRead, Some(r))
                    if *anomaly == Anomaly::NonMonoReadCo || *anomaly == Anomaly::NonMonoReadCm =>
                {
                    format!(
                        "{} first reads {r} from {}, then {read_x} from {}",
                        t3,
                        name(*t2),
                        name(*t1)
                    )
                }
                (Relation::WriteRead, Some(r)) => {
                    format!(
                        "{} reads {read_x} from {} and {r} from {}",
                        t3,
                        name(*t1),
                        name(*t2)
                    )
                }
                (Relation::SessionOrder, _) => format!(
                    "{} reads {read_x} from {}, and {} precedes it in its session",
                    t3,
                    name(*t1),
                    name(*t2)
                ),
                _ => format!(
                    "{} reads {read_x} from {}, and {} happens before it",
                    t3,
                    name(*t1),
                    name(*t2)
                ),
            };
            let write = t2_write_x
                .as_ref()
                .map_or_else(String::new, |w| format!(" ({w})"));
            format!(
                "{axiom} axiom, {anomaly} (TAP {tap}): {visible}; {} also writes {key}{write}, so {} must commit before {}",
                name(*t2),
                name(*t2),
                name(*t1)
            )
        }
    }
}

/// Assembles the report.
pub(crate) fn build(
    history: &History,
    level: Level,
    options: &CheckOptions,
    reads: &ReadCheck,
    graph: &CommitGraph,
    analysis: Analysis,
) -> CheckReport {
    let mut txn_refs = TxnRefs::new(history);
    let read_violations: Vec<ReadViolation> = reads
        .issues
        .iter()
        .take(options.max_violations)
        .map(|issue| read_violation(history, &mut txn_refs, issue))
        .collect();
    let cycles: Vec<CycleReport> = analysis
        .cycles
        .iter()
        .map(|c| cycle_report(history, &mut txn_refs, level, c))
        .collect();
    let consistent = reads.issues.is_empty() && analysis.cycle_count == 0;
    let witness = match (&analysis.order, options.witness && consistent) {
        (Some(order), true) => Some(
            order
                .iter()
                .copied()
                .filter(|&t| history.txn(t).is_committed())
                .collect(),
        ),
        _ => None,
    };
    CheckReport {
        level,
        consistent,
        source: history.source().to_string(),
        summary: CheckSummary {
            sessions: history.sessions().len(),
            transactions: history.txn_count() - 1,
            operations: history.ops().len() - history.txn_ops(INITIAL_TXN).len(),
            base_edges: graph.base_edge_count(),
            inferred_edges: graph.inferred_edge_count(),
        },
        read_violations,
        read_violation_count: reads.issues.len(),
        cycles,
        cycle_count: analysis.cycle_count,
        witness_labels: witness
            .as_ref()
            .map(|w: &Vec<TxnId>| w.iter().map(|&t| history.txn_label(t)).collect()),
        witness,
    }
}

/// [`TxnRef`]s made once per transaction (making one scans the transaction's operations).
struct TxnRefs<'h> {
    history: &'h History,
    made: FxHashMap<TxnId, TxnRef>,
}

impl<'h> TxnRefs<'h> {
    fn new(history: &'h History) -> Self {
        TxnRefs {
            history,
            made: FxHashMap::default(),
        }
    }

    fn get(&mut self, t: TxnId) -> TxnRef {
        let history = self.history;
        self.made
            .entry(t)
            .or_insert_with(|| TxnRef::new(history, t))
            .clone()
    }
}

fn read_violation(history: &History, txn_refs: &mut TxnRefs, issue: &ReadIssue) -> ReadViolation {
    let read = OpRef::new(history, issue.read);
    let txn = txn_refs.get(read.txn);
    let write_op = history.read_from(issue.read);
    let write = write_op.map(|w| OpRef::new(history, w));
    let writer = write.as_ref().map(|w| txn_refs.get(w.txn));
    let related = match (issue.anomaly, write_op) {
        (Anomaly::IntermediateRead, Some(w)) => history
            .last_write(history.op(w).txn, history.op(w).key)
            .map(|f| OpRef::new(history, f)),
        _ => OpRef::maybe(history, issue.related),
    };
    let rel = related.as_ref().map_or_else(String::new, |r| r.to_string());
    let w = write.as_ref().map_or_else(String::new, |w| w.to_string());
    let wt = writer.as_ref().map_or_else(String::new, |w| w.to_string());
    let explanation = match issue.anomaly {
        Anomaly::ThinAirRead => match history.unresolved_reason(issue.read) {
            Some(Unresolved::Ambiguous) => format!(
                "{txn} reads {read}, a value several transactions write, so its writer is unknown"
            ),
            _ => format!("{txn} reads {read}, a value no transaction writes"),
        },
        Anomaly::AbortedRead => format!("{txn} reads {read}, written by {w} of aborted {wt}"),
        Anomaly::FutureRead => {
            format!("{txn} reads {read}, written by its own later {w}")
        }
        Anomaly::NotMyOwnWrite => format!(
            "{txn} reads {read} from {wt} ({w}) although it wrote the key itself before: {rel}"
        ),
        Anomaly::NotMyLastWrite => format!(
            "{txn} reads {read} from its own {w}, which its {rel} had overwritten"
        ),
        Anomaly::IntermediateRead => format!(
            "{txn} reads {read} from {wt}: {w} is not that transaction's final write of the key ({rel})"
        ),
        Anomaly::NonRepeatableRead => format!(
            "{txn} reads {read} from {wt}, after reading the key from another transaction: {rel}"
        ),
        other => format!("{txn}: {other} at {read}"),
    };
    ReadViolation {
        anomaly: issue.anomaly,
        tap: issue.anomaly.tap(),
        txn,
        read,
        write,
        writer,
        related,
        explanation,
    }
}

fn cycle_report(
    history: &History,
    txn_refs: &mut TxnRefs,
    level: Level,
    cycle: &FoundCycle,
) -> CycleReport {
    let axiom = match level {
        Level::ReadCommitted => "read-committed",
        Level::ReadAtomic => "read-atomic",
        _ => "causal",
    };
    let mut involved: Vec<TxnId> = Vec::new();
    let mut seen: FxHashSet<TxnId> = FxHashSet::default();
    for (e, _) in &cycle.edges {
        if seen.insert(e.from) {
            involved.push(e.from);
        }
    }
    for (_, inst) in &cycle.edges {
        if let Some(inst) = inst {
            if seen.insert(inst.t3) {
                involved.push(inst.t3);
            }
        }
    }
    let edges = cycle
        .edges
        .iter()
        .map(|(e, inst)| CycleEdge {
            from: e.from,
            to: e.to,
            reason: match inst {
                Some(inst) => axiom_reason(history, txn_refs, axiom, inst),
                None if e.cause == SESSION_ORDER => EdgeReason::SessionOrder,
                None if is_known_ww(e.cause) => {
                    let (a, b) = history.known_write_order()[(e.cause & !KNOWN_WW) as usize];
                    let (earlier, later) = (OpRef::new(history, a), OpRef::new(history, b));
                    EdgeReason::WriteWrite {
                        key: earlier.key.clone(),
                        earlier,
                        later,
                    }
                }
                None => {
                    let read = OpRef::new(history, e.cause);
                    let write = OpRef::new(
                        history,
                        history
                            .read_from(e.cause)
                            .expect("a write-read edge's read has a writer"),
                    );
                    EdgeReason::WriteRead {
                        key: read.key.clone(),
                        read,
                        write,
                    }
                }
            },
        })
        .collect();
    CycleReport {
        anomaly: cycle.anomaly,
        tap: cycle.anomaly.tap(),
        component_size: cycle.component_size,
        transactions: involved.iter().map(|&t| txn_refs.get(t)).collect(),
        edges,
        edges_cut: 0,
    }
}

fn axiom_reason(
    history: &History,
    txn_refs: &mut TxnRefs,
    axiom: &str,
    inst: &Instance,
) -> EdgeReason {
    let read_x = OpRef::new(history, inst.read_x);
    let write_x = OpRef::new(
        history,
        history
            .read_from(inst.read_x)
            .expect("an axiom instance's read has a writer"),
    );
    EdgeReason::Axiom(Box::new(AxiomInstance {
        axiom: axiom.to_string(),
        anomaly: inst.anomaly,
        tap: inst.anomaly.tap(),
        t1: inst.t1,
        t2: inst.t2,
        t3: txn_refs.get(inst.t3),
        key: crate::printable::printable(history.key_name(inst.key)).into_owned(),
        relation: inst.relation,
        read_x,
        write_x,
        t2_write_x: history
            .last_write(inst.t2, inst.key)
            .map(|w| OpRef::new(history, w)),
        read_y: OpRef::maybe(history, inst.read_y),
    }))
}
