//! One plane: its interning tables (stat names, event metadata), read eagerly because
//! they are small, and its lines and events, walked lazily at the wire level.

use std::collections::HashMap;

use super::stat::{parse_stat, stat_value, OwnedStat, StatRef, StatValue};
use super::{CutPart, Damage, LineBoundary, PlaneCut, PlaneRef, READ_CHUNK};
use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::fields::{
    MAP_ENTRY_KEY, MAP_ENTRY_VALUE, XEVENT_DURATION_PS, XEVENT_DURATION_PS_TAG,
    XEVENT_METADATA_DISPLAY_NAME, XEVENT_METADATA_ID, XEVENT_METADATA_ID_TAG, XEVENT_METADATA_NAME,
    XEVENT_METADATA_OWN_ID, XEVENT_METADATA_STATS, XEVENT_NUM_OCCURRENCES, XEVENT_OFFSET_PS,
    XEVENT_OFFSET_PS_TAG, XEVENT_STATS, XEVENT_STATS_TAG, XLINE_EVENTS, XLINE_EVENTS_TAG, XLINE_ID,
    XLINE_NAME, XLINE_TIMESTAMP_NS, XPLANE_EVENT_METADATA, XPLANE_ID, XPLANE_LINES, XPLANE_NAME,
    XPLANE_STATS, XPLANE_STAT_METADATA, XSTAT_BYTES_VALUE, XSTAT_DOUBLE_VALUE, XSTAT_INT64_VALUE,
    XSTAT_METADATA_ID, XSTAT_METADATA_ID_TAG, XSTAT_METADATA_NAME, XSTAT_METADATA_OWN_ID,
    XSTAT_REF_VALUE, XSTAT_STR_VALUE, XSTAT_UINT64_VALUE,
};
use crate::wire::{decode_varint, Fields, StreamReader, StreamValue, Value, WireError};

/// Stat payloads up to this size are kept in memory with their metadata; larger ones
/// (a module's `Hlo Proto`) stay in the file and are read when needed.
const INLINE_BYTES_LIMIT: u64 = 4096;
/// Stats kept per event type and per plane. Real ones have a handful (device
/// properties, a module's HloProto); a hostile file could repeat one millions of times.
const MAX_STATS_KEPT: usize = 1 << 12;
/// Lines whose positions a plane keeps (16 bytes each); real planes have thousands.
pub const MAX_LINES_INDEXED: usize = 1 << 20;
/// How much of a line is read before its visitor has decided whether to walk it.
const LINE_HEADER_READ: usize = 4096;
/// Longest plane or line name kept.
const MAX_NAME: u64 = 4096;

mod segments;

pub use segments::{SegmentJoin, SegmentWalk};

/// An event type: its name and the stats shared by all its events.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct EventMetadata {
    pub id: i64,
    pub name: String,
    pub display_name: String,
    pub stats: Vec<OwnedStat>,
}

/// A plane's metadata. Its lines are not held; see [`Plane::visit_events`].
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Plane {
    pub id: i64,
    pub name: String,
    /// Stat metadata id → name (a stat's name, or an interned string value).
    pub stat_names: HashMap<u64, String>,
    pub event_metadata: HashMap<i64, EventMetadata>,
    pub stats: Vec<OwnedStat>,
    /// How many lines the plane has: 0 until a walk has counted them, for a plane read
    /// tables-first.
    pub line_count: usize,
    /// Where each line lies, `[offset, offset + len)`, for walking lines in parallel
    /// or only some of them; complete only where [`Plane::lines_indexed`] says so.
    pub lines: Vec<(u64, u64)>,
    offset: u64,
    len: u64,
    /// Not carried to another worker: damage is recorded where the reading happens.
    #[serde(skip)]
    damage: Damage,
    /// Set when the file ends inside the plane: its last field may be cut, and a line
    /// the file ends in is read up to its last whole event (see [`PlaneCut`]).
    #[serde(default)]
    cut: Option<PlaneCut>,
    /// Set when the tables were read from the plane's end (see [`Plane::open_tables_first`]):
    /// where the lines start and where the tables were taken to start. Cleared by
    /// [`Plane::confirm_tables`].
    #[serde(skip)]
    tables_guess: Option<TablesGuess>,
    /// What the first complete walk of a plane read tables-first found.
    #[serde(skip)]
    walked: std::sync::Arc<std::sync::OnceLock<Walked>>,
}

#[derive(Debug, Clone, Copy)]
struct TablesGuess {
    lines_from: u64,
    tables_from: u64,
}

/// The layout a walk of a plane's fields met: its lines, and where the first field
/// after the lines that is not a line starts (the plane's end when none is).
#[derive(Debug, Default)]
struct Walked {
    tables_at: u64,
    line_count: usize,
    lines: Vec<(u64, u64)>,
}

/// What reading one line header costs the second of two scanners, in bytes of events
/// scanned in the same time (a read of the header's page, about a microsecond): the
/// boundary is moved on by that much per line, so both finish together.
const HEADER_WORK_BYTES: u64 = 1 << 10;

