//! A solver-independent constraint store for the prediction encodings, its size measures, and
//! its translation to Z3.
//!
//! The encodings (IsoPredict PLDI'24 §4, appendix B) are generated into this store first:
//! Boolean variables, integer variables, and comparison atoms `a < b` over integer variables
//! and constants, combined by `and`/`or` trees (negation only on atoms) and one optional
//! universal quantifier over integer variables (the exact encoding, §4.2.1). Building the
//! store is linear in its size; it folds constants as it goes (so pairs that are ordered or
//! unrelated by construction never become variables), and it counts assertions and literal
//! occurrences — the paper's "# Literals" measure.
//!
//! [`Store::to_z3`] then creates one Z3 constant per variable and one Z3 term per atom (each
//! once) and asserts every assertion on a solver.

use std::ops::Range;

use rustc_hash::FxHashMap;
use z3::ast::{Bool, Int};
use z3::{Model, Solver};

/// A literal: an atom or its negation. [`Lit::TRUE`] and [`Lit::FALSE`] are the constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Lit(u32);

impl Lit {
    /// The constant true (atom 0).
    pub const TRUE: Lit = Lit(0);
    /// The constant false.
    pub const FALSE: Lit = Lit(1);

    /// The negation.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Lit {
        Lit(self.0 ^ 1)
    }

    fn atom(self) -> usize {
        (self.0 >> 1) as usize
    }

    fn negated(self) -> bool {
        self.0 & 1 == 1
    }

    /// A constant's value, `None` for a non-constant literal.
    pub fn constant(self) -> Option<bool> {
        match self {
            Lit::TRUE => Some(true),
            Lit::FALSE => Some(false),
            _ => None,
        }
    }
}

/// An integer term: a variable or a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IntTerm {
    /// The integer variable with this id.
    Var(u32),
    /// A constant.
    Const(i64),
}

/// A variable's name: a tag and up to three ids, formatted as `tag_a_b_c` for Z3.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Name {
    tag: &'static str,
    ids: [u32; 3],
    len: u8,
}

impl Name {
    pub fn new(tag: &'static str, ids: &[u32]) -> Name {
        let mut a = [0u32; 3];
        a[..ids.len()].copy_from_slice(ids);
        Name {
            tag,
            ids: a,
            len: ids.len() as u8,
        }
    }

    fn render(&self) -> String {
        let mut s = String::from(self.tag);
        for id in &self.ids[..self.len as usize] {
            s.push('_');
            s.push_str(&id.to_string());
        }
        s
    }
}

#[derive(Debug, Clone, Copy)]
enum Atom {
    True,
    Var(Name),
    Lt(IntTerm, IntTerm),
}

/// A formula: literals under `and`/`or`, or a universal quantifier over a range of integer
/// variables.
#[derive(Debug, Clone)]
pub(crate) enum F {
    Lit(Lit),
    And(Vec<F>),
    Or(Vec<F>),
    Forall { vars: Range<u32>, body: Box<F> },
}

impl F {
    fn constant(&self) -> Option<bool> {
        match self {
            F::Lit(l) => l.constant(),
            _ => None,
        }
    }

    /// Conjunction with constant folding.
    pub fn and(parts: Vec<F>) -> F {
        Self::join(parts, true)
    }

    /// Disjunction with constant folding.
    pub fn or(parts: Vec<F>) -> F {
        Self::join(parts, false)
    }

    /// Conjunction of literals.
    pub fn all(lits: &[Lit]) -> F {
        Self::and(lits.iter().map(|&l| F::Lit(l)).collect())
    }

    /// Disjunction of literals.
    pub fn any(lits: &[Lit]) -> F {
        Self::or(lits.iter().map(|&l| F::Lit(l)).collect())
    }

    fn join(parts: Vec<F>, conjunction: bool) -> F {
        // In a conjunction `true` is neutral and `false` absorbing; dually in a disjunction.
        let neutral = conjunction;
        let mut kept = Vec::with_capacity(parts.len());
        for p in parts {
            match p.constant() {
                Some(c) if c == neutral => {}
                Some(_) => return F::Lit(if neutral { Lit::FALSE } else { Lit::TRUE }),
                None => kept.push(p),
            }
        }
        match kept.len() {
            0 => F::Lit(if neutral { Lit::TRUE } else { Lit::FALSE }),
            1 => kept.pop().expect("one part"),
            _ if conjunction => F::And(kept),
            _ => F::Or(kept),
        }
    }

