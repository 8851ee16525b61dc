//! The one table of isolation anomalies: every name isopredict gives a violation comes from a
//! row here, so `check`, `predict`, `run` and their reports use the same words for the same
//! anomaly. Each row gives the engineer's name (Berenson et al. SIGMOD'95, Fekete et al. TODS
//! 2005, Cerone et al. CONCUR'15), Adya's phenomenon (Adya's PhD thesis, MIT 1999, §3–4) where
//! one applies, Plume's transactional anomalous pattern (Liu et al. OOPSLA'24, Table 1, TAP
//! a–n) where one applies, Elle's name (Kingsbury & Alvaro VLDB'20) where it differs from
//! Adya's, the axiom of the timestamp checkers (Chronos, EuroSys'24) it breaks where one
//! applies, the weakest level that forbids it, and one sentence for someone who never read the
//! papers.
//!
//! The table is data: [`ANOMALIES`] holds one [`AnomalyRow`] per [`AnomalyId`], in the order of
//! the enum; code that names an anomaly picks an id and reads its words from the row.
//! [`render_markdown`] prints the table for `docs/checking.md`.

use super::Level;

/// A named anomaly: the index of its row in [`ANOMALIES`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum AnomalyId {
    /// Plume TAP a.
    ThinAirRead,
    /// Plume TAP b, Adya G1a.
    AbortedRead,
    /// Plume TAP c.
    FutureRead,
    /// Plume TAP d.
    NotMyOwnWrite,
    /// Plume TAP e.
    NotMyLastWrite,
    /// Plume TAP f, Adya G1b.
    IntermediateRead,
    /// Plume TAP g, Adya G1c.
    CausalityCycle,
    /// Plume TAP h.
    NonMonotonicReadCausal,
    /// Plume TAP i.
    NonMonotonicRead,
    /// Plume TAP j.
    NonRepeatableRead,
    /// Plume TAP k.
    FracturedReadCausal,
    /// Plume TAP l.
    FracturedRead,
    /// Plume TAP m.
    CausalWriteConflict,
    /// Plume TAP n.
    WriteConflict,
    /// Elle's incompatible-order.
    IncompatibleOrder,
    /// Elle's duplicate-elements.
    DuplicateElements,
    /// Adya G0.
    WriteCycle,
    /// Adya G-single, in general.
    SingleAntiDependencyCycle,
    /// Adya G2, in general.
    AntiDependencyCycle,
    /// Cerone et al.'s long fork.
    LongFork,
    /// Berenson et al.'s read skew.
    ReadSkew,
    /// Not prefix consistent, no named pattern.
    PrefixViolation,
    /// Berenson et al.'s lost update.
    LostUpdate,
    /// Two overlapping writers of a key, no lost update.
    ConcurrentWriteConflict,
    /// Berenson et al.'s write skew (two transactions).
    WriteSkew,
    /// Fekete, O'Neil & O'Neil's read-only transaction anomaly.
    ReadOnlyTransactionAnomaly,
    /// A write skew through three or more transactions.
    MultiTransactionWriteSkew,
    /// Allowed by snapshot isolation, not serializable, not named in time.
    SerializationAnomaly,
    /// Allowed by a weak level, not serializable, no finer name.
    UnserializableInterleaving,
    /// Chronos's START-AFTER-COMMIT.
    StartAfterCommit,
    /// Chronos's SESSION.
    SessionNotVisible,
    /// Chronos's INT.
    InternalInconsistency,
    /// Chronos's EXT.
    SnapshotReadViolation,
    /// Chronos's EQUAL-COMMIT.
    EqualCommitTimestamps,
    /// Cerone & Gotsman's cycle with anti-dependencies, no two adjacent (Elle's G-nonadjacent).
    NonAdjacentAntiDependencyCycle,
    /// Elle's G0-realtime.
    WriteCycleRealTime,
    /// Elle's G1c-realtime.
    CausalityCycleRealTime,
    /// Elle's G-single-item-realtime.
    SingleAntiDependencyCycleRealTime,
    /// Elle's G2-item-realtime.
    AntiDependencyCycleRealTime,
}

