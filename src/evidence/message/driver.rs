//! The GPU driver refusing memory outside XLA's (or TensorFlow's) allocator:
//! StreamExecutor's `failed to allocate 7.35G (7889485824 bytes) from device:
//! CUDA_ERROR_OUT_OF_MEMORY` (ROCm: `HIP_ERROR_OutOfMemory`, `hipError_t(1002)`), pinned
//! host memory (`failed to alloc 2304 bytes on host: …`, `could not allocate pinned host
//! memory of size: N`), a context that cannot be created (`failed call to
//! cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY; total memory reported: N`), and a
//! library's own allocation (`operation hipGetLastError() failed: out of memory`).
//!
//! Allocators that retry smaller print one line per try, largest first: the first is
//! the request (the scanner keeps it, see `scan`).

use super::draft::{set, Draft};
use super::fields::{after, count_after};
use super::model::{add_usage, AllocatorStats, OomKind, UsageItem};
use super::units;

/// Phrases of a driver failure (the scan's triggers include them).
pub const TRIGGERS: [&str; 18] = [
    "CUDA_ERROR_OUT_OF_MEMORY",
    "HIP_ERROR_OutOfMemory",
    "hipErrorOutOfMemory",
    "hipError_t(1002)",
    "bytes on host",
    "could not allocate pinned host memory",
    "failed: out of memory",
    "cudaErrorMemoryAllocation",
    // MIOpen's workspace.
    "Memory not available to allocate buffer",
    // A CUDA or HIP runtime call's error, printed as `call(…): out of memory`.
    "): out of memory",
    // cuDNN failing to start, most often for want of memory beside a preallocated pool
    // (the next line may say how much was free).
    "Could not create cudnn handle",
    // TensorFlow 1.x's lower-case wording of the same.
    "could not create cudnn handle",
    // cuBLAS the same: `failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED`, or
    // `…: CUBLAS_STATUS_NOT_INITIALIZED`, which TensorFlow's next line says "may be due to
    // OOM (cublas needs some free memory when you initialize it …)".
    "CUBLAS_STATUS_ALLOC_FAILED",
    "Failure to initialize cublas may be due to OOM",
    // StreamExecutor's newer CUDA executor: `Failed to allocate device memory of 20.8KiB
    // (21248 bytes): INTERNAL: CUDA error: : CUDA_ERROR_UNKNOWN`, retrying smaller.
    "Failed to allocate device memory of",
    // NCCL's own buffers, taken from the driver beside the framework's pool: `NCCL WARN
    // Cuda failure 'out of memory'`.
    "Cuda failure 'out of memory'",
    // The CUDA runtime's error as PyTorch and others raise it: `RuntimeError: CUDA
    // error: out of memory`.
    "CUDA error: out of memory",
    // XLA's and TensorFlow's `cuda_async` allocator, a stream-ordered pool the driver
    // keeps: `gpu_async_0 cuMemAllocAsync failed to allocate N bytes`.
    "cuMemAllocAsync failed to allocate",
];

/// A total the driver reports when it cannot read the device (`2^64 − 1`, or a
/// negative number printed unsigned) is no size: anything from a pebibyte up.
const NO_SIZE: u64 = 1 << 50;

/// A driver failure, or `None` when `body` is not one.
pub fn headline(body: &str) -> Option<Draft> {
    if !TRIGGERS.iter().any(|t| body.contains(t)) {
        return None;
    }
    let mut draft = Draft::new(OomKind::Driver, true);
    let m = &mut draft.msg;
    let request = after(body, "failed to allocate ")
        .or_else(|| after(body, "allocate device memory of "))
        .or_else(|| after(body, "Could not allocate "))
        .or_else(|| after(body, "failed to alloc "))
        .or_else(|| after(body, "pinned host memory of size:"))
        .or_else(|| after(body, "to allocate buffer:"));
    m.requested_bytes = request
        .and_then(|r| units::size_exact_prefix(r, true))
        .map(|s| s.0);
    if body.contains("on host") || body.contains("pinned host memory") {
        m.memory_space = Some("host".into());
    }
    m.capacity_bytes = count_after(body, "total memory reported:").filter(|&t| t < NO_SIZE);
    // The `cuda_async` allocator is the framework's own pool, kept by the driver: its
    // failure is the program's request, as BFC's would be, not memory taken outside it.
    if let Some((before, _)) = body.split_once("cuMemAllocAsync failed") {
        m.kind = OomKind::Short;
        let name = before.trim_end().rsplit(' ').next().unwrap_or("");
        if name.contains('_') && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            m.allocator = Some(AllocatorStats::named(name));
        }
    }
    cuda_reported(&mut draft, body);
    mempool_attribute(&mut draft, body);
    let m = &mut draft.msg;
    m.device_ordinal = after(body, "device ordinal ")
        .and_then(super::short::leading_u32)
        .or_else(|| bracketed_ordinal(body));
    m.error_code = status(body);
    // IREE's HAL takes the program's own buffers straight from the driver (no pool in
    // between): its failure is the program's request, not memory outside a pool.
    if body.contains("native function hal.") {
        m.kind = OomKind::Short;
    }
    draft.echo = body.contains("could not allocate pinned host memory");
    draft.last_try_echoable = !draft.echo;
    Some(draft)
}

