//! The runtime scan: one pass over the host plane (allocator events, launches,
//! transfers, retries) and one over each device plane (kernels), keeping compact
//! records and nothing per event that is not needed later.

// Fx hashing: these maps are keyed by small integers and looked up per event.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::{Deserialize, Serialize};

use super::names::{is_user_frame, jit_module_name, module_in_name, EventKind, KindTable};
use crate::capture::{Event, EventVisitor, LineInfo, Plane, StatRef};

/// Allocator events kept for the timeline and the live-array analysis: the latest ones
/// in time. Beyond this the peaks and counts stay exact (they are streamed) but the
/// history kept starts later: an out-of-memory error happens at the end of a capture,
/// and what is live then is best told from the latest events. A scan holds up to twice
/// this many before it drops the older half, so dropping costs little per event.
pub const MAX_ALLOCATION_RECORDS: usize = 1 << 17;
/// How often (in visited events of a line) the scan leaves a checkpoint.
pub const CHECKPOINT_EVERY: u32 = 4096;
/// Launches kept, the latest in time (as for allocator events); all are counted.
pub const MAX_EXECUTIONS: usize = 1 << 15;
/// `AllocatorRetry` waits kept; all are counted and timed (see [`RetryTotals`]).
pub const MAX_RETRY_RECORDS: usize = 1 << 16;

/// Stat metadata ids of the stats we read, resolved once per plane.
#[derive(Debug, Default, Clone, Copy)]
struct StatIds {
    allocator_name: Option<u64>,
    bytes_reserved: Option<u64>,
    bytes_allocated: Option<u64>,
    bytes_available: Option<u64>,
    fragmentation: Option<u64>,
    peak_bytes_in_use: Option<u64>,
    requested_bytes: Option<u64>,
    allocation_bytes: Option<u64>,
    addr: Option<u64>,
    index_on_host: Option<u64>,
    device_ordinal: Option<u64>,
    run_id: Option<u64>,
    producer_id: Option<u64>,
    producer_type: Option<u64>,
    consumer_id: Option<u64>,
    consumer_type: Option<u64>,
    module_name: Option<u64>,
    hlo_module: Option<u64>,
    program_id: Option<u64>,
    shape: Option<u64>,
}

/// What a stat of an allocator event is, by stat metadata id: a dense table, so that
/// decoding an allocator event costs one lookup per stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryStat {
    Ignored,
    BytesAllocated,
    BytesReserved,
    BytesAvailable,
    Fragmentation,
    PeakBytesInUse,
    Addr,
    AllocationBytes,
    RequestedBytes,
    AllocatorName,
    Device,
}

/// Stat metadata ids at or above this are looked up by comparison instead.
const DENSE_STAT_IDS: u64 = 1 << 16;

fn memory_stat_table(ids: &StatIds) -> Vec<MemoryStat> {
    let mut table = Vec::new();
    for (id, what) in ids.memory_stats() {
        if let Some(i) = id.filter(|&i| i < DENSE_STAT_IDS) {
            let i = i as usize;
            if table.len() <= i {
                table.resize(i + 1, MemoryStat::Ignored);
            }
            // The first name wins, as in the lookup by comparison.
            if table[i] == MemoryStat::Ignored {
                table[i] = what;
            }
        }
    }
    table
}

impl StatIds {
    /// The stats an allocator event carries, by id.
    fn memory_stats(&self) -> [(Option<u64>, MemoryStat); 11] {
        [
            (self.bytes_allocated, MemoryStat::BytesAllocated),
            (self.bytes_reserved, MemoryStat::BytesReserved),
            (self.bytes_available, MemoryStat::BytesAvailable),
            (self.fragmentation, MemoryStat::Fragmentation),
            (self.peak_bytes_in_use, MemoryStat::PeakBytesInUse),
            (self.addr, MemoryStat::Addr),
            (self.allocation_bytes, MemoryStat::AllocationBytes),
            (self.requested_bytes, MemoryStat::RequestedBytes),
            (self.allocator_name, MemoryStat::AllocatorName),
            (self.index_on_host, MemoryStat::Device),
            (self.device_ordinal, MemoryStat::Device),
        ]
    }

    /// What stat `id` is to an allocator event: by the dense table, or (for ids past
    /// it) by comparison.
    #[inline]
    fn memory_stat(&self, table: &[MemoryStat], id: u64) -> MemoryStat {
        if id < DENSE_STAT_IDS {
            return table
                .get(id as usize)
                .copied()
                .unwrap_or(MemoryStat::Ignored);
        }
        self.memory_stats()
            .into_iter()
            .find(|(i, _)| *i == Some(id))
            .map_or(MemoryStat::Ignored, |(_, what)| what)
    }

    fn resolve(plane: &Plane) -> Self {
        let mut ids = StatIds::default();
        for (&id, name) in &plane.stat_names {
            let slot = match name.as_str() {
                "allocator_name" => &mut ids.allocator_name,
                "bytes_reserved" => &mut ids.bytes_reserved,
                "bytes_allocated" => &mut ids.bytes_allocated,
                "bytes_available" => &mut ids.bytes_available,
                "fragmentation" => &mut ids.fragmentation,
                "peak_bytes_in_use" => &mut ids.peak_bytes_in_use,
                "requested_bytes" => &mut ids.requested_bytes,
                "allocation_bytes" => &mut ids.allocation_bytes,
                "addr" => &mut ids.addr,
                "index_on_host" => &mut ids.index_on_host,
                "device_ordinal" => &mut ids.device_ordinal,
                "run_id" => &mut ids.run_id,
                "_p" => &mut ids.producer_id,
                "_pt" => &mut ids.producer_type,
                "_c" => &mut ids.consumer_id,
                "_ct" => &mut ids.consumer_type,
                "module_name" => &mut ids.module_name,
                "hlo_module" => &mut ids.hlo_module,
                "program_id" => &mut ids.program_id,
                "shape" => &mut ids.shape,
                _ => continue,
            };
            // Interned values can share a name with a stat; the lowest id is the stat
            // in practice, but either works for lookups by id.
            if slot.is_none() {
                *slot = Some(id);
            }
        }
        ids
    }
}

/// A few stat ids, told apart from the rest in one step for ids below 128 (nearly
/// all: encoders number stat metadata from 1), so that a walk over an event's stats
/// decodes only the values asked for.
#[derive(Debug, Clone, Copy)]
struct StatSet<const N: usize> {
    low: u128,
    ids: [Option<u64>; N],
}

impl<const N: usize> StatSet<N> {
    fn new(ids: [Option<u64>; N]) -> Self {
        let low = ids
            .iter()
            .flatten()
            .filter(|&&id| id < 128)
            .fold(0u128, |low, &id| low | 1u128.wrapping_shl(id as u32));
        StatSet { low, ids }
    }

    #[inline(always)]
    fn contains(&self, id: u64) -> bool {
        if id < 128 {
            self.low.wrapping_shr(id as u32) & 1 == 1
        } else {
            self.ids.contains(&Some(id))
        }
    }

    /// The event's value of each stat in the set, in the set's order (the last when
    /// one repeats); the others are not decoded.
    #[inline]
    fn read<'a>(&self, event: &Event<'a>) -> [Option<StatRef<'a>>; N] {
        let mut values = [None; N];
        event.for_each_stat_of(
            |id| self.contains(id),
            |id, v| {
                let slot = self.ids.iter().position(|&i| i == Some(id));
                if let Some(value) = slot.and_then(|i| values.get_mut(i)) {
                    *value = Some(v);
                }
            },
        );
        values
    }
}

impl StatIds {
    /// What names a launch's run id: `run_id`, or a producer or consumer context.
    fn run_stats(&self) -> StatSet<5> {
        StatSet::new([
            self.run_id,
            self.producer_id,
            self.producer_type,
            self.consumer_id,
            self.consumer_type,
        ])
    }

    /// What a CPU thunk names.
    fn thunk_stats(&self) -> StatSet<3> {
        StatSet::new([self.run_id, self.hlo_module, self.program_id])
    }

    /// What a kernel names.
    fn kernel_stats(&self) -> StatSet<2> {
        StatSet::new([self.hlo_module, self.program_id])
    }
}

/// The module a `hlo_module` or `module_name` stat names, interned; a reference to an
/// interned string is resolved once per plane (cached in `by_ref`).
fn intern_module_stat(
    scan: &mut RuntimeScan,
    plane: &Plane,
    by_ref: &mut HashMap<u64, u32>,
    value: &StatRef<'_>,
) -> Option<u32> {
    match *value {
        StatRef::Ref(r) => {
            if let Some(&m) = by_ref.get(&r) {
                return Some(m);
            }
            let m = scan.intern_module(plane.stat_name(r)?);
            by_ref.insert(r, m);
            Some(m)
        }
        StatRef::Str(s) => Some(scan.intern_module(&String::from_utf8_lossy(s))),
        _ => None,
    }
}

