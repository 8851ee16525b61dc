//! `isopredict check FILE`: checks a history against an isolation level (docs/checking.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use isopredict::check::{check, CheckError, CheckOptions, Level};
use isopredict::ser::{self, Engine, StrongLevel, StrongOptions, Verdict};

use super::{read_input, InputFormat, EXIT_BAD_INPUT};

/// Exit code when a violation is found.
const EXIT_VIOLATION: u8 = 1;
/// Exit code when the verdict is unknown (time or state limit).
const EXIT_UNKNOWN: u8 = 3;

/// A level on the command line: one level, or `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelArg {
    /// One level.
    One(Level),
    /// Every level's verdict, strongest first.
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
    /// The level: ser, si, pc, cc, ra, rc, ci, or all (every level's verdict, strongest
    /// first).
    #[arg(long, short, default_value = "all")]
    level: LevelArg,
    /// The engine for ser, si and pc: search (Biswas & Enea's prefix search), smt (Z3) or auto
    /// (the search, then Z3 on what it gives up on).
    #[arg(long, default_value = "auto")]
    engine: Engine,
    /// Give up on ser, si and pc after this many seconds (exit code 3).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Print the report as JSON (schema: docs/checking.md).
    #[arg(long)]
    json: bool,
    /// On a pass, print a witness commit order.
    #[arg(long)]
    witness: bool,
    /// Write the violations as a Graphviz DOT file.
    #[arg(long, value_name = "OUT")]
    dot: Option<PathBuf>,
    /// Describe at most this many violating reads and cycles (counts stay exact).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_violations: usize,
}

/// Checks; exit code 0 when consistent, 1 on a violation, 2 on bad input or an unsupported
/// level, 3 when the verdict is unknown (time or state limit).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (history, _format) = read_input(&args.file, args.format.0)?;
    let options = CheckOptions {
        witness: args.witness,
        max_violations: args.max_violations,
    };
    let strong_options = StrongOptions {
        engine: args.engine,
        timeout: args
            .timeout
            .map(|s| std::time::Duration::from_secs_f64(s.max(0.0))),
        witness: args.witness,
        ..StrongOptions::default()
    };
    let mut out = std::io::stdout().lock();
    let (verdict, dot) = match args.level {
        LevelArg::One(level) if StrongLevel::from_level(level).is_some() => {
            let strong = StrongLevel::from_level(level).expect("a strong level");
            let report = ser::check_strong(&history, strong, &strong_options)?;
            if args.json {
                serde_json::to_writer_pretty(&mut out, &report)?;
                writeln!(out)?;
            } else {
                write!(out, "{report}")?;
            }
            (report.verdict, report.render_dot())
        }
        LevelArg::One(level) => {
            let report = match check(&history, level, &options) {
                Ok(report) => report,
                Err(e @ CheckError::Unsupported(_)) => {
                    eprintln!("error: {e}");
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
                Err(e) => return Err(e.into()),
            };
            if args.json {
                serde_json::to_writer_pretty(&mut out, &report)?;
                writeln!(out)?;
            } else {
                write!(out, "{report}")?;
            }
            let verdict = if report.is_consistent() {
                Verdict::Consistent
            } else {
                Verdict::Violated
            };
            (verdict, report.render_dot())
        }
        LevelArg::All => {
            let all = ser::check_every_level(&history, &strong_options, &options)?;
            if args.json {
                serde_json::to_writer_pretty(&mut out, &all)?;
                writeln!(out)?;
            } else {
                write!(out, "{all}")?;
            }
            // The DOT file shows the violations of the strongest level violated.
            (all.verdict(), all.render_dot())
        }
    };
    if let Some(path) = &args.dot {
        let text = dot
            .unwrap_or_else(|| "digraph violations {\n  label=\"no violation\";\n}\n".to_string());
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(match verdict {
        Verdict::Consistent => ExitCode::SUCCESS,
        Verdict::Violated => ExitCode::from(EXIT_VIOLATION),
        Verdict::Unknown => ExitCode::from(EXIT_UNKNOWN),
    })
}
