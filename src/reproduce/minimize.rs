//! The anomaly's transactions alone: a predicted history shrunk, transaction by transaction
//! (one pass of delta debugging, Zeller & Hildebrandt, TSE 2002, with single-element steps: the
//! one shrinker, [`crate::shrink`]),
//! to a set from which no transaction can be left out while the rest stays unserializable
//! (decided by the one decision core, [`crate::verdict`]); then scheduled at the target
//! isolation ([`super::schedule`]) for the reproducer files.
//!
//! The shrunk history keeps, of the kept transactions, only the operations on keys some kept
//! transaction writes (the rest cannot be part of a cycle among them). A read whose writer was
//! left out reads the *initial* version in the shrunk history; the reproducer's setup loads
//! that writer's version as the initial one ([`Minimized::initial_writer`]), so two reads of
//! one key from different left-out writers forbid leaving them out.

use rustc_hash::{FxHashMap, FxHashSet};

use super::schedule::{schedule, NoSchedule, Schedule};
use crate::check::Level;
use crate::history::{BuilderTxn, History, HistoryBuilder, KeyId, OpId, OpKind, ReadFrom, TxnId};
use crate::shrink::{self, Plan, Trial};
use crate::store::Isolation;
use crate::verdict::{decide, EvidenceChoice, Input, Limits, Outcome};

/// A shrunk history and how it maps back.
#[derive(Debug, Clone)]
pub struct Minimized {
    /// The shrunk history (its own transaction ids and labels).
    pub history: History,
    /// Per transaction of `history`: the transaction of the original history.
    pub origin: Vec<TxnId>,
    /// Per key of `history`: the original transaction whose version the initial state holds
    /// (`None`: the original initial state).
    pub initial_writer: Vec<Option<TxnId>>,
    /// Its schedule (set by [`Minimized::with_schedule`]; empty until then).
    pub schedule: Schedule,
}

/// The anomaly's transactions: the smallest set of `h`'s committed transactions (one pass,
/// latest first) whose shrunk history is still unserializable; `None` when `h` itself is not
/// (or the decision core cannot tell).
pub fn minimize(h: &History) -> Option<Minimized> {
    let committed: Vec<TxnId> = h.committed_txns().filter(|&t| t != 0).collect();
    let whole = qualify(h, &committed)?;
    let mut keep = vec![true; committed.len()];
    let latest_first: Vec<usize> = (0..committed.len()).rev().collect();
    let still_unserializable = |keep: &[bool]| {
        let kept: Vec<TxnId> = (0..committed.len())
            .filter(|&i| keep[i])
            .map(|i| committed[i])
            .collect();
        match qualify(h, &kept) {
            Some(m) => Trial::Fails(m),
            None => Trial::Passes,
        }
    };
    let shrunk = shrink::shrink(
        &mut keep,
        &latest_first,
        Plan::OnePass,
        still_unserializable,
        || false,
    );
    Some(shrunk.last_failing.unwrap_or(whole))
}

/// Transaction sets this small are tried one by one before shrinking the whole history.
pub const SMALL_CORE: usize = 3;

/// The anomaly's transactions as [`minimize`] finds them, preferring one the database can run:
/// the first set of at most [`SMALL_CORE`] committed transactions (smallest first, earliest
/// transactions first) whose shrunk history is unserializable and passes `runnable` (e.g.
/// has a schedule at the target isolation); else [`minimize`]'s set.
pub fn minimize_runnable(
    h: &History,
    runnable: &mut dyn FnMut(&Minimized) -> bool,
) -> Option<Minimized> {
    let committed: Vec<TxnId> = h.committed_txns().filter(|&t| t != 0).collect();
    let n = committed.len();
    for size in 2..=SMALL_CORE.min(n) {
        let mut idx: Vec<usize> = (0..size).collect();
        loop {
            let kept: Vec<TxnId> = idx.iter().map(|&i| committed[i]).collect();
            if let Some(m) = qualify(h, &kept) {
                if runnable(&m) {
                    return Some(m);
                }
            }
            // The next combination in lexicographic order.
            let mut i = size;
            while i > 0 && idx[i - 1] == n - size + i - 1 {
                i -= 1;
            }
            if i == 0 {
                break;
            }
            idx[i - 1] += 1;
            for j in i..size {
                idx[j] = idx[j - 1] + 1;
            }
        }
    }
    minimize(h)
}

impl Minimized {
    /// The same with a schedule of its history at `isolation`, or why there is none (in the
    /// original history's transaction names).
    pub fn with_schedule(
        mut self,
        isolation: Isolation,
        original: &History,
    ) -> Result<Minimized, NoSchedule> {
        match schedule(&self.history, isolation) {
            Ok(s) => {
                self.schedule = s;
                Ok(self)
            }
            Err(mut no) => {
                no.reason = self.relabel(&no.reason, original);
                Err(no)
            }
        }
    }

    /// `text` with the shrunk history's transaction names (`T1.1`) replaced by the original
    /// history's.
    pub fn relabel(&self, text: &str, original: &History) -> String {
        self.relabel_with(text, &|t| original.txn_label(t))
    }

