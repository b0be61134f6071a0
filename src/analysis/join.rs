//! Evidence joined to a capture's report, or standing in for one: the out-of-memory
//! message, an XLA dump's plans, device memory profiles. A capture's report takes the
//! dump's plans for the modules it lacks (same label, `name(program_id)`; a module it
//! has keeps its own plan, with a note when the dump's differs) before the module is
//! chosen, so that the message's failed request can match a dump's module; the
//! profiles are reported beside. Without a capture, the report is built from the
//! evidence alone and reads like a capture's: a headline, the module (or none), the
//! plan when a dump gave one, the message's figures, the diagnosis.

use crate::diagnosis::{self, error_text, verdict};
use crate::error::Error;
use crate::evidence::device_profile::{self, DeviceProfile};
use crate::evidence::dump::{Dump, PlanSource};
use crate::evidence::message::OomMessage;
use crate::report::model::{HostReport, InputFile, ModuleReport, Note, PlanFrom};
use crate::report::present;
use crate::selection::{self, Failure};
use crate::units::size;

use super::Options;

/// The message, and where it was read.
#[derive(Debug, Clone)]
pub struct Message {
    /// The message, parsed.
    pub message: OomMessage,
    /// The file it came from (`-` for standard input, `pasted text`).
    pub file: String,
}

/// Evidence given beside a capture (or instead of one), read once and joined to every
/// host's report.
#[derive(Debug, Clone, Default)]
pub struct Joined {
    /// The out-of-memory message, when one was found.
    pub message: Option<Message>,
    /// The XLA dump's modules, when one was given.
    pub dump: Option<Dump>,
    /// In the order given (files), or by name (in a folder).
    pub profiles: Vec<DeviceProfile>,
    /// What was given and how it was read, for the report's `inputs`.
    pub inputs: Vec<InputFile>,
    /// What could not be used, and why.
    pub notes: Vec<Note>,
}

impl Joined {
    /// Whether anything beside a capture was given.
    pub fn is_empty(&self) -> bool {
        self.message.is_none()
            && self.dump.is_none()
            && self.profiles.is_empty()
            && self.notes.is_empty()
            && self.inputs.is_empty()
    }
}

/// Adds the dump's plans to a capture's modules: a module the capture lacks comes from
/// the dump; one it has keeps the capture's plan, with a note when the dump's totals
/// differ (the dump is then of another compile). Every module says where its plan came
/// from.
pub fn merge_dump(report: &mut HostReport, dump: &Dump) {
    for m in &mut report.modules {
        m.plan_source = Some(PlanFrom::Capture);
    }
    for theirs in &dump.modules {
        match report.modules.iter().find(|m| m.label == theirs.label) {
            Some(ours) => {
                if totals(ours) != totals(theirs) {
                    report.notes.push(Note {
                        id: "dump_plan_differs".into(),
                        text: format!(
                            "{}: the XLA dump's plan differs from the capture's (needs {} in the dump, {} in the capture): the dump is of another compile; the capture's plan is reported",
                            ours.label,
                            size(theirs.plan.total_bytes),
                            size(ours.plan.total_bytes)
                        ),
                    });
                }
            }
            None => {
                let mut m = theirs.clone();
                m.plan_source = Some(plan_from(dump, &m.label));
                report.modules.push(m);
            }
        }
    }
    report.notes.extend(dump.notes.iter().cloned());
}

/// `memory_analysis()`'s four figures.
fn totals(m: &ModuleReport) -> [u64; 4] {
    let p = &m.plan;
    [
        p.argument_bytes,
        p.output_bytes,
        p.alias_bytes,
        p.temp_bytes,
    ]
}

fn plan_from(dump: &Dump, label: &str) -> PlanFrom {
    match dump.source_of(label).map(|s| s.plan) {
        Some(PlanSource::Text) => PlanFrom::DumpText,
        _ => PlanFrom::DumpProto,
    }
}

/// The message and the plan part its failed request matched, as the report carries it,
/// with the notes a cut message needs.
pub fn describe_message(
    report: &mut HostReport,
    message: Option<&Message>,
    matched: Option<&error_text::RequestMatch>,
) {
    let Some(m) = message else {
        return;
    };
    report.notes.extend(message_notes(&m.message, &m.file));
    report.error = Some(error_text::describe(m.message.clone(), &m.file, matched));
}

/// What a message lacks: it was cut short, or listed more than is kept.
fn message_notes(m: &OomMessage, file: &str) -> Vec<Note> {
    let mut notes = Vec::new();
    if m.truncated {
        notes.push(Note {
            id: "message_truncated".into(),
            text: format!(
                "the error message in {file} was cut short (an allocation without its closing line, a listing without entries, or a summary or allocator dump without its end): the listing was cut short, and figures from the missing part are unknown; paste the whole message"
            ),
        });
    }
    if m.omitted_allocations > 0 {
        notes.push(Note {
            id: "message_allocations_omitted".into(),
            text: format!(
                "the message lists {} more allocations than the {} kept (the largest come first)",
                m.omitted_allocations,
                m.allocations.len()
            ),
        });
    }
    notes
}

/// Profiles, their growth, the inputs and the notes of the joined evidence.
pub fn attach(report: &mut HostReport, joined: &Joined) {
    report.profiles = joined.profiles.clone();
    report.growth = device_profile::growth(&joined.profiles);
    report.inputs = joined.inputs.clone();
    report.notes.extend(joined.notes.iter().cloned());
}

/// Capacity, diagnosis, the message's reading and the verdict: the end of every report.
pub fn conclude(report: &mut HostReport, failure: Option<&Failure>) {
    report.capacity_bytes = diagnosis::capacity(report);
    report.diagnosis = diagnosis::diagnose(report, failure);
    if let Some(e) = report.error.as_mut() {
        let framework = e.message.framework;
        e.scenario = report
            .diagnosis
            .iter()
            .find_map(|d| present::reading(d.id, framework))
            .or_else(|| e.matched_part.map(present::matched_reading))
            .unwrap_or_default()
            .to_owned();
    }
    report.headline = verdict::headline(report, failure);
}

/// The report without a capture: the dump's plans (if any), the message matched to
/// them, the profiles.
pub fn without_capture(joined: &Joined, options: &Options) -> Result<HostReport, Error> {
    let names: Vec<&str> = joined.inputs.iter().map(|i| i.file.as_str()).collect();
    let mut report = HostReport {
        host: String::new(),
        file: names.join(", "),
        file_bytes: joined
            .inputs
            .iter()
            .map(|i| i.bytes)
            .fold(0, u64::saturating_add),
        ..Default::default()
    };
    if let Some(dump) = &joined.dump {
        report.modules = dump.modules.clone();
        for m in &mut report.modules {
            m.plan_source = Some(plan_from(dump, &m.label));
        }
        report.notes.extend(dump.notes.iter().cloned());
    }
    let request = joined.message.as_ref().and_then(|m| {
        error_text::find_request(&m.message, &report.modules, options.module.as_deref())
    });
    let chosen =
        selection::select_from_plans(&report, options.module.as_deref(), request.as_ref())?;
    report.selected_module = chosen.module.clone();
    report.selection_reason = chosen.reason.clone();
    describe_message(&mut report, joined.message.as_ref(), request.as_ref());
    attach(&mut report, joined);
    conclude(&mut report, chosen.failure.as_ref());
    Ok(report)
}
