//! Folders of several host files (issue 14 §4, `docs/hosts.md`): the cross-host
//! summary, hosts analyzed in parallel and written out one by one, damaged host files
//! reported as rows while the others are analyzed, and `--host`. Folders are made in
//! a temporary directory from the committed fixtures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

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

/// A throwaway directory removed on drop.
struct TempDir(PathBuf);
impl TempDir {
    fn new(what: &str) -> Self {
        let n = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p = std::env::temp_dir().join(format!("oomlens-{what}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A run folder: four copies of one capture (hosts that agree), one of another
/// (a host that differs), an empty file, a file cut in its first plane's header
/// (neither readable), and one cut half-way (read in part).
fn run_folder() -> TempDir {
    let dir = TempDir::new("hosts");
    let same = std::fs::read(fixture("attention_train")).unwrap();
    for i in 0..4 {
        std::fs::write(dir.0.join(format!("host{i}.xplane.pb")), &same).unwrap();
    }
    std::fs::copy(fixture("train_eval"), dir.0.join("host4.xplane.pb")).unwrap();
    std::fs::write(dir.0.join("host5.xplane.pb"), b"").unwrap();
    std::fs::write(dir.0.join("host6.xplane.pb"), &same[..5]).unwrap();
    std::fs::write(dir.0.join("host7.xplane.pb"), &same[..same.len() / 2]).unwrap();
    dir
}

fn run(args: &[&str]) -> (Output, String) {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    let out = oomlens(&args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, text)
}

#[test]
fn a_folder_gets_the_summary_and_damaged_hosts_do_not_sink_the_others() {
    let dir = run_folder();
    let path = dir.0.to_str().unwrap();
    let (out, text) = run(&[path]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    assert!(
        text.starts_with("oomlens — 8 host files: 5 read, 1 in part, 2 not read"),
        "{text}"
    );
    for says in [
        "host5 (host5.xplane.pb): the file is empty",
        "host6 (host6.xplane.pb): the capture is truncated",
        "note: 2 of 8 host files could not be read; every other host is reported",
        "host4: ",
        "one host's report: oomlens PATH --host HOST",
    ] {
        assert!(text.contains(says), "{says:?} not in\n{text}");
    }
    // Summary only: no host's detail.
    assert!(!text.contains("Plan (read):"), "{text}");
    let md = run(&[path, "--format", "markdown"]).1;
    assert!(
        md.starts_with("## oomlens: 8 host files") && md.contains("| host | read | verdict |"),
        "{md}"
    );
}

#[test]
fn the_json_has_hosts_summary_beside_hosts_and_equals_the_in_memory_report() {
    let dir = run_folder();
    let path = dir.0.to_str().unwrap();
    let (out, streamed) = run(&[path, "--format", "json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_str(&streamed).unwrap();
    let rows = v["hosts_summary"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    // Damaged files have a row each, but no report.
    let hosts: Vec<&str> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(
        hosts,
        ["host0", "host1", "host2", "host3", "host4", "host7"]
    );
    assert_eq!(rows[5]["status"], "failed");
    assert_eq!(rows[5]["error_kind"], "empty");
    assert_eq!(rows[6]["error_kind"], "truncated");
    assert_eq!(rows[7]["status"], "partial");
    assert!(rows[7]["notes"]
        .as_array()
        .unwrap()
        .contains(&"capture_truncated".into()));
    assert_eq!(rows[0]["status"], "analyzed");
    assert_eq!(rows[0]["selected_module"], v["hosts"][0]["selected_module"]);
    assert!(rows[0]["plan_peak_bytes"].as_u64().unwrap() > 0);
    // host4 runs another program: it differs from the rest; host0..3 do not.
    assert!(rows[0]["skew"].as_array().unwrap().is_empty());
    let skew: Vec<&str> = rows[4]["skew"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["field"].as_str().unwrap())
        .collect();
    assert!(skew.contains(&"selected_module"), "{skew:?}");
    // Written host by host, the same bytes as the report made in memory, on any
    // number of threads.
    let report = oomlens::analyze_path(&dir.0, &oomlens::Options::default()).unwrap();
    assert_eq!(streamed, oomlens::report::json::render(&report));
    let one = run(&[path, "--format", "json", "--jobs", "1"]).1;
    assert_eq!(streamed, one);
    // --json FILE gets the same while the text summary goes to standard output.
    let file = dir.0.join("out.json");
    let (out, text) = run(&[path, "--json", file.to_str().unwrap()]);
    assert!(out.status.success() && text.starts_with("oomlens — 8 host files"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), streamed);
    std::fs::remove_file(&file).unwrap();
    let (_, dash) = run(&[path, "--json", "-"]);
    assert_eq!(dash, streamed);
}

#[test]
fn host_shows_one_hosts_report_as_for_its_file() {
    let dir = run_folder();
    let path = dir.0.to_str().unwrap();
    let file = dir.0.join("host4.xplane.pb");
    for format in ["json", "text"] {
        let (out, one) = run(&[path, "--host", "host4", "--format", format]);
        assert!(out.status.success());
        assert_eq!(one, run(&[file.to_str().unwrap(), "--format", format]).1);
    }
    let (out, _) = run(&[path, "--host", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("oomlens: no host named \"nope\"") && err.contains("host0, host1"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn a_folder_where_no_host_can_be_read_exits_2_with_one_line() {
    let dir = TempDir::new("hosts-none");
    std::fs::write(dir.0.join("a.xplane.pb"), b"").unwrap();
    std::fs::write(dir.0.join("b.xplane.pb"), b"\x0a").unwrap();
    let (out, text) = run(&[dir.0.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "oomlens: none of the 2 host files could be analyzed; the first one: the file is empty"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}
