//! The verdict: one sentence every renderer leads with, from what the report holds —
//! the selected module's plan against the pool, the growth line, allocator waits, and
//! what says the module ran out (`Failure`, from selection). It never contradicts the
//! reason the module was selected for: a module said to be where memory ran out gets
//! `does_not_fit` or `ran_out`.

use crate::diagnosis::rules::held::SMALL_PROGRAM;
use crate::diagnosis::{error_text::close, oom};
use crate::evidence::message::{OomKind, OomMessage};
use crate::report::model::{
    AllocatorKind, DiagnosisId, Headline, HeadlineFigure, HostReport, Label, ModuleReport, Verdict,
};
use crate::selection::Failure;
use crate::units::{gib, mib};

/// GiB from 1 GiB up, MiB below, as the headline quotes it.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        gib(bytes)
    } else {
        mib(bytes)
    }
}

fn figure(name: &str, bytes: u64, label: Label) -> HeadlineFigure {
    HeadlineFigure {
        name: name.into(),
        bytes,
        shown: size(bytes),
        label,
    }
}

fn make(verdict: Verdict, text: String, figures: Vec<HeadlineFigure>) -> Headline {
    Headline {
        verdict,
        text,
        figures,
    }
}

/// The pool plans are compared against: the capture's (measured), else the one the
/// pasted error names (read).
fn pool(report: &HostReport) -> Option<(u64, Label)> {
    match report.capacity_bytes {
        Some(c) => Some((c, Label::Measured)),
        None => report
            .error
            .as_ref()
            .and_then(|e| oom::capacity(&e.message))
            .map(|c| (c, Label::Read)),
    }
}

/// The verdict in one sentence (see the module's doc).
pub fn headline(report: &HostReport, failure: Option<&Failure>) -> Headline {
    let module = report
        .selected_module
        .as_deref()
        .and_then(|s| report.modules.iter().find(|m| m.label == s));
    if module.is_none() && !report.has_capture() {
        return without_plan(report);
    }
    let pool = pool(report);
    let capacity = pool.map(|(c, label)| figure("capacity", c, label));
    if let (Some(m), Some((cap, _))) = (module, pool) {
        if m.plan.total_bytes > cap {
            return does_not_fit(m, capacity);
        }
    }
    if let (Some(m), Some(Failure::PastedRequest(_) | Failure::NoRoom { .. })) = (module, failure) {
        return ran_out(m, capacity, failure);
    }
    if let Some(growth) = leak_growth(report) {
        let g = figure("growth_per_execution", growth, Label::Measured);
        let text = if pool.is_some() && module.is_some() {
            format!("Fits, but grows {} per execution: a leak", g.shown)
        } else {
            format!("Grows {} per execution: a leak", g.shown)
        };
        return make(Verdict::Leak, text, vec![g]);
    }
    if let Some(leak) = profile_leak(report) {
        return leak;
    }
    match (module, capacity) {
        (Some(m), Some(capacity)) if allocator_ran_out(report) => {
            let needs = figure("needs", m.plan.total_bytes, Label::Read);
            let text = format!(
                "The step fits (needs {} of capacity {}), but the allocator ran out of memory during the capture",
                needs.shown, capacity.shown
            );
            make(Verdict::RanOut, text, vec![needs, capacity])
        }
        _ if pasted_oom(report) => pasted(report),
        (Some(m), Some(capacity)) => {
            let peak = figure("peak", m.plan.peak_bytes, Label::Read);
            let text = format!("Fits: peak {} of capacity {}", peak.shown, capacity.shown);
            make(Verdict::Fits, text, vec![peak, capacity])
        }
        (Some(m), None) => {
            let needs = figure("needs", m.plan.total_bytes, Label::Read);
            let why = if report.has_capture() {
                "the capture has no allocator events"
            } else {
                "an XLA dump records no memory pool"
            };
            let text = format!("Needs {}; {why}, so the capacity is unknown", needs.shown);
            make(Verdict::PlanOnly, text, vec![needs])
        }
        (None, Some(capacity)) => runtime_only(report, capacity),
        (None, None) => make(
            Verdict::Empty,
            "Nothing to compare: the capture holds neither a compiled plan nor allocator events"
                .into(),
            Vec::new(),
        ),
    }
}

