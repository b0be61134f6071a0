//! Absorbing another scanner's part: the later lines of a host plane scanned apart
//! (tables merged, indices renumbered, histories capped again), and kernel parts, the
//! later lines of a device plane matched to a copy of the launches.

use crate::free::{free_later, heap_bytes};

use super::records::{
    cutoff, in_time_order, AllocationRecord, AllocatorState, ExecutionRecord, Origin, RetryRecord,
    RuntimeScan, MAX_ALLOCATION_RECORDS, MAX_EXECUTIONS, MAX_RETRY_RECORDS,
};

/// Where another part's indices land in this scan's tables: its interned modules and
/// allocators by their new index, and the launches and transfers it numbered from 0,
/// now after this scan's own.
struct Renumber {
    modules: Vec<u32>,
    allocators: Vec<u16>,
    executions_before: u32,
    transfers_before: u32,
}

impl Renumber {
    fn module(&self, m: Option<u32>) -> Option<u32> {
        m.and_then(|m| self.modules.get(m as usize).copied())
    }

    fn record(&self, mut r: AllocationRecord) -> AllocationRecord {
        r.allocator = self
            .allocators
            .get(r.allocator as usize)
            .copied()
            .unwrap_or(r.allocator);
        r.origin = match r.origin {
            Origin::Execution(i) => Origin::Execution(i + self.executions_before),
            Origin::Transfer(t) => Origin::Transfer(t + self.transfers_before),
            o => o,
        };
        r
    }

    fn execution(&self, mut e: ExecutionRecord) -> ExecutionRecord {
        e.module = self.module(e.module);
        e.module_hint = self.module(e.module_hint);
        e
    }

    fn retry(&self, mut r: RetryRecord) -> RetryRecord {
        r.execution = r.execution.map(|i| i + self.executions_before);
        r
    }
}

impl RuntimeScan {
    /// Adds what another scanner found on later lines of the same host plane: tables
    /// are merged, indices into them renumbered, histories capped again as one scanner
    /// caps them, and ties in the peaks go to the later lines (as when one thread
    /// visits everything in file order).
    pub(super) fn absorb(&mut self, other: RuntimeScan) {
        self.absorb_from_line(other, 0);
    }

    /// [`RuntimeScan::absorb`] of a part scanned from a plane's line `lines` on, its
    /// lines numbered from 0 (see `Plane::visit_segment`): its last plane's line marks
    /// are numbered as from the plane's start.
    pub(super) fn absorb_from_line(&mut self, mut other: RuntimeScan, lines: usize) {
        self.settle_origins();
        other.settle_origins();
        let renumber = Renumber {
            modules: other
                .module_names
                .iter()
                .map(|n| self.intern_module(n))
                .collect(),
            allocators: self.absorb_allocators(std::mem::take(&mut other.allocators)),
            executions_before: self.executions.len() as u32,
            transfers_before: self.transfers.len() as u32,
        };
        // Launches either part dropped, under this scan's module numbers.
        for ((m, p), count) in other.dropped_launches() {
            self.add_dropped_launches((renumber.module(m), p), count);
        }
        let theirs_in_order = other.history_in_order();
        self.absorb_records(
            other.records,
            theirs_in_order,
            other.records_dropped,
            other.records_dropped_through_ps,
            &renumber,
        );
        // What either part dropped is older than what the whole keeps.
        let executions_through = self
            .executions_dropped_through_ps
            .max(other.executions_dropped_through_ps);
        self.executions_dropped += other.executions_dropped;
        self.executions
            .extend(other.executions.drain(..).map(|e| renumber.execution(e)));
        // The part's buffer, emptied, goes off this thread.
        let bytes = heap_bytes(&other.executions);
        free_later(std::mem::take(&mut other.executions), bytes);
        if let Some(mut call) = other.last_call {
            call.module = renumber.module(call.module);
            self.note_call(Some(call));
        }
        self.transfers.extend(other.transfers);
        self.transfer_count += other.transfer_count;
        self.retry_totals.add(other.retry_totals);
        let retry_room = MAX_RETRY_RECORDS.saturating_sub(self.retries.len());
        self.retries.extend(
            other
                .retries
                .into_iter()
                .take(retry_room)
                .map(|r| renumber.retry(r)),
        );
        // Records and waits are in: dropping launches renumbers what points at them,
        // in one pass for what either part dropped and what the cap drops of the rest.
        // No more launches than the cap, none over it once what the parts dropped goes.
        let capped = if self.executions.len() > MAX_EXECUTIONS {
            let kept_starts: Vec<i64> = (self.executions.iter())
                .map(|e| e.start_ps)
                .filter(|&start| executions_through.is_none_or(|t| start > t))
                .collect();
            cutoff(&kept_starts, |&start| start, MAX_EXECUTIONS, false)
        } else {
            None
        };
        // `None` is before every time.
        if let Some(through) = executions_through.max(capped) {
            self.drop_executions_through(through);
        }
        self.host_lines += other.host_lines;
        self.host_events += other.host_events;
        self.runs.absorb(other.runs, |m| renumber.module(Some(m)));
        // Each scanner filled the marks of the lines it walked: the other walked later
        // lines of this scan's last plane(s).
        let skip = self.line_marks.len().saturating_sub(other.line_marks.len());
        let last = other.line_marks.len().saturating_sub(1);
        let pairs = self.line_marks.iter_mut().skip(skip).zip(other.line_marks);
        for (k, (mine, theirs)) in pairs.enumerate() {
            mine.absorb_numbered_from(theirs, if k == last { lines } else { 0 });
        }
    }

