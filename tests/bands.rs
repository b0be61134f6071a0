//! Per-buffer bands of the selected module's last execution, on real captures: each
//! band lies in the execution's window or says it was live at its start or past its
//! end, the count stays under the cap, and at each point the bands live plus the rest
//! are what the allocator's own events say was in use.

use std::path::{Path, PathBuf};

use oomlens::report::model::{BandKind, Runtime};

const CAP: usize = 256;

fn runtime(path: &Path) -> Runtime {
    let report =
        oomlens::analyze_path(path, &oomlens::Options::default()).expect("analysis succeeds");
    let host = report.hosts.into_iter().next().expect("one host");
    host.runtime.expect("a runtime section")
}

fn captures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths =
        vec![root.join("tests/fixtures/reactant/cyclops_2025_02_05_11_05_24.xplane.pb")];
    let shared = root.join("../shared/captures");
    if shared.is_dir() {
        for name in [
            "tracelens_jax08_attention_tw003",
            "tracelens_jax08_conv_tw003",
            "xprof_tpu_inference_2_clean",
        ] {
            paths.push(shared.join(format!("{name}.xplane.pb")));
        }
    } else {
        eprintln!("SKIP: ../shared/captures is absent; bands checked on the fixture only");
    }
    paths
}

#[test]
fn bands_lie_in_the_window_and_add_up_to_bytes_in_use() {
    for path in captures() {
        let name = path.display().to_string();
        let rt = runtime(&path);
        let bands = rt
            .execution_bands
            .as_ref()
            .expect("bands for the last execution");
        let (from, to) = (bands.start_ns, bands.end_ns);
        assert!(from <= to, "{name}");
        assert!(!bands.devices.is_empty(), "{name}");
        let mut checked = 0;
        for d in &bands.devices {
            assert!(d.bands.len() <= CAP, "{name}");
            let pool = rt
                .allocators
                .iter()
                .find(|a| a.name == d.allocator)
                .expect("a band's pool is an allocator of the report");
            for b in &d.bands {
                assert!(b.start_ns <= to, "{name}: {b:?}");
                assert!(b.end_ns.is_none_or(|e| e > from), "{name}: {b:?}");
                match b.kind {
                    BandKind::Before => assert!(b.start_ns < from, "{name}: {b:?}"),
                    BandKind::Temporary => {
                        assert!(b.start_ns >= from && b.end_ns.is_some_and(|e| e <= to))
                    }
                    BandKind::Kept => assert!(
                        b.start_ns >= from && b.end_ns.is_none_or(|e| e > to),
                        "{name}: {b:?}"
                    ),
                }
                assert!(b.bytes > 0 && !b.source.is_empty(), "{name}: {b:?}");
            }
            // The pool's timeline keeps every event when it has few: the bytes in use
            // after the last event at or before each point.
            if pool.timeline.len() >= 2000 {
                continue;
            }
            for &(t, other, reserved) in &d.other_in_use {
                assert!(reserved <= other, "{name}");
                let banded: u64 = d
                    .bands
                    .iter()
                    .filter(|b| b.start_ns <= t && b.end_ns.is_none_or(|e| e > t))
                    .map(|b| b.bytes)
                    .sum();
                // Before the pool's first event the timeline has no figure to compare.
                let Some(in_use) = pool
                    .timeline
                    .iter()
                    .take_while(|p| p.0 as f64 / 1000.0 <= t)
                    .last()
                    .map(|p| p.1)
                else {
                    continue;
                };
                assert_eq!(banded + other, in_use, "{name}: {} at {t} ns", d.allocator);
                checked += 1;
            }
        }
        assert!(checked > 0, "{name}: no point compared");
    }
}

/// The real four-device TPU capture, or none (saying so) where `../shared` is absent.
fn shared_tpu_capture() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/captures/xprof_tpu_inference_2_clean.xplane.pb");
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("SKIP: ../shared/captures is absent");
        None
    }
}

#[test]
fn devices_are_listed_in_natural_order() {
    let Some(path) = shared_tpu_capture() else {
        return;
    };
    let rt = runtime(&path);
    let names: Vec<&str> = rt.allocators.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["TPU:0", "TPU:1", "TPU:2", "TPU:3"]);
    let bands = rt.execution_bands.expect("bands");
    let names: Vec<&str> = bands.devices.iter().map(|d| d.allocator.as_str()).collect();
    assert_eq!(names, ["TPU:0", "TPU:1", "TPU:2", "TPU:3"]);
}

/// libtpu names some allocations' shape and op: those of the listed buffers are read
/// again at their events' places in the file, the layout left out of the shape.
#[test]
fn a_buffer_tells_the_shape_and_op_its_allocation_event_names() {
    let Some(path) = shared_tpu_capture() else {
        return;
    };
    let options = oomlens::Options {
        module: Some("jit__psum(9646411105960254074)".into()),
        ..Default::default()
    };
    let report = oomlens::analyze_path(&path, &options).expect("analysis succeeds");
    let rt = report
        .hosts
        .into_iter()
        .next()
        .and_then(|h| h.runtime)
        .expect("runtime");
    let bands = rt.execution_bands.expect("bands");
    for d in &bands.devices {
        let big: Vec<_> = d.bands.iter().filter(|b| b.bytes == 5 << 30).collect();
        assert!(!big.is_empty(), "{}: a 5 GiB buffer", d.allocator);
        let named = big
            .iter()
            .find(|b| b.kind == BandKind::Kept)
            .expect("the psum's output");
        assert_eq!(named.shape.as_deref(), Some("f32[5,1024,1024,256]"));
        assert_eq!(named.dtype.as_deref(), Some("f32"));
        assert_eq!(named.op.as_deref(), Some("dummy"));
        assert_eq!(named.source, "jit__psum(9646411105960254074) execution 3");
    }
}
