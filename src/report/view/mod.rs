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
    DiagnosisId, ErrorReport, Execution, HostReport, Label, LiveBuffer, ModuleReport, Plan,
    PlanFrom, Role, Runtime, Verdict,
};
use crate::report::present::{self, limits};
use crate::units::{size, thousands};

mod evidence;
mod hosts;
mod plan;
mod runtime;

use evidence::*;
pub use hosts::{hosts, HostsView};
use plan::*;
pub(crate) use plan::{column, role_shares, roles_sentence};
pub(crate) use runtime::in_use_at_starts;
use runtime::*;

/// The words around the view's figures that every renderer writes the same way:
/// section titles and the names of lines. The text report writes them as they are;
/// the HTML report uses them as headings and row names.
pub mod words {
    /// `oomlens — <file> (<host>, <size>)`, the report's first line.
    pub const TOOL: &str = "oomlens";
    /// `verdict: …`, before the headline.
    pub const VERDICT: &str = "verdict";
    /// `module: …`, the module the report is about.
    pub const MODULE: &str = "module";
    /// `module: none — <reason>`.
    pub const NO_MODULE: &str = "none";
    /// `executions in the capture: 3 (measured)`.
    pub const EXECUTIONS: &str = "executions in the capture";
    /// The plan section's title.
    pub const PLAN: &str = "Plan (read)";
    /// Before the plan's role split: `at the heap peak: forward-kept 89.4% · …`.
    pub const AT_HEAP_PEAK: &str = "at the heap peak";
    /// Before the plan's figures in host memory (memory space 5).
    pub const HOST_MEMORY: &str = "host memory (S(5), not device memory)";
    /// Before each scan stack line of the plan.
    pub const SCAN_STACK: &str = "scan stack";
    /// Before each host callback of the plan.
    pub const HOST_CALLBACK: &str = "host callback";
    /// Before the plan's note (why the heap replay differs).
    pub const NOTE: &str = "note";
    /// The runtime section's title.
    pub const RUNTIME: &str = "Runtime (measured)";
    /// Before the bytes in use at each start of the selected module.
    pub const IN_USE_AT_STARTS: &str = "in use at each execution start";
    /// Before the growth per execution.
    pub const GROWTH: &str = "growth per execution";
    /// Before the `AllocatorRetry` waits.
    pub const RETRY: &str = "AllocatorRetry";
    /// Before the groups of arrays live at the last execution.
    /// Before the host events between the last two executions.
    pub const HOST_EVENTS: &str = "host events between the last two executions";
    /// The notes section's title.
    pub const NOTES: &str = "Notes";
    /// The diagnosis section's title.
    pub const DIAGNOSIS: &str = "Diagnosis";
    /// Before why a diagnosis line happens.
    pub const CAUSE: &str = "cause";
    /// Before a diagnosis line's only fix.
    pub const FIX: &str = "fix";
    /// Before a diagnosis line's fixes, when it has several (ranked: those with a
    /// saving first, largest first).
    pub const FIXES: &str = "fixes";
    /// `saves ~50.0 MiB (estimated)`.
    pub const SAVES: &str = "saves";
    /// Before a diagnosis line's cost.
    pub const COST: &str = "cost";
    /// Before a diagnosis line's check.
    pub const CHECK: &str = "Check on your side";
}

/// One host's report, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    /// `attention_train.xplane.pb (attention_train, 329,821 bytes)`.
    pub file: String,
    /// The host's name.
    pub host: String,
    /// `329,821 bytes`.
    pub size: String,
    /// The verdict, its sentence and its figures.
    pub headline: HeadlineView,
    /// Which module the report is about, and why.
    pub module: ModuleLine,
    /// The selected module's plan.
    pub plan: Option<PlanView>,
    /// The buffers live at the plan's peak.
    pub live: Option<Table>,
    /// Every module with a plan.
    pub modules: Option<Table>,
    /// What the runtime events say.
    pub runtime: Option<RuntimeView>,
    /// The out-of-memory message, parsed.
    pub error: Option<ErrorView>,
    /// Device memory profiles, and what grew between them.
    pub profiles: Option<ProfilesView>,
    /// `error message error.txt (1,234 bytes)`, one per input, when the report joins
    /// more than a capture.
    pub inputs: Vec<String>,
    /// What the inputs lacked or what could not be read.
    pub notes: Vec<NoteView>,
    /// The diagnosis lines, as cards.
    pub diagnosis: Vec<Card>,
    /// Said when there is no diagnosis line.
    pub nothing_stands_out: Option<&'static str>,
    /// How to check the plan's figures, when there is a module.
    pub check: Option<&'static str>,
    /// What each label means (the page's label tooltips).
    pub labels: Vec<LabelMeaning>,
    /// One per row of `live`, in its order: the buffer in full, for the page's detail
    /// panel and its chart of the largest buffers.
    pub live_buffers: Vec<BufferDetail>,
}

