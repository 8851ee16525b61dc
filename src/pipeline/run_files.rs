//! The files of a run ([`write_run_files`]): the observed, predicted and validating histories
//! (native JSON and IsoPredict traces), the anomaly's DOT and SVG, report.md and report.json,
//! written as one folder atomically.

use std::path::Path;

use crate::formats::{self, Format};
use crate::workloads::Run;

use super::run::RunOutcome;

/// Writes `outcome`'s files into `dir` (created if needed) and records their paths in the
/// report: `observed.json` / `observed.trace.txt`, and with a prediction `predicted.json` /
/// `predicted.trace.txt`, `validating.json` / `validating.trace.txt`, `anomaly.dot`,
/// `anomaly.svg`; then `report.md` and `report.json`. Histories are in the native JSON format
/// and the IsoPredict trace format. The folder is written atomically
/// ([`crate::output::write_folder_atomically`]): complete, or untouched on failure; an earlier
/// run's folder is replaced whole (no stale file stays), a folder holding files `run` does not
/// write ([`RUN_FILES`]) is refused.
pub fn write_run_files(outcome: &mut RunOutcome, dir: &Path) -> anyhow::Result<()> {
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    let trace = |run: &Run| -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        run.write_trace(&mut out)?;
        Ok(out)
    };
    // Native JSON speaks the application's terms; trace files keep the store's hashed keys.
    let keys = &outcome.keys;
    let json = |h: &crate::history::History| -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        formats::write_to(&keys.rename(h), Format::Json, &mut out)?;
        Ok(out)
    };
    files.push(("observed.json", json(&outcome.observed.history)?));
    files.push(("observed.trace.txt", trace(&outcome.observed)?));
    if let Some(p) = &outcome.prediction {
        files.push(("predicted.json", json(&p.history)?));
        let mut out = Vec::new();
        formats::write_to(&p.history, Format::IsoPredict, &mut out)?;
        files.push(("predicted.trace.txt", out));
    }
    if let Some(v) = &outcome.validation {
        files.push(("validating.json", json(&v.run.history)?));
        files.push(("validating.trace.txt", trace(&v.run)?));
    }
    if let Some(g) = &outcome.anomaly {
        files.push(("anomaly.dot", g.to_dot().into_bytes()));
        files.push(("anomaly.svg", g.to_svg().into_bytes()));
    }
    outcome.report.files = files
        .iter()
        .map(|(name, _)| *name)
        .chain(["report.md", "report.json"])
        .map(|name| dir.join(name).display().to_string())
        .collect();
    files.push(("report.md", outcome.report.to_markdown().into_bytes()));
    files.push((
        "report.json",
        (serde_json::to_string_pretty(&outcome.report)? + "\n").into_bytes(),
    ));
    let files: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_slice())).collect();
    crate::output::write_folder_atomically(dir, &files, RUN_FILES)?;
    Ok(())
}

/// Every file `run` may write into its output folder; a folder holding anything else is not
/// replaced.
pub const RUN_FILES: &[&str] = &[
    "observed.json",
    "observed.trace.txt",
    "predicted.json",
    "predicted.trace.txt",
    "validating.json",
    "validating.trace.txt",
    "anomaly.dot",
    "anomaly.svg",
    "report.md",
    "report.json",
    // `isopredict reproduce`'s folder (replaced with the run's folder).
    "reproduce",
];
