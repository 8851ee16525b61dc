//! Shared by `examples/strong_levels.rs` (the "SER, SI and PC" table of docs/performance.md)
//! and `benches/strong.rs`: the generated histories both time the SER / SI / PC engines on.

use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};
use isopredict::History;

/// `sessions` × `txns` transactions from the generator's store at `consistency`: 8 operations
/// each, half reads, Zipf 1.0 over 100 keys, no aborts.
pub fn history(sessions: u32, txns: u32, consistency: Consistency, seed: u64) -> History {
    generate(&GenerateParams {
        sessions,
        txns_per_session: txns,
        ops_per_txn: 8,
        keys: 100,
        read_ratio: 0.5,
        distribution: KeyDistribution::Zipf { exponent: 1.0 },
        abort_ratio: 0.0,
        consistency,
        seed,
    })
    .expect("valid parameters")
}