fn does_not_fit(m: &ModuleReport, capacity: Option<HeadlineFigure>) -> Headline {
    let needs = figure("needs", m.plan.total_bytes, Label::Read);
    let shown = capacity
        .as_ref()
        .map(|c| c.shown.clone())
        .unwrap_or_default();
    let text = format!(
        "The step does not fit: needs {}, capacity {shown}",
        needs.shown
    );
    make(
        Verdict::DoesNotFit,
        text,
        std::iter::once(needs).chain(capacity).collect(),
    )
}

/// The growth per execution, when the growth line says it is a leak.
fn leak_growth(report: &HostReport) -> Option<u64> {
    report
        .diagnosis
        .iter()
        .any(|d| d.id == DiagnosisId::GrowthPerExecution)
        .then(|| report.runtime.as_ref()?.growth_per_execution_bytes)
        .flatten()
        .filter(|&g| g > 0)
        .map(|g| g as u64)
}

/// The allocator waited for memory and no waiting execution went on.
fn allocator_ran_out(report: &HostReport) -> bool {
    report
        .runtime
        .as_ref()
        .is_some_and(|r| r.retry.count > 0 && !r.retry.any_execution_started_after)
}

fn runtime_only(report: &HostReport, capacity: HeadlineFigure) -> Headline {
    let peak = report
        .runtime
        .as_ref()
        .and_then(|r| {
            r.allocators
                .iter()
                .find(|a| a.kind == AllocatorKind::Device)
        })
        .map(|a| a.peak_in_use_bytes)
        .unwrap_or(0);
    let peak = figure("peak_in_use", peak, Label::Measured);
    let text = format!(
        "No compiled plan in the capture: peak in use {} of capacity {}",
        peak.shown, capacity.shown
    );
    make(Verdict::RuntimeOnly, text, vec![peak, capacity])
}

/// The verdict when something says the selected module ran out although its plan
/// fits the pool (or the pool is unknown): the pasted error's failed request, or the
/// memory already in use when its last launch started.
fn ran_out(
    m: &ModuleReport,
    capacity: Option<HeadlineFigure>,
    failure: Option<&Failure>,
) -> Headline {
    let needs = figure("needs", m.plan.total_bytes, Label::Read);
    let (text, mut figures) = match failure {
        Some(Failure::NoRoom { in_use, .. }) => {
            let in_use = figure("in_use_at_start", *in_use, Label::Measured);
            (
                format!(
                    "Ran out of memory: the step needs {}, but {} were already in use when its last execution started",
                    needs.shown, in_use.shown
                ),
                vec![needs, in_use],
            )
        }
        Some(Failure::PastedRequest(r)) => {
            let request = figure("failed_request", r.bytes, Label::Read);
            let what = if r.is_temp_block {
                format!("the {} temporary block of {}", request.shown, m.label)
            } else {
                r.part.clone()
            };
            (
                format!("Ran out of memory: {what} could not be allocated"),
                vec![request, needs],
            )
        }
        _ => (
            format!("Ran out of memory in {} (needs {})", m.label, needs.shown),
            vec![needs],
        ),
    };
    figures.extend(capacity);
    make(Verdict::RanOut, text, figures)
}

/// Whether an out-of-memory failure (not a warning alone) was given.
fn pasted_oom(report: &HostReport) -> bool {
    report.error.as_ref().is_some_and(|e| !e.message.advisory)
}

