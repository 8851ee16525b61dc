//! Records one workload run and prints its IsoPredict trace and Table 3 counts.
//!
//! `cargo run --release --example record -- smallbank 1 small > trace.txt`

use isopredict::workloads::{by_name, counts, run, RunConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("smallbank", |s| s.as_str());
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let size = args
        .get(3)
        .map_or("small", |s| s.as_str())
        .parse()
        .expect("small or large");
    let workload = by_name(name).expect("unknown workload");
    let r = run(workload, &RunConfig::paper(seed, size)).expect("run");
    r.store.write_trace(&mut std::io::stdout()).expect("stdout");
    eprintln!("{:?}", counts(&r.history));
    eprintln!("calls {:?}", r.calls);
    eprintln!("invariants {:?}", r.invariants);
}
