//! Helpers shared by the writers: external ids, integer key names, value assignment, and the
//! notes about what a format drops.

use rustc_hash::{FxHashMap, FxHashSet};

use super::text::canonical_u64;
use crate::history::{History, KeyId, OpKind, TxnId, Unresolved, INITIAL_TXN};

/// Session ids to write: the history's own when every session has one and `allowed` accepts
/// it, else 1-based positions.
pub(crate) fn session_ids(h: &History, allowed: impl Fn(u64) -> bool) -> Vec<u64> {
    let own: Option<Vec<u64>> = h
        .sessions()
        .iter()
        .map(|s| s.external_id.filter(|&e| allowed(e)))
        .collect();
    own.unwrap_or_else(|| (1..=h.sessions().len() as u64).collect())
}

/// Transaction ids to write, indexed by [`TxnId`] (entry 0 unused): the history's own when
/// every transaction `included` has one, they are distinct (within a session when
/// `per_session`, else globally) and `allowed`; else positions (index in session when
/// `per_session`, else 1, 2, … over the included transactions).
pub(crate) fn txn_ids(
    h: &History,
    per_session: bool,
    included: impl Fn(TxnId) -> bool,
    allowed: impl Fn(u64) -> bool,
) -> Vec<u64> {
    let mut ids = vec![0u64; h.txn_count()];
    let groups: Vec<std::ops::Range<TxnId>> = if per_session {
        h.sessions().iter().map(|s| s.txns()).collect()
    } else {
        std::iter::once(1..h.txn_count() as TxnId).collect()
    };
    let mut next_global = 1u64;
    for group in groups {
        let mut seen = FxHashSet::default();
        let own_ok = group
            .clone()
            .filter(|&t| included(t))
            .all(|t| matches!(h.txn(t).external_id, Some(e) if allowed(e) && seen.insert(e)));
        for t in group.filter(|&t| included(t)) {
            ids[t as usize] = if own_ok {
                h.txn(t).external_id.unwrap_or_default()
            } else if per_session {
                u64::from(h.txn(t).index_in_session)
            } else {
                next_global += 1;
                next_global - 1
            };
        }
    }
    ids
}

/// Integer names of the keys: a key named by a canonical `u64` keeps it; the others get the
/// smallest numbers no key is named by. Returns the numbers and how many keys were renamed.
pub(crate) fn integer_keys(h: &History) -> (Vec<u64>, usize) {
    let own: Vec<Option<u64>> = h.key_names().iter().map(|n| canonical_u64(n)).collect();
    let renamed = own.iter().filter(|k| k.is_none()).count();
    if renamed == 0 {
        return (own.into_iter().flatten().collect(), 0);
    }
    let used: FxHashSet<u64> = own.iter().flatten().copied().collect();
    let mut next = 0u64;
    let keys = own
        .into_iter()
        .map(|k| {
            k.unwrap_or_else(|| {
                while used.contains(&next) {
                    next += 1;
                }
                next += 1;
                next - 1
            })
        })
        .collect();
    (keys, renamed)
}

/// How the initial transaction's writes get values.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum InitialValues {
    /// Every initial write is 0, and no other write may be 0 (Plume).
    Zero,
    /// Initial writes get values like any other write (AWDIT, where they become an ordinary
    /// transaction).
    Unique,
}

/// A value for every operation such that each read's value names exactly its writer.
pub(crate) struct ValuePlan {
    /// Indexed by operation id.
    pub values: Vec<u64>,
    /// Whether the history's own values could not be used.
    pub synthesized: bool,
}

