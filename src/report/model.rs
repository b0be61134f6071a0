//! The report model: everything the renderers (text, Markdown, JSON, the page) show,
//! computed once by the analysis. Its JSON form is a public contract
//! (`schema/oomlens-report.schema.json`): keys here are stable.
//!
//! Provenance of figures: everything under `plan` is **read** from the compiled plan,
//! everything under `runtime` is **measured** from runtime events, and each diagnosis
//! line carries its own label (savings are **estimated**).

use schemars::JsonSchema;
use serde::Serialize;

pub const SCHEMA: &str = "oomlens/1";

/// Writes a number as a JSON string (see [`ModuleReport::program_id`]).
fn as_string<S: serde::Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// Where a figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    /// From runtime events (allocator, executions).
    Measured,
    /// From the compiled plan in `/host:metadata`.
    Read,
    /// Derived by oomlens (savings, ratios, projections).
    Estimated,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Measured => "measured",
            Label::Read => "read",
            Label::Estimated => "estimated",
        }
    }
}

/// The whole output: one host, or several (`hosts`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Report {
    pub schema: String,
    pub tool: String,
    /// One entry per host file analyzed. With one host, its fields are also the
    /// report's top level in the JSON (see `json.rs`).
    pub hosts: Vec<HostReport>,
    /// For a folder of several host files: one row per host file, in host order,
    /// analyzed or not (a file that could not be read is a row with its error, and has
    /// no entry in `hosts`). Empty for a single capture. See `docs/hosts.md`.
    pub hosts_summary: Vec<HostSummary>,
}

/// One host of a folder, in one row: what the cross-host summary compares
/// (`docs/hosts.md`). Every figure is the host report's own, with its label.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct HostSummary {
    pub host: String,
    pub file: String,
    pub file_bytes: u64,
    /// Whether the file was analyzed, analyzed in part (cut short or damaged: see
    /// `notes`), or could not be read (see `error`).
    pub status: HostStatus,
    /// The one-line error of a file that could not be read.
    pub error: Option<String>,
    /// Its stable kind (`truncated`, `empty`, `not_a_capture`, …), as the CLI's errors.
    pub error_kind: Option<String>,
    /// The host report's verdict (`headline.verdict`); none when it could not be read.
    pub verdict: Option<Verdict>,
    /// The module the host report is about (`selected_module`).
    pub selected_module: Option<String>,
    /// Its plan's peak (**read**): `modules[].plan.peak_bytes` of the selected module.
    pub plan_peak_bytes: Option<u64>,
    /// The highest peak in use of the host's device pools (**measured**):
    /// `runtime.allocators[].peak_in_use_bytes` of the device allocators.
    pub runtime_peak_bytes: Option<u64>,
    /// The device pool's capacity (**measured**): `capacity_bytes`.
    pub capacity_bytes: Option<u64>,
    /// Memory growth per execution of the selected module (**measured**):
    /// `runtime.growth_per_execution_bytes`.
    pub growth_per_execution_bytes: Option<i64>,
    /// What says memory ran out, or would, on this host (empty when nothing does).
    pub oom_evidence: Vec<OomEvidence>,
    /// When the first sign of running out was recorded (ns, on the clock of the
    /// host's `runtime.executions[].start_ns`): the first `AllocatorRetry` wait, or
    /// else the moment a device pool reached its peak when that peak is at its
    /// capacity. Host clocks are the hosts' own; see `docs/hosts.md`.
    pub ran_out_at_ns: Option<f64>,
    /// Whether this is the host that ran out first: the earliest `ran_out_at_ns` of
    /// the folder (only ever one host).
    pub ran_out_first: bool,
    /// The ids of the host report's notes (`capture_truncated`, `plane_damaged`, …).
    pub notes: Vec<String>,
    /// How this host differs from the rest of the folder (empty when it does not).
    pub skew: Vec<Skew>,
}