/// One of Plume's transactional anomalous patterns: its letter and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlumeTap {
    /// `'a'`..=`'n'`.
    pub letter: char,
    /// Plume's name, e.g. `NonMonoReadCO`.
    pub name: &'static str,
}

/// One anomaly: its names in every vocabulary isopredict speaks, and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnomalyRow {
    /// The row's id.
    pub id: AnomalyId,
    /// The stable id as text (kebab-case; JSON uses it).
    pub key: &'static str,
    /// The engineer's name (`lost update`, `write skew`, …).
    pub name: &'static str,
    /// Adya's phenomenon (`G0`, `G1a`, `G1b`, `G1c`, `G-single`, `G2-item`, `G2`).
    pub adya: Option<&'static str>,
    /// Plume's pattern.
    pub plume: Option<PlumeTap>,
    /// Elle's name where it differs from Adya's (Elle otherwise uses Adya's).
    pub elle: Option<&'static str>,
    /// The axiom of the timestamp checkers (Chronos, Geng et al. EuroSys'24) it breaks, for
    /// violations shown by a database's own start and commit timestamps.
    pub chronos: Option<&'static str>,
    /// The weakest level that forbids it; every level that implies it forbids it too.
    pub weakest_level_forbidding: Level,
    /// What happens, in one sentence.
    pub description: &'static str,
}

impl AnomalyRow {
    /// Elle's name: its own where it has one, else Adya's.
    pub fn elle_name(&self) -> Option<&'static str> {
        self.elle.or(self.adya)
    }

    /// Every name of the row (engineer's, the id, Adya's, Plume's, Elle's, Chronos's).
    pub fn all_names(&self) -> impl Iterator<Item = &'static str> {
        [
            Some(self.name),
            Some(self.key),
            self.adya,
            self.plume.map(|p| p.name),
            self.elle,
            self.chronos,
        ]
        .into_iter()
        .flatten()
    }
}

impl AnomalyRow {
    /// The identifiers the other vocabularies give the row, as printed beside its name:
    /// `Adya G1c, Elle G1c, Plume TAP g CyclicCO` (Adya's phenomenon, Elle's name, Plume's
    /// pattern, the timestamp checkers' axiom, each where the row has one).
    pub fn identifiers(&self) -> String {
        let mut ids: Vec<String> = Vec::new();
        if let Some(a) = self.adya {
            ids.push(format!("Adya {a}"));
        }
        if let Some(e) = self.elle_name() {
            ids.push(format!("Elle {e}"));
        }
        if let Some(p) = self.plume {
            ids.push(format!("Plume TAP {} {}", p.letter, p.name));
        }
        if let Some(c) = self.chronos {
            ids.push(format!("Chronos {c}"));
        }
        ids.join(", ")
    }

    /// The name every view prints: the engineer's name with the other vocabularies'
    /// identifiers beside it, `causality cycle (Adya G1c, Elle G1c, Plume TAP g CyclicCO)`;
    /// the name alone when the row has none.
    pub fn label(&self) -> String {
        let ids = self.identifiers();
        if ids.is_empty() {
            self.name.to_string()
        } else {
            format!("{} ({ids})", self.name)
        }
    }

    /// [`Self::label`] in Markdown, the name in bold: `**lost update** (Adya G-single, Elle
    /// lost-update)` (how reports in Markdown print it: `run`'s and `reproduce`'s).
    pub fn markdown_label(&self) -> String {
        let ids = self.identifiers();
        if ids.is_empty() {
            format!("**{}**", self.name)
        } else {
            format!("**{}** ({ids})", self.name)
        }
    }

    /// The row's names as the JSON views carry them beside the engineer's name.
    pub fn names(&self) -> AnomalyNames {
        AnomalyNames {
            id: self.id,
            name: self.name.to_string(),
            adya: self.adya.map(str::to_string),
            elle: self.elle_name().map(str::to_string),
            plume: self.plume.map(|p| format!("{} {}", p.letter, p.name)),
            chronos: self.chronos.map(str::to_string),
        }
    }
}

