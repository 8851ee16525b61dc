//! Once a stream is complete, `watch`'s verdict equals the offline verdict of the same history
//! (issue 19, item 1): random timestamped histories (registers and lists, with and without
//! first-committer-wins, some with mutated reads, timestamps or writes, some list reads missing
//! an element before their last) are piped into the
//! built binary's `watch --level si|ser` over standard input, and its final verdict (exit code
//! and summary) is compared with the decision core's `decide` on the same history with the
//! timestamps as evidence (`check --level si|ser`).

use crate::common;

use isopredict::check::Level;
use isopredict::formats::timekiller;
use isopredict::generate::rng::Rng;
use isopredict::generate::timestamped::{generate_timestamped, TsGenParams};
use isopredict::history::timestamped::{TimestampedHistory, TsOpKind};
use isopredict::ser::chronos::{TsCheckOptions, TsLevel};
use isopredict::verdict::engines::check_timestamps;
use isopredict::verdict::{decide, Evidence, EvidenceChoice, Input, Limits, Outcome};

use common::cli::{isopredict_with_stdin, stderr, stdout};

/// `watch --level LEVEL --initial-value 0 --json` over `h` on standard input: whether it found
/// a violation (exit code 1) or not (0), and its summary line.
fn watch(h: &TimestampedHistory, level: &str) -> (bool, serde_json::Value) {
    let mut bytes = Vec::new();
    timekiller::write_timestamped(h, &mut bytes).unwrap();
    let o = isopredict_with_stdin(
        &["watch", "--level", level, "--initial-value", "0", "--json"],
        &bytes,
    );
    let out = stdout(&o);
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {out}{}", stderr(&o)));
    let violated = match o.status.code() {
        Some(0) => false,
        Some(1) => true,
        other => panic!("watch exited with {other:?}: {out}{}", stderr(&o)),
    };
    assert_eq!(
        summary["summary"]["stats"]["transactions"],
        h.txns.len() as u64,
        "{out}"
    );
    (violated, summary)
}

/// The decision core's verdict of `h` at `level`.
fn offline(h: &TimestampedHistory, level: Level) -> bool {
    let input = Input::from_timestamped(h.clone());
    let v = decide(&input, level, EvidenceChoice::Auto, &Limits::default()).unwrap();
    assert_eq!(v.evidence, Evidence::Timestamps, "{}", v.line());
    assert_ne!(v.verdict, Outcome::Unknown, "{}", v.line());
    v.verdict == Outcome::Violated
}

/// A few random changes that may break the history at si or ser: a read returns another
/// value of its key, two transactions swap start or commit timestamps, a write gets a fresh
/// value. Register histories only (list values are kept whole).
fn mutate(h: &mut TimestampedHistory, rng: &mut Rng, count: usize) {
    let n = h.txns.len() as u64;
    let mut fresh = 1_000_000i64;
    for _ in 0..count {
        let (a, b) = (rng.below(n) as usize, rng.below(n) as usize);
        let ops = h.txns[a].ops_start as usize..h.txns[a].ops_end as usize;
        match rng.below(4) {
            // Swaps keep every start at or before its commit: `check` refuses a history
            // with a transaction that starts after it commits (the decision core builds the
            // history for a second opinion), while the timestamp checkers report it.
            0 if h.txns[b].start <= h.txns[a].commit && h.txns[a].start <= h.txns[b].commit => {
                let s = h.txns[a].start;
                h.txns[a].start = h.txns[b].start;
                h.txns[b].start = s;
            }
            1 if h.txns[a].start <= h.txns[b].commit && h.txns[b].start <= h.txns[a].commit => {
                let c = h.txns[a].commit;
                h.txns[a].commit = h.txns[b].commit;
                h.txns[b].commit = c;
            }
            0 | 1 => {}
            2 => {
                if let Some(o) = ops.clone().find(|&o| h.ops[o].kind == TsOpKind::Read) {
                    let key = h.ops[o].key;
                    let writes: Vec<i64> = h
                        .ops
                        .iter()
                        .filter(|w| w.kind == TsOpKind::Write && w.key == key)
                        .map(|w| w.value)
                        .collect();
                    if let Some(&v) = writes.get(rng.below(writes.len() as u64 + 1) as usize) {
                        h.ops[o].value = v;
                        h.ops[o].null = false;
                    }
                }
            }
            _ => {
                if let Some(o) = ops.clone().find(|&o| h.ops[o].kind == TsOpKind::Write) {
                    fresh += 1;
                    h.ops[o].value = fresh;
                }
            }
        }
    }
}

