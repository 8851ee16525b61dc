//! Naming a predicted anomaly the way engineers know it (Berenson et al., "A Critique of ANSI
//! SQL Isolation Levels", SIGMOD'95; Fekete et al., "Making Snapshot Isolation Serializable",
//! TODS 2005; Cerone et al., CONCUR'15 for the long fork), from the predicted history alone.
//!
//! **Two questions, one answer each.** The decision core answers "why does this history
//! violate level L?": [`crate::verdict::anomaly_of`] names a verdict by the violation its
//! checker shows (`check`'s text, `--json`, `--output elle`; `watch` per violation). This
//! module answers another question, "which anomaly does a history that level L *allows* show —
//! what L lets through that serializability forbids?" ([`name_anomaly`]; `predict`'s text and
//! `--json`, `run`'s and `test`'s reports, `reproduce`). Each of its names is decided once, by
//! one of two deciders, and [`AnomalyName::named_by`] says which:
//!
//! - [`NamedBy::Verdict`]: a read atomic or read committed prediction is named by the decision
//!   core's own classifier on its verdict at the next stronger level (read atomic, then
//!   causal): the violation [`crate::verdict::shown_weak_violation`] picks — e.g. a
//!   **non-repeatable read**, a **fractured read**, a **causality cycle** — so `predict` and
//!   `check` on that level cannot name it differently; this module only describes it in the
//!   prediction's labels.
//! - [`NamedBy::Shape`]: a causal, prefix consistent or snapshot isolated prediction
//!   satisfies every level the weak checkers judge, and no checker's violation names what it
//!   allows, so its shape does:
//!   - **lost update**: two transactions read a key from the same write and both write it; one
//!     update overwrites the other unseen. Prefix consistency allows it, snapshot isolation
//!     does not (first committer wins).
//!   - when the prediction satisfies snapshot isolation (so no two concurrent transactions
//!     write a common key), it is named from a witness commit order by the shape every such
//!     cycle has (Fekete et al. 2005, Theorem 2.1: two consecutive anti-dependencies
//!     `a →rw p →rw b` between concurrent transactions): **write skew** when `b = a` (each of
//!     two transactions misses the other's write); **read-only transaction anomaly** when `a`
//!     writes nothing (Fekete et al. 2004); else **multi-transaction write skew** (pivot `p`,
//!     with the path by which `b` precedes `a` in every serial order).
//!   - **concurrent write conflict**: prefix consistency but not snapshot isolation, without
//!     a lost update — two concurrent transactions write a common key (blindly, or one
//!     without reading the other's write).
//!   - **long fork**: causal but not prefix consistent — two transactions see two independent
//!     writes in opposite orders.
//!   - otherwise the generic **unserializable interleaving**.
//!
//! The shapes are the ones the strong levels' explanation (`ser::explain`) names a violation's
//! minimal core by, asked of a history valid at the level rather than of the core of a
//! violation: where both questions are asked of one history (a prediction valid at si checked
//! at ser, at pc checked at si) they give the same row (`a_prediction_and_its_check_name_the_same_row`,
//! tests/cli/one_name.rs). They differ by design in one place: a causal prediction with a lost
//! update is named a lost update even when it is also not prefix consistent (a check at pc
//! names that violation instead: a long fork, read skew or prefix violation).
//!
//! Every name is a row of the anomaly table ([`crate::history::anomalies`]), so an anomaly has
//! the same words everywhere. The witness commit orders and weak verdicts come from the
//! decision core ([`crate::verdict`]) within [`NAMING_TIMEOUT`] each.

use std::time::Duration;

use crate::check::Level;
use crate::history::{AnomalyId, History, KeyId, TxnId};
use crate::verdict::{
    self, Decider, EvidenceChoice, Input, LevelReport, Limits, WeakViolation, WitnessOrder,
};

