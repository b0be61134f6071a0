//! The capture index: where each plane of an `XSpace` lies in the file, and each
//! plane's interning tables. Nothing here holds events; lines are walked on demand
//! (see [`plane::Plane::visit_events`]). The format, and what each field read here
//! means: docs/xplane.md.
//!
//! Everything under this module decodes bytes from the file: no panics (the lints
//! below), no length trusted before it is checked, no arithmetic on file values that
//! can overflow.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

pub mod plane;
pub mod split;
pub mod stat;
mod tables;

use crate::error::Error;
use crate::report::model::Note;
use crate::source::ByteSource;
use crate::wire::fields::{
    XSPACE_ERRORS, XSPACE_HOSTNAMES, XSPACE_PLANES, XSPACE_PLANES_TAG, XSPACE_WARNINGS,
};
use crate::wire::{StreamReader, StreamValue};

pub use plane::{
    Event, EventMetadata, EventVisitor, Interest, LineInfo, LineReader, Plane, SegmentJoin,
    SegmentWalk,
};
pub use split::LineBoundary;
pub use stat::{OwnedStat, StatRef, StatValue};

/// Read-ahead window for walking planes. Large enough to amortize a read call (a
/// `FileReaderSync` slice in the browser), small enough to keep memory flat.
pub const READ_CHUNK: usize = 4 << 20;

/// Where one plane sits in the file.
#[derive(Debug, Clone)]
pub struct PlaneRef {
    pub name: String,
    pub offset: u64,
    pub len: u64,
    /// The first damage met inside the plane, by whoever read it (see [`Damage`]).
    pub damage: Damage,
    /// Set when the file ends inside the plane: `len` then runs to the end of the file,
    /// and the plane is read as far as it is whole (see [`PlaneCut`]).
    pub cut: Option<PlaneCut>,
}

/// A plane the file ends inside (a truncated capture). It is read up to the end of
/// the file: its fields that are whole, and of a line the file ends in, the events
/// before the cut; a table entry (event or stat metadata, a plane stat) the file ends
/// in is left out. Encoders write a plane's fields in number order (id, name, lines,
/// event metadata, stat metadata, stats), so what follows the part it was cut in is
/// missing too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlaneCut {
    /// Where the plane says it ends: past the end of the file.
    pub declared_end: u64,
    /// The part of the plane the file ends in.
    pub part: CutPart,
    /// Lines of the plane that are whole before the cut.
    pub whole_lines: u64,
}

/// The part of a plane a cut falls in: the field the file ends inside, or, when it
/// ends between two fields, the part the last whole field belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CutPart {
    /// Its id and name.
    Header,
    /// Its lines (the timelines).
    Lines,
    /// Its event metadata: the names of its events.
    EventMetadata,
    /// Its stat metadata: the names of its stats.
    StatMetadata,
    /// Its plane stats.
    Stats,
}

/// Where a plane stopped decoding: set once, by the first reader that meets corrupt
/// bytes inside it. The plane is then read up to that point only and the report says
/// so, instead of the whole analysis failing on one damaged plane.
#[derive(Debug, Clone, Default)]
pub struct Damage(std::sync::Arc<std::sync::OnceLock<(u64, String)>>);

impl Damage {
    pub fn record(&self, e: &Error) {
        let at = match e {
            Error::Corrupt { offset, .. } | Error::Read { offset, .. } => *offset,
            _ => 0,
        };
        let what = match e {
            Error::Corrupt { what, .. } => (*what).to_owned(),
            Error::Read { message, .. } => format!("a read failed: {message}"),
            other => other.to_string(),
        };
        let _ = self.0.set((at, what));
    }

    /// (byte offset, what is wrong), if the plane is damaged.
    pub fn get(&self) -> Option<&(u64, String)> {
        self.0.get()
    }
}

/// The top level of a capture: its planes, by position, and the profiler's own notes.
#[derive(Debug, Clone, Default)]
pub struct CaptureIndex {
    pub planes: Vec<PlaneRef>,
    pub hostnames: Vec<String>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    /// Planes past [`MAX_PLANES`], counted but not indexed.
    pub planes_dropped: u64,
    /// Where the top level stopped decoding before the end of the file (a truncated or
    /// corrupt tail): the planes before it are indexed, the rest is unread.
    pub cut: Option<Cut>,
}

