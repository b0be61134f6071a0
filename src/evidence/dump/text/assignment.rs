//! `*-buffer-assignment.txt`: every allocation of the plan with the values placed in it.
//!
//! ```text
//! allocation 2: size 196608, parameter 3, shape |f32[128,384]| at ShapeIndex {}, maybe-live-out:
//!  value: <760 params_0___wqkv__.1 @0> (size=196608,offset=0): f32[128,384]{1,0}
//! allocation 51: size 63356928, preallocated-temp:
//!  value: <225 arg_tuple.3{0} (phi) @0> (size=4,offset=0): s32[]
//! Total bytes used: 65978616 (62.92MiB)
//! ```
//!
//! Flags after the size (`color C`, `parameter P`, `shape |…| at ShapeIndex {…}`,
//! `output shape is |…|`, `constant`, `thread-local`, `maybe-live-out`,
//! `preallocated-temp`) are split on `, ` outside the `|…|` shapes, which hold commas.

/// One `allocation N:` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allocation {
    pub index: i64,
    pub size: u64,
    /// The memory color (0, the default device memory, is not printed).
    pub color: i64,
    /// The entry parameter the allocation holds, with its shape index.
    pub parameter: Option<(i64, Vec<i64>)>,
    pub maybe_live_out: bool,
    pub thread_local: bool,
    pub constant: bool,
    /// Its values, in id order as XLA prints them.
    pub values: Vec<Value>,
}

/// One ` value:` line: an HLO value and where it sits in its allocation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Value {
    pub id: i64,
    /// The defining instruction.
    pub instruction: String,
    /// The shape index within the instruction's (tuple) shape.
    pub index: Vec<i64>,
    pub size: u64,
    pub offset: u64,
    /// As printed, layout included.
    pub shape: String,
    /// A loop's or conditional's merge of values (`(phi)`): always one buffer with them.
    pub phi: bool,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Assignment {
    pub allocations: Vec<Allocation>,
    /// `Total bytes used:` when the file has it (some XLA versions; others print it in
    /// the values file).
    pub total_bytes_used: Option<u64>,
    /// Allocation or value lines that could not be read.
    pub unread_lines: usize,
}

/// Reads the file; lines it does not know are skipped.
pub fn parse(text: &str) -> Assignment {
    let mut out = Assignment::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("allocation ") {
            match allocation(rest) {
                Some(a) => out.allocations.push(a),
                None => out.unread_lines = out.unread_lines.saturating_add(1),
            }
        } else if let Some(rest) = line.strip_prefix(" value: ") {
            match (value(rest), out.allocations.last_mut()) {
                (Some(v), Some(a)) => a.values.push(v),
                _ => out.unread_lines = out.unread_lines.saturating_add(1),
            }
        } else if let Some(rest) = line.strip_prefix("Total bytes used: ") {
            out.total_bytes_used = out.total_bytes_used.or(leading_number(rest));
        }
    }
    out
}

/// `Total bytes used: N (…)` in any dump file, or `None`.
pub fn total_bytes_used(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("Total bytes used: "))
        .and_then(leading_number)
}

/// The number a text starts with (`65978616 (62.92MiB)` → 65978616).
pub fn leading_number(text: &str) -> Option<u64> {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.get(..end)?.parse().ok()
}

/// `51: size 63356928, preallocated-temp:` (after `allocation `).
fn allocation(rest: &str) -> Option<Allocation> {
    let (index, flags) = rest.split_once(": ")?;
    let flags = flags.trim_end().strip_suffix(':').unwrap_or(flags);
    let mut a = Allocation {
        index: index.parse().ok()?,
        ..Default::default()
    };
    let mut has_size = false;
    for part in split_flags(flags) {
        if let Some(size) = part.strip_prefix("size ") {
            a.size = size.parse().ok()?;
            has_size = true;
        } else if let Some(color) = part.strip_prefix("color ") {
            a.color = color.parse().ok()?;
        } else if let Some(number) = part.strip_prefix("parameter ") {
            a.parameter = Some((number.parse().ok()?, Vec::new()));
        } else if let Some(shape) = part.strip_prefix("shape |") {
            let index = shape.rsplit_once("at ShapeIndex ").map(|(_, i)| i);
            if let (Some(p), Some(i)) = (a.parameter.as_mut(), index.and_then(shape_index)) {
                p.1 = i;
            }
        } else {
            match part {
                "maybe-live-out" => a.maybe_live_out = true,
                "thread-local" => a.thread_local = true,
                "constant" => a.constant = true,
                _ => {} // `output shape is |…|`, `preallocated-temp`: derived from the rest
            }
        }
    }
    has_size.then_some(a)
}

/// Splits on `, ` outside `|…|` shapes and `{…}` shape indices.
fn split_flags(flags: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut in_shape, mut braces, mut start) = (false, 0usize, 0usize);
    let mut chars = flags.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '|' => in_shape = !in_shape,
            '{' if !in_shape => braces = braces.saturating_add(1),
            '}' if !in_shape => braces = braces.saturating_sub(1),
            ',' if !in_shape && braces == 0 && matches!(chars.peek(), Some((_, ' '))) => {
                parts.extend(flags.get(start..i));
                start = i.saturating_add(2);
            }
            _ => {}
        }
    }
    parts.extend(flags.get(start..));
    parts
}

