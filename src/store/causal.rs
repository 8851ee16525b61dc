//! Incremental validity of read choices under transactional causal consistency, with the
//! commit order fixed to the execution order.
//!
//! Axiom (Biswas & Enea, OOPSLA'19, §3): for t1 ≠ t2 writing x and t3 reading x from t2,
//! hb(t1, t3) ⇒ co(t1, t2), where hb = (so ∪ wr)+. MonkeyDB (OOPSLA'21) explores causal
//! executions by letting each read pick any writer that keeps the history consistent; here the
//! commit order is the execution order (transactions run one at a time), which makes the test
//! incremental and exact for that order:
//!
//! - The causal past of the running transaction T is downward closed per session, so it is a
//!   vector clock `past` (how many of each session's transactions it contains). It starts as
//!   the clock of T's session predecessor and grows by the clock of every writer T reads from.
//! - Reading x from c is valid iff (1) no writer of x in `past` comes after c — c is at or after
//!   the latest writer of x in `past`, the *floor* of x; and (2) the clock of c stays within
//!   `bound`, where `bound[s]` is the position of the first session-s transaction that writes
//!   some key T already read, after the writer T read it from (such a transaction must never
//!   enter T's past).
//! - After the read, `past` ⊔= clock(c) and `bound[s]` ⊓= position of the first session-s
//!   writer of x after c.
//!
//! Cost per candidate: O(sessions); per read: O(versions of x) to find the floor and the new
//! bounds. The writer that defines the floor is always valid, so a read always has a choice.

use super::data::{KeyId, Seq, StoreData, INITIAL_SESSION};

/// Causal tracking state of the running transaction.
#[derive(Debug, Default, Clone)]
pub(crate) struct CausalTracker {
    past: Vec<u32>,
    bound: Vec<u32>,
}

impl CausalTracker {
    /// Starts a transaction of `session` (`pos` = its position in the session).
    pub(crate) fn begin(&mut self, data: &StoreData, session: u32) {
        let n = data.sessions.len();
        self.past.clear();
        self.past.resize(n, 0);
        self.bound.clear();
        self.bound.resize(n, u32::MAX);
        if let Some(&last) = data.sessions[session as usize].txns.last() {
            let clock = &data.txns[last as usize].clock;
            self.past[..clock.len()].copy_from_slice(clock);
        }
    }

    /// The latest writer of `key` in the current causal past.
    pub(crate) fn floor(&self, data: &StoreData, key: KeyId) -> Seq {
        data.versions(key)
            .iter()
            .rev()
            .find(|v| data.in_prefix(v.seq, &self.past))
            .map_or(0, |v| v.seq)
    }

    /// Whether reading `key` from `candidate` keeps the history causal; `floor` is
    /// [`CausalTracker::floor`] of the key.
    pub(crate) fn valid(&self, data: &StoreData, floor: Seq, candidate: Seq) -> bool {
        if candidate < floor {
            return false;
        }
        let clock = &data.txns[candidate as usize].clock;
        clock.iter().zip(&self.bound).all(|(&c, &b)| c <= b)
    }

    /// Records that the transaction read `key` from `chosen` (a valid choice).
    pub(crate) fn observe(&mut self, data: &StoreData, key: KeyId, chosen: Seq) {
        let clock = &data.txns[chosen as usize].clock;
        for (p, &c) in self.past.iter_mut().zip(clock.iter()) {
            *p = (*p).max(c);
        }
        for v in data.versions(key).iter().rev() {
            if v.seq <= chosen {
                break;
            }
            let t = &data.txns[v.seq as usize];
            if t.session != INITIAL_SESSION {
                let b = &mut self.bound[t.session as usize];
                *b = (*b).min(t.pos);
            }
        }
    }

    /// The clock of the transaction being committed at position `pos` of `session`.
    pub(crate) fn commit_clock(&self, session: u32, pos: u32) -> Box<[u32]> {
        let mut clock = self.past.clone();
        clock[session as usize] = pos + 1;
        clock.into_boxed_slice()
    }
}
