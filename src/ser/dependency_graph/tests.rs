use super::*;
use crate::check::{check, CheckOptions};
use crate::formats::{read_str, Format};

fn history(edn: &str) -> History {
    read_str(edn, "test.edn", Some(Format::Elle)).unwrap()
}

/// The report at `level`; panics when the order is partial.
fn report(h: &History, level: Level) -> StrongReport {
    let causal = check(h, Level::Causal, &CheckOptions::default()).unwrap();
    let options = KnownOrderOptions {
        witness: true,
        ..KnownOrderOptions::default()
    };
    check_known_order(h, level, &causal, &options).expect("known orders")
}

fn anomaly(h: &History, level: Level) -> Option<(String, String)> {
    let r = report(h, level);
    r.violation.map(|v| (v.anomaly, v.adya.unwrap()))
}

const WRITE_SKEW: &str = "\
{:type :ok, :value [[:r :x []] [:append :y 1]], :process 0}
{:type :ok, :value [[:r :y []] [:append :x 1]], :process 1}
";

#[test]
fn a_write_skew_is_si_but_not_ser() {
    let h = history(WRITE_SKEW);
    let ser = report(&h, Level::Serializable);
    assert_eq!(ser.verdict, Verdict::Violated);
    let v = ser.violation.unwrap();
    assert_eq!(v.anomaly, "write skew");
    assert_eq!(v.adya.as_deref(), Some("G2-item"));
    assert_eq!(v.cycle.len(), 2);
    assert!(v.cycle.iter().all(|e| e.kind == StrongEdgeKind::ReadWrite));
    assert!(v.cycle[0].explanation.contains("rw:"), "{:?}", v.cycle[0]);
    assert_eq!(v.cycle[0].to, v.cycle[1].from);
    assert_eq!(v.cycle[1].to, v.cycle[0].from);
    for level in [Level::Snapshot, Level::Prefix] {
        let r = report(&h, level);
        assert!(r.is_consistent(), "{level}");
        assert_eq!(r.witness.as_ref().unwrap().len(), 3, "{level}");
    }
}

#[test]
fn a_lost_update_is_pc_but_not_si() {
    let h = history(
        "\
{:type :ok, :value [[:r :x []] [:append :x 1]], :process 0}
{:type :ok, :value [[:r :x []] [:append :x 2]], :process 1}
{:type :ok, :value [[:r :x [1 2]]], :process 2}
",
    );
    assert_eq!(
        anomaly(&h, Level::Snapshot),
        Some(("lost update".to_string(), "G-single".to_string()))
    );
    assert!(report(&h, Level::Serializable).violation.is_some());
    assert!(report(&h, Level::Prefix).is_consistent());
}

#[test]
fn a_g_single_over_two_keys_is_no_lost_update() {
    // Elle's G-single test (list_append_test.clj): T2 misses T1's y but its x follows T1's.
    // The rw is on y, the ww on x: no write is overwritten unseen, so it is not a lost update.
    let h = history(
        "\
{:type :ok, :value [[:append :x 1] [:append :y 1]], :process 0}
{:type :ok, :value [[:append :x 2] [:r :y nil]], :process 1}
{:type :ok, :value [[:r :x [1 2]]], :process 2}
",
    );
    let (name, adya) = anomaly(&h, Level::Serializable).unwrap();
    assert_ne!(name, "lost update");
    assert_eq!(adya, "G-single");
    assert_eq!(
        anomaly(&h, Level::Snapshot).map(|(n, _)| n),
        Some(name.clone())
    );
}

#[test]
fn a_long_fork_is_causal_but_not_pc() {
    let h = history(
        "\
{:type :ok, :value [[:append :x 1]], :process 0}
{:type :ok, :value [[:append :y 1]], :process 1}
{:type :ok, :value [[:r :x [1]] [:r :y []]], :process 2}
{:type :ok, :value [[:r :x []] [:r :y [1]]], :process 3}
",
    );
    assert!(check(&h, Level::Causal, &CheckOptions::default())
        .unwrap()
        .is_consistent());
    let (name, adya) = anomaly(&h, Level::Prefix).unwrap();
    assert_eq!((name.as_str(), adya.as_str()), ("prefix violation", "G2"));
    let (name, _) = anomaly(&h, Level::Snapshot).unwrap();
    assert_eq!(name, "non-adjacent anti-dependency cycle");
}

