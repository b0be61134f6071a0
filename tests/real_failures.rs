//! Real out-of-memory failures recorded on the CPU backend (`tests/fixtures/oom_*`,
//! written by `make_captures.py --only oom`): a jitted call whose temporary block
//! cannot be allocated raises `RESOURCE_EXHAUSTED` before any of its thunks runs, so
//! the failing module has no execution in the capture. The module and the verdict
//! must come from the evidence: the pasted error names the module; without it, the
//! capture only shows a call that never finished, and the report says no more.

use std::path::{Path, PathBuf};

use oomlens::report::model::{HostReport, Verdict};
use oomlens::Options;
use serde_json::Value;

const FAILURES: [&str; 3] = ["oom_first_call", "oom_after_steps", "oom_leak"];

fn folder(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn oracle(name: &str) -> Value {
    let text = std::fs::read_to_string(folder(name).join("oracle.json")).expect("oracle.json");
    serde_json::from_str(&text).expect("oracle.json parses")
}

fn analyze(name: &str, error_text: Option<String>) -> HostReport {
    let capture = folder(name).join(format!("{name}.xplane.pb"));
    let options = Options {
        error_text,
        ..Options::default()
    };
    let mut report = oomlens::analyze_path(&capture, &options).expect("the capture analyzes");
    report.hosts.remove(0)
}

/// `jit_train_step(10)`: the failing module's label, from the oracle.
fn failing_label(oracle: &Value) -> String {
    let f = &oracle["failure"];
    format!(
        "{}({})",
        f["module"].as_str().expect("module"),
        f["program_id"].as_u64().expect("program id")
    )
}

#[test]
fn the_pasted_error_names_the_module_that_never_ran() {
    for name in FAILURES {
        let oracle = oracle(name);
        let failing = failing_label(&oracle);
        let requested = oracle["failure"]["requested_bytes"]
            .as_u64()
            .expect("bytes");
        let error = std::fs::read_to_string(folder(name).join("error.txt")).expect("error.txt");
        let report = analyze(name, Some(error));
        assert_eq!(
            report.selected_module.as_deref(),
            Some(failing.as_str()),
            "{name}"
        );
        let module = report
            .modules
            .iter()
            .find(|m| m.label == failing)
            .expect("the failing module");
        assert_eq!(module.executions, 0, "{name}: it never ran");
        assert_eq!(module.plan.temp_bytes, requested, "{name}");
        assert_eq!(report.headline.verdict, Verdict::RanOut, "{name}");
        let request = report
            .headline
            .figures
            .iter()
            .find(|f| f.name == "failed_request")
            .expect("the failed request in the headline");
        assert_eq!(request.bytes, requested, "{name}");
        assert!(
            report.headline.text.contains("temporary block")
                && report.headline.text.contains(&failing),
            "{name}: {}",
            report.headline.text
        );
        let error = report.error.as_ref().expect("the error section");
        assert_eq!(error.message.requested_bytes, Some(requested), "{name}");
        assert!(
            error
                .matched
                .as_deref()
                .is_some_and(|m| m.contains(&failing)),
            "{name}: {:?}",
            error.matched
        );
    }
}

#[test]
fn without_the_error_the_report_claims_nothing_it_cannot_see() {
    for name in FAILURES {
        let oracle = oracle(name);
        let failing = failing_label(&oracle);
        let report = analyze(name, None);
        // The call that never finished is the largest module: it is the one shown,
        // with no claim about why it did not finish.
        assert_eq!(
            report.selected_module.as_deref(),
            Some(failing.as_str()),
            "{name}"
        );
        assert!(
            report.selection_reason.contains("never finished")
                && !report.selection_reason.contains("ran out"),
            "{name}: {}",
            report.selection_reason
        );
        assert_eq!(report.headline.verdict, Verdict::PlanOnly, "{name}");
        let note = report
            .notes
            .iter()
            .find(|n| n.id == "capture_ends_during_call")
            .expect("the note on the unfinished call");
        assert!(note.text.contains(&failing), "{name}: {}", note.text);
        assert!(note.text.contains("--error-text"), "{name}: {}", note.text);
    }
}

#[test]
fn the_steps_that_ran_are_counted_under_their_own_module() {
    // `oom_after_steps`: the same function at two shapes, two modules of one name.
    let oracle = oracle("oom_after_steps");
    let report = analyze("oom_after_steps", None);
    for m in oracle["modules"].as_array().expect("modules") {
        let label = format!(
            "{}({})",
            m["name"].as_str().expect("name"),
            m["program_id"].as_u64().expect("id")
        );
        let module = report
            .modules
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("{label} in the report"));
        assert_eq!(Some(module.executions), m["executions"].as_u64(), "{label}");
    }
}
