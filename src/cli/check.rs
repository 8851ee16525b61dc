//! `isopredict check FILE…`: judges histories at isolation levels through the one decision
//! core ([`isopredict::verdict`]); docs/checking.md.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use isopredict::check::Level;
use isopredict::formats::Format;
use isopredict::pipeline::check_cells::CheckOptions;
use isopredict::ser::Engine;
use isopredict::verdict::{self, EvidenceChoice, Limits, Outcome, ReadOptions};

use super::{InputFormat, EXIT_BAD_INPUT};

/// The most edges of one cycle printed (text, JSON and DOT).
const MAX_CYCLE_EDGES: usize = 100;

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

/// `--initial-value`: `null` (`None`) or an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitialValue(pub Option<i64>);

impl std::str::FromStr for InitialValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("null") {
            return Ok(InitialValue(None));
        }
        s.parse::<i64>()
            .map(|v| InitialValue(Some(v)))
            .map_err(|_| format!("`{s}` is neither null nor an integer"))
    }
}

/// Arguments of `isopredict check`.
#[derive(clap::Args)]
pub struct Args {
    /// The history file or directory (`-` reads standard input). Several, or a directory of
    /// histories, print one line per history and a summary; the exit code is the largest.
    #[arg(required_unless_present_any = ["cell", "merge"], num_args = 1..)]
    files: Vec<PathBuf>,
    /// The input format.
    #[arg(long, short, value_enum, default_value = "auto")]
    format: InputFormat,
    /// The level: strict-ser, ser, si, pc, cc, ra, rc, ci, or all (every level's verdict,
    /// strongest first). Every way of asking gives the same verdict per level.
    #[arg(long, short, default_value = "all")]
    level: LevelArg,
    /// What verdicts may rely on: auto (everything the input carries), black-box (which
    /// write each read observed, only), write-order (and each key's known version order),
    /// timestamps (the database's start and commit timestamps decide si and ser),
    /// real-time (the clients' invocation/completion order decides strict-ser, added to the
    /// reads and to each key's known version order where the input shows one, as Elle's
    /// strict-serializable check uses both).
    #[arg(long, default_value = "auto", value_name = "KIND")]
    evidence: EvidenceChoice,
    /// Same as --evidence black-box.
    #[arg(long, conflicts_with = "evidence")]
    black_box: bool,
    /// The engine for ser, si and pc: search (Biswas & Enea's prefix search), smt (Z3) or auto
    /// (the search, then Z3 on what it gives up on).
    #[arg(long, default_value = "auto")]
    engine: Engine,
    /// Give up after this many seconds (exit code 3).
    #[arg(long, value_name = "SECS", value_parser = super::parse_timeout)]
    timeout: Option<super::Timeout>,
    /// Memory budget in MB for the checkers' largest structures (the causal check's clocks,
    /// the strong levels' saturation) [default: half the memory the process may use: the
    /// machine's, or the address-space limit (`ulimit -v`) when lower]; over it the answer
    /// is "unknown" (exit 3), naming the budget.
    #[arg(long, value_name = "MB")]
    memory: Option<u64>,
    /// Print the report as JSON (schema: docs/checking.md).
    #[arg(long)]
    json: bool,
    /// Print instead the result map Elle's checker returns (`:valid?`, `:anomaly-types`,
    /// `:anomalies`, `:not`, `:also-not`), as EDN, or JSON with --json (docs/checking.md,
    /// "Elle's result map"). The exit code stays isopredict's.
    #[arg(long, value_name = "FORMAT", value_parser = ["elle"])]
    output: Option<String>,
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
    /// The initial value of every key in TimeKiller input: `null` (TimeKiller's default) or
    /// an integer such as 0. Not given, input whose reads suggest another value (most keys
    /// read one value nothing writes) is refused (exit 2); `null` judges it as written.
    #[arg(long, value_name = "null|N")]
    initial_value: Option<InitialValue>,
    /// Many histories as independent cells: --plan, --cell, --merge (docs/distributed.md).
    #[command(flatten)]
    cells: super::many::CellArgs,
}

impl Args {
    fn evidence(&self) -> EvidenceChoice {
        if self.black_box {
            EvidenceChoice::Only(verdict::Evidence::BlackBox)
        } else {
            self.evidence
        }
    }

    fn limits(&self, explain: bool) -> Limits {
        Limits {
            timeout: self.timeout.and_then(|t| t.0),
            engine: self.engine,
            max_violations: self.max_violations,
            witness: self.witness,
            explain,
            max_cycle_edges: Some(MAX_CYCLE_EDGES),
            explain_timeout: None,
            memory: match self.memory {
                Some(mb) => Some(mb.saturating_mul(1 << 20)),
                None => isopredict::predict::default_memory_budget(),
            },
        }
    }

