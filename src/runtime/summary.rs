//! The runtime section of the report: allocators and their timelines, launches with
//! the memory in use at each, `AllocatorRetry` waits, growth across the selected
//! module's launches, then the live arrays ([`super::live`]) and the host's activity
//! between its last two launches ([`super::window`]).

use super::bands::execution_bands;
use super::labels::LaunchLabels;
use super::live::{live_groups, InUse};
use super::records::{AllocationRecord, RetryRecord, RuntimeScan};
use super::window::host_events_between;
use crate::capture::Plane;
use crate::error::Error;
use crate::report::model::{AllocatorKind, AllocatorSummary, Execution, Retry, RetryWait, Runtime};
use crate::source::ByteSource;

/// Points kept per allocator timeline.
const TIMELINE_POINTS: usize = 2000;
/// Launches listed in the report (all are counted).
const EXECUTIONS_LISTED: usize = 500;
/// `AllocatorRetry` waits listed for the timeline (the longest).
const RETRY_WAITS_LISTED: usize = 200;

/// The device pool's capacity: the main device allocator's, when it recorded events.
pub(crate) fn pool_capacity(scan: &RuntimeScan) -> Option<u64> {
    let main = DevicePool::of(scan).main?;
    scan.allocators
        .get(main as usize)
        .map(|a| a.capacity)
        .filter(|&c| c > 0)
}

/// Bytes in use in the device pool when each launch started, when known, in launch
/// order (the pool is found once: a capture can hold tens of thousands of launches).
pub(crate) fn in_use_at_launches(scan: &RuntimeScan) -> Vec<Option<u64>> {
    let pool = DevicePool::of(scan);
    let mut in_use_at = pool.in_use_at_launch_starts();
    scan.executions
        .iter()
        .map(|e| in_use_at(e.start_ps))
        .collect()
}

/// Sort key that puts `GPU_2_bfc` before `GPU_10_bfc`.
fn natural(name: &str) -> (String, u64) {
    let digits: String = name.chars().filter(|c| c.is_ascii_digit()).collect();
    (
        name.chars().filter(|c| !c.is_ascii_digit()).collect(),
        digits.parse().unwrap_or(0),
    )
}

/// Names in the order a reader counts them: runs of digits by their value, so that
/// `TPU:2` comes before `TPU:10` and `GPU_2_bfc` before `GPU_10_bfc`.
pub(super) fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn runs(s: &str) -> impl Iterator<Item = (bool, &str)> + '_ {
        let mut rest = s;
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let digits = first.is_ascii_digit();
            let end = rest
                .find(|c: char| c.is_ascii_digit() != digits)
                .unwrap_or(rest.len());
            let (run, after) = rest.split_at(end);
            rest = after;
            Some((digits, run))
        })
    }
    let number = |run: &str| {
        let run = run.trim_start_matches('0');
        (run.len(), run.to_owned())
    };
    let mut x = runs(a);
    let mut y = runs(b);
    loop {
        let order = match (x.next(), y.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some((true, p)), Some((true, q))) => number(p).cmp(&number(q)),
            (Some((_, p)), Some((_, q))) => p.cmp(q),
        };
        if order.is_ne() {
            return order;
        }
    }
}

/// The device pool's history: the events of the device allocator that matters, the
/// largest peak among non-host allocators (`main`).
struct DevicePool<'s> {
    scan: &'s RuntimeScan,
    main: Option<u16>,
    /// [`DevicePool::in_use_before_first`], found once: a search through the whole
    /// history, asked for each launch before the main allocator's first kept event.
    before_first: std::cell::OnceCell<Option<u64>>,
}

impl<'s> DevicePool<'s> {
    fn of(scan: &'s RuntimeScan) -> Self {
        let main = scan
            .allocators
            .iter()
            .enumerate()
            .filter(|(_, a)| AllocatorKind::of_name(&a.name) == AllocatorKind::Device)
            .min_by(|(_, a), (_, b)| {
                b.peak_in_use
                    .cmp(&a.peak_in_use)
                    .then_with(|| natural(&a.name).cmp(&natural(&b.name)))
            })
            .map(|(i, _)| i as u16);
        DevicePool {
            scan,
            main,
            before_first: std::cell::OnceCell::new(),
        }
    }

