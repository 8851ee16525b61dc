//! `isopredict rank`: Tables 4–7 and the risk ranking over a grid of workload runs, or over
//! folders of user histories (docs/ranking.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use isopredict::check::Level;
use isopredict::pipeline::{
    parse_level, parse_seeds, progress_bar, rank, write_rank_files, RankGrid, RankInput,
};
use isopredict::predict::Strategy;
use isopredict::workloads::{self, Size};

/// Arguments of `isopredict rank`.
#[derive(clap::Args)]
pub struct Args {
    /// Workloads, comma-separated [default: all].
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// Seeds: N, A..B (inclusive) or a comma-separated list.
    #[arg(long, default_value = "1..10")]
    seeds: String,
    /// Sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "small,large")]
    sizes: Vec<Size>,
    /// Levels, comma-separated: causal, ra, rc, pc, si.
    #[arg(long, value_delimiter = ',', default_value = "causal,rc", value_parser = parse_level)]
    levels: Vec<Level>,
    /// Strategies, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        value_enum,
        default_value = "approx-relaxed"
    )]
    strategies: Vec<Strategy>,
    /// Random-exploration runs per workload × size × seed × level (Tables 6/7; 0: none).
    #[arg(long, default_value_t = 10, value_name = "N")]
    explore: u64,
    /// Rank the histories in this folder instead (one group per subfolder; each file an
    /// observed history in any supported format).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["workloads", "seeds", "sizes", "explore"])]
    histories: Option<PathBuf>,
    /// Time budget in seconds per prediction.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    timeout: f64,
    /// Output folder for rank.md, rank.json and risk.svg.
    #[arg(long, default_value = "out/rank", value_name = "DIR")]
    out: PathBuf,
    /// Worker threads [default: one per core].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Print rank.json instead of rank.md.
    #[arg(long)]
    json: bool,
}

/// Ranks; exit code 0 when done, 2 on bad input.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let bad = |message: String| {
        eprintln!("error: {message}");
        Ok(ExitCode::from(super::EXIT_BAD_INPUT))
    };
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return bad("--timeout must be a positive number of seconds".to_string());
    }
    let input = match args.histories {
        Some(dir) => RankInput::Histories { dir },
        None => {
            let workloads = if args.workloads.is_empty() {
                workloads::all()
            } else {
                let mut chosen = Vec::new();
                for name in &args.workloads {
                    match workloads::by_name(name) {
                        Some(w) => chosen.push(w),
                        None => {
                            let names: Vec<&str> =
                                workloads::all().iter().map(|w| w.name()).collect();
                            return bad(format!(
                                "unknown workload `{name}` (expected one of: {})",
                                names.join(", ")
                            ));
                        }
                    }
                }
                chosen
            };
            let seeds = match parse_seeds(&args.seeds) {
                Ok(s) => s,
                Err(e) => return bad(e),
            };
            RankInput::Workloads {
                workloads,
                sizes: args.sizes,
                seeds,
                explore: args.explore,
            }
        }
    };
    let grid = RankGrid {
        input,
        levels: args.levels,
        strategies: args.strategies,
        timeout: Some(Duration::from_secs_f64(args.timeout)),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()?;
    let bar = progress_bar(0);
    let outcome = match pool.install(|| rank(&grid, &bar)) {
        Ok(o) => o,
        Err(message) => return bad(message),
    };
    let files = write_rank_files(&outcome, &args.out)?;
    let text = if args.json {
        serde_json::to_string_pretty(&outcome)? + "\n"
    } else {
        outcome.to_markdown()
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other?,
    }
    eprintln!(
        "wrote {}",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
