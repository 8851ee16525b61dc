//! TPC-C (TPC Benchmark C, as ported to OLTP-Bench and MonkeyDB, run by IsoPredict PLDI'24 §7;
//! notes/workloads.md §4) at IsoPredict's scale: 1 warehouse, 2 districts, 3 customers per
//! district, 1 item.
//!
//! Schema (column order of the MySQL DDL MonkeyDB executes; row id = hash of the key tuple):
//! WAREHOUSE (W_ID), DISTRICT (D_W_ID, D_ID), CUSTOMER (C_W_ID, C_D_ID, C_ID), HISTORY (no
//! key: counter row ids), ITEM (I_ID), NEW_ORDER (NO_W_ID, NO_D_ID, NO_O_ID), OORDER (O_W_ID,
//! O_D_ID, O_ID), ORDER_LINE (OL_W_ID, OL_D_ID, OL_O_ID, OL_NUMBER), STOCK (S_W_ID, S_I_ID).
//!
//! Initial data: what OLTP-Bench's loader, seeded with 0 by IsoPredict, produces at this scale
//! (the reference model of the notes), for everything a run can observe: W_YTD 60, D_YTD 30,
//! D_NEXT_O_ID 4; customers with balance −10, YTD payment 10, one payment, last name
//! BARBARBAR, good credit, first names ordering the by-name pick to C_ID 3 (district 1) and 2
//! (district 2); one history row of 10 per customer; item 1 with stock 35; orders 1..3 per
//! district (orders 1 and 2 delivered, order 3 new) with 14, 10, 7 and 8, 8, 6 lines. Texts,
//! prices and dates the loader draws at random are replaced by fixed stand-ins (no trace key
//! depends on them).
//!
//! Mix: NewOrder 45, Payment 43, OrderStatus 4, Delivery 4, StockLevel 4. Parameters come from
//! the terminal's own `Random(terminal)` (independent of the seed) with TPC-C's `rnd` and
//! `NURand`. Terminal t of n covers districts `[⌊t·2/n⌋ + 1, ⌊(t+1)·2/n⌋]` (the last one up to
//! 2): with 3 terminals t0 gets the empty range [1, 0] — it still draws district 1 and its
//! Delivery processes no district (an empty transaction). Quirks kept: the 1 % NewOrder
//! rollback (invalid last item), StockLevel's empty window while D_NEXT_O_ID ≤ 20.
//!
//! Where OLTP-Bench throws a non-SQL `RuntimeException` (a row that a weakly isolated read
//! made disappear: no customer, district, order…), MonkeyDB would leave the transaction open
//! and merge it into the session's next call; here the call rolls back instead. Serial runs
//! never take these paths.
//!
//! Invariants A1–A12 (MonkeyDB's `tpcc_cr` checker) on the final state: `invariants.rs`.

use crate::store::{Assign, CmpOp, Loader, Outcome, Pred, Projection, Snapshot, Table, Tx, Value};

use super::java_random::JavaRandom;
use super::{InvariantCheck, Procedure, Step, Terminal, Workload};

mod invariants;

/// Warehouses (scale factor 1).
pub const WAREHOUSES: i64 = 1;
/// Districts per warehouse.
pub const DISTRICTS: i64 = 2;
/// Customers per district.
pub const CUSTOMERS_PER_DISTRICT: i64 = 3;
/// Items.
pub const ITEMS: i64 = 1;
/// The item id OLTP-Bench puts on the last line of 1 % of NewOrders to make them roll back.
pub const INVALID_ITEM_ID: i64 = -12345;
/// The last name of every loaded customer (and the one every by-name lookup asks for).
pub const LAST_NAME: &str = "BARBARBAR";

/// Lines of the loaded orders 1..3, per district.
const LOADED_OL_CNT: [[i64; 3]; 2] = [[14, 10, 7], [8, 8, 6]];
/// Customer of the loaded orders 1..3, per district.
const LOADED_O_C_ID: [[i64; 3]; 2] = [[2, 3, 1], [3, 1, 2]];
/// First names of customers 1..3 per district: sorted, the middle one is C_ID 3 in
/// district 1 and C_ID 2 in district 2, as with the loader's names.
const FIRST_NAMES: [[&str; 3]; 2] = [
    ["AblePilot", "OughtCarrot", "CallyFern"],
    ["AntiMoss", "EingLark", "PriPlum"],
];
/// Stock quantity of the item.
const LOADED_S_QUANTITY: i64 = 35;
/// Stand-in for the dates the loader and procedures take from the clock.
const NOW: &str = "2024-01-01 00:00:00.0";

const PROCEDURES: &[Procedure] = &[
    Procedure {
        name: "NewOrder",
        weight: 45,
    },
    Procedure {
        name: "Payment",
        weight: 43,
    },
    Procedure {
        name: "OrderStatus",
        weight: 4,
    },
    Procedure {
        name: "Delivery",
        weight: 4,
    },
    Procedure {
        name: "StockLevel",
        weight: 4,
    },
];

const STOCK_DIST: [&str; 10] = [
    "S_DIST_01",
    "S_DIST_02",
    "S_DIST_03",
    "S_DIST_04",
    "S_DIST_05",
    "S_DIST_06",
    "S_DIST_07",
    "S_DIST_08",
    "S_DIST_09",
    "S_DIST_10",
];

/// The columns Payment and OrderStatus read of a customer looked up by id.
const CUSTOMER_BY_ID: [&str; 16] = [
    "C_FIRST",
    "C_MIDDLE",
    "C_LAST",
    "C_STREET_1",
    "C_STREET_2",
    "C_CITY",
    "C_STATE",
    "C_ZIP",
    "C_PHONE",
    "C_CREDIT",
    "C_CREDIT_LIM",
    "C_DISCOUNT",
    "C_BALANCE",
    "C_YTD_PAYMENT",
    "C_PAYMENT_CNT",
    "C_SINCE",
];

/// The columns read of customers looked up by last name: [`CUSTOMER_BY_ID`]'s with C_ID in
/// C_LAST's place.
const CUSTOMER_BY_NAME: [&str; 16] = {
    let mut columns = CUSTOMER_BY_ID;
    columns[2] = "C_ID";
    columns
};

struct Tables {
    warehouse: Table,
    district: Table,
    customer: Table,
    history: Table,
    item: Table,
    new_order: Table,
    oorder: Table,
    order_line: Table,
    stock: Table,
}

