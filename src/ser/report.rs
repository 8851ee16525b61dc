//! The result of a PC / SI / SER check — [`StrongReport`], the stable `--json` output (schema
//! in docs/checking.md) — and its text and DOT renderings. Transactions and operations are
//! named as in the weak levels' reports ([`TxnRef`], [`OpRef`]).

use std::fmt::{self, Write as _};

use crate::check::{CheckReport, Level, OpRef, TxnRef};
use crate::dot::DotWriter;
use crate::history::TxnId;

use super::Engine;

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The history satisfies the level.
    Consistent,
    /// It does not.
    Violated,
    /// The engines gave up (time or state limit).
    Unknown,
}

/// Sizes of what was checked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StrongSummary {
    /// Sessions.
    pub sessions: usize,
    /// Transactions (committed and aborted), the initial one excluded.
    pub transactions: usize,
    /// Operations, the initial transaction's writes excluded.
    pub operations: usize,
    /// Components of the communication graph (each checked on its own).
    pub components: usize,
    /// Committed transactions of the largest component.
    pub largest_component: usize,
    /// Commit-order edges forced by saturation (so ∪ wr included), over all components.
    pub forced_edges: usize,
    /// Steps of the prefix search.
    pub search_steps: u64,
    /// Failed prefixes memoised by the search.
    pub failed_states: usize,
    /// Components handed to Z3.
    pub smt_calls: u32,
}

/// What an edge of an explanation cycle is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StrongEdgeKind {
    /// Session order (or the initial transaction first).
    SessionOrder,
    /// `to` reads from `from`.
    WriteRead,
    /// Write–write: `from` and `to` write `key`, and `from` is visible to a reader of `to`'s
    /// write, so `from`'s write must come first (Adya's ww dependency).
    WriteWrite,
    /// Read–write (anti-dependency): `from` read `key` from a writer that `to` comes after, so
    /// `to` overwrote what `from` read and must come after it.
    ReadWrite,
    /// Real time: `from` completed before `to` was invoked (strict serializability).
    RealTime,
}

/// One edge of an explanation: `from` must commit before `to` in every serial order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StrongEdge {
    /// Source transaction.
    pub from: TxnId,
    /// Target transaction.
    pub to: TxnId,
    /// The source's name in reports (`T2.1`, [`crate::history::History::txn_label`]).
    pub from_label: String,
    /// The target's name in reports.
    pub to_label: String,
    /// Why.
    pub kind: StrongEdgeKind,
    /// The key, for write–read, write–write and read–write edges.
    pub key: Option<String>,
    /// The read involved: `to`'s read (write–read); the reader t3's read of `key` from `to`
    /// (write–write); `from`'s read of `key` (read–write).
    pub read: Option<OpRef>,
    /// The write involved: `from`'s write (write–read, write–write); `to`'s write (read–write).
    pub write: Option<OpRef>,
    /// For write–write and read–write edges, the transactions the premise relates: the reader
    /// t3 (write–write) or the writer t1 that `from` read from (read–write).
    pub via: Option<TxnId>,
    /// The edge in words.
    pub explanation: String,
    /// For write–write (read–write) edges: a path of edges showing that `from` reaches the
    /// reader (that the writer read from reaches `to`); each derived edge carries its own.
    pub premise: Vec<StrongEdge>,
}

/// A core transaction and the operations of it that matter.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CoreTxn {
    /// The transaction.
    pub txn: TxnRef,
    /// Its reads of other core transactions (or initial values) and its writes of keys other
    /// core transactions access, in program order.
    pub ops: Vec<OpRef>,
}

/// Which levels the core satisfies (`None`: not decided in time).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CoreLevels {
    /// Serializability.
    pub ser: Option<bool>,
    /// Snapshot isolation.
    pub si: Option<bool>,
    /// Prefix consistency.
    pub pc: Option<bool>,
}

