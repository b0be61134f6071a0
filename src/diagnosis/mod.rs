//! Diagnosis lines (mission-spec §5, §9): each finding with its cause, a fix, the
//! bytes the fix would save (estimated), its cost, and whether the plan then fits.

pub mod error_text;
pub mod verdict;

use crate::capture::CaptureIndex;
use crate::report::model::{
    AllocatorKind, Category, Diagnosis, HostReport, Label, LiveOrigin, ModuleReport, Role, Runtime,
};
use crate::report::present;
use crate::units::{gib, mib};

pub const NO_PLAN_TEXT: &str = "the capture has no compiled plans (no /host:metadata plane with HloProtos): \
plan figures are unavailable. Capture with jax.profiler.trace(logdir) on a JAX that records them (the default; \
do not pass enable_hlo_proto=False in ProfileOptions), and on GPU keep \
XLA_FLAGS=--xla_gpu_executable_embed_debug_info=true (the default)";

const CHECK: &str = "jax.jit(f).lower(*args).compile().memory_analysis()";

/// A capacity far below the device's memory means a memory fraction was set.
const FRACTION_SET_BELOW: f64 = 0.70;
/// JAX's default `XLA_PYTHON_CLIENT_MEM_FRACTION`.
const DEFAULT_FRACTION: f64 = 0.75;
/// Below this, a saving or a growth is noise, not a line.
const NOTEWORTHY: u64 = 1 << 20;

/// A proposed fix: what to do, the bytes it saves (estimated), what it costs.
struct Remedy {
    fix: String,
    saving: Option<u64>,
    cost: &'static str,
}

struct Builder<'r> {
    report: &'r HostReport,
    module: Option<&'r ModuleReport>,
    runtime: Option<&'r Runtime>,
    capacity: Option<u64>,
    /// Whether memory was short: the plan exceeds the pool, the allocator waited, the
    /// module's last execution launched no kernel, or the pool peaked above 90% (true
    /// when no capacity is known: nothing says it was not).
    pressure: bool,
    out: Vec<Diagnosis>,
}

impl Builder<'_> {
    fn needs(&self) -> u64 {
        self.module.map(|m| m.plan.total_bytes).unwrap_or(0)
    }

    fn fits_after(&self, saving: u64) -> Option<bool> {
        self.capacity
            .map(|c| self.needs().saturating_sub(saving) <= c)
    }

    /// Whether the selected module's last execution would fit once `saving` bytes of
    /// what was live at its start are gone: live − saving + what the execution itself
    /// allocates (its plan's needs less its arguments, which are already live).
    fn fits_at_last_execution(&self, saving: u64) -> Option<bool> {
        let capacity = self.capacity?;
        let live = *self.runtime?.in_use_at_selected_starts.last()?;
        let adds = self
            .module
            .map(|m| m.plan.total_bytes.saturating_sub(m.plan.parameter_bytes))
            .unwrap_or(0);
        Some(live.saturating_sub(saving).saturating_add(adds) <= capacity)
    }

    fn push(&mut self, id: &str, label: Label, text: String, cause: &str) -> &mut Diagnosis {
        self.out.push(Diagnosis {
            id: id.into(),
            label,
            text,
            cause: cause.into(),
            fix: None,
            saving_bytes: None,
            cost: None,
            fits_after: None,
            check: None,
        });
        let last = self.out.len() - 1;
        &mut self.out[last]
    }

    fn fix(&mut self, id: &str, label: Label, text: String, cause: &str, remedy: Remedy) {
        let Remedy { fix, saving, cost } = remedy;
        let fits = saving.and_then(|s| self.fits_after(s));
        let d = self.push(id, label, text, cause);
        d.fix = Some(fix);
        d.saving_bytes = saving;
        d.cost = (!cost.is_empty()).then(|| cost.to_owned());
        d.fits_after = fits;
        d.check = Some(CHECK.into());
    }
}

/// The device pool's capacity (measured), when allocator events were recorded.
pub fn capacity(report: &HostReport) -> Option<u64> {
    report
        .runtime
        .as_ref()
        .and_then(|r| {
            r.allocators
                .iter()
                .find(|a| a.kind == AllocatorKind::Device)
        })
        .map(|a| a.capacity_bytes)
        .filter(|&c| c > 0)
}

