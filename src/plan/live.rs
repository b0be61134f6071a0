//! What is live at the plan's peak: each buffer's size, shape, category, role and
//! source, and the role split of the temporary bytes.

use super::index::{op_name, HloIndex};
use super::{category, roles, shape, LIVE_BUFFERS_KEPT};
use crate::report::model::{Category, LiveBuffer, Plan, Roles};

/// Describes the buffers live at the peak, `(buffer id, bytes)`: the plan's live list
/// (largest first, at most [`LIVE_BUFFERS_KEPT`]), role split, padding and scan stacks.
pub(super) fn describe(plan: &mut Plan, index: &HloIndex<'_>, live: &[(i64, u64)]) {
    let roles = roles::RoleResolver::new(index);
    let mut buffers: Vec<LiveBuffer> = Vec::with_capacity(live.len());
    let mut heap_roles = Roles::default();
    for &(id, bytes) in live {
        let Some(buffer) = live_buffer(index, &roles, id, bytes) else {
            continue;
        };
        if buffer.category == Category::Temporary {
            heap_roles.add(buffer.role, bytes);
        }
        buffers.push(buffer);
    }
    plan.roles_at_peak = heap_roles;
    plan.padding_bytes = buffers
        .iter()
        .map(|b| b.bytes.saturating_sub(b.unpadded_bytes))
        .fold(0, u64::saturating_add);
    plan.scan_stacks = roles.scan_stacks(live);
    buffers.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    buffers.truncate(LIVE_BUFFERS_KEPT);
    plan.live_at_peak = buffers;
}

fn live_buffer(
    index: &HloIndex<'_>,
    roles: &roles::RoleResolver<'_, '_>,
    id: i64,
    bytes: u64,
) -> Option<LiveBuffer> {
    let buffer = index.buffer(id)?;
    let category = index
        .allocation_of(id)
        .map(category)
        .unwrap_or(Category::Temporary);
    let instruction = index.defining_instruction(buffer);
    let shape_index = HloIndex::shape_index(buffer);
    let mut name = instruction
        .map(|i| i.name.clone())
        .unwrap_or_else(|| format!("buffer {id}"));
    if !shape_index.is_empty() {
        let parts: Vec<String> = shape_index.iter().map(|i| i.to_string()).collect();
        name = format!("{name}{{{}}}", parts.join(","));
    }
    let display_shape = index.buffer_display_shape(buffer);
    // A scan stack is made by an unnamed broadcast or copy: where its values come
    // from is the instruction that writes it inside the loop body.
    let named_by = roles
        .scan_stack(buffer)
        .map(|(_, writer)| writer)
        .or(instruction);
    Some(LiveBuffer {
        shared_by: sharing_ops(index, id, named_by.map(op_name).unwrap_or("")),
        name,
        opcode: instruction.map(|i| i.opcode.clone()).unwrap_or_default(),
        shape: display_shape.map(shape::format_shape).unwrap_or_default(),
        bytes,
        unpadded_bytes: index.unpadded_size(buffer),
        category,
        role: roles.role(buffer),
        source: named_by.map(|i| index.source_of(i)).unwrap_or_default(),
        op_name: named_by.map(|i| op_name(i).to_owned()).unwrap_or_default(),
        memory_space: display_shape.map(shape::memory_space).unwrap_or(0),
    })
}

/// Logical buffers of one allocation consulted for those sharing a place (a module has
/// a handful per place; a hostile plan could list millions).
const MAX_ASSIGNED_CONSULTED: usize = 4096;
/// Op names kept per buffer.
const MAX_SHARING_OPS: usize = 8;

/// The JAX op names of the other values that occupy this buffer's place in its
/// allocation (the same offset): an in-place op (a sort, a dynamic-update-slice)
/// writes its result where its operand was, so the buffer is also theirs. Distinct,
/// non-empty, other than `own`.
fn sharing_ops(index: &HloIndex<'_>, id: i64, own: &str) -> Vec<String> {
    let Some(allocation) = index.allocation_of(id) else {
        return Vec::new();
    };
    let assigned = allocation.assigned.iter().take(MAX_ASSIGNED_CONSULTED);
    let Some(offset) = assigned
        .clone()
        .find(|a| a.logical_buffer_id == id)
        .map(|a| a.offset)
    else {
        return Vec::new();
    };
    let mut ops: Vec<String> = Vec::new();
    for other in assigned.filter(|a| a.offset == offset && a.logical_buffer_id != id) {
        let name = index
            .buffer(other.logical_buffer_id)
            .and_then(|b| index.defining_instruction(b))
            .map(op_name)
            .unwrap_or("");
        if !name.is_empty() && name != own && !ops.iter().any(|o| o == name) {
            ops.push(name.to_owned());
            if ops.len() == MAX_SHARING_OPS {
                break;
            }
        }
    }
    ops
}
