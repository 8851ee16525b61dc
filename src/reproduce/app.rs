//! Reproducing an application's predicted anomaly on PostgreSQL with its own statements
//! (`isopredict reproduce DIR` on a folder of `isopredict test` or `record`; issue 33;
//! docs/testing-apps.md, "Reproducing on PostgreSQL"):
//!
//! 1. the prediction (the folder's `predicted.json`, or predicted here at the level the
//!    isolation level allows: rc at read committed, si above), each operation with the
//!    statement the recording server saw make it;
//! 2. the anomaly's transactions ([`super::minimize`], the decision core deciding) and a
//!    schedule whose steps are whole statements ([`super::schedule::schedule_statements`],
//!    the rules of `reproduce/schedule.rs`);
//! 3. on the database, in a private schema: the recorded schema, marker columns and triggers
//!    ([`super::app_sql`]), the rows the anomaly reads rebuilt by replaying the transactions of
//!    the recording that wrote them (checked by their markers); then the anomaly's statements
//!    in the schedule's order, one connection per session, each statement that reads preceded
//!    by a probe of the markers of what it reads ([`super::app_run`]);
//! 4. the history the probes show — the anomaly's transactions with the writers the database
//!    gave — judged by the decision core; the files ([`super::app_files`]).
//!
//! The statements run with the parameters the application sent: those of the replay along the
//! prediction when `test` validated it (the values the application computed from the
//! predicted reads), else the recorded ones; the README names the statements that came after
//! a read the prediction changes, whose values the application may have computed otherwise.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::{FxHashMap, FxHashSet};

use super::app_run::{self, AppStep, ProbeRead, RunPlan};
use super::app_sql::{self, KeyRef, NO_ROW};
use super::minimize::{minimize_runnable, Minimized};
use super::schedule::{schedule_statements, Schedule, StepKind};
use super::{ReproVerdict, Reproduction};
use crate::check::Level;
use crate::history::{
    History, KeyId, OpId, OpKind, SqlStatement, StatementTable, TxnId, INITIAL_TXN, NO_STATEMENT,
};
use crate::store::postgres::Postgres;
use crate::store::Isolation;

/// What an application's folder holds.
pub struct AppFolder {
    /// `observed.json`: the recorded run, with its statements.
    pub observed: History,
    /// `predicted.json` (`test` folders).
    pub predicted: Option<History>,
    /// `validating.json` when `test`'s replay followed the prediction: the statements the
    /// application sent along it.
    pub validating: Option<History>,
    /// Where it came from, for the README.
    pub origin: String,
    /// The name `test` gave the anomaly.
    pub anomaly: Option<String>,
    /// The level `test` predicted at.
    pub level: Option<Level>,
}

/// Whether `dir` is an application's folder (an `observed.json` with SQL statements, and no
/// `run` report naming a workload).
pub fn is_app_folder(dir: &Path) -> bool {
    // Only regular files are opened: a FIFO would block (the `run` path says so).
    let regular = |name: &str| std::fs::metadata(dir.join(name)).is_ok_and(|m| m.is_file());
    if dir.join("report.json").exists() && !regular("report.json") {
        return false;
    }
    let report = std::fs::read_to_string(dir.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    if report.as_ref().is_some_and(|r| r.get("workload").is_some()) {
        return false;
    }
    regular("observed.json")
}

fn read_history(path: &Path) -> Result<History, String> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => return Err(format!("{}: not a regular file", path.display())),
        _ => {}
    }
    crate::formats::read_file(path, None).map_err(|e| e.to_string())
}