/// The `cuda_async` allocator's failure goes on: `Reported by CUDA: Free memory/Total
/// memory: 31784960/25298927616`, then its `Stats:` block (BFC's fields, `Limit:` first
/// on the header's line). Returns whether `body` was such a line of `draft`'s.
pub fn block_line(draft: &mut Draft, body: &str) -> bool {
    let pooled = draft
        .msg
        .allocator
        .as_ref()
        .is_some_and(AllocatorStats::is_cuda_async);
    if !pooled || draft.msg.kind != OomKind::Short {
        return false;
    }
    cuda_reported(draft, body)
        || mempool_attribute(draft, body)
        || super::bfc::open_stats_of_pool(draft, body)
}

/// `CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: 8455716864`: the pool's attributes, on lines
/// of their own or (unprefixed, so joined to it) on the failure's. Returns whether
/// `body` held one.
fn mempool_attribute(draft: &mut Draft, body: &str) -> bool {
    let Some(a) = draft.msg.allocator.as_mut() else {
        return false;
    };
    let slots = [
        (
            "CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:",
            &mut a.mempool_reserved_bytes,
        ),
        (
            "CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:",
            &mut a.mempool_reserved_high_bytes,
        ),
        (
            "CU_MEMPOOL_ATTR_USED_MEM_CURRENT:",
            &mut a.mempool_used_bytes,
        ),
        (
            "CU_MEMPOOL_ATTR_USED_MEM_HIGH:",
            &mut a.mempool_used_high_bytes,
        ),
    ];
    let mut found = false;
    for (key, slot) in slots {
        if let Some(count) = count_after(body, key) {
            set(slot, Some(count));
            found = true;
        }
    }
    found
}

/// `Free memory/Total memory: F/T`, what the driver reported when it refused: the
/// device's free memory and its size. Returns whether `body` held it.
fn cuda_reported(draft: &mut Draft, body: &str) -> bool {
    let Some((free, total)) =
        after(body, "Free memory/Total memory:").and_then(|r| r.trim().split_once('/'))
    else {
        return false;
    };
    let count = |s: &str| units::integer(s.split_whitespace().next().unwrap_or(""));
    let m = &mut draft.msg;
    set(&mut m.free_bytes, count(free));
    set(&mut m.capacity_bytes, count(total).filter(|&t| t < NO_SIZE));
    true
}

/// The device ordinal newer StreamExecutor logs print in brackets before the failure:
/// `cuda_executor.cc:1182] [0] Failed to allocate device memory of …`.
fn bracketed_ordinal(body: &str) -> Option<u32> {
    let (before, _) = body.split_once("] Failed to allocate device memory")?;
    before.rsplit_once('[')?.1.parse().ok()
}

/// The driver's status code as printed (`CUDA_ERROR_OUT_OF_MEMORY`, `HIP_ERROR_OutOfMemory`,
/// `CUDA_ERROR_UNKNOWN`).
fn status(body: &str) -> Option<String> {
    super::model::DRIVER_STATUS.iter().find_map(|prefix| {
        let at = body.find(prefix)?;
        let code = body.get(at..)?;
        let end = code
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(code.len());
        code.get(..end).map(super::fields::bounded)
    })
}