    fn literal_count(&self) -> u64 {
        // Iterative: formulas are shallow but may be wide.
        let mut count = 0;
        let mut stack = vec![self];
        while let Some(f) = stack.pop() {
            match f {
                F::Lit(_) => count += 1,
                F::And(ps) | F::Or(ps) => stack.extend(ps.iter()),
                F::Forall { body, .. } => stack.push(body),
            }
        }
        count
    }
}

/// Size of a generated encoding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EncodingSize {
    /// Top-level assertions.
    pub assertions: u64,
    /// Literal occurrences in all assertions (the paper's "# Literals").
    pub literals: u64,
    /// Boolean variables.
    pub bool_vars: u64,
    /// Integer variables: commit orders, ranks and the quantified positions (read choices
    /// and boundaries are Boolean here).
    pub int_vars: u64,
}

/// The constraint store.
#[derive(Debug)]
pub(crate) struct Store {
    atoms: Vec<Atom>,
    lt_atoms: FxHashMap<(IntTerm, IntTerm), u32>,
    int_names: Vec<Name>,
    assertions: Vec<F>,
    literals: u64,
    bool_vars: u64,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            atoms: vec![Atom::True],
            lt_atoms: FxHashMap::default(),
            int_names: Vec::new(),
            assertions: Vec::new(),
            literals: 0,
            bool_vars: 0,
        }
    }
}

impl Store {
    /// A fresh Boolean variable.
    pub fn bool_var(&mut self, name: Name) -> Lit {
        let id = self.atoms.len() as u32;
        self.atoms.push(Atom::Var(name));
        self.bool_vars += 1;
        Lit(id << 1)
    }

    /// A fresh integer variable.
    pub fn int_var(&mut self, name: Name) -> IntTerm {
        let id = self.int_names.len() as u32;
        self.int_names.push(name);
        IntTerm::Var(id)
    }

    /// The id the next integer variable will get (for quantifier ranges).
    pub fn next_int_id(&self) -> u32 {
        self.int_names.len() as u32
    }

    /// The literal `a < b` (interned; folded when both are constants or the same term).
    pub fn lt(&mut self, a: IntTerm, b: IntTerm) -> Lit {
        match (a, b) {
            (IntTerm::Const(x), IntTerm::Const(y)) => {
                return if x < y { Lit::TRUE } else { Lit::FALSE }
            }
            _ if a == b => return Lit::FALSE,
            _ => {}
        }
        if let Some(&id) = self.lt_atoms.get(&(a, b)) {
            return Lit(id << 1);
        }
        let id = self.atoms.len() as u32;
        self.atoms.push(Atom::Lt(a, b));
        self.lt_atoms.insert((a, b), id);
        Lit(id << 1)
    }

    /// The literal `a ≤ b`, as `¬(b < a)`.
    pub fn le(&mut self, a: IntTerm, b: IntTerm) -> Lit {
        self.lt(b, a).not()
    }

    /// Asserts a formula (`true` is dropped).
    pub fn assert(&mut self, f: F) {
        if f.constant() == Some(true) {
            return;
        }
        self.literals += f.literal_count();
        self.assertions.push(f);
    }

    /// Asserts the clause `l1 ∨ l2 ∨ …`.
    pub fn clause(&mut self, lits: &[Lit]) {
        self.assert(F::any(lits));
    }

    /// Asserts `premises ⇒ conclusion` (premises conjoined) as a clause.
    pub fn implies(&mut self, premises: &[Lit], conclusion: Lit) {
        let mut lits: Vec<Lit> = premises.iter().map(|l| l.not()).collect();
        lits.push(conclusion);
        self.clause(&lits);
    }

