//! An application's reproducer run on PostgreSQL (`reproduce/app.rs`): the plan (the steps
//! in the schedule's order, each with the statements it sends and the probe before them), the
//! SQL both the run and the spec send, and the run itself — one connection per session, one
//! step at a time from one thread, so the order is exactly the schedule's. No step of a
//! schedule waits for a lock; should one, `lock_timeout` (2 s) fails it instead of hanging.

use std::fmt::Write as _;

use postgres::SimpleQueryMessage;

use super::app_sql::{self, KeyRef};
use crate::history::{KeyId, OpId, TxnId};
use crate::store::postgres::{error_text, Postgres};
use crate::store::Isolation;

/// A read a probe shows: the key, what it must print, the core's read operations of it.
#[derive(Debug, Clone)]
pub struct ProbeRead {
    /// The key's name (`acct.bal[id=1]`).
    pub key: String,
    /// The transaction whose write it must see ([`app_sql::NO_ROW`]: none).
    pub expect: String,
    /// The core's reads of it in this step.
    pub ops: Vec<OpId>,
    /// Whether the prediction changes its writer from the recording's.
    pub changed: bool,
}

/// One step of the schedule.
#[derive(Debug, Clone)]
pub struct AppStep {
    /// `s1_2`.
    pub name: String,
    /// The core session (0-based).
    pub session: usize,
    /// The core transaction.
    pub txn: TxnId,
    /// Its name (`teller-1/1`).
    pub txn_label: String,
    /// The application's statements, parameters written in.
    pub sql: Vec<String>,
    /// The same in words (text and parameters).
    pub words: Vec<String>,
    /// Their statements' numbers in the recording's statement table.
    pub statements: Vec<u32>,
    /// The reads the probe before them shows.
    pub reads: Vec<ProbeRead>,
    /// For the transaction's end: whether it commits.
    pub end: Option<bool>,
    /// After the end: the session's next transaction.
    pub next: Option<String>,
}

/// Everything a run and the files need.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The isolation level.
    pub isolation: Isolation,
    /// The recorded schema statements.
    pub schema: Vec<String>,
    /// The tables they leave, with their columns.
    pub tables: Vec<(String, Vec<String>)>,
    /// The recording's transactions replayed first (name, statements).
    pub setup: Vec<(String, Vec<String>)>,
    /// Per key of the anomaly: its name, parsed, and the writer the rebuilt rows must show.
    pub initial: Vec<(String, KeyRef, String)>,
    /// Per session: its name and its first transaction's.
    pub sessions: Vec<(String, String)>,
    /// The steps in the schedule's order.
    pub steps: Vec<AppStep>,
    /// Per key written: the transaction whose write the final state holds.
    pub final_writers: Vec<(KeyId, String)>,
    /// Statements sent with the parameters the application computed along the prediction.
    pub computed: Vec<String>,
    /// Per transaction with a read the prediction changes: (name, the read, later statements).
    pub later: Vec<(String, String, Vec<String>)>,
}

impl RunPlan {
    /// The setup SQL (after the schema is created and on the search path): the schema, the
    /// markers, the replayed transactions.
    pub fn setup_sql(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .schema
            .iter()
            .map(|s| s.trim().trim_end_matches(';').to_string() + ";")
            .collect();
        out.push(app_sql::marker_sql(&self.tables));
        for (label, statements) in &self.setup {
            out.push(format!(
                "BEGIN; {} {} COMMIT;",
                app_sql::name_txn(label),
                statements.join(" ")
            ));
        }
        out
    }

    /// A session's setup: the schema on the search path, the lock timeout, its first
    /// transaction begun and named.
    pub fn session_setup(&self, s: usize, schema: &str) -> String {
        format!(
            "SET search_path TO {schema}; SET lock_timeout = '2s'; BEGIN ISOLATION LEVEL {}; {}",
            self.isolation.sql(),
            app_sql::name_txn(&self.sessions[s].1)
        )
    }

    /// The statements step `i` sends, in order: the probe, the application's statements,
    /// the end (and the next transaction's beginning).
    pub fn step_sql(&self, i: usize) -> Vec<String> {
        let step = &self.steps[i];
        let mut out = Vec::new();
        if !step.reads.is_empty() {
            out.push(self.probe(step.reads.iter().map(|r| r.key.as_str())));
        }
        out.extend(step.sql.iter().cloned());
        if let Some(commit) = step.end {
            out.push(if commit { "COMMIT;" } else { "ROLLBACK;" }.to_string());
            if let Some(next) = &step.next {
                out.push(format!("BEGIN ISOLATION LEVEL {};", self.isolation.sql()));
                out.push(app_sql::name_txn(next));
            }
        }
        out
    }

    /// A probe of the keys named.
    pub fn probe<'a>(&self, names: impl Iterator<Item = &'a str>) -> String {
        let keys: Vec<(String, KeyRef)> = names
            .filter_map(|n| {
                let (_, k, _) = self.initial.iter().find(|(name, _, _)| name == n)?;
                Some((n.to_string(), k.clone()))
            })
            .collect();
        app_sql::probe_sql(&keys)
    }

    /// The probe of every key of the anomaly (the rebuilt rows).
    pub fn initial_probe(&self) -> String {
        self.probe(self.initial.iter().map(|(n, _, _)| n.as_str()))
    }

    /// The probe of every key the anomaly writes (the final state), then those rows as the
    /// application sees them (their values beside the markers).
    pub fn final_probe(&self) -> String {
        let mut out = self.probe(
            self.final_writers
                .iter()
                .map(|&(k, _)| self.initial[k as usize].0.as_str()),
        );
        let mut rows: Vec<(String, String)> = Vec::new();
        for &(k, _) in &self.final_writers {
            let key = &self.initial[k as usize].1;
            let row = (app_sql::ident(&key.table), key.condition());
            if !rows.contains(&row) {
                rows.push(row);
            }
        }
        for (table, condition) in rows {
            let _ = write!(out, " SELECT * FROM {table} WHERE {condition};");
        }
        out
    }
}

