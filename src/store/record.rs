//! Turning a run into a [`History`] and into a MonkeyDB-style event log (the IsoPredict trace
//! format, PLDI'24 artifact; notes/isopredict.md §6).
//!
//! History: one session per store session (external id = MonkeyDB connection number), one
//! transaction per committed non-empty transaction (external id = `k`), operations in program
//! order, each read resolved to its exact writer (`ReadFrom::Txn`; local reads name their own
//! transaction, so they are internal reads; reads of the initial state use `ReadFrom::Initial`).
//! The initial transaction writes every loaded key explicitly; keys read but never written get
//! the builder's implicit initial write. Key names: see [`super::KeyRef::name`].
//!
//! Trace: the initial state (set memberships first, then plain keys, in load order), then each
//! committed transaction in execution order, events in program order, exactly as MonkeyDB
//! prints them at commit.

use std::io::{self, Write};

use super::data::{EventKind, Seq, Source, StoreData};
use super::engine::Store;
use super::key::KeyRef;
use super::value::Value;
use crate::error::InputError;
use crate::history::{BuilderTxn, History, HistoryBuilder, ReadFrom, TxnId};

impl Store {
    /// The recorded run as a [`History`] named `source`.
    pub fn history(&self, source: &str) -> Result<History, InputError> {
        build_history(self.data(), source)
    }

    /// The committed transactions in execution (= commit) order, as ids of
    /// [`Store::history`]'s transactions.
    pub fn commit_order(&self) -> Vec<TxnId> {
        let data = self.data();
        let mut offset = Vec::with_capacity(data.sessions().len());
        let mut total = 1u32;
        for s in data.sessions() {
            offset.push(total);
            total += s.txns.len() as u32;
        }
        data.txns()[1..]
            .iter()
            .map(|t| offset[t.session as usize] + t.pos)
            .collect()
    }

    /// Writes the run as MonkeyDB's event log (IsoPredict trace format).
    pub fn write_trace(&self, out: &mut dyn Write) -> io::Result<()> {
        write_trace(self.data(), out)
    }
}

fn build_history(data: &StoreData, source: &str) -> Result<History, InputError> {
    let mut b = HistoryBuilder::new(source);
    // Every event is one operation, and every key the loader did not write gets an implicit
    // initial write: reserved exactly, so that a run of 10^7 reads does not double its largest
    // vector while it grows.
    b.reserve_ops(data.events.len() + data.keys.len());
    for &key in &data.keys {
        b.key(&key.name());
    }
    for s in data.sessions() {
        b.session(Some(s.external_id));
    }
    for &key in data.loaded_keys() {
        b.write(BuilderTxn::INITIAL, key, None, 0);
    }
    // Transactions are begun session by session (each session's in its order), so that a
    // read can name a writer of a later session, and their operations are added in the same
    // order: the history's own layout, which the builder then keeps in place instead of
    // copying every operation.
    let mut builder_txn = vec![BuilderTxn::INITIAL; data.txns().len()];
    for (s, session) in data.sessions().iter().enumerate() {
        for &seq in &session.txns {
            let t = &data.txns()[seq as usize];
            builder_txn[seq as usize] = b.begin(s as u32, Some(t.k as u64));
        }
    }
    for session in data.sessions() {
        for &seq in &session.txns {
            let bt = builder_txn[seq as usize];
            for e in data.txn_events(seq) {
                match e.source {
                    None => b.write(bt, e.key, None, 0),
                    Some(Source::Own) => b.read(bt, e.key, None, ReadFrom::Txn(bt), 0),
                    Some(Source::Committed(0)) => b.read(bt, e.key, None, ReadFrom::Initial, 0),
                    Some(Source::Committed(w)) => {
                        b.read(bt, e.key, None, ReadFrom::Txn(builder_txn[w as usize]), 0)
                    }
                }
            }
        }
    }
    b.build()
}

fn write_trace(data: &StoreData, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let initial = data
        .loaded_keys()
        .iter()
        .filter(|&&k| matches!(data.key(k), KeyRef::Member { .. }))
        .chain(
            data.loaded_keys()
                .iter()
                .filter(|&&k| matches!(data.key(k), KeyRef::Plain(_))),
        );
    for &key in initial {
        match data.key(key) {
            KeyRef::Plain(k) => writeln!(out, "WRITE KEY[{k}] Txn(0, 0)")?,
            KeyRef::Member { set, elem } => {
                if data.versions(key)[0].value == Some(Value::Bool(true)) {
                    writeln!(out, "INSERT[{elem}] to Set[{set}] Txn(0, 0)")?
                } else {
                    writeln!(out, "DELETE[{elem}] from Set[{set}] Txn(0, 0)")?
                }
            }
        }
    }
    for seq in 1..data.txns().len() as Seq {
        let (s, k) = data.monkeydb_id(seq);
        for e in data.txn_events(seq) {
            let (fs, fk) = match e.source {
                Some(Source::Committed(w)) => data.monkeydb_id(w),
                _ => (s, k),
            };
            match (e.kind, data.key(e.key)) {
                (EventKind::Read, KeyRef::Plain(key)) => {
                    writeln!(out, "READ KEY[{key}] Txn({s}, {k}) From({fs}, {fk})")?
                }
                (EventKind::Write, KeyRef::Plain(key)) => {
                    writeln!(out, "WRITE KEY[{key}] Txn({s}, {k})")?
                }
                (EventKind::Insert, KeyRef::Member { set, elem }) => {
                    writeln!(out, "INSERT[{elem}] to Set[{set}] Txn({s}, {k})")?
                }
                (EventKind::Delete, KeyRef::Member { set, elem }) => {
                    writeln!(out, "DELETE[{elem}] from Set[{set}] Txn({s}, {k})")?
                }
                (EventKind::Contains, KeyRef::Member { set, elem }) => writeln!(
                    out,
                    "CONTAINS[{elem}] in Set[{set}] From({fs}, {fk}) Txn({s}, {k})"
                )?,
                (kind, key) => unreachable!("event {kind:?} on key {key}"),
            }
        }
    }
    out.flush()
}