    /// Another part's allocators, merged by name into this scan's (counts added, the
    /// later part's peak taking ties); returns where each of them is now.
    fn absorb_allocators(&mut self, theirs: Vec<AllocatorState>) -> Vec<u16> {
        let mut at = Vec::with_capacity(theirs.len());
        for a in theirs {
            let i = match self.allocators.iter().position(|x| x.name == a.name) {
                Some(i) => {
                    self.allocators[i].absorb(a);
                    i
                }
                None => {
                    self.allocators.push(a);
                    self.allocators.len() - 1
                }
            };
            at.push(i.min(u16::MAX as usize) as u16);
        }
        at
    }

    /// Another part's allocator events: what either part's history leaves out is
    /// dropped and counted, the rest renumbered and kept, and the history capped again.
    /// Both histories are put in time order (each part's thread has done so already,
    /// see [`RuntimeScan::finish_part`], so this costs a pass over each),
    /// the cut is found from their ends, and what is kept is merged in time order,
    /// this part's first among equal times: what sorting the two histories one after
    /// the other gives, which is what the scan's end does (`finish_host`).
    fn absorb_records(
        &mut self,
        mut theirs: Vec<AllocationRecord>,
        theirs_in_order: bool,
        dropped: u64,
        dropped_through_ps: Option<i64>,
        renumber: &Renumber,
    ) {
        self.records_dropped += dropped;
        self.put_records_in_time_order();
        if !theirs_in_order {
            in_time_order(&mut theirs);
        }
        // What either part dropped is older than what the whole keeps.
        let through = self.records_dropped_through_ps.max(dropped_through_ps);
        let after = |records: &[AllocationRecord]| match through {
            Some(t) => records.partition_point(|r| r.time_ps <= t),
            None => 0,
        };
        let (mine_from, theirs_from) = (after(&self.records), after(&theirs));
        let mine = self.records.get(mine_from..).unwrap_or_default();
        let later = theirs.get(theirs_from..).unwrap_or_default();
        // `None` is before every time.
        let through = through.max(latest_dropped(mine, later, MAX_ALLOCATION_RECORDS));
        if let Some(through) = through {
            self.drop_records_through(through);
        }
        let kept_from = match through {
            Some(t) => theirs.partition_point(|r| r.time_ps <= t),
            None => 0,
        };
        self.records_dropped += kept_from as u64;
        let kept = theirs.get(kept_from..).unwrap_or_default();
        merge_by_time(&mut self.records, kept, renumber);
        // Up to twice the cap of records, held by the part until now.
        let bytes = heap_bytes(&theirs);
        free_later(theirs, bytes);
        // Two histories in time order, merged: in time order.
        self.records_now_in_order();
    }

    /// What a second device scanner needs to match kernels to launches on its own:
    /// the launches and the interned module names (see [`RuntimeScan::absorb_kernels`]).
    pub(super) fn kernel_part(&self) -> RuntimeScan {
        let mut part = self.with_modules_of();
        part.executions = self.executions.clone();
        part
    }

    /// Whether kernels can be matched to launches in any order: every launch names its
    /// module, so no kernel names one for it, which later kernels' matching would read.
    /// (Launches collected from a device's module line are the caller's to rule out.)
    pub(super) fn kernels_match_in_any_order(&self) -> bool {
        self.executions.iter().all(|e| e.module.is_some())
    }