/// One anomaly's names in every vocabulary, from its row: what `--json` outputs carry beside
/// the engineer's name (`check --json`'s `anomaly_names`, `predict --json`'s
/// `prediction.anomaly`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AnomalyNames {
    /// The row's stable id (`causality-cycle`).
    pub id: AnomalyId,
    /// The engineer's name (`causality cycle`).
    pub name: String,
    /// Adya's phenomenon (`G1c`).
    pub adya: Option<String>,
    /// Elle's name (its own, else Adya's).
    pub elle: Option<String>,
    /// Plume's pattern: its TAP letter and name (`g CyclicCO`).
    pub plume: Option<String>,
    /// The timestamp checkers' axiom (`EXT`).
    pub chronos: Option<String>,
}

impl AnomalyId {
    /// The name every view prints ([`AnomalyRow::label`]).
    pub fn label(self) -> String {
        self.row().label()
    }

    /// The row of this anomaly.
    pub fn row(self) -> &'static AnomalyRow {
        &ANOMALIES[self as usize]
    }

    /// The engineer's name.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The one-sentence description.
    pub fn description(self) -> &'static str {
        self.row().description
    }
}

impl std::fmt::Display for AnomalyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The row one of whose names (engineer's, the id, Adya's, Plume's, Elle's or Chronos's) is
/// `name`.
/// Adya's `G-single` and `G2` name the general rows, not the engineer's anomalies that show
/// them (a lost update is also G-single).
pub fn by_name(name: &str) -> Option<&'static AnomalyRow> {
    ANOMALIES
        .iter()
        .find(|r| r.name == name || r.key == name)
        .or_else(|| ANOMALIES.iter().find(|r| r.all_names().any(|n| n == name)))
}

/// [`AnomalyRow::markdown_label`] of the row whose engineer's name is `name` (reports that
/// keep the name as text); the name in bold alone when no row has it.
pub fn markdown_label_of(name: &str) -> String {
    match ANOMALIES.iter().find(|r| r.name == name) {
        Some(row) => row.markdown_label(),
        None => format!("**{name}**"),
    }
}

const fn tap(letter: char, name: &'static str) -> Option<PlumeTap> {
    Some(PlumeTap { letter, name })
}

