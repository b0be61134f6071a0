//! One buffer an error message shows to be the story: an allocation or request over half
//! the memory, one listed allocation that is most of the program, one op's workspace over
//! its library's limit, or a need no device could meet.

use crate::diagnosis::line::{advice, pct, Context, Line, Remedy};
use crate::diagnosis::oom;
use crate::diagnosis::rules::scoped::is_scoped;
use crate::diagnosis::rules::tpu;
use crate::diagnosis::rules::{apis, held};
use crate::evidence::message::{MessageAllocation, OomKind, PROGRAM_LOAD_OP, WORKSPACE};
use crate::report::model::{Category, DiagnosisId, Label};
use crate::units::size;

use super::{
    cause, fix_in, Made, DOMINANT_SHARE, IMPOSSIBLE_OVER_CAPACITY, LARGER_THAN_ANY_DEVICE,
    MEANINGFUL_PROGRAM,
};

/// One op's scratch workspace over the limit its library sets (cuDNN's autotuner
/// profiling each engine of a convolution): that op's algorithm, not the model's memory.
pub(super) fn workspace_over_limit(cx: &Context<'_>) -> Option<Line> {
    let m = cx
        .failure_message()
        .filter(|m| m.memory_space.as_deref() == Some(WORKSPACE))?;
    let (request, limit) = (m.requested_bytes?, oom::capacity(m)?);
    if cx.module.is_some() || request <= limit {
        return None;
    }
    let op = m
        .requested_op
        .as_deref()
        .map(|op| format!(" in {op}"))
        .unwrap_or_default();
    let text = format!(
        "one convolution's scratch workspace of {} is over cuDNN's {} limit (read){op}: every algorithm the autotuner tried needs more, so the op has none left",
        size(request),
        size(limit)
    );
    let line = Line::new(
        DiagnosisId::DominantBuffer,
        Label::Read,
        text,
        "one op's workspace: a large convolution (3-D, transposed, or in float16, whose fast algorithms need the most scratch)",
    );
    Some(line.fixes(vec![
        advice(
            format!(
                "raise the limit if the GPU has room: TF_CUDNN_WORKSPACE_LIMIT_IN_MB={} (it is {} MiB now)",
                request.div_ceil(1 << 20),
                limit >> 20
            ),
            Some("that memory is taken from the model's"),
        ),
        advice(
            "run that layer in float32, or make it smaller (its batch, its input size, its filters)",
            Some("float32 is slower; a smaller layer changes the model"),
        ),
    ]))
}

/// One listed allocation is most of what the message says the program needs, and the
/// program is large enough to matter.
pub(super) fn dominant_in_message(cx: &Context<'_>) -> Option<Line> {
    let m = cx.failure_message()?;
    if cx.module.is_some() || is_scoped(m) {
        return None;
    }
    let need = m.program_bytes.or(oom::needs(m))?;
    let big = oom::capacity(m).is_some_and(|c| need > c) || need >= MEANINGFUL_PROGRAM;
    // Temporaries that are mostly layout padding: the padding, not one buffer, is what
    // the program is made of (`tpu_padding`).
    if m.padding_bytes
        .is_some_and(|p| pct(p, need) >= DOMINANT_SHARE)
    {
        return None;
    }
    let a = m.allocations.iter().max_by_key(|a| oom::data_bytes(a))?;
    let mut twins = twins_of(a, &m.allocations);
    let mut bytes = twins
        .iter()
        .map(|t| oom::data_bytes(t))
        .fold(oom::data_bytes(a), u64::saturating_add);
    // Twins adding up to more than the need share one buffer (an output aliasing its
    // input): the array is counted once.
    if bytes > need {
        twins.clear();
        bytes = oom::data_bytes(a);
    }
    // An input whose size the program's whole output has, the listing naming only the
    // input: the same array made again (XLA lists each buffer once, and an output it
    // need not print is still in `maybe_live_out`).
    let output_twin = twins.is_empty()
        && a.allocation_type == "parameter"
        && m.output_bytes.is_some_and(|o| o == a.size_bytes)
        && bytes.saturating_mul(2) <= need;
    if output_twin {
        bytes = bytes.saturating_mul(2);
    }
    if !big || pct(bytes, need) < DOMINANT_SHARE {
        return None;
    }
    let ops = [a.op_name.as_str(), a.op_type.as_str(), a.xla_label.as_str()];
    let category = if a.allocation_type == "parameter" {
        Category::Parameter
    } else {
        Category::Temporary
    };
    let made = Made::of(&ops, &a.shape, category);
    let text = if output_twin {
        format!(
            "one tensor's shape is {:.1}% of what the program needs (2× {}, read): {}, and an output of the same size: one array taken in and made again",
            pct(bytes, need),
            size(a.size_bytes),
            tpu::describe(a)
        )
    } else if twins.is_empty() {
        format!(
            "one allocation is {:.1}% of what the program needs ({} of {}, read): {}",
            pct(bytes, need),
            size(a.size_bytes),
            size(need),
            tpu::describe(a)
        )
    } else {
        let inputs = twins
            .iter()
            .filter(|t| t.allocation_type == "parameter")
            .count();
        let also = match (twins.len(), inputs) {
            (1, 1) => "the same shape again as an input".to_owned(),
            (1, _) => "the same shape once more".to_owned(),
            (n, 0) => format!("the same shape {n} more times"),
            (n, i) => format!("the same shape {n} more times, {i} as inputs"),
        };
        format!(
            "one tensor's shape is {:.1}% of what the program needs ({}× {}, {} of {}, read): {}; {also}: one array taken in and made again",
            pct(bytes, need),
            twins.len() + 1,
            size(a.size_bytes),
            size(bytes),
            size(need),
            tpu::describe(a)
        )
    };
    let remedy = fix_in(m, made, &a.shape, a.size_bytes);
    let fits = oom::excess(m).zip(remedy.saving).map(|(e, s)| s >= e);
    let Remedy { fix, saving, cost } = remedy;
    let line = Line::new(DiagnosisId::DominantBuffer, Label::Read, text, cause(made));
    Some(
        line.fix(fix)
            .saving(saving)
            .cost(cost)
            .fits_after(fits)
            .check(),
    )
}

