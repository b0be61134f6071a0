//! The runtime scan of a prepared capture, behind one entry point ([`scan_capture`]):
//! pass one over the host planes (allocator events, launches, transfers, retries), the
//! launches resolved, then one pass over each device plane (kernels, TPU module runs),
//! with as many threads as the strategy ([`Scan`]) allows. The record types it keeps
//! are re-exported here.

use super::device::DeviceVisitor;
use super::parallel::{
    match_kernels_shared, match_planes_shared, read_tpu_run, scan_host_plane, split_off_last, Scan,
};
pub use super::records::{ExecutionRecord, RuntimeScan};
use super::HOST_PLANE;
use crate::capture::{Plane, PlaneRef};
use crate::error::Error;
use crate::source::ByteSource;

/// The whole runtime scan of a prepared capture: its host planes among `planes` (the
/// others are left alone), then `device_planes`, each opened in turn, as `how` says.
/// Reports progress as the `host plane` and `device planes` phases.
///
/// A host plane whose tables were read from its end (a guess, see
/// `Plane::open_tables_first`) is confirmed by this scan's walk of it; where the walk
/// refutes the guess, the plane is opened again by walking its lines and the host
/// planes are scanned again, so that nothing read with a wrong guess remains.
pub(crate) fn scan_capture(
    src: &dyn ByteSource,
    planes: &mut [Plane],
    device_planes: &[PlaneRef],
    how: Scan,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<RuntimeScan, Error> {
    progress("host plane", 0, src.len());
    let mut host = scan_host_planes(src, planes, how)?;
    if reopen_unconfirmed(src, planes)? {
        host = scan_host_planes(src, planes, how)?;
    }
    scan_devices(src, device_planes, host, how, progress)
}

/// After a walk of the host planes: confirms the tables read from their ends, and opens
/// again by walking the planes whose tables the walk did not meet where they were taken
/// to be. True if any was opened again: a scan done with them must be done again.
pub(super) fn reopen_unconfirmed(
    src: &dyn ByteSource,
    planes: &mut [Plane],
) -> Result<bool, Error> {
    let mut again = false;
    for plane in planes {
        if !plane.confirm_tables() {
            *plane = plane.reopen(src)?;
            again = true;
        }
    }
    Ok(again)
}

/// Pass one over every host plane among `planes`, in order, and the launches resolved
/// ([`RuntimeScan::finish_host`]).
pub(super) fn scan_host_planes(
    src: &dyn ByteSource,
    planes: &[Plane],
    how: Scan,
) -> Result<RuntimeScan, Error> {
    let mut result = RuntimeScan::default();
    for plane in planes.iter().filter(|p| p.name == HOST_PLANE) {
        result.start_host_plane();
        result = scan_host_plane(src, plane, result, how)?;
    }
    result.finish_host();
    Ok(result)
}

/// Pass one over each device plane, after the host's: which launches ran kernels, and
/// on TPU the launches themselves. Planes are opened one at a time, so that memory does
/// not grow with their number, and shared by two threads where `how` allows it and the
/// order kernels are matched in cannot change the result.
pub(super) fn scan_devices(
    src: &dyn ByteSource,
    device_planes: &[PlaneRef],
    mut result: RuntimeScan,
    how: Scan,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<RuntimeScan, Error> {
    progress("device planes", 0, src.len());
    let shared_from = how.device_shared_from();
    // Launches are in time order now.
    let order: Vec<u32> = (0..result.executions.len() as u32).collect();
    let mut first_tpu = true;
    let mut next = 0;
    while let Some(at) = device_planes.get(next) {
        let run = tpu_run(device_planes, next, shared_from);
        if let (Some(run), Some(second)) = (run, src.share()) {
            let part = read_tpu_run(src, second.as_ref(), run, &result, &order, first_tpu)?;
            match part {
                Some(part) => result.absorb_kernels(part),
                // A line could not be read: in one walk, as one walk stops at it.
                None => {
                    for at in run {
                        scan_device_plane(src, at, &mut result, &order, how, &mut first_tpu)?;
                    }
                }
            }
            first_tpu = false;
            next += run.len();
            continue;
        }
        let run = plane_run(device_planes, next, &result, shared_from);
        if let (Some(run), Some(second)) = (run, src.share()) {
            let (by_plane, last) = split_off_last(run, how.split_off_from());
            match_planes_shared(src, second.as_ref(), by_plane, &mut result, &order)?;
            if let Some(last) = last {
                let how = how.for_last_of_run(last);
                scan_device_plane(src, last, &mut result, &order, how, &mut first_tpu)?;
            }
            next += run.len();
            continue;
        }
        scan_device_plane(src, at, &mut result, &order, how, &mut first_tpu)?;
        next += 1;
    }
    result.finish_devices();
    Ok(result)
}

/// The run of consecutive TPU planes from `planes[from]` that two threads share by
/// line (see `parallel/deferred.rs`): together at least `shared_from` bytes.
fn tpu_run(planes: &[PlaneRef], from: usize, shared_from: Option<u64>) -> Option<&[PlaneRef]> {
    let shared_from = shared_from?;
    let rest = planes.get(from..)?;
    let len = rest.iter().take_while(|p| p.name.contains("TPU")).count();
    let run = rest.get(..len)?;
    let bytes: u64 = run.iter().map(|p| p.len).sum();
    (len >= 1 && bytes >= shared_from).then_some(run)
}

/// The run of consecutive device planes from `planes[from]`, other than TPU planes and
/// each too small to be shared by line, that two threads can share by plane when
/// kernels can be matched in any order (see [`RuntimeScan::kernels_match_in_any_order`]):
/// two or more planes, together at least `shared_from` bytes.
fn plane_run<'p>(
    planes: &'p [PlaneRef],
    from: usize,
    result: &RuntimeScan,
    shared_from: Option<u64>,
) -> Option<&'p [PlaneRef]> {
    let shared_from = shared_from?;
    let rest = planes.get(from..)?;
    if !result.kernels_match_in_any_order() {
        return None;
    }
    let len = rest
        .iter()
        .take_while(|p| !p.name.contains("TPU") && p.len < shared_from)
        .count();
    let run = rest.get(..len)?;
    let bytes: u64 = run.iter().map(|p| p.len).sum();
    (len >= 2 && bytes >= shared_from).then_some(run)
}

