//! `isopredict stats FILE`: summary counts of a history.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use isopredict::history::Stats;

use super::{read_input, InputFormat};

/// Arguments of `isopredict stats`.
#[derive(clap::Args)]
pub struct Args {
    /// The history file or directory (`-` reads standard input). Several, or a directory of
    /// histories, print one line per history and a summary.
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
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
    let (files, many) = super::many::expand(&args.files, args.format.0)?;
    if many && !args.json {
        return super::many::run(&files, args.format.0, |h, format| {
            let s = h.stats();
            super::many::Outcome {
                code: 0,
                line: format!(
                    "[{format}] {} sessions, {} committed, {} aborted, {} reads, {} writes, {} keys",
                    s.sessions, s.committed, s.aborted, s.reads, s.writes, s.keys
                ),
            }
        });
    }
    if many {
        // JSON lines, one report per history.
        let mut out = std::io::stdout().lock();
        let mut code = 0;
        for file in &files {
            match read_input(file, args.format.0) {
                Ok((history, format)) => {
                    let report = Report {
                        file: history.source(),
                        format: format.name(),
                        stats: history.stats(),
                    };
                    serde_json::to_writer(&mut out, &report)?;
                    writeln!(out)?;
                }
                Err(e) => {
                    isopredict::ewriteln!("error: {e}");
                    code = super::EXIT_BAD_INPUT;
                }
            }
        }
        return Ok(ExitCode::from(code));
    }
    let (history, format) = read_input(&files[0], args.format.0)?;
    for note in history.input_notes() {
        isopredict::ewriteln!("note: {note}");
    }
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