/// Reads an application's folder; errors name the file and the problem.
pub fn load_app_dir(dir: &Path) -> Result<AppFolder, String> {
    let observed_path = dir.join("observed.json");
    let observed = read_history(&observed_path)?;
    if observed.statements().is_none() {
        return Err(format!(
            "{}: no SQL statements (not recorded by isopredict record, serve or test)",
            observed_path.display()
        ));
    }
    let report_path = dir.join("report.json");
    if std::fs::metadata(&report_path).is_ok_and(|m| !m.is_file()) {
        return Err(format!("{}: not a regular file", report_path.display()));
    }
    let report: Option<serde_json::Value> = match std::fs::read_to_string(&report_path) {
        Ok(t) => Some(
            serde_json::from_str(&t)
                .map_err(|e| format!("{}: not JSON: {e}", report_path.display()))?,
        ),
        Err(_) => None,
    };
    let first = report
        .as_ref()
        .and_then(|r| r.get("anomalies"))
        .and_then(|a| a.get(0));
    let text = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).map(str::to_string);
    let predicted_path = dir.join("predicted.json");
    let predicted = if predicted_path.exists() {
        Some(read_history(&predicted_path)?)
    } else {
        None
    };
    let followed = text(first.and_then(|a| a.get("replay"))).as_deref() == Some("validated");
    let validating_path = dir.join("validating.json");
    let validating = if followed && predicted.is_some() && validating_path.exists() {
        Some(read_history(&validating_path)?)
    } else {
        None
    };
    let command = text(report.as_ref().and_then(|r| r.get("command")));
    let level = text(report.as_ref().and_then(|r| r.get("level")));
    let origin = match (&command, &level) {
        (Some(c), Some(l)) => format!("`isopredict test -- {c}`, predicted at {l}"),
        _ => format!("the recording {}", observed_path.display()),
    };
    Ok(AppFolder {
        observed,
        predicted,
        validating,
        origin,
        anomaly: text(first.and_then(|a| a.get("name"))),
        level: level.and_then(|l| crate::pipeline::parse_level(&l).ok()),
    })
}

/// The isolation level a folder's prediction is for: read committed for rc, repeatable read
/// for si (`None`: it must be given).
pub fn isolation_of(folder: &AppFolder) -> Option<Isolation> {
    match folder.level? {
        Level::ReadCommitted => Some(Isolation::ReadCommitted),
        Level::Snapshot => Some(Isolation::RepeatableRead),
        _ => None,
    }
}

/// What to reproduce, where.
pub struct AppRequest<'a> {
    /// The folder.
    pub folder: &'a AppFolder,
    /// The database.
    pub postgres: &'a Postgres,
    /// The isolation level to reproduce at.
    pub isolation: Isolation,
    /// Budget of each check and of a prediction.
    pub timeout: Option<Duration>,
}

/// A fresh report at `isolation` with `verdict` and `summary`.
fn report(isolation: Isolation, verdict: ReproVerdict, summary: String) -> Reproduction {
    Reproduction::empty(isolation, verdict, summary)
}

/// The prediction to reproduce: the folder's, else one predicted at the level `isolation`
/// allows (rc at read committed, si at repeatable read and serializable — at serializable to
/// say why it cannot happen there). `Err` says why there is none.
fn prediction(request: &AppRequest<'_>) -> Result<History, (ReproVerdict, String)> {
    if let Some(p) = &request.folder.predicted {
        return Ok(p.clone());
    }
    let level = match request.isolation {
        Isolation::ReadCommitted => Level::ReadCommitted,
        _ => Level::Snapshot,
    };
    let h = &request.folder.observed;
    let options =
        crate::predict::PredictOptions::new(level, crate::predict::Strategy::ApproxRelaxed)
            .with_timeout(request.timeout)
            .for_history(h);
    let predicted =
        crate::pipeline::fresh_z3(|| crate::predict::predict(h, &options)).map_err(|e| {
            (
                ReproVerdict::Unknown,
                format!("Unknown: predicting failed: {e}."),
            )
        })?;
    match predicted.verdict {
        crate::predict::Verdict::Predicted => predicted
            .prediction
            .map(|p| p.history)
            .ok_or((ReproVerdict::Unknown, "Unknown: the predictor gave no history.".into())),
        crate::predict::Verdict::NoPrediction => Err((
            ReproVerdict::NotReproducible,
            format!(
                "Nothing to reproduce: no unserializable execution of this recording is allowed at {} ({}).",
                level.full_name(),
                crate::predict::no_prediction_claim(
                    level,
                    crate::predict::Strategy::ApproxRelaxed,
                    "the transactions of this recording"
                )
            ),
        )),
        _ => Err((
            ReproVerdict::Unknown,
            format!(
                "Unknown: the predictor gave up ({}).",
                predicted.reason.as_deref().unwrap_or("no reason given")
            ),
        )),
    }
}