/// Where an allocation came from: the launch or transfer enclosing it on its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Origin {
    Unknown,
    Execution(u32),
    Transfer(u32),
    /// Inside work for a launch identified by its run id (on a worker thread).
    Run(i64),
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct AllocationRecord {
    pub time_ps: i64,
    /// In use after the event (`bytes_allocated`), plus `bytes_reserved`.
    pub in_use: u64,
    /// `bytes_reserved` (the runtime's own reservation: XProf's "stack"; large on TPU).
    pub reserved: u64,
    pub addr: u64,
    /// `allocation_bytes` (the chunk), else `requested_bytes`.
    pub size: u64,
    /// `requested_bytes` (0 when absent, as on TPU deallocations).
    pub requested: u64,
    pub allocator: u16,
    pub is_allocation: bool,
    pub origin: Origin,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AllocatorState {
    pub name: String,
    pub capacity: u64,
    pub peak_in_use: u64,
    pub peak_time_ps: i64,
    pub fragmentation_at_peak: f64,
    pub lifetime_peak: u64,
    pub allocations: u64,
    pub deallocations: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecutionRecord {
    pub start_ps: i64,
    pub end_ps: i64,
    pub run_id: Option<i64>,
    /// Module name (HloModule name), when the events name it.
    pub module: Option<u32>,
    pub program_id: Option<u64>,
    pub launched_kernels: bool,
    pub waited_for_memory: bool,
    /// `jit_<fn>` from the enclosing `PjitFunction(<fn>)`: the module when nothing
    /// else names it (a launch that failed before `ExecuteThunks`).
    pub module_hint: Option<u32>,
    /// The PJRT C API context (kPjrtLibraryCall) that ties the caller's launch event to
    /// the plugin's on another line: launches sharing one are the same launch.
    #[serde(default)]
    pub link: Option<i64>,
    /// The run id of the launch's work on the device, when the host names it apart
    /// from the launch's own (TPU: `DoEnqueueProgram` inside the launch).
    #[serde(default)]
    pub device_run: Option<i64>,
}

impl ExecutionRecord {
    /// Takes in what another event of the same launch named.
    fn absorb_launch_event(&mut self, other: &ExecutionRecord) {
        self.module = self.module.or(other.module);
        self.program_id = self.program_id.or(other.program_id);
        self.run_id = self.run_id.or(other.run_id);
        self.link = self.link.or(other.link);
        self.device_run = self.device_run.or(other.device_run);
        self.end_ps = self.end_ps.max(other.end_ps);
        self.waited_for_memory |= other.waited_for_memory;
        self.launched_kernels |= other.launched_kernels;
        self.module_hint = self.module_hint.or(other.module_hint);
    }
}

/// Disjoint sets of launch indices, for launches that turn out to be one.
struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
        }
    }

    fn find(&mut self, mut i: u32) -> u32 {
        while let Some(&p) = self.parent.get(i as usize) {
            if p == i {
                break;
            }
            // Path halving keeps the chains short.
            let grand = self.parent.get(p as usize).copied().unwrap_or(p);
            self.parent[i as usize] = grand;
            i = grand;
        }
        i
    }

    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b) as usize] = a.min(b);
        }
    }
}

/// A call of a jitted function (`PjitFunction(…)`) that reached the runtime (it
/// encloses a launch or PjRt's preparation of one). On the CPU backend the launch
/// itself is recorded only when it completes, so a call with no launch after it is one
/// that never ran, or had not finished when the capture stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRecord {
    pub start_ps: i64,
    pub end_ps: i64,
    /// `jit_<fn>`, interned.
    pub module: Option<u32>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct RetryRecord {
    pub start_ps: i64,
    pub duration_ps: i64,
    pub execution: Option<u32>,
    /// The run id of the launch it waited in, when on a worker thread.
    pub run: Option<i64>,
}

/// What pass one learned about a host plane's lines, for a later walk over a time
/// window: which lines it can skip and where in a line it can start. Compact, since a
/// plane may have up to a million lines: 16 bytes a line, plus one checkpoint per
/// [`CHECKPOINT_EVERY`] visited events.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LineMarks {
    /// Per line: starts of its first and last events (all of them, visited or not);
    /// [`LineMarks::UNKNOWN`] for a line not walked to its end.
    spans: Vec<(i64, i64)>,
    /// (line, event start, event file offset) after every [`CHECKPOINT_EVERY`] visited
    /// events of a line (its start is the first resume point), in line order.
    checkpoints: Vec<(u32, i64, u64)>,
}

impl LineMarks {
    /// A span that overlaps every window.
    const UNKNOWN: (i64, i64) = (i64::MIN, i64::MAX);

    fn set_span(&mut self, line: usize, span: (i64, i64)) {
        if line >= crate::capture::plane::MAX_LINES_INDEXED {
            return;
        }
        if self.spans.len() <= line {
            self.spans.resize(line + 1, Self::UNKNOWN);
        }
        self.spans[line] = span;
    }

    fn add_checkpoint(&mut self, line: usize, start_ps: i64, file_offset: u64) {
        if let Ok(line) = u32::try_from(line) {
            self.checkpoints.push((line, start_ps, file_offset));
        }
    }

    /// Whether `line` may have events starting in `[from, to)`.
    pub fn may_overlap(&self, line: usize, from: i64, to: i64) -> bool {
        let (first, last) = self.spans.get(line).copied().unwrap_or(Self::UNKNOWN);
        last >= from && first < to
    }

    /// The file offset of the last checkpoint of `line` at or before `from`, if any.
    pub fn resume_point(&self, line: usize, from: i64) -> Option<u64> {
        let line = u32::try_from(line).ok()?;
        let lo = self.checkpoints.partition_point(|c| c.0 < line);
        let hi = self.checkpoints.partition_point(|c| c.0 <= line);
        let points = self.checkpoints.get(lo..hi)?;
        let i = points.partition_point(|c| c.1 <= from);
        points.get(i.checked_sub(1)?).map(|c| c.2)
    }

    /// Adds what another scanner learned about other lines of the same plane.
    fn absorb(&mut self, other: LineMarks) {
        if self.spans.len() < other.spans.len() {
            self.spans.resize(other.spans.len(), Self::UNKNOWN);
        }
        for (mine, theirs) in self.spans.iter_mut().zip(other.spans) {
            if *mine == Self::UNKNOWN {
                *mine = theirs;
            }
        }
        self.checkpoints.extend(other.checkpoints);
        self.checkpoints.sort_by_key(|c| c.0);
    }
}

/// All `AllocatorRetry` waits, streamed: count, summed and longest duration.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct RetryTotals {
    pub count: u64,
    pub total_ps: i64,
    pub longest_ps: i64,
}

impl RetryTotals {
    fn add(&mut self, other: RetryTotals) {
        self.count += other.count;
        self.total_ps = self.total_ps.saturating_add(other.total_ps);
        self.longest_ps = self.longest_ps.max(other.longest_ps);
    }
}

/// Everything the runtime scan keeps.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct RuntimeScan {
    pub allocators: Vec<AllocatorState>,
    pub records: Vec<AllocationRecord>,
    /// Allocator events counted but not kept in `records`: all those at or before
    /// `records_dropped_through_ps`, and none after it.
    pub records_dropped: u64,
    pub records_dropped_through_ps: Option<i64>,
    pub executions: Vec<ExecutionRecord>,
    /// Launches counted but not kept: all those starting at or before
    /// `executions_dropped_through_ps`, none after it.
    pub executions_dropped: u64,
    pub executions_dropped_through_ps: Option<i64>,
    /// Launches dropped, by the module and program known for them when dropped, so
    /// that each module still counts all its launches.
    pub dropped_launches: HashMap<(Option<u32>, Option<u64>), u64>,
    /// Interned module names (from execution events and kernels).
    pub module_names: Vec<String>,
    /// Transfers by event name and the user's Python frame around them.
    pub transfers: Vec<(String, Option<String>)>,
    pub transfer_count: u64,
    pub retries: Vec<RetryRecord>,
    /// Every wait, kept or not.
    pub retry_totals: RetryTotals,
    pub kernels: u64,
    pub device_memory_bytes: Option<u64>,
    /// Launches seen on a device's `XLA Modules` line (TPU), used when host events
    /// do not name modules.
    pub device_executions: Vec<ExecutionRecord>,
    pub host_lines: usize,
    pub host_events: u64,
    /// Per host plane, per line: where a later walk for a time window can start or
    /// whether it can skip the line.
    pub line_marks: Vec<LineMarks>,
    module_index: HashMap<String, u32>,
    /// Module and program of a run id, with when it was first seen: entries older than
    /// the launches kept are dropped with them.
    run_modules: HashMap<i64, (u32, i64)>,
    run_programs: HashMap<i64, (u64, i64)>,
    /// Lines of each device plane walked, in file order (for the plane summary).
    pub device_line_counts: Vec<usize>,
    /// Kernels (and module runs) seen on each device plane, in file order: a device
    /// with none had no trace recorded, whatever ran on it.
    #[serde(default)]
    pub device_kernel_counts: Vec<u64>,
    /// The start of the last kernel on any device plane.
    #[serde(default)]
    pub last_kernel_ps: Option<i64>,
    /// Kernels and module runs seen on device planes (what the per-plane counts are
    /// taken from).
    #[serde(default)]
    pub device_events: u64,
    /// The latest call of a jitted function that reached the runtime.
    #[serde(default)]
    pub last_call: Option<CallRecord>,
}

impl RuntimeScan {
    /// Keeps `call` if it is the latest call seen.
    fn note_call(&mut self, call: Option<CallRecord>) {
        if call.map(|c| c.start_ps) > self.last_call.map(|c| c.start_ps) {
            self.last_call = call;
        }
    }

    pub fn intern_module(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.module_index.get(name) {
            return i;
        }
        let i = self.module_names.len() as u32;
        self.module_names.push(name.to_owned());
        self.module_index.insert(name.to_owned(), i);
        i
    }

