//! Serializability as a direct Z3 total-order check: Biswas & Enea (OOPSLA'19, §2.2, the
//! Serializability axiom) in the form IsoPredict (PLDI'24, §2.2 eq. 1 and §5 "Checking
//! serializability") encodes it.
//!
//! A history is serializable iff some strict total order `co` of its committed transactions
//! contains session order and write–read order, and for every read of key `k` by `t3` from
//! `t2` and every other writer `t1` of `k`: `co(t1, t3) ⇒ co(t1, t2)` (no writer of `k` is
//! committed between the writer a read observes and the reader).
//!
//! Encoding: one integer position `q(t)` per committed transaction, difference constraints
//! only (no `Distinct`):
//! - `q(p) < q(t)` for each transaction and its committed session predecessor `p`
//!   (the initial transaction is `q = 0`, before every session);
//! - `q(t2) < q(t3)` for each write–read pair;
//! - `q(t1) ≤ q(t3) ⇒ q(t1) < q(t2)` for each read-from triple `(k, t2, t3)` and other
//!   committed writer `t1` of `k`.
//!
//! The antecedent is `≤`, not `<`: then any assignment satisfying the constraints can have
//! its ties broken arbitrarily (here by transaction id) and stays a witness, because a tie
//! `q(t1) = q(t3)` already forces `q(t1) < q(t2)`; and for distinct positions `≤` and `<`
//! coincide. So the constraints are satisfiable iff a serial order exists, and the witness is
//! the transactions sorted by `(q, id)`, re-checked by [`verify_serial_order`].
//!
//! Transactions are compared at transaction level (only a transaction's last write of a key
//! is visible to others, IsoPredict §2.1); reads of a transaction's own writes take no part.

use std::time::{Duration, Instant};

use z3::ast::{Bool, Int};
use z3::{Params, SatResult, Solver};

use crate::history::{History, KeyId, OpId, OpKind, TxnId, INITIAL_TXN};

/// The answer of [`check_serializable`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum SerVerdict {
    /// A serial order exists; `order` lists the committed transactions, the initial one first.
    Serializable {
        /// The committed transactions in a serial order that explains every read.
        order: Vec<TxnId>,
    },
    /// No serial order exists.
    Unserializable,
    /// Z3 gave up (timeout or resource limit).
    Unknown {
        /// Z3's reason.
        reason: String,
    },
}

/// A history the check cannot interpret at transaction level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SerError {
    /// A committed transaction's external read has no committed writer (thin-air or aborted
    /// read): no execution, serial or not, produces it.
    #[error("read op {read} of a committed transaction has no committed writer")]
    ReadWithoutCommittedWriter {
        /// The read.
        read: OpId,
    },
}

/// The transaction-level write–read facts of the committed part of a history:
/// distinct `(key, writer, reader)` triples of external reads.
fn read_from_triples(h: &History) -> Result<Vec<(KeyId, TxnId, TxnId)>, SerError> {
    let mut triples = Vec::new();
    for t in h.committed_txns() {
        for o in h.txn(t).ops() {
            let op = h.op(o);
            if op.kind != OpKind::Read {
                continue;
            }
            match h.writer_txn(o) {
                Some(w) if w == t => {}
                Some(w) if h.txn(w).is_committed() => triples.push((op.key, w, t)),
                _ => return Err(SerError::ReadWithoutCommittedWriter { read: o }),
            }
        }
    }
    triples.sort_unstable();
    triples.dedup();
    Ok(triples)
}

/// Why a `sat` answer came without a usable model: Z3 was interrupted (time or memory
/// watchdog) while giving it.
pub(crate) const INTERRUPTED_BEFORE_MODEL: &str =
    "the solver was interrupted before giving its model";

/// The committed transactions of `h` sorted by their positions (from [`positions_solver`])
/// in the solver's model after `sat`; `None` when there is no model or no value (Z3 was
/// interrupted).
pub(crate) fn order_by_position(
    solver: &Solver,
    h: &History,
    positions: &[Option<Int>],
) -> Option<Vec<TxnId>> {
    let model = solver.get_model()?;
    let mut keyed = h
        .committed_txns()
        .map(|t| {
            let position = positions[t as usize].as_ref()?;
            model
                .eval(position, true)
                .and_then(|v| v.as_i64())
                .map(|v| (v, t))
        })
        .collect::<Option<Vec<(i64, TxnId)>>>()?;
    keyed.sort_unstable();
    Some(keyed.into_iter().map(|(_, t)| t).collect())
}

