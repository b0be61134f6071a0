//! What an out-of-memory message states, as a JSON contract. Every figure is in bytes,
//! converted 1024-based from the units the message prints (see `units`); a field the
//! message does not state is `null` (or empty for strings and lists), never a guess.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which printer wrote the message: the format family decides which fields can be filled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OomKind {
    /// XLA:TPU's compile-time check: `Ran out of memory in memory space hbm. Used X of Y
    /// hbm. Exceeded hbm capacity by Z.` with its usage summary and largest allocations
    /// (error E1000; also other memory spaces such as `vmem`, see `memory_space`).
    TpuCompileHbm,
    /// XLA:TPU's split of HBM between TensorCore and SparseCore programs: `TPU TensorCore
    /// Hbm usage: X, SparseCore Hbm usage Y, exceeding available bytes: Z`.
    TpuTcSc,
    /// XLA:TPU giving up before compiling: `Aborting compilation early because it's
    /// unlikely to have enough memory. Requires X, has Y available.`
    TpuEarlyAbort,
    /// XLA:GPU's buffer assignment: `Out of memory while trying to allocate N bytes.`
    /// followed by `BufferAssignment stats:` and `Peak buffers:`.
    GpuBufferAssignment,
    /// The BFC allocator's runtime log (`Allocator (GPU_0_bfc) ran out of memory trying
    /// to allocate …`), with its chunk dump and `Stats:` block when printed.
    BfcRuntime,
    /// The TPU runtime failing to place a buffer or a program: `Attempting to allocate X.
    /// That was not possible. There are Y free.`, `Attempting to reserve X at the bottom of
    /// memory …`, `Allocation (size=N) would exceed memory (size=M)`.
    TpuRuntime,
    /// A kernel's scoped memory over the core's limit: Mosaic's `Scoped allocation with
    /// size X and limit Y exceeded scoped vmem limit by Z`, Pallas on GPU's `Shared
    /// memory size limit exceeded: requested N, available: M`, Triton's `out of
    /// resource: shared memory, Required: N, Hardware limit: M`.
    ScopedMemory,
    /// The CUDA or ROCm driver refusing memory outside XLA's allocator: `failed to
    /// allocate X (N bytes) from device: CUDA_ERROR_OUT_OF_MEMORY` (or
    /// `HIP_ERROR_OutOfMemory`, `hipError_t(1002)`), `failed to alloc N bytes on host`,
    /// `failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY; total memory
    /// reported: N`, a library's `… failed: out of memory`.
    Driver,
    /// AWS Neuron's runtime failing to place a tensor in a NeuronCore's memory: `Failed
    /// to alloc DEVICE memory: N`, `Failed to allocate X (usage: tensors) on ND 0:NC 0,
    /// current utilization: * total: Y`, `Failed to allocate N bytes on DEVICE for tensor`.
    NeuronRuntime,
    /// A one-line message: a bare `RESOURCE_EXHAUSTED`, `Out of memory while trying to
    /// allocate N bytes.` without its buffer assignment, `Out of memory allocating N
    /// bytes.`, `Failed to allocate request for …`, TensorFlow's `OOM when allocating
    /// tensor with shape[…]`; also a lone rematerialization warning (see `remat`).
    #[default]
    Short,
    /// A line that says memory ran out in a wording not read field by field (the C
    /// library's `Cannot allocate memory` from XLA:CPU's JIT, `std::bad_alloc`, the
    /// host's `Out of memory: Killed process`, an `… out of memory` error of a library):
    /// what it states is read where it can be, the rest is not guessed.
    Other,
}

/// The framework whose run printed the text, as its lines name it (see `framework`):
/// the diagnosis words its fixes in that framework's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    /// JAX, or a library on it (Flax, Keras 3 on JAX): `jax`, `jaxlib`'s
    /// `XlaRuntimeError`, `XLA_PYTHON_CLIENT_…`.
    Jax,
    /// TensorFlow or Keras: its source paths in the log (`tensorflow/core/…`),
    /// `ResourceExhaustedError`, `OOM when allocating tensor`.
    Tensorflow,
    /// TensorFlow.js (`@tensorflow/tfjs-node`), whose Node binding prints TensorFlow's
    /// logs.
    TensorflowJs,
    /// PyTorch, PyTorch/XLA or TorchInductor: `torch.OutOfMemoryError`, `… is allocated
    /// by PyTorch`, `torch_xla`.
    Pytorch,
}

