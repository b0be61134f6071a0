//! Rules on the selected module's compiled plan (figures read): what fills the heap at
//! its peak and which fix shrinks it (the diagnosis table in `docs/diagnosis.md`).

use crate::diagnosis::line::{pct, Context, Line, Remedy};
use crate::report::model::{Category, DiagnosisId, DiagnosisItem, Label, Plan, Role, ScanStack};
use crate::report::present;
use crate::units::size;

/// A role that takes this share of the heap peak is what the plan is "mostly".
const DOMINANT_ROLE_PCT: f64 = 40.0;
/// Library workspace is worth a line from this share of the heap peak…
const WORKSPACE_PCT: f64 = 10.0;
/// …or this many bytes (on ROCm gfx950 a hipBLASLt GEMM keeps 64 MiB of scratch).
const WORKSPACE_BYTES: u64 = 256 << 20;
/// Padding is worth a line from this share of the bytes live at the peak.
const PADDING_PCT: f64 = 10.0;
/// Below this, a saving is noise, not a line.
pub const NOTEWORTHY: u64 = 1 << 20;
/// Naive attention's score buffers are `[…, S, S]` with a sequence at least this long.
const ATTENTION_MIN_SEQUENCE: u64 = 128;

/// The heap at its peak, and whether the role split is worth a line: it explains a
/// plan that does not fit, and without a pool it is the evidence there is.
fn heap_and_roles_matter(cx: &Context<'_>, p: &Plan) -> (u64, bool) {
    let heap = p.heap_peak_bytes.max(p.roles_at_peak.total());
    let matter = cx.capacity.map(|c| p.total_bytes > c).unwrap_or(true);
    (heap, matter && heap > 0)
}

/// The step itself does not fit: the plan alone exceeds the pool.
pub fn plan_exceeds_capacity(cx: &Context<'_>) -> Option<Line> {
    let (m, capacity) = (cx.module?, cx.capacity?);
    let p = &m.plan;
    if p.total_bytes <= capacity {
        return None;
    }
    let roles = p.roles_at_peak;
    let heap = p.heap_peak_bytes.max(roles.total());
    let text = format!(
        "{} does not fit: needs {} (read: {} parameters + {} outputs + {} temporary − {} donated) > capacity {} (measured); at the heap peak {:.1}% forward-kept, {:.1}% backward, {:.1}% workspace, {:.1}% other",
        m.label,
        size(p.total_bytes),
        size(p.argument_bytes),
        size(p.output_bytes),
        size(p.temp_bytes),
        size(p.alias_bytes),
        size(capacity),
        pct(roles.forward, heap),
        pct(roles.backward, heap),
        pct(roles.workspace, heap),
        pct(roles.other, heap),
    );
    Some(Line::new(
        DiagnosisId::PlanExceedsCapacity,
        Label::Read,
        text,
        "the plan alone exceeds the memory pool",
    ))
}

/// Mostly forward activations kept for backward: remat, a smaller micro-batch, a
/// shorter sequence for S×S attention buffers.
pub fn role_forward(cx: &Context<'_>) -> Option<Line> {
    let p = cx.plan()?;
    let roles = p.roles_at_peak;
    let (heap, matter) = heap_and_roles_matter(cx, p);
    if !matter || pct(roles.forward, heap) < DOMINANT_ROLE_PCT {
        return None;
    }
    let text = format!(
        "{} of the heap peak {} ({:.1}%, read){}",
        size(roles.forward),
        size(heap),
        pct(roles.forward, heap),
        largest_group(p, Role::Forward)
            .map(|g| format!("; the largest: {g}"))
            .unwrap_or_default()
    );
    let line = Line::new(
        DiagnosisId::RoleForward,
        Label::Read,
        text,
        "activations saved for the backward pass grow with batch × sequence; naive attention adds B·H·S·S per layer",
    );
    Some(line.remedies(cx, forward_remedies(p, roles.forward)))
}

