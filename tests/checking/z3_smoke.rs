//! Smoke test: the system libz3 links and answers through the `z3` crate.

use z3::ast::Int;
use z3::{SatResult, Solver};

#[test]
fn z3_solves_a_tiny_order() {
    // Three positions, pairwise distinct, in a chain a < b < c within 0..3.
    let solver = Solver::new();
    let a = Int::new_const("a");
    let b = Int::new_const("b");
    let c = Int::new_const("c");
    solver.assert(a.lt(&b));
    solver.assert(b.lt(&c));
    solver.assert(a.ge(0));
    solver.assert(c.lt(3));
    assert_eq!(solver.check(), SatResult::Sat);
    let model = solver.get_model().unwrap();
    assert_eq!(model.eval(&b, true).unwrap().as_i64(), Some(1));
    // And a contradiction is unsat.
    solver.assert(c.lt(&a));
    assert_eq!(solver.check(), SatResult::Unsat);
}