    /// Keeps a new allocator event unless it is older than the history kept; drops the
    /// older events once twice the cap is held.
    fn keep_record(&mut self, record: AllocationRecord) {
        if self
            .records_dropped_through_ps
            .is_some_and(|t| record.time_ps <= t)
        {
            self.records_dropped += 1;
            return;
        }
        self.records.push(record);
        if self.records.len() >= 2 * MAX_ALLOCATION_RECORDS {
            self.keep_latest_records();
        }
    }

    /// Drops every record at or before the time that leaves at most
    /// [`MAX_ALLOCATION_RECORDS`] later ones (fewer when several share that time), in
    /// linear time; the kept ones stay in scan order.
    fn keep_latest_records(&mut self) {
        let times = self.records.iter().map(|r| r.time_ps);
        if let Some(through) = cutoff(times, MAX_ALLOCATION_RECORDS) {
            self.drop_records_through(through);
        }
    }

    /// Drops the records at or before `through`.
    fn drop_records_through(&mut self, through: i64) {
        let n = self.records.len();
        self.records.retain(|r| r.time_ps > through);
        self.records_dropped += (n - self.records.len()) as u64;
        // `None` is before every time.
        self.records_dropped_through_ps = self.records_dropped_through_ps.max(Some(through));
    }

    /// Keeps a new launch unless it starts before the launches kept; returns its index.
    /// Once twice the cap is held the older half is dropped: `remap` is then called
    /// with each old index's new one (`None` for dropped launches), for the indices
    /// the caller holds.
    fn keep_execution(
        &mut self,
        e: ExecutionRecord,
        remap: impl FnOnce(&dyn Fn(u32) -> Option<u32>),
    ) -> Option<u32> {
        if self
            .executions_dropped_through_ps
            .is_some_and(|t| e.start_ps <= t)
        {
            self.count_dropped_launch(self.dropped_launch_key(&e));
            return None;
        }
        let mut index = Some(self.executions.len() as u32);
        self.executions.push(e);
        if self.executions.len() >= 2 * MAX_EXECUTIONS {
            if let Some(new_index) = self.keep_latest_executions() {
                let renumber = |i: u32| new_index.get(i as usize).copied().flatten();
                // The new launch itself may be among the oldest, and go.
                index = index.and_then(renumber);
                remap(&renumber);
            }
        }
        index
    }

    /// Drops every launch starting at or before the time that leaves at most
    /// [`MAX_EXECUTIONS`] later ones, renumbering what points at launches; returns the
    /// new index of each old one, if any were dropped.
    fn keep_latest_executions(&mut self) -> Option<Vec<Option<u32>>> {
        let starts = self.executions.iter().map(|e| e.start_ps);
        let through = cutoff(starts, MAX_EXECUTIONS)?;
        Some(self.drop_executions_through(through))
    }

    /// Counts a launch that is not kept, under the module and program known for it
    /// ([`RuntimeScan::dropped_launch_key`]).
    fn count_dropped_launch(&mut self, key: (Option<u32>, Option<u64>)) {
        self.executions_dropped += 1;
        *self.dropped_launches.entry(key).or_insert(0) += 1;
    }

    fn dropped_launch_key(&self, e: &ExecutionRecord) -> (Option<u32>, Option<u64>) {
        let run = e.run_id;
        let module = e
            .module
            .or_else(|| run.and_then(|r| self.run_modules.get(&r)).map(|&(m, _)| m))
            .or(e.module_hint);
        let program = e
            .program_id
            .or_else(|| run.and_then(|r| self.run_programs.get(&r)).map(|&(p, _)| p));
        (module, program)
    }

