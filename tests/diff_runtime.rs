//! Runtime deltas of `oomlens diff`, on synthetic GPU captures (the recorded pairs are
//! CPU captures, whose allocator records no events): a loop that keeps every step's
//! grads (`gradients_kept`) against its fix (`gradients_released`), figures checked
//! against what the builder put in.

mod support;

use oomlens::diff::model::{Fit, ModuleChoice};
use oomlens::diff::{compare, DiffOptions};
use oomlens::report::model::{DiagnosisId, HostReport};
use oomlens::Options;
use support::gpu_sim::{Flavor, MetadataLayout};
use support::scenarios::*;

fn analyze(s: &Scenario, file: &str) -> HostReport {
    oomlens::analyze(
        &s.bytes,
        "gpu-host",
        file,
        &Options::default(),
        &mut |_, _, _| {},
    )
    .expect("the scenario capture analyzes")
}

#[test]
fn a_leak_and_its_fix_compare_their_runtime() {
    let step = "jit_train_step(7)";
    let (kept, released) = (
        gradients_kept(Flavor::Current, MetadataLayout::ProgramIdStat),
        gradients_released(Flavor::Current, MetadataLayout::ProgramIdStat),
    );
    let (before, after) = (
        analyze(&kept, "kept.xplane.pb"),
        analyze(&released, "released.xplane.pb"),
    );
    let d = compare(&before, &after, &DiffOptions::default()).unwrap();
    assert_eq!(d.module_choice, ModuleChoice::Selected);

    // The plan is the same program's: nothing changes there.
    let delta = d.delta.as_ref().unwrap();
    assert_eq!(
        (delta.peak_bytes, delta.temp_bytes, delta.output_bytes),
        (0, 0, 0)
    );
    assert!(d.buffers.iter().all(|r| r.delta_bytes == 0));

    // Runtime, as the builder ran it.
    let rt = d
        .runtime
        .as_ref()
        .expect("both runs recorded allocator events");
    assert_eq!(rt.allocator_before, "GPU_0_bfc");
    assert_eq!(rt.capacity_bytes.before, kept.pool);
    assert_eq!(rt.capacity_bytes.delta, 0);
    assert_eq!(rt.peak_in_use_bytes.before, kept.peak_in_use);
    assert_eq!(rt.peak_in_use_bytes.after, released.peak_in_use);
    assert!(rt.peak_in_use_bytes.delta < 0);
    let starts = |s: &Scenario| -> Vec<u64> {
        s.executions_of(step)
            .iter()
            .map(|e| e.in_use_at_start)
            .collect()
    };
    assert_eq!(rt.in_use_at_starts_before, starts(&kept));
    assert_eq!(rt.in_use_at_starts_after, starts(&released));
    let last = rt.in_use_at_last_start_bytes.unwrap();
    assert_eq!(last.before, *starts(&kept).last().unwrap());
    assert_eq!(last.after, *starts(&released).last().unwrap());
    assert!(rt.growth_per_execution_before.unwrap() > 100 << 20);
    assert!(
        rt.growth_per_execution_after.unwrap_or(0) < 1 << 20,
        "{rt:?}"
    );
    assert_eq!(rt.executions.before, rt.executions.after);

    // The leak line is resolved; its estimate sits beside the measured drop of the
    // pool's peak in use (the plan's peak did not move).
    assert!(
        d.diagnosis
            .resolved
            .contains(&DiagnosisId::GrowthPerExecution),
        "{:?}",
        d.diagnosis
    );
    let p = d
        .predicted_vs_actual
        .iter()
        .find(|p| p.id == DiagnosisId::GrowthPerExecution)
        .unwrap();
    let line = before
        .diagnosis
        .iter()
        .find(|l| l.id == DiagnosisId::GrowthPerExecution)
        .unwrap();
    assert_eq!(Some(p.estimated_saving_bytes), line.saving_bytes);
    assert_eq!(p.actual_saving_bytes, 0);
    assert_eq!(
        p.actual_in_use_saving_bytes,
        Some(kept.peak_in_use as i64 - released.peak_in_use as i64)
    );

    // It fit the pool before and after.
    assert_eq!(d.headline.fit, Fit::StillFits);
    assert_eq!(d.headline.pool_bytes, Some(kept.pool));

    let text = oomlens::report::diff_text::render(
        &oomlens::diff::compare_reports(
            &oomlens::report(vec![before.clone()]),
            &oomlens::report(vec![after.clone()]),
            &DiffOptions::default(),
        )
        .unwrap(),
        10,
    );
    for needle in [
        "Runtime (measured), pool GPU_0_bfc",
        "peak in use",
        "growth per execution",
        "in use at each start, before: 316.0 MiB",
        "the pool's peak in use dropped by",
        "fits the 2.79 GiB pool, as before",
    ] {
        assert!(text.contains(needle), "{needle:?} in\n{text}");
    }
}

/// The headline says whether the change made the step fit, with the pool both
/// captures measured.
#[test]
fn the_headline_judges_the_fit_against_the_pool() {
    let too_big = analyze(
        &attention_plan_too_big(Flavor::Current, MetadataLayout::ProgramIdStat),
        "big.xplane.pb",
    );
    let fits = analyze(
        &gradients_kept(Flavor::Current, MetadataLayout::ProgramIdStat),
        "small.xplane.pb",
    );
    let d = compare(&too_big, &fits, &DiffOptions::default()).unwrap();
    assert_eq!(d.headline.fit, Fit::NowFits, "{}", d.headline.text);
    assert!(
        d.headline.text.ends_with(": now fits the 2.79 GiB pool"),
        "{}",
        d.headline.text
    );
    let d = compare(&fits, &too_big, &DiffOptions::default()).unwrap();
    assert_eq!(d.headline.fit, Fit::NoLongerFits);
    let short = d.headline.short_bytes.unwrap();
    let m = too_big
        .modules
        .iter()
        .find(|m| Some(&m.label) == too_big.selected_module.as_ref())
        .unwrap();
    assert_eq!(short, m.plan.total_bytes - too_big.capacity_bytes.unwrap());
    assert!(
        d.headline.text.contains("no longer fits the 2.79 GiB pool"),
        "{}",
        d.headline.text
    );
}
