//! The peak, as XProf's Memory Viewer defines it: the temporary heap at its largest
//! plus the memory held for the whole program; what is live there; and the heap along
//! the schedule.

use std::collections::HashSet;

use super::assignment::{Allocation, Assignment};
use super::chains::{Chains, ValueRef};
use super::replay::{replay, Heap, Interval};
use super::shape::is_tuple;
use super::totals::{is_indefinite, is_temp, HBM};
use crate::report::model::{Plan, TimelinePoint};

/// Points kept in the timeline, as the capture path keeps them.
const TIMELINE_POINTS: usize = 2000;
/// The capture path's words for a plan without a heap trace (kept the same, so that a
/// small module reads alike from either path).
pub const NO_TRACE: &str = "the plan has no heap-simulator trace for device memory (small modules \
have none); the peak is the memory held for the whole program";
const NO_RANGES: &str = "the dump has no live ranges (*-live-range.txt) for the temporary \
allocation: the heap peak is taken as that allocation's size, an upper bound that includes \
fragmentation, and the buffers live at the peak are not known";
const REBUILT: &str = "read from the text dump: the heap peak and the buffers live at it are \
rebuilt from each value's live range and offset (XProf replays the heap-simulator trace, which \
only a proto dump holds); the timeline has one point per scheduled instruction";

/// The memory held for the whole program: each indefinite device allocation counts
/// whole, shown by its largest value. Returns those values with their bytes.
pub fn indefinite(plan: &mut Plan, assignment: &Assignment) -> Vec<(ValueRef, u64)> {
    let mut live = Vec::new();
    for (ai, a) in assignment.allocations.iter().enumerate() {
        if a.color != HBM || !is_indefinite(a) {
            continue;
        }
        // The last of the largest, as the capture path picks it.
        let largest = a.values.iter().enumerate().max_by_key(|(_, v)| v.size);
        if let Some((vi, v)) = largest {
            plan.indefinite_bytes = plan.indefinite_bytes.saturating_add(a.size);
            live.push(((ai, vi), v.size));
        }
    }
    live
}

/// The temporary heap XProf would replay: the first device allocation that is
/// neither held for the whole program nor thread-local.
fn heap_allocation(assignment: &Assignment) -> Option<(usize, &Allocation)> {
    assignment
        .allocations
        .iter()
        .enumerate()
        .find(|(_, a)| a.color == HBM && is_temp(a))
}

/// Fills the heap peak and the timeline; returns the heap's buffers live at the peak
/// (each buffer once, named as XProf names it) with their bytes.
pub fn heap(
    plan: &mut Plan,
    assignment: &Assignment,
    chains: &Chains,
    sequence: &[String],
    caveats: &mut Vec<String>,
) -> Vec<(ValueRef, u64)> {
    let Some((ai, allocation)) = heap_allocation(assignment) else {
        caveats.push(NO_TRACE.into());
        return Vec::new();
    };
    // Tuple pointer tables are placed outside the heap simulation (no trace has them).
    let members: Vec<(ValueRef, Interval)> = (0..allocation.values.len())
        .filter_map(|vi| {
            let v = allocation.values.get(vi)?;
            let (start, end) = chains.range((ai, vi))?;
            let interval = Interval {
                offset: v.offset,
                size: v.size,
                start,
                end,
            };
            (!is_tuple(&v.shape)).then_some(((ai, vi), interval))
        })
        .collect();
    if members.is_empty() {
        plan.heap_peak_bytes = allocation.size;
        caveats.push(NO_RANGES.into());
        return Vec::new();
    }
    let intervals: Vec<Interval> = members.iter().map(|&(_, i)| i).collect();
    let heap = replay(&intervals);
    plan.has_heap_trace = true;
    plan.heap_peak_bytes = heap.peak;
    caveats.push(REBUILT.into());
    timeline(plan, &heap, sequence);
    if heap.peak == 0 {
        return Vec::new();
    }
    live_at(assignment, chains, members, heap.peak_position)
}

/// The buffers live at a position: of the values live there that share bytes (one
/// chain), the earliest, shown as XProf shows it.
fn live_at(
    assignment: &Assignment,
    chains: &Chains,
    mut members: Vec<(ValueRef, Interval)>,
    at: u64,
) -> Vec<(ValueRef, u64)> {
    members.retain(|(_, i)| i.start <= at && at <= i.end);
    members.sort_by_key(|&(v, i)| (i.start, v));
    let mut chains_seen = HashSet::new();
    let mut live = Vec::new();
    for (value, interval) in members {
        if chains
            .chain_id(value)
            .is_some_and(|c| !chains_seen.insert(c))
        {
            continue;
        }
        let shown = chains.shown_as(value);
        let bytes = assignment
            .allocations
            .get(shown.0)
            .and_then(|a| a.values.get(shown.1))
            .map_or(interval.size, |v| v.size);
        live.push((shown, bytes));
    }
    live
}

/// The heap plus the memory held for the whole program at each scheduled instruction,
/// down-sampled with a max filter so the peak survives.
fn timeline(plan: &mut Plan, heap: &Heap, sequence: &[String]) {
    let add = plan.indefinite_bytes;
    let points: Vec<(u64, String)> = if sequence.is_empty() {
        heap.changes
            .iter()
            .map(|&(_, b)| (b, String::new()))
            .collect()
    } else {
        bucketed(heap, sequence)
    };
    plan.timeline = points
        .into_iter()
        .map(|(bytes, instruction)| TimelinePoint {
            bytes: bytes.saturating_add(add),
            instruction,
        })
        .collect();
    let peak = heap.peak.saturating_add(add);
    plan.timeline_peak_index = plan
        .timeline
        .iter()
        .position(|p| p.bytes == peak)
        .unwrap_or(0);
}

/// The largest heap of each run of instructions, at most [`TIMELINE_POINTS`] runs.
fn bucketed(heap: &Heap, sequence: &[String]) -> Vec<(u64, String)> {
    let n = sequence.len();
    let width = n.div_ceil(TIMELINE_POINTS).max(1);
    let mut out = Vec::with_capacity(n.min(TIMELINE_POINTS));
    for (b, names) in sequence.chunks(width).enumerate() {
        let first = b.saturating_mul(width);
        let best = (0..names.len())
            .map(|k| (first.saturating_add(k), k))
            .map(|(p, k)| (heap.at(p as u64), k))
            .fold(None, |best: Option<(u64, usize)>, (bytes, k)| match best {
                Some((b, _)) if b >= bytes => best,
                _ => Some((bytes, k)),
            });
        if let Some((bytes, k)) = best {
            out.push((bytes, names.get(k).cloned().unwrap_or_default()));
        }
    }
    out
}