    /// The main allocator's last event before `t`.
    fn last_record_before(&self, t: i64) -> Option<&'s AllocationRecord> {
        let main = self.main?;
        let records = &self.scan.records;
        let upto = records.partition_point(|r| r.time_ps < t);
        records[..upto].iter().rev().find(|r| r.allocator == main)
    }

    /// Whether the history kept reaches back to `t` (see `MAX_ALLOCATION_RECORDS`):
    /// before it, nothing is known.
    fn kept_at(&self, t: i64) -> bool {
        self.scan
            .records_dropped_through_ps
            .is_none_or(|through| t > through)
    }

    /// Bytes in use in the main allocator at `t`: after its last event before `t`;
    /// before any event, what the first event's own figures say was in use before it.
    fn in_use_at(&self, t: i64) -> Option<u64> {
        if !self.kept_at(t) {
            return None;
        }
        match self.last_record_before(t) {
            Some(r) => Some(r.in_use),
            None => self.in_use_before_first(),
        }
    }

    /// What the main allocator's first event says was in use before it.
    fn in_use_before_first(&self) -> Option<u64> {
        *self.before_first.get_or_init(|| {
            let main = self.main?;
            let first = self.scan.records.iter().find(|r| r.allocator == main)?;
            Some(if first.is_allocation {
                first.in_use.saturating_sub(first.size)
            } else {
                first.in_use.saturating_add(first.size)
            })
        })
    }

    /// [`DevicePool::in_use_at`] for launch starts asked in launch order: when the
    /// launches are in time order (as they are once the host planes are scanned), one
    /// walk through the history answers them all, instead of a search for each (tens
    /// of thousands of launches).
    fn in_use_at_launch_starts(&self) -> impl FnMut(i64) -> Option<u64> + '_ {
        let in_order = self
            .scan
            .executions
            .windows(2)
            .all(|w| w[0].start_ps <= w[1].start_ps);
        let mut walk = in_order.then_some(PoolWalk {
            pool: self,
            next: 0,
            last_main: None,
        });
        move |t| match walk.as_mut() {
            Some(walk) => walk.in_use_at(t),
            None => self.in_use_at(t),
        }
    }
}

/// A walk through the history in time order (see [`DevicePool::in_use_at_launch_starts`]).
struct PoolWalk<'p, 's> {
    pool: &'p DevicePool<'s>,
    /// The first record not before the last time asked.
    next: usize,
    /// The main allocator's last record before it.
    last_main: Option<&'s AllocationRecord>,
}

impl PoolWalk<'_, '_> {
    /// [`DevicePool::in_use_at`], for `t` at or after the last time asked.
    fn in_use_at(&mut self, t: i64) -> Option<u64> {
        let main = self.pool.main?;
        let records = &self.pool.scan.records;
        while let Some(r) = records.get(self.next).filter(|r| r.time_ps < t) {
            if r.allocator == main {
                self.last_main = Some(r);
            }
            self.next += 1;
        }
        if !self.pool.kept_at(t) {
            return None;
        }
        match self.last_main {
            Some(r) => Some(r.in_use),
            None => self.pool.in_use_before_first(),
        }
    }
}

/// What the runtime section needs to know about the selected module's plan.
#[derive(Debug, Clone, Default)]
pub(crate) struct SelectedPlan<'a> {
    pub label: Option<&'a str>,
    /// Outputs not aliased to a parameter (the bytes one execution adds if kept).
    pub non_aliased_outputs: u64,
    /// Byte sizes of its device-memory parameters (its arguments at each launch).
    pub parameter_sizes: Vec<u64>,
}

/// The growth per step that most steps show, when the series has a trend: the lower
/// median of the differences between consecutive values (one jump — a dataset loaded
/// once — is not a per-step growth). A median that goes up or down is a trend only
/// when the series as a whole moved that way by at least half what the median implies;
/// a series that goes up and down (224 → 232 → 224) has none, and gets no figure.
fn steady_step(values: &[u64]) -> Option<i64> {
    if values.len() < 2 {
        return None;
    }
    let mut steps: Vec<i64> = values
        .windows(2)
        .map(|w| (w[1] as i64).saturating_sub(w[0] as i64))
        .collect();
    steps.sort_unstable();
    // The lower median: with as many flat steps as growing ones, no steady growth.
    let median = steps[(steps.len() - 1) / 2];
    let net = (values[values.len() - 1] as i64).saturating_sub(values[0] as i64);
    let implied = median.saturating_mul(steps.len() as i64);
    let has_trend =
        median == 0 || (net.signum() == median.signum() && net.abs() >= implied.abs() / 2);
    has_trend.then_some(median)
}

