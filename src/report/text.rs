//! The terminal report: header, plan, live buffers at the peak, runtime, diagnosis.
//! Section headings carry the label of every figure in the section.

use std::fmt::Write;

use super::model::{HostReport, ModuleReport, Report};
use super::{clean, short_source};
use crate::units::{gib, mib, thousands};

pub fn render(report: &Report, top: usize) -> String {
    let mut out = String::new();
    for (i, host) in report.hosts.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        render_host(&mut out, host, top);
    }
    out
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// ` (needs read, capacity measured)`: the label of each figure in the headline.
pub(crate) fn figure_labels(h: &super::model::Headline) -> String {
    if h.figures.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = h
        .figures
        .iter()
        .map(|f| format!("{} {}", f.name.replace('_', " "), f.label.as_str()))
        .collect();
    format!(" ({})", parts.join(", "))
}

fn render_host(out: &mut String, h: &HostReport, top: usize) {
    let _ = writeln!(
        out,
        "oomlens — {} ({}, {} bytes)",
        clean(&h.file, 200),
        clean(&h.host, 80),
        thousands(h.file_bytes)
    );
    if !h.headline.text.is_empty() {
        let _ = writeln!(
            out,
            "verdict: {}{}",
            clean(&h.headline.text, 400),
            figure_labels(&h.headline)
        );
    }
    let module = h
        .selected_module
        .as_deref()
        .and_then(|s| h.modules.iter().find(|m| m.label == s));
    match module {
        Some(m) => {
            let _ = writeln!(
                out,
                "module: {}  — {}",
                clean(&m.label, 200),
                h.selection_reason
            );
            let _ = writeln!(
                out,
                "executions in the capture: {} (measured)",
                m.executions
            );
            render_plan(out, m, top);
        }
        None => {
            let _ = writeln!(out, "module: none — {}", h.selection_reason);
        }
    }
    if h.modules.len() > 1 {
        let _ = writeln!(
            out,
            "\nModules (read; executions measured), largest peak first:"
        );
        let _ = writeln!(
            out,
            "  {:>12}  {:>12}  {:>12}  {:>5}  module",
            "peak", "temp", "params", "runs"
        );
        for m in h.modules.iter().take(12) {
            let _ = writeln!(
                out,
                "  {:>12}  {:>12}  {:>12}  {:>5}  {}",
                mib(m.plan.peak_bytes),
                mib(m.plan.temp_bytes),
                mib(m.plan.parameter_bytes),
                m.executions,
                clean(&m.label, 120)
            );
        }
        if h.modules.len() > 12 {
            let _ = writeln!(out, "  … and {} more", h.modules.len() - 12);
        }
    }
    if let Some(rt) = &h.runtime {
        let _ = writeln!(out, "\nRuntime (measured):");
        for a in rt.allocators.iter().take(4) {
            let _ = writeln!(
                out,
                "  {}: capacity {}, peak in use {}, fragmentation at the peak {:.2}",
                clean(&a.name, 80),
                gib(a.capacity_bytes),
                gib(a.peak_in_use_bytes),
                a.fragmentation_at_peak
            );
        }
        if let Some(d) = rt.device_memory_bytes {
            let _ = writeln!(out, "  device memory: {}", gib(d));
        }
        let _ = writeln!(
            out,
            "  executions: {}, kernels: {}, host-to-device transfers: {}",
            rt.execution_count, rt.kernels, rt.transfers
        );
        if rt.in_use_at_selected_starts.len() >= 2 {
            let starts = &rt.in_use_at_selected_starts;
            let mut list: Vec<String> = Vec::new();
            for (i, &b) in starts.iter().enumerate() {
                if starts.len() > 8 && i == 3 {
                    list.push(format!("… {} more …", starts.len() - 6));
                }
                if starts.len() <= 8 || i < 3 || i >= starts.len() - 3 {
                    list.push(mib(b));
                }
            }
            let _ = writeln!(
                out,
                "  in use at each execution start: {}",
                list.join(" → ")
            );
        }
        if let Some(g) = rt.growth_per_execution_bytes {
            let ratio = rt
                .growth_ratio_to_outputs
                .map(|r| format!(" = {r:.2}× non-aliased outputs (estimated)"))
                .unwrap_or_default();
            let sign = if g < 0 { "−" } else { "+" };
            let _ = writeln!(
                out,
                "  growth per execution: {sign}{}{ratio}",
                mib(g.unsigned_abs())
            );
        }
        if rt.retry.count > 0 {
            let _ = writeln!(
                out,
                "  AllocatorRetry: {} waits, longest {:.2} s, total {:.2} s",
                rt.retry.count,
                rt.retry.longest_ns / 1e9,
                rt.retry.total_ns / 1e9
            );
            let mut longest: Vec<_> = rt.retry.waits.iter().collect();
            longest.sort_by(|a, b| b.duration_ns.total_cmp(&a.duration_ns));
            for w in longest.iter().take(3) {
                let within = w
                    .execution
                    .as_deref()
                    .map(|e| format!(" in {}", clean(e, 200)))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "    waited {:.3} s from {:.3} s{within}",
                    w.duration_ns / 1e9,
                    w.start_ns / 1e9
                );
            }
        }
        if !rt.live_at_last_execution.is_empty() {
            let _ = writeln!(
                out,
                "  live at the start of the last execution, by who allocated it:"
            );
            for g in rt.live_at_last_execution.iter().take(8) {
                let inputs = if g.input_bytes > 0 {
                    format!(" ({} of it its arguments, estimated)", mib(g.input_bytes))
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "    {:>12}  {}{inputs}",
                    mib(g.bytes),
                    clean(&super::present::live_origin(&g.origin), 160)
                );
            }
        }
        if !rt.host_events_between_last_executions.is_empty() {
            let _ = writeln!(out, "  host events between the last two executions:");
            for e in rt.host_events_between_last_executions.iter().take(8) {
                let _ = writeln!(
                    out,
                    "    {:>6}×  {:>10.3} ms  {}",
                    e.count,
                    e.total_ns / 1e6,
                    clean(&e.name, 120)
                );
            }
        }
    }
    if let Some(e) = &h.error {
        let _ = writeln!(out, "\nThe pasted error ({}):", e.kind);
        if let Some(r) = e.requested_bytes {
            let _ = writeln!(out, "  requested {}", mib(r));
        }
        if let Some(c) = e.capacity_bytes {
            let _ = writeln!(out, "  capacity {}", gib(c));
        }
        if let Some(m) = &e.matched {
            let _ = writeln!(out, "  matches {}", clean(m, 200));
        }
        let _ = writeln!(out, "  {}", e.scenario);
    }
    if !h.notes.is_empty() {
        let _ = writeln!(out, "\nNotes:");
        for n in &h.notes {
            let _ = writeln!(out, "  - {}", clean(&n.text, 600));
        }
    }
    let _ = writeln!(out, "\nDiagnosis:");
    if h.diagnosis.is_empty() {
        let _ = writeln!(
            out,
            "  nothing stands out: the plan fits and memory does not grow across executions"
        );
    }
    for d in &h.diagnosis {
        let _ = writeln!(
            out,
            "  [{}] {}: {}",
            d.label.as_str(),
            d.id.as_str(),
            clean(&d.text, 800)
        );
        if let Some(fix) = &d.fix {
            let _ = writeln!(out, "      fix: {}", clean(fix, 800));
        }
        let mut tail = Vec::new();
        if let Some(s) = d.saving_bytes {
            tail.push(format!("saves ~{} (estimated)", mib(s)));
        }
        if let Some(c) = &d.cost {
            tail.push(format!("cost: {c}"));
        }
        if let Some(f) = d.fits_after {
            tail.push(if f {
                "then fits".into()
            } else {
                "still does not fit".to_string()
            });
        }
        if !tail.is_empty() {
            let _ = writeln!(out, "      {}", tail.join("; "));
        }
    }
    if module.is_some() {
        let _ = writeln!(
            out,
            "\nCheck on your side: jax.jit(f).lower(*args).compile().memory_analysis()"
        );
    }
}