fn tables() -> Tables {
    Tables {
        warehouse: Table::new(
            "WAREHOUSE",
            &[
                "W_ID",
                "W_YTD",
                "W_TAX",
                "W_NAME",
                "W_STREET_1",
                "W_STREET_2",
                "W_CITY",
                "W_STATE",
                "W_ZIP",
            ],
            Some(&["W_ID"]),
        ),
        district: Table::new(
            "DISTRICT",
            &[
                "D_W_ID",
                "D_ID",
                "D_YTD",
                "D_TAX",
                "D_NEXT_O_ID",
                "D_NAME",
                "D_STREET_1",
                "D_STREET_2",
                "D_CITY",
                "D_STATE",
                "D_ZIP",
            ],
            Some(&["D_W_ID", "D_ID"]),
        ),
        customer: Table::new(
            "CUSTOMER",
            &[
                "C_W_ID",
                "C_D_ID",
                "C_ID",
                "C_DISCOUNT",
                "C_CREDIT",
                "C_LAST",
                "C_FIRST",
                "C_CREDIT_LIM",
                "C_BALANCE",
                "C_YTD_PAYMENT",
                "C_PAYMENT_CNT",
                "C_DELIVERY_CNT",
                "C_STREET_1",
                "C_STREET_2",
                "C_CITY",
                "C_STATE",
                "C_ZIP",
                "C_PHONE",
                "C_SINCE",
                "C_MIDDLE",
                "C_DATA",
            ],
            Some(&["C_W_ID", "C_D_ID", "C_ID"]),
        ),
        history: Table::new(
            "HISTORY",
            &[
                "H_C_ID", "H_C_D_ID", "H_C_W_ID", "H_D_ID", "H_W_ID", "H_DATE", "H_AMOUNT",
                "H_DATA",
            ],
            None,
        ),
        item: Table::new(
            "ITEM",
            &["I_ID", "I_NAME", "I_PRICE", "I_DATA", "I_IM_ID"],
            Some(&["I_ID"]),
        ),
        new_order: Table::new(
            "NEW_ORDER",
            &["NO_W_ID", "NO_D_ID", "NO_O_ID"],
            Some(&["NO_W_ID", "NO_D_ID", "NO_O_ID"]),
        ),
        oorder: Table::new(
            "OORDER",
            &[
                "O_W_ID",
                "O_D_ID",
                "O_ID",
                "O_C_ID",
                "O_CARRIER_ID",
                "O_OL_CNT",
                "O_ALL_LOCAL",
                "O_ENTRY_D",
            ],
            Some(&["O_W_ID", "O_D_ID", "O_ID"]),
        ),
        order_line: Table::new(
            "ORDER_LINE",
            &[
                "OL_W_ID",
                "OL_D_ID",
                "OL_O_ID",
                "OL_NUMBER",
                "OL_I_ID",
                "OL_DELIVERY_D",
                "OL_AMOUNT",
                "OL_SUPPLY_W_ID",
                "OL_QUANTITY",
                "OL_DIST_INFO",
            ],
            Some(&["OL_W_ID", "OL_D_ID", "OL_O_ID", "OL_NUMBER"]),
        ),
        stock: Table::new(
            "STOCK",
            &[
                "S_W_ID",
                "S_I_ID",
                "S_QUANTITY",
                "S_YTD",
                "S_ORDER_CNT",
                "S_REMOTE_CNT",
                "S_DATA",
                "S_DIST_01",
                "S_DIST_02",
                "S_DIST_03",
                "S_DIST_04",
                "S_DIST_05",
                "S_DIST_06",
                "S_DIST_07",
                "S_DIST_08",
                "S_DIST_09",
                "S_DIST_10",
            ],
            Some(&["S_W_ID", "S_I_ID"]),
        ),
    }
}

/// TPC-C's `randomNumber(min, max)`: `(int) (nextDouble() · (max − min + 1) + min)`.
fn rnd(gen: &mut JavaRandom, min: i64, max: i64) -> i64 {
    (gen.next_double() * (max - min + 1) as f64 + min as f64) as i64
}

/// TPC-C's `NURand(A, C, min, max)` (two draws).
fn nurand(gen: &mut JavaRandom, a: i64, c: i64, min: i64, max: i64) -> i64 {
    let x = rnd(gen, 0, a);
    let y = rnd(gen, min, max);
    ((x | y) + c) % (max - min + 1) + min
}

fn customer_id(gen: &mut JavaRandom) -> i64 {
    nurand(gen, 1023, 259, 1, CUSTOMERS_PER_DISTRICT)
}

fn item_id(gen: &mut JavaRandom) -> i64 {
    nurand(gen, 8191, 7911, 1, ITEMS)
}

/// OLTP-Bench's run-time last name: NURand(255, 223, 0, 999) (two draws); in IsoPredict's
/// runs it is always the loaded customers' name.
fn last_name(gen: &mut JavaRandom) -> &'static str {
    nurand(gen, 255, 223, 0, 999);
    LAST_NAME
}

/// The district range `[lower, upper]` of terminal `t` among `n` (OLTP-Bench's
/// `createTerminals` with one warehouse).
pub fn district_range(t: usize, n: usize) -> (i64, i64) {
    let per = DISTRICTS as f64 / n.max(1) as f64;
    let lower = (t as f64 * per) as i64 + 1;
    let upper = if t + 1 >= n {
        DISTRICTS
    } else {
        ((t + 1) as f64 * per) as i64
    };
    (lower, upper)
}

