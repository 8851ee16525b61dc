//! Z3's memory under `--memory` (issue 8: a limit gives "unknown", never a kill): a watchdog
//! thread polls Z3's own estimate of its allocations (`Z3_get_estimated_alloc_size`, counted
//! over the whole process) every [`POLL`] while prediction runs, and while it is over the
//! budget interrupts the predicting thread's Z3 context (`Z3_interrupt`, what a timeout does):
//! the running solver call returns unknown ("canceled"), and [`watch`] reports the peak it saw
//! so that the answer names the memory limit. The same watchdog interrupts Z3 once the
//! command's deadline has passed, should a solver call overrun its own timeout (Z3 checks it
//! only now and then: overruns of several seconds were seen on a loaded machine).
//!
//! Why not Z3's own cap (the global parameter `memory_max_size`): with libz3 4.8.12 hitting it
//! inside a solver call sometimes throws a second out-of-memory exception while the first
//! unwinds, and the process aborts (`terminate called after throwing an instance of
//! 'out_of_memory_error'`; measured on a pigeonhole problem: caps of 25–40 MB abort, 20 MB
//! returns unknown), and hitting it while building terms makes the z3 crate panic (it unwraps
//! the null term). An interrupt is always safe. What the watchdog cannot bound: memory Z3
//! allocates within one poll interval, and term construction between solver calls (the
//! engines estimate an encoding against the budget before building it).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the watchdog looks at Z3's allocations.
pub const POLL: Duration = Duration::from_millis(20);

extern "C" {
    /// libz3: the estimated allocated memory in bytes (all contexts of the process).
    fn Z3_get_estimated_alloc_size() -> u64;
}

/// Bytes Z3 has allocated now, by its own estimate (all contexts of the process).
pub fn allocated() -> u64 {
    // SAFETY: a read of a global counter; libz3 is linked through the z3 crate.
    unsafe { Z3_get_estimated_alloc_size() }
}

/// Runs `f` (which uses the calling thread's current Z3 context) with the watchdog of the
/// module documentation when `budget` (bytes) or `deadline` is given; returns `f`'s result
/// and, when Z3's allocations went over the budget, the most it saw (bytes).
pub fn watch<R>(
    budget: Option<u64>,
    deadline: Option<Instant>,
    f: impl FnOnce() -> R,
) -> (R, Option<u64>) {
    if budget.is_none() && deadline.is_none() {
        return (f(), None);
    }
    let budget = budget.unwrap_or(u64::MAX);
    let ctx = z3::Context::thread_local();
    let handle = ctx.handle();
    let done = AtomicBool::new(false);
    let peak = AtomicU64::new(0);
    let result = std::thread::scope(|s| {
        let watchdog = s.spawn(|| {
            while !done.load(Ordering::Acquire) {
                let now = allocated();
                if now > budget {
                    peak.fetch_max(now, Ordering::AcqRel);
                    handle.interrupt();
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    handle.interrupt();
                }
                std::thread::park_timeout(POLL);
            }
        });
        // Stops the watchdog when `f` returns and also when it panics: the scope waits for
        // the watchdog, which would otherwise poll forever and hang the panicking process.
        struct StopOnDrop<'a>(&'a AtomicBool, &'a std::thread::Thread);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
                self.1.unpark();
            }
        }
        let _stop = StopOnDrop(&done, watchdog.thread());
        f()
    });
    let peak = peak.load(Ordering::Acquire);
    (result, (peak > 0).then_some(peak))
}

/// The reason of an unknown answer when Z3 went over the `budget` (bytes; `peak` the most
/// seen): names the limit and what to try.
pub fn over_budget_reason(budget: u64, peak: u64) -> String {
    format!(
        "memory limit: Z3's allocations reached {} MB, over the {} MB budget (--memory), and \
         the solver was stopped; try a larger --memory (Z3 itself takes ~20 MB)",
        peak.div_ceil(1 << 20),
        budget >> 20
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::Bool;
    use z3::{SatResult, Solver};

    /// A solver holding the pigeonhole problem of n + 1 pigeons in n holes (unsat, and slow to
    /// prove for n ≥ 11).
    fn pigeonhole(n: usize) -> Solver {
        let solver = Solver::new();
        let v: Vec<Vec<Bool>> = (0..=n)
            .map(|p| {
                (0..n)
                    .map(|h| Bool::new_const(format!("p{p}h{h}")))
                    .collect()
            })
            .collect();
        for row in &v {
            solver.assert(Bool::or(row));
        }
        for (p, first) in v.iter().enumerate() {
            for second in &v[p + 1..] {
                for (a, b) in first.iter().zip(second) {
                    solver.assert(Bool::or(&[a.not(), b.not()]));
                }
            }
        }
        solver
    }

    #[test]
    fn a_budget_below_what_z3_holds_stops_a_long_check() {
        // A fresh context alone is ~17 MB; a pigeonhole problem (13 pigeons, 12 holes) keeps
        // the solver busy for far longer than one poll.
        let (result, peak) = z3::with_z3_config(&z3::Config::new(), || {
            watch(Some(1 << 20), None, || pigeonhole(12).check())
        });
        assert_eq!(result, SatResult::Unknown);
        assert!(peak.is_some_and(|p| p > 1 << 20), "{peak:?}");
        assert!(over_budget_reason(1 << 20, peak.unwrap()).contains("over the 1 MB budget"));
    }

    #[test]
    fn a_panic_under_the_watchdog_is_not_a_hang() {
        // The scope waits for the watchdog: a panic in `f` must stop it too.
        let caught = std::panic::catch_unwind(|| {
            z3::with_z3_config(&z3::Config::new(), || {
                watch(
                    None,
                    Some(Instant::now() + Duration::from_secs(3600)),
                    || panic!("inside the watched computation"),
                )
            })
        });
        assert!(caught.is_err());
    }

    #[test]
    fn without_a_budget_nothing_is_watched() {
        let (result, peak) = watch(None, None, || 7);
        assert_eq!((result, peak), (7, None));
    }

    #[test]
    fn a_passed_deadline_stops_a_check_that_ignores_it() {
        // A solver without a timeout of its own, and a deadline 200 ms away.
        let start = Instant::now();
        let (result, peak) = z3::with_z3_config(&z3::Config::new(), || {
            watch(None, Some(start + Duration::from_millis(200)), || {
                pigeonhole(12).check()
            })
        });
        assert_eq!(result, SatResult::Unknown);
        assert_eq!(peak, None);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}
