//! Serializability by search over session prefixes: Biswas & Enea (OOPSLA'19) §4.1,
//! Algorithm 2 "checkSER", with dbcop's incremental bookkeeping (notes/biswas-enea.md §3.2).
//!
//! A state is a prefix of every chain (a vector of per-chain positions). A node may extend the
//! prefix when it heads its chain, all its DAG predecessors are placed, and (the valid
//! extension of Lemma 4.1) placing it overwrites no key whose last writer still has an
//! unplaced reader other than the node itself. Only the count of those pending readers is
//! kept per key: only the last writer of a key can have pending readers, so a node's reads
//! always see the last writers when it is placed. Under SI the node R_t may also not open
//! while another open transaction (R placed, W not yet) writes a key t writes.
//!
//! Whether a prefix can be completed depends only on the set of placed nodes (Lemma 4.1), so
//! prefixes that failed are memoised by their position vectors (one hash per new state, not
//! per bookkeeping step). The depth-first search is iterative, with an undo log.
//!
//! **Backjumping.** At a dead end (no head can be placed, or every placeable one failed) the
//! heads usually wait on each other in a cycle: a head waits on a chain when an unplaced DAG
//! predecessor of it lies in that chain, when it overwrites a key whose last writer L still has
//! an unplaced reader there, or (SI) when its transaction would open while a conflicting
//! transaction of that chain is open. Such a cycle proves that no completion exists while the
//! *culprits* stay placed (the writers L and the open read halves on it) and the waited-on
//! nodes stay unplaced; both hold in every state on the stack since the latest culprit was
//! placed, so all of them are memoised as failed and the search resumes at the choice that
//! placed the latest culprit. Without this, one early wrong guess (a writer placed before
//! another writer of its key that must precede one of its readers) shows up hundreds of
//! placements later, and chronological backtracking over 50 sessions never returns to it.
//! Only states proven failed are skipped, so the search stays complete.
//!
//! **Learned nogoods.** A dead end whose heads wait in a cycle is also kept as a rule over
//! nodes, not positions ([`Nogoods`]): the cycle's culprits placed and its heads unplaced is
//! dead in every state, so placing the last of those culprits is refused wherever the other
//! chains stand (conflict-directed learning, as in CDCL solvers). On 50 sessions × 500
//! serializable transactions it cuts the failed states about 8× (13,727 → 1,706).
//!
//! Heads are tried in order of their relative position in their chain (the least advanced
//! session first), which keeps the prefix close to a plausible real-time interleaving.
//!
//! Cost: O(∏(chain length + 1)) states, each step O(log k + reads + writes + DAG successors)
//! plus O(k) per dead end; polynomial for a fixed number of sessions (Corollary 4.3).

use std::collections::BTreeSet;
use std::ops::Bound;
use std::time::Instant;

use rustc_hash::FxHashMap;

pub(crate) use super::reduce::SearchResult;
use super::reduce::{Problem, Split, NO_NODE};

/// Bytes a memoised failed state costs beyond its key's bytes and its culprits: two
/// boxed-slice headers and the hash map's slot and control byte, rounded up for allocator
/// overhead.
const MEMO_ENTRY_OVERHEAD: u64 = 64;

/// Limits of one search.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub deadline: Option<Instant>,
    /// At most this many memoised failed states.
    pub max_failed_states: usize,
    /// At most this many bytes of memoised failed states (`None`: no budget): each costs a
    /// position per chain and its culprits, so wide histories reach the budget long before
    /// `max_failed_states`.
    pub max_memory: Option<u64>,
    /// Learn nogoods from dead ends whose heads wait in a cycle ([`Nogoods`]); off only in
    /// the tests that compare the search with and without them.
    pub learn: bool,
}

/// Statistics of one search.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SearchStats {
    pub steps: u64,
    pub failed_states: usize,
    /// Bytes the memoised failed states took (an estimate: their vectors plus map overhead).
    pub memo_bytes: u64,
    /// The search gave up because the memo reached [`Limits::max_memory`].
    pub out_of_memory: bool,
    /// Nogoods learned, and placements they refused.
    pub nogoods: usize,
    pub refusals: u64,
}

