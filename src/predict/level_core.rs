//! Generalising a rejected candidate to a clause through the core of its level violation
//! (prefix consistency and snapshot isolation; Biswas & Enea OOPSLA'19 §2.2: a sub-history keeps
//! only axiom instances of the whole), for the lazily constrained solvers of the scalable
//! engine (docs/prediction.md "Prefix consistency and snapshot isolation at scale").
//!
//! The exact checker ([`crate::ser::check_strong`]) explains a violation by a *core*: a set of
//! transactions whose sub-history already has no commit order for the level. Let `S` be the
//! sub-history of the candidate made of the core transactions (in the prediction space: nodes),
//! each with its whole write set, session order between them, and the first read of each of
//! their read choices whose chosen writer is a core transaction or t0. `S` is checked again; if
//! it fails, every candidate that includes each core transaction (each session's boundary at
//! least the start of its last core transaction) and each of those reads (boundary at least
//! the read's inclusion threshold) with the same writer contains `S` as a sub-history — a subset
//! of the transactions, closed under session order, a subset of each one's reads with the same
//! writers, the same write sets — so it fails too: a commit order satisfying Prefix (and
//! Conflict) restricts to one of `S`, because their premises only use `so`, `wr`, the commit
//! order and write sets, all of which restrict. The clause says "some session's boundary is
//! below its bound, or one of those reads chooses another writer"; it excludes the candidate
//! and no prediction, like the whole-candidate clause of [`super::lazy::level_clause`], but
//! usually far more candidates at once (it names a few reads instead of every open one).
//!
//! Sound only with a space that registers every node's start as a threshold
//! ([`super::space::Space::for_snapshots`]), which the pc/si solvers use.

use std::time::Instant;

use super::extract::{Assignment, Built};
use super::feasibility::Encoding;
use super::formula::Lit;
use super::judge::{judge, How, Judged};
use super::space::NONE;
use crate::check::Level;
use crate::history::{BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, TxnId, INITIAL_TXN};

/// The clause excluding every candidate that contains the core `core` (transaction ids of
/// `full.history`, the candidate with its whole write sets) of the candidate's level
/// violation, or `None` when the core cannot be used (a transaction outside the space, or its
/// sub-history does not fail on re-check): the caller then blocks the candidate alone.
pub(crate) fn core_clause(
    enc: &Encoding,
    assignment: &Assignment,
    full: &Built,
    core: &[TxnId],
    level: Level,
    deadline: Option<Instant>,
) -> Option<Vec<Lit>> {
    let space = enc.space;
    let h = space.history;
    let mut node_of_txn = vec![NONE; h.txn_count()];
    for (node, &t) in space.node_txn.iter().enumerate() {
        node_of_txn[t as usize] = node as u32;
    }
    let mut in_core = vec![false; h.txn_count()];
    let mut nodes: Vec<u32> = Vec::with_capacity(core.len());
    for &c in core {
        let t = *full.origin.get(c as usize)?;
        if t == INITIAL_TXN {
            continue;
        }
        let node = node_of_txn[t as usize];
        if node == NONE {
            return None;
        }
        in_core[t as usize] = true;
        nodes.push(node);
    }
    nodes.sort_unstable();
    nodes.dedup();
    // Per session the bound its boundary must reach; the kept reads as (unit, choice).
    let mut bound = vec![0u32; space.sessions.len()];
    let mut kept: Vec<(u32, u32)> = Vec::new();
    let mut first_reads = vec![NONE; h.ops().len()]; // op → chosen writer (observed id)
    for &node in &nodes {
        let s = space.node_session[node as usize] as usize;
        bound[s] = bound[s].max(space.node_start[node as usize]);
        for u in space.node_units[node as usize].clone() {
            let c = assignment.choice[u as usize];
            if c == NONE {
                continue;
            }
            let unit = &space.units[u as usize];
            let writer = space.node_txn[space.cands(unit.group)[c as usize] as usize];
            if writer != INITIAL_TXN && !in_core[writer as usize] {
                continue;
            }
            bound[s] = bound[s].max(unit.inc);
            kept.push((u, c));
            first_reads[space.ops_of(u)[0] as usize] = writer;
        }
    }
    // The sub-history S.
    let mut b = HistoryBuilder::new(format!("level core of a prediction from {}", h.source()));
    let mut builder_txn: Vec<Option<BuilderTxn>> = vec![None; h.txn_count()];
    let mut session_of: Vec<Option<crate::history::SessionId>> = vec![None; h.sessions().len()];
    for &node in &nodes {
        let t = space.node_txn[node as usize];
        let s = h.txn(t).session as usize;
        let session = *session_of[s].get_or_insert_with(|| b.session(h.sessions()[s].external_id));
        builder_txn[t as usize] = Some(b.begin(session, h.txn(t).external_id));
    }
    for &node in &nodes {
        let t = space.node_txn[node as usize];
        let bt = builder_txn[t as usize].expect("begun");
        for o in h.txn(t).ops() {
            let op = h.op(o);
            match op.kind {
                OpKind::Write => {
                    let k = b.key(h.key_name(op.key));
                    b.write(bt, k, None, op.line);
                }
                OpKind::Read if first_reads[o as usize] != NONE => {
                    let writer = first_reads[o as usize];
                    let from = if writer == INITIAL_TXN {
                        ReadFrom::Initial
                    } else {
                        ReadFrom::Txn(builder_txn[writer as usize].expect("a core writer"))
                    };
                    let k = b.key(h.key_name(op.key));
                    b.read(bt, k, None, from, op.line);
                }
                OpKind::Read => {}
            }
        }
    }
    let sub: History = b.build().ok()?;
    if !super::is_si_pc(level) {
        return None;
    }
    match judge(&sub, level, How::Checker { core: false }, deadline) {
        Ok(Judged::Fails { .. }) => {}
        _ => return None,
    }
    let mut clause: Vec<Lit> = Vec::new();
    for (s, &v) in bound.iter().enumerate() {
        if v > 0 {
            clause.push(enc.ge(s as u32, v).not());
        }
    }
    for (u, c) in kept {
        let l = enc.sel(u, c);
        if l != Lit::TRUE {
            clause.push(l.not());
        }
    }
    Some(clause)
}