/// The decision core's limits for naming: the witness commit orders (Z3's encoding, as the
/// names were always computed, so a name does not depend on the search's choice of order)
/// and the weak levels' checks, each within [`NAMING_TIMEOUT`].
fn naming_limits() -> Limits {
    Limits {
        timeout: Some(NAMING_TIMEOUT),
        engine: crate::ser::Engine::Smt,
        explain: false,
        ..Limits::default()
    }
}

/// The most time one question asked to name an anomaly may take; past it the name is the
/// generic one the level allows (e.g. `serialization anomaly`).
pub const NAMING_TIMEOUT: Duration = Duration::from_secs(10);

/// Which of this module's two deciders named an anomaly (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedBy {
    /// The decision core's classifier on its verdict at this stronger level
    /// ([`crate::verdict::anomaly_of`]): the violation the level's checker shows.
    Verdict(Level),
    /// The shape of a history valid at the level asked (lost update, Fekete et al.'s dangerous
    /// structure, concurrent writers, long fork), or the generic name when none fits.
    Shape,
}

/// An anomaly's row in the anomaly table and a one-line description in the history's own
/// labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnomalyName {
    /// The anomaly (its row gives the name: `lost update`, `write skew`, …).
    pub id: AnomalyId,
    /// What happens, naming transactions and keys by the caller's labels.
    pub description: String,
    /// Which decider named it.
    pub named_by: NamedBy,
}

impl AnomalyName {
    /// The engineer's name, from the anomaly table.
    pub fn name(&self) -> &'static str {
        self.id.name()
    }
}

/// Names the anomaly of `h`, a prediction valid at `level` (see the module documentation);
/// `label` names its transactions (`T1.2`), `call` gives a transaction's procedure call when
/// known (shown beside its first mention) and `key` names keys in the description.
pub fn name_anomaly(
    h: &History,
    level: Level,
    label: &dyn Fn(TxnId) -> String,
    call: &dyn Fn(TxnId) -> Option<String>,
    key: &dyn Fn(KeyId) -> String,
) -> AnomalyName {
    let who = |t: TxnId| match call(t) {
        Some(c) => format!("{} (`{c}`)", label(t)),
        None => label(t),
    };
    if let Some((a, b, k, w)) = lost_update(h, key) {
        return AnomalyName {
            named_by: NamedBy::Shape,
            id: AnomalyId::LostUpdate,
            description: format!(
                "{} and {} both read {} from {} and both write it: one update overwrites the \
                 other unseen",
                who(a),
                who(b),
                key(k),
                label(w)
            ),
        };
    }
    let at_least_causal = matches!(level, Level::Causal | Level::Prefix | Level::Snapshot);
    let limits = naming_limits();
    if at_least_causal {
        match verdict::witness_commit_order(h, Level::Snapshot, &limits) {
            WitnessOrder::Found(order) => {
                if let Some(named) = si_anomaly(h, &order, label, &who, key) {
                    return named;
                }
            }
            WitnessOrder::Unknown(_) if level == Level::Snapshot => {
                return AnomalyName {
                    named_by: NamedBy::Shape,
                    id: AnomalyId::SerializationAnomaly,
                    description: AnomalyId::SerializationAnomaly.description().to_string(),
                };
            }
            _ => {}
        }
    }
    if at_least_causal && level != Level::Snapshot {
        let order = verdict::witness_commit_order(h, Level::Prefix, &limits).order();
        if order.is_some() || level == Level::Prefix {
            let pair = order.and_then(|order| concurrent_writers(h, &order, key));
            let description = match pair {
                Some((a, b, k)) => format!(
                    "{} and {} both write {}, and {} runs on a snapshot without {}: prefix \
                     consistency lets both commit, snapshot isolation's first committer wins \
                     would abort {}",
                    who(a),
                    who(b),
                    key(k),
                    label(b),
                    label(a),
                    label(b)
                ),
                None => AnomalyId::ConcurrentWriteConflict.description().to_string(),
            };
            return AnomalyName {
                named_by: NamedBy::Shape,
                id: AnomalyId::ConcurrentWriteConflict,
                description,
            };
        }
    }
    if matches!(level, Level::ReadAtomic | Level::ReadCommitted) {
        if let Some(named) = weak_pattern(h, level, label, &who, key) {
            return named;
        }
    }
    if level == Level::Causal {
        return AnomalyName {
            named_by: NamedBy::Shape,
            id: AnomalyId::LongFork,
            description: AnomalyId::LongFork.description().to_string(),
        };
    }
    AnomalyName {
        named_by: NamedBy::Shape,
        id: AnomalyId::UnserializableInterleaving,
        description: format!(
            "reads that {} allows but no serial order explains",
            level.full_name()
        ),
    }
}

