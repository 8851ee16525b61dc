//! The facts every real database gives, kept by prediction (issue 32 item 4; docs/
//! prediction.md "Statements real databases make atomic"): a history is valid at a level
//! *with its facts* when one commit order satisfies Biswas & Enea's axioms of the level
//! (OOPSLA'19 §2.2, Fig. 2, Table 1) together with
//!
//! - **locked reads** ([`History::locked_reads`]): a locked read of `x` by `t` reading from
//!   `w` obeys the serializability axiom for `x` — every other writer `t2` of `x` is
//!   `co`-before `w` or `co`-after `t`. The row lock orders the writers of `x`, and the
//!   statement reads the latest. Two locked reads of `x` therefore never read one writer
//!   (each reader would have to come before the other);
//! - **connection order** ([`History::sessions_after`]): session `l` began after session `e`
//!   ended, so `e`'s transactions are session-ordered before `l`'s. Session order is extended
//!   by it wherever the level uses session order (`co`, causal's `hb = (so ∪ wr ∪ after)+`,
//!   read atomic's `so`, prefix's snapshots), and at read committed — whose axiom has no
//!   session order — a read of `l` sees every write of `e` as it sees an earlier read's
//!   writer (a statement sees what committed before it began);
//! - **sessions are connections** ([`History::sessions_are_connections`], a run on a real
//!   database): a transaction began after its session's previous one committed, and sees
//!   every write committed before it began. At read committed and read atomic — whose axioms
//!   do not carry this — a read of `t3` sees every transaction that committed before `t3`
//!   began: its `so ∪ after` predecessors and their `hb` ancestors (each committed before its
//!   successor began, or was read by it). So a transaction reads its session's own earlier
//!   writes and nothing older than what an earlier transaction of its session saw. Causal and
//!   stronger levels already require it.
//!
//! Decided exactly in the integer style of IsoPredict (PLDI'24 §4.3) and of
//! [`crate::ser::smt_si_pc`]: a position `q(t)` per committed transaction (the initial one at
//! 0), and at pc and si a snapshot cut `c(t)`; causal, ra and rc arbitration premises are
//! fixed by `so ∪ wr ∪ after` and become plain order atoms, pc/si premises and the locks
//! disjunctions. Every atom is strict and occurs positively, so a model is a total order
//! (ties broken arbitrarily) and on total orders the constraints are the axioms. Exponential
//! in the worst case (Z3); a history larger than [`MAX_TXNS`] committed transactions is not
//! judged (unknown).

use std::time::Instant;

use z3::ast::{Bool, Int};
use z3::SatResult;

use crate::check::Level;
use crate::history::{
    History, KeyId, OpId, OpKind, SessionId, TxnId, INITIAL_TXN, NO_SESSION, NO_WRITER,
};

/// Most committed transactions a predicted history with facts may have to be judged.
pub(crate) const MAX_TXNS: usize = 5_000;

/// The verdict on a history's facts at a level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Facts {
    /// No facts, or a commit order satisfies the level's axioms and the facts together.
    Hold,
    /// None does: why.
    Fail(String),
    /// Not decided (size limit, deadline): why.
    Unknown(String),
}

/// Whether `h` has any fact to keep.
pub(crate) fn has_facts(h: &History) -> bool {
    !h.locked_reads().is_empty() || !h.sessions_after().is_empty() || h.sessions_are_connections()
}

/// Whether another session began after session `s` ended: `s` is then part of every
/// prediction whole, with its observed reads (no boundary). Its later sessions happen after
/// every event of it, so a boundary in it — whose excluded events may diverge — would have to
/// exclude them entirely, and a prediction keeps every session's first read.
pub(crate) fn ends_before_another(h: &History, s: SessionId) -> bool {
    !h.sessions_after().is_empty()
        && h.sessions_after()
            .binary_search_by_key(&s, |&(earlier, _)| earlier)
            .is_ok()
}

