//! Two threads at once, natively: the scan strategy ([`Scan`], chosen in
//! [`crate::Options`]) and the ways a plane is shared. Two threads share a host plane,
//! or a device plane whose kernels can be matched in any order, without an index of its
//! lines: a plane read tables-first (whose lines end where its tables start) is cut into
//! segments at line starts found by their shape, each thread taking half of what is
//! left of the other's when it is done with its own ([`segments`]); another plane is
//! cut in two by a boundary the second thread walks line headers to ([`LineBoundary`]).
//! TPU planes are shared by line ([`deferred`]); runs of device planes each too small to
//! share by line are shared by plane, their last plane split off and shared by
//! segments where that balances the threads ([`split_off_last`]). Each thread scans
//! into its own [`RuntimeScan`] (a host part capped and put in time order by the thread
//! that scanned it) and the parts are merged in line (or plane) order, so the result is
//! what one scanner finds. (The page's workers share no memory and split a plane by
//! line index instead: see [`super::parts`].)

pub(super) use self::deferred::read_tpu_run;
use self::segments::{scan_segments, SegmentScan};
use super::device::DeviceVisitor;
use super::host::HostVisitor;
use super::records::{RuntimeScan, SharedCut};
use super::scan::scan_device_plane;
use crate::capture::{LineBoundary, Plane, PlaneRef, SegmentWalk};
use crate::error::Error;
use crate::source::ByteSource;

mod deferred;
mod segments;

/// Host planes at least this large are scanned by two scanners: threads natively
/// ([`Scan::default`]), workers in the page (its default `parallel_from_bytes`).
/// Below it the second scanner's start-up costs more than it saves.
pub const PARALLEL_FROM_BYTES: u64 = 32 << 20;

/// Device planes at least this large have their kernels matched by two threads
/// natively ([`Scan::default`]), when the order kernels are matched in cannot change
/// the result.
pub const DEVICE_PARALLEL_FROM_BYTES: u64 = 8 << 20;

/// A thread done with its segment of a plane takes half of what is left of the
/// other's when at least this much is left, natively: a smaller part costs more to
/// set up and add than it saves.
pub const CUT_FROM_BYTES: u64 = 8 << 20;

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
    /// Planes below the thresholds, and the rest, are read by one thread. A shared
    /// plane read tables-first is cut into segments as the threads go: a thread done
    /// with its own takes half of what is left of the other's, when at least
    /// `cut_from_bytes` are left.
    TwoThreads {
        host_from_bytes: u64,
        device_from_bytes: u64,
        cut_from_bytes: u64,
    },
}

