//! The prediction space of an observed history: which transactions, reads and writes can take
//! part in a prediction, which writers each read may choose, and where each session's
//! prediction boundary may fall (IsoPredict PLDI'24 §4.1, §4.5 and appendix B.1).
//!
//! Model (IsoPredict §2.1): aborted transactions are not part of the execution; only the last
//! write of a transaction to a key is visible to others; a read of the transaction's own
//! write is not an event; the initial transaction t0 writes every key and precedes all.
//!
//! Pruning, all sound (it removes only what can never be related):
//! - A key matters only if some committed transaction other than t0 writes it and some
//!   committed transaction reads it from another transaction. Reads of other keys can only
//!   read t0 (implied by session order) and create no arbitration or anti-dependency.
//! - Transactions with no read or write of a key that matters are left out: they relate to
//!   others only by session order, which is transitive, so no cycle and no constraint of
//!   any level or of serializability passes through them.
//! - A read may choose only committed writers of its key other than its own transaction and
//!   not later in its own session (that would make session order and write–read order cyclic).
//! - Snapshot isolation only ([`Space::for_snapshots`]): a key two committed
//!   transactions other than t0 write also matters, read or not — SI forbids two concurrent
//!   transactions to write it (Biswas & Enea's Conflict axiom), so its writers are constrained.
//! - Reads are grouped by (transaction, key). Under causal and read atomic every read of a
//!   group must read the same writer (Biswas & Enea Lemma 2.3: otherwise the level's own
//!   arbitration is cyclic), so a group is one choice; under read committed each read is its
//!   own choice.
//!
//! Boundary (appendix B): per session an integer `b` — in strict mode the index of the
//! session's boundary read among its external reads, in relaxed mode the index of the
//! boundary transaction among its committed transactions; the maximum value means "no
//! boundary" (∞). A choice unit is *included* when `inc ≤ b` and *fixed* to its observed
//! writer when `fix ≤ b`; a write is included when `thr ≤ b`. Only the thresholds that some
//! unit or write uses matter, so `b` is encoded by one Boolean `b ≥ c` per threshold `c`.

use std::ops::Range;

use rustc_hash::FxHashMap;

use crate::history::{History, KeyId, OpId, OpKind, SessionId, TxnId, INITIAL_TXN};

/// The keys that matter (see the module documentation), as an index (key → its position
/// among them, [`NONE`] for the others) and ascending: a committed transaction other than t0
/// writes the key and one reads it from another transaction, or (`write_conflicts`, SI) two
/// committed transactions other than t0 write it.
fn keys_that_matter(h: &History, write_conflicts: bool) -> (Vec<u32>, Vec<KeyId>) {
    let n_keys = h.key_count();
    let mut written = vec![false; n_keys];
    let mut read = vec![false; n_keys];
    let mut last_writer = vec![INITIAL_TXN; n_keys];
    let mut conflicted = vec![false; n_keys];
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        for o in h.txn(t).ops() {
            let op = h.op(o);
            match op.kind {
                OpKind::Write => {
                    let k = op.key as usize;
                    written[k] = true;
                    if last_writer[k] != INITIAL_TXN && last_writer[k] != t {
                        conflicted[k] = true;
                    }
                    last_writer[k] = t;
                }
                OpKind::Read if h.writer_txn(o) != Some(op.txn) => read[op.key as usize] = true,
                OpKind::Read => {}
            }
        }
    }
    let mut key_index = vec![NONE; n_keys];
    let mut keys = Vec::new();
    for k in 0..n_keys {
        if (written[k] && read[k]) || (write_conflicts && conflicted[k]) {
            key_index[k] = keys.len() as u32;
            keys.push(k as KeyId);
        }
    }
    (key_index, keys)
}

/// "No such node".
pub(crate) const NONE: u32 = u32::MAX;

/// Which prediction boundary (IsoPredict Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoundaryKind {
    /// Only the boundary read may change writer; events after it are excluded.
    Strict,
    /// Every read of the boundary transaction may change writer; later transactions are
    /// excluded.
    Relaxed,
}

/// The reads of one transaction of one key, with the writers they may choose.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// The reading node.
    pub node: u32,
    /// The key.
    pub key: KeyId,
    /// Candidate writer nodes, ascending, in [`Space::group_cands`].
    pub cands: Range<u32>,
    /// Its choice units, in program order, as a range of [`Space::group_units`].
    pub units: Range<u32>,
}

/// One read choice: a whole group (causal, read atomic) or one read (read committed).
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    /// Its group.
    pub group: u32,
    /// The observed writer, as an index into the group's candidates.
    pub obs: u32,
    /// The read operations it stands for, in program order, in [`Space::unit_ops`].
    pub ops: Range<u32>,
    /// Included when the session boundary is at least this.
    pub inc: u32,
    /// Fixed to the observed writer when the session boundary is at least this.
    pub fix: u32,
}

