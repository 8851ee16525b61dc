//! Aion: online checking of SI and SER from timestamps, for transactions that arrive one at
//! a time in any order — Li et al., "Online Timestamp-based Transactional Isolation Checking
//! of Database Systems", §IV (Algorithm 3) and Aion-SER; digest and pitfalls in
//! notes/chronos-aion.md.
//!
//! The axioms are those of [`super::chronos`]. What changes online:
//! - SESSION, INT, NOCONFLICT, EQUAL-COMMIT and START-AFTER-COMMIT never change once both
//!   transactions involved have arrived, so they are reported at once. NOCONFLICT is found
//!   when the second writer arrives, by looking among the key's writers for intervals that
//!   overlap (nested ones included, pitfall P9), so each pair is reported once.
//! - EXT may flip while writers arrive late: each external read has its own verdict per
//!   (transaction, key) (P7), re-evaluated whenever a writer of that key arrives whose commit
//!   timestamp makes it the read's visible writer. Per key, committed writes are kept in a
//!   map ordered by commit timestamp and external reads in a map ordered by snapshot
//!   timestamp, so a late writer re-checks exactly the reads it now explains (P10). A
//!   transaction's EXT verdicts become final `timeout` after its arrival (or at the end of
//!   the input), and only then are they reported (P11).
//! - Memory stays bounded: a transaction is dropped once final; per key, writes older than
//!   the watermark (the oldest snapshot still pending, never moving backwards) are dropped
//!   except the newest of them, which later snapshots still see. A transaction that arrives
//!   with a snapshot older than the watermark is more than a timeout late: it is checked
//!   against what is kept and counted as late (its verdicts may be wrong, as in Aion).
//!
//! Lists are compared whole, as the offline checker compares them (pitfall P13; TimeKiller's
//! online checker compares only their last elements and misses a lost or reordered middle
//! element). Memory stays bounded: a kept write of a list key holds a digest of the list its
//! commit leaves (length and a polynomial hash of the elements, [`ListDigest`]), not the
//! list, and a late writer recomputes the digests of the kept writes after it. Two different
//! lists of one length have equal digests with probability below 2^-50 per comparison for
//! the lists of a test run (the hash is a polynomial of degree below 2^32 over the prime field
//! of 2^61 − 1). An EXT of a list is attributed, for its kind, to the appender of the read's
//! last element (the offline checker names the first wrong element). Session order is
//! arrival order within a session (Aion assumes sessions arrive in order). Two writers of a key with equal commit timestamps are reported, and then neither
//! is visible to a snapshot at that timestamp taken by the other.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::ops::Bound;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::chronos::TsLevel;
use super::sorted_window::SortedWindow;
use super::ts_report::{ExtKind, TsCounts, TsRetraction, TsTxnRef, TsViolation};
use crate::formats::timekiller::{Transaction, Value};
use crate::history::timestamped::{Hlc, Name, TsOpKind};

/// Options of the online checker.
#[derive(Debug, Clone)]
pub struct OnlineOptions {
    /// SI or SER.
    pub level: TsLevel,
    /// Milliseconds after its arrival when a transaction's EXT verdicts become final.
    pub timeout_ms: u64,
    /// The initial value of every register (`None` = `null`).
    pub initial: Option<i64>,
}

/// What a transaction is, as reports name it (shared by the writes it leaves behind).
#[derive(Debug)]
struct Info {
    arrival: u32,
    /// `T<s>.<k>`: its session's number (from 1, in order of first arrival) and its
    /// position in the session (from 1, in arrival order), as `check` names it.
    label: (u32, u32),
    tid: Name,
    session: Rc<str>,
    start: Hlc,
    commit: Hlc,
    line: u32,
}

impl Info {
    fn txn_ref(&self) -> TsTxnRef {
        TsTxnRef {
            index: self.arrival,
            label: format!("T{}.{}", self.label.0, self.label.1),
            tid: self.tid.to_string(),
            session: self.session.to_string(),
            start: self.start,
            commit: self.commit,
            line: self.line,
        }
    }
}

/// A session as the online checker follows it.
#[derive(Debug)]
struct SessionState {
    name: Rc<str>,
    /// Its number in reports (from 1, in order of first arrival).
    number: u32,
    /// Transactions arrived so far.
    arrived: u32,
    /// The last one.
    last: Option<Rc<Info>>,
}

/// A list as the online checker keeps it: its length and a polynomial hash of its elements
/// modulo the Mersenne prime 2^61 − 1 (`hash = Σ e_i · BASE^(len − 1 − i)`), so that a list
/// extended by appends is hashed from the hash of the list before them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ListDigest {
    len: u32,
    hash: u64,
}

