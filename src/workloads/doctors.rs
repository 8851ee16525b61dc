//! Doctors on call: the classic write skew (Berenson et al., SIGMOD'95, A5B; the "on-call"
//! example of Cahill, Röhm & Fekete, SIGMOD'08, and of PostgreSQL's own isolation suite,
//! src/test/isolation/specs/*write-skew*; notes/isolationtester.md).
//!
//! Schema: DOCTORS(id PK, name, on_call) with `on_call` 1 or 0. Initial data: two doctors,
//! 1 "Alice" and 2 "Bob", both on call. Procedures: GoOffCall(doctor) 60 — count the doctors
//! on call (`SELECT … WHERE on_call = 1`, which reads every doctor's flag); when at least two
//! are, take `doctor` off call, else roll back (the rule that keeps someone on call) — and
//! GoOnCall(doctor) 40 — read the doctor's flag and put them back on call when off. Each
//! call's doctor is drawn uniformly by its terminal's generator (`Random(terminal)`, as
//! Smallbank draws its customers); procedure types come from the seed as in every workload.
//!
//! In a serial run the rule holds; under snapshot isolation (PostgreSQL's REPEATABLE READ)
//! two GoOffCall calls for different doctors that both count two on call can both commit —
//! each writes only its own doctor's row, so first-updater-wins does not stop them — and no
//! doctor is left on call: the write skew.
//!
//! Invariant D1: at least one doctor is on call.

use crate::store::{Assign, Loader, Outcome, Pred, Projection, Snapshot, Table, Tx, Value};

use super::distributions::Flat;
use super::java_random::JavaRandom;
use super::{InvariantCheck, Procedure, Step, Terminal, Workload};

/// The doctors: (id, name).
pub const DOCTORS: [(i64, &str); 2] = [(1, "Alice"), (2, "Bob")];

const PROCEDURES: &[Procedure] = &[
    Procedure {
        name: "GoOffCall",
        weight: 60,
    },
    Procedure {
        name: "GoOnCall",
        weight: 40,
    },
];

fn doctors() -> Table {
    Table::new("DOCTORS", &["id", "name", "on_call"], Some(&["id"]))
}

/// The on-call workload (`doctors` on the command line).
#[derive(Debug, Clone, Copy, Default)]
pub struct Doctors;

impl Workload for Doctors {
    fn name(&self) -> &'static str {
        "doctors"
    }

    fn procedures(&self) -> &'static [Procedure] {
        PROCEDURES
    }

    fn first_session(&self) -> u64 {
        1
    }

    fn load(&self, loader: &mut Loader<'_>) {
        let t = doctors();
        t.create(loader);
        for (id, name) in DOCTORS {
            t.insert(
                loader,
                &[
                    ("id", Value::Int(id)),
                    ("name", Value::from(name.to_string())),
                    ("on_call", Value::Int(1)),
                ],
            );
        }
    }

    fn terminal(&self, id: usize) -> Box<dyn Terminal> {
        Box::new(DoctorsTerminal {
            table: doctors(),
            rng: JavaRandom::new(id as i64),
            flat: Flat::new(0, DOCTORS.len() as i64),
            parameters: String::new(),
        })
    }

    fn tables(&self) -> Vec<Table> {
        vec![doctors()]
    }

    fn invariants(&self, state: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
        let on_call = doctors()
            .select(
                state,
                Projection::Columns(&["name"]),
                &Pred::eq("on_call", 1),
            )
            .len();
        let holds = on_call >= 1;
        vec![InvariantCheck {
            id: "D1",
            description: "at least one doctor is on call",
            holds,
            detail: if holds {
                String::new()
            } else {
                "no doctor is on call".to_string()
            },
        }]
    }
}

struct DoctorsTerminal {
    table: Table,
    rng: JavaRandom,
    flat: Flat,
    parameters: String,
}

impl DoctorsTerminal {
    /// Draws the call's doctor.
    fn doctor(&mut self) -> i64 {
        let (id, name) = DOCTORS[self.flat.next_long(&mut self.rng) as usize];
        self.parameters = format!("doctor={id} ({name})");
        id
    }

    fn go_off_call(&mut self, tx: &mut Tx<'_>) -> Step {
        let doctor = self.doctor();
        let on_call = self
            .table
            .select(tx, Projection::Columns(&["id"]), &Pred::eq("on_call", 1))
            .len();
        if on_call < 2 {
            return Step::Done(Outcome::Rollback);
        }
        self.table.update(
            tx,
            &[Assign::set("on_call", Value::Int(0))],
            &Pred::eq("id", doctor),
        );
        Step::Done(Outcome::Commit)
    }

    fn go_on_call(&mut self, tx: &mut Tx<'_>) -> Step {
        let doctor = self.doctor();
        let flag = self
            .table
            .select(
                tx,
                Projection::Columns(&["on_call"]),
                &Pred::eq("id", doctor),
            )
            .first()
            .and_then(|r| r[0].as_i64());
        match flag {
            Some(0) => {
                self.table.update(
                    tx,
                    &[Assign::set("on_call", Value::Int(1))],
                    &Pred::eq("id", doctor),
                );
                Step::Done(Outcome::Commit)
            }
            Some(_) => Step::Done(Outcome::Commit),
            None => Step::Done(Outcome::Rollback),
        }
    }
}

impl Terminal for DoctorsTerminal {
    fn run(&mut self, procedure: usize, _step: u32, tx: &mut Tx<'_>) -> Step {
        match procedure {
            0 => self.go_off_call(tx),
            _ => self.go_on_call(tx),
        }
    }

    fn parameters(&self) -> Option<String> {
        Some(self.parameters.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::{run, RunConfig, Size};

    #[test]
    fn a_serial_run_keeps_a_doctor_on_call() {
        for seed in 1..=10 {
            let r = run(&Doctors, &RunConfig::paper(seed, Size::Large)).unwrap();
            assert!(r.invariants_hold(), "seed {seed}: {:?}", r.invariants);
            let off = r.calls.iter().find(|c| c.0 == "GoOffCall").unwrap();
            assert!(off.1 + off.2 > 0, "seed {seed} makes GoOffCall calls");
        }
    }
}