/// A solver that gives up after `timeout`, and one integer position per transaction for the
/// order both Z3 checks look for: 0 for t0, a fresh constant `q{t}` for each committed
/// transaction, `None` for an aborted one.
pub(crate) fn positions_solver(
    committed: &[bool],
    timeout: Option<Duration>,
) -> (Solver, Vec<Option<Int>>) {
    let solver = Solver::new();
    if let Some(t) = timeout {
        let mut params = Params::new();
        params.set_u32("timeout", t.as_millis().clamp(1, u32::MAX as u128) as u32);
        solver.set_params(&params);
    }
    let q = (0..committed.len() as TxnId)
        .map(|t| {
            if t == INITIAL_TXN {
                Some(Int::from_i64(0))
            } else if committed[t as usize] {
                Some(Int::new_const(format!("q{t}")))
            } else {
                None
            }
        })
        .collect();
    (solver, q)
}

/// Decides whether the committed transactions of `h` are serializable, with Z3, giving up
/// after `timeout` (none: no limit), building the problem included. A serializable answer
/// carries a verified serial order.
pub(crate) fn check_serializable(
    h: &History,
    timeout: Option<Duration>,
) -> Result<SerVerdict, SerError> {
    let deadline = timeout.map(|t| Instant::now() + t);
    let out_of_time = || SerVerdict::Unknown {
        reason: "timeout (while building the serializability problem)".to_string(),
    };
    let triples = read_from_triples(h)?;
    let committed: Vec<bool> = h.txns().iter().map(|t| t.is_committed()).collect();
    // Committed writers of each key, ascending.
    let writers: Vec<Vec<TxnId>> = (0..h.key_count() as KeyId)
        .map(|k| {
            h.writers_of(k)
                .iter()
                .copied()
                .filter(|&w| committed[w as usize])
                .collect()
        })
        .collect();

    let (solver, q) = positions_solver(&committed, timeout);
    let pos = |t: TxnId| q[t as usize].as_ref().expect("committed transaction");

    // Session order: each committed transaction after its committed predecessor (or t0).
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let p = h.so_predecessor(t).unwrap_or(INITIAL_TXN);
        solver.assert(pos(p).lt(pos(t)));
    }
    // Write–read order.
    let mut pairs: Vec<(TxnId, TxnId)> = triples.iter().map(|&(_, w, r)| (w, r)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    for &(w, r) in &pairs {
        if w != INITIAL_TXN {
            solver.assert(pos(w).lt(pos(r)));
        }
    }
    // Arbitration: no other writer of k between a writer and its reader. The deadline is
    // checked every 64 read-from triples (each adds up to one clause per writer of its key).
    for (i, &(k, t2, t3)) in triples.iter().enumerate() {
        if i % 64 == 0 && deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(out_of_time());
        }
        for &t1 in &writers[k as usize] {
            if t1 == t2 || t1 == t3 || t1 == INITIAL_TXN || h.so_before(t1, t2) {
                continue; // q(t1) < q(t2) holds anyway
            }
            if h.so_before(t3, t1) {
                continue; // the antecedent q(t1) ≤ q(t3) is false anyway
            }
            let after_reader = pos(t3).lt(pos(t1));
            let before_writer = if t2 == INITIAL_TXN {
                Bool::from_bool(false)
            } else {
                pos(t1).lt(pos(t2))
            };
            solver.assert(Bool::or(&[after_reader, before_writer]));
        }
    }

    if let Some(d) = deadline {
        // Solving gets what construction left.
        let left = d.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(out_of_time());
        }
        let mut params = Params::new();
        params.set_u32(
            "timeout",
            left.as_millis().clamp(1, u32::MAX as u128) as u32,
        );
        solver.set_params(&params);
    }
    match crate::interrupt::check(&solver, |s| s.check()) {
        SatResult::Unsat => Ok(SerVerdict::Unserializable),
        SatResult::Unknown => Ok(SerVerdict::Unknown {
            reason: solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".to_string()),
        }),
        SatResult::Sat => {
            let Some(order) = order_by_position(&solver, h, &q) else {
                return Ok(SerVerdict::Unknown {
                    reason: INTERRUPTED_BEFORE_MODEL.to_string(),
                });
            };
            if let Err(problem) = verify_serial_order(h, &order) {
                // The encoding and the verifier disagree: never claim a witness we cannot
                // confirm.
                return Ok(SerVerdict::Unknown {
                    reason: format!("internal: Z3's serial order fails verification: {problem}"),
                });
            }
            Ok(SerVerdict::Serializable { order })
        }
    }
}

