//! The verdict: one sentence every renderer leads with, from what the report holds.

use crate::report::model::{
    AllocatorKind, Headline, HeadlineFigure, HostReport, Label, ModuleReport,
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

/// The verdict in one sentence, from what the report already holds: the selected
/// module's plan against the device pool, the growth line, allocator waits, and what
/// says the module ran out (`failure`, from selection).
pub fn headline(report: &HostReport, failure: Option<&Failure>) -> Headline {
    let module = report
        .selected_module
        .as_deref()
        .and_then(|s| report.modules.iter().find(|m| m.label == s));
    let capacity = report.capacity_bytes;
    let runtime = report.runtime.as_ref();
    let growth = report
        .diagnosis
        .iter()
        .any(|d| d.id == "growth_per_execution")
        .then(|| runtime.and_then(|r| r.growth_per_execution_bytes))
        .flatten()
        .filter(|&g| g > 0)
        .map(|g| g as u64);
    let ran_out = runtime
        .map(|r| r.retry.count > 0 && !r.retry.any_execution_started_after)
        .unwrap_or(false);
    let make = |verdict: &str, text: String, figures: Vec<HeadlineFigure>| Headline {
        verdict: verdict.into(),
        text,
        figures,
    };
    // The pool the pasted error failed in (read from it), when the capture has none.
    let from_error = report.error.as_ref().and_then(|e| e.capacity_bytes);
    let cap_label = if capacity.is_some() {
        Label::Measured
    } else {
        Label::Read
    };
    let capacity = capacity.or(from_error);
    match (module, capacity) {
        (Some(m), Some(cap)) if m.plan.total_bytes > cap => {
            let needs = figure("needs", m.plan.total_bytes, Label::Read);
            let capacity = figure("capacity", cap, cap_label);
            make(
                "does_not_fit",
                format!(
                    "The step does not fit: needs {}, capacity {}",
                    needs.shown, capacity.shown
                ),
                vec![needs, capacity],
            )
        }
        (Some(m), cap)
            if matches!(
                failure,
                Some(Failure::PastedRequest(_) | Failure::NoRoom { .. })
            ) =>
        {
            ran_out_headline(m, cap.map(|c| figure("capacity", c, cap_label)), failure)
        }
        (_, cap) if growth.is_some() => {
            let g = figure("growth_per_execution", growth.unwrap_or(0), Label::Measured);
            let text = if cap.is_some() && module.is_some() {
                format!("Fits, but grows {} per execution: a leak", g.shown)
            } else {
                format!("Grows {} per execution: a leak", g.shown)
            };
            make("leak", text, vec![g])
        }
        (Some(m), Some(cap)) if ran_out => {
            let needs = figure("needs", m.plan.total_bytes, Label::Read);
            let capacity = figure("capacity", cap, cap_label);
            make(
                "ran_out",
                format!(
                    "The step fits (needs {} of capacity {}), but the allocator ran out of memory during the capture",
                    needs.shown, capacity.shown
                ),
                vec![needs, capacity],
            )
        }
        _ if pasted_oom(report) => pasted_headline(report),
        (Some(m), Some(cap)) => {
            let peak = figure("peak", m.plan.peak_bytes, Label::Read);
            let capacity = figure("capacity", cap, cap_label);
            make(
                "fits",
                format!("Fits: peak {} of capacity {}", peak.shown, capacity.shown),
                vec![peak, capacity],
            )
        }
        (Some(m), None) => {
            let needs = figure("needs", m.plan.total_bytes, Label::Read);
            make(
                "plan_only",
                format!(
                    "Needs {}; the capture has no allocator events, so the capacity is unknown",
                    needs.shown
                ),
                vec![needs],
            )
        }
        (None, Some(cap)) => {
            let peak = runtime
                .and_then(|r| {
                    r.allocators
                        .iter()
                        .find(|a| a.kind == AllocatorKind::Device)
                })
                .map(|a| a.peak_in_use_bytes)
                .unwrap_or(0);
            let peak = figure("peak_in_use", peak, Label::Measured);
            let capacity = figure("capacity", cap, cap_label);
            make(
                "runtime_only",
                format!(
                    "No compiled plan in the capture: peak in use {} of capacity {}",
                    peak.shown, capacity.shown
                ),
                vec![peak, capacity],
            )
        }
        (None, None) => make(
            "empty",
            "Nothing to compare: the capture holds neither a compiled plan nor allocator events"
                .into(),
            Vec::new(),
        ),
    }
}

/// The verdict when something says the selected module ran out although its plan
/// fits the pool (or the pool is unknown): the pasted error's failed request, or the
/// memory already in use when its last launch started.
fn ran_out_headline(
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
    Headline {
        verdict: "ran_out".into(),
        text,
        figures,
    }
}

/// Whether the pasted error is an out-of-memory message.
fn pasted_oom(report: &HostReport) -> bool {
    report
        .error
        .as_ref()
        .is_some_and(|e| e.kind != "unrecognized")
}

/// The verdict from a pasted error that matched no module of the capture.
fn pasted_headline(report: &HostReport) -> Headline {
    let request = report.error.as_ref().and_then(|e| e.requested_bytes);
    match request {
        Some(bytes) => {
            let request = figure("failed_request", bytes, Label::Read);
            Headline {
                verdict: "ran_out".into(),
                text: format!(
                    "Ran out of memory: the pasted error's request of {} matches no buffer of the plans in the capture",
                    request.shown
                ),
                figures: vec![request],
            }
        }
        None => Headline {
            verdict: "ran_out".into(),
            text: "Ran out of memory, as the pasted error says; it names no size to match to the plans in the capture".into(),
            figures: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{AllocatorSummary, Diagnosis, Runtime};

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
        assert_eq!(h.verdict, "does_not_fit");
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
            "fits",
            "no diagnosis line: no leak"
        );
        r.diagnosis.push(Diagnosis {
            id: "growth_per_execution".into(),
            label: Label::Measured,
            text: String::new(),
            cause: String::new(),
            fix: None,
            saving_bytes: None,
            cost: None,
            fits_after: None,
            check: None,
        });
        let h = headline_of(&r);
        assert_eq!(h.verdict, "leak");
        assert_eq!(h.text, "Fits, but grows 104 MiB per execution: a leak");
    }

    #[test]
    fn headline_fits_plan_only_runtime_only_empty() {
        let h = headline_of(&report(GIB, 788 << 20, Some(4 * GIB)));
        assert_eq!(h.text, "Fits: peak 788 MiB of capacity 4.00 GiB");
        let h = headline_of(&report(2 * GIB, GIB, None));
        assert_eq!(h.verdict, "plan_only");
        let mut r = report(0, 0, Some(4 * GIB));
        r.modules.clear();
        r.selected_module = None;
        let h = headline_of(&r);
        assert_eq!(h.verdict, "runtime_only");
        assert_eq!(
            h.text,
            "No compiled plan in the capture: peak in use 2.00 GiB of capacity 4.00 GiB"
        );
        assert_eq!(headline_of(&HostReport::default()).verdict, "empty");
    }
}
