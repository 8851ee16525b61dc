//! The names of isolation anomalies: Plume's 14 transactional anomalous patterns (TAPs). Their
//! names, letters and descriptions are rows of the anomaly table ([`crate::history::anomalies`]).
//!
//! Plume (Liu, Gu, Wei, Basin; OOPSLA 2024), §3.2, Table 1 and Fig. 3. Each name keeps its TAP
//! letter a–n. Specificity (Plume Thm 3–5): h ⊂ i ⊂ l ⊂ n, k ⊂ l, m ⊂ n; a violation is named
//! by the most specific pattern it matches.

use std::fmt;

use crate::history::anomalies::{AnomalyId, AnomalyRow, PlumeTap};

/// A named isolation anomaly: one of Plume's transactional anomalous patterns (TAP a–n).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Anomaly {
    /// TAP a: a read of a value no transaction wrote.
    ThinAirRead,
    /// TAP b: a read of a value written by an aborted transaction.
    AbortedRead,
    /// TAP c: a read of its own transaction's write that comes later in program order.
    FutureRead,
    /// TAP d: a read from another transaction after the reader has written the key itself.
    NotMyOwnWrite,
    /// TAP e: a read of an own write that a later own write had already overwritten.
    NotMyLastWrite,
    /// TAP f: a read of another transaction's write that that transaction overwrote.
    IntermediateRead,
    /// TAP g: a cycle in session order ∪ write–read (causality cycle).
    #[serde(rename = "CyclicCO")]
    CyclicCo,
    /// TAP h: non-monotonic reads inside a transaction, the writers ordered by causality.
    #[serde(rename = "NonMonoReadCO")]
    NonMonoReadCo,
    /// TAP i: non-monotonic reads inside a transaction, the writers ordered by the commit order.
    #[serde(rename = "NonMonoReadCM")]
    NonMonoReadCm,
    /// TAP j: two reads of one key in a transaction from different transactions.
    NonRepeatableRead,
    /// TAP k: a fractured read (sees only part of an earlier transaction), writers ordered by
    /// causality.
    #[serde(rename = "FracturedReadCO")]
    FracturedReadCo,
    /// TAP l: a fractured read, writers ordered by the commit order.
    #[serde(rename = "FracturedReadCM")]
    FracturedReadCm,
    /// TAP m: a read from a writer that a causally later writer of the key overwrote.
    #[serde(rename = "COConflictCM")]
    CoConflictCm,
    /// TAP n: a read from a writer that a commit-order later writer, causally before the
    /// reader, overwrote.
    #[serde(rename = "ConflictCM")]
    ConflictCm,
}

impl Anomaly {
    /// Every anomaly, in TAP order a–n.
    pub const ALL: [Anomaly; 14] = [
        Anomaly::ThinAirRead,
        Anomaly::AbortedRead,
        Anomaly::FutureRead,
        Anomaly::NotMyOwnWrite,
        Anomaly::NotMyLastWrite,
        Anomaly::IntermediateRead,
        Anomaly::CyclicCo,
        Anomaly::NonMonoReadCo,
        Anomaly::NonMonoReadCm,
        Anomaly::NonRepeatableRead,
        Anomaly::FracturedReadCo,
        Anomaly::FracturedReadCm,
        Anomaly::CoConflictCm,
        Anomaly::ConflictCm,
    ];

    /// This pattern's row in the anomaly table, which holds its names and description.
    pub fn id(self) -> AnomalyId {
        match self {
            Anomaly::ThinAirRead => AnomalyId::ThinAirRead,
            Anomaly::AbortedRead => AnomalyId::AbortedRead,
            Anomaly::FutureRead => AnomalyId::FutureRead,
            Anomaly::NotMyOwnWrite => AnomalyId::NotMyOwnWrite,
            Anomaly::NotMyLastWrite => AnomalyId::NotMyLastWrite,
            Anomaly::IntermediateRead => AnomalyId::IntermediateRead,
            Anomaly::CyclicCo => AnomalyId::CausalityCycle,
            Anomaly::NonMonoReadCo => AnomalyId::NonMonotonicReadCausal,
            Anomaly::NonMonoReadCm => AnomalyId::NonMonotonicRead,
            Anomaly::NonRepeatableRead => AnomalyId::NonRepeatableRead,
            Anomaly::FracturedReadCo => AnomalyId::FracturedReadCausal,
            Anomaly::FracturedReadCm => AnomalyId::FracturedRead,
            Anomaly::CoConflictCm => AnomalyId::CausalWriteConflict,
            Anomaly::ConflictCm => AnomalyId::WriteConflict,
        }
    }

    /// This pattern's row in the anomaly table.
    pub fn row(self) -> &'static AnomalyRow {
        self.id().row()
    }

    fn plume(self) -> PlumeTap {
        self.row()
            .plume
            .expect("every Plume pattern's row names its pattern (tested)")
    }

    /// Plume's TAP letter, `'a'`..=`'n'`.
    pub fn tap(self) -> char {
        self.plume().letter
    }

    /// Plume's name, e.g. `NonMonoReadCO`.
    pub fn name(self) -> &'static str {
        self.plume().name
    }

    /// One line saying what the pattern is.
    pub fn description(self) -> &'static str {
        self.row().description
    }

    /// Whether the pattern is about a single read (TAP a–f, j) rather than a cycle.
    pub fn is_read_level(self) -> bool {
        matches!(
            self,
            Anomaly::ThinAirRead
                | Anomaly::AbortedRead
                | Anomaly::FutureRead
                | Anomaly::NotMyOwnWrite
                | Anomaly::NotMyLastWrite
                | Anomaly::IntermediateRead
                | Anomaly::NonRepeatableRead
        )
    }

    /// Rank used to pick the most specific name for a cycle: lower is more specific. The
    /// causality-ordered patterns (h, k, m) come before the commit-order ones (i, l, n), and
    /// within each group non-monotonic reads before fractured reads before conflicts.
    pub(crate) fn specificity(self) -> u8 {
        match self {
            Anomaly::CyclicCo => 0,
            Anomaly::NonMonoReadCo => 1,
            Anomaly::FracturedReadCo => 2,
            Anomaly::CoConflictCm => 3,
            Anomaly::NonMonoReadCm => 4,
            Anomaly::FracturedReadCm => 5,
            Anomaly::ConflictCm => 6,
            _ => 7,
        }
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_and_names() {
        assert_eq!(Anomaly::ThinAirRead.tap(), 'a');
        assert_eq!(Anomaly::CyclicCo.tap(), 'g');
        assert_eq!(Anomaly::NonRepeatableRead.tap(), 'j');
        assert_eq!(Anomaly::ConflictCm.tap(), 'n');
        for (i, a) in Anomaly::ALL.into_iter().enumerate() {
            assert_eq!(a.tap(), (b'a' + i as u8) as char);
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(json, format!("\"{}\"", a.name()));
            let back: Anomaly = serde_json::from_str(&json).unwrap();
            assert_eq!(back, a);
        }
    }
}
