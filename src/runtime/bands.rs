//! The buffers live during the selected module's last launch, one band each, as
//! PyTorch's memory_viz draws them: each allocation paired with its free by address,
//! per device pool, from the history the scan kept. The largest by bytes × time live
//! in the window are listed; the rest, with what no pairing accounts for, is one
//! series of bytes, so that the bands and it add up to the pool's bytes in use. The
//! annotations of the listed buffers' allocation events (shape, op) are read again at
//! their places in the file: the scan decodes none of them.

use rustc_hash::FxHashMap as HashMap;

use super::labels::LaunchLabels;
use super::records::{AllocationRecord, Origin, RuntimeScan};
use super::HOST_PLANE;
use crate::capture::{Plane, StatRef};
use crate::error::Error;
use crate::report::model::{AllocatorKind, Band, BandKind, DeviceBands, ExecutionBands};
use crate::source::ByteSource;

/// Bands listed per device pool.
pub(crate) const BANDS_PER_DEVICE: usize = 256;
/// Device pools given bands.
const DEVICES: usize = 16;
/// Points kept of each pool's bytes in use outside the bands.
const OTHER_POINTS: usize = 1000;
/// Characters kept of an annotation (a capture's strings are not bounded).
const ANNOTATION_CHARS: usize = 200;

/// A buffer of one pool: its allocation's record, and its free's time if seen.
#[derive(Clone, Copy)]
struct Buffer<'s> {
    alloc: &'s AllocationRecord,
    end_ps: Option<i64>,
}

impl Buffer<'_> {
    fn start_ps(&self) -> i64 {
        self.alloc.time_ps
    }

    /// Whether it is live at some time in `[from, to]`.
    fn overlaps(&self, from: i64, to: i64) -> bool {
        self.start_ps() <= to && self.end_ps.is_none_or(|e| e > from)
    }

    /// Bytes × the time it is live in `[from, to]` (a picosecond at least, so that an
    /// instant window ranks by bytes).
    fn weight(&self, from: i64, to: i64) -> u128 {
        let a = self.start_ps().max(from);
        let b = self.end_ps.unwrap_or(i64::MAX).min(to);
        let span = u128::try_from(b.saturating_sub(a)).unwrap_or(0) + 1;
        u128::from(self.alloc.size) * span
    }
}

/// The bands of the selected module's last launch, when the history kept covers its
/// start.
pub(super) fn execution_bands(
    src: &dyn ByteSource,
    planes: &[Plane],
    scan: &RuntimeScan,
    labels: &LaunchLabels,
    ordinals: &[usize],
    selected: Option<&str>,
) -> Result<Option<ExecutionBands>, Error> {
    let Some(i) = labels.launches_of(selected).last() else {
        return Ok(None);
    };
    let Some(launch) = scan.executions.get(i) else {
        return Ok(None);
    };
    let (from, to) = (launch.start_ps, launch.end_ps.max(launch.start_ps));
    if scan.records_dropped_through_ps.is_some_and(|t| t >= from) {
        return Ok(None);
    }
    let mut pools: Vec<(usize, &str)> = scan
        .allocators
        .iter()
        .enumerate()
        .filter(|(_, a)| AllocatorKind::of_name(&a.name) == AllocatorKind::Device)
        .map(|(k, a)| (k, a.name.as_str()))
        .collect();
    pools.sort_by(|a, b| super::summary::natural_order(a.1, b.1));
    let mut devices = Vec::new();
    for (k, name) in pools {
        let Ok(allocator) = u16::try_from(k) else {
            continue;
        };
        if let Some(d) = device_bands(src, planes, scan, labels, ordinals, allocator, from, to)? {
            devices.push(DeviceBands {
                allocator: name.to_owned(),
                ..d
            });
        }
        if devices.len() >= DEVICES {
            break;
        }
    }
    if devices.is_empty() {
        return Ok(None);
    }
    Ok(Some(ExecutionBands {
        execution: format!(
            "{} execution {}",
            labels.shown(i),
            ordinals.get(i).copied().unwrap_or(0)
        ),
        start_ns: ns(from),
        end_ns: ns(to),
        devices,
    }))
}

fn ns(ps: i64) -> f64 {
    ps as f64 / 1000.0
}

