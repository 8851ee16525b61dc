//! The memory guard of `isopredict run` (`pipeline::run_workload_within`): a run that grows
//! past its budget stops with "unknown" naming the budget, instead of being killed. Its own
//! test binary: the guard requests a process-wide stop (`isopredict::interrupt`), which
//! must not reach other tests.

use isopredict::pipeline::run_memory::resident_bytes;
use isopredict::pipeline::{run_workload_within, PipelineError, RunOptions};
use isopredict::workloads;

#[test]
fn a_run_that_grows_past_its_budget_stops_with_unknown_naming_it() {
    // Wikipedia 10 × 200 records 1.7 M reads (~200 MB): 48 MB over what the process holds
    // now is passed while recording, long before the run could end.
    let budget = resident_bytes().expect("/proc/self/statm") + (48 << 20);
    let options = RunOptions {
        sessions: 10,
        size: workloads::Size::Calls(200),
        ..RunOptions::default()
    };
    let outcome = run_workload_within(
        workloads::by_name("wikipedia").unwrap(),
        &options,
        Some(budget),
    );
    match outcome {
        Err(e @ PipelineError::OverMemory(_)) => {
            let message = e.to_string();
            assert!(message.starts_with("unknown: "), "{message}");
            assert!(
                message.contains(&format!("memory budget of {} MB", budget >> 20)),
                "{message}"
            );
        }
        Err(e) => panic!("another error: {e}"),
        Ok(o) => panic!("the run ended: {}", o.report.summary),
    }
}
