//! Smallbank (Alomari et al., ICDE'08, as ported to OLTP-Bench and MonkeyDB, run by
//! IsoPredict PLDI'24 §7; notes/workloads.md §2).
//!
//! Schema: ACCOUNTS(custid PK, name), SAVINGS(custid PK, bal), CHECKING(custid PK, bal).
//! Initial data: 5 customers 0..4, name = custid zero-padded to 64 digits, savings = checking
//! = 2500. Mix: Amalgamate 30, Balance 30, DepositChecking 0, SendPayment 40,
//! TransactSavings 0, WriteCheck 0. Parameters: `Flat(Random(terminal), 0, 5)`, independent of
//! the seed; SendPayment keeps OLTP-Bench's bug of paying from an account to itself (it
//! aborts when an earlier Amalgamate emptied that checking account).
//!
//! Invariant A13: the total money (Σ savings + checking) equals 5000 × #accounts.

use crate::store::{Assign, Loader, Outcome, Pred, Projection, Snapshot, Table, Tx, Value};

use super::distributions::Flat;
use super::java_random::JavaRandom;
use super::{InvariantCheck, Procedure, Step, Terminal, Workload};

/// Number of customers at scale factor 1 (IsoPredict's configuration).
pub const NUM_ACCOUNTS: i64 = 5;
/// Initial savings and checking balance of every customer.
pub const INITIAL_BALANCE: f64 = 2500.0;
const SEND_PAYMENT_AMOUNT: f64 = 5.0;
const DEPOSIT_CHECKING_AMOUNT: f64 = 1.3;
const TRANSACT_SAVINGS_AMOUNT: f64 = 20.20;
const WRITE_CHECK_AMOUNT: f64 = 5.0;

const PROCEDURES: &[Procedure] = &[
    Procedure {
        name: "Amalgamate",
        weight: 30,
    },
    Procedure {
        name: "Balance",
        weight: 30,
    },
    Procedure {
        name: "DepositChecking",
        weight: 0,
    },
    Procedure {
        name: "SendPayment",
        weight: 40,
    },
    Procedure {
        name: "TransactSavings",
        weight: 0,
    },
    Procedure {
        name: "WriteCheck",
        weight: 0,
    },
];

struct Tables {
    accounts: Table,
    savings: Table,
    checking: Table,
}

fn tables() -> Tables {
    Tables {
        accounts: Table::new("ACCOUNTS", &["custid", "name"], Some(&["custid"])),
        savings: Table::new("SAVINGS", &["custid", "bal"], Some(&["custid"])),
        checking: Table::new("CHECKING", &["custid", "bal"], Some(&["custid"])),
    }
}

/// A customer's name: the id zero-padded to 64 digits.
pub fn customer_name(id: i64) -> String {
    format!("{id:064}")
}

/// The `custName` parameter of a call, as its value: the 64-digit name, its run of leading
/// zeros shortened (`custName="0…03" (64 digits)`).
fn name_parameter(id: i64) -> String {
    let name = customer_name(id);
    let digits = name.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    format!("custName=\"0…0{digits}\" ({} digits)", name.len())
}

/// The Smallbank workload.
#[derive(Debug, Clone, Copy, Default)]
pub struct Smallbank;

impl Workload for Smallbank {
    fn name(&self) -> &'static str {
        "smallbank"
    }

    fn procedures(&self) -> &'static [Procedure] {
        PROCEDURES
    }

    fn first_session(&self) -> u64 {
        7
    }

    fn load(&self, loader: &mut Loader<'_>) {
        let t = tables();
        t.accounts.create(loader);
        t.savings.create(loader);
        t.checking.create(loader);
        for id in 0..NUM_ACCOUNTS {
            t.accounts.insert(
                loader,
                &[
                    ("custid", Value::Int(id)),
                    ("name", Value::from(customer_name(id))),
                ],
            );
            t.savings.insert(
                loader,
                &[
                    ("custid", Value::Int(id)),
                    ("bal", Value::Real(INITIAL_BALANCE)),
                ],
            );
            t.checking.insert(
                loader,
                &[
                    ("custid", Value::Int(id)),
                    ("bal", Value::Real(INITIAL_BALANCE)),
                ],
            );
        }
    }

    fn terminal(&self, id: usize) -> Box<dyn Terminal> {
        Box::new(SmallbankTerminal {
            tables: tables(),
            rng: JavaRandom::new(id as i64),
            flat: Flat::new(0, NUM_ACCOUNTS),
            cust_ids: [-1, -1],
            parameters: String::new(),
        })
    }

    fn tables(&self) -> Vec<Table> {
        let t = tables();
        vec![t.accounts, t.savings, t.checking]
    }

    fn invariants(&self, state: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
        let t = tables();
        let ids: Vec<i64> = t
            .accounts
            .select(state, Projection::Columns(&["custid"]), &Pred::All)
            .iter()
            .filter_map(|r| r[0].as_i64())
            .collect();
        let balance = |table: &Table, state: &mut Snapshot<'_>, id: i64| -> f64 {
            table
                .select(
                    state,
                    Projection::Columns(&["bal"]),
                    &Pred::eq("custid", id),
                )
                .first()
                .and_then(|r| r[0].as_f64())
                .unwrap_or(0.0)
        };
        let total: f64 = ids
            .iter()
            .map(|&id| balance(&t.savings, state, id) + balance(&t.checking, state, id))
            .sum();
        let expected = 2.0 * INITIAL_BALANCE * ids.len() as f64;
        let holds = (total - expected).abs() < 1e-6;
        vec![InvariantCheck {
            id: "A13",
            description: "the total money (savings + checking of every account) is unchanged",
            holds,
            detail: if holds {
                String::new()
            } else {
                format!("total is {total}, expected {expected}")
            },
        }]
    }
}

