//! The program is not what filled memory: it needs far less than the device has, yet
//! memory ran out, so something else held it — another process, another framework in
//! the same process, preallocation, or arrays the program keeps alive. Never advise
//! shrinking such a program; say how to find the holder.

use crate::diagnosis::line::{advice, pct, Context, Line};
use crate::diagnosis::oom;
use crate::evidence::message::{
    AllocatorStats, Framework, OomKind, OomMessage, CONSTANT_OP, JIT_CODE_OP, PROGRAM_LOAD_OP,
};
use crate::report::model::{DiagnosisId, Label};
use crate::units::size;

use super::apis;

/// A program needing less than this is not what fills a GPU: the GPUs JAX runs on have
/// a few GiB at least.
pub const SMALL_PROGRAM: u64 = 1 << 30;
/// With the pool known, a program needing under this share of it is not what filled it.
pub const SMALL_SHARE: f64 = 25.0;
/// A GPU pool this small: the framework could take no more of the device, others hold
/// the rest (another process, the display).
pub const SMALL_POOL: u64 = 1 << 30;
/// The least memory a TPU core has (v2: 8 GiB of HBM per core).
const SMALLEST_TPU_MEMORY: u64 = 8 << 30;
/// A pinned host buffer this small fails only when the host or the driver is exhausted
/// by something else.
const TINY_HOST_REQUEST: u64 = 1 << 20;
/// A device request under a page: no allocator fails one unless the memory was already
/// full before it.
const TINY_REQUEST: u64 = 4 << 10;

fn line(framework: Framework, text: String, cause: &str) -> Line {
    Line::new(DiagnosisId::HeldElsewhere, Label::Read, text, cause)
        .fix(apis::find_the_holder(framework))
        .cost("none: the program itself needs no change")
}

/// The selected module ran out, yet needs a small share of the pool: the report's
/// first cause, before any advice to shrink the program.
pub fn held_elsewhere(cx: &Context<'_>) -> Option<Line> {
    in_plan(cx).or_else(|| in_message(cx))
}

fn in_plan(cx: &Context<'_>) -> Option<Line> {
    let (m, capacity) = (cx.module?, cx.capacity?);
    let need = m.plan.total_bytes;
    if !cx.ran_out || need == 0 || pct(need, capacity) >= SMALL_SHARE {
        return None;
    }
    let text = format!(
        "{} needs only {} (read) of the pool's {} (measured, {:.1}%), yet memory ran out: the program is not what filled it",
        m.label,
        size(need),
        size(capacity),
        pct(need, capacity)
    );
    Some(line(
        Framework::Jax,
        text,
        "memory was held by something else when the module ran: arrays kept from earlier steps, other programs' outputs, or another process",
    ))
}

fn in_message(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message.filter(|m| !m.advisory)?;
    // A kernel's scoped memory is a core's, not the device's (`scoped`).
    if cx.module.is_some() || super::scoped::is_scoped(m) {
        return None;
    }
    match m.kind {
        OomKind::GpuBufferAssignment => small_program(m),
        OomKind::Driver => driver(m),
        _ if m.requested_op.as_deref() == Some(CONSTANT_OP) => constant(m),
        _ if m.requested_op.as_deref() == Some(JIT_CODE_OP) => Some(jit_code(m)),
        OomKind::TpuRuntime if m.requested_op.as_deref() == Some(PROGRAM_LOAD_OP) => {
            program_load(m)
        }
        _ if m.pytorch_allocated_bytes.is_some() => {
            another_process_tipped(m).or_else(|| outside_pytorch(m))
        }
        _ => tiny_request(m)
            .or_else(|| small_pool(m))
            .or_else(|| pool_could_not_grow(m))
            .or_else(|| async_pool_starved(m))
            .or_else(|| growth_refused(m))
            .or_else(|| resident_arrays(m)),
    }
}

/// What PyTorch's caching allocator holds at the failure: allocated and cached (the
/// older wording states it whole, as reserved in total).
pub fn pytorch_holds(m: &OomMessage) -> Option<u64> {
    let allocated = m.pytorch_allocated_bytes?;
    let cached = m.pytorch_reserved_unallocated_bytes.unwrap_or(0);
    Some(
        m.pytorch_reserved_bytes
            .unwrap_or(allocated.saturating_add(cached)),
    )
}

/// What PyTorch's cache holds unallocated: as stated, or (older wording) what it reserved
/// in total less what its tensors hold.
pub fn pytorch_cached(m: &OomMessage) -> Option<u64> {
    m.pytorch_reserved_unallocated_bytes.or_else(|| {
        let (reserved, allocated) = (m.pytorch_reserved_bytes?, m.pytorch_allocated_bytes?);
        Some(reserved.saturating_sub(allocated))
    })
}