/// The verdict from an error message that matched no module of the plans: its request
/// matches no buffer, or it states what it needs without a request to match.
fn pasted(report: &HostReport) -> Headline {
    let Some(e) = report.error.as_ref() else {
        return without_plan(report);
    };
    match e.message.requested_bytes {
        Some(bytes) => {
            let request = figure("failed_request", bytes, Label::Read);
            let place = if report.has_capture() {
                "in the capture"
            } else {
                "of the XLA dump"
            };
            let text = format!(
                "Ran out of memory: the error's request of {} matches no buffer of the plans {place}",
                request.shown
            );
            make(Verdict::RanOut, text, vec![request])
        }
        None => message_headline(&e.message),
    }
}

/// Any size as a message figure: `41.74 GiB`, `129.5 MiB`, `3.47 EiB`.
fn read(name: &str, bytes: u64, label: Label) -> HeadlineFigure {
    HeadlineFigure {
        name: name.into(),
        bytes,
        shown: crate::units::size(bytes),
        label,
    }
}

/// The verdict without a plan: from the error message, else from device memory
/// profiles, else nothing to compare.
fn without_plan(report: &HostReport) -> Headline {
    if let Some(e) = &report.error {
        return message_headline(&e.message);
    }
    if let Some(leak) = profile_leak(report) {
        return leak;
    }
    if let Some(last) = report.profiles.last() {
        let held = read("held", last.total_bytes, Label::Measured);
        let text = if report.profiles.len() > 1 {
            format!(
                "No compiled plan: the latest profile ({}) holds {} on {}, and nothing grew at every profile",
                last.file, held.shown, last.device
            )
        } else {
            format!(
                "No compiled plan: the profile holds {} on {}; pass two profiles taken at different steps to see what grows",
                held.shown, last.device
            )
        };
        return make(Verdict::RuntimeOnly, text, vec![held]);
    }
    make(
        Verdict::Empty,
        "Nothing to compare: no plan, no error message and no device memory profile".into(),
        Vec::new(),
    )
}

/// The growth between device memory profiles, when the growth line names a leak.
fn profile_leak(report: &HostReport) -> Option<Headline> {
    if report.runtime.is_some()
        || !report
            .diagnosis
            .iter()
            .any(|d| d.id == DiagnosisId::GrowthPerExecution)
    {
        return None;
    }
    let g = report
        .growth
        .iter()
        .filter(|g| g.bytes > 0 && g.rose_every_step)
        .max_by_key(|g| g.bytes)?;
    let (first, last) = (report.profiles.first()?, report.profiles.last()?);
    let grew = read("growth", g.bytes as u64, Label::Measured);
    let text = format!(
        "Grows {} from {} to {}: a leak at {}",
        grew.shown, first.file, last.file, g.frame
    );
    Some(make(Verdict::Leak, text, vec![grew]))
}