    /// A literal equivalent to the conjunction of `lits`: a constant or single literal when
    /// folding allows, else a fresh variable defined by both implications.
    pub fn and_lit(&mut self, name: Name, lits: &[Lit]) -> Lit {
        let mut kept: Vec<Lit> = Vec::with_capacity(lits.len());
        for &l in lits {
            match l.constant() {
                Some(true) => {}
                Some(false) => return Lit::FALSE,
                None => kept.push(l),
            }
        }
        kept.sort_unstable();
        kept.dedup();
        match kept.len() {
            0 => Lit::TRUE,
            1 => kept[0],
            _ => {
                let v = self.bool_var(name);
                for &l in &kept {
                    self.implies(&[v], l);
                }
                self.implies(&kept, v);
                v
            }
        }
    }

    /// A literal equivalent to the disjunction of `lits` (dual of [`Store::and_lit`]).
    pub fn or_lit(&mut self, name: Name, lits: &[Lit]) -> Lit {
        let negated: Vec<Lit> = lits.iter().map(|l| l.not()).collect();
        self.and_lit(name, &negated).not()
    }

    /// Sizes so far.
    pub fn size(&self) -> EncodingSize {
        EncodingSize {
            assertions: self.assertions.len() as u64,
            literals: self.literals,
            bool_vars: self.bool_vars,
            int_vars: self.int_names.len() as u64,
        }
    }

    /// Creates the Z3 terms of everything generated so far and asserts it on `solver`.
    pub fn to_z3(&self, solver: &Solver) -> Z3Terms {
        let mut terms = Z3Terms {
            atoms: Vec::new(),
            ints: Vec::new(),
            asserted: 0,
        };
        terms.sync(self, solver);
        terms
    }
}

/// The Z3 terms of a [`Store`]: read a model through them.
pub(crate) struct Z3Terms {
    atoms: Vec<Option<Bool>>,
    ints: Vec<Int>,
    asserted: usize,
}

impl Z3Terms {
    /// Creates the terms of what `store` generated since the last call and asserts it.
    pub fn sync(&mut self, store: &Store, solver: &Solver) {
        self.atoms.resize(store.atoms.len(), None);
        for name in &store.int_names[self.ints.len()..] {
            self.ints.push(Int::new_const(name.render()));
        }
        for f in &store.assertions[self.asserted..] {
            let b = self.formula(&store.atoms, f);
            solver.assert(&b);
        }
        self.asserted = store.assertions.len();
    }

    fn int(&self, t: IntTerm) -> Int {
        match t {
            IntTerm::Var(v) => self.ints[v as usize].clone(),
            IntTerm::Const(c) => Int::from_i64(c),
        }
    }

    fn atom(&mut self, atoms: &[Atom], a: usize) -> Bool {
        if let Some(b) = &self.atoms[a] {
            return b.clone();
        }
        let b = match atoms[a] {
            Atom::True => Bool::from_bool(true),
            Atom::Var(name) => Bool::new_const(name.render()),
            Atom::Lt(x, y) => self.int(x).lt(self.int(y)),
        };
        self.atoms[a] = Some(b.clone());
        b
    }

    fn lit(&mut self, atoms: &[Atom], l: Lit) -> Bool {
        let b = self.atom(atoms, l.atom());
        if l.negated() {
            b.not()
        } else {
            b
        }
    }

    fn formula(&mut self, atoms: &[Atom], f: &F) -> Bool {
        match f {
            F::Lit(l) => self.lit(atoms, *l),
            F::And(ps) => {
                let parts: Vec<Bool> = ps.iter().map(|p| self.formula(atoms, p)).collect();
                Bool::and(&parts)
            }
            F::Or(ps) => {
                let parts: Vec<Bool> = ps.iter().map(|p| self.formula(atoms, p)).collect();
                Bool::or(&parts)
            }
            F::Forall { vars, body } => {
                let body = self.formula(atoms, body);
                let bound: Vec<&dyn z3::ast::Ast> = self.ints
                    [vars.start as usize..vars.end as usize]
                    .iter()
                    .map(|i| i as &dyn z3::ast::Ast)
                    .collect();
                z3::ast::forall_const(&bound, &[], &body)
            }
        }
    }

    /// A literal's value in `model` (unconstrained atoms read as false); `None` when Z3 gave
    /// no value: it was interrupted (deadline, memory watchdog, Ctrl-C) while evaluating.
    pub fn value(&self, model: &Model, l: Lit) -> Option<bool> {
        if let Some(c) = l.constant() {
            return Some(c);
        }
        let v = match &self.atoms[l.atom()] {
            Some(b) => model.eval(b, true).and_then(|v| v.as_bool())?,
            None => false, // never asserted: unconstrained
        };
        Some(v != l.negated())
    }

