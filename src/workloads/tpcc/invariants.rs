//! MonkeyDB's `tpcc_cr` assertions A1–A12 (Biswas et al., OOPSLA'21; notes/workloads.md §4 (5))
//! on the final state of a TPC-C run, read without recording:
//! A1 W_YTD = Σ D_YTD; A2 D_NEXT_O_ID − 1 = max O_ID = max NO_O_ID; A3 NEW_ORDER ids
//! contiguous; A4 Σ O_OL_CNT = #ORDER_LINE per district; A5 no delivered order in NEW_ORDER;
//! A6 O_OL_CNT = #lines per order; A7 carrier set ⇔ the order's last line (by row id, as the
//! checker keeps it) delivered; A8 W_YTD = Σ H_AMOUNT; A9 D_YTD = Σ H_AMOUNT per district;
//! A10 C_BALANCE + Σ H_AMOUNT = Σ delivered OL_AMOUNT; A11 #OORDER − #NEW_ORDER ≥ 2;
//! A12 C_BALANCE + C_YTD_PAYMENT = Σ delivered OL_AMOUNT. Amounts compare to the cent.

use std::collections::BTreeMap;

use super::{int, real, Tables};
use crate::store::{Pred, Projection, Snapshot};
use crate::workloads::InvariantCheck;

/// Amounts are compared to the cent.
const EPSILON: f64 = 0.005;

fn check(id: &'static str, description: &'static str, failures: Vec<String>) -> InvariantCheck {
    InvariantCheck {
        id,
        description,
        holds: failures.is_empty(),
        detail: failures.join("; "),
    }
}

/// The final state, read without recording.
struct State {
    w_ytd: BTreeMap<i64, f64>,
    /// (w, d) → (D_YTD, D_NEXT_O_ID).
    districts: BTreeMap<(i64, i64), (f64, i64)>,
    /// (w, d, c) → (C_BALANCE, C_YTD_PAYMENT).
    customers: BTreeMap<(i64, i64, i64), (f64, f64)>,
    /// (H_W_ID, H_D_ID, H_C_W_ID, H_C_D_ID, H_C_ID, H_AMOUNT).
    history: Vec<(i64, i64, i64, i64, i64, f64)>,
    /// (w, d, o) → (O_C_ID, carrier set, O_OL_CNT).
    orders: BTreeMap<(i64, i64, i64), (i64, bool, i64)>,
    /// (w, d) → NO_O_IDs.
    new_orders: BTreeMap<(i64, i64), Vec<i64>>,
    /// (w, d, o) → (line count, Σ OL_AMOUNT of delivered lines, last line delivered).
    lines: BTreeMap<(i64, i64, i64), (i64, f64, bool)>,
}

fn read_state(t: &Tables, s: &mut Snapshot<'_>) -> State {
    let mut state = State {
        w_ytd: BTreeMap::new(),
        districts: BTreeMap::new(),
        customers: BTreeMap::new(),
        history: Vec::new(),
        orders: BTreeMap::new(),
        new_orders: BTreeMap::new(),
        lines: BTreeMap::new(),
    };
    let all = &Pred::All;
    for r in t
        .warehouse
        .select(s, Projection::Columns(&["W_ID", "W_YTD"]), all)
    {
        state.w_ytd.insert(int(&r[0]), real(&r[1]));
    }
    for r in t.district.select(
        s,
        Projection::Columns(&["D_W_ID", "D_ID", "D_YTD", "D_NEXT_O_ID"]),
        all,
    ) {
        state
            .districts
            .insert((int(&r[0]), int(&r[1])), (real(&r[2]), int(&r[3])));
    }
    for r in t.customer.select(
        s,
        Projection::Columns(&["C_W_ID", "C_D_ID", "C_ID", "C_BALANCE", "C_YTD_PAYMENT"]),
        all,
    ) {
        state.customers.insert(
            (int(&r[0]), int(&r[1]), int(&r[2])),
            (real(&r[3]), real(&r[4])),
        );
    }
    for r in t.history.select(
        s,
        Projection::Columns(&[
            "H_W_ID", "H_D_ID", "H_C_W_ID", "H_C_D_ID", "H_C_ID", "H_AMOUNT",
        ]),
        all,
    ) {
        state.history.push((
            int(&r[0]),
            int(&r[1]),
            int(&r[2]),
            int(&r[3]),
            int(&r[4]),
            real(&r[5]),
        ));
    }
    for r in t.oorder.select(
        s,
        Projection::Columns(&[
            "O_W_ID",
            "O_D_ID",
            "O_ID",
            "O_C_ID",
            "O_CARRIER_ID",
            "O_OL_CNT",
        ]),
        all,
    ) {
        state.orders.insert(
            (int(&r[0]), int(&r[1]), int(&r[2])),
            (int(&r[3]), !r[4].is_null(), int(&r[5])),
        );
    }
    for r in t.new_order.select(
        s,
        Projection::Columns(&["NO_W_ID", "NO_D_ID", "NO_O_ID"]),
        all,
    ) {
        state
            .new_orders
            .entry((int(&r[0]), int(&r[1])))
            .or_default()
            .push(int(&r[2]));
    }
    for r in t.order_line.select(
        s,
        Projection::Columns(&[
            "OL_W_ID",
            "OL_D_ID",
            "OL_O_ID",
            "OL_DELIVERY_D",
            "OL_AMOUNT",
        ]),
        all,
    ) {
        let delivered = !r[3].is_null();
        let entry = state
            .lines
            .entry((int(&r[0]), int(&r[1]), int(&r[2])))
            .or_insert((0, 0.0, false));
        entry.0 += 1;
        if delivered {
            entry.1 += real(&r[4]);
        }
        entry.2 = delivered;
    }
    state
}

