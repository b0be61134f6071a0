//! Which host events matter, by name (the event names across XLA versions are listed
//! in `docs/runtime-events.md`, host events). Each event-metadata id
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
    /// jaxlib's `PjitFunction(<fn>)`: the Python call of a jitted function. Its module
    /// is `jit_<fn>` when no other event names it (a launch that failed before
    /// `ExecuteThunks` on XLA 2024–2025 names nothing else).
    JitCall,
    /// The caller's half of a PJRT C API call (`PJRT_LoadedExecutable_Execute linkage`):
    /// its producer context (type 14, kPjrtLibraryCall) is the consumer context of the
    /// plugin's own event for the same call, on another line.
    Linkage,
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
    if name.starts_with("PjitFunction(") {
        return EventKind::JitCall;
    }
    if name.ends_with(" linkage") {
        return EventKind::Linkage;
    }
    if name.contains("AllocatorRetry") {
        return EventKind::Retry;
    }
    // TFRT's CPU client (jaxlib before the thunk runtime, Reactant on CPU) launches in
    // `TfrtCpuExecutable::ExecuteSharded`, which names no module: not the classic
    // runtime's `CpuExecutable::Execute…`, which does.
    if let Some(method) = name.strip_prefix("TfrtCpuExecutable::") {
        return match method {
            "ExecuteSharded" | "ExecutePortable" => EventKind::Execute,
            "ExecuteHelper" => EventKind::RunScope,
            _ => EventKind::Other,
        };
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
    // Only PjRt's launches name their executable so; `ThunkExecutor::Execute (wait for
    // completion)` does not.
    if !name.contains("LoadedExecutable::") {
        return None;
    }
    let open = name.rfind(" (")?;
    let inner = name.get(open + 2..)?.strip_suffix(')')?;
    (!inner.is_empty()).then_some(inner)
}

/// The module name JAX gives `jax.jit(fn)`: `jit_<fn>`, with characters XLA does not
/// keep in module names replaced by `_` (`<lambda>` → `jit__lambda_`). jaxlib names the
/// call `PjitFunction(<fn>)` up to JAX 0.8 and `PjitFunction(jit(<fn>))` since.
pub fn jit_module_name(event_name: &str) -> Option<String> {
    let inner = event_name
        .strip_prefix("PjitFunction(")?
        .strip_suffix(')')?;
    let inner = inner
        .strip_prefix("jit(")
        .and_then(|i| i.strip_suffix(')'))
        .unwrap_or(inner);
    if inner.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(inner.len() + 4);
    out.push_str("jit_");
    for c in inner.chars() {
        out.push(
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                c
            } else {
                '_'
            },
        );
    }
    Some(out)
}

/// Files of library Python frames: JAX's own (and the C methods the tracer names by
/// module), NumPy's and the standard library's, so that a transfer is attributed to the
/// user's frame that asked for it. The tracer names a frame by its file's base name
/// only, so the list holds base names seen in real captures and their neighbours in
/// the same packages (see docs/runtime-events.md, "Python frames").
const LIBRARY_FRAMES: &[&str] = &[
    // JAX
    "abstract_arrays.py:",
    "ad.py:",
    "ad_util.py:",
    "api.py:",
    "api_util.py:",
    "array.py:",
    "array_creation.py:",
    "array_methods.py:",
    "basearray.py:",
    "batching.py:",
    "compiler.py:",
    "config.py:",
    "core.py:",
    "custom_derivatives.py:",
    "deprecations.py:",
    "dispatch.py:",
    "dtypes.py:",
    "functions.py:",
    "lax.py:",
    "lax_numpy.py:",
    "layout.py:",
    "linear_util.py:",
    "literals.py:",
    "mesh.py:",
    "mlir.py:",
    "named_sharding.py:",
    "numpy.py:",
    "op_shardings.py:",
    "partial_eval.py:",
    "pjit.py:",
    "profiler.py:",
    "pxla.py:",
    "reductions.py:",
    "scalar_types.py:",
    "sharding.py:",
    "sharding_impls.py:",
    "source_info_util.py:",
    "stages.py:",
    "traceback_util.py:",
    "tree_util.py:",
    "ufunc_api.py:",
    "ufuncs.py:",
    "util.py:",
    "xla.py:",
    "xla_bridge.py:",
    // NumPy
    "fromnumeric.py:",
    "numeric.py:",
    "_methods.py:",
    "shape_base.py:",
    // The standard library (and package initialisers, where no user code lives)
    "__init__.py:",
    "_collections_abc.py:",
    "abc.py:",
    "ast.py:",
    "contextlib.py:",
    "copy.py:",
    "dataclasses.py:",
    "enum.py:",
    "functools.py:",
    "inspect.py:",
    "linecache.py:",
    "textwrap.py:",
    "threading.py:",
    "tokenize.py:",
    "traceback.py:",
    "typing.py:",
    "warnings.py:",
    "weakref.py:",
];

