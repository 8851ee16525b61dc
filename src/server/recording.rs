//! What the server recorded beside the store's committed transactions: every data statement
//! (text, parameters, its position in its session), which events each statement made, the
//! transactions that aborted (with their events), the reads that were locked, which
//! connections opened after a *setup* connection had closed, and the history built from all of
//! it with keys named as the application names them.
//!
//! Connection order is never taken from timing: two clients whose connections happened not to
//! overlap could have overlapped in another run. Only a setup connection orders the connections
//! that open after it closed (see [`is_setup_name`] and [`SessionInfo::setup`]).

use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::sql::catalog::Catalog;
use crate::error::InputError;
use crate::history::{
    BuilderTxn, History, HistoryBuilder, ReadFrom, SessionId, SqlStatement, StatementTable,
    NO_STATEMENT,
};
use crate::store::{Event, KeyRef, Seq, Source, Store};

/// What one transaction's statements were: for each statement, the end of its events (in the
/// transaction) and its number in [`Recorder::statements`]; the locked reads' event indexes;
/// reads made under `FOR UPDATE`/`FOR SHARE` (locked if the transaction writes the key later).
#[derive(Debug, Default, Clone)]
pub struct TxnNotes {
    /// `(end event, statement)` per statement, in order.
    pub spans: Vec<(u32, u32)>,
    /// Event indexes of locked reads.
    pub locked: Vec<u32>,
    /// `(event, key)` of reads under a row lock.
    pub lock_candidates: Vec<(u32, KeyRef)>,
    /// Whether the transaction ran without some of its locks (a lock wait ran out, or a
    /// deadlock was skipped).
    pub concurrent: bool,
}

impl TxnNotes {
    /// Follows the transaction's events renumbered by an undo (`moved[old]`: the new index, or
    /// `None` for an event removed, [`crate::store::SuspendedTx::undo_writes_since`]).
    pub fn renumber(&mut self, moved: &[Option<u32>]) {
        let kept = moved.iter().flatten().count() as u32;
        // The events kept before old index `end`.
        let kept_before = |end: u32| {
            moved[end as usize..]
                .iter()
                .flatten()
                .next()
                .copied()
                .unwrap_or(kept)
        };
        let mut last = 0;
        self.spans.retain_mut(|(end, _)| {
            *end = kept_before(*end);
            let grows = *end > last;
            last = last.max(*end);
            grows
        });
        self.locked.retain_mut(|l| match moved[*l as usize] {
            Some(new) => {
                *l = new;
                true
            }
            None => false,
        });
        self.lock_candidates
            .retain_mut(|(l, _)| match moved[*l as usize] {
                Some(new) => {
                    *l = new;
                    true
                }
                None => false,
            });
    }
}

#[derive(Debug)]
enum Entry {
    Committed(Seq, TxnNotes),
    Aborted(Vec<Event>, TxnNotes),
}

/// A connection: its name, and the store session it records into.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// `application_name` (made distinct) or `connection N`.
    pub name: String,
    /// Whether it has closed.
    pub closed: bool,
    /// Whether it is a setup connection (opened by a `record --setup` command, or named as
    /// one by [`is_setup_name`]): every connection that opens after it closed is ordered after
    /// it.
    pub setup: bool,
    /// Earlier setup connections that had closed when this one opened.
    pub after: Vec<u32>,
}

/// Whether an `application_name` marks a setup connection (a fixture that loads the tables
/// before the test's connections open): exactly `setup`, or beginning with `setup:`.
pub fn is_setup_name(application_name: &str) -> bool {
    application_name == "setup" || application_name.starts_with("setup:")
}

/// The server's recording (see the module documentation).
#[derive(Debug, Default)]
pub struct Recorder {
    statements: Vec<SqlStatement>,
    /// The schema statements that succeeded (CREATE/DROP TABLE, CREATE INDEX), in order: what
    /// a reproduction on a real database creates first (`reproduce/app.rs`).
    schema: Vec<String>,
    sessions: Vec<SessionInfo>,
    entries: Vec<Vec<Entry>>,
    /// Transactions that ran without some of their locks.
    pub concurrent_txns: u64,
    /// Statements refused or failed.
    pub errors: u64,
}

impl Recorder {
    /// Registers connection `session` (store session index) named `name`, a setup connection
    /// if `setup`; returns its name made distinct. It is ordered after every setup connection
    /// that has closed and recorded a transaction.
    pub fn open_session(&mut self, session: u32, name: &str, setup: bool) -> String {
        let taken: FxHashSet<&str> = self.sessions.iter().map(|s| s.name.as_str()).collect();
        let mut unique = name.to_string();
        let mut n = 2;
        while taken.contains(unique.as_str()) {
            unique = format!("{name}#{n}");
            n += 1;
        }
        let after = self
            .sessions
            .iter()
            .enumerate()
            .filter(|(i, s)| s.setup && s.closed && !self.entries[*i].is_empty())
            .map(|(i, _)| i as u32)
            .collect();
        debug_assert_eq!(session as usize, self.sessions.len());
        self.sessions.push(SessionInfo {
            name: unique.clone(),
            closed: false,
            setup,
            after,
        });
        self.entries.push(Vec::new());
        unique
    }