/// Where and why the top level of a capture could not be read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Where the unreadable part starts.
    pub offset: u64,
    /// The file's size.
    pub file_bytes: u64,
    /// For a plane that runs past the end of the file: where it says it ends.
    pub declared_end: Option<u64>,
    pub what: &'static str,
    /// Where that plane's message starts, when its key and length are whole.
    pub payload: Option<u64>,
    /// The plane read up to the end of the file (its place in
    /// [`CaptureIndex::planes`]), when it was indexed.
    pub plane: Option<usize>,
    /// The file ends inside the key or length of a field (a truncated copy), rather
    /// than at bytes that are not a field at all.
    pub ends_in_field: bool,
}

impl CutPart {
    /// The part as the report names it.
    pub fn words(self) -> &'static str {
        match self {
            CutPart::Header => "header (its id and name)",
            CutPart::Lines => "lines",
            CutPart::EventMetadata => "event metadata (the names of its events)",
            CutPart::StatMetadata => "stat metadata (the names of its stats)",
            CutPart::Stats => "plane stats",
        }
    }
}

impl PlaneCut {
    /// What of the plane is read, in words (after "of <plane>").
    fn read(&self) -> String {
        let lines = match self.whole_lines {
            1 => "its 1 line".to_owned(),
            n => format!("its {n} lines"),
        };
        match self.part {
            CutPart::Header => "only what of its header (id, name) is whole".into(),
            CutPart::Lines => format!(
                "{} whole lines and the events of line {} before the cut",
                self.whole_lines,
                self.whole_lines.saturating_add(1)
            ),
            CutPart::EventMetadata => format!("{lines} and the whole event metadata entries"),
            CutPart::StatMetadata => {
                format!("{lines}, its event metadata and the whole stat metadata entries")
            }
            CutPart::Stats => format!("{lines}, its tables and the whole plane stats"),
        }
    }

    /// What of the plane is missing, in words.
    fn missing(&self) -> &'static str {
        match self.part {
            CutPart::Header => "everything after its header (its lines, event and stat metadata, and stats)",
            CutPart::Lines => "the rest of its lines and its event and stat metadata (without which its events have no names)",
            CutPart::EventMetadata => "the rest of its event metadata (event names, or on /host:metadata the modules' plans), its stat metadata and stats",
            CutPart::StatMetadata => "the rest of its stat metadata (stat names) and its stats",
            CutPart::Stats => "the rest of its plane stats",
        }
    }
}

/// Most top-level strings (hostnames, profiler errors) kept; a hostile file could hold millions.
const MAX_TOP_LEVEL_STRINGS: usize = 64;
/// Most planes indexed. Real captures have one per device and a few host planes; a
/// file with millions of (empty) planes would otherwise make an index and a report
/// that grow with the count.
pub const MAX_PLANES: usize = 1 << 14;