/// Of one shape, so few allocations are one array in its stages (taken in, then an
/// elementwise op's result); more are per-layer activations, not one buffer.
const MAX_TWINS: usize = 2;

/// The other allocations of `a`'s shape, when there are at most [`MAX_TWINS`].
fn twins_of<'m>(a: &MessageAllocation, all: &'m [MessageAllocation]) -> Vec<&'m MessageAllocation> {
    if a.shape.is_empty() {
        return Vec::new();
    }
    let twins: Vec<&MessageAllocation> = all
        .iter()
        .filter(|b| b.shape == a.shape && !std::ptr::eq(*b, a))
        .collect();
    if twins.len() > MAX_TWINS {
        return Vec::new();
    }
    twins
}

/// One allocation of the message over half the memory (its data, without padding, which
/// is `tpu_padding`'s), or a failed request that large: a configuration error.
pub(super) fn large_in_message(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message?;
    // A BFC warning's request is a library's optional scratch, not a tensor of the
    // model (`advisory::allocator_warning`).
    if is_scoped(m) || (m.advisory && m.kind == OomKind::BfcRuntime) || oom::is_pool_creation(m) {
        return None;
    }
    let capacity = oom::capacity(m)?;
    let limit = (capacity as f64 * tpu::LARGE_ALLOCATION_OF_CAPACITY) as u64;
    // Half the memory or more: a tensor that alone leaves the rest of the program half.
    let (bytes, what) = match m.allocations.iter().find(|a| oom::data_bytes(a) >= limit) {
        // The buffer the runtime refused, listed: the request itself.
        Some(a) if m.allocations.len() == 1 && oom::request(m) == Some(a.size_bytes) => (
            a.size_bytes,
            format!("the failed request {}", tpu::describe(a)),
        ),
        Some(a) => (a.size_bytes, tpu::describe(a)),
        None => match oom::request(m).filter(|&r| r >= limit) {
            Some(request) => {
                let shape = m
                    .requested_shape
                    .as_deref()
                    .map(|s| format!(" {s}"))
                    .unwrap_or_default();
                (request, format!("the failed request{shape}"))
            }
            // The BFC allocator's largest allocation so far (`MaxAllocSize`): one tensor of
            // the run, if not the one that failed. In a pool under a GiB, the pool's size
            // is the story (`held`), not the tensor.
            None => {
                let largest = m
                    .allocator
                    .as_ref()
                    .and_then(|a| a.max_alloc_size_bytes)
                    .filter(|&l| l >= limit && capacity >= held::SMALL_POOL)?;
                (
                    largest,
                    "the allocator's largest allocation (MaxAllocSize), made before the request that failed".to_owned(),
                )
            }
        },
    };
    let callback = if m.allocations.iter().any(tpu::is_callback) {
        "; the listing also holds a host callback's buffers (a jax.debug.print?), which materialize whole tensors"
    } else {
        ""
    };
    let text = format!(
        "one allocation takes {} of {}{} ({:.0}%, read): {what}{callback}",
        size(bytes),
        size(capacity),
        oom::of_space(m),
        pct(bytes, capacity),
    );
    let [cause, fix, cost] = apis::one_large_allocation(apis::of(m));
    let fits = oom::excess(m).map(|e| bytes >= e);
    let line = Line::new(DiagnosisId::LargeReplicated, Label::Read, text, cause);
    Some(
        line.fix(fix)
            .saving(Some(bytes))
            .cost(cost)
            .fits_after(fits),
    )
}

