//! The `oomlens` command as a user runs it: capture directories, output formats,
//! module choice, and that nothing is ever written next to the capture.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn oomlens(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oomlens"))
        .args(args)
        .output()
        .expect("oomlens runs")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .join(format!("{name}.xplane.pb"))
}

/// A log dir laid out as jax.profiler.trace writes it, with two runs and two hosts.
fn log_dir() -> tempdir::TempDir {
    let dir = tempdir::TempDir::new();
    let old = dir.path().join("plugins/profile/2024_01_01_00_00_00");
    let new = dir.path().join("plugins/profile/2024_02_01_00_00_00");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    std::fs::copy(fixture("leak_steps"), old.join("old_host.xplane.pb")).unwrap();
    std::fs::copy(fixture("train_eval"), new.join("host_a.xplane.pb")).unwrap();
    std::fs::copy(fixture("attention_train"), new.join("host_b.xplane.pb")).unwrap();
    dir
}

/// A throwaway directory removed on drop (no extra crate needed for this).
mod tempdir {
    pub struct TempDir(std::path::PathBuf);
    impl TempDir {
        pub fn new() -> Self {
            let n = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            let p = std::env::temp_dir().join(format!("oomlens-cli-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            }
            out.push(e.path());
        }
    }
    out.sort();
    out
}

#[test]
fn a_log_dir_reports_every_host_of_the_newest_run_and_writes_nothing_there() {
    let dir = log_dir();
    let before = listing(dir.path());
    for path in [dir.path().to_owned(), dir.path().join("plugins/profile")] {
        let out = oomlens(&[path.as_os_str(), "--format".as_ref(), "json".as_ref()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let hosts: Vec<&str> = json["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["host"].as_str().unwrap())
            .collect();
        assert_eq!(
            hosts,
            ["host_a", "host_b"],
            "the newest run's hosts, not the old run's"
        );
        assert_eq!(json["schema"], "oomlens/1");
    }
    assert_eq!(
        before,
        listing(dir.path()),
        "nothing written beside the capture"
    );
}

#[test]
fn one_file_gives_a_top_level_report_in_every_format() {
    let file = fixture("train_eval");
    let json = oomlens(&[file.as_os_str(), "--format".as_ref(), "json".as_ref()]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(v.get("hosts").is_none() && v["modules"].is_array());
    let text = String::from_utf8(oomlens(&[file.as_os_str()]).stdout).unwrap();
    assert!(
        text.contains("Plan (read):") && text.contains("Diagnosis:"),
        "{text}"
    );
    let md = String::from_utf8(
        oomlens(&[file.as_os_str(), "--format".as_ref(), "markdown".as_ref()]).stdout,
    )
    .unwrap();
    assert!(
        md.starts_with("## oomlens:") && md.contains("### Diagnosis"),
        "{md}"
    );
}

#[test]
fn module_can_be_chosen_by_label_or_name() {
    let file = fixture("train_eval");
    let oracle: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("train_eval").with_file_name("oracle.json")).unwrap(),
    )
    .unwrap();
    let eval = oracle["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "jit_eval_step")
        .unwrap();
    let label = format!("jit_eval_step({})", eval["program_id"]);
    for wanted in [label.as_str(), "jit_eval_step"] {
        let out = oomlens(&[
            file.as_os_str(),
            "--module".as_ref(),
            wanted.as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
        ]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["selected_module"], label.as_str());
    }
    let out = oomlens(&[file.as_os_str(), "--module".as_ref(), "jit_nope".as_ref()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("jit_eval_step"),
        "lists the modules there are: {err}"
    );
}

#[test]
fn json_can_go_to_a_file_beside_the_text_report() {
    let dir = tempdir::TempDir::new();
    let target = dir.path().join("report.json");
    let out = oomlens(&[
        fixture("leak_steps").as_os_str(),
        "--json".as_ref(),
        target.as_os_str(),
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Diagnosis:"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(v["schema"], "oomlens/1");
}

#[test]
fn json_to_standard_output_comes_alone_and_parses() {
    for format in ["text", "markdown", "json"] {
        let out = oomlens(&[
            fixture("leak_steps").as_os_str(),
            "--format".as_ref(),
            format.as_ref(),
            "--json".as_ref(),
            "-".as_ref(),
        ]);
        assert!(out.status.success(), "{format}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{format}: standard output is not JSON alone: {e}"));
        assert_eq!(v["schema"], "oomlens/1", "{format}");
    }
}

#[test]
fn unusable_paths_exit_2_with_one_line() {
    let dir = tempdir::TempDir::new();
    for path in [dir.path().join("missing.xplane.pb"), dir.path().to_owned()] {
        let out = oomlens(&[path.as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.starts_with("oomlens: "), "{err}");
    }
}