/// MonkeyDB's `tpcc_cr` assertions A1–A12 on the final state.
pub(super) fn invariants(t: &Tables, s: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
    let st = read_state(t, s);
    let (a10, a12) = a10_a12(&st);
    vec![
        a1(&st),
        a2(&st),
        a3(&st),
        a4(&st),
        a5(&st),
        a6(&st),
        a7(&st),
        a8(&st),
        a9(&st),
        a10,
        a11(&st),
        a12,
    ]
}

/// Whether two amounts are equal to the cent.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < EPSILON
}

/// A1: W_YTD equals the sum of its districts' D_YTD.
fn a1(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for (&w, &ytd) in &st.w_ytd {
        let sum: f64 = st
            .districts
            .iter()
            .filter(|(k, _)| k.0 == w)
            .map(|(_, v)| v.0)
            .sum();
        if !close(ytd, sum) {
            fails.push(format!("warehouse {w}: W_YTD {ytd} but Σ D_YTD {sum}"));
        }
    }
    check("A1", "W_YTD equals the sum of its districts' D_YTD", fails)
}

/// A2: D_NEXT_O_ID − 1 equals the district's max O_ID, which equals its max NO_O_ID.
fn a2(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for (&(w, d), &(_, next)) in &st.districts {
        let max_o = st
            .orders
            .keys()
            .filter(|k| k.0 == w && k.1 == d)
            .map(|k| k.2)
            .max()
            .unwrap_or(0);
        if next - 1 != max_o {
            fails.push(format!(
                "district {d}: D_NEXT_O_ID − 1 = {} but max O_ID {max_o}",
                next - 1
            ));
        }
        if let Some(max_no) = st.new_orders.get(&(w, d)).and_then(|v| v.iter().max()) {
            if *max_no != max_o {
                fails.push(format!(
                    "district {d}: max O_ID {max_o} but max NO_O_ID {max_no}"
                ));
            }
        }
    }
    check(
        "A2",
        "D_NEXT_O_ID − 1 equals the district's max O_ID, which equals its max NO_O_ID",
        fails,
    )
}

/// A3: each district's NEW_ORDER ids are contiguous.
fn a3(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for (&(_, d), ids) in &st.new_orders {
        let (min, max) = (
            ids.iter().min().copied().unwrap_or(0),
            ids.iter().max().copied().unwrap_or(0),
        );
        if max - min + 1 != ids.len() as i64 {
            fails.push(format!(
                "district {d}: NEW_ORDER ids {min}..{max} but {} rows",
                ids.len()
            ));
        }
    }
    check("A3", "each district's NEW_ORDER ids are contiguous", fails)
}

/// A4: each district's Σ O_OL_CNT equals its number of ORDER_LINE rows.
fn a4(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for &(w, d) in st.districts.keys() {
        let ol_cnt: i64 = st
            .orders
            .iter()
            .filter(|(k, _)| k.0 == w && k.1 == d)
            .map(|(_, v)| v.2)
            .sum();
        let lines: i64 = st
            .lines
            .iter()
            .filter(|(k, _)| k.0 == w && k.1 == d)
            .map(|(_, v)| v.0)
            .sum();
        if ol_cnt != lines {
            fails.push(format!(
                "district {d}: Σ O_OL_CNT {ol_cnt} but {lines} ORDER_LINE rows"
            ));
        }
    }
    check(
        "A4",
        "each district's Σ O_OL_CNT equals its number of ORDER_LINE rows",
        fails,
    )
}

/// A5: no order both has a carrier and is still in NEW_ORDER.
fn a5(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for (&(w, d), ids) in &st.new_orders {
        for &o in ids {
            if st.orders.get(&(w, d, o)).is_some_and(|v| v.1) {
                fails.push(format!(
                    "order {o} of district {d} has a carrier but is still new"
                ));
            }
        }
    }
    check(
        "A5",
        "no order both has a carrier and is still in NEW_ORDER",
        fails,
    )
}