/// `closure[e * n + l]`: session `l` is (transitively) after session `e`.
pub(crate) fn after_closure(h: &History) -> Vec<bool> {
    let n = h.sessions().len();
    let mut closure = vec![false; n * n];
    if h.sessions_after().is_empty() {
        return closure;
    }
    // The pairs are sorted by their earlier session: each one's successors are a range.
    let pairs = h.sessions_after();
    let successors = |s: SessionId| {
        let start = pairs.partition_point(|&(a, _)| a < s);
        let end = pairs.partition_point(|&(a, _)| a <= s);
        pairs[start..end].iter().map(|&(_, l)| l)
    };
    let mut stack: Vec<SessionId> = Vec::new();
    for e in 0..n {
        stack.clear();
        stack.extend(successors(e as SessionId));
        while let Some(l) = stack.pop() {
            if std::mem::replace(&mut closure[e * n + l as usize], true) {
                continue;
            }
            stack.extend(successors(l));
        }
    }
    closure
}

/// Decides whether `h` (valid at `level` without its facts, or not: the axioms are all
/// encoded) has a commit order satisfying `level` (rc, ra, causal, pc, si) and its facts.
pub(crate) fn judge_facts(h: &History, level: Level, deadline: Option<Instant>) -> Facts {
    if !has_facts(h) {
        return Facts::Hold;
    }
    let committed: Vec<TxnId> = h.committed_txns().filter(|&t| t != INITIAL_TXN).collect();
    if committed.len() > MAX_TXNS {
        return Facts::Unknown(format!(
            "the locked reads and connection order of a predicted history are judged up to \
             {MAX_TXNS} committed transactions; this one has {}",
            committed.len()
        ));
    }
    let orders = match Orders::of(h, level, committed) {
        Ok(orders) => orders,
        Err(fail) => return fail,
    };
    let encoding = Encoding::new(h, level, deadline);
    encoding.assert_orders(&orders);
    encoding.assert_read_axioms(&orders);
    encoding.assert_locked_reads(&orders);
    encoding.verdict()
}

/// An external read of a committed transaction from a committed writer other than itself.
#[derive(Debug, Clone, Copy)]
struct ExternalRead {
    op: OpId,
    key: KeyId,
    writer: TxnId,
    reader: TxnId,
}

/// What every commit order of a history with facts contains, fixed before the solver: the
/// external reads, the edges of `so ∪ wr ∪ after`, and where a level's premises need them the
/// happens-before ancestors and what each transaction began after.
struct Orders<'h> {
    h: &'h History,
    level: Level,
    committed: Vec<TxnId>,
    sessions: usize,
    /// [`after_closure`].
    closure: Vec<bool>,
    /// In transaction order, each transaction's reads in program order.
    reads: Vec<ExternalRead>,
    /// `so ∪ wr ∪ after`: session order by each transaction's committed predecessor, the
    /// connection order by the last committed transaction of the earlier session and the first
    /// of the later one; sorted, without repeats.
    edges: Vec<(TxnId, TxnId)>,
    /// Words of one transaction's bit set in `ancestors` and `seen_at_start`.
    words: usize,
    /// Per transaction, its `hb = (so ∪ wr ∪ after)+` ancestors (causal, and sessions that are
    /// connections); else empty.
    ancestors: Vec<u64>,
    /// Sessions that are connections: per transaction, the transactions that committed before
    /// it began — its `so ∪ after` predecessors and their `hb` ancestors (each of them
    /// committed before its successor began or read it). Else empty.
    seen_at_start: Vec<u64>,
}

