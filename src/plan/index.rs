//! Lookup tables over one decoded `HloProto`: instructions by id and name, logical
//! buffers by id, the allocation holding each buffer, and each buffer's aliases.

use std::collections::HashMap;

use crate::proto::xla::{
    buffer_assignment_proto::BufferAlias, BufferAllocationProto, BufferAssignmentProto,
    HloInstructionProto, HloModuleProto, LogicalBufferProto, ShapeProto,
};

use super::shape;

pub struct HloIndex<'a> {
    pub module: &'a HloModuleProto,
    pub assignment: &'a BufferAssignmentProto,
    instructions: HashMap<i64, &'a HloInstructionProto>,
    by_name: HashMap<&'a str, &'a HloInstructionProto>,
    buffers: HashMap<i64, &'a LogicalBufferProto>,
    /// Logical buffer id → index into `assignment.buffer_allocations`.
    allocation_of: HashMap<i64, usize>,
    aliases: HashMap<i64, Vec<&'a BufferAlias>>,
}

impl<'a> HloIndex<'a> {
    pub fn new(module: &'a HloModuleProto, assignment: &'a BufferAssignmentProto) -> Self {
        let mut instructions = HashMap::new();
        let mut by_name = HashMap::new();
        for computation in &module.computations {
            for instruction in &computation.instructions {
                instructions.insert(instruction.id, instruction);
                by_name.insert(instruction.name.as_str(), instruction);
            }
        }
        let buffers = assignment
            .logical_buffers
            .iter()
            .map(|b| (b.id, b))
            .collect();
        let mut allocation_of = HashMap::new();
        for (i, allocation) in assignment.buffer_allocations.iter().enumerate() {
            for assigned in &allocation.assigned {
                allocation_of.entry(assigned.logical_buffer_id).or_insert(i);
            }
        }
        let mut aliases: HashMap<i64, Vec<&BufferAlias>> = HashMap::new();
        for alias in &assignment.buffer_aliases {
            aliases
                .entry(alias.source_buffer_id)
                .or_default()
                .push(alias);
        }
        Self {
            module,
            assignment,
            instructions,
            by_name,
            buffers,
            allocation_of,
            aliases,
        }
    }

    pub fn instruction(&self, id: i64) -> Option<&'a HloInstructionProto> {
        self.instructions.get(&id).copied()
    }

    pub fn instruction_named(&self, name: &str) -> Option<&'a HloInstructionProto> {
        self.by_name.get(name).copied()
    }

    pub fn instructions(&self) -> impl Iterator<Item = &'a HloInstructionProto> + '_ {
        self.instructions.values().copied()
    }

    pub fn buffer(&self, id: i64) -> Option<&'a LogicalBufferProto> {
        self.buffers.get(&id).copied()
    }

    pub fn allocation_index_of(&self, buffer_id: i64) -> Option<usize> {
        self.allocation_of.get(&buffer_id).copied()
    }

    pub fn allocation_of(&self, buffer_id: i64) -> Option<&'a BufferAllocationProto> {
        self.allocation_index_of(buffer_id)
            .and_then(|i| self.assignment.buffer_allocations.get(i))
    }

    pub fn aliases_of(&self, buffer_id: i64) -> &[&'a BufferAlias] {
        self.aliases
            .get(&buffer_id)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The instruction that defines a logical buffer: by id (current XLA), else by the
    /// deprecated name field (older captures).
    pub fn defining_instruction(
        &self,
        buffer: &LogicalBufferProto,
    ) -> Option<&'a HloInstructionProto> {
        let at = buffer.defined_at.as_ref()?;
        if at.instruction_id != 0 {
            if let Some(i) = self.instruction(at.instruction_id) {
                return Some(i);
            }
        }
        self.instruction_named(&at.instruction_name)
    }

    pub fn shape_index(buffer: &LogicalBufferProto) -> &[i64] {
        buffer
            .defined_at
            .as_ref()
            .map(|d| d.shape_index.as_slice())
            .unwrap_or_default()
    }

    /// The shape XProf sizes for a buffer (top-level tuple element quirk included).
    pub fn buffer_size_shape(&self, buffer: &LogicalBufferProto) -> Option<&'a ShapeProto> {
        let instruction = self.defining_instruction(buffer)?;
        Some(shape::buffer_shape(
            instruction.shape.as_ref()?,
            Self::shape_index(buffer),
        ))
    }

    /// The buffer's own shape (full shape index walk), for display.
    pub fn buffer_display_shape(&self, buffer: &LogicalBufferProto) -> Option<&'a ShapeProto> {
        let instruction = self.defining_instruction(buffer)?;
        Some(shape::subshape(
            instruction.shape.as_ref()?,
            Self::shape_index(buffer),
        ))
    }

    pub fn unpadded_size(&self, buffer: &LogicalBufferProto) -> u64 {
        self.buffer_size_shape(buffer)
            .map(shape::unpadded_bytes)
            .unwrap_or(0)
    }

    /// The memory space an allocation lives in, as PjRt decides it for its memory
    /// stats: the layout memory space of its buffers' defining positions.
    pub fn allocation_memory_space(&self, allocation: &BufferAllocationProto) -> i64 {
        allocation
            .assigned
            .iter()
            .filter_map(|a| self.buffer(a.logical_buffer_id))
            .find_map(|b| self.buffer_display_shape(b).map(shape::memory_space))
            .unwrap_or(0)
    }

    /// Source location `file:line` of an instruction, from `source_file` or else the
    /// stack-frame index (innermost frame), as XProf resolves it.
    pub fn source_of(&self, instruction: &HloInstructionProto) -> String {
        let Some(metadata) = instruction.metadata.as_ref() else {
            return String::new();
        };
        if !metadata.source_file.is_empty() {
            return format!("{}:{}", metadata.source_file, metadata.source_line);
        }
        let Some(index) = self.module.stack_frame_index.as_ref() else {
            return String::new();
        };
        let frame_id = metadata.stack_frame_id;
        let frame = usize::try_from(frame_id.saturating_sub(1))
            .ok()
            .and_then(|i| index.stack_frames.get(i));
        let Some(frame) = frame else {
            return String::new();
        };
        let location = usize::try_from(frame.file_location_id.saturating_sub(1))
            .ok()
            .and_then(|i| index.file_locations.get(i));
        let Some(location) = location else {
            return String::new();
        };
        let file = usize::try_from(location.file_name_id.saturating_sub(1))
            .ok()
            .and_then(|i| index.file_names.get(i))
            .map(String::as_str)
            .unwrap_or("");
        if file.is_empty() {
            return String::new();
        }
        format!("{}:{}", file, location.line)
    }
}

/// `op_name` from an instruction's metadata, or "".
pub fn op_name(instruction: &HloInstructionProto) -> &str {
    instruction
        .metadata
        .as_ref()
        .map(|m| m.op_name.as_str())
        .unwrap_or("")
}