/// A transaction that writes a key that matters, and when its write is inside the boundary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyWriter {
    /// The writing node.
    pub node: u32,
    /// Its write of the key is included when its session's boundary is at least this (0 for
    /// t0). It is the threshold of the transaction's *first* write of the key: a transaction
    /// writes the key inside the boundary as soon as any of its writes is inside.
    pub thr: u32,
}

/// One arbitration instance (see [`Space::arbitrations`]): `t3` may read the key of `slot`
/// from `t2` (candidate `cand`, whose literal is `wrk[cand]`), and `t1` (writer `w` of the key)
/// also writes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arbitration {
    /// Index into [`Space::keys`].
    pub slot: usize,
    /// Index into [`Space::group_cands`].
    pub cand: u32,
    /// Index into the key's [`Space::key_writers`].
    pub w: usize,
    /// The other writer.
    pub t1: u32,
    /// The writer read from.
    pub t2: u32,
    /// The reader.
    pub t3: u32,
}

/// One session's boundary domain.
#[derive(Debug, Clone)]
pub(crate) struct SessionSpace {
    /// The session.
    pub session: SessionId,
    /// Its committed transactions, in order.
    pub txns: Vec<TxnId>,
    /// Strict mode: its external reads (of committed transactions), in order; boundary value
    /// `j` is `reads[j]`. Empty in relaxed mode.
    pub reads: Vec<OpId>,
    /// The boundary value meaning ∞ (strict: `reads.len()`, relaxed: `txns.len()`).
    pub max: u32,
    /// Which values `0..=max` the boundary may take.
    pub allowed: Vec<bool>,
    /// The thresholds some unit or write uses, ascending, all in `1..=max`.
    pub thresholds: Vec<u32>,
}

/// A problem with the observed history that makes it no valid history at the level (the
/// level check should have reported it first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpaceError {
    pub op: OpId,
    pub message: String,
}

/// The prediction space.
#[derive(Debug)]
pub(crate) struct Space<'h> {
    pub history: &'h History,
    pub boundary: BoundaryKind,
    /// Node → transaction; node 0 is t0. Ascending in transaction id, so a session's nodes are
    /// contiguous and session order between nodes is a comparison.
    pub node_txn: Vec<TxnId>,
    /// Node → index into [`Space::sessions`] ([`NONE`] for t0).
    pub node_session: Vec<u32>,
    /// Node → the previous node of its session (0 = t0 for the first).
    pub node_pred: Vec<u32>,
    /// Node → the boundary value from which on it is in the prediction (its first event's
    /// position); a registered threshold only in [`Space::for_snapshots`].
    pub node_start: Vec<u32>,
    /// Node → its choice units (contiguous, program order).
    pub node_units: Vec<Range<u32>>,
    pub groups: Vec<Group>,
    pub group_cands: Vec<u32>,
    /// Groups' units (see [`Group::units`]).
    pub group_units: Vec<u32>,
    pub units: Vec<Unit>,
    pub unit_ops: Vec<OpId>,
    /// Keys that matter, ascending.
    pub keys: Vec<KeyId>,
    /// Per key that matters (parallel to `keys`): its writers, ascending node, t0 first.
    pub key_writers: Vec<Vec<KeyWriter>>,
    /// Per key that matters (parallel to `keys`): the groups reading it.
    pub key_groups: Vec<Vec<u32>>,
    pub sessions: Vec<SessionSpace>,
}

/// Whether `o` reads from another transaction (an external read).
fn is_external(h: &History, o: OpId) -> bool {
    let op = h.op(o);
    op.kind == OpKind::Read && h.writer_txn(o) != Some(op.txn)
}

/// Step 2 of [`Space::build`]: the nodes, t0 and the committed transactions touching a key
/// that matters (`key_index` not [`NONE`]); returns transaction → node and node → transaction.
fn nodes(h: &History, key_index: &[u32]) -> (Vec<u32>, Vec<TxnId>) {
    let matters = |k: KeyId| key_index[k as usize] != NONE;
    let mut txn_node = vec![NONE; h.txn_count()];
    let mut node_txn = vec![INITIAL_TXN];
    txn_node[INITIAL_TXN as usize] = 0;
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let touches = h.txn(t).ops().any(|o| {
            let op = h.op(o);
            matters(op.key) && (op.kind == OpKind::Write || is_external(h, o))
        });
        if touches {
            txn_node[t as usize] = node_txn.len() as u32;
            node_txn.push(t);
        }
    }
    (txn_node, node_txn)
}