    /// Adds what a [`RuntimeScan::kernel_part`] found on a device plane's later lines,
    /// as if this scan had gone on to them: launches that ran kernels, modules and
    /// programs the earlier lines did not name, kernel counts, module names first met
    /// there, and the launches a TPU's module line gave.
    pub(super) fn absorb_kernels(&mut self, later: RuntimeScan) {
        self.kernels = self.kernels.saturating_add(later.kernels);
        self.device_events = self.device_events.saturating_add(later.device_events);
        self.last_kernel_ps = self.last_kernel_ps.max(later.last_kernel_ps);
        for (mine, theirs) in self.executions.iter_mut().zip(&later.executions) {
            mine.launched_kernels |= theirs.launched_kernels;
            mine.program_id = mine.program_id.or(theirs.program_id);
            mine.module = mine.module.or(theirs.module);
        }
        for name in &later.module_names {
            self.intern_module(name);
        }
        // Planes the part read whole (a run of TPU planes): their counts come after
        // this scan's, and the first memory size stated wins.
        self.device_line_counts.extend(later.device_line_counts);
        self.device_kernel_counts.extend(later.device_kernel_counts);
        self.device_memory_bytes = self.device_memory_bytes.or(later.device_memory_bytes);
        let room = MAX_EXECUTIONS.saturating_sub(self.device_executions.len());
        self.device_executions
            .extend(later.device_executions.into_iter().take(room));
        // The part's copy of every launch kept.
        let bytes = heap_bytes(&later.executions);
        free_later(later.executions, bytes);
    }
}

impl AllocatorState {
    /// Adds the counts of the same allocator on later lines; its peak wins a tie, as
    /// later events do in one scan. A part without events of it changes nothing.
    fn absorb(&mut self, later: AllocatorState) {
        self.allocations += later.allocations;
        self.deallocations += later.deallocations;
        if later.allocations + later.deallocations == 0 {
            return;
        }
        self.lifetime_peak = later.lifetime_peak;
        if later.peak_in_use >= self.peak_in_use {
            self.peak_in_use = later.peak_in_use;
            self.peak_time_ps = later.peak_time_ps;
            self.capacity = later.capacity;
            self.fragmentation_at_peak = later.fragmentation_at_peak;
        }
    }
}

/// Of two histories in time order, the time of the latest event dropped when only the
/// `keep` latest of both are kept (with every other event of that time): what
/// [`cutoff`] finds over both, found from their ends.
fn latest_dropped(
    mine: &[AllocationRecord],
    theirs: &[AllocationRecord],
    keep: usize,
) -> Option<i64> {
    if mine.len() + theirs.len() <= keep {
        return None;
    }
    let (mut mine, mut theirs) = (mine.iter().rev().peekable(), theirs.iter().rev().peekable());
    let latest_first = std::iter::from_fn(|| match (mine.peek(), theirs.peek()) {
        (Some(a), Some(b)) if a.time_ps >= b.time_ps => mine.next(),
        (Some(_), Some(_)) | (None, _) => theirs.next(),
        (Some(_), None) => mine.next(),
    });
    // The (keep + 1)-th latest.
    latest_first.map(|r| r.time_ps).nth(keep)
}