impl<'h> Orders<'h> {
    /// The orders of `h`'s committed transactions `committed` (the initial one excluded);
    /// `Err` when a read's writer did not commit or `so ∪ wr ∪ after` is cyclic (no commit
    /// order contains it).
    fn of(h: &'h History, level: Level, committed: Vec<TxnId>) -> Result<Orders<'h>, Facts> {
        let reads = external_reads(h, &committed)?;
        let sessions = h.sessions().len();
        let closure = after_closure(h);
        let began_after = began_after_edges(h, &committed, &closure);
        let mut edges = began_after.clone();
        edges.extend(
            reads
                .iter()
                .filter(|r| r.writer != INITIAL_TXN)
                .map(|r| (r.writer, r.reader)),
        );
        edges.sort_unstable();
        edges.dedup();
        let n = h.txn_count();
        let words = n.div_ceil(64);
        let connections = h.sessions_are_connections()
            && matches!(
                level,
                Level::ReadCommitted | Level::CutIsolation | Level::ReadAtomic
            );
        let mut ancestors = Vec::new();
        let mut seen_at_start = Vec::new();
        if level == Level::Causal || connections {
            ancestors = hb_ancestors(n, &committed, &edges).ok_or_else(|| {
                Facts::Fail(
                    "session order, connection order and write-read order form a cycle".to_string(),
                )
            })?;
        }
        if connections {
            seen_at_start = vec![0u64; n * words];
            for &(a, b) in &began_after {
                let (from, to) = (a as usize * words, b as usize * words);
                for i in 0..words {
                    let bits = ancestors[from + i];
                    seen_at_start[to + i] |= bits;
                }
                seen_at_start[to + a as usize / 64] |= 1 << (a % 64);
            }
        }
        Ok(Orders {
            h,
            level,
            committed,
            sessions,
            closure,
            reads,
            edges,
            words,
            ancestors,
            seen_at_start,
        })
    }

    /// `a`'s session is ordered before `b`'s by connection order.
    fn after(&self, a: TxnId, b: TxnId) -> bool {
        let session = |t: TxnId| self.h.txn(t).session as usize;
        a != INITIAL_TXN
            && b != INITIAL_TXN
            && self.closure[session(a) * self.sessions + session(b)]
    }

    /// `a` happens before `b` (causal, sessions that are connections).
    fn hb(&self, a: TxnId, b: TxnId) -> bool {
        self.ancestors[b as usize * self.words + a as usize / 64] >> (a % 64) & 1 == 1
    }

    /// Sessions that are connections: `a` committed before `b` began, so every read of `b`
    /// sees it (`false` otherwise).
    fn seen_at_start(&self, a: TxnId, b: TxnId) -> bool {
        !self.seen_at_start.is_empty()
            && self.seen_at_start[b as usize * self.words + a as usize / 64] >> (a % 64) & 1 == 1
    }

    /// The committed writers of `k` other than the initial state.
    fn writers(&self, k: KeyId) -> impl Iterator<Item = TxnId> + '_ {
        self.h
            .writers_of(k)
            .iter()
            .copied()
            .filter(move |&t| t != INITIAL_TXN && self.h.txn(t).is_committed())
    }

    /// Whether the axiom of a level without snapshots (rc, ra, causal) makes `t2`, another
    /// writer of the key of `reads[i]`, come `co`-before the writer read.
    fn premise(&self, i: usize, t2: TxnId) -> bool {
        let ExternalRead { op, reader: t3, .. } = self.reads[i];
        // The reader's other reads: those before `i` in program order and those after it.
        let earlier = self.reads[..i].iter().rev().take_while(|r| r.reader == t3);
        let later = self.reads[i + 1..].iter().take_while(|r| r.reader == t3);
        match self.level {
            Level::Causal => self.hb(t2, t3),
            Level::ReadAtomic => {
                self.h.so_before(t2, t3)
                    || self.after(t2, t3)
                    || self.seen_at_start(t2, t3)
                    || earlier.chain(later).any(|r| r.writer == t2)
            }
            Level::ReadCommitted | Level::CutIsolation => {
                self.after(t2, t3)
                    || self.seen_at_start(t2, t3)
                    || earlier.take_while(|r| r.op < op).any(|r| r.writer == t2)
            }
            Level::Prefix | Level::Snapshot | Level::Serializable | Level::StrictSerializable => {
                false
            }
        }
    }
}

