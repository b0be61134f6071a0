//! The host visitor: pass one over a host plane. Event types are routed once by a
//! dense table, so most events are skipped after reading their metadata id; allocator
//! events, launches, run scopes, transfers, retries and CPU thunks are read into the
//! [`RuntimeScan`].

mod kinds;

// Fx hashing: these maps are keyed by small integers and looked up per event.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::allocations::{Allocators, MemoryStats};
use super::names::{is_user_frame, module_in_name, EventKind, KindTable};
use super::records::{CallRecord, ExecutionRecord, Origin, RuntimeScan};
use super::stats::{memory_stat_table, MemoryStat, ModuleStats, StatIds, StatSet};
use super::window::CHECKPOINT_EVERY;
use crate::capture::{Event, EventVisitor, Interest, LineInfo, Plane};

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
pub(super) struct HostVisitor<'p> {
    plane: &'p Plane,
    kinds: KindTable,
    ids: StatIds,
    run_stats: StatSet<5>,
    thunk_stats: StatSet<3>,
    memory_stats: Vec<MemoryStat>,
    pub(super) scan: RuntimeScan,
    /// What encloses the current event on its line, innermost last, with each span's end.
    stack: Vec<(i64, Span)>,
    allocators: Allocators,
    /// (transfer event, user frame enclosing it) → transfer index.
    transfer_by_metadata: HashMap<(i64, i64), u32>,
    /// Python frames that are the user's code, by metadata id.
    user_frames: HashSet<i64>,
    /// `PjitFunction(<fn>)` → interned `jit_<fn>`, by metadata id.
    jit_modules: HashMap<i64, Option<u32>>,
    /// What to do with an event, by metadata id (ids below [`DENSE_IDS`]; larger ones
    /// are read): see [`Route`].
    routes: Vec<Route>,
    /// `hlo_module` / `module_name` stats → interned module.
    module_stats: ModuleStats,
    /// Launch event type → the module its name gives.
    launch_modules: HashMap<i64, Option<u32>>,
    /// Events visited on the current line, for checkpoints.
    line_events: u32,
}

impl<'p> HostVisitor<'p> {
    pub(super) fn new(plane: &'p Plane, scan: RuntimeScan) -> Self {
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
            allocators: Allocators::default(),
            transfer_by_metadata: HashMap::default(),
            user_frames,
            jit_modules: HashMap::default(),
            routes,
            module_stats: ModuleStats::default(),
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
        if self.scan.runs.module(run).is_some() {
            return;
        }
        let module = module.and_then(|v| self.module_stats.intern(&mut self.scan, self.plane, &v));
        if let Some(m) = module {
            self.scan.runs.name_module(run, m, time);
        }
        if let Some(p) = program {
            self.scan.runs.name_program(run, p, time);
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

    fn run_id(&self, event: &Event<'_>) -> Option<i64> {
        self.contexts(event).0
    }

    /// The launch's run id (a `run_id` stat, or a kPjRt context) and its PJRT C API
    /// linkage (a kPjrtLibraryCall context), from the producer and consumer stats
    /// (`tsl/profiler/lib/context_types.h`). A context id of 0 names no context: JAX
    /// 0.10's C API client event consumes context 0 on every call
    /// (`docs/runtime-events.md`, the PJRT C API layout), and taken as a linkage it
    /// would make every launch one.
    #[inline(always)]
    fn contexts(&self, event: &Event<'_>) -> (Option<i64>, Option<i64>) {
        const PJRT: i64 = 5;
        const PJRT_LIBRARY_CALL: i64 = 14;
        let [run, p, pt, c, ct] = self.run_stats.read_i64(event);
        let of_type = |kind: i64| {
            let produced = if pt == Some(kind) { p } else { None };
            let consumed = if ct == Some(kind) { c } else { None };
            produced
                .filter(|&id| id != 0)
                .or(consumed.filter(|&id| id != 0))
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
        self.module_stats
            .intern(&mut self.scan, self.plane, &value?)
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

    /// An allocator event (see [`super::allocations`]).
    fn memory_event(&mut self, line: &LineInfo, event: &Event<'_>, is_allocation: bool) {
        let stats = MemoryStats::read(event, &self.ids, &self.memory_stats);
        let allocator = self.allocators.of(&mut self.scan, self.plane, &stats);
        let origin = self.origin();
        let time = event.start_ps(line);
        self.scan.allocator_event(
            allocator,
            &stats,
            is_allocation,
            time,
            origin,
            event.file_offset,
        );
    }
}

impl EventVisitor for HostVisitor<'_> {
    /// Host lines are told apart by what their events are, not by their names.
    fn reads_line_names(&self) -> bool {
        false
    }

    fn line_span(&mut self, line: &LineInfo, first_start_ps: i64, last_start_ps: i64) {
        if let Some(marks) = self.scan.line_marks.last_mut() {
            marks.set_span(line.ordinal, (first_start_ps, last_start_ps));
        }
    }

    #[inline]
    fn interest(&mut self, metadata_id: i64) -> Interest {
        let slot = usize::try_from(metadata_id).unwrap_or(usize::MAX);
        if self.routes.get(slot) == Some(&Route::Skip) {
            Interest::Skip
        } else {
            Interest::Read
        }
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
            EventKind::Python => self.python_frame(event, start, end),
            EventKind::JitCall => self.jit_call(event, start, end),
            EventKind::Allocation => self.memory_event(line, event, true),
            EventKind::Deallocation => self.memory_event(line, event, false),
            EventKind::Retry => self.retry(event, start),
            EventKind::Execute => self.launch(event, start, end),
            EventKind::ModuleRun => self.module_run(event, start, end),
            EventKind::RunScope => self.run_scope(event, end),
            EventKind::Linkage => self.linkage(event),
            EventKind::Transfer => self.transfer(event, end),
            EventKind::Other => {}
        }
    }
}