    /// Drops the launches starting at or before `through`, renumbering what points at
    /// launches; returns the new index of each old one.
    fn drop_executions_through(&mut self, through: i64) -> Vec<Option<u32>> {
        let dropped: Vec<_> = self
            .executions
            .iter()
            .filter(|e| e.start_ps <= through)
            .map(|e| self.dropped_launch_key(e))
            .collect();
        for key in dropped {
            self.count_dropped_launch(key);
        }
        let mut next = 0u32;
        let new_index: Vec<Option<u32>> = self
            .executions
            .iter()
            .map(|e| {
                (e.start_ps > through).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        self.executions.retain(|e| e.start_ps > through);
        self.executions_dropped_through_ps = self.executions_dropped_through_ps.max(Some(through));
        let remap = |i: u32| new_index.get(i as usize).copied().flatten();
        for r in &mut self.records {
            if let Origin::Execution(i) = r.origin {
                r.origin = remap(i).map_or(Origin::Unknown, Origin::Execution);
            }
        }
        for r in &mut self.retries {
            r.execution = r.execution.and_then(remap);
        }
        // A run's work starts with its launch: runs seen by then were dropped with it.
        self.run_modules.retain(|_, &mut (_, seen)| seen > through);
        self.run_programs.retain(|_, &mut (_, seen)| seen > through);
        new_index
    }

    /// Adds what another thread found on later lines of the same host plane: tables
    /// are merged, indices into them renumbered, and ties in the peaks go to the later
    /// lines (as when one thread visits everything in file order).
    pub fn absorb(&mut self, other: RuntimeScan) {
        let modules: Vec<u32> = other
            .module_names
            .iter()
            .map(|n| self.intern_module(n))
            .collect();
        let module = |m: Option<u32>| m.and_then(|m| modules.get(m as usize).copied());
        let mut allocators = Vec::with_capacity(other.allocators.len());
        for a in other.allocators {
            let i = match self.allocators.iter().position(|x| x.name == a.name) {
                Some(i) => {
                    let mine = &mut self.allocators[i];
                    mine.allocations += a.allocations;
                    mine.deallocations += a.deallocations;
                    if a.allocations + a.deallocations > 0 {
                        mine.lifetime_peak = a.lifetime_peak;
                    }
                    if a.peak_in_use >= mine.peak_in_use && a.allocations + a.deallocations > 0 {
                        mine.peak_in_use = a.peak_in_use;
                        mine.peak_time_ps = a.peak_time_ps;
                        mine.capacity = a.capacity;
                        mine.fragmentation_at_peak = a.fragmentation_at_peak;
                    }
                    i
                }
                None => {
                    self.allocators.push(a);
                    self.allocators.len() - 1
                }
            };
            allocators.push(i.min(u16::MAX as usize) as u16);
        }
        let executions_before = self.executions.len() as u32;
        let transfers_before = self.transfers.len() as u32;
        self.records_dropped += other.records_dropped;
        // What either part dropped is older than what the whole keeps.
        let records_through = self
            .records_dropped_through_ps
            .max(other.records_dropped_through_ps);
        // Drop first what either part's history leaves out, so that the merged records
        // mostly fit where this part's were (moving them all to a larger buffer cost
        // more than the rest of the merge).
        if let Some(through) = records_through {
            self.drop_records_through(through);
        }
        let later = other.records.len();
        let kept = other
            .records
            .into_iter()
            .filter(|r| records_through.is_none_or(|t| r.time_ps > t));
        let before = self.records.len();
        self.records.extend(kept.map(|mut r| {
            r.allocator = allocators
                .get(r.allocator as usize)
                .copied()
                .unwrap_or(r.allocator);
            r.origin = match r.origin {
                Origin::Execution(i) => Origin::Execution(i + executions_before),
                Origin::Transfer(t) => Origin::Transfer(t + transfers_before),
                o => o,
            };
            r
        }));
        let added = self.records.len() - before;
        self.records_dropped += (later - added) as u64;
        self.keep_latest_records();
        self.executions_dropped += other.executions_dropped;
        for ((m, p), count) in other.dropped_launches {
            *self.dropped_launches.entry((module(m), p)).or_insert(0) += count;
        }
        let executions_through = self
            .executions_dropped_through_ps
            .max(other.executions_dropped_through_ps);
        self.executions
            .extend(other.executions.into_iter().map(|mut e| {
                e.module = module(e.module);
                e.module_hint = module(e.module_hint);
                e
            }));
        if let Some(mut call) = other.last_call {
            call.module = module(call.module);
            self.note_call(Some(call));
        }
        self.transfers.extend(other.transfers);
        self.transfer_count += other.transfer_count;
        self.retry_totals.add(other.retry_totals);
        let retry_room = MAX_RETRY_RECORDS.saturating_sub(self.retries.len());
        self.retries
            .extend(other.retries.into_iter().take(retry_room).map(|mut r| {
                r.execution = r.execution.map(|i| i + executions_before);
                r
            }));
        if let Some(through) = executions_through {
            self.drop_executions_through(through);
        }
        self.keep_latest_executions();
        self.host_lines += other.host_lines;
        self.host_events += other.host_events;
        for (run, (m, seen)) in other.run_modules {
            if let Some(m) = module(Some(m)) {
                self.run_modules.entry(run).or_insert((m, seen));
            }
        }
        for (run, p) in other.run_programs {
            self.run_programs.entry(run).or_insert(p);
        }
        // Line marks: each thread filled the lines it walked.
        // The other scan walked later lines of this scan's last plane(s).
        let skip = self.line_marks.len().saturating_sub(other.line_marks.len());
        for (mine, theirs) in self.line_marks.iter_mut().skip(skip).zip(other.line_marks) {
            mine.absorb(theirs);
        }
    }

    /// What a second device scanner needs to match kernels to launches on its own:
    /// the launches and the interned module names (see [`RuntimeScan::absorb_kernels`]).
    pub fn kernel_part(&self) -> RuntimeScan {
        RuntimeScan {
            executions: self.executions.clone(),
            module_names: self.module_names.clone(),
            module_index: self.module_index.clone(),
            ..Default::default()
        }
    }

    /// Whether kernels can be matched to launches in any order: every launch names its
    /// module, so no kernel names one for it, which later kernels' matching would read.
    /// (Launches collected from a device's module line are the caller's to rule out.)
    pub fn kernels_match_in_any_order(&self) -> bool {
        self.executions.iter().all(|e| e.module.is_some())
    }

    /// Adds what a [`RuntimeScan::kernel_part`] found on a device plane's later lines,
    /// as if this scan had gone on to them: launches that ran kernels, programs the
    /// earlier lines did not name, kernel counts, and module names first met there.
    pub fn absorb_kernels(&mut self, later: RuntimeScan) {
        self.kernels = self.kernels.saturating_add(later.kernels);
        self.device_events = self.device_events.saturating_add(later.device_events);
        self.last_kernel_ps = self.last_kernel_ps.max(later.last_kernel_ps);
        for (mine, theirs) in self.executions.iter_mut().zip(&later.executions) {
            mine.launched_kernels |= theirs.launched_kernels;
            mine.program_id = mine.program_id.or(theirs.program_id);
        }
        for name in &later.module_names {
            self.intern_module(name);
        }
    }

    /// Launch events of one launch (the same run id, or the same PJRT C API linkage
    /// context) become one: the earliest holds what any of them named. Returns each
    /// launch's representative and the representative of each run id.
    fn merge_launches_of_one_run(&mut self) -> (Vec<u32>, HashMap<i64, u32>) {
        let n = self.executions.len();
        let mut groups = UnionFind::new(n);
        let mut by_run: HashMap<i64, u32> = HashMap::default();
        let mut by_link: HashMap<i64, u32> = HashMap::default();
        for (i, e) in self.executions.iter().enumerate() {
            let i = i as u32;
            for (key, seen) in [(e.run_id, &mut by_run), (e.link, &mut by_link)] {
                let Some(key) = key else { continue };
                match seen.get(&key) {
                    Some(&j) => groups.union(i, j),
                    None => {
                        seen.insert(key, i);
                    }
                }
            }
        }
        // The earliest launch of each group represents it (the lower index on a tie).
        let mut root_of_group: HashMap<u32, u32> = HashMap::default();
        for i in 0..n as u32 {
            let group = groups.find(i);
            let earliest = root_of_group.entry(group).or_insert(i);
            let start = |k: u32| self.executions.get(k as usize).map(|e| e.start_ps);
            if start(i) < start(*earliest) {
                *earliest = i;
            }
        }
        let representative: Vec<u32> = (0..n as u32)
            .map(|i| root_of_group.get(&groups.find(i)).copied().unwrap_or(i))
            .collect();
        for (i, &keep) in representative.iter().enumerate() {
            if keep as usize != i {
                let merged = self.executions[i].clone();
                self.executions[keep as usize].absorb_launch_event(&merged);
            }
        }
        for run in by_run.values_mut() {
            *run = representative[*run as usize];
        }
        (representative, by_run)
    }

    /// launches of one run (same run id) into one execution, resolves allocations made
    /// for a run id to its launch, then orders launches by time (records follow).
    pub fn finish_host(&mut self) {
        self.keep_latest_records();
        self.keep_latest_executions();
        let n = self.executions.len();
        let (representative, by_run) = self.merge_launches_of_one_run();
        let resolve = |i: u32| representative.get(i as usize).copied().unwrap_or(i);
        for e in &mut self.executions {
            if let Some(run) = e.run_id {
                if e.module.is_none() {
                    e.module = self.run_modules.get(&run).map(|&(m, _)| m);
                }
                if e.program_id.is_none() {
                    e.program_id = self.run_programs.get(&run).map(|&(p, _)| p);
                }
            }
        }
        let mut order: Vec<u32> = (0..n as u32).filter(|&i| resolve(i) == i).collect();
        order.sort_by_key(|&i| {
            self.executions
                .get(i as usize)
                .map(|e| e.start_ps)
                .unwrap_or(0)
        });
        let mut new_index = vec![u32::MAX; n];
        for (new, &old) in order.iter().enumerate() {
            new_index[old as usize] = new as u32;
        }
        let remap = |i: u32| new_index.get(resolve(i) as usize).copied().unwrap_or(0);
        for r in &mut self.records {
            r.origin = match r.origin {
                Origin::Execution(i) => Origin::Execution(remap(i)),
                Origin::Run(run) => by_run
                    .get(&run)
                    .map(|&i| Origin::Execution(remap(i)))
                    .unwrap_or(Origin::Run(run)),
                other => other,
            };
        }
        for r in &mut self.retries {
            r.execution = r
                .execution
                .or_else(|| r.run.and_then(|run| by_run.get(&run).copied()))
                .map(remap);
        }
        let executions = &mut self.executions;
        for r in &self.retries {
            if let Some(e) = r
                .execution
                .and_then(|i| order.get(i as usize))
                .and_then(|&old| executions.get_mut(old as usize))
            {
                e.waited_for_memory = true;
            }
        }
        let sorted: Vec<ExecutionRecord> = order
            .iter()
            .filter_map(|&old| self.executions.get(old as usize).cloned())
            .collect();
        self.executions = sorted;
        self.records.sort_by_key(|r| r.time_ps);
    }
}

/// The time at or before which everything goes so that at most `keep` of `times`
/// remain (fewer when several share that time), found in linear time; `None` when
/// all fit.
fn cutoff(times: impl ExactSizeIterator<Item = i64>, keep: usize) -> Option<i64> {
    let last_dropped = times.len().checked_sub(keep + 1)?;
    let mut times: Vec<i64> = times.collect();
    let (_, &mut through, _) = times.select_nth_unstable(last_dropped);
    Some(through)
}

/// Event-metadata ids below this are routed through a dense table.
const DENSE_IDS: usize = 1 << 20;

/// What the host scan does with an event type, decided once per type so that the
/// scan skips most events after reading their metadata id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// Not classified by name: read once to see whether it is a CPU thunk (an event
    /// named after its HLO op that carries `hlo_module`, `program_id` and `run_id`).
    Probe,
    /// Nothing to learn from it: a plain event, or a Python frame of library code
    /// (only the user's frames name a transfer).
    Skip,
    /// A CPU thunk: read for the run id it names.
    Thunk,
    /// Names a run id and nothing else (TPU's `DoEnqueueProgram`): inside a launch,
    /// the id its device-side work carries.
    LaunchRun,
    /// A kind the scan handles.
    Read,
}

#[derive(Debug, Clone, Copy)]
enum Span {
    Execution(u32),
    Transfer(u32),
    Run(i64),
    /// `PjitFunction(<fn>)`, with `jit_<fn>` interned, and its start.
    JitCall(Option<u32>, i64),
    /// A Python frame (its metadata id), and whether it is the user's code.
    Python(i64, bool),
}

/// Visits the host plane.
pub struct HostVisitor<'p> {
    plane: &'p Plane,
    kinds: KindTable,
    ids: StatIds,
    run_stats: StatSet<5>,
    thunk_stats: StatSet<3>,
    memory_stats: Vec<MemoryStat>,
    pub scan: RuntimeScan,
    stack: Vec<(i64, Span)>,
    allocator_by_ref: HashMap<u64, u16>,
    allocator_by_name: HashMap<String, u16>,
    allocator_by_index: HashMap<u64, u16>,
    /// (transfer event, user frame enclosing it) → transfer index.
    transfer_by_metadata: HashMap<(i64, i64), u32>,
    /// Python frames that are the user's code, by metadata id.
    user_frames: HashSet<i64>,
    /// `PjitFunction(<fn>)` → interned `jit_<fn>`, by metadata id.
    jit_modules: HashMap<i64, Option<u32>>,
    /// What to do with an event, by metadata id (ids below [`DENSE_IDS`]; larger ones
    /// are read): see [`Route`].
    routes: Vec<Route>,
    /// `hlo_module` / `module_name` ref → interned module.
    module_by_ref: HashMap<u64, u32>,
    /// Launch event type → the module its name gives.
    launch_modules: HashMap<i64, Option<u32>>,
    /// Events visited on the current line, for checkpoints.
    line_events: u32,
}

impl<'p> HostVisitor<'p> {
    pub fn new(plane: &'p Plane, scan: RuntimeScan) -> Self {
        let kinds = KindTable::new(
            plane
                .event_metadata
                .values()
                .map(|m| (m.id, m.name.as_str())),
        );
        let user_frames = plane
            .event_metadata
            .values()
            .filter(|m| is_user_frame(&m.name))
            .map(|m| m.id)
            .collect();
        let ids = StatIds::resolve(plane);
        let mut routes = Vec::new();
        for m in plane.event_metadata.values() {
            let Some(slot) = usize::try_from(m.id).ok().filter(|&i| i < DENSE_IDS) else {
                continue;
            };
            let route = match kinds.get(m.id) {
                EventKind::Other => continue,
                EventKind::Python if !is_user_frame(&m.name) => Route::Skip,
                _ => Route::Read,
            };
            if routes.len() <= slot {
                routes.resize(slot + 1, Route::Probe);
            }
            routes[slot] = route;
        }
        Self {
            plane,
            kinds,
            memory_stats: memory_stat_table(&ids),
            run_stats: ids.run_stats(),
            thunk_stats: ids.thunk_stats(),
            ids,
            scan,
            stack: Vec::with_capacity(64),
            allocator_by_ref: HashMap::default(),
            allocator_by_name: HashMap::default(),
            allocator_by_index: HashMap::default(),
            transfer_by_metadata: HashMap::default(),
            user_frames,
            jit_modules: HashMap::default(),
            routes,
            module_by_ref: HashMap::default(),
            launch_modules: HashMap::default(),
            line_events: 0,
        }
    }