/// The out-of-memory message found in a text, figure by figure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OomMessage {
    /// The format family of the message (which printer wrote it).
    pub kind: OomKind,
    /// The framework the text names (its paths, error classes, wordings), whichever line
    /// names it; null when it names none.
    pub framework: Option<Framework>,
    /// The error code when printed: XLA's (`E1000` in `RESOURCE_EXHAUSTED: E1000:
    /// CompileTimeHbmOom: …`), the Neuron compiler's (`XCG815`), the driver's status
    /// (`CUDA_ERROR_OUT_OF_MEMORY`, `CUDA_ERROR_UNKNOWN`).
    pub error_code: Option<String>,
    /// The memory space named by a TPU message (`hbm`, `vmem`).
    pub memory_space: Option<String>,
    /// The size of the allocation that failed (`trying to allocate N`, `Attempting to
    /// allocate X`, `Attempting to reserve X`, `Allocation (size=N)`); the exact count
    /// when one is printed beside the rounded one.
    pub requested_bytes: Option<u64>,
    /// The operation that asked for the failed allocation (`requested by op Mul`,
    /// TensorFlow's `[Op:Mul]`).
    pub requested_op: Option<String>,
    /// The compiled program the failure names (`Error loading program 'jit_f'`,
    /// `[executable_name='jit_f']`): the module that ran out, when no plan is given.
    pub program: Option<String>,
    /// The shape of the tensor that failed, as printed (`[2,480,640,66]`, or an XLA shape
    /// such as `u8[327680,327680]{1,0:T(8,128)(4,1)}`).
    pub requested_shape: Option<String>,
    /// The element type TensorFlow names for that tensor (`float`).
    pub requested_dtype: Option<String>,
    /// The failed tensor's bytes when the message gives it only as a shape and an
    /// element type (TensorFlow's `OOM when allocating tensor with shape[…] and type
    /// float`): the elements times the element's size, an estimate (the allocator rounds
    /// up, and may add alignment).
    pub requested_bytes_from_shape: Option<u64>,
    /// The device the failure names (`on device ordinal 0`, `/device:GPU:0`).
    pub device_ordinal: Option<u32>,
    /// The bytes the program needs in that memory: TPU `Used X of Y`, early-abort
    /// `Requires X`, GPU `total allocation`, TPU runtime `Currently allocated`.
    pub used_bytes: Option<u64>,
    /// The memory's capacity: TPU `of Y hbm`, `has Y available`, `exceeding available
    /// bytes: Y`, `HBM capacity Y`, `would exceed memory (size=Y)`, the BFC `Limit:`.
    pub capacity_bytes: Option<u64>,
    /// `Exceeded hbm capacity by Z`.
    pub exceeded_by_bytes: Option<u64>,
    /// Free memory at the failure: TPU runtime `There are Y free`.
    pub free_bytes: Option<u64>,
    /// The device's free memory when the framework found it, before this process took
    /// any (TensorFlow's device properties, `freeMemory: 5.83GiB`), for a failure later in
    /// the run that names no allocator: what other processes left to this one.
    pub free_at_start_bytes: Option<u64>,
    /// What the TPU runtime could reserve in one piece: `… and Z reservable`. Below the
    /// request while the free memory is not, the free memory is in pieces.
    pub reservable_bytes: Option<u64>,
    /// What earlier reservations already hold at the bottom of the TPU's memory: the
    /// `Y reserved` of `There are X free, Y reserved, and Z reservable`.
    pub reserved_at_bottom_bytes: Option<u64>,
    /// What the TPU runtime could reserve if its free memory were compacted: `If
    /// fragmentation is eliminated, the maximum reservable bytes would be Z`. Below the
    /// request, compaction would not help: the memory is taken, not in pieces.
    pub compacted_reservable_bytes: Option<u64>,
    /// TPU `Total hbm usage >= T` (reserved + program + arguments, a lower bound).
    pub total_bytes: Option<u64>,
    /// TPU `TensorCore Hbm usage`.
    pub tensorcore_bytes: Option<u64>,
    /// TPU `SparseCore Hbm usage`.
    pub sparsecore_bytes: Option<u64>,
    /// Memory the runtime keeps for itself: the `reserved` line of TPU `Total hbm usage`,
    /// `Top-of-Memory reserved`.
    pub reserved_bytes: Option<u64>,
    /// The program's own need: TPU `program` / `Program hbm requirement` / `Program
    /// requirement`.
    pub program_bytes: Option<u64>,
    /// What the program reserves for itself: the `reserved` line of TPU's `Program hbm
    /// requirement` block (not the usage summary's, which is `reserved_bytes`).
    pub program_reserved_bytes: Option<u64>,
    /// The program's globals: that block's `global` line.
    pub global_bytes: Option<u64>,
    /// Its kernels' scoped scratch: that block's `scoped` line.
    pub scoped_bytes: Option<u64>,
    /// Its overlays: that block's `overlays` line.
    pub overlays_bytes: Option<u64>,
    /// Program inputs: TPU `arguments` (null when printed as `unknown size`), GPU
    /// `parameter allocation`.
    pub arguments_bytes: Option<u64>,
    /// Program outputs: TPU `Output size`, GPU `maybe_live_out allocation`.
    pub output_bytes: Option<u64>,
    /// GPU `constant allocation`.
    pub constant_bytes: Option<u64>,
    /// Temporaries: TPU `HLO temp`, GPU `preallocated temp allocation`.
    pub temp_bytes: Option<u64>,
    /// TPU padding of the temporaries: `Padded (B)` minus `Unpadded (A)` on the `HLO temp`
    /// line.
    pub padding_bytes: Option<u64>,
    /// Fragmentation: the figure in TPU `…% fragmentation (F)`, GPU `total fragmentation`.
    pub fragmentation_bytes: Option<u64>,
    /// GPU `preallocated temp fragmentation`.
    pub temp_fragmentation_bytes: Option<u64>,
    /// What the program's outputs share with its arguments (donated or aliased): TPU
    /// `shares X with arguments`, PyTorch/XLA's `Aliased Input size`.
    pub aliased_bytes: Option<u64>,
    /// The later failed requests of the same driver or allocator, in order: allocators
    /// that retry at 90% of the last size print one line per try, and a failure may
    /// repeat (several workers, several pinned-host buffers). The first try is
    /// `requested_bytes`. At most 64 are kept.
    pub retried_requests_bytes: Vec<u64>,
    /// A request the BFC allocator warned about as *not a failure* (`… with
    /// freed_by_count=0. The caller indicates that this is not a failure`), before the
    /// failure the message is about: memory was already short then.
    pub advisory_request_bytes: Option<u64>,
    /// The requests of the BFC warnings of that kind after the first, in the order
    /// printed, before any failure (a warning printed again counts again: the same
    /// scratch asked for again). At most 64 are kept.
    pub later_advisory_requests_bytes: Vec<u64>,
    /// The large host allocations warnings report, one per warning line in the order
    /// printed (a line printed again right after itself, its timestamp included, is one;
    /// the same warning logged at another time is another): TensorFlow's
    /// `Allocation of N exceeds 10% of (free) system memory`, tcmalloc's `large alloc N
    /// bytes`. At most 64 are kept.
    pub host_allocations_bytes: Vec<u64>,
    /// The program's arguments and outputs as XLA:GPU's scheduler counts them: `The byte
    /// size of input/output arguments (N) exceeds the base limit (M)`…
    pub io_bytes: Option<u64>,
    /// …and the memory the scheduler may plan for (M): above it, the arguments and
    /// outputs alone leave no room for the program's temporaries.
    pub scheduler_limit_bytes: Option<u64>,
    /// PyTorch's caching allocator at the failure: `X is allocated by PyTorch`.
    pub pytorch_allocated_bytes: Option<u64>,
    /// `Y is reserved by PyTorch but unallocated`: cached, free to PyTorch, not to others.
    pub pytorch_reserved_unallocated_bytes: Option<u64>,
    /// `Z reserved in total by PyTorch` (PyTorch before 2.1, which gave no unallocated
    /// figure): its cache in all, the tensors' blocks and the free ones.
    pub pytorch_reserved_bytes: Option<u64>,
    /// What the failing process holds on the device, its framework's memory and the
    /// rest: `Process 1234 has X memory in use`, `Including non-PyTorch memory, this
    /// process has X memory in use`.
    pub process_used_bytes: Option<u64>,
    /// What other processes hold on the device, as PyTorch lists them beside this
    /// process's own (`Process 12622 has 948.00 MiB memory in use.` next to `this process
    /// has …`), summed.
    pub other_processes_bytes: Option<u64>,
    /// What the driver refused the allocator when it tried to grow its pool just before
    /// the failure (`failed to allocate 663.34M (695559424 bytes) from device:
    /// CUDA_ERROR_OUT_OF_MEMORY` before BFC's `ran out of memory trying to allocate`).
    pub pool_growth_refused_bytes: Option<u64>,
    /// A banked memory (Tenstorrent DRAM): what the buffer needs in each bank (`each
    /// bank needs to store X B`).
    pub per_bank_request_bytes: Option<u64>,
    /// The size of one bank (`bank size is Y B`).
    pub bank_bytes: Option<u64>,
    /// The TPU runtime's nearest reservation in the way of a reserve at the bottom of
    /// memory: where it sits (`The nearest obstacle is at X from the bottom`)…
    pub obstacle_offset_bytes: Option<u64>,
    /// …and its size (`with size Y`).
    pub obstacle_bytes: Option<u64>,
    /// The runtime's own account of the memory when it failed, item by item, as it
    /// prints it: Neuron's `current utilization` (`tensors`, `runtime`, `dma rings`; its
    /// `total` is `used_bytes`), IREE's allocator statistics per heap (`DEVICE_LOCAL
    /// peak`, `DEVICE_LOCAL live`, …). At most 32 are kept.
    pub usage: Vec<UsageItem>,
    /// The allocations the message lists, in its order: TPU `Largest program allocations
    /// in hbm`, GPU `Peak buffers` (at most 512; see `omitted_allocations`).
    pub allocations: Vec<MessageAllocation>,
    /// Listed allocations beyond the 512 kept.
    pub omitted_allocations: u64,
    /// The BFC allocator's name and `Stats:` block, when printed.
    pub allocator: Option<AllocatorStats>,
    /// XLA's rematerialization warning (`Can't reduce memory use below …`), the last one in
    /// the text, whatever message was chosen.
    pub remat: Option<RematWarning>,
    /// Whether the chosen message is only a warning: no failure was found, only lines
    /// such as BFC's `freed_by_count` ("not a failure") or a rematerialization warning.
    pub advisory: bool,
    /// Whether the message was cut short: a listed allocation without its closing
    /// `=====` line, a listing header without entries, a buffer-assignment summary without
    /// its `total allocation` line, or a BFC dump without its `Stats:` block.
    pub truncated: bool,
}

