//! OLTP workloads written against the store, as IsoPredict (PLDI'24 §7) ran them on MonkeyDB:
//! OLTP-Bench's procedures ported to MonkeyDB's SQL subset, 3 sessions (terminals) × 4
//! (small) or 8 (large) transactions, seeds as in the paper (notes/workloads.md).
//!
//! - [`Workload`]: name, procedures and mix, initial data, per-terminal parameter generation
//!   ([`Terminal`]), invariants on the final state. [`all`] / [`by_name`] list them.
//! - [`run`]: one run under a [`RunConfig`] (seed, size, read policy) → [`Run`] (history,
//!   commit order, invariants, divergences, procedure counts).
//! - [`JavaRandom`], [`Flat`], [`Zipf`], [`FlatHistogram`]: the Java random primitives, so a
//!   seed means what it meant in the paper: `--seed N` is the paper's run N (Java seed N·10000),
//!   terminal t draws its procedure types from `Random(N·10000 + t)`.
//! - [`counts`]: the paper's Table 3 counting (reads, writes, transactions).
//! - [`validate`]: replay a predicted history and decide Validated / Diverged.
//!
//! A workload of your own (docs/workloads.md, "Writing a workload"):
//!
//! ```
//! use isopredict::store::{Assign, Loader, Outcome, Pred, Projection, Snapshot, Table, Tx, Value};
//! use isopredict::workloads::{run, InvariantCheck, Procedure, RunConfig, Size, Step, Terminal, Workload};
//!
//! struct Bank;
//! const PROCS: &[Procedure] = &[Procedure { name: "Deposit", weight: 100 }];
//! fn accounts() -> Table {
//!     Table::new("ACCOUNTS", &["id", "bal"], Some(&["id"]))
//! }
//! impl Workload for Bank {
//!     fn name(&self) -> &'static str { "bank" }
//!     fn procedures(&self) -> &'static [Procedure] { PROCS }
//!     fn first_session(&self) -> u64 { 1 }
//!     fn load(&self, l: &mut Loader<'_>) {
//!         let t = accounts();
//!         t.create(l);
//!         t.insert(l, &[("id", Value::Int(0)), ("bal", Value::Real(100.0))]);
//!     }
//!     fn terminal(&self, _id: usize) -> Box<dyn Terminal> { Box::new(Teller(accounts())) }
//!     fn invariants(&self, s: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
//!         let rows = accounts().select(s, Projection::Columns(&["bal"]), &Pred::All);
//!         let ok = rows.iter().all(|r| r[0].as_f64().unwrap_or(0.0) >= 0.0);
//!         vec![InvariantCheck { id: "B1", description: "no negative balance", holds: ok,
//!                               detail: String::new() }]
//!     }
//! }
//! struct Teller(Table);
//! impl Terminal for Teller {
//!     fn run(&mut self, _procedure: usize, _step: u32, tx: &mut Tx<'_>) -> Step {
//!         let bal = self.0.select(tx, Projection::Columns(&["bal"]), &Pred::eq("id", 0));
//!         if bal.is_empty() {
//!             return Step::Done(Outcome::Rollback);
//!         }
//!         self.0.update(tx, &[Assign::add("bal", 10.0)], &Pred::eq("id", 0));
//!         Step::Done(Outcome::Commit)
//!     }
//! }
//! let r = run(&Bank, &RunConfig::paper(1, Size::Small)).unwrap();
//! assert!(r.invariants_hold());
//! assert_eq!(isopredict::workloads::counts(&r.history).txns, 12);
//! ```

mod counts;
mod distributions;
pub mod doctors;
mod harness;
mod java_random;
pub mod smallbank;
pub mod tpcc;
mod validate;
pub mod voter;
pub mod wikipedia;

pub use counts::{counts, Counts};
pub use distributions::{next_long_below, Flat, FlatHistogram, Zipf};
pub use harness::{
    check_run_size, run, run_on, Run, RunConfig, RunError, Size, TxnCall, MAX_SESSIONS,
    MAX_TOTAL_CALLS,
};
pub use java_random::JavaRandom;
pub use validate::{
    judge, replay_plan, txns_at_positions, validate, ReplayOutcome, Validation, Verdict,
};

use crate::store::{Loader, Outcome, Snapshot, Table, Tx};

