//! Prediction on histories: the paper's shipped traces, the known write order,
//! docs/prediction.md's table, and explanations checked by an independent re-derivation.
//!
//! One test binary for these files (each binary links the library and Z3, and linking
//! dominates the tests' build). A test that changes process-wide state (the stop flag,
//! environment variables, the current directory) does not belong here: it gets a binary of
//! its own, as tests/interrupt.rs and tests/run_memory_guard.rs do.

#[path = "../common/mod.rs"]
mod common;

mod docs_prediction;
mod explanations;
mod known_order;
mod traces;
