//! The presentation layer: the words, titles, units and sentences every renderer
//! shares (text, Markdown, JSON strings, and the page through the engine), so that the
//! CLI and the page say the same thing the same way.

use super::model::{Category, DiagnosisId, InputKind, LiveOrigin, MatchedPart, Role};
use crate::evidence::message::OomKind;

/// How many entries each list shows; the rest are counted.
pub mod limits {
    /// Modules in the module table.
    pub const MODULES: usize = 12;
    /// Allocators in the runtime section (the device pools lead).
    pub const ALLOCATORS: usize = 4;
    /// Groups of arrays live at the last execution.
    pub const LIVE_GROUPS: usize = 8;
    /// Host events between the last two executions.
    pub const HOST_EVENTS: usize = 8;
    /// `AllocatorRetry` waits listed, the longest first.
    pub const WAITS: usize = 3;
    /// In-use figures shown at each end of a long list of execution starts.
    pub const IN_USE_EDGE: usize = 3;
    /// Live buffers at the peak, unless the reader asks for another number.
    pub const LIVE_BUFFERS: usize = 10;
    /// Allocations of the error message's listing.
    pub const MESSAGE_ALLOCATIONS: usize = 10;
    /// Allocations padded far beyond their data, named in the padding line.
    pub const PADDED_ALLOCATIONS: usize = 3;
    /// Frames of the latest device memory profile.
    pub const PROFILE_GROUPS: usize = 10;
    /// Frames whose bytes changed between the first and last profile.
    pub const GROWTH: usize = 10;
    /// Devices listed per profile.
    pub const PROFILE_DEVICES: usize = 8;
}

/// The title every renderer gives a diagnosis line.
pub fn title(id: DiagnosisId) -> &'static str {
    match id {
        DiagnosisId::PlanExceedsCapacity => "The step does not fit",
        DiagnosisId::RoleForward => "Mostly forward activations, kept for backward",
        DiagnosisId::RoleBackward => "Mostly backward: gradients and their temporaries",
        DiagnosisId::RoleWorkspace => "Library workspace",
        DiagnosisId::NoDonation => "No donated parameters",
        DiagnosisId::XlaRemat => "XLA already rematerialized",
        DiagnosisId::ScanStack => "Scan stack",
        DiagnosisId::DebugCallback => "Host callbacks in the step",
        DiagnosisId::LargeReplicated => "One buffer takes over half the pool",
        DiagnosisId::TpuPadding => "Layout padding",
        DiagnosisId::HostOffload => "Host offload",
        DiagnosisId::GrowthPerExecution => "Memory grows every execution: a leak",
        DiagnosisId::OtherLiveArrays => "Other live arrays take space",
        DiagnosisId::AllocatorRetry => "The allocator waited for memory",
        DiagnosisId::MemFractionSet => "A memory fraction was set",
        DiagnosisId::NoAllocatorEvents => "No allocator events",
        DiagnosisId::NoPlanInCapture => "No compiled plan in the capture",
        DiagnosisId::SparsecoreDominates => "SparseCore takes most of HBM",
        DiagnosisId::ArgumentsDominate => "Arguments larger than the program",
        DiagnosisId::AggregateTooBig => "The aggregate is too big",
        DiagnosisId::Fragmentation => "The pool is fragmented",
    }
}

/// What a diagnosis line means for the error message, in one sentence: the error's
/// `scenario` is the reading of the report's first line that has one.
pub fn reading(id: DiagnosisId) -> Option<&'static str> {
    Some(match id {
        DiagnosisId::PlanExceedsCapacity => "the plan itself does not fit: shrink the program (batch, remat, sharding)",
        DiagnosisId::SparsecoreDominates => "SparseCore dominates: its embedding tables, not the TensorCore program, exceed HBM",
        DiagnosisId::LargeReplicated => "configuration, not capacity: one allocation takes over half the memory (a leftover jax.debug.print, a missing sharding annotation)",
        DiagnosisId::TpuPadding => "layout padding: allocations take far more than their data",
        DiagnosisId::ArgumentsDominate => "state and batch: the arguments are larger than the program (donation, sharding, dtype)",
        DiagnosisId::OtherLiveArrays => "other arrays held on the device leave the program no room",
        DiagnosisId::Fragmentation => "fragmentation: free memory exceeds the request, but no free block is that large",
        DiagnosisId::GrowthPerExecution => "a leak: memory grows every step",
        DiagnosisId::XlaRemat => "XLA's rematerialization gave up: the fix must come from the program",
        DiagnosisId::DebugCallback => "a host callback materializes whole tensors",
        DiagnosisId::RoleForward => "activations kept for the backward pass dominate: remat (jax.checkpoint) or a smaller micro-batch",
        DiagnosisId::RoleBackward => "gradients and their temporaries dominate: sharding or gradient accumulation",
        DiagnosisId::NoDonation => "old and new state are live together: donate_argnums",
        DiagnosisId::AggregateTooBig => "the aggregate is too big: smaller batch, donate_argnums, bf16, sharding, host offload, remat (jax.checkpoint)",
        _ => return None,
    })
}

