//! `isopredict watch --level si|ser`: online timestamp checking of transactions arriving as
//! TimeKiller JSON lines on standard input or a loopback TCP socket (docs/checking.md).

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

use isopredict::ser::aion::OnlineOptions;
use isopredict::ser::watch::{watch, WatchError, WatchInput};
use isopredict::ser::TsLevel;

use super::check::InitialValue;
use super::EXIT_BAD_INPUT;

/// The longest `--timeout`, in seconds (a day): EXT verdicts wait that long at most.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// The level watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchLevel {
    /// Snapshot isolation (Aion).
    Si,
    /// Serializability in commit-timestamp order (Aion-SER), and snapshot isolation on the
    /// same stream (ser implies si).
    Ser,
}

/// Arguments of `isopredict watch`.
#[derive(clap::Args)]
pub struct Args {
    /// The level.
    #[arg(long, short, value_enum)]
    level: WatchLevel,
    /// Listen on this loopback address (e.g. 127.0.0.1:23333; port 0 picks one and prints
    /// it) instead of reading standard input.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// With --listen: stop after this many connections have closed.
    #[arg(long, value_name = "N")]
    connections: Option<u32>,
    /// With --listen: close a connection that sends nothing for this many seconds (0: never;
    /// up to 86400), so clients that never finish a line cannot hold every slot.
    #[arg(long, default_value_t = 300.0, value_name = "SECS")]
    idle_timeout: f64,
    /// Seconds after a transaction's arrival when its EXT verdicts become final (0 to 86400).
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    timeout: f64,
    /// The initial value of every key: `null` (TimeKiller's default) or an integer.
    #[arg(long, default_value = "null", value_name = "null|N")]
    initial_value: InitialValue,
    /// Print each violation and the summary as JSON, one object per line.
    #[arg(long)]
    json: bool,
}

/// Watches until the input ends or a stop is requested (Ctrl-C, SIGTERM: the summary is
/// printed); exit code 0 without violations, 1 with (with --level ser: of ser or of si, which
/// ser implies), 2 on bad usage.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.timeout.is_finite() && (0.0..=MAX_TIMEOUT_SECS).contains(&args.timeout)) {
        isopredict::ewriteln!(
            "error: --timeout must be a number of seconds from 0 to {MAX_TIMEOUT_SECS} (a day)"
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    if !(args.idle_timeout.is_finite() && (0.0..=MAX_TIMEOUT_SECS).contains(&args.idle_timeout)) {
        isopredict::ewriteln!(
            "error: --idle-timeout must be a number of seconds from 0 (never) to {MAX_TIMEOUT_SECS} (a day)"
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let input = match args.listen {
        Some(addr) => WatchInput::Listen {
            addr,
            connections: args.connections,
            idle: (args.idle_timeout > 0.0)
                .then(|| std::time::Duration::from_secs_f64(args.idle_timeout)),
        },
        None => WatchInput::Stdin,
    };
    let options = OnlineOptions {
        level: match args.level {
            WatchLevel::Si => TsLevel::Snapshot,
            WatchLevel::Ser => TsLevel::Serializable,
        },
        timeout_ms: (args.timeout * 1000.0) as u64,
        initial: args.initial_value.0,
    };
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr();
    let mut on_listen = |addr: SocketAddr| {
        isopredict::ewriteln!("listening on {addr}");
    };
    let summary = match watch(
        input,
        options,
        args.json,
        &mut out,
        &mut err,
        &mut on_listen,
    ) {
        Ok(summary) => summary,
        Err(e @ WatchError::NotLoopback(_)) => {
            isopredict::ewriteln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(e) => return Err(e.into()),
    };
    if args.json {
        serde_json::to_writer(&mut out, &serde_json::json!({ "summary": summary }))?;
        writeln!(out)?;
    } else {
        let s = &summary;
        writeln!(
            out,
            "watched {} transactions in {:.3} s: {:.0} transactions/s",
            s.stats.transactions, s.seconds, s.throughput
        )?;
        // Each anomaly named as `check` names it (the anomaly table's label).
        let counts = match &s.si_counts {
            None => format!("{} ({})", s.counts.total(), s.counts.named()),
            // SER implies SI: the SI violations of the stream violate SER too.
            Some(si) => format!(
                "{} (ser in commit-timestamp order: {} ({}); si, which ser implies: {} ({}))",
                s.counts.total() + si.total(),
                s.counts.total(),
                s.counts.named(),
                si.total(),
                si.named()
            ),
        };
        let retracted = if s.retracted > 0 {
            format!(
                " (after {} EXT NEVER verdict(s) taken back when the writer of the value read \
                 arrived late)",
                s.retracted
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "violations: {counts}{retracted}; malformed lines skipped: {}; late arrivals: {}",
            s.malformed, s.stats.late
        )?;
        writeln!(
            out,
            "memory high-water marks: {} transactions pending, {} committed writes kept",
            s.stats.max_live, s.stats.max_writes_kept
        )?;
    }
    Ok(if !summary.violated() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
