//! Validation of predictions by replay (IsoPredict PLDI'24 §5), on the paper's deposit example
//! (Algorithm 1, Figures 1–3) written directly against the store API, and on Smallbank.

use isopredict::check::Level;
use isopredict::history::{History, HistoryBuilder, ReadFrom};
use isopredict::ser::SerVerdict;
use isopredict::store::{KvRead, KvWrite, Loader, Outcome, Snapshot, Tx, Value};
use isopredict::verdict::engines::{check, check_serializable};
use isopredict::workloads::{
    by_name, run, validate, InvariantCheck, Procedure, Run, RunConfig, Size, Step, Terminal,
    Validation, Verdict, Workload,
};

const ACCOUNT: u64 = 42;
const INITIAL: i64 = 100;

/// The paper's deposit program: read the balance, write balance + amount, commit.
struct Deposit;

struct Teller {
    amount: i64,
}

impl Terminal for Teller {
    fn run(&mut self, _procedure: usize, _step: u32, tx: &mut Tx<'_>) -> Step {
        let balance = tx.get(ACCOUNT).and_then(|v| v.as_i64()).unwrap_or(0);
        tx.put(ACCOUNT, Value::Int(balance + self.amount));
        // Each call also logs its deposit, so the invariant can count deposits.
        let log = tx.next_row_counter();
        tx.set_insert(7, log);
        tx.put(1000 + log, Value::Int(self.amount));
        Step::Done(Outcome::Commit)
    }
}

impl Workload for Deposit {
    fn name(&self) -> &'static str {
        "deposit"
    }
    fn procedures(&self) -> &'static [Procedure] {
        &[Procedure {
            name: "Deposit",
            weight: 100,
        }]
    }
    fn first_session(&self) -> u64 {
        1
    }
    fn load(&self, loader: &mut Loader<'_>) {
        loader.put(ACCOUNT, Value::Int(INITIAL));
    }
    fn terminal(&self, id: usize) -> Box<dyn Terminal> {
        Box::new(Teller {
            amount: 50 + 10 * id as i64,
        })
    }
    fn invariants(&self, state: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
        let mut logged = 0;
        for l in state.set_ever_inserted(7) {
            if state.set_contains(7, l) {
                logged += state.get(1000 + l).and_then(|v| v.as_i64()).unwrap_or(0);
            }
        }
        let balance = state.get(ACCOUNT).and_then(|v| v.as_i64()).unwrap_or(0);
        vec![InvariantCheck {
            id: "D1",
            description: "the balance is the initial balance plus every deposit",
            holds: balance == INITIAL + logged,
            detail: format!("balance {balance}, deposits {logged}"),
        }]
    }
}

fn config() -> RunConfig {
    RunConfig {
        terminals: 2,
        ..RunConfig::paper(1, Size::Small)
    }
}

/// Replays the deposit program under causal consistency, following `predicted`.
fn validate_deposit(observed: &Run, predicted: &History) -> Validation {
    validate(
        &Deposit,
        &config(),
        Some(observed),
        predicted,
        Level::Causal,
        None,
    )
    .unwrap()
}

/// The first transaction of each session, both reading the balance from the initial state
/// (Figure 3: the lost update causal consistency allows), or, with `second_reads_from_first`,
/// the second session reading the first session's write instead (a serializable prediction).
fn deposit_prediction(observed: &History, second_reads_from_first: bool) -> History {
    let mut b = HistoryBuilder::new("predicted");
    for k in observed.key_names() {
        b.key(k);
    }
    let account = b.key(&ACCOUNT.to_string());
    let s1 = b.session(Some(1));
    let s2 = b.session(Some(2));
    let t1 = b.begin(s1, Some(0));
    b.read(t1, account, None, ReadFrom::Initial, 0);
    b.write(t1, account, None, 0);
    let t2 = b.begin(s2, Some(0));
    let from = if second_reads_from_first {
        ReadFrom::Txn(t1)
    } else {
        ReadFrom::Initial
    };
    b.read(t2, account, None, from, 0);
    b.write(t2, account, None, 0);
    b.build().unwrap()
}

