//! SER / SI / PC engines: deciding the strong isolation levels, whose commit order is not
//! determined by the history (NP-complete in general, Biswas & Enea OOPSLA'19 §3–4).
//!
//! - [`smt`]: serializability as a direct Z3 total-order check, with a witness serial order.
//! - [`smt_si_pc`]: prefix consistency and snapshot isolation as a direct Z3 check (positions
//!   and snapshot cuts), with a witness commit order; the re-verifier of SI/PC predictions.

pub mod smt;
pub mod smt_si_pc;

pub use smt::{check_serializable, verify_serial_order, SerError, SerVerdict};
pub use smt_si_pc::{check_si_pc, satisfies_si_pc, verify_si_pc_order, SiPcVerdict};