/// Whether a host file could be analyzed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HostStatus {
    /// Read whole and analyzed.
    #[default]
    Analyzed,
    /// Analyzed as far as it could be read: the file is cut short
    /// (`capture_truncated`) or a plane is damaged (`plane_damaged`).
    Partial,
    /// Not analyzed: `error` says why. The other hosts are reported.
    Failed,
}

/// One thing that says a host ran out of memory, or would.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OomEvidence {
    /// The allocator waited for memory (`AllocatorRetry`, **measured**).
    AllocatorRetry,
    /// A device pool's peak in use reached its capacity (**measured**).
    PeakAtCapacity,
    /// The selected module's plan exceeds the pool (verdict `does_not_fit`, **read**).
    PlanExceedsCapacity,
    /// Memory grew every execution and was still held (verdict `leak`, **measured**).
    GrowthHeld,
    /// The pasted error text (`--error-text`) says memory ran out.
    PastedError,
}

/// A way one host differs from the rest of the folder.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Skew {
    /// Which field of the row differs.
    pub field: SkewField,
    /// This host's value, for a figure (bytes).
    pub bytes: Option<i64>,
    /// The folder's median of that figure over the hosts that have one.
    pub typical_bytes: Option<i64>,
    /// This host's value, for a module or a verdict (as the row writes it).
    pub value: Option<String>,
    /// The value most hosts have.
    pub typical: Option<String>,
}

/// The fields of a [`HostSummary`] compared across hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkewField {
    Verdict,
    SelectedModule,
    PlanPeakBytes,
    RuntimePeakBytes,
    CapacityBytes,
    GrowthPerExecutionBytes,
}

/// The analysis of one `<host>.xplane.pb`.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct HostReport {
    pub host: String,
    pub file: String,
    pub file_bytes: u64,
    /// The one-sentence verdict every renderer leads with.
    #[serde(default)]
    pub headline: Headline,
    /// Every module with a plan, largest peak first.
    pub modules: Vec<ModuleReport>,
    /// The label of the module the report is about (`name(program_id)`), if any.
    pub selected_module: Option<String>,
    /// Why that module was chosen.
    pub selection_reason: String,
    pub runtime: Option<Runtime>,
    /// The device pool's capacity (measured): the first device allocator's, when
    /// allocator events were recorded. The figure plans are compared against.
    #[serde(default)]
    pub capacity_bytes: Option<u64>,
    pub diagnosis: Vec<Diagnosis>,
    /// The pasted error text, parsed, when given.
    pub error: Option<ErrorMatch>,
    /// What the capture lacked or what could not be read, and how to get it.
    pub notes: Vec<Note>,
    /// Planes seen, for the reader's orientation.
    pub planes: Vec<PlaneSummary>,
    /// When the profile started (ns since the Unix epoch), from the stat
    /// `profile_start_time` of the plane `Task Environment`: what puts the times of
    /// several hosts on one clock (`docs/hosts.md`). Not written to the JSON report,
    /// whose times stay relative to the start of the profile.
    #[serde(skip)]
    pub profile_start_ns: Option<u64>,
}

/// The verdict in one sentence, with the figures it quotes and their labels.
#[derive(Debug, Clone, Default, Serialize, PartialEq, JsonSchema)]
pub struct Headline {
    /// What the report concludes, in one word.
    pub verdict: Verdict,
    /// The sentence, e.g. "The step does not fit: needs 3.72 GiB, capacity 2.79 GiB".
    pub text: String,
    /// The figures quoted in `text`, in order.
    pub figures: Vec<HeadlineFigure>,
}