/// How a driver's status codes begin (`CUDA_ERROR_OUT_OF_MEMORY`, `HIP_ERROR_OutOfMemory`).
pub(super) const DRIVER_STATUS: [&str; 2] = ["CUDA_ERROR_", "HIP_ERROR_"];

impl OomMessage {
    /// Whether the driver failed with a status other than a shortage of memory
    /// (`CUDA_ERROR_UNKNOWN` from a setup it cannot use): a fault, not an out-of-memory
    /// failure, whatever the line around it says.
    pub fn is_driver_fault(&self) -> bool {
        let Some(code) = self.error_code.as_deref() else {
            return false;
        };
        let driver_status = DRIVER_STATUS.iter().any(|p| code.starts_with(p));
        self.kind == OomKind::Driver
            && driver_status
            && !code.contains("OUT_OF_MEMORY")
            && !code.contains("OutOfMemory")
    }

    /// Whether this is a warning of a large host allocation (TensorFlow's `Allocation
    /// of N exceeds 10% of system memory`, tcmalloc's `large alloc N bytes`): RAM, not
    /// the accelerator's memory.
    pub fn is_host_allocation_warning(&self) -> bool {
        self.kind == OomKind::Short
            && self.memory_space.as_deref() == Some("host")
            && self.remat.is_none()
    }
}