impl ListDigest {
    const PRIME: u64 = (1 << 61) - 1;
    const BASE: u64 = 0x0a5f_3c1d_9b27_e463 % Self::PRIME;

    fn mul(a: u64, b: u64) -> u64 {
        ((a as u128 * b as u128) % Self::PRIME as u128) as u64
    }

    fn element(v: i64) -> u64 {
        (v as u64) % Self::PRIME
    }

    /// The list with `v` appended.
    fn push(self, v: i64) -> Self {
        ListDigest {
            len: self.len + 1,
            hash: (Self::mul(self.hash, Self::BASE) + Self::element(v)) % Self::PRIME,
        }
    }

    /// The list followed by `suffix`.
    fn then(self, suffix: ListDigest) -> Self {
        let mut power = 1u64;
        let (mut base, mut exp) = (Self::BASE, suffix.len);
        while exp > 0 {
            if exp & 1 == 1 {
                power = Self::mul(power, base);
            }
            base = Self::mul(base, base);
            exp >>= 1;
        }
        ListDigest {
            len: self.len + suffix.len,
            hash: (Self::mul(self.hash, power) + suffix.hash) % Self::PRIME,
        }
    }

    /// The digest of `items`.
    fn of(items: &[i64]) -> Self {
        items.iter().fold(ListDigest::default(), |d, &v| d.push(v))
    }
}

/// A list key's state inside one arriving transaction.
#[derive(Debug, Default)]
struct ListAccess {
    key: u32,
    /// Everything the transaction appended to the key, in order (its write's suffix).
    appended: ListDigest,
    /// After a read of the key: the list read, followed by the appends since (what a next
    /// read must return).
    known: Option<Vec<i64>>,
    /// Before any read of the key: the appends so far.
    own: Vec<i64>,
}

impl ListAccess {
    /// The entry of key `k` in a transaction's list accesses (added if new).
    fn of(accesses: &mut Vec<ListAccess>, k: u32) -> &mut ListAccess {
        match accesses.iter().position(|a| a.key == k) {
            Some(a) => &mut accesses[a],
            None => {
                accesses.push(ListAccess {
                    key: k,
                    ..Default::default()
                });
                accesses.last_mut().expect("just pushed")
            }
        }
    }
}

/// A committed write kept for lookups.
#[derive(Debug, Clone)]
struct Write {
    value: Option<i64>,
    /// Of an append: the writer's appends to the key and the list its commit leaves (the
    /// list of the kept append before it in commit order, followed by these appends).
    list: Option<(ListDigest, ListDigest)>,
    /// The writer's earlier (overwritten) values of the key, for EXT diagnosis.
    earlier: Option<Box<[Option<i64>]>>,
    writer: Rc<Info>,
}

/// An external read still pending.
#[derive(Debug, Clone)]
struct PendingRead {
    key: u32,
    op_index: u32,
    /// A register's value, or a list's last element (or the initial value for `[]`).
    value: Option<i64>,
    /// A list read: the list, its digest, and the digest of the transaction's own appends
    /// to the key before it (the read must return the snapshot's list followed by them).
    list: Option<Box<ListRead>>,
    ok: bool,
}

#[derive(Debug, Clone)]
struct ListRead {
    items: Box<[i64]>,
    digest: ListDigest,
    own: ListDigest,
}

/// A read whose final verdict was EXT NEVER (no writer of its value had arrived), kept so that
/// a writer of that value arriving later can take the verdict back ([`TsRetraction`]).
#[derive(Debug)]
struct NeverRead {
    reader: Rc<Info>,
    read: PendingRead,
    pos: Hlc,
    verdict: TsViolation,
}

/// The most EXT NEVER verdicts kept for retraction; later ones stand (counted in
/// [`OnlineStats::never_not_kept`]), so memory stays bounded.
pub const MAX_NEVER_KEPT: usize = 1 << 16;

#[derive(Debug)]
struct Live {
    info: Rc<Info>,
    reads: Vec<PendingRead>,
    /// The transaction's own final writes (for EXT diagnosis of reads of its later writes).
    own_writes: Vec<(u32, Option<i64>)>,
    /// Its overwritten writes.
    overwritten: Vec<(u32, Option<i64>)>,
    generation: u32,
}

/// What an arriving transaction reads and writes itself ([`OnlineChecker::check_internal`]).
struct OwnOps {
    /// Its external reads (EXT pending).
    reads: Vec<PendingRead>,
    /// Its final write of each key.
    writes: Vec<(u32, Option<i64>)>,
    /// Its writes overwritten by its own later writes.
    overwritten: Vec<(u32, Option<i64>)>,
}

