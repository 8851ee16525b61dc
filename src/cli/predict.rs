//! `isopredict predict FILE --level causal|ra|rc|pc|si`: predicts an unserializable execution the
//! level allows (IsoPredict; docs/prediction.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use isopredict::check::Level;
use isopredict::formats::{self, Format};
use isopredict::history::History;
use isopredict::predict::{
    self, Engine, ExactMethod, PredictOptions, PredictOutcome, RankEncoding, Strategy, Verdict,
};

use super::{read_input, InputFormat, EXIT_BAD_INPUT};

/// Exit code when a prediction is made (or the observed history already violates the level).
const EXIT_FOUND: u8 = 1;
/// Exit code when the solver gave up.
const EXIT_UNKNOWN: u8 = 3;

/// Arguments of `isopredict predict`.
#[derive(clap::Args)]
pub struct Args {
    /// The observed history, a file or directory (`-` reads standard input). Several, or a
    /// directory of histories, print one line per history and a summary; the exit code is the
    /// largest.
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// The input format.
    #[arg(long, short, value_enum, default_value = "auto")]
    format: InputFormat,
    /// The weak isolation level the predicted execution must satisfy: causal (cc), ra, rc,
    /// pc (prefix consistency) or si (snapshot isolation).
    #[arg(long, short)]
    level: Level,
    /// The strategy: exact or approximate unserializability, strict or relaxed boundary.
    #[arg(long, short, value_enum, default_value = "approx-relaxed")]
    strategy: Strategy,
    /// Give up after this many seconds, counted from the start of the command to its output
    /// (fractions allowed; 0: no limit; at most 1e9); the answer is then "unknown" (exit 3).
    #[arg(long, default_value = "60", value_name = "SECS", value_parser = super::parse_timeout)]
    timeout: super::Timeout,
    /// Memory budget for the encodings in MB, checked against an estimate before they are
    /// built, and for Z3's own allocations while it solves (a watchdog stops it when over)
    /// [default: half the machine's memory]; over it the answer is "unknown" (exit 3).
    #[arg(long, value_name = "MB")]
    memory: Option<u64>,
    /// Which engine answers: `scalable` (seeds and a lazily constrained solver, decided by the
    /// checkers) or `paper` (the paper-form encodings; the reference, cubic in the history).
    #[arg(long, value_enum, default_value = "scalable")]
    engine: Engine,
    /// Report up to N predictions that differ in their anomaly (`all`: until none is left or
    /// time runs out; scalable engine). With N > 1, `--out` names a directory and `--json`
    /// prints an array.
    #[arg(long, default_value = "1", value_name = "N|all", value_parser = parse_max)]
    max: usize,
    /// Write the predicted history to this file (`-`: standard output); with `--max` > 1, to
    /// `prediction-<i>.<ext>` files in this directory.
    #[arg(long, value_name = "PRED")]
    out: Option<PathBuf>,
    /// The format of `--out` [default: from PRED's extension (.json, .isopredict, …), else
    /// the input's format].
    #[arg(long, value_enum)]
    out_format: Option<Format>,
    /// Write the prediction (or the observed violation) as a Graphviz DOT file.
    #[arg(long, value_name = "OUT")]
    dot: Option<PathBuf>,
    /// Print the outcome as JSON (schema: docs/prediction.md).
    #[arg(long)]
    json: bool,
    /// How the approximate strategies encode the rank measure.
    #[arg(long, value_enum, default_value = "rounds")]
    ranks: RankEncoding,
    /// How exact-strict solves its quantified formula.
    #[arg(long, value_enum, default_value = "instances")]
    exact: ExactMethod,
}

