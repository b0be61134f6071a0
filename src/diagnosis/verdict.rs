//! The verdict: one sentence every renderer leads with, from what the report holds —
//! the selected module's plan against the pool, the growth line, allocator waits, and
//! what says the module ran out (`Failure`, from selection). It never contradicts the
//! reason the module was selected for: a module said to be where memory ran out gets
//! `does_not_fit` or `ran_out`.

use crate::diagnosis::{message_verdict, oom};
use crate::report::model::{
    DiagnosisId, Headline, HeadlineFigure, HostReport, Label, ModuleReport, Verdict,
};
use crate::selection::Failure;
use crate::units::size;

fn figure(name: &str, bytes: u64, label: Label) -> HeadlineFigure {
    HeadlineFigure {
        name: name.into(),
        bytes,
        shown: size(bytes),
        label,
    }
}

pub(super) fn make(verdict: Verdict, text: String, figures: Vec<HeadlineFigure>) -> Headline {
    Headline {
        verdict,
        text,
        figures,
        note: None,
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
        (Some(m), Some(capacity)) => fits(report, m, capacity),
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

/// The plan fits. When the pool's measured peak differs from the plan's peak, both
/// are quoted, and the note says which is which and why they differ.
fn fits(report: &HostReport, m: &ModuleReport, capacity: HeadlineFigure) -> Headline {
    let peak = figure("peak", m.plan.peak_bytes, Label::Read);
    let Some(in_use) = pool_peak(report).filter(|&p| peaks_differ(m.plan.peak_bytes, p)) else {
        let text = format!("Fits: peak {} of capacity {}", peak.shown, capacity.shown);
        return make(Verdict::Fits, text, vec![peak, capacity]);
    };
    let measured = figure("peak_in_use", in_use, Label::Measured);
    let text = format!(
        "Fits: peak {} of capacity {}; {} in use at the pool's peak",
        peak.shown, capacity.shown, measured.shown
    );
    let apart = size(in_use.abs_diff(m.plan.peak_bytes));
    let note = if in_use > m.plan.peak_bytes {
        format!(
            "The peak is {}'s own, from its plan; the pool held {apart} more at its peak: \
             arrays outside this module (outputs of earlier executions the program still \
             holds, inputs put on the device, other modules' buffers) were live then",
            m.label
        )
    } else {
        format!(
            "The pool's peak in use is {apart} below {}'s plan peak: the capture did not \
             record the moment the plan's peak was live in this pool (it started or ended \
             while the module ran, or the module ran on another device)",
            m.label
        )
    };
    let mut headline = make(Verdict::Fits, text, vec![peak, measured, capacity]);
    headline.note = Some(note);
    headline
}

/// The highest peak in use of the capture's device pools (**measured**).
fn pool_peak(report: &HostReport) -> Option<u64> {
    Some(report.runtime.as_ref()?.device_pool()?.peak_in_use_bytes)
}

/// Whether a measured peak is far enough from the plan's to need saying: more than a
/// tenth apart, and by more than 1 MiB (the allocator's rounding and small host-side
/// buffers stay below both).
fn peaks_differ(plan: u64, measured: u64) -> bool {
    let apart = plan.abs_diff(measured);
    apart > 1 << 20 && apart.saturating_mul(10) > plan
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
        .and_then(|r| r.device_pool())
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
        None => message_verdict::headline(&e.message),
    }
}

/// The verdict without a plan: from the error message, else from device memory
/// profiles, else nothing to compare.
fn without_plan(report: &HostReport) -> Headline {
    if let Some(e) = &report.error {
        return message_verdict::headline(&e.message);
    }
    if let Some(leak) = profile_leak(report) {
        return leak;
    }
    if let Some(last) = report.profiles.last() {
        let held = message_verdict::read("held", last.total_bytes, Label::Measured);
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
    let grew = message_verdict::read("growth", g.bytes as u64, Label::Measured);
    let text = format!(
        "Grows {} from {} to {}: a leak at {}",
        grew.shown, first.file, last.file, g.frame
    );
    Some(make(Verdict::Leak, text, vec![grew]))
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
        assert_eq!(h.text, "Fits, but grows 104.0 MiB per execution: a leak");
    }

    #[test]
    fn headline_fits_plan_only_runtime_only_empty() {
        // The pool's peak (half the capacity here) is not the plan's: both are quoted.
        let h = headline_of(&report(GIB, 788 << 20, Some(4 * GIB)));
        assert_eq!(
            h.text,
            "Fits: peak 788.0 MiB of capacity 4.00 GiB; 2.00 GiB in use at the pool's peak"
        );
        assert_eq!(h.figures[1].label, Label::Measured);
        assert!(h.note.unwrap().contains("1.23 GiB more at its peak"));
        // Within a tenth of each other, the plan's peak alone.
        let h = headline_of(&report(GIB, 2 * GIB - (100 << 20), Some(4 * GIB)));
        assert_eq!(h.text, "Fits: peak 1.90 GiB of capacity 4.00 GiB");
        assert!(h.note.is_none());
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
