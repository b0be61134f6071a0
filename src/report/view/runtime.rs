//! The runtime section: allocators, counts, in use at each start, growth, retries,
//! live groups, executions.

use super::*;

pub(super) fn runtime(rt: &Runtime, selected: Option<&str>) -> RuntimeView {
    RuntimeView {
        allocators: rt
            .allocators
            .iter()
            .take(limits::ALLOCATORS)
            .map(|a| {
                format!(
                    "{}: capacity {}, peak in use {}, fragmentation at the peak {:.2}",
                    a.name,
                    size(a.capacity_bytes),
                    size(a.peak_in_use_bytes),
                    a.fragmentation_at_peak
                )
            })
            .collect(),
        device_memory: rt
            .device_memory_bytes
            .map(|d| format!("device memory: {}", size(d))),
        counts: format!(
            "executions: {}, kernels: {}, host-to-device transfers: {}",
            rt.execution_count, rt.kernels, rt.transfers
        ),
        in_use_at_starts: in_use_at_starts(&rt.in_use_at_selected_starts),
        growth: growth(rt),
        retry: (rt.retry.count > 0).then(|| {
            format!(
                "{} waits, longest {:.2} s, total {:.2} s",
                rt.retry.count,
                rt.retry.longest_ns / 1e9,
                rt.retry.total_ns / 1e9
            )
        }),
        waits: longest_waits(rt),
        live_groups_title: (!rt.live_at_last_execution.is_empty()).then(|| {
            let total = rt
                .live_at_last_execution
                .iter()
                .fold(0u64, |t, g| t.saturating_add(g.bytes));
            format!(
                "live at the start of the last execution ({} in use), by who allocated it",
                size(total)
            )
        }),
        live_groups: rt
            .live_at_last_execution
            .iter()
            .take(limits::LIVE_GROUPS)
            .map(|g| LiveGroupRow {
                bytes: g.bytes,
                shown: size(g.bytes),
                count: (g.count > 0).then_some(g.count),
                origin: present::live_origin(&g.origin),
                inputs: (g.input_bytes > 0)
                    .then(|| format!("{} of it its arguments, estimated", size(g.input_bytes))),
            })
            .collect(),
        live_groups_more: (rt.live_at_last_execution.len() > limits::LIVE_GROUPS).then(|| {
            let rest = &rt.live_at_last_execution[limits::LIVE_GROUPS..];
            let bytes = rest.iter().fold(0u64, |t, g| t.saturating_add(g.bytes));
            format!("… and {} more groups, {}", rest.len(), size(bytes))
        }),
        host_events: rt
            .host_events_between_last_executions
            .iter()
            .take(limits::HOST_EVENTS)
            .map(|e| HostEventRow {
                count: e.count,
                total: format!("{:.3} ms", e.total_ns / 1e6),
                name: e.name.clone(),
            })
            .collect(),
        executions: executions(rt, selected),
    }
}

/// The growth per execution, or, when the memory in use at the starts went up and
/// down without a trend, the range of its steps (so no trend is claimed).
fn growth(rt: &Runtime) -> Option<String> {
    let signed = |g: i64| {
        let sign = if g < 0 { "−" } else { "+" };
        format!("{sign}{}", size(g.unsigned_abs()))
    };
    if let Some(g) = rt.growth_per_execution_bytes {
        let ratio = rt
            .growth_ratio_to_outputs
            .map(|r| format!(" = {r:.2}× non-aliased outputs (estimated)"))
            .unwrap_or_default();
        return Some(format!("{}{ratio}", signed(g)));
    }
    let steps = rt
        .in_use_at_selected_starts
        .windows(2)
        .map(|w| (w[1] as i64).saturating_sub(w[0] as i64));
    let (low, high) = (steps.clone().min()?, steps.max()?);
    Some(format!(
        "none steady: from one start to the next, in use moved between {} and {}",
        signed(low),
        signed(high)
    ))
}

/// The latest executions, one row each; the selected module's and those that launched
/// no kernel are marked.
pub(super) fn executions(rt: &Runtime, selected: Option<&str>) -> Option<Table> {
    if rt.executions.is_empty() {
        return None;
    }
    let listed = rt.executions.len().min(limits::EXECUTIONS);
    let kept = &rt.executions[rt.executions.len() - listed..];
    let total = rt.execution_count.max(rt.executions.len() as u64);
    let title = if listed as u64 == total {
        format!("Executions ({})", thousands(total))
    } else {
        format!(
            "Executions (the latest {} of {})",
            thousands(listed as u64),
            thousands(total)
        )
    };
    let mark = |e: &Execution| {
        if e.launched_kernels == Some(false) {
            Some(RowMark::NoKernel)
        } else {
            (Some(e.module.as_str()) == selected).then_some(RowMark::Selected)
        }
    };
    let dash = || "—".to_owned();
    Some(Table {
        title,
        label: Label::Measured,
        columns: vec![
            column("module", false),
            column("run id", false),
            column("start", true),
            column("duration", true),
            column("in use at start", true),
            column("launched kernels", false),
        ],
        rows: kept
            .iter()
            .map(|e| {
                vec![
                    Cell::new(if e.module.is_empty() {
                        dash()
                    } else {
                        e.module.clone()
                    }),
                    // The runtime's run id is an unsigned 64-bit number, stored signed in the
                    // report: printed as the runtime gave it, never negative.
                    Cell::new(e.run_id.map_or_else(dash, |r| (r as u64).to_string())),
                    Cell::new(present::duration(e.start_ns)),
                    Cell::new(present::duration(e.duration_ns)),
                    Cell::new(e.in_use_at_start_bytes.map_or_else(dash, size)),
                    Cell::new(match e.launched_kernels {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "—",
                    }),
                ]
            })
            .collect(),
        more: None,
        marks: kept.iter().map(mark).collect(),
    })
}

/// `316 MiB → 420 MiB → … 4 more … → 940 MiB`: the first and last three of a long list.
pub(crate) fn in_use_at_starts(starts: &[u64]) -> Option<String> {
    if starts.len() < 2 {
        return None;
    }
    let edge = limits::IN_USE_EDGE;
    let mut list: Vec<String> = Vec::new();
    for (i, &b) in starts.iter().enumerate() {
        let long = starts.len() > 2 * edge + 2;
        if long && i == edge {
            list.push(format!("… {} more …", starts.len() - 2 * edge));
        }
        if !long || i < edge || i >= starts.len() - edge {
            list.push(size(b));
        }
    }
    Some(list.join(" → "))
}

pub(super) fn longest_waits(rt: &Runtime) -> Vec<String> {
    let mut longest: Vec<_> = rt.retry.waits.iter().collect();
    longest.sort_by(|a, b| b.duration_ns.total_cmp(&a.duration_ns));
    longest
        .into_iter()
        .take(limits::WAITS)
        .map(|w| {
            let within = w
                .execution
                .as_deref()
                .map(|e| format!(" in {e}"))
                .unwrap_or_default();
            format!(
                "waited {:.3} s from {:.3} s{within}",
                w.duration_ns / 1e9,
                w.start_ns / 1e9
            )
        })
        .collect()
}
