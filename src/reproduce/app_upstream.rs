//! The application itself on PostgreSQL (`isopredict test … --store URL --isolation LEVEL
//! --reproduce`; issue 33 item 3; docs/testing-apps.md, "The application itself on
//! PostgreSQL"): the test command re-run against a real server through the gate of
//! the server's upstream mode ([`crate::server::upstream`]), its statements in the order of the
//! reproduction schedule that `reproduce DIR` computes ([`super::app`]).
//!
//! - **The turns.** Every recorded statement and every transaction's end is a turn of its
//!   session (connections matched as `test`'s replay matches them: `application_name`, else
//!   connection order). The anomaly's transactions run in the schedule's order (whole
//!   statements, the rules of `reproduce/schedule.rs`); every other transaction runs whole,
//!   alone, in a serial order the recording's reads allow: those before the anomaly (up to
//!   the last transaction whose write it reads from outside, and every one its sessions ran
//!   first) before its first statement, the rest after it (one a session must run between
//!   two of the anomaly's statements runs there). Statements the recording did not keep
//!   (schema, SET, BEGIN, catalog queries) run at once, in no turn.
//! - **What each read saw.** Before each statement the schedule says reads, a probe of the
//!   rows it reads prints their `xmin`; each transaction's id is noted before its COMMIT, so
//!   `xmin` names the application's transaction that wrote the version (no marker columns:
//!   the application keeps its own tables, in a private schema on the search path).
//! - **The judgement** is `reproduce DIR`'s ([`super::app_judge`]): "reproduced" only when the
//!   run followed the schedule, every read the anomaly needs saw its predicted writer, the
//!   final state holds the writes the schedule commits last, and that history is
//!   unserializable. A statement PostgreSQL refused (a serialization failure), a path the
//!   application left, a turn that never came (a bounded wait: exit 3, unknown) are said.
//!
//! At a level stronger than the prediction's (serializable for an rc or si prediction) the
//! schedule is the prediction's level's, so that PostgreSQL says what it does with it.

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::{FxHashMap, FxHashSet};

use super::app::{prepare, recording_order, AppFolder, AppRequest, Prepared};
use super::app_run::Ran;
use super::app_sql::{self, KeyRef, NO_ROW};
use super::{ReproVerdict, Reproduction};
use crate::history::{History, OpKind, TxnId, NO_STATEMENT};
use crate::server::client::{client_command, connection_env, exit_code};
use crate::server::gate::{Turn, TurnGate, TurnKind};
use crate::server::upstream::{Observed, Upstream, UpstreamSetup};
use crate::store::postgres::{error_text, Postgres};
use crate::store::Isolation;

/// What to run, where.
pub struct ItselfRequest<'a> {
    /// The `test` folder (its recording and prediction).
    pub folder: &'a AppFolder,
    /// The PostgreSQL URL.
    pub url: &'a str,
    /// The isolation level to run at.
    pub isolation: Isolation,
    /// The test command and the setup commands (`sh -c`), as `test` ran them.
    pub command: &'a [String],
    /// Setup commands.
    pub setup: &'a [String],
    /// How long a statement waits for its turn (and a lock) before the run goes on without
    /// order (reported, unknown).
    pub wait: Duration,
    /// Budget of each check.
    pub timeout: Option<Duration>,
}

/// What the run gave, beside the judgement.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ItselfOutcome {
    /// The judgement (verdict, summary, reads, schedule).
    pub reproduction: Reproduction,
    /// The setup commands' and the test command's exit codes (`None`: it could not run).
    pub exits: Vec<(String, Option<i32>)>,
    /// The turns in the order the gate ran them, in words.
    pub order: Vec<String>,
    /// Where the application left the schedule.
    pub divergences: Vec<String>,
    /// The statements PostgreSQL refused, with its error.
    pub errors: Vec<String>,
    /// The rows the anomaly writes at the end, as PostgreSQL holds them (`col=value, …`).
    pub final_rows: Vec<String>,
    /// Per key the anomaly writes: how many transactions that write it committed in this run
    /// (run one at a time, the final value would hold all their writes).
    pub committed_writers: Vec<(String, usize)>,
}

