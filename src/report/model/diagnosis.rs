//! What the report concludes: the verdict, the diagnosis lines, and the error
//! message as read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Label, Role};
use crate::evidence::message::OomMessage;

/// One diagnosis line.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Diagnosis {
    /// Stable identifier (`role_forward`, `no_donation`, …).
    pub id: DiagnosisId,
    /// The line's title, as every renderer shows it ("Mostly forward activations, kept
    /// for backward").
    pub title: String,
    /// Where the line's figures come from.
    pub label: Label,
    /// The line itself, with its figures.
    pub text: String,
    /// Why it happens.
    pub cause: String,
    /// What to do, when something can be done: the first of `fixes` (the one ranked
    /// first), kept for readers of one fix per line.
    pub fix: Option<String>,
    /// Estimated bytes the first fix saves (the largest saving of `fixes`: fixes with a
    /// saving are ranked first, largest first).
    pub saving_bytes: Option<u64>,
    /// What the first fix costs (time, a recompile, …).
    pub cost: Option<String>,
    /// Whether the plan would fit the capacity after the first fix, when a capacity is
    /// known.
    pub fits_after: Option<bool>,
    /// Every fix of the line, ranked, each with its own saving and cost where the rule
    /// knows them; empty when nothing can be done. The first is `fix`.
    #[serde(default)]
    pub fixes: Vec<Fix>,
    /// How to check the estimate on the user's side.
    pub check: Option<String>,
    /// Why the saving is an upper bound, when it is one (the fix saves at most that
    /// much, and how much less is not known from the plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saving_bound: Option<String>,
    /// What the line is about when one id can appear several times (a scan loop's
    /// `while` instruction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What the finding is made of, when it is several things (the stacks of one scan
    /// loop): each with its figures, read from the plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<DiagnosisItem>,
}

/// One fix of a diagnosis line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Fix {
    /// What to do.
    pub text: String,
    /// Estimated bytes it saves, when the rule can tell (estimated).
    pub saving_bytes: Option<u64>,
    /// What it costs (time, precision, a recompile, …), when the rule can tell.
    pub cost: Option<String>,
    /// Whether the plan would then fit the capacity, when both are known (estimated).
    pub fits_after: Option<bool>,
}

/// One thing a diagnosis line is made of (a stack of a scan loop).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DiagnosisItem {
    /// Its shape (`f32[6,8,128,512]`).
    pub shape: String,
    /// How many buffers of this shape.
    pub count: u64,
    /// Their bytes together.
    pub bytes: u64,
    /// What it is for.
    pub role: Role,
    /// `path/file.py:123`, or empty.
    pub source: String,
    /// The JAX op_name of the instruction that writes it.
    pub op_name: String,
}

/// The out-of-memory message, as `evidence::message::parse` read it (every figure
/// **read**, in bytes, converted 1024-based), and what matching it to the plans adds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ErrorReport {
    /// The message's figures, allocations, allocator statistics and remat warning.
    #[serde(flatten)]
    pub message: OomMessage,
    /// The file the message was read from (`-` for standard input, `pasted text`).
    pub file: String,
    /// The plan part the failed request is, in words: `the temporary block of jit_f(6)
    /// (46,159 MiB)`, `add.3 f32[…] (4.0 MiB) of jit_f(6)`.
    pub matched: Option<String>,
    /// The label of the module whose plan holds that part.
    pub matched_module: Option<String>,
    /// Which part: the module's temporary block, or one of its outputs.
    pub matched_part: Option<MatchedPart>,
    /// Whether the request equals the part's size exactly (else within rounding).
    pub matched_exactly: Option<bool>,
    /// What the message points to, in one sentence (the triage's reading).
    pub scenario: String,
}

/// The part of a plan a failed request matched: an execution allocates its temporary
/// block and its outputs, never its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchedPart {
    /// The module's preallocated temporary block.
    TempBlock,
    /// One of the module's outputs.
    Output,
}

/// What the report concludes about the selected module.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The plan alone exceeds the pool.
    DoesNotFit,
    /// Memory grows by the outputs every execution and is still held.
    Leak,
    /// Something says memory ran out (the pasted error, an allocator wait, memory in use).
    RanOut,
    /// The plan fits the pool and nothing says memory ran out.
    Fits,
    /// A plan, but no pool to compare it with.
    PlanOnly,
    /// Allocator events, but no plan.
    RuntimeOnly,
    /// Neither a plan nor allocator events.
    #[default]
    Empty,
    /// Only a warning: the text given holds no failure (XLA's rematerialization
    /// warning, the allocator's "not a failure").
    Warning,
}

impl Verdict {
    /// The verdict as JSON writes it (`does_not_fit`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::DoesNotFit => "does_not_fit",
            Verdict::Leak => "leak",
            Verdict::RanOut => "ran_out",
            Verdict::Fits => "fits",
            Verdict::PlanOnly => "plan_only",
            Verdict::RuntimeOnly => "runtime_only",
            Verdict::Empty => "empty",
            Verdict::Warning => "warning",
        }
    }
}

