//! A stop request (what Ctrl-C does, `isopredict::interrupt`) interrupts the Z3 call in flight
//! and refuses later ones. In a test binary of its own: the request is process-wide and is
//! never withdrawn, so it would make every other solver call in the process give up.

use std::time::Duration;

use isopredict::interrupt::{self, Interrupted};
use z3::ast::Bool;
use z3::{SatResult, Solver};

/// n + 1 pigeons in n holes: unsatisfiable, and hard for a SAT solver (Z3 took 13.7 s at
/// n = 10 on this loaded 2-core machine).
fn pigeonhole(solver: &Solver, n: usize) {
    let p: Vec<Vec<Bool>> = (0..=n)
        .map(|i| {
            (0..n)
                .map(|j| Bool::new_const(format!("p{i}_{j}")))
                .collect()
        })
        .collect();
    for row in &p {
        let row: Vec<&Bool> = row.iter().collect();
        solver.assert(Bool::or(&row));
    }
    for (a, first) in p.iter().enumerate() {
        for second in &p[a + 1..] {
            for (x, y) in first.iter().zip(second) {
                solver.assert(Bool::and(&[x, y]).not());
            }
        }
    }
}

#[test]
fn a_stop_request_interrupts_the_call_in_flight_and_refuses_later_ones() {
    assert!(!interrupt::requested());
    assert_eq!(interrupt::stop_point(), Ok(()));
    let solver = Solver::new();
    pigeonhole(&solver, 10);
    let requester = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(300));
        interrupt::request();
    });
    let result = interrupt::check(&solver, |s| s.check());
    requester.join().unwrap();
    // Pigeonhole 11/10 is unsatisfiable (Z3 needs many seconds to say so): unknown means the
    // request stopped the call (or refused it, had it come first).
    assert_eq!(result, SatResult::Unknown);
    // A call after the request is not made, however easy.
    let easy = Solver::new();
    easy.assert(Bool::from_bool(true));
    assert_eq!(interrupt::check(&easy, |s| s.check()), SatResult::Unknown);
    assert_eq!(interrupt::stop_point(), Err(Interrupted));
}
