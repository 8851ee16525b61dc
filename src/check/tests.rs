//! Hand-written histories, one (at least) per anomaly name, with the exact name and cycle.

use super::test_util::h;
use super::*;
use crate::history::{HistoryBuilder, ReadFrom};

fn run(history: &History, level: Level) -> CheckReport {
    let report = check(history, level, &CheckOptions::default()).unwrap();
    // With no budget for exhaustive searches, the verdict and the counts are the same, and
    // the cycles are still cycles with the same kinds of names.
    let frugal = check_with_budgets(
        history,
        level,
        &CheckOptions::default(),
        cycles::Budgets {
            clock_entries: 0,
            bfs_edge_visits: 0,
            candidates: 0,
        },
    )
    .unwrap();
    assert_eq!(frugal.consistent, report.consistent);
    assert_eq!(frugal.read_violations, report.read_violations);
    assert_eq!(frugal.cycle_count, report.cycle_count);
    for (a, b) in frugal.cycles.iter().zip(&report.cycles) {
        for (x, y) in a.edges.iter().zip(a.edges.iter().cycle().skip(1)) {
            assert_eq!(x.to, y.from);
        }
        assert_eq!(
            a.anomaly == Anomaly::CyclicCo,
            b.anomaly == Anomaly::CyclicCo
        );
    }
    // The JSON output round-trips.
    let json = serde_json::to_string(&report).unwrap();
    let back: CheckReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, report);
    report
}

/// The read violations as (name, read line, related line or 0).
fn reads(report: &CheckReport) -> Vec<(Anomaly, u32, u32)> {
    report
        .read_violations
        .iter()
        .map(|v| {
            (
                v.anomaly,
                v.read.line,
                v.related.as_ref().map_or(0, |r| r.line),
            )
        })
        .collect()
}

/// The one reported cycle as (its name, [(from, to, "so" | "wr <key>" | instance name)]).
fn cycle(report: &CheckReport) -> (Anomaly, Vec<(TxnId, TxnId, String)>) {
    assert!(!report.consistent);
    assert_eq!(report.cycles.len(), 1, "{report}");
    let c = &report.cycles[0];
    let edges = c
        .edges
        .iter()
        .map(|e| {
            let what = match &e.reason {
                EdgeReason::SessionOrder => "so".to_string(),
                EdgeReason::WriteRead { key, .. } => format!("wr {key}"),
                EdgeReason::Axiom(a) => a.anomaly.name().to_string(),
                EdgeReason::WriteWrite { key, .. } => format!("ww {key}"),
            };
            (e.from, e.to, what)
        })
        .collect();
    // Consecutive edges chain and the cycle closes.
    for (a, b) in c.edges.iter().zip(c.edges.iter().cycle().skip(1)) {
        assert_eq!(a.to, b.from);
    }
    (c.anomaly, edges)
}

use crate::history::TxnId;

fn e(from: TxnId, to: TxnId, what: &str) -> (TxnId, TxnId, String) {
    (from, to, what.to_string())
}

const ALL: [Level; 4] = [
    Level::ReadCommitted,
    Level::CutIsolation,
    Level::ReadAtomic,
    Level::Causal,
];

fn verdicts(history: &History) -> [bool; 4] {
    ALL.map(|l| run(history, l).consistent)
}

// ---- read consistency (TAP a–f), reported at every level -------------------------------

#[test]
fn thin_air_read() {
    let hist = h("wx1 | rx5");
    for level in ALL {
        let r = run(&hist, level);
        assert_eq!(reads(&r), vec![(Anomaly::ThinAirRead, 2, 0)]);
        assert!(r.cycles.is_empty());
        assert!(r.read_violations[0].explanation.contains("R(x,5)"));
    }
}

#[test]
fn aborted_read() {
    let hist = h("wx1 ! | rx1");
    for level in ALL {
        assert_eq!(
            reads(&run(&hist, level)),
            vec![(Anomaly::AbortedRead, 2, 1)]
        );
    }
}

#[test]
fn future_read() {
    let hist = h("rx1 wx1");
    for level in ALL {
        assert_eq!(reads(&run(&hist, level)), vec![(Anomaly::FutureRead, 1, 2)]);
    }
}

#[test]
fn not_my_own_write() {
    let hist = h("wx1 | wx2 rx1");
    for level in ALL {
        assert_eq!(
            reads(&run(&hist, level)),
            vec![(Anomaly::NotMyOwnWrite, 3, 2)]
        );
    }
}

