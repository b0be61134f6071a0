//! The plan's totals from the allocations, counted as PjRt's compiled memory stats
//! count them (and as `plan::analyze` does for a proto): argument = entry-parameter
//! allocations, output = maybe-live-out ones, alias = parameters donated to outputs,
//! temp = the preallocated temporary allocations; host memory space (`S(5)`) apart.

use std::collections::HashSet;

use super::assignment::{Allocation, Assignment};
use super::hlo::Hlo;
use super::shape;
use crate::plan::shape::memory_space;
use crate::report::model::{Category, Plan};

/// Memory color of device memory.
pub const HBM: i64 = 0;
const HOST_MEMORY_SPACE: i64 = 5;
/// As in `plan`: sizes beyond a petabyte mean a corrupt file.
const IMPOSSIBLE_BYTES: u64 = 1 << 50;
const IMPOSSIBLE_TEXT: &str = "the plan holds sizes no device has (above 1 PiB): its buffer \
assignment is corrupt and these figures are not meaningful";
const ALIAS_GUESS: &str = "the dump has no HLO text (*after_optimizations.txt) to say which \
parameters are donated: every parameter allocation that is also an output counts as aliased";

/// Held for the whole program (XLA's indefinite allocations); thread-local ones live on
/// stacks and count toward nothing.
pub fn is_indefinite(a: &Allocation) -> bool {
    !a.thread_local && (a.parameter.is_some() || a.constant || a.maybe_live_out)
}

/// XLA's `IsPreallocatedTempBuffer` (what the dump marks `preallocated-temp`).
pub fn is_temp(a: &Allocation) -> bool {
    a.parameter.is_none() && !a.maybe_live_out && !a.thread_local && !a.constant
}

/// XProf's group for a buffer of this allocation (first match wins).
pub fn category(a: &Allocation) -> Category {
    if a.parameter.is_some() {
        Category::Parameter
    } else if a.maybe_live_out {
        Category::Output
    } else if a.thread_local {
        Category::ThreadLocal
    } else if a.constant {
        Category::Constant
    } else {
        Category::Temporary
    }
}

/// The memory space of an allocation: its first value's layout, as PjRt decides it.
fn allocation_memory_space(a: &Allocation) -> i64 {
    a.values
        .iter()
        .find_map(|v| shape::parse(&v.shape))
        .map(|s| memory_space(&s))
        .unwrap_or(0)
}