    /// Learns which module a run id ran from a CPU thunk event (XLA's CPU runtime puts
    /// `hlo_module`, `program_id` and `run_id` on each thunk, `xla/backends/cpu/runtime/thunk.cc`).
    /// Each event type is probed once; only thunk types are read after that.
    fn thunk_event(&mut self, event: &Event<'_>, time: i64) {
        let Some(slot) = usize::try_from(event.metadata_id)
            .ok()
            .filter(|&i| i < DENSE_IDS)
        else {
            return;
        };
        if self.routes.len() <= slot {
            self.routes.resize(slot + 1, Route::Probe);
        }
        if self.routes[slot] == Route::Skip {
            return;
        }
        let [run, module, program] = self.thunk_stats.read(event);
        let run = run.and_then(|v| v.as_i64());
        let program = program.and_then(|v| v.as_u64());
        if self.routes[slot] == Route::Probe {
            // A thunk carries all three. Host events that name a module but no run
            // (kernel launches such as `hipModuleLaunchKernel`) are not read again.
            let names_program = module.is_some() || program.is_some();
            self.routes[slot] = match (run, names_program) {
                (Some(_), true) => Route::Thunk,
                (Some(_), false) => Route::LaunchRun,
                (None, _) => Route::Skip,
            };
        }
        let Some(run) = run else { return };
        if module.is_none() && program.is_none() {
            self.launch_run(run, time);
            return;
        }
        if self.scan.run_modules.contains_key(&run) {
            return;
        }
        let module = module.and_then(|v| {
            intern_module_stat(&mut self.scan, self.plane, &mut self.module_by_ref, &v)
        });
        if let Some(m) = module {
            self.scan.run_modules.insert(run, (m, time));
        }
        if let Some(p) = program {
            self.scan.run_programs.entry(run).or_insert((p, time));
        }
    }

    /// A run id named inside a launch on its own line, other than the launch's own:
    /// the id the device's record of the same launch carries (TPU).
    fn launch_run(&mut self, run: i64, time: i64) {
        let open = self.stack.iter().rev().find_map(|(end, s)| match s {
            Span::Execution(i) if *end > time => Some(*i),
            _ => None,
        });
        if let Some(e) = open.and_then(|i| self.scan.executions.get_mut(i as usize)) {
            if e.run_id != Some(run) {
                e.device_run = e.device_run.or(Some(run));
            }
        }
    }

    /// The innermost launch, transfer or run scope (Python frames and jitted calls
    /// enclose them and are skipped).
    fn origin(&self) -> Origin {
        for (_, span) in self.stack.iter().rev() {
            match span {
                Span::Execution(i) => return Origin::Execution(*i),
                Span::Transfer(t) => return Origin::Transfer(*t),
                Span::Run(r) => return Origin::Run(*r),
                Span::JitCall(..) | Span::Python(..) => {}
            }
        }
        Origin::Unknown
    }

    fn innermost_run(&self) -> Option<i64> {
        self.stack.iter().rev().find_map(|(_, s)| match s {
            Span::Run(r) => Some(*r),
            _ => None,
        })
    }

    /// The module of the innermost `PjitFunction(<fn>)` call.
    fn jit_hint(&self) -> Option<u32> {
        self.stack.iter().rev().find_map(|(_, s)| match s {
            Span::JitCall(m, _) => *m,
            _ => None,
        })
    }

    /// The innermost Python frame of the user's code (0 when none).
    fn user_frame(&self) -> i64 {
        self.stack
            .iter()
            .rev()
            .find_map(|(_, s)| match s {
                Span::Python(id, true) => Some(*id),
                _ => None,
            })
            .unwrap_or(0)
    }

    fn allocator_named(&mut self, name: &str) -> u16 {
        if let Some(&i) = self.allocator_by_name.get(name) {
            return i;
        }
        let i = self.scan.allocators.len().min(u16::MAX as usize) as u16;
        if (i as usize) == self.scan.allocators.len() {
            self.scan.allocators.push(AllocatorState {
                name: name.to_owned(),
                ..Default::default()
            });
        }
        self.allocator_by_name.insert(name.to_owned(), i);
        i
    }

    fn run_id(&self, event: &Event<'_>) -> Option<i64> {
        self.contexts(event).0
    }

    /// The launch's run id (a `run_id` stat, or a kPjRt context) and its PJRT C API
    /// linkage (a kPjrtLibraryCall context), from the producer and consumer stats
    /// (`tsl/profiler/lib/context_types.h`).
    fn contexts(&self, event: &Event<'_>) -> (Option<i64>, Option<i64>) {
        const PJRT: i64 = 5;
        const PJRT_LIBRARY_CALL: i64 = 14;
        let [run, p, pt, c, ct] = self
            .run_stats
            .read(event)
            .map(|v| v.and_then(|v| v.as_i64()));
        let of_type = |kind: i64| {
            (if pt == Some(kind) { p } else { None }).or(if ct == Some(kind) { c } else { None })
        };
        (run.or(of_type(PJRT)), of_type(PJRT_LIBRARY_CALL))
    }

    /// Remembers the innermost `PjitFunction(…)` call as having reached the runtime.
    fn call_reached_runtime(&mut self) {
        let call = self.stack.iter().rev().find_map(|(end, s)| match s {
            Span::JitCall(m, start) => Some(CallRecord {
                start_ps: *start,
                end_ps: *end,
                module: *m,
            }),
            _ => None,
        });
        self.scan.note_call(call);
    }

    /// The module a launch event names (`…Execute (jit_f)`), by event type, once.
    fn launch_module(&mut self, metadata_id: i64) -> Option<u32> {
        if let Some(&m) = self.launch_modules.get(&metadata_id) {
            return m;
        }
        let plane = self.plane;
        let module = plane
            .event_metadata
            .get(&metadata_id)
            .and_then(|m| module_in_name(&m.name))
            .map(|m| self.scan.intern_module(m));
        self.launch_modules.insert(metadata_id, module);
        module
    }

    /// The module an `ExecuteThunks`-like event names in its `module_name` stat; an
    /// interned name is looked up once per reference.
    fn module_stat(&mut self, event: &Event<'_>) -> Option<u32> {
        let stat = self.ids.module_name?;
        let mut value = None;
        event.for_each_stat_of(
            |id| id == stat,
            |_, v| {
                if value.is_none() {
                    value = Some(v);
                }
            },
        );
        intern_module_stat(&mut self.scan, self.plane, &mut self.module_by_ref, &value?)
    }

    /// Records a launch and opens its span, so that what it encloses is its own; a
    /// launch older than those kept opens no span (what it encloses has no origin).
    fn push_execution(&mut self, e: ExecutionRecord) {
        let end = e.end_ps;
        let stack = &mut self.stack;
        let index = self.scan.keep_execution(e, |remap| {
            stack.retain_mut(|(_, span)| match span {
                Span::Execution(i) => match remap(*i) {
                    Some(new) => {
                        *i = new;
                        true
                    }
                    None => false,
                },
                _ => true,
            });
        });
        if let Some(index) = index {
            self.stack.push((end, Span::Execution(index)));
        }
    }

    fn innermost_execution(&self) -> Option<u32> {
        self.stack.iter().rev().find_map(|(_, s)| match s {
            Span::Execution(i) => Some(*i),
            _ => None,
        })
    }

