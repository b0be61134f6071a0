//! Plan analysis: every module's compiled memory plan, from the HloProtos in the
//! `/host:metadata` plane — the totals `memory_analysis()` reports, the heap replay
//! XProf's Memory Viewer does, and what is live at the peak and why.
//!
//! The HloProto comes from the file: sizes may be negative or huge, ids may point
//! nowhere, traces may free twice or share in a cycle. Nothing here may panic on that
//! (the lints below); sums saturate.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

pub mod index;
mod live;
pub mod replay;
pub mod roles;
pub mod shape;

use std::collections::{HashMap, HashSet};

use prost::Message;

use crate::capture::{Plane, StatValue};
use crate::proto::xla::{BufferAllocationProto, HloProto};
use crate::report::model::{Category, Plan, TimelinePoint};
use crate::source::ByteSource;
use index::{op_name, HloIndex};
use replay::BufferSizes;

/// The plane holding one HloProto per module.
pub const METADATA_PLANE: &str = "/host:metadata";
/// Memory color XProf shows by default: device HBM.
const HBM: i64 = 0;
/// The host memory space (`S(5)`), reported apart from device memory.
const HOST_MEMORY_SPACE: i64 = 5;
/// Points kept in a module's program-order timeline.
const TIMELINE_POINTS: usize = 2000;
/// Buffers listed at the peak (the rest are summed into the totals only).
const LIVE_BUFFERS_KEPT: usize = 200;
/// No device holds a petabyte: a size above this (or below zero) means a corrupt plan.
const IMPOSSIBLE_BYTES: i64 = 1 << 50;
const IMPOSSIBLE_TEXT: &str = "the plan holds sizes no device has (negative, or above 1 PiB): \
its HloProto is corrupt and these figures are not meaningful";

/// A module's HloProto as found in the capture, not yet decoded.
#[derive(Debug, Clone)]
pub struct ModuleEntry {
    /// `name(program_id)` as the capture names it.
    pub label: String,
    pub program_id: u64,
    hlo: HloLocation,
}

#[derive(Debug, Clone)]
enum HloLocation {
    InFile { offset: u64, len: u64 },
    Inline(Box<[u8]>),
}

/// Finds every module plan in the capture's metadata planes (both layouts: program
/// id as the metadata id, or as a `program_id` stat).
pub fn find_modules(planes: &[Plane]) -> Vec<ModuleEntry> {
    let mut entries = Vec::new();
    for plane in planes.iter().filter(|p| p.name == METADATA_PLANE) {
        let Some(hlo_stat) = plane.stat_id("Hlo Proto") else {
            continue;
        };
        let program_id_stat = plane.stat_id("program_id");
        let mut metas: Vec<_> = plane.event_metadata.values().collect();
        metas.sort_by_key(|m| m.id);
        for meta in metas {
            let Some(hlo) = meta.stats.iter().find(|s| s.metadata_id == hlo_stat) else {
                continue;
            };
            let hlo = match &hlo.value {
                StatValue::BytesAt { offset, len } => HloLocation::InFile {
                    offset: *offset,
                    len: *len,
                },
                StatValue::Bytes(b) => HloLocation::Inline(b.clone()),
                _ => continue,
            };
            let program_id = program_id_stat
                .and_then(|id| meta.stats.iter().find(|s| s.metadata_id == id))
                .and_then(|s| s.value.as_ref())
                .and_then(|v| v.as_u64())
                .unwrap_or(meta.id as u64);
            let label = if meta.display_name.is_empty() {
                meta.name.clone()
            } else {
                meta.display_name.clone()
            };
            entries.push(ModuleEntry {
                label,
                program_id,
                hlo,
            });
        }
    }
    entries
}

