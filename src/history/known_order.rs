//! The known write order as reads (issue 10): a history whose serializability — and snapshot
//! isolation — equals this history's *under its known version order*
//! ([`History::known_write_order`], e.g. revealed by Elle list-append reads).
//!
//! A known pair "write `a` of transaction `Ta` was installed before write `b` of `Tb`" (both
//! committed, `Ta ≠ Tb`) constrains a serial order to put `Ta` before `Tb`. The same
//! constraint, and no other, comes from a fresh key `f` that `Ta` writes last and `Tb` reads
//! first: `Tb` reading `f` from its only writer `Ta` needs exactly `Ta` before `Tb`. So the
//! serializability checkers, which know nothing of version orders, decide serializability
//! under the known order on the rewritten history. Under snapshot isolation (Adya; Biswas &
//! Enea OOPSLA'19 §3), two committed writers of a key ordered `Ta` before `Tb` must have `Ta`
//! visible to `Tb` (no concurrent writers), which is again what the fresh read demands.
//! Not so for prefix consistency, where writers of a key may be concurrent: the rewriting is
//! stronger than the known order there and is not used for it.
//!
//! Transaction ids are kept (sessions and transactions are added in the same order), so a
//! serial order of the rewritten history is one of the original.

use rustc_hash::FxHashSet;

use super::{BuilderTxn, History, HistoryBuilder, OpKind, ReadFrom, TxnId, INITIAL_TXN};

impl History {
    /// The history without its known write order: what a black-box checker, which sees only
    /// which write each read observed, may rely on.
    pub fn without_write_order(&self) -> History {
        let mut h = self.clone();
        h.write_order.clear();
        h
    }

    /// The history with each known write–write pair between committed transactions turned
    /// into a write of a fresh key by the earlier transaction (its last operation) and a read
    /// of it by the later (its first), see the module documentation; `None` when there is no
    /// such pair. Transaction ids are the same as in `self`.
    pub fn with_write_order_as_reads(&self) -> Option<History> {
        let pairs: Vec<(TxnId, TxnId)> = self
            .known_write_order()
            .iter()
            .map(|&(a, b)| (self.op(a).txn, self.op(b).txn))
            .collect();
        self.with_txn_order_as_reads(pairs, "installed a version before")
    }

    /// The history with each pair `(Ta, Tb)` of committed transactions (`Ta ≠ Tb`, `Ta` not
    /// the initial transaction) turned into a write of a fresh key by `Ta` (its last
    /// operation) and a read of it by `Tb` (its first): a serial order of the result is a
    /// serial order of `self` that puts every `Ta` before its `Tb`, and conversely. A fresh
    /// key is named by the fact it stands for, `(Ta <relation> Tb)` — e.g. `(T1.1 completed
    /// before the invocation of T2.1)` — so explanations that mention it read as that fact.
    /// `None` when no pair remains. Transaction ids are kept.
    pub fn with_txn_order_as_reads(
        &self,
        mut pairs: Vec<(TxnId, TxnId)>,
        relation: &str,
    ) -> Option<History> {
        pairs.retain(|&(ta, tb)| {
            ta != tb
                && ta != INITIAL_TXN
                && self.txn(ta).is_committed()
                && self.txn(tb).is_committed()
        });
        if pairs.is_empty() {
            return None;
        }
        pairs.sort_unstable();
        pairs.dedup();

        let mut b = HistoryBuilder::new(self.source());
        b.allow_duplicate_writes(true);
        for name in self.key_names() {
            b.key(name);
        }
        // Fresh keys: names no key has.
        let taken: FxHashSet<&str> = self.key_names().iter().map(String::as_str).collect();
        let mut fresh = Vec::with_capacity(pairs.len());
        for &(ta, tb) in &pairs {
            let fact = format!("({} {relation} {})", self.txn_label(ta), self.txn_label(tb));
            let mut name = fact.clone();
            let mut n = 0u64;
            while taken.contains(name.as_str()) {
                n += 1;
                name = format!("{fact}#{n}");
            }
            fresh.push(b.key(&name));
        }
        // Per transaction: the fresh keys it reads first and writes last.
        let mut reads_first: Vec<Vec<usize>> = vec![Vec::new(); self.txn_count()];
        let mut writes_last: Vec<Vec<usize>> = vec![Vec::new(); self.txn_count()];
        for (i, &(ta, tb)) in pairs.iter().enumerate() {
            writes_last[ta as usize].push(i);
            reads_first[tb as usize].push(i);
        }

        // Transactions, in the same order (so the same ids): the initial one, then session
        // by session.
        let mut bt = vec![BuilderTxn::INITIAL; self.txn_count()];
        for session in self.sessions() {
            let s = b.session(None);
            for t in session.txns() {
                bt[t as usize] = b.begin(s, self.txn(t).external_id);
                if !self.txn(t).is_committed() {
                    b.abort(bt[t as usize]);
                }
                if let Some(ts) = self.timestamps(t) {
                    b.set_timestamps(bt[t as usize], ts);
                }
                if let Some(rt) = self.real_time(t) {
                    b.set_real_time(bt[t as usize], rt);
                }
            }
        }
        for t in 0..self.txn_count() as TxnId {
            let txn = bt[t as usize];
            for &i in &reads_first[t as usize] {
                let writer = bt[pairs[i].0 as usize];
                b.read(txn, fresh[i], None, ReadFrom::Txn(writer), 0);
            }
            for o in self.txn(t).ops() {
                if self.is_implicit_initial_write(o) {
                    continue;
                }
                let op = self.op(o);
                match op.kind {
                    OpKind::Write => b.write(txn, op.key, op.value, op.line),
                    OpKind::Read => {
                        let from = match self.read_from(o) {
                            None => ReadFrom::Unknown,
                            Some(w) if self.is_implicit_initial_write(w) => ReadFrom::Initial,
                            Some(w) => {
                                let wt = self.op(w).txn;
                                let shift = reads_first[wt as usize].len() as u32;
                                let index = w - self.txn(wt).ops().start + shift;
                                ReadFrom::Op(bt[wt as usize], index)
                            }
                        };
                        b.read(txn, op.key, op.value, from, op.line);
                    }
                }
            }
            for &i in &writes_last[t as usize] {
                b.write(txn, fresh[i], None, 0);
            }
        }
        // Every read names an operation of the history it came from: building cannot fail.
        b.build().ok()
    }
}
