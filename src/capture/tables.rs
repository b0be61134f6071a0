//! Where a plane's tables start, found from the plane's end.
//!
//! A plane's tables (its event metadata, stat metadata and plane stats, fields 4, 5
//! and 6) follow its lines (field 3), because encoders write fields in number order,
//! yet the tables are needed to
//! read the lines. Finding them by walking every line's header means reading a plane
//! of many short lines twice, which in the browser is most of the cost of a large
//! capture. So they are looked for from the plane's end: the tables are the longest
//! run of well-formed table fields that ends exactly at the end of the plane.
//!
//! The answer is a guess: bytes inside the last line could, by chance, also read as
//! table fields that chain up to the real tables. It is confirmed by the walk of the
//! lines, which meets the tables where the guess says or does not (see
//! `Plane::confirm_tables`); a plane whose guess fails is read again by walking.

use crate::source::ByteSource;
use crate::wire::fields::{
    MAP_ENTRY_KEY, MAP_ENTRY_VALUE, XEVENT_METADATA_CHILD_ID, XEVENT_METADATA_DISPLAY_NAME,
    XEVENT_METADATA_NAME, XEVENT_METADATA_OWN_ID, XEVENT_METADATA_PAST_LAST, XEVENT_METADATA_STATS,
    XPLANE_EVENT_METADATA_TAG, XPLANE_STATS_TAG, XPLANE_STAT_METADATA_TAG, XSTAT_BYTES_VALUE,
    XSTAT_DOUBLE_VALUE, XSTAT_INT64_VALUE, XSTAT_METADATA_DESCRIPTION, XSTAT_METADATA_ID,
    XSTAT_METADATA_NAME, XSTAT_METADATA_OWN_ID, XSTAT_METADATA_PAST_LAST, XSTAT_PAST_LAST,
    XSTAT_REF_VALUE, XSTAT_STR_VALUE, XSTAT_UINT64_VALUE,
};
use crate::wire::{decode_varint, read_payload, Fields, Value};

/// How much of the plane's end is read first; four times more each time the tables
/// may start before it.
const FIRST_TAIL: u64 = 1 << 20;
/// The longest tail read; tables larger than this are found by walking the lines.
const MAX_TAIL: u64 = 64 << 20;
/// A start found this close to the beginning of a tail read may be an entry inside
/// tables that begin before it: the tail is read again, longer.
const SETTLED_AFTER: usize = 64 << 10;

/// Where the tables of the plane whose lines start at `lines_from` (after its id and
/// name) and which ends at `end` are likely to start; `None` if that cannot be told
/// from a tail of at most [`MAX_TAIL`] bytes, or the tail cannot be read.
pub(super) fn find(src: &dyn ByteSource, lines_from: u64, end: u64) -> Option<u64> {
    let mut tail = FIRST_TAIL;
    loop {
        let start = end.saturating_sub(tail).max(lines_from);
        let bytes = read_payload(src, start, end.saturating_sub(start)).ok()?;
        let first = earliest_start(&bytes)?;
        let whole = start == lines_from;
        // Without a table field in the tail, the tables (if any) start before it.
        let settled = first < bytes.len() && first >= SETTLED_AFTER;
        if whole || settled {
            return start.checked_add(u64::try_from(first).ok()?);
        }
        if tail >= MAX_TAIL {
            return None;
        }
        tail = tail.saturating_mul(4);
    }
}

/// The first position in `bytes` from which well-formed table fields run exactly to
/// the end (`bytes.len()` when none does). Computed from the end backwards, so each
/// position is tried once: a field counts only if the next one starts a run too.
/// `None` when checking payloads took too long (hostile bytes can make many
/// overlapping candidates; real tables cost about one check per field).
fn earliest_start(bytes: &[u8]) -> Option<usize> {
    earliest_start_within(bytes, bytes.len().saturating_mul(4).saturating_add(4096))
}

/// [`earliest_start`], reading at most `budget` fields of payloads.
fn earliest_start_within(bytes: &[u8], budget: usize) -> Option<usize> {
    let n = bytes.len();
    let mut runs_to_end = Bits::new(n.checked_add(1)?);
    runs_to_end.set(n);
    let mut checker = Checker {
        fields_left: budget,
    };
    let mut earliest = n;
    for at in (0..n).rev() {
        let Some(rest) = bytes.get(at..) else {
            continue;
        };
        let Some((payload_at, len)) = table_field_frame(rest) else {
            continue;
        };
        let Some(next) = payload_at.checked_add(len).and_then(|e| e.checked_add(at)) else {
            continue;
        };
        // The cheap check first: most candidates do not land on a run.
        if !runs_to_end.get(next) {
            continue;
        }
        let well_formed = rest
            .split_first()
            .zip(rest.get(payload_at..payload_at.saturating_add(len)))
            .is_some_and(|((&key, _), payload)| checker.table_payload_ok(key, payload));
        if checker.fields_left == 0 {
            return None;
        }
        if well_formed {
            runs_to_end.set(at);
            earliest = at;
        }
    }
    Some(earliest)
}

