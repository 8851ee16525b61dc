//! Explaining a PC / SI / SER violation: shrink the failing component to a minimal failing
//! sub-history (deletion debugging, Zeller & Hildebrandt's ddmin with chunks halving down to
//! single transactions: the one shrinker, [`crate::shrink`]), then name it.
//!
//! Soundness: a sub-history keeps only constraints of the whole (dropping a transaction drops
//! its writes and the reads of them), so if it has no commit order for the level, the history
//! has none (Biswas & Enea OOPSLA'19: every axiom instance of the sub-history is one of the
//! history). Each candidate is decided by the same engines, so the core reported is one they
//! proved failing; it is *minimal* when removing any single transaction made it pass.
//!
//! Names (the ones people search for; the anomalies as in Berenson et al. SIGMOD'95, Cerone &
//! Gotsman PODC'16 and Fekete et al. TODS'05; rows of the anomaly table
//! [`crate::history::anomalies`], which gives their words), decided on the core by the lowest
//! level it violates and a structural pattern, each defined below and tested on a hand-written
//! history:
//! - violates PC: **long fork** (A writes x, B writes y; C reads x from A but y not from B,
//!   D reads y from B but x not from A); else **read skew** when Adya's class is G-single (a
//!   transaction sees a writer but misses a write every order puts before it); else a
//!   *prefix violation*;
//! - satisfies PC, violates SI: **lost update** (two transactions read key x from the same
//!   writer and both write x); else a *concurrent write conflict*;
//! - satisfies SI, violates SER: **write skew** (exactly two transactions, each reading a key
//!   the other writes and missing that write, on different keys); else the **read-only
//!   transaction anomaly** when a core transaction writes nothing; else a *multi-transaction
//!   write skew*.
//!
//! Adya's class (G0, G1c, G-single, G2) is the phenomenon the core shows under every version
//! order ([`super::adya`]): a lost update is G-single, a write skew and a long fork G2. G0
//! and G1c need a causal-consistency violation (a cycle of session order and write–read
//! edges is G1c), which the causal checker reports with Plume's pattern names instead
//! (TAP g, CyclicCO). Plume's patterns stop at causal consistency, so none applies to the
//! anomalies named here.

use std::time::{Duration, Instant};

use crate::check::{OpRef, TxnRef};
use crate::history::{AnomalyId, History};
use crate::shrink::{shrink, Plan, Trial};

use super::adya::{self, Phenomenon};
use super::decide::{decide, Decision, Work};
use super::report::{CoreLevels, CoreTxn, StrongEdge, StrongEdgeKind, Violation};
use super::saturate::{path_before, saturate, Bounds, Forced, Rules, Saturation, Why};
use super::txns::Txns;
use super::{Engine, StrongLevel};

/// States the engines may memoise per candidate while shrinking.
const CANDIDATE_STATES: usize = 200_000;

/// Whether `txns` violates `level`; `None` if undecided before `deadline`.
fn fails(txns: &Txns, level: StrongLevel, deadline: Instant) -> Option<bool> {
    let mut work = Work::default();
    match decide(
        txns,
        level,
        Engine::Auto,
        &Bounds {
            deadline: Some(deadline),
            memory: None,
        },
        CANDIDATE_STATES,
        &mut work,
    ) {
        Decision::Pass(_) => Some(false),
        Decision::Fail(_) => Some(true),
        Decision::Unknown(_) => None,
    }
}

