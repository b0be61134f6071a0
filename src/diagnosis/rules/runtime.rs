//! Rules on what the runtime events measured: growth across executions, arrays outside
//! the step, allocator waits, a memory fraction, and what the capture lacks.

use crate::diagnosis::line::{pct, Context, Line, Remedy};
use crate::report::model::{DiagnosisId, Label, LiveOrigin};
use crate::report::present;
use crate::units::size;

use super::plan::NOTEWORTHY;

/// A pool below this share of the device's memory means a fraction or limit was set.
const FRACTION_SET_BELOW: f64 = 0.70;
/// JAX's default `XLA_PYTHON_CLIENT_MEM_FRACTION`.
const DEFAULT_FRACTION: f64 = 0.75;
/// Growth counts as the outputs kept from this ratio to the non-aliased outputs.
const GROWTH_RATIO_TO_OUTPUTS: f64 = 0.5;
/// Executions needed to call growth steady.
const GROWTH_MIN_EXECUTIONS: usize = 3;
/// Other arrays are worth a line from a tenth of the pool…
const OTHER_ARRAYS_OF_POOL: u64 = 10;
/// …or, under memory pressure, a quarter of what the step needs.
const OTHER_ARRAYS_OF_NEEDS: u64 = 4;

/// No allocator events: runtime figures are unavailable, and why.
pub fn no_allocator_events(cx: &Context<'_>) -> Option<Line> {
    if !cx.capture || cx.runtime.is_some_and(|rt| !rt.allocators.is_empty()) {
        return None;
    }
    let has_device = cx
        .report
        .planes
        .iter()
        .any(|p| p.name.starts_with(crate::runtime::DEVICE_PLANE_PREFIX));
    if cx.report.host_plane_cut {
        // A device plane read says it ran on a GPU or TPU, whose allocator records
        // events; without one it may have run on the CPU, which records none.
        let whose = if has_device {
            "so they were in the part that was cut"
        } else {
            "so if it ran on a GPU or TPU they were in the part that was cut (on the CPU backend there are none)"
        };
        let text = format!(
            "the capture is cut short in or before its host plane (/host:CPU), where the allocator records them, {whose} (see the notes); runtime peaks, growth and live arrays are unavailable"
        );
        // An absence is read from what the capture holds, not measured.
        let line = Line::new(
            DiagnosisId::NoAllocatorEvents,
            Label::Read,
            text,
            "the capture is cut in or before the plane that records the allocator",
        );
        return Some(line.fix("copy the file again, or capture again"));
    }
    let why = if has_device {
        "the device allocator recorded no MemoryAllocation events: JAX was not using the BFC allocator \
         (XLA_PYTHON_CLIENT_ALLOCATOR=platform or cuda_async), or the host tracer level was below 2"
    } else {
        "the capture has no device plane: it ran on the CPU backend, whose allocator records no events"
    };
    let text = format!("{why}; runtime peaks, growth and live arrays are unavailable");
    let line = Line::new(DiagnosisId::NoAllocatorEvents, Label::Read, text, why);
    Some(line.fix(
        "to record them, run on GPU/TPU with the default allocator and profile with jax.profiler.trace (host_tracer_level 2, the default)",
    ))
}

/// Grows by about the non-aliased outputs every execution, and keeps it: the program
/// holds every step's outputs (a leak across steps).
pub fn growth_per_execution(cx: &Context<'_>) -> Option<Line> {
    let rt = cx.runtime?;
    let (growth, ratio) = (rt.growth_per_execution_bytes?, rt.growth_ratio_to_outputs?);
    let starts = &rt.in_use_at_selected_starts;
    // A steady growth: most steps grow by about as much.
    let steady = starts
        .windows(2)
        .filter(|w| (w[1] as i64).saturating_sub(w[0] as i64).saturating_mul(2) >= growth)
        .count();
    if starts.len() < GROWTH_MIN_EXECUTIONS
        || growth < NOTEWORTHY as i64
        || ratio < GROWTH_RATIO_TO_OUTPUTS
        || steady * 3 < (starts.len() - 1) * 2
    {
        return None;
    }
    let (first, last) = (*starts.first()?, *starts.last()?);
    // Launches queued ahead of the device hold their outputs until they run, so memory
    // grows from launch to launch and is given back later: a leak keeps at least half
    // of the growth to the end of the capture.
    let held_at_end = rt
        .in_use_at_end_bytes
        .is_none_or(|end| end >= first + (last.saturating_sub(first)) / 2);
    if !held_at_end {
        return None;
    }
    let text = format!(
        "grows {} per execution (measured: in use at execution start {} → {} over {} executions) = {:.2}× the non-aliased outputs (estimated): the program keeps every step's outputs alive{}",
        size(growth as u64),
        size(first),
        size(last),
        starts.len(),
        ratio,
        holder(cx).unwrap_or_default()
    );
    // Dropping the holder frees everything kept so far.
    let saving = last.saturating_sub(first);
    let line = Line::new(
        DiagnosisId::GrowthPerExecution,
        Label::Measured,
        text,
        "outputs of every step stay referenced (a leak across steps)",
    );
    let line = line.remedy(cx, Remedy {
        fix: "find the holder (e.g. `$<unknown> append` is list.append) and drop the reference, reduce inside the step (a norm, not the tree), or jax.device_get the value; a bigger pool only delays the OOM".into(),
        saving: Some(saving),
        cost: "none",
    });
    Some(line.fits_after(cx.fits_at_last_execution(saving)))
}

