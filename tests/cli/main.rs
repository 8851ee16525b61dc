//! End-to-end tests of the `isopredict` binary, command by command: each file runs the built
//! binary as a child process (its first lines say what it covers).
//!
//! One test binary for these files (each binary links the library and Z3, and linking
//! dominates the tests' build). A test that changes process-wide state (the stop flag,
//! environment variables, the current directory) does not belong here: it gets a binary of
//! its own, as tests/interrupt.rs and tests/run_memory_guard.rs do.

#[path = "../common/mod.rs"]
mod common;

mod anomalies;
mod cells;
mod check;
mod cut_search;
mod defects;
mod generate;
mod interrupt;
mod limits;
mod messages;
mod one_name;
mod outputs;
mod phase_limits;
mod pipeline;
mod predict;
mod rank_cut;
mod scan;
mod stats_convert;
mod strong;
mod timestamps;
