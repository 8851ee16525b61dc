//! Text and JSON renderings of a [`PredictOutcome`] (the `isopredict predict` output;
//! docs/prediction.md "Reading a prediction").

use std::fmt;

use super::{PredictOutcome, Prediction, Strategy, Verdict};
use crate::check::Level;
use crate::formats::{self, Format};

impl fmt::Display for PredictOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "prediction at {} ({}), strategy {}",
            self.level.full_name(),
            self.level,
            self.strategy
        )?;
        match self.verdict {
            Verdict::ObservedViolation => {
                writeln!(
                    f,
                    "the observed history itself violates {}: nothing to predict",
                    self.level.full_name()
                )?;
                if let Some(report) = &self.observed {
                    write!(f, "{report}")?;
                } else if let Some(reason) = &self.reason {
                    writeln!(f, "{reason}")?;
                }
                return Ok(());
            }
            Verdict::ObservedUnserializable => {
                return writeln!(
                    f,
                    "the observed execution itself is unserializable (and valid under {}): it is \
                     its own anomaly, nothing to predict",
                    self.level.full_name()
                );
            }
            Verdict::NoPrediction => writeln!(
                f,
                "no prediction: {}",
                no_prediction_claim(
                    self.level,
                    self.strategy,
                    "the transactions of this history"
                )
            )
            .and_then(|_| match &self.reason {
                Some(why) => writeln!(f, "why: {why}"),
                None => Ok(()),
            })?,
            Verdict::Unknown => match self.reason.as_deref() {
                Some("timeout") => writeln!(
                    f,
                    "unknown: timeout (the time limit ran out; give more with --timeout SECS, \
                     0 for no limit)"
                )?,
                Some(why) if why.starts_with("timeout ") => writeln!(
                    f,
                    "unknown: {why} (the time limit ran out; give more with --timeout SECS, \
                     0 for no limit)"
                )?,
                reason => writeln!(f, "unknown: {}", reason.unwrap_or("the solver gave up"))?,
            },
            Verdict::Predicted => {}
        }
        if let Some(p) = &self.prediction {
            self.fmt_prediction(p, f)?;
        }
        self.fmt_encoding(f)
    }
}

impl PredictOutcome {
    /// The prediction: its boundaries, its anomaly's transactions, the reads that change
    /// writer, the cycle and the predicted history's size.
    fn fmt_prediction(&self, p: &Prediction, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "PREDICTED: an unserializable execution valid under {} (re-verified)",
            self.level.full_name()
        )?;
        if let Some(note) = &self.reason {
            writeln!(f, "note: {note}")?;
        }
        fmt_boundaries(p, f)?;
        if let Some(core) = &p.core {
            writeln!(
                f,
                "the anomaly{}: {} (the fewest transactions of the prediction that still \
                 show it; the cycle below goes through exactly these)",
                if core.minimal {
                    ""
                } else {
                    " (not minimised: time ran out)"
                },
                core.txn_labels.join(", ")
            )?;
        }
        fmt_changed_reads(p, f)?;
        fmt_cycle(p, f)?;
        let stats = p.history.stats();
        writeln!(
            f,
            "predicted history: {} sessions, {} transactions, {} reads, {} writes",
            stats.sessions, stats.committed, stats.reads, stats.writes
        )?;
        Ok(())
    }

    /// The size of the encoding and where the time went.
    fn fmt_encoding(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        writeln!(
            f,
            "encoding: {} transactions, {} read choices ({} open), {} assertions, {} literals{}",
            s.nodes,
            s.choices,
            s.open_choices,
            s.encoding.assertions,
            s.encoding.literals,
            match (s.rounds, s.instances) {
                (Some(r), _) => format!(", {}", plural(r, "round", "rounds") + " of pco"),
                (None, i) if i > 0 =>
                    format!(", {} of the quantifier", plural(i, "instance", "instances")),
                _ => String::new(),
            }
        )?;
        writeln!(
            f,
            "time: generation {:.1} ms, solving {:.1} ms ({}), re-verification {:.1} ms, {}",
            s.generation_ms,
            s.solving_ms,
            plural(s.solver_calls, "call", "calls"),
            s.verification_ms,
            plural(s.rejected_models, "rejected model", "rejected models")
        )
    }
}

