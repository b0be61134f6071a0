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

mod cut;
mod notes;
pub mod plane;
pub mod split;
pub mod stat;
mod tables;

use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::fields::{XSPACE_ERRORS, XSPACE_HOSTNAMES, XSPACE_PLANES, XSPACE_WARNINGS};
use crate::wire::{StreamReader, StreamValue};
use cut::{classify_cut, first_field_error};

pub use cut::{Cut, CutPart, Damage, PlaneCut};
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
}

/// Plane names the profiler writes; a file whose planes have none of them is not a
/// capture (e.g. an HloProto passed by mistake, which also starts with field 1).
fn is_profiler_plane(name: &str) -> bool {
    name.starts_with("/host:") || name.starts_with("/device:") || name == "Task Environment"
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