/// The verdict an out-of-memory message gives on its own (never contradicting the
/// triage's lines: a plan that cannot fit, one allocation over the memory, are
/// `does_not_fit`; a request that failed among others, `ran_out`).
pub fn message_headline(m: &OomMessage) -> Headline {
    let space = oom::of_space(m);
    let capacity = oom::capacity(m);
    if m.advisory {
        return warning(m);
    }
    if crate::diagnosis::rules::scoped::is_scoped(m) {
        return scoped(m);
    }
    if let (Some(tc), Some(sc), Some(cap)) = (m.tensorcore_bytes, m.sparsecore_bytes, capacity) {
        let (tc, sc, cap) = (
            read("tensorcore", tc, Label::Read),
            read("sparsecore", sc, Label::Read),
            read("capacity", cap, Label::Read),
        );
        let total = tc.bytes.saturating_add(sc.bytes);
        let mut figures = vec![tc, sc, cap];
        let mut text = format!(
            "Does not fit: TensorCore {} + SparseCore {} = {} of {}{space}",
            figures[0].shown,
            figures[1].shown,
            crate::units::size(total),
            figures[2].shown
        );
        if total > figures[2].bytes {
            let over = read("exceeded_by", total - figures[2].bytes, Label::Estimated);
            text.push_str(&format!(" (exceeded by {})", over.shown));
            figures.push(over);
        }
        return make(Verdict::DoesNotFit, text, figures);
    }
    if let (Some(need), Some(cap)) = (oom::needs(m), capacity) {
        if need > cap {
            let (need, cap) = (
                read("needs", need, Label::Read),
                read("capacity", cap, Label::Read),
            );
            let mut text = format!("Does not fit: needs {} of {}{space}", need.shown, cap.shown);
            let mut figures = vec![need, cap];
            if let Some(e) = m.exceeded_by_bytes {
                let over = read("exceeded_by", e, Label::Read);
                text.push_str(&format!(" (exceeded by {})", over.shown));
                figures.push(over);
            }
            if m.kind == OomKind::TpuEarlyAbort {
                text.push_str("; XLA aborted compilation early");
            }
            return make(Verdict::DoesNotFit, text, figures);
        }
    }
    if m.kind == OomKind::Driver && m.requested_bytes.is_none() {
        let device = m
            .device_ordinal
            .map(|d| format!(" on GPU {d}"))
            .unwrap_or_default();
        let text = format!(
            "Ran out of memory: the GPU driver found no memory{device} outside XLA's pool (a context or a library's workspace)"
        );
        return make(Verdict::RanOut, text, Vec::new());
    }
    if matches!(m.kind, OomKind::TpuCompileHbm | OomKind::TpuEarlyAbort) {
        // XLA:TPU's compile-time check fails only when the program does not fit.
        let mut figures = Vec::new();
        let mut text = "Does not fit: XLA:TPU's compile-time check failed".to_owned();
        if let Some(p) = m.program_bytes.or(m.used_bytes) {
            let needs = read("needs", p, Label::Read);
            text.push_str(&format!(
                " (the program needs {}; the message states no capacity)",
                needs.shown
            ));
            figures.push(needs);
        } else {
            text.push_str("; the message states no total");
        }
        return make(Verdict::DoesNotFit, text, figures);
    }
    if let Some(request) = m.requested_bytes {
        let req = read("failed_request", request, Label::Read);
        if let Some(cap) = capacity.filter(|&c| request > c) {
            let cap = read("capacity", cap, Label::Read);
            let text = format!(
                "Does not fit: one allocation of {} exceeds the {}{space}",
                req.shown, cap.shown
            );
            return make(Verdict::DoesNotFit, text, vec![req, cap]);
        }
        let gpu = m.kind == OomKind::GpuBufferAssignment;
        if let Some(temp) = m.temp_bytes.filter(|&t| gpu && t > 0 && close(request, t)) {
            // The message states no capacity: that the block failed says memory ran
            // out, not that the program is larger than the device.
            let temp = read("temp", temp, Label::Read);
            let mut text = format!(
                "Ran out of memory: the program's {} temporary block could not be allocated",
                temp.shown
            );
            let mut figures = vec![temp];
            if let Some(u) = m.used_bytes {
                let needs = read("needs", u, Label::Read);
                if u < SMALL_PROGRAM {
                    text.push_str(&format!(
                        ", though the program needs only {} in all: something else held the GPU's memory",
                        needs.shown
                    ));
                } else {
                    text.push_str(&format!(" (it needs {} in all)", needs.shown));
                }
                figures.push(needs);
            }
            return make(Verdict::RanOut, text, figures);
        }
        if m.kind == OomKind::Driver {
            let where_ = if m.memory_space.as_deref() == Some("host") {
                "pinned host memory"
            } else {
                "device memory outside XLA's pool"
            };
            let text = format!(
                "Ran out of memory: the GPU driver could not allocate {} of {where_}",
                req.shown
            );
            return make(Verdict::RanOut, text, vec![req]);
        }
        let mut text = format!(
            "Ran out of memory: a request of {} could not be allocated",
            req.shown
        );
        let mut figures = vec![req];
        if let Some(f) = m.free_bytes {
            let free = read("free", f, Label::Read);
            text.push_str(&format!("; {} were free", free.shown));
            figures.push(free);
        } else if let Some((in_use, limit, name)) = m
            .allocator
            .as_ref()
            .and_then(|a| Some((a.in_use_bytes?, a.limit_bytes?, a.name.as_str())))
        {
            let (in_use, limit) = (
                read("in_use", in_use, Label::Read),
                read("capacity", limit, Label::Read),
            );
            let name = if name.is_empty() {
                "the allocator"
            } else {
                name
            };
            text.push_str(&format!(
                "; {} of {} in use in {name}",
                in_use.shown, limit.shown
            ));
            figures.extend([in_use, limit]);
        }
        return make(Verdict::RanOut, text, figures);
    }
    if let Some(p) = m.program_bytes.or(oom::needs(m)) {
        let needs = read("needs", p, Label::Read);
        let text = format!(
            "Ran out of {}: the program needs {}; the message states no capacity",
            oom::space(m),
            needs.shown
        );
        return make(Verdict::RanOut, text, vec![needs]);
    }
    if let Some(a) = &m.allocator {
        if let (Some(in_use), Some(limit)) = (a.in_use_bytes, a.limit_bytes) {
            let (in_use, limit) = (
                read("in_use", in_use, Label::Read),
                read("capacity", limit, Label::Read),
            );
            let name = if a.name.is_empty() {
                "the allocator"
            } else {
                a.name.as_str()
            };
            let text = format!(
                "Ran out of memory with {} of {} in use in {name}; the message states no request size",
                in_use.shown, limit.shown
            );
            return make(Verdict::RanOut, text, vec![in_use, limit]);
        }
    }
    let text = if m.allocations.is_empty() {
        "Ran out of memory, as the message says; it states no size".to_owned()
    } else {
        format!(
            "Ran out of {}, as the message says; it lists {} allocations but states no total",
            oom::space(m),
            m.allocations.len()
        )
    };
    make(Verdict::RanOut, text, Vec::new())
}

