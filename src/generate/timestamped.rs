//! Random timestamped histories from a simulated timestamp-based SI store (the setting of
//! Chronos, Li et al. §II, Algorithm 1): each transaction takes a start timestamp, reads the
//! committed state as of it plus its own writes, and at commit takes a commit timestamp and
//! (optionally) aborts if a concurrent transaction already committed a write to one of its
//! keys (first committer wins). Timestamps come from one counter, so they are unique; a
//! read-only transaction may commit at its start timestamp (start = commit).
//!
//! Used by the tests (offline and online checkers must agree on these histories and on
//! mutations of them) and by the benchmarks (a TimeKiller-sized history).

use super::keys::{KeyDistribution, KeySampler};
use super::rng::Rng;
use crate::history::timestamped::{Hlc, Name, TimestampedBuilder, TimestampedHistory};

/// Parameters of [`generate_timestamped`].
#[derive(Debug, Clone)]
pub struct TsGenParams {
    /// Number of sessions (clients), each running one transaction at a time.
    pub sessions: u32,
    /// Number of committed transactions to produce.
    pub txns: u32,
    /// Operations per transaction.
    pub ops_per_txn: u32,
    /// Number of keys.
    pub keys: u32,
    /// Fraction of operations that are reads.
    pub read_fraction: f64,
    /// How keys are chosen.
    pub distribution: KeyDistribution,
    /// List histories (appends and whole-list reads) instead of registers.
    pub lists: bool,
    /// Abort a transaction whose write conflicts with a concurrent committed one, as an SI
    /// store does; without it the history may violate NOCONFLICT.
    pub first_committer_wins: bool,
    /// The random seed.
    pub seed: u64,
}

impl Default for TsGenParams {
    fn default() -> Self {
        TsGenParams {
            sessions: 10,
            txns: 1000,
            ops_per_txn: 8,
            keys: 100,
            read_fraction: 0.5,
            distribution: KeyDistribution::Zipf { exponent: 1.0 },
            lists: false,
            first_committer_wins: true,
            seed: 1,
        }
    }
}

struct InFlight {
    start: u64,
    plan: Vec<(bool, u32)>, // (is read, key)
}

/// Generates a history of `params.txns` committed transactions whose registers start at 0
/// (lists start empty). Without mutation it satisfies SI under the timestamps.
pub fn generate_timestamped(params: &TsGenParams) -> TimestampedHistory {
    let mut rng = Rng::new(params.seed);
    let sampler = KeySampler::new(params.keys.max(1), params.distribution);
    let mut b = TimestampedBuilder::new("generated", Some(0));
    let keys: Vec<u32> = (0..params.keys.max(1))
        .map(|k| b.key(&k.to_string()))
        .collect();
    let sessions: Vec<u32> = (0..params.sessions.max(1))
        .map(|s| b.session(&s.to_string()))
        .collect();
    // Committed versions per key: (commit timestamp, value), in commit order.
    let mut versions: Vec<Vec<(u64, i64)>> = vec![Vec::new(); keys.len()];
    let mut in_flight: Vec<Option<InFlight>> = (0..sessions.len()).map(|_| None).collect();
    let mut clock: u64 = 1;
    let mut next_value: i64 = 1;
    let mut committed: u32 = 0;
    let mut started: u32 = 0;
    let mut own: Vec<(u32, Vec<i64>)> = Vec::new();
    let mut list_buf: Vec<i64> = Vec::new();
    while committed < params.txns {
        let s = rng.below(sessions.len() as u64) as usize;
        let txn = match in_flight[s].take() {
            None => {
                if started - committed >= params.txns - committed {
                    continue;
                }
                let plan: Vec<(bool, u32)> = (0..params.ops_per_txn)
                    .map(|_| (rng.chance(params.read_fraction), sampler.sample(&mut rng)))
                    .collect();
                let start = clock;
                clock += 1;
                started += 1;
                let read_only = plan.iter().all(|&(r, _)| r);
                let txn = InFlight { start, plan };
                if !(read_only && rng.chance(0.5)) {
                    in_flight[s] = Some(txn);
                    continue;
                }
                txn
            }
            Some(txn) => txn,
        };
        let commit = if txn.plan.iter().all(|&(r, _)| r) && txn.start + 1 == clock {
            txn.start
        } else {
            let c = clock;
            clock += 1;
            c
        };
        // First committer wins: a concurrent committed write to a key this one writes.
        if params.first_committer_wins {
            let conflict = txn.plan.iter().any(|&(read, k)| {
                !read
                    && versions[k as usize]
                        .last()
                        .is_some_and(|&(c, _)| c > txn.start)
            });
            if conflict {
                started -= 1;
                continue;
            }
        }
        b.txn(
            Name::Num(committed as i64),
            sessions[s],
            Hlc::new(txn.start, 0),
            Hlc::new(commit, 0),
            0,
        );
        own.clear();
        for &(read, k) in &txn.plan {
            let key = keys[k as usize];
            let snapshot = versions[k as usize].partition_point(|&(c, _)| c <= txn.start);
            let mine = own.iter().position(|(ok, _)| *ok == k);
            if params.lists {
                if read {
                    list_buf.clear();
                    list_buf.extend(versions[k as usize][..snapshot].iter().map(|&(_, v)| v));
                    if let Some(i) = mine {
                        list_buf.extend_from_slice(&own[i].1);
                    }
                    b.read_list(key, &list_buf);
                } else {
                    let v = next_value;
                    next_value += 1;
                    b.append(key, v);
                    match mine {
                        Some(i) => own[i].1.push(v),
                        None => own.push((k, vec![v])),
                    }
                }
            } else if read {
                let v = match mine {
                    Some(i) => *own[i].1.last().unwrap_or(&0),
                    None => snapshot
                        .checked_sub(1)
                        .map_or(0, |i| versions[k as usize][i].1),
                };
                b.read(key, Some(v));
            } else {
                let v = next_value;
                next_value += 1;
                b.write(key, Some(v));
                match mine {
                    Some(i) => own[i].1 = vec![v],
                    None => own.push((k, vec![v])),
                }
            }
        }
        for (k, values) in &own {
            // Registers keep only their last write; lists every append.
            for &v in values {
                versions[*k as usize].push((commit, v));
            }
        }
        committed += 1;
    }
    b.finish()
}