/// Every kind of diagnosis line (JSON `diagnosis[].id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosisId {
    /// The plan alone exceeds the pool.
    PlanExceedsCapacity,
    /// Activations kept for the backward pass dominate the heap peak.
    RoleForward,
    /// Gradients and their temporaries dominate the heap peak.
    RoleBackward,
    /// Library workspace (GEMM / convolution scratch) takes a large share.
    RoleWorkspace,
    /// No parameter is donated while outputs of the same shapes are made.
    NoDonation,
    /// XLA's own rematerialization already ran.
    XlaRemat,
    /// `lax.scan` stacks per-iteration values.
    ScanStack,
    /// Host callbacks (`jax.debug.print`, …) are compiled into the step.
    DebugCallback,
    /// One buffer takes over half the pool: a configuration error.
    LargeReplicated,
    /// TPU layout padding wastes a large share.
    TpuPadding,
    /// Arrays live in host memory (memory space 5).
    HostOffload,
    /// Memory grows every execution by about the outputs: a leak.
    GrowthPerExecution,
    /// Arrays outside the step take space.
    OtherLiveArrays,
    /// The allocator waited for memory (`AllocatorRetry`).
    AllocatorRetry,
    /// The pool is far below the device's memory: a fraction was set.
    MemFractionSet,
    /// The capture has no allocator events.
    NoAllocatorEvents,
    /// The capture has no compiled plans.
    NoPlanInCapture,
    /// SparseCore programs take more HBM than the TensorCore program (TPU).
    SparsecoreDominates,
    /// The program's arguments (state and batch) are larger than the program itself.
    ArgumentsDominate,
    /// No single cause: the aggregate is too big; the fixes ranked.
    AggregateTooBig,
    /// Free memory exceeds the request, but no free block is large enough.
    Fragmentation,
    /// One buffer (or one op's buffers) is most of what the program needs.
    DominantBuffer,
    /// A need no device could meet: a hundred times the memory, or one request larger
    /// than any accelerator.
    ImpossibleSize,
    /// The program needs far less than the device has: something else holds memory.
    HeldElsewhere,
    /// One kernel's scoped memory (TPU VMEM/SMEM, GPU shared memory) is over a core's.
    ScopedMemory,
    /// The message states too little to tell the cause: how to find it.
    TooLittleToTell,
}

impl std::fmt::Display for DiagnosisId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl DiagnosisId {
    /// Whether the line names a cause of running out (not evidence alone: XLA's remat
    /// at work, the allocator waiting, what the capture lacks, memory on the host, or
    /// that the message tells too little).
    pub fn names_a_cause(self) -> bool {
        !matches!(
            self,
            DiagnosisId::XlaRemat
                | DiagnosisId::AllocatorRetry
                | DiagnosisId::NoAllocatorEvents
                | DiagnosisId::NoPlanInCapture
                | DiagnosisId::HostOffload
                | DiagnosisId::TooLittleToTell
        )
    }

    /// The id as JSON writes it (`role_forward`).
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosisId::PlanExceedsCapacity => "plan_exceeds_capacity",
            DiagnosisId::RoleForward => "role_forward",
            DiagnosisId::RoleBackward => "role_backward",
            DiagnosisId::RoleWorkspace => "role_workspace",
            DiagnosisId::NoDonation => "no_donation",
            DiagnosisId::XlaRemat => "xla_remat",
            DiagnosisId::ScanStack => "scan_stack",
            DiagnosisId::DebugCallback => "debug_callback",
            DiagnosisId::LargeReplicated => "large_replicated",
            DiagnosisId::TpuPadding => "tpu_padding",
            DiagnosisId::HostOffload => "host_offload",
            DiagnosisId::GrowthPerExecution => "growth_per_execution",
            DiagnosisId::OtherLiveArrays => "other_live_arrays",
            DiagnosisId::AllocatorRetry => "allocator_retry",
            DiagnosisId::MemFractionSet => "mem_fraction_set",
            DiagnosisId::NoAllocatorEvents => "no_allocator_events",
            DiagnosisId::NoPlanInCapture => "no_plan_in_capture",
            DiagnosisId::SparsecoreDominates => "sparsecore_dominates",
            DiagnosisId::ArgumentsDominate => "arguments_dominate",
            DiagnosisId::AggregateTooBig => "aggregate_too_big",
            DiagnosisId::Fragmentation => "fragmentation",
            DiagnosisId::DominantBuffer => "dominant_buffer",
            DiagnosisId::ImpossibleSize => "impossible_size",
            DiagnosisId::HeldElsewhere => "held_elsewhere",
            DiagnosisId::ScopedMemory => "scoped_memory",
            DiagnosisId::TooLittleToTell => "too_little_to_tell",
        }
    }
}