/// Which of a plane's lines a walk visits.
#[derive(Clone, Copy)]
enum Share<'b> {
    All,
    /// Those before the boundary (the first of two scanners).
    Before(&'b LineBoundary),
    /// Those from the boundary on, which this walk sets at the plane's middle.
    FromMiddle(&'b LineBoundary),
    /// A segment (see `segments.rs`): the lines from offset `from` on, numbered from
    /// 0, up to the first later line whose start `stop` holds for, or to the end.
    Segment {
        from: u64,
        stop: &'b dyn Fn(u64) -> bool,
    },
}

/// How a walk of a plane's lines ended, for the walks that share a plane by segments.
#[derive(Default)]
struct WalkEnd {
    /// The layout the walk met, when the plane was read tables-first and the walk's
    /// part of it is to be joined to others' (a walk that met every line sets it on
    /// the plane itself).
    walked: Option<Walked>,
    /// The start of the other segment's line the walk stopped before.
    stopped_at: Option<u64>,
    /// How many lines the walk met (before the one it stopped at).
    lines: usize,
}

/// Reads a plane's lines one at a time (see [`Plane::line_reader`]).
pub struct LineReader<'s>(StreamReader<'s>);

/// The header of a line, given to visitors with each of its events.
#[derive(Debug, Clone, Default)]
pub struct LineInfo {
    pub id: i64,
    pub name: String,
    pub timestamp_ns: i64,
    /// The line's position among its plane's lines.
    pub ordinal: usize,
    /// Where the line's bytes lie in the file (its payload), to visit it again alone
    /// ([`Plane::visit_line_alone`]).
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
    fn parse(raw: &'a [u8]) -> Result<Self, crate::wire::WireError> {
        Self::parse_usual(raw).map_or_else(|| Self::parse_any(raw), Ok)
    }

