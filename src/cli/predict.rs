//! `isopredict predict FILE --level causal|ra|rc|pc|si`: predicts an unserializable execution the
//! level allows (IsoPredict; docs/prediction.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use isopredict::check::Level;
use isopredict::formats::{self, Format};
use isopredict::predict::{self, ExactMethod, PredictOptions, RankEncoding, Strategy, Verdict};

use super::{read_input, InputFormat, EXIT_BAD_INPUT};

/// Exit code when a prediction is made (or the observed history already violates the level).
const EXIT_FOUND: u8 = 1;
/// Exit code when the solver gave up.
const EXIT_UNKNOWN: u8 = 3;

/// Arguments of `isopredict predict`.
#[derive(clap::Args)]
pub struct Args {
    /// The observed history (`-` reads standard input).
    file: PathBuf,
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
    /// Give up after this many seconds of solving and re-verification (0: no limit); the
    /// answer is then "unknown" (exit code 3).
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    timeout: u64,
    /// Write the predicted history to this file (`-`: standard output).
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
    if !matches!(
        args.level,
        Level::Causal | Level::ReadAtomic | Level::ReadCommitted | Level::Prefix | Level::Snapshot
    ) {
        eprintln!(
            "error: prediction supports the levels causal, ra, rc, pc and si, not {}",
            args.level
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let (history, input_format) = read_input(&args.file, args.format.0)?;
    let mut options = PredictOptions::new(args.level, args.strategy)
        .with_timeout((args.timeout > 0).then(|| Duration::from_secs(args.timeout)));
    options.ranks = args.ranks;
    options.exact = args.exact;
    let outcome = match predict::predict(&history, &options) {
        Ok(outcome) => outcome,
        Err(
            e @ (predict::PredictError::InvalidObservation { .. }
            | predict::PredictError::TooLarge { .. }),
        ) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(e) => return Err(e.into()),
    };

    if let (Some(path), Some(p)) = (&args.out, &outcome.prediction) {
        let format = args
            .out_format
            .or_else(|| Format::from_extension(path))
            .unwrap_or(input_format);
        if path.as_os_str() == "-" {
            formats::write_to(&p.history, format, &mut std::io::stdout().lock())?;
        } else {
            formats::write_file(&p.history, path, format)
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    if let Some(path) = &args.dot {
        let text = match (&outcome.prediction, &outcome.observed) {
            (Some(p), _) => predict::dot::prediction_dot(&history, p),
            (None, Some(report)) => report.render_dot().unwrap_or_default(),
            (None, None) => format!(
                "digraph prediction {{\n  label=\"{}\";\n}}\n",
                match outcome.verdict {
                    Verdict::Unknown => "unknown",
                    _ => "no prediction",
                }
            ),
        };
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &outcome.to_json())?;
        writeln!(out)?;
    } else if args.out.as_deref() != Some(std::path::Path::new("-")) {
        write!(out, "{outcome}")?;
    }
    Ok(match outcome.verdict {
        Verdict::Predicted | Verdict::ObservedViolation => ExitCode::from(EXIT_FOUND),
        Verdict::NoPrediction => ExitCode::SUCCESS,
        Verdict::Unknown => ExitCode::from(EXIT_UNKNOWN),
    })
}