impl CaptureIndex {
    /// Scans the `XSpace` message: records each plane's position and name without
    /// reading its lines. A file that ends inside a plane (or is corrupt after some
    /// planes) keeps the planes before the damage and records where it starts in
    /// [`CaptureIndex::cut`]; a file with no readable plane is an error.
    pub fn scan(src: &dyn ByteSource) -> Result<Self, Error> {
        let len = src.len();
        if len == 0 {
            return Err(Error::Empty);
        }
        sniff_foreign_format(src)?;
        let mut reader = StreamReader::new(src, 64 << 10);
        let mut index = CaptureIndex::default();
        let mut plane_count = 0u64;
        loop {
            let at = reader.position();
            let field = match reader.next_field(len) {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(e) => {
                    index.end_at_damage(src, at, e, plane_count)?;
                    break;
                }
            };
            match field {
                (XSPACE_PLANES, StreamValue::Bytes { offset, len }) => {
                    plane_count = plane_count.saturating_add(1);
                    index.add_plane(src, offset, len, plane_count)?;
                }
                // The top level's strings: errors, warnings, hostnames.
                (XSPACE_ERRORS..=XSPACE_HOSTNAMES, StreamValue::Bytes { offset, len: n }) => {
                    let text =
                        String::from_utf8_lossy(reader.bytes(offset, n.min(4096))?).into_owned();
                    let list = match field.0 {
                        XSPACE_ERRORS => &mut index.errors,
                        XSPACE_WARNINGS => &mut index.warnings,
                        _ => &mut index.hostnames,
                    };
                    if list.len() < MAX_TOP_LEVEL_STRINGS {
                        list.push(text);
                    }
                }
                (XSPACE_PLANES..=XSPACE_HOSTNAMES, _) if plane_count == 0 => {
                    return Err(Error::NotACapture(
                        "its top-level fields do not have XSpace types".into(),
                    ));
                }
                (XSPACE_PLANES..=XSPACE_HOSTNAMES, _) => {
                    // After good planes, a wrongly typed field is a corrupt tail.
                    index.cut = Some(Cut {
                        offset: at,
                        file_bytes: len,
                        declared_end: None,
                        what: "a top-level field of the wrong type",
                        payload: None,
                        plane: None,
                        ends_in_field: false,
                    });
                    break;
                }
                _ if plane_count == 0 => {
                    return Err(Error::NotACapture(format!(
                        "it starts with protobuf field {} which an XSpace does not have",
                        field.0
                    )));
                }
                _ => {}
            }
        }
        index.check_planes()?;
        Ok(index)
    }

    /// Indexes the plane at `offset` (`len` bytes), the `count`th met, by its name;
    /// one past [`MAX_PLANES`] is only counted.
    fn add_plane(
        &mut self,
        src: &dyn ByteSource,
        offset: u64,
        len: u64,
        count: u64,
    ) -> Result<(), Error> {
        if self.planes.len() >= MAX_PLANES {
            self.planes_dropped = self.planes_dropped.saturating_add(1);
            return Ok(());
        }
        let damage = Damage::default();
        let name = match plane::read_plane_name(src, offset, len) {
            Ok(name) => name,
            Err(_) if count == 1 => {
                return Err(Error::NotACapture(
                    "its first plane does not decode as an XPlane".into(),
                ))
            }
            Err(e) => {
                // A damaged plane: indexed nameless, so nothing looks for it.
                damage.record(&e);
                String::new()
            }
        };
        self.planes.push(PlaneRef {
            name,
            offset,
            len,
            damage,
            cut: None,
        });
        Ok(())
    }

    /// Ends the index at the top-level field at `at` that could not be read (`e`):
    /// a plane the file ends inside is indexed up to the end, and the cut recorded. An
    /// error when nothing before it was a plane.
    fn end_at_damage(
        &mut self,
        src: &dyn ByteSource,
        at: u64,
        e: Error,
        plane_count: u64,
    ) -> Result<(), Error> {
        let len = src.len();
        let mut cut = classify_cut(src, at, len);
        if let (Some(declared_end), Some(payload)) = (cut.declared_end, cut.payload) {
            // The file ends inside this plane: it is read up to the end.
            let clipped = len.saturating_sub(payload);
            let name = plane::read_plane_name(src, payload, clipped).unwrap_or_default();
            if plane_count == 0 && name.is_empty() {
                return Err(Error::Truncated {
                    file_bytes: len,
                    needed: declared_end,
                });
            }
            if self.planes.len() < MAX_PLANES {
                cut.plane = Some(self.planes.len());
                self.planes.push(PlaneRef {
                    name,
                    offset: payload,
                    len: clipped,
                    damage: Damage::default(),
                    cut: Some(plane::cut_layout(src, payload, len, declared_end)),
                });
            } else {
                self.planes_dropped = self.planes_dropped.saturating_add(1);
            }
        } else if plane_count == 0 {
            return Err(first_field_error(cut, e));
        }
        self.cut = Some(cut);
        Ok(())
    }

    /// Whether the planes indexed make a profiler capture: some, one of them a
    /// profiler plane.
    fn check_planes(&self) -> Result<(), Error> {
        if self.planes.is_empty() {
            return Err(Error::NotACapture("it holds no planes".into()));
        }
        if !self.planes.iter().any(|p| is_profiler_plane(&p.name)) {
            return Err(Error::NotACapture(format!(
                "none of its {} planes is a profiler plane (/host:…, /device:…)",
                self.planes.len()
            )));
        }
        Ok(())
    }