/// What a figure's label means.
#[derive(Debug, Clone, Serialize)]
pub struct LabelMeaning {
    /// The label.
    pub label: Label,
    /// `measured: from runtime events (allocator, executions)`.
    pub meaning: &'static str,
}

/// A buffer live at the peak, every figure of it.
#[derive(Debug, Clone, Serialize)]
pub struct BufferDetail {
    /// The defining instruction.
    pub name: String,
    /// Its shape.
    pub shape: String,
    /// What it is for.
    pub role: Role,
    /// For the chart's geometry; `rows` has it as shown.
    pub bytes: u64,
    /// `shape`, `size (padded)`, `unpadded`, `category`, `role`, `opcode`, `source`,
    /// `op_name`, and `memory space` when it is not the device's.
    pub rows: Vec<Row>,
}

/// The headline, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct HeadlineView {
    /// What the report concludes.
    pub verdict: Verdict,
    /// The sentence.
    pub text: String,
    /// The figures it quotes.
    pub figures: Vec<Figure>,
    /// ` (needs read, capacity measured)`: the label of each figure, for one-line media.
    pub labels: String,
    /// Which of two figures that could be read as one is which, and why they differ.
    pub note: Option<String>,
}

/// A figure with its name, as shown, and where it comes from.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// `needs`, `failed request`, …
    pub name: String,
    /// As shown (`3.72 GiB`).
    pub shown: String,
    /// Where it comes from.
    pub label: Label,
}

/// The module line: which module, why, and how many executions.
#[derive(Debug, Clone, Serialize)]
pub struct ModuleLine {
    /// The selected module's label, if any.
    pub label: Option<String>,
    /// Why that module.
    pub reason: String,
    /// `executions in the capture: 3`, labelled measured.
    pub executions: Option<u64>,
}

/// A row of figures: name, value, and what the value means.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// What the figure is (`parameters`).
    pub name: String,
    /// The figure as shown (`4.0 MiB`).
    pub value: String,
    /// What it means or is made of (`4 arrays, 2 donated = 3.0 MiB`), or empty.
    pub note: String,
}

/// The selected module's plan, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct PlanView {
    /// The plan's figures, one row each.
    pub rows: Vec<Row>,
    /// The heap at its peak by role, in the order the chart draws them.
    pub roles: Vec<RoleShare>,
    /// `forward-kept 89.4% · backward 3.3% · workspace 0.0% · other 7.2%`.
    pub roles_sentence: String,
    /// `padding 0 MiB · rematerialized instructions 0`.
    pub padding: String,
    /// What the plan keeps in host memory, when it keeps any.
    pub host_memory: Option<String>,
    /// `f32[6,8,128,512] ×2 via while.50 = 24.0 MiB`, one per scan stack.
    pub scan_stacks: Vec<String>,
    /// Host callbacks compiled into the module.
    pub host_callbacks: Vec<String>,
    /// Why the heap replay could not be done or differs from XProf.
    pub note: Option<String>,
    /// Memory along program order, when the plan has a heap timeline.
    pub chart: Option<MemoryChart>,
    /// Where the plan was read, when not from the capture: `the XLA dump's HloProto
    /// (exact)`.
    pub source: Option<&'static str>,
}

/// The plan's memory along program order, ready to draw: the series, its scale, the
/// peak and the pool's capacity, with every figure already worded. A renderer only
/// maps bytes and positions to its own geometry.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryChart {
    /// `Memory along program order (read)`.
    pub title: &'static str,
    /// Bytes in use after each point (memory held for the whole program included), in
    /// program order, as the plan's timeline keeps them (down-sampled, the peak kept).
    pub points: Vec<u64>,
    /// Index into `points` of the peak.
    pub peak_index: usize,
    /// `peak 62.9 MiB`.
    pub peak: String,
    /// The instruction after which the peak is reached.
    pub peak_instruction: String,
    /// The top of the bytes axis: a little above the peak, or above the capacity when
    /// that is on the scale.
    pub top_bytes: u64,
    /// Marks on the bytes axis, from 0, in one unit.
    pub ticks: Vec<Tick>,
    /// The pool's capacity as a line on the scale (`capacity 2.79 GiB (measured)`),
    /// when it is known and no more than 2.5× the peak.
    pub capacity: Option<Tick>,
    /// `capacity 192.00 GiB (measured) is above the scale`, when it is known but off it.
    pub capacity_note: Option<String>,
    /// What the horizontal axis is: `program order (heap-simulator events) →`.
    pub axis: &'static str,
    /// The chart in one sentence, for readers who cannot see it.
    pub summary: String,
}

