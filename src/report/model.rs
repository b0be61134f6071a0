//! The report model: everything the renderers (text, Markdown, JSON, the page) show,
//! computed once by the analysis. Its JSON form is a public contract
//! (`schema/oomlens-report.schema.json`): keys here are stable.
//!
//! Provenance of figures: everything under `plan` is **read** from the compiled plan,
//! everything under `runtime` is **measured** from runtime events, and each diagnosis
//! line carries its own label (savings are **estimated**).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::evidence::device_profile::{DeviceProfile, FrameGrowth};
use crate::evidence::message::OomMessage;

/// The report format's name and version, written as `schema`.
pub const SCHEMA: &str = "oomlens/1";

/// Writes a number as a JSON string (see [`ModuleReport::program_id`]).
fn as_string<S: serde::Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// Reads what [`as_string`] wrote (a number is taken too).
fn from_string<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Number(u64),
    }
    match Id::deserialize(deserializer)? {
        Id::Text(t) => t.parse().map_err(serde::de::Error::custom),
        Id::Number(n) => Ok(n),
    }
}

/// Where a figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    /// The label as reports write it (`measured`, `read`, `estimated`).
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Measured => "measured",
            Label::Read => "read",
            Label::Estimated => "estimated",
        }
    }
}

/// The whole output: one host, or several (`hosts`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// The report format, `oomlens/1`; a change that breaks readers gets a new one.
    pub schema: String,
    /// The tool and its version (`oomlens 0.1.0`).
    pub tool: String,
    /// One entry per host file analyzed. With one host, its fields are also the
    /// report's top level in the JSON (see `json.rs`).
    pub hosts: Vec<HostReport>,
    /// For a folder of several host files: one row per host file, in host order,
    /// analyzed or not (a file that could not be read is a row with its error, and has
    /// no entry in `hosts`). Empty for a single capture. See `docs/hosts.md`.
    #[serde(default)]
    pub hosts_summary: Vec<HostSummary>,
}

/// One host of a folder, in one row: what the cross-host summary compares
/// (`docs/hosts.md`). Every figure is the host report's own, with its label.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct HostSummary {
    /// The host: its file's name without `.xplane.pb` (what `--host` takes).
    pub host: String,
    /// The file's name in the folder.
    pub file: String,
    /// The file's size in bytes (0 when it could not be opened).
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkewField {
    /// `verdict`: another verdict than most hosts'.
    Verdict,
    /// `selected_module`: another module than most hosts'.
    SelectedModule,
    /// `plan_peak_bytes`, off the median by more than 10% and 1 MiB.
    PlanPeakBytes,
    /// `runtime_peak_bytes`, likewise.
    RuntimePeakBytes,
    /// `capacity_bytes`, likewise.
    CapacityBytes,
    /// `growth_per_execution_bytes`, likewise.
    GrowthPerExecutionBytes,
}

/// The analysis of one `<host>.xplane.pb`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct HostReport {
    /// The host's name: the file name without `.xplane.pb`, or as given.
    pub host: String,
    /// The file analyzed (its name, not its path).
    pub file: String,
    /// The file's size.
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
    /// What the runtime events say (**measured**), when the capture has any.
    pub runtime: Option<Runtime>,
    /// The device pool's capacity (measured): the first device allocator's, when
    /// allocator events were recorded. The figure plans are compared against.
    #[serde(default)]
    pub capacity_bytes: Option<u64>,
    /// The diagnosis lines, the most useful first: cause, fix, saving, cost.
    pub diagnosis: Vec<Diagnosis>,
    /// The out-of-memory message given (pasted, or found in a log), parsed, with the plan
    /// part its failed request matched.
    pub error: Option<ErrorReport>,
    /// Device memory profiles given beside (or instead of) a capture, in the order read
    /// (**measured**: what the program held when each was saved).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<DeviceProfile>,
    /// With two profiles or more: how the bytes made at each Python frame changed from
    /// the first profile to the last, largest change first (**measured**). Signed; they
    /// add up to the change of `total_bytes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub growth: Vec<FrameGrowth>,
    /// What the capture lacked or what could not be read, and how to get it.
    pub notes: Vec<Note>,
    /// Whether the file is cut before its host plane (`/host:CPU`, where allocator
    /// events and launches are recorded) was read whole. For the diagnosis only: the
    /// note `capture_truncated` says it in words.
    #[serde(skip)]
    pub host_plane_cut: bool,
    /// Planes seen, for the reader's orientation.
    pub planes: Vec<PlaneSummary>,
    /// When the profile started (ns since the Unix epoch), from the stat
    /// `profile_start_time` of the plane `Task Environment`: what puts the times of
    /// several hosts on one clock (`docs/hosts.md`). Not written to the JSON report,
    /// whose times stay relative to the start of the profile.
    #[serde(skip)]
    pub profile_start_ns: Option<u64>,
    /// The inputs the report joins, when it was given more than a capture (an error
    /// message, an XLA dump, device memory profiles), or no capture at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputFile>,
}

