//! Explaining an out-of-memory failure from whatever the user has, through the `oomlens`
//! command: the error message alone (every message of `tests/fixtures/errors/`), an XLA
//! dump alone (proto and text), device memory profiles alone, the real CPU failures
//! from their `error.txt` alone and with their capture, several kinds joined in one run
//! folder, and the inputs it cannot use.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use oomlens::evidence::message;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn oomlens(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oomlens"))
        .args(args)
        .output()
        .expect("oomlens runs")
}

/// The JSON report of `paths`, which must succeed.
fn json_of(paths: &[&Path]) -> Value {
    let mut args: Vec<&std::ffi::OsStr> = paths.iter().map(|p| p.as_os_str()).collect();
    args.push(std::ffi::OsStr::new("--format"));
    args.push(std::ffi::OsStr::new("json"));
    let out = oomlens(&args);
    assert!(
        out.status.success(),
        "{paths:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the report is JSON")
}

fn ids(report: &Value) -> Vec<String> {
    let mut ids: Vec<String> = report["diagnosis"]
        .as_array()
        .expect("diagnosis")
        .iter()
        .map(|d| d["id"].as_str().expect("id").to_owned())
        .collect();
    ids.sort();
    ids
}

fn corpus() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join("errors"))
        .expect("tests/fixtures/errors")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

/// Every field the parser states is in the report's `error`, with the same value.
fn assert_error_is_the_parsers(name: &str, error: &Value, parsed: &Value) {
    for (key, value) in parsed.as_object().expect("an object") {
        assert_eq!(&error[key], value, "{name}: error.{key}");
    }
}

/// Every corpus message analyzed alone through the command: the report's error holds
/// every figure the parser reads, there is no module, every line is labelled, the
/// verdict follows from a failure (a warning from a warning), lines that say the plan
/// does not fit come with that verdict, and the error has a reading. (Whether the
/// triage is right is `tests/corpus_score.rs`'s, against the annotations.)
#[test]
fn every_corpus_message_alone_gives_its_figures_and_a_labelled_triage() {
    let files = corpus();
    assert!(files.len() >= 79, "{} messages", files.len());
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let report = json_of(&[file]);
        let parsed = serde_json::to_value(
            message::parse(&std::fs::read_to_string(file).unwrap()).expect("a message"),
        )
        .unwrap();
        assert_error_is_the_parsers(&name, &report["error"], &parsed);
        assert_eq!(report["modules"], serde_json::json!([]), "{name}");
        assert_eq!(report["selected_module"], Value::Null, "{name}");
        assert!(report
            .get("planes")
            .is_some_and(|p| p == &serde_json::json!([])));
        assert!(!ids(&report).is_empty(), "{name}: no diagnosis line");
        for d in report["diagnosis"].as_array().unwrap() {
            assert!(
                ["read", "estimated", "measured"].contains(&d["label"].as_str().unwrap()),
                "{name}"
            );
        }
        let verdict = report["headline"]["verdict"].as_str().unwrap();
        let advisory = parsed["advisory"] == Value::Bool(true);
        match (advisory, verdict) {
            (true, "warning") | (false, "does_not_fit" | "ran_out") => {}
            other => panic!("{name}: verdict {other:?}"),
        }
        if ids(&report).iter().any(|i| i == "plan_exceeds_capacity") {
            assert_eq!(
                verdict, "does_not_fit",
                "{name}: the verdict follows the lines"
            );
        }
        assert!(
            !report["error"]["scenario"].as_str().unwrap().is_empty(),
            "{name}: a reading"
        );
    }
}

#[test]
fn the_verdict_of_a_tpu_compile_message_says_by_how_much() {
    let r = json_of(&[&fixtures().join("errors/13-jax-gpt-compile-e1000-wrapped.txt")]);
    assert_eq!(
        r["headline"]["text"],
        "Does not fit: needs 126.5 GiB of 94.75 GiB HBM (exceeded by 31.70 GiB)"
    );
    let labels: Vec<&str> = r["headline"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["read", "read", "read"]);
    // The padding line names the allocation, the rule it breaks and the shape without
    // waste.
    let r = json_of(&[&fixtures().join("errors/01-flowpm-27-compile-old-layout.txt")]);
    let text = r["diagnosis"][0]["text"].as_str().unwrap();
    assert!(text.contains("FloorMod"), "{text}");
    assert!(
        text.contains("minor dimension 4 is not a multiple of 128"),
        "{text}"
    );
    assert!(text.contains("s32[262144,8,128]"), "{text}");
    assert!(r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["id"] == "message_truncated"));
}

