//! The pipeline for one host file: capture index → plans and runtime → module
//! selection → diagnosis → [`HostReport`]. Renderers only read what this returns.

use crate::capture::{CaptureIndex, Plane};
use crate::diagnosis;
use crate::error::Error;
use crate::plan::{self, METADATA_PLANE};
use crate::report::model::{HostReport, ModuleReport, Note, PlaneSummary};
use crate::runtime::{self, ModuleKey};
use crate::source::ByteSource;

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
    let total = src.len();
    progress("index", 0, total);
    let capture = CaptureIndex::scan(src)?;
    let mut report = HostReport {
        host: host.to_owned(),
        file: file.to_owned(),
        file_bytes: total,
        ..Default::default()
    };
    for p in &capture.planes {
        let lines = Plane::open(src, p)
            .map(|plane| plane.line_count)
            .unwrap_or(0);
        report.planes.push(PlaneSummary {
            name: p.name.clone(),
            bytes: p.len,
            lines,
        });
    }

    progress("plan", 0, total);
    let entries = plan::find_modules(src, &capture)?;
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

    progress("runtime", 0, total);
    let scan = runtime::scan(src, &capture)?;
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
    drop(keys);
    let mut launches: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for l in labels.iter().flatten() {
        *launches.entry(l.as_str()).or_insert(0) += 1;
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

    let (selected, reason) = select_module(&report, &scan, &labels, options)?;
    report.selected_module = selected.clone();
    report.selection_reason = reason;
    let outputs = selected
        .as_deref()
        .and_then(|s| report.modules.iter().find(|m| m.label == s))
        .map(|m| m.plan.non_aliased_output_bytes)
        .unwrap_or(0);
    let has_runtime = !scan.executions.is_empty() || !scan.allocators.is_empty();
    if has_runtime {
        let rt = runtime::summarize(src, &capture, &scan, &labels, selected.as_deref(), outputs)?;
        if let Some(text) = runtime::xprof_capacity_note(&rt) {
            report.notes.push(Note {
                id: "xprof_capacity".into(),
                text,
            });
        }
        report.runtime = Some(rt);
    }
    if scan.records_dropped > 0 {
        report.notes.push(Note {
            id: "allocation_history_truncated".into(),
            text: format!(
                "{} allocator events past the first {} were counted in the peaks but not kept for the timeline and live arrays",
                scan.records_dropped,
                runtime::scan::MAX_ALLOCATION_RECORDS
            ),
        });
    }
    // What the capture itself lacks (a cut tail, damaged planes), known now that every
    // plane has been read, goes first.
    report.notes.splice(0..0, capture.notes());
    report.error = options
        .error_text
        .as_deref()
        .map(|t| diagnosis::error_text::parse(t, &report));
    report.diagnosis = diagnosis::diagnose(&report, &capture);
    progress("done", total, total);
    Ok(report)
}

/// `jit_f` from `jit_f(12)`.
fn label_name(label: &str) -> &str {
    label.rsplit_once('(').map(|(n, _)| n).unwrap_or(label)
}

/// The module the report is about (mission-spec §4).
fn select_module(
    report: &HostReport,
    scan: &runtime::scan::RuntimeScan,
    labels: &[Option<String>],
    options: &Options,
) -> Result<(Option<String>, String), Error> {
    if let Some(wanted) = options.module.as_deref() {
        let found = report
            .modules
            .iter()
            .find(|m| m.label == wanted)
            .or_else(|| report.modules.iter().find(|m| m.name == wanted));
        return match found {
            Some(m) => Ok((Some(m.label.clone()), "chosen by the user".into())),
            None => Err(Error::UnknownModule {
                wanted: wanted.to_owned(),
                available: report
                    .modules
                    .iter()
                    .map(|m| m.label.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        };
    }
    if scan.kernels > 0 {
        // The last launch of each module: one that launched no kernel is where it ran out.
        let mut last: Vec<(&str, bool, i64)> = Vec::new();
        let mut slot_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (e, l) in scan.executions.iter().zip(labels) {
            let Some(l) = l.as_deref() else { continue };
            let at = *slot_of.entry(l).or_insert_with(|| {
                last.push((l, false, 0));
                last.len() - 1
            });
            if let Some(slot) = last.get_mut(at) {
                *slot = (l, e.launched_kernels, e.start_ps);
            }
        }
        if let Some((label, _, _)) = last
            .iter()
            .filter(|(_, launched, _)| !launched)
            .max_by_key(|(_, _, t)| *t)
        {
            if report.modules.iter().any(|m| m.label == *label) {
                return Ok((
                    Some((*label).to_owned()),
                    "its last execution launched no kernel: it is where memory ran out".into(),
                ));
            }
        }
    }
    if let Some(m) = report
        .modules
        .iter()
        .filter(|m| m.executions > 0)
        .max_by_key(|m| m.plan.peak_bytes)
    {
        return Ok((
            Some(m.label.clone()),
            "the largest module that executed in the capture".into(),
        ));
    }
    Ok(match report.modules.first() {
        Some(m) => (
            Some(m.label.clone()),
            "the largest module (no executions recorded)".into(),
        ),
        None => (None, "the capture holds no module plan".into()),
    })
}
