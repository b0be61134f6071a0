//! One buffer that is most of what the program needs (figures read): the whole story
//! when it is there, so the first line of the report, with its shape, op_name, source
//! line and the fix that fits the op that made it — a sort or top-k over a huge axis, an
//! all-pairs product materialized whole, a broadcast, an input or output that should be
//! sharded. And a need no device has: a shape or sharding gone wrong.

use crate::diagnosis::line::{advice, pct, Context, Line, Remedy};
use crate::diagnosis::oom;
use crate::evidence::message::{MessageAllocation, OomKind, WORKSPACE};
use crate::plan::shape::dims_of;
use crate::report::model::{Category, DiagnosisId, Label, LiveBuffer, Plan, Role};
use crate::report::present;

use super::held;
use super::plan::NOTEWORTHY;
use super::scoped::is_scoped;
use super::tpu;
use crate::units::size;

/// One buffer (or the buffers of one op at one source line) is "most of the program"
/// from this share of what the program needs at once.
pub const DOMINANT_SHARE: f64 = 50.0;
/// A message's program counts only from this size: a smaller one is not what filled the
/// device (`held::SMALL_PROGRAM` says what did).
const MEANINGFUL_PROGRAM: u64 = 1 << 30;
/// Computed in blocks, a dominant buffer shrinks to blocks of about this size.
const BLOCK_TARGET: u64 = 256 << 20;
/// A need this many times the memory is no matter of batch or dtype.
pub const IMPOSSIBLE_OVER_CAPACITY: f64 = 100.0;
/// No accelerator has this much memory (the largest hold 288 GB): a single request
/// this large is a shape gone wrong whatever the device.
pub const LARGER_THAN_ANY_DEVICE: u64 = 512 << 30;

/// What made a dominant buffer, for the fix that fits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Made {
    /// A full sort (or a top-k over the whole axis) to keep a few values.
    Sort,
    /// A product of every row against every other (`x @ y.T`, an einsum).
    AllPairs,
    /// An elementwise op of broadcast operands (`a[:, None] - a[None, :]`).
    Outer,
    /// `jnp.broadcast_to`, `repeat`, `tile`: a smaller array copied out whole.
    Broadcast,
    /// A host callback (`jax.debug.print`) materializing its operand.
    Callback,
    /// An input of the program.
    Input,
    /// An output of the program.
    Output,
    Other,
}

impl Made {
    /// From the op names of the values in the buffer (its own, then in-place ones),
    /// its shape and its category.
    fn of(ops: &[&str], shape: &str, category: Category) -> Made {
        let last = |op: &str| op.rsplit('/').next().unwrap_or(op).to_owned();
        let names: Vec<String> = ops.iter().map(|o| last(o)).collect();
        let has = |words: &[&str]| names.iter().any(|n| words.iter().any(|w| n.starts_with(w)));
        let square = square_trailing(shape);
        if has(&["sort", "top_k", "approx_top_k", "approx_max_k", "argsort"]) {
            Made::Sort
        } else if ops.iter().any(|o| o.contains("callback")) {
            Made::Callback
        } else if has(&["dot_general", "dot", "einsum", "matmul"]) && square {
            Made::AllPairs
        } else if has(&[
            "sub", "add", "mul", "div", "max", "min", "pow", "abs", "exp", "square", "sqrt", "eq",
            "ne", "lt", "gt", "le", "ge", "select_n", "and", "or",
        ]) && square
        {
            Made::Outer
        } else if has(&["broadcast_in_dim", "broadcast", "tile", "repeat"]) {
            Made::Broadcast
        } else if category == Category::Parameter {
            Made::Input
        } else if category == Category::Output {
            Made::Output
        } else {
            Made::Other
        }
    }
}

/// The shape of an all-pairs or outer product: `[N, M]` with both large, or `[…, S, S]`
/// (attention scores). A `[batch, sequence, hidden]` activation is neither.
fn square_trailing(shape: &str) -> bool {
    match dims_of(shape).as_slice() {
        [n, m] => *n >= 4096 && *m >= 4096,
        [_, .., s1, s2] => s1 == s2 && *s2 >= 1024,
        _ => false,
    }
}

/// The bytes left once the buffer is computed in blocks of rows of about
/// `BLOCK_TARGET` (at least one row), and the number of rows per block.
fn blocked(bytes: u64, shape: &str) -> Option<(u64, u64)> {
    let rows = *dims_of(shape).first()?;
    if rows < 2 || bytes <= BLOCK_TARGET {
        return None;
    }
    let per_row = (bytes / rows).max(1);
    let block_rows = (BLOCK_TARGET / per_row).clamp(1, rows);
    Some((per_row.saturating_mul(block_rows), block_rows))
}

