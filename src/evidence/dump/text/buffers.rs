//! The buffers live at the peak, described as the capture path describes them: name,
//! opcode, shape, sizes, category, role, source line and `op_name`; and the scan stacks
//! among them. Instructions come from the HLO text; a buffer's aliases from its chain.

use std::collections::BTreeMap;

use super::assignment::{Allocation, Assignment, Value};
use super::chains::{is_in_place_update, joins_buffer, Chains, ValueRef};
use super::hlo::{Hlo, Instruction};
use super::shape;
use super::totals::category;
use crate::plan::roles::role_of_op_name;
use crate::plan::shape::{format_shape, memory_space, unpadded_bytes};
use crate::proto::xla::ShapeProto;
use crate::report::model::{LiveBuffer, Role, ScanStack};

/// `s8`: the element type of library scratch buffers.
const S8: i32 = 2;
/// Aliases consulted per buffer, as the capture path bounds them.
const MAX_ALIASES_CONSULTED: usize = 256;

/// What the buffers are described from.
pub struct Describe<'a> {
    pub assignment: &'a Assignment,
    pub hlo: &'a Hlo,
    pub chains: &'a Chains,
}

impl<'a> Describe<'a> {
    fn value(&self, (ai, vi): ValueRef) -> Option<(&'a Allocation, &'a Value)> {
        let allocation = self.assignment.allocations.get(ai)?;
        Some((allocation, allocation.values.get(vi)?))
    }

    fn instruction(&self, value: ValueRef) -> Option<&'a Instruction> {
        let (_, v) = self.value(value)?;
        self.hlo.instructions.get(&v.instruction)
    }

    /// One live buffer, `bytes` as the peak counts it.
    pub fn buffer(&self, value: ValueRef, bytes: u64) -> Option<LiveBuffer> {
        let (allocation, v) = self.value(value)?;
        let instruction = self.instruction(value);
        let parsed = shape::parse(&v.shape);
        let mut name = v.instruction.clone();
        if !v.index.is_empty() {
            let parts: Vec<String> = v.index.iter().map(i64::to_string).collect();
            name = format!("{name}{{{}}}", parts.join(","));
        }
        // A scan stack is named by the instruction that writes it in the loop body.
        let named_by = self
            .scan_stack(value)
            .map(|(_, writer, _)| writer)
            .or(instruction);
        Some(LiveBuffer {
            name,
            opcode: instruction.map(|i| i.opcode.clone()).unwrap_or_default(),
            shape: parsed.as_ref().map(format_shape).unwrap_or_default(),
            bytes,
            unpadded_bytes: parsed.as_ref().map(unpadded_bytes).unwrap_or(0),
            category: category(allocation),
            role: self.role(value, parsed.as_ref()),
            source: named_by.map(|i| self.hlo.source_of(i)).unwrap_or_default(),
            op_name: named_by.map(|i| i.op_name.clone()).unwrap_or_default(),
            memory_space: parsed.as_ref().map(memory_space).unwrap_or(0),
            // The text dump's values are not matched by place: an in-place op is named
            // only by the value it defines.
            shared_by: Vec::new(),
        })
    }

    /// The role, as the capture path decides it: library scratch, then the name
    /// stack, then (unnamed) the role most of the buffer's aliases have.
    fn role(&self, value: ValueRef, shape: Option<&ShapeProto>) -> Role {
        let Some(instruction) = self.instruction(value) else {
            return Role::Other;
        };
        let is_bytes = shape.map(|s| s.element_type == S8).unwrap_or(false);
        if instruction.opcode == "custom-call" && is_bytes {
            return Role::Workspace;
        }
        if let Some(role) = role_of_op_name(&instruction.op_name) {
            return role;
        }
        if !instruction.op_name.is_empty() {
            return Role::Other;
        }
        let (mut forward, mut backward) = (0usize, 0usize);
        for alias in self.buffer_aliases(value) {
            match self
                .instruction(alias)
                .and_then(|i| role_of_op_name(&i.op_name))
            {
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

    /// The chain's values that can only share the value's buffer (rather than reuse its
    /// bytes in place, as the heap simulator lets an elementwise output do): a loop's
    /// merged values (phis), the loop itself, and dynamic-update-slices, which XLA
    /// always writes into their operand's buffer. The capture path consults a buffer's
    /// aliases the same way.
    fn buffer_aliases(&self, value: ValueRef) -> impl Iterator<Item = ValueRef> + '_ {
        self.chains
            .aliases(value)
            .filter(|&alias| {
                self.value(alias)
                    .is_some_and(|(_, v)| joins_buffer(v, self.hlo))
            })
            .take(MAX_ALIASES_CONSULTED)
    }

    /// Live buffers that a `while` loop carries and a dynamic-update-slice writes:
    /// the stacked per-iteration values of a scan.
    pub fn scan_stacks(&self, live: &[(ValueRef, u64)]) -> Vec<ScanStack> {
        let mut groups: BTreeMap<(String, String), ScanStack> = BTreeMap::new();
        for &(value, bytes) in live {
            let Some((while_name, writer, parsed)) = self.scan_stack(value) else {
                continue;
            };
            let shape_text = format_shape(&parsed);
            let entry = groups
                .entry((while_name.clone(), shape_text.clone()))
                .or_insert_with(|| ScanStack {
                    shape: shape_text,
                    count: 0,
                    bytes: 0,
                    while_instruction: while_name,
                    role: self.role(value, Some(&parsed)),
                    source: self.hlo.source_of(writer),
                    op_name: writer.op_name.clone(),
                });
            entry.count = entry.count.saturating_add(1);
            entry.bytes = entry.bytes.saturating_add(bytes);
        }
        let mut stacks: Vec<ScanStack> = groups.into_values().collect();
        stacks.sort_by_key(|s| std::cmp::Reverse(s.bytes));
        stacks
    }

    /// A scan stack, as the capture path finds one: a value of at least two
    /// dimensions, the leading one the iterations, that a `while` carries and an
    /// in-place update writes. Returns the loop, the writer (whose op_name and source
    /// say where the stacked values come from) and the value's shape.
    fn scan_stack(&self, value: ValueRef) -> Option<(String, &'a Instruction, ShapeProto)> {
        let mut while_name = None;
        let mut writer = None;
        for v in std::iter::once(value).chain(self.buffer_aliases(value)) {
            let (Some((_, defined)), Some(instruction)) = (self.value(v), self.instruction(v))
            else {
                continue;
            };
            let name = defined.instruction.as_str();
            if instruction.opcode == "while" {
                while_name = while_name.or(Some(name.to_owned()));
            }
            if is_in_place_update(name, Some(&instruction.opcode)) {
                writer = writer.or(Some(instruction));
            }
        }
        let (_, v) = self.value(value)?;
        let parsed = shape::parse(&v.shape)?;
        let stacked =
            parsed.dimensions.len() >= 2 && parsed.dimensions.first().is_some_and(|&d| d >= 2);
        stacked.then_some((while_name?, writer?, parsed))
    }
}