/// What the host ran between the last two executions that may hold the outputs: a
/// `list.append`, else the first Python frame.
fn holder(cx: &Context<'_>) -> Option<String> {
    let events = &cx.runtime?.host_events_between_last_executions;
    let e = events
        .iter()
        .find(|e| e.name.starts_with("$<unknown> append") || e.name.contains("append"))
        .or_else(|| events.iter().find(|e| e.name.starts_with('$')))?;
    Some(format!(
        "; between the last two executions the host ran {} ×{} (a Python reference holding them?)",
        e.name, e.count
    ))
}

/// Arrays live at the last execution's start that are neither its arguments nor its own
/// earlier outputs: a dataset or eval copy on the device, prefetch, other jit outputs.
pub fn other_live_arrays(cx: &Context<'_>) -> Option<Line> {
    let rt = cx.runtime?;
    let selected = cx.report.selected_module.as_deref()?;
    let own =
        |o: &LiveOrigin| matches!(o, LiveOrigin::Outputs { module, .. } if module == selected);
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
    let ((largest, origin), capacity) = (other.first().cloned()?, cx.capacity?);
    let worth = total.saturating_mul(OTHER_ARRAYS_OF_POOL) >= capacity
        || (cx.pressure && total > cx.needs() / OTHER_ARRAYS_OF_NEEDS);
    if total < NOTEWORTHY || !worth {
        return None;
    }
    let text = format!(
        "other live arrays take {} at the start of the last execution (measured; {} of what was live are its own arguments, estimated); the largest group: {} ({})",
        size(total),
        size(inputs),
        origin,
        size(largest)
    );
    let line = Line::new(
        DiagnosisId::OtherLiveArrays,
        Label::Measured,
        text,
        "arrays outside the step: a dataset or eval copy placed on the device, prefetch, other jit outputs",
    );
    let line = line.remedy(cx, Remedy {
        fix: "keep that data on the host and stream it in batches, delete it when done (del x; or x.delete()), or use a smaller dtype; \"allocated before the capture started\" needs an earlier profile to name it".into(),
        saving: Some(largest),
        cost: "host-to-device transfers per step",
    });
    Some(line.fits_after(cx.fits_at_last_execution(largest)))
}

/// The allocator waited for memory (`AllocatorRetry`): the out-of-memory happened
/// inside the capture.
pub fn allocator_retry(cx: &Context<'_>) -> Option<Line> {
    let retry = &cx.runtime?.retry;
    if retry.count == 0 {
        return None;
    }
    let waited = match retry.waiting_executions.as_slice() {
        [] => String::new(),
        list => format!(" in {}", list.join(", ")),
    };
    let text = format!(
        "{} AllocatorRetry event{}{waited}, longest {:.2} s, total {:.2} s (measured){}",
        retry.count,
        if retry.count == 1 { "" } else { "s" },
        retry.longest_ns / 1e9,
        retry.total_ns / 1e9,
        if retry.any_execution_started_after {
            "; a waiting execution then launched kernels: memory was freed in time"
        } else {
            "; none of the waiting executions started"
        }
    );
    Some(Line::new(
        DiagnosisId::AllocatorRetry,
        Label::Measured,
        text,
        "the out-of-memory happened inside the capture; the failed request is usually the module's temporary block or one output",
    ))
}

/// The pool is far below the device's memory: `XLA_PYTHON_CLIENT_MEM_FRACTION` (or a
/// limit) was set. Raising it fixes a plan that does not fit only if the device has room.
pub fn mem_fraction_set(cx: &Context<'_>) -> Option<Line> {
    let (device, capacity) = (cx.runtime?.device_memory_bytes?, cx.capacity?);
    if capacity as f64 >= FRACTION_SET_BELOW * device as f64 {
        return None;
    }
    let text = format!(
        "the pool is {} of the device's {} ({:.0}%, measured): a memory fraction or limit was set (the capture does not record environment variables)",
        size(capacity),
        size(device),
        pct(capacity, device)
    );
    let at_default = (DEFAULT_FRACTION * device as f64) as u64;
    let needs = cx.needs();
    let fits = (needs > 0).then_some(needs <= at_default);
    let fix = format!(
        "if the GPU is not shared, raise XLA_PYTHON_CLIENT_MEM_FRACTION to the default {DEFAULT_FRACTION} (a pool of {}) or higher; this fixes a plan that does not fit only if the device has room: {}",
        size(at_default),
        match fits {
            Some(true) => format!("the plan's {} fits in {}", size(needs), size(at_default)),
            Some(false) => format!("the plan's {} does not fit even then", size(needs)),
            None => "no plan to compare".into(),
        }
    );
    let line = Line::new(
        DiagnosisId::MemFractionSet,
        Label::Measured,
        text,
        "XLA_PYTHON_CLIENT_MEM_FRACTION (or XLA_PYTHON_CLIENT_MEM_LIMIT / a preallocation setting) below the device memory",
    );
    Some(
        line.fix(fix)
            .saving(Some(at_default.saturating_sub(capacity)))
            .fits_after(fits)
            .cost("less memory left for other processes on the GPU"),
    )
}
