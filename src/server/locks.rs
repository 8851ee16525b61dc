//! The server's concurrency control: strict two-phase locking (Eswaran, Gray, Lorie & Traiger,
//! "The Notions of Consistency and Predicate Locks in a Database System", CACM 1976) with
//! multiple granularity (Gray, Lorie, Putzolu & Traiger, "Granularity of Locks and Degrees of
//! Consistency in a Shared Data Base", 1976): intention locks on tables, shared or exclusive
//! locks on tables or rows, all held until the transaction commits or aborts.
//!
//! - Resources: a table (its membership set) and a row (the set and the row's element); a row
//!   lock covers the row's existence and every cell of it.
//! - Modes: IS, IX, S, SIX, X with Gray's compatibility matrix. A row lock is taken under the
//!   matching intention lock on its table (IS for S, IX for X); a scan locks the whole table
//!   S or X, so an insert or delete (IX on the table) and a scan exclude each other — no
//!   phantoms.
//! - A request that conflicts waits in a FIFO queue (an upgrade of a lock already held goes
//!   first); releasing wakes the waiters that became compatible, in order.
//! - Deadlocks are found when a request would wait: a depth-first search of the waits-for
//!   graph (holders whose modes conflict, and waiters ahead in the queue) from the requester's
//!   blockers; reaching the requester is a cycle, and the request is answered
//!   [`Request::Deadlock`] at once instead of waiting.
//!
//! Transactions are named by their connection's store session (a connection runs one
//! transaction at a time). What a transaction does when it is told to wait too long or is in a
//! deadlock is the caller's choice ([`super::database`]).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use tokio::sync::oneshot;

/// A lockable thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// A table, by its membership set.
    Table(u64),
    /// A row: the table's set and the row's element.
    Row(u64, u64),
}

/// A lock mode (Gray et al. 1976), weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Intention shared: rows below will be locked shared.
    IntentShared,
    /// Intention exclusive: rows below will be locked exclusive.
    IntentExclusive,
    /// Shared.
    Shared,
    /// Shared, with rows below locked exclusive.
    SharedIntentExclusive,
    /// Exclusive.
    Exclusive,
}

impl Mode {
    /// Whether a lock in `self` and one in `other` held by another transaction can coexist.
    pub fn compatible(self, other: Mode) -> bool {
        use Mode::*;
        match (self, other) {
            (Exclusive, _) | (_, Exclusive) => false,
            (IntentShared, _) | (_, IntentShared) => true,
            (IntentExclusive, IntentExclusive) | (Shared, Shared) => true,
            _ => false,
        }
    }

    /// The weakest mode at least as strong as both (a lock held in `self` asked for `other`).
    pub fn join(self, other: Mode) -> Mode {
        use Mode::*;
        match (self.max(other), self.min(other)) {
            (Shared, IntentExclusive) => SharedIntentExclusive,
            (stronger, _) => stronger,
        }
    }

    /// The intention mode on a table for a row lock in `self`.
    pub fn intention(self) -> Mode {
        match self {
            Mode::IntentShared | Mode::Shared => Mode::IntentShared,
            _ => Mode::IntentExclusive,
        }
    }
}

/// The answer to a lock request.
#[derive(Debug)]
pub enum Request {
    /// The lock is held.
    Granted,
    /// The request waits in the queue; the receiver hears when it is granted. Call
    /// [`LockTable::cancel`] to give up waiting.
    Wait(oneshot::Receiver<()>),
    /// Waiting would close a cycle of waits: the request was not queued.
    Deadlock,
}

#[derive(Debug)]
struct Waiter {
    txn: u32,
    mode: Mode,
    wake: oneshot::Sender<()>,
}

#[derive(Debug, Default)]
struct Entry {
    holders: Vec<(u32, Mode)>,
    queue: VecDeque<Waiter>,
}

#[derive(Debug, Default)]
struct TxnLocks {
    held: Vec<Resource>,
    waiting: Option<Resource>,
}

/// The lock table (see the module documentation).
#[derive(Debug, Default)]
pub struct LockTable {
    entries: FxHashMap<Resource, Entry>,
    txns: Vec<TxnLocks>,
}

