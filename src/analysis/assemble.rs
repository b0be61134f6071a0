//! From the runtime scan to the finished host report: launches counted per module,
//! the module chosen, the runtime section, what the trace lacks, the pasted error
//! matched, the diagnosis lines and the verdict.

use super::join::{self, Joined, Message};
use super::{Options, Progress, Slot};
use crate::capture::{CaptureIndex, Plane};
use crate::diagnosis::error_text;
use crate::error::Error;
use crate::evidence::message;
use crate::report::model::{Category, HostReport, Note, PlaneSummary};
use crate::runtime::{self, LaunchModule, ModuleKey, SelectedPlan};
use crate::selection::{self, Failure};
use crate::source::ByteSource;

#[allow(clippy::too_many_arguments)]
pub(super) fn report(
    src: &dyn ByteSource,
    capture: &CaptureIndex,
    mut report: HostReport,
    planes: &[Plane],
    slots: &[Slot],
    scan: runtime::scan::RuntimeScan,
    options: &Options,
    joined: &Joined,
    progress: Progress<'_>,
) -> Result<HostReport, Error> {
    let total = src.len();
    // A dump's plans stand in for the modules the capture lacks, before launches are
    // counted and a module is chosen.
    if let Some(dump) = &joined.dump {
        join::merge_dump(&mut report, dump);
    }
    summarize_planes(&mut report, capture, planes, slots, &scan);
    let keys: Vec<ModuleKey<'_>> = report
        .modules
        .iter()
        .map(|m| ModuleKey {
            name: &m.name,
            program_id: m.program_id,
            label: &m.label,
        })
        .collect();
    let labels = runtime::execution_labels(&scan, &keys);
    let dropped = runtime::dropped_launch_labels(&scan, &keys);
    let unfinished = runtime::unfinished_call(&scan, &keys, &labels)
        .map(|(module, start_ps)| selection::UnfinishedCall { module, start_ps });
    drop(keys);
    let unattributed = count_launches(&mut report, &labels, &dropped);

    progress("runtime summary", 0, total);
    let (pasted, no_message) = pasted_message(joined, options);
    let request = pasted.as_ref().and_then(|p| {
        error_text::find_request(&p.message, &report.modules, options.module.as_deref())
    });
    let launches = selection::Launches {
        scan: &scan,
        labels: &labels,
        capacity: runtime::pool_capacity(&scan),
        in_use_at_start: runtime::in_use_at_launches(&scan),
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
    let plan = selected_plan(&report, selected.as_deref());
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
    report.notes.extend(history_notes(&scan, &unattributed));
    // What the capture itself lacks (a cut tail, damaged planes), known now that every
    // plane has been read, goes first.
    report.notes.splice(0..0, capture.notes());
    report.host_plane_cut = capture.cut.as_ref().is_some_and(|cut| {
        !capture
            .planes
            .iter()
            .enumerate()
            .any(|(i, p)| p.name == runtime::HOST_PLANE && cut.plane != Some(i))
    });
    progress("diagnosis", 0, total);
    report.notes.extend(trace_notes(
        &report,
        &scan,
        &labels,
        unfinished.as_ref(),
        chosen.failure.as_ref(),
        pasted.is_some(),
    ));
    join::describe_message(&mut report, pasted.as_ref(), request.as_ref());
    report.notes.extend(no_message);
    join::attach(&mut report, joined);
    join::conclude(&mut report, chosen.failure.as_ref());
    // The histories and launches kept (tens of megabytes) are freed while the report
    // is rendered, where a second thread may run.
    if matches!(options.scan, runtime::Scan::TwoThreads { .. }) {
        let bytes = scan.heap_bytes();
        crate::free::free_later(scan, bytes);
    }
    progress("done", total, total);
    Ok(report)
}

/// One summary per plane of the capture, in file order: its name, bytes and lines
/// (counted by the device scan for device planes, by reading for the others).
fn summarize_planes(
    report: &mut HostReport,
    capture: &CaptureIndex,
    planes: &[Plane],
    slots: &[Slot],
    scan: &runtime::scan::RuntimeScan,
) {
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
}

/// Older launches whose module cannot be told: several modules share its name, and
/// the program id that tells them apart was not known when the launch was dropped.
#[derive(Default)]
struct Unattributed<'a> {
    count: u64,
    /// The names they share, each once.
    names: Vec<&'a str>,
}

