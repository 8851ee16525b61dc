//! The transaction-level view the strong-level engines work on: Biswas & Enea (OOPSLA'19)
//! §2.1–2.2 after normalisation (their simplifying assumptions 1–3, notes §5 items 3–4).
//!
//! Only committed transactions take part; transaction 0 is the initial transaction. A
//! transaction's *external reads* are its distinct `(key, writer)` pairs of reads of other
//! transactions' writes (internal reads are checked by read consistency and then dropped); its
//! writes are the keys it writes (only the last write of a key is visible to others). Session
//! order is a list of chains, one per session.
//!
//! The view is self-contained, so a subset of transactions ([`Txns::restrict`]) is again a
//! history: the components of the decomposition and the cores of the explanations are made
//! this way. Dropping a transaction drops the reads of its writes; every constraint of the
//! subset is a constraint of the whole, so a subset without a serial order (or SI / PC commit
//! order) proves that the whole has none.

use crate::history::{History, KeyId, OpId, OpKind, TxnId, INITIAL_TXN};

/// "None" in the flat arrays of the engines.
pub(crate) const NONE: u32 = u32::MAX;

/// One external read: `key` read from local transaction `writer` by the operation `op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Read {
    pub key: u32,
    pub writer: u32,
    pub op: OpId,
}

/// One write: the last write `op` of `key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Write {
    pub key: u32,
    pub op: OpId,
}

/// The renumbering tables [`Txns::restrict_to`] reuses between calls: for each transaction
/// and key of the whole view, its id in the sub-history being built ([`NONE`] between calls).
#[derive(Debug, Default)]
pub(crate) struct Renumbering {
    local: Vec<u32>,
    key_local: Vec<u32>,
}

/// Committed transactions with dense local ids (0 = initial), their external reads and
/// writes (flat CSR arrays, sorted by key) and their session chains.
#[derive(Debug, Clone)]
pub(crate) struct Txns {
    /// The history's id of each local transaction.
    pub orig: Vec<TxnId>,
    /// The chain (session) of each local transaction; [`NONE`] for the initial one.
    pub chain: Vec<u32>,
    /// The local transactions of each chain, in session order.
    pub chains: Vec<Vec<u32>>,
    read_offsets: Vec<u32>,
    reads: Vec<Read>,
    write_offsets: Vec<u32>,
    writes: Vec<Write>,
    /// Number of (local) keys.
    pub keys: u32,
    /// The history's id of each local key.
    pub key_orig: Vec<KeyId>,
}

impl Txns {
    /// The committed transactions of `history`. Reads without a committed external writer are
    /// left out (read consistency reports them; callers check it first).
    pub fn from_history(history: &History) -> Txns {
        let n = history.txn_count();
        let mut local = vec![NONE; n];
        let mut orig = Vec::new();
        for t in history.committed_txns() {
            local[t as usize] = orig.len() as u32;
            orig.push(t);
        }
        let mut chain = vec![NONE; orig.len()];
        let mut chains = Vec::new();
        for session in history.sessions() {
            let members: Vec<u32> = session
                .txns()
                .filter(|&t| local[t as usize] != NONE)
                .map(|t| local[t as usize])
                .collect();
            if members.is_empty() {
                continue;
            }
            for &m in &members {
                chain[m as usize] = chains.len() as u32;
            }
            chains.push(members);
        }
        let mut read_offsets = vec![0u32];
        let mut reads = Vec::new();
        let mut write_offsets = vec![0u32];
        let mut writes = Vec::new();
        for &t in &orig {
            let start = reads.len();
            let ops = history.txn(t).ops();
            for o in ops.clone() {
                let op = history.op(o);
                match op.kind {
                    OpKind::Read => {
                        if let Some(w) = history.writer_txn(o) {
                            if w != t && local[w as usize] != NONE {
                                reads.push(Read {
                                    key: op.key,
                                    writer: local[w as usize],
                                    op: o,
                                });
                            }
                        }
                    }
                    OpKind::Write => {}
                }
            }
            reads[start..].sort_unstable_by_key(|r| (r.key, r.writer, r.op));
            dedup_by_key_writer(&mut reads, start);
            read_offsets.push(reads.len() as u32);
            // The initial transaction writes every key implicitly.
            if t != INITIAL_TXN {
                for &k in history.keys_written(t) {
                    if let Some(op) = history.last_write(t, k) {
                        writes.push(Write { key: k, op });
                    }
                }
            }
            write_offsets.push(writes.len() as u32);
        }
        let keys = history.key_count() as u32;
        Txns {
            orig,
            chain,
            chains,
            read_offsets,
            reads,
            write_offsets,
            writes,
            keys,
            key_orig: (0..keys).collect(),
        }
    }