#[test]
fn not_my_last_write() {
    let hist = h("wx1 wx2 rx1");
    for level in ALL {
        assert_eq!(
            reads(&run(&hist, level)),
            vec![(Anomaly::NotMyLastWrite, 3, 2)]
        );
    }
}

#[test]
fn intermediate_read() {
    let hist = h("wx1 wx2 | rx1");
    for level in ALL {
        assert_eq!(
            reads(&run(&hist, level)),
            vec![(Anomaly::IntermediateRead, 3, 2)]
        );
    }
}

#[test]
fn non_repeatable_read_is_allowed_by_rc_only() {
    // AWDIT's read-committed/non-repeatable-read.txt, with our initial transaction.
    let hist = h("wx1 | wx2 | rx1 rx2");
    assert_eq!(verdicts(&hist), [true, false, false, false]);
    for level in [Level::CutIsolation, Level::ReadAtomic, Level::Causal] {
        assert_eq!(
            reads(&run(&hist, level)),
            vec![(Anomaly::NonRepeatableRead, 4, 3)]
        );
    }
    assert!(run(&hist, Level::ReadCommitted).read_violations.is_empty());
}

// ---- causality cycles (TAP g) -----------------------------------------------------------

#[test]
fn cyclic_co_of_two_write_read_edges() {
    // t1 reads x from t2 and t2 reads y from t1.
    let hist = h("rx1 wy1 | ry1 wx1");
    for level in ALL {
        let r = run(&hist, level);
        assert!(r.read_violations.is_empty());
        let (name, edges) = cycle(&r);
        assert_eq!(name, Anomaly::CyclicCo);
        assert_eq!(edges, vec![e(1, 2, "wr y"), e(2, 1, "wr x")]);
    }
}

#[test]
fn cyclic_co_through_session_order() {
    // t1 reads the x that its session successor t2 writes.
    let hist = h("rx1 / wx1");
    for level in ALL {
        let (name, edges) = cycle(&run(&hist, level));
        assert_eq!(name, Anomaly::CyclicCo);
        assert_eq!(edges, vec![e(1, 2, "so"), e(2, 1, "wr x")]);
    }
}

// ---- Read Committed: non-monotonic reads (TAP h, i) --------------------------------------

#[test]
fn non_mono_read_co_awdit_fig_4a() {
    // t1 →so t2 both write x; t3 reads y from t2, then x from t1.
    let hist = h("wx1 / wx2 wy2 | ry2 rx1");
    assert_eq!(verdicts(&hist), [false, true, false, false]);
    for level in [Level::ReadCommitted, Level::ReadAtomic, Level::Causal] {
        let r = run(&hist, level);
        let (name, edges) = cycle(&r);
        assert_eq!(name, Anomaly::NonMonoReadCo, "{level}");
        assert_eq!(edges, vec![e(2, 1, "NonMonoReadCO"), e(1, 2, "so")]);
        let EdgeReason::Axiom(a) = &r.cycles[0].edges[0].reason else {
            panic!()
        };
        let AxiomInstance {
            t3,
            key,
            read_x,
            read_y,
            relation,
            t2_write_x,
            ..
        } = a.as_ref();
        assert_eq!((t3.id, key.as_str(), read_x.line), (3, "x", 5));
        assert_eq!(read_y.as_ref().map(|r| r.line), Some(4));
        assert_eq!(*relation, Relation::WriteRead);
        assert_eq!(t2_write_x.as_ref().map(|w| w.line), Some(2));
    }
}

#[test]
fn non_mono_read_of_one_key_and_initial_value() {
    // One transaction reads x from t1, then the initial x: init must follow t1 (AWDIT's
    // artifact misses this; our initial transaction comes first).
    let hist = h("wx1 | rx1 rx0");
    let (name, edges) = cycle(&run(&hist, Level::ReadCommitted));
    assert_eq!(name, Anomaly::NonMonoReadCo);
    assert_eq!(edges, vec![e(1, 0, "NonMonoReadCO"), e(0, 1, "so")]);
}

#[test]
fn non_mono_read_cm() {
    // t3 sees t1 before t2 and t4 sees t2 before t1 (each on two keys).
    let hist = h("wx1 wy1 | wx2 wy2 | rx1 ry2 | rx2 ry1");
    assert_eq!(verdicts(&hist), [false, true, false, false]);
    let (name, edges) = cycle(&run(&hist, Level::ReadCommitted));
    assert_eq!(name, Anomaly::NonMonoReadCm);
    assert_eq!(
        edges,
        vec![e(1, 2, "NonMonoReadCM"), e(2, 1, "NonMonoReadCM")]
    );
}

