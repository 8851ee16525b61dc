//! Witness commit orders, asked of the decision core: a commit order of a history whose
//! snapshots explain every read at prefix consistency or snapshot isolation (Biswas & Enea,
//! OOPSLA'19, the Prefix and Conflict axioms), for the replay of a prediction to commit in and
//! for naming a prediction by the shape of its cycle (Fekete et al., TODS 2005). The core's
//! limits bound it (`Limits::timeout`), and every order it gives is checked against the
//! axioms before it is returned.
//!
//! How it is found follows `Limits::engine`: `Search` is Biswas & Enea's prefix search on the
//! read/write split (`ser::check_strong`, milliseconds on most histories); `Smt` is Z3's
//! positions-and-cuts encoding (`ser::satisfies_si_pc`, a brute-force oracle deciding
//! histories of a few transactions); `Auto` asks the search and, only when it answers neither
//! way, Z3.

use std::time::Duration;

use super::Limits;
use crate::check::Level;
use crate::history::{History, TxnId};
use crate::ser::{self, Engine};

/// The core's answer to "which commit order explains these reads at this level?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WitnessOrder {
    /// A commit order of the committed transactions (checked against the level's axioms).
    Found(Vec<TxnId>),
    /// No commit order satisfies the level, with why in words.
    NoneExists(String),
    /// Not decided within the limits, with the limit or reason.
    Unknown(String),
}

impl WitnessOrder {
    /// The order, when one was found.
    pub fn order(self) -> Option<Vec<TxnId>> {
        match self {
            WitnessOrder::Found(order) => Some(order),
            _ => None,
        }
    }
}

/// A commit order of `history` whose snapshots explain every read at `level` (pc or si; any
/// other level is `Unknown`), within `limits` (see the module documentation).
pub fn witness_commit_order(history: &History, level: Level, limits: &Limits) -> WitnessOrder {
    let Some(strong) = ser::StrongLevel::from_level(level)
        .filter(|_| matches!(level, Level::Prefix | Level::Snapshot))
    else {
        return WitnessOrder::Unknown(format!("no witness commit order for {level}"));
    };
    if limits.engine != Engine::Smt {
        let options = ser::StrongOptions {
            timeout: limits.timeout,
            witness: true,
            explain: false,
            memory: limits.memory,
            ..ser::StrongOptions::default()
        };
        if let Ok(report) = ser::check_strong(history, strong, &options) {
            if let Some(order) = report.witness {
                if is_witness_order(history, level, &order) {
                    return WitnessOrder::Found(order);
                }
            }
            if report.verdict == ser::Verdict::Violated {
                return WitnessOrder::NoneExists(format!(
                    "no commit order satisfies {}",
                    level.full_name()
                ));
            }
        }
        if limits.engine == Engine::Search {
            return WitnessOrder::Unknown("the search gave no verified order".to_string());
        }
    }
    smt_order(history, level, limits.timeout)
}

fn smt_order(history: &History, level: Level, timeout: Option<Duration>) -> WitnessOrder {
    match ser::satisfies_si_pc(history, level, timeout) {
        ser::SiPcVerdict::Satisfies { order } => WitnessOrder::Found(order),
        ser::SiPcVerdict::Violates { reason } => WitnessOrder::NoneExists(reason),
        ser::SiPcVerdict::Unknown { reason } => WitnessOrder::Unknown(reason),
    }
}

/// Whether `order` is a commit order of `history` whose snapshots explain every read at
/// `level` (pc or si): the axioms checked directly (`ser::verify_si_pc_order`).
pub fn is_witness_order(history: &History, level: Level, order: &[TxnId]) -> bool {
    ser::verify_si_pc_order(history, level, order).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

    /// A lost update: no snapshot isolation order, a prefix consistency one.
    fn lost_update() -> History {
        let mut b = HistoryBuilder::new("lost");
        let x = b.key("x");
        let (s1, s2) = (b.session(None), b.session(None));
        let t1 = b.begin(s1, None);
        b.read(t1, x, None, ReadFrom::Initial, 1);
        b.write(t1, x, None, 2);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Initial, 3);
        b.write(t2, x, None, 4);
        b.build().unwrap()
    }

    #[test]
    fn every_engine_finds_a_checked_order_or_says_none_exists() {
        let h = lost_update();
        for engine in [Engine::Search, Engine::Smt, Engine::Auto] {
            let limits = Limits {
                engine,
                timeout: Some(Duration::from_secs(30)),
                ..Limits::default()
            };
            let pc = witness_commit_order(&h, Level::Prefix, &limits);
            let order = pc
                .clone()
                .order()
                .unwrap_or_else(|| panic!("{engine:?}: {pc:?}"));
            assert!(is_witness_order(&h, Level::Prefix, &order));
            assert!(matches!(
                witness_commit_order(&h, Level::Snapshot, &limits),
                WitnessOrder::NoneExists(_)
            ));
        }
        assert!(matches!(
            witness_commit_order(&h, Level::Causal, &Limits::default()),
            WitnessOrder::Unknown(_)
        ));
    }
}
