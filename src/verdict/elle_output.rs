//! The verdicts as the result map of Elle's checker (Kingsbury & Alvaro, VLDB'20;
//! jepsen-io/elle `src/elle/txn.clj` `result-map`, `src/elle/consistency_model.clj`), so that
//! a Jepsen pipeline or an elle-cli user can read isopredict's answer where it reads Elle's:
//! `check --output elle` (EDN, or JSON with `--json`; docs/checking.md, "Elle's result map").
//!
//! A view, never a second decision: `:valid?` is the verdicts' outcome (false if any level
//! asked for is violated, else `:unknown` if any is unknown, else true — and then the map is
//! exactly `{:valid? true}`, as Elle writes it), and every anomaly comes from the report
//! behind a violated verdict, renamed:
//! - a cycle whose edges are all Adya dependencies between transactions of the input — a read
//!   (`:wr`), a known or derived version order (`:ww`), an anti-dependency (`:rw`), session
//!   order (`:process`), the clients' real-time order (`:realtime`) — is written as Elle's
//!   steps and named by Elle's rule (`txn.clj` `cycle-explainer`): one `:rw` step is
//!   `G-single-item`, two adjacent ones `G2-item`, several none adjacent
//!   `G-nonadjacent-item`, none with a `:wr` `G1c`, only `:ww` `G0`; `-realtime` when a
//!   step is real time, else `-process` when one is session order. A strong report's own
//!   Adya name (its core's phenomenon under every version order) is used when it has one;
//! - a read violation is named from the anomaly table ([`crate::history::anomalies`]): Elle's
//!   or Adya's name where the row has one (`G1a`, `G1b`, `future-read`), else the row's key;
//! - a cycle with a commit-order edge that one of isopredict's level axioms inferred (Biswas &
//!   Enea's read-committed, read-atomic and causal axioms) is no cycle of Adya dependencies;
//!   it keeps isopredict's name (the row's key, e.g. `fractured-read-causal`) with the edges
//!   in isopredict's words, and is shown only when no Elle-named anomaly already rules its
//!   level out;
//! - an anomaly seen in the input itself (Elle's `incompatible-order`, `duplicate-elements`)
//!   is named as Elle names it.
//!
//! `:not` and `:also-not` use Elle's model names and implication lattice (the tables below are
//! `consistency_model.clj`'s `models`, `direct-proscribed-anomalies` and `implied-anomalies`,
//! restricted to what they say of the anomalies written here): the models that forbid an
//! Elle-named anomaly found, and the Elle model of every violated level whose violation no
//! Elle-named anomaly accounts for — isopredict's levels always include session order (Biswas
//! & Enea), so rc, si and ser name Elle's strong-session variants, and ra, cc, pc Cerone's
//! read-atomic, causal and prefix — closed upward (a model is ruled out when one it implies
//! is); `:not` holds the weakest, `:also-not` the rest.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use rustc_hash::FxHashSet;

use super::{LevelReport, Outcome, Verdict};
use crate::check::{AxiomInstance, CheckReport, CycleEdge, EdgeReason, Level, OpRef, Relation};
use crate::history::{anomalies, History, OpKind, TxnId, TxnStatus, INITIAL_TXN, NO_SESSION};
use crate::ser::{StrongEdge, StrongEdgeKind, StrongReport, TimestampReport};

/// A value of the result map: what EDN and JSON both write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElleValue {
    /// `nil` / `null`.
    Nil,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A keyword, without its colon (`G0`, `elle.list-append/init`); a JSON string.
    Keyword(String),
    /// A string.
    Str(String),
    /// A vector / array.
    Vec(Vec<ElleValue>),
    /// A set (EDN `#{…}`; a JSON array).
    Set(Vec<ElleValue>),
    /// A map, in this order (keys are keywords in EDN, strings in JSON).
    Map(Vec<(String, ElleValue)>),
}

fn kw(s: &str) -> ElleValue {
    ElleValue::Keyword(s.to_string())
}

fn map(entries: Vec<(&str, ElleValue)>) -> ElleValue {
    ElleValue::Map(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// Whether `s` can be written as an EDN keyword.
fn keyword_safe(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_alphanumeric() || "-_.*+!?<>=/'".contains(c))
}

impl ElleValue {
    /// A key or value as Elle's histories write it: an integer, else a keyword, else a string.
    /// A string key whose text could be taken for another type's is named in double quotes
    /// (`formats::elle`): a string.
    fn datum(s: &str) -> ElleValue {
        if let Some(text) = s
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .filter(|_| s.len() >= 2)
        {
            return ElleValue::Str(text.to_string());
        }
        match s.parse::<i64>() {
            Ok(n) => ElleValue::Int(n),
            Err(_) if keyword_safe(s) => kw(s),
            Err(_) => ElleValue::Str(s.to_string()),
        }
    }

    /// The value as EDN, maps one entry per line at the top levels.
    pub fn to_edn(&self) -> String {
        let mut out = String::new();
        self.write_edn(&mut out, 0);
        out
    }

    fn write_edn(&self, out: &mut String, indent: usize) {
        let seq = |out: &mut String, open: &str, close: &str, items: &[ElleValue]| {
            out.push_str(open);
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                v.write_edn(out, indent + open.len());
            }
            out.push_str(close);
        };
        match self {
            ElleValue::Nil => out.push_str("nil"),
            ElleValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            ElleValue::Int(n) => {
                let _ = write!(out, "{n}");
            }
            ElleValue::Keyword(k) => {
                out.push(':');
                out.push_str(k);
            }
            ElleValue::Str(s) => {
                // EDN strings escape like JSON's.
                out.push_str(&serde_json::Value::String(s.clone()).to_string());
            }
            ElleValue::Vec(items) => seq(out, "[", "]", items),
            ElleValue::Set(items) => seq(out, "#{", "}", items),
            ElleValue::Map(entries) => {
                out.push('{');
                let nested = entries.iter().any(|(_, v)| {
                    matches!(v, ElleValue::Map(m) if !m.is_empty())
                        || matches!(v, ElleValue::Vec(items) if items.iter().any(|i| matches!(i, ElleValue::Map(_))))
                });
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        if nested || indent == 0 {
                            out.push('\n');
                            out.push_str(&" ".repeat(indent + 1));
                        } else {
                            out.push_str(", ");
                        }
                    }
                    let key = if keyword_safe(k) {
                        format!(":{k} ")
                    } else {
                        format!("{} ", serde_json::Value::String(k.clone()))
                    };
                    out.push_str(&key);
                    v.write_edn(out, indent + 1 + key.len());
                }
                out.push('}');
            }
        }
    }

    /// The value as JSON (keywords become strings without their colon, sets arrays), as
    /// elle-cli writes Elle's maps.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            ElleValue::Nil => J::Null,
            ElleValue::Bool(b) => J::Bool(*b),
            ElleValue::Int(n) => J::from(*n),
            ElleValue::Keyword(s) | ElleValue::Str(s) => J::String(s.clone()),
            ElleValue::Vec(items) | ElleValue::Set(items) => {
                J::Array(items.iter().map(ElleValue::to_json).collect())
            }
            ElleValue::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Elle's lattice (jepsen-io/elle src/elle/consistency_model.clj), canonical names.