#[test]
fn error_text_comes_from_a_flag_or_standard_input() {
    let file = fixtures().join("errors/15-xla-docs-e1000-tc-sc.txt");
    let out = oomlens(&[
        "--error-text".as_ref(),
        file.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert!(out.status.success());
    let flag: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(flag["error"]["kind"], "tpu_tc_sc");
    let mut child = Command::new(env!("CARGO_BIN_EXE_oomlens"))
        .args(["--error-text", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&std::fs::read(&file).unwrap()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdin: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        stdin["error"]["tensorcore_bytes"],
        flag["error"]["tensorcore_bytes"]
    );
    assert_eq!(stdin["diagnosis"], flag["diagnosis"]);
}

fn oracle(dir: &str) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(fixtures().join(dir).join("oracle.json")).unwrap(),
    )
    .unwrap()
}

fn totals(plan: &Value) -> [u64; 4] {
    [
        "argument_bytes",
        "output_bytes",
        "alias_bytes",
        "temp_bytes",
    ]
    .map(|k| plan[k].as_u64().unwrap())
}

fn memory_analysis(oracle: &Value, label: &str) -> [u64; 4] {
    let m = oracle["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| format!("{}({})", m["name"].as_str().unwrap(), m["program_id"]) == label)
        .unwrap_or_else(|| panic!("{label} in the oracle"));
    [
        "argument_size_in_bytes",
        "output_size_in_bytes",
        "alias_size_in_bytes",
        "temp_size_in_bytes",
    ]
    .map(|k| m[k].as_u64().unwrap())
}

fn module<'v>(report: &'v Value, label: &str) -> &'v Value {
    report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["label"] == label)
        .unwrap_or_else(|| panic!("{label} in the report"))
}