    fn memory_event(&mut self, line: &LineInfo, event: &Event<'_>, is_allocation: bool) {
        let ids = &self.ids;
        let (mut reserved, mut allocated, mut available, mut peak_lifetime) =
            (0u64, 0u64, 0u64, 0u64);
        let (mut fragmentation, mut addr, mut size, mut requested) = (0f64, 0u64, 0u64, 0u64);
        let mut allocator: Option<StatRef<'_>> = None;
        let mut device: Option<u64> = None;
        let table = &self.memory_stats;
        event.for_each_stat(|id, v| match ids.memory_stat(table, id) {
            MemoryStat::BytesAllocated => allocated = v.as_u64().unwrap_or(0),
            MemoryStat::BytesReserved => reserved = v.as_u64().unwrap_or(0),
            MemoryStat::BytesAvailable => available = v.as_u64().unwrap_or(0),
            MemoryStat::Fragmentation => fragmentation = v.as_f64().unwrap_or(0.0),
            MemoryStat::PeakBytesInUse => peak_lifetime = v.as_u64().unwrap_or(0),
            MemoryStat::Addr => addr = v.as_u64().unwrap_or(0),
            MemoryStat::AllocationBytes => size = v.as_u64().unwrap_or(0),
            MemoryStat::RequestedBytes => requested = v.as_u64().unwrap_or(0),
            MemoryStat::AllocatorName => allocator = Some(v),
            MemoryStat::Device => device = v.as_u64(),
            MemoryStat::Ignored => {}
        });
        let allocator = allocator.and_then(|v| match v {
            StatRef::Ref(r) => Some(match self.allocator_by_ref.get(&r) {
                Some(&i) => i,
                None => {
                    let name = self.plane.stat_name(r).unwrap_or("?").to_owned();
                    let i = self.allocator_named(&name);
                    self.allocator_by_ref.insert(r, i);
                    i
                }
            }),
            StatRef::Str(s) => Some(self.allocator_named(&String::from_utf8_lossy(s))),
            _ => None,
        });
        let allocator = match allocator {
            Some(a) => a,
            // TPU: the memory id is `index_on_host` (or TF's `device_ordinal`), named as
            // XProf names it: the number.
            None => {
                let key = device.unwrap_or(u64::MAX);
                match self.allocator_by_index.get(&key) {
                    Some(&i) => i,
                    None => {
                        let name = device.map(|d| d.to_string()).unwrap_or_else(|| "?".into());
                        let i = self.allocator_named(&name);
                        self.allocator_by_index.insert(key, i);
                        i
                    }
                }
            }
        };
        if size == 0 {
            size = requested;
        }
        let in_use = reserved.saturating_add(allocated);
        let time = event.start_ps(line);
        if let Some(state) = self.scan.allocators.get_mut(allocator as usize) {
            if is_allocation {
                state.allocations += 1;
            } else {
                state.deallocations += 1;
            }
            state.lifetime_peak = peak_lifetime;
            // XProf's rule: `>=`, so a later tie wins.
            if in_use >= state.peak_in_use {
                state.peak_in_use = in_use;
                state.peak_time_ps = time;
                state.capacity = in_use.saturating_add(available);
                state.fragmentation_at_peak = fragmentation;
            }
        }
        let origin = self.origin();
        self.scan.keep_record(AllocationRecord {
            time_ps: time,
            in_use,
            reserved,
            addr,
            size,
            requested,
            allocator,
            is_allocation,
            origin,
        });
    }
}

impl EventVisitor for HostVisitor<'_> {
    fn line_span(&mut self, line: &LineInfo, first_start_ps: i64, last_start_ps: i64) {
        if let Some(marks) = self.scan.line_marks.last_mut() {
            marks.set_span(line.ordinal, (first_start_ps, last_start_ps));
        }
    }

    #[inline]
    fn wants(&mut self, metadata_id: i64) -> bool {
        let slot = usize::try_from(metadata_id).unwrap_or(usize::MAX);
        self.routes.get(slot) != Some(&Route::Skip)
    }

    fn line(&mut self, _line: &LineInfo) -> bool {
        self.stack.clear();
        self.scan.host_lines += 1;
        self.line_events = 0;
        true
    }

    fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
        self.scan.host_events += 1;
        self.line_events = self.line_events.wrapping_add(1);
        if self.line_events % CHECKPOINT_EVERY == 0 {
            if let Some(marks) = self.scan.line_marks.last_mut() {
                marks.add_checkpoint(line.ordinal, event.start_ps(line), event.file_offset);
            }
        }
        let kind = self.kinds.get(event.metadata_id);
        if kind == EventKind::Other {
            self.thunk_event(event, event.start_ps(line));
            return;
        }
        let start = event.start_ps(line);
        let end = event.end_ps(line);
        while matches!(self.stack.last(), Some((e, _)) if *e <= start) {
            self.stack.pop();
        }
        match kind {
            EventKind::Python => {
                // Frames only matter as the context of what they enclose.
                if end > start {
                    let user = self.user_frames.contains(&event.metadata_id);
                    self.stack
                        .push((end, Span::Python(event.metadata_id, user)));
                }
            }
            EventKind::JitCall => {
                let module = match self.jit_modules.get(&event.metadata_id) {
                    Some(&m) => m,
                    None => {
                        let m = self
                            .plane
                            .event_metadata
                            .get(&event.metadata_id)
                            .and_then(|m| jit_module_name(&m.name))
                            .map(|n| self.scan.intern_module(&n));
                        self.jit_modules.insert(event.metadata_id, m);
                        m
                    }
                };
                self.stack.push((end, Span::JitCall(module, start)));
            }
            EventKind::Allocation => self.memory_event(line, event, true),
            EventKind::Deallocation => self.memory_event(line, event, false),
            EventKind::Retry => {
                let execution = self.innermost_execution();
                let run = if execution.is_none() {
                    self.innermost_run()
                } else {
                    None
                };
                let duration_ps = event.duration_ps.max(0);
                self.scan.retry_totals.add(RetryTotals {
                    count: 1,
                    total_ps: duration_ps,
                    longest_ps: duration_ps,
                });
                if self.scan.retries.len() < MAX_RETRY_RECORDS {
                    self.scan.retries.push(RetryRecord {
                        start_ps: start,
                        duration_ps,
                        execution,
                        run,
                    });
                }
            }
            EventKind::Execute => {
                self.call_reached_runtime();
                let (run, link) = self.contexts(event);
                // A launch wrapped in another on the same thread (the PJRT C API around
                // PjRt's own) is the same launch.
                if let Some(outer) = self.innermost_execution() {
                    let module = self.launch_module(event.metadata_id);
                    if let Some(e) = self.scan.executions.get_mut(outer as usize) {
                        e.run_id = e.run_id.or(run);
                        e.module = e.module.or(module);
                        e.link = e.link.or(link);
                    }
                    return;
                }
                let module = self.launch_module(event.metadata_id);
                let module_hint = self.jit_hint();
                let run_id = run;
                self.push_execution(ExecutionRecord {
                    start_ps: start,
                    end_ps: end,
                    run_id,
                    module,
                    program_id: None,
                    launched_kernels: false,
                    waited_for_memory: false,
                    module_hint,
                    link,
                    device_run: None,
                });
            }
            EventKind::ModuleRun => {
                let Some(module) = self.module_stat(event) else {
                    return;
                };
                match self
                    .stack
                    .iter()
                    .rev()
                    .find(|(_, s)| matches!(s, Span::Execution(_) | Span::Run(_)))
                {
                    Some((_, Span::Execution(i))) => {
                        if let Some(e) = self.scan.executions.get_mut(*i as usize) {
                            e.module.get_or_insert(module);
                        }
                    }
                    Some((_, Span::Run(run))) => {
                        // A run scope inside its own launch (PjRt's `Execute` around
                        // `EnqueueExecution`) names that launch's module; a run scope
                        // elsewhere (a worker thread) names it for whichever launch has
                        // the run id, found when launches are resolved.
                        let run = *run;
                        let launch = self
                            .innermost_execution()
                            .and_then(|i| self.scan.executions.get_mut(i as usize))
                            .filter(|e| e.run_id == Some(run));
                        match launch {
                            Some(e) => {
                                e.module.get_or_insert(module);
                            }
                            None => {
                                self.scan.run_modules.entry(run).or_insert((module, start));
                            }
                        }
                    }
                    _ => {
                        // A launch seen only through the module it runs (CPU thunks).
                        let run_id = self.run_id(event);
                        self.push_execution(ExecutionRecord {
                            start_ps: start,
                            end_ps: end,
                            run_id,
                            module: Some(module),
                            program_id: None,
                            launched_kernels: false,
                            waited_for_memory: false,
                            module_hint: None,
                            link: None,
                            device_run: None,
                        });
                    }
                }
            }
            EventKind::RunScope => {
                self.call_reached_runtime();
                if let Some(run) = self.run_id(event) {
                    self.stack.push((end, Span::Run(run)));
                }
            }
            EventKind::Linkage => {
                // The caller's half of a C API launch: the plugin's launch event on
                // another line consumes the same context.
                let (_, link) = self.contexts(event);
                let outer = self.innermost_execution();
                if let Some(e) = outer.and_then(|i| self.scan.executions.get_mut(i as usize)) {
                    e.link = e.link.or(link);
                }
            }
            EventKind::Transfer => {
                self.scan.transfer_count += 1;
                // A transfer inside another (`DevicePut` ⊃ `BufferFromHostBuffer`) is the same one.
                if matches!(self.origin(), Origin::Transfer(_)) {
                    return;
                }
                let frame = self.user_frame();
                let key = (event.metadata_id, frame);
                let index = match self.transfer_by_metadata.get(&key) {
                    Some(&i) => i,
                    None => {
                        let name = self
                            .plane
                            .event_metadata
                            .get(&event.metadata_id)
                            .map(|m| m.name.clone())
                            .unwrap_or_default();
                        let frame = match self.plane.event_metadata.get(&frame) {
                            Some(f) if frame != 0 => Some(f.name.clone()),
                            _ => None,
                        };
                        let i = self.scan.transfers.len() as u32;
                        self.scan.transfers.push((name, frame));
                        self.transfer_by_metadata.insert(key, i);
                        i
                    }
                };
                self.stack.push((end, Span::Transfer(index)));
            }
            EventKind::Other => {}
        }
    }
}