/// A kernel's scoped memory over a core's: the kernel does not fit, whatever the batch.
fn scoped(m: &OomMessage) -> Headline {
    let memory = match m.memory_space.as_deref() {
        Some("shared") | None => "shared memory".to_owned(),
        Some(space) => space.to_ascii_uppercase(),
    };
    let need = m.used_bytes.or(m.requested_bytes);
    match (need, oom::capacity(m)) {
        (Some(n), Some(c)) => {
            let (n, c) = (
                read("needs", n, Label::Read),
                read("capacity", c, Label::Read),
            );
            let text = format!(
                "Does not fit: a kernel needs {} of {memory}, a core has {}",
                n.shown, c.shown
            );
            make(Verdict::DoesNotFit, text, vec![n, c])
        }
        (Some(n), None) => {
            let n = read("needs", n, Label::Read);
            let text = format!("Does not fit: a kernel needs {} of {memory}", n.shown);
            make(Verdict::DoesNotFit, text, vec![n])
        }
        (None, _) => make(
            Verdict::DoesNotFit,
            format!("Does not fit: a kernel needs more {memory} than a core has"),
            Vec::new(),
        ),
    }
}

/// The verdict of a warning alone: nothing says memory ran out.
fn warning(m: &OomMessage) -> Headline {
    if let Some((limit, reached)) = m
        .remat
        .as_ref()
        .and_then(|r| Some((r.limit_bytes?, r.reduced_to_bytes?)))
    {
        let (reached, limit) = (
            read("reduced_to", reached, Label::Read),
            read("limit", limit, Label::Read),
        );
        let text = format!(
            "A warning, not a failure: XLA's rematerialization only reduced memory to {}, above its {} limit",
            reached.shown, limit.shown
        );
        return make(Verdict::Warning, text, vec![reached, limit]);
    }
    let mut figures = Vec::new();
    let text = match m.requested_bytes {
        Some(r) => {
            let req = read("request", r, Label::Read);
            let t = format!(
                "A warning, not a failure: the allocator could not allocate {} at once and says the caller goes on",
                req.shown
            );
            figures.push(req);
            t
        }
        None => "A warning, not a failure: nothing in the text says memory ran out".to_owned(),
    };
    make(Verdict::Warning, text, figures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnosis::line::Line;
    use crate::report::model::{AllocatorSummary, Runtime};

    const GIB: u64 = 1 << 30;

    fn headline_of(report: &HostReport) -> Headline {
        headline(report, None)
    }

    fn report(total: u64, peak: u64, capacity: Option<u64>) -> HostReport {
        let mut module = ModuleReport {
            label: "jit_step(1)".into(),
            ..Default::default()
        };
        module.plan.total_bytes = total;
        module.plan.peak_bytes = peak;
        HostReport {
            modules: vec![module],
            selected_module: Some("jit_step(1)".into()),
            capacity_bytes: capacity,
            runtime: capacity.map(|c| Runtime {
                allocators: vec![AllocatorSummary {
                    name: "GPU_0_bfc".into(),
                    capacity_bytes: c,
                    peak_in_use_bytes: c / 2,
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn headline_does_not_fit() {
        let h = headline_of(&report(3_994_000_000, 3 * GIB, Some(2_995_000_000)));
        assert_eq!(h.verdict, Verdict::DoesNotFit);
        assert_eq!(
            h.text,
            "The step does not fit: needs 3.72 GiB, capacity 2.79 GiB"
        );
        assert_eq!(h.figures[0].label, Label::Read);
        assert_eq!(h.figures[1].label, Label::Measured);
    }

    #[test]
    fn headline_leak_needs_the_growth_line() {
        let mut r = report(GIB, GIB, Some(4 * GIB));
        if let Some(rt) = r.runtime.as_mut() {
            rt.growth_per_execution_bytes = Some(109_051_904);
        }
        assert_eq!(
            headline_of(&r).verdict,
            Verdict::Fits,
            "no growth line: no leak"
        );
        let line = Line::new(
            DiagnosisId::GrowthPerExecution,
            Label::Measured,
            String::new(),
            "",
        );
        r.diagnosis.push(line.build());
        let h = headline_of(&r);
        assert_eq!(h.verdict, Verdict::Leak);
        assert_eq!(h.text, "Fits, but grows 104 MiB per execution: a leak");
    }

    #[test]
    fn headline_fits_plan_only_runtime_only_empty() {
        let h = headline_of(&report(GIB, 788 << 20, Some(4 * GIB)));
        assert_eq!(h.text, "Fits: peak 788 MiB of capacity 4.00 GiB");
        let h = headline_of(&report(2 * GIB, GIB, None));
        assert_eq!(h.verdict, Verdict::PlanOnly);
        let mut r = report(0, 0, Some(4 * GIB));
        r.modules.clear();
        r.selected_module = None;
        let h = headline_of(&r);
        assert_eq!(h.verdict, Verdict::RuntimeOnly);
        assert_eq!(
            h.text,
            "No compiled plan in the capture: peak in use 2.00 GiB of capacity 4.00 GiB"
        );
        assert_eq!(headline_of(&HostReport::default()).verdict, Verdict::Empty);
    }

    /// Memory in use at the start plus what the step allocates over the pool: ran out,
    /// though the plan alone fits.
    #[test]
    fn no_room_at_the_last_execution_is_a_ran_out_verdict() {
        let r = report(GIB, GIB, Some(4 * GIB));
        let failure = Failure::NoRoom {
            in_use: 3 * GIB + GIB / 2,
            adds: GIB,
            capacity: 4 * GIB,
        };
        let h = headline(&r, Some(&failure));
        assert_eq!(h.verdict, Verdict::RanOut);
        assert_eq!(
            h.text,
            "Ran out of memory: the step needs 1.00 GiB, but 3.50 GiB were already in use when its last execution started"
        );
    }
}