    /// The Z3 term of a literal whose atom was asserted somewhere (for blocking clauses).
    pub fn term(&self, l: Lit) -> Option<Bool> {
        if let Some(c) = l.constant() {
            return Some(Bool::from_bool(c));
        }
        let b = self.atoms[l.atom()].clone()?;
        Some(if l.negated() { b.not() } else { b })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::SatResult;

    #[test]
    fn folding_and_counting() {
        let mut s = Store::default();
        let a = s.bool_var(Name::new("a", &[]));
        let b = s.bool_var(Name::new("b", &[1, 2]));
        assert_eq!(F::all(&[a, Lit::TRUE]).constant(), None);
        assert_eq!(F::all(&[a, Lit::FALSE]).constant(), Some(false));
        assert_eq!(F::any(&[a, Lit::TRUE]).constant(), Some(true));
        assert_eq!(F::any(&[]).constant(), Some(false));
        s.clause(&[a, b.not()]);
        s.clause(&[Lit::TRUE, a]); // dropped
        s.assert(F::or(vec![F::all(&[a, b]), F::Lit(b.not())]));
        let size = s.size();
        assert_eq!((size.assertions, size.literals, size.bool_vars), (2, 5, 2));
        assert_eq!(Name::new("b", &[1, 2]).render(), "b_1_2");
    }

    #[test]
    fn lt_atoms_are_interned_and_folded() {
        let mut s = Store::default();
        let x = s.int_var(Name::new("x", &[]));
        let y = s.int_var(Name::new("y", &[]));
        assert_eq!(s.lt(x, y), s.lt(x, y));
        assert_ne!(s.lt(x, y), s.lt(y, x));
        assert_eq!(s.lt(x, x), Lit::FALSE);
        assert_eq!(s.lt(IntTerm::Const(1), IntTerm::Const(2)), Lit::TRUE);
        assert_eq!(s.le(x, y), s.lt(y, x).not());
    }

    #[test]
    fn and_lit_defines_a_conjunction() {
        let mut s = Store::default();
        let a = s.bool_var(Name::new("a", &[]));
        let b = s.bool_var(Name::new("b", &[]));
        assert_eq!(s.and_lit(Name::new("c", &[]), &[a, Lit::TRUE]), a);
        assert_eq!(s.and_lit(Name::new("c", &[]), &[a, Lit::FALSE]), Lit::FALSE);
        let c = s.and_lit(Name::new("c", &[]), &[a, b]);
        let d = s.or_lit(Name::new("d", &[]), &[a, b]);
        s.clause(&[c.not()]);
        s.clause(&[a]);
        s.clause(&[d]);
        let solver = Solver::new();
        let terms = s.to_z3(&solver);
        assert_eq!(solver.check(), SatResult::Sat);
        let m = solver.get_model().unwrap();
        assert_eq!(terms.value(&m, a), Some(true));
        assert_eq!(terms.value(&m, b), Some(false));
        assert_eq!(terms.value(&m, c), Some(false));
        assert_eq!(terms.value(&m, d), Some(true));
    }

    #[test]
    fn forall_over_integers() {
        // ∀x. x < y ∨ y ≤ x is valid; ∀x. x < y is not.
        let mut s = Store::default();
        let y = s.int_var(Name::new("y", &[]));
        let start = s.next_int_id();
        let x = s.int_var(Name::new("x", &[]));
        let lt = s.lt(x, y);
        let ge = s.le(y, x);
        s.assert(F::Forall {
            vars: start..start + 1,
            body: Box::new(F::any(&[lt, ge])),
        });
        let solver = Solver::new();
        s.to_z3(&solver);
        assert_eq!(solver.check(), SatResult::Sat);
        s.assert(F::Forall {
            vars: start..start + 1,
            body: Box::new(F::Lit(lt)),
        });
        let solver = Solver::new();
        s.to_z3(&solver);
        assert_eq!(solver.check(), SatResult::Unsat);
    }
}
