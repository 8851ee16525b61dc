//! Summary counts of a history (`isopredict stats`).

use super::{History, OpKind, TxnStatus, INITIAL_TXN};

/// Summary counts of a history. The initial transaction is not counted as a transaction, and
/// its writes are not counted as writes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Number of sessions.
    pub sessions: usize,
    /// Committed transactions (the initial one excluded).
    pub committed: usize,
    /// Aborted transactions.
    pub aborted: usize,
    /// Read operations.
    pub reads: usize,
    /// Reads of the reader's own writes.
    pub internal_reads: usize,
    /// Reads without a resolved writer.
    pub unresolved_reads: usize,
    /// Write operations (initial writes excluded).
    pub writes: usize,
    /// Writes of the initial transaction (explicit and implicit).
    pub initial_writes: usize,
    /// Distinct keys.
    pub keys: usize,
    /// Fewest operations in a transaction (0 when there are none).
    pub min_ops_per_txn: usize,
    /// Mean operations per transaction.
    pub mean_ops_per_txn: f64,
    /// Most operations in a transaction.
    pub max_ops_per_txn: usize,
}

impl Stats {
    /// Counts `history`.
    pub fn of(history: &History) -> Stats {
        let mut stats = Stats {
            sessions: history.sessions().len(),
            committed: 0,
            aborted: 0,
            reads: 0,
            internal_reads: 0,
            unresolved_reads: history.unresolved().len(),
            writes: 0,
            initial_writes: history.txn(INITIAL_TXN).ops().len(),
            keys: history.key_count(),
            min_ops_per_txn: usize::MAX,
            mean_ops_per_txn: 0.0,
            max_ops_per_txn: 0,
        };
        for (id, t) in history.txns().iter().enumerate().skip(1) {
            match t.status {
                TxnStatus::Committed => stats.committed += 1,
                TxnStatus::Aborted => stats.aborted += 1,
            }
            let n = t.ops().len();
            stats.min_ops_per_txn = stats.min_ops_per_txn.min(n);
            stats.max_ops_per_txn = stats.max_ops_per_txn.max(n);
            for op in t.ops() {
                match history.op(op).kind {
                    OpKind::Read => {
                        stats.reads += 1;
                        if history.writer_txn(op) == Some(id as u32) {
                            stats.internal_reads += 1;
                        }
                    }
                    OpKind::Write => stats.writes += 1,
                }
            }
        }
        let txns = stats.committed + stats.aborted;
        if txns == 0 {
            stats.min_ops_per_txn = 0;
        } else {
            stats.mean_ops_per_txn = (stats.reads + stats.writes) as f64 / txns as f64;
        }
        stats
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "sessions          {}", self.sessions)?;
        writeln!(
            f,
            "transactions      {} committed, {} aborted",
            self.committed, self.aborted
        )?;
        writeln!(
            f,
            "reads             {} ({} internal, {} without a writer)",
            self.reads, self.internal_reads, self.unresolved_reads
        )?;
        writeln!(
            f,
            "writes            {} (+ {} initial)",
            self.writes, self.initial_writes
        )?;
        writeln!(f, "keys              {}", self.keys)?;
        write!(
            f,
            "ops/transaction   min {} mean {:.2} max {}",
            self.min_ops_per_txn, self.mean_ops_per_txn, self.max_ops_per_txn
        )
    }
}
