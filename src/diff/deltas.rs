//! The figures of two runs side by side: plan deltas, the buffers and scan stacks
//! matched across the runs, and the runtime figures when both runs have them.

use super::matching;
use super::model::{
    signed_delta, BufferChange, Change, Figures, PlanDelta, RolesDelta, RuntimeDelta,
    ScanStackChange,
};
use crate::report::model::{AllocatorSummary, LiveBuffer, Plan, Runtime, ScanStack};

/// after − before of every plan figure.
pub fn plan(before: &Plan, after: &Plan) -> PlanDelta {
    let d = signed_delta;
    let (rb, ra) = (before.roles_at_peak, after.roles_at_peak);
    PlanDelta {
        argument_bytes: d(before.argument_bytes, after.argument_bytes),
        output_bytes: d(before.output_bytes, after.output_bytes),
        alias_bytes: d(before.alias_bytes, after.alias_bytes),
        temp_bytes: d(before.temp_bytes, after.temp_bytes),
        heap_peak_bytes: d(before.heap_peak_bytes, after.heap_peak_bytes),
        peak_bytes: d(before.peak_bytes, after.peak_bytes),
        donated_bytes: d(before.donated_bytes, after.donated_bytes),
        total_bytes: d(before.total_bytes, after.total_bytes),
        indefinite_bytes: d(before.indefinite_bytes, after.indefinite_bytes),
        roles_at_peak: RolesDelta {
            forward: d(rb.forward, ra.forward),
            backward: d(rb.backward, ra.backward),
            workspace: d(rb.workspace, ra.workspace),
            other: d(rb.other, ra.other),
        },
    }
}

fn change_of(delta: i64) -> Change {
    match delta.signum() {
        1 => Change::Grew,
        -1 => Change::Shrank,
        _ => Change::Unchanged,
    }
}

/// Orders changes largest first (by size of the change, savings before growth, then
/// by the larger size, then by name), so that the list leads with what moved the peak.
fn by_change<T>(
    rows: &mut [T],
    delta: impl Fn(&T) -> i64,
    size: impl Fn(&T) -> u64,
    name: impl Fn(&T) -> String,
) {
    rows.sort_by(|x, y| {
        delta(y)
            .unsigned_abs()
            .cmp(&delta(x).unsigned_abs())
            .then_with(|| delta(x).signum().cmp(&delta(y).signum()))
            .then_with(|| size(y).cmp(&size(x)))
            .then_with(|| name(x).cmp(&name(y)))
    });
}

fn matched_buffer(b: &LiveBuffer, a: &LiveBuffer, tier: super::model::MatchTier) -> BufferChange {
    let delta = signed_delta(b.bytes, a.bytes);
    BufferChange {
        change: change_of(delta),
        matched_by: Some(tier),
        op_name: b.op_name.clone(),
        source: b.source.clone(),
        shape: b.shape.clone(),
        shape_after: (a.shape != b.shape).then(|| a.shape.clone()),
        before_bytes: b.bytes,
        after_bytes: a.bytes,
        delta_bytes: delta,
        instruction_before: Some(b.name.clone()),
        instruction_after: Some(a.name.clone()),
        opcode: b.opcode.clone(),
        role: b.role,
        category_before: Some(b.category),
        category_after: Some(a.category),
    }
}

fn one_side(x: &LiveBuffer, before: bool) -> BufferChange {
    let (before_bytes, after_bytes) = if before { (x.bytes, 0) } else { (0, x.bytes) };
    BufferChange {
        change: if before {
            Change::OnlyBefore
        } else {
            Change::OnlyAfter
        },
        matched_by: None,
        op_name: x.op_name.clone(),
        source: x.source.clone(),
        shape: x.shape.clone(),
        shape_after: None,
        before_bytes,
        after_bytes,
        delta_bytes: signed_delta(before_bytes, after_bytes),
        instruction_before: before.then(|| x.name.clone()),
        instruction_after: (!before).then(|| x.name.clone()),
        opcode: x.opcode.clone(),
        role: x.role,
        category_before: before.then_some(x.category),
        category_after: (!before).then_some(x.category),
    }
}

