//! The result of a timestamp check ([`super::chronos`], [`super::aion`]): every violation
//! named with the transactions (input id, session, timestamps, input line), the key and the
//! values involved, in text and (stable) JSON — the counterpart of `check::report` for the
//! timestamp-based checkers. The schema is in docs/checking.md.

use std::fmt;

use crate::history::anomalies::AnomalyNames;
use crate::history::timestamped::{Hlc, TimestampedHistory};
use crate::history::{AnomalyId, ANOMALIES};

/// A transaction as timestamp reports name it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TsTxnRef {
    /// Its 0-based position in the input.
    pub index: u32,
    /// Its name in reports: `T<s>.<k>`, the `k`-th transaction of the `s`-th session (both
    /// from 1, in input order), as every other report names it
    /// ([`crate::history::History::txn_label`]).
    pub label: String,
    /// Its id in the input (`tid`).
    pub tid: String,
    /// Its session's name in the input (`sid`).
    pub session: String,
    /// Start timestamp.
    pub start: Hlc,
    /// Commit timestamp.
    pub commit: Hlc,
    /// 1-based input line where it begins (0 when unknown).
    pub line: u32,
}

impl TsTxnRef {
    /// Describes transaction `t` of `h`; `position` is its 0-based position in its session
    /// ([`TimestampedHistory::session_positions`]).
    pub fn new(h: &TimestampedHistory, t: usize, position: u32) -> TsTxnRef {
        let txn = &h.txns[t];
        TsTxnRef {
            index: t as u32,
            label: format!("T{}.{}", txn.session + 1, position + 1),
            tid: txn.tid.to_string(),
            session: h.session_names[txn.session as usize].clone(),
            start: txn.start,
            commit: txn.commit,
            line: txn.line,
        }
    }
}

impl fmt::Display for TsTxnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (tid {}, sid {}, start {}, commit {}",
            self.label, self.tid, self.session, self.start, self.commit
        )?;
        if self.line != 0 {
            write!(f, ", line {}", self.line)?;
        }
        f.write_str(")")
    }
}

/// Where the value an external read returned came from (TimeKiller's EXT types, pitfall P14).
/// Attribution looks the value up among all writes of the key, so it needs unique values.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum ExtKind {
    /// A stale value: written by a transaction (or the initial state) that committed before
    /// the reader's snapshot and was overwritten by a later committer the reader should see;
    /// for lists, a list missing committed appends.
    Before,
    /// A value of a transaction that was still running when the reader took its snapshot
    /// (it started before and committed after the reader's start; under SER: before and after
    /// the reader's commit).
    Uncommitted,
    /// A value written by a transaction that started after the reader's snapshot (or after
    /// its commit, under SER), or later in the reader itself.
    After,
    /// No transaction writes that value to that key.
    Never,
}

impl fmt::Display for ExtKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExtKind::Before => "BEFORE",
            ExtKind::Uncommitted => "UNCOMMITTED",
            ExtKind::After => "AFTER",
            ExtKind::Never => "NEVER",
        })
    }
}