    pub fn find(&self, name: &str) -> impl Iterator<Item = &PlaneRef> + '_ {
        let name = name.to_owned();
        self.planes.iter().filter(move |p| p.name == name)
    }

    /// What the report should say about the capture itself: a truncated or corrupt
    /// tail, damaged planes (as far as they have been read: call this after the
    /// analysis), planes not indexed, and what the profiler reported (dropped events).
    pub fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        if let Some(cut) = &self.cut {
            notes.push(Note {
                id: "capture_truncated".into(),
                text: self.truncation(cut),
            });
        }
        notes.extend(self.damage_note());
        if self.planes_dropped > 0 {
            notes.push(Note {
                id: "planes_not_read".into(),
                text: format!(
                    "the capture has {} more planes than the {MAX_PLANES} read; they were ignored",
                    self.planes_dropped
                ),
            });
        }
        notes.extend(self.profiler_notes());
        notes
    }

    /// Where the file ends or turns corrupt: what was read before it, and what is
    /// missing.
    fn truncation(&self, cut: &Cut) -> String {
        let mut names: Vec<String> = self
            .planes
            .iter()
            .map(|p| p.name.chars().take(40).collect::<String>())
            .filter(|n| !n.is_empty())
            .take(6)
            .collect();
        if self.planes.len() > 6 {
            names.push("…".into());
        }
        // Planes a report needs, and, for a cut plane, the one that dates the capture.
        let absent = |wanted: &[&'static str]| -> Vec<&'static str> {
            wanted
                .iter()
                .copied()
                .filter(|m| !self.planes.iter().any(|p| p.name == *m))
                .collect()
        };
        let missing = match absent(&["/host:metadata", "/host:CPU"]) {
            a if a.is_empty() => String::new(),
            a => format!(", and none is {}", a.join(" or ")),
        };
        let cut_plane = cut
            .plane
            .and_then(|i| Some((i, self.planes.get(i)?)))
            .and_then(|(i, p)| Some((i, p, p.cut?)));
        match (cut_plane, cut.declared_end) {
            (Some((i, p, pc)), _) => {
                let (subject, name) = if p.name.is_empty() {
                    (format!("its plane at byte {} (its name is cut)", p.offset), "it".to_owned())
                } else {
                    let name: String = p.name.chars().take(60).collect();
                    (format!("its plane {name} (from byte {})", p.offset), name)
                };
                let mut before: Vec<String> = self
                    .planes
                    .iter()
                    .take(i.min(3))
                    .map(|p| p.name.chars().take(40).collect())
                    .collect();
                if i > 3 {
                    before.push("…".into());
                }
                let before = match i {
                    0 => "no plane before it".to_owned(),
                    1 => format!("the plane before it ({})", before.join(", ")),
                    n => format!("the {n} planes before it ({})", before.join(", ")),
                };
                let after = match absent(&["/host:metadata", "/host:CPU", "Task Environment"]) {
                    a if a.is_empty() => String::new(),
                    a => format!(" (none of the planes read is {})", a.join(" or ")),
                };
                format!(
                    "the capture is truncated: the file has {} bytes, but {subject} runs to byte {}, so the file ends in that plane's {}. \
                     Read: {before}, and of {name} {}. Missing: {}, and every plane after it{after}. Copy the file again, or capture again",
                    cut.file_bytes,
                    pc.declared_end,
                    pc.part.words(),
                    pc.read(),
                    pc.missing(),
                )
            }
            (None, Some(end)) => format!(
                "the capture is truncated (the file has {} bytes; its plane at byte {} runs to byte {}): only the first {} planes were read and the rest is missing{missing}; \
                 copy the file again, or capture again. Planes read: {}",
                cut.file_bytes,
                cut.offset,
                end,
                self.planes.len(),
                names.join(", ")
            ),
            (None, None) if cut.ends_in_field => format!(
                "the capture is truncated: the file has {} bytes and ends at byte {} inside the key or length of its next field: only the first {} planes were read and the rest is missing{missing}; \
                 copy the file again, or capture again. Planes read: {}",
                cut.file_bytes,
                cut.offset,
                self.planes.len(),
                names.join(", ")
            ),
            (None, None) => format!(
                "the capture is corrupt from byte {} of {} ({}): only the first {} planes were read and the rest is missing{missing}; \
                 copy the file again, or capture again. Planes read: {}",
                cut.offset,
                cut.file_bytes,
                cut.what,
                self.planes.len(),
                names.join(", ")
            ),
        }
    }

    /// The planes found damaged part way (as far as they have been read).
    fn damage_note(&self) -> Option<Note> {
        let damaged: Vec<String> = self
            .planes
            .iter()
            .filter_map(|p| {
                let (at, what) = p.damage.get()?;
                let name = if p.name.is_empty() {
                    format!("at byte {}", p.offset)
                } else {
                    p.name.chars().take(40).collect()
                };
                Some(format!("{name} from byte {at} ({what})"))
            })
            .collect();
        if damaged.is_empty() {
            return None;
        }
        let mut listed: Vec<String> = damaged.iter().take(6).cloned().collect();
        if damaged.len() > 6 {
            listed.push(format!("and {} more", damaged.len().saturating_sub(6)));
        }
        Some(Note {
            id: "plane_damaged".into(),
            text: format!(
                "{} damaged: what follows the damage in {} was not read, so figures from {} \
                 cover only the part before it; copy the file again, or capture again. Damaged: {}",
                if damaged.len() == 1 {
                    "a plane of the capture is"
                } else {
                    "planes of the capture are"
                },
                if damaged.len() == 1 { "it" } else { "each" },
                if damaged.len() == 1 { "it" } else { "them" },
                listed.join("; ")
            ),
        })
    }

    /// What the profiler itself reported: dropped events, and its other messages.
    fn profiler_notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        let messages: Vec<&String> = self.errors.iter().chain(&self.warnings).collect();
        let dropped: Vec<&str> = messages
            .iter()
            .filter(|m| mentions_dropped_events(m))
            .map(|m| m.as_str())
            .collect();
        if !dropped.is_empty() {
            notes.push(Note {
                id: "profiler_dropped_events".into(),
                text: format!(
                    "the profiler hit its event limit and dropped events (it reported: {}); runtime counts and timelines miss what happened after the limit. Profile a shorter window (fewer steps) to stay under it",
                    quote_all(&dropped)
                ),
            });
        }
        let other: Vec<&str> = messages
            .iter()
            .filter(|m| !mentions_dropped_events(m))
            .map(|m| m.as_str())
            .collect();
        if !other.is_empty() {
            notes.push(Note {
                id: "profiler_messages".into(),
                text: format!("the profiler reported: {}", quote_all(&other)),
            });
        }
        notes
    }
}