/// The turns of every recorded transaction: per observed transaction, its statements' turns
/// (by statement number) and its end's.
struct Turns {
    turns: Vec<Turn>,
    of_statement: FxHashMap<(TxnId, u32), usize>,
    end_of: FxHashMap<TxnId, usize>,
    /// Per observed transaction: its turns, in order.
    of_txn: FxHashMap<TxnId, Vec<usize>>,
    /// Per turn: its position among its session's turns.
    pos: Vec<usize>,
}

fn txn_name(observed: &History, t: TxnId) -> String {
    let tx = observed.txn(t);
    let session = observed
        .statements()
        .and_then(|st| st.session_names().get(tx.session as usize))
        .cloned()
        .unwrap_or_else(|| format!("session {}", tx.session + 1));
    format!("{session}/{}", tx.index_in_session + 1)
}

fn turns_of(observed: &History) -> Turns {
    let table = observed.statements().expect("an application's recording");
    let mut out = Turns {
        turns: Vec::new(),
        of_statement: FxHashMap::default(),
        end_of: FxHashMap::default(),
        of_txn: FxHashMap::default(),
        pos: Vec::new(),
    };
    for (s, session) in observed.sessions().iter().enumerate() {
        let name = table
            .session_names()
            .get(s)
            .cloned()
            .unwrap_or_else(|| format!("session {}", s + 1));
        let mut pos = 0;
        for t in session.txns() {
            let label = txn_name(observed, t);
            let mut statements: Vec<u32> = Vec::new();
            for o in observed.txn(t).ops() {
                let st = table.op_statements()[o as usize];
                if st != NO_STATEMENT && !statements.contains(&st) {
                    statements.push(st);
                }
            }
            let mut mine = Vec::new();
            for st in statements {
                out.of_statement.insert((t, st), out.turns.len());
                mine.push(out.turns.len());
                out.turns.push(Turn {
                    session: name.clone(),
                    kind: TurnKind::Statement(table.statements()[st as usize].sql.clone()),
                    txn: label.clone(),
                });
            }
            out.end_of.insert(t, out.turns.len());
            mine.push(out.turns.len());
            out.turns.push(Turn {
                session: name.clone(),
                kind: TurnKind::End,
                txn: label.clone(),
            });
            for _ in &mine {
                out.pos.push(pos);
                pos += 1;
            }
            out.of_txn.insert(t, mine);
        }
    }
    out
}

/// The order the gate runs the turns in (module docs) and per plan step its turns.
fn order_turns(
    observed: &History,
    turns: &Turns,
    prepared: &Prepared,
) -> (Vec<usize>, Vec<Vec<usize>>) {
    let core = &prepared.core;
    let observed_of =
        |core_txn: TxnId| prepared.of_observed[core.origin[core_txn as usize] as usize];
    let steps: Vec<Vec<usize>> = prepared
        .plan
        .steps
        .iter()
        .map(|step| {
            let t = observed_of(step.txn);
            let mut v: Vec<usize> = step
                .statements
                .iter()
                .filter_map(|&st| turns.of_statement.get(&(t, st)).copied())
                .collect();
            if step.end.is_some() {
                v.push(turns.end_of[&t]);
            }
            v
        })
        .collect();
    let core_txns: FxHashSet<TxnId> = (1..core.history.txn_count() as TxnId)
        .map(observed_of)
        .collect();
    // Ranks: the recording's serial order; an aborted transaction right after its session's
    // previous one.
    let mut rank: FxHashMap<TxnId, f64> = FxHashMap::default();
    for (i, t) in recording_order(observed).into_iter().enumerate() {
        rank.insert(t, i as f64);
    }
    for s in observed.sessions() {
        let mut last = -1.0;
        for t in s.txns() {
            let r = *rank.entry(t).or_insert(last + 0.5);
            last = r;
        }
    }
    let reads_from = core
        .initial_writer
        .iter()
        .flatten()
        .map(|&w| rank[&prepared.of_observed[w as usize]])
        .fold(-1.0, f64::max);
    let session_of = |t: TxnId| observed.txn(t).session;
    let index_of = |t: TxnId| observed.txn(t).index_in_session;
    let mut before: Vec<TxnId> = Vec::new();
    let mut after: Vec<TxnId> = Vec::new();
    for t in (1..observed.txn_count() as TxnId).filter(|t| !core_txns.contains(t)) {
        let same = |c: &TxnId| session_of(*c) == session_of(t);
        let precedes_core = core_txns
            .iter()
            .any(|c| same(c) && index_of(*c) > index_of(t));
        let follows_core = core_txns
            .iter()
            .any(|c| same(c) && index_of(*c) < index_of(t));
        if !follows_core && (precedes_core || rank[&t] <= reads_from) {
            before.push(t);
        } else {
            after.push(t);
        }
    }
    let by_rank = |v: &mut Vec<TxnId>| v.sort_by(|a, b| rank[a].total_cmp(&rank[b]));
    by_rank(&mut before);
    by_rank(&mut after);
    let mut e = Emission {
        turns,
        emitted: FxHashMap::default(),
        order: Vec::new(),
    };
    e.drain(&mut before);
    after.append(&mut before);
    by_rank(&mut after);
    for step in &steps {
        let Some(&first) = step.first() else { continue };
        while !e.eligible(first) {
            // The session runs a transaction outside the anomaly first.
            let session = &turns.turns[first].session;
            let Some(p) = after.iter().position(|t| {
                let f = turns.of_txn[t][0];
                turns.turns[f].session == *session && e.eligible(f)
            }) else {
                break;
            };
            let t = after.remove(p);
            e.emit(&turns.of_txn[&t]);
        }
        e.emit(step);
    }
    e.drain(&mut after);
    for t in after {
        e.emit(&turns.of_txn[&t]);
    }
    (e.order, steps)
}