impl LockTable {
    /// Asks for `resource` in `mode` for transaction `txn`.
    pub fn request(&mut self, txn: u32, resource: Resource, mode: Mode) -> Request {
        if self.txns.len() <= txn as usize {
            self.txns.resize_with(txn as usize + 1, TxnLocks::default);
        }
        let entry = self.entries.entry(resource).or_default();
        let held = entry.holders.iter().position(|h| h.0 == txn);
        let want = match held {
            Some(i) if entry.holders[i].1.join(mode) == entry.holders[i].1 => {
                return Request::Granted
            }
            Some(i) => entry.holders[i].1.join(mode),
            None => mode,
        };
        let compatible = entry
            .holders
            .iter()
            .all(|&(t, m)| t == txn || m.compatible(want));
        if compatible && (held.is_some() || entry.queue.is_empty()) {
            match held {
                Some(i) => entry.holders[i].1 = want,
                None => {
                    entry.holders.push((txn, want));
                    self.txns[txn as usize].held.push(resource);
                }
            }
            return Request::Granted;
        }
        if self.waits_on_itself(txn, resource, want, held.is_some()) {
            self.forget_if_unused(resource);
            return Request::Deadlock;
        }
        let (wake, heard) = oneshot::channel();
        let waiter = Waiter {
            txn,
            mode: want,
            wake,
        };
        let entry = self.entries.get_mut(&resource).expect("entry made above");
        if held.is_some() {
            entry.queue.push_front(waiter);
        } else {
            entry.queue.push_back(waiter);
        }
        self.txns[txn as usize].waiting = Some(resource);
        Request::Wait(heard)
    }

    /// Stops `txn` waiting. Returns `true` if its request was granted meanwhile (it holds the
    /// lock), `false` if it was taken out of the queue.
    pub fn cancel(&mut self, txn: u32) -> bool {
        let Some(resource) = self
            .txns
            .get_mut(txn as usize)
            .and_then(|t| t.waiting.take())
        else {
            return true;
        };
        if let Some(entry) = self.entries.get_mut(&resource) {
            entry.queue.retain(|w| w.txn != txn);
        }
        self.grant_waiters(resource);
        false
    }

    /// Releases every lock of `txn` (and its wait, if any) and wakes who can go on.
    pub fn release_all(&mut self, txn: u32) {
        if self.txns.len() <= txn as usize {
            return;
        }
        self.cancel(txn);
        let mut held = std::mem::take(&mut self.txns[txn as usize].held);
        for &resource in &held {
            if let Some(entry) = self.entries.get_mut(&resource) {
                entry.holders.retain(|h| h.0 != txn);
            }
            self.grant_waiters(resource);
        }
        held.clear();
        self.txns[txn as usize].held = held;
    }

    /// The number of locks `txn` holds.
    pub fn held(&self, txn: u32) -> usize {
        self.txns.get(txn as usize).map_or(0, |t| t.held.len())
    }

    /// Grants the waiters at the head of `resource`'s queue that are compatible with its
    /// holders, in order; drops the entry if nobody holds or waits for it.
    fn grant_waiters(&mut self, resource: Resource) {
        let Some(entry) = self.entries.get_mut(&resource) else {
            return;
        };
        while let Some(w) = entry.queue.front() {
            let ok = entry
                .holders
                .iter()
                .all(|&(t, m)| t == w.txn || m.compatible(w.mode));
            if !ok {
                break;
            }
            let w = entry.queue.pop_front().expect("front exists");
            match entry.holders.iter_mut().find(|h| h.0 == w.txn) {
                Some(h) => h.1 = w.mode,
                None => {
                    entry.holders.push((w.txn, w.mode));
                    self.txns[w.txn as usize].held.push(resource);
                }
            }
            self.txns[w.txn as usize].waiting = None;
            // A waiter that stopped listening still holds the lock until it is released.
            let _ = w.wake.send(());
        }
        self.forget_if_unused(resource);
    }

    fn forget_if_unused(&mut self, resource: Resource) {
        if self
            .entries
            .get(&resource)
            .is_some_and(|e| e.holders.is_empty() && e.queue.is_empty())
        {
            self.entries.remove(&resource);
        }
    }

    /// The transactions a request of `txn` for `resource` in `mode` would wait for: holders
    /// whose modes conflict and (unless it is an upgrade, which goes first) the waiters ahead
    /// of it in the queue, which are granted first — `ahead` of them, or the whole queue for a
    /// new request.
    fn blockers(
        &self,
        txn: u32,
        resource: Resource,
        mode: Mode,
        ahead: Option<usize>,
        out: &mut Vec<u32>,
    ) {
        let Some(entry) = self.entries.get(&resource) else {
            return;
        };
        for &(t, m) in &entry.holders {
            if t != txn && !m.compatible(mode) {
                out.push(t);
            }
        }
        let ahead = ahead.unwrap_or(entry.queue.len());
        for w in entry.queue.iter().take(ahead) {
            if w.txn != txn {
                out.push(w.txn);
            }
        }
    }

