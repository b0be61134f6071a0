//! The report as people read it: every section, row and sentence the renderers show,
//! with its figures formatted and labelled, built once from the report model. The
//! text and Markdown renderers and the page (through the engine) lay this out; none
//! of them words or formats a figure itself, so they all say the same thing.
//!
//! Strings from the capture (names, shapes, paths) are carried as they are: each
//! renderer makes them safe for its medium.

use serde::Serialize;

use super::model::{
    DiagnosisId, Execution, HostReport, Label, LiveBuffer, ModuleReport, Plan, Role, Runtime,
    Verdict,
};
use super::present::{self, limits};
use crate::units::{gib, mib, thousands};

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
    pub const LIVE_GROUPS: &str = "live at the start of the last execution, by who allocated it";
    /// Before the host events between the last two executions.
    pub const HOST_EVENTS: &str = "host events between the last two executions";
    /// The notes section's title.
    pub const NOTES: &str = "Notes";
    /// The diagnosis section's title.
    pub const DIAGNOSIS: &str = "Diagnosis";
    /// Before a diagnosis line's fix.
    pub const FIX: &str = "fix";
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
    /// The pasted error, parsed.
    pub error: Option<ErrorView>,
    /// What the capture lacked or what could not be read.
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
    /// How many arrays.
    pub count: u64,
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
    /// `The pasted error (allocate)`.
    pub title: String,
    /// Its figures, one row each.
    pub rows: Vec<Row>,
    /// What the message points to (the scenario of the triage).
    pub reading: String,
}

/// A note, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct NoteView {
    /// Stable identifier.
    pub id: String,
    /// What it means and what to do.
    pub text: String,
}

/// A diagnosis line as a card: title, label, the finding, and what to do.
#[derive(Debug, Clone, Serialize)]
pub struct Card {
    /// The line's id.
    pub id: DiagnosisId,
    /// The line's title.
    pub title: &'static str,
    /// Where its figures come from.
    pub label: Label,
    /// The line itself, with its figures.
    pub text: String,
    /// Why it happens.
    pub cause: String,
    /// What to do.
    pub fix: Option<String>,
    /// `~50.0 MiB` (estimated).
    pub saving: Option<String>,
    /// What the fix costs.
    pub cost: Option<String>,
    /// `then fits` / `still does not fit` (estimated).
    pub then: Option<&'static str>,
    /// Whether the step then fits, as `then` says it.
    pub fits: Option<bool>,
    /// How to check the estimate on the user's side.
    pub check: Option<String>,
    /// What the finding is made of, one line each (`f32[6,8,128,512] ×2 = 24.0 MiB,
    /// forward, kept for backward, at model.py:57 (jit(step)/…)`).
    pub items: Vec<String>,
}