// ---- Read Atomic: fractured reads (TAP k, l) ---------------------------------------------

#[test]
fn fractured_read_co_in_one_session() {
    // W(x,1); W(x,2); R(x,1) in one session: RC allows it, RA does not (plume.md pitfall 2).
    let hist = h("wx1 / wx2 / rx1");
    assert_eq!(verdicts(&hist), [true, true, false, false]);
    for level in [Level::ReadAtomic, Level::Causal] {
        let r = run(&hist, level);
        let (name, edges) = cycle(&r);
        assert_eq!(name, Anomaly::FracturedReadCo);
        assert_eq!(edges, vec![e(2, 1, "FracturedReadCO"), e(1, 2, "so")]);
        let EdgeReason::Axiom(a) = &r.cycles[0].edges[0].reason else {
            panic!()
        };
        assert_eq!(a.relation, Relation::SessionOrder);
    }
}

#[test]
fn fractured_read_co_awdit_fig_4b() {
    // t3 reads x from t1, then y from t2, which also writes x; t1 →so t2.
    let hist = h("wx1 / wx2 wy2 | rx1 ry2");
    assert_eq!(verdicts(&hist), [true, true, false, false]);
    let (name, edges) = cycle(&run(&hist, Level::ReadAtomic));
    assert_eq!(name, Anomaly::FracturedReadCo);
    assert_eq!(edges, vec![e(2, 1, "FracturedReadCO"), e(1, 2, "so")]);
}

#[test]
fn initial_value_read_after_a_session_write() {
    // t2 reads the initial x although its session predecessor t1 wrote x.
    let hist = h("wx1 / rx0");
    assert_eq!(verdicts(&hist), [true, true, false, false]);
    let (name, edges) = cycle(&run(&hist, Level::ReadAtomic));
    assert_eq!(name, Anomaly::FracturedReadCo);
    assert_eq!(edges, vec![e(1, 0, "FracturedReadCO"), e(0, 1, "so")]);
}

#[test]
fn fractured_read_cm() {
    // t3 reads x from t1 and then y from t2 (which writes x): t2 before t1. t4 reads z from
    // t2 and then w from t1 (which writes z): t1 before t2.
    let hist = h("wx1 ww1 wz1 | wx2 wy2 wz2 | rx1 ry2 | rz2 rw1");
    assert_eq!(verdicts(&hist), [true, true, false, false]);
    let (name, edges) = cycle(&run(&hist, Level::ReadAtomic));
    assert_eq!(name, Anomaly::FracturedReadCm);
    assert_eq!(
        edges,
        vec![e(1, 2, "FracturedReadCM"), e(2, 1, "FracturedReadCM")]
    );
}

// ---- Causal: conflicts (TAP m, n) ---------------------------------------------------------

#[test]
fn co_conflict_cm_awdit_fig_4c() {
    // t1 →so t2 write x; t2 →wr t4 →wr t5 and t5 reads x from t1. Needs the writer itself in
    // the reader's clock (AWDIT's off-by-one).
    let hist = h("wx1 / wx2 wy2 | ry2 wz1 | rz1 rx1");
    assert_eq!(verdicts(&hist), [true, true, true, false]);
    let r = run(&hist, Level::Causal);
    let (name, edges) = cycle(&r);
    assert_eq!(name, Anomaly::CoConflictCm);
    assert_eq!(edges, vec![e(2, 1, "COConflictCM"), e(1, 2, "so")]);
    let EdgeReason::Axiom(a) = &r.cycles[0].edges[0].reason else {
        panic!()
    };
    assert_eq!((a.relation, a.t3.id), (Relation::HappensBefore, 4));
}

#[test]
fn co_conflict_with_initial_value_in_next_transaction() {
    // t2 reads x from t1; t3, after t2 in the session, reads the initial x.
    let hist = h("wx1 | rx1 / rx0");
    assert_eq!(verdicts(&hist), [true, true, true, false]);
    let (name, edges) = cycle(&run(&hist, Level::Causal));
    assert_eq!(name, Anomaly::CoConflictCm);
    assert_eq!(edges, vec![e(1, 0, "COConflictCM"), e(0, 1, "so")]);
}

