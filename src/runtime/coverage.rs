//! What the capture's trace does not cover, said as such rather than read as a
//! failure: launches the device trace holds no kernels for, devices that recorded
//! none, and a final call that never finished.

use crate::report::model::{AllocatorSummary, Note, PlaneSummary};

use super::labels::LaunchLabels;
use super::scan::RuntimeScan;
use super::DEVICE_PLANE_PREFIX;
use crate::report::present;

/// Device names listed in a note before the rest are counted.
const DEVICES_LISTED: usize = 8;

/// The device trace's gaps: launches without kernels (but `failed`, the launch that
/// ran out, whose missing kernels are explained), and devices whose allocator was in
/// use while their plane recorded no kernel (a device the program does not use records
/// neither).
pub(crate) fn device_trace_gaps(
    scan: &RuntimeScan,
    labels: &LaunchLabels,
    planes: &[PlaneSummary],
    allocators: &[AllocatorSummary],
    failed: Option<usize>,
) -> Option<Note> {
    if scan.device_events == 0 {
        return None;
    }
    let ordinals = labels.ordinals();
    let mut without: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut missing = 0usize;
    for (i, e) in scan.executions.iter().enumerate() {
        if e.launched_kernels || Some(i) == failed {
            continue;
        }
        missing += 1;
        let label = labels.shown(i);
        let n = ordinals.get(i).copied().unwrap_or(0);
        match without.iter_mut().find(|(l, _)| *l == label) {
            Some((_, list)) => list.push(n),
            None => without.push((label, vec![n])),
        }
    }
    let devices: Vec<&str> = planes
        .iter()
        .filter(|p| p.name.starts_with(DEVICE_PLANE_PREFIX))
        .zip(&scan.device_kernel_counts)
        .filter(|(p, &count)| count == 0 && allocator_in_use(&p.name, allocators))
        .map(|(p, _)| p.name.as_str())
        .collect();
    if missing == 0 && devices.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    if missing > 0 {
        let groups: Vec<String> = without
            .into_iter()
            .map(|(label, list)| format!("{label} {}", present::executions(&list)))
            .collect();
        parts.push(format!(
            "it has no kernels for {missing} of {} launches ({})",
            scan.executions.len(),
            groups.join("; ")
        ));
    }
    if !devices.is_empty() {
        let total = scan.device_kernel_counts.len();
        let mut named = devices
            .iter()
            .take(DEVICES_LISTED)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if devices.len() > DEVICES_LISTED {
            named.push_str(&format!(", … {} more", devices.len() - DEVICES_LISTED));
        }
        parts.push(format!(
            "{} of {total} devices recorded no kernels ({named})",
            devices.len()
        ));
    }
    Some(Note {
        id: "device_trace_incomplete".into(),
        text: format!(
            "the device trace is incomplete: {}; a device trace cut short (the profiler's buffer filled, or tracing stopped before the devices finished) looks like this, so these launches are not taken as where memory ran out",
            parts.join("; ")
        ),
    })
}

/// A final call of a jitted function with no launch after it (see
/// [`super::unfinished_call`]).
pub(crate) fn unfinished_call_note(label: &str, start_ps: i64, error_pasted: bool) -> Note {
    let ask = if error_pasted {
        ""
    } else {
        "; if the program failed there, give its error message too (paste it in the page, or --error-text)"
    };
    Note {
        id: "capture_ends_during_call".into(),
        text: format!(
            "the capture ends during a call of {label} at {:.3} s with no launch of it after the call: it never started, or was still running when the capture stopped{ask}",
            start_ps as f64 / 1e12
        ),
    }
}

/// The device a plane records, as `("GPU", 3)` for `/device:GPU:3`.
fn plane_device(plane: &str) -> Option<(&str, u64)> {
    let (kind, ordinal) = plane.strip_prefix(DEVICE_PLANE_PREFIX)?.split_once(':')?;
    Some((kind, ordinal.parse().ok()?))
}

/// The device an allocator serves: `GPU_3_bfc` is GPU 3; a TPU's allocators are
/// named by their index on the host alone (`3`).
fn allocator_device(name: &str) -> Option<(&str, u64)> {
    if let Some(ordinal) = name.strip_prefix("TPU:") {
        return Some(("TPU", ordinal.parse().ok()?));
    }
    let ordinal = name.strip_prefix("GPU_")?.strip_suffix("_bfc")?;
    Some(("GPU", ordinal.parse().ok()?))
}

/// Whether the allocator of the device `plane` records allocated during the capture.
fn allocator_in_use(plane: &str, allocators: &[AllocatorSummary]) -> bool {
    let Some(device) = plane_device(plane) else {
        return false;
    };
    allocators
        .iter()
        .any(|a| a.allocations > 0 && allocator_device(&a.name) == Some(device))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocators_are_matched_to_device_planes() {
        assert_eq!(plane_device("/device:GPU:3"), Some(("GPU", 3)));
        assert_eq!(allocator_device("GPU_3_bfc"), Some(("GPU", 3)));
        assert_eq!(allocator_device("TPU:2"), Some(("TPU", 2)));
        assert_eq!(allocator_device("TPU:?"), None);
        assert_eq!(allocator_device("xla_gpu_host_bfc"), None);
        assert_eq!(allocator_device("GPU_collectivememory_0_bfc"), None);
    }
}