/// Step 3 of [`Space::build`], session by session: positions, writers and read choices.
struct SessionScan {
    sessions: Vec<SessionSpace>,
    node_session: Vec<u32>,
    node_pred: Vec<u32>,
    node_start: Vec<u32>,
    key_writers: Vec<Vec<KeyWriter>>,
    /// (node, key) → group, while building.
    group_of: FxHashMap<(u32, KeyId), u32>,
    groups: Vec<Group>,
    group_reads: Vec<Vec<OpId>>,
    /// Reads of keys that matter, in session order and program order: (group, op, inc).
    read_list: Vec<(u32, OpId, u32)>,
}

impl SessionScan {
    fn new(nodes: usize, keys: usize) -> SessionScan {
        SessionScan {
            sessions: Vec::new(),
            node_session: vec![NONE; nodes],
            node_pred: vec![0u32; nodes],
            node_start: vec![0u32; nodes],
            key_writers: (0..keys)
                .map(|_| vec![KeyWriter { node: 0, thr: 0 }])
                .collect(),
            group_of: FxHashMap::default(),
            groups: Vec::new(),
            group_reads: Vec::new(),
            read_list: Vec::new(),
        }
    }

    /// Session `s`: its committed transactions, their positions, writes and read choices.
    fn session(
        &mut self,
        h: &History,
        s: SessionId,
        boundary: BoundaryKind,
        key_index: &[u32],
        txn_node: &[u32],
    ) {
        let txns: Vec<TxnId> = h.sessions()[s as usize]
            .txns()
            .filter(|&t| h.txn(t).is_committed())
            .collect();
        let mut reads = Vec::new();
        let mut allowed = Vec::new();
        let mut last_node = 0u32;
        for (x, &t) in txns.iter().enumerate() {
            let node = txn_node[t as usize];
            if node != NONE {
                self.node_session[node as usize] = self.sessions.len() as u32;
                self.node_pred[node as usize] = last_node;
                self.node_start[node as usize] = match boundary {
                    BoundaryKind::Strict => reads.len() as u32,
                    BoundaryKind::Relaxed => x as u32,
                };
                last_node = node;
            }
            let has_read = self.txn(h, t, node, x, boundary, key_index, &mut reads, &mut allowed);
            if boundary == BoundaryKind::Relaxed {
                allowed.push(has_read);
            }
        }
        allowed.push(true); // ∞
        if super::locks::ends_before_another(h, s) {
            // A session others began after is kept whole (docs/prediction.md).
            let last = allowed.len() - 1;
            allowed[..last].fill(false);
        }
        let max = (allowed.len() - 1) as u32;
        self.sessions.push(SessionSpace {
            session: s,
            txns,
            reads,
            max,
            allowed,
            thresholds: Vec::new(),
        });
    }

    /// Transaction `t` (node `node`, `x`-th of its session): its first write of each key that
    /// matters, and its external reads; returns whether it has an external read.
    #[allow(clippy::too_many_arguments)]
    fn txn(
        &mut self,
        h: &History,
        t: TxnId,
        node: u32,
        x: usize,
        boundary: BoundaryKind,
        key_index: &[u32],
        reads: &mut Vec<OpId>,
        allowed: &mut Vec<bool>,
    ) -> bool {
        let matters = |k: KeyId| key_index[k as usize] != NONE;
        let mut has_read = false;
        let mut first_writes: Vec<KeyId> = Vec::new();
        for o in h.txn(t).ops() {
            let op = h.op(o);
            let position = match boundary {
                BoundaryKind::Strict => reads.len() as u32,
                BoundaryKind::Relaxed => x as u32,
            };
            match op.kind {
                OpKind::Write => {
                    if matters(op.key) && !first_writes.contains(&op.key) {
                        first_writes.push(op.key);
                        self.key_writers[key_index[op.key as usize] as usize].push(KeyWriter {
                            node,
                            thr: position,
                        });
                    }
                }
                OpKind::Read if is_external(h, o) => {
                    if boundary == BoundaryKind::Strict {
                        allowed.push(true);
                        reads.push(o);
                    }
                    has_read = true;
                    if matters(op.key) {
                        let g = self.group(node, op.key);
                        self.group_reads[g as usize].push(o);
                        self.read_list.push((g, o, position));
                    }
                }
                OpKind::Read => {}
            }
        }
        has_read
    }

    /// The group of `node`'s reads of `key`, made on its first read.
    fn group(&mut self, node: u32, key: KeyId) -> u32 {
        let (groups, group_reads) = (&mut self.groups, &mut self.group_reads);
        *self.group_of.entry((node, key)).or_insert_with(|| {
            groups.push(Group {
                node,
                key,
                cands: 0..0,
                units: 0..0,
            });
            group_reads.push(Vec::new());
            (groups.len() - 1) as u32
        })
    }
}

