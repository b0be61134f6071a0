//! Keeping launches: the latest up to the cap ([`MAX_EXECUTIONS`]), those dropped
//! counted by module, and what points at them renumbered. While a host plane is
//! scanned, allocator events point at their launch by number ([`Origin::Launch`]),
//! which dropping older launches leaves as it is; [`RuntimeScan::settle_origins`]
//! turns numbers into indices before anything reads the history.

use super::{cutoff, ExecutionRecord, LaunchKey, Origin, RuntimeScan, MAX_EXECUTIONS};
use crate::runtime::launches::RunIds;

impl RuntimeScan {
    /// Keeps a new launch unless it starts before the launches kept; returns its index.
    /// Once twice the cap is held the older half is dropped: `remap` is then called
    /// with each old index's new one (`None` for dropped launches), for the indices
    /// the caller holds.
    pub(in crate::runtime) fn keep_execution(
        &mut self,
        e: ExecutionRecord,
        remap: impl FnOnce(&dyn Fn(u32) -> Option<u32>),
    ) -> Option<u32> {
        if self
            .executions_dropped_through_ps
            .is_some_and(|t| e.start_ps <= t)
        {
            self.count_dropped_launch(launch_key(&self.runs, &e));
            return None;
        }
        let mut index = Some(self.executions.len() as u32);
        if self.launch_numbers.len() != self.executions.len() {
            // Numbering starts again after `settle_origins`, past any index held.
            self.launch_numbers = (0..self.executions.len() as u64).collect();
            self.next_launch_number = self.executions.len() as u64;
        }
        self.launch_numbers.push(self.next_launch_number);
        self.next_launch_number = self.next_launch_number.wrapping_add(1);
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
    pub(in crate::runtime) fn keep_latest_executions(&mut self) -> Option<Vec<Option<u32>>> {
        // Launches are often in time order (most launch events are on one line).
        let in_order = self.executions.is_sorted_by_key(|e| e.start_ps);
        let through = cutoff(&self.executions, |e| e.start_ps, MAX_EXECUTIONS, in_order)?;
        Some(self.drop_executions_through(through))
    }

    /// Counts a launch that is not kept, under the module and program known for it
    /// ([`launch_key`]).
    fn count_dropped_launch(&mut self, key: LaunchKey) {
        self.executions_dropped += 1;
        self.add_dropped_launches(key, 1);
    }

    /// An origin as a record keeps it: a launch by its number while launches are
    /// numbered (see `launch_numbers`), else by index.
    pub(super) fn kept_origin(&mut self, origin: Origin) -> Origin {
        let Origin::Execution(index) = origin else {
            return origin;
        };
        match self.launch_numbers.get(index as usize) {
            Some(&number) if self.launch_numbers.len() == self.executions.len() => {
                Origin::Launch(number)
            }
            _ => {
                self.indexed_origins = true;
                origin
            }
        }
    }

    /// Points every record made inside a launch at its index ([`Origin::Execution`]),
    /// or at none when its launch was dropped; done before anything reads the history
    /// or moves it to another scan. Records come in time order and in runs inside one
    /// launch, so each number is looked for where the last one was found first.
    pub(in crate::runtime) fn settle_origins(&mut self) {
        let numbers = std::mem::take(&mut self.launch_numbers);
        let mut last = 0usize;
        let mut indexed = self.indexed_origins;
        for r in &mut self.records {
            let Origin::Launch(number) = r.origin else {
                indexed |= matches!(r.origin, Origin::Execution(_));
                continue;
            };
            if numbers.get(last) != Some(&number) {
                last = numbers.partition_point(|&n| n < number);
            }
            r.origin = match numbers.get(last) {
                Some(&n) if n == number => {
                    indexed = true;
                    Origin::Execution(last as u32)
                }
                _ => Origin::Unknown,
            };
        }
        self.indexed_origins = indexed;
    }

    /// Drops the launches starting at or before `through`, renumbering what points at
    /// launches; returns the new index of each old one.
    pub(in crate::runtime) fn drop_executions_through(&mut self, through: i64) -> Vec<Option<u32>> {
        // Counted as they are met, without a list of keys in between: launches in a
        // row mostly share one, so each run of a key is added once (the `None` after
        // the last launch ends the last run).
        let (runs, counts) = (&self.runs, &mut self.dropped_launches);
        let keys = self
            .executions
            .iter()
            .filter(|e| e.start_ps <= through)
            .map(|e| Some(launch_key(runs, e)))
            .chain([None]);
        let mut run_of_key: Option<(LaunchKey, u64)> = None;
        for key in keys {
            match (&mut run_of_key, key) {
                (Some((k, n)), Some(key)) if *k == key => *n += 1,
                (_, key) => {
                    if let Some((k, n)) = std::mem::replace(&mut run_of_key, key.map(|k| (k, 1))) {
                        *counts.entry(k).or_insert(0) += n;
                        self.executions_dropped += n;
                    }
                }
            }
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
        if self.launch_numbers.len() == self.executions.len() {
            let mut kept = new_index.iter().map(Option::is_some);
            self.launch_numbers.retain(|_| kept.next().unwrap_or(false));
        } else {
            self.launch_numbers.clear();
        }
        self.executions.retain(|e| e.start_ps > through);
        self.executions_dropped_through_ps = self.executions_dropped_through_ps.max(Some(through));
        let remap = |i: u32| new_index.get(i as usize).copied().flatten();
        // Records pointing by number (nearly all while a plane is scanned) keep theirs.
        if self.indexed_origins {
            for r in &mut self.records {
                if let Origin::Execution(i) = r.origin {
                    r.origin = remap(i).map_or(Origin::Unknown, Origin::Execution);
                }
            }
        }
        for r in &mut self.retries {
            r.execution = r.execution.and_then(remap);
        }
        // A run's work starts with its launch: runs seen by then were dropped with it.
        self.runs.forget_through(through);
        new_index
    }
}

/// The module and program a launch is counted under when it is not kept: its own, else
/// what its run id names.
fn launch_key(runs: &RunIds, e: &ExecutionRecord) -> LaunchKey {
    let run = e.run_id;
    let module = e
        .module
        .or_else(|| run.and_then(|r| runs.module(r)))
        .or(e.module_hint);
    let program = e.program_id.or_else(|| run.and_then(|r| runs.program(r)));
    (module, program)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{execution, record, scrambled};
    use super::super::RetryRecord;
    use super::*;

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
        for (k, start) in scrambled(n).enumerate() {
            if k == n / 2 {
                // A part finished and scanned into again (its records then point at
                // launches by index, which later drops renumber; new ones by number).
                scan.settle_origins();
            }
            let start = start * 10;
            let index = scan.keep_execution(execution(start), |remap| {
                for (_, h) in held.iter_mut() {
                    *h = h.and_then(remap);
                }
            });
            held.push((start, index));
            if let Some(i) = index {
                // An allocation inside the launch, and a wait.
                scan.keep_record(record(start + 1, Origin::Execution(i)));
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
        scan.settle_origins();
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
