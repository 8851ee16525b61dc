//! Validation of a predicted execution (IsoPredict, PLDI'24 §5): replay the application with
//! the predicted history as the read policy (same seed), executing every transaction on or
//! hb-before the prediction boundary in full and then stopping; the prediction is *validated*
//! when the validating history satisfies the level and is unserializable. The run *diverged*
//! when some read could not follow the prediction (it then read the latest valid writer).
//! Invariant failures of the validating run's final state are reported too.
//!
//! The two checks are supplied by a [`Verifier`], so the exact checkers of `check` and `ser`
//! plug in; [`SaturationVerifier`] decides the level by the store's saturation test and
//! serializability by a prefix search for small session counts.

use std::sync::Arc;

use crate::check::Level;
use crate::history::{History, TxnId};
use crate::store::{satisfies_by_saturation, Divergence, ReadPolicy, ReplayPlan};

use super::harness::{run, Run, RunConfig, RunError};
use super::{InvariantCheck, Workload};

/// The checks validation needs.
pub trait Verifier {
    /// Whether `history` satisfies `level`; `None` if unknown.
    fn satisfies(&self, history: &History, level: Level) -> Option<bool>;
    /// Whether `history` is serializable; `None` if unknown (e.g. a timeout).
    fn serializable(&self, history: &History) -> Option<bool>;
}

/// What validation concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The validating execution satisfies the level and is unserializable.
    Validated,
    /// The validating execution is serializable: no anomaly (a false prediction).
    Serializable,
    /// The validating execution violates the level (a bug in the store; reported, not hidden).
    LevelViolated,
    /// A check could not decide.
    Unknown,
}

/// The outcome of validating one prediction.
#[derive(Debug)]
pub struct Validation {
    /// The verdict.
    pub verdict: Verdict,
    /// Where the validating run left the prediction (empty: it followed it exactly).
    pub divergences: Vec<Divergence>,
    /// The invariants on the validating run's final state.
    pub invariants: Vec<InvariantCheck>,
    /// The validating run (its `history` is the validating execution).
    pub run: Run,
}

impl Validation {
    /// Whether some read could not follow the prediction.
    pub fn diverged(&self) -> bool {
        !self.divergences.is_empty()
    }

    /// The invariants that fail.
    pub fn failed_invariants(&self) -> impl Iterator<Item = &InvariantCheck> {
        self.invariants.iter().filter(|i| !i.holds)
    }
}

/// Validates `predicted` (a history valid at `level`, usually a prefix ending at the
/// prediction boundary) by replaying `workload` under `config`'s seed and size. `observed`,
/// the run the prediction came from, lets the replay keep the observed interleaving where the
/// prediction allows and run rolled-back transactions where they ran.
pub fn validate(
    workload: &dyn Workload,
    config: &RunConfig,
    observed: Option<&Run>,
    predicted: &History,
    level: Level,
    verifier: &dyn Verifier,
) -> Result<Validation, RunError> {
    let preferred = observed.map(|o| map_order(&o.history, &o.commit_order, predicted));
    let plan = ReplayPlan::new(predicted, level, preferred.as_deref());
    let replay_config = RunConfig {
        policy: ReadPolicy::Replay {
            plan: Arc::new(plan),
            level,
        },
        observed_attempts: observed.map(|o| o.attempts.clone()),
        ..config.clone()
    };
    let run = run(workload, &replay_config)?;
    let verdict = match verifier.satisfies(&run.history, level) {
        Some(false) => Verdict::LevelViolated,
        None => Verdict::Unknown,
        Some(true) => match verifier.serializable(&run.history) {
            Some(false) => Verdict::Validated,
            Some(true) => Verdict::Serializable,
            None => Verdict::Unknown,
        },
    };
    Ok(Validation {
        verdict,
        divergences: run.divergences.clone(),
        invariants: run.invariants.clone(),
        run,
    })
}

/// The observed commit order as transactions of `predicted`, matched by session external id
/// and position among the session's committed transactions.
fn map_order(observed: &History, order: &[TxnId], predicted: &History) -> Vec<TxnId> {
    let key = |h: &History, t: TxnId| -> (u64, usize) {
        let tx = h.txn(t);
        let s = &h.sessions()[tx.session as usize];
        let pos = s
            .txns()
            .filter(|&u| u < t && h.txn(u).is_committed())
            .count();
        (s.external_id.unwrap_or(tx.session as u64), pos)
    };
    let mut index = rustc_hash::FxHashMap::default();
    for t in predicted.committed_txns().skip(1) {
        index.insert(key(predicted, t), t);
    }
    order
        .iter()
        .filter_map(|&t| index.get(&key(observed, t)).copied())
        .collect()
}

/// A verifier built from the store's own tests: the level by saturation
/// ([`satisfies_by_saturation`]) and serializability by a search over prefixes (Biswas &
/// Enea, OOPSLA'19, §5: a transaction may follow a prefix if its session and write–read
/// predecessors are in it and no transaction outside reads a key it writes from inside),
/// exponential only in the number of sessions; `None` beyond `max_states` prefixes.
#[derive(Debug, Clone, Copy)]
pub struct SaturationVerifier {
    /// Bound on explored prefixes.
    pub max_states: usize,
}

impl Default for SaturationVerifier {
    fn default() -> Self {
        SaturationVerifier {
            max_states: 2_000_000,
        }
    }
}

impl Verifier for SaturationVerifier {
    fn satisfies(&self, history: &History, level: Level) -> Option<bool> {
        crate::store::supported(level).then(|| satisfies_by_saturation(history, level))
    }

    fn serializable(&self, history: &History) -> Option<bool> {
        serializable_by_prefixes(history, self.max_states)
    }
}

