//! Every launch counted once and its device work attached to it, in each PjRt layout
//! (see `support/launch_layouts.rs`); and a launch without kernels is not called the
//! place where memory ran out unless the capture says it ran out.

mod support;

use oomlens::report::model::{HostReport, Verdict};
use oomlens::Options;
use support::launch_layouts::{rocm_incomplete_device_trace, tpu_pjrt_c_api, DeviceRunIds, Layout};

fn analyze(layout: &Layout) -> HostReport {
    oomlens::analyze(
        &layout.bytes,
        "layout-host",
        "layout.xplane.pb",
        &Options::default(),
        &mut |_, _, _| {},
    )
    .expect("the layout analyzes")
}

fn note<'r>(report: &'r HostReport, id: &str) -> Option<&'r str> {
    report
        .notes
        .iter()
        .find(|n| n.id == id)
        .map(|n| n.text.as_str())
}

#[test]
fn pjrt_c_api_tpu_launches_count_once_and_run_on_the_device() {
    for runs in [DeviceRunIds::Shared, DeviceRunIds::Unrelated] {
        let layout = tpu_pjrt_c_api(runs);
        let report = analyze(&layout);
        let module = report
            .modules
            .iter()
            .find(|m| m.label == layout.label)
            .expect("the module");
        assert_eq!(module.executions, layout.launches as u64, "{runs:?}");
        let rt = report.runtime.as_ref().expect("runtime");
        assert_eq!(rt.execution_count, layout.launches as u64, "{runs:?}");
        assert!(
            rt.executions
                .iter()
                .all(|e| e.module == layout.label && e.launched_kernels == Some(true)),
            "{runs:?}: {:?}",
            rt.executions
        );
        assert_eq!(report.headline.verdict, Verdict::Fits, "{runs:?}");
        assert!(
            !report.selection_reason.contains("ran out"),
            "{runs:?}: {}",
            report.selection_reason
        );
        assert_eq!(note(&report, "device_trace_incomplete"), None, "{runs:?}");
    }
}

#[test]
fn an_incomplete_device_trace_is_said_to_be_one() {
    let layout = rocm_incomplete_device_trace();
    let report = analyze(&layout);
    let rt = report.runtime.as_ref().expect("runtime");
    assert_eq!(rt.execution_count, layout.launches as u64);
    let launched: Vec<bool> = rt
        .executions
        .iter()
        .map(|e| e.launched_kernels == Some(true))
        .collect();
    let expected: Vec<bool> = (1..=layout.launches)
        .map(|n| layout.traced.contains(&n))
        .collect();
    assert_eq!(launched, expected);
    assert_eq!(
        report.selected_module.as_deref(),
        Some(layout.label.as_str())
    );
    assert_eq!(
        report.selection_reason,
        "the largest module that executed in the capture"
    );
    assert_eq!(report.headline.verdict, Verdict::Fits);
    let gaps = note(&report, "device_trace_incomplete").expect("the note on the trace");
    assert!(
        gaps.contains("no kernels for 5 of 10 launches (jit_step(5) executions 6–10)"),
        "{gaps}"
    );
    assert!(
        gaps.contains("7 of 8 devices recorded no kernels"),
        "{gaps}"
    );
    for traced in &layout.devices_traced {
        assert!(!gaps.contains(&format!("{traced},")), "{gaps}");
    }
    assert!(!report.diagnosis.iter().any(|d| d.text.contains("ran out")));
}