/// The blocks a model repeats, as its forward activations show them: the iterations of
/// its largest forward scan stack (`[layers, …]`), else how many forward buffers share
/// the shape, source line and op of the largest group (one per layer when the layers
/// are unrolled). `None` when nothing repeats.
fn repeated_blocks(p: &Plan) -> Option<u64> {
    let stacked = p
        .scan_stacks
        .iter()
        .filter(|s| s.role == Role::Forward)
        .max_by_key(|s| s.bytes)
        .and_then(|s| {
            let dims = s.shape.split_once('[')?.1.split(']').next()?;
            dims.split(',').next()?.trim().parse::<u64>().ok()
        });
    let unrolled = || {
        // By shape, source line and op name without its numbers: each layer's op names
        // differ only there (`block_0/…`, `block_1/…`), while two ops of one layer on
        // one line (a division and a max) stay apart.
        let mut groups: Vec<((&str, &str, String), u64, u64)> = Vec::new();
        for b in p.live_at_peak.iter().filter(|b| b.role == Role::Forward) {
            let op = b.op_name.replace(|c: char| c.is_ascii_digit(), "");
            let key = (b.shape.as_str(), b.source.as_str(), op);
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => {
                    g.1 += 1;
                    g.2 = g.2.saturating_add(b.bytes);
                }
                None => groups.push((key, 1, b.bytes)),
            }
        }
        groups.into_iter().max_by_key(|g| g.2).map(|g| g.1)
    };
    stacked.or_else(unrolled).filter(|&n| n >= 2)
}

/// What `jax.checkpoint` on each of `blocks` repeated blocks saves of `forward` bytes
/// kept for backward: the forward activations go, but the backward pass recomputes one
/// block at a time, and holds its activations and their gradients together, about
/// twice one block's share; the peak moves to the backward pass.
fn remat_saving(forward: u64, blocks: u64) -> u64 {
    forward.saturating_sub(forward.saturating_mul(2) / blocks.max(1))
}

/// Remat of the repeated block, estimated from how many blocks the plan repeats, then a
/// smaller micro-batch; with no repeated block (or two, where the backward pass of one
/// holds as much as both kept), a smaller micro-batch is the fix that shrinks the
/// activations. Then a shorter sequence, when S×S attention buffers are kept.
fn forward_remedies(p: &Plan, forward: u64) -> Vec<Remedy> {
    let heap = p.heap_peak_bytes.max(p.roles_at_peak.total());
    let blocks = repeated_blocks(p);
    let remat = blocks
        .map(|n| (n, remat_saving(forward, n)))
        .filter(|&(_, s)| s > 0);
    let mut remedies = match remat {
        Some((n, saving)) => vec![
            Remedy {
                fix: format!(
                    "wrap the repeated block ({n} of them at the peak) in jax.checkpoint (remat): the {} kept for backward go, and the backward pass recomputes one block at a time, holding about twice its share ({}) with its gradients, so the peak moves to the backward pass (the saving is at most {} if the backward pass held nothing more)",
                    size(forward),
                    size(forward.saturating_mul(2) / n),
                    size(forward),
                ),
                saving: Some(saving),
                cost: "about one more forward pass per step (~+30% step time)",
            },
            Remedy {
                fix: "halve the micro-batch and accumulate gradients over two: the activations and temporaries scale with the batch".into(),
                saving: Some(heap / 2),
                cost: "twice as many steps per batch",
            },
        ],
        None => vec![Remedy {
            fix: format!(
                "halve the micro-batch and accumulate gradients over two: the activations and temporaries scale with the batch; remat cannot be estimated here: {}",
                match blocks {
                    Some(n) => format!("with {n} repeated blocks, the backward pass of one holds about as much as the forward keeps"),
                    None => "the plan shows no repeated block whose activations it could drop".to_owned(),
                }
            ),
            saving: Some(heap / 2),
            cost: "twice as many steps per batch",
        }],
    };
    let squares: u64 = p
        .live_at_peak
        .iter()
        .filter(|x| x.role == Role::Forward && is_attention_square(&x.shape))
        .map(|x| x.bytes)
        .fold(0, u64::saturating_add);
    if squares > 0 {
        remedies.push(Remedy {
            fix: format!(
                "halve the sequence: {} are S×S attention buffers, which it shrinks 4×; with a fused attention kernel, check that these buffers leave the plan",
                size(squares),
            ),
            saving: Some(squares - squares / 4),
            cost: "shorter sequences per example",
        });
    }
    remedies
}