#[derive(Debug, Default)]
struct KeyState {
    /// Committed final writes by (commit timestamp, arrival).
    writes: SortedWindow<(Hlc, u32), Write>,
    /// Pending external reads by (snapshot timestamp, arrival) → (slot, read index).
    reads: SortedWindow<(Hlc, u32), (u32, u32)>,
}

/// Counters of an online run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct OnlineStats {
    /// Transactions checked.
    pub transactions: u64,
    /// Transactions that arrived with a snapshot older than the watermark (more than a
    /// timeout late): checked against what was still kept.
    pub late: u64,
    /// The most transactions held in memory at once (not yet final).
    pub max_live: u64,
    /// The most committed writes held at once, over all keys.
    pub max_writes_kept: u64,
    /// EXT NEVER verdicts taken back because a writer of the value read arrived after them.
    pub retracted: u64,
    /// EXT NEVER verdicts not kept for retraction (over [`MAX_NEVER_KEPT`]): they stand even
    /// if their writer arrives later.
    pub never_not_kept: u64,
}

/// The online checker: feed transactions with [`OnlineChecker::arrive`], let time pass with
/// [`OnlineChecker::tick`], end with [`OnlineChecker::finish`]. Each returns the violations
/// that became final.
#[derive(Debug)]
pub struct OnlineChecker {
    options: OnlineOptions,
    keys: FxHashMap<Name, u32>,
    key_names: Vec<String>,
    key_state: Vec<KeyState>,
    sessions: FxHashMap<String, SessionState>,
    live: Vec<Option<Live>>,
    free: Vec<u32>,
    queue: VecDeque<(u64, u32, u32)>, // deadline, slot, generation
    /// Snapshot positions of the pending transactions (oldest on top); entries of
    /// transactions already final are skipped lazily.
    pending_positions: BinaryHeap<Reverse<(Hlc, u32, u32, u32)>>, // pos, arrival, slot, generation
    /// Scratch: the keys a transaction has accessed, with its last value.
    seen: Vec<(u32, Option<i64>)>,
    /// Scratch: the list keys a transaction has accessed.
    lists_seen: Vec<ListAccess>,
    watermark: Option<Hlc>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    writes_kept: u64,
    arrivals: u32,
    since_gc: u32,
    counts: TsCounts,
    stats: OnlineStats,
    /// Final EXT NEVER verdicts by (key, value read), for retraction by a late writer.
    never: FxHashMap<(u32, Option<i64>), Vec<NeverRead>>,
    never_kept: usize,
    /// Retractions not yet taken by [`OnlineChecker::take_retractions`].
    retractions: Vec<TsRetraction>,
}

impl OnlineChecker {
    /// A checker with no transactions yet.
    pub fn new(options: OnlineOptions) -> Self {
        OnlineChecker {
            options,
            keys: FxHashMap::default(),
            key_names: Vec::new(),
            key_state: Vec::new(),
            sessions: FxHashMap::default(),
            live: Vec::new(),
            free: Vec::new(),
            queue: VecDeque::new(),
            pending_positions: BinaryHeap::new(),
            seen: Vec::new(),
            lists_seen: Vec::new(),
            watermark: None,
            dirty: Vec::new(),
            is_dirty: Vec::new(),
            writes_kept: 0,
            arrivals: 0,
            since_gc: 0,
            counts: TsCounts::default(),
            stats: OnlineStats::default(),
            never: FxHashMap::default(),
            never_kept: 0,
            retractions: Vec::new(),
        }
    }

    /// Exact counts of the violations reported so far.
    pub fn counts(&self) -> &TsCounts {
        &self.counts
    }

    /// Counters of the run so far.
    pub fn stats(&self) -> &OnlineStats {
        &self.stats
    }

    /// The verdicts taken back since the last call (each already subtracted from
    /// [`OnlineChecker::counts`]); a read still wrong has its new verdict among the violations
    /// returned by the same [`OnlineChecker::arrive`].
    pub fn take_retractions(&mut self) -> Vec<TsRetraction> {
        std::mem::take(&mut self.retractions)
    }

    /// Transactions in memory (not yet final).
    pub fn live(&self) -> usize {
        self.live.len() - self.free.len()
    }

    fn key(&mut self, name: Name) -> u32 {
        if let Some(&k) = self.keys.get(&name) {
            return k;
        }
        let k = self.key_names.len() as u32;
        self.key_names.push(name.to_string());
        self.keys.insert(name, k);
        self.key_state.push(KeyState::default());
        self.is_dirty.push(false);
        k
    }