/// The external reads of the committed transactions `committed`; `Err` when one reads from
/// a transaction that did not commit.
fn external_reads(h: &History, committed: &[TxnId]) -> Result<Vec<ExternalRead>, Facts> {
    let mut reads = Vec::new();
    for &t3 in committed {
        for o in h.txn(t3).ops() {
            let op = h.op(o);
            if op.kind != OpKind::Read {
                continue;
            }
            let t1 = h.read_from_txn_raw()[o as usize];
            if t1 == NO_WRITER || t1 == t3 {
                continue;
            }
            if !h.txn(t1).is_committed() {
                return Err(Facts::Fail(format!(
                    "{} reads from {}, which did not commit",
                    h.txn_label(t3),
                    h.txn_label(t1)
                )));
            }
            reads.push(ExternalRead {
                op: o,
                key: op.key,
                writer: t1,
                reader: t3,
            });
        }
    }
    Ok(reads)
}

/// The edges of `so ∪ after`, each from a transaction that committed before its target
/// began: each committed transaction's committed session predecessor (the initial state for
/// the first), and the last committed transaction of a session before the first of every
/// session after it (session order carries the rest).
fn began_after_edges(h: &History, committed: &[TxnId], closure: &[bool]) -> Vec<(TxnId, TxnId)> {
    let sessions = h.sessions().len();
    let mut edges = Vec::new();
    let mut first = vec![None; sessions];
    let mut last = vec![None; sessions];
    for &t in committed {
        let s = h.txn(t).session as usize;
        edges.push((h.so_predecessor(t).unwrap_or(INITIAL_TXN), t));
        first[s].get_or_insert(t);
        last[s] = Some(t);
    }
    for e in 0..sessions {
        for l in 0..sessions {
            if closure[e * sessions + l] {
                if let (Some(a), Some(b)) = (last[e], first[l]) {
                    edges.push((a, b));
                }
            }
        }
    }
    edges
}

/// Each transaction's ancestors by `edges` (bit sets of `n.div_ceil(64)` words per
/// transaction), in a topological order from the initial state; `None` when `edges` has a
/// cycle among `committed`.
fn hb_ancestors(n: usize, committed: &[TxnId], edges: &[(TxnId, TxnId)]) -> Option<Vec<u64>> {
    let words = n.div_ceil(64);
    let mut preds: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    let mut in_degree: Vec<u32> = vec![0; n];
    let mut succs: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        preds[b as usize].push(a);
        succs[a as usize].push(b);
        in_degree[b as usize] += 1;
    }
    let mut queue: Vec<TxnId> = vec![INITIAL_TXN];
    queue.extend(
        committed
            .iter()
            .copied()
            .filter(|&t| in_degree[t as usize] == 0),
    );
    let mut head = 0;
    while head < queue.len() {
        let t = queue[head];
        head += 1;
        for &s in &succs[t as usize] {
            in_degree[s as usize] -= 1;
            if in_degree[s as usize] == 0 {
                queue.push(s);
            }
        }
    }
    if queue.len() < committed.len() + 1 {
        return None;
    }
    let mut ancestors = vec![0u64; n * words];
    for &t in &queue {
        for &p in &preds[t as usize] {
            let (lo, hi) = (p as usize * words, t as usize * words);
            for i in 0..words {
                let bits = ancestors[lo + i];
                ancestors[hi + i] |= bits;
            }
            ancestors[hi + p as usize / 64] |= 1 << (p % 64);
        }
    }
    Some(ancestors)
}

/// The solver, a position `q(t)` per committed transaction (the initial one at 0) and, at pc
/// and si, a snapshot cut `c(t)`.
struct Encoding {
    level: Level,
    solver: z3::Solver,
    q: Vec<Option<Int>>,
    cut: Vec<Option<Int>>,
}

