//! Runtime analysis: the allocator timeline, every launch of every module, and — for
//! the selected module — bytes in use at each launch, growth across launches, what is
//! live at the last launch and who allocated it, and what the host did in between.

pub mod coverage;
pub mod names;
pub mod scan;

use std::collections::HashMap;
use std::ops::Range;

use crate::capture::{Event, EventVisitor, LineBoundary, LineInfo, Plane, PlaneRef};
use crate::error::Error;
use crate::report::model::{
    AllocatorKind, AllocatorSummary, Execution, HostEventGroup, LiveGroup, LiveOrigin, Retry,
    RetryWait, Runtime,
};
use crate::report::present;
use crate::source::ByteSource;
use names::{classify, EventKind};
use scan::{DeviceVisitor, ExecutionRecord, HostVisitor, LineMarks, Origin, RuntimeScan};

pub const HOST_PLANE: &str = "/host:CPU";
/// Device planes: `/device:GPU:0`, `/device:TPU:3`, …
pub const DEVICE_PLANE_PREFIX: &str = "/device:";
/// Points kept per allocator timeline.
const TIMELINE_POINTS: usize = 2000;
/// Launches listed in the report (all are counted).
const EXECUTIONS_LISTED: usize = 500;
/// `AllocatorRetry` waits listed for the timeline (the longest).
const RETRY_WAITS_LISTED: usize = 200;
/// Distinct host-event names kept between two launches.
const HOST_EVENT_NAMES: usize = 2000;

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