    /// The snapshot position of a transaction: its start (SI) or its commit (SER).
    fn position(&self, start: Hlc, commit: Hlc) -> Hlc {
        match self.options.level {
            TsLevel::Snapshot => start,
            TsLevel::Serializable => commit,
        }
    }

    /// The write visible to a snapshot at `pos` of the transaction that arrived `arrival`-th
    /// on key `k`: the last with commit ≤ pos (SI) or < pos (SER), not its own.
    fn visible(&self, k: u32, pos: Hlc, arrival: u32) -> Option<&Write> {
        let writes = &self.key_state[k as usize].writes;
        let upper = match self.options.level {
            TsLevel::Snapshot => Bound::Included(&(pos, u32::MAX)),
            TsLevel::Serializable => Bound::Excluded(&(pos, 0)),
        };
        writes
            .range(Bound::Unbounded, upper)
            .rev()
            .map(|(_, w)| w)
            .find(|w| w.writer.arrival != arrival)
    }

    /// The list visible to a snapshot at `pos` of the transaction that arrived `arrival`-th
    /// on key `k`: the list the last visible append leaves (empty when none is visible).
    fn visible_list(&self, k: u32, pos: Hlc, arrival: u32) -> (ListDigest, Option<&Write>) {
        let writes = &self.key_state[k as usize].writes;
        let upper = match self.options.level {
            TsLevel::Snapshot => Bound::Included(&(pos, u32::MAX)),
            TsLevel::Serializable => Bound::Excluded(&(pos, 0)),
        };
        writes
            .range(Bound::Unbounded, upper)
            .rev()
            .map(|(_, w)| w)
            .filter(|w| w.writer.arrival != arrival)
            .find_map(|w| w.list.map(|(_, list)| (list, Some(w))))
            .unwrap_or((ListDigest::default(), None))
    }

    /// Whether a pending read returns what its snapshot holds.
    fn read_ok(&self, read: &PendingRead, pos: Hlc, arrival: u32) -> bool {
        match &read.list {
            Some(list) => self.visible_list(read.key, pos, arrival).0.then(list.own) == list.digest,
            None => {
                let expected = match self.visible(read.key, pos, arrival) {
                    Some(w) => w.value,
                    None => self.options.initial,
                };
                read.value == expected
            }
        }
    }

    /// Checks an arriving transaction at time `now_ms` (any clock, milliseconds); returns
    /// the violations that are final at once. `line` names its input line in reports.
    pub fn arrive(&mut self, txn: Transaction, line: u32, now_ms: u64) -> Vec<TsViolation> {
        let mut out = Vec::new();
        self.arrivals += 1;
        self.stats.transactions += 1;
        let level = self.options.level;
        let session_number = self.sessions.len() as u32 + 1;
        let session_entry =
            self.sessions
                .entry(txn.session)
                .or_insert_with_key(|name| SessionState {
                    name: Rc::from(name.as_str()),
                    number: session_number,
                    arrived: 0,
                    last: None,
                });
        session_entry.arrived += 1;
        let info = Rc::new(Info {
            arrival: self.arrivals - 1,
            label: (session_entry.number, session_entry.arrived),
            tid: txn.tid,
            session: session_entry.name.clone(),
            start: txn.start,
            commit: txn.commit,
            line,
        });
        if info.start > info.commit {
            out.push(TsViolation::StartAfterCommit {
                txn: info.txn_ref(),
            });
            if level == TsLevel::Snapshot {
                self.report(&out);
                return out;
            }
        }
        // SESSION, in arrival order.
        if let Some(prev) = &session_entry.last {
            let ok = match level {
                TsLevel::Snapshot => prev.commit <= info.start,
                TsLevel::Serializable => prev.commit < info.commit,
            };
            if !ok {
                out.push(TsViolation::Session {
                    txn: info.txn_ref(),
                    previous: prev.txn_ref(),
                });
            }
        }
        session_entry.last = Some(info.clone());

        let pos = self.position(info.start, info.commit);
        if self.watermark.is_some_and(|w| pos < w) {
            self.stats.late += 1;
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.live.push(None);
                self.live.len() as u32 - 1
            }
        };

        // INT now; external reads and final writes collected.
        let own = self.check_internal(&info, txn.ops, &mut out);

        // NOCONFLICT and EQUAL-COMMIT against the writers already here; then T's writes
        // become visible and re-check the reads they now explain.
        for &(k, value) in &own.writes {
            self.check_conflicts(&info, k, &mut out);
            self.keep_write(&info, k, value, &own.overwritten);
        }
        self.stats.max_writes_kept = self.stats.max_writes_kept.max(self.writes_kept);
        let OwnOps {
            mut reads,
            writes: own_writes,
            overwritten,
        } = own;
        if !self.never.is_empty() {
            self.retract_nevers(&info, &own_writes, &overwritten, &mut out);
        }

