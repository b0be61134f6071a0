//! Absorbing another scanner's part: the later lines of a host plane scanned apart
//! (tables merged, indices renumbered, histories capped again), and kernel parts, the
//! later lines of a device plane matched to a copy of the launches.

use super::records::{Origin, RuntimeScan, MAX_RETRY_RECORDS};

impl RuntimeScan {
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