/// A read atomic or read committed prediction named by the pattern the weak levels' checker
/// finds in it at the next stronger level (read atomic, then causal): e.g. a **non-repeatable
/// read** (one transaction reads a key from two writers, which read committed allows), a
/// **fractured read**, a **causality cycle**. `None` when the history satisfies causal
/// consistency (then nothing finer than an unserializable interleaving names it).
fn weak_pattern(
    h: &History,
    level: Level,
    label: &dyn Fn(TxnId) -> String,
    who: &dyn Fn(TxnId) -> String,
    key: &dyn Fn(KeyId) -> String,
) -> Option<AnomalyName> {
    let stronger: &[Level] = match level {
        Level::ReadCommitted => &[Level::ReadAtomic, Level::Causal],
        _ => &[Level::Causal],
    };
    let input = Input::of(h).ok()?;
    let limits = naming_limits();
    let mut decider = Decider::new(&input, EvidenceChoice::Auto, &limits).ok()?;
    for &l in stronger {
        let verdict = decider.decide(l).ok()?;
        let Some(LevelReport::Weak(report)) = verdict.report.as_deref() else {
            return None;
        };
        // The violation the decision core names the verdict by (its one choice), described
        // in the prediction's labels.
        let description = match verdict::shown_weak_violation(report) {
            None => continue,
            Some(WeakViolation::Read(v)) => {
                let k = h.op(v.read.id).key;
                let mut from = v
                    .writer
                    .as_ref()
                    .map_or("nowhere".to_string(), |w| label(w.id));
                // A non-repeatable read's earlier read, from another writer.
                if let Some(other) = v
                    .related
                    .as_ref()
                    .filter(|r| r.kind == crate::history::OpKind::Read)
                    .and_then(|r| h.writer_txn(r.id))
                {
                    from = format!("{} and, in an earlier read, from {from}", label(other));
                }
                format!(
                    "{} reads {} from {from}, which {} allows but {} forbids: {}",
                    who(v.txn.id),
                    key(k),
                    level.full_name(),
                    l.full_name(),
                    v.anomaly.id().description()
                )
            }
            Some(WeakViolation::Cycle(c)) => {
                let txns: Vec<String> = c.transactions.iter().map(|t| who(t.id)).collect();
                format!(
                    "{} allows it, {} forbids it: {} ({})",
                    level.full_name(),
                    l.full_name(),
                    c.anomaly.id().description(),
                    txns.join(", ")
                )
            }
        };
        let id = verdict.anomaly_id()?;
        return Some(AnomalyName {
            id,
            description,
            named_by: NamedBy::Verdict(l),
        });
    }
    None
}

/// Names the anomaly of prediction `p` (valid at `level`) on its minimal core (the whole
/// predicted history when it has none): [`name_anomaly`] with `label` and `call` taking
/// observed transaction ids and `key` a key's name.
pub fn name_prediction(
    p: &crate::predict::Prediction,
    level: Level,
    label: &dyn Fn(TxnId) -> String,
    call: &dyn Fn(TxnId) -> Option<String>,
    key: &dyn Fn(&str) -> String,
) -> AnomalyName {
    let (h, origin) = match &p.core {
        Some(core) => (&core.history, &core.origin),
        None => (&p.history, &p.txn_origin),
    };
    name_anomaly(
        h,
        level,
        &|t| label(origin[t as usize]),
        &|t| call(origin[t as usize]),
        &|k| key(h.key_name(k)),
    )
}