fn render_plan(out: &mut String, m: &ModuleReport, top: usize) {
    let p = &m.plan;
    let _ = writeln!(out, "\nPlan (read):");
    let _ = writeln!(
        out,
        "  parameters       {:>12}  ({} arrays, {} donated = {})",
        mib(p.argument_bytes),
        p.parameter_count,
        p.donated_parameter_count,
        mib(p.donated_bytes)
    );
    let _ = writeln!(
        out,
        "  outputs          {:>12}  ({} not aliased to a parameter)",
        mib(p.output_bytes),
        mib(p.non_aliased_output_bytes)
    );
    let _ = writeln!(out, "  temporary block  {:>12}", mib(p.temp_bytes));
    let _ = writeln!(out, "  aliased          {:>12}", mib(p.alias_bytes));
    let _ = writeln!(
        out,
        "  needs            {:>12}  (parameters + outputs + temporary − aliased)",
        gib(p.total_bytes)
    );
    let _ = writeln!(
        out,
        "  heap peak        {:>12}  (temporary buffers at their peak)",
        mib(p.heap_peak_bytes)
    );
    let _ = writeln!(
        out,
        "  peak             {:>12}  (heap peak + memory held for the whole program, as XProf's Memory Viewer; {} with fragmentation)",
        mib(p.peak_bytes),
        mib(p.allocation_bytes)
    );
    let r = p.roles_at_peak;
    let heap = r.total().max(1);
    let _ = writeln!(
        out,
        "  at the heap peak: forward-kept {:.1}% · backward {:.1}% · workspace {:.1}% · other {:.1}%",
        pct(r.forward, heap),
        pct(r.backward, heap),
        pct(r.workspace, heap),
        pct(r.other, heap)
    );
    let _ = writeln!(
        out,
        "  padding {} · rematerialized instructions {}",
        mib(p.padding_bytes),
        p.remat_instructions
    );
    if p.host_argument_bytes > 0 || p.host_output_bytes > 0 || p.host_temp_bytes > 0 {
        let _ = writeln!(
            out,
            "  host memory (S(5), not device memory): parameters {}, outputs {}, temporary {}",
            mib(p.host_argument_bytes),
            mib(p.host_output_bytes),
            mib(p.host_temp_bytes)
        );
    }
    for s in &p.scan_stacks {
        let _ = writeln!(
            out,
            "  scan stack {} ×{} via {} = {}",
            s.shape,
            s.count,
            clean(&s.while_instruction, 80),
            mib(s.bytes)
        );
    }
    if let Some(note) = &p.replay_note {
        let _ = writeln!(out, "  note: {}", clean(note, 400));
    }
    if p.live_at_peak.is_empty() || top == 0 {
        return;
    }
    let _ = writeln!(out, "\nLive at the peak (read), largest first:");
    let _ = writeln!(
        out,
        "  {:>12}  {:<26} {:<12} {:<10} {:<22} instruction / op_name",
        "bytes", "shape", "category", "role", "source"
    );
    for b in p.live_at_peak.iter().take(top) {
        let category = serde_json::to_value(b.category)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let role = serde_json::to_value(b.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:>12}  {:<26} {:<12} {:<10} {:<22} {}  {}",
            mib(b.bytes),
            clean(&b.shape, 26),
            category,
            role,
            clean(short_source(&b.source), 22),
            clean(&b.name, 60),
            clean(&b.op_name, 100)
        );
    }
    if p.live_at_peak.len() > top {
        let rest: u64 = p
            .live_at_peak
            .iter()
            .skip(top)
            .map(|b| b.bytes)
            .fold(0, u64::saturating_add);
        let _ = writeln!(
            out,
            "  … {} more buffers, {}",
            p.live_at_peak.len() - top,
            mib(rest)
        );
    }
}
