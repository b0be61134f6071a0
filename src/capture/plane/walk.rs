//! The walk over one line's events, straight from the reader's window.

use crate::capture::READ_CHUNK;
use crate::error::Error;
use crate::wire::fields::{
    XLINE_EVENTS, XLINE_EVENTS_TAG, XLINE_ID, XLINE_NAME, XLINE_TIMESTAMP_NS,
};
use crate::wire::{Fields, StreamReader, StreamValue, Value, WireError};

use super::cut::reader_at_cut;
use super::event::{peek_metadata_id, start_of, Event, EventVisitor, Interest, LineInfo};
use super::{LINE_HEADER_READ, MAX_NAME};

/// Streams one line. Encoders write fields in number order, so the header (id 1,
/// name 2, timestamp 3) precedes the events (4); a header field that arrives after
/// events is still applied to the events that follow it.
///
/// The hot loop parses events straight from the reader's window with the slice
/// parser; only a field that straddles the window's end is re-read.
///
/// A line the file ends in (`cut`) ends at its last whole event, as if it ended there.
pub(super) fn visit_line<V: EventVisitor + ?Sized>(
    reader: &mut StreamReader<'_>,
    start: u64,
    end: u64,
    ordinal: usize,
    cut: bool,
    visitor: &mut V,
) -> Result<(), Error> {
    let mut line = LineInfo {
        ordinal,
        span: start..end,
        ..LineInfo::default()
    };
    let mut announced: Option<bool> = None;
    // Starts of the first and of the latest event: the last event's bytes are kept
    // while they are in the window and decoded when it moves or the line ends.
    let mut first_start: Option<i64> = None;
    let mut last_start: Option<i64> = None;
    let mut pos = start;
    let mut at_cut = false;
    while pos < end && !at_cut {
        let mut jump = None;
        let mut last_raw: Option<&[u8]> = None;
        // Until the visitor has seen the header, read only a little: it may skip the line.
        let chunk = if announced.is_some() {
            READ_CHUNK
        } else {
            LINE_HEADER_READ
        };
        let want = usize::try_from(end.saturating_sub(pos).min(chunk as u64)).unwrap_or(0);
        let window = reader.window_at(pos, want)?;
        let complete = window.len() as u64 >= end.saturating_sub(pos);
        let mut fields = Fields::new(window);
        let mut consumed = 0usize;
        loop {
            if announced == Some(true) {
                // Most events are of types the visitor skips: pass over runs of them
                // in a tight loop, keeping only the last (for the line's span), and
                // visit the event the loop stops at, which it read whole.
                let skipped = fields.skip_small_messages(XLINE_EVENTS_TAG, |id, raw| {
                    passes_over(visitor, &line, id, raw)
                });
                if let Some(raw) = skipped.last {
                    last_raw = Some(raw);
                    consumed = fields.position();
                }
                if let Some((raw, at)) = skipped.kept {
                    last_raw = Some(raw);
                    if visit_event(visitor, &line, raw, pos.saturating_add(at as u64))? {
                        return Ok(());
                    }
                    consumed = fields.position();
                    continue;
                }
            }
            let field = match fields.next_field() {
                Ok(Some(f)) => f,
                Ok(None) => break,
                // A field cut by the window's end: re-read from its start.
                Err(WireError::Truncated | WireError::LengthPastEnd) if !complete => break,
                // The field the file ends in: the line ends before it.
                Err(WireError::Truncated | WireError::LengthPastEnd) if cut => {
                    at_cut = true;
                    break;
                }
                Err(e) => {
                    return Err(Error::Corrupt {
                        offset: pos.saturating_add(consumed as u64),
                        what: e.describe(),
                    })
                }
            };
            match field {
                (XLINE_ID, Value::Varint(v)) => line.id = v as i64,
                (XLINE_NAME, Value::Bytes(b)) if visitor.reads_line_names() => {
                    line.name = text_of(b.get(..MAX_NAME as usize).unwrap_or(b));
                }
                (XLINE_TIMESTAMP_NS, Value::Varint(v)) => line.timestamp_ns = v as i64,
                (XLINE_EVENTS, Value::Bytes(raw)) => {
                    let here = pos.saturating_add(consumed as u64);
                    if first_start.is_none() {
                        first_start = Some(start_of(raw, &line));
                    }
                    last_raw = Some(raw);
                    let wanted = match announced {
                        Some(w) => w,
                        None => {
                            let w = visitor.line(&line);
                            announced = Some(w);
                            let target = if w { visitor.resume_at(&line) } else { None };
                            if let Some(target) = target.filter(|&t| t > here && t < end) {
                                jump = Some(target);
                                break;
                            }
                            w
                        }
                    };
                    if !wanted {
                        // Nothing on this line is wanted: skip to its end.
                        return Ok(());
                    }
                    let skip = peek_metadata_id(raw)
                        .is_some_and(|id| passes_over(visitor, &line, id, raw));
                    if !skip && visit_event(visitor, &line, raw, here)? {
                        return Ok(());
                    }
                }
                _ => {}
            }
            consumed = fields.position();
        }
        if let Some(raw) = last_raw {
            last_start = Some(start_of(raw, &line));
        }
        if at_cut {
            break;
        }
        if let Some(target) = jump {
            // The events skipped over are not seen: the line's span is unknown.
            first_start = Some(i64::MIN);
            pos = target;
            continue;
        }
        if consumed == 0 {
            // One field larger than the window: read it whole (bounded by MAX_INLINE_MESSAGE).
            reader.seek(pos);
            let field = match reader.next_field(end) {
                // The field the file ends in: the line ends before it.
                Err(_) if cut && reader_at_cut(reader, pos, end) => break,
                other => other?,
            };
            match field {
                Some((XLINE_EVENTS, StreamValue::Bytes { offset, len })) => {
                    let wanted = *announced.get_or_insert_with(|| visitor.line(&line));
                    if wanted {
                        let raw = reader.bytes(offset, len)?;
                        let at = start_of(raw, &line);
                        first_start.get_or_insert(at);
                        last_start = Some(at);
                        let mut event = Event::parse(raw).map_err(|e| Error::Corrupt {
                            offset,
                            what: e.describe(),
                        })?;
                        event.file_offset = pos;
                        visitor.event(&line, &event);
                        if visitor.line_done() {
                            return Ok(());
                        }
                    }
                }
                Some(_) => {}
                None => break,
            }
            consumed = usize::try_from(reader.position().saturating_sub(pos)).unwrap_or(usize::MAX);
        }
        // A walk that consumed nothing would never end: treat it as damage.
        if consumed == 0 {
            return Err(Error::Corrupt {
                offset: pos,
                what: "a line field could not be read",
            });
        }
        pos = pos.saturating_add(consumed as u64);
    }
    if let (Some(first), Some(last)) = (first_start, last_start) {
        if first != i64::MIN {
            visitor.line_span(&line, first, last);
        }
    }
    Ok(())
}