/// The size an IREE VM trace line asks of `hal.device.queue.alloca` (its last operand:
/// `…, %i39(3075), %i292(4294964224))`): the request that a later `while invoking native
/// function hal.device.queue.alloca` failure is about.
pub fn iree_alloca_size(body: &str) -> Option<u64> {
    let call = after(body, "hal.device.queue.alloca(")?;
    // The call's arguments end at the bracket that closes its own (more may be joined
    // after it).
    let mut depth = 1usize;
    let end = call.char_indices().find_map(|(i, c)| {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        (depth == 0).then_some(i)
    })?;
    let last = call.get(..end)?.strip_suffix(')')?;
    units::integer(last.rsplit('(').next()?)
}

/// IREE's allocator statistics, one line per heap (`DEVICE_LOCAL:    466140272B peak /
/// 1216B allocated /   1216B freed /   0B live`), as usage items named `HEAP figure`.
/// Empty when `body` holds none.
pub fn iree_heap_usage(body: &str) -> Vec<UsageItem> {
    let mut usage = Vec::new();
    // Read on every line of a log: the keys are constants, nothing is allocated unless
    // a heap's line is there.
    for (heap, key) in [
        ("HOST_LOCAL", "HOST_LOCAL:"),
        ("DEVICE_LOCAL", "DEVICE_LOCAL:"),
    ] {
        let Some(rest) = after(body, key) else {
            continue;
        };
        // Four figures separated by `/`; the line ends after the fourth.
        for part in rest.split('/').take(4) {
            let Some((bytes, len)) = units::size_prefix(part, false) else {
                break;
            };
            let Some(what) = part.get(len..).and_then(super::fields::word) else {
                break;
            };
            add_usage(&mut usage, &format!("{heap} {what}"), bytes);
        }
    }
    usage
}

/// A device's pool as the framework announces it before any failure: TensorFlow's
/// `Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 7524 MB
/// memory)`, XLA's `XLA backend will use up to N bytes on device 0 for BFCAllocator`
/// (older: `XLA backend allocating N bytes on device 0 for BFCAllocator`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DevicePool {
    pub ordinal: Option<u32>,
    pub bytes: Option<u64>,
}

/// The pool a log line announces, if it is such a line.
pub fn device_pool(body: &str) -> Option<DevicePool> {
    // TensorFlow 1.x before 1.5: `Creating TensorFlow device (/gpu:0) -> (device: 0, …)`,
    // with no size; from 2.5: `Created device /job:localhost/replica:0/task:0/device:GPU:0
    // with 22455 MB memory:  -> device: 0, …`.
    let announced = after(body, "Created TensorFlow device (")
        .or_else(|| after(body, "Creating TensorFlow device ("))
        .or_else(|| after(body, "Created device /job:"));
    if let Some(rest) = announced {
        let ordinal = after(rest, "device:GPU:")
            .or_else(|| after(rest, "/gpu:"))
            .and_then(super::short::leading_u32);
        let bytes = after(rest, " with ").and_then(|r| {
            units::size_prefix(r, false)
                .filter(|&(_, len)| r.get(len..).is_some_and(|t| t.starts_with(" memory")))
                .map(|s| s.0)
        });
        return Some(DevicePool { ordinal, bytes });
    }
    let rest = after(body, "XLA backend will use up to ")
        .or_else(|| after(body, "XLA backend allocating "))?;
    rest.contains("for BFCAllocator").then(|| DevicePool {
        ordinal: after(rest, "on device ").and_then(super::short::leading_u32),
        bytes: units::size_exact_prefix(rest, true).map(|s| s.0),
    })
}

/// The device's memory as the framework reads it when it finds the device:
/// TensorFlow's `Total memory: 7.92GiB` and `Free memory: 190.31MiB` lines (later
/// `totalMemory: 11.17GiB freeMemory: 10.91GiB`, then `deviceMemorySize: 10.76GiB`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceMemory {
    pub total: Option<u64>,
    pub free: Option<u64>,
    /// The device they are of, when the lines before named it (`Found device 1 with
    /// properties:`).
    pub ordinal: Option<u32>,
}

/// The device whose properties TensorFlow lists next: `Found device 1 with properties:`.
pub fn found_device(body: &str) -> Option<u32> {
    let rest = after(body, "Found device ")?;
    rest.contains("with properties")
        .then(|| super::short::leading_u32(rest))
        .flatten()
}

