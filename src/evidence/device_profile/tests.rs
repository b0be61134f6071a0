//! The reader on profiles built here, one oddity each; real profiles are tested in
//! `tests/device_profiles.rs`.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

use prost::Message;

use super::*;
use crate::proto::pprof::{Function, Label, Line, Location, Sample, ValueType};

const JAX: &str = "/venv/lib/python3.11/site-packages/jax/_src/interpreters/pxla.py";
const FLAX: &str = "/venv/lib/python3.11/site-packages/flax/linen/module.py";
const TRAIN: &str = "/home/me/project/train.py";

/// Builds profiles the way JAX does: one string table, a function per code object,
/// a location per (code object, line), two sample types.
#[derive(Default)]
struct Builder {
    profile: Profile,
}

impl Builder {
    fn new() -> Self {
        let mut b = Builder::default();
        b.profile.string_table.push(Vec::new());
        let allocations = ValueType {
            r#type: b.string("allocations"),
            unit: b.string("count"),
        };
        let space = ValueType {
            r#type: b.string("space"),
            unit: b.string("bytes"),
        };
        b.profile.sample_type = vec![allocations, space];
        b
    }

    fn string(&mut self, s: &str) -> i64 {
        let table = &mut self.profile.string_table;
        if let Some(i) = table.iter().position(|t| t == s.as_bytes()) {
            return i as i64;
        }
        table.push(s.as_bytes().to_vec());
        table.len() as i64 - 1
    }

    fn function(&mut self, path: &str, name: &str) -> u64 {
        let id = self.profile.function.len() as u64 + 1;
        let (name, filename) = (self.string(name), self.string(path));
        self.profile.function.push(Function { id, name, filename });
        id
    }

    /// A location of one or more (function, line), innermost first.
    fn location(&mut self, lines: &[(u64, i64)]) -> u64 {
        let id = self.profile.location.len() as u64 + 1;
        let line = lines
            .iter()
            .map(|&(function_id, line)| Line { function_id, line })
            .collect();
        self.profile.location.push(Location { id, line });
        id
    }

    fn frame(&mut self, path: &str, name: &str, line: i64) -> u64 {
        let f = self.function(path, name);
        self.location(&[(f, line)])
    }

    fn sample(&mut self, stack: &[u64], count: i64, bytes: i64, device: Option<&str>) {
        let kind = if device.is_some() {
            "buffer"
        } else {
            "executable"
        };
        let mut label = vec![Label {
            key: self.string("kind"),
            str: self.string(kind),
            num: 0,
        }];
        if let Some(device) = device {
            label.push(Label {
                key: self.string("device"),
                str: self.string(device),
                num: 0,
            });
        }
        self.profile.sample.push(Sample {
            location_id: stack.to_vec(),
            value: vec![count, bytes * count],
            label,
        });
    }

    fn read(&self) -> Result<DeviceProfile, ProfileError> {
        read("t.prof", &self.profile.encode_to_vec())
    }
}

fn fault(b: &Builder) -> ProfileError {
    b.read().expect_err("the profile should be refused")
}

#[test]
fn buffers_group_by_their_innermost_user_frame_and_kind() {
    let mut b = Builder::new();
    let jax = b.frame(JAX, "__call__", 395);
    let step = b.frame(TRAIN, "train", 40);
    let main = b.frame(TRAIN, "<module>", 90);
    b.sample(&[jax, step, main], 2, 1000, Some("cuda:0"));
    b.sample(&[jax, main], 1, 50, Some("cuda:0"));
    b.sample(&[jax, step, main], 1, 7, None);
    let p = b.read().unwrap();
    assert_eq!(p.file, "t.prof");
    assert_eq!(p.device, "cuda:0");
    assert_eq!(
        (p.total_bytes, p.buffer_bytes, p.executable_bytes),
        (2057, 2050, 7)
    );
    assert_eq!((p.buffer_count, p.executable_count, p.samples), (3, 1, 3));
    assert_eq!(p.frames_skipped_as_library, 3);
    let groups: Vec<(&str, &str, u64, u64)> = p
        .groups
        .iter()
        .map(|g| (g.frame.as_str(), g.kind.as_str(), g.bytes, g.count))
        .collect();
    assert_eq!(
        groups,
        [
            ("train.py:40 train", "buffer", 2000, 2),
            ("train.py:90 <module>", "buffer", 50, 1),
            ("train.py:40 train", "executable", 7, 1),
        ]
    );
    assert_eq!(p.groups[0].path, TRAIN);
    assert!(p.groups.iter().all(|g| g.user_code));
}

#[test]
fn an_inlined_caller_counts_as_a_frame_of_its_own() {
    let mut b = Builder::new();
    let inner = b.function(JAX, "bind");
    let outer = b.function(TRAIN, "loss");
    let both = b.location(&[(inner, 10), (outer, 22)]);
    b.sample(&[both], 1, 8, Some("cpu:0"));
    let p = b.read().unwrap();
    assert_eq!(p.groups[0].frame, "train.py:22 loss");
    assert_eq!(p.frames_skipped_as_library, 1);
}

#[test]
fn library_only_stacks_take_the_nearest_package_frame_and_say_so() {
    let mut b = Builder::new();
    let jax = b.frame(JAX, "__call__", 395);
    let flax = b.frame(FLAX, "init", 12);
    let runpy = b.frame("/usr/lib/python3.11/runpy.py", "_run_code", 88);
    b.sample(&[jax, flax, runpy], 1, 64, Some("cpu:0"));
    b.sample(&[jax, runpy], 1, 32, Some("cpu:0"));
    let p = b.read().unwrap();
    let chosen: Vec<(&str, bool)> = p
        .groups
        .iter()
        .map(|g| (g.frame.as_str(), g.user_code))
        .collect();
    assert_eq!(
        chosen,
        [
            ("module.py:12 init", false),
            ("pxla.py:395 __call__", false)
        ]
    );
}