/// Assigns values: the history's own where they are unique per key and present on every
/// non-initial write (and non-zero for [`InitialValues::Zero`]), else made-up ones (per key
/// 1, 2, … in operation order). Reads get their writer's value; reads without a writer get a
/// value no write of their key has. Fails on an ambiguous read (several writes of its value),
/// which no value-based format can express.
pub(crate) fn plan_values(h: &History, initial: InitialValues) -> Result<ValuePlan, String> {
    if let Some(&(op, _)) = h
        .unresolved()
        .iter()
        .find(|&&(_, r)| r == Unresolved::Ambiguous)
    {
        return Err(format!(
            "the read of key {} in {} observes a value written several times",
            h.key_name(h.op(op).key),
            h.txn_label(h.op(op).txn)
        ));
    }
    let ops = h.ops();
    let mut values = vec![0u64; ops.len()];
    let t0_ops = h.txn(INITIAL_TXN).ops();
    let is_initial = |i: usize| t0_ops.contains(&(i as u32));

    // Try the history's own values.
    let mut used: FxHashSet<(KeyId, u64)> = FxHashSet::default();
    let mut verbatim = true;
    for (i, op) in ops.iter().enumerate() {
        if op.kind != OpKind::Write || is_initial(i) {
            continue;
        }
        match op.value {
            Some(v) if !(initial == InitialValues::Zero && v == 0) && used.insert((op.key, v)) => {
                values[i] = v;
            }
            _ => {
                verbatim = false;
                break;
            }
        }
    }
    let mut next: Vec<u64> = Vec::new();
    if !verbatim {
        used.clear();
        next = vec![1u64; h.key_count()];
        for (i, op) in ops.iter().enumerate() {
            if op.kind == OpKind::Write && !is_initial(i) {
                values[i] = next[op.key as usize];
                next[op.key as usize] += 1;
            }
        }
    }
    // A value of `key` that no write has (verbatim: the smallest free one ≥ 1; else the
    // key's next counter value).
    let mut fresh_cache: FxHashMap<KeyId, u64> = FxHashMap::default();
    let mut fresh = |key: KeyId, used: &FxHashSet<(KeyId, u64)>, next: &mut [u64]| -> u64 {
        if !verbatim {
            let v = next[key as usize];
            next[key as usize] += 1;
            return v;
        }
        let start = fresh_cache.get(&key).copied().unwrap_or(1);
        let v = (start..)
            .find(|&v| !used.contains(&(key, v)))
            .unwrap_or(start);
        fresh_cache.insert(key, v);
        v
    };
    // Initial writes.
    for i in t0_ops.clone() {
        let op = &ops[i as usize];
        values[i as usize] = match initial {
            InitialValues::Zero => 0,
            InitialValues::Unique => match op.value {
                Some(v) if verbatim && used.insert((op.key, v)) => v,
                _ => {
                    let v = fresh(op.key, &used, &mut next);
                    used.insert((op.key, v));
                    v
                }
            },
        };
    }
    // Reads.
    for (i, op) in ops.iter().enumerate() {
        if op.kind != OpKind::Read {
            continue;
        }
        values[i] = match h.read_from(i as u32) {
            Some(w) => values[w as usize],
            None => match op.value {
                Some(v)
                    if verbatim
                        && !used.contains(&(op.key, v))
                        && !(initial == InitialValues::Zero && v == 0) =>
                {
                    v
                }
                _ => fresh(op.key, &used, &mut next),
            },
        };
    }
    Ok(ValuePlan {
        values,
        synthesized: !verbatim,
    })
}

/// The note for made-up values, if any.
pub(crate) fn values_note(h: &History, plan_synthesized: bool, format: &str) -> Option<String> {
    if !plan_synthesized {
        return None;
    }
    let any_value = h
        .ops()
        .iter()
        .enumerate()
        .any(|(i, o)| o.value.is_some() && !h.is_implicit_initial_write(i as u32));
    Some(if any_value {
        format!(
            "the history's values are not usable as {format} values (missing, repeated{}), \
             so unique values were made up",
            if format == "plume" { " or 0" } else { "" }
        )
    } else {
        format!("the history has no values; unique {format} values were made up")
    })
}