/// The prediction with the recorded statements attached to its operations (a prediction keeps
/// a session's first committed transactions, in order, with their operations), and per
/// predicted transaction the observed one.
fn with_statements(
    observed: &History,
    predicted: &History,
) -> Result<(History, Vec<TxnId>), String> {
    let table = observed.statements().ok_or("no statements")?;
    if observed.sessions().len() != predicted.sessions().len() {
        return Err(format!(
            "the recording has {} sessions, the prediction {}",
            observed.sessions().len(),
            predicted.sessions().len()
        ));
    }
    let mut of_observed = vec![INITIAL_TXN; predicted.txn_count()];
    let mut op_statement = vec![NO_STATEMENT; predicted.ops().len()];
    for (os, ps) in observed.sessions().iter().zip(predicted.sessions()) {
        let mut committed = os.txns().filter(|&t| observed.txn(t).is_committed());
        for p in ps.txns().filter(|&t| predicted.txn(t).is_committed()) {
            let o = committed
                .next()
                .ok_or_else(|| format!("{} is not in the recording", predicted.txn_label(p)))?;
            of_observed[p as usize] = o;
            let (pops, oops) = (predicted.txn(p).ops(), observed.txn(o).ops());
            if pops.len() != oops.len() {
                return Err(format!(
                    "{} has {} operations, the recorded transaction {}",
                    predicted.txn_label(p),
                    pops.len(),
                    oops.len()
                ));
            }
            for (po, oo) in pops.zip(oops) {
                let (a, b) = (predicted.op(po), observed.op(oo));
                if a.kind != b.kind || predicted.key_name(a.key) != observed.key_name(b.key) {
                    return Err(format!(
                        "{}'s operations differ from the recorded transaction's",
                        predicted.txn_label(p)
                    ));
                }
                op_statement[po as usize] = table.op_statements()[oo as usize];
            }
        }
    }
    let attached = StatementTable::new(
        table.session_names().to_vec(),
        table.statements().to_vec(),
        op_statement,
    )
    .with_schema(table.schema().to_vec());
    let h = predicted
        .clone()
        .with_statements(Arc::new(attached))
        .map_err(|e| e.to_string())?;
    Ok((h, of_observed))
}

/// Names of the application's transactions: `teller-1/2` is teller-1's second transaction
/// (committed and aborted counted, as `test` counts them).
struct Names<'a> {
    observed: &'a History,
    of_observed: &'a [TxnId],
}

impl Names<'_> {
    fn observed_txn(&self, o: TxnId) -> String {
        if o == INITIAL_TXN {
            return "initial".into();
        }
        let tx = self.observed.txn(o);
        let session = self
            .observed
            .statements()
            .and_then(|st| st.session_names().get(tx.session as usize))
            .cloned()
            .unwrap_or_else(|| format!("session {}", tx.session + 1));
        format!("{session}/{}", tx.index_in_session + 1)
    }

    /// The name of predicted transaction `p`.
    fn predicted(&self, p: TxnId) -> String {
        self.observed_txn(self.of_observed[p as usize])
    }
}

