//! Checking a history against an isolation level.
//!
//! - [`Level`]: the levels and their strength.
//! - [`oracle`]: the brute-force ground truth over all commit orders (tiny histories only).

mod level;
pub mod oracle;

pub use level::Level;