/// For a field with a table key (one byte each, all length-delimited: 0x22, 0x2a,
/// 0x32) at the start of `bytes`: where its payload starts and its length.
fn table_field_frame(bytes: &[u8]) -> Option<(usize, usize)> {
    let (&key, rest) = bytes.split_first()?;
    if !matches!(
        key,
        XPLANE_EVENT_METADATA_TAG | XPLANE_STAT_METADATA_TAG | XPLANE_STATS_TAG
    ) {
        return None;
    }
    let (len, used) = decode_varint(rest).ok()?;
    let len = usize::try_from(len).ok()?;
    (len <= rest.len().saturating_sub(used)).then_some((used.checked_add(1)?, len))
}

/// Checks payloads against the schema, within a budget of fields read.
struct Checker {
    fields_left: usize,
}

impl Checker {
    /// Whether a table field's payload has the shape its key says, every field typed
    /// as the schema types it: an event metadata entry, a stat metadata entry, a plane
    /// stat. Strict on purpose: the bytes of events (with their varint offsets) do not
    /// pass as entries.
    fn table_payload_ok(&mut self, key: u8, payload: &[u8]) -> bool {
        match key {
            XPLANE_EVENT_METADATA_TAG => self.map_entry_ok(payload, Self::event_metadata_ok),
            XPLANE_STAT_METADATA_TAG => self.map_entry_ok(payload, Self::stat_metadata_ok),
            _ => self.stat_ok(payload),
        }
    }

    /// A map entry: an int64 key and a value, which must be there.
    fn map_entry_ok(&mut self, payload: &[u8], value_ok: fn(&mut Self, &[u8]) -> bool) -> bool {
        let mut has_value = false;
        let ok = self.all_fields(payload, |checker, field, value| match (field, value) {
            (MAP_ENTRY_KEY, Value::Varint(_)) => true,
            (MAP_ENTRY_VALUE, Value::Bytes(b)) => {
                has_value = true;
                value_ok(checker, b)
            }
            _ => false,
        });
        ok && has_value
    }

    // Inside an entry's value, fields past the schema's are accepted whatever their
    // type, as a newer writer may add some; the entry itself stays strict.

    fn event_metadata_ok(&mut self, bytes: &[u8]) -> bool {
        self.all_fields(bytes, |checker, field, value| match (field, value) {
            // `child_id` is repeated int64: unpacked (varints) or packed (bytes).
            (XEVENT_METADATA_OWN_ID | XEVENT_METADATA_CHILD_ID, Value::Varint(_)) => true,
            (
                XEVENT_METADATA_NAME..=XEVENT_METADATA_DISPLAY_NAME | XEVENT_METADATA_CHILD_ID,
                Value::Bytes(_),
            ) => true,
            (XEVENT_METADATA_STATS, Value::Bytes(stat)) => checker.stat_ok(stat),
            (XEVENT_METADATA_PAST_LAST.., _) => true,
            _ => false,
        })
    }

    fn stat_metadata_ok(&mut self, bytes: &[u8]) -> bool {
        self.all_fields(bytes, |_, field, value| {
            matches!(
                (field, value),
                (XSTAT_METADATA_OWN_ID, Value::Varint(_))
                    | (
                        XSTAT_METADATA_NAME..=XSTAT_METADATA_DESCRIPTION,
                        Value::Bytes(_)
                    )
                    | (XSTAT_METADATA_PAST_LAST.., _)
            )
        })
    }

    fn stat_ok(&mut self, bytes: &[u8]) -> bool {
        self.all_fields(bytes, |_, field, value| {
            matches!(
                (field, value),
                (
                    XSTAT_METADATA_ID | XSTAT_UINT64_VALUE | XSTAT_INT64_VALUE | XSTAT_REF_VALUE,
                    Value::Varint(_)
                ) | (XSTAT_DOUBLE_VALUE, Value::Fixed64(_))
                    | (XSTAT_STR_VALUE | XSTAT_BYTES_VALUE, Value::Bytes(_))
                    | (XSTAT_PAST_LAST.., _)
            )
        })
    }