/// The buffers of `allocator` live in `[from, to]`: allocations paired with the next
/// free of their address (an address allocated again unfreed ends the first).
fn buffers_live(scan: &RuntimeScan, allocator: u16, from: i64, to: i64) -> Vec<Buffer<'_>> {
    let mut open: HashMap<u64, &AllocationRecord> = HashMap::default();
    let mut ended: Vec<Buffer<'_>> = Vec::new();
    for r in scan.records.iter().filter(|r| r.allocator == allocator) {
        let freed = if r.is_allocation {
            open.insert(r.addr, r)
        } else {
            open.remove(&r.addr)
        };
        let b = freed.map(|alloc| Buffer {
            alloc,
            end_ps: Some(r.time_ps),
        });
        ended.extend(b.filter(|b| b.overlaps(from, to)));
    }
    ended.extend(open.into_values().map(|alloc| Buffer {
        alloc,
        end_ps: None,
    }));
    ended.retain(|b| b.overlaps(from, to));
    ended
}

/// One pool's bands in `[from, to]`, if it had a buffer live there.
#[allow(clippy::too_many_arguments)]
fn device_bands(
    src: &dyn ByteSource,
    planes: &[Plane],
    scan: &RuntimeScan,
    labels: &LaunchLabels,
    ordinals: &[usize],
    allocator: u16,
    from: i64,
    to: i64,
) -> Result<Option<DeviceBands>, Error> {
    let mut live = buffers_live(scan, allocator, from, to);
    if live.is_empty() {
        return Ok(None);
    }
    // The heaviest first; ties by time and address, so the choice is reproducible.
    live.sort_by(|a, b| {
        b.weight(from, to)
            .cmp(&a.weight(from, to))
            .then_with(|| a.start_ps().cmp(&b.start_ps()))
            .then_with(|| a.alloc.addr.cmp(&b.alloc.addr))
    });
    let smaller_count = live.len().saturating_sub(BANDS_PER_DEVICE) as u64;
    live.truncate(BANDS_PER_DEVICE);
    live.sort_by(|a, b| {
        a.start_ps()
            .cmp(&b.start_ps())
            .then_with(|| a.alloc.addr.cmp(&b.alloc.addr))
    });
    let annotations = annotations(src, planes, &live)?;
    let bands = live
        .iter()
        .zip(annotations)
        .enumerate()
        .map(|(k, (b, notes))| {
            let base_bytes = live[..k]
                .iter()
                .filter(|o| o.end_ps.is_none_or(|e| e > b.start_ps()))
                .map(|o| o.alloc.size)
                .fold(0, u64::saturating_add);
            let kind = if b.start_ps() < from {
                BandKind::Before
            } else if b.end_ps.is_some_and(|e| e <= to) {
                BandKind::Temporary
            } else {
                BandKind::Kept
            };
            Band {
                start_ns: ns(b.start_ps()),
                end_ns: b.end_ps.map(ns),
                bytes: b.alloc.size,
                base_bytes,
                kind,
                source: source(scan, labels, ordinals, b.alloc.origin),
                shape: notes.shape,
                dtype: notes.dtype,
                op: notes.op,
                region: notes.region,
            }
        })
        .collect();
    Ok(Some(DeviceBands {
        allocator: String::new(),
        bands,
        smaller_count,
        other_in_use: other_in_use(scan, allocator, &live, from, to),
    }))
}

/// Who allocated a buffer, in words.
fn source(scan: &RuntimeScan, labels: &LaunchLabels, ordinals: &[usize], origin: Origin) -> String {
    match origin {
        Origin::Execution(i) => {
            let i = i as usize;
            format!(
                "{} execution {}",
                labels.shown(i),
                ordinals.get(i).copied().unwrap_or(0)
            )
        }
        Origin::Transfer(t) => match scan.transfers.get(t as usize) {
            Some((event, Some(frame))) => format!("host-to-device transfer ({event} in {frame})"),
            Some((event, None)) => format!("host-to-device transfer ({event})"),
            None => "host-to-device transfer".to_owned(),
        },
        Origin::Unknown | Origin::Run(_) | Origin::Launch(_) => {
            "outside any launch or transfer".to_owned()
        }
    }
}

