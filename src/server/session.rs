//! A connection's transaction state machine, as PostgreSQL's: idle (each data statement is a
//! transaction of its own, autocommit), in a transaction block (BEGIN … COMMIT), or failed
//! (an error in the block: every statement is refused with `25P02` until ROLLBACK, and COMMIT
//! rolls back). The transaction ends in the store as it ended for the client: committed, or
//! aborted (its events kept, recorded as an aborted transaction) on ROLLBACK, on an error,
//! or when the client disconnects mid-transaction.
//!
//! Savepoints (`SAVEPOINT`, `RELEASE SAVEPOINT`, `ROLLBACK TO SAVEPOINT`, as ORMs and test
//! frameworks send them): `ROLLBACK TO SAVEPOINT` undoes the writes made since the savepoint
//! and leaves the block usable again, also after an error. What is recorded is what remains
//! true: the writes since the savepoint never happened for anyone (no other transaction could
//! read them: they were uncommitted and locked) and leave the transaction's events, as do its
//! reads since of its own writes (what they read may be gone; a read of one's own write says
//! nothing about other transactions); the reads since of committed writes stay (the client saw
//! their values). While a savepoint exists an error keeps the transaction open (failed) instead of
//! aborting it at once, as PostgreSQL keeps it for a rollback to the savepoint.
//!
//! Concurrency control ([`super::database`]): a data statement runs with the transaction's
//! lock hook; if a lock must wait, the statement is undone (a store savepoint), the session
//! waits without holding the database, and runs the statement again. At commit or abort the
//! transaction's locks are released.

use sqlparser::ast::Statement;
use tokio::sync::oneshot;

use std::sync::Arc;

use super::cursor::Cursors;
use super::database::{ClosingProbe, Shared, TxnLocking};
use super::locks::Mode;
use super::recording::TxnNotes;
use super::replay::Entry as ReplayEntry;
use super::sql::chatter::{self, Settings};
use super::sql::exec::{self, Exec, StatementNotes};
use super::sql::{kind, Field, Kind, Outcome, SqlError};
use crate::store::{Committed, KvRead, SessionId, SuspendedTx, Value, WriteMark};

/// Where the connection's transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// No transaction block (`I`).
    Idle,
    /// In a block (`T`).
    InBlock,
    /// In a failed block (`E`).
    Failed,
}

/// What a statement did to the transaction (for the protocol's status byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It began a block.
    Began,
    /// It ended a block.
    Ended,
    /// Neither.
    None,
}

/// What a data statement runs: a statement, or the rows of a `COPY … FROM STDIN` through
/// an INSERT of one row of parameters.
#[derive(Clone, Copy)]
enum Work<'s> {
    Statement(&'s Statement),
    Rows(&'s Statement, &'s [Vec<Value>]),
}

/// One connection.
#[derive(Debug)]
pub struct Session {
    /// The store session it records into.
    pub store_session: SessionId,
    /// Its name (distinct among connections).
    pub name: String,
    state: TxnState,
    tx: Option<SuspendedTx>,
    notes: TxnNotes,
    /// The transaction waited too long for a lock: it takes no more locks.
    unlocked: bool,
    statement_notes: StatementNotes,
    statements: u32,
    /// The open savepoints of the block, oldest first: name and the transaction's writes then.
    savepoints: Vec<(String, WriteMark)>,
    /// `SET`/`SHOW` settings.
    pub settings: Settings,
    /// Its number among the server's connections (1-based).
    number: u64,
    /// Whether its client named it at startup (else a `SET application_name` before its first
    /// statement names it).
    named_at_startup: bool,
    /// Its socket, watched if it becomes a setup connection.
    socket: Option<Arc<ClosingProbe>>,
    /// Its open cursors.
    cursors: Cursors,
}

impl Session {
    /// Opens a connection named `application_name` (or by its number).
    pub fn open(shared: &Shared, application_name: Option<&str>) -> Session {
        Session::open_on(shared, application_name, None)
    }