#[test]
fn conflict_cm() {
    // Two causal conflicts in opposite directions.
    let hist = h("wx1 wq1 | wx2 wp2 | rq1 wa1 | ra1 rx2 | rp2 wb2 | rb2 rx1");
    assert_eq!(verdicts(&hist), [true, true, true, false]);
    let (name, edges) = cycle(&run(&hist, Level::Causal));
    assert_eq!(name, Anomaly::ConflictCm);
    assert_eq!(edges, vec![e(1, 2, "ConflictCM"), e(2, 1, "ConflictCM")]);
}

#[test]
fn plume_pitfall_1_commit_order_per_level() {
    // Satisfies RC and RA; under CC, t3's instance looks like a non-monotonic read only
    // because CC's commit order orders t1 before t2 (plume.md §5 point 1).
    let hist = h("wx1 wq1 | wx2 wy2 | ry2 rx1 | rq1 ww7 | rw7 rx2");
    assert_eq!(verdicts(&hist), [true, true, true, false]);
    let (name, edges) = cycle(&run(&hist, Level::Causal));
    assert_eq!(name, Anomaly::NonMonoReadCm);
    assert_eq!(edges, vec![e(2, 1, "NonMonoReadCM"), e(1, 2, "ConflictCM")]);
}

// ---- AWDIT's labelled examples in the paper -----------------------------------------------

#[test]
fn biswas_enea_example_satisfies_ra_not_cc() {
    // AWDIT's read-atomic/biswas-enea.txt.
    let hist = h("wx1 / wx2 | rx2 wy1 | rx1 ry1");
    assert_eq!(verdicts(&hist), [true, true, true, false]);
}

#[test]
fn lost_update_and_long_fork_satisfy_cc() {
    assert_eq!(verdicts(&h("wx1 | rx1 wx2 | rx1 wx3")), [true; 4]);
    assert_eq!(verdicts(&h("wx1 / rx1 ry0 | wy1 / ry1 rx0")), [true; 4]);
}

// ---- witnesses and reports ------------------------------------------------------------------

#[test]
fn witness_is_a_commit_order_respecting_so_and_wr() {
    let hist = h("wx1 / wy1 | ry1 rx1 wz1 | rz1 / wx2 ! / rx1");
    let options = CheckOptions {
        witness: true,
        ..CheckOptions::default()
    };
    for level in ALL {
        let r = check(&hist, level, &options).unwrap();
        assert!(r.consistent, "{r}");
        let w = r.witness.unwrap();
        assert_eq!(w[0], 0);
        assert_eq!(
            w.len(),
            hist.txns().iter().filter(|t| t.is_committed()).count()
        );
        let pos = |t: TxnId| w.iter().position(|&v| v == t).unwrap();
        for (writer, reader, _) in hist.wr_edges() {
            assert!(pos(writer) < pos(reader));
        }
        for s in hist.sessions() {
            let committed: Vec<TxnId> = s.txns().filter(|&t| hist.txn(t).is_committed()).collect();
            for pair in committed.windows(2) {
                assert!(pos(pair[0]) < pos(pair[1]));
            }
        }
    }
    // Without the option, no witness.
    assert!(run(&hist, Level::Causal).witness.is_none());
}

#[test]
fn unsupported_levels() {
    let hist = h("wx1");
    for level in [Level::Prefix, Level::Snapshot, Level::Serializable] {
        assert_eq!(
            check(&hist, level, &CheckOptions::default()),
            Err(CheckError::Unsupported(level))
        );
    }
}

#[test]
fn text_names_transactions_and_lines() {
    let hist = h("wx1 / wx2 wy2 | ry2 rx1");
    let text = run(&hist, Level::ReadCommitted).render_text();
    assert!(text.contains("VIOLATED"), "{text}");
    assert!(text.contains("NonMonoReadCO (TAP h)"), "{text}");
    // One naming scheme (History::txn_label): T<session>.<k>, both from 1.
    assert!(text.contains("T2.1 [lines 4-5]"), "{text}");
    assert!(text.contains("T1.2 also writes x"), "{text}");
    assert!(!text.contains(" t2 ") && !text.contains("from t"), "{text}");
    assert!(text.contains("R(x,1) at line 5"), "{text}");
    assert!(text.contains("W(x,2) at line 2"), "{text}");
    let dot = run(&hist, Level::ReadCommitted).render_dot().unwrap();
    assert!(dot.starts_with("digraph"));
    assert!(dot.contains("c0_t2 -> c0_t1"), "{dot}");
    assert!(run(&h("wx1"), Level::Causal).render_dot().is_none());
}