#[derive(Debug, Clone, Serialize, PartialEq, JsonSchema)]
pub struct HeadlineFigure {
    /// What the figure is: `needs`, `capacity`, `peak`, `growth_per_execution`, …
    pub name: String,
    pub bytes: u64,
    /// As shown in `text` (`3.72 GiB`).
    pub shown: String,
    pub label: Label,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PlaneSummary {
    pub name: String,
    pub bytes: u64,
    pub lines: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Note {
    pub id: String,
    pub text: String,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ModuleReport {
    pub name: String,
    /// The program id XLA gave the module (on TPU a 64-bit fingerprint). Written as a
    /// string in JSON: 64-bit ids do not fit a JavaScript number.
    #[serde(serialize_with = "as_string")]
    #[schemars(with = "String")]
    pub program_id: u64,
    /// `name(program_id)`, exactly as XProf names the module.
    pub label: String,
    /// How many times it executed in the capture (measured); 0 when no runtime events.
    pub executions: u64,
    pub plan: Plan,
}

/// One module's compiled memory plan. All figures **read** from the plan.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Plan {
    /// As `compiled.memory_analysis().argument_size_in_bytes`.
    pub argument_bytes: u64,
    /// As `output_size_in_bytes`.
    pub output_bytes: u64,
    /// As `alias_size_in_bytes` (donated parameters reused for outputs).
    pub alias_bytes: u64,
    /// As `temp_size_in_bytes` (the preallocated temporary block).
    pub temp_bytes: u64,
    /// Host-memory-space (S(5)) figures, never counted as device memory.
    pub host_argument_bytes: u64,
    pub host_output_bytes: u64,
    pub host_temp_bytes: u64,
    /// The temporary heap at its peak (heap-simulator replay).
    pub heap_peak_bytes: u64,
    /// Heap peak plus memory held for the whole program; equals XProf Memory Viewer's peak.
    pub peak_bytes: u64,
    /// Memory held for the whole program (parameters, outputs, constants, thread-local).
    pub indefinite_bytes: u64,
    /// Every device-memory allocation of the plan added up ("with fragmentation" in
    /// XProf's Memory Viewer; `total_hbm_mib` in `xprof get_peak_allocations`).
    pub allocation_bytes: u64,
    /// argument + output + temp − alias: what the program needs at once.
    pub total_bytes: u64,
    pub parameter_count: u64,
    pub parameter_bytes: u64,
    pub donated_parameter_count: u64,
    pub donated_bytes: u64,
    pub non_aliased_output_bytes: u64,
    /// Padded minus unpadded bytes at the peak.
    pub padding_bytes: u64,
    pub remat_instructions: u64,
    pub roles_at_peak: Roles,
    /// Buffers live at the peak, largest first.
    pub live_at_peak: Vec<LiveBuffer>,
    /// Buffers that `lax.scan` stacks over iterations.
    pub scan_stacks: Vec<ScanStack>,
    /// Heap in use (bytes, including indefinite memory) along program order, with the
    /// instruction at each point; down-sampled to at most a few thousand points.
    pub timeline: Vec<TimelinePoint>,
    /// Index into `timeline` of the peak.
    pub timeline_peak_index: usize,
    /// Host callbacks (e.g. `jax.debug.print`) compiled into the module.
    pub host_callbacks: Vec<String>,
    /// Devices the module was compiled for, when known (replicas × partitions).
    pub device_count: u64,
    pub has_heap_trace: bool,
    /// Why the heap replay could not be done or differs from XProf, if it does.
    pub replay_note: Option<String>,
}

impl Plan {
    /// What the plan keeps in host memory (memory space 5): parameters, outputs and
    /// temporaries together.
    pub fn host_bytes(&self) -> u64 {
        self.host_argument_bytes
            .saturating_add(self.host_output_bytes)
            .saturating_add(self.host_temp_bytes)
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, JsonSchema)]
pub struct Roles {
    pub forward: u64,
    pub backward: u64,
    pub workspace: u64,
    pub other: u64,
}

impl Roles {
    pub fn total(&self) -> u64 {
        self.forward
            .saturating_add(self.backward)
            .saturating_add(self.workspace)
            .saturating_add(self.other)
    }

    pub fn get(&self, role: Role) -> u64 {
        match role {
            Role::Forward => self.forward,
            Role::Backward => self.backward,
            Role::Workspace => self.workspace,
            Role::Other => self.other,
        }
    }

    pub fn add(&mut self, role: Role, bytes: u64) {
        let slot = match role {
            Role::Forward => &mut self.forward,
            Role::Backward => &mut self.backward,
            Role::Workspace => &mut self.workspace,
            Role::Other => &mut self.other,
        };
        *slot = slot.saturating_add(bytes);
    }
}

/// What a buffer is for, from the JAX name stack (`docs/diagnosis.md#roles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Forward activations kept for the backward pass (`jvp(`).
    Forward,
    /// Gradients and their temporaries (`transpose(`).
    Backward,
    /// Library scratch: an `s8` output of a custom-call.
    Workspace,
    Other,
}

/// How a buffer's allocation lives (XProf's groups, first match wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Parameter,
    Output,
    ThreadLocal,
    Constant,
    Temporary,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LiveBuffer {
    /// Defining instruction, with `{i}` when the buffer is a tuple element.
    pub name: String,
    pub opcode: String,
    pub shape: String,
    /// Padded bytes (what the allocator holds).
    pub bytes: u64,
    pub unpadded_bytes: u64,
    pub category: Category,
    pub role: Role,
    /// `path/file.py:123`, or empty.
    pub source: String,
    pub op_name: String,
    pub memory_space: i64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScanStack {
    pub shape: String,
    pub count: u64,
    pub bytes: u64,
    pub while_instruction: String,
    pub role: Role,
    /// Where the stacked values are written: the source line of the
    /// `dynamic-update-slice` in the loop body (`path/file.py:123`, or empty).
    pub source: String,
    /// That instruction's JAX op_name.
    pub op_name: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TimelinePoint {
    pub bytes: u64,
    pub instruction: String,
}

/// Runtime figures, all **measured** from allocator and execution events.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Runtime {
    pub allocators: Vec<AllocatorSummary>,
    pub executions: Vec<Execution>,
    /// Executions listed in `executions` may be fewer than happened (capped).
    pub execution_count: u64,
    pub retry: Retry,
    pub growth_per_execution_bytes: Option<i64>,
    pub growth_ratio_to_outputs: Option<f64>,
    pub in_use_at_selected_starts: Vec<u64>,
    /// Bytes in use in the device pool after its last event in the capture: whether
    /// growth across executions was still held when the capture ended.
    #[serde(default)]
    pub in_use_at_end_bytes: Option<u64>,
    pub live_at_last_execution: Vec<LiveGroup>,
    pub host_events_between_last_executions: Vec<HostEventGroup>,
    pub transfers: u64,
    pub kernels: u64,
    /// Device memory from the device plane (`memory_size`), when recorded.
    pub device_memory_bytes: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct AllocatorSummary {
    pub name: String,
    /// Whether it is a device's pool (what plans are compared against) or the pinned
    /// host pool (`xla_gpu_host_bfc`), decided once when allocators are read.
    pub kind: AllocatorKind,
    pub capacity_bytes: u64,
    pub peak_in_use_bytes: u64,
    pub peak_time_ps: i64,
    pub fragmentation_at_peak: f64,
    pub lifetime_peak_bytes: u64,
    pub allocations: u64,
    pub deallocations: u64,
    /// Bytes in use over time (time in ps, bytes), down-sampled, peak kept.
    pub timeline: Vec<(i64, u64)>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Execution {
    pub module: String,
    pub run_id: Option<i64>,
    pub start_ns: f64,
    pub duration_ns: f64,
    pub in_use_at_start_bytes: Option<u64>,
    pub launched_kernels: Option<bool>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Retry {
    pub count: u64,
    pub longest_ns: f64,
    pub total_ns: f64,
    /// Whether any execution that waited went on to launch kernels.
    pub any_execution_started_after: bool,
    /// The executions that waited, as `<module label> execution <n>`.
    #[serde(default)]
    pub waiting_executions: Vec<String>,
    /// The longest waits (up to 200), in time order, for the timeline.
    #[serde(default)]
    pub waits: Vec<RetryWait>,
}

/// One `AllocatorRetry` wait: the allocator found no free memory and waited for some
/// to be freed (**measured**).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct RetryWait {
    /// On the clock of [`Execution::start_ns`] and the allocator timelines.
    pub start_ns: f64,
    pub duration_ns: f64,
    /// The execution it waited in, as `<module label> execution <n>`, when known.
    pub execution: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LiveGroup {
    /// Who allocated the group, written in JSON as a sentence: `output of jit_step(3)
    /// executions 1–4`, `host-to-device transfer (DevicePut in $train.py:60 load)`,
    /// `allocated before the capture started`, `allocated outside any launch or transfer`.
    #[schemars(with = "String")]
    pub origin: LiveOrigin,
    pub bytes: u64,
    pub count: u64,
    /// Of `bytes`, what the selected module's last execution takes as its arguments
    /// (estimated: live arrays matched to its parameter sizes; for memory allocated
    /// before the capture, the parameter bytes no seen allocation accounts for).
    #[serde(default)]
    pub input_bytes: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HostEventGroup {
    pub name: String,
    pub count: u64,
    pub total_ns: f64,
}

/// One diagnosis line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Diagnosis {
    /// Stable identifier (`role_forward`, `no_donation`, …).
    pub id: DiagnosisId,
    /// The line's title, as every renderer shows it ("Mostly forward activations, kept
    /// for backward").
    pub title: String,
    pub label: Label,
    /// The line itself, with its figures.
    pub text: String,
    pub cause: String,
    pub fix: Option<String>,
    /// Estimated bytes the fix saves.
    pub saving_bytes: Option<u64>,
    pub cost: Option<String>,
    /// Whether the plan would then fit the capacity, when a capacity is known.
    pub fits_after: Option<bool>,
    /// How to check the estimate on the user's side.
    pub check: Option<String>,
    /// What the line is about when one id can appear several times (a scan loop's
    /// `while` instruction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What the finding is made of, when it is several things (the stacks of one scan
    /// loop): each with its figures, read from the plan.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<DiagnosisItem>,
}

/// One thing a diagnosis line is made of (a stack of a scan loop).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiagnosisItem {
    pub shape: String,
    /// How many buffers of this shape.
    pub count: u64,
    pub bytes: u64,
    pub role: Role,
    /// `path/file.py:123`, or empty.
    pub source: String,
    pub op_name: String,
}

/// A pasted OOM message, parsed and matched to the plan.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ErrorMatch {
    pub kind: String,
    pub requested_bytes: Option<u64>,
    pub capacity_bytes: Option<u64>,
    pub used_bytes: Option<u64>,
    pub tensorcore_bytes: Option<u64>,
    pub sparsecore_bytes: Option<u64>,
    pub matched: Option<String>,
    pub scenario: String,
}

/// Which pool an allocator is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AllocatorKind {
    /// A device's memory pool (`GPU_0_bfc`, a TPU's HBM).
    #[default]
    Device,
    /// Pinned host memory for transfers (`xla_gpu_host_bfc`, TF's `gpu_host_bfc`).
    Host,
}

impl AllocatorKind {
    /// XLA names its host pools `…host_bfc`; every other allocator is a device's.
    pub fn of_name(name: &str) -> Self {
        if name.contains("host") {
            AllocatorKind::Host
        } else {
            AllocatorKind::Device
        }
    }
}

/// Who allocated arrays that are live at the selected module's last execution.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LiveOrigin {
    /// Outputs of a module's executions, by their numbers among its executions.
    Outputs {
        module: String,
        executions: Vec<usize>,
    },
    /// A host-to-device transfer: its event and the user's Python frame around it.
    Transfer {
        event: String,
        frame: Option<String>,
    },
    /// Held before the allocator events begin: before the capture started, or before
    /// the history kept (`history_from_ps`) when older events were dropped.
    BeforeCapture { history_from_ps: Option<i64> },
    /// Allocated outside any launch or transfer.
    Other,
}

impl Serialize for LiveOrigin {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&super::present::live_origin(self))
    }
}

/// What the report concludes about the selected module.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
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
        }
    }
}

/// Every kind of diagnosis line (JSON `diagnosis[].id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
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
}

impl std::fmt::Display for DiagnosisId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl DiagnosisId {
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
        }
    }
}
