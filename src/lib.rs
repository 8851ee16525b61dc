//! # isopredict
//!
//! Predicts the isolation anomalies an application could hit on a weakly isolated data store,
//! from a run in which it hit none.
//!
//! Pipeline (see docs/architecture.md): input → formats → [`history::History`] → checkers →
//! predictor → re-verification → replay on the embedded store.
//!
//! Modules (docs/architecture.md orders them as layers, each using only the ones listed
//! before it; `tests/repository/layout.rs` keeps the graph acyclic):
//! - [`history`]: the data model and its validating builder.
//! - [`error`]: input errors that name the file, the line and the problem.
//! - [`dot`]: the one DOT writer every DOT rendering writes through.
//! - [`shrink`]: the one delta-debugging shrinker (a set shrunk while a test still fails).
//! - [`check`]: isolation levels and the checkers.
//! - [`formats`]: reading, writing and detecting history formats.
//! - [`ser`]: SER / SI / PC: prefix search, split reductions, components, an SMT engine, named
//!   minimal violations; every level's verdict at once.
//! - [`predict`]: IsoPredict's predictive analysis with Z3.
//! - [`pipeline`]: `run` (record → check → predict → re-verify → validate → report) and `rank`.
//! - [`report`]: anomaly drawings (DOT, SVG), the evaluation tables and the risk ranking.
//! - [`output`]: writing files and output folders atomically (never a cut or mixed output).
//! - [`stable_hash`]: the stable 64-bit hash (SipHash-1-3) that names keys, as MonkeyDB does.
//! - [`generate`]: random histories, optionally consistent at a chosen level.
//! - [`store`]: the recording transactional key–value store and its table layer.
//! - [`verdict`]: the one decision core: every command judges a history at a level through
//!   [`verdict::decide`], on explicit evidence, with levels that imply each other.
//! - [`workloads`]: Smallbank, Voter, TPC-C and Wikipedia written against the store; runs,
//!   seeds, replay validation.

#![warn(missing_docs)]

pub mod check;
pub mod dot;
pub mod error;
pub mod formats;
pub mod generate;
pub mod history;
pub mod interrupt;
#[macro_use]
pub mod output;
pub mod pipeline;
pub mod predict;
pub mod printable;
pub mod report;
pub mod reproduce;
pub mod ser;
pub mod server;
pub mod shrink;
pub mod stable_hash;
pub mod store;
pub mod verdict;
pub mod workloads;

pub use error::InputError;
pub use history::{History, HistoryBuilder};
