//! The page's split of a host plane into two parts, scanned by two workers that share
//! no memory: the split by line index, the second worker's work and its part encoded
//! as bytes, and the merge.

use std::ops::Range;

use super::host::HostVisitor;
use super::records::RuntimeScan;
use super::window::LineMarks;
use super::HOST_PLANE;
use crate::capture::Plane;
use crate::error::Error;
use crate::source::ByteSource;

/// How a host plane divides between two scanners: lines `0..second_from` and
/// `second_from..lines`, of about equal size. Both scanners compute it from the same
/// plane, so they agree without talking; the merge checks that they did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostSplit {
    /// Where the plane lies in the file, to tell it from another.
    pub plane_offset: u64,
    pub plane_bytes: u64,
    pub lines: usize,
    pub second_from: usize,
}

impl HostSplit {
    /// The first scanner's lines.
    pub fn first_lines(&self) -> Range<usize> {
        0..self.second_from
    }

    /// The second scanner's lines.
    pub fn second_lines(&self) -> Range<usize> {
        self.second_from..self.lines
    }
}

/// The split of a host plane of `from_bytes` or more (with all its lines indexed).
pub fn plane_split(plane: &Plane, from_bytes: u64) -> Option<HostSplit> {
    if plane.byte_len() < from_bytes || !plane.lines_indexed() || plane.line_count < 2 {
        return None;
    }
    let total: u64 = plane.lines.iter().map(|&(_, len)| len).sum();
    let mut acc = 0u64;
    let second_from = plane
        .lines
        .iter()
        .position(|&(_, len)| {
            acc += len;
            acc * 2 >= total
        })
        .map_or(1, |i| (i + 1).clamp(1, plane.line_count - 1));
    Some(HostSplit {
        plane_offset: plane.offset(),
        plane_bytes: plane.byte_len(),
        lines: plane.line_count,
        second_from,
    })
}

/// The split of the capture's host plane, when there is exactly one (as in every real
/// capture) and it is worth splitting.
pub fn host_split(planes: &[Plane], from_bytes: u64) -> Option<(usize, HostSplit)> {
    let mut hosts = planes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.name == HOST_PLANE);
    let (index, plane) = hosts.next()?;
    if hosts.next().is_some() {
        return None;
    }
    plane_split(plane, from_bytes).map(|split| (index, split))
}

/// Pass one over the lines `lines` of a host plane, into a fresh scan: one part of
/// [`scan_host`], for merging with [`merge_host_parts`].
pub fn scan_host_lines(
    src: &dyn ByteSource,
    plane: &Plane,
    lines: Range<usize>,
) -> Result<RuntimeScan, Error> {
    let mut scan = RuntimeScan::default();
    scan.line_marks.push(LineMarks::default());
    let mut visitor = HostVisitor::new(plane, scan);
    plane.visit_lines(src, lines, &mut visitor)?;
    Ok(visitor.scan)
}

/// Pass one over the host plane from its two parts, scanned apart (lines before and
/// after the split), as [`scan_host`] would have found it.
pub fn merge_host_parts(mut first: RuntimeScan, second: RuntimeScan) -> RuntimeScan {
    first.absorb(second);
    first.finish_host();
    first
}

/// The second part of a split host scan, as bytes to hand from one worker to another
/// (postcard: compact, and fast to read back).
pub fn encode_host_part(split: &HostSplit, scan: &RuntimeScan) -> Result<Vec<u8>, String> {
    postcard::to_stdvec(&(split, scan)).map_err(|e| e.to_string())
}

/// The second scanner's work: the split and the host plane's metadata (event and stat
/// names, line positions), so that it starts scanning without reading the index.
pub fn encode_host_work(split: &HostSplit, plane: &Plane) -> Result<Vec<u8>, String> {
    postcard::to_stdvec(&(split, plane)).map_err(|e| e.to_string())
}

/// Reads back [`encode_host_work`]'s bytes; `None` if they are not such work or the
/// plane is not the split's.
pub fn decode_host_work(bytes: &[u8]) -> Option<(HostSplit, Plane)> {
    let (split, plane): (HostSplit, Plane) = postcard::from_bytes(bytes).ok()?;
    let matches = plane.offset() == split.plane_offset
        && plane.byte_len() == split.plane_bytes
        && plane.line_count == split.lines
        && plane.lines.len() == split.lines
        && split.second_from <= split.lines;
    matches.then_some((split, plane))
}

/// Reads back [`encode_host_part`]'s bytes; `None` if they are not such a part.
pub fn decode_host_part(bytes: &[u8]) -> Option<(HostSplit, RuntimeScan)> {
    postcard::from_bytes(bytes).ok()
}
