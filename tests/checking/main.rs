//! The checkers and the decision core: against the brute-force oracle and each other, on the
//! labelled histories and the peers' test suites; one verdict whoever asks; the dependency-graph
//! route; the anomaly table; `watch` against the offline verdict; Z3 itself.
//!
//! One test binary for these files (each binary links the library and Z3, and linking
//! dominates the tests' build). A test that changes process-wide state (the stop flag,
//! environment variables, the current directory) does not belong here: it gets a binary of
//! its own, as tests/interrupt.rs and tests/run_memory_guard.rs do.

#[path = "../common/mod.rs"]
mod common;

mod anomaly_table;
mod known_order_graph;
mod labelled;
mod one_verdict;
mod peers;
mod prop_checkers;
mod strong_levels;
mod watch_offline;
mod z3_smoke;
