//! One plane: its interning tables (stat names, event metadata), read eagerly because
//! they are small, and its lines and events, walked lazily at the wire level.

use std::collections::HashMap;

use super::stat::{parse_stat, OwnedStat, StatRef, StatValue};
use super::{Damage, LineBoundary, PlaneCut, PlaneRef, READ_CHUNK};
use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::fields::{
    XPLANE_EVENT_METADATA, XPLANE_ID, XPLANE_LINES, XPLANE_NAME, XPLANE_STATS, XPLANE_STAT_METADATA,
};
use crate::wire::{StreamReader, StreamValue};

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

mod cut;
mod event;
mod metadata;
mod segments;
mod walk;

use cut::{cut_field, CutField};
use metadata::{header_end, parse_stat_metadata_entry, read_event_metadata_entry};
use walk::visit_line;

pub(super) use cut::cut_layout;
pub(super) use metadata::read_plane_name;

pub use event::{Event, EventVisitor, Interest, LineInfo};
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

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;
    use crate::wire::fields::XLINE_EVENTS_TAG;
    use crate::wire::{Fields, Value};

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
        let (mut usual, mut statless) = (0, 0);
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
                    // An event said to carry no stats has none to walk.
                    if a.has_no_stats() {
                        statless += 1;
                        assert_eq!(stats(&b), "", "{raw:02x?}");
                    }
                }
                (a, b) => assert_eq!(a.is_err(), b.is_err(), "{raw:02x?}"),
            }
        }
        assert!(usual > 100, "the fast path answered {usual} cases");
        assert!(
            statless > 10,
            "{statless} events were known to carry no stats"
        );
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

    /// Records the name of each line it is given, reading names or not as told.
    struct Names {
        reads: bool,
        names: Vec<String>,
    }

    impl EventVisitor for Names {
        fn reads_line_names(&self) -> bool {
            self.reads
        }

        fn line(&mut self, line: &LineInfo) -> bool {
            self.names.push(line.name.clone());
            true
        }

        fn event(&mut self, _line: &LineInfo, _event: &Event<'_>) {}
    }

    /// A line's name reaches a visitor that reads names, invalid UTF-8 replaced as the
    /// lossy decoder does; a visitor that does not read them gets an empty name.
    #[test]
    fn line_names_reach_only_visitors_that_read_them() {
        for (name, expected) in [
            (&b"XLA Modules"[..], "XLA Modules"),
            (&b"python\xff3"[..], "python\u{fffd}3"),
        ] {
            let name_tag = crate::wire::tag(
                crate::wire::fields::XLINE_NAME,
                crate::wire::WireType::LengthDelimited,
            );
            let mut line = vec![name_tag];
            varint(name.len() as u64, &mut line);
            line.extend(name);
            line.extend([XLINE_EVENTS_TAG, 0x04, 0x08, 0x05, 0x10, 0x01]);
            for reads in [true, false] {
                let mut visitor = Names {
                    reads,
                    names: Vec::new(),
                };
                let src: &[u8] = &line;
                let end = line.len() as u64;
                let mut reader = StreamReader::over(&src, READ_CHUNK, 0, end);
                visit_line(&mut reader, 0, end, 0, false, &mut visitor).unwrap();
                let seen = if reads { expected } else { "" };
                assert_eq!(visitor.names, [seen], "{name:02x?}");
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