/// The turns put in order: per session how many are placed.
struct Emission<'a> {
    turns: &'a Turns,
    emitted: FxHashMap<String, usize>,
    order: Vec<usize>,
}

impl Emission<'_> {
    /// Whether turn `first` is its session's next.
    fn eligible(&self, first: usize) -> bool {
        let session = &self.turns.turns[first].session;
        self.emitted.get(session).copied().unwrap_or(0) == self.turns.pos[first]
    }

    fn emit(&mut self, ts: &[usize]) {
        for &i in ts {
            *self
                .emitted
                .entry(self.turns.turns[i].session.clone())
                .or_insert(0) += 1;
            self.order.push(i);
        }
    }

    /// Greedy: the first eligible transaction of `list`, again and again.
    fn drain(&mut self, list: &mut Vec<TxnId>) {
        while let Some(p) = list
            .iter()
            .position(|t| self.eligible(self.turns.of_txn[t][0]))
        {
            let t = list.remove(p);
            self.emit(&self.turns.of_txn[&t]);
        }
    }
}

/// The probe of `keys` (names of the core's keys).
fn probe_of(prepared: &Prepared, keys: &[String]) -> String {
    let parsed: Vec<(String, KeyRef)> = keys
        .iter()
        .filter_map(|n| {
            let (_, k, _) = prepared
                .plan
                .initial
                .iter()
                .find(|(name, _, _)| name == n)?;
            Some((n.clone(), k.clone()))
        })
        .collect();
    app_sql::xmin_probe_sql(&parsed)
}

/// An xmin in the application's transactions.
fn writer_of(xids: &FxHashMap<String, String>, xmin: &Option<String>) -> String {
    match xmin {
        None => NO_ROW.to_string(),
        Some(x) => xids
            .get(x)
            .cloned()
            .unwrap_or_else(|| format!("a transaction outside the recording (xid {x})")),
    }
}

/// Runs the setup commands and the test command against the gate at `addr`.
fn run_commands(
    addr: std::net::SocketAddr,
    request: &ItselfRequest<'_>,
) -> Vec<(String, Option<i32>)> {
    let mut exits = Vec::new();
    for setup in request.setup {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", setup]).env("PGAPPNAME", "setup");
        connection_env(&mut cmd, &addr.into(), None);
        // The commands' output goes to stderr: stdout is the report's.
        cmd.stdout(std::process::Stdio::from(std::io::stderr()));
        let code = cmd.status().ok().map(exit_code);
        exits.push((format!("setup: {setup}"), code));
        if code != Some(0) {
            return exits;
        }
    }
    let code = client_command(request.command, &addr.into(), None)
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .ok()
        .map(exit_code);
    exits.push((request.command.join(" "), code));
    exits
}