impl Scan {
    /// Two threads from the sizes where they pay on two cores.
    pub const TWO_THREADS: Scan = Scan::TwoThreads {
        host_from_bytes: PARALLEL_FROM_BYTES,
        device_from_bytes: DEVICE_PARALLEL_FROM_BYTES,
        cut_from_bytes: CUT_FROM_BYTES,
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

    /// How little may be left of a segment for the other thread to cut it, when
    /// `plane` can be shared by segments at all.
    fn cut_from(self, plane: &Plane) -> Option<u64> {
        match self {
            Scan::TwoThreads { cut_from_bytes, .. } if plane.shares_by_segments() => {
                Some(cut_from_bytes)
            }
            _ => None,
        }
    }

    /// The strategy for the last plane of a run split off by [`split_off_last`]: shared
    /// by two threads whatever its size, the other thread cutting it from a quarter of
    /// it on (it is smaller than a plane shared on its own, which is cut from
    /// `cut_from_bytes` on).
    pub(super) fn for_last_of_run(self, plane: &PlaneRef) -> Scan {
        match self {
            Scan::OneThread => Scan::OneThread,
            Scan::TwoThreads {
                host_from_bytes, ..
            } => Scan::TwoThreads {
                host_from_bytes,
                device_from_bytes: 0,
                cut_from_bytes: plane.len / 4,
            },
        }
    }

    /// What splitting the last plane off a run shared by plane must save, in bytes one
    /// thread reads while the other waits ([`split_off_last`]): an eighth of the size
    /// from which a thread cuts another's segment (1 MiB natively), as a plane shared
    /// on its own costs about as much as cutting a segment does.
    pub(super) fn split_off_from(self) -> u64 {
        match self {
            Scan::OneThread => u64::MAX,
            Scan::TwoThreads { cut_from_bytes, .. } => cut_from_bytes / 8,
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
        if let Some(cut_from) = how.cut_from(plane) {
            let how = HostSegments {
                plane,
                records_cut: SharedCut::new(),
            };
            return scan_segments(src, second.as_ref(), plane, &how, cut_from, scan);
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
    mut scan: RuntimeScan,
) -> Result<RuntimeScan, Error> {
    let boundary = LineBoundary::default();
    let records_cut = SharedCut::new();
    let (first, later) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let mut later = RuntimeScan::for_one_host_plane();
            later.share_records_cut(&records_cut);
            scan_host_part(second, plane, &boundary, SharePart::Second, later)
        });
        scan.share_records_cut(&records_cut);
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

/// A host plane's segments scanned into [`RuntimeScan`]s, the later ones numbered on
/// from the lines before them.
struct HostSegments<'a> {
    plane: &'a Plane,
    /// The parts' shared cut of their histories (see `RuntimeScan::share_records_cut`).
    records_cut: SharedCut,
}

impl SegmentScan for HostSegments<'_> {
    type Part = RuntimeScan;

    fn part(&self) -> RuntimeScan {
        RuntimeScan::for_one_host_plane()
    }

    fn scan(
        &self,
        src: &dyn ByteSource,
        from: u64,
        stop: &dyn Fn(u64) -> bool,
        part: &mut RuntimeScan,
    ) -> SegmentWalk {
        let mut scan = std::mem::take(part);
        scan.share_records_cut(&self.records_cut);
        let mut visitor = HostVisitor::new(self.plane, scan);
        let walk = self.plane.visit_segment(src, from, stop, &mut visitor);
        *part = visitor.scan;
        walk
    }

    /// On this thread, while the other still scans: the join then merges parts.
    fn finish(&self, part: &mut RuntimeScan) {
        part.finish_part();
    }

    fn add(&self, into: &mut RuntimeScan, later: RuntimeScan, lines_before: usize) {
        into.absorb_from_line(later, lines_before);
    }
}

/// A device plane's segments matched to copies of the launches
/// ([`RuntimeScan::kernel_part`]).
struct KernelSegments<'a> {
    plane: &'a Plane,
    result: &'a RuntimeScan,
    order: &'a [u32],
}

impl SegmentScan for KernelSegments<'_> {
    type Part = RuntimeScan;

    fn part(&self) -> RuntimeScan {
        self.result.kernel_part()
    }

    fn scan(
        &self,
        src: &dyn ByteSource,
        from: u64,
        stop: &dyn Fn(u64) -> bool,
        part: &mut RuntimeScan,
    ) -> SegmentWalk {
        let mut visitor = DeviceVisitor::new(self.plane, part, self.order, false);
        self.plane.visit_segment(src, from, stop, &mut visitor)
    }

    fn add(&self, into: &mut RuntimeScan, later: RuntimeScan, _lines_before: usize) {
        into.absorb_kernels(later);
    }
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
    // On this thread, while the other may still scan: absorbing the part then merges.
    visitor.scan.finish_part();
    Ok(visitor.scan)
}

