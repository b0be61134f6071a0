//! Our own JAX captures (`tests/fixtures/<scenario>/`, recorded by
//! `tests/fixtures/make_captures.py`), checked against the ground truth recorded beside
//! each: XLA's `compiled.memory_analysis()` for the plan totals, XProf's Memory Viewer
//! for the peak. `unseen` does the same for captures recorded fresh at other sizes
//! (`scripts/unseen-captures.sh` sets `OOMLENS_UNSEEN_CAPTURES`).

use std::path::{Path, PathBuf};

use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Folders holding a capture and its `oracle.json`. Folders with an oracle but no
/// capture (`dump_attention_train_text`, `profiles_*`) are not analyzed here.
fn scenario_dirs(root: &Path) -> Vec<PathBuf> {
    let has_capture = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".xplane.pb"))
        })
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("oracle.json").is_file() && has_capture(p))
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

fn analyze(dir: &Path) -> Value {
    let report =
        oomlens::analyze_path(dir, &oomlens::Options::default()).expect("analysis succeeds");
    oomlens::report::json::to_value(&report)
}

fn module<'a>(report: &'a Value, label: &str) -> &'a Value {
    report["modules"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["label"] == label))
        .unwrap_or_else(|| panic!("module {label} not in the report"))
}

fn mib_to_bytes(v: &Value) -> u64 {
    (v.as_f64().expect("a number") * 1048576.0).round() as u64
}

/// Checks every module of one scenario folder; returns how many were compared.
fn check(dir: &Path, with_xprof: bool) -> usize {
    let oracle: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("oracle.json")).unwrap()).unwrap();
    let report = analyze(dir);
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let mut compared = 0;
    for m in oracle["modules"].as_array().unwrap() {
        let label = format!("{}({})", m["name"].as_str().unwrap(), m["program_id"]);
        let plan = &module(&report, &label)["plan"];
        for (ours, theirs) in [
            ("argument_bytes", "argument_size_in_bytes"),
            ("output_bytes", "output_size_in_bytes"),
            ("alias_bytes", "alias_size_in_bytes"),
            ("temp_bytes", "temp_size_in_bytes"),
        ] {
            assert_eq!(
                plan[ours], m[theirs],
                "{name} {label}: {ours} vs memory_analysis().{theirs}"
            );
        }
        if with_xprof {
            let viewer = &oracle["xprof"]["memory_viewer"][&label];
            assert_eq!(
                plan["peak_bytes"].as_u64().unwrap(),
                mib_to_bytes(&viewer["peakHeapMib"]),
                "{name} {label}: peak"
            );
            assert_eq!(
                plan["allocation_bytes"].as_u64().unwrap(),
                mib_to_bytes(&viewer["totalBufferAllocationMib"]),
                "{name} {label}: total allocation"
            );
        }
        compared += 1;
    }
    compared
}

#[test]
fn committed_captures_match_memory_analysis_and_xprof() {
    let dirs = scenario_dirs(&fixtures());
    assert!(dirs.len() >= 6, "the six scenarios are committed: {dirs:?}");
    let compared: usize = dirs.iter().map(|d| check(d, true)).sum();
    assert!(compared >= 7, "compared {compared} modules");
}

#[test]
fn committed_captures_are_small() {
    for dir in scenario_dirs(&fixtures()) {
        for f in std::fs::read_dir(&dir).unwrap().flatten() {
            let len = f.metadata().unwrap().len();
            assert!(len < 2 << 20, "{} is {len} bytes", f.path().display());
        }
    }
}

#[test]
fn unseen_sizes_match_memory_analysis() {
    let Ok(root) = std::env::var("OOMLENS_UNSEEN_CAPTURES") else {
        eprintln!("SKIP: OOMLENS_UNSEEN_CAPTURES is not set (scripts/unseen-captures.sh sets it)");
        return;
    };
    let mut compared = 0;
    for size in std::fs::read_dir(&root).unwrap().flatten() {
        for dir in scenario_dirs(&size.path()) {
            compared += check(&dir, false);
        }
    }
    assert!(compared >= 7, "compared {compared} modules under {root}");
    eprintln!("unseen captures: {compared} modules equal memory_analysis()");
}