/// Checks that `order` is a serial order of the committed transactions of `h`: a permutation
/// of them with the initial transaction first, consistent with session order, every reader
/// after its writer, and no other writer of the key between a writer and its reader.
/// Returns the first problem in words.
pub fn verify_serial_order(h: &History, order: &[TxnId]) -> Result<(), String> {
    let n = h.txn_count();
    let mut pos = vec![u32::MAX; n];
    for (i, &t) in order.iter().enumerate() {
        if t as usize >= n || !h.txn(t).is_committed() {
            return Err(format!("t{t} is not a committed transaction"));
        }
        if pos[t as usize] != u32::MAX {
            return Err(format!("t{t} appears twice"));
        }
        pos[t as usize] = i as u32;
    }
    if let Some(t) = h.committed_txns().find(|&t| pos[t as usize] == u32::MAX) {
        return Err(format!("t{t} is missing"));
    }
    if order.first() != Some(&INITIAL_TXN) {
        return Err("the initial transaction is not first".to_string());
    }
    for t in h.committed_txns().filter(|&t| t != INITIAL_TXN) {
        let p = h.so_predecessor(t).unwrap_or(INITIAL_TXN);
        if pos[p as usize] > pos[t as usize] {
            return Err(format!("t{t} comes before its session predecessor t{p}"));
        }
    }
    // Positions of the committed writers of each key, sorted.
    let mut writer_pos: Vec<Vec<u32>> = vec![Vec::new(); h.key_count()];
    for (k, slot) in writer_pos.iter_mut().enumerate() {
        slot.extend(
            h.writers_of(k as KeyId)
                .iter()
                .filter(|&&w| h.txn(w).is_committed())
                .map(|&w| pos[w as usize]),
        );
        slot.sort_unstable();
    }
    // Every external read is checked where it is (a run's millions of reads are not
    // collected); the error is that of the least failing (key, writer, reader) triple, as
    // when the distinct triples were checked in order.
    let mut first_error: Option<((KeyId, TxnId, TxnId), String)> = None;
    for t in h.committed_txns() {
        for o in h.txn(t).ops() {
            let op = h.op(o);
            if op.kind != OpKind::Read {
                continue;
            }
            let w = match h.writer_txn(o) {
                Some(w) if w == t => continue,
                Some(w) if h.txn(w).is_committed() => w,
                _ => return Err(SerError::ReadWithoutCommittedWriter { read: o }.to_string()),
            };
            let triple = (op.key, w, t);
            if first_error
                .as_ref()
                .is_some_and(|(least, _)| *least <= triple)
            {
                continue;
            }
            if let Some(e) = misplaced_read(h, order, &pos, &writer_pos, triple) {
                first_error = Some((triple, e));
            }
        }
    }
    match first_error {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Why the read-from triple `(k, w, r)` does not hold in the serial order whose positions are
/// `pos` (`writer_pos`: each key's committed writers' positions, sorted), if it does not.
fn misplaced_read(
    h: &History,
    order: &[TxnId],
    pos: &[u32],
    writer_pos: &[Vec<u32>],
    (k, w, r): (KeyId, TxnId, TxnId),
) -> Option<String> {
    let (pw, pr) = (pos[w as usize], pos[r as usize]);
    if pw > pr {
        return Some(format!("t{r} reads {} from later t{w}", h.key_name(k)));
    }
    let writers = &writer_pos[k as usize];
    let first_after = writers.partition_point(|&p| p <= pw);
    match writers.get(first_after) {
        Some(&p) if p < pr => Some(format!(
            "t{} writes {} between t{w} and its reader t{r}",
            order[p as usize],
            h.key_name(k)
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryBuilder, ReadFrom};

    /// Two deposits on one account (IsoPredict Fig. 1). `second_reads_first`: Fig. 1a
    /// (serializable); otherwise both read the initial balance (Fig. 1b, a lost update).
    fn deposits(second_reads_first: bool) -> History {
        let mut b = HistoryBuilder::new("deposits");
        let acct = b.key("acct");
        let s1 = b.session(Some(1));
        let s2 = b.session(Some(2));
        let t1 = b.begin(s1, None);
        b.read(t1, acct, None, ReadFrom::Initial, 0);
        b.write(t1, acct, None, 0);
        let t2 = b.begin(s2, None);
        let from = if second_reads_first {
            ReadFrom::Txn(t1)
        } else {
            ReadFrom::Initial
        };
        b.read(t2, acct, None, from, 0);
        b.write(t2, acct, None, 0);
        b.build().unwrap()
    }

    #[test]
    fn serial_deposits_have_a_witness() {
        let h = deposits(true);
        match check_serializable(&h, None).unwrap() {
            SerVerdict::Serializable { order } => assert_eq!(order, vec![0, 1, 2]),
            other => panic!("expected serializable, got {other:?}"),
        }
    }

    #[test]
    fn lost_update_is_unserializable() {
        let h = deposits(false);
        assert_eq!(
            check_serializable(&h, None).unwrap(),
            SerVerdict::Unserializable
        );
    }

    #[test]
    fn write_skew_is_unserializable() {
        // t1: r(x)=0 w(y); t2: r(y)=0 w(x).
        let mut b = HistoryBuilder::new("skew");
        let x = b.key("x");
        let y = b.key("y");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.read(t1, x, None, ReadFrom::Initial, 0);
        b.write(t1, y, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, y, None, ReadFrom::Initial, 0);
        b.write(t2, x, None, 0);
        let h = b.build().unwrap();
        assert_eq!(
            check_serializable(&h, None).unwrap(),
            SerVerdict::Unserializable
        );
    }

    #[test]
    fn verifier_rejects_bad_orders() {
        let h = deposits(true);
        assert!(verify_serial_order(&h, &[0, 1, 2]).is_ok());
        assert!(verify_serial_order(&h, &[0, 2, 1]).is_err());
        assert!(verify_serial_order(&h, &[1, 0, 2]).is_err());
        assert!(verify_serial_order(&h, &[0, 1]).is_err());
        let lost = deposits(false);
        // t2 reads the initial acct, but t1 writes acct in between.
        assert!(verify_serial_order(&lost, &[0, 1, 2]).is_err());
        assert!(verify_serial_order(&lost, &[0, 2, 1]).is_err());
    }

    #[test]
    fn aborted_transactions_take_no_part() {
        let mut b = HistoryBuilder::new("abort");
        let x = b.key("x");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.read(t1, x, None, ReadFrom::Initial, 0);
        b.write(t1, x, None, 0);
        b.abort(t1);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Initial, 0);
        b.write(t2, x, None, 0);
        let h = b.build().unwrap();
        assert!(matches!(
            check_serializable(&h, None).unwrap(),
            SerVerdict::Serializable { .. }
        ));
    }

    #[test]
    fn building_the_problem_honours_the_timeout() {
        use crate::generate::{generate, Consistency, GenerateParams, KeyDistribution};
        // 4,000 transactions on 50 hot keys: ~10^7 arbitration clauses, far more than 0.2 s
        // of construction.
        let h = generate(&GenerateParams {
            sessions: 8,
            txns_per_session: 500,
            ops_per_txn: 8,
            keys: 50,
            read_ratio: 0.6,
            distribution: KeyDistribution::Zipf { exponent: 1.1 },
            consistency: Consistency::Serializable,
            seed: 3,
            ..GenerateParams::default()
        })
        .unwrap();
        let start = Instant::now();
        let verdict = check_serializable(&h, Some(Duration::from_millis(200))).unwrap();
        let took = start.elapsed();
        assert!(
            matches!(&verdict, SerVerdict::Unknown { reason } if reason.contains("timeout")),
            "{verdict:?}"
        );
        assert!(took < Duration::from_secs(3), "took {took:?}");
    }

    #[test]
    fn agrees_with_the_oracle_on_generated_histories() {
        use crate::check::{oracle, Level};
        use crate::generate::{generate, Consistency, GenerateParams};
        let mut unserializable = 0;
        for seed in 0..600 {
            let consistency = [
                Consistency::None,
                Consistency::Causal,
                Consistency::Serializable,
            ][seed as usize % 3];
            let h = generate(&GenerateParams {
                sessions: 3,
                txns_per_session: 2,
                ops_per_txn: 3,
                keys: 3,
                abort_ratio: 0.1,
                consistency,
                seed,
                ..GenerateParams::default()
            })
            .unwrap();
            let Ok(verdict) = check_serializable(&h, None) else {
                // Reads of aborted or unwritten values: the oracle rejects them too.
                assert_eq!(oracle::satisfies(&h, Level::Serializable), Some(false));
                continue;
            };
            let expected = oracle::satisfies(&h, Level::Serializable).unwrap();
            match verdict {
                SerVerdict::Serializable { order } => {
                    assert!(expected, "seed {seed}: oracle says unserializable");
                    verify_serial_order(&h, &order).unwrap();
                }
                SerVerdict::Unserializable => {
                    assert!(!expected, "seed {seed}: oracle says serializable");
                    unserializable += 1;
                }
                SerVerdict::Unknown { reason } => panic!("seed {seed}: unknown: {reason}"),
            }
        }
        assert!(
            unserializable > 20,
            "the sample has unserializable histories"
        );
    }

    #[test]
    fn reads_of_aborted_writes_are_errors() {
        let mut b = HistoryBuilder::new("dirty");
        let x = b.key("x");
        let s1 = b.session(None);
        let s2 = b.session(None);
        let t1 = b.begin(s1, None);
        b.write(t1, x, None, 0);
        b.abort(t1);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Txn(t1), 0);
        let h = b.build().unwrap();
        assert!(check_serializable(&h, None).is_err());
    }
}
