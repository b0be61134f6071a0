//! Which values share their bytes over time. XLA gives every value of one buffer the
//! same offset and size, and they follow one another without a gap; so does an output
//! the heap simulator writes in place over a dying operand. Values at the same place
//! whose live ranges overlap are therefore chained.
//!
//! Two kinds of link make a chain, and XProf names a live buffer differently after
//! each: a value that can only be the same buffer (a loop's merged value, the loop
//! itself, a dynamic-update-slice — the proto's `buffer_aliases`) keeps the name of
//! the value before it; an output written in place over a freed operand is shown by
//! its own name.

use std::collections::BTreeMap;

use super::assignment::{Allocation, Assignment, Value};
use super::hlo::Hlo;
use super::live_range::LiveRanges;

/// A value, as (allocation index, value index in it).
pub type ValueRef = (usize, usize);
/// `(offset, size)` in an allocation.
type Place = (u64, u64);
/// A value with a live range: `(start, end, id, value index)`, ordered by start.
type Ranged = (u64, u64, i64, usize);

#[derive(Debug, Default)]
pub struct Chains {
    /// Per allocation, per value: its live range, when the dump has it.
    ranges: Vec<Vec<Option<(u64, u64)>>>,
    /// Per allocation, per value: its chain.
    chain_of: Vec<Vec<usize>>,
    /// Each chain's values, the first one first.
    members: Vec<Vec<ValueRef>>,
    /// Per allocation, per value: the value XProf shows it as.
    shown_as: Vec<Vec<ValueRef>>,
}

/// Whether a value can only be part of the buffer of the value before it: a merge
/// (`(phi)`), a loop, call or conditional result, or a dynamic-update-slice.
pub fn joins_buffer(value: &Value, hlo: &Hlo) -> bool {
    let opcode = hlo
        .instructions
        .get(&value.instruction)
        .map(|i| i.opcode.as_str());
    value.phi
        || matches!(opcode, Some("while" | "conditional" | "call"))
        || is_in_place_update(&value.instruction, opcode)
}

/// A dynamic-update-slice, alone or fused (the capture path's test, by name).
pub fn is_in_place_update(name: &str, opcode: Option<&str>) -> bool {
    match opcode {
        Some("dynamic-update-slice") => true,
        Some("fusion") => {
            name.contains("dynamic-update-slice") || name.contains("dynamic_update_slice")
        }
        _ => false,
    }
}

impl Chains {
    pub fn new(assignment: &Assignment, live: Option<&LiveRanges>, hlo: &Hlo) -> Self {
        let mut chains = Chains::default();
        for (ai, allocation) in assignment.allocations.iter().enumerate() {
            let ranges: Vec<Option<(u64, u64)>> = allocation
                .values
                .iter()
                .map(|v| {
                    let key = (v.instruction.clone(), v.index.clone());
                    live.and_then(|l| l.ranges.get(&key).copied())
                })
                .collect();
            let chain_of = chains.chain_allocation(ai, allocation, &ranges);
            chains.ranges.push(ranges);
            chains.chain_of.push(chain_of);
            chains
                .shown_as
                .push((0..allocation.values.len()).map(|vi| (ai, vi)).collect());
        }
        chains.name_buffers(assignment, hlo);
        chains
    }

    /// Who each value is shown as: a value that joins the buffer before it inherits
    /// that buffer's name.
    fn name_buffers(&mut self, assignment: &Assignment, hlo: &Hlo) {
        for chain in &self.members {
            let mut shown = None;
            for &(ai, vi) in chain {
                let value = assignment
                    .allocations
                    .get(ai)
                    .and_then(|a| a.values.get(vi));
                let joins = value.is_some_and(|v| joins_buffer(v, hlo));
                let name = match shown {
                    Some(s) if joins => s,
                    _ => (ai, vi),
                };
                shown = Some(name);
                if let Some(slot) = self.shown_as.get_mut(ai).and_then(|a| a.get_mut(vi)) {
                    *slot = name;
                }
            }
        }
    }

