//! A pool of per-task scratch for the checkers' parallel passes (read consistency, rc, ra):
//! a task takes a scratch, uses it and gives it back, so a pass allocates one scratch per
//! thread that runs at once instead of one per rayon job. Scratch arrays are indexed by key or
//! transaction (megabytes each at 10^6 transactions), and every fresh one costs its page faults.
//!
//! The checkers' scratches are stamped (marks are transaction ids or session numbers), so a
//! scratch used by any earlier sequence of tasks serves the next without clearing.

use std::sync::Mutex;

/// Scratches not in use.
pub(crate) struct ScratchPool<T> {
    free: Mutex<Vec<T>>,
}

impl<T> ScratchPool<T> {
    pub(crate) fn new() -> Self {
        ScratchPool {
            free: Mutex::new(Vec::new()),
        }
    }

    /// Runs `task` with a scratch from the pool, or a new one from `make` when none is free.
    pub(crate) fn with<R>(&self, make: impl FnOnce() -> T, task: impl FnOnce(&mut T) -> R) -> R {
        // A task that panicked left the pool as it was: take it anyway.
        let taken = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut scratch = taken.unwrap_or_else(make);
        let result = task(&mut scratch);
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(scratch);
        result
    }

    /// How many scratches were made.
    #[cfg(test)]
    pub(crate) fn made(&self) -> usize {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn a_pass_makes_at_most_one_scratch_per_thread() {
        let pool = ScratchPool::new();
        let sums: Vec<u64> = (0..1000u64)
            .into_par_iter()
            .map(|i| {
                pool.with(Vec::new, |v: &mut Vec<u64>| {
                    v.push(i);
                    i * 2
                })
            })
            .collect();
        assert_eq!(sums, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
        let made = pool.made();
        assert!(made >= 1 && made <= rayon::current_num_threads(), "{made}");
        // Every task's value went into one of the scratches.
        let total: usize = pool.free.lock().unwrap().iter().map(Vec::len).sum();
        assert_eq!(total, 1000);
    }
}