    /// Opens a connection named `application_name` (or by its number) served on `socket`
    /// (watched while it is a setup connection, [`ClosingProbe`]).
    pub fn open_on(
        shared: &Shared,
        application_name: Option<&str>,
        socket: Option<Arc<ClosingProbe>>,
    ) -> Session {
        let mut db = shared.lock();
        // Setup connections whose client closed them before this one opened come first.
        db.note_closed_setup_clients();
        db.connections += 1;
        let number = db.connections;
        // Replay mode: the connection records as the recorded session it replays.
        let external = shared
            .replay_gate()
            .map_or(number, |g| g.external_id(application_name, number));
        let store_session = db.store.open_session(external);
        let base = match application_name {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => format!("connection {number}"),
        };
        let setup = shared.in_setup_phase()
            || application_name.is_some_and(super::recording::is_setup_name);
        let name = db.recorder.open_session(store_session, &base, setup);
        if let Some(socket) = socket.clone().filter(|_| setup) {
            db.watch_setup_socket(store_session, socket);
        }
        if let Some(gate) = shared.replay_gate() {
            gate.opened(store_session, external, &name);
        }
        let mut settings = Settings::default();
        settings.set("application_name", application_name.unwrap_or(""));
        Session {
            store_session,
            name,
            state: TxnState::Idle,
            tx: None,
            notes: TxnNotes::default(),
            unlocked: false,
            statement_notes: StatementNotes::default(),
            statements: 0,
            savepoints: Vec::new(),
            settings,
            number,
            named_at_startup: application_name.is_some_and(|n| !n.is_empty()),
            socket,
            cursors: Cursors::default(),
        }
    }

    /// A client that did not name its connection at startup but sets `application_name`
    /// before its first statement — JDBC sends `SET application_name` right after connecting
    /// — names it then: the recording, the setup order (a `setup` name) and a replay's
    /// matching of connections to recorded sessions all use that name, as if it had come with
    /// the startup. Later changes name nothing (a session keeps one name).
    fn named_after_startup(&mut self, shared: &Shared) {
        let Some(name) = self
            .settings
            .get("application_name")
            .filter(|n| !n.is_empty() && !self.named_at_startup && self.statements == 0)
            .map(str::to_string)
        else {
            return;
        };
        let mut db = shared.lock();
        let setup = super::recording::is_setup_name(&name);
        let Some(unique) = db.recorder.rename_session(self.store_session, &name, setup) else {
            return;
        };
        self.named_at_startup = true;
        self.name = unique;
        if let Some(socket) = self.socket.clone().filter(|_| setup) {
            db.watch_setup_socket(self.store_session, socket);
        }
        if let Some(gate) = shared.replay_gate() {
            let external = gate.external_id(Some(&name), self.number);
            if db.store.rekey_session(self.store_session, external) {
                gate.opened(self.store_session, external, &self.name);
            }
        }
    }

    /// The transaction state.
    pub fn state(&self) -> TxnState {
        self.state
    }

