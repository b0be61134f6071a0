//! The runtime in the report: allocators, executions and what they held, all
//! **measured** from runtime events.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Runtime figures, all **measured** from allocator and execution events.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Runtime {
    /// Every allocator seen: device pools, then host pools, each in natural order
    /// (`TPU:2` before `TPU:10`).
    pub allocators: Vec<AllocatorSummary>,
    /// Module executions (launches), in time order; the latest ones when capped.
    pub executions: Vec<Execution>,
    /// Executions listed in `executions` may be fewer than happened (capped).
    pub execution_count: u64,
    /// `AllocatorRetry` waits: the allocator found no free memory and waited.
    pub retry: Retry,
    /// Bytes in use added per execution of the selected module, between its first and last
    /// (signed): the step most executions show. None when fewer than two starts were
    /// measured, or when the series goes up and down without a trend (see
    /// `docs/runtime-events.md`).
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
    /// The buffers live in each device pool during the selected module's last
    /// execution, one band each (as PyTorch's memory_viz draws them); absent when no
    /// allocator events cover it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_bands: Option<ExecutionBands>,
}

/// The buffers live during one execution, per device pool (**measured**): each from
/// its allocation to its free, paired by address.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ExecutionBands {
    /// The execution, as `<module label> execution <n>`.
    pub execution: String,
    /// Its start, on the clock of [`Execution::start_ns`].
    pub start_ns: f64,
    /// Its end (on the host).
    pub end_ns: f64,
    /// Device pools in natural order (`TPU:0` before `TPU:1`), those with a buffer
    /// live in the window.
    pub devices: Vec<DeviceBands>,
}

/// One device pool's buffers live during the execution.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DeviceBands {
    /// The allocator (`GPU_0_bfc`, `TPU:0`), as in [`AllocatorSummary::name`].
    pub allocator: String,
    /// The largest buffers by bytes × time live in the window (at most 256), in
    /// allocation order.
    pub bands: Vec<Band>,
    /// Buffers live in the window that are not among `bands`.
    pub smaller_count: u64,
    /// Bytes in use not in a band — the smaller buffers, the runtime's reservation,
    /// memory allocated before the history kept — at the window's start and after
    /// each of the pool's events in it: (ns, bytes, of which the runtime's
    /// reservation, `bytes_reserved`); down-sampled to 1000 points, the highest of
    /// each run kept. Added to the bands live at that time, it is the pool's bytes in
    /// use.
    pub other_in_use: Vec<(f64, u64, u64)>,
}

/// One buffer: an allocation paired with its free (**measured**).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Band {
    /// When it was allocated (before the window's start for a buffer already live).
    pub start_ns: f64,
    /// When it was freed; none when still live at the end of the history.
    pub end_ns: Option<f64>,
    /// Its chunk's bytes.
    pub bytes: u64,
    /// Where it sits in the stack when allocated: the bytes of the bands allocated
    /// before it and still live then.
    pub base_bytes: u64,
    /// Allocated before the window (`before`), allocated and freed in it
    /// (`temporary`), or allocated in it and still live at its end (`kept`).
    pub kind: BandKind,
    /// Who allocated it: `<module label> execution <n>`, a transfer, or
    /// `outside any launch or transfer`.
    pub source: String,
    /// Its shape, when the allocator event names it (`f32[5,1024]`, layout left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// Its element type, when the event names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// The op the event names (`tf_op`), when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// The allocator's region (`region_type`), when the event names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
}

/// When a band's buffer lived, relative to the execution's window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BandKind {
    /// Allocated before the window and live at its start (arguments, state).
    #[default]
    Before,
    /// Allocated and freed within the window.
    Temporary,
    /// Allocated within the window and live at its end (outputs).
    Kept,
}

impl Runtime {
    /// The device pool the report's figures are measured in: the device allocator
    /// with the largest peak (the first, in the listed order, of those tied).
    pub fn device_pool(&self) -> Option<&AllocatorSummary> {
        self.allocators
            .iter()
            .filter(|a| a.kind == AllocatorKind::Device)
            .reduce(|best, a| {
                if a.peak_in_use_bytes > best.peak_in_use_bytes {
                    a
                } else {
                    best
                }
            })
    }
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
    /// `allocated before the capture started`, `allocated outside any launch or transfer`,
    /// `reserved by the runtime (not arrays: …)`.
    #[schemars(with = "String")]
    pub origin: LiveOrigin,
    /// Bytes live in the group.
    pub bytes: u64,
    /// Arrays in the group; 0 when they were not seen one by one (allocated before the
    /// capture, or the runtime's reservation).
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
    /// Not arrays: what the runtime reserved for itself (`bytes_reserved`; on TPU the
    /// running programs' stack and scratch), part of the bytes in use.
    RuntimeReserved,
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
        serializer.collect_str(&crate::report::present::live_origin(self))
    }
}