/// One item of a runtime's account of its memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UsageItem {
    /// The item as the runtime names it (`tensors`, `DEVICE_LOCAL live`).
    pub name: String,
    /// Its size, as printed.
    pub bytes: u64,
}

/// At most this many usage items are kept.
pub const MAX_USAGE: usize = 32;

/// Adds an item to `usage` unless it is full or already holds one of that name.
pub fn add_usage(usage: &mut Vec<UsageItem>, name: &str, bytes: u64) {
    if usage.len() < MAX_USAGE && !usage.iter().any(|u| u.name == name) {
        usage.push(UsageItem {
            name: super::fields::bounded(name),
            bytes,
        });
    }
}

/// One allocation of a TPU listing or one GPU peak buffer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessageAllocation {
    /// `Size:` of the allocation (padded, on TPU).
    pub size_bytes: u64,
    /// TPU `Unpadded size:`.
    pub unpadded_bytes: Option<u64>,
    /// TPU `Extra memory due to padding: X`.
    pub padding_bytes: Option<u64>,
    /// The expansion factor printed after the padding (`(32.0x expansion)`).
    pub padding_expansion: Option<f64>,
    /// `Shape:` (or GPU `Entry Parameter Subshape:`), layout and tiling as printed.
    pub shape: String,
    /// `op_name` of the `Operator:` line (the JAX name stack).
    pub op_name: String,
    /// `op_type` of the `Operator:` line (the primitive, or a TensorFlow op type).
    pub op_type: String,
    /// `source_file:source_line` of the `Operator:` line (the file alone without a line).
    pub source: String,
    /// `XLA label:` (TPU) or `XLA Label:` (GPU): the HLO instruction, as printed (XLA
    /// shortens long ones with `...`).
    pub xla_label: String,
    /// TPU `Allocation type:` (`HLO temp`, `scoped`, …); `parameter` for a GPU buffer
    /// printed as `Entry Parameter Subshape`.
    pub allocation_type: String,
}