#[test]
fn the_known_order_binds_prefix_consistency() {
    // x's order [1 2] puts T1 before T2, z's order [1 2] puts T2 before T5, and T3 reads T5's
    // w: T3's snapshot, a prefix of the commit order holding T5, holds T2, so T3 should have
    // read x 2, not x 1. Causal consistency allows it (no T2 ⇝ T3 dependency: ww orders
    // without making visible), and so does prefix consistency when the writers of x may be
    // reordered; under the known order it is a read skew (one anti-dependency, after wr).
    let h = history(
        "\
{:type :ok, :value [[:append :x 1]], :process 0}
{:type :ok, :value [[:append :x 2] [:append :z 1]], :process 1}
{:type :ok, :value [[:append :z 2] [:append :w 1]], :process 2}
{:type :ok, :value [[:r :w [1]] [:r :x [1]]], :process 3}
{:type :ok, :value [[:r :x [1 2]] [:r :z [1 2]]], :process 4}
",
    );
    assert!(check(&h, Level::Causal, &CheckOptions::default())
        .unwrap()
        .is_consistent());
    let r = report(&h, Level::Prefix);
    let v = r.violation.unwrap();
    assert_eq!(
        (v.anomaly.as_str(), v.adya.as_deref()),
        ("read skew", Some("G-single"))
    );
    let kinds: Vec<StrongEdgeKind> = v.cycle.iter().map(|e| e.kind).collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert_eq!(
        crate::check::oracle::satisfies(&h, Level::Prefix),
        Some(false)
    );
    // Without the z link (T5 appends to a key T2 never wrote) it is prefix consistent.
    let h = history(
        "\
{:type :ok, :value [[:append :x 1]], :process 0}
{:type :ok, :value [[:append :x 2] [:append :z 1]], :process 1}
{:type :ok, :value [[:append :v 2] [:append :w 1]], :process 2}
{:type :ok, :value [[:r :w [1]] [:r :x [1]]], :process 3}
{:type :ok, :value [[:r :x [1 2]] [:r :z [1]]], :process 4}
",
    );
    assert!(report(&h, Level::Prefix).is_consistent());
    assert_eq!(
        crate::check::oracle::satisfies(&h, Level::Prefix),
        Some(true)
    );
}

#[test]
fn unobserved_appends_form_a_tail_and_other_partial_orders_go_to_the_search() {
    // Two appends to x that no read shows: a tail after x 1, each ordered after it.
    let h = history(
        "\
{:type :ok, :value [[:append :x 1]], :process 0}
{:type :ok, :value [[:append :x 2]], :process 1}
{:type :ok, :value [[:append :x 3]], :process 2}
{:type :ok, :value [[:r :x [1]]], :process 3}
",
    );
    let chains = VersionChains::of(&h).unwrap();
    assert!(chains.has_tails());
    for level in [Level::Prefix, Level::Snapshot, Level::Serializable] {
        assert!(report(&h, level).is_consistent(), "{level}");
    }
    // Both tail writers read x empty after it held [1]... as a lost update against x 1's
    // writer: T4 reads x [] and appends, so it comes before T1, which its tail write follows.
    let h = history(
        "\
{:type :ok, :value [[:append :x 1]], :process 0}
{:type :ok, :value [[:r :x []] [:append :x 2]], :process 1}
{:type :ok, :value [[:append :x 3]], :process 2}
{:type :ok, :value [[:r :x [1]]], :process 3}
",
    );
    let (name, _) = anomaly(&h, Level::Snapshot).unwrap();
    assert_eq!(name, "lost update");
    // A partial order that is not a tail: w1 before w2 is known, w3 is unordered and read.
    let mut b = crate::history::HistoryBuilder::new("partial");
    let x = b.key("x");
    let (s1, s2, s3, s4) = (
        b.session(None),
        b.session(None),
        b.session(None),
        b.session(None),
    );
    let t1 = b.begin(s1, None);
    b.write(t1, x, Some(1), 1);
    let t2 = b.begin(s2, None);
    b.write(t2, x, Some(2), 2);
    let t3 = b.begin(s3, None);
    b.write(t3, x, Some(3), 3);
    let t4 = b.begin(s4, None);
    b.read(t4, x, Some(3), crate::history::ReadFrom::Value(3), 4);
    b.write_before((t1, 0), (t2, 0), 5);
    let h = b.build().unwrap();
    assert!(VersionChains::of(&h).is_none());
    let causal = check(&h, Level::Causal, &CheckOptions::default()).unwrap();
    assert_eq!(
        check_known_order(
            &h,
            Level::Serializable,
            &causal,
            &KnownOrderOptions::default()
        )
        .unwrap_err(),
        Undecided::PartialOrder
    );
}