/// The fix for a dominant buffer made as `made`: what to do, the bytes it saves
/// (estimated), and its cost.
fn fix(made: Made, shape: &str, bytes: u64) -> Remedy {
    let blocks = blocked(bytes, shape);
    let in_blocks = |what: &str| {
        match blocks {
        Some((block, rows)) => format!(
            "{what}: compute it over blocks of {rows} rows (jax.lax.map(f, xs, batch_size={rows}), or a lax.scan over row chunks) so that only one block of about {} is live at a time",
            size(block)
        ),
        None => format!("{what}: compute it over blocks of rows (jax.lax.map with batch_size, or a lax.scan over row chunks)"),
    }
    };
    let blocked_saving = blocks.map(|(block, _)| bytes.saturating_sub(block));
    let (fix, saving, cost) = match made {
        Made::Sort => (
            format!(
                "{}; to keep the k largest per row, jax.lax.top_k(x, k) (jax.lax.approx_max_k on TPU) never sorts the whole axis",
                in_blocks(&format!("a full sort of {shape} to keep a few values per row"))
            ),
            blocked_saving,
            "one kernel launch per block; top_k is cheaper than a full sort",
        ),
        Made::AllPairs => (
            format!(
                "{}, reducing each block as it is made (a running top-k, max or logsumexp); for attention scores use jax.nn.dot_product_attention, which never stores them",
                in_blocks(&format!("the all-pairs product {shape} is materialized whole"))
            ),
            blocked_saving,
            "one kernel launch per block",
        ),
        Made::Outer => (
            format!(
                "{}, or fold the reduction that follows into the elementwise op so that XLA fuses it",
                in_blocks(&format!("an elementwise op of broadcast operands (x[:, None] - x[None, :]) materializes {shape}"))
            ),
            blocked_saving,
            "one kernel launch per block",
        ),
        Made::Broadcast => (
            format!("keep the smaller array and let the op that uses it broadcast (avoid jnp.broadcast_to, jnp.repeat, jnp.tile of {shape})"),
            None,
            "none",
        ),
        Made::Callback => (
            "remove the jax.debug.print / host callback of this array, or print a reduced value (a norm, a slice)".into(),
            Some(bytes),
            "none",
        ),
        Made::Input => (
            format!("shard the input {shape} over the devices (in_shardings=NamedSharding(mesh, P('data', …))) or feed it in batches; check that its shape is the one intended"),
            None,
            "a sharded input needs its devices' collectives",
        ),
        Made::Output => (
            format!("return a reduced value instead of {shape}, or shard it (out_shardings); check that its shape is the one intended"),
            None,
            "none",
        ),
        Made::Other => (
            format!("check that {shape} is the shape intended; shard it (jax.lax.with_sharding_constraint) or compute it in blocks"),
            blocked_saving,
            "depends on the fix",
        ),
    };
    Remedy { fix, saving, cost }
}

/// The group of live buffers made by one op at one source line (or one buffer, when it
/// has no op name), largest first: the dominant one if it is most of `needs`.
pub struct Dominant<'p> {
    pub largest: &'p LiveBuffer,
    pub count: u64,
    pub bytes: u64,
}

/// The dominant group of the plan's live buffers, if one holds `DOMINANT_SHARE` of
/// what the plan needs at once.
pub fn dominant_in_plan(p: &Plan) -> Option<Dominant<'_>> {
    let mut groups: Vec<Dominant<'_>> = Vec::new();
    for b in p
        .live_at_peak
        .iter()
        .filter(|b| b.memory_space == 0 && b.bytes > 0)
    {
        let key = |x: &LiveBuffer| (x.op_name.is_empty(), x.op_name.clone(), x.source.clone());
        let same = |g: &Dominant<'_>| {
            !b.op_name.is_empty() && key(g.largest) == key(b) && g.largest.category == b.category
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => {
                g.count += 1;
                g.bytes = g.bytes.saturating_add(b.bytes);
            }
            None => groups.push(Dominant {
                largest: b,
                count: 1,
                bytes: b.bytes,
            }),
        }
    }
    let best = groups.into_iter().max_by_key(|g| g.bytes)?;
    // Several activations (or gradients) of one op are one per layer or step: what the
    // role lines and remat explain, not one buffer.
    let per_layer = best.count > 1 && matches!(best.largest.role, Role::Forward | Role::Backward);
    (p.total_bytes > 0 && !per_layer && pct(best.bytes, p.total_bytes) >= DOMINANT_SHARE)
        .then_some(best)
}