/// Per operation of the core: the predicted history's operation (`u32::MAX` for none).
fn core_ops(m: &Minimized, ph: &History) -> Vec<OpId> {
    let h = &m.history;
    let names: FxHashSet<&str> = h.key_names().iter().map(String::as_str).collect();
    let mut out = vec![u32::MAX; h.ops().len()];
    for t in 1..h.txn_count() as TxnId {
        let orig = m.origin[t as usize];
        let kept = ph
            .txn(orig)
            .ops()
            .filter(|&o| names.contains(ph.key_name(ph.op(o).key)));
        for (c, o) in h.txn(t).ops().zip(kept) {
            out[c as usize] = o;
        }
    }
    out
}

/// Per operation of the core: its statement's number (unique numbers for none).
fn core_statements(m: &Minimized, ph: &History) -> Vec<u32> {
    let table = ph.statements().expect("attached");
    core_ops(m, ph)
        .iter()
        .enumerate()
        .map(|(c, &o)| match table.op_statements().get(o as usize) {
            Some(&s) if s != NO_STATEMENT => s,
            _ => u32::MAX - c as u32,
        })
        .collect()
}

/// Reproduces the folder's prediction with the application's statements (module docs).
pub fn reproduce_app(request: &AppRequest<'_>) -> Reproduction {
    let Prepared {
        mut out,
        core,
        plan,
        ..
    } = match prepare(request, request.isolation) {
        Ok(p) => p,
        Err(out) => return *out,
    };
    let ran = app_run::run(request.postgres, &plan);
    super::app_judge::judge(&mut out, &core, &plan, ran, request.timeout);
    out.files = super::app_files::files(&plan, &out, &request.folder.origin);
    out
}

/// A reproduction ready to run: the report so far (the anomaly named), the anomaly's
/// transactions, the run's plan, and per predicted transaction the recorded one.
pub(super) struct Prepared {
    pub out: Reproduction,
    pub core: Minimized,
    pub plan: RunPlan,
    pub of_observed: Vec<TxnId>,
}

/// Steps 1 and 2 of the module docs, the schedule made by the rules of `schedule_isolation`
/// (the level the run is at, or for the application itself on a stronger level, the
/// prediction's: the database then says why it cannot run so). `Err`: the report saying why
/// there is nothing to run.
pub(super) fn prepare(
    request: &AppRequest<'_>,
    schedule_isolation: Isolation,
) -> Result<Prepared, Box<Reproduction>> {
    let isolation = request.isolation;
    let folder = request.folder;
    let predicted = match prediction(request) {
        Ok(p) => p,
        Err((verdict, why)) => return Err(Box::new(report(isolation, verdict, why))),
    };
    let (ph, of_observed) = match with_statements(&folder.observed, &predicted) {
        Ok(x) => x,
        Err(e) => {
            return Err(Box::new(report(
                isolation,
                ReproVerdict::Unknown,
                format!("The prediction does not fit the recording: {e}."),
            )))
        }
    };
    let names = Names {
        observed: &folder.observed,
        of_observed: &of_observed,
    };
    let mut runnable = |m: &Minimized| {
        schedule_statements(&m.history, schedule_isolation, &core_statements(m, &ph)).is_ok()
    };
    let Some(core) = minimize_runnable(&ph, &mut runnable) else {
        return Err(Box::new(report(
            isolation,
            ReproVerdict::Unknown,
            "Nothing to reproduce: the decision core does not find the predicted history \
             unserializable (or cannot decide)."
                .into(),
        )));
    };
    let mut out = report(isolation, ReproVerdict::Unknown, String::new());
    out.run_anomaly = folder.anomaly.clone();
    out.transactions = core.origin[1..]
        .iter()
        .map(|&t| names.predicted(t))
        .collect();
    let statement_of = core_statements(&core, &ph);
    let schedule = match schedule_statements(&core.history, schedule_isolation, &statement_of) {
        Ok(s) => s,
        Err(no) => {
            let reason = core.relabel_with(&no.reason, &|t| names.predicted(t));
            out.verdict = if no.gave_up {
                ReproVerdict::Unknown
            } else {
                ReproVerdict::NotReproducible
            };
            out.summary = format!(
                "Not reproducible at {}: the anomaly's transactions ({}) cannot run so that each \
                 of their reads sees its predicted writer — {reason}.",
                isolation.sql(),
                out.transactions.join(", ")
            );
            out.no_schedule = Some(reason);
            return Err(Box::new(out));
        }
    };
    let plan = match plan_run(&core, &ph, &names, &schedule, folder) {
        Ok(p) => p,
        Err(e) => {
            out.summary = format!("Unknown: the reproducer cannot be built: {e}.");
            return Err(Box::new(out));
        }
    };
    name_core_anomaly(&mut out, &core, &names, isolation);
    out.schedule = Some(app_run::schedule_text(&plan));
    Ok(Prepared {
        out,
        core,
        plan,
        of_observed,
    })
}

