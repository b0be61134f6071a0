//! The report as people read it: every section, row and sentence the renderers show,
//! with its figures formatted and labelled, built once from the report model. The
//! text and Markdown renderers and the page (through the engine) lay this out; none
//! of them words or formats a figure itself, so they all say the same thing.
//!
//! Strings from the capture (names, shapes, paths) are carried as they are: each
//! renderer makes them safe for its medium.

use serde::Serialize;

use crate::evidence::device_profile::DeviceProfile;
use crate::report::model::{
    ErrorReport, Execution, HostReport, Label, LiveBuffer, ModuleReport, Plan, PlanFrom, Role,
    Runtime, Verdict,
};
use crate::report::present::{self, limits};
use crate::units::{size, thousands};

mod evidence;
mod hosts;
mod plan;
mod runtime;
mod types;
pub mod words;

use evidence::*;
pub use hosts::{hosts, HostsView};
use plan::*;
pub(crate) use plan::{column, role_shares, roles_sentence};
pub(crate) use runtime::in_use_at_starts;
use runtime::*;
pub use types::*;

/// Lays out one host's report; `top` is how many live buffers to list.
pub fn host(h: &HostReport, top: usize) -> View {
    let module = h
        .selected_module
        .as_deref()
        .and_then(|s| h.modules.iter().find(|m| m.label == s));
    View {
        file: h.file.clone(),
        host: if h.host.is_empty() && !h.has_capture() {
            evidence_words(h)
        } else {
            h.host.clone()
        },
        size: format!("{} bytes", thousands(h.file_bytes)),
        headline: headline(h),
        module: ModuleLine {
            label: module.map(|m| m.label.clone()),
            reason: h.selection_reason.clone(),
            executions: module.filter(|_| h.has_capture()).map(|m| m.executions),
        },
        plan: module.map(|m| plan(&m.plan, h.capacity_bytes, m.plan_source)),
        live: module.and_then(|m| live(&m.plan, top)),
        modules: modules(&h.modules, h.selected_module.as_deref()),
        runtime: h
            .runtime
            .as_ref()
            .map(|rt| runtime(rt, h.selected_module.as_deref())),
        error: h.error.as_ref().map(error),
        profiles: profiles(h),
        inputs: h
            .inputs
            .iter()
            .map(|i| {
                format!(
                    "{} {} ({} bytes)",
                    present::input_kind(i.kind),
                    i.file,
                    thousands(i.bytes)
                )
            })
            .collect(),
        notes: NoteView::all(&h.notes),
        diagnosis: h.diagnosis.iter().map(card).collect(),
        nothing_stands_out: h.diagnosis.is_empty().then_some(if h.has_capture() {
            "nothing stands out: the plan fits and memory does not grow across executions"
        } else {
            "nothing stands out in what was given"
        }),
        check: module.map(|_| crate::diagnosis::line::CHECK),
        labels: [Label::Measured, Label::Read, Label::Estimated]
            .into_iter()
            .map(|label| LabelMeaning {
                label,
                meaning: present::label_meaning(label),
            })
            .collect(),
        live_buffers: match module {
            Some(m) if top > 0 => m.plan.live_at_peak.iter().take(top).map(buffer).collect(),
            _ => Vec::new(),
        },
    }
}

fn bytes_note(bytes: u64) -> String {
    format!("{} bytes", thousands(bytes))
}

fn buffer(b: &LiveBuffer) -> BufferDetail {
    let mut rows = vec![
        row("shape", b.shape.clone(), ""),
        row("size (padded)", size(b.bytes), bytes_note(b.bytes)),
        row(
            "unpadded",
            size(b.unpadded_bytes),
            bytes_note(b.unpadded_bytes),
        ),
        row("category", present::category(b.category).into(), ""),
        row("role", present::role_words(b.role).into(), ""),
        row("opcode", b.opcode.clone(), ""),
        row("source", b.source.clone(), ""),
        row("op_name", b.op_name.clone(), ""),
    ];
    if b.memory_space != 0 {
        rows.push(row("memory space", b.memory_space.to_string(), ""));
    }
    BufferDetail {
        name: b.name.clone(),
        shape: b.shape.clone(),
        role: b.role,
        bytes: b.bytes,
        rows,
    }
}

/// `error message + XLA dump`: what a report without a capture was built from.
fn evidence_words(h: &HostReport) -> String {
    let mut kinds: Vec<&str> = Vec::new();
    for i in &h.inputs {
        let word = present::input_kind(i.kind);
        if !kinds.contains(&word) {
            kinds.push(word);
        }
    }
    if kinds.is_empty() {
        "no capture".into()
    } else {
        kinds.join(" + ")
    }
}

fn headline(h: &HostReport) -> HeadlineView {
    let figures: Vec<Figure> = h
        .headline
        .figures
        .iter()
        .map(|f| Figure {
            name: f.name.replace('_', " "),
            shown: f.shown.clone(),
            label: f.label,
        })
        .collect();
    let labels = if figures.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = figures
            .iter()
            .map(|f| format!("{} {}", f.name, f.label.as_str()))
            .collect();
        format!(" ({})", parts.join(", "))
    };
    HeadlineView {
        verdict: h.headline.verdict,
        text: h.headline.text.clone(),
        figures,
        labels,
        note: h.headline.note.clone(),
    }
}

fn row(name: &str, value: String, note: impl Into<String>) -> Row {
    Row {
        name: name.into(),
        value,
        note: note.into(),
    }
}

/// A line as a card.
fn card(d: &crate::report::model::Diagnosis) -> Card {
    Card {
        id: d.id,
        title: present::title(d.id),
        label: d.label,
        text: d.text.clone(),
        cause: (!repeats(&d.cause, &[&d.title, &d.text])).then(|| d.cause.clone()),
        fixes: d
            .fixes
            .iter()
            .map(|f| FixView {
                text: f.text.clone(),
                saving: f.saving_bytes.map(|s| format!("~{}", size(s))),
                cost: f.cost.clone(),
                then: f
                    .fits_after
                    .map(|f| if f { "then fits" } else { "still does not fit" }),
                fits: f.fits_after,
            })
            .collect(),
        check: d.check.clone(),
        items: d.items.iter().map(item).collect(),
    }
}

/// Whether `sentence` says nothing that one of `said` does not already say: empty, or
/// found in it, letters and digits compared without case or punctuation.
fn repeats(sentence: &str, said: &[&str]) -> bool {
    fn words(s: &str) -> String {
        let spaced: String = (s.chars())
            .map(|c| {
                if c.is_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    ' '
                }
            })
            .collect();
        format!(
            " {} ",
            spaced.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    }
    let sentence = words(sentence);
    sentence.trim().is_empty() || said.iter().any(|s| words(s).contains(&sentence))
}

fn item(i: &crate::report::model::DiagnosisItem) -> String {
    let at = if i.source.is_empty() {
        String::new()
    } else {
        format!(" at {}", present::short_source(&i.source))
    };
    let op = if i.op_name.is_empty() {
        String::new()
    } else {
        format!(" ({})", i.op_name)
    };
    format!(
        "{} ×{} = {}, {}{at}{op}",
        i.shape,
        i.count,
        size(i.bytes),
        present::role_words(i.role)
    )
}

#[cfg(test)]
mod tests;
