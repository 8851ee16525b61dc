//! The checkers' parallel saturation passes (rc per reading transaction, ra per session): the
//! items are cut into tasks of consecutive items run on rayon's threads, each with a pooled
//! scratch ([`super::scratch`]), and the tasks' edges are appended in item order.

use std::ops::Range;

use rayon::prelude::*;

use super::graph::EdgeList;
use super::scratch::ScratchPool;

/// Runs `each(item, scratch, edges)` for every item of `items` in parallel tasks of
/// `per_task` consecutive items (at least one), each task with a pooled scratch (made by
/// `make` when none is free), and appends the tasks' edges to `out` in item order: the edges,
/// and their order, are those of one pass over all items, whatever `per_task`.
pub(crate) fn edges_in_parallel<S: Send>(
    items: Range<usize>,
    per_task: usize,
    make: impl Fn() -> S + Sync,
    each: impl Fn(usize, &mut S, &mut EdgeList) + Sync,
    out: &mut EdgeList,
) {
    let per_task = per_task.max(1);
    let end = items.end;
    let starts: Vec<usize> = items.step_by(per_task).collect();
    let pool = ScratchPool::new();
    let parts: Vec<EdgeList> = starts
        .par_iter()
        .map(|&start| {
            pool.with(&make, |scratch| {
                let mut part = EdgeList::default();
                for item in start..start.saturating_add(per_task).min(end) {
                    each(item, scratch, &mut part);
                }
                part
            })
        })
        .collect();
    for part in parts {
        out.append(part);
    }
}