/// A6: each order's O_OL_CNT equals its number of lines.
fn a6(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for (&(w, d, o), &(_, _, ol_cnt)) in &st.orders {
        let lines = st.lines.get(&(w, d, o)).map_or(0, |v| v.0);
        if lines != ol_cnt {
            fails.push(format!(
                "order {o} of district {d}: O_OL_CNT {ol_cnt} but {lines} lines"
            ));
        }
    }
    check(
        "A6",
        "each order's O_OL_CNT equals its number of lines",
        fails,
    )
}

/// A7: an order has a carrier iff its (last) line has a delivery date.
fn a7(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for (&(w, d, o), &(_, carrier, _)) in &st.orders {
        if let Some(&(_, _, delivered)) = st.lines.get(&(w, d, o)) {
            if carrier != delivered {
                fails.push(format!(
                    "order {o} of district {d}: carrier {} but delivery date {}",
                    if carrier { "set" } else { "NULL" },
                    if delivered { "set" } else { "NULL" }
                ));
            }
        }
    }
    check(
        "A7",
        "an order has a carrier iff its (last) line has a delivery date",
        fails,
    )
}

/// A8: W_YTD equals the sum of the warehouse's H_AMOUNT.
fn a8(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for (&w, &ytd) in &st.w_ytd {
        let sum: f64 = st.history.iter().filter(|h| h.0 == w).map(|h| h.5).sum();
        if !close(ytd, sum) {
            fails.push(format!("warehouse {w}: W_YTD {ytd} but Σ H_AMOUNT {sum}"));
        }
    }
    check(
        "A8",
        "W_YTD equals the sum of the warehouse's H_AMOUNT",
        fails,
    )
}

/// A9: D_YTD equals the sum of the district's H_AMOUNT.
fn a9(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for (&(w, d), &(ytd, _)) in &st.districts {
        let sum: f64 = st
            .history
            .iter()
            .filter(|h| h.0 == w && h.1 == d)
            .map(|h| h.5)
            .sum();
        if !close(ytd, sum) {
            fails.push(format!("district {d}: D_YTD {ytd} but Σ H_AMOUNT {sum}"));
        }
    }
    check(
        "A9",
        "D_YTD equals the sum of the district's H_AMOUNT",
        fails,
    )
}

/// A10 and A12: a customer's balance against its payments (Σ H_AMOUNT, then C_YTD_PAYMENT)
/// and its delivered lines; A12's check is made here and returned second.
fn a10_a12(st: &State) -> (InvariantCheck, InvariantCheck) {
    let delivered = |w: i64, d: i64, c: i64| -> f64 {
        st.orders
            .iter()
            .filter(|(k, v)| k.0 == w && k.1 == d && v.0 == c)
            .map(|(k, _)| st.lines.get(k).map_or(0.0, |l| l.1))
            .sum()
    };
    let mut fails10 = Vec::new();
    let mut fails12 = Vec::new();
    for (&(w, d, c), &(balance, ytd)) in &st.customers {
        let paid: f64 = st
            .history
            .iter()
            .filter(|h| h.2 == w && h.3 == d && h.4 == c)
            .map(|h| h.5)
            .sum();
        let owed = delivered(w, d, c);
        if !close(balance + paid, owed) {
            fails10.push(format!(
                "customer {c} of district {d}: C_BALANCE {balance} + Σ H_AMOUNT {paid} ≠ \
                 delivered Σ OL_AMOUNT {owed}"
            ));
        }
        if !close(balance + ytd, owed) {
            fails12.push(format!(
                "customer {c} of district {d}: C_BALANCE {balance} + C_YTD_PAYMENT {ytd} ≠ \
                 delivered Σ OL_AMOUNT {owed}"
            ));
        }
    }
    let a10 = check(
        "A10",
        "C_BALANCE + Σ H_AMOUNT equals the Σ OL_AMOUNT of the customer's delivered lines",
        fails10,
    );
    let a12 = check(
        "A12",
        "C_BALANCE + C_YTD_PAYMENT equals the Σ OL_AMOUNT of the customer's delivered lines",
        fails12,
    );
    (a10, a12)
}

/// A11: each district has at least 2 more orders than new orders.
fn a11(st: &State) -> InvariantCheck {
    let mut fails = Vec::new();
    for &(w, d) in st.districts.keys() {
        let orders = st.orders.keys().filter(|k| k.0 == w && k.1 == d).count();
        let new = st.new_orders.get(&(w, d)).map_or(0, Vec::len);
        if orders < new + 2 {
            fails.push(format!(
                "district {d}: {orders} orders but {new} new orders"
            ));
        }
    }
    check(
        "A11",
        "each district has at least 2 more orders than new orders",
        fails,
    )
}
