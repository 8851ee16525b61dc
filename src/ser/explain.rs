//! Explaining a PC / SI / SER violation: shrink the failing component to a minimal failing
//! sub-history (deletion debugging, Zeller & Hildebrandt's ddmin with chunks halving down to
//! single transactions), then name it.
//!
//! Soundness: a sub-history keeps only constraints of the whole (dropping a transaction drops
//! its writes and the reads of them), so if it has no commit order for the level, the history
//! has none (Biswas & Enea OOPSLA'19: every axiom instance of the sub-history is one of the
//! history). Each candidate is decided by the same engines, so the core reported is one they
//! proved failing; it is *minimal* when removing any single transaction made it pass.
//!
//! Names (the ones people search for; Adya's classes from Adya's thesis 1999, the anomalies as
//! in Berenson et al. SIGMOD'95 and Cerone & Gotsman PODC'16), decided on the core:
//! - the core violates PC: **long fork** when its serialization cycle has two non-adjacent
//!   read–write edges, otherwise a *prefix violation*;
//! - satisfies PC, violates SI: **lost update** when two core transactions read a key from the
//!   same writer and both write it; **read skew** when the cycle has exactly one read–write
//!   edge; otherwise *concurrent conflicting writers*;
//! - satisfies SI, violates SER: **write skew**.
//!
//! Adya's class is read off the cycle of forced edges of the core (every serial order would
//! need it): only write–write edges G0; no read–write edge G1c; exactly one G-single; more G2.

use std::time::{Duration, Instant};

use crate::check::{OpRef, TxnRef};
use crate::history::History;

use super::decide::{decide, Decision, Work};
use super::report::{CoreLevels, CoreTxn, StrongEdge, StrongEdgeKind, Violation};
use super::saturate::{path_before, saturate, Forced, Rules, Saturation, Why};
use super::txns::Txns;
use super::{Engine, StrongLevel};

/// States the engines may memoise per candidate while shrinking.
const CANDIDATE_STATES: usize = 200_000;
/// Most premise edges expanded when choosing the first candidate.
const MAX_PREMISE_EDGES: usize = 512;