impl ModuleEntry {
    /// Reads and decodes the module's HloProto.
    pub fn decode(&self, src: &dyn ByteSource) -> Result<HloProto, String> {
        let decoded = match &self.hlo {
            HloLocation::Inline(bytes) => HloProto::decode(&bytes[..]),
            HloLocation::InFile { offset, len } => {
                let bytes =
                    crate::wire::read_payload(src, *offset, *len).map_err(|e| e.to_string())?;
                HloProto::decode(&bytes[..])
            }
        };
        decoded.map_err(|e| format!("its HloProto does not decode ({e})"))
    }
}

/// Whether an allocation lives for the whole program and counts toward its memory
/// (XLA's indefinite allocations, which XProf adds to every point of the heap).
/// Thread-local allocations live on stacks: XLA's totals leave them out.
fn is_indefinite(a: &BufferAllocationProto) -> bool {
    !a.is_thread_local && (a.is_entry_computation_parameter || a.is_constant || a.maybe_live_out)
}

/// Allocations that no heap trace covers: XProf's trace choice skips them too.
fn is_outside_heap(a: &BufferAllocationProto) -> bool {
    a.is_thread_local || is_indefinite(a)
}

/// XLA's `IsPreallocatedTempBuffer`.
fn is_temp(a: &BufferAllocationProto) -> bool {
    !a.is_entry_computation_parameter && !a.maybe_live_out && !a.is_thread_local && !a.is_constant
}

fn category(a: &BufferAllocationProto) -> Category {
    if a.is_entry_computation_parameter {
        Category::Parameter
    } else if a.maybe_live_out {
        Category::Output
    } else if a.is_thread_local {
        Category::ThreadLocal
    } else if a.is_constant {
        Category::Constant
    } else {
        Category::Temporary
    }
}

/// Analyzes one module's plan.
pub fn analyze(hlo: &HloProto) -> Plan {
    let mut plan = Plan::default();
    let (Some(module), Some(assignment)) =
        (hlo.hlo_module.as_ref(), hlo.buffer_assignment.as_ref())
    else {
        plan.replay_note = Some("the module has no buffer assignment in the capture".into());
        return plan;
    };
    let index = HloIndex::new(module, assignment);
    add_totals(&mut plan, &index, &donated_parameters(module));
    let sizes = |id: i64| {
        index.buffer(id).map(|b| BufferSizes {
            padded: u64::try_from(b.size).unwrap_or(0),
            unpadded: index.unpadded_size(b),
        })
    };
    let mut live = held_for_the_program(&mut plan, &index);
    live.extend(replay_heap(&mut plan, &index, &sizes));
    plan.peak_bytes = plan.heap_peak_bytes.saturating_add(plan.indefinite_bytes);
    live::describe(&mut plan, &index, &live);
    plan.remat_instructions = index
        .instructions()
        .filter(|i| i.name.contains(".remat"))
        .count() as u64;
    plan.host_callbacks = host_callbacks(&index);
    if has_impossible_sizes(assignment) {
        plan.replay_note = Some(match plan.replay_note.take() {
            Some(note) => format!("{IMPOSSIBLE_TEXT}; {note}"),
            None => IMPOSSIBLE_TEXT.into(),
        });
    }
    plan
}

/// The totals, as PjRt's compiled memory stats compute them.
fn add_totals(plan: &mut Plan, index: &HloIndex<'_>, donated: &HashSet<(i64, Vec<i64>)>) {
    for a in &index.assignment.buffer_allocations {
        let size = u64::try_from(a.size).unwrap_or(0);
        // XLA's ComputeTotalAllocationBytes (which XProf shows) leaves out thread-local
        // allocations, which live on stacks rather than in device memory.
        if a.color == HBM && !a.is_thread_local {
            plan.allocation_bytes = plan.allocation_bytes.saturating_add(size);
        }
        let host = index.allocation_memory_space(a) == HOST_MEMORY_SPACE;
        let aliased = a.is_parameter_aliased_with_output
            || (a.is_entry_computation_parameter
                && donated.contains(&(a.parameter_number, a.parameter_shape_index.clone())));
        if a.is_entry_computation_parameter {
            add_parameter(plan, size, host, aliased);
        }
        if a.maybe_live_out {
            if host {
                plan.host_output_bytes = plan.host_output_bytes.saturating_add(size);
            } else {
                plan.output_bytes = plan.output_bytes.saturating_add(size);
                if !a.is_entry_computation_parameter {
                    plan.non_aliased_output_bytes =
                        plan.non_aliased_output_bytes.saturating_add(size);
                }
            }
        }
        if is_temp(a) {
            if host {
                plan.host_temp_bytes = plan.host_temp_bytes.saturating_add(size);
            } else {
                plan.temp_bytes = plan.temp_bytes.saturating_add(size);
            }
        }
    }
    // In u128 so that a saturated part does not cancel against the aliased bytes.
    let total = u128::from(plan.argument_bytes)
        .saturating_add(u128::from(plan.output_bytes))
        .saturating_add(u128::from(plan.temp_bytes))
        .saturating_sub(u128::from(plan.alias_bytes));
    plan.total_bytes = u64::try_from(total).unwrap_or(u64::MAX);
}

