//! `isopredict generate`: writes a random history (see [`isopredict::generate`]).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use isopredict::formats::{self, Format};
use isopredict::generate::{generate, Consistency, GenerateParams, KeyDistribution};

/// Generate a random history, optionally consistent at a level by simulating a store.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of sessions.
    #[arg(long, default_value_t = 10)]
    pub sessions: u32,
    /// Transactions per session.
    #[arg(long, default_value_t = 10)]
    pub txns: u32,
    /// Operations per transaction.
    #[arg(long, default_value_t = 8)]
    pub ops: u32,
    /// Number of keys.
    #[arg(long, default_value_t = 100)]
    pub keys: u32,
    /// Probability that an operation is a read.
    #[arg(long, default_value_t = 0.5)]
    pub read_ratio: f64,
    /// Key distribution: uniform, zipf, zipf:EXPONENT, hotspot (80% of operations on 20% of
    /// the keys) or hotspot:KEYS:OPS.
    #[arg(long, default_value = "uniform")]
    pub dist: KeyDistribution,
    /// Seed of the pseudo-random generator (same parameters and seed, same history).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Probability that a transaction aborts.
    #[arg(long, default_value_t = 0.0)]
    pub abort_ratio: f64,
    /// Simulate a store guaranteeing this level: none (alias random: reads see any earlier
    /// committed write), ser, cc, ra or rc.
    #[arg(long, default_value = "none")]
    pub consistent: Consistency,
    /// Output file (standard output if absent).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Output format [default: from the --out file's extension (.json, .isopredict, .plume,
    /// .awdit), else json].
    #[arg(long)]
    pub format: Option<Format>,
}

/// Runs `isopredict generate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let params = GenerateParams {
        sessions: args.sessions,
        txns_per_session: args.txns,
        ops_per_txn: args.ops,
        keys: args.keys,
        read_ratio: args.read_ratio,
        distribution: args.dist,
        abort_ratio: args.abort_ratio,
        consistency: args.consistent,
        seed: args.seed,
    };
    if let Err(message) = params.validate() {
        isopredict::ewriteln!("error: {message}");
        return Ok(ExitCode::from(2));
    }
    let format = args
        .format
        .or_else(|| args.out.as_deref().and_then(Format::from_extension))
        .unwrap_or(Format::Json);
    let start = Instant::now();
    let history = generate(&params)?;
    match &args.out {
        Some(path) => formats::write_file(&history, path, format)?,
        None => {
            let mut out = std::io::BufWriter::new(super::stdout());
            formats::write_to(&history, format, &mut out)
                .context("writing the history to standard output")?;
            out.flush()
                .context("writing the history to standard output")?;
        }
    }
    if std::io::stderr().is_terminal() {
        let stats = history.stats();
        isopredict::ewriteln!(
            "generated {} sessions, {} committed and {} aborted transactions, {} events ({}) in {:.2} s{}",
            stats.sessions,
            stats.committed,
            stats.aborted,
            stats.reads + stats.writes,
            args.consistent,
            start.elapsed().as_secs_f64(),
            args.out
                .as_ref()
                .map_or(String::new(), |p| format!(" → {}", p.display()))
        );
    }
    Ok(ExitCode::SUCCESS)
}
