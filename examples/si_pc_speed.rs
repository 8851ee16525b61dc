//! Prediction time at prefix consistency and snapshot isolation against causal consistency on
//! the shipped IsoPredict traces (docs/performance.md): per trace and strategy, the wall-clock
//! time of `predict` (space, constraints, solving, re-verification) at cc, pc and si, the
//! answers, and the ratios pc/cc and si/cc.
//!
//! `cargo run --release --example si_pc_speed [-- [--write-docs] TIMEOUT_SECS [TRACE…]]`
//! (default timeout 60 s; default traces: all 16 in tests/data/isopredict-traces);
//! `--write-docs` also writes the table into docs/performance.md between its markers.

use std::time::{Duration, Instant};

use isopredict::check::Level;
use isopredict::formats::{read_file, Format};

#[path = "common/docs.rs"]
mod docs;
#[path = "common/traces.rs"]
mod traces;
use isopredict::predict::{predict, PredictOptions, Strategy};

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let write_docs = args.next_if(|a| a == "--write-docs").is_some();
    let timeout: u64 = args.next().map_or(60, |t| t.parse().expect("seconds"));
    let traces = traces::traces(args);
    let mut text = String::new();
    let mut line = |l: String| {
        println!("{l}");
        text.push_str(&l);
        text.push('\n');
    };
    line("| trace | strategy | cc | pc | si | cc ms | pc ms | si ms | pc/cc | si/cc |".into());
    line("|---|---|---|---|---|---|---|---|---|---|".into());
    let (mut worst_pc, mut worst_si) = (0.0f64, 0.0f64);
    let (mut total_cc, mut total_pc, mut total_si) = (0.0, 0.0, 0.0);
    for path in &traces {
        let h = read_file(path, Some(Format::IsoPredict)).expect("a trace");
        let name = path.file_stem().unwrap().to_string_lossy();
        for strategy in Strategy::ALL {
            let mut cells = Vec::new();
            let mut times = Vec::new();
            for level in [Level::Causal, Level::Prefix, Level::Snapshot] {
                let options = PredictOptions::new(level, strategy)
                    .with_timeout(Some(Duration::from_secs(timeout)));
                let start = Instant::now();
                let out = predict(&h, &options).expect("prediction runs");
                times.push(start.elapsed().as_secs_f64() * 1000.0);
                cells.push(traces::answer(&out));
            }
            // Ratios of sub-10 ms answers are noise: count them against 10 ms.
            let base = times[0].max(10.0);
            let (rp, rs) = (times[1] / base, times[2] / base);
            worst_pc = worst_pc.max(rp);
            worst_si = worst_si.max(rs);
            total_cc += times[0];
            total_pc += times[1];
            total_si += times[2];
            line(format!(
                "| {name} | {strategy} | {} | {} | {} | {:.0} | {:.0} | {:.0} | {rp:.2} | {rs:.2} |",
                cells[0], cells[1], cells[2], times[0], times[1], times[2]
            ));
        }
    }
    line(String::new());
    line(format!(
        "Total: cc {total_cc:.0} ms, pc {total_pc:.0} ms, si {total_si:.0} ms; worst ratio (cc \
         floored at 10 ms): pc/cc {worst_pc:.2}, si/cc {worst_si:.2}."
    ));
    if write_docs {
        docs::write_docs_section("performance.md", "si_pc_speed", &text);
    }
}
