//! A schedule that makes a database produce a predicted history: per session, the statements
//! of its transactions in order, and one global order of all statements in which each waits
//! for the statement before it (barriers), such that the database at the target isolation
//! level gives every read the writer the prediction says. Rules (PostgreSQL's documentation
//! §13.2, digested in notes/isolationtester.md §6; the same for any database that implements
//! the levels this way):
//!
//! - **No dirty reads.** A read sees only committed versions, or its own transaction's write.
//! - **READ COMMITTED**: each statement sees the last version committed before it began; so a
//!   read of `x` from `W` runs after `W`'s COMMIT and before the COMMIT of any later writer of
//!   `x`.
//! - **REPEATABLE READ** (snapshot isolation): the snapshot is taken at the transaction's
//!   *first statement*; every read sees the last version committed before then. A write of a
//!   row whose newer version committed after the snapshot fails (first updater wins), so two
//!   transactions that both write a row cannot overlap and both commit.
//! - **Locks**: a write of a row another open transaction wrote waits for it to end. Waiting
//!   is not part of a schedule here: a schedule never issues such a write (every statement
//!   runs as soon as its turn comes, so the order alone fixes what it sees — deterministic).
//!   At read committed an update that waited re-reads the row; avoiding the wait keeps the
//!   value the transaction computed from its earlier read (a lost update needs exactly that).
//! - **SERIALIZABLE** (SSI) commits only serializable executions: no schedule exists for an
//!   unserializable prediction.
//!
//! Aborted transactions of the prediction run too (their reads are unconstrained) and end with
//! ROLLBACK. The search is a depth-first search over the next statement of each session,
//! remembering dead states (positions, commit order, snapshots); when it fails, the reason is
//! said in terms of the transactions: a structural conflict when there is one (two writers of
//! a row that must overlap at repeatable read), else where the furthest attempt got stuck.

use std::fmt::Write as _;

use rustc_hash::FxHashSet;

use crate::history::{History, KeyId, OpId, OpKind, TxnId, INITIAL_TXN};
use crate::store::Isolation;

/// What a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// The transaction's operation at this index (0-based, program order): a read or write
    /// statement. The first one fixes the snapshot at repeatable read.
    Op(u32),
    /// COMMIT (or ROLLBACK for a transaction the prediction has aborted).
    End,
}

/// One statement of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Step {
    /// Its transaction (an id of the scheduled history).
    pub txn: TxnId,
    /// What it does.
    pub kind: StepKind,
}

/// A schedule: every statement of every transaction, in the one order that gives each read
/// its predicted writer at `isolation`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Schedule {
    /// The isolation level it is for.
    pub isolation: Isolation,
    /// The statements in global order; each waits for the one before it.
    pub steps: Vec<Step>,
}

/// Why no schedule exists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NoSchedule {
    /// The reason, in terms of the transactions.
    pub reason: String,
    /// Whether the search gave up (a limit) rather than proving none exists.
    pub gave_up: bool,
}

/// States the search may visit before it gives up.
pub const SEARCH_LIMIT: usize = 2_000_000;

/// A schedule for `h` at `isolation`, or why there is none (see the module documentation).
pub fn schedule(h: &History, isolation: Isolation) -> Result<Schedule, NoSchedule> {
    if isolation == Isolation::Serializable {
        return Err(NoSchedule {
            reason: "at SERIALIZABLE PostgreSQL commits only serializable executions \
                     (serializable snapshot isolation aborts one transaction of every dangerous \
                     structure), and the prediction is unserializable"
                .to_string(),
            gave_up: false,
        });
    }
    if let Some(reason) = structural_conflict(h, isolation) {
        return Err(NoSchedule {
            reason,
            gave_up: false,
        });
    }
    run_search(h, isolation, None, None)
}

/// A schedule for `h` at `isolation` whose steps are whole statements: the consecutive
/// operations of a transaction that `statement_of` (per operation of `h`) gives one number run
/// as one step, as a database runs one SQL statement (an application's recorded statements,
/// `reproduce/app.rs`). The same rules as [`schedule`], checked for every operation of a step.
pub fn schedule_statements(
    h: &History,
    isolation: Isolation,
    statement_of: &[u32],
) -> Result<Schedule, NoSchedule> {
    if isolation == Isolation::Serializable {
        return schedule(h, isolation);
    }
    if let Some(reason) = structural_conflict(h, isolation) {
        return Err(NoSchedule {
            reason,
            gave_up: false,
        });
    }
    run_search(h, isolation, None, Some(statement_of))
}