#[test]
fn limits_keep_counts_exact() {
    let hist = h("rx5 ry5 rz5");
    let options = CheckOptions {
        max_violations: 2,
        ..CheckOptions::default()
    };
    let r = check(&hist, Level::ReadCommitted, &options).unwrap();
    assert_eq!(r.read_violations.len(), 2);
    assert_eq!(r.read_violation_count, 3);
}

#[test]
fn one_cycle_per_component() {
    let hist = h("wx1 / wx2 / rx1 | wy1 / wy2 / ry1");
    let r = run(&hist, Level::ReadAtomic);
    assert_eq!(r.cycle_count, 2);
    let names: Vec<_> = r.cycles.iter().map(|c| c.anomaly).collect();
    assert_eq!(names, vec![Anomaly::FracturedReadCo; 2]);
    let options = CheckOptions {
        max_violations: 1,
        ..CheckOptions::default()
    };
    let r = check(&hist, Level::ReadAtomic, &options).unwrap();
    assert_eq!((r.cycles.len(), r.cycle_count), (1, 2));
}

#[test]
fn empty_and_aborted_only_histories_are_consistent() {
    let empty = HistoryBuilder::new("empty").build().unwrap();
    let aborted = h("wx1 rx1 ! | rx7 !");
    for level in ALL {
        for hist in [&empty, &aborted] {
            let r = check(
                hist,
                level,
                &CheckOptions {
                    witness: true,
                    ..CheckOptions::default()
                },
            )
            .unwrap();
            assert!(r.consistent);
            assert_eq!(r.witness, Some(vec![0]));
        }
    }
}

#[test]
fn a_long_causality_cycle_is_reported_in_full() {
    // One session t1 … tn, each writing its own key; t1 reads tn's write: a cycle through
    // every transaction, whose shortest cycle has n edges.
    let n = 100_000u32;
    let mut b = HistoryBuilder::new("long");
    let s = b.session(None);
    let keys: Vec<_> = (0..n).map(|i| b.key(&i.to_string())).collect();
    let first = b.begin(s, None);
    b.read(first, keys[n as usize - 1], Some(1), ReadFrom::Value(1), 1);
    for i in 1..n {
        let t = b.begin(s, None);
        b.write(t, keys[i as usize], Some(1), i + 1);
    }
    let hist = b.build().unwrap();
    // (Quadratic work here — a BFS from every member, or list lookups per edge — would not
    // finish in any reasonable time.)
    for level in ALL {
        let r = check(&hist, level, &CheckOptions::default()).unwrap();
        assert_eq!(r.cycles.len(), 1);
        assert_eq!(r.cycles[0].anomaly, Anomaly::CyclicCo);
        assert_eq!(r.cycles[0].edges.len(), n as usize);
        assert!(!r.render_text().is_empty());
    }
}

/// A known version order (an Elle list-append read) makes a write–write cycle (G0) visible:
/// t1 and t2 both write x and y; later reads of x = 2 and y = 1 come with version orders x: t1
/// before t2, y: t2 before t1. Without the orders every level is satisfied; with them none is
/// (a cycle of write–write edges only), and the oracle agrees.
#[test]
fn known_write_order_reveals_g0() {
    use crate::history::{HistoryBuilder, ReadFrom};
    let build = |with_order: bool| {
        let mut b = HistoryBuilder::new("g0");
        let (x, y) = (b.key("x"), b.key("y"));
        let (s1, s2, s3) = (b.session(None), b.session(None), b.session(None));
        let t1 = b.begin(s1, None);
        b.write(t1, x, Some(1), 1);
        b.write(t1, y, Some(1), 1);
        let t2 = b.begin(s2, None);
        b.write(t2, x, Some(2), 2);
        b.write(t2, y, Some(2), 2);
        let t3 = b.begin(s3, None);
        b.read(t3, x, Some(2), ReadFrom::Value(2), 3);
        let s4 = b.session(None);
        let t4 = b.begin(s4, None);
        b.read(t4, y, Some(1), ReadFrom::Value(1), 4);
        if with_order {
            b.version_order(x, &[1, 2], 3);
            b.version_order(y, &[2, 1], 3);
        }
        b.build().unwrap()
    };
    let plain = build(false);
    assert!(plain.known_write_order().is_empty());
    assert!(check(&plain, Level::Causal, &CheckOptions::default())
        .unwrap()
        .is_consistent());
    let h = build(true);
    assert_eq!(h.known_write_order().len(), 2);
    for level in [Level::ReadCommitted, Level::ReadAtomic, Level::Causal] {
        let r = check(&h, level, &CheckOptions::default()).unwrap();
        assert!(!r.is_consistent(), "{level}");
        assert_eq!(r.cycles.len(), 1, "{level}: {r}");
        assert_eq!(r.cycles[0].anomaly, Anomaly::CyclicCo, "{level}: {r}");
        assert!(
            r.cycles[0]
                .edges
                .iter()
                .all(|e| matches!(e.reason, EdgeReason::WriteWrite { .. })),
            "{level}: {r}"
        );
        assert_eq!(oracle::satisfies(&h, level), Some(false), "{level}");
        assert_eq!(oracle::satisfies(&plain, level), Some(true), "{level}");
    }
}