/// The pool's bytes in use that no band holds, at `from` and after each of its events
/// up to `to`: a walk through its history, the bands' starts and ends beside it.
fn other_in_use(
    scan: &RuntimeScan,
    allocator: u16,
    bands: &[Buffer<'_>],
    from: i64,
    to: i64,
) -> Vec<(f64, u64, u64)> {
    let mut starts: Vec<(i64, u64)> = bands.iter().map(|b| (b.start_ps(), b.alloc.size)).collect();
    let mut ends: Vec<(i64, u64)> = bands
        .iter()
        .filter_map(|b| Some((b.end_ps?, b.alloc.size)))
        .collect();
    starts.sort_unstable();
    ends.sort_unstable();
    let (mut s, mut e) = (0usize, 0usize);
    let mut banded: u64 = 0;
    // The bytes the bands hold after everything at or before `t`.
    let mut banded_at = |t: i64| {
        while let Some(&(_, bytes)) = starts.get(s).filter(|x| x.0 <= t) {
            banded = banded.saturating_add(bytes);
            s += 1;
        }
        while let Some(&(_, bytes)) = ends.get(e).filter(|x| x.0 <= t) {
            banded = banded.saturating_sub(bytes);
            e += 1;
        }
        banded
    };
    let records: Vec<&AllocationRecord> = scan
        .records
        .iter()
        .take_while(|r| r.time_ps <= to)
        .filter(|r| r.allocator == allocator)
        .collect();
    let mut points: Vec<(i64, u64, u64)> = Vec::new();
    // At the window's start: after the pool's last event at or before it.
    let upto = records.partition_point(|r| r.time_ps <= from);
    let at_start = match upto.checked_sub(1).and_then(|k| records.get(k)) {
        Some(r) => Some((r.in_use, r.reserved)),
        None => records.first().map(|r| {
            let before = if r.is_allocation {
                r.in_use.saturating_sub(r.size)
            } else {
                r.in_use.saturating_add(r.size)
            };
            (before, r.reserved)
        }),
    };
    if let Some((in_use, reserved)) = at_start {
        let other = in_use.saturating_sub(banded_at(from));
        points.push((from, other, reserved.min(other)));
    }
    let rest = records.get(upto..).unwrap_or_default();
    for (k, r) in rest.iter().enumerate() {
        // After the last of the events at one time.
        if rest.get(k + 1).is_some_and(|n| n.time_ps == r.time_ps) {
            continue;
        }
        let other = r.in_use.saturating_sub(banded_at(r.time_ps));
        points.push((r.time_ps, other, r.reserved.min(other)));
    }
    if points.len() > OTHER_POINTS {
        let width = points.len().div_ceil(OTHER_POINTS);
        points = points
            .chunks(width)
            .filter_map(|c| c.iter().max_by_key(|p| p.1).copied())
            .collect();
    }
    points.into_iter().map(|(t, b, r)| (ns(t), b, r)).collect()
}

/// What an allocation event says of its buffer, beyond its size.
#[derive(Debug, Default, Clone)]
struct Annotations {
    shape: Option<String>,
    dtype: Option<String>,
    op: Option<String>,
    region: Option<String>,
}

/// The annotations of each buffer's allocation event, read at its place in the file.
fn annotations(
    src: &dyn ByteSource,
    planes: &[Plane],
    buffers: &[Buffer<'_>],
) -> Result<Vec<Annotations>, Error> {
    let mut out = vec![Annotations::default(); buffers.len()];
    let offsets: Vec<u64> = buffers.iter().map(|b| b.alloc.event_at).collect();
    for plane in planes.iter().filter(|p| p.name == HOST_PLANE) {
        let ids = ["shape", "data_type", "tf_op", "region_type"].map(|n| plane.stat_id(n));
        if ids.iter().all(Option::is_none) {
            continue;
        }
        let (lo, hi) = (
            plane.offset(),
            plane.offset().saturating_add(plane.byte_len()),
        );
        let mine: Vec<u64> = offsets
            .iter()
            .map(|&at| {
                if at >= lo && at < hi && at > 0 {
                    at
                } else {
                    u64::MAX
                }
            })
            .collect();
        plane.event_stats_at(src, &mine, |k, id, value| {
            let Some(notes) = out.get_mut(k) else { return };
            let Some(which) = ids.iter().position(|&i| i == Some(id)) else {
                return;
            };
            match which {
                0 => notes.shape = text(plane, &value).map(|s| without_layout(&s)),
                1 => notes.dtype = value.as_i64().and_then(data_type).map(str::to_owned),
                2 => notes.op = text(plane, &value),
                _ => notes.region = text(plane, &value),
            }
        })?;
    }
    for notes in &mut out {
        // A shape names its element type (`f32[…]`) when the event's `data_type` does not.
        if notes.dtype.is_none() {
            notes.dtype = notes
                .shape
                .as_deref()
                .and_then(|s| s.split_once('['))
                .map(|(t, _)| t.to_owned())
                .filter(|t| !t.is_empty());
        }
    }
    Ok(out)
}

/// A string stat's value, cut to [`ANNOTATION_CHARS`]; none when empty or `(null)`,
/// as the allocator writes what it was not told.
fn text(plane: &Plane, value: &StatRef<'_>) -> Option<String> {
    let s = plane.stat_str(value)?;
    let s = s.trim();
    (!s.is_empty() && s != "(null)").then(|| s.chars().take(ANNOTATION_CHARS).collect())
}

/// `f32[5,1024]{1,0:T(8,128)}` without its layout: `f32[5,1024]`.
fn without_layout(shape: &str) -> String {
    match shape.find(']') {
        Some(end) if shape[end + 1..].starts_with('{') => shape[..=end].to_owned(),
        _ => shape.to_owned(),
    }
}

/// TensorFlow's `DataType` numbers (0, `DT_INVALID`, is what JAX leaves).
fn data_type(n: i64) -> Option<&'static str> {
    Some(match n {
        1 => "f32",
        2 => "f64",
        3 => "s32",
        4 => "u8",
        5 => "s16",
        6 => "s8",
        7 => "string",
        8 => "c64",
        9 => "s64",
        10 => "pred",
        14 => "bf16",
        17 => "u16",
        18 => "c128",
        19 => "f16",
        22 => "u32",
        23 => "u64",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::records::{AllocatorState, ExecutionRecord};
    use super::*;

    /// A pool with 10 buffers held from before a launch and 300 made in it, each freed
    /// before the next but one is: the largest are listed, the rest counted, and at
    /// every point the bands live and the rest add up to what was in use.
    #[test]
    fn bands_are_capped_and_add_up_to_bytes_in_use() {
        let mut scan = RuntimeScan::default();
        scan.allocators.push(AllocatorState {
            name: "GPU_0_bfc".into(),
            ..Default::default()
        });
        scan.executions
            .push(ExecutionRecord::spanning(10_000, 20_000));
        let reserved = 64;
        let mut in_use = reserved;
        let mut event = |t: i64, addr: u64, size: u64, is_allocation: bool| {
            if is_allocation {
                in_use += size;
            } else {
                in_use -= size;
            }
            let mut r = super::super::records::tests::record(t, Origin::Unknown);
            (r.in_use, r.reserved, r.addr, r.size, r.is_allocation) =
                (in_use, reserved, addr, size, is_allocation);
            // As on TPU: a free names no size, its allocation does.
            if !is_allocation {
                r.size = 0;
            }
            scan.records.push(r);
        };
        for k in 0..10u64 {
            event(100 + k as i64, 1 << 40 | k, 1000, true);
        }
        for k in 0..300u64 {
            let t = 10_000 + 10 * k as i64;
            event(t, k, 10 * (k + 1), true);
            if k > 0 {
                event(t + 5, k - 1, 10 * k, false);
            }
        }
        event(30_000, 299, 3000, false);
        let labels = LaunchLabels::new([Some("m")]);
        let src: Vec<u8> = Vec::new();
        let d = device_bands(&src, &[], &scan, &labels, &[1], 0, 10_000, 20_000)
            .expect("no file is read")
            .expect("buffers are live");
        assert_eq!(d.bands.len(), BANDS_PER_DEVICE);
        assert_eq!(d.smaller_count, 310 - BANDS_PER_DEVICE as u64);
        assert!(
            d.bands
                .iter()
                .filter(|b| b.kind == BandKind::Before)
                .count()
                == 10
        );
        assert!(d.bands.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
        let in_use_at = |t_ns: f64| {
            scan.records
                .iter()
                .take_while(|r| (r.time_ps as f64) / 1000.0 <= t_ns)
                .last()
                .map_or(0, |r| r.in_use)
        };
        assert!(d.other_in_use.len() > 300);
        for &(t, other, of_which_reserved) in &d.other_in_use {
            let banded: u64 = d
                .bands
                .iter()
                .filter(|b| b.start_ns <= t && b.end_ns.is_none_or(|e| e > t))
                .map(|b| b.bytes)
                .sum();
            assert_eq!(banded + other, in_use_at(t), "at {t} ns");
            assert_eq!(of_which_reserved, reserved);
        }
    }

    #[test]
    fn layouts_are_left_out_of_shapes() {
        assert_eq!(without_layout("f32[5,1024]{1,0:T(8,128)}"), "f32[5,1024]");
        assert_eq!(without_layout("f32[]{:T(128)}"), "f32[]");
        assert_eq!(without_layout("(f32[2], s32[])"), "(f32[2], s32[])");
        assert_eq!(without_layout("float[1024]"), "float[1024]");
    }
}