struct Frame {
    /// The node placed to reach this state (u32::MAX at the root).
    node: u32,
    /// The chain the node came from.
    chain: u32,
    /// The (priority, chain) of the last head tried from this state; every head before it in
    /// that order was tried too.
    tried: Option<(u32, u32)>,
    /// Undo-log length before the node was applied.
    undo: u32,
    /// Culprits gathered from this state's failed extensions ([`State::culprits`]).
    conflict: Vec<u32>,
}

/// One undo-log entry: a key's pending-reader count and last writer before a write.
#[derive(Clone, Copy)]
struct Saved {
    key: u32,
    pending: u32,
    last: u32,
}

/// Static indexes over the problem the search needs at dead ends.
struct Index {
    /// (chain, position in chain) of each node.
    chain_of: Vec<(u32, u32)>,
    /// DAG predecessors (CSR).
    pred_offsets: Vec<u32>,
    preds: Vec<u32>,
    /// Readers of each write slot (an index into `Problem::writes`), CSR.
    reader_offsets: Vec<u32>,
    readers: Vec<u32>,
    /// Readers of the initial value of each key, CSR.
    init_offsets: Vec<u32>,
    init_readers: Vec<u32>,
    /// Head order: relative position of each node in its chain.
    priority: Vec<u32>,
}

impl Index {
    fn new(p: &Problem) -> Index {
        let n = p.len();
        let mut chain_of = vec![(0u32, 0u32); n];
        let mut priority = vec![0u32; n];
        for (c, ch) in p.chains.iter().enumerate() {
            let len = ch.len().max(1) as u64;
            for (i, &v) in ch.iter().enumerate() {
                chain_of[v as usize] = (c as u32, i as u32);
                priority[v as usize] = ((i as u64 * (1 << 30)) / len) as u32;
            }
        }
        let mut pred_offsets = vec![0u32; n + 1];
        for v in 0..n as u32 {
            for &s in p.succ(v) {
                pred_offsets[s as usize + 1] += 1;
            }
        }
        for v in 0..n {
            pred_offsets[v + 1] += pred_offsets[v];
        }
        let mut cursor = pred_offsets.clone();
        let mut preds = vec![0u32; pred_offsets[n] as usize];
        for v in 0..n as u32 {
            for &s in p.succ(v) {
                preds[cursor[s as usize] as usize] = v;
                cursor[s as usize] += 1;
            }
        }
        // Readers per write slot and per initial key: counting pass, then filling.
        let slot_of = |src: u32, x: u32| -> usize {
            let ws = p.writes(src);
            let i = ws
                .binary_search_by_key(&x, |&(k, _)| k)
                .expect("a read's source writes the key");
            p.write_offsets[src as usize] as usize + i
        };
        let slots = p.writes.len();
        let keys = p.keys as usize;
        let mut reader_offsets = vec![0u32; slots + 1];
        let mut init_offsets = vec![0u32; keys + 1];
        for r in 0..n as u32 {
            for (&x, &src) in p.reads(r).iter().zip(p.read_sources(r)) {
                if src == NO_NODE {
                    init_offsets[x as usize + 1] += 1;
                } else {
                    reader_offsets[slot_of(src, x) + 1] += 1;
                }
            }
        }
        for i in 0..slots {
            reader_offsets[i + 1] += reader_offsets[i];
        }
        for i in 0..keys {
            init_offsets[i + 1] += init_offsets[i];
        }
        let mut rc = reader_offsets.clone();
        let mut ic = init_offsets.clone();
        let mut readers = vec![0u32; reader_offsets[slots] as usize];
        let mut init_readers = vec![0u32; init_offsets[keys] as usize];
        for r in 0..n as u32 {
            for (&x, &src) in p.reads(r).iter().zip(p.read_sources(r)) {
                if src == NO_NODE {
                    init_readers[ic[x as usize] as usize] = r;
                    ic[x as usize] += 1;
                } else {
                    let s = slot_of(src, x);
                    readers[rc[s] as usize] = r;
                    rc[s] += 1;
                }
            }
        }
        Index {
            chain_of,
            pred_offsets,
            preds,
            reader_offsets,
            readers,
            init_offsets,
            init_readers,
            priority,
        }
    }