/// Visits a device plane: kernels (events with `hlo_module`/`program_id`) and, on TPU,
/// the `XLA Modules` line.
pub struct DeviceVisitor<'p, 's> {
    plane: &'p Plane,
    ids: StatIds,
    kernel_stats: StatSet<2>,
    scan: &'s mut RuntimeScan,
    /// Launch indices sorted by start, for matching kernels to launches.
    order: &'s [u32],
    on_modules_line: bool,
    collect_device_executions: bool,
    /// Interned module by the stat-metadata id its name is interned as.
    module_by_ref: HashMap<u64, u32>,
    /// Module and program an event type's own stats name, by metadata id.
    by_metadata: HashMap<i64, (Option<u32>, Option<u64>)>,
    /// The last kernel's match: kernels of the same module and program starting in
    /// `[from, to)` (between the same two launches) belong to the same launch.
    last_match: Option<KernelMatch>,
    /// The last kernel's start and how many launches started by then.
    last_search: Option<(i64, usize)>,
    /// Module and program a module run's name gives, by metadata id.
    module_runs: HashMap<i64, (Option<u32>, Option<u64>)>,
    /// Host launches by run id, built when a module run names one.
    launch_by_run: Option<HashMap<i64, u32>>,
    /// Per module (and program), how far into `order` this device has run launches.
    queue_cursor: HashMap<(Option<u32>, Option<u64>), usize>,
    /// Whether module runs placed this device's work on launches.
    module_runs_matched: bool,
}

/// How many of the launches `order` lists (by start) start at or before `start`,
/// searched forward from `hint` of them (known to start by then) in doubling steps: a
/// line's kernels come in time order, so the answer is usually at or just past the
/// last kernel's.
fn launches_started_by(
    executions: &[ExecutionRecord],
    order: &[u32],
    start: i64,
    hint: usize,
) -> usize {
    let started = |i: &u32| {
        executions
            .get(*i as usize)
            .is_some_and(|e| e.start_ps <= start)
    };
    let rest = order.get(hint..).unwrap_or_default();
    // `rest[..seen]` all started; the first that did not is before `step`.
    let (mut seen, mut step) = (0usize, 1usize);
    while step <= rest.len() && rest.get(step.wrapping_sub(1)).is_some_and(started) {
        seen = step;
        step = step.saturating_mul(2);
    }
    let window = rest.get(seen..step.min(rest.len())).unwrap_or_default();
    hint.saturating_add(seen)
        .saturating_add(window.partition_point(started))
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct KernelMatch {
    from: i64,
    to: i64,
    module: Option<u32>,
    program: Option<u64>,
}

impl<'p, 's> DeviceVisitor<'p, 's> {
    pub fn new(
        plane: &'p Plane,
        scan: &'s mut RuntimeScan,
        order: &'s [u32],
        collect_device_executions: bool,
    ) -> Self {
        let ids = StatIds::resolve(plane);
        Self {
            plane,
            kernel_stats: ids.kernel_stats(),
            ids,
            scan,
            order,
            on_modules_line: false,
            collect_device_executions,
            module_by_ref: HashMap::default(),
            by_metadata: HashMap::default(),
            last_match: None,
            last_search: None,
            module_runs: HashMap::default(),
            launch_by_run: None,
            queue_cursor: HashMap::default(),
            module_runs_matched: false,
        }
    }

    fn module_of(&mut self, value: &StatRef<'_>) -> Option<u32> {
        intern_module_stat(self.scan, self.plane, &mut self.module_by_ref, value)
    }

    fn module_and_program(&mut self, event: &Event<'_>) -> (Option<u32>, Option<u64>) {
        let [module, program] = self.kernel_stats.read(event);
        let mut program = program.and_then(|v| v.as_u64());
        let mut module = module.and_then(|v| self.module_of(&v));
        if module.is_none() {
            let (m, p) = match self.by_metadata.get(&event.metadata_id) {
                Some(&known) => known,
                None => {
                    let known = self.metadata_module_and_program(event.metadata_id);
                    self.by_metadata.insert(event.metadata_id, known);
                    known
                }
            };
            module = m;
            program = program.or(p);
        }
        (module, program)
    }

    fn metadata_module_and_program(&mut self, metadata_id: i64) -> (Option<u32>, Option<u64>) {
        let plane = self.plane;
        let Some(meta) = plane.event_metadata.get(&metadata_id) else {
            return (None, None);
        };
        let (mut module, mut program) = (None, None);
        for s in &meta.stats {
            if Some(s.metadata_id) == self.ids.hlo_module {
                module = s.value.as_ref().and_then(|v| self.module_of(&v));
            } else if Some(s.metadata_id) == self.ids.program_id && program.is_none() {
                program = s.value.as_ref().and_then(|v| v.as_u64());
            }
        }
        (module, program)
    }
}

impl EventVisitor for DeviceVisitor<'_, '_> {
    fn line(&mut self, line: &LineInfo) -> bool {
        self.on_modules_line = line.name == "XLA Modules";
        true
    }

    fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
        let (module, program) = self.module_and_program(event);
        let start = event.start_ps(line);
        if self.on_modules_line {
            self.module_run(line, event, start, module, program);
            return;
        }
        if module.is_none() && program.is_none() {
            return;
        }
        self.scan.kernels += 1;
        self.saw_device_activity(start);
        // On a device that records module runs, those place its work (see
        // `module_run`); its ops queue behind earlier launches, so their start time
        // does not tell which launch they belong to.
        if !self.module_runs_matched {
            self.attach(start, module, program);
        }
    }
}

impl DeviceVisitor<'_, '_> {
    /// Counts device work (a kernel or a module run) for the trace's coverage.
    fn saw_device_activity(&mut self, start: i64) {
        self.scan.device_events += 1;
        self.scan.last_kernel_ps = self.scan.last_kernel_ps.max(Some(start));
    }

    /// A module run on a TPU's `XLA Modules` line: the launch itself, when the host
    /// does not name what it launches (TFRT TPU), and otherwise proof that the host's
    /// launch ran on this device (the PJRT C API's TPU client names its launches).
    fn module_run(
        &mut self,
        line: &LineInfo,
        event: &Event<'_>,
        start: i64,
        module: Option<u32>,
        program: Option<u64>,
    ) {
        let (named, named_program) = self.named_module_run(event.metadata_id);
        if named.is_none() && module.is_none() && program.is_none() {
            return;
        }
        self.saw_device_activity(start);
        if self.collect_device_executions
            && (module.is_some() || program.is_some())
            && self.scan.device_executions.len() < MAX_EXECUTIONS
        {
            let module = module.or_else(|| {
                let name = self.plane.event_metadata.get(&event.metadata_id)?;
                Some(self.scan.intern_module(&name.name))
            });
            self.scan.device_executions.push(ExecutionRecord {
                start_ps: start,
                end_ps: event.end_ps(line),
                run_id: None,
                module,
                program_id: program,
                launched_kernels: true,
                waited_for_memory: false,
                module_hint: None,
                link: None,
                device_run: None,
            });
        }
        let module = module.or(named);
        let program = program.or(named_program);
        let run = self.run_stat(event);
        let launch = run
            .and_then(|r| self.launch_of_run(r, module))
            .or_else(|| self.next_queued_launch(start, module, program));
        if let Some(e) = launch.and_then(|i| self.scan.executions.get_mut(i as usize)) {
            e.launched_kernels = true;
            e.program_id = e.program_id.or(program);
            e.module = e.module.or(module);
            self.module_runs_matched = true;
        }
    }

    /// The launch a module run without a shared run id belongs to: a device runs its
    /// launches in the order they were queued, so the first launch of the module not
    /// yet run on this device, among those started before the run.
    fn next_queued_launch(
        &mut self,
        start: i64,
        module: Option<u32>,
        program: Option<u64>,
    ) -> Option<u32> {
        let cursor = self.queue_cursor.entry((module, program)).or_insert(0);
        let executions = &self.scan.executions;
        let same_module = |e: &ExecutionRecord| {
            let by_name = module.is_some() && e.module == module;
            let by_program = program.is_some() && e.program_id == program;
            let unknown = e.module.is_none() && e.program_id.is_none();
            by_name || by_program || unknown
        };
        while let Some(&i) = self.order.get(*cursor) {
            let e = executions.get(i as usize)?;
            if e.start_ps > start {
                return None;
            }
            *cursor += 1;
            if same_module(e) {
                return Some(i);
            }
        }
        None
    }

    /// `jit_f` and `12` from a module run named `jit_f(12)`, by event type, once.
    fn named_module_run(&mut self, metadata_id: i64) -> (Option<u32>, Option<u64>) {
        if let Some(&known) = self.module_runs.get(&metadata_id) {
            return known;
        }
        let plane = self.plane;
        let parsed = plane
            .event_metadata
            .get(&metadata_id)
            .and_then(|m| m.name.strip_suffix(')'))
            .and_then(|n| n.rsplit_once('('))
            .and_then(|(name, id)| Some((name, id.parse::<u64>().ok()?)));
        let known = match parsed {
            Some((name, id)) if !name.is_empty() => (Some(self.scan.intern_module(name)), Some(id)),
            _ => (None, None),
        };
        self.module_runs.insert(metadata_id, known);
        known
    }

    fn run_stat(&self, event: &Event<'_>) -> Option<i64> {
        let id = self.ids.run_id?;
        let mut run = None;
        event.for_each_stat_of(|i| i == id, |_, v| run = run.or(v.as_i64()));
        run
    }

