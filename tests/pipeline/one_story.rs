//! One anomaly, one story (issue 24): every view of a run's anomaly — the summary, the
//! distinct-anomaly line, the anomaly section, the calls table, the changed reads, the cycle
//! and its facts, the drawing (SVG and DOT) and report.json — names the same transactions:
//! those of the prediction's minimal core. Walks every workload × level × seed 1–5 at a
//! small size (2 calls per terminal), in-process.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use isopredict::check::Level;
use isopredict::pipeline::{run_workload, RunOptions, LEVELS};
use isopredict::predict::Strategy;
use isopredict::report::run_report::RunVerdict;
use isopredict::workloads::{by_name, Size};

/// Every `T<s>.<k>` name in `text`.
fn names(text: &str) -> BTreeSet<String> {
    let b = text.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i] == b'T'
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
            let mut k = j + 1;
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            out.insert(text[i..k].to_string());
            i = k;
        } else {
            i = j;
        }
    }
    out
}

fn set<'a>(xs: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
    xs.into_iter()
        .filter(|x| x.as_str() != "initial state")
        .cloned()
        .collect()
}

/// The markdown section that starts with `## {title}`, up to the next `## `.
fn section<'a>(md: &'a str, title: &str) -> &'a str {
    let start = md
        .find(&format!("## {title}"))
        .unwrap_or_else(|| panic!("no section {title}"));
    let rest = &md[start + 3..];
    &md[start..start + 3 + rest.find("\n## ").unwrap_or(rest.len())]
}