/// Builds the runtime section for the selected module (by label).
pub(crate) fn summarize(
    src: &dyn ByteSource,
    planes: &[Plane],
    scan: &RuntimeScan,
    labels: &LaunchLabels,
    plan: &SelectedPlan<'_>,
) -> Result<Runtime, Error> {
    let pool = DevicePool::of(scan);
    let ordinals = labels.ordinals();
    let mut runtime = Runtime {
        execution_count: scan.executions.len() as u64 + scan.executions_dropped,
        transfers: scan.transfer_count,
        kernels: scan.kernels,
        device_memory_bytes: scan.device_memory_bytes,
        allocators: allocator_summaries(scan),
        execution_bands: execution_bands(src, planes, scan, labels, &ordinals, plan.label)?,
        executions: listed_executions(scan, labels, plan.label, &pool),
        retry: retry_summary(scan, labels, &ordinals),
        ..Default::default()
    };

    // Growth across the selected module's launches.
    let starts = selected_starts(scan, labels, plan.label);
    let mut in_use_at = pool.in_use_at_launch_starts();
    runtime.in_use_at_selected_starts = starts.iter().filter_map(|&t| in_use_at(t)).collect();
    runtime.in_use_at_end_bytes = pool.last_record_before(i64::MAX).map(|r| r.in_use);
    if let Some(growth) = steady_step(&runtime.in_use_at_selected_starts) {
        runtime.growth_per_execution_bytes = Some(growth);
        if plan.non_aliased_outputs > 0 {
            runtime.growth_ratio_to_outputs = Some(growth as f64 / plan.non_aliased_outputs as f64);
        }
    }

    // Live arrays at the last launch, grouped by who allocated them.
    let last = starts.last().copied().filter(|&t| pool.kept_at(t));
    if let (Some(last), Some(main)) = (last, pool.main) {
        // What the runtime reserved for itself is not an array: it is its own group,
        // so that the groups add up to the bytes in use at that start.
        let in_use = pool.last_record_before(last).map(|r| InUse {
            arrays: r.in_use.saturating_sub(r.reserved),
            reserved: r.reserved,
        });
        runtime.live_at_last_execution =
            live_groups(scan, labels, &ordinals, main, last, in_use, plan);
    }
    // Host activity between the last two launches.
    if let [.., from, to] = starts[..] {
        runtime.host_events_between_last_executions =
            host_events_between(src, planes, &scan.line_marks, from, to)?;
    }
    Ok(runtime)
}

/// Every allocator, device pools before host pools, each in natural order (`TPU:0`,
/// `TPU:1`, …), as the page lists them.
fn allocator_summaries(scan: &RuntimeScan) -> Vec<AllocatorSummary> {
    let mut allocators: Vec<AllocatorSummary> = scan
        .allocators
        .iter()
        .zip(allocator_timelines(scan))
        .map(|(a, timeline)| AllocatorSummary {
            name: a.name.clone(),
            kind: AllocatorKind::of_name(&a.name),
            capacity_bytes: a.capacity,
            peak_in_use_bytes: a.peak_in_use,
            peak_time_ps: a.peak_time_ps,
            fragmentation_at_peak: a.fragmentation_at_peak,
            lifetime_peak_bytes: a.lifetime_peak,
            allocations: a.allocations,
            deallocations: a.deallocations,
            timeline,
        })
        .collect();
    allocators.sort_by(|a, b| {
        let host = |k: AllocatorKind| k == AllocatorKind::Host;
        host(a.kind)
            .cmp(&host(b.kind))
            .then_with(|| natural_order(&a.name, &b.name))
    });
    allocators
}

