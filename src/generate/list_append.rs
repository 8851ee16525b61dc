//! Random Elle list-append histories (Kingsbury & Alvaro VLDB'20 §4; the shape of Jepsen's
//! `jepsen.tests.cycle.append` workload): processes invoke transactions of `[:append k v]` and
//! `[:r k nil]` micro-operations over a small pool of keys, each key retired for a fresh one
//! after `max_appends` appends (Jepsen's `:max-writes-per-key`), every value unique per key.
//!
//! A simulated store runs each transaction atomically at its completion, in completion order,
//! so with `stale_ratio = 0` the history is strictly serializable. With `stale_ratio > 0` a
//! read returns, with that probability, a random prefix of the key's list instead (a stale
//! snapshot: every read is still a prefix of the final list, so the version orders stay
//! compatible), which makes anomalies of every kind, from aborted-free G-single to G2. With
//! `snapshot_reads` every read sees the store as of the transaction's invocation instead.
//! Completions interleave with other processes' invocations, so the real-time order is partial.
//! Deterministic by seed.

use std::fmt::Write as _;

use super::rng::Rng;

/// The shape of a list-append history.
#[derive(Debug, Clone, PartialEq)]
pub struct ListAppendParams {
    /// Transactions (completed; each also has its invocation).
    pub txns: usize,
    /// Client processes (concurrency).
    pub processes: usize,
    /// Most micro-operations per transaction (each transaction has 1 to this many).
    pub max_ops: usize,
    /// Keys in use at a time.
    pub active_keys: usize,
    /// Appends to a key before a fresh key replaces it.
    pub max_appends: usize,
    /// Probability that a micro-operation is a read.
    pub read_ratio: f64,
    /// Probability that a read returns a stale prefix of the list.
    pub stale_ratio: f64,
    /// Reads see the store as it was when the transaction was invoked (a snapshot; its
    /// appends still land at its completion): prefix consistent, and, with no
    /// first-committer-wins, lost updates and write skews (snapshot isolation and
    /// serializability violated). A transaction's reads come before its appends.
    pub snapshot_reads: bool,
    /// With `snapshot_reads`, a transaction whose appended keys another transaction appended
    /// to since its invocation fails (`:fail`, its appends not applied): snapshot isolation's
    /// first committer wins, so the history is snapshot isolated (write skews remain).
    pub first_committer_wins: bool,
    /// Probability that a completion is `:info` (the client never learned the outcome): the
    /// transaction then commits or not with equal probability (an :info one that first
    /// committer wins would fail does not), and the completion repeats the invocation (its
    /// reads `nil`), as Jepsen writes it. With `max_appends`, keys end in appends no read
    /// shows: committed ones and :info ones.
    pub info_ratio: f64,
    /// Seed.
    pub seed: u64,
}

impl Default for ListAppendParams {
    /// Jepsen's defaults: 10 keys in use, 32 appends per key, transactions of up to 4
    /// micro-operations; 10 processes.
    fn default() -> Self {
        ListAppendParams {
            txns: 1000,
            processes: 10,
            max_ops: 4,
            active_keys: 10,
            max_appends: 32,
            read_ratio: 0.5,
            stale_ratio: 0.0,
            snapshot_reads: false,
            first_committer_wins: false,
            info_ratio: 0.0,
            seed: 0,
        }
    }
}

/// A micro-operation: append `value` to `key`, or read `key` (`value`: the length of the
/// key's list at invocation, for snapshot reads).
#[derive(Clone, Copy)]
struct Mop {
    append: bool,
    key: u32,
    value: u64,
}

/// An invoked transaction: its micro-operations, and the length of each key it appends to at
/// its invocation.
type OpenTxn = (Vec<Mop>, Vec<(u32, usize)>);

