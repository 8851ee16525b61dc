//! Generates a synthetic Plume text history of a serial execution, for benchmarks and memory
//! measurements: `cargo run --release --example gen_plume -- OPS [SESSIONS] [KEYS] [SEED]`
//! prints OPS operations (default 50 sessions, 10,000 keys) to standard output.
//!
//! Transactions of 4–16 operations (70 % reads) run one at a time in a random session; a read
//! returns the latest value of its key (0, the initial value, if none), a write a fresh value.
//! benches/parse.rs includes this file for the same generator.

use std::fmt::Write as _;

/// xorshift64*: a small deterministic generator, enough for synthetic data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) % n
    }
}

/// The Plume text of a serial history with `ops` operations.
pub fn generate(ops: usize, sessions: u64, keys: u64, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut latest = vec![0u64; keys as usize];
    let mut next_value = 1u64;
    let mut text = String::with_capacity(ops * 24);
    let mut written = 0usize;
    let mut txn = 0u64;
    while written < ops {
        let session = rng.below(sessions);
        let len = (4 + rng.below(13) as usize).min(ops - written);
        for _ in 0..len {
            let key = rng.below(keys);
            if rng.below(10) < 7 {
                let _ = writeln!(text, "r({key},{},{session},{txn})", latest[key as usize]);
            } else {
                let v = next_value;
                next_value += 1;
                latest[key as usize] = v;
                let _ = writeln!(text, "w({key},{v},{session},{txn})");
            }
        }
        written += len;
        txn += 1;
    }
    text
}

#[allow(dead_code)]
fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are integers"))
        .collect();
    let ops = args.first().copied().unwrap_or(1_000_000) as usize;
    let sessions = args.get(1).copied().unwrap_or(50);
    let keys = args.get(2).copied().unwrap_or(10_000);
    let seed = args.get(3).copied().unwrap_or(1);
    print!("{}", generate(ops, sessions, keys, seed));
}