    fn preds(&self, v: u32) -> &[u32] {
        &self.preds
            [self.pred_offsets[v as usize] as usize..self.pred_offsets[v as usize + 1] as usize]
    }

    /// The readers of `x` written by `writer` ([`NO_NODE`]: the initial value).
    fn readers(&self, p: &Problem, writer: u32, x: u32) -> &[u32] {
        if writer == NO_NODE {
            return &self.init_readers[self.init_offsets[x as usize] as usize
                ..self.init_offsets[x as usize + 1] as usize];
        }
        let ws = p.writes(writer);
        let i = ws
            .binary_search_by_key(&x, |&(k, _)| k)
            .expect("the last writer writes the key");
        let s = p.write_offsets[writer as usize] as usize + i;
        &self.readers[self.reader_offsets[s] as usize..self.reader_offsets[s + 1] as usize]
    }
}

/// The search state (the prefix placed so far and its bookkeeping).
struct State<'a> {
    p: &'a Problem,
    ix: Index,
    /// Per chain, how many of its nodes are placed.
    pos: Vec<u32>,
    /// Unplaced DAG predecessors per node.
    indeg: Vec<u32>,
    /// Per key, the unplaced readers of its last writer.
    pending: Vec<u32>,
    /// Per key, its last writer ([`NO_NODE`]: the initial transaction).
    last: Vec<u32>,
    /// SI: per key, the open transactions (read half placed, write half not) writing it.
    open: Vec<u32>,
    /// Per placed node, the stack depth of its frame (0: unplaced).
    depth: Vec<u32>,
    undo: Vec<Saved>,
    /// The chains' heads, by (priority, chain).
    heads: BTreeSet<(u32, u32)>,
}