/// Plane names the profiler writes; a file whose planes have none of them is not a
/// capture (e.g. an HloProto passed by mistake, which also starts with field 1).
fn is_profiler_plane(name: &str) -> bool {
    name.starts_with("/host:") || name.starts_with("/device:") || name == "Task Environment"
}

fn mentions_dropped_events(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("dropped") || (m.contains("event") && (m.contains("limit") || m.contains("max")))
}

fn quote_all(messages: &[&str]) -> String {
    let mut parts: Vec<String> = messages
        .iter()
        .take(4)
        .map(|m| {
            let short: String = m.chars().take(300).collect();
            format!("\"{}\"", short.trim())
        })
        .collect();
    if messages.len() > 4 {
        parts.push(format!("and {} more", messages.len().saturating_sub(4)));
    }
    parts.join("; ")
}

/// Why the top level stopped at `at`: a plane that runs past the end of the file (a
/// truncated copy) or bytes that are not a field at all (corruption).
fn classify_cut(src: &dyn ByteSource, at: u64, file_bytes: u64) -> Cut {
    let mut head = [0u8; 11];
    let n = src.read_at(at, &mut head).unwrap_or(0);
    let head = head.get(..n).unwrap_or_default();
    // A plane's key: does its length point past the file?
    let plane = match head.split_first() {
        Some((&XSPACE_PLANES_TAG, rest)) => plane_end(rest).and_then(|(used, len)| {
            let payload = at.checked_add(1)?.checked_add(used)?;
            Some((payload, payload.checked_add(len)?))
        }),
        _ => None,
    }
    .filter(|&(_, end)| end > file_bytes);
    let reaches_end = at.checked_add(n as u64) == Some(file_bytes);
    let ends_in_field = plane.is_none() && reaches_end && field_cut_short(head);
    Cut {
        offset: at,
        file_bytes,
        declared_end: plane.map(|(_, end)| end),
        what: if plane.is_some() {
            "a plane runs past the end of the file"
        } else if ends_in_field {
            "the file ends inside a field's key or length"
        } else {
            "bytes that are not a protobuf field"
        },
        payload: plane.map(|(payload, _)| payload),
        plane: None,
        ends_in_field,
    }
}