/// The most memory a TPU chip has (v7 Ironwood: 192 GB of HBM), taken as GiB to err
/// toward the larger: half of it is over half of any TPU's memory.
const LARGEST_TPU_MEMORY: u64 = 192 << 30;

/// The TPU runtime refused one device buffer (`Attempting to allocate`, not a program's
/// reservation) over half the memory of the largest TPU chip: whatever the chip, that
/// one array is the story, though the message states no capacity.
pub(super) fn over_half_of_any_tpu(cx: &Context<'_>) -> Option<Line> {
    let m = cx.failure_message()?;
    let program_load = m.requested_op.as_deref() == Some(PROGRAM_LOAD_OP);
    if m.kind != OomKind::TpuRuntime || program_load || oom::capacity(m).is_some() {
        return None;
    }
    let request = m.requested_bytes.filter(|&r| r > LARGEST_TPU_MEMORY / 2)?;
    let free = oom::free_clause(m);
    let text = format!(
        "the runtime could not allocate one buffer of {} (read{free}): over half the memory of any TPU chip (the largest, v7, has {}), so that one array, not what else is held, is what does not fit",
        size(request),
        size(LARGEST_TPU_MEMORY),
    );
    let [cause, fix, cost] = apis::one_large_allocation(apis::of(m));
    let line = Line::new(DiagnosisId::LargeReplicated, Label::Read, text, cause);
    Some(line.fix(fix).saving(Some(request)).cost(cost))
}

/// The program JAX gathers a sharded array with: `jax.jit(_identity_fn,
/// out_shardings=P())` copies the whole array onto every device before it reaches the
/// host (`multihost_utils.process_allgather` does, and code modelled on it).
const GATHER_PROGRAM: &str = "jit__identity_fn";

/// A failure of the gathering program: what it needs is the gathered array, whole, on
/// each device, however the rest of the program is sharded.
pub(super) fn replicated_gather(cx: &Context<'_>) -> Option<Line> {
    let m = cx.failure_message()?;
    if m.program.as_deref() != Some(GATHER_PROGRAM) || cx.module.is_some() {
        return None;
    }
    let request = oom::request(m)?;
    let free = oom::free_clause(m);
    let text = format!(
        "{GATHER_PROGRAM}, the program that gathers a sharded array by replicating it (jax.jit(_identity_fn, out_shardings=P()), as multihost_utils.process_allgather runs), needs {} (read{free}): that is the gathered array, whole on every device",
        size(request)
    );
    let line = Line::new(
        DiagnosisId::DominantBuffer,
        Label::Read,
        text,
        "gathering replicates the whole array on every device before it reaches the host",
    );
    Some(
        line.fix("gather less (a slice, or a reduced value such as a mean) or in pieces, or copy each process's own shards to the host (np.asarray(s.data) for s in x.addressable_shards) and join them there")
            .saving(Some(request))
            .cost("a host copy of each shard; joining across processes needs the host's own collective"),
    )
}

/// A need no device could meet: a hundred times the memory, or a single request larger
/// than any accelerator has.
pub(super) fn impossible_size(cx: &Context<'_>) -> Option<Line> {
    let m = cx
        .failure_message()
        .or(cx.message.filter(|m| m.remat.is_some()))?;
    if cx.module.is_some() || is_scoped(m) {
        return None;
    }
    let ratio = oom::needs(m)
        .zip(oom::capacity(m))
        .map(|(n, c)| n as f64 / c as f64)
        .filter(|&r| r >= IMPOSSIBLE_OVER_CAPACITY);
    let request = oom::request(m).filter(|&r| r >= LARGER_THAN_ANY_DEVICE);
    let text = match (ratio, request) {
        (Some(r), _) => format!(
            "needs {} of {}{} (read): {}× the memory, which no batch size or dtype explains",
            size(oom::needs(m).unwrap_or(0)),
            size(oom::capacity(m).unwrap_or(0)),
            oom::of_space(m),
            crate::units::thousands(r.round() as u64)
        ),
        (None, Some(r)) => format!(
            "a single request of {} (read): more than any accelerator has",
            size(r)
        ),
        (None, None) => return None,
    };
    let line = Line::new(
        DiagnosisId::ImpossibleSize,
        Label::Read,
        text,
        "a shape or a sharding is wrong: a dimension multiplied in by mistake (a batch of batches, an outer product), an unsharded global array, or a size read from the wrong field",
    );
    Some(line.fix(apis::check_shapes(apis::of(m))))
}