fn add_parameter(plan: &mut Plan, size: u64, host: bool, aliased: bool) {
    if host {
        plan.host_argument_bytes = plan.host_argument_bytes.saturating_add(size);
        return;
    }
    plan.argument_bytes = plan.argument_bytes.saturating_add(size);
    plan.parameter_count = plan.parameter_count.saturating_add(1);
    plan.parameter_bytes = plan.parameter_bytes.saturating_add(size);
    if aliased {
        plan.alias_bytes = plan.alias_bytes.saturating_add(size);
        plan.donated_parameter_count = plan.donated_parameter_count.saturating_add(1);
        plan.donated_bytes = plan.donated_bytes.saturating_add(size);
    }
}

/// Memory held for the whole program, counted at allocation size (as XProf's memory
/// viewer does, see `docs/memory-viewer.md`): adds it to `indefinite_bytes` and returns
/// each allocation's largest buffer, `(buffer id, bytes shown)`.
fn held_for_the_program(plan: &mut Plan, index: &HloIndex<'_>) -> Vec<(i64, u64)> {
    let mut live = Vec::new();
    for a in index
        .assignment
        .buffer_allocations
        .iter()
        .filter(|a| a.color == HBM && is_indefinite(a))
    {
        let largest = a
            .assigned
            .iter()
            .filter_map(|x| index.buffer(x.logical_buffer_id))
            .max_by_key(|b| b.size);
        if let Some(buffer) = largest {
            plan.indefinite_bytes = plan.indefinite_bytes.saturating_add(a.size.max(0) as u64);
            live.push((buffer.id, u64::try_from(buffer.size).unwrap_or(0)));
        }
    }
    live
}

/// Replays the heap trace XProf would pick: sets the heap peak and the timeline, and
/// returns the buffers live at the peak, `(buffer id, bytes)`.
fn replay_heap(
    plan: &mut Plan,
    index: &HloIndex<'_>,
    sizes: &dyn Fn(i64) -> Option<BufferSizes>,
) -> Vec<(i64, u64)> {
    let Some(trace) = choose_trace(index) else {
        plan.replay_note = Some(
            "the plan has no heap-simulator trace for device memory (small modules have none); \
             the peak is the memory held for the whole program"
                .into(),
        );
        return Vec::new();
    };
    plan.has_heap_trace = true;
    let r = replay::replay(trace, sizes);
    plan.heap_peak_bytes = r.peak;
    plan.timeline = downsample(
        &r.heap,
        &r.instructions,
        r.peak_index,
        plan.indefinite_bytes,
    );
    plan.timeline_peak_index = plan
        .timeline
        .iter()
        .position(|p| p.bytes == r.peak.saturating_add(plan.indefinite_bytes))
        .unwrap_or(0);
    if !r.problems.is_empty() {
        plan.replay_note = Some(format!(
            "the heap trace is inconsistent: {}",
            r.problems.join("; ")
        ));
    }
    r.live_at_peak
        .iter()
        .map(|&id| (id, sizes(id).map(|s| s.padded).unwrap_or(0)))
        .collect()
}

