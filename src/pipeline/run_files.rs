//! The files of a run ([`write_run_files`]): the observed, predicted and validating histories
//! (native JSON and IsoPredict traces), the anomaly's DOT and SVG, report.md and report.json,
//! written as one folder atomically.

use std::io::{self, Write};
use std::path::Path;

use crate::formats::{self, Format};
use crate::history::History;
use crate::output::FolderFile;
use crate::store::KeyDirectory;
use crate::workloads::Run;

use super::run_data::RunOutcome;

/// Writes `outcome`'s files into `dir` (created if needed) and records their paths in the
/// report: `observed.json` / `observed.trace.txt`, and with a prediction `predicted.json` /
/// `predicted.trace.txt`, `validating.json` / `validating.trace.txt`, `anomaly.dot`,
/// `anomaly.svg` (an observed anomaly: `anomaly.dot` as `check --dot` draws it); then `report.md` and `report.json`. Histories are in the native JSON format
/// and the IsoPredict trace format. The folder is written atomically
/// ([`crate::output::write_folder_streamed`], each file written straight to disk, never held
/// in memory whole): complete, or untouched on failure; an earlier
/// run's folder is replaced whole (no stale file stays), a folder holding files `run` does not
/// write ([`RUN_FILES`]) is refused.
pub fn write_run_files(outcome: &mut RunOutcome, dir: &Path) -> anyhow::Result<()> {
    // The names first (the report lists them), then every file written straight to disk:
    // the observed history of a large run is hundreds of megabytes in each format.
    let mut names: Vec<&str> = vec!["observed.json", "observed.trace.txt"];
    if outcome.prediction.is_some() {
        names.extend(["predicted.json", "predicted.trace.txt"]);
    }
    if outcome.validation.is_some() {
        names.extend(["validating.json", "validating.trace.txt"]);
    }
    if outcome.anomaly.is_some() {
        names.extend(["anomaly.dot", "anomaly.svg"]);
    } else if outcome.observed_drawing.is_some() {
        names.push("anomaly.dot");
    }
    names.extend(["report.md", "report.json"]);
    outcome.report.files = names
        .iter()
        .map(|name| dir.join(name).display().to_string())
        .collect();
    let report_md = outcome.report.to_markdown();
    let report_json = serde_json::to_string_pretty(&outcome.report)? + "\n";
    let outcome = &*outcome;
    // Native JSON speaks the application's terms; trace files keep the store's hashed keys.
    let keys = &outcome.keys;
    let json = |h| json_file(keys, h);
    let mut files: Vec<FolderFile<'_>> = Vec::new();
    files.push(json(&outcome.observed.history));
    files.push(trace(&outcome.observed));
    if let Some(p) = &outcome.prediction {
        files.push(json(&p.history));
        files.push((
            "",
            Box::new(move |out: &mut dyn Write| {
                formats::write_to(&p.history, Format::IsoPredict, out).map_err(io::Error::other)
            }),
        ));
    }
    if let Some(v) = &outcome.validation {
        files.push(json(&v.run.history));
        files.push(trace(&v.run));
    }
    if let Some(g) = &outcome.anomaly {
        let (dot, svg) = (g.to_dot(), g.to_svg());
        files.push((
            "",
            Box::new(move |out: &mut dyn Write| out.write_all(dot.as_bytes())),
        ));
        files.push((
            "",
            Box::new(move |out: &mut dyn Write| out.write_all(svg.as_bytes())),
        ));
    } else if let Some(dot) = &outcome.observed_drawing {
        files.push((
            "",
            Box::new(move |out: &mut dyn Write| out.write_all(dot.as_bytes())),
        ));
    }
    files.push((
        "",
        Box::new(move |out: &mut dyn Write| out.write_all(report_md.as_bytes())),
    ));
    files.push((
        "",
        Box::new(move |out: &mut dyn Write| out.write_all(report_json.as_bytes())),
    ));
    debug_assert_eq!(files.len(), names.len());
    for (file, name) in files.iter_mut().zip(&names) {
        file.0 = name;
    }
    crate::output::write_folder_streamed(dir, files, RUN_FILES)?;
    Ok(())
}

/// A history in the native JSON format, keys named in the application's terms.
fn json_file<'a>(keys: &'a KeyDirectory, h: &'a History) -> FolderFile<'a> {
    (
        "",
        Box::new(move |out: &mut dyn Write| {
            formats::write_to(&keys.rename(h), Format::Json, out).map_err(io::Error::other)
        }),
    )
}

/// A run's store events in the IsoPredict trace format (the store's hashed keys).
fn trace<'a>(run: &'a Run) -> FolderFile<'a> {
    (
        "",
        Box::new(move |out: &mut dyn Write| run.write_trace(out)),
    )
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