/// Every anomaly, in the order of [`AnomalyId`].
pub const ANOMALIES: &[AnomalyRow] = &[
    AnomalyRow {
        id: AnomalyId::ThinAirRead,
        key: "thin-air-read",
        name: "thin-air read",
        adya: None,
        plume: tap('a', "ThinAirRead"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "a read of a value that no transaction wrote",
    },
    AnomalyRow {
        id: AnomalyId::AbortedRead,
        key: "aborted-read",
        name: "aborted read",
        adya: Some("G1a"),
        plume: tap('b', "AbortedRead"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "a read of a value written by an aborted transaction",
    },
    AnomalyRow {
        id: AnomalyId::FutureRead,
        key: "future-read",
        name: "future read",
        adya: None,
        plume: tap('c', "FutureRead"),
        elle: Some("future-read"),
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "a read of a write that comes later in its own transaction",
    },
    AnomalyRow {
        id: AnomalyId::NotMyOwnWrite,
        key: "not-my-own-write",
        name: "read past its own write",
        adya: None,
        plume: tap('d', "NotMyOwnWrite"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "a read from another transaction after the reader wrote the key itself",
    },
    AnomalyRow {
        id: AnomalyId::NotMyLastWrite,
        key: "not-my-last-write",
        name: "read of an overwritten own write",
        adya: None,
        plume: tap('e', "NotMyLastWrite"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "a read of an own write that was already overwritten",
    },
    AnomalyRow {
        id: AnomalyId::IntermediateRead,
        key: "intermediate-read",
        name: "intermediate read",
        adya: Some("G1b"),
        plume: tap('f', "IntermediateRead"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "a read of another transaction's write that it later overwrote",
    },
    AnomalyRow {
        id: AnomalyId::CausalityCycle,
        key: "causality-cycle",
        name: "causality cycle",
        adya: Some("G1c"),
        plume: tap('g', "CyclicCO"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "a cycle of session order and write-read edges (and write-write edges the input revealed)",
    },
    AnomalyRow {
        id: AnomalyId::NonMonotonicReadCausal,
        key: "non-monotonic-read-causal",
        name: "non-monotonic read (causal)",
        adya: None,
        plume: tap('h', "NonMonoReadCO"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "non-monotonic reads in a transaction; the writers are causally ordered",
    },
    AnomalyRow {
        id: AnomalyId::NonMonotonicRead,
        key: "non-monotonic-read",
        name: "non-monotonic read",
        adya: None,
        plume: tap('i', "NonMonoReadCM"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "non-monotonic reads in a transaction; the writers are ordered by commit order",
    },
    AnomalyRow {
        id: AnomalyId::NonRepeatableRead,
        key: "non-repeatable-read",
        name: "non-repeatable read",
        adya: None,
        plume: tap('j', "NonRepeatableRead"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::CutIsolation,
        description: "a transaction reads one key from two different transactions",
    },
    AnomalyRow {
        id: AnomalyId::FracturedReadCausal,
        key: "fractured-read-causal",
        name: "fractured read (causal)",
        adya: None,
        plume: tap('k', "FracturedReadCO"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadAtomic,
        description: "a fractured read; the writers are causally ordered",
    },
    AnomalyRow {
        id: AnomalyId::FracturedRead,
        key: "fractured-read",
        name: "fractured read",
        adya: None,
        plume: tap('l', "FracturedReadCM"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadAtomic,
        description: "a fractured read; the writers are ordered by commit order",
    },
    AnomalyRow {
        id: AnomalyId::CausalWriteConflict,
        key: "causal-write-conflict",
        name: "causally overwritten read",
        adya: None,
        plume: tap('m', "COConflictCM"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::Causal,
        description: "a read from a writer overwritten by a causally later writer that happens before the reader",
    },
    AnomalyRow {
        id: AnomalyId::WriteConflict,
        key: "write-conflict",
        name: "overwritten read",
        adya: None,
        plume: tap('n', "ConflictCM"),
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::Causal,
        description: "a read from a writer overwritten by a commit-order later writer that happens before the reader",
    },
    AnomalyRow {
        id: AnomalyId::IncompatibleOrder,
        key: "incompatible-order",
        name: "incompatible order",
        adya: None,
        plume: None,
        elle: Some("incompatible-order"),
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "two reads of one list are not prefixes of one another, so no single order of its appends explains both",
    },
    AnomalyRow {
        id: AnomalyId::DuplicateElements,
        key: "duplicate-elements",
        name: "duplicate elements",
        adya: None,
        plume: None,
        elle: Some("duplicate-elements"),
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "a read of a list holds one appended element twice",
    },
    AnomalyRow {
        id: AnomalyId::WriteCycle,
        key: "write-cycle",
        name: "write cycle",
        adya: Some("G0"),
        plume: None,
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::ReadCommitted,
        description: "under every order of each key's writes, some transactions overwrite one another in a circle",
    },
    AnomalyRow {
        id: AnomalyId::SingleAntiDependencyCycle,
        key: "single-anti-dependency-cycle",
        name: "single anti-dependency cycle",
        adya: Some("G-single"),
        plume: None,
        elle: Some("G-single-item"),
        chronos: None,
        weakest_level_forbidding: Level::Snapshot,
        description: "under every order of each key's writes, a cycle of dependencies closes through exactly one transaction that misses another's write",
    },
    AnomalyRow {
        id: AnomalyId::AntiDependencyCycle,
        key: "anti-dependency-cycle",
        name: "anti-dependency cycle",
        adya: Some("G2"),
        plume: None,
        elle: Some("G2-item"),
        chronos: None,
        weakest_level_forbidding: Level::Serializable,
        description: "under every order of each key's writes, a cycle of dependencies closes only through two or more transactions that miss another's write",
    },
    AnomalyRow {
        id: AnomalyId::LongFork,
        key: "long-fork",
        name: "long fork",
        adya: Some("G2"),
        plume: None,
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::Prefix,
        description: "causally independent writes are seen in different orders by different transactions (no common prefix explains them)",
    },
    AnomalyRow {
        id: AnomalyId::ReadSkew,
        key: "read-skew",
        name: "read skew",
        adya: Some("G-single"),
        plume: None,
        elle: Some("G-single-item"),
        chronos: None,
        weakest_level_forbidding: Level::Prefix,
        description: "a transaction sees one transaction's writes but misses a write that every commit order puts before it: no snapshot shows what it read (not prefix consistent; one anti-dependency, Adya G-single)",
    },
    AnomalyRow {
        id: AnomalyId::PrefixViolation,
        key: "prefix-violation",
        name: "prefix violation",
        adya: None,
        plume: None,
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::Prefix,
        description: "no order of commits lets every transaction see a prefix of it (Biswas & Enea's Prefix axiom)",
    },
    AnomalyRow {
        id: AnomalyId::LostUpdate,
        key: "lost-update",
        name: "lost update",
        adya: Some("G-single"),
        plume: None,
        elle: Some("lost-update"),
        chronos: None,
        weakest_level_forbidding: Level::Snapshot,
        description: "two transactions read a key from the same write and both write it: one update overwrites the other unseen",
    },
    AnomalyRow {
        id: AnomalyId::ConcurrentWriteConflict,
        key: "concurrent-write-conflict",
        name: "concurrent write conflict",
        adya: None,
        plume: None,
        elle: None,
        chronos: Some("NOCONFLICT"),
        weakest_level_forbidding: Level::Snapshot,
        description: "two transactions that write a common key run on snapshots that miss each other (snapshot isolation's first committer wins would abort one)",
    },
    AnomalyRow {
        id: AnomalyId::WriteSkew,
        key: "write-skew",
        name: "write skew",
        adya: Some("G2-item"),
        plume: None,
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::Serializable,
        description: "two transactions each read a key the other writes without seeing that write, and they write different keys: allowed by snapshot isolation, not by serializability",
    },
    AnomalyRow {
        id: AnomalyId::ReadOnlyTransactionAnomaly,
        key: "read-only-transaction-anomaly",
        name: "read-only transaction anomaly",
        adya: Some("G2"),
        plume: None,
        elle: Some("G2-item"),
        chronos: None,
        weakest_level_forbidding: Level::Serializable,
        description: "a read-only transaction observes a state that no serial order produces, although the writers alone are serializable (Fekete, O'Neil & O'Neil 2004; allowed by snapshot isolation)",
    },
    AnomalyRow {
        id: AnomalyId::MultiTransactionWriteSkew,
        key: "multi-transaction-write-skew",
        name: "multi-transaction write skew",
        adya: Some("G2"),
        plume: None,
        elle: Some("G2-item"),
        chronos: None,
        weakest_level_forbidding: Level::Serializable,
        description: "three or more transactions each read a key the next one writes, each from a snapshot that misses that write: allowed by snapshot isolation, not by serializability",
    },
    AnomalyRow {
        id: AnomalyId::SerializationAnomaly,
        key: "serialization-anomaly",
        name: "serialization anomaly",
        adya: None,
        plume: None,
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::Serializable,
        description: "snapshot isolation allows it; the commit order needed to name it could not be computed in time",
    },
    AnomalyRow {
        id: AnomalyId::UnserializableInterleaving,
        key: "unserializable-interleaving",
        name: "unserializable interleaving",
        adya: None,
        plume: None,
        elle: None,
        chronos: None,
        weakest_level_forbidding: Level::Serializable,
        description: "reads that a weaker level allows but no serial order explains",
    },
    AnomalyRow {
        id: AnomalyId::StartAfterCommit,
        key: "start-after-commit",
        name: "start after commit",
        adya: None,
        plume: None,
        elle: None,
        chronos: Some("START-AFTER-COMMIT"),
        weakest_level_forbidding: Level::Snapshot,
        description: "the database gave a transaction a start timestamp later than its commit timestamp",
    },
    AnomalyRow {
        id: AnomalyId::SessionNotVisible,
        key: "session-not-visible",
        name: "session order not visible",
        adya: None,
        plume: None,
        elle: None,
        chronos: Some("SESSION"),
        weakest_level_forbidding: Level::Snapshot,
        description: "by the database's timestamps, a transaction does not see an earlier transaction of its own session",
    },
    AnomalyRow {
        id: AnomalyId::InternalInconsistency,
        key: "internal-inconsistency",
        name: "internal inconsistency",
        adya: None,
        plume: None,
        elle: Some("internal"),
        chronos: Some("INT"),
        weakest_level_forbidding: Level::ReadAtomic,
        description: "a transaction reads a key and gets something other than what its own earlier read or write of that key gave",
    },
    AnomalyRow {
        id: AnomalyId::SnapshotReadViolation,
        key: "snapshot-read-violation",
        name: "read outside the snapshot",
        adya: None,
        plume: None,
        elle: None,
        chronos: Some("EXT"),
        weakest_level_forbidding: Level::Snapshot,
        description: "by the database's timestamps, a read returns a value other than the one its snapshot holds (stale, uncommitted, from the future, or never written)",
    },
    AnomalyRow {
        id: AnomalyId::EqualCommitTimestamps,
        key: "equal-commit-timestamps",
        name: "equal commit timestamps",
        adya: None,
        plume: None,
        elle: None,
        chronos: Some("EQUAL-COMMIT"),
        weakest_level_forbidding: Level::Snapshot,
        description: "two writers of one key have the same commit timestamp, so the database's timestamps do not say which write is later",
    },
    AnomalyRow {
        id: AnomalyId::NonAdjacentAntiDependencyCycle,
        key: "non-adjacent-anti-dependency-cycle",
        name: "non-adjacent anti-dependency cycle",
        adya: None,
        plume: None,
        elle: Some("G-nonadjacent-item"),
        chronos: None,
        weakest_level_forbidding: Level::Snapshot,
        description: "under the known order of each key's writes, a cycle of dependencies closes through two or more transactions that miss another's write, no two of them adjacent: no snapshots explain it (Cerone & Gotsman's characterization of snapshot isolation)",
    },
    AnomalyRow {
        id: AnomalyId::WriteCycleRealTime,
        key: "write-cycle-real-time",
        name: "real-time write cycle",
        adya: None,
        plume: None,
        elle: Some("G0-realtime"),
        chronos: None,
        weakest_level_forbidding: Level::StrictSerializable,
        description: "write-write order, session order and the clients' real-time order (one transaction completed before another was invoked) form a cycle",
    },
    AnomalyRow {
        id: AnomalyId::CausalityCycleRealTime,
        key: "causality-cycle-real-time",
        name: "real-time causality cycle",
        adya: None,
        plume: None,
        elle: Some("G1c-realtime"),
        chronos: None,
        weakest_level_forbidding: Level::StrictSerializable,
        description: "write-read dependencies (with write-write and session order) and the clients' real-time order form a cycle: a transaction read a write that, in real time, came after it",
    },
    AnomalyRow {
        id: AnomalyId::SingleAntiDependencyCycleRealTime,
        key: "single-anti-dependency-cycle-real-time",
        name: "real-time single anti-dependency cycle",
        adya: None,
        plume: None,
        elle: Some("G-single-item-realtime"),
        chronos: None,
        weakest_level_forbidding: Level::StrictSerializable,
        description: "a cycle of dependencies and real-time order closes through exactly one transaction that misses another's write: serializable perhaps, but not in an order the clients' real time allows",
    },
    AnomalyRow {
        id: AnomalyId::AntiDependencyCycleRealTime,
        key: "anti-dependency-cycle-real-time",
        name: "real-time anti-dependency cycle",
        adya: None,
        plume: None,
        elle: Some("G2-item-realtime"),
        chronos: None,
        weakest_level_forbidding: Level::StrictSerializable,
        description: "a cycle of dependencies and real-time order closes through two or more transactions that miss another's write: serializable perhaps, but not in an order the clients' real time allows",
    },
];

/// The table as Markdown, for `docs/checking.md` (written there by
/// `cargo run --release --example anomaly_table -- --write-docs`).
pub fn render_markdown() -> String {
    let mut out = String::from(
        "| id | name | Adya | Plume | Elle | Chronos | weakest level forbidding | what happens |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in ANOMALIES {
        let dash = |s: Option<&str>| s.map_or_else(|| "—".to_string(), |s| format!("`{s}`"));
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
            r.key,
            r.name,
            dash(r.adya),
            r.plume
                .map_or_else(|| "—".to_string(), |p| format!("{} `{}`", p.letter, p.name)),
            dash(r.elle),
            dash(r.chronos),
            r.weakest_level_forbidding.short_name(),
            r.description,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_the_order_of_their_ids() {
        for (i, r) in ANOMALIES.iter().enumerate() {
            assert_eq!(r.id as usize, i, "{}", r.key);
            assert_eq!(r.id.row().key, r.key);
            let json = serde_json::to_string(&r.id).unwrap();
            assert_eq!(json, format!("\"{}\"", r.key));
        }
    }

    #[test]
    fn engineer_names_ids_and_plume_names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for r in ANOMALIES {
            for n in [
                Some(r.name),
                Some(r.key),
                r.plume.map(|p| p.name),
                r.chronos,
            ]
            .into_iter()
            .flatten()
            {
                assert!(seen.insert(n), "{n} twice");
            }
        }
    }

    #[test]
    fn plume_letters_run_a_to_n_in_order() {
        let letters: String = ANOMALIES
            .iter()
            .filter_map(|r| r.plume.map(|p| p.letter))
            .collect();
        assert_eq!(letters, "abcdefghijklmn");
    }

    #[test]
    fn names_find_their_rows() {
        assert_eq!(by_name("lost update").unwrap().id, AnomalyId::LostUpdate);
        assert_eq!(by_name("G1a").unwrap().id, AnomalyId::AbortedRead);
        assert_eq!(by_name("G2").unwrap().id, AnomalyId::AntiDependencyCycle);
        assert_eq!(
            by_name("G-single").unwrap().id,
            AnomalyId::SingleAntiDependencyCycle
        );
        assert_eq!(by_name("CyclicCO").unwrap().id, AnomalyId::CausalityCycle);
        assert_eq!(
            by_name("incompatible-order").unwrap().id,
            AnomalyId::IncompatibleOrder
        );
        assert!(by_name("dirty sock").is_none());
    }

    /// Every view prints one label per row: the engineer's name first, then each other
    /// vocabulary's identifier from the same row.
    #[test]
    fn labels_put_every_vocabulary_beside_the_engineers_name() {
        assert_eq!(
            AnomalyId::CausalityCycle.label(),
            "causality cycle (Adya G1c, Elle G1c, Plume TAP g CyclicCO)"
        );
        assert_eq!(
            AnomalyId::LostUpdate.label(),
            "lost update (Adya G-single, Elle lost-update)"
        );
        assert_eq!(
            AnomalyId::SnapshotReadViolation.label(),
            "read outside the snapshot (Chronos EXT)"
        );
        assert_eq!(
            AnomalyId::UnserializableInterleaving.label(),
            "unserializable interleaving"
        );
        for r in ANOMALIES {
            assert!(r.label().starts_with(r.name), "{}", r.key);
            let names = r.names();
            assert_eq!((names.id, names.name.as_str()), (r.id, r.name));
        }
    }

    #[test]
    fn the_markdown_has_one_line_per_row() {
        let md = render_markdown();
        assert_eq!(md.lines().count(), ANOMALIES.len() + 2);
        assert!(md
            .contains("| `lost-update` | lost update | `G-single` | — | `lost-update` | — | si |"));
    }
}