/// `models`: a → the models a implies (canonicalised; only what reaches the models named
/// here).
const MODELS: &[(&str, &[&str])] = &[
    ("causal-cerone", &["read-atomic"]),
    ("consistent-view", &["cursor-stability", "monotonic-view"]),
    ("cursor-stability", &["read-committed"]),
    ("forward-consistent-view", &["consistent-view"]),
    ("read-committed", &["read-uncommitted"]),
    (
        "serializable",
        &[
            "repeatable-read",
            "update-serializable",
            "snapshot-isolation",
        ],
    ),
    ("update-serializable", &["forward-consistent-view"]),
    ("monotonic-atomic-view", &["read-committed"]),
    ("monotonic-view", &["read-committed"]),
    ("monotonic-snapshot-read", &["read-committed"]),
    ("parallel-snapshot-isolation", &["causal-cerone", "ROLA"]),
    ("prefix", &["causal-cerone"]),
    ("read-atomic", &["monotonic-atomic-view"]),
    (
        "repeatable-read",
        &["cursor-stability", "monotonic-atomic-view"],
    ),
    ("ROLA", &["read-atomic"]),
    (
        "snapshot-isolation",
        &[
            "forward-consistent-view",
            "monotonic-atomic-view",
            "monotonic-snapshot-read",
            "parallel-snapshot-isolation",
            "prefix",
        ],
    ),
    (
        "strict-serializable",
        &[
            "serializable",
            "snapshot-isolation",
            "strong-snapshot-isolation",
            "strong-session-serializable",
        ],
    ),
    ("strong-session-read-uncommitted", &["read-uncommitted"]),
    (
        "strong-session-read-committed",
        &["read-committed", "strong-session-read-uncommitted"],
    ),
    (
        "strong-read-uncommitted",
        &["strong-session-read-uncommitted"],
    ),
    (
        "strong-read-committed",
        &["strong-session-read-committed", "strong-read-uncommitted"],
    ),
    (
        "strong-session-serializable",
        &["serializable", "strong-session-snapshot-isolation"],
    ),
    (
        "strong-session-snapshot-isolation",
        &["snapshot-isolation", "strong-session-read-committed"],
    ),
    (
        "strong-snapshot-isolation",
        &["strong-session-snapshot-isolation", "strong-read-committed"],
    ),
];

/// `direct-proscribed-anomalies`: model → the anomalies it forbids itself.
const PROSCRIBED: &[(&str, &[&str])] = &[
    ("causal-cerone", &["internal", "G1a"]),
    ("cursor-stability", &["G1", "G-cursor", "lost-update"]),
    ("monotonic-view", &["G1", "G-monotonic"]),
    ("monotonic-snapshot-read", &["G1", "G-MSR"]),
    ("consistent-view", &["G1", "G-single"]),
    ("forward-consistent-view", &["G1", "G-SIb"]),
    ("parallel-snapshot-isolation", &["internal", "G1a"]),
    ("serializable", &["G1", "G2", "internal"]),
    ("read-committed", &["G1"]),
    (
        "read-uncommitted",
        &["G0", "duplicate-elements", "cyclic-versions"],
    ),
    ("prefix", &["internal", "G1a"]),
    (
        "snapshot-isolation",
        &["internal", "G1", "G-SI", "G-nonadjacent"],
    ),
    ("read-atomic", &["internal", "G1a", "future-read"]),
    ("repeatable-read", &["G1", "G2-item", "lost-update"]),
    ("ROLA", &["lost-update"]),
    (
        "strict-serializable",
        &["G1", "G1c-realtime", "G2-realtime"],
    ),
    ("strong-session-read-uncommitted", &["G0-process"]),
    ("strong-session-read-committed", &["G1c-process"]),
    ("strong-read-uncommitted", &["G0-realtime"]),
    ("strong-read-committed", &["G1c-realtime"]),
    (
        "strong-session-snapshot-isolation",
        &["internal", "G1-process", "G-nonadjacent-process"],
    ),
    (
        "strong-snapshot-isolation",
        &["internal", "G1-realtime", "G-nonadjacent-realtime"],
    ),
    ("strong-session-serializable", &["G1-process", "G2-process"]),
    ("update-serializable", &["G1", "G-update"]),
];

/// `implied-anomalies`: anomaly → the anomalies it implies.
const IMPLIED: &[(&str, &[&str])] = &[
    ("G0", &["G1c", "G0-process"]),
    ("G0-process", &["G1c-process", "G0-realtime"]),
    ("G0-realtime", &["G1c-realtime"]),
    ("G1a", &["G1"]),
    ("G1b", &["G1"]),
    ("G1c", &["G1", "G1c-process"]),
    ("G1c-process", &["G1c-realtime", "G1-process"]),
    ("G1c-realtime", &["G1-realtime"]),
    ("G1", &["G1-process"]),
    ("G1-process", &["G1-realtime"]),
    (
        "G-single-item",
        &["G-single", "G-single-item-process", "G-nonadjacent-item"],
    ),
    (
        "G-single-item-process",
        &[
            "G-single-process",
            "G-single-item-realtime",
            "G-nonadjacent-item-process",
        ],
    ),
    (
        "G-single-item-realtime",
        &["G-single-realtime", "G-nonadjacent-item-realtime"],
    ),
    ("G-single", &["G-nonadjacent", "GSIb", "G-single-process"]),
    (
        "G-single-process",
        &["G-nonadjacent-process", "G-single-realtime"],
    ),
    ("G-single-realtime", &["G-nonadjacent-realtime"]),
    (
        "G-nonadjacent-item",
        &["G-nonadjacent", "G2-item", "G-nonadjacent-item-process"],
    ),
    (
        "G-nonadjacent-item-process",
        &[
            "G-nonadjacent-process",
            "G2-item-process",
            "G-nonadjacent-item-realtime",
        ],
    ),
    (
        "G-nonadjacent-item-realtime",
        &["G2-item-realtime", "G-nonadjacent-realtime"],
    ),
    ("G-nonadjacent", &["G2", "G-nonadjacent-process"]),
    (
        "G-nonadjacent-process",
        &["G2-process", "G-nonadjacent-realtime"],
    ),
    ("G-nonadjacent-realtime", &["G2-realtime"]),
    ("G2", &["G2-process"]),
    ("G2-item", &["G2", "G2-item-process"]),
    ("G2-item-process", &["G2-process", "G2-item-realtime"]),
    ("G2-item-realtime", &["G2-realtime"]),
    ("G2-process", &["G2-realtime"]),
    ("GSIa", &["GSI"]),
    ("GSIb", &["GSI"]),
    ("incompatible-order", &["G1a"]),
    ("future-read", &["G1c"]),
    ("dirty-update", &["G1a"]),
    ("lost-update", &["write-skew", "G2-item"]),
    ("write-skew", &["G2"]),
];

/// Elle's friendly name of a canonical model (`friendly-model-names`): strict-serializable is
/// reported as `strong-serializable`.
fn friendly(model: &str) -> &str {
    match model {
        "strict-serializable" => "strong-serializable",
        m => m,
    }
}