/// The anomaly of the core, named as `test` names predictions (a view of
/// [`crate::pipeline::name_anomaly`], not a classifier of its own), in the application's
/// transactions.
fn name_core_anomaly(
    out: &mut Reproduction,
    core: &Minimized,
    names: &Names<'_>,
    isolation: Isolation,
) {
    if isolation == Isolation::Serializable {
        return;
    }
    let h = &core.history;
    // The initial state of the core is the versions rebuilt from the recording.
    let mut loaded: Vec<String> = core
        .initial_writer
        .iter()
        .flatten()
        .map(|&w| names.predicted(w))
        .collect();
    loaded.sort();
    loaded.dedup();
    let initial = match loaded.as_slice() {
        [one] => one.clone(),
        _ => "the rows loaded first".to_string(),
    };
    let label = |t: TxnId| {
        if t == INITIAL_TXN {
            initial.clone()
        } else {
            names.predicted(core.origin[t as usize])
        }
    };
    let named =
        crate::pipeline::name_anomaly(h, isolation.promised_level(), &label, &|_| None, &|k| {
            h.key_name(k).to_string()
        });
    out.anomaly = Some(named.id.name().to_string());
    out.anomaly_description = Some(named.description);
    out.run_anomaly = out
        .run_anomaly
        .take()
        .filter(|run| out.anomaly.as_deref() != Some(run.as_str()));
}

/// The statement `st` with the parameters to send: the replay's along the prediction when it
/// sent the same statement there (`true`), else the recorded ones.
fn parameters<'a>(
    st: &'a SqlStatement,
    observed: &History,
    validating: Option<&'a History>,
) -> (&'a [Option<String>], bool) {
    let replayed = validating.and_then(|v| {
        let id = observed.sessions()[st.session].external_id;
        let s = v.sessions().iter().position(|s| s.external_id == id)?;
        v.statements()?
            .statements()
            .iter()
            .find(|r| r.session == s && r.index == st.index && r.sql == st.sql)
    });
    match replayed {
        Some(r) => (&r.params, r.params != st.params),
        None => (&st.params, false),
    }
}