    /// Chains one allocation's values; returns each value's chain.
    fn chain_allocation(
        &mut self,
        ai: usize,
        allocation: &Allocation,
        ranges: &[Option<(u64, u64)>],
    ) -> Vec<usize> {
        let mut chain_of = vec![0; allocation.values.len()];
        let mut by_place: BTreeMap<Place, Vec<Ranged>> = BTreeMap::new();
        for (vi, v) in allocation.values.iter().enumerate() {
            match ranges.get(vi).copied().flatten() {
                Some((start, end)) => by_place
                    .entry((v.offset, v.size))
                    .or_default()
                    .push((start, end, v.id, vi)),
                None => {
                    if let Some(c) = chain_of.get_mut(vi) {
                        *c = self.members.len();
                    }
                    self.members.push(vec![(ai, vi)]);
                }
            }
        }
        for mut place in by_place.into_values() {
            place.sort_unstable();
            let mut reach: Option<u64> = None;
            for (start, end, _, vi) in place {
                match reach {
                    Some(r) if start <= r => {
                        reach = Some(r.max(end));
                        if let Some(chain) = self.members.last_mut() {
                            chain.push((ai, vi));
                        }
                    }
                    _ => {
                        reach = Some(end);
                        self.members.push(vec![(ai, vi)]);
                    }
                }
                if let Some(c) = chain_of.get_mut(vi) {
                    *c = self.members.len().saturating_sub(1);
                }
            }
        }
        chain_of
    }

    /// A value's live range, when the dump has it.
    pub fn range(&self, (ai, vi): ValueRef) -> Option<(u64, u64)> {
        self.ranges.get(ai)?.get(vi).copied().flatten()
    }

    fn chain(&self, (ai, vi): ValueRef) -> Option<&[ValueRef]> {
        let chain = *self.chain_of.get(ai)?.get(vi)?;
        self.members.get(chain).map(Vec::as_slice)
    }

    /// The value a live value is shown as.
    pub fn shown_as(&self, (ai, vi): ValueRef) -> ValueRef {
        self.shown_as
            .get(ai)
            .and_then(|a| a.get(vi))
            .copied()
            .unwrap_or((ai, vi))
    }

    /// The chain a value is in.
    pub fn chain_id(&self, (ai, vi): ValueRef) -> Option<usize> {
        self.chain_of.get(ai)?.get(vi).copied()
    }

    /// The other values of a value's chain.
    pub fn aliases(&self, value: ValueRef) -> impl Iterator<Item = ValueRef> + '_ {
        self.chain(value)
            .unwrap_or_default()
            .iter()
            .copied()
            .filter(move |&v| v != value)
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::super::{assignment, hlo::Hlo, live_range};
    use super::*;

    #[test]
    fn an_output_written_in_place_is_shown_by_its_own_name() {
        let a = assignment::parse(
            "allocation 0: size 64, preallocated-temp:
 value: <1 add.1 @0> (size=32,offset=0): f32[8]{0}
 value: <2 add.2 @0> (size=32,offset=0): f32[8]{0}
",
        );
        let l = live_range::parse("  BufferLiveRange:\n    add.1{}:0-2\n    add.2{}:2-6\n");
        let c = Chains::new(&a, Some(&l), &Hlo::default());
        assert_eq!(c.chain_id((0, 0)), c.chain_id((0, 1)));
        assert_eq!(c.shown_as((0, 1)), (0, 1));
    }

    #[test]
    fn chains_overlapping_values_at_one_place() {
        let a = assignment::parse(
            "allocation 0: size 64, preallocated-temp:
 value: <1 broadcast @0> (size=32,offset=0): f32[8]{0}
 value: <2 while{1} (phi) @0> (size=32,offset=0): f32[8]{0}
 value: <3 dus @0> (size=32,offset=0): f32[8]{0}
 value: <4 later @0> (size=32,offset=0): f32[8]{0}
 value: <5 other @0> (size=32,offset=32): f32[8]{0}
 value: <6 unranged @0> (size=32,offset=0): f32[8]{0}
",
        );
        let l = live_range::parse(
            "  BufferLiveRange:\n    broadcast{}:0-2\n    while{1}:2-6\n    dus{}:4-5\n    later{}:7-9\n    other{}:0-9\n",
        );
        let mut hlo = Hlo::default();
        hlo.read_values(" from instruction: %dus = f32[8]{0} dynamic-update-slice(%a, %b, %c)\n");
        let c = Chains::new(&a, Some(&l), &hlo);
        assert_eq!(
            c.shown_as((0, 1)),
            (0, 0),
            "a loop's merge joins the buffer"
        );
        assert_eq!(c.shown_as((0, 2)), (0, 0), "so does its in-place update");
        assert_eq!(c.chain_id((0, 2)), c.chain_id((0, 0)));
        assert_ne!(
            c.chain_id((0, 3)),
            c.chain_id((0, 0)),
            "a gap starts a new buffer"
        );
        assert_eq!(c.shown_as((0, 3)), (0, 3));
        assert_eq!(c.shown_as((0, 5)), (0, 5));
        assert_eq!(c.aliases((0, 0)).collect::<Vec<_>>(), vec![(0, 1), (0, 2)]);
        assert_eq!(c.range((0, 1)), Some((2, 6)));
        assert_eq!(c.range((0, 5)), None);
        assert_eq!(c.range((9, 9)), None);
    }
}
