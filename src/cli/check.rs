//! `isopredict check FILE`: checks a history against an isolation level (docs/checking.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use isopredict::check::{check, check_all, CheckError, CheckOptions, Level};

use super::{InputFormat, EXIT_BAD_INPUT};

/// Exit code when a violation is found.
const EXIT_VIOLATION: u8 = 1;

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
    /// cc, ra, rc satisfied, and ci). si and ser are checked with the transactions'
    /// timestamps when the input has them (TimeKiller, or native JSON with timestamps).
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
    /// Describe at most this many violating reads and cycles (counts stay exact).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_violations: usize,
    /// At si/ser, ignore the transactions' timestamps and use the black-box checker (which
    /// asks whether some commit order exists).
    #[arg(long)]
    black_box: bool,
    /// The initial value of every key in TimeKiller input: `null` (TimeKiller's default) or
    /// an integer such as 0.
    #[arg(long, default_value = "null", value_name = "null|N")]
    initial_value: super::check_timestamps::InitialValue,
}

/// Checks; exit code 0 when consistent, 1 on a violation, 2 on bad input or an unsupported
/// level.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // At si/ser a history with timestamps goes to the timestamp checker (Chronos).
    let level = match args.level {
        LevelArg::One(level) => Some(level),
        LevelArg::All => None,
    };
    let timestamp_options = super::check_timestamps::Options {
        level,
        black_box: args.black_box,
        initial_value: args.initial_value.0,
        json: args.json,
        max_violations: args.max_violations,
        dot: args.dot.is_some(),
    };
    let history = match super::check_timestamps::run(&args.file, args.format.0, &timestamp_options)?
    {
        super::check_timestamps::Outcome::Done(code) => return Ok(code),
        super::check_timestamps::Outcome::Read(history) => *history,
    };
    let options = CheckOptions {
        witness: args.witness,
        max_violations: args.max_violations,
    };
    let mut out = std::io::stdout().lock();
    let (consistent, dot) = match args.level {
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
            (report.is_consistent(), report.render_dot())
        }
        LevelArg::All => {
            let all = check_all(&history, &options)?;
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
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(if consistent {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_VIOLATION)
    })
}