#[test]
fn the_deposit_lost_update_is_validated() {
    let observed = run(&Deposit, &config()).unwrap();
    assert!(observed.invariants_hold());
    assert!(matches!(
        check_serializable(&observed.history, None),
        Ok(SerVerdict::Serializable { .. })
    ));
    let predicted = deposit_prediction(&observed.history, false);
    let v = validate_deposit(&observed, &predicted);
    assert_eq!(v.verdict, Verdict::Validated);
    assert!(!v.diverged(), "{:?}", v.divergences);
    // One transaction per session ran, and the deposit of one was lost.
    assert_eq!(v.run.history.txn_count(), 3);
    assert_eq!(v.failed_invariants().count(), 1);
}

#[test]
fn a_serial_prediction_is_not_validated() {
    let observed = run(&Deposit, &config()).unwrap();
    let predicted = deposit_prediction(&observed.history, true);
    let v = validate_deposit(&observed, &predicted);
    assert_eq!(v.verdict, Verdict::Serializable);
    assert!(v.failed_invariants().next().is_none());
}

#[test]
fn a_prediction_of_another_read_diverges() {
    let observed = run(&Deposit, &config()).unwrap();
    // Session 2's first read is predicted on another key than the program reads.
    let mut b = HistoryBuilder::new("predicted");
    let account = b.key(&ACCOUNT.to_string());
    let other = b.key("999");
    let s1 = b.session(Some(1));
    let s2 = b.session(Some(2));
    let t1 = b.begin(s1, Some(0));
    b.read(t1, account, None, ReadFrom::Initial, 0);
    b.write(t1, account, None, 0);
    let t2 = b.begin(s2, Some(0));
    b.read(t2, other, None, ReadFrom::Initial, 0);
    let predicted = b.build().unwrap();
    let v = validate_deposit(&observed, &predicted);
    assert!(v.diverged());
    assert_eq!(v.divergences[0].session, 2);
    assert_eq!(v.divergences[0].key.as_deref(), Some("42"));
    // The diverged read took the latest valid writer; the verdict still comes from checking
    // the validating execution (here both deposits may read the initial balance).
    assert!(matches!(
        v.verdict,
        Verdict::Validated | Verdict::Serializable
    ));
}

#[test]
fn replaying_an_observed_smallbank_run_is_serializable_and_follows_it() {
    let w = by_name("smallbank").unwrap();
    let observed = run(w, &RunConfig::paper(1, Size::Small)).unwrap();
    let v = validate(
        w,
        &RunConfig::paper(1, Size::Small),
        Some(&observed),
        &observed.history,
        Level::Causal,
        None,
    )
    .unwrap();
    assert!(!v.diverged(), "{:?}", v.divergences);
    assert_eq!(v.verdict, Verdict::Serializable);
    observed.history.same_content(&v.run.history).unwrap();
}

/// The paper's motivating example end to end (§2, Figures 1–3): from the serial deposit run,
/// the relaxed boundary predicts the lost update under causal consistency, the checkers
/// re-verify it, and replaying the program along it loses a deposit. The strict boundary
/// cannot: it cuts a transaction at its changed read, so the write that would be lost is not
/// in the prediction (§4.3).
#[test]
fn the_deposit_run_gives_a_validated_causal_prediction() {
    use isopredict::check::CheckOptions;
    use isopredict::predict::{predict, PredictOptions, Strategy, Verdict as Predicted};
    let observed = run(&Deposit, &config()).unwrap();
    assert!(observed.invariants_hold());
    for strategy in [Strategy::ExactStrict, Strategy::ApproxStrict] {
        let outcome = predict(
            &observed.history,
            &PredictOptions::new(Level::Causal, strategy),
        )
        .unwrap();
        assert_eq!(outcome.verdict, Predicted::NoPrediction, "{strategy}");
    }
    {
        let strategy = Strategy::ApproxRelaxed;
        let outcome = predict(
            &observed.history,
            &PredictOptions::new(Level::Causal, strategy),
        )
        .unwrap();
        assert_eq!(outcome.verdict, Predicted::Predicted, "{strategy}");
        let prediction = outcome.prediction.unwrap();
        assert!(!prediction.changed_reads.is_empty(), "{strategy}");
        assert!(
            check(&prediction.history, Level::Causal, &CheckOptions::default())
                .unwrap()
                .is_consistent()
        );
        assert_eq!(
            check_serializable(&prediction.history, None),
            Ok(SerVerdict::Unserializable)
        );
        let v = validate_deposit(&observed, &prediction.history);
        assert_eq!(v.verdict, Verdict::Validated, "{strategy}");
        let broken: Vec<&str> = v.failed_invariants().map(|i| i.id).collect();
        assert_eq!(broken, vec!["D1"], "{strategy}: a deposit is lost");
    }
}
