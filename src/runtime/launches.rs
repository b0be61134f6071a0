//! Launch resolution: what run ids name ([`RunIds`]); after the host planes, the
//! launch events of one launch merged into one launch (by run id or PJRT C API
//! linkage), modules learned from run ids filled in, launches put in time order; after
//! the device planes, the modules a launch's jitted call names and TPU module runs.
//! Then each launch's module label ([`ModuleLookup`], [`LaunchModule`]), the launches
//! not kept counted by label, and a final call that never launched.

use std::collections::HashMap as StdHashMap;

// Fx hashing: these maps are keyed by small integers and looked up per launch.
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

use super::labels::LaunchLabels;
use super::records::{ExecutionRecord, Origin, RuntimeScan};

/// The module and program named for each run id (by CPU thunks, or by a run scope on
/// another thread than its launch), with when each was first seen: entries older than
/// the launches kept are dropped with them.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(super) struct RunIds {
    modules: HashMap<i64, (u32, i64)>,
    programs: HashMap<i64, (u64, i64)>,
}

impl RunIds {
    pub(super) fn module(&self, run: i64) -> Option<u32> {
        self.modules.get(&run).map(|&(m, _)| m)
    }

    pub(super) fn program(&self, run: i64) -> Option<u64> {
        self.programs.get(&run).map(|&(p, _)| p)
    }

    /// Keeps the module of `run`, seen at `seen`, unless one is known already.
    pub(super) fn name_module(&mut self, run: i64, module: u32, seen: i64) {
        self.modules.entry(run).or_insert((module, seen));
    }

    /// Keeps the program of `run`, seen at `seen`, unless one is known already.
    pub(super) fn name_program(&mut self, run: i64, program: u64, seen: i64) {
        self.programs.entry(run).or_insert((program, seen));
    }

    /// A run's work starts with its launch: runs first seen by `through` go with the
    /// launches dropped through then.
    pub(super) fn forget_through(&mut self, through: i64) {
        self.modules.retain(|_, &mut (_, seen)| seen > through);
        self.programs.retain(|_, &mut (_, seen)| seen > through);
    }

    /// Adds what another scanner learned on later lines (its modules by `module`, their
    /// index here); what this one knows already stays.
    pub(super) fn absorb(&mut self, later: RunIds, module: impl Fn(u32) -> Option<u32>) {
        for (run, (m, seen)) in later.modules {
            if let Some(m) = module(m) {
                self.name_module(run, m, seen);
            }
        }
        for (run, (p, seen)) in later.programs {
            self.name_program(run, p, seen);
        }
    }
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

impl RuntimeScan {
    /// Launch events of one launch (the same run id, or the same PJRT C API linkage
    /// context) become one: the earliest holds what any of them named. Returns each
    /// launch's representative and the representative of each run id.
    fn merge_launches_of_one_run(&mut self) -> (Vec<u32>, HashMap<i64, u32>) {
        let n = self.executions.len();
        let mut groups = UnionFind::new(n);
        // Sized for every launch at once: grown as they come, the maps rehashed a dozen
        // times (tens of thousands of launches on a large capture).
        let mut by_run: HashMap<i64, u32> =
            HashMap::with_capacity_and_hasher(n, Default::default());
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
        // The earliest launch of each group represents it (the lower index on a tie),
        // by the group's root: a launch's index, so a table serves.
        let start = |k: u32| self.executions.get(k as usize).map(|e| e.start_ps);
        let mut earliest_of_root: Vec<Option<u32>> = vec![None; n];
        for i in 0..n as u32 {
            if let Some(earliest) = earliest_of_root.get_mut(groups.find(i) as usize) {
                match earliest {
                    Some(e) if start(i) >= start(*e) => {}
                    _ => *earliest = Some(i),
                }
            }
        }
        let representative: Vec<u32> = (0..n as u32)
            .map(|i| {
                let root = groups.find(i) as usize;
                earliest_of_root.get(root).copied().flatten().unwrap_or(i)
            })
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

    /// After the host planes: the histories capped, the launch events of one launch
    /// merged into one launch, modules and programs named for a run id given to its
    /// launch, and launches put in time order, with what points at them (allocation
    /// origins, waits) renumbered; what was done for a run id goes to its launch.
    pub(super) fn finish_host(&mut self) {
        self.settle_origins();
        self.keep_latest_records();
        self.keep_latest_executions();
        let (representative, by_run) = self.merge_launches_of_one_run();
        for e in &mut self.executions {
            if let Some(run) = e.run_id {
                if e.module.is_none() {
                    e.module = self.runs.module(run);
                }
                if e.program_id.is_none() {
                    e.program_id = self.runs.program(run);
                }
            }
        }
        let resolve = |i: u32| representative.get(i as usize).copied().unwrap_or(i);
        // The launches that remain (each its group's representative), by start.
        let n = self.executions.len();
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
        self.renumber_launches(remap, &by_run);
        self.put_launches_in_order(&order);
        self.put_records_in_time_order();
    }

    /// Points allocation origins and waits at the launches' new indices (`remap`),
    /// those made for a run id at its launch (`by_run`, old indices).
    fn renumber_launches(&mut self, remap: impl Fn(u32) -> u32, by_run: &HashMap<i64, u32>) {
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
                .map(&remap);
        }
    }

