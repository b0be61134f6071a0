//! The comparison of two runs as people read it: every section, row and sentence of
//! `oomlens diff`, with its figures formatted and labelled, built once from the
//! comparison ([`crate::diff::model`]). The text and Markdown renderers and the page
//! (through the engine's `compare`) lay this out, as they lay out [`super::view`].
//!
//! Strings from the captures (names, shapes, paths) are carried as they are: each
//! renderer makes them safe for its medium.

use serde::Serialize;

use super::model::{DiagnosisId, Label, Plan, Role, TimelinePoint, Verdict};
use super::present::{self, percent_change};
use super::view::{
    column, in_use_at_starts, role_shares, roles_sentence, Cell, NoteView, RoleShare, Table,
};
use crate::diff::model::{
    signed_delta, BufferChange, Change, Diff, DiffReport, Figures, Reconciliation, RuntimeDelta,
    ScanStackChange, Side,
};
use crate::units::{signed_size, size, thousands};

/// Both runs compared, laid out: one view per host compared.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReportView {
    /// One comparison per host compared.
    pub hosts: Vec<DiffView>,
    /// `hosts only in the before run (not compared): host_c`, one per run that has any.
    pub hosts_only: Vec<String>,
}

/// One host's comparison, laid out.
#[derive(Debug, Clone, Serialize)]
pub struct DiffView {
    /// `checkpoint_before.xplane.pb → checkpoint_after.xplane.pb`.
    pub title: String,
    /// The host compared.
    pub host: String,
    /// `peak 54.4 MiB → 40.2 MiB (−26.2%)`, and whether it now fits.
    pub headline: String,
    /// ` (peak read, pool measured)`: the label of each figure, for one-line media.
    pub labels: String,
    /// The run before.
    pub before: SideView,
    /// The run after.
    pub after: SideView,
    /// `jit_train_step(10) → jit_train_step(10)`; empty when neither run has a plan.
    pub module: String,
    /// Why these modules: `the module each report is about`.
    pub module_reason: &'static str,
    /// Plan figures before, after, change (read).
    pub plan: Option<Table>,
    /// The heap at its peak by role, before, after, change (read).
    pub roles: Option<Table>,
    /// The same split as two bars, one per run, for the page's chart (read).
    pub role_bars: Option<RoleBars>,
    /// The heap along program order of both runs, for the page's chart (read).
    pub program_order: Option<ProgramOrder>,
    /// The buffers that changed, largest change first (read); `more` counts the rest.
    pub buffers: Option<Table>,
    /// How the buffers add up: `−14.3 MiB (matched) + 0 MiB (appeared) − 0 MiB (went
    /// away) = −14.3 MiB: the change of the peak (…)`.
    pub sum: Option<String>,
    /// The heap's share of that sum.
    pub heap_sum: Option<String>,
    /// `went away: f32[6,8,128,512] ×2 via while.14, 24.0 MiB`, one per scan stack.
    pub scan_stacks: Vec<String>,
    /// Runtime figures before, after, change (measured).
    pub runtime: Option<Table>,
    /// `before: 316 MiB → 420 MiB → …`, `after: …`: in use at each start.
    pub in_use_at_starts: Vec<String>,
    /// Diagnosis lines resolved, no longer reported (gone), new and remaining.
    pub diagnosis: Vec<LineChange>,
    /// Said when the diagnosis lines were not compared.
    pub diagnosis_not_compared: Option<&'static str>,
    /// Each line no longer reported (resolved or gone): its estimated saving beside the
    /// saving measured now.
    pub savings: Vec<SavingView>,
    /// What could not be compared, or what only one run has.
    pub notes: Vec<NoteView>,
}

/// The heap at its peak by role in each run: two bars drawn on one scale.
#[derive(Debug, Clone, Serialize)]
pub struct RoleBars {
    /// `At the heap peak, by role (read)`.
    pub title: String,
    /// The run before's bar.
    pub before: RoleBar,
    /// The run after's bar.
    pub after: RoleBar,
}

