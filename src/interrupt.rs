//! Stopping cleanly when the user interrupts (Ctrl-C, SIGINT) or the system asks the process
//! to end (SIGTERM, SIGHUP).
//!
//! One process-wide flag says that a stop was requested ([`request`], called by the command
//! line's signal handler); long computations look at it ([`requested`]) and give up, and the
//! command line then exits with [`EXIT_INTERRUPTED`] before writing any output.
//!
//! Z3 work in flight is stopped too. Every solver call goes through [`check`], which turns off
//! Z3's own Ctrl-C handling for the solver (Z3 would otherwise replace the process's SIGINT
//! handler during each call and merely cancel that one call, after which the command went on
//! with an "unknown" result) and records the call's context while it runs. Once a stop is
//! requested, a background thread interrupts (`Z3_interrupt`) every recorded context, again
//! every [`INTERRUPT_PERIOD`] until the process ends: Z3 forgets an interrupt that arrives just
//! before a call starts, so interrupting once could miss a call that was about to begin, and a
//! call that starts after the request is refused by [`check`] itself.
//!
//! Work that leaves something outside the process while it runs (a PostgreSQL schema)
//! registers how to remove it ([`register_cleanup`]); a second signal, which exits at once,
//! runs those ([`run_cleanups`]) first.
//!
//! **Keeping what was found.** A command that already holds verified findings (a prediction)
//! calls [`keep_findings`]: from then on a stop only cuts the searches it runs through
//! [`cuttable`] (the search for further distinct anomalies), which end early with what they
//! found; verifying, replaying and writing the findings go on ([`requested`] is false outside
//! a cuttable search), and the outputs say the search was cut ([`signalled`]). A second signal
//! still exits at once.
//!
//! The flag never goes back: tests of a stop run in a process of their own
//! (`tests/interrupt.rs`, `tests/cli/cut_search.rs`), not beside other tests.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

use z3::{Params, SatResult, Solver};

/// The exit code of a command stopped by SIGINT or SIGTERM (128 + SIGINT's number 2, as
/// shells report a process killed by Ctrl-C).
pub const EXIT_INTERRUPTED: u8 = 130;

/// How often the contexts of solver calls in flight are interrupted once a stop is requested.
pub const INTERRUPT_PERIOD: Duration = Duration::from_millis(20);

/// Whether a stop was requested (a signal arrived).
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Whether the command keeps its findings on a stop ([`keep_findings`]).
static KEEPING: AtomicBool = AtomicBool::new(false);

/// Cuttable searches running ([`cuttable`]).
static CUTTABLE: AtomicUsize = AtomicUsize::new(0);

/// The Z3 contexts (raw `Z3_context` pointers) of the solver calls in flight, one entry per
/// call. An entry is removed, under this lock, before its call's context can be freed, so the
/// interrupting thread, which holds the lock while it interrupts, only touches live contexts.
static IN_FLIGHT: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Cleanups to run before a forced exit: (id, action).
type CleanupList = Vec<(u64, Box<dyn FnOnce() + Send>)>;

static CLEANUPS: Mutex<CleanupList> = Mutex::new(Vec::new());

/// Registers `action` to run if the process is made to exit at once ([`run_cleanups`]);
/// dropping the returned guard unregisters it (the work removed what it made itself).
pub fn register_cleanup(action: Box<dyn FnOnce() + Send>) -> CleanupGuard {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let id = NEXT.fetch_add(1, Ordering::SeqCst);
    CLEANUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((id, action));
    CleanupGuard(id)
}

/// Unregisters its cleanup when dropped ([`register_cleanup`]).
#[derive(Debug)]
pub struct CleanupGuard(u64);

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        let mut list = CLEANUPS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = list.iter().position(|(id, _)| *id == self.0) {
            // Dropped without running.
            drop(list.swap_remove(i));
        }
    }
}

/// Runs (once) every registered cleanup: for an exit that cannot wait for the work to stop.
/// (The temporaries of writes in flight are `output`'s, removed by
/// `output::remove_temporaries`, which sits above this module.)
pub fn run_cleanups() {
    let list = std::mem::take(&mut *CLEANUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for (_, action) in list {
        action();
    }
}

/// The computation was interrupted by the user (SIGINT): its result, if any, is not to be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Whether the work running now is to stop: a stop was requested and, once the command keeps
/// its findings ([`keep_findings`]), only inside a [`cuttable`] search (see the module
/// documentation).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
        && (!KEEPING.load(Ordering::SeqCst) || CUTTABLE.load(Ordering::SeqCst) > 0)
}