/// The launches listed: the first [`EXECUTIONS_LISTED`], and every launch of the
/// selected module.
fn listed_executions(
    scan: &RuntimeScan,
    labels: &LaunchLabels,
    selected: Option<&str>,
    pool: &DevicePool<'_>,
) -> Vec<Execution> {
    let mut listed = Vec::new();
    let mut in_use_at = pool.in_use_at_launch_starts();
    // The first launches, then those of the selected module, in launch order.
    let first = 0..EXECUTIONS_LISTED.min(scan.executions.len());
    let later = labels
        .launches_of(selected)
        .filter(|&i| i >= EXECUTIONS_LISTED);
    for i in first.chain(later) {
        let Some(e) = scan.executions.get(i) else {
            continue;
        };
        listed.push(Execution {
            module: labels.shown(i).to_owned(),
            run_id: e.run_id,
            start_ns: e.start_ps as f64 / 1000.0,
            duration_ns: e.end_ps.saturating_sub(e.start_ps) as f64 / 1000.0,
            in_use_at_start_bytes: in_use_at(e.start_ps),
            launched_kernels: (scan.kernels > 0).then_some(e.launched_kernels),
        });
    }
    listed
}

/// The starts of the selected module's launches, in time order.
fn selected_starts(scan: &RuntimeScan, labels: &LaunchLabels, selected: Option<&str>) -> Vec<i64> {
    labels
        .launches_of(selected)
        .filter_map(|i| scan.executions.get(i))
        .map(|e| e.start_ps)
        .collect()
}

