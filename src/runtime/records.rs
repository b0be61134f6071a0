//! What the runtime scan keeps: the record types, and [`RuntimeScan`], the store of
//! them with its capped histories. Allocator events and launches are kept up to a cap,
//! the latest in time: a scan holds up to twice the cap, then drops the older half in
//! linear time ([`cutoff`]), renumbering what points at dropped launches; everything
//! dropped is still counted.

// Fx hashing: these maps are keyed by small integers and looked up per event.
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use super::launches::RunIds;
use super::window::LineMarks;
use crate::capture::Plane;

mod kept_launches;

/// Allocator events kept for the timeline and the live-array analysis: the latest ones
/// in time. Beyond this the peaks and counts stay exact (they are streamed) but the
/// history kept starts later: an out-of-memory error happens at the end of a capture,
/// and what is live then is best told from the latest events. A scan holds up to twice
/// this many before it drops the older half, so dropping costs little per event.
pub(super) const MAX_ALLOCATION_RECORDS: usize = 1 << 17;

/// Launches kept, the latest in time (as for allocator events); all are counted.
pub(super) const MAX_EXECUTIONS: usize = 1 << 15;
/// `AllocatorRetry` waits kept; all are counted and timed (see [`RetryTotals`]).
pub(super) const MAX_RETRY_RECORDS: usize = 1 << 16;

/// Where an allocation came from: the launch or transfer enclosing it on its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Origin {
    Unknown,
    /// The launch at this index of the scan's launches.
    Execution(u32),
    /// While the host plane is scanned: the launch by the number it got when kept
    /// ([`RuntimeScan::keep_record`]), which dropping older launches leaves as it
    /// is; [`RuntimeScan::settle_origins`] makes it an index (or `Unknown`, its launch
    /// dropped) before anything reads it.
    Launch(u64),
    Transfer(u32),
    /// Inside work for a launch identified by its run id (on a worker thread).
    Run(i64),
}