/// The prediction boundary of each session.
fn fmt_boundaries(p: &Prediction, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "boundaries:")?;
    for b in &p.boundaries {
        let session = match b.external_id {
            Some(e) => format!("session {} (input id {e})", b.session + 1),
            None => format!("session {}", b.session + 1),
        };
        match (&b.txn_label, b.read) {
            (None, _) => writeln!(
                f,
                "  {session}: none, all {} transactions",
                b.committed_txns
            )?,
            (Some(t), Some(_)) => writeln!(
                f,
                "  {session}: at the read of line {} in {t}; {} of {} transactions, \
                 events after the read excluded",
                b.line.unwrap_or(0),
                b.included_txns,
                b.committed_txns
            )?,
            (Some(t), None) => writeln!(
                f,
                "  {session}: after {t}; {} of {} transactions",
                b.included_txns, b.committed_txns
            )?,
        }
    }
    Ok(())
}

/// The reads that change writer, those that create the anomaly marked when not all do.
fn fmt_changed_reads(p: &Prediction, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if p.changed_reads.is_empty() {
        writeln!(
            f,
            "no read changed: the observed execution itself is unserializable"
        )?;
    } else if p.changed_reads.iter().all(|c| c.in_core) {
        writeln!(f, "changed reads:")?;
    } else {
        writeln!(
            f,
            "changed reads ({} of {} create the anomaly, marked *):",
            p.changed_reads.iter().filter(|c| c.in_core).count(),
            p.changed_reads.len()
        )?;
    }
    let marks = !p.changed_reads.iter().all(|c| c.in_core);
    for c in &p.changed_reads {
        writeln!(
            f,
            "{} line {}: {} reads {} from {} (observed: from {})",
            if marks && c.in_core { " *" } else { "  " },
            c.line,
            c.txn_label,
            c.key,
            c.new_writer_label,
            c.old_writer_label
        )?;
    }
    Ok(())
}

/// Why no serial order exists: the `pco` cycle and the facts its chains go through.
fn fmt_cycle(p: &Prediction, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match &p.cycle {
        Some(cycle) => {
            writeln!(f, "why no serial order exists (a cycle of pco):")?;
            for e in cycle {
                writeln!(
                    f,
                    "  {} -> {} [{}]: {}",
                    e.from_label, e.to_label, e.kind, e.reason
                )?;
            }
            // Session-order facts are self-evident and never cited by number.
            if p.facts.iter().any(|e| e.kind != "so") {
                writeln!(f, "facts the chains above go through:")?;
            }
            // Numbered from 1 among themselves, as the chains cite them
            // (`explain::fact_number`).
            for (i, e) in p.facts.iter().filter(|e| e.kind != "so").enumerate() {
                writeln!(
                    f,
                    "  fact {}: {} -> {} [{}]: {}",
                    i + 1,
                    e.from_label,
                    e.to_label,
                    e.kind,
                    e.reason
                )?;
            }
        }
        None => writeln!(
            f,
            "pco is acyclic; the exact serializability check proves no serial order \
             exists"
        )?,
    }
    Ok(())
}

/// What a "no prediction" answer shows, and only that (`of`: what was searched, e.g. "the
/// transactions of this history" or "the calls of this run"): none of the executions of `of`,
/// cut at a strict or relaxed prediction boundary, each read free to read another
/// write — is valid under `level` and unserializable (exact strategy) or has a cyclic `pco`
/// (approximate strategies, which miss unserializable executions whose `pco` is acyclic).
/// Other runs, other calls or other parameters may still show anomalies.
pub fn no_prediction_claim(level: Level, strategy: Strategy, of: &str) -> String {
    let boundary = match strategy {
        Strategy::ApproxRelaxed => "relaxed",
        _ => "strict",
    };
    let test = match strategy {
        Strategy::ExactStrict => "is unserializable",
        _ => {
            "has a cycle in pco (strategy {strategy} looks only for such executions; an \
             unserializable one with an acyclic pco would be missed)"
        }
    };
    format!(
        "none found under {} with strategy {strategy} and the {boundary} prediction boundary \
         (docs/prediction.md): no execution of {of}, cut at that boundary, is \
         valid under {} and {}. This covers only {of}; other runs, calls or parameters may \
         still show anomalies.",
        level.full_name(),
        level.full_name(),
        test.replace("{strategy}", &strategy.to_string())
    )
}

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl PredictOutcome {
    /// The outcome as JSON (docs/prediction.md), with the predicted history embedded in the
    /// native JSON format under `prediction.history`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).expect("the outcome serializes");
        if let (Some(p), Some(obj)) = (
            &self.prediction,
            value.get_mut("prediction").and_then(|p| p.as_object_mut()),
        ) {
            let mut buf = Vec::new();
            let history = formats::write_to(&p.history, Format::Json, &mut buf)
                .ok()
                .and_then(|_| serde_json::from_slice(&buf).ok())
                .unwrap_or(serde_json::Value::Null);
            obj.insert("history".to_string(), history);
        }
        value
    }
}