/// A schedule for `h` at `isolation` in which only the reads in `needed` must get their
/// predicted writers (the anomaly's reads); every other read takes what the database gives.
pub fn schedule_reads(
    h: &History,
    isolation: Isolation,
    needed: &FxHashSet<OpId>,
) -> Result<Schedule, NoSchedule> {
    if isolation == Isolation::Serializable {
        return schedule(h, isolation);
    }
    run_search(h, isolation, Some(needed), None)
}

fn run_search(
    h: &History,
    isolation: Isolation,
    needed: Option<&FxHashSet<OpId>>,
    statement_of: Option<&[u32]>,
) -> Result<Schedule, NoSchedule> {
    let mut search = Search::new(h, isolation, needed, statement_of);
    let mut state = search.initial_state();
    if search.dfs(&mut state) {
        return Ok(Schedule {
            isolation,
            steps: state.done,
        });
    }
    let gave_up = search.visited >= SEARCH_LIMIT;
    let reason = if gave_up {
        format!(
            "the search for a schedule gave up after {} states",
            search.visited
        )
    } else {
        search.dead_end_reason()
    };
    Err(NoSchedule { reason, gave_up })
}

/// Two committed writers of one key that must overlap at repeatable read: each misses a
/// write of the other, so neither can commit before the other's first statement; but then
/// the second to write the shared key fails (first updater wins).
fn structural_conflict(h: &History, isolation: Isolation) -> Option<String> {
    if isolation != Isolation::RepeatableRead {
        return None;
    }
    let committed: Vec<TxnId> = h.committed_txns().filter(|&t| t != INITIAL_TXN).collect();
    for (i, &t) in committed.iter().enumerate() {
        for &u in &committed[i + 1..] {
            let shared = h
                .keys_written(t)
                .iter()
                .find(|k| h.keys_written(u).contains(k));
            let Some(&shared) = shared else { continue };
            let (Some(t_miss), Some(u_miss)) = (misses(h, t, u), misses(h, u, t)) else {
                continue;
            };
            return Some(format!(
                "{t_label} and {u_label} both write {x}, so at REPEATABLE READ one must commit \
                 before the other's first statement (the second writer of {x} would otherwise \
                 fail: first updater wins); but {t_label} must miss {u_label}'s write of {a} \
                 and {u_label} must miss {t_label}'s write of {b}, so neither can come first",
                t_label = h.txn_label(t),
                u_label = h.txn_label(u),
                x = h.key_name(shared),
                a = h.key_name(t_miss),
                b = h.key_name(u_miss),
            ));
        }
    }
    None
}

/// A key `u` writes that `t` must read from a version older than `u`'s: from the initial
/// state, or from a transaction of `u`'s session before `u`. `None` when there is none.
fn misses(h: &History, t: TxnId, u: TxnId) -> Option<KeyId> {
    let written = h.keys_written(u);
    for o in h.txn(t).ops() {
        let op = h.op(o);
        if op.kind != OpKind::Read || !written.contains(&op.key) || h.is_internal_read(o) {
            continue;
        }
        match h.writer_txn(o) {
            Some(INITIAL_TXN) => return Some(op.key),
            Some(w) if w != u && h.so_before(w, u) => return Some(op.key),
            _ => {}
        }
    }
    None
}

/// A search state as far as the rest of the search goes.
type MemoKey = (Vec<usize>, Vec<TxnId>, Vec<TxnId>);

/// The search's mutable state.
#[derive(Debug, Clone)]
struct State {
    /// Per session: the position in its step list.
    pos: Vec<usize>,
    /// The steps done, in order.
    done: Vec<Step>,
    /// Committed transactions in commit order.
    commits: Vec<TxnId>,
    /// Per transaction: the number of commits before its first statement (its snapshot).
    snapshot: Vec<Option<usize>>,
}

