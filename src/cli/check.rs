//! `isopredict check FILE`: checks a history against an isolation level (docs/checking.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use isopredict::check::{check, check_all, CheckError, CheckOptions, Level};

use super::{read_input, InputFormat, EXIT_BAD_INPUT};

/// Exit code when a violation is found.
const EXIT_VIOLATION: u8 = 1;
/// The most edges of one cycle printed (text, JSON and DOT).
const MAX_CYCLE_EDGES: usize = 100;
/// Exit code when the check gave up (memory limit).
const EXIT_UNKNOWN: u8 = 3;

/// A level on the command line: one level, or `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelArg {
    /// One level.
    One(Level),
    /// The strongest of cc, ra, rc satisfied, and ci.
    All,
}

impl std::str::FromStr for LevelArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("all") {
            Ok(LevelArg::All)
        } else {
            s.parse().map(LevelArg::One)
        }
    }
}

/// Arguments of `isopredict check`.
#[derive(clap::Args)]
pub struct Args {
    /// The history file (`-` reads standard input).
    file: PathBuf,
    /// The input format.
    #[arg(long, short, value_enum, default_value = "auto")]
    format: InputFormat,
    /// The level: rc, ra, cc, ci (pc, si, ser: not supported yet), or all (the strongest of
    /// cc, ra, rc satisfied, and ci).
    #[arg(long, short, default_value = "all")]
    level: LevelArg,
    /// Print the report as JSON (schema: docs/checking.md).
    #[arg(long)]
    json: bool,
    /// On a pass, print a witness commit order.
    #[arg(long)]
    witness: bool,
    /// Write the violations as a Graphviz DOT file.
    #[arg(long, value_name = "OUT")]
    dot: Option<PathBuf>,
    /// Describe at most this many violating reads and cycles (counts stay exact); each cycle
    /// shows at most 100 edges and says how many more it has.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_violations: usize,
}

/// Checks; exit code 0 when consistent, 1 on a violation, 2 on bad input or an unsupported
/// level.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (history, _format) = read_input(&args.file, args.format.0)?;
    let options = CheckOptions {
        witness: args.witness,
        max_violations: args.max_violations,
    };
    let mut out = super::stdout();
    let (consistent, dot) = match args.level {
        LevelArg::One(level) => {
            let mut report = match check(&history, level, &options) {
                Ok(report) => report,
                Err(e @ CheckError::Unsupported(_)) => {
                    eprintln!("error: {e}");
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
                Err(e @ CheckError::MemoryLimit) => {
                    eprintln!("{e}");
                    return Ok(ExitCode::from(EXIT_UNKNOWN));
                }
                Err(e) => return Err(e.into()),
            };
            report.cut_cycles(MAX_CYCLE_EDGES);
            if args.json {
                serde_json::to_writer_pretty(&mut out, &report)?;
                writeln!(out)?;
            } else {
                write!(out, "{report}")?;
            }
            (report.is_consistent(), report.render_dot())
        }
        LevelArg::All => {
            let mut all = match check_all(&history, &options) {
                Ok(all) => all,
                Err(e @ CheckError::MemoryLimit) => {
                    eprintln!("{e}");
                    return Ok(ExitCode::from(EXIT_UNKNOWN));
                }
                Err(e) => return Err(e.into()),
            };
            for report in &mut all.reports {
                report.cut_cycles(MAX_CYCLE_EDGES);
            }
            if args.json {
                serde_json::to_writer_pretty(&mut out, &all)?;
                writeln!(out)?;
            } else {
                write!(out, "{all}")?;
            }
            // The DOT file shows the violations of the strongest level violated.
            let dot = all.reports.iter().find_map(|r| r.render_dot());
            (all.is_consistent(), dot)
        }
    };
    if let Some(path) = &args.dot {
        let text = dot
            .unwrap_or_else(|| "digraph violations {\n  label=\"no violation\";\n}\n".to_string());
        isopredict::output::write_file_atomically(path, |w| w.write_all(text.as_bytes()))?;
    }
    Ok(if consistent {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_VIOLATION)
    })
}