    /// `text` with the shrunk history's transaction names (`T1.1`) replaced by `name` of the
    /// original history's transaction.
    pub fn relabel_with(&self, text: &str, name: &dyn Fn(TxnId) -> String) -> String {
        let names: FxHashMap<String, String> = (1..self.history.txn_count() as TxnId)
            .map(|t| (self.history.txn_label(t), name(self.origin[t as usize])))
            .collect();
        let mut out = String::with_capacity(text.len());
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            let starts_label = bytes[i] == b'T'
                && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            if starts_label {
                let mut j = i + 1;
                while j < text.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                    j += 1;
                }
                let token = text[i..j].trim_end_matches('.');
                if let Some(name) = names.get(token) {
                    out.push_str(name);
                    i += token.len();
                    continue;
                }
            }
            let c = text[i..].chars().next().expect("in range");
            out.push(c);
            i += c.len_utf8();
        }
        out
    }

    /// The reads of the original history the anomaly needs: each kept transaction's reads of
    /// the anomaly's keys from another transaction (or the initial state).
    pub fn needed_reads(&self, original: &History) -> FxHashSet<OpId> {
        let keys: FxHashSet<&str> = self
            .history
            .key_names()
            .iter()
            .map(String::as_str)
            .collect();
        let mut out = FxHashSet::default();
        for &t in &self.origin[1..] {
            for o in original.txn(t).ops() {
                let op = original.op(o);
                if op.kind == OpKind::Read
                    && !original.is_internal_read(o)
                    && keys.contains(original.key_name(op.key))
                {
                    out.insert(o);
                }
            }
        }
        out
    }
}

/// The shrunk history of `kept` if it is unserializable.
fn qualify(h: &History, kept: &[TxnId]) -> Option<Minimized> {
    let (history, origin, initial_writer) = shrink(h, kept)?;
    let input = Input::of(&history).ok()?;
    let limits = Limits {
        timeout: Some(std::time::Duration::from_secs(5)),
        explain: false,
        ..Limits::default()
    };
    let v = decide(&input, Level::Serializable, EvidenceChoice::Auto, &limits).ok()?;
    if v.verdict != Outcome::Violated {
        return None;
    }
    Some(Minimized {
        history,
        origin,
        initial_writer,
        schedule: Schedule {
            isolation: Isolation::ReadCommitted,
            steps: Vec::new(),
        },
    })
}

/// The history of `kept` (see the module documentation); `None` when two reads of a key see
/// different versions from outside `kept`.
#[allow(clippy::type_complexity)]
fn shrink(h: &History, kept: &[TxnId]) -> Option<(History, Vec<TxnId>, Vec<Option<TxnId>>)> {
    let kept_set: FxHashSet<TxnId> = kept.iter().copied().collect();
    let written: FxHashSet<KeyId> = kept
        .iter()
        .flat_map(|&t| h.keys_written(t).iter().copied())
        .collect();
    let mut b = HistoryBuilder::new(format!("{} (the anomaly's transactions)", h.source()));
    let mut keys: FxHashMap<KeyId, KeyId> = FxHashMap::default();
    let mut initial: Vec<Option<Option<TxnId>>> = Vec::new();
    let mut sessions: FxHashMap<u32, u32> = FxHashMap::default();
    let mut builder_txn: FxHashMap<TxnId, BuilderTxn> = FxHashMap::default();
    let mut origin = vec![0];
    let mut ordered: Vec<TxnId> = kept.to_vec();
    ordered.sort_by_key(|&t| (h.txn(t).session, t));
    for &t in &ordered {
        let tx = h.txn(t);
        let s = *sessions
            .entry(tx.session)
            .or_insert_with(|| b.session(h.sessions()[tx.session as usize].external_id));
        let has_ops = tx.ops().any(|o| written.contains(&h.op(o).key));
        if !has_ops {
            continue;
        }
        let bt = b.begin(s, tx.external_id);
        builder_txn.insert(t, bt);
        origin.push(t);
    }
    for &t in &ordered {
        let Some(&bt) = builder_txn.get(&t) else {
            continue;
        };
        for o in h.txn(t).ops() {
            let op = h.op(o);
            if !written.contains(&op.key) {
                continue;
            }
            let k = *keys.entry(op.key).or_insert_with(|| {
                initial.push(None);
                b.key(h.key_name(op.key))
            });
            match op.kind {
                OpKind::Write => b.write(bt, k, None, 0),
                OpKind::Read => {
                    let writer = h.writer_txn(o).unwrap_or(0);
                    let from = if writer == t {
                        ReadFrom::Txn(bt)
                    } else if kept_set.contains(&writer) {
                        ReadFrom::Txn(builder_txn[&writer])
                    } else {
                        // The initial version: the left-out writer's (or the original initial).
                        // Unsound when that version was made from a kept transaction's (the
                        // left-out writer read the key, directly or through other left-out
                        // writers, from a kept one): the initial state would come before the
                        // kept write it came after.
                        if derives_from_kept(h, writer, op.key, &kept_set) {
                            return None;
                        }
                        let w = (writer != 0).then_some(writer);
                        match initial[k as usize] {
                            None => initial[k as usize] = Some(w),
                            Some(prev) if prev == w => {}
                            Some(_) => return None,
                        }
                        ReadFrom::Initial
                    };
                    b.read(bt, k, None, from, 0);
                }
            }
        }
    }
    let history = b.build().ok()?;
    let initial_writer = (0..history.key_count())
        .map(|k| initial.get(k).copied().flatten().flatten())
        .collect();
    Some((history, origin, initial_writer))
}