/// A list read loses one of its elements before the last (TimeKiller's online checker, which
/// compares only last elements, misses it; `watch` and `check` compare whole lists).
fn drop_a_middle_element(h: &mut TimestampedHistory, rng: &mut Rng) {
    let reads: Vec<usize> = (0..h.ops.len())
        .filter(|&o| {
            h.ops[o].kind == TsOpKind::ReadList && h.ops[o].value as u64 & 0xffff_ffff >= 2
        })
        .collect();
    let Some(&o) = reads.get(rng.below(reads.len().max(1) as u64) as usize) else {
        return;
    };
    let start = (h.ops[o].value as u64 >> 32) as usize;
    let len = (h.ops[o].value as u64 & 0xffff_ffff) as usize;
    let mut items = h.lists[start..start + len].to_vec();
    items.remove(rng.below(len as u64 - 1) as usize);
    let at = h.lists.len();
    h.lists.extend_from_slice(&items);
    h.ops[o].value = ((at as u64) << 32 | items.len() as u64) as i64;
}

#[test]
fn watch_verdict_equals_the_offline_verdict() {
    let mut agree = [[0usize; 2]; 2]; // [si, ser][consistent, violated]
    let mut disagreements = Vec::new();
    let mut case = 0u64;
    // Histories whose own SER check (commit-timestamp order) passes while SI fails: ser is
    // violated only through the chain (ser implies si).
    let mut ser_by_si_only = 0;
    for lists in [false, true] {
        for first_committer_wins in [true, false] {
            for seed in 0..20u64 {
                case += 1;
                let mut rng = Rng::new(seed ^ 0x0a11_0e5e);
                let mut h = generate_timestamped(&TsGenParams {
                    sessions: 1 + rng.below(5) as u32,
                    txns: 5 + rng.below(40) as u32,
                    ops_per_txn: 1 + rng.below(5) as u32,
                    keys: 1 + rng.below(6) as u32,
                    // Some write-only histories: without reads, SER in commit-timestamp
                    // order holds, and only SI's NOCONFLICT can fail.
                    read_fraction: if seed % 5 == 4 { 0.0 } else { 0.5 },
                    lists,
                    first_committer_wins,
                    seed,
                    ..Default::default()
                });
                if !lists && seed % 2 == 1 {
                    let count = 1 + rng.below(3) as usize;
                    mutate(&mut h, &mut rng, count);
                }
                if lists && seed % 3 == 1 {
                    drop_a_middle_element(&mut h, &mut rng);
                }
                let own_ser =
                    check_timestamps(&h, TsLevel::Serializable, &TsCheckOptions::default());
                let si = check_timestamps(&h, TsLevel::Snapshot, &TsCheckOptions::default());
                ser_by_si_only += usize::from(own_ser.consistent && !si.consistent);
                for (i, (name, level)) in [("si", Level::Snapshot), ("ser", Level::Serializable)]
                    .into_iter()
                    .enumerate()
                {
                    let want = offline(&h, level);
                    let (got, summary) = watch(&h, name);
                    if want == got {
                        agree[i][usize::from(want)] += 1;
                    } else {
                        let mut bytes = Vec::new();
                        timekiller::write_timestamped(&h, &mut bytes).unwrap();
                        disagreements.push(format!(
                            "case {case} (lists {lists}, fcw {first_committer_wins}, seed \
                             {seed}) {name}: offline violated {want}, watch violated {got}\n\
                             {summary}\n{}",
                            String::from_utf8_lossy(&bytes)
                        ));
                    }
                }
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreement(s) (agreements: si {:?}, ser {:?}):\n{}",
        disagreements.len(),
        agree[0],
        agree[1],
        disagreements.join("\n")
    );
    // Both verdicts occur at both levels, so the comparison can fail either way.
    assert!(
        agree.iter().flatten().all(|&n| n > 0),
        "si [consistent, violated] {:?}, ser {:?}",
        agree[0],
        agree[1]
    );
    assert!(
        ser_by_si_only > 0,
        "no history violates ser only through si"
    );
    eprintln!(
        "{case} histories agree: si [consistent, violated] {:?}, ser {:?} ({ser_by_si_only} \
         violate ser only through si)",
        agree[0], agree[1]
    );
}

/// The minimal history on which `watch --level ser` once answered consistent while `check
/// --level ser` answered violated: two writers of one key whose intervals overlap. Serial in
/// commit-timestamp order (Aion-SER alone finds nothing), but not snapshot isolation
/// (NOCONFLICT), and ser implies si.
#[test]
fn watch_ser_is_violated_when_si_is() {
    let text = concat!(
        "[\n",
        r#"{"tid": 1, "sid": 1, "sts": {"p": 1, "l": 0}, "cts": {"p": 3, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 1}]},"#,
        "\n",
        r#"{"tid": 2, "sid": 2, "sts": {"p": 2, "l": 0}, "cts": {"p": 4, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 2}]}"#,
        "\n]\n"
    );
    let h = timekiller::read_timestamped(text.as_bytes(), "overlap.json", Some(0)).unwrap();
    assert!(check_timestamps(&h, TsLevel::Serializable, &TsCheckOptions::default()).consistent);
    assert!(offline(&h, Level::Serializable));
    let (violated, summary) = watch(&h, "ser");
    assert!(violated, "{summary}");
    assert_eq!(summary["summary"]["counts"]["no_conflict"], 0, "{summary}");
    assert_eq!(
        summary["summary"]["si_counts"]["no_conflict"], 1,
        "{summary}"
    );
    // The text summary says why.
    let o = isopredict_with_stdin(
        &["watch", "--level", "ser", "--initial-value", "0"],
        text.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    // Named as `check` names it (the anomaly table's label), the axiom's line beside it.
    assert!(
        out.starts_with(
            "si (ser implies si): concurrent write conflict (Chronos NOCONFLICT): NOCONFLICT: T1"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "violations: 1 (ser in commit-timestamp order: 0 (none); si, which ser implies: 1 \
             (1 concurrent write conflict (Chronos NOCONFLICT)))"
        ),
        "{out}"
    );
}

/// `watch ARGS` with `text` on standard input: the exit code and what it printed.
fn watch_stdin(args: &[&str], text: &str) -> (Option<i32>, String) {
    let mut all = vec!["watch"];
    all.extend(args);
    let o = isopredict_with_stdin(&all, text.as_bytes());
    (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
}

/// Issue 35 item 5: an "EXT NEVER … nothing writes 7" made final before the writer of 7
/// arrived (`--timeout 0`: a reader's verdicts are final at its arrival) is taken back when
/// the writer arrives, and the counts, the exit code and the JSON are `check`'s. It used to
/// stay counted (exit 1 where `check` says consistent).
#[test]
fn a_late_writer_takes_back_a_never_verdict() {
    let reader = r#"{"tid": 2, "sid": 2, "sts": {"p": 8, "l": 0}, "cts": {"p": 9, "l": 0}, "ops": [{"t": "r", "k": 1, "v": 7}]}"#;
    // The writer commits at 6, before the reader's snapshot: the read is explained.
    let before = r#"{"tid": 1, "sid": 1, "sts": {"p": 2, "l": 0}, "cts": {"p": 6, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 7}]}"#;
    // The writer starts after the reader's snapshot: EXT AFTER, not NEVER.
    let after = r#"{"tid": 1, "sid": 1, "sts": {"p": 10, "l": 0}, "cts": {"p": 12, "l": 0}, "ops": [{"t": "w", "k": 1, "v": 7}]}"#;
    for (writer, violated) in [(before, false), (after, true)] {
        // Offline, the writer first (the order `check` reads does not matter).
        let file = format!("[\n{writer},\n{reader}\n]\n");
        let h = timekiller::read_timestamped(file.as_bytes(), "late.json", Some(0)).unwrap();
        assert_eq!(offline(&h, Level::Serializable), violated);
        let offline_si = check_timestamps(&h, TsLevel::Snapshot, &TsCheckOptions::default());
        // Online, the reader first and final before the writer comes.
        let stream = format!("{reader}\n{writer}\n");
        let common = ["--timeout", "0", "--initial-value", "0"];
        let (code, out) = watch_stdin(&[&["--level", "ser"], &common[..]].concat(), &stream);
        assert_eq!(code, Some(i32::from(violated)), "{out}");
        assert!(
            out.contains("RETRACTED: read outside the snapshot (Chronos EXT): EXT NEVER: T1.1")
                && out.contains("arrived after that verdict"),
            "{out}"
        );
        assert!(out.contains("taken back"), "{out}");
        let (code, out) = watch_stdin(
            &[&["--level", "si", "--json"], &common[..]].concat(),
            &stream,
        );
        assert_eq!(code, Some(i32::from(violated)), "{out}");
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let summary = &lines.last().unwrap()["summary"];
        assert_eq!(summary["retracted"], 1, "{out}");
        assert_eq!(
            summary["counts"],
            serde_json::to_value(&offline_si.counts).unwrap(),
            "{out}"
        );
        let retraction = lines.iter().find(|l| l.get("retracted").is_some()).unwrap();
        assert_eq!(retraction["retracted"]["kind"], "NEVER", "{out}");
        assert_eq!(retraction["writer"]["tid"], "1", "{out}");
        assert_eq!(retraction["explained"], !violated, "{out}");
    }
}