pub fn diagnose(report: &HostReport, capture: &CaptureIndex) -> Vec<Diagnosis> {
    let module = report
        .selected_module
        .as_deref()
        .and_then(|s| report.modules.iter().find(|m| m.label == s));
    let capacity = capacity(report);
    let pressure = memory_pressure(report, module, capacity);
    let mut b = Builder {
        report,
        module,
        runtime: report.runtime.as_ref(),
        capacity,
        pressure,
        out: Vec::new(),
    };
    if report.modules.is_empty() {
        b.push(
            "no_plan_in_capture",
            Label::Read,
            NO_PLAN_TEXT.into(),
            "the capture has no /host:metadata plans",
        );
    }
    if let Some(m) = module {
        plan_lines(&mut b, m);
    }
    runtime_lines(&mut b, capture);
    b.out
}

fn memory_pressure(
    report: &HostReport,
    module: Option<&ModuleReport>,
    capacity: Option<u64>,
) -> bool {
    let Some(capacity) = capacity else {
        return true;
    };
    let Some(rt) = report.runtime.as_ref() else {
        return true;
    };
    let exceeds = module.is_some_and(|m| m.plan.total_bytes > capacity);
    let failed = report.selected_module.as_deref().is_some_and(|s| {
        rt.executions
            .iter()
            .rev()
            .find(|e| e.module == s)
            .is_some_and(|e| e.launched_kernels == Some(false))
    });
    let peaked = rt
        .allocators
        .iter()
        .find(|a| a.kind == AllocatorKind::Device)
        .is_some_and(|a| a.peak_in_use_bytes as f64 >= 0.9 * capacity as f64);
    exceeds || failed || peaked || rt.retry.count > 0
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn plan_lines(b: &mut Builder<'_>, m: &ModuleReport) {
    let p = &m.plan;
    let roles = p.roles_at_peak;
    let heap = p.heap_peak_bytes.max(roles.total());
    // The role split explains a plan that does not fit (mission-spec §5: the three
    // rows under "the step itself does not fit"); without a capacity it is the evidence.
    let roles_matter = b.capacity.map(|c| p.total_bytes > c).unwrap_or(true);
    if let Some(capacity) = b.capacity {
        if p.total_bytes > capacity {
            let text = format!(
                "{} does not fit: needs {} (read: {} parameters + {} outputs + {} temporary − {} donated) > capacity {} (measured); at the heap peak {:.1}% forward-kept, {:.1}% backward, {:.1}% workspace, {:.1}% other",
                m.label,
                gib(p.total_bytes),
                mib(p.argument_bytes),
                mib(p.output_bytes),
                mib(p.temp_bytes),
                mib(p.alias_bytes),
                gib(capacity),
                pct(roles.forward, heap),
                pct(roles.backward, heap),
                pct(roles.workspace, heap),
                pct(roles.other, heap),
            );
            b.push(
                "plan_exceeds_capacity",
                Label::Read,
                text,
                "the plan alone exceeds the memory pool",
            );
        }
    }

    if roles_matter && heap > 0 && pct(roles.forward, heap) >= 40.0 {
        let largest = p
            .live_at_peak
            .iter()
            .filter(|x| x.role == Role::Forward)
            .map(|x| x.bytes)
            .max()
            .unwrap_or(0);
        let saving = roles.forward.saturating_sub(largest);
        let squares: u64 = p
            .live_at_peak
            .iter()
            .filter(|x| x.role == Role::Forward && is_attention_square(&x.shape))
            .map(|x| x.bytes)
            .fold(0, u64::saturating_add);
        // Remat saves all but the largest buffer; with a single forward buffer it saves
        // nothing, and a smaller micro-batch is the fix that shrinks it.
        let (mut fix, saving, cost) = if saving > 0 {
            (
                format!(
                    "wrap the repeated block in jax.checkpoint (remat): keeps only its inputs and recomputes the rest in the backward pass, saving about {} (estimated); or use a smaller micro-batch with gradient accumulation (activations scale with batch × sequence)",
                    mib(saving)
                ),
                saving,
                "about one more forward pass per step (~+30% step time)",
            )
        } else {
            (
                format!(
                    "halve the micro-batch and accumulate gradients over two: the activations kept for backward scale with the batch, saving about {} (estimated)",
                    mib(roles.forward / 2)
                ),
                roles.forward / 2,
                "twice as many steps per batch",
            )
        };
        if squares > 0 {
            fix.push_str(&format!(
                "; {} are S×S attention buffers: halving the sequence shrinks them 4× ({} saved, estimated); with a fused attention kernel, check that these buffers leave the plan",
                mib(squares),
                mib(squares - squares / 4)
            ));
        }
        let text = format!(
            "mostly forward activations kept for backward: {} of the heap peak {} ({:.1}%, read){}",
            mib(roles.forward),
            mib(heap),
            pct(roles.forward, heap),
            largest_group(p, Role::Forward)
                .map(|g| format!("; the largest: {g}"))
                .unwrap_or_default()
        );
        b.fix(
            "role_forward",
            Label::Read,
            text,
            "activations saved for the backward pass grow with batch × sequence; naive attention adds B·H·S·S per layer",
            Remedy { fix, saving: Some(saving), cost },
        );
    }
    if roles_matter && heap > 0 && pct(roles.backward, heap) >= 40.0 {
        let saving = roles.backward / 2;
        let text = format!(
            "mostly backward: gradients and their temporaries take {} of the heap peak {} ({:.1}%, read)",
            mib(roles.backward),
            mib(heap),
            pct(roles.backward, heap)
        );
        b.fix(
            "role_backward",
            Label::Read,
            text,
            "gradients and their temporaries",
            Remedy { fix: "shard parameters and gradients across devices (FSDP), or accumulate gradients over micro-batches; look for an f32 copy of bf16 gradients".into(), saving: Some(saving), cost: "halving the micro-batch halves these temporaries and doubles the steps per batch" },
        );
    }
    if roles_matter
        && heap > 0
        && (pct(roles.workspace, heap) >= 10.0 || roles.workspace >= 256 << 20)
    {
        let text = format!(
            "library workspace (GEMM/convolution scratch) takes {} of the heap peak ({:.1}%, read)",
            mib(roles.workspace),
            pct(roles.workspace, heap)
        );
        b.fix(
            "role_workspace",
            Label::Read,
            text,
            "cuBLAS/cuDNN/hipBLASLt scratch buffers (on ROCm gfx950, 64 MiB per hipBLASLt GEMM)",
            Remedy { fix: "usually small; if it matters, limit the library workspace (e.g. XLA_FLAGS=--xla_gpu_autotune_level=0 or a smaller cuBLASLt/hipBLASLt workspace) so fewer GEMMs keep scratch at once".into(), saving: Some(roles.workspace / 2), cost: "possibly slower GEMMs/convolutions (less tuned algorithms)" },
        );
    }

    // XLA can reuse a donated parameter only for an output of the same shape: the
    // saving is what parameters and non-aliased outputs have in common, by shape.
    let donatable = donatable_bytes(p);
    if b.pressure && p.donated_parameter_count == 0 && donatable >= NOTEWORTHY {
        let saving = donatable;
        let text = format!(
            "no donated parameters: {} parameters and {} outputs are live together, 0 donated; {} of the outputs have a parameter's shape, so donating the state could save up to {} (estimated)",
            mib(p.parameter_bytes),
            mib(p.non_aliased_output_bytes),
            mib(donatable),
            mib(saving)
        );
        b.fix(
            "no_donation",
            Label::Estimated,
            text,
            "old and new parameters/optimizer state are live together",
            Remedy { fix: "pass donate_argnums (or donate_argnames) for the state arguments: jax.jit(step, donate_argnums=(0,))".into(), saving: Some(saving), cost: "none at run time; the donated input arrays become unusable after the call" },
        );
    }
    if p.remat_instructions > 0 {
        let text = format!(
            "XLA already rematerialized {} instructions (read)",
            p.remat_instructions
        );
        let d = b.push(
            "xla_remat",
            Label::Read,
            text,
            "XLA's own rematerialization already hit its limit",
        );
        d.fix = Some("expect the fix to come from the program (checkpointing, batch, sharding), not from XLA".into());
    }
    for stack in &p.scan_stacks {
        let text = format!(
            "scan stack {} ×{} via {} holds {} ({}, read)",
            stack.shape,
            stack.count,
            stack.while_instruction,
            mib(stack.bytes),
            stack.role.describe()
        );
        let d = b.push(
            "scan_stack",
            Label::Read,
            text,
            "lax.scan / nn.scan keep per-layer values stacked [layers, …]",
        );
        d.fix = Some("jax.checkpoint on the scanned body (policy: nothing_saveable or dots_saveable) keeps only the carry per layer".into());
        d.saving_bytes = (stack.role == Role::Forward).then_some(stack.bytes);
        d.cost = Some("about one more forward pass of the scanned layers".into());
        d.check = Some(CHECK.into());
    }
    if !p.host_callbacks.is_empty() {
        let text = format!(
            "host callbacks in the module ({}): each forces its operands to be materialized and sent to the host",
            p.host_callbacks.join(", ")
        );
        let d = b.push(
            "debug_callback",
            Label::Read,
            text,
            "a leftover jax.debug.print / jax.debug.callback / io_callback",
        );
        d.fix = Some(
            "remove the debug print from the step, or print a reduced value (a norm, a slice)"
                .into(),
        );
    }
    if let Some(capacity) = b.capacity {
        if let Some(big) = p.live_at_peak.iter().find(|x| x.bytes > capacity / 2) {
            let debug = if p.host_callbacks.is_empty() {
                ""
            } else {
                "; the module also has a host callback (a jax.debug.print?) that materializes whole tensors"
            };
            let text = format!(
                "one buffer takes over half the pool: {} {} is {} of {} (read, capacity measured){debug}",
                big.name,
                big.shape,
                mib(big.bytes),
                gib(capacity)
            );
            let fits = b.fits_after(big.bytes);
            let d = b.push(
                "large_replicated",
                Label::Read,
                text,
                "a configuration error, not capacity: an unexpectedly large tensor, from a leftover jax.debug.print forcing a full tensor to be materialized, a missing sharding annotation (replicated), or a wrong mesh shape",
            );
            d.fix = Some("remove debug prints of large arrays; check its sharding (jax.debug.visualize_array_sharding) and shard it over the mesh".into());
            d.saving_bytes = Some(big.bytes);
            d.cost = Some(
                "none if it was a debug print; a sharded array needs its devices' collectives"
                    .into(),
            );
            d.fits_after = fits;
        }
    }
    let padded: u64 = p
        .live_at_peak
        .iter()
        .map(|x| x.bytes)
        .fold(0, u64::saturating_add);
    if p.padding_bytes >= NOTEWORTHY && pct(p.padding_bytes, padded) >= 10.0 {
        let worst = p
            .live_at_peak
            .iter()
            .max_by_key(|x| x.bytes.saturating_sub(x.unpadded_bytes));
        let example = worst
            .map(|w| {
                format!(
                    "; most in {} {} ({} padded vs {} unpadded)",
                    w.name,
                    w.shape,
                    mib(w.bytes),
                    mib(w.unpadded_bytes)
                )
            })
            .unwrap_or_default();
        let text = format!(
            "layout padding wastes {} of {} live at the peak ({:.1}%, read){}",
            mib(p.padding_bytes),
            mib(padded),
            pct(p.padding_bytes, padded),
            example
        );
        b.fix(
            "tpu_padding",
            Label::Read,
            text,
            "TPU tiles pad the minor dimension to a multiple of 128 and the second-minor to a multiple of 8",
            Remedy { fix: "make the last dimension a multiple of 128 and the second-to-last a multiple of 8 (e.g. (129, 1024) → (128, 1024))".into(), saving: Some(p.padding_bytes), cost: "a reshape or a different hidden size" },
        );
    }
    let host = p
        .host_argument_bytes
        .saturating_add(p.host_output_bytes)
        .saturating_add(p.host_temp_bytes);
    if host > 0 {
        let text = format!(
            "{} live in host memory (memory space 5, S(5)): {} parameters, {} outputs, {} temporary; not counted as device memory (read)",
            mib(host),
            mib(p.host_argument_bytes),
            mib(p.host_output_bytes),
            mib(p.host_temp_bytes)
        );
        let d = b.push(
            "host_offload",
            Label::Read,
            text,
            "arrays offloaded to host memory",
        );
        d.fix = Some(
            "none needed; offload more (activations, optimizer state) to save device memory".into(),
        );
    }
}

/// The largest group of same-shaped buffers of a role at the peak, by source line:
/// `5× f32[8,8,1024,1024] at model.py:57 (jit(step)/jvp(model)/softmax) = 1,280 MiB`.
fn largest_group(p: &crate::report::model::Plan, role: Role) -> Option<String> {
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
    let at = if source.is_empty() {
        String::new()
    } else {
        format!(" at {source}")
    };
    let op = if op.is_empty() {
        String::new()
    } else {
        format!(" ({op})")
    };
    Some(format!("{count}× {shape}{at}{op} = {}", mib(bytes)))
}

/// `[..., S, S]` with S ≥ 128: the shape of naive attention's score buffers.
fn is_attention_square(shape: &str) -> bool {
    let Some(dims) = shape.split_once('[').and_then(|(_, d)| d.strip_suffix(']')) else {
        return false;
    };
    let dims: Vec<u64> = dims
        .split(',')
        .filter_map(|d| d.trim().parse().ok())
        .collect();
    let n = dims.len();
    // [B, H, S, S]: a rank-3 [B, S, D] with S = D would look the same.
    n >= 4 && dims[n - 1] == dims[n - 2] && dims[n - 1] >= 128
}

/// Bytes of non-aliased outputs that a parameter of the same shape could hold if it
/// were donated (each parameter serves one output).
fn donatable_bytes(p: &crate::report::model::Plan) -> u64 {
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

fn runtime_lines(b: &mut Builder<'_>, capture: &CaptureIndex) {
    let no_events = b.runtime.is_none_or(|rt| rt.allocators.is_empty());
    if no_events {
        let has_device = capture
            .planes
            .iter()
            .any(|p| p.name.starts_with("/device:"));
        let why = if has_device {
            "the device allocator recorded no MemoryAllocation events: JAX was not using the BFC allocator \
             (XLA_PYTHON_CLIENT_ALLOCATOR=platform or cuda_async), or the host tracer level was below 2"
        } else {
            "the capture has no device plane: it ran on the CPU backend, whose allocator records no events"
        };
        let text = format!(
            "no allocator events: {why}; runtime peaks, growth and live arrays are unavailable. To record them, run on GPU/TPU with the default allocator and profile with jax.profiler.trace (host_tracer_level 2, the default)"
        );
        b.push("no_allocator_events", Label::Measured, text, why);
    }
    let Some(rt) = b.runtime else {
        return;
    };
    growth_line(b, rt);
    other_arrays_line(b, rt);
    if rt.retry.count > 0 {
        let waited = match rt.retry.waiting_executions.as_slice() {
            [] => String::new(),
            list => format!(" in {}", list.join(", ")),
        };
        let text = format!(
            "AllocatorRetry: the allocator waited for memory {} time{}{waited}, longest {:.2} s, total {:.2} s (measured){}",
            rt.retry.count,
            if rt.retry.count == 1 { "" } else { "s" },
            rt.retry.longest_ns / 1e9,
            rt.retry.total_ns / 1e9,
            if rt.retry.any_execution_started_after {
                "; a waiting execution then launched kernels: memory was freed in time"
            } else {
                "; none of the waiting executions started"
            }
        );
        b.push(
            "allocator_retry",
            Label::Measured,
            text,
            "the out-of-memory happened inside the capture; the failed request is usually the module's temporary block or one output",
        );
    }
    if let (Some(device), Some(capacity)) = (rt.device_memory_bytes, b.capacity) {
        if (capacity as f64) < FRACTION_SET_BELOW * device as f64 {
            let text = format!(
                "the pool is {} of the device's {} ({:.0}%, measured): a memory fraction or limit was set (the capture does not record environment variables)",
                gib(capacity),
                gib(device),
                pct(capacity, device)
            );
            let at_default = (DEFAULT_FRACTION * device as f64) as u64;
            let gain = at_default.saturating_sub(capacity);
            let needs = b.needs();
            let fits = (needs > 0).then_some(needs <= at_default);
            let d = b.push(
                "mem_fraction_set",
                Label::Measured,
                text,
                "XLA_PYTHON_CLIENT_MEM_FRACTION (or XLA_PYTHON_CLIENT_MEM_LIMIT / a preallocation setting) below the device memory",
            );
            d.fix = Some(format!(
                "if the GPU is not shared, raise XLA_PYTHON_CLIENT_MEM_FRACTION to the default {DEFAULT_FRACTION} (a pool of {}) or higher; this fixes a plan that does not fit only if the device has room: {}",
                gib(at_default),
                match fits {
                    Some(true) => format!("the plan's {} fits in {}", gib(needs), gib(at_default)),
                    Some(false) => format!("the plan's {} does not fit even then", gib(needs)),
                    None => "no plan to compare".into(),
                }
            ));
            d.saving_bytes = Some(gain);
            d.fits_after = fits;
            d.cost = Some("less memory left for other processes on the GPU".into());
        }
    }
}

/// "grows X MiB per execution, = 1.00× the non-aliased outputs" (mission-spec §5).
fn growth_line(b: &mut Builder<'_>, rt: &Runtime) {
    let (Some(growth), Some(ratio)) = (rt.growth_per_execution_bytes, rt.growth_ratio_to_outputs)
    else {
        return;
    };
    let starts = &rt.in_use_at_selected_starts;
    // A steady growth: three executions or more, most steps growing by about as much.
    let steady = starts
        .windows(2)
        .filter(|w| (w[1] as i64).saturating_sub(w[0] as i64).saturating_mul(2) >= growth)
        .count();
    if starts.len() < 3
        || growth < NOTEWORTHY as i64
        || ratio < 0.5
        || steady * 3 < (starts.len() - 1) * 2
    {
        return;
    }
    let (first, last) = (
        starts.first().copied().unwrap_or(0),
        starts.last().copied().unwrap_or(0),
    );
    // Launches queued ahead of the device hold their outputs until they run, so memory
    // grows from launch to launch and is given back later: a leak keeps at least half
    // of the growth to the end of the capture.
    let held_at_end = rt
        .in_use_at_end_bytes
        .is_none_or(|end| end >= first + (last.saturating_sub(first)) / 2);
    if !held_at_end {
        return;
    }
    let holder = rt
        .host_events_between_last_executions
        .iter()
        .find(|e| e.name.starts_with("$<unknown> append") || e.name.contains("append"))
        .or_else(|| {
            rt.host_events_between_last_executions
                .iter()
                .find(|e| e.name.starts_with('$'))
        })
        .map(|e| {
            format!(
                "; between the last two executions the host ran {} ×{} (a Python reference holding them?)",
                e.name, e.count
            )
        })
        .unwrap_or_default();
    let text = format!(
        "grows {} per execution (measured: in use at execution start {} → {} over {} executions) = {:.2}× the non-aliased outputs (estimated): the program keeps every step's outputs alive{}",
        mib(growth as u64),
        mib(first),
        mib(last),
        starts.len(),
        ratio,
        holder
    );
    // Dropping the holder frees everything kept so far.
    let saving = last.saturating_sub(first);
    let fits = b.fits_at_last_execution(saving);
    b.fix(
        "growth_per_execution",
        Label::Measured,
        text,
        "outputs of every step stay referenced (a leak across steps)",
        Remedy { fix: "find the holder (e.g. `$<unknown> append` is list.append) and drop the reference, reduce inside the step (a norm, not the tree), or jax.device_get the value; a bigger pool only delays the OOM".into(), saving: Some(saving), cost: "none" },
    );
    if let Some(d) = b.out.last_mut() {
        d.fits_after = fits;
    }
}

/// "other live arrays take space; the largest comes from …": arrays live at the last
/// execution's start that are neither its arguments nor its own earlier outputs.
fn other_arrays_line(b: &mut Builder<'_>, rt: &Runtime) {
    let Some(selected) = b.report.selected_module.clone() else {
        return;
    };
    let own =
        |o: &LiveOrigin| matches!(o, LiveOrigin::Outputs { module, .. } if *module == selected);
    let mut other: Vec<(u64, String)> = rt
        .live_at_last_execution
        .iter()
        .filter(|g| !own(&g.origin))
        .map(|g| {
            let bytes = g.bytes.saturating_sub(g.input_bytes);
            (bytes, present::live_origin(&g.origin))
        })
        .filter(|(bytes, _)| *bytes > 0)
        .collect();
    other.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total: u64 = other.iter().map(|o| o.0).fold(0, u64::saturating_add);
    let inputs: u64 = rt
        .live_at_last_execution
        .iter()
        .map(|g| g.input_bytes)
        .fold(0, u64::saturating_add);
    let (Some((largest, origin)), Some(capacity)) = (other.first().cloned(), b.capacity) else {
        return;
    };
    if total < NOTEWORTHY
        || !(total.saturating_mul(10) >= capacity || (b.pressure && total > b.needs() / 4))
    {
        return;
    }
    let text = format!(
        "other live arrays take {} at the start of the last execution (measured; {} of what was live are its own arguments, estimated); the largest group: {} ({})",
        mib(total),
        mib(inputs),
        origin,
        mib(largest)
    );
    let fits = b.fits_at_last_execution(largest);
    b.fix(
        "other_live_arrays",
        Label::Measured,
        text,
        "arrays outside the step: a dataset or eval copy placed on the device, prefetch, other jit outputs",
        Remedy { fix: "keep that data on the host and stream it in batches, delete it when done (del x; or x.delete()), or use a smaller dtype; \"allocated before the capture started\" needs an earlier profile to name it".into(), saving: Some(largest), cost: "host-to-device transfers per step" },
    );
    if let Some(d) = b.out.last_mut() {
        d.fits_after = fits;
    }
}