struct Search<'h> {
    h: &'h History,
    isolation: Isolation,
    /// The reads that must get their writers (`None`: all).
    needed: Option<&'h FxHashSet<OpId>>,
    /// Per operation: its statement (`None`: every operation is a step of its own).
    statement_of: Option<&'h [u32]>,
    /// Per session: its steps in program order.
    session_steps: Vec<Vec<Step>>,
    /// Dead states: positions, commit order, snapshots of the sessions' current transactions.
    dead: FxHashSet<MemoKey>,
    visited: usize,
    /// The furthest dead end: the steps done and, per blocked session, why.
    furthest: Option<(Vec<Step>, Vec<String>)>,
}

impl<'h> Search<'h> {
    fn new(
        h: &'h History,
        isolation: Isolation,
        needed: Option<&'h FxHashSet<OpId>>,
        statement_of: Option<&'h [u32]>,
    ) -> Search<'h> {
        // An operation begins a step unless it continues its predecessor's statement.
        let begins_step = move |o: OpId| {
            statement_of.map_or(true, |st| {
                o == 0 || st.get(o as usize) != st.get(o as usize - 1)
            })
        };
        let session_steps = h
            .sessions()
            .iter()
            .map(|s| {
                s.txns()
                    .flat_map(|t| {
                        let start = h.txn(t).ops().start;
                        let n = h.txn(t).ops().len() as u32;
                        (0..n)
                            .filter(move |&i| i == 0 || begins_step(start + i))
                            .map(move |i| Step {
                                txn: t,
                                kind: StepKind::Op(i),
                            })
                            .chain(std::iter::once(Step {
                                txn: t,
                                kind: StepKind::End,
                            }))
                    })
                    .collect()
            })
            .collect();
        Search {
            h,
            isolation,
            needed,
            statement_of,
            session_steps,
            dead: FxHashSet::default(),
            visited: 0,
            furthest: None,
        }
    }

    fn initial_state(&self) -> State {
        State {
            pos: vec![0; self.session_steps.len()],
            done: Vec::new(),
            commits: Vec::new(),
            snapshot: vec![None; self.h.txn_count()],
        }
    }

    /// Whether `t` has begun (its first statement ran) and not ended.
    fn is_open(&self, state: &State, t: TxnId) -> bool {
        let tx = self.h.txn(t);
        let steps = &self.session_steps[tx.session as usize];
        match steps.get(state.pos[tx.session as usize]) {
            Some(step) if step.txn == t => step.kind != StepKind::Op(0),
            _ => false,
        }
    }

    /// The last transaction that committed a write of `key` among the first `upto` commits
    /// (the initial state when none).
    fn visible(&self, state: &State, key: KeyId, upto: usize) -> TxnId {
        state.commits[..upto]
            .iter()
            .rev()
            .find(|&&w| self.h.keys_written(w).contains(&key))
            .copied()
            .unwrap_or(INITIAL_TXN)
    }

    /// The operations of `step`: one, or its statement's (consecutive in its transaction).
    fn step_ops(&self, step: Step) -> std::ops::Range<OpId> {
        let ops = self.h.txn(step.txn).ops();
        let StepKind::Op(i) = step.kind else {
            return ops.end..ops.end;
        };
        let first = ops.start + i;
        let Some(st) = self.statement_of else {
            return first..first + 1;
        };
        let mut end = first + 1;
        while end < ops.end && st.get(end as usize) == st.get(first as usize) {
            end += 1;
        }
        first..end
    }

    /// Why `step` cannot run now (`None`: it can): the first of its operations that cannot.
    fn blocked(&self, state: &State, step: Step) -> Option<String> {
        let start = self.h.txn(step.txn).ops().start;
        self.step_ops(step)
            .find_map(|o| self.blocked_op(state, step.txn, o - start))
    }

    /// Why operation `i` of transaction `t` cannot run now (`None`: it can).
    fn blocked_op(&self, state: &State, t: TxnId, i: u32) -> Option<String> {
        let h = self.h;
        let o = h.txn(t).ops().start + i;
        let op = h.op(o);
        let key = h.key_name(op.key);
        let label = h.txn_label(t);
        let snapshot = if self.isolation == Isolation::RepeatableRead {
            state.snapshot[t as usize].unwrap_or(state.commits.len())
        } else {
            state.commits.len()
        };
        match op.kind {
            OpKind::Read => {
                // An aborted transaction's reads are free, unless re-planning asked for one
                // (`needed`; src/reproduce/replan.rs).
                let asked = self.needed.is_some_and(|n| n.contains(&o));
                if (!h.txn(t).is_committed() && !asked)
                    || h.is_internal_read(o)
                    || self.needed.is_some_and(|n| !n.contains(&o))
                {
                    return None;
                }
                let wants = h.writer_txn(o).unwrap_or(INITIAL_TXN);
                // Its own earlier write shadows every other version.
                let own_earlier = (h.txn(t).ops().start..o)
                    .any(|p| h.op(p).kind == OpKind::Write && h.op(p).key == op.key);
                if own_earlier {
                    return Some(format!(
                        "{label} reads {key} from {}, but it wrote {key} itself before",
                        h.txn_label(wants)
                    ));
                }
                let sees = self.visible(state, op.key, snapshot);
                if sees == wants {
                    return None;
                }
                let when = if self.isolation == Isolation::RepeatableRead
                    && state.snapshot[t as usize].is_some()
                {
                    format!(
                        "its snapshot (fixed at its first statement) holds {}'s",
                        h.txn_label(sees)
                    )
                } else {
                    format!("it would see {}'s", h.txn_label(sees))
                };
                let wanted_state = if wants == INITIAL_TXN || state.commits.contains(&wants) {
                    String::new()
                } else {
                    format!(" ({} has not committed yet)", h.txn_label(wants))
                };
                Some(format!(
                    "{label} must read {key} from {}{wanted_state}, but {when} version",
                    h.txn_label(wants)
                ))
            }
            OpKind::Write => {
                // Another open transaction wrote the row: the write would wait.
                for &w in h.writers_of(op.key) {
                    if w != t
                        && w != INITIAL_TXN
                        && self.is_open(state, w)
                        && self.wrote_already(state, w, op.key)
                    {
                        return Some(format!(
                            "{label}'s write of {key} would wait for {}, which wrote {key} and has not ended",
                            h.txn_label(w)
                        ));
                    }
                }
                if self.isolation == Isolation::RepeatableRead && h.txn(t).is_committed() {
                    let snap = state.snapshot[t as usize].unwrap_or(state.commits.len());
                    if let Some(&w) = state.commits[snap..]
                        .iter()
                        .find(|&&w| w != t && h.keys_written(w).contains(&op.key))
                    {
                        return Some(format!(
                            "{label}'s write of {key} would fail: {} wrote {key} and committed after {label}'s first statement (first updater wins)",
                            h.txn_label(w)
                        ));
                    }
                }
                None
            }
        }
    }

    /// Whether open transaction `w` has already run a write of `key`.
    fn wrote_already(&self, state: &State, w: TxnId, key: KeyId) -> bool {
        let tx = self.h.txn(w);
        let steps = &self.session_steps[tx.session as usize];
        let next = match steps[state.pos[tx.session as usize]].kind {
            StepKind::Op(i) => i,
            StepKind::End => tx.ops().len() as u32,
        };
        (tx.ops().start..tx.ops().start + next)
            .any(|o| self.h.op(o).kind == OpKind::Write && self.h.op(o).key == key)
    }

    /// What decides the rest of the search: the positions, the last committed writer of each
    /// key, and what each open transaction's snapshot shows (repeatable read).
    fn memo_key(&self, state: &State) -> MemoKey {
        let keys = self.h.key_count() as u32;
        let latest = (0..keys)
            .map(|k| self.visible(state, k, state.commits.len()))
            .collect();
        let mut snapshots = Vec::new();
        if self.isolation == Isolation::RepeatableRead {
            for (s, &p) in state.pos.iter().enumerate() {
                let Some(step) = self.session_steps[s].get(p) else {
                    continue;
                };
                if let Some(upto) = state.snapshot[step.txn as usize] {
                    snapshots.extend((0..keys).map(|k| self.visible(state, k, upto)));
                }
                snapshots.push(u32::MAX);
            }
        }
        (state.pos.clone(), latest, snapshots)
    }

    /// Whether `step` can run now without narrowing the search: a read that sees its writer
    /// now (it changes nothing, and waiting can only change what it sees) — not the first
    /// statement at repeatable read, which fixes the snapshot — or a write of a key no other
    /// unfinished transaction writes.
    fn eager(&self, state: &State, step: Step) -> bool {
        let StepKind::Op(i) = step.kind else {
            return false;
        };
        if i == 0 && self.isolation == Isolation::RepeatableRead {
            return false;
        }
        if self.blocked(state, step).is_some() {
            return false;
        }
        self.step_ops(step).all(|o| {
            let op = self.h.op(o);
            match op.kind {
                OpKind::Read => true,
                OpKind::Write => self
                    .h
                    .writers_of(op.key)
                    .iter()
                    .all(|&w| w == step.txn || w == INITIAL_TXN || self.ended(state, w)),
            }
        })
    }

    /// Whether `t`'s end has run.
    fn ended(&self, state: &State, t: TxnId) -> bool {
        let tx = self.h.txn(t);
        let s = tx.session as usize;
        let steps = &self.session_steps[s];
        state.pos[s] >= steps.len() || steps[state.pos[s]].txn > t
    }

    fn apply(&self, state: &mut State, s: usize, step: Step) {
        state.pos[s] += 1;
        state.done.push(step);
        match step.kind {
            StepKind::Op(0) => state.snapshot[step.txn as usize] = Some(state.commits.len()),
            StepKind::Op(_) => {}
            StepKind::End => {
                if self.h.txn(step.txn).is_committed() {
                    state.commits.push(step.txn);
                }
            }
        }
    }

    fn undo(&self, state: &mut State, s: usize, step: Step) {
        state.pos[s] -= 1;
        state.done.pop();
        match step.kind {
            StepKind::Op(0) => state.snapshot[step.txn as usize] = None,
            StepKind::Op(_) => {}
            StepKind::End => {
                if self.h.txn(step.txn).is_committed() {
                    state.commits.pop();
                }
            }
        }
    }

    fn dfs(&mut self, state: &mut State) -> bool {
        // Steps that cannot narrow the search run at once.
        let mut eager = Vec::new();
        loop {
            let next = (0..self.session_steps.len()).find_map(|s| {
                let &step = self.session_steps[s].get(state.pos[s])?;
                self.eager(state, step).then_some((s, step))
            });
            let Some((s, step)) = next else { break };
            self.apply(state, s, step);
            eager.push((s, step));
        }
        if self.branch(state) {
            return true;
        }
        for &(s, step) in eager.iter().rev() {
            self.undo(state, s, step);
        }
        false
    }

    fn branch(&mut self, state: &mut State) -> bool {
        if state
            .pos
            .iter()
            .zip(&self.session_steps)
            .all(|(&p, steps)| p == steps.len())
        {
            return true;
        }
        if self.visited >= SEARCH_LIMIT {
            return false;
        }
        self.visited += 1;
        let key = self.memo_key(state);
        if self.dead.contains(&key) {
            return false;
        }
        // Candidates: writes, then first statements, then commits; sessions in order.
        let mut candidates = Vec::new();
        let mut reasons = Vec::new();
        for s in 0..self.session_steps.len() {
            let Some(&step) = self.session_steps[s].get(state.pos[s]) else {
                continue;
            };
            match self.blocked(state, step) {
                None => {
                    let rank = match step.kind {
                        StepKind::Op(0) => 1,
                        StepKind::Op(_) => 0,
                        StepKind::End => 2,
                    };
                    candidates.push((rank, s, step));
                }
                Some(r) => reasons.push(r),
            }
        }
        candidates.sort_by_key(|&(rank, s, _)| (rank, s));
        for (_, s, step) in candidates {
            self.apply(state, s, step);
            if self.dfs(state) {
                return true;
            }
            self.undo(state, s, step);
        }
        if self
            .furthest
            .as_ref()
            .map_or(true, |(done, _)| state.done.len() > done.len())
        {
            self.furthest = Some((state.done.clone(), reasons));
        }
        self.dead.insert(key);
        false
    }

    fn dead_end_reason(&self) -> String {
        let h = self.h;
        let Some((done, reasons)) = &self.furthest else {
            return "no schedule exists".to_string();
        };
        let mut out =
            String::from("no order of the statements gives every read its predicted writer");
        let committed: Vec<String> = done
            .iter()
            .filter(|s| s.kind == StepKind::End && h.txn(s.txn).is_committed())
            .map(|s| h.txn_label(s.txn))
            .collect();
        let _ = write!(
            out,
            "; the furthest attempt ran {} of the statements{}, then no session could go on: {}",
            done.len(),
            if committed.is_empty() {
                String::new()
            } else {
                format!(" (committing {})", committed.join(", "))
            },
            reasons.join("; ")
        );
        out
    }
}

