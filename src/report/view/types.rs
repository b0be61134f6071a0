//! The view's types: what each section of a laid-out report holds, every figure already
//! worded and labelled.

use serde::Serialize;

use super::words;
use crate::report::model::{DiagnosisId, Label, Role, Verdict};
use crate::units::{size, thousands};

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

impl NoteView {
    /// Each note as laid out, in order.
    pub fn all(notes: &[crate::report::model::Note]) -> Vec<NoteView> {
        notes
            .iter()
            .map(|n| NoteView {
                id: n.id.clone(),
                text: n.text.clone(),
            })
            .collect()
    }
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
