//! Prints the paper's Table 3 counts (averages over runs 1..=10) for every workload and size.
//!
//! `cargo run --release --example table3`

use isopredict::workloads::{all, counts, run, RunConfig, Size};

fn main() {
    println!("| workload | size | reads | writes | txns (read-only) |");
    println!("|---|---|---|---|---|");
    for w in all() {
        for size in [Size::Small, Size::Large] {
            let (mut r, mut wr, mut t, mut ro) = (0, 0, 0, 0);
            for seed in 1..=10 {
                let c = counts(
                    &run(w, &RunConfig::monkeydb(seed, size))
                        .expect("run")
                        .history,
                );
                r += c.reads;
                wr += c.writes;
                t += c.txns;
                ro += c.read_only;
            }
            println!(
                "| {} | {} | {:.1} | {:.1} | {:.1} ({:.1}) |",
                w.name(),
                size.name(),
                r as f64 / 10.0,
                wr as f64 / 10.0,
                t as f64 / 10.0,
                ro as f64 / 10.0
            );
        }
    }
}
