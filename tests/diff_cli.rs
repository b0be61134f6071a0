//! `oomlens diff BEFORE AFTER` as a user runs it, and `oomlens PATH …` still working
//! exactly as before beside it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn oomlens(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oomlens"))
        .args(args)
        .output()
        .expect("oomlens runs")
}

fn pair(name: &str, side: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pairs")
        .join(name)
        .join(side)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn diff_prints_text_markdown_and_json() {
    let (b, a) = (pair("checkpoint", "before"), pair("checkpoint", "after"));
    let text = oomlens(&["diff".as_ref(), b.as_os_str(), a.as_os_str()]);
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    let t = stdout(&text);
    assert!(
        t.starts_with("oomlens diff — checkpoint_before.xplane.pb → checkpoint_after.xplane.pb"),
        "{t}"
    );
    assert!(
        t.contains("change: peak 54.42 MiB → 40.16 MiB (−26.2%)"),
        "{t}"
    );

    let md = oomlens(&[
        "diff".as_ref(),
        b.as_os_str(),
        a.as_os_str(),
        "--format".as_ref(),
        "markdown".as_ref(),
        "--top".as_ref(),
        "3".as_ref(),
    ]);
    assert!(md.status.success());
    assert!(stdout(&md).starts_with("## oomlens diff: checkpoint\\_before.xplane.pb"));

    let json = oomlens(&[
        "diff".as_ref(),
        b.as_os_str(),
        a.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert!(json.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("the JSON parses");
    assert_eq!(v["schema"], "oomlens-diff/1");
    assert_eq!(v["diagnosis"]["resolved"][0], "role_forward");
    // Ids are the JSON's: the text and Markdown name each line by its title only.
    for id in ["role_forward", "role_backward", "no_donation"] {
        assert!(!t.contains(id), "{id} in the text: {t}");
        assert!(!stdout(&md).contains(id), "{id} in the Markdown");
    }
    let expected = oomlens::report::diff_json::render(
        &oomlens::diff::compare_paths(&b, &a, &oomlens::diff::DiffOptions::default()).unwrap(),
    );
    assert_eq!(stdout(&json), expected, "the CLI prints the engine's JSON");
}

#[test]
fn diff_errors_are_one_line_with_status_2() {
    let (b, a) = (pair("checkpoint", "before"), pair("checkpoint", "after"));
    let o = oomlens(&[
        "diff".as_ref(),
        b.as_os_str(),
        a.as_os_str(),
        "--module".as_ref(),
        "jit_nothing".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with("oomlens: no module named \"jit_nothing\" in the before run"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);

    let missing = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/no_such_run");
    let o = oomlens(&["diff".as_ref(), b.as_os_str(), missing.as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .starts_with("oomlens: cannot open"));
}

/// The report form is unchanged: `oomlens PATH` prints the engine's report, in every
/// format, with its options.
#[test]
fn the_report_form_still_works() {
    let path = pair("donation", "before");
    let report = oomlens::analyze_path(&path, &oomlens::Options::default()).unwrap();
    let json = oomlens(&[path.as_os_str(), "--format".as_ref(), "json".as_ref()]);
    assert!(json.status.success());
    assert_eq!(stdout(&json), oomlens::report::json::render(&report));
    let text = oomlens(&[path.as_os_str(), "--top".as_ref(), "4".as_ref()]);
    assert_eq!(stdout(&text), oomlens::report::text::render(&report, 4));
    // Options before the path, and --json - alone on standard output.
    let o = oomlens(&["--json".as_ref(), "-".as_ref(), path.as_os_str()]);
    assert_eq!(stdout(&o), oomlens::report::json::render(&report));
    let o = oomlens(&[
        "--module".as_ref(),
        "jit_train_step".as_ref(),
        path.as_os_str(),
        "--format".as_ref(),
        "markdown".as_ref(),
    ]);
    assert!(o.status.success());
    let chosen = oomlens::analyze_path(
        &path,
        &oomlens::Options {
            module: Some("jit_train_step".into()),
            ..oomlens::Options::default()
        },
    )
    .unwrap();
    assert_eq!(stdout(&o), oomlens::report::markdown::render(&chosen, 10));
    // No path: clap's usage error, status 2.
    let o = oomlens(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr).unwrap().contains("<PATH>"));
}

/// Two device memory profiles are compared by what grew from one to the other, as
/// `oomlens A.prof B.prof` compares them; a profile against a capture is refused in
/// one line that says so (not "decompress it first").
#[test]
fn diff_of_two_device_memory_profiles_is_their_growth() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profiles_leak");
    let (b, a) = (dir.join("step1.prof"), dir.join("step4.prof"));
    let out = oomlens(&[
        "diff".as_ref(),
        b.as_os_str(),
        a.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let joined = oomlens(&[
        b.as_os_str(),
        a.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let joined: serde_json::Value = serde_json::from_slice(&joined.stdout).unwrap();
    assert_eq!(report["growth"], joined["growth"]);
    assert_eq!(report["headline"], joined["headline"]);
    assert_eq!(report["headline"]["verdict"], "leak");
    assert_eq!(report["notes"][0]["id"], "profiles_compared");

    let capture = pair("checkpoint", "before");
    let mixed = oomlens(&["diff".as_ref(), b.as_os_str(), capture.as_os_str()]);
    assert_eq!(mixed.status.code(), Some(2));
    let err = String::from_utf8_lossy(&mixed.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is a device memory profile and"), "{err}");
    assert!(!err.contains("decompress"), "{err}");
}