    /// Keeps the launches `order` lists, in that order, marking those a wait (already
    /// renumbered to its place in `order`) was in.
    fn put_launches_in_order(&mut self, order: &[u32]) {
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
        // Launches mostly come in time order: then the order only leaves some out (the
        // launch events merged into others), and the launches are kept where they lie
        // rather than copied into a new vector, whose pages would all be new.
        let increasing = order.windows(2).all(|w| w[0] < w[1]);
        if increasing
            && order
                .last()
                .is_none_or(|&l| (l as usize) < executions.len())
        {
            let mut wanted = order.iter().copied().peekable();
            let mut index = 0u32;
            executions.retain(|_| {
                let keep = wanted.next_if_eq(&index).is_some();
                index = index.wrapping_add(1);
                keep
            });
            return;
        }
        let sorted: Vec<ExecutionRecord> = order
            .iter()
            .filter_map(|&old| self.executions.get(old as usize).cloned())
            .collect();
        self.executions = sorted;
    }

    /// After the device planes: a launch nothing else named runs the module its
    /// `PjitFunction(<fn>)` call names (XLA 2024–2025 names the module only in
    /// `ExecuteThunks`, which a launch that ran out of memory never reaches); and where
    /// the host names no module at all (TPU hosts), the device's module line gives the
    /// launches instead.
    pub(super) fn finish_devices(&mut self) {
        for e in &mut self.executions {
            if e.module.is_none() {
                e.module = e.module_hint;
            }
        }
        let host_named = self.executions.iter().any(|e| e.module.is_some());
        if !host_named && !self.device_executions.is_empty() {
            self.executions = std::mem::take(&mut self.device_executions);
            self.executions.sort_by_key(|e| e.start_ps);
            // Allocation origins pointed at host launches, which are gone now.
            for r in &mut self.records {
                if matches!(r.origin, Origin::Execution(_)) {
                    r.origin = Origin::Unknown;
                }
            }
        }
    }
}

/// What the runtime part of the report needs to know about the plans.
pub(crate) struct ModuleKey<'a> {
    pub name: &'a str,
    pub program_id: u64,
    pub label: &'a str,
}