    /// Runs one parsed statement with its text and parameters.
    pub async fn run(
        &mut self,
        shared: &Shared,
        stmt: &Statement,
        text: &str,
        params: &[Value],
        param_texts: &[Option<String>],
    ) -> (Result<Outcome, SqlError>, Effect) {
        let k = kind(stmt);
        let rollback_to = matches!(
            stmt,
            Statement::Rollback {
                savepoint: Some(_),
                ..
            }
        );
        if self.state == TxnState::Failed
            && !matches!(k, Kind::Commit | Kind::Rollback)
            && !rollback_to
        {
            return (
                Err(SqlError::new(
                    "25P02",
                    "current transaction is aborted, commands ignored until end of transaction block",
                )),
                Effect::None,
            );
        }
        match k {
            Kind::Begin => {
                if self.state == TxnState::InBlock {
                    return (Ok(Outcome::Done("BEGIN".into())), Effect::None);
                }
                self.begin(shared).await;
                self.state = TxnState::InBlock;
                (Ok(Outcome::Done("BEGIN".into())), Effect::Began)
            }
            Kind::Commit => match self.state {
                TxnState::Idle => (Ok(Outcome::Done("COMMIT".into())), Effect::Ended),
                TxnState::InBlock => {
                    self.commit(shared);
                    (Ok(Outcome::Done("COMMIT".into())), Effect::Ended)
                }
                TxnState::Failed => {
                    if self.tx.is_some() {
                        self.abort(shared);
                    }
                    self.state = TxnState::Idle;
                    (Ok(Outcome::Done("ROLLBACK".into())), Effect::Ended)
                }
            },
            Kind::Rollback => {
                if self.tx.is_some() {
                    self.abort(shared);
                }
                self.state = TxnState::Idle;
                (Ok(Outcome::Done("ROLLBACK".into())), Effect::Ended)
            }
            Kind::Savepoint => (self.savepoint(stmt), Effect::None),
            Kind::Chatter => {
                let answer = {
                    let db = shared.lock();
                    let (store, catalog) = (&db.store, &db.catalog);
                    let mut count = |t: usize| {
                        let table = catalog.get(t);
                        let mut snap = store.snapshot();
                        table
                            .rows
                            .iter()
                            .filter(|r| snap.set_contains(table.set, r.elem))
                            .count()
                    };
                    chatter::answer(stmt, &mut self.settings, catalog, &mut count)
                };
                self.named_after_startup(shared);
                (answer, Effect::None)
            }
            Kind::Schema => {
                let mut db = shared.lock();
                let db = &mut *db;
                let mut committed = db.store.snapshot();
                let result = exec::schema(&mut db.catalog, &mut committed, stmt);
                if result.is_ok() {
                    db.recorder.schema_statement(text);
                }
                (result, Effect::None)
            }
            Kind::Data => {
                let work = Work::Statement(stmt);
                let result = self.data_statement(shared, work, text, params, param_texts);
                (result.await, Effect::None)
            }
            Kind::Cursor => {
                let result = self.cursor_statement(shared, stmt, (text, params, param_texts));
                (result.await, Effect::None)
            }
        }
    }

    /// DECLARE runs the cursor's query as a data statement (recorded with the DECLARE's text)
    /// and keeps its rows; FETCH hands them out and CLOSE drops them ([`Cursors`]).
    async fn cursor_statement(
        &mut self,
        shared: &Shared,
        stmt: &Statement,
        (text, params, param_texts): (&str, &[Value], &[Option<String>]),
    ) -> Result<Outcome, SqlError> {
        match stmt {
            Statement::Declare { stmts, .. } => {
                let in_block = self.state == TxnState::InBlock;
                let declared = counted(shared, self.cursors.declare(stmts, in_block))?;
                let autocommit = self.state == TxnState::Idle;
                let work = Work::Statement(&declared.query);
                let outcome = self
                    .data_statement(shared, work, text, params, param_texts)
                    .await?;
                Ok(self.cursors.open(declared, outcome, autocommit))
            }
            Statement::Fetch {
                name,
                direction,
                into: None,
                ..
            } => counted(shared, self.cursors.fetch(name, direction)),
            Statement::Close { cursor } => counted(shared, self.cursors.close(cursor)),
            other => counted(
                shared,
                Err(SqlError::unsupported(format!("the statement {other}"))),
            ),
        }
    }

    /// The fields a FETCH from cursor `name` returns (Describe).
    pub fn cursor_fields(&mut self, name: &sqlparser::ast::Ident) -> Result<Vec<Field>, SqlError> {
        self.cursors.fields(name)
    }

