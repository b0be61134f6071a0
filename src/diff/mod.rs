//! Two runs compared: did the fix work, and did it save what was estimated?
//!
//! The comparison works on two finished reports ([`compare`] for one host each,
//! [`compare_reports`] host by host), so it costs two analyses and a cheap match;
//! [`compare_runs`] runs the two analyses (through any analyze function: capture
//! paths for the CLI, blobs for the page) and makes sure each report is about the
//! module compared, so that the diagnosis lines of both are that module's.
//!
//! - modules: matched by name ([`modules`]);
//! - buffers live at the peak and scan stacks: matched tier by tier ([`matching`]);
//! - figures side by side ([`deltas`]), added up to the change of the peak
//!   ([`reconcile`]);
//! - diagnosis lines resolved, new and remaining, with estimated vs measured savings
//!   ([`lines`]).

mod deltas;
mod lines;
mod matching;
pub mod model;
mod modules;
mod reconcile;

use crate::error::Error;
use crate::report::model::{DiagnosisId, HostReport, Label, ModuleReport, Report};
use crate::report::present;
use model::{
    signed_delta, DiagnosisChange, Diff, DiffHeadline, DiffNote, DiffReport, Fit, ModuleChoice,
    RuntimeDelta, Side, SCHEMA,
};

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct DiffOptions {
    /// The module to compare, by name (`jit_step`) or label (`jit_step(12)`; a label's
    /// program id is one run's, so the other run's module of that name is taken).
    pub module: Option<String>,
    /// How each run's runtime scan divides its work between threads (see
    /// [`crate::runtime::Scan`]); the comparison is the same whatever it says.
    pub scan: crate::runtime::Scan,
    /// What the caller calls each run (before, after): its run folder's name, when it
    /// knows one. Reports name the runs by their files; when both files share a name,
    /// these tell the runs apart.
    pub runs: [Option<String>; 2],
}

/// Analyzes one run, about a module when given (`oomlens PATH --module M`).
pub type AnalyzeRun<'a> = &'a mut dyn FnMut(Run, Option<&str>) -> Result<Report, Error>;

/// Which run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// The run before the change.
    Before,
    /// The run after the change.
    After,
}

impl Run {
    /// `before` or `after`, as reports and notes name the run.
    pub fn name(self) -> &'static str {
        match self {
            Run::Before => "before",
            Run::After => "after",
        }
    }
}

/// The pool a run's plan is compared against, as its verdict chooses it: the
/// allocator's capacity (measured), else the capacity the pasted error names (read).
fn pool(report: &HostReport) -> Option<(u64, Label)> {
    match report.capacity_bytes {
        Some(c) => Some((c, Label::Measured)),
        None => report
            .error
            .as_ref()
            .and_then(|e| e.message.capacity_bytes)
            .map(|c| (c, Label::Read)),
    }
}

fn side(report: &HostReport, module: Option<&ModuleReport>, run: Option<&String>) -> Side {
    let pool = pool(report);
    Side {
        file: report.file.clone(),
        run: run.cloned(),
        host: report.host.clone(),
        module: module.map(|m| m.label.clone()),
        executions: module.map(|m| m.executions),
        plan: module.map(|m| m.plan.clone()),
        selected: module.is_some_and(|m| report.selected_module.as_deref() == Some(&m.label)),
        verdict: report.headline.verdict,
        headline: report.headline.text.clone(),
        pool_bytes: pool.map(|p| p.0),
        pool_label: pool.map(|p| p.1),
    }
}

/// Whether the plan fits its pool, as the verdict judges it: needs ≤ pool.
fn fits(module: Option<&ModuleReport>, pool: Option<u64>) -> Option<bool> {
    Some(module?.plan.total_bytes <= pool?)
}