/// PyTorch's message says what its allocator holds: the device's memory less what is
/// free and less that is held by others (another process, or this process outside
/// PyTorch). When others hold a quarter of the device or more, and without them the
/// request would fit, they are what filled it, however much PyTorch holds besides
/// (12.95 GiB outside a 31.95 GiB cache on a 44.98 GiB GPU, a 304 MiB request:
/// heldout44/08).
fn outside_pytorch(m: &OomMessage) -> Option<Line> {
    let (capacity, free, ours) = (oom::capacity(m)?, m.free_bytes?, pytorch_holds(m)?);
    let others = capacity.saturating_sub(free).saturating_sub(ours);
    let lacking = oom::request(m).map_or(0, |r| r.saturating_sub(free));
    if pct(others, capacity) < SMALL_SHARE || others < lacking {
        return None;
    }
    let text = format!(
        "{} of the device's {} is held outside PyTorch's allocator (read: {} in all, {} free, {} held by PyTorch): another process, or this process outside PyTorch",
        size(others),
        size(capacity),
        size(capacity),
        size(free),
        size(ours)
    );
    Some(line(
        apis::of(m),
        text,
        "memory held by something other than this program's tensors: another process on the device, or another framework or library in this process",
    ))
}

/// Other processes on the device hold at least what the request lacked, and as much as
/// half the request: without them it would have fit (a 938 MiB request with 49 MiB free
/// beside another process's 948 MiB).
fn another_process_tipped(m: &OomMessage) -> Option<Line> {
    let (request, free, others) = (oom::request(m)?, m.free_bytes?, m.other_processes_bytes?);
    let lacking = request.checked_sub(free).filter(|&l| l > 0)?;
    if others < lacking || others < request / 2 {
        return None;
    }
    let text = format!(
        "other processes hold {} of the device (read) and {} is free: the {} requested lacked {}, which they hold; without them it fits",
        size(others),
        size(free),
        size(request),
        size(lacking)
    );
    Some(line(
        apis::of(m),
        text,
        "memory held by another process on the same device (a second run, a notebook kernel, another stage of the pipeline)",
    ))
}

/// The BFC allocator asked the driver for a new region of at least the request, under
/// its limit, and the driver refused: the device had no more to give. What the message
/// says when its allocator's statistics are missing (`pool_could_not_grow` reads them).
fn growth_refused(m: &OomMessage) -> Option<Line> {
    let refused = m.pool_growth_refused_bytes?;
    let request = oom::request(m)?;
    let name = m
        .allocator
        .as_ref()
        .map_or("the allocator", |a| a.display_name());
    let text = format!(
        "the driver refused {name} {} when it tried to grow its pool (read), and then the {} request failed: the device had no more memory to give it",
        size(refused),
        size(request)
    );
    Some(line(
        apis::of(m),
        text,
        "the device's memory was taken by something else when the allocator tried to grow: another process, another framework or session in this process, or a library's own memory",
    ))
}

/// A chunk this share of the allocator's limit or more is one large array, not a
/// layer's activation.
const RESIDENT_OF_LIMIT: f64 = 10.0;
/// At most this many such chunks: a handful of arrays, not a model's weights layer by
/// layer.
const MAX_RESIDENT: u64 = 8;

/// A handful of chunks of a tenth of the pool or more hold most of what is in use, and
/// the request that failed is small beside them: arrays the program keeps on the device
/// for the whole run (a dataset placed whole, copies of it), not the step, fill it.
fn resident_arrays(m: &OomMessage) -> Option<Line> {
    let a = m.allocator.as_ref()?;
    let (limit, in_use, request) = (a.limit_bytes?, a.in_use_bytes?, oom::request(m)?);
    let large = |bytes: u64| pct(bytes, limit) >= RESIDENT_OF_LIMIT;
    let resident: Vec<_> = a
        .largest_in_use
        .iter()
        .filter(|c| large(c.size_bytes))
        .collect();
    let count: u64 = resident.iter().map(|c| c.count).sum();
    let bytes = resident
        .iter()
        .map(|c| c.size_bytes.saturating_mul(c.count))
        .fold(0, u64::saturating_add);
    if count == 0 || count > MAX_RESIDENT || bytes * 2 < in_use || large(request) {
        return None;
    }
    let sizes: Vec<String> = resident
        .iter()
        .map(|c| format!("{} × {}", c.count, size(c.size_bytes)))
        .collect();
    let text = format!(
        "{count} arrays ({}) hold {} of the {} in use in {} (read), and the {} request that failed is small beside them: a few large arrays kept on the device for the whole run fill the pool, not the step",
        sizes.join(", "),
        size(bytes),
        size(in_use),
        a.display_name(),
        size(request)
    );
    Some(
        Line::new(
            DiagnosisId::HeldElsewhere,
            Label::Read,
            text,
            "arrays the program keeps on the device: a dataset or inputs placed whole, copies kept from earlier steps",
        )
        .fix(apis::keep_data_on_host(apis::of(m)))
        .cost("a host-to-device copy per batch"),
    )
}