/// How one transaction must precede another in every serial order (Adya's dependency edges
/// with each key's versions in commit order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dep {
    /// Session order.
    So,
    /// The second reads a write of the first.
    Wr,
    /// The second overwrites a write of the first.
    Ww,
    /// The first reads a version older than the second's write (anti-dependency).
    Rw,
}

impl Dep {
    fn arrow(self) -> &'static str {
        match self {
            Dep::So => "→so",
            Dep::Wr => "→wr",
            Dep::Ww => "→ww",
            Dep::Rw => "→rw",
        }
    }
}

/// Names a prediction that satisfies snapshot isolation with the witness commit `order`
/// (every committed transaction, the initial one first), by the shape Fekete et al. (TODS
/// 2005, Theorem 2.1) prove every such cycle has: two consecutive anti-dependencies
/// `a →rw p →rw b` between concurrent transactions (the *dangerous structure*, `p` its pivot).
/// `b = a`: **write skew**; `a` writes nothing: **read-only transaction anomaly**; otherwise **write skew
/// over more transactions**, `b` preceding `a` in every serial order by the path shown.
/// `None` when no such structure exists (then `h` is serializable).
fn si_anomaly(
    h: &History,
    order: &[TxnId],
    label: &dyn Fn(TxnId) -> String,
    who: &dyn Fn(TxnId) -> String,
    key: &dyn Fn(KeyId) -> String,
) -> Option<AnomalyName> {
    let n = h.txn_count();
    let mut pos = vec![usize::MAX; n];
    for (i, &t) in order.iter().enumerate() {
        pos[t as usize] = i;
    }
    let committed = |t: TxnId| pos[t as usize] != usize::MAX;
    let reads: Vec<(TxnId, KeyId, TxnId)> = external_reads(h)
        .into_iter()
        .filter(|&(t, _, w)| committed(t) && committed(w))
        .collect();
    let rw = anti_dependencies(h, &reads, &pos);
    if let Some(skew) = write_skew(&rw, label, who, key) {
        return Some(skew);
    }
    // The dependency graph, for "b precedes a in every serial order".
    let succ = dependency_graph(h, &reads, &rw, &pos);
    let (a, p, b, x, y, edges, read_only) = dangerous_structure(h, &rw, &succ)?;
    let chain: String = std::iter::once(label(b))
        .chain(
            edges
                .iter()
                .map(|&(t, d)| format!("{} {}", d.arrow(), label(t))),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let (id, kind) = if read_only {
        (
            AnomalyId::ReadOnlyTransactionAnomaly,
            "Fekete et al.'s read-only transaction anomaly".to_string(),
        )
    } else {
        (
            AnomalyId::MultiTransactionWriteSkew,
            format!(
                "a write skew through {}, Fekete et al.'s dangerous structure",
                label(p)
            ),
        )
    };
    Some(AnomalyName {
        named_by: NamedBy::Shape,
        id,
        description: format!(
            "{}{} reads {} without seeing the write of {}, which reads {} without seeing the \
             write of {}; yet {} must come before {} in any serial order ({chain}): no serial \
             order exists. Their concurrent writes do not overlap, so snapshot isolation lets \
             all of them commit ({kind})",
            who(a),
            if read_only {
                ", which writes nothing,"
            } else {
                ""
            },
            key(x),
            who(p),
            key(y),
            who(b),
            label(b),
            label(a),
        ),
    })
}

/// Anti-dependencies (reader, later writer, key) under the commit order `pos`, one key per
/// pair, sorted.
fn anti_dependencies(
    h: &History,
    reads: &[(TxnId, KeyId, TxnId)],
    pos: &[usize],
) -> Vec<(TxnId, TxnId, KeyId)> {
    let committed = |t: TxnId| pos[t as usize] != usize::MAX;
    let mut rw: Vec<(TxnId, TxnId, KeyId)> = Vec::new();
    for &(t, k, w) in reads {
        for &u in h.writers_of(k) {
            if u != t && committed(u) && pos[u as usize] > pos[w as usize] {
                rw.push((t, u, k));
            }
        }
    }
    rw.sort_unstable();
    rw.dedup_by_key(|e| (e.0, e.1));
    rw
}

/// A **write skew**: two transactions each with an anti-dependency on the other.
fn write_skew(
    rw: &[(TxnId, TxnId, KeyId)],
    label: &dyn Fn(TxnId) -> String,
    who: &dyn Fn(TxnId) -> String,
    key: &dyn Fn(KeyId) -> String,
) -> Option<AnomalyName> {
    let rw_between = |a: TxnId, b: TxnId| -> Option<KeyId> {
        let i = rw.partition_point(|e| (e.0, e.1) < (a, b));
        rw.get(i).filter(|e| (e.0, e.1) == (a, b)).map(|e| e.2)
    };
    for &(a, b, x) in rw {
        if let Some(y) = rw_between(b, a) {
            return Some(AnomalyName {
                named_by: NamedBy::Shape,
                id: AnomalyId::WriteSkew,
                description: format!(
                    "{} reads {} without seeing the write of {}, which reads {} without \
                     seeing {}'s write of it; their writes do not overlap, so snapshot \
                     isolation lets both commit",
                    who(a),
                    key(x),
                    who(b),
                    key(y),
                    label(a)
                ),
            });
        }
    }
    None
}

/// The dependency graph (so, wr, ww in the commit order `pos`, rw) as successor lists, one
/// edge per pair (the first kind of so, wr, ww, rw).
fn dependency_graph(
    h: &History,
    reads: &[(TxnId, KeyId, TxnId)],
    rw: &[(TxnId, TxnId, KeyId)],
    pos: &[usize],
) -> Vec<Vec<(TxnId, Dep)>> {
    let n = h.txn_count();
    let committed = |t: TxnId| pos[t as usize] != usize::MAX;
    let mut succ: Vec<Vec<(TxnId, Dep)>> = vec![Vec::new(); n];
    for t in h.committed_txns() {
        if let Some(p) = h.so_predecessor(t) {
            succ[p as usize].push((t, Dep::So));
        }
    }
    for &(t, _, w) in reads {
        succ[w as usize].push((t, Dep::Wr));
    }
    for k in 0..h.key_count() as KeyId {
        let mut writers: Vec<TxnId> = h
            .writers_of(k)
            .iter()
            .copied()
            .filter(|&w| committed(w))
            .collect();
        writers.sort_unstable_by_key(|&w| pos[w as usize]);
        for pair in writers.windows(2) {
            succ[pair[0] as usize].push((pair[1], Dep::Ww));
        }
    }
    for &(a, b, _) in rw {
        succ[a as usize].push((b, Dep::Rw));
    }
    for list in &mut succ {
        list.sort_unstable_by_key(|&(t, d)| (t, d as u8));
        list.dedup_by_key(|e| e.0);
    }
    succ
}

/// A path from `from` to `to` in `succ` (breadth first: a shortest one), as its edges.
fn shortest_path(succ: &[Vec<(TxnId, Dep)>], from: TxnId, to: TxnId) -> Option<Vec<(TxnId, Dep)>> {
    let n = succ.len();
    let mut parent: Vec<Option<(TxnId, Dep)>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut queue = std::collections::VecDeque::from([from]);
    seen[from as usize] = true;
    while let Some(t) = queue.pop_front() {
        if t == to {
            let mut edges = Vec::new();
            let mut at = to;
            while at != from {
                let (p, d) = parent[at as usize]?;
                edges.push((at, d));
                at = p;
            }
            edges.reverse();
            return Some(edges);
        }
        for &(u, d) in &succ[t as usize] {
            if !seen[u as usize] {
                seen[u as usize] = true;
                parent[u as usize] = Some((t, d));
                queue.push_back(u);
            }
        }
    }
    None
}

/// A dangerous structure `a →rw p →rw b` closed by a path `b →* a` (the path's edges), a
/// read-only `a` first: `(a, p, b, x, y, path, read_only)` with `x`, `y` the keys of the two
/// anti-dependencies.
#[allow(clippy::type_complexity)]
fn dangerous_structure(
    h: &History,
    rw: &[(TxnId, TxnId, KeyId)],
    succ: &[Vec<(TxnId, Dep)>],
) -> Option<(TxnId, TxnId, TxnId, KeyId, KeyId, Vec<(TxnId, Dep)>, bool)> {
    let mut found = None;
    'search: for read_only in [true, false] {
        for &(a, p, x) in rw {
            if h.keys_written(a).is_empty() != read_only {
                continue;
            }
            let i = rw.partition_point(|e| e.0 < p);
            for &(_, b, y) in rw[i..].iter().take_while(|e| e.0 == p) {
                if b == a {
                    continue;
                }
                if let Some(edges) = shortest_path(succ, b, a) {
                    found = Some((a, p, b, x, y, edges, read_only));
                    break 'search;
                }
            }
        }
    }
    found
}