/// Whether the walk passes over the event in `raw`, of type `id`, without giving it
/// to `visitor`: one of a type it skips, or one it only counts (counted here from the
/// usual header; an event of another shape is given to the visitor whole, which reads
/// it as the general decoder does, or reports it damaged).
#[inline(always)]
pub(super) fn passes_over<V: EventVisitor + ?Sized>(
    visitor: &mut V,
    line: &LineInfo,
    id: i64,
    raw: &[u8],
) -> bool {
    match visitor.interest(id) {
        Interest::Skip => true,
        Interest::Count => match Event::parse_usual(raw) {
            Some(event) => {
                visitor.count(event.start_ps(line));
                true
            }
            None => false,
        },
        Interest::Read => false,
    }
}

/// Decodes the event in `raw`, whose field starts at `here` in the file, and gives it
/// to `visitor`: whether the visitor is done with the line.
#[inline(always)]
pub(super) fn visit_event<V: EventVisitor + ?Sized>(
    visitor: &mut V,
    line: &LineInfo,
    raw: &[u8],
    here: u64,
) -> Result<bool, Error> {
    // Each shape's event is handed over where it was decoded: joined into one value
    // first, the event was copied through the stack, and the copy's wide loads of
    // fields just stored one by one waited for the stores (on every event visited).
    match Event::parse_usual(raw) {
        Some(mut event) => {
            event.file_offset = here;
            visitor.event(line, &event);
        }
        None => {
            let mut event = Event::parse_any(raw).map_err(|e| Error::Corrupt {
                offset: here,
                what: e.describe(),
            })?;
            event.file_offset = here;
            visitor.event(line, &event);
        }
    }
    Ok(visitor.line_done())
}

/// `bytes` as text, invalid UTF-8 replaced as `String::from_utf8_lossy` does. A scaled
/// or long capture names hundreds of thousands of lines: valid names (all of them in
/// real captures) are checked by the standard library's fast validation, which the
/// lossy decoder's walk, chunk by chunk, took several times longer over.
fn text_of(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}
