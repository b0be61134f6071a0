//! Where the end of a file cuts a plane short: the field it cuts, and the layout of
//! what came before.

use crate::capture::{CutPart, PlaneCut};
use crate::source::ByteSource;
use crate::wire::fields::{
    XPLANE_EVENT_METADATA, XPLANE_ID, XPLANE_LINES, XPLANE_NAME, XPLANE_STATS, XPLANE_STAT_METADATA,
};
use crate::wire::{decode_varint, StreamReader, WireError};

/// A field the end of a plane cuts short (see [`super::Plane::next_field`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CutField {
    /// A length-delimited field whose key and length are whole: its bytes start at
    /// `offset` and run past the end.
    Field { field: u32, offset: u64 },
    /// The key, or a varint or length, is cut.
    KeyOrLength,
}

/// What lies at `at` in the `head` bytes read there (up to 20, fewer only where the
/// message ends at `end`): a field the end cuts short, or `None` when the field would
/// fit (the bytes are damaged, not cut).
pub(super) fn cut_field_in(head: &[u8], at: u64, end: u64) -> Option<CutField> {
    let reaches_end = at.saturating_add(head.len() as u64) >= end;
    let varint = |bytes: &[u8]| match decode_varint(bytes) {
        Ok(v) => Some(Ok(v)),
        Err(WireError::Truncated) if reaches_end => Some(Err(CutField::KeyOrLength)),
        Err(_) => None,
    };
    let (key, used) = match varint(head)? {
        Ok(v) => v,
        Err(cut) => return Some(cut),
    };
    let rest = head.get(used..).unwrap_or_default();
    let after_key = at.saturating_add(used as u64);
    let fixed = |n: u64| (after_key.saturating_add(n) > end).then_some(CutField::KeyOrLength);
    match key & 7 {
        0 => varint(rest)?.err(),
        1 => fixed(8),
        5 => fixed(4),
        2 => match varint(rest)? {
            Ok((len, n)) => {
                let offset = after_key.saturating_add(n as u64);
                (offset.saturating_add(len) > end).then_some(CutField::Field {
                    field: u32::try_from(key >> 3).unwrap_or(u32::MAX),
                    offset,
                })
            }
            Err(cut) => Some(cut),
        },
        _ => None,
    }
}

/// [`cut_field_in`] for the field at `at` of the source.
pub(super) fn cut_field(src: &dyn ByteSource, at: u64, end: u64) -> Option<CutField> {
    let mut head = [0u8; 20];
    let want = usize::try_from(end.saturating_sub(at).min(20)).unwrap_or(20);
    let n = src.read_at(at, head.get_mut(..want)?).ok()?;
    cut_field_in(head.get(..n)?, at, end)
}

/// Whether the field at `pos` of a line the file ends in is the one it ends inside.
pub(super) fn reader_at_cut(reader: &mut StreamReader<'_>, pos: u64, end: u64) -> bool {
    let head = match reader.window_at(pos, 20) {
        Ok(window) => window
            .get(..window.len().min(20))
            .unwrap_or_default()
            .to_vec(),
        Err(_) => return false,
    };
    cut_field_in(&head, pos, end).is_some()
}

/// How the file cuts the plane whose message starts at `offset` and says it ends at
/// `declared_end`, past `file_end`: the part the cut falls in and the lines before it,
/// from a walk of the plane's field keys (their bytes are skipped).
pub(in crate::capture) fn cut_layout(
    src: &dyn ByteSource,
    offset: u64,
    file_end: u64,
    declared_end: u64,
) -> PlaneCut {
    let part_of = |field: u32| match field {
        XPLANE_LINES => Some(CutPart::Lines),
        XPLANE_EVENT_METADATA => Some(CutPart::EventMetadata),
        XPLANE_STAT_METADATA => Some(CutPart::StatMetadata),
        XPLANE_STATS => Some(CutPart::Stats),
        XPLANE_ID | XPLANE_NAME => Some(CutPart::Header),
        _ => None,
    };
    let mut layout = PlaneCut {
        declared_end,
        part: CutPart::Header,
        whole_lines: 0,
    };
    let mut reader = StreamReader::over(src, 64 << 10, offset, file_end);
    loop {
        let at = reader.position();
        match reader.next_field(file_end) {
            Ok(Some((field, _))) => {
                if field == XPLANE_LINES {
                    layout.whole_lines = layout.whole_lines.saturating_add(1);
                }
                layout.part = part_of(field).unwrap_or(layout.part);
            }
            Ok(None) => break,
            Err(_) => {
                if let Some(CutField::Field { field, .. }) = cut_field(src, at, file_end) {
                    layout.part = part_of(field).unwrap_or(layout.part);
                }
                break;
            }
        }
    }
    layout
}