impl State<'_> {
    fn is_placed(&self, v: u32) -> bool {
        let (c, i) = self.ix.chain_of[v as usize];
        i < self.pos[c as usize]
    }

    fn head(&self, c: usize) -> Option<u32> {
        self.p.chains[c].get(self.pos[c] as usize).copied()
    }

    /// Whether node `v` (heading its chain) may be placed now.
    fn valid(&self, v: u32) -> bool {
        let p = self.p;
        if self.indeg[v as usize] != 0 {
            return false;
        }
        let reads = p.reads(v);
        for &(x, _) in p.writes(v) {
            let own = reads.binary_search(&x).is_ok() as u32;
            if self.pending[x as usize] != own {
                return false;
            }
        }
        if p.split == Split::Snapshot && p.is_read_half(v) {
            for &(x, _) in p.writes(v + 1) {
                if self.open[x as usize] != 0 {
                    return false;
                }
            }
        }
        true
    }

    /// Places `v`, the head of chain `c`, as the frame at `depth`.
    fn apply(&mut self, v: u32, c: usize, depth: u32) {
        let p = self.p;
        for &x in p.reads(v) {
            self.pending[x as usize] -= 1;
        }
        for &(x, readers) in p.writes(v) {
            self.undo.push(Saved {
                key: x,
                pending: self.pending[x as usize],
                last: self.last[x as usize],
            });
            self.pending[x as usize] = readers;
            self.last[x as usize] = v;
        }
        if p.split == Split::Snapshot {
            if p.is_read_half(v) {
                for &(x, _) in p.writes(v + 1) {
                    self.open[x as usize] += 1;
                }
            } else {
                for &(x, _) in p.writes(v) {
                    self.open[x as usize] -= 1;
                }
            }
        }
        for &s in p.succ(v) {
            self.indeg[s as usize] -= 1;
        }
        self.heads.remove(&(self.ix.priority[v as usize], c as u32));
        self.pos[c] += 1;
        if let Some(next) = self.head(c) {
            self.heads
                .insert((self.ix.priority[next as usize], c as u32));
        }
        self.depth[v as usize] = depth;
    }

    /// Undoes [`Self::apply`] of `v` from chain `c`, whose undo log started at `mark`.
    fn revert(&mut self, v: u32, c: usize, mark: u32) {
        let p = self.p;
        self.depth[v as usize] = 0;
        if let Some(next) = self.head(c) {
            self.heads
                .remove(&(self.ix.priority[next as usize], c as u32));
        }
        self.pos[c] -= 1;
        self.heads.insert((self.ix.priority[v as usize], c as u32));
        for &s in p.succ(v) {
            self.indeg[s as usize] += 1;
        }
        if p.split == Split::Snapshot {
            if p.is_read_half(v) {
                for &(x, _) in p.writes(v + 1) {
                    self.open[x as usize] -= 1;
                }
            } else {
                for &(x, _) in p.writes(v) {
                    self.open[x as usize] += 1;
                }
            }
        }
        while self.undo.len() > mark as usize {
            let s = self.undo.pop().expect("an undo entry");
            self.pending[s.key as usize] = s.pending;
            self.last[s.key as usize] = s.last;
        }
        for &x in p.reads(v) {
            self.pending[x as usize] += 1;
        }
    }

    /// Why head `h` cannot be placed now: a chain holding a node it waits on (a node at or
    /// after that chain's head), and the placed node that makes it wait ([`NO_NODE`]: none,
    /// the wait holds in every order). A wait without a culprit is preferred, then the one
    /// whose culprit was placed first. `None` when `h` could be placed.
    fn wait(&self, h: u32) -> Option<(u32, u32)> {
        let p = self.p;
        let chain = |v: u32| self.ix.chain_of[v as usize].0;
        if self.indeg[h as usize] != 0 {
            for &u in self.ix.preds(h) {
                if !self.is_placed(u) {
                    return Some((chain(u), NO_NODE));
                }
            }
        }
        let mut best: Option<(u32, u32)> = None;
        let mut consider = |c: u32, culprit: u32| {
            let rank = |v: u32| {
                if v == NO_NODE {
                    0
                } else {
                    self.depth[v as usize]
                }
            };
            if best.map_or(true, |(_, b)| rank(culprit) < rank(b)) {
                best = Some((c, culprit));
            }
        };
        let reads = p.reads(h);
        for &(x, _) in p.writes(h) {
            let own = reads.binary_search(&x).is_ok() as u32;
            if self.pending[x as usize] == own {
                continue;
            }
            let l = self.last[x as usize];
            if let Some(&r) = self
                .ix
                .readers(p, l, x)
                .iter()
                .find(|&&r| r != h && !self.is_placed(r))
            {
                consider(chain(r), l);
            }
        }
        if p.split == Split::Snapshot && p.is_read_half(h) {
            for &(x, _) in p.writes(h + 1) {
                if self.open[x as usize] == 0 {
                    continue;
                }
                // An open transaction's write half heads its chain.
                for &(_, c) in &self.heads {
                    let w = self.head(c as usize).expect("a head");
                    if !p.is_read_half(w)
                        && w != h + 1
                        && p.writes(w).binary_search_by_key(&x, |&(k, _)| k).is_ok()
                    {
                        consider(c, w - 1);
                        break;
                    }
                }
            }
        }
        best
    }

    /// The culprits of a dead end (no head placeable, or every placeable head's extension
    /// failed with the culprits `children` already gathered): the placed nodes whose
    /// placement makes the heads wait. Any reachable state holding all of them, and none of
    /// the nodes waited on, is dead too. When the waiting heads wait on each other in a
    /// cycle, the cycle's culprits alone suffice; otherwise every waiting head's culprit and
    /// the children's count.
    fn culprits(&self, children: &[u32]) -> (Vec<u32>, Option<Vec<u32>>) {
        let k = self.p.chains.len();
        // Per chain: the chain its head waits on and the culprit (u32::MAX: placeable).
        let mut target = vec![(u32::MAX, NO_NODE); k];
        for &(_, c) in &self.heads {
            let h = self.head(c as usize).expect("a head");
            match self.wait(h) {
                Some(w) => target[c as usize] = w,
                // Not placeable for a reason no wait names (the bookkeeping's invariants
                // exclude it): fall back to the state itself, every placed node a culprit.
                None if !self.valid(h) => {
                    let all = (0..self.p.len() as u32)
                        .filter(|&v| self.depth[v as usize] != 0)
                        .collect();
                    return (all, None);
                }
                None => {}
            }
        }
        // A cycle among waiting heads: walk each unvisited head's waits (colours: 0 new,
        // 1 on the current walk, 2 done).
        let mut colour = vec![0u8; k];
        for &(_, start) in &self.heads {
            let mut c = start as usize;
            while colour[c] == 0 && target[c].0 != u32::MAX {
                colour[c] = 1;
                c = target[c].0 as usize;
            }
            if colour[c] == 1 {
                let first = c;
                let mut out = Vec::new();
                let mut heads = Vec::new();
                loop {
                    if target[c].1 != NO_NODE {
                        out.push(target[c].1);
                    }
                    heads.push(self.head(c).expect("a head"));
                    c = target[c].0 as usize;
                    if c == first {
                        break;
                    }
                }
                return (out, Some(heads));
            }
            let mut c = start as usize;
            while colour[c] == 1 {
                colour[c] = 2;
                c = target[c].0 as usize;
            }
        }
        let mut out = children.to_vec();
        out.extend(
            target
                .iter()
                .filter(|&&(c, culprit)| c != u32::MAX && culprit != NO_NODE)
                .map(|&(_, culprit)| culprit),
        );
        (out, None)
    }
}

