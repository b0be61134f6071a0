//! Two threads at once, natively: the scan strategy ([`Scan`], chosen in
//! [`crate::Options`]) and the ways a plane is shared. Two threads share a host plane,
//! or a device plane whose kernels can be matched in any order, without an index of its
//! lines: the first scans from the plane's start; the second either claims a line start
//! near the middle of the plane's bytes, found by its shape, and scans from it (a plane
//! read tables-first, whose lines end where its tables start: [`LineClaim`], proved when
//! the first scanner meets it), or walks line headers to the middle, sets the boundary
//! there and scans on to the end ([`LineBoundary`]). TPU planes after the first are
//! shared by plane. Each thread scans into its own [`RuntimeScan`] and the parts are
//! merged in line (or plane) order, so the result is what one scanner finds. (The
//! page's workers share no memory and split a plane by line index instead: see
//! [`super::parts`].)

use super::device::DeviceVisitor;
use super::host::HostVisitor;
use super::records::RuntimeScan;
use super::scan::scan_device_plane;
use crate::capture::{LineBoundary, LineClaim, Plane, PlaneRef};
use crate::error::Error;
use crate::source::ByteSource;

/// Host planes at least this large are scanned by two scanners: threads natively
/// ([`Scan::default`]), workers in the page (its default `parallel_from_bytes`).
/// Below it the second scanner's start-up costs more than it saves.
pub const PARALLEL_FROM_BYTES: u64 = 32 << 20;

/// Device planes at least this large have their kernels matched by two threads
/// natively ([`Scan::default`]), when the order kernels are matched in cannot change
/// the result.
pub const DEVICE_PARALLEL_FROM_BYTES: u64 = 8 << 20;

/// How the runtime scan divides its work, from [`crate::Options::scan`]. Whatever the
/// strategy, the report is the same byte for byte; only the time differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// One thread reads every plane in order (the page, whose second worker is driven
    /// part by part instead; the CLI with `OOMLENS_THREADS=1`).
    OneThread,
    /// Two threads share a host plane of at least `host_from_bytes` and a device plane
    /// of at least `device_from_bytes`, when the source can be read from two threads at
    /// once (a file; bytes in memory and the page's `File` cannot) and, for a device
    /// plane, when its kernels can be matched to launches in any order (every launch
    /// names its module, and it is not a TPU, whose module runs must be read first).
    /// Planes below the thresholds, and the rest, are read by one thread.
    TwoThreads {
        host_from_bytes: u64,
        device_from_bytes: u64,
    },
}

impl Scan {
    /// Two threads from the sizes where they pay on two cores.
    pub const TWO_THREADS: Scan = Scan::TwoThreads {
        host_from_bytes: PARALLEL_FROM_BYTES,
        device_from_bytes: DEVICE_PARALLEL_FROM_BYTES,
    };

    /// The size from which a host plane is shared by two threads, if any is.
    pub(super) fn host_shared_from(self) -> Option<u64> {
        match self {
            Scan::OneThread => None,
            Scan::TwoThreads {
                host_from_bytes, ..
            } => Some(host_from_bytes),
        }
    }

    /// The size from which a device plane is shared by two threads, if any is.
    pub(super) fn device_shared_from(self) -> Option<u64> {
        match self {
            Scan::OneThread => None,
            Scan::TwoThreads {
                device_from_bytes, ..
            } => Some(device_from_bytes),
        }
    }
}

impl Default for Scan {
    /// [`Scan::TWO_THREADS`] natively; one thread in WebAssembly, which has none to
    /// spare (the page runs its second worker part by part).
    fn default() -> Self {
        if cfg!(target_arch = "wasm32") {
            Scan::OneThread
        } else {
            Scan::TWO_THREADS
        }
    }
}

/// Walks one host plane into `scan`, whose last line marks are this plane's: shared by
/// two threads when `how` and the source allow it, else in one walk.
pub(super) fn scan_host_plane(
    src: &dyn ByteSource,
    plane: &Plane,
    scan: RuntimeScan,
    how: Scan,
) -> Result<RuntimeScan, Error> {
    let shared = how
        .host_shared_from()
        .is_some_and(|from| plane.byte_len() >= from);
    if let (true, Some(second)) = (shared, src.share()) {
        if plane.shares_by_claim() {
            return share_host_plane_by_claim(src, second.as_ref(), plane, scan);
        }
        return share_host_plane(src, second.as_ref(), plane, scan);
    }
    let mut visitor = HostVisitor::new(plane, scan);
    plane.visit_events(src, &mut visitor)?;
    Ok(visitor.scan)
}

/// A host plane shared by two threads: this one scans from the start into `scan`
/// while the other, reading through `second`, scans from the middle into a fresh
/// scan; the later part is absorbed into the earlier.
fn share_host_plane(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    plane: &Plane,
    scan: RuntimeScan,
) -> Result<RuntimeScan, Error> {
    let boundary = LineBoundary::default();
    let (first, later) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let later = RuntimeScan::for_one_host_plane();
            scan_host_part(second, plane, &boundary, SharePart::Second, later)
        });
        let first = scan_host_part(src, plane, &boundary, SharePart::First, scan);
        (first, worker.join())
    });
    let later = later.unwrap_or_else(|_| {
        Err(Error::Read {
            offset: 0,
            message: "the second scan thread stopped".into(),
        })
    });
    let mut first = first?;
    first.absorb(later?);
    Ok(first)
}