/// Merges `theirs` (in time order, renumbered into this scan's tables on the way) into
/// `mine` (in time order), `mine` first among equal times, in place: from the back,
/// each record moves at most once, into room `mine` mostly has from its scan.
fn merge_by_time(
    mine: &mut Vec<AllocationRecord>,
    theirs: &[AllocationRecord],
    renumber: &Renumber,
) {
    let interleaved = matches!(
        (mine.last(), theirs.first()),
        (Some(last), Some(first)) if last.time_ps > first.time_ps
    );
    if !interleaved {
        mine.extend(theirs.iter().map(|&r| renumber.record(r)));
        return;
    }
    let mut i = mine.len();
    // Room for theirs, every slot of it written below.
    mine.extend_from_slice(theirs);
    // `i` records of mine and `j` of theirs are left to place, below `i + j`.
    for (j, theirs_next) in theirs.iter().enumerate().rev() {
        let theirs_next = renumber.record(*theirs_next);
        // Mine that come after it (later in time: on equal times theirs go last).
        while let Some(&m) = i.checked_sub(1).and_then(|at| mine.get(at)) {
            if m.time_ps <= theirs_next.time_ps {
                break;
            }
            if let Some(slot) = mine.get_mut(i + j) {
                *slot = m;
            }
            i -= 1;
        }
        if let Some(slot) = mine.get_mut(i + j) {
            *slot = theirs_next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::records::tests::{execution, record, scrambled};
    use super::super::records::ExecutionRecord;
    use super::*;

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

    /// Parts merged as the threads hand them over (each capped and put in time order,
    /// or not) keep the history one scan keeps, record for record: among events of one
    /// time the order they were met in, and the cut falling inside a run of equal times.
    #[test]
    fn merged_parts_keep_the_history_of_one_scan_with_equal_times() {
        let n = 3 * MAX_ALLOCATION_RECORDS + 4321;
        // Seven events a time, met out of order; `addr` tells them apart.
        let events: Vec<AllocationRecord> = scrambled(n)
            .enumerate()
            .map(|(i, t)| {
                let mut r = record(t / 7, Origin::Unknown);
                r.addr = i as u64;
                r
            })
            .collect();
        let history = |s: &RuntimeScan| {
            let kept = s
                .records
                .iter()
                .map(|r| (r.time_ps, r.addr))
                .collect::<Vec<_>>();
            (kept, s.records_dropped, s.records_dropped_through_ps)
        };
        let mut whole = RuntimeScan::default();
        events.iter().for_each(|&r| whole.keep_record(r));
        whole.finish_host();
        assert_eq!(whole.records.len() + whole.records_dropped as usize, n);

        for (cuts, sorted) in [
            (vec![n / 3], [true, true, true]),
            (vec![n / 5, n / 2], [true, false, true]),
            (vec![10, 20, n - 10], [false, true, false]),
            (vec![MAX_ALLOCATION_RECORDS], [false, false, false]),
        ] {
            let mut starts = vec![0];
            starts.extend(&cuts);
            starts.push(n);
            let mut parts = starts
                .windows(2)
                .zip(sorted.iter().cycle())
                .map(|(w, &sort)| {
                    let mut part = RuntimeScan::default();
                    events[w[0]..w[1]].iter().for_each(|&r| part.keep_record(r));
                    if sort {
                        part.finish_part();
                    }
                    part
                });
            let mut merged = parts.next().unwrap();
            parts.for_each(|part| merged.absorb(part));
            merged.finish_host();
            assert_eq!(history(&merged), history(&whole), "cut at {cuts:?}");
        }
    }

    /// Launches over the cap in both parts, each with an allocator event made inside
    /// it: merged, the parts keep the launches one scan keeps, count the same dropped,
    /// and every event still points at its own launch (or at none, its launch gone).
    #[test]
    fn merged_parts_keep_the_launches_of_one_scan() {
        let n = 3 * MAX_EXECUTIONS + 7;
        let starts: Vec<i64> = scrambled(n).map(|t| t * 10).collect();
        let scan_of = |starts: &[i64]| {
            let mut scan = RuntimeScan::default();
            for &start in starts {
                let launch = scan.keep_execution(execution(start), |_| {});
                scan.keep_record(record(
                    start + 1,
                    launch.map_or(Origin::Unknown, Origin::Execution),
                ));
            }
            scan
        };
        let launches = |s: &RuntimeScan| {
            let start_of = |o: Origin| match o {
                Origin::Execution(i) => s.executions.get(i as usize).map(|e| e.start_ps),
                _ => None,
            };
            let mut events: Vec<(i64, Option<i64>)> = s
                .records
                .iter()
                .map(|r| (r.time_ps, start_of(r.origin)))
                .collect();
            events.sort_unstable();
            let kept: Vec<i64> = s
                .executions
                .iter()
                .map(|e: &ExecutionRecord| e.start_ps)
                .collect();
            (
                kept,
                s.executions_dropped,
                s.executions_dropped_through_ps,
                events,
            )
        };
        let same_as_one_scan = |starts: &[i64], cuts: &[usize]| {
            let mut whole = scan_of(starts);
            whole.keep_latest_executions();
            whole.settle_origins();
            // Parts merged as they are, and as the threads hand them over: each
            // finished first, its launches over the cap dropped by its own thread.
            for (&cut, finished) in cuts.iter().flat_map(|c| [(c, false), (c, true)]) {
                let (mut merged, mut later) = (scan_of(&starts[..cut]), scan_of(&starts[cut..]));
                if finished {
                    merged.finish_part();
                    later.finish_part();
                }
                merged.absorb(later);
                // Compared whole, reported briefly: the lists are long.
                let same = launches(&merged) == launches(&whole);
                let dropped = (merged.executions_dropped, whole.executions_dropped);
                assert!(
                    same,
                    "cut at {cut} of {} (parts finished: {finished}): dropped {dropped:?}",
                    starts.len()
                );
            }
        };
        // Over the cap in the whole and in the parts.
        same_as_one_scan(&starts, &[1, n / 3, 2 * MAX_EXECUTIONS + 1, n - 1]);
        // The first part dropped launches, and the later one has only launches older
        // than those: one scan drops them as they come, the merge as it adds them.
        let late = 2 * MAX_EXECUTIONS;
        let mut starts: Vec<i64> = scrambled(late).map(|t| 100 + t * 10).collect();
        starts.extend([1, 2, 3]);
        same_as_one_scan(&starts, &[late]);
    }
}