    /// Number of transactions, the initial one included.
    pub fn len(&self) -> usize {
        self.orig.len()
    }

    /// External reads of local transaction `t`, sorted by key.
    pub fn reads(&self, t: u32) -> &[Read] {
        &self.reads
            [self.read_offsets[t as usize] as usize..self.read_offsets[t as usize + 1] as usize]
    }

    /// Writes of local transaction `t`, sorted by key.
    pub fn writes(&self, t: u32) -> &[Write] {
        &self.writes
            [self.write_offsets[t as usize] as usize..self.write_offsets[t as usize + 1] as usize]
    }

    /// Whether `t` writes `key`.
    pub fn writes_key(&self, t: u32, key: u32) -> bool {
        self.writes(t).binary_search_by_key(&key, |w| w.key).is_ok()
    }

    /// The sub-history of the transactions with `keep[t]` (the initial one is always kept),
    /// renumbered densely, keys renumbered to those used; reads of dropped writers are
    /// dropped, chains keep their order (empty chains disappear).
    pub fn restrict(&self, keep: &[bool]) -> Txns {
        let members: Vec<u32> = (1..self.len() as u32)
            .filter(|&t| keep[t as usize])
            .collect();
        self.restrict_to(&members, &mut Renumbering::default())
    }

    /// [`Txns::restrict`] to the local transactions `members` (ascending, without the
    /// initial one), in time and fresh memory proportional to the members, their operations
    /// and their chains, not to the whole history: `scratch` holds the renumbering tables
    /// between calls and is left clean.
    pub fn restrict_to(&self, members: &[u32], scratch: &mut Renumbering) -> Txns {
        let Renumbering { local, key_local } = scratch;
        if local.len() < self.len() {
            local.resize(self.len(), NONE);
        }
        if key_local.len() < self.keys as usize {
            key_local.resize(self.keys as usize, NONE);
        }
        let mut from = Vec::with_capacity(members.len() + 1);
        from.push(0u32);
        from.extend_from_slice(members);
        let mut orig = Vec::with_capacity(from.len());
        for &t in &from {
            local[t as usize] = orig.len() as u32;
            orig.push(self.orig[t as usize]);
        }
        let mut key_orig = Vec::new();
        // This Txns' ids of the keys used, in local order (to clear `key_local` after).
        let mut keys_used: Vec<u32> = Vec::new();
        let mut map_key = |k: u32, key_orig: &mut Vec<KeyId>| {
            if key_local[k as usize] == NONE {
                key_local[k as usize] = key_orig.len() as u32;
                key_orig.push(self.key_orig[k as usize]);
                keys_used.push(k);
            }
            key_local[k as usize]
        };
        let mut read_offsets = Vec::with_capacity(from.len() + 1);
        read_offsets.push(0u32);
        let mut reads = Vec::new();
        let mut write_offsets = Vec::with_capacity(from.len() + 1);
        write_offsets.push(0u32);
        let mut writes = Vec::new();
        for &t in &from {
            let start = reads.len();
            for r in self.reads(t) {
                if local[r.writer as usize] != NONE {
                    reads.push(Read {
                        key: map_key(r.key, &mut key_orig),
                        writer: local[r.writer as usize],
                        op: r.op,
                    });
                }
            }
            reads[start..].sort_unstable_by_key(|r| (r.key, r.writer, r.op));
            read_offsets.push(reads.len() as u32);
            let wstart = writes.len();
            if t != 0 {
                for w in self.writes(t) {
                    writes.push(Write {
                        key: map_key(w.key, &mut key_orig),
                        op: w.op,
                    });
                }
            }
            writes[wstart..].sort_unstable();
            write_offsets.push(writes.len() as u32);
        }
        // The initial transaction writes every key that is used.
        let keys = key_orig.len() as u32;
        // The members' chains, in the order of the whole history's chains.
        let mut touched: Vec<u32> = members
            .iter()
            .map(|&t| self.chain[t as usize])
            .filter(|&c| c != NONE)
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let mut chain = vec![NONE; orig.len()];
        let mut chains = Vec::with_capacity(touched.len());
        for c in touched {
            let kept: Vec<u32> = self.chains[c as usize]
                .iter()
                .filter(|&&t| local[t as usize] != NONE)
                .map(|&t| local[t as usize])
                .collect();
            for &m in &kept {
                chain[m as usize] = chains.len() as u32;
            }
            chains.push(kept);
        }
        for &t in &from {
            local[t as usize] = NONE;
        }
        for &k in &keys_used {
            key_local[k as usize] = NONE;
        }
        Txns {
            orig,
            chain,
            chains,
            read_offsets,
            reads,
            write_offsets,
            writes,
            keys,
            key_orig,
        }
    }

