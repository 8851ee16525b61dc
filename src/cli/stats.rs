//! `isopredict stats FILE`: summary counts of a history.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use isopredict::history::Stats;

use super::{read_input, InputFormat};

/// Arguments of `isopredict stats`.
#[derive(clap::Args)]
pub struct Args {
    /// The history file (`-` reads standard input).
    file: PathBuf,
    /// The input format.
    #[arg(long, short, value_enum, default_value = "auto")]
    format: InputFormat,
    /// Print JSON: {"file", "format", "stats": {...}}.
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Report<'a> {
    file: &'a str,
    format: &'a str,
    stats: Stats,
}

/// Prints the counts; exit code 0.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (history, format) = read_input(&args.file, args.format.0)?;
    let stats = history.stats();
    let mut out = super::stdout();
    if args.json {
        let report = Report {
            file: history.source(),
            format: format.name(),
            stats,
        };
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(out, "file              {}", history.source())?;
        writeln!(out, "format            {format}")?;
        writeln!(out, "{stats}")?;
    }
    Ok(ExitCode::SUCCESS)
}