/// A procedure of a workload and its weight in the mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Procedure {
    /// Its name (OLTP-Bench's class name).
    pub name: &'static str,
    /// Its weight in the mix (percent in OLTP-Bench's configuration files).
    pub weight: u32,
}

/// What one step of a procedure call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The call is over; its last transaction ends like this.
    Done(Outcome),
    /// Commit this transaction; the call continues with step + 1 in the session's next
    /// transaction (procedures that span several transactions, e.g. Wikipedia's UpdatePage).
    Continue,
}

/// One terminal (OLTP-Bench worker): its own parameter generators and call state.
pub trait Terminal: Send {
    /// Runs step `step` (0 when the call starts) of a call of procedure `procedure` (an
    /// index into [`Workload::procedures`]) on `tx`. Parameters are drawn when the call
    /// starts, as OLTP-Bench draws them before executing.
    fn run(&mut self, procedure: usize, step: u32, tx: &mut Tx<'_>) -> Step;

    /// The parameters of the call the last [`Terminal::run`] belonged to, in words (e.g.
    /// `custId0=1, custId1=3`), for reports; `None` (the default) when the workload does not
    /// say.
    fn parameters(&self) -> Option<String> {
        None
    }
}

/// The verdict on one invariant of the final state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InvariantCheck {
    /// Its id in the MonkeyDB paper's numbering (A1–A17).
    pub id: &'static str,
    /// What it states.
    pub description: &'static str,
    /// Whether it holds.
    pub holds: bool,
    /// Why not, in words (empty when it holds).
    pub detail: String,
}

/// An application whose runs can be recorded, explored and replayed.
pub trait Workload: Sync {
    /// Its name on the command line (`smallbank`, `voter`, …).
    fn name(&self) -> &'static str;
    /// The procedures and their weights; the harness draws a type per call.
    fn procedures(&self) -> &'static [Procedure];
    /// MonkeyDB's connection number of terminal 0 (terminal t is this + t), so transaction
    /// ids look like the paper's traces.
    fn first_session(&self) -> u64;
    /// Creates the tables and loads the initial data.
    fn load(&self, loader: &mut Loader<'_>);
    /// The state of terminal `id` (0-based) before its first call.
    fn terminal(&self, id: usize) -> Box<dyn Terminal>;
    /// The `count` terminals of one run, in order. By default `terminal(0)`, …,
    /// `terminal(count − 1)`; workloads override it when terminals depend on how many there
    /// are (TPC-C's district ranges) or share state (Wikipedia's shared generator).
    fn terminals(&self, count: usize) -> Vec<Box<dyn Terminal>> {
        (0..count).map(|t| self.terminal(t)).collect()
    }
    /// Evaluates the invariants on the final state.
    fn invariants(&self, state: &mut Snapshot<'_>) -> Vec<InvariantCheck>;
    /// The tables the workload uses, so reports can name keys by table, column and row
    /// ([`crate::store::KeyDirectory`]); none by default.
    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }
    /// How many times a call whose transaction the store aborted (a serialization failure,
    /// a deadlock, a lost connection on a real database) is retried before it counts as
    /// rolled back. OLTP-Bench retries such calls; 10 by default.
    fn store_abort_retries(&self) -> u32 {
        10
    }
}

/// Every workload, in the paper's order.
pub fn all() -> Vec<&'static dyn Workload> {
    vec![
        &smallbank::Smallbank,
        &voter::Voter,
        &tpcc::Tpcc,
        &wikipedia::Wikipedia,
    ]
}

/// Workloads beyond the paper's, run by name only (not in [`all`], so the paper's grid is
/// unchanged): `smallbank-full`, Smallbank with all six procedures in OLTP-Bench's default
/// mix ([`smallbank::SmallbankFullMix`]), and `doctors`, the doctors-on-call write skew
/// ([`doctors::Doctors`]).
pub fn variants() -> Vec<&'static dyn Workload> {
    vec![&smallbank::SmallbankFullMix, &doctors::Doctors]
}

/// The workload with this name ([`all`] and [`variants`]).
pub fn by_name(name: &str) -> Option<&'static dyn Workload> {
    all()
        .into_iter()
        .chain(variants())
        .find(|w| w.name() == name)
}
