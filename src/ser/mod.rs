//! SER / SI / PC engines: deciding the strong isolation levels, whose commit order is not
//! determined by the history (NP-complete in general, Biswas & Enea OOPSLA'19 §3–4).
//!
//! - [`smt`]: serializability as a direct Z3 total-order check, with a witness serial order.

pub mod smt;

pub use smt::{check_serializable, verify_serial_order, SerError, SerVerdict};
