//! Matching the items of two runs (buffers live at the peak, scan stacks) tier by
//! tier: each tier pairs what the earlier ones left, by a key both items must have.
//! What no tier pairs is found in one run only.
//!
//! Within a tier, items with the same key are paired first by identical instruction
//! name, then largest with largest; so a repeated buffer (nine `f32[4,4,256,256]` on
//! one source line) pairs one for one, and the surplus of either run is left over.

use std::collections::BTreeMap;

use super::model::MatchTier;
use crate::report::model::{Category, LiveBuffer, ScanStack};
use crate::report::present::role_name;

/// The outcome: pairs of indices (before, after) with the tier that paired them, and
/// the indices left in each run, all in list order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pairing {
    pub pairs: Vec<(usize, usize, MatchTier)>,
    pub only_before: Vec<usize>,
    pub only_after: Vec<usize>,
}

/// A key function: `None` when the item cannot be matched in this tier (its key
/// would be empty and so say nothing).
type Key<'t, T> = &'t dyn Fn(&'t T) -> Option<Vec<&'t str>>;

/// How the matcher sees an item: its key in each tier, its name and its size.
pub struct Matcher<'t, T> {
    pub tiers: Vec<(MatchTier, Key<'t, T>)>,
    pub name: &'t dyn Fn(&'t T) -> &'t str,
    pub bytes: &'t dyn Fn(&'t T) -> u64,
}

impl<'t, T> Matcher<'t, T> {
    pub fn pair(&self, before: &'t [T], after: &'t [T]) -> Pairing {
        let mut left_before: Vec<usize> = (0..before.len()).collect();
        let mut left_after: Vec<usize> = (0..after.len()).collect();
        let mut pairs = Vec::new();
        for (tier, key) in &self.tiers {
            // key → (before indices, after indices), in list order.
            let mut groups: BTreeMap<Vec<&str>, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
            for &i in &left_before {
                if let Some(k) = before.get(i).and_then(key) {
                    groups.entry(k).or_default().0.push(i);
                }
            }
            for &j in &left_after {
                if let Some(k) = after.get(j).and_then(key) {
                    if let Some(g) = groups.get_mut(&k) {
                        g.1.push(j);
                    }
                }
            }
            let mut paired_before = Vec::new();
            let mut paired_after = Vec::new();
            for (b, a) in groups.into_values() {
                for (i, j) in self.pair_group(before, after, b, a) {
                    pairs.push((i, j, *tier));
                    paired_before.push(i);
                    paired_after.push(j);
                }
            }
            left_before.retain(|i| !paired_before.contains(i));
            left_after.retain(|j| !paired_after.contains(j));
        }
        pairs.sort_unstable_by_key(|p| (p.0, p.1));
        Pairing {
            pairs,
            only_before: left_before,
            only_after: left_after,
        }
    }

    /// Pairs one key's items: same name first, then largest with largest.
    fn pair_group(
        &self,
        before: &'t [T],
        after: &'t [T],
        mut b: Vec<usize>,
        mut a: Vec<usize>,
    ) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let name_b = |i: usize| before.get(i).map(|x| (self.name)(x)).unwrap_or("");
        let name_a = |j: usize| after.get(j).map(|x| (self.name)(x)).unwrap_or("");
        b.retain(|&i| match a.iter().position(|&j| name_a(j) == name_b(i)) {
            Some(at) => {
                out.push((i, a.remove(at)));
                false
            }
            None => true,
        });
        let size_b = |i: &usize| before.get(*i).map(|x| (self.bytes)(x)).unwrap_or(0);
        let size_a = |j: &usize| after.get(*j).map(|x| (self.bytes)(x)).unwrap_or(0);
        b.sort_by(|x, y| {
            size_b(y)
                .cmp(&size_b(x))
                .then_with(|| name_b(*x).cmp(name_b(*y)))
        });
        a.sort_by(|x, y| {
            size_a(y)
                .cmp(&size_a(x))
                .then_with(|| name_a(*x).cmp(name_a(*y)))
        });
        out.extend(b.into_iter().zip(a));
        out
    }
}