/// Mostly backward: gradients and their temporaries.
pub fn role_backward(cx: &Context<'_>) -> Option<Line> {
    let p = cx.plan()?;
    let roles = p.roles_at_peak;
    let (heap, matter) = heap_and_roles_matter(cx, p);
    if !matter || pct(roles.backward, heap) < DOMINANT_ROLE_PCT {
        return None;
    }
    let text = format!(
        "{} of the heap peak {} ({:.1}%, read)",
        size(roles.backward),
        size(heap),
        pct(roles.backward, heap)
    );
    let line = Line::new(
        DiagnosisId::RoleBackward,
        Label::Read,
        text,
        "gradients and their temporaries",
    );
    Some(line.remedy(cx, Remedy {
        fix: "shard parameters and gradients across devices (FSDP), or accumulate gradients over micro-batches; look for an f32 copy of bf16 gradients".into(),
        saving: Some(roles.backward / 2),
        cost: "halving the micro-batch halves these temporaries and doubles the steps per batch",
    }))
}

/// Library workspace (GEMM/convolution scratch) takes a large share.
pub fn role_workspace(cx: &Context<'_>) -> Option<Line> {
    let p = cx.plan()?;
    let roles = p.roles_at_peak;
    let (heap, matter) = heap_and_roles_matter(cx, p);
    let large = pct(roles.workspace, heap) >= WORKSPACE_PCT || roles.workspace >= WORKSPACE_BYTES;
    if !matter || !large {
        return None;
    }
    let text = format!(
        "GEMM/convolution scratch takes {} of the heap peak ({:.1}%, read)",
        size(roles.workspace),
        pct(roles.workspace, heap)
    );
    let line = Line::new(
        DiagnosisId::RoleWorkspace,
        Label::Read,
        text,
        "cuBLAS/cuDNN/hipBLASLt scratch buffers (on ROCm gfx950, 64 MiB per hipBLASLt GEMM)",
    );
    Some(line.remedy(cx, Remedy {
        fix: "usually small; if it matters, limit the library workspace (e.g. XLA_FLAGS=--xla_gpu_autotune_level=0 or a smaller cuBLASLt/hipBLASLt workspace) so fewer GEMMs keep scratch at once".into(),
        saving: Some(roles.workspace / 2),
        cost: "possibly slower GEMMs/convolutions (less tuned algorithms)",
    }))
}

/// No donated parameters while outputs of the parameters' shapes are made: old and new
/// state are live together. XLA reuses a donated parameter only for an output of the
/// same shape, so the saving is what parameters and outputs have in common by shape.
pub fn no_donation(cx: &Context<'_>) -> Option<Line> {
    let p = cx.plan()?;
    let donatable = donatable_bytes(p);
    if !cx.pressure
        || p.donated_parameter_count > 0
        || donatable < NOTEWORTHY
        || !cx.material(donatable)
    {
        return None;
    }
    let text = format!(
        "{} parameters and {} outputs are live together, 0 donated; {} of the outputs have a parameter's shape, so donating the state could save up to {} (estimated)",
        size(p.parameter_bytes),
        size(p.non_aliased_output_bytes),
        size(donatable),
        size(donatable)
    );
    let line = Line::new(
        DiagnosisId::NoDonation,
        Label::Estimated,
        text,
        "old and new parameters/optimizer state are live together",
    );
    Some(
        line.remedy(cx, Remedy {
            fix: "pass donate_argnums (or donate_argnames) for the state arguments: jax.jit(step, donate_argnums=(0,))".into(),
            saving: Some(donatable),
            cost: "none at run time; the donated input arrays become unusable after the call",
        })
        .upper_bound("XLA copies donated state that is read after it is overwritten, and the plan does not say which"),
    )
}

/// XLA's own rematerialization already ran: the fix must come from the program.
pub fn xla_remat(cx: &Context<'_>) -> Option<Line> {
    let p = cx.plan()?;
    if p.remat_instructions == 0 {
        return None;
    }
    let text = format!(
        "{} instructions of the plan are copies its rematerialization made (read)",
        p.remat_instructions
    );
    let line = Line::new(
        DiagnosisId::XlaRemat,
        Label::Read,
        text,
        "XLA's own rematerialization already hit its limit",
    );
    Some(line.fix(
        "expect the fix to come from the program (checkpointing, batch, sharding), not from XLA",
    ))
}

