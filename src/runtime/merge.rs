//! Absorbing another scanner's part: the later lines of a host plane scanned apart
//! (tables merged, indices renumbered, histories capped again), and kernel parts, the
//! later lines of a device plane matched to a copy of the launches.

use super::records::{
    cutoff, AllocationRecord, AllocatorState, ExecutionRecord, Origin, RetryRecord, RuntimeScan,
    MAX_ALLOCATION_RECORDS, MAX_EXECUTIONS, MAX_RETRY_RECORDS,
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
    pub(super) fn absorb(&mut self, mut other: RuntimeScan) {
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
        self.absorb_records(
            other.records,
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
            .extend(other.executions.into_iter().map(|e| renumber.execution(e)));
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
        // Records and waits are in: dropping launches renumbers what points at them.
        if let Some(through) = executions_through {
            self.drop_executions_through(through);
        }
        self.keep_latest_executions();
        self.host_lines += other.host_lines;
        self.host_events += other.host_events;
        self.runs.absorb(other.runs, |m| renumber.module(Some(m)));
        // Each scanner filled the marks of the lines it walked: the other walked later
        // lines of this scan's last plane(s).
        let skip = self.line_marks.len().saturating_sub(other.line_marks.len());
        for (mine, theirs) in self.line_marks.iter_mut().skip(skip).zip(other.line_marks) {
            mine.absorb(theirs);
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
    /// The merged history's cut is found from both parts' times before anything moves,
    /// so that only what is kept is moved, into room this part's history mostly has.
    fn absorb_records(
        &mut self,
        theirs: Vec<AllocationRecord>,
        dropped: u64,
        dropped_through_ps: Option<i64>,
        renumber: &Renumber,
    ) {
        self.records_dropped += dropped;
        // What either part dropped is older than what the whole keeps.
        let through = self.records_dropped_through_ps.max(dropped_through_ps);
        let after = |r: &&AllocationRecord| through.is_none_or(|t| r.time_ps > t);
        let times: Vec<i64> = self
            .records
            .iter()
            .chain(&theirs)
            .filter(after)
            .map(|r| r.time_ps)
            .collect();
        // `None` is before every time.
        let through = through.max(cutoff(times.into_iter(), MAX_ALLOCATION_RECORDS));
        if let Some(through) = through {
            self.drop_records_through(through);
        }
        let later = theirs.len();
        let before = self.records.len();
        let kept = theirs
            .into_iter()
            .filter(|r| through.is_none_or(|t| r.time_ps > t));
        self.records.extend(kept.map(|r| renumber.record(r)));
        let added = self.records.len() - before;
        self.records_dropped += (later - added) as u64;
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

    /// A part scanned from a plane's line `lines` on, with its lines numbered from 0,
    /// numbered as from the plane's start (see `Plane::visit_segment`).
    pub(super) fn numbered_from_line(mut self, lines: usize) -> RuntimeScan {
        if let Some(marks) = self.line_marks.pop() {
            self.line_marks.push(marks.numbered_from(lines));
        }
        self
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

#[cfg(test)]
mod tests {
    use super::super::records::tests::execution;
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
}