/// Known write orders from an Elle list-append history (x = [1 2], y = [2 1]) order the two
/// writers both ways: write cycle G0, which even RC forbids.
#[test]
fn list_append_orders_reveal_g0() {
    const APPEND: &str = "\
{:type :invoke, :f :txn, :value [[:append :x 1] [:append :y 1]], :process 0, :time 1, :index 0}
{:type :invoke, :f :txn, :value [[:append :x 2] [:append :y 2]], :process 1, :time 2, :index 1}
{:type :ok, :f :txn, :value [[:append :x 1] [:append :y 1]], :process 0, :time 3, :index 2}
{:type :ok, :f :txn, :value [[:append :x 2] [:append :y 2]], :process 1, :time 4, :index 3}
{:type :invoke, :f :txn, :value [[:r :x nil]], :process 2, :time 5, :index 4}
{:type :ok, :f :txn, :value [[:r :x [1 2]]], :process 2, :time 6, :index 5}
{:type :invoke, :f :txn, :value [[:r :y nil]], :process 3, :time 7, :index 6}
{:type :ok, :f :txn, :value [[:r :y [2 1]]], :process 3, :time 8, :index 7}
";
    let h = crate::formats::elle::read_edn(APPEND.as_bytes(), "h.edn").unwrap();
    assert_eq!(h.known_write_order().len(), 2);
    let r = run(&h, Level::ReadCommitted);
    assert!(!r.is_consistent(), "{r}");
}

/// The violations' DOT, byte for byte (one cycle with its axiom's dashed premises, one
/// violating read): the one DOT writer ([`crate::dot::DotWriter`]) must write what was written.
#[test]
fn violations_dot_is_pinned() {
    let cycle = run(&h("wx1 / wx2 wy2 | ry2 rx1"), Level::ReadCommitted)
        .render_dot()
        .unwrap();
    let read = run(&h("wx1 wx2 | rx1"), Level::ReadCommitted)
        .render_dot()
        .unwrap();
    assert_eq!(
        [cycle.as_str(), read.as_str()],
        [
            "digraph violations {\n  label=\"test: read committed violated\";\n  labelloc=t;\n  node [shape=box, fontname=\"monospace\"];\n  subgraph cluster_0 {\n    label=\"cycle 1: non-monotonic read (causal) (Plume TAP h NonMonoReadCO)\";\n    c0_t2 [label=\"T1.2\\nlines 2-3\"];\n    c0_t1 [label=\"T1.1\\nline 1\"];\n    c0_t3 [label=\"T2.1\\nlines 4-5\"];\n    c0_t2 -> c0_t1 [label=\"NonMonoReadCO: x read by T2.1\", color=red, fontcolor=red, style=bold];\n    c0_t1 -> c0_t3 [label=\"wr(x)\", style=dashed, color=gray40, fontcolor=gray40];\n    c0_t2 -> c0_t3 [label=\"wr(y)\", style=dashed, color=gray40, fontcolor=gray40];\n    c0_t1 -> c0_t2 [label=\"so\", color=black];\n  }\n}\n",
            "digraph violations {\n  label=\"test: read committed violated\";\n  labelloc=t;\n  node [shape=box, fontname=\"monospace\"];\n  subgraph cluster_read_0 {\n    label=\"intermediate read (Adya G1b, Elle G1b, Plume TAP f IntermediateRead)\";\n    r0_t2 [label=\"T2.1\\nline 3\"];\n    r0_t1 [label=\"T1.1\\nlines 1-2\"];\n    r0_t1 -> r0_t2 [label=\"R(x,1) at line 3\", color=red, fontcolor=red];\n  }\n}\n"
        ]
    );
}
