//! What a verdict may rely on (docs/architecture.md, "one verdict"): a property of the input, shown on
//! every verdict, overridable with `--evidence`.
//!
//! - **black-box**: which write each read observed, and nothing else. Every input has it.
//! - **write order**: the order in which each key's versions were installed, where it is a
//!   fact of the run (an Elle list-append read `[1 2 3]` shows the appends of 1, 2 and 3 in
//!   that order; formats that name writers) — [`History::known_write_order`].
//! - **timestamps**: the database's own start (snapshot) and commit timestamps (TimeKiller,
//!   native JSON `timestamps`). The question becomes "did the database keep its own order":
//!   at si and ser the timestamp checker (Chronos) judges the reads against those orders.
//! - **real time**: when a client invoked a transaction and saw it complete (Jepsen
//!   histories, by the positions of the invocation and completion). Never taken as database
//!   timestamps: a transaction takes effect somewhere inside its interval. It constrains only
//!   the real-time level, strict serializability.

use std::fmt;
use std::str::FromStr;

use crate::history::History;

/// One kind of evidence.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// Reads-from only.
    BlackBox,
    /// Reads-from and the known version order of keys.
    WriteOrder,
    /// The database's start and commit timestamps.
    Timestamps,
    /// Client real-time intervals (with reads-from, and the write order where known).
    RealTime,
}

impl Evidence {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Evidence::BlackBox => "black-box",
            Evidence::WriteOrder => "write-order",
            Evidence::Timestamps => "timestamps",
            Evidence::RealTime => "real-time",
        }
    }

    /// A few words for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Evidence::BlackBox => "which write each read observed",
            Evidence::WriteOrder => {
                "which write each read observed, and each key's known version order"
            }
            Evidence::Timestamps => "the database's own start and commit timestamps",
            Evidence::RealTime => "the clients' real-time order (invocation and completion)",
        }
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the caller asks verdicts to rely on (`--evidence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EvidenceChoice {
    /// Everything the input carries (the default).
    #[default]
    Auto,
    /// Only this kind (and, for `RealTime`, what real time adds to: reads and write order).
    Only(Evidence),
}

impl FromStr for EvidenceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "auto" => EvidenceChoice::Auto,
            "black-box" | "blackbox" | "reads" => EvidenceChoice::Only(Evidence::BlackBox),
            "write-order" | "known-write-order" => EvidenceChoice::Only(Evidence::WriteOrder),
            "timestamps" => EvidenceChoice::Only(Evidence::Timestamps),
            "real-time" | "realtime" => EvidenceChoice::Only(Evidence::RealTime),
            other => {
                return Err(format!(
                    "unknown evidence `{other}` (expected auto, black-box, write-order, \
                     timestamps or real-time)"
                ))
            }
        })
    }
}

/// The evidence an input carries, and what the verdicts will use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvidenceUse {
    /// The input shows each key's version order (in part).
    pub write_order_available: bool,
    /// The input carries the database's timestamps.
    pub timestamps_available: bool,
    /// The input carries client real-time intervals.
    pub real_time_available: bool,
    /// Verdicts use the known write order.
    pub write_order: bool,
    /// si and ser are judged by the database's timestamps.
    pub timestamps: bool,
    /// strict-ser is judged (on the real-time intervals).
    pub real_time: bool,
}

/// Why the evidence asked for cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input}: --evidence {asked}: {why}")]
pub struct EvidenceUnavailable {
    /// The input's name.
    pub input: String,
    /// What was asked for.
    pub asked: Evidence,
    /// What the input lacks.
    pub why: String,
}

impl EvidenceUse {
    /// What `choice` means for an input: `history` (`None` for a timestamped input whose
    /// history is not built: it has neither write order nor real time), with database
    /// timestamps when `has_timestamps`.
    pub fn resolve(
        source: &str,
        history: Option<&History>,
        has_timestamps: bool,
        choice: EvidenceChoice,
    ) -> Result<EvidenceUse, EvidenceUnavailable> {
        let write_order_available = history.is_some_and(|h| !h.known_write_order().is_empty());
        let real_time_available = history.is_some_and(|h| h.has_real_time());
        let available = EvidenceUse {
            write_order_available,
            timestamps_available: has_timestamps,
            real_time_available,
            write_order: false,
            timestamps: false,
            real_time: false,
        };
        let missing = |asked: Evidence, why: &str| EvidenceUnavailable {
            input: source.to_string(),
            asked,
            why: why.to_string(),
        };
        Ok(match choice {
            EvidenceChoice::Auto => EvidenceUse {
                write_order: write_order_available,
                timestamps: has_timestamps,
                real_time: real_time_available,
                ..available
            },
            EvidenceChoice::Only(Evidence::BlackBox) => available,
            EvidenceChoice::Only(Evidence::WriteOrder) => {
                if !write_order_available {
                    return Err(missing(
                        Evidence::WriteOrder,
                        "the input shows no key's version order (list-append reads or a \
                         format that names writers do)",
                    ));
                }
                EvidenceUse {
                    write_order: true,
                    ..available
                }
            }
            EvidenceChoice::Only(Evidence::Timestamps) => {
                if !has_timestamps {
                    return Err(missing(
                        Evidence::Timestamps,
                        "the input carries no database start and commit timestamps \
                         (TimeKiller files and native JSON `timestamps` do; a Jepsen history's \
                         :time is client time, see --evidence real-time)",
                    ));
                }
                EvidenceUse {
                    timestamps: true,
                    ..available
                }
            }
            EvidenceChoice::Only(Evidence::RealTime) => {
                if !real_time_available {
                    return Err(missing(
                        Evidence::RealTime,
                        "the input carries no client real-time intervals (a Jepsen history \
                         with :invoke operations does)",
                    ));
                }
                EvidenceUse {
                    write_order: write_order_available,
                    real_time: true,
                    ..available
                }
            }
        })
    }

    /// The evidence a verdict at `level` relies on under this use.
    pub fn for_level(&self, level: crate::check::Level) -> Evidence {
        use crate::check::Level;
        match level {
            Level::StrictSerializable => Evidence::RealTime,
            Level::Snapshot | Level::Serializable if self.timestamps => Evidence::Timestamps,
            _ if self.write_order => Evidence::WriteOrder,
            _ => Evidence::BlackBox,
        }
    }
}