/// The BFC allocator's state as its log prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AllocatorStats {
    /// The allocator's name (`GPU_0_bfc`).
    pub name: String,
    /// `Limit:`: the bytes the allocator may hold.
    pub limit_bytes: Option<u64>,
    /// `InUse:` (or `Sum Total of in-use chunks` when no `Stats:` block is printed).
    pub in_use_bytes: Option<u64>,
    /// `MaxInUse:`.
    pub max_in_use_bytes: Option<u64>,
    /// `NumAllocs:`.
    pub num_allocs: Option<u64>,
    /// `MaxAllocSize:`.
    pub max_alloc_size_bytes: Option<u64>,
    /// `Reserved:`.
    pub reserved_bytes: Option<u64>,
    /// `PeakReserved:`.
    pub peak_reserved_bytes: Option<u64>,
    /// `LargestFreeBlock:`.
    pub largest_free_block_bytes: Option<u64>,
    /// What the allocator took from the device in regions: `total_region_allocated_bytes_`
    /// (`Total size in pool` in newer logs). Far above `InUse`, the free memory is
    /// inside the pool, in chunks.
    pub region_allocated_bytes: Option<u64>,
    /// What the allocator may still take from the device: `available bytes` (`available
    /// size`) of the same line.
    pub available_bytes: Option<u64>,
    /// The size of the next region it would ask the device for:
    /// `curr_region_allocation_bytes_`.
    pub next_region_bytes: Option<u64>,
    /// The `cuda_async` pool's attributes, printed after its failure: what it holds from
    /// the device now (`CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT`).
    pub mempool_reserved_bytes: Option<u64>,
    /// The most it has held so far (`CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH`).
    pub mempool_reserved_high_bytes: Option<u64>,
    /// What of it the program's buffers use now (`CU_MEMPOOL_ATTR_USED_MEM_CURRENT`).
    pub mempool_used_bytes: Option<u64>,
    /// The most they have used so far (`CU_MEMPOOL_ATTR_USED_MEM_HIGH`).
    pub mempool_used_high_bytes: Option<u64>,
    /// The failed request as the allocator rounded it up (`(rounded to N)`), when the
    /// text also states it exactly (XLA's `Out of memory while trying to allocate N
    /// bytes`, which is then `requested_bytes`).
    pub rounded_request_bytes: Option<u64>,
    /// The allocator's picture of its pool (`****__x*`), when printed; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picture: Option<PoolPicture>,
    /// The largest size classes of the dump's `Summary of in-use Chunks by size` (`2
    /// Chunks of size 13200000000 totalling 24.59GiB`), largest first, at most
    /// [`MAX_CHUNK_CLASSES`].
    pub largest_in_use: Vec<ChunkClass>,
}