/// From this size on, a device plane read by one thread is opened tables-first (its
/// tables found from its end) and read by one walk that confirms them, instead of a
/// walk to find its tables and another to read its lines. Where a source is read in
/// blocks (the page's `File`), a plane larger than the few blocks it keeps is otherwise
/// read twice from the file; below this the two walks read blocks it still holds. The
/// price is a copy of the scan so far, to undo a walk that refutes the guess.
const ALONE_TABLES_FIRST_FROM: u64 = 32 << 20;

/// One device plane into `result`: its kernels matched to launches (the first TPU's
/// module runs collected as launches too), and its line and kernel counts kept, 0 for a
/// plane that cannot be read.
pub(super) fn scan_device_plane(
    src: &dyn ByteSource,
    at: &PlaneRef,
    result: &mut RuntimeScan,
    order: &[u32],
    how: Scan,
    first_tpu: &mut bool,
) -> Result<(), Error> {
    // A large plane may be shared by two threads, which need no index of its lines,
    // when kernels can be matched in any order. A TPU's ops are placed by its module
    // runs, which must be read first: its lines are walked in order.
    let shared = how.device_shared_from().is_some_and(|from| at.len >= from)
        && result.kernels_match_in_any_order()
        && !at.name.contains("TPU");
    let alone = !shared && at.len >= ALONE_TABLES_FIRST_FROM;
    let opened = if shared || alone {
        Plane::open_tables_first(src, at)
    } else {
        Plane::open(src, at)
    };
    let Ok(mut plane) = opened else {
        result.count_device_plane(0, 0);
        return Ok(());
    };
    // Launches read from a device's module line come in line order.
    let collect = *first_tpu && plane.name.contains("TPU");
    if collect {
        *first_tpu = false;
    }
    // The device's memory is noted from a plane's stats only once its tables are known
    // to be its own (walked, or read from its end and confirmed by the walk): a refuted
    // guess may hold stats that are not the plane's.
    if alone && plane.tables_unconfirmed() {
        let before = result.clone();
        let events_before = result.device_events;
        let mut visitor = DeviceVisitor::new(&plane, result, order, collect);
        plane.visit_events(src, &mut visitor)?;
        if plane.confirm_tables() {
            result.note_device_memory(&plane);
            let seen = result.device_events - events_before;
            result.count_device_plane(plane.line_count, seen);
            return Ok(());
        }
        // The walk met the tables elsewhere: what it read goes, and the plane is read
        // the usual way.
        *result = before;
        let Ok(walked) = plane.reopen(src) else {
            result.count_device_plane(0, 0);
            return Ok(());
        };
        plane = walked;
    }
    let events_before = result.device_events;
    if let (true, false, Some(second)) = (shared, collect, src.share()) {
        let part = match_kernels_shared(src, second.as_ref(), &mut plane, result, order, how)?;
        if let Some(part) = part {
            result.note_device_memory(&plane);
            result.absorb_kernels(part);
            let seen = result.device_events - events_before;
            result.count_device_plane(plane.line_count, seen);
            return Ok(());
        }
    }
    if plane.tables_unconfirmed() {
        // Read tables-first, but scanned by one walk after all (or the walk did not
        // meet the tables where they were taken to be): read it the usual way.
        let Ok(walked) = plane.reopen(src) else {
            result.count_device_plane(0, 0);
            return Ok(());
        };
        plane = walked;
    }
    result.note_device_memory(&plane);
    let mut visitor = DeviceVisitor::new(&plane, result, order, collect);
    plane.visit_events(src, &mut visitor)?;
    let seen = result.device_events - events_before;
    result.count_device_plane(plane.line_count, seen);
    Ok(())
}