/// Whether `head`, the last bytes of a file (at most 11), start a field the end of
/// the file cuts short: in its key, a varint or length, or its bytes.
fn field_cut_short(head: &[u8]) -> bool {
    let Some((key_len, key)) = plane_end(head) else {
        // The key itself is cut: every byte carries the continuation bit.
        return !head.is_empty() && head.iter().all(|&b| b >= 0x80);
    };
    let rest = head
        .get(usize::try_from(key_len).unwrap_or(usize::MAX)..)
        .unwrap_or_default();
    match key & 7 {
        0 => plane_end(rest).is_none() && rest.iter().all(|&b| b >= 0x80),
        2 => match plane_end(rest) {
            // The length is whole: are its bytes all there?
            Some((used, len)) => used.saturating_add(len) > rest.len() as u64,
            None => rest.iter().all(|&b| b >= 0x80),
        },
        1 => rest.len() < 8,
        5 => rest.len() < 4,
        _ => false,
    }
}

/// Decodes a length varint: (bytes used, length).
fn plane_end(bytes: &[u8]) -> Option<(u64, u64)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(10).enumerate() {
        let shift = u32::try_from(i).ok()?.checked_mul(7)?;
        value |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some((u64::try_from(i).ok()?.checked_add(1)?, value));
        }
    }
    None
}

fn first_field_error(cut: Cut, e: Error) -> Error {
    match (cut.declared_end, e) {
        (Some(end), _) => Error::Truncated {
            file_bytes: cut.file_bytes,
            needed: end,
        },
        (None, Error::Corrupt { offset, what }) => Error::NotACapture(format!(
            "it does not decode as an XSpace protobuf: at byte {offset}, {what}"
        )),
        (None, other) => other,
    }
}
/// Recognizes common files that people pass by mistake, to name them in the error.
fn sniff_foreign_format(src: &dyn ByteSource) -> Result<(), Error> {
    let mut head = [0u8; 64];
    let n = src.read_at(0, &mut head).map_err(|e| Error::Read {
        offset: 0,
        message: e.to_string(),
    })?;
    let head = head.get(..n).unwrap_or_default();
    let is_text = |b: &u8| b.is_ascii_graphic() || b.is_ascii_whitespace() || *b >= 0x80;
    // An XSpace starts with a plane's key (`XSPACE_PLANES_TAG`, 0x0a) and a length, then
    // the plane's id or name keys (0x08, 0x12): never 16 bytes of text.
    let looks_like_text =
        head.len() >= 16 && head.iter().all(is_text) && std::str::from_utf8(head).is_ok();
    let what = if head.starts_with(&[0x1f, 0x8b]) {
        "it is gzip-compressed: decompress it first (gunzip), or pass the .xplane.pb itself, not a .trace.json.gz"
    } else if head.starts_with(b"\x89PNG") {
        "it is a PNG image"
    } else if head.starts_with(b"PK\x03\x04") {
        "it is a zip archive: unpack it and pass the .xplane.pb inside"
    } else if head.iter().all(is_text)
        && matches!(
            head.iter().find(|b| !b.is_ascii_whitespace()),
            Some(b'{') | Some(b'[')
        )
    {
        "it is JSON text (a trace viewer .json?), not the binary .xplane.pb"
    } else if looks_like_text {
        "it is a text file, not the binary .xplane.pb"
    } else {
        return Ok(());
    };
    Err(Error::NotACapture(what.into()))
}
