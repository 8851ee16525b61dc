//! Distinct anomalies of a workload in application terms (issue 8, "every distinct anomaly"):
//! a prediction's anomaly is named by the procedures and the table columns its `pco` cycle goes
//! through (IsoPredict PLDI'24 §4: a cycle of the least partial commit order is why no serial
//! order exists), e.g. `Balance × WriteCheck on CHECKING.bal, SAVINGS.bal`.
//!
//! **Distinct** means a different [`AppAnomaly`]: the sorted set of procedures of the cycle's
//! transactions together with the sorted set of `TABLE.column`s of its keyed (wr, ww, rw)
//! edges. Rows are left out (the same two procedures conflicting on another customer's balance
//! is the same application anomaly), and so is the order of the cycle. A prediction without a
//! cycle (possible only for exact-strict) is named by its changed reads instead: the reading
//! and the new writing transactions' procedures and the keys read.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::check::Level;
use crate::history::History;
use crate::predict::{
    predict, Engine, PredictOptions, PredictOutcome, Prediction, Strategy, Verdict,
};
use crate::store::KeyDirectory;
use crate::workloads::TxnCall;

/// A prediction's anomaly in application terms (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppAnomaly {
    /// Procedures of the cycle's transactions, sorted, without repeats.
    pub procedures: Vec<String>,
    /// `TABLE.column` of the cycle's keyed edges, sorted, without repeats.
    pub columns: Vec<String>,
}

impl std::fmt::Display for AppAnomaly {
    /// `P1 × P2 on T.a, U.b` (a single procedure conflicting with itself: `P × P on …`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let procedures = match self.procedures.as_slice() {
            [one] => format!("{one} × {one}"),
            many => many.join(" × "),
        };
        if self.columns.is_empty() {
            write!(f, "{procedures}")
        } else {
            write!(f, "{procedures} on {}", self.columns.join(", "))
        }
    }
}

/// The table column a store key stands for, from its description in `keys`: `SAVINGS.bal` for
/// `SAVINGS.bal[custid=3]`, `ACCOUNTS (row)` for a row's existence, the metadata names as they
/// are; the raw key name when the directory does not know it.
pub fn key_column(keys: &KeyDirectory, key: &str) -> String {
    let Some(d) = keys.describe(key) else {
        return key.to_string();
    };
    if let Some(table) = d.strip_suffix(".<last primary key>") {
        return format!("{table} (insert counter)");
    }
    if let Some(row) = d.strip_prefix("row ") {
        let table = row.split('[').next().unwrap_or(row);
        return format!("{table} (row)");
    }
    d.split('[').next().unwrap_or(d).to_string()
}

/// The procedure of observed transaction `t` (`initial state` for the initial transaction).
fn procedure(calls: &[Option<TxnCall>], t: u32) -> String {
    match calls.get(t as usize).and_then(Option::as_ref) {
        Some(c) if c.step > 0 => format!("{} step {}", c.procedure, c.step + 1),
        Some(c) => c.procedure.to_string(),
        None => "initial state".to_string(),
    }
}

/// The anomaly of prediction `p` of a workload run whose transactions ran `calls` (indexed by
/// observed transaction id) over keys named by `keys`.
pub fn app_anomaly(p: &Prediction, calls: &[Option<TxnCall>], keys: &KeyDirectory) -> AppAnomaly {
    anomaly_by(p, |t| procedure(calls, t), |k| key_column(keys, k))
}

/// The anomaly of prediction `p`, each transaction of its cycle (or changed reads) named by
/// `procedure` (by observed transaction id) and each key by `column`: [`app_anomaly`] for
/// workloads; an application recorded through the server names a transaction by its
/// statements' shapes (`rank --app`).
pub fn anomaly_by(
    p: &Prediction,
    procedure: impl Fn(u32) -> String,
    column: impl Fn(&str) -> String,
) -> AppAnomaly {
    let mut procedures = Vec::new();
    let mut columns = Vec::new();
    match &p.cycle {
        Some(cycle) => {
            for e in cycle {
                procedures.push(procedure(e.from));
                procedures.push(procedure(e.to));
                if let Some(k) = &e.key {
                    columns.push(column(k));
                }
            }
        }
        None => {
            for c in &p.changed_reads {
                procedures.push(procedure(c.txn));
                procedures.push(procedure(c.new_writer));
                columns.push(column(&c.key));
            }
        }
    }
    procedures.sort();
    procedures.dedup();
    columns.sort();
    columns.dedup();
    AppAnomaly {
        procedures,
        columns,
    }
}