fn non_empty(s: &str) -> bool {
    !s.is_empty()
}

fn op_source_shape(b: &LiveBuffer) -> Option<Vec<&str>> {
    (non_empty(&b.op_name) || non_empty(&b.source))
        .then(|| vec![b.op_name.as_str(), b.source.as_str(), b.shape.as_str()])
}

fn instruction_shape(b: &LiveBuffer) -> Option<Vec<&str>> {
    non_empty(&b.name).then(|| vec![b.name.as_str(), b.shape.as_str()])
}

fn shape_role(b: &LiveBuffer) -> Option<Vec<&str>> {
    non_empty(&b.shape).then(|| vec![b.shape.as_str(), role_name(b.role)])
}

/// `f32` and the dimensions' part of `f32[4,256]{1,0}`, or `None` for a tuple or a
/// shape without dimensions.
fn element_and_dims(shape: &str) -> Option<(&str, &str)> {
    let (element, rest) = shape.split_once('[')?;
    let dims = rest.split(']').next()?;
    (!element.is_empty() && !element.contains('(')).then_some((element, dims))
}

/// `f32/2` for `f32[4,256]`: element type and rank, which a changed size keeps.
const RANKS: [&str; 9] = ["0", "1", "2", "3", "4", "5", "6", "7", "8+"];

fn element_rank(shape: &str) -> Option<(&str, &'static str)> {
    let (element, dims) = element_and_dims(shape)?;
    let rank = if dims.is_empty() {
        0
    } else {
        dims.split(',').count()
    };
    Some((element, RANKS.get(rank).copied().unwrap_or("8+")))
}

fn parameter(b: &LiveBuffer) -> Option<Vec<&str>> {
    (b.category == Category::Parameter && non_empty(&b.shape)).then(|| vec![b.shape.as_str()])
}

fn op_source(b: &LiveBuffer) -> Option<Vec<&str>> {
    let (element, rank) = element_rank(&b.shape)?;
    (non_empty(&b.op_name) || non_empty(&b.source)).then(|| {
        vec![
            b.op_name.as_str(),
            b.source.as_str(),
            role_name(b.role),
            element,
            rank,
        ]
    })
}

fn buffer_name(b: &LiveBuffer) -> &str {
    &b.name
}

fn buffer_bytes(b: &LiveBuffer) -> u64 {
    b.bytes
}

/// Buffers live at the peak: parameters by shape; then by (op_name, source line,
/// shape), then (instruction name, shape), then shape within the same role, then
/// (op_name, source line) within the same role with another shape of the same element
/// type and rank.
pub fn buffers(before: &[LiveBuffer], after: &[LiveBuffer]) -> Pairing {
    Matcher {
        tiers: vec![
            (MatchTier::Parameter, &parameter),
            (MatchTier::OpNameSourceShape, &op_source_shape),
            (MatchTier::InstructionShape, &instruction_shape),
            (MatchTier::ShapeRole, &shape_role),
            (MatchTier::OpNameSource, &op_source),
        ],
        name: &buffer_name,
        bytes: &buffer_bytes,
    }
    .pair(before, after)
}

fn while_shape(s: &ScanStack) -> Option<Vec<&str>> {
    non_empty(&s.while_instruction).then(|| vec![s.while_instruction.as_str(), s.shape.as_str()])
}

fn stack_shape_role(s: &ScanStack) -> Option<Vec<&str>> {
    non_empty(&s.shape).then(|| vec![s.shape.as_str(), role_name(s.role)])
}

fn stack_name(s: &ScanStack) -> &str {
    &s.while_instruction
}

fn stack_bytes(s: &ScanStack) -> u64 {
    s.bytes
}