/// One run's bar.
#[derive(Debug, Clone, Serialize)]
pub struct RoleBar {
    /// `before` or `after`.
    pub side: &'static str,
    /// The heap at its peak, all roles (its bar's length).
    pub bytes: u64,
    /// `54.4 MiB`.
    pub shown: String,
    /// Forward, backward, workspace, other, as the report's own split.
    pub roles: Vec<RoleShare>,
    /// `forward-kept 89.4% · …`.
    pub sentence: String,
}

/// The heap along program order of both runs (each plan's heap-simulator timeline,
/// including memory held for the whole program), drawn on one chart. The runs' points
/// differ in number: each run spans the chart's width.
#[derive(Debug, Clone, Serialize)]
pub struct ProgramOrder {
    /// `Memory along program order (read)`.
    pub title: String,
    /// The run before's series.
    pub before: Series,
    /// The run after's series.
    pub after: Series,
    /// The pool the plans are compared against, when known: drawn as a line.
    pub pool_bytes: Option<u64>,
    /// `pool 1.50 GiB (measured)`.
    pub pool: Option<String>,
    /// `before: peak 54.4 MiB at point 812 of 2,000; after: peak 40.2 MiB at point
    /// 640 of 1,804`: the chart in words.
    pub sentence: String,
}

/// One run's timeline.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// `before` or `after`.
    pub side: &'static str,
    /// The module's label.
    pub module: String,
    /// Heap in use after each point, with its instruction (from the capture: untrusted).
    pub points: Vec<TimelinePoint>,
    /// Index into `points` of the peak (absent without points).
    pub peak_index: Option<usize>,
    /// `peak 54.4 MiB`.
    pub peak: String,
}

/// One run, in a line.
#[derive(Debug, Clone, Serialize)]
pub struct SideView {
    /// `before` or `after`.
    pub side: &'static str,
    /// The run's file.
    pub file: String,
    /// What the run is called here: its file, or when both runs' files share a name, its
    /// run folder and file (`run_a/vm.xplane.pb`), else the file and the side
    /// (`vm.xplane.pb (before)`).
    pub name: String,
    /// The run's host.
    pub host: String,
    /// The module compared, when the run has one.
    pub module: Option<String>,
    /// What the run's report concludes.
    pub verdict: Verdict,
    /// The run's own headline.
    pub headline: String,
}

/// A diagnosis line's fate.
#[derive(Debug, Clone, Serialize)]
pub struct LineChange {
    /// `resolved` (its bytes went away), `gone` (no longer reported, but neither peak
    /// dropped), `new` or `remaining`.
    pub status: &'static str,
    /// The line's id.
    pub id: DiagnosisId,
    /// The line's title, as the reports show it.
    pub title: &'static str,
}

/// An estimated saving beside the measured one.
#[derive(Debug, Clone, Serialize)]
pub struct SavingView {
    /// The line's id.
    pub id: DiagnosisId,
    /// The line's title, as the reports show it.
    pub title: &'static str,
    /// What the line was about, when other lines of its id remain.
    pub subject: Option<String>,
    /// `remat (jax.checkpoint) was estimated to save 41.0 MiB; it saved 14.3 MiB (35%
    /// of the estimate)`.
    pub text: String,
    /// `41.0 MiB` (estimated).
    pub estimated: String,
    /// `14.3 MiB`, or `−1.0 MiB` when the peak grew (read).
    pub actual: String,
}

/// Lays out a comparison; `top` is how many changed buffers to list.
pub fn report(d: &DiffReport, top: usize) -> DiffReportView {
    let mut hosts_only = Vec::new();
    for (side, list) in [
        ("before", &d.hosts_only_before),
        ("after", &d.hosts_only_after),
    ] {
        if !list.is_empty() {
            hosts_only.push(format!(
                "hosts only in the {side} run (not compared): {}",
                list.join(", ")
            ));
        }
    }
    DiffReportView {
        hosts: d.hosts.iter().map(|h| host(h, top)).collect(),
        hosts_only,
    }
}

