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
    let mut walk = LineWalk {
        line: LineInfo {
            ordinal,
            span: start..end,
            ..LineInfo::default()
        },
        announced: None,
        first_start: None,
        last_start: None,
        end,
        cut,
    };
    let mut pos = start;
    while pos < end {
        // Until the visitor has seen the header, read only a little: it may skip the line.
        let chunk = if walk.announced.is_some() {
            READ_CHUNK
        } else {
            LINE_HEADER_READ
        };
        let want = usize::try_from(end.saturating_sub(pos).min(chunk as u64)).unwrap_or(0);
        let window = reader.window_at(pos, want)?;
        let walked = walk.fields_in(window, pos, visitor)?;
        if let Some(raw) = walked.last_raw {
            walk.last_start = Some(start_of(raw, &walk.line));
        }
        let mut consumed = match walked.stop {
            Stop::LineDone => return Ok(()),
            Stop::Cut => break,
            Stop::Jump(target) => {
                // The events skipped over are not seen: the line's span is unknown.
                walk.first_start = Some(i64::MIN);
                pos = target;
                continue;
            }
            Stop::WindowEnd => walked.consumed,
        };
        if consumed == 0 {
            consumed = match walk.whole_field(reader, pos, visitor)? {
                Whole::LineDone => return Ok(()),
                Whole::LineEnd => break,
                Whole::Read(consumed) => consumed,
            };
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
    if let (Some(first), Some(last)) = (walk.first_start, walk.last_start) {
        if first != i64::MIN {
            visitor.line_span(&walk.line, first, last);
        }
    }
    Ok(())
}

/// A line being walked: its header as read so far, and what the walk learned of it.
struct LineWalk {
    line: LineInfo,
    /// Whether the visitor wants the line, once it has seen the header.
    announced: Option<bool>,
    /// Starts of the first and of the latest event: the last event's bytes are kept
    /// while they are in the window and decoded when it moves or the line ends.
    first_start: Option<i64>,
    last_start: Option<i64>,
    end: u64,
    /// Whether the file ends in the line.
    cut: bool,
}

/// How a walk over the fields in one window ended.
enum Stop {
    /// The visitor is done with the line.
    LineDone,
    /// The line ends at the field the file ends in.
    Cut,
    /// The visitor asked to resume at this offset.
    Jump(u64),
    /// No whole field is left in the window.
    WindowEnd,
}

/// What a walk over one window read: how far, the last event met, and why it stopped.
struct WindowWalk<'w> {
    consumed: usize,
    last_raw: Option<&'w [u8]>,
    stop: Stop,
}

/// How reading a field larger than the window ended.
enum Whole {
    LineDone,
    /// The line ends here (at the file's cut, or at the reader's end).
    LineEnd,
    /// The field was read: this many bytes from where it started.
    Read(usize),
}

