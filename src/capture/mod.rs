//! The capture index: where each plane of an `XSpace` lies in the file, and each
//! plane's interning tables. Nothing here holds events; lines are walked on demand
//! (see [`plane::Plane::visit_events`]).

pub mod plane;
pub mod stat;

use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::{StreamReader, StreamValue};

pub use plane::{Event, EventMetadata, EventVisitor, LineInfo, Plane};
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
}

/// The top level of a capture: its planes, by position, and the profiler's own notes.
#[derive(Debug, Clone, Default)]
pub struct CaptureIndex {
    pub planes: Vec<PlaneRef>,
    pub hostnames: Vec<String>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

/// Most top-level strings (hostnames, profiler errors) kept; a hostile file could hold millions.
const MAX_TOP_LEVEL_STRINGS: usize = 64;

impl CaptureIndex {
    /// Scans the `XSpace` message: records each plane's position and name without
    /// reading its lines.
    pub fn scan(src: &dyn ByteSource) -> Result<Self, Error> {
        let len = src.len();
        if len == 0 {
            return Err(Error::Empty);
        }
        sniff_foreign_format(src)?;
        let mut reader = StreamReader::new(src, 64 << 10);
        let mut index = CaptureIndex::default();
        loop {
            let field = match reader.next_field(len) {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(e) if index.planes.is_empty() => {
                    return Err(Error::NotACapture(format!(
                        "it does not decode as an XSpace protobuf: {e}"
                    )))
                }
                Err(e) => return Err(e),
            };
            match field {
                (1, StreamValue::Bytes { offset, len }) => {
                    let name = plane::read_plane_name(src, offset, len)?;
                    index.planes.push(PlaneRef { name, offset, len });
                }
                (2..=4, StreamValue::Bytes { offset, len: n }) => {
                    let text =
                        String::from_utf8_lossy(reader.bytes(offset, n.min(4096))?).into_owned();
                    let list = match field.0 {
                        2 => &mut index.errors,
                        3 => &mut index.warnings,
                        _ => &mut index.hostnames,
                    };
                    if list.len() < MAX_TOP_LEVEL_STRINGS {
                        list.push(text);
                    }
                }
                (1..=4, _) => {
                    return Err(Error::NotACapture(
                        "its top-level fields do not have XSpace types".into(),
                    ));
                }
                _ if index.planes.is_empty() => {
                    return Err(Error::NotACapture(format!(
                        "it starts with protobuf field {} which an XSpace does not have",
                        field.0
                    )));
                }
                _ => {}
            }
        }
        if index.planes.is_empty() {
            return Err(Error::NotACapture("it holds no planes".into()));
        }
        Ok(index)
    }

    pub fn find(&self, name: &str) -> impl Iterator<Item = &PlaneRef> + '_ {
        let name = name.to_owned();
        self.planes.iter().filter(move |p| p.name == name)
    }
}

/// Recognizes common files that people pass by mistake, to name them in the error.
fn sniff_foreign_format(src: &dyn ByteSource) -> Result<(), Error> {
    let mut head = [0u8; 8];
    let n = src.read_at(0, &mut head).map_err(|e| Error::Read {
        offset: 0,
        message: e.to_string(),
    })?;
    let head = &head[..n];
    let what = if head.starts_with(&[0x1f, 0x8b]) {
        "it is gzip-compressed: decompress it first (gunzip), or pass the .xplane.pb itself, not a .trace.json.gz"
    } else if head.starts_with(b"\x89PNG") {
        "it is a PNG image"
    } else if head.starts_with(b"PK\x03\x04") {
        "it is a zip archive: unpack it and pass the .xplane.pb inside"
    } else if head
        .iter()
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
        && matches!(
            head.iter().find(|b| !b.is_ascii_whitespace()),
            Some(b'{') | Some(b'[')
        )
    {
        "it is JSON text (a trace viewer .json?), not the binary .xplane.pb"
    } else {
        return Ok(());
    };
    Err(Error::NotACapture(what.into()))
}