/// Lays out one host's report; `top` is how many live buffers to list.
pub fn host(h: &HostReport, top: usize) -> View {
    let module = h
        .selected_module
        .as_deref()
        .and_then(|s| h.modules.iter().find(|m| m.label == s));
    View {
        file: h.file.clone(),
        host: h.host.clone(),
        size: format!("{} bytes", thousands(h.file_bytes)),
        headline: headline(h),
        module: ModuleLine {
            label: module.map(|m| m.label.clone()),
            reason: h.selection_reason.clone(),
            executions: module.map(|m| m.executions),
        },
        plan: module.map(|m| plan(&m.plan, h.capacity_bytes)),
        live: module.and_then(|m| live(&m.plan, top)),
        modules: modules(&h.modules, h.selected_module.as_deref()),
        runtime: h
            .runtime
            .as_ref()
            .map(|rt| runtime(rt, h.selected_module.as_deref())),
        error: error(h),
        notes: h
            .notes
            .iter()
            .map(|n| NoteView {
                id: n.id.clone(),
                text: n.text.clone(),
            })
            .collect(),
        diagnosis: h.diagnosis.iter().map(card).collect(),
        nothing_stands_out: h.diagnosis.is_empty().then_some(
            "nothing stands out: the plan fits and memory does not grow across executions",
        ),
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
        row("size (padded)", mib(b.bytes), bytes_note(b.bytes)),
        row(
            "unpadded",
            mib(b.unpadded_bytes),
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
    }
}

fn row(name: &str, value: String, note: impl Into<String>) -> Row {
    Row {
        name: name.into(),
        value,
        note: note.into(),
    }
}

fn plan(p: &Plan, capacity: Option<u64>) -> PlanView {
    let rows = vec![
        row(
            "parameters",
            mib(p.argument_bytes),
            format!(
                "{} arrays, {} donated = {}",
                p.parameter_count,
                p.donated_parameter_count,
                mib(p.donated_bytes)
            ),
        ),
        row(
            "outputs",
            mib(p.output_bytes),
            format!("{} not aliased to a parameter", mib(p.non_aliased_output_bytes)),
        ),
        row("temporary block", mib(p.temp_bytes), ""),
        row("aliased", mib(p.alias_bytes), ""),
        row(
            "needs",
            gib(p.total_bytes),
            "parameters + outputs + temporary − aliased",
        ),
        row(
            "heap peak",
            mib(p.heap_peak_bytes),
            "temporary buffers at their peak",
        ),
        row(
            "peak",
            mib(p.peak_bytes),
            format!(
                "heap peak + memory held for the whole program, as XProf's Memory Viewer; {} with fragmentation",
                mib(p.allocation_bytes)
            ),
        ),
    ];
    let roles = role_shares(p);
    let roles_sentence = roles_sentence(&roles);
    let host = p.host_bytes();
    PlanView {
        rows,
        roles,
        roles_sentence,
        padding: format!(
            "padding {} · rematerialized instructions {}",
            mib(p.padding_bytes),
            p.remat_instructions
        ),
        host_memory: (host > 0).then(|| {
            format!(
                "parameters {}, outputs {}, temporary {}",
                mib(p.host_argument_bytes),
                mib(p.host_output_bytes),
                mib(p.host_temp_bytes)
            )
        }),
        scan_stacks: p
            .scan_stacks
            .iter()
            .map(|s| {
                let at = if s.source.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", present::short_source(&s.source))
                };
                format!(
                    "{} ×{} via {} = {} ({}){at}",
                    s.shape,
                    s.count,
                    s.while_instruction,
                    mib(s.bytes),
                    present::role_words(s.role)
                )
            })
            .collect(),
        host_callbacks: p.host_callbacks.clone(),
        note: p.replay_note.clone(),
        chart: memory_chart(p, capacity),
    }
}

