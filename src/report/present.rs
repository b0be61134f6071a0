//! The presentation layer: the words, titles, units and sentences every renderer
//! shares (text, Markdown, JSON strings, and the page through the engine), so that the
//! CLI and the page say the same thing the same way.

use super::model::Note;
use super::model::{Category, DiagnosisId, InputKind, Label, LiveOrigin, MatchedPart, Role};
use crate::diff::model::{Basis, Change, DiffHeadline, DiffNote, Fit, ModuleChoice, Prediction};
use crate::evidence::message::{Framework, OomKind};
pub use crate::units::{signed_size, size};

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
    /// Executions the page lists (the latest), of those the report keeps.
    pub const EXECUTIONS: usize = 1000;
}

/// What a label says about where a figure comes from (the page's label tooltips).
pub fn label_meaning(label: Label) -> &'static str {
    match label {
        Label::Measured => {
            "measured: from runtime events (allocator, executions) or device memory profiles"
        }
        Label::Read => "read: from the compiled plan (capture or XLA dump) or the error message",
        Label::Estimated => "estimated: derived by oomlens",
    }
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
        DiagnosisId::DominantBuffer => "One buffer is most of the program",
        DiagnosisId::ImpossibleSize => "A size no device has: a shape is wrong",
        DiagnosisId::HeldElsewhere => "Something else holds the memory",
        DiagnosisId::ScopedMemory => "A kernel's blocks do not fit its core's memory",
        DiagnosisId::TooLittleToTell => "The message states too little to tell",
    }
}

/// What a diagnosis line means for the error message, in one sentence: the error's
/// `scenario` is the reading of the report's first line that has one. The fixes it names
/// are the framework's that the message names (JAX's when it names none).
pub fn reading(id: DiagnosisId, framework: Option<Framework>) -> Option<&'static str> {
    let framework = framework.unwrap_or(Framework::Jax);
    if framework != Framework::Jax {
        if let Some(reading) = reading_beside_jax(id, framework) {
            return Some(reading);
        }
    }
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
        DiagnosisId::DominantBuffer => "one buffer is most of the program: change the op that makes it (blocks, top_k, sharding)",
        DiagnosisId::ImpossibleSize => "a size no device has: a shape or a sharding is wrong",
        DiagnosisId::HeldElsewhere => "the program is not what filled the memory: something else holds it (another process, preallocation, arrays kept alive)",
        DiagnosisId::ScopedMemory => "a kernel's blocks do not fit its core's on-chip memory: smaller blocks, not a smaller batch",
        DiagnosisId::TooLittleToTell => "the message states too little to tell: compare the program's need with the device's memory",
        _ => return None,
    })
}

/// The readings that name JAX's fixes, for the other frameworks.
fn reading_beside_jax(id: DiagnosisId, framework: Framework) -> Option<&'static str> {
    Some(match (id, framework) {
        (DiagnosisId::AggregateTooBig, Framework::Tensorflow) => "the aggregate is too big: smaller batch, mixed precision, recomputed activations (tf.recompute_grad), more GPUs (tf.distribute)",
        (DiagnosisId::AggregateTooBig, Framework::Pytorch) => "the aggregate is too big: smaller batch, autocast (bf16), activation checkpointing (torch.utils.checkpoint), sharding (FSDP)",
        (DiagnosisId::AggregateTooBig, Framework::TensorflowJs) => "the aggregate is too big: smaller batch or input, and tensors disposed once used (tf.tidy)",
        (DiagnosisId::LargeReplicated, _) => "configuration, not capacity: one allocation takes over half the memory (a shape not the one intended, a whole dataset in one batch)",
        (DiagnosisId::DominantBuffer, _) => "one buffer is most of the program: change the op that makes it (compute it in pieces, check its shape)",
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
        OomKind::ScopedMemory => "a kernel's scoped memory",
        OomKind::Driver => "the GPU driver",
        OomKind::NeuronRuntime => "AWS Neuron runtime",
        OomKind::Short => "one-line message",
        OomKind::Other => "a wording read only in part",
    }
}

/// A framework, as its users write it.
pub fn framework(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => "JAX",
        Framework::Tensorflow => "TensorFlow",
        Framework::TensorflowJs => "TensorFlow.js",
        Framework::Pytorch => "PyTorch",
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

/// `1.25 s`, `3.400 ms`, `120.0 µs`, `80 ns`: a time span or a time since the capture
/// started, in the unit that suits it.
pub fn duration(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{} ns", ns.round())
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
        LiveOrigin::RuntimeReserved => {
            "reserved by the runtime (not arrays: the running program's stack and scratch)".into()
        }
        LiveOrigin::Shown(sentence) => sentence.clone(),
    }
}

/// `−26.2%`, `+3.0%`, `unchanged`, `from 0`: how much a figure changed.
pub fn percent_change(before: u64, after: u64) -> String {
    if before == after {
        return "unchanged".into();
    }
    if before == 0 {
        return "from 0".into();
    }
    let p = 100.0 * (after as f64 - before as f64) / before as f64;
    if p < 0.0 {
        format!("−{:.1}%", -p)
    } else {
        format!("+{p:.1}%")
    }
}