/// Step 4 of [`Space::build`], first half: each group's candidate writers (every writer of
/// its key but the reader and its own session's later transactions), as ranges of the
/// returned list.
fn candidates(
    h: &History,
    groups: &mut [Group],
    key_writers: &[Vec<KeyWriter>],
    key_index: &[u32],
    node_txn: &[TxnId],
) -> Vec<u32> {
    let mut group_cands = Vec::new();
    for group in groups.iter_mut() {
        let reader = node_txn[group.node as usize];
        let reader_session = h.txn(reader).session;
        let start = group_cands.len() as u32;
        for w in &key_writers[key_index[group.key as usize] as usize] {
            let wt = node_txn[w.node as usize];
            if wt == reader || (h.txn(wt).session == reader_session && wt > reader) {
                continue;
            }
            group_cands.push(w.node);
        }
        group.cands = start..group_cands.len() as u32;
    }
    group_cands
}

/// Step 4 of [`Space::build`], second half: the reads as choice units.
struct ReadsToUnits<'a> {
    h: &'a History,
    groups: &'a [Group],
    group_cands: &'a [u32],
    node_txn: &'a [TxnId],
    txn_node: &'a [u32],
}

impl ReadsToUnits<'_> {
    /// The index among group `g`'s candidates of the writer read `o` observed.
    fn observed(&self, g: u32, o: OpId) -> Result<u32, SpaceError> {
        let h = self.h;
        let group = &self.groups[g as usize];
        let cands = &self.group_cands[group.cands.start as usize..group.cands.end as usize];
        let w = h.writer_txn(o).map_or(NONE, |w| self.txn_node[w as usize]);
        cands
            .binary_search(&w)
            .map(|i| i as u32)
            .map_err(|_| SpaceError {
                op: o,
                message: format!(
                    "{} reads {} from {}, which no valid execution allows",
                    h.txn_label(self.node_txn[group.node as usize]),
                    h.key_name(group.key),
                    h.writer_txn(o)
                        .map_or("no committed transaction".to_string(), |w| h.txn_label(w))
                ),
            })
    }

    /// The choice units in program order (`per_read`: one per read, else one per group, whose
    /// reads must all have observed one writer) and the reads they cover.
    fn units(
        &self,
        per_read: bool,
        group_reads: &[Vec<OpId>],
        read_list: &[(u32, OpId, u32)],
    ) -> Result<(Vec<Unit>, Vec<OpId>), SpaceError> {
        let h = self.h;
        let groups = self.groups;
        let mut units: Vec<Unit> = Vec::new();
        let mut unit_ops: Vec<OpId> = Vec::new();
        let mut group_has_unit = vec![false; groups.len()];
        for &(g, o, inc) in read_list {
            if per_read {
                unit_ops.push(o);
                units.push(Unit {
                    group: g,
                    obs: self.observed(g, o)?,
                    ops: unit_ops.len() as u32 - 1..unit_ops.len() as u32,
                    inc,
                    fix: inc + 1,
                });
            } else if !group_has_unit[g as usize] {
                group_has_unit[g as usize] = true;
                let reads = &group_reads[g as usize];
                let obs = self.observed(g, o)?;
                for &r in &reads[1..] {
                    if self.observed(g, r)? != obs {
                        return Err(SpaceError {
                            op: r,
                            message: format!(
                                "{} reads {} from two different transactions (a non-repeatable \
                                 read, which causal consistency and read atomic forbid)",
                                h.txn_label(self.node_txn[groups[g as usize].node as usize]),
                                h.key_name(groups[g as usize].key)
                            ),
                        });
                    }
                }
                let ops_start = unit_ops.len() as u32;
                unit_ops.extend_from_slice(reads);
                units.push(Unit {
                    group: g,
                    obs,
                    ops: ops_start..unit_ops.len() as u32,
                    inc,
                    fix: inc + 1,
                });
            }
        }
        Ok((units, unit_ops))
    }
}

/// Node → its units (contiguous: reads come node by node); group → its units (set in
/// `groups`, indexing the returned list of units by group).
fn index_units(n: usize, groups: &mut [Group], units: &[Unit]) -> (Vec<Range<u32>>, Vec<u32>) {
    let mut node_units = vec![0..0; n];
    let mut group_unit_count = vec![0u32; groups.len() + 1];
    for (u, unit) in units.iter().enumerate() {
        let node = groups[unit.group as usize].node as usize;
        if node_units[node].is_empty() {
            node_units[node] = u as u32..u as u32 + 1;
        } else {
            node_units[node].end = u as u32 + 1;
        }
        group_unit_count[unit.group as usize + 1] += 1;
    }
    for g in 0..groups.len() {
        group_unit_count[g + 1] += group_unit_count[g];
    }
    let mut cursor = group_unit_count.clone();
    let mut group_units = vec![0u32; units.len()];
    for (u, unit) in units.iter().enumerate() {
        let slot = &mut cursor[unit.group as usize];
        group_units[*slot as usize] = u as u32;
        *slot += 1;
    }
    for (g, group) in groups.iter_mut().enumerate() {
        group.units = group_unit_count[g]..group_unit_count[g + 1];
    }
    (node_units, group_units)
}

