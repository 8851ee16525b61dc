//! Delta debugging by deletion: shrinking a set while a test still fails (Zeller & Hildebrandt,
//! "Simplifying and Isolating Failure-Inducing Input", IEEE TSE 28(2), 2002, §3.4, `ddmin`).
//! The one shrinker of the crate: the strong levels' minimal explanations
//! (`ser/explain.rs`), a prediction's minimal core (`predict/anomaly_core.rs`) and the
//! transactions a reproduction runs (`reproduce/minimize.rs`) each give it their own "still
//! fails" test.
//!
//! The set is a vector of flags (`keep[i]`: element `i` is in) and an order in which to try its
//! elements. A *trial* leaves a chunk of the kept elements out and asks the test: when the rest
//! still fails, the chunk stays out; otherwise (passes, or the test cannot tell) it is put back.
//! Two plans:
//! - [`Plan::Ddmin`]: `ddmin`'s reduce-to-complement steps — chunks of half the kept elements,
//!   then of a quarter, … down to single elements, the granularity kept while a pass removes
//!   something and halved when none does — until a pass of single-element trials removes
//!   nothing: the result is *1-minimal* (leaving out any one more element makes the test pass),
//!   unless a trial could not tell. The paper's reduce-to-subset steps are not taken (the sets
//!   shrunk here fail through a few elements among many, which the complements find as well).
//! - [`Plan::OnePass`]: a single pass of single-element trials in the order given (each element
//!   tried once, against the set as it is by then); 1-minimal when the test is monotone.
//!
//! A `stop` callback, asked before each trial, ends the shrinking early (a deadline, Ctrl-C);
//! the set reached so far still fails, but is not called minimal.

/// What the test said of one candidate set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trial<T> {
    /// The candidate still fails; the value is kept as the last failing one.
    Fails(T),
    /// The candidate passes: the chunk left out is put back.
    Passes,
    /// The test could not tell: the chunk is put back and the result is not called minimal.
    Unknown,
}

/// How the shrinker proceeds (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// `ddmin`'s complement steps with halving granularity, to 1-minimality.
    Ddmin,
    /// One pass of single-element trials, in the order given.
    OnePass,
}

/// What shrinking ended with (the set itself is the caller's `keep`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shrunk<T> {
    /// The value of the last trial that failed (`None`: no trial removed anything).
    pub last_failing: Option<T>,
    /// Whether it ran to its end with every trial of the last pass decided (not stopped).
    pub minimal: bool,
}

/// Shrinks `keep` while `test` says the kept set still fails, trying the kept elements of
/// `order` (indices into `keep`; elements not in `order` are never left out) as `plan` says.
/// `stop` is asked before each trial.
pub fn shrink<T>(
    keep: &mut [bool],
    order: &[usize],
    plan: Plan,
    mut test: impl FnMut(&[bool]) -> Trial<T>,
    mut stop: impl FnMut() -> bool,
) -> Shrunk<T> {
    let mut last_failing = None;
    let mut chunk = match plan {
        Plan::Ddmin => order
            .iter()
            .filter(|&&i| keep[i])
            .count()
            .div_ceil(2)
            .max(1),
        Plan::OnePass => 1,
    };
    loop {
        let members: Vec<usize> = order.iter().copied().filter(|&i| keep[i]).collect();
        let mut removed_any = false;
        let mut undecided = false;
        for group in members.chunks(chunk) {
            if stop() {
                return Shrunk {
                    last_failing,
                    minimal: false,
                };
            }
            if group.len() == members.len() && members.len() > 1 {
                continue; // removing everything never fails
            }
            for &i in group {
                keep[i] = false;
            }
            match test(keep) {
                Trial::Fails(value) => {
                    removed_any = true;
                    last_failing = Some(value);
                }
                other => {
                    undecided |= matches!(other, Trial::Unknown);
                    for &i in group {
                        keep[i] = true;
                    }
                }
            }
        }
        if plan == Plan::OnePass || (chunk == 1 && !removed_any) {
            return Shrunk {
                last_failing,
                minimal: !undecided,
            };
        }
        if !removed_any {
            chunk = chunk.div_ceil(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test that fails while the set holds both 3 and 7 (with `unknown`, it cannot tell once
    /// 3 is left out).
    fn needs_3_and_7(unknown: bool) -> impl FnMut(&[bool]) -> Trial<usize> {
        move |keep: &[bool]| {
            if unknown && !keep[3] {
                Trial::Unknown
            } else if keep[3] && keep[7] {
                Trial::Fails(keep.iter().filter(|&&k| k).count())
            } else {
                Trial::Passes
            }
        }
    }

    #[test]
    fn ddmin_finds_the_two_elements_that_fail_together() {
        let mut keep = vec![true; 10];
        let order: Vec<usize> = (0..10).collect();
        let r = shrink(&mut keep, &order, Plan::Ddmin, needs_3_and_7(false), || {
            false
        });
        let kept: Vec<usize> = (0..10).filter(|&i| keep[i]).collect();
        assert_eq!(kept, [3, 7]);
        assert_eq!(r.last_failing, Some(2));
        assert!(r.minimal);
    }

    #[test]
    fn an_undecided_trial_is_not_minimal() {
        let mut keep = vec![true; 10];
        let order: Vec<usize> = (0..10).collect();
        let r = shrink(&mut keep, &order, Plan::Ddmin, needs_3_and_7(true), || {
            false
        });
        assert!(keep[3] && keep[7]);
        // Leaving out 3 cannot be told, so the last pass has an undecided trial.
        assert!(!r.minimal);
    }

    #[test]
    fn one_pass_tries_each_element_once_in_the_order_given() {
        let mut keep = vec![true; 10];
        let order: Vec<usize> = (0..10).rev().collect();
        let mut tried = Vec::new();
        let mut test = needs_3_and_7(false);
        let r = shrink(
            &mut keep,
            &order,
            Plan::OnePass,
            |k: &[bool]| {
                tried.push(k.iter().filter(|&&x| x).count());
                test(k)
            },
            || false,
        );
        assert_eq!(tried.len(), 10);
        let kept: Vec<usize> = (0..10).filter(|&i| keep[i]).collect();
        assert_eq!(kept, [3, 7]);
        assert!(r.minimal);
    }

    #[test]
    fn elements_outside_the_order_stay_and_a_stop_is_not_minimal() {
        let mut keep = vec![true; 10];
        let order: Vec<usize> = (1..10).collect();
        let r = shrink(
            &mut keep,
            &order,
            Plan::Ddmin,
            |_: &[bool]| Trial::Fails(()),
            || false,
        );
        // The two halves are left out one after the other: only element 0, outside the
        // order, stays.
        let kept: Vec<usize> = (0..10).filter(|&i| keep[i]).collect();
        assert_eq!(kept, [0]);
        assert!(r.minimal);
        let mut keep = vec![true; 10];
        let mut asked = 0;
        let r = shrink(&mut keep, &order, Plan::Ddmin, needs_3_and_7(false), || {
            asked += 1;
            asked > 2
        });
        assert!(!r.minimal, "stopped after two trials");
        assert_eq!(r.last_failing, None, "both halves were needed");
    }
}