/// What became of a buffer or a scan stack.
pub fn change_words(change: Change) -> &'static str {
    match change {
        Change::Grew => "grew",
        Change::Shrank => "shrank",
        Change::Unchanged => "unchanged",
        Change::OnlyBefore => "went away",
        Change::OnlyAfter => "appeared",
    }
}

/// Why these modules were compared.
pub fn module_choice(choice: ModuleChoice) -> &'static str {
    match choice {
        ModuleChoice::Asked => "chosen by the user",
        ModuleChoice::Selected => "the module each report is about",
        ModuleChoice::LargestCommon => {
            "the largest module both runs have (the reports are about modules of different names)"
        }
        ModuleChoice::NoCommonName => {
            "the module each report is about: the runs have no module name in common"
        }
        ModuleChoice::NoPlan => "a run has no compiled plan",
    }
}

/// The fix a diagnosis line proposes, as the comparison names it ("remat was
/// estimated to save …").
pub fn fix_words(id: DiagnosisId) -> &'static str {
    match id {
        DiagnosisId::RoleForward => "remat (jax.checkpoint)",
        DiagnosisId::RoleBackward => "a smaller micro-batch",
        DiagnosisId::RoleWorkspace => "a smaller library workspace",
        DiagnosisId::NoDonation => "donation",
        DiagnosisId::ScanStack => "remat of the scanned body",
        DiagnosisId::DebugCallback => "removing the host callbacks",
        DiagnosisId::LargeReplicated => "sharding the large buffer",
        DiagnosisId::TpuPadding => "a layout without padding",
        DiagnosisId::GrowthPerExecution => "dropping the leaked references",
        DiagnosisId::OtherLiveArrays => "freeing the other live arrays",
        DiagnosisId::MemFractionSet => "the default memory fraction",
        DiagnosisId::SparsecoreDominates => "serializing the SparseCore tables",
        DiagnosisId::ArgumentsDominate => "sharding or narrowing the state",
        DiagnosisId::Fragmentation => "a less fragmented pool",
        DiagnosisId::DominantBuffer => "changing the op that makes the large buffer",
        DiagnosisId::ScopedMemory => "smaller kernel blocks",
        DiagnosisId::HeldElsewhere => "freeing what else holds memory",
        DiagnosisId::ImpossibleSize
        | DiagnosisId::TooLittleToTell
        | DiagnosisId::PlanExceedsCapacity
        | DiagnosisId::AggregateTooBig
        | DiagnosisId::XlaRemat
        | DiagnosisId::HostOffload
        | DiagnosisId::AllocatorRetry
        | DiagnosisId::NoAllocatorEvents
        | DiagnosisId::NoPlanInCapture => "its fix",
    }
}

/// The figure the buffers live at the peak add up to.
pub fn basis_words(basis: Basis) -> &'static str {
    match basis {
        Basis::Peak => "the change of the peak (heap peak + memory held for the whole program)",
        Basis::HeapPeak => "the change of the heap peak",
    }
}

/// The comparison's headline: `peak 62.9 MiB → 24.4 MiB (−61.2%): now fits the
/// 48.0 MiB pool`; without a pool, just the change.
pub fn diff_headline(h: &DiffHeadline) -> String {
    let (before, after) = match (h.peak_before_bytes, h.peak_after_bytes) {
        (Some(b), Some(a)) => (b, a),
        (None, Some(_)) => {
            return "the before run has no compiled plan: plans are not compared".into()
        }
        (Some(_), None) => {
            return "the after run has no compiled plan: plans are not compared".into()
        }
        (None, None) => return "neither run has a compiled plan: plans are not compared".into(),
    };
    let mut text = format!(
        "peak {} → {} ({})",
        size(before),
        size(after),
        percent_change(before, after)
    );
    let pool = h.pool_bytes.map(size).unwrap_or_default();
    let short = h.short_bytes.map(size).unwrap_or_default();
    match h.fit {
        Fit::NowFits => text.push_str(&format!(": now fits the {pool} pool")),
        Fit::StillFits => text.push_str(&format!(": fits the {pool} pool, as before")),
        Fit::StillDoesNotFit => text.push_str(&format!(
            ": still does not fit the {pool} pool: {short} short"
        )),
        Fit::NoLongerFits => {
            text.push_str(&format!(": no longer fits the {pool} pool: {short} short"))
        }
        Fit::Unknown => {}
    }
    text
}