    /// The read/write split h_R|W (Biswas & Enea §4.2): transaction t becomes R_t = 2t − 1
    /// (its reads, from the write halves of their writers) and W_t = 2t (its writes), in the
    /// chain R_t1 W_t1 R_t2 W_t2 … of its session. Both halves keep t's original id.
    pub fn split(&self) -> Txns {
        let n = self.len();
        let m = 2 * n - 1;
        let half_r = |t: u32| 2 * t - 1;
        let half_w = |t: u32| if t == INIT { INIT } else { 2 * t };
        let mut orig = vec![self.orig[0]; m];
        let mut chain = vec![NONE; m];
        for t in 1..n as u32 {
            orig[half_r(t) as usize] = self.orig[t as usize];
            orig[half_w(t) as usize] = self.orig[t as usize];
            chain[half_r(t) as usize] = self.chain[t as usize];
            chain[half_w(t) as usize] = self.chain[t as usize];
        }
        let chains = self
            .chains
            .iter()
            .map(|c| c.iter().flat_map(|&t| [half_r(t), half_w(t)]).collect())
            .collect();
        // Node 0 (initial) has no operations; then R_1, W_1, R_2, W_2, …
        let mut read_offsets = vec![0u32, 0];
        let mut reads = Vec::with_capacity(self.reads.len());
        let mut write_offsets = vec![0u32, 0];
        let mut writes = Vec::with_capacity(self.writes.len());
        for t in 1..n as u32 {
            reads.extend(self.reads(t).iter().map(|r| Read {
                writer: half_w(r.writer),
                ..*r
            }));
            read_offsets.push(reads.len() as u32);
            write_offsets.push(writes.len() as u32);
            read_offsets.push(reads.len() as u32);
            writes.extend_from_slice(self.writes(t));
            write_offsets.push(writes.len() as u32);
        }
        Txns {
            orig,
            chain,
            chains,
            read_offsets,
            reads,
            write_offsets,
            writes,
            keys: self.keys,
            key_orig: self.key_orig.clone(),
        }
    }

    /// Per key, the writers other than the initial transaction, grouped by chain in session
    /// order: `(offsets, writers)` with key `k`'s writers at `offsets[k]..offsets[k+1]`.
    pub fn writers_by_key(&self) -> (Vec<u32>, Vec<u32>) {
        let mut count = vec![0u32; self.keys as usize + 1];
        for t in 1..self.len() as u32 {
            for w in self.writes(t) {
                count[w.key as usize + 1] += 1;
            }
        }
        for k in 0..self.keys as usize {
            count[k + 1] += count[k];
        }
        let mut cursor = count.clone();
        let mut out = vec![0u32; count[self.keys as usize] as usize];
        for c in &self.chains {
            for &t in c {
                for w in self.writes(t) {
                    out[cursor[w.key as usize] as usize] = t;
                    cursor[w.key as usize] += 1;
                }
            }
        }
        (count, out)
    }
}

/// Keeps the first read of each `(key, writer)` pair among `reads[start..]` (sorted).
fn dedup_by_key_writer(reads: &mut Vec<Read>, start: usize) {
    let mut write = start;
    for i in start..reads.len() {
        if write == start
            || (reads[write - 1].key, reads[write - 1].writer) != (reads[i].key, reads[i].writer)
        {
            reads[write] = reads[i];
            write += 1;
        }
    }
    reads.truncate(write);
}

/// The initial transaction's local id.
pub(crate) const INIT: u32 = 0;