/// `forward-kept 89.4% · gradients 3.1% · …`: the role split in one line.
pub(crate) fn roles_sentence(roles: &[RoleShare]) -> String {
    roles
        .iter()
        .map(|r| format!("{} {}", r.short, r.percent))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// How far above the highest figure the bytes axis reaches, so that the peak's mark
/// and label fit under the top.
const CHART_HEADROOM: f64 = 1.08;
/// A capacity up to this many times the peak is drawn as a line on the scale; a larger
/// one would flatten the series, so it is only named.
const CAPACITY_ON_SCALE: f64 = 2.5;
/// About how many steps the bytes axis has.
const CHART_TICKS: f64 = 4.0;

fn memory_chart(p: &Plan, capacity: Option<u64>) -> Option<MemoryChart> {
    if p.timeline.is_empty() {
        return None;
    }
    let points: Vec<u64> = p.timeline.iter().map(|t| t.bytes).collect();
    let peak_index = p.timeline_peak_index.min(points.len() - 1);
    let max = points.iter().copied().max().unwrap_or(0);
    let capacity = capacity.filter(|&c| c > 0);
    let on_scale = capacity.filter(|&c| c as f64 <= max as f64 * CAPACITY_ON_SCALE);
    let top = (max.max(on_scale.unwrap_or(0)).max(1) as f64 * CHART_HEADROOM).ceil();
    let peak_bytes = points[peak_index];
    let peak_instruction = p.timeline[peak_index].instruction.clone();
    let at = if peak_instruction.is_empty() {
        String::new()
    } else {
        format!(" ({peak_instruction})")
    };
    Some(MemoryChart {
        title: "Memory along program order (read)",
        summary: format!(
            "Memory along program order: {} points, peak {} at point {}{at}",
            thousands(points.len() as u64),
            mib(peak_bytes),
            thousands(peak_index as u64 + 1),
        ),
        points,
        peak_index,
        peak: format!("peak {}", mib(peak_bytes)),
        peak_instruction,
        top_bytes: top as u64,
        ticks: byte_ticks(top),
        capacity: on_scale.map(|c| Tick {
            bytes: c,
            shown: format!("capacity {} (measured)", gib(c)),
        }),
        capacity_note: capacity
            .filter(|_| on_scale.is_none())
            .map(|c| format!("capacity {} (measured) is above the scale", gib(c))),
        axis: "program order (heap-simulator events) →",
    })
}

/// Marks from 0 to `top` in steps of 1, 2 or 5 × 10^k of one unit (GiB, MiB, KiB or
/// bytes, the largest of which `top` holds at least 4), each written in that unit with
/// the decimals the step needs (as the page's charts mark them).
fn byte_ticks(top: f64) -> Vec<Tick> {
    const UNITS: [(f64, &str); 4] = [
        (1073741824.0, "GiB"),
        (1048576.0, "MiB"),
        (1024.0, "KiB"),
        (1.0, "B"),
    ];
    let unit = UNITS
        .iter()
        .map(|u| u.0)
        .find(|&u| top >= 4.0 * u)
        .unwrap_or(1.0);
    let raw = top / unit / CHART_TICKS;
    let step = if raw > 0.0 {
        let mag = 10f64.powf(raw.log10().floor());
        let f = raw / mag;
        let m = if f <= 1.0 {
            1.0
        } else if f <= 2.0 {
            2.0
        } else if f <= 5.0 {
            5.0
        } else {
            10.0
        };
        (m * mag * unit).max(1.0)
    } else {
        unit
    };
    let (label_unit, name) = UNITS
        .iter()
        .copied()
        .find(|&(u, _)| step >= u)
        .unwrap_or(UNITS[3]);
    let decimals = (-((step / label_unit).log10() + 1e-9).floor()).clamp(0.0, 3.0) as usize;
    let mut ticks = Vec::new();
    let mut v = 0.0;
    while v <= top * 1.0001 && ticks.len() < 12 {
        ticks.push(Tick {
            bytes: v as u64,
            shown: if v == 0.0 {
                "0".into()
            } else {
                format!("{:.*} {name}", decimals, v / label_unit)
            },
        });
        v += step;
    }
    ticks
}

pub(crate) fn role_shares(p: &Plan) -> Vec<RoleShare> {
    let r = p.roles_at_peak;
    let heap = r.total().max(1);
    [Role::Forward, Role::Backward, Role::Workspace, Role::Other]
        .into_iter()
        .map(|role| {
            let bytes = r.get(role);
            RoleShare {
                role,
                words: present::role_words(role),
                short: present::role_short(role),
                bytes,
                shown: mib(bytes),
                percent: format!("{:.1}%", 100.0 * bytes as f64 / heap as f64),
            }
        })
        .collect()
}

pub(crate) fn column(name: &'static str, numeric: bool) -> Column {
    Column { name, numeric }
}

fn live(p: &Plan, top: usize) -> Option<Table> {
    if p.live_at_peak.is_empty() || top == 0 {
        return None;
    }
    let rows = p
        .live_at_peak
        .iter()
        .take(top)
        .map(|b| {
            let short = present::short_source(&b.source);
            vec![
                Cell::new(mib(b.bytes)),
                Cell::new(b.shape.clone()),
                Cell::new(present::category(b.category)),
                Cell::new(present::role_name(b.role)),
                Cell {
                    text: short.to_owned(),
                    full: (short != b.source).then(|| b.source.clone()),
                },
                Cell::new(b.name.clone()),
                Cell::new(b.op_name.clone()),
            ]
        })
        .collect();
    let more = (p.live_at_peak.len() > top).then(|| {
        let rest: u64 = p
            .live_at_peak
            .iter()
            .skip(top)
            .map(|b| b.bytes)
            .fold(0, u64::saturating_add);
        format!(
            "… {} more buffers, {}",
            p.live_at_peak.len() - top,
            mib(rest)
        )
    });
    Some(Table {
        title: "Live at the peak (read), largest first".into(),
        label: Label::Read,
        columns: vec![
            column("bytes", true),
            column("shape", false),
            column("category", false),
            column("role", false),
            column("source", false),
            column("instruction", false),
            column("op_name", false),
        ],
        rows,
        more,
        marks: Vec::new(),
    })
}

fn modules(modules: &[ModuleReport], selected: Option<&str>) -> Option<Table> {
    if modules.len() < 2 {
        return None;
    }
    let rows = modules
        .iter()
        .take(limits::MODULES)
        .map(|m| {
            vec![
                Cell::new(mib(m.plan.peak_bytes)),
                Cell::new(mib(m.plan.temp_bytes)),
                Cell::new(mib(m.plan.parameter_bytes)),
                Cell::new(m.executions.to_string()),
                Cell::new(m.label.clone()),
            ]
        })
        .collect();
    Some(Table {
        title: "Modules (read; executions measured), largest peak first".into(),
        label: Label::Read,
        columns: vec![
            column("peak", true),
            column("temp", true),
            column("params", true),
            column("runs", true),
            column("module", false),
        ],
        rows,
        more: (modules.len() > limits::MODULES)
            .then(|| format!("… and {} more", modules.len() - limits::MODULES)),
        marks: modules
            .iter()
            .take(limits::MODULES)
            .map(|m| (Some(m.label.as_str()) == selected).then_some(RowMark::Selected))
            .collect(),
    })
}

fn runtime(rt: &Runtime, selected: Option<&str>) -> RuntimeView {
    RuntimeView {
        allocators: rt
            .allocators
            .iter()
            .take(limits::ALLOCATORS)
            .map(|a| {
                format!(
                    "{}: capacity {}, peak in use {}, fragmentation at the peak {:.2}",
                    a.name,
                    gib(a.capacity_bytes),
                    gib(a.peak_in_use_bytes),
                    a.fragmentation_at_peak
                )
            })
            .collect(),
        device_memory: rt
            .device_memory_bytes
            .map(|d| format!("device memory: {}", gib(d))),
        counts: format!(
            "executions: {}, kernels: {}, host-to-device transfers: {}",
            rt.execution_count, rt.kernels, rt.transfers
        ),
        in_use_at_starts: in_use_at_starts(&rt.in_use_at_selected_starts),
        growth: rt.growth_per_execution_bytes.map(|g| {
            let ratio = rt
                .growth_ratio_to_outputs
                .map(|r| format!(" = {r:.2}× non-aliased outputs (estimated)"))
                .unwrap_or_default();
            let sign = if g < 0 { "−" } else { "+" };
            format!("{sign}{}{ratio}", mib(g.unsigned_abs()))
        }),
        retry: (rt.retry.count > 0).then(|| {
            format!(
                "{} waits, longest {:.2} s, total {:.2} s",
                rt.retry.count,
                rt.retry.longest_ns / 1e9,
                rt.retry.total_ns / 1e9
            )
        }),
        waits: longest_waits(rt),
        live_groups: rt
            .live_at_last_execution
            .iter()
            .take(limits::LIVE_GROUPS)
            .map(|g| LiveGroupRow {
                bytes: g.bytes,
                shown: mib(g.bytes),
                count: g.count,
                origin: present::live_origin(&g.origin),
                inputs: (g.input_bytes > 0)
                    .then(|| format!("{} of it its arguments, estimated", mib(g.input_bytes))),
            })
            .collect(),
        live_groups_more: (rt.live_at_last_execution.len() > limits::LIVE_GROUPS).then(|| {
            format!(
                "… and {} more groups",
                rt.live_at_last_execution.len() - limits::LIVE_GROUPS
            )
        }),
        host_events: rt
            .host_events_between_last_executions
            .iter()
            .take(limits::HOST_EVENTS)
            .map(|e| HostEventRow {
                count: e.count,
                total: format!("{:.3} ms", e.total_ns / 1e6),
                name: e.name.clone(),
            })
            .collect(),
        executions: executions(rt, selected),
    }
}

/// The latest executions, one row each; the selected module's and those that launched
/// no kernel are marked.
fn executions(rt: &Runtime, selected: Option<&str>) -> Option<Table> {
    if rt.executions.is_empty() {
        return None;
    }
    let listed = rt.executions.len().min(limits::EXECUTIONS);
    let kept = &rt.executions[rt.executions.len() - listed..];
    let total = rt.execution_count.max(rt.executions.len() as u64);
    let title = if listed as u64 == total {
        format!("Executions ({})", thousands(total))
    } else {
        format!(
            "Executions (the latest {} of {})",
            thousands(listed as u64),
            thousands(total)
        )
    };
    let mark = |e: &Execution| {
        if e.launched_kernels == Some(false) {
            Some(RowMark::NoKernel)
        } else {
            (Some(e.module.as_str()) == selected).then_some(RowMark::Selected)
        }
    };
    let dash = || "—".to_owned();
    Some(Table {
        title,
        label: Label::Measured,
        columns: vec![
            column("module", false),
            column("run id", false),
            column("start", true),
            column("duration", true),
            column("in use at start", true),
            column("launched kernels", false),
        ],
        rows: kept
            .iter()
            .map(|e| {
                vec![
                    Cell::new(if e.module.is_empty() {
                        dash()
                    } else {
                        e.module.clone()
                    }),
                    Cell::new(e.run_id.map_or_else(dash, |r| r.to_string())),
                    Cell::new(present::duration(e.start_ns)),
                    Cell::new(present::duration(e.duration_ns)),
                    Cell::new(e.in_use_at_start_bytes.map_or_else(dash, mib)),
                    Cell::new(match e.launched_kernels {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "—",
                    }),
                ]
            })
            .collect(),
        more: None,
        marks: kept.iter().map(mark).collect(),
    })
}

/// `316 MiB → 420 MiB → … 4 more … → 940 MiB`: the first and last three of a long list.
pub(crate) fn in_use_at_starts(starts: &[u64]) -> Option<String> {
    if starts.len() < 2 {
        return None;
    }
    let edge = limits::IN_USE_EDGE;
    let mut list: Vec<String> = Vec::new();
    for (i, &b) in starts.iter().enumerate() {
        let long = starts.len() > 2 * edge + 2;
        if long && i == edge {
            list.push(format!("… {} more …", starts.len() - 2 * edge));
        }
        if !long || i < edge || i >= starts.len() - edge {
            list.push(mib(b));
        }
    }
    Some(list.join(" → "))
}

fn longest_waits(rt: &Runtime) -> Vec<String> {
    let mut longest: Vec<_> = rt.retry.waits.iter().collect();
    longest.sort_by(|a, b| b.duration_ns.total_cmp(&a.duration_ns));
    longest
        .into_iter()
        .take(limits::WAITS)
        .map(|w| {
            let within = w
                .execution
                .as_deref()
                .map(|e| format!(" in {e}"))
                .unwrap_or_default();
            format!(
                "waited {:.3} s from {:.3} s{within}",
                w.duration_ns / 1e9,
                w.start_ns / 1e9
            )
        })
        .collect()
}

fn error(h: &HostReport) -> Option<ErrorView> {
    let e = h.error.as_ref()?;
    let mut rows = Vec::new();
    let mut add = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            rows.push(row(name, value, ""));
        }
    };
    add("requested", e.requested_bytes.map(mib));
    add("capacity", e.capacity_bytes.map(gib));
    add("used", e.used_bytes.map(gib));
    add("TensorCore", e.tensorcore_bytes.map(gib));
    add("SparseCore", e.sparsecore_bytes.map(gib));
    add("matches", e.matched.clone());
    Some(ErrorView {
        title: format!("The pasted error ({})", e.kind),
        rows,
        reading: e.scenario.clone(),
    })
}