/// Step 5 of [`Space::build`]: the positions at which each session's choices change.
struct Thresholds<'a> {
    groups: &'a [Group],
    units: &'a [Unit],
    key_writers: &'a [Vec<KeyWriter>],
    node_session: &'a [u32],
    node_start: &'a [u32],
}

impl Thresholds<'_> {
    /// Sets each session's thresholds: where a unit's read is included and fixed, where a
    /// writer's write is, and (`txn_starts`) where each node begins.
    fn set(&self, sessions: &mut [SessionSpace], txn_starts: bool) {
        let node_session = self.node_session;
        let mut thresholds: Vec<Vec<u32>> = vec![Vec::new(); sessions.len()];
        for unit in self.units {
            let group = &self.groups[unit.group as usize];
            let s = node_session[group.node as usize] as usize;
            thresholds[s].push(unit.inc);
            if group.cands.len() > 1 {
                thresholds[s].push(unit.fix);
            }
        }
        for writers in self.key_writers {
            for w in writers.iter().filter(|w| w.node != 0) {
                thresholds[node_session[w.node as usize] as usize].push(w.thr);
            }
        }
        if txn_starts {
            for node in 1..node_session.len() {
                thresholds[node_session[node] as usize].push(self.node_start[node]);
            }
        }
        for (s, mut t) in thresholds.into_iter().enumerate() {
            t.retain(|&c| c > 0);
            t.sort_unstable();
            t.dedup();
            debug_assert!(t.iter().all(|&c| c <= sessions[s].max));
            sessions[s].thresholds = t;
        }
    }
}

