//! Which host events matter, by name (capture-format.md §6). Each event-metadata id
//! is classified once per plane, so the scan does one table lookup per event.

use std::collections::HashMap;

/// What an event type means to the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// `MemoryAllocation` (BFC and TPU allocators).
    Allocation,
    /// `MemoryDeallocation`.
    Deallocation,
    /// `AllocatorRetry::AllocateRaw`: the allocator waited for memory.
    Retry,
    /// A program launch: `…LoadedExecutable::Execute…`, the CPU `ThunkExecutor::Execute`.
    Execute,
    /// An event naming the module it runs (`GpuExecutable::ExecuteThunks`,
    /// `CpuExecutable::ExecuteAsyncOnStream`), by a `module_name` stat.
    ModuleRun,
    /// Carries the run id of a launch on another thread (`EnqueueExecution`, `ExecuteHelper`).
    RunScope,
    /// A host-to-device transfer (`BufferFromHostBuffer`, `DevicePut`, …).
    Transfer,
    /// A Python frame from the Python tracer (`$file.py:12 fn`).
    Python,
    Other,
}

pub fn classify(name: &str) -> EventKind {
    match name {
        "MemoryAllocation" => return EventKind::Allocation,
        "MemoryDeallocation" => return EventKind::Deallocation,
        _ => {}
    }
    if name.starts_with('$') {
        return EventKind::Python;
    }
    if name.contains("AllocatorRetry") {
        return EventKind::Retry;
    }
    if name.contains("ExecuteThunks") || name.contains("CpuExecutable::Execute") {
        return EventKind::ModuleRun;
    }
    // The launch itself, across XLA versions. Per-device consumers (`[0] CommonPjRt…`),
    // preparation and helper events run inside it and are not launches.
    let launch = name.ends_with("LoadedExecutable::Execute")
        || name.starts_with("CommonPjRtLoadedExecutable::Execute (")
        || name.starts_with("CommonPjRtLoadedExecutable::ExecuteSharded (")
        || name.starts_with("CommonPjRtLoadedExecutable::ExecutePortable (")
        || name == "ThunkExecutor::Execute (wait for completion)"
        || name == "PJRT_LoadedExecutable_Execute";
    if launch {
        return EventKind::Execute;
    }
    if name.contains("EnqueueExecution") || name.contains("ExecuteHelper") {
        return EventKind::RunScope;
    }
    const TRANSFERS: [&str; 5] = [
        "BufferFromHostBuffer",
        "DevicePut",
        "LinearizeIntoImpl",
        "H2D Dispatch",
        "batched_device_put",
    ];
    if TRANSFERS.iter().any(|t| name.contains(t)) {
        return EventKind::Transfer;
    }
    EventKind::Other
}

/// The module an execute event names in parentheses: `CommonPjRtLoadedExecutable::Execute (jit_f)`.
pub fn module_in_name(name: &str) -> Option<&str> {
    if !name.contains("LoadedExecutable::") {
        return None;
    }
    let open = name.rfind(" (")?;
    let inner = name.get(open + 2..)?.strip_suffix(')')?;
    (!inner.is_empty()).then_some(inner)
}

/// Event kinds by metadata id, dense when ids are small.
pub struct KindTable {
    dense: Vec<EventKind>,
    sparse: HashMap<i64, EventKind>,
}

impl KindTable {
    pub fn new<'a>(names: impl Iterator<Item = (i64, &'a str)>) -> Self {
        let mut dense = Vec::new();
        let mut sparse = HashMap::new();
        for (id, name) in names {
            let kind = classify(name);
            if kind == EventKind::Other {
                continue;
            }
            match usize::try_from(id) {
                Ok(i) if i < 1 << 20 => {
                    if dense.len() <= i {
                        dense.resize(i + 1, EventKind::Other);
                    }
                    dense[i] = kind;
                }
                _ => {
                    sparse.insert(id, kind);
                }
            }
        }
        Self { dense, sparse }
    }

    #[inline]
    pub fn get(&self, id: i64) -> EventKind {
        match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(&k) => k,
            None if self.sparse.is_empty() => EventKind::Other,
            None => self.sparse.get(&id).copied().unwrap_or(EventKind::Other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_execution_events_across_xla_versions() {
        assert_eq!(
            classify("PjRtStreamExecutorLoadedExecutable::Execute"),
            EventKind::Execute
        );
        assert_eq!(
            classify("CommonPjRtLoadedExecutable::Execute (jit_f)"),
            EventKind::Execute
        );
        assert_eq!(
            classify("[0] CommonPjRtLoadedExecutable::Execute (jit_f)"),
            EventKind::Other
        );
        assert_eq!(
            classify("PjRtStreamExecutorLoadedExecutable::ExecuteHelper"),
            EventKind::RunScope
        );
        assert_eq!(
            classify("GpuExecutable::ExecuteThunks"),
            EventKind::ModuleRun
        );
        assert_eq!(
            classify("[1] GpuExecutable::ExecuteThunks"),
            EventKind::ModuleRun
        );
        assert_eq!(
            classify("TfrtTpuLoadedExecutable::Execute"),
            EventKind::Execute
        );
        assert_eq!(classify("$<unknown> append"), EventKind::Python);
        assert_eq!(
            classify("PjRtStreamExecutorClient::BufferFromHostBuffer"),
            EventKind::Transfer
        );
        assert_eq!(classify("AllocatorRetry::AllocateRaw"), EventKind::Retry);
        assert_eq!(
            module_in_name("CommonPjRtLoadedExecutable::Execute (jit_f)"),
            Some("jit_f")
        );
        assert_eq!(
            module_in_name("PjRtStreamExecutorLoadedExecutable::Execute"),
            None
        );
    }
}
