//! The pipeline for one host file: capture index → plans and runtime → module
//! selection → diagnosis → [`HostReport`]. Renderers only read what this returns.

use crate::capture::{CaptureIndex, Plane, PlaneRef};
use crate::diagnosis::{self, error_text};
use crate::error::Error;
use crate::plan::{self, METADATA_PLANE};
use crate::report::model::{
    Category, Headline, HeadlineFigure, HostReport, Label, ModuleReport, Note, PlaneSummary,
};
use crate::runtime::{self, ModuleKey, SelectedPlan};
use crate::selection::{self, Failure};
use crate::source::ByteSource;
use crate::units::{gib, mib};

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A module to report on, by label (`jit_step(12)`) or name (`jit_step`).
    pub module: Option<String>,
    /// The text of the out-of-memory error the user got, if pasted.
    pub error_text: Option<String>,
}

/// Progress callback: (phase, bytes done, bytes total).
pub type Progress<'a> = &'a mut dyn FnMut(&str, u64, u64);

/// Analyzes one capture file.
pub fn analyze(
    src: &dyn ByteSource,
    host: &str,
    file: &str,
    options: &Options,
    progress: Progress<'_>,
) -> Result<HostReport, Error> {
    // Natively the host plane is shared between two threads without an index of its
    // lines (see `runtime::scan_host`): nothing is walked ahead.
    let mut prepared = prepare(src, host, file, None, progress)?;
    progress("host plane", 0, src.len());
    let scan = prepared.scan_host(src)?;
    prepared.finish(src, scan, options, progress)
}

/// A capture indexed and its plans read: everything before the runtime scan. It
/// borrows nothing, so a caller that scans the host plane in parts elsewhere (the
/// page's second worker) can keep it between steps.
pub struct Prepared {
    capture: CaptureIndex,
    report: HostReport,
    /// Plan and host planes, metadata only.
    planes: Vec<Plane>,
    /// Opened one at a time by the device scan.
    device_planes: Vec<PlaneRef>,
    /// What became of each plane of the capture, in order.
    slots: Vec<Slot>,
}

/// A plane of the capture, as [`Prepared`] holds it.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// Opened by the device scan, which counts its lines.
    Device,
    /// `planes[i]`.
    Read(usize),
    Unreadable,
}

impl Prepared {
    /// The planes whose metadata has been read (all but the device planes).
    pub fn planes(&self) -> &[Plane] {
        &self.planes
    }

    /// Pass one over the host planes ([`runtime::scan_host`]). A host plane whose
    /// tables were read from its end is confirmed by this walk; one that is not (the
    /// walk met its tables elsewhere, or damage) is opened again by walking its lines
    /// and the scan is done again, so that nothing read with a wrong guess remains.
    pub fn scan_host(&mut self, src: &dyn ByteSource) -> Result<runtime::scan::RuntimeScan, Error> {
        let scan = runtime::scan_host(src, &self.planes)?;
        if self.confirm_tables(src)? {
            return runtime::scan_host(src, &self.planes);
        }
        Ok(scan)
    }

    /// After a walk of the host planes (one scanner's, or the second of two sharing a
    /// plane): confirms the tables read from their ends, and opens again by walking the
    /// planes whose tables the walk did not meet where they were taken to be. True if
    /// any was opened again: a scan done with them must be done again.
    pub fn confirm_tables(&mut self, src: &dyn ByteSource) -> Result<bool, Error> {
        let mut again = false;
        for plane in &mut self.planes {
            if !plane.confirm_tables() {
                *plane = plane.reopen(src)?;
                again = true;
            }
        }
        Ok(again)
    }

    /// The rest of the pipeline, given pass one over the host planes (from
    /// [`Prepared::scan_host`], or its parts merged): device planes, the runtime
    /// summary, module selection and diagnosis.
    pub fn finish(
        self,
        src: &dyn ByteSource,
        scan: runtime::scan::RuntimeScan,
        options: &Options,
        progress: Progress<'_>,
    ) -> Result<HostReport, Error> {
        let share_from = runtime::device_share_from();
        self.finish_sharing(src, scan, options, share_from, progress)
    }

