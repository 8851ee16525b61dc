//! Reading a prediction out of a model (IsoPredict PLDI'24 §4.5: "the predicted execution
//! history contains events only up to the prediction boundary"): each session's boundary,
//! each included read's writer, and the predicted prefix as a [`History`].
//!
//! A model fixes the boundary only up to the thresholds the encoding uses: every value between
//! two thresholds gives the same facts. The largest allowed value is taken, so the prefix
//! keeps every event the encoding does not need to exclude (reads of keys nobody else writes,
//! reads of a transaction's own writes). The predicted history keeps the observed sessions
//! (those with an included transaction), transactions (committed ones, cut at the boundary),
//! operations, values and input lines; a read reads its chosen writer's last included write.
//! Aborted transactions are not part of an execution and are left out.

use std::cell::Cell;

use z3::Model;

use super::feasibility::Encoding;
use super::formula::{Lit, Z3Terms};
use super::space::{BoundaryKind, Space, NONE};
use crate::history::{
    BuilderTxn, History, HistoryBuilder, OpId, OpKind, ReadFrom, SessionId, TxnId, INITIAL_TXN,
};

/// The values a model gives to the boundaries and the read choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    /// Per session (index into `space.sessions`): the boundary value (`max` = ∞).
    pub boundary: Vec<u32>,
    /// Per unit: the chosen candidate index, or [`NONE`] when the unit is excluded.
    pub choice: Vec<u32>,
}

/// A model's literal values as the engines read them. Z3 gives no value when it is
/// interrupted while evaluating (the deadline passed or the memory watchdog stopped it right
/// after `sat`): such a literal reads as false and the reading is marked incomplete, so that
/// the caller answers unknown instead of trusting it.
pub(crate) struct ModelValues<'a> {
    terms: &'a Z3Terms,
    model: &'a Model,
    incomplete: Cell<bool>,
}

impl<'a> ModelValues<'a> {
    pub fn new(terms: &'a Z3Terms, model: &'a Model) -> ModelValues<'a> {
        ModelValues {
            terms,
            model,
            incomplete: Cell::new(false),
        }
    }

    /// The literal's value (false, and the reading incomplete, when Z3 gave none).
    pub fn get(&self, l: Lit) -> bool {
        self.terms.value(self.model, l).unwrap_or_else(|| {
            self.incomplete.set(true);
            false
        })
    }

    /// Whether every value read so far came from Z3.
    pub fn complete(&self) -> bool {
        !self.incomplete.get()
    }
}

/// Reads the assignment through `value`; `None` when the values do not form one (a boundary
/// interval without an allowed value, an included unit without a writer), which a complete
/// model of the encoding never gives: the reading was cut short by an interrupt.
pub(crate) fn read_assignment(e: &Encoding, value: impl Fn(Lit) -> bool) -> Option<Assignment> {
    let space = e.space;
    let boundary = (0..space.sessions.len() as u32)
        .map(|s| {
            let (lo, hi) = e.boundary_interval(s, &value);
            let session = &space.sessions[s as usize];
            (lo..hi.min(session.max + 1))
                .rev()
                .find(|&v| session.allowed[v as usize])
        })
        .collect::<Option<Vec<u32>>>()?;
    let choice = (0..space.units.len() as u32)
        .map(|u| {
            if !value(e.inc(u)) {
                return Some(NONE);
            }
            let g = space.units[u as usize].group;
            (0..space.cands(g).len() as u32).find(|&i| value(e.sel(u, i)))
        })
        .collect::<Option<Vec<u32>>>()?;
    Some(Assignment { boundary, choice })
}

/// The literals that pin down an assignment's predicted history: the boundary literals and
/// the selectors of the included units. Their conjunction is what a blocking clause negates.
pub(crate) fn assignment_literals(e: &Encoding, value: impl Fn(Lit) -> bool) -> Vec<Lit> {
    let mut lits = Vec::new();
    for ge in &e.ge {
        for &l in ge {
            lits.push(if value(l) { l } else { l.not() });
        }
    }
    for u in 0..e.space.units.len() as u32 {
        if value(e.inc(u)) {
            let g = e.space.units[u as usize].group;
            for i in 0..e.space.cands(g).len() as u32 {
                let l = e.sel(u, i);
                if l != Lit::TRUE && value(l) {
                    lits.push(l);
                }
            }
        }
    }
    lits
}

