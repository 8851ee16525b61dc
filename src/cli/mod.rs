//! The command line: clap definitions and dispatch. Each command lives in its own file with
//! an `Args` struct and a `run` function; all logic is in the library.
//!
//! Exit codes (DESIGN.md): 0 = consistent / nothing found; 1 = violation found or prediction
//! made; 2 = bad input or usage (clap usage errors too); 3 = solver unknown or timeout;
//! 130 = interrupted (Ctrl-C, SIGINT or SIGTERM) before any output was written. A `run` or
//! `predict --max N` interrupted after it found an anomaly cuts its search for more, writes
//! what it found (marked as cut) and exits 1 ([`isopredict::interrupt::keep_findings`]). A
//! `rank` interrupted after some cells were answered writes those (marked as cut) and exits 1
//! if one holds an anomaly, else 130.

use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::builder::PossibleValue;
use clap::{Parser, Subcommand, ValueEnum};

use isopredict::formats::{self, Format};
use isopredict::{History, InputError};

mod check;
mod convert;
mod generate;
mod many;
mod predict;
mod rank;
mod record;
mod reproduce;
mod run;
mod serve;
mod stats;
mod test;
mod watch;

/// The exit codes of the whole tool, shown after `isopredict --help`: each command's own
/// list follows its `--help` (the constants below), since the codes mean different things.
const EXIT_CODES: &str = "Exit codes (each command's --help lists its own): 0 = consistent / \
nothing found; 1 = violation found, prediction made or (reproduce) reproduced; 2 = bad input or \
usage; 3 = unknown (solver unknown, time or memory limit); 130 = interrupted (Ctrl-C, SIGTERM).";

/// `stats`, `convert` and `generate`: they judge nothing.
const TOOL_EXIT_CODES: &str = "Exit codes: 0 = done; 2 = bad input or usage; 130 = interrupted \
(Ctrl-C, SIGTERM: temporaries removed, nothing written).";

/// `check`.
const CHECK_EXIT_CODES: &str = "Exit codes: 0 = consistent at every level asked; 1 = a \
violation was found; 2 = bad input or usage; 3 = unknown (a time or memory limit, or the solver \
could not decide); 130 = interrupted (Ctrl-C, SIGTERM) before anything was written.";

/// `predict`.
const PREDICT_EXIT_CODES: &str = "Exit codes: 0 = no prediction under this encoding and \
strategy; 1 = a prediction was made, or the \
observed history already violates the level; 2 = bad input or usage; 3 = unknown (solver \
unknown, --timeout or --memory reached); 130 = interrupted before anything was found (Ctrl-C \
after a prediction cuts the search for more, writes what was found and exits 1).";

/// `run`.
const RUN_EXIT_CODES: &str = "Exit codes: 0 = no anomaly found; 1 = an anomaly (validated by \
the replay, predicted, or already observed); 2 = bad input or usage; 3 = unknown (solver \
unknown, time or memory limit, or the database went away); 130 = interrupted before an anomaly \
was found (nothing written; Ctrl-C after one cuts the search for more, writes what was found \
and exits 1).";

/// `reproduce`.
const REPRODUCE_EXIT_CODES: &str = "Exit codes: 1 = reproduced on the database, or the \
anomaly of the transactions it keeps already happened in the observed run (said so); 0 = not \
reproduced, or not reproducible at this isolation level (the report says why); 2 = bad input or \
usage; 3 = unknown (the database or a time limit stopped the attempt); 130 = interrupted.";

/// `rank`.
const RANK_EXIT_CODES: &str = "Exit codes: 0 = the ranking was written (whatever its cells \
found: anomalies are its content, not a failure); 1 = the ranking was cut (Ctrl-C, SIGTERM) \
and the cells answered until then, written and marked as cut, hold an anomaly; 2 = bad input or \
usage; 130 = interrupted with no cell holding an anomaly (the cells answered are written, \
marked as cut; a second Ctrl-C exits at once, writing nothing).";

/// The exit codes of `watch`, shown after its `--help`.
const WATCH_EXIT_CODES: &str = "Exit codes: 0 = no violation; 1 = a violation was found; \
2 = bad input or usage. Ctrl-C or SIGTERM ends the watch with its summary (exit 0 or 1).";

/// Exit code for bad input or usage.
pub const EXIT_BAD_INPUT: u8 = 2;

