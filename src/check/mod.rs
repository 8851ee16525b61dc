//! Checking a history against an isolation level.
//!
//! - [`Level`]: the levels and their strength.

mod level;

pub use level::Level;