#[test]
fn real_time_order_is_strict_serializability() {
    // T1 appends x 1 and completes; then T2 is invoked and reads x empty: serializable (T2
    // first) but not in real-time order.
    let h = history(
        "\
{:type :invoke, :f :txn, :value [[:append :x 1]], :process 0}
{:type :ok, :f :txn, :value [[:append :x 1]], :process 0}
{:type :invoke, :f :txn, :value [[:r :x nil]], :process 1}
{:type :ok, :f :txn, :value [[:r :x []]], :process 1}
",
    );
    assert!(report(&h, Level::Serializable).is_consistent());
    let (name, adya) = anomaly(&h, Level::StrictSerializable).unwrap();
    assert_eq!(name, "real-time single anti-dependency cycle");
    assert_eq!(adya, "G-single-item-realtime");
    let r = report(&h, Level::StrictSerializable);
    let kinds: Vec<StrongEdgeKind> = r.violation.unwrap().cycle.iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&StrongEdgeKind::RealTime), "{kinds:?}");
}

#[test]
fn a_serial_history_gets_a_serial_order() {
    let h = history(
        "\
{:type :ok, :value [[:append :x 1] [:r :y []]], :process 0}
{:type :ok, :value [[:r :x [1]] [:append :y 1]], :process 1}
{:type :ok, :value [[:r :x [1]] [:r :y [1]] [:append :x 2]], :process 0}
{:type :ok, :value [[:r :x [1 2]]], :process 1}
",
    );
    for level in [
        Level::Prefix,
        Level::Snapshot,
        Level::Serializable,
        Level::StrictSerializable,
    ] {
        let r = report(&h, level);
        assert!(r.is_consistent(), "{level}");
        let w = r.witness.unwrap();
        assert_eq!(w[0], INITIAL_TXN);
        assert_eq!(w.len(), 5);
    }
}

#[test]
fn interleaved_writes_of_one_key_are_a_write_cycle_on_the_graph() {
    // The graph alone (the caller checks causal consistency first, which sees this G0 too).
    let h = history(
        "\
{:type :ok, :value [[:append :x 1] [:append :y 2]], :process 0}
{:type :ok, :value [[:append :x 2] [:append :y 1]], :process 1}
{:type :ok, :value [[:r :x [1 2]] [:r :y [1 2]]], :process 2}
",
    );
    let chains = VersionChains::of(&h).unwrap();
    let graph = DependencyGraph::build(&h, &chains, false);
    match decide_on_graph(&h, &graph, GraphLevel::Serializable) {
        GraphDecision::Violated(cycle) => {
            assert_eq!(
                name_cycle(&h, &graph, &cycle, GraphLevel::Serializable).0,
                AnomalyId::WriteCycle
            );
        }
        GraphDecision::Consistent(_) => panic!("a write cycle"),
    }
}

/// T2 and T3 append x after the shown [1] and nobody reads them. T3's snapshot must precede
/// T4's commit (T3 read y empty, T4 appended y 1) and T5's snapshot (which reads T4's y and
/// x [1]) must precede the commits of both: T3 cannot come after T2 in x (T2's commit would
/// wait for T5's snapshot, which waits for T4's commit, which waits for T3's snapshot, which
/// would wait for T2's commit), so x's tail is T3 then T2. The lowest id is tried first (T2),
/// hits a dead end, and the search takes T3.
const TAIL_NEEDS_A_CHOICE: &str = "\
{:type :ok, :value [[:append :x 1]], :process 0}
{:type :ok, :value [[:append :x 3]], :process 1}
{:type :ok, :value [[:r :y []] [:append :x 2]], :process 2}
{:type :ok, :value [[:append :y 1]], :process 3}
{:type :ok, :value [[:r :x [1]] [:r :y [1]]], :process 4}
";

