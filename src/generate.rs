//! Random histories for tests and benchmarks (`isopredict generate`), optionally consistent at
//! a chosen level by simulating a store.
//!
//! The shape follows the parametric generators of dbcop (Biswas & Enea, OOPSLA'19 §6: sessions,
//! transactions per session, operations per transaction, variables) and PolySI/Plume (Plume
//! §5.1: read ratio and a uniform, Zipf or hotspot key distribution); the consistent modes
//! simulate a store, one transaction at a time, whose reads are chosen so that the level's
//! axioms (Biswas & Enea, Fig. 2) hold for the commit order "order in which the simulation ran
//! the transactions". How each mode guarantees its level is documented on [`Consistency`].
//!
//! Every write writes a fresh value (a global counter from 1; 0 is every key's initial value),
//! so (key, value) identifies a write. Keys are named `0`, `1`, … (in key-distribution rank
//! order: with Zipf or hotspot, key `0` is the hottest). Every history is read consistent in
//! every mode: a transaction that wrote a key reads back its own latest write, and no read sees
//! an aborted or overwritten (intermediate) write. Everything is decided by the seed
//! ([`rng::Rng`] is our own xoshiro256**, stable across versions).
//!
//! Cost: O(events) time plus, per read, a binary search (rc) or a backwards scan over the
//! key's newest versions until a visible one (ra, cc: short in practice); memory is the
//! history itself plus one entry per committed write. The `cc` mode keeps a vector clock per
//! session (sessions² words).
//!
//! [`timestamped`] generates the other shape of history: committed transactions with start and
//! commit timestamps, from a simulated timestamp-based SI store.

pub mod keys;
pub mod list_append;
pub mod rng;
pub mod timestamped;

use std::fmt;
use std::str::FromStr;

use crate::error::InputError;
use crate::history::{History, HistoryBuilder, KeyId, Level, ReadFrom};
pub use keys::{KeyDistribution, KeySampler};
use rng::{splitmix64, Rng};

/// Which store the generator simulates, i.e. which level the history is guaranteed to satisfy.
///
/// Transactions run one at a time in a random interleaving of the sessions; that order is the
/// commit order `co` used in each argument below. Aborted transactions' writes are never seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consistency {
    /// No guarantee: each read returns a uniformly random earlier committed version of its key
    /// (the initial value included). Usually violates every level on big histories.
    None,
    /// Serializable: each read returns the latest committed version, so `co` is a serial order.
    Serializable,
    /// Causal (CC): each transaction reads from a causally closed snapshot. Every session keeps
    /// a vector clock over the sessions' committed transactions; a transaction starts from its
    /// session's clock, joined (with probability ½) with another random session's clock, and
    /// each read returns the `co`-latest version visible in that clock. Clocks only ever join
    /// clocks of transactions they contain, so the snapshot contains the whole causal past of
    /// everything in it, and every writer `t2` of `x` with `t2 (so ∪ wr)⁺ t3` is visible to
    /// `t3`, hence `co`-before the `t1` that `t3` read `x` from: the Causal axiom holds.
    Causal,
    /// Read atomic (RA): each transaction sees a fixed set of transactions — all earlier ones
    /// of its own session, and of every other session a prefix whose length lags behind that
    /// session by a small random amount (not causally closed, so CC may fail). Each read
    /// returns the `co`-latest visible version. A `t2` with `t2 (so ∪ wr) t3` is visible to
    /// `t3` (own session, or read from), so it is `co`-before the `t1` read: Read Atomic holds.
    ReadAtomic,
    /// Read committed (RC): each transaction reads the committed state at a read point that
    /// starts at a random earlier commit (possibly before its own session's last transaction)
    /// and only moves forward during the transaction. A read of `x` returns the latest version
    /// at the current read point, so any `t2` an earlier read saw and that writes `x` is
    /// `co`-before it: Read Committed holds (RA and CI may fail).
    ReadCommitted,
}

/// The level a generator mode guarantees.
impl Consistency {
    /// The level the mode guarantees, if any.
    pub fn level(self) -> Option<Level> {
        match self {
            Consistency::None => None,
            Consistency::Serializable => Some(Level::Serializable),
            Consistency::Causal => Some(Level::Causal),
            Consistency::ReadAtomic => Some(Level::ReadAtomic),
            Consistency::ReadCommitted => Some(Level::ReadCommitted),
        }
    }
}

