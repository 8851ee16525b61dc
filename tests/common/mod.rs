//! Shared test helpers: random histories within what each format can carry, and an exact
//! comparison of two histories.

#![allow(dead_code)]

pub mod cli;
pub mod postgres;
pub mod shipped;
pub mod signal;

use isopredict::formats::{self, Format};
use isopredict::history::{
    BuilderTxn, History, HistoryBuilder, KeyId, ReadFrom, SessionId, Timestamps, TxnId,
};
use proptest::prelude::*;

/// One operation of a random history: a write, or a read whose writer is picked by `choice`
/// (and, for the JSON domain, by `style`: value, transaction, exact operation, initial).
#[derive(Clone, Debug)]
pub struct OpSpec {
    pub write: bool,
    pub key: u8,
    pub choice: u16,
    pub style: u8,
}

#[derive(Clone, Debug)]
pub struct TxnSpec {
    pub aborted: bool,
    pub ext: Option<u16>,
    pub ops: Vec<OpSpec>,
    pub timestamps: Option<(u32, u32)>,
}

#[derive(Clone, Debug)]
pub struct SessionSpec {
    pub ext: Option<u16>,
    pub txns: Vec<TxnSpec>,
}

#[derive(Clone, Debug)]
pub struct Spec {
    pub keys: u8,
    pub initial: Vec<u8>,
    pub sessions: Vec<SessionSpec>,
    pub initial_value: bool,
}

/// Random history shapes: up to 4 keys, 3 sessions, 4 transactions per session, 5
/// operations per transaction.
pub fn spec() -> impl Strategy<Value = Spec> {
    let op = (any::<bool>(), 0u8..4, any::<u16>(), any::<u8>()).prop_map(
        |(write, key, choice, style)| OpSpec {
            write,
            key,
            choice,
            style,
        },
    );
    let txn = (
        prop::bool::weighted(0.2),
        prop::option::of(0u16..40),
        prop::collection::vec(op, 0..6),
        prop::option::of((0u32..100, 0u32..100)),
    )
        .prop_map(|(aborted, ext, ops, timestamps)| TxnSpec {
            aborted,
            ext,
            ops,
            timestamps,
        });
    let session = (prop::option::of(0u16..20), prop::collection::vec(txn, 0..5))
        .prop_map(|(ext, txns)| SessionSpec { ext, txns });
    (
        1u8..=4,
        prop::collection::vec(0u8..4, 0..3),
        prop::collection::vec(session, 0..4),
        any::<bool>(),
    )
        .prop_map(|(keys, initial, sessions, initial_value)| Spec {
            keys,
            initial: initial.into_iter().filter(|&k| k < keys).collect(),
            sessions,
            initial_value,
        })
}

/// Which format's capabilities a random history must respect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Everything a history can have.
    Json,
    IsoPredict,
    Plume,
    Awdit,
}

fn key_name(domain: Domain, k: u8) -> String {
    match domain {
        Domain::Json => ["x", "quo\"te", "ключ", "Set(1:2)"][k as usize].to_string(),
        Domain::IsoPredict => ["k0", "7301", "k 2", "Set(9:k3)"][k as usize].to_string(),
        Domain::Plume | Domain::Awdit => {
            ["0", "17", "2", "18446744073709551615"][k as usize].to_string()
        }
    }
}

