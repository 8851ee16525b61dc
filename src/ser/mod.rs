//! SER / SI / PC engines: deciding the strong isolation levels, whose commit order is not
//! determined by the history (NP-complete in general, Biswas & Enea OOPSLA'19 §3–4).
//!
//! - [`smt`]: serializability as a direct Z3 total-order check, with a witness serial order.
//! - [`timestamped`], [`chronos`], [`aion`], [`ts_report`]: checking SI and SER from the
//!   start and commit timestamps a database assigned (Chronos offline, Aion online);
//!   [`ts_generate`] simulates a timestamped SI store; [`watch`] drives the online checker.

pub mod aion;
pub mod chronos;
pub mod smt;
pub mod timestamped;
pub mod ts_generate;
pub mod ts_report;
pub mod watch;

pub use chronos::{check_timestamps, TsCheckOptions, TsLevel};
pub use smt::{check_serializable, verify_serial_order, SerError, SerVerdict};
pub use timestamped::{Hlc, TimestampedHistory};
pub use ts_report::{TimestampReport, TsViolation};
