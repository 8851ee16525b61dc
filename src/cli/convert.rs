//! `isopredict convert IN OUT`: converts a history between formats.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use isopredict::formats::{self, Format};

use super::{read_input, InputFormat};

/// Arguments of `isopredict convert`.
#[derive(clap::Args)]
pub struct Args {
    /// The input file (`-` reads standard input).
    input: PathBuf,
    /// The output file (`-` writes standard output).
    output: PathBuf,
    /// The input format.
    #[arg(long, value_enum, default_value = "auto")]
    from: InputFormat,
    /// The output format [default: from OUT's extension (.json, .isopredict, .plume,
    /// .awdit, .dbcop, .edn, .bincode, …), else json]. cobra, viper and dbcop-bincode write a
    /// directory.
    #[arg(long, value_enum)]
    to: Option<Format>,
    /// Convert even when the output format cannot express what the history means (e.g. awdit
    /// has no initial state and no aborted transactions): without it, such a conversion is
    /// refused (exit 2), naming what would be lost.
    #[arg(long)]
    lossy: bool,
}

/// Converts, then prints a `note:` line on standard error for everything the output format
/// dropped. Exit code 0; 2 when the output format would change what the history means
/// (unless `--lossy`).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (history, _) = read_input(&args.input, args.from.0)?;
    for note in history.input_notes() {
        isopredict::ewriteln!("note: {note}");
    }
    let to = args
        .to
        .or_else(|| Format::from_extension(&args.output))
        .unwrap_or(Format::Json);
    let losses = formats::conversion_losses(&history, to);
    if !losses.is_empty() {
        if !args.lossy {
            for loss in &losses {
                isopredict::ewriteln!("error: {loss}");
            }
            isopredict::ewriteln!(
                "error: refusing to convert to {to}: the output would not mean what the input \
                 means (give --lossy to convert anyway)"
            );
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
        for loss in &losses {
            isopredict::ewriteln!("note: lost (--lossy): {loss}");
        }
    }
    let written = if args.output == Path::new("-") {
        // A reader that went away (`| head`) is not an error of ours (see `super::stdout`).
        formats::write_to(&history, to, &mut super::stdout())
    } else {
        formats::write_file(&history, &args.output, to)
    };
    written?;
    for note in formats::conversion_notes(&history, to) {
        isopredict::ewriteln!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}