/// Everything the run and the files need (see [`RunPlan`]).
fn plan_run(
    core: &Minimized,
    ph: &History,
    names: &Names<'_>,
    schedule: &Schedule,
    folder: &AppFolder,
) -> Result<RunPlan, String> {
    let h = &core.history;
    let table = ph.statements().expect("attached");
    let ops = core_ops(core, ph);
    let statement_of = core_statements(core, ph);
    let label = |t: TxnId| names.predicted(core.origin[t as usize]);
    let initial_label = |k: u32| match core.initial_writer[k as usize] {
        Some(w) => names.predicted(w),
        None => NO_ROW.to_string(),
    };
    let mut keys: Vec<KeyRef> = Vec::with_capacity(h.key_count());
    for k in 0..h.key_count() as u32 {
        let name = h.key_name(k);
        keys.push(
            KeyRef::parse(name).ok_or_else(|| {
                format!("{name} is not a row or cell of a table with a primary key")
            })?,
        );
    }
    // Per core transaction: its statements (all of them, in order) and how many have run.
    let txn_statements: Vec<Vec<u32>> = (0..h.txn_count() as TxnId)
        .map(|t| {
            if t == INITIAL_TXN {
                return Vec::new();
            }
            let mut v: Vec<u32> = Vec::new();
            for o in ph.txn(core.origin[t as usize]).ops() {
                let s = table.op_statements()[o as usize];
                if s != NO_STATEMENT && !v.contains(&s) {
                    v.push(s);
                }
            }
            v
        })
        .collect();
    let mut cursor = vec![0usize; h.txn_count()];
    let mut count = vec![0usize; h.sessions().len()];
    let mut steps = Vec::new();
    let mut computed = Vec::new();
    let sql_of = |s: u32, computed: &mut Vec<String>| -> Result<(String, String), String> {
        let st = &table.statements()[s as usize];
        let (params, changed) = parameters(st, &folder.observed, folder.validating.as_ref());
        let words = crate::pipeline::statement_words(&SqlStatement {
            params: params.to_vec(),
            ..st.clone()
        });
        if changed {
            computed.push(words.clone());
        }
        let sql = app_sql::inline_params(&st.sql, params)
            .ok_or_else(|| format!("{words} lacks a parameter"))?;
        Ok((sql.trim().trim_end_matches(';').to_string() + ";", words))
    };
    for &step in &schedule.steps {
        let t = step.txn;
        let tx = h.txn(t);
        let s = tx.session as usize;
        count[s] += 1;
        let upto = match step.kind {
            StepKind::Op(i) => {
                let sn = statement_of[(tx.ops().start + i) as usize];
                txn_statements[t as usize]
                    .iter()
                    .position(|&x| x == sn)
                    .map_or(cursor[t as usize], |p| p + 1)
            }
            StepKind::End => txn_statements[t as usize].len(),
        };
        let mut sql = Vec::new();
        let mut words = Vec::new();
        let statements =
            txn_statements[t as usize][cursor[t as usize]..upto.max(cursor[t as usize])].to_vec();
        for &sn in &statements {
            let (q, w) = sql_of(sn, &mut computed)?;
            sql.push(q);
            words.push(w);
        }
        cursor[t as usize] = upto.max(cursor[t as usize]);
        let reads = probe_reads(core, ph, names, &statement_of, &ops, step);
        let end = match step.kind {
            StepKind::End => Some(tx.is_committed()),
            StepKind::Op(_) => None,
        };
        let next = (step.kind == StepKind::End && h.sessions()[s].txns().end - 1 != t)
            .then(|| label(t + 1));
        steps.push(AppStep {
            name: format!("s{}_{}", s + 1, count[s]),
            session: s,
            txn: t,
            txn_label: label(t),
            sql,
            words,
            statements,
            reads,
            end,
            next,
        });
    }
    let setup = setup_txns(core, names, &keys)?;
    let schema = table.schema().to_vec();
    let tables = app_sql::tables_of(&schema);
    if tables.is_empty() {
        return Err("the recording kept no CREATE TABLE statement (recorded before isopredict kept the schema, or the tables existed before the recording)".into());
    }
    let sessions: Vec<(String, String)> = (0..h.sessions().len())
        .map(|s| {
            let first = h.sessions()[s].txns().start;
            let name = table
                .session_names()
                .get(ph.txn(core.origin[first as usize]).session as usize)
                .cloned()
                .unwrap_or_else(|| format!("session {}", s + 1));
            (name, label(first))
        })
        .collect();
    let initial: Vec<(String, KeyRef, String)> = (0..h.key_count() as u32)
        .map(|k| {
            (
                h.key_name(k).to_string(),
                keys[k as usize].clone(),
                initial_label(k),
            )
        })
        .collect();
    let final_writers = final_writers(h, schedule, &label);
    Ok(RunPlan {
        isolation: schedule.isolation,
        schema,
        tables,
        setup,
        initial,
        sessions,
        steps,
        final_writers,
        computed,
        later: later_statements(core, ph, names, &ops, folder.validating.as_ref()),
    })
}