impl Schedule {
    /// The steps of each session, in order, with their position in the global order.
    pub fn by_session(&self, h: &History) -> Vec<Vec<(usize, Step)>> {
        let mut out = vec![Vec::new(); h.sessions().len()];
        for (i, &step) in self.steps.iter().enumerate() {
            out[h.txn(step.txn).session as usize].push((i, step));
        }
        out
    }

    /// The global step `i` waits for: the latest earlier step of another session (`None`:
    /// no other session's step comes before it since its own previous step).
    pub fn waits_for(&self, h: &History, i: usize) -> Option<usize> {
        let session = h.txn(self.steps[i].txn).session;
        let prev = (0..i)
            .rev()
            .find(|&j| h.txn(self.steps[j].txn).session == session);
        let j = i.checked_sub(1)?;
        (Some(j) != prev).then_some(j)
    }

    /// A statement in words: `T1.2 read CHECKING.bal[custid=1] (sees T2.1)`.
    pub fn step_text(&self, h: &History, step: Step) -> String {
        let label = h.txn_label(step.txn);
        let tx = h.txn(step.txn);
        match step.kind {
            StepKind::Op(i) => {
                let o = tx.ops().start + i;
                let op = h.op(o);
                let key = h.key_name(op.key);
                let first = if i == 0 && self.isolation == Isolation::RepeatableRead {
                    " [first statement: fixes the snapshot]"
                } else {
                    ""
                };
                match op.kind {
                    OpKind::Read if h.is_internal_read(o) => {
                        format!("{label} read {key} (its own write){first}")
                    }
                    OpKind::Read => format!(
                        "{label} read {key} (sees {}){first}",
                        h.txn_label(h.writer_txn(o).unwrap_or(INITIAL_TXN))
                    ),
                    OpKind::Write => format!("{label} write {key}{first}"),
                }
            }
            StepKind::End if tx.is_committed() => format!("{label} COMMIT"),
            StepKind::End => format!("{label} ROLLBACK"),
        }
    }

