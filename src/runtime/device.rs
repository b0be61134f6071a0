//! The device visitor: pass one over a device plane. Kernels are matched to the host
//! launch they ran for (the latest launch of their module started before them); a
//! TPU's module runs place its work on launches by run id or queue order, and are the
//! launches themselves when the host names none.

// Fx hashing: these maps are keyed by small integers and looked up per event.
use rustc_hash::FxHashMap as HashMap;

use super::records::{ExecutionRecord, RuntimeScan, MAX_EXECUTIONS};
use super::stats::{ModuleStats, StatIds, StatSet};
use crate::capture::{Event, EventVisitor, Interest, LineInfo, Plane, StatRef};

/// The module and program an event type names.
type ModuleOfType = (Option<u32>, Option<u64>);

/// Whether an event type's own stats name a module or program (see `names_module`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TypeNames {
    Unread,
    Module,
    Nothing,
}

/// Event metadata ids below this are cached in a table, the others hashed.
const DENSE_METADATA_IDS: usize = 1 << 16;

/// Visits a device plane: kernels (events with `hlo_module`/`program_id`) and, on TPU,
/// the `XLA Modules` line.
pub(super) struct DeviceVisitor<'p, 's> {
    plane: &'p Plane,
    ids: StatIds,
    kernel_stats: StatSet<2>,
    scan: &'s mut RuntimeScan,
    /// Launch indices sorted by start, for matching kernels to launches.
    order: &'s [u32],
    on_modules_line: bool,
    collect_device_executions: bool,
    /// Interned modules by the `hlo_module` stats that name them.
    module_stats: ModuleStats,
    /// Module and program an event type's own stats name, by metadata id: dense for
    /// the small ids encoders give (asked once per op on TPU, where a hash lookup
    /// cost more than the rest of counting it), hashed past them.
    by_metadata: Vec<Option<ModuleOfType>>,
    /// Whether a type's own stats name a module or program, by metadata id, beside
    /// `by_metadata`: one byte, all that counting an op asks (see
    /// [`DeviceVisitor::counted_by_type`]).
    names_module: Vec<TypeNames>,
    by_large_metadata: HashMap<i64, ModuleOfType>,
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
    /// Whether an event is counted by its type alone now (see
    /// [`DeviceVisitor::counted_by_type`]): what that asks of the visitor's state,
    /// kept as it changes instead of asked again for each op.
    counts_by_type: bool,
    /// Where to hand a line that only counts ops instead of reading it (see
    /// [`DeviceVisitor::deferring`]).
    defer: Option<&'s (dyn Fn(&LineInfo) + Sync)>,
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
    pub(super) fn new(
        plane: &'p Plane,
        scan: &'s mut RuntimeScan,
        order: &'s [u32],
        collect_device_executions: bool,
    ) -> Self {
        Self::with_ids(
            plane,
            StatIds::resolve(plane),
            scan,
            order,
            collect_device_executions,
        )
    }

    fn with_ids(
        plane: &'p Plane,
        ids: StatIds,
        scan: &'s mut RuntimeScan,
        order: &'s [u32],
        collect_device_executions: bool,
    ) -> Self {
        Self {
            plane,
            kernel_stats: ids.kernel_stats(),
            ids,
            scan,
            order,
            on_modules_line: false,
            collect_device_executions,
            module_stats: ModuleStats::default(),
            by_metadata: Vec::new(),
            names_module: Vec::new(),
            by_large_metadata: HashMap::default(),
            last_match: None,
            last_search: None,
            module_runs: HashMap::default(),
            launch_by_run: None,
            queue_cursor: HashMap::default(),
            module_runs_matched: false,
            counts_by_type: false,
            defer: None,
        }
    }

    /// A visitor that hands each line that can only count ops to `defer` instead of
    /// reading it: once this device's module runs have placed its work, on a plane
    /// without an `hlo_module` stat (TPU), a line off the module line only counts its
    /// ops (see [`DeviceVisitor::counted_by_type`]; no op names a module to intern,
    /// none is attached to a launch), which commutes with everything else the walk
    /// does, so another thread can count it ([`DeviceVisitor::counting`]).
    pub(super) fn deferring(mut self, defer: &'s (dyn Fn(&LineInfo) + Sync)) -> Self {
        self.defer = Some(defer);
        self
    }

    /// A visitor for lines handed over by a [`DeviceVisitor::deferring`] walk: it
    /// counts their ops into `scan` as that walk would have, its module runs matched.
    /// `ids` are the plane's ([`StatIds::resolve`]), resolved once for its lines.
    pub(super) fn counting(plane: &'p Plane, ids: StatIds, scan: &'s mut RuntimeScan) -> Self {
        let mut visitor = Self::with_ids(plane, ids, scan, &[], false);
        visitor.note_module_runs_matched();
        visitor
    }

    /// Whether lines off the module line only count ops now (see
    /// [`DeviceVisitor::deferring`]).
    fn lines_only_count(&self) -> bool {
        self.module_runs_matched && self.ids.hlo_module.is_none()
    }

