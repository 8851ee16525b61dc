//! Isolation levels, after Biswas & Enea (OOPSLA'19, Table 1) and Plume (OOPSLA'24, Def. 3).
//!
//! Strength (A ⊑ B: every history satisfying A satisfies B):
//! CC ⊑ RA ⊑ RC, RA ⊑ CI, STRICT-SER ⊑ SER ⊑ SI ⊑ PC ⊑ CC.

use std::fmt;
use std::str::FromStr;

/// An isolation level a history can be checked against.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Read Committed (Biswas & Enea), including monotonic reads inside a transaction.
    ReadCommitted,
    /// Cut Isolation: no non-repeatable reads (Plume Def. 3).
    CutIsolation,
    /// Read Atomic, including session order (Biswas & Enea).
    ReadAtomic,
    /// Transactional causal consistency.
    Causal,
    /// Prefix consistency.
    Prefix,
    /// Snapshot isolation.
    Snapshot,
    /// Serializability.
    Serializable,
    /// Strict serializability: serializability in an order that also respects real time (a
    /// transaction that completed before another was invoked comes first). Needs the client
    /// real-time intervals of a Jepsen history.
    StrictSerializable,
}

impl Level {
    /// Every level, weakest first within each family.
    pub const ALL: [Level; 8] = [
        Level::ReadCommitted,
        Level::CutIsolation,
        Level::ReadAtomic,
        Level::Causal,
        Level::Prefix,
        Level::Snapshot,
        Level::Serializable,
        Level::StrictSerializable,
    ];

    /// The short name used on the command line and in JSON: `rc`, `ci`, `ra`, `cc`, `pc`,
    /// `si`, `ser`.
    pub fn short_name(self) -> &'static str {
        match self {
            Level::ReadCommitted => "rc",
            Level::CutIsolation => "ci",
            Level::ReadAtomic => "ra",
            Level::Causal => "cc",
            Level::Prefix => "pc",
            Level::Snapshot => "si",
            Level::Serializable => "ser",
            Level::StrictSerializable => "strict-ser",
        }
    }

    /// The full name, for reports.
    pub fn full_name(self) -> &'static str {
        match self {
            Level::ReadCommitted => "read committed",
            Level::CutIsolation => "cut isolation",
            Level::ReadAtomic => "read atomic",
            Level::Causal => "causal consistency",
            Level::Prefix => "prefix consistency",
            Level::Snapshot => "snapshot isolation",
            Level::Serializable => "serializability",
            Level::StrictSerializable => "strict serializability",
        }
    }

    /// Whether every history satisfying `self` also satisfies `other` (reflexive).
    pub fn implies(self, other: Level) -> bool {
        use Level::*;
        let rank = |l: Level| match l {
            ReadCommitted | CutIsolation => 0,
            ReadAtomic => 1,
            Causal => 2,
            Prefix => 3,
            Snapshot => 4,
            Serializable => 5,
            StrictSerializable => 6,
        };
        if self == other {
            return true;
        }
        match (self, other) {
            // RC and CI are incomparable.
            (ReadCommitted, CutIsolation) | (CutIsolation, ReadCommitted) => false,
            (CutIsolation, _) => false,
            _ => rank(self) > rank(other),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

impl FromStr for Level {
    type Err = String;

    /// Accepts the short names and the synonyms `causal`, `read-committed`, `read-atomic`,
    /// `cut-isolation`, `prefix`, `snapshot`, `serializable` (case-insensitive).
    fn from_str(s: &str) -> Result<Level, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "rc" | "read-committed" => Level::ReadCommitted,
            "ci" | "cut-isolation" => Level::CutIsolation,
            "ra" | "read-atomic" => Level::ReadAtomic,
            "cc" | "causal" | "tcc" => Level::Causal,
            "pc" | "prefix" => Level::Prefix,
            "si" | "snapshot" => Level::Snapshot,
            "ser" | "serializable" | "serializability" => Level::Serializable,
            "strict-ser" | "strict-serializable" | "strict-serializability" | "strong-serializable" => {
                Level::StrictSerializable
            }
            other => {
                return Err(format!(
                    "unknown isolation level `{other}` (expected rc, ci, ra, cc, pc, si, ser or strict-ser)"
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Level::*;
    use super::*;

    #[test]
    fn strength() {
        assert!(Causal.implies(ReadAtomic));
        assert!(ReadAtomic.implies(ReadCommitted));
        assert!(ReadAtomic.implies(CutIsolation));
        assert!(Serializable.implies(Causal));
        assert!(!ReadCommitted.implies(CutIsolation));
        assert!(!CutIsolation.implies(ReadCommitted));
        assert!(!CutIsolation.implies(ReadAtomic));
        assert!(!Causal.implies(Prefix));
    }

    #[test]
    fn names_round_trip() {
        for l in Level::ALL {
            assert_eq!(l.short_name().parse::<Level>().unwrap(), l);
        }
        assert!("xx".parse::<Level>().is_err());
    }
}
