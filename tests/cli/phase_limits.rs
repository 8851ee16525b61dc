//! End-to-end tests of issue 23 item 4: every phase of `check` before the solver (the causal
//! check, the strong levels' saturation) answers within the timeout and the memory budget,
//! with exit code 3 naming the limit, never an abort; and si/pc take ser's serial order.

use crate::common;

use std::process::Command;

use common::cli::{isopredict, stderr, stdout, Scratch};

/// `isopredict ARGS` under `ulimit -v KB` (address-space limit), through `sh`.
fn isopredict_under_ulimit(kb: u64, args: &[&str]) -> std::process::Output {
    let mut script = format!("ulimit -v {kb} && exec \"$0\"");
    for i in 0..args.len() {
        script.push_str(&format!(" \"${}\"", i + 1));
    }
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_isopredict"))
        .args(args)
        .output()
        .expect("sh runs")
}

fn generate(s: &Scratch, name: &str, args: &[&str]) -> String {
    let path = s.arg(name);
    let mut all = vec!["generate"];
    all.extend_from_slice(args);
    all.extend(["--out", &path]);
    let o = isopredict(&all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    path
}

#[test]
fn a_wide_history_under_an_address_space_limit_answers_without_an_abort() {
    // 10,000 short sessions (40,000 transactions): dense clocks over the sessions would take
    // 3.2 GB; over a path cover of the forced edges the saturation fits the 2 GB default
    // budget under a 4 GB address-space limit and ends; the commit-order search then has to
    // find an order among 10,000 sessions, which it does not within 20 s: unknown (exit 3)
    // naming the limit, never an abort.
    let s = Scratch::new("wide");
    let h = generate(
        &s,
        "wide.plume",
        &[
            "--sessions",
            "10000",
            "--txns",
            "4",
            "--ops",
            "4",
            "--keys",
            "2000",
            "--consistent",
            "ser",
            "--seed",
            "1",
            "--format",
            "plume",
        ],
    );
    let o = isopredict_under_ulimit(4 << 20, &["check", &h, "--timeout", "20"]);
    let out = stdout(&o);
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "{out}{}",
        stderr(&o)
    );
    if o.status.code() == Some(3) {
        assert!(out.contains("timeout") || out.contains("memory"), "{out}");
    }
    // An explicit small budget: unknown, naming it.
    let o = isopredict(&["check", &h, "--level", "ser", "--memory", "5"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}{}", stderr(&o));
    assert!(out.contains("memory budget of 5 MB"), "{out}");
}

#[test]
fn the_commit_order_search_keeps_its_memo_within_the_memory_budget() {
    // 2,000 sessions × 4 serializable transactions: the search memoises thousands of failed
    // states of 2 KB each (a byte per session) without finding the order.
    let s = Scratch::new("memo");
    let wide = generate(
        &s,
        "wide.txt",
        &[
            "--sessions",
            "2000",
            "--txns",
            "4",
            "--ops",
            "4",
            "--keys",
            "2000",
            "--consistent",
            "ser",
            "--seed",
            "1",
        ],
    );
    let args = |h: &str| -> Vec<String> {
        [
            "check",
            h,
            "--level",
            "ser",
            "--black-box",
            "--engine",
            "search",
            "--memory",
            "16",
        ]
        .map(String::from)
        .to_vec()
    };
    // 16 MB: the saturation's edges, indexes and clock columns fit, the memo does not.
    let wide_args = args(&wide);
    let o = isopredict(&wide_args.iter().map(String::as_str).collect::<Vec<_>>());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}{}", stderr(&o));
    assert!(
        out.contains("memo of failed states reached 8 MB, half of the 16 MB budget"),
        "{out}"
    );
    // 50 sessions × 500 transactions: the search meets thousands of dead ends, and the
    // nogoods it learns from them keep its memo within the same budget.
    let long = generate(
        &s,
        "h.txt",
        &[
            "--sessions",
            "50",
            "--txns",
            "500",
            "--ops",
            "8",
            "--keys",
            "10000",
            "--consistent",
            "ser",
            "--seed",
            "0",
        ],
    );
    let long_args = args(&long);
    let o = isopredict(&long_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn the_causal_check_names_its_memory_budget() {
    // 2,000 sessions of causally dependent transactions from a causal store (readers see old
    // versions, so many clocks are kept at once): the clocks need more than 1 MB.
    let s = Scratch::new("ccmem");
    let h = generate(
        &s,
        "h.json",
        &[
            "--sessions",
            "2000",
            "--txns",
            "5",
            "--ops",
            "4",
            "--keys",
            "50",
            "--consistent",
            "cc",
        ],
    );
    let o = isopredict(&["check", &h, "--level", "cc", "--memory", "1"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}{}", stderr(&o));
    assert!(out.contains("over the memory budget of 1 MB"), "{out}");
    let o = isopredict(&["check", &h, "--level", "cc"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn a_large_serial_history_answers_within_the_timeout_at_every_level() {
    // 200,000 operations (25,000 transactions): every phase looks at the deadline.
    let s = Scratch::new("serbig");
    let h = generate(
        &s,
        "h.json",
        &[
            "--sessions",
            "50",
            "--txns",
            "500",
            "--ops",
            "8",
            "--keys",
            "2000",
            "--consistent",
            "ser",
            "--seed",
            "1",
        ],
    );
    let o = isopredict(&["check", &h, "--level", "all", "--timeout", "0.05"]);
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

#[test]
fn si_and_pc_take_sers_serial_order() {
    let s = Scratch::new("siser");
    let h = generate(
        &s,
        "h.json",
        &[
            "--sessions",
            "10",
            "--txns",
            "200",
            "--dist",
            "zipf",
            "--consistent",
            "ser",
        ],
    );
    for level in ["si", "pc"] {
        let o = isopredict(&["check", &h, "--level", level]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
        assert!(out.contains("(implied by ser)"), "{level}: {out}");
    }
}
