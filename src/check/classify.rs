//! Naming an inferred commit-order edge by Plume's patterns: Plume (OOPSLA'24) §3.2 Table 1 and
//! Algorithm 1 lines 12–16 and 33–38 (TAP h, i, k, l, m, n).
//!
//! An edge t2 → t1 was inferred from an axiom instance: t3 reads x from t1 (the read r_x), t2
//! writes x, and t2 is visible to t3. The instance is named by how t2 reaches t3 and by how
//! t1 is ordered before t2 on the cycle that makes it a violation:
//! - t3 read from t2 po-before r_x → NonMonoRead (h/i);
//! - otherwise t2 →so t3 or t2 →wr t3 → FracturedRead (k/l; Plume's Algorithm 1 and Thm 4
//!   count the so case, plume.md pitfall 2);
//! - otherwise t2 happens before t3 → COConflict/Conflict (m/n);
//!
//! with the CO variant (h, k, m) when t1 →(so ∪ wr)⁺ t2 and the CM variant (i, l, n) when only
//! the commit order derived for the level being checked orders t1 before t2 (plume.md
//! pitfall 1). Plume requires y ≠ x for h/i; we also name t3 reading x from t2 and later from
//! t1 a non-monotonic read, since Biswas & Enea's Read Committed axiom forbids it.

use rustc_hash::FxHashMap;

use super::anomaly::Anomaly;
use super::read_consistency::NONE;
use crate::history::{History, KeyId, OpId, TxnId};

/// How t2 reaches t3 in an axiom instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// t2 comes before t3 in t3's session.
    SessionOrder,
    /// t3 reads from t2.
    WriteRead,
    /// t2 happens before t3 through a chain of so and wr edges.
    HappensBefore,
}

/// An axiom instance (t1, t2, t3, x) that inferred the edge t2 → t1, with its pattern name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Instance {
    pub t1: TxnId,
    pub t2: TxnId,
    pub t3: TxnId,
    pub key: KeyId,
    /// t3's read of x from t1.
    pub read_x: OpId,
    /// A read of t3 from t2 (po-before `read_x` for NonMonoRead), or [`NONE`].
    pub read_y: OpId,
    pub relation: Relation,
    pub anomaly: Anomaly,
}

/// Classifies axiom instances, remembering for each reader t3 it has seen which reads t3 makes
/// from each writer (so a huge reader is scanned once, not once per instance).
pub(crate) struct Classifier<'h> {
    history: &'h History,
    external_writer: &'h [TxnId],
    reads_by_writer: FxHashMap<TxnId, FxHashMap<TxnId, Vec<OpId>>>,
}

impl<'h> Classifier<'h> {
    pub fn new(history: &'h History, external_writer: &'h [TxnId]) -> Self {
        Classifier {
            history,
            external_writer,
            reads_by_writer: FxHashMap::default(),
        }
    }

    /// Classifies the instance behind the inferred edge `t2 → writer(read_x)`. `causal` says
    /// whether t1 →(so ∪ wr)⁺ t2.
    pub fn classify(&mut self, t2: TxnId, read_x: OpId, causal: bool) -> Instance {
        let (history, external_writer) = (self.history, self.external_writer);
        let ops = history.ops();
        let t3 = ops[read_x as usize].txn;
        let t1 = external_writer[read_x as usize];
        let key = ops[read_x as usize].key;
        let by_writer = self.reads_by_writer.entry(t3).or_insert_with(|| {
            let mut map: FxHashMap<TxnId, Vec<OpId>> = FxHashMap::default();
            for op in history.txn(t3).ops() {
                let w = external_writer[op as usize];
                if w != NONE {
                    map.entry(w).or_default().push(op);
                }
            }
            map
        });
        let from_t2: &[OpId] = by_writer.get(&t2).map_or(&[], |v| v.as_slice());
        let any = from_t2.first().copied().unwrap_or(NONE);
        let before = &from_t2[..from_t2.partition_point(|&op| op < read_x)];
        let before_read = before
            .iter()
            .copied()
            .find(|&op| ops[op as usize].key != key)
            .or_else(|| before.first().copied());
        let pick = |co: Anomaly, cm: Anomaly| if causal { co } else { cm };
        let (read_y, relation, anomaly) = if let Some(r) = before_read {
            (
                r,
                Relation::WriteRead,
                pick(Anomaly::NonMonoReadCo, Anomaly::NonMonoReadCm),
            )
        } else if history.so_before(t2, t3) {
            (
                NONE,
                Relation::SessionOrder,
                pick(Anomaly::FracturedReadCo, Anomaly::FracturedReadCm),
            )
        } else if any != NONE {
            (
                any,
                Relation::WriteRead,
                pick(Anomaly::FracturedReadCo, Anomaly::FracturedReadCm),
            )
        } else {
            (
                NONE,
                Relation::HappensBefore,
                pick(Anomaly::CoConflictCm, Anomaly::ConflictCm),
            )
        };
        Instance {
            t1,
            t2,
            t3,
            key,
            read_x,
            read_y,
            relation,
            anomaly,
        }
    }
}