/// The upstream server's parts from `url`.
fn upstream_parts(url: &str) -> Result<(String, u16, String, String, Option<String>), String> {
    let config: postgres::Config = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("postgres").to_string();
    let database = config.get_dbname().unwrap_or(&user).to_string();
    let password = config
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    Ok((host, port, user, database, password))
}

/// A report saying `why` (nothing ran).
fn stopped(reproduction: Reproduction) -> ItselfOutcome {
    ItselfOutcome {
        reproduction,
        exits: Vec::new(),
        order: Vec::new(),
        divergences: Vec::new(),
        errors: Vec::new(),
        final_rows: Vec::new(),
        committed_writers: Vec::new(),
    }
}

/// The probes the gate runs: before the first turn of each reading step of the schedule (by
/// turn), the `xmin` of the rows it reads; and right after the schedule's last turn, the rows
/// whose last writes the judgement checks.
fn probes_of(
    prepared: &Prepared,
    steps: &[Vec<usize>],
) -> (FxHashMap<usize, String>, FxHashMap<usize, String>) {
    let mut probes = FxHashMap::default();
    for (i, step) in prepared.plan.steps.iter().enumerate() {
        if let (false, Some(&first)) = (step.reads.is_empty(), steps[i].first()) {
            let keys: Vec<String> = step.reads.iter().map(|r| r.key.clone()).collect();
            probes.insert(first, probe_of(prepared, &keys));
        }
    }
    let mut probes_after = FxHashMap::default();
    if let Some(&last) = steps.iter().flatten().last() {
        let keys: Vec<String> = prepared
            .plan
            .final_writers
            .iter()
            .map(|&(k, _)| prepared.plan.initial[k as usize].0.clone())
            .collect();
        probes_after.insert(last, probe_of(prepared, &keys));
    }
    (probes, probes_after)
}

/// Runs the application itself on PostgreSQL along the folder's prediction (module docs).
pub fn reproduce_itself(request: &ItselfRequest<'_>) -> ItselfOutcome {
    let isolation = request.isolation;
    let unknown = |why: String| {
        stopped(Reproduction::empty(
            isolation,
            ReproVerdict::Unknown,
            format!("Unknown: {why}."),
        ))
    };
    let postgres = match Postgres::new(request.url, isolation) {
        Ok(p) => p,
        Err(e) => return unknown(e.to_string()),
    };
    let schedule_isolation = match super::app::isolation_of(request.folder) {
        Some(i) if isolation == Isolation::Serializable => i,
        _ => isolation,
    };
    let app_request = AppRequest {
        folder: request.folder,
        postgres: &postgres,
        isolation,
        timeout: request.timeout,
    };
    let prepared = match prepare(&app_request, schedule_isolation) {
        Ok(p) => p,
        Err(out) => return stopped(*out),
    };
    let observed = &request.folder.observed;
    let turns = turns_of(observed);
    let (order, steps) = order_turns(observed, &turns, &prepared);
    let (probes, probes_after) = probes_of(&prepared, &steps);
    let (host, port, user, database, password) = match upstream_parts(request.url) {
        Ok(p) => p,
        Err(e) => return unknown(e),
    };
    let mut admin = match postgres.connect() {
        Ok(c) => c,
        Err(e) => return unknown(e.to_string()),
    };
    let version = Postgres::version_on(&mut admin);
    let (schema, _guard) = postgres.private_schema();
    if let Err(e) = admin.batch_execute(&format!("CREATE SCHEMA {schema}")) {
        return unknown(format!("creating a schema: {}", error_text(&e)));
    }
    let recorded: Vec<String> = observed
        .statements()
        .map(|t| t.session_names().to_vec())
        .unwrap_or_default();
    let order_words: Vec<String> = order.iter().map(|&i| turns.turns[i].words()).collect();
    let gate = Arc::new(TurnGate::new(
        turns.turns.clone(),
        order,
        recorded,
        request.wait,
    ));
    let setup = UpstreamSetup {
        host,
        port,
        user,
        database,
        password,
        schema: schema.clone(),
        isolation: isolation.sql().to_ascii_lowercase(),
        lock_timeout: request.wait,
        gate: gate.clone(),
        probes,
        probes_after,
    };
    let server = match Upstream::bind("127.0.0.1:0".parse().expect("an address"), setup) {
        Ok(s) => s,
        Err(e) => return unknown(format!("cannot listen: {e}")),
    };
    let addr = match server.local_addr() {
        Ok(a) => a,
        Err(e) => return unknown(format!("cannot listen: {e}")),
    };
    let stop = AtomicBool::new(false);
    let exits = std::thread::scope(|scope| {
        let serving = scope.spawn(|| server.run(&stop));
        let exits = run_commands(addr, request);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = serving.join();
        exits
    });
    let seen = server.observed();
    let mut out = ItselfOutcome {
        exits,
        order: order_words,
        divergences: gate.divergences(),
        errors: Vec::new(),
        final_rows: Vec::new(),
        committed_writers: Vec::new(),
        reproduction: prepared.out.clone(),
    };
    out.errors = {
        let mut e: Vec<(usize, String)> = seen
            .errors
            .iter()
            .map(|(&t, e)| (t, format!("{}: {e}", turns.turns[t].words())))
            .collect();
        e.sort();
        e.into_iter().map(|(_, e)| e).collect()
    };
    let finished = Finished {
        prepared: &prepared,
        steps: &steps,
        turns: &turns,
        seen: &seen,
        gate: &gate,
        observed,
    };
    let database = format!("PostgreSQL {version} at {}", postgres.address());
    let ran = ran_of(&finished, &mut admin, &schema, database, &mut out);
    let Prepared {
        out: mut judged,
        core,
        plan,
        ..
    } = prepared;
    super::app_judge::judge(&mut judged, &core, &plan, ran, request.timeout);
    let waited = out.divergences.iter().any(|d| d.contains("for its turn"));
    judged.summary = judged.summary.replace(
        "with the application's own statements",
        &format!(
            "by the application itself (`{}`)",
            request.command.join(" ")
        ),
    );
    if waited {
        judged.verdict = ReproVerdict::Unknown;
        judged.summary = format!(
            "Unknown on PostgreSQL at {}: a statement's turn did not come within {:.1} s — {}.",
            isolation.sql(),
            request.wait.as_secs_f64(),
            out.divergences.join("; ")
        );
    }
    if let Some(why) = own_connection_reads(&judged) {
        judged.summary = format!("{} {why}", judged.summary);
    }
    out.reproduction = judged;
    out
}

