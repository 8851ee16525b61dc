//! The timestamp path of `isopredict check`: at `--level si|ser`, a history whose
//! transactions carry start and commit timestamps (TimeKiller JSON, or native JSON with
//! timestamps) is checked by the timestamp checker (`ser::chronos`) unless `--black-box`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use isopredict::check::Level;
use isopredict::formats::{self, timekiller, Format};
use isopredict::ser::timestamped::TimestampedHistory;
use isopredict::ser::{check_timestamps, TsCheckOptions, TsLevel};
use isopredict::History;

/// What `check` asked for, as far as the timestamp path cares.
pub struct Options {
    /// The level (`None` for `all`).
    pub level: Option<Level>,
    /// `--black-box`.
    pub black_box: bool,
    /// `--initial-value` (`None` = null).
    pub initial_value: Option<i64>,
    /// `--json`.
    pub json: bool,
    /// `--max-violations`.
    pub max_violations: usize,
    /// Whether `--dot` was given.
    pub dot: bool,
}

/// Either the timestamp checker ran (with this exit code), or the history for the other
/// checkers.
pub enum Outcome {
    /// Checked; exit with this code.
    Done(ExitCode),
    /// Not for the timestamp checker: the history read.
    Read(Box<History>),
}

/// `--initial-value`: `null` (`None`) or an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitialValue(pub Option<i64>);

impl std::str::FromStr for InitialValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("null") {
            return Ok(InitialValue(None));
        }
        s.parse::<i64>()
            .map(|v| InitialValue(Some(v)))
            .map_err(|_| format!("`{s}` is neither null nor an integer"))
    }
}

/// Reads the input; at si/ser with timestamps (and without `--black-box`) checks it with the
/// timestamp checker and prints the report.
pub fn run(path: &Path, format: Option<Format>, options: &Options) -> anyhow::Result<Outcome> {
    let (bytes, source) = super::read_input_bytes(path)?;
    let format = format.or_else(|| formats::detect(&bytes));
    let ts_level = match options.level {
        Some(Level::Snapshot) if !options.black_box => Some(TsLevel::Snapshot),
        Some(Level::Serializable) if !options.black_box => Some(TsLevel::Serializable),
        _ => None,
    };
    let (timestamped, history): (Option<TimestampedHistory>, Option<History>) =
        match (format, ts_level) {
            (Some(Format::TimeKiller), Some(_)) => (
                Some(timekiller::read_timestamped(
                    &bytes,
                    &source,
                    options.initial_value,
                )?),
                None,
            ),
            (Some(Format::TimeKiller), None) => (
                None,
                Some(timekiller::read_with_initial(
                    &bytes,
                    &source,
                    options.initial_value,
                )?),
            ),
            (_, level) => {
                let history = formats::read_bytes(&bytes, &source, format)?;
                match level {
                    Some(_) => match TimestampedHistory::from_history(&history)? {
                        Some(t) => (Some(t), None),
                        None => (None, Some(history)),
                    },
                    None => (None, Some(history)),
                }
            }
        };
    drop(bytes);
    let (Some(th), Some(level)) = (timestamped, ts_level) else {
        let history = history.expect("a history when not checked by timestamps");
        return Ok(Outcome::Read(Box::new(history)));
    };
    let report = check_timestamps(
        &th,
        level,
        &TsCheckOptions {
            max_violations: options.max_violations,
        },
    );
    let mut out = std::io::stdout().lock();
    if options.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write!(out, "{report}")?;
        writeln!(
            out,
            "(the timestamp checker takes the database's timestamps as the commit order and \
             snapshots; --black-box asks instead whether any commit order exists)"
        )?;
    }
    if options.dot {
        eprintln!(
            "note: --dot is not drawn for the timestamp checker; the report names every violation"
        );
    }
    Ok(Outcome::Done(if report.consistent {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }))
}