/// Counts each module's launches, kept (`labels`) and dropped, and orders the modules
/// by planned peak; returns the dropped launches no module can claim.
fn count_launches<'a>(
    report: &mut HostReport,
    labels: &runtime::LaunchLabels,
    dropped: &'a [(Option<LaunchModule>, u64)],
) -> Unattributed<'a> {
    // Ordered by name rather than hashed: a few modules, looked up once a label.
    let mut launches: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for (l, count) in labels.counts() {
        *launches.entry(l).or_insert(0) += count;
    }
    let mut unattributed = Unattributed::default();
    for (module, count) in dropped {
        match module {
            Some(LaunchModule::Known(l)) if report.modules.iter().any(|m| m.label == *l) => {
                *launches.entry(l.as_str()).or_insert(0) += count;
            }
            _ => {
                unattributed.count += count;
                let name = match module {
                    Some(LaunchModule::Ambiguous(name)) => Some(name.as_str()),
                    _ => None,
                };
                // Launches come sorted by label: a name's repeats are neighbours.
                if name.is_some() && unattributed.names.last().copied() != name {
                    unattributed.names.extend(name);
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
    unattributed
}

/// The error message to match: one found beside the capture, else the pasted text;
/// a pasted text that holds none is said in a note instead.
fn pasted_message(joined: &Joined, options: &Options) -> (Option<Message>, Option<Note>) {
    match (&joined.message, options.error_text.as_deref()) {
        (Some(m), _) => (Some(m.clone()), None),
        (None, Some(text)) => match message::parse(text) {
            Ok(message) => (
                Some(Message {
                    message,
                    file: "pasted text".into(),
                }),
                None,
            ),
            Err(e) => (
                None,
                Some(Note {
                    id: "no_oom_message".into(),
                    text: format!("the pasted text: {e}"),
                }),
            ),
        },
        (None, None) => (None, None),
    }
}

/// What the runtime summary needs of the selected module's plan.
fn selected_plan<'a>(report: &'a HostReport, selected: Option<&'a str>) -> SelectedPlan<'a> {
    let selected_module = selected.and_then(|s| report.modules.iter().find(|m| m.label == s));
    SelectedPlan {
        label: selected,
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
    }
}

/// Notes on the histories the scan capped: allocator events and launches counted
/// but not kept.
fn history_notes(scan: &runtime::scan::RuntimeScan, unattributed: &Unattributed<'_>) -> Vec<Note> {
    let mut notes = Vec::new();
    if let (dropped @ 1.., Some(through)) = (scan.records_dropped, scan.records_dropped_through_ps)
    {
        notes.push(Note {
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
        notes.push(Note {
            id: "execution_history_truncated".into(),
            text: format!(
                "the capture has more launches than are kept: all {} are counted, but the per-launch figures come from the latest {} only, after {:.3} s, and launches are numbered from the first one kept{}",
                dropped + scan.executions.len() as u64,
                scan.executions.len(),
                through as f64 / 1e12,
                if unattributed.count > 0 {
                    format!(
                        "; {} older launches could not be told apart between modules that share a name{}, so those modules count only their kept launches",
                        unattributed.count,
                        if unattributed.names.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", unattributed.names.join(", "))
                        }
                    )
                } else {
                    String::new()
                }
            ),
        });
    }
    notes
}

/// What the trace does not cover, said as such (see `runtime::coverage`).
fn trace_notes(
    report: &HostReport,
    scan: &runtime::scan::RuntimeScan,
    labels: &runtime::LaunchLabels,
    unfinished: Option<&selection::UnfinishedCall>,
    failure: Option<&Failure>,
    error_pasted: bool,
) -> Vec<Note> {
    // The launch that ran out lacks kernels for a reason of its own.
    let failed = match (failure, report.selected_module.as_deref()) {
        (Some(Failure::AllocatorRetry | Failure::NoRoom { .. }), Some(selected)) => {
            labels.launches_of(Some(selected)).last()
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