/// `remat (jax.checkpoint) was estimated to save 41.0 MiB; it saved 14.2 MiB (35% of
/// the estimate)`.
pub fn prediction(p: &Prediction) -> String {
    let fix = p.fix.as_deref().unwrap_or_else(|| fix_words(p.id));
    let estimated = match &p.bound {
        Some(why) => format!(
            "{fix} was estimated to save up to {} (an upper bound: {why})",
            size(p.estimated_saving_bytes)
        ),
        None => format!(
            "{fix} was estimated to save {}",
            size(p.estimated_saving_bytes)
        ),
    };
    let actual = match p.actual_saving_bytes {
        s if s > 0 && p.estimated_saving_bytes > 0 => format!(
            "it saved {} ({:.0}% of the estimate)",
            size(s.unsigned_abs()),
            100.0 * s as f64 / p.estimated_saving_bytes as f64
        ),
        s if s > 0 => format!("it saved {}", size(s.unsigned_abs())),
        0 => "the plan's peak did not change".into(),
        s => format!("the plan's peak grew by {}", size(s.unsigned_abs())),
    };
    let in_use = match p.actual_in_use_saving_bytes {
        Some(s) if s > 0 => format!(
            "; the pool's peak in use dropped by {} (measured)",
            size(s.unsigned_abs())
        ),
        Some(s) if s < 0 => format!(
            "; the pool's peak in use grew by {} (measured)",
            size(s.unsigned_abs())
        ),
        Some(_) => "; the pool's peak in use did not change (measured)".into(),
        None => String::new(),
    };
    format!("{estimated}; {actual}{in_use}")
}

/// A comparison's note: its stable id and its sentence.
pub fn diff_note(note: &DiffNote) -> Note {
    let (id, text) = match note {
        DiffNote::NoPlan { side: "either" } => (
            "no_plan",
            "neither run has a compiled plan: plans and buffers are not compared".to_owned(),
        ),
        DiffNote::NoPlan { side } => (
            "no_plan",
            format!("the {side} run has no compiled plan: plans and buffers are not compared"),
        ),
        DiffNote::NamesDiffer { before, after } => (
            "module_names_differ",
            format!(
                "the runs have no module name in common: {before} (before) is compared with {after} (after); pass --module NAME to compare another module"
            ),
        ),
        DiffNote::NotSelected {
            side,
            module,
            selected,
        } => (
            "diagnosis_not_compared",
            format!(
                "the {side} run's report is about {selected}, not {module}: diagnosis lines are not compared; pass --module {module}"
            ),
        ),
        DiffNote::NoAllocatorEvents { side: "either" } => (
            "no_runtime",
            "neither run recorded allocator events (a CPU capture, or the allocator records none): runtime figures are not compared".to_owned(),
        ),
        DiffNote::NoAllocatorEvents { side } => (
            "no_runtime",
            format!(
                "the {side} run recorded no allocator events: runtime figures are not compared"
            ),
        ),
        DiffNote::ErrorTextOnly { side } => (
            "error_text_one_side",
            format!(
                "only the {side} run was given the out-of-memory error text: it is said in that run's report and not compared"
            ),
        ),
        DiffNote::PoolsDiffer { before, after } => (
            "pools_differ",
            format!(
                "the pools differ: {} before, {} after; fits are judged against each run's own pool",
                size(*before),
                size(*after)
            ),
        ),
    };
    Note {
        id: id.into(),
        text,
    }
}

/// A verdict in a few words, as the hosts' summary table shows it.
pub fn verdict_words(v: super::model::Verdict) -> &'static str {
    use super::model::Verdict;
    match v {
        Verdict::DoesNotFit => "does not fit",
        Verdict::Leak => "leak",
        Verdict::RanOut => "ran out",
        Verdict::Fits => "fits",
        Verdict::PlanOnly => "plan only",
        Verdict::RuntimeOnly => "runtime only",
        Verdict::Empty => "empty",
        Verdict::Warning => "warning only",
    }
}

/// One piece of out-of-memory evidence, in a few words (`docs/hosts.md`).
pub fn oom_evidence_words(e: super::model::OomEvidence) -> &'static str {
    use super::model::OomEvidence;
    match e {
        OomEvidence::AllocatorRetry => "allocator retry",
        OomEvidence::PeakAtCapacity => "peak at capacity",
        OomEvidence::PlanExceedsCapacity => "plan over capacity",
        OomEvidence::GrowthHeld => "growth held",
        OomEvidence::PastedError => "pasted error",
    }
}

/// Whether a host was analyzed, in a word.
pub fn host_status_words(s: super::model::HostStatus) -> &'static str {
    use super::model::HostStatus;
    match s {
        HostStatus::Analyzed => "read",
        HostStatus::Partial => "in part",
        HostStatus::Failed => "not read",
    }
}

/// A summary field, as the skew lines name it.
pub fn skew_field_words(f: super::model::SkewField) -> &'static str {
    use super::model::SkewField;
    match f {
        SkewField::Verdict => "verdict",
        SkewField::SelectedModule => "module",
        SkewField::PlanPeakBytes => "plan peak",
        SkewField::RuntimePeakBytes => "runtime peak",
        SkewField::CapacityBytes => "capacity",
        SkewField::GrowthPerExecutionBytes => "growth per execution",
    }
}

#[cfg(test)]
mod tests;
