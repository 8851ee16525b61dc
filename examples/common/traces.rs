//! Shared by the examples that measure prediction on the shipped IsoPredict traces
//! (`prediction_table`, `si_pc_speed`; `benches/predict.rs` uses [`testdata`]): where the
//! traces are, which ones to run, and how an answer is printed.

use std::path::PathBuf;

use isopredict::predict::{PredictOutcome, Verdict};

/// The test data shipped in the repository (`tests/data`, see its README.md).
pub fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The traces named on the command line, else all shipped ones (sorted).
pub fn traces(args: impl Iterator<Item = String>) -> Vec<PathBuf> {
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
    traces
}

/// The answer as the tables print it (`sat`: a prediction, `unsat`: none).
pub fn answer(out: &PredictOutcome) -> String {
    match out.verdict {
        Verdict::Predicted => "sat".to_string(),
        Verdict::NoPrediction => "unsat".to_string(),
        Verdict::ObservedViolation => "observed violation".to_string(),
        Verdict::ObservedUnserializable => "observed unserializable".to_string(),
        Verdict::Unknown => format!("unknown ({})", out.reason.clone().unwrap_or_default()),
    }
}