impl LineWalk {
    /// Walks the fields in `window` (which starts at `pos` in the file): the line's
    /// header, and its events given to `visitor` (runs of skipped ones passed over in
    /// a tight loop).
    #[inline(always)]
    fn fields_in<'w, V: EventVisitor + ?Sized>(
        &mut self,
        window: &'w [u8],
        pos: u64,
        visitor: &mut V,
    ) -> Result<WindowWalk<'w>, Error> {
        let complete = window.len() as u64 >= self.end.saturating_sub(pos);
        let mut fields = Fields::new(window);
        let mut walked = WindowWalk {
            consumed: 0,
            last_raw: None,
            stop: Stop::WindowEnd,
        };
        loop {
            if self.announced == Some(true) {
                // Most events are of types the visitor skips: pass over runs of them
                // in a tight loop, keeping only the last (for the line's span), and
                // visit the event the loop stops at, which it read whole.
                let line = &self.line;
                let skipped = fields.skip_small_messages(XLINE_EVENTS_TAG, |id, raw| {
                    passes_over(visitor, line, id, raw)
                });
                if let Some(raw) = skipped.last {
                    walked.last_raw = Some(raw);
                    walked.consumed = fields.position();
                }
                if let Some((raw, at)) = skipped.kept {
                    walked.last_raw = Some(raw);
                    if visit_event(visitor, &self.line, raw, pos.saturating_add(at as u64))? {
                        walked.stop = Stop::LineDone;
                        return Ok(walked);
                    }
                    walked.consumed = fields.position();
                    continue;
                }
            }
            let field = match fields.next_field() {
                Ok(Some(f)) => f,
                Ok(None) => break,
                // A field cut by the window's end: re-read from its start.
                Err(WireError::Truncated | WireError::LengthPastEnd) if !complete => break,
                // The field the file ends in: the line ends before it.
                Err(WireError::Truncated | WireError::LengthPastEnd) if self.cut => {
                    walked.stop = Stop::Cut;
                    break;
                }
                Err(e) => {
                    return Err(Error::Corrupt {
                        offset: pos.saturating_add(walked.consumed as u64),
                        what: e.describe(),
                    })
                }
            };
            match field {
                (XLINE_ID, Value::Varint(v)) => self.line.id = v as i64,
                (XLINE_NAME, Value::Bytes(b)) if visitor.reads_line_names() => {
                    self.line.name = text_of(b.get(..MAX_NAME as usize).unwrap_or(b));
                }
                (XLINE_TIMESTAMP_NS, Value::Varint(v)) => self.line.timestamp_ns = v as i64,
                (XLINE_EVENTS, Value::Bytes(raw)) => {
                    let here = pos.saturating_add(walked.consumed as u64);
                    walked.last_raw = Some(raw);
                    if let Some(stop) = self.event_field(raw, here, visitor)? {
                        walked.stop = stop;
                        return Ok(walked);
                    }
                }
                _ => {}
            }
            walked.consumed = fields.position();
        }
        Ok(walked)
    }

    /// An event field met outside the tight loop (the line's first, or one after a
    /// header field): announces the line to the visitor if not yet done, then passes
    /// over the event or visits it. Whether the walk stops there.
    #[inline(always)]
    fn event_field<V: EventVisitor + ?Sized>(
        &mut self,
        raw: &[u8],
        here: u64,
        visitor: &mut V,
    ) -> Result<Option<Stop>, Error> {
        if self.first_start.is_none() {
            self.first_start = Some(start_of(raw, &self.line));
        }
        let wanted = match self.announced {
            Some(w) => w,
            None => {
                let w = visitor.line(&self.line);
                self.announced = Some(w);
                let target = if w {
                    visitor.resume_at(&self.line)
                } else {
                    None
                };
                if let Some(target) = target.filter(|&t| t > here && t < self.end) {
                    return Ok(Some(Stop::Jump(target)));
                }
                w
            }
        };
        if !wanted {
            // Nothing on this line is wanted: skip to its end.
            return Ok(Some(Stop::LineDone));
        }
        let skip =
            peek_metadata_id(raw).is_some_and(|id| passes_over(visitor, &self.line, id, raw));
        if !skip && visit_event(visitor, &self.line, raw, here)? {
            return Ok(Some(Stop::LineDone));
        }
        Ok(None)
    }

    /// Reads the one field at `pos` that is larger than the window, whole (bounded by
    /// MAX_INLINE_MESSAGE), and visits it if it is a wanted event.
    fn whole_field<V: EventVisitor + ?Sized>(
        &mut self,
        reader: &mut StreamReader<'_>,
        pos: u64,
        visitor: &mut V,
    ) -> Result<Whole, Error> {
        reader.seek(pos);
        let field = match reader.next_field(self.end) {
            // The field the file ends in: the line ends before it.
            Err(_) if self.cut && reader_at_cut(reader, pos, self.end) => {
                return Ok(Whole::LineEnd)
            }
            other => other?,
        };
        match field {
            Some((XLINE_EVENTS, StreamValue::Bytes { offset, len })) => {
                let wanted = *self
                    .announced
                    .get_or_insert_with(|| visitor.line(&self.line));
                if wanted {
                    let raw = reader.bytes(offset, len)?;
                    let at = start_of(raw, &self.line);
                    self.first_start.get_or_insert(at);
                    self.last_start = Some(at);
                    let mut event = Event::parse(raw).map_err(|e| Error::Corrupt {
                        offset,
                        what: e.describe(),
                    })?;
                    event.file_offset = pos;
                    visitor.event(&self.line, &event);
                    if visitor.line_done() {
                        return Ok(Whole::LineDone);
                    }
                }
            }
            Some(_) => {}
            None => return Ok(Whole::LineEnd),
        }
        let read = reader.position().saturating_sub(pos);
        Ok(Whole::Read(usize::try_from(read).unwrap_or(usize::MAX)))
    }
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
