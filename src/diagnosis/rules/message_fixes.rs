//! The fixes of an aggregate too big, read from the error message: each with the saving
//! the message's own figures support (half the temporaries for half the batch, the
//! donatable state, the 32-bit allocations in bf16), ranked by it.

use crate::diagnosis::line::pct;
use crate::diagnosis::oom;
use crate::evidence::message::{Framework, MessageAllocation, OomKind, OomMessage};
use crate::report::model::Fix;
use crate::units::size;

use super::apis;

/// One fix of the aggregate, with its cost, and the saving the message supports.
pub(super) fn fix(text: String, saving: Option<u64>, cost: &str) -> Fix {
    Fix {
        text,
        saving_bytes: saving,
        cost: Some(cost.to_owned()),
        fits_after: None,
    }
}

/// The fixes of an aggregate too big, ranked: by the saving the message supports,
/// largest first, then those it gives no figure for, in the usual order (batch,
/// donation, dtype, sharding, host offload, remat); each says whether the overflow
/// then fits, when the message states it.
pub fn ranked_fixes(m: &OomMessage) -> Vec<Fix> {
    if m.kind == OomKind::NeuronRuntime {
        return neuron_fixes(m);
    }
    let framework = apis::of(m);
    // Donation and memory kinds are JAX's; TensorFlow has no offload of its own.
    let mut fixes: Vec<Fix> = [
        Some(batch_fix(m)),
        (framework == Framework::Jax).then(|| donation_fix(m)),
        Some(dtype_fix(m)),
        Some(shard_fix(m)),
        offload_fix(framework),
        remat_fix(m),
        (framework == Framework::TensorflowJs).then(dispose_fix),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Stable: fixes without a figure keep the usual order, after those with one.
    fixes.sort_by_key(|f| std::cmp::Reverse(f.saving_bytes));
    let excess = oom::excess(m);
    for f in &mut fixes {
        f.fits_after = excess.zip(f.saving_bytes).map(|(e, s)| s >= e);
    }
    fixes
}

/// Host offload, in the frameworks that have one.
fn offload_fix(framework: Framework) -> Option<Fix> {
    let (text, cost) = match framework {
        Framework::Jax => (
            "offload what waits between uses to host memory (optimizer state, activations: memory kind pinned_host)",
            "host-to-device transfers per step",
        ),
        Framework::Pytorch => (
            "offload the optimizer state and parameters to the CPU (FSDP's CPUOffload, DeepSpeed ZeRO-Offload)",
            "host-to-device transfers per step",
        ),
        Framework::Tensorflow | Framework::TensorflowJs => return None,
    };
    Some(fix(text.into(), None, cost))
}

/// TensorFlow.js keeps every tensor until it is disposed.
fn dispose_fix() -> Fix {
    fix(
        "dispose what each step no longer needs (run it inside tf.tidy(), dispose() the tensors it returns once used): TensorFlow.js frees nothing by itself".into(),
        None,
        "none at run time",
    )
}

/// A NeuronCore full of the program's own tensors: spread them, or load less per core.
fn neuron_fixes(m: &OomMessage) -> Vec<Fix> {
    vec![
        fix(
            "shard the model over more NeuronCores (tensor parallelism: tp_degree in transformers-neuronx, TP in neuronx-distributed or optimum-neuron's num_cores)".into(),
            None,
            "more cores per model: fewer model copies per instance",
        ),
        fix(
            "load fewer models or model copies per NeuronCore (one pipeline's parts on separate cores), and trace with a smaller batch or sequence length".into(),
            None,
            "lower throughput per core",
        ),
        dtype_fix(m),
    ]
}

/// Batch: activations and temporaries scale with it.
fn batch_fix(m: &OomMessage) -> Fix {
    let temp = m.temp_bytes.filter(|&t| t > 0);
    let text = match temp {
        Some(t) => format!(
            "a smaller (micro-)batch with gradient accumulation: the temporaries take {}{} and scale with the batch; the saving is for half the batch",
            size(t),
            m.program_bytes
                .or(m.used_bytes)
                .map(|p| format!(" ({:.0}% of the program)", pct(t, p)))
                .unwrap_or_default(),
        ),
        None => "a smaller (micro-)batch with gradient accumulation: activations and temporaries scale with the batch".into(),
    };
    fix(
        text,
        temp.map(|t| t / 2),
        "more steps per batch: half the batch, twice the steps",
    )
}

/// Donation: outputs that could reuse the arguments.
fn donation_fix(m: &OomMessage) -> Fix {
    let donatable = m
        .arguments_bytes
        .zip(m.output_bytes)
        .map(|(a, o)| a.min(o))
        .filter(|&d| d > 0);
    let text = match donatable {
        Some(d) => format!(
            "donate the state (donate_argnums): the outputs ({}) can reuse the arguments ({}), up to {} (estimated)",
            size(m.output_bytes.unwrap_or(0)),
            size(m.arguments_bytes.unwrap_or(0)),
            size(d)
        ),
        None => "donate the state (donate_argnums) so that the new state reuses the old one's memory".into(),
    };
    fix(
        text,
        donatable,
        "none at run time; the donated input arrays become unusable after the call",
    )
}

/// Dtype: the 32-bit allocations of the listing.
fn dtype_fix(m: &OomMessage) -> Fix {
    let wide: u64 = (m.allocations.iter())
        .filter(|a| is_32_bit(a))
        .map(|a| a.size_bytes)
        .fold(0, u64::saturating_add);
    let framework = apis::of(m);
    let sixteen = apis::sixteen_bit(framework);
    let halve = match framework {
        Framework::Jax => "bf16 halves",
        _ => "16 bits halve",
    };
    let text = if wide > 0 {
        format!(
            "{sixteen} for activations and state: the listing holds {} in 32-bit types, which {halve}",
            size(wide),
        )
    } else {
        format!("{sixteen} for activations and state halves them")
    };
    fix(
        text,
        (wide > 0).then_some(wide / 2),
        "precision: keep f32 master weights, and scale the loss if gradients underflow",
    )
}

/// Sharding, pointing at the largest listed allocation when there is one.
fn shard_fix(m: &OomMessage) -> Fix {
    let shard = apis::shard_for(m);
    let text = match m.allocations.first() {
        Some(a) => {
            let shape = if a.shape.is_empty() {
                String::new()
            } else {
                format!(" {}", a.shape)
            };
            format!(
                "{shard} (the largest listed allocation: {}{shape}{}); check that nothing large is replicated",
                size(a.size_bytes),
                oom::origin(a)
            )
        }
        None => format!("{shard}; check that nothing large is replicated"),
    };
    fix(
        text,
        None,
        "collectives between the devices, and more devices",
    )
}

/// Remat, with how many listed allocations are forward activations.
fn remat_fix(m: &OomMessage) -> Option<Fix> {
    let remat = apis::remat(apis::of(m))?;
    let forward = (m.allocations.iter())
        .filter(|a| {
            a.op_name.contains("jvp(") || super::message::is_remat(oom::instruction(&a.xla_label))
        })
        .count();
    let text = if forward > 0 {
        format!("{remat} on the repeated block: {forward} of the listed allocations are forward activations kept for the backward pass or already rematerialized by XLA")
    } else {
        format!("{remat} on the repeated block: activations kept for the backward pass are recomputed instead")
    };
    Some(fix(
        text,
        None,
        "about one more forward pass of the block per step",
    ))
}

/// `f32[…]`, `s32[…]`, `u32[…]`: 32-bit elements (64-bit too: both halve, or better).
fn is_32_bit(a: &MessageAllocation) -> bool {
    let element = a.shape.split('[').next().unwrap_or("");
    matches!(
        element,
        "f32" | "f64" | "s32" | "u32" | "s64" | "u64" | "c64"
    )
}