/// How the search for further distinct anomalies ended (`run`/`rank --max N`): report.md's
/// "Search" line and report.json's `search`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "end", rename_all = "kebab-case")]
pub enum SearchEnd {
    /// `--max 1`: no search for further anomalies.
    NotSearched,
    /// The engine found as many predictions as `--max` asks; more may exist.
    Enough,
    /// The search space is exhausted: no further distinct anomaly exists.
    Exhausted,
    /// The time budget ran out (the distinct-search budget, or `--timeout` if shorter).
    Budget {
        /// The budget, in seconds.
        seconds: f64,
    },
    /// Ctrl-C or SIGTERM cut the search ([`crate::interrupt::keep_findings`]).
    Interrupted,
    /// The search stopped for another reason (a memory limit, the solver gave up, an error).
    Stopped {
        /// Why, in words.
        reason: String,
    },
}

impl SearchEnd {
    /// Whether the search was cut before it could finish (budget, Ctrl-C, another stop).
    pub fn cut(&self) -> bool {
        matches!(
            self,
            SearchEnd::Budget { .. } | SearchEnd::Interrupted | SearchEnd::Stopped { .. }
        )
    }

    /// The search's end in one sentence, after `distinct` distinct anomalies were found
    /// (`None` when no search ran).
    pub fn sentence(&self, distinct: usize, max: usize) -> Option<String> {
        let found = plural_anomalies(distinct);
        Some(match self {
            SearchEnd::NotSearched => return None,
            SearchEnd::Enough => {
                format!("Search stopped at --max {max} predictions ({found}); more may exist.")
            }
            SearchEnd::Exhausted => {
                format!("Search complete: {found}; no further distinct anomaly exists.")
            }
            SearchEnd::Budget { seconds } => format!(
                "Search cut at the {} s distinct-search budget after {found}; more may exist.",
                seconds_text(*seconds)
            ),
            SearchEnd::Interrupted => {
                format!("Search cut by Ctrl-C (or SIGTERM) after {found}; more may exist.")
            }
            SearchEnd::Stopped { reason } => {
                format!("Search stopped after {found} ({reason}); more may exist.")
            }
        })
    }
}

/// `1 distinct anomaly`, `3 distinct anomalies`.
fn plural_anomalies(n: usize) -> String {
    format!(
        "{n} distinct {}",
        if n == 1 { "anomaly" } else { "anomalies" }
    )
}

/// `5`, `0.5`: seconds without a needless fraction.
fn seconds_text(seconds: f64) -> String {
    if seconds.fract() == 0.0 {
        format!("{seconds:.0}")
    } else {
        format!("{seconds}")
    }
}

/// The search for further predictions after the first ([`more_predictions`]).
#[derive(Debug, Clone)]
pub struct DistinctSearch {
    /// The predictions found (besides the first), each verified by the predictor.
    pub predictions: Vec<Prediction>,
    /// How the search ended.
    pub end: SearchEnd,
    /// How long it took, in seconds.
    pub seconds: f64,
}