#[test]
fn a_dump_alone_gives_the_plan_of_memory_analysis_and_the_captures() {
    let proto = fixtures().join("dump_attention_train/xla_dump");
    let text = fixtures().join("dump_attention_train_text");
    let capture = json_of(&[&fixtures().join("dump_attention_train/attention_train.xplane.pb")]);
    for (input, oracle_dir, source) in [
        (proto.clone(), "dump_attention_train", "dump_proto"),
        // The folder above xla_dump/.
        (text.clone(), "dump_attention_train_text", "dump_text"),
        (
            text.join("xla_dump"),
            "dump_attention_train_text",
            "dump_text",
        ),
    ] {
        let r = json_of(&[&input]);
        let label = r["selected_module"].as_str().expect("a module").to_owned();
        let m = module(&r, &label);
        assert_eq!(m["plan_source"], source, "{input:?}");
        assert_eq!(
            totals(&m["plan"]),
            memory_analysis(&oracle(oracle_dir), &label),
            "{input:?}"
        );
        assert_eq!(r["headline"]["verdict"], "plan_only");
        assert!(r["error"].is_null() && r["planes"] == serde_json::json!([]));
        if source == "dump_proto" {
            assert_eq!(
                serde_json::to_string(&m["plan"]).unwrap(),
                serde_json::to_string(&module(&capture, &label)["plan"]).unwrap(),
                "the proto dump's plan is the capture's, byte for byte"
            );
            // The diagnosis is the capture's, less what only a capture can say.
            let mut from_capture = ids(&capture);
            from_capture.retain(|i| i != "no_allocator_events");
            assert_eq!(ids(&r), from_capture);
        }
    }
    // Dump files given one by one read as their folder does.
    let files: Vec<PathBuf> = std::fs::read_dir(text.join("xla_dump"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let one_by_one = json_of(&paths);
    let folder = json_of(&[&text.join("xla_dump")]);
    assert_eq!(one_by_one["modules"], folder["modules"]);
}

/// A run folder made of real recordings: the capture of `oom_first_call` (which lacks
/// `jit_train_step(10)`), the XLA dump of `dump_attention_train` (which has it), an error
/// message whose failed request is that module's temporary block (as the CPU client
/// words it), and the profiles of `profiles_leak`.
#[test]
fn a_run_folder_joins_capture_dump_error_and_profiles() {
    let dir = TempDir::new();
    let run = dir.path();
    std::fs::copy(
        fixtures().join("oom_first_call/oom_first_call.xplane.pb"),
        run.join("host0.xplane.pb"),
    )
    .unwrap();
    std::fs::create_dir(run.join("xla_dump")).unwrap();
    for e in std::fs::read_dir(fixtures().join("dump_attention_train/xla_dump")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), run.join("xla_dump").join(e.file_name())).unwrap();
    }
    let temp = memory_analysis(&oracle("dump_attention_train"), "jit_train_step(10)")[3];
    std::fs::write(
        run.join("error.txt"),
        format!("Traceback …\njax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating {temp} bytes.\n"),
    )
    .unwrap();
    for step in ["step1.prof", "step4.prof", "step0.prof"] {
        std::fs::copy(fixtures().join("profiles_leak").join(step), run.join(step)).unwrap();
    }
    std::fs::write(
        run.join("README.md"),
        "RESOURCE_EXHAUSTED: quoted, not the log\n",
    )
    .unwrap();

    let r = json_of(&[run]);
    // The dump's module stands in for the one the capture lacks, and the request names it.
    assert_eq!(r["selected_module"], "jit_train_step(10)");
    let m = module(&r, "jit_train_step(10)");
    assert_eq!(m["plan_source"], "dump_proto");
    assert_eq!(m["plan"]["temp_bytes"], temp);
    for other in r["modules"].as_array().unwrap() {
        if other["label"] != "jit_train_step(10)" {
            assert_eq!(other["plan_source"], "capture");
        }
    }
    assert_eq!(r["error"]["matched_module"], "jit_train_step(10)");
    assert_eq!(r["error"]["matched_part"], "temp_block");
    assert_eq!(r["error"]["matched_exactly"], true);
    assert_eq!(r["error"]["file"], "error.txt");
    assert_eq!(r["headline"]["verdict"], "ran_out");
    // The profiles beside, in step order, with their growth.
    let files: Vec<&str> = r["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["step0.prof", "step1.prof", "step4.prof"]);
    assert!(!r["growth"].as_array().unwrap().is_empty());
    let kinds: Vec<&str> = r["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    for kind in ["capture", "error_text", "xla_dump", "device_profile"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    // The same inputs named one by one give the same report, bar the names of inputs.
    let mut by_name = json_of(&[
        &run.join("host0.xplane.pb"),
        &run.join("xla_dump"),
        &run.join("error.txt"),
        &run.join("step0.prof"),
        &run.join("step1.prof"),
        &run.join("step4.prof"),
    ]);
    let mut folder = r.clone();
    for v in [&mut by_name, &mut folder] {
        v.as_object_mut().unwrap().remove("inputs");
    }
    assert_eq!(by_name, folder);
}

#[test]
fn a_capture_and_its_own_dump_keep_the_captures_plan() {
    let dir = fixtures().join("dump_attention_train");
    let alone = json_of(&[&dir.join("attention_train.xplane.pb")]);
    let joined = json_of(&[&dir]);
    let label = "jit_train_step(10)";
    assert_eq!(module(&joined, label)["plan_source"], "capture");
    assert_eq!(
        module(&joined, label)["plan"],
        module(&alone, label)["plan"]
    );
    assert!(!joined["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["id"] == "dump_plan_differs"));
    assert_eq!(joined["headline"], alone["headline"]);
    assert_eq!(joined["diagnosis"], alone["diagnosis"]);
}

#[test]
fn two_leak_profiles_grow_by_what_the_loop_kept_at_its_line() {
    let dir = fixtures().join("profiles_leak");
    let oracle = oracle("profiles_leak");
    let keeps = &oracle["profiles"]["keeps"];
    let r = json_of(&[&dir.join("step1.prof"), &dir.join("step4.prof")]);
    let growth = r["growth"].as_array().unwrap();
    assert_eq!(growth[0]["frame"], keeps["frame"]);
    assert_eq!(growth[0]["line"], keeps["line"]);
    assert_eq!(growth[0]["bytes"], keeps["growth_bytes"]);
    let sum: i64 = growth.iter().map(|g| g["bytes"].as_i64().unwrap()).sum();
    let total = |i: usize| r["profiles"][i]["total_bytes"].as_i64().unwrap();
    assert_eq!(sum, total(1) - total(0));
    assert_eq!(
        sum,
        oracle["profiles"]["expected_growth"]["bytes"]
            .as_i64()
            .unwrap()
    );
    assert_eq!(ids(&r), ["growth_per_execution"]);
    assert_eq!(r["headline"]["verdict"], "leak");
    assert!(r["headline"]["text"]
        .as_str()
        .unwrap()
        .contains(keeps["frame"].as_str().unwrap()));
    assert_eq!(r["selected_module"], Value::Null);
    // One profile: what it holds, no growth claimed.
    let one = json_of(&[&dir.join("step4.prof")]);
    assert!(one.get("growth").is_none());
    assert_eq!(one["headline"]["verdict"], "runtime_only");
    assert_eq!(ids(&one), Vec::<String>::new());
}

#[test]
fn eight_device_profiles_report_each_device() {
    let dir = fixtures().join("profiles_8dev");
    let oracle = oracle("profiles_8dev");
    let r = json_of(&[&dir]);
    let files = oracle["profiles"]["files"].as_array().unwrap();
    assert_eq!(r["profiles"].as_array().unwrap().len(), files.len());
    for (p, want) in r["profiles"].as_array().unwrap().iter().zip(files) {
        assert_eq!(p["file"], want["file"]);
        for d in p["devices"].as_array().unwrap() {
            let device = d["device"].as_str().unwrap();
            assert_eq!(
                d["bytes"], want["space_bytes_by_device"][device],
                "{device}"
            );
        }
        assert_eq!(
            p["devices"].as_array().unwrap().len(),
            want["space_bytes_by_device"].as_object().unwrap().len()
        );
    }
    let keeps = &oracle["profiles"]["keeps"];
    assert_eq!(r["growth"][0]["frame"], keeps["frame"]);
}

#[test]
fn real_cpu_failures_from_their_error_text_alone_and_with_the_capture() {
    for name in [
        "oom_first_call",
        "oom_after_steps",
        "oom_leak",
        "oom_top_scores",
    ] {
        let dir = fixtures().join(name);
        let oracle = oracle(name);
        let f = &oracle["failure"];
        let failing = format!("{}({})", f["module"].as_str().unwrap(), f["program_id"]);
        let requested = f["requested_bytes"].as_u64().unwrap();

        let alone = json_of(&[&dir.join("error.txt")]);
        assert_eq!(alone["error"]["kind"], "short", "{name}");
        assert_eq!(alone["error"]["requested_bytes"], requested, "{name}");
        assert_eq!(alone["selected_module"], Value::Null, "{name}");
        assert_eq!(alone["headline"]["verdict"], "ran_out", "{name}");
        // 256 TiB and more is a size no machine has; 256 GiB one a machine too small
        // for the program, as far as the message alone tells.
        let alone_lead = if requested > 1 << 40 {
            "impossible_size"
        } else {
            "aggregate_too_big"
        };
        assert_eq!(ids(&alone), [alone_lead], "{name}");

        let capture = dir.join(format!("{name}.xplane.pb"));
        for joined in [
            json_of(&[&capture, &dir.join("error.txt")]),
            json_of(&[&dir]),
        ] {
            assert_eq!(joined["selected_module"], failing.as_str(), "{name}");
            assert_eq!(joined["error"]["requested_bytes"], requested, "{name}");
            assert_eq!(
                joined["error"]["matched_module"],
                failing.as_str(),
                "{name}"
            );
            assert_eq!(joined["error"]["matched_part"], "temp_block", "{name}");
            assert_eq!(joined["headline"]["verdict"], "ran_out", "{name}");
            assert!(joined["headline"]["text"]
                .as_str()
                .unwrap()
                .contains("temporary block"));
        }
    }
}

/// The bytes entry point (the page's) gives what the paths give.
#[test]
fn bytes_in_memory_give_the_report_the_paths_give() {
    let dir = fixtures().join("dump_attention_train_text/xla_dump");
    let error = fixtures().join("oom_first_call/error.txt");
    let mut owned: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    owned.sort();
    owned.push(("error.txt".into(), std::fs::read(&error).unwrap()));
    let files: Vec<(&str, &[u8])> = owned
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let options = oomlens::Options::default();
    let bytes = oomlens::analyze_input_bytes(&files, &options).expect("bytes analyze");
    let paths =
        oomlens::analyze_inputs(&[dir.clone(), error.clone()], &options).expect("paths analyze");
    let (a, b) = (
        oomlens::report::json::to_value(&bytes),
        oomlens::report::json::to_value(&paths),
    );
    for key in [
        "modules",
        "selected_module",
        "diagnosis",
        "headline",
        "error",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    // Pasted text alone, through the library.
    let options = oomlens::Options {
        error_text: Some(std::fs::read_to_string(&error).unwrap()),
        ..Default::default()
    };
    let pasted = oomlens::analyze_input_bytes(&[], &options).expect("pasted text");
    assert_eq!(pasted.hosts[0].error.as_ref().unwrap().file, "pasted text");
}

/// Runs `oomlens` on `args` and returns its one line of error, after checking the status
/// is 2 and that there is nothing else.
fn one_line_error(args: &[&std::ffi::OsStr]) -> String {
    let out = oomlens(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("oomlens: ") && err.ends_with('\n'), "{err}");
    err.trim_end().to_owned()
}

#[test]
fn unusable_inputs_say_what_is_wrong_in_one_line() {
    let dir = TempDir::new();
    let text = dir.path().join("train.log");
    std::fs::write(
        &text,
        "step 1 loss 0.5\nTraceback (most recent call last):\nValueError: bad shape\n",
    )
    .unwrap();
    assert_eq!(
        one_line_error(&[text.as_os_str()]),
        "oomlens: no out-of-memory message found: paste the lines from RESOURCE_EXHAUSTED on"
    );
    assert_eq!(
        one_line_error(&["--error-text".as_ref(), text.as_os_str()]),
        "oomlens: no out-of-memory message found: paste the lines from RESOURCE_EXHAUSTED on"
    );
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let err = one_line_error(&[empty.as_os_str()]);
    assert!(
        err.contains("empty.txt is empty") && err.contains("pass a profiler capture"),
        "{err}"
    );
    let garbage = dir.path().join("blob.bin");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&garbage, bytes).unwrap();
    let err = one_line_error(&[garbage.as_os_str()]);
    assert!(
        err.contains("cannot tell what") && err.contains("blob.bin"),
        "{err}"
    );
    let folder = dir.path().join("nothing");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("notes.md"), "nothing here").unwrap();
    let err = one_line_error(&[folder.as_os_str()]);
    assert!(err.contains("nothing oomlens reads in"), "{err}");
    let err = one_line_error(&[]);
    assert!(err.contains("nothing to analyze"), "{err}");
    // A text without a message beside something usable is a note, not an error.
    let r = json_of(&[
        &text,
        &fixtures().join("errors/37-jaxline-11-short-inline.txt"),
    ]);
    assert!(r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["id"] == "no_oom_message"));
    // A profile that is not one, named explicitly.
    let bad = dir.path().join("x.prof");
    std::fs::write(&bad, [0x1f, 0x8b, 8, 0, 0, 0]).unwrap();
    let err = one_line_error(&[bad.as_os_str()]);
    assert!(err.contains("x.prof"), "{err}");
}

/// A throwaway directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let n = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p = std::env::temp_dir().join(format!("oomlens-inputs-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