impl Encoding {
    fn new(h: &History, level: Level, deadline: Option<Instant>) -> Encoding {
        let solver = z3::Solver::new();
        if let Some(left) = super::remaining(deadline) {
            let mut params = z3::Params::new();
            params.set_u32(
                "timeout",
                left.as_millis().clamp(1, u32::MAX as u128) as u32,
            );
            solver.set_params(&params);
        }
        let n = h.txn_count() as TxnId;
        let q: Vec<Option<Int>> = (0..n)
            .map(|t| {
                if t == INITIAL_TXN {
                    Some(Int::from_i64(0))
                } else if h.txn(t).is_committed() && h.txn(t).session != NO_SESSION {
                    Some(Int::new_const(format!("q{t}")))
                } else {
                    None
                }
            })
            .collect();
        let snapshots = matches!(level, Level::Prefix | Level::Snapshot);
        let cut = (0..n)
            .map(|t| {
                (snapshots && t != INITIAL_TXN && q[t as usize].is_some())
                    .then(|| Int::new_const(format!("c{t}")))
            })
            .collect();
        Encoding {
            level,
            solver,
            q,
            cut,
        }
    }

    fn pos(&self, t: TxnId) -> &Int {
        self.q[t as usize].as_ref().expect("committed transaction")
    }

    fn cut_of(&self, t: TxnId) -> &Int {
        self.cut[t as usize].as_ref().expect("a snapshot cut")
    }

    /// `a` is `co`-before `b`.
    fn before(&self, a: TxnId, b: TxnId) -> Bool {
        if b == INITIAL_TXN {
            Bool::from_bool(false)
        } else {
            self.pos(a).lt(self.pos(b))
        }
    }

    fn snapshots(&self) -> bool {
        matches!(self.level, Level::Prefix | Level::Snapshot)
    }

    /// `so ∪ wr ∪ after ⊆ co`; at pc and si every predecessor is inside the snapshot, each
    /// snapshot is before its transaction, and (si) two writers of a key are not concurrent.
    fn assert_orders(&self, orders: &Orders) {
        for &(a, b) in &orders.edges {
            self.solver.assert(self.before(a, b));
        }
        if !self.snapshots() {
            return;
        }
        for &(a, b) in &orders.edges {
            self.solver.assert(self.pos(a).lt(self.cut_of(b)));
        }
        for &t in &orders.committed {
            self.solver.assert(self.cut_of(t).lt(self.pos(t)));
        }
        if self.level == Level::Snapshot {
            for &t3 in &orders.committed {
                for &k in orders.h.keys_written(t3) {
                    for t4 in orders.writers(k).filter(|&t4| t4 != t3) {
                        self.solver.assert(Bool::or(&[
                            self.pos(t3).lt(self.pos(t4)),
                            self.pos(t4).lt(self.cut_of(t3)),
                        ]));
                    }
                }
            }
        }
    }

    /// The level's axiom for each read and each other writer of its key.
    fn assert_read_axioms(&self, orders: &Orders) {
        for (i, read) in orders.reads.iter().enumerate() {
            let (t1, t3) = (read.writer, read.reader);
            for t2 in orders.writers(read.key).filter(|&t2| t2 != t1 && t2 != t3) {
                match self.level {
                    Level::Prefix | Level::Snapshot => {
                        self.solver.assert(Bool::or(&[
                            self.before(t2, t1),
                            self.cut_of(t3).lt(self.pos(t2)),
                        ]));
                    }
                    Level::Serializable | Level::StrictSerializable => {
                        self.solver
                            .assert(Bool::or(&[self.before(t2, t1), self.before(t3, t2)]));
                    }
                    _ => {
                        if orders.premise(i, t2) {
                            self.solver.assert(self.before(t2, t1));
                        }
                    }
                }
            }
        }
    }