/// Up to `max` predictions of `h` by the scalable engine (`predict --max`), after a first
/// prediction was made (none when `max` ≤ 1; an error or an unknown answer gives none too:
/// the first prediction stands alone), and how the search ended. The search is cut by a stop
/// request (Ctrl-C, SIGTERM) once the command keeps its findings
/// ([`crate::interrupt::keep_findings`]): what it found is kept. `progress`: a live line on
/// standard error while it runs, when that is a terminal ([`SearchProgress`]).
pub(crate) fn more_predictions(
    h: &History,
    level: Level,
    strategy: Strategy,
    timeout: Option<Duration>,
    max: usize,
    progress: bool,
) -> DistinctSearch {
    if max <= 1 {
        return DistinctSearch {
            predictions: Vec::new(),
            end: SearchEnd::NotSearched,
            seconds: 0.0,
        };
    }
    // The search for more stops by itself when no further one exists (the search is
    // exhaustive); otherwise after a budget, not the whole timeout: on TPC-C the lazy search
    // can go on proposing candidates the level rejects for minutes after the last new one.
    let budget = timeout.map(|t| t.min(DISTINCT_SEARCH_BUDGET));
    let mut options = PredictOptions::new(level, strategy).with_timeout(budget);
    options.engine = Engine::Scalable;
    options.max = max;
    let counter = Arc::new(AtomicUsize::new(0));
    options.progress = Some(counter.clone());
    let start = Instant::now();
    let line = progress
        .then(|| SearchProgress::start(counter, 1, start))
        .flatten();
    let outcome = crate::interrupt::cuttable(|| predict(h, &options));
    let seconds = start.elapsed().as_secs_f64();
    let end = search_end(&outcome, budget, max, start.elapsed());
    let predictions = outcome.map(|o| o.predictions).unwrap_or_default();
    if let Some(line) = line {
        line.finish();
    }
    DistinctSearch {
        predictions,
        end,
        seconds,
    }
}

/// How the search of [`more_predictions`] ended, from the engine's answer and the time it
/// took (`elapsed`): a search that ran out its `budget` was cut by it, whatever words the
/// solver's interruption came with; a stop always says why.
fn search_end(
    outcome: &Result<PredictOutcome, crate::predict::PredictError>,
    budget: Option<Duration>,
    max: usize,
    elapsed: Duration,
) -> SearchEnd {
    let budget_end = || SearchEnd::Budget {
        seconds: budget.map_or(0.0, |b| b.as_secs_f64()),
    };
    let o = match outcome {
        Err(crate::predict::PredictError::Interrupted(_)) => return SearchEnd::Interrupted,
        Err(e) => {
            return SearchEnd::Stopped {
                reason: e.to_string(),
            }
        }
        Ok(o) => o,
    };
    let reason = o.reason.as_deref().unwrap_or("");
    let out_of_time = budget.is_some_and(|b| elapsed >= b);
    match o.verdict {
        Verdict::Predicted if o.stats.exhaustive == Some(true) => SearchEnd::Exhausted,
        Verdict::Predicted if o.predictions.len() >= max => SearchEnd::Enough,
        _ if reason.contains(crate::predict::SEARCH_INTERRUPTED) => SearchEnd::Interrupted,
        _ if crate::interrupt::signalled() && crate::interrupt::keeping_findings() => {
            SearchEnd::Interrupted
        }
        _ if reason.contains("timeout") || out_of_time => budget_end(),
        // The engine says "none" only when its search is complete.
        Verdict::NoPrediction => SearchEnd::Exhausted,
        _ => SearchEnd::Stopped {
            reason: if reason.is_empty() {
                unstated_reason(o)
            } else {
                reason.to_string()
            },
        },
    }
}

/// Why the engine's search for more predictions ended when its answer gives no reason, from
/// what it answered.
fn unstated_reason(o: &PredictOutcome) -> String {
    match o.verdict {
        Verdict::Predicted if o.stats.engine == Some(Engine::Paper) => format!(
            "the prediction space was small enough for the paper engine's encoding, which \
             stops at its first prediction: it returned {} and neither looked for more nor \
             showed that none exist",
            plural_predictions(o.predictions.len())
        ),
        Verdict::Predicted => format!(
            "the engine returned {} without saying whether more exist",
            plural_predictions(o.predictions.len())
        ),
        Verdict::ObservedUnserializable => "the observed run is itself unserializable".to_string(),
        Verdict::ObservedViolation => "the observed run violates the level".to_string(),
        Verdict::NoPrediction | Verdict::Unknown => {
            "the engine answered unknown without saying why".to_string()
        }
    }
}