impl Consistency {
    /// Every mode.
    pub const ALL: [Consistency; 5] = [
        Consistency::None,
        Consistency::Serializable,
        Consistency::Causal,
        Consistency::ReadAtomic,
        Consistency::ReadCommitted,
    ];

    /// The name used on the command line: `none`, `ser`, `cc`, `ra`, `rc`.
    pub fn name(self) -> &'static str {
        match self {
            Consistency::None => "none",
            Consistency::Serializable => "ser",
            Consistency::Causal => "cc",
            Consistency::ReadAtomic => "ra",
            Consistency::ReadCommitted => "rc",
        }
    }
}

impl fmt::Display for Consistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Consistency {
    type Err = String;

    /// Accepts `none` (alias `random`), `ser`, `cc`, `ra`, `rc` and the level synonyms
    /// `serializable`, `causal`, `read-atomic`, `read-committed`.
    fn from_str(s: &str) -> Result<Consistency, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "none" | "random" => Consistency::None,
            "ser" | "serializable" => Consistency::Serializable,
            "cc" | "causal" => Consistency::Causal,
            "ra" | "read-atomic" => Consistency::ReadAtomic,
            "rc" | "read-committed" => Consistency::ReadCommitted,
            other => {
                return Err(format!(
                    "unknown consistency mode `{other}` (expected none, ser, cc, ra or rc)"
                ))
            }
        })
    }
}

impl FromStr for KeyDistribution {
    type Err = String;

    /// `uniform`, `zipf` (exponent 1), `zipf:S` (exponent S), `hotspot` (80% of the operations
    /// on 20% of the keys) or `hotspot:K:O` (fraction O of the operations on fraction K of the
    /// keys).
    fn from_str(s: &str) -> Result<KeyDistribution, String> {
        let lower = s.to_ascii_lowercase();
        let mut parts = lower.split(':');
        let name = parts.next().unwrap_or("");
        let numbers: Result<Vec<f64>, _> = parts.map(str::parse::<f64>).collect();
        let numbers = numbers.map_err(|_| format!("bad number in key distribution `{s}`"))?;
        let fraction = |x: f64| (0.0..=1.0).contains(&x);
        match (name, numbers.as_slice()) {
            ("uniform", []) => Ok(KeyDistribution::Uniform),
            ("zipf", []) => Ok(KeyDistribution::Zipf { exponent: 1.0 }),
            ("zipf", [e]) if e.is_finite() && *e >= 0.0 => {
                Ok(KeyDistribution::Zipf { exponent: *e })
            }
            ("hotspot", []) => Ok(KeyDistribution::Hotspot {
                hot_keys: 0.2,
                hot_ops: 0.8,
            }),
            ("hotspot", [k, o]) if fraction(*k) && fraction(*o) => Ok(KeyDistribution::Hotspot {
                hot_keys: *k,
                hot_ops: *o,
            }),
            _ => Err(format!(
                "unknown key distribution `{s}` (expected uniform, zipf, zipf:S, hotspot or \
                 hotspot:KEYS:OPS with fractions in [0, 1])"
            )),
        }
    }
}

impl fmt::Display for KeyDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDistribution::Uniform => f.write_str("uniform"),
            KeyDistribution::Zipf { exponent } => write!(f, "zipf:{exponent}"),
            KeyDistribution::Hotspot { hot_keys, hot_ops } => {
                write!(f, "hotspot:{hot_keys}:{hot_ops}")
            }
        }
    }
}

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateParams {
    /// Number of sessions.
    pub sessions: u32,
    /// Transactions per session (aborted ones included).
    pub txns_per_session: u32,
    /// Operations per transaction.
    pub ops_per_txn: u32,
    /// Number of keys.
    pub keys: u32,
    /// Probability that an operation is a read.
    pub read_ratio: f64,
    /// How operations pick their key.
    pub distribution: KeyDistribution,
    /// Probability that a transaction aborts.
    pub abort_ratio: f64,
    /// Which store to simulate.
    pub consistency: Consistency,
    /// Seed of the pseudo-random generator: the same parameters and seed give the same history.
    pub seed: u64,
}