fn headline(
    before: &Side,
    after: &Side,
    bm: Option<&ModuleReport>,
    am: Option<&ModuleReport>,
) -> DiffHeadline {
    let pool = after.pool_bytes.or(before.pool_bytes);
    let pool_label = after.pool_label.or(before.pool_label);
    let fit_after = fits(am, pool);
    let fit_before = fits(bm, before.pool_bytes.or(pool));
    let fit = match (fit_before, fit_after) {
        (Some(false), Some(true)) => Fit::NowFits,
        (Some(true), Some(true)) => Fit::StillFits,
        (Some(false), Some(false)) => Fit::StillDoesNotFit,
        (Some(true), Some(false)) => Fit::NoLongerFits,
        _ => Fit::Unknown,
    };
    let short = match (fit_after, am, pool) {
        (Some(false), Some(m), Some(p)) => Some(m.plan.total_bytes.saturating_sub(p)),
        _ => None,
    };
    let mut h = DiffHeadline {
        text: String::new(),
        peak_before_bytes: bm.map(|m| m.plan.peak_bytes),
        peak_after_bytes: am.map(|m| m.plan.peak_bytes),
        fit,
        pool_bytes: pool,
        pool_label,
        short_bytes: short,
    };
    h.text = present::diff_headline(&h);
    h
}

/// Compares one host's report of each run.
pub fn compare(
    before: &HostReport,
    after: &HostReport,
    options: &DiffOptions,
) -> Result<Diff, Error> {
    let chosen = modules::choose(before, after, options.module.as_deref())?;
    let (bm, am) = (chosen.before, chosen.after);
    // The runs' folders are kept only where they are needed: when both files share a name.
    let same_name = before.file == after.file;
    let (sb, sa) = (
        side(before, bm, options.runs[0].as_ref().filter(|_| same_name)),
        side(after, am, options.runs[1].as_ref().filter(|_| same_name)),
    );
    let mut notes = module_notes(bm, am, chosen.choice);
    let plans = bm.zip(am).map(|(b, a)| (&b.plan, &a.plan));
    let buffers = plans
        .map(|(b, a)| deltas::buffers(&b.live_at_peak, &a.live_at_peak))
        .unwrap_or_default();
    let (matched, only_before, only_after) = reconcile::sums(&buffers);
    let runtime = runtime_delta(before, after, &mut notes);
    notes.extend(selection_notes(&sb, before, Run::Before));
    notes.extend(selection_notes(&sa, after, Run::After));
    // Diagnosis lines are about the module each report selected: comparable only when
    // that is the module compared on both sides, or when neither report is about a
    // module (two pasted errors: each report is about its message).
    let about_no_module = bm.is_none()
        && am.is_none()
        && before.selected_module.is_none()
        && after.selected_module.is_none();
    let mut diagnosis = if (sb.selected && sa.selected) || about_no_module {
        lines::compare(before, after)
    } else {
        DiagnosisChange::default()
    };
    // A line is resolved only when its bytes went away: the plan's peak or the pool's
    // peak in use dropped. Otherwise it is only no longer reported.
    let plan_drop = plans.map(|(b, a)| signed_delta(a.peak_bytes, b.peak_bytes));
    let in_use_drop = runtime.as_ref().map(|r| -r.peak_in_use_bytes.delta);
    if !(plan_drop.is_some_and(|d| d > 0) || in_use_drop.is_some_and(|d| d > 0)) {
        diagnosis.gone = std::mem::take(&mut diagnosis.resolved);
    }
    let scan_stacks = plans
        .map(|(b, a)| deltas::scan_stacks(&b.scan_stacks, &a.scan_stacks))
        .unwrap_or_default();
    let predicted_vs_actual = match plans {
        Some(plans) if diagnosis.compared => {
            // Every line no longer reported that estimated a saving, resolved or not:
            // the estimate beside what the peak did.
            let gone: Vec<DiagnosisId> = [&diagnosis.resolved[..], &diagnosis.gone[..]].concat();
            let mut p = lines::predictions(before, &gone, plans, runtime.as_ref());
            p.extend(lines::scan_stack_predictions(
                before,
                &diagnosis,
                &scan_stacks,
                plans,
                runtime.as_ref(),
            ));
            // The batch changed while the activations line remains: the line's other
            // fix is the one that was applied.
            if !gone.contains(&DiagnosisId::RoleForward) {
                p.extend(lines::batch_prediction(
                    before,
                    &buffers,
                    plans,
                    runtime.as_ref(),
                ));
            }
            p
        }
        _ => Vec::new(),
    };
    notes.extend(input_notes(before, after, &sb, &sa));
    Ok(Diff {
        host: before.host.clone(),
        headline: headline(&sb, &sa, bm, am),
        module_choice: chosen.choice,
        delta: plans.map(|(b, a)| deltas::plan(b, a)),
        reconciliation: plans.map(|(b, a)| reconcile::reconcile(b, a, &buffers)),
        buffers,
        matched_delta_bytes: matched,
        unmatched_before_bytes: only_before,
        unmatched_after_bytes: only_after,
        scan_stacks,
        runtime,
        diagnosis,
        predicted_vs_actual,
        notes: notes.iter().map(present::diff_note).collect(),
        before: sb,
        after: sa,
    })
}

