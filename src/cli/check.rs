//! `isopredict check FILE`: checks a history against an isolation level (docs/checking.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use isopredict::check::{check, check_all, CheckError, CheckOptions, Level};
use isopredict::ser::{self, Engine, StrongLevel, StrongOptions, Verdict};

use super::{read_input, InputFormat, EXIT_BAD_INPUT};

/// Exit code when a violation is found.
const EXIT_VIOLATION: u8 = 1;
/// The most edges of one cycle printed (text, JSON and DOT).
const MAX_CYCLE_EDGES: usize = 100;
/// Exit code when the verdict is unknown (time, state or memory limit).
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
    /// The history file or directory (`-` reads standard input). Several, or a directory of
    /// histories, print one line per history and a summary; the exit code is the largest.
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// The input format.
    #[arg(long, short, value_enum, default_value = "auto")]
    format: InputFormat,
    /// The level: ser, si, pc, cc, ra, rc, ci, or all (every level's verdict, strongest
    /// first). si and ser are checked with the transactions' timestamps when the input has
    /// them (TimeKiller, or native JSON with timestamps) unless --black-box is given.
    #[arg(long, short, default_value = "all")]
    level: LevelArg,
    /// The engine for ser, si and pc: search (Biswas & Enea's prefix search), smt (Z3) or auto
    /// (the search, then Z3 on what it gives up on).
    #[arg(long, default_value = "auto")]
    engine: Engine,
    /// Give up on ser, si and pc after this many seconds (exit code 3).
    #[arg(long, value_name = "SECS", value_parser = super::parse_timeout)]
    timeout: Option<super::Timeout>,
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
/// level, 3 when the verdict is unknown (time or state limit).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = CheckOptions {
        witness: args.witness,
        max_violations: args.max_violations,
    };
    let (files, many) = super::many::expand(&args.files, args.format.0)?;
    if many {
        if args.dot.is_some() || args.json || args.witness {
            eprintln!("error: --dot, --json and --witness take a single history");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        return super::many::run(&files, args.format.0, |h, format| {
            one_line(h, format, args.level, &options)
        });
    }
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
    let history = if files[0].is_dir() {
        read_input(&files[0], args.format.0)?.0
    } else {
        match super::check_timestamps::run(&files[0], args.format.0, &timestamp_options)? {
            super::check_timestamps::Outcome::Done(code) => return Ok(code),
            super::check_timestamps::Outcome::Read(history) => *history,
        }
    };
    for note in history.input_notes() {
        eprintln!("note: {note}");
    }
    let strong_options = StrongOptions {
        engine: args.engine,
        timeout: args.timeout.and_then(|t| t.0),
        witness: args.witness,
        ..StrongOptions::default()
    };
    let mut out = super::stdout();
    let (verdict, dot) = match args.level {
        LevelArg::One(level) if StrongLevel::from_level(level).is_some() => {
            let strong = StrongLevel::from_level(level).expect("a strong level");
            let report = match ser::check_strong(&history, strong, &strong_options) {
                Ok(report) => report,
                Err(e @ CheckError::MemoryLimit) => {
                    eprintln!("{e}");
                    return Ok(ExitCode::from(EXIT_UNKNOWN));
                }
                Err(e) => return Err(e.into()),
            };
            if let Some(code) = super::interrupted() {
                return Ok(code);
            }
            if args.json {
                serde_json::to_writer_pretty(&mut out, &report)?;
                writeln!(out)?;
            } else {
                write!(out, "{report}")?;
            }
            (report.verdict, report.render_dot())
        }
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
            if let Some(code) = super::interrupted() {
                return Ok(code);
            }
            report.cut_cycles(MAX_CYCLE_EDGES);
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
            let mut all = match ser::check_every_level(&history, &strong_options, &options) {
                Ok(all) => all,
                Err(e @ CheckError::MemoryLimit) => {
                    eprintln!("{e}");
                    return Ok(ExitCode::from(EXIT_UNKNOWN));
                }
                Err(e) => return Err(e.into()),
            };
            if let Some(code) = super::interrupted() {
                return Ok(code);
            }
            for report in &mut all.weak.reports {
                report.cut_cycles(MAX_CYCLE_EDGES);
            }
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
        isopredict::output::write_file_atomically(path, |w| w.write_all(text.as_bytes()))?;
    }
    Ok(match verdict {
        Verdict::Consistent => ExitCode::SUCCESS,
        Verdict::Violated => ExitCode::from(EXIT_VIOLATION),
        Verdict::Unknown => ExitCode::from(EXIT_UNKNOWN),
    })
}

/// The one-line verdict of a history in a batch.
fn one_line(
    history: &isopredict::History,
    format: isopredict::formats::Format,
    level: LevelArg,
    options: &CheckOptions,
) -> super::many::Outcome {
    use super::many::Outcome;
    let describe = |r: &isopredict::check::CheckReport| -> String {
        if r.is_consistent() {
            return format!("{} consistent", r.level);
        }
        let mut names: Vec<String> = r
            .read_violations
            .iter()
            .map(|v| v.anomaly.to_string())
            .chain(r.cycles.iter().map(|c| c.anomaly.to_string()))
            .collect();
        names.sort();
        names.dedup();
        format!(
            "{} VIOLATED ({} read violation(s), {} cycle(s): {})",
            r.level,
            r.read_violation_count,
            r.cycle_count,
            names.join(", ")
        )
    };
    let result = match level {
        LevelArg::One(level) => {
            check(history, level, options).map(|r| (r.is_consistent(), describe(&r)))
        }
        LevelArg::All => check_all(history, options).map(|all| {
            let strongest = all.strongest.map_or("none".to_string(), |l| l.to_string());
            let violated: Vec<String> = all
                .reports
                .iter()
                .filter(|r| !r.is_consistent())
                .map(describe)
                .collect();
            let mut line = format!(
                "strongest {strongest}, ci {}",
                if all.cut_isolation {
                    "holds"
                } else {
                    "violated"
                }
            );
            if let Some(v) = violated.first() {
                line.push_str(&format!("; {v}"));
            }
            (all.is_consistent(), line)
        }),
    };
    match result {
        Ok((consistent, line)) => Outcome {
            code: if consistent { 0 } else { EXIT_VIOLATION },
            line: format!("[{format}] {line}"),
        },
        Err(e) => Outcome {
            code: EXIT_BAD_INPUT,
            line: format!("error: {e}"),
        },
    }
}