impl<'h> Space<'h> {
    /// Builds the space. `per_read`: one choice per read (read committed) instead of one per
    /// (transaction, key).
    pub fn new(
        h: &'h History,
        boundary: BoundaryKind,
        per_read: bool,
    ) -> Result<Space<'h>, SpaceError> {
        Self::build(h, boundary, per_read, false, false, true)
    }

    /// [`Space::new`] (`snapshots` false) or [`Space::for_snapshots`] (`snapshots`) without
    /// the pruning by the facts ([`Space::prune_by_facts`]): the tests' ground truth.
    #[cfg(test)]
    pub fn unpruned(
        h: &'h History,
        boundary: BoundaryKind,
        per_read: bool,
        snapshots: bool,
        write_conflicts: bool,
    ) -> Result<Space<'h>, SpaceError> {
        Self::build(h, boundary, per_read, write_conflicts, snapshots, false)
    }

    /// The space of prefix consistency (`write_conflicts` false) or snapshot isolation: one
    /// choice per (transaction, key), each node's first position registered as a threshold
    /// ([`Space::node_start`]), and under SI every key written by two committed transactions
    /// other than t0 also matters (the Conflict axiom).
    pub fn for_snapshots(
        h: &'h History,
        boundary: BoundaryKind,
        write_conflicts: bool,
    ) -> Result<Space<'h>, SpaceError> {
        Self::build(h, boundary, false, write_conflicts, true, true)
    }

    fn build(
        h: &'h History,
        boundary: BoundaryKind,
        per_read: bool,
        write_conflicts: bool,
        txn_starts: bool,
        prune_facts: bool,
    ) -> Result<Space<'h>, SpaceError> {
        // 1. Keys that matter.
        let (key_index, keys) = keys_that_matter(h, write_conflicts);
        // 2. Nodes: t0 and committed transactions touching a key that matters.
        let (txn_node, node_txn) = nodes(h, &key_index);
        let n = node_txn.len();
        // 3. Sessions, positions, writers and read choices.
        let mut scan = SessionScan::new(n, keys.len());
        for s in 0..h.sessions().len() {
            scan.session(h, s as SessionId, boundary, &key_index, &txn_node);
        }
        let SessionScan {
            mut sessions,
            node_session,
            node_pred,
            node_start,
            key_writers,
            mut groups,
            group_reads,
            read_list,
            ..
        } = scan;
        // 4. Candidates per group, then choice units in program order.
        let group_cands = candidates(h, &mut groups, &key_writers, &key_index, &node_txn);
        let reads = ReadsToUnits {
            h,
            groups: &groups,
            group_cands: &group_cands,
            node_txn: &node_txn,
            txn_node: &txn_node,
        };
        let (units, unit_ops) = reads.units(per_read, &group_reads, &read_list)?;
        let (node_units, group_units) = index_units(n, &mut groups, &units);
        // 5. Per-key reader groups, and the thresholds each session needs.
        let mut key_groups: Vec<Vec<u32>> = vec![Vec::new(); keys.len()];
        for (g, group) in groups.iter().enumerate() {
            key_groups[key_index[group.key as usize] as usize].push(g as u32);
        }
        let needs = Thresholds {
            groups: &groups,
            units: &units,
            key_writers: &key_writers,
            node_session: &node_session,
            node_start: &node_start,
        };
        needs.set(&mut sessions, txn_starts);

        let mut space = Space {
            history: h,
            boundary,
            node_txn,
            node_session,
            node_pred,
            node_start,
            node_units,
            groups,
            group_cands,
            group_units,
            units,
            unit_ops,
            keys,
            key_writers,
            key_groups,
            sessions,
        };
        if prune_facts {
            space.prune_by_facts();
        }
        Ok(space)
    }

    /// Removes the candidate writers the facts of a recording exclude at every level
    /// (docs/prediction.md "Statements real databases make atomic", [`super::locks`]): a read
    /// of `x` by `t` cannot read `c` when a writer `u` of `x` is forced before `t` and `c` is
    /// forced before `u`, where `u` is *forced before `t`* when `u`'s session ended before
    /// `t`'s began (it is whole in every prediction, and every level with the connection order
    /// puts it `co`-before the writer `t` reads) or `u` is earlier in `t`'s session and either
    /// every choice of the group is locked (the lock puts every other writer `co`-before the
    /// writer read or after `t`) or the sessions are connections (`t` reads its own session's
    /// writes, [`History::sessions_are_connections`]);
    /// and `c` is *forced before `u`* when it is t0, earlier in `u`'s session, or in a session
    /// that ended before `u`'s began. Reading `c` would need `u` `co`-before `c`. Only the
    /// last such `u` of each session matters (the relation is transitive). The observed writer
    /// is never removed. Returns how many were removed.
    fn prune_by_facts(&mut self) -> u64 {
        let h = self.history;
        if !super::locks::has_facts(h) {
            return 0;
        }
        let ns = h.sessions().len();
        let closure = super::locks::after_closure(h);
        let after = |e: SessionId, l: SessionId| closure[e as usize * ns + l as usize];
        let sess = |t: TxnId| h.txn(t).session;
        let forced_before = |c: TxnId, u: TxnId| {
            c == INITIAL_TXN || (sess(c) == sess(u) && c < u) || after(sess(c), sess(u))
        };
        let mut drop = vec![false; self.group_cands.len()];
        let mut forced: Vec<TxnId> = Vec::new();
        for g in 0..self.groups.len() {
            let group = &self.groups[g];
            let reader = self.node_txn[group.node as usize];
            let l = sess(reader);
            // Every choice of the group reads under a lock (one choice per read at read
            // committed: an unlocked read of the key beside a locked one keeps its writers).
            let locked = self
                .units_of(g as u32)
                .iter()
                .all(|&u| self.ops_of(u).iter().any(|&o| h.is_locked_read(o)));
            // An earlier writer in the reader's own session is forced before it when the read
            // is locked or the session is a connection (it reads its own session's writes).
            let own_session = locked || h.sessions_are_connections();
            // The last writer of the key of each session forced before the reader (writers
            // ascend by transaction id, so by session and position in it).
            forced.clear();
            let slot = self.key_slot(group.key) as usize;
            for w in self.key_writers[slot].iter().filter(|w| w.node != 0) {
                let u = self.node_txn[w.node as usize];
                let s = sess(u);
                let before_reader = after(s, l) || (own_session && s == l && u < reader);
                if !before_reader {
                    continue;
                }
                match forced.last_mut() {
                    Some(last) if sess(*last) == s => *last = u,
                    _ => forced.push(u),
                }
            }
            if forced.is_empty() {
                continue;
            }
            let observed: Vec<u32> = self
                .units_of(g as u32)
                .iter()
                .map(|&u| self.cands(g as u32)[self.units[u as usize].obs as usize])
                .collect();
            for i in group.cands.clone() {
                let c = self.group_cands[i as usize];
                let ct = self.node_txn[c as usize];
                drop[i as usize] = !observed.contains(&c)
                    && forced.iter().any(|&u| u != ct && forced_before(ct, u));
            }
        }
        self.drop_candidates(&drop)
    }

    /// Removes the candidates marked in `drop` (parallel to [`Space::group_cands`]), keeping
    /// each unit's observed writer index right; returns how many were removed.
    fn drop_candidates(&mut self, drop: &[bool]) -> u64 {
        let removed = drop.iter().filter(|&&d| d).count() as u64;
        if removed == 0 {
            return 0;
        }
        let mut new_cands: Vec<u32> = Vec::with_capacity(self.group_cands.len());
        for g in 0..self.groups.len() {
            let old = self.groups[g].cands.clone();
            let start = new_cands.len() as u32;
            for i in old.clone() {
                if !drop[i as usize] {
                    new_cands.push(self.group_cands[i as usize]);
                }
            }
            let end = new_cands.len() as u32;
            for k in self.groups[g].units.clone() {
                let u = self.group_units[k as usize] as usize;
                let obs_node = self.group_cands[(old.start + self.units[u].obs) as usize];
                self.units[u].obs = new_cands[start as usize..end as usize]
                    .binary_search(&obs_node)
                    .expect("the observed writer is kept")
                    as u32;
            }
            self.groups[g].cands = start..end;
        }
        self.group_cands = new_cands;
        removed
    }

    /// A lower bound of the candidate writers the space of [`Space::new`] (`per_read`) or
    /// [`Space::for_snapshots`] (`per_read` false; `write_conflicts`) encodes, pruned or not,
    /// counted without building it: its choice units — external reads of keys that matter
    /// (`per_read`), else their distinct (transaction, key) pairs — each of which keeps at
    /// least its observed writer. In memory linear in the keys: a run of 10^7 reads decides
    /// whether the solver phase can fit before the space's ~100 bytes per read are spent.
    pub fn choice_count(h: &History, per_read: bool, write_conflicts: bool) -> u64 {
        let (key_index, _) = keys_that_matter(h, write_conflicts);
        let mut count = 0u64;
        let mut keys: Vec<KeyId> = Vec::new();
        for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
            keys.clear();
            for o in h.txn(t).ops() {
                let op = h.op(o);
                if op.kind == OpKind::Read
                    && h.writer_txn(o) != Some(op.txn)
                    && key_index[op.key as usize] != NONE
                {
                    keys.push(op.key);
                }
            }
            if !per_read {
                keys.sort_unstable();
                keys.dedup();
            }
            count += keys.len() as u64;
        }
        count
    }

    /// Removes the candidate writers a read can never take at `level` because a later write of
    /// the key is forced into the reader's past (docs/prediction.md "Candidate writers a read
    /// can never take"); returns how many were removed (0 when the clocks would exceed their
    /// budget, or at read committed).
    ///
    /// A transaction `u` that writes `k` is *forced before* reader `t3` when every prediction
    /// that includes `t3` includes `u` with its write of `k` and has `u` happen before `t3`:
    /// `u` in `open(t3)` ([`super::open_clocks::open_clocks`]) — under the strict boundary only
    /// a session predecessor of `t3` or of another member (the last member of a session may be
    /// its session's boundary, cut before its write of `k`); under read atomic only `t3`'s own
    /// session predecessors (read atomic orders a writer before what `t3` reads only then). If
    /// candidate `c` happens before `u` in every prediction that includes `u` (`c` is t0, a
    /// session predecessor of `u`, or in `open(u)`), reading `k` from `c` puts `u` before `c`
    /// in the level's commit order (causal arbitration: `u` writes `k`, `u` happens before
    /// `t3`; read atomic: `u` session-before `t3`), while `c` happens before `u`: a cycle, so
    /// no prediction valid at the level chooses `c`. Prefix consistency and snapshot isolation
    /// imply causal consistency on the history with the boundary transactions' whole write
    /// sets, where every included transaction writes all its keys. The observed writer is never
    /// removed (the observed run is valid at the level).
    pub fn prune_forced_overwrites(&mut self, level: crate::check::Level) -> u64 {
        use crate::check::Level;
        let h = self.history;
        let own_session_only = match level {
            Level::Causal | Level::Prefix | Level::Snapshot => false,
            Level::ReadAtomic => true,
            _ => return 0,
        };
        let Some(open) = super::open_clocks::open_clocks(h) else {
            return 0;
        };
        let k = h.sessions().len();
        let clock = |t: TxnId| &open[t as usize * k..(t as usize + 1) * k];
        let strict = self.boundary == BoundaryKind::Strict;
        // `c` happens before `u` in every prediction that includes `u`.
        let forced_before = |c: TxnId, u: TxnId| {
            if c == INITIAL_TXN {
                return true;
            }
            let (ct, ut) = (h.txn(c), h.txn(u));
            (ct.session == ut.session && ct.index_in_session < ut.index_in_session)
                || clock(u)[ct.session as usize] > ct.index_in_session
        };
        let mut removed = 0u64;
        let mut new_cands: Vec<u32> = Vec::with_capacity(self.group_cands.len());
        let mut overwriters: Vec<TxnId> = Vec::new();
        for g in 0..self.groups.len() {
            let group = self.groups[g].clone();
            let reader = self.node_txn[group.node as usize];
            let rt = h.txn(reader);
            let past = clock(reader);
            let slot = self.key_slot(group.key) as usize;
            // Per session, the latest writer of the key forced before the reader.
            overwriters.clear();
            let mut best: Vec<Option<TxnId>> = vec![None; k];
            for w in &self.key_writers[slot] {
                if w.node == 0 {
                    continue;
                }
                let u = self.node_txn[w.node as usize];
                let ut = h.txn(u);
                let x = ut.session as usize;
                let own = ut.session == rt.session;
                let member = if own {
                    ut.index_in_session < rt.index_in_session
                } else if own_session_only {
                    false
                } else if strict {
                    ut.index_in_session + 1 < past[x]
                } else {
                    ut.index_in_session < past[x]
                };
                if member
                    && best[x].map_or(true, |b| h.txn(b).index_in_session < ut.index_in_session)
                {
                    best[x] = Some(u);
                }
            }
            overwriters.extend(best.iter().flatten());
            let start = new_cands.len() as u32;
            let old = self.cands(g as u32).to_vec();
            let obs_nodes: Vec<u32> = self
                .units_of(g as u32)
                .iter()
                .map(|&u| old[self.units[u as usize].obs as usize])
                .collect();
            for &c in &old {
                let ct = self.node_txn[c as usize];
                let never = !obs_nodes.contains(&c)
                    && overwriters.iter().any(|&u| u != ct && forced_before(ct, u));
                if never {
                    removed += 1;
                } else {
                    new_cands.push(c);
                }
            }
            let end = new_cands.len() as u32;
            let kept = &new_cands[start as usize..end as usize];
            for i in 0..self.units_of(g as u32).len() {
                let u = self.group_units[(group.units.start as usize) + i] as usize;
                let obs_node = old[self.units[u].obs as usize];
                self.units[u].obs =
                    kept.binary_search(&obs_node)
                        .expect("the observed writer is kept") as u32;
            }
            self.groups[g].cands = start..end;
        }
        self.group_cands = new_cands;
        removed
    }

    /// Number of nodes (t0 included).
    pub fn nodes(&self) -> usize {
        self.node_txn.len()
    }

    /// Session order between nodes.
    pub fn so(&self, a: u32, b: u32) -> bool {
        if a == b {
            return false;
        }
        if a == 0 {
            return true;
        }
        b != 0 && self.node_session[a as usize] == self.node_session[b as usize] && a < b
    }

    /// A group's candidate writer nodes.
    pub fn cands(&self, g: u32) -> &[u32] {
        let r = &self.groups[g as usize].cands;
        &self.group_cands[r.start as usize..r.end as usize]
    }

    /// The arbitration instances shared by the encodings: every read choice `wr_k(t2, t3)`
    /// (a group of `t3` reading the key of slot `slot`, candidate index `cand` naming `t2`)
    /// with every writer `t1` of the key other than `t2` and `t3` (t0 included, as writer
    /// index `w` of [`Space::key_writers`]), key by key, group by group, candidate by
    /// candidate, writer by writer.
    pub fn arbitrations(&self) -> impl Iterator<Item = Arbitration> + '_ {
        self.key_groups
            .iter()
            .enumerate()
            .flat_map(move |(slot, groups)| {
                groups.iter().flat_map(move |&g| {
                    let group = &self.groups[g as usize];
                    let t3 = group.node;
                    group.cands.clone().flat_map(move |cand| {
                        let t2 = self.group_cands[cand as usize];
                        self.key_writers[slot]
                            .iter()
                            .enumerate()
                            .filter(move |(_, writer)| writer.node != t2 && writer.node != t3)
                            .map(move |(w, writer)| Arbitration {
                                slot,
                                cand,
                                w,
                                t1: writer.node,
                                t2,
                                t3,
                            })
                    })
                })
            })
    }

    /// A group's choice units, in program order.
    pub fn units_of(&self, g: u32) -> &[u32] {
        let r = &self.groups[g as usize].units;
        &self.group_units[r.start as usize..r.end as usize]
    }

    /// A unit's read operations.
    pub fn ops_of(&self, u: u32) -> &[OpId] {
        let r = &self.units[u as usize].ops;
        &self.unit_ops[r.start as usize..r.end as usize]
    }

    /// The index of a key that matters (`NONE` otherwise).
    pub fn key_slot(&self, k: KeyId) -> u32 {
        self.keys.binary_search(&k).map_or(NONE, |i| i as u32)
    }
}