/// Checks every view of one run's anomaly; returns whether the run made a prediction.
fn one_story(workload: &str, level: Level, seed: u64) -> bool {
    let options = RunOptions {
        seed,
        size: Size::Calls(2),
        level,
        strategy: Strategy::ApproxRelaxed,
        timeout: Some(Duration::from_secs(10)),
        ..RunOptions::default()
    };
    let at = format!("{workload} {level:?} seed {seed}");
    let out = run_workload(by_name(workload).unwrap(), &options).unwrap();
    let (Some(p), Some(graph)) = (&out.prediction, &out.anomaly) else {
        return false;
    };
    let core = p.core.as_ref().unwrap_or_else(|| panic!("{at}: no core"));
    let txns: BTreeSet<String> = core.txn_labels.iter().cloned().collect();
    assert!(txns.len() >= 2 || core.txns.len() == 1, "{at}: {txns:?}");
    let r = &out.report;
    let s = r.prediction.as_ref().unwrap();
    // The calls table: exactly the core.
    assert_eq!(set(s.calls.iter().map(|c| &c.txn)), txns, "{at}: calls");
    // The cycle and its facts: only the core's transactions.
    let on_cycle = set(s.cycle.iter().flat_map(|e| [&e.from, &e.to]));
    assert!(!on_cycle.is_empty(), "{at}: a cycle");
    assert!(
        on_cycle.is_subset(&txns),
        "{at}: cycle {on_cycle:?} ⊄ {txns:?}"
    );
    let in_facts = set(s.facts.iter().flat_map(|e| [&e.from, &e.to]));
    assert!(in_facts.is_subset(&txns), "{at}: facts {in_facts:?}");
    // The changed reads: those of the core only.
    let changed = set(s
        .changed_reads
        .iter()
        .flat_map(|c| [&c.reader, &c.new_writer]));
    assert!(changed.is_subset(&txns), "{at}: changed reads {changed:?}");
    assert_eq!(
        s.changed_reads
            .iter()
            .map(|c| c.reads as usize)
            .sum::<usize>(),
        p.changed_reads.iter().filter(|c| c.in_core).count(),
        "{at}"
    );
    // The distinct-anomaly line: the same transactions and the same name.
    let first = &r.anomalies[0];
    assert_eq!(set(first.calls.iter()).len(), first.calls.len());
    let line_txns: BTreeSet<String> = first
        .calls
        .iter()
        .map(|c| c.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(line_txns, txns, "{at}: distinct line");
    let anomaly = s.anomaly.as_deref().unwrap();
    assert!(
        anomaly.starts_with(&format!("**{}**", first.name)),
        "{at}: {anomaly} vs {}",
        first.name
    );
    assert!(
        names(anomaly).is_subset(&txns),
        "{at}: the anomaly names {:?}, the core is {txns:?}",
        names(anomaly)
    );
    // The summary: the same name and count.
    assert!(
        r.summary.contains(&format!("({}", first.name)),
        "{at}: {}",
        r.summary
    );
    assert!(
        r.summary
            .contains(&format!("{} calls involved", txns.len()))
            || r.summary
                .contains(&format!("of {} transaction(s)", txns.len())),
        "{at}: {}",
        r.summary
    );
    // "validated" when the replay followed the prediction, "validated-diverged" when it left
    // it into an execution that is itself valid and unserializable (issue 35 item 1).
    if r.verdict == RunVerdict::AnomalyValidated {
        let v = r.validation.as_ref().unwrap();
        let word = if v.divergences.is_empty() {
            "validated"
        } else {
            "validated-diverged"
        };
        assert_eq!(v.verdict, word, "{at}");
        assert_eq!(first.validation, word, "{at}");
    }
    // The drawing, as SVG and as DOT: the core's boxes and nothing else.
    let boxes: BTreeSet<String> = graph
        .sessions
        .iter()
        .flat_map(|c| c.txns.iter().map(|b| b.title.clone()))
        .collect();
    assert_eq!(boxes, txns, "{at}: drawing");
    assert_eq!(names(&graph.to_svg()), txns, "{at}: SVG");
    assert_eq!(names(&graph.to_dot()), txns, "{at}: DOT");
    // report.md: the anomaly's sections name only its transactions.
    let md = r.to_markdown();
    for title in [
        "The anomaly",
        "Procedure calls involved",
        "Why no serial order exists",
    ] {
        let named = names(section(&md, title));
        assert!(named.is_subset(&txns), "{at}: {title} names {named:?}");
    }
    // The store's own keys by what they mean, never by their raw metadata names.
    assert!(!md.contains("<last primary key>"), "{at}");
    // report.json carries the same object.
    let json = serde_json::to_value(r).unwrap();
    let calls: BTreeSet<String> = json["prediction"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["txn"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(calls, txns, "{at}: report.json");
    true
}

#[test]
fn every_view_names_the_same_transactions() {
    let start = Instant::now();
    let mut predicted = 0;
    let mut runs = 0;
    for workload in ["smallbank", "smallbank-full", "voter", "tpcc", "wikipedia"] {
        for level in LEVELS {
            for seed in 1..=5 {
                runs += 1;
                if one_story(workload, level, seed) {
                    predicted += 1;
                }
            }
        }
    }
    eprintln!(
        "{runs} runs, {predicted} with a prediction, in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(
        predicted >= runs / 3,
        "{predicted} of {runs} runs predicted"
    );
}

#[test]
fn smallbank_seed_1_tells_one_lost_update() {
    let out = run_workload(
        by_name("smallbank").unwrap(),
        &RunOptions {
            seed: 1,
            level: Level::Causal,
            ..RunOptions::default()
        },
    )
    .unwrap();
    let r = &out.report;
    let s = r.prediction.as_ref().unwrap();
    // Before issue 24: the headline named T1.1 and T2.2, the cycle T1.1 → T1.3 → T1.1, and
    // the counts 5 calls and 5 reads. Now one story: the lost update of T1.1 and T2.2.
    assert!(s.anomaly.as_deref().unwrap().starts_with("**lost update**"));
    assert_eq!(
        set(s.calls.iter().map(|c| &c.txn)),
        ["T1.1", "T2.2"].iter().map(|s| s.to_string()).collect()
    );
    assert!(
        r.summary.contains("2 calls involved, 1 read(s)"),
        "{}",
        r.summary
    );
    assert_eq!(r.anomalies[0].name, "lost update");
    let md = r.to_markdown();
    assert!(!md.contains("T1.3 →"), "{md}");
}

#[test]
fn the_doctors_write_skew_is_one_cycle_in_every_view() {
    let out = run_workload(
        by_name("doctors").unwrap(),
        &RunOptions {
            seed: 1,
            level: Level::Snapshot,
            max: 5,
            ..RunOptions::default()
        },
    )
    .unwrap();
    let r = &out.report;
    let md = r.to_markdown();
    let s = r.prediction.as_ref().unwrap();
    let headline = s.anomaly.as_deref().unwrap();
    assert!(headline.starts_with("**write skew**"), "{headline}");
    // Before: the headline named T1.2 and T2.1, the cycle was T1.1 →so T1.2 →ww T1.1 with a
    // "fact 2" and no fact 1, and the drawing showed that loop. Now the cycle goes through
    // the transactions the headline names, and the drawing draws it.
    let named = names(headline);
    let on_cycle: BTreeSet<String> = s
        .cycle
        .iter()
        .flat_map(|e| [e.from.clone(), e.to.clone()])
        .collect();
    assert_eq!(on_cycle, named, "{md}");
    assert!(s.cycle.iter().all(|e| e.kind == "rw"), "{md}");
    // Facts, when cited, are numbered from 1 and each one cited is listed.
    for k in 1..=9 {
        let cited = md.contains(&format!("(fact {k})"));
        if cited {
            assert!(md.contains(&format!("- fact {k}: ")), "fact {k}: {md}");
        }
        if md.contains(&format!("fact {}", k + 1)) {
            assert!(
                md.contains(&format!("fact {k}")),
                "fact {} without {k}: {md}",
                k + 1
            );
        }
    }
    // An observed writer of a changed read that is not in the anomaly is said to be outside
    // it (before: it was in neither the table nor the picture, unexplained).
    let in_calls: BTreeSet<String> = s.calls.iter().map(|c| c.txn.clone()).collect();
    for c in &s.changed_reads {
        if c.old_writer != "initial state" && !in_calls.contains(&c.old_writer) {
            assert!(
                md.contains(&format!(
                    "The observed writer {} is not one of",
                    c.old_writer
                )),
                "{md}"
            );
        }
    }
    // The distinct list's first line: the same name and the same transactions.
    let first = &r.anomalies[0];
    assert_eq!(first.name, "write skew");
    let calls: BTreeSet<String> = first.calls.iter().flat_map(|c| names(c)).collect();
    assert!(on_cycle.is_subset(&calls), "{calls:?} {on_cycle:?}");
    // The drawing: its title names the anomaly; its cycle edges are the cycle's.
    let g = out.anomaly.as_ref().unwrap();
    assert!(g.title.contains("write skew"), "{}", g.title);
    let title = |id: u32| {
        g.sessions
            .iter()
            .flat_map(|c| &c.txns)
            .find(|b| b.id == id)
            .map(|b| b.title.clone())
            .unwrap()
    };
    let drawn: BTreeSet<(String, String)> = g
        .edges
        .iter()
        .filter(|e| e.kind == isopredict::report::anomaly::EdgeKind::Cycle)
        .map(|e| (title(e.from), title(e.to)))
        .collect();
    let cycle: BTreeSet<(String, String)> = s
        .cycle
        .iter()
        .map(|e| (e.from.clone(), e.to.clone()))
        .collect();
    assert_eq!(drawn, cycle);
}
