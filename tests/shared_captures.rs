//! The real third-party captures in `../shared/captures/`, checked against what XProf
//! itself computes for them (recorded by `tests/truth/xprof_truth.py` into
//! `tests/truth/shared/`). Skips, saying so, where the folder is absent (a user's clone).

use std::path::{Path, PathBuf};

use oomlens::report::json;
use serde_json::Value;

fn shared_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIP: ../shared/captures is absent; the shared-capture checks did not run");
        None
    }
}

fn analyze(path: &Path) -> Value {
    let report =
        oomlens::analyze_path(path, &oomlens::Options::default()).expect("analysis succeeds");
    json::to_value(&report)
}

fn truth(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/truth/shared")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("truth file")).expect("truth json")
}

const CAPTURES: [&str; 6] = [
    "tracelens_jax08_attention_tw003",
    "tracelens_jax08_conv_tw003",
    "tracelens_jax08_elementwise_tw003",
    "tracelens_jax08_gemm_tw003",
    "xprof_tpu_inference_2_clean",
    "xprof_tf_gpu_multi_worker_2020",
];

fn mib_to_bytes(v: &Value) -> u64 {
    (v.as_f64().expect("a number") * 1048576.0).round() as u64
}

#[test]
fn every_module_peak_equals_xprof_memory_viewer() {
    let Some(dir) = shared_dir() else { return };
    let mut compared = 0;
    for name in CAPTURES {
        let report = analyze(&dir.join(format!("{name}.xplane.pb")));
        let truth = truth(name);
        let viewer = truth["memory_viewer"].as_object().expect("memory_viewer");
        let modules = report["modules"].as_array().expect("modules");
        assert_eq!(modules.len(), viewer.len(), "{name}: module count");
        for m in modules {
            let label = m["label"].as_str().unwrap();
            let xprof = &viewer[label];
            let plan = &m["plan"];
            assert_eq!(
                plan["peak_bytes"].as_u64().unwrap(),
                mib_to_bytes(&xprof["peakHeapMib"]),
                "{name} {label}: peak"
            );
            assert_eq!(
                plan["allocation_bytes"].as_u64().unwrap(),
                mib_to_bytes(&xprof["totalBufferAllocationMib"]),
                "{name} {label}: total allocation"
            );
            let peak_alloc = &truth["peak_allocations"][label];
            assert_eq!(
                plan["allocation_bytes"].as_u64().unwrap(),
                mib_to_bytes(peak_alloc),
                "{name} {label}: get_peak_allocations"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 75, "every module of the five captures with plans");
}

#[test]
fn runtime_capacity_and_peak_equal_xprof_memory_profile() {
    let Some(dir) = shared_dir() else { return };
    for name in CAPTURES {
        let report = analyze(&dir.join(format!("{name}.xplane.pb")));
        let profile = &truth(name)["memory_profile"];
        let allocators = report["runtime"]["allocators"]
            .as_array()
            .expect("allocators");
        // XProf's CLI reports the largest capacity and peak of any allocator.
        let gib = |b: u64| ((b as f64 / 1073741824.0) * 100.0).round() / 100.0;
        let capacity = allocators
            .iter()
            .map(|a| a["capacity_bytes"].as_u64().unwrap())
            .max()
            .unwrap();
        let peak = allocators
            .iter()
            .map(|a| a["peak_in_use_bytes"].as_u64().unwrap())
            .max()
            .unwrap();
        assert_eq!(
            gib(capacity),
            profile["memory_capacity_gib"].as_f64().unwrap(),
            "{name}: capacity"
        );
        assert_eq!(
            gib(peak),
            profile["peak_memory_usage_gib"].as_f64().unwrap(),
            "{name}: peak in use"
        );
    }
}

#[test]
fn tpu_capture_keys_modules_by_64_bit_fingerprints() {
    let Some(dir) = shared_dir() else { return };
    let report = analyze(&dir.join("xprof_tpu_inference_2_clean.xplane.pb"));
    let labels: Vec<&str> = report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"jit_f(12190760917235803885)"),
        "{labels:?}"
    );
    let f = &report["modules"][0];
    assert_eq!(f["program_id"], "12190760917235803885");
    assert!(
        f["executions"].as_u64().unwrap() > 0,
        "executions come from the TPU module line"
    );
    // Host offload (memory space 5) is reported apart, not as device memory.
    assert!(f["plan"]["host_argument_bytes"].as_u64().unwrap() > 0);
    let ids: Vec<&str> = report["diagnosis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"host_offload"), "{ids:?}");
}

#[test]
fn tf_2020_capture_without_plans_says_so() {
    let Some(dir) = shared_dir() else { return };
    let report = analyze(&dir.join("xprof_tf_gpu_multi_worker_2020.xplane.pb"));
    assert!(report["modules"].as_array().unwrap().is_empty());
    assert_eq!(report["diagnosis"][0]["id"], "no_plan_in_capture");
    assert!(report["selected_module"].is_null());
    let names: Vec<&str> = report["runtime"]["allocators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"gpu_host_bfc"),
        "str_value allocator names are read: {names:?}"
    );
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["id"] == "xprof_capacity"),
        "explains XProf's host-pool capacity"
    );
}

