//! The artifact's shipped traces (tests/data/isopredict-traces): reading them into
//! histories with their commit order, replaying them against our workloads, comparing traces.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use isopredict::check::Level;
use isopredict::formats::{read_str, Format};
use isopredict::history::{History, TxnId};
use isopredict::store::{ReadPolicy, ReplayPlan};
use isopredict::workloads::{run, Run, RunConfig, Size, Workload};

/// The text of a shipped trace.
pub fn shipped(name: &str) -> String {
    let path = super::testdata_dir().join("isopredict-traces").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The trace text a run writes.
pub fn trace_of(r: &Run) -> String {
    let mut out = Vec::new();
    r.store.write_trace(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The `(session, k)` of a trace line's transaction.
fn txn_of(line: &str) -> (u64, u64) {
    let at = line.rfind("Txn(").expect("Txn(..)") + 4;
    let inner = &line[at..at + line[at..].find(')').expect(")")];
    let (s, k) = inner.split_once(", ").expect("(s, k)");
    (s.parse().unwrap(), k.parse().unwrap())
}

/// A trace as a history (formats' IsoPredict reader), with its transactions in trace
/// (= commit) order.
pub fn parse(trace: &str, source: &str) -> (History, Vec<TxnId>) {
    let history = read_str(trace, source, Some(Format::IsoPredict)).expect("a shipped trace");
    let mut id_of: HashMap<(u64, u64), TxnId> = HashMap::new();
    for t in 1..history.txn_count() as TxnId {
        let tx = history.txn(t);
        let s = history.sessions()[tx.session as usize].external_id.unwrap();
        id_of.insert((s, tx.external_id.unwrap()), t);
    }
    let mut order: Vec<TxnId> = Vec::new();
    for line in trace.lines() {
        let id = txn_of(line);
        if id != (0, 0) && order.last() != Some(&id_of[&id]) {
            order.push(id_of[&id]);
        }
    }
    (history, order)
}

/// Replays `file` (a shipped trace of `workload`, run `seed`) against our implementation:
/// the same session turns, every read following the trace's writer. Returns the replay.
pub fn replay_shipped(workload: &dyn Workload, seed: u64, file: &str) -> Run {
    let size = if file.contains("large") {
        Size::Large
    } else {
        Size::Small
    };
    let (history, order) = parse(&shipped(file), file);
    // Observed traces are serial, so every level admits their writers.
    let plan = ReplayPlan::new(&history, Level::Causal, Some(&order));
    run(
        workload,
        &RunConfig {
            policy: ReadPolicy::Replay {
                plan: Arc::new(plan),
                level: Level::Causal,
            },
            ..RunConfig::monkeydb(seed, size)
        },
    )
    .unwrap()
}

/// The initial-state lines, sorted.
pub fn initial_lines(trace: &str) -> Vec<&str> {
    let mut v: Vec<&str> = trace
        .lines()
        .filter(|l| l.ends_with("Txn(0, 0)") && !l.contains("From"))
        .collect();
    v.sort_unstable();
    v
}

/// The non-initial lines, in order.
pub fn run_lines(trace: &str) -> Vec<&str> {
    trace
        .lines()
        .filter(|l| !l.ends_with("Txn(0, 0)") || l.contains("From"))
        .collect()
}

/// Events per transaction id, in trace order of the transactions.
pub fn txn_sizes(trace: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for l in run_lines(trace) {
        let at = l.rfind("Txn(").unwrap();
        let id = &l[at..at + l[at..].find(')').unwrap() + 1];
        match out.last_mut() {
            Some((last, n)) if last == id => *n += 1,
            _ => out.push((id.to_string(), 1)),
        }
    }
    out
}

/// The first line where two traces differ, with context, for assertion messages.
pub fn first_difference(ours: &str, theirs: &str) -> String {
    let a = run_lines(ours);
    let b = run_lines(theirs);
    for i in 0..a.len().max(b.len()) {
        if a.get(i) != b.get(i) {
            let lo = i.saturating_sub(3);
            return format!(
                "line {i} of the run: ours {:?}\n theirs {:?}\n(ours has {} lines, theirs {})",
                &a[lo..(i + 2).min(a.len())],
                &b[lo..(i + 2).min(b.len())],
                a.len(),
                b.len()
            );
        }
    }
    String::from("no difference")
}

/// Transactions per session of a trace.
pub fn per_session(trace: &str) -> BTreeMap<u64, usize> {
    let mut m = BTreeMap::new();
    for (id, _) in txn_sizes(trace) {
        *m.entry(txn_of(&id).0).or_insert(0) += 1;
    }
    m
}

/// A workload whose listed calls — (terminal, call index) — roll back at once, before any
/// statement: how the artifact's Wikipedia runs lost calls when its worker threads raced on
/// the shared generator (a corrupted page title makes GetPage user-abort).
pub struct WithAborts<'w> {
    pub inner: &'w dyn Workload,
    pub aborts: Vec<(usize, usize)>,
}

struct AbortingTerminal {
    inner: Box<dyn isopredict::workloads::Terminal>,
    aborts: Vec<usize>,
    calls: usize,
}

impl isopredict::workloads::Terminal for AbortingTerminal {
    fn run(
        &mut self,
        procedure: usize,
        step: u32,
        tx: &mut isopredict::store::Tx<'_>,
    ) -> isopredict::workloads::Step {
        if step == 0 {
            self.calls += 1;
            if self.aborts.contains(&(self.calls - 1)) {
                return isopredict::workloads::Step::Done(isopredict::store::Outcome::Rollback);
            }
        }
        self.inner.run(procedure, step, tx)
    }
}

impl Workload for WithAborts<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn procedures(&self) -> &'static [isopredict::workloads::Procedure] {
        self.inner.procedures()
    }
    fn first_session(&self) -> u64 {
        self.inner.first_session()
    }
    fn load(&self, loader: &mut isopredict::store::Loader<'_>) {
        self.inner.load(loader)
    }
    fn terminal(&self, id: usize) -> Box<dyn isopredict::workloads::Terminal> {
        self.terminals(id + 1).pop().unwrap()
    }
    fn terminals(&self, count: usize) -> Vec<Box<dyn isopredict::workloads::Terminal>> {
        self.inner
            .terminals(count)
            .into_iter()
            .enumerate()
            .map(|(t, inner)| {
                Box::new(AbortingTerminal {
                    inner,
                    aborts: self
                        .aborts
                        .iter()
                        .filter(|a| a.0 == t)
                        .map(|a| a.1)
                        .collect(),
                    calls: 0,
                }) as Box<dyn isopredict::workloads::Terminal>
            })
            .collect()
    }
    fn invariants(
        &self,
        state: &mut isopredict::store::Snapshot<'_>,
    ) -> Vec<isopredict::workloads::InvariantCheck> {
        self.inner.invariants(state)
    }
}