/// One buffer the whole story turns on, the first that applies: most of the plan; over
/// half the pool in the plan; a need no device has; an allocation of the message over
/// half the memory; most of what the message says the program needs.
pub fn one_buffer(cx: &Context<'_>) -> Option<Line> {
    dominant_in_plan_line(cx)
        .or_else(|| large_in_plan(cx))
        .or_else(|| impossible_size(cx))
        .or_else(|| workspace_over_limit(cx))
        .or_else(|| large_in_message(cx))
        .or_else(|| dominant_in_message(cx))
}

/// One op's scratch workspace over the limit its library sets (cuDNN's autotuner
/// profiling each engine of a convolution): that op's algorithm, not the model's memory.
fn workspace_over_limit(cx: &Context<'_>) -> Option<Line> {
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

/// One buffer is most of the selected module's plan: the first line under pressure.
pub fn dominant_in_plan_line(cx: &Context<'_>) -> Option<Line> {
    let (m, p) = (cx.module?, cx.plan()?);
    if !cx.pressure {
        return None;
    }
    let d = dominant_in_plan(p).filter(|d| d.bytes >= NOTEWORTHY)?;
    let b = d.largest;
    let mut ops: Vec<&str> = vec![b.op_name.as_str()];
    ops.extend(b.shared_by.iter().map(String::as_str));
    let made = Made::of(&ops, &b.shape, b.category);
    let what = if d.count == 1 {
        format!("{} {}", b.shape, category_word(b.category))
    } else {
        format!("{}× {} {}", d.count, b.shape, category_word(b.category))
    };
    let written = if b.shared_by.is_empty() {
        String::new()
    } else {
        format!(", written in place by {}", b.shared_by.join(", "))
    };
    let at = if b.source.is_empty() {
        String::new()
    } else {
        format!(" at {}", present::short_source(&b.source))
    };
    let op = if b.op_name.is_empty() {
        b.name.clone()
    } else {
        format!("{} ({})", b.op_name, b.name)
    };
    let over_pool = cx
        .capacity
        .filter(|&c| b.bytes > c / 2)
        .map(|c| {
            format!(
                "; it alone is over half the pool of {} (measured): a configuration error, not capacity",
                size(c)
            )
        })
        .unwrap_or_default();
    let text = format!(
        "one buffer is {:.1}% of what {} needs ({} of {}, read): {what}, made by {op}{written}{at}{over_pool}",
        pct(d.bytes, p.total_bytes),
        m.label,
        size(d.bytes),
        size(p.total_bytes),
    );
    let remedy = fix(made, &b.shape, d.bytes);
    let line = Line::new(DiagnosisId::DominantBuffer, Label::Read, text, cause(made));
    Some(line.remedy(cx, remedy))
}

fn category_word(c: Category) -> &'static str {
    match c {
        Category::Parameter => "(an input)",
        Category::Output => "(an output)",
        Category::Temporary => "(a temporary)",
        _ => "",
    }
}

fn cause(made: Made) -> &'static str {
    match made {
        Made::Sort => "a sort over a huge axis materializes and sorts the whole array to keep a few values",
        Made::AllPairs => "an all-pairs product is materialized whole before it is reduced",
        Made::Outer => "broadcast operands make an elementwise op produce the full outer product",
        Made::Broadcast => "a broadcast copies a small array out to a huge one",
        Made::Callback => "a host callback materializes its operand whole and sends it to the host",
        Made::Input | Made::Output => "one array of the program's inputs or outputs is most of its memory: unsharded, or a shape larger than intended",
        Made::Other => "one array is most of the program's memory: a shape larger than intended, or an array that should be sharded or computed in blocks",
    }
}

