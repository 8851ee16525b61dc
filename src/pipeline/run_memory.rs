//! The memory guard of `isopredict run` ([`run_workload_within`]): a run whose recording grows
//! past the memory budget stops with "unknown" naming the budget (exit 3), instead of being
//! killed by the kernel's out-of-memory killer or aborting on a failed allocation.
//!
//! A watchdog thread samples the process's resident memory (`/proc/self/statm`) every
//! [`SAMPLE_PERIOD`]; over the budget, it requests a stop ([`crate::interrupt::request`]): the
//! recording stops between calls, checks and searches at their next stop point, Z3 calls are
//! interrupted. A run that had already found an anomaly keeps it (the stop only cuts the
//! search for more, [`crate::interrupt::keep_findings`]) and says so in its report; any other
//! run ends with [`PipelineError::OverMemory`].
//!
//! The budget is the one prediction uses ([`crate::predict::default_memory_budget`]: half the
//! machine's memory, or of the address-space limit `ulimit -v` when that is lower), so the
//! rest is headroom for what grows between two samples.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::run::{run_workload, PipelineError, RunOptions, RunOutcome};
use crate::workloads::Workload;

/// How often the watchdog samples the resident memory.
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(25);

/// The process's resident memory in bytes (`/proc/self/statm`), if it can be read.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|&p| p > 0)?)
}

/// [`run_workload`] under a memory budget in bytes (`None`: no guard). Over the budget the run
/// stops: [`PipelineError::OverMemory`] naming the budget, or — when an anomaly was already
/// found — the outcome with a note in its summary that the search for more was cut.
pub fn run_workload_within(
    workload: &dyn Workload,
    options: &RunOptions,
    budget: Option<u64>,
) -> Result<RunOutcome, PipelineError> {
    let Some(budget) = budget.filter(|_| resident_bytes().is_some()) else {
        return run_workload(workload, options);
    };
    let done = AtomicBool::new(false);
    let over = AtomicU64::new(0);
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                if let Some(rss) = resident_bytes().filter(|&rss| rss > budget) {
                    over.store(rss, Ordering::SeqCst);
                    crate::interrupt::request();
                    return;
                }
                std::thread::sleep(SAMPLE_PERIOD);
            }
        });
        let outcome = run_workload(workload, options);
        done.store(true, Ordering::SeqCst);
        outcome
    });
    let resident = over.load(Ordering::SeqCst);
    if resident == 0 {
        return outcome;
    }
    let note = over_memory(budget, resident);
    match outcome {
        Ok(mut o) if o.prediction.is_some() => {
            o.report.summary = format!(
                "{} The search for further anomalies was cut: {note}.",
                o.report.summary
            );
            Ok(o)
        }
        _ => Err(PipelineError::OverMemory(note)),
    }
}

/// What the guard says when it stops a run.
fn over_memory(budget: u64, resident: u64) -> String {
    const MB: u64 = 1 << 20;
    format!(
        "the run used {} MB, over its memory budget of {} MB (half the machine's memory, or \
         of the address-space limit `ulimit -v`); fewer sessions or calls fit",
        resident / MB,
        budget / MB
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_memory_counts_a_touched_allocation() {
        let block = vec![1u8; 64 << 20];
        let resident = resident_bytes().expect("/proc/self/statm on Linux");
        assert!(block.iter().step_by(4096).all(|&b| b == 1));
        assert!(resident >= 64 << 20, "{resident}");
    }

    #[test]
    fn the_message_names_the_budget_and_the_use() {
        let m = over_memory(2 << 30, 3 << 30);
        assert!(m.contains("3072 MB"), "{m}");
        assert!(m.contains("memory budget of 2048 MB"), "{m}");
    }
}