/// Explains why `comp` (a component of `history`, which satisfies CC) violates `level`;
/// `candidates` are the transactions of a forced cycle and its premises, when the engines
/// found one. With `shrink` false, the core is those transactions (if they fail on their
/// own), else the whole component.
pub(crate) fn explain(
    history: &History,
    comp: &Txns,
    level: StrongLevel,
    candidates: Option<&[u32]>,
    shrink: bool,
    budget: Duration,
) -> Violation {
    let deadline = Instant::now() + budget;
    let n = comp.len();
    let mut keep = vec![true; n];
    if let Some(cands) = candidates {
        let mut cand = vec![false; n];
        for &t in cands {
            cand[t as usize] = true;
        }
        if fails(&comp.restrict(&cand), level, deadline) == Some(true) {
            keep = cand;
        }
    }
    keep[0] = true;
    let mut minimal = false;
    if shrink {
        minimal = ddmin(comp, level, &mut keep, deadline);
    }
    let core = comp.restrict(&keep);
    let levels = CoreLevels {
        ser: level_holds(&core, StrongLevel::Serializable, deadline),
        si: level_holds(&core, StrongLevel::Snapshot, deadline),
        pc: level_holds(&core, StrongLevel::Prefix, deadline),
    };
    // The core is small; only a stop request can end this saturation early (no cycle shown).
    let ser = saturate(&core, Rules::WwRw, &Bounds::NONE).unwrap_or(Saturation {
        edges: Vec::new(),
        cycle: None,
    });
    let cycle: Vec<StrongEdge> = ser
        .cycle
        .as_ref()
        .map(|c| {
            c.iter()
                .map(|&i| strong_edge(history, &core, &ser.edges, i, 3))
                .collect()
        })
        .unwrap_or_default();
    let phenomenon = adya::classify(&core, MAX_VERSION_ORDERS);
    let (anomaly, description) = name(history, &core, level, &levels, phenomenon);
    let adya = phenomenon.map(|p| p.name().to_string());
    Violation {
        anomaly: anomaly.name().to_string(),
        adya,
        description,
        core: core_txns(history, &core),
        core_minimal: minimal,
        core_levels: levels,
        core_is_cycle: false,
        cycle,
        chosen_order_edges: Vec::new(),
    }
}

fn level_holds(core: &Txns, level: StrongLevel, deadline: Instant) -> Option<bool> {
    fails(core, level, deadline).map(|f| !f)
}

/// Shrinks `keep` (over `comp`'s transactions; the first one always stays) while the
/// sub-history keeps failing, by the one shrinker's `ddmin` ([`crate::shrink`]). Returns
/// whether it ended 1-minimal.
fn ddmin(comp: &Txns, level: StrongLevel, keep: &mut [bool], deadline: Instant) -> bool {
    let order: Vec<usize> = (1..keep.len()).collect();
    let still_fails = |keep: &[bool]| match fails(&comp.restrict(keep), level, deadline) {
        Some(true) => Trial::Fails(()),
        Some(false) => Trial::Passes,
        None => Trial::Unknown,
    };
    let stop = || Instant::now() >= deadline || crate::interrupt::requested();
    shrink(keep, &order, Plan::Ddmin, still_fails, stop).minimal
}