/// A mark on a bytes axis: where, and what it says.
#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    /// Where, in bytes.
    pub bytes: u64,
    /// What it says.
    pub shown: String,
}

/// One role's share of the heap at its peak.
#[derive(Debug, Clone, Serialize)]
pub struct RoleShare {
    /// The role.
    pub role: Role,
    /// `forward, kept for backward`.
    pub words: &'static str,
    /// `forward-kept`: the short form the one-line split uses.
    pub short: &'static str,
    /// Its bytes.
    pub bytes: u64,
    /// `54.0 MiB`.
    pub shown: String,
    /// `89.4%` of the heap at its peak.
    pub percent: String,
}

/// A table: its heading (which names the label of its figures), that label, columns,
/// rows (cut to the list's size) and what was left out.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// The heading, which names the label of its figures.
    pub title: String,
    /// Where its figures come from.
    pub label: Label,
    /// The columns.
    pub columns: Vec<Column>,
    /// The rows, cut to the list's size.
    pub rows: Vec<Vec<Cell>>,
    /// `… 62 more buffers, 42.9 MiB`, when rows were left out.
    pub more: Option<String>,
    /// One per row when some rows stand out (empty when none does).
    pub marks: Vec<Option<RowMark>>,
}

/// Why a table row stands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowMark {
    /// The selected module, or one of its executions.
    Selected,
    /// An execution that launched no kernel.
    NoKernel,
}

/// A table's column.
#[derive(Debug, Clone, Serialize)]
pub struct Column {
    /// Its heading.
    pub name: &'static str,
    /// Whether it holds figures (aligned right).
    pub numeric: bool,
}

/// A cell: what it shows, and, when that is shortened, the whole of it.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// What the cell shows.
    pub text: String,
    /// The whole of it, when `text` is shortened.
    pub full: Option<String>,
}

impl Cell {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            full: None,
        }
    }

    /// A size by the one rule of `units::size`, its exact bytes on hover.
    pub(crate) fn bytes(bytes: u64) -> Self {
        Cell {
            text: size(bytes),
            full: Some(format!("{} bytes", thousands(bytes))),
        }
    }

    /// A change of size (`+1.00 MiB`), its exact bytes on hover.
    pub(crate) fn delta(delta: i64) -> Self {
        let sign = if delta < 0 { "−" } else { "" };
        Cell {
            text: crate::units::signed_size(delta),
            full: Some(format!("{sign}{} bytes", thousands(delta.unsigned_abs()))),
        }
    }
}

/// The runtime section, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct RuntimeView {
    /// One line per allocator: `GPU_0_bfc: capacity 2.79 GiB, peak in use …`.
    pub allocators: Vec<String>,
    /// `device memory: 192.00 GiB`.
    pub device_memory: Option<String>,
    /// `executions: 10, kernels: 3,412, host-to-device transfers: 7`.
    pub counts: String,
    /// `316 MiB → 420 MiB → …`: in use at each start of the selected module.
    pub in_use_at_starts: Option<String>,
    /// `+104 MiB = 1.00× non-aliased outputs (estimated)`.
    pub growth: Option<String>,
    /// `1 waits, longest 10.00 s, total 10.00 s`, then the longest waits.
    pub retry: Option<String>,
    /// The longest waits, one line each.
    pub waits: Vec<String>,
    /// `live at the start of the last execution (304.0 MiB in use), by who allocated
    /// it`: the groups' total, which they add up to (with `live_groups_more`).
    pub live_groups_title: Option<String>,
    /// Live at the start of the last execution, by who allocated it.
    pub live_groups: Vec<LiveGroupRow>,
    /// `… 3 more groups, 12.0 MiB`, when groups were left out.
    pub live_groups_more: Option<String>,
    /// Host events between the last two executions, by name.
    pub host_events: Vec<HostEventRow>,
    /// The executions the report keeps (the latest [`limits::EXECUTIONS`] of them), for
    /// the page; titled with how many there were.
    pub executions: Option<Table>,
}