/// A launch's module and program, as launches not kept are counted by.
pub(super) type LaunchKey = (Option<u32>, Option<u64>);

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct AllocationRecord {
    pub(crate) time_ps: i64,
    /// In use after the event (`bytes_allocated`), plus `bytes_reserved`.
    pub(crate) in_use: u64,
    /// `bytes_reserved` (the runtime's own reservation: XProf's "stack"; large on TPU).
    pub(crate) reserved: u64,
    pub(crate) addr: u64,
    /// `allocation_bytes` (the chunk), else `requested_bytes`.
    pub(crate) size: u64,
    /// `requested_bytes` (0 when absent, as on TPU deallocations).
    pub(crate) requested: u64,
    pub(crate) allocator: u16,
    pub(crate) is_allocation: bool,
    pub(crate) origin: Origin,
    /// Where the event lies in the file ([`crate::capture::Event::file_offset`]): the
    /// few events whose annotations the report shows (shape, op) are read again there,
    /// so that the scan decodes none of them.
    #[serde(default)]
    pub(crate) event_at: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AllocatorState {
    pub(crate) name: String,
    pub(crate) capacity: u64,
    pub(crate) peak_in_use: u64,
    pub(crate) peak_time_ps: i64,
    pub(crate) fragmentation_at_peak: f64,
    pub(crate) lifetime_peak: u64,
    pub(crate) allocations: u64,
    pub(crate) deallocations: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecutionRecord {
    pub(crate) start_ps: i64,
    pub(crate) end_ps: i64,
    pub(crate) run_id: Option<i64>,
    /// Module name (HloModule name), when the events name it.
    pub(crate) module: Option<u32>,
    pub(crate) program_id: Option<u64>,
    pub(crate) launched_kernels: bool,
    pub(crate) waited_for_memory: bool,
    /// `jit_<fn>` from the enclosing `PjitFunction(<fn>)`: the module when nothing
    /// else names it (a launch that failed before `ExecuteThunks`).
    pub(crate) module_hint: Option<u32>,
    /// The PJRT C API context (kPjrtLibraryCall) that ties the caller's launch event to
    /// the plugin's on another line: launches sharing one are the same launch.
    #[serde(default)]
    pub(crate) link: Option<i64>,
    /// The run id of the launch's work on the device, when the host names it apart
    /// from the launch's own (TPU: `DoEnqueueProgram` inside the launch).
    #[serde(default)]
    pub(crate) device_run: Option<i64>,
}

/// A call of a jitted function (`PjitFunction(…)`) that reached the runtime (it
/// encloses a launch or PjRt's preparation of one). On the CPU backend the launch
/// itself is recorded only when it completes, so a call with no launch after it is one
/// that never ran, or had not finished when the capture stopped.
impl ExecutionRecord {
    /// A launch from `start_ps` to `end_ps` that names nothing yet.
    pub(super) fn spanning(start_ps: i64, end_ps: i64) -> Self {
        ExecutionRecord {
            start_ps,
            end_ps,
            run_id: None,
            module: None,
            program_id: None,
            launched_kernels: false,
            waited_for_memory: false,
            module_hint: None,
            link: None,
            device_run: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRecord {
    pub(crate) start_ps: i64,
    pub(crate) end_ps: i64,
    /// `jit_<fn>`, interned.
    pub(crate) module: Option<u32>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct RetryRecord {
    pub(crate) start_ps: i64,
    pub(crate) duration_ps: i64,
    pub(crate) execution: Option<u32>,
    /// The run id of the launch it waited in, when on a worker thread.
    pub(crate) run: Option<i64>,
}

/// All `AllocatorRetry` waits, streamed: count, summed and longest duration.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct RetryTotals {
    pub(crate) count: u64,
    pub(crate) total_ps: i64,
    pub(crate) longest_ps: i64,
}

impl RetryTotals {
    pub(super) fn add(&mut self, other: RetryTotals) {
        self.count += other.count;
        self.total_ps = self.total_ps.saturating_add(other.total_ps);
        self.longest_ps = self.longest_ps.max(other.longest_ps);
    }
}

/// Everything the runtime scan keeps. What the rest of the pipeline reads is visible
/// to the crate; the rest is the runtime's, and the maps that must stay consistent
/// with the capped histories (modules interned, runs seen, launches dropped) are this
/// file's, behind small methods.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct RuntimeScan {
    pub(crate) allocators: Vec<AllocatorState>,
    /// The latest allocator events (see [`MAX_ALLOCATION_RECORDS`]), in time order
    /// once the host planes are scanned.
    pub(crate) records: Vec<AllocationRecord>,
    /// Allocator events counted but not kept in `records`: all those at or before
    /// `records_dropped_through_ps`, and none after it.
    pub(crate) records_dropped: u64,
    pub(crate) records_dropped_through_ps: Option<i64>,
    /// How many of `records`, from the first, are known to be in time order: a scan
    /// meets a line's events in time order, so the history usually is, and capping it
    /// is then a cut at an index. Only [`RuntimeScan::keep_record`] extends it; what
    /// else reorders or shrinks the history sets it anew here.
    #[serde(skip)]
    records_in_order: usize,
    /// While this is one of several parts of a host plane scanned at once: the latest
    /// time at or before which any part dropped its records when capping them. What a
    /// part drops that way is older than the cap's worth of later records in the
    /// capture, so the whole would drop it too; every part drops records that old as
    /// they come, sparing their keeping. Until
    /// [`RuntimeScan::finish_part`] drops those it held, the part's own
    /// `records_dropped_through_ps` may be earlier than what it dropped.
    #[serde(skip)]
    records_cut_shared: Option<SharedCut>,
    /// The latest launches (see [`MAX_EXECUTIONS`]), in time order once the host planes
    /// are scanned.
    pub(crate) executions: Vec<ExecutionRecord>,
    /// While the host plane is scanned, the number each of `executions` got when kept
    /// (rising), and the next number: an allocator event points at its launch by
    /// number ([`Origin::Launch`]), so that dropping older launches, which moves the
    /// indices of those kept, need not renumber the whole history each time. Empty
    /// (no numbers) once [`RuntimeScan::settle_origins`] has run, until a launch is
    /// kept again.
    #[serde(skip)]
    launch_numbers: Vec<u64>,
    #[serde(skip)]
    next_launch_number: u64,
    /// Whether some record may point at a launch by index ([`Origin::Execution`]):
    /// those a drop of launches must renumber.
    #[serde(skip)]
    indexed_origins: bool,
    /// Launches counted but not kept: all those starting at or before
    /// `executions_dropped_through_ps`, none after it.
    pub(crate) executions_dropped: u64,
    pub(crate) executions_dropped_through_ps: Option<i64>,
    /// Launches dropped, by the module and program known for them when dropped, so
    /// that each module still counts all its launches.
    dropped_launches: HashMap<LaunchKey, u64>,
    /// Interned module names (from execution events and kernels).
    pub(super) module_names: Vec<String>,
    /// Where each of `module_names` is.
    module_index: HashMap<String, u32>,
    /// Transfers by event name and the user's Python frame around them.
    pub(super) transfers: Vec<(String, Option<String>)>,
    pub(super) transfer_count: u64,
    pub(super) retries: Vec<RetryRecord>,
    /// Every wait, kept or not.
    pub(super) retry_totals: RetryTotals,
    /// Kernels matched on device planes.
    pub(crate) kernels: u64,
    pub(super) device_memory_bytes: Option<u64>,
    /// Launches seen on a device's `XLA Modules` line (TPU), used when host events
    /// do not name modules.
    pub(super) device_executions: Vec<ExecutionRecord>,
    /// Host lines walked, and host events visited on them.
    pub(super) host_lines: usize,
    pub(super) host_events: u64,
    /// Per host plane, per line: where a later walk for a time window can start or
    /// whether it can skip the line.
    pub(super) line_marks: Vec<LineMarks>,
    /// What run ids name, for launches that name it elsewhere.
    pub(super) runs: RunIds,
    /// Lines of each device plane walked, in file order (for the plane summary).
    pub(crate) device_line_counts: Vec<usize>,
    /// Kernels (and module runs) seen on each device plane, in file order: a device
    /// with none had no trace recorded, whatever ran on it.
    #[serde(default)]
    pub(super) device_kernel_counts: Vec<u64>,
    /// The start of the last kernel on any device plane.
    #[serde(default)]
    pub(super) last_kernel_ps: Option<i64>,
    /// Kernels and module runs seen on device planes (what the per-plane counts are
    /// taken from).
    #[serde(default)]
    pub(crate) device_events: u64,
    /// The latest call of a jitted function that reached the runtime.
    #[serde(default)]
    pub(super) last_call: Option<CallRecord>,
}

impl RuntimeScan {
    /// A fresh scan for the lines of one host plane (a part of it, scanned apart).
    pub(super) fn for_one_host_plane() -> Self {
        let mut scan = RuntimeScan::default();
        scan.start_host_plane();
        scan
    }

    /// Starts the line marks of the next host plane.
    pub(super) fn start_host_plane(&mut self) {
        self.line_marks.push(LineMarks::default());
    }

    /// Keeps a device plane's counts, in file order: its lines, and the kernels and
    /// module runs seen on it.
    pub(super) fn count_device_plane(&mut self, lines: usize, device_events: u64) {
        self.device_line_counts.push(lines);
        self.device_kernel_counts.push(device_events);
    }

    /// The device's memory size, from the first device plane that states one.
    pub(super) fn note_device_memory(&mut self, plane: &Plane) {
        if self.device_memory_bytes.is_none() {
            self.device_memory_bytes = plane
                .plane_stat("memory_size")
                .and_then(|v| v.as_ref())
                .and_then(|v| v.as_u64())
                .filter(|&b| b > 0);
        }
    }

    /// The launches not kept, counted by the module and program known for them.
    pub(super) fn dropped_launches(&self) -> impl Iterator<Item = (LaunchKey, u64)> + '_ {
        self.dropped_launches
            .iter()
            .map(|(&key, &count)| (key, count))
    }

    /// Adds `count` launches of module and program `key` dropped elsewhere (by another
    /// scanner; already in `executions_dropped`).
    pub(super) fn add_dropped_launches(&mut self, key: LaunchKey, count: u64) {
        *self.dropped_launches.entry(key).or_insert(0) += count;
    }

    /// A fresh scan that interns modules as this one does (the same names at the same
    /// indices).
    pub(super) fn with_modules_of(&self) -> RuntimeScan {
        RuntimeScan {
            module_names: self.module_names.clone(),
            module_index: self.module_index.clone(),
            ..Default::default()
        }
    }

    /// Keeps `call` if it is the latest call seen.
    pub(super) fn note_call(&mut self, call: Option<CallRecord>) {
        if call.map(|c| c.start_ps) > self.last_call.map(|c| c.start_ps) {
            self.last_call = call;
        }
    }

    pub(super) fn intern_module(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.module_index.get(name) {
            return i;
        }
        let i = self.module_names.len() as u32;
        self.module_names.push(name.to_owned());
        self.module_index.insert(name.to_owned(), i);
        i
    }

    /// Keeps a new allocator event unless it is older than the history kept; drops the
    /// older events once twice the cap is held. A launch it was made in is kept by
    /// number ([`Origin::Launch`]) until [`RuntimeScan::settle_origins`].
    pub(super) fn keep_record(&mut self, record: AllocationRecord) {
        let through = self
            .records_dropped_through_ps
            .max(self.shared_records_cut());
        if through.is_some_and(|t| record.time_ps <= t) {
            self.records_dropped += 1;
            return;
        }
        let record = AllocationRecord {
            origin: self.kept_origin(record.origin),
            ..record
        };
        let in_order = self.records_in_order == self.records.len()
            && self
                .records
                .last()
                .is_none_or(|last| last.time_ps <= record.time_ps);
        self.records.push(record);
        if in_order {
            self.records_in_order = self.records.len();
        }
        if self.records.len() >= 2 * MAX_ALLOCATION_RECORDS {
            self.keep_latest_records();
        }
    }

    /// Drops every record at or before the time that leaves at most
    /// [`MAX_ALLOCATION_RECORDS`] later ones (fewer when several share that time), in
    /// linear time; the kept ones stay in scan order.
    pub(super) fn keep_latest_records(&mut self) {
        let in_order = self.history_in_order();
        let through = cutoff(
            &self.records,
            |r| r.time_ps,
            MAX_ALLOCATION_RECORDS,
            in_order,
        );
        if let Some(through) = through {
            if let Some(shared) = &self.records_cut_shared {
                shared.publish(through);
            }
            // Another part may have cut later still.
            let through = self
                .shared_records_cut()
                .map_or(through, |cut| cut.max(through));
            self.drop_records_through(through);
        }
    }

    /// Shares the cuts of this part's history with the other parts of the plane that
    /// hold `cut` (see `records_cut_shared`), until [`RuntimeScan::finish_part`].
    pub(super) fn share_records_cut(&mut self, cut: &SharedCut) {
        self.records_cut_shared = Some(cut.clone());
    }

    /// The latest cut of a part sharing its cuts with this one, if any.
    fn shared_records_cut(&self) -> Option<i64> {
        self.records_cut_shared.as_ref()?.latest()
    }

    /// Notes that the whole history is in time order (it was just merged so).
    pub(super) fn records_now_in_order(&mut self) {
        self.records_in_order = self.records.len();
        debug_assert!(self.history_in_order());
    }

    /// Whether the whole history is known to be in time order.
    pub(super) fn history_in_order(&self) -> bool {
        let in_order = self.records_in_order == self.records.len();
        debug_assert!(!in_order || self.records.is_sorted_by_key(|r| r.time_ps));
        in_order
    }

    /// Puts the history in time order, stably: records of one time keep the order the
    /// scan met them in. A thread done with its part of a host plane does this, so that
    /// merging parts and the scan's end each find it done (nothing when the history is
    /// known to be in order, else a pass over it, without the scratch buffer a sort
    /// takes).
    pub(super) fn put_records_in_time_order(&mut self) {
        if !self.history_in_order() {
            in_time_order(&mut self.records);
            self.records_in_order = self.records.len();
        }
    }

    /// About the bytes the scan holds on the heap: its histories, launches and line
    /// marks, which are most of it.
    pub(crate) fn heap_bytes(&self) -> usize {
        let marks: usize = self.line_marks.iter().map(LineMarks::heap_bytes).sum();
        crate::free::heap_bytes(&self.records)
            .saturating_add(crate::free::heap_bytes(&self.executions))
            .saturating_add(marks)
    }

    /// What a thread does with its part of a host plane when done: its launches and
    /// history capped (what merging the parts would drop of them anyway: a record or
    /// launch older than the cap's worth of later ones in its own part is older than
    /// as many in the whole) and the history put in time order, so that the join,
    /// which the other thread waits for, merges.
    pub(super) fn finish_part(&mut self) {
        // Launches past the cap go here, on the thread that scanned them, while they
        // are still numbered (nothing points at them by index): the join then moves
        // fewer, on the serial stretch after the plane.
        if self.executions.len() > MAX_EXECUTIONS {
            self.keep_latest_executions();
        }
        self.settle_origins();
        // What came before another part's cut: dropped as it came, or now.
        if let Some(shared) = self.shared_records_cut() {
            if Some(shared) > self.records_dropped_through_ps {
                self.drop_records_through(shared);
            }
        }
        if self.records.len() > MAX_ALLOCATION_RECORDS {
            self.keep_latest_records();
        }
        self.put_records_in_time_order();
        // A finished part's history is merged, no longer scanned into.
        self.records_cut_shared = None;
    }

    /// Drops the records at or before `through`.
    pub(super) fn drop_records_through(&mut self, through: i64) {
        let n = self.records.len();
        if self.history_in_order() {
            // The records that go come first: one move of those that stay.
            let from = self.records.partition_point(|r| r.time_ps <= through);
            self.records.drain(..from);
            self.records_in_order = self.records.len();
        } else {
            self.records.retain(|r| r.time_ps > through);
            self.records_in_order = 0;
        }
        self.records_dropped += (n - self.records.len()) as u64;
        // `None` is before every time.
        self.records_dropped_through_ps = self.records_dropped_through_ps.max(Some(through));
    }
}

/// `records` in time order, stably (see [`RuntimeScan::put_records_in_time_order`]).
pub(super) fn in_time_order(records: &mut [AllocationRecord]) {
    if !records.is_sorted_by_key(|r| r.time_ps) {
        records.sort_by_key(|r| r.time_ps);
    }
}

/// The time at or before which everything goes so that at most `keep` of `items`
/// remain (fewer when several share that time), `None` when all fit: the cut of a
/// capped history. Items known to be in time order give it at its place; others have
/// it selected, in linear time.
pub(super) fn cutoff<T>(
    items: &[T],
    time: impl Fn(&T) -> i64,
    keep: usize,
    in_order: bool,
) -> Option<i64> {
    let last_dropped = items.len().checked_sub(keep + 1)?;
    if in_order {
        return items.get(last_dropped).map(time);
    }
    let mut times: Vec<i64> = items.iter().map(time).collect();
    let (_, &mut through, _) = times.select_nth_unstable(last_dropped);
    Some(through)
}

/// The latest cut of the allocator history made by any of the parts of a host plane
/// scanned at once (see `RuntimeScan::records_cut_shared`); clones share it.
#[derive(Debug, Clone)]
pub(super) struct SharedCut(Arc<AtomicI64>);

impl SharedCut {
    /// No cut yet (`i64::MIN` stands for none: a cut there would drop nothing the
    /// parts' own cuts do not).
    pub(super) fn new() -> Self {
        SharedCut(Arc::new(AtomicI64::new(i64::MIN)))
    }

    /// Makes `through` the shared cut if it is later than the one held.
    fn publish(&self, through: i64) {
        self.0.fetch_max(through, Ordering::Relaxed);
    }

    fn latest(&self) -> Option<i64> {
        let cut = self.0.load(Ordering::Relaxed);
        (cut != i64::MIN).then_some(cut)
    }
}

#[cfg(test)]
pub(super) mod tests;
