//! An event as the line walk meets it: its header read from the wire bytes, its
//! stats decoded on demand, and the visitor that receives events.

use crate::capture::stat::{parse_stat, stat_value, StatRef};
use crate::wire::fields::{
    XEVENT_DURATION_PS, XEVENT_DURATION_PS_TAG, XEVENT_METADATA_ID, XEVENT_METADATA_ID_TAG,
    XEVENT_NUM_OCCURRENCES, XEVENT_OFFSET_PS, XEVENT_OFFSET_PS_TAG, XEVENT_STATS, XEVENT_STATS_TAG,
    XSTAT_METADATA_ID_TAG,
};
use crate::wire::{decode_varint, Fields, Value};

/// The header of a line, given to visitors with each of its events.
#[derive(Debug, Clone, Default)]
pub struct LineInfo {
    pub id: i64,
    /// Empty for a visitor that does not read names ([`EventVisitor::reads_line_names`]).
    pub name: String,
    pub timestamp_ns: i64,
    /// The line's position among its plane's lines.
    pub ordinal: usize,
    /// Where the line's bytes lie in the file (its payload), to visit it again alone
    /// ([`super::Plane::visit_line_alone`]).
    pub span: std::ops::Range<u64>,
}

/// One event, borrowed from the wire bytes. Stats are decoded on demand.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub metadata_id: i64,
    pub offset_ps: i64,
    pub duration_ps: i64,
    /// Non-zero for aggregated events, which carry no time.
    pub num_occurrences: i64,
    /// Where the event's field starts in the file: a place a later walk of the same
    /// line can resume from (see [`EventVisitor::resume_at`]).
    pub file_offset: u64,
    raw: &'a [u8],
    /// Where the stats may start in `raw`: after the header when it had the usual
    /// shape (the end when it has no stats), else 0 (the stat walk then skips the
    /// header fields itself).
    stats_at: usize,
}

impl<'a> Event<'a> {
    /// An event whose header is still to be read from `raw`.
    #[inline(always)]
    fn unread(raw: &'a [u8]) -> Self {
        Event {
            metadata_id: 0,
            offset_ps: 0,
            duration_ps: 0,
            num_occurrences: 0,
            file_offset: 0,
            raw,
            stats_at: 0,
        }
    }

    #[inline]
    pub(super) fn parse(raw: &'a [u8]) -> Result<Self, crate::wire::WireError> {
        Self::parse_usual(raw).map_or_else(|| Self::parse_any(raw), Ok)
    }

    /// The header as encoders write it, `metadata_id`, `offset_ps`, `duration_ps` (each
    /// optional, in that order), followed by the stats or nothing; `None` for any other
    /// shape, which [`Event::parse_any`] reads the same way.
    #[inline(always)]
    pub(super) fn parse_usual(raw: &'a [u8]) -> Option<Self> {
        let mut event = Event::unread(raw);
        let mut pos = 0usize;
        if let Some(id) = varint_field(raw, &mut pos, XEVENT_METADATA_ID_TAG)? {
            event.metadata_id = id as i64;
        }
        let offset = varint_field(raw, &mut pos, XEVENT_OFFSET_PS_TAG)?;
        if let Some(duration) = varint_field(raw, &mut pos, XEVENT_DURATION_PS_TAG)? {
            event.duration_ps = duration as i64;
        }
        match raw.get(pos..) {
            // No stats: a walk over them starts at the end, not over the header.
            Some([]) => event.stats_at = pos,
            // The first stat is framed whole, as the general decoder requires.
            Some([XEVENT_STATS_TAG, len @ 0..=0x7f, rest @ ..])
                if offset.is_some() && usize::from(*len) <= rest.len() =>
            {
                event.stats_at = pos
            }
            _ => return None,
        }
        event.offset_ps = offset.unwrap_or(0) as i64;
        Some(event)
    }

    /// Any field order, repeated or unknown fields included.
    #[cold]
    #[inline(never)]
    pub(super) fn parse_any(raw: &'a [u8]) -> Result<Self, crate::wire::WireError> {
        let mut event = Event::unread(raw);
        let mut fields = Fields::new(raw);
        let mut timed = false;
        while let Some((field, value)) = fields.next_field()? {
            match (field, value) {
                (XEVENT_METADATA_ID, Value::Varint(v)) => event.metadata_id = v as i64,
                (XEVENT_OFFSET_PS, Value::Varint(v)) => {
                    event.offset_ps = v as i64;
                    timed = true;
                }
                (XEVENT_DURATION_PS, Value::Varint(v)) => event.duration_ps = v as i64,
                // Protobuf encoders write fields in number order, so at the first stat
                // of a timed event the header is complete (`num_occurrences`, numbered
                // after the stats, is the alternative to `offset_ps` in a oneof): the
                // stats are not walked.
                (XEVENT_STATS, _) if timed => break,
                (XEVENT_NUM_OCCURRENCES, Value::Varint(v)) => event.num_occurrences = v as i64,
                _ => {}
            }
        }
        Ok(event)
    }

