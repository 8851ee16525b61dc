//! The workloads and the pipeline over them (record, check, predict, re-verify, validate,
//! report): the paper's counts and traces, replay validation, Smallbank under snapshot
//! isolation, one anomaly told alike in every view, the drawing's layout.
//!
//! One test binary for these files (each binary links the library and Z3, and linking
//! dominates the tests' build). A test that changes process-wide state (the stop flag,
//! environment variables, the current directory) does not belong here: it gets a binary of
//! its own, as tests/interrupt.rs and tests/run_memory_guard.rs do.

#[path = "../common/mod.rs"]
mod common;

mod anomaly_svg_layout;
mod one_story;
mod run;
mod si_smallbank;
mod tpcc_wikipedia;
mod validate;
mod workloads;