#[test]
fn attention_step_is_mostly_forward_kept() {
    let report = analyze(&fixtures().join("attention_train"));
    assert_eq!(report["selected_module"], "jit_train_step(10)");
    let plan = &module(&report, "jit_train_step(10)")["plan"];
    let roles = &plan["roles_at_peak"];
    let f = roles["forward"].as_u64().unwrap();
    let total: u64 = ["forward", "backward", "workspace", "other"]
        .iter()
        .map(|k| roles[*k].as_u64().unwrap())
        .sum();
    assert!(
        f * 2 > total,
        "forward-kept dominates the heap peak: {roles}"
    );
    let ids: Vec<&str> = report["diagnosis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"role_forward"), "{ids:?}");
    assert!(
        ids.contains(&"no_allocator_events"),
        "CPU captures have no allocator events: {ids:?}"
    );
}

#[test]
fn no_donation_is_diagnosed_only_without_donation() {
    let with = analyze(&fixtures().join("attention_train"));
    let without = analyze(&fixtures().join("attention_train_nodonate"));
    let ids = |r: &Value| -> Vec<String> {
        r["diagnosis"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!ids(&with).contains(&"no_donation".to_owned()));
    assert!(ids(&without).contains(&"no_donation".to_owned()));
    let plan = &module(&without, without["selected_module"].as_str().unwrap())["plan"];
    assert_eq!(plan["donated_parameter_count"], 0);
}

#[test]
fn scan_over_layers_reports_its_stacks() {
    let report = analyze(&fixtures().join("scan_layers"));
    let plan = &module(&report, report["selected_module"].as_str().unwrap())["plan"];
    let stacks = plan["scan_stacks"].as_array().unwrap();
    assert!(!stacks.is_empty(), "scan stacks found");
    assert!(
        stacks[0]["shape"].as_str().unwrap().starts_with("f32[6,"),
        "{stacks:?}"
    );
    assert!(stacks[0]["while_instruction"]
        .as_str()
        .unwrap()
        .starts_with("while"));
    assert_eq!(stacks[0]["role"], "forward");
}

/// One diagnosis line per scan loop, its stacks as items; the loop of forward stacks
/// gets the checkpoint advice with their bytes as the saving, the loop of backward
/// stacks (the scanned weights' gradients) none; a stacked buffer is named by the
/// dynamic-update-slice that writes it in the loop body.
#[test]
fn each_scan_loop_is_one_line_and_only_forward_stacks_get_remat() {
    let report = analyze(&fixtures().join("scan_layers"));
    let plan = &module(&report, report["selected_module"].as_str().unwrap())["plan"];
    let stacks = plan["scan_stacks"].as_array().unwrap();
    let mut loops: Vec<&str> = stacks
        .iter()
        .map(|s| s["while_instruction"].as_str().unwrap())
        .collect();
    loops.dedup();
    let lines: Vec<&serde_json::Value> = report["diagnosis"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["id"] == "scan_stack")
        .collect();
    assert_eq!(lines.len(), loops.len(), "one line per loop: {lines:?}");
    for (line, name) in lines.iter().zip(&loops) {
        let of_loop: Vec<_> = stacks
            .iter()
            .filter(|s| s["while_instruction"] == *name)
            .collect();
        assert_eq!(line["items"].as_array().unwrap().len(), of_loop.len());
        let forward: u64 = of_loop
            .iter()
            .filter(|s| s["role"] == "forward")
            .map(|s| s["bytes"].as_u64().unwrap())
            .sum();
        if forward > 0 {
            assert_eq!(line["saving_bytes"].as_u64(), Some(forward), "{line}");
            assert!(line["fix"].as_str().unwrap().contains("jax.checkpoint"));
        } else {
            assert!(
                line["fix"].is_null() && line["saving_bytes"].is_null(),
                "{line}"
            );
        }
    }
    for s in stacks {
        assert!(
            s["op_name"]
                .as_str()
                .unwrap()
                .contains("dynamic_update_slice")
                && s["source"].as_str().unwrap().contains("make_captures.py:"),
            "{s}"
        );
    }
    let stacked: Vec<_> = plan["live_at_peak"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["shape"] == stacks[0]["shape"])
        .collect();
    assert!(!stacked.is_empty());
    for b in stacked {
        assert!(
            b["op_name"].as_str().unwrap().contains("/while/body/"),
            "{b}"
        );
        assert!(!b["source"].as_str().unwrap().is_empty(), "{b}");
    }
}

#[test]
fn debug_print_on_eight_devices_is_flagged() {
    let report = analyze(&fixtures().join("debug_print_8dev"));
    let ids: Vec<&str> = report["diagnosis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"debug_callback"), "{ids:?}");
}

#[test]
fn executions_are_counted_per_module() {
    for dir in scenario_dirs(&fixtures()) {
        let oracle: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("oracle.json")).unwrap())
                .unwrap();
        let report = analyze(&dir);
        for m in oracle["modules"].as_array().unwrap() {
            let label = format!("{}({})", m["name"].as_str().unwrap(), m["program_id"]);
            assert_eq!(
                module(&report, &label)["executions"],
                m["executions"],
                "{}: {label}",
                dir.display()
            );
        }
    }
}