    /// The schedule as text: per session its statements in order, each with the step it
    /// waits for.
    pub fn to_text(&self, h: &History) -> String {
        let mut out = format!(
            "Schedule at {} ({} statements; run each only after the one it waits for has completed):\n",
            self.isolation.sql(),
            self.steps.len()
        );
        for (s, steps) in self.by_session(h).iter().enumerate() {
            if steps.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{}:", h.session_label(s as u32));
            for &(i, step) in steps {
                let wait = match self.waits_for(h, i) {
                    Some(j) => format!("   — waits for step {}", j + 1),
                    None => String::new(),
                };
                let _ = writeln!(out, "  {:>3}. {}{wait}", i + 1, self.step_text(h, step));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{BuilderTxn, HistoryBuilder, ReadFrom};

    /// Two sessions each read both keys from the initial state and write one: write skew
    /// (`skew = true`, different keys) or lost update (both write `x`).
    fn two_writers(both_write_x: bool) -> History {
        let mut b = HistoryBuilder::new("t");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(Some(1));
        let s2 = b.session(Some(2));
        let t1 = b.begin(s1, None);
        b.read(t1, x, None, ReadFrom::Initial, 0);
        b.read(t1, y, None, ReadFrom::Initial, 0);
        b.write(t1, x, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Initial, 0);
        b.read(t2, y, None, ReadFrom::Initial, 0);
        b.write(t2, if both_write_x { x } else { y }, None, 0);
        let _ = BuilderTxn::INITIAL;
        b.build().unwrap()
    }

    /// Replays `s` against the rules (an independent simulation): every read sees its writer.
    fn simulate(h: &History, s: &Schedule) {
        let mut commits: Vec<TxnId> = Vec::new();
        let mut snap = vec![0usize; h.txn_count()];
        for step in &s.steps {
            match step.kind {
                StepKind::Op(i) => {
                    if i == 0 {
                        snap[step.txn as usize] = commits.len();
                    }
                    let o = h.txn(step.txn).ops().start + i;
                    if h.op(o).kind == OpKind::Read && !h.is_internal_read(o) {
                        let upto = if s.isolation == Isolation::RepeatableRead {
                            snap[step.txn as usize]
                        } else {
                            commits.len()
                        };
                        let sees = commits[..upto]
                            .iter()
                            .rev()
                            .find(|&&w| h.keys_written(w).contains(&h.op(o).key))
                            .copied()
                            .unwrap_or(INITIAL_TXN);
                        assert_eq!(Some(sees), h.writer_txn(o), "{}", s.to_text(h));
                    }
                }
                StepKind::End => commits.push(step.txn),
            }
        }
    }

    #[test]
    fn write_skew_has_a_schedule_at_repeatable_read() {
        let h = two_writers(false);
        let s = schedule(&h, Isolation::RepeatableRead).unwrap();
        simulate(&h, &s);
        assert_eq!(s.steps.len(), 8);
        // Both first statements run before either commit.
        let first_commit = s
            .steps
            .iter()
            .position(|s| s.kind == StepKind::End)
            .unwrap();
        assert!(
            s.steps[..first_commit]
                .iter()
                .filter(|s| s.kind == StepKind::Op(0))
                .count()
                == 2
        );
        let text = s.to_text(&h);
        assert!(text.contains("fixes the snapshot"), "{text}");
        assert!(text.contains("waits for step"), "{text}");
    }

    #[test]
    fn lost_update_has_a_schedule_at_read_committed_only() {
        let h = two_writers(true);
        let s = schedule(&h, Isolation::ReadCommitted).unwrap();
        simulate(&h, &s);
        let no = schedule(&h, Isolation::RepeatableRead).unwrap_err();
        assert!(!no.gave_up);
        assert!(
            no.reason.contains("T1.1 and T2.1 both write x"),
            "{}",
            no.reason
        );
        assert!(no.reason.contains("first updater wins"), "{}", no.reason);
        let ser = schedule(&h, Isolation::Serializable).unwrap_err();
        assert!(ser.reason.contains("SERIALIZABLE"), "{}", ser.reason);
    }

    /// One SELECT sees one snapshot: reads of x from the initial state and of y from T1 (which
    /// writes both) can run as two statements at read committed, T1 committing between them,
    /// but not as one.
    #[test]
    fn a_statement_is_one_step() {
        let mut b = HistoryBuilder::new("t");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(Some(1));
        let s2 = b.session(Some(2));
        let t1 = b.begin(s1, None);
        b.write(t1, x, None, 0);
        b.write(t1, y, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Initial, 0);
        b.read(t2, y, None, ReadFrom::Txn(t1), 0);
        let h = b.build().unwrap();
        // Each operation a statement of its own, then T2's reads (or T1's writes) as one.
        let statements = |joined: u32| -> Vec<u32> {
            let mut st: Vec<u32> = (0..h.ops().len() as u32).collect();
            let ops = h.txn(joined).ops();
            for o in ops.clone() {
                st[o as usize] = ops.start;
            }
            st
        };
        let apart: Vec<u32> = (0..h.ops().len() as u32).collect();
        let two = schedule_statements(&h, Isolation::ReadCommitted, &apart).unwrap();
        simulate(&h, &two);
        assert_eq!(two.steps.len(), 6, "{}", two.to_text(&h));
        let no = schedule_statements(&h, Isolation::ReadCommitted, &statements(2)).unwrap_err();
        assert!(!no.gave_up);
        assert!(no.reason.contains("T2.1 must read"), "{}", no.reason);
        let one = schedule_statements(&h, Isolation::ReadCommitted, &statements(1)).unwrap();
        simulate(&h, &one);
        assert_eq!(one.steps.len(), 5, "{}", one.to_text(&h));
    }

    #[test]
    fn a_fractured_read_has_no_schedule_at_read_committed() {
        // T1 writes x and y; T2 reads x from T1 and then y from the initial state: at read
        // committed T2's second read starts after T1 committed, so it sees T1's y.
        let mut b = HistoryBuilder::new("t");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(Some(1));
        let s2 = b.session(Some(2));
        let t1 = b.begin(s1, None);
        b.write(t1, x, None, 0);
        b.write(t1, y, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Txn(t1), 0);
        b.read(t2, y, None, ReadFrom::Initial, 0);
        let h = b.build().unwrap();
        let no = schedule(&h, Isolation::ReadCommitted).unwrap_err();
        assert!(!no.gave_up);
        assert!(
            no.reason.contains("T2.1 must read y from initial state"),
            "{}",
            no.reason
        );
    }
}