/// Predicts; exit code 1 when a prediction is made or the observed run already violates the
/// level, 0 when none exists under the encoding, 3 when unknown, 2 on bad input.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    if !matches!(
        args.level,
        Level::Causal | Level::ReadAtomic | Level::ReadCommitted | Level::Prefix | Level::Snapshot
    ) {
        isopredict::ewriteln!(
            "error: prediction supports the levels causal, ra, rc, pc and si, not {}",
            args.level
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let mut options = options(&args, start);
    let (files, many) = super::many::expand(&args.files, args.format.0)?;
    if many {
        if args.out.is_some() || args.dot.is_some() || args.json {
            isopredict::ewriteln!("error: --out, --dot and --json take a single history");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        return run_many(&args, &files, &options);
    }
    let (history, input_format) = read_input(&files[0], args.format.0)?;
    for note in history.input_notes() {
        isopredict::ewriteln!("note: {note}");
    }
    let outcome = match predict_one(&args, &files[0], &history, &mut options)? {
        Ok(outcome) => outcome,
        Err(code) => return Ok(code),
    };
    let several = args.max > 1;
    let search_end = several
        .then(|| search_end_line(&outcome, args.timeout.0))
        .flatten();
    if let Some(path) = &args.out {
        write_out(&args, path, &outcome, input_format)?;
    }
    if let Some(path) = &args.dot {
        write_dot(path, &outcome, &history, search_end.as_ref())?;
    }
    print(&args, outcome, &history, search_end.as_ref())
}

/// The prediction options `args` ask for, the deadline counted from `start`.
fn options(args: &Args, start: Instant) -> PredictOptions {
    let mut options = PredictOptions::new(args.level, args.strategy);
    // The deadline counts from the start of the command; output takes the last quarter second
    // (with several predictions, up to a tenth of the time, at most 3 s).
    let timeout = args.timeout.0.unwrap_or(Duration::ZERO);
    let reserve = if args.max > 1 {
        (timeout / 10).clamp(Duration::from_millis(250), Duration::from_secs(3))
    } else {
        Duration::from_millis(250)
    };
    options.deadline = args
        .timeout
        .0
        .map(|timeout| start + timeout.saturating_sub(reserve));
    options.ranks = args.ranks;
    options.exact = args.exact;
    options.engine = args.engine;
    options.max = args.max;
    options.memory = match args.memory {
        Some(mb) => Some(mb.saturating_mul(1 << 20)),
        None => predict::default_memory_budget(),
    };
    options
}

/// Several histories: one line each, then a summary.
fn run_many(args: &Args, files: &[PathBuf], options: &PredictOptions) -> anyhow::Result<ExitCode> {
    super::many::run(files, args.format.0, |h, format| {
        use super::many::Outcome;
        match predict::predict(h, options) {
            Ok(outcome) => {
                let (code, word) = match outcome.verdict {
                    Verdict::Predicted => (EXIT_FOUND, "predicted"),
                    Verdict::ObservedViolation => (EXIT_FOUND, "observed violation"),
                    Verdict::ObservedUnserializable => (EXIT_FOUND, "observed run unserializable"),
                    Verdict::NoPrediction => (0, "no prediction"),
                    Verdict::Unknown => (EXIT_UNKNOWN, "unknown"),
                };
                Outcome {
                    code,
                    line: format!("[{format}] {} {word}", args.level),
                }
            }
            Err(e) => Outcome {
                code: EXIT_BAD_INPUT,
                line: format!("error: {e}"),
            },
        }
    })
}

/// Predicts on `history` (read from `file`) with progress shown; `Err(code)` when the command
/// ends here (interrupted, bad input, out of memory).
fn predict_one(
    args: &Args,
    file: &std::path::Path,
    history: &History,
    options: &mut PredictOptions,
) -> anyhow::Result<Result<PredictOutcome, ExitCode>> {
    // Several predictions: a live line on a terminal while the search takes more than a second.
    let found = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    if args.max > 1 {
        options.progress = Some(found.clone());
    }
    let progress = (args.max > 1)
        .then(|| isopredict::pipeline::distinct::SearchProgress::start(found, 0, Instant::now()))
        .flatten();
    // Otherwise a plain progress line every few seconds when standard error is not a terminal.
    let working = isopredict::pipeline::progress::Working::start(format!(
        "predict {} at {}",
        file.display(),
        args.level
    ));
    let outcome = predict::predict(history, options);
    drop(working);
    if let Some(line) = progress {
        line.finish();
    }
    if matches!(&outcome, Ok(o) if o.verdict == Verdict::Predicted) {
        // Predictions found before a stop (Ctrl-C, SIGTERM) are kept and written, the search
        // marked as cut (exit 1); nothing found: exit 130, nothing written.
        isopredict::interrupt::keep_findings();
    }
    if let Some(code) = super::interrupted() {
        return Ok(Err(code));
    }
    match outcome {
        Ok(outcome) => Ok(Ok(outcome)),
        Err(e @ predict::PredictError::InvalidObservation { .. }) => {
            isopredict::ewriteln!("error: {e}");
            Ok(Err(ExitCode::from(EXIT_BAD_INPUT)))
        }
        Err(
            e @ predict::PredictError::Check(isopredict::check::CheckError::MemoryLimit { .. }),
        ) => {
            isopredict::ewriteln!("{e}");
            Ok(Err(ExitCode::from(EXIT_UNKNOWN)))
        }
        Err(e) => Err(e.into()),
    }
}

/// `--out`: the predicted history (with several predictions, one file each in `path`).
fn write_out(
    args: &Args,
    path: &std::path::Path,
    outcome: &PredictOutcome,
    input_format: Format,
) -> anyhow::Result<()> {
    let several = args.max > 1;
    let format = args
        .out_format
        .or_else(|| {
            if several {
                None
            } else {
                Format::from_extension(path)
            }
        })
        .unwrap_or(input_format);
    if several && path.as_os_str() != "-" {
        std::fs::create_dir_all(path).with_context(|| format!("creating {}", path.display()))?;
        for (i, p) in outcome.predictions.iter().enumerate() {
            let file = path.join(format!("prediction-{}.{}", i + 1, format.name()));
            formats::write_file(&p.history, &file, format)?;
        }
    } else if let Some(p) = &outcome.prediction {
        if path.as_os_str() == "-" {
            formats::write_to(&p.history, format, &mut super::stdout())?;
        } else {
            formats::write_file(&p.history, path, format)?;
        }
    }
    Ok(())
}

/// `--dot`: the first prediction's drawing (its label saying a cut search), the observed
/// violation's, or a placeholder.
fn write_dot(
    path: &std::path::Path,
    outcome: &PredictOutcome,
    history: &History,
    search_end: Option<&(String, bool)>,
) -> anyhow::Result<()> {
    let text = match (&outcome.prediction, &outcome.observed) {
        (Some(p), _) => {
            // The drawing is of the first prediction: a cut search is said in its label.
            let title = search_end
                .filter(|(_, cut)| *cut)
                .map(|(line, _)| format!("prediction 1 of those found; {line}"));
            predict::dot::prediction_dot_titled(history, p, title.as_deref())
        }
        (None, Some(report)) => report.render_dot().unwrap_or_default(),
        (None, None) => {
            let mut dot = isopredict::dot::DotWriter::digraph("prediction");
            dot.label(match outcome.verdict {
                Verdict::Unknown => "unknown",
                _ => "no prediction",
            });
            dot.finish()
        }
    };
    isopredict::output::write_file_atomically(path, |w| w.write_all(text.as_bytes()))?;
    Ok(())
}

/// Prints the outcome (each prediction as text or JSON, with its anomaly's name) and returns
/// the exit code.
fn print(
    args: &Args,
    outcome: PredictOutcome,
    history: &History,
    search_end: Option<&(String, bool)>,
) -> anyhow::Result<ExitCode> {
    let several = args.max > 1;
    let mut out = super::stdout();
    let mut outcome = outcome;
    let predictions = std::mem::take(&mut outcome.predictions);
    outcome.prediction = None;
    let each: Vec<PredictOutcome> = if predictions.len() > 1 {
        predictions
            .into_iter()
            .map(|p| PredictOutcome {
                prediction: Some(p),
                ..outcome.clone()
            })
            .collect()
    } else {
        outcome.prediction = predictions.into_iter().next();
        vec![outcome.clone()]
    };
    let name = |o: &PredictOutcome| named(o, history);
    if args.json && several {
        let values: Vec<serde_json::Value> =
            each.iter().map(|o| json_with_name(o, name(o))).collect();
        serde_json::to_writer_pretty(&mut out, &values)?;
        writeln!(out)?;
    } else if args.json {
        serde_json::to_writer_pretty(&mut out, &json_with_name(&each[0], name(&each[0])))?;
        writeln!(out)?;
    } else if args.out.as_deref() != Some(std::path::Path::new("-")) {
        write_text(
            &mut out,
            &each,
            history,
            search_end.map(|(l, _)| l.as_str()),
        )?;
    }
    Ok(match each[0].verdict {
        Verdict::Predicted | Verdict::ObservedViolation | Verdict::ObservedUnserializable => {
            ExitCode::from(EXIT_FOUND)
        }
        Verdict::NoPrediction => ExitCode::SUCCESS,
        Verdict::Unknown => ExitCode::from(EXIT_UNKNOWN),
    })
}

/// The prediction's anomaly, named from the one anomaly table (`pipeline::name_prediction`).
fn named(o: &PredictOutcome, history: &History) -> Option<isopredict::pipeline::AnomalyName> {
    o.prediction.as_ref().map(|p| {
        isopredict::pipeline::name_prediction(
            p,
            o.level,
            &|t| history.txn_label(t),
            &|_| None,
            &|k| isopredict::printable::printable(k).into_owned(),
        )
    })
}

/// The outcomes as text, each with its anomaly's name, then how the search ended.
fn write_text(
    out: &mut impl Write,
    each: &[PredictOutcome],
    history: &History,
    search_end: Option<&str>,
) -> std::io::Result<()> {
    for (i, o) in each.iter().enumerate() {
        if each.len() > 1 {
            writeln!(out, "== prediction {} of {} ==", i + 1, each.len())?;
        }
        write!(out, "{o}")?;
        if let Some(named) = named(o, history) {
            writeln!(
                out,
                "the anomaly is a {}: {}",
                named.id.label(),
                named.description
            )?;
        }
    }
    if let Some(line) = search_end {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The outcome as JSON with the prediction's anomaly named as every view names it:
/// `prediction.anomaly` holds the row's names (engineer's, Adya's, Elle's, Plume's) and the
/// description in the history's labels.
fn json_with_name(
    o: &PredictOutcome,
    named: Option<isopredict::pipeline::AnomalyName>,
) -> serde_json::Value {
    let mut value = o.to_json();
    if let (Some(named), Some(p)) = (
        named,
        value.get_mut("prediction").and_then(|p| p.as_object_mut()),
    ) {
        let mut anomaly = serde_json::to_value(named.id.row().names()).unwrap_or_default();
        if let Some(a) = anomaly.as_object_mut() {
            a.insert(
                "description".to_string(),
                serde_json::Value::String(named.description),
            );
        }
        p.insert("anomaly".to_string(), anomaly);
    }
    value
}

/// With `--max` > 1 and predictions made: how the search for more ended, in one line — no
/// further one exists, or it was cut (by Ctrl-C, at the timeout, by another limit) after the
/// ones printed — and whether it was cut.
fn search_end_line(outcome: &PredictOutcome, timeout: Option<Duration>) -> Option<(String, bool)> {
    if outcome.verdict != Verdict::Predicted {
        return None;
    }
    let n = outcome.predictions.len().max(1);
    let found = format!("{n} prediction{}", if n == 1 { "" } else { "s" });
    if outcome.stats.exhaustive == Some(true) {
        return Some((
            format!("search complete: {found}; no further distinct prediction exists"),
            false,
        ));
    }
    let reason = outcome.reason.as_deref()?;
    let line = if reason.contains(predict::SEARCH_INTERRUPTED) {
        format!("search cut by Ctrl-C (or SIGTERM) after {found}; more may exist")
    } else if reason.contains("timeout") {
        match timeout {
            Some(t) => format!(
                "search cut at the {} s timeout after {found}; more may exist",
                t.as_secs_f64()
            ),
            None => format!("search cut at a timeout after {found}; more may exist"),
        }
    } else {
        format!("search stopped after {found} ({reason}); more may exist")
    };
    Some((line, true))
}

/// `--max`: a positive count or `all`.
pub(super) fn parse_max(s: &str) -> Result<usize, String> {
    if s == "all" {
        return Ok(usize::MAX);
    }
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a positive number or `all`, not `{s}`")),
    }
}