/// The forced edge `i` of `core` as a report edge, with premises to `depth` levels.
fn strong_edge(
    history: &History,
    core: &Txns,
    edges: &[Forced],
    i: usize,
    depth: u32,
) -> StrongEdge {
    let e = edges[i];
    let (from, to) = (core.orig[e.from as usize], core.orig[e.to as usize]);
    let name = |t: u32| history.txn_label(t);
    let (from_label, to_label) = (name(from), name(to));
    let op = |o: u32| OpRef::new(history, o);
    let last_write = |t: u32, read_op: u32| {
        let key = history.op(read_op).key;
        history
            .last_write(core.orig[t as usize], key)
            .map(|w| OpRef::new(history, w))
    };
    let premise = |a: u32, b: u32| -> Vec<StrongEdge> {
        if depth == 0 {
            return Vec::new();
        }
        path_before(core.len(), edges, a, b, e.round)
            .unwrap_or_default()
            .into_iter()
            .map(|j| strong_edge(history, core, edges, j, depth - 1))
            .collect()
    };
    match e.why {
        Why::So | Why::Given => StrongEdge {
            from,
            to,
            from_label: name(from),
            to_label: name(to),
            kind: StrongEdgeKind::SessionOrder,
            key: None,
            read: None,
            write: None,
            via: None,
            explanation: if e.from == 0 {
                "the initial transaction comes first".to_string()
            } else {
                format!("{from_label} precedes {to_label} in their session")
            },
            premise: Vec::new(),
        },
        Why::Wr { op: o } => {
            let read = op(o);
            let write = history.read_from(o).map(op);
            StrongEdge {
                from,
                to,
                from_label: name(from),
                to_label: name(to),
                kind: StrongEdgeKind::WriteRead,
                key: Some(read.key.clone()),
                explanation: format!(
                    "{to_label} reads {read} written by {from_label}{}",
                    write
                        .as_ref()
                        .map_or_else(String::new, |w| format!(" ({w})"))
                ),
                read: Some(read),
                write,
                via: None,
                premise: Vec::new(),
            }
        }
        Why::Ww { t3, op: o } => {
            let read = op(o);
            let t3o = core.orig[t3 as usize];
            StrongEdge {
                from,
                to,
                from_label: name(from),
                to_label: name(to),
                kind: StrongEdgeKind::WriteWrite,
                key: Some(read.key.clone()),
                explanation: format!(
                    "{reader} reads {read} from {to_label}, and {from_label}, which also writes {}, comes before {reader}: {from_label}'s write must come before {to_label}'s",
                    read.key,
                    reader = name(t3o),
                ),
                write: last_write(e.from, o),
                read: Some(read),
                via: Some(t3o),
                premise: premise(e.from, t3),
            }
        }
        Why::Rw { t1, op: o } => {
            let read = op(o);
            let t1o = core.orig[t1 as usize];
            StrongEdge {
                from,
                to,
                from_label: name(from),
                to_label: name(to),
                kind: StrongEdgeKind::ReadWrite,
                key: Some(read.key.clone()),
                explanation: format!(
                    "{from_label} reads {read} from {writer}, and {to_label} overwrites {} after {writer}: {to_label} must come after {from_label}",
                    crate::printable::key_in_words(&read.key),
                    writer = name(t1o),
                ),
                write: last_write(e.to, o),
                read: Some(read),
                via: Some(t1o),
                premise: premise(t1, e.to),
            }
        }
    }
}

/// The core's transactions with the operations that matter.
fn core_txns(history: &History, core: &Txns) -> Vec<CoreTxn> {
    let mut accessors = vec![0u32; core.keys as usize];
    for t in 1..core.len() as u32 {
        for r in core.reads(t) {
            accessors[r.key as usize] += 1;
        }
        for w in core.writes(t) {
            accessors[w.key as usize] += 1;
        }
    }
    (1..core.len() as u32)
        .map(|t| {
            let mut ops: Vec<u32> = core.reads(t).iter().map(|r| r.op).collect();
            ops.extend(
                core.writes(t)
                    .iter()
                    .filter(|w| accessors[w.key as usize] >= 2)
                    .map(|w| w.op),
            );
            ops.sort_unstable();
            CoreTxn {
                txn: TxnRef::new(history, core.orig[t as usize]),
                ops: ops.into_iter().map(|o| OpRef::new(history, o)).collect(),
            }
        })
        .collect()
}

/// Most version orders [`adya::classify`] enumerates for a core.
const MAX_VERSION_ORDERS: u64 = 2_000;

/// A pair of core transactions that read `key` from the same writer and both write it:
/// (key, writer, first, second), local ids.
fn lost_update(core: &Txns) -> Option<(u32, u32, u32, u32)> {
    let mut seen: Vec<(u32, u32, u32)> = Vec::new(); // (key, writer, reader) of read-modify-writes
    for t in 1..core.len() as u32 {
        for r in core.reads(t) {
            if core.writes_key(t, r.key) {
                seen.push((r.key, r.writer, t));
            }
        }
    }
    seen.sort_unstable();
    seen.windows(2)
        .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
        .map(|w| (w[0].0, w[0].1, w[0].2, w[1].2))
}

/// Whether `t` reads `key` from a writer other than `not` (so misses `not`'s write of it).
fn reads_other(core: &Txns, t: u32, key: u32, not: u32) -> bool {
    core.reads(t)
        .iter()
        .any(|r| r.key == key && r.writer != not)
}