/// The notes of the formats whose keys and values are integers (Plume, AWDIT): key names
/// replaced by numbers, values made up (the initial writes' values as `initial` says), then
/// [`structure_notes`].
pub(crate) fn integer_format_notes(
    h: &History,
    initial: InitialValues,
    format: &str,
) -> Vec<String> {
    let mut notes = Vec::new();
    let renamed = integer_keys(h).1;
    if renamed > 0 {
        notes.push(format!(
            "{format} keys are integers; {renamed} key name(s) that are not get unused numbers"
        ));
    }
    if let Ok(plan) = plan_values(h, initial) {
        notes.extend(values_note(h, plan.synthesized, format));
    }
    structure_notes(h, &mut notes, format);
    notes
}

/// How many aborted transactions have operations (what a format without aborts drops).
pub(crate) fn aborted_with_ops(h: &History) -> usize {
    (1..h.txn_count() as TxnId)
        .filter(|&t| !h.txn(t).is_committed() && !h.txn(t).ops().is_empty())
        .count()
}

/// The note that `format` drops the reads of the initial transaction, if it has any.
pub(crate) fn initial_reads_note(h: &History, format: &str) -> Option<String> {
    let initial_reads = h
        .txn_ops(INITIAL_TXN)
        .iter()
        .filter(|o| o.kind == OpKind::Read)
        .count();
    (initial_reads > 0).then(|| {
        format!(
            "{format} cannot carry reads of the initial transaction; {initial_reads} are dropped"
        )
    })
}

/// Notes shared by the text formats: timestamps, empty transactions and sessions.
pub(crate) fn structure_notes(h: &History, notes: &mut Vec<String>, format: &str) {
    if h.has_timestamps() {
        notes.push(format!(
            "{format} cannot carry timestamps; they are dropped"
        ));
    }
    let empty = (1..h.txn_count() as TxnId)
        .filter(|&t| h.txn(t).ops().is_empty())
        .count();
    if empty > 0 {
        notes.push(format!(
            "{empty} transaction(s) without operations cannot be written in {format}"
        ));
    }
    notes.extend(initial_reads_note(h, format));
    let mut used = vec![false; h.key_count()];
    for (i, op) in h.ops().iter().enumerate() {
        if !h.is_implicit_initial_write(i as u32) {
            used[op.key as usize] = true;
        }
    }
    let unused = used.iter().filter(|&&u| !u).count();
    if unused > 0 {
        notes.push(format!(
            "{unused} key(s) appear in no operation and are not written in {format}"
        ));
    }
    let empty_sessions = h.sessions().iter().filter(|s| s.txns().is_empty()).count();
    if empty_sessions > 0 {
        notes.push(format!(
            "{empty_sessions} session(s) without transactions cannot be written in {format}"
        ));
    }
}

/// The note for keys that appear in no operation (formats without a key list drop them).
pub(crate) fn unused_keys_note(h: &History, format: &str) -> Option<String> {
    let mut used = vec![false; h.key_count()];
    for (i, op) in h.ops().iter().enumerate() {
        if !h.is_implicit_initial_write(i as u32) {
            used[op.key as usize] = true;
        }
    }
    let unused = used.iter().filter(|&&u| !u).count();
    (unused > 0)
        .then(|| format!("{unused} key(s) appear in no operation and are not written in {format}"))
}

/// The first read by a committed transaction of a write of an aborted transaction (other
/// than its own), as `(read, writer txn)`.
pub(crate) fn committed_read_of_aborted(h: &History) -> Option<(u32, TxnId)> {
    h.ops().iter().enumerate().find_map(|(i, op)| {
        if op.kind != OpKind::Read || !h.txn(op.txn).is_committed() {
            return None;
        }
        let w = h.writer_txn(i as u32)?;
        (w != op.txn && !h.txn(w).is_committed()).then_some((i as u32, w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::HistoryBuilder;

    #[test]
    fn integer_keys_rename_only_what_they_must() {
        let mut b = HistoryBuilder::new("k");
        for name in ["1", "Set(3:4)", "0", "x", "007"] {
            b.key(name);
        }
        let h = b.build().unwrap();
        assert_eq!(integer_keys(&h), (vec![1, 2, 0, 3, 4], 3));
    }
}