/// Which side lacks a plan, or that the modules compared have different names.
fn module_notes(
    before: Option<&ModuleReport>,
    after: Option<&ModuleReport>,
    choice: ModuleChoice,
) -> Vec<DiffNote> {
    let note = match (before, after) {
        (None, None) => DiffNote::NoPlan { side: "either" },
        (None, Some(_)) => DiffNote::NoPlan { side: "before" },
        (Some(_), None) => DiffNote::NoPlan { side: "after" },
        (Some(b), Some(a)) if choice == ModuleChoice::NoCommonName => DiffNote::NamesDiffer {
            before: b.label.clone(),
            after: a.label.clone(),
        },
        _ => return Vec::new(),
    };
    vec![note]
}

/// The runtime deltas, when both runs have a device pool's events; else a note on the
/// side that lacks them.
fn runtime_delta(
    before: &HostReport,
    after: &HostReport,
    notes: &mut Vec<DiffNote>,
) -> Option<RuntimeDelta> {
    fn runtime_of(r: &HostReport) -> Option<&crate::report::model::Runtime> {
        r.runtime
            .as_ref()
            .filter(|rt| deltas::device_pool(rt).is_some())
    }
    let side = match (runtime_of(before), runtime_of(after)) {
        (Some(b), Some(a)) => return deltas::runtime(b, a),
        (None, None) => "either",
        (None, Some(_)) => "before",
        (Some(_), None) => "after",
    };
    notes.push(DiffNote::NoAllocatorEvents { side });
    None
}

/// That the module compared is not the one the run's report selected.
fn selection_notes(side: &Side, report: &HostReport, run: Run) -> Option<DiffNote> {
    match (side.selected, &side.module, &report.selected_module) {
        (false, Some(module), Some(selected)) => Some(DiffNote::NotSelected {
            side: run.name(),
            module: module.clone(),
            selected: selected.clone(),
        }),
        _ => None,
    }
}

/// What one run's inputs have that the other's lack: a pasted error, another pool.
fn input_notes(before: &HostReport, after: &HostReport, sb: &Side, sa: &Side) -> Vec<DiffNote> {
    let mut notes = Vec::new();
    match (before.error.is_some(), after.error.is_some()) {
        (true, false) => notes.push(DiffNote::ErrorTextOnly { side: "before" }),
        (false, true) => notes.push(DiffNote::ErrorTextOnly { side: "after" }),
        _ => {}
    }
    if let (Some(b), Some(a)) = (sb.pool_bytes, sa.pool_bytes) {
        if b != a {
            notes.push(DiffNote::PoolsDiffer {
                before: b,
                after: a,
            });
        }
    }
    notes
}