/// The long fork: distinct A, B, C, D with A writing x and B writing y, C reading x from A
/// but y not from B, D reading y from B but x not from A (Cerone & Gotsman: C and D see the
/// two independent writers in opposite orders). Returns (A, B, C, D), local ids.
fn long_fork(core: &Txns) -> Option<(u32, u32, u32, u32)> {
    let n = core.len() as u32;
    for c in 1..n {
        for rx in core.reads(c) {
            let a = rx.writer;
            if a == 0 {
                continue;
            }
            for d in (1..n).filter(|&d| d != c && d != a) {
                for ry in core.reads(d) {
                    let b = ry.writer;
                    if b == 0 || b == a || b == c || ry.key == rx.key {
                        continue;
                    }
                    if reads_other(core, c, ry.key, b) && reads_other(core, d, rx.key, a) {
                        return Some((a, b, c, d));
                    }
                }
            }
        }
    }
    None
}

/// Write skew: exactly two transactions, each reading a key the other writes, from a
/// version other than the other's (so each misses the other's write), on different keys.
fn write_skew(core: &Txns) -> Option<(u32, u32, u32, u32)> {
    if core.len() != 3 {
        return None;
    }
    let misses = |t: u32, other: u32| {
        core.reads(t)
            .iter()
            .find(|r| r.writer != other && core.writes_key(other, r.key))
            .map(|r| r.key)
    };
    let (x, y) = (misses(1, 2)?, misses(2, 1)?);
    (x != y).then_some((1, 2, x, y))
}

fn name(
    history: &History,
    core: &Txns,
    level: StrongLevel,
    levels: &CoreLevels,
    adya: Option<Phenomenon>,
) -> (AnomalyId, String) {
    let t = |l: u32| history.txn_label(core.orig[l as usize]);
    let key = |k: u32| {
        crate::printable::key_in_words(history.key_name(core.key_orig[k as usize])).into_owned()
    };
    let pc_fails =
        levels.pc == Some(false) || (level == StrongLevel::Prefix && levels.pc.is_none());
    let si_fails =
        levels.si == Some(false) || (level == StrongLevel::Snapshot && levels.si.is_none());
    let (id, d) = if pc_fails {
        if let Some((a, b, c, d)) = long_fork(core) {
            (
                AnomalyId::LongFork,
                format!(
                    "{} sees {}'s write but not {}'s, and {} sees {}'s but not {}'s: no single order of the two writers explains both (not prefix consistent)",
                    t(c), t(a), t(b), t(d), t(b), t(a)
                ),
            )
        } else if adya == Some(Phenomenon::GSingle) {
            (
                AnomalyId::ReadSkew,
                AnomalyId::ReadSkew.description().to_string(),
            )
        } else {
            (
                AnomalyId::PrefixViolation,
                AnomalyId::PrefixViolation.description().to_string(),
            )
        }
    } else if si_fails {
        if let Some((k, w, a, b)) = lost_update(core) {
            (
                AnomalyId::LostUpdate,
                format!(
                    "{} and {} both read {} from {} and both write {}: whichever commits second overwrites the other's update without having seen it",
                    t(a), t(b), key(k), if w == 0 { "the initial state".to_string() } else { t(w) }, key(k)
                ),
            )
        } else {
            (
                AnomalyId::ConcurrentWriteConflict,
                AnomalyId::ConcurrentWriteConflict.description().to_string(),
            )
        }
    } else if let Some((a, b, x, y)) = write_skew(core) {
        (
            AnomalyId::WriteSkew,
            format!(
                "{} reads {} and {} reads {}, each from a snapshot that misses the other's write of it, and they write different keys: allowed by snapshot isolation, not by serializability",
                t(a), key(x), t(b), key(y)
            ),
        )
    } else if (1..core.len() as u32).any(|t| core.writes(t).is_empty()) {
        (
            AnomalyId::ReadOnlyTransactionAnomaly,
            AnomalyId::ReadOnlyTransactionAnomaly
                .description()
                .to_string(),
        )
    } else {
        (
            AnomalyId::MultiTransactionWriteSkew,
            format!(
                "{} transactions each read a key the next one writes, each from a snapshot that misses that write: allowed by snapshot isolation, not by serializability",
                core.len() - 1
            ),
        )
    };
    (id, d)
}
