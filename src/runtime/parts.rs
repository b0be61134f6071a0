//! The page's split of a host plane between two scanners that share no memory (two web
//! workers: a page on GitHub Pages gets no shared memory without cross-origin isolation
//! headers). The plane's lines are indexed before the scan (`prepare` with a
//! `split_from`), so the split is by line index, about half the bytes each side:
//!
//! 1. here, [`HostParts::plan`] the split and send [`HostParts::work`] to the other
//!    worker, then [`HostParts::scan_first`];
//! 2. there, [`SecondPart::from_work`] and [`SecondPart::scan`], which answers bytes;
//! 3. here, [`HostParts::receive`] those bytes and hand the parts to
//!    `Prepared::finish`, which merges them in line order and goes on with the device
//!    planes. A part that is missing (the other worker failed, or answered for another
//!    split) is scanned here then, so the report is the same either way.
//!
//! The bytes are postcard: compact, and fast to read back.

use std::ops::Range;

use super::host::HostVisitor;
use super::parallel::Scan;
use super::records::RuntimeScan;
use super::scan::{reopen_unconfirmed, scan_devices, scan_host_planes};
use super::HOST_PLANE;
use crate::capture::{Plane, PlaneRef};
use crate::error::Error;
use crate::source::ByteSource;

/// How a host plane divides between two scanners: lines `0..second_from` and
/// `second_from..lines`, of about equal size. It travels with the work and with the
/// answer, so that an answer is only taken for the split it was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct HostSplit {
    /// Where the plane lies in the file, to tell it from another.
    plane_offset: u64,
    plane_bytes: u64,
    lines: usize,
    second_from: usize,
}

impl HostSplit {
    /// The split of a host plane of `from_bytes` or more, with all its lines indexed.
    fn of(plane: &Plane, from_bytes: u64) -> Option<HostSplit> {
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

    /// Whether `plane` is the one this split was made for.
    fn is_of(&self, plane: &Plane) -> bool {
        plane.offset() == self.plane_offset
            && plane.byte_len() == self.plane_bytes
            && plane.line_count == self.lines
            && plane.lines.len() == self.lines
            && self.second_from <= self.lines
    }

    /// The first scanner's lines.
    fn first_lines(&self) -> Range<usize> {
        0..self.second_from
    }

    /// The second scanner's lines.
    fn second_lines(&self) -> Range<usize> {
        self.second_from..self.lines
    }
}

/// Pass one over the lines `lines` of a host plane, into a fresh scan.
fn scan_lines(
    src: &dyn ByteSource,
    plane: &Plane,
    lines: Range<usize>,
) -> Result<RuntimeScan, Error> {
    let mut visitor = HostVisitor::new(plane, RuntimeScan::for_one_host_plane());
    plane.visit_lines(src, lines, &mut visitor)?;
    // A part may cross to another worker: its records point at launches by index.
    visitor.scan.settle_origins();
    Ok(visitor.scan)
}

/// The capture's host plane in two parts, this scanner's side (see the module docs).
#[derive(Debug)]
pub struct HostParts {
    split: HostSplit,
    /// The plane's place among the prepared planes.
    plane: usize,
    first: Option<RuntimeScan>,
    second: Option<RuntimeScan>,
}

impl HostParts {
    /// The split of the capture's host plane among the prepared `planes`, when there is
    /// exactly one (as in every real capture), of at least `from_bytes`, with its lines
    /// indexed.
    pub fn plan(planes: &[Plane], from_bytes: u64) -> Option<HostParts> {
        let mut hosts = planes
            .iter()
            .enumerate()
            .filter(|(_, p)| p.name == HOST_PLANE);
        let (plane, at) = hosts.next()?;
        if hosts.next().is_some() {
            return None;
        }
        let split = HostSplit::of(at, from_bytes)?;
        Some(HostParts {
            split,
            plane,
            first: None,
            second: None,
        })
    }

    /// The second scanner's work, as bytes for [`SecondPart::from_work`]: the split and
    /// the host plane's metadata (event and stat names, line positions), so that it
    /// starts scanning without reading the capture's index.
    pub fn work(&self, planes: &[Plane]) -> Result<Vec<u8>, String> {
        let plane = planes.get(self.plane).ok_or("the host plane is gone")?;
        postcard::to_stdvec(&(&self.split, plane)).map_err(|e| e.to_string())
    }