/// What each run is called: its file, unless both files share a name (then the run
/// folder tells them apart, else the side does).
fn side_names(b: &Side, a: &Side) -> (String, String) {
    if b.file != a.file {
        return (b.file.clone(), a.file.clone());
    }
    match (&b.run, &a.run) {
        (Some(x), Some(y)) if x != y => (format!("{x}/{}", b.file), format!("{y}/{}", a.file)),
        _ => (
            format!("{} (before)", b.file),
            format!("{} (after)", a.file),
        ),
    }
}

fn side(s: &Side, side: &'static str, name: String) -> SideView {
    SideView {
        side,
        name,
        file: s.file.clone(),
        host: s.host.clone(),
        module: s.module.clone(),
        verdict: s.verdict,
        headline: s.headline.clone(),
    }
}

/// Lays out one host's comparison.
pub fn host(d: &Diff, top: usize) -> DiffView {
    let plans = d.before.plan.as_ref().zip(d.after.plan.as_ref());
    let labels = match d.headline.pool_label {
        Some(l) if d.headline.pool_bytes.is_some() => {
            format!(" (peak read, pool {})", l.as_str())
        }
        _ if plans.is_some() => " (peak read)".into(),
        _ => String::new(),
    };
    let name = |m: &Option<String>| m.clone().unwrap_or_else(|| "no plan".into());
    let module = if d.before.module.is_none() && d.after.module.is_none() {
        String::new()
    } else {
        format!("{} → {}", name(&d.before.module), name(&d.after.module))
    };
    let (before_name, after_name) = side_names(&d.before, &d.after);
    DiffView {
        title: format!("{before_name} → {after_name}"),
        host: d.host.clone(),
        headline: d.headline.text.clone(),
        labels,
        before: side(&d.before, "before", before_name),
        after: side(&d.after, "after", after_name),
        module,
        module_reason: present::module_choice(d.module_choice),
        plan: plans.map(|(b, a)| plan(b, a)),
        roles: plans.map(|(b, a)| roles(b, a)),
        role_bars: plans.map(|(b, a)| role_bars(b, a)),
        program_order: plans.and_then(|(b, a)| program_order(d, b, a)),
        buffers: plans.and_then(|_| buffers(&d.buffers, top)),
        sum: d.reconciliation.as_ref().map(|r| sum(d, r)),
        heap_sum: d
            .reconciliation
            .as_ref()
            .zip(d.delta.as_ref())
            .map(|(r, delta)| heap_sum(r, delta.heap_peak_bytes)),
        scan_stacks: d.scan_stacks.iter().map(scan_stack).collect(),
        runtime: d.runtime.as_ref().map(runtime),
        in_use_at_starts: d
            .runtime
            .as_ref()
            .map(|r| {
                [
                    ("before", &r.in_use_at_starts_before),
                    ("after", &r.in_use_at_starts_after),
                ]
                .into_iter()
                .filter_map(|(s, list)| in_use_at_starts(list).map(|l| format!("{s}: {l}")))
                .collect()
            })
            .unwrap_or_default(),
        diagnosis: diagnosis(d),
        diagnosis_not_compared: (!d.diagnosis.compared)
            .then_some("diagnosis lines not compared (see the notes)"),
        savings: d
            .predicted_vs_actual
            .iter()
            .map(|p| SavingView {
                id: p.id,
                title: present::title(p.id),
                subject: p.subject.clone(),
                text: present::prediction(p),
                estimated: size(p.estimated_saving_bytes),
                actual: if p.actual_saving_bytes < 0 {
                    format!("−{}", size(p.actual_saving_bytes.unsigned_abs()))
                } else {
                    size(p.actual_saving_bytes.unsigned_abs())
                },
            })
            .collect(),
        notes: d
            .notes
            .iter()
            .map(|n| NoteView {
                id: n.id.clone(),
                text: n.text.clone(),
            })
            .collect(),
    }
}

fn figures_row(name: &str, before: u64, after: u64) -> Vec<Cell> {
    vec![
        Cell::new(name),
        Cell::bytes(before),
        Cell::bytes(after),
        Cell::delta(signed_delta(before, after)),
        Cell::new(percent_change(before, after)),
    ]
}