/// The explanation of a violation: a small sub-history that already has no commit order for
/// the level (dropping transactions only removes constraints, so the whole history has none
/// either), named, with a cycle of edges every serial order of it would need when one exists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Violation {
    /// The name people search for, the engineer's name of a row of the anomaly table
    /// ([`crate::history::anomalies`]): `lost update`, `write skew`, `read skew`, `long fork`,
    /// `read-only transaction anomaly`, or (when none of these patterns fits)
    /// `multi-transaction write skew`, `concurrent write conflict` or `prefix violation`
    /// (definitions in docs/checking.md).
    pub anomaly: String,
    /// Adya's phenomenon the core shows under every version order (`G-single` for a lost
    /// update or read skew, `G2` for a write skew or long fork; `G0`/`G1c` would need a causal
    /// violation, reported by the causal checker instead); `None` when the core has too many
    /// version orders to enumerate.
    pub adya: Option<String>,
    /// The anomaly in words.
    pub description: String,
    /// The core: transactions whose sub-history (with the initial transaction) violates the
    /// level.
    pub core: Vec<CoreTxn>,
    /// Whether the core is minimal: removing any one of its transactions makes it satisfy the
    /// level.
    pub core_minimal: bool,
    /// The levels the core satisfies.
    pub core_levels: CoreLevels,
    /// A cycle of edges every serial order of the core would need (empty when the core's
    /// forced edges have no cycle and only the exhaustive search rules every order out).
    pub cycle: Vec<StrongEdge>,
    /// The core is the transactions of a cycle of the dependency graph under the known
    /// version orders (`ser::dependency_graph`), not a shrunk sub-history: the cycle is the
    /// proof (the orders it uses may come from reads of other transactions).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub core_is_cycle: bool,
    /// Positions in `cycle` of the edges that hold only under the order the check chose for
    /// appends no read showed (a `ww` edge between two of them: Jepsen list appends after the
    /// last element a read showed, whose order is not known); the other edges hold under
    /// every order of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chosen_order_edges: Vec<usize>,
}

/// The result of checking a history against PC, SI or SER: the stable `--json` output.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StrongReport {
    /// The level checked.
    pub level: Level,
    /// The verdict.
    pub verdict: Verdict,
    /// Whether the history satisfies the level (`verdict == consistent`).
    pub consistent: bool,
    /// The input's name.
    pub source: String,
    /// The engine asked for.
    pub engine: Engine,
    /// Sizes and work.
    pub summary: StrongSummary,
    /// When the history violates causal consistency (which every strong level implies): the
    /// causal report, naming those violations.
    pub causal: Option<CheckReport>,
    /// The explanation of a violation (when causal consistency holds).
    pub violation: Option<Violation>,
    /// When consistent and asked for: a commit order (SER: a serial order; SI, PC: the order
    /// of the transactions' writes), committed transactions, the initial one first.
    pub witness: Option<Vec<TxnId>>,
    /// The witness's transactions by name (`T2.1`, [`crate::history::History::txn_label`]),
    /// as the text report prints them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness_labels: Option<Vec<String>>,
    /// Why the verdict is unknown.
    pub unknown_reason: Option<String>,
}

impl StrongReport {
    /// Whether the history satisfies the level.
    pub fn is_consistent(&self) -> bool {
        self.verdict == Verdict::Consistent
    }