impl HostReport {
    /// Whether the report comes from a profiler capture (a capture always has planes,
    /// and only a capture has runtime events).
    pub fn has_capture(&self) -> bool {
        !self.planes.is_empty() || self.runtime.is_some()
    }
}

/// One input a joined report was built from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct InputFile {
    /// The file's name as given (`-` for standard input, `pasted text` for text handed
    /// in without a file).
    pub file: String,
    /// What it is, decided from its content.
    pub kind: InputKind,
    /// Its size.
    pub bytes: u64,
}

/// What an input is, decided from its content (see `inputs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// A profiler capture (`*.xplane.pb`, an XSpace protobuf).
    Capture,
    /// Text holding an out-of-memory message (a log, a pasted error).
    ErrorText,
    /// An XLA dump (`--xla_dump_to`): a folder, or its `module_NNNN.…` files.
    XlaDump,
    /// A JAX device memory profile (gzip'd pprof).
    DeviceProfile,
}

/// The verdict in one sentence, with the figures it quotes and their labels.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Headline {
    /// What the report concludes, in one word.
    pub verdict: Verdict,
    /// The sentence, e.g. "The step does not fit: needs 3.72 GiB, capacity 2.79 GiB".
    pub text: String,
    /// The figures quoted in `text`, in order.
    pub figures: Vec<HeadlineFigure>,
}

/// A figure the headline quotes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct HeadlineFigure {
    /// What the figure is: `needs`, `capacity`, `peak`, `growth_per_execution`, …
    pub name: String,
    /// The figure, in bytes.
    pub bytes: u64,
    /// As shown in `text` (`3.72 GiB`).
    pub shown: String,
    /// Where it comes from.
    pub label: Label,
}

/// A plane of the capture, for orientation.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PlaneSummary {
    /// The plane's name (`/host:CPU`, `/device:GPU:0`, `/host:metadata`).
    pub name: String,
    /// Its size in the file.
    pub bytes: u64,
    /// How many lines (threads, streams) it has.
    pub lines: usize,
}

/// What the capture lacked or what could not be read, and how to get it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    /// Stable identifier (`device_trace_incomplete`, `capture_ends_during_call`, …).
    pub id: String,
    /// What it means and what to do, in one or two sentences.
    pub text: String,
}

/// A module with a compiled plan in the capture.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ModuleReport {
    /// The HLO module's name (`jit_train_step`).
    pub name: String,
    /// The program id XLA gave the module (on TPU a 64-bit fingerprint). Written as a
    /// string in JSON: 64-bit ids do not fit a JavaScript number.
    #[serde(serialize_with = "as_string", deserialize_with = "from_string")]
    #[schemars(with = "String")]
    pub program_id: u64,
    /// `name(program_id)`, exactly as XProf names the module.
    pub label: String,
    /// How many times it executed in the capture (measured); 0 when no runtime events.
    pub executions: u64,
    /// Its compiled memory plan (**read**).
    pub plan: Plan,
    /// Where the plan was read, when the report joins an XLA dump (absent when every
    /// plan comes from the capture).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_source: Option<PlanFrom>,
}

/// Where a module's plan was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanFrom {
    /// The capture's `/host:metadata` plane.
    Capture,
    /// The XLA dump's `*after_optimizations.hlo.pb`: exactly the capture's analysis.
    DumpProto,
    /// Rebuilt from the XLA dump's text files (totals exact, the peak rebuilt).
    DumpText,
}

/// One module's compiled memory plan. All figures **read** from the plan.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
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
    /// Outputs in host memory (memory space 5).
    pub host_output_bytes: u64,
    /// Temporaries in host memory (memory space 5).
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
    /// Entry parameters in device memory.
    pub parameter_count: u64,
    /// Their bytes (equal to `argument_bytes`).
    pub parameter_bytes: u64,
    /// Parameters donated to outputs (`donate_argnums`).
    pub donated_parameter_count: u64,
    /// Their bytes.
    pub donated_bytes: u64,
    /// Outputs that are not donated parameters: what each execution adds.
    pub non_aliased_output_bytes: u64,
    /// Padded minus unpadded bytes at the peak.
    pub padding_bytes: u64,
    /// Instructions XLA's rematerialization made (named `….remat`).
    pub remat_instructions: u64,
    /// The temporary bytes live at the peak, by role.
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
    /// Whether the plan has a heap-simulator trace for device memory (small modules have none).
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

/// Bytes by role (see [`Role`]).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Roles {
    /// Forward activations kept for backward (`jvp(` in the name stack).
    pub forward: u64,
    /// Gradients and their temporaries (`transpose(`).
    pub backward: u64,
    /// Library scratch (an `s8` output of a custom-call).
    pub workspace: u64,
    /// Everything else.
    pub other: u64,
}