/// Matches a device plane's kernels to launches on two threads sharing its lines (see
/// [`LineBoundary`]), each into its own copy of the launches: the parts to add to
/// `result` in order ([`RuntimeScan::absorb_kernels`]), or `None` when the second
/// walk did not confirm the tables read from the plane's end (nothing is added then,
/// and the plane is to be read again).
fn match_kernels_shared(
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
const DEVICE_PARALLEL_FROM_BYTES: u64 = 8 << 20;

/// Host planes at least this large are scanned by two scanners (threads natively,
/// workers in the page) where the source allows it.
pub const PARALLEL_FROM_BYTES: u64 = 32 << 20;

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
fn scan_host_plane(
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

/// What the runtime part of the report needs to know about the plans.
pub struct ModuleKey<'a> {
    pub name: &'a str,
    pub program_id: u64,
    pub label: &'a str,
}

/// The label a launch belongs to: by program id when known, else by name when the name
/// is unique among modules with plans, else `name(?)`.
pub fn execution_label(
    scan: &RuntimeScan,
    e: &ExecutionRecord,
    modules: &[ModuleKey<'_>],
) -> Option<String> {
    ModuleLookup::new(modules)
        .label(scan, e.module, e.program_id)
        .map(|m| m.label())
}

/// Every launch's label ([`execution_label`]), with the modules indexed once: a
/// capture with thousands of modules and a million launches stays linear.
pub fn execution_labels(scan: &RuntimeScan, modules: &[ModuleKey<'_>]) -> Vec<Option<String>> {
    let lookup = ModuleLookup::new(modules);
    scan.executions
        .iter()
        .map(|e| {
            lookup
                .label(scan, e.module, e.program_id)
                .map(|m| m.label())
        })
        .collect()
}

/// The launches not kept (see `MAX_EXECUTIONS`), counted by label as kept ones are.
pub fn dropped_launch_labels(
    scan: &RuntimeScan,
    modules: &[ModuleKey<'_>],
) -> Vec<(Option<LaunchModule>, u64)> {
    let lookup = ModuleLookup::new(modules);
    let mut counts: Vec<(Option<LaunchModule>, u64)> = scan
        .dropped_launches
        .iter()
        .map(|(&(module, program_id), &count)| (lookup.label(scan, module, program_id), count))
        .collect();
    // In the order of the labels shown, so that a name's repeats are neighbours.
    counts.sort_by_cached_key(|(m, count)| (m.as_ref().map(LaunchModule::label), *count));
    counts
}

/// The capture's last call of a jitted function, when no launch of its module started
/// at or after it (see [`scan::CallRecord`]): its label and start. A name several
/// modules share resolves to the one of them that never launched, if only one did not.
pub fn unfinished_call(
    scan: &RuntimeScan,
    modules: &[ModuleKey<'_>],
    labels: &[Option<String>],
) -> Option<(String, i64)> {
    let call = scan.last_call?;
    let lookup = ModuleLookup::new(modules);
    let label = match lookup.label(scan, call.module, None)? {
        LaunchModule::Known(label) => label,
        LaunchModule::Ambiguous(name) => {
            let launched = |l: &str| labels.iter().flatten().any(|x| x == l);
            let mut never: Vec<&ModuleKey<'_>> = modules
                .iter()
                .filter(|m| m.name == name && !launched(m.label))
                .collect();
            match (never.pop(), never.is_empty()) {
                (Some(only), true) => only.label.to_owned(),
                _ => return None,
            }
        }
    };
    let ran_after = scan
        .executions
        .iter()
        .zip(labels)
        .any(|(e, l)| e.start_ps >= call.start_ps && l.as_deref() == Some(label.as_str()));
    (!ran_after).then_some((label, call.start_ps))
}

/// The device pool's capacity: the main device allocator's, when it recorded events.
pub fn pool_capacity(scan: &RuntimeScan) -> Option<u64> {
    let main = main_allocator(scan)?;
    scan.allocators
        .get(main as usize)
        .map(|a| a.capacity)
        .filter(|&c| c > 0)
}

/// The first module (in order) for each key [`execution_label`] matches on.
struct ModuleLookup<'m> {
    by_program: HashMap<u64, &'m str>,
    by_program_name: HashMap<(u64, &'m str), &'m str>,
    by_label: HashMap<&'m str, &'m str>,
    /// Name → (first label, how many modules have the name).
    by_name: HashMap<&'m str, (&'m str, usize)>,
}

impl<'m> ModuleLookup<'m> {
    fn new(modules: &'m [ModuleKey<'m>]) -> Self {
        let mut lookup = ModuleLookup {
            by_program: HashMap::new(),
            by_program_name: HashMap::new(),
            by_label: HashMap::new(),
            by_name: HashMap::new(),
        };
        for m in modules {
            lookup.by_program.entry(m.program_id).or_insert(m.label);
            lookup
                .by_program_name
                .entry((m.program_id, m.name))
                .or_insert(m.label);
            lookup.by_label.entry(m.label).or_insert(m.label);
            let slot = lookup.by_name.entry(m.name).or_insert((m.label, 0));
            slot.1 = slot.1.saturating_add(1);
        }
        lookup
    }

    /// The label of a launch of interned `module` (if known) and `program_id`.
    fn label(
        &self,
        scan: &RuntimeScan,
        module: Option<u32>,
        program_id: Option<u64>,
    ) -> Option<LaunchModule> {
        let name = module
            .and_then(|m| scan.module_names.get(m as usize))
            .map(String::as_str);
        let known = |label: &&str| LaunchModule::Known((*label).to_owned());
        if let Some(pid) = program_id {
            let found = match name {
                Some(n) => self.by_program_name.get(&(pid, n)),
                None => self.by_program.get(&pid),
            };
            if let Some(label) = found {
                return Some(known(label));
            }
        }
        let name = name?;
        // A TPU module line names the module by its label already.
        if let Some(label) = self.by_label.get(name) {
            return Some(known(label));
        }
        match self.by_name.get(name) {
            Some((label, 1)) => Some(known(label)),
            _ => Some(LaunchModule::Ambiguous(name.to_owned())),
        }
    }
}

/// The module a launch ran, as far as the capture tells.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaunchModule {
    /// A module with a plan, by label.
    Known(String),
    /// A name several modules share (or none has), without the program id that would
    /// tell which.
    Ambiguous(String),
}

impl LaunchModule {
    /// The label the report shows: `jit_step(12)`, or `jit_step(?)` when ambiguous.
    pub fn label(&self) -> String {
        match self {
            LaunchModule::Known(label) => label.clone(),
            LaunchModule::Ambiguous(name) => format!("{name}(?)"),
        }
    }
}

/// Sort key that puts `GPU_2_bfc` before `GPU_10_bfc`.
fn natural(name: &str) -> (String, u64) {
    let digits: String = name.chars().filter(|c| c.is_ascii_digit()).collect();
    (
        name.chars().filter(|c| !c.is_ascii_digit()).collect(),
        digits.parse().unwrap_or(0),
    )
}

/// The device allocator that matters: the largest peak among non-host allocators.
fn main_allocator(scan: &RuntimeScan) -> Option<u16> {
    scan.allocators
        .iter()
        .enumerate()
        .filter(|(_, a)| AllocatorKind::of_name(&a.name) == AllocatorKind::Device)
        .min_by(|(_, a), (_, b)| {
            b.peak_in_use
                .cmp(&a.peak_in_use)
                .then_with(|| natural(&a.name).cmp(&natural(&b.name)))
        })
        .map(|(i, _)| i as u16)
}

/// The main allocator's last event before `t`.
fn last_record_before(
    scan: &RuntimeScan,
    main: Option<u16>,
    t: i64,
) -> Option<&scan::AllocationRecord> {
    let main = main?;
    let upto = scan.records.partition_point(|r| r.time_ps < t);
    scan.records[..upto]
        .iter()
        .rev()
        .find(|r| r.allocator == main)
}

/// Whether the history kept reaches back to `t` (see `MAX_ALLOCATION_RECORDS`):
/// before it, nothing is known.
fn kept_at(scan: &RuntimeScan, t: i64) -> bool {
    scan.records_dropped_through_ps
        .is_none_or(|through| t > through)
}

/// Bytes in use in the main allocator at `t`: after its last event before `t`; before
/// any event, what the first event's own figures say was in use before it.
fn in_use_at(scan: &RuntimeScan, main: Option<u16>, t: i64) -> Option<u64> {
    if !kept_at(scan, t) {
        return None;
    }
    if let Some(r) = last_record_before(scan, main, t) {
        return Some(r.in_use);
    }
    let main = main?;
    let first = scan.records.iter().find(|r| r.allocator == main)?;
    Some(if first.is_allocation {
        first.in_use.saturating_sub(first.size)
    } else {
        first.in_use.saturating_add(first.size)
    })
}

/// Bytes in use in the device pool when launch `index` started, when known.
pub fn in_use_at_launch(scan: &RuntimeScan, index: usize) -> Option<u64> {
    let start = scan.executions.get(index)?.start_ps;
    in_use_at(scan, main_allocator(scan), start)
}

/// What the runtime section needs to know about the selected module's plan.
#[derive(Debug, Clone, Default)]
pub struct SelectedPlan<'a> {
    pub label: Option<&'a str>,
    /// Outputs not aliased to a parameter (the bytes one execution adds if kept).
    pub non_aliased_outputs: u64,
    /// Byte sizes of its device-memory parameters (its arguments at each launch).
    pub parameter_sizes: Vec<u64>,
}

/// The median of the differences between consecutive values: the growth per step
/// that most steps show (one jump — a dataset loaded once — is not a per-step growth).
fn median_step(values: &[u64]) -> Option<i64> {
    if values.len() < 2 {
        return None;
    }
    let mut steps: Vec<i64> = values
        .windows(2)
        .map(|w| (w[1] as i64).saturating_sub(w[0] as i64))
        .collect();
    steps.sort_unstable();
    // The lower median: with as many flat steps as growing ones, no steady growth.
    Some(steps[(steps.len() - 1) / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_is_the_step_most_executions_show() {
        assert_eq!(median_step(&[316, 420, 524, 628]), Some(104));
        assert_eq!(median_step(&[5, 20_000, 20_000, 20_000]), Some(0));
        assert_eq!(median_step(&[10, 14, 14]), Some(0));
        assert_eq!(median_step(&[10]), None);
    }
}

/// Builds the runtime section for the selected module (by label).
pub fn summarize(
    src: &dyn ByteSource,
    planes: &[Plane],
    scan: &RuntimeScan,
    labels: &[Option<String>],
    plan: &SelectedPlan<'_>,
) -> Result<Runtime, Error> {
    let selected = plan.label;
    let non_aliased_outputs = plan.non_aliased_outputs;
    let mut runtime = Runtime {
        execution_count: scan.executions.len() as u64 + scan.executions_dropped,
        transfers: scan.transfer_count,
        kernels: scan.kernels,
        device_memory_bytes: scan.device_memory_bytes,
        ..Default::default()
    };
    let main = main_allocator(scan);
    for (i, a) in scan.allocators.iter().enumerate() {
        runtime.allocators.push(AllocatorSummary {
            name: a.name.clone(),
            kind: AllocatorKind::of_name(&a.name),
            capacity_bytes: a.capacity,
            peak_in_use_bytes: a.peak_in_use,
            peak_time_ps: a.peak_time_ps,
            fragmentation_at_peak: a.fragmentation_at_peak,
            lifetime_peak_bytes: a.lifetime_peak,
            allocations: a.allocations,
            deallocations: a.deallocations,
            timeline: allocator_timeline(scan, i as u16),
        });
    }
    // Largest pools first, so the device allocator leads.
    runtime.allocators.sort_by(|a, b| {
        b.peak_in_use_bytes
            .cmp(&a.peak_in_use_bytes)
            .then_with(|| natural(&a.name).cmp(&natural(&b.name)))
    });

    let last_record_before = |t: i64| last_record_before(scan, main, t);
    let kept_at = |t: i64| kept_at(scan, t);
    let in_use_at = |t: i64| in_use_at(scan, main, t);
    let selected_indices: Vec<usize> = labels
        .iter()
        .enumerate()
        .filter(|(_, l)| l.as_deref() == selected && selected.is_some())
        .map(|(i, _)| i)
        .collect();
    for (i, e) in scan.executions.iter().enumerate() {
        let is_selected =
            selected.is_some() && labels.get(i).and_then(|l| l.as_deref()) == selected;
        if i >= EXECUTIONS_LISTED && !is_selected {
            continue;
        }
        runtime.executions.push(Execution {
            module: labels
                .get(i)
                .cloned()
                .flatten()
                .unwrap_or_else(|| "?".into()),
            run_id: e.run_id,
            start_ns: e.start_ps as f64 / 1000.0,
            duration_ns: e.end_ps.saturating_sub(e.start_ps) as f64 / 1000.0,
            in_use_at_start_bytes: in_use_at(e.start_ps),
            launched_kernels: if scan.kernels > 0 {
                Some(e.launched_kernels)
            } else {
                None
            },
        });
    }

    let ordinals = execution_ordinals(labels);
    let execution_name = |i: u32| {
        let i = i as usize;
        let label = labels
            .get(i)
            .cloned()
            .flatten()
            .unwrap_or_else(|| "?".into());
        format!(
            "{label} execution {}",
            ordinals.get(i).copied().unwrap_or(0)
        )
    };
    let mut waiting: Vec<String> = Vec::new();
    for r in &scan.retries {
        let Some(i) = r.execution else { continue };
        let name = execution_name(i);
        if !waiting.contains(&name) {
            waiting.push(name);
        }
    }
    // The longest waits, in time order, for the timeline.
    let mut longest: Vec<&scan::RetryRecord> = scan.retries.iter().collect();
    longest.sort_by_key(|r| std::cmp::Reverse(r.duration_ps));
    longest.truncate(RETRY_WAITS_LISTED);
    longest.sort_by_key(|r| r.start_ps);
    let totals = scan.retry_totals;
    runtime.retry = Retry {
        waiting_executions: waiting,
        count: totals.count,
        longest_ns: totals.longest_ps as f64 / 1000.0,
        total_ns: totals.total_ps as f64 / 1000.0,
        any_execution_started_after: scan.retries.iter().any(|r| {
            r.execution
                .and_then(|i| scan.executions.get(i as usize))
                .map(|e| e.launched_kernels)
                .unwrap_or(false)
        }),
        waits: longest
            .into_iter()
            .map(|r| RetryWait {
                start_ns: r.start_ps as f64 / 1000.0,
                duration_ns: r.duration_ps as f64 / 1000.0,
                execution: r.execution.map(execution_name),
            })
            .collect(),
    };

    // Growth across the selected module's launches.
    let starts: Vec<i64> = selected_indices
        .iter()
        .filter_map(|&i| scan.executions.get(i))
        .map(|e| e.start_ps)
        .collect();
    runtime.in_use_at_selected_starts = starts.iter().filter_map(|&t| in_use_at(t)).collect();
    runtime.in_use_at_end_bytes = last_record_before(i64::MAX).map(|r| r.in_use);
    if let Some(growth) = median_step(&runtime.in_use_at_selected_starts) {
        runtime.growth_per_execution_bytes = Some(growth);
        if non_aliased_outputs > 0 {
            runtime.growth_ratio_to_outputs = Some(growth as f64 / non_aliased_outputs as f64);
        }
    }

    // Live arrays at the last launch, grouped by who allocated them.
    let last = starts.last().copied().filter(|&t| kept_at(t));
    if let (Some(last), Some(main)) = (last, main) {
        runtime.live_at_last_execution = live_groups(
            scan,
            labels,
            &ordinals,
            main,
            last,
            // Arrays only: what the runtime reserved for itself is not an array.
            last_record_before(last).map(|r| r.in_use.saturating_sub(r.reserved)),
            plan,
        );
    }
    // Host activity between the last two launches.
    if starts.len() >= 2 {
        let (from, to) = (starts[starts.len() - 2], starts[starts.len() - 1]);
        runtime.host_events_between_last_executions =
            host_events_between(src, planes, &scan.line_marks, from, to)?;
    }
    Ok(runtime)
}

fn allocator_timeline(scan: &RuntimeScan, allocator: u16) -> Vec<(i64, u64)> {
    let points: Vec<(i64, u64)> = scan
        .records
        .iter()
        .filter(|r| r.allocator == allocator)
        .map(|r| (r.time_ps, r.in_use))
        .collect();
    if points.len() <= TIMELINE_POINTS {
        return points;
    }
    let width = points.len().div_ceil(TIMELINE_POINTS);
    points
        .chunks(width)
        .filter_map(|c| c.iter().max_by_key(|p| p.1).copied())
        .collect()
}

/// Each launch's number among its module's launches, in time order (1-based).
pub(crate) fn execution_ordinals(labels: &[Option<String>]) -> Vec<usize> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    labels
        .iter()
        .map(|l| {
            let n = seen.entry(l.as_deref().unwrap_or("?")).or_insert(0);
            *n += 1;
            *n
        })
        .collect()
}

/// A live allocation at the last launch: bytes, requested bytes, who allocated it.
#[derive(Clone, Copy)]
struct Live {
    size: u64,
    requested: u64,
    origin: Origin,
}

/// The group a live allocation belongs to: a module's outputs (all its launches
/// together), a transfer (by event and the user's frame), or neither.
#[derive(Clone, PartialEq, Eq, Hash)]
enum GroupKey {
    Outputs(String),
    Transfer(u32),
    Outside,
}

fn live_groups(
    scan: &RuntimeScan,
    labels: &[Option<String>],
    ordinals: &[usize],
    allocator: u16,
    at: i64,
    allocated: Option<u64>,
    plan: &SelectedPlan<'_>,
) -> Vec<LiveGroup> {
    let mut live: HashMap<u64, Live> = HashMap::new();
    for r in scan
        .records
        .iter()
        .take_while(|r| r.time_ps < at)
        .filter(|r| r.allocator == allocator)
    {
        if r.is_allocation {
            live.insert(
                r.addr,
                Live {
                    size: r.size,
                    requested: r.requested,
                    origin: r.origin,
                },
            );
        } else {
            live.remove(&r.addr);
        }
    }
    // Oldest first, so matching and listing are deterministic.
    let mut live: Vec<(u64, Live)> = live.into_iter().collect();
    live.sort_by_key(|(addr, _)| *addr);

    let key_of = |l: &Live| -> GroupKey {
        match l.origin {
            Origin::Execution(i) => GroupKey::Outputs(
                labels
                    .get(i as usize)
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| "?".into()),
            ),
            Origin::Transfer(t) => GroupKey::Transfer(t),
            Origin::Unknown | Origin::Run(_) => GroupKey::Outside,
        }
    };
    let selected_outputs = plan.label.map(|l| GroupKey::Outputs(l.to_owned()));

    // The last launch's arguments are live at its start: match its parameter sizes to
    // live arrays — first arrays that are not its own earlier outputs (a transfer, an
    // init step's outputs), then memory held from before the capture, then its own
    // earlier outputs (state it returned and gets back, when not donated).
    let mut wanted: Vec<u64> = plan.parameter_sizes.clone();
    let mut input = vec![false; live.len()];
    let known: u64 = live
        .iter()
        .map(|(_, l)| l.size)
        .fold(0, u64::saturating_add);
    let before = allocated.unwrap_or(0).saturating_sub(known);
    let mut absorbed_before = 0u64;
    let matches = |l: &Live, p: u64| {
        if l.requested > 0 {
            l.requested == p
        } else {
            p <= l.size && l.size < p.saturating_add(256).max(p + 1)
        }
    };
    for own in [false, true] {
        for (k, (_, l)) in live.iter().enumerate() {
            if input[k] || (Some(key_of(l)) == selected_outputs) != own {
                continue;
            }
            if let Some(pos) = wanted.iter().position(|&p| matches(l, p)) {
                wanted.swap_remove(pos);
                input[k] = true;
            }
        }
        if !own {
            // Memory from before the capture can hold the rest; keep what it cannot
            // for the module's own outputs.
            let mut left = before;
            wanted.retain(|&p| {
                if p <= left {
                    left -= p;
                    false
                } else {
                    true
                }
            });
            absorbed_before = before - left;
        }
    }

    let mut groups: HashMap<GroupKey, (u64, u64, u64, Vec<usize>)> = HashMap::new();
    for (k, (_, l)) in live.iter().enumerate() {
        let g = groups.entry(key_of(l)).or_insert((0, 0, 0, Vec::new()));
        g.0 = g.0.saturating_add(l.size);
        g.1 += 1;
        if input[k] {
            g.2 = g.2.saturating_add(l.size);
        }
        if let Origin::Execution(i) = l.origin {
            let n = ordinals.get(i as usize).copied().unwrap_or(0);
            if !g.3.contains(&n) {
                g.3.push(n);
            }
        }
    }
    let mut out: Vec<LiveGroup> = groups
        .into_iter()
        .map(|(key, (bytes, count, input_bytes, launches))| {
            let origin = match key {
                GroupKey::Outputs(module) => LiveOrigin::Outputs {
                    module,
                    executions: launches,
                },
                GroupKey::Transfer(t) => {
                    let (event, frame) = scan
                        .transfers
                        .get(t as usize)
                        .cloned()
                        .unwrap_or_else(|| ("transfer".into(), None));
                    LiveOrigin::Transfer { event, frame }
                }
                GroupKey::Outside => LiveOrigin::Other,
            };
            LiveGroup {
                origin,
                bytes,
                count,
                input_bytes,
            }
        })
        .collect();
    if before > 0 {
        out.push(LiveGroup {
            origin: LiveOrigin::BeforeCapture {
                history_from_ps: scan.records_dropped_through_ps,
            },
            bytes: before,
            count: 0,
            input_bytes: absorbed_before,
        });
    }
    // Ties in the order the sentences sort in, so the order does not depend on hashing.
    out.sort_by_cached_key(|g| (std::cmp::Reverse(g.bytes), present::live_origin(&g.origin)));
    out
}

/// Pass two: host events that start within `[from, to)`, grouped by name.
fn host_events_between(
    src: &dyn ByteSource,
    planes: &[Plane],
    line_marks: &[LineMarks],
    from: i64,
    to: i64,
) -> Result<Vec<HostEventGroup>, Error> {
    struct Window<'p> {
        marks: Option<&'p LineMarks>,
        from: i64,
        to: i64,
        past_window: bool,
        groups: HashMap<i64, (u64, i64)>,
    }
    /// Whether a line can have events in the window: not when all its events start
    /// outside it (unknown without marks).
    fn may_overlap(marks: Option<&LineMarks>, line: usize, from: i64, to: i64) -> bool {
        marks.is_none_or(|m| m.may_overlap(line, from, to))
    }
    impl EventVisitor for Window<'_> {
        fn line(&mut self, line: &LineInfo) -> bool {
            may_overlap(self.marks, line.ordinal, self.from, self.to)
        }

        // Lines are in time order: start at the last checkpoint before the window and
        // stop at the first event after it.
        fn resume_at(&mut self, line: &LineInfo) -> Option<u64> {
            self.past_window = false;
            self.marks?.resume_point(line.ordinal, self.from)
        }

        fn line_done(&mut self) -> bool {
            self.past_window
        }

        fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
            let t = event.start_ps(line);
            if t >= self.to {
                self.past_window = true;
                return;
            }
            if t < self.from {
                return;
            }
            if self.groups.len() >= HOST_EVENT_NAMES
                && !self.groups.contains_key(&event.metadata_id)
            {
                return;
            }
            let g = self.groups.entry(event.metadata_id).or_insert((0, 0));
            g.0 += 1;
            g.1 = g.1.saturating_add(event.duration_ps.max(0));
        }
    }
    let mut out: Vec<HostEventGroup> = Vec::new();
    for (k, plane) in planes.iter().filter(|p| p.name == HOST_PLANE).enumerate() {
        let marks = line_marks.get(k);
        let mut window = Window {
            marks,
            from,
            to,
            past_window: false,
            groups: HashMap::new(),
        };
        if plane.lines_indexed() {
            let wanted = |i: usize| may_overlap(marks, i, from, to);
            plane.visit_lines_where(src, wanted, &mut window)?;
        } else {
            plane.visit_events(src, &mut window)?;
        }
        for (id, (count, total)) in window.groups {
            let name = plane
                .event_metadata
                .get(&id)
                .map(|m| m.name.clone())
                .unwrap_or_default();
            // Allocator bookkeeping is shown elsewhere; launches bound the window.
            if matches!(
                classify(&name),
                EventKind::Allocation | EventKind::Deallocation
            ) {
                continue;
            }
            out.push(HostEventGroup {
                name,
                count,
                total_ns: total as f64 / 1000.0,
            });
        }
    }
    // Names break ties, so that the order does not depend on hashing.
    out.sort_by(|a, b| {
        b.total_ns
            .total_cmp(&a.total_ns)
            .then_with(|| b.count.cmp(&a.count))
            .then_with(|| a.name.cmp(&b.name))
    });
    out.truncate(50);
    Ok(out)
}

/// XProf's `get_memory_profile` reports the largest capacity and the largest peak of
/// any allocator, host pools included; says so when that differs from the device pool.
pub fn xprof_capacity_note(runtime: &Runtime) -> Option<String> {
    let device = runtime
        .allocators
        .iter()
        .find(|a| a.kind == AllocatorKind::Device)?;
    let largest = runtime.allocators.iter().max_by_key(|a| a.capacity_bytes)?;
    (largest.capacity_bytes != device.capacity_bytes).then(|| {
        format!(
            "XProf's memory profile shows a capacity of {:.2} GiB: the largest of any allocator ({}); the device pool {} holds {:.2} GiB",
            largest.capacity_bytes as f64 / (1u64 << 30) as f64,
            largest.name,
            device.name,
            device.capacity_bytes as f64 / (1u64 << 30) as f64
        )
    })
}