impl Default for GenerateParams {
    fn default() -> Self {
        GenerateParams {
            sessions: 4,
            txns_per_session: 10,
            ops_per_txn: 5,
            keys: 10,
            read_ratio: 0.5,
            distribution: KeyDistribution::Uniform,
            abort_ratio: 0.0,
            consistency: Consistency::None,
            seed: 0,
        }
    }
}

impl GenerateParams {
    /// Total number of operations the history will have (the initial writes excluded).
    pub fn events(&self) -> u64 {
        self.sessions as u64 * self.txns_per_session as u64 * self.ops_per_txn as u64
    }

    /// Checks the parameters; the error says which one is wrong.
    pub fn validate(&self) -> Result<(), String> {
        let fraction = |x: f64| (0.0..=1.0).contains(&x);
        if self.keys == 0 {
            return Err("--keys must be at least 1".into());
        }
        if !fraction(self.read_ratio) {
            return Err(format!(
                "--read-ratio must be in [0, 1], not {}",
                self.read_ratio
            ));
        }
        if !fraction(self.abort_ratio) {
            return Err(format!(
                "--abort-ratio must be in [0, 1], not {}",
                self.abort_ratio
            ));
        }
        if self.events() > (u32::MAX / 2) as u64 {
            return Err(format!(
                "{} operations requested; at most {} fit in a history",
                self.events(),
                u32::MAX / 2
            ));
        }
        if self.sessions as u64 * self.txns_per_session as u64 >= u32::MAX as u64 / 2 {
            return Err("too many transactions".into());
        }
        if self.sessions > MAX_SESSIONS {
            return Err(format!(
                "--sessions is at most {MAX_SESSIONS}, not {}",
                self.sessions
            ));
        }
        if let KeyDistribution::Zipf { .. } = self.distribution {
            if self.keys > MAX_ZIPF_KEYS {
                return Err(format!(
                    "--dist zipf keeps a table of every key's weight: at most {MAX_ZIPF_KEYS} \
                     keys, not {}",
                    self.keys
                ));
            }
        }
        if self.consistency == Consistency::Causal && self.sessions > 20_000 {
            return Err(
                "--consistent cc keeps sessions² clock entries: at most 20000 sessions".into(),
            );
        }
        Ok(())
    }
}

/// Generates a history. Errors only for invalid parameters (see [`GenerateParams::validate`]).
pub fn generate(params: &GenerateParams) -> Result<History, InputError> {
    let source = format!("generated(seed {})", params.seed);
    params
        .validate()
        .map_err(|message| InputError::new(source.clone(), 0, message))?;
    let mut builder = HistoryBuilder::new(source);
    Simulation::new(params, &mut builder).run(&mut builder);
    builder.build()
}

/// The most sessions a generated history has (each is kept whole in memory).
pub const MAX_SESSIONS: u32 = 1 << 24;

/// The most keys `--dist zipf` draws from (its alias table takes 12 bytes a key).
pub const MAX_ZIPF_KEYS: u32 = 1 << 24;

/// A committed version of a key in the simulated store.
#[derive(Debug, Clone, Copy)]
struct Version {
    /// Commit sequence number of its writer (1-based; 0 would be the initial transaction).
    seq: u32,
    /// Session of its writer.
    session: u32,
    /// Its writer's position among its session's committed transactions (0-based).
    index: u32,
    /// The value written.
    value: u64,
}

/// The value every key initially has.
const INITIAL_VALUE: u64 = 0;

struct Simulation<'p> {
    params: &'p GenerateParams,
    rng: Rng,
    sampler: KeySampler,
    /// Committed versions of each key, in commit order.
    versions: Vec<Vec<Version>>,
    /// Committed transactions per session.
    committed: Vec<u32>,
    /// Transactions committed so far (the sequence number of the latest commit).
    seq: u32,
    /// Fresh values for writes.
    next_value: u64,
    /// `cc`: each session's vector clock, flat (`sessions × sessions`).
    clocks: Vec<u32>,
    /// Generated key → its slot (dense, in order of first use): only the keys operations
    /// touch get state, so `--keys` can be far larger than the history.
    slots: KeySlots,
    /// Per slot: the interned key.
    key_ids: Vec<KeyId>,
    /// Per slot: the transaction (counter) that last wrote it, for own-write lookups.
    own_stamp: Vec<u32>,
    /// Per slot: that transaction's latest value.
    own_value: Vec<u64>,
}