    /// Locked reads: no other writer of the key between the writer read and the reader.
    fn assert_locked_reads(&self, orders: &Orders) {
        let h = orders.h;
        for &o in h.locked_reads() {
            let t = h.op(o).txn;
            let w = h.read_from_txn_raw()[o as usize];
            if !h.txn(t).is_committed() || w == NO_WRITER || w == t {
                continue;
            }
            for t2 in orders.writers(h.op(o).key).filter(|&t2| t2 != w && t2 != t) {
                self.solver
                    .assert(Bool::or(&[self.before(t2, w), self.before(t, t2)]));
            }
        }
    }

    fn verdict(&self) -> Facts {
        match crate::interrupt::check(&self.solver, |s| s.check()) {
            SatResult::Sat => Facts::Hold,
            SatResult::Unsat => Facts::Fail(format!(
                "no commit order satisfies {} with its locked reads, connection order and \
                 sessions",
                self.level.full_name()
            )),
            SatResult::Unknown => Facts::Unknown(
                self.solver
                    .get_reason_unknown()
                    .unwrap_or_else(|| "unknown".to_string()),
            ),
        }
    }
}

/// What [`reads_locked_or_settled`] found: every external read of the run is one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LockedRun {
    /// Locked reads.
    pub locked: usize,
    /// Unlocked reads whose key a transaction of another session writes, every one of them in
    /// a session that ended before the reader's began.
    pub after_connections: usize,
}

/// Whether every external read of a committed transaction of `h` is *locked* or *settled* —
/// every committed writer of its key other than the initial state is the reader itself, a
/// later transaction of its session, or in a session that ended before the reader's began
/// ([`History::sessions_after`], transitively) — with at least one locked read or one read
/// settled by connection order (else the "no changeable read" certificate says it). Then
/// every candidate of every strategy that keeps the facts at its level is serializable (docs/
/// prediction.md "Why none: certificates"): take a commit order `co` of the candidate that
/// satisfies the level and the facts ([`judge_facts`]). A locked read of `x` reading `w` has
/// every other writer of `x` `co`-before `w` or `co`-after the reader; a settled read's other
/// writers are later in its session (`co`-after) or in an earlier connection, which every level
/// with the connection order puts `co`-before the writer read (and the initial state is first).
/// So every read reads the `co`-last write of its key before it: `co` is a serial order. A
/// candidate is a sub-history of the run (fewer transactions, reads and writes, the same
/// writers for the reads it keeps, the same locks and connection order), so the property holds
/// for every candidate. Linear in the run.
pub(crate) fn reads_locked_or_settled(h: &History) -> Option<LockedRun> {
    if !has_facts(h) {
        return None;
    }
    let sessions = h.sessions().len();
    let closure = after_closure(h);
    // Per key: (session, its first committed writer), t0 excluded.
    let mut first_writers: Vec<Vec<(SessionId, TxnId)>> = vec![Vec::new(); h.key_count()];
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let s = h.txn(t).session;
        for &k in h.keys_written(t) {
            let per_session = &mut first_writers[k as usize];
            match per_session.iter_mut().find(|(x, _)| *x == s) {
                Some(entry) => entry.1 = entry.1.min(t),
                None => per_session.push((s, t)),
            }
        }
    }
    let mut found = LockedRun {
        locked: 0,
        after_connections: 0,
    };
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let l = h.txn(t).session;
        for o in h.txn(t).ops() {
            let op = h.op(o);
            if op.kind != OpKind::Read || h.writer_txn(o) == Some(t) {
                continue;
            }
            if h.is_locked_read(o) {
                found.locked += 1;
                continue;
            }
            let mut by_connection = false;
            for &(s, first) in &first_writers[op.key as usize] {
                if s == l {
                    if first < t {
                        return None;
                    }
                } else if closure[s as usize * sessions + l as usize] {
                    by_connection = true;
                } else {
                    return None;
                }
            }
            found.after_connections += usize::from(by_connection);
        }
    }
    (found.locked + found.after_connections > 0).then_some(found)
}