#[test]
fn a_sample_without_a_stack_is_kept_under_its_own_name() {
    let mut b = Builder::new();
    b.sample(&[], 3, 10, Some("cpu:0"));
    let p = b.read().unwrap();
    assert_eq!(p.groups.len(), 1);
    assert_eq!(p.groups[0].frame, NO_STACK);
    assert_eq!((p.groups[0].bytes, p.groups[0].count), (30, 3));
    assert!(!p.groups[0].user_code);
}

#[test]
fn code_objects_with_one_name_and_line_are_one_group() {
    let mut b = Builder::new();
    let first = b.frame(TRAIN, "<lambda>", 5);
    let second = b.frame(TRAIN, "<lambda>", 5);
    b.sample(&[first], 1, 4, Some("cpu:0"));
    b.sample(&[second], 1, 4, Some("cpu:1"));
    let p = b.read().unwrap();
    assert_eq!(p.groups.len(), 1);
    assert_eq!(
        (p.groups[0].bytes, p.groups[0].count, p.groups[0].devices),
        (8, 2, 2)
    );
    assert_eq!(p.device, "2 devices");
}

#[test]
fn a_profile_without_counts_counts_each_sample_once() {
    let mut b = Builder::new();
    b.profile.sample_type.remove(0);
    let main = b.frame(TRAIN, "<module>", 1);
    b.sample(&[main], 1, 16, Some("cpu:0"));
    b.profile.sample[0].value = vec![16];
    let p = b.read().unwrap();
    assert_eq!((p.total_bytes, p.buffer_count), (16, 1));
}

#[test]
fn names_that_are_not_utf8_are_shown_lossily() {
    let mut b = Builder::new();
    let main = b.frame(TRAIN, "f", 1);
    b.sample(&[main], 1, 16, Some("cpu:0"));
    let name = b.profile.function[0].name as usize;
    b.profile.string_table[name] = vec![b'f', 0xff];
    let p = b.read().unwrap();
    assert_eq!(p.groups[0].function, "f\u{fffd}");
}

#[test]
fn an_unlabelled_sample_is_of_unknown_kind_and_still_in_the_total() {
    let mut b = Builder::new();
    let main = b.frame(TRAIN, "f", 1);
    b.sample(&[main], 1, 16, None);
    b.profile.sample[0].label.clear();
    let p = b.read().unwrap();
    assert_eq!(p.groups[0].kind, KIND_UNKNOWN);
    assert_eq!(
        (p.total_bytes, p.buffer_bytes, p.executable_bytes),
        (16, 0, 0)
    );
    assert_eq!(p.device, "no device buffers");
}

#[test]
fn dangling_references_are_corrupt() {
    let mut b = Builder::new();
    b.sample(&[99], 1, 8, Some("cpu:0"));
    let e = fault(&b);
    assert_eq!(e.kind(), "corrupt");
    assert!(e.to_string().contains("location 99"), "{e}");

    let mut b = Builder::new();
    let loc = b.location(&[(42, 1)]);
    b.sample(&[loc], 1, 8, Some("cpu:0"));
    assert!(fault(&b).to_string().contains("function 42"));

    let mut b = Builder::new();
    let main = b.frame(TRAIN, "f", 1);
    b.sample(&[main], 1, 8, Some("cpu:0"));
    b.profile.function[0].filename = 10_000;
    assert!(fault(&b).to_string().contains("string index 10000"));
    b.profile.function[0].filename = -1;
    assert_eq!(fault(&b).kind(), "corrupt");
}

#[test]
fn impossible_values_are_corrupt() {
    let mut b = Builder::new();
    let main = b.frame(TRAIN, "f", 1);
    b.sample(&[main], 1, -8, Some("cpu:0"));
    assert!(fault(&b).to_string().contains("negative space"));

    b.profile.sample[0].value = vec![1];
    assert!(fault(&b).to_string().contains("too few"));

    b.profile.sample[0].value = vec![1, i64::MAX];
    b.sample(&[main], 1, 1, Some("cpu:0"));
    assert!(fault(&b).to_string().contains("more than 2^63"));
}

#[test]
fn the_pprof_limit_holds_for_gzip_and_raw_bytes_alike() {
    let payload = vec![7u8; 1000];
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &payload).unwrap();
    let gz = gz.finish().unwrap();
    assert_eq!(inflate::pprof_bytes(&gz, 1000).unwrap().len(), 1000);
    assert!(matches!(
        inflate::pprof_bytes(&gz, 999),
        Err(Fault::TooLarge(_))
    ));
    assert!(inflate::pprof_bytes(&payload, 1000).is_ok());
    assert!(matches!(
        inflate::pprof_bytes(&payload, 999),
        Err(Fault::TooLarge(_))
    ));
}

#[test]
fn the_memory_estimate_prices_records_not_bytes() {
    let mut b = Builder::new();
    let main = b.frame(TRAIN, "f", 1);
    b.sample(&[main], 1, 8, Some("cpu:0"));
    let wire = b.profile.encode_to_vec();
    let estimate = budget::decoded_size(&wire).unwrap();
    // The structs prost builds outweigh their wire bytes.
    assert!(estimate > wire.len() as u64, "{estimate} vs {}", wire.len());
    assert!(estimate < 4096, "{estimate}");
}
