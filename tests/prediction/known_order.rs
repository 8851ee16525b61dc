//! Prediction and the known write order (issue 10): Elle list-append reads reveal each key's
//! version order; `predict` checks the observed run under it (level and serializability),
//! while predicted executions, whose reads differ, are not bound to it (docs/prediction.md).

use isopredict::check::Level;
use isopredict::formats::{self, Format};
use isopredict::predict::{predict, Engine, PredictOptions, Strategy, Verdict};

/// T1 appends 1 to x and 1 to z; T2 reads z empty and appends 2 to x; T3 reads x = [1 2].
/// As registers this is serializable (T2, T3, T1); under x's known order (1 before 2) T1
/// precedes T2, and T2 missing T1's append to z puts T2 before T1: unserializable, though
/// causal, read atomic and read committed.
const LOST_ORDER: &str = "\
{:type :invoke, :f :txn, :value [[:append :x 1] [:append :z 1]], :process 0}
{:type :ok, :f :txn, :value [[:append :x 1] [:append :z 1]], :process 0}
{:type :invoke, :f :txn, :value [[:r :z nil] [:append :x 2]], :process 1}
{:type :ok, :f :txn, :value [[:r :z []] [:append :x 2]], :process 1}
{:type :invoke, :f :txn, :value [[:r :x nil]], :process 2}
{:type :ok, :f :txn, :value [[:r :x [1 2]]], :process 2}
";

fn verdict(h: &isopredict::history::History, level: Level, engine: Engine) -> Verdict {
    let mut options = PredictOptions::new(level, Strategy::ExactStrict);
    options.engine = engine;
    predict(h, &options).unwrap().verdict
}

#[test]
fn the_observed_run_is_unserializable_under_the_known_order() {
    let h = formats::read_str(LOST_ORDER, "lost.edn", Some(Format::Elle)).unwrap();
    assert_eq!(h.known_write_order().len(), 1);
    for level in [Level::Causal, Level::ReadAtomic, Level::ReadCommitted] {
        assert_eq!(
            verdict(&h, level, Engine::Scalable),
            Verdict::ObservedUnserializable,
            "{level}"
        );
    }
    // Under snapshot isolation the two writers of x may not be concurrent, so T1 is in T2's
    // snapshot and T2 should have read T1's z: the observed run violates SI itself.
    assert_eq!(
        verdict(&h, Level::Snapshot, Engine::Scalable),
        Verdict::ObservedViolation
    );

    // The same run as rw-register reads (no version order revealed) is serializable, so the
    // verdict is about predictions, not the observed run.
    let registers = LOST_ORDER
        .replace(":append", ":w")
        .replace("[:r :z []]", "[:r :z nil]")
        .replace("[:r :x [1 2]]", "[:r :x 2]");
    let plain = formats::read_str(&registers, "plain.edn", Some(Format::Elle)).unwrap();
    assert!(plain.known_write_order().is_empty());
    for level in [Level::Causal, Level::Snapshot] {
        let v = verdict(&plain, level, Engine::Scalable);
        assert!(
            !matches!(
                v,
                Verdict::ObservedUnserializable | Verdict::ObservedViolation
            ),
            "{level}: {v:?}"
        );
    }
}