/// The device memory a log line states, if it is such a line.
pub fn device_memory(body: &str) -> Option<DeviceMemory> {
    let figure = |keys: &[&str]| {
        keys.iter()
            .find_map(|key| units::size_prefix(after(body, key)?, false).map(|s| s.0))
    };
    let mut memory = DeviceMemory {
        total: figure(&["Total memory:", "totalMemory:", "deviceMemorySize:"]),
        free: figure(&["Free memory:", "freeMemory:"]),
        ordinal: None,
    };
    // cuDNN's, after it failed to start: `Memory usage: 7438598144 bytes free,
    // 8589410304 bytes total.`
    if let Some(usage) = after(body, "Memory usage: ") {
        memory.free = units::size_exact_prefix(usage, true).map(|s| s.0);
        memory.total = usage
            .split_once(", ")
            .and_then(|(_, t)| units::size_exact_prefix(t, true))
            .map(|s| s.0);
    }
    (memory != DeviceMemory::default()).then_some(memory)
}

/// Whether two driver failures are tries of one request, or the same failure again:
/// the same memory (allocators retry smaller; workers, or pinned-host buffers one after
/// another, fail alike).
pub fn is_retry_of(first: &Draft, next: &Draft) -> bool {
    let (a, b) = (&first.msg, &next.msg);
    a.kind == OomKind::Driver
        && b.kind == OomKind::Driver
        && a.memory_space == b.memory_space
        // A failure that states its size after one that did not (the error's summary
        // quoted before the log line): the log line says more.
        && !(a.requested_bytes.is_none() && b.requested_bytes.is_some())
}

/// At most this many later tries are kept.
const MAX_RETRIES: usize = 64;