    /// How each history of a batch is judged.
    fn batch_options(&self) -> CheckOptions {
        CheckOptions {
            level: match self.level {
                LevelArg::One(level) => Some(level),
                LevelArg::All => None,
            },
            evidence: match self.evidence() {
                EvidenceChoice::Auto => None,
                EvidenceChoice::Only(e) => Some(e),
            },
            engine: self.engine,
            timeout: self.timeout.and_then(|t| t.0),
            max_violations: self.max_violations,
            initial_value: self.initial_value.and_then(|v| v.0),
            initial_value_given: self.initial_value.is_some(),
            format: self.format.0.map(|f| f.name().to_string()),
            memory: self.memory.map(|mb| mb.saturating_mul(1 << 20)),
        }
    }

    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            format: self.format.0,
            initial_value: self.initial_value.and_then(|v| v.0),
            initial_value_given: self.initial_value.is_some(),
        }
    }
}

fn exit_code(outcome: Outcome) -> u8 {
    isopredict::pipeline::check_cells::exit_code(outcome)
}

/// Checks; exit code 0 when consistent, 1 on a violation, 2 on bad input or evidence the
/// input lacks, 3 when the verdict is unknown (time, state or memory limit).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let single_history_only =
        args.dot.is_some() || args.json || args.witness || args.output.is_some();
    if args.cells.any() {
        if single_history_only {
            isopredict::ewriteln!(
                "error: --dot, --json, --output and --witness take a single history"
            );
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        return super::many::check_cells(&args.cells, &args.files, &args.batch_options());
    }
    let (files, many) = super::many::expand(&args.files, args.format.0)?;
    if many {
        if single_history_only {
            isopredict::ewriteln!(
                "error: --dot, --json, --output and --witness take a single history"
            );
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        return super::many::check_batch(&files, &args.batch_options());
    }
    // A plain progress line every few seconds when standard error is not a terminal.
    let working = isopredict::pipeline::progress::Working::start(format!(
        "check {} at {}",
        files[0].display(),
        match args.level {
            LevelArg::One(level) => level.to_string(),
            LevelArg::All => "every level".to_string(),
        }
    ));
    isopredict::pipeline::progress::stage("reading");
    let (input, format) = verdict::read_input(&files[0], args.read_options())?;
    isopredict::pipeline::progress::stage("deciding");
    let limits = args.limits(true);
    let mut out = super::stdout();
    let decided = match args.level {
        LevelArg::One(level) => {
            verdict::Decider::new(&input, args.evidence(), &limits).and_then(|mut decider| {
                let v = decider.decide(level)?;
                Ok((
                    exit_code(v.verdict),
                    Printed::One(Box::new(v), decider.evidence()),
                ))
            })
        }
        LevelArg::All => verdict::decide_all(&input, args.evidence(), &limits)
            .map(|all| (exit_code(all.outcome()), Printed::All(Box::new(all)))),
    };
    drop(working);
    // The reader's notes (a TimeKiller history is built only when a verdict needs it).
    if let Some(h) = input.history_if_built() {
        for note in h.input_notes() {
            isopredict::ewriteln!("note: {note}");
        }
    }
    let (code, printed) = match decided {
        Ok(x) => x,
        Err(e) => {
            isopredict::ewriteln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    if let Some(code) = super::interrupted() {
        return Ok(code);
    }
    let dot = match &printed {
        _ if args.output.is_some() => {
            let verdicts = match &printed {
                Printed::One(v, _) => std::slice::from_ref(v.as_ref()),
                Printed::All(all) => all.verdicts.as_slice(),
            };
            // The initial state is named by the model: read the file again to tell.
            let list_append = matches!(format, Format::Elle | Format::ElleJson)
                && std::fs::read(&files[0]).is_ok_and(|b| verdict::is_list_append(&b));
            let map =
                verdict::elle_result(verdicts, input.history_if_built(), list_append).to_value();
            if args.json {
                serde_json::to_writer_pretty(&mut out, &map.to_json())?;
            } else {
                write!(out, "{}", map.to_edn())?;
            }
            writeln!(out)?;
            printed.dot()
        }
        Printed::One(v, evidence) => {
            if args.json {
                serde_json::to_writer_pretty(&mut out, &verdict::one_json(v, evidence))?;
                writeln!(out)?;
            } else {
                write!(out, "{}", verdict::render_one(v, evidence))?;
            }
            v.report.as_ref().and_then(|r| r.render_dot())
        }
        Printed::All(all) => {
            if args.json {
                serde_json::to_writer_pretty(&mut out, all.as_ref())?;
                writeln!(out)?;
            } else {
                write!(out, "{all}")?;
            }
            all.render_dot()
        }
    };
    if let Some(path) = &args.dot {
        let text = dot.unwrap_or_else(|| {
            let mut dot = isopredict::dot::DotWriter::digraph("violations");
            dot.label("no violation");
            dot.finish()
        });
        isopredict::output::write_file_atomically(path, |w| w.write_all(text.as_bytes()))?;
    }
    Ok(ExitCode::from(code))
}

/// What is printed for one history.
enum Printed {
    One(Box<verdict::Verdict>, verdict::EvidenceUse),
    All(Box<verdict::VerdictsReport>),
}

impl Printed {
    /// The violations as a DOT drawing.
    fn dot(&self) -> Option<String> {
        match self {
            Printed::One(v, _) => v.report.as_ref().and_then(|r| r.render_dot()),
            Printed::All(all) => all.render_dot(),
        }
    }
}