/// `1 prediction`, `2 predictions`.
fn plural_predictions(n: usize) -> String {
    format!("{n} prediction{}", if n == 1 { "" } else { "s" })
}

/// Most time the search for further distinct anomalies takes (`run`/`rank --max N` > 1)
/// when `--timeout` allows more (docs/prediction.md "Several predictions").
pub const DISTINCT_SEARCH_BUDGET: Duration = Duration::from_secs(5);

/// How often the progress line is redrawn on a terminal.
const PROGRESS_PERIOD: Duration = Duration::from_millis(250);

pub use super::progress::PROGRESS_ENV;

/// A live line on standard error once a search for further anomalies has taken more than a
/// second: `3 anomalies found, searching for more distinct ones … (12 s)` ([`progress_line`]),
/// redrawn in place on a terminal until the search ends, then erased (the report says how the
/// search ended); drawn by indicatif ([`super::progress`]). When standard error is not a
/// terminal, one plain line a period ([`PROGRESS_ENV`]); none with `--quiet`.
pub struct SearchProgress {
    bar: indicatif::ProgressBar,
    _detailed: super::progress::DetailedLine,
}

impl SearchProgress {
    /// Starts the line (`None`: `--quiet`, or [`PROGRESS_ENV`] `0` on a non-terminal). `found`: predictions the search found so far, raised by the engine
    /// ([`PredictOptions::progress`]); `at_least`: anomalies known before the search (a
    /// search after a first prediction finds it again, so the line shows at least that many);
    /// `start`: when the search began.
    pub fn start(
        found: Arc<AtomicUsize>,
        at_least: usize,
        start: Instant,
    ) -> Option<SearchProgress> {
        let drawn = super::progress::Drawn::now()?;
        let line =
            move || progress_line(found.load(Ordering::Relaxed).max(at_least), start.elapsed());
        Some(SearchProgress {
            bar: super::progress::progress_line_bar(drawn, PROGRESS_PERIOD, line),
            _detailed: super::progress::DetailedLine::begin(),
        })
    }