/// The `AllocatorRetry` waits: all counted and timed, the launches that waited named,
/// and the longest listed in time order for the timeline.
fn retry_summary(scan: &RuntimeScan, labels: &LaunchLabels, ordinals: &[usize]) -> Retry {
    let execution_name = |i: u32| {
        let i = i as usize;
        let label = labels.shown(i);
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
    let mut longest: Vec<&RetryRecord> = scan.retries.iter().collect();
    longest.sort_by_key(|r| std::cmp::Reverse(r.duration_ps));
    longest.truncate(RETRY_WAITS_LISTED);
    longest.sort_by_key(|r| r.start_ps);
    let totals = scan.retry_totals;
    Retry {
        waiting_executions: waiting,
        count: totals.count,
        longest_ns: totals.longest_ps as f64 / 1000.0,
        total_ns: totals.total_ps as f64 / 1000.0,
        any_execution_started_after: scan.retries.iter().any(|r| {
            r.execution
                .and_then(|i| scan.executions.get(i as usize))
                .is_some_and(|e| e.launched_kernels)
        }),
        waits: longest
            .into_iter()
            .map(|r| RetryWait {
                start_ns: r.start_ps as f64 / 1000.0,
                duration_ns: r.duration_ps as f64 / 1000.0,
                execution: r.execution.map(execution_name),
            })
            .collect(),
    }
}

/// Each allocator's memory in use over time, by its index: at most
/// [`TIMELINE_POINTS`] points, each the highest of a run of events when there are more.
fn allocator_timelines(scan: &RuntimeScan) -> Vec<Vec<(i64, u64)>> {
    // One pass through the history for every allocator.
    let mut points: Vec<Vec<(i64, u64)>> = vec![Vec::new(); scan.allocators.len()];
    for r in &scan.records {
        if let Some(p) = points.get_mut(r.allocator as usize) {
            p.push((r.time_ps, r.in_use));
        }
    }
    points
        .into_iter()
        .map(|points| {
            if points.len() <= TIMELINE_POINTS {
                return points;
            }
            let width = points.len().div_ceil(TIMELINE_POINTS);
            points
                .chunks(width)
                .filter_map(|c| c.iter().max_by_key(|p| p.1).copied())
                .collect()
        })
        .collect()
}

/// XProf's `get_memory_profile` reports the largest capacity and the largest peak of
/// any allocator, host pools included; says so when that differs from the device pool.
pub(crate) fn xprof_capacity_note(runtime: &Runtime) -> Option<String> {
    let device = runtime.device_pool()?;
    let largest = runtime.allocators.iter().max_by_key(|a| a.capacity_bytes)?;
    (largest.capacity_bytes != device.capacity_bytes).then(|| {
        format!(
            "XProf's memory profile shows a capacity of {}: the largest of any allocator ({}); the device pool {} holds {}",
            crate::units::size(largest.capacity_bytes),
            largest.name,
            device.name,
            crate::units::size(device.capacity_bytes)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_the_numbers_in_them() {
        let mut names = [
            "TPU:10",
            "TPU:2",
            "xla_gpu_host_bfc",
            "GPU_10_bfc",
            "TPU:0",
            "GPU_2_bfc",
            "GPU_collectivememory_0_bfc",
            "TPU:02",
            "TPU:1",
        ];
        names.sort_by(|a, b| natural_order(a, b));
        assert_eq!(
            names,
            [
                "GPU_2_bfc",
                "GPU_10_bfc",
                "GPU_collectivememory_0_bfc",
                "TPU:0",
                "TPU:1",
                "TPU:02",
                "TPU:2",
                "TPU:10",
                "xla_gpu_host_bfc",
            ]
        );
    }

    #[test]
    fn growth_is_the_step_most_executions_show() {
        assert_eq!(steady_step(&[316, 420, 524, 628]), Some(104));
        assert_eq!(steady_step(&[5, 20_000, 20_000, 20_000]), Some(0));
        assert_eq!(steady_step(&[10, 14, 14]), Some(0));
        assert_eq!(steady_step(&[10]), None);
    }

    #[test]
    fn a_series_that_goes_up_and_down_has_no_growth() {
        // The attention capture's jit_multiply(96): 304 → 288 → 304 MiB at its starts.
        assert_eq!(steady_step(&[304, 288, 304]), None);
        assert_eq!(steady_step(&[224, 232, 224, 232, 224]), None);
        // A leak with one step that gave some back is still a leak.
        assert_eq!(steady_step(&[100, 200, 190, 300, 400]), Some(100));
        assert_eq!(steady_step(&[400, 300, 200]), Some(-100));
    }

    /// One walk through the history gives, for launches in time order, what a search
    /// per launch gives: before the main allocator's first event, between events,
    /// on an event's time (not before it), past the last one, and before the kept
    /// history (unknown).
    #[test]
    fn in_use_at_launches_in_order_is_what_each_search_finds() {
        use super::super::records::tests::{execution, record};
        use super::super::records::{AllocatorState, Origin};
        let mut scan = RuntimeScan::default();
        for (name, peak) in [("GPU_0_bfc", 100), ("GPU_1_bfc", 900)] {
            scan.allocators.push(AllocatorState {
                name: name.into(),
                peak_in_use: peak,
                ..Default::default()
            });
        }
        for t in (10..200).step_by(7) {
            let mut r = record(t, Origin::Unknown);
            // Every third event is the other allocator's.
            r.allocator = u16::from(t % 3 == 0);
            r.in_use = (t as u64) * 10;
            r.is_allocation = t % 2 == 0;
            scan.records.push(r);
        }
        scan.executions = [0, 5, 10, 11, 17, 17, 50, 52, 199, 400]
            .into_iter()
            .map(execution)
            .collect();
        for through in [None, Some(16)] {
            scan.records_dropped_through_ps = through;
            let pool = DevicePool::of(&scan);
            assert_eq!(pool.main, Some(1));
            let each: Vec<_> = scan
                .executions
                .iter()
                .map(|e| pool.in_use_at(e.start_ps))
                .collect();
            assert_eq!(in_use_at_launches(&scan), each, "{through:?}");
            // Launches at or before the kept history's start are unknown.
            let unknown = each.iter().filter(|v| v.is_none()).count();
            assert_eq!(unknown, if through.is_some() { 4 } else { 0 }, "{each:?}");
            // The first launches come before the main allocator's first event (at 24,
            // an allocation from 240): 239 was in use.
            assert_eq!(each[4..7], [Some(239), Some(239), Some(450)], "{each:?}");
        }
        // Out of order, each launch is searched for.
        scan.executions.swap(2, 7);
        let pool = DevicePool::of(&scan);
        let each: Vec<_> = scan
            .executions
            .iter()
            .map(|e| pool.in_use_at(e.start_ps))
            .collect();
        assert_eq!(in_use_at_launches(&scan), each);
    }
}