#[test]
fn an_unobserved_tail_is_ordered_by_searching_its_writers_orders() {
    let h = history(TAIL_NEEDS_A_CHOICE);
    let chains = VersionChains::of(&h).unwrap();
    assert!(chains.has_tails());
    let r = report(&h, Level::Snapshot);
    assert!(r.is_consistent(), "{:?}", r.violation);
    assert_eq!(
        r.summary.search_steps, 2,
        "a choice, then the same choice replayed"
    );
    assert_eq!(r.summary.failed_states, 1, "one dead end");
    // The witness puts T3 (the x 2 append) before T2 (x 3).
    let labels = r.witness_labels.unwrap();
    let at = |l: &str| labels.iter().position(|x| x == l).unwrap();
    let (t2, t3) = (h.txn_label(2), h.txn_label(3));
    assert!(at(&t3) < at(&t2), "{labels:?}");
    assert_eq!(
        crate::check::oracle::satisfies(&h, Level::Snapshot),
        Some(true)
    );
}

#[test]
fn the_tail_search_gives_up_past_its_replays() {
    let h = history(TAIL_NEEDS_A_CHOICE);
    let chains = VersionChains::of(&h).unwrap();
    let graph = DependencyGraph::build(&h, &chains, false);
    let csr = searched_graph(&h, &graph, GraphLevel::Snapshot);
    let tails = chains.contended_tails(&h);
    let mut stats = tail_order::TailSearch::default();
    assert_eq!(
        tail_order::order_tails(&csr, &tails, 1, &mut stats),
        TailOrder::GaveUp
    );
    assert!(matches!(
        tail_order::order_tails(&csr, &tails, 2, &mut stats),
        TailOrder::Ordered(_)
    ));
}

/// T2 and T3 both append x, unobserved, and are concurrent whichever way x's tail goes: T2
/// read y before T3's append of it, T3 read z before T2's. Each order of the tail closes a
/// cycle (a write skew is fine under si; two concurrent writers of x are not).
#[test]
fn concurrent_unobserved_writers_violate_si_under_every_order() {
    let h = history(
        "\
{:type :ok, :value [[:append :x 1]], :process 0}
{:type :ok, :value [[:r :y []] [:append :z 1] [:append :x 2]], :process 1}
{:type :ok, :value [[:r :z []] [:append :y 1] [:append :x 3]], :process 2}
{:type :ok, :value [[:r :x [1]]], :process 3}
{:type :ok, :value [[:r :y [1]] [:r :z [1]]], :process 4}
",
    );
    let r = report(&h, Level::Snapshot);
    let v = r.violation.clone().expect("no order of x's tail is si");
    assert!(v.description.contains("never read"), "{}", v.description);
    assert!(v
        .cycle
        .iter()
        .any(|e| e.kind == StrongEdgeKind::WriteWrite && e.key.as_deref() == Some("x")));
    assert_eq!(
        crate::check::oracle::satisfies(&h, Level::Snapshot),
        Some(false)
    );
    // The ww edge between x's two unread appends comes from the order tried, not from every
    // order: the report says which edges hold in every order and which only in the chosen one.
    let chosen: Vec<&StrongEdge> = v.chosen_order_edges.iter().map(|&i| &v.cycle[i]).collect();
    assert!(!chosen.is_empty(), "{:?}", v.cycle);
    for e in &chosen {
        assert_eq!(e.kind, StrongEdgeKind::WriteWrite);
        assert_eq!(e.key.as_deref(), Some("x"));
        assert!([e.from_label.as_str(), e.to_label.as_str()]
            .iter()
            .all(|l| *l == "T2.1" || *l == "T3.1"));
    }
    let text = r.render_text();
    assert!(
        !text.contains("each edge is a dependency of every commit order"),
        "{text}"
    );
    assert!(
        text.contains("[chosen order]") && text.contains("each edge not marked"),
        "{text}"
    );
    // Without x's tail it is a write skew: si holds, and pc.
    assert!(report(&h, Level::Prefix).is_consistent());
    let h = history(
        "\
{:type :ok, :value [[:r :y []] [:append :z 1]], :process 1}
{:type :ok, :value [[:r :z []] [:append :y 1]], :process 2}
{:type :ok, :value [[:r :y [1]] [:r :z [1]]], :process 4}
",
    );
    assert!(report(&h, Level::Snapshot).is_consistent());
}