/// OLTP-Bench's default Smallbank mix (its `config/sample_smallbank_config.xml`): Amalgamate
/// 15, Balance 15, DepositChecking 15, SendPayment 25, TransactSavings 15, WriteCheck 15.
const FULL_MIX_PROCEDURES: &[Procedure] = &[
    Procedure {
        name: "Amalgamate",
        weight: 15,
    },
    Procedure {
        name: "Balance",
        weight: 15,
    },
    Procedure {
        name: "DepositChecking",
        weight: 15,
    },
    Procedure {
        name: "SendPayment",
        weight: 25,
    },
    Procedure {
        name: "TransactSavings",
        weight: 15,
    },
    Procedure {
        name: "WriteCheck",
        weight: 15,
    },
];

/// Smallbank with all six procedures, in OLTP-Bench's default mix (`smallbank-full` on the
/// command line; not in [`super::all`], so the paper's grid is unchanged).
///
/// IsoPredict's configuration ([`Smallbank`]) runs only Amalgamate, Balance and SendPayment,
/// each of which writes every balance it reads: under snapshot isolation two concurrent calls
/// touching a common balance cannot both commit, so that mix has no snapshot-isolation anomaly
/// (Fekete et al., TODS 2005: no "dangerous structure"). WriteCheck (reads savings and
/// checking, writes checking) and TransactSavings (reads and writes savings) bring back the
/// dangerous structure Alomari et al. (ICDE'08) found: Balance →rw WriteCheck →rw
/// TransactSavings on one customer, the read-only anomaly. Same data and parameters; no
/// invariant (see [`SmallbankFullMix::invariants`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SmallbankFullMix;

impl Workload for SmallbankFullMix {
    fn name(&self) -> &'static str {
        "smallbank-full"
    }

    fn procedures(&self) -> &'static [Procedure] {
        FULL_MIX_PROCEDURES
    }

    fn first_session(&self) -> u64 {
        Smallbank.first_session()
    }

    fn load(&self, loader: &mut Loader<'_>) {
        Smallbank.load(loader)
    }

    fn terminal(&self, id: usize) -> Box<dyn Terminal> {
        Smallbank.terminal(id)
    }

    fn tables(&self) -> Vec<Table> {
        Smallbank.tables()
    }

    /// None: A13 (the total money is unchanged) holds only for a money-conserving mix, and
    /// DepositChecking, TransactSavings and WriteCheck change the total even in a serial run.
    fn invariants(&self, _state: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
        Vec::new()
    }
}

struct SmallbankTerminal {
    tables: Tables,
    rng: JavaRandom,
    flat: Flat,
    cust_ids: [i64; 2],
    /// The current call's parameters in words.
    parameters: String,
}

/// `throw new UserAbortException(..)`: roll back.
const ABORT: Step = Step::Done(Outcome::Rollback);
const COMMIT: Step = Step::Done(Outcome::Commit);

impl SmallbankTerminal {
    /// OLTP-Bench's `generateCustIds`: one id, or two distinct ones (redrawing the second).
    fn generate_cust_ids(&mut self, two: bool) {
        let mut i = 0;
        while i < 2 {
            self.cust_ids[i] = self.flat.next_long(&mut self.rng);
            if i > 0 && self.cust_ids[i - 1] == self.cust_ids[i] {
                continue;
            }
            if i == 0 && !two {
                break;
            }
            i += 1;
        }
    }

    fn account_by_id(&self, tx: &mut Tx<'_>, id: i64) -> bool {
        !self
            .tables
            .accounts
            .select(tx, Projection::All, &Pred::eq("custid", id))
            .is_empty()
    }

    fn account_by_name(&self, tx: &mut Tx<'_>, name: &str) -> Option<i64> {
        self.tables
            .accounts
            .select(tx, Projection::All, &Pred::eq("name", name))
            .first()
            .and_then(|r| r[0].as_i64())
    }

    fn balance(table: &Table, tx: &mut Tx<'_>, id: i64) -> Option<f64> {
        table
            .select(tx, Projection::Columns(&["bal"]), &Pred::eq("custid", id))
            .first()
            .map(|r| r[0].as_f64().unwrap_or(0.0))
    }

    fn add_balance(table: &Table, tx: &mut Tx<'_>, id: i64, amount: f64) {
        table.update(tx, &[Assign::add("bal", amount)], &Pred::eq("custid", id));
    }