fn eq3(a: &str, x: i64, b: &str, y: i64, c: &str, z: i64) -> Pred {
    Pred::eq(a, x).and(Pred::eq(b, y)).and(Pred::eq(c, z))
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn real(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// The TPC-C workload.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tpcc;

impl Tpcc {
    /// The initial state: the tables, the warehouse with its item and stock, then each
    /// district with its customers and orders.
    fn load_tables(t: &Tables, l: &mut Loader<'_>) {
        for table in [
            &t.warehouse,
            &t.district,
            &t.customer,
            &t.history,
            &t.item,
            &t.new_order,
            &t.oorder,
            &t.order_line,
            &t.stock,
        ] {
            table.create(l);
        }
        let w = 1;
        Self::load_warehouse(t, l, w);
        // Amounts of the undelivered orders' lines: OLTP-Bench draws rnd(1, 999999) / 100.
        let mut amounts = JavaRandom::new(0);
        for d in 1..=DISTRICTS {
            Self::load_district(t, l, w, d);
            Self::load_customers(t, l, w, d);
            Self::load_orders(t, l, w, d, &mut amounts);
        }
    }

    /// The item, the warehouse `w` and its stock of the item.
    fn load_warehouse(t: &Tables, l: &mut Loader<'_>, w: i64) {
        t.item.insert(
            l,
            &[
                ("I_ID", Value::Int(1)),
                ("I_NAME", Value::text("ItemNumberOne")),
                ("I_PRICE", Value::Real(42.5)),
                ("I_DATA", Value::text("item data of item one")),
                ("I_IM_ID", Value::Int(77)),
            ],
        );
        t.warehouse.insert(
            l,
            &[
                ("W_ID", Value::Int(w)),
                ("W_YTD", Value::Real(60.0)),
                ("W_TAX", Value::Real(0.1)),
                ("W_NAME", Value::text("Warehouse1")),
                ("W_STREET_1", Value::text("Street One")),
                ("W_STREET_2", Value::text("Street Two")),
                ("W_CITY", Value::text("City")),
                ("W_STATE", Value::text("OH")),
                ("W_ZIP", Value::text("123456789")),
            ],
        );
        let mut dist = vec![
            ("S_W_ID", Value::Int(w)),
            ("S_I_ID", Value::Int(1)),
            ("S_QUANTITY", Value::Int(LOADED_S_QUANTITY)),
            ("S_YTD", Value::Int(0)),
            ("S_ORDER_CNT", Value::Int(0)),
            ("S_REMOTE_CNT", Value::Int(0)),
            ("S_DATA", Value::text("stock data of item one")),
        ];
        for (i, col) in STOCK_DIST.iter().enumerate() {
            dist.push((col, Value::from(format!("dist-info-{:02}-item-1", i + 1))));
        }
        t.stock.insert(l, &dist);
    }

    /// District `d` of warehouse `w`.
    fn load_district(t: &Tables, l: &mut Loader<'_>, w: i64, d: i64) {
        t.district.insert(
            l,
            &[
                ("D_W_ID", Value::Int(w)),
                ("D_ID", Value::Int(d)),
                ("D_YTD", Value::Real(30.0)),
                ("D_TAX", Value::Real(0.05)),
                ("D_NEXT_O_ID", Value::Int(4)),
                ("D_NAME", Value::from(format!("District{d}"))),
                ("D_STREET_1", Value::text("Street One")),
                ("D_STREET_2", Value::text("Street Two")),
                ("D_CITY", Value::text("City")),
                ("D_STATE", Value::text("OH")),
                ("D_ZIP", Value::text("123456789")),
            ],
        );
    }

    /// The customers of district `d`, each with one payment in HISTORY.
    fn load_customers(t: &Tables, l: &mut Loader<'_>, w: i64, d: i64) {
        let di = (d - 1) as usize;
        for c in 1..=CUSTOMERS_PER_DISTRICT {
            let ci = (c - 1) as usize;
            t.customer.insert(
                l,
                &[
                    ("C_W_ID", Value::Int(w)),
                    ("C_D_ID", Value::Int(d)),
                    ("C_ID", Value::Int(c)),
                    ("C_DISCOUNT", Value::Real(0.1)),
                    ("C_CREDIT", Value::text("GC")),
                    ("C_LAST", Value::text(LAST_NAME)),
                    ("C_FIRST", Value::text(FIRST_NAMES[di][ci])),
                    ("C_CREDIT_LIM", Value::Real(50000.0)),
                    ("C_BALANCE", Value::Real(-10.0)),
                    ("C_YTD_PAYMENT", Value::Real(10.0)),
                    ("C_PAYMENT_CNT", Value::Int(1)),
                    ("C_DELIVERY_CNT", Value::Int(0)),
                    ("C_STREET_1", Value::text("Street One")),
                    ("C_STREET_2", Value::text("Street Two")),
                    ("C_CITY", Value::text("City")),
                    ("C_STATE", Value::text("OH")),
                    ("C_ZIP", Value::text("123456789")),
                    ("C_PHONE", Value::text("0123456789012345")),
                    ("C_SINCE", Value::text(NOW)),
                    ("C_MIDDLE", Value::text("OE")),
                    ("C_DATA", Value::text("customer data")),
                ],
            );
            t.history.insert(
                l,
                &[
                    ("H_C_ID", Value::Int(c)),
                    ("H_C_D_ID", Value::Int(d)),
                    ("H_C_W_ID", Value::Int(w)),
                    ("H_D_ID", Value::Int(d)),
                    ("H_W_ID", Value::Int(w)),
                    ("H_DATE", Value::text(NOW)),
                    ("H_AMOUNT", Value::Real(10.0)),
                    ("H_DATA", Value::text("history data")),
                ],
            );
        }
    }

    /// The three orders of district `d` (two delivered, one new) and their lines.
    fn load_orders(t: &Tables, l: &mut Loader<'_>, w: i64, d: i64, amounts: &mut JavaRandom) {
        let di = (d - 1) as usize;
        for o in 1..=3 {
            let oi = (o - 1) as usize;
            let delivered = o < 3;
            let lines = LOADED_OL_CNT[di][oi];
            t.oorder.insert(
                l,
                &[
                    ("O_W_ID", Value::Int(w)),
                    ("O_D_ID", Value::Int(d)),
                    ("O_ID", Value::Int(o)),
                    ("O_C_ID", Value::Int(LOADED_O_C_ID[di][oi])),
                    (
                        "O_CARRIER_ID",
                        if delivered {
                            Value::Int(o)
                        } else {
                            Value::Null
                        },
                    ),
                    ("O_OL_CNT", Value::Int(lines)),
                    ("O_ALL_LOCAL", Value::Int(1)),
                    ("O_ENTRY_D", Value::text(NOW)),
                ],
            );
            if !delivered {
                t.new_order.insert(
                    l,
                    &[
                        ("NO_W_ID", Value::Int(w)),
                        ("NO_D_ID", Value::Int(d)),
                        ("NO_O_ID", Value::Int(o)),
                    ],
                );
            }
            for number in 1..=lines {
                let amount = if delivered {
                    0.0
                } else {
                    rnd(amounts, 1, 999_999) as f64 / 100.0
                };
                t.order_line.insert(
                    l,
                    &[
                        ("OL_W_ID", Value::Int(w)),
                        ("OL_D_ID", Value::Int(d)),
                        ("OL_O_ID", Value::Int(o)),
                        ("OL_NUMBER", Value::Int(number)),
                        ("OL_I_ID", Value::Int(1)),
                        (
                            "OL_DELIVERY_D",
                            if delivered {
                                Value::text(NOW)
                            } else {
                                Value::Null
                            },
                        ),
                        ("OL_AMOUNT", Value::Real(amount)),
                        ("OL_SUPPLY_W_ID", Value::Int(w)),
                        ("OL_QUANTITY", Value::Int(5)),
                        ("OL_DIST_INFO", Value::text("dist-info")),
                    ],
                );
            }
        }
    }
}

impl Workload for Tpcc {
    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn procedures(&self) -> &'static [Procedure] {
        PROCEDURES
    }

    fn first_session(&self) -> u64 {
        8
    }

    fn load(&self, loader: &mut Loader<'_>) {
        Self::load_tables(&tables(), loader);
    }

    /// Terminal `id` of the paper's 3 (see [`Workload::terminals`] for other counts).
    fn terminal(&self, id: usize) -> Box<dyn Terminal> {
        let (lower, upper) = district_range(id, 3.max(id + 1));
        Box::new(TpccTerminal::new(id, lower, upper))
    }

    fn terminals(&self, count: usize) -> Vec<Box<dyn Terminal>> {
        (0..count)
            .map(|t| {
                let (lower, upper) = district_range(t, count);
                Box::new(TpccTerminal::new(t, lower, upper)) as Box<dyn Terminal>
            })
            .collect()
    }

    fn tables(&self) -> Vec<Table> {
        let t = tables();
        vec![
            t.warehouse,
            t.district,
            t.customer,
            t.history,
            t.item,
            t.new_order,
            t.oorder,
            t.order_line,
            t.stock,
        ]
    }

    fn invariants(&self, state: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
        invariants::invariants(&tables(), state)
    }
}

/// A call's early end: a user abort (OLTP-Bench's `UserAbortException`) or, where OLTP-Bench
/// throws a `RuntimeException`, a rollback too (see the module documentation).
const ROLLBACK: Step = Step::Done(Outcome::Rollback);
const COMMIT: Step = Step::Done(Outcome::Commit);

struct TpccTerminal {
    t: Tables,
    gen: JavaRandom,
    w_id: i64,
    d_lower: i64,
    d_upper: i64,
    /// The current call's parameters in words (for reports).
    parameters: String,
}

/// A customer as Payment and OrderStatus read it.
struct Customer {
    id: i64,
    credit: String,
    balance: f64,
    ytd_payment: f64,
    payment_cnt: i64,
}

/// How Payment and OrderStatus name their customer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CustomerRef {
    /// By C_ID.
    ById(i64),
    /// By C_LAST (the middle one by first name).
    ByName(&'static str),
}

/// NewOrder's parameters: district, customer, lines (item, supplying warehouse, quantity).
#[derive(Debug, Clone, PartialEq)]
struct NewOrderParams {
    d: i64,
    c: i64,
    lines: Vec<(i64, i64, i64)>,
    all_local: i64,
}

/// Payment's parameters.
#[derive(Debug, Clone, PartialEq)]
struct PaymentParams {
    d: i64,
    c_d: i64,
    c_w: i64,
    customer: CustomerRef,
    amount: f64,
}

struct Line {
    item: i64,
    supply_w_id: i64,
    quantity: i64,
    new_s_quantity: i64,
    remote: i64,
    amount: f64,
    dist_info: Value,
}

impl TpccTerminal {
    fn new(id: usize, d_lower: i64, d_upper: i64) -> TpccTerminal {
        TpccTerminal {
            t: tables(),
            gen: JavaRandom::new(id as i64),
            w_id: 1,
            d_lower,
            d_upper,
            parameters: String::new(),
        }
    }

    fn district(&mut self) -> i64 {
        rnd(&mut self.gen, self.d_lower, self.d_upper)
    }

    /// A remote supplying warehouse (`do … while (w == home && warehouses > 1)`).
    fn other_warehouse(&mut self) -> i64 {
        loop {
            let w = rnd(&mut self.gen, 1, WAREHOUSES);
            if !(w == self.w_id && WAREHOUSES > 1) {
                return w;
            }
        }
    }

    fn customer_by_id(&self, tx: &mut Tx<'_>, w: i64, d: i64, c: i64) -> Option<Customer> {
        let rows = self.t.customer.select(
            tx,
            Projection::Columns(&CUSTOMER_BY_ID),
            &eq3("C_W_ID", w, "C_D_ID", d, "C_ID", c),
        );
        rows.first().map(|r| Customer {
            id: c,
            credit: r[9].to_string(),
            balance: real(&r[12]),
            ytd_payment: real(&r[13]),
            payment_cnt: int(&r[14]),
        })
    }

    /// The customers with this last name sorted by first name, the middle one (TPC-C
    /// 2.5.2.2: position ⌈n/2⌉ counting from 1).
    fn customer_by_name(&self, tx: &mut Tx<'_>, w: i64, d: i64, last: &str) -> Option<Customer> {
        let mut rows = self.t.customer.select(
            tx,
            Projection::Columns(&CUSTOMER_BY_NAME),
            &Pred::eq("C_W_ID", w)
                .and(Pred::eq("C_D_ID", d))
                .and(Pred::eq("C_LAST", last)),
        );
        if rows.is_empty() {
            return None;
        }
        rows.sort_by(|a, b| a[0].to_string().cmp(&b[0].to_string()));
        let mut index = rows.len() / 2;
        if rows.len() % 2 == 0 {
            index -= 1;
        }
        let r = &rows[index];
        Some(Customer {
            id: int(&r[2]),
            credit: r[9].to_string(),
            balance: real(&r[12]),
            ytd_payment: real(&r[13]),
            payment_cnt: int(&r[14]),
        })
    }

    /// NewOrder's parameters, drawn as OLTP-Bench draws them.
    fn draw_new_order(&mut self) -> NewOrderParams {
        let w = self.w_id;
        let d = self.district();
        let c = customer_id(&mut self.gen);
        let n = rnd(&mut self.gen, 5, 15);
        let mut lines = Vec::with_capacity(n as usize);
        let mut all_local = 1;
        for _ in 0..n {
            let item = item_id(&mut self.gen);
            let supply_w_id = if rnd(&mut self.gen, 1, 100) > 1 {
                w
            } else {
                all_local = 0;
                self.other_warehouse()
            };
            let quantity = rnd(&mut self.gen, 1, 10);
            lines.push((item, supply_w_id, quantity));
        }
        if rnd(&mut self.gen, 1, 100) == 1 {
            lines[n as usize - 1].0 = INVALID_ITEM_ID;
        }
        NewOrderParams {
            d,
            c,
            lines,
            all_local,
        }
    }

    fn customer(&self, tx: &mut Tx<'_>, w: i64, d: i64, by: CustomerRef) -> Option<Customer> {
        match by {
            CustomerRef::ById(c) => self.customer_by_id(tx, w, d, c),
            CustomerRef::ByName(last) => self.customer_by_name(tx, w, d, last),
        }
    }

    fn new_order(&self, tx: &mut Tx<'_>, p: &NewOrderParams) -> Step {
        let w = self.w_id;
        let (d, c, n, all_local) = (p.d, p.c, p.lines.len() as i64, p.all_local);
        let t = &self.t;
        let cust = t.customer.select(
            tx,
            Projection::Columns(&["C_DISCOUNT", "C_LAST", "C_CREDIT"]),
            &eq3("C_W_ID", w, "C_D_ID", d, "C_ID", c),
        );
        let tax = t
            .warehouse
            .select(tx, Projection::Columns(&["W_TAX"]), &Pred::eq("W_ID", w));
        if cust.is_empty() || tax.is_empty() {
            return ROLLBACK;
        }
        let district = Pred::eq("D_W_ID", w).and(Pred::eq("D_ID", d));
        let Some(next) = t
            .district
            .select(
                tx,
                Projection::Columns(&["D_NEXT_O_ID", "D_TAX"]),
                &district,
            )
            .first()
            .map(|r| int(&r[0]))
        else {
            return ROLLBACK;
        };
        if t.district
            .update(tx, &[Assign::add("D_NEXT_O_ID", 1i64)], &district)
            == 0
        {
            return ROLLBACK;
        }
        let o = next;
        t.oorder.insert(
            tx,
            &[
                ("O_ID", Value::Int(o)),
                ("O_D_ID", Value::Int(d)),
                ("O_W_ID", Value::Int(w)),
                ("O_C_ID", Value::Int(c)),
                ("O_ENTRY_D", Value::text(NOW)),
                ("O_OL_CNT", Value::Int(n)),
                ("O_ALL_LOCAL", Value::Int(all_local)),
            ],
        );
        t.new_order.insert(
            tx,
            &[
                ("NO_O_ID", Value::Int(o)),
                ("NO_D_ID", Value::Int(d)),
                ("NO_W_ID", Value::Int(w)),
            ],
        );
        let mut stock_columns = vec!["S_QUANTITY", "S_DATA"];
        stock_columns.extend_from_slice(&STOCK_DIST);
        let mut lines = Vec::with_capacity(n as usize);
        for &(item_id, supply_w_id, quantity) in &p.lines {
            let item = t.item.select(
                tx,
                Projection::Columns(&["I_PRICE", "I_NAME", "I_DATA"]),
                &Pred::eq("I_ID", item_id),
            );
            let Some(price) = item.first().map(|r| real(&r[0])) else {
                // The expected 1 % rollback (UserAbortException).
                return ROLLBACK;
            };
            let stock = t.stock.select(
                tx,
                Projection::Columns(&stock_columns),
                &Pred::eq("S_I_ID", item_id).and(Pred::eq("S_W_ID", supply_w_id)),
            );
            let Some(stock) = stock.first() else {
                return ROLLBACK;
            };
            let s_quantity = int(&stock[0]);
            let new_s_quantity = if s_quantity - quantity >= 10 {
                s_quantity - quantity
            } else {
                s_quantity - quantity + 91
            };
            lines.push(Line {
                item: item_id,
                supply_w_id,
                quantity,
                new_s_quantity,
                remote: i64::from(supply_w_id != w),
                amount: quantity as f64 * price,
                dist_info: stock[1 + d as usize].clone(),
            });
        }
        for (i, line) in lines.iter().enumerate() {
            t.order_line.insert(
                tx,
                &[
                    ("OL_O_ID", Value::Int(o)),
                    ("OL_D_ID", Value::Int(d)),
                    ("OL_W_ID", Value::Int(w)),
                    ("OL_NUMBER", Value::Int(i as i64 + 1)),
                    ("OL_I_ID", Value::Int(line.item)),
                    ("OL_SUPPLY_W_ID", Value::Int(line.supply_w_id)),
                    ("OL_QUANTITY", Value::Int(line.quantity)),
                    ("OL_AMOUNT", Value::Real(line.amount)),
                    ("OL_DIST_INFO", line.dist_info.clone()),
                ],
            );
        }
        for line in &lines {
            t.stock.update(
                tx,
                &[
                    Assign::set("S_QUANTITY", line.new_s_quantity),
                    Assign::add("S_YTD", line.quantity),
                    Assign::add("S_ORDER_CNT", 1i64),
                    Assign::add("S_REMOTE_CNT", line.remote),
                ],
                &Pred::eq("S_I_ID", line.item).and(Pred::eq("S_W_ID", line.supply_w_id)),
            );
        }
        COMMIT
    }

    /// Payment's parameters, drawn as OLTP-Bench draws them.
    fn draw_payment(&mut self) -> PaymentParams {
        let w = self.w_id;
        let d = self.district();
        customer_id(&mut self.gen);
        let x = rnd(&mut self.gen, 1, 100);
        let (c_d, c_w) = if x <= 85 {
            (d, w)
        } else {
            let c_d = rnd(&mut self.gen, 1, DISTRICTS);
            (c_d, self.other_warehouse())
        };
        let y = rnd(&mut self.gen, 1, 100);
        let customer = if y <= 60 {
            CustomerRef::ByName(last_name(&mut self.gen))
        } else {
            CustomerRef::ById(customer_id(&mut self.gen))
        };
        let amount = rnd(&mut self.gen, 100, 500_000) as f64 / 100.0;
        PaymentParams {
            d,
            c_d,
            c_w,
            customer,
            amount,
        }
    }

    fn payment(&self, tx: &mut Tx<'_>, p: &PaymentParams) -> Step {
        let w = self.w_id;
        let (d, c_d, c_w, amount) = (p.d, p.c_d, p.c_w, p.amount);
        let t = &self.t;
        let warehouse = Pred::eq("W_ID", w);
        if t.warehouse
            .update(tx, &[Assign::add("W_YTD", amount)], &warehouse)
            == 0
        {
            return ROLLBACK;
        }
        let Some(w_name) = t
            .warehouse
            .select(
                tx,
                Projection::Columns(&[
                    "W_STREET_1",
                    "W_STREET_2",
                    "W_CITY",
                    "W_STATE",
                    "W_ZIP",
                    "W_NAME",
                ]),
                &warehouse,
            )
            .first()
            .map(|r| r[5].to_string())
        else {
            return ROLLBACK;
        };
        let district = Pred::eq("D_W_ID", w).and(Pred::eq("D_ID", d));
        if t.district
            .update(tx, &[Assign::add("D_YTD", amount)], &district)
            == 0
        {
            return ROLLBACK;
        }
        let Some(d_name) = t
            .district
            .select(
                tx,
                Projection::Columns(&[
                    "D_STREET_1",
                    "D_STREET_2",
                    "D_CITY",
                    "D_STATE",
                    "D_ZIP",
                    "D_NAME",
                ]),
                &district,
            )
            .first()
            .map(|r| r[5].to_string())
        else {
            return ROLLBACK;
        };
        let customer = self.customer(tx, c_w, c_d, p.customer);
        let Some(c) = customer else {
            return ROLLBACK;
        };
        let t = &self.t;
        let key = eq3("C_W_ID", c_w, "C_D_ID", c_d, "C_ID", c.id);
        let mut assignments = vec![
            Assign::set("C_BALANCE", c.balance - amount),
            Assign::set("C_YTD_PAYMENT", c.ytd_payment + amount),
            Assign::set("C_PAYMENT_CNT", c.payment_cnt + 1),
        ];
        if c.credit == "BC" {
            let Some(data) = t
                .customer
                .select(tx, Projection::Columns(&["C_DATA"]), &key)
                .first()
                .map(|r| r[0].to_string())
            else {
                return ROLLBACK;
            };
            let mut data = format!("{} {c_d} {c_w} {d} {w} {amount} | {data}", c.id);
            data.truncate(500);
            assignments.push(Assign::set("C_DATA", data));
        }
        if t.customer.update(tx, &assignments, &key) == 0 {
            return ROLLBACK;
        }
        let h_data = format!(
            "{}    {}",
            w_name.chars().take(10).collect::<String>(),
            d_name.chars().take(10).collect::<String>()
        );
        t.history.insert(
            tx,
            &[
                ("H_C_D_ID", Value::Int(c_d)),
                ("H_C_W_ID", Value::Int(c_w)),
                ("H_C_ID", Value::Int(c.id)),
                ("H_D_ID", Value::Int(d)),
                ("H_W_ID", Value::Int(w)),
                ("H_DATE", Value::text(NOW)),
                ("H_AMOUNT", Value::Real(amount)),
                ("H_DATA", Value::from(h_data)),
            ],
        );
        COMMIT
    }

    /// OrderStatus's parameters: the district and the customer.
    fn draw_order_status(&mut self) -> (i64, CustomerRef) {
        let d = self.district();
        let y = rnd(&mut self.gen, 1, 100);
        let customer = if y <= 60 {
            CustomerRef::ByName(last_name(&mut self.gen))
        } else {
            CustomerRef::ById(customer_id(&mut self.gen))
        };
        (d, customer)
    }

    fn order_status(&self, tx: &mut Tx<'_>, d: i64, customer: CustomerRef) -> Step {
        let w = self.w_id;
        let customer = self.customer(tx, w, d, customer);
        let Some(c) = customer else {
            return ROLLBACK;
        };
        let t = &self.t;
        let Some(o) = t
            .oorder
            .select(
                tx,
                Projection::Columns(&["O_ID", "O_CARRIER_ID", "O_ENTRY_D"]),
                &eq3("O_W_ID", w, "O_D_ID", d, "O_C_ID", c.id),
            )
            .iter()
            .map(|r| int(&r[0]))
            .max()
        else {
            return ROLLBACK;
        };
        t.order_line.select(
            tx,
            Projection::Columns(&[
                "OL_I_ID",
                "OL_SUPPLY_W_ID",
                "OL_QUANTITY",
                "OL_AMOUNT",
                "OL_DELIVERY_D",
            ]),
            &eq3("OL_O_ID", o, "OL_D_ID", d, "OL_W_ID", w),
        );
        COMMIT
    }

    fn delivery(&self, tx: &mut Tx<'_>, carrier: i64) -> Step {
        let w = self.w_id;
        let t = &self.t;
        for d in 1..=self.d_upper {
            let Some(o) = t
                .new_order
                .select(
                    tx,
                    Projection::Columns(&["NO_O_ID"]),
                    &Pred::eq("NO_D_ID", d).and(Pred::eq("NO_W_ID", w)),
                )
                .iter()
                .map(|r| int(&r[0]))
                .min()
            else {
                continue;
            };
            if t.new_order
                .delete(tx, &eq3("NO_O_ID", o, "NO_D_ID", d, "NO_W_ID", w))
                != 1
            {
                // OLTP-Bench: "delete failed (not running with SERIALIZABLE isolation?)".
                return ROLLBACK;
            }
            let order = eq3("O_ID", o, "O_D_ID", d, "O_W_ID", w);
            let Some(c) = t
                .oorder
                .select(tx, Projection::Columns(&["O_C_ID"]), &order)
                .first()
                .map(|r| int(&r[0]))
            else {
                return ROLLBACK;
            };
            if t.oorder
                .update(tx, &[Assign::set("O_CARRIER_ID", carrier)], &order)
                != 1
            {
                return ROLLBACK;
            }
            let lines = eq3("OL_O_ID", o, "OL_D_ID", d, "OL_W_ID", w);
            if t.order_line
                .update(tx, &[Assign::set("OL_DELIVERY_D", NOW)], &lines)
                == 0
            {
                return ROLLBACK;
            }
            let total: f64 = t
                .order_line
                .select(tx, Projection::Columns(&["OL_AMOUNT"]), &lines)
                .iter()
                .map(|r| real(&r[0]))
                .sum();
            if t.customer.update(
                tx,
                &[
                    Assign::add("C_BALANCE", total),
                    Assign::add("C_DELIVERY_CNT", 1i64),
                ],
                &eq3("C_W_ID", w, "C_D_ID", d, "C_ID", c),
            ) == 0
            {
                return ROLLBACK;
            }
        }
        COMMIT
    }

    /// StockLevel's parameters: the threshold, then the district.
    fn draw_stock_level(&mut self) -> (i64, i64) {
        let threshold = rnd(&mut self.gen, 10, 20);
        (threshold, self.district())
    }

    fn stock_level(&self, tx: &mut Tx<'_>, threshold: i64, d: i64) -> Step {
        let w = self.w_id;
        let t = &self.t;
        let Some(next) = t
            .district
            .select(
                tx,
                Projection::Columns(&["D_NEXT_O_ID"]),
                &Pred::eq("D_W_ID", w).and(Pred::eq("D_ID", d)),
            )
            .first()
            .map(|r| int(&r[0]))
        else {
            return ROLLBACK;
        };
        let low = if next > 20 { next - 20 } else { next };
        let items = t.order_line.select(
            tx,
            Projection::Columns(&["OL_I_ID"]),
            &Pred::eq("OL_W_ID", w)
                .and(Pred::eq("OL_D_ID", d))
                .and(Pred::cmp("OL_O_ID", CmpOp::Lt, next))
                .and(Pred::cmp("OL_O_ID", CmpOp::Gt, low)),
        );
        for item in items {
            t.stock.select(
                tx,
                Projection::Columns(&["S_I_ID"]),
                &Pred::eq("S_W_ID", w)
                    .and(Pred::eq("S_I_ID", int(&item[0])))
                    .and(Pred::cmp("S_QUANTITY", CmpOp::Lt, threshold)),
            );
        }
        COMMIT
    }
}

impl Terminal for TpccTerminal {
    fn run(&mut self, procedure: usize, _step: u32, tx: &mut Tx<'_>) -> Step {
        let w = self.w_id;
        match procedure {
            0 => {
                let p = self.draw_new_order();
                let distinct = |f: fn(&(i64, i64, i64)) -> i64| {
                    let mut v: Vec<i64> = p.lines.iter().map(f).collect();
                    v.sort_unstable();
                    v.dedup();
                    v.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")
                };
                let quantities: Vec<String> = p.lines.iter().map(|l| l.2.to_string()).collect();
                self.parameters = format!(
                    "w_id={w}, d_id={}, c_id={}, {} lines: items {}, supply w {}, quantities {}",
                    p.d,
                    p.c,
                    p.lines.len(),
                    distinct(|l| l.0),
                    distinct(|l| l.1),
                    quantities.join(" ")
                );
                self.new_order(tx, &p)
            }
            1 => {
                let p = self.draw_payment();
                self.parameters = format!(
                    "w_id={w}, d_id={}, c_w_id={}, c_d_id={}, {}, amount={:.2}",
                    p.d,
                    p.c_w,
                    p.c_d,
                    describe_customer(p.customer),
                    p.amount
                );
                self.payment(tx, &p)
            }
            2 => {
                let (d, customer) = self.draw_order_status();
                self.parameters = format!("w_id={w}, d_id={d}, {}", describe_customer(customer));
                self.order_status(tx, d, customer)
            }
            3 => {
                let carrier = rnd(&mut self.gen, 1, 10);
                self.parameters = format!("w_id={w}, o_carrier_id={carrier}");
                self.delivery(tx, carrier)
            }
            _ => {
                let (threshold, d) = self.draw_stock_level();
                self.parameters = format!("w_id={w}, d_id={d}, threshold={threshold}");
                self.stock_level(tx, threshold, d)
            }
        }
    }

    fn parameters(&self) -> Option<String> {
        Some(self.parameters.clone())
    }
}

/// `c_id=N` or `c_last=NAME`.
fn describe_customer(c: CustomerRef) -> String {
    match c {
        CustomerRef::ById(id) => format!("c_id={id}"),
        CustomerRef::ByName(name) => format!("c_last={name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ReadPolicy, ScanMode, Store};
    use crate::workloads::{counts, Counts};

    /// Loads TPC-C, runs `f` as one transaction of terminal `t` (of 3) and returns the
    /// Table 3 counts of the run (`None` if `f` rolled back) and the invariants after it.
    fn one_txn(
        t: usize,
        f: impl FnOnce(&TpccTerminal, &mut Tx<'_>) -> Step,
    ) -> (Option<Counts>, Vec<InvariantCheck>) {
        // The costs are MonkeyDB's (full scans), as the specification counts them.
        one_txn_scanning(ScanMode::Full, t, f)
    }

    fn one_txn_scanning(
        scan: ScanMode,
        t: usize,
        f: impl FnOnce(&TpccTerminal, &mut Tx<'_>) -> Step,
    ) -> (Option<Counts>, Vec<InvariantCheck>) {
        let mut store = Store::new(ReadPolicy::Latest).unwrap();
        store.set_scan_mode(scan);
        Tpcc.load(&mut store.loader());
        let s = store.open_session(8);
        let (lower, upper) = district_range(t, 3);
        let term = TpccTerminal::new(t, lower, upper);
        let mut tx = store.begin(s);
        let committed = match f(&term, &mut tx) {
            Step::Done(Outcome::Commit) => {
                tx.commit();
                true
            }
            _ => {
                tx.rollback();
                false
            }
        };
        let c = counts(&store.history("tpcc").unwrap());
        let inv = Tpcc.invariants(&mut store.snapshot());
        (committed.then_some(c), inv)
    }

    fn failing(inv: &[InvariantCheck]) -> Vec<&'static str> {
        inv.iter().filter(|i| !i.holds).map(|i| i.id).collect()
    }

    fn new_order(n: usize, last_item: i64) -> NewOrderParams {
        let mut lines = vec![(1, 1, 3); n];
        lines[n - 1].0 = last_item;
        NewOrderParams {
            d: 1,
            c: 2,
            lines,
            all_local: 1,
        }
    }

    #[test]
    fn new_order_costs_58_plus_27n_reads_and_20_plus_10n_writes() {
        for n in [5usize, 9, 15] {
            let (c, inv) = one_txn(1, |term, tx| term.new_order(tx, &new_order(n, 1)));
            let c = c.expect("commits");
            assert_eq!((c.reads, c.writes), (58 + 27 * n, 20 + 10 * n), "n = {n}");
            assert!(failing(&inv).is_empty(), "{inv:?}");
        }
        // The 1 % rollback: an invalid last item aborts after the reads.
        let (c, inv) = one_txn(1, |term, tx| {
            term.new_order(tx, &new_order(7, INVALID_ITEM_ID))
        });
        assert!(c.is_none());
        assert!(failing(&inv).is_empty());
    }

    fn payment(customer: CustomerRef, d: i64) -> PaymentParams {
        PaymentParams {
            d,
            c_d: d,
            c_w: 1,
            customer,
            amount: 1234.56,
        }
    }

    #[test]
    fn payment_costs_99_or_131_reads_and_14_writes() {
        let (c, inv) = one_txn(1, |term, tx| {
            term.payment(tx, &payment(CustomerRef::ById(2), 1))
        });
        let c = c.unwrap();
        assert_eq!((c.reads, c.writes), (99, 14));
        assert!(failing(&inv).is_empty(), "{inv:?}");
        let (c, _) = one_txn(2, |term, tx| {
            term.payment(tx, &payment(CustomerRef::ByName(LAST_NAME), 2))
        });
        let c = c.unwrap();
        assert_eq!((c.reads, c.writes), (131, 14));
    }

    #[test]
    fn by_name_lookups_pick_the_middle_customer_by_first_name() {
        let mut store = Store::new(ReadPolicy::Latest).unwrap();
        Tpcc.load(&mut store.loader());
        let s = store.open_session(8);
        let term = TpccTerminal::new(1, 1, 1);
        let mut tx = store.begin(s);
        let ids: Vec<i64> = (1..=2)
            .map(|d| term.customer_by_name(&mut tx, 1, d, LAST_NAME).unwrap().id)
            .collect();
        tx.rollback();
        assert_eq!(ids, [3, 2]);
    }

    #[test]
    fn delivery_writes_4_plus_the_lines_of_each_district_it_serves() {
        // t1 serves district 1 (order 3: 7 lines), t2 districts 1 and 2 (7 and 6 lines).
        let (c, inv) = one_txn(1, |term, tx| term.delivery(tx, 5));
        assert_eq!(c.unwrap().writes, 4 + 7);
        assert!(failing(&inv).is_empty(), "{inv:?}");
        let (c, inv) = one_txn(2, |term, tx| term.delivery(tx, 5));
        assert_eq!(c.unwrap().writes, 4 + 7 + 4 + 6);
        assert!(failing(&inv).is_empty(), "{inv:?}");
        // t0 serves no district: an empty transaction.
        let (c, _) = one_txn(0, |term, tx| term.delivery(tx, 5));
        assert_eq!(c.unwrap(), Counts::default());
    }

    #[test]
    fn keyed_scans_read_less_and_write_the_same() {
        type Call = Box<dyn Fn(&TpccTerminal, &mut Tx<'_>) -> Step>;
        let calls: Vec<(usize, Call)> = vec![
            (1, Box::new(|term, tx| term.new_order(tx, &new_order(5, 1)))),
            (
                1,
                Box::new(|term, tx| term.payment(tx, &payment(CustomerRef::ById(2), 1))),
            ),
            (
                2,
                Box::new(|term, tx| term.payment(tx, &payment(CustomerRef::ByName(LAST_NAME), 2))),
            ),
            (2, Box::new(|term, tx| term.delivery(tx, 5))),
            (1, Box::new(|term, tx| term.stock_level(tx, 15, 1))),
            (
                1,
                Box::new(|term, tx| term.order_status(tx, 1, CustomerRef::ById(1))),
            ),
        ];
        for (i, (t, call)) in calls.iter().enumerate() {
            let (full, _) = one_txn_scanning(ScanMode::Full, *t, |term, tx| call(term, tx));
            let (keyed, inv) = one_txn_scanning(ScanMode::Keyed, *t, |term, tx| call(term, tx));
            let (full, keyed) = (full.unwrap(), keyed.unwrap());
            assert_eq!(
                (keyed.writes, keyed.txns),
                (full.writes, full.txns),
                "call {i}"
            );
            assert!(keyed.reads < full.reads, "call {i}: {keyed:?} {full:?}");
            assert!(failing(&inv).is_empty(), "call {i}: {inv:?}");
        }
    }

    #[test]
    fn read_only_procedures_cost_their_scans() {
        // StockLevel: 8 for D_NEXT_O_ID, then the empty window's ORDER_LINE scan (53 rows).
        let (c, _) = one_txn(1, |term, tx| term.stock_level(tx, 15, 1));
        let c = c.unwrap();
        assert_eq!((c.reads, c.writes), (9 + 4 * 53, 0));
        // OrderStatus by id of customer 1 in district 1, whose newest order is order 3:
        // customer 41, its orders 6 + 1 + 3·6 + 3, the order's 7 lines 53 + 1 + 3·53 + 5·7.
        let (c, _) = one_txn(1, |term, tx| term.order_status(tx, 1, CustomerRef::ById(1)));
        let c = c.unwrap();
        assert_eq!((c.reads, c.writes), (41 + 28 + 53 + 1 + 3 * 53 + 5 * 7, 0));
    }

    #[test]
    fn invariants_catch_lost_and_fractured_updates() {
        let t = tables();
        // A W_YTD increment without its district and history: A1 and A8.
        let (_, inv) = one_txn(1, |_, tx| {
            t.warehouse
                .update(tx, &[Assign::add("W_YTD", 5.0)], &Pred::eq("W_ID", 1));
            COMMIT
        });
        assert_eq!(failing(&inv), ["A1", "A8"]);
        // An extra line on a delivered order: A4, A6 (A7 looks at the last line by row id).
        let (_, inv) = one_txn(1, |_, tx| {
            t.order_line.insert(
                tx,
                &[
                    ("OL_W_ID", Value::Int(1)),
                    ("OL_D_ID", Value::Int(1)),
                    ("OL_O_ID", Value::Int(1)),
                    ("OL_NUMBER", Value::Int(99)),
                    ("OL_AMOUNT", Value::Real(0.0)),
                ],
            );
            COMMIT
        });
        assert_eq!(failing(&inv), ["A4", "A6"]);
        // A delivered order still in NEW_ORDER, and D_NEXT_O_ID moved without its order.
        let (_, inv) = one_txn(1, |_, tx| {
            t.oorder.update(
                tx,
                &[Assign::set("O_CARRIER_ID", 3i64)],
                &eq3("O_W_ID", 1, "O_D_ID", 2, "O_ID", 3),
            );
            t.district.update(
                tx,
                &[Assign::add("D_NEXT_O_ID", 1i64)],
                &Pred::eq("D_W_ID", 1).and(Pred::eq("D_ID", 1)),
            );
            COMMIT
        });
        assert_eq!(failing(&inv), ["A2", "A5", "A7"]);
        // A customer's balance changed alone: A10 and A12.
        let (_, inv) = one_txn(1, |_, tx| {
            t.customer.update(
                tx,
                &[Assign::add("C_BALANCE", 1.0)],
                &eq3("C_W_ID", 1, "C_D_ID", 1, "C_ID", 1),
            );
            COMMIT
        });
        assert_eq!(failing(&inv), ["A10", "A12"]);
    }

    #[test]
    fn terminals_split_the_districts_like_oltp_bench() {
        assert_eq!(district_range(0, 3), (1, 0));
        assert_eq!(district_range(1, 3), (1, 1));
        assert_eq!(district_range(2, 3), (2, 2));
        assert_eq!(district_range(0, 1), (1, 2));
        assert_eq!(district_range(0, 2), (1, 1));
        assert_eq!(district_range(1, 2), (2, 2));
    }

    #[test]
    fn rnd_and_nurand_follow_tpcc_util() {
        // rnd(1, 0) (terminal 0's empty range) is 1 but still draws.
        let mut a = JavaRandom::new(0);
        assert_eq!(rnd(&mut a, 1, 0), 1);
        let mut b = JavaRandom::new(0);
        b.next_double();
        assert_eq!(a, b);
        // NURand over one item is always item 1, after two draws.
        let mut r = JavaRandom::new(5);
        for _ in 0..50 {
            assert_eq!(item_id(&mut r), 1);
            let c = customer_id(&mut r);
            assert!((1..=3).contains(&c));
        }
        // Values from java.util.Random(0): nextDouble = 0.730967787376657.
        assert_eq!(rnd(&mut JavaRandom::new(0), 1, 100), 74);
    }
}