    /// The header as encoders write it, `metadata_id`, `offset_ps`, `duration_ps` (each
    /// optional, in that order), followed by the stats or nothing; `None` for any other
    /// shape, which [`Event::parse_any`] reads the same way.
    #[inline(always)]
    fn parse_usual(raw: &'a [u8]) -> Option<Self> {
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
    fn parse_any(raw: &'a [u8]) -> Result<Self, crate::wire::WireError> {
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
    /// the event. One inlined loop, for the scan's hot path.
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
        loop {
            // One call site for `f`, so that it is inlined here.
            let usual = usual_stat(raw, pos, &wanted);
            let (stat, next) = match usual {
                Some((stat, next)) => (stat, next),
                None if pos >= raw.len() => return,
                None => match wide_stat(raw, pos, &wanted) {
                    Some(read) => read,
                    None => {
                        let mut fields = Fields::new(raw.get(pos..).unwrap_or_default());
                        let stat = match fields.next_field() {
                            Ok(Some((XEVENT_STATS, Value::Bytes(b)))) => {
                                parse_stat(b).ok().flatten().filter(|&(id, _)| wanted(id))
                            }
                            Ok(Some(_)) => None,
                            Ok(None) | Err(_) => return,
                        };
                        (stat, pos.wrapping_add(fields.position()))
                    }
                },
            };
            // Each path above passes only stats `wanted` lets through.
            if let Some((id, value)) = stat {
                f(id, value);
            }
            pos = next;
        }
    }

    /// Start time in picoseconds on the capture's clock.
    pub fn start_ps(&self, line: &LineInfo) -> i64 {
        line.timestamp_ns
            .saturating_mul(1000)
            .saturating_add(self.offset_ps)
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

    /// Told after a line has been walked to its end: the starts of its first and last
    /// events, wanted or not (not told for a line without events, skipped, or left early).
    fn line_span(&mut self, _line: &LineInfo, _first_start_ps: i64, _last_start_ps: i64) {}
}

/// The varint field with one-byte key `key` at `*pos`, if that is what lies there
/// (then `*pos` moves past it); `None` if the bytes there cannot be read.
#[inline(always)]
fn varint_field(raw: &[u8], pos: &mut usize, key: u8) -> Option<Option<u64>> {
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
fn start_of(raw: &[u8], line: &LineInfo) -> i64 {
    Event::parse(raw)
        .map(|e| e.start_ps(line))
        .unwrap_or(line.timestamp_ns.saturating_mul(1000))
}

/// The stat at `raw[pos..]` if it has the shape encoders give nearly all of them (a
/// one-byte key, length and id, then one value that fills the stat: a number, or a
/// string or bytes under 128 long), decoded where it lies, with the position after it;
/// the stat is `None` (not decoded) when its id does not pass `wanted`. `None` for any
/// other shape, which the general decoder reads the same way.
#[inline(always)]
fn usual_stat<'a>(
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

/// [`usual_stat`] for a stat whose id takes two bytes (TensorFlow's captures number
/// thousands of stats): tried only when the usual shape is not there.
#[inline(never)]
fn wide_stat<'a>(
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
fn framed_stat<'a>(
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
fn peek_metadata_id(raw: &[u8]) -> Option<i64> {
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

/// Where the header of the plane at `[start, end)` ends: the first field that is not
/// its id or name (its first line, as encoders write it), or `end`.
fn header_end(src: &dyn ByteSource, start: u64, end: u64) -> Result<u64, Error> {
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

pub(super) fn read_plane_name(
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

impl Plane {
    /// Reads the plane's metadata (id, name, stat names, event metadata, plane stats),
    /// skipping its lines. Corrupt bytes end the reading there: the plane keeps what
    /// came before and the damage is recorded on `at` (see [`Damage`]); only a failure
    /// that is not the plane's own (none today) is an error.
    pub fn open(src: &dyn ByteSource, at: &PlaneRef) -> Result<Self, Error> {
        let mut plane = Plane::unread(at);
        if let Err(e) = plane.read_metadata(src) {
            plane.damage.record(&e);
        }
        Ok(plane)
    }

    /// The plane at `at`, nothing read yet.
    fn unread(at: &PlaneRef) -> Self {
        Plane {
            offset: at.offset,
            len: at.len,
            damage: at.damage.clone(),
            cut: at.cut,
            ..Default::default()
        }
    }

    /// How the file cuts the plane, if it ends inside it.
    pub fn cut(&self) -> Option<&PlaneCut> {
        self.cut.as_ref()
    }

    /// Where the plane is damaged, if a reader has met corrupt bytes in it.
    pub fn damage(&self) -> Option<&(u64, String)> {
        self.damage.get()
    }

    /// Reads the plane's tables from its end, without walking its lines (see
    /// `capture::tables`), for a plane that is walked next anyway: that walk
    /// learns where the lines lie and confirms that the tables were where they were
    /// taken to be ([`Plane::confirm_tables`]). A plane whose tables cannot be told
    /// from its end is opened as [`Plane::open`] does.
    pub fn open_tables_first(src: &dyn ByteSource, at: &PlaneRef) -> Result<Self, Error> {
        // A plane the file ends inside has no tables at its end (they follow its lines).
        if at.cut.is_some() {
            return Plane::open(src, at);
        }
        let mut plane = Plane::unread(at);
        match plane.read_tables_first(src) {
            Ok(true) => Ok(plane),
            _ => Plane::open(src, at),
        }
    }

    /// The plane opened again the usual way, by walking its lines: for a plane read
    /// tables-first whose tables the walk did not confirm.
    pub fn reopen(&self, src: &dyn ByteSource) -> Result<Self, Error> {
        let at = PlaneRef {
            name: self.name.clone(),
            offset: self.offset,
            len: self.len,
            damage: self.damage.clone(),
            cut: self.cut,
        };
        Plane::open(src, &at)
    }

    /// Whether the plane's tables are the ones a walk of the plane meets: always for a
    /// plane opened by [`Plane::open`]; for one opened tables-first, once a complete
    /// walk of its lines has met the tables where they were taken to start (the plane
    /// then takes the line positions the walk found). `false` means the plane must be
    /// opened again ([`Plane::reopen`]) and whatever was read with it read again.
    pub fn confirm_tables(&mut self) -> bool {
        if self.tables_guess.is_none() {
            return true;
        }
        let Some(walked) = self.confirming_walk() else {
            return false;
        };
        (self.line_count, self.lines) = (walked.line_count, walked.lines.clone());
        self.tables_guess = None;
        true
    }

    /// For a plane read tables-first, the walk that met its tables where they were
    /// taken to start, if one has.
    fn confirming_walk(&self) -> Option<&Walked> {
        let guess = self.tables_guess?;
        self.walked
            .get()
            .filter(|walked| walked.tables_at == guess.tables_from)
    }

    /// Whether [`Plane::lines`] holds every line's position: not for a plane with more
    /// than [`MAX_LINES_INDEXED`] lines, nor for one read tables-first before a walk has
    /// confirmed its tables.
    pub fn lines_indexed(&self) -> bool {
        self.tables_guess.is_none() && self.lines.len() == self.line_count
    }

    /// Whether the plane's tables were read from its end and no walk has confirmed
    /// them yet (see [`Plane::confirm_tables`]).
    pub fn tables_unconfirmed(&self) -> bool {
        self.tables_guess.is_some()
    }

    /// How many lines the plane has, once that is known: for a plane read
    /// tables-first, only after a complete walk has met the tables where they were
    /// taken to start (what [`Plane::confirm_tables`] asks, for a plane shared with
    /// another thread, which cannot take the walk's line index); `None` until then, or
    /// when the walk met them elsewhere (the plane is then to be read again).
    pub fn walked_line_count(&self) -> Option<usize> {
        if self.tables_guess.is_none() {
            return Some(self.line_count);
        }
        self.confirming_walk().map(|walked| walked.line_count)
    }

    /// The plane's id and name (before its lines), then its tables from where
    /// [`tables::find`](super::tables::find) says they start; false if it cannot say.
    fn read_tables_first(&mut self, src: &dyn ByteSource) -> Result<bool, Error> {
        let end = self.offset.saturating_add(self.len);
        let lines_from = header_end(src, self.offset, end)?;
        self.read_fields(src, self.offset, lines_from)?;
        let Some(tables_from) = super::tables::find(src, lines_from, end) else {
            return Ok(false);
        };
        self.read_fields(src, tables_from, end)?;
        self.tables_guess = Some(TablesGuess {
            lines_from,
            tables_from,
        });
        Ok(true)
    }

    fn read_metadata(&mut self, src: &dyn ByteSource) -> Result<(), Error> {
        self.read_fields(src, self.offset, self.offset.saturating_add(self.len))
    }

    /// Reads the plane's fields in `[start, end)`, skipping over lines.
    fn read_fields(&mut self, src: &dyn ByteSource, start: u64, end: u64) -> Result<(), Error> {
        let plane = self;
        let mut reader = StreamReader::over(src, READ_CHUNK, start, end);
        while let Some((field, value, at_cut)) = plane.next_field(src, &mut reader, end)? {
            if at_cut {
                // The field the file ends in: a line is kept (its events before the cut
                // are read by the walks); a table entry cut short is left out.
                if let (XPLANE_LINES, StreamValue::Bytes { offset, len }) = (field, value) {
                    plane.line_count = plane.line_count.saturating_add(1);
                    if plane.lines.len() < MAX_LINES_INDEXED {
                        plane.lines.push((offset, len));
                    }
                }
                break;
            }
            match (field, value) {
                (XPLANE_ID, StreamValue::Varint(v)) => plane.id = v as i64,
                (XPLANE_NAME, StreamValue::Bytes { offset, len }) => {
                    plane.name = String::from_utf8_lossy(reader.bytes(offset, len.min(MAX_NAME))?)
                        .into_owned();
                }
                (XPLANE_LINES, StreamValue::Bytes { offset, len }) => {
                    plane.line_count = plane.line_count.saturating_add(1);
                    if plane.lines.len() < MAX_LINES_INDEXED {
                        plane.lines.push((offset, len));
                    }
                }
                (XPLANE_EVENT_METADATA, StreamValue::Bytes { offset, len }) => {
                    let resume = reader.position();
                    if let Some(meta) = read_event_metadata_entry(&mut reader, offset, len)? {
                        plane.event_metadata.insert(meta.id, meta);
                    }
                    reader.seek(resume);
                }
                (XPLANE_STAT_METADATA, StreamValue::Bytes { offset, len }) => {
                    if let Some((id, name)) = parse_stat_metadata_entry(reader.bytes(offset, len)?)
                    {
                        plane.stat_names.insert(id, name);
                    }
                }
                (XPLANE_STATS, StreamValue::Bytes { offset, len })
                    if plane.stats.len() < MAX_STATS_KEPT =>
                {
                    if let Ok(Some((id, value))) = parse_stat(reader.bytes(offset, len)?) {
                        plane.stats.push(OwnedStat {
                            metadata_id: id,
                            value: value.to_owned_value(),
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The plane's next field before `end`, and whether the file ends inside it: in a
    /// plane the file ends inside, a field whose key and length are whole but whose
    /// bytes run past the end of the file comes back as its bytes up to the end, marked
    /// cut; a field whose key or length is cut ends the plane. Any other undecodable
    /// field is damage, as in every plane.
    fn next_field(
        &self,
        src: &dyn ByteSource,
        reader: &mut StreamReader<'_>,
        end: u64,
    ) -> Result<Option<(u32, StreamValue, bool)>, Error> {
        let at = reader.position();
        match reader.next_field(end) {
            Ok(field) => Ok(field.map(|(f, v)| (f, v, false))),
            Err(e) => {
                let at_end = self.cut.is_some() && end == self.offset.saturating_add(self.len);
                match at_end.then(|| cut_field(src, at, end)).flatten() {
                    Some(CutField::Field { field, offset }) => Ok(Some((
                        field,
                        StreamValue::Bytes {
                            offset,
                            len: end.saturating_sub(offset),
                        },
                        true,
                    ))),
                    Some(CutField::KeyOrLength) => Ok(None),
                    None => Err(e),
                }
            }
        }
    }

    /// The plane's size in the file.
    pub fn byte_len(&self) -> u64 {
        self.len
    }

    /// Where the plane starts in the file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The name a stat metadata id stands for.
    pub fn stat_name(&self, id: u64) -> Option<&str> {
        self.stat_names.get(&id).map(String::as_str)
    }

    /// The stat metadata id whose name is `name` (a stat we look for by name).
    pub fn stat_id(&self, name: &str) -> Option<u64> {
        self.stat_names
            .iter()
            .find(|(_, n)| n.as_str() == name)
            .map(|(id, _)| *id)
    }

    /// A string stat's text: inline, or the referenced stat metadata's name.
    pub fn stat_str<'a>(&'a self, value: &StatRef<'a>) -> Option<std::borrow::Cow<'a, str>> {
        match *value {
            StatRef::Str(s) => Some(String::from_utf8_lossy(s)),
            StatRef::Ref(r) => self.stat_name(r).map(std::borrow::Cow::Borrowed),
            _ => None,
        }
    }

    /// A plane-level stat by name.
    pub fn plane_stat(&self, name: &str) -> Option<&StatValue> {
        let id = self.stat_id(name)?;
        self.stats
            .iter()
            .find(|s| s.metadata_id == id)
            .map(|s| &s.value)
    }

    /// Walks every line's events in file order, without allocating per event. Corrupt
    /// bytes end the walk there: the events before them have been visited, and the
    /// damage is recorded for the report (see [`Damage`]).
    pub fn visit_events<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        visitor: &mut V,
    ) -> Result<(), Error> {
        self.visit_share(src, Share::All, visitor)
    }

    /// The first of two scanners sharing the plane's lines (see
    /// [`split`](super::split)): [`Plane::visit_events`] up to the line where `boundary`
    /// says the second scanner's part starts.
    pub fn visit_events_before<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        boundary: &LineBoundary,
        visitor: &mut V,
    ) -> Result<(), Error> {
        self.visit_share(src, Share::Before(boundary), visitor)
    }

    /// The second of two scanners sharing the plane's lines: walks the line headers to
    /// the middle of the plane, sets `boundary` there, and visits the lines from it to
    /// the end. This walk sees every line, so it is the one that confirms tables read
    /// from the plane's end (see [`Plane::confirm_tables`]).
    pub fn visit_events_from_middle<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        boundary: &LineBoundary,
        visitor: &mut V,
    ) -> Result<(), Error> {
        self.visit_share(src, Share::FromMiddle(boundary), visitor)
    }

    /// About how many bytes the plane's lines take: known exactly once they are
    /// indexed, else up to where its tables were found, else the whole plane.
    fn line_bytes(&self) -> u64 {
        if let Some(guess) = self.tables_guess {
            return guess.tables_from.saturating_sub(guess.lines_from);
        }
        if self.lines_indexed() {
            return self.lines.iter().map(|&(_, len)| len).sum();
        }
        self.len
    }

    fn visit_share<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        share: Share<'_>,
        visitor: &mut V,
    ) -> Result<(), Error> {
        if let Err(e) = self.walk_lines(src, share, visitor) {
            self.damage.record(&e);
        }
        Ok(())
    }

    fn walk_lines<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        share: Share<'_>,
        visitor: &mut V,
    ) -> Result<WalkEnd, Error> {
        let end = self.offset.saturating_add(self.len);
        let from = match share {
            Share::Segment { from, .. } => from,
            _ => self.offset,
        };
        let mut reader = StreamReader::over(src, READ_CHUNK, from, end);
        let mut ordinal = 0usize;
        let mut stopped_at = None;
        // A plane read tables-first learns its layout here (see `confirm_tables`), from
        // a walk that meets every line, or from segment walks that together do.
        let mut walked = match share {
            Share::Before(_) => None,
            _ => self.tables_guess.map(|_| Walked::default()),
        };
        let mut tables_at = None;
        // The second scanner: its lines' bytes (only it needs them: summing an index
        // is not free), bytes of the lines before this one, and its first line.
        let line_bytes = match share {
            Share::FromMiddle(_) => self.line_bytes(),
            _ => 0,
        };
        let mut passed = 0u64;
        let mut first_line = None;
        loop {
            let at = reader.position();
            let Some((field, value, at_cut)) = self.next_field(src, &mut reader, end)? else {
                break;
            };
            if at_cut && field != XPLANE_LINES {
                break;
            }
            match (field, value) {
                (XPLANE_LINES, StreamValue::Bytes { offset, len }) => {
                    if let Share::Segment { from, stop } = share {
                        // Another segment's start met: its lines from here on.
                        if at != from && stop(at) {
                            stopped_at = Some(at);
                            break;
                        }
                    }
                    if let Some(walked) = &mut walked {
                        walked.line_count = walked.line_count.saturating_add(1);
                        if walked.lines.len() < MAX_LINES_INDEXED {
                            walked.lines.push((offset, len));
                        }
                    }
                    let mine = match share {
                        Share::All => true,
                        Share::Before(boundary) => {
                            if !boundary.first_takes(ordinal) {
                                break;
                            }
                            true
                        }
                        Share::Segment { .. } => true,
                        Share::FromMiddle(boundary) => {
                            // The middle by work: this walk also reads the headers of
                            // the first scanner's lines.
                            let walk = (ordinal as u64).saturating_mul(HEADER_WORK_BYTES);
                            let past = passed.saturating_mul(2) >= line_bytes.saturating_add(walk);
                            if first_line.is_none() && past {
                                first_line = boundary.second_claims(ordinal);
                            }
                            passed = passed.saturating_add(len);
                            first_line.is_some_and(|first| ordinal >= first)
                        }
                    };
                    if mine {
                        let resume = reader.position();
                        visit_line(
                            &mut reader,
                            offset,
                            offset.saturating_add(len),
                            ordinal,
                            at_cut,
                            visitor,
                        )?;
                        reader.seek(resume);
                    }
                    ordinal = ordinal.saturating_add(1);
                    if at_cut {
                        break;
                    }
                }
                _ => {
                    let Some(guess) = self.tables_guess else {
                        continue;
                    };
                    if at >= guess.lines_from && tables_at.is_none() {
                        tables_at = Some(at);
                    }
                    // The tables were read from there on, and hold no lines.
                    if tables_at == Some(guess.tables_from) {
                        break;
                    }
                }
            }
        }
        if let Share::FromMiddle(boundary) = share {
            // No line past the middle (or none at all): the first scanner takes them all.
            if first_line.is_none() {
                boundary.second_claims(ordinal);
            }
        }
        let mut walk = WalkEnd {
            walked: None,
            stopped_at,
            lines: ordinal,
        };
        if let Some(mut walked) = walked {
            walked.tables_at = tables_at.unwrap_or(end);
            if matches!(share, Share::Segment { .. }) {
                walk.walked = Some(walked);
            } else {
                let _ = self.walked.set(walked);
            }
        }
        Ok(walk)
    }

    /// A reader of this plane's lines one at a time ([`Plane::visit_line_alone`]),
    /// reading through `src`: lines visited in file order share its windows.
    pub fn line_reader<'s>(&self, src: &'s dyn ByteSource) -> LineReader<'s> {
        let end = self.offset.saturating_add(self.len);
        LineReader(StreamReader::over(src, READ_CHUNK, self.offset, end))
    }

    /// Visits the one line whose payload is `line.span` (as a walk of the plane met it)
    /// with its ordinal, through `reader` (this plane's): a line a visitor turned down
    /// in a walk, visited apart. A line the plane's cut ends in ends at its last whole
    /// event, as in a walk.
    pub fn visit_line_alone<V: EventVisitor + ?Sized>(
        &self,
        reader: &mut LineReader<'_>,
        line: &LineInfo,
        visitor: &mut V,
    ) -> Result<(), Error> {
        let (start, end) = (line.span.start, line.span.end);
        let plane_end = self.offset.saturating_add(self.len);
        if start < self.offset || end > plane_end || start > end {
            return Err(Error::Corrupt {
                offset: start,
                what: "a line handed over lies outside its plane",
            });
        }
        let at_cut = self.cut.is_some() && end == plane_end;
        visit_line(&mut reader.0, start, end, line.ordinal, at_cut, visitor)
    }

    /// Walks the lines `lines` (by their place in [`Plane::lines`]), giving them their
    /// plane-wide ordinals: a part of [`Plane::visit_events`] that another thread can
    /// do at the same time.
    pub fn visit_lines<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        lines: std::ops::Range<usize>,
        visitor: &mut V,
    ) -> Result<(), Error> {
        self.visit_lines_where(src, |i| lines.contains(&i), visitor)
    }

    /// Walks the indexed lines whose place in [`Plane::lines`] passes `wanted`, without
    /// reading the others at all.
    pub fn visit_lines_where<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        wanted: impl Fn(usize) -> bool,
        visitor: &mut V,
    ) -> Result<(), Error> {
        let end = self.offset.saturating_add(self.len);
        let mut reader = StreamReader::over(src, READ_CHUNK, self.offset, end);
        let lines = self.lines.iter().enumerate().filter(|&(i, _)| wanted(i));
        for (i, &(offset, len)) in lines {
            let line_end = offset.saturating_add(len);
            let at_cut = self.cut.is_some() && line_end == end;
            if let Err(e) = visit_line(&mut reader, offset, line_end, i, at_cut, visitor) {
                // As in `visit_events`: stop at the damage, keep what came before.
                self.damage.record(&e);
                break;
            }
        }
        Ok(())
    }
}

/// Streams one line. Encoders write fields in number order, so the header (id 1,
/// name 2, timestamp 3) precedes the events (4); a header field that arrives after
/// events is still applied to the events that follow it.
///
/// The hot loop parses events straight from the reader's window with the slice
/// parser; only a field that straddles the window's end is re-read.
///
/// A line the file ends in (`cut`) ends at its last whole event, as if it ended there.
fn visit_line<V: EventVisitor + ?Sized>(
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
                (XLINE_NAME, Value::Bytes(b)) => {
                    line.name = String::from_utf8_lossy(b.get(..MAX_NAME as usize).unwrap_or(b))
                        .into_owned();
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
fn passes_over<V: EventVisitor + ?Sized>(
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
fn visit_event<V: EventVisitor + ?Sized>(
    visitor: &mut V,
    line: &LineInfo,
    raw: &[u8],
    here: u64,
) -> Result<bool, Error> {
    let mut event = Event::parse(raw).map_err(|e| Error::Corrupt {
        offset: here,
        what: e.describe(),
    })?;
    event.file_offset = here;
    visitor.event(line, &event);
    Ok(visitor.line_done())
}

/// A field the end of a plane cuts short (see [`Plane::next_field`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CutField {
    /// A length-delimited field whose key and length are whole: its bytes start at
    /// `offset` and run past the end.
    Field { field: u32, offset: u64 },
    /// The key, or a varint or length, is cut.
    KeyOrLength,
}

/// What lies at `at` in the `head` bytes read there (up to 20, fewer only where the
/// message ends at `end`): a field the end cuts short, or `None` when the field would
/// fit (the bytes are damaged, not cut).
fn cut_field_in(head: &[u8], at: u64, end: u64) -> Option<CutField> {
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
fn cut_field(src: &dyn ByteSource, at: u64, end: u64) -> Option<CutField> {
    let mut head = [0u8; 20];
    let want = usize::try_from(end.saturating_sub(at).min(20)).unwrap_or(20);
    let n = src.read_at(at, head.get_mut(..want)?).ok()?;
    cut_field_in(head.get(..n)?, at, end)
}

/// Whether the field at `pos` of a line the file ends in is the one it ends inside.
fn reader_at_cut(reader: &mut StreamReader<'_>, pos: u64, end: u64) -> bool {
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
pub(super) fn cut_layout(
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

fn read_event_metadata_entry(
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

fn read_event_metadata(
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
fn read_metadata_stat(
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

fn parse_stat_metadata_entry(bytes: &[u8]) -> Option<(u64, String)> {
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

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    use crate::wire::encode_varint as varint;

    fn header(e: &Event<'_>) -> (i64, i64, i64, i64) {
        (e.metadata_id, e.offset_ps, e.duration_ps, e.num_occurrences)
    }

    fn stats(e: &Event<'_>) -> String {
        let mut out = String::new();
        e.for_each_stat(|id, v| out.push_str(&format!("{id}={v:?};")));
        out
    }

    /// The header fast path reads what the general decoder reads, stats included,
    /// whatever the fields present, their order, repeats and truncations.
    #[test]
    fn the_usual_event_header_decodes_as_the_general_decoder_does() {
        let stat = [0x22, 0x04, 0x08, 0x05, 0x18, 0x2a];
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for fields in 0u32..(1 << 6) {
            for big in [false, true] {
                let mut raw = Vec::new();
                // Keys 1, 2, 3 (varints), 5 (num_occurrences), 4 (a stat), in an order
                // picked by the bits, some repeated.
                let order: &[u8] = if fields & 32 == 0 {
                    &[1, 2, 3, 4, 5]
                } else {
                    &[2, 1, 4, 3, 1]
                };
                for (i, &f) in order.iter().enumerate() {
                    if fields & (1 << i) == 0 {
                        continue;
                    }
                    if f == 4 {
                        raw.extend(stat);
                    } else {
                        raw.push(f << 3);
                        varint(if big { 1 << (20 + 7 * u64::from(f)) } else { 7 }, &mut raw);
                    }
                }
                raw.extend(stat);
                cases.push(raw.clone());
                for cut in 1..raw.len() {
                    cases.push(raw[..cut].to_vec());
                }
            }
        }
        let mut usual = 0;
        for raw in &cases {
            let general = Event::parse_any(raw);
            if let Some(fast) = Event::parse_usual(raw) {
                usual += 1;
                let general = general.as_ref().unwrap();
                assert_eq!(header(&fast), header(general), "{raw:02x?}");
                assert_eq!(stats(&fast), stats(general), "{raw:02x?}");
            }
            match (Event::parse(raw), general) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(header(&a), header(&b), "{raw:02x?}");
                    assert_eq!(stats(&a), stats(&b), "{raw:02x?}");
                }
                (a, b) => assert_eq!(a.is_err(), b.is_err(), "{raw:02x?}"),
            }
        }
        assert!(usual > 100, "the fast path answered {usual} cases");
    }

    /// An event's stats as the general decoder reads them: every field 4 of the event,
    /// up to the first field that cannot be read.
    fn general_stats(raw: &[u8], wanted: impl Fn(u64) -> bool) -> String {
        let mut out = String::new();
        let mut fields = Fields::new(raw);
        while let Ok(Some((field, value))) = fields.next_field() {
            if let (4, Value::Bytes(b)) = (field, value) {
                if let Ok(Some((id, v))) = parse_stat(b) {
                    if wanted(id) {
                        out.push_str(&format!("{id}={v:?};"));
                    }
                }
            }
        }
        out
    }

    /// Stats read where they lie (the scan's path) are the ones the general decoder
    /// reads, whatever their shape: long ids, every value kind, varints of every
    /// length (padded, overflowing, too long), extra fields, cut frames; with or
    /// without a filter on ids.
    #[test]
    fn stats_read_in_place_are_the_ones_the_general_decoder_reads() {
        let mut shapes: Vec<Vec<u8>> = Vec::new();
        for id in [1u64, 5, 127, 128, 300] {
            let mut with_id = vec![0x08];
            varint(id, &mut with_id);
            for v in [
                0u64,
                1,
                127,
                128,
                1 << 20,
                1 << 35,
                1 << 49,
                1 << 56,
                u64::MAX,
            ] {
                for key in [0x18u8, 0x20, 0x38] {
                    let mut s = with_id.clone();
                    s.push(key);
                    varint(v, &mut s);
                    shapes.push(s);
                }
            }
            let mut double = with_id.clone();
            double.push(0x11);
            double.extend(2.5f64.to_le_bytes());
            shapes.push(double.clone());
            shapes.push(double[..double.len() - 1].to_vec());
            let mut text = with_id.clone();
            text.extend([0x2a, 0x02, b'h', b'i']);
            shapes.push(text);
            let odd: [&[u8]; 5] = [
                &[0x18, 0x80, 0x00],
                &[
                    0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
                ],
                &[
                    0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x01,
                ],
                &[0x18, 0x85],
                &[0x18, 0x05, 0x20, 0x06],
            ];
            for tail in odd {
                let mut s = with_id.clone();
                s.extend(tail);
                shapes.push(s);
            }
        }
        let frame = |s: &[u8]| {
            let mut f = vec![0x22];
            varint(s.len() as u64, &mut f);
            f.extend(s);
            f
        };
        let header = [0x08, 0x07, 0x10, 0x90, 0x92, 0xc2, 0x44];
        let mut checked = 0;
        for (i, stat) in shapes.iter().enumerate() {
            // Alone (its value ends the event), before another stat (ten bytes or
            // more follow), and with its frame cut.
            let next = &shapes[(i + 7) % shapes.len()];
            let mut events = Vec::new();
            for after in [&[][..], &frame(next)] {
                let mut raw = header.to_vec();
                raw.extend(frame(stat));
                raw.extend(after);
                events.push(raw);
            }
            let mut cut = header.to_vec();
            cut.extend(frame(next));
            cut.extend(&frame(stat)[..stat.len()]);
            events.push(cut);
            for raw in &events {
                // A cut frame is the event's own damage when the general decoder
                // meets it while reading the header.
                let Ok(event) = Event::parse(raw) else {
                    assert!(Event::parse_any(raw).is_err(), "{raw:02x?}");
                    continue;
                };
                assert_eq!(stats(&event), general_stats(raw, |_| true), "{raw:02x?}");
                let wanted = |id: u64| id == 5 || id == 300;
                let mut only = String::new();
                event.for_each_stat_of(wanted, |id, v| only.push_str(&format!("{id}={v:?};")));
                assert_eq!(only, general_stats(raw, wanted), "{raw:02x?}");
                checked += 1;
            }
        }
        assert!(checked > 300, "{checked} events checked");
    }

    /// Records the starts of the events of type [`COUNTED`], by [`Interest::Count`]
    /// when `counting`, else by reading each one whole.
    struct Starts {
        counting: bool,
        starts: Vec<i64>,
    }

    const COUNTED: i64 = 5;

    impl EventVisitor for Starts {
        fn interest(&mut self, metadata_id: i64) -> Interest {
            match metadata_id {
                COUNTED if self.counting => Interest::Count,
                COUNTED => Interest::Read,
                _ => Interest::Skip,
            }
        }

        fn count(&mut self, start_ps: i64) {
            self.starts.push(start_ps);
        }

        fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
            if event.metadata_id == COUNTED {
                self.starts.push(event.start_ps(line));
            }
        }
    }

    /// Events counted by their start alone are counted at the starts their whole
    /// reading finds, in every shape: the usual header, other field orders (given to
    /// the visitor whole), skipped types between them, a line starting with a counted
    /// event; and a damaged counted event stops both walks alike.
    #[test]
    fn events_counted_by_start_are_counted_as_reading_them_would() {
        let event = |fields: &[(u8, u64)]| {
            let mut payload = Vec::new();
            for &(key, value) in fields {
                payload.push(key);
                varint(value, &mut payload);
            }
            let mut field = vec![XLINE_EVENTS_TAG];
            varint(payload.len() as u64, &mut field);
            field.extend(payload);
            field
        };
        let (id, offset, duration) = (0x08, 0x10, 0x18);
        let mut line = vec![0x18];
        varint(1_700_000_000, &mut line);
        for (i, skipped) in [(0u64, 3u64), (1, 300), (2, 7)] {
            let at = 1 << (10 + 7 * i);
            line.extend(event(&[(id, 5), (offset, at), (duration, 40)]));
            line.extend(event(&[(id, skipped), (offset, at + 1)]));
            // Offset before the id, then duration before the offset.
            line.extend(event(&[(offset, at + 2), (id, 5)]));
            line.extend(event(&[(id, 5), (duration, 9), (offset, at + 3)]));
            line.extend(event(&[(id, 5), (offset, at + 4)]));
            line.extend(event(&[(id, 5)]));
        }
        let damaged = {
            let mut line = line.clone();
            line.extend([XLINE_EVENTS_TAG, 0x03, id, 5, offset]);
            line
        };
        for (bytes, is_damaged) in [(&line, false), (&damaged, true)] {
            let walk = |counting: bool| {
                let mut visitor = Starts {
                    counting,
                    starts: Vec::new(),
                };
                let src: &[u8] = bytes;
                let end = bytes.len() as u64;
                let mut reader = StreamReader::over(&src, READ_CHUNK, 0, end);
                let walked = visit_line(&mut reader, 0, end, 0, false, &mut visitor);
                (walked.map_err(|e| e.to_string()), visitor.starts)
            };
            let (counted, read) = (walk(true), walk(false));
            assert_eq!(counted, read);
            assert_eq!(counted.0.is_err(), is_damaged, "{counted:?}");
            assert_eq!(counted.1.len(), 15, "{counted:?}");
        }
    }
}