/// Every buffer of both lists once, matched where it can be, largest change first.
pub fn buffers(before: &[LiveBuffer], after: &[LiveBuffer]) -> Vec<BufferChange> {
    let pairing = matching::buffers(before, after);
    let mut rows: Vec<BufferChange> = Vec::with_capacity(before.len().max(after.len()));
    for &(i, j, tier) in &pairing.pairs {
        if let (Some(b), Some(a)) = (before.get(i), after.get(j)) {
            rows.push(matched_buffer(b, a, tier));
        }
    }
    rows.extend(
        pairing
            .only_before
            .iter()
            .filter_map(|&i| before.get(i))
            .map(|x| one_side(x, true)),
    );
    rows.extend(
        pairing
            .only_after
            .iter()
            .filter_map(|&j| after.get(j))
            .map(|x| one_side(x, false)),
    );
    by_change(
        &mut rows,
        |r| r.delta_bytes,
        |r| r.before_bytes.max(r.after_bytes),
        |r| {
            r.instruction_before
                .clone()
                .or_else(|| r.instruction_after.clone())
                .unwrap_or_default()
        },
    );
    rows
}

/// Scan stacks matched by their loop, largest change first.
pub fn scan_stacks(before: &[ScanStack], after: &[ScanStack]) -> Vec<ScanStackChange> {
    let pairing = matching::scan_stacks(before, after);
    let mut rows = Vec::new();
    for &(i, j, tier) in &pairing.pairs {
        if let (Some(b), Some(a)) = (before.get(i), after.get(j)) {
            let delta = signed_delta(b.bytes, a.bytes);
            rows.push(ScanStackChange {
                change: change_of(delta),
                matched_by: Some(tier),
                shape: b.shape.clone(),
                while_before: Some(b.while_instruction.clone()),
                while_after: Some(a.while_instruction.clone()),
                count_before: b.count,
                count_after: a.count,
                before_bytes: b.bytes,
                after_bytes: a.bytes,
                delta_bytes: delta,
                role: b.role,
            });
        }
    }
    let alone = |s: &ScanStack, before: bool| {
        let (bb, ab) = if before { (s.bytes, 0) } else { (0, s.bytes) };
        ScanStackChange {
            change: if before {
                Change::OnlyBefore
            } else {
                Change::OnlyAfter
            },
            matched_by: None,
            shape: s.shape.clone(),
            while_before: before.then(|| s.while_instruction.clone()),
            while_after: (!before).then(|| s.while_instruction.clone()),
            count_before: if before { s.count } else { 0 },
            count_after: if before { 0 } else { s.count },
            before_bytes: bb,
            after_bytes: ab,
            delta_bytes: signed_delta(bb, ab),
            role: s.role,
        }
    };
    rows.extend(
        pairing
            .only_before
            .iter()
            .filter_map(|&i| before.get(i))
            .map(|s| alone(s, true)),
    );
    rows.extend(
        pairing
            .only_after
            .iter()
            .filter_map(|&j| after.get(j))
            .map(|s| alone(s, false)),
    );
    by_change(
        &mut rows,
        |r| r.delta_bytes,
        |r| r.before_bytes.max(r.after_bytes),
        |r| r.shape.clone(),
    );
    rows
}

/// The device pool a report's figures are measured in: its first device allocator.
pub fn device_pool(rt: &Runtime) -> Option<&AllocatorSummary> {
    rt.device_pool()
}

/// Runtime figures side by side, when both runs recorded a device pool's events.
pub fn runtime(before: &Runtime, after: &Runtime) -> Option<RuntimeDelta> {
    let (pb, pa) = (device_pool(before)?, device_pool(after)?);
    let last = |rt: &Runtime| rt.in_use_at_selected_starts.last().copied();
    Some(RuntimeDelta {
        allocator_before: pb.name.clone(),
        allocator_after: pa.name.clone(),
        capacity_bytes: Figures::of(pb.capacity_bytes, pa.capacity_bytes),
        peak_in_use_bytes: Figures::of(pb.peak_in_use_bytes, pa.peak_in_use_bytes),
        in_use_at_starts_before: before.in_use_at_selected_starts.clone(),
        in_use_at_starts_after: after.in_use_at_selected_starts.clone(),
        in_use_at_last_start_bytes: match (last(before), last(after)) {
            (Some(b), Some(a)) => Some(Figures::of(b, a)),
            _ => None,
        },
        growth_per_execution_before: before.growth_per_execution_bytes,
        growth_per_execution_after: after.growth_per_execution_bytes,
        retry_count: Figures::of(before.retry.count, after.retry.count),
        retry_total_ns_before: before.retry.total_ns,
        retry_total_ns_after: after.retry.total_ns,
        executions: Figures::of(before.execution_count, after.execution_count),
    })
}