#[test]
fn rocm_captures_find_executions_kernels_and_host_events() {
    let Some(dir) = shared_dir() else { return };
    let report = analyze(&dir.join("tracelens_jax08_conv_tw003.xplane.pb"));
    let rt = &report["runtime"];
    assert_eq!(report["selected_module"], "jit_forward_3d_conv(15)");
    assert!(rt["kernels"].as_u64().unwrap() > 0);
    let executions = rt["executions"].as_array().unwrap();
    let conv: Vec<_> = executions
        .iter()
        .filter(|e| e["module"] == "jit_forward_3d_conv(15)")
        .collect();
    assert_eq!(conv.len(), 5);
    assert!(conv.iter().all(|e| e["launched_kernels"] == true));
    let live = rt["live_at_last_execution"].as_array().unwrap();
    assert!(live[0]["origin"]
        .as_str()
        .unwrap()
        .starts_with("output of jit_forward_3d_conv(15) execution"));
    let host = rt["host_events_between_last_executions"]
        .as_array()
        .unwrap();
    assert!(
        host.iter()
            .any(|e| e["name"].as_str().unwrap().starts_with('$')),
        "python frames between executions"
    );
}

/// Where two figures differ, the report says which is which (issue: figures that
/// contradict each other). On the real GPU captures the plan's peak and the pool's
/// measured peak in use are both in the headline, each labelled, with the note saying
/// why the measured one is higher; on the TPU capture (plan 20.00 GiB, pool 20.02 GiB)
/// they agree and the headline quotes the plan alone.
#[test]
fn the_plan_peak_and_the_pool_peak_are_told_apart() {
    let Some(dir) = shared_dir() else { return };
    for name in CAPTURES {
        let report = analyze(&dir.join(format!("{name}.xplane.pb")));
        let headline = &report["headline"];
        if headline["verdict"] != "fits" {
            continue;
        }
        let figure = |n: &str| {
            headline["figures"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == n)
                .cloned()
        };
        let plan = figure("peak").expect("the plan's peak")["bytes"]
            .as_u64()
            .unwrap();
        let pool = report["runtime"]["allocators"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["kind"] == "device")
            .map(|a| a["peak_in_use_bytes"].as_u64().unwrap())
            .max()
            .unwrap();
        let apart = plan.abs_diff(pool);
        if apart > 1 << 20 && apart * 10 > plan {
            let measured = figure("peak_in_use").expect("the pool's peak in the headline");
            assert_eq!(measured["bytes"].as_u64(), Some(pool), "{name}");
            assert_eq!(measured["label"], "measured", "{name}");
            let note = headline["note"].as_str().expect("a note saying why");
            assert!(note.contains("more at its peak"), "{name}: {note}");
        } else {
            assert!(figure("peak_in_use").is_none(), "{name}");
            assert!(headline.get("note").is_none(), "{name}");
        }
    }
    let tpu = analyze(&dir.join("xprof_tpu_inference_2_clean.xplane.pb"));
    assert!(tpu["headline"].get("note").is_none());
    let gemm = analyze(&dir.join("tracelens_jax08_gemm_tw003.xplane.pb"));
    assert!(gemm["headline"]["note"].is_string());
}

/// A list that breaks a total down adds up to it: the groups live at the start of the
/// last execution sum to the bytes in use then, the TPU runtime's own reservation (20
/// GiB of the 20.02 GiB in use) a group of its own.
#[test]
fn what_is_live_at_the_last_start_adds_up_to_the_bytes_in_use() {
    let Some(dir) = shared_dir() else { return };
    let mut checked = 0;
    for name in CAPTURES {
        let report = analyze(&dir.join(format!("{name}.xplane.pb")));
        let runtime = &report["runtime"];
        let (Some(groups), Some(starts)) = (
            runtime["live_at_last_execution"].as_array(),
            runtime["in_use_at_selected_starts"].as_array(),
        ) else {
            continue;
        };
        let (Some(last), false) = (starts.last(), groups.is_empty()) else {
            continue;
        };
        let sum: u64 = groups.iter().map(|g| g["bytes"].as_u64().unwrap()).sum();
        assert_eq!(Some(sum), last.as_u64(), "{name}: groups {groups:?}");
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} captures had live groups");
    let tpu = analyze(&dir.join("xprof_tpu_inference_2_clean.xplane.pb"));
    let reserved = tpu["runtime"]["live_at_last_execution"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| {
            g["origin"]
                .as_str()
                .unwrap()
                .starts_with("reserved by the runtime")
        })
        .expect("the runtime's reservation is a group");
    assert!(reserved["bytes"].as_u64().unwrap() > 20 << 30);
}

/// A trend is claimed only when the series has one: the attention capture's selected
/// module starts at 304 → 288 → 304 MiB, which is no growth (it used to read −16 MiB
/// per execution, badged measured), and the text gives the range of steps instead.
#[test]
fn a_series_that_goes_up_and_down_claims_no_growth() {
    let Some(dir) = shared_dir() else { return };
    let path = dir.join("tracelens_jax08_attention_tw003.xplane.pb");
    let report = analyze(&path);
    let starts: Vec<u64> = report["runtime"]["in_use_at_selected_starts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() >> 20)
        .collect();
    assert_eq!(starts, [304, 288, 304], "MiB in use at the starts");
    assert!(report["runtime"]["growth_per_execution_bytes"].is_null());
    let text = oomlens::report::text::render(
        &oomlens::analyze_path(&path, &oomlens::Options::default()).unwrap(),
        4,
    );
    assert!(
        text.contains("growth per execution: none steady: from one start to the next, in use moved between −16.00 MiB and +16.00 MiB"),
        "{text}"
    );
}