/// Learned nogoods (conflict-directed learning on top of the exact-state memo). A dead end
/// whose waiting heads wait on each other in a cycle stays dead in *every* reachable state
/// where the cycle's culprits are placed and its heads are not: each head waits on a node at
/// or after the next head of the cycle, for a reason its culprit keeps alive (a last writer L
/// with an unplaced reader stays the last writer, since no other writer of the key may be
/// placed while the reader is pending; an open read half stays open until its write half, the
/// next head, is placed; a DAG predecessor needs no culprit), so the first head of the cycle
/// to be placed would need the next one placed before it. Such a cycle is kept as a rule that
/// refuses to place the last of its culprits while the others are placed and its heads are
/// not: the same mistake, made again in another interleaving of the other chains, is refused
/// at once instead of being rediscovered placements later (the exact-state memo only catches
/// the very same prefix). Only proven-dead states are refused, so the search stays complete.
struct Nogoods {
    /// Per nogood, its culprits then its heads (flat): culprits at
    /// `items[start[i]..mid[i]]`, heads at `items[mid[i]..start[i + 1]]`.
    items: Vec<u32>,
    start: Vec<u32>,
    mid: Vec<u32>,
    /// Per node, the nogoods it is a culprit of.
    watch: Vec<Vec<u32>>,
}

impl Nogoods {
    fn new(nodes: usize) -> Nogoods {
        Nogoods {
            items: Vec::new(),
            start: vec![0],
            mid: Vec::new(),
            watch: vec![Vec::new(); nodes],
        }
    }

    /// Learns the nogood of a cycle (`culprits` sorted and distinct, `heads` the cycle's
    /// heads); returns the bytes it takes.
    fn learn(&mut self, culprits: &[u32], heads: &[u32]) -> u64 {
        if culprits.is_empty() {
            // Dead in every state: the search backjumps to the root and is exhausted.
            return 0;
        }
        let i = self.mid.len() as u32;
        self.items.extend_from_slice(culprits);
        self.mid.push(self.items.len() as u32);
        self.items.extend_from_slice(heads);
        self.start.push(self.items.len() as u32);
        for &c in culprits {
            self.watch[c as usize].push(i);
        }
        NOGOOD_OVERHEAD + 8 * culprits.len() as u64 + 4 * heads.len() as u64
    }