    /// The report in words.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let verdict = match self.verdict {
            Verdict::Consistent => "consistent",
            Verdict::Violated => "VIOLATED",
            Verdict::Unknown => "UNKNOWN",
        };
        let s = &self.summary;
        let _ = writeln!(
            out,
            "{} ({}): {verdict} — {}: {} sessions, {} transactions, {} operations; {} component(s), largest {} transactions; engine {}",
            self.level.full_name(),
            self.level,
            self.source,
            s.sessions,
            s.transactions,
            s.operations,
            s.components,
            s.largest_component,
            self.engine,
        );
        if let Some(reason) = &self.unknown_reason {
            let _ = writeln!(out, "gave up: {reason}");
        }
        if let Some(cc) = &self.causal {
            let _ = writeln!(
                out,
                "the history already violates causal consistency, which {} implies:",
                self.level
            );
            for line in cc.render_text().lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        if let Some(v) = &self.violation {
            // The anomaly table's label, as every view prints the name; the explanation's
            // own Adya phenomenon for a name the table lacks.
            let named = crate::history::anomalies::by_name(&v.anomaly).map_or_else(
                || {
                    let adya = v
                        .adya
                        .as_ref()
                        .map_or_else(String::new, |a| format!(" (Adya {a})"));
                    format!("{}{adya}", v.anomaly)
                },
                |row| row.label(),
            );
            let _ = writeln!(out, "anomaly: {named} — {}", v.description);
            if v.core_is_cycle {
                let _ = writeln!(
                    out,
                    "the cycle, on the version orders the reads revealed (its {} transaction(s) \
                     with the operations its edges name):",
                    v.core.len()
                );
                for c in &v.core {
                    let ops: Vec<String> = c.ops.iter().map(|o| o.to_string()).collect();
                    let _ = writeln!(out, "  {}: {}", c.txn, ops.join("; "));
                }
                let what = if self.level == Level::Serializable
                    || self.level == Level::StrictSerializable
                {
                    "every serial order would need each of these edges"
                } else if v.chosen_order_edges.is_empty() {
                    "each edge is a dependency of every commit order of the level"
                } else {
                    "each edge not marked is a dependency of every commit order of the level; \
                     each edge marked [chosen order] comes from the order chosen for appends no \
                     read showed (their order is not known), and holds only under it"
                };
                let _ = writeln!(out, "{what}:");
                if v.chosen_order_edges.is_empty() {
                    write_edges(&mut out, &v.cycle, 2);
                } else {
                    for (i, e) in v.cycle.iter().enumerate() {
                        let mark = if v.chosen_order_edges.contains(&i) {
                            " [chosen order]"
                        } else {
                            ""
                        };
                        let _ = writeln!(
                            out,
                            "  {} -> {}{mark}: {}",
                            e.from_label, e.to_label, e.explanation
                        );
                        if !e.premise.is_empty() {
                            let _ = writeln!(out, "    because:");
                            write_edges(&mut out, &e.premise, 6);
                        }
                    }
                }
            }
        }
        if let Some(v) = self.violation.as_ref().filter(|v| !v.core_is_cycle) {
            let lv = |b: Option<bool>| match b {
                Some(true) => "yes",
                Some(false) => "no",
                None => "?",
            };
            let _ = writeln!(
                out,
                "{} transaction(s) already violate {}{} (with the initial transaction); on their own they satisfy ser: {}, si: {}, pc: {}",
                v.core.len(),
                self.level,
                if v.core_minimal { ", and removing any one of them fixes it" } else { "" },
                lv(v.core_levels.ser),
                lv(v.core_levels.si),
                lv(v.core_levels.pc),
            );
            for c in &v.core {
                let ops: Vec<String> = c.ops.iter().map(|o| o.to_string()).collect();
                let _ = writeln!(out, "  {}: {}", c.txn, ops.join("; "));
            }
            if !v.cycle.is_empty() {
                let _ = writeln!(out, "every serial order of them would need this cycle:");
                write_edges(&mut out, &v.cycle, 2);
            }
        }
        if let Some(w) = &self.witness {
            let what = if self.level == Level::Serializable {
                "serial order"
            } else {
                "commit order"
            };
            let _ = writeln!(out, "witness {what} ({} transactions):", w.len());
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

    /// The violation as a Graphviz digraph, or `None` when there is none.
    pub fn render_dot(&self) -> Option<String> {
        if let Some(cc) = &self.causal {
            return cc.render_dot();
        }
        let v = self.violation.as_ref()?;
        let mut dot = DotWriter::digraph("violations");
        dot.label(&format!(
            "{}: {} violated — {}",
            self.source,
            self.level.full_name(),
            v.anomaly
        ))
        .stmt("labelloc=t")
        .stmt("node [shape=box, fontname=\"monospace\"]");
        for c in &v.core {
            let ops: Vec<String> = c.ops.iter().map(|o| o.to_string()).collect();
            let label = format!("{}\n{}", c.txn.label, ops.join("\n"));
            dot.node(format_args!("t{}", c.txn.id), &label, "");
        }
        for e in &v.cycle {
            let (style, label) = edge_style(e);
            dot.edge(
                format_args!("t{}", e.from),
                format_args!("t{}", e.to),
                &label,
                style,
            );
        }
        Some(dot.finish())
    }
}

fn edge_style(e: &StrongEdge) -> (&'static str, String) {
    let key = e.key.clone().unwrap_or_default();
    match e.kind {
        StrongEdgeKind::SessionOrder => ("color=black", "so".to_string()),
        StrongEdgeKind::WriteRead => ("color=blue, fontcolor=blue", format!("wr({key})")),
        StrongEdgeKind::WriteWrite => {
            ("color=darkgreen, fontcolor=darkgreen", format!("ww({key})"))
        }
        StrongEdgeKind::ReadWrite => ("color=red, fontcolor=red, style=bold", format!("rw({key})")),
        StrongEdgeKind::RealTime => ("color=gray40, style=dashed", "rt".to_string()),
    }
}

fn write_edges(out: &mut String, edges: &[StrongEdge], indent: usize) {
    let pad = " ".repeat(indent);
    for e in edges {
        let _ = writeln!(
            out,
            "{pad}{} -> {}: {}",
            e.from_label, e.to_label, e.explanation
        );
        if !e.premise.is_empty() {
            let _ = writeln!(out, "{pad}  because:");
            write_edges(out, &e.premise, indent + 4);
        }
    }
}

impl fmt::Display for StrongReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_text())
    }
}
