//! Two scanners at once. Natively two threads share a host plane, or a device plane
//! whose kernels can be matched in any order, without an index of its lines (see
//! [`LineBoundary`]); each scans into its own [`RuntimeScan`] and the parts are merged
//! in line order.

use super::device::DeviceVisitor;
use super::host::HostVisitor;
use super::records::RuntimeScan;
use super::window::LineMarks;
use crate::capture::{LineBoundary, Plane};
use crate::error::Error;
use crate::source::ByteSource;

/// Matches a device plane's kernels to launches on two threads sharing its lines (see
/// [`LineBoundary`]), each into its own copy of the launches: the parts to add to
/// `result` in order ([`RuntimeScan::absorb_kernels`]), or `None` when the second
/// walk did not confirm the tables read from the plane's end (nothing is added then,
/// and the plane is to be read again).
pub(super) fn match_kernels_shared(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    plane: &mut Plane,
    result: &RuntimeScan,
    order: &[u32],
) -> Result<Option<[RuntimeScan; 2]>, Error> {
    let boundary = LineBoundary::default();
    let (mut first, mut later) = (result.kernel_part(), result.kernel_part());
    let shared: &Plane = plane;
    let (first_walk, later_walk) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let mut visitor = DeviceVisitor::new(shared, &mut later, order, false);
            shared.visit_events_from_middle(second, &boundary, &mut visitor)
        });
        let mut visitor = DeviceVisitor::new(shared, &mut first, order, false);
        let first_walk = shared.visit_events_before(src, &boundary, &mut visitor);
        (first_walk, worker.join())
    });
    first_walk?;
    later_walk.unwrap_or_else(|_| {
        Err(Error::Read {
            offset: shared.offset(),
            message: "the second scan thread stopped".into(),
        })
    })?;
    Ok(plane.confirm_tables().then_some([first, later]))
}

/// Device planes at least this large have their kernels matched by two threads
/// natively, when the order kernels are matched in cannot change the result.
pub(super) const DEVICE_PARALLEL_FROM_BYTES: u64 = 8 << 20;

/// Host planes at least this large are scanned by two scanners (threads natively,
/// workers in the page) where the source allows it.
pub const PARALLEL_FROM_BYTES: u64 = 32 << 20;

/// The size from which this process splits a host plane between two threads, if it
/// does at all: natively, unless `OOMLENS_THREADS=1` keeps the scan on one thread (for
/// comparisons and benchmarks); never in WebAssembly, where the page's second worker
/// does it (see `wasm.rs`).
pub fn split_from() -> Option<u64> {
    #[cfg(not(target_arch = "wasm32"))]
    let parallel = std::env::var("OOMLENS_THREADS").map_or(true, |v| v.trim() != "1");
    #[cfg(target_arch = "wasm32")]
    let parallel = false;
    parallel.then_some(PARALLEL_FROM_BYTES)
}

/// Walks one host plane into `scan`: natively, a large plane is shared by two threads
/// (see [`LineBoundary`]): this one scans from the start while the other walks line
/// headers to the middle and scans from there; the two parts are merged in order.
pub(super) fn scan_host_plane(
    src: &dyn ByteSource,
    plane: &Plane,
    scan: RuntimeScan,
    share_from: Option<u64>,
) -> Result<RuntimeScan, Error> {
    let shared = share_from.is_some_and(|from| plane.byte_len() >= from);
    if let (true, Some(second)) = (shared, src.share()) {
        let boundary = LineBoundary::default();
        let (first, later) = std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let mut later = RuntimeScan::default();
                later.line_marks.push(LineMarks::default());
                scan_host_share(second.as_ref(), plane, &boundary, SharePart::Second, later)
            });
            let first = scan_host_share(src, plane, &boundary, SharePart::First, scan);
            let later = worker.join().unwrap_or_else(|_| {
                Err(Error::Read {
                    offset: 0,
                    message: "the second scan thread stopped".into(),
                })
            });
            (first, later)
        });
        let mut first = first?;
        first.absorb(later?);
        return Ok(first);
    }
    let mut visitor = HostVisitor::new(plane, scan);
    plane.visit_events(src, &mut visitor)?;
    Ok(visitor.scan)
}

/// One of the two scanners of a host plane shared without an index of its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharePart {
    /// Lines from the start to the boundary.
    First,
    /// Lines from the boundary, which this scanner sets, to the end.
    Second,
}

/// Walks `part` of a host plane shared by two scanners (see [`LineBoundary`]) into
/// `scan`, whose last line marks are this plane's. The two parts, merged in order
/// ([`RuntimeScan::absorb`]), are what one walk of the plane finds.
pub fn scan_host_share(
    src: &dyn ByteSource,
    plane: &Plane,
    boundary: &LineBoundary,
    part: SharePart,
    scan: RuntimeScan,
) -> Result<RuntimeScan, Error> {
    let mut visitor = HostVisitor::new(plane, scan);
    match part {
        SharePart::First => plane.visit_events_before(src, boundary, &mut visitor)?,
        SharePart::Second => plane.visit_events_from_middle(src, boundary, &mut visitor)?,
    }
    Ok(visitor.scan)
}
