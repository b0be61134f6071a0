//! One buffer that is most of what the program needs (figures read): the whole story
//! when it is there, so the first line of the report, with its shape, op_name, source
//! line and the fix that fits the op that made it — a sort or top-k over a huge axis, an
//! all-pairs product materialized whole, a broadcast, an input or output that should be
//! sharded. And a need no device has: a shape or sharding gone wrong.
//!
//! The rules that read a capture's plan are in `in_plan`, those that read an error
//! message in `in_message`; what made a buffer, and the fix that fits it, is here.

mod in_message;
mod in_plan;

use crate::diagnosis::line::{Context, Line, Remedy};
use crate::diagnosis::rules::apis;
use crate::evidence::message::{Framework, OomMessage};
use crate::plan::shape::dims_of;
use crate::report::model::Category;
use crate::units::size;

use in_message::{
    dominant_in_message, impossible_size, large_in_message, over_half_of_any_tpu,
    replicated_gather, workspace_over_limit,
};
use in_plan::{dominant_in_plan_line, large_in_plan};

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

/// The fix for a dominant buffer of the message `m` made as `made`, in the API of the
/// framework that printed it: JAX's names ([`fix`]) or the other framework's.
fn fix_in(m: &OomMessage, made: Made, shape: &str, bytes: u64) -> Remedy {
    let (top_k, fused_attention) = match apis::of(m) {
        Framework::Jax => return fix(made, shape, bytes),
        Framework::Pytorch => (
            "torch.topk",
            "torch.nn.functional.scaled_dot_product_attention",
        ),
        Framework::Tensorflow => ("tf.math.top_k", "a fused attention kernel"),
        Framework::TensorflowJs => ("tf.topk", "a fused attention kernel"),
    };
    let saving = blocked(bytes, shape).map(|(block, _)| bytes.saturating_sub(block));
    let fix = match made {
        Made::Sort => format!("a full sort of {shape} to keep a few values per row: keep the k largest with {top_k}, over blocks of rows"),
        Made::AllPairs | Made::Outer => format!("the product {shape} is materialized whole: compute it over blocks of rows, reducing each block as it is made; for attention scores use {fused_attention}, which never stores them"),
        _ => format!("check that {shape} is the shape intended; compute it over blocks of rows so that one block is live at a time, or {}", apis::shard_for(m)),
    };
    Remedy {
        fix,
        saving,
        cost: "one kernel launch per block",
    }
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

/// One buffer the whole story turns on, the first that applies: most of the plan; over
/// half the pool in the plan; a need no device has; a library's workspace over its limit;
/// a gather that replicates an array; an allocation of the message over half the
/// memory, or over half of any TPU chip's; most of what the message says the program
/// needs.
pub fn one_buffer(cx: &Context<'_>) -> Option<Line> {
    dominant_in_plan_line(cx)
        .or_else(|| large_in_plan(cx))
        .or_else(|| impossible_size(cx))
        .or_else(|| workspace_over_limit(cx))
        .or_else(|| replicated_gather(cx))
        .or_else(|| large_in_message(cx))
        .or_else(|| over_half_of_any_tpu(cx))
        .or_else(|| dominant_in_message(cx))
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
