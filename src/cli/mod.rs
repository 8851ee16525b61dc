//! The command line: clap definitions and dispatch. Each command lives in its own file with
//! an `Args` struct and a `run` function; all logic is in the library.
//!
//! Exit codes (DESIGN.md): 0 = consistent / nothing found; 1 = violation found or prediction
//! made; 2 = bad input or usage (clap usage errors too); 3 = solver unknown or timeout.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::builder::PossibleValue;
use clap::{Parser, Subcommand, ValueEnum};

use isopredict::formats::{self, Format};
use isopredict::{History, InputError};

mod check;
mod check_timestamps;
mod convert;
mod generate;
mod predict;
mod rank;
mod run;
mod stats;
mod watch;

/// Exit code for bad input or usage.
pub const EXIT_BAD_INPUT: u8 = 2;

/// isopredict: predicts the isolation anomalies an application could hit on a weakly
/// isolated data store, from a run in which it hit none.
#[derive(Parser)]
#[command(name = "isopredict", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The commands.
#[derive(Subcommand)]
pub enum Command {
    /// Print summary counts of a history (sessions, transactions, reads, writes, keys).
    Stats(stats::Args),
    /// Convert a history from one format to another.
    Convert(convert::Args),
    /// Check a history against an isolation level (rc, ra, cc, ci, or all).
    Check(check::Args),
    /// Predict an unserializable execution that causal, ra or rc allows (IsoPredict).
    Predict(predict::Args),
    /// Record a workload run, predict an anomaly, validate it by replay, and report it.
    Run(run::Args),
    /// Predict and validate over a grid of workload runs (or folders of histories): the
    /// paper's Tables 4–7 and a risk ranking.
    Rank(rank::Args),
    /// Generate a random history, optionally consistent at a level (simulating a store).
    Generate(generate::Args),
    /// Check SI or SER online, from timestamped transactions arriving as JSON lines.
    Watch(watch::Args),
}

/// Parses the arguments, runs the command, and maps errors to exit code 2.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS // --help, --version
            };
        }
    };
    let result = match cli.command {
        Command::Stats(args) => stats::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Check(args) => check::run(args),
        Command::Predict(args) => predict::run(args),
        Command::Run(args) => run::run(args),
        Command::Rank(args) => rank::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Watch(args) => watch::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

/// An input format on the command line: `auto` (detect from the content) or a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputFormat(pub Option<Format>);

impl ValueEnum for InputFormat {
    fn value_variants<'a>() -> &'a [Self] {
        static VARIANTS: OnceLock<Vec<InputFormat>> = OnceLock::new();
        VARIANTS.get_or_init(|| {
            std::iter::once(InputFormat(None))
                .chain(Format::ALL.iter().map(|&f| InputFormat(Some(f))))
                .collect()
        })
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self.0 {
            None => Some(PossibleValue::new("auto").help("Detect the format from the content")),
            Some(f) => f.to_possible_value(),
        }
    }
}

/// Reads a history from a file, or standard input for `-`; returns it with its format.
pub fn read_input(path: &Path, format: Option<Format>) -> Result<(History, Format), InputError> {
    let (bytes, source) = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| InputError::new("<stdin>", 0, e.to_string()))?;
        (bytes, "<stdin>".to_string())
    } else {
        let source = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|e| InputError::new(source.clone(), 0, e.to_string()))?;
        (bytes, source)
    };
    let history = formats::read_bytes(&bytes, &source, format)?;
    // Reading succeeded, so detection (when asked for) found a format.
    let format = format
        .or_else(|| formats::detect(&bytes))
        .unwrap_or(Format::Json);
    Ok((history, format))
}