    fn amalgamate(&mut self, tx: &mut Tx<'_>) -> Step {
        self.generate_cust_ids(true);
        let [c0, c1] = self.cust_ids;
        self.parameters = format!("custId0={c0}, custId1={c1}");
        if !self.account_by_id(tx, c0) || !self.account_by_id(tx, c1) {
            return ABORT;
        }
        let Some(savings) = Self::balance(&self.tables.savings, tx, c0) else {
            return ABORT;
        };
        let Some(checking) = Self::balance(&self.tables.checking, tx, c0) else {
            return ABORT;
        };
        let total = savings + checking;
        let zero = [Assign::set("bal", 0.0)];
        self.tables
            .checking
            .update(tx, &zero, &Pred::eq("custid", c0));
        self.tables
            .savings
            .update(tx, &zero, &Pred::eq("custid", c0));
        Self::add_balance(&self.tables.checking, tx, c1, total);
        COMMIT
    }

    fn balance_call(&mut self, tx: &mut Tx<'_>) -> Step {
        self.generate_cust_ids(false);
        let name = customer_name(self.cust_ids[0]);
        self.parameters = name_parameter(self.cust_ids[0]);
        let Some(id) = self.account_by_name(tx, &name) else {
            return ABORT;
        };
        if Self::balance(&self.tables.savings, tx, id).is_none()
            || Self::balance(&self.tables.checking, tx, id).is_none()
        {
            return ABORT;
        }
        COMMIT
    }

    fn send_payment(&mut self, tx: &mut Tx<'_>) -> Step {
        self.generate_cust_ids(true);
        // OLTP-Bench passes the first id twice: a self-transfer.
        let (src, dst) = (self.cust_ids[0], self.cust_ids[0]);
        self.parameters = format!("sendAcct={src}, destAcct={dst}, amount={SEND_PAYMENT_AMOUNT}");
        if !self.account_by_id(tx, src) || !self.account_by_id(tx, dst) {
            return ABORT;
        }
        let Some(balance) = Self::balance(&self.tables.checking, tx, src) else {
            return ABORT;
        };
        if balance < SEND_PAYMENT_AMOUNT {
            return ABORT;
        }
        Self::add_balance(&self.tables.checking, tx, src, -SEND_PAYMENT_AMOUNT);
        Self::add_balance(&self.tables.checking, tx, dst, SEND_PAYMENT_AMOUNT);
        COMMIT
    }

    fn deposit_checking(&mut self, tx: &mut Tx<'_>) -> Step {
        self.generate_cust_ids(false);
        self.parameters = format!(
            "{}, amount={}",
            name_parameter(self.cust_ids[0]),
            DEPOSIT_CHECKING_AMOUNT
        );
        let Some(id) = self.account_by_name(tx, &customer_name(self.cust_ids[0])) else {
            return ABORT;
        };
        Self::add_balance(&self.tables.checking, tx, id, DEPOSIT_CHECKING_AMOUNT);
        COMMIT
    }

    fn transact_savings(&mut self, tx: &mut Tx<'_>) -> Step {
        self.generate_cust_ids(false);
        self.parameters = format!(
            "{}, amount={}",
            name_parameter(self.cust_ids[0]),
            TRANSACT_SAVINGS_AMOUNT
        );
        let Some(id) = self.account_by_name(tx, &customer_name(self.cust_ids[0])) else {
            return ABORT;
        };
        let Some(balance) = Self::balance(&self.tables.savings, tx, id) else {
            return ABORT;
        };
        if balance - TRANSACT_SAVINGS_AMOUNT < 0.0 {
            return ABORT;
        }
        Self::add_balance(&self.tables.savings, tx, id, -TRANSACT_SAVINGS_AMOUNT);
        COMMIT
    }

    fn write_check(&mut self, tx: &mut Tx<'_>) -> Step {
        self.generate_cust_ids(false);
        self.parameters = format!(
            "{}, amount={}",
            name_parameter(self.cust_ids[0]),
            WRITE_CHECK_AMOUNT
        );
        let Some(id) = self.account_by_name(tx, &customer_name(self.cust_ids[0])) else {
            return ABORT;
        };
        let Some(savings) = Self::balance(&self.tables.savings, tx, id) else {
            return ABORT;
        };
        let Some(checking) = Self::balance(&self.tables.checking, tx, id) else {
            return ABORT;
        };
        let amount = if savings + checking < WRITE_CHECK_AMOUNT {
            WRITE_CHECK_AMOUNT + 1.0
        } else {
            WRITE_CHECK_AMOUNT
        };
        Self::add_balance(&self.tables.checking, tx, id, -amount);
        COMMIT
    }
}

impl Terminal for SmallbankTerminal {
    fn run(&mut self, procedure: usize, _step: u32, tx: &mut Tx<'_>) -> Step {
        match procedure {
            0 => self.amalgamate(tx),
            1 => self.balance_call(tx),
            2 => self.deposit_checking(tx),
            3 => self.send_payment(tx),
            4 => self.transact_savings(tx),
            _ => self.write_check(tx),
        }
    }

    fn parameters(&self) -> Option<String> {
        Some(self.parameters.clone())
    }
}