        // T's own external reads, provisionally.
        for (ri, read) in reads.iter_mut().enumerate() {
            read.ok = self.read_ok(read, pos, info.arrival);
            self.key_state[read.key as usize]
                .reads
                .insert((pos, info.arrival), (slot, ri as u32));
        }
        let generation = self.arrivals;
        self.live[slot as usize] = Some(Live {
            info: info.clone(),
            reads,
            own_writes,
            overwritten,
            generation,
        });
        self.pending_positions
            .push(Reverse((pos, info.arrival, slot, generation)));
        self.queue.push_back((
            now_ms.saturating_add(self.options.timeout_ms),
            slot,
            generation,
        ));
        self.stats.max_live = self.stats.max_live.max(self.live() as u64);
        self.report(&out);
        out.extend(self.tick(now_ms));
        out
    }

    /// INT for an arriving transaction `info` with operations `ops`: each read against the
    /// transaction's own earlier access of the key (violations into `out`); collects its
    /// external reads (pending EXT), final writes and overwritten writes. Lists as TimeKiller
    /// does.
    fn check_internal(
        &mut self,
        info: &Info,
        ops: Vec<(TsOpKind, Name, Value)>,
        out: &mut Vec<TsViolation>,
    ) -> OwnOps {
        let mut seen = std::mem::take(&mut self.seen);
        seen.clear();
        let mut lists_seen = std::mem::take(&mut self.lists_seen);
        lists_seen.clear();
        let mut reads: Vec<PendingRead> = Vec::new();
        let mut own_writes: Vec<(u32, Option<i64>)> = Vec::new();
        let mut overwritten: Vec<(u32, Option<i64>)> = Vec::new();
        for (i, (kind, key, value)) in ops.into_iter().enumerate() {
            let k = self.key(key);
            if let (TsOpKind::ReadList, Value::List(items)) = (kind, &value) {
                // A list read, compared whole: with the transaction's own earlier access
                // (INT), or, at its first read of the key, with the snapshot's list followed
                // by its own appends so far (EXT, pending).
                let access = ListAccess::of(&mut lists_seen, k);
                match &access.known {
                    Some(known) if known != items => out.push(TsViolation::Int {
                        txn: info.txn_ref(),
                        key: self.key_names[k as usize].clone(),
                        op_index: i as u32,
                        read: list_text(items),
                        expected: list_text(known),
                    }),
                    Some(_) => {}
                    None if !items.ends_with(&access.own) => out.push(TsViolation::Int {
                        txn: info.txn_ref(),
                        key: self.key_names[k as usize].clone(),
                        op_index: i as u32,
                        read: list_text(items),
                        expected: format!("a list ending with {}", list_text(&access.own)),
                    }),
                    None => reads.push(PendingRead {
                        key: k,
                        op_index: i as u32,
                        value: items.last().copied().or(self.options.initial),
                        list: Some(Box::new(ListRead {
                            items: items.clone().into_boxed_slice(),
                            digest: ListDigest::of(items),
                            own: ListDigest::of(&access.own),
                        })),
                        ok: true,
                    }),
                }
                access.known = Some(items.clone());
                continue;
            }
            if let (TsOpKind::Append, Value::Int(v)) = (kind, &value) {
                let access = ListAccess::of(&mut lists_seen, k);
                access.appended = access.appended.push(*v);
                match &mut access.known {
                    Some(known) => known.push(*v),
                    None => access.own.push(*v),
                }
            }
            let value = match (kind, value) {
                (_, Value::Int(v)) => Some(v),
                (TsOpKind::ReadList, Value::List(items)) => items.last().copied(),
                _ => None,
            };
            let value = if kind == TsOpKind::ReadList && value.is_none() {
                self.options.initial
            } else {
                value
            };
            let is_write = matches!(kind, TsOpKind::Write | TsOpKind::Append);
            match seen.iter_mut().find(|(sk, _)| *sk == k) {
                Some(entry) => {
                    if !is_write && entry.1 != value {
                        out.push(TsViolation::Int {
                            txn: info.txn_ref(),
                            key: self.key_names[k as usize].clone(),
                            op_index: i as u32,
                            read: show(value),
                            expected: show(entry.1),
                        });
                    }
                    entry.1 = value;
                }
                None => {
                    seen.push((k, value));
                    if !is_write {
                        reads.push(PendingRead {
                            key: k,
                            op_index: i as u32,
                            value,
                            list: None,
                            ok: true,
                        });
                    }
                }
            }
            if is_write {
                match own_writes.iter_mut().find(|(wk, _)| *wk == k) {
                    Some(w) => overwritten.push((k, std::mem::replace(&mut w.1, value))),
                    None => own_writes.push((k, value)),
                }
            }
        }

        self.seen = seen;
        self.lists_seen = lists_seen;
        OwnOps {
            reads,
            writes: own_writes,
            overwritten,
        }
    }

    /// NOCONFLICT (snapshot isolation) and EQUAL-COMMIT for `info`'s final write of `k`,
    /// against the writers of `k` already here.
    fn check_conflicts(&self, info: &Info, k: u32, out: &mut Vec<TsViolation>) {
        let level = self.options.level;
        let state = &self.key_state[k as usize];
        if level == TsLevel::Snapshot {
            let after = (info.start, u32::MAX);
            for w in state
                .writes
                .range(Bound::Excluded(&after), Bound::Unbounded)
                .map(|(_, w)| w)
            {
                if w.writer.start < info.commit {
                    let (first, second) = if w.writer.commit < info.commit {
                        (w.writer.txn_ref(), info.txn_ref())
                    } else {
                        (info.txn_ref(), w.writer.txn_ref())
                    };
                    out.push(TsViolation::NoConflict {
                        first,
                        second,
                        key: self.key_names[k as usize].clone(),
                    });
                }
            }
        }
        let (low, high) = ((info.commit, 0), (info.commit, u32::MAX));
        for w in state
            .writes
            .range(Bound::Included(&low), Bound::Included(&high))
            .map(|(_, w)| w)
        {
            out.push(TsViolation::EqualCommit {
                first: w.writer.txn_ref(),
                second: info.txn_ref(),
                key: self.key_names[k as usize].clone(),
            });
        }
    }

    /// Keeps `info`'s final write of `k` (`value`; `overwritten`: the transaction's earlier
    /// writes) so that it becomes visible, with an append's list, and re-checks the pending
    /// reads it may now explain.
    fn keep_write(
        &mut self,
        info: &Rc<Info>,
        k: u32,
        value: Option<i64>,
        overwritten: &[(u32, Option<i64>)],
    ) {
        let earlier: Vec<Option<i64>> = overwritten
            .iter()
            .filter(|&&(ok, _)| ok == k)
            .map(|&(_, v)| v)
            .collect();
        let appended = self.appended_to(k);
        let state = &mut self.key_state[k as usize];
        let at = (info.commit, info.arrival);
        // An append's list: the list of the kept append before it, then its own appends;
        // the lists of the kept appends after it (a late writer) are recomputed.
        let mut later_lists = false;
        let list = appended.map(|appended| {
            let before = state
                .writes
                .range(Bound::Unbounded, Bound::Excluded(&at))
                .rev()
                .find_map(|(_, w)| w.list.map(|(_, list)| list))
                .unwrap_or_default();
            let mut list = before.then(appended);
            let own = (appended, list);
            for (_, w) in state
                .writes
                .range_mut(Bound::Excluded(&at), Bound::Unbounded)
            {
                if let Some((suffix, after)) = &mut w.list {
                    list = list.then(*suffix);
                    *after = list;
                    later_lists = true;
                }
            }
            own
        });
        state.writes.insert(
            at,
            Write {
                value,
                list,
                earlier: (!earlier.is_empty()).then(|| earlier.into_boxed_slice()),
                writer: info.clone(),
            },
        );
        self.writes_kept += 1;
        if !self.is_dirty[k as usize] {
            self.is_dirty[k as usize] = true;
            self.dirty.push(k);
        }
        self.recheck(k, info.commit, info.arrival, later_lists);
    }

    /// Everything the arriving transaction appended to `k`, if anything.
    fn appended_to(&self, k: u32) -> Option<ListDigest> {
        self.lists_seen
            .iter()
            .find(|a| a.key == k && a.appended.len > 0)
            .map(|a| a.appended)
    }

    /// Re-evaluates the pending reads of `k` whose visible writer may now be the write at
    /// (`commit`, `arrival`): snapshots from that commit up to the next writer's, or to the
    /// end when the lists of later appends changed (`later_lists`).
    fn recheck(&mut self, k: u32, commit: Hlc, arrival: u32, later_lists: bool) {
        let state = &self.key_state[k as usize];
        let next = state
            .writes
            .range(Bound::Excluded(&(commit, arrival)), Bound::Unbounded)
            .map(|&((c, _), _)| c)
            .find(|&c| c > commit && !later_lists);
        let (low, high) = match self.options.level {
            TsLevel::Snapshot => ((commit, 0), next.map(|n| (n, 0))),
            TsLevel::Serializable => ((commit, u32::MAX), next.map(|n| (n, u32::MAX))),
        };
        let range = match self.options.level {
            TsLevel::Snapshot => state.reads.range(
                Bound::Included(&low),
                high.as_ref().map_or(Bound::Unbounded, Bound::Excluded),
            ),
            TsLevel::Serializable => state.reads.range(
                Bound::Excluded(&low),
                high.as_ref().map_or(Bound::Unbounded, Bound::Included),
            ),
        };
        let affected: Vec<((Hlc, u32), (u32, u32))> = range.copied().collect();
        for ((pos, reader), (slot, ri)) in affected {
            let ok = match &self.live[slot as usize] {
                Some(live) => self.read_ok(&live.reads[ri as usize], pos, reader),
                None => continue,
            };
            if let Some(live) = &mut self.live[slot as usize] {
                live.reads[ri as usize].ok = ok;
            }
        }
    }

    /// Makes final the transactions whose timeout has passed at `now_ms`; returns their EXT
    /// violations.
    pub fn tick(&mut self, now_ms: u64) -> Vec<TsViolation> {
        let mut out = Vec::new();
        while let Some(&(deadline, slot, generation)) = self.queue.front() {
            if deadline > now_ms {
                break;
            }
            self.queue.pop_front();
            self.finalize(slot, generation, &mut out);
        }
        self.since_gc += 1;
        if self.since_gc >= 256 {
            self.since_gc = 0;
            self.collect_garbage();
        }
        self.report(&out);
        out
    }

    /// Ends the input: every pending verdict becomes final.
    pub fn finish(&mut self) -> Vec<TsViolation> {
        let mut out = Vec::new();
        while let Some((_, slot, generation)) = self.queue.pop_front() {
            self.finalize(slot, generation, &mut out);
        }
        self.collect_garbage();
        self.report(&out);
        out
    }

    fn report(&mut self, violations: &[TsViolation]) {
        for v in violations {
            self.counts.add(v);
        }
    }

    fn finalize(&mut self, slot: u32, generation: u32, out: &mut Vec<TsViolation>) {
        let Some(live) = self.live[slot as usize].take() else {
            return;
        };
        if live.generation != generation {
            self.live[slot as usize] = Some(live);
            return;
        }
        let pos = self.position(live.info.start, live.info.commit);
        for read in &live.reads {
            self.key_state[read.key as usize]
                .reads
                .remove(&(pos, live.info.arrival));
            if !read.ok {
                let verdict = self.describe_ext(&live, read, pos);
                self.keep_never(&live.info, read, pos, &verdict);
                out.push(verdict);
            }
        }
        // The watermark: the oldest pending snapshot, never moving backwards.
        while let Some(&Reverse((_, _, s, g))) = self.pending_positions.peek() {
            match &self.live[s as usize] {
                Some(l) if l.generation == g => break,
                _ => {
                    self.pending_positions.pop();
                }
            }
        }
        let oldest = self
            .pending_positions
            .peek()
            .map_or(pos, |&Reverse((p, ..))| p.min(pos));
        self.watermark = Some(self.watermark.map_or(oldest, |w| w.max(oldest)));
        self.free.push(slot);
    }

    /// Keeps a final EXT NEVER verdict so that a late writer of its value can take it back.
    fn keep_never(&mut self, reader: &Rc<Info>, read: &PendingRead, pos: Hlc, v: &TsViolation) {
        if !matches!(
            v,
            TsViolation::Ext {
                kind: ExtKind::Never,
                ..
            }
        ) {
            return;
        }
        if self.never_kept >= MAX_NEVER_KEPT {
            self.stats.never_not_kept += 1;
            return;
        }
        self.never_kept += 1;
        self.never
            .entry((read.key, read.value))
            .or_default()
            .push(NeverRead {
                reader: reader.clone(),
                read: read.clone(),
                pos,
                verdict: v.clone(),
            });
    }

    /// Takes back the EXT NEVER verdicts of reads of a value that the arriving `writer` writes
    /// (its final or overwritten writes, already among the kept writes): each is retracted and,
    /// when the read is still wrong, described again (BEFORE, UNCOMMITTED or AFTER) into `out`.
    fn retract_nevers(
        &mut self,
        writer: &Rc<Info>,
        own_writes: &[(u32, Option<i64>)],
        overwritten: &[(u32, Option<i64>)],
        out: &mut Vec<TsViolation>,
    ) {
        for &(k, value) in own_writes.iter().chain(overwritten) {
            let Some(records) = self.never.remove(&(k, value)) else {
                continue;
            };
            self.never_kept -= records.len();
            for record in records {
                let explained = self.read_ok(&record.read, record.pos, record.reader.arrival);
                self.counts.remove(&record.verdict);
                self.stats.retracted += 1;
                self.retractions.push(TsRetraction {
                    retracted: record.verdict,
                    writer: writer.txn_ref(),
                    explained,
                });
                if !explained {
                    let reader = Live {
                        info: record.reader,
                        reads: Vec::new(),
                        own_writes: Vec::new(),
                        overwritten: Vec::new(),
                        generation: 0,
                    };
                    out.push(self.describe_ext(&reader, &record.read, record.pos));
                }
            }
        }
    }

    fn describe_ext(&self, live: &Live, read: &PendingRead, pos: Hlc) -> TsViolation {
        let key_name = self.key_names[read.key as usize].clone();
        let me = live.info.arrival;
        let visible = self.visible(read.key, pos, me);
        let expected = visible.map_or(self.options.initial, |w| w.value);
        // Who wrote the value read, among the writes kept (and the reader's own).
        let own = live
            .own_writes
            .iter()
            .chain(&live.overwritten)
            .any(|&(k, v)| k == read.key && v == read.value);
        // The first-arrived kept writer of the value (its final or an overwritten write).
        let writer = self.key_state[read.key as usize]
            .writes
            .iter()
            .map(|(_, w)| w)
            .filter(|w| {
                w.value == read.value
                    || w.earlier
                        .iter()
                        .flat_map(|e| e.iter())
                        .any(|&v| v == read.value)
            })
            .min_by_key(|w| w.writer.arrival)
            .filter(|w| w.writer.arrival != me);
        let r = &live.info;
        let (read_text, expected_text, visible) = match &read.list {
            Some(list) => {
                let (snapshot, visible) = self.visible_list(read.key, pos, me);
                let whole = snapshot.then(list.own);
                let expected = match (whole.len, visible) {
                    (0, _) => "[]".to_string(),
                    (n, Some(w)) if list.own.len == 0 => format!(
                        "a list of {n} element{} ending with {}",
                        if n == 1 { "" } else { "s" },
                        show(w.value)
                    ),
                    (n, _) => format!("a list of {n} element{}", if n == 1 { "" } else { "s" }),
                };
                (list_text(&list.items), expected, visible)
            }
            None => (show(read.value), show(expected), visible),
        };
        let kind = if own && writer.is_none() {
            ExtKind::After
        } else if let Some(w) = writer {
            let w = &w.writer;
            let before = match self.options.level {
                TsLevel::Snapshot => w.commit <= pos,
                TsLevel::Serializable => w.commit < pos,
            };
            if before {
                ExtKind::Before
            } else if w.start <= pos {
                ExtKind::Uncommitted
            } else {
                ExtKind::After
            }
        } else if read.value == self.options.initial {
            ExtKind::Before
        } else {
            ExtKind::Never
        };
        TsViolation::Ext {
            txn: r.txn_ref(),
            key: key_name,
            op_index: read.op_index,
            read: read_text,
            expected: expected_text,
            expected_writer: visible.map(|w| w.writer.txn_ref()),
            kind,
            value_writer: writer.map(|w| w.writer.txn_ref()),
        }
    }

    /// Drops, per key touched since the last collection, the writes older than the
    /// watermark except the newest of them.
    fn collect_garbage(&mut self) {
        let Some(watermark) = self.watermark else {
            return;
        };
        let keys = std::mem::take(&mut self.dirty);
        for k in keys {
            let state = &mut self.key_state[k as usize];
            // Drop the oldest write while the next one is also at or before the watermark
            // (a snapshot at the watermark or later never sees it).
            while state
                .writes
                .key_at(1)
                .is_some_and(|&(next, _)| next <= watermark)
            {
                state.writes.pop_first();
                self.writes_kept -= 1;
            }
            if state.writes.len() > 1 {
                self.dirty.push(k);
            } else {
                self.is_dirty[k as usize] = false;
            }
        }
    }

    /// Committed writes held in memory, over all keys.
    pub fn writes_kept(&self) -> u64 {
        self.writes_kept
    }
}

fn show(v: Option<i64>) -> String {
    v.map_or_else(|| "null".to_string(), |v| v.to_string())
}

fn list_text(items: &[i64]) -> String {
    crate::history::timestamped::TsValue::List(items).to_string()
}

#[cfg(test)]
#[path = "aion_tests.rs"]
mod tests;