    /// Ends the line (erased on a terminal).
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// The progress line of a search for distinct anomalies: `found` anomalies so far, `elapsed`
/// since the search began (whole seconds): `3 anomalies found, searching for more distinct
/// ones … (12 s)`.
pub fn progress_line(found: usize, elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    match found {
        0 => format!("no anomaly found yet, searching … ({secs} s)"),
        1 => format!("1 anomaly found, searching for more distinct ones … ({secs} s)"),
        n => format!("{n} anomalies found, searching for more distinct ones … ({secs} s)"),
    }
}

/// The indices of `anomalies` that are the first of their kind, in order: what `--max N`
/// reports as distinct anomalies.
pub fn first_of_each(anomalies: &[AppAnomaly]) -> Vec<usize> {
    let mut seen: Vec<&AppAnomaly> = Vec::new();
    let mut out = Vec::new();
    for (i, a) in anomalies.iter().enumerate() {
        if !seen.contains(&a) {
            seen.push(a);
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(p: &[&str], c: &[&str]) -> AppAnomaly {
        AppAnomaly {
            procedures: p.iter().map(|s| s.to_string()).collect(),
            columns: c.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn anomalies_print_in_application_terms() {
        assert_eq!(
            a(&["TransactSavings", "WriteCheck"], &["SAVINGS.bal"]).to_string(),
            "TransactSavings × WriteCheck on SAVINGS.bal"
        );
        assert_eq!(
            a(&["Vote"], &["VOTES (row)", "CONTESTANTS.votes"]).to_string(),
            "Vote × Vote on VOTES (row), CONTESTANTS.votes"
        );
    }

    #[test]
    fn the_progress_line_counts_anomalies_and_whole_seconds() {
        assert_eq!(
            progress_line(3, Duration::from_millis(12_900)),
            "3 anomalies found, searching for more distinct ones … (12 s)"
        );
        assert_eq!(
            progress_line(1, Duration::from_secs(1)),
            "1 anomaly found, searching for more distinct ones … (1 s)"
        );
        assert_eq!(
            progress_line(0, Duration::from_millis(2_500)),
            "no anomaly found yet, searching … (2 s)"
        );
    }

    #[test]
    fn a_search_end_says_whether_it_was_cut_and_why() {
        let interrupted = SearchEnd::Interrupted;
        assert!(interrupted.cut());
        assert_eq!(
            interrupted.sentence(3, 10).unwrap(),
            "Search cut by Ctrl-C (or SIGTERM) after 3 distinct anomalies; more may exist."
        );
        let budget = SearchEnd::Budget { seconds: 5.0 };
        assert!(budget.cut());
        assert_eq!(
            budget.sentence(1, 10).unwrap(),
            "Search cut at the 5 s distinct-search budget after 1 distinct anomaly; more may \
             exist."
        );
        assert_eq!(
            SearchEnd::Budget { seconds: 0.5 }.sentence(2, 10).unwrap(),
            "Search cut at the 0.5 s distinct-search budget after 2 distinct anomalies; more \
             may exist."
        );
        assert!(!SearchEnd::Exhausted.cut());
        assert_eq!(
            SearchEnd::Exhausted.sentence(2, 10).unwrap(),
            "Search complete: 2 distinct anomalies; no further distinct anomaly exists."
        );
        assert!(!SearchEnd::Enough.cut());
        assert!(SearchEnd::Enough
            .sentence(2, 10)
            .unwrap()
            .starts_with("Search stopped at --max 10 predictions"));
        assert_eq!(SearchEnd::NotSearched.sentence(1, 1), None);
        // As report.json carries it.
        let json = serde_json::to_value(SearchEnd::Budget { seconds: 5.0 }).unwrap();
        assert_eq!(json, serde_json::json!({"end": "budget", "seconds": 5.0}));
    }

    #[test]
    fn a_stopped_search_always_says_why() {
        let options = PredictOptions::new(Level::Causal, Strategy::ApproxRelaxed);
        let budget = Some(Duration::from_secs(5));
        let early = Duration::from_secs(1);
        // The paper engine's form answers one prediction and no reason (it was "the search
        // gave no reason").
        let mut paper = PredictOutcome::unknown(&options, Default::default());
        paper.verdict = Verdict::Predicted;
        paper.stats.engine = Some(Engine::Paper);
        match search_end(&Ok(paper.clone()), budget, 10, early) {
            SearchEnd::Stopped { reason } => assert!(
                reason.starts_with(
                    "the prediction space was small enough for the paper \
                                    engine's encoding, which stops at its first prediction"
                ),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        for verdict in [
            Verdict::Predicted,
            Verdict::Unknown,
            Verdict::ObservedUnserializable,
            Verdict::ObservedViolation,
        ] {
            let mut o = PredictOutcome::unknown(&options, Default::default());
            o.verdict = verdict;
            let SearchEnd::Stopped { reason } = search_end(&Ok(o), budget, 10, early) else {
                panic!("{verdict:?}");
            };
            assert!(
                !reason.is_empty() && !reason.contains("no reason"),
                "{reason}"
            );
        }
        // A solver interrupted as the budget ran out: the budget cut it, whatever words the
        // interruption came with.
        let mut cut = paper;
        cut.stats.engine = Some(Engine::Scalable);
        cut.reason = Some(
            "search stopped early: the solver was stopped before it gave its model".to_string(),
        );
        assert_eq!(
            search_end(&Ok(cut.clone()), budget, 10, Duration::from_millis(5_200)),
            SearchEnd::Budget { seconds: 5.0 }
        );
        assert!(matches!(
            search_end(&Ok(cut), budget, 10, early),
            SearchEnd::Stopped { .. }
        ));
    }

    #[test]
    fn first_of_each_keeps_one_per_anomaly() {
        let x = a(&["A", "B"], &["T.c"]);
        let y = a(&["A", "B"], &["T.d"]);
        assert_eq!(first_of_each(&[x.clone(), y.clone(), x, y]), vec![0, 1]);
        assert!(first_of_each(&[]).is_empty());
    }
}
