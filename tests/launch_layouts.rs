//! Every launch counted once and its device work attached to it, in each PjRt layout
//! (see `support/launch_layouts.rs`); and a launch without kernels is not called the
//! place where memory ran out unless the capture says it ran out.

#[path = "support/real_captures.rs"]
mod real_captures;
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

/// The event that marks one launch in each layout, outermost first: where a capture has
/// one of these, oomlens must count exactly as many executions as it has launches by
/// the first one found (`docs/runtime-events.md#the-layouts`).
const ONE_PER_LAUNCH: [&str; 4] = [
    // The PJRT C API's plugin half: TPU (JAX 0.10) and ROCm (JAX 0.8) plugins.
    "PJRT_LoadedExecutable_Execute",
    // StreamExecutor PjRt without the C API (Reactant on CUDA).
    "PjRtStreamExecutorLoadedExecutable::Execute",
    // TFRT's CPU client (Reactant on CPU).
    "TfrtCpuExecutable::ExecuteSharded",
    // XLA's CPU thunk runtime (our own captures): one event per device and launch, the
    // devices of one launch sharing its run id.
    "ThunkExecutor::Execute (wait for completion)",
];

/// Launches by the events of `/host:CPU` named `name`, decoded independently of the
/// engine (prost): one per event, or one per distinct `run_id` where they carry one.
fn host_launches(space: &oomlens::proto::xplane::XSpace, name: &str) -> Option<u64> {
    let mut events = 0u64;
    let mut runs = std::collections::BTreeSet::new();
    for plane in space.planes.iter().filter(|p| p.name == "/host:CPU") {
        let wanted: Vec<i64> = plane
            .event_metadata
            .values()
            .filter(|m| m.name == name)
            .map(|m| m.id)
            .collect();
        let run_stat = plane
            .stat_metadata
            .values()
            .find(|m| m.name == "run_id")
            .map(|m| m.id);
        for event in plane.lines.iter().flat_map(|l| &l.events) {
            if !wanted.contains(&event.metadata_id) {
                continue;
            }
            events += 1;
            let run = event
                .stats
                .iter()
                .find(|s| Some(s.metadata_id) == run_stat)
                .and_then(|s| s.value.clone());
            if let Some(run) = run {
                runs.insert(format!("{run:?}"));
            }
        }
    }
    match (events, runs.len() as u64) {
        (0, _) => None,
        (n, 0) => Some(n),
        (_, distinct) => Some(distinct),
    }
}

/// Every real capture we hold (our CPU captures, Reactant's CUDA and CPU captures, and
/// the shared ROCm and TPU captures when `../shared` is beside the checkout): one
/// execution per launch, as its host launch events count them.
#[test]
fn every_real_capture_counts_one_execution_per_host_launch() {
    use prost::Message;
    let mut checked = Vec::new();
    for path in real_captures::all() {
        let bytes = std::fs::read(&path).expect("the capture reads");
        let space = oomlens::proto::xplane::XSpace::decode(bytes.as_slice()).expect("an XSpace");
        let Some((event, launches)) = ONE_PER_LAUNCH
            .iter()
            .find_map(|name| host_launches(&space, name).map(|n| (*name, n)))
        else {
            continue;
        };
        let report = oomlens::analyze_path(&path, &Options::default()).expect("it analyzes");
        let executions = report.hosts[0]
            .runtime
            .as_ref()
            .map_or(0, |rt| rt.execution_count);
        assert_eq!(
            executions,
            launches,
            "{}: {launches} launches by {event}",
            path.display()
        );
        checked.push(event);
    }
    for layout in &ONE_PER_LAUNCH[1..] {
        assert!(checked.contains(layout), "no committed capture of {layout}");
    }
}