/// Exact serializability by prefix search (see [`SaturationVerifier`]).
pub fn serializable_by_prefixes(history: &History, max_states: usize) -> Option<bool> {
    use crate::history::{OpKind, INITIAL_TXN};
    let sessions: Vec<Vec<TxnId>> = history
        .sessions()
        .iter()
        .map(|s| {
            s.txns()
                .filter(|&t| history.txn(t).is_committed())
                .collect()
        })
        .collect();
    let n = history.txn_count();
    // Per transaction: writers it reads from (other transactions), and, per key it writes,
    // the readers of that key from other writers.
    let mut reads_from: Vec<Vec<TxnId>> = vec![Vec::new(); n];
    let mut readers_of: Vec<Vec<(TxnId, TxnId)>> = vec![Vec::new(); history.key_count()];
    for t in history.committed_txns() {
        for op in history.txn(t).ops() {
            let o = history.op(op);
            if o.kind != OpKind::Read || history.is_internal_read(op) {
                continue;
            }
            let Some(w) = history.writer_txn(op) else {
                return Some(false);
            };
            if !history.txn(w).is_committed() {
                return Some(false);
            }
            reads_from[t as usize].push(w);
            readers_of[o.key as usize].push((w, t));
        }
    }
    let mut in_prefix = vec![false; n];
    in_prefix[INITIAL_TXN as usize] = true;
    let mut seen = rustc_hash::FxHashSet::default();
    let mut frontier = vec![0usize; sessions.len()];
    let total: usize = sessions.iter().map(|s| s.len()).sum();
    // Iterative DFS over frontiers; `stack` holds (frontier, next session to try).
    let mut stack: Vec<usize> = vec![0];
    let mut placed: Vec<usize> = Vec::new();
    loop {
        if placed.len() == total {
            return Some(true);
        }
        let Some(next) = stack.last_mut() else {
            return Some(false);
        };
        if *next >= sessions.len() {
            stack.pop();
            let Some(s) = placed.pop() else {
                return Some(false);
            };
            frontier[s] -= 1;
            in_prefix[sessions[s][frontier[s]] as usize] = false;
            continue;
        }
        let s = *next;
        *next += 1;
        let Some(&t) = sessions[s].get(frontier[s]) else {
            continue;
        };
        let ready = reads_from[t as usize]
            .iter()
            .all(|&w| w == t || in_prefix[w as usize]);
        let safe = ready
            && history.keys_written(t).iter().all(|&k| {
                readers_of[k as usize].iter().all(|&(w, r)| {
                    w == t || r == t || !in_prefix[w as usize] || in_prefix[r as usize]
                })
            });
        if !safe {
            continue;
        }
        frontier[s] += 1;
        in_prefix[t as usize] = true;
        if !seen.insert(frontier.clone()) {
            frontier[s] -= 1;
            in_prefix[t as usize] = false;
            continue;
        }
        if seen.len() > max_states {
            return None;
        }
        placed.push(s);
        stack.push(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{OpKind, INITIAL_TXN};
    use crate::store::{KvRead, KvWrite, SplitMix64, Store, Value};

    /// Serializability by trying every order of the committed transactions.
    fn serializable_brute_force(h: &History) -> bool {
        let txns: Vec<TxnId> = h.committed_txns().filter(|&t| t != INITIAL_TXN).collect();
        fn permute(h: &History, rest: &mut Vec<TxnId>, order: &mut Vec<TxnId>) -> bool {
            if rest.is_empty() {
                return valid(h, order);
            }
            for i in 0..rest.len() {
                let t = rest.remove(i);
                order.push(t);
                if permute(h, rest, order) {
                    return true;
                }
                order.pop();
                rest.insert(i, t);
            }
            false
        }
        fn valid(h: &History, order: &[TxnId]) -> bool {
            let pos = |t: TxnId| order.iter().position(|&u| u == t).unwrap();
            for &t in order {
                if let Some(p) = h.so_predecessor(t) {
                    if p != INITIAL_TXN && pos(p) > pos(t) {
                        return false;
                    }
                }
                for op in h.txn(t).ops() {
                    let o = h.op(op);
                    if o.kind != OpKind::Read || h.is_internal_read(op) {
                        continue;
                    }
                    let w = h.writer_txn(op).unwrap();
                    let last = order[..pos(t)]
                        .iter()
                        .rev()
                        .find(|&&u| h.keys_written(u).contains(&o.key))
                        .copied()
                        .unwrap_or(INITIAL_TXN);
                    if last != w {
                        return false;
                    }
                }
            }
            true
        }
        permute(h, &mut txns.clone(), &mut Vec::new())
    }

    #[test]
    fn prefix_search_agrees_with_brute_force() {
        let (mut yes, mut no) = (0, 0);
        for seed in 0..300u64 {
            let mut store = Store::new(crate::store::ReadPolicy::Random {
                level: Level::ReadCommitted,
                seed,
            })
            .unwrap();
            let sessions: Vec<_> = (0..3).map(|s| store.open_session(s)).collect();
            let mut rng = SplitMix64::new(seed);
            for _ in 0..6 {
                let mut tx = store.begin(sessions[rng.below(3)]);
                for _ in 0..1 + rng.below(3) {
                    let key = rng.below(3) as u64;
                    if rng.below(2) == 0 {
                        tx.get(key);
                    } else {
                        tx.put(key, Value::Int(1));
                    }
                }
                tx.commit();
            }
            let h = store.history("random").unwrap();
            let expected = serializable_brute_force(&h);
            assert_eq!(
                serializable_by_prefixes(&h, 1_000_000),
                Some(expected),
                "seed {seed}"
            );
            if expected {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 10 && no > 10, "{yes} serializable, {no} not");
    }
}