fn change_columns(first: &'static str) -> Vec<super::view::Column> {
    vec![
        column(first, false),
        column("before", true),
        column("after", true),
        column("change", true),
        column("%", true),
    ]
}

fn plan(b: &Plan, a: &Plan) -> Table {
    let rows = vec![
        figures_row("parameters", b.argument_bytes, a.argument_bytes),
        figures_row("donated", b.donated_bytes, a.donated_bytes),
        figures_row("outputs", b.output_bytes, a.output_bytes),
        figures_row("aliased", b.alias_bytes, a.alias_bytes),
        figures_row("temporary block", b.temp_bytes, a.temp_bytes),
        figures_row("needs", b.total_bytes, a.total_bytes),
        figures_row("heap peak", b.heap_peak_bytes, a.heap_peak_bytes),
        figures_row("peak", b.peak_bytes, a.peak_bytes),
    ];
    Table {
        title: "Plan (read)".into(),
        label: Label::Read,
        columns: change_columns(""),
        rows,
        more: None,
        marks: Vec::new(),
    }
}

fn roles(b: &Plan, a: &Plan) -> Table {
    let share = |p: &Plan, role: Role| {
        let bytes = p.roles_at_peak.get(role);
        let heap = p.roles_at_peak.total().max(1);
        format!(
            "{} ({:.1}%)",
            size(bytes),
            100.0 * bytes as f64 / heap as f64
        )
    };
    let rows = [Role::Forward, Role::Backward, Role::Workspace, Role::Other]
        .into_iter()
        .map(|role| {
            let (x, y) = (b.roles_at_peak.get(role), a.roles_at_peak.get(role));
            vec![
                Cell::new(present::role_words(role)),
                Cell::new(share(b, role)),
                Cell::new(share(a, role)),
                Cell::delta(signed_delta(x, y)),
                Cell::new(percent_change(x, y)),
            ]
        })
        .collect();
    Table {
        title: "At the heap peak, by role (read)".into(),
        label: Label::Read,
        columns: change_columns("role"),
        rows,
        more: None,
        marks: Vec::new(),
    }
}

fn role_bar(p: &Plan, side: &'static str) -> RoleBar {
    let roles = role_shares(p);
    RoleBar {
        side,
        bytes: p.roles_at_peak.total(),
        shown: size(p.roles_at_peak.total()),
        sentence: roles_sentence(&roles),
        roles,
    }
}

fn role_bars(b: &Plan, a: &Plan) -> RoleBars {
    RoleBars {
        title: "At the heap peak, by role (read)".into(),
        before: role_bar(b, "before"),
        after: role_bar(a, "after"),
    }
}

fn series(p: &Plan, side: &'static str, module: &Option<String>) -> Series {
    let peak_index =
        (!p.timeline.is_empty()).then(|| p.timeline_peak_index.min(p.timeline.len() - 1));
    let peak = peak_index.map(|i| p.timeline[i].bytes).unwrap_or(0);
    Series {
        side,
        module: module.clone().unwrap_or_else(|| "none".into()),
        points: p.timeline.clone(),
        peak_index,
        peak: format!("peak {}", size(peak)),
    }
}

fn program_order(d: &Diff, b: &Plan, a: &Plan) -> Option<ProgramOrder> {
    if b.timeline.is_empty() && a.timeline.is_empty() {
        return None;
    }
    let before = series(b, "before", &d.before.module);
    let after = series(a, "after", &d.after.module);
    let words = |s: &Series| match s.peak_index {
        Some(i) => format!(
            "{}: {} at point {} of {}",
            s.side,
            s.peak,
            thousands((i + 1) as u64),
            thousands(s.points.len() as u64)
        ),
        None => format!("{}: no heap-simulator trace", s.side),
    };
    let pool = d
        .headline
        .pool_bytes
        .zip(d.headline.pool_label)
        .map(|(bytes, label)| format!("pool {} ({})", present::size(bytes), label.as_str()));
    Some(ProgramOrder {
        title: "Memory along program order (read)".into(),
        sentence: format!("{}; {}", words(&before), words(&after)),
        before,
        after,
        pool_bytes: d.headline.pool_bytes,
        pool,
    })
}