/// One violated axiom instance.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "axiom")]
pub enum TsViolation {
    /// The transaction's start timestamp is after its commit timestamp (Eq. (1)); it is left
    /// out of the rest of the check.
    #[serde(rename = "START-AFTER-COMMIT")]
    StartAfterCommit {
        /// The transaction.
        txn: TsTxnRef,
    },
    /// The previous transaction of the session is not visible to this one: it commits after
    /// this one starts (SI), or not before this one commits (SER).
    #[serde(rename = "SESSION")]
    Session {
        /// The later transaction in session order.
        txn: TsTxnRef,
        /// Its predecessor in the session.
        previous: TsTxnRef,
    },
    /// An internal read (not the transaction's first access of the key) returned something
    /// other than the transaction's own last read or write of the key.
    #[serde(rename = "INT")]
    Int {
        /// The transaction.
        txn: TsTxnRef,
        /// The key.
        key: String,
        /// 0-based position of the read in the transaction.
        op_index: u32,
        /// What it returned.
        read: String,
        /// What it should have returned.
        expected: String,
    },
    /// An external read (the transaction's first access of the key) returned something other
    /// than the value of the last transaction committed before the reader's snapshot (SI: its
    /// start; SER: its commit).
    #[serde(rename = "EXT")]
    Ext {
        /// The reader.
        txn: TsTxnRef,
        /// The key.
        key: String,
        /// 0-based position of the read in the transaction.
        op_index: u32,
        /// What it returned.
        read: String,
        /// What it should have returned.
        expected: String,
        /// The transaction whose value it should have returned (`None`: the initial value).
        expected_writer: Option<TsTxnRef>,
        /// Where the returned value came from.
        kind: ExtKind,
        /// The transaction that wrote the returned value, when one did (`None` for the
        /// initial value and for NEVER).
        value_writer: Option<TsTxnRef>,
    },
    /// Two transactions wrote the same key while both were running (their [start, commit]
    /// intervals overlap): first-committer-wins was not enforced. Reported once per key, at
    /// the earlier commit.
    #[serde(rename = "NOCONFLICT")]
    NoConflict {
        /// The transaction that committed first.
        first: TsTxnRef,
        /// The other writer, still running when `first` committed.
        second: TsTxnRef,
        /// The key both wrote.
        key: String,
    },
    /// Two writers of a key have the same commit timestamp, so the timestamps do not say
    /// which write is later (pitfall P2); the check used input order.
    #[serde(rename = "EQUAL-COMMIT")]
    EqualCommit {
        /// The writer first in input order.
        first: TsTxnRef,
        /// The other writer.
        second: TsTxnRef,
        /// The key both wrote.
        key: String,
    },
}

impl fmt::Display for TsViolation {
    /// One line; names from the input (keys, transactions, sessions) are escaped
    /// ([`crate::printable`]), so the line cannot be split or act on a terminal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::printable::printable(&self.raw_line()))
    }
}

impl TsViolation {
    /// The line of [`fmt::Display`] before names are escaped.
    fn raw_line(&self) -> String {
        let mut line = String::new();
        let _ = self.write_raw(&mut line);
        line
    }

    fn write_raw(&self, f: &mut String) -> fmt::Result {
        use fmt::Write as _;
        match self {
            TsViolation::StartAfterCommit { txn } => {
                write!(f, "START-AFTER-COMMIT: {txn} starts after it commits")
            }
            TsViolation::Session { txn, previous } => write!(
                f,
                "SESSION: {previous} precedes {txn} in its session but is not visible to it"
            ),
            TsViolation::Int {
                txn,
                key,
                op_index,
                read,
                expected,
            } => write!(
                f,
                "INT: {txn} reads key {key} = {read} (operation {op_index}) but its own earlier \
                 access gives {expected}"
            ),
            TsViolation::Ext {
                txn,
                key,
                op_index,
                read,
                expected,
                expected_writer,
                kind,
                value_writer,
            } => {
                write!(
                    f,
                    "EXT {kind}: {txn} reads key {key} = {read} (operation {op_index}); its snapshot \
                     has {expected} from "
                )?;
                match expected_writer {
                    Some(w) => write!(f, "{w}")?,
                    None => f.write_str("the initial state")?,
                }
                match (kind, value_writer) {
                    (ExtKind::Never, _) => write!(f, "; nothing writes {read} to key {key}"),
                    (_, Some(w)) => write!(f, "; {read} was written by {w}"),
                    (_, None) => f.write_str("; that value is the initial state"),
                }
            }
            TsViolation::NoConflict { first, second, key } => write!(
                f,
                "NOCONFLICT: {first} and {second} both write key {key} and overlap in time"
            ),
            TsViolation::EqualCommit { first, second, key } => write!(
                f,
                "EQUAL-COMMIT: {first} and {second} both write key {key} with the same commit \
                 timestamp"
            ),
        }
    }
}

impl TsViolation {
    /// The violation's row in the anomaly table.
    pub fn anomaly(&self) -> AnomalyId {
        match self {
            TsViolation::StartAfterCommit { .. } => AnomalyId::StartAfterCommit,
            TsViolation::Session { .. } => AnomalyId::SessionNotVisible,
            TsViolation::Int { .. } => AnomalyId::InternalInconsistency,
            TsViolation::Ext { .. } => AnomalyId::SnapshotReadViolation,
            TsViolation::NoConflict { .. } => AnomalyId::ConcurrentWriteConflict,
            TsViolation::EqualCommit { .. } => AnomalyId::EqualCommitTimestamps,
        }
    }