/// Builds the history `spec` describes, bent to fit `domain` (no aborted transactions where
/// the format has none, values where it needs them, …). It always builds.
pub fn build(spec: &Spec, domain: Domain) -> History {
    let keys = spec.keys;
    let mut b = HistoryBuilder::new(format!("random {domain:?}"));
    if (domain == Domain::Json && spec.initial_value) || domain == Domain::Plume {
        b.initial_value(0);
    }
    let mut key_ids: Vec<Option<KeyId>> = vec![None; keys as usize];
    let mut key = |b: &mut HistoryBuilder, k: u8| -> KeyId {
        let k = k % keys;
        *key_ids[k as usize].get_or_insert_with(|| b.key(&key_name(domain, k)))
    };
    if domain == Domain::Json {
        for k in 0..keys {
            key(&mut b, k);
        }
    }
    let text_domain = domain != Domain::Json;
    let aborts_allowed = matches!(domain, Domain::Json | Domain::Plume);

    // Shape: which transactions exist, whether aborted, and their operations.
    struct Txn {
        session: usize,
        aborted: bool,
        ext: Option<u64>,
        ops: Vec<OpSpec>,
        timestamps: Option<Timestamps>,
    }
    let mut txns: Vec<Txn> = Vec::new();
    for (s, session) in spec.sessions.iter().enumerate() {
        let mut previous_aborted = false;
        for t in &session.txns {
            let mut aborted = t.aborted && aborts_allowed;
            if domain == Domain::Plume && previous_aborted {
                aborted = false; // consecutive aborted transactions would merge
            }
            previous_aborted = aborted;
            let mut ops = t.ops.clone();
            if text_domain && ops.is_empty() {
                ops.push(OpSpec {
                    write: true,
                    key: 0,
                    choice: 0,
                    style: 0,
                });
            }
            txns.push(Txn {
                session: s,
                aborted,
                ext: t.ext.map(u64::from),
                ops,
                timestamps: t
                    .timestamps
                    .filter(|_| domain == Domain::Json)
                    .map(|(a, b)| Timestamps {
                        start: a.min(b) as u64,
                        commit: a.max(b) as u64,
                    }),
            });
        }
    }

    // Values: unique per key (from 1, or 0 in the AWDIT domain, where 0 is ordinary).
    let first_value = if domain == Domain::Awdit { 0 } else { 1 };
    let mut next_value = vec![first_value; keys as usize];
    let mut values: Vec<Vec<Option<u64>>> = Vec::new();
    let mut written: Vec<Vec<(u64, usize, u32)>> = vec![Vec::new(); keys as usize]; // (value, txn, op)
    for (ti, t) in txns.iter().enumerate() {
        let mut vs = Vec::new();
        for (oi, op) in t.ops.iter().enumerate() {
            if op.write {
                let k = (op.key % keys) as usize;
                let v = next_value[k];
                next_value[k] += 1;
                written[k].push((v, ti, oi as u32));
                vs.push(Some(v));
            } else {
                vs.push(None);
            }
        }
        values.push(vs);
    }

    // Explicit initial writes.
    let mut initially_written = vec![false; keys as usize];
    if domain != Domain::Awdit {
        for &k in &spec.initial {
            let k = k % keys;
            if domain != Domain::IsoPredict && initially_written[k as usize] {
                continue;
            }
            initially_written[k as usize] = true;
            let id = key(&mut b, k);
            let value = match domain {
                Domain::Plume => Some(0),
                Domain::Json if !spec.initial_value => Some(1000 + u64::from(k)),
                _ => None,
            };
            b.write(BuilderTxn::INITIAL, id, value, 0);
        }
    }

    // Sessions (created when they get a transaction, except in JSON) and transactions.
    let mut sessions: Vec<Option<SessionId>> = vec![None; spec.sessions.len()];
    if domain == Domain::Json {
        for (s, session) in spec.sessions.iter().enumerate() {
            sessions[s] = Some(b.session(session.ext.map(u64::from)));
        }
    }
    let mut handles = Vec::new();
    let mut used_session_ids = std::collections::HashSet::new();
    for t in &txns {
        let ext = spec.sessions[t.session].ext.map(|e| match domain {
            Domain::IsoPredict => u64::from(e) + 1,
            _ => u64::from(e),
        });
        // Distinct ids (sessions with one id would merge); none in AWDIT.
        let ext = match ext {
            Some(e) if domain != Domain::Awdit && sessions[t.session].is_none() => {
                used_session_ids.insert(e).then_some(e)
            }
            _ => None,
        };
        let s = *sessions[t.session].get_or_insert_with(|| b.session(ext));
        let ext_txn = if domain == Domain::Awdit { None } else { t.ext };
        let h = b.begin(s, ext_txn);
        if t.aborted {
            b.abort(h);
        }
        if let Some(ts) = t.timestamps {
            b.set_timestamps(h, ts);
        }
        handles.push(h);
    }

    // Operations.
    for (ti, t) in txns.iter().enumerate() {
        for (oi, op) in t.ops.iter().enumerate() {
            let k = op.key % keys;
            let id = key(&mut b, k);
            if op.write {
                let v = values[ti][oi];
                let v = if domain == Domain::IsoPredict {
                    None
                } else {
                    v
                };
                b.write(handles[ti], id, v, 0);
                continue;
            }
            let candidates = &written[k as usize];
            let c = op.choice as usize;
            let (value, from) = match domain {
                Domain::IsoPredict => {
                    let n = handles.len() + 1;
                    let from = match c % n {
                        0 => BuilderTxn::INITIAL,
                        i => handles[i - 1],
                    };
                    (None, ReadFrom::Txn(from))
                }
                Domain::Plume | Domain::Awdit => {
                    // A written value, the initial value (plume), or a value never written.
                    let extra = if domain == Domain::Plume { 2 } else { 1 };
                    let i = c % (candidates.len() + extra);
                    let v = if i < candidates.len() {
                        candidates[i].0
                    } else if i == candidates.len() {
                        999
                    } else {
                        0
                    };
                    (Some(v), ReadFrom::Value(v))
                }
                Domain::Json => match op.style % 5 {
                    0 if !candidates.is_empty() => {
                        let v = candidates[c % candidates.len()].0;
                        (Some(v), ReadFrom::Value(v))
                    }
                    1 => {
                        let n = handles.len() + 1;
                        let from = match c % n {
                            0 => BuilderTxn::INITIAL,
                            i => handles[i - 1],
                        };
                        (None, ReadFrom::Txn(from))
                    }
                    2 if !candidates.is_empty() => {
                        let (v, wt, wo) = candidates[c % candidates.len()];
                        (Some(v), ReadFrom::Op(handles[wt], wo))
                    }
                    3 => (None, ReadFrom::Initial),
                    _ => (Some(777), ReadFrom::Unknown),
                },
            };
            b.read(handles[ti], id, value, from, 0);
        }
    }
    b.build().expect("random histories are valid")
}