/// Matches a device plane's kernels to launches on two threads sharing its lines (by
/// segments when it was read tables-first, else by a boundary the second walks to),
/// each into its own copy of the launches ([`RuntimeScan::kernel_part`]): what to add
/// to `result` ([`RuntimeScan::absorb_kernels`]), or `None` when the walks did not
/// confirm the tables read from the plane's end (nothing is added then, and the plane
/// is to be read again).
pub(super) fn match_kernels_shared(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    plane: &mut Plane,
    result: &RuntimeScan,
    order: &[u32],
    how: Scan,
) -> Result<Option<RuntimeScan>, Error> {
    if let Some(cut_from) = how.cut_from(plane) {
        let shared: &Plane = plane;
        let how = KernelSegments {
            plane: shared,
            result,
            order,
        };
        let part = scan_segments(src, second, shared, &how, cut_from, result.kernel_part())?;
        return Ok(plane.confirm_tables().then_some(part));
    }
    let boundary = LineBoundary::default();
    let shared: &Plane = plane;
    // Each thread copies the launches for itself, the two copies made at once.
    let (first, later) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let mut later = result.kernel_part();
            let mut visitor = DeviceVisitor::new(shared, &mut later, order, false);
            shared
                .visit_events_from_middle(second, &boundary, &mut visitor)
                .map(|()| later)
        });
        let mut first = result.kernel_part();
        let mut visitor = DeviceVisitor::new(shared, &mut first, order, false);
        let first_walk = shared.visit_events_before(src, &boundary, &mut visitor);
        (first_walk.map(|()| first), worker.join())
    });
    let mut first = first?;
    let later = later.unwrap_or_else(|_| {
        Err(Error::Read {
            offset: shared.offset(),
            message: "the second scan thread stopped".into(),
        })
    })?;
    first.absorb_kernels(later);
    Ok(plane.confirm_tables().then_some(first))
}

/// Reads a run of consecutive device planes (see `plane_run` in `scan.rs`: TPU planes
/// after the first, or planes each too small to share by line) on two threads, each
/// thread a run of them into its own copy of the launches
/// ([`RuntimeScan::kernel_part`]), with their per-plane counts; then adds the two parts
/// to `result` in plane order. Only where no plane's reading depends on what another
/// wrote (launches that already name what the planes would name for them): the result
/// is what one walk of the planes in order finds.
pub(super) fn match_planes_shared(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    planes: &[PlaneRef],
    result: &mut RuntimeScan,
    order: &[u32],
) -> Result<(), Error> {
    let (mine, theirs) = planes.split_at(balanced_split(planes));
    let launches: &RuntimeScan = result;
    // Each thread copies the launches for itself, the two copies made at once.
    let (first, later) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| read_planes(second, theirs, launches.kernel_part(), order));
        let first = read_planes(src, mine, launches.kernel_part(), order);
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

/// `planes` (a run shared by plane, see [`match_planes_shared`]) as the planes to share
/// by plane and, when that balances the threads better, the last plane, to share by
/// segments on its own ([`Scan::for_last_of_run`]). A run shared by plane leaves one
/// thread idle for the difference between its two halves: a whole plane when the
/// planes are alike and odd in number (the seven planes of the scaled conv capture, one
/// thread reading four while the other read three). The last plane is split off when
/// that shrinks the difference by more than `min_gain` bytes, what sharing a plane on
/// its own costs.
pub(super) fn split_off_last(
    planes: &[PlaneRef],
    min_gain: u64,
) -> (&[PlaneRef], Option<&PlaneRef>) {
    let (Some((last, rest)), true) = (planes.split_last(), planes.len() >= 3) else {
        return (planes, None);
    };
    if imbalance(planes) > imbalance(rest).saturating_add(min_gain) {
        (rest, Some(last))
    } else {
        (planes, None)
    }
}

/// How many more bytes one thread reads than the other when `planes` are cut at their
/// [`balanced_split`].
fn imbalance(planes: &[PlaneRef]) -> u64 {
    let (first, later) = planes.split_at(balanced_split(planes));
    let bytes = |run: &[PlaneRef]| run.iter().map(|p| p.len).sum::<u64>();
    bytes(first).abs_diff(bytes(later))
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

/// One thread's run of device planes, each read as one walk of the planes reads it
/// (none collects module runs: the first TPU plane was read before), into `part`.
fn read_planes(
    src: &dyn ByteSource,
    planes: &[PlaneRef],
    mut part: RuntimeScan,
    order: &[u32],
) -> Result<RuntimeScan, Error> {
    for at in planes {
        scan_device_plane(src, at, &mut part, order, Scan::OneThread, &mut false)?;
    }
    Ok(part)
}

#[cfg(test)]
mod tests;
