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

mod diagnosis;
mod plan;
mod runtime;

pub use diagnosis::*;
pub use plan::*;
pub use runtime::*;

/// The report format's name and version, written as `schema`.
pub const SCHEMA: &str = "oomlens/1";

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
    /// When two figures quoted could be read as one (the plan's peak and the pool's
    /// measured peak in use), which is which and why they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