/// XLA could not place one of the program's constants when it loaded it: memory was
/// full before the program ran. Unless rematerialization already said the program
/// needs more than the memory: then the program, not what held the memory, is the
/// story (a GenCast step at 49.49 GiB against a 33.28 GiB limit fails on a constant).
fn constant(m: &OomMessage) -> Option<Line> {
    if super::message::remat_gave_up(m) {
        return None;
    }
    let text = format!(
        "XLA could not place a constant of {} while loading the program (read): memory was full before the program ran, so what filled it is not this program's run",
        size(m.requested_bytes?)
    );
    Some(line(
        apis::of(m),
        text,
        "memory held when the program was loaded: arrays kept from earlier steps or other programs, preallocation, or another process",
    ))
}

/// XLA:CPU's JIT could not map memory for a compiled program's code. Each program it
/// compiles maps its code anew, so a run that compiles again and again (a function
/// traced anew each step or restart, shapes that change) makes mappings until Linux's
/// per-process limit (`vm.max_map_count`, 65530 by default) refuses one, however much
/// RAM is free: a mapping of a few KiB fails on machines with hundreds of GB
/// (openfe#1534, jax#11923 after hundreds of episodes). A full host fails the same way.
fn jit_code(m: &OomMessage) -> Line {
    let what = match m.requested_bytes {
        Some(b) => format!("{} for", size(b)),
        None => "memory for".to_owned(),
    };
    let text = format!(
        "XLA:CPU's compiler could not map {what} compiled code (read): not the program's arrays, but the process unable to make one more memory mapping, which each compiled program's code takes; a run that compiles again and again reaches Linux's limit on mappings (vm.max_map_count) with RAM to spare, and a full host fails the same way (estimated)"
    );
    let how = |text: &str, cost: Option<&str>| advice(text, cost);
    Line::new(
        DiagnosisId::HeldElsewhere,
        Label::Estimated,
        text,
        "the process's memory mappings (or the host's RAM) used up by what it compiled and kept before, not by this program's need",
    )
    .fixes(vec![
        how("count the compilations (jax.config.update('jax_log_compiles', True)): a function compiled again and again — a jax.jit or a loop body built anew each call (a new closure or functools.partial), shapes that change every step — should be jitted once, with static or padded shapes", Some("none at run time")),
        how("watch the process's mappings while it runs (wc -l /proc/<pid>/maps) against the limit (sysctl vm.max_map_count); if the count is legitimate, raise the limit (sysctl -w vm.max_map_count=262144)", Some("a root setting")),
        how("if the host's RAM is what is full (free -h), find what the process keeps across steps (results appended to a list, caches, jax.live_arrays())", None),
    ])
}

/// The TPU runtime could not load a compiled program that needs a small share of the
/// chip: what fills the memory is what was placed before it. A large program failing to
/// load is the program with its arguments and outputs not fitting (`aggregate_too_big`).
fn program_load(m: &OomMessage) -> Option<Line> {
    let request = m.requested_bytes?;
    let share = match oom::capacity(m) {
        Some(capacity) if pct(request, capacity) < SMALL_SHARE => format!(
            "{:.1}% of the chip's {} (read)",
            pct(request, capacity),
            size(capacity)
        ),
        Some(_) => return None,
        None if request < SMALLEST_TPU_MEMORY / 4 => format!(
            "under a quarter of any TPU core's memory ({} at least)",
            size(SMALLEST_TPU_MEMORY)
        ),
        None => return None,
    };
    let free = m
        .free_bytes
        .map(|f| format!(" with {} free", size(f)))
        .unwrap_or_default();
    let compaction = m
        .compacted_reservable_bytes
        .filter(|&c| c < request)
        .map(|c| {
            format!(
                "; compacting would not help: at most {} could be reserved",
                size(c)
            )
        })
        .unwrap_or_default();
    let text = format!(
        "the TPU runtime could not load a compiled program of {} (read){free}{compaction}; it needs only {share}, so what fills the memory is what was placed before it",
        size(request)
    );
    let line = Line::new(
        DiagnosisId::HeldElsewhere,
        Label::Read,
        text,
        "arrays placed on the chip before the program was loaded (weights, a KV cache or buffers a serving framework sizes to fill the memory, earlier steps' outputs) or other programs loaded before it leave no room for its code and scratch space",
    );
    Some(
        line.fix("leave room for the program: lower the share of memory a framework takes for its arrays (vLLM's gpu_memory_utilization, a smaller KV cache or max length), delete arrays no longer needed (x.delete()) before loading it, or compile and run the large programs before placing large arrays")
            .cost("a smaller cache holds fewer sequences; otherwise none"),
    )
}

