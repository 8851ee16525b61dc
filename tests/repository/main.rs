//! The repository's structure and reference docs: the layers of the crate, seen file by file,
//! and the docs naming only what exists.
//!
//! One test binary for these files (each binary links the library and Z3, and linking
//! dominates the tests' build). A test that changes process-wide state (the stop flag,
//! environment variables, the current directory) does not belong here: it gets a binary of
//! its own, as tests/interrupt.rs and tests/run_memory_guard.rs do.

mod docs;
mod layout;
