//! The prediction table of docs/prediction.md: every shipped IsoPredict trace × strategy ×
//! level, with the encoding size (assertions, literals — the paper's "# Literals"), constraint
//! generation time, solving time and the answer.
//!
//! `cargo run --release --example prediction_table [-- TIMEOUT_SECS [TRACE…]]`
//! (default timeout 60 s; default traces: all 16 in ../shared/testdata/isopredict-traces).
//! The table measures the paper-form encodings (`Engine::Paper`), whose sizes it reports.

use std::path::PathBuf;
use std::time::Duration;

use isopredict::check::Level;
use isopredict::formats::{read_file, Format};
use isopredict::predict::{predict, Engine, PredictOptions, Strategy, Verdict};

fn main() {
    let mut args = std::env::args().skip(1);
    let timeout: u64 = args.next().map_or(60, |t| t.parse().expect("seconds"));
    let mut traces: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if traces.is_empty() {
        let dir = testdata().join("isopredict-traces");
        traces = std::fs::read_dir(&dir)
            .expect("the trace directory")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        traces.sort();
    }
    println!("| trace | level | strategy | result | txns | choices | assertions | literals | generation ms | solving ms | calls |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for path in &traces {
        let h = read_file(path, Some(Format::IsoPredict)).expect("a trace");
        let name = path.file_stem().unwrap().to_string_lossy();
        for level in [Level::Causal, Level::ReadAtomic, Level::ReadCommitted] {
            for strategy in Strategy::ALL {
                let mut options = PredictOptions::new(level, strategy)
                    .with_timeout(Some(Duration::from_secs(timeout)));
                options.engine = Engine::Paper;
                let out = predict(&h, &options).expect("prediction runs");
                let s = &out.stats;
                let result = match out.verdict {
                    Verdict::Predicted => "sat".to_string(),
                    Verdict::NoPrediction => "unsat".to_string(),
                    Verdict::ObservedViolation => "observed violation".to_string(),
                    Verdict::ObservedUnserializable => "observed unserializable".to_string(),
                    Verdict::Unknown => format!("unknown ({})", out.reason.unwrap_or_default()),
                };
                println!(
                    "| {name} | {level} | {strategy} | {result} | {} | {}/{} | {} | {} | {:.0} | {:.0} | {} |",
                    s.nodes - 1,
                    s.open_choices,
                    s.choices,
                    s.encoding.assertions,
                    s.encoding.literals,
                    s.generation_ms,
                    s.solving_ms,
                    s.solver_calls
                );
            }
        }
    }
}

/// The shared test data: `ISOPREDICT_TESTDATA`, else `shared/testdata` one or two levels above
/// the crate.
fn testdata() -> PathBuf {
    if let Some(dir) = std::env::var_os("ISOPREDICT_TESTDATA") {
        return dir.into();
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    ["..", "../.."]
        .iter()
        .map(|up| manifest.join(up).join("shared/testdata"))
        .find(|d| d.is_dir())
        .expect("../shared/testdata (or set ISOPREDICT_TESTDATA)")
}