    /// When placing `v` now would complete a nogood: that nogood's other culprits (the placed
    /// nodes that make `v`'s extension dead).
    fn refuses<'s>(&'s self, st: &'s State, v: u32) -> Option<impl Iterator<Item = u32> + 's> {
        let i = *self.watch[v as usize].iter().find(|&&i| {
            let (a, m, b) = self.bounds(i as usize);
            self.items[a..m]
                .iter()
                .all(|&u| u == v || st.depth[u as usize] != 0)
                && self.items[m..b].iter().all(|&h| !st.is_placed(h))
        })? as usize;
        let (a, m, _) = self.bounds(i);
        Some(self.items[a..m].iter().copied().filter(move |&u| u != v))
    }

    fn bounds(&self, i: usize) -> (usize, usize, usize) {
        (
            self.start[i] as usize,
            self.mid[i] as usize,
            self.start[i + 1] as usize,
        )
    }
}

/// Bytes a learned nogood costs beyond its nodes: its offsets and watch-list entries' growth.
const NOGOOD_OVERHEAD: u64 = 16;

/// A position vector as the memo's key: a byte per chain when every chain is shorter than
/// 255 nodes (many short sessions), else four.
fn pack(pos: &[u32], narrow: bool, key: &mut Vec<u8>) {
    key.clear();
    if narrow {
        key.extend(pos.iter().map(|&p| p as u8));
    } else {
        key.extend(pos.iter().flat_map(|p| p.to_le_bytes()));
    }
}