    /// [`Prepared::finish`], with device planes of at least `share_from` bytes shared
    /// by two threads where that cannot change the result (see
    /// [`runtime::scan_devices`]).
    pub fn finish_sharing(
        self,
        src: &dyn ByteSource,
        scan: runtime::scan::RuntimeScan,
        options: &Options,
        share_from: Option<u64>,
        progress: Progress<'_>,
    ) -> Result<HostReport, Error> {
        let Prepared {
            capture,
            report,
            planes,
            device_planes,
            slots,
        } = self;
        let total = src.len();
        progress("device planes", 0, total);
        let scan = runtime::scan_devices(src, &device_planes, scan, share_from)?;
        finish_report(
            src, &capture, report, &planes, &slots, scan, options, progress,
        )
    }
}

/// Indexes the capture and reads its plans. Host planes of at least `split_from`
/// bytes have their lines indexed now, for the page, which hands half of them to a
/// second worker; the others have their tables read from their end (their lines are
/// walked once, by [`Prepared::scan_host`], natively by two threads sharing a large
/// plane without an index).
pub fn prepare(
    src: &dyn ByteSource,
    host: &str,
    file: &str,
    split_from: Option<u64>,
    progress: Progress<'_>,
) -> Result<Prepared, Error> {
    let total = src.len();
    progress("index", 0, total);
    let capture = CaptureIndex::scan(src)?;
    let mut report = HostReport {
        host: host.to_owned(),
        file: file.to_owned(),
        file_bytes: total,
        ..Default::default()
    };
    // The plan and host planes' metadata is read once and shared by every stage below;
    // device planes (often many, each with its own kernel names) are opened one at a
    // time by the runtime scan, so memory does not grow with their number.
    let mut planes: Vec<Plane> = Vec::new();
    let mut device_planes: Vec<PlaneRef> = Vec::new();
    let mut slots: Vec<Slot> = Vec::with_capacity(capture.planes.len());
    for p in &capture.planes {
        if p.name.starts_with(runtime::DEVICE_PLANE_PREFIX) {
            device_planes.push(p.clone());
            slots.push(Slot::Device);
            continue;
        }
        let tables_first =
            p.name == runtime::HOST_PLANE && split_from.is_none_or(|from| p.len < from);
        let opened = if tables_first {
            Plane::open_tables_first(src, p)
        } else {
            Plane::open(src, p)
        };
        match opened {
            Ok(plane) => {
                slots.push(Slot::Read(planes.len()));
                planes.push(plane);
            }
            Err(e) => {
                slots.push(Slot::Unreadable);
                report.notes.push(Note {
                    id: "plane_unreadable".into(),
                    text: format!(
                        "plane {} could not be read ({e}); the report leaves it out",
                        p.name
                    ),
                });
            }
        }
    }

    progress("plan", 0, total);
    let entries = plan::find_modules(&planes);
    for entry in &entries {
        match entry.decode(src) {
            Ok(hlo) => {
                let name = hlo
                    .hlo_module
                    .as_ref()
                    .map(|m| m.name.clone())
                    .unwrap_or_default();
                let name = if name.is_empty() {
                    label_name(&entry.label).to_owned()
                } else {
                    name
                };
                report.modules.push(ModuleReport {
                    label: format!("{name}({})", entry.program_id),
                    name,
                    program_id: entry.program_id.to_string(),
                    executions: 0,
                    plan: plan::analyze(&hlo),
                });
            }
            Err(why) => report.notes.push(Note {
                id: "module_unreadable".into(),
                text: format!(
                    "module {} could not be read: {why}; the other modules are reported",
                    entry.label
                ),
            }),
        }
    }
    if capture.find(METADATA_PLANE).next().is_none() || report.modules.is_empty() {
        report.notes.push(Note {
            id: "no_plan_in_capture".into(),
            text: diagnosis::NO_PLAN_TEXT.into(),
        });
    }

    Ok(Prepared {
        capture,
        report,
        planes,
        device_planes,
        slots,
    })
}