fn out_of<'a>(table: &'a [(&'a str, &'a [&'a str])], x: &str) -> &'a [&'a str] {
    table.iter().find(|(k, _)| *k == x).map_or(&[], |(_, v)| *v)
}

/// Whether Elle's lattice knows the anomaly `ty`.
fn elle_knows(ty: &str) -> bool {
    IMPLIED.iter().any(|(k, v)| *k == ty || v.contains(&ty))
        || PROSCRIBED.iter().any(|(_, v)| v.contains(&ty))
}

/// `all-implied-anomalies`.
fn implied_anomalies(types: &BTreeSet<String>) -> BTreeSet<String> {
    let mut seen: BTreeSet<String> = types.clone();
    let mut todo: Vec<String> = types.iter().cloned().collect();
    while let Some(a) = todo.pop() {
        for b in out_of(IMPLIED, &a) {
            if seen.insert(b.to_string()) {
                todo.push(b.to_string());
            }
        }
    }
    seen
}

/// `all-impossible-models`: the models given and every model that implies one of them.
fn models_implying(models: &BTreeSet<String>) -> BTreeSet<String> {
    let mut seen = models.clone();
    loop {
        let more: Vec<String> = MODELS
            .iter()
            .filter(|(m, implied)| !seen.contains(*m) && implied.iter().any(|i| seen.contains(*i)))
            .map(|(m, _)| m.to_string())
            .collect();
        if more.is_empty() {
            return seen;
        }
        seen.extend(more);
    }
}

/// The models (canonical) every one of which `a` implies, transitively (`a` excluded).
fn implied_models(a: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![a.to_string()];
    while let Some(m) = todo.pop() {
        for n in out_of(MODELS, &m) {
            if seen.insert(n.to_string()) {
                todo.push(n.to_string());
            }
        }
    }
    seen
}

/// `anomalies->impossible-models`.
fn impossible_models(types: &BTreeSet<String>) -> BTreeSet<String> {
    let anomalies = implied_anomalies(types);
    let direct: BTreeSet<String> = PROSCRIBED
        .iter()
        .filter(|(_, forbids)| forbids.iter().any(|a| anomalies.contains(*a)))
        .map(|(m, _)| m.to_string())
        .collect();
    models_implying(&direct)
}

/// `boundary`: the weakest ruled-out models and the rest, friendly names, sorted.
fn boundary(impossible: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    let weakest: BTreeSet<&String> = impossible
        .iter()
        .filter(|m| !implied_models(m).iter().any(|i| impossible.contains(i)))
        .collect();
    let name = |m: &String| friendly(m).to_string();
    let not: BTreeSet<String> = weakest.iter().map(|m| name(m)).collect();
    let also: BTreeSet<String> = impossible
        .iter()
        .filter(|m| !weakest.contains(m))
        .map(name)
        .collect();
    (not.into_iter().collect(), also.into_iter().collect())
}

/// The Elle model a violation of `level` rules out when nothing Elle names accounts for it:
/// the weakest of Elle's models that implies isopredict's level. isopredict's rc is Biswas &
/// Enea's read committed, stronger than Elle's (Adya's PL-2, which forbids G1 only: a
/// G-single read skew is allowed by Elle's read-committed and forbidden by isopredict's), so
/// an rc violation no G1 anomaly accounts for rules out strong-session snapshot isolation,
/// not Elle's read-committed.
fn level_model(level: Level) -> Option<&'static str> {
    Some(match level {
        Level::ReadCommitted => "strong-session-snapshot-isolation",
        Level::CutIsolation => return None,
        // Elle's read-atomic, causal-cerone and prefix have no session order; isopredict's
        // levels do, and each is implied by strong-session snapshot isolation.
        Level::ReadAtomic | Level::Causal | Level::Prefix => "strong-session-snapshot-isolation",
        Level::Snapshot => "strong-session-snapshot-isolation",
        Level::Serializable => "strong-session-serializable",
        Level::StrictSerializable => "strict-serializable",
    })
}

// ---------------------------------------------------------------------------------------------
// Steps.

/// One step of a rendered cycle, before naming.
enum Step {
    Ww(ElleValue),
    Wr(ElleValue),
    Rw(ElleValue),
    Process(ElleValue),
    Realtime(ElleValue),
}

/// What the renderer knows of the input.
struct Context<'h> {
    history: Option<&'h History>,
    /// The input's key names (a key outside them is one a checker added for a known order).
    keys: FxHashSet<&'h str>,
    /// List-append (the initial state is `:elle.list-append/init`), else rw-register (`nil`).
    list_append: bool,
}

impl<'h> Context<'h> {
    fn new(history: Option<&'h History>, list_append: bool) -> Self {
        Context {
            history,
            keys: history
                .map(|h| h.key_names().iter().map(String::as_str).collect())
                .unwrap_or_default(),
            list_append: list_append || history.is_some_and(|h| !h.known_write_order().is_empty()),
        }
    }

    fn is_input_key(&self, key: &str) -> bool {
        self.history.is_none() || self.keys.contains(key)
    }

    fn init(&self) -> ElleValue {
        if self.list_append {
            kw("elle.list-append/init")
        } else {
            ElleValue::Nil
        }
    }

    fn value(&self, op: Option<&OpRef>) -> ElleValue {
        match op.and_then(|o| (o.txn != INITIAL_TXN).then_some(o.value).flatten()) {
            Some(v) => ElleValue::Int(v as i64),
            None => self.init(),
        }
    }

    /// The transaction as an operation map: its type, process (the input's, when known),
    /// first input line and isopredict's label.
    fn op(&self, t: TxnId) -> ElleValue {
        let Some(h) = self.history else {
            return map(vec![("txn", ElleValue::Int(i64::from(t)))]);
        };
        let txn = h.txn(t);
        let process = (txn.session != NO_SESSION)
            .then(|| h.sessions()[txn.session as usize].external_id)
            .flatten()
            .map_or(ElleValue::Nil, |p| ElleValue::Int(p as i64));
        let line = h.txn_ops(t).iter().map(|o| o.line).find(|&l| l != 0);
        map(vec![
            (
                "type",
                kw(if txn.status == TxnStatus::Committed {
                    "ok"
                } else {
                    "fail"
                }),
            ),
            ("process", process),
            (
                "line",
                line.map_or(ElleValue::Nil, |l| ElleValue::Int(i64::from(l))),
            ),
            ("label", ElleValue::Str(h.txn_label(t))),
        ])
    }

    /// The position of `op` among its transaction's micro-operations in the input.
    /// Transaction `t`'s first write of the key printed as `key`.
    fn first_write(&self, t: TxnId, key: &str) -> Option<OpRef> {
        let h = self.history?;
        h.txn(t)
            .ops()
            .find(|&o| {
                let op = h.op(o);
                op.kind == OpKind::Write && crate::printable::printable(h.key_name(op.key)) == key
            })
            .map(|o| OpRef::new(h, o))
    }

    fn mop_index(&self, op: Option<&OpRef>) -> ElleValue {
        let (Some(h), Some(op)) = (self.history, op) else {
            return ElleValue::Nil;
        };
        if op.txn == INITIAL_TXN || op.txn as usize >= h.txn_count() {
            return ElleValue::Nil;
        }
        h.txn_ops(op.txn)
            .iter()
            .position(|o| {
                o.kind == op.kind
                    && o.value == op.value
                    && crate::printable::printable(h.key_name(o.key)) == op.key
            })
            .map_or(ElleValue::Nil, |i| ElleValue::Int(i as i64))
    }

    fn process_step(&self, from: TxnId) -> Step {
        let process = self
            .history
            .and_then(|h| {
                let s = h.txn(from).session;
                (s != NO_SESSION)
                    .then(|| h.sessions()[s as usize].external_id)
                    .flatten()
            })
            .map_or(ElleValue::Nil, |p| ElleValue::Int(p as i64));
        Step::Process(map(vec![("type", kw("process")), ("process", process)]))
    }

    /// A read of a key a checker added for a known order (`History::with_write_order_as_reads`,
    /// `with_txn_order_as_reads`): the write–write or real-time fact it stands for.
    fn known_order_step(&self, from: TxnId, to: TxnId, key: &str) -> Option<Step> {
        if key.contains("completed before the invocation of") {
            return Some(Step::Realtime(map(vec![
                ("type", kw("realtime")),
                ("a'", self.op(from)),
                ("b", self.op(to)),
            ])));
        }
        let h = self.history?;
        let &(a, b) = h
            .known_write_order()
            .iter()
            .find(|&&(a, b)| h.op(a).txn == from && h.op(b).txn == to)?;
        let (oa, ob) = (OpRef::new(h, a), OpRef::new(h, b));
        Some(Step::Ww(self.ww(&oa, &ob)))
    }

    fn ww(&self, earlier: &OpRef, later: &OpRef) -> ElleValue {
        map(vec![
            ("type", kw("ww")),
            ("key", ElleValue::datum(&earlier.key)),
            ("value", self.value(Some(earlier))),
            ("value'", self.value(Some(later))),
            ("a-mop-index", self.mop_index(Some(earlier))),
            ("b-mop-index", self.mop_index(Some(later))),
        ])
    }

    fn wr(&self, write: &OpRef, read: &OpRef) -> ElleValue {
        map(vec![
            ("type", kw("wr")),
            ("key", ElleValue::datum(&read.key)),
            ("value", self.value(Some(write))),
            ("a-mop-index", self.mop_index(Some(write))),
            ("b-mop-index", self.mop_index(Some(read))),
        ])
    }

    /// A weak report's cycle edge as an Elle step (`None`: not an Adya dependency).
    fn weak_step(&self, e: &CycleEdge) -> Option<Step> {
        if e.from == INITIAL_TXN || e.to == INITIAL_TXN {
            return None;
        }
        match &e.reason {
            EdgeReason::SessionOrder => Some(self.process_step(e.from)),
            EdgeReason::WriteRead { key, read, write } => {
                if self.is_input_key(key) {
                    Some(Step::Wr(self.wr(write, read)))
                } else {
                    self.known_order_step(e.from, e.to, key)
                }
            }
            EdgeReason::WriteWrite { earlier, later, .. } => {
                Some(Step::Ww(self.ww(earlier, later)))
            }
            EdgeReason::Axiom(a) => self.known_axiom_ww(a),
        }
    }

    /// An axiom edge t2 → t1 that the input's known version order of its key states itself
    /// (t2's version right before t1's): a `:ww` step.
    fn known_axiom_ww(&self, a: &AxiomInstance) -> Option<Step> {
        let h = self.history?;
        let key = h.key_names().iter().position(|k| *k == a.key)? as crate::history::KeyId;
        let (w2, w1) = (h.last_write(a.t2, key)?, h.last_write(a.t1, key)?);
        let order = h.known_write_order();
        let adjacent = order.contains(&(w2, w1))
            && !order
                .iter()
                .any(|&(x, c)| x == w2 && c != w1 && order.contains(&(c, w1)));
        adjacent.then(|| Step::Ww(self.ww(&OpRef::new(h, w2), &OpRef::new(h, w1))))
    }

    /// An axiom edge t2 → t1 (t3 reads `key` from t1, t2 writes `key` and reaches t3) as the
    /// Adya cycle it stands for when the version order of `key` is a fact with t2's version
    /// right after t1's: t2 reaches t3 (session order, or t3 reads from t2), and t3 read the
    /// version t2 overwrote (an anti-dependency t3 → t2). `None` otherwise.
    fn axiom_cycle(&self, a: &AxiomInstance) -> Option<(Vec<TxnId>, Vec<Step>)> {
        let h = self.history?;
        let (t1, t2, t3) = (a.t1, a.t2, a.t3.id);
        if t2 == INITIAL_TXN || t3 == INITIAL_TXN || t2 == t3 {
            return None;
        }
        let key = h.key_names().iter().position(|k| *k == a.key)? as crate::history::KeyId;
        let w2 = h.last_write(t2, key)?;
        // The versions after the one t3 read, up to t2's: t3's anti-dependency goes to the
        // first, write–write steps lead from it to t2. The initial state is followed by every
        // value in a register (Elle's rw-register); otherwise the known order must put t2's
        // version after t1's.
        let versions = if t1 == INITIAL_TXN && !self.list_append {
            vec![w2]
        } else {
            let w1 = (t1 != INITIAL_TXN).then(|| h.last_write(t1, key)).flatten();
            if t1 != INITIAL_TXN && w1.is_none() {
                return None;
            }
            versions_between(h, w1, w2)?
        };
        let mut txns = vec![t2];
        let mut hops: Vec<Step> = Vec::new();
        let relation = match a.relation {
            Relation::SessionOrder => self.process_step(t2),
            Relation::WriteRead => {
                let r = a.read_y.as_ref()?;
                if self.is_input_key(&r.key) {
                    let y =
                        h.key_names().iter().position(|k| *k == r.key)? as crate::history::KeyId;
                    let w = OpRef::new(h, h.last_write(t2, y)?);
                    Step::Wr(self.wr(&w, r))
                } else {
                    self.known_order_step(t2, t3, &r.key)?
                }
            }
            Relation::HappensBefore => {
                let (between, mut steps) = self.happens_before_path(t2, t3)?;
                txns.extend(between);
                let last = steps.pop()?;
                hops = steps;
                last
            }
        };
        let read = &a.read_x;
        let first = OpRef::new(h, versions[0]);
        let rw = Step::Rw(map(vec![
            ("type", kw("rw")),
            ("key", ElleValue::datum(&a.key)),
            ("value", self.value(Some(&a.write_x))),
            ("value'", self.value(Some(&first))),
            ("a-mop-index", self.mop_index(Some(read))),
            ("b-mop-index", self.mop_index(Some(&first))),
        ]));
        txns.push(t3);
        hops.push(relation);
        hops.push(rw);
        for pair in versions.windows(2) {
            txns.push(h.op(pair[0]).txn);
            hops.push(Step::Ww(
                self.ww(&OpRef::new(h, pair[0]), &OpRef::new(h, pair[1])),
            ));
        }
        // A transaction twice is no simple cycle: not the Adya cycle Elle would name.
        let distinct: FxHashSet<TxnId> = txns.iter().copied().collect();
        (distinct.len() == txns.len()).then_some((txns, hops))
    }

    /// A shortest chain of session-order and write–read steps by which `from` happens before
    /// `to` (transactions of the input): the transactions strictly between them, in order, and
    /// one step per hop. `None` when there is none.
    fn happens_before_path(&self, from: TxnId, to: TxnId) -> Option<(Vec<TxnId>, Vec<Step>)> {
        let h = self.history?;
        let n = h.txn_count();
        // The reads of each transaction's writes by other transactions: (reader, read, write).
        let mut read_by: Vec<Vec<(TxnId, crate::history::OpId, crate::history::OpId)>> =
            vec![Vec::new(); n];
        for (r, op) in h.ops().iter().enumerate() {
            let r = r as crate::history::OpId;
            if op.kind != OpKind::Read {
                continue;
            }
            if let Some(w) = h.read_from(r) {
                let writer = h.op(w).txn;
                if writer != op.txn && writer != INITIAL_TXN && (writer as usize) < n {
                    read_by[writer as usize].push((op.txn, r, w));
                }
            }
        }
        // Breadth first; each reached transaction remembers how it was reached.
        let mut came_from: Vec<Option<(TxnId, ReadHop)>> = vec![None; n];
        let mut queue = std::collections::VecDeque::from([from]);
        while let Some(u) = queue.pop_front() {
            if u == to {
                break;
            }
            let session = h.txn(u).session;
            let next_in_session = (session != NO_SESSION)
                .then(|| u + 1)
                .filter(|&v| h.sessions()[session as usize].txns().contains(&v));
            let next = next_in_session.map(|v| (v, None)).into_iter().chain(
                read_by[u as usize]
                    .iter()
                    .map(|&(v, r, w)| (v, Some((r, w)))),
            );
            for (v, via) in next {
                if v != from && came_from[v as usize].is_none() {
                    came_from[v as usize] = Some((u, via));
                    queue.push_back(v);
                }
            }
        }
        let mut path: Vec<(TxnId, TxnId, ReadHop)> = Vec::new();
        let mut v = to;
        while v != from {
            let (u, via) = came_from[v as usize]?;
            path.push((u, v, via));
            v = u;
        }
        path.reverse();
        let between = path.iter().skip(1).map(|&(u, _, _)| u).collect();
        let steps = path
            .iter()
            .map(|&(u, _, via)| match via {
                None => self.process_step(u),
                Some((r, w)) => Step::Wr(self.wr(&OpRef::new(h, w), &OpRef::new(h, r))),
            })
            .collect();
        Some((between, steps))
    }

    /// A strong report's cycle edge as an Elle step.
    fn strong_step(&self, e: &StrongEdge) -> Option<Step> {
        if e.from == INITIAL_TXN || e.to == INITIAL_TXN {
            return None;
        }
        let key = e.key.as_deref().unwrap_or("");
        match e.kind {
            StrongEdgeKind::SessionOrder => Some(self.process_step(e.from)),
            StrongEdgeKind::RealTime => Some(Step::Realtime(map(vec![
                ("type", kw("realtime")),
                ("a'", self.op(e.from)),
                ("b", self.op(e.to)),
            ]))),
            _ if !self.is_input_key(key) => self.known_order_step(e.from, e.to, key),
            StrongEdgeKind::WriteRead => {
                Some(Step::Wr(self.wr(e.write.as_ref()?, e.read.as_ref()?)))
            }
            StrongEdgeKind::WriteWrite => {
                let w = e.write.as_ref()?;
                // The saturation's edge names the read that forces it (t3 read `to`'s
                // version); the dependency graph's names no read: the later version is
                // `to`'s first write of the key (the next version after `from`'s).
                let (later, later_index) = match e.read.as_ref() {
                    Some(r) => (self.value(Some(r)), ElleValue::Nil),
                    None => {
                        let next = self.first_write(e.to, key)?;
                        (self.value(Some(&next)), self.mop_index(Some(&next)))
                    }
                };
                Some(Step::Ww(map(vec![
                    ("type", kw("ww")),
                    ("key", ElleValue::datum(key)),
                    ("value", self.value(Some(w))),
                    ("value'", later),
                    ("a-mop-index", self.mop_index(Some(w))),
                    ("b-mop-index", later_index),
                ])))
            }
            StrongEdgeKind::ReadWrite => {
                let (r, w) = (e.read.as_ref()?, e.write.as_ref()?);
                let read_value = if r.value.is_none() || h_reads_initial(self.history, r) {
                    self.init()
                } else {
                    self.value(Some(r))
                };
                Some(Step::Rw(map(vec![
                    ("type", kw("rw")),
                    ("key", ElleValue::datum(key)),
                    ("value", read_value),
                    ("value'", self.value(Some(w))),
                    ("a-mop-index", self.mop_index(Some(r))),
                    ("b-mop-index", self.mop_index(Some(w))),
                ])))
            }
        }
    }
}

/// The versions of `to`'s key after `after` (after the initial state when `None`) up to and
/// including `to`, in the input's known version order; `None` when the order does not put
/// `to` after `after`.
fn versions_between(
    h: &History,
    after: Option<crate::history::OpId>,
    to: crate::history::OpId,
) -> Option<Vec<crate::history::OpId>> {
    let key = h.op(to).key;
    let pairs: Vec<(crate::history::OpId, crate::history::OpId)> = h
        .known_write_order()
        .iter()
        .copied()
        .filter(|&(a, _)| h.op(a).key == key)
        .collect();
    let reach = |from: crate::history::OpId| {
        let mut seen: FxHashSet<crate::history::OpId> = FxHashSet::default();
        let mut todo = vec![from];
        while let Some(x) = todo.pop() {
            for &(a, b) in &pairs {
                if a == x && seen.insert(b) {
                    todo.push(b);
                }
            }
        }
        seen
    };
    let after_reach = match after {
        Some(w1) => {
            let r = reach(w1);
            if !r.contains(&to) {
                return None;
            }
            Some(r)
        }
        None => None,
    };
    let mut between: Vec<crate::history::OpId> = pairs
        .iter()
        .map(|&(a, _)| a)
        .filter(|&c| c != to && h.op(c).txn != INITIAL_TXN)
        .filter(|c| after_reach.as_ref().map_or(true, |r| r.contains(c)))
        .collect();
    between.sort_unstable();
    between.dedup();
    between.retain(|&c| reach(c).contains(&to));
    // Earlier versions reach more of the others.
    let reached: Vec<usize> = between
        .iter()
        .map(|&c| between.iter().filter(|d| reach(c).contains(d)).count())
        .collect();
    let mut order: Vec<usize> = (0..between.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(reached[i]));
    let mut chain: Vec<crate::history::OpId> = order.into_iter().map(|i| between[i]).collect();
    chain.push(to);
    Some(chain)
}

/// How one transaction reaches the next on a happens-before chain: session order (`None`) or
/// a read (the read and the write it observed).
type ReadHop = Option<(crate::history::OpId, crate::history::OpId)>;

/// Whether the read `r` (of the input's history) observed the initial state.
fn h_reads_initial(history: Option<&History>, r: &OpRef) -> bool {
    history.is_some_and(|h| {
        (r.id as usize) < h.ops().len()
            && h.op(r.id).kind == OpKind::Read
            && h.writer_txn(r.id) == Some(INITIAL_TXN)
    })
}

/// Elle's name of a cycle of these steps (`txn.clj` `cycle-explainer`), `None` for a cycle of
/// session and real-time order alone.
fn cycle_type(steps: &[Step]) -> Option<String> {
    let rw: Vec<bool> = steps.iter().map(|s| matches!(s, Step::Rw(_))).collect();
    let r = rw.iter().filter(|&&x| x).count();
    let adjacent = (0..rw.len()).any(|i| rw[i] && rw[(i + 1) % rw.len()]);
    let any_wr = steps.iter().any(|s| matches!(s, Step::Wr(_)));
    let any_ww = steps.iter().any(|s| matches!(s, Step::Ww(_)));
    let base = match r {
        0 if any_wr => "G1c",
        0 if any_ww => "G0",
        0 => return None,
        1 => "G-single-item",
        _ if adjacent => "G2-item",
        _ => "G-nonadjacent-item",
    };
    Some(format!("{base}{}", suffix(steps)))
}

fn suffix(steps: &[Step]) -> &'static str {
    if steps.iter().any(|s| matches!(s, Step::Realtime(_))) {
        "-realtime"
    } else if steps.iter().any(|s| matches!(s, Step::Process(_))) {
        "-process"
    } else {
        ""
    }
}