/// Every launch's label: by program id when known, else by name when the name is
/// unique among modules with plans, else the name alone ([`LaunchModule::Ambiguous`],
/// shown `name(?)`). The modules are indexed once, and each (module, program) pair is
/// looked up once: a capture with thousands of modules and a million launches stays
/// linear, and each launch holds only an index into the labels ([`LaunchLabels`]).
pub(crate) fn execution_labels(scan: &RuntimeScan, modules: &[ModuleKey<'_>]) -> LaunchLabels {
    let lookup = ModuleLookup::new(modules);
    LaunchLabels::by_key(
        scan.executions.iter().map(|e| (e.module, e.program_id)),
        |(module, program)| lookup.label(scan, module, program).map(|m| m.label()),
    )
}

/// The launches not kept (see `MAX_EXECUTIONS`), counted by label as kept ones are.
pub(crate) fn dropped_launch_labels(
    scan: &RuntimeScan,
    modules: &[ModuleKey<'_>],
) -> Vec<(Option<LaunchModule>, u64)> {
    let lookup = ModuleLookup::new(modules);
    let mut counts: Vec<(Option<LaunchModule>, u64)> = scan
        .dropped_launches()
        .map(|((module, program_id), count)| (lookup.label(scan, module, program_id), count))
        .collect();
    // In the order of the labels shown, so that a name's repeats are neighbours.
    counts.sort_by_cached_key(|(m, count)| (m.as_ref().map(LaunchModule::label), *count));
    counts
}

/// The capture's last call of a jitted function, when no launch of its module started
/// at or after it (see [`super::records::CallRecord`]): its label and start. A name several
/// modules share resolves to the one of them that never launched, if only one did not.
pub(crate) fn unfinished_call(
    scan: &RuntimeScan,
    modules: &[ModuleKey<'_>],
    labels: &LaunchLabels,
) -> Option<(String, i64)> {
    let call = scan.last_call?;
    let lookup = ModuleLookup::new(modules);
    let label = match lookup.label(scan, call.module, None)? {
        LaunchModule::Known(label) => label,
        LaunchModule::Ambiguous(name) => {
            let mut never: Vec<&ModuleKey<'_>> = modules
                .iter()
                .filter(|m| m.name == name && !labels.any_is(m.label))
                .collect();
            match (never.pop(), never.is_empty()) {
                (Some(only), true) => only.label.to_owned(),
                _ => return None,
            }
        }
    };
    let ran_after = labels
        .launches_of(Some(&label))
        .filter_map(|i| scan.executions.get(i))
        .any(|e| e.start_ps >= call.start_ps);
    (!ran_after).then_some((label, call.start_ps))
}

/// The first module (in order) for each key a launch's label is looked up by.
struct ModuleLookup<'m> {
    by_program: StdHashMap<u64, &'m str>,
    by_program_name: StdHashMap<(u64, &'m str), &'m str>,
    by_label: StdHashMap<&'m str, &'m str>,
    /// Name → (first label, how many modules have the name).
    by_name: StdHashMap<&'m str, (&'m str, usize)>,
}

impl<'m> ModuleLookup<'m> {
    fn new(modules: &'m [ModuleKey<'m>]) -> Self {
        let mut lookup = ModuleLookup {
            by_program: StdHashMap::new(),
            by_program_name: StdHashMap::new(),
            by_label: StdHashMap::new(),
            by_name: StdHashMap::new(),
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
pub(crate) enum LaunchModule {
    /// A module with a plan, by label.
    Known(String),
    /// A name several modules share (or none has), without the program id that would
    /// tell which.
    Ambiguous(String),
}

impl LaunchModule {
    /// The label the report shows: `jit_step(12)`, or `jit_step(?)` when ambiguous.
    pub(crate) fn label(&self) -> String {
        match self {
            LaunchModule::Known(label) => label.clone(),
            LaunchModule::Ambiguous(name) => format!("{name}(?)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::records::tests::{execution, record};
    use super::*;

    /// After the host planes, launches are in time order, the events of one launch (one
    /// run id) merged into its earliest, and each allocation still points at the
    /// launch it was made in: whether the launches arrived in time order (kept where
    /// they lie) or not (copied into their order).
    #[test]
    fn launches_end_in_time_order_with_what_points_at_them() {
        let starts: [i64; 6] = [10, 20, 30, 40, 50, 60];
        for arrival in [[0, 1, 2, 3, 4, 5], [3, 0, 5, 1, 4, 2]] {
            let mut scan = RuntimeScan::default();
            for k in arrival {
                let mut e = execution(starts[k]);
                // The events at 20 and 50 belong to the launches at 10 and 40.
                e.run_id = match starts[k] {
                    20 => Some(10),
                    50 => Some(40),
                    start => Some(start),
                };
                let index = scan.keep_execution(e, |_| {}).expect("kept");
                scan.keep_record(record(starts[k] + 1, Origin::Execution(index)));
            }
            scan.finish_host();
            let kept: Vec<i64> = scan.executions.iter().map(|e| e.start_ps).collect();
            assert_eq!(kept, [10, 30, 40, 60], "{arrival:?}");
            let made_in: Vec<(i64, Option<i64>)> = (scan.records.iter())
                .map(|r| {
                    let launch = match r.origin {
                        Origin::Execution(i) => scan.executions.get(i as usize),
                        _ => None,
                    };
                    (r.time_ps, launch.map(|e| e.start_ps))
                })
                .collect();
            let expected = [
                (11, Some(10)),
                (21, Some(10)),
                (31, Some(30)),
                (41, Some(40)),
                (51, Some(40)),
                (61, Some(60)),
            ];
            assert_eq!(made_in, expected, "{arrival:?}");
        }
    }
}