#[allow(clippy::too_many_arguments)]
fn finish_report(
    src: &dyn ByteSource,
    capture: &CaptureIndex,
    mut report: HostReport,
    planes: &[Plane],
    slots: &[Slot],
    scan: runtime::scan::RuntimeScan,
    options: &Options,
    progress: Progress<'_>,
) -> Result<HostReport, Error> {
    let total = src.len();
    let mut device_lines = scan.device_line_counts.iter();
    for (p, slot) in capture.planes.iter().zip(slots) {
        let lines = match *slot {
            Slot::Device => device_lines.next().copied(),
            Slot::Read(i) => planes.get(i).map(|plane| plane.line_count),
            Slot::Unreadable => None,
        }
        .unwrap_or(0);
        report.planes.push(PlaneSummary {
            name: p.name.clone(),
            bytes: p.len,
            lines,
        });
    }
    let keys: Vec<ModuleKey<'_>> = report
        .modules
        .iter()
        .map(|m| ModuleKey {
            name: &m.name,
            program_id: m.program_id.parse().unwrap_or(0),
            label: &m.label,
        })
        .collect();
    let labels: Vec<Option<String>> = runtime::execution_labels(&scan, &keys);
    let dropped = runtime::dropped_launch_labels(&scan, &keys);
    let unfinished = runtime::unfinished_call(&scan, &keys, &labels)
        .map(|(module, start_ps)| selection::UnfinishedCall { module, start_ps });
    drop(keys);
    let mut launches: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for l in labels.iter().flatten() {
        *launches.entry(l.as_str()).or_insert(0) += 1;
    }
    // Older launches whose module cannot be told (several modules share its name, and
    // the program id that tells them apart was not known when it was dropped).
    let mut unattributed = 0u64;
    let mut unattributed_names: Vec<&str> = Vec::new();
    for (l, count) in &dropped {
        match l {
            Some(l) if report.modules.iter().any(|m| m.label == *l) => {
                *launches.entry(l.as_str()).or_insert(0) += count;
            }
            _ => {
                unattributed += count;
                // `name(?)`: the label of a name several modules share.
                let name = l.as_deref().and_then(|l| l.strip_suffix("(?)"));
                // Labels come sorted: a name's repeats are neighbours.
                if name.is_some() && unattributed_names.last().copied() != name {
                    unattributed_names.extend(name);
                }
            }
        }
    }
    for m in &mut report.modules {
        m.executions = launches.get(m.label.as_str()).copied().unwrap_or(0);
    }
    report.modules.sort_by(|a, b| {
        b.plan
            .peak_bytes
            .cmp(&a.plan.peak_bytes)
            .then_with(|| a.label.cmp(&b.label))
    });

    progress("runtime summary", 0, total);
    let pasted = options.error_text.as_deref().map(error_text::read);
    let request = pasted
        .as_ref()
        .and_then(|p| error_text::find_request(p, &report.modules, options.module.as_deref()));
    let launches = selection::Launches {
        scan: &scan,
        labels: &labels,
        capacity: runtime::pool_capacity(&scan),
        in_use_at_start: (0..scan.executions.len())
            .map(|i| runtime::in_use_at_launch(&scan, i))
            .collect(),
    };
    let chosen = selection::select(
        &report,
        &launches,
        options.module.as_deref(),
        request.as_ref(),
        unfinished.as_ref(),
    )?;
    let selected = chosen.module.clone();
    report.selected_module = chosen.module.clone();
    report.selection_reason = chosen.reason.clone();
    let selected_module = selected
        .as_deref()
        .and_then(|s| report.modules.iter().find(|m| m.label == s));
    let plan = SelectedPlan {
        label: selected.as_deref(),
        non_aliased_outputs: selected_module
            .map(|m| m.plan.non_aliased_output_bytes)
            .unwrap_or(0),
        // Every parameter allocation is held for the whole program, so each is among
        // the buffers listed at the peak (at its own size, device memory only).
        parameter_sizes: selected_module
            .map(|m| {
                m.plan
                    .live_at_peak
                    .iter()
                    .filter(|b| b.category == Category::Parameter && b.memory_space == 0)
                    .map(|b| b.bytes)
                    .collect()
            })
            .unwrap_or_default(),
    };
    let has_runtime = !scan.executions.is_empty() || !scan.allocators.is_empty();
    if has_runtime {
        let rt = runtime::summarize(src, planes, &scan, &labels, &plan)?;
        if let Some(text) = runtime::xprof_capacity_note(&rt) {
            report.notes.push(Note {
                id: "xprof_capacity".into(),
                text,
            });
        }
        report.runtime = Some(rt);
    }
    if let (dropped @ 1.., Some(through)) = (scan.records_dropped, scan.records_dropped_through_ps)
    {
        report.notes.push(Note {
            id: "allocation_history_truncated".into(),
            text: format!(
                "the capture has more allocator events than are kept: the peaks and counts include all of them, but the timeline, the memory in use at each execution start and the live arrays come from the latest {} only, after {:.3} s ({} earlier ones are not kept)",
                scan.records.len(),
                through as f64 / 1e12,
                dropped
            ),
        });
    }
    if let (dropped @ 1.., Some(through)) =
        (scan.executions_dropped, scan.executions_dropped_through_ps)
    {
        report.notes.push(Note {
            id: "execution_history_truncated".into(),
            text: format!(
                "the capture has more launches than are kept: all {} are counted, but the per-launch figures come from the latest {} only, after {:.3} s, and launches are numbered from the first one kept{}",
                dropped + scan.executions.len() as u64,
                scan.executions.len(),
                through as f64 / 1e12,
                if unattributed > 0 {
                    format!(
                        "; {unattributed} older launches could not be told apart between modules that share a name{}, so those modules count only their kept launches",
                        if unattributed_names.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", unattributed_names.join(", "))
                        }
                    )
                } else {
                    String::new()
                }
            ),
        });
    }
    // What the capture itself lacks (a cut tail, damaged planes), known now that every
    // plane has been read, goes first.
    report.notes.splice(0..0, capture.notes());
    progress("diagnosis", 0, total);
    report.notes.extend(trace_notes(
        &report,
        &scan,
        &labels,
        unfinished.as_ref(),
        chosen.failure.as_ref(),
        pasted.is_some(),
    ));
    report.error = pasted
        .as_ref()
        .map(|p| error_text::describe(p, request.as_ref(), &report));
    report.capacity_bytes = diagnosis::capacity(&report);
    report.diagnosis = diagnosis::diagnose(&report, capture);
    report.headline = headline(&report, chosen.failure.as_ref());
    progress("done", total, total);
    Ok(report)
}