/// Arrays live at the last execution with one origin.
#[derive(Debug, Clone, Serialize)]
pub struct LiveGroupRow {
    /// Their bytes.
    pub bytes: u64,
    /// As shown (`54.0 MiB`).
    pub shown: String,
    /// How many arrays; none when they were not seen one by one (allocated before the
    /// capture, the runtime's reservation).
    pub count: Option<u64>,
    /// Who allocated them, in words.
    pub origin: String,
    /// ` (2.0 MiB of it its arguments, estimated)`.
    pub inputs: Option<String>,
}

/// Host events of one name between the last two executions.
#[derive(Debug, Clone, Serialize)]
pub struct HostEventRow {
    /// How many.
    pub count: u64,
    /// `303.964 ms`.
    pub total: String,
    /// The event's name.
    pub name: String,
}

/// The pasted error, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorView {
    /// `The error message (read): XLA:TPU compile-time check (tpu_compile_hbm), error.txt`.
    pub title: String,
    /// Where its figures come from.
    pub label: Label,
    /// The message's figures: `used 49.34 GiB`, each with what it is.
    pub rows: Vec<Row>,
    /// `TensorCore 34.82 GiB (16.7%) · SparseCore 174.10 GiB (83.3%)`, when stated.
    pub split: Option<String>,
    /// `GPU_0_bfc: limit 9.27 GiB, in use 4.02 GiB, …`, when stated.
    pub allocator: Option<String>,
    /// XLA's rematerialization warning, in words.
    pub remat: Option<String>,
    /// The allocations the message lists, as a table.
    pub allocations: Option<Table>,
    /// The plan part the failed request is, when it matched one.
    pub matched: Option<String>,
    /// What the message points to (the scenario of the triage).
    pub reading: String,
}

/// A note, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct ProfilesView {
    /// `Device memory profiles (measured)`.
    pub title: String,
    /// One line per profile: `step1.prof: 4.0 MiB on cpu:0 (2 buffers 4.0 MiB, 1 executable 0 B)`.
    pub rows: Vec<String>,
    /// The latest profile's bytes per device, when on several.
    pub devices: Option<String>,
    /// The latest profile's bytes by the Python line that made them.
    pub groups: Option<Table>,
    /// With two profiles or more: what changed from the first to the last.
    pub growth: Option<Table>,
}

/// A note, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct NoteView {
    /// Stable identifier.
    pub id: String,
    /// What it means and what to do.
    pub text: String,
}

/// A diagnosis line as a card: the title once, its label, the evidence, why (when that
/// adds to the evidence), and the fixes as a list. The id is for anchors and data
/// attributes, never for the card's text.
#[derive(Debug, Clone, Serialize)]
pub struct Card {
    /// The line's id.
    pub id: DiagnosisId,
    /// The line's title.
    pub title: &'static str,
    /// Where its figures come from.
    pub label: Label,
    /// The evidence: the line itself, with its figures.
    pub text: String,
    /// Why it happens; none when the title or the evidence already says it.
    pub cause: Option<String>,
    /// What to do, ranked, each with its own saving and cost.
    pub fixes: Vec<FixView>,
    /// How to check the estimate on the user's side.
    pub check: Option<String>,
    /// What the finding is made of, one line each (`f32[6,8,128,512] ×2 = 24.0 MiB,
    /// forward, kept for backward, at model.py:57 (jit(step)/…)`).
    pub items: Vec<String>,
}

/// One fix of a card.
#[derive(Debug, Clone, Serialize)]
pub struct FixView {
    /// What to do.
    pub text: String,
    /// `~50.0 MiB` (estimated).
    pub saving: Option<String>,
    /// What it costs.
    pub cost: Option<String>,
    /// `then fits` / `still does not fit` (estimated).
    pub then: Option<&'static str>,
    /// Whether the step then fits, as `then` says it.
    pub fits: Option<bool>,
}

impl FixView {
    /// `saves ~50.0 MiB (estimated); cost: twice as many steps; then fits`, or empty:
    /// what the text report writes after a fix.
    pub fn tail(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = &self.saving {
            parts.push(format!("{} {s} (estimated)", words::SAVES));
        }
        if let Some(c) = &self.cost {
            parts.push(format!("{}: {c}", words::COST));
        }
        if let Some(then) = self.then {
            parts.push(then.to_owned());
        }
        parts.join("; ")
    }
}

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
        notes: h
            .notes
            .iter()
            .map(|n| NoteView {
                id: n.id.clone(),
                text: n.text.clone(),
            })
            .collect(),
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