/// Why a read saw another write than predicted when that write was its own connection's
/// earlier transaction: PostgreSQL shows a connection what it committed before, an order
/// the prediction does not keep (docs/testing-apps.md).
fn own_connection_reads(r: &Reproduction) -> Option<String> {
    let split = |label: &str| {
        let (session, n) = label.rsplit_once('/')?;
        Some((session.to_string(), n.parse::<u32>().ok()?))
    };
    let d = r.differing_reads.iter().find(|d| {
        match (split(&d.txn), d.got.as_deref().and_then(split)) {
            (Some((s, n)), Some((g, m))) => s == g && m < n,
            _ => false,
        }
    })?;
    Some(format!(
        "{} read {} from {}, its own connection's earlier transaction: PostgreSQL shows a \
         connection what it committed before, and the prediction (which does not keep the \
         order of a connection's transactions) has it read {}'s older version — not \
         something the application itself can do on PostgreSQL.",
        d.txn,
        d.key,
        d.got.as_deref().unwrap_or(""),
        d.predicted
    ))
}

/// What the run left, for [`ran_of`].
struct Finished<'a> {
    prepared: &'a Prepared,
    steps: &'a [Vec<usize>],
    turns: &'a Turns,
    seen: &'a Observed,
    gate: &'a TurnGate,
    observed: &'a History,
}