/// Whether `writer`'s version of `key` was made from a version a transaction of `kept` wrote:
/// following, from `writer`, each transaction's first read of `key` to the transaction it read
/// from, until the initial state, a blind write, or a kept transaction.
fn derives_from_kept(h: &History, writer: TxnId, key: KeyId, kept: &FxHashSet<TxnId>) -> bool {
    let mut current = writer;
    // At most one step per transaction (a read-from chain of one key cannot revisit one).
    for _ in 0..h.txn_count() {
        if current == 0 {
            return false;
        }
        let first_read = h
            .txn(current)
            .ops()
            .find(|&o| h.op(o).key == key && h.op(o).kind == OpKind::Read);
        let Some(read) = first_read else {
            return false;
        };
        let from = h.writer_txn(read).unwrap_or(0);
        if from == current {
            return false;
        }
        if kept.contains(&from) {
            return true;
        }
        current = from;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A left-out writer whose version was made from a kept transaction's cannot stand for the
    /// initial state: with it, a fixture (kept) and a later reader of the key would look like a
    /// cycle (the reader "missing" the fixture's write) that the history does not have.
    #[test]
    fn a_left_out_writer_after_a_kept_one_is_not_the_initial_state() {
        let mut b = HistoryBuilder::new("t");
        let x = b.key("x");
        let y = b.key("y");
        let s0 = b.session(Some(0));
        let s1 = b.session(Some(1));
        let s2 = b.session(Some(2));
        // The fixture writes x and y.
        let fixture = b.begin(s0, None);
        b.write(fixture, x, None, 0);
        b.write(fixture, y, None, 0);
        // A deposit reads and writes x after the fixture.
        let deposit = b.begin(s1, None);
        b.read(deposit, x, None, ReadFrom::Txn(fixture), 0);
        b.write(deposit, x, None, 0);
        // A later deposit reads y from the fixture and x from the first deposit.
        let later = b.begin(s2, None);
        b.read(later, y, None, ReadFrom::Txn(fixture), 0);
        b.read(later, x, None, ReadFrom::Txn(deposit), 0);
        b.write(later, x, None, 0);
        let h = b.build().unwrap();
        // Serial (fixture, deposit, later): no core, and {fixture, later} is no anomaly.
        // Transactions 1, 2, 3 in the order they began: the fixture, the deposit, the later one.
        assert_eq!(h.writer_txn(h.txn(3).ops().nth(1).unwrap()), Some(2));
        assert!(qualify(&h, &[1, 3]).is_none());
        assert!(minimize(&h).is_none());
    }

    #[test]
    fn a_write_skew_among_bystanders_shrinks_to_its_two_transactions() {
        let mut b = HistoryBuilder::new("t");
        let x = b.key("x");
        let y = b.key("y");
        let z = b.key("z");
        let s1 = b.session(Some(1));
        let s2 = b.session(Some(2));
        let s3 = b.session(Some(3));
        // A bystander writing z, read by nobody of the skew.
        let t0 = b.begin(s3, None);
        b.write(t0, z, None, 0);
        let t1 = b.begin(s1, None);
        b.read(t1, x, None, ReadFrom::Initial, 0);
        b.read(t1, y, None, ReadFrom::Initial, 0);
        b.read(t1, z, None, ReadFrom::Txn(t0), 0);
        b.write(t1, x, None, 0);
        let t2 = b.begin(s2, None);
        b.read(t2, x, None, ReadFrom::Initial, 0);
        b.read(t2, y, None, ReadFrom::Initial, 0);
        b.write(t2, y, None, 0);
        let h = b.build().unwrap();
        let m = minimize(&h).unwrap();
        assert_eq!(m.history.txn_count(), 3, "initial + the two writers");
        let labels: Vec<String> = m.origin[1..].iter().map(|&t| h.txn_label(t)).collect();
        assert_eq!(labels, ["T1.1", "T2.1"]);
        assert_eq!(m.history.key_count(), 2, "z is left out");
        let m = m.with_schedule(Isolation::RepeatableRead, &h).unwrap();
        assert_eq!(m.schedule.steps.len(), 8);
        let no = m
            .clone()
            .with_schedule(Isolation::Serializable, &h)
            .unwrap_err();
        assert!(no.reason.contains("SERIALIZABLE"));
        assert_eq!(
            m.relabel("T1.1 and T2.1, T12.1.", &h),
            "T1.1 and T2.1, T12.1."
        );
    }
}
