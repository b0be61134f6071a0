//! Shapes as XLA prints them — `f32[4,256]{1,0}`, `bf16[8,128]{1,0:T(8,128)(2,1)S(5)}`,
//! `(f32[2]{0}, s32[])` — read into a `ShapeProto`, so that a text plan's shapes are
//! shown and sized by the same code as a capture's ([`crate::plan::shape`]).

use crate::plan::shape as proto_shape;
use crate::proto::xla::{LayoutProto, ShapeProto};

const TUPLE: i32 = 13;
/// Element types `plan::shape` names (0 = invalid … 36).
const LAST_TYPE: i32 = 36;
/// Nesting beyond this is not a real shape; it stops a hostile line's recursion.
const MAX_DEPTH: usize = 32;

/// The shape a text starts with, or `None` when it is not one.
pub fn parse(text: &str) -> Option<ShapeProto> {
    shape_at(text.trim_start(), 0).map(|(shape, _)| shape)
}

/// Whether a printed shape is a tuple (its value is a tuple's pointer table).
pub fn is_tuple(text: &str) -> bool {
    text.trim_start().starts_with('(')
}

/// One shape at the start of `s`, and what follows it.
fn shape_at(s: &str, depth: usize) -> Option<(ShapeProto, &str)> {
    match s.strip_prefix('(') {
        Some(rest) if depth < MAX_DEPTH => tuple(rest, depth),
        Some(_) => None,
        None => array(s),
    }
}

/// The elements of a tuple after its `(`, up to and past its `)`.
fn tuple(mut rest: &str, depth: usize) -> Option<(ShapeProto, &str)> {
    let mut elements = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(')') {
            let shape = ShapeProto {
                element_type: TUPLE,
                tuple_shapes: elements,
                ..Default::default()
            };
            return Some((shape, after));
        }
        // XLA marks every fifth element: `/*index=5*/f32[2]`.
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/")?.1;
            continue;
        }
        let (element, after) = shape_at(rest, depth.saturating_add(1))?;
        elements.push(element);
        let after = after.trim_start();
        rest = after.strip_prefix(',').unwrap_or(after);
    }
}

/// `f32[4,<=8]{1,0:S(5)}` at the start of `s`, and what follows it.
fn array(s: &str) -> Option<(ShapeProto, &str)> {
    let (type_name, rest) = s.split_once('[')?;
    if type_name.is_empty() || !type_name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let (dims, mut rest) = rest.split_once(']')?;
    let dimensions = dimensions(dims)?;
    let mut layout = None;
    if let Some(after) = rest.strip_prefix('{') {
        let (inside, after) = after.split_once('}')?;
        layout = Some(layout_of(inside));
        rest = after;
    }
    let shape = ShapeProto {
        element_type: element_type(type_name),
        dimensions,
        layout,
        ..Default::default()
    };
    Some((shape, rest))
}

/// `4,<=8,16`: sizes, a dynamic dimension by its bound.
fn dimensions(text: &str) -> Option<Vec<i64>> {
    if text.trim().is_empty() {
        return Some(Vec::new());
    }
    text.split(',')
        .map(|d| {
            let d = d.trim();
            d.strip_prefix("<=").unwrap_or(d).parse().ok()
        })
        .collect()
}

/// The layout's memory space `S(n)` and element size `E(bits)`; minor-to-major and
/// tiles do not change what oomlens shows.
fn layout_of(inside: &str) -> LayoutProto {
    let mut layout = LayoutProto::default();
    let Some((_, attributes)) = inside.split_once(':') else {
        return layout;
    };
    let mut rest = attributes;
    while let Some(open) = rest.find('(') {
        let letter = rest.get(..open).and_then(|h| h.chars().last());
        let after = rest.get(open.saturating_add(1)..).unwrap_or("");
        let Some((value, tail)) = after.split_once(')') else {
            break;
        };
        let number = value.trim().parse::<i64>().ok();
        match (letter, number) {
            (Some('S'), Some(n)) => layout.memory_space = n,
            (Some('E'), Some(n)) => layout.element_size_in_bits = n,
            _ => {}
        }
        rest = tail;
    }
    layout
}

/// The `PrimitiveType` number of a type name (`f32` → 11); 0 when unknown.
fn element_type(name: &str) -> i32 {
    (1..=LAST_TYPE)
        .find(|&t| proto_shape::type_name(t) == name)
        .unwrap_or(0)
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
    use proto_shape::{format_shape, memory_space, unpadded_bytes};

    #[test]
    fn reads_arrays_with_layouts() {
        let s = parse("f32[4,4,256,256]{3,2,1,0}").unwrap();
        assert_eq!(format_shape(&s), "f32[4,4,256,256]");
        assert_eq!(unpadded_bytes(&s), 4 * 4 * 256 * 256 * 4);
        let s = parse("bf16[8,128]{1,0:T(8,128)(2,1)S(5)}").unwrap();
        assert_eq!(memory_space(&s), 5);
        assert_eq!(unpadded_bytes(&s), 8 * 128 * 2);
        let s = parse("s4[5]{0:E(4)}").unwrap();
        assert_eq!(unpadded_bytes(&s), 3);
        assert_eq!(format_shape(&parse("f32[]").unwrap()), "f32[]");
        assert_eq!(parse("f32[<=16,2]").unwrap().dimensions, vec![16, 2]);
    }

    #[test]
    fn reads_tuples_with_index_comments() {
        let text = "(f32[128,256]{1,0}, s32[], f32[2]{0}, f32[3]{0}, f32[4]{0}, /*index=5*/pred[])";
        let s = parse(text).unwrap();
        assert_eq!(s.tuple_shapes.len(), 6);
        assert_eq!(unpadded_bytes(&s), 48);
        assert_eq!(
            format_shape(&s),
            "(f32[128,256], s32[], f32[2], f32[3], f32[4], pred[])"
        );
        assert!(is_tuple(text));
        assert_eq!(
            format_shape(&parse("((f32[1]), token[])").unwrap()),
            "((f32[1]), token[])"
        );
    }

    #[test]
    fn refuses_what_is_not_a_shape() {
        for text in [
            "", "f32", "f32[a]", "(f32[1]", "[1]", "f32[1]{0", "((((", "f 32[1]",
        ] {
            assert!(parse(text).is_none(), "{text:?}");
        }
        let deep = "(".repeat(10_000);
        assert!(parse(&deep).is_none());
    }
}