/// The schedule in words: each step with its session, transaction and statements.
pub fn schedule_text(plan: &RunPlan) -> String {
    let mut out = format!(
        "Schedule at {} ({} steps; each runs after the one before it has completed):\n",
        plan.isolation.sql(),
        plan.steps.len()
    );
    for (i, step) in plan.steps.iter().enumerate() {
        let mut what: Vec<String> = Vec::new();
        if !step.reads.is_empty() {
            let reads: Vec<String> = step
                .reads
                .iter()
                .map(|r| format!("{} (sees {})", r.key, r.expect))
                .collect();
            what.push(format!("reads {}", reads.join(", ")));
        }
        what.extend(step.words.iter().cloned());
        match step.end {
            Some(true) => what.push("COMMIT".into()),
            Some(false) => what.push("ROLLBACK".into()),
            None => {}
        }
        let _ = writeln!(
            out,
            "  {:>3}. {} {} ({}): {}",
            i + 1,
            step.name,
            plan.sessions[step.session].0,
            step.txn_label,
            what.join("; ")
        );
    }
    out
}

/// What a run gave.
#[derive(Debug, Default)]
pub struct Ran {
    /// `PostgreSQL 15.18 at host:port/db`.
    pub database: Option<String>,
    /// Per step: (key, the writer its probe printed).
    pub probes: Vec<Vec<(String, String)>>,
    /// The final state: (key, writer).
    pub final_state: Vec<(String, String)>,
    /// Why the run stopped (a statement failed, the rebuilt rows differ).
    pub failure: Option<String>,
}

/// The rows of a probe (its first result; the rows after it are for people).
fn probe_rows(conn: &mut postgres::Client, sql: &str) -> Result<Vec<(String, String)>, String> {
    let messages = conn.simple_query(sql).map_err(|e| error_text(&e))?;
    Ok(messages
        .iter()
        .take_while(|m| !matches!(m, SimpleQueryMessage::CommandComplete(_)))
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some((
                r.get(0).unwrap_or_default().to_string(),
                r.get(1).unwrap_or_default().to_string(),
            )),
            _ => None,
        })
        .collect())
}

/// Runs `plan` on the database in a private schema (dropped afterwards).
pub fn run(pg: &Postgres, plan: &RunPlan) -> Ran {
    let mut ran = Ran::default();
    if let Err(e) = run_into(pg, plan, &mut ran) {
        ran.failure = Some(e);
    }
    ran
}

fn run_into(pg: &Postgres, plan: &RunPlan, ran: &mut Ran) -> Result<(), String> {
    let mut admin = pg.connect().map_err(|e| e.to_string())?;
    let version = Postgres::version_on(&mut admin);
    ran.database = Some(format!("PostgreSQL {version} at {}", pg.address()));
    let (schema, _guard) = pg.private_schema();
    admin
        .batch_execute(&format!(
            "CREATE SCHEMA {schema}; SET search_path TO {schema}"
        ))
        .map_err(|e| format!("creating a schema: {}", error_text(&e)))?;
    for sql in plan.setup_sql() {
        admin
            .batch_execute(&sql)
            .map_err(|e| format!("setting up (`{}`): {}", first_line(&sql), error_text(&e)))?;
    }
    let initial = probe_rows(&mut admin, &plan.initial_probe())?;
    for ((key, _, want), (_, got)) in plan.initial.iter().zip(&initial) {
        if want != got {
            return Err(format!(
                "the rows the anomaly reads could not be rebuilt from the recording: {key} \
                 holds {got}'s version, the anomaly reads {want}'s"
            ));
        }
    }
    let mut sessions = Vec::new();
    for s in 0..plan.sessions.len() {
        let mut conn = pg.connect().map_err(|e| e.to_string())?;
        conn.batch_execute(&plan.session_setup(s, &schema))
            .map_err(|e| format!("beginning {}: {}", plan.sessions[s].0, error_text(&e)))?;
        sessions.push(conn);
    }
    for (i, step) in plan.steps.iter().enumerate() {
        let conn = &mut sessions[step.session];
        let mut probed = Vec::new();
        for (j, sql) in plan.step_sql(i).into_iter().enumerate() {
            if j == 0 && !step.reads.is_empty() {
                probed = probe_rows(conn, &sql)?;
                continue;
            }
            if let Err(e) = conn.simple_query(&sql) {
                ran.probes.push(probed);
                return Err(format!(
                    "step {} of {} ({}) failed: `{}`: {}",
                    step.name,
                    plan.sessions[step.session].0,
                    step.txn_label,
                    first_line(&sql),
                    error_text(&e)
                ));
            }
        }
        ran.probes.push(probed);
    }
    ran.final_state = probe_rows(&mut admin, &plan.final_probe())?;
    Ok(())
}

fn first_line(sql: &str) -> String {
    let line = sql.lines().next().unwrap_or("");
    if line.chars().count() > 120 {
        line.chars().take(120).collect::<String>() + "…"
    } else {
        line.to_string()
    }
}