/// Compares two runs host by host: a host file of each when each run has one, else
/// the hosts whose names both runs have (the others are listed, not compared).
pub fn compare_reports(
    before: &Report,
    after: &Report,
    options: &DiffOptions,
) -> Result<DiffReport, Error> {
    let mut hosts = Vec::new();
    let mut only_before = Vec::new();
    let mut only_after = Vec::new();
    match (before.hosts.as_slice(), after.hosts.as_slice()) {
        ([b], [a]) => hosts.push(compare(b, a, options)?),
        (bs, as_) => {
            for b in bs {
                match as_.iter().find(|a| a.host == b.host) {
                    Some(a) => hosts.push(compare(b, a, options)?),
                    None => only_before.push(b.host.clone()),
                }
            }
            only_after.extend(
                as_.iter()
                    .filter(|a| !bs.iter().any(|b| b.host == a.host))
                    .map(|a| a.host.clone()),
            );
            if hosts.is_empty() {
                let names = |hs: &[HostReport]| {
                    hs.iter()
                        .map(|h| h.host.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(Error::NoCommonHost {
                    before: names(bs),
                    after: names(as_),
                });
            }
        }
    }
    Ok(DiffReport {
        schema: SCHEMA.into(),
        tool: crate::tool_name(),
        hosts,
        hosts_only_before: only_before,
        hosts_only_after: only_after,
    })
}

/// Analyzes one run, about `module` when given. A label names a module by one run's
/// program id: when this run has no module of that label, it is analyzed about the
/// module of the label's name.
pub fn analyze_run(
    analyze: AnalyzeRun<'_>,
    run: Run,
    module: Option<&str>,
) -> Result<Report, Error> {
    let in_run = |e: Error| match e {
        Error::UnknownModule { wanted, available } => Error::UnknownModuleIn {
            wanted,
            side: run.name(),
            available,
        },
        other => other,
    };
    match analyze(run, module) {
        Err(Error::UnknownModule { wanted, available }) => {
            match module.and_then(modules::name_part) {
                Some(name) => analyze(run, Some(name)).map_err(in_run),
                None => Err(in_run(Error::UnknownModule { wanted, available })),
            }
        }
        other => other.map_err(in_run),
    }
}

/// What comparing two finished reports needs next ([`first_step`]).
#[derive(Debug, Clone)]
pub enum Step {
    /// The comparison.
    Done(DiffReport),
    /// A run's report is not about the module compared: analyze that run again about
    /// this module (`None`: keep the run's report), then [`second_step`] with `choice`.
    Again {
        /// The module to analyze the run before about, if it must be analyzed again.
        before: Option<String>,
        /// The module to analyze the run after about, if it must be analyzed again.
        after: Option<String>,
        /// How the modules were chosen, for the second step.
        choice: ModuleChoice,
    },
}

/// Compares the two runs' first reports (each analyzed about `options.module`, with
/// [`analyze_run`]). When the module compared in a one-host run is not the one its
/// report is about (the runs' reports chose modules of different names), that run must
/// be analyzed again about it, so that the diagnosis lines compared are that module's.
pub fn first_step(before: &Report, after: &Report, options: &DiffOptions) -> Result<Step, Error> {
    let diff = compare_reports(before, after, options)?;
    let single = before.hosts.len() == 1 && after.hosts.len() == 1;
    let Some(d) = diff
        .hosts
        .first()
        .filter(|_| single && options.module.is_none())
    else {
        return Ok(Step::Done(diff));
    };
    let redo = |s: &Side| (!s.selected).then(|| s.module.clone()).flatten();
    let (redo_before, redo_after) = (redo(&d.before), redo(&d.after));
    if redo_before.is_none() && redo_after.is_none() {
        return Ok(Step::Done(diff));
    }
    Ok(Step::Again {
        before: redo_before,
        after: redo_after,
        choice: d.module_choice,
    })
}

/// Compares the reports after [`Step::Again`]: the modules were chosen by `choice`.
pub fn second_step(
    before: &Report,
    after: &Report,
    options: &DiffOptions,
    choice: ModuleChoice,
) -> Result<DiffReport, Error> {
    let mut diff = compare_reports(before, after, options)?;
    for h in &mut diff.hosts {
        h.module_choice = choice;
    }
    Ok(diff)
}

/// Runs both analyses with `analyze(run, module)` and compares them ([`first_step`],
/// then [`second_step`] when a run must be analyzed again). The page runs the same
/// steps with each run's analysis in its own worker.
///
/// `analyze` is the only place inputs are read: the CLI passes capture paths to
/// [`crate::analyze_path`], the page passes blobs.
pub fn compare_runs(analyze: AnalyzeRun<'_>, options: &DiffOptions) -> Result<DiffReport, Error> {
    let wanted = options.module.as_deref();
    let mut before = analyze_run(analyze, Run::Before, wanted)?;
    let mut after = analyze_run(analyze, Run::After, wanted)?;
    match first_step(&before, &after, options)? {
        Step::Done(diff) => Ok(diff),
        Step::Again {
            before: redo_before,
            after: redo_after,
            choice,
        } => {
            if let Some(label) = redo_before {
                before = analyze_run(analyze, Run::Before, Some(&label))?;
            }
            if let Some(label) = redo_after {
                after = analyze_run(analyze, Run::After, Some(&label))?;
            }
            second_step(&before, &after, options, choice)
        }
    }
}

/// Compares the runs at two paths (capture files or folders), each read as
/// `oomlens PATH` reads it.
#[cfg(not(target_arch = "wasm32"))]
pub fn compare_paths(
    before: &std::path::Path,
    after: &std::path::Path,
    options: &DiffOptions,
) -> Result<DiffReport, Error> {
    let options = &DiffOptions {
        runs: run_names(before, after),
        ..options.clone()
    };
    compare_runs(
        &mut |run, module| {
            let path = match run {
                Run::Before => before,
                Run::After => after,
            };
            let options = crate::Options {
                module: module.map(str::to_owned),
                error_text: None,
                scan: options.scan,
            };
            // The one place inputs are read: what `oomlens PATH` reads — a capture or
            // capture folder as such, anything else (an error message or log, an XLA
            // dump, a folder of them) joined as the inputs are.
            if reads_as_capture(path) {
                crate::analyze_path(path, &options)
            } else {
                crate::analyze_inputs(&[path.to_owned()], &options)
            }
        },
        options,
    )
}

/// Whether `oomlens PATH` reads this path as captures: a capture file (or any file
/// that is not text, a dump file or a profile: the capture reader then says what is
/// wrong), or a folder holding captures.
#[cfg(not(target_arch = "wasm32"))]
fn reads_as_capture(path: &std::path::Path) -> bool {
    use std::io::Read;
    if path.is_dir() {
        return crate::input::resolve(path).is_ok();
    }
    let mut head = Vec::with_capacity(4096);
    let read = std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .is_ok();
    let name = path.to_string_lossy();
    !read
        || !matches!(
            crate::inputs::classify(&name, &head),
            crate::inputs::Kind::Text
                | crate::inputs::Kind::DumpFile
                | crate::inputs::Kind::DeviceProfile
        )
}

/// What tells the two runs apart: the nearest folder above each (the folder given, or
/// the one holding the file given) whose names differ (`run_a`, `run_b` for
/// `run_a/plugins/profile/2024_06_01/vm.xplane.pb` and the same under `run_b`).
#[cfg(not(target_arch = "wasm32"))]
fn run_names(before: &std::path::Path, after: &std::path::Path) -> [Option<String>; 2] {
    let folders = |p: &std::path::Path| -> Vec<String> {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
        let dir = if p.is_dir() {
            Some(p.as_path())
        } else {
            p.parent()
        };
        let mut names: Vec<String> = dir
            .map(|d| {
                d.components()
                    .filter_map(|c| match c {
                        std::path::Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        names.reverse();
        names
    };
    let (b, a) = (folders(before), folders(after));
    b.iter()
        .zip(&a)
        .find(|(x, y)| x != y)
        .map_or([None, None], |(x, y)| [Some(x.clone()), Some(y.clone())])
}