impl Roles {
    /// All roles together.
    pub fn total(&self) -> u64 {
        self.forward
            .saturating_add(self.backward)
            .saturating_add(self.workspace)
            .saturating_add(self.other)
    }

    /// The bytes of one role.
    pub fn get(&self, role: Role) -> u64 {
        match role {
            Role::Forward => self.forward,
            Role::Backward => self.backward,
            Role::Workspace => self.workspace,
            Role::Other => self.other,
        }
    }

    /// Adds bytes to a role.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Forward activations kept for the backward pass (`jvp(`).
    Forward,
    /// Gradients and their temporaries (`transpose(`).
    Backward,
    /// Library scratch: an `s8` output of a custom-call.
    Workspace,
    /// Anything else (inference, optimizer, unnamed).
    Other,
}

/// How a buffer's allocation lives (XProf's groups, first match wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// An entry parameter.
    Parameter,
    /// An output of the module (may outlive it).
    Output,
    /// Thread-local: on stacks, not in device memory.
    ThreadLocal,
    /// A constant of the module.
    Constant,
    /// A temporary in the preallocated block.
    Temporary,
}

/// A buffer live at the plan's peak (**read**).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LiveBuffer {
    /// Defining instruction, with `{i}` when the buffer is a tuple element.
    pub name: String,
    /// The defining instruction's opcode (`fusion`, `custom-call`).
    pub opcode: String,
    /// Its shape as XLA writes it (`f32[8,128,512]`), with layout padding when it has some.
    pub shape: String,
    /// Padded bytes (what the allocator holds).
    pub bytes: u64,
    /// The bytes without layout padding.
    pub unpadded_bytes: u64,
    /// How its allocation lives.
    pub category: Category,
    /// What it is for.
    pub role: Role,
    /// `path/file.py:123`, or empty.
    pub source: String,
    /// The JAX op_name of the instruction that makes it (`jit(step)/jvp()/dot_general`).
    pub op_name: String,
    /// The memory space (0: device, 5: host).
    pub memory_space: i64,
    /// The op names of other values in the same place (in-place ops such as a sort or
    /// a dynamic-update-slice write into their operand's buffer). For the diagnosis
    /// only: not part of the JSON report.
    #[serde(skip)]
    pub shared_by: Vec<String>,
}

/// Buffers a `lax.scan` loop stacks over its iterations (**read**).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScanStack {
    /// The stacked shape (`f32[6,8,128,512]`), the leading dimension the iterations.
    pub shape: String,
    /// How many buffers of this shape the loop stacks.
    pub count: u64,
    /// Their bytes together.
    pub bytes: u64,
    /// The `while` loop that stacks them (`while.14`).
    pub while_instruction: String,
    /// Forward (activations kept for backward) or backward (gradients).
    pub role: Role,
    /// Where the stacked values are written: the source line of the
    /// `dynamic-update-slice` in the loop body (`path/file.py:123`, or empty).
    pub source: String,
    /// That instruction's JAX op_name.
    pub op_name: String,
}

/// A point of the plan's heap along program order.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TimelinePoint {
    /// Heap in use, indefinite memory included.
    pub bytes: u64,
    /// The instruction at that point of program order.
    pub instruction: String,
}

/// Runtime figures, all **measured** from allocator and execution events.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Runtime {
    /// Every allocator seen, device pools first.
    pub allocators: Vec<AllocatorSummary>,
    /// Module executions (launches), in time order; the latest ones when capped.
    pub executions: Vec<Execution>,
    /// Executions listed in `executions` may be fewer than happened (capped).
    pub execution_count: u64,
    /// `AllocatorRetry` waits: the allocator found no free memory and waited.
    pub retry: Retry,
    /// Bytes in use added per execution of the selected module, between its first and last (signed).
    pub growth_per_execution_bytes: Option<i64>,
    /// That growth over the module's non-donated outputs (≈1: each execution keeps its outputs).
    pub growth_ratio_to_outputs: Option<f64>,
    /// Bytes in use at each start of the selected module.
    pub in_use_at_selected_starts: Vec<u64>,
    /// Bytes in use in the device pool after its last event in the capture: whether
    /// growth across executions was still held when the capture ended.
    #[serde(default)]
    pub in_use_at_end_bytes: Option<u64>,
    /// Arrays live at the selected module's last execution, grouped by who allocated them.
    pub live_at_last_execution: Vec<LiveGroup>,
    /// Host events between the selected module's last two executions, by name: what ran in between.
    pub host_events_between_last_executions: Vec<HostEventGroup>,
    /// Host-to-device transfers seen.
    pub transfers: u64,
    /// Device kernels (events on device planes) seen.
    pub kernels: u64,
    /// Device memory from the device plane (`memory_size`), when recorded.
    pub device_memory_bytes: Option<u64>,
}