    /// Names connection `session` anew — its client set `application_name` after connecting,
    /// as JDBC does — while it has recorded nothing; returns the distinct name, or `None` when
    /// something is recorded under the old one (a session keeps one name). A setup name makes
    /// it a setup connection.
    pub fn rename_session(&mut self, session: u32, name: &str, setup: bool) -> Option<String> {
        let s = session as usize;
        if !self.entries[s].is_empty() || self.statements.iter().any(|st| st.session == s) {
            return None;
        }
        let taken: FxHashSet<&str> = self
            .sessions
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != s)
            .map(|(_, info)| info.name.as_str())
            .collect();
        let mut unique = name.to_string();
        let mut n = 2;
        while taken.contains(unique.as_str()) {
            unique = format!("{name}#{n}");
            n += 1;
        }
        let info = &mut self.sessions[s];
        info.name = unique.clone();
        info.setup |= setup;
        Some(unique)
    }

    /// Marks connection `session` closed.
    pub fn close_session(&mut self, session: u32) {
        self.sessions[session as usize].closed = true;
    }

    /// Adds a statement of `session` and returns its number.
    pub fn statement(
        &mut self,
        session: u32,
        index: u32,
        sql: &str,
        params: Vec<Option<String>>,
    ) -> u32 {
        self.statements.push(SqlStatement {
            session: session as usize,
            index,
            sql: sql.to_string(),
            params,
        });
        (self.statements.len() - 1) as u32
    }

    /// Adds a schema statement that succeeded.
    pub fn schema_statement(&mut self, sql: &str) {
        self.schema.push(sql.to_string());
    }

    /// Records a committed transaction.
    pub fn committed(&mut self, session: u32, seq: Seq, notes: TxnNotes) {
        if notes.concurrent {
            self.concurrent_txns += 1;
        }
        self.entries[session as usize].push(Entry::Committed(seq, notes));
    }

    /// Records an aborted transaction (nothing if it made no events).
    pub fn aborted(&mut self, session: u32, events: Vec<Event>, notes: TxnNotes) {
        if events.is_empty() {
            return;
        }
        if notes.concurrent {
            self.concurrent_txns += 1;
        }
        self.entries[session as usize].push(Entry::Aborted(events, notes));
    }

    /// Whether a setup connection is still open.
    pub fn setup_open(&self) -> bool {
        self.sessions.iter().any(|s| s.setup && !s.closed)
    }

    /// The connections, in order.
    pub fn sessions(&self) -> &[SessionInfo] {
        &self.sessions
    }

    /// Counts: (committed, aborted) transactions.
    pub fn txn_counts(&self) -> (usize, usize) {
        let mut c = (0, 0);
        for e in self.entries.iter().flatten() {
            match e {
                Entry::Committed(..) => c.0 += 1,
                Entry::Aborted(..) => c.1 += 1,
            }
        }
        c
    }

    /// The statements recorded.
    pub fn statements(&self) -> &[SqlStatement] {
        &self.statements
    }

    /// The recorded run as a history: one session per connection that ran a transaction,
    /// aborted transactions included (marked aborted), keys named by the catalog, every
    /// operation's statement, the locked reads, and which connections opened after setup
    /// connections had closed.
    pub fn history(
        &self,
        store: &Store,
        catalog: &Catalog,
        source: &str,
    ) -> Result<History, InputError> {
        let data = store.data();
        let mut b = HistoryBuilder::new(source);
        let key_names: Vec<u32> = data
            .keys
            .iter()
            .map(|k| match catalog.key_name(k) {
                Some(n) => b.key(n),
                None => b.key(&k.name()),
            })
            .collect();
        let mut history_session = vec![None; self.sessions.len()];
        for (s, entries) in self.entries.iter().enumerate() {
            if !entries.is_empty() {
                let id = data.sessions()[s].external_id;
                history_session[s] = Some(b.session(Some(id)));
            }
        }
        let mut builder_txn = vec![BuilderTxn::INITIAL; data.txns().len()];
        let mut begun = Vec::new();
        for (s, entries) in self.entries.iter().enumerate() {
            let Some(hs) = history_session[s] else {
                continue;
            };
            for (k, e) in entries.iter().enumerate() {
                let bt = b.begin(hs, Some(k as u64));
                if let Entry::Committed(seq, _) = e {
                    builder_txn[*seq as usize] = bt;
                }
                begun.push(bt);
            }
        }
        // Per begun transaction (in order): each operation's statement, and the locked reads'
        // positions in the transaction.
        let mut txn_statements: Vec<Vec<u32>> = Vec::with_capacity(begun.len());
        let mut next = 0;
        for entries in &self.entries {
            for e in entries {
                let bt = begun[next];
                next += 1;
                let (events, notes) = match e {
                    Entry::Committed(seq, notes) => (data.txn_events(*seq), notes),
                    Entry::Aborted(events, notes) => (&events[..], notes),
                };
                let first_op = b.op_count();
                let mut span = 0;
                let mut stmts = Vec::with_capacity(events.len());
                for (i, ev) in events.iter().enumerate() {
                    while span < notes.spans.len() && notes.spans[span].0 as usize <= i {
                        span += 1;
                    }
                    stmts.push(notes.spans.get(span).map_or(NO_STATEMENT, |s| s.1));
                    let key = key_names[ev.key as usize];
                    match ev.source {
                        None => b.write(bt, key, None, 0),
                        Some(Source::Own) => b.read(bt, key, None, ReadFrom::Txn(bt), 0),
                        Some(Source::Committed(0)) => b.read(bt, key, None, ReadFrom::Initial, 0),
                        Some(Source::Committed(w)) => {
                            b.read(bt, key, None, ReadFrom::Txn(builder_txn[w as usize]), 0)
                        }
                    }
                }
                // A read is locked only if its transaction writes the key after it (a
                // statement that failed before its write leaves an unlocked read).
                let written_later = |l: u32, key| {
                    events[l as usize + 1..]
                        .iter()
                        .any(|ev| ev.source.is_none() && data.key(ev.key) == key)
                };
                let mut locked: Vec<u32> = notes
                    .locked
                    .iter()
                    .copied()
                    .filter(|&l| written_later(l, data.key(events[l as usize].key)))
                    .collect();
                for &(l, key) in &notes.lock_candidates {
                    if written_later(l, key) {
                        locked.push(l);
                    }
                }
                for &l in &locked {
                    b.lock_read(first_op + l as usize);
                }
                txn_statements.push(stmts);
                if matches!(e, Entry::Aborted(..)) {
                    b.abort(bt);
                }
            }
        }
        // Each session is one client connection.
        b.sessions_are_connections();
        // Connections that opened after setup connections had closed see everything those
        // committed.
        for (s, info) in self.sessions.iter().enumerate() {
            let Some(later) = history_session[s] else {
                continue;
            };
            for &e in &info.after {
                if let Some(earlier) = history_session[e as usize] {
                    b.session_after(later, earlier);
                }
            }
        }
        let history = b.build()?;
        self.with_statement_table(history, &history_session, &txn_statements, source)
    }

    /// `history` with its statement table: each operation's statement (`txn_statements`, per
    /// begun transaction, in the history's order), the sessions' names, and the statements of
    /// connections that recorded a transaction, renumbered to the history's sessions
    /// (`history_session`).
    fn with_statement_table(
        &self,
        history: History,
        history_session: &[Option<SessionId>],
        txn_statements: &[Vec<u32>],
        source: &str,
    ) -> Result<History, InputError> {
        // Transactions were begun session by session in the history's own order, so history
        // transaction t + 1 is begun transaction t; checked operation by operation.
        let mut op_statement = vec![NO_STATEMENT; history.ops().len()];
        for (t, stmts) in txn_statements.iter().enumerate() {
            let ops = history.txn(t as u32 + 1).ops();
            if ops.len() != stmts.len() {
                return Err(InputError::new(
                    source.to_string(),
                    0,
                    format!(
                        "recording: transaction {} has {} operations, not {}",
                        t + 1,
                        ops.len(),
                        stmts.len()
                    ),
                ));
            }
            op_statement[ops.start as usize..ops.end as usize].copy_from_slice(stmts);
        }
        let session_names = self
            .sessions
            .iter()
            .zip(history_session)
            .filter(|(_, h)| h.is_some())
            .map(|(s, _)| s.name.clone())
            .collect();
        // Statements of connections that recorded no transaction are left out; the others
        // name history sessions.
        let mut renumber = vec![NO_STATEMENT; self.statements.len()];
        let mut statements = Vec::new();
        for (i, st) in self.statements.iter().enumerate() {
            if let Some(h) = history_session[st.session] {
                renumber[i] = statements.len() as u32;
                statements.push(SqlStatement {
                    session: h as usize,
                    ..st.clone()
                });
            }
        }
        for s in &mut op_statement {
            if *s != NO_STATEMENT {
                *s = renumber[*s as usize];
            }
        }
        let table = StatementTable::new(session_names, statements, op_statement)
            .with_schema(self.schema.clone());
        history.with_statements(Arc::new(table))
    }
}