/// The history as EDN, one operation map per line (`:invoke` and `:ok` pairs).
pub fn elle_list_append(params: &ListAppendParams) -> String {
    let mut rng = Rng::new(params.seed);
    let processes = params.processes.max(1);
    let active_keys = params.active_keys.max(1);
    let max_ops = params.max_ops.max(1);
    // Key state: its list, and appends handed out so far.
    let mut lists: Vec<Vec<u64>> = Vec::new();
    let mut handed: Vec<u64> = Vec::new();
    let mut active: Vec<u32> = Vec::with_capacity(active_keys);
    for _ in 0..active_keys {
        active.push(lists.len() as u32);
        lists.push(Vec::new());
        handed.push(0);
    }
    // Per process: its open transaction, and the length of each key it appends to at its
    // invocation (for first committer wins).
    let mut open: Vec<Option<OpenTxn>> = vec![None; processes];
    let (mut invoked, mut completed, mut index) = (0usize, 0usize, 0u64);
    let mut out = String::with_capacity(params.txns * 120);
    while completed < params.txns {
        let p = rng.below(processes as u64) as usize;
        match open[p].take() {
            None if invoked < params.txns => {
                let n = 1 + rng.below(max_ops as u64) as usize;
                let mut mops = Vec::with_capacity(n);
                for _ in 0..n {
                    let slot = rng.below(active.len() as u64) as usize;
                    let key = active[slot];
                    if rng.next_f64() < params.read_ratio {
                        mops.push(Mop {
                            append: false,
                            key,
                            value: lists[key as usize].len() as u64,
                        });
                    } else {
                        handed[key as usize] += 1;
                        let value = handed[key as usize];
                        if value as usize >= params.max_appends.max(1) {
                            // Retire the key: later transactions use a fresh one.
                            active[slot] = lists.len() as u32;
                            lists.push(Vec::new());
                            handed.push(0);
                        }
                        mops.push(Mop {
                            append: true,
                            key,
                            value,
                        });
                    }
                }
                if params.snapshot_reads {
                    // Reads first (a read after the transaction's own append would not be a
                    // prefix of the final list).
                    mops.sort_by_key(|m| m.append);
                }
                write_op(&mut out, "invoke", p, index, &mops, None);
                index += 1;
                invoked += 1;
                let lengths = mops
                    .iter()
                    .filter(|m| m.append)
                    .map(|m| (m.key, lists[m.key as usize].len()))
                    .collect();
                open[p] = Some((mops, lengths));
            }
            None => {}
            Some((mops, lengths)) => {
                let conflict = params.snapshot_reads
                    && params.first_committer_wins
                    && lengths
                        .iter()
                        .any(|&(k, len)| lists[k as usize].len() != len);
                let info = params.info_ratio > 0.0 && rng.next_f64() < params.info_ratio;
                if conflict || (info && rng.next_f64() < 0.5) {
                    // Failed, or :info and not committed: nothing applied.
                    write_op(
                        &mut out,
                        if info { "info" } else { "fail" },
                        p,
                        index,
                        &mops,
                        None,
                    );
                    index += 1;
                    completed += 1;
                    continue;
                }
                let mut reads: Vec<Vec<u64>> = Vec::new();
                let mut wrote: Vec<u32> = Vec::new();
                for m in &mops {
                    let list = &mut lists[m.key as usize];
                    if m.append {
                        list.push(m.value);
                        wrote.push(m.key);
                    } else {
                        let stale = !wrote.contains(&m.key) && rng.next_f64() < params.stale_ratio;
                        let len = if params.snapshot_reads {
                            m.value as usize
                        } else if stale {
                            rng.below(list.len() as u64 + 1) as usize
                        } else {
                            list.len()
                        };
                        reads.push(list[..len].to_vec());
                    }
                }
                if info {
                    write_op(&mut out, "info", p, index, &mops, None);
                } else {
                    write_op(&mut out, "ok", p, index, &mops, Some(&reads));
                }
                index += 1;
                completed += 1;
            }
        }
    }
    out
}

fn write_op(
    out: &mut String,
    kind: &str,
    process: usize,
    index: u64,
    mops: &[Mop],
    reads: Option<&[Vec<u64>]>,
) {
    let _ = write!(out, "{{:type :{kind}, :f :txn, :value [");
    let mut r = 0;
    for (i, m) in mops.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if m.append {
            let _ = write!(out, "[:append {} {}]", m.key, m.value);
        } else {
            match reads {
                None => {
                    let _ = write!(out, "[:r {} nil]", m.key);
                }
                Some(reads) => {
                    let _ = write!(out, "[:r {} [", m.key);
                    for (j, v) in reads[r].iter().enumerate() {
                        if j > 0 {
                            out.push(' ');
                        }
                        let _ = write!(out, "{v}");
                    }
                    out.push_str("]]");
                    r += 1;
                }
            }
        }
    }
    let _ = writeln!(out, "], :process {process}, :index {index}}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_history() {
        let p = ListAppendParams {
            txns: 50,
            stale_ratio: 0.3,
            ..ListAppendParams::default()
        };
        assert_eq!(elle_list_append(&p), elle_list_append(&p));
        let other = ListAppendParams {
            seed: 1,
            ..p.clone()
        };
        assert_ne!(elle_list_append(&p), elle_list_append(&other));
        let text = elle_list_append(&p);
        assert_eq!(text.lines().count(), 100);
        assert_eq!(text.lines().filter(|l| l.contains(":type :ok")).count(), 50);
    }

    #[test]
    fn keys_are_retired_after_max_appends() {
        let p = ListAppendParams {
            txns: 400,
            read_ratio: 0.0,
            max_appends: 5,
            active_keys: 2,
            ..ListAppendParams::default()
        };
        let text = elle_list_append(&p);
        assert!(!text.contains("[:append 0 6]"));
        assert!(text.contains("[:append 0 5]"));
    }
}
