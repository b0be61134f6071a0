//! Runtime analysis: the allocator timeline, every launch of every module, and — for
//! the selected module — bytes in use at each launch, growth across launches, what is
//! live at the last launch and who allocated it, and what the host did in between.

pub mod names;
pub mod scan;

use std::collections::HashMap;

use crate::capture::{CaptureIndex, Event, EventVisitor, LineInfo, Plane};
use crate::error::Error;
use crate::report::model::{
    AllocatorSummary, Execution, HostEventGroup, LiveGroup, Retry, Runtime,
};
use crate::source::ByteSource;
use names::{classify, EventKind};
use scan::{DeviceVisitor, ExecutionRecord, HostVisitor, Origin, RuntimeScan};

pub const HOST_PLANE: &str = "/host:CPU";
/// Points kept per allocator timeline.
const TIMELINE_POINTS: usize = 2000;
/// Launches listed in the report (all are counted).
const EXECUTIONS_LISTED: usize = 500;
/// Distinct host-event names kept between two launches.
const HOST_EVENT_NAMES: usize = 2000;

/// Pass one: scans the host plane, then each device plane.
pub fn scan(src: &dyn ByteSource, capture: &CaptureIndex) -> Result<RuntimeScan, Error> {
    let mut result = RuntimeScan::default();
    for at in capture.find(HOST_PLANE) {
        let plane = Plane::open(src, at)?;
        let mut visitor = HostVisitor::new(&plane, std::mem::take(&mut result));
        plane.visit_events(src, &mut visitor)?;
        result = visitor.scan;
    }
    result.finish_host();
    // Launches are in time order now.
    let order: Vec<u32> = (0..result.executions.len() as u32).collect();
    let mut first_tpu = true;
    for at in capture
        .planes
        .iter()
        .filter(|p| p.name.starts_with("/device:"))
    {
        let plane = Plane::open(src, at)?;
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
        let mut visitor = DeviceVisitor::new(&plane, &mut result, &order, collect);
        plane.visit_events(src, &mut visitor)?;
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
    ModuleLookup::new(modules).label(scan, e)
}

/// Every launch's label ([`execution_label`]), with the modules indexed once: a
/// capture with thousands of modules and a million launches stays linear.
pub fn execution_labels(scan: &RuntimeScan, modules: &[ModuleKey<'_>]) -> Vec<Option<String>> {
    let lookup = ModuleLookup::new(modules);
    scan.executions
        .iter()
        .map(|e| lookup.label(scan, e))
        .collect()
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

    fn label(&self, scan: &RuntimeScan, e: &ExecutionRecord) -> Option<String> {
        let name = e
            .module
            .and_then(|m| scan.module_names.get(m as usize))
            .map(String::as_str);
        if let Some(pid) = e.program_id {
            let found = match name {
                Some(n) => self.by_program_name.get(&(pid, n)),
                None => self.by_program.get(&pid),
            };
            if let Some(label) = found {
                return Some((*label).to_owned());
            }
        }
        let name = name?;
        // A TPU module line names the module by its label already.
        if let Some(label) = self.by_label.get(name) {
            return Some((*label).to_owned());
        }
        match self.by_name.get(name) {
            Some((label, 1)) => Some((*label).to_owned()),
            _ => Some(format!("{name}(?)")),
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
        .filter(|(_, a)| !a.name.contains("host"))
        .min_by(|(_, a), (_, b)| {
            b.peak_in_use
                .cmp(&a.peak_in_use)
                .then_with(|| natural(&a.name).cmp(&natural(&b.name)))
        })
        .map(|(i, _)| i as u16)
}

/// Builds the runtime section for the selected module (by label).
pub fn summarize(
    src: &dyn ByteSource,
    capture: &CaptureIndex,
    scan: &RuntimeScan,
    labels: &[Option<String>],
    selected: Option<&str>,
    non_aliased_outputs: u64,
) -> Result<Runtime, Error> {
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

    let in_use_at = |t: i64| -> Option<u64> {
        let main = main?;
        let upto = scan.records.partition_point(|r| r.time_ps < t);
        scan.records[..upto]
            .iter()
            .rev()
            .find(|r| r.allocator == main)
            .map(|r| r.in_use)
    };
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

    let retry_total: i64 = scan
        .retries
        .iter()
        .map(|r| r.duration_ps.max(0))
        .fold(0, i64::saturating_add);
    runtime.retry = Retry {
        count: scan.retries.len() as u64,
        longest_ns: scan
            .retries
            .iter()
            .map(|r| r.duration_ps)
            .max()
            .unwrap_or(0) as f64
            / 1000.0,
        total_ns: retry_total as f64 / 1000.0,
        any_execution_started_after: scan.retries.iter().any(|r| {
            r.execution
                .and_then(|i| scan.executions.get(i as usize))
                .map(|e| e.launched_kernels)
                .unwrap_or(false)
        }),
    };

    // Growth across the selected module's launches.
    let starts: Vec<i64> = selected_indices
        .iter()
        .filter_map(|&i| scan.executions.get(i))
        .map(|e| e.start_ps)
        .collect();
    runtime.in_use_at_selected_starts = starts.iter().filter_map(|&t| in_use_at(t)).collect();
    if runtime.in_use_at_selected_starts.len() >= 2 {
        let first = runtime.in_use_at_selected_starts[0] as i64;
        let last = *runtime.in_use_at_selected_starts.last().unwrap_or(&0) as i64;
        let steps = runtime.in_use_at_selected_starts.len() as i64 - 1;
        let growth = last.saturating_sub(first) / steps;
        runtime.growth_per_execution_bytes = Some(growth);
        if non_aliased_outputs > 0 {
            runtime.growth_ratio_to_outputs = Some(growth as f64 / non_aliased_outputs as f64);
        }
    }

    // Live arrays at the last launch, grouped by who allocated them.
    if let (Some(&last), Some(main)) = (starts.last(), main) {
        runtime.live_at_last_execution = live_groups(scan, labels, main, last, in_use_at(last));
    }
    // Host activity between the last two launches.
    if starts.len() >= 2 {
        let (from, to) = (starts[starts.len() - 2], starts[starts.len() - 1]);
        runtime.host_events_between_last_executions = host_events_between(src, capture, from, to)?;
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

fn live_groups(
    scan: &RuntimeScan,
    labels: &[Option<String>],
    allocator: u16,
    at: i64,
    in_use: Option<u64>,
) -> Vec<LiveGroup> {
    let mut live: HashMap<u64, (u64, Origin)> = HashMap::new();
    for r in scan
        .records
        .iter()
        .take_while(|r| r.time_ps < at)
        .filter(|r| r.allocator == allocator)
    {
        if r.is_allocation {
            live.insert(r.addr, (r.size, r.origin));
        } else {
            live.remove(&r.addr);
        }
    }
    // Number launches of each module in time order: "execution 3 of jit_step".
    let mut ordinal: HashMap<usize, usize> = HashMap::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, l) in labels.iter().enumerate() {
        let key = l.as_deref().unwrap_or("?");
        let n = seen.entry(key).or_insert(0);
        *n += 1;
        ordinal.insert(i, *n);
    }
    let mut groups: HashMap<String, (u64, u64)> = HashMap::new();
    let mut known = 0u64;
    for (size, origin) in live.values() {
        let name = match origin {
            Origin::Execution(i) => {
                let i = *i as usize;
                let label = labels
                    .get(i)
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| "?".into());
                format!(
                    "output of {label} execution {}",
                    ordinal.get(&i).copied().unwrap_or(0)
                )
            }
            Origin::Transfer(t) => {
                let name = scan
                    .transfers
                    .get(*t as usize)
                    .map(String::as_str)
                    .unwrap_or("transfer");
                format!("host-to-device transfer ({name})")
            }
            Origin::Unknown | Origin::Run(_) => "allocated outside any launch or transfer".into(),
        };
        let g = groups.entry(name).or_insert((0, 0));
        g.0 = g.0.saturating_add(*size);
        g.1 += 1;
        known = known.saturating_add(*size);
    }
    if let Some(total) = in_use {
        if total > known {
            groups.insert(
                "allocated before the capture started".into(),
                (total - known, 0),
            );
        }
    }
    let mut out: Vec<LiveGroup> = groups
        .into_iter()
        .map(|(origin, (bytes, count))| LiveGroup {
            origin,
            bytes,
            count,
        })
        .collect();
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.origin.cmp(&b.origin)));
    out
}

/// Pass two: host events that start within `[from, to)`, grouped by name.
fn host_events_between(
    src: &dyn ByteSource,
    capture: &CaptureIndex,
    from: i64,
    to: i64,
) -> Result<Vec<HostEventGroup>, Error> {
    struct Window<'p> {
        plane: &'p Plane,
        from: i64,
        to: i64,
        groups: HashMap<i64, (u64, i64)>,
    }
    impl EventVisitor for Window<'_> {
        fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
            let t = event.start_ps(line);
            if t < self.from || t >= self.to {
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
            let _ = self.plane;
        }
    }
    let mut out: Vec<HostEventGroup> = Vec::new();
    for at in capture.find(HOST_PLANE) {
        let plane = Plane::open(src, at)?;
        let mut window = Window {
            plane: &plane,
            from,
            to,
            groups: HashMap::new(),
        };
        plane.visit_events(src, &mut window)?;
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
    out.sort_by(|a, b| {
        b.total_ns
            .total_cmp(&a.total_ns)
            .then_with(|| b.count.cmp(&a.count))
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
        .find(|a| !a.name.contains("host"))?;
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