/// One size class of in-use chunks: how many chunks of one size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChunkClass {
    /// The size of each chunk of the class.
    pub size_bytes: u64,
    /// How many chunks of that size are in use.
    pub count: u64,
}

/// Size classes of in-use chunks kept: the largest, which say whether a few arrays hold
/// the pool.
pub const MAX_CHUNK_CLASSES: usize = 8;

/// The BFC allocator's picture of its pool: a row of (normally 100) characters drawn over
/// the regions it holds, each `*` or `x` where chunks are in use, `_` where they are free.
/// It covers the regions the allocator took, not its limit: a full picture says what was
/// taken is in use, not that the device is full.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PoolPicture {
    /// Characters drawn in use (`*`, `x`).
    pub in_use: u32,
    /// Characters drawn free (`_`).
    pub free: u32,
}

impl PoolPicture {
    /// The characters of one printed row.
    pub fn of_row(row: &str) -> PoolPicture {
        let free = row.bytes().filter(|&b| b == b'_').count();
        let drawn = row.len();
        PoolPicture {
            in_use: u32::try_from(drawn - free).unwrap_or(u32::MAX),
            free: u32::try_from(free).unwrap_or(u32::MAX),
        }
    }

    /// All the characters drawn.
    pub fn drawn(&self) -> u32 {
        self.in_use.saturating_add(self.free)
    }

    /// The share of the pool drawn free, in percent.
    pub fn free_percent(&self) -> f64 {
        match self.drawn() {
            0 => 0.0,
            n => f64::from(self.free) * 100.0 / f64::from(n),
        }
    }
}

impl AllocatorStats {
    /// An allocator known only by the name a line printed (`… by allocator GPU_0_bfc`).
    pub fn named(name: impl Into<String>) -> Self {
        AllocatorStats {
            name: name.into(),
            ..AllocatorStats::default()
        }
    }

    /// Its name as a report says it: `GPU_0_bfc`, or "the allocator" when none was printed.
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            "the allocator"
        } else {
            &self.name
        }
    }

    /// Whether it is the `cuda_async` pool (`gpu_async_0`): stream-ordered, kept by the
    /// driver, which prints BFC's `Stats:` fields but places the blocks itself.
    pub fn is_cuda_async(&self) -> bool {
        self.name.contains("async")
    }
}

/// `Can't reduce memory use below X (N bytes) by rematerialization; only reduced to Y (M
/// bytes), down from Z (K bytes) originally`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RematWarning {
    /// The memory limit rematerialization aimed for (X). Negative when the program's
    /// arguments and outputs alone already exceed the memory: no temporary fits at all.
    pub limit_bytes: Option<i64>,
    /// What it reached (Y): the program's memory after rematerialization.
    pub reduced_to_bytes: Option<u64>,
    /// What the program needed before (Z); older XLA does not print it.
    pub original_bytes: Option<u64>,
}