/// One listed allocation is most of what the message says the program needs, and the
/// program is large enough to matter.
pub fn dominant_in_message(cx: &Context<'_>) -> Option<Line> {
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
    let text = if twins.is_empty() {
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
    let remedy = fix(made, &a.shape, a.size_bytes);
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

/// One buffer over half the pool: a configuration error (a debug print, a missing
/// sharding annotation), not a capacity problem.
fn large_in_plan(cx: &Context<'_>) -> Option<Line> {
    let (p, capacity) = (cx.plan()?, cx.capacity?);
    let big = p.live_at_peak.iter().find(|x| x.bytes > capacity / 2)?;
    let debug = if p.host_callbacks.is_empty() {
        ""
    } else {
        "; the module also has a host callback (a jax.debug.print?) that materializes whole tensors"
    };
    let text = format!(
        "{} {} is {} of {} (read, capacity measured){debug}",
        big.name,
        big.shape,
        size(big.bytes),
        size(capacity)
    );
    let line = Line::new(
        DiagnosisId::LargeReplicated,
        Label::Read,
        text,
        "a configuration error, not capacity: an unexpectedly large tensor, from a leftover jax.debug.print forcing a full tensor to be materialized, a missing sharding annotation (replicated), or a wrong mesh shape",
    );
    Some(
        line.fix("remove debug prints of large arrays; check its sharding (jax.debug.visualize_array_sharding) and shard it over the mesh")
            .saving(Some(big.bytes))
            .cost("none if it was a debug print; a sharded array needs its devices' collectives")
            .fits_after(cx.fits_after(big.bytes)),
    )
}

/// One allocation of the message over half the memory (its data, without padding, which
/// is `tpu_padding`'s), or a failed request that large: a configuration error.
fn large_in_message(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message?;
    // A BFC warning's request is a library's optional scratch, not a tensor of the
    // model (`advisory::allocator_warning`).
    if is_scoped(m) || (m.advisory && m.kind == OomKind::BfcRuntime) {
        return None;
    }
    let capacity = oom::capacity(m)?;
    let limit = (capacity as f64 * tpu::LARGE_ALLOCATION_OF_CAPACITY) as u64;
    // Half the memory or more: a tensor that alone leaves the rest of the program half.
    let (bytes, what) = match m.allocations.iter().find(|a| oom::data_bytes(a) >= limit) {
        Some(a) => (a.size_bytes, tpu::describe(a)),
        None => match m
            .requested_bytes
            .or(m.requested_bytes_from_shape)
            .filter(|&r| r >= limit)
        {
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
    let (cause, fix, cost) = (
        "a configuration error, not capacity: an unexpectedly large tensor, from a leftover jax.debug.print forcing a full tensor to be materialized, a missing sharding annotation (replicated), or a wrong mesh shape",
        "remove debug prints of large arrays; check its sharding (jax.debug.visualize_array_sharding) and shard it over the mesh (in_shardings, jax.lax.with_sharding_constraint); check the shape is the one intended",
        "none if it was a debug print; a sharded array needs its devices' collectives",
    );
    let fits = oom::excess(m).map(|e| bytes >= e);
    let line = Line::new(DiagnosisId::LargeReplicated, Label::Read, text, cause);
    Some(
        line.fix(fix)
            .saving(Some(bytes))
            .cost(cost)
            .fits_after(fits),
    )
}

/// A need no device could meet: a hundred times the memory, or a single request larger
/// than any accelerator has.
pub fn impossible_size(cx: &Context<'_>) -> Option<Line> {
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
    let request = m
        .requested_bytes
        .or(m.requested_bytes_from_shape)
        .filter(|&r| r >= LARGER_THAN_ANY_DEVICE);
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
    Some(line.fix(
        "check the shapes the program is traced with (jax.eval_shape(f, *args), or print x.shape of the inputs) and the sharding of its largest arrays (jax.debug.visualize_array_sharding); the largest allocation or op in the error names where to look",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_made_a_buffer() {
        let of = |ops: &[&str], shape| Made::of(ops, shape, Category::Temporary);
        assert_eq!(
            of(
                &["jit(top_scores)/sub", "jit(top_scores)/sort"],
                "f32[262144,262144]"
            ),
            Made::Sort
        );
        assert_eq!(
            of(&["jit(f)/dot_general"], "f32[65536,65536]"),
            Made::AllPairs
        );
        assert_eq!(
            of(&["jit(f)/dot_general"], "f32[8,16,4096,4096]"),
            Made::AllPairs
        );
        assert_eq!(
            of(&["jit(f)/dot_general"], "bf16[1024,1024,1024]"),
            Made::AllPairs
        );
        assert_eq!(
            of(&["jit(f)/dot_general"], "bf16[64,2048,4096]"),
            Made::Other
        );
        assert_eq!(of(&["jit(f)/dot_general"], "f32[65536,64]"), Made::Other);
        assert_eq!(of(&["jit(f)/sub"], "f32[65536,65536]"), Made::Outer);
        assert_eq!(
            Made::of(&["x"], "f32[100000,1000]", Category::Parameter),
            Made::Input
        );
    }

    #[test]
    fn blocks_of_rows() {
        let (block, rows) = blocked(1 << 38, "f32[262144,262144]").unwrap();
        assert_eq!(rows, 256);
        assert_eq!(block, 256 << 20);
        assert_eq!(blocked(1 << 20, "f32[512,512]"), None);
    }
}