    /// Whether `bytes` is a sequence of well-framed fields that all pass `ok`; false
    /// once the budget is spent.
    fn all_fields(
        &mut self,
        bytes: &[u8],
        mut ok: impl FnMut(&mut Self, u32, Value<'_>) -> bool,
    ) -> bool {
        let mut fields = Fields::new(bytes);
        loop {
            let Some(left) = self.fields_left.checked_sub(1) else {
                return false;
            };
            self.fields_left = left;
            match fields.next_field() {
                Ok(None) => return true,
                Ok(Some((field, value))) if ok(self, field, value) => {}
                _ => return false,
            }
        }
    }
}

/// A fixed-size set of positions.
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Self {
        Bits(vec![0; len.div_ceil(64)])
    }

    fn set(&mut self, i: usize) {
        if let Some(word) = self.0.get_mut(i / 64) {
            *word |= 1 << (i % 64);
        }
    }

    fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;
    use crate::wire::encode_varint as varint;

    fn field(key: u8, payload: &[u8], out: &mut Vec<u8>) {
        out.push(key);
        varint(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }

    fn event_metadata(id: u64, name: &str) -> Vec<u8> {
        let mut value = vec![0x08];
        varint(id, &mut value);
        field(0x12, name.as_bytes(), &mut value);
        let mut entry = vec![0x08];
        varint(id, &mut entry);
        field(0x12, &value, &mut entry);
        entry
    }

    /// A line of events as encoders write them: metadata id, offset, duration.
    fn line(events: u64) -> Vec<u8> {
        let mut line = vec![0x08, 0x01];
        for i in 0..events {
            let mut event = vec![0x08, 0x22, 0x10];
            varint(1000 + i, &mut event);
            event.extend([0x18, 0x22]);
            field(0x22, &event, &mut line);
        }
        line
    }

    #[test]
    fn the_tables_are_found_after_lines_of_events_whatever_their_ids() {
        // Event ids and offsets full of table keys (0x22 '"', 0x2a '*', 0x32 '2').
        let mut plane = Vec::new();
        for _ in 0..3 {
            field(0x1a, &line(50), &mut plane);
        }
        let tables_at = plane.len();
        field(0x22, &event_metadata(0x22, "MemoryAllocation"), &mut plane);
        field(0x22, &event_metadata(0x2a, "\"*2\"*2"), &mut plane);
        let mut stat_name = vec![0x08, 0x32];
        field(0x12, &[0x08, 0x32, 0x12, 0x01, b'x'], &mut stat_name);
        field(0x2a, &stat_name, &mut plane);
        field(0x32, &[0x08, 0x32, 0x18, 0x07], &mut plane);
        assert_eq!(earliest_start(&plane), Some(tables_at));
        assert_eq!(find(&plane, 0, plane.len() as u64), Some(tables_at as u64));
    }

    #[test]
    fn checking_stops_when_its_budget_is_spent() {
        let mut plane = Vec::new();
        field(0x1a, &line(5), &mut plane);
        let tables_at = plane.len();
        for id in 0..100 {
            field(0x22, &event_metadata(id, "an event"), &mut plane);
        }
        // Each entry is a handful of fields.
        assert_eq!(earliest_start_within(&plane, 2000), Some(tables_at));
        assert_eq!(earliest_start_within(&plane, 200), None);
    }

    #[test]
    fn fields_a_newer_schema_may_add_inside_entries_are_accepted() {
        let mut plane = Vec::new();
        field(0x1a, &line(5), &mut plane);
        let tables_at = plane.len();
        let mut value = vec![0x08, 0x07];
        field(0x12, b"MemoryAllocation", &mut value);
        field(0x4a, b"a field 9", &mut value);
        let mut entry = vec![0x08, 0x07];
        field(0x12, &value, &mut entry);
        field(0x22, &entry, &mut plane);
        assert_eq!(earliest_start(&plane), Some(tables_at));
    }

    #[test]
    fn a_plane_without_tables_ends_where_its_lines_end() {
        let mut plane = Vec::new();
        field(0x1a, &line(5), &mut plane);
        assert_eq!(earliest_start(&plane), Some(plane.len()));
    }

    #[test]
    fn a_field_the_tables_cannot_hold_leaves_no_run_to_the_end() {
        let mut plane = Vec::new();
        field(0x1a, &line(5), &mut plane);
        field(0x22, &event_metadata(7, "x"), &mut plane);
        // An unknown field 7 after the tables.
        field(0x3a, b"?", &mut plane);
        assert_eq!(earliest_start(&plane), Some(plane.len()));
    }
}