    /// The host launch with run id `run`, if its module is `module` (or either is
    /// unknown): host and device run ids are only compared where the runtime shares
    /// them, so a launch of another module is not taken on a coincidence of numbers.
    fn launch_of_run(&mut self, run: i64, module: Option<u32>) -> Option<u32> {
        if self.launch_by_run.is_none() {
            let map = self
                .scan
                .executions
                .iter()
                .enumerate()
                .flat_map(|(i, e)| {
                    // The device's id for the launch first; its own as a fallback.
                    let runs = [e.device_run, e.run_id.filter(|_| e.device_run.is_none())];
                    runs.into_iter().flatten().map(move |r| (r, i as u32))
                })
                .collect();
            self.launch_by_run = Some(map);
        }
        let i = *self.launch_by_run.as_ref()?.get(&run)?;
        let e = self.scan.executions.get(i as usize)?;
        (module.is_none() || e.module.is_none() || e.module == module).then_some(i)
    }

    /// Attaches device work that started at `start` to its launch: the latest one of
    /// its module started before it (work runs after its launch begins).
    fn attach(&mut self, start: i64, module: Option<u32>, program: Option<u64>) {
        if let Some(m) = self.last_match {
            if m.module == module && m.program == program && m.from <= start && start < m.to {
                return;
            }
        }
        let executions = &mut self.scan.executions;
        let hint = match self.last_search {
            Some((at, upto)) if at <= start => upto,
            _ => 0,
        };
        let upto = launches_started_by(executions, self.order, start, hint);
        self.last_search = Some((start, upto));
        let start_of = |i: Option<&u32>| {
            i.and_then(|&i| executions.get(i as usize))
                .map(|e| e.start_ps)
        };
        // Every kernel between the same two launches finds the same one.
        let from =
            start_of(upto.checked_sub(1).and_then(|i| self.order.get(i))).unwrap_or(i64::MIN);
        let to = start_of(self.order.get(upto)).unwrap_or(i64::MAX);
        self.last_match = Some(KernelMatch {
            from,
            to,
            module,
            program,
        });
        for &i in self.order[..upto].iter().rev().take(256) {
            let Some(e) = executions.get_mut(i as usize) else {
                continue;
            };
            // A launch named only by its `PjitFunction` hint takes its own module's kernels.
            let hinted_elsewhere = e.module.is_none()
                && e.module_hint.is_some()
                && module.is_some()
                && e.module_hint != module;
            if hinted_elsewhere {
                continue;
            }
            if module.is_none() || e.module.is_none() || e.module == module {
                e.launched_kernels = true;
                if e.program_id.is_none() {
                    e.program_id = program;
                }
                if e.module.is_none() {
                    e.module = module;
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Times in a scrambled but reproducible order (a permutation of `0..n`).
    fn scrambled(n: usize) -> impl Iterator<Item = i64> {
        (0..n as u64).map(move |i| ((i * 7919) % n as u64) as i64)
    }

    fn record(time_ps: i64, origin: Origin) -> AllocationRecord {
        AllocationRecord {
            time_ps,
            in_use: time_ps as u64,
            reserved: 0,
            addr: time_ps as u64,
            size: 1,
            requested: 1,
            allocator: 0,
            is_allocation: true,
            origin,
        }
    }

    fn execution(start_ps: i64) -> ExecutionRecord {
        ExecutionRecord {
            start_ps,
            end_ps: start_ps + 1,
            run_id: Some(start_ps),
            module: None,
            program_id: None,
            launched_kernels: false,
            waited_for_memory: false,
            module_hint: None,
            link: None,
            device_run: None,
        }
    }

    /// Module names first met by the later of two device scanners come after the
    /// earlier one's, each once, as one scanner would have interned them.
    #[test]
    fn kernel_parts_add_module_names_in_line_order() {
        let mut whole = RuntimeScan::default();
        whole.intern_module("a");
        whole.executions.push(execution(1));
        let (mut first, mut later) = (whole.kernel_part(), whole.kernel_part());
        first.intern_module("b");
        later.intern_module("c");
        later.intern_module("b");
        later.executions[0].launched_kernels = true;
        later.executions[0].program_id = Some(7);
        later.kernels = 3;
        whole.absorb_kernels(first);
        whole.absorb_kernels(later);
        assert_eq!(whole.module_names, ["a", "b", "c"]);
        assert_eq!(whole.intern_module("c"), 2);
        assert!(whole.executions[0].launched_kernels);
        assert_eq!(whole.executions[0].program_id, Some(7));
        assert_eq!(whole.kernels, 3);
    }

    /// The forward search from a hint finds what a binary search over all launches
    /// finds, for every hint that is a true lower bound (ties in start included).
    #[test]
    fn the_launches_started_by_a_kernel_are_counted_from_any_hint() {
        let starts = [0i64, 5, 5, 5, 9, 20, 21, 21, 40, 41, 42, 100];
        let executions: Vec<ExecutionRecord> = starts.iter().map(|&s| execution(s)).collect();
        let order: Vec<u32> = (0..starts.len() as u32).collect();
        for start in -1..=101 {
            let expected = starts.partition_point(|&s| s <= start);
            for hint in 0..=expected {
                let found = launches_started_by(&executions, &order, start, hint);
                assert_eq!(found, expected, "start {start}, hint {hint}");
            }
        }
        assert_eq!(launches_started_by(&[], &[], 7, 0), 0);
    }

    /// Whatever order events arrive in, and however the scan is split, the history kept
    /// is the latest events in time, in arrival order, and every event is counted.
    #[test]
    fn the_latest_allocator_events_are_kept_and_the_rest_counted() {
        let n = 3 * MAX_ALLOCATION_RECORDS + 123;
        let mut whole = RuntimeScan::default();
        for t in scrambled(n) {
            whole.keep_record(record(t, Origin::Unknown));
        }
        whole.finish_host();
        let through = (n - MAX_ALLOCATION_RECORDS - 1) as i64;
        assert_eq!(whole.records.len(), MAX_ALLOCATION_RECORDS);
        assert_eq!(whole.records_dropped as usize, n - MAX_ALLOCATION_RECORDS);
        assert_eq!(whole.records_dropped_through_ps, Some(through));
        assert!(whole.records.iter().all(|r| r.time_ps > through));
        assert!(whole
            .records
            .windows(2)
            .all(|w| w[0].time_ps < w[1].time_ps));

        // The same events in two parts, merged: the same history.
        let (mut first, mut second) = (RuntimeScan::default(), RuntimeScan::default());
        for (i, t) in scrambled(n).enumerate() {
            let part = if i < n / 3 { &mut first } else { &mut second };
            part.keep_record(record(t, Origin::Unknown));
        }
        first.absorb(second);
        first.finish_host();
        assert_eq!(first.records_dropped, whole.records_dropped);
        assert_eq!(first.records_dropped_through_ps, Some(through));
        let times = |s: &RuntimeScan| s.records.iter().map(|r| r.time_ps).collect::<Vec<_>>();
        assert_eq!(times(&first), times(&whole));
    }

    /// A launch older than all the others, arriving when the older half goes, goes
    /// with it: it gets no index (so nothing is attributed to another launch).
    #[test]
    fn a_launch_dropped_on_arrival_gets_no_index() {
        let mut scan = RuntimeScan::default();
        for start in 1..2 * MAX_EXECUTIONS as i64 {
            assert!(scan
                .keep_execution(execution(1000 + start), |_| {})
                .is_some());
        }
        let mut renumbered = false;
        let index = scan.keep_execution(execution(0), |_| renumbered = true);
        assert!(renumbered, "the older half was not dropped");
        assert_eq!(index, None);
        assert_eq!(scan.executions.len(), MAX_EXECUTIONS);
    }

    /// Dropping old launches renumbers what points at the kept ones, and what pointed
    /// at a dropped one no longer names a launch.
    #[test]
    fn dropping_old_launches_renumbers_what_points_at_them() {
        let n = 2 * MAX_EXECUTIONS + 10;
        let mut scan = RuntimeScan::default();
        // The indices a caller holds, as the host visitor holds its open launches.
        let mut held: Vec<(i64, Option<u32>)> = Vec::new();
        for start in scrambled(n) {
            let start = start * 10;
            let index = scan.keep_execution(execution(start), |remap| {
                for (_, h) in held.iter_mut() {
                    *h = h.and_then(remap);
                }
            });
            held.push((start, index));
            if let Some(i) = index {
                // An allocation inside the launch, and a wait.
                scan.records.push(record(start + 1, Origin::Execution(i)));
                scan.retries.push(RetryRecord {
                    start_ps: start + 1,
                    duration_ps: 1,
                    execution: Some(i),
                    run: None,
                });
            }
        }
        assert!(scan.executions_dropped > 0, "no launch was dropped yet");
        for &(start, index) in &held {
            if let Some(i) = index {
                assert_eq!(scan.executions[i as usize].start_ps, start);
            }
        }
        scan.keep_latest_executions();
        assert_eq!(scan.executions.len(), MAX_EXECUTIONS);
        assert_eq!(scan.executions_dropped as usize, n - MAX_EXECUTIONS);
        let through = scan
            .executions_dropped_through_ps
            .expect("launches dropped");
        assert!(scan.executions.iter().all(|e| e.start_ps > through));
        for r in &scan.records {
            match r.origin {
                Origin::Execution(i) => {
                    assert_eq!(scan.executions[i as usize].start_ps, r.time_ps - 1)
                }
                _ => assert!(r.time_ps - 1 <= through),
            }
        }
        for w in &scan.retries {
            match w.execution {
                Some(i) => assert_eq!(scan.executions[i as usize].start_ps, w.start_ps - 1),
                None => assert!(w.start_ps - 1 <= through),
            }
        }
    }
}