    /// Whether the plane has no `hlo_module` and no `program_id` stat (TensorFlow's
    /// GPU planes): then neither an event nor its type names a module or a program, so
    /// off the module line every event is passed over ([`EventVisitor::event`] ends at
    /// once for work that names neither) and its lines need not be read at all.
    fn names_no_work(&self) -> bool {
        self.ids.hlo_module.is_none() && self.ids.program_id.is_none()
    }

    fn module_of(&mut self, value: &StatRef<'_>) -> Option<u32> {
        self.module_stats.intern(self.scan, self.plane, value)
    }

    fn module_and_program(&mut self, event: &Event<'_>) -> (Option<u32>, Option<u64>) {
        let [module, program] = self.kernel_stats.read(event);
        let mut program = program.and_then(|v| v.as_u64());
        let mut module = module.and_then(|v| self.module_of(&v));
        if module.is_none() {
            let (m, p) = self.module_and_program_of_type(event.metadata_id);
            module = m;
            program = program.or(p);
        }
        (module, program)
    }

    /// What an event type's own stats name, read once per type.
    #[inline]
    fn module_and_program_of_type(&mut self, metadata_id: i64) -> ModuleOfType {
        let slot = usize::try_from(metadata_id).unwrap_or(usize::MAX);
        match self.by_metadata.get(slot) {
            Some(&Some(known)) => known,
            _ => self.learn_module_and_program_of_type(metadata_id),
        }
    }

    /// Reads what an event type names and keeps it (see `by_metadata`).
    #[cold]
    fn learn_module_and_program_of_type(&mut self, metadata_id: i64) -> ModuleOfType {
        let dense = usize::try_from(metadata_id)
            .ok()
            .filter(|&i| i < DENSE_METADATA_IDS);
        let Some(slot) = dense else {
            if let Some(&known) = self.by_large_metadata.get(&metadata_id) {
                return known;
            }
            let known = self.metadata_module_and_program(metadata_id);
            self.by_large_metadata.insert(metadata_id, known);
            return known;
        };
        let known = self.metadata_module_and_program(metadata_id);
        if self.by_metadata.len() <= slot {
            self.by_metadata.resize(slot + 1, None);
            self.names_module.resize(slot + 1, TypeNames::Unread);
        }
        if let Some(cached) = self.by_metadata.get_mut(slot) {
            *cached = Some(known);
        }
        if let Some(names) = self.names_module.get_mut(slot) {
            *names = match known {
                (None, None) => TypeNames::Nothing,
                _ => TypeNames::Module,
            };
        }
        known
    }

    /// Whether an event of type `metadata_id` is a kernel known from its type alone,
    /// when counting it is all that is asked: once this device's module runs have
    /// placed its work, a kernel off the module line is only counted; and on a plane
    /// without an `hlo_module` stat (TPU) an event's own stats can add a program but
    /// never take away the module or program its type names. False sends the event
    /// the long way, its stats read.
    fn counted_by_type(&mut self, metadata_id: i64) -> bool {
        if !self.counts_by_type {
            return false;
        }
        let slot = usize::try_from(metadata_id).unwrap_or(usize::MAX);
        match self.names_module.get(slot) {
            Some(TypeNames::Module) => true,
            Some(TypeNames::Nothing) => false,
            _ => {
                let (module, program) = self.module_and_program_of_type(metadata_id);
                module.is_some() || program.is_some()
            }
        }
    }

    /// Notes what [`DeviceVisitor::counted_by_type`] asks of the visitor's state, after
    /// it changed (the line, or module runs matched).
    fn note_counting(&mut self) {
        self.counts_by_type = self.lines_only_count() && !self.on_modules_line;
    }

    /// Module runs placed this device's work on launches: from now on, lines off the
    /// module line only count ops.
    fn note_module_runs_matched(&mut self) {
        self.module_runs_matched = true;
        self.note_counting();
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
        self.note_counting();
        if !self.on_modules_line && self.names_no_work() {
            return false;
        }
        if let Some(defer) = self.defer {
            if !self.on_modules_line && self.lines_only_count() {
                defer(line);
                return false;
            }
        }
        true
    }

    #[inline]
    fn interest(&mut self, metadata_id: i64) -> Interest {
        if self.counted_by_type(metadata_id) {
            Interest::Count
        } else {
            Interest::Read
        }
    }

    fn count(&mut self, start_ps: i64) {
        self.scan.kernels += 1;
        self.saw_device_activity(start_ps);
    }

    fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
        if self.counted_by_type(event.metadata_id) {
            self.count(event.start_ps(line));
            return;
        }
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
        // `None` is before every time. Compared, not `max`ed: the latest start, asked
        // of every op on TPU, cost more as an `Option` maximum.
        if Some(start) > self.scan.last_kernel_ps {
            self.scan.last_kernel_ps = Some(start);
        }
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
            self.note_module_runs_matched();
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
mod tests;