/// isopredict: predicts the isolation anomalies an application could hit on a weakly
/// isolated data store, from a run in which it hit none.
#[derive(Parser)]
#[command(name = "isopredict", version, about, long_about = None, after_help = EXIT_CODES)]
pub struct Cli {
    /// No progress lines (printed on standard error every few seconds of long work when it is
    /// not a terminal, redrawn in place when it is).
    #[arg(long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

/// The commands.
#[derive(Subcommand)]
pub enum Command {
    /// Print summary counts of a history (sessions, transactions, reads, writes, keys).
    #[command(after_help = TOOL_EXIT_CODES)]
    Stats(stats::Args),
    /// Convert a history from one format to another.
    #[command(after_help = TOOL_EXIT_CODES)]
    Convert(convert::Args),
    /// Check a history against an isolation level (strict-ser, ser, si, pc, cc, ra, rc, ci, or
    /// all).
    #[command(after_help = CHECK_EXIT_CODES)]
    Check(check::Args),
    /// Predict an unserializable execution that causal, ra, rc, pc or si allows (IsoPredict).
    #[command(after_help = PREDICT_EXIT_CODES)]
    Predict(predict::Args),
    /// Record a workload run, predict an anomaly, validate it by replay, and report it.
    #[command(after_help = RUN_EXIT_CODES)]
    Run(run::Args),
    /// Run a prediction of a `run` folder (or of an application's `test`/`record` folder, with
    /// its own statements) on a database along a schedule that makes it happen, and write a
    /// reproducer (isolationtester spec, SQL per session, README).
    #[command(after_help = REPRODUCE_EXIT_CODES)]
    Reproduce(reproduce::Args),
    /// Serve the recording store over PostgreSQL's wire protocol; on Ctrl-C, SIGTERM or
    /// --until-idle, write DIR/observed.json (every client's statements as a history).
    #[command(after_help = EXIT_CODES)]
    Serve(serve::Args),
    /// Run a command against the recording server (PGHOST, PGPORT, PGUSER, PGDATABASE,
    /// DATABASE_URL set for it) and write DIR/observed.json; exit with the command's status.
    #[command(after_help = EXIT_CODES)]
    Record(record::Args),
    /// Record an application's test command through the recording server, predict
    /// anomalies, re-run the command along each prediction, and report in its SQL.
    #[command(after_help = RUN_EXIT_CODES)]
    Test(test::Args),
    /// Predict and validate over a grid of workload runs (or folders of histories): the
    /// paper's Tables 4–7 and a risk ranking.
    #[command(after_help = RANK_EXIT_CODES)]
    Rank(rank::Args),
    /// Generate a random history, optionally consistent at a level (simulating a store).
    #[command(after_help = TOOL_EXIT_CODES)]
    Generate(generate::Args),
    /// Check SI or SER online, from timestamped transactions arriving as JSON lines (until
    /// the input ends, or Ctrl-C / SIGTERM, which print the summary).
    #[command(after_help = WATCH_EXIT_CODES)]
    Watch(watch::Args),
}

/// Parses the arguments, runs the command, and maps errors to exit code 2.
pub fn main() -> ExitCode {
    // A file size limit (`ulimit -f`) makes writes fail with an error the commands report,
    // instead of killing the process half-way through a file.
    // SAFETY: setting a signal's disposition to "ignore" before any thread starts.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
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
    // These look at the stop flag and stop cleanly (watch: with its summary); the others
    // (stats, convert, generate) have nothing worth finishing and exit at the first signal,
    // after removing their temporaries.
    let cooperative = matches!(
        cli.command,
        Command::Check(_)
            | Command::Predict(_)
            | Command::Run(_)
            | Command::Reproduce(_)
            | Command::Rank(_)
            | Command::Watch(_)
            | Command::Serve(_)
            | Command::Record(_)
            | Command::Test(_)
    );
    stop_on_signals(cooperative);
    if cli.quiet {
        isopredict::pipeline::progress::silence();
    }
    let result = match cli.command {
        Command::Stats(args) => stats::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Check(args) => check::run(args),
        Command::Predict(args) => predict::run(args),
        Command::Run(args) => run::run(args),
        Command::Reproduce(args) => reproduce::run(args),
        Command::Rank(args) => rank::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Watch(args) => watch::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Record(args) => record::run(args),
        Command::Test(args) => test::run(args),
    };
    match result {
        Ok(code) => code,
        // An error caused by the interruption (a refused solver call, say) is not bad input.
        Err(_) if isopredict::interrupt::requested() => interrupted_exit(),
        Err(e) => {
            isopredict::ewriteln!("error: {e:#}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

/// Makes SIGINT (Ctrl-C), SIGTERM and SIGHUP stop every command cleanly. For `cooperative`
/// commands the first signal requests a stop ([`isopredict::interrupt`]: Z3 calls in flight
/// are interrupted, recording runs stop between calls, writes stop, nothing is written and
/// temporaries are removed, exit 130; `watch` prints its summary) and a second one exits at
/// once; other commands exit at the first. An exit at once (130) first removes the
/// temporaries of writes in flight and what recording runs made outside the process (their
/// PostgreSQL schema).
fn stop_on_signals(cooperative: bool) {
    let installed = ctrlc::set_handler(move || {
        if !cooperative {
            isopredict::interrupt::run_cleanups();
            isopredict::output::remove_temporaries();
            isopredict::ewriteln!("isopredict: interrupted; no output written");
            std::process::exit(i32::from(isopredict::interrupt::EXIT_INTERRUPTED));
        }
        if isopredict::interrupt::signalled() {
            isopredict::ewriteln!("isopredict: interrupted again: cleaning up and exiting now");
            isopredict::interrupt::run_cleanups();
            isopredict::output::remove_temporaries();
            std::process::exit(i32::from(isopredict::interrupt::EXIT_INTERRUPTED));
        }
        if isopredict::interrupt::keeping_findings() {
            isopredict::ewriteln!(
                "{}",
                CUT_MESSAGE.get().copied().unwrap_or(
                    "isopredict: interrupted: cutting the search and writing what was found \
                     (Ctrl-C again to exit at once, writing nothing)"
                )
            );
        } else {
            isopredict::ewriteln!(
                "isopredict: interrupted: stopping (Ctrl-C again to exit at once)"
            );
        }
        isopredict::interrupt::request();
    });
    if let Err(e) = installed {
        isopredict::ewriteln!(
            "warning: cannot handle Ctrl-C ({e}); it will end the command abruptly"
        );
    }
}

/// What the first Ctrl-C says once the command keeps its findings, when not the default
/// ([`on_cut_say`]).
static CUT_MESSAGE: OnceLock<&'static str> = OnceLock::new();

/// Sets what the first Ctrl-C says once the command keeps its findings
/// ([`isopredict::interrupt::keep_findings`]): what it cuts and what it writes.
pub fn on_cut_say(message: &'static str) {
    let _ = CUT_MESSAGE.set(message);
}

/// Says that the command was interrupted and returns exit code 130.
pub fn interrupted_exit() -> ExitCode {
    isopredict::ewriteln!(
        "isopredict: interrupted; no output written (the previous outputs, if any, are untouched)"
    );
    ExitCode::from(isopredict::interrupt::EXIT_INTERRUPTED)
}

/// `Some(130)`, after saying so, once the user interrupted the command (Ctrl-C): commands
/// call it after computing and before writing anything.
pub fn interrupted() -> Option<ExitCode> {
    isopredict::interrupt::requested().then(interrupted_exit)
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

/// Reads a history from a file, a directory (cobra, viper, dbcop-bincode) or standard input
/// (`-`): [`formats::read_path`], the library's one reading path.
pub fn read_input(path: &Path, format: Option<Format>) -> Result<(History, Format), InputError> {
    formats::read_path(path, format)
}

/// Standard output, where a reader that went away (`isopredict check … | head`) is not an
/// error: once a write fails with a broken pipe, this and every later write succeed without
/// writing, and the command ends with the exit code its result calls for.
pub struct Stdout {
    inner: std::io::StdoutLock<'static>,
    closed: bool,
}

/// The command's standard output (see [`Stdout`]).
pub fn stdout() -> Stdout {
    Stdout {
        inner: std::io::stdout().lock(),
        closed: false,
    }
}

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// The longest time limit accepted: 10⁹ seconds (about 31 years).
const MAX_SECONDS: f64 = isopredict::pipeline::cells::MAX_TIMEOUT_SECS as f64;

/// Parses a `--timeout` (every command): a number of seconds, fractions allowed, from 0 (no
/// limit) to 10⁹; anything else (negative, not a number, larger) is a usage error (exit 2).
pub fn parse_timeout(s: &str) -> Result<Timeout, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !secs.is_finite() || !(0.0..=MAX_SECONDS).contains(&secs) {
        return Err(format!(
            "`{s}` is out of range: give 0 (no limit) to {MAX_SECONDS:e} seconds"
        ));
    }
    Ok(Timeout(
        (secs > 0.0).then(|| std::time::Duration::from_secs_f64(secs)),
    ))
}

/// A parsed `--timeout`: `None` for no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout(pub Option<std::time::Duration>);