/// One allocator's figures over the capture (**measured**).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct AllocatorSummary {
    /// The allocator (`GPU_0_bfc`, `TPU:0`, `xla_gpu_host_bfc`).
    pub name: String,
    /// Whether it is a device's pool (what plans are compared against) or the pinned
    /// host pool (`xla_gpu_host_bfc`), decided once when allocators are read.
    pub kind: AllocatorKind,
    /// The pool's capacity: in use plus available, at the peak.
    pub capacity_bytes: u64,
    /// The most bytes in use during the capture (the runtime's reservation included on TPU), as XProf's memory profile reports it.
    pub peak_in_use_bytes: u64,
    /// When that peak was reached (ps, capture clock).
    pub peak_time_ps: i64,
    /// The allocator's fragmentation at the peak (0–1).
    pub fragmentation_at_peak: f64,
    /// The allocator's own peak since the process started (`peak_bytes_in_use`).
    pub lifetime_peak_bytes: u64,
    /// Allocation events.
    pub allocations: u64,
    /// Deallocation events.
    pub deallocations: u64,
    /// Bytes in use over time (time in ps, bytes), down-sampled, peak kept.
    pub timeline: Vec<(i64, u64)>,
}

/// One execution (launch) of a module (**measured**).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Execution {
    /// The module's label (`jit_step(12)`).
    pub module: String,
    /// The launch's run id, when the runtime gives one.
    pub run_id: Option<i64>,
    /// Start, ns on the capture clock.
    pub start_ns: f64,
    /// How long the launch took on the host.
    pub duration_ns: f64,
    /// Bytes in use in the device pool when it started.
    pub in_use_at_start_bytes: Option<u64>,
    /// Whether the device trace holds kernels of this launch; none when the capture has no device events to tell.
    pub launched_kernels: Option<bool>,
}

/// `AllocatorRetry` waits over the capture (**measured**).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Retry {
    /// How many waits.
    pub count: u64,
    /// The longest wait.
    pub longest_ns: f64,
    /// All waits together.
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
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetryWait {
    /// On the clock of [`Execution::start_ns`] and the allocator timelines.
    pub start_ns: f64,
    /// How long it waited.
    pub duration_ns: f64,
    /// The execution it waited in, as `<module label> execution <n>`, when known.
    pub execution: Option<String>,
}

/// Arrays live at the selected module's last execution, with one origin (**measured**).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LiveGroup {
    /// Who allocated the group, written in JSON as a sentence: `output of jit_step(3)
    /// executions 1–4`, `host-to-device transfer (DevicePut in $train.py:60 load)`,
    /// `allocated before the capture started`, `allocated outside any launch or transfer`.
    #[schemars(with = "String")]
    pub origin: LiveOrigin,
    /// Bytes live in the group.
    pub bytes: u64,
    /// Arrays in the group.
    pub count: u64,
    /// Of `bytes`, what the selected module's last execution takes as its arguments
    /// (estimated: live arrays matched to its parameter sizes; for memory allocated
    /// before the capture, the parameter bytes no seen allocation accounts for).
    #[serde(default)]
    pub input_bytes: u64,
}

/// Host events of one name.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HostEventGroup {
    /// The host event's name.
    pub name: String,
    /// How many.
    pub count: u64,
    /// Their time together.
    pub total_ns: f64,
}

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
    /// What to do, when something can be done.
    pub fix: Option<String>,
    /// Estimated bytes the fix saves.
    pub saving_bytes: Option<u64>,
    /// What the fix costs (time, a recompile, …).
    pub cost: Option<String>,
    /// Whether the plan would then fit the capacity, when a capacity is known.
    pub fits_after: Option<bool>,
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

/// Which pool an allocator is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
        /// The module's label.
        module: String,
        /// The executions, 1-based among the module's.
        executions: Vec<usize>,
    },
    /// A host-to-device transfer: its event and the user's Python frame around it.
    Transfer {
        /// The transfer event's name.
        event: String,
        /// The user's Python frame around it, when the capture has it.
        frame: Option<String>,
    },
    /// Held before the allocator events begin: before the capture started, or before
    /// the history kept (`history_from_ps`) when older events were dropped.
    BeforeCapture {
        /// When the kept history begins, if older events were dropped.
        history_from_ps: Option<i64>,
    },
    /// Allocated outside any launch or transfer.
    Other,
    /// Read back from a report's JSON, which keeps the sentence only (see
    /// [`crate::report::present::live_origin`]).
    Shown(String),
}

impl<'de> Deserialize<'de> for LiveOrigin {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(LiveOrigin::Shown)
    }
}

impl Serialize for LiveOrigin {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&super::present::live_origin(self))
    }
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