    /// The axiom's name as reports print it (`SESSION`, `INT`, `EXT`, …), from the anomaly
    /// table.
    pub fn axiom(&self) -> &'static str {
        self.anomaly()
            .row()
            .chronos
            .expect("every timestamp violation's row names its axiom (tested)")
    }

    /// The line as `watch` prints it: the anomaly's name as every view prints it (the row's
    /// label, as `check`'s verdict line names the same violation), then the checker's line
    /// ([`fmt::Display`]): `read outside the snapshot (Chronos EXT): EXT AFTER: T2.1 …`.
    pub fn named_line(&self) -> String {
        format!("{}: {self}", self.anomaly().label())
    }
}

/// A verdict taken back: an EXT NEVER ("nothing writes that value") reported once its reader
/// was final, whose writer then arrived (more than the timeout late, in the online checker).
/// When the read is still wrong, its new verdict (BEFORE, UNCOMMITTED or AFTER) is reported
/// beside the retraction; the counts hold only verdicts not taken back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TsRetraction {
    /// The verdict taken back.
    pub retracted: TsViolation,
    /// The late transaction that writes the value read.
    pub writer: TsTxnRef,
    /// Whether the read is now explained (no verdict left for it); when false, a new verdict
    /// for the same read is reported with the retraction.
    pub explained: bool,
}

impl fmt::Display for TsRetraction {
    /// One line, names escaped as in [`TsViolation`]'s lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (txn, key, read) = match &self.retracted {
            TsViolation::Ext { txn, key, read, .. } => (txn, key.as_str(), read.as_str()),
            other => return write!(f, "RETRACTED: {other}"),
        };
        let raw = format!(
            "RETRACTED: {}: {} {}: {txn} reads key {key} = {read}: {}, which arrived after that \
             verdict was final, writes it; {}",
            self.retracted.anomaly().label(),
            self.retracted.axiom(),
            match &self.retracted {
                TsViolation::Ext { kind, .. } => kind.to_string(),
                _ => String::new(),
            },
            self.writer,
            if self.explained {
                "the read is explained, no violation left"
            } else {
                "the read's new verdict follows"
            }
        );
        f.write_str(&crate::printable::printable(&raw))
    }
}

/// Exact counts of violations by axiom (and EXT by kind), however many are described.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TsCounts {
    /// Transactions starting after they commit.
    pub start_after_commit: u64,
    /// SESSION violations.
    pub session: u64,
    /// INT violations.
    pub int: u64,
    /// EXT violations, all kinds.
    pub ext: u64,
    /// EXT BEFORE.
    pub ext_before: u64,
    /// EXT UNCOMMITTED.
    pub ext_uncommitted: u64,
    /// EXT AFTER.
    pub ext_after: u64,
    /// EXT NEVER.
    pub ext_never: u64,
    /// NOCONFLICT violations (pairs of transactions per key).
    pub no_conflict: u64,
    /// Pairs of writers of a key with equal commit timestamps.
    pub equal_commit: u64,
}

impl TsCounts {
    /// All violations.
    pub fn total(&self) -> u64 {
        self.start_after_commit
            + self.session
            + self.int
            + self.ext
            + self.no_conflict
            + self.equal_commit
    }

    /// Counts one EXT of `kind`.
    pub fn add_ext(&mut self, kind: ExtKind) {
        self.ext += 1;
        match kind {
            ExtKind::Before => self.ext_before += 1,
            ExtKind::Uncommitted => self.ext_uncommitted += 1,
            ExtKind::After => self.ext_after += 1,
            ExtKind::Never => self.ext_never += 1,
        }
    }

    /// Takes back one violation counted by [`TsCounts::add`].
    pub fn remove(&mut self, v: &TsViolation) {
        let field = match v {
            TsViolation::StartAfterCommit { .. } => &mut self.start_after_commit,
            TsViolation::Session { .. } => &mut self.session,
            TsViolation::Int { .. } => &mut self.int,
            TsViolation::Ext { kind, .. } => {
                self.ext = self.ext.saturating_sub(1);
                match kind {
                    ExtKind::Before => &mut self.ext_before,
                    ExtKind::Uncommitted => &mut self.ext_uncommitted,
                    ExtKind::After => &mut self.ext_after,
                    ExtKind::Never => &mut self.ext_never,
                }
            }
            TsViolation::NoConflict { .. } => &mut self.no_conflict,
            TsViolation::EqualCommit { .. } => &mut self.equal_commit,
        };
        *field = field.saturating_sub(1);
    }

