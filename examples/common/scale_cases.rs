//! The histories of the scale measurements, shared by `examples/scale_table.rs` (which prints
//! the tables of docs/performance.md) and `benches/scale.rs` (which times its first table's
//! cases): generated serializable runs of real-test-run size (issue 8) and serial runs with a
//! single writing session.

use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};
use isopredict::history::{History, HistoryBuilder, ReadFrom};

/// How a case's history is made.
#[derive(Clone, Copy)]
pub enum Make {
    /// `generate --consistent ser`: (read ratio, Zipf exponent, seed).
    Generated(f64, f64, u64),
    /// One writing session, the others read only ([`one_writer`]).
    OneWriter,
}

/// (table, name, sessions, transactions per session, keys, how).
pub type Case = (u8, &'static str, u32, u32, u32, Make);

/// Every case, by the table of docs/performance.md it belongs to (see
/// `examples/scale_table.rs`): 1, scale (8 operations per transaction, 60 % reads, Zipf 0.8 over
/// a quarter as many keys as operations, and a hot-key case); 2, issue 8's first table
/// re-measured; 3, no prediction at scale (one writer).
pub const CASES: [Case; 14] = [
    (1, "4 × 250", 4, 250, 2_000, Make::Generated(0.6, 0.8, 1)),
    (
        1,
        "10 × 1,000",
        10,
        1_000,
        20_000,
        Make::Generated(0.6, 0.8, 1),
    ),
    (
        1,
        "20 × 5,000",
        20,
        5_000,
        200_000,
        Make::Generated(0.6, 0.8, 1),
    ),
    (
        1,
        "4 × 250, 200 hot keys",
        4,
        250,
        200,
        Make::Generated(0.6, 1.1, 1),
    ),
    (
        2,
        "4 × 10, 100 keys",
        4,
        10,
        100,
        Make::Generated(0.5, 1.0, 0),
    ),
    (
        2,
        "6 × 10, 300 keys",
        6,
        10,
        300,
        Make::Generated(0.5, 1.0, 0),
    ),
    (
        2,
        "8 × 12, 500 keys",
        8,
        12,
        500,
        Make::Generated(0.5, 1.0, 0),
    ),
    (
        2,
        "8 × 25, 1000 keys",
        8,
        25,
        1_000,
        Make::Generated(0.5, 1.0, 0),
    ),
    (
        2,
        "5 × 40, 20 keys",
        5,
        40,
        20,
        Make::Generated(0.5, 1.0, 0),
    ),
    (
        2,
        "10 × 50, 1000 keys",
        10,
        50,
        1_000,
        Make::Generated(0.5, 1.0, 0),
    ),
    (
        2,
        "10 × 100, 100 keys",
        10,
        100,
        100,
        Make::Generated(0.5, 1.0, 0),
    ),
    (
        3,
        "1 writer + 9 readers × 100",
        10,
        100,
        200,
        Make::OneWriter,
    ),
    (
        3,
        "1 writer + 9 readers × 1,000",
        10,
        1_000,
        2_000,
        Make::OneWriter,
    ),
    (
        3,
        "1 writer + 19 readers × 5,000",
        20,
        5_000,
        20_000,
        Make::OneWriter,
    ),
];

/// Case `case`'s history (an index into [`CASES`]).
pub fn history(case: usize) -> History {
    let (_, _, sessions, txns, keys, make) = CASES[case];
    match make {
        Make::Generated(read_ratio, exponent, seed) => generate(&GenerateParams {
            sessions,
            txns_per_session: txns,
            ops_per_txn: 8,
            keys,
            read_ratio,
            distribution: KeyDistribution::Zipf { exponent },
            consistency: Consistency::Serializable,
            seed,
            ..GenerateParams::default()
        })
        .expect("valid parameters"),
        Make::OneWriter => one_writer(sessions, txns, keys),
    }
}

/// A serial run, sessions taking turns: session 1 reads and writes (50 % writes), the others
/// only read; 8 operations per transaction over `keys` keys, Zipf 0.8 (by inverse transform
/// over the harmonic weights, xorshift seeded 1).
fn one_writer(sessions: u32, txns: u32, keys: u32) -> History {
    let mut weights: Vec<f64> = (1..=keys).map(|k| 1.0 / (k as f64).powf(0.8)).collect();
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    for w in &mut weights {
        acc += *w / total;
        *w = acc;
    }
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut b = HistoryBuilder::new("one writer");
    b.initial_value(0);
    let key_ids: Vec<_> = (0..keys).map(|k| b.key(&format!("k{k}"))).collect();
    let mut value = vec![0u64; keys as usize];
    let mut fresh = 0u64;
    let session_ids: Vec<_> = (0..sessions)
        .map(|s| b.session(Some(s as u64 + 1)))
        .collect();
    let mut line = 0;
    for _ in 0..txns {
        for (s, &session) in session_ids.iter().enumerate() {
            let t = b.begin(session, None);
            for _ in 0..8 {
                let u = next();
                let k = weights.partition_point(|&c| c < u).min(keys as usize - 1);
                line += 1;
                if s == 0 && next() < 0.5 {
                    fresh += 1;
                    value[k] = fresh;
                    b.write(t, key_ids[k], Some(fresh), line);
                } else {
                    let v = value[k];
                    b.read(t, key_ids[k], Some(v), ReadFrom::Value(v), line);
                }
            }
            b.commit(t);
        }
    }
    b.build().expect("a well-formed serial run")
}