    /// Whether `txn` waiting for `resource` in `mode` closes a cycle of waits (iterative
    /// depth-first search of the waits-for graph).
    fn waits_on_itself(&self, txn: u32, resource: Resource, mode: Mode, upgrade: bool) -> bool {
        let mut stack = Vec::new();
        self.blockers(
            txn,
            resource,
            mode,
            if upgrade { Some(0) } else { None },
            &mut stack,
        );
        let mut seen = vec![false; self.txns.len()];
        while let Some(t) = stack.pop() {
            if t == txn {
                return true;
            }
            if std::mem::replace(&mut seen[t as usize], true) {
                continue;
            }
            let Some(r) = self.txns[t as usize].waiting else {
                continue;
            };
            let Some(entry) = self.entries.get(&r) else {
                continue;
            };
            let Some(pos) = entry.queue.iter().position(|w| w.txn == t) else {
                continue;
            };
            let m = entry.queue[pos].mode;
            self.blockers(t, r, m, Some(pos), &mut stack);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Mode::*;

    const T: Resource = Resource::Table(1);
    const R1: Resource = Resource::Row(1, 1);
    const R2: Resource = Resource::Row(1, 2);

    fn granted(r: Request) -> bool {
        matches!(r, Request::Granted)
    }

    #[test]
    fn the_compatibility_matrix_is_grays() {
        let modes = [
            IntentShared,
            IntentExclusive,
            Shared,
            SharedIntentExclusive,
            Exclusive,
        ];
        // Rows and columns in the order above (Gray et al. 1976, table 1).
        let expected = [
            [true, true, true, true, false],
            [true, true, false, false, false],
            [true, false, true, false, false],
            [true, false, false, false, false],
            [false, false, false, false, false],
        ];
        for (i, a) in modes.iter().enumerate() {
            for (j, b) in modes.iter().enumerate() {
                assert_eq!(a.compatible(*b), expected[i][j], "{a:?} {b:?}");
            }
        }
        assert_eq!(Shared.join(IntentExclusive), SharedIntentExclusive);
        assert_eq!(IntentShared.join(Exclusive), Exclusive);
        assert_eq!(Shared.join(IntentShared), Shared);
    }

    #[test]
    fn shared_locks_coexist_and_an_exclusive_one_waits_until_release() {
        let mut l = LockTable::default();
        assert!(granted(l.request(0, R1, Shared)));
        assert!(granted(l.request(1, R1, Shared)));
        let Request::Wait(mut heard) = l.request(2, R1, Exclusive) else {
            panic!("an exclusive lock waits for the shared ones");
        };
        l.release_all(0);
        assert!(heard.try_recv().is_err(), "one shared holder is left");
        l.release_all(1);
        assert!(heard.try_recv().is_ok());
        assert_eq!(l.held(2), 1);
        l.release_all(2);
        assert!(l.entries.is_empty());
    }

    #[test]
    fn a_scan_and_an_insert_into_its_table_exclude_each_other() {
        let mut l = LockTable::default();
        assert!(granted(l.request(0, T, Shared)));
        assert!(matches!(l.request(1, T, IntentExclusive), Request::Wait(_)));
        assert!(!l.cancel(1), "it was still waiting");
        assert!(granted(l.request(2, T, IntentShared)));
    }

    #[test]
    fn a_cycle_of_waits_is_a_deadlock_found_at_once() {
        let mut l = LockTable::default();
        assert!(granted(l.request(0, R1, Exclusive)));
        assert!(granted(l.request(1, R2, Exclusive)));
        assert!(matches!(l.request(0, R2, Exclusive), Request::Wait(_)));
        assert!(matches!(l.request(1, R1, Exclusive), Request::Deadlock));
        // Two shared holders both upgrading: the second upgrade is the deadlock.
        let mut l = LockTable::default();
        assert!(granted(l.request(0, R1, Shared)));
        assert!(granted(l.request(1, R1, Shared)));
        assert!(matches!(l.request(0, R1, Exclusive), Request::Wait(_)));
        assert!(matches!(l.request(1, R1, Exclusive), Request::Deadlock));
        // A wait on a holder that waits for nobody is no deadlock.
        let mut l = LockTable::default();
        assert!(granted(l.request(0, R1, Exclusive)));
        assert!(matches!(l.request(1, R1, Shared), Request::Wait(_)));
    }

    #[test]
    fn an_upgrade_goes_before_queued_requests() {
        let mut l = LockTable::default();
        assert!(granted(l.request(0, R1, Shared)));
        assert!(granted(l.request(1, R1, Shared)));
        let Request::Wait(mut third) = l.request(2, R1, Exclusive) else {
            panic!("waits");
        };
        let Request::Wait(mut upgrade) = l.request(0, R1, Exclusive) else {
            panic!("waits for the other shared holder");
        };
        l.release_all(1);
        assert!(upgrade.try_recv().is_ok());
        assert!(third.try_recv().is_err());
        l.release_all(0);
        assert!(third.try_recv().is_ok());
    }

    #[test]
    fn a_granted_lock_is_held_again_without_waiting() {
        let mut l = LockTable::default();
        assert!(granted(l.request(0, R1, Exclusive)));
        assert!(granted(l.request(0, R1, Shared)));
        assert_eq!(l.held(0), 1);
    }
}