    /// Scans the first part here.
    pub fn scan_first(&mut self, src: &dyn ByteSource, planes: &[Plane]) -> Result<(), Error> {
        self.first = Some(self.scan_part(src, planes, self.split.first_lines())?);
        Ok(())
    }

    /// Takes the second scanner's answer ([`SecondPart::scan`]); false, and nothing is
    /// taken, when the bytes are not a part of this split.
    pub fn receive(&mut self, answer: &[u8]) -> bool {
        let Ok((split, scan)) = postcard::from_bytes::<(HostSplit, RuntimeScan)>(answer) else {
            return false;
        };
        if split != self.split {
            return false;
        }
        self.second = Some(scan);
        true
    }

    /// The whole runtime scan from here: the parts merged in line order (a part not
    /// scanned yet is scanned now), the tables confirmed, then the device planes, as
    /// `scan_capture` goes on after its host pass.
    pub(crate) fn finish(
        self,
        src: &dyn ByteSource,
        planes: &mut [Plane],
        device_planes: &[PlaneRef],
        how: Scan,
        progress: &mut dyn FnMut(&str, u64, u64),
    ) -> Result<RuntimeScan, Error> {
        let mut host = self.merge(src, planes)?;
        // The split plane was walked to index its lines; any other is confirmed here.
        if reopen_unconfirmed(src, planes)? {
            host = scan_host_planes(src, planes, how)?;
        }
        scan_devices(src, device_planes, host, how, progress)
    }

    /// Pass one over the host plane from its two parts, as one scanner finds it.
    fn merge(mut self, src: &dyn ByteSource, planes: &[Plane]) -> Result<RuntimeScan, Error> {
        let mut first = match self.first.take() {
            Some(scan) => scan,
            None => self.scan_part(src, planes, self.split.first_lines())?,
        };
        let second = match self.second.take() {
            Some(scan) => scan,
            None => self.scan_part(src, planes, self.split.second_lines())?,
        };
        first.absorb(second);
        first.finish_host();
        Ok(first)
    }

    fn scan_part(
        &self,
        src: &dyn ByteSource,
        planes: &[Plane],
        lines: Range<usize>,
    ) -> Result<RuntimeScan, Error> {
        match planes.get(self.plane) {
            Some(plane) => scan_lines(src, plane, lines),
            None => Ok(RuntimeScan::default()),
        }
    }

    /// Parts scanned some other way (two threads sharing the plane), merged as the
    /// page's are.
    #[cfg(test)]
    pub(super) fn scanned(plane: usize, first: RuntimeScan, second: RuntimeScan) -> Self {
        HostParts {
            split: HostSplit {
                plane_offset: 0,
                plane_bytes: 0,
                lines: 0,
                second_from: 0,
            },
            plane,
            first: Some(first),
            second: Some(second),
        }
    }
}

/// The capture's host plane in two parts, the second scanner's side: its work, read
/// back from [`HostParts::work`]'s bytes.
#[derive(Debug)]
pub struct SecondPart {
    split: HostSplit,
    plane: Plane,
}

impl SecondPart {
    /// Reads back [`HostParts::work`]'s bytes; `None` if they are not such work or the
    /// plane is not the split's.
    pub fn from_work(work: &[u8]) -> Option<SecondPart> {
        let (split, plane): (HostSplit, Plane) = postcard::from_bytes(work).ok()?;
        split.is_of(&plane).then_some(SecondPart { split, plane })
    }

    /// Whether `src` is long enough to hold the plane: a file the work can be for.
    pub fn fits(&self, src: &dyn ByteSource) -> bool {
        self.plane.offset().saturating_add(self.plane.byte_len()) <= src.len()
    }

    /// Scans the second part's lines, and returns them as bytes for
    /// [`HostParts::receive`].
    pub fn scan(&self, src: &dyn ByteSource) -> Result<Vec<u8>, String> {
        let scan =
            scan_lines(src, &self.plane, self.split.second_lines()).map_err(|e| e.to_string())?;
        postcard::to_stdvec(&(&self.split, &scan)).map_err(|e| e.to_string())
    }
}
