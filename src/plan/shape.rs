//! Element types and shapes: names as XLA prints them (`f32[8,1024]`), and sizes as
//! XLA's `ComputeLogicalBufferUnpaddedSizes` computes them
//! (docs/memory-viewer.md#buffer-sizes; the type numbers:
//! docs/xplane.md#the-hlo-messages-we-read).

use crate::proto::xla::ShapeProto;

const TUPLE: i32 = 13;
const OPAQUE_TYPE: i32 = 14;
const TOKEN: i32 = 17;
const BUFFER: i32 = 34;

/// The short name of a `PrimitiveType`, as in HLO text.
pub fn type_name(element_type: i32) -> &'static str {
    match element_type {
        1 => "pred",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        12 => "f64",
        13 => "tuple",
        14 => "opaque",
        15 => "c64",
        16 => "bf16",
        17 => "token",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        21 => "s4",
        22 => "u4",
        23 => "f8e4m3b11fnuz",
        24 => "f8e5m2fnuz",
        25 => "f8e4m3fnuz",
        26 => "s2",
        27 => "u2",
        28 => "f8e4m3",
        29 => "f8e3m4",
        30 => "s1",
        31 => "u1",
        32 => "f4e2m1fn",
        33 => "f8e8m0fnu",
        34 => "buffer",
        35 => "f6e3m2fn",
        36 => "f6e2m3fn",
        _ => "unknown",
    }
}

/// Bits per element of an array type; `None` for non-array and unknown types.
pub fn bit_width(element_type: i32) -> Option<u64> {
    Some(match element_type {
        30 | 31 => 1,
        26 | 27 => 2,
        21 | 22 | 32 => 4,
        35 | 36 => 6,
        1 | 2 | 6 | 19 | 20 | 23 | 24 | 25 | 28 | 29 | 33 => 8,
        3 | 7 | 10 | 16 => 16,
        4 | 8 | 11 => 32,
        5 | 9 | 12 | 15 => 64,
        18 => 128,
        _ => return None,
    })
}

/// Bytes per element when stored whole-byte (sub-byte types take one byte each).
pub fn byte_width(element_type: i32) -> Option<u64> {
    bit_width(element_type).map(|b| b.div_ceil(8))
}

/// The element count of an array shape, saturating on absurd dimensions.
fn element_count(shape: &ShapeProto) -> u64 {
    shape
        .dimensions
        .iter()
        .fold(1u64, |acc, &d| acc.saturating_mul(d.max(0) as u64))
}

/// Size in bytes of a shape with its default (unpadded) layout, keeping
/// `element_size_in_bits`; tuples count their pointer table.
pub fn unpadded_bytes(shape: &ShapeProto) -> u64 {
    match shape.element_type {
        TUPLE => 8u64.saturating_mul(shape.tuple_shapes.len() as u64),
        TOKEN => 0,
        OPAQUE_TYPE => 8,
        BUFFER => shape.tuple_shapes.first().map(unpadded_bytes).unwrap_or(0),
        t => {
            let count = element_count(shape);
            let bits = shape
                .layout
                .as_ref()
                .map(|l| l.element_size_in_bits)
                .unwrap_or(0);
            if bits > 0 {
                count.saturating_mul(bits as u64).div_ceil(8)
            } else {
                count.saturating_mul(byte_width(t).unwrap_or(0))
            }
        }
    }
}

/// The shape XProf and XLA size for a buffer at `shape_index`: only the index's last
/// element is used, selecting a top-level tuple element (a quirk kept on purpose).
pub fn buffer_shape<'a>(shape: &'a ShapeProto, shape_index: &[i64]) -> &'a ShapeProto {
    match shape_index.last() {
        Some(&i) if shape.element_type == TUPLE => usize::try_from(i)
            .ok()
            .and_then(|i| shape.tuple_shapes.get(i))
            .unwrap_or(shape),
        _ => shape,
    }
}

/// The shape at a full shape index (walking nested tuples), for display.
pub fn subshape<'a>(shape: &'a ShapeProto, shape_index: &[i64]) -> &'a ShapeProto {
    let mut current = shape;
    for &i in shape_index {
        match usize::try_from(i)
            .ok()
            .and_then(|i| current.tuple_shapes.get(i))
        {
            Some(s) => current = s,
            None => break,
        }
    }
    current
}

/// `f32[8,8,1024,1024]`, `(f32[2], s32[])`, `token[]`.
/// The dimensions of a shape as `format_shape` writes it (`f32[8,128,512]{…}` →
/// `[8, 128, 512]`); empty for a tuple, a scalar or text that is no shape.
pub fn dims_of(shape: &str) -> Vec<u64> {
    shape
        .split_once('[')
        .and_then(|(_, d)| d.split(']').next())
        .map(|d| d.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_default()
}

pub fn format_shape(shape: &ShapeProto) -> String {
    let mut out = String::new();
    write_shape(shape, &mut out, 0);
    out
}

fn write_shape(shape: &ShapeProto, out: &mut String, depth: usize) {
    use std::fmt::Write;
    if shape.element_type == TUPLE {
        if depth > 8 {
            out.push_str("(…)");
            return;
        }
        out.push('(');
        for (i, element) in shape.tuple_shapes.iter().take(16).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_shape(element, out, depth.saturating_add(1));
        }
        if shape.tuple_shapes.len() > 16 {
            let _ = write!(
                out,
                ", … {} more",
                shape.tuple_shapes.len().saturating_sub(16)
            );
        }
        out.push(')');
        return;
    }
    out.push_str(type_name(shape.element_type));
    out.push('[');
    for (i, d) in shape.dimensions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{d}");
    }
    out.push(']');
}

/// The memory space of a shape's layout (0 = device HBM, 5 = host on TPU/GPU).
pub fn memory_space(shape: &ShapeProto) -> i64 {
    shape.layout.as_ref().map(|l| l.memory_space).unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::proto::xla::LayoutProto;

    fn array(t: i32, dims: &[i64]) -> ShapeProto {
        ShapeProto {
            element_type: t,
            dimensions: dims.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn formats_and_sizes_arrays() {
        let s = array(11, &[8, 8, 1024, 1024]);
        assert_eq!(format_shape(&s), "f32[8,8,1024,1024]");
        assert_eq!(unpadded_bytes(&s), 8 * 8 * 1024 * 1024 * 4);
        assert_eq!(unpadded_bytes(&array(16, &[3])), 6);
        assert_eq!(format_shape(&array(4, &[])), "s32[]");
    }

    #[test]
    fn sub_byte_types_use_element_size_in_bits() {
        let mut s = array(21, &[5]);
        assert_eq!(unpadded_bytes(&s), 5);
        s.layout = Some(LayoutProto {
            element_size_in_bits: 4,
            ..Default::default()
        });
        assert_eq!(unpadded_bytes(&s), 3);
    }

    #[test]
    fn tuples_token_opaque() {
        let t = ShapeProto {
            element_type: TUPLE,
            tuple_shapes: vec![array(11, &[2]), array(4, &[])],
            ..Default::default()
        };
        assert_eq!(unpadded_bytes(&t), 16);
        assert_eq!(format_shape(&t), "(f32[2], s32[])");
        assert_eq!(unpadded_bytes(buffer_shape(&t, &[0])), 8);
        assert_eq!(unpadded_bytes(&array(TOKEN, &[])), 0);
        assert_eq!(unpadded_bytes(&array(OPAQUE_TYPE, &[])), 8);
    }
}
