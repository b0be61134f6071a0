//! The runtime scan of a capture: pass one over the host planes, then over each device
//! plane.

use super::device::DeviceVisitor;
use super::parallel::{
    match_kernels_shared, scan_host_plane, split_from, DEVICE_PARALLEL_FROM_BYTES,
};
pub use super::records::*;
pub use super::window::LineMarks;
use super::HOST_PLANE;
use crate::capture::{Plane, PlaneRef};
use crate::error::Error;
use crate::source::ByteSource;

/// Pass one over the host plane: allocator events, launches, transfers, retries.
/// Then [`scan_devices`] adds what the device planes say about those launches.
pub fn scan_host(src: &dyn ByteSource, planes: &[Plane]) -> Result<RuntimeScan, Error> {
    scan_host_sharing(src, planes, split_from())
}

/// [`scan_host`], with host planes of at least `share_from` bytes shared by two
/// threads (see [`scan_host_share`]).
pub fn scan_host_sharing(
    src: &dyn ByteSource,
    planes: &[Plane],
    share_from: Option<u64>,
) -> Result<RuntimeScan, Error> {
    let mut result = RuntimeScan::default();
    for plane in planes.iter().filter(|p| p.name == HOST_PLANE) {
        result.line_marks.push(LineMarks::default());
        result = scan_host_plane(src, plane, result, share_from)?;
    }
    result.finish_host();
    Ok(result)
}

/// The size from which this process shares a device plane between two threads, if it
/// does at all (see [`split_from`]).
pub fn device_share_from() -> Option<u64> {
    split_from().map(|_| DEVICE_PARALLEL_FROM_BYTES)
}

/// Pass one over each device plane: which launches ran kernels, and on TPU the
/// launches themselves. Device planes of at least `share_from` bytes are shared by two
/// threads where the order kernels are matched in cannot change the result
/// ([`device_share_from`] says from which size this process shares them).
pub fn scan_devices(
    src: &dyn ByteSource,
    device_planes: &[PlaneRef],
    mut result: RuntimeScan,
    share_from: Option<u64>,
) -> Result<RuntimeScan, Error> {
    // Launches are in time order now.
    let order: Vec<u32> = (0..result.executions.len() as u32).collect();
    let mut first_tpu = true;
    for at in device_planes {
        // A large plane may be shared by two threads, which need no index of its lines,
        // when kernels can be matched in any order.
        // A TPU's ops are placed by its module runs, which must be read first: its
        // lines are walked in order.
        let shared = share_from.is_some_and(|from| at.len >= from)
            && result.kernels_match_in_any_order()
            && !at.name.contains("TPU");
        let opened = if shared {
            Plane::open_tables_first(src, at)
        } else {
            Plane::open(src, at)
        };
        let Ok(mut plane) = opened else {
            result.device_line_counts.push(0);
            result.device_kernel_counts.push(0);
            continue;
        };
        if result.device_memory_bytes.is_none() {
            result.device_memory_bytes = plane
                .plane_stat("memory_size")
                .and_then(|v| v.as_ref())
                .and_then(|v| v.as_u64())
                .filter(|&b| b > 0);
        }
        let collect = first_tpu && plane.name.contains("TPU");
        if collect {
            first_tpu = false;
        }
        // Launches read from a device's module line come in line order.
        let events_before = result.device_events;
        if let (true, false, Some(second)) = (shared, collect, src.share()) {
            let parts = match_kernels_shared(src, second.as_ref(), &mut plane, &result, &order)?;
            if let Some(parts) = parts {
                result.device_line_counts.push(plane.line_count);
                for part in parts {
                    result.absorb_kernels(part);
                }
                let seen = result.device_events - events_before;
                result.device_kernel_counts.push(seen);
                continue;
            }
        }
        if plane.tables_unconfirmed() {
            // Read tables-first, but scanned by one walk after all (or the walk did not
            // meet the tables where they were taken to be): read it the usual way.
            let Ok(walked) = plane.reopen(src) else {
                result.device_line_counts.push(0);
                result.device_kernel_counts.push(0);
                continue;
            };
            plane = walked;
        }
        result.device_line_counts.push(plane.line_count);
        let mut visitor = DeviceVisitor::new(&plane, &mut result, &order, collect);
        plane.visit_events(src, &mut visitor)?;
        let seen = result.device_events - events_before;
        result.device_kernel_counts.push(seen);
    }
    // A launch nothing else named runs the module its `PjitFunction(<fn>)` call names
    // (XLA 2024–2025 names the module only in `ExecuteThunks`, which a launch that ran
    // out of memory never reaches).
    for e in &mut result.executions {
        if e.module.is_none() {
            e.module = e.module_hint;
        }
    }
    // TPU hosts do not name the module they launch; the device's module line does.
    let host_named = result.executions.iter().any(|e| e.module.is_some());
    if !host_named && !result.device_executions.is_empty() {
        result.executions = std::mem::take(&mut result.device_executions);
        result.executions.sort_by_key(|e| e.start_ps);
        // Allocation origins pointed at host launches, which are gone now.
        for r in &mut result.records {
            if matches!(r.origin, Origin::Execution(_)) {
                r.origin = Origin::Unknown;
            }
        }
    }
    Ok(result)
}