/// `<760 copy.96 @0> (size=131072,offset=63111168): f32[128,256]{1,0}` (after ` value: `).
fn value(rest: &str) -> Option<Value> {
    let rest = rest.strip_prefix('<')?;
    let (head, tail) = rest.split_once("> (size=")?;
    let mut words = head.split_whitespace();
    let id = words.next()?.parse().ok()?;
    let (instruction, index) = split_index(words.next()?)?;
    let phi = words.any(|w| w == "(phi)");
    let (size, tail) = tail.split_once(",offset=")?;
    let (offset, shape) = tail.split_once("): ")?;
    Some(Value {
        id,
        instruction: instruction.to_owned(),
        index,
        size: size.parse().ok()?,
        offset: offset.parse().ok()?,
        shape: shape.trim_end().to_owned(),
        phi,
    })
}

/// `all-reduce.3{0}` → (`all-reduce.3`, [0]); `copy.96` → (`copy.96`, []).
pub fn split_index(token: &str) -> Option<(&str, Vec<i64>)> {
    match token.find('{') {
        Some(open) => Some((token.get(..open)?, shape_index(token.get(open..)?)?)),
        None => Some((token, Vec::new())),
    }
}

/// `{}`, `{0}`, `{1,2}` → the indices.
pub fn shape_index(text: &str) -> Option<Vec<i64>> {
    let inside = text.trim().strip_prefix('{')?.strip_suffix('}')?;
    if inside.trim().is_empty() {
        return Some(Vec::new());
    }
    inside.split(',').map(|i| i.trim().parse().ok()).collect()
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    const SAMPLE: &str = "BufferAssignment:
allocation 0: size 524288, parameter 12, shape |f32[4,256,128]| at ShapeIndex {}:
 value: <759 x.1 @0> (size=524288,offset=0): f32[4,256,128]{2,1,0}
allocation 2: size 196608, parameter 3, shape |(f32[128,384], s32[])| at ShapeIndex {0}, maybe-live-out:
 value: <760 params_0___wqkv__.1 @0> (size=196608,offset=0): f32[128,384]{1,0}
 value: <906 multiply_subtract_fusion.8 @0> (size=196608,offset=0): f32[128,384]{1,0}
allocation 14: size 104, output shape is |(f32[128,256], /*index=5*/f32[])|, maybe-live-out:
 value: <934 tuple{} @0> (size=104,offset=0): (f32[128,256]{1,0}, f32[])
allocation 16: size 4, constant:
allocation 21: size 4, thread-local:
allocation 30: size 64, color 5, preallocated-temp:
 value: <225 arg_tuple.3{0} (phi) @0> (size=4,offset=60): s32[]
allocation x: size 4:
 value: <bad
Total bytes used: 65978616 (62.92MiB)
";

    #[test]
    fn reads_allocations_and_their_flags() {
        let a = parse(SAMPLE);
        assert_eq!(a.allocations.len(), 6);
        assert_eq!(a.unread_lines, 2);
        assert_eq!(a.total_bytes_used, Some(65978616));
        let [param, donated, output, constant, local, temp] = &a.allocations[..] else {
            panic!("six allocations");
        };
        assert_eq!((param.index, param.size), (0, 524288));
        assert_eq!(param.parameter, Some((12, vec![])));
        assert!(!param.maybe_live_out);
        assert_eq!(donated.parameter, Some((3, vec![0])));
        assert!(donated.maybe_live_out);
        assert_eq!(donated.values.len(), 2);
        assert!(output.maybe_live_out && output.parameter.is_none());
        assert!(constant.constant && local.thread_local);
        assert_eq!(temp.color, 5);
    }

    #[test]
    fn reads_values_with_tuple_indices_and_phis() {
        let a = parse(SAMPLE);
        let v = &a.allocations[2].values[0];
        assert_eq!(
            (v.id, v.instruction.as_str(), v.index.as_slice()),
            (934, "tuple", &[][..])
        );
        assert_eq!(v.shape, "(f32[128,256]{1,0}, f32[])");
        let v = &a.allocations[5].values[0];
        assert_eq!(
            (v.instruction.as_str(), v.index.as_slice()),
            ("arg_tuple.3", &[0][..])
        );
        assert_eq!((v.size, v.offset), (4, 60));
        assert!(v.phi && !a.allocations[0].values[0].phi);
    }

    #[test]
    fn splits_flags_outside_shapes() {
        assert_eq!(
            split_flags(
                "size 8, parameter 0, shape |(f32[1], s32[])| at ShapeIndex {0,1}, maybe-live-out"
            ),
            vec![
                "size 8",
                "parameter 0",
                "shape |(f32[1], s32[])| at ShapeIndex {0,1}",
                "maybe-live-out"
            ]
        );
        assert_eq!(split_index("a{1,2}"), Some(("a", vec![1, 2])));
        assert_eq!(split_index("a{x}"), None);
        assert_eq!(leading_number("12 (x)"), Some(12));
        assert_eq!(leading_number("x"), None);
    }

    #[test]
    fn refuses_broken_lines() {
        for line in [
            "allocation 1: size -4:",
            "allocation 1: size 99999999999999999999999:",
            "allocation 1: color 2:",
            "allocation : size 4:",
        ] {
            assert_eq!(parse(line).unread_lines, 1, "{line}");
        }
        let orphan = " value: <1 a @0> (size=4,offset=0): f32[]";
        assert_eq!(parse(orphan).unread_lines, 1);
    }
}