/// Writes `h` in `format` into a string.
pub fn write_string(h: &History, format: Format) -> Result<String, formats::FormatError> {
    let mut out = Vec::new();
    formats::write_to(h, format, &mut out)?;
    Ok(String::from_utf8(out).expect("writers produce UTF-8"))
}

/// Asserts that two histories are identical in everything but source names and line numbers.
pub fn assert_identical(a: &History, b: &History) {
    assert_eq!(a.key_names(), b.key_names(), "key names");
    assert_eq!(a.sessions().len(), b.sessions().len(), "sessions");
    for (x, y) in a.sessions().iter().zip(b.sessions()) {
        assert_eq!(x.external_id, y.external_id, "session id");
        assert_eq!(x.txns(), y.txns(), "session transactions");
    }
    assert_eq!(a.txn_count(), b.txn_count(), "transactions");
    for t in 0..a.txn_count() as TxnId {
        let (x, y) = (a.txn(t), b.txn(t));
        assert_eq!(x.session, y.session, "t{t} session");
        assert_eq!(x.index_in_session, y.index_in_session, "t{t} index");
        assert_eq!(x.status, y.status, "t{t} status");
        assert_eq!(x.external_id, y.external_id, "t{t} id");
        assert_eq!(x.ops(), y.ops(), "t{t} operations");
        assert_eq!(a.timestamps(t), b.timestamps(t), "t{t} timestamps");
    }
    assert_eq!(a.has_timestamps(), b.has_timestamps());
    for (i, (x, y)) in a.ops().iter().zip(b.ops()).enumerate() {
        assert_eq!(
            (x.kind, x.key, x.txn, x.value),
            (y.kind, y.key, y.txn, y.value),
            "op {i}"
        );
    }
    assert_eq!(a.read_from_raw(), b.read_from_raw(), "writers");
    assert_eq!(a.unresolved(), b.unresolved(), "unresolved reads");
    assert_eq!(a.implicit_initial_writes(), b.implicit_initial_writes());
}

/// The test data shipped in the repository (`tests/data`; tests/data/README.md says where each
/// file comes from): AWDIT's labelled histories in `awdit/`, the IsoPredict artifact's traces in
/// `isopredict-traces/`, peers' cases in `peers/`, format samples in `formats/`.
pub fn testdata_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The labelled histories and the traces (`awdit/` and `isopredict-traces/` of the test data,
/// 38 `.txt` files), sorted.
pub fn labelled_and_traces() -> Vec<std::path::PathBuf> {
    let root = testdata_dir();
    let mut files = txt_files(&root.join("awdit"));
    files.extend(txt_files(&root.join("isopredict-traces")));
    files.sort();
    files
}

/// Every `.txt` file under `dir`, sorted.
pub fn txt_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "txt") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The paper's Table 3 for `w` at `size`, as exact totals over runs 1..=10: reads, writes and
/// committed transactions (the averages are these divided by 10; pin these, not the floats).
pub fn table3_totals(
    w: &dyn isopredict::workloads::Workload,
    size: isopredict::workloads::Size,
) -> (usize, usize, usize) {
    use isopredict::workloads::{counts, run, Counts, RunConfig};
    let mut total = Counts::default();
    for seed in 1..=10 {
        let c = counts(&run(w, &RunConfig::monkeydb(seed, size)).unwrap().history);
        total.reads += c.reads;
        total.writes += c.writes;
        total.txns += c.txns;
    }
    (total.reads, total.writes, total.txns)
}

/// The paper's Table 3 for `w` at `size`: reads, writes and committed transactions, averaged
/// over runs 1..=10 (for comparisons within a tolerance; exact values: [`table3_totals`]).
pub fn table3_average(
    w: &dyn isopredict::workloads::Workload,
    size: isopredict::workloads::Size,
) -> (f64, f64, f64) {
    let (r, w, t) = table3_totals(w, size);
    (r as f64 / 10.0, w as f64 / 10.0, t as f64 / 10.0)
}

/// Options of a pipeline run of a built-in workload at the small size: `seed`, `level`,
/// approx-relaxed, a 60 s prediction time limit.
pub fn small_run(seed: u64, level: isopredict::check::Level) -> isopredict::pipeline::RunOptions {
    isopredict::pipeline::RunOptions {
        seed,
        size: isopredict::workloads::Size::Small,
        level,
        strategy: isopredict::predict::Strategy::ApproxRelaxed,
        timeout: Some(std::time::Duration::from_secs(60)),
        ..isopredict::pipeline::RunOptions::default()
    }
}

/// Every level's verdict of `history`, by the one decision core (`verdict::decide_all`).
pub fn every_level(history: &History) -> isopredict::verdict::VerdictsReport {
    use isopredict::verdict::{decide_all, EvidenceChoice, Input, Limits};
    decide_all(
        &Input::of(history).unwrap(),
        EvidenceChoice::Auto,
        &Limits::default(),
    )
    .unwrap()
}