/// The stacks a `lax.scan` loop keeps per iteration: one line per loop, its stacks as
/// items. Forward stacks (activations kept for backward) shrink with `jax.checkpoint`
/// on the scanned body; backward ones (the scanned weights' gradients) do not.
pub fn scan_stack(cx: &Context<'_>) -> Vec<Line> {
    let Some(p) = cx.plan() else {
        return Vec::new();
    };
    // Loops in the order of their largest stack (stacks come largest first).
    let mut loops: Vec<&str> = Vec::new();
    for s in &p.scan_stacks {
        if !loops.contains(&s.while_instruction.as_str()) {
            loops.push(&s.while_instruction);
        }
    }
    loops
        .into_iter()
        .map(|loop_name| {
            let stacks: Vec<&ScanStack> = p
                .scan_stacks
                .iter()
                .filter(|s| s.while_instruction == loop_name)
                .collect();
            scan_loop_line(cx, loop_name, &stacks)
        })
        .collect()
}

fn scan_loop_line(cx: &Context<'_>, loop_name: &str, stacks: &[&ScanStack]) -> Line {
    let sum = |role: Option<Role>| {
        stacks
            .iter()
            .filter(|s| role.is_none_or(|r| s.role == r))
            .map(|s| s.bytes)
            .fold(0, u64::saturating_add)
    };
    let (total, forward) = (sum(None), sum(Some(Role::Forward)));
    let buffers: u64 = stacks.iter().map(|s| s.count).sum();
    let what = if forward == 0 {
        ": gradients the backward loop stacks per iteration".to_owned()
    } else {
        format!(
            ", {} of them forward activations kept for backward",
            size(forward)
        )
    };
    let text = format!(
        "the scan loop {loop_name} keeps {buffers} stacked buffer{} of {} (read){what}",
        if buffers == 1 { "" } else { "s" },
        size(total),
    );
    let items = stacks
        .iter()
        .map(|s| DiagnosisItem {
            shape: s.shape.clone(),
            count: s.count,
            bytes: s.bytes,
            role: s.role,
            source: s.source.clone(),
            op_name: s.op_name.clone(),
        })
        .collect();
    if forward == 0 {
        let line = Line::new(
            DiagnosisId::ScanStack,
            Label::Read,
            text,
            "the scanned weights' gradients, stacked per layer by the backward loop: remat does not shrink them",
        );
        return line.subject(loop_name).items(items);
    }
    let line = Line::new(
        DiagnosisId::ScanStack,
        Label::Read,
        text,
        "lax.scan / nn.scan keep per-layer values stacked [layers, …] for the backward pass",
    );
    line.remedy(cx, Remedy {
        fix: "jax.checkpoint on the scanned body (policy: nothing_saveable or dots_saveable) keeps only the carry per layer".into(),
        saving: Some(forward),
        cost: "about one more forward pass of the scanned layers",
    })
    .subject(loop_name)
    .items(items)
}

/// Host callbacks (a leftover `jax.debug.print`) compiled into the step.
pub fn debug_callback(cx: &Context<'_>) -> Option<Line> {
    let p = cx.plan()?;
    if p.host_callbacks.is_empty() {
        return None;
    }
    let text = format!(
        "the module calls back to the host ({}): each forces its operands to be materialized and sent to the host",
        p.host_callbacks.join(", ")
    );
    let line = Line::new(
        DiagnosisId::DebugCallback,
        Label::Read,
        text,
        "a leftover jax.debug.print / jax.debug.callback / io_callback",
    );
    Some(
        line.fix(
            "remove the debug print from the step, or print a reduced value (a norm, a slice)",
        ),
    )
}

/// TPU layout padding wastes a large share of what is live at the peak.
pub fn tpu_padding(cx: &Context<'_>) -> Option<Line> {
    let p = cx.plan()?;
    let padded: u64 = p
        .live_at_peak
        .iter()
        .map(|x| x.bytes)
        .fold(0, u64::saturating_add);
    if p.padding_bytes < NOTEWORTHY || pct(p.padding_bytes, padded) < PADDING_PCT {
        return None;
    }
    let example = p
        .live_at_peak
        .iter()
        .max_by_key(|x| x.bytes.saturating_sub(x.unpadded_bytes))
        .map(|w| {
            format!(
                "; most in {} {} ({} padded vs {} unpadded)",
                w.name,
                w.shape,
                size(w.bytes),
                size(w.unpadded_bytes)
            )
        })
        .unwrap_or_default();
    let text = format!(
        "{} of {} live at the peak is padding ({:.1}%, read){}",
        size(p.padding_bytes),
        size(padded),
        pct(p.padding_bytes, padded),
        example
    );
    let line = Line::new(
        DiagnosisId::TpuPadding,
        Label::Read,
        text,
        "TPU tiles pad the minor dimension to a multiple of 128 and the second-minor to a multiple of 8",
    );
    Some(line.remedy(cx, Remedy {
        fix: "make the last dimension a multiple of 128 and the second-to-last a multiple of 8 (e.g. (129, 1024) → (128, 1024))".into(),
        saving: Some(p.padding_bytes),
        cost: "a reshape or a different hidden size",
    }))
}

