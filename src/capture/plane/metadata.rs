//! A plane's header and interning tables: event metadata and stat metadata, read
//! from the wire.

use crate::capture::stat::{OwnedStat, StatValue};
use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::fields::{
    MAP_ENTRY_KEY, MAP_ENTRY_VALUE, XEVENT_METADATA_DISPLAY_NAME, XEVENT_METADATA_NAME,
    XEVENT_METADATA_OWN_ID, XEVENT_METADATA_STATS, XPLANE_ID, XPLANE_NAME, XSTAT_BYTES_VALUE,
    XSTAT_DOUBLE_VALUE, XSTAT_INT64_VALUE, XSTAT_METADATA_ID, XSTAT_METADATA_NAME,
    XSTAT_METADATA_OWN_ID, XSTAT_REF_VALUE, XSTAT_STR_VALUE, XSTAT_UINT64_VALUE,
};
use crate::wire::{Fields, StreamReader, StreamValue, Value};

use super::{EventMetadata, INLINE_BYTES_LIMIT, MAX_NAME, MAX_STATS_KEPT};

/// Where the header of the plane at `[start, end)` ends: the first field that is not
/// its id or name (its first line, as encoders write it), or `end`.
pub(super) fn header_end(src: &dyn ByteSource, start: u64, end: u64) -> Result<u64, Error> {
    let mut reader = StreamReader::over(src, 4096, start, end);
    loop {
        let at = reader.position();
        match reader.next_field(end)? {
            None => return Ok(end),
            Some(
                (XPLANE_ID, StreamValue::Varint(_)) | (XPLANE_NAME, StreamValue::Bytes { .. }),
            ) => {}
            Some(_) => return Ok(at),
        }
    }
}

pub(in crate::capture) fn read_plane_name(
    src: &dyn ByteSource,
    offset: u64,
    len: u64,
) -> Result<String, Error> {
    let end = offset.saturating_add(len);
    let mut reader = StreamReader::over(src, 4096, offset, end);
    while let Some((field, value)) = reader.next_field(end)? {
        if let (XPLANE_NAME, StreamValue::Bytes { offset, len }) = (field, value) {
            return Ok(
                String::from_utf8_lossy(reader.bytes(offset, len.min(MAX_NAME))?).into_owned(),
            );
        }
    }
    Ok(String::new())
}

pub(super) fn read_event_metadata_entry(
    reader: &mut StreamReader<'_>,
    offset: u64,
    len: u64,
) -> Result<Option<EventMetadata>, Error> {
    // A map entry: an int64 key, an XEventMetadata value.
    let end = offset.saturating_add(len);
    reader.seek(offset);
    let mut key = None;
    let mut meta = None;
    while let Some((field, value)) = reader.next_field(end)? {
        match (field, value) {
            (MAP_ENTRY_KEY, StreamValue::Varint(v)) => key = Some(v as i64),
            (MAP_ENTRY_VALUE, StreamValue::Bytes { offset, len }) => {
                let resume = reader.position();
                meta = Some(read_event_metadata(
                    reader,
                    offset,
                    offset.saturating_add(len),
                )?);
                reader.seek(resume);
            }
            _ => {}
        }
    }
    Ok(meta.map(|mut m: EventMetadata| {
        if m.id == 0 {
            m.id = key.unwrap_or(0);
        }
        m
    }))
}

pub(super) fn read_event_metadata(
    reader: &mut StreamReader<'_>,
    start: u64,
    end: u64,
) -> Result<EventMetadata, Error> {
    reader.seek(start);
    let mut meta = EventMetadata::default();
    while let Some((field, value)) = reader.next_field(end)? {
        match (field, value) {
            (XEVENT_METADATA_OWN_ID, StreamValue::Varint(v)) => meta.id = v as i64,
            (XEVENT_METADATA_NAME, StreamValue::Bytes { offset, len }) => {
                meta.name = String::from_utf8_lossy(reader.bytes(offset, len)?).into_owned();
            }
            (XEVENT_METADATA_DISPLAY_NAME, StreamValue::Bytes { offset, len }) => {
                meta.display_name =
                    String::from_utf8_lossy(reader.bytes(offset, len)?).into_owned();
            }
            (XEVENT_METADATA_STATS, StreamValue::Bytes { offset, len })
                if meta.stats.len() < MAX_STATS_KEPT =>
            {
                let resume = reader.position();
                if let Some(stat) = read_metadata_stat(reader, offset, offset.saturating_add(len))?
                {
                    meta.stats.push(stat);
                }
                reader.seek(resume);
            }
            _ => {}
        }
    }
    Ok(meta)
}

/// Like [`parse_stat`], but leaves a large `bytes_value` in the file.
pub(super) fn read_metadata_stat(
    reader: &mut StreamReader<'_>,
    start: u64,
    end: u64,
) -> Result<Option<OwnedStat>, Error> {
    reader.seek(start);
    let mut id = 0;
    let mut value = None;
    while let Some((field, v)) = reader.next_field(end)? {
        value = match (field, v) {
            (XSTAT_METADATA_ID, StreamValue::Varint(x)) => {
                id = x;
                continue;
            }
            (XSTAT_BYTES_VALUE, StreamValue::Bytes { offset, len }) if len > INLINE_BYTES_LIMIT => {
                Some(StatValue::BytesAt { offset, len })
            }
            (XSTAT_STR_VALUE..=XSTAT_BYTES_VALUE, StreamValue::Bytes { offset, len }) => {
                let bytes = reader.bytes(offset, len)?;
                Some(if field == XSTAT_STR_VALUE {
                    StatValue::Str(String::from_utf8_lossy(bytes).into())
                } else {
                    StatValue::Bytes(bytes.into())
                })
            }
            (XSTAT_DOUBLE_VALUE, StreamValue::Fixed64(x)) => {
                Some(StatValue::Double(f64::from_bits(x)))
            }
            (XSTAT_UINT64_VALUE, StreamValue::Varint(x)) => Some(StatValue::Uint(x)),
            (XSTAT_INT64_VALUE, StreamValue::Varint(x)) => Some(StatValue::Int(x as i64)),
            (XSTAT_REF_VALUE, StreamValue::Varint(x)) => Some(StatValue::Ref(x)),
            _ => continue,
        };
    }
    Ok(value.map(|value| OwnedStat {
        metadata_id: id,
        value,
    }))
}

pub(super) fn parse_stat_metadata_entry(bytes: &[u8]) -> Option<(u64, String)> {
    let mut fields = Fields::new(bytes);
    let mut key = None;
    let mut id = None;
    let mut name = String::new();
    while let Ok(Some((field, value))) = fields.next_field() {
        match (field, value) {
            (MAP_ENTRY_KEY, Value::Varint(v)) => key = Some(v),
            (MAP_ENTRY_VALUE, Value::Bytes(b)) => {
                let mut inner = Fields::new(b);
                while let Ok(Some((f, v))) = inner.next_field() {
                    match (f, v) {
                        (XSTAT_METADATA_OWN_ID, Value::Varint(x)) => id = Some(x),
                        (XSTAT_METADATA_NAME, Value::Bytes(s)) => {
                            name = String::from_utf8_lossy(s).into_owned()
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Some((id.or(key)?, name))
}
