//! The device memory profile reader on real profiles recorded by
//! `tests/fixtures/profiles_dev/record.py` (JAX on the CPU backend), checked against
//! what `jax.live_arrays()` said when each was saved, and on damaged and foreign input.

use std::io::Write;
use std::path::{Path, PathBuf};

use oomlens::evidence::device_profile::{self, DeviceProfile, ProfileError};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profiles_dev")
}

fn oracle() -> Value {
    let text = std::fs::read_to_string(fixtures().join("oracle.json")).expect("oracle.json");
    serde_json::from_str(&text).expect("oracle.json is JSON")
}

fn bytes_of(file: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn profile(file: &str) -> DeviceProfile {
    device_profile::read(file, &bytes_of(file)).unwrap_or_else(|e| panic!("{e}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Every recorded profile, with what JAX said was live when it was saved.
fn recorded() -> Vec<(DeviceProfile, Value)> {
    let oracle = oracle();
    let mut out = Vec::new();
    for scenario in oracle.as_object().expect("scenarios").values() {
        for live in scenario["profiles"].as_array().expect("profiles") {
            let file = live["file"].as_str().expect("file");
            out.push((profile(file), live.clone()));
        }
    }
    assert_eq!(out.len(), 3);
    out
}

#[test]
fn totals_by_kind_and_device_are_what_jax_said_was_live() {
    for (p, live) in recorded() {
        let devices = live["devices"].as_object().expect("devices");
        assert_eq!(p.devices.len(), devices.len(), "{}", p.file);
        for d in &p.devices {
            let want = &devices[&d.device];
            assert_eq!(d.bytes, u(&want["bytes"]), "{} {}", p.file, d.device);
            assert_eq!(d.count, u(&want["count"]), "{} {}", p.file, d.device);
        }
        let buffer_bytes: u64 = devices.values().map(|d| u(&d["bytes"])).sum();
        let buffer_count: u64 = devices.values().map(|d| u(&d["count"])).sum();
        assert_eq!(p.buffer_bytes, buffer_bytes, "{}", p.file);
        assert_eq!(p.buffer_count, buffer_count, "{}", p.file);
        assert_eq!(p.executable_count, u(&live["executables"]), "{}", p.file);
        // The CPU backend reports no code size for its executables.
        assert_eq!(p.executable_bytes, 0, "{}", p.file);
        assert_eq!(p.total_bytes, p.buffer_bytes + p.executable_bytes);
        let grouped: u64 = p.groups.iter().map(|g| g.bytes).sum();
        assert_eq!(
            grouped, p.total_bytes,
            "{}: groups add up to the total",
            p.file
        );
        let counted: u64 = p.groups.iter().map(|g| g.count).sum();
        assert_eq!(counted, p.buffer_count + p.executable_count, "{}", p.file);
    }
}

#[test]
fn groups_name_the_users_lines_largest_first() {
    for (p, _) in recorded() {
        assert!(
            p.groups.windows(2).all(|w| w[0].bytes >= w[1].bytes),
            "{}: largest first",
            p.file
        );
        for g in p.groups.iter().filter(|g| g.kind == "buffer") {
            // Every buffer in these recordings was made by the recording script.
            assert!(g.user_code, "{}: {}", p.file, g.frame);
            assert!(g.frame.starts_with("record.py:"), "{}: {}", p.file, g.frame);
            assert!(g.path.ends_with("/profiles_dev/record.py"), "{}", g.path);
            assert_eq!(g.frame, format!("record.py:{} {}", g.line, g.function));
        }
        assert!(
            p.frames_skipped_as_library > 0,
            "{}: JAX's frames were skipped",
            p.file
        );
        assert!(p.samples as usize >= p.groups.len());
    }
}

#[test]
fn growth_between_leaking_steps_is_what_the_loop_keeps_and_names_its_line() {
    let oracle = oracle();
    let leak = &oracle["leak"];
    let step1 = profile("leak_step1.prof");
    let step4 = profile("leak_step4.prof");
    let kept = 3 * u(&leak["bytes_kept_per_step"]);
    assert_eq!(step1.device, "cpu:0");

    let changes = device_profile::growth(&[step1.clone(), step4.clone()]);
    let sum: i64 = changes.iter().map(|g| g.bytes).sum();
    assert_eq!(sum, step4.total_bytes as i64 - step1.total_bytes as i64);
    assert_eq!(
        sum, kept as i64,
        "the loop keeps one step's gradients per step"
    );

    let top = &changes[0];
    assert_eq!(top.frame, leak["keeping_frame"].as_str().expect("frame"));
    assert_eq!(top.kind, "buffer");
    assert_eq!(top.bytes, kept as i64);
    assert_eq!(
        top.count,
        3 * leak["buffers_kept_per_step"].as_i64().expect("count")
    );
    assert!(top.user_code && top.rose_every_step);
    assert_eq!(top.last_bytes - top.first_bytes, kept);
    // Nothing else changed: the step's other outputs replace the previous step's.
    assert!(changes[1..].iter().all(|g| g.bytes == 0), "{changes:#?}");
}

#[test]
fn eight_devices_are_summed_per_device_and_a_replicated_array_per_frame() {
    let oracle = oracle();
    let sharded = &oracle["sharded_8dev"];
    let p = profile("sharded_8dev.prof");
    assert_eq!(p.device, "8 devices");
    let names: Vec<&str> = p.devices.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(
        names,
        ["cpu:0", "cpu:1", "cpu:2", "cpu:3", "cpu:4", "cpu:5", "cpu:6", "cpu:7"]
    );

    let group = |frame: &Value| {
        let frame = frame.as_str().expect("frame");
        p.groups
            .iter()
            .find(|g| g.frame == frame)
            .unwrap_or_else(|| panic!("no group {frame} in {:#?}", p.groups))
    };
    let replicated = group(&sharded["replicated_frame"]);
    assert_eq!(
        replicated.bytes,
        8 * u(&sharded["replicated_bytes_per_device"])
    );
    assert_eq!((replicated.count, replicated.devices), (8, 8));
    let split = group(&sharded["sharded_frame"]);
    assert_eq!(split.bytes, 8 * u(&sharded["sharded_bytes_per_device"]));
    assert_eq!((split.count, split.devices), (8, 8));
    assert_eq!(
        p.groups[0].frame, replicated.frame,
        "the replicated array is the largest"
    );
}

#[test]
fn raw_pprof_reads_as_the_gzip_does() {
    let gz = bytes_of("leak_step4.prof");
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut raw)
        .expect("gunzip");
    let from_raw = device_profile::read("leak_step4.prof", &raw).expect("raw pprof");
    assert_eq!(from_raw, profile("leak_step4.prof"));
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
    let whole = bytes_of("leak_step1.prof");
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
    let mut damaged = bytes_of("leak_step1.prof");
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
