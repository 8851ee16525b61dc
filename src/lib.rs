//! # isopredict
//!
//! Predicts the isolation anomalies an application could hit on a weakly isolated data store,
//! from a run in which it hit none.
//!
//! Pipeline (see DESIGN.md): input → formats → [`history::History`] → checkers →
//! predictor → re-verification → replay on the embedded store.
//!
//! Modules:
//! - [`history`]: the data model and its validating builder.
//! - [`error`]: input errors that name the file, the line and the problem.
//! - [`dot`]: quoting shared by every DOT rendering.
//! - [`check`]: isolation levels and the checkers.
//! - [`formats`]: reading, writing and detecting history formats.
//! - [`ser`]: SER / SI / PC: prefix search, split reductions, components, an SMT engine, named
//!   minimal violations; every level's verdict at once.
//! - [`predict`]: IsoPredict's predictive analysis with Z3.
//! - [`pipeline`]: `run` (record → check → predict → re-verify → validate → report) and `rank`.
//! - [`report`]: anomaly drawings (DOT, SVG), the evaluation tables and the risk ranking.
//! - [`output`]: writing files and output folders atomically (never a cut or mixed output).
//! - [`generate`]: random histories, optionally consistent at a chosen level.
//! - [`store`]: the recording transactional key–value store and its table layer.
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
pub mod output;
pub mod pipeline;
pub mod predict;
pub mod printable;
pub mod report;
pub mod ser;
pub mod store;
pub mod workloads;

pub use error::InputError;
pub use history::{History, HistoryBuilder};
