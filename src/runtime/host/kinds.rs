//! What each kind of host event adds to the scan: Python frames, jit calls, retries,
//! launches, module runs, run scopes, linkage and transfers.

use super::{HostVisitor, Route, Span};
use crate::capture::Event;
use crate::runtime::names::jit_module_name;
use crate::runtime::records::{
    ExecutionRecord, Origin, RetryRecord, RetryTotals, MAX_RETRY_RECORDS,
};

/// What each kind of host event does to the scan.
impl HostVisitor<'_> {
    /// A Python frame: only the context of what it encloses.
    pub(super) fn python_frame(&mut self, event: &Event<'_>, start: i64, end: i64) {
        if end > start {
            // A frame of a dense id reaches here only when routed to be read, which
            // only the user's frames are: the set is asked only for larger ids.
            let route = usize::try_from(event.metadata_id)
                .ok()
                .and_then(|slot| self.routes.get(slot));
            let user = match route {
                Some(route) => *route == Route::Read,
                None => self.user_frames.contains(&event.metadata_id),
            };
            self.stack
                .push((end, Span::Python(event.metadata_id, user)));
        }
    }

    /// A call of a jitted function (`PjitFunction(<fn>)`): the module `jit_<fn>` its
    /// launch runs when nothing else names it.
    pub(super) fn jit_call(&mut self, event: &Event<'_>, start: i64, end: i64) {
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

    /// An `AllocatorRetry` wait: counted and timed, and kept (up to a cap) with the
    /// launch or run it waited in.
    pub(super) fn retry(&mut self, event: &Event<'_>, start: i64) {
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

    /// A launch event (`…LoadedExecutable::Execute`): a new launch, or what the launch
    /// it is wrapped in on the same thread names (the PJRT C API around PjRt's own
    /// launch is the same launch).
    pub(super) fn launch(&mut self, event: &Event<'_>, start: i64, end: i64) {
        self.call_reached_runtime();
        let (run_id, link) = self.contexts(event);
        let module = self.launch_module(event.metadata_id);
        if let Some(outer) = self.innermost_execution() {
            if let Some(e) = self.scan.executions.get_mut(outer as usize) {
                e.run_id = e.run_id.or(run_id);
                e.module = e.module.or(module);
                e.link = e.link.or(link);
            }
            return;
        }
        let module_hint = self.jit_hint();
        self.push_execution(ExecutionRecord {
            run_id,
            module,
            module_hint,
            link,
            ..ExecutionRecord::spanning(start, end)
        });
    }

    /// An event that names the module it runs (`ExecuteThunks`): the module of the
    /// launch or run it is inside, or a launch of its own (CPU thunks).
    pub(super) fn module_run(&mut self, event: &Event<'_>, start: i64, end: i64) {
        let Some(module) = self.module_stat(event) else {
            return;
        };
        let inside = self
            .stack
            .iter()
            .rev()
            .find(|(_, s)| matches!(s, Span::Execution(_) | Span::Run(_)));
        match inside {
            Some(&(_, Span::Execution(i))) => {
                if let Some(e) = self.scan.executions.get_mut(i as usize) {
                    e.module.get_or_insert(module);
                }
            }
            Some(&(_, Span::Run(run))) => self.run_names_module(run, module, start),
            _ => {
                // A launch seen only through the module it runs (CPU thunks).
                let run_id = self.run_id(event);
                self.push_execution(ExecutionRecord {
                    run_id,
                    module: Some(module),
                    ..ExecutionRecord::spanning(start, end)
                });
            }
        }
    }

    /// A run scope names `module`: a run scope inside its own launch (PjRt's `Execute`
    /// around `EnqueueExecution`) names that launch's module; a run scope elsewhere (a
    /// worker thread) names it for whichever launch has the run id, found when launches
    /// are resolved.
    fn run_names_module(&mut self, run: i64, module: u32, start: i64) {
        let launch = self
            .innermost_execution()
            .and_then(|i| self.scan.executions.get_mut(i as usize))
            .filter(|e| e.run_id == Some(run));
        match launch {
            Some(e) => {
                e.module.get_or_insert(module);
            }
            None => {
                self.scan.runs.name_module(run, module, start);
            }
        }
    }

    /// A run scope (`EnqueueExecution`, `ExecuteHelper`): what it encloses is for the
    /// launch with its run id.
    pub(super) fn run_scope(&mut self, event: &Event<'_>, end: i64) {
        self.call_reached_runtime();
        if let Some(run) = self.run_id(event) {
            self.stack.push((end, Span::Run(run)));
        }
    }

    /// The caller's half of a C API launch: the plugin's launch event on another line
    /// consumes the same context.
    ///
    /// Its stats are read only when a launch encloses it that has no linkage yet: in
    /// the usual layout the linkage comes just before the launch, enclosing nothing.
    pub(super) fn linkage(&mut self, event: &Event<'_>) {
        let Some(outer) = self.innermost_execution() else {
            return;
        };
        let outer = outer as usize;
        let unlinked = self
            .scan
            .executions
            .get(outer)
            .is_some_and(|e| e.link.is_none());
        if unlinked {
            let (_, link) = self.contexts(event);
            if let Some(e) = self.scan.executions.get_mut(outer) {
                e.link = link;
            }
        }
    }

    /// A host-to-device transfer, known by its event and the user's frame around it.
    pub(super) fn transfer(&mut self, event: &Event<'_>, end: i64) {
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
                let i = self.scan.transfers.len() as u32;
                let named = self.transfer_named(event.metadata_id, frame);
                self.scan.transfers.push(named);
                self.transfer_by_metadata.insert(key, i);
                i
            }
        };
        self.stack.push((end, Span::Transfer(index)));
    }

    /// A transfer's event name and the user's frame around it, if any (`frame` 0).
    fn transfer_named(&self, metadata_id: i64, frame: i64) -> (String, Option<String>) {
        let name = self
            .plane
            .event_metadata
            .get(&metadata_id)
            .map(|m| m.name.clone())
            .unwrap_or_default();
        let frame = match self.plane.event_metadata.get(&frame) {
            Some(f) if frame != 0 => Some(f.name.clone()),
            _ => None,
        };
        (name, frame)
    }
}
