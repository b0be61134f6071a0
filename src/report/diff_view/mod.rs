//! The comparison of two runs as people read it: every section, row and sentence of
//! `oomlens diff`, with its figures formatted and labelled, built once from the
//! comparison ([`crate::diff::model`]). The text and Markdown renderers and the page
//! (through the engine's `compare`) lay this out, as they lay out [`super::view`].
//!
//! Strings from the captures (names, shapes, paths) are carried as they are: each
//! renderer makes them safe for its medium.

mod tables;

use serde::Serialize;

use super::model::{DiagnosisId, TimelinePoint, Verdict};
use super::present;
use super::view::{in_use_at_starts, NoteView, RoleShare, Table};
use crate::diff::model::{Change, Diff, DiffReport, Reconciliation, ScanStackChange, Side};
use crate::units::{signed_size, size};
use tables::{buffers, plan, program_order, role_bars, roles, runtime};

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
        notes: NoteView::all(&d.notes),
    }
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