/// A host plane read tables-first, shared by two threads by a claim (see
/// [`LineClaim`]): this one scans from the start into `scan` until the line the other
/// claimed near the middle; the other, reading through `second`, scans from there into
/// a fresh scan, absorbed into the earlier once the first scanner has met the claim.
fn share_host_plane_by_claim(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    plane: &Plane,
    scan: RuntimeScan,
) -> Result<RuntimeScan, Error> {
    let claim = LineClaim::default();
    let (first, later) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let mut visitor = HostVisitor::new(plane, RuntimeScan::for_one_host_plane());
            let walk = plane.visit_events_from_claim(second, &claim, &mut visitor);
            (visitor.scan, walk)
        });
        let mut visitor = HostVisitor::new(plane, scan);
        let walk = plane.visit_events_until_claim(src, &claim, &mut visitor);
        ((visitor.scan, walk), worker.join())
    });
    let (mut first, first_walk) = first;
    let Ok((later, later_walk)) = later else {
        return Err(Error::Read {
            offset: plane.offset(),
            message: "the second scan thread stopped".into(),
        });
    };
    if let Some(lines_before) = plane.join_claimed(first_walk, later_walk) {
        first.absorb(later.numbered_from_line(lines_before));
    }
    Ok(first)
}

/// One of the two scanners of a host plane shared without an index of its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SharePart {
    /// Lines from the start to the boundary.
    First,
    /// Lines from the boundary, which this scanner sets, to the end.
    Second,
}

/// Walks `part` of a host plane shared by two scanners into `scan`, whose last line
/// marks are this plane's. The two parts, merged in order ([`RuntimeScan::absorb`]),
/// are what one walk of the plane finds.
pub(super) fn scan_host_part(
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

/// Matches a device plane's kernels to launches on two threads sharing its lines (by a
/// claim when it was read tables-first, else by a boundary the second walks to), each
/// into its own copy of the launches ([`RuntimeScan::kernel_part`]): the parts to add
/// to `result` in order ([`RuntimeScan::absorb_kernels`]), or `None` when the second
/// walk did not confirm the tables read from the plane's end (nothing is added then,
/// and the plane is to be read again).
pub(super) fn match_kernels_shared(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    plane: &mut Plane,
    result: &RuntimeScan,
    order: &[u32],
) -> Result<Option<[RuntimeScan; 2]>, Error> {
    let (mut first, mut later) = (result.kernel_part(), result.kernel_part());
    if plane.shares_by_claim() {
        let shared: &Plane = plane;
        let claim = LineClaim::default();
        let (first_walk, later_walk) = std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let mut visitor = DeviceVisitor::new(shared, &mut later, order, false);
                shared.visit_events_from_claim(second, &claim, &mut visitor)
            });
            let mut visitor = DeviceVisitor::new(shared, &mut first, order, false);
            let first_walk = shared.visit_events_until_claim(src, &claim, &mut visitor);
            (first_walk, worker.join())
        });
        let Ok(later_walk) = later_walk else {
            return Err(Error::Read {
                offset: shared.offset(),
                message: "the second scan thread stopped".into(),
            });
        };
        if shared.join_claimed(first_walk, later_walk).is_none() {
            // The first thread read every line: nothing of the second's is added.
            later = result.kernel_part();
        }
        return Ok(plane.confirm_tables().then_some([first, later]));
    }
    let boundary = LineBoundary::default();
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

/// Reads consecutive TPU planes after the first (whose module runs are collected as
/// launches, and read in order before) on two threads, each thread a run of them into
/// its own copy of the launches ([`RuntimeScan::kernel_part`]), with their per-plane
/// counts; then adds the two parts to `result` in plane order. Only for launches that
/// already name module and program ([`RuntimeScan::module_runs_match_in_any_order`]):
/// then no plane's reading depends on what another wrote, and the result is what one
/// walk of the planes in order finds.
pub(super) fn match_tpu_planes_shared(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    planes: &[PlaneRef],
    result: &mut RuntimeScan,
    order: &[u32],
) -> Result<(), Error> {
    let (mine, theirs) = planes.split_at(balanced_split(planes));
    let (first_part, later_part) = (result.kernel_part(), result.kernel_part());
    let (first, later) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| read_tpu_planes(second, theirs, later_part, order));
        let first = read_tpu_planes(src, mine, first_part, order);
        (first, worker.join())
    });
    let later = later.unwrap_or_else(|_| {
        Err(Error::Read {
            offset: theirs.first().map_or(0, |p| p.offset),
            message: "the second scan thread stopped".into(),
        })
    });
    result.absorb_kernels(first?);
    result.absorb_kernels(later?);
    Ok(())
}

/// Where to cut `planes` into two runs of about the same bytes, each of at least one.
fn balanced_split(planes: &[PlaneRef]) -> usize {
    let total: u64 = planes.iter().map(|p| p.len).sum();
    let mut before = 0u64;
    let mut best = (u64::MAX, 1);
    for (i, p) in planes
        .iter()
        .enumerate()
        .take(planes.len().saturating_sub(1))
    {
        before = before.saturating_add(p.len);
        let longer = before.max(total.saturating_sub(before));
        if longer < best.0 {
            best = (longer, i + 1);
        }
    }
    best.1
}

/// One thread's run of TPU planes, each read as one walk of the planes reads it (none
/// collects module runs: the first TPU plane was read before), into `part`.
fn read_tpu_planes(
    src: &dyn ByteSource,
    planes: &[PlaneRef],
    mut part: RuntimeScan,
    order: &[u32],
) -> Result<RuntimeScan, Error> {
    for at in planes {
        scan_device_plane(src, at, &mut part, order, None, &mut false)?;
    }
    Ok(part)
}

#[cfg(test)]
mod tests;
