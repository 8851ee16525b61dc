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

use std::time::Duration;

use crate::check::Level;
use crate::history::History;
use crate::predict::{predict, Engine, PredictOptions, Prediction, Strategy};
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
    let mut procedures = Vec::new();
    let mut columns = Vec::new();
    match &p.cycle {
        Some(cycle) => {
            for e in cycle {
                procedures.push(procedure(calls, e.from));
                procedures.push(procedure(calls, e.to));
                if let Some(k) = &e.key {
                    columns.push(key_column(keys, k));
                }
            }
        }
        None => {
            for c in &p.changed_reads {
                procedures.push(procedure(calls, c.txn));
                procedures.push(procedure(calls, c.new_writer));
                columns.push(key_column(keys, &c.key));
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

/// Up to `max` predictions of `h` by the scalable engine (`predict --max`), after a first
/// prediction was made (none when `max` ≤ 1; an error or an unknown answer gives none too:
/// the first prediction stands alone).
pub(crate) fn more_predictions(
    h: &History,
    level: Level,
    strategy: Strategy,
    timeout: Option<Duration>,
    max: usize,
) -> Vec<Prediction> {
    if max <= 1 {
        return Vec::new();
    }
    // The search for more stops by itself when no further one exists (the search is
    // exhaustive); otherwise after a budget, not the whole timeout: on TPC-C the lazy search
    // can go on proposing candidates the level rejects for minutes after the last new one.
    let budget = timeout.map(|t| t.min(DISTINCT_SEARCH_BUDGET));
    let mut options = PredictOptions::new(level, strategy).with_timeout(budget);
    options.engine = Engine::Scalable;
    options.max = max;
    let progress = SlowSearchNote::start(budget);
    let found = predict(h, &options)
        .map(|o| o.predictions)
        .unwrap_or_default();
    progress.finish(found.len());
    found
}

/// Most time the search for further distinct anomalies takes (`run`/`rank --max N` > 1)
/// when `--timeout` allows more (docs/prediction.md "Several predictions").
pub const DISTINCT_SEARCH_BUDGET: Duration = Duration::from_secs(5);

/// A line on standard error (when it is a terminal) once the search for further anomalies
/// has taken more than a second, and one when it ends.
struct SlowSearchNote {
    done: Option<std::sync::mpsc::Sender<()>>,
    shown: std::sync::Arc<std::sync::atomic::AtomicBool>,
    start: std::time::Instant,
}

impl SlowSearchNote {
    fn start(budget: Option<Duration>) -> SlowSearchNote {
        use std::io::IsTerminal;
        let shown = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        if !std::io::stderr().is_terminal() {
            return SlowSearchNote {
                done: None,
                shown,
                start: std::time::Instant::now(),
            };
        }
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let flag = shown.clone();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                rx.recv_timeout(Duration::from_secs(1))
            {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                eprintln!(
                    "searching for further distinct anomalies ({}) …",
                    budget.map_or("no time limit".to_string(), |b| format!(
                        "at most {:.0} s",
                        b.as_secs_f64()
                    ))
                );
            }
        });
        SlowSearchNote {
            done: Some(tx),
            shown,
            start: std::time::Instant::now(),
        }
    }

    fn finish(self, found: usize) {
        if let Some(tx) = self.done {
            let _ = tx.send(());
        }
        if self.shown.load(std::sync::atomic::Ordering::SeqCst) {
            eprintln!(
                "… {found} further prediction(s) in {:.1} s",
                self.start.elapsed().as_secs_f64()
            );
        }
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
    fn first_of_each_keeps_one_per_anomaly() {
        let x = a(&["A", "B"], &["T.c"]);
        let y = a(&["A", "B"], &["T.d"]);
        assert_eq!(first_of_each(&[x.clone(), y.clone(), x, y]), vec![0, 1]);
        assert!(first_of_each(&[]).is_empty());
    }
}