fn changed(r: &BufferChange) -> bool {
    r.change != Change::Unchanged
}

fn buffers(rows: &[BufferChange], top: usize) -> Option<Table> {
    let changed_rows: Vec<&BufferChange> = rows.iter().filter(|r| changed(r)).collect();
    if changed_rows.is_empty() && rows.is_empty() {
        return None;
    }
    let listed = changed_rows
        .iter()
        .take(top)
        .map(|r| {
            let short = present::short_source(&r.source);
            let shape = match &r.shape_after {
                Some(after) => format!("{} → {after}", r.shape),
                None => r.shape.clone(),
            };
            let instruction = match (&r.instruction_before, &r.instruction_after) {
                (Some(b), Some(a)) if b != a => format!("{b} → {a}"),
                (Some(x), _) | (None, Some(x)) => x.clone(),
                (None, None) => String::new(),
            };
            vec![
                Cell::delta(r.delta_bytes),
                Cell::bytes(r.before_bytes),
                Cell::bytes(r.after_bytes),
                Cell::new(present::change_words(r.change)),
                Cell::new(shape),
                Cell::new(present::role_name(r.role)),
                Cell {
                    text: short.to_owned(),
                    full: (short != r.source).then(|| r.source.clone()),
                },
                Cell::new(instruction),
                Cell::new(r.op_name.clone()),
            ]
        })
        .collect();
    let mut more: Vec<String> = Vec::new();
    if changed_rows.len() > top {
        let rest: i64 = changed_rows
            .iter()
            .skip(top)
            .map(|r| r.delta_bytes)
            .fold(0, i64::saturating_add);
        let n = changed_rows.len() - top;
        more.push(format!(
            "… {n} more changed {}, {}",
            if n == 1 { "buffer" } else { "buffers" },
            signed_size(rest)
        ));
    }
    let unchanged: Vec<&BufferChange> = rows.iter().filter(|r| !changed(r)).collect();
    if !unchanged.is_empty() {
        let bytes = unchanged
            .iter()
            .map(|r| r.after_bytes)
            .fold(0, u64::saturating_add);
        more.push(format!(
            "{} {} unchanged, {}",
            unchanged.len(),
            if unchanged.len() == 1 {
                "buffer"
            } else {
                "buffers"
            },
            size(bytes)
        ));
    }
    Some(Table {
        title: "Buffers live at the peak (read), largest change first".into(),
        label: Label::Read,
        columns: vec![
            column("change", true),
            column("before", true),
            column("after", true),
            column("", false),
            column("shape", false),
            column("role", false),
            column("source", false),
            column("instruction", false),
            column("op_name", false),
        ],
        rows: listed,
        more: (!more.is_empty()).then(|| more.join("; ")),
        marks: Vec::new(),
    })
}

fn sum(d: &Diff, r: &Reconciliation) -> String {
    let mut text = format!(
        "{} (matched) + {} (appeared) − {} (went away) = {}",
        signed_size(d.matched_delta_bytes),
        size(d.unmatched_after_bytes),
        size(d.unmatched_before_bytes),
        signed_size(r.listed_delta_bytes)
    );
    if !r.exact {
        let unlisted = r
            .unlisted_after_bytes
            .saturating_sub(r.unlisted_before_bytes);
        text.push_str(&format!(
            ", and {} in buffers not listed (the list keeps the 200 largest) = {}",
            signed_size(unlisted),
            signed_size(r.basis_delta_bytes)
        ));
    }
    text.push_str(&format!(": {}", present::basis_words(r.basis)));
    text
}

fn heap_sum(r: &Reconciliation, heap_delta: i64) -> String {
    if r.heap_delta_bytes == heap_delta {
        format!(
            "of it, in temporary buffers: {}, the change of the heap peak",
            signed_size(r.heap_delta_bytes)
        )
    } else {
        format!(
            "of it, in temporary buffers listed: {} (the heap peak changed by {})",
            signed_size(r.heap_delta_bytes),
            signed_size(heap_delta)
        )
    }
}