/// Whether `txns` violates `level`; `None` if undecided before `deadline`.
fn fails(txns: &Txns, level: StrongLevel, deadline: Instant) -> Option<bool> {
    let mut work = Work::default();
    match decide(
        txns,
        level,
        Engine::Auto,
        Some(deadline),
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
    let ser = saturate(&core, Rules::WwRw);
    let cycle: Vec<StrongEdge> = ser
        .cycle
        .as_ref()
        .map(|c| {
            c.iter()
                .map(|&i| strong_edge(history, &core, &ser.edges, i, 3))
                .collect()
        })
        .unwrap_or_default();
    let (anomaly, description) = name(&core, level, &levels, &ser);
    let adya = adya_class(&ser);
    Violation {
        anomaly,
        adya,
        description,
        core: core_txns(history, &core),
        core_minimal: minimal,
        core_levels: levels,
        cycle,
    }
}

fn level_holds(core: &Txns, level: StrongLevel, deadline: Instant) -> Option<bool> {
    fails(core, level, deadline).map(|f| !f)
}

/// Shrinks `keep` (over `comp`'s transactions) while the sub-history keeps failing: chunks of
/// the kept transactions, halving down to one. Returns whether it ended 1-minimal.
fn ddmin(comp: &Txns, level: StrongLevel, keep: &mut [bool], deadline: Instant) -> bool {
    let mut chunk = {
        let kept = keep.iter().skip(1).filter(|&&k| k).count();
        kept.div_ceil(2).max(1)
    };
    loop {
        let members: Vec<usize> = (1..keep.len()).filter(|&t| keep[t]).collect();
        let mut removed_any = false;
        let mut undecided = false;
        for group in members.chunks(chunk) {
            if Instant::now() >= deadline || crate::interrupt::requested() {
                return false;
            }
            if group.len() == members.len() && members.len() > 1 {
                continue; // removing everything never fails
            }
            for &t in group {
                keep[t] = false;
            }
            match fails(&comp.restrict(keep), level, deadline) {
                Some(true) => removed_any = true,
                other => {
                    undecided |= other.is_none();
                    for &t in group {
                        keep[t] = true;
                    }
                }
            }
        }
        if chunk == 1 && !removed_any {
            return !undecided;
        }
        if !removed_any {
            chunk = chunk.div_ceil(2);
        }
    }
}

/// The transactions on the forced cycle of `sat` and on the premises of its derived edges
/// (bounded), mapped by `txn_of` (split nodes to their transaction), sorted, distinct.
pub(crate) fn premise_closure(n: usize, sat: &Saturation, txn_of: impl Fn(u32) -> u32) -> Vec<u32> {
    let edges = &sat.edges;
    let mut todo: Vec<usize> = sat.cycle.clone().unwrap_or_default();
    let mut seen_edge = vec![false; edges.len()];
    let mut txns = Vec::new();
    let mut expanded = 0;
    while let Some(i) = todo.pop() {
        if seen_edge[i] {
            continue;
        }
        seen_edge[i] = true;
        let e = edges[i];
        txns.push(e.from);
        txns.push(e.to);
        let premise = match e.why {
            Why::Ww { t3, .. } => {
                txns.push(t3);
                Some((e.from, t3))
            }
            Why::Rw { t1, .. } => {
                txns.push(t1);
                Some((t1, e.to))
            }
            _ => None,
        };
        if let Some((a, b)) = premise {
            if expanded < MAX_PREMISE_EDGES {
                if let Some(path) = path_before(n, edges, a, b, e.round) {
                    expanded += path.len();
                    todo.extend(path);
                }
            }
        }
    }
    let mut out: Vec<u32> = txns.into_iter().map(txn_of).collect();
    out.sort_unstable();
    out.dedup();
    out
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
            kind: StrongEdgeKind::SessionOrder,
            key: None,
            read: None,
            write: None,
            via: None,
            explanation: if e.from == 0 {
                "the initial transaction comes first".to_string()
            } else {
                format!("t{from} precedes t{to} in their session")
            },
            premise: Vec::new(),
        },
        Why::Wr { op: o } => {
            let read = op(o);
            let write = history.read_from(o).map(op);
            StrongEdge {
                from,
                to,
                kind: StrongEdgeKind::WriteRead,
                key: Some(read.key.clone()),
                explanation: format!(
                    "t{to} reads {read} written by t{from}{}",
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
                kind: StrongEdgeKind::WriteWrite,
                key: Some(read.key.clone()),
                explanation: format!(
                    "t{t3o} reads {read} from t{to}, and t{from}, which also writes {}, comes before t{t3o}: t{from}'s write must come before t{to}'s",
                    read.key
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
                kind: StrongEdgeKind::ReadWrite,
                key: Some(read.key.clone()),
                explanation: format!(
                    "t{from} reads {read} from t{t1o}, and t{to} overwrites {} after t{t1o}: t{to} must come after t{from}",
                    read.key
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

/// Read–write edges of the cycle: how many, and whether two are adjacent (cyclically).
fn rw_shape(sat: &Saturation) -> Option<(usize, bool)> {
    let cycle = sat.cycle.as_ref()?;
    let is_rw: Vec<bool> = cycle
        .iter()
        .map(|&i| matches!(sat.edges[i].why, Why::Rw { .. }))
        .collect();
    let count = is_rw.iter().filter(|&&b| b).count();
    let adjacent = (0..is_rw.len()).any(|i| is_rw[i] && is_rw[(i + 1) % is_rw.len()]);
    Some((count, adjacent && is_rw.len() > 1))
}

fn adya_class(sat: &Saturation) -> Option<String> {
    let cycle = sat.cycle.as_ref()?;
    let whys: Vec<Why> = cycle.iter().map(|&i| sat.edges[i].why).collect();
    let rw = whys.iter().filter(|w| matches!(w, Why::Rw { .. })).count();
    Some(
        if whys.iter().all(|w| matches!(w, Why::Ww { .. })) {
            "G0"
        } else if rw == 0 {
            "G1c"
        } else if rw == 1 {
            "G-single"
        } else {
            "G2"
        }
        .to_string(),
    )
}

fn lost_update(core: &Txns) -> bool {
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
        .any(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
}

fn name(
    core: &Txns,
    level: StrongLevel,
    levels: &CoreLevels,
    ser: &Saturation,
) -> (String, String) {
    let shape = rw_shape(ser);
    let pc_fails =
        levels.pc == Some(false) || (level == StrongLevel::Prefix && levels.pc.is_none());
    let si_fails = levels.si == Some(false);
    let (a, d) = if pc_fails {
        match shape {
            Some((n, false)) if n >= 2 => (
                "long fork",
                "transactions observe the effects of concurrent writers in incompatible orders (no common prefix of commits explains what each saw)",
            ),
            _ => (
                "prefix violation",
                "no order of commits lets every transaction see a prefix of it (Biswas & Enea's Prefix axiom)",
            ),
        }
    } else if si_fails {
        if lost_update(core) {
            (
                "lost update",
                "two transactions read the same version of a key and both write it: one update overwrites the other without seeing it",
            )
        } else if matches!(shape, Some((1, _))) {
            (
                "read skew",
                "a transaction observes a state that no snapshot had: one of its reads misses a write another of its reads depends on",
            )
        } else {
            (
                "concurrent conflicting writers",
                "two transactions that write a common key overlap (Biswas & Enea's Conflict axiom)",
            )
        }
    } else {
        (
            "write skew",
            "transactions read keys the others write, each from a snapshot that misses the others' writes (allowed by snapshot isolation, not by serializability)",
        )
    };
    (a.to_string(), d.to_string())
}
