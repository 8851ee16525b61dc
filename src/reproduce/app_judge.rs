//! Judging an application's reproducer run (`reproduce/app.rs`): the history the probes
//! show — the anomaly's transactions, each read from the writer whose marker it printed — is
//! given to the decision core. "Reproduced" only when the run went through, every read the
//! anomaly needs printed its predicted writer, the final state holds the writes the schedule
//! commits last, and that history is unserializable.

use std::time::Duration;

use rustc_hash::FxHashMap;

use super::app_run::{Ran, RunPlan};
use super::minimize::Minimized;
use super::{ReadOutcome, ReproVerdict, Reproduction};
use crate::check::Level;
use crate::history::{BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, TxnId};
use crate::verdict::{decide, EvidenceChoice, Input, Limits, Outcome};

/// Fills `out`'s reads, failure, verdict and summary from `ran`.
pub fn judge(
    out: &mut Reproduction,
    core: &Minimized,
    plan: &RunPlan,
    ran: Ran,
    timeout: Option<Duration>,
) {
    out.database = ran.database.clone();
    let mut got_of_op: FxHashMap<u32, String> = FxHashMap::default();
    for (i, step) in plan.steps.iter().enumerate() {
        let printed = ran.probes.get(i);
        for r in &step.reads {
            let got = printed.and_then(|rows| {
                rows.iter()
                    .find(|(k, _)| *k == r.key)
                    .map(|(_, w)| w.clone())
            });
            if let Some(g) = &got {
                for &o in &r.ops {
                    got_of_op.insert(o, g.clone());
                }
            }
            out.anomaly_reads.push(ReadOutcome {
                txn: step.txn_label.clone(),
                key: r.key.clone(),
                predicted: r.expect.clone(),
                got,
            });
        }
        if step.reads.is_empty() {
            continue;
        }
        out.spec_probes.extend(
            step.reads
                .iter()
                .map(|r| (step.name.clone(), r.key.clone(), r.expect.clone())),
        );
    }
    out.reads_compared = out.anomaly_reads.len();
    out.differing_reads = out
        .anomaly_reads
        .iter()
        .filter(|r| !r.matches())
        .cloned()
        .collect();
    out.failure = ran.failure.clone();
    if out.failure.is_none() {
        let lost: Vec<String> = plan
            .final_writers
            .iter()
            .filter_map(|&(k, ref want)| {
                let key = &plan.initial[k as usize].0;
                let got = ran.final_state.iter().find(|(n, _)| n == key)?;
                (got.1 != *want).then(|| {
                    format!(
                        "the final state holds {}'s write of {key}, not {want}'s",
                        got.1
                    )
                })
            })
            .collect();
        if !lost.is_empty() {
            out.failure = Some(lost.join("; "));
        }
    }
    let version = out
        .database
        .as_deref()
        .map(|d| d.split(" at ").next().unwrap_or(d).to_string())
        .unwrap_or_else(|| "the database".to_string());
    let serializable = if out.failure.is_none() && out.differing_reads.is_empty() {
        judged(core, plan, &got_of_op, timeout)
    } else {
        Outcome::Unknown
    };
    (out.verdict, out.summary) = verdict_and_summary(out, serializable, &version);
}