/// The reading of a failed request matched to a plan when no line says more.
pub fn matched_reading(part: MatchedPart) -> &'static str {
    match part {
        MatchedPart::TempBlock => {
            "the module's temporary block could not be allocated: the plan above says what fills it"
        }
        MatchedPart::Output => {
            "one of the module's outputs could not be allocated: memory was full when it ran"
        }
    }
}

/// The format of an out-of-memory message, in words.
pub fn message_kind(kind: OomKind) -> &'static str {
    match kind {
        OomKind::TpuCompileHbm => "XLA:TPU compile-time check",
        OomKind::TpuTcSc => "TPU TensorCore and SparseCore usage",
        OomKind::TpuEarlyAbort => "XLA:TPU early abort",
        OomKind::GpuBufferAssignment => "XLA:GPU buffer assignment",
        OomKind::BfcRuntime => "BFC allocator",
        OomKind::TpuRuntime => "TPU runtime",
        OomKind::Short => "one-line message",
    }
}

/// The format's name as the JSON writes it (`tpu_compile_hbm`).
pub fn message_kind_id(kind: OomKind) -> &'static str {
    match kind {
        OomKind::TpuCompileHbm => "tpu_compile_hbm",
        OomKind::TpuTcSc => "tpu_tc_sc",
        OomKind::TpuEarlyAbort => "tpu_early_abort",
        OomKind::GpuBufferAssignment => "gpu_buffer_assignment",
        OomKind::BfcRuntime => "bfc_runtime",
        OomKind::TpuRuntime => "tpu_runtime",
        OomKind::Short => "short",
    }
}

/// What an input is, in words.
pub fn input_kind(kind: InputKind) -> &'static str {
    match kind {
        InputKind::Capture => "profiler capture",
        InputKind::ErrorText => "error message",
        InputKind::XlaDump => "XLA dump",
        InputKind::DeviceProfile => "device memory profile",
    }
}

/// What a role means, in the words every renderer uses.
pub fn role_words(role: Role) -> &'static str {
    match role {
        Role::Forward => "forward, kept for backward",
        Role::Backward => "backward",
        Role::Workspace => "library workspace",
        Role::Other => "other",
    }
}

/// The role's one-word name, as tables and the JSON write it.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Forward => "forward",
        Role::Backward => "backward",
        Role::Workspace => "workspace",
        Role::Other => "other",
    }
}

/// The role as the one-line split of the heap names it (`forward-kept 89.4% · …`).
pub fn role_short(role: Role) -> &'static str {
    match role {
        Role::Forward => "forward-kept",
        other => role_name(other),
    }
}

/// How a buffer's allocation lives, as tables and the JSON write it.
pub fn category(category: Category) -> &'static str {
    match category {
        Category::Parameter => "parameter",
        Category::Output => "output",
        Category::ThreadLocal => "thread-local",
        Category::Constant => "constant",
        Category::Temporary => "temporary",
    }
}

/// `file.py:123` from a full `path/to/file.py:123`: source lines are shown by file
/// name everywhere; the full path is kept for a tooltip or a copy.
pub fn short_source(source: &str) -> &str {
    match source.rsplit_once('/') {
        Some((_, tail)) => tail,
        None => source,
    }
}

/// `1–9`, `1, 3, 5–7`: execution numbers, compressed; past eight runs, the first six
/// and the last.
pub fn ranges(numbers: &mut [usize]) -> String {
    numbers.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("{}–{}", numbers[i], numbers[j])
        } else if j == i + 1 {
            format!("{}, {}", numbers[i], numbers[j])
        } else {
            numbers[i].to_string()
        });
        i = j + 1;
    }
    if parts.len() > 8 {
        let last = parts.last().cloned().unwrap_or_default();
        parts.truncate(6);
        parts.push(format!("… {last} ({} executions)", numbers.len()));
    }
    parts.join(", ")
}

/// `execution 3` or `executions 1–4`.
pub fn executions(numbers: &[usize]) -> String {
    match numbers {
        [one] => format!("execution {one}"),
        _ => format!("executions {}", ranges(&mut numbers.to_vec())),
    }
}

/// The sentence for who allocated a live group.
pub fn live_origin(origin: &LiveOrigin) -> String {
    match origin {
        LiveOrigin::Outputs {
            module,
            executions: numbers,
        } => {
            format!("output of {module} {}", executions(numbers))
        }
        LiveOrigin::Transfer { event, frame } => match frame {
            Some(frame) => format!("host-to-device transfer ({event} in {frame})"),
            None => format!("host-to-device transfer ({event})"),
        },
        LiveOrigin::BeforeCapture {
            history_from_ps: None,
        } => "allocated before the capture started".into(),
        LiveOrigin::BeforeCapture {
            history_from_ps: Some(t),
        } => format!(
            "allocated before {:.3} s (older allocator events are not kept)",
            *t as f64 / 1e12
        ),
        LiveOrigin::Other => "allocated outside any launch or transfer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_numbers_are_compressed() {
        assert_eq!(ranges(&mut [3, 1, 2, 5, 7, 8]), "1–3, 5, 7, 8");
        let mut many: Vec<usize> = (1..=40).step_by(2).collect();
        let text = ranges(&mut many);
        assert!(text.ends_with("… 39 (20 executions)"), "{text}");
        assert_eq!(executions(&[4]), "execution 4");
    }
}
