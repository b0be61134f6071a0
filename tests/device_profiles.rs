//! The device memory profile reader on real profiles (`tests/fixtures/profiles_leak`
//! and `profiles_8dev`, recorded by `tests/fixtures/make_captures.py` with JAX on the
//! CPU backend), checked against their `oracle.json`: what the recorder decoded itself
//! and what `jax.live_arrays()` said when each profile was saved. Then damaged and
//! foreign input.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use oomlens::evidence::device_profile::{self, DeviceProfile, ProfileError};
use serde_json::Value;

const LEAK: &str = "profiles_leak";
const EIGHT_DEVICES: &str = "profiles_8dev";

fn folder(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn oracle(name: &str) -> Value {
    let path = folder(name).join("oracle.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("oracle.json is JSON")
}

fn bytes_of(name: &str, file: &str) -> Vec<u8> {
    std::fs::read(folder(name).join(file)).unwrap_or_else(|e| panic!("{name}/{file}: {e}"))
}

fn profile(name: &str, file: &str) -> DeviceProfile {
    device_profile::read(file, &bytes_of(name, file)).unwrap_or_else(|e| panic!("{e}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Every profile of both folders, with the oracle's entry for it.
fn recorded() -> Vec<(DeviceProfile, Value)> {
    let mut out = Vec::new();
    for name in [LEAK, EIGHT_DEVICES] {
        let oracle = oracle(name);
        for entry in oracle["profiles"]["files"].as_array().expect("files") {
            let file = entry["file"].as_str().expect("file");
            out.push((profile(name, file), entry.clone()));
        }
    }
    assert_eq!(out.len(), 6);
    out
}

/// A JSON object of numbers (or of `{key: number}` objects) as a sorted map.
fn numbers(v: &Value, key: Option<&str>) -> BTreeMap<String, i64> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .iter()
        .map(|(k, v)| (k.clone(), i(key.map_or(v, |key| &v[key]))))
        .collect()
}

#[test]
fn totals_by_kind_and_device_are_the_oracles() {
    for (p, want) in recorded() {
        let f = &p.file;
        assert_eq!(p.samples, u(&want["samples"]), "{f}");
        let by_kind = &want["space_bytes_by_kind"];
        let count_by_kind = &want["allocations_by_kind"];
        assert_eq!(p.buffer_bytes, u(&by_kind["buffer"]), "{f}");
        assert_eq!(p.executable_bytes, u(&by_kind["executable"]), "{f}");
        assert_eq!(p.buffer_count, u(&count_by_kind["buffer"]), "{f}");
        assert_eq!(p.executable_count, u(&count_by_kind["executable"]), "{f}");
        assert_eq!(p.total_bytes, p.buffer_bytes + p.executable_bytes, "{f}");

        let bytes: BTreeMap<String, i64> = p
            .devices
            .iter()
            .map(|d| (d.device.clone(), d.bytes as i64))
            .collect();
        let counts: BTreeMap<String, i64> = p
            .devices
            .iter()
            .map(|d| (d.device.clone(), d.count as i64))
            .collect();
        assert_eq!(bytes, numbers(&want["space_bytes_by_device"], None), "{f}");
        assert_eq!(counts, numbers(&want["allocations_by_device"], None), "{f}");
        // What jax.live_arrays() held on each device when the profile was saved.
        assert_eq!(bytes, numbers(&want["live_bytes_by_device"], None), "{f}");

        let grouped: u64 = p.groups.iter().map(|g| g.bytes).sum();
        assert_eq!(
            grouped, p.total_bytes,
            "{f}: the groups add up to the total"
        );
        let counted: u64 = p.groups.iter().map(|g| g.count).sum();
        assert_eq!(counted, p.buffer_count + p.executable_count, "{f}");
    }
}

#[test]
fn buffers_are_grouped_by_the_recorders_innermost_line() {
    for (p, want) in recorded() {
        let f = &p.file;
        let buffers = p.groups.iter().filter(|g| g.kind == "buffer");
        let bytes: BTreeMap<String, i64> = buffers
            .clone()
            .map(|g| (g.frame.clone(), g.bytes as i64))
            .collect();
        let counts: BTreeMap<String, i64> = buffers
            .clone()
            .map(|g| (g.frame.clone(), g.count as i64))
            .collect();
        assert_eq!(
            bytes,
            numbers(&want["buffer_bytes_by_user_line"], Some("bytes")),
            "{f}"
        );
        assert_eq!(
            counts,
            numbers(&want["buffer_bytes_by_user_line"], Some("count")),
            "{f}"
        );
        for g in buffers {
            assert!(g.user_code, "{f}: {}", g.frame);
            assert!(g.path.ends_with("make_captures.py"), "{f}: {}", g.path);
            assert_eq!(
                g.frame,
                format!("make_captures.py:{} {}", g.line, g.function)
            );
        }
        assert!(
            p.groups.windows(2).all(|w| w[0].bytes >= w[1].bytes),
            "{f}: largest first"
        );
        assert!(
            p.frames_skipped_as_library > 0,
            "{f}: JAX's frames were passed over"
        );
        assert_eq!(
            p.device,
            if p.devices.len() == 1 {
                "cpu:0"
            } else {
                "8 devices"
            }
        );
    }
}

/// Reads the profiles `from` and `to` of a folder and checks their growth against
/// the oracle's entry for that pair: the sum, and the bytes by line.
fn check_growth(name: &str, growth: &Value) -> Vec<device_profile::FrameGrowth> {
    let from = profile(name, growth["from"].as_str().expect("from"));
    let to = profile(name, growth["to"].as_str().expect("to"));
    let changes = device_profile::growth(&[from.clone(), to.clone()]);
    let sum: i64 = changes.iter().map(|g| g.bytes).sum();
    assert_eq!(
        sum,
        to.total_bytes as i64 - from.total_bytes as i64,
        "{name}"
    );
    assert_eq!(sum, i(&growth["space_bytes"]), "{name}");
    let by_line: BTreeMap<String, i64> = changes
        .iter()
        .filter(|g| g.kind == "buffer" && g.bytes != 0)
        .map(|g| (g.frame.clone(), g.bytes))
        .collect();
    assert_eq!(
        by_line,
        numbers(&growth["buffer_bytes_by_user_line"], None),
        "{name}"
    );
    // Per device, from the two profiles' device sums.
    let on = |p: &DeviceProfile, device: &str| {
        p.devices
            .iter()
            .find(|d| d.device == device)
            .map_or(0, |d| d.bytes as i64)
    };
    for (device, bytes) in numbers(&growth["space_bytes_by_device"], None) {
        assert_eq!(
            on(&to, &device) - on(&from, &device),
            bytes,
            "{name} {device}"
        );
    }
    changes
}

#[test]
fn growth_between_profiles_is_the_oracles_by_line_and_device() {
    for name in [LEAK, EIGHT_DEVICES] {
        for growth in oracle(name)["profiles"]["growth"]
            .as_array()
            .expect("growth")
        {
            check_growth(name, growth);
        }
    }
}

#[test]
fn the_growth_of_a_leaking_loop_is_what_it_keeps_and_names_the_line() {
    for name in [LEAK, EIGHT_DEVICES] {
        let oracle = oracle(name);
        let expected = &oracle["profiles"]["expected_growth"];
        let keeps = &oracle["profiles"]["keeps"];
        let mut pair = expected.clone();
        pair["space_bytes"] = expected["bytes"].clone();
        pair["space_bytes_by_device"] = expected["bytes_by_device"].clone();
        pair["buffer_bytes_by_user_line"] =
            serde_json::json!({ keeps["frame"].as_str().expect("frame"): expected["bytes"] });
        let changes = check_growth(name, &pair);
        let top = &changes[0];
        assert_eq!(top.frame, keeps["frame"].as_str().expect("frame"), "{name}");
        assert_eq!(
            (top.kind.as_str(), top.bytes),
            ("buffer", i(&keeps["growth_bytes"])),
            "{name}"
        );
        assert_eq!(top.line, i(&keeps["line"]), "{name}");
        assert!(top.user_code && top.rose_every_step, "{name}");
        assert!(
            changes[1..].iter().all(|g| g.bytes == 0),
            "{name}: {changes:#?}"
        );
    }
}

#[test]
fn over_every_profile_of_a_run_the_kept_line_rose_at_each_step() {
    for name in [LEAK, EIGHT_DEVICES] {
        let oracle = oracle(name);
        let files = oracle["profiles"]["files"].as_array().expect("files");
        let run: Vec<DeviceProfile> = files
            .iter()
            .map(|f| profile(name, f["file"].as_str().expect("file")))
            .collect();
        let changes = device_profile::growth(&run);
        let sum: i64 = changes.iter().map(|g| g.bytes).sum();
        let (first, last) = (&run[0], &run[run.len() - 1]);
        assert_eq!(
            sum,
            last.total_bytes as i64 - first.total_bytes as i64,
            "{name}"
        );
        let keeps = oracle["profiles"]["keeps"]["frame"]
            .as_str()
            .expect("frame");
        let kept = changes
            .iter()
            .find(|g| g.frame == keeps)
            .expect("the kept line");
        assert!(kept.rose_every_step, "{name}");
        assert_eq!(
            kept.first_bytes, 0,
            "{name}: nothing was made there before the loop"
        );
        // The lines whose arrays the first step replaced fell; they did not rise.
        assert!(changes
            .iter()
            .filter(|g| g.bytes < 0)
            .all(|g| !g.rose_every_step));
    }
}

#[test]
fn on_eight_devices_a_replicated_array_lies_on_all_and_a_single_one_on_one() {
    let p = profile(EIGHT_DEVICES, "step0.prof");
    assert_eq!(p.device, "8 devices");
    let names: Vec<&str> = p.devices.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(
        names,
        ["cpu:0", "cpu:1", "cpu:2", "cpu:3", "cpu:4", "cpu:5", "cpu:6", "cpu:7"]
    );
    let devices = |frame: &str| {
        let g = p
            .groups
            .iter()
            .find(|g| g.frame == frame && g.kind == "buffer");
        g.map(|g| (g.count, g.devices))
            .unwrap_or_else(|| panic!("no {frame}"))
    };
    // The two replicated weight matrices: one buffer of each on every device.
    assert_eq!(devices("make_captures.py:452 worker"), (16, 8));
    // The eval array left on cpu:0.
    assert_eq!(devices("make_captures.py:224 rand"), (1, 1));
    let cpu0 = &p.devices[0];
    assert_eq!(
        cpu0.bytes - p.devices[1].bytes,
        524288,
        "cpu:0 also holds the eval array"
    );
}

#[test]
fn raw_pprof_reads_as_the_gzip_does() {
    let gz = bytes_of(LEAK, "step4.prof");
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut raw)
        .expect("gunzip");
    let from_raw = device_profile::read("step4.prof", &raw).expect("raw pprof");
    assert_eq!(from_raw, profile(LEAK, "step4.prof"));
}

fn error(bytes: &[u8]) -> ProfileError {
    match device_profile::read("x.prof", bytes) {
        Ok(p) => panic!("read {} bytes as a profile: {p:?}", bytes.len()),
        Err(e) => e,
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

/// Bytes from a fixed xorshift sequence.
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

#[test]
fn garbage_and_other_files_are_not_device_profiles() {
    let capture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/attention_train/attention_train.xplane.pb");
    let capture = std::fs::read(capture).expect("a capture fixture");
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        (
            "text",
            b"RESOURCE_EXHAUSTED: Out of memory while trying to allocate".to_vec(),
        ),
        ("a profiler capture", capture.clone()),
        ("gzip'd text", gzip(b"not a profile")),
        ("gzip'd capture", gzip(&capture)),
    ];
    for (what, bytes) in inputs {
        let e = error(&bytes);
        assert_eq!(e.kind(), "not_a_device_profile", "{what}: {e}");
        assert!(
            e.to_string()
                .contains("pass the file written by jax.profiler.save_device_memory_profile"),
            "{what}: {e}"
        );
    }
    for seed in 1..200u64 {
        let bytes = noise(1 + (seed as usize * 37) % 4000, seed);
        let e = error(&bytes);
        assert_eq!(e.kind(), "not_a_device_profile", "seed {seed}: {e}");
    }
}

#[test]
fn a_cpu_profile_is_told_apart_by_what_it_measures() {
    use oomlens::proto::pprof::{Profile, ValueType};
    use prost::Message;
    let cpu = Profile {
        sample_type: vec![ValueType { r#type: 1, unit: 2 }],
        string_table: vec![b"".to_vec(), b"cpu".to_vec(), b"nanoseconds".to_vec()],
        ..Default::default()
    };
    let e = error(&gzip(&cpu.encode_to_vec()));
    assert_eq!(e.kind(), "not_a_device_profile");
    assert!(
        e.to_string().contains("cpu/nanoseconds, not space/bytes"),
        "{e}"
    );
}

#[test]
fn truncated_gzip_says_so() {
    let whole = bytes_of(LEAK, "step1.prof");
    for cut in [whole.len() / 2, whole.len() - 5, whole.len() - 1, 11] {
        let e = error(&whole[..cut]);
        assert_eq!(
            e.kind(),
            "truncated",
            "cut at {cut} of {}: {e}",
            whole.len()
        );
        assert!(e.to_string().contains("copy it again"), "{e}");
    }
}

#[test]
fn damaged_gzip_is_corrupt() {
    let mut damaged = bytes_of(LEAK, "step1.prof");
    let end = damaged.len() - 3;
    damaged[end] ^= 0xff; // the length in the trailer
    let e = error(&damaged);
    assert_eq!(e.kind(), "corrupt", "{e}");
}

#[test]
fn a_gzip_bomb_stops_at_the_limit() {
    let limit = device_profile::MAX_PROFILE_BYTES as usize;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..(limit >> 20) + 1 {
        encoder.write_all(&zeros).expect("gzip");
    }
    let bomb = encoder.finish().expect("gzip");
    assert!(bomb.len() < 4 << 20, "{} bytes", bomb.len());
    let e = error(&bomb);
    assert_eq!(e.kind(), "too_large", "{e}");
    assert!(e.to_string().contains("512 MiB"), "{e}");
}

#[test]
fn records_that_would_decode_past_the_memory_budget_are_refused() {
    // 8 million empty samples: 16 MB of pprof, over a gigabyte once decoded.
    let bytes = [0x12u8, 0x00].repeat(8 << 20);
    let e = error(&gzip(&bytes));
    assert_eq!(e.kind(), "too_large", "{e}");
    assert!(e.to_string().contains("MiB of memory"), "{e}");
}

#[test]
fn errors_begin_with_the_file_name() {
    let e = device_profile::read("step7.prof", b"").expect_err("empty");
    assert!(
        e.to_string()
            .starts_with("step7.prof: this is not a device memory profile (the file is empty)"),
        "{e}"
    );
}

/// The JSON Schema is generated from the doc comments: every field must have one.
#[test]
fn every_field_of_the_json_contract_is_described() {
    let schemas = [
        serde_json::to_value(schemars::schema_for!(DeviceProfile)).expect("schema"),
        serde_json::to_value(schemars::schema_for!(device_profile::FrameGrowth)).expect("schema"),
    ];
    let mut checked = 0;
    for schema in &schemas {
        let mut objects = vec![schema];
        if let Some(definitions) = schema["definitions"].as_object() {
            objects.extend(definitions.values());
        }
        for object in objects {
            for (name, property) in object["properties"].as_object().expect("properties") {
                let described = property["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty());
                assert!(described, "{name} has no description");
                checked += 1;
            }
        }
    }
    // DeviceProfile 11, DeviceBytes 3, ProfileGroup 9, FrameGrowth 11.
    assert_eq!(checked, 34);
}