fn step_value(s: Step) -> ElleValue {
    match s {
        Step::Ww(v) | Step::Wr(v) | Step::Rw(v) | Step::Process(v) | Step::Realtime(v) => v,
    }
}

/// The type of an anomaly Elle has no name for, in isopredict's namespace
/// (`:isopredict/fractured-read`), so that no reader takes it for one of Elle's.
fn own_type(key: &str) -> String {
    if elle_knows(key) {
        key.to_string()
    } else {
        format!("isopredict/{key}")
    }
}

/// One anomaly found in a report: its type, whether Elle's lattice knows it, and its entry.
struct Case {
    ty: String,
    elle: bool,
    entry: ElleValue,
}

impl Case {
    fn new(ty: String, entry: ElleValue) -> Case {
        Case {
            elle: elle_knows(&ty),
            ty,
            entry,
        }
    }
}

fn cycle_case(ctx: &Context<'_>, txns: Vec<TxnId>, steps: Vec<Step>, ty: String) -> Case {
    let mut cycle: Vec<ElleValue> = txns.iter().map(|&t| ctx.op(t)).collect();
    if let Some(&first) = txns.first() {
        cycle.push(ctx.op(first));
    }
    let entry = map(vec![
        ("type", kw(&ty)),
        ("cycle", ElleValue::Vec(cycle)),
        (
            "steps",
            ElleValue::Vec(steps.into_iter().map(step_value).collect()),
        ),
    ]);
    Case::new(ty, entry)
}

