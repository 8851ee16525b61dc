//! Naming a predicted anomaly the way engineers know it (Berenson et al., "A Critique of ANSI
//! SQL Isolation Levels", SIGMOD'95; Fekete et al., "Making Snapshot Isolation Serializable",
//! TODS 2005; Cerone et al., CONCUR'15 for the long fork), from the predicted history alone:
//!
//! - **lost update**: two transactions read a key from the same write and both write it; one
//!   update overwrites the other unseen. Prefix consistency allows it, snapshot isolation does
//!   not (first committer wins).
//! - **write skew**: the prediction satisfies snapshot isolation (so no two concurrent
//!   transactions write a common key), yet each of two transactions misses a write of the
//!   other; **read-only anomaly** when a transaction that writes nothing is needed for the
//!   cycle (Fekete et al. 2004).
//! - **concurrent write conflict**: prefix consistency but not snapshot isolation, without a
//!   lost update — two concurrent transactions write a common key (blindly, or one without
//!   reading the other's write).
//! - **long fork**: causal but not prefix consistent — two transactions see two independent
//!   writes in opposite orders.
//! - otherwise the generic **unserializable interleaving** (read atomic and read committed
//!   predictions, which the checkers already name by Plume's patterns when observed).

use crate::check::Level;
use crate::history::{History, KeyId, TxnId};
use crate::ser::{self, SiPcVerdict};

/// An anomaly's name and a one-line description in the history's own labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AnomalyName {
    /// The name (`lost update`, `write skew`, …).
    pub name: &'static str,
    /// What happens, naming transactions and keys by the caller's labels.
    pub description: String,
}

/// Names the anomaly of `h`, a prediction valid at `level` (see the module documentation);
/// `label` and `key` name its transactions and keys in the description.
pub(crate) fn name_anomaly(
    h: &History,
    level: Level,
    label: &dyn Fn(TxnId) -> String,
    key: &dyn Fn(KeyId) -> String,
) -> AnomalyName {
    if let Some((a, b, k, w)) = lost_update(h) {
        return AnomalyName {
            name: "lost update",
            description: format!(
                "{} and {} both read {} from {} and both write it: one update overwrites the \
                 other unseen",
                label(a),
                label(b),
                key(k),
                label(w)
            ),
        };
    }
    let holds = |l: Level| {
        l == level
            || matches!(
                ser::satisfies_si_pc(h, l, Some(std::time::Duration::from_secs(10))),
                SiPcVerdict::Satisfies { .. }
            )
    };
    let at_least_causal = matches!(level, Level::Causal | Level::Prefix | Level::Snapshot);
    if at_least_causal && holds(Level::Snapshot) {
        if let Some((a, b, x, y)) = skew_pair(h) {
            return AnomalyName {
                name: "write skew",
                description: format!(
                    "{} reads {} without seeing {}'s write of it, and {} reads {} without \
                     seeing {}'s write of it; their writes do not overlap, so snapshot \
                     isolation lets both commit",
                    label(a),
                    key(x),
                    label(b),
                    label(b),
                    key(y),
                    label(a)
                ),
            };
        }
        return AnomalyName {
            name: "read-only anomaly",
            description: "snapshot isolation allows it; the cycle needs a transaction that \
                          writes nothing (Fekete et al.)"
                .to_string(),
        };
    }
    if at_least_causal && holds(Level::Prefix) {
        return AnomalyName {
            name: "concurrent write conflict",
            description: "two transactions that write a common key run on snapshots that miss \
                          each other (snapshot isolation's first committer wins would abort one)"
                .to_string(),
        };
    }
    if level == Level::Causal {
        return AnomalyName {
            name: "long fork",
            description: "causally independent writes are seen in different orders by \
                          different transactions (no common prefix explains them)"
                .to_string(),
        };
    }
    AnomalyName {
        name: "unserializable interleaving",
        description: format!(
            "reads that {} allows but no serial order explains",
            level.full_name()
        ),
    }
}

/// External reads of committed transactions: `(reader, key, writer)`, deduplicated.
fn external_reads(h: &History) -> Vec<(TxnId, KeyId, TxnId)> {
    let mut reads: Vec<(TxnId, KeyId, TxnId)> = h
        .committed_txns()
        .flat_map(|t| {
            h.txn(t)
                .ops()
                .filter(|&o| h.is_external_read(o))
                .filter_map(move |o| h.writer_txn(o).map(|w| (t, h.op(o).key, w)))
        })
        .collect();
    reads.sort_unstable();
    reads.dedup();
    reads
}

/// Two transactions that read `k` from the same writer and both write `k`.
fn lost_update(h: &History) -> Option<(TxnId, TxnId, KeyId, TxnId)> {
    let mut rmw: Vec<(KeyId, TxnId, TxnId)> = external_reads(h)
        .into_iter()
        .filter(|&(t, k, _)| h.keys_written(t).binary_search(&k).is_ok())
        .map(|(t, k, w)| (k, w, t))
        .collect();
    rmw.sort_unstable();
    rmw.windows(2)
        .find(|p| (p[0].0, p[0].1) == (p[1].0, p[1].1))
        .map(|p| (p[0].2, p[1].2, p[0].0, p[0].1))
}

/// Two transactions `a`, `b` where `a` reads `x` from a writer other than `b` though `b` writes
/// `x`, and `b` reads `y` from a writer other than `a` though `a` writes `y`.
fn skew_pair(h: &History) -> Option<(TxnId, TxnId, KeyId, KeyId)> {
    let reads = external_reads(h);
    // (reader, writer it misses, key)
    let mut misses: Vec<(TxnId, TxnId, KeyId)> = Vec::new();
    for &(t, k, w) in &reads {
        for &other in h.writers_of(k) {
            if other != w && other != t && h.txn(other).is_committed() && !h.so_before(other, t) {
                misses.push((t, other, k));
            }
        }
    }
    misses.sort_unstable();
    for &(a, b, x) in &misses {
        let start = misses.partition_point(|m| (m.0, m.1) < (b, a));
        if let Some(&(_, _, y)) = misses.get(start).filter(|m| (m.0, m.1) == (b, a)) {
            return Some((a, b, x, y));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::test_util::lost_update_or_write_skew;

    fn name(h: &History, level: Level) -> AnomalyName {
        name_anomaly(h, level, &|t| h.txn_label(t), &|k| {
            h.key_name(k).to_string()
        })
    }

    #[test]
    fn names_the_textbook_anomalies() {
        assert_eq!(
            name(&lost_update_or_write_skew(false), Level::Prefix).name,
            "lost update"
        );
        let skew = name(&lost_update_or_write_skew(true), Level::Snapshot);
        assert_eq!(skew.name, "write skew");
        assert!(skew.description.contains("reads y"), "{}", skew.description);
        assert_eq!(
            name(&lost_update_or_write_skew(true), Level::Causal).name,
            "write skew"
        );
    }
}
