//! The server's replay-mode entry points ([`super::replay`]): binding a server whose store
//! follows a predicted history and whose transactions pass the turn gate, and what a replayed
//! (or recorded) run tells the pipeline beside its history — the divergences, the keys'
//! names, the commit order.

use std::sync::Arc;

use super::database::Shared;
use super::replay::{ReplayGate, ReplaySetup};
use super::{Config, Server};
use crate::store::{ReadPolicy, Store};

impl Server {
    /// Binds a server in replay mode: reads follow `setup`'s plan at its level, transactions
    /// pass the turn gate instead of taking locks.
    pub fn bind_replay(config: Config, setup: ReplaySetup) -> std::io::Result<Server> {
        let store = Store::new(ReadPolicy::Replay {
            plan: setup.plan.clone(),
            level: setup.level,
        })
        .map_err(std::io::Error::other)?;
        let gate = Arc::new(ReplayGate::new(setup));
        let shared = Arc::new(Shared::replaying(config.lock_wait, store, gate));
        Server::bind_with(config, shared)
    }

    /// Where the replay left the prediction, in words: the store's steered reads that could
    /// not follow it, then the gate's waits that ran out. Empty when not replaying.
    pub fn replay_divergences(&self) -> (Vec<crate::store::Divergence>, Vec<String>) {
        let store = self.shared.lock().store.divergences().to_vec();
        let gate = self
            .shared
            .replay_gate()
            .map(|g| g.divergences())
            .unwrap_or_default();
        (store, gate)
    }

    /// Each key's name as the application names it (`acct.bal[id=1]`) with the store's name
    /// of it (which replay plans and divergences use), for the keys named by a table.
    pub fn key_names(&self) -> Vec<(String, String)> {
        let db = self.shared.lock();
        db.store
            .data()
            .keys
            .iter()
            .filter_map(|k| db.catalog.key_name(k).map(|n| (n.to_string(), k.name())))
            .collect()
    }

    /// The commit order of the run so far: each committed transaction as (its session's
    /// external id, its position among the session's committed transactions).
    pub fn commit_positions(&self) -> Vec<(u64, u32)> {
        let db = self.shared.lock();
        let data = db.store.data();
        data.txns()
            .iter()
            .skip(1)
            .map(|t| (data.sessions()[t.session as usize].external_id, t.pos))
            .collect()
    }
}