/// Whether a key's name (by the caller's `key`) is the application's: neither raw store
/// metadata (`T.<last primary key>`) nor its meaning in words.
fn is_application_key(name: &str) -> bool {
    !name.contains('<') && !name.contains(super::explain::NOT_AN_APPLICATION_COLUMN)
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

/// Two transactions that read `k` from the same writer and both write `k`; a key whose name
/// (by `key`) is the application's (no `<…>` store metadata such as the last primary key)
/// first.
fn lost_update(h: &History, key: &dyn Fn(KeyId) -> String) -> Option<(TxnId, TxnId, KeyId, TxnId)> {
    let mut rmw: Vec<(KeyId, TxnId, TxnId)> = external_reads(h)
        .into_iter()
        .filter(|&(t, k, _)| h.keys_written(t).binary_search(&k).is_ok())
        .map(|(t, k, w)| (k, w, t))
        .collect();
    rmw.sort_unstable();
    let found: Vec<(TxnId, TxnId, KeyId, TxnId)> = rmw
        .windows(2)
        .filter(|p| (p[0].0, p[0].1) == (p[1].0, p[1].1))
        .map(|p| (p[0].2, p[1].2, p[0].0, p[0].1))
        .collect();
    found
        .iter()
        .find(|f| is_application_key(&key(f.2)))
        .or(found.first())
        .copied()
}

/// Two transactions `a`, `b` that write a common key `k` with `a` before `b` in the prefix
/// consistent commit `order`, though `a` is not in `b`'s smallest snapshot (the commit-order
/// prefix up to `b`'s session predecessor and every writer `b` reads from; reading each key
/// from its last writer there, it is a valid snapshot). A prediction that satisfies PC but not
/// SI always has such a pair, else these snapshots would satisfy SI; an application key (no
/// `<…>` metadata) first.
fn concurrent_writers(
    h: &History,
    order: &[TxnId],
    key: &dyn Fn(KeyId) -> String,
) -> Option<(TxnId, TxnId, KeyId)> {
    let mut pos = vec![usize::MAX; h.txn_count()];
    for (i, &t) in order.iter().enumerate() {
        pos[t as usize] = i;
    }
    let committed = |t: TxnId| pos[t as usize] != usize::MAX;
    let mut snapshot = vec![0usize; h.txn_count()];
    for t in h.committed_txns() {
        let pred = h.so_predecessor(t).map_or(0, |p| pos[p as usize]);
        snapshot[t as usize] = pred;
    }
    for (t, _, w) in external_reads(h) {
        if committed(t) && committed(w) {
            snapshot[t as usize] = snapshot[t as usize].max(pos[w as usize]);
        }
    }
    let mut found = Vec::new();
    for k in 0..h.key_count() as KeyId {
        let writers: Vec<TxnId> = h
            .writers_of(k)
            .iter()
            .copied()
            .filter(|&w| committed(w))
            .collect();
        for &a in &writers {
            for &b in &writers {
                if pos[a as usize] < pos[b as usize] && pos[a as usize] > snapshot[b as usize] {
                    found.push((a, b, k));
                }
            }
        }
    }
    found
        .iter()
        .find(|f| is_application_key(&key(f.2)))
        .or(found.first())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::test_util::lost_update_or_write_skew;
    use crate::history::{HistoryBuilder, ReadFrom};

    fn name(h: &History, level: Level) -> AnomalyName {
        name_anomaly(h, level, &|t| h.txn_label(t), &|_| None, &|k| {
            h.key_name(k).to_string()
        })
    }

    /// An operation: read `key` from the transaction (`None`: the initial state), or write.
    enum Op {
        R(&'static str, Option<usize>),
        W(&'static str),
    }

    /// A history of sessions of transactions; reads name their writer by its index in the
    /// order transactions appear (session by session).
    fn hist(sessions: &[&[&[Op]]]) -> History {
        let mut b = HistoryBuilder::new("names");
        let mut txns = Vec::new();
        for session in sessions {
            let s = b.session(None);
            for _ in session.iter() {
                txns.push(b.begin(s, None));
            }
        }
        let mut i = 0;
        for session in sessions {
            for ops in session.iter() {
                for op in ops.iter() {
                    match *op {
                        Op::R(k, from) => {
                            let k = b.key(k);
                            let from = from.map_or(ReadFrom::Initial, |t| ReadFrom::Txn(txns[t]));
                            b.read(txns[i], k, None, from, 0);
                        }
                        Op::W(k) => {
                            let k = b.key(k);
                            b.write(txns[i], k, None, 0);
                        }
                    }
                }
                i += 1;
            }
        }
        b.build().unwrap()
    }

    /// Fekete, O'Neil and O'Neil's read-only anomaly on one Smallbank customer: TransactSavings
    /// (0) deposits to savings `s`; Balance (1) sees it but not WriteCheck (2)'s write of
    /// checking `c`; WriteCheck read savings before the deposit.
    fn read_only_anomaly() -> History {
        use Op::{R, W};
        hist(&[
            &[&[R("s", None), W("s")]],
            &[&[R("s", Some(0)), R("c", None)]],
            &[&[R("s", None), R("c", None), W("c")]],
        ])
    }

    #[test]
    fn names_the_textbook_anomalies() {
        assert_eq!(
            name(&lost_update_or_write_skew(false), Level::Prefix).name(),
            "lost update"
        );
        let skew = name(&lost_update_or_write_skew(true), Level::Snapshot);
        assert_eq!(skew.name(), "write skew");
        assert!(skew.description.contains("reads y"), "{}", skew.description);
        assert_eq!(
            name(&lost_update_or_write_skew(true), Level::Causal).name(),
            "write skew"
        );
    }

    /// One name per anomaly: the row a prediction is named by here (`predict`'s text and
    /// `--json`, `run`'s and `reproduce`'s reports) is the row the decision core's classifier
    /// (`verdict::anomaly_of`: `check`'s text and `--json`) gives the same history checked at
    /// serializability, with the same words.
    #[test]
    fn a_prediction_and_its_check_name_the_same_row() {
        use crate::verdict::{decide, EvidenceChoice, Input, Limits, Outcome};
        for (h, level) in [
            (lost_update_or_write_skew(false), Level::Prefix),
            (lost_update_or_write_skew(true), Level::Snapshot),
            (read_only_anomaly(), Level::Snapshot),
        ] {
            let predicted = name(&h, level).id;
            let input = Input::of(&h).unwrap();
            let v = decide(
                &input,
                Level::Serializable,
                EvidenceChoice::Auto,
                &Limits::default(),
            )
            .unwrap();
            assert_eq!(v.verdict, Outcome::Violated);
            let checked = v.anomaly_names.as_ref().map(|n| n.id);
            assert_eq!(checked, Some(predicted), "{:?}", v.anomaly);
            assert_eq!(v.anomaly.as_deref(), Some(predicted.name()));
        }
    }

    /// A read committed prediction is named by the decision core's own choice on its read
    /// atomic verdict, never by a second rule: here read atomic's report has a bad read (T3.1
    /// reads x from two writers, a non-repeatable read) and a cycle (T4.1 sees T1.1's y but
    /// not its x, a fractured read); the verdict, like `check --level ra`, names the cycle,
    /// and so does the prediction (it used to take the bad read first).
    #[test]
    fn a_weak_prediction_is_named_by_the_core_s_verdict() {
        use crate::verdict::{decide, EvidenceChoice, Input, Limits};
        use Op::{R, W};
        let h = hist(&[
            &[&[W("x"), W("y")]],
            &[&[W("x")]],
            &[&[R("x", Some(0)), R("x", Some(1))]],
            &[&[R("x", None), R("y", Some(0))]],
        ]);
        let input = Input::of(&h).unwrap();
        let ra = decide(
            &input,
            Level::ReadAtomic,
            EvidenceChoice::Auto,
            &Limits::default(),
        )
        .unwrap();
        let Some(LevelReport::Weak(report)) = ra.report.as_deref() else {
            panic!("{ra:?}")
        };
        assert!(
            !report.cycles.is_empty() && !report.read_violations.is_empty(),
            "{report:?}"
        );
        let named = name(&h, Level::ReadCommitted);
        assert_eq!(named.named_by, NamedBy::Verdict(Level::ReadAtomic));
        assert_eq!(Some(named.id), ra.anomaly_id());
        assert_eq!(
            named.id,
            AnomalyId::FracturedReadCausal,
            "{}",
            named.description
        );
        assert!(named.description.contains("T4.1"), "{}", named.description);
        // A causal prediction is named by its shape.
        assert_eq!(
            name(&lost_update_or_write_skew(false), Level::Causal).named_by,
            NamedBy::Shape
        );
    }

    #[test]
    fn names_the_read_only_anomaly_and_its_calls() {
        let h = read_only_anomaly();
        let calls = ["TransactSavings", "Balance", "WriteCheck"];
        let named = name_anomaly(
            &h,
            Level::Snapshot,
            &|t| h.txn_label(t),
            &|t| (t >= 1).then(|| calls[t as usize - 1].to_string()),
            &|k| h.key_name(k).to_string(),
        );
        assert_eq!(
            named.name(),
            "read-only transaction anomaly",
            "{}",
            named.description
        );
        for part in [
            "(`Balance`), which writes nothing, reads c",
            "(`WriteCheck`)",
            "(`TransactSavings`)",
        ] {
            assert!(
                named.description.contains(part),
                "{part}: {}",
                named.description
            );
        }
    }

    #[test]
    fn a_cycle_of_writers_is_not_a_read_only_anomaly() {
        use Op::{R, W};
        // a →rw p (x) →rw b (y) →so b2 →wr a (z); every transaction writes (TPC-C seed 8:
        // Payment →rw Delivery →rw NewOrder →so Payment →wr Payment).
        let h = hist(&[
            &[&[R("x", None), R("z", Some(3)), W("w")]],
            &[&[R("y", None), W("x")]],
            &[&[W("y")], &[W("z")]],
        ]);
        let named = name(&h, Level::Snapshot);
        assert_eq!(
            named.name(),
            "multi-transaction write skew",
            "{}",
            named.description
        );
        assert!(
            named.description.contains("(T3.1 →so T3.2 →wr T1.1)"),
            "{}",
            named.description
        );
    }

    #[test]
    fn names_the_two_writers_of_a_concurrent_write_conflict() {
        use Op::{R, W};
        // Write skew where both also write z blindly: PC, not SI, no lost update.
        let h = hist(&[
            &[&[R("y", None), W("x"), W("z")]],
            &[&[W("y"), W("z"), R("x", None)]],
        ]);
        let named = name(&h, Level::Prefix);
        assert_eq!(
            named.name(),
            "concurrent write conflict",
            "{}",
            named.description
        );
        assert!(
            named.description.contains("both write z"),
            "{}",
            named.description
        );
    }
}