    /// Counts one violation (EXT by its kind).
    pub fn add(&mut self, v: &TsViolation) {
        match v {
            TsViolation::StartAfterCommit { .. } => self.start_after_commit += 1,
            TsViolation::Session { .. } => self.session += 1,
            TsViolation::Int { .. } => self.int += 1,
            TsViolation::Ext { kind, .. } => self.add_ext(*kind),
            TsViolation::NoConflict { .. } => self.no_conflict += 1,
            TsViolation::EqualCommit { .. } => self.equal_commit += 1,
        }
    }
}

/// The rows of the anomaly table the counts' axioms name, in the order [`TsCounts`] prints
/// them: each axiom's row is the one whose Chronos column names it (the row
/// [`TsViolation::anomaly`] gives its violations).
const AXIOMS: [&str; 6] = [
    "START-AFTER-COMMIT",
    "SESSION",
    "INT",
    "EXT",
    "NOCONFLICT",
    "EQUAL-COMMIT",
];

/// How many violations of one anomaly a watch found, named as every view names it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AnomalyCount {
    /// The engineer's name (`read outside the snapshot`).
    pub anomaly: String,
    /// Its names in the other vocabularies, from the same row.
    pub anomaly_names: AnomalyNames,
    /// Violations counted.
    pub count: u64,
}

impl TsCounts {
    /// The count of each axiom's violations by its row in the anomaly table, in the order of
    /// the axioms, leaving out those with none.
    pub fn by_anomaly(&self) -> Vec<(AnomalyId, u64)> {
        let counts = [
            self.start_after_commit,
            self.session,
            self.int,
            self.ext,
            self.no_conflict,
            self.equal_commit,
        ];
        AXIOMS
            .iter()
            .zip(counts)
            .filter(|&(_, n)| n > 0)
            .filter_map(|(axiom, n)| {
                let row = ANOMALIES.iter().find(|r| r.chronos == Some(axiom))?;
                Some((row.id, n))
            })
            .collect()
    }

    /// [`TsCounts::by_anomaly`] as the JSON views carry it.
    pub fn anomaly_counts(&self) -> Vec<AnomalyCount> {
        self.by_anomaly()
            .into_iter()
            .map(|(id, count)| AnomalyCount {
                anomaly: id.name().to_string(),
                anomaly_names: id.row().names(),
                count,
            })
            .collect()
    }

    /// The counts with each anomaly named as every view names it (the row's label), EXT's
    /// kinds beside it: `1 concurrent write conflict (Chronos NOCONFLICT), 2 read outside
    /// the snapshot (Chronos EXT) [1 EXT BEFORE, 1 EXT AFTER]`; `none` without violations.
    pub fn named(&self) -> String {
        let parts: Vec<String> = self
            .by_anomaly()
            .into_iter()
            .map(|(id, n)| {
                let mut part = format!("{n} {}", id.label());
                if id == AnomalyId::SnapshotReadViolation {
                    let kinds = TsCounts {
                        ext_before: self.ext_before,
                        ext_uncommitted: self.ext_uncommitted,
                        ext_after: self.ext_after,
                        ext_never: self.ext_never,
                        ..TsCounts::default()
                    };
                    part.push_str(&format!(" [{kinds}]"));
                }
                part
            })
            .collect();
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    }
}

impl fmt::Display for TsCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut add = |n: u64, name: &str| {
            if n > 0 {
                parts.push(format!("{n} {name}"));
            }
        };
        add(self.start_after_commit, "START-AFTER-COMMIT");
        add(self.session, "SESSION");
        add(self.int, "INT");
        add(self.ext_before, "EXT BEFORE");
        add(self.ext_uncommitted, "EXT UNCOMMITTED");
        add(self.ext_after, "EXT AFTER");
        add(self.ext_never, "EXT NEVER");
        add(self.no_conflict, "NOCONFLICT");
        add(self.equal_commit, "EQUAL-COMMIT");
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// The result of checking a timestamped history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TimestampReport {
    /// The input's name.
    pub source: String,
    /// The level checked: `si` or `ser`.
    pub level: String,
    /// Always `timestamps`: the verdict uses the database's timestamps (Chronos), which is
    /// stricter than asking whether *some* commit order exists (docs/checking.md).
    pub checker: String,
    /// No violation at all.
    pub consistent: bool,
    /// For `ser`: whether the history is strictly serializable, shown by the commit-timestamp
    /// order (a serial order that respects the real-time order of the [start, commit]
    /// intervals). `None` for `si`.
    pub strict_serializable: Option<bool>,
    /// Transactions checked.
    pub transactions: u64,
    /// Operations checked.
    pub operations: u64,
    /// Exact counts.
    pub counts: TsCounts,
    /// The violations described (at most the requested number, in checking order).
    pub violations: Vec<TsViolation>,
    /// Whether more violations were found than are described.
    pub truncated: bool,
}