/// Generated key → slot: a table over all keys when there are few (`u32::MAX` until first
/// use), a map over the keys used when there are more keys than operations can touch.
enum KeySlots {
    Dense(Vec<u32>),
    Sparse(rustc_hash::FxHashMap<u32, u32>),
}

/// Up to this many keys (or as many as there are operations), slots are a table.
const DENSE_KEYS: u64 = 1 << 20;

/// What one transaction sees, per mode.
enum View {
    None,
    Latest,
    /// `cc`: the transaction's vector clock.
    Clock(Vec<u32>),
    /// `ra`: a per-transaction nonce from which each other session's lag is derived.
    Lagged {
        nonce: u64,
        session: u32,
    },
    /// `rc`: the current read point (a commit sequence number).
    ReadPoint(u32),
}

impl<'p> Simulation<'p> {
    fn new(params: &'p GenerateParams, builder: &mut HistoryBuilder) -> Simulation<'p> {
        builder.initial_value(INITIAL_VALUE);
        for _ in 0..params.sessions {
            builder.session(None);
        }
        let sessions = params.sessions as usize;
        let slots = if params.keys as u64 <= DENSE_KEYS.max(params.events()) {
            KeySlots::Dense(vec![u32::MAX; params.keys as usize])
        } else {
            KeySlots::Sparse(Default::default())
        };
        Simulation {
            params,
            rng: Rng::new(params.seed),
            sampler: KeySampler::new(params.keys, params.distribution),
            versions: Vec::new(),
            committed: vec![0; sessions],
            seq: 0,
            next_value: INITIAL_VALUE + 1,
            clocks: if params.consistency == Consistency::Causal {
                vec![0; sessions * sessions]
            } else {
                Vec::new()
            },
            slots,
            key_ids: Vec::new(),
            own_stamp: Vec::new(),
            own_value: Vec::new(),
        }
    }

    fn run(mut self, builder: &mut HistoryBuilder) {
        let mut remaining = vec![self.params.txns_per_session; self.params.sessions as usize];
        let mut active: Vec<u32> = (0..self.params.sessions)
            .filter(|_| self.params.txns_per_session > 0)
            .collect();
        // Own writes are stamped with this counter, so they need no clearing between
        // transactions (validation keeps it below u32::MAX).
        let mut txn_counter = 0u32;
        let mut written_keys: Vec<u32> = Vec::new();
        while !active.is_empty() {
            let slot = self.rng.below(active.len() as u64) as usize;
            let session = active[slot];
            remaining[session as usize] -= 1;
            if remaining[session as usize] == 0 {
                active.swap_remove(slot);
            }
            self.run_txn(builder, session, txn_counter, &mut written_keys);
            txn_counter += 1;
        }
    }

    /// The slot of generated key `key` and its interned id, made on first use.
    fn intern(&mut self, builder: &mut HistoryBuilder, key: u32) -> (u32, KeyId) {
        let next = self.key_ids.len() as u32;
        let slot = match &mut self.slots {
            KeySlots::Dense(table) => {
                if table[key as usize] == u32::MAX {
                    table[key as usize] = next;
                }
                table[key as usize]
            }
            KeySlots::Sparse(map) => *map.entry(key).or_insert(next),
        };
        if slot == next {
            self.key_ids.push(builder.key(&key.to_string()));
            self.versions.push(Vec::new());
            self.own_stamp.push(u32::MAX);
            self.own_value.push(0);
        }
        (slot, self.key_ids[slot as usize])
    }

    fn run_txn(
        &mut self,
        builder: &mut HistoryBuilder,
        session: u32,
        txn_counter: u32,
        written_keys: &mut Vec<u32>,
    ) {
        let txn = builder.begin(session, None);
        let aborted = self.params.abort_ratio > 0.0 && self.rng.chance(self.params.abort_ratio);
        let mut view = self.open_view(session);
        written_keys.clear();
        for _ in 0..self.params.ops_per_txn {
            let (key, key_id) = {
                let sampled = self.sampler.sample(&mut self.rng);
                self.intern(builder, sampled)
            };
            let is_read = self.rng.chance(self.params.read_ratio);
            if is_read {
                let value = if self.own_stamp[key as usize] == txn_counter {
                    self.own_value[key as usize]
                } else {
                    self.read(&mut view, key)
                };
                builder.read(txn, key_id, Some(value), ReadFrom::Value(value), 0);
            } else {
                let value = self.next_value;
                self.next_value += 1;
                if self.own_stamp[key as usize] != txn_counter {
                    self.own_stamp[key as usize] = txn_counter;
                    written_keys.push(key);
                }
                self.own_value[key as usize] = value;
                builder.write(txn, key_id, Some(value), 0);
            }
        }
        if aborted {
            builder.abort(txn);
        } else {
            self.seq += 1;
            let index = self.committed[session as usize];
            self.committed[session as usize] += 1;
            for &key in written_keys.iter() {
                self.versions[key as usize].push(Version {
                    seq: self.seq,
                    session,
                    index,
                    value: self.own_value[key as usize],
                });
            }
        }
        if let View::Clock(mut clock) = view {
            clock[session as usize] = self.committed[session as usize];
            let sessions = self.params.sessions as usize;
            let row = session as usize * sessions;
            self.clocks[row..row + sessions].copy_from_slice(&clock);
        }
    }

    fn open_view(&mut self, session: u32) -> View {
        let sessions = self.params.sessions as usize;
        match self.params.consistency {
            Consistency::None => View::None,
            Consistency::Serializable => View::Latest,
            Consistency::Causal => {
                let row = session as usize * sessions;
                let mut clock = self.clocks[row..row + sessions].to_vec();
                clock[session as usize] = self.committed[session as usize];
                if sessions > 1 && self.rng.chance(0.5) {
                    let mut other = self.rng.below(sessions as u64 - 1) as usize;
                    if other >= session as usize {
                        other += 1;
                    }
                    let other_row = &self.clocks[other * sessions..(other + 1) * sessions];
                    for (mine, &theirs) in clock.iter_mut().zip(other_row) {
                        *mine = (*mine).max(theirs);
                    }
                }
                View::Clock(clock)
            }
            Consistency::ReadAtomic => View::Lagged {
                nonce: self.rng.next_u64(),
                session,
            },
            Consistency::ReadCommitted => {
                // Start a random number of commits in the past (exponential, mean = sessions).
                let lag = -(1.0 - self.rng.next_f64()).ln() * self.params.sessions as f64;
                View::ReadPoint(self.seq.saturating_sub(lag as u32))
            }
        }
    }

    /// The value an external read of the key in slot `key` returns under `view`.
    fn read(&mut self, view: &mut View, key: u32) -> u64 {
        let versions = &self.versions[key as usize];
        let value_at = |i: usize| {
            if i == 0 {
                INITIAL_VALUE
            } else {
                versions[i - 1].value
            }
        };
        match view {
            View::None => value_at(self.rng.below(versions.len() as u64 + 1) as usize),
            View::Latest => value_at(versions.len()),
            View::Clock(clock) => versions
                .iter()
                .rev()
                .find(|v| v.index < clock[v.session as usize])
                .map_or(INITIAL_VALUE, |v| v.value),
            View::Lagged { nonce, session } => {
                let committed = &self.committed;
                let (nonce, own) = (*nonce, *session);
                versions
                    .iter()
                    .rev()
                    .find(|v| {
                        // Lag of session s for this transaction: P(lag ≥ k) = 2^-k.
                        let lag = splitmix64(nonce ^ v.session as u64).trailing_zeros();
                        v.session == own
                            || (v.index as u64 + lag as u64) < committed[v.session as usize] as u64
                    })
                    .map_or(INITIAL_VALUE, |v| v.value)
            }
            View::ReadPoint(point) => {
                if self.rng.chance(0.5) {
                    *point += self.rng.below((self.seq - *point) as u64 + 1) as u32;
                }
                let p = *point;
                value_at(versions.partition_point(|v| v.seq <= p))
            }
        }
    }
}

#[cfg(test)]
mod tests;