/// Fills the totals; says in `caveats` what had to be assumed.
pub fn fill(plan: &mut Plan, assignment: &Assignment, hlo: &Hlo, caveats: &mut Vec<String>) {
    let donated: Option<HashSet<&(i64, Vec<i64>)>> =
        hlo.aliases.as_ref().map(|a| a.iter().collect());
    let allocations = &assignment.allocations;
    if donated.is_none()
        && allocations
            .iter()
            .any(|a| a.parameter.is_some() && a.maybe_live_out)
    {
        caveats.push(ALIAS_GUESS.into());
    }
    for a in allocations {
        let size = a.size;
        if a.color == HBM && !a.thread_local {
            plan.allocation_bytes = plan.allocation_bytes.saturating_add(size);
        }
        let host = allocation_memory_space(a) == HOST_MEMORY_SPACE;
        let aliased = match (&a.parameter, &donated) {
            (Some(p), Some(donated)) => donated.contains(p),
            (Some(_), None) => a.maybe_live_out,
            (None, _) => false,
        };
        if a.parameter.is_some() {
            add_parameter(plan, size, host, aliased);
        }
        if a.maybe_live_out {
            if host {
                plan.host_output_bytes = plan.host_output_bytes.saturating_add(size);
            } else {
                plan.output_bytes = plan.output_bytes.saturating_add(size);
                if a.parameter.is_none() {
                    plan.non_aliased_output_bytes =
                        plan.non_aliased_output_bytes.saturating_add(size);
                }
            }
        }
        if is_temp(a) {
            let slot = if host {
                &mut plan.host_temp_bytes
            } else {
                &mut plan.temp_bytes
            };
            *slot = slot.saturating_add(size);
        }
    }
    let total = u128::from(plan.argument_bytes)
        .saturating_add(u128::from(plan.output_bytes))
        .saturating_add(u128::from(plan.temp_bytes))
        .saturating_sub(u128::from(plan.alias_bytes));
    plan.total_bytes = u64::try_from(total).unwrap_or(u64::MAX);
    let impossible = allocations
        .iter()
        .any(|a| a.size > IMPOSSIBLE_BYTES || a.values.iter().any(|v| v.size > IMPOSSIBLE_BYTES));
    if impossible {
        caveats.push(IMPOSSIBLE_TEXT.into());
    }
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

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::super::assignment::parse;
    use super::*;

    const SAMPLE: &str =
        "allocation 0: size 100, parameter 0, shape |f32[25]| at ShapeIndex {}, maybe-live-out:
 value: <1 p0 @0> (size=100,offset=0): f32[25]{0}
allocation 1: size 40, parameter 1, shape |f32[10]| at ShapeIndex {}:
 value: <2 p1 @0> (size=40,offset=0): f32[10]{0}
allocation 2: size 8, parameter 2, shape |f32[2]| at ShapeIndex {}:
 value: <3 p2 @0> (size=8,offset=0): f32[2]{0:S(5)}
allocation 3: size 12, output shape is |f32[3]|, maybe-live-out:
 value: <4 out @0> (size=12,offset=0): f32[3]{0}
allocation 4: size 4, constant:
 value: <5 c @0> (size=4,offset=0): f32[]
allocation 5: size 4, thread-local:
 value: <6 t @0> (size=4,offset=0): f32[]
allocation 6: size 1000, preallocated-temp:
 value: <7 x @0> (size=1000,offset=0): f32[250]{0}
";

    #[test]
    fn counts_as_memory_analysis_does() {
        let a = parse(SAMPLE);
        let mut hlo = Hlo::default();
        hlo.read_module("HloModule f, input_output_alias={ {0}: (0, {}, may-alias) }\n");
        let (mut plan, mut caveats) = (Plan::default(), Vec::new());
        fill(&mut plan, &a, &hlo, &mut caveats);
        assert!(caveats.is_empty());
        assert_eq!(plan.argument_bytes, 140);
        assert_eq!(plan.host_argument_bytes, 8);
        assert_eq!(plan.output_bytes, 112);
        assert_eq!(plan.non_aliased_output_bytes, 12);
        assert_eq!(plan.alias_bytes, 100);
        assert_eq!(plan.temp_bytes, 1000);
        assert_eq!(plan.total_bytes, 140 + 112 + 1000 - 100);
        assert_eq!(plan.allocation_bytes, 100 + 40 + 8 + 12 + 4 + 1000);
        assert_eq!((plan.parameter_count, plan.donated_parameter_count), (2, 1));
    }

    #[test]
    fn without_hlo_text_outputs_in_parameters_count_as_donated() {
        let a = parse(SAMPLE);
        let (mut plan, mut caveats) = (Plan::default(), Vec::new());
        fill(&mut plan, &a, &Hlo::default(), &mut caveats);
        assert_eq!(plan.alias_bytes, 100);
        assert_eq!(caveats.len(), 1);
    }

    #[test]
    fn a_module_that_donates_nothing_aliases_nothing() {
        let a = parse(SAMPLE);
        let mut hlo = Hlo::default();
        hlo.read_module("HloModule f, is_scheduled=true\n");
        let (mut plan, mut caveats) = (Plan::default(), Vec::new());
        fill(&mut plan, &a, &hlo, &mut caveats);
        assert_eq!(plan.alias_bytes, 0);
        assert_eq!(category(&a.allocations[0]), Category::Parameter);
        assert_eq!(category(&a.allocations[5]), Category::ThreadLocal);
        assert!(is_temp(&a.allocations[6]) && is_indefinite(&a.allocations[3]));
    }
}