/// Scan stacks: by their `while` loop and shape, then by shape within the same role
/// (loop instructions are renumbered when the program changes).
pub fn scan_stacks(before: &[ScanStack], after: &[ScanStack]) -> Pairing {
    Matcher {
        tiers: vec![
            (MatchTier::WhileShape, &while_shape),
            (MatchTier::ShapeRole, &stack_shape_role),
        ],
        name: &stack_name,
        bytes: &stack_bytes,
    }
    .pair(before, after)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::report::model::Role;

    fn buf(name: &str, shape: &str, bytes: u64, op: &str, source: &str, role: Role) -> LiveBuffer {
        LiveBuffer {
            name: name.into(),
            opcode: "fusion".into(),
            shape: shape.into(),
            bytes,
            unpadded_bytes: bytes,
            category: Category::Temporary,
            role,
            source: source.into(),
            op_name: op.into(),
            memory_space: 0,
            shared_by: Vec::new(),
        }
    }

    #[test]
    fn tier_one_pairs_op_name_source_and_shape_whatever_the_instruction() {
        let before = [buf(
            "fusion.7",
            "f32[4,4]",
            64,
            "jvp()/div",
            "m.py:3",
            Role::Forward,
        )];
        let after = [buf(
            "fusion.9",
            "f32[4,4]",
            64,
            "jvp()/div",
            "m.py:3",
            Role::Forward,
        )];
        let p = buffers(&before, &after);
        assert_eq!(p.pairs, vec![(0, 0, MatchTier::OpNameSourceShape)]);
        assert!(p.only_before.is_empty() && p.only_after.is_empty());
    }

    #[test]
    fn repeated_buffers_pair_one_for_one_by_name_first() {
        let b = |n: &str| buf(n, "f32[4,4]", 64, "jvp()/div", "m.py:3", Role::Forward);
        let before = [b("x.1"), b("x.2"), b("x.3")];
        let after = [b("x.3"), b("x.1")];
        let p = buffers(&before, &after);
        assert_eq!(
            p.pairs,
            vec![
                (0, 1, MatchTier::OpNameSourceShape),
                (2, 0, MatchTier::OpNameSourceShape)
            ]
        );
        assert_eq!(p.only_before, vec![1]);
    }

    #[test]
    fn tier_two_pairs_instruction_and_shape_when_op_names_differ() {
        let before = [buf("copy.13", "f32[6,8]", 192, "", "", Role::Other)];
        let after = [
            buf("copy.13", "f32[6,8]", 192, "jit(f)/copy", "", Role::Forward),
            buf("copy.14", "f32[6,8]", 192, "", "", Role::Other),
        ];
        let p = buffers(&before, &after);
        assert_eq!(p.pairs, vec![(0, 0, MatchTier::InstructionShape)]);
        assert_eq!(p.only_after, vec![1]);
    }

    #[test]
    fn tier_three_pairs_shape_within_the_same_role_only() {
        let before = [
            buf("a", "f32[8]", 32, "", "", Role::Backward),
            buf("b", "f32[9]", 36, "", "", Role::Forward),
        ];
        let after = [
            buf("c", "f32[8]", 32, "", "", Role::Backward),
            buf("d", "f32[9]", 36, "", "", Role::Backward),
        ];
        let p = buffers(&before, &after);
        assert_eq!(p.pairs, vec![(0, 0, MatchTier::ShapeRole)]);
        assert_eq!(p.only_before, vec![1]);
        assert_eq!(p.only_after, vec![1]);
    }

    #[test]
    fn tier_four_pairs_op_name_and_source_across_shapes_largest_first() {
        let before = [
            buf(
                "s.1",
                "f32[4,256]",
                4096,
                "jvp()/dot",
                "m.py:9",
                Role::Forward,
            ),
            buf(
                "s.2",
                "f32[4,512]",
                8192,
                "jvp()/dot",
                "m.py:9",
                Role::Forward,
            ),
        ];
        let after = [
            buf(
                "t.1",
                "f32[2,256]",
                2048,
                "jvp()/dot",
                "m.py:9",
                Role::Forward,
            ),
            buf(
                "t.2",
                "f32[2,512]",
                4096,
                "jvp()/dot",
                "m.py:9",
                Role::Forward,
            ),
        ];
        let p = buffers(&before, &after);
        assert_eq!(
            p.pairs,
            vec![
                (0, 0, MatchTier::OpNameSource),
                (1, 1, MatchTier::OpNameSource)
            ]
        );
    }

    #[test]
    fn tier_four_needs_the_same_element_type_and_rank() {
        let before = [buf(
            "s.1",
            "f32[4,4,256,256]",
            1 << 22,
            "jvp()/div",
            "m.py:9",
            Role::Forward,
        )];
        let after = [
            buf(
                "t.1",
                "f32[2,4,256]",
                8192,
                "jvp()/div",
                "m.py:9",
                Role::Forward,
            ),
            buf(
                "t.2",
                "bf16[2,4,256,256]",
                1 << 20,
                "jvp()/div",
                "m.py:9",
                Role::Forward,
            ),
        ];
        let p = buffers(&before, &after);
        assert!(p.pairs.is_empty(), "{p:?}");
        assert_eq!(element_rank("f32[]"), Some(("f32", "0")));
        assert_eq!(element_rank("(f32[2], s32[])"), None);
    }

    #[test]
    fn parameters_pair_by_shape_even_when_listed_under_an_output() {
        // With donation, the parameter's allocation is listed under the output that
        // reuses it; the output of the run without donation has its own buffer.
        let mut p = buf(
            "params_1___w__.1",
            "f32[128,384]",
            196_608,
            "params[1]['w']",
            "",
            Role::Other,
        );
        p.category = Category::Parameter;
        let mut out = buf(
            "sub_fusion.8",
            "f32[128,384]",
            196_608,
            "jit(f)/sub",
            "",
            Role::Other,
        );
        out.category = Category::Output;
        let mut donated = out.clone();
        donated.category = Category::Parameter;
        let pairing = buffers(&[p, out], &[donated]);
        assert_eq!(pairing.pairs, vec![(0, 0, MatchTier::Parameter)]);
        assert_eq!(
            pairing.only_before,
            vec![1],
            "the output no longer has a buffer of its own"
        );
    }

    #[test]
    fn an_earlier_tier_wins_over_a_later_one() {
        // `x` could pair with `y` by shape and role, but `z` pairs with it by op_name.
        let before = [buf("x", "f32[4]", 16, "jvp()/exp", "m.py:1", Role::Forward)];
        let after = [
            buf("y", "f32[4]", 16, "jvp()/tanh", "m.py:2", Role::Forward),
            buf("z", "f32[4]", 16, "jvp()/exp", "m.py:1", Role::Forward),
        ];
        let p = buffers(&before, &after);
        assert_eq!(p.pairs, vec![(0, 1, MatchTier::OpNameSourceShape)]);
        assert_eq!(p.only_after, vec![0]);
    }

    #[test]
    fn scan_stacks_pair_by_loop_then_by_shape() {
        let s = |w: &str, shape: &str| ScanStack {
            shape: shape.into(),
            count: 1,
            bytes: 100,
            while_instruction: w.into(),
            role: Role::Forward,
            source: String::new(),
            op_name: String::new(),
        };
        let before = [
            s("while.14", "f32[6,8]"),
            s("while.14", "f32[6,9]"),
            s("while.3", "f32[6]"),
        ];
        let after = [s("while.12", "f32[6,8]"), s("while.3", "f32[6]")];
        let p = scan_stacks(&before, &after);
        assert_eq!(
            p.pairs,
            vec![(0, 0, MatchTier::ShapeRole), (2, 1, MatchTier::WhileShape)]
        );
        assert_eq!(p.only_before, vec![1]);
    }
}