impl fmt::Display for TimestampReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if self.level == "ser" {
            "serializability (SER)"
        } else {
            "snapshot isolation (SI)"
        };
        writeln!(
            f,
            "{}: {name}, checked with the transactions' timestamps (timestamp checker)",
            self.source
        )?;
        writeln!(
            f,
            "{} transactions, {} operations",
            self.transactions, self.operations
        )?;
        if self.consistent {
            writeln!(f, "result: consistent (no violation)")?;
            if self.strict_serializable == Some(true) {
                writeln!(
                    f,
                    "the commit-timestamp order is a serial order that respects real time: \
                     strictly serializable"
                )?;
            }
            return Ok(());
        }
        writeln!(
            f,
            "result: VIOLATED: {} violations ({})",
            self.counts.total(),
            self.counts
        )?;
        for v in &self.violations {
            writeln!(f, "  {v}")?;
        }
        if self.truncated {
            writeln!(
                f,
                "  … {} more not described (raise --max-violations)",
                self.counts.total() - self.violations.len() as u64
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(label: &str) -> TsTxnRef {
        TsTxnRef {
            index: 0,
            label: label.to_string(),
            tid: "1".to_string(),
            session: "s".to_string(),
            start: Hlc::default(),
            commit: Hlc::default(),
            line: 0,
        }
    }

    /// `watch` names each violation and its summary's counts by the anomaly table's row, as
    /// `check`'s verdict line does (issue 34: one name per anomaly), keeping the axiom's line.
    #[test]
    fn violations_and_counts_are_named_by_their_row() {
        let v = TsViolation::NoConflict {
            first: txn("T1.1"),
            second: txn("T2.1"),
            key: "x".to_string(),
        };
        let label = AnomalyId::ConcurrentWriteConflict.label();
        assert_eq!(label, "concurrent write conflict (Chronos NOCONFLICT)");
        assert_eq!(v.named_line(), format!("{label}: {v}"));
        assert!(v.to_string().starts_with("NOCONFLICT: T1.1"), "{v}");

        let mut counts = TsCounts::default();
        assert_eq!(counts.named(), "none");
        counts.add(&v);
        counts.add_ext(ExtKind::Before);
        counts.add_ext(ExtKind::After);
        counts.add_ext(ExtKind::After);
        assert_eq!(
            counts.by_anomaly(),
            [
                (AnomalyId::SnapshotReadViolation, 3),
                (AnomalyId::ConcurrentWriteConflict, 1)
            ]
        );
        assert_eq!(
            counts.named(),
            "3 read outside the snapshot (Chronos EXT) [1 EXT BEFORE, 2 EXT AFTER], \
             1 concurrent write conflict (Chronos NOCONFLICT)"
        );
        // The old words stay beside the names (check's report still prints them).
        assert_eq!(
            counts.to_string(),
            "1 EXT BEFORE, 2 EXT AFTER, 1 NOCONFLICT"
        );
        let json = counts.anomaly_counts();
        assert_eq!(json[0].anomaly, "read outside the snapshot");
        assert_eq!(json[0].anomaly_names.chronos.as_deref(), Some("EXT"));
        assert_eq!(json[1].count, 1);
    }

    /// Every axiom the counts print names a row whose Chronos column is that axiom.
    #[test]
    fn every_counted_axiom_has_its_row() {
        for axiom in AXIOMS {
            assert!(
                ANOMALIES.iter().any(|r| r.chronos == Some(axiom)),
                "{axiom}"
            );
        }
    }
}