fn card(d: &crate::report::model::Diagnosis) -> Card {
    Card {
        id: d.id,
        title: present::title(d.id),
        label: d.label,
        text: d.text.clone(),
        cause: d.cause.clone(),
        fix: d.fix.clone(),
        saving: d.saving_bytes.map(|s| format!("~{}", mib(s))),
        cost: d.cost.clone(),
        then: d
            .fits_after
            .map(|f| if f { "then fits" } else { "still does not fit" }),
        fits: d.fits_after,
        check: d.check.clone(),
        items: d.items.iter().map(item).collect(),
    }
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
        mib(i.bytes),
        present::role_words(i.role)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Category, Execution, ModuleReport};

    fn buffer(name: &str, bytes: u64, memory_space: i64) -> LiveBuffer {
        LiveBuffer {
            name: name.into(),
            opcode: "fusion".into(),
            shape: "f32[1024,1024]".into(),
            bytes,
            unpadded_bytes: bytes / 2,
            category: Category::Temporary,
            role: Role::Backward,
            source: "/src/model.py:7".into(),
            op_name: "jit(step)/transpose(jvp())/dot".into(),
            memory_space,
        }
    }

    fn module(label: &str, live: Vec<LiveBuffer>) -> ModuleReport {
        ModuleReport {
            label: label.into(),
            plan: Plan {
                live_at_peak: live,
                ..Plan::default()
            },
            ..ModuleReport::default()
        }
    }

    fn execution(module: &str, kernels: Option<bool>) -> Execution {
        Execution {
            module: module.into(),
            start_ns: 1.5e9,
            duration_ns: 3.4e6,
            launched_kernels: kernels,
            ..Execution::default()
        }
    }

    #[test]
    fn the_page_gets_each_listed_buffer_in_full() {
        let live = vec![
            buffer("a", 4 << 20, 0),
            buffer("b", 2 << 20, 5),
            buffer("c", 1, 0),
        ];
        let h = HostReport {
            modules: vec![module("jit_step(1)", live), module("jit_other(2)", vec![])],
            selected_module: Some("jit_step(1)".into()),
            ..HostReport::default()
        };
        let v = host(&h, 2);
        let t = v.live.expect("a live table");
        assert_eq!(v.live_buffers.len(), t.rows.len());
        for (row, b) in t.rows.iter().zip(&v.live_buffers) {
            assert_eq!(
                row[0].text, b.rows[1].value,
                "the size shown in the table and the detail"
            );
            assert_eq!(row[5].text, b.name);
        }
        let b = &v.live_buffers[1];
        let names: Vec<&str> = b.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "shape",
                "size (padded)",
                "unpadded",
                "category",
                "role",
                "opcode",
                "source",
                "op_name",
                "memory space"
            ]
        );
        assert_eq!(b.rows[1].note, "2,097,152 bytes");
        assert_eq!(b.rows[4].value, "backward");
        assert_eq!(
            b.rows[6].value, "/src/model.py:7",
            "the detail has the full source"
        );
        assert!(!v.live_buffers[0]
            .rows
            .iter()
            .any(|r| r.name == "memory space"));
        // The module table marks the selected module.
        let modules = v.modules.expect("a module table");
        assert_eq!(modules.marks, [Some(RowMark::Selected), None]);
        // Every label has its meaning.
        assert_eq!(v.labels.len(), 3);
        assert!(v
            .labels
            .iter()
            .all(|l| l.meaning.starts_with(l.label.as_str())));
    }

    #[test]
    fn executions_are_listed_latest_first_cut_and_marked() {
        let mut executions: Vec<Execution> = (0..limits::EXECUTIONS + 5)
            .map(|_| execution("jit_other(2)", Some(true)))
            .collect();
        executions.push(execution("jit_step(1)", Some(true)));
        executions.push(execution("jit_step(1)", Some(false)));
        let rt = Runtime {
            execution_count: 5000,
            executions,
            ..Runtime::default()
        };
        let t = executions_table(&rt);
        assert_eq!(t.rows.len(), limits::EXECUTIONS);
        assert_eq!(t.title, "Executions (the latest 1,000 of 5,000)");
        let last = t.rows.last().expect("a row");
        let texts: Vec<&str> = last.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["jit_step(1)", "—", "1.50 s", "3.400 ms", "—", "no"]);
        let n = t.marks.len();
        assert_eq!(t.marks[n - 1], Some(RowMark::NoKernel));
        assert_eq!(t.marks[n - 2], Some(RowMark::Selected));
        assert_eq!(t.marks[n - 3], None);
        let few = Runtime {
            execution_count: 1,
            executions: vec![execution("", None)],
            ..Runtime::default()
        };
        let t = executions_table(&few);
        assert_eq!(t.title, "Executions (1)");
        assert_eq!(t.rows[0][0].text, "—");
        assert_eq!(t.rows[0][5].text, "—");
    }

    fn executions_table(rt: &Runtime) -> Table {
        executions(rt, Some("jit_step(1)")).expect("an executions table")
    }
}