/// Runs the search.
pub(crate) fn search(p: &Problem, limits: Limits) -> (SearchResult, SearchStats) {
    let k = p.chains.len();
    let total = p.len();
    let ix = Index::new(p);
    let heads = p
        .chains
        .iter()
        .enumerate()
        .filter(|(_, ch)| !ch.is_empty())
        .map(|(c, ch)| (ix.priority[ch[0] as usize], c as u32))
        .collect();
    let mut st = State {
        p,
        ix,
        pos: vec![0u32; k],
        indeg: p.indegree.clone(),
        pending: p.init_readers.clone(),
        last: vec![NO_NODE; p.keys as usize],
        open: vec![
            0u32;
            if p.split == Split::Snapshot {
                p.keys as usize
            } else {
                0
            }
        ],
        depth: vec![0u32; total],
        undo: Vec::new(),
        heads,
    };
    // Failed states (position vectors, packed: see [`pack`]) with their culprits.
    let mut failed: FxHashMap<Box<[u8]>, Box<[u32]>> = FxHashMap::default();
    let narrow = p.chains.iter().map(Vec::len).max().unwrap_or(0) < u8::MAX as usize;
    let mut key: Vec<u8> = Vec::with_capacity(if narrow { k } else { 4 * k });
    let mut stack: Vec<Frame> = vec![Frame {
        node: u32::MAX,
        chain: 0,
        tried: None,
        undo: 0,
        conflict: Vec::new(),
    }];
    let mut stats = SearchStats::default();
    let mut nogoods = Nogoods::new(total);
    loop {
        if stack.len() - 1 == total {
            let order = stack.iter().skip(1).map(|f| f.node).collect();
            stats.failed_states = failed.len();
            return (SearchResult::Found(order), stats);
        }
        stats.steps += 1;
        if stats.steps % 4096 == 0 {
            if limits.deadline.is_some_and(|d| Instant::now() >= d) || crate::interrupt::requested()
            {
                stats.failed_states = failed.len();
                return (SearchResult::GaveUp, stats);
            }
            if failed.len() > limits.max_failed_states {
                stats.failed_states = failed.len();
                return (SearchResult::GaveUp, stats);
            }
        }
        let top = stack.len() - 1;
        let range = match stack[top].tried {
            None => st.heads.range(..),
            Some(from) => st.heads.range((Bound::Excluded(from), Bound::Unbounded)),
        };
        let mut chosen = None;
        for &(pr, c) in range {
            let v = p.chains[c as usize][st.pos[c as usize] as usize];
            if st.valid(v) {
                chosen = Some((pr, c as usize, v));
                break;
            }
        }
        match chosen {
            Some((pr, c, v)) => {
                stack[top].tried = Some((pr, c as u32));
                st.pos[c] += 1;
                pack(&st.pos, narrow, &mut key);
                let known = failed.get(&key[..]);
                st.pos[c] -= 1;
                if let Some(culprits) = known {
                    let conflict = &mut stack[top].conflict;
                    conflict.extend(culprits.iter().copied().filter(|&u| u != v));
                    continue;
                }
                if let Some(others) = nogoods.refuses(&st, v) {
                    stats.refusals += 1;
                    stack[top].conflict.extend(others);
                    continue;
                }
                let mark = st.undo.len() as u32;
                st.apply(v, c, stack.len() as u32);
                stack.push(Frame {
                    node: v,
                    chain: c as u32,
                    tried: None,
                    undo: mark,
                    conflict: Vec::new(),
                });
            }
            None => {
                if stack.len() == 1 {
                    stats.failed_states = failed.len();
                    return (SearchResult::Exhausted, stats);
                }
                // Pop this state, and every state below it that holds all its culprits
                // (they are dead for the same reason): back to the latest culprit.
                let (mut culprits, cycle_heads) = st.culprits(&stack[top].conflict);
                culprits.sort_unstable();
                culprits.dedup();
                if let Some(heads) = cycle_heads.filter(|_| limits.learn) {
                    stats.memo_bytes += nogoods.learn(&culprits, &heads);
                    stats.nogoods = nogoods.mid.len();
                }
                loop {
                    if stack.len() == 1 {
                        stats.failed_states = failed.len();
                        return (SearchResult::Exhausted, stats);
                    }
                    pack(&st.pos, narrow, &mut key);
                    stats.memo_bytes +=
                        MEMO_ENTRY_OVERHEAD + key.len() as u64 + 4 * culprits.len() as u64;
                    if limits.max_memory.is_some_and(|m| stats.memo_bytes > m) {
                        stats.failed_states = failed.len();
                        stats.out_of_memory = true;
                        return (SearchResult::GaveUp, stats);
                    }
                    failed.insert(key.as_slice().into(), culprits.clone().into_boxed_slice());
                    let f = stack.pop().expect("a frame");
                    st.revert(f.node, f.chain as usize, f.undo);
                    if let Ok(i) = culprits.binary_search(&f.node) {
                        culprits.remove(i);
                        let parent = stack.len() - 1;
                        stack[parent].conflict.extend_from_slice(&culprits);
                        break;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{pack, search, Limits, SearchResult, SearchStats};
    use crate::generate::{generate, Consistency, GenerateParams};
    use crate::ser::reduce::{build, snapshot_given_edges, Problem, Split};
    use crate::ser::saturate::{saturate, saturate_with, Bounds, Rules};
    use crate::ser::smt_problem;
    use crate::ser::txns::Txns;
    use crate::ser::verify::verify_nodes;

    /// The search problem of `level` (as [`crate::ser::decide`] builds it), or `None` when
    /// the saturation already finds a cycle.
    fn problem(txns: &Txns, split: Split) -> Option<Problem> {
        let rules = match split {
            Split::None => Rules::WwRw,
            Split::Snapshot => Rules::Ww,
            Split::Prefix => Rules::CausalOnly,
        };
        let sat = saturate(txns, rules, &Bounds::NONE).unwrap();
        if sat.cycle.is_some() {
            return None;
        }
        if split == Split::None {
            return Some(build(txns, &sat, split));
        }
        let halves = txns.split();
        let given = snapshot_given_edges(&sat, split);
        let s = saturate_with(&halves, Rules::WwRw, &given, &Bounds::NONE).unwrap();
        (s.cycle.is_none()).then(|| build(&halves, &s, split))
    }

    fn run(p: &Problem, learn: bool) -> (SearchResult, SearchStats) {
        search(
            p,
            Limits {
                deadline: None,
                max_failed_states: usize::MAX,
                max_memory: None,
                learn,
            },
        )
    }

    /// Medium random histories (enough sessions and conflicts for dead ends whose heads wait
    /// in a cycle): the search with learned nogoods answers as without them and as Z3, at
    /// SER, SI and PC, and every order it finds replays.
    #[test]
    fn learned_nogoods_never_change_an_answer() {
        let (mut learned, mut refused, mut answers) = (0usize, 0u64, [0u32; 2]);
        for seed in 0..120u64 {
            let params = GenerateParams {
                sessions: [6, 8, 12][seed as usize % 3],
                txns_per_session: [4, 3, 2][seed as usize % 3],
                ops_per_txn: 4,
                keys: [4, 6, 8][seed as usize % 3],
                consistency: [Consistency::Causal, Consistency::Serializable]
                    [(seed / 3 % 2) as usize],
                seed,
                ..GenerateParams::default()
            };
            let txns = Txns::from_history(&generate(&params).unwrap());
            for split in [Split::None, Split::Snapshot, Split::Prefix] {
                let Some(p) = problem(&txns, split) else {
                    continue;
                };
                let (with, stats) = run(&p, true);
                let (without, _) = run(&p, false);
                let (z3, why) = smt_problem::solve(&p, None);
                learned += stats.nogoods;
                refused += stats.refusals;
                let found = |r: &SearchResult| match r {
                    SearchResult::Found(order) => {
                        assert_eq!(verify_nodes(&p, order), Ok(()), "seed {seed} {split:?}");
                        true
                    }
                    SearchResult::Exhausted => false,
                    SearchResult::GaveUp => panic!("seed {seed} {split:?}: gave up ({why})"),
                };
                let answer = found(&with);
                assert_eq!(answer, found(&without), "seed {seed} {split:?}");
                assert_eq!(answer, found(&z3), "seed {seed} {split:?}");
                answers[answer as usize] += 1;
            }
        }
        ewriteln!("answers [no, yes] {answers:?}; {learned} nogoods, {refused} refusals");
        assert!(answers[0] > 0 && answers[1] > 0, "{answers:?}");
        assert!(
            learned > 0 && refused > 0,
            "{learned} nogoods, {refused} refusals"
        );
    }

    /// 50 sessions × 500 serializable transactions, many keys (issue 23's `ser-1m` shape,
    /// smaller): learning keeps the search from rediscovering the same dead ends.
    #[test]
    fn learned_nogoods_cut_the_failed_states_of_a_serializable_history() {
        let params = GenerateParams {
            sessions: 50,
            txns_per_session: 500,
            ops_per_txn: 8,
            keys: 10_000,
            consistency: Consistency::Serializable,
            seed: 1,
            ..GenerateParams::default()
        };
        let txns = Txns::from_history(&generate(&params).unwrap());
        let p = problem(&txns, Split::None).expect("serializable: no forced cycle");
        let (with, learning) = run(&p, true);
        let (without, plain) = run(&p, false);
        assert!(matches!(with, SearchResult::Found(_)));
        assert!(matches!(without, SearchResult::Found(_)));
        assert!(learning.nogoods > 0);
        assert!(
            2 * learning.failed_states < plain.failed_states,
            "{} failed states with nogoods, {} without",
            learning.failed_states,
            plain.failed_states
        );
    }

    #[test]
    fn memo_keys_take_a_byte_per_chain_when_every_chain_is_short() {
        let mut key = Vec::new();
        pack(&[0, 3, 254], true, &mut key);
        assert_eq!(key, [0, 3, 254]);
        pack(&[0, 300], false, &mut key);
        assert_eq!(key, [0, 0, 0, 0, 44, 1, 0, 0]);
        // Distinct positions, distinct keys.
        let mut other = Vec::new();
        pack(&[0, 3, 253], true, &mut other);
        pack(&[0, 3, 254], true, &mut key);
        assert_ne!(key, other);
    }
}
