//! Recording an application's own transactions on PostgreSQL (docs/recording.md).
//!
//! Two tellers deposit into shared accounts concurrently with read-modify-write transactions
//! on a table of the application's own (`accounts(id, bal, writer)`), through
//! [`PgSession::transaction`]. The recording becomes a history that isopredict checks at the
//! level the database promised and predicts from; it is also written as JSON lines.
//!
//! ```text
//! eval "$(scripts/pg-throwaway.sh start)"
//! cargo run --release --example record_postgres -- "$ISOPREDICT_POSTGRES_URL" [read-committed|repeatable-read|serializable]
//! ```

use std::time::Duration;

use isopredict::check::{CheckOptions, Level};
use isopredict::predict::{predict, PredictOptions, Strategy, Verdict};
use isopredict::ser::SerVerdict;
use isopredict::store::postgres::{PgSession, PgTx, Recorder, TxnEnd};
use isopredict::store::{Isolation, Outcome};
use isopredict::verdict::engines;

/// Reads an account's balance, recording which transaction wrote the version seen.
fn balance(tx: &mut PgTx<'_>, id: i32) -> Option<i64> {
    let rows = tx
        .query("SELECT bal, writer FROM accounts WHERE id = $1", &[&id])
        .ok()?;
    let row = rows.first()?;
    let (bal, writer): (i64, i64) = (row.get(0), row.get(1));
    tx.record_read(&format!("account{id}"), Some(writer), Some(bal.into()));
    Some(bal)
}

/// Sets an account's balance; the writer column names this transaction.
fn set_balance(tx: &mut PgTx<'_>, id: i32, bal: i64) {
    let me = tx.id();
    if tx
        .execute(
            "UPDATE accounts SET bal = $1, writer = $2 WHERE id = $3",
            &[&bal, &me, &id],
        )
        .is_ok()
    {
        tx.record_write(&format!("account{id}"), Some(bal.into()));
    }
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("ISOPREDICT_POSTGRES_URL").ok())
        .ok_or_else(|| anyhow::anyhow!("usage: record_postgres URL [ISOLATION]"))?;
    let isolation: Isolation = args
        .next()
        .unwrap_or_else(|| "read-committed".into())
        .parse()
        .map_err(anyhow::Error::msg)?;

    // The application's schema, with a writer column (0 = the initial state).
    let mut setup = postgres::Client::connect(&url, postgres::NoTls)?;
    setup.batch_execute(
        "DROP TABLE IF EXISTS accounts;
         CREATE TABLE accounts (id int PRIMARY KEY, bal bigint NOT NULL, writer bigint NOT NULL);
         INSERT INTO accounts VALUES (1, 100, 0), (2, 100, 0);",
    )?;

    let recorder = Recorder::new();
    recorder.initial_keys(["account1".to_string(), "account2".to_string()]);
    std::thread::scope(|scope| {
        for teller in 1..=2u64 {
            let (url, recorder) = (&url, &recorder);
            scope.spawn(move || -> anyhow::Result<()> {
                let mut session = PgSession::connect(url, isolation, recorder, teller)?;
                for i in 0..20 {
                    let id = 1 + (i + teller as i32) % 2;
                    // Retry what the database aborts (serialization failures, deadlocks).
                    for _attempt in 0..10 {
                        let end = session.transaction(|tx| {
                            let Some(bal) = balance(tx, id) else {
                                return Outcome::Rollback;
                            };
                            set_balance(tx, id, bal + 10);
                            Outcome::Commit
                        })?;
                        if end != TxnEnd::Committed && end.by_database() {
                            continue;
                        }
                        break;
                    }
                }
                Ok(())
            });
        }
    });

    let history = recorder.history("accounts")?;
    let mut events = Vec::new();
    recorder.write_events(&mut events)?;
    std::fs::write("accounts.jsonl", &events)?;
    let aborted = history.txns().iter().filter(|t| !t.is_committed()).count();
    println!(
        "recorded {} transactions at {} ({aborted} aborted); events in accounts.jsonl",
        history.txn_count() - 1,
        isolation
    );
    let rc = engines::check(&history, Level::ReadCommitted, &CheckOptions::default())?;
    println!(
        "read committed: {}",
        if rc.is_consistent() {
            "holds"
        } else {
            "VIOLATED"
        }
    );
    let ser = engines::check_serializable(&history, Some(Duration::from_secs(60)))?;
    println!(
        "serializable: {}",
        match ser {
            SerVerdict::Serializable { .. } => "yes",
            SerVerdict::Unserializable => "NO (already an anomaly: lost updates)",
            SerVerdict::Unknown { .. } => "unknown",
        }
    );
    if matches!(ser, SerVerdict::Serializable { .. }) {
        let outcome = predict(
            &history,
            &PredictOptions::new(Level::ReadCommitted, Strategy::ApproxRelaxed)
                .with_timeout(Some(Duration::from_secs(60))),
        )?;
        println!(
            "prediction at read committed: {}",
            match outcome.verdict {
                Verdict::Predicted => "an unserializable execution is possible",
                Verdict::NoPrediction => "none",
                _ => "unknown",
            }
        );
    }
    setup.batch_execute("DROP TABLE accounts")?;
    Ok(())
}
