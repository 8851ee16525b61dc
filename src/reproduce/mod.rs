//! Reproducing a prediction on a real database (issue 21): a [`schedule`] of the predicted
//! history's statements that makes the database at a given isolation level give every read
//! its predicted writer, or the reason none exists.

pub mod schedule;

pub use schedule::{schedule, NoSchedule, Schedule, Step, StepKind};