fn scan_stack(s: &ScanStackChange) -> String {
    let loops = match (&s.while_before, &s.while_after) {
        (Some(b), Some(a)) if b != a => format!("{b} → {a}"),
        (Some(x), _) | (None, Some(x)) => x.clone(),
        (None, None) => String::new(),
    };
    let count = match (s.change, s.count_before, s.count_after) {
        (Change::OnlyBefore, b, _) => format!("×{b}"),
        (Change::OnlyAfter, _, a) => format!("×{a}"),
        (_, b, a) if b == a => format!("×{b}"),
        (_, b, a) => format!("×{b} → ×{a}"),
    };
    let bytes = match s.change {
        Change::OnlyBefore => size(s.before_bytes),
        Change::OnlyAfter | Change::Unchanged => size(s.after_bytes),
        Change::Grew | Change::Shrank => format!(
            "{} → {} ({})",
            size(s.before_bytes),
            size(s.after_bytes),
            signed_size(s.delta_bytes)
        ),
    };
    format!(
        "{}: {} {count} via {loops}, {bytes}",
        present::change_words(s.change),
        s.shape
    )
}

fn runtime_row(name: &str, f: Figures) -> Vec<Cell> {
    figures_row(name, f.before, f.after)
}

fn runtime(r: &RuntimeDelta) -> Table {
    let pool = if r.allocator_before == r.allocator_after {
        r.allocator_before.clone()
    } else {
        format!("{} → {}", r.allocator_before, r.allocator_after)
    };
    let mut rows = vec![
        runtime_row("capacity", r.capacity_bytes),
        runtime_row("peak in use", r.peak_in_use_bytes),
    ];
    if let Some(last) = r.in_use_at_last_start_bytes {
        rows.push(runtime_row("in use at the last start", last));
    }
    let growth = |g: Option<i64>| g.map(signed_size).unwrap_or_else(|| "—".into());
    rows.push(vec![
        Cell::new("growth per execution"),
        Cell::new(growth(r.growth_per_execution_before)),
        Cell::new(growth(r.growth_per_execution_after)),
        Cell::new(
            match (r.growth_per_execution_before, r.growth_per_execution_after) {
                (Some(b), Some(a)) => signed_size(a.saturating_sub(b)),
                _ => "—".into(),
            },
        ),
        Cell::new(""),
    ]);
    rows.push(vec![
        Cell::new("AllocatorRetry waits"),
        Cell::new(format!(
            "{} ({:.2} s)",
            r.retry_count.before,
            r.retry_total_ns_before / 1e9
        )),
        Cell::new(format!(
            "{} ({:.2} s)",
            r.retry_count.after,
            r.retry_total_ns_after / 1e9
        )),
        Cell::new(format!("{:+}", r.retry_count.delta)),
        Cell::new(""),
    ]);
    rows.push(vec![
        Cell::new("executions"),
        Cell::new(r.executions.before.to_string()),
        Cell::new(r.executions.after.to_string()),
        Cell::new(format!("{:+}", r.executions.delta)),
        Cell::new(""),
    ]);
    Table {
        title: format!("Runtime (measured), pool {pool}"),
        label: Label::Measured,
        columns: change_columns(""),
        rows,
        more: None,
        marks: Vec::new(),
    }
}

fn diagnosis(d: &Diff) -> Vec<LineChange> {
    let lines = |status: &'static str, ids: &[DiagnosisId]| {
        ids.iter()
            .map(|&id| LineChange {
                status,
                id,
                title: present::title(id),
            })
            .collect::<Vec<_>>()
    };
    let mut out = lines("resolved", &d.diagnosis.resolved);
    out.extend(lines("gone", &d.diagnosis.gone));
    out.extend(lines("new", &d.diagnosis.new));
    out.extend(lines("remaining", &d.diagnosis.remaining));
    out
}