/// Whether a Python tracer frame (`$file.py:12 fn`) is the user's code rather than
/// JAX's, the standard library's, or a C method (`$builtins isinstance`, `$<unknown> append`).
pub fn is_user_frame(name: &str) -> bool {
    let Some(frame) = name.strip_prefix('$') else {
        return false;
    };
    let file = frame.split(' ').next().unwrap_or("");
    if !file.contains(".py:") {
        return false;
    }
    !LIBRARY_FRAMES.iter().any(|l| file.starts_with(l))
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
        assert_eq!(
            classify("TfrtCpuExecutable::ExecuteSharded"),
            EventKind::Execute
        );
        assert_eq!(
            classify("TfrtCpuExecutable::ExecuteHelper"),
            EventKind::RunScope
        );
        assert_eq!(classify("$<unknown> append"), EventKind::Python);
        assert_eq!(
            classify("PjRtStreamExecutorClient::BufferFromHostBuffer"),
            EventKind::Transfer
        );
        assert_eq!(classify("AllocatorRetry::AllocateRaw"), EventKind::Retry);
        assert_eq!(classify("PjitFunction(train_step)"), EventKind::JitCall);
        assert_eq!(
            classify("CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice"),
            EventKind::RunScope
        );
        assert_eq!(
            classify("ThunkExecutor::Execute (wait for completion)"),
            EventKind::Execute
        );
        assert_eq!(
            classify("CpuExecutable::ExecuteAsyncOnStream"),
            EventKind::ModuleRun
        );
        assert_eq!(
            classify("CommonPjRtClient::LinearizeIntoImpl"),
            EventKind::Transfer
        );
        assert_eq!(
            classify("TfrtTpuClient::BufferFromHostBuffer::TfrtTpuBuffer"),
            EventKind::Transfer
        );
        assert_eq!(
            module_in_name("CommonPjRtLoadedExecutable::Execute (jit_f)"),
            Some("jit_f")
        );
        assert_eq!(
            module_in_name("PjRtStreamExecutorLoadedExecutable::Execute"),
            None
        );
        assert_eq!(
            module_in_name("ThunkExecutor::Execute (wait for completion)"),
            None
        );
    }

    #[test]
    fn names_jit_modules_and_user_frames() {
        assert_eq!(
            jit_module_name("PjitFunction(train_step)").as_deref(),
            Some("jit_train_step")
        );
        assert_eq!(
            jit_module_name("PjitFunction(<lambda>)").as_deref(),
            Some("jit__lambda_")
        );
        assert_eq!(jit_module_name("PjitFunction()"), None);
        assert_eq!(
            jit_module_name("PjitFunction(jit(train_step))").as_deref(),
            Some("jit_train_step")
        );
        assert_eq!(
            classify("PJRT_LoadedExecutable_Execute linkage"),
            EventKind::Linkage
        );
        assert!(is_user_frame("$train.py:60 load_eval_set"));
        assert!(!is_user_frame("$api.py:2417 device_put"));
        assert!(!is_user_frame("$pxla.py:243 batched_device_put"));
        assert!(!is_user_frame("$<unknown> append"));
        assert!(!is_user_frame("$builtins isinstance"));
    }

    /// Frames of the standard library, NumPy and JAX seen in real GPU captures (the
    /// tracer names files without their folders) are not the user's; the user's
    /// scripts in those captures are, and so is a file whose name only ends like a
    /// library's.
    #[test]
    fn library_frames_of_real_captures_are_not_the_users() {
        for library in [
            "$inspect.py:2765 name",
            "$enum.py:1267 __hash__",
            "$fromnumeric.py:2080 _shape_dispatcher",
            "$scalar_types.py:40 __hash__",
            "$mesh.py:550 empty",
            "$lax.py:1662 _convert_element_type",
            "$custom_derivatives.py:259 __call__",
            "$__init__.py:12 <module>",
        ] {
            assert!(!is_user_frame(library), "{library}");
        }
        for user in [
            "$generate_elementwise_trace.py:20 elementwise_ops",
            "$generate_attention_trace.py:29 transformer_block",
            "$step.py:14 train_step",
            "$score.py:3 loss",
            "$my_inspect.py:1 probe",
        ] {
            assert!(is_user_frame(user), "{user}");
        }
    }
}
