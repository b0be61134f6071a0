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