/// The cross-host summary of a folder, laid out: what every renderer leads with when a
/// run left several host files (`docs/hosts.md`).
#[derive(Debug, Clone, Serialize)]
pub struct HostsView {
    /// `256 host files: 254 read, 1 in part, 1 not read`.
    pub title: String,
    /// One row per host: host, read, verdict, module, plan peak, runtime peak,
    /// capacity, growth per execution, OOM evidence, notes.
    pub table: Table,
    /// `host3 ran out first: allocator retry at 12.345 s into its profile`.
    pub first_out: Option<String>,
    /// `host7: plan peak 12.00 GiB, the others 8.00 GiB`: one line per host that
    /// differs from the rest.
    pub skew: Vec<String>,
    /// `host9 (host9.xplane.pb): <its one-line error>`: hosts that could not be read.
    pub failed: Vec<String>,
    /// Said when some host files could not be read while the others were reported.
    pub failed_note: Option<String>,
    /// How to see one host's report.
    pub detail: &'static str,
}

/// Lays out the summary rows of a folder.
pub fn hosts(rows: &[super::model::HostSummary]) -> HostsView {
    use super::model::HostStatus;
    let count = |s: HostStatus| rows.iter().filter(|r| r.status == s).count();
    let (read, partial, failed) = (
        count(HostStatus::Analyzed),
        count(HostStatus::Partial),
        count(HostStatus::Failed),
    );
    let mut parts = vec![format!("{read} read")];
    if partial > 0 {
        parts.push(format!("{partial} in part"));
    }
    if failed > 0 {
        parts.push(format!("{failed} not read"));
    }
    let title = format!(
        "{} host files: {}",
        thousands(rows.len() as u64),
        parts.join(", ")
    );
    let opt = |b: Option<u64>| b.map_or_else(|| "—".to_owned(), present::size);
    let columns = [
        ("host", false),
        ("read", false),
        ("verdict", false),
        ("module", false),
        ("plan peak", true),
        ("runtime peak", true),
        ("capacity", true),
        ("growth/exec", true),
        ("OOM evidence", false),
        ("notes", false),
    ]
    .into_iter()
    .map(|(name, numeric)| Column { name, numeric })
    .collect();
    let table_rows = rows
        .iter()
        .map(|r| {
            let mut host = r.host.clone();
            if r.ran_out_first {
                host.push_str(" (first)");
            }
            let evidence: Vec<&str> = r
                .oom_evidence
                .iter()
                .map(|&e| present::oom_evidence_words(e))
                .collect();
            let notes = match &r.error_kind {
                Some(kind) => kind.clone(),
                None => r.notes.join(", "),
            };
            vec![
                Cell::new(host),
                Cell::new(present::host_status_words(r.status)),
                Cell::new(r.verdict.map_or("—", present::verdict_words)),
                Cell::new(r.selected_module.clone().unwrap_or_else(|| "—".into())),
                Cell::new(opt(r.plan_peak_bytes)),
                Cell::new(opt(r.runtime_peak_bytes)),
                Cell::new(opt(r.capacity_bytes)),
                Cell::new(
                    r.growth_per_execution_bytes
                        .map_or_else(|| "—".to_owned(), present::signed_mib),
                ),
                Cell::new(if evidence.is_empty() {
                    "—".to_owned()
                } else {
                    evidence.join(", ")
                }),
                Cell::new(if notes.is_empty() {
                    "—".into()
                } else {
                    notes
                }),
            ]
        })
        .collect();
    let first_out = rows.iter().find(|r| r.ran_out_first).map(|r| {
        let what = r
            .oom_evidence
            .iter()
            .find(|&&e| {
                matches!(
                    e,
                    super::model::OomEvidence::AllocatorRetry
                        | super::model::OomEvidence::PeakAtCapacity
                )
            })
            .map_or("out of memory", |&e| present::oom_evidence_words(e));
        match r.ran_out_at_ns {
            Some(ns) => format!(
                "{} ran out first: {what} at {} into its profile",
                r.host,
                present::duration(ns)
            ),
            None => format!("{} ran out first: {what}", r.host),
        }
    });
    let skew = rows
        .iter()
        .filter(|r| !r.skew.is_empty())
        .map(|r| {
            let parts: Vec<String> = r
                .skew
                .iter()
                .map(|s| {
                    let name = present::skew_field_words(s.field);
                    match (s.bytes, s.typical_bytes) {
                        (Some(v), Some(t)) => {
                            let shown = |b: i64| {
                                if s.field == super::model::SkewField::GrowthPerExecutionBytes {
                                    present::signed_mib(b)
                                } else {
                                    present::size(b.max(0).unsigned_abs())
                                }
                            };
                            format!("{name} {}, typically {}", shown(v), shown(t))
                        }
                        _ => {
                            // A verdict is written as JSON names it; shown in words.
                            let shown = |v: Option<&str>| {
                                let v = v.unwrap_or("—");
                                ALL_VERDICTS
                                    .iter()
                                    .find(|x| x.as_str() == v)
                                    .map_or(v, |&x| present::verdict_words(x))
                                    .to_owned()
                            };
                            format!(
                                "{name} {}, typically {}",
                                shown(s.value.as_deref()),
                                shown(s.typical.as_deref())
                            )
                        }
                    }
                })
                .collect();
            format!("{}: {}", r.host, parts.join("; "))
        })
        .collect();
    let failed_lines: Vec<String> = rows
        .iter()
        .filter(|r| r.status == HostStatus::Failed)
        .map(|r| {
            format!(
                "{} ({}): {}",
                r.host,
                r.file,
                r.error.as_deref().unwrap_or("")
            )
        })
        .collect();
    let failed_note = (failed > 0).then(|| {
        format!(
            "{failed} of {} host files could not be read; every other host is reported",
            rows.len()
        )
    });
    HostsView {
        title,
        table: Table {
            title: "Hosts (plan peak read; runtime peak, capacity and growth measured)".into(),
            label: Label::Measured,
            columns,
            rows: table_rows,
            more: None,
            marks: Vec::new(),
        },
        first_out,
        skew,
        failed: failed_lines,
        failed_note,
        detail: "one host's report: oomlens PATH --host HOST",
    }
}

const ALL_VERDICTS: [Verdict; 7] = [
    Verdict::DoesNotFit,
    Verdict::Leak,
    Verdict::RanOut,
    Verdict::Fits,
    Verdict::PlanOnly,
    Verdict::RuntimeOnly,
    Verdict::Empty,
];