    /// Calls `f` with each of the event's own stats (not its metadata's), as (stat
    /// metadata id, value); malformed stats are skipped: one bad stat should not hide
    /// the event. Inlined, for the scan's hot path.
    #[inline]
    pub fn for_each_stat(&self, f: impl FnMut(u64, StatRef<'a>)) {
        self.for_each_stat_of(|_| true, f);
    }

    /// [`Event::for_each_stat`] for the stats whose id passes `wanted`: the values of
    /// the others are not decoded.
    #[inline]
    pub fn for_each_stat_of(
        &self,
        wanted: impl Fn(u64) -> bool,
        mut f: impl FnMut(u64, StatRef<'a>),
    ) {
        let raw = self.raw;
        let mut pos = self.stats_at;
        // Stats in the usual shape (all of them, in nearly every event) in the tightest
        // loop; from the first of another shape on, every shape.
        while let Some((stat, next)) = usual_stat(raw, pos, &wanted) {
            if let Some((id, value)) = stat {
                f(id, value);
            }
            pos = next;
        }
        while pos < raw.len() {
            let read = usual_stat(raw, pos, &wanted).or_else(|| unusual_stat(raw, pos, &wanted));
            let Some((stat, next)) = read else {
                return;
            };
            // Each path above passes only stats `wanted` lets through.
            if let Some((id, value)) = stat {
                f(id, value);
            }
            pos = next;
        }
    }

    /// Whether the event is known to carry no stats: its header, read in the usual
    /// shape, ends it. (False for a header of another shape, whose stats are walked.)
    #[inline(always)]
    pub fn has_no_stats(&self) -> bool {
        self.stats_at >= self.raw.len()
    }

    /// Start time in picoseconds on the capture's clock.
    pub fn start_ps(&self, line: &LineInfo) -> i64 {
        ns_to_ps(line.timestamp_ns).saturating_add(self.offset_ps)
    }

    pub fn end_ps(&self, line: &LineInfo) -> i64 {
        self.start_ps(line).saturating_add(self.duration_ps.max(0))
    }
}

/// What a visitor asks of the events of one type ([`EventVisitor::interest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interest {
    /// Passed over without being decoded.
    Skip,
    /// Only counted, by start time ([`EventVisitor::count`]): the rest of the event is
    /// not read, nor is it given to [`EventVisitor::event`]. An event of an unusual
    /// shape is given to `event` whole instead, which must then count it the same way.
    Count,
    /// Decoded and given to [`EventVisitor::event`].
    Read,
}

/// Receives a plane's events, line by line, in file order (time order within a line).
pub trait EventVisitor {
    /// Called before a line's events; return false to skip the line.
    fn line(&mut self, _line: &LineInfo) -> bool {
        true
    }
    fn event(&mut self, line: &LineInfo, event: &Event<'_>);

    /// What the walk does with an event of this type (see [`Interest`]). The scan asks
    /// once per event, so keep it to a table lookup.
    fn interest(&mut self, _metadata_id: i64) -> Interest {
        Interest::Read
    }

    /// An event of a type the visitor only counts ([`Interest::Count`]), by its start.
    fn count(&mut self, _start_ps: i64) {}

    /// Asked once per line, before its first event: a file offset of one of its events
    /// (an earlier [`Event::file_offset`]) to skip ahead to, if the visitor needs only
    /// later events.
    fn resume_at(&mut self, _line: &LineInfo) -> Option<u64> {
        None
    }

    /// Asked after each event given to [`EventVisitor::event`] (not after those only
    /// counted): true ends the line's walk early (events are in time order).
    fn line_done(&mut self) -> bool {
        false
    }

    /// Whether the visitor reads [`LineInfo::name`]; one that does not is given lines
    /// with an empty name (a capture may have hundreds of thousands of lines, each name
    /// otherwise checked and copied).
    fn reads_line_names(&self) -> bool {
        true
    }

    /// Told after a line has been walked to its end: the starts of its first and last
    /// events, wanted or not (not told for a line without events, skipped, or left early).
    fn line_span(&mut self, _line: &LineInfo, _first_start_ps: i64, _last_start_ps: i64) {}
}

/// The varint field with one-byte key `key` at `*pos`, if that is what lies there
/// (then `*pos` moves past it); `None` if the bytes there cannot be read.
#[inline(always)]
pub(super) fn varint_field(raw: &[u8], pos: &mut usize, key: u8) -> Option<Option<u64>> {
    match raw.get(*pos..)?.split_first() {
        Some((&k, value)) if k == key => {
            let (v, n) = decode_varint(value).ok()?;
            *pos = pos.wrapping_add(1).wrapping_add(n);
            Some(Some(v))
        }
        _ => Some(None),
    }
}

/// The start of an event from its wire bytes (the line's start when they cannot be read).
pub(super) fn start_of(raw: &[u8], line: &LineInfo) -> i64 {
    Event::parse(raw)
        .map(|e| e.start_ps(line))
        .unwrap_or(ns_to_ps(line.timestamp_ns))
}

/// `ns` × 1000, saturating, as `i64::saturating_mul` gives it, but by comparing with
/// the bounds: WebAssembly has no instruction for the high half of a product, so
/// `saturating_mul` there calls a 128-bit multiply for every event (about 4% of the
/// engine's samples on a GPU capture, profiled in Node).
#[inline]
pub(crate) fn ns_to_ps(ns: i64) -> i64 {
    const BOUND: i64 = i64::MAX / 1000;
    if ns > BOUND {
        i64::MAX
    } else if ns < -BOUND {
        i64::MIN
    } else {
        // Within the bounds the product cannot wrap.
        ns.wrapping_mul(1000)
    }
}

/// The stat at `raw[pos..]` if it has the shape encoders give nearly all of them (a
/// one-byte key, length and id, then one value that fills the stat: a number, or a
/// string or bytes under 128 long), decoded where it lies, with the position after it;
/// the stat is `None` (not decoded) when its id does not pass `wanted`. `None` for any
/// other shape, which the general decoder reads the same way.
#[inline(always)]
pub(super) fn usual_stat<'a>(
    raw: &'a [u8],
    pos: usize,
    wanted: impl Fn(u64) -> bool,
) -> Option<(Option<(u64, StatRef<'a>)>, usize)> {
    let &[XEVENT_STATS_TAG, len @ 0..=0x7f, XSTAT_METADATA_ID_TAG, id @ 0..=0x7f, key] =
        raw.get(pos..)?.first_chunk::<5>()?
    else {
        return None;
    };
    framed_stat(raw, pos, len, u64::from(id), key, 5, wanted)
}

/// The stat at `raw[pos..]` when it is not in the usual shape ([`usual_stat`]): one
/// whose id takes two bytes ([`wide_stat`]), else read by the general decoder (a
/// malformed stat is `None` and skipped); `None` at a field that cannot be read.
#[inline(never)]
fn unusual_stat<'a>(
    raw: &'a [u8],
    pos: usize,
    wanted: impl Fn(u64) -> bool,
) -> Option<(Option<(u64, StatRef<'a>)>, usize)> {
    if let Some(read) = wide_stat(raw, pos, &wanted) {
        return Some(read);
    }
    let mut fields = Fields::new(raw.get(pos..).unwrap_or_default());
    let stat = match fields.next_field() {
        Ok(Some((XEVENT_STATS, Value::Bytes(b)))) => {
            parse_stat(b).ok().flatten().filter(|&(id, _)| wanted(id))
        }
        Ok(Some(_)) => None,
        Ok(None) | Err(_) => return None,
    };
    Some((stat, pos.wrapping_add(fields.position())))
}

/// [`usual_stat`] for a stat whose id takes two bytes (TensorFlow's captures number
/// thousands of stats): tried only when the usual shape is not there.
#[inline(never)]
pub(super) fn wide_stat<'a>(
    raw: &'a [u8],
    pos: usize,
    wanted: impl Fn(u64) -> bool,
) -> Option<(Option<(u64, StatRef<'a>)>, usize)> {
    let &[XEVENT_STATS_TAG, len @ 0..=0x7f, XSTAT_METADATA_ID_TAG, low @ 0x80..=0xff, high @ 0..=0x7f, key] =
        raw.get(pos..)?.first_chunk::<6>()?
    else {
        return None;
    };
    let id = u64::from(low & 0x7f) | u64::from(high) << 7;
    framed_stat(raw, pos, len, id, key, 6, wanted)
}

/// The stat framed at `pos` (`len` bytes after its key and length), of stat `id`, whose
/// value of key `key` starts `head` bytes in: see [`usual_stat`].
#[inline(always)]
pub(super) fn framed_stat<'a>(
    raw: &'a [u8],
    pos: usize,
    len: u8,
    id: u64,
    key: u8,
    head: usize,
    wanted: impl Fn(u64) -> bool,
) -> Option<(Option<(u64, StatRef<'a>)>, usize)> {
    let end = pos.wrapping_add(2).wrapping_add(usize::from(len));
    let from = pos.wrapping_add(head);
    let value = raw.get(from..end)?;
    if !wanted(id) {
        return Some((None, end));
    }
    let value = stat_value(raw, from, value, key)?;
    Some((Some((id, value)), end))
}

/// The metadata id of an event without decoding the rest: encoders write it first.
#[inline]
pub(super) fn peek_metadata_id(raw: &[u8]) -> Option<i64> {
    match raw {
        [XEVENT_METADATA_ID_TAG, b, ..] if *b < 0x80 => Some(i64::from(*b)),
        [XEVENT_METADATA_ID_TAG, rest @ ..] => Fields::new(raw)
            .next_field()
            .ok()
            .flatten()
            .and_then(|(f, v)| match (f, v) {
                (XEVENT_METADATA_ID, Value::Varint(id)) if !rest.is_empty() => Some(id as i64),
                _ => None,
            }),
        _ => None,
    }
}
