//! One plane: its interning tables (stat names, event metadata), read eagerly because
//! they are small, and its lines and events, walked lazily at the wire level.

use std::collections::HashMap;

use super::stat::{parse_stat, OwnedStat, StatRef, StatValue};
use super::{Damage, PlaneCut, PlaneRef, READ_CHUNK};
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
mod lines;
mod metadata;
mod segments;
mod walk;

use cut::{cut_field, CutField};
use metadata::{header_end, parse_stat_metadata_entry, read_event_metadata_entry};

pub(super) use cut::cut_layout;
pub(super) use metadata::read_plane_name;

pub use event::{Event, EventVisitor, Interest, LineInfo};
pub use lines::LineReader;
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
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests;