/// The verdict and its sentence.
fn verdict_and_summary(
    out: &Reproduction,
    serializable: Outcome,
    version: &str,
) -> (ReproVerdict, String) {
    let isolation = out.isolation;
    let anomaly = out
        .anomaly
        .clone()
        .unwrap_or_else(|| "an unserializable execution".into());
    if out.failure.is_none() && out.differing_reads.is_empty() && serializable == Outcome::Violated
    {
        (
            ReproVerdict::Reproduced,
            format!(
                "Reproduced on {version} at {} with the application's own statements: {anomaly} \
                 — all {} reads the anomaly needs saw their predicted writers (each read's \
                 probe printed the writing transaction), and the history they show is \
                 unserializable.",
                isolation.sql(),
                out.reads_compared
            ),
        )
    } else if out.failure.is_none() && out.differing_reads.is_empty() {
        match serializable {
            Outcome::Consistent => (
                ReproVerdict::NotReproduced,
                format!(
                    "Not reproduced on {version} at {}: the history the reads show is serializable.",
                    isolation.sql()
                ),
            ),
            _ => (
                ReproVerdict::Unknown,
                format!(
                    "Unknown: every read got its predicted writer on {version} at {}, but whether \
                     the history is serializable is undecided.",
                    isolation.sql()
                ),
            ),
        }
    } else {
        let mut why = Vec::new();
        if let Some(f) = &out.failure {
            why.push(f.clone());
        }
        if let Some(d) = out.differing_reads.first() {
            why.push(format!(
                "{} of the {} reads the anomaly needs saw another write (first: {} read {} from {} instead of {})",
                out.differing_reads.len(),
                out.reads_compared,
                d.txn,
                d.key,
                d.got.as_deref().unwrap_or("nothing (it did not run)"),
                d.predicted
            ));
        }
        let verdict =
            if out.failure.as_deref().is_some_and(|f| {
                f.contains("could not be rebuilt") || f.starts_with("cannot connect")
            }) {
                ReproVerdict::Unknown
            } else {
                ReproVerdict::NotReproduced
            };
        let head = if verdict == ReproVerdict::Unknown {
            "Unknown"
        } else {
            "Not reproduced"
        };
        (
            verdict,
            format!(
                "{head} on {version} at {}: {}.",
                isolation.sql(),
                why.join("; ")
            ),
        )
    }
}

/// The core's transactions with each read from the writer its probe printed (own name: its
/// own write; another transaction of the core: that one; the rebuilt row's writer: the
/// initial state), decided at serializability.
fn judged(
    core: &Minimized,
    plan: &RunPlan,
    got: &FxHashMap<u32, String>,
    timeout: Option<Duration>,
) -> Outcome {
    let h = &core.history;
    let by_label: FxHashMap<&str, TxnId> = plan
        .steps
        .iter()
        .map(|s| (s.txn_label.as_str(), s.txn))
        .collect();
    let Some(seen) = history_seen(h, plan, got, &by_label) else {
        return Outcome::Unknown;
    };
    let Ok(input) = Input::of(&seen) else {
        return Outcome::Unknown;
    };
    let limits = Limits {
        timeout,
        explain: false,
        ..Limits::default()
    };
    decide(&input, Level::Serializable, EvidenceChoice::Auto, &limits)
        .map_or(Outcome::Unknown, |v| v.verdict)
}

fn history_seen(
    h: &History,
    plan: &RunPlan,
    got: &FxHashMap<u32, String>,
    by_label: &FxHashMap<&str, TxnId>,
) -> Option<History> {
    let mut b = HistoryBuilder::new("the reproducer's reads");
    let keys: Vec<u32> = (0..h.key_count() as u32)
        .map(|k| b.key(h.key_name(k)))
        .collect();
    let sessions: Vec<_> = h
        .sessions()
        .iter()
        .map(|s| b.session(s.external_id))
        .collect();
    let mut txns: Vec<Option<BuilderTxn>> = vec![None; h.txn_count()];
    for t in 1..h.txn_count() as TxnId {
        let bt = b.begin(sessions[h.txn(t).session as usize], None);
        if !h.txn(t).is_committed() {
            b.abort(bt);
        }
        txns[t as usize] = Some(bt);
    }
    for t in 1..h.txn_count() as TxnId {
        let bt = txns[t as usize]?;
        for o in h.txn(t).ops() {
            let op = h.op(o);
            let k = keys[op.key as usize];
            match op.kind {
                OpKind::Write => b.write(bt, k, None, 0),
                OpKind::Read => {
                    let label = got.get(&o)?;
                    let from = match by_label.get(label.as_str()) {
                        Some(&w) => ReadFrom::Txn(txns[w as usize]?),
                        None if *label == plan.initial[op.key as usize].2 => ReadFrom::Initial,
                        None => return None,
                    };
                    b.read(bt, k, None, from, 0);
                }
            }
        }
    }
    b.build().ok()
}