/// A cycle in isopredict's own words (an edge is not an Adya dependency).
fn own_cycle_case(ctx: &Context<'_>, ty: &str, edges: Vec<(TxnId, TxnId, String)>) -> Case {
    let ty = own_type(ty);
    let ty = ty.as_str();
    let entry = map(vec![
        ("type", kw(ty)),
        (
            "cycle",
            ElleValue::Vec(edges.iter().map(|(from, _, _)| ctx.op(*from)).collect()),
        ),
        (
            "edges",
            ElleValue::Vec(
                edges
                    .into_iter()
                    .map(|(from, to, why)| {
                        map(vec![
                            ("from", ctx.op(from)),
                            ("to", ctx.op(to)),
                            ("why", ElleValue::Str(why)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ]);
    Case::new(ty.to_string(), entry)
}

fn weak_cases(ctx: &Context<'_>, r: &CheckReport, out: &mut Vec<Case>) {
    for v in &r.read_violations {
        let row = v.anomaly.row();
        let ty = row
            .elle_name()
            .map_or_else(|| own_type(row.key), str::to_string);
        let mut entry = vec![
            ("type", kw(&ty)),
            ("op", ctx.op(v.txn.id)),
            ("key", ElleValue::datum(&v.read.key)),
            ("element", ctx.value(Some(&v.read))),
            ("mop-index", ctx.mop_index(Some(&v.read))),
        ];
        if let Some(w) = &v.writer {
            entry.push(("writer", ctx.op(w.id)));
        }
        entry.push(("explanation", ElleValue::Str(v.explanation.clone())));
        out.push(Case::new(ty, map(entry)));
    }
    for c in &r.cycles {
        let steps: Option<Vec<Step>> = c.edges.iter().map(|e| ctx.weak_step(e)).collect();
        match steps.and_then(|s| cycle_type(&s).map(|ty| (s, ty))) {
            Some((steps, ty)) if c.edges_cut == 0 => {
                let txns = c.edges.iter().map(|e| e.from).collect();
                out.push(cycle_case(ctx, txns, steps, ty));
            }
            _ => {
                // A cycle through an axiom edge: the Adya cycle the edge stands for, if any.
                let adya = c.edges.iter().find_map(|e| match &e.reason {
                    EdgeReason::Axiom(a) => ctx.axiom_cycle(a),
                    _ => None,
                });
                if let Some((txns, steps)) = adya {
                    if let Some(ty) = cycle_type(&steps) {
                        out.push(cycle_case(ctx, txns, steps, ty));
                        continue;
                    }
                }
                let edges = c
                    .edges
                    .iter()
                    .map(|e| (e.from, e.to, weak_edge_words(e)))
                    .collect();
                out.push(own_cycle_case(ctx, c.anomaly.row().key, edges));
            }
        }
    }
}

fn weak_edge_words(e: &CycleEdge) -> String {
    match &e.reason {
        EdgeReason::SessionOrder if e.from == INITIAL_TXN => {
            "the initial state comes before every transaction".to_string()
        }
        EdgeReason::SessionOrder => "session order".to_string(),
        EdgeReason::WriteRead { read, write, .. } => format!("{read} reads {write}"),
        EdgeReason::WriteWrite { earlier, later, .. } => {
            format!("{earlier} was installed before {later}")
        }
        EdgeReason::Axiom(a) => format!(
            "{} axiom: {} reads {} from {}, and the writer of {} is visible to it ({:?})",
            a.axiom, a.t3.label, a.key, a.write_x, a.key, a.relation
        ),
    }
}

fn strong_cases(ctx: &Context<'_>, r: &StrongReport, out: &mut Vec<Case>) {
    let Some(v) = &r.violation else {
        if let Some(causal) = &r.causal {
            weak_cases(ctx, causal, out);
        }
        return;
    };
    let steps: Option<Vec<Step>> = v.cycle.iter().map(|e| ctx.strong_step(e)).collect();
    let row = anomalies::by_name(&v.anomaly);
    let own_name = row.map_or(v.anomaly.as_str(), |r| r.key);
    match steps {
        Some(steps) if !steps.is_empty() => {
            // Elle's rule on the steps written (one `:rw` step G-single-item, two adjacent
            // ones G2-item, …: the cycle shown is what a reader of the map checks), else the
            // report's own Adya name (its core's phenomenon under every version order).
            let ty = cycle_type(&steps).or_else(|| match v.adya.as_deref() {
                Some("G-single") => Some(format!("G-single-item{}", suffix(&steps))),
                Some("G2") | Some("G2-item") => Some(format!("G2-item{}", suffix(&steps))),
                Some(a @ ("G0" | "G1c")) => Some(format!("{a}{}", suffix(&steps))),
                _ => None,
            });
            let txns: Vec<TxnId> = v.cycle.iter().map(|e| e.from).collect();
            // The engineer's anomaly, when Elle names it too (`lost-update`).
            if let Some(elle) = row.and_then(|r| r.elle).filter(|e| elle_knows(e)) {
                if ty.as_deref() != Some(elle) {
                    out.push(Case::new(
                        elle.to_string(),
                        map(vec![
                            ("type", kw(elle)),
                            (
                                "key",
                                v.cycle
                                    .iter()
                                    .find_map(|e| e.key.as_deref())
                                    .map_or(ElleValue::Nil, ElleValue::datum),
                            ),
                            (
                                "txns",
                                ElleValue::Vec(txns.iter().map(|&t| ctx.op(t)).collect()),
                            ),
                        ]),
                    ));
                }
            }
            match ty {
                Some(ty) => out.push(cycle_case(ctx, txns, steps, ty)),
                None => out.push(own_cycle_case(
                    ctx,
                    own_name,
                    v.cycle
                        .iter()
                        .map(|e| (e.from, e.to, e.explanation.clone()))
                        .collect(),
                )),
            }
        }
        _ => {
            // No cycle of dependencies: the core, named.
            let ty = own_type(own_name);
            out.push(Case::new(
                ty.clone(),
                map(vec![
                    ("type", kw(&ty)),
                    (
                        "core",
                        ElleValue::Vec(v.core.iter().map(|c| ctx.op(c.txn.id)).collect()),
                    ),
                    ("description", ElleValue::Str(v.description.clone())),
                ]),
            ));
        }
    }
}

fn timestamp_cases(r: &TimestampReport, out: &mut Vec<Case>) {
    for v in &r.violations {
        let ty = own_type(v.anomaly().row().key);
        out.push(Case::new(
            ty.clone(),
            map(vec![
                ("type", kw(&ty)),
                ("axiom", ElleValue::Str(v.axiom().to_string())),
                ("description", ElleValue::Str(v.to_string())),
            ]),
        ));
    }
}

/// The anomalies behind a violated verdict.
fn cases_of(ctx: &Context<'_>, v: &Verdict) -> Vec<Case> {
    let mut out = Vec::new();
    // A verdict an anomaly of the input itself decided (`with_observed_anomalies`): the
    // anomaly is shown with the others the input shows; its report found nothing.
    if let (Some(h), Some(id)) = (ctx.history, v.anomaly_id()) {
        if h.observed_anomalies().iter().any(|a| a.anomaly == id) {
            return out;
        }
    }
    match v.report.as_deref() {
        Some(LevelReport::Weak(r)) => weak_cases(ctx, r, &mut out),
        Some(LevelReport::Strong(r)) => strong_cases(ctx, r, &mut out),
        Some(LevelReport::Timestamps(r)) => timestamp_cases(r, &mut out),
        None => {}
    }
    out
}

/// Elle's `:valid?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElleValid {
    /// `true`.
    True,
    /// `false`.
    False,
    /// `:unknown`.
    Unknown,
}

/// The result map of Elle's checker for these verdicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElleResult {
    /// `:valid?`.
    pub valid: ElleValid,
    /// `:anomaly-types`, sorted.
    pub anomaly_types: Vec<String>,
    /// `:anomalies`: per type, its cases.
    pub anomalies: BTreeMap<String, Vec<ElleValue>>,
    /// `:not`: the weakest of Elle's models ruled out (friendly names, sorted).
    pub not: Vec<String>,
    /// `:also-not`: the other models ruled out.
    pub also_not: Vec<String>,
    /// The levels whose verdict is unknown, with the limit that stopped each.
    pub unknown: Vec<(Level, String)>,
    /// `:isopredict/violated`: each violated level, with the model isopredict judged it by
    /// and the anomaly named by the anomaly table, so a reader can tell which model failed
    /// (isopredict's rc is not Elle's read-committed).
    pub violated: Vec<(Level, String)>,
}

/// The model isopredict judges `level` by, in words, where it differs from Elle's model of the
/// same name.
fn isopredict_model(level: Level) -> &'static str {
    match level {
        Level::ReadCommitted => {
            "Biswas & Enea's read committed, with session order: stronger than Elle's \
             read-committed (Adya's PL-2, which forbids G1 only)"
        }
        Level::CutIsolation => "Biswas & Enea's cut isolation (repeatable reads)",
        Level::ReadAtomic => "Biswas & Enea's read atomic, with session order",
        Level::Causal => "Biswas & Enea's causal consistency",
        Level::Prefix => "Biswas & Enea's prefix consistency",
        Level::Snapshot => {
            "snapshot isolation with session order (Elle's strong-session-snapshot-isolation)"
        }
        Level::Serializable => {
            "serializability with session order (Elle's strong-session-serializable)"
        }
        Level::StrictSerializable => "strict serializability (Elle's strict-serializable)",
    }
}

/// Elle's result map for `verdicts` (one level's, or every level's), whose input is `history`
/// when it was built (see the module documentation).
pub fn elle_result(
    verdicts: &[Verdict],
    history: Option<&History>,
    list_append: bool,
) -> ElleResult {
    let ctx = Context::new(history, list_append);
    // Weakest level first: a stronger level's anomaly in isopredict's own words is shown only
    // when the anomalies found do not already rule its level out.
    let mut order: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| v.verdict == Outcome::Violated)
        .collect();
    order.sort_by_key(|v| verdicts.iter().filter(|w| v.level.implies(w.level)).count());
    let mut anomalies: BTreeMap<String, Vec<ElleValue>> = BTreeMap::new();
    let mut elle_types: BTreeSet<String> = BTreeSet::new();
    // Each report once, with the level it was first met at.
    let mut seen_reports: Vec<*const LevelReport> = Vec::new();
    let mut own: Vec<(Level, Vec<Case>)> = Vec::new();
    for v in &order {
        if let Some(r) = &v.report {
            let p = std::sync::Arc::as_ptr(r);
            if seen_reports.contains(&p) {
                continue;
            }
            seen_reports.push(p);
        }
        let (named, theirs): (Vec<Case>, Vec<Case>) =
            cases_of(&ctx, v).into_iter().partition(|c| c.elle);
        for c in named {
            elle_types.insert(c.ty.clone());
            push_case(&mut anomalies, c);
        }
        own.push((v.level, theirs));
    }
    // What the input itself shows (Elle's incompatible orders, duplicate elements), whenever a
    // level it violates was found violated.
    if let Some(h) = history {
        for a in h.observed_anomalies() {
            if order.iter().any(|v| a.violates(v.level)) {
                elle_types.insert(a.name.to_string());
                push_case(&mut anomalies, observed_case(&ctx, a));
            }
        }
    }
    let mut level_models: BTreeSet<String> = BTreeSet::new();
    let ruled_out = |types: &BTreeSet<String>, models: &BTreeSet<String>| {
        let mut all = impossible_models(types);
        all.extend(models_implying(models));
        all
    };
    for v in &order {
        let Some(m) = level_model(v.level) else {
            continue;
        };
        if ruled_out(&elle_types, &level_models).contains(m) {
            continue;
        }
        level_models.insert(m.to_string());
        if let Some(i) = own.iter().position(|(l, _)| *l == v.level) {
            for c in std::mem::take(&mut own[i].1) {
                push_case(&mut anomalies, c);
            }
        }
    }
    let unknown: Vec<(Level, String)> = verdicts
        .iter()
        .filter(|v| v.verdict == Outcome::Unknown)
        .map(|v| {
            (
                v.level,
                v.unknown_reason
                    .clone()
                    .unwrap_or_else(|| "no reason given".to_string()),
            )
        })
        .collect();
    let valid = if !order.is_empty() {
        ElleValid::False
    } else if !unknown.is_empty() {
        ElleValid::Unknown
    } else {
        ElleValid::True
    };
    let (not, also_not) = boundary(&ruled_out(&elle_types, &level_models));
    let violated = order
        .iter()
        .map(|v| {
            let anomaly = v.anomaly_label().unwrap_or_else(|| "no name".to_string());
            (v.level, anomaly)
        })
        .collect();
    ElleResult {
        violated,
        valid,
        anomaly_types: anomalies.keys().cloned().collect(),
        anomalies,
        not,
        also_not,
        unknown,
    }
}

/// Whether an Elle history's text is a list-append one (it appends): its initial state is
/// then `:elle.list-append/init`, else `nil`.
pub fn is_list_append(text: &[u8]) -> bool {
    text.windows(6).any(|w| w == b"append")
}

fn observed_case(ctx: &Context<'_>, a: &crate::history::ObservedAnomaly) -> Case {
    Case::new(
        a.name.to_string(),
        map(vec![
            ("type", kw(a.name)),
            (
                "ops",
                ElleValue::Vec(a.txns.iter().map(|&t| ctx.op(t)).collect()),
            ),
            (
                "line",
                a.line
                    .map_or(ElleValue::Nil, |l| ElleValue::Int(i64::from(l))),
            ),
            ("description", ElleValue::Str(a.description.clone())),
        ]),
    )
}

fn push_case(anomalies: &mut BTreeMap<String, Vec<ElleValue>>, c: Case) {
    let list = anomalies.entry(c.ty).or_default();
    if !list.contains(&c.entry) {
        list.push(c.entry);
    }
}

impl ElleResult {
    /// The result map (exactly `{:valid? true}` when valid, as Elle writes it).
    pub fn to_value(&self) -> ElleValue {
        let valid = match self.valid {
            ElleValid::True => return map(vec![("valid?", ElleValue::Bool(true))]),
            ElleValid::False => ElleValue::Bool(false),
            ElleValid::Unknown => kw("unknown"),
        };
        let names = |v: &[String]| ElleValue::Set(v.iter().map(|s| kw(s)).collect());
        let mut entries = vec![
            ("valid?", valid),
            (
                "anomaly-types",
                ElleValue::Vec(self.anomaly_types.iter().map(|s| kw(s)).collect()),
            ),
            (
                "anomalies",
                ElleValue::Map(
                    self.anomalies
                        .iter()
                        .map(|(k, v)| (k.clone(), ElleValue::Vec(v.clone())))
                        .collect(),
                ),
            ),
            ("not", names(&self.not)),
            ("also-not", names(&self.also_not)),
        ];
        if !self.violated.is_empty() {
            entries.push((
                "isopredict/violated",
                ElleValue::Map(
                    self.violated
                        .iter()
                        .map(|(l, anomaly)| {
                            (
                                l.short_name().to_string(),
                                map(vec![
                                    ("model", ElleValue::Str(isopredict_model(*l).to_string())),
                                    ("anomaly", ElleValue::Str(anomaly.clone())),
                                ]),
                            )
                        })
                        .collect(),
                ),
            ));
        }
        if !self.unknown.is_empty() {
            entries.push((
                "unknown",
                ElleValue::Map(
                    self.unknown
                        .iter()
                        .map(|(l, why)| (l.short_name().to_string(), ElleValue::Str(why.clone())))
                        .collect(),
                ),
            ));
        }
        map(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    /// jepsen-io/elle test/elle/list_append_test.clj, checker-test: the `:not` of G0, G1a,
    /// G1c, G-single-item, G2-item and the process/realtime variants.
    #[test]
    fn boundary_matches_elles_tests() {
        let not = |types: &[&str]| boundary(&impossible_models(&set(types))).0;
        assert_eq!(not(&["G0"]), ["read-uncommitted"]);
        assert_eq!(not(&["G1a"]), ["read-committed"]);
        assert_eq!(not(&["G1c"]), ["read-committed"]);
        assert_eq!(not(&["G1c", "incompatible-order"]), ["read-committed"]);
        assert_eq!(
            not(&["G-single-item"]),
            ["consistent-view", "repeatable-read"]
        );
        assert_eq!(not(&["G2-item"]), ["repeatable-read"]);
        assert_eq!(
            not(&["G-single-item-realtime"]),
            ["strong-snapshot-isolation"]
        );
        assert_eq!(
            not(&["G-single-item-process"]),
            ["strong-session-snapshot-isolation"]
        );
        assert_eq!(
            not(&["G-nonadjacent-item-process"]),
            ["strong-session-snapshot-isolation"]
        );
        // Elle's :also-not of G2-item holds serializable and strict (strong) serializable,
        // never snapshot isolation (write skew is allowed there).
        let also = boundary(&impossible_models(&set(&["G2-item"]))).1;
        assert!(also.contains(&"serializable".to_string()));
        assert!(also.contains(&"strong-serializable".to_string()));
        assert!(!also.contains(&"snapshot-isolation".to_string()));
    }

    #[test]
    fn cycle_names_follow_elles_rule() {
        let ww = || Step::Ww(ElleValue::Nil);
        let wr = || Step::Wr(ElleValue::Nil);
        let rw = || Step::Rw(ElleValue::Nil);
        let p = || Step::Process(ElleValue::Nil);
        let rt = || Step::Realtime(ElleValue::Nil);
        assert_eq!(cycle_type(&[ww(), ww()]).as_deref(), Some("G0"));
        assert_eq!(cycle_type(&[wr(), ww()]).as_deref(), Some("G1c"));
        assert_eq!(cycle_type(&[rw(), ww()]).as_deref(), Some("G-single-item"));
        assert_eq!(cycle_type(&[rw(), rw()]).as_deref(), Some("G2-item"));
        assert_eq!(
            cycle_type(&[rw(), wr(), rw(), p()]).as_deref(),
            Some("G-nonadjacent-item-process")
        );
        assert_eq!(
            cycle_type(&[rw(), rt()]).as_deref(),
            Some("G-single-item-realtime")
        );
        assert_eq!(cycle_type(&[p(), rt()]), None);
    }

    #[test]
    fn edn_and_json_render_the_same_map() {
        let v = map(vec![
            ("valid?", ElleValue::Bool(false)),
            ("anomaly-types", ElleValue::Vec(vec![kw("G0")])),
            ("not", ElleValue::Set(vec![kw("read-uncommitted")])),
            ("key", ElleValue::datum("x")),
            ("n", ElleValue::datum("12")),
            ("s", ElleValue::datum("a key")),
        ]);
        let edn = v.to_edn();
        assert!(
            edn.starts_with("{:valid? false\n :anomaly-types [:G0]"),
            "{edn}"
        );
        assert!(edn.contains(":not #{:read-uncommitted}"), "{edn}");
        assert!(
            edn.contains(":n 12") && edn.contains(":s \"a key\""),
            "{edn}"
        );
        let json = v.to_json();
        assert_eq!(json["valid?"], false);
        assert_eq!(json["anomaly-types"][0], "G0");
        assert_eq!(json["not"][0], "read-uncommitted");
        assert_eq!(json["key"], "x");
        assert_eq!(json["n"], 12);
    }
}