/// Where a session's prediction boundary is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BoundaryPoint {
    /// The observed session.
    pub session: SessionId,
    /// `None`: no boundary (the whole session is included).
    pub txn: Option<TxnId>,
    /// Strict mode: the boundary read.
    pub read: Option<OpId>,
    /// Committed transactions of the session included (the boundary transaction counts).
    pub included_txns: u32,
}

/// A predicted history with its relation to the observed one.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    pub history: History,
    /// Predicted transaction id → observed transaction id.
    pub origin: Vec<TxnId>,
    /// Observed reads whose writer changed: (read op, observed writer, predicted writer),
    /// transaction ids of the observed history.
    pub changed: Vec<(OpId, TxnId, TxnId)>,
    /// One per observed session.
    pub boundaries: Vec<BoundaryPoint>,
}

/// Builds the predicted history of an assignment.
pub(crate) fn build(space: &Space, a: &Assignment) -> Result<Built, String> {
    build_with(space, a, false)
}

/// [`build`]; with `boundary_writes`, a strict boundary transaction also keeps its writes after
/// the boundary read (not its reads): the write set it commits with when it runs to the end,
/// which snapshot isolation's first-committer-wins rule judges.
pub(crate) fn build_with(
    space: &Space,
    a: &Assignment,
    boundary_writes: bool,
) -> Result<Built, String> {
    let h = space.history;
    // Writer of every read operation that belongs to a choice unit.
    let mut chosen: Vec<TxnId> = vec![NONE; h.ops().len()];
    for (u, unit) in space.units.iter().enumerate() {
        let c = a.choice[u];
        if c == NONE {
            continue;
        }
        let writer = space.node_txn[space.cands(unit.group)[c as usize] as usize];
        for &o in space.ops_of(u as u32) {
            chosen[o as usize] = writer;
        }
    }
    // Included operations per transaction: the end of each included transaction's op range.
    let mut cut: Vec<OpId> = vec![NONE; h.txn_count()];
    let mut boundaries = Vec::with_capacity(space.sessions.len());
    for (s, session) in space.sessions.iter().enumerate() {
        let b = a.boundary[s];
        let mut point = BoundaryPoint {
            session: session.session,
            txn: None,
            read: None,
            included_txns: session.txns.len() as u32,
        };
        if b == session.max {
            for &t in &session.txns {
                cut[t as usize] = h.txn(t).ops().end;
            }
        } else {
            match space.boundary {
                BoundaryKind::Strict => {
                    let read = session.reads[b as usize];
                    let bt = h.op(read).txn;
                    for &t in session.txns.iter().take_while(|&&t| t < bt) {
                        cut[t as usize] = h.txn(t).ops().end;
                    }
                    cut[bt as usize] = read + 1;
                    point.txn = Some(bt);
                    point.read = Some(read);
                    point.included_txns =
                        session.txns.iter().position(|&t| t == bt).unwrap_or(0) as u32 + 1;
                }
                BoundaryKind::Relaxed => {
                    for &t in &session.txns[..=b as usize] {
                        cut[t as usize] = h.txn(t).ops().end;
                    }
                    point.txn = Some(session.txns[b as usize]);
                    point.included_txns = b + 1;
                }
            }
        }
        boundaries.push(point);
    }

    let sessions: Vec<(SessionId, &[TxnId])> = space
        .sessions
        .iter()
        .map(|s| (s.session, s.txns.as_slice()))
        .collect();
    let (history, origin, changed) = build_prefix(
        h,
        &sessions,
        &cut,
        &|o: OpId| chosen[o as usize],
        boundary_writes,
    )?;
    // A boundary that cuts nothing and changes nothing is no boundary.
    for (point, session) in boundaries.iter_mut().zip(&space.sessions) {
        let everything = session
            .txns
            .iter()
            .all(|&t| cut[t as usize] == h.txn(t).ops().end);
        let changes = changed
            .iter()
            .any(|&(o, _, _)| h.txn(h.op(o).txn).session == session.session);
        if everything && !changes {
            point.txn = None;
            point.read = None;
        }
    }
    Ok(Built {
        history,
        origin,
        changed,
        boundaries,
    })
}