/// Records `next`, a later try of `first`'s request. TensorFlow's pinned-host allocator
/// prints each failure twice (`failed to alloc N bytes on host`, then `could not
/// allocate pinned host memory of size: N`): the echo is not another try.
pub fn add_retry(first: &mut Draft, next: &Draft) {
    let Some(size) = next.msg.requested_bytes else {
        return;
    };
    let m = &mut first.msg;
    let last = m.retried_requests_bytes.last().copied();
    if next.echo && last.or(m.requested_bytes) == Some(size) && first.last_try_echoable {
        first.last_try_echoable = false;
        return;
    }
    first.last_try_echoable = !next.echo;
    if m.retried_requests_bytes.len() < MAX_RETRIES {
        m.retried_requests_bytes.push(size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cuda_async_pool_is_the_programs_own() {
        let d = headline("gpu_async_3 cuMemAllocAsync failed to allocate 131108848800 bytes: CUDA_ERROR_OUT_OF_MEMORY CU_MEMPOOL_ATTR_USED_MEM_HIGH: 174143212460      # 162.2 GiB").unwrap();
        assert_eq!(d.msg.kind, OomKind::Short);
        assert_eq!(d.msg.requested_bytes, Some(131_108_848_800));
        let a = d.msg.allocator.as_ref().unwrap();
        assert_eq!(a.name, "gpu_async_3");
        assert_eq!(a.mempool_used_high_bytes, Some(174_143_212_460));
        let mut d = d;
        assert!(block_line(
            &mut d,
            "Reported by CUDA: Free memory/Total memory: 31784960/25298927616"
        ));
        assert_eq!(d.msg.free_bytes, Some(31_784_960));
        assert_eq!(d.msg.capacity_bytes, Some(25_298_927_616));
        assert!(block_line(&mut d, "Stats: Limit:   22892838912"));
        assert_eq!(d.msg.allocator.unwrap().limit_bytes, Some(22_892_838_912));
        // Another driver failure takes no pool's lines.
        let mut other = headline(
            "failed to allocate 2.00G (2147483648 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY",
        )
        .unwrap();
        assert!(!block_line(&mut other, "Stats: Limit:   22892838912"));
    }

    #[test]
    fn reads_the_size_of_an_iree_alloca() {
        let call = "[module.tf2onnx$async+0000395A]    %r9 = vm.call @hal.device.queue.alloca(%r8(!hal.device/0x0x55d5a0d56930), %i266(4294967295), %r5(null), %i192(0), %i39(3075), %i292(4294964224))";
        assert_eq!(iree_alloca_size(call), Some(4_294_964_224));
        let joined = format!("{call} --- [[ iree_hal_allocator_t memory statistics ]]");
        assert_eq!(iree_alloca_size(&joined), Some(4_294_964_224));
        let stats = "HOST_LOCAL:         1536B peak /            0B allocated /            0B freed /            0B live DEVICE_LOCAL:    466140272B peak /         1216B allocated /         1216B freed /            0B live";
        let usage = iree_heap_usage(stats);
        assert_eq!(usage.len(), 8);
        assert_eq!(
            (usage[4].name.as_str(), usage[4].bytes),
            ("DEVICE_LOCAL peak", 466_140_272)
        );
        assert_eq!(usage[7].name, "DEVICE_LOCAL live");
        assert_eq!(
            iree_alloca_size("vm.call @hal.device.queue.alloca(%r8(x)"),
            None
        );
    }

    #[test]
    fn reads_the_bracketed_device_ordinal() {
        let d = headline("E0624 16:54:38.775269    1496 cuda_executor.cc:1182] [3] Failed to allocate device memory of 14.39GiB (15453913088 bytes): RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory").unwrap();
        assert_eq!(
            (d.msg.device_ordinal, d.msg.requested_bytes),
            (Some(3), Some(15_453_913_088))
        );
        assert_eq!(
            bracketed_ordinal("[1] Failed to allocate device memory of 1B"),
            Some(1)
        );
        assert_eq!(
            bracketed_ordinal("x] [a] Failed to allocate device memory"),
            None
        );
    }

    #[test]
    fn reads_driver_failures() {
        let d = headline("E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to allocate 32.00M (33554432 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(33_554_432));
        assert_eq!(d.msg.memory_space, None);
        assert_eq!(
            d.msg.error_code.as_deref(),
            Some("CUDA_ERROR_OUT_OF_MEMORY")
        );
        let d = headline("failed to alloc 2304 bytes on host: CUDA_ERROR_UNKNOWN").unwrap();
        assert!(d.msg.is_driver_fault());
        assert_eq!(
            (d.msg.requested_bytes, d.msg.memory_space.as_deref()),
            (Some(2304), Some("host"))
        );
        let d = headline("Internal: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY; total memory reported: 18446744073709551615").unwrap();
        assert_eq!(
            (d.msg.device_ordinal, d.msg.capacity_bytes),
            (Some(0), None)
        );
        let d = headline("failed call to cuCtxCreate: CUDA_ERROR_OUT_OF_MEMORY; total memory reported: 11721506816").unwrap();
        assert_eq!(d.msg.capacity_bytes, Some(11_721_506_816));
        assert!(
            headline("failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED").is_none()
        );
    }

    #[test]
    fn reads_device_pools() {
        let p = device_pool("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1189] Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 7524 MB memory) -> physical GPU (device: 0, name: Vega 10 XL/XT [Radeon RX Vega 56/64], pci bus id: 0000:03:00.0)").unwrap();
        assert_eq!((p.ordinal, p.bytes), (Some(0), Some(7524 << 20)));
        let p = device_pool(
            "XLA backend will use up to 12738093056 bytes on device 1 for BFCAllocator.",
        )
        .unwrap();
        assert_eq!((p.ordinal, p.bytes), (Some(1), Some(12_738_093_056)));
        let p = device_pool("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1030] Creating TensorFlow device (/gpu:1) -> (device: 1, name: GeForce GTX 1060 6GB, pci bus id: 0000:01:00.0)").unwrap();
        assert_eq!((p.ordinal, p.bytes), (Some(1), None));
        let p = device_pool("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1928] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22455 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:82:00.0, compute capability: 8.6").unwrap();
        assert_eq!((p.ordinal, p.bytes), (Some(0), Some(22_455 << 20)));
        assert!(device_pool("an unrelated line").is_none());
    }

    #[test]
    fn reads_device_memory() {
        let total = device_memory("Total memory: 7.92GiB").unwrap();
        assert_eq!(total.total, Some(8_504_035_246));
        assert_eq!(
            device_memory("Free memory: 190.31MiB").unwrap().free,
            Some(199_554_499)
        );
        let both = device_memory("name: GeForce GTX 1080 Ti major: 6 minor: 1 memoryClockRate(GHz): 1.582 pciBusID: 0000:01:00.0 totalMemory: 11.00GiB freeMemory: 9.10GiB").unwrap();
        assert_eq!(
            (both.total, both.free),
            (Some(11 << 30), Some(9_771_050_598))
        );
        assert!(device_memory("Total hbm usage >= 8.83G:").is_none());
        let cudnn =
            device_memory("Memory usage: 7438598144 bytes free, 8589410304 bytes total.").unwrap();
        assert_eq!(
            (cudnn.free, cudnn.total),
            (Some(7_438_598_144), Some(8_589_410_304))
        );
    }
}
