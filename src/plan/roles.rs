//! What a buffer is for, from JAX's name stack (docs/diagnosis.md#roles): forward
//! activations kept for the backward pass, backward, library workspace, or other; and
//! which buffers are `lax.scan` stacks.

use std::collections::BTreeMap;

use super::index::{op_name, HloIndex};
use super::shape;
use crate::proto::xla::{HloInstructionProto, LogicalBufferProto};
use crate::report::model::{Role, ScanStack};

/// `s8`: the element type of library scratch buffers.
const S8: i32 = 2;
/// Aliases consulted per buffer. Real buffers have a few; a hostile plan could give one
/// buffer millions and list it live millions of times.
const MAX_ALIASES_CONSULTED: usize = 256;

/// Role from an op name alone: `transpose(` decides first, because a backward op's
/// name stack holds both (`jit(step)/transpose(jvp())/dot_general`).
pub fn role_of_op_name(op_name: &str) -> Option<Role> {
    if op_name.contains("transpose(") {
        Some(Role::Backward)
    } else if op_name.contains("jvp(") {
        Some(Role::Forward)
    } else {
        None
    }
}

pub struct RoleResolver<'i, 'a> {
    index: &'i HloIndex<'a>,
}

impl<'i, 'a> RoleResolver<'i, 'a> {
    pub fn new(index: &'i HloIndex<'a>) -> Self {
        Self { index }
    }

    pub fn role(&self, buffer: &LogicalBufferProto) -> Role {
        let Some(instruction) = self.index.defining_instruction(buffer) else {
            return Role::Other;
        };
        let name = op_name(instruction);
        if instruction.opcode == "custom-call" {
            let is_bytes = self
                .index
                .buffer_display_shape(buffer)
                .map(|s| s.element_type == S8)
                .unwrap_or(false);
            if is_bytes {
                return Role::Workspace;
            }
        }
        if let Some(role) = role_of_op_name(name) {
            return role;
        }
        if !name.is_empty() {
            return Role::Other;
        }
        // No name stack: take the role most of the buffer's aliases have (a scan stack
        // is created by an unnamed broadcast, then written inside `…/jvp()/while/body`).
        let (mut forward, mut backward) = (0usize, 0usize);
        for alias in self
            .index
            .aliases_of(buffer.id)
            .iter()
            .take(MAX_ALIASES_CONSULTED)
        {
            let Some(location) = alias.location.as_ref() else {
                continue;
            };
            let instruction = if location.instruction_id != 0 {
                self.index.instruction(location.instruction_id)
            } else {
                self.index.instruction_named(&location.instruction_name)
            };
            match instruction.and_then(|i| role_of_op_name(op_name(i))) {
                Some(Role::Forward) => forward = forward.saturating_add(1),
                Some(Role::Backward) => backward = backward.saturating_add(1),
                _ => {}
            }
        }
        match (forward, backward) {
            (0, 0) => Role::Other,
            (f, b) if f >= b => Role::Forward,
            _ => Role::Backward,
        }
    }

    /// The instructions that share `buffer`: its definer, then its aliases.
    fn sharers(
        &self,
        buffer: &'a LogicalBufferProto,
    ) -> impl Iterator<Item = &'a HloInstructionProto> + '_ {
        let defining = self.index.defining_instruction(buffer);
        let aliases = self
            .index
            .aliases_of(buffer.id)
            .iter()
            .take(MAX_ALIASES_CONSULTED)
            .filter_map(|a| {
                let l = a.location.as_ref()?;
                if l.instruction_id != 0 {
                    self.index.instruction(l.instruction_id)
                } else {
                    self.index.instruction_named(&l.instruction_name)
                }
            });
        defining.into_iter().chain(aliases)
    }

    /// A `lax.scan` stack: a buffer of at least two dimensions, the leading one the
    /// iterations, that a `while` loop carries and a `dynamic-update-slice` writes in
    /// place. Returns the loop and the instruction that writes the buffer in its body
    /// (whose op_name and source say where the stacked values come from).
    pub fn scan_stack(
        &self,
        buffer: &'a LogicalBufferProto,
    ) -> Option<(&'a HloInstructionProto, &'a HloInstructionProto)> {
        let mut while_loop = None;
        let mut writer = None;
        for instruction in self.sharers(buffer) {
            match instruction.opcode.as_str() {
                "while" => while_loop = while_loop.or(Some(instruction)),
                "dynamic-update-slice" => writer = writer.or(Some(instruction)),
                "fusion"
                    if instruction.name.contains("dynamic-update-slice")
                        || instruction.name.contains("dynamic_update_slice") =>
                {
                    writer = writer.or(Some(instruction))
                }
                _ => {}
            }
        }
        let (while_loop, writer) = (while_loop?, writer?);
        let shape = self.index.buffer_display_shape(buffer)?;
        let stacked =
            shape.dimensions.len() >= 2 && shape.dimensions.first().is_some_and(|&d| d >= 2);
        stacked.then_some((while_loop, writer))
    }

    /// Buffers live at the peak that `lax.scan` stacks over its iterations, grouped by
    /// loop and shape, largest first.
    pub fn scan_stacks(&self, live: &[(i64, u64)]) -> Vec<ScanStack> {
        let mut groups: BTreeMap<(String, String), ScanStack> = BTreeMap::new();
        for &(id, bytes) in live {
            let Some(buffer) = self.index.buffer(id) else {
                continue;
            };
            let Some((while_loop, writer)) = self.scan_stack(buffer) else {
                continue;
            };
            let Some(shape) = self.index.buffer_display_shape(buffer) else {
                continue;
            };
            let shape_text = shape::format_shape(shape);
            let role = self.role(buffer);
            let entry = groups
                .entry((while_loop.name.clone(), shape_text.clone()))
                .or_insert_with(|| ScanStack {
                    shape: shape_text,
                    count: 0,
                    bytes: 0,
                    while_instruction: while_loop.name.clone(),
                    role,
                    source: self.index.source_of(writer),
                    op_name: op_name(writer).to_owned(),
                });
            entry.count = entry.count.saturating_add(1);
            entry.bytes = entry.bytes.saturating_add(bytes);
        }
        let mut stacks: Vec<ScanStack> = groups.into_values().collect();
        stacks.sort_by_key(|s| std::cmp::Reverse(s.bytes));
        stacks
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn transpose_decides_before_jvp() {
        assert_eq!(
            role_of_op_name("jit(step)/transpose(jvp(f))/dot_general"),
            Some(Role::Backward)
        );
        assert_eq!(
            role_of_op_name("jit(step)/jvp(f)/softmax"),
            Some(Role::Forward)
        );
        assert_eq!(
            role_of_op_name("jit(step)/transpose(jvp(f))/checkpoint/rematted_computation/exp"),
            Some(Role::Backward)
        );
        assert_eq!(role_of_op_name("jit(f)/dot_general"), None);
    }
}