/// Builds the predicted history of a cut: per transaction the end of its included operations
/// (`NONE`: excluded), per read operation its predicted writer (`NONE`: the observed one).
/// With `boundary_writes`, a cut transaction also keeps its writes after the cut (not its
/// reads; see [`build_with`]). Returns the history, predicted id → observed id, and the changed
/// reads.
#[allow(clippy::type_complexity)]
pub(crate) fn build_prefix(
    h: &History,
    sessions: &[(SessionId, &[TxnId])],
    cut: &[OpId],
    chosen: &dyn Fn(OpId) -> TxnId,
    boundary_writes: bool,
) -> Result<(History, Vec<TxnId>, Vec<(OpId, TxnId, TxnId)>), String> {
    let mut builder = HistoryBuilder::new(format!("prediction from {}", h.source()));
    // Keys are interned as the prediction uses them: keys only excluded events touch are not
    // part of it.
    let mut key_of = vec![u32::MAX; h.key_count()];
    let mut key = |builder: &mut HistoryBuilder, k: u32| {
        if key_of[k as usize] == u32::MAX {
            key_of[k as usize] = builder.key(h.key_name(k));
        }
        key_of[k as usize]
    };
    // The initial transaction's explicit writes (its implicit ones, one per other key, come
    // last in its range and are implied again by the builder).
    let initial = h.txn(INITIAL_TXN).ops();
    for o in initial.start..initial.end - h.implicit_initial_writes() {
        let op = h.op(o);
        let k = key(&mut builder, op.key);
        builder.write(BuilderTxn::INITIAL, k, op.value, op.line);
    }
    // Sessions and transactions first (reads may name writers of later sessions).
    let mut builder_txn: Vec<Option<BuilderTxn>> = vec![None; h.txn_count()];
    builder_txn[INITIAL_TXN as usize] = Some(BuilderTxn::INITIAL);
    let mut origin = vec![INITIAL_TXN];
    // Observed session → predicted session (for the connection order).
    let mut builder_session: Vec<SessionId> = Vec::new();
    if !h.sessions_after().is_empty() {
        builder_session = vec![NONE; h.sessions().len()];
    }
    for &(session, txns) in sessions {
        if !txns.iter().any(|&t| cut[t as usize] != NONE) {
            continue;
        }
        let ext = h.sessions()[session as usize].external_id;
        let s = builder.session(ext);
        if let Some(b) = builder_session.get_mut(session as usize) {
            *b = s;
        }
        for &t in txns {
            if cut[t as usize] != NONE {
                let line = h.txn_ops(t).first().map_or(0, |op| op.line);
                builder_txn[t as usize] = Some(builder.begin_at(s, h.txn(t).external_id, line));
                origin.push(t);
            }
        }
    }
    let mut changed = Vec::new();
    for &(_, txns) in sessions {
        for &t in txns {
            let end = cut[t as usize];
            if end == NONE {
                continue;
            }
            let bt = builder_txn[t as usize].expect("begun");
            let last = if boundary_writes {
                h.txn(t).ops().end
            } else {
                end
            };
            for o in h.txn(t).ops().start..last {
                let op = h.op(o);
                if o >= end && op.kind != OpKind::Write {
                    continue;
                }
                let k = key(&mut builder, op.key);
                if op.kind == OpKind::Write {
                    builder.write(bt, k, op.value, op.line);
                    continue;
                }
                let observed = h.writer_txn(o);
                if observed == Some(t) {
                    builder.read(bt, k, op.value, ReadFrom::Txn(bt), op.line);
                    continue;
                }
                if !h.locked_reads().is_empty() && h.is_locked_read(o) {
                    // Kept locked; its write may be cut (the read alone still reads the
                    // latest version under the row lock).
                    let write_kept = (o + 1..last).any(|w| {
                        let wop = h.op(w);
                        wop.kind == OpKind::Write && wop.key == op.key
                    });
                    if write_kept {
                        builder.lock_read(builder.op_count());
                    } else {
                        builder.lock_read_cut(builder.op_count());
                    }
                }
                let observed =
                    observed.ok_or_else(|| format!("read op {o} has no observed writer"))?;
                let writer = match chosen(o) {
                    NONE => observed,
                    w => w,
                };
                let value = if writer == observed {
                    op.value
                } else {
                    changed.push((o, observed, writer));
                    last_included_value(h, writer, op.key, cut)
                };
                let from = if writer == INITIAL_TXN {
                    ReadFrom::Initial
                } else {
                    let w = builder_txn[writer as usize].ok_or_else(|| {
                        format!(
                            "read op {o} reads from {}, which is outside the prediction",
                            h.txn_label(writer)
                        )
                    })?;
                    // The observed writer's write is inside when the write read is (O(1)); a
                    // changed writer's, when any of its writes of the key is.
                    let inside = match h.read_from(o) {
                        Some(w) if writer == observed && w < cut[writer as usize] => true,
                        _ => last_included_value_exists(h, writer, op.key, cut),
                    };
                    if inside {
                        ReadFrom::Txn(w)
                    } else {
                        return Err(format!(
                            "read op {o} reads {} from {}, whose write is outside the prediction",
                            h.key_name(op.key),
                            h.txn_label(writer)
                        ));
                    }
                };
                builder.read(bt, k, value, from, op.line);
            }
        }
    }
    if h.sessions_are_connections() {
        builder.sessions_are_connections();
    }
    keep_connection_order(h, &mut builder, &builder_session);
    let history = builder.build().map_err(|e| e.to_string())?;
    Ok((history, origin, changed))
}