    /// Inserts the rows of a `COPY … FROM STDIN` (`text`) into a table as one data statement:
    /// `insert_one` inserts one row of parameters.
    pub async fn copy_rows(
        &mut self,
        shared: &Shared,
        insert_one: &Statement,
        text: &str,
        rows: &[Vec<Value>],
    ) -> Result<Outcome, SqlError> {
        if self.state == TxnState::Failed {
            return Err(SqlError::new(
                "25P02",
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let work = Work::Rows(insert_one, rows);
        self.data_statement(shared, work, text, &[], &[]).await
    }

    /// A data statement, in the block or as a transaction of its own (autocommit).
    async fn data_statement(
        &mut self,
        shared: &Shared,
        work: Work<'_>,
        text: &str,
        params: &[Value],
        param_texts: &[Option<String>],
    ) -> Result<Outcome, SqlError> {
        let autocommit = self.state == TxnState::Idle;
        if autocommit {
            self.begin(shared).await;
        }
        let result = self.data(shared, work, text, params, param_texts).await;
        match (&result, autocommit) {
            (Ok(_), true) => self.commit(shared),
            (Ok(_), false) => {}
            (Err(_), true) => self.abort(shared),
            (Err(_), false) => self.fail(shared),
        }
        result
    }

    /// An error in a transaction block (a statement's, or the protocol's: a syntax error, a
    /// bad parameter) fails the block, as PostgreSQL fails it. The transaction is kept open for
    /// a rollback to a savepoint while one exists, else aborted at once.
    pub fn fail(&mut self, shared: &Shared) {
        if self.state != TxnState::InBlock {
            return;
        }
        if self.savepoints.is_empty() {
            self.abort(shared);
        }
        self.state = TxnState::Failed;
    }

    /// SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT (see the module documentation).
    fn savepoint(&mut self, stmt: &Statement) -> Result<Outcome, SqlError> {
        let (verb, name) = match stmt {
            Statement::Savepoint { name } => ("SAVEPOINT", name),
            Statement::ReleaseSavepoint { name } => ("RELEASE SAVEPOINT", name),
            Statement::Rollback {
                savepoint: Some(name),
                ..
            } => ("ROLLBACK TO SAVEPOINT", name),
            other => return Err(SqlError::unsupported(format!("the statement {other}"))),
        };
        if self.state == TxnState::Idle {
            return Err(SqlError::new(
                "25P01",
                format!("{verb} can only be used in transaction blocks"),
            ));
        }
        let name = super::sql::eval::ident(name);
        if verb == "SAVEPOINT" {
            let tx = self.tx.as_ref().expect("a block has a transaction");
            self.savepoints.push((name, tx.mark()));
            return Ok(Outcome::Done("SAVEPOINT".into()));
        }
        let Some(at) = self.savepoints.iter().rposition(|(n, _)| *n == name) else {
            return Err(SqlError::new(
                "3B001",
                format!("savepoint \"{name}\" does not exist"),
            ));
        };
        if verb == "RELEASE SAVEPOINT" {
            self.savepoints.truncate(at);
            return Ok(Outcome::Done("RELEASE".into()));
        }
        self.savepoints.truncate(at + 1);
        let tx = self.tx.as_mut().expect("a savepoint's transaction is open");
        let moved = tx.undo_writes_since(&self.savepoints[at].1);
        self.notes.renumber(&moved);
        self.state = TxnState::InBlock;
        Ok(Outcome::Done("ROLLBACK".into()))
    }

    async fn begin(&mut self, shared: &Shared) {
        // Replay mode: the turn gate orders transactions instead of the locks (a predicted
        // execution need not be one two-phase locking allows); a transaction let in late runs
        // concurrently.
        let late = match shared.replay_gate() {
            Some(gate) => Some(gate.enter(self.store_session).await == ReplayEntry::Late),
            None => None,
        };
        self.unlocked = late.is_some();
        let mut db = shared.lock();
        let tx = db.store.begin(self.store_session).suspend();
        self.tx = Some(tx);
        self.notes = TxnNotes::default();
        self.notes.concurrent = late == Some(true);
    }

    /// Runs a data statement: again after each lock wait, until it ran through.
    async fn data(
        &mut self,
        shared: &Shared,
        work: Work<'_>,
        text: &str,
        params: &[Value],
        param_texts: &[Option<String>],
    ) -> Result<Outcome, SqlError> {
        self.statements += 1;
        let mut id = None;
        loop {
            let heard = match self.attempt(shared, work, (text, params, param_texts), &mut id) {
                Ok(result) => return result,
                Err(heard) => heard,
            };
            shared.lock().lock_waits += 1;
            if !shared.wait_for_lock(heard).await && !shared.lock().locks.cancel(self.store_session)
            {
                // Waited too long (a test holding two transactions open in one thread):
                // the transaction goes on without locks, concurrently.
                self.unlocked = true;
                self.notes.concurrent = true;
            }
        }
    }

    /// Runs the statement once (recording it, under the same hold of the database, the first
    /// time: `id`): its result, or (it was undone) the lock wait to make first.
    fn attempt(
        &mut self,
        shared: &Shared,
        work: Work<'_>,
        (text, params, param_texts): (&str, &[Value], &[Option<String>]),
        id: &mut Option<u32>,
    ) -> Result<Result<Outcome, SqlError>, oneshot::Receiver<()>> {
        let mut db = shared.lock();
        let db = &mut *db;
        let (session, index) = (self.store_session, self.statements);
        let id = *id.get_or_insert_with(|| {
            db.recorder
                .statement(session, index, text, param_texts.to_vec())
        });
        let suspended = self
            .tx
            .take()
            .expect("a data statement runs in a transaction");
        let mut tx = db.store.resume(suspended);
        let start = tx.event_count() as u32;
        let savepoint = tx.savepoint();
        self.statement_notes.clear();
        let mut locking = TxnLocking::new(&mut db.locks, self.store_session, self.unlocked);
        let read_lock = match self.state {
            TxnState::InBlock => Mode::Exclusive,
            _ => Mode::Shared,
        };
        let result = {
            let mut x = Exec {
                catalog: &mut db.catalog,
                tx: &mut tx,
                params,
                notes: &mut self.statement_notes,
                locks: &mut locking,
                read_lock,
                with: Vec::new(),
            };
            match work {
                Work::Statement(stmt) => exec::execute(&mut x, stmt),
                Work::Rows(insert_one, rows) => exec::insert_rows(&mut x, insert_one, rows),
            }
        };
        if locking.deadlocked {
            self.notes.concurrent = true;
        }
        if let Some(heard) = locking.waiting.take() {
            tx.rollback_to(savepoint);
            self.tx = Some(tx.suspend());
            return Err(heard);
        }
        let end = tx.event_count() as u32;
        self.tx = Some(tx.suspend());
        if end > start {
            self.notes.spans.push((end, id));
        }
        self.notes
            .locked
            .extend_from_slice(&self.statement_notes.locked);
        self.notes
            .lock_candidates
            .extend_from_slice(&self.statement_notes.lock_candidates);
        if result.is_err() {
            db.recorder.errors += 1;
        }
        Ok(result)
    }

    fn commit(&mut self, shared: &Shared) {
        self.state = TxnState::Idle;
        self.savepoints.clear();
        self.cursors.end_of_transaction(true);
        let Some(suspended) = self.tx.take() else {
            self.leave_gate(shared, false);
            return;
        };
        let mut db = shared.lock();
        let db = &mut *db;
        let committed = db.store.resume(suspended).commit();
        self.leave_gate(shared, matches!(committed, Committed::At(_)));
        if let Committed::At(seq) = committed {
            db.recorder
                .committed(self.store_session, seq, std::mem::take(&mut self.notes));
        }
        db.end_txn(self.store_session);
    }

    /// Rolls the open transaction back, recording it as aborted.
    fn abort(&mut self, shared: &Shared) {
        self.savepoints.clear();
        self.cursors.end_of_transaction(false);
        let mut db = shared.lock();
        let db = &mut *db;
        if let Some(suspended) = self.tx.take() {
            let events = db.store.resume(suspended).abort_events();
            db.recorder
                .aborted(self.store_session, events, std::mem::take(&mut self.notes));
        }
        self.leave_gate(shared, false);
        db.end_txn(self.store_session);
    }

    /// Replay mode: the transaction ended (`committed` with events, or not).
    fn leave_gate(&self, shared: &Shared, committed: bool) {
        if let Some(gate) = shared.replay_gate() {
            gate.leave(self.store_session, committed);
        }
    }

    /// The client disconnected: an open transaction is recorded as aborted.
    pub fn close(&mut self, shared: &Shared) {
        self.abort(shared);
        self.state = TxnState::Idle;
        let mut db = shared.lock();
        db.forget_socket(self.store_session);
        db.recorder.close_session(self.store_session);
    }
}

/// A result, counted among the statements that failed or were refused when it is an error.
fn counted<T>(shared: &Shared, result: Result<T, SqlError>) -> Result<T, SqlError> {
    if result.is_err() {
        shared.lock().recorder.errors += 1;
    }
    result
}
