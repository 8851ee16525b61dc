//! The history formats: every format read, written, detected and converted; the event format;
//! `--output elle`; locked reads; bad input; round trips; the shipped test data.
//!
//! One test binary for these files (each binary links the library and Z3, and linking
//! dominates the tests' build). A test that changes process-wide state (the stop flag,
//! environment variables, the current directory) does not belong here: it gets a binary of
//! its own, as tests/interrupt.rs and tests/run_memory_guard.rs do.

#[path = "../common/mod.rs"]
mod common;

mod elle_output;
mod events;
mod external;
mod locked_reads;
mod malformed;
mod round_trip;
mod testdata;