/// Arrays the plan keeps in host memory (memory space 5), never device memory.
pub fn host_offload(cx: &Context<'_>) -> Option<Line> {
    let p = cx.plan()?;
    let host = p.host_bytes();
    if host == 0 {
        return None;
    }
    let text = format!(
        "{} live in host memory (memory space 5, S(5)): {} parameters, {} outputs, {} temporary; not counted as device memory (read)",
        size(host),
        size(p.host_argument_bytes),
        size(p.host_output_bytes),
        size(p.host_temp_bytes)
    );
    let line = Line::new(
        DiagnosisId::HostOffload,
        Label::Read,
        text,
        "arrays offloaded to host memory",
    );
    Some(line.fix("none needed; offload more (activations, optimizer state) to save device memory"))
}

/// The largest group of same-shaped buffers of a role at the peak, by source line:
/// `5× f32[8,8,1024,1024] at model.py:57 (jit(step)/jvp(model)/softmax) = 1,280 MiB`.
fn largest_group(p: &Plan, role: Role) -> Option<String> {
    let mut groups: Vec<(&str, &str, u64, u64, &str)> = Vec::new();
    for x in p.live_at_peak.iter().filter(|x| x.role == role) {
        match groups
            .iter_mut()
            .find(|g| g.0 == x.shape && g.1 == x.source)
        {
            Some(g) => {
                g.2 += 1;
                g.3 = g.3.saturating_add(x.bytes);
            }
            None => groups.push((&x.shape, &x.source, 1, x.bytes, &x.op_name)),
        }
    }
    let (shape, source, count, bytes, op) = groups.into_iter().max_by_key(|g| g.3)?;
    // Sources are shown by file name, as every table shows them.
    let at = if source.is_empty() {
        String::new()
    } else {
        format!(" at {}", present::short_source(source))
    };
    let op = if op.is_empty() {
        String::new()
    } else {
        format!(" ({op})")
    };
    Some(format!("{count}× {shape}{at}{op} = {}", size(bytes)))
}

/// `[..., S, S]` with a long S: the shape of naive attention's score buffers.
fn is_attention_square(shape: &str) -> bool {
    let Some(dims) = shape.split_once('[').and_then(|(_, d)| d.strip_suffix(']')) else {
        return false;
    };
    let dims: Vec<u64> = dims
        .split(',')
        .filter_map(|d| d.trim().parse().ok())
        .collect();
    // [B, H, S, S]: a rank-3 [B, S, D] with S = D would look the same.
    match dims.as_slice() {
        [_, _, .., s1, s2] => s1 == s2 && *s2 >= ATTENTION_MIN_SEQUENCE,
        _ => false,
    }
}

/// Bytes of non-aliased outputs that a parameter of the same shape could hold if it
/// were donated (each parameter serves one output).
fn donatable_bytes(p: &Plan) -> u64 {
    let mut params: Vec<(&str, u64)> = p
        .live_at_peak
        .iter()
        .filter(|x| x.category == Category::Parameter && x.memory_space == 0)
        .map(|x| (x.shape.as_str(), x.bytes))
        .collect();
    let mut saving: u64 = 0;
    for out in p
        .live_at_peak
        .iter()
        .filter(|x| x.category == Category::Output && x.memory_space == 0)
    {
        if let Some(i) = params
            .iter()
            .position(|(shape, bytes)| *shape == out.shape && *bytes == out.bytes)
        {
            saving = saving.saturating_add(params.swap_remove(i).1);
        }
    }
    saving
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attention_squares_are_rank_four_or_more() {
        assert!(is_attention_square("f32[8,8,1024,1024]"));
        assert!(!is_attention_square("f32[8,1024,1024]"));
        assert!(!is_attention_square("f32[8,8,64,64]"));
        assert!(!is_attention_square("f32[]"));
    }
}