/// The first reason the run did not follow the schedule: a statement of the anomaly
/// PostgreSQL refused, a transaction of it that did not commit, a turn of it that never ran,
/// a path the application left, a probe that failed.
fn failure_of(f: &Finished<'_>, divergences: &[String]) -> Option<String> {
    let plan = &f.prepared.plan;
    let words = |t: usize| f.turns.turns[t].words();
    for (i, step) in plan.steps.iter().enumerate() {
        for &t in &f.steps[i] {
            if let Some(e) = f.seen.errors.get(&t) {
                return Some(format!(
                    "PostgreSQL refused {} (step {} of the schedule): {e}",
                    words(t),
                    step.name
                ));
            }
        }
        if let (Some(true), Some(&end)) = (step.end, f.steps[i].last()) {
            if f.seen.committed.get(&end) == Some(&false) {
                return Some(format!("{} did not commit", f.turns.turns[end].txn));
            }
        }
    }
    let core_turns: FxHashSet<usize> = f.steps.iter().flatten().copied().collect();
    if let Some(&m) = f.gate.missed().iter().find(|m| core_turns.contains(m)) {
        return Some(format!("{} never ran", words(m)));
    }
    if !divergences.is_empty() {
        return Some(format!(
            "the application left the schedule: {}",
            divergences.join("; ")
        ));
    }
    if !f.seen.problems.is_empty() {
        return Some(format!(
            "the gate could not watch the run: {}",
            f.seen.problems.join("; ")
        ));
    }
    None
}

/// The run as `reproduce DIR`'s judgement reads it (probes in the applications'
/// transactions, the final state, the failure); fills `out`'s final rows and counts.
fn ran_of(
    f: &Finished<'_>,
    admin: &mut postgres::Client,
    schema: &str,
    database: String,
    out: &mut ItselfOutcome,
) -> Ran {
    let plan = &f.prepared.plan;
    let mut ran = Ran {
        database: Some(database),
        ..Ran::default()
    };
    for (i, _) in plan.steps.iter().enumerate() {
        let shown = f.steps[i].first().and_then(|t| f.seen.probes.get(t));
        ran.probes.push(
            shown
                .map(|rows| {
                    rows.iter()
                        .map(|(k, x)| (k.clone(), writer_of(&f.seen.xids, x)))
                        .collect()
                })
                .unwrap_or_default(),
        );
    }
    ran.failure = failure_of(f, &out.divergences);
    let keys: Vec<String> = plan
        .final_writers
        .iter()
        .map(|&(k, _)| plan.initial[k as usize].0.clone())
        .collect();
    if let Err(e) = admin.batch_execute(&format!("SET search_path TO {schema}")) {
        ran.failure
            .get_or_insert(format!("reading the final state: {}", error_text(&e)));
        return ran;
    }
    // The state the schedule left (before the rest of the application ran).
    let last = f.steps.iter().flatten().last();
    match last.and_then(|t| f.seen.probes_after.get(t)) {
        Some(rows) => {
            ran.final_state = rows
                .iter()
                .map(|(k, x)| (k.clone(), writer_of(&f.seen.xids, x)))
                .collect();
        }
        None => {
            ran.failure.get_or_insert_with(|| {
                "the state the schedule left was not read (its last turn did not run)".into()
            });
        }
    }
    let mut rows: Vec<(String, String)> = Vec::new();
    for &(k, _) in &plan.final_writers {
        let key = &plan.initial[k as usize].1;
        let row = (app_sql::ident(&key.table), key.condition());
        if !rows.contains(&row) {
            rows.push(row);
        }
    }
    for (table, condition) in rows {
        if let Ok(messages) =
            admin.simple_query(&format!("SELECT * FROM {table} WHERE {condition}"))
        {
            for m in messages {
                if let postgres::SimpleQueryMessage::Row(r) = m {
                    let cells: Vec<String> = r
                        .columns()
                        .iter()
                        .enumerate()
                        .map(|(i, c)| format!("{}={}", c.name(), r.get(i).unwrap_or("NULL")))
                        .collect();
                    out.final_rows
                        .push(format!("{table}: {}", cells.join(", ")));
                }
            }
        }
    }
    for key in keys {
        let Some(k) = f.observed.key_names().iter().position(|n| *n == key) else {
            continue;
        };
        let n = (1..f.observed.txn_count() as TxnId)
            .filter(|&t| {
                f.observed.txn(t).ops().any(|o| {
                    f.observed.op(o).kind == OpKind::Write && f.observed.op(o).key as usize == k
                })
            })
            .filter(|t| {
                f.turns
                    .end_of
                    .get(t)
                    .is_some_and(|e| f.seen.committed.get(e) == Some(&true))
            })
            .count();
        out.committed_writers.push((key, n));
    }
    ran
}