/// XLA:GPU's buffer assignment says what the whole program needs: under a GiB, it is
/// not what exhausted the GPU.
fn small_program(m: &OomMessage) -> Option<Line> {
    let need = oom::assignment_total(m).filter(|&u| u > 0 && u < SMALL_PROGRAM)?;
    let how = if m.used_bytes.is_some() {
        "read"
    } else {
        "its parts added up, read"
    };
    let request = m
        .requested_bytes
        .map(|r| format!("the failed request of {} belongs to ", size(r)))
        .unwrap_or_default();
    let text = format!(
        "{request}a program that needs only {} in all ({how}): far below the memory of any GPU, so the program is not what filled it",
        size(need)
    );
    Some(line(
        apis::of(m),
        text,
        "something else held the GPU's memory when the program ran: another process, another framework in the same process, preallocation by several processes, or arrays kept alive from earlier steps",
    ))
}

/// A request of a few bytes failed, and the message states nothing else of the memory:
/// it was full before the request, of something the request is not part of. Not for
/// TensorFlow's tensors, which it allocates one op at a time: a tiny one failing is as
/// often the last of the model's own (too little to tell).
fn tiny_request(m: &OomMessage) -> Option<Line> {
    let stated_else = oom::capacity(m).is_some()
        || m.free_bytes.is_some()
        || m.used_bytes.is_some()
        || m.requested_shape.is_some();
    // A request of no bytes fails for no lack of memory (an empty tensor meeting an
    // allocator's edge case): too little to tell.
    let request = m
        .requested_bytes
        .filter(|&r| r > 0 && r < TINY_REQUEST && !stated_else)?;
    let text = format!(
        "a request of only {} failed (read): an allocation that small fails only when the memory was already full before it, so what filled it is not this request",
        size(request)
    );
    Some(line(
        apis::of(m),
        text,
        "something else held the memory when the request came: another process (parallel tests or workers, each taking its pool), arrays kept alive from earlier steps, or a pool preallocated elsewhere",
    ))
}

/// The allocator's whole pool is small: the framework could take no more of the GPU.
fn small_pool(m: &OomMessage) -> Option<Line> {
    if m.memory_space.as_deref() == Some("host") {
        return None;
    }
    let pool = oom::capacity(m).filter(|&c| c < SMALL_POOL)?;
    let allocator = m
        .allocator
        .as_ref()
        .is_some_and(|a| a.limit_bytes.is_some());
    if !allocator && m.kind == OomKind::TpuRuntime {
        return None;
    }
    let text = format!(
        "the allocator's whole pool is {} (read): the framework could take no more of the device, so others hold the rest",
        size(pool)
    );
    Some(line(
        apis::of(m),
        text,
        "another process, the display, or an earlier framework in this process took the device's memory before this pool was made",
    ))
}

/// BFC hands out memory in multiples of this (its smallest chunk), so a request is
/// rounded up to it before the allocator looks for room.
const BFC_MIN_CHUNK: u64 = 256;

/// Whether the BFC allocator's limit left room for a new region of the request's size
/// beyond the regions it held: an allocator that fails then failed to grow, since
/// growing asks the device for a region, backing off to the request's size (rounded up
/// to whole chunks: 153 bytes left under the limit is no room for a 4-byte scalar).
pub fn could_grow(a: &AllocatorStats, request: u64) -> bool {
    let rounded = a.rounded_request_bytes.unwrap_or_else(|| {
        request
            .max(1)
            .div_ceil(BFC_MIN_CHUNK)
            .saturating_mul(BFC_MIN_CHUNK)
    });
    a.limit_bytes
        .zip(a.region_allocated_bytes)
        .is_some_and(|(limit, region)| limit.saturating_sub(region) >= rounded)
}