/// The reads of schedule step `step` its probe shows: per key, what it must print.
fn probe_reads(
    core: &Minimized,
    ph: &History,
    names: &Names<'_>,
    statement_of: &[u32],
    ops: &[OpId],
    step: super::Step,
) -> Vec<ProbeRead> {
    let h = &core.history;
    let mut reads: Vec<ProbeRead> = Vec::new();
    for o in schedule_step_ops(h, statement_of, step) {
        let op = h.op(o);
        if op.kind != OpKind::Read {
            continue;
        }
        let expect = match h.writer_txn(o).unwrap_or(INITIAL_TXN) {
            INITIAL_TXN => match core.initial_writer[op.key as usize] {
                Some(w) => names.predicted(w),
                None => NO_ROW.to_string(),
            },
            w => names.predicted(core.origin[w as usize]),
        };
        let key = h.key_name(op.key).to_string();
        if let Some(r) = reads.iter_mut().find(|r| r.key == key) {
            r.ops.push(o);
            continue;
        }
        reads.push(ProbeRead {
            key,
            expect,
            ops: vec![o],
            changed: changed_read(ph, names, ops[o as usize]),
        });
    }
    reads
}

/// The operations of a schedule step (its statement's, consecutive in its transaction).
fn schedule_step_ops(h: &History, statement_of: &[u32], step: super::Step) -> Vec<OpId> {
    let ops = h.txn(step.txn).ops();
    let StepKind::Op(i) = step.kind else {
        return Vec::new();
    };
    let first = ops.start + i;
    (first..ops.end)
        .take_while(|&o| statement_of[o as usize] == statement_of[first as usize])
        .collect()
}

/// Whether predicted read `o` (of `ph`) reads from another writer than the recording.
fn changed_read(ph: &History, names: &Names<'_>, o: OpId) -> bool {
    let observed = names.observed;
    if o == u32::MAX {
        return false;
    }
    let t = ph.op(o).txn;
    let obs_txn = names.of_observed[t as usize];
    let index = o - ph.txn(t).ops().start;
    let oo = observed.txn(obs_txn).ops().start + index;
    let predicted_writer = ph.writer_txn(o).map(|w| names.predicted(w));
    let observed_writer = observed.writer_txn(oo).map(|w| names.observed_txn(w));
    predicted_writer != observed_writer
}

/// Per key the core writes: the transaction whose write the final state must hold (the last to
/// commit a write of it in the schedule), in key order.
fn final_writers(
    h: &History,
    schedule: &Schedule,
    label: &dyn Fn(TxnId) -> String,
) -> Vec<(KeyId, String)> {
    let mut last: FxHashMap<KeyId, TxnId> = FxHashMap::default();
    for step in &schedule.steps {
        if step.kind == StepKind::End && h.txn(step.txn).is_committed() {
            for &k in h.keys_written(step.txn) {
                last.insert(k, step.txn);
            }
        }
    }
    let mut out: Vec<(KeyId, String)> = last.into_iter().map(|(k, t)| (k, label(t))).collect();
    out.sort_unstable();
    out
}