/// The connection order between the sessions a prediction keeps (`builder_session`: observed
/// session → predicted one, [`NONE`] when left out; empty when `h` has no connection order),
/// transitively through those left out.
fn keep_connection_order(h: &History, builder: &mut HistoryBuilder, builder_session: &[SessionId]) {
    if builder_session.is_empty() {
        return;
    }
    let n = h.sessions().len();
    let closure = super::locks::after_closure(h);
    for e in 0..n {
        for l in 0..n {
            let (be, bl) = (builder_session[e], builder_session[l]);
            if closure[e * n + l] && be != NONE && bl != NONE {
                builder.session_after(bl, be);
            }
        }
    }
}

fn included_writes<'a>(
    h: &'a History,
    t: TxnId,
    key: u32,
    cut: &[OpId],
) -> impl Iterator<Item = OpId> + 'a {
    let end = if t == INITIAL_TXN {
        h.txn(t).ops().end
    } else {
        cut[t as usize]
    };
    let range = if end == NONE {
        0..0
    } else {
        h.txn(t).ops().start..end
    };
    range.filter(move |&o| h.op(o).kind == OpKind::Write && h.op(o).key == key)
}

fn last_included_value_exists(h: &History, t: TxnId, key: u32, cut: &[OpId]) -> bool {
    included_writes(h, t, key, cut).next().is_some()
}

fn last_included_value(h: &History, t: TxnId, key: u32, cut: &[OpId]) -> Option<u64> {
    if t == INITIAL_TXN {
        return initial_value(h, key);
    }
    included_writes(h, t, key, cut)
        .last()
        .and_then(|o| h.op(o).value)
}

/// The value the initial transaction writes to `key`. It writes every key: explicitly (a few
/// keys, first in its range) or implicitly (the rest, last in its range, in ascending key
/// order), so a binary search finds most without scanning its thousands of writes.
fn initial_value(h: &History, key: u32) -> Option<u64> {
    let ops = h.txn(INITIAL_TXN).ops();
    let implicit = ops.end - h.implicit_initial_writes();
    let tail = &h.ops()[implicit as usize..ops.end as usize];
    if let Ok(i) = tail.binary_search_by_key(&key, |op| op.key) {
        return tail[i].value;
    }
    (ops.start..implicit)
        .rev()
        .find(|&o| h.op(o).kind == OpKind::Write && h.op(o).key == key)
        .and_then(|o| h.op(o).value)
}

/// Whether a candidate's boundaries cut or change a session another began after (the
/// boundary domains forbid it: [`super::locks::ends_before_another`]; the seeds are checked
/// here).
pub(crate) fn cuts_an_earlier_session(h: &History, built: &Built) -> bool {
    !h.sessions_after().is_empty()
        && built
            .boundaries
            .iter()
            .any(|p| p.txn.is_some() && super::locks::ends_before_another(h, p.session))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_form_no_assignment_are_refused() {
        // Two deposits: the second's read has two candidate writers (t0 and the first).
        let h = super::super::test_histories::deposits();
        let space = Space::new(&h, BoundaryKind::Relaxed, false).unwrap();
        let enc = Encoding::sparse(&space);
        // What an evaluation cut short can give: every read included, none choosing a writer
        // (its selectors read as false).
        let no_writer = read_assignment(&enc, |l| {
            l == Lit::TRUE || (0..space.units.len() as u32).any(|u| l == enc.inc(u))
        });
        assert_eq!(no_writer, None);
        // A consistent reading: every read included, each choosing its first candidate.
        let first = read_assignment(&enc, |l| {
            l == Lit::TRUE
                || (0..space.units.len() as u32).any(|u| l == enc.inc(u) || l == enc.sel(u, 0))
        });
        assert!(first.is_some_and(|a| a.choice.iter().all(|&c| c == 0)));
    }
}