/// A necessary condition of [`judge_facts`], decided without the solver (linear in the
/// history): `Some(why)` when the facts surely fail —
///
/// - two transactions that both write `x` read `x` locked from one writer `w` (each locked
///   reader needs the other, a writer of `x` that reads `w` and so is `co`-after `w`, to be
///   `co`-after itself: each would come after the other);
/// - a read of `x` reads a writer `c` forced before a writer `u` of `x` in a session that ended
///   before the reader's began (`c` is the initial state, earlier in `u`'s session, or in a
///   session that ended before `u`'s began): every level with the connection order puts `u`
///   `co`-before the writer read, and `c` is `co`-before `u`.
pub(crate) fn facts_surely_fail(h: &History) -> Option<String> {
    if !has_facts(h) {
        return None;
    }
    // Locked reads by writers of the key: (key, writer read, reader), sorted.
    let mut locked: Vec<(u32, TxnId, TxnId)> = Vec::new();
    for &o in h.locked_reads() {
        let t = h.op(o).txn;
        let Some(w) = h.writer_txn(o) else { continue };
        let k = h.op(o).key;
        if w != t && h.txn(t).is_committed() && h.keys_written(t).contains(&k) {
            locked.push((k, w, t));
        }
    }
    locked.sort_unstable();
    locked.dedup();
    if let Some(pair) = locked
        .windows(2)
        .find(|p| p[0].0 == p[1].0 && p[0].1 == p[1].1)
    {
        return Some(format!(
            "{} and {} both read {} locked from {} and both write it",
            h.txn_label(pair[0].2),
            h.txn_label(pair[1].2),
            h.key_name(pair[0].0),
            h.txn_label(pair[0].1)
        ));
    }
    if h.sessions_after().is_empty() {
        return None;
    }
    let sessions = h.sessions().len();
    let closure = after_closure(h);
    let after = |e: SessionId, l: SessionId| closure[e as usize * sessions + l as usize];
    // Earlier sessions (those with a later one): per key, each one's last committed writer.
    let mut last_writers: Vec<(u32, SessionId, TxnId)> = Vec::new();
    for &(e, _) in h.sessions_after() {
        if last_writers.last().is_some_and(|&(_, s, _)| s == e) {
            continue;
        }
        for t in h.sessions()[e as usize].txns() {
            if h.txn(t).is_committed() {
                for &k in h.keys_written(t) {
                    last_writers.push((k, e, t));
                }
            }
        }
    }
    last_writers.sort_unstable();
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let l = h.txn(t).session;
        for o in h.txn(t).ops() {
            let op = h.op(o);
            let Some(c) = h.writer_txn(o).filter(|&c| c != t) else {
                continue;
            };
            if op.kind != OpKind::Read {
                continue;
            }
            let start = last_writers.partition_point(|&(k, _, _)| k < op.key);
            let end = last_writers.partition_point(|&(k, _, _)| k <= op.key);
            // Per session the last entry is its last writer (sorted by transaction id).
            for (i, &(_, e, u)) in last_writers[start..end].iter().enumerate() {
                let is_last = last_writers
                    .get(start + i + 1)
                    .map_or(true, |&(k, e2, _)| k != op.key || e2 != e);
                if !is_last || u == c || !after(e, l) {
                    continue;
                }
                let forced = c == INITIAL_TXN
                    || (h.txn(c).session == e && c < u)
                    || after(h.txn(c).session, e);
                if forced {
                    return Some(format!(
                        "{} reads {} from {}, but {} wrote it later in a connection that \
                         closed before {}'s opened",
                        h.txn_label(t),
                        h.key_name(op.key),
                        h.txn_label(c),
                        h.txn_label(u),
                        h.txn_label(t)
                    ));
                }
            }
        }
    }
    None
}