/// Host callbacks compiled into the module (a leftover `jax.debug.print`), each with
/// its op_name when it has one.
fn host_callbacks(index: &HloIndex<'_>) -> Vec<String> {
    let mut callbacks: Vec<String> = index
        .instructions()
        .filter(|i| i.opcode == "custom-call" && i.custom_call_target.contains("callback"))
        .map(|i| {
            let op = op_name(i);
            if op.is_empty() {
                i.custom_call_target.clone()
            } else {
                format!("{} ({})", i.custom_call_target, op)
            }
        })
        .collect();
    callbacks.sort();
    callbacks.dedup();
    callbacks
}

fn has_impossible_sizes(assignment: &crate::proto::xla::BufferAssignmentProto) -> bool {
    let impossible = |size: i64| !(0..=IMPOSSIBLE_BYTES).contains(&size);
    assignment
        .buffer_allocations
        .iter()
        .any(|a| impossible(a.size))
        || assignment
            .logical_buffers
            .iter()
            .any(|b| impossible(b.size))
}

/// `(parameter number, shape index)` of every donated parameter, from the module's
/// input/output alias config (older captures lack `is_parameter_aliased_with_output`).
fn donated_parameters(module: &crate::proto::xla::HloModuleProto) -> HashSet<(i64, Vec<i64>)> {
    module
        .input_output_alias
        .as_ref()
        .map(|a| {
            a.entries
                .iter()
                .map(|e| (e.parameter_number, e.parameter_shape_index.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// XProf's choice: the trace owned by the first non-indefinite HBM allocation, else the
/// longest trace whose first buffer is in HBM.
fn choose_trace<'a>(index: &HloIndex<'a>) -> Option<&'a crate::proto::xla::HeapSimulatorTrace> {
    let traces = &index.assignment.heap_simulator_traces;
    let owner = |t: &crate::proto::xla::HeapSimulatorTrace| {
        t.events
            .first()
            .and_then(|e| index.allocation_index_of(e.buffer_id))
    };
    let mut owned: HashMap<usize, usize> = HashMap::new();
    for (i, t) in traces.iter().enumerate() {
        if let Some(a) = owner(t) {
            owned.entry(a).or_insert(i);
        }
    }
    for (ai, a) in index.assignment.buffer_allocations.iter().enumerate() {
        if a.color == HBM && !is_outside_heap(a) {
            if let Some(&ti) = owned.get(&ai) {
                return traces.get(ti);
            }
        }
    }
    traces
        .iter()
        .filter(|t| {
            t.events
                .first()
                .and_then(|e| index.buffer(e.buffer_id))
                .map(|b| b.color == HBM)
                .unwrap_or(false)
        })
        .max_by_key(|t| t.events.len())
}

/// Keeps at most [`TIMELINE_POINTS`] points with a max filter, so the peak survives.
fn downsample(heap: &[u64], names: &[String], peak_index: usize, add: u64) -> Vec<TimelinePoint> {
    let n = heap.len();
    if n == 0 {
        return Vec::new();
    }
    let width = n.div_ceil(TIMELINE_POINTS).max(1);
    let mut out = Vec::with_capacity(TIMELINE_POINTS.min(n));
    let mut start = 0;
    while start < n {
        let end = start.saturating_add(width).min(n);
        // Inside the peak's bucket, prefer the point just after the peak's event.
        let after_peak = peak_index.saturating_add(1);
        let best = if (start..end).contains(&after_peak) {
            after_peak
        } else {
            (start..end)
                .max_by_key(|&i| heap.get(i).copied().unwrap_or(0))
                .unwrap_or(start)
        };
        let instruction = names
            .get(best.saturating_sub(1))
            .cloned()
            .unwrap_or_default();
        out.push(TimelinePoint {
            bytes: heap.get(best).copied().unwrap_or(0).saturating_add(add),
            instruction,
        });
        start = end;
    }
    out
}