/// The transactions of the recording replayed before the anomaly to rebuild the versions it
/// reads: each key's writer whose version the anomaly's transactions read from outside them
/// ([`Minimized::initial_writer`]), and the inserter of every row they read, in an order of the
/// recording's commits (a witness serial order of the observed run; transaction order when
/// the core gives none). Each as (name, its statements with parameters written in).
fn setup_txns(
    core: &Minimized,
    names: &Names<'_>,
    keys: &[KeyRef],
) -> Result<Vec<(String, Vec<String>)>, String> {
    let observed = names.observed;
    let table = observed.statements().expect("statements");
    let mut wanted: FxHashSet<TxnId> = core
        .initial_writer
        .iter()
        .flatten()
        .map(|&w| names.of_observed[w as usize])
        .collect();
    // The inserter of each row read: the first committed writer of its existence key.
    let rows: FxHashSet<String> = keys
        .iter()
        .enumerate()
        .filter(|(k, _)| core.initial_writer[*k].is_some())
        .map(|(_, k)| {
            format!(
                "{}[{}]",
                k.table,
                k.row
                    .iter()
                    .map(|(c, v)| format!("{c}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect();
    let order = recording_order(observed);
    for row in &rows {
        let Some(k) = observed.key_names().iter().position(|n| n == row) else {
            continue;
        };
        let first = order
            .iter()
            .copied()
            .find(|&t| observed.keys_written(t).contains(&(k as KeyId)));
        wanted.extend(first);
    }
    let mut out = Vec::new();
    for t in order.into_iter().filter(|t| wanted.contains(t)) {
        let mut statements: Vec<u32> = Vec::new();
        for o in observed.txn(t).ops() {
            let s = table.op_statements()[o as usize];
            if s != NO_STATEMENT && !statements.contains(&s) {
                statements.push(s);
            }
        }
        let mut sql = Vec::new();
        for s in statements {
            let st = &table.statements()[s as usize];
            let q = app_sql::inline_params(&st.sql, &st.params)
                .ok_or_else(|| format!("`{}` lacks a parameter", st.sql))?;
            sql.push(q.trim().trim_end_matches(';').to_string() + ";");
        }
        out.push((names.observed_txn(t), sql));
    }
    Ok(out)
}

/// The recording's committed transactions in a serial order its reads allow.
pub(super) fn recording_order(observed: &History) -> Vec<TxnId> {
    let limits = crate::verdict::Limits {
        timeout: Some(Duration::from_secs(10)),
        ..crate::verdict::Limits::default()
    };
    let committed: Vec<TxnId> = observed
        .committed_txns()
        .filter(|&t| t != INITIAL_TXN)
        .collect();
    match crate::verdict::witness_commit_order(observed, Level::Snapshot, &limits).order() {
        Some(order) => order.into_iter().filter(|&t| t != INITIAL_TXN).collect(),
        None => committed,
    }
}

/// Per transaction of the anomaly that reads something the prediction changes: the statements
/// after that read (with their parameters), whose values the application may have computed
/// from it.
fn later_statements(
    core: &Minimized,
    ph: &History,
    names: &Names<'_>,
    ops: &[OpId],
    validating: Option<&History>,
) -> Vec<(String, String, Vec<String>)> {
    let h = &core.history;
    let table = ph.statements().expect("attached");
    let mut out = Vec::new();
    for t in 1..h.txn_count() as TxnId {
        let Some(c) = h
            .txn(t)
            .ops()
            .find(|&c| h.op(c).kind == OpKind::Read && changed_read(ph, names, ops[c as usize]))
        else {
            continue;
        };
        let o = ops[c as usize];
        let read_statement = table.op_statements()[o as usize];
        let mut later: Vec<u32> = Vec::new();
        let mut after = false;
        for p in ph.txn(core.origin[t as usize]).ops() {
            let s = table.op_statements()[p as usize];
            if s == read_statement {
                after = true;
                continue;
            }
            if after && s != NO_STATEMENT && !later.contains(&s) {
                later.push(s);
            }
        }
        let words = later
            .into_iter()
            .map(|s| {
                let st = &table.statements()[s as usize];
                let (params, computed) = parameters(st, names.observed, validating);
                let sent = crate::pipeline::statement_words(&SqlStatement {
                    params: params.to_vec(),
                    ..st.clone()
                });
                if computed {
                    format!(
                        "{sent} (the application computed these along the prediction; \
                         recorded: {})",
                        crate::pipeline::statement_words(st)
                    )
                } else {
                    sent
                }
            })
            .collect();
        out.push((
            names.predicted(core.origin[t as usize]),
            format!(
                "{} in {}",
                h.key_name(h.op(c).key),
                crate::pipeline::statement_words(&table.statements()[read_statement as usize])
            ),
            words,
        ));
    }
    out
}