/// Whether a stop signal arrived at all (whether or not it stops the work running now): a
/// second signal exits at once, and a search that [`keep_findings`] let finish early says it
/// was cut.
pub fn signalled() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The command holds verified findings and keeps them: from now on a stop cuts only the
/// [`cuttable`] searches, and the work that verifies and writes the findings goes on. For the
/// rest of the process (a command's findings are not dropped again).
pub fn keep_findings() {
    KEEPING.store(true, Ordering::SeqCst);
}

/// Whether [`keep_findings`] was called.
pub fn keeping_findings() -> bool {
    KEEPING.load(Ordering::SeqCst)
}

/// Runs `search`, a search whose findings so far are worth keeping, so that a stop (requested
/// before or while it runs) ends it early even after [`keep_findings`]; the caller asks
/// [`signalled`] afterwards whether it was cut.
pub fn cuttable<R>(search: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            CUTTABLE.fetch_sub(1, Ordering::SeqCst);
        }
    }
    CUTTABLE.fetch_add(1, Ordering::SeqCst);
    let _leave = Leave;
    search()
}

/// `Err(Interrupted)` once a stop was requested: `interrupt::stop_point()?` between steps.
pub fn stop_point() -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}

/// Requests a stop: sets the flag and starts interrupting the Z3 calls in flight (now and
/// every [`INTERRUPT_PERIOD`] until the process ends). Safe to call more than once and from
/// any thread (not from a signal handler itself: the `ctrlc` crate runs handlers on a thread
/// of their own).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
    static INTERRUPTER: Once = Once::new();
    INTERRUPTER.call_once(|| {
        interrupt_in_flight();
        std::thread::spawn(|| loop {
            std::thread::sleep(INTERRUPT_PERIOD);
            interrupt_in_flight();
        });
    });
}

/// Interrupts every Z3 call in flight, while the work running is to stop ([`requested`]).
fn interrupt_in_flight() {
    if !requested() {
        return;
    }
    let live = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
    for &ctx in live.iter() {
        if let Some(ctx) = std::ptr::NonNull::new(ctx as *mut z3_sys::_Z3_context) {
            // SAFETY: the context is alive while its entry is in IN_FLIGHT (removed under the
            // lock we hold, before the call returns); Z3_interrupt may be called from any thread.
            unsafe { z3_sys::Z3_interrupt(ctx) };
        }
    }
}

/// Removes a call's entry from [`IN_FLIGHT`] when dropped (also on a panic).
struct InFlight(usize);

impl InFlight {
    fn enter(ctx: usize) -> InFlight {
        IN_FLIGHT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(ctx);
        InFlight(ctx)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut live = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = live.iter().position(|&c| c == self.0) {
            live.swap_remove(i);
        }
    }
}

/// Runs one solver call (`call(solver)`, e.g. `|s| s.check()`) so that a stop request
/// interrupts it: Z3's own Ctrl-C handling is turned off for `solver`, the call is recorded
/// while it runs, and a call that would start after a stop was requested is not made
/// ([`SatResult::Unknown`]; the solver's reason is then Z3's, so callers that need to tell
/// an interruption from a time limit ask [`requested`]).
pub fn check(solver: &Solver, call: impl FnOnce(&Solver) -> SatResult) -> SatResult {
    let mut params = Params::new();
    params.set_bool("ctrl_c", false);
    // Not a stop setting, but every solver call passes here: a compacted model costs libz3
    // 4.8.12 time in the size of the problem at every `get_model` (~0.5 s per model on a
    // 200-transaction run's 200,000 assertions, against 10–20 ms uncompacted), and the
    // engines read a model after each `sat` (values are the same either way).
    params.set_bool("model.compact", false);
    solver.set_params(&params);
    let _in_flight = InFlight::enter(solver.get_context().get_z3_context().as_ptr() as usize);
    // After recording the call: a request made from now on finds it in IN_FLIGHT.
    if requested() {
        return SatResult::Unknown;
    }
    call(solver)
}