/// The BFC allocator's limit had room for a new region of the request's size, yet it
/// failed: the device itself had no more to give (free pieces inside its regions too
/// small matter only because of that). Something else holds it: another process,
/// another allocator of this process, a library's memory.
fn pool_could_not_grow(m: &OomMessage) -> Option<Line> {
    let a = m.allocator.as_ref()?;
    let (limit, in_use, region) = (a.limit_bytes?, a.in_use_bytes?, a.region_allocated_bytes?);
    let request = oom::request(m)?;
    if !could_grow(a, request) {
        return None;
    }
    let name = a.display_name();
    let pieces = region.saturating_sub(in_use);
    let inside = if pieces >= request {
        format!(
            "; the {} free inside them is in pieces smaller than the request",
            size(pieces)
        )
    } else {
        String::new()
    };
    let text = format!(
        "{name} had room under its limit for the {} requested ({} of {} in use, read), but could not grow its regions past {} (read): the device had no more memory to give it{inside}",
        size(request),
        size(in_use),
        size(limit),
        size(region)
    );
    Some(line(
        apis::of(m),
        text,
        "the device's memory was taken by something else when the allocator tried to grow: another process, another framework or session in this process, or a library's own memory",
    ))
}

/// The `cuda_async` pool had room under its limit for the request, but the driver it
/// asks had less than the request free on the device: what the pool does not hold, held
/// by something else (another process, most often), is what it lacked.
fn async_pool_starved(m: &OomMessage) -> Option<Line> {
    let a = m.allocator.as_ref().filter(|a| a.is_cuda_async())?;
    let (limit, in_use) = (a.limit_bytes?, a.in_use_bytes?);
    let (request, free, capacity) = (oom::request(m)?, m.free_bytes?, oom::capacity(m)?);
    if limit.saturating_sub(in_use) < request || free >= request {
        return None;
    }
    // What the pool holds from the device, in use or not: its attribute when printed.
    let (held, holds) = match a.mempool_reserved_bytes {
        Some(r) => (r.max(in_use), "held"),
        None => (in_use, "in use"),
    };
    let outside = capacity.saturating_sub(free).saturating_sub(held);
    let text = format!(
        "{} had room under its {} limit for the {} requested ({} {holds}, read), but the driver had only {} free of the device's {} (read): about {} (estimated) was held outside this pool",
        a.display_name(),
        size(limit),
        size(request),
        size(held),
        size(free),
        size(capacity),
        size(outside)
    );
    Some(line(
        apis::of(m),
        text,
        "the device's memory was taken by something else: another process on the same GPU, another framework or session in this process",
    ))
}

/// The driver refused memory outside XLA's pool, or a context: the device is taken.
fn driver(m: &OomMessage) -> Option<Line> {
    // A status other than out of memory is a fault of the driver or its setup.
    if m.is_driver_fault() {
        return None;
    }
    // A request no device could hold is a size gone wrong (`buffer::impossible_size`).
    if m.requested_bytes
        .is_some_and(|r| r >= super::buffer::LARGER_THAN_ANY_DEVICE)
    {
        return None;
    }
    // The device said it had most of its memory free when the call failed (cuDNN's
    // `Memory usage: X bytes free, Y bytes total`): not a shortage to blame on others.
    if let (Some(free), Some(total)) = (m.free_bytes, m.capacity_bytes) {
        if m.requested_bytes.is_none_or(|r| r <= free) && free.saturating_mul(2) >= total {
            return None;
        }
    }
    let host = m.memory_space.as_deref() == Some("host");
    let text = match m.requested_bytes {
        Some(r) if host && r >= TINY_HOST_REQUEST => return None,
        Some(r) if host => format!(
            "the driver could not pin {} of host memory (read): an allocation that small fails only when the host or the driver is exhausted by something else",
            size(r)
        ),
        Some(r) if oom::is_pool_creation(m) => format!(
            "the GPU driver refused the framework its pool of {} (read) as it started: the device had less free than that, so something else held its memory",
            size(r)
        ),
        Some(r) => format!(
            "the GPU driver refused {} (read) to an allocation outside XLA's pool: the device's memory was taken (a framework allocating its pool, a library its workspace)",
            size(r)
        ),
        None => "the GPU driver ran out of memory outside XLA's pool (read): creating a context, or a library's own workspace, found the device full".to_owned(),
    };
    Some(line(
        apis::of(m),
        text,
        "the device's memory was already taken: another process, or this process's own preallocated pool leaving no room for the driver and libraries (cuBLAS, cuDNN, cuSOLVER, hipSOLVER allocate outside it)",
    ))
}