/// What the trace does not cover, said as such (see `runtime::coverage`).
fn trace_notes(
    report: &HostReport,
    scan: &runtime::scan::RuntimeScan,
    labels: &[Option<String>],
    unfinished: Option<&selection::UnfinishedCall>,
    failure: Option<&Failure>,
    error_pasted: bool,
) -> Vec<Note> {
    // The launch that ran out lacks kernels for a reason of its own.
    let failed = match (failure, report.selected_module.as_deref()) {
        (Some(Failure::AllocatorRetry | Failure::NoRoom { .. }), Some(selected)) => {
            labels.iter().rposition(|l| l.as_deref() == Some(selected))
        }
        _ => None,
    };
    let mut notes: Vec<Note> = Vec::new();
    let allocators = report
        .runtime
        .as_ref()
        .map(|r| r.allocators.as_slice())
        .unwrap_or_default();
    notes.extend(runtime::coverage::device_trace_gaps(
        scan,
        labels,
        &report.planes,
        allocators,
        failed,
    ));
    if let Some(call) = unfinished {
        notes.push(runtime::coverage::unfinished_call_note(
            &call.module,
            call.start_ps,
            error_pasted,
        ));
    }
    notes
}

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
                .and_then(|r| r.allocators.iter().find(|a| !a.name.contains("host")))
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

/// `jit_f` from `jit_f(12)`.
fn label_name(label: &str) -> &str {
    label.rsplit_once('(').map(|(n, _)| n).unwrap_or(label)
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
