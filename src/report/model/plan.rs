//! A module's compiled memory plan in the report: all of it **read**.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
